/* projector.c — what the projector window does for a teacher, beyond showing the current figure
 * (session.c opens it, shows figures in it and runs its event pump): the status line (the value
 * under the mouse with its query and key tokens, as the explorer's status line says it, or the
 * keys that work on this figure), clicks (a head of the `model` or `heads` grid opens that
 * head), the keys for full screen, text size, the temperature of the `next` view and the lines
 * view of a head, and the text card that replaces a figure after a command that made none
 * (its output is caught on its way to the terminal, which still gets all of it). */
#define _GNU_SOURCE /* fopencookie */
#include "app/session.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/classroom.h"
#include "app/views.h"
#include "viz/window.h"

/* ---- reading a figure ------------------------------------------------------------------- */

static const char *meta_of(const gb_figure *f, const char *key)
{
	for (int i = 0; f && i < f->n_meta; i++)
		if (!strcmp(f->meta_keys[i], key))
			return f->meta_vals[i];
	return NULL;
}

/* The next-token view (view_next_temp marks it with its temperature). */
static int is_next(const gb_figure *f)
{
	return f && f->kind == GB_FIG_BARS && meta_of(f, "Temperature");
}

/* A head's attention weights (a heatmap or the lines): its layer, head and whether it is
 * cross-attention. */
static int attention_head(const gb_figure *f, int *layer, int *head, int *cross)
{
	const char *t = meta_of(f, "Tensor"), *l = meta_of(f, "Layer"), *h = meta_of(f, "Head");
	if (!f || !t || !l || !h || !strstr(t, ".weights") || (f->kind != GB_FIG_HEATMAP && f->kind != GB_FIG_ATTNLINES))
		return 0;
	*layer = atoi(l);
	*head = atoi(h);
	*cross = strstr(t, ".cross.") != NULL;
	return *layer > 0 && *head > 0;
}

/* A value as the explorer's status line writes it (as `print` does, so the two compare). */
static void fmt_value(const gb_figure *top, const gb_figure *m, float v, char *buf, size_t cap)
{
	if (gb_fig_is_masked(top, m, v))
		snprintf(buf, cap, "%s (masked)", (top && top->mask_zero) || (m && m->mask_zero) ? "0" : "-inf");
	else
		snprintf(buf, cap, "%.5g", v);
}

/* ' "·the"' for label i of labels (n of them), or "". */
static void quoted(char *const *labels, int i, int n, char *out, size_t cap)
{
	char tmp[128];
	out[0] = 0;
	if (!labels || i < 0 || i >= n)
		return;
	gb_label_display(labels[i], 24, tmp, sizeof tmp);
	snprintf(out, cap, " \"%s\"", tmp);
}

/* "query 3 "·the" × key 1 "When" = 0.52" for cell (r, c) of heatmap m (a panel of top). */
static void cell_text(const gb_figure *top, const gb_figure *m, int r, int c, char *buf, size_t cap)
{
	char rl[160], cl[160], num[64];
	quoted(m->row_labels, r, m->rows, rl, sizeof rl);
	quoted(m->col_labels, c, m->cols, cl, sizeof cl);
	fmt_value(top, m, m->values[(size_t)r * m->cols + c], num, sizeof num);
	snprintf(buf, cap, "%s %d%s \xC3\x97 %s %d%s = %s", m->row_title ? m->row_title : "row",
	         (m->row_index0 > 0 ? m->row_index0 : 1) + r, rl, m->col_title ? m->col_title : "column",
	         (m->col_index0 > 0 ? m->col_index0 : 1) + c, cl, num);
}

/* The strongest weights of one query (along = 1: a row) or into one key (along = 0: a column)
 * of attention lines, as ' 1 "When" 0.62, 2 "·Mary" 0.31'. */
static void strongest(const gb_figure *f, int idx, int along_row, char *buf, size_t cap)
{
	int n = along_row ? f->cols : f->rows, used[4] = { -1, -1, -1, -1 }, k = 0;
	size_t o = 0;
	buf[0] = 0;
	for (; k < 4; k++) {
		int best = -1;
		for (int j = 0; j < n; j++) {
			float v = along_row ? f->values[(size_t)idx * f->cols + j] : f->values[(size_t)j * f->cols + idx];
			float b = best < 0 ? 0 : along_row ? f->values[(size_t)idx * f->cols + best] : f->values[(size_t)best * f->cols + idx];
			if (!isfinite(v) || v < 0.005f || (best >= 0 && v <= b) || j == used[0] || j == used[1] || j == used[2])
				continue;
			best = j;
		}
		if (best < 0)
			break;
		used[k] = best;
		char q[160];
		quoted(along_row ? f->col_labels : f->row_labels, best, n, q, sizeof q);
		float v = along_row ? f->values[(size_t)idx * f->cols + best] : f->values[(size_t)best * f->cols + idx];
		o += (size_t)snprintf(buf + o, o < cap ? cap - o : 0, "%s %d%s %.2f", k ? "," : "", best + 1, q, v);
		if (o >= cap)
			break;
	}
}

