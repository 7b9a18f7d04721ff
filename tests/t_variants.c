/* t_variants.c — the mechanisms of tiny-lm's variants that the engine gained with them (T5's
 * relative bias, linear attention, a mixture of experts) and the recipes that name them.
 *
 *  - T5's buckets against values worked out by hand from T5's _relative_position_bucket;
 *  - linear attention's two orders: the fast tables' recurrent form against the reference's
 *    quadratic one on random inputs (causal with an offset, padded keys, unmasked), and the
 *    weights the trace records times v against head_out;
 *  - the routing a mixture of experts records: the chosen are the top-k of the router's
 *    probabilities, the gates their renormalised (or Switch's raw) probabilities, the load a
 *    distribution, ffn.out the gated sum of expert_out, experts' rows of tokens they did not
 *    get all 0;
 *  - every fast table against the reference on random models with each mechanism (logits
 *    relative error <= 1e-4), the key/value cache against a full run, a lazy trace against a
 *    full one, and config.json + model.safetensors saved and loaded back (logits bit for bit);
 *  - the presets: each variant is tiny-lm's recipe with the change it names, its parameter
 *    count within 10% of tiny-lm's (printed), and --set's errors name the field and the values. */
#include "tests/tap.h"
#include "tests/model_fixture.h"

#include <unistd.h>

#include "model/forward.h"
#include "model/kernels/kernels.h"
#include "model/train/recipe.h"
#include "model/train/train.h"

static gb_rng rng;

static void buckets(void)
{
	/* causal, 32 buckets, max distance 128: exact below 16, then 16 + floor(log(n/16) /
	 * log(8) * 16), at most 31 */
	static const int causal[][2] = { { 0, 0 }, { -1, 1 }, { -15, 15 }, { -16, 16 }, { -20, 17 }, { -32, 21 },
	                                 { -64, 26 }, { -127, 31 }, { -128, 31 }, { -1000, 31 }, { 5, 0 } };
	int bad = 0;
	for (size_t i = 0; i < sizeof causal / sizeof causal[0]; i++) {
		int b = gb_t5_bucket(causal[i][0], 0, 32, 128);
		if (b != causal[i][1]) {
			tap_diag("causal offset %d: bucket %d, want %d", causal[i][0], b, causal[i][1]);
			bad++;
		}
	}
	/* bidirectional: 16 buckets a side, exact below 8, then 8 + floor(log(n/8) / log(16) * 8);
	 * keys after the query add 16 */
	static const int bidir[][2] = { { 0, 0 }, { -1, 1 }, { 1, 17 }, { -7, 7 }, { 7, 23 }, { -8, 8 },
	                                { 16, 26 }, { -16, 10 }, { 127, 31 }, { -500, 15 } };
	for (size_t i = 0; i < sizeof bidir / sizeof bidir[0]; i++) {
		int b = gb_t5_bucket(bidir[i][0], 1, 32, 128);
		if (b != bidir[i][1]) {
			tap_diag("bidirectional offset %d: bucket %d, want %d", bidir[i][0], b, bidir[i][1]);
			bad++;
		}
	}
	tap_ok(!bad, "T5 buckets, causal and bidirectional, match values worked out by hand (%d wrong)", bad);
}

