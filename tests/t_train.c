/* t_train.c — the trainer end to end: a one-layer model learns a copy task, the same seed gives
 * the same bits, a resumed run equals an uninterrupted one, a checkpoint of another
 * configuration is refused, a learning rate that blows up is caught with the weights kept,
 * padding changes nothing, and the schedules have the textbook's values. */
#include "tests/tap.h"

#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "model/rng.h"
#include "model/forward.h"
#include "model/train/train.h"

enum { SYM = 14, SEP = 14, PAD = 15, HALF = 6, LEN = 2 * HALF + 1 };

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* "a b c d e f | a b c d e f": the targets are the second half, predicted from the separator
 * on; the first half is random and not counted. */
static void copy_batch(gb_rng *r, int B, int *ids, int *tgt)
{
	for (int b = 0; b < B; b++) {
		int *x = ids + b * LEN, *y = tgt + b * LEN;
		for (int i = 0; i < HALF; i++)
			x[i] = x[HALF + 1 + i] = gb_rng_below(r, SYM);
		x[HALF] = SEP;
		for (int i = 0; i < LEN; i++)
			y[i] = i >= HALF && i + 1 < LEN ? x[i + 1] : -1;
	}
}

static void lm_config(gb_config *c, int d_model)
{
	gb_config_defaults(c, GB_FAM_GPT2);
	c->n_layer = 1;
	c->d_model = d_model;
	c->n_head = c->n_kv_head = 4;
	c->d_head = d_model / 4;
	c->d_ffn = 4 * d_model;
	c->vocab = 16;
	c->n_ctx = 32;
	c->pad_id = PAD;
}

static void copy_opts(gb_train_opts *o, int threads)
{
	gb_train_defaults(o);
	o->lr = 3e-3f;
	o->schedule = GB_SCHED_COSINE;
	o->warmup = 20;
	o->total_steps = 600;
	o->lr_min = 3e-4f;
	o->threads = threads;
	o->seed = 99;
}

/* Trains `steps` steps on batches drawn from the trainer's own generator. */
static int train_steps(gb_trainer *t, int steps, gb_step_stats *last)
{
	int ids[32 * LEN], tgt[32 * LEN];
	gb_batch b = { 32, LEN, ids, tgt, 0, NULL };
	gb_err err;
	for (int s = 0; s < steps; s++) {
		copy_batch(&t->rng, 32, ids, tgt);
		if (gb_train_step(t, &b, last, &err)) {
			tap_diag("%s", err.msg);
			return -1;
		}
	}
	return 0;
}

static void t_copy(void)
{
	gb_config c;
	gb_model m;
	gb_trainer t;
	gb_train_opts o;
	gb_err err;
	lm_config(&c, 64);
	copy_opts(&o, 2);
	if (gb_model_init(&m, &c, 1, 0.02f, &err) || gb_trainer_init(&t, &m, &o, &err)) {
		tap_ok(0, "copy task: set up (%s)", err.msg);
		return;
	}
	double t0 = now(), acc = 0;
	int step = 0;
	gb_step_stats st = { 0 };
	gb_rng held;
	gb_rng_seed(&held, 12345); /* held-out batches, never trained on */
	int ids[256 * LEN], tgt[256 * LEN];
	gb_batch eval = { 256, LEN, ids, tgt, 0, NULL };
	while (now() - t0 < 20 && step < 1500) {
		if (train_steps(&t, 50, &st))
			break;
		step += 50;
		copy_batch(&held, 256, ids, tgt);
		gb_step_stats ev;
		if (gb_train_eval(&t, &eval, &ev, &err))
			break;
		acc = (double)ev.correct / ev.tokens;
		if (acc >= 0.99)
			break;
	}
	tap_ok(acc >= 0.95, "copy task, one layer, d_model 64: %.1f%% token accuracy on held-out sequences after %d "
	       "steps of 32 (%.1f s, last loss %.3f)", 100 * acc, step, now() - t0, st.loss);
	gb_trainer_free(&t);
	gb_model_free(&m);
}

/* A model and trainer with the copy task's setup; `steps` steps trained. */
static int run(gb_model *m, gb_trainer *t, int threads, int steps, int d_model)
{
	gb_config c;
	gb_train_opts o;
	gb_err err;
	lm_config(&c, d_model);
	copy_opts(&o, threads);
	if (gb_model_init(m, &c, 1, 0.02f, &err) || gb_trainer_init(t, m, &o, &err)) {
		tap_diag("%s", err.msg);
		return -1;
	}
	gb_step_stats st;
	return train_steps(t, steps, &st);
}

