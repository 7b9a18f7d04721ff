/* t_forward.c — the forward pass: a model worked out by hand, the invariants every trace must
 * keep, the position encodings' defining properties, and the fast tables against ref on
 * random models of every configuration the engine supports. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/forward.h"
#include "model/rng.h"
#include "tests/model_fixture.h"
#include "tests/tap.h"

static const gb_ttensor *get(const gb_trace *tr, const char *name)
{
	const gb_ttensor *t = gb_trace_get(tr, name);
	if (!t)
		tap_diag("trace has no %s", name);
	return t;
}

/* ---- the hand-worked model ---- */

static void hand_worked(void)
{
	/* llama names, RMSNorm with eps 0, no positions, ReLU FFN, no biases, tied output.
	 * Vocabulary A, B, C with embeddings A = [1, 1], B = [1, -1], C = [-1, 1] (each has rms 1,
	 * so RMSNorm leaves them unchanged). Wq = Wk = Wv = Wo = W1 = W2 = I (2 x 2), one head of 2.
	 * Input "A B":
	 *   q = k = v = [1, 1], [1, -1];  raw scores q.k: [[2, 0], [0, 2]]; scaled by 1/sqrt(2);
	 *   causal: row 1 = [1, 0]; row 2 = softmax(0, sqrt 2) = [1, e^s] / (1 + e^s), s = sqrt 2.
	 *   head out 1 = [1, 1]; head out 2 = [1, (1 - e^s)/(1 + e^s)] = [1, -t], t = tanh(s / 2).
	 *   residual: [2, 2] and [2, -1 - t].
	 *   RMSNorm: [1, 1] and [2, -1 - t] / r with r = sqrt((4 + (1 + t)^2) / 2).
	 *   FFN relu(I x) I: [1, 1] and [2 / r, 0]; residual: [3, 3] and [2 + 2/r, -1 - t].
	 *   logits = x . [A; B; C]^T: position 1: [6, 0, -0] ... = [6, 0, 0];
	 *   position 2: [1 + 2/r - t, 3 + 2/r + t, -3 - 2/r - t]. */
	gb_config c;
	gb_config_defaults(&c, GB_FAM_LLAMA);
	c.d_model = 2, c.n_layer = 1, c.n_head = c.n_kv_head = 1, c.d_head = 2, c.d_ffn = 2;
	c.vocab = 3, c.n_ctx = 4, c.pos = GB_POS_NONE, c.act = GB_ACT_RELU, c.ffn = GB_FFN_PLAIN;
	c.tied = 1, c.final_norm = 0, c.norm_eps = 0;
	gb_model m;
	gb_err err;
	if (!tap_ok(gb_model_init(&m, &c, 1, 1, &err) == 0, "hand-worked model builds")) {
		tap_diag("%s", err.msg);
		return;
	}
	const float emb[6] = { 1, 1, 1, -1, -1, 1 }, eye[4] = { 1, 0, 0, 1 };
	for (int i = 0; i < m.n_params; i++) {
		gb_param *p = &m.params[i];
		if (!strcmp(p->name, "model.embed_tokens.weight"))
			memcpy(p->data, emb, sizeof emb);
		else if (p->ndim == 2)
			memcpy(p->data, eye, sizeof eye);
		else
			for (size_t k = 0; k < p->n; k++)
				p->data[k] = 1; /* norm gains */
	}
	double s = sqrt(2.0), t = tanh(s / 2), r = sqrt((4 + (1 + t) * (1 + t)) / 2);
	double want[6] = { 6, 0, 0, 1 + 2 / r - t, 3 + 2 / r + t, -3 - 2 / r - t };
	const char *names[] = { "ref", "fast" };
	for (int e = 0; e < 2; e++) {
		gb_trace tr = { 0 };
		gb_fwd_opts o = { 0 };
		o.k = gb_kernels_by_name(names[e]);
		int ids[2] = { 0, 1 };
		if (!tap_ok(gb_forward(&m, ids, 2, NULL, 0, &tr, &o, &err) == 0, "%s: hand-worked forward runs", names[e])) {
			tap_diag("%s", err.msg);
			continue;
		}
		const gb_ttensor *lg = get(&tr, "logits"), *w = get(&tr, "L1.attn.weights");
		double md = 0;
		for (int i = 0; i < 6; i++)
			md = fmax(md, fabs(lg->data[i] - want[i]));
		tap_ok(md < 1e-6, "%s: hand-worked logits match (largest error %.2g)", names[e], md);
		tap_near(w->data[2], 1 / (1 + exp(s)), 1e-7, "%s: hand-worked weight (2,1) = 1/(1+e^sqrt2)", names[e]);
		tap_near(w->data[1], 0, 0, "%s: hand-worked weight (1,2) is masked to 0", names[e]);
		gb_trace_free(&tr);
	}
	gb_model_free(&m);
}

