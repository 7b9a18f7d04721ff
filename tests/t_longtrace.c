/* t_longtrace.c — the lazy trace of long runs (model/trace.h, model/lazytrace.h) against the
 * full one: on small random models of every family (GPT-2 learned/post-norm/ALiBi/window,
 * llama RoPE with grouped-query heads, encoder-decoder post- and pre-norm, padding, ablated
 * heads without the mask), a run with a small budget must record lazily, list the same
 * tensors in the same order with the same shapes, and give every tensor — fetched in random
 * order, three passes, over more layers than the cache holds — equal to the full trace's: bit
 * for bit on the ref table, within 1e-5 relative on the fast one. The cache's bytes stay under
 * the budget, the lazy trace holds less than the full one, the kept last row of logits is the
 * full one's, a cached run never goes lazy, the backward pass refuses a lazy trace (it needs every
 * activation at once), a lazy run stopped between layers leaves an empty trace, and the budget
 * can be set from the environment.
 *
 * One head at a time (gb_trace_slice): on models with each mechanism that touches attention
 * (learned positions, post-norm, ALiBi, T5's bias, a window, linear attention with and without
 * padding, experts, ablated heads, a sparse pattern, bf16 weights in both layouts, RoPE with
 * grouped and single key/value heads, an encoder-decoder's self- and cross-attention), a head
 * of every attention tensor is computed alone (its layer not), and heads and whole tensors
 * asked for in random order — a head then its whole table then every head, other layers, a
 * cache that evicts at every request — equal the full trace's (same tolerances), the cache
 * under its budget. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/decode.h"
#include "model/forward.h"
#include "model/kvcache.h"
#include "model/rng.h"
#include "model/train/train.h"
#include "tests/model_fixture.h"
#include "tests/tap.h"

enum { T = 12, LAYERS = 5 };

/* the fixture's models, deeper: more layers than the lazy cache holds */
static gb_config deep(int family)
{
	gb_config c = base(family);
	c.n_layer = LAYERS;
	c.n_enc_layer = family == GB_FAM_ENCDEC ? 3 : 0;
	return c;
}

typedef struct variant {
	const char *what;
	int family;
	void (*tweak)(gb_config *c);
	int ablate;               /* head_scale with zeros, and no causal mask */
} variant;

static void v_none(gb_config *c) { (void)c; }
static void v_post(gb_config *c) { c->prenorm = 0; c->final_norm = 0; }
static void v_alibi_win(gb_config *c) { c->pos = GB_POS_ALIBI; c->window = 5; }
static void v_gqa(gb_config *c) { c->n_kv_head = 2; }
static void v_rope_win(gb_config *c) { c->window = 3; c->n_kv_head = 2; }
static void v_prenorm(gb_config *c) { c->prenorm = 1; c->final_norm = 1; }
static void v_pad(gb_config *c) { c->pad_id = 2; }
static void v_textbook(gb_config *c) { c->textbook_ln = 1; c->norm_eps = 0.1f; c->pos = GB_POS_SINUSOIDAL; }

static const variant variants[] = {
	{ "gpt2 (learned positions, pre-LN)", GB_FAM_GPT2, v_none, 0 },
	{ "gpt2 post-norm", GB_FAM_GPT2, v_post, 0 },
	{ "gpt2 ALiBi + window 5", GB_FAM_GPT2, v_alibi_win, 0 },
	{ "gpt2 sinusoidal, textbook LayerNorm", GB_FAM_GPT2, v_textbook, 0 },
	{ "gpt2 ablated heads, no mask", GB_FAM_GPT2, v_none, 1 },
	{ "llama grouped-query (RoPE, RMSNorm, SwiGLU)", GB_FAM_LLAMA, v_gqa, 0 },
	{ "llama RoPE + GQA + window 3", GB_FAM_LLAMA, v_rope_win, 0 },
	{ "encdec (post-LN, sinusoidal)", GB_FAM_ENCDEC, v_none, 0 },
	{ "encdec pre-norm", GB_FAM_ENCDEC, v_prenorm, 0 },
	{ "encdec padding", GB_FAM_ENCDEC, v_pad, 0 },
};

/* max|a - b| / max|b| (masked -inf equal in both count as equal); -1 when they differ in
 * shape or in where they are infinite. */
