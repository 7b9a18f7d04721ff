/* bench_kv.c — greedy decoding with and without the key/value cache, side by side in one run:
 * 100 new tokens after an 8-token prompt, on tiny-lm and on a random model of GPT-2 small's
 * shape, with 1 and 2 threads of the fast table. "Full" is what generate did before the
 * cache: the whole text through gb_forward for every token. Prints figures, asserts nothing;
 * says whether both ways chose the same tokens. */
#include "app/bench_kv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "app/bench.h"
#include "app/session.h"
#include "model/decode.h"
#include "model/forward.h"
#include "model/kvcache.h"

static int argmax(const float *row, int V)
{
	int best = 0;
	for (int v = 1; v < V; v++)
		if (row[v] > row[best])
			best = v;
	return best;
}

/* Greedy decoding of n_new tokens after seq[0..n) into seq, one way or the other; seconds. */
static double decode(const gb_model *m, const gb_kernels *k, int *seq, int n, int n_new, int cached, gb_err *err)
{
	gb_fwd_opts o = { 0 };
	o.k = k;
	gb_trace tr = { 0 };
	gb_kvcache *kc = cached ? gb_kvcache_new(m, n + n_new, err) : NULL;
	if (cached && !kc)
		return -1;
	double t0 = bench_now();
	for (int i = 0; i < n_new; i++) {
		int have = kc ? gb_kvcache_len(kc) : 0;
		int rc = kc ? gb_forward_cached(m, kc, seq + have, n + i - have, &tr, &o, err)
		            : gb_forward(m, seq, n + i, NULL, 0, &tr, &o, err);
		if (rc) {
			gb_kvcache_free(kc);
			gb_trace_free(&tr);
			return -1;
		}
		int V;
		const float *row = gb_last_logits(&tr, &V);
		seq[n + i] = argmax(row, V);
	}
	double t = bench_now() - t0;
	gb_kvcache_free(kc);
	gb_trace_free(&tr);
	return t;
}

static void one_model(FILE *out, const gb_model *m, const char *what)
{
	enum { PROMPT = 8, NEW = 100 };
	const gb_kernels *k = gb_kernels_fast();
	fprintf(out, "  %s (%s table):\n", what, k->name);
	for (int th = 1; th <= 2; th++) {
		gb_kernels_set_threads(th);
		int a[PROMPT + NEW], b[PROMPT + NEW];
		for (int i = 0; i < PROMPT; i++)
			a[i] = b[i] = (7 + 13 * i) % m->cfg.vocab;
		gb_err err;
		double full = decode(m, k, a, PROMPT, NEW, 0, &err);
		double kv = full < 0 ? -1 : decode(m, k, b, PROMPT, NEW, 1, &err);
		if (full < 0 || kv < 0) {
			fprintf(out, "    %s\n", err.msg);
			continue;
		}
		fprintf(out, "    %d thread%s  full recompute %8.1f tokens/s   KV cache %8.1f tokens/s   %5.1fx   same tokens: %s\n",
		        th, th == 1 ? " " : "s", NEW / full, NEW / kv, full / kv,
		        memcmp(a, b, sizeof a) ? "NO" : "yes");
	}
	gb_kernels_set_threads(0);
}

int bench_kvcache(FILE *out)
{
	fprintf(out, "\ngreedy decoding, 100 new tokens after 8, full trace at every step: tokens per second\n");
	char dir[1024], path[1100];
	gb_model m;
	gb_err err;
	if (!models_dir(dir, sizeof dir)) {
		snprintf(path, sizeof path, "%s/tiny-lm", dir);
		if (!gb_model_load(&m, path, &err)) {
			one_model(out, &m, "tiny-lm (4 layers, d_model 128)");
			gb_model_free(&m);
		} else
			fprintf(out, "  tiny-lm: %s\n", err.msg);
	} else
		fprintf(out, "  tiny-lm: not found; skipped\n");
	/* GPT-2 small's shape with random weights (the figure depends on the shape only). */
	gb_config c;
	gb_config_defaults(&c, GB_FAM_GPT2);
	c.d_model = 768;
	c.n_layer = 12;
	c.n_head = c.n_kv_head = 12;
	c.d_head = 64;
	c.d_ffn = 3072;
	c.vocab = 50257;
	c.n_ctx = 1024;
	if (gb_model_init(&m, &c, 1, 0.02f, &err)) {
		fprintf(out, "  gpt2-small shape: %s\n", err.msg);
		return 0;
	}
	one_model(out, &m, "GPT-2 small shape, random (12 layers, d_model 768, vocabulary 50257)");
	gb_model_free(&m);
	return 0;
}
