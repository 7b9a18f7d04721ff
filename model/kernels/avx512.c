/* kernels_avx512.c — the AVX-512F inner loops of the fast table (see kernels_isa.h).
 *
 * Owns: the 8 × 32 register-blocked matmul micro-kernel (16 zmm accumulators; any m <= 8
 * and n <= 32 through compile-time row counts and column masks), B packing for both layouts
 * (a 16 × 16 register transpose for b_trans == 1), the dot-product kernel for b_trans == 1
 * with few rows, the matrix-vector product, and vectorized softmax, norms and activations
 * (a polynomial exp; gelu through an erfc approximation).
 *
 * Only this file is compiled for AVX-512 (#pragma GCC target below), so the rest of the
 * program runs on any x86-64; kernels_fast.c calls in here only after __builtin_cpu_supports.
 * On other architectures the file is empty. */
#include "model/kernels/isa.h"

#if defined(__x86_64__)
#include "model/config.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>

/* Every function below is compiled for the instruction set (clang has no GCC target pragma). */
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx2,fma"))), apply_to = function)
#else
#pragma GCC target("avx512f,avx2,fma")
#endif

#define INLINE static inline __attribute__((always_inline))

enum { MR = 8, NV = 2, NR = 16 * NV };

/* Lanes of vector v (16 floats each) that hold one of n columns. */
INLINE __mmask16 lane_mask(int n, int v)
{
	int r = n - 16 * v;
	return r >= 16 ? (__mmask16)0xFFFF : r > 0 ? (__mmask16)((1u << r) - 1) : (__mmask16)0;
}

/* ---- matmul ---- */

/* c (mr, n) = a (mr, kc) · B (kc, n) + (accum ? c : bias); B row k at b + k*ldb. mr is a
 * constant at every call site, so the loops unroll and acc lives in registers. */
INLINE void tile(const int mr, float *c, long ldc, const float *a, long lda, const float *b,
                 long ldb, int kc, int n, const float *bias, int accum)
{
	__m512 acc[MR][NV];
	__mmask16 mk[NV];
	const float *ar[MR];
#pragma GCC unroll 8
	for (int i = 0; i < mr; i++) {
		ar[i] = a + i * lda;
#pragma GCC unroll 4
		for (int v = 0; v < NV; v++)
			acc[i][v] = _mm512_setzero_ps();
	}
#pragma GCC unroll 4
	for (int v = 0; v < NV; v++)
		mk[v] = lane_mask(n, v);
#pragma GCC unroll 4
	for (int k = 0; k < kc; k++) {
		__m512 bv[NV];
#pragma GCC unroll 4
		for (int v = 0; v < NV; v++)
			bv[v] = _mm512_maskz_loadu_ps(mk[v], b + k * ldb + 16 * v);
#pragma GCC unroll 8
		for (int i = 0; i < mr; i++) {
			__m512 ai = _mm512_set1_ps(ar[i][k]);
#pragma GCC unroll 4
			for (int v = 0; v < NV; v++)
				acc[i][v] = _mm512_fmadd_ps(ai, bv[v], acc[i][v]);
		}
	}
#pragma GCC unroll 8
	for (int i = 0; i < mr; i++)
#pragma GCC unroll 4
		for (int v = 0; v < NV; v++) {
			float *cp = c + i * ldc + 16 * v;
			__m512 r = acc[i][v];
			if (accum)
				r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(mk[v], cp));
			else if (bias)
				r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(mk[v], bias + 16 * v));
			_mm512_mask_storeu_ps(cp, mk[v], r);
		}
}

/* c (m, n) from a (m, kc) and B (kc, n) in panels: see kernels_isa.h. Rows outer, panels
 * inner: the 8 rows of a (8 × kc floats) stay in L1 while the panels stream from L2. */
