/* bench_decode.c — the memory-bound benchmarks: the read-bandwidth probe, matrix-vector
 * products against it, and `glassbox bench decode`.
 *
 * Decoding one token reads every weight once, so its speed limit is (bytes of weights) /
 * (memory bandwidth). The probe measures the bandwidth in the same run, with probe samples
 * interleaved with the measured work so both see the same machine state: each decode sample's
 * fraction of the bound is taken against the probe samples just before and after it, and the
 * rounds' median is printed with all of them (a shared machine moves by 10-40% within a
 * minute). Tokens per second and bandwidths are the best sample of each (other programs only
 * ever add time).
 *
 * The decode steps. A "weights pass", one token's worth of matrix-vector products through
 * every linear layer of the decoder and the output projection, through the fast kernel table
 * (no attention, no norms, no cache), reads exactly the bytes the bound counts; the real step
 * is the cached forward pass (gb_forward_cached) with its full trace. Each has a PyTorch peer,
 * run by /usr/bin/python3 after glassbox's samples when it has torch: the same matrix-vector
 * chain (tools/bench_torch_decode.py) and, for GPT-2, Hugging Face GPT-2's forward with a KV
 * cache (tools/bench_torch_gpt2_kv.py), whose ratio to the cached forward is printed. */
#include "app/bench_decode.h"
#include "app/bench.h"
#include "model/fileio.h"
#include "model/forward.h"
#include "model/kernels/kernels.h"
#include "model/kvcache.h"
#include "model/kernels/pool.h"
#include "model/model.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { PROBE_MAX_MB = 1024, PROBE_MIN_MB = 256, SUM_PAD = 16, ROUNDS = 7 };

/* ---- the bandwidth probe ---- */

static float probe_sums[64 * SUM_PAD]; /* one cache line per task */
static volatile float bench_probe_sink; /* read, so the compiler cannot drop the sums */

typedef float v8f __attribute__((vector_size(32)));

/* Sum of p[0..n), n a multiple of 64, 8 independent accumulators of 8 floats: the loads, not
 * the adds, are the limit. */
#define PROBE_BODY                                                                      \
	v8f s[8] = { { 0 } }, t;                                                            \
	for (size_t i = 0; i < n; i += 64)                                                  \
		for (int q = 0; q < 8; q++) {                                                   \
			memcpy(&t, p + i + 8 * q, sizeof t);                                        \
			s[q] += t;                                                                  \
		}                                                                               \
	for (int q = 1; q < 8; q++)                                                         \
		s[0] += s[q];                                                                   \
	return s[0][0] + s[0][1] + s[0][2] + s[0][3] + s[0][4] + s[0][5] + s[0][6] + s[0][7];

static float sum_generic(const float *p, size_t n) { PROBE_BODY }
#if defined(__x86_64__)
__attribute__((target("avx2"))) static float sum_avx2(const float *p, size_t n) { PROBE_BODY }
#endif

static void probe_task(void *arg, int t, int worker)
{
	bench_probe *P = arg;
	int nt = gb_pool_threads();
	size_t blocks = P->n / 64, b0 = blocks * t / nt, b1 = blocks * (t + 1) / nt;
	const float *p = P->buf + b0 * 64;
	size_t n = (b1 - b0) * 64;
#if defined(__x86_64__)
	if (__builtin_cpu_supports("avx2")) {
		probe_sums[t * SUM_PAD] = sum_avx2(p, n);
		return;
	}
#endif
	probe_sums[t * SUM_PAD] = sum_generic(p, n);
}

int bench_probe_init(bench_probe *p)
{
	memset(p, 0, sizeof *p);
	for (size_t mb = PROBE_MAX_MB; mb >= PROBE_MIN_MB; mb /= 2) {
		p->n = mb << 18; /* floats */
		p->buf = gb_big_alloc(p->n * sizeof(float)); /* the pages the weights get */
		if (p->buf)
			break;
	}
	if (!p->buf)
		return -1;
	/* Small values: the same buffer holds the matrices of bench_matvec. Writing it also
	 * takes the page faults out of the timings. */
	for (size_t i = 0; i < p->n; i++)
		p->buf[i] = (float)((i * 2654435761u) % 1000) * 1e-4f - 0.05f;
	return 0;
}

void bench_probe_free(bench_probe *p)
{
	free(p->buf);
	memset(p, 0, sizeof *p);
}

double bench_probe_sample(bench_probe *p, int threads, int passes)
{
	double t0;
	if (threads > 64)
		threads = 64;
	gb_pool_set_threads(threads);
	t0 = bench_now();
	for (int i = 0; i < passes; i++) {
		gb_pool_run(threads, probe_task, p);
		for (int t = 0; t < threads; t++)
			bench_probe_sink += probe_sums[t * SUM_PAD];
	}
	return (bench_now() - t0) / (passes > 0 ? passes : 1);
}

/* ---- matrix-vector products ---- */

static const struct {
	const char *what;
	int K, N, bt;
} mv_shapes[] = {
	{ "llama q,k,v,o", 768, 768, 1 },
	{ "llama gate,up", 768, 2048, 1 },
	{ "llama down", 2048, 768, 1 },
	{ "llama lm_head", 768, 32000, 1 },
	{ "gpt2 c_attn", 768, 2304, 0 },
	{ "gpt2 attn c_proj", 768, 768, 0 },
	{ "gpt2 c_fc", 768, 3072, 0 },
	{ "gpt2 mlp c_proj", 3072, 768, 0 },
	{ "gpt2 lm_head (wte)", 768, 50257, 1 },
};
#define NMV (int)(sizeof mv_shapes / sizeof *mv_shapes)

