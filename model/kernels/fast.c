/* fast.c — the fast kernel tables ("scalar", "avx2", "avx512"): CPU dispatch, the
 * GLASSBOX_KERNELS override, the blocked and threaded matmul driver, and the portable scalar
 * path's dispatch. The portable inner loops live in scalar.c, the SIMD ones in simd.c,
 * compiled once per vector width (isa.h).
 *
 * Contract:
 *  - every fast-table call runs with flush-to-zero and denormals-are-zero on (pool.h says
 *    why) and restores the caller's mode before returning, so the reference table called on
 *    the same thread still sees denormals;
 *  - results do not depend on the thread count: the blocking (K blocks) depends only on the
 *    shape, and each output element is computed by the same sequence of operations whichever
 *    thread computes it;
 *  - a matmul too small to repay a hand-off runs on the calling thread alone. */
#include "model/kernels/kernels.h"
#include "model/kernels/isa.h"
#include "model/config.h"
#include "model/kernels/pool.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	NC = 256,                /* columns per packed B block (a multiple of every nr): B block in L2 */
	MT_MIN_MACS = 1 << 18,   /* below ~256K multiply-adds (~2 us on AVX-512) a matmul stays on one
	                          * thread: measured break-even of a hand-off is ~150K */
	GEMV_MT_MIN = 1 << 17,   /* the same for the memory-bound matrix-vector products */
	TASKS_PER_THREAD = 4,
	EW_MT_MIN = 1 << 12,     /* element-wise operations and norms: elements above which they split.
	                          * A tiny model's norms and residual adds (64 tokens x 128) split on 2
	                          * threads made its forward on 2 threads ~8% faster than at 1 << 15 */
};

/* ---- per-thread buffers ---- */

static pthread_key_t buf_key;
static pthread_once_t buf_once = PTHREAD_ONCE_INIT;

enum { BUF_PACK, BUF_SKEW, N_BUFS }; /* packed or split operands; the skewed copy of a */

struct pack_buf {
	size_t cap[N_BUFS]; /* floats */
	float *p[N_BUFS];
};

static void buf_free(void *v)
{
	struct pack_buf *pb = v;
	for (int i = 0; i < N_BUFS; i++)
		free(pb->p[i]);
	free(pb);
}

static void buf_init(void)
{
	pthread_key_create(&buf_key, buf_free);
}

/* This thread's 64-byte aligned buffer `which` of n floats, or NULL when memory is short. */
static float *thread_buffer(int which, size_t n)
{
	struct pack_buf *pb;
	pthread_once(&buf_once, buf_init);
	pb = pthread_getspecific(buf_key);
	if (!pb) {
		pb = calloc(1, sizeof *pb);
		if (!pb || pthread_setspecific(buf_key, pb) != 0) {
			free(pb);
			return NULL;
		}
	}
	if (pb->cap[which] < n) {
		free(pb->p[which]);
		pb->cap[which] = 0;
		pb->p[which] = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
		if (!pb->p[which])
			return NULL;
		pb->cap[which] = n;
	}
	return pb->p[which];
}

static float *pack_buffer(size_t n)
{
	return thread_buffer(BUF_PACK, n);
}

/* ---- the matmul driver ---- */

struct mm_job {
	const gb_isa *isa;
	float *out;              /* (M,N) */
	const float *a;          /* (M,K) */
	const float *b;          /* (K,N), or (N,K) when bt */
	const float *bias;       /* (N) or NULL */
	int M, K, N, bt;
	int kc;                  /* K block, from K alone */
	int split_m;             /* tasks split rows (else columns) */
	int n_tasks;
	float *act_out;          /* (M,N) activate(out, act) as each block is done, or NULL */
	int act;
};

/* act_out rows [i0,i1) x columns [j0,j1) = the activation of out's (matmul_act). */
static void act_block(const struct mm_job *J, int i0, int i1, int j0, int j1)
{
	for (int i = i0; J->act_out && i < i1; i++)
		J->isa->activate(J->act_out + (size_t)i * J->N + j0, J->out + (size_t)i * J->N + j0, (size_t)(j1 - j0), J->act);
}

/* The K block: K cut into equal pieces no longer than the ISA's kc. */
static int k_block(const gb_isa *isa, int K)
{
	int nk = (K + isa->kc - 1) / isa->kc;
	return (K + nk - 1) / nk;
}

/* Rows [i0,i1) × columns [j0,j1) of out. With no memory for a packed copy, B is read in
 * place when the ISA can (the same arithmetic), else the reference fills the range. */
