/* model.c — model folders: the parameter list of an architecture, safetensors reading (every
 * header entry checked against the file before use) and writing, random initialization.
 *
 * One walk (enumerate) lists every tensor the config implies, with its family name, file shape
 * and the slot in the per-layer structs that points at it; loading, saving and initializing
 * are each a loop over that list. */
#include "model/model.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/rng.h"
#include "model/tokenizer/tokenizer.h"

/* ---- the parameter list ---- */

typedef struct walker {
	gb_model *m;
	int n, cap;
	int failed;
} walker;

static void add(walker *w, const float **slot, int init, int ndim, int d0, int d1, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));

static void add(walker *w, const float **slot, int init, int ndim, int d0, int d1, const char *fmt, ...)
{
	if (w->failed)
		return;
	if (w->n == w->cap) {
		int cap = w->cap ? w->cap * 2 : 64;
		gb_param *p = realloc(w->m->params, (size_t)cap * sizeof *p);
		if (!p) {
			w->failed = 1;
			return;
		}
		w->m->params = p;
		w->cap = cap;
	}
	gb_param *p = &w->m->params[w->n++];
	memset(p, 0, sizeof *p);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->name, sizeof p->name, fmt, ap);
	va_end(ap);
	p->ndim = ndim;
	p->shape[0] = d0;
	p->shape[1] = ndim > 1 ? d1 : 1;
	p->n = (size_t)d0 * (size_t)p->shape[1];
	p->slot = slot;
	p->init = init;
}

static void linear(walker *w, gb_linear *l, int in, int out, int trans, int bias, const char *name)
{
	l->in = in;
	l->out = out;
	l->trans = trans;
	l->b = NULL;
	if (trans)
		add(w, &l->w, 0, 2, out, in, "%s.weight", name);
	else
		add(w, &l->w, 0, 2, in, out, "%s.weight", name);
	if (bias)
		add(w, &l->b, 2, 1, out, 0, "%s.bias", name);
}

static void norm(walker *w, gb_normw *n, const char *name)
{
	const gb_config *c = &w->m->cfg;
	n->b = NULL;
	add(w, &n->g, 1, 1, c->d_model, 0, "%s.weight", name);
	if (c->norm == GB_NORM_LAYER && c->norm_bias)
		add(w, &n->b, 2, 1, c->d_model, 0, "%s.bias", name);
}

static void ffn(walker *w, gb_ffn_w *f, const char *p, const char *up, const char *gate, const char *down, int trans)
{
	const gb_config *c = &w->m->cfg;
	char name[96];
	int gated = c->ffn == GB_FFN_GATED;
	f->fused_gate = gated && !gate;
	snprintf(name, sizeof name, "%s%s", p, up);
	linear(w, &f->up, c->d_model, f->fused_gate ? 2 * c->d_ffn : c->d_ffn, trans, c->ffn_bias, name);
	if (gated && gate) {
		snprintf(name, sizeof name, "%s%s", p, gate);
		linear(w, &f->gate, c->d_model, c->d_ffn, trans, c->ffn_bias, name);
	}
	snprintf(name, sizeof name, "%s%s", p, down);
	linear(w, &f->down, c->d_ffn, c->d_model, trans, c->ffn_bias, name);
}

/* Separate q, k, v and output projections in nn.Linear layout, named prefix + {q,k,v}_proj and
 * prefix + oname. */
static void attn_separate(walker *w, gb_attn_w *a, const char *prefix, const char *oname)
{
	const gb_config *c = &w->m->cfg;
	char name[96];
	int qw = c->n_head * c->d_head, kw = c->n_kv_head * c->d_head;
	a->fused = 0;
	snprintf(name, sizeof name, "%sq_proj", prefix);
	linear(w, &a->q, c->d_model, qw, 1, c->bias, name);
	snprintf(name, sizeof name, "%sk_proj", prefix);
	linear(w, &a->k, c->d_model, kw, 1, c->bias, name);
	snprintf(name, sizeof name, "%sv_proj", prefix);
	linear(w, &a->v, c->d_model, kw, 1, c->bias, name);
	snprintf(name, sizeof name, "%s%s", prefix, oname);
	linear(w, &a->o, qw, c->d_model, 1, c->bias, name);
}