/* Seconds to run out (M,N) = a (M,K) · w for every whole copy of w that fits in the probe
 * buffer (so nothing comes from the caches, and a sample is as long as a probe sample); *bytes
 * gets the bytes of w read. */
static double mv_sample(const gb_kernels *T, bench_probe *P, float *a, float *o, int M, int K,
                        int N, int bt, double *bytes)
{
	size_t per = (size_t)K * N, copies = P->n / per;
	double t0;
	*bytes = (double)copies * per * sizeof(float);
	t0 = bench_now();
	for (size_t c = 0; c < copies; c++)
		T->matmul(o, a, P->buf + c * per, NULL, M, K, N, bt);
	return bench_now() - t0;
}

int bench_matvec(FILE *out)
{
	const gb_kernels *T = gb_kernels_fast();
	int nthr = gb_kernels_threads(), thr[2] = { 1, nthr }, nt = nthr > 1 ? 2 : 1;
	bench_probe P;
	float *a = malloc(16 * 4096 * sizeof *a), *o = malloc(16 * 51200 * sizeof *o);
	double best_bw[2] = { 1e30, 1e30 };
	if (!a || !o || bench_probe_init(&P)) {
		free(a), free(o);
		fprintf(out, "bench: out of memory for the bandwidth probe\n");
		return -1;
	}
	for (int i = 0; i < 16 * 4096; i++)
		a[i] = (float)(i % 97) * 0.01f - 0.5f;
	fprintf(out, "\nmatrix-vector products (%s table): weights read from up to %zu MB of copies (not from cache),\n"
	             "GB/s of weights, and %% of the read bandwidth measured between the samples; best of 5\n",
	        T->name, P.n * sizeof(float) >> 20);
	fprintf(out, "  %-20s %-18s %-3s %17s %17s %8s\n", "layer", "M x K x N", "b_t", "1 thread",
	         nt > 1 ? "2 threads" : "-", "speedup");
	/* every shape with M = 1, then M = 2, 4, 8, 16 on llama's gate and gpt2's c_fc */
	for (int c = 0; c < NMV + 8; c++) {
		int si = c < NMV ? c : c % 2 ? 6 : 1, M = c < NMV ? 1 : 2 << (c - NMV) / 2;
		int K = mv_shapes[si].K, N = mv_shapes[si].N, bt = mv_shapes[si].bt;
		double gbs[2] = { 0, 0 }, bw[2] = { 0, 0 };
		char shape[40];
		for (int ti = 0; ti < nt; ti++) {
			double best = 1e30, bytes = 0, pb = 1e30;
			gb_kernels_set_threads(thr[ti]);
			mv_sample(T, &P, a, o, M, K, N, bt, &bytes); /* warm-up */
			for (int rep = 0; rep < 5; rep++) {
				double t = bench_probe_sample(&P, thr[ti], 1);
				pb = t < pb ? t : pb;
				gb_kernels_set_threads(thr[ti]);
				t = mv_sample(T, &P, a, o, M, K, N, bt, &bytes);
				best = t < best ? t : best;
			}
			gbs[ti] = bytes / best * 1e-9;
			bw[ti] = P.n * sizeof(float) / pb * 1e-9;
			best_bw[ti] = pb < best_bw[ti] ? pb : best_bw[ti];
		}
		snprintf(shape, sizeof shape, "%dx%dx%d", M, K, N);
		fprintf(out, "  %-20s %-18s %-3d %6.1f GB/s %3.0f%% ", mv_shapes[si].what, shape, bt, gbs[0],
		        100 * gbs[0] / bw[0]);
		if (nt > 1)
			fprintf(out, "%6.1f GB/s %3.0f%% %7.2fx\n", gbs[1], 100 * gbs[1] / bw[1], gbs[1] / gbs[0]);
		else
			fprintf(out, "%17s %8s\n", "-", "-");
		fflush(out);
	}
	fprintf(out, "  read bandwidth (best probe): %.1f GB/s on 1 thread", P.n * sizeof(float) / best_bw[0] * 1e-9);
	if (nt > 1)
		fprintf(out, ", %.1f GB/s on %d threads", P.n * sizeof(float) / best_bw[1] * 1e-9, nthr);
	fprintf(out, "\n");
	gb_kernels_set_threads(0);
	bench_probe_free(&P);
	free(a);
	free(o);
	return 0;
}

/* ---- decode ---- */

/* The stand-in step: every linear layer a decoded token passes through, in order, as M = 1
 * products, then the output projection into the logits. */
struct wp_ctx {
	const gb_model *m;
	const gb_kernels *k;
	const gb_linear **lin;   /* (n_lin): the decoder's linears, then lm_head */
	int n_lin;
	int *group;              /* (n_lin): at the first of linears of one input that the forward
	                          * pass runs as one group (gb_fwd_lin_multi), their number; else 1 */
	float *x, *y;            /* (max in), (max out) */
	double bytes;            /* weights and biases read per token */
	uint16_t **w16;          /* (n_lin): the weights rounded to bf16, in block16, or NULL */
	uint16_t *block16;
	double bytes16;          /* the same with bf16 weights */
	int use16;               /* steps read w16 through matmul_w16 */
};

static void wp_add(struct wp_ctx *c, const gb_linear *L)
{
	if (L->w && L->in > 0 && L->out > 0)
		c->group[c->n_lin] = 1, c->lin[c->n_lin++] = L;
}

