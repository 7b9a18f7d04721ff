/* llama2c.c — llama2.c checkpoints (see llama2c.h): the header checked against the file's
 * length, the tensors in each layout's order pointed at or dequantized, and the writer. */
#include "model/formats/llama2c.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

#define L2C_MAGIC 0x616b3432u /* "ak42" */
#define L2C_EPS 1e-5f         /* run.c's RMSNorm epsilon */
#define L2C_THETA 10000.0f    /* run.c's RoPE base */

/* The tensors of a checkpoint, by kind; the per-layer kinds repeat for every layer. */
enum { EMB, LN1, WQ, WK, WV, WO, LN2, W1, W2, W3, FINAL, FREQ, HEAD };

static int per_layer(int k) { return k >= LN1 && k <= W3; }
static int is_norm(int k) { return k == LN1 || k == LN2 || k == FINAL; }

/* The order of the kinds in a file of this version; returns how many. */
static int order(int version, int shared, int *kinds)
{
	static const int legacy[] = { EMB, LN1, WQ, WK, WV, WO, LN2, W1, W2, W3, FINAL, FREQ };
	static const int v1[] = { LN1, LN2, FINAL, EMB, WQ, WK, WV, WO, W1, W2, W3 };
	const int *o = version ? v1 : legacy;
	int n = version ? (int)(sizeof v1 / sizeof v1[0]) : (int)(sizeof legacy / sizeof legacy[0]);
	memcpy(kinds, o, sizeof(int) * (size_t)n);
	if (!shared)
		kinds[n++] = HEAD;
	return n;
}

/* Elements of one tensor of this kind. */
static uint64_t count(int k, const gb_config *c)
{
	uint64_t D = (uint64_t)c->d_model, Q = (uint64_t)c->n_head * c->d_head, KV = (uint64_t)c->n_kv_head * c->d_head;
	uint64_t F = (uint64_t)c->d_ffn, V = (uint64_t)c->vocab;
	switch (k) {
	case EMB: case HEAD: return V * D;
	case LN1: case LN2: case FINAL: return D;
	case WQ: case WO: return Q * D;
	case WK: case WV: return KV * D;
	case W1: case W2: case W3: return F * D;
	case FREQ: return (uint64_t)c->n_ctx * (uint64_t)c->d_head; /* real and imaginary, C x E/2 each */
	}
	return 0;
}

static void param_name(char *buf, size_t cap, int k, int l)
{
	static const char *const fmt[] = {
		[EMB] = "model.embed_tokens.weight",
		[LN1] = "model.layers.%d.input_layernorm.weight",
		[WQ] = "model.layers.%d.self_attn.q_proj.weight",
		[WK] = "model.layers.%d.self_attn.k_proj.weight",
		[WV] = "model.layers.%d.self_attn.v_proj.weight",
		[WO] = "model.layers.%d.self_attn.o_proj.weight",
		[LN2] = "model.layers.%d.post_attention_layernorm.weight",
		[W1] = "model.layers.%d.mlp.gate_proj.weight",
		[W2] = "model.layers.%d.mlp.down_proj.weight",
		[W3] = "model.layers.%d.mlp.up_proj.weight",
		[FINAL] = "model.norm.weight",
		[HEAD] = "lm_head.weight",
	};
	if (per_layer(k))
		snprintf(buf, cap, fmt[k], l);
	else
		snprintf(buf, cap, "%s", fmt[k]);
}

/* Bytes of one tensor of kind k in a file of this version. */
static uint64_t bytes_of(int k, const gb_config *c, int version, int gs)
{
	uint64_t n = count(k, c);
	if (version == 2 && !is_norm(k))
		return n + 4 * (n / (uint64_t)gs);
	return 4 * n;
}

static int32_t rd32(const unsigned char *p)
{
	int32_t v;
	memcpy(&v, p, 4);
	return v;
}

