/* grad_impl.h — the bodies of grad_ops.h's operations and, through grad_model_impl.h which it
 * includes at its end, of the whole-model forward and backward, written once over R and
 * included by grad_f.c (R float, S _f, GB_FLOAT 1: matrix products through the kernel table)
 * and grad_d.c (R double, S _d, GB_FLOAT 0: plain loops in a fixed order). Not a header for
 * anyone else: it defines functions.
 *
 * Element-wise arithmetic is written as plain loops over R; transcendental functions go through
 * double (libm), except where the float build brings its own vectorizable versions (grad_f.c
 * defines GB_FAST_ACT_BWD and GB_FAST_SWIGLU_BWD, and the transposes). */
#ifndef R
#error "grad_impl.h is included by grad_f.c / grad_d.c with R, S and GB_FLOAT defined"
#endif

#include <math.h>
#include <setjmp.h>
#include <string.h>

#include "model/forward.h"
#include "model/train/grad_ops.h"

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, S)
#define T_(name) CAT(name, S)

typedef T_(gb_norm_act) norm_act;
typedef T_(gb_attn_act) attn_act;
typedef T_(gb_ffn_act) ffn_act;
typedef T_(gb_sub_act) sub_act;
typedef T_(gb_stack_act) stack_act;
typedef T_(gb_acts) acts;

/* The float build vectorizes its element-wise loops; the double build stays plain. Only static
 * functions get copies per instruction set (clang cannot export them); public ones wrap them. */
#if GB_FLOAT
#define HOT GB_VECTORIZE
#else
#define HOT
#endif

static R *alr(gb_ws *ws, size_t n) { return gb_ws_alloc(ws, (n ? n : 1) * sizeof(R)); }

/* c (M, N) = a (M, K) · B + bias, B = b (K, N), or b (N, K) transposed when bt. */
static void mm(const gb_kernels *k, R *c, const R *a, const R *b, const R *bias, int M, int K,
               int N, int bt)
{
#if GB_FLOAT
	k->matmul(c, a, b, bias, M, K, N, bt);
#else
	(void)k;
	for (int i = 0; i < M; i++) {
		R *ci = c + (size_t)i * N;
		const R *ai = a + (size_t)i * K;
		if (bt) {
			for (int j = 0; j < N; j++) {
				const R *bj = b + (size_t)j * K;
				R s = bias ? bias[j] : 0;
				for (int p = 0; p < K; p++)
					s += ai[p] * bj[p];
				ci[j] = s;
			}
		} else {
			for (int j = 0; j < N; j++)
				ci[j] = bias ? bias[j] : 0;
			for (int p = 0; p < K; p++) {
				const R *bp = b + (size_t)p * N;
				R ap = ai[p];
				for (int j = 0; j < N; j++)
					ci[j] += ap * bp[j];
			}
		}
	}
#endif
}

HOT static void vadd(R *restrict y, const R *restrict x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		y[i] += x[i];
}

#if GB_FLOAT
/* dst (N, M) = transpose of src (M, N); c (M, N) += transpose of t (N, M). In grad_f.c. */
static void transpose(float *dst, const float *src, int M, int N);
static void add_transposed(float *c, const float *t, int M, int N);
#endif

