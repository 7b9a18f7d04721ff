/* model.c — the model object and its folder: the parameter list of an architecture, loading
 * and saving a folder (config.json, model.safetensors and the tokenizer, each through its
 * format in model/formats/ or model/tokenizer/), random initialization, writable copies.
 *
 * One walk (enumerate) lists every tensor the config implies, with its family name, file shape
 * and the slot in the per-layer structs that points at it; loading, saving and initializing
 * are each a loop over that list. */
#include "model/model.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>

#include "model/fileio.h"
#include "model/formats/hf_config.h"
#include "model/kernels/kernels.h"
#include "model/formats/llama2c.h"
#include "model/formats/llama2c_tok.h"
#include "model/formats/safetensors.h"
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
	l->w16 = NULL;
	if (trans)
		add(w, &l->w, 0, 2, out, in, "%s.weight", name);
	else
		add(w, &l->w, 0, 2, in, out, "%s.weight", name);
	if (!w->failed)
		w->m->params[w->n - 1].lin = l; /* may be kept 16-bit (safetensors.c) */
	if (bias)
		add(w, &l->b, 2, 1, out, 0, "%s.bias", name);
}

/* The token embedding (V, D): kept 16-bit like a linear layer's weights (it is the tied
 * output head's), its rows widened one at a time by gb_model_embed_row. */
