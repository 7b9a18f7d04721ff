/* t_grad.c — gradients against finite differences.
 *
 * Part 1, one line per operation of model/grad_ops.h: the double build's backward against
 * central differences (Richardson-extrapolated, h = 1e-3, so truncation and rounding errors
 * are both ~1e-12) of L = Σ r ⊙ y, r random, on random inputs of odd sizes. Each line states
 * the largest relative error |analytic - numeric| / max(|analytic|, |numeric|, 1e-6) over
 * every input element; the bar is 1e-6.
 *
 * Part 2, whole models (decoder-only gpt2-like and llama-like, encoder-decoder), small and
 * random, every parameter perturbed off its init so no gradient is special:
 *  - the double forward (gb_model_fwd_d) agrees with gb_forward on the reference table;
 *  - the double backward against finite differences of the double loss, on samples of every
 *    parameter tensor (random entries plus the entry of largest gradient): bar 1e-6, with
 *    the floor of the relative error at 1e-4 (the losses are ~30, whose rounding leaves
 *    ~1e-11 of noise in a difference: a gradient that is exactly 0, as the key bias's is,
 *    would otherwise measure noise against nothing);
 *  - the float training path (gb_forward with the fast table, then gb_backward from its trace)
 *    against the double gradient: max |g_float - g_double| / max|g_double| per tensor (at
 *    least 1e-2 of the largest gradient of the model), bar 1e-4
 *    (float's ~1e-7 rounding grown through a few layers; a wiring mistake gives ~1). */
#include "tests/tap.h"

#include <string.h>

#include "model/forward.h"
#include "model/train/grad_ops.h"
#include "model/rng.h"
#include "model/train/train.h"

static gb_rng rng;
static gb_ws ws;

static void fill(double *x, size_t n, double sd, double mean)
{
	for (size_t i = 0; i < n; i++)
		x[i] = mean + sd * gb_rng_normal(&rng);
}

static double *dnew(size_t n)
{
	double *p = calloc(n ? n : 1, sizeof *p);
	if (!p)
		abort();
	return p;
}

static double dot(const double *a, const double *b, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += a[i] * b[i];
	return s;
}

typedef double (*loss_fn)(void *ctx);

static double fd_h(loss_fn f, void *ctx, double *x, size_t i, double h)
{
	double x0 = x[i], a, b, c, d;
	x[i] = x0 + h, a = f(ctx);
	x[i] = x0 - h, b = f(ctx);
	x[i] = x0 + h / 2, c = f(ctx);
	x[i] = x0 - h / 2, d = f(ctx);
	x[i] = x0;
	double d1 = (a - b) / (2 * h), d2 = (c - d) / h;
	return (4 * d2 - d1) / 3; /* cancels the h² term */
}

static double fd(loss_fn f, void *ctx, double *x, size_t i) { return fd_h(f, ctx, x, i, 1e-3); }

/* floor: below it, gradients are compared absolutely (error / floor). */
static double relerr_floor(double a, double n, double floor)
{
	double s = fmax(fmax(fabs(a), fabs(n)), floor);
	return fabs(a - n) / s;
}

static double relerr(double a, double n) { return relerr_floor(a, n, 1e-6); }

/* The largest error over x (n) of the analytic gradient g against finite differences. */
static double check(loss_fn f, void *ctx, double *x, size_t n, const double *g, int *count)
{
	double worst = 0;
	for (size_t i = 0; i < n; i++) {
		double e = relerr(g[i], fd(f, ctx, x, i));
		worst = e > worst ? e : worst;
	}
	*count += (int)n;
	return worst;
}

static void report(const char *what, double err, int count)
{
	tap_ok(err <= 1e-6, "%s: largest relative error %.2e over %d values (bar 1e-6)", what, err, count);
}

/* ---- part 1: each operation ---- */

typedef struct lin_ctx {
	int T, in, out, trans;
	double *x, *w, *b, *r, *y;
} lin_ctx;

static double lin_loss(void *p)
{
	lin_ctx *c = p;
	gb_linear_fwd_d(NULL, c->y, c->x, c->w, c->b, c->T, c->in, c->out, c->trans);
	return dot(c->r, c->y, (size_t)c->T * c->out);
}

static void t_linear(int trans)
{
	lin_ctx c = { 5, 7, 9, trans, 0, 0, 0, 0, 0 };
	size_t nx = (size_t)c.T * c.in, nw = (size_t)c.in * c.out, ny = (size_t)c.T * c.out;
	c.x = dnew(nx), c.w = dnew(nw), c.b = dnew((size_t)c.out), c.r = dnew(ny), c.y = dnew(ny);
	fill(c.x, nx, 1, 0), fill(c.w, nw, 0.5, 0), fill(c.b, (size_t)c.out, 0.5, 0), fill(c.r, ny, 1, 0);
	double *dx = dnew(nx), *dw = dnew(nw), *db = dnew((size_t)c.out);
	gb_linear_bwd_d(NULL, &ws, dx, 0, dw, db, c.r, c.x, c.w, c.T, c.in, c.out, trans);
	int n = 0;
	double e = check(lin_loss, &c, c.x, nx, dx, &n);
	e = fmax(e, check(lin_loss, &c, c.w, nw, dw, &n));
	e = fmax(e, check(lin_loss, &c, c.b, (size_t)c.out, db, &n));
	report(trans ? "linear, nn.Linear layout W (out, in)" : "linear, Conv1D layout W (in, out)", e, n);
	free(c.x), free(c.w), free(c.b), free(c.r), free(c.y), free(dx), free(dw), free(db);
}