static void block(float *c, long ldc, const float *a, long lda, const float *b, long ldb,
                  long pstride, int m, int n, int kc, const float *bias, int accum)
{
	for (int i = 0; i < m; i += MR) {
		int mm = m - i < MR ? m - i : MR;
		const float *ai = a + i * lda;
		float *ci = c + i * ldc;
		for (int j = 0; j < n; j += NR) {
			int nn = n - j < NR ? n - j : NR;
			const float *bp = b + (j / NR) * pstride, *bj = bias ? bias + j : NULL;
			switch (mm) {
			case 8: tile(8, ci + j, ldc, ai, lda, bp, ldb, kc, nn, bj, accum); break;
			case 7: tile(7, ci + j, ldc, ai, lda, bp, ldb, kc, nn, bj, accum); break;
			case 6: tile(6, ci + j, ldc, ai, lda, bp, ldb, kc, nn, bj, accum); break;
			case 5: tile(5, ci + j, ldc, ai, lda, bp, ldb, kc, nn, bj, accum); break;
			case 4: tile(4, ci + j, ldc, ai, lda, bp, ldb, kc, nn, bj, accum); break;
			case 3: tile(3, ci + j, ldc, ai, lda, bp, ldb, kc, nn, bj, accum); break;
			case 2: tile(2, ci + j, ldc, ai, lda, bp, ldb, kc, nn, bj, accum); break;
			default: tile(1, ci + j, ldc, ai, lda, bp, ldb, kc, nn, bj, accum); break;
			}
		}
	}
}

/* r[i][e] -> r[e][i] for 16 rows of 16 floats: unpack pairs of rows (ps), then pairs of
 * pairs (pd), which leaves each 128-bit lane holding 4 × 4 blocks; two rounds of 128-bit lane
 * shuffles put the blocks in place. 64 shuffles for 256 floats. */
INLINE void transpose16(__m512 r[16])
{
	__m512 t[16], u[16];
#pragma GCC unroll 8
	for (int i = 0; i < 16; i += 2) {
		t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
		t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
	}
#pragma GCC unroll 4
	for (int i = 0; i < 16; i += 4) { /* u[i + c], lane L: column 4L + c of rows i..i+3 */
		__m512d a0 = _mm512_castps_pd(t[i]), a1 = _mm512_castps_pd(t[i + 1]);
		__m512d a2 = _mm512_castps_pd(t[i + 2]), a3 = _mm512_castps_pd(t[i + 3]);
		u[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a0, a2));
		u[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a0, a2));
		u[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(a1, a3));
		u[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(a1, a3));
	}
#pragma GCC unroll 4
	for (int c = 0; c < 4; c++) {
		__m512 v0 = _mm512_shuffle_f32x4(u[c], u[4 + c], _MM_SHUFFLE(1, 0, 1, 0));
		__m512 v1 = _mm512_shuffle_f32x4(u[c], u[4 + c], _MM_SHUFFLE(3, 2, 3, 2));
		__m512 w0 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], _MM_SHUFFLE(1, 0, 1, 0));
		__m512 w1 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], _MM_SHUFFLE(3, 2, 3, 2));
		r[c] = _mm512_shuffle_f32x4(v0, w0, _MM_SHUFFLE(2, 0, 2, 0));
		r[4 + c] = _mm512_shuffle_f32x4(v0, w0, _MM_SHUFFLE(3, 1, 3, 1));
		r[8 + c] = _mm512_shuffle_f32x4(v1, w1, _MM_SHUFFLE(2, 0, 2, 0));
		r[12 + c] = _mm512_shuffle_f32x4(v1, w1, _MM_SHUFFLE(3, 1, 3, 1));
	}
}

/* dst (panels, kc, NR) from b (N,K), in 16 × 16 blocks through registers; masked loads
 * and zero rows cover the ragged edges and the padding. */
static void pack_bt(float *dst, const float *b, int K, int k0, int kc, int j0, int nc)
{
	for (int p = 0; p * NR < nc; p++) {
		float *d = dst + (size_t)p * kc * NR;
		for (int g = 0; g < NV; g++) {
			int jb = p * NR + 16 * g, rows = nc - jb < 16 ? nc - jb : 16;
			const float *src = b + (size_t)(j0 + jb) * K + k0;
			for (int k = 0; k < kc; k += 16) {
				__mmask16 km = lane_mask(kc - k, 0);
				int kn = kc - k < 16 ? kc - k : 16;
				__m512 r[16];
#pragma GCC unroll 16
				for (int q = 0; q < 16; q++)
					r[q] = q < rows ? _mm512_maskz_loadu_ps(km, src + (size_t)q * K + k) : _mm512_setzero_ps();
				transpose16(r);
#pragma GCC unroll 16
				for (int q = 0; q < 16; q++)
					if (q < kn)
						_mm512_store_ps(d + (size_t)(k + q) * NR + 16 * g, r[q]);
			}
		}
	}
}