static void linear_orders(void)
{
	const gb_kernels *ref = gb_kernels_ref(), *fast = gb_kernels_fast();
	int E = 8, Tk = 23;
	float fq[23 * 8], fk[23 * 8], v[23 * 8], a[23 * 8], b[23 * 8];
	unsigned char ok[23];
	for (int i = 0; i < Tk * E; i++) {
		fq[i] = (float)gb_elu1(gb_rng_normal(&rng));
		fk[i] = (float)gb_elu1(gb_rng_normal(&rng));
		v[i] = (float)gb_rng_normal(&rng);
	}
	for (int j = 0; j < Tk; j++)
		ok[j] = j % 5 != 3;
	/* (queries, pos0, causal, mask) */
	static const int cases[][4] = { { 23, 0, 1, 0 }, { 23, 0, 1, 1 }, { 4, 19, 1, 1 }, { 1, 22, 1, 0 }, { 9, 0, 0, 1 } };
	double worst = 0;
	char used[64] = "";
	static const char *tables[] = { "scalar", "avx2", "avx512" };
	for (int t = 0; t < 3; t++) {
		const gb_kernels *k = gb_kernels_by_name(tables[t]);
		if (!k)
			continue;
		snprintf(used + strlen(used), sizeof used - strlen(used), "%s%s", used[0] ? "," : "", k->name);
		for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
			int Tq = cases[c][0], pos0 = cases[c][1];
			const float *q = fq + (size_t)(cases[c][2] ? pos0 : 0) * E;
			ref->linear_attn(a, q, fk, v, Tq, Tk, E, pos0, cases[c][2], cases[c][3] ? ok : NULL);
			k->linear_attn(b, q, fk, v, Tq, Tk, E, pos0, cases[c][2], cases[c][3] ? ok : NULL);
			double mx = 0, d = 0;
			for (int i = 0; i < Tq * E; i++) {
				mx = fmax(mx, fabs(a[i]));
				d = fmax(d, fabs(a[i] - b[i]));
			}
			worst = fmax(worst, d / mx);
		}
	}
	tap_ok(worst <= 1e-5, "linear attention: the recurrent form (%s) equals the quadratic one (ref): relative "
	       "difference %.2g <= 1e-5 (causal, a cached run's offset, padded keys, unmasked)", used, worst);
	/* a row whose keys are all padded is 0 in both */
	unsigned char none[23] = { 0 };
	ref->linear_attn(a, fq, fk, v, 3, Tk, E, 0, 1, none);
	fast->linear_attn(b, fq, fk, v, 3, Tk, E, 0, 1, none);
	int zero = 1;
	for (int i = 0; i < 3 * E; i++)
		zero &= a[i] == 0 && b[i] == 0;
	tap_ok(zero, "linear attention: a query with every key padded gets 0 in both forms");
}

static const gb_ttensor *get(const gb_trace *tr, const char *name)
{
	const gb_ttensor *t = gb_trace_get(tr, name);
	if (!t)
		tap_diag("no %s in the trace", name);
	return t;
}

/* The linear model's trace: weights (rows sum to 1 over the keys seen) times v is head_out. */
static void linear_trace(void)
{
	gb_config c = base(GB_FAM_GPT2);
	c.attn_kind = GB_ATTN_LINEAR;
	c.n_kv_head = 2;
	c.pad_id = 3;
	gb_model m;
	if (make(&m, &c, 41))
		return;
	int ids[12];
	for (int i = 0; i < 12; i++)
		ids[i] = 4 + gb_rng_below(&rng, c.vocab - 4);
	ids[5] = 3;
	gb_trace tr = { 0 };
	gb_err err;
	gb_fwd_opts o = { 0 };
	int rc = gb_forward(&m, ids, 12, NULL, 0, &tr, &o, &err);
	const gb_ttensor *w = rc ? NULL : get(&tr, "L2.attn.weights"), *v = rc ? NULL : get(&tr, "L2.attn.v"),
	                 *ho = rc ? NULL : get(&tr, "L2.attn.head_out"), *fq = rc ? NULL : get(&tr, "L2.attn.q_feat");
	if (!tap_ok(w && v && ho && fq, "linear attention records weights, v, head_out and q_feat"))
		return;
	int E = c.d_head, T = 12;
	double worst = 0, sum_err = 0, masked = 0, minf = 1;
	for (int h = 0; h < c.n_head; h++)
		for (int i = 0; i < T; i++) {
			double s = 0;
			for (int j = 0; j < T; j++) {
				double x = w->data[(h * T + i) * T + j];
				s += x;
				if (j > i || j == 5)
					masked = fmax(masked, fabs(x));
			}
			sum_err = fmax(sum_err, fabs(s - 1));
			for (int e = 0; e < E; e++) {
				double o = 0;
				for (int j = 0; j < T; j++)
					o += w->data[(h * T + i) * T + j] * v->data[((h / 2) * T + j) * E + e];
				worst = fmax(worst, fabs(o - ho->data[(h * T + i) * E + e]));
			}
		}
	for (size_t i = 0; i < fq->n; i++)
		minf = fmin(minf, fq->data[i]);
	tap_ok(sum_err < 1e-5 && masked == 0 && minf > 0,
	       "linear attention's weights: rows sum to 1 (worst %.2g), 0 on later and padded keys, features > 0", sum_err);
	tap_ok(worst < 1e-5, "linear attention: the recorded n x n weights times v give head_out (fast table; worst %.2g)",
	       worst);
	gb_trace_free(&tr);
	gb_model_free(&m);
}