static int alloc_layers(walker *w, gb_stack_w *s, int n)
{
	s->n_layer = n;
	s->layers = calloc((size_t)n, sizeof *s->layers);
	if (!s->layers)
		w->failed = 1;
	return s->layers ? 0 : -1;
}

static void enumerate(walker *w)
{
	gb_model *m = w->m;
	const gb_config *c = &m->cfg;
	char p[256], q[128];
	int learned = c->pos == GB_POS_LEARNED;

	if (c->family == GB_FAM_GPT2) {
		add(w, &m->tok_embed, 0, 2, c->vocab, c->d_model, "wte.weight");
		if (learned)
			add(w, &m->dec.pos, 0, 2, c->n_ctx, c->d_model, "wpe.weight");
		if (alloc_layers(w, &m->dec, c->n_layer))
			return;
		for (int l = 0; l < c->n_layer; l++) {
			gb_layer_w *L = &m->dec.layers[l];
			snprintf(p, sizeof p, "h.%d.ln_1", l);
			norm(w, &L->ln1, p);
			snprintf(p, sizeof p, "h.%d.attn.c_attn", l);
			L->attn.fused = 1;
			linear(w, &L->attn.qkv, c->d_model, (c->n_head + 2 * c->n_kv_head) * c->d_head, 0, c->bias, p);
			snprintf(p, sizeof p, "h.%d.attn.c_proj", l);
			linear(w, &L->attn.o, c->n_head * c->d_head, c->d_model, 0, c->bias, p);
			snprintf(p, sizeof p, "h.%d.ln_2", l);
			norm(w, &L->ln2, p);
			snprintf(p, sizeof p, "h.%d.mlp.", l);
			ffn(w, &L->ffn, p, "c_fc", NULL, "c_proj", 0);
		}
		if (c->final_norm)
			norm(w, &m->dec.final, "ln_f");
	} else if (c->family == GB_FAM_LLAMA) {
		add(w, &m->tok_embed, 0, 2, c->vocab, c->d_model, "model.embed_tokens.weight");
		if (learned)
			add(w, &m->dec.pos, 0, 2, c->n_ctx, c->d_model, "model.embed_positions.weight");
		if (alloc_layers(w, &m->dec, c->n_layer))
			return;
		for (int l = 0; l < c->n_layer; l++) {
			gb_layer_w *L = &m->dec.layers[l];
			snprintf(p, sizeof p, "model.layers.%d.input_layernorm", l);
			norm(w, &L->ln1, p);
			snprintf(p, sizeof p, "model.layers.%d.self_attn.", l);
			attn_separate(w, &L->attn, p, "o_proj");
			snprintf(p, sizeof p, "model.layers.%d.post_attention_layernorm", l);
			norm(w, &L->ln2, p);
			snprintf(p, sizeof p, "model.layers.%d.mlp.", l);
			ffn(w, &L->ffn, p, "up_proj", "gate_proj", "down_proj", 1);
		}
		if (c->final_norm)
			norm(w, &m->dec.final, "model.norm");
	} else {
		add(w, &m->tok_embed, 0, 2, c->vocab, c->d_model, "model.shared.weight");
		for (int s = 0; s < 2; s++) {
			const char *sn = s ? "decoder" : "encoder";
			gb_stack_w *st = s ? &m->dec : &m->enc;
			if (learned)
				add(w, &st->pos, 0, 2, c->n_ctx, c->d_model, "model.%s.embed_positions.weight", sn);
			if (alloc_layers(w, st, s ? c->n_layer : c->n_enc_layer))
				return;
			for (int l = 0; l < st->n_layer; l++) {
				gb_layer_w *L = &st->layers[l];
				snprintf(q, sizeof q, "model.%s.layers.%d.", sn, l);
				snprintf(p, sizeof p, "%sself_attn.", q);
				attn_separate(w, &L->attn, p, "out_proj");
				snprintf(p, sizeof p, "%sself_attn_layer_norm", q);
				norm(w, &L->ln1, p);
				if (s) {
					snprintf(p, sizeof p, "%sencoder_attn.", q);
					attn_separate(w, &L->cross, p, "out_proj");
					snprintf(p, sizeof p, "%sencoder_attn_layer_norm", q);
					norm(w, &L->ln2, p);
				}
				ffn(w, &L->ffn, q, "fc1", NULL, "fc2", 1);
				snprintf(p, sizeof p, "%sfinal_layer_norm", q);
				norm(w, s ? &L->ln3 : &L->ln2, p);
			}
			if (c->final_norm) {
				snprintf(p, sizeof p, "model.%s.layer_norm", sn);
				norm(w, &st->final, p);
			}
		}
	}
	m->lm_head.in = c->d_model;
	m->lm_head.out = c->vocab;
	m->lm_head.trans = 1;
	m->lm_head.b = NULL;
	if (!c->tied)
		add(w, &m->lm_head.w, 0, 2, c->vocab, c->d_model, "lm_head.weight");
}

