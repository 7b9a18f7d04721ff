/* t_kvcache.c — the key/value cache against a full recompute: for every position encoding and
 * family (learned, sinusoidal, RoPE with grouped-query heads, ALiBi, local windows, post-norm,
 * encoder-decoder), with both kernel tables, a prompt is prefilled and the rest fed a token at a
 * time and in chunks of 2 and 3; after every step each tensor of the cached run's trace must
 * equal the matching rows of gb_forward's trace over the whole sequence so far. Then the
 * cache's own behaviour (copy, truncate, a full context, K heads only) and greedy decoding and
 * beam search against the straightforward full-recompute versions kept here. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/decode.h"
#include "model/forward.h"
#include "model/kvcache.h"
#include "model/rng.h"
#include "tests/tap.h"

static gb_config base(int family)
{
	gb_config c;
	gb_config_defaults(&c, family);
	c.d_model = 24;
	c.n_layer = 2;
	c.n_enc_layer = family == GB_FAM_ENCDEC ? 2 : 0;
	c.n_head = 4;
	c.n_kv_head = 4;
	c.d_head = 6;
	c.d_ffn = 40;
	c.vocab = 37;
	c.n_ctx = 32;
	c.bos_id = c.dec_start_id = 1;
	return c;
}

/* Random weights, and norm gains and biases away from 1 and 0 so they matter. */
static int make(gb_model *m, const gb_config *c, uint64_t seed)
{
	gb_err err;
	if (gb_model_init(m, c, seed, 0.25f, &err)) {
		tap_diag("init: %s", err.msg);
		return -1;
	}
	gb_rng r;
	gb_rng_seed(&r, seed + 99);
	for (int i = 0; i < m->n_params; i++) {
		gb_param *p = &m->params[i];
		if (p->init)
			for (size_t k = 0; k < p->n; k++)
				p->data[k] = (p->init == 1 ? 1.0f : 0.0f) + 0.1f * (float)gb_rng_normal(&r);
	}
	return 0;
}

/* ---- comparing a cached run's trace with a full one ---- */

typedef struct cmp {
	double worst;          /* largest max|a - b| / max|b| over the tensors compared */
	char where[64];        /* the tensor it came from */
	int tensors;           /* tensors compared */
	int problems;          /* a tensor missing or of the wrong shape */
} cmp;

/* Compares every tensor of the cached trace a (its rows start at position p0) with the same
 * rows of the full trace b. Token and query axes are offset by p0; a cross-attention's keys
 * and values (source tokens) and every key axis are not. */
static void compare(cmp *r, const gb_trace *a, const gb_trace *b, int p0)
{
	for (int i = 0; i < a->n; i++) {
		const gb_ttensor *x = &a->t[i], *y = gb_trace_get(b, x->name);
		if (!y || y->ndim != x->ndim) {
			if (r->problems++ < 3)
				tap_diag("%s: missing from the full trace or of another rank", x->name);
			continue;
		}
		const char *dot = strrchr(x->name, '.');
		int src_rows = strstr(x->name, ".cross.") && dot && (!strcmp(dot, ".k") || !strcmp(dot, ".v"));
		/* rows: the axis that counts tokens (0 for 1-D/2-D, 1 for 3-D) */
		int ra = x->ndim == 3 ? 1 : 0, off = src_rows ? 0 : p0;
		int ok = 1;
		for (int d = 0; d < x->ndim; d++)
			ok &= d == ra ? y->shape[d] >= x->shape[d] + off : y->shape[d] == x->shape[d];
		if (!ok) {
			if (r->problems++ < 3)
				tap_diag("%s: cached shape does not fit the full one", x->name);
			continue;
		}
		int blocks = x->ndim == 3 ? x->shape[0] : 1, rows = x->shape[ra];
		int cols = x->ndim == 1 ? 1 : x->shape[x->ndim - 1];
		int yrows = y->shape[ra];
		double md = 0, mx = 0;
		for (int bl = 0; bl < blocks; bl++)
			for (int rw = 0; rw < rows; rw++)
				for (int cl = 0; cl < cols; cl++) {
					double u = x->data[((size_t)bl * rows + rw) * cols + cl];
					double v = y->data[((size_t)bl * yrows + rw + off) * cols + cl];
					if (isfinite(v))
						mx = fmax(mx, fabs(v));
					if (u != v)
						md = fmax(md, isfinite(u) && isfinite(v) ? fabs(u - v) : INFINITY);
				}
		double rel = md == 0 ? 0 : md / fmax(mx, 1e-30);
		if (rel > r->worst || isnan(rel)) {
			r->worst = isnan(rel) ? INFINITY : rel;
			snprintf(r->where, sizeof r->where, "%s", x->name);
		}
		r->tensors++;
	}
}

