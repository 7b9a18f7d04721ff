/* simd.c — the SIMD inner loops of the fast table (see isa.h), written once against a vector
 * width and compiled twice by the Makefile: GB_SIMD_WIDTH=8 gives gb_isa_avx2 (AVX2 + FMA,
 * 8-float ymm registers), GB_SIMD_WIDTH=16 gives gb_isa_avx512 (AVX-512F, 16-float zmm).
 *
 * Owns: the register-blocked matmul micro-kernel (any m <= MR and n <= NR through
 * compile-time row counts and column masks), B packing for both layouts (a W × W register
 * transpose for b_trans == 1), the few-row products that read the weights in place (float,
 * bf16 or f16, widened in registers), and vectorized softmax, norms and activations (a
 * polynomial exp; gelu through an erfc approximation). Edges use masked loads and stores.
 *
 * Everything that differs between the two widths lives in the "width" section below: vector
 * and mask types, thin wrappers over the intrinsics, the register transpose, the horizontal
 * reductions, the one place where AVX-512 computes differently (gelu's reciprocal), and the
 * tuning constants. The code after that section never names an intrinsic.
 *
 * Only this file is compiled for the instruction sets (#pragma GCC target), so the rest of
 * the program runs on any x86-64; fast.c calls in here only after __builtin_cpu_supports.
 * On other architectures the file is empty. */
#include "model/kernels/isa.h"

#if defined(__x86_64__)
#include "model/config.h"
#include "model/kernels/kernels.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>

#define INLINE static inline __attribute__((always_inline))

/* ================================================================ width */

#if GB_SIMD_WIDTH == 8

/* Every function below is compiled for the instruction set (clang has no GCC target pragma). */
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC target("avx2,fma,f16c")
#endif

#define ISA_NAME "avx2"
#define ISA(sym) sym##_avx2

typedef __m256 vf;     /* 8 floats */
typedef __m256i vmask; /* a lane is all ones or all zeros, as vmaskmovps takes it */

/* MR × NR = 6 × 16: 12 ymm accumulators, the classic shape for 16 ymm registers.
 * DIRECT_M 16, as on AVX-512: for b_trans == 0 with at most 16 rows block() reads b in place.
 * A masked load costs more than a plain one on AVX2, so only a panel that ends past column n
 * masks its B loads (MASK_WHOLE 0); whole panels, in place or packed, take plain loads. Without
 * it, each 8-row task of a tiny model's batched products (forward.c, rows_lin) packed all of W
 * for its 8 rows: its forward ran 1.2-1.3x as fast on 2 threads as on 1, avx512's 1.9-2.0x. */
#define W 8
#define MR GB_MR_AVX2
#define DIRECT_M 16
#define MASK_WHOLE 0
/* No bf16 dot products by pairs (DOTS_PAIRS, below): here they decoded the Llama-110M shape
 * 1.01-1.02x as fast as dots16's widening (one or two threads, this table on Zen 4), not
 * worth giving up dots16's sums equal to those on the widened weights. */
#define DOTS_PAIRS 0

INLINE vf v_zero(void) { return _mm256_setzero_ps(); }
INLINE vf v_set1(float x) { return _mm256_set1_ps(x); }
INLINE vf v_broadcast(const float *p) { return _mm256_broadcast_ss(p); }
INLINE vf v_load(const float *p) { return _mm256_loadu_ps(p); }
INLINE void v_store(float *p, vf v) { _mm256_storeu_ps(p, v); }
INLINE void v_store_aligned(float *p, vf v) { _mm256_store_ps(p, v); }
INLINE vf v_add(vf a, vf b) { return _mm256_add_ps(a, b); }
INLINE vf v_sub(vf a, vf b) { return _mm256_sub_ps(a, b); }
INLINE vf v_mul(vf a, vf b) { return _mm256_mul_ps(a, b); }
INLINE vf v_div(vf a, vf b) { return _mm256_div_ps(a, b); }
INLINE vf v_max(vf a, vf b) { return _mm256_max_ps(a, b); }
INLINE vf v_min(vf a, vf b) { return _mm256_min_ps(a, b); }
INLINE vf v_fmadd(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }   /* a b + c */
INLINE vf v_fnmadd(vf a, vf b, vf c) { return _mm256_fnmadd_ps(a, b, c); } /* c - a b */
INLINE vf v_abs(vf x) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x); }
INLINE vf v_round(vf x) { return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }

/* 2^n for integral n (as floats) in the normal range, built in the exponent bits. */
INLINE vf v_pow2i(vf n)
{
	__m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
	return _mm256_castsi256_ps(e);
}

/* 8 bfloat16 (the top halves of floats) or 8 IEEE halves at p, widened exactly. */
INLINE vf v_from_bf16(const uint16_t *p)
{
	__m256i x = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
	return _mm256_castsi256_ps(_mm256_slli_epi32(x, 16));
}
INLINE vf v_from_f16(const uint16_t *p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)); }