/* ---- invariants of a trace ---- */

static void invariants(void)
{
	gb_config c = base(GB_FAM_GPT2);
	c.window = 3;
	gb_model m;
	if (make(&m, &c, 5))
		return;
	gb_rng r;
	gb_rng_seed(&r, 11);
	int ids[17];
	for (int i = 0; i < 17; i++)
		ids[i] = gb_rng_below(&r, c.vocab);
	gb_trace tr = { 0 };
	gb_err err;
	gb_fwd_opts o = { 0 };
	o.k = gb_kernels_ref();
	if (!tap_ok(gb_forward(&m, ids, 17, NULL, 0, &tr, &o, &err) == 0, "windowed gpt2 forward runs"))
		return;
	const gb_ttensor *w = get(&tr, "L2.attn.weights");
	double worst_sum = 0, above = 0, outside = 0;
	for (int h = 0; h < 4; h++)
		for (int i = 0; i < 17; i++) {
			double sum = 0;
			for (int j = 0; j < 17; j++) {
				double v = w->data[(h * 17 + i) * 17 + j];
				sum += v;
				if (j > i)
					above = fmax(above, fabs(v));
				if (abs(i - j) >= 3)
					outside = fmax(outside, fabs(v));
			}
			worst_sum = fmax(worst_sum, fabs(sum - 1));
		}
	tap_ok(worst_sum < 1e-6, "attention rows sum to 1 (worst |sum - 1| = %.2g)", worst_sum);
	tap_ok(above == 0, "causal rows are exactly 0 above the diagonal");
	tap_ok(outside == 0, "local-window rows are exactly 0 outside the window of 3");

	/* LayerNorm: (out - b) / g has mean 0 and variance 1. */
	const gb_ttensor *out = get(&tr, "L1.ln2.out");
	const gb_param *g = gb_model_param(&m, "h.0.ln_2.weight"), *b = gb_model_param(&m, "h.0.ln_2.bias");
	double wm = 0, wv = 0;
	for (int i = 0; i < 17; i++) {
		double s1 = 0, s2 = 0;
		for (int d = 0; d < c.d_model; d++) {
			double z = (out->data[i * c.d_model + d] - b->data[d]) / g->data[d];
			s1 += z;
			s2 += z * z;
		}
		double mean = s1 / c.d_model, var = s2 / c.d_model - mean * mean;
		wm = fmax(wm, fabs(mean));
		wv = fmax(wv, fabs(var - 1));
	}
	/* eps = 1e-5 against variances of order 0.1-1 moves the variance by up to ~1e-4. */
	tap_ok(wm < 1e-6 && wv < 2e-4, "LayerNorm output: mean 0 (worst %.2g), variance 1 (worst |var-1| %.2g)", wm, wv);
	const gb_ttensor *in = get(&tr, "L1.ln2.in"), *mean = get(&tr, "L1.ln2.mean"), *var = get(&tr, "L1.ln2.var");
	double s1 = 0, s2 = 0;
	for (int d = 0; d < c.d_model; d++)
		s1 += in->data[5 * c.d_model + d];
	for (int d = 0; d < c.d_model; d++)
		s2 += pow(in->data[5 * c.d_model + d] - s1 / c.d_model, 2);
	tap_near(mean->data[5], s1 / c.d_model, 1e-6, "ln2.mean is the mean of ln2.in");
	tap_near(var->data[5], s2 / c.d_model, 1e-6, "ln2.var is the population variance of ln2.in");
	gb_trace_free(&tr);
	gb_model_free(&m);

	/* RMSNorm: out / g has rms 1 (eps 1e-6). */
	c = base(GB_FAM_LLAMA);
	if (make(&m, &c, 6))
		return;
	if (!tap_ok(gb_forward(&m, ids, 17, NULL, 0, &tr, &o, &err) == 0, "llama forward runs"))
		return;
	out = get(&tr, "L2.ln1.out");
	g = gb_model_param(&m, "model.layers.1.input_layernorm.weight");
	double wr = 0;
	for (int i = 0; i < 17; i++) {
		double s = 0;
		for (int d = 0; d < c.d_model; d++)
			s += pow(out->data[i * c.d_model + d] / g->data[d], 2);
		wr = fmax(wr, fabs(sqrt(s / c.d_model) - 1));
	}
	tap_ok(wr < 1e-5, "RMSNorm output has rms 1 (worst %.2g)", wr);
	const gb_ttensor *k = get(&tr, "L1.attn.k"), *q = get(&tr, "L1.attn.q");
	tap_ok(k->shape[0] == 4 && q->shape[0] == 4 && q->shape[1] == 17 && q->shape[2] == 6, "q, k are (head, token, feature)");
	gb_trace_free(&tr);
	gb_model_free(&m);
}