typedef struct norm_ctx {
	int T, D, rms, textbook;
	double eps;
	double *x, *g, *b, *r, *y, *s1, *s2;
} norm_ctx;

static double norm_loss(void *p)
{
	norm_ctx *c = p;
	if (c->rms)
		gb_rmsnorm_fwd_d(c->y, c->s1, c->x, c->g, c->T, c->D, c->eps);
	else
		gb_layernorm_fwd_d(c->y, c->s1, c->s2, c->x, c->g, c->b, c->T, c->D, c->eps, c->textbook);
	return dot(c->r, c->y, (size_t)c->T * c->D);
}

static void t_norm(int rms, int textbook, const char *what)
{
	norm_ctx c = { 5, 11, rms, textbook, 1e-5, 0, 0, 0, 0, 0, 0, 0 };
	size_t n = (size_t)c.T * c.D;
	c.x = dnew(n), c.g = dnew((size_t)c.D), c.b = dnew((size_t)c.D), c.r = dnew(n), c.y = dnew(n);
	c.s1 = dnew((size_t)c.T), c.s2 = dnew((size_t)c.T);
	fill(c.x, n, 2, 0.5), fill(c.g, (size_t)c.D, 0.3, 1), fill(c.b, (size_t)c.D, 0.3, 0), fill(c.r, n, 1, 0);
	double *dx = dnew(n), *dg = dnew((size_t)c.D), *db = dnew((size_t)c.D);
	norm_loss(&c);
	if (rms)
		gb_rmsnorm_bwd_d(dx, 0, dg, c.r, c.x, c.s1, c.g, c.T, c.D);
	else
		gb_layernorm_bwd_d(dx, 0, dg, db, c.r, c.x, c.s1, c.s2, c.g, c.T, c.D, c.eps, textbook);
	int cnt = 0;
	double e = check(norm_loss, &c, c.x, n, dx, &cnt);
	e = fmax(e, check(norm_loss, &c, c.g, (size_t)c.D, dg, &cnt));
	if (!rms)
		e = fmax(e, check(norm_loss, &c, c.b, (size_t)c.D, db, &cnt));
	report(what, e, cnt);
	free(c.x), free(c.g), free(c.b), free(c.r), free(c.y), free(c.s1), free(c.s2), free(dx), free(dg), free(db);
}

typedef struct sm_ctx {
	int rows, n;
	double *x, *y, *r;
} sm_ctx;

static double sm_loss(void *p)
{
	sm_ctx *c = p;
	memcpy(c->y, c->x, (size_t)c->rows * c->n * sizeof *c->y);
	gb_softmax_fwd_d(c->y, c->rows, c->n);
	return dot(c->r, c->y, (size_t)c->rows * c->n);
}

static void t_softmax(void)
{
	sm_ctx c = { 6, 9, 0, 0, 0 };
	size_t n = (size_t)c.rows * c.n;
	c.x = dnew(n), c.y = dnew(n), c.r = dnew(n);
	fill(c.x, n, 2, 0), fill(c.r, n, 1, 0);
	for (int j = 0; j < c.n; j++) /* row 2 entirely masked, row 4 partly */
		c.x[2 * c.n + j] = -INFINITY;
	c.x[4 * c.n + 1] = c.x[4 * c.n + 7] = -INFINITY;
	double *dz = dnew(n);
	sm_loss(&c);
	gb_softmax_bwd_d(dz, c.r, c.y, c.rows, c.n);
	int cnt = 0;
	double e = check(sm_loss, &c, c.x, n, dz, &cnt);
	report("masked softmax (a fully masked row, -inf entries)", e, cnt);
	free(c.x), free(c.y), free(c.r), free(dz);
}

typedef struct att_ctx {
	gb_attn_spec s;
	int linear;           /* linear attention (elu + 1 features) instead of softmax */
	double *q, *k, *v, *w, *o, *r, *relb;
} att_ctx;

static double att_loss(void *p)
{
	att_ctx *c = p;
	if (c->linear)
		gb_linattn_fwd_d(NULL, &ws, &c->s, c->w, c->o, c->q, c->k, c->v);
	else
		gb_attn_fwd_d(NULL, &ws, &c->s, c->w, c->o, c->q, c->k, c->v, c->relb);
	return dot(c->r, c->o, (size_t)c->s.H * c->s.Tq * c->s.E);
}

/* kind 0: softmax; 1: softmax with T5's relative bias (8 buckets, max distance 6, so both the
 * exact and the log-spaced buckets occur; bidirectional without the causal mask); 2: linear. */
