/* commands.c — the command table and its handlers. The only place (with main.c) that prints
 * to the user: model/ and viz/ report through gb_err, and the handlers turn that into one line
 * on stderr. */
#include "app/commands.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/bench_forward.h"
#include "app/train_cmd.h"
#include "app/views.h"
#include "viz/cells.h"
#include "viz/export.h"
#include "viz/window.h"
#include "model/decode.h"
#include "model/heads.h"
#include "model/tokenizer.h"

/* Where the command being run came from ("-c line 2"), for error lines; "" at the prompt. */
static char err_where[160];

void errorf(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "glassbox: %s%s", err_where, err_where[0] ? ": " : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void session_init(session *s)
{
	memset(s, 0, sizeof *s);
	s->k = gb_kernels_fast();
	s->depth = -1;
	s->stage = ST_ATTN;
	s->layer = s->head = 1;
}

void session_free(session *s)
{
	if (s->loaded)
		gb_model_free(&s->model);
	gb_trace_free(&s->trace);
	if (s->win)
		gb_window_close(s->win);
	gb_fig_free(s->fig);
	free(s->text);
	free(s->target);
	memset(s, 0, sizeof *s);
}

/* ---- small helpers ---- */

static int need_model(session *s)
{
	if (s->loaded)
		return 0;
	errorf("no model loaded: try 'load DIR'");
	return -1;
}

static int need_run(session *s)
{
	if (need_model(s))
		return -1;
	if (s->have_run)
		return 0;
	errorf("nothing has run yet: try 'run TEXT'");
	return -1;
}

static int parse_int(const char *a, int lo, int hi, int *out, const char *what)
{
	char *end;
	errno = 0;
	long v = strtol(a, &end, 10);
	if (!*a || *end || errno || v < lo || v > hi) {
		errorf("%s must be a whole number from %d to %d (got '%s')", what, lo, hi, a);
		return -1;
	}
	*out = (int)v;
	return 0;
}

static int usage(const char *name)
{
	const command *c = command_find(name);
	errorf("usage: %s %s", c->name, c->usage);
	return -1;
}

/* Tokenizes text with the model's tokenizer into a malloc'd array. */
static int encode(session *s, const char *text, int **ids, int *n)
{
	gb_err err;
	if (!s->model.tok) {
		errorf("%s has no tokenizer (tokenizer.json): give token ids with 'run --ids N N ...'", s->model.dir);
		return -1;
	}
	if (gb_tok_encode(s->model.tok, text, strlen(text), 0, ids, n, NULL, &err)) {
		errorf("%s", err.msg);
		return -1;
	}
	return 0;
}

/* Runs the forward pass on ids (and tgt for an encoder-decoder) with the session's engine. */
static int forward(session *s, const int *ids, int n, const int *tgt, int n_tgt)
{
	gb_err err;
	gb_fwd_opts o = { 0 };
	o.k = s->k;
	s->have_run = 0;
	if (gb_forward(&s->model, ids, n, tgt, n_tgt, &s->trace, &o, &err)) {
		errorf("%s", err.msg);
		return -1;
	}
	s->have_run = 1;
	return 0;
}

/* ---- figures in the terminal ---- */

static int term_depth(session *s)
{
	if (s->depth >= 0)
		return s->depth;
	return gb_term_depth(getenv("COLORTERM"), getenv("TERM"), getenv("NO_COLOR"), isatty(1), 0);
}

/* The space a figure may take: the terminal's size at a prompt; for scripts and pipes,
 * $COLUMNS x $LINES or 120 x 80, so a whole 64-token map fits. */
static void term_size(int *w, int *h)
{
	struct winsize ws;
	const char *c = getenv("COLUMNS"), *l = getenv("LINES");
	*w = 120;
	*h = 80;
	if (isatty(1) && !ioctl(1, TIOCGWINSZ, &ws) && ws.ws_col > 0) {
		*w = ws.ws_col;
		*h = ws.ws_row > 3 ? ws.ws_row - 2 : ws.ws_row;
	}
	if (c && atoi(c) > 0)
		*w = atoi(c);
	if (l && atoi(l) > 0)
		*h = atoi(l);
}

/* Makes f the current figure and draws it on stdout. NULL (a view's error) fails. */
static int show(session *s, gb_figure *f)
{
	if (!f)
		return -1;
	gb_fig_free(s->fig);
	s->fig = f;
	int w, h, depth = term_depth(s);
	term_size(&w, &h);
	gb_grid g;
	gb_verr err;
	gb_cells_opts o;
	gb_cells_opts_default(&o, depth);
	char *text = NULL;
	size_t len = 0;
	int rc = gb_grid_init(&g, w, h, &err);
	if (!rc)
		rc = gb_cells_render(&g, 0, 0, w, h, f, &o, &err);
	if (!rc)
		rc = gb_cells_write(&g, depth, &text, &len, &err);
	if (rc)
		errorf("%s", err.msg);
	else
		fwrite(text, 1, len, stdout);
	free(text);
	gb_grid_free(&g);
	if (!rc && s->win && gb_window_show(s->win, f, &err))
		errorf("window: %s", err.msg);
	return rc;
}

/* Shows the view of a stage after recording it as the session's current one. */
static int show_stage(session *s, int stage, int layer, int head)
{
	gb_figure *f;
	int old[3] = { s->stage, s->layer, s->head };
	s->stage = stage;
	s->layer = layer;
	s->head = head;
	f = view_stage(s);
	if (!f) {
		s->stage = old[0], s->layer = old[1], s->head = old[2];
		return -1;
	}
	return show(s, f);
}

/* The window's keys: Left/Right change the head, Up/Down the layer, Tab the stage (Shift-Tab
 * back), q or Escape closes it. The terminal is left alone: the prompt keeps its line. */
void window_key(session *s, int key, int mods)
{
	int stage = s->stage, layer = s->layer, head = s->head, max_l = s->loaded ? s->model.cfg.n_layer : 1;
	int max_h = s->loaded ? s->model.cfg.n_head : 1;
	if (key == 'q' || key == GB_KEY_ESCAPE) {
		gb_window_close(s->win);
		s->win = NULL;
		return;
	}
	if (key == GB_KEY_LEFT && head > 1)
		head--;
	else if (key == GB_KEY_RIGHT && head < max_h)
		head++;
	else if (key == GB_KEY_UP && layer > 1)
		layer--;
	else if (key == GB_KEY_DOWN && layer < max_l)
		layer++;
	else if (key == GB_KEY_TAB)
		stage = (stage + ((mods & GB_MOD_SHIFT) ? ST_N - 1 : 1)) % ST_N;
	else
		return;
	if (stage == ST_CROSS && s->loaded && !s->model.cfg.encdec)
		stage = (mods & GB_MOD_SHIFT) ? ST_NEXT : ST_EMBED;
	if (!s->have_run)
		return;
	int old[3] = { s->stage, s->layer, s->head };
	s->stage = stage, s->layer = layer, s->head = head;
	gb_figure *f = view_stage(s);
	if (!f) {
		s->stage = old[0], s->layer = old[1], s->head = old[2];
		return;
	}
	gb_fig_free(s->fig);
	s->fig = f;
	gb_verr err;
	if (gb_window_show(s->win, f, &err))
		errorf("window: %s", err.msg);
}

/* Pumps the window's events; returns 1 while it is open. */
int window_pump(session *s)
{
	gb_window_event ev;
	while (s->win && gb_window_poll(s->win, &ev)) {
		if (ev.type == GB_WIN_CLOSE) {
			gb_window_close(s->win);
			s->win = NULL;
		} else if (ev.type == GB_WIN_KEY)
			window_key(s, ev.key, ev.mods);
	}
	return s->win != NULL;
}

static int cmd_window(session *s, int argc, char **argv, const char *rest)
{
	if (s->win) {
		gb_window_close(s->win);
		s->win = NULL;
		if (s->interactive)
			printf("window closed\n");
		return 0;
	}
	gb_verr err;
	s->win = gb_window_open("glassbox", 1280, 720, &err);
	if (!s->win) {
		errorf("%s", err.msg);
		return -1;
	}
	if (s->fig && gb_window_show(s->win, s->fig, &err))
		errorf("window: %s", err.msg);
	if (s->interactive)
		printf("window open: it shows every figure; in it, arrows change layer and head, Tab the stage, q closes it\n");
	return 0;
}

static int cmd_export(session *s, int argc, char **argv, const char *rest)
{
	const char *path = NULL;
	gb_export_opts o = { 0 };
	o.version = GLASSBOX_VERSION;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--force"))
			o.force = 1;
		else if (!strcmp(argv[i], "--scale") && i + 1 < argc) {
			char *end;
			o.scale = strtod(argv[++i], &end);
			if (*end || !(o.scale >= 0.25 && o.scale <= 8)) {
				errorf("--scale must be a number from 0.25 to 8 (got '%s')", argv[i]);
				return -1;
			}
		} else if (!strcmp(argv[i], "--size") && i + 1 < argc) {
			if (sscanf(argv[++i], "%dx%d", &o.width, &o.height) != 2 || o.width < 200 || o.height < 150 ||
			    o.width > 8000 || o.height > 8000) {
				errorf("--size must be WIDTHxHEIGHT in pixels, from 200x150 to 8000x8000 (got '%s')", argv[i]);
				return -1;
			}
		} else if (!path && argv[i][0] != '-')
			path = argv[i];
		else
			return usage(argv[0]);
	}
	if (!path)
		return usage(argv[0]);
	if (!s->fig) {
		errorf("there is no figure to export yet: show one first (e.g. 'attn 1 1')");
		return -1;
	}
	gb_verr err;
	if (gb_export(s->fig, path, &o, &err)) {
		errorf("%s", err.msg);
		return -1;
	}
	if (s->interactive)
		printf("wrote %s\n", path);
	return 0;
}