static void mm_range(const struct mm_job *J, int i0, int i1, int j0, int j1)
{
	const gb_isa *isa = J->isa;
	int M = i1 - i0, K = J->K, N = J->N, kc = J->kc, nr = isa->nr;
	int direct = !J->bt && M <= isa->direct_m;
	float *buf = NULL;
	if (!direct) {
		int ncmax = j1 - j0 < NC ? j1 - j0 : NC;
		buf = pack_buffer((size_t)kc * ((ncmax + nr - 1) / nr * nr));
		if (!buf) {
			if (!J->bt && isa->direct_m > 0) {
				direct = 1;
			} else {
				for (int i = i0; i < i1; i++)
					for (int j = j0; j < j1; j++) {
						double s = J->bias ? J->bias[j] : 0;
						for (int k = 0; k < K; k++)
							s += (double)J->a[(size_t)i * K + k] *
							     (J->bt ? J->b[(size_t)j * K + k] : J->b[(size_t)k * N + j]);
						J->out[(size_t)i * N + j] = (float)s;
					}
				act_block(J, i0, i1, j0, j1);
				return;
			}
		}
	}
	for (int jc = j0; jc < j1; jc += NC) {
		int nc = j1 - jc < NC ? j1 - jc : NC;
		for (int pc = 0; pc < K; pc += kc) {
			int kcur = K - pc < kc ? K - pc : kc;
			const float *bp;
			long ldb, pstride;
			if (direct) {
				bp = J->b + (size_t)pc * N + jc;
				ldb = N;
				pstride = nr;
			} else {
				isa->pack(buf, J->b, J->bt, K, N, pc, kcur, jc, nc);
				bp = buf;
				ldb = nr;
				pstride = (long)kcur * nr;
			}
			isa->block(J->out + (size_t)i0 * N + jc, N, J->a + (size_t)i0 * K + pc, K, bp, ldb,
			           pstride, M, nc, kcur, pc == 0 && J->bias ? J->bias + jc : NULL, pc > 0);
		}
		act_block(J, i0, i1, jc, jc + nc); /* the block is complete and still in cache */
	}
}

static void mm_task(void *arg, int t, int worker)
{
	const struct mm_job *J = arg;
	const gb_isa *isa = J->isa;
	if (J->split_m) {
		int blocks = (J->M + isa->mr - 1) / isa->mr;
		int b0 = (int)((long)blocks * t / J->n_tasks), b1 = (int)((long)blocks * (t + 1) / J->n_tasks);
		int i1 = b1 * isa->mr < J->M ? b1 * isa->mr : J->M;
		if (b0 * isa->mr < i1)
			mm_range(J, b0 * isa->mr, i1, 0, J->N);
	} else {
		int panels = (J->N + isa->nr - 1) / isa->nr;
		int p0 = (int)((long)panels * t / J->n_tasks), p1 = (int)((long)panels * (t + 1) / J->n_tasks);
		int j1 = p1 * isa->nr < J->N ? p1 * isa->nr : J->N;
		if (p0 * isa->nr < j1)
			mm_range(J, 0, J->M, p0 * isa->nr, j1);
	}
}

/* The memory-bound products, b_trans == 1 with M <= dots_m: dot products of rows of a with
 * rows of b (N,K), which every thread reads as whole rows, so any split of the rows of b
 * keeps each task's reads sequential. */
struct dots_job {
	const gb_isa *isa;
	float *out;              /* (M,N) */
	const float *a;          /* (M,K) */
	const float *b;          /* (N,K) */
	const float *bias;       /* (N) or NULL */
	int M, K, N;
	const uint16_t *b16;     /* instead of b: 16-bit weights of type wt */
	int wt;
	const float *as;         /* (M, K rounded up to isa->pair_k): a split for dots_pairs, or NULL */
};

enum { DOTS_JB = 64 }; /* rows of b per pass of dots: 64 K-long rows stay in L2 for every 4 rows of a */

static void dots_range(const struct dots_job *G, int j0, int j1)
{
	const gb_isa *isa = G->isa;
	long kp = G->as ? (G->K + isa->pair_k - 1) / isa->pair_k * isa->pair_k : 0;
	for (int jb = j0; jb < j1; jb += DOTS_JB) {
		int je = j1 - jb < DOTS_JB ? j1 : jb + DOTS_JB;
		for (int i = 0; i < G->M; i += 4) {
			float *o = G->out + (size_t)i * G->N + jb;
			const float *ai = G->a + (size_t)i * G->K;
			int m = G->M - i < 4 ? G->M - i : 4;
			if (G->as)
				isa->dots_pairs(o, G->N, G->as + i * kp, m, G->b16, G->bias, G->K, jb, je);
			else if (G->b16)
				isa->dots16(o, G->N, ai, m, G->b16, G->wt, G->bias, G->K, jb, je);
			else
				isa->dots(o, G->N, ai, m, G->b, G->bias, G->K, jb, je);
		}
	}
}

/* One or more such products of one input (matmul, matmul_w16, matmul_multi), run together:
 * the tasks cut the rows of every b, one b after the other, into granules of 16, so each task
 * reads whole rows in order and the numbers do not depend on the split or the grouping. */
enum { MULTI_MAX = 8 };

struct dots_group {
	struct dots_job g[MULTI_MAX];
	int gr0[MULTI_MAX + 1]; /* product i's granules are [gr0[i], gr0[i + 1]) of the whole */
	int n, n_tasks;
};

