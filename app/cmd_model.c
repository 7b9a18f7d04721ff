/* cmd_model.c — the model and the machine: `models` (the shipped ones), `load`, `info` (the
 * architecture, and the table of sizes and costs), `init` (a random model folder), `set`
 * (engine, threads, palette, colours, the textbook's layer norm) and `bench`. */
#include "app/cmd.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/bench_forward.h"
#include "app/view19.h"
#include "model/formats/llama2c.h"
#include "model/tokenizer/tokenizer.h"
#include "model/train/recipe.h"
#include "viz/colormap.h"

/* The user's model gallery: $XDG_DATA_HOME/glassbox/models, or ~/.local/share/glassbox/models. */
int user_models_dir(char *out, size_t cap)
{
	const char *x = getenv("XDG_DATA_HOME"), *h = getenv("HOME");
	if (x && x[0] == '/') /* the XDG spec ignores a relative path */
		snprintf(out, cap, "%s/glassbox/models", x);
	else if (h && *h)
		snprintf(out, cap, "%s/.local/share/glassbox/models", h);
	else
		return -1;
	return 0;
}

static void count_text(char *buf, size_t cap, double n)
{
	if (n >= 1e9)
		snprintf(buf, cap, "%.2fB", n / 1e9);
	else if (n >= 1e6)
		snprintf(buf, cap, "%.1fM", n / 1e6);
	else if (n >= 1e3)
		snprintf(buf, cap, "%.1fK", n / 1e3);
	else
		snprintf(buf, cap, "%.0f", n);
}

/* A gallery entry: a folder, or a llama2.c .bin that is not a tokenizer. */
static int gallery_entry(const struct dirent *e)
{
	size_t l = strlen(e->d_name);
	if (e->d_name[0] == '.')
		return 0;
	if (l > 4 && !strcmp(e->d_name + l - 4, ".bin"))
		return strcmp(e->d_name, "tokenizer.bin") != 0;
	return 1; /* folders; plain files are weeded out by the caller */
}

static void gallery(const char *dir)
{
	struct dirent **list;
	int n = scandir(dir, &list, gallery_entry, alphasort);
	if (n < 0) {
		printf("your models: none yet. Put a model folder (config.json, model.safetensors, tokenizer.json) or a\n"
		       "llama2.c checkpoint with its tokenizer.bin in %s\n", dir);
		return;
	}
	printf("your models (in %s):\n", dir);
	int shown = 0, ok = 0;
	for (int i = 0; i < n; i++) {
		char p[1400];
		struct stat st;
		snprintf(p, sizeof p, "%s/%s", dir, list[i]->d_name);
		if (stat(p, &st) || (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) ||
		    (S_ISREG(st.st_mode) && !strstr(list[i]->d_name, ".bin"))) {
			free(list[i]);
			continue;
		}
		gb_model_summary sm;
		gb_err err;
		shown++;
		if (gb_model_check(p, &sm, &err)) {
			/* The path is in the line already: drop it from the message. */
			const char *msg = !strncmp(err.msg, p, strlen(p)) ? err.msg + strlen(p) : err.msg;
			if (*msg == '/')
				msg++;
			else if (*msg == ':')
				msg += 2;
			printf("  %-20s does not load: %s\n", list[i]->d_name, msg);
		} else {
			const gb_config *c = &sm.cfg;
			char params[32], size[32];
			count_text(params, sizeof params, (double)sm.n_weights);
			count_text(size, sizeof size, (double)sm.bytes);
			printf("  %-20s %s, %d layers, d_model %d, %s parameters (%s, %sB)\n", list[i]->d_name,
			       gb_config_type_name(c), c->n_layer, c->d_model, params, sm.format, size);
			printf("  %-20s tokenizer: %s; ok\n", "", sm.tokenizer);
			ok++;
		}
		free(list[i]);
	}
	free(list);
	if (!shown)
		printf("  (none yet: put a model folder or a llama2.c checkpoint with its tokenizer.bin here)\n");
	if (ok)
		printf("  (ok: the files pass every check load makes but the scan of the weights for NaN and infinity)\n");
}