/* dst (panels, kc, NR) from B rows [k0, k0+kc), columns [j0, j0+nc). */
static void pack(float *dst, const float *b, int b_trans, int K, int N, int k0, int kc, int j0,
                 int nc)
{
	if (b_trans) {
		pack_bt(dst, b, K, k0, kc, j0, nc);
		return;
	}
	for (int p = 0; p * NR < nc; p++) {
		int jn = nc - p * NR < NR ? nc - p * NR : NR;
		__mmask16 m0 = lane_mask(jn, 0), m1 = lane_mask(jn, 1);
		const float *src = b + (size_t)k0 * N + j0 + p * NR;
		float *d = dst + (size_t)p * kc * NR;
		for (int k = 0; k < kc; k++) {
			_mm512_store_ps(d + k * NR, _mm512_maskz_loadu_ps(m0, src + (size_t)k * N));
			_mm512_store_ps(d + k * NR + 16, _mm512_maskz_loadu_ps(m1, src + (size_t)k * N + 16));
		}
	}
}

/* out rows i < mr, columns j..j+nb-1: dot products of mr rows of a with nb rows of b. */
INLINE void dots_tile(const int mr, const int nb, float *out, long ldo, const float *a,
                      const float *b, const float *bias, int K, int j)
{
	__m512 s[4][4];
	const float *ap[4], *bp[4];
	int k = 0;
	__mmask16 kt = lane_mask(K & 15, 0);
#pragma GCC unroll 4
	for (int i = 0; i < mr; i++) {
		ap[i] = a + (size_t)i * K;
#pragma GCC unroll 4
		for (int q = 0; q < nb; q++)
			s[i][q] = _mm512_setzero_ps();
	}
#pragma GCC unroll 4
	for (int q = 0; q < nb; q++)
		bp[q] = b + (size_t)(j + q) * K;
	for (; k + 16 <= K; k += 16) {
		__m512 bv[4];
#pragma GCC unroll 4
		for (int q = 0; q < nb; q++)
			bv[q] = _mm512_loadu_ps(bp[q] + k);
#pragma GCC unroll 4
		for (int i = 0; i < mr; i++) {
			__m512 av = _mm512_loadu_ps(ap[i] + k);
#pragma GCC unroll 4
			for (int q = 0; q < nb; q++)
				s[i][q] = _mm512_fmadd_ps(av, bv[q], s[i][q]);
		}
	}
	if (k < K) {
		__m512 bv[4];
#pragma GCC unroll 4
		for (int q = 0; q < nb; q++)
			bv[q] = _mm512_maskz_loadu_ps(kt, bp[q] + k);
#pragma GCC unroll 4
		for (int i = 0; i < mr; i++) {
			__m512 av = _mm512_maskz_loadu_ps(kt, ap[i] + k);
#pragma GCC unroll 4
			for (int q = 0; q < nb; q++)
				s[i][q] = _mm512_fmadd_ps(av, bv[q], s[i][q]);
		}
	}
#pragma GCC unroll 4
	for (int i = 0; i < mr; i++)
#pragma GCC unroll 4
		for (int q = 0; q < nb; q++)
			out[i * ldo + q] = _mm512_reduce_add_ps(s[i][q]) + (bias ? bias[j + q] : 0.0f);
}

/* out (m, j1-j0), row stride ldo = a (m,K) · b[j0:j1] (rows of (N,K))^T + bias; m <= 4.
 * 4 × 4 tiles: 16 accumulators, 8 loads per 16 FMAs. */
