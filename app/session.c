/* session.c — what every command, view and screen of glassbox shares (session.h): the error
 * line, a session's start and end, the shipped models and the default one, running a text
 * through the engine, the one path every figure takes to the user (session_adopt, which
 * applies the display settings) and its drawing in the terminal and in the projector window
 * (and the window's keys), and token ids as text. */
#include "app/session.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "app/textout.h"
#include "app/view19.h"
#include "app/views.h"
#include "model/formats/llama2c_tok.h"
#include "model/tokenizer/tokenizer.h"
#include "viz/cells.h"
#include "viz/window.h"

/* Where the command being run came from ("-c line 2"), for error lines; "" at the prompt. */
static char err_where[160];

/* The one line the user sees about anything wrong: model/ and viz/ report through gb_err and
 * never print; app/ turns that into this line on stderr. */
void errorf(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "glassbox: %s%s", err_where, err_where[0] ? ": " : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void errorf_where(const char *where)
{
	snprintf(err_where, sizeof err_where, "%s", where);
}

/* Set by SIGINT (main.c installs the handler): long commands stop at the next step. */
volatile sig_atomic_t interrupted;

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
	gb_fig_free(s->prev_fig);
	free(s->text);
	free(s->target);
	memset(s, 0, sizeof *s);
}

/* Where the shipped models are: beside the program (a build tree: ./assets/models), or in
 * the installed data folder (PREFIX/share/glassbox/models, found from the program's own path
 * so `make install PREFIX=...` works without rebuilding). */
int models_dir(char *out, size_t cap)
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
	gb_model_moved(&s->model, &m);
	s->loaded = 1;
	return 0;
}

/* The first command that needs a model, in a script as at the prompt, gets tiny-lm when
 * nothing was loaded (glassbox's default model). */
int need_model(session *s)
{
	if (s->loaded || session_load_default(s) == 0)
		return 0;
	errorf("no model loaded, and the default tiny-lm did not load (%s): try 'load DIR'", session_default_problem());
	return -1;
}

int need_run(session *s)
{
	if (need_model(s))
		return -1;
	if (s->have_run)
		return 0;
	errorf("nothing has run yet: try 'run TEXT'");
	return -1;
}

/* Tokenizes text with the model's tokenizer into a malloc'd array. */
int encode(session *s, const char *text, int **ids, int *n)
{
	gb_err err;
	if (!s->model.tok && !s->model.l2c_tok) {
		errorf("%s has no tokenizer (tokenizer.json, or tokenizer.bin beside a llama2.c file): give token ids with 'run --ids N N ...'", s->model.dir);
		return -1;
	}
	if (gb_model_encode(&s->model, text, strlen(text), ids, n, &err)) {
		errorf("%s", err.msg);
		return -1;
	}
	return 0;
}

/* A run that takes longer than half a second says how far it is, on one line of stderr that
 * it clears at the end (a terminal only: a script's output stays as it was). */
typedef struct run_progress {
	struct timespec t0;
	int shown;
} run_progress;

static double since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

static void on_progress(void *arg, int done, int total)
{
	run_progress *p = arg;
	if (done >= total || !isatty(2) || since(&p->t0) < 0.5)
		return;
	fprintf(stderr, "\r  running: layer %d of %d done (Ctrl-C stops)\033[K", done, total);
	fflush(stderr);
	p->shown = 1;
}

/* Runs the forward pass on ids (and tgt for an encoder-decoder) with the session's engine. */
int forward(session *s, const int *ids, int n, const int *tgt, int n_tgt)
{
	gb_err err;
	gb_fwd_opts o = { 0 };
	run_progress pr = { .shown = 0 };
	clock_gettime(CLOCK_MONOTONIC, &pr.t0);
	o.k = s->k;
	o.textbook_ln = s->textbook;
	mask_opts(s, &o); /* issue 19: the session's sparse pattern (view_mask.c) */
	o.progress = on_progress;
	o.progress_arg = &pr;
	o.stop = &interrupted;
	interrupted = 0; /* a Ctrl-C that ended what came before (a generation) is spent */
	s->have_run = 0;
	int rc = gb_forward(&s->model, ids, n, tgt, n_tgt, &s->trace, &o, &err);
	if (pr.shown)
		fprintf(stderr, "\r\033[K");
	if (rc) {
		interrupted = 0;
		errorf("%s", err.msg);
		return -1;
	}
	s->have_run = 1;
	s->tour = 0;
	s->at = 0;
	return 0;
}

