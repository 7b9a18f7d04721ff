/* t_kernels.c — the kernel tables: the reference against hand-computed values, every fast
 * table (scalar, avx2, avx512; skipped when the CPU lacks one) against the reference on
 * random inputs with the tolerances stated below, thread-count independence, the FTZ/DAZ
 * contract, dispatch and GLASSBOX_KERNELS, and the thread pool.
 *
 * Run with --env-probe, the program prints what gb_kernels_fast() picked under the current
 * environment (the dispatch test runs itself that way with GLASSBOX_KERNELS set). */
#include "tests/tap.h"
#include "model/config.h"
#include "model/kernels/kernels.h"
#include "model/kernels/pool.h"

#include <float.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define U 0x1p-24 /* float unit roundoff */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static double rnd(void) /* uniform in [-1, 1) */
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (double)(rng_state >> 11) * 0x1p-52 - 1.0;
}

static void fill(float *p, size_t n, double scale)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (float)(rnd() * scale);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		printf("Bail out! out of memory\n");
		exit(1);
	}
	return p;
}

/* ---------------------------------------------------------------- reference by hand */

static void test_ref_hand(void)
{
	const gb_kernels *R = gb_kernels_ref();
	/* a (2,3) = [1 2 3; 4 5 6], B (3,2) = [7 8; 9 10; 11 12]:
	 *   row 0: 1*7 + 2*9 + 3*11 = 58,   1*8 + 2*10 + 3*12 = 64
	 *   row 1: 4*7 + 5*9 + 6*11 = 139,  4*8 + 5*10 + 6*12 = 154
	 * with bias [1 -1]: [59 63; 140 153]. b_trans = 1 takes b = B^T (2,3) = [7 9 11; 8 10 12]. */
	float a[6] = { 1, 2, 3, 4, 5, 6 }, b[6] = { 7, 8, 9, 10, 11, 12 }, bt[6] = { 7, 9, 11, 8, 10, 12 };
	float bias[2] = { 1, -1 }, out[4];
	R->matmul(out, a, b, NULL, 2, 3, 2, 0);
	tap_ok(out[0] == 58 && out[1] == 64 && out[2] == 139 && out[3] == 154,
	       "ref matmul 2x3 . 3x2 = [58 64; 139 154] (got [%g %g; %g %g])", out[0], out[1], out[2], out[3]);
	R->matmul(out, a, bt, bias, 2, 3, 2, 1);
	tap_ok(out[0] == 59 && out[1] == 63 && out[2] == 140 && out[3] == 153,
	       "ref matmul b_trans + bias = [59 63; 140 153] (got [%g %g; %g %g])", out[0], out[1], out[2], out[3]);

	/* softmax [0, ln 2, -inf]: e^0 : e^ln2 : 0 = 1 : 2 : 0 -> [1/3, 2/3, 0] */
	float s[6] = { 0, (float)M_LN2, -INFINITY, -INFINITY, -INFINITY, -INFINITY };
	R->softmax(s, 2, 3);
	tap_near(s[0], 1.0 / 3, 1e-7, "ref softmax [0, ln2, -inf][0] = 1/3");
	tap_near(s[1], 2.0 / 3, 1e-7, "ref softmax [0, ln2, -inf][1] = 2/3");
	tap_ok(s[2] == 0.0f, "ref softmax: -inf entry is exactly 0 (got %g)", s[2]);
	tap_ok(s[3] == 0 && s[4] == 0 && s[5] == 0, "ref softmax: an all -inf row becomes all 0");

	/* layernorm [1 2 3]: mean 2, population variance ((-1)^2 + 0 + 1^2)/3 = 2/3;
	 * eps 1e-5: -1/sqrt(2/3 + 1e-5) = -1.2247356859; textbook eps 0.5: -1/(sqrt(2/3) + 0.5)
	 * = -0.7595917942; with g = [1 1 2], b = [0 0.5 1] the third is 2*1.2247356859 + 1. */
	float x[3] = { 1, 2, 3 }, y[3], mean, var, g[3] = { 1, 1, 2 }, bb[3] = { 0, 0.5f, 1 };
	R->layernorm(y, &mean, &var, x, NULL, NULL, 1, 3, 1e-5f, 0);
	tap_ok(mean == 2.0f && fabs(var - 2.0 / 3) < 1e-7, "ref layernorm [1 2 3]: mean 2, var 2/3 (got %g, %.9g)", mean, var);
	tap_near(y[0], -1.2247356859083902, 2e-7, "ref layernorm [1 2 3][0] = -1/sqrt(2/3 + 1e-5)");
	tap_ok(y[1] == 0.0f, "ref layernorm [1 2 3][1] = 0 (got %g)", y[1]);
	R->layernorm(y, NULL, NULL, x, g, bb, 1, 3, 1e-5f, 0);
	tap_near(y[2], 2 * 1.2247356859083902 + 1, 4e-7, "ref layernorm with gain and bias [2] = 2*1.22473569 + 1");
	tap_near(y[1], 0.5, 0, "ref layernorm with gain and bias [1] = bias 0.5");
	R->layernorm(y, NULL, NULL, x, NULL, NULL, 1, 3, 0.5f, 1);
	tap_near(y[0], -0.7595917942265424, 1e-7, "ref layernorm textbook [0] = -1/(sqrt(2/3) + 0.5)");

	/* rmsnorm [3 4]: rms = sqrt((9 + 16)/2) = sqrt(12.5) */
	float r2[2] = { 3, 4 }, o2[2], rms;
	R->rmsnorm(o2, &rms, r2, NULL, 1, 2, 0.0f);
	tap_near(rms, 3.5355339059327378, 3e-7, "ref rmsnorm [3 4]: rms = sqrt(12.5)");
	tap_near(o2[0], 0.848528137423857, 1e-7, "ref rmsnorm [3 4][0] = 3/sqrt(12.5)");
	tap_near(o2[1], 1.131370849898476, 1e-7, "ref rmsnorm [3 4][1] = 4/sqrt(12.5)");

	/* Known constants: Phi(1) = 0.841344746068543 (normal table), sigmoid(1) = 0.731058578630005. */
	tap_near(gb_act_ref(1, GB_ACT_GELU), 0.841344746068543, 1e-14, "gelu(1) = Phi(1)");
	tap_near(gb_act_ref(-1, GB_ACT_GELU), -0.158655253931457, 1e-14, "gelu(-1) = -Phi(-1)");
	tap_near(gb_act_ref(1, GB_ACT_GELU_TANH), 0.841191990608277, 1e-14, "gelu_tanh(1) = 0.5(1 + tanh(sqrt(2/pi) 1.044715))");
	tap_near(gb_act_ref(-2, GB_ACT_GELU_TANH), -0.0454023059122249, 1e-14, "gelu_tanh(-2)");
	tap_near(gb_act_ref(1, GB_ACT_SILU), 0.731058578630005, 1e-14, "silu(1) = sigmoid(1)");
	tap_near(gb_act_ref(-3, GB_ACT_SILU), -0.142277619532700, 1e-14, "silu(-3) = -3/(1 + e^3)");
	tap_ok(gb_act_ref(-2, GB_ACT_RELU) == 0 && gb_act_ref(3, GB_ACT_RELU) == 3, "relu(-2) = 0, relu(3) = 3");
	tap_ok(gb_act_ref(-30, GB_ACT_GELU) < 0 && gb_act_ref(-30, GB_ACT_GELU) > -1e-190,
	       "gelu(-30) keeps its tiny negative value (erfc form, no cancellation): %g", gb_act_ref(-30, GB_ACT_GELU));
	float xa[3] = { -1, 0, 2 }, ya[3];
	R->activate(ya, xa, 3, GB_ACT_GELU);
	tap_near(ya[2], 2 * 0.977249868051821, 1e-7, "ref activate gelu(2) = 2 Phi(2)");

	float m1[3] = { 1.5f, -2, 3 }, m2[3] = { 2, 0.25f, -1 };
	R->mul(m1, m1, m2, 3); /* out aliases a */
	tap_ok(m1[0] == 3 && m1[1] == -0.5f && m1[2] == -3, "ref mul [1.5 -2 3]*[2 .25 -1] = [3 -0.5 -3]");
	R->add(m1, m2, 3);
	tap_ok(m1[0] == 5 && m1[1] == -0.25f && m1[2] == -4, "ref add gives [5 -0.25 -4]");
}

/* ---------------------------------------------------------------- matmul vs reference */

