/* bench_forward.c — times the forward pass the issue names (64 tokens, 4 layers, d_model 128,
 * 4 heads, full trace) on each kernel table in one run, so the ratios are measured side by
 * side on the same machine state. Prints figures; asserts nothing (speed is not a test). */
#include "app/bench_forward.h"
#include "app/bench_kv.h"
#include "app/bench_attn.h"
#include "app/bench_long.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "app/bench.h"
#include "app/bench_decode.h"
#include "app/bench_raster.h"
#include "app/bench_train.h"
#include "app/bench_viz.h"
#include "app/commands.h"
#include "app/session.h"
#include "model/forward.h"
#include "model/rng.h"

int bench_forward(FILE *out)
{
	gb_config c;
	bench_tiny_config(&c, 512);
	gb_model m;
	gb_err err;
	if (gb_model_init(&m, &c, 7, 0.1f, &err)) {
		fprintf(out, "bench: %s\n", err.msg);
		return -1;
	}
	int T = 64, ids[64];
	gb_rng r;
	gb_rng_seed(&r, 3);
	for (int i = 0; i < T; i++)
		ids[i] = gb_rng_below(&r, c.vocab);
	fprintf(out, "\nforward pass: 64 tokens, gpt2 family, 4 layers, d_model 128, 4 heads, FFN 512, vocabulary 512,\n"
	             "full trace; median and best of the repetitions (ms), 1 thread and all threads alternating (so each\n"
	             "run on all threads starts with the pool's workers asleep, as after idle); \"awake\": all threads\n"
	             "right after an untimed run on all threads (the workers still spinning, as in a batch of runs)\n");
	const char *names[] = { "ref", "scalar", "avx2", "avx512" };
	int nthr = gb_kernels_threads();
	double ref_ms = 0;
	/* Per table, the 1-thread and all-thread repetitions alternate, so both see the same
	 * machine state (other programs on a shared machine come and go). */
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		const gb_kernels *k = gb_kernels_by_name(names[i]);
		int nt = i == 0 || nthr < 2 ? 1 : 3, reps = i == 0 ? 20 : 200;
		double *t[3] = { malloc(sizeof(double) * reps), malloc(sizeof(double) * reps), malloc(sizeof(double) * reps) };
		gb_trace tr = { 0 };
		gb_fwd_opts o = { 0 };
		if (!k || !t[0] || !t[1] || !t[2]) {
			free(t[0]), free(t[1]), free(t[2]);
			continue;
		}
		o.k = k;
		for (int ti = 0; ti < nt; ti++) { /* warm-up: sizes the trace, starts the pool */
			gb_kernels_set_threads(ti ? nthr : 1);
			gb_forward(&m, ids, T, NULL, 0, &tr, &o, &err);
		}
		for (int rep = 0; rep < reps; rep++)
			for (int ti = 0; ti < nt; ti++) {
				gb_kernels_set_threads(ti ? nthr : 1);
				if (ti == 2) /* wakes the workers */
					gb_forward(&m, ids, T, NULL, 0, &tr, &o, &err);
				double t0 = bench_now();
				gb_forward(&m, ids, T, NULL, 0, &tr, &o, &err);
				t[ti][rep] = (bench_now() - t0) * 1e3;
			}
		for (int ti = 0; ti < nt; ti++)
			qsort(t[ti], (size_t)reps, sizeof *t[ti], bench_cmp_double);
		if (i == 0)
			ref_ms = t[0][reps / 2];
		fprintf(out, "  %-7s 1 thread   median %8.3f ms  best %8.3f ms  (%5.1fx ref)", k->name,
		        t[0][reps / 2], t[0][0], ref_ms / t[0][reps / 2]);
		if (nt > 1)
			fprintf(out, " | %d threads  median %8.3f ms  best %8.3f ms  (%.2fx / %.2fx 1 thread)"
			             "\n  %-7s %60s | %d awake   median %8.3f ms  best %8.3f ms  (%.2fx / %.2fx 1 thread)",
			        nthr, t[1][reps / 2], t[1][0], t[0][reps / 2] / t[1][reps / 2], t[0][0] / t[1][0], "", "", nthr,
			        t[2][reps / 2], t[2][0], t[0][reps / 2] / t[2][reps / 2], t[0][0] / t[2][0]);
		fprintf(out, "\n");
		free(t[0]);
		free(t[1]);
		free(t[2]);
		gb_trace_free(&tr);
	}
	gb_kernels_set_threads(0);
	gb_model_free(&m);
	return bench_forward_gpt2(out);
}

/* The same on GPT-2 small's shape (random weights; the figure depends on the shape only):
 * a 64-token prefill with the full trace, the fast table, 1 thread and all threads
 * alternating. */