int gb_llama2c_header(const gb_map *map, const char *path, gb_config *c, gb_l2c_header *h, gb_err *err)
{
	memset(h, 0, sizeof *h);
	if (map->len < 28)
		return gb_fail(err, "%s: %zu bytes, too short for a llama2.c checkpoint (a model is a folder, or a "
		               "llama2.c .bin file)", path, map->len);
	const unsigned char *p = map->data;
	int32_t v[7];
	if ((uint32_t)rd32(p) == L2C_MAGIC) {
		if (map->len < 256)
			return gb_fail(err, "%s: llama2.c header cut short (%zu of 256 bytes)", path, map->len);
		h->version = rd32(p + 4);
		if (h->version != 1 && h->version != 2)
			return gb_fail(err, "%s: llama2.c checkpoint version %d; glassbox reads the legacy layout, version "
			               "1 (float32) and version 2 (int8 Q8_0)", path, h->version);
		for (int i = 0; i < 7; i++)
			v[i] = rd32(p + 8 + 4 * i);
		if (p[36] > 1)
			return gb_fail(err, "%s: llama2.c header: the shared-classifier flag is %d (must be 0 or 1)", path, p[36]);
		h->shared = p[36];
		if (h->version == 2)
			h->group_size = rd32(p + 37);
		h->data = 256;
		if (v[5] <= 0)
			return gb_fail(err, "%s: llama2.c header: vocab_size %d must be positive", path, v[5]);
	} else {
		for (int i = 0; i < 7; i++)
			v[i] = rd32(p + 4 * i);
		h->shared = v[5] > 0;
		if (v[5] < 0 && v[5] != INT32_MIN)
			v[5] = -v[5];
		h->data = 28;
	}
	static const char *const field[7] = { "dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size",
	                                      "seq_len" };
	for (int i = 0; i < 7; i++)
		if (v[i] <= 0)
			return gb_fail(err, "%s: not a llama2.c checkpoint (%s%s is %d; a model is a folder, or a llama2.c .bin "
			               "file)", path, h->version ? "" : "legacy header: ", field[i], v[i]);
	if (v[0] % v[3])
		return gb_fail(err, "%s: llama2.c header: dim %d is not a multiple of n_heads %d", path, v[0], v[3]);
	gb_config_defaults(c, GB_FAM_LLAMA);
	c->d_model = v[0];
	c->d_ffn = v[1];
	c->n_layer = v[2];
	c->n_head = v[3];
	c->n_kv_head = v[4];
	c->vocab = v[5];
	c->n_ctx = v[6];
	c->d_head = v[0] / v[3];
	c->norm_eps = L2C_EPS;
	c->rope_theta = L2C_THETA;
	c->rope_pairs = GB_ROPE_ADJACENT;
	c->tied = h->shared;
	c->bos_id = c->vocab > 1 ? 1 : -1; /* llama2.c's tokenizer: 0 <unk>, 1 <s>, 2 </s> */
	c->eos_id = c->vocab > 2 ? 2 : -1;
	if (gb_config_check(c, path, err))
		return -1;
	int kinds[16], nk = order(h->version, h->shared, kinds);
	if (h->version == 2) {
		if (h->group_size <= 0)
			return gb_fail(err, "%s: llama2.c version 2 header: group size %d must be positive", path, h->group_size);
		for (int i = 0; i < nk; i++)
			if (!is_norm(kinds[i]) && count(kinds[i], c) % (uint64_t)h->group_size) {
				char name[96];
				param_name(name, sizeof name, kinds[i], 0);
				return gb_fail(err, "%s: llama2.c version 2: %s has %llu values, not a multiple of the group size %d",
				               path, name, (unsigned long long)count(kinds[i], c), h->group_size);
			}
	}
	uint64_t want = h->data;
	for (int i = 0; i < nk; i++)
		want += bytes_of(kinds[i], c, h->version, h->group_size) * (per_layer(kinds[i]) ? (uint64_t)c->n_layer : 1);
	if (want != map->len)
		return gb_fail(err, "%s: %zu bytes, but a llama2.c %s checkpoint of these sizes (dim %d, hidden %d, %d layers, "
		               "%d/%d heads, vocab %d%s, seq_len %d) has %llu", path, map->len,
		               h->version == 0 ? "legacy" : h->version == 1 ? "version 1" : "version 2", c->d_model, c->d_ffn,
		               c->n_layer, c->n_head, c->n_kv_head, c->vocab, h->shared ? " shared" : " unshared", c->n_ctx,
		               (unsigned long long)want);
	return 0;
}