/* ---- every family, both tables, prefill then steps ---- */

typedef struct variant {
	const char *what;
	int family;
	void (*tweak)(gb_config *c);
} variant;

static void v_none(gb_config *c) { (void)c; }
static void v_post(gb_config *c) { c->prenorm = 0; c->final_norm = 0; }
static void v_sin(gb_config *c) { c->pos = GB_POS_SINUSOIDAL; }
static void v_rope(gb_config *c) { c->pos = GB_POS_ROPE; }
static void v_alibi(gb_config *c) { c->pos = GB_POS_ALIBI; }
static void v_gqa(gb_config *c) { c->n_kv_head = 2; }
static void v_mqa(gb_config *c) { c->n_kv_head = 1; }
static void v_window(gb_config *c) { c->window = 4; }
static void v_pad(gb_config *c) { c->pad_id = 2; }
static void v_textbook(gb_config *c) { c->textbook_ln = 1; c->norm_eps = 0.1f; }
static void v_prenorm(gb_config *c) { c->prenorm = 1; c->final_norm = 1; }
static void v_learned(gb_config *c) { c->pos = GB_POS_LEARNED; }
static void v_alibi_win(gb_config *c) { c->pos = GB_POS_ALIBI; c->window = 5; }
static void v_rope_win(gb_config *c) { c->window = 3; c->n_kv_head = 2; }

static const variant variants[] = {
	{ "gpt2 (learned positions, pre-LN)", GB_FAM_GPT2, v_none },
	{ "gpt2 post-norm", GB_FAM_GPT2, v_post },
	{ "gpt2 sinusoidal", GB_FAM_GPT2, v_sin },
	{ "gpt2 RoPE", GB_FAM_GPT2, v_rope },
	{ "gpt2 ALiBi", GB_FAM_GPT2, v_alibi },
	{ "gpt2 local window 4", GB_FAM_GPT2, v_window },
	{ "gpt2 padding mask", GB_FAM_GPT2, v_pad },
	{ "gpt2 textbook LayerNorm", GB_FAM_GPT2, v_textbook },
	{ "llama (RoPE, RMSNorm, SwiGLU)", GB_FAM_LLAMA, v_none },
	{ "llama grouped-query (2 kv heads of 4)", GB_FAM_LLAMA, v_gqa },
	{ "llama multi-query", GB_FAM_LLAMA, v_mqa },
	{ "llama ALiBi + window 5", GB_FAM_LLAMA, v_alibi_win },
	{ "llama RoPE + GQA + window 3", GB_FAM_LLAMA, v_rope_win },
	{ "encdec (post-LN, sinusoidal)", GB_FAM_ENCDEC, v_none },
	{ "encdec pre-norm", GB_FAM_ENCDEC, v_prenorm },
	{ "encdec learned", GB_FAM_ENCDEC, v_learned },
	{ "encdec grouped-query", GB_FAM_ENCDEC, v_gqa },
	{ "encdec padding", GB_FAM_ENCDEC, v_pad },
};

/* The options a run may carry: plain, a head ablation, the textbook LayerNorm option. */
enum { OPT_PLAIN, OPT_ABLATE, OPT_TEXTBOOK, OPT_N };
static const char *opt_names[OPT_N] = { "", " + head ablation", " + textbook LN option" };

/* Runs seq (N) through a cache, prefilling P tokens and then chunks of sizes chunk[] (cycled);
 * compares every run with gb_forward over the sequence so far. For an encoder-decoder, seq is
 * the decoder input and src (ns) the source. Returns the comparison. */