/* Per element, the fast result may differ from the exact sum by the classic bound for any
 * summation order of K+1 terms (K products and the bias; Higham's gamma_{K+1} ~ (K+1) u,
 * with u = 2^-24): (K+1) u (sum_k |a_ik B_kj| + |bias_j|). The reference's own rounding to
 * float adds u |ref| <= u sum|terms|, and one more u covers the second-order terms, so we allow
 *   (K+3) u (sum_k |a_ik B_kj| + |bias_j|)   (+ 1e-30 for exact zeros).
 * A wrong index or a dropped term gives an error of the order of one term, far above this:
 * for K = 513 and entries in [-1,1] the bound is ~3e-5 times sum|terms| (~130), i.e. ~4e-3,
 * while one term averages 0.25 and the realized error is ~1e-5 at most. */
static float *guarded(size_t n) /* n floats with 16 canary floats on each side */
{
	float *p = xmalloc((n + 32) * sizeof *p);
	for (size_t i = 0; i < n + 32; i++)
		p[i] = 1234.5f;
	return p + 16;
}

static int canaries_ok(const float *p, size_t n)
{
	for (int i = 1; i <= 16; i++)
		if (p[-i] != 1234.5f || p[n - 1 + i] != 1234.5f)
			return 0;
	return 1;
}

/* a (M,K), b (K,N) or (N,K): fills absum (M,N). */
static void abs_sums(float *absum, const float *a, const float *b, const float *bias, int M,
                     int K, int N, int bt)
{
	double *row = xmalloc((size_t)N * sizeof *row);
	for (int i = 0; i < M; i++) {
		for (int j = 0; j < N; j++)
			row[j] = bias ? fabs(bias[j]) : 0;
		for (int k = 0; k < K; k++) {
			double ak = fabs(a[(size_t)i * K + k]);
			for (int j = 0; j < N; j++)
				row[j] += ak * fabs(bt ? b[(size_t)j * K + k] : b[(size_t)k * N + j]);
		}
		for (int j = 0; j < N; j++)
			absum[(size_t)i * N + j] = (float)row[j];
	}
	free(row);
}

struct err_stat {
	double max_abs, max_ratio; /* max |fast-ref|, max |fast-ref| / tolerance */
};

/* Runs table T on one case; returns 1 when every element is within tolerance and the
 * canaries around out are intact. */
static int mm_check(const gb_kernels *T, int M, int K, int N, int bt, int with_bias, int offset,
                    struct err_stat *st)
{
	size_t na = (size_t)M * K, nb = (size_t)K * N, no = (size_t)M * N;
	/* offset 1 makes every array start 4 bytes past a 64-byte boundary: unaligned paths */
	float *abuf = xmalloc((na + 1) * sizeof *abuf), *bbuf = xmalloc((nb + 1) * sizeof *bbuf);
	float *bias = xmalloc((size_t)(N + 1) * sizeof *bias), *a = abuf + offset, *b = bbuf + offset;
	float *ref = xmalloc(no * sizeof *ref), *out = guarded(no + offset) + offset;
	float *absum = xmalloc(no * sizeof *absum);
	int ok;
	fill(a, na, 1);
	fill(b, nb, 1);
	fill(bias, (size_t)N, 1);
	gb_kernels_ref()->matmul(ref, a, b, with_bias ? bias : NULL, M, K, N, bt);
	abs_sums(absum, a, b, with_bias ? bias : NULL, M, K, N, bt);
	T->matmul(out, a, b, with_bias ? bias : NULL, M, K, N, bt);
	ok = canaries_ok(out - offset, no + offset);
	for (size_t i = 0; i < no; i++) {
		double e = fabs((double)out[i] - ref[i]), tol = (K + 3) * U * absum[i] + 1e-30;
		if (!(e <= tol))
			ok = 0;
		if (e > st->max_abs || e != e)
			st->max_abs = e;
		if (e / tol > st->max_ratio || e != e)
			st->max_ratio = e / tol;
	}
	free(abuf);
	free(bbuf);
	free(bias);
	free(ref);
	free(out - offset - 16);
	free(absum);
	return ok;
}

static const int sizes[] = { 1, 3, 17, 65, 127, 513 };
#define NSIZES (int)(sizeof sizes / sizeof *sizes)

static void test_matmul(const gb_kernels *T)
{
	static const int model[][4] = { /* M, K, N, b_trans: the engine's 64-token forward pass */
		{ 64, 128, 384, 0 }, { 64, 128, 128, 0 }, { 64, 128, 512, 0 }, { 64, 512, 128, 0 },
		{ 64, 32, 64, 1 }, { 64, 64, 32, 0 }, { 64, 128, 384, 1 }, { 64, 512, 128, 1 },
		{ 128, 512, 128, 0 }, { 64, 192, 64, 0 }, { 64, 768, 768, 1 }, { 1, 768, 768, 0 },
		{ 1, 768, 768, 1 }, { 2, 768, 1000, 0 }, { 9, 100, 1000, 1 }, { 1, 5, 3, 1 },
	};
	int variant = 0;
	for (int mi = 0; mi < NSIZES; mi++)
		for (int ki = 0; ki < NSIZES; ki++)
			for (int ni = 0; ni < NSIZES; ni++) {
				int M = sizes[mi], K = sizes[ki], N = sizes[ni], ok = 1;
				struct err_stat st = { 0, 0 };
				/* all four (b_trans, bias) variants; the alignment offset alternates */
				for (int bt = 0; bt < 2; bt++)
					for (int bias = 0; bias < 2; bias++)
						ok &= mm_check(T, M, K, N, bt, bias, variant++ & 1, &st);
				if (!tap_ok(ok, "%s matmul %dx%dx%d, b_trans 0/1, bias none/some: max err %.3g = %.3g of tolerance",
				            T->name, M, K, N, st.max_abs, st.max_ratio))
					tap_diag("  canaries or tolerance (K+3) u sum|a||b| violated");
			}
	for (size_t s = 0; s < sizeof model / sizeof *model; s++) {
		struct err_stat st = { 0, 0 };
		int ok = mm_check(T, model[s][0], model[s][1], model[s][2], model[s][3], 1, 0, &st);
		ok &= mm_check(T, model[s][0], model[s][1], model[s][2], model[s][3], 0, 1, &st);
		tap_ok(ok, "%s matmul model shape %dx%dx%d b_trans %d: max err %.3g = %.3g of tolerance",
		       T->name, model[s][0], model[s][1], model[s][2], model[s][3], st.max_abs, st.max_ratio);
	}
}

/* ---------------------------------------------------------------- the other kernels */

/* Softmax: every output is e^(x_j - max) / sum. The fast exp is good to ~2e-7 relative, the
 * float sum of n positive terms to (n-1) u relative, the division to u: we allow
 * (4e-7 + (n+2) u) relative to the reference value. Masked (-inf) entries must be exactly 0. */
static void test_softmax(const gb_kernels *T)
{
	static const int ns[] = { 1, 3, 8, 15, 16, 17, 64, 65, 127, 1000 };
	int ok = 1, zeros_ok = 1, rows = 5;
	double worst = 0;
	for (size_t t = 0; t < sizeof ns / sizeof *ns; t++) {
		int n = ns[t];
		size_t len = (size_t)rows * n;
		float *x = xmalloc(len * sizeof *x), *r = xmalloc(len * sizeof *r), *f = guarded(len);
		fill(x, len, 8);
		for (int j = 0; j < n; j++) /* row 1: a causal-style mask; row 4: all masked */
			if (j > n / 2)
				x[n + j] = -INFINITY;
		for (int j = 0; j < n; j++)
			x[4 * (size_t)n + j] = -INFINITY;
		if (n > 2)
			x[2 * (size_t)n + 1] = -INFINITY;
		memcpy(r, x, len * sizeof *r);
		memcpy(f, x, len * sizeof *f);
		gb_kernels_ref()->softmax(r, rows, n);
		T->softmax(f, rows, n);
		ok &= canaries_ok(f, len);
		for (size_t i = 0; i < len; i++) {
			double e = fabs((double)f[i] - r[i]), tol = (4e-7 + (n + 2) * U) * r[i];
			if (x[i] == -INFINITY && f[i] != 0.0f)
				zeros_ok = 0;
			if (!(e <= tol))
				ok = 0;
			if (r[i] > 0 && e / r[i] > worst)
				worst = e / r[i];
		}
		free(x);
		free(r);
		free(f - 16);
	}
	tap_ok(ok, "%s softmax within (4e-7 + (n+2)u) relative of ref, n in 1..1000: max rel err %.3g", T->name, worst);
	tap_ok(zeros_ok, "%s softmax: -inf entries and all-masked rows give exactly 0", T->name);
}

