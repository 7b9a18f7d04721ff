/* bench.c — `glassbox bench`: how fast each kernel table multiplies matrices.
 *
 * Owns the benchmark shapes and the timing method: each (table, shape, threads) cell is the
 * best of several samples (40), each sample long enough (>= ~3 ms, or one call when a call takes
 * longer) to swamp clock resolution, after a warm-up call that also starts the thread pool;
 * the 1-thread and all-thread samples alternate.
 * Best-of rather than mean because everything else on the machine only ever adds time. */
#include "app/bench.h"
#include "model/config.h"
#include "model/kernels/kernels.h"

#include <stdlib.h>
#include <time.h>

static const struct {
	int M, K, N, bt;
} shapes[] = {
	{ 128, 512, 128, 0 }, /* compute-bound, the reference point against BLAS */
	{ 64, 192, 64, 0 },   /* a small model's layer: blocking and hand-off overheads show */
	{ 64, 768, 768, 0 },  /* a GPT-2-small projection over 64 tokens */
	{ 1, 768, 768, 0 },   /* one generated token: matrix-vector (from cache here; bench matvec
	                       * reads from memory) */
	{ 64, 128, 384, 0 },  /* tiny-lm's qkv over 64 tokens */
	{ 64, 768, 2304, 0 }, /* GPT-2-small's c_attn over 64 tokens */
};
#define NSHAPES (int)(sizeof shapes / sizeof *shapes)

double bench_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void bench_tiny_config(gb_config *c, int vocab)
{
	gb_config_defaults(c, GB_FAM_GPT2);
	c->d_model = 128;
	c->n_layer = 4;
	c->n_head = c->n_kv_head = 4;
	c->d_head = 32;
	c->d_ffn = 512;
	c->vocab = vocab;
	c->n_ctx = 128;
}

int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* p (n): uniform in [-0.5, 0.5), from a private generator (rand()'s state is the program's). */
static void fill(float *p, size_t n)
{
	unsigned long long x = 0x9E3779B97F4A7C15ull;
	for (size_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		p[i] = (float)(x >> 40) * 0x1p-24f - 0.5f;
	}
}

/* GFLOP/s of T->matmul on out (M,N) = a (M,K) · b (K,N) + bias (N) on 1 thread (*g1) and on
 * `threads` threads (*gn, when threads > 1), best of `samples` each. The samples alternate
 * between the two settings, so both see the same machine state: on a shared machine a
 * measurement of one setting after the other compares two different moments. */
static void measure(const gb_kernels *T, float *out, const float *a, const float *b,
                    const float *bias, int M, int K, int N, int bt, int samples, double min_s,
                    int threads, double *g1, double *gn)
{
	double flops = 2.0 * M * K * N, best[2] = { 1e30, 1e30 }, t0, t1;
	long reps = 1;
	int nt = threads > 1 ? 2 : 1;
	for (int ti = nt - 1; ti >= 0; ti--) { /* warm-up: caches, pool threads, page faults */
		gb_kernels_set_threads(ti ? threads : 1);
		T->matmul(out, a, b, bias, M, K, N, bt);
	}
	t0 = bench_now();
	T->matmul(out, a, b, bias, M, K, N, bt);
	t1 = bench_now();
	if (t1 - t0 < min_s)
		reps = (long)(min_s / (t1 - t0 > 1e-7 ? t1 - t0 : 1e-7)) + 1;
	for (int s = 0; s < samples; s++)
		for (int ti = 0; ti < nt; ti++) {
			gb_kernels_set_threads(ti ? threads : 1);
			t0 = bench_now();
			for (long r = 0; r < reps; r++)
				T->matmul(out, a, b, bias, M, K, N, bt);
			t1 = bench_now();
			if ((t1 - t0) / reps < best[ti])
				best[ti] = (t1 - t0) / reps;
		}
	*g1 = flops / best[0] * 1e-9;
	*gn = nt > 1 ? flops / best[1] * 1e-9 : 0;
}

int bench_kernels(FILE *out)
{
	static const char *names[] = { "ref", "scalar", "avx2", "avx512" };
	size_t na = 0, nb = 0, no = 0, nn = 0;
	int threads = gb_kernels_threads();
	float *a, *b, *o, *bias;
	for (int s = 0; s < NSHAPES; s++) {
		size_t sa = (size_t)shapes[s].M * shapes[s].K, sb = (size_t)shapes[s].K * shapes[s].N;
		size_t so = (size_t)shapes[s].M * shapes[s].N;
		na = sa > na ? sa : na;
		nb = sb > nb ? sb : nb;
		no = so > no ? so : no;
		nn = (size_t)shapes[s].N > nn ? (size_t)shapes[s].N : nn;
	}
	a = malloc(na * sizeof *a);
	b = malloc(nb * sizeof *b);
	o = malloc(no * sizeof *o);
	bias = malloc(nn * sizeof *bias);
	if (!a || !b || !o || !bias) {
		free(a), free(b), free(o), free(bias);
		return -1;
	}
	fill(a, na);
	fill(b, nb);
	fill(bias, nn);

	fprintf(out, "matmul GFLOP/s (out = a·b + bias, M×K×N), best of several runs; %d thread%s available\n",
	        threads, threads == 1 ? "" : "s");
	fprintf(out, "%-8s", "table");
	for (int s = 0; s < NSHAPES; s++) {
		char head[40];
		snprintf(head, sizeof head, "%dx%dx%d", shapes[s].M, shapes[s].K, shapes[s].N);
		fprintf(out, "  %17s", head);
	}
	fprintf(out, "\n%-8s", "");
	for (int s = 0; s < NSHAPES; s++)
		fprintf(out, "  %8s %8s", "1 thr", threads > 1 ? "all" : "-");
	fprintf(out, "\n");
	for (int t = 0; t < 4; t++) {
		const gb_kernels *T = gb_kernels_by_name(names[t]);
		int is_ref = t == 0;
		if (!T) {
			fprintf(out, "%-8s  (this CPU lacks the instructions)\n", names[t]);
			continue;
		}
		fprintf(out, "%-8s", names[t]);
		fflush(out);
		for (int s = 0; s < NSHAPES; s++) {
			int M = shapes[s].M, K = shapes[s].K, N = shapes[s].N, bt = shapes[s].bt;
			double g1, gn = 0;
			/* The reference is slow and single-threaded: fewer, single-call samples. Short
			 * samples (~3 ms), many of them: a moment when no other program runs is more
			 * likely to hold a short sample. */
			measure(T, o, a, b, bias, M, K, N, bt, is_ref ? 2 : 40, is_ref ? 0 : 0.003,
			        is_ref ? 1 : threads, &g1, &gn);
			if (gn > 0)
				fprintf(out, "  %8.1f %8.1f", g1, gn);
			else
				fprintf(out, "  %8.1f %8s", g1, "-");
			fflush(out);
		}
		fprintf(out, "\n");
	}
	gb_kernels_set_threads(threads);
	free(a);
	free(b);
	free(o);
	free(bias);
	return 0;
}
