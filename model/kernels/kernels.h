/* kernels.h — the kernel table: every numeric operation the forward pass (and later the
 * trainer) performs goes through one of these function pointers, so switching between the
 * full-precision reference and the optimized kernels never touches the forward code.
 *
 * Tables:
 *   "ref"     plain loops, double accumulation, fixed summation order, one thread. The oracle.
 *   "scalar"  the fast table's portable path (float accumulation, blocked, threaded, no SIMD).
 *   "avx2"    AVX2 + FMA.
 *   "avx512"  AVX-512F.
 * gb_kernels_fast() picks the best path this CPU supports (__builtin_cpu_supports), unless the
 * environment variable GLASSBOX_KERNELS=ref|scalar|avx2|avx512 forces one.
 *
 * All matrices are row-major and contiguous. Shapes are given in comments as (rows, cols). */
#ifndef GLASSBOX_KERNELS_H
#define GLASSBOX_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* How a weight matrix is stored: 32-bit floats, or 16-bit bfloat16 / IEEE half floats kept in
 * that format in memory (half the bytes to read per token) and widened to float inside the
 * kernel. Widening is exact: every bf16 and f16 value is a float. */
enum gb_wtype { GB_W_F32, GB_W_BF16, GB_W_F16 };

/* One product of a group that shares its input (matmul_multi): out (M,N) = a · bᵀ + bias, b
 * (N,K) row-major (b_trans == 1), float when wtype is GB_W_F32, else 16-bit of that type. */
typedef struct gb_mm_one {
	float *out;
	const void *b;
	int wtype;
	const float *bias; /* (N) or NULL */
	int N;
} gb_mm_one;