/* Layer norm and RMS norm, y = g (x - mean) / sigma + b. In float, the mean and the sum of
 * squares carry up to ~d u relative error (d terms), and x - mean then loses that error
 * amplified by 1/sigma (cancellation when |mean| >> sigma). Per element we allow
 *   4 d u (|g| (|x| + |mean|) / sigma + |ref| + |b|)
 * with sigma the reference's denominator, and 4 d u relative on mean, var and rms. A wrong
 * index or a missing term is off by ~|g| |x - mean| / sigma, orders of magnitude more. */
static void test_norms(const gb_kernels *T)
{
	static const int ds[] = { 1, 3, 16, 17, 64, 127, 768, 1000 };
	static const char *what[] = { "layernorm", "layernorm textbook", "rmsnorm", "layernorm in place" };
	enum { ROWS = 3 };
	for (int mode = 0; mode < 4; mode++) { /* 0/1: layernorm standard/textbook; 2: rmsnorm; 3: out aliases x */
		int ok = 1;
		double worst = 0; /* max err / tol */
		for (size_t t = 0; t < sizeof ds / sizeof *ds; t++) {
			int d = ds[t];
			size_t len = (size_t)ROWS * d;
			float *x = xmalloc(len * sizeof *x), *g = xmalloc((size_t)d * sizeof *g), *b = xmalloc((size_t)d * sizeof *b);
			float *r = xmalloc(len * sizeof *r), *f = guarded(len);
			float rm[ROWS], rv[ROWS], fm[ROWS], fv[ROWS];
			double du = 4.0 * d * U;
			fill(x, len, 3);
			for (size_t i = 0; i < len; i++)
				x[i] += 1.5f; /* a nonzero mean */
			fill(g, (size_t)d, 2);
			fill(b, (size_t)d, 1);
			if (mode == 2) {
				gb_kernels_ref()->rmsnorm(r, rm, x, g, ROWS, d, 1e-6f);
				T->rmsnorm(f, fm, x, g, ROWS, d, 1e-6f);
			} else if (mode == 3) {
				memcpy(f, x, len * sizeof *f);
				gb_kernels_ref()->layernorm(r, rm, rv, x, NULL, NULL, ROWS, d, 1e-5f, 0);
				T->layernorm(f, fm, fv, f, NULL, NULL, ROWS, d, 1e-5f, 0);
			} else {
				gb_kernels_ref()->layernorm(r, rm, rv, x, g, b, ROWS, d, 1e-5f, mode);
				T->layernorm(f, fm, fv, x, g, b, ROWS, d, 1e-5f, mode);
			}
			ok &= canaries_ok(f, len);
			for (int row = 0; row < ROWS; row++) {
				double sigma, mu = mode == 2 ? 0 : rm[row];
				if (!(fabs(fm[row] - rm[row]) <= du * fabs(rm[row]) + 1e-30))
					ok = 0;
				if (mode == 2) {
					sigma = rm[row];
				} else {
					if (!(fabs(fv[row] - rv[row]) <= du * rv[row] + 1e-30))
						ok = 0;
					sigma = mode == 1 ? sqrt(rv[row]) + 1e-5 : sqrt(rv[row] + 1e-5);
				}
				for (int j = 0; j < d; j++) {
					size_t i = (size_t)row * d + j;
					double gj = mode == 3 ? 1 : g[j], bj = mode == 0 || mode == 1 ? b[j] : 0;
					double tol = du * (fabs(gj) * (fabs(x[i]) + fabs(mu)) / sigma + fabs(r[i]) + fabs(bj));
					double e = fabs((double)f[i] - r[i]);
					if (!(e <= tol))
						ok = 0;
					if (e / tol > worst)
						worst = e / tol;
				}
			}
			free(x);
			free(g);
			free(b);
			free(r);
			free(f - 16);
		}
		tap_ok(ok, "%s %s within 4 d u (|g|(|x|+|mean|)/sigma + |ref| + |b|), d in 1..1000: worst %.3g of tolerance",
		       T->name, what[mode], worst);
	}
}

/* Activations. Relu is exact. The others go through a polynomial exp (relative error ~1e-7)
 * and, for gelu, an erfc approximation good to 1.2e-7 relative, composed in float. No float
 * evaluation can beat the function's condition number kappa(x) = |x f'(x) / f(x)| (the
 * rounding of x's own arithmetic, e.g. x^2/2 inside gelu's exp, is amplified by it), and
 * kappa grows like x^2 in gelu's negative tail. We allow
 *   (40 + 4 kappa(x)) u |ref| + 1e-35,
 * i.e. 2.4e-6 relative where the function is tame; the floor covers results within a few
 * hundred FLT_MIN of 0, whose intermediates flush to 0 under FTZ. */
static double kappa(double x, int act)
{
	double h = 1e-6 * fabs(x), f = gb_act_ref(x, act);
	if (x == 0 || f == 0)
		return 0;
	return fabs(x * (gb_act_ref(x + h, act) - gb_act_ref(x - h, act)) / (2 * h) / f);
}

static void test_activations(const gb_kernels *T)
{
	static const char *names[] = { "relu", "gelu", "gelu_tanh", "silu" };
	size_t n = 20000 + 13; /* not a multiple of any vector width */
	float *x = xmalloc(n * sizeof *x), *f = guarded(n);
	for (size_t i = 0; i < n; i++)
		x[i] = (float)(-20.0 + 40.0 * i / (n - 1)); /* an even sweep of [-20, 20] */
	x[0] = 0.0f;
	x[1] = -0.0f;
	x[2] = 1e-30f;
	x[3] = -1e-30f;
	x[4] = 90.0f;
	x[5] = -90.0f;
	x[6] = 1.0f;
	for (int act = 0; act < 4; act++) {
		double worst = 0, kmax = 0;
		int ok = 1;
		T->activate(f, x, n, act);
		ok &= canaries_ok(f, n);
		for (size_t i = 0; i < n; i++) {
			double r = (float)gb_act_ref(x[i], act), e = fabs(f[i] - r), k = kappa(x[i], act);
			double tol = (40 + 4 * k) * U * fabs(r) + 1e-35;
			if (!(e <= tol))
				ok = 0;
			if (e / tol > worst)
				worst = e / tol, kmax = k;
		}
		tap_ok(ok, "%s activate %s within (40 + 4 kappa) u |ref| on [-20, 20] and specials: worst %.3g of tolerance (kappa %.3g)",
		       T->name, names[act], worst, kmax);
	}
	/* in place */
	memcpy(f, x, n * sizeof *f);
	T->activate(f, f, n, GB_ACT_SILU);
	tap_near(f[6], 0.731058578630005, 2e-6, "%s activate in place: silu(1)", T->name);
	free(x);
	free(f - 16);
}

static void test_mul_add(const gb_kernels *T)
{
	size_t n = 1000 + 7;
	float *a = xmalloc(n * sizeof *a), *b = xmalloc(n * sizeof *b), *f = guarded(n);
	int ok_mul = 1, ok_add = 1;
	fill(a, n, 10);
	fill(b, n, 10);
	for (size_t len = 0; len <= n; len += len < 40 ? 1 : 97) {
		for (size_t i = 0; i < n; i++)
			f[i] = 7.0f;
		T->mul(f, a, b, len);
		for (size_t i = 0; i < n; i++) /* one rounding of an exact product: equal to ref */
			if (f[i] != (i < len ? a[i] * b[i] : 7.0f))
				ok_mul = 0;
		T->add(f, a, len);
		for (size_t i = 0; i < n; i++)
			if (f[i] != (i < len ? a[i] * b[i] + a[i] : 7.0f))
				ok_add = 0;
	}
	ok_mul &= canaries_ok(f, n);
	tap_ok(ok_mul, "%s mul equals a*b exactly for every length 0..1007 and leaves the rest", T->name);
	tap_ok(ok_add, "%s add equals y+x exactly for every length 0..1007 and leaves the rest", T->name);
	memcpy(f, a, n * sizeof *f);
	T->mul(f, f, f, n); /* out aliases both inputs */
	tap_ok(f[n - 1] == a[n - 1] * a[n - 1] && f[0] == a[0] * a[0], "%s mul in place squares", T->name);
	free(a);
	free(b);
	free(f - 16);
}

/* ---------------------------------------------------------------- threads, FTZ, dispatch, pool */

/* Each output element is computed by the same operations whichever thread takes it, so the
 * results with 1 and 2 threads must be identical bit for bit. */