/* Builds m->params for m->cfg (slots still unset). */
static int build_params(gb_model *m, gb_err *err)
{
	walker w = { m, 0, 0, 0 };
	enumerate(&w);
	if (w.failed)
		return gb_fail(err, "out of memory listing the model's parameters");
	m->n_params = w.n;
	m->n_weights = 0;
	for (int i = 0; i < w.n; i++)
		m->n_weights += m->params[i].n;
	return 0;
}

/* Points every struct slot at its parameter's data; the tied head reads the embedding. */
static void bind_slots(gb_model *m)
{
	for (int i = 0; i < m->n_params; i++)
		*m->params[i].slot = m->params[i].data;
	if (m->cfg.tied)
		m->lm_head.w = m->tok_embed;
}

gb_param *gb_model_param(const gb_model *m, const char *name)
{
	for (int i = 0; i < m->n_params; i++)
		if (!strcmp(m->params[i].name, name))
			return &m->params[i];
	return NULL;
}

void gb_model_free(gb_model *m)
{
	free(m->dec.layers);
	free(m->enc.layers);
	free(m->params);
	free(m->owned);
	gb_unmap(&m->map);
	if (m->tok)
		gb_tok_free(m->tok);
	memset(m, 0, sizeof *m);
}

/* ---- safetensors ---- */

typedef struct st_entry {
	const char *name;
	int dtype;            /* 0 F32, 1 F16, 2 BF16 */
	int ndim;
	int64_t shape[8];
	size_t begin, end;    /* offsets into the data area */
	int used;
} st_entry;

static int cmp_begin(const void *a, const void *b)
{
	const st_entry *x = *(st_entry *const *)a, *y = *(st_entry *const *)b;
	return x->begin < y->begin ? -1 : x->begin > y->begin;
}

static float half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 31, man = h & 1023, bits;
	if (exp == 0) {
		if (!man) {
			bits = sign;
		} else { /* subnormal: normalize */
			int e = -1;
			do {
				e++;
				man <<= 1;
			} while (!(man & 1024));
			bits = sign | (uint32_t)(127 - 15 - e) << 23 | (man & 1023) << 13;
		}
	} else if (exp == 31) {
		bits = sign | 0x7f800000u | man << 13;
	} else {
		bits = sign | (exp - 15 + 127) << 23 | man << 13;
	}
	float f;
	memcpy(&f, &bits, 4);
	return f;
}

static float bf16_to_float(uint16_t h)
{
	uint32_t bits = (uint32_t)h << 16;
	float f;
	memcpy(&f, &bits, 4);
	return f;
}