static int same_weights(const gb_model *a, const gb_model *b)
{
	return a->n_weights == b->n_weights && !memcmp(a->owned, b->owned, a->n_weights * sizeof(float));
}

static void t_determinism(void)
{
	gb_model a, b, c;
	gb_trainer ta, tb, tc;
	int ok = !run(&a, &ta, 2, 30, 32) && !run(&b, &tb, 2, 30, 32);
	tap_ok(ok && same_weights(&a, &b), "same seed, 2 slots, twice: bit-identical weights after 30 steps");
	ok = !run(&c, &tc, 1, 30, 32);
	double d = 0;
	for (size_t i = 0; ok && i < a.n_weights; i++)
		d = fmax(d, fabs(a.owned[i] - c.owned[i]));
	tap_ok(ok && d < 1e-3, "1 slot instead of 2: the same run up to float rounding (largest difference %.1e)", d);
	gb_trainer_free(&ta), gb_trainer_free(&tb), gb_trainer_free(&tc);
	gb_model_free(&a), gb_model_free(&b), gb_model_free(&c);
}

static void t_resume(const char *dir)
{
	gb_model a, b;
	gb_trainer ta, tb;
	gb_err err;
	char ck[512];
	snprintf(ck, sizeof ck, "%s/ckpt", dir);
	/* uninterrupted: 40 steps; interrupted: 15, saved, resumed in a new trainer, 25 more */
	int ok = !run(&a, &ta, 2, 40, 32);
	ok = ok && !run(&b, &tb, 2, 15, 32);
	int saved = ok && !gb_train_save(&tb, ck, &err);
	if (!saved)
		tap_diag("%s", err.msg);
	gb_trainer_free(&tb);
	gb_model_free(&b);
	gb_checkpoint_info info = { .step = -1, .total_steps = -1 };
	int rc = saved ? gb_train_checkpoint_info(ck, &info, &err) : -1;
	tap_ok(!rc && info.step == 15 && info.total_steps == 600,
	       "checkpoint info from the metadata alone: step %ld, schedule total %d", info.step, info.total_steps);
	ok = ok && !run(&b, &tb, 2, 0, 32); /* fresh weights, step 0 */
	/* a resume asked for another length (as `train --resume --steps 40` once did) keeps the
	 * checkpoint's schedule: had it stretched the cosine to 40, the 25 steps would differ */
	tb.o.total_steps = 40;
	/* a recipe that changed since (another peak, warm-up and floor) does not change the run */
	float lr0 = ta.o.lr, lrmin0 = ta.o.lr_min;
	int warm0 = ta.o.warmup;
	tb.o.lr = 3 * lr0, tb.o.warmup = warm0 + 7, tb.o.lr_min = lrmin0 + 1e-4f;
	int resumed = saved && !gb_train_resume(&tb, ck, &err);
	if (saved && !resumed)
		tap_diag("%s", err.msg);
	tap_ok(resumed && tb.step == 15 && tb.o.total_steps == 600,
	       "resume: checkpoint after 15 steps read back (step %ld), with its schedule's total (%d, not 40)", tb.step,
	       tb.o.total_steps);
	tap_ok(resumed && tb.o.lr == lr0 && tb.o.warmup == warm0 && tb.o.lr_min == lrmin0 && tb.o.schedule == ta.o.schedule,
	       "resume: peak %g, warm-up %d, floor %g and schedule are the checkpoint's, not the changed recipe's",
	       (double)tb.o.lr, tb.o.warmup, (double)tb.o.lr_min);
	tap_ok(gb_train_lr(&tb.o, 16) == gb_train_lr(&ta.o, 16) && gb_train_lr(&tb.o, 40) == gb_train_lr(&ta.o, 40),
	       "resume: the rates of steps 16 and 40 are the uninterrupted run's (%.6g, %.6g)", gb_train_lr(&tb.o, 16),
	       gb_train_lr(&tb.o, 40));
	gb_step_stats st;
	ok = ok && resumed && !train_steps(&tb, 25, &st);
	tap_ok(ok && same_weights(&a, &b) && tb.step == ta.step,
	       "resume: 15 steps, checkpoint, 25 more = 40 uninterrupted steps, bit for bit");
	rc = gb_train_checkpoint_info(dir, &info, &err);
	tap_ok(rc == -1 && strstr(err.msg, "optimizer.safetensors"), "checkpoint info of a folder without one fails: "
	       "\"%s\"", rc ? err.msg : "(accepted)");

	/* a checkpoint of another configuration is refused, and nothing changes */
	gb_model m2;
	gb_trainer t2;
	ok = !run(&m2, &t2, 1, 0, 64);
	float first = m2.owned[0];
	rc = ok ? gb_train_resume(&t2, ck, &err) : 0;
	tap_ok(ok && rc == -1 && strstr(err.msg, "d_model is 32 there, 64 here") && m2.owned[0] == first,
	       "resume refuses another configuration: \"%s\"", rc ? err.msg : "(accepted)");
	gb_trainer_free(&t2);
	gb_model_free(&m2);

	/* an optimizer file that does not belong to the weights is refused */
	char path[600];
	snprintf(path, sizeof path, "%s/model.safetensors", ck);
	FILE *f = fopen(path, "r+b");
	if (f) {
		fseek(f, -4, SEEK_END);
		fputc(0x3f, f); /* change the last weight */
		fclose(f);
	}
	rc = gb_train_resume(&tb, ck, &err);
	tap_ok(rc == -1 && strstr(err.msg, "other weights"), "resume refuses an optimizer state saved with other weights: "
	       "\"%s\"", rc ? err.msg : "(accepted)");
	gb_trainer_free(&ta), gb_trainer_free(&tb);
	gb_model_free(&a), gb_model_free(&b);
}