static void embedding(walker *w, const char *name)
{
	gb_model *m = w->m;
	m->embed.in = m->cfg.d_model;
	m->embed.out = m->cfg.vocab;
	m->embed.trans = 1;
	m->embed.b = NULL;
	m->embed.w16 = NULL;
	add(w, &m->embed.w, 0, 2, m->cfg.vocab, m->cfg.d_model, "%s", name);
	if (!w->failed)
		m->params[w->n - 1].lin = &m->embed;
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

/* The FFN of a layer: dense (named prefix + up, gate, down), or a mixture of experts: a router
 * (prefix + router) and expert e's FFN under prefix + experts.e. (gated llama experts take
 * Mixtral's names, w1 gate, w3 up, w2 down, given by the caller). */
static void ffn_or_moe(walker *w, gb_layer_w *L, const char *p, const char *router, const char *up, const char *gate,
                       const char *down, int trans)
{
	const gb_config *c = &w->m->cfg;
	char name[160];
	if (!c->n_experts) {
		ffn(w, &L->ffn, p, up, gate, down, trans);
		return;
	}
	snprintf(name, sizeof name, "%s%s", p, router);
	linear(w, &L->moe.router, c->d_model, c->n_experts, trans, 0, name);
	for (int e = 0; e < c->n_experts && !w->failed; e++) {
		snprintf(name, sizeof name, "%sexperts.%d.", p, e);
		ffn(w, &L->moe.experts[e], name, up, gate, down, trans);
	}
}

/* T5's relative bias of a self-attention, (buckets, H) as T5's nn.Embedding holds it. */
static void rel_bias(walker *w, gb_attn_w *a, const char *prefix)
{
	const gb_config *c = &w->m->cfg;
	a->rel_bias = NULL;
	if (c->pos == GB_POS_T5)
		add(w, &a->rel_bias, 0, 2, c->rel_buckets, c->n_head, "%srelative_attention_bias.weight", prefix);
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
	linear(w, &a->q, c->d_model, qw, 1, c->bias || c->qkv_bias, name);
	snprintf(name, sizeof name, "%sk_proj", prefix);
	linear(w, &a->k, c->d_model, kw, 1, c->bias || c->qkv_bias, name);
	snprintf(name, sizeof name, "%sv_proj", prefix);
	linear(w, &a->v, c->d_model, kw, 1, c->bias || c->qkv_bias, name);
	snprintf(name, sizeof name, "%s%s", prefix, oname);
	linear(w, &a->o, qw, c->d_model, 1, c->bias, name);
}

static int alloc_layers(walker *w, gb_stack_w *s, int n)
{
	s->n_layer = n;
	s->layers = calloc((size_t)n, sizeof *s->layers);
	if (!s->layers) {
		w->failed = 1;
		return -1;
	}
	int E = w->m->cfg.n_experts;
	for (int l = 0; l < n && E; l++)
		if (!(s->layers[l].moe.experts = calloc((size_t)E, sizeof(gb_ffn_w)))) {
			w->failed = 1;
			return -1;
		}
	return 0;
}

static void enumerate(walker *w)
{
	gb_model *m = w->m;
	const gb_config *c = &m->cfg;
	char p[256], q[128];
	int learned = c->pos == GB_POS_LEARNED;

	if (c->family == GB_FAM_GPT2) {
		embedding(w, "wte.weight");
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
			linear(w, &L->attn.qkv, c->d_model, (c->n_head + 2 * c->n_kv_head) * c->d_head, 0,
			       c->bias || c->qkv_bias, p);
			snprintf(p, sizeof p, "h.%d.attn.c_proj", l);
			linear(w, &L->attn.o, c->n_head * c->d_head, c->d_model, 0, c->bias, p);
			snprintf(p, sizeof p, "h.%d.attn.", l);
			rel_bias(w, &L->attn, p);
			snprintf(p, sizeof p, "h.%d.ln_2", l);
			norm(w, &L->ln2, p);
			snprintf(p, sizeof p, "h.%d.mlp.", l);
			ffn_or_moe(w, L, p, "router", "c_fc", NULL, "c_proj", 0);
		}
		if (c->final_norm)
			norm(w, &m->dec.final, "ln_f");
	} else if (c->family == GB_FAM_LLAMA) {
		embedding(w, "model.embed_tokens.weight");
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
			rel_bias(w, &L->attn, p);
			snprintf(p, sizeof p, "model.layers.%d.post_attention_layernorm", l);
			norm(w, &L->ln2, p);
			if (c->n_experts) {
				snprintf(p, sizeof p, "model.layers.%d.block_sparse_moe.", l);
				ffn_or_moe(w, L, p, "gate", "w3", "w1", "w2", 1);
			} else {
				snprintf(p, sizeof p, "model.layers.%d.mlp.", l);
				ffn(w, &L->ffn, p, "up_proj", "gate_proj", "down_proj", 1);
			}
		}
		if (c->final_norm)
			norm(w, &m->dec.final, "model.norm");
	} else {
		embedding(w, "model.shared.weight");
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
				rel_bias(w, &L->attn, p);
				snprintf(p, sizeof p, "%sself_attn_layer_norm", q);
				norm(w, &L->ln1, p);
				if (s) {
					snprintf(p, sizeof p, "%sencoder_attn.", q);
					attn_separate(w, &L->cross, p, "out_proj");
					snprintf(p, sizeof p, "%sencoder_attn_layer_norm", q);
					norm(w, &L->ln2, p);
				}
				if (c->n_experts) {
					snprintf(p, sizeof p, "%smoe.", q);
					ffn_or_moe(w, L, p, "router", "fc1", NULL, "fc2", 1);
				} else
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
	m->lm_head.w16 = NULL;
	if (!c->tied) {
		add(w, &m->lm_head.w, 0, 2, c->vocab, c->d_model, "lm_head.weight");
		if (!w->failed)
			w->m->params[w->n - 1].lin = &m->lm_head; /* may be kept 16-bit too */
	}
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

void gb_model_moved(gb_model *m, const gb_model *from)
{
	const char *lo = (const char *)from, *hi = lo + sizeof *from;
	for (int i = 0; i < m->n_params; i++) {
		gb_param *p = &m->params[i];
		if ((const char *)p->slot >= lo && (const char *)p->slot < hi)
			p->slot = (const float **)((char *)m + ((const char *)p->slot - lo));
		if ((const char *)p->lin >= lo && (const char *)p->lin < hi)
			p->lin = (struct gb_linear *)((char *)m + ((const char *)p->lin - lo));
	}
}

/* Points every struct slot at its parameter's data; the tied head reads the embedding. */
static void bind_slots(gb_model *m)
{
	for (int i = 0; i < m->n_params; i++) {
		gb_param *p = &m->params[i];
		*p->slot = p->data;
		if (p->lin) {
			p->lin->w16 = p->data ? NULL : p->data16;
			p->lin->wtype = p->data ? 0 : p->wtype;
		}
	}
	if (m->cfg.tied)
		m->lm_head = m->embed;
}

const float *gb_model_embed_row(const gb_model *m, int id, float *buf)
{
	const gb_linear *e = &m->embed;
	size_t D = (size_t)e->in;
	if (e->w)
		return e->w + (size_t)id * D;
	const uint16_t *r = e->w16 + (size_t)id * D;
	for (size_t d = 0; d < D; d++)
		buf[d] = gb_w16_to_float(r[d], e->wtype);
	return buf;
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
	for (int l = 0; m->dec.layers && l < m->dec.n_layer; l++)
		free(m->dec.layers[l].moe.experts);
	for (int l = 0; m->enc.layers && l < m->enc.n_layer; l++)
		free(m->enc.layers[l].moe.experts);
	free(m->dec.layers);
	free(m->enc.layers);
	free(m->params);
	free(m->owned16);
	free(m->owned);
	gb_unmap(&m->map);
	for (int i = 0; i < m->n_shards; i++)
		gb_unmap(&m->shards[i]);
	free(m->shards);
	if (m->tok)
		gb_tok_free(m->tok);
	gb_l2c_tok_free(m->l2c_tok);
	memset(m, 0, sizeof *m);
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

static int load_llama2c(gb_model *m, const char *path, const char *tokenizer_path, int check, gb_err *err);

/* A folder without config.json that holds one .bin besides tokenizer.bin (stories15M/ as a
 * teacher unpacks it): 1 and its path. */
static int lone_checkpoint(const char *dir, char *out, size_t cap)
{
	char p[1200];
	snprintf(p, sizeof p, "%s/config.json", dir);
	if (exists(p))
		return 0;
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (e->d_name[0] == '.' || l < 5 || strcmp(e->d_name + l - 4, ".bin") || !strcmp(e->d_name, "tokenizer.bin"))
			continue;
		snprintf(out, cap, "%s/%s", dir, e->d_name);
		n++;
	}
	closedir(d);
	return n == 1;
}

/* A folder; check: headers and shapes only (gb_model_check). */
static int load_folder(gb_model *m, const char *dir, int check, gb_err *err)
{
	memset(m, 0, sizeof *m);
	m->check_only = check;
	char path[1200];
	if (exists(dir) && !is_dir(dir))
		return load_llama2c(m, dir, NULL, check, err);
	if (!is_dir(dir))
		return gb_fail(err, "%s: no such model folder or llama2.c checkpoint", dir);
	char single[1200];
	if (lone_checkpoint(dir, single, sizeof single))
		return load_llama2c(m, single, NULL, check, err);
	if (strlen(dir) >= sizeof m->dir)
		return gb_fail(err, "%s: path too long", dir);
	snprintf(path, sizeof path, "%s/config.json", dir);
	if (gb_config_load(&m->cfg, path, err))
		return -1;
	snprintf(m->dir, sizeof m->dir, "%s", dir);
	if (build_params(m, err))
		goto fail;
	snprintf(path, sizeof path, "%s/model.safetensors", dir);
	char index[1200];
	snprintf(index, sizeof index, "%s/model.safetensors.index.json", dir);
	if (!exists(path) && exists(index)) {
		if (gb_safetensors_load_index(m, dir, index, err))
			goto fail;
	} else if (gb_safetensors_load(m, path, err)) {
		goto fail;
	}
	if (!check)
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

int gb_model_load(gb_model *m, const char *dir, gb_err *err)
{
	return load_folder(m, dir, 0, err);
}

int gb_model_load_llama2c(gb_model *m, const char *path, const char *tokenizer_path, gb_err *err)
{
	return load_llama2c(m, path, tokenizer_path, 0, err);
}

static int load_llama2c(gb_model *m, const char *path, const char *tokenizer_path, int check, gb_err *err)
{
	memset(m, 0, sizeof *m);
	m->check_only = check;
	if (strlen(path) >= sizeof m->dir)
		return gb_fail(err, "%s: path too long", path);
	gb_l2c_header h;
	if (gb_map_file(&m->map, path, err))
		return -1;
	if (gb_llama2c_header(&m->map, path, &m->cfg, &h, err))
		goto fail;
	snprintf(m->dir, sizeof m->dir, "%s", path);
	m->l2c = 1 + h.version;
	if (build_params(m, err) || (!check && gb_llama2c_bind(m, &h, path, err)))
		goto fail;
	if (!check)
		bind_slots(m);
	char beside[1200];
	if (!tokenizer_path) {
		const char *slash = strrchr(path, '/');
		snprintf(beside, sizeof beside, "%.*stokenizer.bin", slash ? (int)(slash - path + 1) : 0, path);
		if (exists(beside))
			tokenizer_path = beside;
	}
	if (tokenizer_path) {
		if (gb_l2c_tok_load(tokenizer_path, m->cfg.vocab, &m->l2c_tok, err))
			goto fail;
	} else {
		size_t l = strlen(m->load_note);
		snprintf(m->load_note + l, sizeof m->load_note - l, "; no tokenizer.bin beside it (load FILE --tokenizer "
		         "TOKENIZER.bin, or run --ids)");
	}
	return 0;
fail:
	gb_model_free(m);
	return -1;
}

int gb_model_check(const char *path, gb_model_summary *out, gb_err *err)
{
	memset(out, 0, sizeof *out);
	gb_model m;
	if (load_folder(&m, path, 1, err))
		return -1;
	out->cfg = m.cfg;
	out->n_weights = m.n_weights;
	out->bytes = m.map.len;
	for (int i = 0; i < m.n_shards; i++)
		out->bytes += m.shards[i].len;
	static const char *const l2c[] = { "", "llama2.c legacy", "llama2.c version 1", "llama2.c version 2 (Q8_0)" };
	if (m.l2c)
		snprintf(out->format, sizeof out->format, "%s", l2c[m.l2c]);
	else if (m.n_shards)
		snprintf(out->format, sizeof out->format, "safetensors, %d shards", m.n_shards);
	else
		snprintf(out->format, sizeof out->format, "safetensors");
	char p[1200];
	snprintf(p, sizeof p, "%s/tokenizer.json", path);
	if (m.l2c_tok)
		snprintf(out->tokenizer, sizeof out->tokenizer, "tokenizer.bin, %d pieces", gb_l2c_tok_vocab_size(m.l2c_tok));
	else if (m.tok)
		snprintf(out->tokenizer, sizeof out->tokenizer, "byte-level BPE, %d tokens (%s)", gb_tok_vocab_size(m.tok),
		         exists(p) ? "tokenizer.json" : "vocab.json + merges.txt");
	else
		snprintf(out->tokenizer, sizeof out->tokenizer, "none (token ids only)");
	gb_model_free(&m);
	return 0;
}

int gb_model_encode(const gb_model *m, const char *text, size_t len, int **ids, int *n, gb_err *err)
{
	if (m->l2c_tok)
		return gb_l2c_tok_encode(m->l2c_tok, text, len, 1, 0, ids, n, err);
	if (m->tok)
		return gb_tok_encode(m->tok, text, len, GB_TOK_TEMPLATE, ids, n, NULL, err); /* <s> where the file says so, as HF does */
	return gb_fail(err, "%s has no tokenizer: give token ids", m->dir[0] ? m->dir : "the model");
}

const unsigned char *gb_model_piece(const gb_model *m, int id, size_t *len)
{
	if (m->l2c_tok)
		return gb_l2c_tok_piece(m->l2c_tok, id, len);
	if (m->tok)
		return gb_tok_piece_bytes(m->tok, id, len);
	return NULL;
}

float *gb_weights_alloc(size_t n)
{
	return gb_big_alloc((n ? n : 1) * sizeof(float));
}

static int copy_override = -2; /* below -1: the environment decides */

void gb_weights_copy_set(int v)
{
	copy_override = v < -1 ? -2 : v;
}

int gb_weights_copy(void)
{
	if (copy_override >= -1)
		return copy_override;
	const char *e = getenv("GLASSBOX_WEIGHTS");
	return e && !strcmp(e, "copy") ? 1 : e && !strcmp(e, "mapped") ? -1 : 0;
}

int gb_model_init(gb_model *m, const gb_config *c, uint64_t seed, float std, gb_err *err)
{
	memset(m, 0, sizeof *m);
	if (gb_config_check(c, "config", err))
		return -1;
	m->cfg = *c;
	if (build_params(m, err))
		goto fail;
	m->owned = gb_weights_alloc(m->n_weights);
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
	float *block = gb_weights_alloc(m->n_weights);
	if (!block)
		return gb_fail(err, "out of memory for %zu parameters", m->n_weights);
	float *dst = block;
	for (int i = 0; i < m->n_params; i++) {
		gb_param *p = &m->params[i];
		if (p->data)
			memcpy(dst, p->data, p->n * sizeof(float));
		else /* kept 16-bit: widened, exactly (every BF16 and F16 value is a float) */
			for (size_t k = 0; k < p->n; k++)
				dst[k] = gb_w16_to_float(p->data16[k], p->wtype);
		p->data = dst;
		p->data16 = NULL;
		p->q8 = NULL; /* it pointed into the map */
		dst += p->n;
	}
	free(m->owned);
	m->owned = block;
	free(m->owned16); /* widened into block */
	m->owned16 = NULL;
	gb_unmap(&m->map);
	m->l2c_freqs = NULL; /* it pointed into the map */
	for (int i = 0; i < m->n_shards; i++)
		gb_unmap(&m->shards[i]);
	free(m->shards);
	m->shards = NULL;
	m->n_shards = 0;
	m->writable = 1;
	bind_slots(m);
	return 0;
}

static int save_safetensors(const gb_model *m, const char *path, int bf16, gb_err *err)
{
	const float **data = malloc(sizeof *data * (size_t)(m->n_params ? m->n_params : 1));
	if (!data)
		return gb_fail(err, "%s: out of memory", path);
	/* weights kept 16-bit are written as floats, widened into temporary buffers */
	float **wide = calloc((size_t)(m->n_params ? m->n_params : 1), sizeof *wide);
	int rc = wide ? 0 : gb_fail(err, "%s: out of memory", path);
	for (int i = 0; !rc && i < m->n_params; i++) {
		const gb_param *p = &m->params[i];
		if (!p->data) {
			if (!(wide[i] = malloc(p->n * sizeof(float)))) {
				rc = gb_fail(err, "%s: out of memory", path);
				break;
			}
			for (size_t k = 0; k < p->n; k++)
				wide[i][k] = gb_w16_to_float(p->data16[k], p->wtype);
		}
		data[i] = p->data ? p->data : wide[i];
	}
	const char *prefix = "";
	if (!rc)
		rc = gb_safetensors_write(m, path, &prefix, data, 1, NULL, 0, bf16, err);
	for (int i = 0; wide && i < m->n_params; i++)
		free(wide[i]);
	free(wide);
	free(data);
	return rc;
}

int gb_model_save_as(const gb_model *m, const char *dir, int bf16, gb_err *err)
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
	if (save_safetensors(m, path, bf16, err))
		return -1;
	if (m->tok) {
		snprintf(path, sizeof path, "%s/tokenizer.json", dir);
		if (gb_tok_save_json(m->tok, path, err))
			return -1;
	}
	return 0;
}

int gb_model_save(const gb_model *m, const char *dir, gb_err *err)
{
	return gb_model_save_as(m, dir, 0, err);
}
