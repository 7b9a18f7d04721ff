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
#include "tests/model_fixture.h"
#include "tests/tap.h"

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
		/* rows: the axis that counts tokens (1 for 3-D and for (head, query); else 0) */
		int per_head = x->axes[0] == GB_AX_HEAD || x->axes[0] == GB_AX_KV_HEAD;
		int ra = x->ndim == 3 || (x->ndim == 2 && per_head) ? 1 : 0, off = src_rows ? 0 : p0;
		int ok = 1;
		for (int d = 0; d < x->ndim; d++)
			ok &= d == ra ? y->shape[d] >= x->shape[d] + off : y->shape[d] == x->shape[d];
		if (!ok) {
			if (r->problems++ < 3)
				tap_diag("%s: cached shape does not fit the full one", x->name);
			continue;
		}
		int blocks = ra == 1 ? x->shape[0] : 1, rows = x->shape[ra];
		int cols = ra == x->ndim - 1 ? 1 : x->shape[x->ndim - 1];
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

/* ---- the cache itself ---- */

/* max |a - b| over the last row of two traces' logits. */
static double last_row_diff(const gb_trace *a, const gb_trace *b)
{
	int va, vb;
	const float *x = gb_last_logits(a, &va), *y = gb_last_logits(b, &vb);
	if (va != vb)
		return INFINITY;
	double md = 0;
	for (int v = 0; v < va; v++)
		md = fmax(md, fabs((double)x[v] - y[v]));
	return md;
}