static void test_threads(const gb_kernels *T)
{
	static const int shapes[][4] = {
		{ 128, 512, 128, 0 }, { 64, 768, 768, 1 }, { 1, 768, 768, 0 }, { 1, 768, 768, 1 },
		{ 512, 256, 24, 0 }, { 300, 300, 300, 1 }, { 7, 1000, 999, 0 },
	};
	for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
		int M = shapes[s][0], K = shapes[s][1], N = shapes[s][2], bt = shapes[s][3];
		float *a = xmalloc((size_t)M * K * sizeof *a), *b = xmalloc((size_t)K * N * sizeof *b);
		float *bias = xmalloc((size_t)N * sizeof *bias);
		float *o1 = xmalloc((size_t)M * N * sizeof *o1), *o2 = xmalloc((size_t)M * N * sizeof *o2);
		double maxd = 0;
		size_t differ = 0;
		fill(a, (size_t)M * K, 1);
		fill(b, (size_t)K * N, 1);
		fill(bias, (size_t)N, 1);
		gb_kernels_set_threads(1);
		T->matmul(o1, a, b, bias, M, K, N, bt);
		gb_kernels_set_threads(2);
		for (int rep = 0; rep < 3; rep++) { /* workers both spinning and asleep */
			T->matmul(o2, a, b, bias, M, K, N, bt);
			for (size_t i = 0; i < (size_t)M * N; i++)
				if (memcmp(&o1[i], &o2[i], sizeof *o1) != 0) {
					differ++;
					if (fabs(o1[i] - o2[i]) > maxd)
						maxd = fabs(o1[i] - o2[i]);
				}
		}
		tap_ok(differ == 0, "%s matmul %dx%dx%d b_trans %d: 1 and 2 threads agree bit for bit (%zu differ, max diff %g)",
		       T->name, M, K, N, bt, differ, maxd);
		free(a);
		free(b);
		free(bias);
		free(o1);
		free(o2);
	}
	/* The element-wise operations split large inputs too (rows, or runs of 64 elements). */
	{
		size_t n = 200003; /* holds the layernorm and the softmax outputs side by side */
		int rows = 400, d = 250;
		float *x = xmalloc(n * sizeof *x), *o1 = xmalloc(n * sizeof *o1), *o2 = xmalloc(n * sizeof *o2);
		float *s1 = xmalloc(2 * (size_t)rows * sizeof *s1), *s2 = xmalloc(2 * (size_t)rows * sizeof *s2);
		int same = 1;
		fill(x, n, 4);
		for (int th = 1; th <= 2; th++) {
			float *o = th == 1 ? o1 : o2, *s = th == 1 ? s1 : s2;
			gb_kernels_set_threads(th);
			T->activate(o, x, n, GB_ACT_GELU);
			T->layernorm(o + 1, s, s + rows, x + 1, x + 2, x + 3, rows, d, 1e-5f, 0);
			memcpy(o + 1 + (size_t)rows * d, x, (size_t)rows * d * sizeof *o);
			T->softmax(o + 1 + (size_t)rows * d, rows, d);
		}
		same = memcmp(o1, o2, n * sizeof *o1) == 0 && memcmp(s1, s2, 2 * (size_t)rows * sizeof *s1) == 0;
		tap_ok(same, "%s activate, layernorm, softmax on 100K-200K elements: 1 and 2 threads agree bit for bit", T->name);
		free(x);
		free(o1);
		free(o2);
		free(s1);
		free(s2);
	}
	/* A tiny model's sizes split too (64 tokens x d_model 128: 8K elements): every element-wise
	 * operation and norm, around the split threshold, on 1, 2 and 3 threads. */
	{
		static const int rd[][2] = { { 64, 128 }, { 33, 127 }, { 64, 64 }, { 31, 129 }, { 2, 4100 }, { 5, 1000 } };
		int same = 1;
		for (size_t c = 0; c < sizeof rd / sizeof *rd; c++) {
			int rows = rd[c][0], d = rd[c][1];
			size_t n = (size_t)rows * d;
			float *x = xmalloc(n * sizeof *x), *y = xmalloc(n * sizeof *y), *g = xmalloc((size_t)d * sizeof *g);
			float *o[3], *st[3];
			fill(x, n, 3);
			fill(y, n, 2);
			fill(g, (size_t)d, 1);
			for (int th = 1; th <= 3; th++) {
				float *p = o[th - 1] = xmalloc(6 * n * sizeof *p), *q = st[th - 1] = xmalloc(3 * (size_t)rows * sizeof *q);
				gb_kernels_set_threads(th);
				T->layernorm(p, q, q + rows, x, g, y, rows, d, 1e-5f, 0);
				T->rmsnorm(p + n, q + 2 * rows, x, g, rows, d, 1e-6f);
				T->activate(p + 2 * n, x, n, GB_ACT_GELU_TANH);
				memcpy(p + 3 * n, x, n * sizeof *p);
				T->add(p + 3 * n, y, n);
				T->mul(p + 4 * n, x, y, n);
				memcpy(p + 5 * n, x, n * sizeof *p);
				T->softmax(p + 5 * n, rows, d);
			}
			for (int th = 2; th <= 3; th++)
				same &= !memcmp(o[0], o[th - 1], 6 * n * sizeof *o[0]) && !memcmp(st[0], st[th - 1], 3 * (size_t)rows * sizeof *st[0]);
			for (int th = 0; th < 3; th++)
				free(o[th]), free(st[th]);
			free(x), free(y), free(g);
		}
		tap_ok(same, "%s layernorm, rmsnorm, activate, add, mul, softmax on 4K-8K elements: 1, 2 and 3 threads agree bit for bit",
		       T->name);
	}
	gb_kernels_set_threads(0);
}

/* Matrix-vector and few-row products (the decode paths): M = 1..17 rows against odd K and N
 * (N not a multiple of any vector width, chunked past 4096 columns, K odd and shorter than a
 * vector), both weight layouts, with and without bias, on 1, 2 and 3 threads. Shapes of at
 * least 128K multiply-adds are split across threads (b_trans 0: blocks of 64 rows of b whose
 * partial sums are added in order; b_trans 1: ranges of rows of b), and the output starts
 * 0-3 floats past a cache line. Each result must be within the
 * (K+3) u sum|terms| bound of the reference, and the 2- and 3-thread results must equal the
 * 1-thread result bit for bit. */
static void test_matvec(const gb_kernels *T)
{
	static const int kn[][2] = {
		{ 1, 1 }, { 7, 15 }, { 33, 17 }, { 31, 100 }, { 257, 1031 }, { 33, 4111 }, { 769, 170 },
		{ 100, 4100 },
	};
	static const int ms[] = { 1, 2, 3, 4, 5, 8, 9, 16, 17 };
	for (size_t s = 0; s < sizeof kn / sizeof *kn; s++)
		for (int bt = 0; bt < 2; bt++) {
			int K = kn[s][0], N = kn[s][1], ok = 1, same = 1, rows_same = 1, variant = 0;
			double worst = 0;
			for (size_t mc = 0; mc < 2 * sizeof ms / sizeof *ms; mc++) {
				int M = ms[mc / 2], with_bias = mc & 1, off = variant++ % 4;
				size_t no = (size_t)M * N;
				float *a = xmalloc((size_t)M * K * sizeof *a), *b = xmalloc((size_t)K * N * sizeof *b);
				float *bias = xmalloc((size_t)N * sizeof *bias), *ref = xmalloc(no * sizeof *ref);
				float *absum = xmalloc(no * sizeof *absum), *o1 = xmalloc(no * sizeof *o1);
				float *ob = aligned_alloc(64, ((no + 4) * sizeof(float) + 63) / 64 * 64), *o = ob + off;
				fill(a, (size_t)M * K, 1);
				fill(b, (size_t)K * N, 1);
				fill(bias, (size_t)N, 1);
				gb_kernels_ref()->matmul(ref, a, b, with_bias ? bias : NULL, M, K, N, bt);
				abs_sums(absum, a, b, with_bias ? bias : NULL, M, K, N, bt);
				for (int th = 1; th <= 3; th++) {
					gb_kernels_set_threads(th);
					T->matmul(o, a, b, with_bias ? bias : NULL, M, K, N, bt);
					if (th == 1) {
						memcpy(o1, o, no * sizeof *o);
						for (size_t i = 0; i < no; i++) {
							double e = fabs((double)o[i] - ref[i]), tol = (K + 3) * U * absum[i] + 1e-30;
							if (!(e <= tol))
								ok = 0;
							if (e / tol > worst || e != e)
								worst = e / tol;
						}
					} else if (memcmp(o1, o, no * sizeof *o) != 0) {
						same = 0;
					}
				}
				/* a decode step (M = 1) gives each row what a few-row product of a short
				 * prefill gives it: the last row alone, as a cached step computes it (up to
				 * 4 rows every table takes the few-row path; the scalar one packs past it) */
				if (M <= 4) {
					gb_kernels_set_threads(1);
					T->matmul(o, a + (size_t)(M - 1) * K, b, with_bias ? bias : NULL, 1, K, N, bt);
					rows_same &= !memcmp(o, o1 + (size_t)(M - 1) * N, (size_t)N * sizeof *o);
				}
				free(a), free(b), free(bias), free(ref), free(absum), free(o1), free(ob);
			}
			tap_ok(ok, "%s matmul M = 1..17 x K %d x N %d, b_trans %d, bias none/some: within (K+3) u sum|terms| of ref (worst %.3g of it)",
			       T->name, K, N, bt, worst);
			tap_ok(same, "%s matmul M = 1..17 x K %d x N %d, b_trans %d: 2 and 3 threads give the 1-thread result bit for bit",
			       T->name, K, N, bt);
			tap_ok(rows_same, "%s matmul M = 1..4 x K %d x N %d, b_trans %d: the last row alone (M = 1) equals its row of the M-row product bit for bit",
			       T->name, K, N, bt);
		}
	gb_kernels_set_threads(0);
}

