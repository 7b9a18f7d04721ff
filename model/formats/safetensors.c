/* safetensors.c — the safetensors container (see safetensors.h): the header parsed and every
 * entry checked against the file before any byte is read, F16, BF16 and F64 converted to F32,
 * F32 used in place from the map when aligned; names matched with or without the family's
 * prefix, known buffers skipped; sharded checkpoints through their index; and the writer. */
#include "model/formats/safetensors.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "model/fileio.h"
#include "model/kernels/kernels.h"

/* The dtypes a header may name. Weights must be floating point; the integer and boolean
 * types are accepted only in the buffers that loading skips (a causal mask stored as BOOL). */
static const struct { const char *name; int size, is_float; } dtypes[] = {
	{ "F32", 4, 1 }, { "F16", 2, 1 }, { "BF16", 2, 1 }, { "F64", 8, 1 }, { "I64", 8, 0 },
	{ "I32", 4, 0 }, { "I16", 2, 0 }, { "I8", 1, 0 }, { "U8", 1, 0 }, { "BOOL", 1, 0 },
};
enum { DT_F32, DT_F16, DT_BF16, DT_F64 };

typedef struct st_entry {
	const char *name;     /* as the file spells it */
	const char *key;      /* the name without the family's optional prefix (see key_of) */
	const char *file;     /* the file that holds it, for messages */
	int dtype;            /* index into dtypes */
	int ndim;
	int64_t shape[8];
	size_t begin, end;    /* offsets into its file's data area */
	const unsigned char *data; /* its bytes in the map */
	int used;             /* 1: a parameter; 2: a skipped buffer or a copy of the embedding */
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

/* Element k of a float tensor as F32. */
static float elem(const st_entry *t, size_t k)
{
	const unsigned char *s = t->data;
	switch (t->dtype) {
	case DT_F32: {
		float f;
		memcpy(&f, s + 4 * k, 4);
		return f;
	}
	case DT_F64: {
		double d;
		memcpy(&d, s + 8 * k, 8);
		return (float)d;
	}
	default: {
		uint16_t h = (uint16_t)(s[2 * k] | s[2 * k + 1] << 8);
		return t->dtype == DT_F16 ? half_to_float(h) : bf16_to_float(h);
	}
	}
}

/* Parses one file's header and checks every entry against the file; appends its entries to
 * *e (n, cap). Entries point into *root's strings and into the map. */
static int st_parse(const gb_map *map, const char *path, json_t **root, st_entry **e, int *n, int *cap, gb_err *err)
{
	*root = NULL;
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
	json_t *h = json_loadb((const char *)map->data + 8, (size_t)hlen, JSON_REJECT_DUPLICATES, &je);
	if (!h)
		return gb_fail(err, "%s: broken JSON header: %s", path, je.text);
	if (!json_is_object(h)) {
		json_decref(h);
		return gb_fail(err, "%s: the header is not a JSON object", path);
	}
	size_t data_len = map->len - 8 - (size_t)hlen;
	const unsigned char *base = map->data + 8 + hlen;
	int first = *n;
	size_t want = (size_t)*n + json_object_size(h) + 1;
	if (want > (size_t)*cap) {
		st_entry *grown = want < (1u << 24) ? realloc(*e, want * sizeof *grown) : NULL;
		if (!grown) {
			json_decref(h);
			return gb_fail(err, "%s: out of memory (or too many tensors)", path);
		}
		*e = grown;
		*cap = (int)want;
	}
	const char *key;
	json_t *v;
	json_object_foreach(h, key, v) {
		if (!strcmp(key, "__metadata__"))
			continue;
		st_entry *t = &(*e)[*n];
		memset(t, 0, sizeof *t);
		t->name = key;
		t->file = path;
		json_t *dt = json_object_get(v, "dtype"), *sh = json_object_get(v, "shape"),
		       *off = json_object_get(v, "data_offsets");
		if (!json_is_object(v) || !json_is_string(dt) || !json_is_array(sh) || !json_is_array(off) ||
		    json_array_size(off) != 2 || !json_is_integer(json_array_get(off, 0)) ||
		    !json_is_integer(json_array_get(off, 1))) {
			gb_fail(err, "%s: tensor \"%s\": header entry needs dtype, shape and two data_offsets", path, key);
			goto fail;
		}
		const char *d = json_string_value(dt);
		t->dtype = -1;
		for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
			if (!strcmp(d, dtypes[i].name))
				t->dtype = (int)i;
		if (t->dtype < 0) {
			gb_fail(err, "%s: tensor \"%s\" has dtype %.20s; glassbox reads F32, F16, BF16 and F64 weights",
			        path, key, d);
			goto fail;
		}
		size_t esz = (size_t)dtypes[t->dtype].size;
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
			gb_fail(err, "%s: tensor \"%s\": offsets span %lld bytes but its shape and dtype %s need %llu", path,
			        key, (long long)(en - b), d, (unsigned long long)(count * esz));
			goto fail;
		}
		t->begin = (size_t)b;
		t->end = (size_t)en;
		t->data = base + b;
		(*n)++;
	}
	/* Overlap check: sort by start, each must end before the next begins. Empty tensors
	 * occupy no bytes and cannot overlap anything. */
	st_entry **sorted = malloc((size_t)(*n - first + 1) * sizeof *sorted);
	if (!sorted) {
		gb_fail(err, "%s: out of memory", path);
		goto fail;
	}
	int m = 0;
	for (int i = first; i < *n; i++)
		if ((*e)[i].end > (*e)[i].begin)
			sorted[m++] = &(*e)[i];
	qsort(sorted, (size_t)m, sizeof *sorted, cmp_begin);
	for (int i = 1; i < m; i++)
		if (sorted[i]->begin < sorted[i - 1]->end) {
			gb_fail(err, "%s: tensors \"%s\" and \"%s\" overlap", path, sorted[i - 1]->name, sorted[i]->name);
			free(sorted);
			goto fail;
		}
	free(sorted);
	*root = h;
	return 0;
fail:
	*n = first;
	json_decref(h);
	return -1;
}