/* ---- the status line -------------------------------------------------------------------- */

/* The keys that work on what the window shows. */
static void hint(session *s)
{
	const gb_figure *f = gb_window_figure(s->win);
	char buf[512];
	int l, h, x, grid_heads = 0;
	const char *first = "";
	if (!f)
		return;
	if (f->kind == GB_FIG_GRID)
		for (int i = 0; i < f->n_panels; i++)
			grid_heads |= attention_head(f->panels[i], &l, &h, &x);
	if (grid_heads)
		first = "click a head to open it \xC2\xB7 ";
	else if (f->kind == GB_FIG_ATTNLINES)
		first = "point at a token for its lines \xC2\xB7 l heatmap \xC2\xB7 ";
	else if (attention_head(f, &l, &h, &x))
		first = "point at a cell for its value \xC2\xB7 l lines \xC2\xB7 ";
	else if (f->kind == GB_FIG_HEATMAP)
		first = "point at a cell for its value \xC2\xB7 ";
	if (is_next(f))
		snprintf(buf, sizeof buf, "temperature T = %s: [ ] or \xE2\x86\x91\xE2\x86\x93 change it \xC2\xB7 F11 full screen "
		         "\xC2\xB7 + \xE2\x88\x92 text size \xC2\xB7 Tab stage \xC2\xB7 q close", meta_of(f, "Temperature"));
	else
		snprintf(buf, sizeof buf, "%sF11 full screen \xC2\xB7 + \xE2\x88\x92 text size \xC2\xB7 \xE2\x86\x90\xE2\x86\x92 head "
		         "\xE2\x86\x91\xE2\x86\x93 layer \xC2\xB7 Tab stage \xC2\xB7 q close", first);
	gb_window_set_status(s->win, buf);
}

static unsigned hinted; /* the show (gb_window_shown) the status line speaks of */

/* Called by the pump: a figure shown since (by any command) gets its keys on the status line. */
void window_tick(session *s)
{
	if (s->win && gb_window_shown(s->win) != hinted) {
		hinted = gb_window_shown(s->win);
		hint(s);
	}
}

/* The mouse at (x, y): the status line says what is under it, the cell is outlined; on the
 * attention lines, the token's lines alone are drawn (as BertViz does on hover). */
void window_hover(session *s, int x, int y)
{
	const gb_figure *f = gb_window_figure(s->win);
	gb_hit hit;
	char buf[1024], more[600];
	if (!f)
		return;
	gb_window_hit(s->win, x, y, &hit);
	if (f->kind == GB_FIG_ATTNLINES && f == s->fig) {
		int fr = hit.what == GB_HIT_QUERY ? hit.row + 1 : 0, fc = hit.what == GB_HIT_KEY ? hit.col + 1 : 0;
		if (fr != s->fig->focus_row || fc != s->fig->focus_col) {
			gb_verr err;
			s->fig->focus_row = fr;
			s->fig->focus_col = fc;
			if (gb_window_show(s->win, s->fig, &err))
				errorf("window: %s", err.msg);
		}
	}
	gb_window_set_hover(s->win, &hit);
	hinted = gb_window_shown(s->win); /* the status line speaks of this show from now on */
	switch (hit.what) {
	case GB_HIT_CELL:
		if (f->kind == GB_FIG_GRID) {
			const gb_figure *m = f->panels[hit.panel];
			int l, h, x2, open = attention_head(m, &l, &h, &x2);
			if (hit.row >= 0) {
				cell_text(f, m, hit.row, hit.col, more, sizeof more);
				snprintf(buf, sizeof buf, "%s: %s%s", m->title ? m->title : "panel", more, open ? " \xC2\xB7 click to open this head" : "");
			} else
				snprintf(buf, sizeof buf, "%s%s", m->title ? m->title : "panel", open ? ": click to open this head" : "");
		} else
			cell_text(f, f, hit.row, hit.col, buf, sizeof buf);
		break;
	case GB_HIT_BAR: {
		int n = f->rows * f->cols;
		char **labels = f->col_labels && f->cols == n ? f->col_labels : f->row_labels && f->rows == n ? f->row_labels : NULL;
		char num[64];
		quoted(labels, hit.row, n, more, sizeof more);
		fmt_value(f, f, f->values[hit.row], num, sizeof num);
		snprintf(buf, sizeof buf, "bar %d of %d%s = %s", hit.row + 1, n, more, num);
		break;
	}
	case GB_HIT_QUERY: {
		char q[160];
		quoted(f->row_labels, hit.row, f->rows, q, sizeof q);
		strongest(f, hit.row, 1, more, sizeof more);
		snprintf(buf, sizeof buf, "%s %d%s attends most to%s", f->row_title ? f->row_title : "query", hit.row + 1, q, more);
		break;
	}
	case GB_HIT_KEY: {
		char k[160];
		quoted(f->col_labels, hit.col, f->cols, k, sizeof k);
		strongest(f, hit.col, 0, more, sizeof more);
		snprintf(buf, sizeof buf, "%s %d%s is attended to most by%s", f->col_title ? f->col_title : "key", hit.col + 1, k,
		         more[0] ? more : " none");
		break;
	}
	default:
		hint(s);
		return;
	}
	gb_window_set_status(s->win, buf);
}

