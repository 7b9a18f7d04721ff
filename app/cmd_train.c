/* cmd_train.c — `train --preset NAME | --corpus FILE`, `eval DIR` and `curves DIR`. Training
 * shows a progress bar on a terminal and plain log lines otherwise, checkpoints the model
 * folder as it goes (so a stopped run resumes with --resume), keeps the loss curves with the
 * model (loss.csv) and writes the model's README.md with the command, the time and the probes.
 * A resume keeps the checkpoint's schedule and reads its loss curves back. */
#include "app/cmd.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "app/bench.h"
#include "model/train/corpus.h"
#include "model/train/eval.h"
#include "model/fileio.h"
#include "model/heads.h"
#include "model/train/recipe.h"
#include "viz/export.h"

static int exists(const char *p)
{
	struct stat st;
	return !stat(p, &st);
}

static void print_probes(FILE *f, const gb_probe_score *rows, int n, int markdown)
{
	if (markdown)
		fprintf(f, "| probe | accuracy | bar | probes |\n|---|---|---|---|\n");
	for (int i = 0; i < n; i++) {
		if (markdown)
			fprintf(f, "| %s | %.1f%% | %.0f%% | %d |\n", rows[i].name, 100 * rows[i].acc, 100 * rows[i].bar, rows[i].n);
		else
			fprintf(f, "  %-34s %6.1f%%   (bar %.0f%%, %d probes)%s\n", rows[i].name, 100 * rows[i].acc,
			        100 * rows[i].bar, rows[i].n, rows[i].acc >= rows[i].bar ? "" : "  BELOW THE BAR");
	}
}

/* The head table of a model: markdown for its README, or aligned text (md 0) for eval. */
static int head_table(const gb_model *m, FILE *f, int md, gb_err *err)
{
	const gb_config *c = &m->cfg;
	int L = c->n_layer, H = c->n_head;
	if (c->encdec) {
		float *mono = malloc(sizeof(float) * (size_t)L * H);
		int rc = gb_eval_cross(m, gb_kernels_fast(), mono, err);
		if (!rc) {
			fprintf(f, "How monotone each cross-attention head's alignment is on 50 held-out dates (the share\n"
			           "of output steps whose most-attended input position does not move back):\n\n");
			fprintf(f, md ? "| layer | head | monotone |\n|---|---|---|\n" : "layer head  monotone\n");
			for (int i = 0; i < L * H; i++)
				fprintf(f, md ? "| %d | %d | %.3f |\n" : "%5d %4d  %8.3f\n", i / H + 1, i % H + 1, (double)mono[i]);
		}
		free(mono);
		return rc;
	}
	gb_head_score *sc = malloc(sizeof *sc * (size_t)L * H);
	int rc = gb_eval_heads(m, gb_kernels_fast(), sc, err);
	if (!rc) {
		fprintf(f, "Mean attention weight to the previous token, the first token and itself on 40 held-out\n"
		           "documents; then, on 50 random runs of 24 tokens seen twice, the weight on the previous\n"
		           "token (a head that looks back one token whatever the tokens are) and the induction score\n"
		           "(from each token of the second copy to the token that followed it the first time):\n\n");
		print_head_scores(f, sc, L, H, md, "                 on held-out text           on random runs\n");
	}
	free(sc);
	return rc;
}

typedef struct curve {
	int step;
	double train, held, lr;
} curve;

/* A growing list of curve points. */
typedef struct curves {
	curve *c;
	int n, cap;
} curves;

static int curves_add(curves *v, curve p)
{
	if (v->n == v->cap) {
		int cap = v->cap ? 2 * v->cap : 64;
		curve *c = realloc(v->c, sizeof *c * (size_t)cap);
		if (!c)
			return -1;
		v->c = c;
		v->cap = cap;
	}
	v->c[v->n++] = p;
	return 0;
}

/* The loss curves as a figure, drawn by the same backends as every other figure. */
static gb_figure *curves_figure(const curve *c, int n)
{
	float *x = malloc(sizeof(float) * (size_t)n), *tr = malloc(sizeof(float) * (size_t)n),
	      *he = malloc(sizeof(float) * (size_t)n);
	for (int i = 0; i < n; i++) {
		x[i] = (float)c[i].step;
		tr[i] = (float)c[i].train;
		he[i] = (float)c[i].held;
	}
	gb_figure *f = gb_fig_new(GB_FIG_LINES);
	gb_fig_set_xs(f, x, n);
	gb_fig_add_series(f, "train", tr, n);
	gb_fig_add_series(f, "held-out", he, n);
	gb_fig_set_title(f, "Training: cross-entropy per token");
	gb_fig_set_caption(f, "train: mean over the steps since the last point; held-out: 8 fixed batches");
	gb_fig_set_axes(f, "loss", "step");
	free(x);
	free(tr);
	free(he);
	return f;
}

