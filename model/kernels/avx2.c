/* kernels_avx2.c — the AVX2 + FMA inner loops of the fast table (see kernels_isa.h).
 *
 * Owns: the 6 × 16 register-blocked matmul micro-kernel (12 ymm accumulators, the classic
 * shape for 16 ymm registers), B packing for both layouts (an 8 × 8 register transpose for
 * b_trans == 1), the dot-product kernel for b_trans == 1 with few rows, the matrix-vector
 * product, and vectorized softmax, norms and activations. Column edges use masked loads and
 * stores; B panels are zero-padded.
 *
 * Only this file and kernels_avx512.c are compiled for their instruction sets (#pragma GCC
 * target), so the program runs on any x86-64. On other architectures the file is empty. */
#include "model/kernels/isa.h"

#if defined(__x86_64__)
#include "model/config.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>

/* Every function below is compiled for the instruction set (clang has no GCC target pragma). */
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC target("avx2,fma")
#endif

#define INLINE static inline __attribute__((always_inline))

enum { MR = 6, NR = 16 };

/* Lanes of vector v (8 floats each) that hold one of n columns, as a maskload mask. */
INLINE __m256i lane_mask(int n, int v)
{
	return _mm256_cmpgt_epi32(_mm256_set1_epi32(n - 8 * v), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* ---- packing ---- */

INLINE void transpose8(__m256 r[8])
{
	__m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
	__m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
	__m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
	__m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
	__m256 s0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
	__m256 s1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
	__m256 s2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
	__m256 s3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
	__m256 s4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
	__m256 s5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
	__m256 s6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
	__m256 s7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
	r[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
	r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
	r[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
	r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
	r[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
	r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
	r[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
	r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

/* dst (panels, kc, nr) from b (N,K): 8 × 8 blocks go through registers, the ragged edges
 * element by element. */
static void pack_bt(float *dst, int nr, const float *b, int K, int k0, int kc, int j0, int nc)
{
	for (int p = 0; p * nr < nc; p++) {
		int jn = nc - p * nr < nr ? nc - p * nr : nr, j = 0;
		const float *src = b + (size_t)(j0 + p * nr) * K + k0;
		float *d = dst + (size_t)p * kc * nr;
		for (; j + 8 <= jn; j += 8) {
			int k = 0;
			for (; k + 8 <= kc; k += 8) {
				__m256 r[8];
				for (int q = 0; q < 8; q++)
					r[q] = _mm256_loadu_ps(src + (size_t)(j + q) * K + k);
				transpose8(r);
				for (int q = 0; q < 8; q++)
					_mm256_storeu_ps(d + (size_t)(k + q) * nr + j, r[q]);
			}
			for (; k < kc; k++)
				for (int q = 0; q < 8; q++)
					d[(size_t)k * nr + j + q] = src[(size_t)(j + q) * K + k];
		}
		for (; j < jn; j++)
			for (int k = 0; k < kc; k++)
				d[(size_t)k * nr + j] = src[(size_t)j * K + k];
		for (; j < nr; j++)
			for (int k = 0; k < kc; k++)
				d[(size_t)k * nr + j] = 0;
	}
}

/* dst (panels, kc, NR) from B rows [k0, k0+kc), columns [j0, j0+nc). */
static void pack(float *dst, const float *b, int b_trans, int K, int N, int k0, int kc, int j0,
                 int nc)
{
	if (b_trans) {
		pack_bt(dst, NR, b, K, k0, kc, j0, nc);
		return;
	}
	for (int p = 0; p * NR < nc; p++) {
		int jn = nc - p * NR < NR ? nc - p * NR : NR;
		const float *src = b + (size_t)k0 * N + j0 + p * NR;
		float *d = dst + (size_t)p * kc * NR;
		if (jn == NR) {
			for (int k = 0; k < kc; k++) {
				_mm256_store_ps(d + k * NR, _mm256_loadu_ps(src + (size_t)k * N));
				_mm256_store_ps(d + k * NR + 8, _mm256_loadu_ps(src + (size_t)k * N + 8));
			}
		} else {
			__m256i m0 = lane_mask(jn, 0), m1 = lane_mask(jn, 1);
			for (int k = 0; k < kc; k++) {
				_mm256_store_ps(d + k * NR, _mm256_maskload_ps(src + (size_t)k * N, m0));
				_mm256_store_ps(d + k * NR + 8, _mm256_maskload_ps(src + (size_t)k * N + 8, m1));
			}
		}
	}
}

/* ---- matmul ---- */

/* Horizontal sum in a fixed order. */
INLINE float hsum8(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}


/* c (mr, n) = a (mr, kc) · B (kc, NR panel, zero-padded) + (accum ? c : bias). */
INLINE void tile(const int mr, float *c, long ldc, const float *a, long lda, const float *b,
                 long ldb, int kc, int n, const float *bias, int accum)
{
	__m256 acc[MR][2];
	const float *ar[MR];
#pragma GCC unroll 8
	for (int i = 0; i < mr; i++) {
		ar[i] = a + i * lda;
		acc[i][0] = acc[i][1] = _mm256_setzero_ps();
	}
#pragma GCC unroll 4
	for (int k = 0; k < kc; k++) {
		__m256 b0 = _mm256_loadu_ps(b + k * ldb), b1 = _mm256_loadu_ps(b + k * ldb + 8);
#pragma GCC unroll 8
		for (int i = 0; i < mr; i++) {
			__m256 ai = _mm256_broadcast_ss(ar[i] + k);
			acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
			acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
		}
	}
	if (n == NR) {
#pragma GCC unroll 8
		for (int i = 0; i < mr; i++)
#pragma GCC unroll 2
			for (int v = 0; v < 2; v++) {
				float *cp = c + i * ldc + 8 * v;
				__m256 r = acc[i][v];
				if (accum)
					r = _mm256_add_ps(r, _mm256_loadu_ps(cp));
				else if (bias)
					r = _mm256_add_ps(r, _mm256_loadu_ps(bias + 8 * v));
				_mm256_storeu_ps(cp, r);
			}
	} else {
		__m256i mk[2] = { lane_mask(n, 0), lane_mask(n, 1) };
#pragma GCC unroll 8
		for (int i = 0; i < mr; i++)
#pragma GCC unroll 2
			for (int v = 0; v < 2; v++) {
				float *cp = c + i * ldc + 8 * v;
				__m256 r = acc[i][v];
				if (accum)
					r = _mm256_add_ps(r, _mm256_maskload_ps(cp, mk[v]));
				else if (bias)
					r = _mm256_add_ps(r, _mm256_maskload_ps(bias + 8 * v, mk[v]));
				_mm256_maskstore_ps(cp, mk[v], r);
			}
	}
}

/* c (m, n) from a (m, kc) and B (kc, n) in packed panels: see kernels_isa.h. */
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


/* out rows i < mr, columns j..j+nb-1: dot products of mr rows of a with nb rows of b. */
INLINE void dots_tile(const int mr, const int nb, float *out, long ldo, const float *a,
                      const float *b, const float *bias, int K, int j)
{
	__m256 s[4][3];
	const float *ap[4], *bp[3];
	int k = 0;
	__m256i kt = lane_mask(K & 7, 0);
#pragma GCC unroll 4
	for (int i = 0; i < mr; i++) {
		ap[i] = a + (size_t)i * K;
#pragma GCC unroll 3
		for (int q = 0; q < nb; q++)
			s[i][q] = _mm256_setzero_ps();
	}
#pragma GCC unroll 3
	for (int q = 0; q < nb; q++)
		bp[q] = b + (size_t)(j + q) * K;
	for (; k + 8 <= K; k += 8) {
		__m256 bv[3];
#pragma GCC unroll 3
		for (int q = 0; q < nb; q++)
			bv[q] = _mm256_loadu_ps(bp[q] + k);
#pragma GCC unroll 4
		for (int i = 0; i < mr; i++) {
			__m256 av = _mm256_loadu_ps(ap[i] + k);
#pragma GCC unroll 3
			for (int q = 0; q < nb; q++)
				s[i][q] = _mm256_fmadd_ps(av, bv[q], s[i][q]);
		}
	}
	if (k < K) {
		__m256 bv[3];
#pragma GCC unroll 3
		for (int q = 0; q < nb; q++)
			bv[q] = _mm256_maskload_ps(bp[q] + k, kt);
#pragma GCC unroll 4
		for (int i = 0; i < mr; i++) {
			__m256 av = _mm256_maskload_ps(ap[i] + k, kt);
#pragma GCC unroll 3
			for (int q = 0; q < nb; q++)
				s[i][q] = _mm256_fmadd_ps(av, bv[q], s[i][q]);
		}
	}
#pragma GCC unroll 4
	for (int i = 0; i < mr; i++)
#pragma GCC unroll 3
		for (int q = 0; q < nb; q++)
			out[i * ldo + q] = hsum8(s[i][q]) + (bias ? bias[j + q] : 0.0f);
}

/* out (m, j1-j0), row stride ldo = a (m,K) · b[j0:j1] (rows of (N,K))^T + bias; m <= 4.
 * 4 × 3 tiles: 12 accumulators, 3 b vectors and one a vector fill the 16 ymm registers. */
static void dots(float *out, long ldo, const float *a, int m, const float *b, const float *bias,
                 int K, int j0, int j1)
{
	int j = j0;
	for (; j + 3 <= j1; j += 3) {
		float *o = out + (j - j0);
		switch (m) {
		case 4: dots_tile(4, 3, o, ldo, a, b, bias, K, j); break;
		case 3: dots_tile(3, 3, o, ldo, a, b, bias, K, j); break;
		case 2: dots_tile(2, 3, o, ldo, a, b, bias, K, j); break;
		default: dots_tile(1, 3, o, ldo, a, b, bias, K, j); break;
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

/* out (j1-j0) = a (K) · B[:, j0:j1] + bias. b_trans == 0: columns past the last whole vector
 * take the scalar fmaf path, which is the same arithmetic as one vector lane; b_trans == 1 is
 * dots() with one row. */
static void gemv(float *out, const float *a, const float *b, const float *bias, int K, int N,
                 int j0, int j1, int b_trans)
{
	int j = j0;
	if (b_trans) {
		dots(out, 0, a, 1, b, bias, K, j0, j1);
		return;
	}
	for (; j + 64 <= j1; j += 64) {
		__m256 acc[8];
		for (int v = 0; v < 8; v++)
			acc[v] = _mm256_setzero_ps();
		for (int k = 0; k < K; k++) {
			__m256 ak = _mm256_broadcast_ss(a + k);
			const float *bk = b + (size_t)k * N + j;
#pragma GCC unroll 8
			for (int v = 0; v < 8; v++)
				acc[v] = _mm256_fmadd_ps(ak, _mm256_loadu_ps(bk + 8 * v), acc[v]);
		}
		for (int v = 0; v < 8; v++)
			_mm256_storeu_ps(out + (j - j0) + 8 * v,
			                 bias ? _mm256_add_ps(acc[v], _mm256_loadu_ps(bias + j + 8 * v)) : acc[v]);
	}
	for (; j + 8 <= j1; j += 8) {
		__m256 acc = _mm256_setzero_ps();
		for (int k = 0; k < K; k++)
			acc = _mm256_fmadd_ps(_mm256_broadcast_ss(a + k), _mm256_loadu_ps(b + (size_t)k * N + j), acc);
		_mm256_storeu_ps(out + (j - j0), bias ? _mm256_add_ps(acc, _mm256_loadu_ps(bias + j)) : acc);
	}
	for (; j < j1; j++) {
		float s = 0;
		for (int k = 0; k < K; k++)
			s = fmaf(a[k], b[(size_t)k * N + j], s);
		out[j - j0] = bias ? s + bias[j] : s;
	}
}

/* ---- element-wise ---- */

/* e^x as in kernels_avx512.c's exp16 (Cephes expf): 0 below -87.34, NaN stays NaN. */
INLINE __m256 exp8(__m256 x)
{
	const __m256 lo = _mm256_set1_ps(-87.33654f), hi = _mm256_set1_ps(88.3762626647949f);
	__m256 keep = _mm256_cmp_ps(x, lo, _CMP_NLT_UQ); /* x >= lo or NaN */
	x = _mm256_min_ps(hi, _mm256_max_ps(lo, x));
	__m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
	                           _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	__m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
	r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
	__m256 p = _mm256_set1_ps(1.9875691500e-4f);
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
	p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
	__m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
	return _mm256_and_ps(keep, _mm256_mul_ps(p, _mm256_castsi256_ps(e)));
}

/* x Phi(x) through Numerical Recipes' erfcc, as kernels_avx512.c's gelu16. */
INLINE __m256 gelu8(__m256 x)
{
	__m256 z = _mm256_mul_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), x), _mm256_set1_ps(0.70710678118654752f));
	__m256 t = _mm256_div_ps(_mm256_set1_ps(1.0f),
	                         _mm256_fmadd_ps(z, _mm256_set1_ps(0.5f), _mm256_set1_ps(1.0f)));
	__m256 p = _mm256_set1_ps(0.17087277f);
	p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.82215223f));
	p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(1.48851587f));
	p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-1.13520398f));
	p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.27886807f));
	p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.18628806f));
	p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.09678418f));
	p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.37409196f));
	p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(1.00002368f));
	p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-1.26551223f));
	__m256 half = _mm256_mul_ps(_mm256_set1_ps(0.5f), _mm256_mul_ps(t, exp8(_mm256_fnmadd_ps(z, z, p))));
	__m256 neg = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ);
	__m256 phi = _mm256_blendv_ps(_mm256_sub_ps(_mm256_set1_ps(1.0f), half), half, neg);
	return _mm256_mul_ps(x, phi);
}