int gb_llama2c_bind(gb_model *m, const gb_l2c_header *h, const char *path, gb_err *err)
{
	const gb_config *c = &m->cfg;
	int kinds[16], nk = order(h->version, h->shared, kinds);
	size_t need = 0;
	/* Q8_0 matrices are dequantized into owned memory; float32 ones are read in place, or
	 * copied there on request (gb_weights_copy: huge pages) */
	size_t mats = 0;
	for (int i = 0; i < nk; i++)
		if (!is_norm(kinds[i]) && kinds[i] != FREQ)
			mats += gb_weights_slot((size_t)count(kinds[i], c)) * (per_layer(kinds[i]) ? (size_t)c->n_layer : 1);
	int copy = h->version != 2 && gb_weights_copy() == 1;
	if (h->version == 2 || copy)
		need = mats;
	if (need && !(m->owned = gb_weights_alloc(need)))
		return gb_fail(err, "%s: out of memory for %zu dequantized weights", path, need);
	float *dst = m->owned;
	size_t off = h->data;
	char name[96];
	for (int i = 0; i < nk; i++) {
		int k = kinds[i];
		for (int l = 0; l < (per_layer(k) ? c->n_layer : 1); l++) {
			const unsigned char *src = m->map.data + off;
			off += (size_t)bytes_of(k, c, h->version, h->group_size);
			if (k == FREQ) { /* run.c skips them; kept so that an export is byte-identical */
				m->l2c_freqs = (const float *)src;
				continue;
			}
			param_name(name, sizeof name, k, l);
			gb_param *p = gb_model_param(m, name);
			if (!p || p->n != count(k, c))
				return gb_fail(err, "%s: internal error: no parameter %s of %llu values", path, name,
				               (unsigned long long)count(k, c));
			if (h->version == 2 && !is_norm(k)) {
				const int8_t *q = (const int8_t *)src;
				const unsigned char *s = src + p->n;
				size_t gs = (size_t)h->group_size;
				for (size_t g = 0; g < p->n / gs; g++) {
					float scale;
					memcpy(&scale, s + 4 * g, 4);
					for (size_t j = g * gs; j < (g + 1) * gs; j++)
						dst[j] = q[j] * scale; /* as runq.c's dequantize */
				}
				p->data = dst;
				p->q8 = q; /* written back as it is (gb_llama2c_write) */
				dst += gb_weights_slot(p->n);
			} else if (copy && !is_norm(k)) {
				gb_map_copy(&m->map, dst, src, p->n * sizeof(float));
				p->data = dst;
				dst += gb_weights_slot(p->n);
			} else {
				p->data = (float *)src; /* 4-aligned: the map is page-aligned, offsets multiples of 4 */
			}
		}
	}
	for (int i = 0; i < m->n_params; i++) {
		const gb_param *p = &m->params[i];
		for (size_t k = 0; k < p->n; k++)
			if (!isfinite(p->data[k]))
				return gb_fail(err, "%s: tensor %s holds %s at element %zu", path, p->name,
				               isnan(p->data[k]) ? "NaN" : "an infinite value", k);
	}
	m->l2c_group = h->version == 2 ? h->group_size : 0;
	if (h->version == 2)
		snprintf(m->load_note, sizeof m->load_note, "llama2.c version 2: int8 Q8_0 weights (groups of %d) dequantized "
		         "to float32 on load (runq.c also quantizes activations; glassbox computes in float32)", h->group_size);
	else
		snprintf(m->load_note, sizeof m->load_note, "llama2.c %s checkpoint, float32 %s%s",
		         h->version ? "version 1" : "legacy (run.c's)",
		         copy ? "matrices copied from the file into glassbox's memory (GLASSBOX_WEIGHTS=copy), "
		                "norms in place" : "in place",
		         h->version ? "" : "; its unused freq_cis skipped");
	return 0;
}