void FN(gb_matmul_tn)(const gb_kernels *k, gb_ws *ws, R *c, const R *a, const R *b, int M, int K,
                      int N, int acc)
{
#if GB_FLOAT
	/* The kernels multiply row-major a (M, K) by b: aᵀ needs a transposed copy. Either copy
	 * aᵀ and multiply into c (or a temporary added to c), or copy bᵀ, compute cᵀ = bᵀ a and
	 * add it transposed: whichever moves fewer floats (the second wins when c is narrow:
	 * an attention head's keys and values, the output projection's and the FFN's down
	 * projection's weights). */
	size_t mark = gb_ws_mark(ws);
	double direct = (double)K * M + (acc ? 2.0 * M * N : 0), flipped = (double)K * N + (acc ? 2.0 : 1.0) * M * N;
	if (direct <= flipped) {
		R *at = alr(ws, (size_t)M * K);
		transpose(at, a, K, M);
		if (acc) {
			R *t = alr(ws, (size_t)M * N);
			mm(k, t, at, b, NULL, M, K, N, 0);
			vadd(c, t, (size_t)M * N);
		} else {
			mm(k, c, at, b, NULL, M, K, N, 0);
		}
	} else {
		R *bt = alr(ws, (size_t)N * K), *t = alr(ws, (size_t)N * M);
		transpose(bt, b, K, N);
		mm(k, t, bt, a, NULL, N, K, M, 0);
		if (acc)
			add_transposed(c, t, M, N);
		else
			transpose(c, t, N, M);
	}
	gb_ws_release(ws, mark);
#else
	(void)k;
	(void)ws;
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			R s = 0;
			for (int p = 0; p < K; p++)
				s += a[(size_t)p * M + i] * b[(size_t)p * N + j];
			c[(size_t)i * N + j] = (acc ? c[(size_t)i * N + j] : 0) + s;
		}
#endif
}

/* ---- linear ---- */

void FN(gb_linear_fwd)(const gb_kernels *k, R *y, const R *x, const R *w, const R *b, int T, int in,
                       int out, int trans)
{
	mm(k, y, x, w, b, T, in, out, trans);
}

void FN(gb_linear_bwd)(const gb_kernels *k, gb_ws *ws, R *dx, int acc, R *dw, R *db, const R *dy,
                       const R *x, const R *w, int T, int in, int out, int trans)
{
	if (dx) {
		size_t mark = gb_ws_mark(ws);
		R *d = acc ? alr(ws, (size_t)T * in) : dx;
		/* dx = dy Wᵀ: W (in, out) read transposed, or W (out, in) read as is. */
		mm(k, d, dy, w, NULL, T, out, in, !trans);
		if (acc)
			vadd(dx, d, (size_t)T * in);
		gb_ws_release(ws, mark);
	}
	if (dw) {
		if (trans)
			FN(gb_matmul_tn)(k, ws, dw, dy, x, out, T, in, 1); /* (out, in) += dyᵀ x */
		else
			FN(gb_matmul_tn)(k, ws, dw, x, dy, in, T, out, 1); /* (in, out) += xᵀ dy */
	}
	if (db)
		for (int t = 0; t < T; t++)
			vadd(db, dy + (size_t)t * out, (size_t)out);
}

/* ---- norms ---- */

void FN(gb_layernorm_fwd)(R *y, R *mean, R *var, const R *x, const R *g, const R *b, int T, int D,
                          double eps, int textbook)
{
	for (int t = 0; t < T; t++) {
		const R *xr = x + (size_t)t * D;
		R *yr = y + (size_t)t * D;
		double mu = 0, v = 0;
		for (int j = 0; j < D; j++)
			mu += xr[j];
		mu /= D;
		for (int j = 0; j < D; j++)
			v += (xr[j] - mu) * (xr[j] - mu);
		v /= D;
		double r = 1.0 / (textbook ? sqrt(v) + eps : sqrt(v + eps));
		mean[t] = (R)mu;
		var[t] = (R)v;
		for (int j = 0; j < D; j++)
			yr[j] = (R)((xr[j] - mu) * r * (g ? g[j] : 1) + (b ? b[j] : 0));
	}
}

/* With c = x - mean and d the divisor (sqrt(var + eps), or sqrt(var) + eps), y = g c / d and
 * d depends on x through var: ∂d/∂x_i = c_i / (D s), s = sqrt(var + eps) (library) or
 * sqrt(var) (textbook). So with h = dy g:
 *   dx_i = (h_i - mean(h)) / d - c_i (Σ_j h_j c_j) / (D d² s). */