/* Lanes of vector v (8 floats each) that hold one of n columns. */
INLINE vmask lane_mask(int n, int v)
{
	return _mm256_cmpgt_epi32(_mm256_set1_epi32(n - 8 * v), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

INLINE vf v_load_mask(vmask m, const float *p) { return _mm256_maskload_ps(p, m); } /* 0 elsewhere */
INLINE void v_store_mask(float *p, vmask m, vf v) { _mm256_maskstore_ps(p, m, v); }
INLINE vf v_load_mask_or(vf fill, vmask m, const float *p) /* fill elsewhere */
{
	return _mm256_blendv_ps(fill, _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m));
}
INLINE vf v_keep(vmask m, vf v) { return _mm256_and_ps(v, _mm256_castsi256_ps(m)); } /* 0 elsewhere */
INLINE vf v_blend(vmask m, vf a, vf b) { return _mm256_blendv_ps(a, b, _mm256_castsi256_ps(m)); } /* m ? b : a */
INLINE vmask v_lt(vf a, vf b) { return _mm256_castps_si256(_mm256_cmp_ps(a, b, _CMP_LT_OQ)); }
INLINE vmask v_nlt(vf a, vf b) { return _mm256_castps_si256(_mm256_cmp_ps(a, b, _CMP_NLT_UQ)); } /* or NaN */

/* 1 / den for gelu: a division. (AVX2's reciprocal estimate has 12 bits where AVX-512's has
 * 14, so the AVX-512 path below is the only one that refines an estimate instead.) */
INLINE vf v_recip(vf den) { return _mm256_div_ps(_mm256_set1_ps(1.0f), den); }

/* Horizontal sum in a fixed order. */
INLINE float v_hsum(vf v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

/* Horizontal max, lanes in order (a NaN in lane 0 stays, later NaNs are skipped). */
INLINE float v_hmax(vf v)
{
	float t[8], max;
	_mm256_storeu_ps(t, v);
	max = t[0];
	for (int q = 1; q < 8; q++)
		max = t[q] > max ? t[q] : max;
	return max;
}

/* r[i][e] -> r[e][i] for 8 rows of 8 floats. */
INLINE void transpose(vf r[8])
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

#elif GB_SIMD_WIDTH == 16

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC target("avx512f,avx2,fma,f16c")
#endif

#define ISA_NAME "avx512"
#define ISA(sym) sym##_avx512

typedef __m512 vf;       /* 16 floats */
typedef __mmask16 vmask; /* one bit per lane */

/* MR × NR = 8 × 32: 16 of the 32 zmm registers accumulate. DIRECT_M 16: for b_trans == 0 with at most 16 rows
 * block() reads b in place, masking the loads past column n, which costs nothing here. */
#define W 16
#define MR GB_MR_AVX512
#define DIRECT_M 16
#define MASK_WHOLE 1 /* masked loads of B cost nothing here: one code path for every panel */
#define DOTS_PAIRS 1 /* bf16 dot products by pairs: see dots_pairs */

INLINE vf v_zero(void) { return _mm512_setzero_ps(); }
INLINE vf v_set1(float x) { return _mm512_set1_ps(x); }
INLINE vf v_broadcast(const float *p) { return _mm512_set1_ps(*p); }
INLINE vf v_load(const float *p) { return _mm512_loadu_ps(p); }
INLINE void v_store(float *p, vf v) { _mm512_storeu_ps(p, v); }
INLINE void v_store_aligned(float *p, vf v) { _mm512_store_ps(p, v); }
INLINE vf v_add(vf a, vf b) { return _mm512_add_ps(a, b); }
INLINE vf v_sub(vf a, vf b) { return _mm512_sub_ps(a, b); }
INLINE vf v_mul(vf a, vf b) { return _mm512_mul_ps(a, b); }
INLINE vf v_div(vf a, vf b) { return _mm512_div_ps(a, b); }
INLINE vf v_max(vf a, vf b) { return _mm512_max_ps(a, b); }
INLINE vf v_min(vf a, vf b) { return _mm512_min_ps(a, b); }
INLINE vf v_fmadd(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }   /* a b + c */
INLINE vf v_fnmadd(vf a, vf b, vf c) { return _mm512_fnmadd_ps(a, b, c); } /* c - a b */
INLINE vf v_abs(vf x) { return _mm512_abs_ps(x); }
INLINE vf v_round(vf x) { return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }

/* 2^n for integral n (as floats) in the normal range, built in the exponent bits. */
INLINE vf v_pow2i(vf n)
{
	__m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
	return _mm512_castsi512_ps(e);
}

/* 16 bfloat16 (the top halves of floats) or 16 IEEE halves at p, widened exactly. */
INLINE vf v_from_bf16(const uint16_t *p)
{
	__m512i x = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p));
	return _mm512_castsi512_ps(_mm512_slli_epi32(x, 16));
}
INLINE vf v_from_f16(const uint16_t *p) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p)); }

/* 32 bfloat16 at p as 16 pairs, one per 32-bit lane: the even ones (low halves, shifted up)
 * and the odd ones (high halves, the low bits cleared), widened exactly. */
INLINE void v_from_bf16_pairs(const uint16_t *p, vf *even, vf *odd)
{
	__m512i x = _mm512_loadu_si512(p);
	*even = _mm512_castsi512_ps(_mm512_slli_epi32(x, 16));
	*odd = _mm512_castsi512_ps(_mm512_and_si512(x, _mm512_set1_epi32((int)0xFFFF0000u)));
}

/* 32 floats as two vectors, lo = p[0..16), hi = p[16..32): their even elements, then their odd. */
INLINE void v_deinterleave(vf lo, vf hi, vf *even, vf *odd)
{
	const __m512i ie = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
	*even = _mm512_permutex2var_ps(lo, ie, hi);
	*odd = _mm512_permutex2var_ps(lo, _mm512_add_epi32(ie, _mm512_set1_epi32(1)), hi);
}

/* Lanes of vector v (16 floats each) that hold one of n columns. */
INLINE vmask lane_mask(int n, int v)
{
	int r = n - 16 * v;
	return r >= 16 ? (__mmask16)0xFFFF : r > 0 ? (__mmask16)((1u << r) - 1) : (__mmask16)0;
}

INLINE vf v_load_mask(vmask m, const float *p) { return _mm512_maskz_loadu_ps(m, p); } /* 0 elsewhere */
INLINE void v_store_mask(float *p, vmask m, vf v) { _mm512_mask_storeu_ps(p, m, v); }
INLINE vf v_load_mask_or(vf fill, vmask m, const float *p) { return _mm512_mask_loadu_ps(fill, m, p); }
INLINE vf v_keep(vmask m, vf v) { return _mm512_maskz_mov_ps(m, v); } /* 0 elsewhere */
INLINE vf v_blend(vmask m, vf a, vf b) { return _mm512_mask_blend_ps(m, a, b); } /* m ? b : a */
INLINE vmask v_lt(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
INLINE vmask v_nlt(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_NLT_UQ); } /* or NaN */