/* The window changed size (full screen, a resize): what the mouse was on has moved, so the
 * status line says the keys again until the mouse moves. */
void window_resized(session *s)
{
	gb_window_set_hover(s->win, NULL);
	hint(s);
}

/* The mouse left the window: no outline, no focus, the keys again. */
void window_leave(session *s)
{
	gb_window_set_hover(s->win, NULL);
	if (s->fig && s->fig == gb_window_figure(s->win) && s->fig->kind == GB_FIG_ATTNLINES &&
	    (s->fig->focus_row || s->fig->focus_col)) {
		gb_verr err;
		s->fig->focus_row = s->fig->focus_col = 0;
		if (gb_window_show(s->win, s->fig, &err))
			errorf("window: %s", err.msg);
	}
	hint(s);
}

/* A click: on a head of a grid (the `model` view, a layer's `heads`), that head's attention. */
void window_click(session *s, int x, int y, int button)
{
	const gb_figure *f = gb_window_figure(s->win);
	gb_hit hit;
	int l, h, cross;
	if (!f || button != 1 || gb_window_hit(s->win, x, y, &hit) != GB_HIT_CELL || hit.panel < 0)
		return;
	if (!attention_head(f->panels[hit.panel], &l, &h, &cross))
		return;
	int old[3] = { s->stage, s->layer, s->head };
	s->stage = cross ? ST_CROSS : ST_ATTN, s->layer = l, s->head = h;
	gb_figure *g = view_stage(s);
	if (!g) {
		s->stage = old[0], s->layer = old[1], s->head = old[2];
		return;
	}
	window_adopt(s, g);
	window_hover(s, x, y);
}

/* ---- keys ------------------------------------------------------------------------------- */

/* Temperatures the keys step through: the ones a class compares. */
static const double TEMPS[] = { 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 2, 3, 5, 10 };
#define N_TEMPS (int)(sizeof TEMPS / sizeof *TEMPS)

/* Text sizes (the raster scale on top of the window's fit). */
static const double SIZES[] = { 0.5, 0.6, 0.75, 0.9, 1, 1.1, 1.25, 1.5, 1.75, 2, 2.5, 3 };
#define N_SIZES (int)(sizeof SIZES / sizeof *SIZES)

static double step_in(const double *v, int n, double now, int up)
{
	if (up) {
		for (int i = 0; i < n; i++)
			if (v[i] > now * 1.0001)
				return v[i];
		return v[n - 1];
	}
	for (int i = n - 1; i >= 0; i--)
		if (v[i] < now * 0.9999)
			return v[i];
	return v[0];
}

/* The window's own keys, before the stage keys of window_key: F11 and f full screen, + and -
 * text size (0 back to 100%), [ and ] (and the up and down arrows) the temperature of the next
 * view, l the lines view of an attention head and back. Returns 1 when the key was one of
 * them. */