/* The routing decision alone (gb_moe_route, which the engine and the trainer share) on rows
 * worked out by hand: ties go to the lower index, the second choice never repeats the first. */
static void route_by_hand(void)
{
	static const double tie[] = { 0.1, 0.3, 0.3, 0.3 }, one[] = { 0.05, 0.05, 0.6, 0.3 }, two[] = { 0.5, 0.5 };
	int pick[2], bad = 0;
	double gate[2];
	gb_moe_route(tie, 4, 2, 1, pick, gate);
	bad += pick[0] != 1 || pick[1] != 2 || gate[0] != 0.5 || gate[1] != 0.5;
	gb_moe_route(tie, 4, 1, 0, pick, gate);
	bad += pick[0] != 1 || gate[0] != 0.3;
	gb_moe_route(one, 4, 2, 1, pick, gate);
	bad += pick[0] != 2 || pick[1] != 3 || fabs(gate[0] - 2.0 / 3) > 1e-15 || fabs(gate[1] - 1.0 / 3) > 1e-15;
	gb_moe_route(one, 4, 2, 0, pick, gate);
	bad += pick[0] != 2 || pick[1] != 3 || gate[0] != 0.6 || gate[1] != 0.3;
	gb_moe_route(two, 2, 2, 1, pick, gate);
	bad += pick[0] != 0 || pick[1] != 1 || gate[0] != 0.5 || gate[1] != 0.5;
	tap_ok(!bad, "routing by hand (experts from 1): top-2 of (.1 .3 .3 .3) is 2, 3 (ties to the lower) with gates .5 .5; top-1 is 2 "
	       "at .3; (.05 .05 .6 .3) gives 3, 4 with 2/3, 1/3 renormalised or .6, .3 as they are (%d wrong)", bad);
}

static void routing(int k, int norm, int gated)
{
	gb_config c = base(GB_FAM_GPT2);
	c.n_experts = 4;
	c.top_k = k;
	c.norm_topk = norm;
	c.d_ffn = 12;
	if (gated) {
		c.act = GB_ACT_SILU;
		c.ffn = GB_FFN_GATED;
	}
	gb_model m;
	if (make(&m, &c, 50 + k))
		return;
	int ids[15];
	for (int i = 0; i < 15; i++)
		ids[i] = gb_rng_below(&rng, c.vocab);
	gb_trace tr = { 0 };
	gb_err err;
	gb_fwd_opts o = { 0 };
	o.k = gb_kernels_ref();
	if (!tap_ok(gb_forward(&m, ids, 15, NULL, 0, &tr, &o, &err) == 0, "mixture of experts runs"))
		return;
	const gb_ttensor *p = get(&tr, "L1.ffn.router_probs"), *ch = get(&tr, "L1.ffn.chosen"),
	                 *g = get(&tr, "L1.ffn.gates"), *ld = get(&tr, "L1.ffn.load"), *eo = get(&tr, "L1.ffn.expert_out"),
	                 *out = get(&tr, "L1.ffn.out"), *hid = get(&tr, "L1.ffn.hidden");
	if (!p || !ch || !g || !ld || !eo || !out || !hid)
		return;
	int E = 4, D = c.d_model, F = c.d_ffn, bad_top = 0, bad_gate = 0, bad_zero = 0;
	double load_sum = 0, out_err = 0;
	for (int e = 0; e < E; e++)
		load_sum += ld->data[e];
	for (int t = 0; t < 15; t++) {
		const float *pt = p->data + t * E;
		int first = (int)ch->data[t * k], second = k > 1 ? (int)ch->data[t * k + 1] : -1;
		for (int e = 0; e < E; e++) { /* nothing outside the chosen beats them */
			if (e != first && pt[e] > pt[first])
				bad_top++;
			if (k > 1 && e != first && e != second && pt[e] > pt[second])
				bad_top++;
		}
		double S = pt[first] + (k > 1 ? pt[second] : 0);
		for (int e = 0; e < E; e++) {
			int chosen = e == first || e == second;
			double want = !chosen ? 0 : norm ? pt[e] / S : pt[e];
			bad_gate += fabs(g->data[t * E + e] - want) > 1e-6;
			for (int f = 0; f < F && !chosen; f++)
				bad_zero += hid->data[(e * 15 + t) * F + f] != 0;
		}
		for (int d = 0; d < D; d++) {
			double s = 0;
			for (int e = 0; e < E; e++)
				s += g->data[t * E + e] * eo->data[(e * 15 + t) * D + d];
			out_err = fmax(out_err, fabs(s - out->data[t * D + d]));
		}
	}
	tap_ok(!bad_top && !bad_gate && !bad_zero && fabs(load_sum - 1) < 1e-5 && out_err < 1e-5,
	       "experts, top-%d, %s%s: the chosen are the top-%d probabilities (%d wrong), gates %s (%d wrong), "
	       "other experts' rows 0 (%d not), load sums to 1 (%.6f), ffn.out = sum gates x expert_out (%.2g)", k,
	       norm ? "renormalised gates" : "Switch's gates", gated ? ", SwiGLU" : "", k, bad_top,
	       norm ? "p / sum of the chosen" : "p", bad_gate, bad_zero, load_sum, out_err);
	gb_trace_free(&tr);
	gb_model_free(&m);
}