/* The n linears added last are one group when the forward pass groups them: all stored
 * transposed, the table with matmul_multi. */
static void wp_group(struct wp_ctx *c, int n)
{
	int ok = c->n_lin >= n && c->k->matmul_multi;
	for (int i = c->n_lin - n; ok && i < c->n_lin; i++)
		ok = c->lin[i]->trans;
	if (ok)
		c->group[c->n_lin - n] = n;
}

static int wp_init(struct wp_ctx *c, const gb_model *m, const gb_kernels *k)
{
	const gb_config *cfg = &m->cfg;
	int max_in = cfg->d_model, max_out = cfg->d_model;
	memset(c, 0, sizeof *c);
	c->m = m;
	c->k = k;
	c->lin = malloc(((size_t)m->dec.n_layer * 11 + 1) * sizeof *c->lin);
	c->group = malloc(((size_t)m->dec.n_layer * 11 + 1) * sizeof *c->group);
	if (!c->lin || !c->group)
		return -1;
	for (int l = 0; l < m->dec.n_layer; l++) {
		const gb_layer_w *L = &m->dec.layers[l];
		if (L->attn.fused) {
			wp_add(c, &L->attn.qkv);
		} else {
			int n0 = c->n_lin;
			wp_add(c, &L->attn.q);
			wp_add(c, &L->attn.k);
			wp_add(c, &L->attn.v);
			if (c->n_lin - n0 == 3)
				wp_group(c, 3);
		}
		wp_add(c, &L->attn.o);
		if (cfg->encdec) { /* cross-attention's keys and values come from the encoder, once */
			wp_add(c, L->cross.fused ? &L->cross.qkv : &L->cross.q);
			wp_add(c, &L->cross.o);
		}
		if (cfg->ffn == GB_FFN_GATED && !L->ffn.fused_gate) { /* as ffn() runs them */
			int n0 = c->n_lin;
			wp_add(c, &L->ffn.gate);
			wp_add(c, &L->ffn.up);
			if (c->n_lin - n0 == 2)
				wp_group(c, 2);
		} else {
			wp_add(c, &L->ffn.up);
		}
		wp_add(c, &L->ffn.down);
	}
	wp_add(c, &m->lm_head);
	for (int i = 0; i < c->n_lin; i++) {
		const gb_linear *L = c->lin[i];
		max_in = L->in > max_in ? L->in : max_in;
		max_out = L->out > max_out ? L->out : max_out;
		c->bytes += ((double)L->in * L->out + (L->b ? L->out : 0)) * sizeof(float);
	}
	c->x = malloc((size_t)max_in * sizeof *c->x);
	c->y = malloc((size_t)max_out * 3 * sizeof *c->y); /* a group of three outputs */
	if (!c->x || !c->y || c->n_lin == 0 || c->lin[c->n_lin - 1] != &m->lm_head)
		return -1;
	for (int i = 0; i < max_in; i++)
		c->x[i] = (float)(i % 89) * 0.01f - 0.44f;
	return 0;
}

/* bf16 copies of the weights (round to nearest even), as a bf16 checkpoint would hold them:
 * one block, as the model's own weights are (gb_weights_alloc), each matrix on a cache line. */