/* Reads "L H" (or just "L") as 1-based numbers; the view checks the ranges. */
static int layer_head(int argc, char **argv, int need, int *l, int *h)
{
	if (argc != 1 + need)
		return usage(argv[0]);
	if (parse_int(argv[1], -1000000, 1000000, l, "the layer"))
		return -1;
	if (need > 1 && parse_int(argv[2], -1000000, 1000000, h, "the head"))
		return -1;
	return 0;
}

static int cmd_attn(session *s, int argc, char **argv, const char *rest)
{
	int l, h;
	if (layer_head(argc, argv, 2, &l, &h))
		return -1;
	return show_stage(s, ST_ATTN, l, h);
}

static int cmd_scores(session *s, int argc, char **argv, const char *rest)
{
	int l, h;
	if (argc == 4 && (!strcmp(argv[3], "raw") || !strcmp(argv[3], "masked"))) {
		if (parse_int(argv[1], -1000000, 1000000, &l, "the layer") || parse_int(argv[2], -1000000, 1000000, &h, "the head"))
			return -1;
		return show(s, view_attention(s, !strcmp(argv[3], "raw") ? "scores" : "masked", l, h));
	}
	if (layer_head(argc, argv, 2, &l, &h))
		return -1;
	return show_stage(s, ST_SCORES, l, h);
}

static int cmd_cross(session *s, int argc, char **argv, const char *rest)
{
	int l, h;
	if (layer_head(argc, argv, 2, &l, &h))
		return -1;
	return show_stage(s, ST_CROSS, l, h);
}

static int cmd_qkv(session *s, int argc, char **argv, const char *rest)
{
	int l, h;
	if (layer_head(argc, argv, 2, &l, &h))
		return -1;
	return show_stage(s, ST_QKV, l, h);
}

static int cmd_ln(session *s, int argc, char **argv, const char *rest)
{
	int l, which = 1;
	if (argc == 3) {
		if (parse_int(argv[2], 1, 3, &which, "the norm (1, 2 or 3)"))
			return -1;
		argc = 2;
	}
	if (layer_head(argc, argv, 1, &l, NULL))
		return -1;
	return show(s, view_ln(s, l, which));
}

static int cmd_ffn(session *s, int argc, char **argv, const char *rest)
{
	int l;
	if (layer_head(argc, argv, 1, &l, NULL))
		return -1;
	return show_stage(s, ST_FFN, l, s->head);
}

static int cmd_embed(session *s, int argc, char **argv, const char *rest) { return show_stage(s, ST_EMBED, s->layer, s->head); }
static int cmd_model(session *s, int argc, char **argv, const char *rest) { return show(s, view_model(s)); }
static int cmd_resid(session *s, int argc, char **argv, const char *rest) { return show_stage(s, ST_RESID, s->layer, s->head); }

static int cmd_pe(session *s, int argc, char **argv, const char *rest)
{
	int dims[16], n = 0;
	for (int i = 1; i < argc; i++) {
		if (n == 16) {
			errorf("at most 16 dimensions at once");
			return -1;
		}
		if (parse_int(argv[i], 0, 1 << 20, &dims[n++], "a dimension"))
			return -1;
	}
	return show(s, view_pe(s, n ? dims : NULL, n));
}

static int cmd_next(session *s, int argc, char **argv, const char *rest)
{
	int k = 10;
	double temp = 1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--temp") && i + 1 < argc) {
			char *end;
			temp = strtod(argv[++i], &end);
			if (*end || !(temp > 0) || temp > 100) {
				errorf("--temp must be a number above 0 and at most 100 (got '%s')", argv[i]);
				return -1;
			}
		} else if (parse_int(argv[i], 1, 1000, &k, "the number of tokens to show"))
			return -1;
	}
	return show(s, view_next(s, k, temp));
}