/* Parses and checks the header; entries point into *root's strings. */
static int st_parse(const gb_map *map, const char *path, json_t **root, st_entry **out, int *n_out,
                    size_t *data_start, gb_err *err)
{
	*root = NULL;
	*out = NULL;
	*n_out = 0;
	if (map->len < 8)
		return gb_fail(err, "%s: truncated (%zu bytes; a safetensors file starts with an 8-byte header length)",
		               path, map->len);
	uint64_t hlen = 0;
	for (int i = 7; i >= 0; i--)
		hlen = hlen << 8 | map->data[i];
	if (hlen > map->len - 8)
		return gb_fail(err, "%s: header length %llu runs past the end of the file (%zu bytes)", path,
		               (unsigned long long)hlen, map->len);
	json_error_t je;
	json_t *h = json_loadb((const char *)map->data + 8, (size_t)hlen, 0, &je);
	if (!h)
		return gb_fail(err, "%s: broken JSON header: %s", path, je.text);
	if (!json_is_object(h)) {
		json_decref(h);
		return gb_fail(err, "%s: the header is not a JSON object", path);
	}
	size_t data_len = map->len - 8 - (size_t)hlen;
	st_entry *e = calloc(json_object_size(h) + 1, sizeof *e);
	if (!e) {
		json_decref(h);
		return gb_fail(err, "%s: out of memory", path);
	}
	int n = 0;
	const char *key;
	json_t *v;
	json_object_foreach(h, key, v) {
		if (!strcmp(key, "__metadata__"))
			continue;
		st_entry *t = &e[n];
		t->name = key;
		json_t *dt = json_object_get(v, "dtype"), *sh = json_object_get(v, "shape"),
		       *off = json_object_get(v, "data_offsets");
		if (!json_is_object(v) || !json_is_string(dt) || !json_is_array(sh) || !json_is_array(off) ||
		    json_array_size(off) != 2 || !json_is_integer(json_array_get(off, 0)) ||
		    !json_is_integer(json_array_get(off, 1))) {
			gb_fail(err, "%s: tensor \"%s\": header entry needs dtype, shape and two data_offsets", path, key);
			goto fail;
		}
		const char *d = json_string_value(dt);
		size_t esz;
		if (!strcmp(d, "F32"))
			t->dtype = 0, esz = 4;
		else if (!strcmp(d, "F16"))
			t->dtype = 1, esz = 2;
		else if (!strcmp(d, "BF16"))
			t->dtype = 2, esz = 2;
		else {
			gb_fail(err, "%s: tensor \"%s\" has dtype %s; glassbox reads F32, F16 and BF16", path, key, d);
			goto fail;
		}
		t->ndim = (int)json_array_size(sh);
		if (t->ndim > 8) {
			gb_fail(err, "%s: tensor \"%s\" has %d dimensions", path, key, t->ndim);
			goto fail;
		}
		uint64_t count = 1;
		for (int i = 0; i < t->ndim; i++) {
			json_t *s = json_array_get(sh, (size_t)i);
			if (!json_is_integer(s) || json_integer_value(s) < 0 || json_integer_value(s) > (1ll << 40)) {
				gb_fail(err, "%s: tensor \"%s\" has a bad shape", path, key);
				goto fail;
			}
			t->shape[i] = json_integer_value(s);
			count *= (uint64_t)t->shape[i];
			if (count > (1ull << 40)) {
				gb_fail(err, "%s: tensor \"%s\" is impossibly large", path, key);
				goto fail;
			}
		}
		json_int_t b = json_integer_value(json_array_get(off, 0)), en = json_integer_value(json_array_get(off, 1));
		if (b < 0 || en < b || (uint64_t)en > data_len) {
			gb_fail(err, "%s: tensor \"%s\" has offsets [%lld, %lld] outside the data (%zu bytes)", path, key,
			        (long long)b, (long long)en, data_len);
			goto fail;
		}
		if ((uint64_t)(en - b) != count * esz) {
			gb_fail(err, "%s: tensor \"%s\": offsets span %lld bytes but shape and dtype need %llu", path, key,
			        (long long)(en - b), (unsigned long long)(count * esz));
			goto fail;
		}
		t->begin = (size_t)b;
		t->end = (size_t)en;
		n++;
	}
	/* Overlap check: sort by start, each must end before the next begins. */
	st_entry **sorted = malloc((size_t)(n ? n : 1) * sizeof *sorted);
	if (!sorted) {
		gb_fail(err, "%s: out of memory", path);
		goto fail;
	}
	/* Empty tensors occupy no bytes and cannot overlap anything. */
	int m = 0;
	for (int i = 0; i < n; i++)
		if (e[i].end > e[i].begin)
			sorted[m++] = &e[i];
	qsort(sorted, (size_t)m, sizeof *sorted, cmp_begin);
	for (int i = 1; i < m; i++)
		if (sorted[i]->begin < sorted[i - 1]->end) {
			gb_fail(err, "%s: tensors \"%s\" and \"%s\" overlap", path, sorted[i - 1]->name, sorted[i]->name);
			free(sorted);
			goto fail;
		}
	free(sorted);
	*root = h;
	*out = e;
	*n_out = n;
	*data_start = 8 + (size_t)hlen;
	return 0;
fail:
	free(e);
	json_decref(h);
	return -1;
}