static void t_divergence(void)
{
	gb_config c;
	gb_model m;
	gb_trainer t;
	gb_train_opts o;
	gb_err err;
	lm_config(&c, 32);
	copy_opts(&o, 1);
	o.lr = 1e6f;
	o.schedule = GB_SCHED_CONSTANT;
	o.warmup = 0;
	o.clip = 0;
	if (gb_model_init(&m, &c, 1, 0.02f, &err) || gb_trainer_init(&t, &m, &o, &err)) {
		tap_ok(0, "divergence: set up (%s)", err.msg);
		return;
	}
	int ids[32 * LEN], tgt[32 * LEN];
	gb_batch b = { 32, LEN, ids, tgt, 0, NULL };
	float *before = malloc(m.n_weights * sizeof *before);
	int caught = 0, step = 0, kept = 0;
	long steps_before = 0;
	gb_step_stats st;
	for (step = 1; step <= 50 && !caught; step++) {
		copy_batch(&t.rng, 32, ids, tgt);
		memcpy(before, m.owned, m.n_weights * sizeof *before);
		steps_before = t.step;
		if (gb_train_step(&t, &b, &st, &err)) {
			caught = st.diverged;
			kept = !memcmp(before, m.owned, m.n_weights * sizeof *before) && t.step == steps_before;
		}
	}
	tap_ok(caught && kept, "learning rate 1e6: divergence reported at step %d, weights and step count kept (\"%s\")",
	       step - 1, caught ? err.msg : "not caught");
	free(before);
	gb_trainer_free(&t);
	gb_model_free(&m);
}