/* The name without the prefix its family may carry: GPT2LMHeadModel saves GPT-2's weights
 * as "transformer.h.0...", GPT2Model as "h.0..."; LlamaForCausalLM as "model.layers.0...",
 * LlamaModel as "layers.0...". Parameters and file entries meet on this key. */
static const char *key_of(const char *name, int family)
{
	if (family == GB_FAM_GPT2 && !strncmp(name, "transformer.", 12))
		return name + 12;
	if (family == GB_FAM_LLAMA && !strncmp(name, "model.", 6))
		return name + 6;
	return name;
}

/* Buffers that checkpoints carry beside the weights and that loading skips: they are not
 * parameters, the forward pass computes them. Keys as key_of leaves them; N a layer. */
static const struct {
	int family;
	const char *pre, *post; /* pre + digits + post, or pre alone when post is NULL */
	const char *shown, *why;
} buffers[] = {
	{ GB_FAM_GPT2, "h.", ".attn.bias", "h.N.attn.bias", "GPT-2's causal mask" },
	{ GB_FAM_GPT2, "h.", ".attn.masked_bias", "h.N.attn.masked_bias", "GPT-2's mask fill value" },
	{ GB_FAM_LLAMA, "layers.", ".self_attn.rotary_emb.inv_freq", "layers.N.self_attn.rotary_emb.inv_freq",
	  "RoPE's frequencies" },
	{ GB_FAM_LLAMA, "rotary_emb.inv_freq", NULL, "rotary_emb.inv_freq", "RoPE's frequencies" },
};
#define N_BUFFERS ((int)(sizeof buffers / sizeof buffers[0]))

static int buffer_kind(const char *key, int family)
{
	for (int i = 0; i < N_BUFFERS; i++) {
		size_t lp = strlen(buffers[i].pre);
		if (buffers[i].family != family || strncmp(key, buffers[i].pre, lp))
			continue;
		if (!buffers[i].post) {
			if (!key[lp])
				return i;
			continue;
		}
		const char *p = key + lp;
		if (*p < '0' || *p > '9')
			continue;
		while (*p >= '0' && *p <= '9')
			p++;
		if (!strcmp(p, buffers[i].post))
			return i;
	}
	return -1;
}

/* A stored inv_freq must be the one rope_theta and rope_scaling imply: other frequencies would
 * mean glassbox rotates differently from the checkpoint's own code. */