/* What llama2.c's format cannot say about m, or NULL. */
static const char *unfit(const gb_config *c)
{
	if (c->family != GB_FAM_LLAMA || c->encdec)
		return "it is not a Llama-family decoder";
	if (c->norm != GB_NORM_RMS || !c->prenorm || !c->final_norm || c->textbook_ln)
		return "its norms are not pre-norm RMSNorm with a final norm";
	if (c->norm_eps != L2C_EPS)
		return "its RMSNorm epsilon is not 1e-5";
	if (c->pos != GB_POS_ROPE || c->rope_theta != L2C_THETA || c->rope_scale != GB_ROPE_SCALE_NONE)
		return "its positions are not RoPE with theta 10000 (unscaled)";
	if (c->ffn != GB_FFN_GATED || c->act != GB_ACT_SILU)
		return "its FFN is not SwiGLU";
	if (c->bias || c->qkv_bias || c->ffn_bias)
		return "it has biases";
	if (c->d_head * c->n_head != c->d_model)
		return "its head width is not dim / n_heads";
	if (c->scale_embed || c->window)
		return "it scales embeddings or uses a local window";
	if (c->attn_kind != GB_ATTN_SOFTMAX || c->n_experts)
		return c->n_experts ? "it has a mixture of experts" : "its attention is linear";
	return NULL;
}

/* A rotate-half model's q or k projection (heads of E rows of `in` floats) with each head's
 * rows reordered for adjacent pairs: row 2i is row i, row 2i + 1 is row i + E/2. RoPE then
 * turns the same angle on the same two numbers, and q . k is the same sum reordered, so the
 * llama2.c model computes what this one does (as Meta's and Hugging Face's conversions do).
 * Copies into out (p->n floats). */
static void to_adjacent(float *out, const gb_param *p, int E)
{
	int rows = p->shape[0], in = p->shape[1];
	for (int r = 0; r < rows; r++) {
		int h = r / E, j = r % E, src = h * E + (j % 2 ? j / 2 + E / 2 : j / 2);
		memcpy(out + (size_t)r * in, p->data + (size_t)src * in, sizeof(float) * (size_t)in);
	}
}

/* export.py's quantize_q80, in float32 as torch computes it: per group of gs values, scale =
 * max|w| / 127, q = round(w / scale) with ties to even (torch.round; rintf in the default
 * rounding mode). A group of zeros has scale 0 and q 0 (torch divides 0 by 0 there and casts
 * the NaN to int8, which gives 0 on x86; C must not convert a NaN). */
static void quantize_q80(const float *w, size_t n, size_t gs, int8_t *q, float *scale)
{
	for (size_t g = 0; g < n / gs; g++) {
		float mx = 0;
		for (size_t j = g * gs; j < (g + 1) * gs; j++)
			mx = fabsf(w[j]) > mx ? fabsf(w[j]) : mx;
		float s = mx / 127.0f;
		scale[g] = s;
		for (size_t j = g * gs; j < (g + 1) * gs; j++)
			q[j] = s == 0 ? 0 : (int8_t)rintf(w[j] / s);
	}
}

/* Whether p still holds exactly the Q8_0 values it was loaded from (p->q8, scales after them). */
static int q8_intact(const gb_param *p, size_t gs)
{
	if (!p->q8 || !gs || p->n % gs)
		return 0;
	const unsigned char *sc = (const unsigned char *)p->q8 + p->n;
	for (size_t g = 0; g < p->n / gs; g++) {
		float s;
		memcpy(&s, sc + 4 * g, 4);
		for (size_t j = g * gs; j < (g + 1) * gs; j++)
			if (p->q8[j] * s != p->data[j])
				return 0;
	}
	return 1;
}

/* Writes one tensor of kind k: float32, or Q8_0 (int8 values, then a float32 scale per group).
 * tmp holds 3 n + 1 floats of scratch. */
static void write_tensor(FILE *f, const gb_param *p, int k, const gb_config *c, int version, size_t gs, float *tmp)
{
	const float *w = p->data;
	if (version == 2 && !is_norm(k) && c->rope_pairs == GB_ROPE_ADJACENT && q8_intact(p, gs)) {
		/* as loaded: re-quantizing q x scale can move a scale by one unit in the last place */
		fwrite(p->q8, 1, p->n + 4 * (p->n / gs), f);
		return;
	}
	if ((k == WQ || k == WK) && c->rope_pairs == GB_ROPE_HALF) {
		to_adjacent(tmp, p, c->d_head);
		w = tmp;
	}
	if (version != 2 || is_norm(k)) {
		fwrite(w, sizeof(float), p->n, f); /* the host is little-endian, as the format */
		return;
	}
	int8_t *q = (int8_t *)(tmp + p->n);
	float *scale = tmp + p->n + (p->n + 3) / 4;
	quantize_q80(w, p->n, gs, q, scale);
	fwrite(q, 1, p->n, f);
	fwrite(scale, sizeof(float), p->n / gs, f);
}