/* Sequences of different lengths padded to one: the same loss and gradient as one by one. */
static void t_padding(void)
{
	gb_config c;
	gb_model m;
	gb_trainer t;
	gb_train_opts o;
	gb_err err;
	gb_config_defaults(&c, GB_FAM_ENCDEC);
	c.n_layer = c.n_enc_layer = 1;
	c.d_model = 32;
	c.n_head = c.n_kv_head = 4;
	c.d_head = 8;
	c.d_ffn = 64;
	c.vocab = 16;
	c.n_ctx = 16;
	c.pad_id = PAD;
	c.bos_id = c.dec_start_id = SEP;
	gb_train_defaults(&o);
	o.threads = 1;
	if (gb_model_init(&m, &c, 3, 0.1f, &err) || gb_trainer_init(&t, &m, &o, &err)) {
		tap_ok(0, "padding: set up (%s)", err.msg);
		return;
	}
	/* two pairs: source lengths 5 and 8, target lengths 4 and 7, padded to 8 and 7 */
	int src[2 * 8] = { 1, 2, 3, 4, 5, PAD, PAD, PAD, 6, 7, 8, 9, 10, 11, 12, 13 };
	int in[2 * 7] = { SEP, 5, 4, 3, PAD, PAD, PAD, SEP, 13, 12, 11, 10, 9, 8 };
	int tg[2 * 7] = { 5, 4, 3, 2, -1, -1, -1, 13, 12, 11, 10, 9, 8, 7 };
	gb_batch both = { 2, 7, in, tg, 8, src };
	gb_batch one = { 1, 4, in, tg, 5, src };
	gb_batch two = { 1, 7, in + 7, tg + 7, 8, src + 8 };
	gb_step_stats s2, s1a, s1b;
	int rc = gb_train_eval(&t, &both, &s2, &err) | gb_train_eval(&t, &one, &s1a, &err) |
	         gb_train_eval(&t, &two, &s1b, &err);
	double sep = (s1a.loss * s1a.tokens + s1b.loss * s1b.tokens) / (s1a.tokens + s1b.tokens);
	tap_ok(rc == 0 && s2.tokens == 11 && fabs(s2.loss - sep) < 1e-6 * sep,
	       "padded encoder-decoder batch: loss %.7f over %ld tokens = %.7f one by one", s2.loss, s2.tokens, sep);

	/* and the gradient: a step on the padded batch equals a step on the pair in a batch of two
	 * without padding positions to trim (the second pair as is, the first cut to length) */
	float *g = malloc(m.n_weights * sizeof *g), *h = calloc(m.n_weights, sizeof *h);
	gb_trace tr = { 0 };
	gb_ws ws = { 0 };
	double l;
	int cnt;
	const gb_kernels *k = gb_kernels_fast();
	gb_fwd_opts fo = { 0 };
	gb_train_opts so = t.o;
	so.lr = 0; /* a step that changes nothing, to read the summed gradient */
	t.o = so;
	gb_train_step(&t, &both, &s2, &err);
	memcpy(g, t.slot[0].grad, m.n_weights * sizeof *g);
	fo.k = k;
	rc = gb_forward(&m, src, 5, in, 4, &tr, &fo, &err) |
	     gb_backward(&m, &tr, tg, 0, 1.0 / 11, h, k, &ws, &l, &cnt, NULL, &err) |
	     gb_forward(&m, src + 8, 8, in + 7, 7, &tr, &fo, &err) |
	     gb_backward(&m, &tr, tg + 7, 0, 1.0 / 11, h, k, &ws, &l, &cnt, NULL, &err);
	double d = 0, big = 0;
	for (size_t i = 0; i < m.n_weights; i++) {
		d = fmax(d, fabs(g[i] - h[i]));
		big = fmax(big, fabs(h[i]));
	}
	tap_ok(rc == 0 && d <= 1e-6 * big, "padded batch's gradient = the unpadded sequences' (difference %.1e of %.2g)",
	       d, big);
	free(g), free(h);
	gb_trace_free(&tr);
	gb_ws_free(&ws);
	gb_trainer_free(&t);
	gb_model_free(&m);
}

/* An encoder-decoder learns to copy its source (tiny-mt's shape, small). */
static void t_encdec(void)
{
	gb_config c;
	gb_model m;
	gb_trainer t;
	gb_train_opts o;
	gb_err err;
	gb_config_defaults(&c, GB_FAM_ENCDEC);
	c.n_layer = c.n_enc_layer = 2;
	c.d_model = 32;
	c.n_head = c.n_kv_head = 4;
	c.d_head = 8;
	c.d_ffn = 64;
	c.vocab = 16;
	c.n_ctx = 16;
	c.pad_id = PAD;
	c.bos_id = c.dec_start_id = SEP;
	gb_train_defaults(&o);
	o.schedule = GB_SCHED_NOAM;
	o.warmup = 50;
	o.lr = (float)(5e-3 * sqrt(50.0)); /* peaks at 5e-3 at step 50 */
	o.threads = 2;
	if (gb_model_init(&m, &c, 5, 0.1f, &err) || gb_trainer_init(&t, &m, &o, &err)) {
		tap_ok(0, "encdec: set up (%s)", err.msg);
		return;
	}
	enum { B = 32, N = 6 };
	int src[B * N], in[B * N], tg[B * N];
	gb_batch b = { B, N, in, tg, N, src };
	gb_step_stats st, first = { 0 };
	int rc = 0;
	double t0 = now();
	for (int s = 0; s < 300 && !rc; s++) {
		for (int i = 0; i < B; i++) {
			int len = 3 + gb_rng_below(&t.rng, N - 3); /* 3..5 symbols, padded to 6 */
			for (int j = 0; j < N; j++) {
				src[i * N + j] = j < len ? gb_rng_below(&t.rng, SYM) : PAD;
				in[i * N + j] = j == 0 ? SEP : j <= len ? src[i * N + j - 1] : PAD;
				tg[i * N + j] = j < len ? src[i * N + j] : j == len ? SEP : -1;
			}
		}
		rc = gb_train_step(&t, &b, &st, &err);
		if (s == 0)
			first = st;
	}
	if (rc)
		tap_diag("%s", err.msg);
	tap_ok(!rc && st.loss < 0.3 * first.loss,
	       "encoder-decoder, 2+2 layers, post-LN, noam schedule: copy loss %.3f -> %.3f in 300 steps (%.1f s, "
	       "%.0f%% accuracy)", first.loss, st.loss, now() - t0, 100.0 * st.correct / st.tokens);
	gb_trainer_free(&t);
	gb_model_free(&m);
}