static int wp_init16(struct wp_ctx *c)
{
	size_t total = 0;
	c->w16 = calloc((size_t)c->n_lin, sizeof *c->w16);
	if (!c->w16)
		return -1;
	for (int i = 0; i < c->n_lin; i++)
		total += gb_weights_slot16((size_t)c->lin[i]->in * c->lin[i]->out);
	if (!(c->block16 = gb_big_alloc(total * sizeof *c->block16)))
		return -1;
	total = 0;
	for (int i = 0; i < c->n_lin; i++) {
		const gb_linear *L = c->lin[i];
		size_t n = (size_t)L->in * L->out;
		c->w16[i] = c->block16 + total;
		total += gb_weights_slot16(n);
		for (size_t e = 0; e < n; e++) {
			uint32_t u;
			memcpy(&u, &L->w[e], sizeof u);
			c->w16[i][e] = (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
		}
		c->bytes16 += ((double)n * 2 + (L->b ? L->out * 4.0 : 0));
	}
	return 0;
}

static void wp_free(struct wp_ctx *c)
{
	free(c->block16);
	free(c->w16);
	free(c->lin);
	free(c->group);
	free(c->x);
	free(c->y);
}

/* The real step: one token through the model with its key/value cache (gb_forward_cached),
 * every intermediate of the step recorded, as generate runs it. */
struct kv_ctx {
	const gb_model *m;
	gb_kvcache *kc;
	gb_trace tr;
	gb_fwd_opts o;
};

static int kv_step(void *ctx, int tok, int pos, float *logits)
{
	struct kv_ctx *c = ctx;
	gb_err err;
	if (pos == 0)
		gb_kvcache_truncate(c->kc, 0);
	if (gb_forward_cached(c->m, c->kc, &tok, 1, &c->tr, &c->o, &err))
		return -1;
	const float *row = gb_trace_last_row(&c->tr, "logits");
	if (!row)
		return -1;
	memcpy(logits, row, sizeof(float) * (size_t)c->m->cfg.vocab);
	return 0;
}

static int wp_step(void *ctx, int tok, int pos, float *logits)
{
	struct wp_ctx *c = ctx;
	int D = c->m->cfg.d_model;
	(void)pos;
	/* the token's embedding row, as the first layer would see it */
	const float *row = gb_model_embed_row(c->m, tok, c->x);
	if (row != c->x)
		memcpy(c->x, row, (size_t)D * sizeof *c->x);
	for (int i = 0; i < c->n_lin; i++) {
		const gb_linear *L = c->lin[i];
		float *o = i == c->n_lin - 1 ? logits : c->y;
		if (c->group[i] > 1) { /* q, k and v, or gate and up, as the forward pass runs them */
			gb_mm_one p[3];
			size_t off = 0;
			for (int g = 0; g < c->group[i]; g++) {
				const gb_linear *G = c->lin[i + g];
				p[g] = (gb_mm_one){ c->y + off, c->use16 ? (const void *)c->w16[i + g] : G->w,
				                    c->use16 ? GB_W_BF16 : GB_W_F32, G->b, G->out };
				off += (size_t)G->out;
			}
			c->k->matmul_multi(p, c->group[i], c->x, 1, L->in);
			i += c->group[i] - 1;
			continue;
		}
		if (c->use16)
			c->k->matmul_w16(o, c->x, c->w16[i], GB_W_BF16, L->b, 1, L->in, L->out, L->trans);
		else
			c->k->matmul(o, c->x, L->w, L->b, 1, L->in, L->out, L->trans);
	}
	return 0;
}

/* Seconds for one plain read (a sum, like the probe) of every weight the step reads: the
 * same bytes in the same memory, without the arithmetic. */
static double wp_read_sample(const struct wp_ctx *c, int use16)
{
	double t0 = bench_now();
	for (int i = 0; i < c->n_lin; i++) {
		const gb_linear *L = c->lin[i];
		size_t n = (size_t)L->in * L->out / (use16 ? 2 : 1) / 64 * 64;
		const float *p = use16 ? (const float *)c->w16[i] : L->w;
#if defined(__x86_64__)
		if (__builtin_cpu_supports("avx2"))
			bench_probe_sink += sum_avx2(p, n);
		else
#endif
			bench_probe_sink += sum_generic(p, n);
	}
	return bench_now() - t0;
}

/* Seconds for n greedy steps from token 0. */
static double decode_run(const bench_stepper *S, int n, float *logits, int vocab)
{
	double t0 = bench_now();
	int tok = 0;
	for (int pos = 0; pos < n; pos++) {
		if (S->step(S->ctx, tok, pos, logits))
			return -1;
		tok = 0;
		for (int v = 1; v < vocab; v++)
			if (logits[v] > logits[tok])
				tok = v;
	}
	return bench_now() - t0;
}

/* Runs /usr/bin/python3 on tools/SCRIPT next to the program with ARGS and returns the tok/s it
 * prints ("tok/s X"), or 0 with why filled (its "skip: REASON", or what went wrong). */
static double torch_script(const char *script_name, const char *args, char *why, size_t cap)
{
	char exe[1024], script[1200], *cmd, line[512];
	size_t cmdcap;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	double tps = 0;
	FILE *p;
	if (n <= 0) {
		snprintf(why, cap, "cannot find the program's folder");
		return 0;
	}
	exe[n] = 0;
	if (strrchr(exe, '/'))
		*strrchr(exe, '/') = 0;
	snprintf(script, sizeof script, "%s/tools/%s", exe, script_name);
	if (access("/usr/bin/python3", X_OK) || access(script, R_OK)) {
		if (access("/usr/bin/python3", X_OK))
			snprintf(why, cap, "no /usr/bin/python3");
		else
			snprintf(why, cap, "tools/%s not found next to the program", script_name);
		return 0;
	}
	cmdcap = strlen(script) + strlen(args) + 64;
	cmd = malloc(cmdcap);
	if (!cmd)
		return 0;
	snprintf(cmd, cmdcap, "/usr/bin/python3 '%s' %s 2>&1", script, args);
	fflush(NULL);
	p = popen(cmd, "r");
	free(cmd);
	snprintf(why, cap, "tools/%s printed no figure", script_name);
	if (!p)
		return 0;
	while (fgets(line, sizeof line, p)) {
		if (!strncmp(line, "tok/s ", 6))
			tps = atof(line + 6);
		else if (!strncmp(line, "skip: ", 6))
			snprintf(why, cap, "%.*s", (int)strcspn(line + 6, "\n"), line + 6);
	}
	pclose(p);
	return tps;
}

/* The matrix-vector chain in PyTorch: tools/bench_torch_decode.py with the same layer list. */
static double torch_tok_s(const struct wp_ctx *c, int threads, int tokens, char *why, size_t cap)
{
	size_t cap_a = 64 + (size_t)c->n_lin * 48, len;
	char *args = malloc(cap_a);
	double tps;
	if (!args)
		return 0;
	len = (size_t)snprintf(args, cap_a, "--threads %d --tokens %d --layers ", threads, tokens);
	for (int i = 0; i < c->n_lin; i++)
		len += (size_t)snprintf(args + len, cap_a - len, "%s%d:%d:%d:%d", i ? "," : "", c->lin[i]->in,
		                        c->lin[i]->out, c->lin[i]->trans, c->lin[i]->b != NULL);
	tps = torch_script("bench_torch_decode.py", args, why, cap);
	free(args);
	return tps;
}

/* The real peer of the cached forward: GPT-2 decoding with a KV cache in PyTorch
 * (tools/bench_torch_gpt2_kv.py), on random weights of the model's shape or on the folder's
 * own weights. Its prompt is one token, so its timed steps are at positions 1..tokens, as
 * decode_run's are at 0..tokens-1. */
static double torch_kv_tok_s(const gb_model *m, const char *dir, int threads, int tokens, char *why, size_t cap)
{
	const gb_config *c = &m->cfg;
	char args[1400];
	if (c->family != GB_FAM_GPT2) {
		snprintf(why, cap, "the PyTorch cached forward is written for GPT-2 only");
		return 0;
	}
	if (dir && strchr(dir, '\'')) {
		snprintf(why, cap, "the folder's name has a quote");
		return 0;
	}
	if (dir)
		snprintf(args, sizeof args, "--threads %d --tokens %d --runs 5 --prompt 1 --load '%s'", threads, tokens, dir);
	else
		snprintf(args, sizeof args, "--threads %d --tokens %d --runs 5 --prompt 1 --dim %d --layers %d --heads %d --ffn %d "
		         "--vocab %d --context %d", threads, tokens, c->d_model, c->n_layer, c->n_head, c->d_ffn,
		         c->vocab, c->n_ctx);
	return torch_script("bench_torch_gpt2_kv.py", args, why, cap);
}

/* The median of the rounds' fractions. */
static double median(const double *v)
{
	double s[ROUNDS];
	memcpy(s, v, sizeof s);
	for (int i = 1; i < ROUNDS; i++)
		for (int j = i; j > 0 && s[j] < s[j - 1]; j--) {
			double t = s[j];
			s[j] = s[j - 1], s[j - 1] = t;
		}
	return ROUNDS % 2 ? s[ROUNDS / 2] : (s[ROUNDS / 2 - 1] + s[ROUNDS / 2]) / 2;
}

/* One of glassbox's rows of the table: the best tok/s and the rounds' median fraction of the
 * bound on 1 thread, then on N with the speedup. */
static void glassbox_row(FILE *out, const char *what, const double tps[2], double frac[2][ROUNDS], int nt)
{
	fprintf(out, "\n  %-34s %10.1f tok/s %3.0f%%", what, tps[0], 100 * median(frac[0]));
	if (nt > 1)
		fprintf(out, " %10.1f tok/s %3.0f%% %7.2fx", tps[1], 100 * median(frac[1]), tps[1] / tps[0]);
}

static void shape_config(gb_config *c, int gpt2)
{
	gb_config_defaults(c, gpt2 ? GB_FAM_GPT2 : GB_FAM_LLAMA);
	c->d_model = 768;
	c->n_layer = 12;
	c->n_head = c->n_kv_head = 12;
	c->d_head = 64;
	c->d_ffn = gpt2 ? 3072 : 2048;
	c->vocab = gpt2 ? 50257 : 32000;
	c->n_ctx = 1024;
}

/* `bench decode DIR` on a folder whose k16 weight matrices are kept 16-bit: the cached forward
 * on them against the same folder widened to fp32 at load, 1 thread and `threads`, the models'
 * samples alternating (best of 7 each). The widened copy is glassbox's own memory, on huge
 * pages; when m reads its 16-bit weights in place from the file's pages, a third copy of
 * the folder loaded with them copied to huge pages too (GLASSBOX_WEIGHTS=copy) shows the
 * format alone. Returns -1 when a copy cannot be made. */
static int bench_kept16(FILE *out, const gb_model *m, const char *dir, int k16, int threads, int tokens)
{
	gb_model w[2];
	gb_err err;
	int nv = m->owned16 ? 2 : 3; /* models: m, the fp32 copy, m copied to huge pages */
	memset(w, 0, sizeof w);
	if (gb_model_load(&w[0], dir, &err) || gb_model_make_writable(&w[0], &err)) {
		fprintf(stderr, "bench decode: %s\n", err.msg);
		return -1;
	}
	if (nv == 3) {
		gb_weights_copy_set(1);
		int rc = gb_model_load(&w[1], dir, &err);
		gb_weights_copy_set(-2);
		if (rc) {
			fprintf(stderr, "bench decode: %s\n", err.msg);
			gb_model_free(&w[0]);
			return -1;
		}
	}
	struct kv_ctx k[3] = { { 0 }, { 0 }, { 0 } }; /* kept 16-bit, widened, kept 16-bit and copied */
	bench_stepper KS[3] = { { "cached forward, 16-bit weights kept", &k[0], kv_step },
	                        { "cached forward, the same weights widened to fp32", &k[1], kv_step },
	                        { "cached forward, 16-bit weights copied to huge pages", &k[2], kv_step } };
	float *lg = malloc((size_t)m->cfg.vocab * sizeof *lg);
	int cap = m->cfg.n_ctx < tokens + 2 ? m->cfg.n_ctx : tokens + 2, nt = threads > 1 ? 2 : 1, ok = lg != NULL;
	double tps[2][3] = { { 0, 0, 0 }, { 0, 0, 0 } }; /* [threads][model] */
	for (int v = 0; v < nv; v++) {
		k[v].m = v == 0 ? m : &w[v - 1];
		k[v].o.k = gb_kernels_fast();
		k[v].kc = gb_kvcache_new(k[v].m, cap, &err);
		ok &= k[v].kc != NULL;
	}
	fprintf(out, "decode: %s keeps %d weight matrices 16-bit; cached forward (full trace) against the same\n"
	             "  weights widened to fp32 at load (on huge pages), samples alternating, best of 7 samples of %d tokens\n",
	        dir, k16, tokens);
	if (nv == 3)
		fprintf(out, "  (16-bit weights read in place from the file's pages, and copied to huge pages at load as\n"
		             "  GLASSBOX_WEIGHTS=copy does)\n");
	for (int ti = 0; ok && ti < nt; ti++) {
		gb_kernels_set_threads(ti ? threads : 1);
		for (int v = 0; v < nv; v++)
			decode_run(&KS[v], 2, lg, m->cfg.vocab); /* warm-up */
		for (int rep = 0; rep < 7; rep++)
			for (int v = 0; v < nv; v++) {
				double t = decode_run(&KS[v], tokens, lg, m->cfg.vocab);
				if (t > 0 && tokens / t > tps[ti][v])
					tps[ti][v] = tokens / t;
			}
		fprintf(out, "  %d thread%s: 16-bit kept %.1f tok/s, fp32 %.1f tok/s: %.2fx", ti ? threads : 1, ti ? "s" : " ",
		        tps[ti][0], tps[ti][1], tps[ti][1] > 0 ? tps[ti][0] / tps[ti][1] : 0);
		if (nv == 3)
			fprintf(out, "; 16-bit copied to huge pages %.1f tok/s: %.2fx", tps[ti][2],
			        tps[ti][1] > 0 ? tps[ti][2] / tps[ti][1] : 0);
		fprintf(out, "\n");
	}
	if (ok && nt > 1 && tps[0][0] > 0 && tps[0][1] > 0)
		fprintf(out, "  %d threads / 1 thread: 16-bit %.2fx, fp32 %.2fx\n", threads, tps[1][0] / tps[0][0],
		        tps[1][1] / tps[0][1]);
	gb_kernels_set_threads(0);
	free(lg);
	for (int v = 0; v < nv; v++) {
		gb_kvcache_free(k[v].kc);
		gb_trace_free(&k[v].tr);
	}
	gb_model_free(&w[0]);
	gb_model_free(&w[1]); /* zeroed when not loaded */
	return 0;
}

int bench_decode_main(FILE *out, int argc, char **argv)
{
	const char *dir = NULL, *shape = "llama110m";
	int threads = gb_kernels_threads(), tokens = 16, thr[2], nt, passes;
	gb_model m;
	gb_err err;
	struct wp_ctx wp = { 0 };
	bench_probe P;
	bench_stepper S;
	float *logits;
	double tps[2] = { 0, 0 }, tps16[2] = { 0, 0 }, bw[2] = { 0, 0 }, pt[2] = { 0, 0 }, tkv[2] = { 0, 0 };
	struct kv_ctx kv = { 0 };
	bench_stepper K;
	double wr[2] = { 0, 0 }; /* plain read of the weights, GB/s (1 thread) */
	char why[2][200] = { "", "" }, whykv[2][200] = { "", "" };
	double ptkv[2] = { 0, 0 }; /* PyTorch's cached GPT-2 decoding, tok/s */
	double frac[3][2][ROUNDS]; /* [fp32 pass, cached forward, bf16 pass][threads][round]: of the bound */
	memset(frac, 0, sizeof frac);
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--threads") || !strcmp(argv[i], "--tokens") || !strcmp(argv[i], "--shape")) {
			char *end;
			long v;
			if (i + 1 >= argc) {
				fprintf(stderr, "bench decode: %s needs a value\n", argv[i]);
				return -1;
			}
			if (!strcmp(argv[i], "--shape")) {
				shape = argv[++i];
				if (strcmp(shape, "llama110m") && strcmp(shape, "gpt2small")) {
					fprintf(stderr, "bench decode: unknown --shape '%s' (llama110m or gpt2small)\n", shape);
					return -1;
				}
				continue;
			}
			v = strtol(argv[i + 1], &end, 10);
			if (*end || v < 1 || v > (!strcmp(argv[i], "--threads") ? 64 : 100000)) {
				fprintf(stderr, "bench decode: %s wants a positive number (got '%s')\n", argv[i], argv[i + 1]);
				return -1;
			}
			*(!strcmp(argv[i], "--threads") ? &threads : &tokens) = (int)v;
			i++;
		} else if (argv[i][0] == '-' || dir) {
			fprintf(stderr, "bench decode: unexpected '%s' (usage: bench decode [DIR] [--shape llama110m|gpt2small] [--threads N] [--tokens N])\n", argv[i]);
			return -1;
		} else {
			dir = argv[i];
		}
	}
	if (dir) {
		if (gb_model_load(&m, dir, &err)) {
			fprintf(stderr, "bench decode: %s\n", err.msg);
			return -1;
		}
		/* A folder of BF16/F16 weights decodes with them kept 16-bit. Timed against a second
		 * copy widened to fp32 (the same weights, exactly), their samples alternating so both
		 * see the same machine state; then m itself is widened for the fp32 figures below (the
		 * weights pass reads floats). */
		int k16 = 0;
		for (int i = 0; i < m.n_params; i++)
			k16 += m.params[i].data16 != NULL;
		if (k16 && !m.cfg.encdec && bench_kept16(out, &m, dir, k16, threads, tokens)) {
			gb_model_free(&m);
			return -1;
		}
		if (k16 && gb_model_make_writable(&m, &err)) {
			fprintf(stderr, "bench decode: %s\n", err.msg);
			gb_model_free(&m);
			return -1;
		}
	} else {
		gb_config c;
		shape_config(&c, !strcmp(shape, "gpt2small"));
		if (gb_model_init(&m, &c, 11, 0.02f, &err)) {
			fprintf(stderr, "bench decode: %s\n", err.msg);
			return -1;
		}
	}
	logits = malloc((size_t)m.cfg.vocab * sizeof *logits);
	if (!logits || wp_init(&wp, &m, gb_kernels_fast()) || wp_init16(&wp) || bench_probe_init(&P)) {
		fprintf(stderr, "bench decode: out of memory\n");
		free(logits);
		wp_free(&wp);
		gb_model_free(&m);
		return -1;
	}
	/* Probe samples about as long as a decode sample: a best-of over short samples would
	 * catch quiet moments of a shared machine that long ones cannot. */
	passes = (int)(wp.bytes * tokens / (P.n * sizeof(float)) + 0.5);
	passes = passes < 1 ? 1 : passes;
	S.what = "weights pass (no attention): one token through every linear layer of the decoder "
	         "and the output projection as matrix-vector products, grouped as the forward pass groups "
	         "them (q, k, v; gate, up)";
	S.ctx = &wp;
	S.step = wp_step;
	kv.m = &m;
	kv.o.k = gb_kernels_fast();
	kv.kc = gb_kvcache_new(&m, m.cfg.n_ctx < tokens + 2 ? m.cfg.n_ctx : tokens + 2, &err);
	K.what = "the cached forward pass (gb_forward_cached), as generate runs it";
	K.ctx = &kv;
	K.step = kv_step;
	thr[0] = 1;
	thr[1] = threads;
	nt = threads > 1 ? 2 : 1;

	fprintf(out, "decode: %s, %s family, d_model %d, %d layers, %d heads (%d kv), FFN %d, vocabulary %d,\n"
	             "  %.1fM weights in %d linear layers, fp32: %.1f MB read per token; kernels %s; %d tokens per sample\n",
	        dir ? dir : !strcmp(shape, "gpt2small") ? "GPT-2-small shape, random weights" : "Llama-110M shape, random weights",
	        gb_family_names[m.cfg.family], m.cfg.d_model, m.cfg.n_layer, m.cfg.n_head, m.cfg.n_kv_head,
	        m.cfg.d_ffn, m.cfg.vocab, wp.bytes / 4e6, wp.n_lin, wp.bytes / 1e6, wp.k->name, tokens);
	fprintf(out, "  step: %s\n", S.what);
	fflush(out);
	for (int ti = 0; ti < nt; ti++) {
		double best = 1e30, best16 = 1e30, pb = 1e30, best_r = 1e30;
		gb_kernels_set_threads(thr[ti]);
		wp.use16 = 1;
		decode_run(&S, 2, logits, m.cfg.vocab); /* warm-up */
		wp.use16 = 0;
		decode_run(&S, 2, logits, m.cfg.vocab);
		/* Rounds of probe, fp32 pass, probe, cached forward, probe, bf16 pass, probe: each decode
		 * sample's fraction of the bound is taken against the faster of the two probe samples
		 * beside it (the machine as it was then), and the rounds' fractions give a median and a
		 * spread; the best-of figures (tok/s, bandwidth) are the best sample of each. */
		int kvok = kv.kc && !m.cfg.encdec; /* the real step, attention and trace included */
		for (int rep = 0; rep < ROUNDS; rep++) {
			double tp[4], td[3] = { 0, 0, 0 };
			gb_kernels_set_threads(thr[ti]);
			for (int s = 0; s < 4; s++) {
				tp[s] = bench_probe_sample(&P, thr[ti], passes);
				pb = tp[s] < pb ? tp[s] : pb;
				gb_kernels_set_threads(thr[ti]);
				if (s == 3 || (s == 1 && !kvok))
					continue;
				wp.use16 = s == 2;
				td[s] = decode_run(s == 1 ? &K : &S, tokens, logits, m.cfg.vocab);
				wp.use16 = 0;
			}
			best = td[0] > 0 && td[0] < best ? td[0] : best;
			best16 = td[2] > 0 && td[2] < best16 ? td[2] : best16;
			if (td[1] > 0 && (tkv[ti] == 0 || tokens / td[1] > tkv[ti]))
				tkv[ti] = tokens / td[1];
			for (int s = 0; s < 3; s++) { /* bytes read / bytes the probe reads in that time */
				double pbs = tp[s] < tp[s + 1] ? tp[s] : tp[s + 1];
				double per_probe = (double)P.n * sizeof(float); /* a probe sample: seconds per pass */
				frac[s][ti][rep] = td[s] > 0 ? (s == 2 ? wp.bytes16 : wp.bytes) * tokens / per_probe * pbs / td[s] : 0;
			}
			if (ti == 0) { /* the plain read, `tokens` passes */
				double t = 0;
				for (int r = 0; r < tokens; r++)
					t += wp_read_sample(&wp, 0);
				best_r = t < best_r ? t : best_r;
			}
		}
		if (ti == 0)
			wr[0] = wp.bytes * tokens / best_r * 1e-9;
		tps[ti] = tokens / best;
		tps16[ti] = tokens / best16;
		bw[ti] = P.n * sizeof(float) / pb * 1e-9;
	}
	gb_kernels_set_threads(0);
	for (int ti = 0; ti < nt; ti++) {
		pt[ti] = torch_tok_s(&wp, thr[ti], tokens, why[ti], sizeof why[ti]);
		if (tkv[ti] > 0)
			ptkv[ti] = torch_kv_tok_s(&m, dir, thr[ti], tokens, whykv[ti], sizeof whykv[ti]);
	}

	fprintf(out, "  %-34s %22s", "", "1 thread");
	if (nt > 1)
		fprintf(out, " %22s %8s", threads == 2 ? "2 threads" : "N threads", "speedup");
	fprintf(out, "\n  %-34s %17.1f GB/s", "read bandwidth (probe)", bw[0]);
	if (nt > 1)
		fprintf(out, " %17.1f GB/s %7.2fx", bw[1], bw[1] / bw[0]);
	fprintf(out, "\n  %-34s %17.1f GB/s", "plain read of the weights (sum)", wr[0]);
	fprintf(out, "\n  %-34s %16.1f tok/s", "bound: bandwidth / bytes per token", bw[0] * 1e9 / wp.bytes);
	if (nt > 1)
		fprintf(out, " %16.1f tok/s", bw[1] * 1e9 / wp.bytes);
	glassbox_row(out, "glassbox (weights pass)", tps, frac[0], nt);
	if (tkv[0] > 0)
		glassbox_row(out, "glassbox (cached forward, fp32)", tkv, frac[1], nt);
	glassbox_row(out, "glassbox, bf16 weights", tps16, frac[2], nt);
	fprintf(out, "\n  %-34s %16.2fx", "  bf16 / fp32 tok/s", tps16[0] / tps[0]);
	if (nt > 1)
		fprintf(out, " %16.2fx", tps16[1] / tps[1]);
	fprintf(out, "\n");
	if (pt[0] > 0) {
		fprintf(out, "  %-34s %10.1f tok/s %3.0f%%", "PyTorch (same matvec chain)", pt[0],
		        100 * pt[0] * wp.bytes / (bw[0] * 1e9));
		if (nt > 1 && pt[1] > 0)
			fprintf(out, " %10.1f tok/s %3.0f%% %7.2fx", pt[1], 100 * pt[1] * wp.bytes / (bw[1] * 1e9),
			        pt[1] / pt[0]);
		fprintf(out, "\n");
	} else {
		fprintf(out, "  PyTorch matvec chain: skipped (%s)\n", why[0]);
	}
	if (ptkv[0] > 0) {
		fprintf(out, "  %-34s %10.1f tok/s %3.0f%%", "PyTorch (cached GPT-2 forward)", ptkv[0],
		        100 * ptkv[0] * wp.bytes / (bw[0] * 1e9));
		if (nt > 1 && ptkv[1] > 0)
			fprintf(out, " %10.1f tok/s %3.0f%% %7.2fx", ptkv[1], 100 * ptkv[1] * wp.bytes / (bw[1] * 1e9),
			        ptkv[1] / ptkv[0]);
		fprintf(out, "\n  %-34s %16.2fx", "  glassbox / PyTorch, cached", tkv[0] / ptkv[0]);
		if (nt > 1 && ptkv[1] > 0)
			fprintf(out, " %16.2fx", tkv[1] / ptkv[1]);
		fprintf(out, "\n");
	} else if (tkv[0] > 0 && pt[0] > 0) {
		fprintf(out, "  PyTorch cached forward: skipped (%s)\n", whykv[0]);
	}
	if (pt[0] > 0 || ptkv[0] > 0)
		fprintf(out, "  (PyTorch, run after glassbox's samples, torch.set_num_threads as above, best of 5 runs of\n"
		             "   %d tokens: the matvec chain is tools/bench_torch_decode.py, the same matrix-vector products\n"
		             "   as glassbox's weights pass; the cached forward is tools/bench_torch_gpt2_kv.py, Hugging\n"
		             "   Face GPT-2's forward with a preallocated KV cache, %s, after a 1-token prompt)\n",
		        tokens, dir ? "on the folder's weights" : "random weights of the same shape");
	fprintf(out, "  glassbox's %%: the fraction of the bound in each of %d rounds, a decode sample's bytes per second\n"
	             "  over the faster of the probe samples just before and after it; the median above, and all of them:\n", ROUNDS);
	{
		static const char *row[3] = { "weights pass, fp32", "cached forward, fp32", "weights pass, bf16" };
		for (int r = 0; r < 3; r++) {
			if (r == 1 && tkv[0] <= 0)
				continue;
			fprintf(out, "    %-22s", row[r]);
			for (int ti = 0; ti < nt; ti++) {
				fprintf(out, "%s%d thread%s", ti ? "; " : "", thr[ti], thr[ti] > 1 ? "s" : "");
				for (int i = 0; i < ROUNDS; i++)
					fprintf(out, " %.0f", 100 * frac[r][ti][i]);
			}
			fprintf(out, "\n");
		}
	}
	fprintf(out, "  PyTorch's %%, and the bound: best tok/s x bytes per token / best probe sample;\n"
	             "  the plain read sums the weights themselves (1 thread, samples as long as the decode samples):\n"
	             "  fp32 weights pass / plain read of the same bytes = %.0f%%\n", 100 * tps[0] * wp.bytes / (wr[0] * 1e9));
	fprintf(out, ""
	             "  (bf16: the weights rounded to bf16, %.1f MB per token, kept 16-bit and widened in the kernel)\n",
	        wp.bytes16 / 1e6);
	{
		/* The kernel's figure: glibc's sysconf reports 10x the L3 under some hypervisors. */
		FILE *f = fopen("/sys/devices/system/cpu/cpu0/cache/index3/size", "r");
		long kb = 0;
		if (!f || fscanf(f, "%ldK", &kb) != 1 || kb <= 0)
			kb = 32 << 10;
		if (f)
			fclose(f);
		if (wp.bytes < 2.0 * kb * 1024)
			fprintf(out, "  note: %.1f MB of weights stay in the caches (L3: %ld MB), so the memory bound does not apply\n",
			        wp.bytes / 1e6, kb >> 10);
	}
	bench_probe_free(&P);
	free(logits);
	wp_free(&wp);
	gb_kvcache_free(kv.kc);
	gb_trace_free(&kv.tr);
	gb_model_free(&m);
	return 0;
}