int bench_forward_gpt2(FILE *out)
{
	gb_config c;
	gb_config_defaults(&c, GB_FAM_GPT2);
	c.d_model = 768;
	c.n_layer = 12;
	c.n_head = c.n_kv_head = 12;
	c.d_head = 64;
	c.d_ffn = 3072;
	c.vocab = 50257;
	c.n_ctx = 1024;
	gb_model m;
	gb_err err;
	if (gb_model_init(&m, &c, 7, 0.02f, &err)) {
		fprintf(out, "bench: %s\n", err.msg);
		return -1;
	}
	enum { T = 64, REPS = 21 };
	int ids[T], nthr = gb_kernels_threads(), nt = nthr > 1 ? 2 : 1;
	double t[2][REPS];
	gb_rng r;
	gb_rng_seed(&r, 3);
	for (int i = 0; i < T; i++)
		ids[i] = gb_rng_below(&r, c.vocab);
	gb_trace tr = { 0 };
	gb_fwd_opts o = { 0 };
	o.k = gb_kernels_fast();
	fprintf(out, "\nforward pass: 64 tokens, GPT-2 small's shape (12 layers, d_model 768, 12 heads, FFN 3072, vocabulary\n"
	             "50257), random weights, full trace, %s table; median and best of %d (ms), 1 thread and all threads alternating\n",
	        o.k->name, REPS);
	for (int ti = 0; ti < nt; ti++) { /* warm-up */
		gb_kernels_set_threads(ti ? nthr : 1);
		gb_forward(&m, ids, T, NULL, 0, &tr, &o, &err);
	}
	for (int rep = 0; rep < REPS; rep++)
		for (int ti = 0; ti < nt; ti++) {
			gb_kernels_set_threads(ti ? nthr : 1);
			double t0 = bench_now();
			gb_forward(&m, ids, T, NULL, 0, &tr, &o, &err);
			t[ti][rep] = (bench_now() - t0) * 1e3;
		}
	for (int ti = 0; ti < nt; ti++)
		qsort(t[ti], REPS, sizeof t[ti][0], bench_cmp_double);
	fprintf(out, "  %-7s 1 thread   median %8.3f ms  best %8.3f ms", o.k->name, t[0][REPS / 2], t[0][0]);
	if (nt > 1)
		fprintf(out, " | %d threads  median %8.3f ms  best %8.3f ms  (%.2fx / %.2fx 1 thread)", nthr, t[1][REPS / 2],
		        t[1][0], t[0][REPS / 2] / t[1][REPS / 2], t[0][0] / t[1][0]);
	fprintf(out, "\n");
	gb_kernels_set_threads(0);
	gb_trace_free(&tr);
	gb_model_free(&m);
	return 0;
}

/* The two figures a student feels: from `glassbox` to the prompt with tiny-lm loaded (the
 * process start is measured by hand with `time`; here: loading the model, which is most of
 * it), and `run` plus `attn` on a 30-token sentence, drawn as terminal cells. */
int bench_session(FILE *out)
{
	session s;
	session_init(&s);
	double t0 = bench_now();
	if (session_load_default(&s)) {
		fprintf(out, "\nsession: no shipped tiny-lm found; skipped\n");
		session_free(&s);
		return 0;
	}
	double load_ms = (bench_now() - t0) * 1e3;
	const char *text = "When Mary and John went to the park, John gave a ball to Mary because she asked him for it";
	double best = 1e9, total = 0;
	int reps = 50;
	FILE *null = fopen("/dev/null", "w");
	int saved = dup(1);
	fflush(stdout);
	dup2(fileno(null), 1);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "run %s", text);
	for (int i = 0; i < reps; i++) {
		double t = bench_now();
		command_line(&s, cmd);
		command_line(&s, "attn 1 1");
		fflush(stdout);
		t = (bench_now() - t) * 1e3;
		total += t;
		best = t < best ? t : best;
	}
	dup2(saved, 1);
	close(saved);
	fclose(null);
	fprintf(out, "\nsession: load tiny-lm %.2f ms (budget for the whole start: 50 ms);\n"
	             "  run + attn on a %d-token sentence, drawn in terminal cells: mean %.2f ms, best %.2f ms (budget 10 ms)\n",
	        load_ms, s.trace.n_ids, total / reps, best);
	session_free(&s);
	return 0;
}

int bench_all(FILE *out)
{
	if (bench_session(out) || bench_kernels(out) || bench_matvec(out) || bench_forward(out))
		return -1;
	if (bench_cells(out) || bench_raster(out))
		return -1;
	return bench_train(out);
}

int bench_main(FILE *out, int argc, char **argv)
{
	if (argc == 0)
		return bench_all(out);
	if (!strcmp(argv[0], "decode"))
		return bench_decode_main(out, argc - 1, argv + 1);
	if (argc == 1 && !strcmp(argv[0], "matvec"))
		return bench_matvec(out);
	if (argc == 1 && !strcmp(argv[0], "kernels"))
		return bench_kernels(out);
	if (argc == 1 && !strcmp(argv[0], "forward"))
		return bench_forward(out);
	if (argc == 1 && !strcmp(argv[0], "kv"))
		return bench_kvcache(out);
	if (argc >= 1 && !strcmp(argv[0], "long") && (argc == 1 || (argc == 2 && !strcmp(argv[1], "redraw"))))
		return bench_long(out, argc == 2);
	if (argc == 1 && !strcmp(argv[0], "attention")) /* issue 19, part 3 */
		return bench_attention(out);
	fprintf(stderr, "bench: unknown '%s' (bench [kernels|matvec|forward|kv|long [redraw]|attention|decode [DIR] [--shape llama110m|gpt2small] "
	                "[--threads N] [--tokens N]])\n", argv[0]);
	return -1;
}