/* ---- positions ---- */

static void positions(void)
{
	float pe[8 * 6];
	gb_sinusoid(pe, 8, 6);
	/* PE(i, 2k) = sin(i / 10000^(2k/6)): PE(3, 0) = sin 3; PE(3, 1) = cos 3;
	 * PE(5, 2) = sin(5 / 10000^(1/3)) = sin(5 / 21.5443469); PE(7, 5) = cos(7 / 10000^(2/3)). */
	tap_near(pe[3 * 6 + 0], sin(3.0), 1e-7, "PE(3, 0) = sin 3");
	tap_near(pe[3 * 6 + 1], cos(3.0), 1e-7, "PE(3, 1) = cos 3");
	tap_near(pe[5 * 6 + 2], sin(5 / 21.544346900318839), 1e-7, "PE(5, 2) = sin(5 / 10000^(1/3))");
	tap_near(pe[7 * 6 + 5], cos(7 / 464.15888336127788), 1e-7, "PE(7, 5) = cos(7 / 10000^(2/3))");
	tap_near(pe[0 * 6 + 4], 0, 0, "PE(0, even) = 0");

	/* Shift: PE(i + k) = M_k PE(i), M_k block-diagonal with the 2x2 rotation
	 * [[cos kw, sin kw], [-sin kw, cos kw]] acting on (sin, cos) of frequency w. */
	enum { D = 16, N = 40 };
	float big[N * D];
	gb_sinusoid(big, N, D);
	double worst = 0;
	for (int kk = 1; kk <= 9; kk += 4)
		for (int i = 0; i + kk < N; i++)
			for (int f = 0; f < D / 2; f++) {
				double w = 1 / pow(10000.0, 2.0 * f / D), s = big[i * D + 2 * f], co = big[i * D + 2 * f + 1];
				double ps = cos(kk * w) * s + sin(kk * w) * co, pc = -sin(kk * w) * s + cos(kk * w) * co;
				worst = fmax(worst, fabs(ps - big[(i + kk) * D + 2 * f]));
				worst = fmax(worst, fabs(pc - big[(i + kk) * D + 2 * f + 1]));
			}
	tap_ok(worst < 1e-5, "sinusoid shift: PE(i+k) is a fixed rotation of PE(i) (worst %.2g)", worst);

	/* RoPE: q . k after rotating q to position i and k to j depends only on i - j. */
	gb_rng r;
	gb_rng_seed(&r, 4);
	float q0[8], k0[8];
	for (int i = 0; i < 8; i++)
		q0[i] = (float)gb_rng_normal(&r), k0[i] = (float)gb_rng_normal(&r);
	double worst_r = 0, ref_dot = 0;
	gb_config rc;
	gb_config_defaults(&rc, GB_FAM_LLAMA);
	rc.d_head = 8;
	rc.rope_theta = 10000;
	for (int shift = 0; shift < 20; shift += 3) {
		float q[8], k[8];
		memcpy(q, q0, sizeof q);
		memcpy(k, k0, sizeof k);
		gb_rope(q, 1, 8, 7 + shift, &rc);
		gb_rope(k, 1, 8, 2 + shift, &rc);
		double dot = 0;
		for (int i = 0; i < 8; i++)
			dot += q[i] * k[i];
		if (shift == 0)
			ref_dot = dot;
		worst_r = fmax(worst_r, fabs(dot - ref_dot));
	}
	tap_ok(worst_r < 1e-5, "RoPE: q.k at positions (7+s, 2+s) is the same for every s (worst %.2g)", worst_r);
	float qr[8];
	memcpy(qr, q0, sizeof qr);
	gb_rope(qr, 1, 8, 0, &rc);
	tap_ok(!memcmp(qr, q0, sizeof qr), "RoPE at position 0 is the identity");
	/* Pairing (f, f + E/2): at position 1, f = 0 rotates by 1 radian. */
	float e0[8] = { 1, 0, 0, 0, 0, 0, 0, 0 };
	gb_rope(e0, 1, 8, 1, &rc);
	tap_ok(fabs(e0[0] - cos(1.0)) < 1e-6 && fabs(e0[4] - sin(1.0)) < 1e-6, "RoPE pairs feature f with f + E/2");
	/* llama3 scaling, worked by hand: E = 8, theta 10000, C = 64, lo 1, hi 4, factor 4. Pair 0
	 * (wavelength 2pi < 16) keeps 1 rad; pair 2 (theta_2 = 0.01, wavelength 628 > 64) turns 0.01/4;
	 * pair 1 (theta_1 = 0.1, wavelength 62.83): s = (64/62.83 - 1)/3, (1 - s) 0.1/4 + s 0.1. */
	rc.rope_scale = GB_ROPE_SCALE_LLAMA3;
	rc.rope_factor = 4, rc.rope_low = 1, rc.rope_high = 4, rc.rope_orig_ctx = 64;
	double s1 = (64 / (2 * M_PI / 0.1) - 1) / 3;
	tap_ok(fabs(gb_rope_inv_freq(&rc, 0) - 1) < 1e-12 && fabs(gb_rope_inv_freq(&rc, 2) - 0.0025) < 1e-12 &&
	       fabs(gb_rope_inv_freq(&rc, 1) - ((1 - s1) * 0.025 + s1 * 0.1)) < 1e-12,
	       "RoPE llama3 scaling: pair 0 kept (1), pair 1 blended (%.6f), pair 2 slowed 4x (%.6f)",
	       gb_rope_inv_freq(&rc, 1), gb_rope_inv_freq(&rc, 2));
	rc.rope_scale = GB_ROPE_SCALE_LINEAR;
	rc.rope_factor = 2;
	tap_ok(fabs(gb_rope_inv_freq(&rc, 1) - 0.05) < 1e-12, "RoPE linear scaling: every frequency / factor");
	/* gb_rope keeps a table of a run's angles per thread: a change of any setting, position,
	 * length or head size must give the angles of the new one, each time (3 tokens at positions
	 * 5..7 against cos and sin computed here). */
	{
		static const struct { float theta, factor, low, high; int scale, ctx, pos, T, E; } set[] = {
			{ 10000, 1, 1, 4, GB_ROPE_SCALE_NONE, 64, 5, 3, 8 },  { 500, 1, 1, 4, GB_ROPE_SCALE_NONE, 64, 5, 3, 8 },
			{ 500, 2, 1, 4, GB_ROPE_SCALE_LINEAR, 64, 5, 3, 8 },  { 500, 3, 1, 4, GB_ROPE_SCALE_LINEAR, 64, 5, 3, 8 },
			{ 500, 4, 1, 4, GB_ROPE_SCALE_LLAMA3, 64, 5, 3, 8 },  { 500, 4, 2, 4, GB_ROPE_SCALE_LLAMA3, 64, 5, 3, 8 },
			{ 500, 4, 2, 3, GB_ROPE_SCALE_LLAMA3, 64, 5, 3, 8 },  { 500, 4, 2, 3, GB_ROPE_SCALE_LLAMA3, 32, 5, 3, 8 },
			{ 500, 4, 2, 3, GB_ROPE_SCALE_LLAMA3, 32, 6, 3, 8 },  { 500, 4, 2, 3, GB_ROPE_SCALE_LLAMA3, 32, 6, 2, 8 },
			{ 500, 4, 2, 3, GB_ROPE_SCALE_LLAMA3, 32, 6, 2, 4 },  { 10000, 1, 1, 4, GB_ROPE_SCALE_NONE, 64, 5, 3, 8 },
		};
		double worst_t = 0;
		for (int rep = 0; rep < 2; rep++)
			for (size_t i = 0; i < sizeof set / sizeof *set; i++) {
				gb_config tc;
				gb_config_defaults(&tc, GB_FAM_LLAMA);
				tc.d_head = set[i].E, tc.rope_theta = set[i].theta, tc.rope_factor = set[i].factor;
				tc.rope_low = set[i].low, tc.rope_high = set[i].high, tc.rope_scale = set[i].scale;
				tc.rope_orig_ctx = set[i].ctx;
				int E = set[i].E, T = set[i].T, half = E / 2;
				float x[24];
				for (int j = 0; j < T * E; j++)
					x[j] = (float)(j % 5) - 1.5f;
				gb_rope(x, T, E, set[i].pos, &tc);
				for (int t = 0; t < T; t++)
					for (int f = 0; f < half; f++) {
						double ang = (set[i].pos + t) * gb_rope_inv_freq(&tc, f);
						double a = (double)((t * E + f) % 5) - 1.5, b = (double)((t * E + f + half) % 5) - 1.5;
						worst_t = fmax(worst_t, fabs(x[t * E + f] - (a * cos(ang) - b * sin(ang))));
						worst_t = fmax(worst_t, fabs(x[t * E + f + half] - (b * cos(ang) + a * sin(ang))));
					}
			}
		tap_ok(worst_t < 1e-6, "RoPE: 12 settings in turn, twice (theta, scaling and its factors, position, "
		       "length, head size): each rotates by its own angles (worst %.2g)", worst_t);
	}

	/* ALiBi: masked - scores / sqrt(E) = slope_h (j - i) on the allowed entries. */
	gb_config c = base(GB_FAM_GPT2);
	c.pos = GB_POS_ALIBI;
	gb_model m;
	if (make(&m, &c, 8))
		return;
	int ids[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	gb_trace tr = { 0 };
	gb_err err;
	gb_fwd_opts o = { 0 };
	o.k = gb_kernels_ref();
	gb_forward(&m, ids, 9, NULL, 0, &tr, &o, &err);
	const gb_ttensor *sc = get(&tr, "L1.attn.scores"), *mk = get(&tr, "L1.attn.masked");
	double wa = 0;
	for (int h = 0; h < 4; h++)
		for (int i = 0; i < 9; i++)
			for (int j = 0; j <= i; j++) {
				int at = (h * 9 + i) * 9 + j;
				double bias = mk->data[at] - sc->data[at] / sqrt(6.0);
				wa = fmax(wa, fabs(bias - pow(2, -8.0 * (h + 1) / 4) * (j - i)));
			}
	tap_ok(wa < 1e-5, "ALiBi bias = slope_h (j - i), slopes 2^(-8h/H) (worst %.2g)", wa);
	tap_near(gb_alibi_slope(0, 8), 0.5, 0, "ALiBi slope of head 1 of 8 is 1/2");
	tap_near(gb_alibi_slope(5, 6), pow(2, -8.0 * 3 / 8), 1e-15, "ALiBi slope for 6 heads: interpolated from 8");
	gb_trace_free(&tr);
	gb_model_free(&m);
}

/* ---- fast against ref, every configuration ---- */

typedef struct variant {
	const char *what;
	int family;
	void (*tweak)(gb_config *c);
} variant;

static void v_none(gb_config *c) { (void)c; }
static void v_post(gb_config *c) { c->prenorm = 0; c->final_norm = 0; }
static void v_rms(gb_config *c) { c->norm = GB_NORM_RMS; }
static void v_sin(gb_config *c) { c->pos = GB_POS_SINUSOIDAL; }
static void v_rope(gb_config *c) { c->pos = GB_POS_ROPE; }
static void v_alibi(gb_config *c) { c->pos = GB_POS_ALIBI; }
static void v_nopos(gb_config *c) { c->pos = GB_POS_NONE; }
static void v_relu(gb_config *c) { c->act = GB_ACT_RELU; c->ffn = GB_FFN_PLAIN; }
static void v_gelu(gb_config *c) { c->act = GB_ACT_GELU; c->ffn = GB_FFN_PLAIN; }
static void v_swiglu(gb_config *c) { c->act = GB_ACT_SILU; c->ffn = GB_FFN_GATED; }
static void v_gqa(gb_config *c) { c->n_kv_head = 2; }
static void v_mqa(gb_config *c) { c->n_kv_head = 1; }
static void v_window(gb_config *c) { c->window = 4; }
static void v_untied(gb_config *c) { c->tied = 0; }
static void v_nobias(gb_config *c) { c->bias = 0; c->ffn_bias = 0; c->norm_bias = 0; }
static void v_bias(gb_config *c) { c->bias = 1; c->ffn_bias = 1; }
static void v_attnbias(gb_config *c) { c->bias = 1; }
static void v_textbook(gb_config *c) { c->textbook_ln = 1; c->norm_eps = 0.1f; }
static void v_learned(gb_config *c) { c->pos = GB_POS_LEARNED; c->norm = GB_NORM_LAYER; }
static void v_pad(gb_config *c) { c->pad_id = 2; }
static void v_prenorm(gb_config *c) { c->prenorm = 1; c->final_norm = 1; }
static void v_wide(gb_config *c) { c->d_model = 128; c->d_head = 32; c->d_ffn = 512; c->vocab = 300; }

static const variant variants[] = {
	{ "gpt2 default (pre LN, learned, tanh GELU)", GB_FAM_GPT2, v_none },
	{ "gpt2 post-norm", GB_FAM_GPT2, v_post },
	{ "gpt2 RMSNorm", GB_FAM_GPT2, v_rms },
	{ "gpt2 sinusoidal", GB_FAM_GPT2, v_sin },
	{ "gpt2 RoPE", GB_FAM_GPT2, v_rope },
	{ "gpt2 ALiBi", GB_FAM_GPT2, v_alibi },
	{ "gpt2 no positions", GB_FAM_GPT2, v_nopos },
	{ "gpt2 ReLU", GB_FAM_GPT2, v_relu },
	{ "gpt2 exact GELU", GB_FAM_GPT2, v_gelu },
	{ "gpt2 SwiGLU (fused gate)", GB_FAM_GPT2, v_swiglu },
	{ "gpt2 grouped-query (2 kv heads)", GB_FAM_GPT2, v_gqa },
	{ "gpt2 multi-query", GB_FAM_GPT2, v_mqa },
	{ "gpt2 local window 4", GB_FAM_GPT2, v_window },
	{ "gpt2 untied output", GB_FAM_GPT2, v_untied },
	{ "gpt2 no biases", GB_FAM_GPT2, v_nobias },
	{ "gpt2 textbook LayerNorm", GB_FAM_GPT2, v_textbook },
	{ "gpt2 padding mask", GB_FAM_GPT2, v_pad },
	{ "gpt2 d_model 128", GB_FAM_GPT2, v_wide },
	{ "llama default (RMS, RoPE, SwiGLU)", GB_FAM_LLAMA, v_none },
	{ "llama grouped-query", GB_FAM_LLAMA, v_gqa },
	{ "llama multi-query", GB_FAM_LLAMA, v_mqa },
	{ "llama biases", GB_FAM_LLAMA, v_bias },
	{ "llama attention biases only", GB_FAM_LLAMA, v_attnbias },
	{ "llama learned + LayerNorm", GB_FAM_LLAMA, v_learned },
	{ "llama plain GELU FFN", GB_FAM_LLAMA, v_gelu },
	{ "llama ALiBi + window", GB_FAM_LLAMA, v_alibi },
	{ "encdec default (post LN, sinusoidal, ReLU)", GB_FAM_ENCDEC, v_none },
	{ "encdec pre-norm", GB_FAM_ENCDEC, v_prenorm },
	{ "encdec RMSNorm", GB_FAM_ENCDEC, v_rms },
	{ "encdec learned", GB_FAM_ENCDEC, v_learned },
	{ "encdec SwiGLU", GB_FAM_ENCDEC, v_swiglu },
	{ "encdec grouped-query", GB_FAM_ENCDEC, v_gqa },
	{ "encdec padding", GB_FAM_ENCDEC, v_pad },
	{ "encdec untied", GB_FAM_ENCDEC, v_untied },
};

/* max |a - b| / max |ref| over the logits. */
static double rel_err(const gb_trace *a, const gb_trace *b)
{
	const gb_ttensor *x = gb_trace_get(a, "logits"), *y = gb_trace_get(b, "logits");
	double md = 0, mx = 0;
	for (size_t i = 0; i < x->n; i++) {
		md = fmax(md, fabs(x->data[i] - y->data[i]));
		mx = fmax(mx, fabs(x->data[i]));
	}
	return md / mx;
}

static void fast_vs_ref(void)
{
	const char *tables[] = { "scalar", "avx2", "avx512" };
	for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
		gb_config c = base(variants[v].family);
		variants[v].tweak(&c);
		if (variants[v].tweak == v_alibi && c.family == GB_FAM_LLAMA)
			c.window = 5;
		gb_model m;
		if (!tap_ok(make(&m, &c, 100 + v) == 0, "%s: builds", variants[v].what))
			continue;
		gb_rng r;
		gb_rng_seed(&r, v);
		int ids[19], tgt[7];
		for (int i = 0; i < 19; i++)
			ids[i] = gb_rng_below(&r, c.vocab);
		for (int i = 0; i < 7; i++)
			tgt[i] = i ? gb_rng_below(&r, c.vocab) : c.dec_start_id;
		if (c.pad_id >= 0)
			ids[17] = ids[18] = c.pad_id;
		gb_trace ref = { 0 };
		gb_err err;
		gb_fwd_opts o = { 0 };
		o.k = gb_kernels_ref();
		int rc = gb_forward(&m, ids, 19, c.encdec ? tgt : NULL, c.encdec ? 7 : 0, &ref, &o, &err);
		if (!tap_ok(rc == 0, "%s: ref runs", variants[v].what)) {
			tap_diag("%s", err.msg);
			continue;
		}
		double worst = 0;
		char used[64] = "";
		for (int t = 0; t < 3; t++) {
			const gb_kernels *k = gb_kernels_by_name(tables[t]);
			if (!k)
				continue;
			gb_trace tr = { 0 };
			o.k = k;
			gb_forward(&m, ids, 19, c.encdec ? tgt : NULL, c.encdec ? 7 : 0, &tr, &o, &err);
			worst = fmax(worst, rel_err(&ref, &tr));
			snprintf(used + strlen(used), sizeof used - strlen(used), "%s%s", used[0] ? "," : "", k->name);
			gb_trace_free(&tr);
		}
		/* The threshold of the issue: relative error of the logits <= 1e-4. */
		tap_ok(worst <= 1e-4, "%s: %s against ref, logits relative error %.2g <= 1e-4", variants[v].what, used, worst);
		gb_trace_free(&ref);
		gb_model_free(&m);
	}
}