/* x / (1 + e^(-u)); see kernels_avx512.c's sigmul16. */
INLINE __m256 sigmul8(__m256 x, __m256 u)
{
	return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), exp8(_mm256_sub_ps(_mm256_setzero_ps(), u))));
}

INLINE __m256 act8(__m256 x, int act)
{
	switch (act) {
	case GB_ACT_RELU:
		return _mm256_max_ps(x, _mm256_setzero_ps()); /* NaN -> 0, as the reference's x > 0 */
	case GB_ACT_GELU:
		return gelu8(x);
	case GB_ACT_GELU_TANH: {
		__m256 x2 = _mm256_mul_ps(x, x);
		__m256 u = _mm256_mul_ps(x, _mm256_fmadd_ps(x2, _mm256_set1_ps(2 * 0.7978845608f * 0.044715f),
		                                            _mm256_set1_ps(2 * 0.7978845608f)));
		return sigmul8(x, u);
	}
	case GB_ACT_SILU:
		return sigmul8(x, x);
	}
	return _mm256_set1_ps(NAN);
}

/* out, x (n). Ragged ends go through an 8-float buffer so every element takes the vector
 * arithmetic. */
static void activate(float *out, const float *x, size_t n, int act)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(out + i, act8(_mm256_loadu_ps(x + i), act));
	if (i < n) {
		float t[8] = {0};
		memcpy(t, x + i, (n - i) * sizeof *t);
		_mm256_storeu_ps(t, act8(_mm256_loadu_ps(t), act));
		memcpy(out + i, t, (n - i) * sizeof *t);
	}
}