static void t_attention_kind(int H, int K, int E, int Tq, int Tk, int causal, int window, int alibi, int pad,
                             int kind, const char *what)
{
	att_ctx c;
	unsigned char mask[64] = { 0 };
	int bucket[64 * 64], nb = 8;
	memset(&c, 0, sizeof c);
	c.s.H = H, c.s.K = K, c.s.E = E, c.s.Tq = Tq, c.s.Tk = Tk;
	c.s.causal = causal, c.s.window = window, c.s.alibi = alibi;
	c.linear = kind == 2;
	c.relb = dnew((size_t)nb * H);
	fill(c.relb, (size_t)nb * H, 1, 0);
	if (kind == 1) {
		for (int i = 0; i < Tq; i++)
			for (int j = 0; j < Tk; j++)
				bucket[i * Tk + j] = gb_t5_bucket(j - i, !causal, nb, 6);
		c.s.bucket = bucket;
	}
	if (pad) {
		mask[1] = mask[Tk - 2] = 1;
		c.s.key_masked = mask;
	}
	size_t nq = (size_t)H * Tq * E, nk = (size_t)K * Tk * E, nw = (size_t)H * Tq * Tk;
	c.q = dnew(nq), c.k = dnew(nk), c.v = dnew(nk), c.w = dnew(nw), c.o = dnew(nq), c.r = dnew(nq);
	fill(c.q, nq, 1, 0), fill(c.k, nk, 1, 0), fill(c.v, nk, 1, 0), fill(c.r, nq, 1, 0);
	double *dq = dnew(nq), *dk = dnew(nk), *dv = dnew(nk);
	double *drelb = dnew((size_t)nb * H);
	att_loss(&c);
	if (c.linear)
		gb_linattn_bwd_d(NULL, &ws, &c.s, dq, dk, dv, c.r, c.q, c.k, c.v, c.w);
	else
		gb_attn_bwd_d(NULL, &ws, &c.s, dq, dk, dv, c.r, c.q, c.k, c.v, c.w, drelb);
	int cnt = 0;
	double e = check(att_loss, &c, c.q, nq, dq, &cnt);
	e = fmax(e, check(att_loss, &c, c.k, nk, dk, &cnt));
	e = fmax(e, check(att_loss, &c, c.v, nk, dv, &cnt));
	if (kind == 1)
		e = fmax(e, check(att_loss, &c, c.relb, (size_t)nb * H, drelb, &cnt));
	report(what, e, cnt);
	free(c.q), free(c.k), free(c.v), free(c.w), free(c.o), free(c.r), free(dq), free(dk), free(dv);
	free(c.relb), free(drelb);
}

static void t_attention(int H, int K, int E, int Tq, int Tk, int causal, int window, int alibi, int pad,
                        const char *what)
{
	t_attention_kind(H, K, E, Tq, Tk, causal, window, alibi, pad, 0, what);
}

typedef struct rope_ctx {
	int T, E;
	double *x, *y, *r, *cs, *sn;
} rope_ctx;

static double rope_loss(void *p)
{
	rope_ctx *c = p;
	memcpy(c->y, c->x, (size_t)c->T * c->E * sizeof *c->y);
	gb_rope_apply_d(c->y, c->cs, c->sn, c->T, c->E, 1);
	return dot(c->r, c->y, (size_t)c->T * c->E);
}

static void t_rope_one(int scale)
{
	rope_ctx c = { 7, 10, 0, 0, 0, 0, 0 };
	gb_config cf;
	gb_config_defaults(&cf, GB_FAM_LLAMA);
	cf.d_head = c.E;
	cf.rope_theta = 10000.0f;
	cf.rope_scale = scale;
	cf.rope_factor = 4, cf.rope_low = 1, cf.rope_high = 4, cf.rope_orig_ctx = 64;
	size_t n = (size_t)c.T * c.E;
	c.x = dnew(n), c.y = dnew(n), c.r = dnew(n), c.cs = dnew(n / 2), c.sn = dnew(n / 2);
	fill(c.x, n, 1, 0), fill(c.r, n, 1, 0);
	gb_rope_tables_d(c.cs, c.sn, c.T, &cf);
	double *dx = dnew(n);
	memcpy(dx, c.r, n * sizeof *dx);
	gb_rope_apply_d(dx, c.cs, c.sn, c.T, c.E, -1);
	int cnt = 0;
	double e = check(rope_loss, &c, c.x, n, dx, &cnt);
	/* and the forward agrees with the engine's rotation */
	float xf[70];
	double worst = 0;
	for (size_t i = 0; i < n; i++)
		xf[i] = (float)c.x[i];
	gb_rope(xf, c.T, c.E, 0, &cf);
	rope_loss(&c);
	for (size_t i = 0; i < n; i++)
		worst = fmax(worst, fabs(xf[i] - c.y[i]));
	char what[96];
	snprintf(what, sizeof what, "RoPE (rotate-half, 7 positions, width 10, scaling %s)", gb_rope_scale_names[scale]);
	report(what, e, cnt);
	tap_ok(worst < 1e-5, "RoPE, scaling %s: the double rotation matches gb_rope (largest difference %.1e)",
	       gb_rope_scale_names[scale], worst);
	free(c.x), free(c.y), free(c.r), free(c.cs), free(c.sn), free(dx);
}