/* ---------------------------------------------------------------- 16-bit weights */

/* Widening by hand: bf16 is the top half of a float; f16 has 5 exponent bits (bias 15) and
 * 10 fraction bits, subnormals at 2^-24 steps. */
static void test_w16_hand(void)
{
	static const struct { uint16_t v; int wt; float want; } cases[] = {
		{ 0x3f80, GB_W_BF16, 1.0f }, { 0xc000, GB_W_BF16, -2.0f }, { 0x3e20, GB_W_BF16, 0.15625f },
		{ 0x7f80, GB_W_BF16, INFINITY }, { 0x3c00, GB_W_F16, 1.0f }, { 0xc000, GB_W_F16, -2.0f },
		{ 0x0001, GB_W_F16, 0x1p-24f }, { 0x03ff, GB_W_F16, 1023 * 0x1p-24f },
		{ 0x0400, GB_W_F16, 0x1p-14f }, { 0x7bff, GB_W_F16, 65504.0f }, { 0x7c00, GB_W_F16, INFINITY },
		{ 0x3555, GB_W_F16, 0.333251953125f }, { 0x8000, GB_W_F16, -0.0f },
	};
	int ok = 1;
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		float got = gb_w16_to_float(cases[i].v, cases[i].wt);
		if (memcmp(&got, &cases[i].want, sizeof got) != 0) {
			ok = 0;
			tap_diag("  %s 0x%04x: got %.9g, want %.9g", cases[i].wt == GB_W_BF16 ? "bf16" : "f16",
			         cases[i].v, got, cases[i].want);
		}
	}
	tap_ok(ok, "gb_w16_to_float: bf16 and f16 by hand (1, -2, 2^-24, 65504, inf, -0, ...)");
	tap_ok(isnan(gb_w16_to_float(0x7e00, GB_W_F16)) && isnan(gb_w16_to_float(0x3c00, 7)),
	       "gb_w16_to_float: an f16 NaN stays NaN, an unknown type gives NaN");
}

/* Random 16-bit weights of magnitude below ~2 (f16: exponents 0..15 with subnormals among
 * them; bf16: the top halves of random floats in [-1, 1)). */
static void fill16(uint16_t *w, size_t n, int wt)
{
	for (size_t i = 0; i < n; i++) {
		if (wt == GB_W_BF16) {
			float f = (float)rnd();
			uint32_t u;
			memcpy(&u, &f, sizeof u);
			w[i] = (uint16_t)(u >> 16);
		} else {
			uint64_t r = (uint64_t)((rnd() + 1) * 0x1p40);
			w[i] = (uint16_t)((r & 0x8000) | ((r >> 16) % 16) << 10 | (r & 1023));
		}
	}
}

/* matmul_w16 must give exactly what matmul gives on the widened weights (the same drivers and
 * arithmetic; the few-row paths widen in registers), on 1, 2 and 3 threads, and stay within
 * the matmul tolerance of the reference's matmul_w16. The exception: avx512's bf16 dot
 * products (b_trans 1, M <= 16) go by pairs of weights, even and odd terms into separate
 * accumulators, a different order of the same sum; there the result must be the same on 1, 2
 * and 3 threads, a row alone (M = 1) must equal its row of the M-row product, and the
 * tolerance holds as for any order. Every f16 value widens as gb_w16_to_float says (all 65536,
 * as a K = 1 product, both layouts). */
static void test_w16(const gb_kernels *T)
{
	static const int kn[][2] = { { 1, 1 }, { 33, 17 }, { 257, 1031 }, { 100, 4100 }, { 769, 170 } };
	static const int ms[] = { 1, 3, 16, 17, 40 };
	for (int wt = GB_W_BF16; wt <= GB_W_F16; wt++) {
		const char *wn = wt == GB_W_BF16 ? "bf16" : "f16";
		for (size_t s = 0; s < sizeof kn / sizeof *kn; s++)
			for (int bt = 0; bt < 2; bt++) {
				int K = kn[s][0], N = kn[s][1], same = 1, ok = 1, n_pairs = 0, pairs_same = 1;
				double worst = 0;
				for (size_t mi = 0; mi < sizeof ms / sizeof *ms; mi++) {
					int M = ms[mi], with_bias = (int)mi & 1;
					int pairs = wt == GB_W_BF16 && bt && M <= 16 && !strcmp(T->name, "avx512");
					size_t no = (size_t)M * N, nb = (size_t)K * N;
					float *a = xmalloc((size_t)M * K * sizeof *a), *wide = xmalloc(nb * sizeof *wide);
					float *bias = xmalloc((size_t)N * sizeof *bias), *ref = xmalloc(no * sizeof *ref);
					float *absum = xmalloc(no * sizeof *absum), *o32 = xmalloc(no * sizeof *o32);
					float *o16 = xmalloc(no * sizeof *o16), *o1 = xmalloc(no * sizeof *o1);
					uint16_t *w = xmalloc(nb * sizeof *w);
					fill(a, (size_t)M * K, 1);
					fill(bias, (size_t)N, 1);
					fill16(w, nb, wt);
					for (size_t i = 0; i < nb; i++)
						wide[i] = gb_w16_to_float(w[i], wt);
					gb_kernels_ref()->matmul_w16(ref, a, w, wt, with_bias ? bias : NULL, M, K, N, bt);
					abs_sums(absum, a, wide, with_bias ? bias : NULL, M, K, N, bt);
					for (int th = 1; th <= 3; th++) {
						gb_kernels_set_threads(th);
						T->matmul(o32, a, wide, with_bias ? bias : NULL, M, K, N, bt);
						T->matmul_w16(o16, a, w, wt, with_bias ? bias : NULL, M, K, N, bt);
						if (th == 1)
							memcpy(o1, o16, no * sizeof *o16);
						if (pairs)
							pairs_same &= !memcmp(o1, o16, no * sizeof *o16);
						else if (memcmp(o32, o16, no * sizeof *o16) != 0)
							same = 0;
					}
					if (pairs) {
						n_pairs++;
						gb_kernels_set_threads(1);
						T->matmul_w16(o32, a + (size_t)(M - 1) * K, w, wt, with_bias ? bias : NULL, 1, K, N, bt);
						pairs_same &= !memcmp(o32, o1 + (size_t)(M - 1) * N, (size_t)N * sizeof *o32);
					}
					for (size_t i = 0; i < no; i++) {
						double e = fabs((double)o16[i] - ref[i]), tol = (K + 3) * U * absum[i] + 1e-30;
						if (!(e <= tol))
							ok = 0;
						if (e / tol > worst || e != e)
							worst = e / tol;
					}
					free(a), free(wide), free(bias), free(ref), free(absum), free(o32), free(o16), free(o1), free(w);
				}
				if (n_pairs)
					tap_ok(same && pairs_same, "%s matmul_w16 %s M = 1..40 x K %d x N %d, b_trans %d: M > 16 equals matmul on the widened weights bit for bit (1-3 threads); "
					       "M <= 16, by pairs: the same on 1-3 threads, a row alone = its row of the product",
					       T->name, wn, K, N, bt);
				else
					tap_ok(same, "%s matmul_w16 %s M = 1..40 x K %d x N %d, b_trans %d: equals matmul on the widened weights bit for bit (1-3 threads)",
					       T->name, wn, K, N, bt);
				tap_ok(ok, "%s matmul_w16 %s M = 1..40 x K %d x N %d, b_trans %d: within (K+3) u sum|terms| of ref (worst %.3g of it)",
				       T->name, wn, K, N, bt, worst);
			}
	}
	gb_kernels_set_threads(0);
	{
		int n = 65536, bad = 0;
		uint16_t *w = xmalloc((size_t)n * sizeof *w);
		float *o = xmalloc((size_t)n * sizeof *o), one = 1;
		for (int i = 0; i < n; i++)
			w[i] = (uint16_t)i;
		for (int bt = 0; bt < 2; bt++) {
			T->matmul_w16(o, &one, w, GB_W_F16, NULL, 1, 1, n, bt);
			for (int i = 0; i < n; i++) {
				float want = gb_w16_to_float(w[i], GB_W_F16);
				if (isnan(want) ? !isnan(o[i]) : o[i] != want)
					bad++;
			}
		}
		tap_ok(bad == 0, "%s matmul_w16: every f16 value (all 65536, both layouts) widens exactly (%d wrong)", T->name, bad);
		T->matmul_w16(o, &one, w + 0x3c00, 9, NULL, 1, 1, 4, 0);
		tap_ok(isnan(o[0]) && isnan(o[3]), "%s matmul_w16 with an unknown weight type gives NaN, not a guess", T->name);
		free(w);
		free(o);
	}
}