static st_entry *st_find(st_entry *e, int n, const char *name, int family)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(e[i].name, name))
			return &e[i];
	/* Some GPT-2 checkpoints prefix every name with "transformer." */
	if (family == GB_FAM_GPT2)
		for (int i = 0; i < n; i++)
			if (!strncmp(e[i].name, "transformer.", 12) && !strcmp(e[i].name + 12, name))
				return &e[i];
	return NULL;
}

static int check_finite(const gb_param *p, const char *path, gb_err *err)
{
	for (size_t i = 0; i < p->n; i++)
		if (!isfinite(p->data[i]))
			return gb_fail(err, "%s: tensor \"%s\" holds %s at element %zu", path, p->name,
			               isnan(p->data[i]) ? "NaN" : "an infinite value", i);
	return 0;
}

static int load_weights(gb_model *m, const char *path, gb_err *err)
{
	json_t *root;
	st_entry *e;
	int n;
	size_t start = 0;
	if (gb_map_file(&m->map, path, err))
		return -1;
	if (st_parse(&m->map, path, &root, &e, &n, &start, err))
		return -1;
	int rc = -1;
	size_t need = 0; /* floats to own: converted or misaligned tensors */
	for (int i = 0; i < m->n_params; i++) {
		gb_param *p = &m->params[i];
		st_entry *t = st_find(e, n, p->name, m->cfg.family);
		if (!t) {
			gb_fail(err, "%s: tensor \"%s\" is missing (the config asks for it)", path, p->name);
			goto out;
		}
		if (t->used) {
			gb_fail(err, "%s: tensor \"%s\" is listed twice", path, t->name);
			goto out;
		}
		t->used = 1;
		int64_t prod = 1;
		for (int d = 0; d < t->ndim; d++)
			prod *= t->shape[d];
		int ok = t->ndim == p->ndim && t->shape[0] == p->shape[0] && (p->ndim == 1 || t->shape[1] == p->shape[1]);
		if (!ok) {
			char have[96] = "", want[64];
			for (int d = 0; d < t->ndim; d++)
				snprintf(have + strlen(have), sizeof have - strlen(have), "%s%lld", d ? ", " : "",
				         (long long)t->shape[d]);
			if (p->ndim == 1)
				snprintf(want, sizeof want, "%d", p->shape[0]);
			else
				snprintf(want, sizeof want, "%d, %d", p->shape[0], p->shape[1]);
			gb_fail(err, "%s: tensor \"%s\" has shape (%s); the config needs (%s)", path, p->name, have, want);
			goto out;
		}
		const unsigned char *src = m->map.data + start + t->begin;
		if (t->dtype == 0 && ((uintptr_t)src & 3) == 0)
			p->data = (float *)src;
		else
			need += p->n;
	}
	for (int i = 0; i < n; i++)
		if (!e[i].used) {
			gb_fail(err, "%s: tensor \"%s\" is not part of this architecture (check config.json)", path, e[i].name);
			goto out;
		}
	if (need) {
		m->owned = malloc(need * sizeof(float));
		if (!m->owned) {
			gb_fail(err, "%s: out of memory", path);
			goto out;
		}
		float *dst = m->owned;
		for (int i = 0; i < m->n_params; i++) {
			gb_param *p = &m->params[i];
			if (p->data)
				continue;
			st_entry *t = st_find(e, n, p->name, m->cfg.family);
			const unsigned char *src = m->map.data + start + t->begin;
			for (size_t k = 0; k < p->n; k++) {
				if (t->dtype == 0) {
					memcpy(&dst[k], src + 4 * k, 4);
				} else {
					uint16_t h = (uint16_t)(src[2 * k] | src[2 * k + 1] << 8);
					dst[k] = t->dtype == 1 ? half_to_float(h) : bf16_to_float(h);
				}
			}
			p->data = dst;
			dst += p->n;
		}
	}
	for (int i = 0; i < m->n_params; i++)
		if (check_finite(&m->params[i], path, err))
			goto out;
	rc = 0;
out:
	free(e);
	json_decref(root);
	return rc;
}