static void t_rope(void)
{
	t_rope_one(GB_ROPE_SCALE_NONE);
	/* The scaled case draws its numbers from a copy of the generator, so the models checked
	 * after it keep their weights: the ReLU models' samples are placed clear of the kink for
	 * exactly those weights (see the encoder-decoder below). */
	gb_rng keep = rng;
	t_rope_one(GB_ROPE_SCALE_LLAMA3);
	rng = keep;
}

typedef struct act_ctx {
	int act;
	size_t n;
	double *x, *x2, *y, *r;
} act_ctx;

static double act_loss(void *p)
{
	act_ctx *c = p;
	if (c->x2)
		gb_swiglu_fwd_d(c->y, c->x, c->x2, c->n);
	else
		gb_act_fwd_d(c->y, c->x, c->n, c->act);
	return dot(c->r, c->y, c->n);
}

static void t_act(int act, const char *what)
{
	act_ctx c = { act, 37, 0, 0, 0, 0 };
	c.x = dnew(c.n), c.y = dnew(c.n), c.r = dnew(c.n);
	fill(c.x, c.n, 2, 0), fill(c.r, c.n, 1, 0);
	for (size_t i = 0; i < c.n; i++) /* keep ReLU's kink out of the differences' reach */
		if (fabs(c.x[i]) < 0.01)
			c.x[i] = 0.5;
	double *dx = dnew(c.n);
	gb_act_bwd_d(dx, c.r, c.x, c.n, act);
	int cnt = 0;
	double e = check(act_loss, &c, c.x, c.n, dx, &cnt);
	report(what, e, cnt);
	free(c.x), free(c.y), free(c.r), free(dx);
}

static void t_swiglu(void)
{
	act_ctx c = { 0, 37, 0, 0, 0, 0 };
	c.x = dnew(c.n), c.x2 = dnew(c.n), c.y = dnew(c.n), c.r = dnew(c.n);
	fill(c.x, c.n, 2, 0), fill(c.x2, c.n, 1, 0), fill(c.r, c.n, 1, 0);
	double *dg = dnew(c.n), *du = dnew(c.n);
	gb_swiglu_bwd_d(dg, du, c.r, c.x, c.x2, c.n);
	int cnt = 0;
	double e = check(act_loss, &c, c.x, c.n, dg, &cnt);
	e = fmax(e, check(act_loss, &c, c.x2, c.n, du, &cnt));
	report("SwiGLU silu(gate) * up", e, cnt);
	free(c.x), free(c.x2), free(c.y), free(c.r), free(dg), free(du);
}

typedef struct emb_ctx {
	int T, D, V;
	const int *ids;
	double scale;
	double *E, *pos, *y, *r;
} emb_ctx;

static double emb_loss(void *p)
{
	emb_ctx *c = p;
	gb_embed_fwd_d(c->y, c->ids, c->E, c->pos, c->scale, c->T, c->D);
	return dot(c->r, c->y, (size_t)c->T * c->D);
}

static void t_embed(void)
{
	static const int ids[] = { 3, 1, 3, 6, 0, 3 };
	emb_ctx c = { 6, 5, 7, ids, 2.2360679775, 0, 0, 0, 0 };
	size_t ne = (size_t)c.V * c.D, np = (size_t)c.T * c.D;
	c.E = dnew(ne), c.pos = dnew(np), c.y = dnew(np), c.r = dnew(np);
	fill(c.E, ne, 1, 0), fill(c.pos, np, 1, 0), fill(c.r, np, 1, 0);
	double *dE = dnew(ne), *dP = dnew(np);
	gb_embed_bwd_d(dE, dP, c.r, ids, c.scale, c.T, c.D);
	int cnt = 0;
	double e = check(emb_loss, &c, c.E, ne, dE, &cnt);
	e = fmax(e, check(emb_loss, &c, c.pos, np, dP, &cnt));
	report("embedding lookup (repeated ids, scaled) + learned positions", e, cnt);
	float pf[6 * 8];
	double pd[6 * 8], worst = 0;
	gb_sinusoid(pf, 6, 8);
	gb_sinusoid_d(pd, 6, 8);
	for (int i = 0; i < 48; i++)
		worst = fmax(worst, fabs(pf[i] - pd[i]));
	tap_ok(worst < 1e-6, "sinusoidal positions (a constant: no gradient) match gb_sinusoid (%.1e)", worst);
	free(c.E), free(c.pos), free(c.y), free(c.r), free(dE), free(dP);
}

typedef struct xe_ctx {
	int T, V;
	const int *tgt;
	double eps;
	double *z;
} xe_ctx;

static double xe_loss(void *p)
{
	xe_ctx *c = p;
	int n;
	return gb_xent_d(NULL, c->z, NULL, c->tgt, c->T, c->V, c->eps, 1, &n, NULL);
}