HOT static void layernorm_bwd(R *dx, int acc, R *dg, R *db, const R *dy, const R *x, const R *mean,
                              const R *var, const R *g, int T, int D, double eps, int textbook)
{
	for (int t = 0; t < T; t++) {
		const R *xr = x + (size_t)t * D, *dyr = dy + (size_t)t * D;
		R *dxr = dx + (size_t)t * D;
		R mu = mean[t];
		double v = var[t];
		double s = textbook ? sqrt(v) : sqrt(v + eps), d = textbook ? s + eps : s;
		R rd = (R)(1.0 / d);
		/* Σ h and Σ h c in eight interleaved partial sums, which vectorize */
		R p1[8] = { 0 }, p2[8] = { 0 }, sh = 0, shc = 0;
		int j8 = D / 8 * 8;
		for (int j = 0; j < j8; j += 8)
			for (int q = 0; q < 8; q++) {
				R h = dyr[j + q] * (g ? g[j + q] : 1), c = xr[j + q] - mu;
				p1[q] += h;
				p2[q] += h * c;
			}
		for (int q = 0; q < 8; q++) {
			sh += p1[q];
			shc += p2[q];
		}
		for (int j = j8; j < D; j++) {
			R h = dyr[j] * (g ? g[j] : 1), c = xr[j] - mu;
			sh += h;
			shc += h * c;
		}
		if (dg)
			for (int j = 0; j < D; j++)
				dg[j] += dyr[j] * (xr[j] - mu) * rd;
		if (db)
			for (int j = 0; j < D; j++)
				db[j] += dyr[j];
		R mh = sh / D;
		/* A constant row under the textbook's divisor has s = 0: the derivative of sqrt there
		 * is unbounded, and every c_i is 0, so the term is 0. */
		R coef = s > 0 ? (R)(shc / (D * d * d * s)) : 0;
		/* dx may be dy itself: each element is read before it is written */
		if (g && acc) {
			GB_IVDEP
			for (int j = 0; j < D; j++)
				dxr[j] += (dyr[j] * g[j] - mh) * rd - (xr[j] - mu) * coef;
		} else if (g) {
			GB_IVDEP
			for (int j = 0; j < D; j++)
				dxr[j] = (dyr[j] * g[j] - mh) * rd - (xr[j] - mu) * coef;
		} else {
			GB_IVDEP
			for (int j = 0; j < D; j++)
				dxr[j] = (acc ? dxr[j] : 0) + (dyr[j] - mh) * rd - (xr[j] - mu) * coef;
		}
	}
}

void FN(gb_layernorm_bwd)(R *dx, int acc, R *dg, R *db, const R *dy, const R *x, const R *mean,
                          const R *var, const R *g, int T, int D, double eps, int textbook)
{
	layernorm_bwd(dx, acc, dg, db, dy, x, mean, var, g, T, D, eps, textbook);
}

void FN(gb_rmsnorm_fwd)(R *y, R *rms, const R *x, const R *g, int T, int D, double eps)
{
	for (int t = 0; t < T; t++) {
		const R *xr = x + (size_t)t * D;
		R *yr = y + (size_t)t * D;
		double ss = 0;
		for (int j = 0; j < D; j++)
			ss += (double)xr[j] * xr[j];
		double q = sqrt(ss / D + eps);
		rms[t] = (R)q;
		for (int j = 0; j < D; j++)
			yr[j] = (R)(xr[j] / q * (g ? g[j] : 1));
	}
}

/* y = g x / q, q = sqrt(mean(x²) + eps), ∂q/∂x_i = x_i / (D q): with h = dy g,
 * dx_i = h_i / q - x_i (Σ_j h_j x_j) / (D q³). */