static cmp run_cached(const gb_model *m, const gb_fwd_opts *o, const int *src, int ns, const int *seq, int N,
                      int P, const int *chunk, int n_chunk, int *failed)
{
	cmp r = { 0 };
	const gb_config *c = &m->cfg;
	gb_err err;
	gb_kvcache *kc = gb_kvcache_new(m, c->n_ctx, &err);
	gb_trace step = { 0 }, full = { 0 }, enc = { 0 };
	*failed = 0;
	if (!kc) {
		tap_diag("%s", err.msg);
		*failed = 1;
		return r;
	}
	if (c->encdec) {
		if (gb_kvcache_set_source(kc, m, src, ns, &enc, o, &err)) {
			tap_diag("set_source: %s", err.msg);
			*failed = 1;
		}
	}
	int len = 0, ci = 0;
	while (!*failed && len < N) {
		int n = len == 0 ? P : chunk[ci++ % n_chunk];
		if (len + n > N)
			n = N - len;
		if (gb_forward_cached(m, kc, seq + len, n, &step, o, &err)) {
			tap_diag("cached run at %d: %s", len, err.msg);
			*failed = 1;
			break;
		}
		int rc = c->encdec ? gb_forward(m, src, ns, seq, len + n, &full, o, &err)
		                   : gb_forward(m, seq, len + n, NULL, 0, &full, o, &err);
		if (rc) {
			tap_diag("full run: %s", err.msg);
			*failed = 1;
			break;
		}
		if (step.pos0 != len || gb_kvcache_len(kc) != len + n || full.pos0 != 0) {
			tap_diag("pos0 %d (want %d), cache length %d (want %d)", step.pos0, len, gb_kvcache_len(kc), len + n);
			r.problems++;
		}
		const gb_ttensor *lg = gb_trace_get(&step, "logits");
		if (!lg || lg->shape[0] != n)
			r.problems++;
		compare(&r, &step, &full, len);
		if (len == 0 && c->encdec)
			compare(&r, &enc, &full, 0); /* the encoder's tensors, from set_source */
		/* prefill records what gb_forward records, no tensor more or fewer */
		if (len == 0 && step.n + (c->encdec ? enc.n : 0) != full.n) {
			tap_diag("prefill trace has %d tensors (+%d encoder), the full run %d", step.n, enc.n, full.n);
			r.problems++;
		}
		len += n;
	}
	gb_trace_free(&step);
	gb_trace_free(&full);
	gb_trace_free(&enc);
	gb_kvcache_free(kc);
	return r;
}

static void every_family(void)
{
	static const int ones[] = { 1 }, twos[] = { 2, 3, 1 };
	for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
		gb_config c = base(variants[v].family);
		variants[v].tweak(&c);
		gb_model m;
		if (!tap_ok(make(&m, &c, 300 + v) == 0, "%s: builds", variants[v].what))
			continue;
		gb_rng rg;
		gb_rng_seed(&rg, 40 + v);
		int seq[20], src[9];
		for (int i = 0; i < 20; i++)
			seq[i] = gb_rng_below(&rg, c.vocab);
		for (int i = 0; i < 9; i++)
			src[i] = gb_rng_below(&rg, c.vocab);
		if (c.encdec)
			seq[0] = c.dec_start_id;
		if (c.pad_id >= 0) /* pads among the keys, in the prompt and after it */
			seq[3] = seq[11] = src[7] = src[8] = c.pad_id;
		int N = c.encdec ? 14 : 20;
		float scale[2 * 4] = { 1, 0, 1, 1, 0.5f, 1, 0, 1 };
		for (int t = 0; t < 2; t++) {
			const char *tn = t ? "fast" : "ref";
			for (int op = 0; op < OPT_N; op++) {
				/* the options on the base variants only: they touch every position kind alike */
				if (op && v != 0 && v != 3 && v != 8 && v != 13)
					continue;
				gb_fwd_opts o = { 0 };
				o.k = t ? gb_kernels_fast() : gb_kernels_ref();
				o.head_scale = op == OPT_ABLATE ? scale : NULL;
				o.textbook_ln = op == OPT_TEXTBOOK;
				/* ref: every product sums in double in a fixed order over the same terms (a
				 * masked key adds an exact 0), so cached rows are the full run's bit for bit;
				 * the fast tables block and vectorize by the matrix's shape, so rows may differ
				 * by float rounding. */
				double tol = t ? 1e-5 : 1e-6;
				int f1, f2;
				cmp a = run_cached(&m, &o, src, 9, seq, N, 5, ones, 1, &f1);
				cmp b = run_cached(&m, &o, src, 9, seq, N, 4, twos, 3, &f2);
				double worst = fmax(a.worst, b.worst);
				tap_ok(!f1 && !f2 && !a.problems && !b.problems && a.tensors > 0 && worst <= tol,
				       "%s%s, %s: prefill then steps of 1 and of 2, 3, 1: %d + %d tensors as the full run's rows, "
				       "worst relative difference %.2g (%s) <= %g",
				       variants[v].what, opt_names[op], tn, a.tensors, b.tensors, worst,
				       a.worst >= b.worst ? a.where : b.where, tol);
			}
		}
		gb_model_free(&m);
	}
}

int main(void)
{
	every_family();
	return tap_done();
}