static int check_inv_freq(const st_entry *t, const gb_config *c, gb_err *err)
{
	if (!dtypes[t->dtype].is_float || t->ndim != 1 || t->shape[0] != c->d_head / 2)
		return gb_fail(err, "%s: buffer \"%s\" should hold d_head/2 = %d RoPE frequencies", t->file, t->name,
		               c->d_head / 2);
	for (int k = 0; k < c->d_head / 2; k++) {
		double want = gb_rope_inv_freq(c, k), got = elem(t, (size_t)k);
		if (fabs(got - want) > 1e-5 * want)
			return gb_fail(err, "%s: buffer \"%s\" holds RoPE frequencies other than rope_theta %g%s gives "
			               "(element %d: %g, expected %g)", t->file, t->name, (double)c->rope_theta,
			               c->rope_scale ? " with its rope_scaling" : "", k, got, want);
	}
	return 0;
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp((*(st_entry *const *)a)->key, (*(st_entry *const *)b)->key);
}

static st_entry *find_key(st_entry **sorted, int n, const char *key)
{
	st_entry probe = { .key = key }, *pp = &probe;
	st_entry **r = bsearch(&pp, sorted, (size_t)n, sizeof *sorted, cmp_key);
	return r ? *r : NULL;
}

/* What a family's tensors are called, for the message about a tensor that is none of them. */
static const char *expected_names(int family)
{
	switch (family) {
	case GB_FAM_GPT2:
		return "wte, wpe, h.N.{ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj}, ln_f, lm_head";
	case GB_FAM_LLAMA:
		return "model.embed_tokens, model.layers.N.{input_layernorm, self_attn.{q,k,v,o}_proj, "
		       "post_attention_layernorm, mlp.{gate,up,down}_proj}, model.norm, lm_head";
	}
	return "model.shared, model.{encoder,decoder}.layers.N.*, lm_head";
}

static int unknown(const st_entry *t, const gb_config *c, gb_err *err)
{
	return gb_fail(err, "%s: tensor \"%s\" is not part of this %d-layer %s model (expected %s; check config.json)",
	               t->file, t->name, c->n_layer, gb_config_type_name(c), expected_names(c->family));
}