int window_key_extra(session *s, int key, int mods)
{
	const gb_figure *f = gb_window_figure(s->win);
	gb_verr err;
	char buf[128];
	classroom_explore(); /* a follower's own key in the window: exploring until `follow` */
	if (key == GB_KEY_F1 + 10 || key == 'f' || key == 'F') {
		if (gb_window_set_fullscreen(s->win, !gb_window_is_fullscreen(s->win), &err))
			errorf("window: %s", err.msg);
		return 1;
	}
	if (key == '+' || key == '=' || key == '-' || key == '0') {
		double now = gb_window_text_scale(s->win);
		double want = key == '0' ? 1 : step_in(SIZES, N_SIZES, now, key != '-');
		if (gb_window_set_scale(s->win, want, &err))
			errorf("window: %s", err.msg);
		snprintf(buf, sizeof buf, "text size %d%% (+ larger, \xE2\x88\x92 smaller, 0 back to 100%%)", (int)lround(want * 100));
		gb_window_set_status(s->win, buf);
		return 1;
	}
	if (is_next(f) && (key == '[' || key == ']' || key == GB_KEY_UP || key == GB_KEY_DOWN)) {
		double now = atof(meta_of(f, "Temperature"));
		double t = step_in(TEMPS, N_TEMPS, now > 0 ? now : 1, key == ']' || key == GB_KEY_UP);
		gb_figure *g = view_stage_range(s, view_next_temp(s, f->rows * f->cols, t, 1));
		if (g)
			window_adopt(s, g);
		return 1;
	}
	if (key == 'l' || key == 'L') {
		int l, h, cross;
		gb_figure *g;
		if (!attention_head(f, &l, &h, &cross))
			return 1;
		g = f->kind == GB_FIG_ATTNLINES ? (cross ? view_cross(s, l, h) : view_attention(s, "weights", l, h))
		                                : view_attn_lines(s, l, h, cross);
		if (g) {
			s->stage = cross ? ST_CROSS : ST_ATTN, s->layer = l, s->head = h;
			window_adopt(s, g);
		}
		return 1;
	}
	(void)mods;
	return 0;
}

/* ---- the text card after a command without a figure ------------------------------------- */

/* Commands that leave the figure as it is: they act on it (export, window, set), write files
 * from the trace (dump), or run a screen of their own (tui, lesson, whose inner commands are
 * watched one by one). */
static int keeps_figure(const char *name)
{
	static const char *keep[] = { "window", "export", "dump", "set", "quit", "tui", "lesson", NULL };
	for (int i = 0; keep[i]; i++)
		if (!strcmp(name, keep[i]))
			return 1;
	return 0;
}

#define CAPTURE_MAX (64 << 10) /* a card shows a screenful: more is never needed */
#define DEPTH_MAX 8

static struct {
	FILE *real, *tee;         /* stdout as it was, and the tee that replaces it */
	char *buf;
	size_t len, cap;
} cap;

static struct frame {
	const gb_figure *fig;     /* the figure before the command */
	size_t start;             /* where its output starts in cap.buf */
	int watched, installed;   /* a card may follow; this frame put the tee in */
} frames[DEPTH_MAX];
static int depth;

static ssize_t tee_write(void *c, const char *b, size_t n)
{
	(void)c;
	fwrite(b, 1, n, cap.real);
	if (cap.len < CAPTURE_MAX) {
		size_t k = n < CAPTURE_MAX - cap.len ? n : CAPTURE_MAX - cap.len;
		if (cap.len + k + 1 > cap.cap) {
			size_t want = (cap.len + k + 1) * 2;
			char *nb = realloc(cap.buf, want);
			if (!nb)
				return (ssize_t)n;
			cap.buf = nb;
			cap.cap = want;
		}
		memcpy(cap.buf + cap.len, b, k);
		cap.len += k;
	}
	return (ssize_t)n;
}

/* Around every command (command_line): while the window is open, what the command prints is
 * caught as well as printed, and a command that showed no figure leaves a card. */
void window_command_begin(session *s, const char *name)
{
	struct frame *fr = depth < DEPTH_MAX ? &frames[depth] : NULL;
	depth++;
	if (!fr)
		return;
	memset(fr, 0, sizeof *fr);
	fr->fig = s->fig;
	if (!s->win || keeps_figure(name))
		return;
	fr->watched = 1;
	if (!cap.tee) {
		cookie_io_functions_t io = { NULL, tee_write, NULL, NULL };
		FILE *t;
		fflush(stdout);
		if (!(t = fopencookie(NULL, "w", io)))
			return;
		setvbuf(t, NULL, _IONBF, 0);
		cap.real = stdout;
		cap.tee = t;
		cap.len = 0;
		stdout = t;
		fr->installed = 1;
	}
	fr->start = cap.len;
}

void window_command_end(session *s, const char *line, int rc)
{
	struct frame fr;
	if (depth <= 0)
		return;
	depth--;
	if (depth >= DEPTH_MAX)
		return;
	fr = frames[depth];
	if (fr.installed) {
		fflush(stdout);
		stdout = cap.real;
		fclose(cap.tee);
		cap.tee = NULL;
		fflush(stdout);
	}
	if (fr.watched && s->win && rc >= 0 && !(s->fig && s->fig != fr.fig)) {
		size_t n = cap.len > fr.start ? cap.len - fr.start : 0;
		char *text = malloc(n + 1);
		gb_verr err;
		if (text) {
			memcpy(text, cap.buf ? cap.buf + fr.start : "", n);
			text[n] = 0;
			if (gb_window_show_text(s->win, line, text, &err))
				errorf("window: %s", err.msg);
			free(text);
		}
	}
	if (fr.installed)
		cap.len = 0;
}
