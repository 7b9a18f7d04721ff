/* isa.h — internal to the fast kernel table (fast.c, scalar.c, simd.c): what one
 * instruction-set path provides. fast.c owns blocking, threading, dispatch and the
 * floating-point mode; scalar.c the portable inner loops; simd.c, compiled once per vector
 * width, the inner loops of the avx2 and avx512 paths. Nothing outside these files includes
 * this. */
#ifndef GLASSBOX_KERNELS_ISA_H
#define GLASSBOX_KERNELS_ISA_H

#include <stddef.h>
#include <stdint.h>

/* Rows of a that each path's micro-tile takes (gb_isa.mr): fast.c also gives them to the
 * tables' callers (gb_kernels.part_rows). Macros: simd.c tests MR in #if. */
#define GB_MR_SCALAR 4
#define GB_MR_AVX2 6
#define GB_MR_AVX512 8

typedef struct gb_isa {
	const char *name;
	int mr, nr;     /* micro-tile: rows of a, columns of B */
	int kc;         /* longest K block (B block of kc × nc stays in L2, an a block in L1) */
	int direct_m;   /* when b_trans == 0 and M <= direct_m, block() reads b in place
	                 * (ldb = N) instead of a packed copy: packing would cost more than the
	                 * few rows that reuse it. 0: always pack. */
	int dots_m;     /* when b_trans == 1 and M <= dots_m, dots() instead of packing */

	/* Packs B rows [k0, k0+kc) and columns [j0, j0+nc) into panels of nr columns:
	 * dst (ceil(nc/nr), kc, nr), zero-padded past column nc. B (K,N) is b when
	 * b_trans == 0, the transpose of b (N,K) when b_trans == 1. dst is 64-byte aligned. */
	void (*pack)(float *dst, const float *b, int b_trans, int K, int N, int k0, int kc,
	             int j0, int nc);

	/* c (m,n), row stride ldc: c = a·B + (accum ? c : bias ? bias : 0), where a is (m,kc)
	 * with row stride lda and B (kc,n) is read as B[k][j] = b[(j/nr)*pstride + k*ldb + j%nr]
	 * (packed panels: ldb = nr, pstride = kc*nr; in place: ldb = N, pstride = nr).
	 * bias (n) may be NULL. The sum over k runs in increasing k, one FMA per term, into one
	 * accumulator per output element, so results do not depend on how callers split m or n. */
	void (*block)(float *c, long ldc, const float *a, long lda, const float *b, long ldb,
	              long pstride, int m, int n, int kc, const float *bias, int accum);

	/* b_trans == 0 with few rows of a: out (m, N), row stride ldo, = a (m, K), row stride lda,
	 * · b (K, N), for m <= 8, reading b in place. Each element sums its K terms in increasing
	 * k, one multiply-add each, whatever m: the same arithmetic for every row. */
	void (*gemv)(float *out, long ldo, const float *a, long lda, int m, const float *b, int K,
	             int N);

	/* b_trans == 1 with few rows of a: out (m, j1-j0), row stride ldo, pointing at column
	 * j0, = a (m,K) · (rows j0..j1-1 of b (N,K))^T + bias[j0:j1], for m <= 4, as dot products
	 * (b is read in place, no packing). Each element sums its vectors over k (the tail masked)
	 * into a few accumulators by a rule that depends on K alone, adds them in order, then
	 * sums across lanes in a fixed order: the same arithmetic whatever m, j0 and j1. */
	void (*dots)(float *out, long ldo, const float *a, int m, const float *b, const float *bias,
	             int K, int j0, int j1);

	/* gemv and dots with b stored as 16-bit values of type wtype (GB_W_BF16 or GB_W_F16),
	 * widened in registers: the same arithmetic as gemv and dots on the widened b. */
	void (*gemv16)(float *out, long ldo, const float *a, long lda, int m, const uint16_t *b,
	               int wtype, int K, int N);
	void (*dots16)(float *out, long ldo, const float *a, int m, const uint16_t *b, int wtype,
	               const float *bias, int K, int j0, int j1);

	/* dots16 for bf16 by pairs, or NULL: one load of 2W weights (pair_k) gives the W odd
	 * ones as the high halves of its 32-bit lanes and the W even ones as the low halves
	 * shifted up, so a must come split the same way: split_pairs writes as (m, KP), KP = K
	 * rounded up to pair_k, each block of pair_k elements of a row of a as its even elements,
	 * then its odd ones, zeros past K. Even and odd terms go to different accumulators, so
	 * this is not dots' arithmetic; it depends on K alone. */
	int pair_k;
	void (*split_pairs)(float *as, const float *a, int m, int K);
	void (*dots_pairs)(float *out, long ldo, const float *as, int m, const uint16_t *b,
	                   const float *bias, int K, int j0, int j1);

	/* As in gb_kernels (model/kernels/kernels.h). */
	void (*softmax)(float *x, int rows, int n);
	void (*layernorm)(float *out, float *mean, float *var, const float *x, const float *g,
	                  const float *b, int rows, int d, float eps, int textbook);
	void (*rmsnorm)(float *out, float *rms, const float *x, const float *g, int rows, int d,
	                float eps);
	void (*activate)(float *out, const float *x, size_t n, int act);
	void (*mul)(float *out, const float *a, const float *b, size_t n);
	void (*add)(float *y, const float *x, size_t n);
} gb_isa;

extern const gb_isa gb_isa_scalar; /* scalar.c */
#if defined(__x86_64__) /* simd.c, with GB_SIMD_WIDTH 8 and 16 */
extern const gb_isa gb_isa_avx2;
extern const gb_isa gb_isa_avx512;
#endif

#endif