static void note(gb_model *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(gb_model *m, const char *fmt, ...)
{
	size_t l = strlen(m->load_note);
	if (l && l + 2 < sizeof m->load_note)
		l += (size_t)snprintf(m->load_note + l, sizeof m->load_note - l, "; ");
	va_list ap;
	va_start(ap, fmt);
	if (l < sizeof m->load_note)
		vsnprintf(m->load_note + l, sizeof m->load_note - l, fmt, ap);
	va_end(ap);
}

static void shape_text(char *buf, size_t cap, const int64_t *shape, int ndim)
{
	buf[0] = 0;
	for (int d = 0; d < ndim; d++)
		snprintf(buf + strlen(buf), cap - strlen(buf), "%s%lld", d ? ", " : "", (long long)shape[d]);
}

/* A tensor's n bytes at p copied to dst, the pages of its file's map given back as they go. */
static void copy_out(const gb_model *m, void *dst, const void *p, size_t n)
{
	const gb_map *in = &m->map;
	for (int i = 0; i < m->n_shards; i++)
		if ((const unsigned char *)p >= m->shards[i].data && (const unsigned char *)p < m->shards[i].data + m->shards[i].len)
			in = &m->shards[i];
	gb_map_copy(in, dst, p, n);
}

/* Points every parameter of m at its entry among e (n entries from every file of the
 * checkpoint): in place when F32 and aligned, else converted into m->owned. `what` names
 * the checkpoint in messages. */
static int bind(gb_model *m, st_entry *e, int n, const char *what, gb_err *err)
{
	const gb_config *c = &m->cfg;
	int fam = c->family, rc = -1, skipped[N_BUFFERS] = { 0 };
	st_entry **sorted = malloc((size_t)(n + 1) * sizeof *sorted);
	if (!sorted)
		return gb_fail(err, "%s: out of memory", what);
	int ns = 0;
	for (int i = 0; i < n; i++) {
		e[i].key = key_of(e[i].name, fam);
		int b = buffer_kind(e[i].key, fam);
		if (b >= 0) {
			if (strstr(buffers[b].shown, "inv_freq") && check_inv_freq(&e[i], c, err))
				goto out;
			e[i].used = 2;
			skipped[b]++;
			continue;
		}
		sorted[ns++] = &e[i];
	}
	qsort(sorted, (size_t)ns, sizeof *sorted, cmp_key);
	for (int i = 1; i < ns; i++)
		if (!strcmp(sorted[i]->key, sorted[i - 1]->key)) {
			if (sorted[i]->file != sorted[i - 1]->file)
				gb_fail(err, "%s: tensor \"%s\" is in two files: %s and %s", what, sorted[i]->name,
				        sorted[i - 1]->file, sorted[i]->file);
			else
				gb_fail(err, "%s: tensors \"%s\" and \"%s\" are the same weight (with and without a prefix)",
				        sorted[i]->file, sorted[i - 1]->name, sorted[i]->name);
			goto out;
		}
	size_t need = 0; /* floats to own: converted or misaligned tensors */
	size_t kept16[2] = { 0, 0 }; /* F16, BF16 weights kept as they are */
	int kept_mats[2] = { 0, 0 };  /* and the matrices they are in */
	/* GLASSBOX_WEIGHTS=f32 widens 16-bit weights at load instead (a comparison, or a machine
	 * where the float path is faster) */
	const char *wenv = getenv("GLASSBOX_WEIGHTS");
	int keep16 = !(wenv && !strcmp(wenv, "f32"));
	/* matrices the map could serve in place: copied out on request (gb_weights_copy 1), the
	 * 16-bit ones off a cache line also by default (0), none with GLASSBOX_WEIGHTS=mapped (-1) */
	int how = m->check_only ? -1 : gb_weights_copy(), copy = how == 1, copied = 0;
	size_t f32_mats = 0, need16 = 0;
	int moved16 = 0; /* 16-bit matrices copied: all of them on request, else those off a cache line */
	for (int i = 0; i < m->n_params; i++) {
		gb_param *p = &m->params[i];
		st_entry *t = find_key(sorted, ns, key_of(p->name, fam));
		if (!t) {
			gb_fail(err, "%s: tensor \"%s\" is missing (the config asks for it%s)", what, p->name,
			        !strcmp(p->name, "lm_head.weight") ? "; set tie_word_embeddings true if the output shares the "
			        "embedding" : "");
			goto out;
		}
		t->used = 1;
		int ok = t->ndim == p->ndim && t->shape[0] == p->shape[0] && (p->ndim == 1 || t->shape[1] == p->shape[1]);
		if (!ok) {
			char have[96], want[64];
			shape_text(have, sizeof have, t->shape, t->ndim);
			if (p->ndim == 1)
				snprintf(want, sizeof want, "%d", p->shape[0]);
			else
				snprintf(want, sizeof want, "%d, %d", p->shape[0], p->shape[1]);
			gb_fail(err, "%s: tensor \"%s\" has shape (%s); the config needs (%s)", t->file, t->name, have, want);
			goto out;
		}
		if (!dtypes[t->dtype].is_float) {
			gb_fail(err, "%s: tensor \"%s\" has dtype %s; glassbox reads F32, F16, BF16 and F64 weights", t->file,
			        t->name, dtypes[t->dtype].name);
			goto out;
		}
		if (t->dtype == DT_F32 && ((uintptr_t)t->data & 3) == 0 && !(copy && p->lin))
			p->data = (float *)t->data;
		else if (keep16 && p->lin && (t->dtype == DT_BF16 || t->dtype == DT_F16) && ((uintptr_t)t->data & 1) == 0) {
			/* a matrix's 16-bit weights (a linear layer's, the token embedding's) stay as the
			 * file has them: decoding reads half the bytes, and the kernels widen them
			 * (exactly) as they go */
			p->data16 = (const uint16_t *)t->data;
			p->wtype = t->dtype == DT_BF16 ? GB_W_BF16 : GB_W_F16;
			kept16[t->dtype == DT_BF16] += p->n;
			kept_mats[t->dtype == DT_BF16]++;
			if (copy || (how == 0 && ((uintptr_t)t->data & 63)))
				need16 += gb_weights_slot16(p->n), moved16++;
		} else {
			need += gb_weights_slot(p->n);
			if (copy && t->dtype == DT_F32 && p->lin)
				copied++, f32_mats += p->n * sizeof(float);
		}
	}
	if (m->check_only) { /* the gallery: names, shapes and sizes are all it asks */
		for (int i = 0; i < n; i++)
			if (!e[i].used && !(c->tied && !strcmp(e[i].key, "lm_head.weight"))) {
				unknown(&e[i], c, err);
				goto out;
			}
		rc = 0;
		goto out;
	}
	if (need) {
		m->owned = gb_weights_alloc(need);
		if (!m->owned) {
			gb_fail(err, "%s: out of memory", what);
			goto out;
		}
		float *dst = m->owned;
		for (int i = 0; i < m->n_params; i++) {
			gb_param *p = &m->params[i];
			if (p->data || p->data16)
				continue;
			const st_entry *t = find_key(sorted, ns, key_of(p->name, fam));
			if (t->dtype == DT_F32) {
				copy_out(m, dst, t->data, p->n * sizeof(float));
			} else {
				for (size_t k = 0; k < p->n; k++)
					dst[k] = elem(t, k);
			}
			p->data = dst;
			dst += gb_weights_slot(p->n);
		}
		if (copied)
			note(m, "%d float32 matri%s (%.1f MB) copied from the file into glassbox's memory (GLASSBOX_WEIGHTS=copy)",
			     copied, copied > 1 ? "ces" : "x", f32_mats / 1e6);
	}
	/* 16-bit matrices are copied, each to a cache line, on request or when the file does not
	 * put them on one: their 32-byte loads then never straddle two lines (Llama-110M's shape
	 * from a BF16 file whose data starts 8 bytes past one: 85-88 tok/s read in place, 106-115
	 * copied, one thread) */
	if (need16 && !(m->owned16 = gb_big_alloc(need16 * sizeof(uint16_t))) && copy) {
		gb_fail(err, "%s: out of memory", what);
		goto out;
	}
	if (m->owned16) { /* without the memory, unasked: read in place, as before */
		uint16_t *dst = m->owned16;
		for (int i = 0; i < m->n_params; i++) {
			gb_param *p = &m->params[i];
			if (!p->data16 || (!copy && !((uintptr_t)p->data16 & 63)))
				continue;
			copy_out(m, dst, p->data16, p->n * sizeof(uint16_t));
			p->data16 = dst;
			dst += gb_weights_slot16(p->n);
		}
		if (copy) /* the copy to cache lines alone changes nothing `info` should show a class */
			note(m, "%d 16-bit matri%s (%.1f MB) copied from the file into glassbox's memory (GLASSBOX_WEIGHTS=copy)",
			     moved16, moved16 > 1 ? "ces" : "x", need16 * 2 / 1e6);
	}
	/* A tied model whose file also holds the output matrix: fine when it is the embedding's
	 * copy (some exports write both), an error when it differs (the config would be wrong). */
	st_entry *head = c->tied ? find_key(sorted, ns, "lm_head.weight") : NULL;
	if (head && !head->used) {
		const gb_param *emb = &m->params[0];
		int same = head->ndim == 2 && head->shape[0] == c->vocab && head->shape[1] == c->d_model &&
		           dtypes[head->dtype].is_float;
		/* a copy in the embedding's own format is bit-identical: compare bytes (fast) */
		int wt16 = head->dtype == DT_BF16 ? GB_W_BF16 : head->dtype == DT_F16 ? GB_W_F16 : -1;
		int bytes = emb->data ? head->dtype == DT_F32 : emb->data16 && wt16 == emb->wtype;
		if (same && bytes)
			same = !memcmp(head->data, emb->data ? (const void *)emb->data : (const void *)emb->data16,
			               emb->n * (emb->data ? sizeof(float) : sizeof(uint16_t)));
		for (size_t k = 0; same && !bytes && k < emb->n; k++) /* the embedding kept 16-bit: widened */
			same = elem(head, k) == (emb->data ? emb->data[k] : gb_w16_to_float(emb->data16[k], emb->wtype));
		if (!same) {
			gb_fail(err, "%s: tensor \"%s\" differs from the token embedding, but config.json ties them "
			        "(set tie_word_embeddings false)", head->file, head->name);
			goto out;
		}
		head->used = 2;
		note(m, "%s is a copy of the token embedding (tied), read once", head->name);
	}
	for (int i = 0; i < n; i++)
		if (!e[i].used) {
			unknown(&e[i], c, err);
			goto out;
		}
	for (int b = 0; b < N_BUFFERS; b++)
		if (skipped[b])
			note(m, "skipped %d x %s (%s, a buffer, not a weight)", skipped[b], buffers[b].shown, buffers[b].why);
	for (int b = 0; b < 2; b++)
		if (kept16[b])
			note(m, "%d matrices (linear layers, token embedding), %.1fM weights, kept as %s in memory (%.0f MB), "
			     "widened inside the kernels", kept_mats[b], kept16[b] / 1e6, b ? "BF16" : "F16", kept16[b] * 2 / 1e6);
	for (int i = 0; i < m->n_params; i++) {
		const gb_param *p = &m->params[i];
		/* a 16-bit NaN or infinity: every exponent bit set */
		uint16_t top = p->wtype == GB_W_BF16 ? 0x7F80 : 0x7C00;
		for (size_t k = 0; !p->data && k < p->n; k++)
			if ((p->data16[k] & top) == top) {
				gb_fail(err, "%s: tensor \"%s\" holds %s at element %zu", what, p->name,
				        (p->data16[k] & (top ^ 0x7FFF)) ? "NaN" : "an infinite value", k);
				goto out;
			}
		for (size_t k = 0; p->data && k < p->n; k++)
			if (!isfinite(p->data[k])) {
				gb_fail(err, "%s: tensor \"%s\" holds %s at element %zu", what, p->name,
				        isnan(p->data[k]) ? "NaN" : "an infinite value", k);
				goto out;
			}
	}
	rc = 0;
out:
	free(sorted);
	return rc;
}

int gb_safetensors_load(gb_model *m, const char *path, gb_err *err)
{
	json_t *root;
	st_entry *e = NULL;
	int n = 0, cap = 0;
	if (gb_map_file(&m->map, path, err))
		return -1;
	if (st_parse(&m->map, path, &root, &e, &n, &cap, err)) {
		free(e);
		return -1;
	}
	int rc = bind(m, e, n, path, err);
	free(e);
	json_decref(root);
	return rc;
}

/* A shard's file name as the index gives it: a plain name in the model's folder. */
static int shard_name_ok(const char *s)
{
	size_t n = strlen(s);
	return n > 0 && n < 256 && !strchr(s, '/') && !strchr(s, '\\') && s[0] != '.';
}

int gb_safetensors_load_index(gb_model *m, const char *dir, const char *index_path, gb_err *err)
{
	char *text = gb_read_file(index_path, 64u << 20, NULL, err);
	if (!text)
		return -1;
	json_error_t je;
	json_t *idx = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	free(text);
	if (!idx)
		return gb_fail(err, "%s: broken JSON at line %d: %s", index_path, je.line, je.text);
	json_t *wm = json_object_get(idx, "weight_map");
	const char **names = NULL;
	json_t **roots = NULL;
	st_entry *e = NULL;
	int n_names = 0, n = 0, cap = 0, rc = -1;
	char (*paths)[1200] = NULL;
	if (!json_is_object(idx) || !json_is_object(wm)) {
		gb_fail(err, "%s: needs a \"weight_map\" object {tensor: shard file}", index_path);
		goto out;
	}
	/* The distinct shard files, in the order the index first names them. */
	size_t n_map = json_object_size(wm);
	names = calloc(n_map + 1, sizeof *names);
	if (!names) {
		gb_fail(err, "%s: out of memory", index_path);
		goto out;
	}
	const char *key;
	json_t *v;
	json_object_foreach(wm, key, v) {
		if (!json_is_string(v) || !shard_name_ok(json_string_value(v))) {
			gb_fail(err, "%s: tensor \"%s\": the shard must be a file name in the model's folder", index_path, key);
			goto out;
		}
		int seen = 0;
		for (int i = 0; i < n_names && !seen; i++)
			seen = !strcmp(names[i], json_string_value(v));
		if (!seen)
			names[n_names++] = json_string_value(v);
	}
	if (!n_names) {
		gb_fail(err, "%s: the weight_map is empty", index_path);
		goto out;
	}
	m->shards = calloc((size_t)n_names, sizeof *m->shards);
	roots = calloc((size_t)n_names, sizeof *roots);
	paths = calloc((size_t)n_names, sizeof *paths);
	if (!m->shards || !roots || !paths) {
		gb_fail(err, "%s: out of memory", index_path);
		goto out;
	}
	for (int i = 0; i < n_names; i++) {
		snprintf(paths[i], sizeof paths[i], "%s/%s", dir, names[i]);
		struct stat st;
		if (stat(paths[i], &st)) {
			gb_fail(err, "%s: shard %s (named by %s) is missing", dir, names[i], index_path);
			goto out;
		}
		if (gb_map_file(&m->shards[i], paths[i], err))
			goto out;
		m->n_shards = i + 1;
		int first = n;
		if (st_parse(&m->shards[i], paths[i], &roots[i], &e, &n, &cap, err))
			goto out;
		/* Each shard holds exactly what the index assigns to it. */
		for (int k = first; k < n; k++) {
			json_t *s = json_object_get(wm, e[k].name);
			if (!s) {
				gb_fail(err, "%s: tensor \"%s\" is not in %s's weight_map", paths[i], e[k].name, index_path);
				goto out;
			}
			if (strcmp(json_string_value(s), names[i])) {
				gb_fail(err, "%s: tensor \"%s\" is in this shard, but %s puts it in %s (a tensor in two shards, or a "
				        "stale index)", paths[i], e[k].name, index_path, json_string_value(s));
				goto out;
			}
		}
	}
	if ((size_t)n < n_map) {
		json_object_foreach(wm, key, v) {
			int found = 0;
			for (int k = 0; k < n && !found; k++)
				found = !strcmp(e[k].name, key);
			if (!found) {
				gb_fail(err, "%s: names tensor \"%s\" in %s, which does not hold it", index_path, key,
				        json_string_value(v));
				goto out;
			}
		}
	}
	rc = bind(m, e, n, index_path, err);
	if (!rc)
		note(m, "weights from %d shards (%s)", n_names, "model.safetensors.index.json");
out:
	for (int i = 0; roots && i < n_names; i++)
		json_decref(roots[i]);
	free(roots);
	free(paths);
	free(names);
	free(e);
	json_decref(idx);
	return rc;
}

/* Round to the nearest bf16, ties to even (the values are finite: loading and training check). */
static uint16_t float_to_bf16(float x)
{
	uint32_t u;
	memcpy(&u, &x, 4);
	u += 0x7fff + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

/* Whether tensor p is written as BF16: with bf16 set, a matrix (2 or more dimensions). */
static int as_bf16(const gb_param *p, int bf16)
{
	return bf16 && p->ndim >= 2;
}

int gb_safetensors_write(const gb_model *m, const char *path, const char *const *prefixes, const float *const *data,
                         int n_blocks, const char *const *meta, int n_meta, int bf16, gb_err *err)
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
			off += p->n * (as_bf16(p, bf16) ? 2 : 4);
			json_array_append_new(offs, json_integer((json_int_t)off));
			json_object_set_new(e, "dtype", json_string(as_bf16(p, bf16) ? "BF16" : "F32"));
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
	/* Pad the header with spaces (as the format allows) so that the data starts 64 bytes into
	 * the file, 8 + header: mapped, each tensor whose offset is a multiple of 64 then starts on
	 * a cache line, where the kernels read 16-bit rows fastest (bind copies those that do not).
	 * The format allows no gaps between tensors: after one whose size is not a multiple of 64
	 * bytes, the next ones are off a line (not in glassbox's models, whose sizes are). */
	size_t hlen = strlen(text), padded = (hlen + 8 + 63) / 64 * 64 - 8;
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
	uint16_t buf[4096];
	for (int b = 0; b < n_blocks; b++)
		for (int i = 0; i < m->n_params; i++) { /* the host is little-endian, as the format */
			const gb_param *p = &m->params[i];
			const float *x = data[(size_t)b * m->n_params + i];
			if (!as_bf16(p, bf16)) {
				fwrite(x, sizeof(float), p->n, w.f);
				continue;
			}
			for (size_t k = 0; k < p->n; k += 4096) {
				size_t c = p->n - k < 4096 ? p->n - k : 4096;
				for (size_t j = 0; j < c; j++)
					buf[j] = float_to_bf16(x[k + j]);
				fwrite(buf, sizeof *buf, c, w.f);
			}
		}
	return gb_file_commit(&w, err);
}