/* 1 / den for gelu: a 14-bit reciprocal and one Newton step (~1e-8 relative) cost less than
 * a division, which dominated that function. */
INLINE vf v_recip(vf den)
{
	__m512 t = _mm512_rcp14_ps(den);
	return _mm512_fmadd_ps(t, _mm512_fnmadd_ps(den, t, _mm512_set1_ps(1.0f)), t);
}

INLINE float v_hsum(vf v) { return _mm512_reduce_add_ps(v); }
INLINE float v_hmax(vf v) { return _mm512_reduce_max_ps(v); }

/* r[i][e] -> r[e][i] for 16 rows of 16 floats: unpack pairs of rows (ps), then pairs of
 * pairs (pd), which leaves each 128-bit lane holding 4 × 4 blocks; two rounds of 128-bit lane
 * shuffles put the blocks in place. 64 shuffles for 256 floats. */
INLINE void transpose(vf r[16])
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

#else
#error "simd.c: compile with -DGB_SIMD_WIDTH=8 (AVX2) or -DGB_SIMD_WIDTH=16 (AVX-512); see the Makefile"
#endif

/* Both widths: two vectors per micro-tile row; few-row products with b (K,N) sweep: */
#define NV 2
#define NR (W * NV)
#define GEMV_KR 8     /* b_trans == 0 matrix-vector: rows of b per sweep */
#define GEMV_JC 2048  /* ... and columns per chunk (8 KB of partial sums per row of a) */
#define GEMV_SEQ_N 1024 /* ... but one row at a time when rows have at most this many columns */
#ifndef DOTS_ACC
#define DOTS_ACC 4    /* b_trans == 1 dot products: independent accumulators per row of a */
#endif
/* 16-bit dot products take no software prefetch. One 6 KB ahead of the stream of b once
 * raised bf16 from 1.35-1.45x to 1.65-1.8x fp32's tok/s (one and two threads, 1.36 GB of
 * weights), when weights sat on 4 KB pages and the input at any offset from them; with the
 * weights on huge pages and the input placed beside them (fast.c skew_input) it lowered the
 * one-thread bf16 weights pass of Llama-110M's shape from 96% of the bandwidth bound to 87-89%
 * on avx512 and from 94% to 85% on avx2, and of a 1.5 GB Llama from 94% to 88% (builds with
 * and without it alternating, 2026-11-29). */

/* The first lanes of p under mask m (0 elsewhere), or the whole vector when whole: the
 * whole-vector path takes plain moves, which AVX2 does faster than masked ones. */
INLINE vf load_part(const float *p, vmask m, int whole)
{
	return whole ? v_load(p) : v_load_mask(m, p);
}

INLINE void store_part(float *p, vmask m, int whole, vf v)
{
	if (whole)
		v_store(p, v);
	else
		v_store_mask(p, m, v);
}

/* Weights: a vector of b at element idx, stored as floats (wt GB_W_F32) or as 16-bit values
 * (GB_W_BF16, GB_W_F16) widened here; wt is a constant at every call site. load_w_part reads
 * only the first n (< W) elements, zeros elsewhere (16-bit tails go through a zeroed copy:
 * AVX-512F has no masked 16-bit load). */
INLINE vf load_w(const void *b, size_t idx, const int wt)
{
	if (wt == GB_W_BF16)
		return v_from_bf16((const uint16_t *)b + idx);
	if (wt == GB_W_F16)
		return v_from_f16((const uint16_t *)b + idx);
	return v_load((const float *)b + idx);
}

INLINE vf load_w_part(const void *b, size_t idx, int n, const int wt)
{
	uint16_t t[W];
	if (wt == GB_W_F32)
		return v_load_mask(lane_mask(n, 0), (const float *)b + idx);
	memset(t, 0, sizeof t);
	memcpy(t, (const uint16_t *)b + idx, (size_t)n * sizeof *t);
	return wt == GB_W_BF16 ? v_from_bf16(t) : v_from_f16(t);
}

/* ================================================================ matmul */

/* c (mr, n) = a (mr, kc) · B (kc, n) + (accum ? c : bias); B row k at b + k*ldb. mr is a
 * constant at every call site, so the loops unroll and acc lives in registers. */
INLINE void tile(const int mr, float *c, long ldc, const float *a, long lda, const float *b,
                 long ldb, int kc, int n, const float *bias, int accum)
{
	vf acc[MR][NV];
	vmask mk[NV];
	const float *ar[MR];
	int whole = n == NR;
#pragma GCC unroll 8
	for (int i = 0; i < mr; i++) {
		ar[i] = a + i * lda;
#pragma GCC unroll 4
		for (int v = 0; v < NV; v++)
			acc[i][v] = v_zero();
	}
#pragma GCC unroll 4
	for (int v = 0; v < NV; v++)
		mk[v] = lane_mask(n, v);
#pragma GCC unroll 4
	for (int k = 0; k < kc; k++) {
		vf bv[NV];
#pragma GCC unroll 4
		for (int v = 0; v < NV; v++) /* B in place (DIRECT_M) may end at column n */
#if MASK_WHOLE
			bv[v] = DIRECT_M > 0 ? v_load_mask(mk[v], b + k * ldb + W * v) : v_load(b + k * ldb + W * v);
#else
			bv[v] = DIRECT_M > 0 && !whole ? v_load_mask(mk[v], b + k * ldb + W * v) : v_load(b + k * ldb + W * v);
#endif
#pragma GCC unroll 8
		for (int i = 0; i < mr; i++) {
			vf ai = v_broadcast(ar[i] + k);
#pragma GCC unroll 4
			for (int v = 0; v < NV; v++)
				acc[i][v] = v_fmadd(ai, bv[v], acc[i][v]);
		}
	}
#pragma GCC unroll 8
	for (int i = 0; i < mr; i++)
#pragma GCC unroll 4
		for (int v = 0; v < NV; v++) {
			float *cp = c + i * ldc + W * v;
			vf r = acc[i][v];
			if (accum)
				r = v_add(r, load_part(cp, mk[v], whole));
			else if (bias)
				r = v_add(r, load_part(bias + W * v, mk[v], whole));
			store_part(cp, mk[v], whole, r);
		}
}