static void dots(float *out, long ldo, const float *a, int m, const float *b, const float *bias,
                 int K, int j0, int j1)
{
	int j = j0;
	for (; j + 4 <= j1; j += 4) {
		float *o = out + (j - j0);
		switch (m) {
		case 4: dots_tile(4, 4, o, ldo, a, b, bias, K, j); break;
		case 3: dots_tile(3, 4, o, ldo, a, b, bias, K, j); break;
		case 2: dots_tile(2, 4, o, ldo, a, b, bias, K, j); break;
		default: dots_tile(1, 4, o, ldo, a, b, bias, K, j); break;
		}
	}
	for (; j < j1; j++) {
		float *o = out + (j - j0);
		switch (m) {
		case 4: dots_tile(4, 1, o, ldo, a, b, bias, K, j); break;
		case 3: dots_tile(3, 1, o, ldo, a, b, bias, K, j); break;
		case 2: dots_tile(2, 1, o, ldo, a, b, bias, K, j); break;
		default: dots_tile(1, 1, o, ldo, a, b, bias, K, j); break;
		}
	}
}

/* out (j1-j0) = a (K) · B[:, j0:j1] + bias. b_trans == 0 walks 128 columns at a time down
 * the rows of b; b_trans == 1 is dots() with one row. */
static void gemv(float *out, const float *a, const float *b, const float *bias, int K, int N,
                 int j0, int j1, int b_trans)
{
	if (b_trans) {
		dots(out, 0, a, 1, b, bias, K, j0, j1);
		return;
	}
	for (int j = j0; j < j1; j += 128) {
		int nn = j1 - j < 128 ? j1 - j : 128;
		__mmask16 mk[8];
		__m512 acc[8];
		for (int v = 0; v < 8; v++) {
			mk[v] = lane_mask(nn, v);
			acc[v] = _mm512_setzero_ps();
		}
		for (int k = 0; k < K; k++) {
			__m512 ak = _mm512_set1_ps(a[k]);
			const float *bk = b + (size_t)k * N + j;
#pragma GCC unroll 8
			for (int v = 0; v < 8; v++)
				acc[v] = _mm512_fmadd_ps(ak, _mm512_maskz_loadu_ps(mk[v], bk + 16 * v), acc[v]);
		}
		for (int v = 0; v < 8 && 16 * v < nn; v++) {
			__m512 r = acc[v];
			if (bias)
				r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(mk[v], bias + j + 16 * v));
			_mm512_mask_storeu_ps(out + (j - j0) + 16 * v, mk[v], r);
		}
	}
}

/* ---- element-wise ---- */

/* e^x, relative error ~1e-7 (Cephes expf: x = n ln2 + r, |r| <= ln2/2, degree-7 polynomial,
 * times 2^n built in the exponent bits). Below -87.34 (e^x under FLT_MIN) the result is 0,
 * so exp(-inf) is exactly 0; NaN stays NaN. */
INLINE __m512 exp16(__m512 x)
{
	const __m512 lo = _mm512_set1_ps(-87.33654f), hi = _mm512_set1_ps(88.3762626647949f);
	__mmask16 under = _mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ);
	/* constants first: max/min return the second operand when one is NaN */
	x = _mm512_min_ps(hi, _mm512_max_ps(lo, x));
	__m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
	                                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	__m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
	r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
	__m512 p = _mm512_set1_ps(1.9875691500e-4f);
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
	p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
	__m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
	return _mm512_maskz_mov_ps((__mmask16)~under, _mm512_mul_ps(p, _mm512_castsi512_ps(e)));
}

/* x Phi(x), Phi(x) = erfc(-x/sqrt2)/2, with erfc from Numerical Recipes' erfcc (relative
 * error < 1.2e-7 for z >= 0) on z = |x|/sqrt2 and erfc(-z) = 2 - erfc(z). */
INLINE __m512 gelu16(__m512 x)
{
	__m512 z = _mm512_mul_ps(_mm512_abs_ps(x), _mm512_set1_ps(0.70710678118654752f));
	/* t = 1/(1 + z/2): a 14-bit reciprocal and one Newton step (~1e-8 relative) cost less
	 * than a division, which dominated this function. */
	__m512 den = _mm512_fmadd_ps(z, _mm512_set1_ps(0.5f), _mm512_set1_ps(1.0f));
	__m512 t = _mm512_rcp14_ps(den);
	t = _mm512_fmadd_ps(t, _mm512_fnmadd_ps(den, t, _mm512_set1_ps(1.0f)), t);
	__m512 p = _mm512_set1_ps(0.17087277f);
	p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-0.82215223f));
	p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.48851587f));
	p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-1.13520398f));
	p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.27886807f));
	p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-0.18628806f));
	p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.09678418f));
	p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.37409196f));
	p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.00002368f));
	p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-1.26551223f));
	__m512 half = _mm512_mul_ps(_mm512_set1_ps(0.5f), _mm512_mul_ps(t, exp16(_mm512_fnmadd_ps(z, z, p))));
	__mmask16 neg = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
	__m512 phi = _mm512_mask_blend_ps(neg, _mm512_sub_ps(_mm512_set1_ps(1.0f), half), half);
	return _mm512_mul_ps(x, phi);
}