HOT static void rmsnorm_bwd(R *dx, int acc, R *dg, const R *dy, const R *x, const R *rms, const R *g,
                            int T, int D)
{
	for (int t = 0; t < T; t++) {
		const R *xr = x + (size_t)t * D, *dyr = dy + (size_t)t * D;
		R *dxr = dx + (size_t)t * D;
		R q = rms[t], rq = 1 / q, shx = 0;
		for (int j = 0; j < D; j++) {
			shx += dyr[j] * (g ? g[j] : 1) * xr[j];
			if (dg)
				dg[j] += dyr[j] * xr[j] * rq;
		}
		R coef = shx * rq * rq * rq / D;
		for (int j = 0; j < D; j++) {
			R v = dyr[j] * (g ? g[j] : 1) * rq - xr[j] * coef;
			dxr[j] = acc ? dxr[j] + v : v;
		}
	}
}

void FN(gb_rmsnorm_bwd)(R *dx, int acc, R *dg, const R *dy, const R *x, const R *rms, const R *g,
                        int T, int D)
{
	rmsnorm_bwd(dx, acc, dg, dy, x, rms, g, T, D);
}

/* ---- softmax ---- */

void FN(gb_softmax_fwd)(R *x, int rows, int n)
{
	for (int r = 0; r < rows; r++) {
		R *row = x + (size_t)r * n, mx = -INFINITY;
		for (int j = 0; j < n; j++)
			mx = row[j] > mx ? row[j] : mx;
		if (mx == -INFINITY) {
			memset(row, 0, (size_t)n * sizeof *row);
			continue;
		}
		double s = 0;
		for (int j = 0; j < n; j++)
			s += row[j] = (R)exp((double)row[j] - mx);
		R inv = (R)(1.0 / s);
		for (int j = 0; j < n; j++)
			row[j] *= inv;
	}
}

HOT static void softmax_bwd(R *dz, const R *dp, const R *p, int rows, int n)
{
	for (int r = 0; r < rows; r++) {
		const R *pr = p + (size_t)r * n, *dpr = dp + (size_t)r * n;
		R *dzr = dz + (size_t)r * n, part[8] = { 0 }, dot = 0;
		int j8 = n / 8 * 8;
		for (int j = 0; j < j8; j += 8)
			for (int q = 0; q < 8; q++)
				part[q] += pr[j + q] * dpr[j + q];
		for (int q = 0; q < 8; q++)
			dot += part[q];
		for (int j = j8; j < n; j++)
			dot += pr[j] * dpr[j];
		GB_IVDEP /* dz may be dp itself */
		for (int j = 0; j < n; j++)
			dzr[j] = pr[j] * (dpr[j] - dot);
	}
}

void FN(gb_softmax_bwd)(R *dz, const R *dp, const R *p, int rows, int n)
{
	softmax_bwd(dz, dp, p, rows, n);
}

/* ---- attention ---- */

void FN(gb_attn_fwd)(const gb_kernels *k, gb_ws *ws, const gb_attn_spec *s, R *w, R *o, const R *q,
                     const R *kk, const R *v, const R *relb)
{
	int H = s->H, E = s->E, Tq = s->Tq, Tk = s->Tk, group = s->H / s->K;
	R inv = (R)(1.0 / sqrt((double)E));
	(void)ws;
	for (int h = 0; h < H; h++) {
		R *wh = w + (size_t)h * Tq * Tk;
		mm(k, wh, q + (size_t)h * Tq * E, kk + (size_t)(h / group) * Tk * E, NULL, Tq, E, Tk, 1);
		R slope = s->alibi ? (R)gb_alibi_slope(h, H) : 0;
		for (int i = 0; i < Tq; i++)
			for (int j = 0; j < Tk; j++) {
				R *e = wh + (size_t)i * Tk + j;
				*e = gb_attn_allowed(s, i, j) ? *e * inv + slope * (R)(j - i) +
				                                    (s->bucket ? relb[s->bucket[(size_t)i * Tk + j] * H + h] : 0)
				                              : (R)-INFINITY;
			}
	}
#if GB_FLOAT
	k->softmax(w, H * Tq, Tk);
#else
	FN(gb_softmax_fwd)(w, H * Tq, Tk);
#endif
	for (int h = 0; h < H; h++)
		mm(k, o + (size_t)h * Tq * E, w + (size_t)h * Tq * Tk, v + (size_t)(h / group) * Tk * E, NULL,
		   Tq, Tk, E, 0);
}