/* The group size of a version 2 file: the loaded file's when m still holds its Q8_0 values (a
 * round trip), else export.py's: 64, halved until it divides dim. */
static int group_size(const gb_model *m)
{
	for (int i = 0; i < m->n_params && m->l2c_group > 0; i++)
		if (m->params[i].q8 && m->params[i].n % (size_t)m->l2c_group == 0)
			return m->l2c_group;
	int gs = 64;
	while (m->cfg.d_model % gs)
		gs /= 2;
	return gs;
}

int gb_llama2c_write(const gb_model *m, const char *path, int version, gb_err *err)
{
	const gb_config *c = &m->cfg;
	const char *why = unfit(c);
	if (why)
		return gb_fail(err, "%s: llama2.c cannot hold this model: %s", path, why);
	if (version < 0 || version > 2)
		return gb_fail(err, "%s: glassbox writes llama2.c version 0 (legacy), 1 (float32) or 2 (Q8_0), not %d", path,
		               version);
	int kinds[16], nk = order(version, c->tied, kinds), gs = version == 2 ? group_size(m) : 0;
	char name[96];
	size_t most = 0;
	for (int i = 0; i < nk; i++) {
		if (kinds[i] == FREQ)
			continue;
		most = count(kinds[i], c) > most ? (size_t)count(kinds[i], c) : most;
		if (gs && !is_norm(kinds[i]) && count(kinds[i], c) % (uint64_t)gs) {
			param_name(name, sizeof name, kinds[i], 0);
			return gb_fail(err, "%s: llama2.c version 2: %s has %llu values, not a multiple of the group size %d", path,
			               name, (unsigned long long)count(kinds[i], c), gs);
		}
	}
	/* scratch for one tensor: its reordered floats, then its int8 values and scales */
	float *tmp = malloc(sizeof(float) * (3 * most + 1));
	if (!tmp)
		return gb_fail(err, "%s: out of memory", path);
	gb_file w;
	if (gb_file_begin(&w, path, err)) {
		free(tmp);
		return -1;
	}
	int32_t v[7] = { c->d_model, c->d_ffn, c->n_layer, c->n_head, c->n_kv_head, c->tied ? c->vocab : -c->vocab,
	                 c->n_ctx };
	if (version == 0) {
		fwrite(v, 4, 7, w.f);
	} else {
		unsigned char hd[256] = { 0 };
		uint32_t magic = L2C_MAGIC;
		int32_t ver = version, g = gs;
		v[5] = c->vocab;
		memcpy(hd, &magic, 4);
		memcpy(hd + 4, &ver, 4);
		memcpy(hd + 8, v, 28);
		hd[36] = (unsigned char)c->tied;
		if (version == 2)
			memcpy(hd + 37, &g, 4);
		fwrite(hd, 1, 256, w.f);
	}
	for (int i = 0; i < nk; i++) {
		int k = kinds[i];
		if (k == FREQ) {
			size_t half = (size_t)c->d_head / 2, n = (size_t)c->n_ctx * half;
			if (m->l2c_freqs) {
				fwrite(m->l2c_freqs, sizeof(float), 2 * n, w.f);
				continue;
			}
			for (int part = 0; part < 2; part++)
				for (int t = 0; t < c->n_ctx; t++)
					for (size_t f = 0; f < half; f++) {
						double a = t * pow((double)L2C_THETA, -2.0 * (double)f / c->d_head);
						float x = (float)(part ? sin(a) : cos(a));
						fwrite(&x, 4, 1, w.f);
					}
			continue;
		}
		for (int l = 0; l < (per_layer(k) ? c->n_layer : 1); l++) {
			param_name(name, sizeof name, k, l);
			const gb_param *p = gb_model_param(m, name);
			if (!p || !p->data) {
				gb_file_abort(&w);
				free(tmp);
				return gb_fail(err, "%s: internal error: the model has no %s in float32", path, name);
			}
			write_tensor(w.f, p, k, c, version, (size_t)gs, tmp);
		}
	}
	free(tmp);
	return gb_file_commit(&w, err);
}