static int cmd_show(session *s, int argc, char **argv, const char *rest)
{
	int idx = 0;
	if (argc < 2 || argc > 3)
		return usage(argv[0]);
	if (argc == 3 && parse_int(argv[2], 0, 1 << 20, &idx, "the index"))
		return -1;
	return show(s, view_tensor(s, argv[1], idx));
}

/* ---- handlers ---- */

static int cmd_help(session *s, int argc, char **argv, const char *rest)
{
	if (argc > 1) {
		const command *c = command_find(argv[1]);
		if (!c)
			return -1;
		printf("%s %s\n  %s\n", c->name, c->usage, c->help);
		if (c->more && *c->more)
			printf("\n%s\n", c->more);
		return 0;
	}
	printf("Commands (a unique prefix is enough; 'help CMD' says more):\n");
	for (const command *c = commands; c->name; c++) {
		char head[64];
		snprintf(head, sizeof head, "%s %s", c->name, c->usage);
		printf("  %-34s %s\n", head, c->help);
	}
	return 0;
}

/* Where the shipped models are: beside the program (a build tree: ./assets/models), or in
 * the installed data folder (PREFIX/share/glassbox/models, found from the program's own path
 * so `make install PREFIX=...` works without rebuilding). */
static int models_dir(char *out, size_t cap)
{
	char exe[512];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	struct stat st;
	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = 0;
		snprintf(out, cap, "%s/assets/models", exe);
		if (!stat(out, &st) && S_ISDIR(st.st_mode))
			return 0;
		snprintf(out, cap, "%s/../share/glassbox/models", exe);
		if (!stat(out, &st) && S_ISDIR(st.st_mode))
			return 0;
	}
	snprintf(out, cap, "%s/models", GLASSBOX_DATADIR);
	return !stat(out, &st) && S_ISDIR(st.st_mode) ? 0 : -1;
}

/* A model argument: a folder as given, or the name of a shipped model. */
static void resolve_model(const char *arg, char *out, size_t cap)
{
	struct stat st;
	char dir[600];
	snprintf(out, cap, "%s", arg);
	if (!stat(arg, &st) || strchr(arg, '/'))
		return;
	if (!models_dir(dir, sizeof dir)) {
		char p[700];
		snprintf(p, sizeof p, "%s/%s", dir, arg);
		if (!stat(p, &st))
			snprintf(out, cap, "%s", p);
	}
}

int session_load_default(session *s)
{
	char dir[600], p[700];
	if (models_dir(dir, sizeof dir))
		return -1;
	snprintf(p, sizeof p, "%s/tiny-lm", dir);
	gb_err err;
	gb_model m;
	if (gb_model_load(&m, p, &err))
		return -1;
	s->model = m;
	s->loaded = 1;
	return 0;
}

static int cmd_models(session *s, int argc, char **argv, const char *rest)
{
	char dir[600];
	if (models_dir(dir, sizeof dir)) {
		printf("no shipped models found (looked beside the program and in %s/models)\n", GLASSBOX_DATADIR);
		return 0;
	}
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
	printf("load one with: load NAME\n");
	return 0;
}

static int cmd_load(session *s, int argc, char **argv, const char *rest)
{
	if (argc != 2)
		return usage(argv[0]);
	gb_model m;
	gb_err err;
	char path[1024];
	resolve_model(argv[1], path, sizeof path);
	if (gb_model_load(&m, path, &err)) {
		errorf("%s", err.msg);
		return -1; /* the model loaded before stays */
	}
	if (s->loaded)
		gb_model_free(&s->model);
	s->model = m;
	s->loaded = 1;
	s->have_run = 0;
	if (s->interactive)
		printf("loaded %s: %s, %zu parameters\n", argv[1], gb_family_name(m.cfg.family), m.n_weights);
	return 0;
}

static void info_row(const char *what, long per, long count, const char *cost)
{
	char p[24];
	if (per > 0)
		snprintf(p, sizeof p, "%ld", per);
	else
		snprintf(p, sizeof p, "-");
	printf("  %-36s %10s %6ld %11ld   %s\n", what, p, count, per > 0 ? per * count : 0, cost);
}

/* The textbook's table of sub-layers with the loaded model's numbers: parameters from the
 * sizes (their total is checked against the weights), costs as multiply-adds for the current
 * text (m tokens; an encoder-decoder's decoder has n), projections included. */
static void info_table(session *s)
{
	const gb_config *c = &s->model.cfg;
	long d = c->d_model, f = c->d_ffn, H = c->n_head, K = c->n_kv_head, E = c->d_head, V = c->vocab;
	long m = s->have_run ? s->trace.n_ids : c->n_ctx;
	long n = c->encdec ? (s->have_run ? s->trace.n_tgt : c->n_ctx) : m;
	long proj = d * H * E + 2 * d * K * E + H * E * d;
	long attn = proj + (c->bias ? H * E + 2 * K * E + d : 0);
	int gated = c->ffn == GB_FFN_GATED;
	long ffn_w = (gated ? 3 : 2) * d * f, ffn = ffn_w + (c->ffn_bias ? (gated ? 2 * f : f) + d : 0);
	long norm = c->norm == GB_NORM_LAYER && c->norm_bias ? 2 * d : d;
	long L = c->n_layer, Le = c->n_enc_layer;
	long norms = (c->encdec ? 2 * Le + 3 * L : 2 * L) + (c->final_norm ? (c->encdec ? 2 : 1) : 0);
	long total = 0;
	char cost[160];
	printf("%-38s %10s %6s %11s   %s\n", "  module", "parameters", "count", "total",
	       c->encdec ? "multiply-adds (m source, n target tokens)" : "multiply-adds for the current text");
	info_row("token embedding (V x d)", V * d, 1, "a row look-up per token");
	total += V * d;
	if (c->pos == GB_POS_LEARNED) {
		info_row("learned positions (C x d)", c->n_ctx * d, c->encdec ? 2 : 1, "a row look-up per token");
		total += c->n_ctx * d * (c->encdec ? 2 : 1);
	}
	const char *an = K == H ? "self-attention (4 d^2 + biases)" : "self-attention (grouped k, v)";
	if (c->encdec) {
		snprintf(cost, sizeof cost, "%ld (m d^2) + %ld (m^2 d)", m * proj, 2 * m * m * H * E);
		info_row("encoder self-attention", attn, Le, cost);
		snprintf(cost, sizeof cost, "%ld (n d^2) + %ld (n^2 d)", n * proj, 2 * n * n * H * E);
		info_row("decoder self-attention (masked)", attn, L, cost);
		snprintf(cost, sizeof cost, "%ld (projections) + %ld (m n d)", n * 2 * d * H * E + m * 2 * d * K * E,
		         2 * m * n * H * E);
		info_row("cross-attention (4 d^2 + biases)", attn, L, cost);
		total += attn * (Le + 2 * L);
		snprintf(cost, sizeof cost, "%ld (m d d_ffn) / %ld (n d d_ffn)", m * ffn_w, n * ffn_w);
		info_row(gated ? "feed-forward (3 d d_ffn, gated)" : "feed-forward (2 d d_ffn + d + d_ffn)", ffn, Le + L, cost);
		total += ffn * (Le + L);
	} else {
		snprintf(cost, sizeof cost, "%ld (m d^2) + %ld (m^2 d)", m * proj, 2 * m * m * H * E);
		info_row(an, attn, L, cost);
		snprintf(cost, sizeof cost, "%ld (m d d_ffn)", m * ffn_w);
		info_row(gated ? "feed-forward (3 d d_ffn, gated)" : "feed-forward (2 d d_ffn + d + d_ffn)", ffn, L, cost);
		total += (attn + ffn) * L;
	}
	info_row(c->norm == GB_NORM_RMS ? "RMS norm (d)" : "layer norm (2d)", norm, norms,
	         c->encdec ? "2 per encoder layer, 3 per decoder layer" : "2 per layer, and the final one");
	total += norm * norms;
	snprintf(cost, sizeof cost, "%ld (%s d V)", (c->encdec ? n : m) * d * V, c->encdec ? "n" : "m");
	info_row(c->tied ? "output projection (tied: shares E)" : "output projection (V x d)", c->tied ? 0 : V * d, 1, cost);
	total += c->tied ? 0 : V * d;
	printf("  %-36s %10s %6s %11ld%s\n", "total", "", "", total,
	       total == (long)s->model.n_weights ? "" : "   (does not match the weights: please report)");
}