/* Per head: dw = dO vᵀ, dv += wᵀ dO, ds = softmax'(dw) / sqrt(E) (masked entries have w = 0,
 * so they get no gradient; ALiBi's bias is a constant), dq = ds k, dk += dsᵀ q. */
void FN(gb_attn_bwd)(const gb_kernels *k, gb_ws *ws, const gb_attn_spec *s, R *dq, R *dk, R *dv,
                     const R *d_o, const R *q, const R *kk, const R *v, const R *w, R *drelb)
{
	int H = s->H, E = s->E, Tq = s->Tq, Tk = s->Tk, group = s->H / s->K;
	R inv = (R)(1.0 / sqrt((double)E));
	size_t mark = gb_ws_mark(ws);
	R *ds = alr(ws, (size_t)Tq * Tk);
	for (int h = 0; h < H; h++) {
		size_t kv = (size_t)(h / group) * Tk * E;
		int acc = h % group != 0; /* the first query head of a key/value head writes, the rest add */
		const R *wh = w + (size_t)h * Tq * Tk, *doh = d_o + (size_t)h * Tq * E, *qh = q + (size_t)h * Tq * E;
		mm(k, ds, doh, v + kv, NULL, Tq, E, Tk, 1);
		FN(gb_matmul_tn)(k, ws, dv + kv, wh, doh, Tk, Tq, E, acc);
		FN(gb_softmax_bwd)(ds, ds, wh, Tq, Tk);
		if (s->bucket && drelb) /* the bias is added after the scaling: its gradient is ds itself */
			for (size_t i = 0; i < (size_t)Tq * Tk; i++)
				drelb[s->bucket[i] * H + h] += ds[i];
		for (size_t i = 0; i < (size_t)Tq * Tk; i++)
			ds[i] *= inv;
		mm(k, dq + (size_t)h * Tq * E, ds, kk + kv, NULL, Tq, Tk, E, 0);
		FN(gb_matmul_tn)(k, ws, dk + kv, ds, qh, Tk, Tq, E, acc);
	}
	gb_ws_release(ws, mark);
}

/* ---- linear attention ---- */

/* f(x) = elu(x) + 1 of x (n) into y; f'(x) = 1 for x > 0, e^x otherwise. */
static void elu1(R *y, const R *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		y[i] = x[i] > 0 ? x[i] + 1 : (R)exp((double)x[i]);
}

/* a (Tq, Tk) = f(q_h) f(k)ᵀ on allowed pairs (0 elsewhere); z (Tq) its row sums. */
static void lin_kernel(const gb_kernels *k, const gb_attn_spec *s, R *a, R *z, const R *fq, const R *fk)
{
	int Tq = s->Tq, Tk = s->Tk;
	mm(k, a, fq, fk, NULL, Tq, s->E, Tk, 1);
	for (int i = 0; i < Tq; i++) {
		double sum = 0;
		for (int j = 0; j < Tk; j++) {
			R *e = a + (size_t)i * Tk + j;
			*e = gb_attn_allowed(s, i, j) ? *e : 0;
			sum += *e;
		}
		z[i] = (R)sum;
	}
}