typedef struct mech {
	const char *what;
	int family;
	int pos, attn, experts, top_k, gated, pad;
} mech;

static const mech mechs[] = {
	{ "gpt2 T5 bias", GB_FAM_GPT2, GB_POS_T5, 0, 0, 0, 0, 0 },
	{ "gpt2 T5 bias, padding", GB_FAM_GPT2, GB_POS_T5, 0, 0, 0, 0, 1 },
	{ "llama T5 bias", GB_FAM_LLAMA, GB_POS_T5, 0, 0, 0, 1, 0 },
	{ "encdec T5 bias (bidirectional encoder)", GB_FAM_ENCDEC, GB_POS_T5, 0, 0, 0, 0, 1 },
	{ "gpt2 linear attention", GB_FAM_GPT2, GB_POS_LEARNED, 1, 0, 0, 0, 0 },
	{ "gpt2 linear attention, no positions, padding", GB_FAM_GPT2, GB_POS_NONE, 1, 0, 0, 0, 1 },
	{ "encdec linear self-attention", GB_FAM_ENCDEC, GB_POS_SINUSOIDAL, 1, 0, 0, 0, 1 },
	{ "gpt2 4 experts top-2", GB_FAM_GPT2, GB_POS_LEARNED, 0, 4, 2, 0, 0 },
	{ "gpt2 4 experts top-1", GB_FAM_GPT2, GB_POS_LEARNED, 0, 4, 1, 0, 0 },
	{ "gpt2 4 SwiGLU experts top-2", GB_FAM_GPT2, GB_POS_LEARNED, 0, 4, 2, 1, 0 },
	{ "llama 4 experts (Mixtral's names) top-2", GB_FAM_LLAMA, GB_POS_ROPE, 0, 4, 2, 1, 0 },
	{ "encdec 3 experts top-1", GB_FAM_ENCDEC, GB_POS_SINUSOIDAL, 0, 3, 1, 0, 1 },
};

static gb_config mech_config(const mech *x)
{
	gb_config c = base(x->family);
	c.pos = x->pos;
	c.attn_kind = x->attn;
	c.n_experts = x->experts;
	c.top_k = x->top_k ? x->top_k : 2;
	c.norm_topk = c.top_k > 1;
	c.rel_buckets = 8;
	c.rel_max_dist = 12;
	if (x->experts)
		c.d_ffn = 16;
	if (x->gated) {
		c.act = GB_ACT_SILU;
		c.ffn = GB_FFN_GATED;
	}
	if (x->pad)
		c.pad_id = 2;
	return c;
}

static double logit_err(const gb_trace *a, const gb_trace *b, int row_a, int row_b, int rows)
{
	const gb_ttensor *x = gb_trace_get(a, "logits"), *y = gb_trace_get(b, "logits");
	if (!x || !y)
		return INFINITY;
	int V = x->shape[1];
	double md = 0, mx = 0;
	for (int r = 0; r < rows; r++)
		for (int j = 0; j < V; j++) {
			double u = x->data[(size_t)(row_a + r) * V + j], w = y->data[(size_t)(row_b + r) * V + j];
			md = fmax(md, fabs(u - w));
			mx = fmax(mx, fabs(u));
		}
	return md / mx;
}

