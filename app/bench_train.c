/* bench_train.c — times whole training steps on tiny-lm's configuration, the figure the issue
 * compares with PyTorch (~6,000-7,500 tokens/s on this kind of machine). Each thread count
 * gets its own trainer, two warm-up steps (which size the traces and workspaces), then timed
 * steps; the best and the median step are reported, since everything else on the machine
 * only ever adds time. Prints figures; asserts nothing. */
#include "app/bench.h"
#include "app/bench_train.h"

#include <stdlib.h>
#include <time.h>

#include "model/rng.h"
#include "model/train/train.h"

enum { B = 16, T = 128, WARM = 2, STEPS = 8 };

int bench_train(FILE *out)
{
	gb_config c;
	bench_tiny_config(&c, 1024);
	static int ids[B * T], tgt[B * T];
	gb_rng r;
	gb_rng_seed(&r, 5);
	for (int i = 0; i < B * T; i++)
		ids[i] = gb_rng_below(&r, c.vocab);
	for (int i = 0; i < B * T; i++) /* next-token targets; the last of each row wraps (no matter) */
		tgt[i] = ids[(i + 1) % (B * T)];
	gb_batch b = { B, T, ids, tgt, 0, NULL };
	fprintf(out, "\ntraining steps: gpt2 family, 4 layers, d_model 128, 4 heads, FFN 512, vocabulary 1024,\n"
	             "batch %d x %d tokens, AdamW; %d timed steps after %d warm-up steps\n", B, T, STEPS, WARM);
	int threads[] = { 1, 2 };
	for (int ti = 0; ti < 2; ti++) {
		gb_model m;
		gb_trainer t;
		gb_train_opts o;
		gb_err err;
		gb_kernels_set_threads(threads[ti]);
		if (gb_model_init(&m, &c, 7, 0.02f, &err)) {
			fprintf(out, "bench: %s\n", err.msg);
			return -1;
		}
		gb_train_defaults(&o);
		o.lr = 3e-4f;
		o.threads = threads[ti];
		if (gb_trainer_init(&t, &m, &o, &err)) {
			fprintf(out, "bench: %s\n", err.msg);
			gb_model_free(&m);
			return -1;
		}
		double ts[STEPS], loss = 0;
		int bad = 0;
		for (int s = 0; s < WARM + STEPS && !bad; s++) {
			gb_step_stats st;
			double t0 = bench_now();
			if (gb_train_step(&t, &b, &st, &err)) {
				fprintf(out, "bench: %s\n", err.msg);
				bad = 1;
			}
			if (s >= WARM)
				ts[s - WARM] = bench_now() - t0;
			loss = st.loss;
		}
		if (!bad) {
			qsort(ts, STEPS, sizeof *ts, bench_cmp_double);
			fprintf(out, "  %d thread%s  median step %7.1f ms  %7.0f tokens/s   best %7.1f ms  %7.0f tokens/s"
			             "  (loss %.3f)\n", threads[ti], threads[ti] == 1 ? " " : "s", ts[STEPS / 2] * 1e3,
			        B * T / ts[STEPS / 2], ts[0] * 1e3, B * T / ts[0], loss);
		}
		gb_trainer_free(&t);
		gb_model_free(&m);
		if (bad)
			return -1;
	}
	gb_kernels_set_threads(0);
	return 0;
}