static double rel_diff(const gb_ttensor *a, const gb_ttensor *b, int *bits_equal)
{
	if (a->n != b->n || a->ndim != b->ndim)
		return -1;
	for (int i = 0; i < a->ndim; i++)
		if (a->shape[i] != b->shape[i] || a->axes[i] != b->axes[i])
			return -1;
	*bits_equal = !memcmp(a->data, b->data, a->n * sizeof(float));
	double md = 0, mx = 0;
	for (size_t j = 0; j < a->n; j++) {
		double x = a->data[j], y = b->data[j];
		if (isinf(x) || isinf(y)) {
			if (x != y)
				return -1;
			continue;
		}
		if (fabs(x - y) > md)
			md = fabs(x - y);
		if (fabs(y) > mx)
			mx = fabs(y);
	}
	return mx > 0 ? md / mx : md;
}

static int run(const gb_model *m, const int *ids, const int *tgt, gb_trace *tr, const gb_fwd_opts *o)
{
	gb_err err;
	int ed = m->cfg.encdec;
	if (gb_forward(m, ids, T, ed ? tgt : NULL, ed ? T - 3 : 0, tr, o, &err)) {
		tap_diag("forward: %s", err.msg);
		return -1;
	}
	return 0;
}

static void one(const variant *v, int fast)
{
	const char *kn = fast ? "fast" : "ref";
	gb_config c = deep(v->family);
	v->tweak(&c);
	gb_model m;
	if (!tap_ok(!make(&m, &c, 1234 + (uint64_t)v->family), "%s: model", v->what))
		return;
	int ids[T], tgt[T];
	for (int i = 0; i < T; i++) {
		ids[i] = (3 + 7 * i + (i > 6 ? 2 : 0)) % c.vocab;
		tgt[i] = (5 + 11 * i) % c.vocab;
	}
	ids[4] = 2; /* the padding id in the padding variant */
	float scale[LAYERS * 4];
	gb_fwd_opts o = { 0 };
	o.k = fast ? gb_kernels_fast() : gb_kernels_ref();
	if (v->ablate) {
		for (int i = 0; i < LAYERS * 4; i++)
			scale[i] = i % 3 ? 1.0f + 0.1f * (float)i : 0.0f;
		o.head_scale = scale;
		o.no_mask = 1;
	}
	gb_trace full = { 0 }, one_g = { 0 }, lazy = { 0 };
	full.budget = (size_t)1 << 40;
	one_g.budget = 1; /* a cache of one group: each fetch computes its group alone */
	if (run(&m, ids, tgt, &full, &o) || run(&m, ids, tgt, &one_g, &o)) {
		tap_ok(0, "%s (%s): runs", v->what, kn);
		goto out;
	}
	/* the largest group, to size a cache that holds two */
	size_t group = 0;
	for (int i = 0; i < one_g.n; i++)
		if (gb_trace_at(&one_g, i) && gb_trace_cache_bytes(&one_g) > group)
			group = gb_trace_cache_bytes(&one_g);
	lazy.budget = group * 5 / 2;
	if (run(&m, ids, tgt, &lazy, &o)) {
		tap_ok(0, "%s (%s): lazy run", v->what, kn);
		goto out;
	}
	/* the caller's scales change after the run: the lazy trace kept the run's */
	if (v->ablate)
		for (int i = 0; i < LAYERS * 4; i++)
			scale[i] = 5.0f;
	int same_list = lazy.n == full.n, absent = 0, stats = 0;
	for (int i = 0; same_list && i < full.n; i++) {
		same_list &= !strcmp(lazy.t[i].name, full.t[i].name) && lazy.t[i].n == full.t[i].n;
		absent += !lazy.t[i].data;
		/* kept from the run, never computed again: the streams and the norms' statistics */
		if (strstr(full.t[i].name, ".resid.") || strstr(full.t[i].name, ".mean") || strstr(full.t[i].name, ".rms"))
			stats += lazy.t[i].data != NULL && !memcmp(lazy.t[i].data, full.t[i].data, full.t[i].n * 4);
	}
	int want_stats = 0;
	for (int i = 0; i < full.n; i++)
		want_stats += strstr(full.t[i].name, ".resid.") || strstr(full.t[i].name, ".mean") ||
		              strstr(full.t[i].name, ".rms");
	tap_ok(same_list, "%s (%s): the lazy trace lists the full one's %d tensors", v->what, kn, full.n);
	tap_ok(absent > full.n / 2, "%s (%s): it recorded lazily (%d of %d tensors left to compute)", v->what, kn,
	       absent, full.n);
	tap_ok(stats == want_stats, "%s (%s): %d of %d residual streams and norm statistics kept as run", v->what, kn,
	       stats, want_stats);
	tap_ok(gb_trace_bytes(&lazy) < gb_trace_bytes(&full), "%s (%s): lazy trace %zu bytes < full %zu", v->what,
	       kn, gb_trace_bytes(&lazy), gb_trace_bytes(&full));
	/* three passes in random order over every tensor */
	gb_rng r;
	gb_rng_seed(&r, 77 + (uint64_t)fast);
	int *order = malloc(sizeof(int) * (size_t)full.n);
	double worst = 0;
	int unequal = 0, failed = 0, over = 0, fetched = 0;
	char where[64] = "";
	size_t most = 0;
	for (int pass = 0; pass < 3 && same_list; pass++) {
		for (int i = 0; i < full.n; i++)
			order[i] = i;
		for (int i = full.n - 1; i > 0; i--) {
			int j = (int)(gb_rng_u64(&r) % (uint64_t)(i + 1)), t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		for (int k = 0; k < full.n; k++) {
			int i = order[k];
			const gb_ttensor *a = pass == 1 ? gb_trace_get(&lazy, full.t[i].name) : gb_trace_at(&lazy, i);
			if (!a) {
				failed++;
				continue;
			}
			fetched++;
			int bits = 0;
			double d = rel_diff(a, &full.t[i], &bits);
			if (d < 0 || d > worst) {
				worst = d < 0 ? INFINITY : d;
				snprintf(where, sizeof where, "%s", full.t[i].name);
			}
			unequal += !bits;
			size_t cb = gb_trace_cache_bytes(&lazy);
			over += cb > lazy.budget;
			most = cb > most ? cb : most;
		}
	}
	free(order);
	tap_ok(!failed && fetched == 3 * full.n, "%s (%s): every tensor computed on demand (%d fetches)", v->what, kn,
	       fetched);
	if (fast)
		tap_ok(worst <= 1e-5, "%s (%s): every tensor within 1e-5 of the full trace's (worst %.3g at %s)", v->what,
		       kn, worst, where);
	else
		tap_ok(!unequal && worst == 0, "%s (%s): every tensor bit for bit the full trace's (%d differ; worst %.3g at %s)",
		       v->what, kn, unequal, worst, where);
	tap_ok(!over && most > group, "%s (%s): the cache held at most %zu bytes (budget %zu, a group %zu)", v->what, kn,
	       most, lazy.budget, group);
	/* the kept last row of logits */
	int V, V2;
	const float *a = gb_last_logits(&lazy, &V), *b = gb_last_logits(&full, &V2);
	double d = 0, mx = 0;
	for (int j = 0; j < V && V == V2; j++) {
		d = fmax(d, fabs((double)a[j] - b[j]));
		mx = fmax(mx, fabs((double)b[j]));
	}
	tap_ok(V == V2 && (fast ? d <= 1e-5 * mx : d == 0), "%s (%s): the kept last row of logits (diff %.3g)", v->what,
	       kn, d);
out:
	gb_trace_free(&full);
	gb_trace_free(&one_g);
	gb_trace_free(&lazy);
	gb_model_free(&m);
}

/* ---- one head at a time (gb_trace_slice) ---- */

typedef struct hvariant {
	const char *what;
	int family;
	void (*tweak)(gb_config *c);
	int ablate;               /* head_scale with zeros, and no causal mask */
	int pattern;              /* a sparse pattern on the causal mask (gb_fwd_opts.allow) */
	int w16;                  /* attention's weights kept as bf16 (read through matmul_w16) */
} hvariant;

static void h_alibi(gb_config *c) { c->pos = GB_POS_ALIBI; }
static void h_t5(gb_config *c) { c->pos = GB_POS_T5; c->rel_buckets = 8; c->rel_max_dist = 12; }
static void h_window(gb_config *c) { c->window = 3; }
static void h_linear(gb_config *c) { c->attn_kind = GB_ATTN_LINEAR; }
static void h_moe(gb_config *c) { c->n_experts = 4; c->top_k = 2; c->norm_topk = 1; c->d_ffn = 16; }
static void h_rope_adj(gb_config *c) { c->n_kv_head = 1; c->rope_pairs = GB_ROPE_ADJACENT; c->window = 4; }
static void h_encdec_t5(gb_config *c) { h_t5(c); c->pad_id = 2; c->n_kv_head = 2; }
static void h_linear_pad(gb_config *c) { c->attn_kind = GB_ATTN_LINEAR; c->pad_id = 2; c->pos = GB_POS_NONE; }

static const hvariant hvariants[] = {
	{ "gpt2 learned positions", GB_FAM_GPT2, v_none, 0, 0, 0 },
	{ "gpt2 post-norm", GB_FAM_GPT2, v_post, 0, 0, 0 },
	{ "gpt2 ALiBi", GB_FAM_GPT2, h_alibi, 0, 0, 0 },
	{ "gpt2 T5 relative bias", GB_FAM_GPT2, h_t5, 0, 0, 0 },
	{ "gpt2 window 3", GB_FAM_GPT2, h_window, 0, 0, 0 },
	{ "gpt2 linear attention", GB_FAM_GPT2, h_linear, 0, 0, 0 },
	{ "gpt2 linear attention, padding, no positions", GB_FAM_GPT2, h_linear_pad, 0, 0, 0 },
	{ "gpt2 4 experts top-2", GB_FAM_GPT2, h_moe, 0, 0, 0 },
	{ "gpt2 ablated heads, no mask", GB_FAM_GPT2, v_none, 1, 0, 0 },
	{ "gpt2 sparse pattern on the mask", GB_FAM_GPT2, v_none, 0, 1, 0 },
	{ "gpt2 bf16 weights (fused q|k|v)", GB_FAM_GPT2, v_none, 0, 0, 1 },
	{ "llama RoPE + GQA", GB_FAM_LLAMA, v_gqa, 0, 0, 0 },
	{ "llama RoPE adjacent, one kv head, window 4", GB_FAM_LLAMA, h_rope_adj, 0, 0, 0 },
	{ "llama bf16 weights, GQA", GB_FAM_LLAMA, v_gqa, 0, 0, 1 },
	{ "encdec (post-LN, cross-attention)", GB_FAM_ENCDEC, v_none, 0, 0, 0 },
	{ "encdec pre-norm", GB_FAM_ENCDEC, v_prenorm, 0, 0, 0 },
	{ "encdec T5 bias, GQA, padding", GB_FAM_ENCDEC, h_encdec_t5, 0, 0, 0 },
};

static int pattern(const void *arg, int i, int j)
{
	(void)arg;
	return j == 0 || (i - j) % 3 != 1;
}

/* Keeps every attention weight of the model as bf16 (the float's top half): the runs then
 * read them through matmul_w16; bufs receives what to free. */
static void to_bf16(gb_model *m, uint16_t **bufs, int *n)
{
	gb_stack_w *st[2] = { &m->dec, &m->enc };
	for (int s = 0; s < 2; s++)
		for (int l = 0; l < st[s]->n_layer; l++) {
			gb_attn_w *a[2] = { &st[s]->layers[l].attn, &st[s]->layers[l].cross };
			for (int b = 0; b < 2; b++) {
				gb_linear *ls[5] = { &a[b]->qkv, &a[b]->q, &a[b]->k, &a[b]->v, &a[b]->o };
				for (int k = 0; k < 5; k++) {
					gb_linear *li = ls[k];
					if (!li->w)
						continue;
					size_t cnt = (size_t)li->in * li->out;
					uint16_t *h = malloc(cnt * sizeof *h);
					if (!h)
						continue;
					for (size_t i = 0; i < cnt; i++) {
						uint32_t u;
						memcpy(&u, &li->w[i], 4);
						h[i] = (uint16_t)(u >> 16);
					}
					li->w = NULL;
					li->w16 = h;
					li->wtype = GB_W_BF16;
					bufs[(*n)++] = h;
				}
			}
		}
}

/* max|a - b| / max|b| over n floats (-inf where both are); -1 when they differ in where they
 * are infinite. */
static double rel_diff_n(const float *a, const float *b, size_t n)
{
	double md = 0, mx = 0;
	for (size_t j = 0; j < n; j++) {
		if (isinf(a[j]) || isinf(b[j])) {
			if (a[j] != b[j])
				return -1;
			continue;
		}
		md = fmax(md, fabs((double)a[j] - b[j]));
		mx = fmax(mx, fabs((double)b[j]));
	}
	return mx > 0 ? md / mx : md;
}

/* One head's tensors an attention entry has (per query head or key/value head). */
static int per_head(const gb_ttensor *t)
{
	static const char *const leaf[] = { "q", "k", "v", "scores", "masked", "weights", "head_out", "rel_bias",
	                                    "q_feat", "k_feat" };
	const char *p = strstr(t->name, ".attn.");
	const char *q = p ? p + 6 : (p = strstr(t->name, ".cross.")) ? p + 7 : NULL;
	for (size_t i = 0; q && t->ndim == 3 && i < sizeof leaf / sizeof *leaf; i++)
		if (!strcmp(q, leaf[i]))
			return 1;
	return 0;
}

typedef struct tally {
	double worst;
	int unequal, failed, done;
	char where[64];
} tally;

/* Request r: slice j of entry i (j < 0: the whole entry) from the lazy trace, against full. */
static void check_one(const gb_trace *lazy, const gb_trace *full, int i, int j, tally *y)
{
	const gb_ttensor *b = &full->t[i];
	const float *a = NULL, *want = b->data;
	size_t n = b->n;
	gb_ttensor one;
	if (j >= 0) {
		n /= (size_t)b->shape[0];
		want += (size_t)j * n;
		if (!gb_trace_slice(lazy, b->name, j, &one) && one.n == n && one.ndim == 2 && one.shape[0] == b->shape[1] &&
		    one.shape[1] == b->shape[2] && one.axes[0] == b->axes[1] && one.axes[1] == b->axes[2])
			a = one.data;
	} else {
		const gb_ttensor *t = gb_trace_at(lazy, i);
		a = t ? t->data : NULL;
	}
	if (!a) {
		y->failed++;
		return;
	}
	y->done++;
	double d = rel_diff_n(a, want, n);
	y->unequal += memcmp(a, want, n * sizeof(float)) != 0;
	if (d < 0 || d > y->worst) {
		y->worst = d < 0 ? INFINITY : d;
		snprintf(y->where, sizeof y->where, "%s [%d]", b->name, j + 1);
	}
}

static void heads(const hvariant *v, int fast)
{
	const char *kn = fast ? "fast" : "ref";
	gb_config c = deep(v->family);
	v->tweak(&c);
	gb_model m;
	if (!tap_ok(!make(&m, &c, 4321 + (uint64_t)v->family), "heads, %s: model", v->what))
		return;
	uint16_t *bufs[64];
	int nb = 0;
	if (v->w16)
		to_bf16(&m, bufs, &nb);
	int ids[T], tgt[T];
	for (int i = 0; i < T; i++) {
		ids[i] = (3 + 5 * i + (i > 5 ? 1 : 0)) % c.vocab;
		tgt[i] = (4 + 11 * i) % c.vocab;
	}
	ids[3] = tgt[5] = 2; /* the padding id where a variant pads */
	float scale[LAYERS * 4];
	gb_fwd_opts o = { 0 };
	o.k = fast ? gb_kernels_fast() : gb_kernels_ref();
	if (v->ablate) {
		for (int i = 0; i < LAYERS * 4; i++)
			scale[i] = i % 3 ? 1.0f - 0.05f * (float)i : 0.0f;
		o.head_scale = scale;
		o.no_mask = 1;
	}
	if (v->pattern)
		o.allow = pattern;
	gb_trace full = { 0 }, lazy = { 0 }, tight = { 0 };
	full.budget = (size_t)1 << 40;
	lazy.budget = 1;
	tight.budget = 1; /* a cache of one group or one head: each request evicts the last */
	if (run(&m, ids, tgt, &full, &o) || run(&m, ids, tgt, &lazy, &o) || run(&m, ids, tgt, &tight, &o) ||
	    !lazy.lazy) {
		tap_ok(0, "heads, %s (%s): runs, lazily", v->what, kn);
		goto out;
	}
	/* the largest head's share, computed alone (no layer computed yet), and the largest group */
	size_t group = 0, head = 0;
	int alone = 1, some = 0;
	for (int i = 0; i < lazy.n; i++) {
		gb_ttensor one;
		if (lazy.t[i].group && per_head(&lazy.t[i]) && !gb_trace_slice(&lazy, lazy.t[i].name, 0, &one)) {
			some++;
			head = gb_trace_cache_bytes(&lazy) > head ? gb_trace_cache_bytes(&lazy) : head;
			alone &= lazy.t[i].data == NULL; /* its layer was not computed */
		}
	}
	for (int i = 0; i < lazy.n; i++)
		if (lazy.t[i].group && gb_trace_at(&lazy, i))
			group = gb_trace_cache_bytes(&lazy) > group ? gb_trace_cache_bytes(&lazy) : group;
	tap_ok(some && alone && head > 0 && head * 2 < group,
	       "heads, %s (%s): a head of each of %d attention tensors computed alone, its layer not (a head's cache "
	       "%zu bytes, a layer's %zu)", v->what, kn, some, head, group);
	/* head first, then the whole tensor, the other heads, the same head again: a fresh trace,
	 * its cache room for two layers and a half */
	gb_trace_free(&lazy);
	lazy.budget = group * 5 / 2;
	int H = c.n_head, first = -1;
	run(&m, ids, tgt, &lazy, &o);
	for (int i = 0; i < full.n && first < 0; i++)
		if (strstr(full.t[i].name, "L2.attn.weights"))
			first = i;
	tally y = { 0 };
	if (first >= 0) {
		check_one(&lazy, &full, first, H - 1, &y);
		int was_alone = lazy.t[first].data == NULL;
		check_one(&lazy, &full, first, -1, &y);
		for (int h = 0; h < H; h++)
			check_one(&lazy, &full, first, h, &y);
		tap_ok(was_alone && !y.failed && y.done == H + 2 && (fast ? y.worst <= 1e-5 : !y.unequal),
		       "heads, %s (%s): head %d of %s alone, then the whole table, then every head: %s the full trace's "
		       "(%d of %d differ in bits, worst %.3g)", v->what, kn, H, full.t[first].name,
		       fast ? "within 1e-5 of" : "bit for bit", y.unequal, y.done, y.worst);
	} else
		tap_ok(0, "heads, %s (%s): no L2.attn.weights", v->what, kn);
	/* a tensor of the FFN computes the FFN's sub-layer alone, and one of attention the
	 * attention's: layer 3 of a fresh trace */
	gb_trace_free(&lazy);
	lazy.budget = group * 5 / 2;
	run(&m, ids, tgt, &lazy, &o);
	const char *pf = c.encdec ? "dec." : "";
	char fn[48], an[48], cn[48];
	snprintf(fn, sizeof fn, "%sL3.ffn.hidden", pf);
	snprintf(an, sizeof an, "%sL3.attn.weights", pf);
	snprintf(cn, sizeof cn, "%sL3.cross.weights", pf);
	const gb_ttensor *ft = gb_trace_find(&lazy, fn), *at = gb_trace_find(&lazy, an), *ct = gb_trace_find(&lazy, cn);
	int ffn_alone = ft && at && gb_trace_get(&lazy, fn) && ft->data && !at->data && (!ct || !ct->data);
	int attn_alone = ffn_alone && gb_trace_get(&lazy, an) && at->data && ft->data && (!ct || !ct->data);
	tally z = { 0 };
	for (int i = 0; attn_alone && i < full.n; i++)
		if (!strcmp(full.t[i].name, fn) || !strcmp(full.t[i].name, an))
			check_one(&lazy, &full, i, -1, &z);
	tap_ok(ffn_alone && attn_alone && z.done == 2 && (fast ? z.worst <= 1e-5 : !z.unequal),
	       "heads, %s (%s): %s computed the FFN alone (no attention table), then %s the attention alone%s, both "
	       "the full trace's", v->what, kn, fn, an, ct ? " (no cross-attention)" : "");
	/* every head of every attention tensor and every whole tensor, in random order, three
	 * passes: on the roomy cache (bounded by two layers and a half) and on one that holds one
	 * thing at a time */
	gb_trace_free(&lazy);
	lazy.budget = group * 5 / 2;
	run(&m, ids, tgt, &lazy, &o);
	int n_req = 0;
	for (int i = 0; i < full.n; i++)
		n_req += 1 + (per_head(&full.t[i]) ? full.t[i].shape[0] : 0);
	int(*req)[2] = malloc(sizeof *req * (size_t)n_req);
	n_req = 0;
	for (int i = 0; req && i < full.n; i++) {
		req[n_req][0] = i, req[n_req++][1] = -1;
		for (int j = 0; per_head(&full.t[i]) && j < full.t[i].shape[0]; j++)
			req[n_req][0] = i, req[n_req++][1] = j;
	}
	gb_rng r;
	gb_rng_seed(&r, 99 + (uint64_t)fast);
	tally roomy = { 0 }, one_at = { 0 };
	int over = 0;
	size_t most = 0;
	for (int pass = 0; req && pass < 3; pass++) {
		for (int k = n_req - 1; k > 0; k--) {
			int q = (int)(gb_rng_u64(&r) % (uint64_t)(k + 1)), a0 = req[k][0], a1 = req[k][1];
			req[k][0] = req[q][0], req[k][1] = req[q][1];
			req[q][0] = a0, req[q][1] = a1;
		}
		for (int k = 0; k < n_req; k++) {
			check_one(&lazy, &full, req[k][0], req[k][1], &roomy);
			check_one(&tight, &full, req[k][0], req[k][1], &one_at);
			size_t cb = gb_trace_cache_bytes(&lazy);
			over += cb > lazy.budget;
			most = cb > most ? cb : most;
		}
	}
	free(req);
	tally *ts[2] = { &roomy, &one_at };
	const char *tn[2] = { "a cache of 2.5 layers", "a cache of one thing" };
	for (int k = 0; k < 2; k++)
		tap_ok(!ts[k]->failed && ts[k]->done == 3 * n_req && (fast ? ts[k]->worst <= 1e-5 : !ts[k]->unequal),
		       "heads, %s (%s), %s: %d requests of heads and whole tensors in random order, %s the full trace's "
		       "(%d differ in bits; worst %.3g at %s)", v->what, kn, tn[k], ts[k]->done, fast ? "within 1e-5 of" : "bit for bit",
		       ts[k]->unequal, ts[k]->worst, ts[k]->where);
	tap_ok(!over && most > head, "heads, %s (%s): the cache held at most %zu bytes (budget %zu)", v->what, kn, most,
	       lazy.budget);
out:
	gb_trace_free(&full);
	gb_trace_free(&lazy);
	gb_trace_free(&tight);
	for (int i = 0; i < nb; i++)
		free(bufs[i]);
	gb_model_free(&m);
}

/* A run through the cache stays whole whatever the budget, and matches gb_forward. */
static void cached(void)
{
	gb_config c = deep(GB_FAM_GPT2);
	gb_model m;
	gb_err err;
	if (!tap_ok(!make(&m, &c, 9), "cached: model"))
		return;
	int ids[T];
	for (int i = 0; i < T; i++)
		ids[i] = (1 + 5 * i) % c.vocab;
	gb_fwd_opts o = { 0 };
	o.k = gb_kernels_ref();
	gb_trace a = { 0 }, b = { 0 };
	a.budget = b.budget = 1;
	gb_kvcache *kc = gb_kvcache_new(&m, T, &err);
	int ok = kc && !gb_forward_cached(&m, kc, ids, T - 1, &a, &o, &err) &&
	         !gb_forward_cached(&m, kc, ids + T - 1, 1, &a, &o, &err) && !gb_forward(&m, ids, T, NULL, 0, &b, &o, &err);
	int whole = ok;
	for (int i = 0; ok && i < a.n; i++)
		whole &= a.t[i].data != NULL;
	tap_ok(whole, "cached: a cached step records every tensor with a budget of 1 byte");
	const gb_ttensor *pa = ok ? gb_trace_get(&a, "probs") : NULL, *pb = ok ? gb_trace_get(&b, "probs") : NULL;
	tap_ok(pa && pb && !memcmp(pa->data, pb->data + (size_t)(T - 1) * c.vocab, (size_t)c.vocab * 4),
	       "cached: its probs are the lazy full run's last row, bit for bit");
	gb_kvcache_free(kc);
	gb_trace_free(&a);
	gb_trace_free(&b);
	gb_model_free(&m);
}

/* The backward pass reads every activation at once: a lazy trace is refused in words. */
static void backward(void)
{
	gb_config c = deep(GB_FAM_GPT2);
	gb_model m;
	gb_err err;
	if (!tap_ok(!make(&m, &c, 5), "backward: model"))
		return;
	int ids[T], tg[T];
	for (int i = 0; i < T; i++) {
		ids[i] = (2 + 3 * i) % c.vocab;
		tg[i] = (5 + 3 * i) % c.vocab;
	}
	gb_trace tr = { 0 };
	tr.budget = 1;
	gb_ws ws = { 0 };
	float *g = calloc(m.n_weights, sizeof *g);
	double loss;
	int cnt, rc = -1;
	if (g && !gb_forward(&m, ids, T, NULL, 0, &tr, NULL, &err))
		rc = gb_backward(&m, &tr, tg, 0, 1, g, NULL, &ws, &loss, &cnt, NULL, &err);
	tap_ok(rc && strstr(err.msg, "lazily"), "backward on a lazy trace fails: %s", rc ? err.msg : "(it ran)");
	tr.budget = SIZE_MAX;
	rc = gb_forward(&m, ids, T, NULL, 0, &tr, NULL, &err) ||
	     gb_backward(&m, &tr, tg, 0, 1, g, NULL, &ws, &loss, &cnt, NULL, &err);
	tap_ok(!rc && cnt == T && loss > 0, "with the budget above the run it works (loss %.4g over %d)", rc ? 0 : loss,
	       cnt);
	free(g);
	gb_ws_free(&ws);
	gb_trace_free(&tr);
	gb_model_free(&m);
}

/* A lazy run stopped between layers fails in words, leaves an empty trace, and the next run
 * records as before. */
typedef struct stopper {
	volatile sig_atomic_t *stop;
	int at;
} stopper;

static void stop_at(void *arg, int done, int total)
{
	stopper *s = arg;
	(void)total;
	if (done == s->at)
		*s->stop = 1;
}

static void stopped(void)
{
	gb_config c = deep(GB_FAM_LLAMA);
	gb_model m;
	gb_err err;
	if (!tap_ok(!make(&m, &c, 6), "stop: model"))
		return;
	int ids[T];
	for (int i = 0; i < T; i++)
		ids[i] = (4 + 9 * i) % c.vocab;
	volatile sig_atomic_t stop = 0;
	stopper sp = { &stop, 2 };
	gb_fwd_opts o = { 0 };
	o.progress = stop_at;
	o.progress_arg = &sp;
	o.stop = &stop;
	gb_trace tr = { 0 }, full = { 0 };
	tr.budget = 1;
	full.budget = SIZE_MAX;
	int rc = gb_forward(&m, ids, T, NULL, 0, &tr, &o, &err);
	tap_ok(rc && strstr(err.msg, "stopped") && tr.n == 0 && !tr.lazy && !tr.arena,
	       "a lazy run stopped after 2 layers fails (%s) and leaves an empty trace", rc ? err.msg : "ran");
	stop = 0;
	sp.at = -1;
	rc = gb_forward(&m, ids, T, NULL, 0, &tr, &o, &err) || gb_forward(&m, ids, T, NULL, 0, &full, NULL, &err);
	const gb_ttensor *a = rc ? NULL : gb_trace_get(&tr, "L3.ffn.hidden"), *b = rc ? NULL : gb_trace_get(&full, "L3.ffn.hidden");
	tap_ok(a && b && a->n == b->n && !memcmp(a->data, b->data, a->n * 4), "the next run records as before");
	gb_trace_free(&tr);
	gb_trace_free(&full);
	gb_model_free(&m);
}

static void budget_env(void)
{
	gb_trace t = { 0 };
	setenv("GLASSBOX_TRACE_BUDGET", "1.5", 1);
	tap_ok(gb_trace_budget(&t) >= 1572864 && gb_trace_budget(&t) <= 1572865, "GLASSBOX_TRACE_BUDGET=1.5 is 1.5 MB");
	setenv("GLASSBOX_TRACE_BUDGET", "lots", 1);
	tap_ok(gb_trace_budget(&t) == (size_t)256 << 20, "a budget that is no number leaves the default 256 MB");
	t.budget = 1000;
	tap_ok(gb_trace_budget(&t) == 1000, "the trace's own budget comes first");
	unsetenv("GLASSBOX_TRACE_BUDGET");
}

int main(void)
{
	for (size_t v = 0; v < sizeof variants / sizeof *variants; v++)
		for (int fast = 0; fast < 2; fast++)
			one(&variants[v], fast);
	for (size_t v = 0; v < sizeof hvariants / sizeof *hvariants; v++)
		for (int fast = 0; fast < 2; fast++)
			heads(&hvariants[v], fast);
	cached();
	backward();
	stopped();
	budget_env();
	return tap_done();
}