static void engines(void)
{
	const char *tables[] = { "scalar", "avx2", "avx512" };
	char dir[] = "/tmp/t_variants.XXXXXX";
	if (!mkdtemp(dir)) {
		tap_ok(0, "a temporary folder");
		return;
	}
	for (size_t v = 0; v < sizeof mechs / sizeof mechs[0]; v++) {
		const mech *x = &mechs[v];
		gb_config c = mech_config(x);
		gb_model m;
		if (!tap_ok(make(&m, &c, 300 + v) == 0, "%s: builds", x->what))
			continue;
		int ids[19], tgt[9];
		for (int i = 0; i < 19; i++)
			ids[i] = 3 + gb_rng_below(&rng, c.vocab - 3);
		for (int i = 0; i < 9; i++)
			tgt[i] = i ? 3 + gb_rng_below(&rng, c.vocab - 3) : c.dec_start_id;
		if (x->pad)
			ids[6] = ids[18] = c.pad_id;
		int nt = c.encdec ? 9 : 0, T = c.encdec ? 9 : 19;
		gb_trace ref = { 0 }, tr = { 0 };
		gb_err err;
		gb_fwd_opts o = { 0 };
		o.k = gb_kernels_ref();
		if (!tap_ok(gb_forward(&m, ids, 19, c.encdec ? tgt : NULL, nt, &ref, &o, &err) == 0, "%s: ref runs", x->what)) {
			tap_diag("%s", err.msg);
			gb_model_free(&m);
			continue;
		}
		double worst = 0;
		char used[64] = "";
		for (int t = 0; t < 3; t++) {
			const gb_kernels *k = gb_kernels_by_name(tables[t]);
			if (!k)
				continue;
			o.k = k;
			if (gb_forward(&m, ids, 19, c.encdec ? tgt : NULL, nt, &tr, &o, &err))
				worst = INFINITY;
			else
				worst = fmax(worst, logit_err(&ref, &tr, 0, 0, T));
			snprintf(used + strlen(used), sizeof used - strlen(used), "%s%s", used[0] ? "," : "", k->name);
		}
		tap_ok(worst <= 1e-4, "%s: %s against ref, logits relative error %.2g <= 1e-4", x->what, used, worst);

		/* the key/value cache: the prompt, then one token at a time, as a full run's rows */
		o.k = gb_kernels_ref();
		gb_kvcache *kc = gb_kvcache_new(&m, c.n_ctx, &err);
		const int *seq = c.encdec ? tgt : ids;
		int n = c.encdec ? 9 : 19, split = n - 4, crc = !kc;
		double cw = 0;
		if (!crc && c.encdec)
			crc = gb_kvcache_set_source(kc, &m, ids, 19, NULL, &o, &err);
		if (!crc)
			crc = gb_forward_cached(&m, kc, seq, split, &tr, &o, &err);
		if (!crc)
			cw = logit_err(&ref, &tr, 0, 0, split);
		for (int i = split; i < n && !crc; i++) {
			crc = gb_forward_cached(&m, kc, seq + i, 1, &tr, &o, &err);
			if (!crc)
				cw = fmax(cw, logit_err(&ref, &tr, i, 0, 1));
		}
		gb_kvcache_free(kc);
		tap_ok(!crc && cw <= 1e-5, "%s: the key/value cache (prompt of %d, then one token at a time) gives the full "
		       "run's logits (%.2g <= 1e-5)", x->what, split, cw);

		/* a lazy trace computes the same tensors */
		gb_trace lazy = { 0 };
		lazy.budget = 1;
		int lrc = gb_forward(&m, ids, 19, c.encdec ? tgt : NULL, nt, &lazy, &o, &err);
		double lw = 0;
		int checked = 0;
		for (int i = 0; !lrc && i < ref.n; i++) {
			const gb_ttensor *a = &ref.t[i], *b = gb_trace_get(&lazy, a->name);
			if (!b || b->n != a->n) {
				lw = INFINITY;
				tap_diag("lazy trace: %s %s", a->name, b ? "differs in size" : "missing");
				break;
			}
			if (strstr(a->name, ".ffn.") || strstr(a->name, ".rel_bias") || strstr(a->name, "_feat"))
				checked++;
			for (size_t j = 0; j < a->n; j++)
				if (a->data[j] != b->data[j] && !(isnan(a->data[j]) && isnan(b->data[j])))
					lw = fmax(lw, fabs(a->data[j] - b->data[j]));
		}
		tap_ok(!lrc && lazy.lazy && lw == 0, "%s: a lazy trace computes every tensor as the full run (%d of "
		       "the mechanism's among them; largest difference %.2g)", x->what, checked, lw);
		gb_trace_free(&lazy);

		/* config.json and model.safetensors, written and read back */
		char path[256];
		snprintf(path, sizeof path, "%s/m%zu", dir, v);
		gb_model back;
		err.msg[0] = 0;
		int src = gb_model_save(&m, path, &err) || gb_model_load(&back, path, &err);
		if (!src) {
			gb_trace tb = { 0 };
			src = gb_forward(&back, ids, 19, c.encdec ? tgt : NULL, nt, &tb, &o, &err) ||
			      logit_err(&ref, &tb, 0, 0, T) != 0 || back.cfg.pos != c.pos || back.cfg.attn_kind != c.attn_kind ||
			      back.cfg.n_experts != c.n_experts || back.cfg.top_k != c.top_k ||
			      back.cfg.norm_topk != c.norm_topk || back.n_weights != m.n_weights ||
			      (c.pos == GB_POS_T5 && (back.cfg.rel_buckets != c.rel_buckets ||
			                              back.cfg.rel_max_dist != c.rel_max_dist));
			snprintf(err.msg, sizeof err.msg, "the model read back differs");
			gb_trace_free(&tb);
			gb_model_free(&back);
		}
		if (!tap_ok(!src, "%s: saved and loaded back, the same config and logits bit for bit", x->what))
			tap_diag("%s", err.msg);
		gb_trace_free(&ref);
		gb_trace_free(&tr);
		gb_model_free(&m);
	}
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd))
		tap_diag("could not remove %s", dir);
}