static void t_xent(void)
{
	static const int tgt[] = { 4, -1, 0, 10, 7, 7 };
	xe_ctx c = { 6, 11, tgt, 0.1, 0 };
	size_t n = (size_t)c.T * c.V;
	c.z = dnew(n);
	fill(c.z, n, 3, 0);
	double *dz = dnew(n);
	int cnt = 0, counted;
	gb_xent_d(dz, c.z, NULL, tgt, c.T, c.V, c.eps, 1, &counted, NULL);
	double e = check(xe_loss, &c, c.z, n, dz, &cnt);
	report("cross-entropy, label smoothing 0.1, one ignored target", e, cnt);
	/* given probabilities (the float path's shortcut) the loss is the same */
	double *p = dnew(n);
	memcpy(p, c.z, n * sizeof *p);
	gb_softmax_fwd_d(p, c.T, c.V);
	double l1 = gb_xent_d(NULL, c.z, NULL, tgt, c.T, c.V, c.eps, 1, &counted, NULL);
	double l2 = gb_xent_d(NULL, c.z, p, tgt, c.T, c.V, c.eps, 1, &counted, NULL);
	tap_ok(fabs(l1 - l2) < 1e-12 * fabs(l1) && counted == 5,
	       "cross-entropy from the softmax's output equals it from the logits (%.3g vs %.3g, %d counted)", l1, l2,
	       counted);
	free(c.z), free(dz), free(p);
}

/* A pre-norm residual block, y = x + LN(x) W: the residual add's two paths meet. */
typedef struct res_ctx {
	int T, D;
	double *x, *w, *r, *n, *y, *mean, *var;
} res_ctx;

static double res_loss(void *p)
{
	res_ctx *c = p;
	size_t n = (size_t)c->T * c->D;
	gb_layernorm_fwd_d(c->n, c->mean, c->var, c->x, NULL, NULL, c->T, c->D, 1e-5, 0);
	gb_linear_fwd_d(NULL, c->y, c->n, c->w, NULL, c->T, c->D, c->D, 0);
	for (size_t i = 0; i < n; i++)
		c->y[i] += c->x[i];
	return dot(c->r, c->y, n);
}

static void t_residual(void)
{
	res_ctx c = { 3, 7, 0, 0, 0, 0, 0, 0, 0 };
	size_t n = (size_t)c.T * c.D;
	c.x = dnew(n), c.w = dnew((size_t)c.D * c.D), c.r = dnew(n), c.n = dnew(n), c.y = dnew(n);
	c.mean = dnew((size_t)c.T), c.var = dnew((size_t)c.T);
	fill(c.x, n, 1, 0), fill(c.w, (size_t)c.D * c.D, 0.5, 0), fill(c.r, n, 1, 0);
	res_loss(&c);
	double *dn = dnew(n), *dx = dnew(n);
	memcpy(dx, c.r, n * sizeof *dx); /* the identity path */
	gb_linear_bwd_d(NULL, &ws, dn, 0, NULL, NULL, c.r, c.n, c.w, c.T, c.D, c.D, 0);
	gb_layernorm_bwd_d(dx, 1, NULL, NULL, dn, c.x, c.mean, c.var, NULL, c.T, c.D, 1e-5, 0);
	int cnt = 0;
	double e = check(res_loss, &c, c.x, n, dx, &cnt);
	report("residual add, y = x + LN(x) W", e, cnt);
	free(c.x), free(c.w), free(c.r), free(c.n), free(c.y), free(c.mean), free(c.var), free(dn), free(dx);
}

/* ---- part 2: whole models ---- */

/* The weight of the load-balancing loss in the whole-model checks: large, so a wrong gradient of
 * it shows. (The float path's is the config's coefficient, set to the same in t_model.) */
#define AUX_SCALE 0.5


typedef struct mdl_ctx {
	const gb_model *m;
	double *P;
	const int *ids, *tgt_in, *tgt;
	int n, n_tgt;
	double eps;
} mdl_ctx;

static double mdl_loss(void *p)
{
	mdl_ctx *c = p;
	gb_acts_d a;
	gb_err err;
	size_t mark = gb_ws_mark(&ws);
	if (gb_model_fwd_d(c->m, c->P, c->ids, c->n, c->tgt_in, c->n_tgt, &a, NULL, &ws, &err)) {
		tap_diag("%s", err.msg);
		return NAN;
	}
	int T = c->m->cfg.encdec ? c->n_tgt : c->n, cnt;
	double l = gb_xent_d(NULL, a.logits, NULL, c->tgt, T, c->m->cfg.vocab, c->eps, 1, &cnt, NULL);
	l += AUX_SCALE * a.aux; /* the load-balancing loss, when the model has experts */
	gb_ws_release(&ws, mark);
	return l;
}

static void small_config(gb_config *c, int family)
{
	gb_config_defaults(c, family);
	c->d_model = 16;
	c->n_layer = 2;
	c->n_enc_layer = family == GB_FAM_ENCDEC ? 2 : 0;
	c->n_head = c->n_kv_head = 4;
	c->d_head = 4;
	c->d_ffn = 24;
	c->vocab = 29;
	c->n_ctx = 16;
	c->pad_id = 0;
	c->bos_id = c->dec_start_id = 1;
}