static void cache_behaviour(void)
{
	gb_config c = base(GB_FAM_LLAMA);
	c.n_kv_head = 2; /* grouped-query: 4 query heads share 2 key/value heads */
	gb_model m;
	if (make(&m, &c, 21))
		return;
	gb_fwd_opts o = { 0 };
	o.k = gb_kernels_ref();
	gb_err err = { "" };
	int seq[12] = { 3, 7, 11, 2, 30, 5, 9, 14, 21, 8, 1, 6 };
	gb_trace st = { 0 }, full = { 0 };

	/* GQA: the cache holds the 2 key heads, and they are the full run's keys after RoPE. */
	gb_kvcache *a = gb_kvcache_new(&m, 16, &err);
	tap_ok(a && a->n_kv_head == 2 && a->cap == 16 && gb_kvcache_len(a) == 0,
	       "a grouped-query model's cache has 2 kv heads (of 4 query heads), capacity 16, empty");
	gb_forward_cached(&m, a, seq, 4, &st, &o, &err);
	gb_forward_cached(&m, a, seq + 4, 2, &st, &o, &err);
	gb_forward(&m, seq, 6, NULL, 0, &full, &o, &err);
	double wk = 0;
	for (int l = 0; l < 2; l++) {
		char kn[32], vn[32];
		snprintf(kn, sizeof kn, "L%d.attn.k", l + 1);
		snprintf(vn, sizeof vn, "L%d.attn.v", l + 1);
		const gb_ttensor *k = gb_trace_get(&full, kn), *v = gb_trace_get(&full, vn);
		for (int h = 0; h < 2; h++)
			for (int i = 0; i < 6 * 6; i++) {
				wk = fmax(wk, fabs(gb_kvcache_k(a, l, h)[i] - k->data[h * 6 * 6 + i]));
				wk = fmax(wk, fabs(gb_kvcache_v(a, l, h)[i] - v->data[h * 6 * 6 + i]));
			}
	}
	tap_ok(wk == 0, "the cache's 2 key and value heads of both layers are the full run's (rotated) k and v (worst %.2g)", wk);

	/* copy: two continuations of one prefix, each equal to its own full run */
	gb_kvcache *b = gb_kvcache_new(&m, 16, &err);
	int rc = gb_kvcache_copy(b, a, &err);
	tap_ok(rc == 0 && gb_kvcache_len(b) == 6, "copy: the copy has the 6 positions");
	int x[7], y[7];
	memcpy(x, seq, sizeof(int) * 6);
	memcpy(y, seq, sizeof(int) * 6);
	x[6] = 13, y[6] = 27;
	gb_trace sx = { 0 }, sy = { 0 }, fx = { 0 }, fy = { 0 };
	gb_forward_cached(&m, a, x + 6, 1, &sx, &o, &err);
	gb_forward_cached(&m, b, y + 6, 1, &sy, &o, &err);
	gb_forward(&m, x, 7, NULL, 0, &fx, &o, &err);
	gb_forward(&m, y, 7, NULL, 0, &fy, &o, &err);
	tap_ok(last_row_diff(&sx, &fx) == 0 && last_row_diff(&sy, &fy) == 0 && last_row_diff(&sx, &sy) > 0,
	       "copy: the original and the copy continue independently, each as its own full run");
	gb_kvcache *small = gb_kvcache_new(&m, 4, &err);
	tap_ok(small && gb_kvcache_copy(small, a, &err) == -1 && strstr(err.msg, "cannot take a copy of 7"),
	       "copy into a cache of 4 positions: error (%s)", err.msg);

	/* truncate: back to 3 positions, then another continuation */
	gb_kvcache_truncate(a, 3);
	int z[5] = { 3, 7, 11, 17, 19 };
	gb_forward_cached(&m, a, z + 3, 2, &sx, &o, &err);
	gb_forward(&m, z, 5, NULL, 0, &fx, &o, &err);
	tap_ok(gb_kvcache_len(a) == 5 && sx.pos0 == 3 && last_row_diff(&sx, &fx) == 0,
	       "truncate to 3, then 2 tokens: positions 3-4 as a full run of the new text");
	gb_kvcache_truncate(a, 99);
	tap_ok(gb_kvcache_len(a) == 5, "truncate past the length changes nothing");

	/* a full context: a clear error, the cache unchanged */
	gb_kvcache *f8 = gb_kvcache_new(&m, 8, &err);
	rc = gb_forward_cached(&m, f8, seq, 6, &st, &o, &err);
	rc |= gb_forward_cached(&m, f8, seq + 6, 3, &st, &o, &err) != -1;
	tap_ok(rc == 0 && strstr(err.msg, "context is full") && gb_kvcache_len(f8) == 6,
	       "3 tokens after 6 in a cache of 8: error (%s), 6 positions kept", err.msg);
	rc = gb_forward_cached(&m, f8, seq + 6, 2, &st, &o, &err);
	gb_forward(&m, seq, 8, NULL, 0, &full, &o, &err);
	tap_ok(rc == 0 && gb_kvcache_len(f8) == 8 && last_row_diff(&st, &full) == 0,
	       "2 tokens after the refusal fill it to 8, as the full run");
	tap_ok(gb_forward_cached(&m, f8, seq, 1, &st, &o, &err) == -1 && strstr(err.msg, "context is full"),
	       "a 9th token: error (%s)", err.msg);
	int bad = 37;
	gb_kvcache_truncate(f8, 2);
	tap_ok(gb_forward_cached(&m, f8, &bad, 1, &st, &o, &err) == -1 && strstr(err.msg, "outside the vocabulary") &&
	       gb_kvcache_len(f8) == 2, "an id outside the vocabulary: error (%s), the cache unchanged", err.msg);
	tap_ok(gb_forward_cached(&m, f8, seq, 0, &st, &o, &err) == -1, "no tokens: error (%s)", err.msg);
	tap_ok(!gb_kvcache_new(&m, 33, &err) && strstr(err.msg, "1 to 32"), "a cache longer than the context: error (%s)",
	       err.msg);

	/* no_mask (the lesson without the causal mask): a prefill is gb_forward's run with it */
	o.no_mask = 1;
	gb_kvcache_truncate(b, 0);
	gb_forward_cached(&m, b, seq, 7, &st, &o, &err);
	gb_forward(&m, seq, 7, NULL, 0, &full, &o, &err);
	cmp nm = { 0 };
	compare(&nm, &st, &full, 0);
	const gb_ttensor *nw = gb_trace_get(&st, "L1.attn.weights");
	tap_ok(nm.tensors == full.n && nm.worst == 0 && !nm.problems && nw && nw->data[1] > 0,
	       "no_mask: a prefill is gb_forward's unmasked run (%d tensors, worst %.2g); token 1 sees token 2",
	       nm.tensors, nm.worst);
	o.no_mask = 0;

	/* a cache of another model's shape */
	gb_config c2 = base(GB_FAM_GPT2);
	gb_model m2;
	if (!make(&m2, &c2, 3)) {
		tap_ok(gb_forward_cached(&m2, b, seq, 1, &st, &o, &err) == -1 && strstr(err.msg, "another model"),
		       "a cache used with another model: error (%s)", err.msg);
		gb_kvcache *g = gb_kvcache_new(&m2, 8, &err);
		tap_ok(gb_kvcache_copy(g, b, &err) == -1, "copying between models of different shapes: error (%s)", err.msg);
		gb_kvcache_free(g);
		gb_model_free(&m2);
	}
	gb_kvcache_free(a);
	gb_kvcache_free(b);
	gb_kvcache_free(small);
	gb_kvcache_free(f8);
	gb_trace_free(&st);
	gb_trace_free(&full);
	gb_trace_free(&sx);
	gb_trace_free(&sy);
	gb_trace_free(&fx);
	gb_trace_free(&fy);
	gb_model_free(&m);

	/* encoder-decoder: the source travels with a copy; a new source restarts */
	c = base(GB_FAM_ENCDEC);
	if (make(&m, &c, 22))
		return;
	int src[6] = { 4, 9, 12, 20, 33, 8 }, src2[3] = { 5, 6, 7 }, tgt[4] = { 1, 14, 3, 25 };
	a = gb_kvcache_new(&m, 10, &err);
	b = gb_kvcache_new(&m, 10, &err);
	tap_ok(gb_forward_cached(&m, a, tgt, 1, &st, &o, &err) == -1 && strstr(err.msg, "no source"),
	       "encoder-decoder without a source: error (%s)", err.msg);
	gb_kvcache_set_source(a, &m, src, 6, NULL, &o, &err);
	gb_forward_cached(&m, a, tgt, 2, &st, &o, &err);
	rc = gb_kvcache_copy(b, a, &err);
	rc |= gb_forward_cached(&m, b, tgt + 2, 2, &st, &o, &err);
	gb_forward(&m, src, 6, tgt, 4, &full, &o, &err);
	tap_ok(rc == 0 && b->n_src == 6 && last_row_diff(&st, &full) == 0,
	       "encoder-decoder: a copy carries the source's cross keys; its steps match the full run");
	gb_kvcache_set_source(b, &m, src2, 3, NULL, &o, &err);
	tap_ok(gb_kvcache_len(b) == 0 && b->n_src == 3, "a new source empties the decoder's positions");
	gb_forward_cached(&m, b, tgt, 3, &st, &o, &err);
	gb_forward(&m, src2, 3, tgt, 3, &full, &o, &err);
	tap_ok(last_row_diff(&st, &full) == 0, "after a new source, steps match the full run on it");
	gb_kvcache_copy(b, a, &err); /* back to the first source: ck/cv copied again */
	gb_forward_cached(&m, b, tgt + 2, 1, &st, &o, &err);
	gb_forward(&m, src, 6, tgt, 3, &full, &o, &err);
	tap_ok(b->n_src == 6 && last_row_diff(&st, &full) == 0, "copying a cache of another source brings its cross keys");
	gb_kvcache_free(a);
	gb_kvcache_free(b);
	gb_trace_free(&st);
	gb_trace_free(&full);
	gb_model_free(&m);
}