/* x (rows, n) in place: max, then exp and sum, then scale; -inf lanes give exactly 0. */
static void softmax(float *x, int rows, int n)
{
	const __m256 ninf = _mm256_set1_ps(-INFINITY);
	int nfull = n & ~7;
	__m256i tm = lane_mask(n - nfull, 0);
	for (int r = 0; r < rows; r++) {
		float *row = x + (size_t)r * n, max, t[8];
		__m256 mx = ninf, sum = _mm256_setzero_ps(), mv, inv;
		int j;
		for (j = 0; j < nfull; j += 8)
			mx = _mm256_max_ps(mx, _mm256_loadu_ps(row + j));
		if (j < n)
			mx = _mm256_max_ps(mx, _mm256_blendv_ps(ninf, _mm256_maskload_ps(row + j, tm), _mm256_castsi256_ps(tm)));
		_mm256_storeu_ps(t, mx);
		max = t[0];
		for (int q = 1; q < 8; q++)
			max = t[q] > max ? t[q] : max;
		if (max == -INFINITY) {
			memset(row, 0, (size_t)n * sizeof *row);
			continue;
		}
		mv = _mm256_set1_ps(max);
		for (j = 0; j < nfull; j += 8) {
			__m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(row + j), mv));
			_mm256_storeu_ps(row + j, e);
			sum = _mm256_add_ps(sum, e);
		}
		if (j < n) {
			__m256 v = _mm256_blendv_ps(ninf, _mm256_maskload_ps(row + j, tm), _mm256_castsi256_ps(tm));
			__m256 e = exp8(_mm256_sub_ps(v, mv)); /* masked lanes: exp(-inf) = 0 */
			_mm256_maskstore_ps(row + j, tm, e);
			sum = _mm256_add_ps(sum, e);
		}
		inv = _mm256_set1_ps(1.0f / hsum8(sum));
		for (j = 0; j < nfull; j += 8)
			_mm256_storeu_ps(row + j, _mm256_mul_ps(_mm256_loadu_ps(row + j), inv));
		if (j < n)
			_mm256_maskstore_ps(row + j, tm, _mm256_mul_ps(_mm256_maskload_ps(row + j, tm), inv));
	}
}