static void dots_group_task(void *arg, int t, int worker)
{
	const struct dots_group *J = arg;
	int total = J->gr0[J->n];
	int g0 = (int)((long)total * t / J->n_tasks), g1 = (int)((long)total * (t + 1) / J->n_tasks);
	(void)worker;
	for (int i = 0; i < J->n; i++) {
		int a = g0 > J->gr0[i] ? g0 : J->gr0[i], b = g1 < J->gr0[i + 1] ? g1 : J->gr0[i + 1];
		int j0 = (a - J->gr0[i]) * 16, j1 = (b - J->gr0[i]) * 16;
		if (j1 > J->g[i].N)
			j1 = J->g[i].N;
		if (j0 < j1)
			dots_range(&J->g[i], j0, j1);
	}
}

static int task_count(double work, double min_work, int units, int threads);

/* The rows of a, when the dot products read them as floats, copied to where they start
 * DOTS_SKEW bytes past the first b's offset within a cache line. Each step of a dot product
 * loads a vector of a (from L1) beside one of b (streaming from memory). Measured on Zen 4
 * under KVM, one thread, Llama-110M's products with the weights on cache lines and the input
 * 0, 1, 4, 8, 12, 16 or 32 floats past a page: 57.5, 69.0, 66.7, 55.2, 65.3, 60.1 and 57.6
 * tok/s, so at the same offset as b's, or 32 bytes from it, the stream is 15-20% slower
 * (likely the two loads meeting in the same L1 banks and holding back the loads of b; this
 * machine has no counters to show it). Only where a sits, never what is computed, changes;
 * without memory a stays where it is. */
enum { DOTS_SKEW = 16 };

/* Floats past a cache line where rows read beside the weights at b start: DOTS_SKEW bytes past
 * b's own offset (rounded down to a float). */
static size_t skew_at(const void *b)
{
	return (((uintptr_t)b + DOTS_SKEW) & 63) / sizeof(float);
}

static void skew_input(struct dots_group *J)
{
	const struct dots_job *g = &J->g[0];
	if (g->as || g->K % 16) /* rows of a not all at one offset: leave them */
		return;
	uintptr_t b = g->b ? (uintptr_t)g->b : (uintptr_t)g->b16;
	size_t n = (size_t)g->M * g->K, at = skew_at((const void *)b);
	if (((b + DOTS_SKEW) & 3) || ((uintptr_t)g->a & 63) == (at * sizeof(float)))
		return;
	float *buf = thread_buffer(BUF_SKEW, n + 16);
	if (!buf)
		return;
	memcpy(buf + at, g->a, n * sizeof(float));
	for (int i = 0; i < J->n; i++)
		if (!J->g[i].as && J->g[i].a == g->a)
			J->g[i].a = buf + at;
}

/* Runs J's J->n products (J->g filled in): several ranges of whole rows per thread, so a
 * thread that shares its CPU with another program leaves more of them to the others. */
static void dots_group_run(struct dots_group *J)
{
	int threads = gb_pool_threads();
	double macs = 0;
	J->gr0[0] = 0;
	for (int i = 0; i < J->n; i++) {
		macs += (double)J->g[i].M * J->g[i].K * J->g[i].N;
		J->gr0[i + 1] = J->gr0[i] + (J->g[i].N + 15) / 16;
	}
	skew_input(J);
	J->n_tasks = 1;
	if (macs >= GEMV_MT_MIN && threads > 1)
		J->n_tasks = task_count(macs, GEMV_MT_MIN / 2, J->gr0[J->n], threads);
	if (J->n_tasks > 1)
		gb_pool_run(J->n_tasks, dots_group_task, J);
	else
		dots_group_task(J, 0, 0);
}

/* bf16 by pairs where the ISA has them: a (M,K) split once, on this thread's buffer, which the
 * tasks only read; NULL without pairs or memory (then dots16). b: the (first) weights it meets. */
static const float *pairs_split(const gb_isa *isa, const float *a, int M, int K, const uint16_t *b)
{
	if (!isa->dots_pairs)
		return NULL;
	long kp = (K + isa->pair_k - 1) / isa->pair_k * isa->pair_k;
	/* placed DOTS_SKEW bytes past b's offset in a cache line, as skew_input places a (one-thread
	 * bf16 weights pass of Llama-110M: 79-83% of the bandwidth bound at offset 0, 89-91% so) */
	size_t at = skew_at(b);
	float *as = pack_buffer((size_t)M * kp + 16);
	if (as) {
		as += at;
		isa->split_pairs(as, a, M, K);
	}
	return as;
}

/* b_trans == 0 with few rows (M <= GEMV_M): K cut into blocks of GEMV_KB rows, each a
 * contiguous piece of b that one task reads front to back (once per 8 rows of a: the block
 * stays in L2) into its own partial sums; then the partial sums are added in block order,
 * then the bias. The blocks depend on K alone, so the arithmetic does not depend on the
 * thread count, and the tasks read b as contiguous streams, where a split of the columns
 * would cut every row of b into strided pieces. */
enum { GEMV_KB = 64, GEMV_M = 16 };