/* ---- decoding against full recomputation ---- */

typedef struct rank_t {
	double p;
	int id;
} rank_t;

static int by_p(const void *a, const void *b)
{
	const rank_t *x = a, *y = b;
	if (x->p != y->p)
		return x->p > y->p ? -1 : 1;
	return x->id - y->id;
}

typedef struct fcand {
	gb_beam b;
	int order;
} fcand;

static int by_sc(const void *a, const void *b)
{
	const fcand *x = a, *y = b;
	if (x->b.score != y->b.score)
		return x->b.score > y->b.score ? -1 : 1;
	return x->order - y->order;
}

/* Beam search the straightforward way: every candidate's whole sequence through gb_forward,
 * every step. nb beams into out (k). */
static int beam_full(const gb_model *m, const gb_kernels *kt, const int *ids, int n, int k, int steps, int eos,
                     gb_beam *out, int *n_out)
{
	const gb_config *c = &m->cfg;
	int V = c->vocab, prefix = c->encdec ? 1 : n;
	if (prefix + steps > c->n_ctx)
		steps = c->n_ctx - prefix;
	gb_beam *beams = calloc((size_t)k, sizeof *beams);
	fcand *cand = calloc((size_t)k * k, sizeof *cand);
	int *seq = malloc(sizeof(int) * (size_t)(prefix + steps));
	rank_t *r = malloc(sizeof *r * (size_t)V);
	gb_trace tr = { 0 };
	gb_fwd_opts o = { 0 };
	o.k = kt;
	gb_err err;
	beams[0].ids = calloc((size_t)steps, sizeof(int));
	int nb = 1;
	for (int step = 0; step < steps; step++) {
		int nc = 0;
		for (int b = 0; b < nb; b++) {
			fcand *x = &cand[nc];
			if (beams[b].done) {
				x->b = beams[b];
				x->b.ids = malloc(sizeof(int) * (size_t)steps);
				memcpy(x->b.ids, beams[b].ids, sizeof(int) * (size_t)beams[b].n);
				x->order = nc++;
				continue;
			}
			if (c->encdec) {
				seq[0] = c->dec_start_id;
				memcpy(seq + 1, beams[b].ids, sizeof(int) * (size_t)beams[b].n);
				gb_forward(m, ids, n, seq, 1 + beams[b].n, &tr, &o, &err);
			} else {
				memcpy(seq, ids, sizeof(int) * (size_t)n);
				memcpy(seq + n, beams[b].ids, sizeof(int) * (size_t)beams[b].n);
				gb_forward(m, seq, n + beams[b].n, NULL, 0, &tr, &o, &err);
			}
			int vv;
			const float *row = gb_last_logits(&tr, &vv);
			double lz = gb_logsumexp(row, V);
			for (int v = 0; v < V; v++)
				r[v].p = row[v] - lz, r[v].id = v;
			qsort(r, (size_t)V, sizeof *r, by_p);
			for (int i = 0; i < k && i < V; i++) {
				x = &cand[nc];
				x->b.ids = malloc(sizeof(int) * (size_t)steps);
				memcpy(x->b.ids, beams[b].ids, sizeof(int) * (size_t)beams[b].n);
				x->b.n = beams[b].n + 1;
				x->b.ids[x->b.n - 1] = r[i].id;
				x->b.score = beams[b].score + r[i].p;
				x->b.done = r[i].id == eos;
				x->order = nc++;
			}
		}
		qsort(cand, (size_t)nc, sizeof *cand, by_sc);
		gb_beams_free(beams, nb);
		nb = nc < k ? nc : k;
		for (int i = 0; i < nc; i++) {
			if (i < nb)
				beams[i] = cand[i].b;
			else
				free(cand[i].b.ids);
		}
		int all = 1;
		for (int b = 0; b < nb; b++)
			all &= beams[b].done;
		if (all)
			break;
	}
	memcpy(out, beams, sizeof *beams * (size_t)nb);
	*n_out = nb;
	free(beams);
	free(cand);
	free(seq);
	free(r);
	gb_trace_free(&tr);
	return 0;
}