/* y (d) = (x (d) - shift) * s * g (d) + b (d); g, b may be NULL. */
INLINE void scale_row(float *y, const float *x, __m256 shift, __m256 s, const float *g,
                      const float *b, int d)
{
	for (int j = 0; j < d; j += 8) {
		__m256i m = lane_mask(d - j, 0);
		__m256 v = _mm256_mul_ps(_mm256_sub_ps(_mm256_maskload_ps(x + j, m), shift), s);
		if (g)
			v = _mm256_mul_ps(v, _mm256_maskload_ps(g + j, m));
		if (b)
			v = _mm256_add_ps(v, _mm256_maskload_ps(b + j, m));
		if (d - j >= 8)
			_mm256_storeu_ps(y + j, v);
		else
			_mm256_maskstore_ps(y + j, m, v);
	}
}

/* out, x (rows, d); mean, var (rows) or NULL; g, b (d) or NULL. Two passes, as in
 * kernels_avx512.c. */
static void layernorm(float *out, float *mean, float *var, const float *x, const float *g,
                      const float *b, int rows, int d, float eps, int textbook)
{
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (size_t)r * d;
		__m256 s = _mm256_setzero_ps(), q = _mm256_setzero_ps(), mv;
		float mu, v;
		for (int j = 0; j < d; j += 8)
			s = _mm256_add_ps(s, _mm256_maskload_ps(xr + j, lane_mask(d - j, 0)));
		mu = hsum8(s) / d;
		mv = _mm256_set1_ps(mu);
		for (int j = 0; j < d; j += 8) {
			__m256i m = lane_mask(d - j, 0);
			__m256 c = _mm256_and_ps(_mm256_sub_ps(_mm256_maskload_ps(xr + j, m), mv), _mm256_castsi256_ps(m));
			q = _mm256_fmadd_ps(c, c, q);
		}
		v = hsum8(q) / d;
		if (mean)
			mean[r] = mu;
		if (var)
			var[r] = v;
		scale_row(out + (size_t)r * d, xr, mv,
		          _mm256_set1_ps(1.0f / (textbook ? sqrtf(v) + eps : sqrtf(v + eps))), g, b, d);
	}
}

