/* bench_attn.c — issue 19, part 3: the cost of attention measured, not asserted. One head
 * (d_head 64, causal) on random queries, keys and values of 64 to 4096 tokens, through the
 * kernel table in use: softmax attention (the n x n scores, their softmax, the weighted sum),
 * a sliding window of 64 (blocks of queries against the keys their window reaches: n x 2w
 * work) and linear attention (the table's linear_attn: the fast tables' running sums S and z).
 * Time is the CPU time of the measuring thread, on one thread (a loaded machine takes the core
 * away now and then, which wall time would count and CPU time does not), the best of three
 * means over at least 30 ms of repeats; memory is what each form
 * allocates besides its inputs and output (the n x n table, the band of window scores) or
 * keeps (linear attention's d x d state and normaliser, by the kernel's contract). `bench
 * attention` prints the table; `cost` (cmd_choices.c) draws it on log-log axes. */
#include "app/bench_attn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app/bench.h"
#include "model/forward.h"
#include "model/kernels/pool.h"
#include "model/rng.h"

#define E_HEAD 64
#define WIN 64

static void softmax_head(const gb_kernels *k, float *out, float *s, const float *q, const float *kk, const float *v,
                         int T)
{
	float inv = 1.0f / sqrtf((float)E_HEAD);
	k->matmul(s, q, kk, NULL, T, E_HEAD, T, 1);
	for (int i = 0; i < T; i++) {
		float *r = s + (size_t)i * T;
		for (int j = 0; j <= i; j++)
			r[j] *= inv;
		for (int j = i + 1; j < T; j++)
			r[j] = -INFINITY;
	}
	k->softmax(s, T, T);
	k->matmul(out, s, v, NULL, T, T, E_HEAD, 0);
}

/* Queries in blocks of WIN: block b sees keys from b WIN - WIN + 1 to its own last, at most
 * 2 WIN - 1 of them; scores outside each query's window are -inf. */
static void window_head(const gb_kernels *k, float *out, float *s, const float *q, const float *kk, const float *v,
                        int T)
{
	float inv = 1.0f / sqrtf((float)E_HEAD);
	for (int b0 = 0; b0 < T; b0 += WIN) {
		int nq = T - b0 < WIN ? T - b0 : WIN, k0 = b0 - WIN + 1 < 0 ? 0 : b0 - WIN + 1, nk = b0 + nq - k0;
		k->matmul(s, q + (size_t)b0 * E_HEAD, kk + (size_t)k0 * E_HEAD, NULL, nq, E_HEAD, nk, 1);
		for (int i = 0; i < nq; i++)
			for (int j = 0; j < nk; j++) {
				int d = b0 + i - (k0 + j);
				s[(size_t)i * nk + j] = d >= 0 && d < WIN ? s[(size_t)i * nk + j] * inv : -INFINITY;
			}
		k->softmax(s, nq, nk);
		k->matmul(out + (size_t)b0 * E_HEAD, s, v + (size_t)k0 * E_HEAD, NULL, nq, nk, E_HEAD, 0);
	}
}

/* The CPU time this thread has used, in seconds. */
static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double time_one(const gb_kernels *k, int form, float *out, float *s, const float *q, const float *kk,
                       const float *v, const float *fq, const float *fk, int T)
{
	double best = 1e30;
	for (int rep = 0; rep < 3; rep++) {
		int n = 0;
		double t0 = cpu_now(), t;
		do {
			if (form == 0)
				softmax_head(k, out, s, q, kk, v, T);
			else if (form == 1)
				window_head(k, out, s, q, kk, v, T);
			else
				k->linear_attn(out, fq, fk, v, T, T, E_HEAD, 0, 1, NULL);
			n++;
			t = cpu_now() - t0;
		} while (t < 0.03);
		best = t / n < best ? t / n : best;
	}
	return best;
}