/* The presets: tiny-lm with one change each, and --set. */
static size_t params_of(const gb_config *c)
{
	gb_model m;
	if (make_untrained(&m, c, 1))
		return 0;
	size_t n = m.n_weights;
	gb_model_free(&m);
	return n;
}

static void presets(void)
{
	gb_recipe base_r, r;
	gb_err err;
	if (!tap_ok(gb_recipe_preset(&base_r, "tiny-lm", &err) == 0, "tiny-lm's recipe"))
		return;
	size_t n0 = params_of(&base_r.cfg);
	tap_diag("tiny-lm: %zu parameters", n0);
	int n = gb_recipe_variant_count(), all_ok = 1;
	for (int i = 0; i < n; i++) {
		const char *sets, *what, *name = gb_recipe_variant_info(i, &sets, &what);
		if (gb_recipe_preset(&r, name, &err)) {
			tap_ok(0, "%s: %s", name, err.msg);
			all_ok = 0;
			continue;
		}
		/* the training is tiny-lm's, bit for bit; the config differs where the sets say */
		int same_training = !memcmp(&r.opts, &base_r.opts, sizeof r.opts) && r.steps == base_r.steps &&
		                    r.batch == base_r.batch && r.seq == base_r.seq && r.vocab == base_r.vocab &&
		                    r.corpus_bytes == base_r.corpus_bytes && r.data_seed == base_r.data_seed &&
		                    r.induction_frac == base_r.induction_frac && r.extra_bytes == base_r.extra_bytes;
		gb_recipe again;
		gb_recipe_preset(&again, "tiny-lm", &err);
		char buf[256], *save = NULL;
		snprintf(buf, sizeof buf, "%s", sets);
		for (char *a = strtok_r(buf, " ", &save); a; a = strtok_r(NULL, " ", &save))
			gb_recipe_set(&again, a, &err);
		int same_cfg = !memcmp(&again.cfg, &r.cfg, sizeof r.cfg) && memcmp(&r.cfg, &base_r.cfg, sizeof r.cfg);
		size_t np = params_of(&r.cfg);
		double rel = ((double)np - (double)n0) / (double)n0;
		int ok = same_training && same_cfg && np && fabs(rel) <= 0.10;
		all_ok &= ok;
		tap_ok(ok, "%s (%s): tiny-lm --set %s: %zu parameters, %+.1f%% of tiny-lm's (within 10%%)%s", name, what,
		       sets, np, 100 * rel, same_training ? "" : "; the training differs from tiny-lm's");
	}
	tap_ok(all_ok && n == 14, "%d variants of tiny-lm", n);

	/* --set */
	gb_recipe_preset(&r, "tiny-lm", &err);
	int rc = gb_recipe_set(&r, "position=alibi", &err);
	tap_ok(rc == 0 && r.cfg.pos == GB_POS_ALIBI && gb_recipe_check(&r, &err) == 0, "--set position=alibi");
	rc = gb_recipe_set(&r, "norm_position=post", &err);
	tap_ok(rc == 0 && !r.cfg.prenorm && !r.cfg.final_norm, "--set norm_position=post also drops the final norm");
	/* Qwen2's layout on tiny-lm: biases on q, k and v only; the parameter count says which */
	gb_recipe q;
	gb_recipe_preset(&q, "tiny-lm", &err);
	q.cfg.bias = 0;
	gb_model m0, m1;
	int m0ok = gb_model_init(&m0, &q.cfg, 1, 0.02f, &err) == 0;
	rc = gb_recipe_set(&q, "qkv_bias=true", &err);
	int m1ok = rc == 0 && gb_model_init(&m1, &q.cfg, 1, 0.02f, &err) == 0;
	long per = 3L * q.cfg.n_head * q.cfg.d_head * q.cfg.n_layer; /* n_kv_head = n_head here */
	tap_ok(m0ok && m1ok && q.cfg.qkv_bias && gb_recipe_check(&q, &err) == 0 &&
	       (long)m1.n_weights - (long)m0.n_weights == per,
	       "--set qkv_bias=true (bias=false): %ld more parameters, the q, k and v biases of %d layers",
	       m0ok && m1ok ? (long)m1.n_weights - (long)m0.n_weights : -1L, q.cfg.n_layer);
	if (m0ok)
		gb_model_free(&m0);
	if (m1ok)
		gb_model_free(&m1);
	rc = gb_recipe_set(&r, "steps=500", &err);
	tap_ok(rc == 0 && r.steps == 500 && r.opts.total_steps == 500, "--set steps=500 ends the cosine there too");
	rc = gb_recipe_set(&r, "colour=red", &err);
	tap_ok(rc && strstr(err.msg, "'colour'") && strstr(err.msg, "position") && strstr(err.msg, "router_aux_loss_coef"),
	       "--set colour=red: %s", err.msg);
	rc = gb_recipe_set(&r, "position=absolute", &err);
	tap_ok(rc && strstr(err.msg, "position") && strstr(err.msg, "alibi") && strstr(err.msg, "t5"), "--set "
	       "position=absolute: %s", err.msg);
	rc = gb_recipe_set(&r, "window=-2", &err);
	tap_ok(rc && strstr(err.msg, "window") && strstr(err.msg, "whole number"), "--set window=-2: %s", err.msg);
	rc = gb_recipe_set(&r, "norm_topk_prob=maybe", &err);
	tap_ok(rc && strstr(err.msg, "true or false"), "--set norm_topk_prob=maybe: %s", err.msg);
	rc = gb_recipe_set(&r, "position", &err);
	tap_ok(rc && strstr(err.msg, "FIELD=VALUE"), "--set position: %s", err.msg);
	gb_recipe_preset(&r, "tiny-lm", &err);
	rc = gb_recipe_set(&r, "attention=linear", &err) || gb_recipe_set(&r, "position=rope", &err) ||
	     gb_recipe_check(&r, &err);
	tap_ok(rc && strstr(err.msg, "linear attention"), "--set attention=linear position=rope is refused: %s", err.msg);
	rc = gb_recipe_preset(&r, "tiny-lm-nothing", &err);
	tap_ok(rc && strstr(err.msg, "tiny-lm-t5") && strstr(err.msg, "tiny-lm-switch"), "an unknown preset lists them all");
}