static void t_model(const gb_config *cfg, int pad_first, double eps, const char *what)
{
	gb_model m;
	gb_err err;
	if (!tap_ok(gb_model_init(&m, cfg, 11, 0.3f, &err) == 0, "%s: a random model", what)) {
		tap_diag("%s", err.msg);
		return;
	}
	/* move gains and biases off 1 and 0 */
	for (int i = 0; i < m.n_params; i++)
		if (m.params[i].init)
			for (size_t j = 0; j < m.params[i].n; j++)
				m.params[i].data[j] += (float)(0.2 * gb_rng_normal(&rng));
	const gb_config *c = &m.cfg;
	int n = 9, n_tgt = c->encdec ? 7 : 0, T = c->encdec ? n_tgt : n;
	int ids[16], tin[16], tgt[16];
	for (int i = 0; i < 16; i++) {
		ids[i] = 2 + gb_rng_below(&rng, c->vocab - 2);
		tin[i] = 2 + gb_rng_below(&rng, c->vocab - 2);
		tgt[i] = 2 + gb_rng_below(&rng, c->vocab - 2);
	}
	ids[pad_first ? 0 : 4] = c->pad_id; /* a padded key (at 0: a query that sees nothing) */
	if (c->encdec) {
		ids[n - 1] = c->pad_id;
		tin[0] = c->dec_start_id;
	}
	tgt[2] = -1;
	double *P = dnew(m.n_weights), *G = dnew(m.n_weights);
	for (size_t i = 0; i < m.n_weights; i++)
		P[i] = m.owned[i];
	mdl_ctx x = { &m, P, ids, c->encdec ? tin : NULL, tgt, n, n_tgt, eps };

	/* the double forward agrees with the engine */
	gb_acts_d a;
	gb_trace tr = { 0 };
	gb_fwd_opts fo = { 0 };
	fo.k = gb_kernels_ref();
	gb_ws_reset(&ws);
	int rc = gb_model_fwd_d(&m, P, ids, n, x.tgt_in, n_tgt, &a, NULL, &ws, &err);
	rc |= gb_forward(&m, ids, n, x.tgt_in, n_tgt, &tr, &fo, &err);
	if (!tap_ok(rc == 0, "%s: forward passes run", what)) {
		tap_diag("%s", err.msg);
		return;
	}
	const gb_ttensor *lg = gb_trace_get(&tr, "logits");
	double diff = 0, big = 0;
	for (size_t i = 0; i < (size_t)T * c->vocab; i++) {
		diff = fmax(diff, fabs(lg->data[i] - a.logits[i]));
		big = fmax(big, fabs(a.logits[i]));
	}
	tap_ok(diff <= 1e-5 * big, "%s: double forward = gb_forward (ref): logits differ by %.1e (largest %.2g)", what,
	       diff, big);

	/* the double backward against finite differences */
	double *dz = dnew((size_t)T * c->vocab);
	int cnt;
	gb_xent_d(dz, a.logits, NULL, tgt, T, c->vocab, eps, 1, &cnt, NULL);
	rc = gb_model_bwd_d(&m, P, &a, dz, AUX_SCALE, G, NULL, &ws, &err);
	if (!tap_ok(rc == 0, "%s: double backward runs", what))
		tap_diag("%s", err.msg);
	double worst = 0;
	int checked = 0, remeasured = 0;
	const char *worst_name = "";
	for (int i = 0; i < m.n_params; i++) {
		const gb_param *p = &m.params[i];
		size_t off = (size_t)(p->data - m.owned), big_j = 0;
		for (size_t j = 0; j < p->n; j++)
			if (fabs(G[off + j]) > fabs(G[off + big_j]))
				big_j = j;
		size_t pick[5] = { big_j, (size_t)gb_rng_below(&rng, (int)p->n), (size_t)gb_rng_below(&rng, (int)p->n),
		                   (size_t)gb_rng_below(&rng, (int)p->n), (size_t)gb_rng_below(&rng, (int)p->n) };
		for (int s = 0; s < 5; s++) {
			size_t j = off + pick[s];
			double e = relerr_floor(G[j], fd(mdl_loss, &x, P, j), 1e-4);
			/* A kink within the step (a ReLU unit, an expert's routing that flips) breaks the
			 * differences, not the gradient: such a sample is measured again with a step ten
			 * times smaller, which a wrong gradient fails as well. */
			if (e > 1e-6) {
				double e2 = relerr_floor(G[j], fd_h(mdl_loss, &x, P, j, 1e-4), 1e-4);
				if (e2 < e) {
					remeasured++;
					e = e2;
				}
			}
			checked++;
			if (e > worst) {
				worst = e;
				worst_name = p->name;
			}
		}
	}
	tap_ok(worst <= 1e-6, "%s: whole-model gradient (double) vs finite differences: largest relative error %.2e "
	       "(%s) over %d samples of all %d tensors (bar 1e-6; floor 1e-4)", what, worst, worst_name, checked,
	       m.n_params);
	if (remeasured)
		tap_diag("%s: %d sample%s had a kink within the step 1e-3 and %s measured again with 1e-4", what, remeasured,
		         remeasured == 1 ? "" : "s", remeasured == 1 ? "was" : "were");

	/* the float training path against the double gradient */
	float *gf = calloc(m.n_weights, sizeof *gf);
	gb_ws fws = { 0 };
	double floss;
	int fcnt;
	fo.k = gb_kernels_fast();
	m.cfg.aux_coef = (float)(AUX_SCALE / cnt); /* gb_backward weighs it by the counted targets */
	rc = gb_forward(&m, ids, n, x.tgt_in, n_tgt, &tr, &fo, &err);
	rc |= gb_backward(&m, &tr, tgt, eps, 1.0, gf, fo.k, &fws, &floss, &fcnt, NULL, &err);
	if (!tap_ok(rc == 0, "%s: float backward from the trace runs", what))
		tap_diag("%s", err.msg);
	double fworst = 0, gmax = 0; /* gb_backward's loss is the cross-entropy alone */
	double dloss = gb_xent_d(NULL, a.logits, NULL, tgt, T, c->vocab, eps, 1, NULL, NULL);
	const char *fname = "";
	for (size_t j = 0; j < m.n_weights; j++)
		gmax = fmax(gmax, fabs(G[j]));
	for (int i = 0; i < m.n_params; i++) {
		const gb_param *p = &m.params[i];
		size_t off = (size_t)(p->data - m.owned);
		double mx = 1e-2 * gmax, d = 0; /* some tensors' gradients are exactly 0 (k's bias) */
		for (size_t j = 0; j < p->n; j++) {
			mx = fmax(mx, fabs(G[off + j]));
			d = fmax(d, fabs(G[off + j] - gf[off + j]));
		}
		if (d / mx > fworst) {
			fworst = d / mx;
			fname = p->name;
		}
	}
	tap_ok(fworst <= 1e-4 && fabs(floss - dloss) <= 1e-5 * fabs(dloss) && fcnt == cnt,
	       "%s: float gradient (gb_forward + gb_backward) vs double: largest per-tensor error %.1e (%s); loss %.7g "
	       "vs %.7g (bar 1e-4)", what, fworst, fname, floss, dloss);
	free(gf);
	gb_ws_free(&fws);
	gb_trace_free(&tr);
	free(dz), free(P), free(G);
	gb_model_free(&m);
}