struct kblock_job {
	const gb_isa *isa;
	float *part;             /* (blocks, M, ldp) */
	const float *a, *b;
	int M, K, N;
	long ldp;
	const uint16_t *b16;     /* instead of b: 16-bit weights of type wt */
	int wt;
};

static void kblock_task(void *arg, int t, int worker)
{
	const struct kblock_job *C = arg;
	int k0 = t * GEMV_KB, kb = C->K - k0 < GEMV_KB ? C->K - k0 : GEMV_KB;
	for (int i = 0; i < C->M; i += 8) {
		float *p = C->part + ((size_t)t * C->M + i) * C->ldp;
		const float *ai = C->a + (size_t)i * C->K + k0;
		int m = C->M - i < 8 ? C->M - i : 8;
		if (C->b16)
			C->isa->gemv16(p, C->ldp, ai, C->K, m, C->b16 + (size_t)k0 * C->N, C->wt, kb, C->N);
		else
			C->isa->gemv(p, C->ldp, ai, C->K, m, C->b + (size_t)k0 * C->N, kb, C->N);
	}
}

/* Returns 0, or -1 when there is no memory for the partial sums (the caller goes on without). */
static int gemv_kblocks(const gb_isa *isa, float *out, const float *a, const float *b,
                        const uint16_t *b16, int wt, const float *bias, int M, int K, int N,
                        int threads)
{
	int blocks = (K + GEMV_KB - 1) / GEMV_KB;
	long ldp = (N + 15) / 16 * 16; /* each row of partial sums starts a cache line */
	struct kblock_job C = { isa, pack_buffer((size_t)blocks * M * ldp), a, b, M, K, N, ldp, b16, wt };
	if (!C.part)
		return -1;
	if (threads > 1 && blocks > 1 && (double)M * K * N >= GEMV_MT_MIN)
		gb_pool_run(blocks, kblock_task, &C);
	else
		for (int t = 0; t < blocks; t++)
			kblock_task(&C, t, 0);
	for (int i = 0; i < M; i++) {
		float *o = out + (size_t)i * N;
		memcpy(o, C.part + (size_t)i * ldp, (size_t)N * sizeof *o);
		for (int t = 1; t < blocks; t++)
			isa->add(o, C.part + ((size_t)t * M + i) * ldp, (size_t)N);
		if (bias)
			isa->add(o, bias, (size_t)N);
	}
	return 0;
}

/* Tasks for a parallel loop of `work` multiply-adds over `units` indivisible pieces: several
 * per thread (a thread that shares its CPU with another program then simply takes fewer),
 * each worth at least min_work, and a multiple of the thread count when possible. */
static int task_count(double work, double min_work, int units, int threads)
{
	int want = TASKS_PER_THREAD * threads;
	if (work / min_work < want)
		want = (int)(work / min_work);
	if (want > units)
		want = units;
	if (want > threads)
		want -= want % threads;
	return want < 1 ? 1 : want;
}

/* act_out (n) = activate(out (n)) on this thread: the few-row products' outputs. */
static void mm_act_all(const gb_isa *isa, float *act_out, const float *out, size_t n, int act)
{
	isa->activate(act_out, out, n, act);
}

static void mm_run(const gb_isa *isa, float *out, const float *a, const float *b,
                   const float *bias, int M, int K, int N, int bt, float *act_out, int act)
{
	int threads = gb_pool_threads();
	unsigned csr;
	if (M <= 0 || N <= 0)
		return;
	if (K <= 0) {
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++)
				out[(size_t)i * N + j] = bias ? bias[j] : 0;
		if (act_out) {
			csr = gb_fp_fast_enter();
			mm_act_all(isa, act_out, out, (size_t)M * N, act);
			gb_fp_fast_leave(csr);
		}
		return;
	}
	csr = gb_fp_fast_enter();
	if (!bt && M <= GEMV_M && gemv_kblocks(isa, out, a, b, NULL, 0, bias, M, K, N, threads) == 0) {
		if (act_out) /* few rows: the product's cost is reading b; activate after */
			mm_act_all(isa, act_out, out, (size_t)M * N, act);
	} else if (bt && M <= isa->dots_m) {
		struct dots_group J = { .g[0] = { isa, out, a, b, bias, M, K, N, NULL, 0, NULL }, .n = 1 };
		dots_group_run(&J);
		if (act_out)
			mm_act_all(isa, act_out, out, (size_t)M * N, act);
	} else {
		struct mm_job J = { isa, out, a, b, bias, M, K, N, bt, k_block(isa, K), 0, 1, act_out, act };
		int panels = (N + isa->nr - 1) / isa->nr, mblocks = (M + isa->mr - 1) / isa->mr;
		double macs = (double)M * K * N;
		if (macs >= MT_MIN_MACS && threads > 1) {
			if (panels >= threads) {
				J.n_tasks = task_count(macs, MT_MIN_MACS / 2, panels, threads);
			} else if (mblocks >= threads) {
				J.split_m = 1;
				J.n_tasks = task_count(macs, MT_MIN_MACS / 2, mblocks, threads);
			}
		}
		if (J.n_tasks > 1)
			gb_pool_run(J.n_tasks, mm_task, &J);
		else
			mm_range(&J, 0, M, 0, N);
	}
	gb_fp_fast_leave(csr);
}