/* A smoke training of each new mechanism: "a b c d e f | a b c d e f" (the second half is
 * the first copied; only it counts), 200 steps of 32 sequences on a one-layer model of width
 * 32: the held-out loss must fall to under 70% of where it starts. */
enum { SYM = 14, SEP = 14, HALF = 6, LEN = 2 * HALF + 1 };

static void copy_batch(gb_rng *r, int B, int *ids, int *tgt)
{
	for (int b = 0; b < B; b++) {
		int *x = ids + b * LEN, *y = tgt + b * LEN;
		for (int i = 0; i < HALF; i++)
			x[i] = x[HALF + 1 + i] = gb_rng_below(r, SYM);
		x[HALF] = SEP;
		for (int i = 0; i < LEN; i++)
			y[i] = i >= HALF && i + 1 < LEN ? x[i + 1] : -1;
	}
}

static void smoke(const char *what, int pos, int attn, int experts, int k)
{
	gb_config c = base(GB_FAM_GPT2); /* 4 heads, 4 key/value heads */
	c.n_layer = 1;
	c.d_model = 32;
	c.d_head = 8;
	c.d_ffn = experts ? 32 : 128;
	c.vocab = 16;
	c.n_ctx = 16;
	c.pos = pos;
	c.attn_kind = attn;
	c.n_experts = experts;
	c.top_k = k;
	c.norm_topk = k > 1;
	c.rel_buckets = 8;
	c.rel_max_dist = 16;
	gb_train_opts o;
	gb_train_defaults(&o);
	o.lr = 3e-3f;
	o.schedule = GB_SCHED_COSINE;
	o.warmup = 20;
	o.total_steps = 200;
	o.lr_min = 3e-4f;
	o.threads = 2;
	gb_model m;
	gb_trainer t;
	gb_err err;
	if (make_untrained(&m, &c, 1)) {
		tap_ok(0, "%s: set up", what);
		return;
	}
	if (gb_trainer_init(&t, &m, &o, &err)) {
		tap_ok(0, "%s: set up (%s)", what, err.msg);
		gb_model_free(&m);
		return;
	}
	int ids[256 * LEN], tgt[256 * LEN], hid[256 * LEN], htg[256 * LEN];
	gb_rng held;
	gb_rng_seed(&held, 4242);
	copy_batch(&held, 256, hid, htg);
	gb_batch b = { 32, LEN, ids, tgt, 0, NULL }, ev = { 256, LEN, hid, htg, 0, NULL };
	gb_step_stats s0, s1, st;
	int rc = gb_train_eval(&t, &ev, &s0, &err);
	for (int i = 0; i < 200 && !rc; i++) {
		copy_batch(&t.rng, 32, ids, tgt);
		rc = gb_train_step(&t, &b, &st, &err);
	}
	if (!rc)
		rc = gb_train_eval(&t, &ev, &s1, &err);
	if (rc)
		tap_diag("%s", err.msg);
	if (experts && !rc) {
		/* the load-balancing loss the trainer reports, against the trace of one sequence */
		gb_batch one = { 1, LEN, hid, htg, 0, NULL };
		gb_step_stats so;
		gb_trace tr = { 0 };
		gb_fwd_opts fo = { 0 };
		int n = LEN - 1; /* the last target is not counted: the trainer runs LEN - 1 positions */
		double want = 0;
		if (!gb_train_eval(&t, &one, &so, &err) && !gb_forward(&m, hid, n, NULL, 0, &tr, &fo, &err)) {
			const gb_ttensor *ld = gb_trace_get(&tr, "L1.ffn.load"), *pr = gb_trace_get(&tr, "L1.ffn.router_probs");
			for (int e = 0; e < experts; e++) {
				double P = 0;
				for (int i = 0; i < n; i++)
					P += pr->data[i * experts + e];
				want += experts * ld->data[e] * P / n;
			}
		}
		tap_ok(fabs(so.aux - want) < 1e-9 && want > 0 && want <= experts && s1.aux > 0 && s1.aux <= experts,
		       "%s: the load-balancing loss reported (%.4f) is E sum f P of the trace (%.4f), in (0, %d], near 1 "
		       "when balanced; held-out %.4f", what, so.aux, want, experts, s1.aux);
		gb_trace_free(&tr);
	}
	tap_ok(!rc && s1.loss < 0.7 * s0.loss, "%s: 200 steps of a copy task: held-out loss %.3f -> %.3f, accuracy "
	       "%.0f%%", what, rc ? 0 : s0.loss, rc ? 0 : s1.loss, rc ? 0 : 100.0 * s1.correct / s1.tokens);
	gb_trainer_free(&t);
	gb_model_free(&m);
}

int main(void)
{
	gb_rng_seed(&rng, 20261124);
	buckets();
	linear_orders();
	linear_trace();
	route_by_hand();
	routing(2, 1, 0);
	routing(1, 0, 0);
	routing(2, 1, 1);
	engines();
	presets();
	smoke("smoke: learned positions, softmax (the baseline)", GB_POS_LEARNED, GB_ATTN_SOFTMAX, 0, 2);
	smoke("smoke: T5 relative bias", GB_POS_T5, GB_ATTN_SOFTMAX, 0, 2);
	smoke("smoke: linear attention", GB_POS_LEARNED, GB_ATTN_LINEAR, 0, 2);
	smoke("smoke: 4 experts, top-2", GB_POS_LEARNED, GB_ATTN_SOFTMAX, 4, 2);
	smoke("smoke: 4 experts, top-1 (Switch)", GB_POS_LEARNED, GB_ATTN_SOFTMAX, 4, 1);
	return tap_done();
}