/* Every tensor of two traces, bit for bit. */
static int same_trace(const gb_trace *a, const gb_trace *b)
{
	if (a->n != b->n)
		return 0;
	for (int i = 0; i < a->n; i++) {
		const gb_ttensor *x = &a->t[i], *y = &b->t[i];
		if (strcmp(x->name, y->name) || x->n != y->n || !x->data != !y->data ||
		    (x->data && memcmp(x->data, y->data, x->n * sizeof *x->data)))
			return 0;
	}
	return 1;
}

/* A prefill (40 tokens; an encoder-decoder's decoder 36): the fast tables batch row-wise
 * operations, let each head compute its own projections and run small products as row
 * operations (forward.c, attention.c), which shorter runs do not. Against ref as fast_vs_ref
 * does, and the whole trace the same bit for bit on 1, 2 and 3 threads. */
static void prefill_threads(void)
{
	const char *tables[] = { "scalar", "avx2", "avx512" };
	enum { N = 40, NT = 36 };
	for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
		gb_config c = base(variants[v].family);
		variants[v].tweak(&c);
		if (variants[v].tweak == v_alibi && c.family == GB_FAM_LLAMA)
			c.window = 5;
		c.n_ctx = 64;
		gb_model m;
		if (make(&m, &c, 300 + v))
			continue;
		gb_rng r;
		gb_rng_seed(&r, 50 + v);
		int ids[N], tgt[NT];
		for (int i = 0; i < N; i++)
			ids[i] = gb_rng_below(&r, c.vocab);
		for (int i = 0; i < NT; i++)
			tgt[i] = i ? gb_rng_below(&r, c.vocab) : c.dec_start_id;
		if (c.pad_id >= 0)
			ids[N - 2] = ids[N - 1] = c.pad_id;
		gb_trace ref = { 0 };
		gb_err err;
		gb_fwd_opts o = { 0 };
		o.k = gb_kernels_ref();
		if (gb_forward(&m, ids, N, c.encdec ? tgt : NULL, c.encdec ? NT : 0, &ref, &o, &err)) {
			tap_ok(0, "%s, %d tokens: ref runs (%s)", variants[v].what, N, err.msg);
			continue;
		}
		double worst = 0;
		int same = 1;
		char used[64] = "";
		for (int t = 0; t < 3; t++) {
			const gb_kernels *k = gb_kernels_by_name(tables[t]);
			gb_trace tr[4] = { { 0 } };
			if (!k)
				continue;
			o.k = k;
			for (int th = 1; th <= 3; th++) {
				gb_kernels_set_threads(th);
				gb_forward(&m, ids, N, c.encdec ? tgt : NULL, c.encdec ? NT : 0, &tr[th], &o, &err);
				if (th > 1 && !same_trace(&tr[1], &tr[th])) {
					if (same)
						tap_diag("%s: %s on %d threads differs from 1 thread", variants[v].what, k->name, th);
					same = 0;
				}
			}
			worst = fmax(worst, rel_err(&ref, &tr[1]));
			snprintf(used + strlen(used), sizeof used - strlen(used), "%s%s", used[0] ? "," : "", k->name);
			for (int th = 1; th <= 3; th++)
				gb_trace_free(&tr[th]);
		}
		gb_kernels_set_threads(0);
		tap_ok(worst <= 1e-4 && same, "%s, %d tokens: %s against ref, logits relative error %.2g <= 1e-4; "
		       "1, 2 and 3 threads give the same trace bit for bit", variants[v].what, N, used, worst);
		gb_trace_free(&ref);
		gb_model_free(&m);
	}
}