/* Rows [i0,i1) x columns [j0,j1) of mm_run's product on this thread, by the route mm_run
 * takes for the whole (M,N): K-blocked partial sums for few rows (every column of the rows, then
 * the part copied out), dot products, or blocks (which compute each element the same way
 * however the rows and columns are split). */
static void mm_part(const gb_isa *isa, float *out, const float *a, const float *b, const float *bias,
                    int M, int K, int N, int bt, int i0, int i1, int j0, int j1)
{
	unsigned csr;
	i0 = i0 < 0 ? 0 : i0, i1 = i1 > M ? M : i1;
	j0 = j0 < 0 ? 0 : j0, j1 = j1 > N ? N : j1;
	if (i0 >= i1 || j0 >= j1)
		return;
	if (K <= 0) {
		for (int i = i0; i < i1; i++)
			for (int j = j0; j < j1; j++)
				out[(size_t)i * N + j] = bias ? bias[j] : 0;
		return;
	}
	csr = gb_fp_fast_enter();
	if (!bt && M <= GEMV_M) {
		int m = i1 - i0;
		float *rows = malloc((size_t)m * N * sizeof *rows);
		if (rows && gemv_kblocks(isa, rows, a + (size_t)i0 * K, b, NULL, 0, bias, m, K, N, 1) == 0) {
			for (int i = 0; i < m; i++)
				memcpy(out + (size_t)(i0 + i) * N + j0, rows + (size_t)i * N + j0, (size_t)(j1 - j0) * sizeof *out);
			free(rows);
			gb_fp_fast_leave(csr);
			return;
		}
		free(rows); /* no memory: the blocks, as mm_run then does */
	} else if (bt && M <= isa->dots_m) {
		struct dots_job G = { isa, out + (size_t)i0 * N, a + (size_t)i0 * K, b, bias, i1 - i0, K, N, NULL, 0, NULL };
		dots_range(&G, j0, j1);
		gb_fp_fast_leave(csr);
		return;
	}
	struct mm_job J = { isa, out, a, b, bias, M, K, N, bt, k_block(isa, K), 0, 1, NULL, 0 };
	mm_range(&J, i0, i1, j0, j1);
	gb_fp_fast_leave(csr);
}

/* matmul_w16: the memory-bound shapes read the 16-bit weights in place through the same
 * drivers as mm_run (so the same arithmetic as matmul on the widened weights, but for bf16
 * dot products by pairs: isa.h); the others widen b into a float copy and run mm_run. */
static void mm16_run(const gb_isa *isa, float *out, const float *a, const uint16_t *b, int wt,
                     const float *bias, int M, int K, int N, int bt, float *act_out, int act)
{
	int threads = gb_pool_threads();
	unsigned csr;
	float *wide;
	if (M <= 0 || N <= 0)
		return;
	if ((wt != GB_W_BF16 && wt != GB_W_F16) || K <= 0) {
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++)
				out[(size_t)i * N + j] = K <= 0 && (wt == GB_W_BF16 || wt == GB_W_F16) ? (bias ? bias[j] : 0) : NAN;
		if (act_out) {
			csr = gb_fp_fast_enter();
			mm_act_all(isa, act_out, out, (size_t)M * N, act);
			gb_fp_fast_leave(csr);
		}
		return;
	}
	csr = gb_fp_fast_enter();
	if (!bt && M <= GEMV_M && gemv_kblocks(isa, out, a, NULL, b, wt, bias, M, K, N, threads) == 0) {
		if (act_out)
			mm_act_all(isa, act_out, out, (size_t)M * N, act);
		gb_fp_fast_leave(csr);
		return;
	}
	if (bt && M <= isa->dots_m) {
		struct dots_group J = { .g[0] = { isa, out, a, NULL, bias, M, K, N, b, wt,
		                                  wt == GB_W_BF16 ? pairs_split(isa, a, M, K, b) : NULL }, .n = 1 };
		dots_group_run(&J);
		if (act_out)
			mm_act_all(isa, act_out, out, (size_t)M * N, act);
		gb_fp_fast_leave(csr);
		return;
	}
	gb_fp_fast_leave(csr);
	wide = malloc((size_t)K * N * sizeof *wide);
	if (wide) {
		for (size_t i = 0; i < (size_t)K * N; i++)
			wide[i] = gb_w16_to_float(b[i], wt);
		mm_run(isa, out, a, wide, bias, M, K, N, bt, act_out, act);
		free(wide);
		return;
	}
	gb_kernels_ref()->matmul_w16(out, a, b, wt, bias, M, K, N, bt); /* no memory: slow but exact */
	if (act_out) {
		csr = gb_fp_fast_enter();
		mm_act_all(isa, act_out, out, (size_t)M * N, act);
		gb_fp_fast_leave(csr);
	}
}