static int cmd_info(session *s, int argc, char **argv, const char *rest)
{
	if (need_model(s))
		return -1;
	const gb_config *c = &s->model.cfg;
	printf("model       %s\n", s->model.dir[0] ? s->model.dir : "(in memory)");
	printf("family      %s (%s)\n", gb_family_name(c->family), c->encdec ? "encoder-decoder" : "decoder-only");
	if (c->encdec)
		printf("layers      %d encoder + %d decoder\n", c->n_enc_layer, c->n_layer);
	else
		printf("layers      %d\n", c->n_layer);
	printf("width       d_model %d, %d heads of %d (%d key/value heads), FFN %d\n", c->d_model, c->n_head,
	       c->d_head, c->n_kv_head, c->d_ffn);
	printf("vocabulary  %d, context %d\n", c->vocab, c->n_ctx);
	printf("norm        %s, %s-norm%s, eps %g%s\n", gb_norm_name(c->norm), c->prenorm ? "pre" : "post",
	       c->final_norm ? ", final norm" : "", (double)c->norm_eps, c->textbook_ln ? ", textbook (sigma + eps)" : "");
	printf("positions   %s%s\n", gb_pos_name(c->pos), c->window ? "" : "");
	if (c->window)
		printf("attention   local window %d\n", c->window);
	printf("ffn         %s, biases %s, output %s\n", gb_act_name(c->act, c->ffn), c->bias ? "yes" : "no",
	       c->tied ? "tied to the embedding" : "separate");
	printf("parameters  %zu\n", s->model.n_weights);
	printf("engine      %s\n\n", s->k->name);

	info_table(s);
	return 0;
}

static int parse_ids(char **argv, int argc, int *i, int **ids, int *n)
{
	int cap = 16;
	*ids = malloc((size_t)cap * sizeof **ids);
	*n = 0;
	while (*i < argc && strncmp(argv[*i], "--", 2)) {
		int v;
		if (parse_int(argv[*i], 0, 100000000, &v, "a token id")) {
			free(*ids);
			*ids = NULL;
			return -1;
		}
		if (*n == cap)
			*ids = realloc(*ids, (size_t)(cap *= 2) * sizeof **ids);
		(*ids)[(*n)++] = v;
		(*i)++;
	}
	return 0;
}

static int cmd_run(session *s, int argc, char **argv, const char *rest)
{
	if (need_model(s))
		return -1;
	const gb_config *c = &s->model.cfg;
	int *ids = NULL, *tgt = NULL, n = 0, n_tgt = 0, rc = -1;
	if (argc > 1 && !strcmp(argv[1], "--ids")) {
		int i = 2;
		if (parse_ids(argv, argc, &i, &ids, &n))
			return -1;
		if (i < argc && !strcmp(argv[i], "--target-ids")) {
			i++;
			if (parse_ids(argv, argc, &i, &tgt, &n_tgt))
				goto out;
		}
		if (i < argc) {
			usage(argv[0]);
			goto out;
		}
	} else {
		if (!*rest) {
			errorf("run needs a text: run TEXT (or run --ids N N ...)");
			return -1;
		}
		if (encode(s, rest, &ids, &n))
			return -1;
		if (n == 0) {
			errorf("the text gave no tokens");
			goto out;
		}
		if (n > c->n_ctx) {
			fprintf(stderr, "glassbox: note: the text is %d tokens; kept the last %d (the context)\n", n, c->n_ctx);
			memmove(ids, ids + (n - c->n_ctx), (size_t)c->n_ctx * sizeof *ids);
			n = c->n_ctx;
		}
	}
	if (c->encdec && !tgt) {
		tgt = malloc(sizeof *tgt);
		tgt[0] = c->dec_start_id;
		n_tgt = 1;
	}
	if (!c->encdec && tgt) {
		errorf("--target-ids is for encoder-decoder models");
		goto out;
	}
	rc = forward(s, ids, n, tgt, n_tgt);
	if (!rc) {
		free(s->text);
		s->text = strdup(rest);
	}
out:
	free(ids);
	free(tgt);
	return rc;
}