/* matmul_act (the FFN's up projection and its activation in one pass) must give exactly
 * matmul's (or matmul_w16's) output and activate's of it: few rows and many, both layouts,
 * float and 16-bit weights, every activation, 1-3 threads. */
static void test_matmul_act(const gb_kernels *T)
{
	static const int kn[][2] = { { 128, 512 }, { 33, 17 }, { 257, 1031 }, { 7, 100 } };
	static const int ms[] = { 1, 5, 16, 17, 64, 130 };
	static const int acts[] = { GB_ACT_RELU, GB_ACT_GELU, GB_ACT_GELU_TANH, GB_ACT_SILU };
	int same = 1, cases = 0;
	if (!T->matmul_act) {
		tap_ok(0, "%s has matmul_act", T->name);
		return;
	}
	for (int wt = GB_W_F32; wt <= GB_W_F16; wt++)
		for (size_t s = 0; s < sizeof kn / sizeof *kn; s++)
			for (int bt = 0; bt < 2; bt++)
				for (size_t mi = 0; mi < sizeof ms / sizeof *ms; mi++) {
					int M = ms[mi], K = kn[s][0], N = kn[s][1], act = acts[(mi + s + bt) % 4];
					size_t no = (size_t)M * N, nb = (size_t)K * N;
					float *a = xmalloc((size_t)M * K * sizeof *a), *w = xmalloc(nb * sizeof *w);
					float *bias = xmalloc((size_t)N * sizeof *bias), *o1 = xmalloc(no * sizeof *o1);
					float *h1 = xmalloc(no * sizeof *h1), *o2 = xmalloc(no * sizeof *o2), *h2 = xmalloc(no * sizeof *h2);
					uint16_t *w16 = xmalloc(nb * sizeof *w16);
					const float *bb = mi & 1 ? bias : NULL;
					fill(a, (size_t)M * K, 1);
					fill(w, nb, 1.0 / sqrt((double)K));
					fill(bias, (size_t)N, 1);
					if (wt != GB_W_F32)
						fill16(w16, nb, wt);
					for (int th = 1; th <= 3; th++) {
						gb_kernels_set_threads(th);
						if (wt == GB_W_F32)
							T->matmul(o1, a, w, bb, M, K, N, bt);
						else
							T->matmul_w16(o1, a, w16, wt, bb, M, K, N, bt);
						T->activate(h1, o1, no, act);
						memset(o2, 0xff, no * sizeof *o2);
						memset(h2, 0xff, no * sizeof *h2);
						T->matmul_act(o2, h2, a, wt == GB_W_F32 ? (const void *)w : (const void *)w16, wt, bb, M, K, N, bt,
						              act);
						if (memcmp(o1, o2, no * sizeof *o1) || memcmp(h1, h2, no * sizeof *h1)) {
							if (same)
								tap_diag("first difference: %s M %d K %d N %d b_trans %d act %d, %d threads", wt == GB_W_F32
								         ? "f32" : wt == GB_W_BF16 ? "bf16" : "f16", M, K, N, bt, act, th);
							same = 0;
						}
						cases++;
					}
					free(a), free(w), free(bias), free(o1), free(h1), free(o2), free(h2), free(w16);
				}
	gb_kernels_set_threads(0);
	tap_ok(same, "%s matmul_act = matmul (or matmul_w16) then activate, both outputs bit for bit (%d cases: f32, bf16, "
	       "f16 weights, M 1..130, both layouts, every activation, 1-3 threads)", T->name, cases);
}

/* matmul_multi: a group of products of one input must hold exactly the numbers of the same
 * products one by one (matmul for f32 weights, matmul_w16 for bf16 and f16; groups that mix
 * them), on 1-3 threads: few rows (the dot-product route it shares out) and many (each alone),
 * sizes that are not multiples of the 16-row granules, with and without biases, and a group
 * larger than the table takes at once; nothing outside each output is written. */
static void test_matmul_multi(const gb_kernels *T)
{
	static const int ks[] = { 1, 37, 300 };
	static const int ns[][4] = { { 768, 256, 256, 0 }, { 17, 1, 33, 0 }, { 1030, 520, 0, 0 }, { 5, 700, 9, 300 } };
	static const int ms[] = { 1, 2, 4, 5, 17 };
	int same = 1, guard = 1, cases = 0;
	if (!T->matmul_multi) {
		tap_ok(0, "%s has matmul_multi", T->name);
		return;
	}
	for (size_t ki = 0; ki < sizeof ks / sizeof *ks; ki++)
		for (size_t g = 0; g < sizeof ns / sizeof *ns; g++)
			for (size_t mi = 0; mi < sizeof ms / sizeof *ms; mi++)
				for (int mix = 0; mix < 4; mix++) { /* all f32, all bf16, all f16, mixed */
					int K = ks[ki], M = ms[mi], n = 0;
					gb_mm_one p[10];
					float *w[10], *bias[10], *one[10], *a = xmalloc((size_t)M * K * sizeof *a);
					uint16_t *w16[10];
					fill(a, (size_t)M * K, 1);
					/* the group: ns[g]'s sizes, and for the last shape nine more (over the most
					 * a job takes at once) */
					int want = ns[g][3] && mix == 3 ? 10 : 0;
					for (int i = 0; i < 4 && ns[g][i]; i++)
						n = i + 1;
					if (want)
						n = want;
					for (int i = 0; i < n; i++) {
						int N = ns[g][i % 4] ? ns[g][i % 4] : 3 + i;
						int wt = mix < 3 ? mix : (i % 3);
						w[i] = xmalloc((size_t)N * K * sizeof *w[i]);
						w16[i] = xmalloc((size_t)N * K * sizeof *w16[i]);
						bias[i] = xmalloc((size_t)N * sizeof *bias[i]);
						one[i] = xmalloc((size_t)M * N * sizeof *one[i]);
						fill(w[i], (size_t)N * K, 1.0 / sqrt((double)K));
						fill16(w16[i], (size_t)N * K, wt ? wt : GB_W_BF16);
						fill(bias[i], (size_t)N, 1);
						p[i] = (gb_mm_one){ guarded((size_t)M * N), wt == GB_W_F32 ? (const void *)w[i] : w16[i], wt,
						                    (i + mi) % 2 ? bias[i] : NULL, N };
					}
					for (int th = 1; th <= 3; th++) {
						gb_kernels_set_threads(th);
						for (int i = 0; i < n; i++) {
							if (p[i].wtype == GB_W_F32)
								T->matmul(one[i], a, w[i], p[i].bias, M, K, p[i].N, 1);
							else
								T->matmul_w16(one[i], a, w16[i], p[i].wtype, p[i].bias, M, K, p[i].N, 1);
							memset(p[i].out, 0xff, (size_t)M * p[i].N * sizeof(float));
						}
						T->matmul_multi(p, n, a, M, K);
						for (int i = 0; i < n; i++) {
							if (memcmp(one[i], p[i].out, (size_t)M * p[i].N * sizeof(float))) {
								if (same)
									tap_diag("first difference: product %d of %d (N %d, type %d), M %d K %d, %d threads",
									         i, n, p[i].N, p[i].wtype, M, K, th);
								same = 0;
							}
							guard &= canaries_ok(p[i].out, (size_t)M * p[i].N);
						}
						cases++;
					}
					for (int i = 0; i < n; i++)
						free(w[i]), free(w16[i]), free(bias[i]), free(one[i]), free(p[i].out - 16);
					free(a);
				}
	gb_kernels_set_threads(0);
	tap_ok(same, "%s matmul_multi = each product by matmul or matmul_w16, bit for bit (%d cases: groups of 2-10, f32, "
	       "bf16, f16 and mixed, M 1..17, K 1..300, 1-3 threads)", T->name, cases);
	tap_ok(guard, "%s matmul_multi writes nothing outside its outputs", T->name);
}