/* loss.png beside loss.csv. */
static void write_curves_png(const char *dir, const curve *c, int n)
{
	if (n < 2)
		return;
	gb_figure *f = curves_figure(c, n);
	char path[1200];
	snprintf(path, sizeof path, "%s/loss.png", dir);
	gb_export_opts o = { 0 };
	o.force = 1;
	o.version = GLASSBOX_VERSION;
	gb_verr verr;
	if (gb_export(f, path, &o, &verr))
		fprintf(stderr, "glassbox: note: %s (the numbers are in loss.csv)\n", verr.msg);
	gb_fig_free(f);
}

int cmd_curves(session *s, int argc, char **argv, const char *rest)
{
	if (argc != 2) {
		errorf("usage: curves DIR");
		return -1;
	}
	char dir[1024], path[1200];
	resolve_model(argv[1], dir, sizeof dir);
	snprintf(path, sizeof path, "%s/loss.csv", dir);
	gb_err err;
	char *text = gb_read_file(path, 64u << 20, NULL, &err);
	if (!text) {
		errorf("%s", err.msg);
		return -1;
	}
	curves v = { 0 };
	for (char *line = strchr(text, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
		curve p;
		if (sscanf(line + 1, "%d,%lf,%lf,%lf", &p.step, &p.train, &p.held, &p.lr) != 4)
			continue;
		if (curves_add(&v, p)) {
			errorf("%s: out of memory", path);
			free(text);
			free(v.c);
			return -1;
		}
	}
	free(text);
	if (v.n < 2) {
		errorf("%s: fewer than two points of step,train_loss,heldout_loss,lr", path);
		free(v.c);
		return -1;
	}
	int rc = show_figure(s, curves_figure(v.c, v.n));
	free(v.c);
	return rc;
}

/* On a resume, the curves so far: the rows of DIR/loss.csv up to the checkpoint's step (a
 * checkpoint and its loss.csv are written together, so these are the points of every earlier
 * part of the run). A missing or damaged file is said in one line and gives an empty curve:
 * the record is worth keeping, never worth refusing a resume for. */
static void resume_curves(const char *dir, long upto, curves *v)
{
	static const char head[] = "step,train_loss,heldout_loss,lr\n";
	char path[1200];
	gb_err err;
	snprintf(path, sizeof path, "%s/loss.csv", dir);
	v->n = 0;
	char *text = gb_read_file(path, 64u << 20, NULL, &err);
	if (!text) {
		fprintf(stderr, "glassbox: note: %s: the loss curves start again after step %ld\n", err.msg, upto);
		return;
	}
	int line = 1, bad = strncmp(text, head, sizeof head - 1) != 0, later = 0;
	for (char *p = text + sizeof head - 1; !bad && *p; p++) {
		char *nl = strchr(p, '\n');
		curve c;
		int used = 0;
		line++;
		if (nl)
			*nl = 0;
		bad = !nl || sscanf(p, "%d,%lf,%lf,%lf%n", &c.step, &c.train, &c.held, &c.lr, &used) != 4 || p[used] ||
		      c.step < 1 || (v->n && c.step <= v->c[v->n - 1].step) || (later && c.step <= later);
		if (bad)
			break;
		if (c.step > upto)
			later = c.step; /* after the checkpoint: not part of the run being resumed */
		else if (curves_add(v, c)) {
			bad = 1;
			break;
		}
		p = nl;
	}
	free(text);
	if (bad) {
		v->n = 0;
		if (line == 1)
			fprintf(stderr, "glassbox: note: %s does not start with \"step,train_loss,heldout_loss,lr\": the loss "
			        "curves start again after step %ld\n", path, upto);
		else
			fprintf(stderr, "glassbox: note: %s: line %d is damaged (not step,train_loss,heldout_loss,lr with a "
			        "step after the one before): the loss curves start again after step %ld\n", path, line, upto);
	} else if (later)
		fprintf(stderr, "glassbox: note: %s has rows after the checkpoint's step %ld: left out\n", path, upto);
}

static int write_curves(const char *dir, const curve *c, int n, gb_err *err)
{
	char path[1200];
	snprintf(path, sizeof path, "%s/loss.csv", dir);
	gb_file w;
	if (gb_file_begin(&w, path, err))
		return -1;
	fprintf(w.f, "step,train_loss,heldout_loss,lr\n");
	for (int i = 0; i < n; i++)
		fprintf(w.f, "%d,%.6f,%.6f,%.8g\n", c[i].step, c[i].train, c[i].held, c[i].lr);
	return gb_file_commit(&w, err);
}

/* Whether the held-out loss ended clearly above its lowest point (a model that has begun to
 * memorize its training text): 1, with the lowest point's step and loss. */
static int overfit(const curve *c, int n, int *best_step, double *best)
{
	int b = -1;
	for (int i = 0; i < n; i++)
		if (isfinite(c[i].held) && (b < 0 || c[i].held < c[b].held))
			b = i;
	if (b < 0 || b == n - 1 || !isfinite(c[n - 1].held) || c[n - 1].held <= 1.05 * c[b].held)
		return 0;
	*best_step = c[b].step;
	*best = c[b].held;
	return 1;
}

static int write_readme(const char *dir, const gb_recipe *r, const gb_model *m, const char *command,
                        double seconds, const curve *c, int n_curve, const gb_probe_score *rows, int n_rows, gb_err *err)
{
	char path[1200];
	snprintf(path, sizeof path, "%s/README.md", dir);
	gb_file w;
	if (gb_file_begin(&w, path, err))
		return -1;
	FILE *f = w.f;
	const gb_config *k = &m->cfg;
	fprintf(f, "# %s\n\n", r->name);
	if (!strcmp(r->name, "corpus"))
		fprintf(f, "A decoder-only model (GPT-2 layout: pre-norm LayerNorm, tanh GELU, learned positions,\n"
		           "tied output), %d layers x %d heads, d_model %d, context %d, byte-level BPE of %d tokens\n"
		           "learned on the teacher's text named in the command below (its last 5%% held out).\n\n",
		        k->n_layer, k->n_head, k->d_model, k->n_ctx, k->vocab);
	else if (k->encdec)
		fprintf(f, "An encoder-decoder in the textbook's original layout (post-norm, sinusoidal positions, ReLU,\n"
		           "embeddings scaled by sqrt(d_model)), %d + %d layers x %d heads, d_model %d, FFN %d,\n"
		           "character-level (bytes plus <s>, </s>, <pad>), trained to translate dates written in\n"
		           "twelve forms (\"3 March 2021\", \"03/03/2021\", \"Wednesday, Mar 3 2021\", ...) into ISO\n"
		           "\"2021-03-03\". The data is generated by glassbox (model/train/corpus.c); held-out dates never\n"
		           "appear in training in any form.\n\n", k->n_enc_layer, k->n_layer, k->n_head, k->d_model, k->d_ffn);
	else {
		/* the layout in words, from the config: tiny-lm's, or a variant's */
		char pos[96], attn[96] = "", ffn[128];
		if (k->pos == GB_POS_T5)
			snprintf(pos, sizeof pos, "T5's learned relative bias (%d buckets, max distance %d)", k->rel_buckets,
			         k->rel_max_dist);
		else
			snprintf(pos, sizeof pos, "%s positions", gb_pos_name(k->pos));
		if (k->attn_kind == GB_ATTN_LINEAR)
			snprintf(attn, sizeof attn, ", linear attention (elu + 1)");
		else if (k->n_kv_head != k->n_head || k->window)
			snprintf(attn, sizeof attn, ", %d key/value heads%s", k->n_kv_head, k->window ? ", a window of" : "");
		if (k->window)
			snprintf(attn + strlen(attn), sizeof attn - strlen(attn), " %d", k->window);
		if (k->n_experts)
			snprintf(ffn, sizeof ffn, "%d %s experts of width %d, top-%d (%s gates)", k->n_experts,
			         gb_act_name(k->act, k->ffn), k->d_ffn, k->top_k, k->norm_topk ? "renormalised" : "Switch's");
		else
			snprintf(ffn, sizeof ffn, "%s, FFN %d", gb_act_name(k->act, k->ffn), k->d_ffn);
		fprintf(f, "A decoder-only model in GPT-2's layout:\n%s-norm %s, %s, %s%s, tied output;\n%d layers x %d "
		           "heads, d_model %d, context %d, byte-level BPE of %d tokens, trained on a small generated English\n"
		           "world (model/train/corpus.c): sentences whose next word depends on something attention must\n"
		           "fetch (agreement across attractors, pronoun gender, the indirect object, possession look-ups,\n"
		           "repeated runs). The held-out probes use combinations of names, objects and orders never seen\n"
		           "in training.\n\n",
		        k->prenorm ? "pre" : "post", k->norm == GB_NORM_RMS ? "RMSNorm" : "LayerNorm", ffn, pos, attn,
		        k->n_layer, k->n_head, k->d_model, k->n_ctx, k->vocab);
		const char *sets, *what;
		for (int i = 0; gb_recipe_variant_info(i, &sets, &what); i++) {
			if (strcmp(gb_recipe_variant_info(i, NULL, NULL), r->name))
				continue;
			fprintf(f, "tiny-lm's variant with %s:\ntiny-lm's recipe with `", what);
			for (const char *a = sets; *a;) { /* each assignment its own --set */
				size_t n = strcspn(a, " ");
				fprintf(f, "%s--set %.*s", a == sets ? "" : " ", (int)n, a);
				a += n + (a[n] == ' ');
			}
			fprintf(f, "`, the same corpus, vocabulary and training.\n\n");
		}
	}
	if (!k->encdec && (r->extra_bytes || r->induction_frac > 0))
		fprintf(f, "The training text is %.0f MB of the world with all five tasks plus %.0f MB of agreement and\n"
		           "possession alone (the two the model found hardest); %.0f%% of the training sequences are\n"
		           "instead a random run of 8 to 40 tokens repeated to the end (only the repeats are scored),\n"
		           "the setting in which induction heads form. Half of all sequences begin with the\n"
		           "end-of-text token, as the probes' prompts do, and half with the text itself, as a sentence\n"
		           "typed at the prompt does.\n\n",
		        r->corpus_bytes / 1048576.0, r->extra_bytes / 1048576.0, 100.0 * r->induction_frac);
	fprintf(f, "## Training\n\n    %s\n\n", command);
	long last = n_curve ? c[n_curve - 1].step : 0;
	char ends[64] = "";
	if (r->opts.schedule == GB_SCHED_COSINE && r->opts.total_steps != last)
		snprintf(ends, sizeof ends, " ending at step %d", r->opts.total_steps);
	fprintf(f, "%ld steps of %d %s, %s schedule%s, peak rate %g, %.1f minutes on this machine (%d threads).\n", last,
	        r->batch, k->encdec ? "date pairs" : "sequences of 128 tokens",
	        r->opts.schedule == GB_SCHED_NOAM ? "the textbook's warm-up" : "warm-up and cosine", ends, (double)r->opts.lr,
	        seconds / 60, gb_kernels_threads());
	if (n_curve)
		fprintf(f, "Final losses: train %.4f, held-out %.4f (cross-entropy per token%s). The curves are in loss.csv and loss.png.\n\n",
		        c[n_curve - 1].train, c[n_curve - 1].held, r->opts.label_smoothing > 0 ? ", label smoothing 0.1 in the train loss" : "");
	int bs;
	double bl;
	if (n_curve && overfit(c, n_curve, &bs, &bl))
		fprintf(f, "The held-out loss was lowest at step %d (%.4f) and then rose: the model began to memorize its\n"
		           "training text. Fewer steps, or more text, would generalize better.\n\n", bs, bl);
	if (!strcmp(r->name, "corpus")) /* the probes test the generated world, not this text */
		return gb_file_commit(&w, err);
	fprintf(f, "## Probes (`glassbox eval`)\n\n");
	print_probes(f, rows, n_rows, 1);
	fprintf(f, "\n## Heads (`heads`)\n\n");
	if (head_table(m, f, 1, err)) {
		gb_file_abort(&w);
		return -1;
	}
	return gb_file_commit(&w, err);
}

/* Mean held-out loss over a fixed set of batches (a fixed generator, so every evaluation
 * sees the same batches). */
static double heldout_loss(gb_trainer *t, const gb_recipe *r, const gb_dataset *held, gb_batch_buf *buf, gb_err *err)
{
	gb_rng rng;
	gb_rng_seed(&rng, 4242);
	double sum = 0;
	long n = 0;
	for (int i = 0; i < 8; i++) {
		gb_batch b;
		gb_step_stats st;
		if (gb_recipe_batch(r, held, &rng, buf, &b, err) || gb_train_eval(t, &b, &st, err))
			return NAN;
		sum += st.loss * st.tokens;
		n += st.tokens;
	}
	return n ? sum / n : NAN;
}

static void progress(int tty, int step, int steps, double loss, double held, double tok_s, double left, double aux)
{
	char h[64] = "-"; /* none yet: the first held-out evaluation comes at eval_every */
	if (!isnan(held))
		snprintf(h, sizeof h, "%.4f", held);
	if (aux > 0) /* a mixture of experts: its load-balancing loss (near 1 a layer when balanced) */
		snprintf(h + strlen(h), sizeof h - strlen(h), "  balance %.3f", aux);
	if (tty) {
		int w = 30, fill = (int)((double)step / steps * w);
		char bar[64];
		for (int i = 0; i < w; i++)
			bar[i] = i < fill ? '#' : '.';
		bar[w] = 0;
		printf("\r[%s] step %d/%d  loss %.4f  held-out %s  %.0f tokens/s  %dm%02ds left ", bar, step, steps, loss, h,
		       tok_s, (int)(left / 60), (int)fmod(left, 60));
	} else {
		printf("step %d/%d loss %.4f held-out %s tokens/s %.0f left %.0fs\n", step, steps, loss, h, tok_s, left);
	}
	fflush(stdout);
}

int cmd_train(session *s, int argc, char **argv, const char *rest)
{
	const char *preset = NULL, *corpus = NULL, *out = NULL, *sets[64];
	int steps = -1, force = 0, resume = 0, n_sets = 0;
	interrupted = 0; /* from here on, Ctrl-C stops the run (and is not lost while the data is prepared) */
	for (int i = 1; i < argc; i++) {
		int more = i + 1 < argc;
		if (!strcmp(argv[i], "--preset") && more)
			preset = argv[++i];
		else if (!strcmp(argv[i], "--corpus") && more)
			corpus = argv[++i];
		else if (!strcmp(argv[i], "--out") && more)
			out = argv[++i];
		else if (!strcmp(argv[i], "--steps") && more) {
			char *end;
			long v = strtol(argv[++i], &end, 10);
			if (*end || v < 1 || v > 10000000) {
				errorf("--steps must be a whole number from 1 to 10000000");
				return -1;
			}
			steps = (int)v;
		} else if (!strcmp(argv[i], "--set") && more) {
			if (n_sets == 64) {
				errorf("--set: at most 64 assignments");
				return -1;
			}
			sets[n_sets++] = argv[++i];
		} else if (!strcmp(argv[i], "--force"))
			force = 1;
		else if (!strcmp(argv[i], "--resume"))
			resume = 1;
		else {
			errorf("usage: train --preset NAME | --corpus FILE.txt  [--set FIELD=VALUE]... [--out DIR] [--steps N] "
			       "[--force] [--resume]  (help train lists the presets and fields)");
			return -1;
		}
	}
	if (!preset == !corpus) {
		errorf("train needs one of --preset NAME (tiny-lm, tiny-mt, tiny-lm-rope, ...: help train lists them) or "
		       "--corpus FILE.txt");
		return -1;
	}
	gb_recipe r;
	gb_err err;
	if (preset ? gb_recipe_preset(&r, preset, &err) : 0) {
		errorf("%s", err.msg);
		return -1;
	}
	char *text = NULL;
	size_t len = 0;
	if (corpus) {
		text = gb_read_file(corpus, 512u << 20, &len, &err);
		if (!text) {
			errorf("%s", err.msg);
			return -1;
		}
		/* Binary files have NUL bytes or many bytes that are not UTF-8. */
		size_t nul = 0, bad = 0;
		for (size_t i = 0; i < len;) {
			unsigned char ch = (unsigned char)text[i];
			int n = ch < 0x80 ? 1 : (ch & 0xe0) == 0xc0 ? 2 : (ch & 0xf0) == 0xe0 ? 3 : (ch & 0xf8) == 0xf0 ? 4 : 0;
			int ok = n > 0 && i + (size_t)n <= len;
			for (int k = 1; ok && k < n; k++)
				ok = ((unsigned char)text[i + k] & 0xc0) == 0x80;
			nul += ch == 0;
			bad += !ok;
			i += ok ? (size_t)n : 1;
		}
		if (len == 0 || nul || bad > len / 100) {
			errorf("%s: %s; train needs plain UTF-8 text", corpus,
			       !len ? "is empty" : nul ? "looks binary (it has NUL bytes)" : "is not UTF-8 text");
			free(text);
			return -1;
		}
		if (gb_recipe_for_text(&r, len, &err)) {
			errorf("%s", err.msg);
			free(text);
			return -1;
		}
	}
	/* --set FIELD=VALUE, in order, then the whole recipe checked once (a later assignment may
	 * mend what an earlier one left inconsistent) */
	for (int i = 0; i < n_sets; i++)
		if (gb_recipe_set(&r, sets[i], &err)) {
			errorf("%s", err.msg);
			free(text);
			return -1;
		}
	if (n_sets && gb_recipe_check(&r, &err)) {
		errorf("%s", err.msg);
		free(text);
		return -1;
	}
	if (steps > 0) {
		r.steps = steps;
		if (r.opts.schedule == GB_SCHED_COSINE)
			r.opts.total_steps = steps;
	}
	if (!out)
		out = preset ? preset : "my-model";
	if (exists(out) && !force && !resume) {
		errorf("%s already exists: choose another --out, add --force to replace it, or --resume to continue it", out);
		free(text);
		return -1;
	}
	/* A resume keeps the checkpoint's schedule (its cosine total): the run goes on to where
	 * the schedule ends, or stops at --steps, with the learning rates of the uninterrupted
	 * run either way (after the schedule's end, its floor). */
	int from_checkpoint = resume && exists(out);
	if (from_checkpoint) {
		char path[1200];
		gb_checkpoint_info ck;
		snprintf(path, sizeof path, "%s/optimizer.safetensors", out);
		if (!exists(path)) {
			errorf("%s has no checkpoint to resume (no optimizer.safetensors): choose another --out, or add --force "
			       "without --resume to replace it", out);
			free(text);
			return -1;
		}
		if (gb_train_checkpoint_info(out, &ck, &err)) {
			errorf("%s", err.msg);
			free(text);
			return -1;
		}
		if (ck.total_steps >= 0)
			r.opts.total_steps = ck.total_steps;
		if (steps < 0 && ck.total_steps > 0)
			r.steps = ck.total_steps;
		if (ck.step >= r.steps) {
			if (steps > 0)
				printf(ck.step > steps ? "%s is already at step %ld, past --steps %d: nothing to train\n"
				                       : "%s is already at step %ld (--steps %d): nothing to train\n",
				       out, ck.step, steps);
			else if (ck.step > r.steps)
				printf("%s is already at step %ld, past the end of its schedule (step %d): nothing to train (add "
				       "--steps N to go on at its floor rate)\n", out, ck.step, r.steps);
			else
				printf("%s is already at step %ld, where its schedule ends: nothing to train (add --steps N to go on "
				       "at its floor rate)\n", out, ck.step);
			free(text);
			return 0;
		}
		if (steps > 0 && r.opts.schedule == GB_SCHED_COSINE && ck.total_steps > 0 && steps != ck.total_steps) {
			if (steps > ck.total_steps)
				printf("keeping the checkpoint's schedule: cosine down to step %d, then its floor rate %g to step %d\n",
				       ck.total_steps, (double)r.opts.lr_min, steps);
			else
				printf("keeping the checkpoint's schedule (cosine down to step %d): stopping at step %d, before it ends\n",
				       ck.total_steps, steps);
		}
	} else if (resume)
		printf("%s does not exist yet: starting a new run there\n", out);
	int tty = isatty(1);
	printf("preparing the data for %s...\n", r.name);
	fflush(stdout);
	gb_tokenizer *tok;
	gb_dataset train, held;
	if (gb_recipe_data(&r, text, len, &tok, &train, &held, &err)) {
		errorf("%s%s%s", corpus ? corpus : "", corpus ? ": " : "", err.msg);
		free(text);
		return -1;
	}
	free(text);
	if (gb_tok_vocab_size(tok) != r.cfg.vocab) { /* a small text supports fewer tokens */
		printf("the text supports a vocabulary of %d tokens (not %d): using that\n", gb_tok_vocab_size(tok), r.cfg.vocab);
		r.vocab = r.cfg.vocab = gb_tok_vocab_size(tok);
		r.cfg.bos_id = r.cfg.eos_id = r.cfg.vocab - 1;
	}
	gb_model m;
	gb_trainer t;
	int rc = -1;
	memset(&t, 0, sizeof t);
	if (from_checkpoint) {
		if (gb_model_load(&m, out, &err)) {
			errorf("%s", err.msg);
			goto out_data;
		}
	} else if (gb_model_init(&m, &r.cfg, r.opts.seed, 0.02f, &err)) {
		errorf("%s", err.msg);
		goto out_data;
	}
	if (m.tok)
		gb_tok_free(m.tok);
	m.tok = tok;
	tok = NULL;
	if (gb_trainer_init(&t, &m, &r.opts, &err) || (from_checkpoint && gb_train_resume(&t, out, &err))) {
		errorf("%s", err.msg);
		goto out_model;
	}
	r.opts.total_steps = t.o.total_steps; /* the checkpoint's (gb_train_resume), for the README */
	if (interrupted) { /* a cancel, not a result: a script must not go on as if trained */
		errorf("stopped by Ctrl-C before the first step: nothing was written");
		rc = -1;
		goto out_model;
	}
	curves cv = { 0 };
	if (t.step)
		resume_curves(out, t.step, &cv);
	char command[2048], resumed[64] = "";
	size_t cl = (size_t)snprintf(command, sizeof command, "glassbox train %s%s", preset ? "--preset " : "--corpus ",
	                             preset ? preset : corpus);
	for (int i = 0; i < n_sets && cl < sizeof command; i++)
		cl += (size_t)snprintf(command + cl, sizeof command - cl, " --set %s", sets[i]);
	if (cl < sizeof command)
		snprintf(command + cl, sizeof command - cl, " --out %s --steps %d", out, r.steps);
	if (t.step)
		snprintf(resumed, sizeof resumed, " (resumed at step %ld)", t.step);
	printf("training %s: %zu parameters, %d steps of %d, %d threads%s\n", r.name, m.n_weights, r.steps, r.batch,
	       gb_kernels_threads(), resumed);
	fflush(stdout);
	gb_batch_buf buf = { 0 }, hbuf = { 0 };
	double t0 = bench_now(), tokens = 0, run_loss = 0, held_l = NAN, before = t.seconds; /* earlier parts' time */
	long first = t.step, last_saved = t.step;
	int run_n = 0;
	rc = 0;
	while (t.step < r.steps) {
		gb_batch b;
		gb_step_stats st;
		if (gb_recipe_batch(&r, &train, &t.rng, &buf, &b, &err)) {
			errorf("%s", err.msg);
			rc = -1;
			break;
		}
		if (gb_train_step(&t, &b, &st, &err)) {
			if (st.diverged)
				errorf("training diverged at step %ld (%s): stopped; %s holds the checkpoint of step %ld", t.step + 1,
				       err.msg, out, last_saved);
			else
				errorf("%s", err.msg);
			rc = -1;
			break;
		}
		tokens += st.tokens;
		run_loss += st.loss;
		run_n++;
		int done = t.step >= r.steps, stop = interrupted;
		/* a point at every eval_every steps, at the end, and where the run is stopped (so
		 * the steps since the last point are in the curve that the resume reads back) */
		if (t.step % r.eval_every == 0 || done || stop) {
			held_l = heldout_loss(&t, &r, &held, &hbuf, &err);
			if (curves_add(&cv, (curve){ (int)t.step, run_loss / run_n, held_l, st.lr })) {
				errorf("out of memory for the loss curves");
				rc = -1;
				break;
			}
			run_loss = 0;
			run_n = 0;
		}
		if (t.step % 50 == 0 || done) {
			/* the time left from the pace of this run's steps (not those before a resume) */
			double el = bench_now() - t0;
			progress(tty, (int)t.step, r.steps, cv.n ? cv.c[cv.n - 1].train : st.loss, held_l, tokens / el,
			         el / (double)(t.step - first) * (r.steps - t.step), st.aux);
		}
		if (t.step % r.save_every == 0 || done || stop) {
			t.seconds = before + (bench_now() - t0);
			if (gb_train_save(&t, out, &err) || write_curves(out, cv.c, cv.n, &err)) {
				errorf("%s", err.msg);
				rc = -1;
				break;
			}
			last_saved = t.step;
		}
		if (stop) {
			printf("\nstopped at step %ld; the checkpoint is in %s (continue with --resume)\n", t.step, out);
			break;
		}
	}
	double seconds = bench_now() - t0;
	if (tty)
		printf("\n");
	if (rc == 0 && t.step >= r.steps) {
		if (before > 0) /* a resumed run: the README gives the whole training time */
			printf("trained in %.1f minutes (%.1f in this run)%s\n", (before + seconds) / 60, seconds / 60,
			       strcmp(r.name, "corpus") ? "; measuring the probes..." : "");
		else
			printf("trained in %.1f minutes%s\n", seconds / 60, strcmp(r.name, "corpus") ? "; measuring the probes..." : "");
		seconds += before;
		fflush(stdout);
		gb_probe_score rows[8];
		int n_rows = 0, corpus_model = !strcmp(r.name, "corpus");
		if ((!corpus_model && gb_eval_model(&m, gb_kernels_fast(), m.cfg.encdec ? 500 : 300, rows, &n_rows, &err)) ||
		    write_readme(out, &r, &m, command, seconds, cv.c, cv.n, rows, n_rows, &err)) {
			errorf("%s", err.msg);
			rc = -1;
		} else {
			print_probes(stdout, rows, n_rows, 0);
			write_curves_png(out, cv.c, cv.n);
			printf("wrote %s (config.json, model.safetensors, tokenizer.json, loss.csv%s, README.md)\n", out,
			       cv.n >= 2 ? ", loss.png" : "");
			int bs;
			double bl;
			if (overfit(cv.c, cv.n, &bs, &bl))
				printf("note: the held-out loss was lowest at step %d (%.4f) and ended at %.4f: the model began to\n"
				       "memorize its training text; --steps %d, or more text, would generalize better\n",
				       bs, bl, cv.c[cv.n - 1].held, bs);
		}
	}
	free(cv.c);
	gb_batch_buf_free(&buf);
	gb_batch_buf_free(&hbuf);
out_model:
	gb_trainer_free(&t);
	gb_model_free(&m);
out_data:
	gb_tok_free(tok);
	gb_dataset_free(&train);
	gb_dataset_free(&held);
	return rc;
}

/* eval DIR --preset NAME: the held-out loss of the model as stored (bf16 weights included,
 * widened exactly) on the batches training measured it on: the preset's generated text and
 * the same fixed generator as heldout_loss. */
static int eval_loss(gb_model *m, const char *preset, gb_recipe r, gb_err *err)
{
	gb_tokenizer *tok;
	gb_dataset train, held;
	if (gb_recipe_data(&r, NULL, 0, &tok, &train, &held, err))
		return -1;
	int rc = -1;
	if (gb_tok_vocab_size(tok) != m->cfg.vocab)
		gb_fail(err, "the preset %s has a vocabulary of %d tokens, the model %d: not the preset it was trained by",
		        preset, gb_tok_vocab_size(tok), m->cfg.vocab);
	else if (!gb_model_make_writable(m, err)) {
		gb_trainer t;
		gb_batch_buf buf = { 0 };
		memset(&t, 0, sizeof t);
		if (!gb_trainer_init(&t, m, &r.opts, err)) {
			double l = heldout_loss(&t, &r, &held, &buf, err);
			if (isfinite(l)) {
				printf("  held-out loss on %s's held-out batches: %.4f\n", preset, l);
				rc = 0;
			}
		}
		gb_trainer_free(&t);
		gb_batch_buf_free(&buf);
	}
	gb_tok_free(tok);
	gb_dataset_free(&train);
	gb_dataset_free(&held);
	return rc;
}

int cmd_eval(session *s, int argc, char **argv, const char *rest)
{
	const char *preset = NULL;
	if (argc == 4 && !strcmp(argv[2], "--preset"))
		preset = argv[3];
	else if (argc != 2) {
		errorf("usage: eval DIR [--preset NAME]");
		return -1;
	}
	gb_model m;
	gb_err err;
	char path[1024];
	resolve_model(argv[1], path, sizeof path);
	if (gb_model_load(&m, path, &err)) {
		errorf("%s", err.msg);
		return -1;
	}
	if (!m.tok) {
		errorf("%s has no tokenizer: the probes are text", argv[1]);
		gb_model_free(&m);
		return -1;
	}
	gb_recipe r;
	if (preset && (gb_recipe_preset(&r, preset, &err) ||
	               (r.cfg.vocab != m.cfg.vocab &&
	                gb_fail(&err, "the preset %s has a vocabulary of %d tokens, the model %d: not the preset it was "
	                        "trained by", preset, r.cfg.vocab, m.cfg.vocab)))) {
		errorf("%s", err.msg);
		gb_model_free(&m);
		return -1;
	}
	gb_probe_score rows[8];
	int n;
	int rc = gb_eval_model(&m, gb_kernels_fast(), m.cfg.encdec ? 500 : 300, rows, &n, &err);
	if (rc)
		errorf("%s", err.msg);
	else {
		printf("%s on held-out data:\n", argv[1]);
		print_probes(stdout, rows, n, 0);
		printf("\n");
		if ((rc = head_table(&m, stdout, 0, &err)))
			errorf("%s", err.msg);
	}
	if (!rc && preset && (rc = eval_loss(&m, preset, r, &err)))
		errorf("%s", err.msg);
	gb_model_free(&m);
	return rc;
}