/* Greedy decoding of an encoder-decoder, the whole decoder input through gb_forward each step. */
static int greedy_full(const gb_model *m, const gb_fwd_opts *o, const int *src, int ns, int *tgt)
{
	const gb_config *c = &m->cfg;
	gb_trace tr = { 0 };
	gb_err err;
	int n = 0;
	tgt[n++] = c->dec_start_id;
	while (n < c->n_ctx) {
		gb_forward(m, src, ns, tgt, n, &tr, o, &err);
		int V;
		const float *row = gb_last_logits(&tr, &V);
		int best = 0;
		for (int v = 1; v < V; v++)
			if (row[v] > row[best])
				best = v;
		if (best == c->eos_id)
			break;
		tgt[n++] = best;
	}
	gb_trace_free(&tr);
	return n;
}

static void decoding(void)
{
	struct {
		const char *what;
		int family;
		void (*tweak)(gb_config *c);
	} ms[] = {
		{ "gpt2", GB_FAM_GPT2, v_none },
		{ "llama grouped-query", GB_FAM_LLAMA, v_gqa },
		{ "gpt2 ALiBi", GB_FAM_GPT2, v_alibi },
		{ "encdec", GB_FAM_ENCDEC, v_none },
	};
	for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
		gb_config c = base(ms[i].family);
		ms[i].tweak(&c);
		c.vocab = 12;  /* few tokens, so beams meet eos and share parents */
		c.eos_id = 2;
		c.n_ctx = 20;
		gb_model m;
		if (make(&m, &c, 500 + i))
			continue;
		int prompt[4] = { 5, 9, 3, 7 };
		for (int t = 0; t < 2; t++) {
			const gb_kernels *kt = t ? gb_kernels_fast() : gb_kernels_ref();
			const char *tn = t ? "fast" : "ref";
			int widths[3] = { 1, 3, 5 };
			for (int w = 0; w < 3; w++) {
				gb_beam a[5], b[5];
				int na = 0, nb = 0;
				gb_err err;
				int rc = gb_beam_search(&m, kt, prompt, 4, widths[w], 12, c.eos_id, NULL, NULL, a, &na, &err);
				beam_full(&m, kt, prompt, 4, widths[w], 12, c.eos_id, b, &nb);
				int same = rc == 0 && na == nb, ended = 0;
				double ds = 0;
				for (int j = 0; same && j < na; j++) {
					same &= a[j].n == b[j].n && a[j].done == b[j].done &&
					        !memcmp(a[j].ids, b[j].ids, sizeof(int) * (size_t)a[j].n);
					ds = fmax(ds, fabs(a[j].score - b[j].score));
					ended += a[j].done;
				}
				/* ref: the cached logits are the full run's bit for bit, so the scores too */
				tap_ok(same && ds <= (t ? 1e-4 : 0), "%s, %s: beam width %d gives the full recompute's %d beams "
				       "(%d ended with eos), scores within %.2g", ms[i].what, tn, widths[w], nb, ended, ds);
				gb_beams_free(a, na);
				gb_beams_free(b, nb);
			}
			if (c.encdec) {
				int src[7] = { 4, 8, 10, 3, 6, 11, 5 }, ta[20], tb[20], n_a = 0;
				gb_fwd_opts o = { 0 };
				o.k = kt;
				gb_trace tr = { 0 };
				gb_err err;
				int rc = gb_greedy_decode(&m, &o, src, 7, &tr, ta, &n_a, NULL, &err);
				int n_b = greedy_full(&m, &o, src, 7, tb);
				tap_ok(rc == 0 && n_a == n_b && !memcmp(ta, tb, sizeof(int) * (size_t)n_a) &&
				       tr.pos0 == (n_a == c.n_ctx ? n_a - 2 : n_a - 1),
				       "%s, %s: greedy decoding gives the full recompute's %d tokens", ms[i].what, tn, n_b);
				volatile sig_atomic_t stop = 1;
				rc = gb_greedy_decode(&m, &o, src, 7, &tr, ta, &n_a, &stop, &err);
				tap_ok(rc == 0 && n_a == 1, "%s, %s: a stop flag already set ends greedy decoding at the start token",
				       ms[i].what, tn);
				gb_trace_free(&tr);
			}
		}
		gb_model_free(&m);
	}
}