/* Where a and b sit must not change a number: the dot-product route copies a few rows of a to
 * sit a fixed distance past b's offset within a cache line (fast.c skew_input), and the bf16
 * pair split likewise. Every placement of a (0-15 floats past a cache line) and of b (0-15
 * floats; 16-bit weights 0-31 halves) gives the bits of the first, for f32, bf16 and f16
 * weights, alone and as a matmul_multi group, M 1-4, K a multiple of 16 and not; N 40 on one
 * thread, and M 3-4, N 1040 (enough work to split) on two, so that workers read the caller's
 * copy.
 * (It holds whether or not the copy is made: it checks the copy, not that it happens.) */
static void test_placement(const gb_kernels *T)
{
	static const int ks[] = { 64, 48, 37 };
	enum { NMAX = 1040 };
	int same = 1, cases = 0;
	float *abuf = aligned_alloc(64, 4 * 64 * sizeof(float) + 128), *bbuf = aligned_alloc(64, NMAX * 64 * sizeof(float) + 128);
	uint16_t *b16buf = aligned_alloc(64, NMAX * 64 * sizeof(uint16_t) + 128);
	float *src = xmalloc(4 * 64 * sizeof *src), *wsrc = xmalloc(NMAX * 64 * sizeof *wsrc);
	uint16_t *w16src = xmalloc(NMAX * 64 * sizeof *w16src);
	float *first = xmalloc(4 * NMAX * sizeof *first), *out = xmalloc(4 * NMAX * sizeof *out),
	      *out2 = xmalloc(4 * NMAX * sizeof *out2);
	for (size_t ki = 0; ki < sizeof ks / sizeof *ks; ki++)
		for (int M = 1; M <= 4; M++)
			for (int wt = 0; wt < 3; wt++) /* GB_W_F32, GB_W_BF16, GB_W_F16 */
				for (int th = 1; th <= 2; th++) {
					int K = ks[ki], have = 0, N = th == 1 ? 40 : NMAX;
					if (th == 2 && (K != 64 || M < 3)) /* M K N over GEMV_MT_MIN: split */
						continue;
					gb_kernels_set_threads(th);
					fill(src, (size_t)M * K, 1);
					fill(wsrc, (size_t)N * K, 1.0 / sqrt((double)K));
					fill16(w16src, (size_t)N * K, wt ? wt : GB_W_BF16);
					for (int bo = 0; bo < (wt ? 32 : 16); bo++)
						for (int ao = 0; ao < 16; ao++) {
							float *a = abuf + ao;
							memcpy(a, src, (size_t)M * K * sizeof *a);
							const void *b;
							if (wt) {
								memcpy(b16buf + bo, w16src, (size_t)N * K * sizeof *w16src);
								b = b16buf + bo;
								T->matmul_w16(out, a, b, wt, NULL, M, K, N, 1);
							} else {
								memcpy(bbuf + bo, wsrc, (size_t)N * K * sizeof *wsrc);
								b = bbuf + bo;
								T->matmul(out, a, b, NULL, M, K, N, 1);
							}
							gb_mm_one p[2] = { { out2, b, wt, NULL, N / 2 },
							                   { out2 + (size_t)M * (N / 2), (const char *)b + (size_t)(N / 2) * K * (wt ? 2 : 4),
							                     wt, NULL, N - N / 2 } };
							T->matmul_multi(p, 2, a, M, K);
							if (!have)
								memcpy(first, out, (size_t)M * N * sizeof *out), have = 1;
							int ok = !memcmp(first, out, (size_t)M * N * sizeof *out);
							for (int i = 0; i < M; i++) /* the group's two halves, row by row */
								ok &= !memcmp(first + (size_t)i * N, out2 + (size_t)i * (N / 2), (N / 2) * sizeof *out) &&
								      !memcmp(first + (size_t)i * N + N / 2, out2 + (size_t)M * (N / 2) + (size_t)i * (N - N / 2),
								              (N - N / 2) * sizeof *out);
							if (!ok && same)
								tap_diag("first difference: type %d, M %d, K %d, %d threads, a +%d floats, b +%d", wt, M, K,
								         th, ao, bo);
							same &= ok;
							cases++;
						}
				}
	gb_kernels_set_threads(0);
	tap_ok(same, "%s: the same bits wherever a and b sit (%d placements: f32, bf16, f16 weights, alone and grouped, "
	       "M 1-4, K 64, 48, 37, N 40 on 1 thread; M 3-4, K 64, N 1040 on 2)", T->name, cases);
	free(abuf), free(bbuf), free(b16buf), free(src), free(wsrc), free(w16src), free(first), free(out), free(out2);
}

/* matmul_part: any block of rows and columns, computed on the calling thread inside a pool
 * task or outside one, must hold exactly matmul's numbers (on 1-3 threads) and leave the rest of
 * out alone: few rows and many (the routes of matmul differ below 17), both layouts, blocks
 * cut anywhere (not on micro-tile edges), which tile the product. */
static void part_task(void *arg, int t, int worker)
{
	void **p = arg;
	const gb_kernels *T = p[0];
	const int *d = p[1]; /* M, K, N, bt, rows per task */
	float *o = p[2];
	const float *a = p[3], *w = p[4], *bias = p[5];
	(void)worker;
	T->matmul_part(o, a, w, bias, d[0], d[1], d[2], d[3], t * d[4], (t + 1) * d[4], 0, d[2]);
}

static void test_matmul_part(const gb_kernels *T)
{
	static const int kn[][2] = { { 128, 384 }, { 33, 17 }, { 257, 1031 }, { 64, 32 } };
	static const int ms[] = { 1, 5, 16, 17, 40, 64, 130 };
	int same = 1, kept = 1, cases = 0;
	if (!T->matmul_part) {
		tap_ok(0, "%s has matmul_part", T->name);
		return;
	}
	for (size_t s = 0; s < sizeof kn / sizeof *kn; s++)
		for (int bt = 0; bt < 2; bt++)
			for (size_t mi = 0; mi < sizeof ms / sizeof *ms; mi++) {
				int M = ms[mi], K = kn[s][0], N = kn[s][1];
				size_t no = (size_t)M * N;
				float *a = xmalloc((size_t)M * K * sizeof *a), *w = xmalloc((size_t)K * N * sizeof *w);
				float *bias = xmalloc((size_t)N * sizeof *bias), *o1 = xmalloc(no * sizeof *o1), *o2 = xmalloc(no * sizeof *o2);
				const float *bb = mi & 1 ? bias : NULL;
				fill(a, (size_t)M * K, 1);
				fill(w, (size_t)K * N, 1.0 / sqrt((double)K));
				fill(bias, (size_t)N, 1);
				for (int th = 1; th <= 3; th++) {
					gb_kernels_set_threads(th);
					T->matmul(o1, a, w, bb, M, K, N, bt);
					/* columns cut at 1/3 and 5/7, rows at 1/2: six blocks, one at a time */
					int rc[3] = { 0, M / 2, M }, cc[4] = { 0, N / 3, N * 5 / 7, N };
					memset(o2, 0xff, no * sizeof *o2);
					for (int r = 0; r < 2; r++)
						for (int c = 0; c < 3; c++) {
							T->matmul_part(o2, a, w, bb, M, K, N, bt, rc[r], rc[r + 1], cc[c], cc[c + 1]);
							/* the blocks after this one in tiling order are still untouched */
							for (int i = 0; i < M; i++)
								for (int j = 0; j < N; j++) {
									int ri = i >= rc[1], ci = (j >= cc[1]) + (j >= cc[2]);
									uint32_t bits;
									memcpy(&bits, &o2[(size_t)i * N + j], 4);
									if ((ri > r || (ri == r && ci > c)) && bits != 0xffffffffu)
										kept = 0;
								}
						}
					if (memcmp(o1, o2, no * sizeof *o1)) {
						if (same)
							tap_diag("first difference: M %d K %d N %d b_trans %d, %d threads", M, K, N, bt, th);
						same = 0;
					}
					/* rows shared among the tasks of a parallel region, each on its own thread */
					int d[5] = { M, K, N, bt, (M + 3) / 4 };
					void *arg[6] = { (void *)T, d, o2, a, w, (void *)bb };
					memset(o2, 0xff, no * sizeof *o2);
					gb_pool_run(4, part_task, arg);
					if (memcmp(o1, o2, no * sizeof *o1)) {
						if (same)
							tap_diag("first difference in pool tasks: M %d K %d N %d b_trans %d, %d threads", M, K, N, bt, th);
						same = 0;
					}
					cases++;
				}
				free(a), free(w), free(bias), free(o1), free(o2);
			}
	gb_kernels_set_threads(0);
	tap_ok(same, "%s matmul_part: blocks of rows and columns (one at a time, and rows shared among pool tasks) give "
	       "matmul's numbers bit for bit (%d cases: M 1..130, both layouts, 1-3 threads)", T->name, cases);
	tap_ok(kept, "%s matmul_part writes its block only", T->name);
}