/* Length of the valid UTF-8 sequence at b (n bytes left), or 0. */
static int utf8_len(const unsigned char *b, size_t n)
{
	int len = b[0] < 0x80 ? 1 : (b[0] & 0xe0) == 0xc0 ? 2 : (b[0] & 0xf0) == 0xe0 ? 3 : (b[0] & 0xf8) == 0xf0 ? 4 : 0;
	if (!len || (size_t)len > n || (len == 2 && b[0] < 0xc2))
		return 0;
	for (int i = 1; i < len; i++)
		if ((b[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

/* A token's bytes for the terminal: spaces as a middle dot, newlines as a return symbol,
 * other control bytes and bytes that are not whole UTF-8 characters as \xNN. */
static void piece_str(session *s, int id, char *out, size_t cap)
{
	size_t len = 0, o = 0;
	const unsigned char *b = s->model.tok ? gb_tok_piece_bytes(s->model.tok, id, &len) : NULL;
	if (!b) {
		snprintf(out, cap, "#%d", id);
		return;
	}
	for (size_t j = 0; j < len && o + 8 < cap;) {
		int u = utf8_len(b + j, len - j);
		if (b[j] == ' ')
			o += (size_t)snprintf(out + o, cap - o, "\xc2\xb7");
		else if (b[j] == '\n')
			o += (size_t)snprintf(out + o, cap - o, "\xe2\x8f\x8e");
		else if (b[j] < 32 || b[j] == 127 || !u)
			o += (size_t)snprintf(out + o, cap - o, "\\x%02x", b[j]);
		else {
			memcpy(out + o, b + j, (size_t)u);
			o += (size_t)u;
			j += (size_t)u;
			continue;
		}
		j++;
	}
	out[o] = 0;
}

static int cmd_tokenize(session *s, int argc, char **argv, const char *rest)
{
	if (need_model(s))
		return -1;
	int *ids, n;
	if (encode(s, rest, &ids, &n))
		return -1;
	for (int i = 0; i < n; i++) {
		char piece[128];
		piece_str(s, ids[i], piece, sizeof piece);
		printf("%5d  %s\n", ids[i], piece);
	}
	free(ids);
	return 0;
}

static int cmd_trace(session *s, int argc, char **argv, const char *rest)
{
	if (need_run(s))
		return -1;
	for (int i = 0; i < s->trace.n; i++) {
		const gb_ttensor *t = &s->trace.t[i];
		char shape[96] = "";
		for (int d = 0; d < t->ndim; d++)
			snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%s %d", d ? ", " : "",
			         gb_axis_name(t->axes[d]), t->shape[d]);
		printf("%-26s (%s)\n", t->name, shape);
	}
	return 0;
}

static const gb_ttensor *find_tensor(session *s, const char *name)
{
	const gb_ttensor *t = gb_trace_get(&s->trace, name);
	if (!t)
		errorf("no trace tensor '%s': 'trace' lists the names", name);
	return t;
}

static int cmd_dump(session *s, int argc, char **argv, const char *rest)
{
	if (argc != 3)
		return usage(argv[0]);
	if (need_run(s))
		return -1;
	const gb_ttensor *t = find_tensor(s, argv[1]);
	gb_err err;
	if (!t)
		return -1;
	if (gb_trace_dump(t, argv[2], &err)) {
		errorf("%s", err.msg);
		return -1;
	}
	return 0;
}

static int cmd_print(session *s, int argc, char **argv, const char *rest)
{
	if (argc != 2)
		return usage(argv[0]);
	if (need_run(s))
		return -1;
	const gb_ttensor *t = find_tensor(s, argv[1]);
	if (!t)
		return -1;
	int cols = t->shape[t->ndim - 1], rows = t->ndim >= 2 ? t->shape[t->ndim - 2] : 1;
	int blocks = t->ndim == 3 ? t->shape[0] : 1;
	const float *p = t->data;
	for (int b = 0; b < blocks; b++) {
		if (t->ndim == 3)
			printf("%s%s %d\n", b ? "\n" : "", gb_axis_name(t->axes[0]), b + 1);
		for (int r = 0; r < rows; r++) {
			for (int c = 0; c < cols; c++)
				printf("%s%10.5g", c ? " " : "", (double)*p++);
			putchar('\n');
		}
	}
	return 0;
}

/* Runs the current input through ref and through the session's other engine, per tensor. */
static int cmd_compare(session *s, int argc, char **argv, const char *rest)
{
	if (need_run(s))
		return -1;
	const gb_kernels *ref = gb_kernels_ref(), *fast = s->k == ref ? gb_kernels_fast() : s->k;
	gb_trace a = { 0 }, b = { 0 };
	gb_err err;
	gb_fwd_opts oa = { 0 }, ob = { 0 };
	oa.k = ref;
	ob.k = fast;
	const gb_trace *cur = &s->trace;
	if (gb_forward(&s->model, cur->ids, cur->n_ids, cur->encdec ? cur->tgt : NULL, cur->n_tgt, &a, &oa, &err) ||
	    gb_forward(&s->model, cur->ids, cur->n_ids, cur->encdec ? cur->tgt : NULL, cur->n_tgt, &b, &ob, &err)) {
		errorf("%s", err.msg);
		gb_trace_free(&a);
		gb_trace_free(&b);
		return -1;
	}
	printf("%-26s %12s %12s   (%s against %s; relative = max|diff| / max|%s|)\n", "tensor", "max abs", "relative",
	       fast->name, ref->name, ref->name);
	double worst = 0;
	for (int i = 0; i < a.n; i++) {
		const gb_ttensor *x = &a.t[i], *y = &b.t[i];
		double md = 0, mx = 0;
		for (size_t j = 0; j < x->n; j++) {
			double r = x->data[j], f = y->data[j];
			if (isinf(r) && r == f)
				continue; /* the same masked -inf in both */
			double d = fabs(r - f);
			if (!(d <= md))
				md = d;
			if (fabs(r) > mx)
				mx = fabs(r);
		}
		double rel = mx > 0 ? md / mx : md;
		if (rel > worst)
			worst = rel;
		printf("%-26s %12.3g %12.3g\n", x->name, md, rel);
	}
	printf("largest relative difference %.3g\n", worst);
	gb_trace_free(&a);
	gb_trace_free(&b);
	return 0;
}

static int cmd_set(session *s, int argc, char **argv, const char *rest)
{
	if (argc != 3)
		return usage(argv[0]);
	if (!strcmp(argv[1], "engine")) {
		const gb_kernels *k = gb_kernels_by_name(argv[2]);
		if (!k) {
			errorf("unknown or unsupported engine '%s': ref, fast, scalar, avx2 or avx512", argv[2]);
			return -1;
		}
		s->k = k;
		s->have_run = 0;
		return 0;
	}
	if (!strcmp(argv[1], "threads")) {
		int n;
		if (parse_int(argv[2], 1, 64, &n, "threads"))
			return -1;
		gb_kernels_set_threads(n);
		return 0;
	}
	errorf("unknown setting '%s': engine or threads", argv[1]);
	return -1;
}

/* A random model folder: a demo until trained models ship, and a fixture for tests. */
static int cmd_init(session *s, int argc, char **argv, const char *rest)
{
	const char *dir = NULL, *preset = "gpt2";
	int seed = 1, force = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--preset") && i + 1 < argc)
			preset = argv[++i];
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			if (parse_int(argv[++i], 0, 2000000000, &seed, "the seed"))
				return -1;
		} else if (!strcmp(argv[i], "--force"))
			force = 1;
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
	gb_model m;
	gb_err err;
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


/* Set by SIGINT (main.c installs the handler): long commands stop at the next step. */
volatile sig_atomic_t interrupted;

/* Options shared by generate: --temp T --top-k K --top-p P --seed S. */
static int parse_sampling(int argc, char **argv, int from, gb_sampling *sm, int *seed)
{
	for (int i = from; i < argc; i++) {
		char *end;
		if (i + 1 >= argc) {
			errorf("%s needs a value", argv[i]);
			return -1;
		}
		const char *v = argv[++i];
		if (!strcmp(argv[i - 1], "--temp")) {
			sm->temp = strtod(v, &end);
			if (*end || !(sm->temp >= 0) || sm->temp > 100) {
				errorf("--temp must be a number from 0 (greedy) to 100 (got '%s')", v);
				return -1;
			}
		} else if (!strcmp(argv[i - 1], "--top-k")) {
			if (parse_int(v, 0, 1 << 24, &sm->top_k, "--top-k"))
				return -1;
		} else if (!strcmp(argv[i - 1], "--top-p")) {
			sm->top_p = strtod(v, &end);
			if (*end || !(sm->top_p > 0 && sm->top_p <= 1)) {
				errorf("--top-p must be a number above 0 and at most 1 (got '%s')", v);
				return -1;
			}
		} else if (!strcmp(argv[i - 1], "--seed")) {
			if (parse_int(v, 0, 2000000000, seed, "--seed"))
				return -1;
		} else {
			errorf("unknown option '%s': --temp, --top-k, --top-p or --seed", argv[i - 1]);
			return -1;
		}
	}
	return 0;
}

static int cmd_generate(session *s, int argc, char **argv, const char *rest)
{
	if (argc < 2)
		return usage(argv[0]);
	if (need_run(s))
		return -1;
	const gb_config *c = &s->model.cfg;
	int steps, seed = 1;
	gb_sampling sm = { 1, 0, 1 };
	if (parse_int(argv[1], 1, 100000, &steps, "the number of tokens") || parse_sampling(argc, argv, 2, &sm, &seed))
		return -1;
	gb_rng rng;
	gb_rng_seed(&rng, (uint64_t)seed);
	/* The sequence the decoder sees grows by one token a step. */
	int cap = c->n_ctx + 1, n, *seq = malloc(sizeof(int) * (size_t)cap);
	const gb_trace *tr = &s->trace;
	if (c->encdec) {
		n = tr->n_tgt;
		memcpy(seq, tr->tgt, sizeof(int) * (size_t)n);
	} else {
		n = tr->n_ids;
		memcpy(seq, tr->ids, sizeof(int) * (size_t)n);
	}
	int *src = NULL, n_src = tr->n_ids;
	if (c->encdec) {
		src = malloc(sizeof(int) * (size_t)n_src);
		memcpy(src, tr->ids, sizeof(int) * (size_t)n_src);
	}
	interrupted = 0;
	int rc = 0;
	for (int step = 0; step < steps; step++) {
		if (interrupted) {
			printf("(stopped after %d tokens)\n", step);
			break;
		}
		if (n >= c->n_ctx) {
			printf("(the context is full: %d tokens)\n", c->n_ctx);
			break;
		}
		const gb_ttensor *lg = gb_trace_get(&s->trace, "logits");
		int V = lg->shape[1];
		double p;
		int id = gb_sample(lg->data + (size_t)(lg->shape[0] - 1) * V, V, &sm, &rng, &p);
		seq[n++] = id;
		char piece[128];
		piece_str(s, id, piece, sizeof piece);
		printf("%3d  %-16s  id %-6d p = %.4f\n", step + 1, piece, id, p);
		fflush(stdout);
		rc = c->encdec ? forward(s, src, n_src, seq, n) : forward(s, seq, n, NULL, 0);
		if (rc)
			break;
		if (id == c->eos_id && c->eos_id >= 0)
			break;
	}
	free(seq);
	free(src);
	return rc;
}

typedef struct beam_print {
	session *s;
} beam_print;

static void print_beams(void *arg, int step, const gb_beam *beams, int n)
{
	session *s = ((beam_print *)arg)->s;
	printf("step %d\n", step);
	for (int b = 0; b < n; b++) {
		printf("  %d  score %8.4f  ", b + 1, beams[b].score);
		for (int i = 0; i < beams[b].n; i++) {
			char piece[128];
			piece_str(s, beams[b].ids[i], piece, sizeof piece);
			printf("%s%s", i ? " " : "", piece);
		}
		printf("%s\n", beams[b].done ? "  (ended)" : "");
	}
	fflush(stdout);
}

static int cmd_beam(session *s, int argc, char **argv, const char *rest)
{
	if (argc != 3)
		return usage(argv[0]);
	if (need_run(s))
		return -1;
	int k, steps;
	if (parse_int(argv[1], 1, 64, &k, "the beam width") || parse_int(argv[2], 1, 10000, &steps, "the number of steps"))
		return -1;
	const gb_trace *tr = &s->trace;
	int n = tr->n_ids, *ids = malloc(sizeof(int) * (size_t)n);
	memcpy(ids, tr->ids, sizeof(int) * (size_t)n);
	gb_beam out[64];
	int n_out = 0;
	gb_err err;
	beam_print bp = { s };
	int rc = gb_beam_search(&s->model, s->k, ids, n, k, steps, s->model.cfg.eos_id, print_beams, &bp, out, &n_out, &err);
	free(ids);
	if (rc) {
		errorf("%s", err.msg);
		return -1;
	}
	printf("best: score %.4f (sum of log-probabilities)\n", out[0].score);
	gb_beams_free(out, n_out);
	return 0;
}

static int cmd_translate(session *s, int argc, char **argv, const char *rest)
{
	if (need_model(s))
		return -1;
	const gb_config *c = &s->model.cfg;
	if (!c->encdec) {
		errorf("translate needs an encoder-decoder model (this one is decoder-only): try 'generate'");
		return -1;
	}
	if (!*rest) {
		errorf("translate needs a text: translate TEXT");
		return -1;
	}
	int *src, n;
	if (encode(s, rest, &src, &n))
		return -1;
	if (n == 0 || n > c->n_ctx) {
		errorf(n ? "the text is %d tokens; the model's context holds %d" : "the text gave no tokens", n, c->n_ctx);
		free(src);
		return -1;
	}
	int *tgt = malloc(sizeof(int) * (size_t)(c->n_ctx + 1)), m = 0, rc = 0;
	tgt[m++] = c->dec_start_id;
	gb_sampling greedy = { 0, 0, 1 };
	interrupted = 0;
	while (m < c->n_ctx && !interrupted) {
		if ((rc = forward(s, src, n, tgt, m)))
			break;
		const gb_ttensor *lg = gb_trace_get(&s->trace, "logits");
		int id = gb_sample(lg->data + (size_t)(m - 1) * lg->shape[1], lg->shape[1], &greedy, NULL, NULL);
		if (id == c->eos_id)
			break;
		tgt[m++] = id;
	}
	if (!rc)
		rc = forward(s, src, n, tgt, m); /* the trace shows the whole translation */
	if (!rc) {
		char *out = NULL;
		size_t len = 0;
		gb_err err;
		if (gb_tok_decode(s->model.tok, tgt + 1, m - 1, &out, &len, &err)) {
			errorf("%s", err.msg);
			rc = -1;
		} else {
			fwrite(out, 1, len, stdout);
			putchar('\n');
			free(out);
			free(s->text);
			s->text = strdup(rest);
		}
	}
	free(src);
	free(tgt);
	return rc;
}

/* The head detector over the current text (and random repeated runs for induction). */
static int cmd_heads(session *s, int argc, char **argv, const char *rest)
{
	if (argc == 2) {
		int l;
		if (parse_int(argv[1], -1000000, 1000000, &l, "the layer"))
			return -1;
		return show_stage(s, ST_HEADS, l, s->head);
	}
	if (argc != 1)
		return usage(argv[0]);
	if (need_run(s))
		return -1;
	const gb_config *c = &s->model.cfg;
	int L = c->n_layer, H = c->n_head;
	gb_err err;
	if (c->encdec) {
		float *mono = malloc(sizeof(float) * (size_t)L * H);
		const int *src[1] = { s->trace.ids }, *tgt[1] = { s->trace.tgt };
		int sl[1] = { s->trace.n_ids }, tl[1] = { s->trace.n_tgt };
		int rc = gb_cross_monotone(&s->model, s->k, src, sl, tgt, tl, 1, mono, &err);
		if (rc)
			errorf("%s", err.msg);
		else {
			printf("cross-attention heads on the current source and target: how monotone the alignment is\n");
			printf("(the share of target steps whose most-attended source position does not move back)\n");
			printf("layer head  monotone\n");
			for (int i = 0; i < L * H; i++)
				printf("%5d %4d  %8.3f\n", i / H + 1, i % H + 1, (double)mono[i]);
		}
		free(mono);
		return rc;
	}
	gb_head_score *sc = malloc(sizeof *sc * (size_t)L * H);
	const int *texts[1] = { s->trace.ids };
	int lens[1] = { s->trace.n_ids };
	/* Induction runs draw ordinary tokens: merged pieces when the vocabulary has them, never
	 * the special tokens at the end. */
	int hi = c->vocab, lo = 0;
	if (s->model.tok) {
		hi = gb_tok_vocab_size(s->model.tok);
		while (hi > 0 && gb_tok_is_special(s->model.tok, hi - 1))
			hi--;
		if (hi - 256 >= 64)
			lo = 256;
	}
	int run = (c->n_ctx - 1) / 2 < 24 ? (c->n_ctx - 1) / 2 : 24;
	int rc = gb_head_scores(&s->model, s->k, texts, lens, 1, run, 20, lo, hi, 1, sc, &err);
	if (rc)
		errorf("%s", err.msg);
	else {
		printf("self-attention heads: mean attention weight on the current text (%d tokens)\n", s->trace.n_ids);
		printf("to the previous token, the first token and itself; induction: on %d random runs of %d tokens\n", 20, run);
		printf("seen twice, from each token of the second copy to the token that followed it the first time\n");
		printf("layer head  previous    first     self  induction\n");
		for (int i = 0; i < L * H; i++)
			printf("%5d %4d  %8.3f %8.3f %8.3f %10.3f\n", i / H + 1, i % H + 1, (double)sc[i].prev,
			       (double)sc[i].first, (double)sc[i].self, (double)sc[i].induction);
	}
	free(sc);
	return rc;
}

static int cmd_bench(session *s, int argc, char **argv, const char *rest)
{
	return bench_all(stdout);
}

static int cmd_quit(session *s, int argc, char **argv, const char *rest) { return 1; }

const command commands[] = {
	{ "help", "[COMMAND]", "list the commands, or explain one", "", cmd_help },
	{ "load", "DIR|NAME", "load a model folder, or a shipped model by name (tiny-lm, tiny-mt) (config.json, model.safetensors, tokenizer.json)",
	  "The folder's files are checked before use: a broken file is named with what is wrong,\n"
	  "and the model loaded before stays loaded.", cmd_load },
	{ "models", "", "the shipped models", "", cmd_models },
	{ "info", "", "the loaded model's architecture and sizes", "", cmd_info },
	{ "init", "DIR [--preset gpt2|llama|encdec] [--seed N] [--force]",
	  "write a small randomly initialized model folder",
	  "A random model shows how the engine works, not what a trained model learned.", cmd_init },
	{ "tokenize", "TEXT", "show the tokens (pieces and ids) of TEXT", "", cmd_tokenize },
	{ "run", "TEXT | --ids N... [--target-ids N...]", "run TEXT through the model; it becomes the current text",
	  "Everything the trace holds comes from the last run. A text longer than the context keeps\n"
	  "its last tokens (and says so). An encoder-decoder runs TEXT through the encoder and the\n"
	  "decoder start token through the decoder, or --target-ids as the decoder input.", cmd_run },
	{ "embed", "", "the token embeddings of the current text (token x feature)", "", cmd_embed },
	{ "pe", "[DIM ...]", "the positional encoding (position x dimension), or a line plot of chosen dimensions",
	  "Sinusoidal: PE(i, 2k) = sin(i / 10000^(2k/d)), PE(i, 2k+1) = cos(i / 10000^(2k/d)).\n"
	  "For RoPE it shows the rotation angles, for ALiBi the bias of each head.", cmd_pe },
	{ "qkv", "L H", "queries, keys and values of head H in layer L", "", cmd_qkv },
	{ "scores", "L H [raw|masked]", "attention scores of head H in layer L: raw q.k, or scaled and masked",
	  "masked (the default) is q.k / sqrt(d_head) with -inf where the causal mask hides a key:\n"
	  "exactly what enters the softmax.", cmd_scores },
	{ "attn", "L H", "attention weights of head H in layer L (query x key; rows sum to 1)", "", cmd_attn },
	{ "model", "", "every layer and head's attention weights at once", "", cmd_model },
	{ "ln", "L [K]", "layer norm K (1, 2 or 3) of layer L: statistics of its input and its output", "", cmd_ln },
	{ "ffn", "L", "the feed-forward network's hidden units in layer L", "", cmd_ffn },
	{ "resid", "", "the residual stream's length per token after every sub-layer", "", cmd_resid },
	{ "next", "[K] [--temp T]", "the K most probable next tokens (default 10)", "", cmd_next },
	{ "cross", "L H", "cross-attention of head H in decoder layer L (encoder-decoder models)", "", cmd_cross },
	{ "show", "NAME [I]", "any trace tensor as a figure; I picks one slice of a 3-D tensor", "", cmd_show },
	{ "export", "FILE.png|FILE.svg|FILE.csv|FILE.npy [--scale S] [--size WxH] [--force]",
	  "write the current figure for slides (PNG, SVG) or as numbers (CSV, NPY)",
	  "PNG and SVG default to 1600x900 (16:9); --scale 2 doubles everything for high-DPI.\n"
	  "An existing file is kept unless --force. The PNG records the model, the text, the\n"
	  "tensor, layer, head, colormap and range in its text chunks.", cmd_export },
	{ "window", "", "open (or close) the projector window: it always shows the current figure",
	  "In the window: Left/Right change the head, Up/Down the layer, Tab the stage, q closes it.\n"
	  "The prompt keeps working while it is open.", cmd_window },
	{ "trace", "", "list every tensor of the last run with its shape", "", cmd_trace },
	{ "print", "NAME", "print a trace tensor's numbers", "", cmd_print },
	{ "dump", "NAME FILE.npy|FILE.csv", "write a trace tensor as NumPy .npy or .csv",
	  "The format follows the file's extension; the file is written to a temporary name and\n"
	  "renamed.", cmd_dump },
	{ "compare", "", "run the current input on the ref and fast engines and show their differences",
	  "For every trace tensor: the largest absolute difference and the largest relative\n"
	  "difference, max|fast - ref| / max|ref|.", cmd_compare },
	{ "set", "engine ref|fast|scalar|avx2|avx512 | threads N", "change a setting", "", cmd_set },
	{ "generate", "N [--temp T] [--top-k K] [--top-p P] [--seed S]", "extend the current text by N tokens, one step at a time",
	  "Each step samples the next token from the model's distribution at the last position:\n"
	  "softmax(logits / T), keeping the K most probable and then the smallest set reaching P.\n"
	  "--temp 0 is greedy. The text grows, so every view afterwards shows the longer text.\n"
	  "Ctrl-C stops it and keeps what was generated.", cmd_generate },
	{ "beam", "K N", "beam search of width K for N tokens after the current text, step by step",
	  "At every step each kept sequence is extended by its K most probable next tokens, and the\n"
	  "K best of all the extensions (by the sum of their log-probabilities) are kept.", cmd_beam },
	{ "translate", "TEXT", "translate TEXT with an encoder-decoder model (greedy decoding)",
	  "The encoder reads TEXT; the decoder writes one token at a time until the end token.\n"
	  "Afterwards the trace holds the whole translation: 'cross L H' shows the alignment.", cmd_translate },
	{ "heads", "[L]", "all heads of layer L side by side; without L, what each head does (the head detector)",
	  "Scores are mean attention weights read from the trace: on the current text for the\n"
	  "previous, first and self scores, and on random runs of tokens seen twice for induction\n"
	  "(a head that looks from a token to what followed it last time). For an encoder-decoder\n"
	  "it scores how monotone each cross-attention head's alignment is.", cmd_heads },
	{ "train", "--preset tiny-lm|tiny-mt | --corpus FILE [--out DIR] [--steps N] [--force] [--resume]",
	  "train a model: a shipped recipe, or a small language model on your own text",
	  "The data is generated (presets) or read (--corpus, plain UTF-8 text: a BPE vocabulary\n"
	  "is learned on it first). The model folder is checkpointed as training goes; --resume\n"
	  "continues a stopped run. At the end the probes are measured and written, with the\n"
	  "command and the loss curves, into the folder's README.md and loss.csv.", cmd_train },
	{ "eval", "DIR", "measure a trained model's probes on held-out data", "", cmd_eval },
	{ "bench", "", "measure the kernels and the forward pass", "", cmd_bench },
	{ "quit", "", "leave glassbox", "", cmd_quit },
	{ NULL, NULL, NULL, NULL, NULL },
};

const command *command_find(const char *name)
{
	const command *hit = NULL;
	int n = 0;
	size_t len = strlen(name);
	for (const command *c = commands; c->name; c++) {
		if (!strcmp(c->name, name))
			return c;
		if (!strncmp(c->name, name, len)) {
			hit = c;
			n++;
		}
	}
	if (n == 1)
		return hit;
	if (n > 1) {
		char list[256] = "";
		for (const command *c = commands; c->name; c++)
			if (!strncmp(c->name, name, len))
				snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", list[0] ? ", " : "", c->name);
		errorf("'%s' is ambiguous: %s", name, list);
		return NULL;
	}
	errorf("unknown command '%s': 'help' lists the commands", name);
	return NULL;
}

/* Splits a line into words: whitespace separates, "double" and 'single' quotes group. */
static int split_words(const char *line, char ***argv_out)
{
	int cap = 8, n = 0;
	char **argv = malloc((size_t)cap * sizeof *argv);
	const char *p = line;
	for (;;) {
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		char *w = malloc(strlen(p) + 1), *o = w;
		while (*p && !isspace((unsigned char)*p)) {
			if (*p == '"' || *p == '\'') {
				char q = *p++;
				while (*p && *p != q)
					*o++ = *p++;
				if (*p)
					p++;
			} else
				*o++ = *p++;
		}
		*o = 0;
		if (n + 1 >= cap)
			argv = realloc(argv, (size_t)(cap *= 2) * sizeof *argv);
		argv[n++] = w;
	}
	argv[n] = NULL;
	*argv_out = argv;
	return n;
}

int command_line(session *s, const char *line)
{
	while (isspace((unsigned char)*line))
		line++;
	if (!*line || *line == '#')
		return 0;
	/* The raw text after the command word, for commands that take free text. */
	const char *rest = line;
	while (*rest && !isspace((unsigned char)*rest))
		rest++;
	while (isspace((unsigned char)*rest))
		rest++;
	char *raw = strdup(rest);
	size_t rl = strlen(raw);
	while (rl && isspace((unsigned char)raw[rl - 1]))
		raw[--rl] = 0;
	if (rl >= 2 && (raw[0] == '"' || raw[0] == '\'') && raw[rl - 1] == raw[0]) {
		memmove(raw, raw + 1, rl - 2);
		raw[rl - 2] = 0;
	}
	char **argv;
	int argc = split_words(line, &argv), rc = -1;
	const command *c = command_find(argv[0]);
	if (c)
		rc = c->run(s, argc, argv, raw);
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
	free(raw);
	return rc;
}

int command_script(session *s, const char *text, const char *where)
{
	/* Commands end at a newline or at a ';' outside quotes. */
	size_t len = strlen(text);
	char *buf = malloc(len + 1);
	int lineno = 1, index = 0;
	const char *p = text;
	/* A -c string is usually one line: there, commands are named by their position. */
	int by_index = !strcmp(where, "-c");
	while (*p) {
		char *o = buf, q = 0;
		int start = lineno;
		while (*p && (q || (*p != ';' && *p != '\n'))) {
			if (!q && (*p == '"' || *p == '\''))
				q = *p;
			else if (q && *p == q)
				q = 0;
			*o++ = *p++;
		}
		*o = 0;
		if (*p == '\n')
			lineno++;
		if (*p)
			p++;
		index++;
		if (by_index)
			snprintf(err_where, sizeof err_where, "%s command %d", where, index);
		else
			snprintf(err_where, sizeof err_where, "%s line %d", where, start);
		int rc = command_line(s, buf);
		err_where[0] = 0;
		if (rc < 0) {
			free(buf);
			return -1;
		}
		if (rc > 0)
			break; /* quit */
	}
	free(buf);
	return 0;
}