/* out, x (rows, d); rms (rows) or NULL; g (d) or NULL. */
static void rmsnorm(float *out, float *rms, const float *x, const float *g, int rows, int d,
                    float eps)
{
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (size_t)r * d;
		__m256 q = _mm256_setzero_ps();
		float s;
		for (int j = 0; j < d; j += 8) {
			__m256 v = _mm256_maskload_ps(xr + j, lane_mask(d - j, 0));
			q = _mm256_fmadd_ps(v, v, q);
		}
		s = sqrtf(hsum8(q) / d + eps);
		if (rms)
			rms[r] = s;
		scale_row(out + (size_t)r * d, xr, _mm256_setzero_ps(), _mm256_set1_ps(1.0f / s), g, NULL, d);
	}
}

/* out, a, b (n). */
static void mul(float *out, const float *a, const float *b, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
	for (; i < n; i++)
		out[i] = a[i] * b[i];
}

/* y, x (n). */
static void add(float *y, const float *x, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(y + i), _mm256_loadu_ps(x + i)));
	for (; i < n; i++)
		y[i] += x[i];
}

const gb_isa gb_isa_avx2 = {
	.name = "avx2", .mr = MR, .nr = NR, .kc = 256, .direct_m = 0, .dots_m = 16,
	.pack = pack, .block = block, .gemv = gemv, .dots = dots,
	.softmax = softmax, .layernorm = layernorm, .rmsnorm = rmsnorm,
	.activate = activate, .mul = mul, .add = add,
};

#if defined(__clang__)
#pragma clang attribute pop
#endif

#endif