static void test_ftz(const gb_kernels *T)
{
	/* 1e-20 * 1e-20 = 1e-40 is a float denormal: the reference keeps it, the fast table
	 * flushes it, and the caller's mode is restored afterwards. */
	float a[1] = { 1e-20f }, b[1] = { 1e-20f }, r[1], f[1];
#if !defined(__x86_64__)
	tap_ok(1, "# SKIP %s: flush-to-zero is only switched on for x86 (MXCSR)", T->name);
	return;
#endif
	T->mul(f, a, b, 1);
	gb_kernels_ref()->mul(r, a, b, 1);
	tap_ok(f[0] == 0.0f && r[0] > 0.0f && r[0] < FLT_MIN,
	       "%s flushes the denormal 1e-40 to 0 (got %g); ref after it still gives %g", T->name, f[0], r[0]);
	volatile float va = 1e-20f, vb = 1e-20f;
	tap_ok(va * vb > 0.0f, "%s restores the caller's floating-point mode (plain code still sees denormals)", T->name);
}

static atomic_int hits[1000];
static atomic_int nested_runs;

static void count_task(void *arg, int t, int worker)
{
	atomic_fetch_add(&hits[t], 1);
	if (worker < 0 || worker >= gb_pool_threads())
		atomic_fetch_add(&hits[t], 1000);
}

static void nested_task(void *arg, int t, int worker)
{
	gb_pool_run(10, count_task, NULL); /* runs serially inside a run */
	atomic_fetch_add(&nested_runs, 1);
}

static void test_pool(void)
{
	int ok = 1;
	gb_pool_set_threads(2);
	for (int rep = 0; rep < 50; rep++) {
		for (int i = 0; i < 1000; i++)
			atomic_store(&hits[i], 0);
		gb_pool_run(1000, count_task, NULL);
		for (int i = 0; i < 1000; i++)
			if (atomic_load(&hits[i]) != 1)
				ok = 0;
	}
	tap_ok(ok, "pool: 50 runs of 1000 tasks each run every task exactly once, worker ids in range");
	/* each thread's own range first, then the others': every task once whatever the count */
	ok = 1;
	gb_pool_set_threads(3);
	for (int n = 1; n <= 40; n++)
		for (int rep = 0; rep < 20; rep++) {
			for (int i = 0; i < n; i++)
				atomic_store(&hits[i], 0);
			gb_pool_run(n, count_task, NULL);
			for (int i = 0; i < n; i++)
				if (atomic_load(&hits[i]) != 1)
					ok = 0;
		}
	gb_pool_set_threads(2);
	tap_ok(ok, "pool: on 3 threads, runs of 1 to 40 tasks (fewer tasks than threads, ranges of unequal length) run "
	       "every task exactly once");
	for (int i = 0; i < 10; i++)
		atomic_store(&hits[i], 0);
	gb_pool_run(4, nested_task, NULL);
	ok = atomic_load(&nested_runs) == 4;
	for (int i = 0; i < 10; i++)
		ok &= atomic_load(&hits[i]) == 4;
	tap_ok(ok, "pool: a run from inside a task completes (serially)");
	gb_pool_shutdown();
	for (int i = 0; i < 3; i++)
		atomic_store(&hits[i], 0);
	gb_pool_run(3, count_task, NULL);
	tap_ok(hits[0] == 1 && hits[1] == 1 && hits[2] == 1, "pool: runs again after shutdown");
	gb_pool_set_threads(0);
	tap_ok(gb_pool_threads() >= 1 && gb_pool_threads() <= 8 && gb_kernels_threads() == gb_pool_threads(),
	       "default thread count %d is in 1..8", gb_pool_threads());
}

static char self_exe[1024];

/* Runs this program with GLASSBOX_KERNELS=value and returns its --env-probe line. */
static void probe(const char *value, char *line, size_t cap)
{
	char cmd[1400];
	FILE *p;
	snprintf(cmd, sizeof cmd, "GLASSBOX_KERNELS='%s' '%s' --env-probe", value, self_exe);
	line[0] = 0;
	p = popen(cmd, "r");
	if (!p)
		return;
	if (!fgets(line, (int)cap, p))
		line[0] = 0;
	line[strcspn(line, "\n")] = 0;
	pclose(p);
}

static void test_dispatch(void)
{
	const gb_kernels *best = gb_kernels_by_name("fast");
	char line[256], want[64];
	tap_ok(gb_kernels_by_name("ref") == gb_kernels_ref() && !strcmp(gb_kernels_ref()->name, "ref"),
	       "by_name(\"ref\") is the reference table");
	tap_ok(best && gb_kernels_by_name(best->name) == best && strcmp(best->name, "ref") != 0,
	       "by_name(\"fast\") is the best SIMD path for this CPU: %s", best ? best->name : "NULL");
	tap_ok(gb_kernels_by_name("bogus") == NULL && gb_kernels_by_name(NULL) == NULL, "unknown names give NULL");
	probe("scalar", line, sizeof line);
	tap_ok(!strcmp(line, "scalar|"), "GLASSBOX_KERNELS=scalar forces scalar (probe: '%s')", line);
	probe("ref", line, sizeof line);
	tap_ok(!strcmp(line, "ref|"), "GLASSBOX_KERNELS=ref gives the reference (probe: '%s')", line);
	probe("bogus", line, sizeof line);
	snprintf(want, sizeof want, "%s|GLASSBOX_KERNELS=bogus: unknown", best->name);
	tap_ok(!strncmp(line, want, strlen(want)), "GLASSBOX_KERNELS=bogus falls back to %s and says why: '%s'",
	       best->name, line);
	/* both builds of simd.c, one per vector width */
	static const char *simd[][2] = { { "avx2", "AVX2+FMA" }, { "avx512", "AVX-512F" } };
	for (int i = 0; i < 2; i++) {
		char lacks[32], forced[32];
		probe(simd[i][0], line, sizeof line);
		snprintf(lacks, sizeof lacks, "lacks %s", simd[i][1]);
		snprintf(forced, sizeof forced, "%s|", simd[i][0]);
		if (!gb_kernels_by_name(simd[i][0]))
			tap_ok(strstr(line, lacks) != NULL, "GLASSBOX_KERNELS=%s on a CPU without it: '%s'",
			       simd[i][0], line);
		else
			tap_ok(!strcmp(line, forced), "GLASSBOX_KERNELS=%s forces %s (probe: '%s')", simd[i][0],
			       simd[i][0], line);
	}
}

int main(int argc, char **argv)
{
	static const char *fast[] = { "scalar", "avx2", "avx512" };
	if (argc > 1 && !strcmp(argv[1], "--env-probe")) {
		const char *why = gb_kernels_env_problem();
		printf("%s|%s\n", gb_kernels_fast()->name, why ? why : "");
		return 0;
	}
	ssize_t len = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
	if (len > 0)
		self_exe[len] = 0;
	else
		snprintf(self_exe, sizeof self_exe, "%s", argv[0]);
	test_ref_hand();
	test_w16_hand();
	for (int t = 0; t < 3; t++) {
		const gb_kernels *T = gb_kernels_by_name(fast[t]);
		if (!T) {
			tap_ok(1, "# SKIP %s: this CPU lacks the instructions", fast[t]);
			continue;
		}
		tap_ok(!strcmp(T->name, fast[t]), "table %s is named %s", fast[t], T->name);
		test_matmul(T);
		test_softmax(T);
		test_norms(T);
		test_activations(T);
		test_mul_add(T);
		test_threads(T);
		test_matvec(T);
		test_w16(T);
		test_matmul_act(T);
		test_matmul_part(T);
		test_matmul_multi(T);
		test_placement(T);
		test_ftz(T);
	}
	test_pool();
	test_dispatch();
	gb_pool_shutdown();
	return tap_done();
}