int cmd_models(session *s, int argc, char **argv, const char *rest)
{
	if (argc != 1)
		return usage(argv[0]);
	char dir[600];
	if (models_dir(dir, sizeof dir)) {
		printf("no shipped models found (looked beside the program and in %s/models)\n", GLASSBOX_DATADIR);
	} else {
		const char *names[] = { "tiny-lm", "tiny-mt" };
		const char *what[] = { "decoder-only, 4 layers x 4 heads, trained on a small English world",
		                       "encoder-decoder (the textbook's layout), 2 + 2 layers, translates dates" };
		printf("shipped models (in %s):\n", dir);
		for (int i = 0; i < 2; i++) {
			char p[1200];
			struct stat st;
			snprintf(p, sizeof p, "%s/%s/model.safetensors", dir, names[i]);
			printf("  %-8s %s%s\n", names[i], what[i], stat(p, &st) ? "  (missing)" : "");
		}
		/* tiny-lm's trained variants, each tiny-lm with one choice changed (train --preset NAME
		 * makes one); those not shipped are recipes only. */
		int shipped = 0, recipes = 0;
		const char *name, *info;
		for (int i = 0; (name = gb_recipe_variant_info(i, NULL, &info)); i++) {
			char p[1200];
			struct stat st;
			snprintf(p, sizeof p, "%s/%s/model.safetensors", dir, name);
			if (stat(p, &st)) {
				recipes++;
				continue;
			}
			if (!shipped++)
				printf("tiny-lm's variants, each with one choice changed:\n");
			printf("  %-18s %s\n", name, info);
		}
		if (recipes)
			printf("  (%d more variant%s can be trained: help train lists them)\n", recipes, recipes == 1 ? "" : "s");
	}
	if (!user_models_dir(dir, sizeof dir))
		gallery(dir);
	printf("load one with: load NAME\n");
	return 0;
}

/* A model argument resolved and loaded: a folder, a shipped name or a llama2.c file (with
 * its tokenizer when given); -1 after an error line. */
int load_model(const char *arg, const char *tokenizer, gb_model *m)
{
	gb_err err;
	char path[1024], user[700];
	struct stat st;
	resolve_model(arg, path, sizeof path);
	/* A name from the user's gallery (`models`), when it is not a path or a shipped model. */
	if (stat(path, &st) && !strchr(arg, '/') && !user_models_dir(user, sizeof user)) {
		char p[1024];
		if (snprintf(p, sizeof p, "%s/%s", user, arg) < (int)sizeof p && !stat(p, &st))
			memcpy(path, p, sizeof path);
	}
	if (tokenizer && (stat(path, &st) || !S_ISREG(st.st_mode))) {
		errorf("--tokenizer is for a llama2.c checkpoint (a .bin file); %s is not one", arg);
		return -1;
	}
	int rc = tokenizer ? gb_model_load_llama2c(m, path, tokenizer, &err) : gb_model_load(m, path, &err);
	if (rc)
		errorf("%s", err.msg);
	return rc;
}

int cmd_load(session *s, int argc, char **argv, const char *rest)
{
	const char *what = NULL, *tokenizer = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--tokenizer") && i + 1 < argc)
			tokenizer = argv[++i];
		else if (argv[i][0] != '-' && !what)
			what = argv[i];
		else
			return usage(argv[0]);
	}
	if (!what)
		return usage(argv[0]);
	gb_model m;
	if (load_model(what, tokenizer, &m))
		return -1; /* the model loaded before stays */
	if (s->loaded)
		gb_model_free(&s->model);
	s->model = m;
	gb_model_moved(&s->model, &m);
	s->loaded = 1;
	s->have_run = 0;
	s->on_show = 0;
	s->ctx_trained = 0;
	gb_fig_free(s->fig); /* the old model's figure must not be exported as this one's */
	gb_fig_free(s->prev_fig);
	s->prev_fig = NULL;
	s->fig = NULL;
	if (s->interactive)
		printf("loaded %s: %s, %zu parameters\n", what, gb_config_type_name(&m.cfg), m.n_weights);
	return 0;
}