int main(void)
{
	gb_rng_seed(&rng, 20240607);
	t_linear(0);
	t_linear(1);
	t_norm(0, 0, "LayerNorm, sqrt(var + eps)");
	t_norm(0, 1, "LayerNorm, textbook (sigma + eps)");
	t_norm(1, 0, "RMSNorm");
	t_softmax();
	t_attention(4, 2, 3, 7, 7, 1, 0, 0, 1, "attention core: causal, padded keys, 4 heads on 2 key/value heads");
	t_attention(4, 4, 5, 7, 7, 0, 3, 1, 0, "attention core: ALiBi, local window 3, no causal mask");
	t_attention(2, 1, 3, 5, 9, 0, 0, 0, 1, "attention core: cross-attention 5 queries x 9 keys, padded keys");
	t_attention_kind(4, 2, 3, 9, 9, 1, 0, 0, 1, 1, "attention core: T5 relative bias, causal, padded keys, GQA 4/2");
	t_attention_kind(2, 2, 3, 9, 9, 0, 0, 0, 0, 1, "attention core: T5 relative bias, bidirectional (encoder)");
	t_attention_kind(4, 2, 3, 7, 7, 1, 0, 0, 1, 2, "linear attention (elu + 1), causal, padded keys, GQA 4/2");
	t_attention_kind(2, 1, 4, 5, 9, 0, 0, 0, 1, 2, "linear attention (elu + 1), 5 queries x 9 keys, no mask");
	t_rope();
	t_act(GB_ACT_GELU, "GELU exact, x Phi(x)");
	t_act(GB_ACT_GELU_TANH, "GELU tanh approximation");
	t_act(GB_ACT_RELU, "ReLU");
	t_act(GB_ACT_SILU, "SiLU");
	t_swiglu();
	t_embed();
	t_xent();
	t_residual();

	gb_config c;
	small_config(&c, GB_FAM_GPT2); /* tiny-lm's shape, small */
	t_model(&c, 0, 0.1, "gpt2: pre-LN, tanh GELU, learned positions, tied, padded key");
	small_config(&c, GB_FAM_GPT2);
	c.act = GB_ACT_GELU;
	c.pos = GB_POS_ALIBI;
	c.window = 4;
	c.textbook_ln = 1;
	c.tied = 0;
	c.norm_bias = 0;
	t_model(&c, 0, 0.0, "gpt2: exact GELU, ALiBi, window 4, textbook LN, untied");
	small_config(&c, GB_FAM_GPT2);
	c.act = GB_ACT_SILU;
	c.ffn = GB_FFN_GATED;
	c.pos = GB_POS_SINUSOIDAL;
	c.n_kv_head = 2;
	t_model(&c, 1, 0.0, "gpt2: fused SwiGLU, sinusoidal, GQA 4/2, pad at position 0");
	small_config(&c, GB_FAM_LLAMA);
	c.n_kv_head = 2;
	t_model(&c, 0, 0.1, "llama: RMSNorm, RoPE, SwiGLU, GQA 4/2, untied, no biases");
	small_config(&c, GB_FAM_ENCDEC); /* tiny-mt's shape, small */
	t_model(&c, 0, 0.1, "encdec: post-LN, sinusoidal, ReLU, scaled embeddings, 2+2 layers");
	small_config(&c, GB_FAM_ENCDEC);
	c.prenorm = 1;
	c.final_norm = 1;
	c.pos = GB_POS_LEARNED;
	c.act = GB_ACT_SILU;
	c.ffn = GB_FFN_GATED;
	c.n_kv_head = 1;
	c.norm = GB_NORM_RMS;
	t_model(&c, 0, 0.0, "encdec: pre-RMSNorm, learned positions, fused SwiGLU, 4 heads on 1 key/value head");

	/* tiny-lm's variants (gpt2 family, model/train/variants.c), each a change of the first */
	small_config(&c, GB_FAM_GPT2);
	c.pos = GB_POS_ROPE;
	t_model(&c, 0, 0.0, "gpt2: RoPE (tiny-lm-rope)");
	small_config(&c, GB_FAM_GPT2);
	c.pos = GB_POS_NONE;
	c.n_kv_head = 1;
	t_model(&c, 0, 0.0, "gpt2: no positions, multi-query (tiny-lm-nopos, -mqa)");
	small_config(&c, GB_FAM_GPT2);
	c.prenorm = c.final_norm = 0;
	t_model(&c, 0, 0.0, "gpt2: post-norm (tiny-lm-postnorm)");
	small_config(&c, GB_FAM_GPT2);
	c.norm = GB_NORM_RMS;
	c.window = 3;
	t_model(&c, 0, 0.0, "gpt2: RMSNorm, window 3 (tiny-lm-rmsnorm, -window)");
	small_config(&c, GB_FAM_GPT2);
	c.pos = GB_POS_T5;
	c.rel_buckets = 8;
	c.rel_max_dist = 6;
	t_model(&c, 0, 0.1, "gpt2: T5 relative bias, 8 buckets, max distance 6 (tiny-lm-t5)");
	small_config(&c, GB_FAM_GPT2);
	c.attn_kind = GB_ATTN_LINEAR;
	c.n_kv_head = 2;
	t_model(&c, 1, 0.0, "gpt2: linear attention, GQA 4/2, pad at position 0 (tiny-lm-linear)");
	small_config(&c, GB_FAM_GPT2);
	c.n_experts = 4;
	c.top_k = 2;
	c.norm_topk = 1;
	c.d_ffn = 8;
	t_model(&c, 0, 0.0, "gpt2: 4 experts, top-2, renormalised gates, load-balancing loss (tiny-lm-moe)");
	small_config(&c, GB_FAM_GPT2);
	c.n_experts = 3;
	c.top_k = 1;
	c.norm_topk = 0;
	c.act = GB_ACT_SILU;
	c.ffn = GB_FFN_GATED;
	c.d_ffn = 8;
	t_model(&c, 0, 0.0, "gpt2: 3 SwiGLU experts, top-1, Switch gates, load-balancing loss (tiny-lm-switch)");
	small_config(&c, GB_FAM_LLAMA);
	c.n_experts = 4;
	c.d_ffn = 8;
	c.pos = GB_POS_T5;
	c.rel_buckets = 8;
	c.rel_max_dist = 6;
	t_model(&c, 0, 0.0, "llama: Mixtral-named experts (w1, w2, w3), top-2, T5 bias");
	small_config(&c, GB_FAM_ENCDEC);
	c.pos = GB_POS_T5;
	c.rel_buckets = 8;
	c.rel_max_dist = 6;
	c.attn_kind = GB_ATTN_LINEAR;
	c.pos = GB_POS_NONE;
	c.n_experts = 2;
	c.top_k = 1;
	/* GELU, not tiny-mt's ReLU: with these weights a ReLU unit sits within the finite
	 * difference's step of its kink, and the differences measure the kink (1e-3) */
	c.act = GB_ACT_GELU;
	t_model(&c, 0, 0.0, "encdec: linear self-attention (encoder unmasked), 2 experts top-1, GELU");
	small_config(&c, GB_FAM_ENCDEC);
	c.pos = GB_POS_T5;
	c.rel_buckets = 8;
	c.rel_max_dist = 6;
	c.act = GB_ACT_GELU; /* as above */
	t_model(&c, 0, 0.0, "encdec: T5 bias, bidirectional buckets in the encoder, causal in the decoder, GELU");
	/* last, so that its draws from rng leave the cases above as they were */
	small_config(&c, GB_FAM_LLAMA);
	c.n_kv_head = 2;
	c.qkv_bias = 1;
	c.tied = 1;
	t_model(&c, 0, 0.1, "qwen2: llama with biases on q, k, v and none on o, tied");
	gb_ws_free(&ws);
	return tap_done();
}