/* Runs the current input again with the session's settings (after a change of engine or
 * convention), so every view stays valid. */
int rerun(session *s)
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

/* ---- figures in the terminal ---- */

static int term_depth(session *s)
{
	if (s->depth >= 0)
		return s->depth;
	return gb_term_depth(getenv("COLORTERM"), getenv("TERM"), getenv("NO_COLOR"), isatty(1), 0);
}

/* The lines a figure is given at the prompt. A heatmap, a bar chart and a token strip get
 * every row they have, one per line, with whole labels: the terminal scrolls, as it does for
 * any long output (the explorer is where a window scrolls). Line plots fill the screen; a
 * grid of panels takes one screen, less a line for its paging hint, or more when one row of
 * whole panels needs it. */
static int figure_lines(const gb_figure *f, int screen)
{
	long need;
	switch (f->kind) {
	case GB_FIG_HEATMAP: need = (long)f->rows + 24; break;
	case GB_FIG_BARS:
	case GB_FIG_STRIP: need = (long)f->rows * f->cols + 8; break;
	case GB_FIG_GRID: { /* a screen, but never too few lines for one whole row of panels */
		int one = 0;
		for (int i = 0; i < f->n_panels; i++)
			one = f->panels[i]->rows > one ? f->panels[i]->rows : one;
		one += 1 + (f->title != NULL) + (f->subtitle != NULL) + 2;
		screen = screen > 4 ? screen - 1 : screen;
		return one > screen ? one : screen;
	}
	default: return screen;
	}
	return need > screen ? (need > 5000 ? 5000 : (int)need) : screen;
}

/* "3-4" or "3" */
static void span(char *buf, size_t cap, int a, int b)
{
	if (a == b)
		snprintf(buf, cap, "%d", a);
	else
		snprintf(buf, cap, "%d-%d", a, b);
}

/* After a grid shown in part: which rows of panels were shown and the command for the others,
 * e.g. "layers 1-2 of 4: model --layers 3-4 for the rest". */
static void page_hint(const gb_cells_shown *sh, const show_page *pg)
{
	char now[32], next[32];
	int a = sh->row0 + 1, b = sh->row0 + sh->rows, n = sh->rows_total;
	if (!pg || !pg->what || (sh->rows >= n && !pg->count))
		return;
	span(now, sizeof now, a, b);
	if (b < n) {
		int e = b + sh->rows < n ? b + sh->rows : n;
		span(next, sizeof next, b + 1, e);
		printf("%s%s %s of %d: %s %s for %s\n", pg->what, a == b ? "" : "s", now, n, pg->cmd, next, e == n ? "the rest" : "the next");
	} else if (a > 1) {
		span(next, sizeof next, 1, sh->rows < a - 1 ? sh->rows : a - 1);
		printf("%s%s %s of %d: %s %s for the first\n", pg->what, a == b ? "" : "s", now, n, pg->cmd, next);
	}
}

/* ---- one path for every figure ---- */

display_settings display_get(const session *s)
{
	display_settings d = { s->palette, s->depth };
	return d;
}

void display_set(session *s, const display_settings *d)
{
	int restyle = d->palette != s->palette;
	s->palette = d->palette;
	s->depth = d->depth;
	if (restyle && s->fig)
		session_adopt(s, s->fig, NULL); /* the figure on show (and its exports) follows at once */
}

static void style_one(const session *s, gb_figure *f)
{
	if (!f->view_cmap_set) {
		f->view_cmap = f->cmap;
		f->view_cmap_set = 1;
	}
	f->cmap = s->palette >= 0 && f->view_cmap != GB_CMAP_COOLWARM ? s->palette : f->view_cmap;
	for (int i = 0; i < f->n_panels; i++)
		if (f->panels[i])
			style_one(s, f->panels[i]);
}

void session_style(const session *s, gb_figure *f)
{
	if (f)
		style_one(s, f);
}