/* export-model ... --safetensors OUTDIR: a model folder, F32 or with its matrices BF16. */
static int export_folder(session *s, gb_model *m, const char *out, int bf16, int force)
{
	gb_err err;
	static const char *const files[] = { "config.json", "model.safetensors", "tokenizer.json" };
	for (int i = 0; i < 3 && !force; i++) {
		char path[1200];
		snprintf(path, sizeof path, "%s/%s", out, files[i]);
		if (!access(path, F_OK)) {
			errorf("%s exists (add --force to replace it)", path);
			return -1;
		}
	}
	if (gb_model_save_as(m, out, bf16, &err)) {
		errorf("%s", err.msg);
		return -1;
	}
	if (s->interactive)
		printf("wrote %s: model.safetensors (%s), config.json%s, %zu parameters\n", out,
		       bf16 ? "matrices bf16, vectors f32" : "f32", m->tok ? ", tokenizer.json" : "", m->n_weights);
	return 0;
}

int cmd_export_model(session *s, int argc, char **argv, const char *rest)
{
	const char *what = NULL, *out = NULL, *folder = NULL, *dtype = NULL;
	int version = 0, force = 0, have_version = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--llama2c") && i + 1 < argc)
			out = argv[++i];
		else if (!strcmp(argv[i], "--safetensors") && i + 1 < argc)
			folder = argv[++i];
		else if (!strcmp(argv[i], "--dtype") && i + 1 < argc)
			dtype = argv[++i];
		else if (!strcmp(argv[i], "--force"))
			force = 1;
		else if (!strcmp(argv[i], "--version") && i + 1 < argc) {
			if (parse_int(argv[++i], 0, 2, &version, "the llama2.c version"))
				return -1;
			have_version = 1;
		} else if (argv[i][0] != '-' && !what)
			what = argv[i];
		else
			return usage(argv[0]);
	}
	if (!what || !out == !folder || (out && (dtype || force)) || (folder && have_version))
		return usage(argv[0]);
	if (dtype && strcmp(dtype, "f32") && strcmp(dtype, "bf16")) {
		errorf("export-model: --dtype is f32 or bf16, not '%s'", dtype);
		return -1;
	}
	gb_model m;
	gb_err err;
	if (load_model(what, NULL, &m))
		return -1;
	if (folder) {
		int rc = export_folder(s, &m, folder, dtype && !strcmp(dtype, "bf16"), force);
		gb_model_free(&m);
		return rc;
	}
	/* llama2.c files hold floats: 16-bit weights are widened first (exactly). Only then: a
	 * copy would drop what a llama2.c file was loaded from (its Q8_0 values, its freq_cis),
	 * which the writer gives back as they were. */
	int wide = 0;
	for (int i = 0; i < m.n_params; i++)
		wide |= !m.params[i].data;
	int rc = wide && gb_model_make_writable(&m, &err) ? -1 : gb_llama2c_write(&m, out, version, &err);
	if (rc)
		errorf("%s", err.msg);
	else if (s->interactive)
		printf("wrote %s: llama2.c %s, %zu parameters\n", out,
		       version == 2 ? "version 2 (Q8_0)" : version ? "version 1" : "legacy", m.n_weights);
	gb_model_free(&m);
	return rc;
}

/* What `info` prints: the model's lines, the table's parameter columns, its cost column. */
enum { INFO_MODEL = 1, INFO_PARAMS = 2, INFO_COST = 4 };

static void info_row(int what_cols, const char *what, long per, long count, const char *cost)
{
	char p[24];
	if (per > 0)
		snprintf(p, sizeof p, "%ld", per);
	else
		snprintf(p, sizeof p, "-");
	printf("  %-36s", what);
	if (what_cols & INFO_PARAMS)
		printf(" %10s %6ld %11ld", p, count, per > 0 ? per * count : 0);
	if (what_cols & INFO_COST)
		printf("   %s", cost);
	printf("\n");
}

/* A line of the model's description: its key in 12 columns, its value wrapped at spaces to
 * INFO_COLS columns, the lines after the first indented under the value (so a slide shows
 * the listing at the size of its prose: 86 columns of 18 px monospace on its 1600 px). */
#define INFO_COLS 86
static void info_kv(const char *key, const char *fmt, ...)
{
	char v[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v, sizeof v, fmt, ap);
	va_end(ap);
	const int room = INFO_COLS - 12;
	const char *p = v;
	printf("%-12s", key);
	for (;;) {
		size_t n = strlen(p);
		if ((int)n <= room) {
			printf("%s\n", p);
			break;
		}
		int cut = room;
		while (cut > room / 2 && p[cut] != ' ')
			cut--;
		if (p[cut] != ' ') /* a word longer than half the room: cut it where it must be */
			cut = room;
		printf("%.*s\n%12s", cut, p, "");
		p += cut + (p[cut] == ' ');
	}
}