static int is_dir(const char *p)
{
	struct stat st;
	return !stat(p, &st) && S_ISDIR(st.st_mode);
}

static int exists(const char *p)
{
	struct stat st;
	return !stat(p, &st);
}

int gb_model_load(gb_model *m, const char *dir, gb_err *err)
{
	memset(m, 0, sizeof *m);
	char path[1200];
	if (!is_dir(dir))
		return gb_fail(err, "%s: %s", dir, exists(dir) ? "not a folder (a model is a folder with config.json "
		               "and model.safetensors)" : "no such model folder");
	if (strlen(dir) >= sizeof m->dir)
		return gb_fail(err, "%s: path too long", dir);
	snprintf(path, sizeof path, "%s/config.json", dir);
	if (gb_config_load(&m->cfg, path, err))
		return -1;
	snprintf(m->dir, sizeof m->dir, "%s", dir);
	if (build_params(m, err))
		goto fail;
	snprintf(path, sizeof path, "%s/model.safetensors", dir);
	if (load_weights(m, path, err))
		goto fail;
	bind_slots(m);
	snprintf(path, sizeof path, "%s/tokenizer.json", dir);
	char alt[1200];
	snprintf(alt, sizeof alt, "%s/vocab.json", dir);
	if (exists(path) || exists(alt)) {
		if (gb_tok_load(dir, &m->tok, err))
			goto fail;
		if (gb_tok_vocab_size(m->tok) > m->cfg.vocab) {
			gb_fail(err, "%s: the tokenizer has %d tokens but the model's vocabulary is %d", dir,
			        gb_tok_vocab_size(m->tok), m->cfg.vocab);
			goto fail;
		}
	}
	return 0;
fail:
	gb_model_free(m);
	return -1;
}

int gb_model_init(gb_model *m, const gb_config *c, uint64_t seed, float std, gb_err *err)
{
	memset(m, 0, sizeof *m);
	if (gb_config_check(c, "config", err))
		return -1;
	m->cfg = *c;
	if (build_params(m, err))
		goto fail;
	m->owned = malloc(m->n_weights * sizeof(float));
	if (!m->owned) {
		gb_fail(err, "out of memory for %zu parameters", m->n_weights);
		goto fail;
	}
	gb_rng rng;
	gb_rng_seed(&rng, seed);
	float *dst = m->owned;
	for (int i = 0; i < m->n_params; i++) {
		gb_param *p = &m->params[i];
		p->data = dst;
		for (size_t k = 0; k < p->n; k++)
			dst[k] = p->init == 1 ? 1.0f : p->init == 2 ? 0.0f : (float)(std * gb_rng_normal(&rng));
		dst += p->n;
	}
	m->writable = 1;
	bind_slots(m);
	return 0;
fail:
	gb_model_free(m);
	return -1;
}

int gb_model_make_writable(gb_model *m, gb_err *err)
{
	if (m->writable)
		return 0;
	float *block = malloc(m->n_weights * sizeof(float));
	if (!block)
		return gb_fail(err, "out of memory for %zu parameters", m->n_weights);
	float *dst = block;
	for (int i = 0; i < m->n_params; i++) {
		gb_param *p = &m->params[i];
		memcpy(dst, p->data, p->n * sizeof(float));
		p->data = dst;
		dst += p->n;
	}
	free(m->owned);
	m->owned = block;
	gb_unmap(&m->map);
	m->writable = 1;
	bind_slots(m);
	return 0;
}