void FN(gb_linattn_fwd)(const gb_kernels *k, gb_ws *ws, const gb_attn_spec *s, R *w, R *o, const R *q,
                        const R *kk, const R *v)
{
	int H = s->H, E = s->E, Tq = s->Tq, Tk = s->Tk, group = s->H / s->K;
	size_t mark = gb_ws_mark(ws);
	R *fq = alr(ws, (size_t)Tq * E), *fk = alr(ws, (size_t)Tk * E), *z = alr(ws, (size_t)Tq);
	for (int h = 0; h < H; h++) {
		R *wh = w + (size_t)h * Tq * Tk;
		elu1(fq, q + (size_t)h * Tq * E, (size_t)Tq * E);
		elu1(fk, kk + (size_t)(h / group) * Tk * E, (size_t)Tk * E);
		lin_kernel(k, s, wh, z, fq, fk);
		for (int i = 0; i < Tq; i++)
			for (int j = 0; j < Tk; j++)
				wh[(size_t)i * Tk + j] = z[i] > 0 ? wh[(size_t)i * Tk + j] / z[i] : 0;
		mm(k, o + (size_t)h * Tq * E, wh, v + (size_t)(h / group) * Tk * E, NULL, Tq, Tk, E, 0);
	}
	gb_ws_release(ws, mark);
}

/* Per head, with a = f(q) f(k)ᵀ masked, z its row sums and w = a / z: dw = dO vᵀ,
 * dv += wᵀ dO, da_ij = (dw_ij - Σ_j' w_ij' dw_ij') / z_i on allowed pairs, df(q) = da f(k),
 * df(k) = daᵀ f(q), and dq = df(q) f'(q), dk += df(k) f'(k). */
void FN(gb_linattn_bwd)(const gb_kernels *k, gb_ws *ws, const gb_attn_spec *s, R *dq, R *dk, R *dv,
                        const R *d_o, const R *q, const R *kk, const R *v, const R *w)
{
	int H = s->H, E = s->E, Tq = s->Tq, Tk = s->Tk, group = s->H / s->K;
	size_t mark = gb_ws_mark(ws);
	R *fq = alr(ws, (size_t)Tq * E), *fk = alr(ws, (size_t)Tk * E), *z = alr(ws, (size_t)Tq);
	R *a = alr(ws, (size_t)Tq * Tk), *da = alr(ws, (size_t)Tq * Tk), *dfk = alr(ws, (size_t)Tk * E);
	for (int h = 0; h < H; h++) {
		size_t kv = (size_t)(h / group) * Tk * E;
		int acc = h % group != 0;
		const R *wh = w + (size_t)h * Tq * Tk, *doh = d_o + (size_t)h * Tq * E, *qh = q + (size_t)h * Tq * E;
		elu1(fq, qh, (size_t)Tq * E);
		elu1(fk, kk + kv, (size_t)Tk * E);
		lin_kernel(k, s, a, z, fq, fk);
		mm(k, da, doh, v + kv, NULL, Tq, E, Tk, 1);
		FN(gb_matmul_tn)(k, ws, dv + kv, wh, doh, Tk, Tq, E, acc);
		for (int i = 0; i < Tq; i++) {
			R *dr = da + (size_t)i * Tk;
			const R *wr = wh + (size_t)i * Tk;
			double dot = 0;
			for (int j = 0; j < Tk; j++)
				dot += wr[j] * dr[j];
			for (int j = 0; j < Tk; j++)
				dr[j] = z[i] > 0 && gb_attn_allowed(s, i, j) ? (R)((dr[j] - dot) / z[i]) : 0;
		}
		R *dqh = dq + (size_t)h * Tq * E;
		mm(k, dqh, da, fk, NULL, Tq, Tk, E, 0);
		for (size_t i = 0; i < (size_t)Tq * E; i++)
			dqh[i] *= qh[i] > 0 ? 1 : fq[i]; /* f'(x) = e^x = f(x) below 0 */
		FN(gb_matmul_tn)(k, ws, dfk, da, fq, Tk, Tq, E, 0);
		const R *kh = kk + kv;
		R *dkh = dk + kv;
		for (size_t i = 0; i < (size_t)Tk * E; i++) {
			R g = dfk[i] * (kh[i] > 0 ? 1 : fk[i]);
			dkh[i] = acc ? dkh[i] + g : g;
		}
	}
	gb_ws_release(ws, mark);
}

/* ---- RoPE ---- */