static const uint16_t *first16(const gb_mm_one *p, int n)
{
	for (int i = 0; i < n; i++)
		if (p[i].wtype == GB_W_BF16)
			return p[i].b;
	return NULL;
}

/* matmul_multi: few rows (the dot-product route of mm_run and mm16_run) as one group; other
 * shapes, or a group larger than a job takes, each product by itself. */
static void mm_multi(const gb_isa *isa, const gb_mm_one *p, int n, const float *a, int M, int K)
{
	struct dots_group J = { .n = n };
	int ok = n >= 1 && n <= MULTI_MAX && M >= 1 && M <= isa->dots_m && K > 0, bf16 = 0;
	for (int i = 0; ok && i < n; i++) {
		ok = p[i].N > 0 && (p[i].wtype == GB_W_F32 || p[i].wtype == GB_W_BF16 || p[i].wtype == GB_W_F16);
		bf16 |= p[i].wtype == GB_W_BF16;
	}
	if (!ok) {
		for (int i = 0; i < n; i++)
			if (p[i].wtype == GB_W_F32)
				mm_run(isa, p[i].out, a, p[i].b, p[i].bias, M, K, p[i].N, 1, NULL, 0);
			else
				mm16_run(isa, p[i].out, a, p[i].b, p[i].wtype, p[i].bias, M, K, p[i].N, 1, NULL, 0);
		return;
	}
	unsigned csr = gb_fp_fast_enter();
	const float *as = bf16 ? pairs_split(isa, a, M, K, first16(p, n)) : NULL; /* one split for the group's bf16 */
	for (int i = 0; i < n; i++) {
		int w16 = p[i].wtype != GB_W_F32;
		J.g[i] = (struct dots_job){ isa, p[i].out, a, w16 ? NULL : p[i].b, p[i].bias, M, K, p[i].N,
		                            w16 ? p[i].b : NULL, p[i].wtype, p[i].wtype == GB_W_BF16 ? as : NULL };
	}
	dots_group_run(&J);
	gb_fp_fast_leave(csr);
}

/* ---- element-wise operations: split across threads when large ---- */

enum ew_op { EW_SOFTMAX, EW_LAYERNORM, EW_RMSNORM, EW_ACT, EW_MUL, EW_ADD };

struct ew_job {
	const gb_isa *isa;
	enum ew_op op;
	float *out;              /* (rows, d) or (n) */
	float *s1, *s2;          /* (rows): mean and var, or rms; may be NULL */
	const float *x, *y;      /* like out */
	const float *g, *b;      /* (d) or NULL */
	size_t units;            /* rows for the row-wise operations, else elements */
	int d;                   /* row length */
	float eps;
	int flag;                /* textbook, or the activation */
	int grain;               /* units per indivisible piece */
	int n_tasks;
};

static void ew_range(const struct ew_job *E, size_t u0, size_t u1)
{
	const gb_isa *isa = E->isa;
	size_t off = u0 * (size_t)E->d;
	int rows = (int)(u1 - u0);
	switch (E->op) {
	case EW_SOFTMAX:
		isa->softmax(E->out + off, rows, E->d);
		break;
	case EW_LAYERNORM:
		isa->layernorm(E->out + off, E->s1 ? E->s1 + u0 : NULL, E->s2 ? E->s2 + u0 : NULL,
		               E->x + off, E->g, E->b, rows, E->d, E->eps, E->flag);
		break;
	case EW_RMSNORM:
		isa->rmsnorm(E->out + off, E->s1 ? E->s1 + u0 : NULL, E->x + off, E->g, rows, E->d, E->eps);
		break;
	case EW_ACT:
		isa->activate(E->out + u0, E->x + u0, u1 - u0, E->flag);
		break;
	case EW_MUL:
		isa->mul(E->out + u0, E->x + u0, E->y + u0, u1 - u0);
		break;
	case EW_ADD:
		isa->add(E->out + u0, E->x + u0, u1 - u0);
		break;
	}
}

static void ew_task(void *arg, int t, int worker)
{
	const struct ew_job *E = arg;
	size_t pieces = (E->units + E->grain - 1) / E->grain;
	size_t u0 = pieces * t / E->n_tasks * E->grain, u1 = pieces * (t + 1) / E->n_tasks * E->grain;
	if (u1 > E->units)
		u1 = E->units;
	if (u0 < u1)
		ew_range(E, u0, u1);
}

/* Every element (or row) takes the same arithmetic whichever range it falls in, so the split
 * does not change results. */
static void ew_run(struct ew_job *E)
{
	size_t elems = E->op <= EW_RMSNORM ? E->units * (size_t)E->d : E->units;
	int threads = gb_pool_threads();
	unsigned csr = gb_fp_fast_enter();
	if (E->op > EW_RMSNORM) {
		E->grain = 64; /* whole vectors and cache lines */
		E->d = 1;
	} else {
		E->grain = 1;
	}
	E->n_tasks = 1;
	if (elems >= EW_MT_MIN && threads > 1)
		E->n_tasks = task_count((double)elems, EW_MT_MIN / 2,
		                        (int)((E->units + E->grain - 1) / E->grain), threads);
	if (E->n_tasks > 1)
		gb_pool_run(E->n_tasks, ew_task, E);
	else if (E->units > 0)
		ew_range(E, 0, E->units);
	gb_fp_fast_leave(csr);
}