/* The textbook's table of sub-layers with the loaded model's numbers: parameters from the
 * sizes (their total is checked against the weights), costs as multiply-adds for the current
 * text (m tokens; an encoder-decoder's decoder has n), projections included. */
static void info_table(session *s, int cols)
{
	const gb_config *c = &s->model.cfg;
	long d = c->d_model, f = c->d_ffn, H = c->n_head, K = c->n_kv_head, E = c->d_head, V = c->vocab;
	long m = s->have_run ? s->trace.n_ids : c->n_ctx;
	long n = c->encdec ? (s->have_run ? s->trace.n_tgt : c->n_ctx) : m;
	long proj = d * H * E + 2 * d * K * E + H * E * d;
	long attn = proj + (c->bias || c->qkv_bias ? H * E + 2 * K * E : 0) + (c->bias ? d : 0);
	int gated = c->ffn == GB_FFN_GATED;
	long ffn_w = (gated ? 3 : 2) * d * f, ffn = ffn_w + (c->ffn_bias ? (gated ? 2 * f : f) + d : 0);
	long X = c->n_experts, kx = X ? c->top_k : 1;
	if (X) { /* X experts of the FFN's shape and a router; a token runs top_k of them */
		ffn = X * ffn + d * X;
		ffn_w = kx * ffn_w + d * X;
	}
	long norm = c->norm == GB_NORM_LAYER && c->norm_bias ? 2 * d : d;
	long L = c->n_layer, Le = c->n_enc_layer;
	long norms = (c->encdec ? 2 * Le + 3 * L : 2 * L) + (c->final_norm ? (c->encdec ? 2 : 1) : 0);
	long total = 0;
	char cost[160];
	/* The cost labels are the exact formulas of the numbers beside them (d_h is d_head, k the
	 * key/value heads); before any run they are for a full context. */
	int std = H * E == d && K == H;
	const char *pm = std ? "4 m d^2" : "m d (2 h d_h + 2 k d_h)", *pn = std ? "4 n d^2" : "n d (2 h d_h + 2 k d_h)";
	const char *sm = H * E == d ? "2 m^2 d" : "2 m^2 h d_h", *sn = H * E == d ? "2 n^2 d" : "2 n^2 h d_h";
	const char *fm = gated ? "3 m d d_ffn" : "2 m d d_ffn", *fn = gated ? "3 n d d_ffn" : "2 n d d_ffn";
	char head[120];
	if (c->encdec)
		snprintf(head, sizeof head, "multiply-adds (m = %ld source, n = %ld target%s)", m, n,
		         s->have_run ? "" : ": full context");
	else if (s->have_run)
		snprintf(head, sizeof head, "multiply-adds for this text (m = %ld)", m);
	else
		snprintf(head, sizeof head, "multiply-adds for a full context (m = %ld)", m);
	printf("  %-36s", "module");
	if (cols & INFO_PARAMS)
		printf(" %10s %6s %11s", "parameters", "count", "total");
	if (cols & INFO_COST)
		printf("   %s", head);
	printf("\n");
	info_row(cols, "token embedding (V x d)", V * d, 1, "a row look-up per token");
	total += V * d;
	if (c->pos == GB_POS_LEARNED) {
		info_row(cols, "learned positions (C x d)", c->n_ctx * d, c->encdec ? 2 : 1, "a row look-up per token");
		total += c->n_ctx * d * (c->encdec ? 2 : 1);
	}
	const char *an = K == H ? "self-attention (4 d^2 + biases)" : "self-attention (grouped k, v)";
	if (c->encdec) {
		snprintf(cost, sizeof cost, "%ld (%s) + %ld (%s)", m * proj, pm, 2 * m * m * H * E, sm);
		info_row(cols, "encoder self-attention", attn, Le, cost);
		snprintf(cost, sizeof cost, "%ld (%s) + %ld (%s)", n * proj, pn, 2 * n * n * H * E, sn);
		info_row(cols, "decoder self-attention (masked)", attn, L, cost);
		snprintf(cost, sizeof cost, "%ld (projections) + %ld (2 m n d)", n * 2 * d * H * E + m * 2 * d * K * E,
		         2 * m * n * H * E);
		info_row(cols, "cross-attention (4 d^2 + biases)", attn, L, cost);
		total += attn * (Le + 2 * L);
		snprintf(cost, sizeof cost, "%ld (%s) / %ld (%s)", m * ffn_w, fm, n * ffn_w, fn);
		info_row(cols, X ? "mixture of experts (E FFNs + router)" : gated ? "feed-forward (3 d d_ffn, gated)"
		                                                          : "feed-forward (2 d d_ffn + d + d_ffn)", ffn, Le + L, cost);
		total += ffn * (Le + L);
	} else {
		snprintf(cost, sizeof cost, "%ld (%s) + %ld (%s)", m * proj, pm, 2 * m * m * H * E, sm);
		info_row(cols, an, attn, L, cost);
		if (X)
			snprintf(cost, sizeof cost, "%ld (m (%ld x %s + d E): top-%ld of %ld experts)", m * ffn_w, kx,
			         gated ? "3 d d_ffn" : "2 d d_ffn", kx, X);
		else
			snprintf(cost, sizeof cost, "%ld (%s)", m * ffn_w, fm);
		info_row(cols, X ? "mixture of experts (E FFNs + router)" : gated ? "feed-forward (3 d d_ffn, gated)"
		                                                          : "feed-forward (2 d d_ffn + d + d_ffn)", ffn, L, cost);
		total += (attn + ffn) * L;
	}
	if (c->pos == GB_POS_T5) {
		info_row(cols, "T5 relative bias (buckets x heads)", (long)c->rel_buckets * H, L + Le,
		         "a look-up per query and key, added to the score");
		total += (long)c->rel_buckets * H * (L + Le);
	}
	info_row(cols, c->norm == GB_NORM_RMS ? "RMS norm (d)" : "layer norm (2d)", norm, norms,
	         c->encdec ? "2 per encoder layer, 3 per decoder layer" : "2 per layer, and the final one");
	total += norm * norms;
	snprintf(cost, sizeof cost, "%ld (%s d V)", (c->encdec ? n : m) * d * V, c->encdec ? "n" : "m");
	info_row(cols, c->tied ? "output projection (tied: shares E)" : "output projection (V x d)", c->tied ? 0 : V * d, 1, cost);
	total += c->tied ? 0 : V * d;
	if (cols & INFO_PARAMS)
		printf("  %-36s %10s %6s %11ld%s\n", "total", "", "", total,
	       total == (long)s->model.n_weights ? "" : "   (does not match the weights: please report)");
}