void FN(gb_rope_tables)(R *cs, R *sn, int T, const gb_config *c)
{
	int E = c->d_head, half = E / 2;
	for (int t = 0; t < T; t++)
		for (int i = 0; i < half; i++) {
			double ang = t * gb_rope_inv_freq(c, i);
			cs[(size_t)t * half + i] = (R)cos(ang);
			sn[(size_t)t * half + i] = (R)sin(ang);
		}
}

/* (a, b) = (x[i], x[i + E/2]) -> (a c - b s, b c + a s); the transpose (dir -1) turns by -angle. */
void FN(gb_rope_apply)(R *x, const R *cs, const R *sn, int T, int E, int dir)
{
	int half = E / 2;
	for (int t = 0; t < T; t++) {
		R *r = x + (size_t)t * E;
		const R *c = cs + (size_t)t * half, *sv = sn + (size_t)t * half;
		for (int i = 0; i < half; i++) {
			R a = r[i], b = r[i + half], si = dir > 0 ? sv[i] : -sv[i];
			r[i] = a * c[i] - b * si;
			r[i + half] = b * c[i] + a * si;
		}
	}
}

/* ---- activations ---- */

void FN(gb_act_fwd)(R *y, const R *x, size_t n, int act)
{
	for (size_t i = 0; i < n; i++)
		y[i] = (R)gb_act_ref(x[i], act);
}

/* act'(x), in the overflow-free forms of gb_act_ref:
 *   gelu       Φ(x) + x φ(x)
 *   gelu_tanh  x σ(2u): σ(2u) + 2 x σ(2u)(1 - σ(2u)) u'(x), u = √(2/π)(x + 0.044715 x³)
 *   silu       σ(x) (1 + x (1 - σ(x))) */
#ifndef GB_FAST_ACT_BWD
static double act_grad(double x, int act)
{
	switch (act) {
	case GB_ACT_RELU:
		return x > 0 ? 1 : 0;
	case GB_ACT_GELU:
		return 0.5 * erfc(-x / sqrt(2.0)) + x * exp(-0.5 * x * x) / sqrt(2.0 * M_PI);
	case GB_ACT_GELU_TANH: {
		double c = sqrt(2.0 / M_PI), u = c * (x + 0.044715 * x * x * x);
		double sg = 1.0 / (1.0 + exp(-2.0 * u));
		return sg + 2.0 * x * sg * (1.0 - sg) * c * (1.0 + 3.0 * 0.044715 * x * x);
	}
	case GB_ACT_SILU: {
		double sg = 1.0 / (1.0 + exp(-x));
		return sg * (1.0 + x * (1.0 - sg));
	}
	}
	return NAN;
}

void FN(gb_act_bwd)(R *dx, const R *dy, const R *x, size_t n, int act)
{
	for (size_t i = 0; i < n; i++)
		dx[i] = (R)(dy[i] * act_grad(x[i], act));
}
#endif

void FN(gb_swiglu_fwd)(R *h, const R *gate, const R *up, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h[i] = (R)(gb_act_ref(gate[i], GB_ACT_SILU) * up[i]);
}

#ifndef GB_FAST_SWIGLU_BWD
void FN(gb_swiglu_bwd)(R *dgate, R *dup, const R *dh, const R *gate, const R *up, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		double g = gate[i], sg = 1.0 / (1.0 + exp(-g));
		R d = dh[i];
		R silu = (R)(g * sg), dsilu = (R)(sg * (1.0 + g * (1.0 - sg)));
		if (dup)
			dup[i] = d * silu;
		if (dgate)
			dgate[i] = d * up[i] * dsilu;
	}
}
#endif

/* ---- embeddings ---- */

void FN(gb_embed_fwd)(R *x, const int *ids, const R *E, const R *pos, double scale, int T, int D)
{
	for (int t = 0; t < T; t++) {
		const R *e = E + (size_t)ids[t] * D;
		R *xr = x + (size_t)t * D;
		for (int j = 0; j < D; j++)
			xr[j] = (R)(e[j] * scale) + (pos ? pos[(size_t)t * D + j] : 0);
	}
}