/* ---- the tables ---- */

/* Linear attention's recurrent form (kernels.h): the state S (E, E) and z (E) take key j's
 * fk_j v_jᵀ and fk_j in order, and query i reads them once every key it may see is in: E² work
 * per key and per query, memory E², whatever the length. Shared by every fast table (the
 * loops are short; the projections around them dominate). */
static void fast_linear_attn(float *out, const float *fq, const float *fk, const float *v, int Tq, int Tk, int E,
                             int pos0, int causal, const unsigned char *key_ok)
{
	unsigned csr = gb_fp_fast_enter();
	float *S = calloc((size_t)E * E + (size_t)E, sizeof(float));
	if (!S) { /* no state, no output: NaN says so rather than a plausible number */
		for (size_t i = 0; i < (size_t)Tq * E; i++)
			out[i] = NAN;
		gb_fp_fast_leave(csr);
		return;
	}
	float *z = S + (size_t)E * E;
	int j = 0;
	for (int i = 0; i < Tq; i++) {
		int hi = causal ? pos0 + i + 1 : Tk;
		hi = hi > Tk ? Tk : hi;
		for (; j < hi; j++) { /* key j joins the state */
			if (key_ok && !key_ok[j])
				continue;
			const float *k = fk + (size_t)j * E, *vj = v + (size_t)j * E;
			for (int a = 0; a < E; a++) {
				float *row = S + (size_t)a * E, ka = k[a];
				for (int b = 0; b < E; b++)
					row[b] += ka * vj[b];
				z[a] += ka;
			}
		}
		const float *q = fq + (size_t)i * E;
		float *o = out + (size_t)i * E, den = 0;
		for (int b = 0; b < E; b++)
			o[b] = 0;
		for (int a = 0; a < E; a++) {
			const float *row = S + (size_t)a * E;
			float qa = q[a];
			den += qa * z[a];
			for (int b = 0; b < E; b++)
				o[b] += qa * row[b];
		}
		float inv = den > 0 ? 1.0f / den : 0.0f;
		for (int b = 0; b < E; b++)
			o[b] *= inv;
	}
	free(S);
	gb_fp_fast_leave(csr);
}

#define FAST_TABLE(tag, ISA, MR)                                                                  \
	static void t_##tag##_matmul(float *out, const float *a, const float *b, const float *bias, \
	                             int M, int K, int N, int bt)                                   \
	{                                                                                           \
		mm_run(&ISA, out, a, b, bias, M, K, N, bt, NULL, 0);                                    \
	}                                                                                           \
	static void t_##tag##_matmul_w16(float *out, const float *a, const uint16_t *b, int wt,    \
	                                 const float *bias, int M, int K, int N, int bt)            \
	{                                                                                           \
		mm16_run(&ISA, out, a, b, wt, bias, M, K, N, bt, NULL, 0);                              \
	}                                                                                           \
	static void t_##tag##_matmul_act(float *out, float *act_out, const float *a, const void *b, \
	                                 int wt, const float *bias, int M, int K, int N, int bt,    \
	                                 int act)                                                   \
	{                                                                                           \
		if (wt == GB_W_F32)                                                                     \
			mm_run(&ISA, out, a, b, bias, M, K, N, bt, act_out, act);                           \
		else                                                                                    \
			mm16_run(&ISA, out, a, b, wt, bias, M, K, N, bt, act_out, act);                     \
	}                                                                                           \
	static void t_##tag##_matmul_part(float *out, const float *a, const float *b, const float *bias, \
	                                  int M, int K, int N, int bt, int i0, int i1, int j0, int j1) \
	{                                                                                           \
		mm_part(&ISA, out, a, b, bias, M, K, N, bt, i0, i1, j0, j1);                            \
	}                                                                                           \
	static void t_##tag##_matmul_multi(const gb_mm_one *p, int n, const float *a, int M, int K) \
	{                                                                                           \
		mm_multi(&ISA, p, n, a, M, K);                                                          \
	}                                                                                           \
	static void t_##tag##_softmax(float *x, int rows, int n)                                    \
	{                                                                                           \
		struct ew_job E = { .isa = &ISA, .op = EW_SOFTMAX, .out = x, .units = rows > 0 ? rows : 0, .d = n }; \
		ew_run(&E);                                                                             \
	}                                                                                           \
	static void t_##tag##_layernorm(float *out, float *mean, float *var, const float *x,        \
	                                const float *g, const float *b, int rows, int d, float eps, \
	                                int textbook)                                               \
	{                                                                                           \
		struct ew_job E = { .isa = &ISA, .op = EW_LAYERNORM, .out = out, .s1 = mean, .s2 = var, \
		                    .x = x, .g = g, .b = b, .units = rows > 0 ? rows : 0, .d = d,       \
		                    .eps = eps, .flag = textbook };                                     \
		ew_run(&E);                                                                             \
	}                                                                                           \
	static void t_##tag##_rmsnorm(float *out, float *rms, const float *x, const float *g,       \
	                              int rows, int d, float eps)                                   \
	{                                                                                           \
		struct ew_job E = { .isa = &ISA, .op = EW_RMSNORM, .out = out, .s1 = rms, .x = x,       \
		                    .g = g, .units = rows > 0 ? rows : 0, .d = d, .eps = eps };         \
		ew_run(&E);                                                                             \
	}                                                                                           \
	static void t_##tag##_activate(float *out, const float *x, size_t n, int act)               \
	{                                                                                           \
		struct ew_job E = { .isa = &ISA, .op = EW_ACT, .out = out, .x = x, .units = n, .flag = act }; \
		ew_run(&E);                                                                             \
	}                                                                                           \
	static void t_##tag##_mul(float *out, const float *a, const float *b, size_t n)             \
	{                                                                                           \
		struct ew_job E = { .isa = &ISA, .op = EW_MUL, .out = out, .x = a, .y = b, .units = n }; \
		ew_run(&E);                                                                             \
	}                                                                                           \
	static void t_##tag##_add(float *y, const float *x, size_t n)                               \
	{                                                                                           \
		struct ew_job E = { .isa = &ISA, .op = EW_ADD, .out = y, .x = x, .units = n };          \
		ew_run(&E);                                                                             \
	}                                                                                           \
	static const gb_kernels t_##tag##_table = {                                                 \
		.name = #tag, .matmul = t_##tag##_matmul, .matmul_w16 = t_##tag##_matmul_w16,           \
		.matmul_act = t_##tag##_matmul_act, .matmul_part = t_##tag##_matmul_part,               \
		.matmul_multi = t_##tag##_matmul_multi,                                                 \
		.part_rows = MR,                                                                        \
		.softmax = t_##tag##_softmax,                                                           \
		.layernorm = t_##tag##_layernorm, .rmsnorm = t_##tag##_rmsnorm,                         \
		.activate = t_##tag##_activate, .mul = t_##tag##_mul, .add = t_##tag##_add,             \
		.linear_attn = fast_linear_attn,                                                        \
	};