/* The model's description, a line a property (info_kv). */
static void info_model(session *s)
{
	const gb_config *c = &s->model.cfg;
	info_kv("model", "%s", s->model.dir[0] ? s->model.dir : "(in memory)");
	if (c->qwen2)
		info_kv("family", "qwen2 (decoder-only; Llama's layout with biases on q, k and v, none on o)");
	else
		info_kv("family", "%s (%s)", gb_family_name(c->family), c->encdec ? "encoder-decoder" : "decoder-only");
	if (c->encdec)
		info_kv("layers", "%d encoder + %d decoder", c->n_enc_layer, c->n_layer);
	else
		info_kv("layers", "%d", c->n_layer);
	info_kv("width", "d_model %d, %d heads of %d (%d key/value head%s), FFN %d", c->d_model, c->n_head, c->d_head,
	        c->n_kv_head, c->n_kv_head == 1 ? "" : "s", c->d_ffn);
	info_kv("vocabulary", "%d, context %d", c->vocab, c->n_ctx);
	info_kv("norm", "%s, %s-norm%s, eps %g%s", gb_norm_name(c->norm), c->prenorm ? "pre" : "post",
	        c->final_norm ? ", final norm" : "", (double)c->norm_eps, c->textbook_ln ? ", textbook (sigma + eps)" : "");
	if (c->pos == GB_POS_ROPE)
		info_kv("positions", "rope, theta %g, %s", (double)c->rope_theta, c->rope_pairs == GB_ROPE_ADJACENT
		        ? "adjacent pairs (2f, 2f+1) rotate together (Meta's and llama2.c's layout)"
		        : "pairs (f, f + d_head/2) rotate together (rotate-half, Hugging Face's layout)");
	else if (c->pos == GB_POS_T5)
		info_kv("positions", "t5: a learned bias per head and offset bucket, added to the scores (%d buckets: "
		        "%d exact, then log-spaced to %d; each layer its own)", c->rel_buckets, c->rel_buckets / 2,
		        c->rel_max_dist);
	else
		info_kv("positions", "%s", gb_pos_name(c->pos));
	if (c->pos == GB_POS_ROPE && c->rope_scale == GB_ROPE_SCALE_LINEAR)
		info_kv("", "scaled (linear): every frequency / %g", (double)c->rope_factor);
	else if (c->pos == GB_POS_ROPE && c->rope_scale == GB_ROPE_SCALE_LLAMA3)
		info_kv("", "scaled (llama3): wavelengths over %g tokens / %g, under %g kept, a blend between "
		        "(trained context %d)", c->rope_orig_ctx / (double)c->rope_low, (double)c->rope_factor,
		        c->rope_orig_ctx / (double)c->rope_high, c->rope_orig_ctx);
	if (c->attn_kind == GB_ATTN_LINEAR)
		info_kv("attention", "linear: features elu(x) + 1, weights phi(q).phi(k) / their sum (no softmax); run "
		        "as running sums by the fast engine");
	if (c->window)
		info_kv("attention", "local window %d", c->window);
	info_kv("ffn", "%s, biases %s", gb_act_name(c->act, c->ffn), c->bias ? "yes" : "no");
	if (c->n_experts)
		info_kv("experts", "%d of width %d, top-%d per token, %s; load-balancing loss weight %g", c->n_experts,
		        c->d_ffn, c->top_k, c->norm_topk ? "gates renormalised over the chosen (Mixtral)"
		                                         : "gates the router's probabilities (Switch)", (double)c->aux_coef);
	info_kv("output", "%s", c->tied ? "tied to the embedding (scores are dot products with E's rows)"
	                                : "its own V x d matrix");
	info_kv("parameters", "%zu", s->model.n_weights);
	{ /* issue 19: what sharing keys and values saves while decoding (the cache holds floats) */
		long per = 2L * c->n_layer * c->n_kv_head * c->d_head * (long)sizeof(float);
		long mha = 2L * c->n_layer * c->n_head * c->d_head * (long)sizeof(float);
		char v[512];
		int n = snprintf(v, sizeof v, "%ld bytes per token (2 x %d layers x %d key/value heads x %d x 4 bytes)",
		                 per, c->n_layer, c->n_kv_head, c->d_head);
		if (c->n_kv_head != c->n_head)
			n += snprintf(v + n, sizeof v - n, "; %ld with a key/value head per query head (%dx)", mha,
			              c->n_head / c->n_kv_head);
		double all = per * (double)c->n_ctx;
		snprintf(v + n, sizeof v - n, "; %.1f %s for the context of %d%s", all >= 1e6 ? all / 1e6 : all / 1e3,
		         all >= 1e6 ? "MB" : "KB", c->n_ctx,
		         c->encdec ? ", plus the cross-attention's keys and values of the source" : "");
		info_kv("kv cache", "%s", v);
		if (c->attn_kind == GB_ATTN_LINEAR) /* what the recurrent form needs instead */
			info_kv("", "linear attention needs only its running state: %ld bytes (%d layers x %d key/value heads x "
			        "(%d x %d + %d) x 4), whatever the length", (long)c->n_layer * c->n_kv_head *
			        (c->d_head * c->d_head + c->d_head) * (long)sizeof(float), c->n_layer, c->n_kv_head, c->d_head,
			        c->d_head, c->d_head);
	}
	if (s->model.load_note[0])
		info_kv("loading", "%s", s->model.load_note);
	info_kv("engine", "%s", s->k->name);
}