int session_adopt(session *s, gb_figure *f, gb_verr *werr)
{
	if (!f)
		return -1;
	session_style(s, f);
	if (s->fig != f) {
		gb_fig_free(s->prev_fig);
		s->prev_fig = s->fig;
		s->fig = f;
	}
	gb_verr err;
	if (s->win && gb_window_show(s->win, f, werr ? werr : &err)) {
		if (werr)
			return 1;
		errorf("window: %s", err.msg);
	}
	return 0;
}

/* Makes f the current figure and draws it on stdout. NULL (a view's error) fails. */
int show_figure(session *s, gb_figure *f)
{
	return show_figure_page(s, f, NULL);
}

/* Makes f the current figure and draws it on stdout, the rows of panels pg asks for when it
 * is a grid (NULL: from the first, as many as fit). NULL f (a view's error) fails. */
int show_figure_page(session *s, gb_figure *f, const show_page *pg)
{
	if (!f)
		return -1;
	fflush(stdout);
	s->drawn_at = (long)lseek(STDOUT_FILENO, 0, SEEK_CUR); /* -1 on a terminal or a pipe */
	int w, h, depth = term_depth(s);
	text_size(&w, &h);
	int screen = h;
	h = figure_lines(f, h);
	gb_grid g;
	gb_verr err;
	gb_cells_opts o;
	gb_cells_opts_default(&o, depth);
	if (f->kind == GB_FIG_HEATMAP)
		o.half = 0;
	session_style(s, f); /* before the copy below: the copy is what the cells draw */
	/* a grid paged: its rows of panels from pg->first, pg->count of them (0: as fit) */
	gb_figure view = *f;
	if (pg && f->kind == GB_FIG_GRID) {
		int gc = f->grid_cols > 0 ? f->grid_cols : 1, rows = 0;
		o.row0 = pg->first;
		if (pg->count > 0 && (long)(pg->first + pg->count) * gc < f->n_panels)
			view.n_panels = (pg->first + pg->count) * gc;
		/* the rows of panels asked for by name are all shown, one data row per line: the
		 * terminal scrolls */
		for (int i = 0; i < f->n_panels; i++)
			rows = f->panels[i]->rows > rows ? f->panels[i]->rows : rows;
		int need = pg->count * (1 + rows) + 2 + (f->title != NULL) + (f->subtitle != NULL);
		if (pg->count > 0 && need > h && need < 5000)
			h = need;
	}
	char *text = NULL;
	size_t len = 0;
	int rc = gb_grid_init(&g, w, h, &err), win = 0, at = 0;
	if (!rc)
		rc = gb_cells_render(&g, 0, 0, w, h, &view, &o, &err);
	/* A token x token heatmap wider than the terminal (a long input): a square window that
	 * ends on the token in focus (the last, or --at), so the diagonal and the recent keys are
	 * what shows, not the first hundred columns of every row. */
	if (!rc && f->kind == GB_FIG_HEATMAP && f->rows == f->cols && g.shown.cols < f->cols &&
	    g.shown.cols > 0) {
		int c = g.shown.cols;
		at = s->at > 0 && s->at <= f->rows ? s->at : f->rows;
		win = 1;
		o.col0 = o.row0 = at > c ? at - c : 0;
		int rows = at < c ? at : c;
		int h2 = g.used_h - g.shown.rows + rows; /* the lines around the rows stay */
		for (int k = 0; k < 3 && !rc && g.shown.rows != rows; k++) {
			h2 -= g.shown.rows - (k ? rows : g.shown.rows); /* then by what it missed by */
			gb_grid_free(&g);
			rc = gb_grid_init(&g, w, h2 > 8 ? h2 : 8, &err);
			if (!rc)
				rc = gb_cells_render(&g, 0, 0, w, h2 > 8 ? h2 : 8, &view, &o, &err);
		}
	}
	if (!rc)
		rc = gb_cells_write(&g, depth, &text, &len, &err);
	if (rc)
		errorf("%s", err.msg);
	else {
		fwrite(text, 1, len, stdout);
		/* taller than the terminal: the title has scrolled away, so the last line names it */
		int lines = 0;
		for (size_t i = 0; i < len; i++)
			lines += text[i] == '\n';
		if (lines >= screen && f->title && isatty(1) && f->kind != GB_FIG_GRID) {
			printf("%s(above: %s)%s\n", depth > 0 ? "\033[2m" : "", f->title, depth > 0 ? "\033[0m" : "");
		}
		if (win)
			printf("%sa window ending on token %d of %d%s: `--at T` after the command ends it on token T; "
			       "the explorer scrolls%s\n", depth > 0 ? "\033[2m" : "", at, f->rows,
			       at == f->rows ? " (the last)" : "", depth > 0 ? "\033[0m" : "");
		if (f->kind == GB_FIG_GRID && pg) {
			gb_cells_shown sh = g.shown;
			int gc = f->grid_cols > 0 ? f->grid_cols : 1;
			sh.rows_total = (f->n_panels + gc - 1) / gc; /* the whole grid, not the view's */
			page_hint(&sh, pg);
		}
	}
	free(text);
	gb_grid_free(&g);
	/* the figure is the session's even when the terminal could not draw it: the window and
	 * export still can */
	session_adopt(s, f, NULL);
	return rc;
}