/* Padding: appending pad tokens to an encoder's input leaves the real positions unchanged. */
static void padding(void)
{
	gb_config c = base(GB_FAM_ENCDEC);
	c.pad_id = 0;
	gb_model m;
	if (make(&m, &c, 77))
		return;
	int src[8] = { 5, 6, 7, 8, 9, 0, 0, 0 }, tgt[3] = { 1, 4, 4 };
	gb_trace a = { 0 }, b = { 0 };
	gb_err err;
	gb_fwd_opts o = { 0 };
	o.k = gb_kernels_ref();
	gb_forward(&m, src, 5, tgt, 3, &a, &o, &err);
	gb_forward(&m, src, 8, tgt, 3, &b, &o, &err);
	const gb_ttensor *ea = gb_trace_get(&a, "enc.L2.resid.post"), *eb = gb_trace_get(&b, "enc.L2.resid.post");
	double we = 0;
	for (size_t i = 0; i < ea->n; i++)
		we = fmax(we, fabs(ea->data[i] - eb->data[i]));
	tap_ok(we < 1e-5, "padding: encoder outputs of real tokens unchanged by 3 pads (worst %.2g)", we);
	tap_ok(rel_err(&a, &b) < 1e-5, "padding: decoder logits unchanged by padded source");
	const gb_ttensor *cw = gb_trace_get(&b, "dec.L1.cross.weights");
	double padw = 0;
	for (int h = 0; h < 4; h++)
		for (int i = 0; i < 3; i++)
			for (int j = 5; j < 8; j++)
				padw += cw->data[(h * 3 + i) * 8 + j];
	tap_ok(padw == 0, "padding: cross-attention gives pads weight 0");
	gb_trace_free(&a);
	gb_trace_free(&b);
	gb_model_free(&m);
}

static void bad_input(void)
{
	gb_config c = base(GB_FAM_GPT2);
	gb_model m;
	if (make(&m, &c, 3))
		return;
	gb_trace tr = { 0 };
	gb_err err = { "" };
	int ids[40] = { 0 };
	tap_ok(gb_forward(&m, ids, 0, NULL, 0, &tr, NULL, &err) == -1 && strstr(err.msg, "empty"),
	       "empty text: error (%s)", err.msg);
	tap_ok(gb_forward(&m, ids, 33, NULL, 0, &tr, NULL, &err) == -1 && strstr(err.msg, "context holds 32"),
	       "text longer than the context: error (%s)", err.msg);
	ids[3] = 37;
	tap_ok(gb_forward(&m, ids, 5, NULL, 0, &tr, NULL, &err) == -1 && strstr(err.msg, "outside the vocabulary"),
	       "id outside the vocabulary: error (%s)", err.msg);
	gb_trace_free(&tr);
	gb_model_free(&m);
}

int main(void)
{
	hand_worked();
	invariants();
	positions();
	padding();
	fast_vs_ref();
	prefill_threads();
	bad_input();
	return tap_done();
}