/* c (m, n) from a (m, kc) and B (kc, n) in panels: see isa.h. Rows outer, panels inner: the
 * MR rows of a (MR × kc floats) stay in L1 while the panels stream from L2. Without
 * MASK_WHOLE, whole panels take tiles with n the constant NR, whose B loads are plain. */
#if MR >= 8
#define TILE_8_7(n_)                                                                       \
	case 8: tile(8, ci + j, ldc, ai, lda, bp, ldb, kc, n_, bj, accum); break;            \
	case 7: tile(7, ci + j, ldc, ai, lda, bp, ldb, kc, n_, bj, accum); break;
#else
#define TILE_8_7(n_)
#endif
#define TILES(n_)                                                                          \
	switch (mm) {                                                                          \
	TILE_8_7(n_)                                                                           \
	case 6: tile(6, ci + j, ldc, ai, lda, bp, ldb, kc, n_, bj, accum); break;            \
	case 5: tile(5, ci + j, ldc, ai, lda, bp, ldb, kc, n_, bj, accum); break;            \
	case 4: tile(4, ci + j, ldc, ai, lda, bp, ldb, kc, n_, bj, accum); break;            \
	case 3: tile(3, ci + j, ldc, ai, lda, bp, ldb, kc, n_, bj, accum); break;            \
	case 2: tile(2, ci + j, ldc, ai, lda, bp, ldb, kc, n_, bj, accum); break;            \
	default: tile(1, ci + j, ldc, ai, lda, bp, ldb, kc, n_, bj, accum); break;           \
	}
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
#if MASK_WHOLE
			TILES(nn)
#else
			if (nn < NR)
				TILES(nn)
			else
				TILES(NR)
#endif
		}
	}
}
#undef TILES
#undef TILE_8_7

/* ---- packing ---- */

/* dst (panels, kc, NR) from b (N,K), in W × W blocks through registers; masked loads and
 * zero rows cover the ragged edges and the padding. */