FAST_TABLE(scalar, gb_isa_scalar, GB_MR_SCALAR)
#if defined(__x86_64__)
FAST_TABLE(avx2, gb_isa_avx2, GB_MR_AVX2)
FAST_TABLE(avx512, gb_isa_avx512, GB_MR_AVX512)
#endif

/* ---- dispatch ---- */

#if defined(__x86_64__)
/* F16C through cpuid: clang (14) has no "f16c" for __builtin_cpu_supports, and the fuzz and
 * sanitizer builds use clang */
static int have_f16c(void)
{
	unsigned a, b, c, d;
	return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
}

static int have_avx2(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && have_f16c();
}

static int have_avx512(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && have_avx2();
}
#endif

static const gb_kernels *best(void)
{
#if defined(__x86_64__)
	if (have_avx512())
		return &t_avx512_table;
	if (have_avx2())
		return &t_avx2_table;
#endif
	return &t_scalar_table;
}

const gb_kernels *gb_kernels_by_name(const char *name)
{
	if (!name)
		return NULL;
	if (!strcmp(name, "ref"))
		return gb_kernels_ref();
	if (!strcmp(name, "fast"))
		return best();
	if (!strcmp(name, "scalar"))
		return &t_scalar_table;
#if defined(__x86_64__)
	if (!strcmp(name, "avx2"))
		return have_avx2() ? &t_avx2_table : NULL;
	if (!strcmp(name, "avx512"))
		return have_avx512() ? &t_avx512_table : NULL;
#endif
	return NULL;
}

static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static const gb_kernels *env_table;
static char env_problem[160];

static void env_read(void)
{
	const char *v = getenv("GLASSBOX_KERNELS");
	env_table = best();
	if (!v || !*v)
		return;
	if (gb_kernels_by_name(v)) {
		env_table = gb_kernels_by_name(v);
	} else if (!strcmp(v, "avx2") || !strcmp(v, "avx512")) {
		snprintf(env_problem, sizeof env_problem,
		         "GLASSBOX_KERNELS=%s: this CPU lacks %s; using %s", v,
		         !strcmp(v, "avx2") ? "AVX2+FMA" : "AVX-512F", env_table->name);
	} else {
		snprintf(env_problem, sizeof env_problem,
		         "GLASSBOX_KERNELS=%.40s: unknown kernel table (use ref, scalar, avx2 or avx512); "
		         "using %s", v, env_table->name);
	}
}

const gb_kernels *gb_kernels_fast(void)
{
	pthread_once(&env_once, env_read);
	return env_table;
}

const char *gb_kernels_env_problem(void)
{
	pthread_once(&env_once, env_read);
	return env_problem[0] ? env_problem : NULL;
}

void gb_kernels_set_threads(int n)
{
	gb_pool_set_threads(n);
}

int gb_kernels_threads(void)
{
	return gb_pool_threads();
}