int gb_safetensors_write(const gb_model *m, const char *path, const char *const *prefixes, const float *const *data,
                         int n_blocks, const char *const *meta, int n_meta, gb_err *err)
{
	json_t *h = json_object();
	size_t off = 0;
	char name[256];
	for (int b = 0; b < n_blocks; b++)
		for (int i = 0; i < m->n_params; i++) {
			const gb_param *p = &m->params[i];
			json_t *e = json_object(), *shape = json_array(), *offs = json_array();
			for (int d = 0; d < p->ndim; d++)
				json_array_append_new(shape, json_integer(p->shape[d]));
			json_array_append_new(offs, json_integer((json_int_t)off));
			off += p->n * 4;
			json_array_append_new(offs, json_integer((json_int_t)off));
			json_object_set_new(e, "dtype", json_string("F32"));
			json_object_set_new(e, "shape", shape);
			json_object_set_new(e, "data_offsets", offs);
			snprintf(name, sizeof name, "%s%s", prefixes[b], p->name);
			json_object_set_new(h, name, e);
		}
	json_t *mt = json_object();
	json_object_set_new(mt, "format", json_string("pt"));
	for (int i = 0; i < n_meta; i++)
		json_object_set_new(mt, meta[2 * i], json_string(meta[2 * i + 1]));
	json_object_set_new(h, "__metadata__", mt);
	char *text = json_dumps(h, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(h);
	if (!text)
		return gb_fail(err, "%s: out of memory", path);
	/* Pad the header with spaces so the data starts 8-byte aligned (as the format advises). */
	size_t hlen = strlen(text), padded = (hlen + 7) & ~(size_t)7;
	unsigned char len8[8];
	for (int i = 0; i < 8; i++)
		len8[i] = (unsigned char)(padded >> (8 * i));
	gb_file w;
	if (gb_file_begin(&w, path, err)) {
		free(text);
		return -1;
	}
	fwrite(len8, 1, 8, w.f);
	fwrite(text, 1, hlen, w.f);
	for (size_t i = hlen; i < padded; i++)
		fputc(' ', w.f);
	free(text);
	for (int b = 0; b < n_blocks; b++)
		for (int i = 0; i < m->n_params; i++) /* the host is little-endian, as the format */
			fwrite(data[(size_t)b * m->n_params + i], sizeof(float), m->params[i].n, w.f);
	return gb_file_commit(&w, err);
}

static int save_safetensors(const gb_model *m, const char *path, gb_err *err)
{
	const float **data = malloc(sizeof *data * (size_t)(m->n_params ? m->n_params : 1));
	if (!data)
		return gb_fail(err, "%s: out of memory", path);
	for (int i = 0; i < m->n_params; i++)
		data[i] = m->params[i].data;
	const char *prefix = "";
	int rc = gb_safetensors_write(m, path, &prefix, data, 1, NULL, 0, err);
	free(data);
	return rc;
}

int gb_model_save(const gb_model *m, const char *dir, gb_err *err)
{
	char path[1200];
	if (!is_dir(dir) && mkdir(dir, 0777))
		return gb_fail(err, "%s: cannot create folder (%s)", dir, strerror(errno));
	snprintf(path, sizeof path, "%s/config.json", dir);
	char *json = gb_config_to_json(&m->cfg);
	if (!json)
		return gb_fail(err, "%s: out of memory", path);
	size_t len = strlen(json);
	json[len] = '\n'; /* replace the terminator: json_dumps leaves no trailing newline */
	int rc = gb_write_file(path, json, len + 1, err);
	free(json);
	if (rc)
		return -1;
	snprintf(path, sizeof path, "%s/model.safetensors", dir);
	if (save_safetensors(m, path, err))
		return -1;
	if (m->tok) {
		snprintf(path, sizeof path, "%s/tokenizer.json", dir);
		if (gb_tok_save_json(m->tok, path, err))
			return -1;
	}
	return 0;
}