static void pack_bt(float *dst, const float *b, int K, int k0, int kc, int j0, int nc)
{
	for (int p = 0; p * NR < nc; p++) {
		float *d = dst + (size_t)p * kc * NR;
		for (int g = 0; g < NV; g++) {
			int jb = p * NR + W * g, rows = nc - jb < W ? nc - jb : W;
			const float *src = b + (size_t)(j0 + jb) * K + k0;
			for (int k = 0; k < kc; k += W) {
				vmask km = lane_mask(kc - k, 0);
				int kn = kc - k < W ? kc - k : W;
				vf r[W];
#pragma GCC unroll 16
				for (int q = 0; q < W; q++)
					r[q] = q < rows ? v_load_mask(km, src + (size_t)q * K + k) : v_zero();
				transpose(r);
#pragma GCC unroll 16
				for (int q = 0; q < W; q++)
					if (q < kn)
						v_store_aligned(d + (size_t)(k + q) * NR + W * g, r[q]);
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
		int jn = nc - p * NR < NR ? nc - p * NR : NR, whole = jn == NR;
		vmask mk[NV];
		const float *src = b + (size_t)k0 * N + j0 + p * NR;
		float *d = dst + (size_t)p * kc * NR;
#pragma GCC unroll 4
		for (int v = 0; v < NV; v++)
			mk[v] = lane_mask(jn, v);
		for (int k = 0; k < kc; k++)
#pragma GCC unroll 4
			for (int v = 0; v < NV; v++)
				v_store_aligned(d + k * NR + W * v, load_part(src + (size_t)k * N + W * v, mk[v], whole));
	}
}

/* ---- few rows: dot products and the matrix-vector product ---- */

/* The DOTS_ACC accumulators of rows i < mr, zeroed. */
INLINE void dots_zero(const int mr, vf s[4][DOTS_ACC])
{
#pragma GCC unroll 4
	for (int i = 0; i < mr; i++)
#pragma GCC unroll 4
		for (int q = 0; q < DOTS_ACC; q++)
			s[i][q] = v_zero();
}

/* out rows i < mr of column j: the sum of row i's DOTS_ACC accumulators, plus the bias. */
INLINE void dots_store(const int mr, vf s[4][DOTS_ACC], float *out, long ldo, const float *bias, int j)
{
#pragma GCC unroll 4
	for (int i = 0; i < mr; i++) {
		vf t = s[i][0];
#pragma GCC unroll 4
		for (int q = 1; q < DOTS_ACC; q++)
			t = v_add(t, s[i][q]);
		out[i * ldo] = v_hsum(t) + (bias ? bias[j] : 0.0f);
	}
}

/* out rows i < mr, column j: dot products of mr rows of a with row j of b (stored as wt).
 * Vector v of the row (W floats from k = v W, the tail masked) goes to accumulator
 * v % DOTS_ACC of its row of a; then the accumulators are added in order and summed across
 * lanes in a fixed order. With one accumulator each row was a chain of K / W dependent
 * multiply-adds (48 at 4 cycles on AVX-512 for K = 768) between two horizontal sums, and
 * one-thread decoding stayed at 75% of the bandwidth bound; independent chains let the loads
 * run ahead. The arithmetic depends on K alone, never on mr or j. */
INLINE void dots_tile(const int mr, const int wt, float *out, long ldo, const float *a,
                      const void *b, const float *bias, int K, int j)
{
	vf s[4][DOTS_ACC];
	size_t bp = (size_t)j * K;
	vmask kt = lane_mask(K & (W - 1), 0);
	int k = 0;
	dots_zero(mr, s);
	for (; k + DOTS_ACC * W <= K; k += DOTS_ACC * W) {
#pragma GCC unroll 4
		for (int q = 0; q < DOTS_ACC; q++) {
			vf bv = load_w(b, bp + k + q * W, wt);
#pragma GCC unroll 4
			for (int i = 0; i < mr; i++)
				s[i][q] = v_fmadd(v_load(a + (size_t)i * K + k + q * W), bv, s[i][q]);
		}
	}
#pragma GCC unroll 4
	for (int q = 0; q < DOTS_ACC; q++) /* the last vectors, the tail masked */
		if (k < K) {
			int whole = K - k >= W;
			vf bv = whole ? load_w(b, bp + k, wt) : load_w_part(b, bp + k, K - k, wt);
#pragma GCC unroll 4
			for (int i = 0; i < mr; i++)
				s[i][q] = v_fmadd(load_part(a + (size_t)i * K + k, kt, whole), bv, s[i][q]);
			k += W;
		}
	dots_store(mr, s, out, ldo, bias, j);
}

INLINE void dots_w(const int wt, float *out, long ldo, const float *a, int m, const void *b,
                   const float *bias, int K, int j0, int j1)
{
	for (int j = j0; j < j1; j++) {
		float *o = out + (j - j0);
		switch (m) {
		case 4: dots_tile(4, wt, o, ldo, a, b, bias, K, j); break;
		case 3: dots_tile(3, wt, o, ldo, a, b, bias, K, j); break;
		case 2: dots_tile(2, wt, o, ldo, a, b, bias, K, j); break;
		default: dots_tile(1, wt, o, ldo, a, b, bias, K, j); break;
		}
	}
}

/* out (m, j1-j0), row stride ldo = a (m,K) · b[j0:j1] (rows of (N,K))^T + bias; m <= 4,
 * one row of b at a time against all m rows of a. One sequential stream of b reached 96% of
 * the measured read bandwidth where tiles of 2, 4 or 8 interleaved rows of b reached 45-60%
 * (Zen 4 under KVM, 768x2048); the rows of a come from L1. */
static void dots(float *out, long ldo, const float *a, int m, const float *b, const float *bias,
                 int K, int j0, int j1)
{
	dots_w(GB_W_F32, out, ldo, a, m, b, bias, K, j0, j1);
}

/* dots() on 16-bit weights of type wt, widened in registers: the same arithmetic as dots()
 * on the widened b. */
static void dots16(float *out, long ldo, const float *a, int m, const uint16_t *b, int wt,
                   const float *bias, int K, int j0, int j1)
{
	wt == GB_W_BF16 ? dots_w(GB_W_BF16, out, ldo, a, m, b, bias, K, j0, j1)
	                : dots_w(GB_W_F16, out, ldo, a, m, b, bias, K, j0, j1);
}

#if DOTS_PAIRS
/* The bf16 dot products by pairs (isa.h: pair_k, split_pairs, dots_pairs). Against dots16's
 * widening of W weights (a zero-extending load with a cross-lane shuffle, then a shift), one
 * load of 2W weights and one shift or one and per W. Decoding the Llama-110M shape, whose
 * 219 MB of bf16 weights mostly sit in this host's 260 MB L3, went 1.09-1.10x as fast on one
 * thread and 1.09-1.20x on two (the two paths' samples interleaved in one run, Zen 4 under
 * KVM); the widening, not the memory, was a limit there. */
#define PAIR_K (2 * W)
#if DOTS_ACC % 2
#error "dots_pairs: DOTS_ACC must be even (an even and an odd accumulator per load)"
#endif

static void split_pairs(float *as, const float *a, int m, int K)
{
	int kp = (K + PAIR_K - 1) / PAIR_K * PAIR_K;
	for (int i = 0; i < m; i++) {
		const float *ai = a + (size_t)i * K;
		float *d = as + (size_t)i * kp;
		vf e, o;
		int k = 0;
		for (; k + PAIR_K <= K; k += PAIR_K) {
			v_deinterleave(v_load(ai + k), v_load(ai + k + W), &e, &o);
			v_store(d + k, e);
			v_store(d + k + W, o);
		}
		if (k < K) /* the last block, zeros past K */
			for (int q = 0; q < W; q++) {
				d[k + q] = k + 2 * q < K ? ai[k + 2 * q] : 0.0f;
				d[k + W + q] = k + 2 * q + 1 < K ? ai[k + 2 * q + 1] : 0.0f;
			}
	}
}

/* out rows i < mr, column j, as dots_tile does for bf16, from the split rows of a (row stride
 * kp): load p of a pass (2W weights from k + p 2W) feeds accumulators 2p (even) and 2p + 1
 * (odd); the last loads, past the whole passes, come from a zeroed copy when short (the split
 * rows are zero there too). */
INLINE void dots_pairs_tile(const int mr, float *out, long ldo, const float *as, long kp,
                            const uint16_t *b, const float *bias, int K, int j)
{
	vf s[4][DOTS_ACC], e, o;
	const uint16_t *bj = b + (size_t)j * K;
	int k = 0;
	dots_zero(mr, s);
	for (; k + DOTS_ACC * W <= K; k += DOTS_ACC * W) {
#pragma GCC unroll 4
		for (int p = 0; p < DOTS_ACC / 2; p++) {
			v_from_bf16_pairs(bj + k + p * PAIR_K, &e, &o);
#pragma GCC unroll 4
			for (int i = 0; i < mr; i++) {
				s[i][2 * p] = v_fmadd(v_load(as + i * kp + k + p * PAIR_K), e, s[i][2 * p]);
				s[i][2 * p + 1] = v_fmadd(v_load(as + i * kp + k + p * PAIR_K + W), o, s[i][2 * p + 1]);
			}
		}
	}
#pragma GCC unroll 4
	for (int p = 0; p < DOTS_ACC / 2; p++)
		if (k < K) {
			uint16_t t[PAIR_K];
			const uint16_t *w = bj + k;
			if (K - k < PAIR_K) {
				memset(t, 0, sizeof t);
				memcpy(t, w, (size_t)(K - k) * sizeof *t);
				w = t;
			}
			v_from_bf16_pairs(w, &e, &o);
#pragma GCC unroll 4
			for (int i = 0; i < mr; i++) {
				s[i][2 * p] = v_fmadd(v_load(as + i * kp + k), e, s[i][2 * p]);
				s[i][2 * p + 1] = v_fmadd(v_load(as + i * kp + k + W), o, s[i][2 * p + 1]);
			}
			k += PAIR_K;
		}
	dots_store(mr, s, out, ldo, bias, j);
}

static void dots_pairs(float *out, long ldo, const float *as, int m, const uint16_t *b,
                       const float *bias, int K, int j0, int j1)
{
	long kp = (K + PAIR_K - 1) / PAIR_K * PAIR_K;
	for (int j = j0; j < j1; j++) {
		float *o = out + (j - j0);
		switch (m) {
		case 4: dots_pairs_tile(4, o, ldo, as, kp, b, bias, K, j); break;
		case 3: dots_pairs_tile(3, o, ldo, as, kp, b, bias, K, j); break;
		case 2: dots_pairs_tile(2, o, ldo, as, kp, b, bias, K, j); break;
		default: dots_pairs_tile(1, o, ldo, as, kp, b, bias, K, j); break;
		}
	}
}
#endif

/* b_trans == 0, rows k..k+kr-1 of b (stored as wt; element bk is row k, column 0 of this
 * chunk; row stride N) against m rows of a (a points at column k of row 0; row stride lda):
 * out (m, n), row stride ldo, = (first ? 0 : out) + the terms a[i][k] b[k][j] of those rows, in
 * increasing k, one FMA each. kr, m and wt are constants at each call site. Reading kr whole
 * rows of b at a time keeps every load stream sequential, where walking down a stripe of
 * columns would jump by N floats at every row; each vector of b is loaded once for the m rows
 * of a. */
INLINE void gemv_rows(const int kr, const int m, const int wt, float *out, long ldo,
                      const float *a, long lda, const void *b, size_t bk, long N, int n, int first)
{
	for (int j = 0; j < n; j += W) {
		int whole = n - j >= W; /* the tail: masked */
		vmask mk = lane_mask(n - j, 0);
		vf bv[GEMV_KR];
#pragma GCC unroll 8
		for (int r = 0; r < kr; r++)
			bv[r] = whole ? load_w(b, bk + r * N + j, wt) : load_w_part(b, bk + r * N + j, n - j, wt);
#pragma GCC unroll 8
		for (int i = 0; i < m; i++) {
			vf acc = first ? v_zero() : load_part(out + i * ldo + j, mk, whole);
#pragma GCC unroll 8
			for (int r = 0; r < kr; r++)
				acc = v_fmadd(v_broadcast(a + i * lda + r), bv[r], acc);
			store_part(out + i * ldo + j, mk, whole, acc);
		}
	}
}

/* All of K for m rows: sweeps of GEMV_KR rows, then the rest. Rows of b of at most GEMV_SEQ_N
 * columns (the whole row in one chunk) go one at a time instead, so that b is read front to
 * back as one stream: 8 rows of 3 KB side by side read GPT-2's 768-column matrices (attention
 * and MLP output) at 63-64% of the probe's bandwidth, one at a time at 89-92%; wider rows, 8 at a
 * time (77-81% on 2304 and 3072 columns, where one at a time fell to 59-63%: the partial sums'
 * load and store per vector of b then cost more than the reading). The terms are the same FMAs
 * in the same order either way. */
INLINE void gemv_sweeps(const int m, const int wt, float *out, long ldo, const float *a, long lda,
                        const void *b, size_t bj, long N, int K, int n)
{
	int k = 0;
	if (N <= GEMV_SEQ_N) {
		for (; k < K; k++)
			gemv_rows(1, m, wt, out, ldo, a + k, lda, b, bj + (size_t)k * N, N, n, k == 0);
		return;
	}
	for (; k + GEMV_KR <= K; k += GEMV_KR)
		gemv_rows(GEMV_KR, m, wt, out, ldo, a + k, lda, b, bj + (size_t)k * N, N, n, k == 0);
	if (K - k >= 4) { /* the rest: 4, 2 and 1 rows, the same terms in the same order */
		gemv_rows(4, m, wt, out, ldo, a + k, lda, b, bj + (size_t)k * N, N, n, k == 0);
		k += 4;
	}
	if (K - k >= 2) {
		gemv_rows(2, m, wt, out, ldo, a + k, lda, b, bj + (size_t)k * N, N, n, k == 0);
		k += 2;
	}
	if (K - k >= 1)
		gemv_rows(1, m, wt, out, ldo, a + k, lda, b, bj + (size_t)k * N, N, n, k == 0);
}

/* out (m, N), row stride ldo = a (m, K), row stride lda, · b (K, N) stored as wt, m <= 8:
 * columns in chunks of GEMV_JC (the partial sums stay in L1), each swept by GEMV_KR rows of b
 * at a time. */
INLINE void gemv_w(const int wt, float *out, long ldo, const float *a, long lda, int m,
                   const void *b, int K, int N)
{
	for (int jc = 0; jc < N; jc += GEMV_JC) {
		int n = N - jc < GEMV_JC ? N - jc : GEMV_JC;
		switch (m) {
		case 8: gemv_sweeps(8, wt, out + jc, ldo, a, lda, b, jc, N, K, n); break;
		case 7: gemv_sweeps(7, wt, out + jc, ldo, a, lda, b, jc, N, K, n); break;
		case 6: gemv_sweeps(6, wt, out + jc, ldo, a, lda, b, jc, N, K, n); break;
		case 5: gemv_sweeps(5, wt, out + jc, ldo, a, lda, b, jc, N, K, n); break;
		case 4: gemv_sweeps(4, wt, out + jc, ldo, a, lda, b, jc, N, K, n); break;
		case 3: gemv_sweeps(3, wt, out + jc, ldo, a, lda, b, jc, N, K, n); break;
		case 2: gemv_sweeps(2, wt, out + jc, ldo, a, lda, b, jc, N, K, n); break;
		default: gemv_sweeps(1, wt, out + jc, ldo, a, lda, b, jc, N, K, n); break;
		}
	}
}

static void gemv(float *out, long ldo, const float *a, long lda, int m, const float *b, int K,
                 int N)
{
	gemv_w(GB_W_F32, out, ldo, a, lda, m, b, K, N);
}

/* gemv() on 16-bit weights of type wt, widened in registers: the same arithmetic as gemv()
 * on the widened b. */
static void gemv16(float *out, long ldo, const float *a, long lda, int m, const uint16_t *b,
                   int wt, int K, int N)
{
	wt == GB_W_BF16 ? gemv_w(GB_W_BF16, out, ldo, a, lda, m, b, K, N)
	                : gemv_w(GB_W_F16, out, ldo, a, lda, m, b, K, N);
}

/* ================================================================ element-wise */

/* e^x, relative error ~1e-7 (Cephes expf: x = n ln2 + r, |r| <= ln2/2, degree-7 polynomial,
 * times 2^n built in the exponent bits). Below -87.34 (e^x under FLT_MIN) the result is 0,
 * so exp(-inf) is exactly 0; NaN stays NaN. */
INLINE vf v_exp(vf x)
{
	const vf lo = v_set1(-87.33654f), hi = v_set1(88.3762626647949f);
	vmask keep = v_nlt(x, lo); /* x >= lo or NaN */
	/* constants first: max/min return the second operand when one is NaN */
	x = v_min(hi, v_max(lo, x));
	vf n = v_round(v_mul(x, v_set1(1.44269504088896341f)));
	vf r = v_fnmadd(n, v_set1(0.693359375f), x);
	r = v_fnmadd(n, v_set1(-2.12194440e-4f), r);
	vf p = v_set1(1.9875691500e-4f);
	p = v_fmadd(p, r, v_set1(1.3981999507e-3f));
	p = v_fmadd(p, r, v_set1(8.3334519073e-3f));
	p = v_fmadd(p, r, v_set1(4.1665795894e-2f));
	p = v_fmadd(p, r, v_set1(1.6666665459e-1f));
	p = v_fmadd(p, r, v_set1(5.0000001201e-1f));
	p = v_fmadd(p, v_mul(r, r), v_add(r, v_set1(1.0f)));
	return v_keep(keep, v_mul(p, v_pow2i(n)));
}

/* x Phi(x), Phi(x) = erfc(-x/sqrt2)/2, with erfc from Numerical Recipes' erfcc (relative
 * error < 1.2e-7 for z >= 0) on z = |x|/sqrt2 and erfc(-z) = 2 - erfc(z). */
INLINE vf v_gelu(vf x)
{
	vf z = v_mul(v_abs(x), v_set1(0.70710678118654752f));
	vf t = v_recip(v_fmadd(z, v_set1(0.5f), v_set1(1.0f))); /* 1/(1 + z/2) */
	vf p = v_set1(0.17087277f);
	p = v_fmadd(p, t, v_set1(-0.82215223f));
	p = v_fmadd(p, t, v_set1(1.48851587f));
	p = v_fmadd(p, t, v_set1(-1.13520398f));
	p = v_fmadd(p, t, v_set1(0.27886807f));
	p = v_fmadd(p, t, v_set1(-0.18628806f));
	p = v_fmadd(p, t, v_set1(0.09678418f));
	p = v_fmadd(p, t, v_set1(0.37409196f));
	p = v_fmadd(p, t, v_set1(1.00002368f));
	p = v_fmadd(p, t, v_set1(-1.26551223f));
	vf half = v_mul(v_set1(0.5f), v_mul(t, v_exp(v_fnmadd(z, z, p))));
	vmask neg = v_lt(x, v_zero());
	vf phi = v_blend(neg, v_sub(v_set1(1.0f), half), half);
	return v_mul(x, phi);
}

/* x / (1 + e^(-u)): silu with u = x; tanh-gelu with u = 2 sqrt(2/pi) (x + 0.044715 x^3), since
 * 0.5 (1 + tanh v) = 1 / (1 + e^(-2v)), which also avoids tanh's cancellation near -1. */
INLINE vf v_sigmul(vf x, vf u)
{
	return v_div(x, v_add(v_set1(1.0f), v_exp(v_sub(v_zero(), u))));
}

INLINE vf v_act(vf x, int act)
{
	switch (act) {
	case GB_ACT_RELU:
		return v_max(x, v_zero()); /* NaN -> 0, as the reference's x > 0 */
	case GB_ACT_GELU:
		return v_gelu(x);
	case GB_ACT_GELU_TANH: {
		vf x2 = v_mul(x, x);
		vf u = v_mul(x, v_fmadd(x2, v_set1(2 * 0.7978845608f * 0.044715f), v_set1(2 * 0.7978845608f)));
		return v_sigmul(x, u);
	}
	case GB_ACT_SILU:
		return v_sigmul(x, x);
	}
	return v_set1(NAN);
}

/* out, x (n). The ragged end takes the same vector arithmetic, masked. */
static void activate(float *out, const float *x, size_t n, int act)
{
	size_t i = 0;
	for (; i + W <= n; i += W)
		v_store(out + i, v_act(v_load(x + i), act));
	if (i < n) {
		vmask m = lane_mask((int)(n - i), 0);
		v_store_mask(out + i, m, v_act(v_load_mask(m, x + i), act));
	}
}

/* x (rows, n) in place: max, then exp and sum, then scale; -inf lanes give exactly 0. */
static void softmax(float *x, int rows, int n)
{
	const vf ninf = v_set1(-INFINITY);
	int nfull = n & ~(W - 1);
	vmask tm = lane_mask(n - nfull, 0);
	for (int r = 0; r < rows; r++) {
		float *row = x + (size_t)r * n, max;
		vf mx = ninf, sum = v_zero(), mv, inv;
		int j;
		for (j = 0; j < nfull; j += W)
			mx = v_max(mx, v_load(row + j));
		if (j < n)
			mx = v_max(mx, v_load_mask_or(ninf, tm, row + j));
		max = v_hmax(mx);
		if (max == -INFINITY) {
			memset(row, 0, (size_t)n * sizeof *row);
			continue;
		}
		mv = v_set1(max);
		for (j = 0; j < nfull; j += W) {
			vf e = v_exp(v_sub(v_load(row + j), mv));
			v_store(row + j, e);
			sum = v_add(sum, e);
		}
		if (j < n) {
			vf e = v_exp(v_sub(v_load_mask_or(ninf, tm, row + j), mv));
			v_store_mask(row + j, tm, e);
			sum = v_add(sum, e); /* masked lanes hold exp(-inf) = 0 */
		}
		inv = v_set1(1.0f / v_hsum(sum));
		for (j = 0; j < nfull; j += W)
			v_store(row + j, v_mul(v_load(row + j), inv));
		if (j < n)
			v_store_mask(row + j, tm, v_mul(v_load_mask(tm, row + j), inv));
	}
}

/* y (d) = (x (d) - shift) * s * g (d) + b (d); g, b may be NULL. */
INLINE void scale_row(float *y, const float *x, vf shift, vf s, const float *g, const float *b,
                      int d)
{
	for (int j = 0; j < d; j += W) {
		vmask m = lane_mask(d - j, 0);
		vf v = v_mul(v_sub(v_load_mask(m, x + j), shift), s);
		if (g)
			v = v_mul(v, v_load_mask(m, g + j));
		if (b)
			v = v_add(v, v_load_mask(m, b + j));
		store_part(y + j, m, d - j >= W, v);
	}
}

/* out, x (rows, d); mean, var (rows) or NULL; g, b (d) or NULL. Two passes (mean, then the
 * squared deviations) rather than sum and sum of squares, which cancels when |mean| >> sigma. */
static void layernorm(float *out, float *mean, float *var, const float *x, const float *g,
                      const float *b, int rows, int d, float eps, int textbook)
{
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (size_t)r * d;
		vf s = v_zero(), q = v_zero(), mv;
		float mu, v;
		for (int j = 0; j < d; j += W)
			s = v_add(s, v_load_mask(lane_mask(d - j, 0), xr + j));
		mu = v_hsum(s) / d;
		mv = v_set1(mu);
		for (int j = 0; j < d; j += W) {
			vmask m = lane_mask(d - j, 0);
			vf c = v_keep(m, v_sub(v_load_mask(m, xr + j), mv));
			q = v_fmadd(c, c, q);
		}
		v = v_hsum(q) / d;
		if (mean)
			mean[r] = mu;
		if (var)
			var[r] = v;
		scale_row(out + (size_t)r * d, xr, mv,
		          v_set1(1.0f / (textbook ? sqrtf(v) + eps : sqrtf(v + eps))), g, b, d);
	}
}

/* out, x (rows, d); rms (rows) or NULL; g (d) or NULL. */
static void rmsnorm(float *out, float *rms, const float *x, const float *g, int rows, int d,
                    float eps)
{
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (size_t)r * d;
		vf q = v_zero();
		float s;
		for (int j = 0; j < d; j += W) {
			vf v = v_load_mask(lane_mask(d - j, 0), xr + j);
			q = v_fmadd(v, v, q);
		}
		s = sqrtf(v_hsum(q) / d + eps);
		if (rms)
			rms[r] = s;
		scale_row(out + (size_t)r * d, xr, v_zero(), v_set1(1.0f / s), g, NULL, d);
	}
}