/* x / (1 + e^(-u)): silu with u = x; tanh-gelu with u = 2 sqrt(2/pi) (x + 0.044715 x^3), since
 * 0.5 (1 + tanh v) = 1 / (1 + e^(-2v)), which also avoids tanh's cancellation near -1. */
INLINE __m512 sigmul16(__m512 x, __m512 u)
{
	return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), exp16(_mm512_sub_ps(_mm512_setzero_ps(), u))));
}

INLINE __m512 act16(__m512 x, int act)
{
	switch (act) {
	case GB_ACT_RELU:
		return _mm512_max_ps(x, _mm512_setzero_ps()); /* NaN -> 0, as the reference's x > 0 */
	case GB_ACT_GELU:
		return gelu16(x);
	case GB_ACT_GELU_TANH: {
		__m512 x2 = _mm512_mul_ps(x, x);
		__m512 u = _mm512_mul_ps(x, _mm512_fmadd_ps(x2, _mm512_set1_ps(2 * 0.7978845608f * 0.044715f),
		                                            _mm512_set1_ps(2 * 0.7978845608f)));
		return sigmul16(x, u);
	}
	case GB_ACT_SILU:
		return sigmul16(x, x);
	}
	return _mm512_set1_ps(NAN);
}

/* out, x (n). */
static void activate(float *out, const float *x, size_t n, int act)
{
	size_t i = 0;
	for (; i + 16 <= n; i += 16)
		_mm512_storeu_ps(out + i, act16(_mm512_loadu_ps(x + i), act));
	if (i < n) {
		__mmask16 m = lane_mask((int)(n - i), 0);
		_mm512_mask_storeu_ps(out + i, m, act16(_mm512_maskz_loadu_ps(m, x + i), act));
	}
}

/* x (rows, n) in place: max, then exp and sum, then scale; -inf lanes give exactly 0. */
static void softmax(float *x, int rows, int n)
{
	const __m512 ninf = _mm512_set1_ps(-INFINITY);
	int nfull = n & ~15;
	__mmask16 tm = lane_mask(n - nfull, 0);
	for (int r = 0; r < rows; r++) {
		float *row = x + (size_t)r * n, max;
		__m512 mx = ninf, sum = _mm512_setzero_ps(), mv, inv;
		int j;
		for (j = 0; j < nfull; j += 16)
			mx = _mm512_max_ps(mx, _mm512_loadu_ps(row + j));
		if (j < n)
			mx = _mm512_max_ps(mx, _mm512_mask_loadu_ps(ninf, tm, row + j));
		max = _mm512_reduce_max_ps(mx);
		if (max == -INFINITY) {
			memset(row, 0, (size_t)n * sizeof *row);
			continue;
		}
		mv = _mm512_set1_ps(max);
		for (j = 0; j < nfull; j += 16) {
			__m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(row + j), mv));
			_mm512_storeu_ps(row + j, e);
			sum = _mm512_add_ps(sum, e);
		}
		if (j < n) {
			__m512 e = exp16(_mm512_sub_ps(_mm512_mask_loadu_ps(ninf, tm, row + j), mv));
			_mm512_mask_storeu_ps(row + j, tm, e);
			sum = _mm512_add_ps(sum, e); /* masked lanes hold exp(-inf) = 0 */
		}
		inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(sum));
		for (j = 0; j < nfull; j += 16)
			_mm512_storeu_ps(row + j, _mm512_mul_ps(_mm512_loadu_ps(row + j), inv));
		if (j < n)
			_mm512_mask_storeu_ps(row + j, tm, _mm512_mul_ps(_mm512_maskz_loadu_ps(tm, row + j), inv));
	}
}