typedef struct gb_kernels {
	const char *name;

	/* out (M,N) = a (M,K) · B + bias (N), where B is (K,N) = b when b_trans == 0, and
	 * B = transpose of b (N,K) when b_trans == 1. bias may be NULL. out never aliases a or b. */
	void (*matmul)(float *out, const float *a, const float *b, const float *bias,
	               int M, int K, int N, int b_trans);

	/* matmul with b stored as 16-bit values of type wtype (GB_W_BF16 or GB_W_F16; any other
	 * value fills out with NaN): the same product as matmul on b widened to float. Few rows
	 * (M <= 16, decoding) read b once, widening in registers; more rows widen b into a float
	 * copy first (temporary memory: K·N floats), then run matmul. The same numbers as that
	 * matmul, except bf16 with b_trans and few rows on the avx512 table, which sums the same
	 * terms in another order (model/kernels/isa.h: dots_pairs), as close to the exact sum. */
	void (*matmul_w16)(float *out, const float *a, const uint16_t *b, int wtype,
	                   const float *bias, int M, int K, int N, int b_trans);

	/* Optional (NULL in the reference table: call matmul or matmul_w16, then activate):
	 * out (M,N) = a · B + bias as matmul computes it (b float when wtype is GB_W_F32) or
	 * matmul_w16 (b 16-bit, wtype GB_W_BF16 or GB_W_F16), and act_out (M,N) = activate(out, act),
	 * the same numbers as those two calls, each block of out activated while it is still in
	 * the cache of the thread that computed it (a non-gated FFN's up projection). */
	void (*matmul_act)(float *out, float *act_out, const float *a, const void *b, int wtype,
	                   const float *bias, int M, int K, int N, int b_trans, int act);

	/* Optional (NULL in the reference table: call matmul or matmul_w16 for each): the n
	 * products p[0..n) of one input a (M,K), each element the number matmul / matmul_w16 gives
	 * it, in one parallel region where those n calls would take n. Decoding reads each weight
	 * once per token and the second thread spends the end of every region waiting: q, k and v
	 * (or the gate and up projections) as one region is 4 regions a Llama layer instead of 7. */
	void (*matmul_multi)(const gb_mm_one *p, int n, const float *a, int M, int K);

	/* Optional (NULL in the reference table): rows [i0, i1) and columns [j0, j1) of matmul's
	 * out (M,N) = a (M,K) · B + bias, computed on the calling thread alone and written into out
	 * in place (nothing else of out is touched), each element the number matmul gives it. For
	 * a caller that shares a product among the tasks of a parallel region of its own (a head's
	 * columns of the q/k/v projection, a block of rows and the row-wise operations after it). */
	void (*matmul_part)(float *out, const float *a, const float *b, const float *bias,
	                    int M, int K, int N, int b_trans, int i0, int i1, int j0, int j1);
	/* With matmul_part: the rows of a that one pass of the table's block kernel over B takes
	 * (8 on avx512, 6 on avx2, 4 on scalar). A caller that gives each part a multiple of them
	 * (at most 16 rows: B read in place, not packed) has B read once per that many rows; 8
	 * rows on avx2 would take two passes, of 6 and 2. 0 in the reference table. */
	int part_rows;

	/* Row-wise softmax in place over x (rows, n). -INFINITY entries become exactly 0; a row
	 * that is entirely -INFINITY becomes all 0 (nothing to attend to). */
	void (*softmax)(float *x, int rows, int n);

	/* Layer norm of x (rows, d) into out (rows, d); mean and var (rows) receive the row mean
	 * and population variance. out = g * (x - mean) / sqrt(var + eps) + b, or with
	 * textbook != 0, out = g * (x - mean) / (sqrt(var) + eps) + b. g and b may be NULL
	 * (gain 1, bias 0). out may alias x. */
	void (*layernorm)(float *out, float *mean, float *var, const float *x, const float *g,
	                  const float *b, int rows, int d, float eps, int textbook);

	/* RMS norm of x (rows, d): rms (rows) = sqrt(mean(x^2) + eps); out = g * x / rms.
	 * g may be NULL. out may alias x. */
	void (*rmsnorm)(float *out, float *rms, const float *x, const float *g, int rows, int d,
	                float eps);

	/* Element-wise activations, out (n) = f(x (n)); out may alias x.
	 * act: see enum gb_act in model/config.h (GB_ACT_RELU, GB_ACT_GELU, GB_ACT_GELU_TANH,
	 * GB_ACT_SILU). */
	void (*activate)(float *out, const float *x, size_t n, int act);

	/* out (n) = a (n) * b (n), element-wise (the SwiGLU product). out may alias a or b. */
	void (*mul)(float *out, const float *a, const float *b, size_t n);

	/* y (n) += x (n) (the residual add). */
	void (*add)(float *y, const float *x, size_t n);

	/* One head of linear attention (Katharopoulos et al. 2020) on feature-mapped queries and
	 * keys: out (Tq, E) row i = sum_j a_ij v_j / sum_j a_ij, a_ij = fq_i . fk_j, over the keys j
	 * query i may see: j <= pos0 + i when causal (query i sits at position pos0 + i; keys at
	 * 0 .. Tk - 1), every key otherwise, and never a key with key_ok[j] == 0 (key_ok (Tk) may
	 * be NULL). fq (Tq, E), fk (Tk, E), v (Tk, E); features positive (elu + 1). A row with no
	 * key is 0. The reference computes each a_ij and the weighted sum (the quadratic form, in
	 * double); the fast tables carry the running sums S = sum_j fk_j v_jᵀ (E, E) and
	 * z = sum_j fk_j over the keys in order (the recurrent form: E² per key, no n² table). */
	void (*linear_attn)(float *out, const float *fq, const float *fk, const float *v, int Tq, int Tk, int E,
	                    int pos0, int causal, const unsigned char *key_ok);
} gb_kernels;

/* The reference table. */
const gb_kernels *gb_kernels_ref(void);

/* The fast table for this CPU (or as forced by GLASSBOX_KERNELS; "ref" there returns the
 * reference table). Never NULL: an unknown or unsupported forced name falls back to the best
 * supported path, and gb_kernels_env_problem() says why. */
const gb_kernels *gb_kernels_fast(void);

/* A table by name: "ref", "scalar", "avx2", "avx512", or "fast" (the best for this CPU).
 * NULL when the name is unknown or the CPU lacks the instructions. */
const gb_kernels *gb_kernels_by_name(const char *name);

/* A one-line explanation when GLASSBOX_KERNELS names an unknown or unsupported path, else NULL. */
const char *gb_kernels_env_problem(void);

/* Threads used by the fast tables (default: the number of online CPUs, at most 8).
 * n <= 0 restores the default. The reference table always uses one thread. */
void gb_kernels_set_threads(int n);
int gb_kernels_threads(void);

/* One 16-bit weight widened to float (exact), as every table reads it; NaN for an unknown
 * wtype. */
float gb_w16_to_float(uint16_t v, int wtype);

/* The activation function scalar definitions, shared by every table so they agree on meaning
 * (the tables may vectorize their own versions). */
double gb_act_ref(double x, int act);

#endif
