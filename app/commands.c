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
#include "app/lesson.h"
#include "app/tour.h"
#include "app/tui.h"
#include "app/train_cmd.h"
#include "app/views.h"
#include "viz/cells.h"
#include "viz/colormap.h"
#include "viz/export.h"
#include "viz/window.h"
#include "model/decode.h"
#include "model/heads.h"
#include "model/tokenizer/tokenizer.h"

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
	s->palette = -1;
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

/* Edit distance (insertions, deletions, substitutions) between two short strings, for
 * "did you mean" suggestions. */
static int edit_distance(const char *a, const char *b)
{
	int la = (int)strlen(a), lb = (int)strlen(b), row[64];
	if (la > 63 || lb > 63)
		return 99;
	for (int j = 0; j <= lb; j++)
		row[j] = j;
	for (int i = 1; i <= la; i++) {
		int prev = row[0];
		row[0] = i;
		for (int j = 1; j <= lb; j++) {
			int cur = row[j], sub = prev + (a[i - 1] != b[j - 1]);
			int best = row[j] + 1 < row[j - 1] + 1 ? row[j] + 1 : row[j - 1] + 1;
			row[j] = sub < best ? sub : best;
			prev = cur;
		}
	}
	return row[lb];
}

/* The closest of names (n of them) to word, when it is close enough to be a likely typo. */
static const char *closest(const char *word, const char *const *names, int n)
{
	const char *best = NULL;
	int bd = 99, lw = (int)strlen(word);
	for (int i = 0; i < n; i++) {
		int d = edit_distance(word, names[i]);
		if (d < bd) {
			bd = d;
			best = names[i];
		}
	}
	return bd <= (lw < 5 ? 1 : lw < 10 ? 2 : 3) ? best : NULL;
}

/* ---- small helpers ---- */

/* The first command that needs a model, in a script as at the prompt, gets tiny-lm when
 * nothing was loaded (glassbox's default model). */