/* out, a, b (n). */
static void mul(float *out, const float *a, const float *b, size_t n)
{
	size_t i = 0;
	for (; i + W <= n; i += W)
		v_store(out + i, v_mul(v_load(a + i), v_load(b + i)));
	if (i < n) {
		vmask m = lane_mask((int)(n - i), 0);
		v_store_mask(out + i, m, v_mul(v_load_mask(m, a + i), v_load_mask(m, b + i)));
	}
}

/* y, x (n). */
static void add(float *y, const float *x, size_t n)
{
	size_t i = 0;
	for (; i + W <= n; i += W)
		v_store(y + i, v_add(v_load(y + i), v_load(x + i)));
	if (i < n) {
		vmask m = lane_mask((int)(n - i), 0);
		v_store_mask(y + i, m, v_add(v_load_mask(m, y + i), v_load_mask(m, x + i)));
	}
}

const gb_isa ISA(gb_isa) = {
	.name = ISA_NAME, .mr = MR, .nr = NR, .kc = 256, .direct_m = DIRECT_M, .dots_m = 16,
	.pack = pack, .block = block, .gemv = gemv, .dots = dots, .gemv16 = gemv16, .dots16 = dots16,
#if DOTS_PAIRS
	.pair_k = PAIR_K, .split_pairs = split_pairs, .dots_pairs = dots_pairs,
#endif
	.softmax = softmax, .layernorm = layernorm, .rmsnorm = rmsnorm,
	.activate = activate, .mul = mul, .add = add,
};

#if defined(__clang__)
#pragma clang attribute pop
#endif

#endif