static void t_schedules(void)
{
	gb_train_opts o;
	gb_train_defaults(&o);
	o.lr = 2.0f;
	o.schedule = GB_SCHED_NOAM;
	o.warmup = 400;
	double a = gb_train_lr(&o, 400), b = gb_train_lr(&o, 100), c = gb_train_lr(&o, 1600);
	tap_ok(fabs(a - 2.0 / 20) < 1e-12 && fabs(b - 2.0 * 100 / 8000) < 1e-12 && fabs(c - 2.0 / 40) < 1e-12,
	       "noam: lr0 min(step^-0.5, step warmup^-1.5): %.4g at 100, %.4g at 400 (peak), %.4g at 1600", b, a, c);
	o.schedule = GB_SCHED_COSINE;
	o.warmup = 10;
	o.total_steps = 110;
	o.lr_min = 0.2f;
	double w = gb_train_lr(&o, 5), p = gb_train_lr(&o, 10), h = gb_train_lr(&o, 60), e = gb_train_lr(&o, 110),
	       z = gb_train_lr(&o, 500);
	tap_ok(fabs(w - 1.0) < 1e-6 && fabs(p - 2.0) < 1e-6 && fabs(h - 1.1) < 1e-6 && fabs(e - 0.2) < 1e-6 &&
	       fabs(z - 0.2) < 1e-6, "cosine: warm-up %.3g at 5, peak %.3g at 10, %.3g halfway, floor %.3g at the end "
	       "and after", w, p, h, e);
	/* a schedule that ends inside its warm-up (a short run, then resumed further): the
	 * warm-up's rate up to the end, then the floor, not the rest of the warm-up */
	o.total_steps = 6;
	double a6 = gb_train_lr(&o, 6), a7 = gb_train_lr(&o, 7), a10 = gb_train_lr(&o, 10), a99 = gb_train_lr(&o, 99);
	tap_ok(a6 == 2.0 * 6 / 10 && a7 == (float)0.2f && a10 == (float)0.2f && a99 == (float)0.2f,
	       "cosine ending at 6 inside a warm-up of 10: %.3g at 6, floor %.3g at 7, %.3g at 10, %.3g at 99", a6, a7, a10,
	       a99);
}

/* Weight decay applies to weight matrices only, unless asked. */
static void t_decay(void)
{
	gb_config c;
	gb_model m;
	gb_trainer t;
	gb_train_opts o;
	gb_err err;
	lm_config(&c, 32);
	gb_train_defaults(&o);
	gb_model_init(&m, &c, 1, 0.02f, &err);
	gb_trainer_init(&t, &m, &o, &err);
	int wrong = 0, decayed = 0;
	for (int i = 0; i < m.n_params; i++) {
		const char *n = m.params[i].name;
		int want = !strstr(n, "wte") && !strstr(n, "wpe") && !strstr(n, "bias") && !strstr(n, "ln_");
		decayed += t.decay[i];
		if (t.decay[i] != want) {
			tap_diag("decay of %s is %d", n, t.decay[i]);
			wrong++;
		}
	}
	tap_ok(!wrong, "weight decay on the %d weight matrices only, of %d tensors: not on embeddings, biases, norm "
	       "gains", decayed, m.n_params);
	gb_trainer_free(&t);
	gb_model_free(&m);
}

int main(void)
{
	char dir[] = "tests/tmp/train.XXXXXX";
	mkdir("tests/tmp", 0777);
	if (!mkdtemp(dir)) {
		printf("1..0 # SKIP cannot make %s\n", dir);
		return 0;
	}
	t_schedules();
	t_decay();
	t_copy();
	t_determinism();
	t_resume(dir);
	t_divergence();
	t_padding();
	t_encdec();
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd))
		tap_diag("could not remove %s", dir);
	return tap_done();
}