void FN(gb_embed_bwd)(R *dE, R *dpos, const R *dx, const int *ids, double scale, int T, int D)
{
	R sc = (R)scale;
	for (int t = 0; t < T; t++) {
		const R *g = dx + (size_t)t * D;
		if (dE) {
			R *e = dE + (size_t)ids[t] * D;
			for (int j = 0; j < D; j++)
				e[j] += sc * g[j];
		}
		if (dpos)
			vadd(dpos + (size_t)t * D, g, (size_t)D);
	}
}

void FN(gb_sinusoid)(R *pe, int T, int D)
{
	for (int i = 0; i < T; i++)
		for (int k = 0; 2 * k < D; k++) {
			double a = i / pow(10000.0, 2.0 * k / D);
			pe[(size_t)i * D + 2 * k] = (R)sin(a);
			if (2 * k + 1 < D)
				pe[(size_t)i * D + 2 * k + 1] = (R)cos(a);
		}
}

/* ---- cross-entropy ---- */

/* With q the smoothed target (1 - eps on y, plus eps/V everywhere), loss = -Σ q_j log p_j =
 * lse - (1 - eps) z_y - (eps/V) Σ z_j, lse = log Σ exp z, and ∂loss/∂z = p - q. Given p, lse is
 * z_max - log p_max (p_max >= 1/V, so nothing underflows): no second pass of exponentials. */
HOT static double xent(R *dz, const R *z, const R *p, const int *tgt, int T, int V, double eps,
                       double scale, int *count, int *correct)
{
	double total = 0;
	int cnt = 0, cor = 0;
	for (int t = 0; t < T; t++) {
		const R *zr = z + (size_t)t * V;
		R *dr = dz ? dz + (size_t)t * V : NULL;
		int y = tgt[t];
		if (y < 0 || y >= V) {
			if (dr)
				memset(dr, 0, (size_t)V * sizeof *dr);
			continue;
		}
		int am = 0;
		for (int j = 1; j < V; j++)
			am = zr[j] > zr[am] ? j : am;
		/* eight interleaved partial sums: no chain of V dependent additions */
		double part[8] = { 0 }, sumz = 0;
		int j8 = V / 8 * 8;
		for (int j = 0; j < j8; j += 8)
			for (int q = 0; q < 8; q++)
				part[q] += zr[j + q];
		for (int q = 0; q < 8; q++)
			sumz += part[q];
		for (int j = j8; j < V; j++)
			sumz += zr[j];
		double zmax = zr[am], lse;
		if (p) {
			lse = zmax - log((double)p[(size_t)t * V + am]);
		} else {
			double s = 0;
			for (int j = 0; j < V; j++)
				s += exp(zr[j] - zmax);
			lse = zmax + log(s);
		}
		total += lse - (1.0 - eps) * zr[y] - eps / V * sumz;
		cnt++;
		cor += am == y;
		if (dr) {
			R off = (R)(scale * eps / V), on = (R)(scale * (1.0 - eps));
			if (p) {
				const R *pr = p + (size_t)t * V;
				R sc = (R)scale;
				for (int j = 0; j < V; j++)
					dr[j] = sc * pr[j] - off;
			} else {
				for (int j = 0; j < V; j++)
					dr[j] = (R)(scale * exp(zr[j] - lse)) - off;
			}
			dr[y] -= on;
		}
	}
	if (count)
		*count = cnt;
	if (correct)
		*correct = cor;
	return total;
}

double FN(gb_xent)(R *dz, const R *z, const R *p, const int *tgt, int T, int V, double eps,
                   double scale, int *count, int *correct)
{
	return xent(dz, z, p, tgt, T, V, eps, scale, count, correct);
}

/* The whole model, over the operations above. */
#include "model/train/grad_model_impl.h"

#undef HOT
#undef FN
#undef T_
#undef CAT
#undef CAT_