static int need_model(session *s)
{
	if (s->loaded || session_load_default(s) == 0)
		return 0;
	errorf("no model loaded, and the default tiny-lm did not load (%s): try 'load DIR'", session_default_problem());
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
	if (!*c->usage)
		errorf("%s takes no arguments", c->name);
	else
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
	o.textbook_ln = s->textbook;
	s->have_run = 0;
	if (gb_forward(&s->model, ids, n, tgt, n_tgt, &s->trace, &o, &err)) {
		errorf("%s", err.msg);
		return -1;
	}
	s->have_run = 1;
	s->tour = 0;
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
static int show(session *s, gb_figure *f);

int show_figure(session *s, gb_figure *f) { return show(s, f); }

static int show(session *s, gb_figure *f)
{
	if (!f)
		return -1;
	gb_fig_free(s->fig);
	s->fig = f;
	if (s->palette >= 0 && f->cmap != GB_CMAP_COOLWARM) {
		f->cmap = s->palette;
		for (int i = 0; i < f->n_panels; i++)
			f->panels[i]->cmap = s->palette;
	}
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
			int used = 0;
			const char *sz = argv[++i];
			if (sscanf(sz, "%dx%d%n", &o.width, &o.height, &used) != 2 || sz[used] || o.width < 200 || o.height < 150 ||
			    o.width > 8000 || o.height > 8000) {
				errorf("--size must be WIDTHxHEIGHT in pixels, from 200x150 to 8000x8000 (got '%s')", sz);
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
	const char *what[2] = { "layer", "head" };
	int *out[2] = { l, h };
	for (int i = 0; i < need; i++) {
		char *end;
		errno = 0;
		long v = strtol(argv[1 + i], &end, 10);
		if (!*argv[1 + i] || *end || errno || v < -1000000 || v > 1000000) {
			errorf("the %s must be a whole number, counted from 1 (got '%s')", what[i], argv[1 + i]);
			return -1;
		}
		*out[i] = (int)v;
	}
	return 0;
}

/* attn, cross and qkv: a stage of one head, named like the command. */
static int cmd_head_stage(session *s, int argc, char **argv, const char *rest)
{
	int l, h, stage = 0;
	const char *name = command_find(argv[0])->name;
	while (stage < ST_N && strcmp(stage_name(stage), name))
		stage++;
	if (layer_head(argc, argv, 2, &l, &h))
		return -1;
	return show_stage(s, stage, l, h);
}

static int cmd_scores(session *s, int argc, char **argv, const char *rest)
{
	int l, h;
	if (argc == 4 && (!strcmp(argv[3], "raw") || !strcmp(argv[3], "masked"))) {
		if (layer_head(3, argv, 2, &l, &h))
			return -1;
		return show(s, view_attention(s, !strcmp(argv[3], "raw") ? "scores" : "masked", l, h));
	}
	if (layer_head(argc, argv, 2, &l, &h))
		return -1;
	return show_stage(s, ST_SCORES, l, h);
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

static int cmd_embed(session *s, int argc, char **argv, const char *rest) { return argc != 1 ? usage(argv[0]) : show_stage(s, ST_EMBED, s->layer, s->head); }
static int cmd_model(session *s, int argc, char **argv, const char *rest) { return argc != 1 ? usage(argv[0]) : show(s, view_model(s)); }
static int cmd_resid(session *s, int argc, char **argv, const char *rest) { return argc != 1 ? usage(argv[0]) : show_stage(s, ST_RESID, s->layer, s->head); }

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

static const gb_ttensor *find_tensor(session *s, const char *name);

static int cmd_show(session *s, int argc, char **argv, const char *rest)
{
	int idx = 0;
	if (argc < 2 || argc > 3)
		return usage(argv[0]);
	if (argc == 3 && parse_int(argv[2], 0, 1 << 20, &idx, "the index"))
		return -1;
	const gb_ttensor *t;
	if (need_run(s) || !(t = find_tensor(s, argv[1])))
		return -1;
	if (idx > 0 && t->ndim < 3) {
		errorf("%s has %d dimension%s: an index picks a slice of a 3-D tensor only", argv[1], t->ndim,
		       t->ndim == 1 ? "" : "s");
		return -1;
	}
	return show(s, view_tensor(s, argv[1], idx));
}

/* The guided tour: each `step` shows the next stop, `step back` the previous one. */
static int cmd_step(session *s, int argc, char **argv, const char *rest)
{
	if (need_run(s))
		return -1;
	int n = tour_length(s), i = s->tour;
	if (argc == 2 && !strcmp(argv[1], "back"))
		i = s->tour - 2;
	else if (argc == 2) {
		if (parse_int(argv[1], 1, n, &i, "the stop"))
			return -1;
		i--;
	} else if (argc != 1)
		return usage(argv[0]);
	if (i < 0) {
		errorf("this is the first stop: 'step' goes forward");
		return -1;
	}
	if (i >= n) {
		printf("the tour is over (%d stops): 'step 1' starts again, or 'run' a new text\n", n);
		return 0;
	}
	char heading[160];
	const char *text;
	gb_figure *f = tour_stop(s, i, heading, sizeof heading, &text);
	s->tour = i + 1; /* a stop this model cannot show (e.g. no positions) is passed, not a wall */
	if (!f)
		return -1;
	printf("== stop %d of %d: %s\n%s\n\n", i + 1, n, heading, text);
	return show(s, f);
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
void resolve_model(const char *arg, char *out, size_t cap)
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

static char default_problem[600];

const char *session_default_problem(void) { return default_problem; }

int session_load_default(session *s)
{
	char dir[600], p[700];
	if (models_dir(dir, sizeof dir)) {
		snprintf(default_problem, sizeof default_problem, "the shipped models were not found beside the program");
		return -1;
	}
	snprintf(p, sizeof p, "%s/tiny-lm", dir);
	gb_err err;
	gb_model m;
	if (gb_model_load(&m, p, &err)) {
		snprintf(default_problem, sizeof default_problem, "%s", err.msg);
		return -1;
	}
	s->model = m;
	s->loaded = 1;
	return 0;
}

static int cmd_models(session *s, int argc, char **argv, const char *rest)
{
	if (argc != 1)
		return usage(argv[0]);
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
	gb_fig_free(s->fig); /* the old model's figure must not be exported as this one's */
	s->fig = NULL;
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
	if (argc != 1)
		return usage(argv[0]);
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
	int *ids = NULL, *tgt = NULL, n = 0, n_tgt = 0, rc = -1, exact = 0;
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
		} else
			exact = 1; /* every token of the text ran: keep it as typed */
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
		/* The text that ran (what figures record): not "--ids 5 6 7", nor the part of a long
		 * text that was cut. */
		free(s->text);
		s->text = exact ? strdup(rest) : ids_text(s, ids, n);
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

/* Token ids as the text they stand for, as the session's text after they ran: the tokenizer's
 * bytes, with control bytes (but newline) and bytes that are not whole UTF-8 characters as
 * \xNN; "token ids: 5 6 7" when there is no tokenizer or it does not know an id. */
char *ids_text(session *s, const int *ids, int n)
{
	char *raw = NULL, *out;
	size_t len = 0, o = 0;
	gb_err err;
	if (s->model.tok && !gb_tok_decode(s->model.tok, ids, n, &raw, &len, &err)) {
		out = malloc(4 * len + 1);
		for (size_t i = 0; out && i < len;) {
			const unsigned char *b = (const unsigned char *)raw + i;
			int u = utf8_len(b, len - i);
			if (!u || (b[0] < 32 && b[0] != '\n') || b[0] == 127) {
				o += (size_t)sprintf(out + o, "\\x%02x", b[0]);
				i++;
			} else {
				memcpy(out + o, b, (size_t)u);
				o += (size_t)u;
				i += (size_t)u;
			}
		}
		free(raw);
		if (out)
			out[o] = 0;
		return out;
	}
	out = malloc(16 + 12 * (size_t)n);
	if (out) {
		o = (size_t)sprintf(out, "token ids:");
		for (int i = 0; i < n; i++)
			o += (size_t)sprintf(out + o, " %d", ids[i]);
	}
	return out;
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

/* Prints s in exactly `width` terminal columns: cut at a whole character, padded with spaces
 * (printf's %-10s counts bytes, which shifts columns after a "·"). */
static void put_cols(const char *s, int width)
{
	int used = 0;
	while (*s && used < width) {
		uint32_t cp;
		int n = gb_utf8_decode(s, &cp);
		if (n <= 0)
			break;
		int w = gb_cp_width(cp);
		if (used + w > width)
			break;
		fwrite(s, 1, (size_t)n, stdout);
		s += n;
		used += w;
	}
	printf("%*s", width - used, "");
}

/* Shows one word's pieces, e.g. [th][e] for the merge replay. */
static void print_pieces(session *s, const int *p, int n)
{
	for (int i = 0; i < n; i++) {
		char piece[128];
		piece_str(s, p[i], piece, sizeof piece);
		printf("[%s]", piece);
	}
}

static int cmd_tokenize(session *s, int argc, char **argv, const char *rest)
{
	if (need_model(s))
		return -1;
	int steps = 0;
	if (!strncmp(rest, "--steps", 7) && (rest[7] == ' ' || !rest[7])) {
		steps = 1;
		rest += 7;
		while (*rest == ' ')
			rest++;
	}
	if (!s->model.tok) {
		errorf("%s has no tokenizer (tokenizer.json)", s->model.dir);
		return -1;
	}
	int *ids, n;
	gb_tok_trace tt = { 0 };
	gb_err err;
	if (gb_tok_encode(s->model.tok, rest, strlen(rest), 0, &ids, &n, steps ? &tt : NULL, &err)) {
		errorf("%s", err.msg);
		return -1;
	}
	if (steps) {
		/* Replay: every word starts as its bytes; each merge joins two neighbours, lowest rank
		 * (learned earliest) first. */
		printf("%d words; %d merges in the order applied (rank = when the merge was learned)\n", tt.n_words, tt.n_steps);
		int *pieces = malloc(sizeof(int) * (strlen(rest) + 1)), np = 0, cur = -1;
		for (int k = 0; k <= tt.n_steps; k++) {
			int w = k < tt.n_steps ? tt.steps[k].word : tt.n_words;
			while (cur < w) { /* a new word: finish the previous one, start from its bytes */
				if (cur >= 0) {
					printf("  word %d done: ", cur + 1);
					print_pieces(s, pieces, np);
					printf("\n");
				}
				if (++cur >= tt.n_words)
					break;
				const gb_tok_word *wd = &tt.words[cur];
				np = 0;
				if (wd->special)
					pieces[np++] = ids[wd->first];
				else
					for (size_t b = 0; b < wd->len; b++)
						pieces[np++] = gb_tok_byte_id(s->model.tok, (unsigned char)rest[wd->start + b]);
				printf("word %d: ", cur + 1);
				print_pieces(s, pieces, np);
				printf("\n");
			}
			if (k == tt.n_steps)
				break;
			const gb_tok_step *st = &tt.steps[k];
			char l[128], r[128], m[128];
			piece_str(s, st->left, l, sizeof l);
			piece_str(s, st->right, r, sizeof r);
			piece_str(s, st->result, m, sizeof m);
			pieces[st->pos] = st->result;
			memmove(pieces + st->pos + 1, pieces + st->pos + 2, sizeof(int) * (size_t)(np - st->pos - 2));
			np--;
			printf("  merge %-3d rank %-5d %s + %s -> %-10s ", k + 1, st->rank, l, r, m);
			print_pieces(s, pieces, np);
			printf("\n");
		}
		free(pieces);
		gb_tok_trace_free(&tt);
		printf("ids:");
		for (int i = 0; i < n; i++)
			printf(" %d", ids[i]);
		printf("\n");
	} else
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
	if (argc != 1)
		return usage(argv[0]);
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
	if (!t) {
		const char **names = malloc(sizeof(char *) * (size_t)(s->trace.n ? s->trace.n : 1));
		for (int i = 0; i < s->trace.n; i++)
			names[i] = s->trace.t[i].name;
		const char *near = closest(name, (const char *const *)names, s->trace.n);
		if (near)
			errorf("no trace tensor '%s': did you mean '%s'? ('trace' lists the names)", name, near);
		else
			errorf("no trace tensor '%s': 'trace' lists the names", name);
		free(names);
	}
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
	if (argc != 1)
		return usage(argv[0]);
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

/* Runs the current input again with the session's settings (after a change of engine or
 * convention), so every view stays valid. */
static int rerun(session *s)
{
	if (!s->have_run)
		return 0;
	const gb_trace *tr = &s->trace;
	int n = tr->n_ids, nt = tr->n_tgt, rc;
	int *ids = malloc(sizeof(int) * (size_t)n), *tgt = malloc(sizeof(int) * (size_t)(nt ? nt : 1));
	memcpy(ids, tr->ids, sizeof(int) * (size_t)n);
	if (nt)
		memcpy(tgt, tr->tgt, sizeof(int) * (size_t)nt);
	int keep = s->tour;
	rc = forward(s, ids, n, tr->encdec ? tgt : NULL, tr->encdec ? nt : 0);
	s->tour = keep;
	free(ids);
	free(tgt);
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

static int cmd_set(session *s, int argc, char **argv, const char *rest)
{
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
		s->palette = c;
		return 0;
	}
	if (!strcmp(k, "colors")) {
		static const char *names[] = { "plain", "16", "256", "truecolor" };
		for (int i = 0; i < 4; i++)
			if (!strcmp(v, names[i])) {
				s->depth = i;
				return 0;
			}
		if (!strcmp(v, "auto")) {
			s->depth = -1;
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
	errorf("unknown setting '%s': engine, threads, palette, colors or textbook", k);
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

/* The tokens the newest position attends to most, averaged over the last layer's heads:
 * printed after a generated token ("looks at ..."). */
static void attended(session *s, int n)
{
	const gb_config *c = &s->model.cfg;
	char name[64];
	snprintf(name, sizeof name, "%sL%d.attn.weights", c->encdec ? "dec." : "", c->n_layer);
	const gb_ttensor *w = gb_trace_get(&s->trace, name);
	const int *ids = c->encdec ? s->trace.tgt : s->trace.ids;
	if (!w || n < 2) {
		printf("\n");
		return;
	}
	int H = w->shape[0], T = w->shape[1];
	double best[3] = { -1, -1, -1 };
	int at[3] = { 0, 0, 0 };
	for (int j = 0; j < T; j++) {
		double m = 0;
		for (int h = 0; h < H; h++)
			m += w->data[((size_t)h * T + (T - 1)) * T + j] / H;
		for (int k = 0; k < 3; k++)
			if (m > best[k]) {
				for (int q = 2; q > k; q--)
					best[q] = best[q - 1], at[q] = at[q - 1];
				best[k] = m, at[k] = j;
				break;
			}
	}
	printf("   looks at");
	for (int k = 0; k < 3 && best[k] >= 0; k++) {
		char piece[128];
		piece_str(s, ids[at[k]], piece, sizeof piece);
		printf(" %s (%.2f)", piece, best[k]);
	}
	printf("\n");
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
		printf("%3d  %-16s  id %-6d p = %.4f", step + 1, piece, id, p);
		rc = c->encdec ? forward(s, src, n_src, seq, n) : forward(s, seq, n, NULL, 0);
		if (rc) {
			printf("\n");
			break;
		}
		attended(s, n);
		fflush(stdout);
		if (id == c->eos_id && c->eos_id >= 0)
			break;
	}
	/* The text now is the prompt and what was generated, as it ran (an encoder-decoder's
	 * source does not change: its decoder's tokens grew). */
	if (!c->encdec && s->have_run) {
		free(s->text);
		s->text = ids_text(s, s->trace.ids, s->trace.n_ids);
	}
	free(seq);
	free(src);
	return rc;
}

typedef struct beam_print {
	session *s;
} beam_print;

static int print_beams(void *arg, int step, const gb_beam *beams, int n)
{
	session *s = ((beam_print *)arg)->s;
	printf("step %d\n", step);
	/* the best 8: a wide beam would otherwise fill the screen at every step */
	int shown = n < 8 ? n : 8;
	for (int b = 0; b < shown; b++) {
		printf("  %d  score %8.4f  ", b + 1, beams[b].score);
		for (int i = 0; i < beams[b].n; i++) {
			char piece[128];
			piece_str(s, beams[b].ids[i], piece, sizeof piece);
			printf("%s%s", i ? " " : "", piece);
		}
		printf("%s\n", beams[b].done ? "  (ended)" : "");
	}
	if (n > shown)
		printf("  ... and %d more beams\n", n - shown);
	fflush(stdout);
	if (interrupted) {
		printf("stopped by Ctrl-C after step %d\n", step);
		return 1;
	}
	return 0;
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
	interrupted = 0;
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
	int *tgt = malloc(sizeof(int) * (size_t)(c->n_ctx + 1)), m = 0;
	gb_err derr;
	gb_fwd_opts o = { 0 };
	o.k = s->k;
	o.textbook_ln = s->textbook;
	interrupted = 0;
	int rc = gb_greedy_decode(&s->model, &o, src, n, &s->trace, tgt, &m, &interrupted, &derr);
	if (rc) {
		s->have_run = 0;
		errorf("%s", derr.msg);
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
			/* Bytes that are not whole UTF-8 characters are shown as \xNN, never raw. */
			for (size_t i = 0; i < len;) {
				int u = utf8_len((const unsigned char *)out + i, len - i);
				unsigned char ch = (unsigned char)out[i];
				if (!u || ch < 32 || ch == 127) {
					printf("\\x%02x", ch);
					i++;
				} else {
					fwrite(out + i, 1, (size_t)u, stdout);
					i += (size_t)u;
				}
			}
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
		if (s->trace.n_tgt < 2) {
			errorf("the decoder has only its start token: translate TEXT first, then heads shows the alignment");
			return -1;
		}
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
	int lo, hi;
	gb_head_run_tokens(&s->model, &lo, &hi);
	int run = (c->n_ctx - 1) / 2 < 24 ? (c->n_ctx - 1) / 2 : 24;
	int rc = gb_head_scores(&s->model, s->k, texts, lens, 1, run, 20, lo, hi, 1, sc, &err);
	if (rc)
		errorf("%s", err.msg);
	else {
		printf("self-attention heads: mean attention weight on the current text (%d tokens)\n", s->trace.n_ids);
		printf("to the previous token, the first token and itself. On %d random runs of %d tokens seen twice:\n", 20, run);
		printf("the weight on the previous token (a head that does it whatever the tokens are), and induction,\n");
		printf("from each token of the second copy to the token that followed it the first time\n");
		print_head_scores(stdout, sc, L, H, 0, "                 on the current text          on random runs\n");
	}
	free(sc);
	return rc;
}

/* The top next tokens at the last position of a trace, for before/after tables. */
static void top_tokens(const gb_trace *tr, int k, int *ids, double *p)
{
	int V;
	const float *row = gb_last_logits(tr, &V);
	double lz = gb_logsumexp(row, V);
	for (int i = 0; i < k; i++) {
		int best = -1;
		for (int v = 0; v < V; v++) {
			int taken = 0;
			for (int j = 0; j < i; j++)
				taken |= ids[j] == v;
			if (!taken && (best < 0 || row[v] > row[best]))
				best = v;
		}
		ids[i] = best;
		p[i] = exp(row[best] - lz);
	}
}

static double prob_of(const gb_trace *tr, int id)
{
	int V;
	const float *row = gb_last_logits(tr, &V);
	return exp(row[id] - gb_logsumexp(row, V));
}

/* Zeroes one head's output, reruns, and compares the next-token distributions. The session's
 * trace is left as it was (the head is restored). */
static int cmd_ablate(session *s, int argc, char **argv, const char *rest)
{
	int l, h;
	if (argc != 3)
		return usage(argv[0]);
	if (need_run(s) || parse_int(argv[1], -1000000, 1000000, &l, "the layer") ||
	    parse_int(argv[2], -1000000, 1000000, &h, "the head"))
		return -1;
	const gb_config *c = &s->model.cfg;
	if (l < 1 || l > c->n_layer) {
		errorf("layer %d does not exist: this model has layers 1 to %d", l, c->n_layer);
		return -1;
	}
	if (h < 1 || h > c->n_head) {
		errorf("head %d does not exist: this model has heads 1 to %d", h, c->n_head);
		return -1;
	}
	float *scale = malloc(sizeof(float) * (size_t)c->n_layer * c->n_head);
	for (int i = 0; i < c->n_layer * c->n_head; i++)
		scale[i] = 1;
	scale[(l - 1) * c->n_head + (h - 1)] = 0;
	gb_trace ab = { 0 };
	gb_fwd_opts o = { 0 };
	o.k = s->k;
	o.head_scale = scale;
	gb_err err;
	const gb_trace *tr = &s->trace;
	int rc = gb_forward(&s->model, tr->ids, tr->n_ids, c->encdec ? tr->tgt : NULL, tr->n_tgt, &ab, &o, &err);
	free(scale);
	if (rc) {
		errorf("%s", err.msg);
		gb_trace_free(&ab);
		return -1;
	}
	int k = 5, before[5], after[5];
	double pb[5], pa[5];
	top_tokens(tr, k, before, pb);
	top_tokens(&ab, k, after, pa);
	printf("next token with every head           with layer %d head %d zeroed\n", l, h);
	for (int i = 0; i < k; i++) {
		char a[128], b[128];
		piece_str(s, before[i], b, sizeof b);
		piece_str(s, after[i], a, sizeof a);
		printf("  %-14s %6.3f  (then %6.3f)     %-14s %6.3f  (before %6.3f)\n", b, pb[i], prob_of(&ab, before[i]), a, pa[i],
		       prob_of(tr, after[i]));
	}
	if (before[0] != after[0]) {
		char a[128], b[128];
		piece_str(s, before[0], b, sizeof b);
		piece_str(s, after[0], a, sizeof a);
		printf("the most probable next token changes: %s -> %s\n", b, a);
	} else
		printf("the most probable next token stays; its probability goes %.3f -> %.3f\n", pb[0], prob_of(&ab, before[0]));
	gb_trace_free(&ab);
	return 0;
}

/* The logit lens: the residual stream after each layer, put through the final norm and the
 * output projection as if it were the last layer. A table of the top token per layer and
 * position, and a figure of that token's probability. */
static int cmd_lens(session *s, int argc, char **argv, const char *rest)
{
	if (argc != 1)
		return usage(argv[0]);
	if (need_run(s))
		return -1;
	const gb_config *c = &s->model.cfg;
	const char *p = c->encdec ? "dec." : "";
	int L = c->n_layer, D = c->d_model, V = c->vocab;
	const gb_ttensor *e = gb_trace_get(&s->trace, c->encdec ? "dec.embed.sum" : "embed.sum");
	int T = e->shape[0], show_from = T > 8 ? T - 8 : 0, cols = T - show_from;
	float *x = malloc(sizeof(float) * (size_t)T * D), *lg = malloc(sizeof(float) * (size_t)T * V);
	float *st = malloc(sizeof(float) * (size_t)T * 2), *prob = malloc(sizeof(float) * (size_t)(L + 1) * cols);
	int *top = malloc(sizeof(int) * (size_t)(L + 1) * cols);
	for (int l = 0; l <= L; l++) {
		char name[64];
		snprintf(name, sizeof name, "%sL%d.resid.post", p, l);
		const gb_ttensor *t = l ? gb_trace_get(&s->trace, name) : e;
		memcpy(x, t->data, sizeof(float) * (size_t)T * D);
		if (c->final_norm) {
			const gb_normw *nw = &s->model.dec.final;
			if (c->norm == GB_NORM_RMS)
				s->k->rmsnorm(x, st, x, nw->g, T, D, c->norm_eps);
			else
				s->k->layernorm(x, st, st + T, x, nw->g, nw->b, T, D, c->norm_eps, c->textbook_ln || s->textbook);
		}
		s->k->matmul(lg, x, s->model.lm_head.w, NULL, T, D, V, s->model.lm_head.trans);
		for (int i = show_from; i < T; i++) {
			const float *row = lg + (size_t)i * V;
			int best = 0;
			double mx, z = 0;
			for (int v = 1; v < V; v++)
				if (row[v] > row[best])
					best = v;
			mx = row[best];
			for (int v = 0; v < V; v++)
				z += exp(row[v] - mx);
			top[l * cols + i - show_from] = best;
			prob[l * cols + i - show_from] = (float)(1 / z);
		}
	}
	int n;
	char **tok = token_labels(s, c->encdec ? "dec." : "", &n);
	printf("logit lens: the top next token if the model stopped after each layer%s\n",
	       show_from ? " (the last 8 positions)" : "");
	printf("%-8s", "after");
	for (int i = show_from; i < T; i++) {
		char piece[128];
		piece_str(s, (int)s->trace.t[0].data[i], piece, sizeof piece);
		putchar(' ');
		put_cols(c->encdec ? tok[i] : piece, 10);
	}
	printf("\n");
	for (int l = 0; l <= L; l++) {
		char lab[16];
		snprintf(lab, sizeof lab, l ? "layer %d" : "embed", l);
		printf("%-8s", lab);
		for (int i = 0; i < cols; i++) {
			char piece[128];
			piece_str(s, top[l * cols + i], piece, sizeof piece);
			putchar(' ');
			put_cols(piece, 10);
		}
		printf("\n");
	}
	gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
	gb_fig_set_values(f, prob, L + 1, cols);
	char **rl = malloc(sizeof(char *) * (size_t)(L + 1));
	for (int l = 0; l <= L; l++) {
		rl[l] = malloc(16);
		snprintf(rl[l], 16, l ? "layer %d" : "embed", l);
	}
	gb_fig_set_row_labels(f, (const char *const *)rl);
	gb_fig_set_col_labels(f, (const char *const *)(tok + show_from));
	gb_fig_set_axes(f, "after", "position");
	gb_fig_set_title(f, "Logit lens: probability of the top next token after each layer");
	gb_fig_set_caption(f, "p = softmax(norm_final(x_layer) W_out): the residual stream read out early");
	f->range = GB_RANGE_FIXED;
	f->vmin = 0;
	f->vmax = 1;
	free_labels(rl, L + 1);
	free_labels(tok, n);
	free(x);
	free(lg);
	free(st);
	free(prob);
	free(top);
	return show(s, f);
}

/* Parses "a b c, d e f, ..." into a matrix (rows, cols); the rows must have equal lengths. */
static int parse_matrix(int argc, char **argv, int from, double **out, int *rows, int *cols, int *next)
{
	int cap = 64, n = 0, r = 0, c = -1, in_row = 0;
	double *v = malloc(sizeof(double) * (size_t)cap);
	int i = from;
	for (; i < argc && strncmp(argv[i], "--", 2); i++) {
		char *p = argv[i];
		while (*p) {
			if (*p == ',') {
				if (c < 0)
					c = in_row;
				else if (in_row != c)
					goto ragged;
				r++;
				in_row = 0;
				p++;
				continue;
			}
			char *end;
			double x = strtod(p, &end);
			if (end == p || !isfinite(x)) {
				errorf("'%s' is not a number: give rows of numbers separated by commas, e.g. 1 2 3, 4 5 6", argv[i]);
				free(v);
				return -1;
			}
			if (n == cap)
				v = realloc(v, sizeof(double) * (size_t)(cap *= 2));
			v[n++] = x;
			in_row++;
			p = end;
		}
	}
	if (in_row) {
		if (c >= 0 && in_row != c)
			goto ragged;
		if (c < 0)
			c = in_row;
		r++;
	}
	if (n == 0) {
		errorf("give the numbers: rows separated by commas, e.g. 1 2 3, 4 5 6");
		free(v);
		return -1;
	}
	*out = v;
	*rows = r;
	*cols = c;
	*next = i;
	return 0;
ragged:
	errorf("every row needs as many numbers as the first (%d)", c);
	free(v);
	return -1;
}

/* Shows a (rows, cols) result with its numbers, as a small heatmap a slide can use. */
static int show_matrix(session *s, const double *v, int rows, int cols, const char *title, const char *caption, int prec)
{
	float *f32 = malloc(sizeof(float) * (size_t)rows * cols);
	for (int i = 0; i < rows * cols; i++)
		f32[i] = (float)v[i];
	gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
	gb_fig_set_values(f, f32, rows, cols);
	free(f32);
	gb_fig_set_title(f, title);
	gb_fig_set_caption(f, caption);
	f->numbers = 1;
	f->precision = prec;
	for (int i = 0; i < rows; i++) {
		printf("  ");
		for (int j = 0; j < cols; j++)
			printf(" %10.*f", prec + 2, v[i * cols + j]);
		printf("\n");
	}
	return show(s, f);
}

/* Exact arithmetic on numbers the user gives: the textbook's worked examples. */
static int cmd_calc(session *s, int argc, char **argv, const char *rest)
{
	if (argc < 3)
		return usage(argv[0]);
	double *v;
	int rows, cols, i;
	if (parse_matrix(argc, argv, 2, &v, &rows, &cols, &i))
		return -1;
	int causal = 0, textbook = 0, rc = 0;
	double eps = 1e-5;
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "--causal"))
			causal = 1;
		else if (!strcmp(argv[i], "--textbook"))
			textbook = 1;
		else if (!strcmp(argv[i], "--eps") && i + 1 < argc) {
			char *end;
			eps = strtod(argv[++i], &end);
			if (*end || !(eps >= 0)) {
				errorf("--eps must be a number >= 0");
				free(v);
				return -1;
			}
		} else {
			errorf("unknown option '%s': --causal, --eps E or --textbook", argv[i]);
			free(v);
			return -1;
		}
	}
	double *out = malloc(sizeof(double) * (size_t)rows * cols);
	if (!strcmp(argv[1], "softmax")) {
		for (int r = 0; r < rows; r++) {
			double mx = -INFINITY, z = 0;
			for (int c = 0; c < cols; c++)
				if (!(causal && c > r))
					mx = fmax(mx, v[r * cols + c]);
			for (int c = 0; c < cols; c++)
				z += out[r * cols + c] = causal && c > r ? 0 : exp(v[r * cols + c] - mx);
			for (int c = 0; c < cols; c++)
				out[r * cols + c] /= z;
		}
		printf("softmax of each row%s:\n", causal ? ", with the causal mask (-inf added where j > i)" : "");
		rc = show_matrix(s, out, rows, cols, causal ? "Masked softmax, computed exactly" : "Softmax, computed exactly",
		                 causal ? "softmax_j(x_ij + m_ij), m_ij = 0 for j <= i and -inf for j > i" : "softmax_j(x_ij) = e^x_ij / sum_k e^x_ik", 2);
	} else if (!strcmp(argv[1], "layernorm")) {
		printf("%-6s %10s %10s %10s\n", "row", "mean", "variance", "sigma");
		for (int r = 0; r < rows; r++) {
			double mu = 0, var = 0;
			for (int c = 0; c < cols; c++)
				mu += v[r * cols + c];
			mu /= cols;
			for (int c = 0; c < cols; c++)
				var += (v[r * cols + c] - mu) * (v[r * cols + c] - mu);
			var /= cols;
			double den = textbook ? sqrt(var) + eps : sqrt(var + eps);
			for (int c = 0; c < cols; c++)
				out[r * cols + c] = (v[r * cols + c] - mu) / den;
			printf("%-6d %10.6f %10.6f %10.6f\n", r + 1, mu, var, sqrt(var));
		}
		char cap[160];
		snprintf(cap, sizeof cap, textbook ? "(h - mean) / (sigma + eps), eps = %g (population sigma)" : "(h - mean) / sqrt(var + eps), eps = %g", eps);
		printf("normalized (gain 1, bias 0), %s:\n", cap);
		rc = show_matrix(s, out, rows, cols, textbook ? "Layer norm, the textbook's form" : "Layer norm, the library form", cap, 3);
	} else {
		errorf("calc knows softmax and layernorm (got '%s')", argv[1]);
		rc = -1;
	}
	free(v);
	free(out);
	return rc;
}

/* The tokens whose embeddings point the most the same way as TEXT's (cosine similarity). */
static int cmd_near(session *s, int argc, char **argv, const char *rest)
{
	if (need_model(s))
		return -1;
	int k = 10;
	char text[256];
	snprintf(text, sizeof text, "%s", rest);
	char *sp = strrchr(text, ' ');
	if (sp && sp[1] && strspn(sp + 1, "0123456789") == strlen(sp + 1)) {
		k = atoi(sp + 1);
		*sp = 0;
		if (k < 1 || k > 100) {
			errorf("K must be a whole number from 1 to 100");
			return -1;
		}
	}
	if (!*text) {
		errorf("usage: near TEXT [K]");
		return -1;
	}
	int *ids, n;
	/* A word inside a sentence carries its space (" cat"): prefer that form when it is one token. */
	char spaced[260];
	snprintf(spaced, sizeof spaced, " %s", text);
	if (encode(s, spaced, &ids, &n))
		return -1;
	if (n != 1) {
		free(ids);
		if (encode(s, text, &ids, &n))
			return -1;
	}
	if (n == 0) {
		errorf("the text gave no tokens");
		free(ids);
		return -1;
	}
	int id = ids[0], D = s->model.cfg.d_model, V = s->model.cfg.vocab;
	char piece[128];
	piece_str(s, id, piece, sizeof piece);
	if (n > 1)
		printf("'%s' is %d tokens; using the first, %s\n", text, n, piece);
	free(ids);
	const float *E = s->model.tok_embed, *e = E + (size_t)id * D;
	double ne = 0;
	for (int d = 0; d < D; d++)
		ne += (double)e[d] * e[d];
	double *sim = malloc(sizeof(double) * (size_t)V);
	for (int v = 0; v < V; v++) {
		double dot = 0, nv = 0;
		for (int d = 0; d < D; d++) {
			dot += (double)e[d] * E[(size_t)v * D + d];
			nv += (double)E[(size_t)v * D + d] * E[(size_t)v * D + d];
		}
		sim[v] = nv > 0 && ne > 0 ? dot / sqrt(ne * nv) : 0;
	}
	printf("tokens whose embedding is closest to %s (cosine similarity):\n", piece);
	sim[id] = -2; /* itself */
	for (int i = 0; i < k; i++) {
		int best = 0;
		for (int v = 1; v < V; v++)
			if (sim[v] > sim[best])
				best = v;
		piece_str(s, best, piece, sizeof piece);
		printf("  %-16s %6.3f\n", piece, sim[best]);
		sim[best] = -3;
	}
	free(sim);
	return 0;
}

/* The sparse attention patterns of efficient Transformers, from their definitions: which keys
 * (columns) each query (row) may see. Each panel's title counts the pairs it computes. */
static int cmd_masks(session *s, int argc, char **argv, const char *rest)
{
	int T = 16, w = 3;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--window") && i + 1 < argc) {
			if (parse_int(argv[++i], 1, 64, &w, "--window"))
				return -1;
		} else if (parse_int(argv[i], 4, 64, &T, "the length"))
			return -1;
	}
	enum { CAUSAL, WINDOW, BLOCK, STRIDED, DILATED, GLOBAL, RANDOM, HYBRID, N_MASKS };
	static const char *names[N_MASKS] = { "causal (full)", "local window", "blocks (chunked)", "strided",
	                                      "dilated window", "global tokens", "random", "window + global + random" };
	gb_figure *g = gb_fig_new(GB_FIG_GRID);
	g->grid_cols = 4;
	g->range = GB_RANGE_FIXED;
	g->vmin = 0;
	g->vmax = 1;
	g->cmap = GB_CMAP_GRAY;
	g->colorbar = 0;
	float *m = malloc(sizeof(float) * (size_t)T * T);
	gb_rng rng;
	gb_rng_seed(&rng, 7);
	for (int k = 0; k < N_MASKS; k++) {
		int pairs = 0;
		for (int i = 0; i < T; i++)
			for (int j = 0; j < T; j++) {
				int d = i - j, on;
				switch (k) {
				case CAUSAL: on = d >= 0; break;
				case WINDOW: on = d >= 0 && d < w; break;
				case BLOCK: on = d >= 0 && i / w == j / w; break;
				case STRIDED: on = d >= 0 && (d < w || d % w == 0); break;
				case DILATED: on = d >= 0 && d % 2 == 0 && d < 2 * w; break;
				case GLOBAL: on = d >= 0 && (d < w || j < 2); break;
				case RANDOM: on = d == 0 || (d > 0 && gb_rng_uniform(&rng) < 0.25); break;
				default: on = d >= 0 && (d < w || j < 2 || gb_rng_uniform(&rng) < 0.15); break;
				}
				m[i * T + j] = (float)on;
				pairs += on;
			}
		gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
		gb_fig_set_values(f, m, T, T);
		char title[96];
		snprintf(title, sizeof title, "%s: %d pairs", names[k], pairs);
		gb_fig_set_title(f, title);
		gb_fig_add_panel(g, f);
	}
	free(m);
	char title[128], cap[256];
	snprintf(title, sizeof title, "Sparse attention patterns for %d tokens (white: the query may see the key)", T);
	snprintf(cap, sizeof cap, "full causal attention computes %d pairs (n(n+1)/2); a window of %d computes about n*%d: "
	                          "L stacked layers reach L(%d - 1) positions back", T * (T + 1) / 2, w, w, w);
	gb_fig_set_title(g, title);
	gb_fig_set_caption(g, cap);
	gb_fig_set_axes(g, "query", "key");
	return show(s, g);
}

static int cmd_bench(session *s, int argc, char **argv, const char *rest)
{
	return bench_all(stdout);
}

static int cmd_tui(session *s, int argc, char **argv, const char *rest)
{
	if (argc != 1)
		return usage(argv[0]);
	return tui_run(s);
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
	{ "tokenize", "[--steps] TEXT", "show the tokens (pieces and ids) of TEXT; --steps replays every BPE merge",
	  "Byte-level BPE starts from the bytes of each word and merges neighbouring pieces, the\n"
	  "merge learned earliest (lowest rank) first, until no learned merge applies. A word the\n"
	  "training text never had stays in several pieces.", cmd_tokenize },
	{ "run", "TEXT | --ids N... [--target-ids N...]", "run TEXT through the model; it becomes the current text",
	  "Everything the trace holds comes from the last run. A text longer than the context keeps\n"
	  "its last tokens (and says so). An encoder-decoder runs TEXT through the encoder and the\n"
	  "decoder start token through the decoder, or --target-ids as the decoder input.", cmd_run },
	{ "step", "[back|N]", "walk the current text through the pipeline, one stage at a time",
	  "Each step shows the next stop of the tour, from the tokens through every layer's norm,\n"
	  "queries and keys, scores, weights, heads and feed-forward to the next token, with a\n"
	  "plain explanation and the figure. 'step back' goes back; 'step N' jumps to stop N.", cmd_step },
	{ "embed", "", "the token embeddings of the current text (token x feature)", "", cmd_embed },
	{ "pe", "[DIM ...]", "the positional encoding (position x dimension), or a line plot of chosen dimensions",
	  "Sinusoidal: PE(i, 2k) = sin(i / 10000^(2k/d)), PE(i, 2k+1) = cos(i / 10000^(2k/d)).\n"
	  "For RoPE it shows the rotation angles, for ALiBi the bias of each head.", cmd_pe },
	{ "qkv", "L H", "queries, keys and values of head H in layer L", "", cmd_head_stage },
	{ "scores", "L H [raw|masked]", "attention scores of head H in layer L: raw q.k, or scaled and masked",
	  "masked (the default) is q.k / sqrt(d_head) with -inf where the causal mask hides a key:\n"
	  "exactly what enters the softmax.", cmd_scores },
	{ "attn", "L H", "attention weights of head H in layer L (query x key; rows sum to 1)", "", cmd_head_stage },
	{ "model", "", "every layer and head's attention weights at once", "", cmd_model },
	{ "ln", "L [K]", "layer norm K (1, 2 or 3) of layer L: statistics of its input and its output", "", cmd_ln },
	{ "ffn", "L", "the feed-forward network's hidden units in layer L", "", cmd_ffn },
	{ "resid", "", "the residual stream's length per token after every sub-layer", "", cmd_resid },
	{ "next", "[K] [--temp T]", "the K most probable next tokens (default 10)", "", cmd_next },
	{ "cross", "L H", "cross-attention of head H in decoder layer L (encoder-decoder models)", "", cmd_head_stage },
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
	{ "set", "engine ref|fast|scalar|avx2|avx512 | threads N | palette auto|viridis|magma|cividis|gray|coolwarm | colors auto|plain|16|256|truecolor | textbook on|off",
	  "change a setting",
	  "engine: the full-precision reference or the optimized kernels (the text runs again).\n"
	  "palette: the colormap of unsigned figures (signed ones keep the diverging map).\n"
	  "colors: the terminal's colour depth (auto follows COLORTERM, TERM and NO_COLOR).\n"
	  "textbook: layer norm divides by (sigma + eps) as the textbook does (the text runs again).", cmd_set },
	{ "generate", "N [--temp T] [--top-k K] [--top-p P] [--seed S]", "extend the current text by N tokens, one step at a time",
	  "Each step samples the next token from the model's distribution at the last position:\n"
	  "softmax(logits / T), keeping the K most probable and then the smallest set reaching P.\n"
	  "--temp 0 is greedy. The text grows, so every view afterwards shows the longer text.\n"
	  "After each token: the earlier tokens the new one attends to most (last layer, mean of heads).\n"
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
	{ "curves", "DIR", "a trained model's loss curves (its loss.csv) as a figure", "", cmd_curves },
	{ "calc", "softmax|layernorm ROW, ROW, ... [--causal] [--eps E] [--textbook]",
	  "compute a softmax or a layer norm of numbers you give, exactly (the textbook's examples)",
	  "Rows are separated by commas: calc softmax 2 0.1 1 1, 0 0.9 0.9 0.9 --causal.\n"
	  "layernorm prints each row's mean, variance and sigma; --textbook divides by (sigma + eps)\n"
	  "as the textbook does, otherwise by sqrt(variance + eps) as libraries do.", cmd_calc },
	{ "near", "TEXT [K]", "the K tokens whose embeddings are closest to TEXT's first token (cosine)", "", cmd_near },
	{ "masks", "[N] [--window W]", "the sparse attention patterns of efficient Transformers, as masks for N tokens",
	  "Causal, local window, chunked blocks, strided, dilated, global tokens, random, and the\n"
	  "window + global + random hybrid (the Longformer/BigBird idea), each with its count of\n"
	  "query-key pairs against full attention's n(n+1)/2.", cmd_masks },
	{ "lens", "", "the logit lens: the top next token if the model stopped after each layer", "", cmd_lens },
	{ "ablate", "L H", "zero head H of layer L and compare the next-token distribution (then restore it)",
	  "The head's output is multiplied by 0 before the heads are merged, the text is run again,\n"
	  "and the five most probable next tokens are shown with and without it. The session's\n"
	  "trace is unchanged afterwards.", cmd_ablate },
	{ "lesson", "[N|NAME|FILE] [--export DIR [--force]] [--answers] [--check] [--interactive]",
	  "list the lessons, or start one (step by step at a terminal)",
	  "A lesson is a text file in lessons/ (lessons/README.md has the format): prose, commands\n"
	  "run as if typed here, pauses and questions. At a terminal: Enter or n goes on, b back,\n"
	  "j N jumps, r repeats, q leaves; anything else runs as a command. In a script or a pipe\n"
	  "the lesson runs straight through and questions show their answers. --export DIR writes\n"
	  "every figure as DIR/01-NAME.png ... and DIR/lesson.md, a handout for pandoc (an existing\n"
	  "DIR needs --force); --answers prints the answer key; --check only checks the file.", cmd_lesson },
	{ "bench", "", "measure the kernels and the forward pass", "", cmd_bench },
	{ "tui", "", "the full-screen explorer: every stage, layer and head under the keys, a cursor on the figure",
	  "Tab and Shift-Tab change the stage, [ and ] the layer, < and > the head; the arrows move\n"
	  "the cursor and the status line shows the value under it with its query and key; e exports\n"
	  "a PNG; : runs any command; ? lists the keys; q comes back to the prompt.", cmd_tui },
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
	const char *names[128];
	int nn = 0;
	for (const command *c = commands; c->name && nn < 128; c++)
		names[nn++] = c->name;
	const char *near = closest(name, names, nn);
	if (near)
		errorf("unknown command '%s': did you mean '%s'? ('help' lists the commands)", name, near);
	else
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
		const char *word = p;
		while (*p && !isspace((unsigned char)*p)) {
			/* A quote groups only when it opens a word: "John's" stays one word. */
			if ((*p == '"' || *p == '\'') && p == word && strchr(p + 1, *p)) {
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
		/* A command ends at a newline, or at a ';' outside quotes; a quote opens only at the
		 * start of a word (an apostrophe inside "John's" is text) and never spans lines. */
		while (*p && *p != '\n' && (q || *p != ';')) {
			int word_start = o == buf || isspace((unsigned char)o[-1]);
			if (!q && (*p == '"' || *p == '\'') && word_start)
				q = *p;
			else if (q && *p == q)
				q = 0;
			*o++ = *p++;
		}
		*o = 0;
		if (q) {
			index++;
			if (by_index)
				snprintf(err_where, sizeof err_where, "%s command %d", where, index);
			else
				snprintf(err_where, sizeof err_where, "%s line %d", where, start);
			errorf("a quote (%c) is not closed on this line", q);
			err_where[0] = 0;
			free(buf);
			return -1;
		}
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