int bench_attn_measure(const gb_kernels *k, int max_T, attn_cost *c)
{
	memset(c, 0, sizeof *c);
	if (!k)
		k = gb_kernels_fast();
	c->kernels = k->name;
	c->window = WIN;
	c->d_head = E_HEAD;
	size_t tE = (size_t)max_T * E_HEAD;
	float *q = malloc(sizeof(float) * tE), *kk = malloc(sizeof(float) * tE), *v = malloc(sizeof(float) * tE);
	float *fq = malloc(sizeof(float) * tE), *fk = malloc(sizeof(float) * tE), *out = malloc(sizeof(float) * tE);
	if (!q || !kk || !v || !fq || !fk || !out) {
		free(q), free(kk), free(v), free(fq), free(fk), free(out);
		return -1;
	}
	gb_rng r;
	gb_rng_seed(&r, 19);
	for (size_t i = 0; i < tE; i++) {
		q[i] = (float)gb_rng_normal(&r);
		kk[i] = (float)gb_rng_normal(&r);
		v[i] = (float)gb_rng_normal(&r);
		fq[i] = (float)gb_elu1(q[i]);
		fk[i] = (float)gb_elu1(kk[i]);
	}
	int rc = 0, threads = gb_pool_threads();
	gb_pool_set_threads(1); /* the thread's CPU time is then all the work */
	for (int T = 64; T <= max_T && c->n < ATTN_COST_MAX; T *= 2) {
		int i = c->n++;
		c->T[i] = T;
		for (int form = 0; form < 3 && !rc; form++) {
			/* the working memory each form allocates: the n x n table, the band */
			size_t cells = form == 0 ? (size_t)T * T : form == 1 ? (size_t)WIN * (2 * WIN) : 0;
			float *s = cells ? malloc(sizeof(float) * cells) : NULL;
			if (cells && !s) {
				rc = -1;
				break;
			}
			c->seconds[form][i] = time_one(k, form, out, s, q, kk, v, fq, fk, T);
			c->bytes[form][i] = form == 2 ? (double)(E_HEAD * E_HEAD + E_HEAD) * sizeof(float)
			                              : (double)cells * sizeof(float);
			free(s);
		}
	}
	gb_pool_set_threads(threads);
	free(q), free(kk), free(v), free(fq), free(fk), free(out);
	return rc;
}

double attn_slope(const attn_cost *c, int form, int what)
{
	/* least squares of log(y) on log(T) over the upper half of the lengths, where the fixed
	 * costs no longer hide the growth */
	int a = c->n / 2, n = 0;
	double sx = 0, sy = 0, sxx = 0, sxy = 0;
	for (int i = a; i < c->n; i++) {
		double y = what ? c->bytes[form][i] : c->seconds[form][i];
		if (!(y > 0))
			continue;
		double x = log((double)c->T[i]), ly = log(y);
		sx += x, sy += ly, sxx += x * x, sxy += x * ly, n++;
	}
	return n < 2 ? 0 : (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

int bench_attention(FILE *out)
{
	attn_cost c;
	if (bench_attn_measure(NULL, 4096, &c))
		return -1;
	fprintf(out, "attention cost, one head of d_head %d, causal, %s kernels on one thread (CPU time, the best of 3 means over >= 30 ms):\n",
	        c.d_head, c.kernels);
	fprintf(out, "%8s %14s %14s %14s %14s %14s %14s\n", "tokens", "softmax ms", "window ms", "linear ms", "softmax MB",
	        "window MB", "linear MB");
	for (int i = 0; i < c.n; i++)
		fprintf(out, "%8d %14.4f %14.4f %14.4f %14.4f %14.4f %14.6f\n", c.T[i], c.seconds[0][i] * 1e3,
		        c.seconds[1][i] * 1e3, c.seconds[2][i] * 1e3, c.bytes[0][i] / 1e6, c.bytes[1][i] / 1e6,
		        c.bytes[2][i] / 1e6);
	fprintf(out, "slopes of time on log-log axes (upper half of the lengths): softmax %.2f, window %.2f, linear %.2f\n",
	        attn_slope(&c, 0, 0), attn_slope(&c, 1, 0), attn_slope(&c, 2, 0));
	return 0;
}