/* Shows the view of a stage after recording it as the session's current one. */
int show_stage(session *s, int stage, int layer, int head)
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
	return show_figure(s, f);
}

/* Makes f (a figure the window's keys or mouse made) the session's current figure and shows it
 * in the window only: the terminal is left alone, the prompt keeps its line. */
void window_adopt(session *s, gb_figure *f)
{
	session_adopt(s, f, NULL); /* the one path: the window's own figures get the palette too */
}

/* The window's keys: Left/Right change the head, Up/Down the layer, Tab the stage (Shift-Tab
 * back), q or Escape closes it; and projector.c's own (full screen, text size, temperature,
 * lines). The terminal is left alone: the prompt keeps its line. */
void window_key(session *s, int key, int mods)
{
	int stage = s->stage, layer = s->layer, head = s->head, max_l = s->loaded ? s->model.cfg.n_layer : 1;
	int max_h = s->loaded ? s->model.cfg.n_head : 1;
	if (key == 'q' || key == GB_KEY_ESCAPE) {
		gb_window_close(s->win);
		s->win = NULL;
		return;
	}
	if (window_key_extra(s, key, mods))
		return;
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
	/* the next view with its temperature on the keys */
	gb_figure *f = stage == ST_NEXT ? view_stage_range(s, view_next_temp(s, 10, 1, 1)) : view_stage(s);
	if (!f) {
		s->stage = old[0], s->layer = old[1], s->head = old[2];
		return;
	}
	window_adopt(s, f);
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
		else if (ev.type == GB_WIN_MOTION)
			window_hover(s, ev.x, ev.y);
		else if (ev.type == GB_WIN_CLICK)
			window_click(s, ev.x, ev.y, ev.button);
		else if (ev.type == GB_WIN_LEAVE)
			window_leave(s);
		else if (ev.type == GB_WIN_RESIZE)
			window_resized(s);
	}
	if (s->win)
		window_tick(s);
	return s->win != NULL;
}

/* Length of the valid UTF-8 sequence at b (n bytes left), or 0. */
int utf8_len(const unsigned char *b, size_t n)
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
	if ((s->model.tok && !gb_tok_decode(s->model.tok, ids, n, &raw, &len, &err)) ||
	    (s->model.l2c_tok && !gb_l2c_tok_decode(s->model.l2c_tok, ids, n, &raw, &len, &err))) {
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
void piece_str(session *s, int id, char *out, size_t cap)
{
	size_t len = 0, o = 0;
	const unsigned char *b = gb_model_piece(&s->model, id, &len);
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

/* One head table for `heads`, `eval` and the README a training run writes. */
void print_head_scores(FILE *f, const gb_head_score *sc, int L, int H, int md, const char *groups)
{
	if (md)
		fprintf(f, "| layer | head | previous token (text) | first token | self | previous token (runs) | induction |\n"
		           "|---|---|---|---|---|---|---|\n");
	else
		fprintf(f, "%slayer head  previous    first     self   previous  induction\n", groups);
	for (int i = 0; i < L * H; i++)
		fprintf(f, md ? "| %d | %d | %.3f | %.3f | %.3f | %.3f | %.3f |\n" : "%5d %4d  %8.3f %8.3f %8.3f   %8.3f %10.3f\n",
		        i / H + 1, i % H + 1, (double)sc[i].prev, (double)sc[i].first, (double)sc[i].self,
		        (double)sc[i].prev_rand, (double)sc[i].induction);
}