/* Progress after each layer, and a stop between layers (issue 12, part 5). */
typedef struct seen {
	int calls, last_done, last_total, stop_after;
	volatile sig_atomic_t *stop;
} seen;

static void count_layers(void *arg, int done, int total)
{
	seen *s = arg;
	s->calls++;
	s->last_done = done;
	s->last_total = total;
	if (s->stop_after && done == s->stop_after)
		*s->stop = 1;
}

static void progress_and_stop(void)
{
	int fams[2] = { GB_FAM_GPT2, GB_FAM_ENCDEC };
	for (int fi = 0; fi < 2; fi++) {
		gb_config c = base(fams[fi]);
		c.n_layer = 3;
		c.n_enc_layer = c.encdec ? 2 : 0;
		gb_model m;
		if (make(&m, &c, 7)) {
			tap_ok(0, "model");
			continue;
		}
		const char *fam = c.encdec ? "encoder-decoder" : "decoder-only";
		int ids[5] = { 3, 5, 7, 9, 11 }, tgt[3] = { 1, 4, 6 }, total = c.n_layer + c.n_enc_layer;
		volatile sig_atomic_t stop = 0;
		seen sn = { 0, 0, 0, 0, &stop };
		gb_fwd_opts o = { 0 };
		o.progress = count_layers;
		o.progress_arg = &sn;
		o.stop = &stop;
		gb_trace tr = { 0 };
		gb_err err;
		int rc = gb_forward(&m, ids, 5, c.encdec ? tgt : NULL, c.encdec ? 3 : 0, &tr, &o, &err);
		tap_ok(rc == 0 && sn.calls == total && sn.last_done == total && sn.last_total == total,
		       "%s: progress after each of the %d layers (%d calls, last %d of %d)", fam, total, sn.calls, sn.last_done,
		       sn.last_total);
		/* stopped after the second layer: the run fails, says where, and leaves no tensors */
		sn = (seen){ 0, 0, 0, 2, &stop };
		rc = gb_forward(&m, ids, 5, c.encdec ? tgt : NULL, c.encdec ? 3 : 0, &tr, &o, &err);
		tap_ok(rc != 0 && sn.calls == 2 && strstr(err.msg, "stopped") && strstr(err.msg, "2 of") && tr.n == 0,
		       "%s: a stop set during layer 2 ends the run before layer 3 ('%s')", fam, rc ? err.msg : "ran to the end");
		/* a cached step stopped keeps the cache as it was, and runs once the flag is down */
		if (!c.encdec) {
			gb_kvcache *kc = gb_kvcache_new(&m, c.n_ctx, &err);
			stop = 0;
			sn = (seen){ 0, 0, 0, 0, &stop };
			rc = kc ? gb_forward_cached(&m, kc, ids, 3, &tr, &o, &err) : -1;
			stop = 1;
			int rc2 = gb_forward_cached(&m, kc, ids + 3, 2, &tr, &o, &err);
			int len_after = gb_kvcache_len(kc);
			stop = 0;
			int rc3 = gb_forward_cached(&m, kc, ids + 3, 2, &tr, &o, &err);
			tap_ok(rc == 0 && rc2 != 0 && len_after == 3 && rc3 == 0 && gb_kvcache_len(kc) == 5,
			       "%s: a stopped cached step keeps the cache's 3 positions, and the step runs after", fam);
			gb_kvcache_free(kc);
		}
		gb_trace_free(&tr);
		gb_model_free(&m);
	}
}

int main(void)
{
	every_family();
	cache_behaviour();
	decoding();
	progress_and_stop();
	return tap_done();
}