int cmd_info(session *s, int argc, char **argv, const char *rest)
{
	(void)rest;
	int cols = INFO_MODEL | INFO_PARAMS | INFO_COST;
	if (argc == 2 && !strcmp(argv[1], "model"))
		cols = INFO_MODEL;
	else if (argc == 2 && !strcmp(argv[1], "params"))
		cols = INFO_PARAMS;
	else if (argc == 2 && !strcmp(argv[1], "cost"))
		cols = INFO_COST;
	else if (argc != 1)
		return usage(argv[0]);
	if (need_model(s))
		return -1;
	if (cols & INFO_MODEL)
		info_model(s);
	if (cols == (INFO_MODEL | INFO_PARAMS | INFO_COST))
		printf("\n");
	if (cols & (INFO_PARAMS | INFO_COST))
		info_table(s, cols);
	return 0;
}

/* A random model folder: a demo until trained models ship, and a fixture for tests. */
int cmd_init(session *s, int argc, char **argv, const char *rest)
{
	const char *dir = NULL, *preset = "gpt2";
	int seed = 1, force = 0;
	/* sizes: --dim --layers --heads --kv-heads --hidden --vocab --context (0: the preset's small
	 * default), so a bench can make a model of a real one's shape (GPT-2 small, Llama-110M) */
	static const char *const size_opt[] = { "--dim", "--layers", "--heads", "--kv-heads", "--hidden", "--vocab", "--context" };
	static const int size_max[] = { 16384, 256, 256, 256, 65536, 1 << 20, 1 << 16 };
	int size[7] = { 0 }, n_set = 0;
	const char *sets[32];
	for (int i = 1; i < argc; i++) {
		int k = 0;
		while (k < 7 && strcmp(argv[i], size_opt[k]))
			k++;
		if (k < 7) {
			if (i + 1 >= argc)
				return usage(argv[0]);
			if (parse_int(argv[++i], 1, size_max[k], &size[k], size_opt[k] + 2))
				return -1;
		} else if (!strcmp(argv[i], "--preset") && i + 1 < argc)
			preset = argv[++i];
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			if (parse_int(argv[++i], 0, 2000000000, &seed, "the seed"))
				return -1;
		} else if (!strcmp(argv[i], "--force"))
			force = 1;
		else if (!strcmp(argv[i], "--set") && i + 1 < argc && n_set < 32)
			sets[n_set++] = argv[++i]; /* issue 19: a random model of any variant */
		else if (argv[i][0] != '-' && !dir)
			dir = argv[i];
		else
			return usage(argv[0]);
	}
	if (!dir)
		return usage(argv[0]);
	struct stat st;
	if (!stat(dir, &st) && !force) {
		errorf("%s already exists: choose another folder, or add --force to overwrite", dir);
		return -1;
	}
	gb_config c;
	if (!strcmp(preset, "gpt2"))
		gb_config_defaults(&c, GB_FAM_GPT2);
	else if (!strcmp(preset, "llama"))
		gb_config_defaults(&c, GB_FAM_LLAMA);
	else if (!strcmp(preset, "encdec"))
		gb_config_defaults(&c, GB_FAM_ENCDEC);
	else {
		errorf("unknown preset '%s': gpt2, llama or encdec", preset);
		return -1;
	}
	c.d_model = 64;
	c.n_layer = 2;
	c.n_enc_layer = c.encdec ? 2 : 0;
	c.n_head = 4;
	c.n_kv_head = c.family == GB_FAM_LLAMA ? 2 : 4;
	c.d_head = 16;
	c.d_ffn = 256;
	c.n_ctx = 128;
	c.vocab = 257; /* the 256 bytes and one special token */
	c.bos_id = c.eos_id = c.dec_start_id = 256;
	if (size[0])
		c.d_model = size[0];
	if (size[1])
		c.n_layer = size[1], c.n_enc_layer = c.encdec ? size[1] : 0;
	if (size[2])
		c.n_head = size[2], c.n_kv_head = size[3] ? size[3] : size[2];
	else if (size[3])
		c.n_kv_head = size[3];
	if (size[4])
		c.d_ffn = size[4];
	else if (size[0])
		c.d_ffn = 4 * c.d_model;
	if (size[5])
		c.vocab = size[5];
	if (size[6])
		c.n_ctx = size[6];
	if (c.d_model % c.n_head) {
		errorf("--dim %d is not a multiple of the %d heads: each head takes d_model / heads features", c.d_model, c.n_head);
		return -1;
	}
	c.d_head = c.d_model / c.n_head;
	if (c.n_head % c.n_kv_head || (c.family != GB_FAM_LLAMA && c.n_kv_head != c.n_head)) {
		errorf(c.family == GB_FAM_LLAMA ? "--kv-heads %d must divide the %d heads" : "--kv-heads is for the llama preset (%d of %d)",
		       c.n_kv_head, c.n_head);
		return -1;
	}
	if (c.vocab < 257) {
		errorf("--vocab %d is too small: the byte tokenizer needs 257 ids (256 bytes and one special token)", c.vocab);
		return -1;
	}
	gb_model m;
	gb_err err;
	if (n_set) { /* the fields train --set knows, on this config (the recipe's others unused) */
		gb_recipe r;
		memset(&r, 0, sizeof r);
		r.cfg = c;
		r.seq = c.n_ctx;
		for (int i = 0; i < n_set; i++)
			if (gb_recipe_set(&r, sets[i], &err)) {
				errorf("%s", err.msg);
				return -1;
			}
		c = r.cfg;
		if (gb_config_check(&c, dir, &err)) {
			errorf("%s", err.msg);
			return -1;
		}
	}
	if (gb_model_init(&m, &c, (uint64_t)seed, 0.2f, &err)) {
		errorf("%s", err.msg);
		return -1;
	}
	const char *special = c.encdec ? "<s>" : "<|endoftext|>";
	int rc = gb_tok_new_bytes(&special, 1, &m.tok, &err);
	if (rc)
		errorf("cannot build the byte tokenizer: %s", err.msg);
	else if (gb_model_save(&m, dir, &err)) {
		errorf("%s", err.msg);
		rc = -1;
	}
	gb_model_free(&m);
	if (!rc && s->interactive)
		printf("wrote a random %s model to %s\n", preset, dir);
	return rc;
}