/* y (d) = (x (d) - shift) * s * g (d) + b (d); g, b may be NULL. */
INLINE void scale_row(float *y, const float *x, __m512 shift, __m512 s, const float *g,
                      const float *b, int d)
{
	for (int j = 0; j < d; j += 16) {
		__mmask16 m = lane_mask(d - j, 0);
		__m512 v = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + j), shift), s);
		if (g)
			v = _mm512_mul_ps(v, _mm512_maskz_loadu_ps(m, g + j));
		if (b)
			v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, b + j));
		_mm512_mask_storeu_ps(y + j, m, v);
	}
}

/* out, x (rows, d); mean, var (rows) or NULL; g, b (d) or NULL. Two passes (mean, then the
 * squared deviations) rather than sum and sum of squares, which cancels when |mean| >> sigma. */
static void layernorm(float *out, float *mean, float *var, const float *x, const float *g,
                      const float *b, int rows, int d, float eps, int textbook)
{
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (size_t)r * d;
		__m512 s = _mm512_setzero_ps(), q = _mm512_setzero_ps(), mv;
		float mu, v;
		for (int j = 0; j < d; j += 16)
			s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(lane_mask(d - j, 0), xr + j));
		mu = _mm512_reduce_add_ps(s) / d;
		mv = _mm512_set1_ps(mu);
		for (int j = 0; j < d; j += 16) {
			__mmask16 m = lane_mask(d - j, 0);
			__m512 c = _mm512_maskz_sub_ps(m, _mm512_maskz_loadu_ps(m, xr + j), mv);
			q = _mm512_fmadd_ps(c, c, q);
		}
		v = _mm512_reduce_add_ps(q) / d;
		if (mean)
			mean[r] = mu;
		if (var)
			var[r] = v;
		scale_row(out + (size_t)r * d, xr, mv,
		          _mm512_set1_ps(1.0f / (textbook ? sqrtf(v) + eps : sqrtf(v + eps))), g, b, d);
	}
}

/* out, x (rows, d); rms (rows) or NULL; g (d) or NULL. */
static void rmsnorm(float *out, float *rms, const float *x, const float *g, int rows, int d,
                    float eps)
{
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (size_t)r * d;
		__m512 q = _mm512_setzero_ps();
		float s;
		for (int j = 0; j < d; j += 16) {
			__m512 v = _mm512_maskz_loadu_ps(lane_mask(d - j, 0), xr + j);
			q = _mm512_fmadd_ps(v, v, q);
		}
		s = sqrtf(_mm512_reduce_add_ps(q) / d + eps);
		if (rms)
			rms[r] = s;
		scale_row(out + (size_t)r * d, xr, _mm512_setzero_ps(), _mm512_set1_ps(1.0f / s), g, NULL, d);
	}
}

/* out, a, b (n). */
static void mul(float *out, const float *a, const float *b, size_t n)
{
	for (size_t i = 0; i < n; i += 16) {
		__mmask16 m = lane_mask(n - i < 16 ? (int)(n - i) : 16, 0);
		_mm512_mask_storeu_ps(out + i, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, a + i),
		                                                _mm512_maskz_loadu_ps(m, b + i)));
	}
}

/* y, x (n). */
static void add(float *y, const float *x, size_t n)
{
	for (size_t i = 0; i < n; i += 16) {
		__mmask16 m = lane_mask(n - i < 16 ? (int)(n - i) : 16, 0);
		_mm512_mask_storeu_ps(y + i, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, y + i),
		                                              _mm512_maskz_loadu_ps(m, x + i)));
	}
}

const gb_isa gb_isa_avx512 = {
	.name = "avx512", .mr = MR, .nr = NR, .kc = 256, .direct_m = 16, .dots_m = 16,
	.pack = pack, .block = block, .gemv = gemv, .dots = dots,
	.softmax = softmax, .layernorm = layernorm, .rmsnorm = rmsnorm,
	.activate = activate, .mul = mul, .add = add,
};

#if defined(__clang__)
#pragma clang attribute pop
#endif

#endif