static int on_off(const char *v, int *out)
{
	if (!strcmp(v, "on") || !strcmp(v, "1") || !strcmp(v, "yes"))
		*out = 1;
	else if (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "no"))
		*out = 0;
	else {
		errorf("say on or off (got '%s')", v);
		return -1;
	}
	return 0;
}

int cmd_set(session *s, int argc, char **argv, const char *rest)
{
	if (argc >= 2 && !strcmp(argv[1], "mask")) /* issue 19: set mask window 4 */
		return set_mask(s, argc - 1, argv + 1);
	if (argc != 3)
		return usage(argv[0]);
	const char *k = argv[1], *v = argv[2];
	if (!strcmp(k, "engine")) {
		const gb_kernels *t = gb_kernels_by_name(v);
		if (!t) {
			errorf("unknown or unsupported engine '%s': ref, fast, scalar, avx2 or avx512", v);
			return -1;
		}
		s->k = t;
		s->engine_set = 1;
		return rerun(s);
	}
	if (!strcmp(k, "threads")) {
		int n;
		if (parse_int(v, 1, 64, &n, "threads"))
			return -1;
		gb_kernels_set_threads(n);
		return 0;
	}
	if (!strcmp(k, "palette")) {
		int c = gb_cmap_by_name(v);
		if (c < 0 && strcmp(v, "auto")) {
			errorf("unknown palette '%s': auto, viridis, magma, cividis, gray or coolwarm", v);
			return -1;
		}
		display_settings d = display_get(s);
		d.palette = c;
		display_set(s, &d);
		return 0;
	}
	if (!strcmp(k, "colors")) {
		static const char *names[] = { "plain", "16", "256", "truecolor" };
		display_settings d = display_get(s);
		for (int i = 0; i < 4; i++)
			if (!strcmp(v, names[i])) {
				d.depth = i;
				display_set(s, &d);
				return 0;
			}
		if (!strcmp(v, "auto")) {
			d.depth = -1;
			display_set(s, &d);
			return 0;
		}
		errorf("unknown colour depth '%s': auto, plain, 16, 256 or truecolor", v);
		return -1;
	}
	if (!strcmp(k, "textbook")) {
		if (on_off(v, &s->textbook))
			return -1;
		return rerun(s);
	}
	if (!strcmp(k, "context"))
		return set_context(s, v);
	errorf("unknown setting '%s': engine, threads, palette, colors, textbook, context or mask", k);
	return -1;
}

int cmd_bench(session *s, int argc, char **argv, const char *rest)
{
	return bench_main(stdout, argc - 1, argv + 1);
}
