/* tui.c — the full-screen explorer.
 *
 * Contract: tui_run owns the terminal from newterm to endwin, and nothing else. What it shows
 * comes from the session (view_stage for the figure, the trace's ids for the tokens) and what
 * it changes is the session's view (s->stage, s->layer, s->head, s->fig), so the prompt, the
 * SDL window and `export` agree with it during and after. Figures are laid out by viz/cells
 * (gb_cells_render into a gb_grid the size of the figure area) and the cells copied to
 * ncurses: nothing here draws a figure itself. Commands and views print (errors on stderr,
 * figures on stdout); while they run both go to a temporary file, and what they said is shown
 * in the status area or an overlay, so nothing ever writes to the screen behind ncurses.
 *
 * The screen (W x H, at least MIN_W x MIN_H; smaller gets one message until enlarged):
 *   0          the current text's tokens, the cursor's query and key marked
 *   1          the stage selector, layer and head
 *   2 .. H-4   the figure (its caption is left out: the formula has a line of its own)
 *   H-3        the formula (the figure's caption)
 *   H-2        status: the value under the cursor with its row and column labels
 *   H-1        a message, the key hints, or the `:` line
 * Heatmaps are laid out one data row per line (no half blocks), so the cursor is one cell. */
#include "app/tui.h"

#include <curses.h>
#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wchar.h>

#include "app/commands.h"
#include "app/complete.h"
#include "app/views.h"
#include "viz/cells.h"
#include "viz/export.h"
#include "viz/window.h"

enum { MIN_W = 80, MIN_H = 24 };
enum { TOP = 2, BELOW = 3 };   /* lines above and below the figure area */

/* How figure colours reach the terminal, best first. */
enum { CM_NONE, CM_16, CM_256, CM_DEFINE, CM_DIRECT };

#define PAIR_SLOTS 16384      /* hash slots for colour pairs; at most half are used */
#define RGB_SLOTS 4096        /* hash slots for redefined palette entries (<= 240 used) */
#define HIST_N 32
#define EDIT_MAX 512

typedef struct tui {
	session *s;
	int W, H;

	/* what is on show */
	gb_figure *fig;           /* == s->fig when there is a figure; NULL and err says why */
	char err[512];
	int custom;               /* fig came from a ':' command (show NAME, model...), not the stage */
	int st, ly, hd;           /* the stage, layer and head fig was made for */
	gb_figure *made;          /* the s->fig last made or adopted here: another one means the
	                           * window's keys (window_key) changed the view */
	int zoom, focus;          /* GRID: the chosen panel, and whether it fills the area */
	int cr, cc;               /* the cursor: data row and column (a bar is a row) */
	int row0, col0, prow0;    /* scroll: heatmap or bars window, first row of panels */

	/* the figure's layout, redone every frame (it is cheap) */
	gb_grid grid, probe;      /* (H - TOP - BELOW, W); probe: the same at full colour */
	char rerr[512];           /* the layout's own error (area too small for this figure) */
	int kind;                 /* the kind drawn: a zoomed GRID draws a HEATMAP; -1 nothing */
	int dx, dy;               /* grid cell of the window's first data cell, -1 unknown */
	int bars_top;             /* BARS: lines above the first bar */
	gb_cells_shown shown;

	/* colour */
	int cmode, depth, maxpair, maxcolor;
	long long *pkey;          /* (PAIR_SLOTS) (fg, bg) keys, 0 = empty */
	int *pval;                /* (PAIR_SLOTS) */
	int next_pair, pairs_full;
	unsigned *ckey;           /* (RGB_SLOTS) rgb + 1, 0 = empty */
	int *cval;                /* (RGB_SLOTS) */
	uint8_t cdef[256][3];     /* palette entries defined so far, for the nearest when full */
	int cnum[256], ncdef, next_color, colors_full;

	/* messages, overlays, the ':' line */
	char msg[1024];
	int msg_err;
	int help;
	char **out;               /* the last command's output, for the overlay */
	int n_out, out_top, show_out;
	char out_title[256];
	int editing;
	wchar_t ebuf[EDIT_MAX];
	int elen, epos;
	char *hist[HIST_N];
	int n_hist;
	FILE *capf;
	int save1, save2;
	int quit, quit_all;
} tui;

/* ---- small text helpers ------------------------------------------------------------- */

static void set_msg(tui *t, int is_err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void set_msg(tui *t, int is_err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof t->msg, fmt, ap);
	va_end(ap);
	t->msg_err = is_err;
}

/* s cut to at most maxw terminal columns (control characters as '?', so a token or a line
 * of output cannot move the cursor); returns the columns used. */
static int clip(const char *s, int maxw, char *out, size_t cap)
{
	size_t k = 0;
	int w = 0, n;
	uint32_t cp;
	out[0] = 0;
	if (!s || maxw <= 0)
		return 0;
	while ((n = gb_utf8_decode(s, &cp)) > 0) {
		int cw = cp == GB_UTF8_BAD ? 1 : gb_cp_width(cp);
		int bad = cp == GB_UTF8_BAD || cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0);
		if (bad)
			cw = 1;
		if (w + cw > maxw || k + (size_t)n + 1 > cap)
			break;
		if (bad)
			out[k++] = '?';
		else {
			memcpy(out + k, s, (size_t)n);
			k += (size_t)n;
		}
		w += cw;
		s += n;
	}
	out[k] = 0;
	return w;
}

static int put_text(int y, int x, int maxw, const char *s, attr_t a)
{
	char buf[4096];
	if (y < 0 || y >= LINES || x >= COLS)
		return 0;
	if (x + maxw > COLS)
		maxw = COLS - x;
	int w = clip(s, maxw, buf, sizeof buf);
	attron(a);
	mvaddstr(y, x, buf);
	attroff(a);
	return w;
}

/* Removes terminal escapes (the SGR colours of a figure a command drew) and carriage
 * returns, in place. */
static void strip_escapes(char *s)
{
	char *o = s;
	for (char *p = s; *p;) {
		if (*p == 27) {
			p++;
			if (*p == '[') {
				p++;
				while (*p && !(*p >= 0x40 && *p <= 0x7E))
					p++;
				if (*p)
					p++;
			} else if (*p == ']') { /* OSC: up to BEL or ST */
				while (*p && *p != 7 && !(p[0] == 27 && p[1] == '\\'))
					p++;
				if (*p == 7)
					p++;
				else if (*p)
					p += 2;
			} else if (*p)
				p++;
		} else if (*p == '\r')
			p++;
		else
			*o++ = *p++;
	}
	*o = 0;
}

static int blank_line(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return !*s;
}

/* "glassbox: " and "glassbox: -c command 1: " mean nothing on this screen. */
static const char *no_prefix(const char *s)
{
	if (!strncmp(s, "glassbox: ", 10))
		s += 10;
	return s;
}

static void free_out(tui *t)
{
	for (int i = 0; i < t->n_out; i++)
		free(t->out[i]);
	free(t->out);
	t->out = NULL;
	t->n_out = t->out_top = 0;
}

/* Splits text into t->out (trailing blank lines dropped). */
static void keep_out(tui *t, char *text)
{
	free_out(t);
	int cap = 64;
	t->out = malloc(sizeof *t->out * (size_t)cap);
	for (char *p = text; p && *p;) {
		char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (t->n_out == cap)
			t->out = realloc(t->out, sizeof *t->out * (size_t)(cap *= 2));
		t->out[t->n_out] = malloc(len + 1);
		memcpy(t->out[t->n_out], p, len);
		t->out[t->n_out++][len] = 0;
		p = nl ? nl + 1 : NULL;
	}
	while (t->n_out && blank_line(t->out[t->n_out - 1]))
		free(t->out[--t->n_out]);
}

/* ---- what commands and views print goes to a file, not the screen -------------------- */

static int cap_begin(tui *t)
{
	fflush(stdout);
	fflush(stderr);
	if (!t->capf && !(t->capf = tmpfile()))
		return -1;
	int fd = fileno(t->capf);
	if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET) < 0)
		return -1;
	t->save1 = dup(1);
	t->save2 = dup(2);
	if (t->save1 < 0 || t->save2 < 0) {
		if (t->save1 >= 0)
			close(t->save1);
		if (t->save2 >= 0)
			close(t->save2);
		t->save1 = t->save2 = -1;
		return -1;
	}
	dup2(fd, 1);
	dup2(fd, 2);
	return 0;
}

/* Restores the terminal and returns what was written (malloc'd, escapes stripped; at most the
 * last 4 MB, which is more than any screen can show). */
static char *cap_end(tui *t)
{
	fflush(stdout);
	fflush(stderr);
	if (t->save1 < 0)
		return strdup("");
	dup2(t->save1, 1);
	dup2(t->save2, 2);
	close(t->save1);
	close(t->save2);
	t->save1 = t->save2 = -1;
	int fd = fileno(t->capf);
	off_t end = lseek(fd, 0, SEEK_END), from = end > (4 << 20) ? end - (4 << 20) : 0;
	if (end < 0)
		end = from = 0;
	char *buf = malloc((size_t)(end - from) + 1);
	ssize_t got = end > from ? pread(fd, buf, (size_t)(end - from), from) : 0;
	buf[got > 0 ? got : 0] = 0;
	for (ssize_t i = 0; i < got; i++)
		if (!buf[i] || buf[i] == '\t')
			buf[i] = ' ';
	strip_escapes(buf);
	return buf;
}

static void last_line(const char *text, char *out, size_t cap)
{
	const char *best = NULL, *p = text;
	size_t blen = 0;
	out[0] = 0;
	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		int blank = 1;
		for (size_t i = 0; i < len; i++)
			blank &= p[i] == ' ' || p[i] == '\t';
		if (!blank)
			best = p, blen = len;
		p = nl ? nl + 1 : NULL;
	}
	if (best) {
		if (blen >= cap)
			blen = cap - 1;
		memcpy(out, best, blen);
		out[blen] = 0;
		memmove(out, no_prefix(out), strlen(no_prefix(out)) + 1);
	}
}

/* ---- colour --------------------------------------------------------------------------- */

static void colours_init(tui *t)
{
	const char *nc = getenv("NO_COLOR");
	t->cmode = CM_NONE;
	t->depth = GB_DEPTH_PLAIN;
	if (t->s->depth == GB_DEPTH_PLAIN || (nc && *nc) || !has_colors() || start_color() != OK)
		return;
	use_default_colors();
	if (COLOR_PAIRS < 2)
		return;
	if (COLORS >= 0x1000000)
		t->cmode = CM_DIRECT, t->depth = GB_DEPTH_TRUE;
	else if (COLORS >= 256 && can_change_color())
		t->cmode = CM_DEFINE, t->depth = GB_DEPTH_TRUE;
	else if (COLORS >= 256)
		t->cmode = CM_256, t->depth = GB_DEPTH_256;
	else if (COLORS >= 8)
		t->cmode = CM_16, t->depth = GB_DEPTH_16;
	else
		return;
	/* A depth chosen for the session (lower than the terminal's) wins. */
	if (t->s->depth == GB_DEPTH_16 && t->depth > GB_DEPTH_16)
		t->cmode = CM_16, t->depth = GB_DEPTH_16;
	else if (t->s->depth == GB_DEPTH_256 && t->depth > GB_DEPTH_256)
		t->cmode = CM_256, t->depth = GB_DEPTH_256;
	t->maxpair = COLOR_PAIRS < PAIR_SLOTS / 2 ? COLOR_PAIRS : PAIR_SLOTS / 2;
	t->maxcolor = COLORS < 256 ? COLORS : 256;
	t->pkey = calloc(PAIR_SLOTS, sizeof *t->pkey);
	t->pval = calloc(PAIR_SLOTS, sizeof *t->pval);
	t->ckey = calloc(RGB_SLOTS, sizeof *t->ckey);
	t->cval = calloc(RGB_SLOTS, sizeof *t->cval);
	if (!t->pkey || !t->pval || !t->ckey || !t->cval) {
		t->cmode = CM_NONE;
		t->depth = GB_DEPTH_PLAIN;
		return;
	}
	t->next_pair = 1;
	t->next_color = 16; /* 0..15 are the user's own palette: never redefined */
}

/* Called before a frame: a cache that filled up during the last one starts again (every cell
 * is drawn anew each frame, so nothing on screen keeps an old definition). */
static void colours_frame(tui *t)
{
	if (t->cmode == CM_NONE)
		return;
	if (t->pairs_full) {
		memset(t->pkey, 0, PAIR_SLOTS * sizeof *t->pkey);
		t->next_pair = 1;
		t->pairs_full = 0;
	}
	if (t->colors_full) {
		memset(t->ckey, 0, RGB_SLOTS * sizeof *t->ckey);
		t->ncdef = 0;
		t->next_color = 16;
		t->colors_full = 0;
	}
}

static int define_colour(tui *t, const uint8_t exact[3])
{
	/* 32 levels a channel (an error of 4/255 at most): a colormap is a curve through the
	 * cube, so one crosses at most ~96 of these, and the 240 free entries hold a whole figure */
	uint8_t rgb[3];
	for (int i = 0; i < 3; i++)
		rgb[i] = (uint8_t)((exact[i] * 31 + 127) / 255 * 255 / 31);
	unsigned key = ((unsigned)rgb[0] << 16 | (unsigned)rgb[1] << 8 | rgb[2]) + 1;
	unsigned h = (key * 2654435761u) >> 20 & (RGB_SLOTS - 1);
	while (t->ckey[h]) {
		if (t->ckey[h] == key)
			return t->cval[h];
		h = (h + 1) & (RGB_SLOTS - 1);
	}
	int n;
	if (t->next_color < t->maxcolor && t->ncdef < 256) {
		n = t->next_color++;
		init_extended_color(n, rgb[0] * 1000 / 255, rgb[1] * 1000 / 255, rgb[2] * 1000 / 255);
		memcpy(t->cdef[t->ncdef], rgb, 3);
		t->cnum[t->ncdef++] = n;
	} else {
		/* The palette is full for this frame: the nearest colour already defined. */
		int best = 0, bd = -1;
		t->colors_full = 1;
		for (int i = 0; i < t->ncdef; i++) {
			int d0 = t->cdef[i][0] - rgb[0], d1 = t->cdef[i][1] - rgb[1], d2 = t->cdef[i][2] - rgb[2];
			int d = d0 * d0 + d1 * d1 + d2 * d2;
			if (bd < 0 || d < bd)
				bd = d, best = i;
		}
		n = t->ncdef ? t->cnum[best] : gb_xterm256(rgb);
	}
	t->ckey[h] = key;
	t->cval[h] = n;
	return n;
}

static int colour_of(tui *t, const uint8_t rgb[3])
{
	switch (t->cmode) {
	case CM_DIRECT: return rgb[0] << 16 | rgb[1] << 8 | rgb[2];
	case CM_DEFINE: return define_colour(t, rgb);
	case CM_256: return gb_xterm256(rgb);
	case CM_16: return gb_ansi16(rgb) & (COLORS >= 16 ? 15 : 7);
	}
	return -1;
}

static int pair_for(tui *t, int fg, int bg)
{
	if (t->cmode == CM_NONE || (fg < 0 && bg < 0))
		return 0;
	long long key = (long long)(fg + 2) << 26 | (bg + 2);
	unsigned h = (unsigned)(((unsigned long long)key * 0x9E3779B97F4A7C15ull) >> 50) & (PAIR_SLOTS - 1);
	while (t->pkey[h]) {
		if (t->pkey[h] == key)
			return t->pval[h];
		h = (h + 1) & (PAIR_SLOTS - 1);
	}
	if (t->next_pair >= t->maxpair) {
		t->pairs_full = 1;
		return 0;
	}
	int p = t->next_pair++;
	init_extended_pair(p, fg, bg);
	t->pkey[h] = key;
	t->pval[h] = p;
	return p;
}

static void put_cell(tui *t, int y, int x, const gb_cell *c, attr_t extra)
{
	wchar_t wc[2] = { c->cp ? (wchar_t)c->cp : L' ', 0 };
	attr_t a = extra;
	if (c->attr & GB_ATTR_BOLD)
		a |= A_BOLD;
	if (c->attr & GB_ATTR_DIM)
		a |= A_DIM;
	if (c->attr & GB_ATTR_UNDERLINE)
		a |= A_UNDERLINE;
	int fg = -1, bg = -1;
	if (t->cmode != CM_NONE) {
		if (c->attr & GB_ATTR_FG)
			fg = colour_of(t, c->fg);
		if (c->attr & GB_ATTR_BG)
			bg = colour_of(t, c->bg);
	}
	int pair = pair_for(t, fg, bg);
	cchar_t cc;
	setcchar(&cc, wc, a, 0, &pair);
	mvadd_wch(y, x, &cc);
}

/* ---- the figure on show ----------------------------------------------------------------- */

static int n_layers(session *s) { return s->loaded ? s->model.cfg.n_layer : 1; }
static int n_heads(session *s) { return s->loaded ? s->model.cfg.n_head : 1; }
static int has_cross(session *s) { return s->loaded && s->model.cfg.encdec; }

static void window_show(tui *t)
{
	gb_verr err;
	if (t->s->win && t->s->fig && gb_window_show(t->s->win, t->s->fig, &err))
		set_msg(t, 1, "window: %s", err.msg);
}

static void remember(tui *t)
{
	t->st = t->s->stage;
	t->ly = t->s->layer;
	t->hd = t->s->head;
	t->made = t->s->fig;
}

/* The focus follows the head on the heads stage, where each panel is one. */
static void fit_focus(tui *t)
{
	if (!t->fig || t->fig->kind != GB_FIG_GRID || t->fig->n_panels < 1) {
		t->zoom = 0;
		t->focus = 0;
		return;
	}
	if (t->s->stage == ST_HEADS && !t->custom)
		t->focus = t->s->head - 1;
	if (t->focus < 0 || t->focus >= t->fig->n_panels)
		t->focus = 0;
}

/* Makes the stage's figure (s->stage, s->layer, s->head) the one on show. */
static void rebuild(tui *t)
{
	session *s = t->s;
	t->custom = 0;
	t->fig = NULL;
	t->err[0] = 0;
	if (s->layer < 1 || s->layer > n_layers(s))
		s->layer = s->layer < 1 ? 1 : n_layers(s);
	if (s->head < 1 || s->head > n_heads(s))
		s->head = s->head < 1 ? 1 : n_heads(s);
	if (!s->loaded)
		snprintf(t->err, sizeof t->err, "no model loaded: press : and type  load DIR  (models lists the shipped ones)");
	else if (!s->have_run)
		snprintf(t->err, sizeof t->err, "no text yet: press : and type  run TEXT  (e.g.  run the cat sat on the mat)");
	else {
		/* views report a bad selection on stderr: catch it for the figure area */
		int capped = cap_begin(t) == 0;
		gb_figure *f = view_stage(s);
		char *said = capped ? cap_end(t) : NULL;
		if (f) {
			gb_fig_free(s->fig);
			s->fig = t->fig = f;
			window_show(t);
		} else {
			last_line(said ? said : "", t->err, sizeof t->err);
			if (!t->err[0])
				snprintf(t->err, sizeof t->err, "the %s stage cannot be shown for this model", stage_name(s->stage));
		}
		free(said);
	}
	remember(t);
	fit_focus(t);
}

/* After the window's event pump: its keys may have moved the view (window_key made the new
 * stage's figure and freed the old one, so nothing may point into the old one any more). */
static int sync_window(tui *t)
{
	session *s = t->s;
	if (s->stage == t->st && s->layer == t->ly && s->head == t->hd && s->fig == t->made)
		return 0;
	if (s->fig && s->have_run && s->fig != t->made) {
		t->fig = s->fig;
		t->custom = 0;
		t->err[0] = 0;
		t->zoom = 0;
		remember(t);
		fit_focus(t);
	} else
		rebuild(t);
	return 1;
}

static void set_view(tui *t, int stage, int layer, int head)
{
	session *s = t->s;
	if (stage != s->stage || t->custom)
		t->zoom = 0;
	s->stage = stage;
	s->layer = layer;
	s->head = head;
	rebuild(t);
}

static void next_stage(tui *t, int dir)
{
	int st = t->s->stage;
	if (t->custom && dir > 0)
		st = st - 1; /* from a command's figure, Tab comes back to the stage it left */
	do
		st = (st + dir + ST_N) % ST_N;
	while (st == ST_CROSS && !has_cross(t->s));
	set_view(t, st, t->s->layer, t->s->head);
}

/* The figure drawn: the shown one, or its chosen panel when zoomed. */
static const gb_figure *drawn(const tui *t)
{
	if (!t->fig)
		return NULL;
	if (t->zoom && t->fig->kind == GB_FIG_GRID && t->focus < t->fig->n_panels)
		return t->fig->panels[t->focus];
	return t->fig;
}

/* A zoomed panel as a figure of its own, sharing the panel's arrays: the grid's title before
 * its own, the grid's colormap and range (so it keeps the colours it had among the others),
 * the grid's caption and, when it has none, its metadata. */
static void zoom_view(const tui *t, gb_figure *v, char *title, size_t cap)
{
	const gb_figure *g = t->fig, *p = g->panels[t->focus];
	float lo, hi;
	int bad;
	gb_fig_range(g, &lo, &hi, &bad);
	*v = *p;
	snprintf(title, cap, "%s: %s", g->title ? g->title : "", p->title ? p->title : "");
	v->title = title;
	v->caption = g->caption;
	v->cmap = g->cmap;
	v->range = GB_RANGE_FIXED;
	v->vmin = lo;
	v->vmax = hi;
	v->colorbar = 1;
	if (!p->n_meta) {
		v->meta_keys = g->meta_keys;
		v->meta_vals = g->meta_vals;
		v->n_meta = g->n_meta;
	}
}

/* ---- layout ------------------------------------------------------------------------------- */

/* Moves a window [*start, *start + n) so it holds pos; first is where the layout put it.
 * Returns 1 when it had to move. */
static int follow(int *start, int first, int n, int pos)
{
	*start = first;
	if (n <= 0)
		return 0;
	if (pos < first)
		*start = pos;
	else if (pos >= first + n)
		*start = pos - n + 1;
	return *start != first;
}

/* Where the data begins: the first cell with a background colour is the top-left data cell
 * (titles, labels and notices have none; the colorbar and caption come after the data). At
 * plain depth nothing has a colour, so the same figure is laid out at full colour to find it;
 * without half blocks both depths give the same layout. */
static void locate(tui *t, const gb_figure *v, const gb_cells_opts *o)
{
	gb_grid *g = &t->grid;
	gb_verr err;
	if (t->depth == GB_DEPTH_PLAIN) {
		gb_cells_opts q = *o;
		q.depth = GB_DEPTH_TRUE;
		gb_grid_clear(&t->probe);
		if (gb_cells_render(&t->probe, 0, 0, t->probe.w, t->probe.h, v, &q, &err))
			return;
		g = &t->probe;
	}
	for (int y = 0; y < g->used_h; y++)
		for (int x = 0; x < g->w; x++)
			if (g->cells[(size_t)y * g->w + x].attr & GB_ATTR_BG) {
				t->dx = x;
				t->dy = y;
				return;
			}
}

static void layout(tui *t)
{
	gb_grid *g = &t->grid;
	gb_grid_clear(g);
	t->dx = t->dy = -1;
	t->rerr[0] = 0;
	t->kind = -1;
	memset(&t->shown, 0, sizeof t->shown);
	const gb_figure *f = t->fig;
	if (!f)
		return;
	gb_figure v = *f, panel;
	const gb_figure **panels = NULL;
	char title[1024];
	if (f->kind == GB_FIG_GRID && f->n_panels > 0) {
		if (t->zoom)
			zoom_view(t, &v, title, sizeof title);
		else {
			/* the chosen panel wears a mark on its title */
			panels = malloc(sizeof *panels * (size_t)f->n_panels);
			memcpy(panels, f->panels, sizeof *panels * (size_t)f->n_panels);
			panel = *f->panels[t->focus];
			snprintf(title, sizeof title, "\xE2\x96\xB6%s", panel.title ? panel.title : "");
			panel.title = title;
			panels[t->focus] = &panel;
			v.panels = (gb_figure **)panels;
		}
	}
	v.caption = NULL;
	t->kind = v.kind;
	const gb_figure *d = drawn(t);
	if (d->rows > 0 && d->cols > 0) { /* the figure may have changed under the cursor */
		int n = v.kind == GB_FIG_BARS ? d->rows * d->cols : d->rows;
		t->cr = t->cr >= n ? n - 1 : t->cr < 0 ? 0 : t->cr;
		if (v.kind == GB_FIG_HEATMAP)
			t->cc = t->cc >= d->cols ? d->cols - 1 : t->cc < 0 ? 0 : t->cc;
	}
	gb_cells_opts o;
	gb_cells_opts_default(&o, t->depth);
	if (v.kind == GB_FIG_HEATMAP)
		o.half = 0;
	gb_verr err;
	for (int pass = 0; pass < 4; pass++) {
		o.row0 = v.kind == GB_FIG_GRID ? t->prow0 : t->row0;
		o.col0 = t->col0;
		gb_grid_clear(g);
		if (gb_cells_render(g, 0, 0, g->w, g->h, &v, &o, &err)) {
			snprintf(t->rerr, sizeof t->rerr, "%s", err.msg);
			break;
		}
		gb_cells_shown sh = g->shown;
		int moved = 0;
		if (v.kind == GB_FIG_HEATMAP) {
			moved |= follow(&t->row0, sh.row0, sh.rows, t->cr);
			moved |= follow(&t->col0, sh.col0, sh.cols, t->cc);
		} else if (v.kind == GB_FIG_BARS)
			moved = follow(&t->row0, sh.row0, sh.rows, t->cr);
		else if (v.kind == GB_FIG_GRID)
			moved = follow(&t->prow0, sh.row0, sh.rows, t->focus / (sh.cols > 0 ? sh.cols : 1));
		else if (v.kind == GB_FIG_STRIP)
			t->col0 = sh.col0;
		if (!moved)
			break;
	}
	t->shown = g->shown;
	t->bars_top = v.title != NULL;
	if (!t->rerr[0] && v.kind == GB_FIG_HEATMAP && v.rows > 0 && v.cols > 0)
		locate(t, &v, &o);
	free(panels);
}

/* ---- drawing -------------------------------------------------------------------------- */

/* Which tokens the cursor points at, when the figure's rows or columns are the text's tokens:
 * the query (row) and the key (column), or -1. */
static void cursor_tokens(const tui *t, int n, int *qi, int *ki)
{
	const gb_figure *f = drawn(t);
	*qi = *ki = -1;
	if (!f || t->kind != GB_FIG_HEATMAP || has_cross(t->s))
		return;
	const char *rt = f->row_title ? f->row_title : "", *ct = f->col_title ? f->col_title : "";
	if (f->rows == n && (!strcmp(rt, "query") || !strcmp(rt, "token") || !strcmp(rt, "position")))
		*qi = t->cr;
	if (f->cols == n && (!strcmp(ct, "key") || !strcmp(ct, "token")))
		*ki = t->cc;
}

static void draw_pieces(int y, int x0, int x1, char **labels, int n, int qi, int ki)
{
	char (*lab)[64] = malloc(sizeof *lab * (size_t)(n ? n : 1));
	int *w = malloc(sizeof *w * (size_t)(n ? n : 1));
	for (int i = 0; i < n; i++) {
		gb_label_display(labels[i], 16, lab[i], sizeof lab[i]);
		w[i] = gb_utf8_width(lab[i]);
	}
	/* start late enough that the marked token is on screen */
	int keep = qi > ki ? qi : ki, start = 0;
	if (keep >= 0)
		for (;;) {
			int used = start ? 2 : 0;
			for (int i = start; i <= keep; i++)
				used += w[i] + 1;
			if (used + 2 <= x1 - x0 || start >= keep)
				break;
			start++;
		}
	int x = x0;
	if (start) {
		put_text(y, x, 2, "\xE2\x80\xA6", A_DIM);
		x += 2;
	}
	for (int i = start; i < n; i++) {
		int room = x1 - x - (i < n - 1 ? 2 : 0);
		if (w[i] > room) {
			put_text(y, x, x1 - x, "\xE2\x80\xA6", A_DIM);
			break;
		}
		attr_t a = i == qi ? A_REVERSE | A_BOLD : 0;
		if (i == ki)
			a |= A_UNDERLINE | A_BOLD;
		put_text(y, x, w[i], lab[i], a);
		x += w[i] + 1;
	}
	free(lab);
	free(w);
}

static void draw_tokens(tui *t)
{
	session *s = t->s;
	int x = put_text(0, 0, 8, "tokens ", A_DIM);
	if (!s->loaded || !s->have_run) {
		put_text(0, x, COLS - x, "(none yet)", A_DIM);
		return;
	}
	int n, m = 0, qi, ki;
	char **l = token_labels(s, "", &n), **d = NULL;
	cursor_tokens(t, n, &qi, &ki);
	if (has_cross(s)) { /* the source, then what the decoder has read */
		d = token_labels(s, "dec.", &m);
		int half = (COLS - x) * 3 / 5;
		draw_pieces(0, x, x + half - 3, l, n, -1, -1);
		put_text(0, x + half - 2, 2, "\xE2\x86\x92", A_DIM);
		draw_pieces(0, x + half, COLS, d, m, -1, -1);
		free_labels(d, m);
	} else
		draw_pieces(0, x, COLS, l, n, qi, ki);
	free_labels(l, n);
}

/* Stages that read the layer and the head, so the selector can dim what does not apply. */
static int uses_layer(int st) { return st == ST_QKV || st == ST_SCORES || st == ST_ATTN || st == ST_HEADS || st == ST_LN || st == ST_FFN || st == ST_CROSS; }
static int uses_head(int st) { return st == ST_QKV || st == ST_SCORES || st == ST_ATTN || st == ST_CROSS || st == ST_HEADS; }

static void draw_selector(tui *t)
{
	session *s = t->s;
	char lh[64];
	snprintf(lh, sizeof lh, "layer %d/%d  head %d/%d", s->layer, n_layers(s), s->head, n_heads(s));
	int right = (int)strlen(lh), x = 0;
	for (int st = 0; st < ST_N; st++) {
		if (st == ST_CROSS && !has_cross(s))
			continue;
		char item[32];
		int cur = st == s->stage && !t->custom;
		snprintf(item, sizeof item, cur ? "[%s]" : "%s", stage_name(st));
		if (x)
			x += put_text(1, x, 1, " ", 0);
		x += put_text(1, x, COLS - x - right - 2, item, cur ? A_REVERSE | A_BOLD : 0);
	}
	int cur_l = uses_layer(s->stage) && !t->custom, cur_h = uses_head(s->stage) && !t->custom;
	char a[32], b[32];
	snprintf(a, sizeof a, "layer %d/%d", s->layer, n_layers(s));
	snprintf(b, sizeof b, "head %d/%d", s->head, n_heads(s));
	x = COLS - right;
	x += put_text(1, x, COLS - x, a, cur_l ? A_BOLD : A_DIM);
	x += put_text(1, x, COLS - x, "  ", 0);
	put_text(1, x, COLS - x, b, cur_h ? A_BOLD : A_DIM);
}

/* Words of msg wrapped to w columns from line y, at most n lines. */
static int draw_wrapped(int y, int x, int w, int n, const char *msg, attr_t a)
{
	char line[1024];
	const char *p = msg;
	int used = 0;
	while (*p && used < n) {
		int cols = 0;
		const char *q = p, *cut = NULL;
		uint32_t cp;
		int k;
		while ((k = gb_utf8_decode(q, &cp)) > 0 && cols + gb_cp_width(cp) <= w) {
			if (cp == ' ')
				cut = q;
			cols += gb_cp_width(cp);
			q += k;
		}
		if (*q && cut && cut > p)
			q = cut;
		size_t len = (size_t)(q - p);
		if (len == 0)
			len = strlen(p) < 1 ? 0 : 1;
		if (len >= sizeof line)
			len = sizeof line - 1;
		memcpy(line, p, len);
		line[len] = 0;
		put_text(y + used++, x, w, line, a);
		p += len;
		while (*p == ' ')
			p++;
	}
	return used;
}

static void draw_figure(tui *t)
{
	int gh = t->grid.h;
	if (!t->fig) {
		draw_wrapped(TOP + gh / 3, 2, COLS - 4, gh - gh / 3, t->err, A_BOLD);
		return;
	}
	if (t->rerr[0]) {
		draw_wrapped(TOP + gh / 3, 2, COLS - 4, gh - gh / 3, t->rerr, A_BOLD);
		return;
	}
	for (int y = 0; y < t->grid.used_h && y < gh; y++)
		for (int x = 0; x < t->grid.w && x < COLS; x++) {
			const gb_cell *c = &t->grid.cells[(size_t)y * t->grid.w + x];
			if (c->cp == GB_CELL_CONT)
				continue;
			if (gb_cp_width(c->cp) == 2 && x + 1 >= COLS)
				continue;
			put_cell(t, TOP + y, x, c, 0);
		}
}

static int blank_cell(const gb_cell *c)
{
	return (c->cp == ' ' || c->cp == GB_CELL_CONT) && !(c->attr & GB_ATTR_BG);
}

/* The cursor: its cell in reverse (brackets when it is a blank swatch, so it shows at any
 * colour depth and in a screen dump), its row label and the column label above it too. */
static void draw_cursor(tui *t)
{
	gb_grid *g = &t->grid;
	const gb_cells_shown *sh = &t->shown;
	if (!t->fig || t->rerr[0])
		return;
	if (t->kind == GB_FIG_HEATMAP && t->dx >= 0) {
		int cw = sh->cell_w > 0 ? sh->cell_w : 1;
		int y = t->dy + (t->cr - sh->row0), x = t->dx + (t->cc - sh->col0) * cw;
		if (t->cr < sh->row0 || t->cr >= sh->row0 + sh->rows || t->cc < sh->col0 || t->cc >= sh->col0 + sh->cols)
			return;
		gb_cell *c0 = gb_grid_cell(g, x, y), *c1 = gb_grid_cell(g, x + cw - 1, y);
		if (!c0 || !c1)
			return;
		/* brackets over a swatch or a shade character; a printed number keeps its digits */
		int brackets = cw >= 2 && (t->depth == GB_DEPTH_PLAIN || (c0->cp == ' ' && c1->cp == ' '));
		for (int k = 0; k < cw; k++) {
			gb_cell m = *gb_grid_cell(g, x + k, y);
			if (brackets && (k == 0 || k == cw - 1))
				m.cp = k == 0 ? '[' : ']';
			put_cell(t, TOP + y, x + k, &m, A_REVERSE | A_BOLD);
		}
		for (int lx = t->dx - 2; lx >= 0; lx--) { /* the row label ends a column before the data */
			gb_cell *c = gb_grid_cell(g, lx, y);
			if (!c || blank_cell(c))
				break;
			put_cell(t, TOP + y, lx, c, A_REVERSE);
		}
		for (int k = 0; k < cw; k++) {
			gb_cell *c = gb_grid_cell(g, x + k, t->dy - 1);
			if (c && !blank_cell(c) && c->cp != GB_CELL_CONT)
				put_cell(t, TOP + t->dy - 1, x + k, c, A_REVERSE);
		}
	} else if (t->kind == GB_FIG_BARS) {
		int y = t->bars_top + (t->cr - sh->row0);
		if (t->cr < sh->row0 || t->cr >= sh->row0 + sh->rows)
			return;
		for (int x = 0; x < g->w; x++) {
			gb_cell *c = gb_grid_cell(g, x, y);
			if (c && !blank_cell(c) && !(c->attr & (GB_ATTR_FG | GB_ATTR_BG)) && c->cp != GB_CELL_CONT)
				put_cell(t, TOP + y, x, c, A_REVERSE | A_BOLD);
		}
	}
}

static void fmt_value(double v, char *buf, size_t cap)
{
	/* the way `print` writes it, so the two can be compared */
	snprintf(buf, cap, "%.5g", v);
}

static void status_text(const tui *t, char *buf, size_t cap)
{
	const gb_figure *f = drawn(t);
	char rl[128], cl[128], num[64];
	buf[0] = 0;
	if (!f || t->rerr[0])
		return;
	if (t->kind == GB_FIG_HEATMAP && f->rows > 0 && f->cols > 0) {
		int r = t->cr, c = t->cc;
		fmt_value(f->values[(size_t)r * f->cols + c], num, sizeof num);
		rl[0] = cl[0] = 0;
		if (f->row_labels) {
			char tmp[64];
			gb_label_display(f->row_labels[r], 24, tmp, sizeof tmp);
			snprintf(rl, sizeof rl, " \"%s\"", tmp);
		}
		if (f->col_labels) {
			char tmp[64];
			gb_label_display(f->col_labels[c], 24, tmp, sizeof tmp);
			snprintf(cl, sizeof cl, " \"%s\"", tmp);
		}
		snprintf(buf, cap, " %s %d%s \xC3\x97 %s %d%s = %s", f->row_title ? f->row_title : "row", r + 1, rl,
		         f->col_title ? f->col_title : "column", c + 1, cl, num);
	} else if (t->kind == GB_FIG_BARS && f->rows * f->cols > 0) {
		int n = f->rows * f->cols;
		char **labels = f->col_labels && f->cols == n ? f->col_labels : f->row_labels && f->rows == n ? f->row_labels : NULL;
		fmt_value(f->values[t->cr], num, sizeof num);
		rl[0] = 0;
		if (labels) {
			char tmp[64];
			gb_label_display(labels[t->cr], 24, tmp, sizeof tmp);
			snprintf(rl, sizeof rl, " \"%s\"", tmp);
		}
		snprintf(buf, cap, " bar %d of %d%s = %s", t->cr + 1, n, rl, num);
	} else if (t->kind == GB_FIG_GRID && f->n_panels > 0) {
		const gb_figure *p = f->panels[t->focus];
		snprintf(buf, cap, " %s (panel %d of %d, %dx%d): Enter zooms in, arrows choose another",
		         p->title ? p->title : "", t->focus + 1, f->n_panels, p->rows, p->cols);
	} else if (t->kind == GB_FIG_LINES)
		snprintf(buf, cap, " a line plot: no cursor here");
}

static void draw_status(tui *t)
{
	char buf[1024], pos[64] = "";
	const gb_figure *f = drawn(t);
	status_text(t, buf, sizeof buf);
	if (f && !t->rerr[0] && t->kind == GB_FIG_HEATMAP && f->rows > 0)
		snprintf(pos, sizeof pos, "%d,%d of %dx%d ", t->cr + 1, t->cc + 1, f->rows, f->cols);
	int y = LINES - 2, pw = (int)strlen(pos);
	attron(A_REVERSE);
	mvhline(y, 0, ' ', COLS);
	attroff(A_REVERSE);
	int room = COLS - (pw && gb_utf8_width(buf) + pw + 2 <= COLS ? pw + 2 : 0);
	put_text(y, 0, room, buf, A_REVERSE | A_BOLD);
	if (room < COLS)
		put_text(y, COLS - pw, pw, pos, A_REVERSE);
}

static void draw_formula(tui *t)
{
	const char *cap = t->fig ? t->fig->caption : NULL;
	if (!cap || t->rerr[0])
		return;
	int x = 0;
	if (gb_utf8_width(cap) + 9 <= COLS) /* the label gives way to the formula itself */
		x = put_text(LINES - 3, 0, 9, "formula  ", A_DIM);
	put_text(LINES - 3, x, COLS - x, cap, A_BOLD);
}

static void draw_bottom(tui *t)
{
	int y = LINES - 1;
	if (t->editing) {
		/* the line scrolls sideways to keep the cursor on screen */
		char pre[EDIT_MAX * 4 + 8];
		int w = 0, first = 0;
		for (int i = 0; i < t->epos; i++)
			w += wcwidth(t->ebuf[i]) > 0 ? wcwidth(t->ebuf[i]) : 1;
		while (w > COLS - 3 && first < t->epos) {
			w -= wcwidth(t->ebuf[first]) > 0 ? wcwidth(t->ebuf[first]) : 1;
			first++;
		}
		mvaddstr(y, 0, ":");
		size_t k = 0;
		mbstate_t ms;
		memset(&ms, 0, sizeof ms);
		for (int i = first; i < t->elen; i++) {
			size_t r = wcrtomb(pre + k, t->ebuf[i], &ms);
			if (r != (size_t)-1)
				k += r;
		}
		pre[k] = 0;
		put_text(y, 1, COLS - 2, pre, 0);
		move(y, 1 + w);
		return;
	}
	if (t->msg[0]) {
		/* a long message (an error with its remedy) borrows the status line */
		if (gb_utf8_width(t->msg) > COLS) {
			move(y - 1, 0);
			clrtoeol();
			draw_wrapped(y - 1, 0, COLS, 2, t->msg, t->msg_err ? A_BOLD : 0);
		} else
			put_text(y, 0, COLS, t->msg, t->msg_err ? A_BOLD : 0);
		return;
	}
	const char *items[8];
	int n = 0;
	items[n++] = "Tab stage";
	items[n++] = "[ ] layer";
	items[n++] = "< > head";
	items[n++] = t->kind == GB_FIG_GRID ? "arrows panel" : "arrows move";
	items[n++] = ": command";
	items[n++] = "e png";
	if (t->kind == GB_FIG_GRID || t->zoom)
		items[n++] = t->zoom ? "Enter back" : "Enter zoom";
	const char *end = "? help  q leave";
	int x = 0, endw = (int)strlen(end);
	for (int i = 0; i < n; i++) {
		int w = (int)strlen(items[i]);
		if (x + w + 2 + endw > COLS)
			break;
		x += put_text(y, x, w, items[i], A_DIM);
		x += put_text(y, x, 2, "  ", 0);
	}
	put_text(y, x, COLS - x, end, A_DIM);
}

/* A framed box over the screen, its inside cleared; returns the inner width. The frame is
 * drawn in Unicode, not the VT100 line-drawing set, which some terminals (and tmux's
 * capture) show as the letters "lqqk". */
static int draw_box(int y0, int x0, int h, int w, const char *title)
{
	char line[4096];
	for (int y = y0; y < y0 + h; y++) {
		const char *l = y == y0 ? "\xE2\x94\x8C" : y == y0 + h - 1 ? "\xE2\x94\x94" : "\xE2\x94\x82";
		const char *r = y == y0 ? "\xE2\x94\x90" : y == y0 + h - 1 ? "\xE2\x94\x98" : "\xE2\x94\x82";
		const char *mid = y == y0 || y == y0 + h - 1 ? "\xE2\x94\x80" : " ";
		size_t k = 0;
		k += (size_t)snprintf(line + k, sizeof line - k, "%s", l);
		for (int i = 0; i < w - 2 && k + 8 < sizeof line; i++)
			k += (size_t)snprintf(line + k, sizeof line - k, "%s", mid);
		snprintf(line + k, sizeof line - k, "%s", r);
		put_text(y, x0, w, line, 0);
	}
	if (title) {
		char tt[256];
		snprintf(tt, sizeof tt, " %s ", title);
		put_text(y0, x0 + 2, w - 4, tt, A_BOLD);
	}
	return w - 4;
}

static const char *const HELP[] = {
	"Tab, Shift-Tab       the next, the previous stage",
	"] or PgDn, [ or PgUp the next, the previous layer",
	"> or .,  < or ,      the next, the previous head",
	"arrows (h j k l)     move the cursor; a mouse click puts it there",
	"Home, End            the first, the last column",
	"Enter                zoom into the chosen panel (heads, qkv), and back",
	"e                    export the figure as a PNG in this folder",
	":                    a command: run TEXT, load DIR, show NAME, help...",
	"                     (Tab completes, Up and Down recall, Esc cancels)",
	"o                    the last command's output again",
	"?                    this help",
	"q or Esc             leave the explorer",
	"",
	"The status line shows the value under the cursor with its row and",
	"column (the query and the key); below the figure is its formula.",
	"The window ('window') follows the explorer, and the explorer it.",
};

static void draw_help(void)
{
	int n = (int)(sizeof HELP / sizeof *HELP), w = 76, h = n + 4;
	if (w > COLS)
		w = COLS;
	if (h > LINES)
		h = LINES;
	int y0 = (LINES - h) / 2, x0 = (COLS - w) / 2;
	int iw = draw_box(y0, x0, h, w, "glassbox explorer: keys");
	for (int i = 0; i < n && i < h - 4; i++)
		put_text(y0 + 2 + i, x0 + 2, iw, HELP[i], 0);
	put_text(y0 + h - 1, x0 + w - 22, 20, " any key closes ", A_DIM);
}

static void draw_out(tui *t)
{
	int h = LINES - 2, w = COLS - 2;
	int iw = draw_box(1, 1, h, w, t->out_title), rows = h - 2;
	if (t->out_top > t->n_out - rows)
		t->out_top = t->n_out - rows;
	if (t->out_top < 0)
		t->out_top = 0;
	for (int i = 0; i < rows && t->out_top + i < t->n_out; i++)
		put_text(2 + i, 3, iw, t->out[t->out_top + i], 0);
	char foot[96];
	snprintf(foot, sizeof foot, " lines %d-%d of %d: arrows, PgUp, PgDn scroll; q closes ", t->n_out ? t->out_top + 1 : 0,
	         t->out_top + rows < t->n_out ? t->out_top + rows : t->n_out, t->n_out);
	put_text(h, 3, iw, foot, A_DIM);
}

static void draw_small(void)
{
	char m[200];
	snprintf(m, sizeof m, "glassbox needs at least %dx%d (this is %dx%d): enlarge the terminal, or press q to leave",
	         MIN_W, MIN_H, COLS, LINES);
	draw_wrapped(0, 0, COLS, LINES, m, A_BOLD);
}

static int too_small(void) { return COLS < MIN_W || LINES < MIN_H; }

/* Grids follow the terminal's size. */
static void fit_size(tui *t)
{
	if (t->W == COLS && t->H == LINES && t->grid.cells)
		return;
	t->W = COLS;
	t->H = LINES;
	gb_grid_free(&t->grid);
	gb_grid_free(&t->probe);
	if (too_small())
		return;
	gb_verr err;
	if (gb_grid_init(&t->grid, COLS, LINES - TOP - BELOW, &err) ||
	    gb_grid_init(&t->probe, COLS, LINES - TOP - BELOW, &err))
		set_msg(t, 1, "%s", err.msg);
}

static void frame(tui *t)
{
	fit_size(t);
	erase();
	if (too_small() || !t->grid.cells || !t->probe.cells) {
		curs_set(0);
		draw_small();
		refresh();
		return;
	}
	colours_frame(t);
	layout(t);
	draw_tokens(t);
	draw_selector(t);
	draw_figure(t);
	draw_cursor(t);
	draw_formula(t);
	draw_status(t);
	if (t->help)
		draw_help();
	else if (t->show_out)
		draw_out(t);
	curs_set(t->editing ? 1 : 0);
	draw_bottom(t);
	refresh();
}

/* ---- actions ------------------------------------------------------------------------------ */

static void cursor_move(tui *t, int dr, int dc)
{
	const gb_figure *f = drawn(t);
	if (!f)
		return;
	if (t->kind == GB_FIG_GRID) {
		int gc = t->shown.cols > 0 ? t->shown.cols : 1, n = f->n_panels;
		int k = t->focus + dc + dr * gc;
		if (k < 0 || k >= n)
			return;
		t->focus = k;
		if (t->s->stage == ST_HEADS && !t->custom) /* each panel is a head: the head follows */
			t->s->head = t->hd = k + 1;
	} else if (t->kind == GB_FIG_BARS) {
		int n = f->rows * f->cols;
		t->cr += dr ? dr : dc;
		t->cr = t->cr < 0 ? 0 : t->cr >= n ? n - 1 : t->cr;
	} else if (t->kind == GB_FIG_HEATMAP) {
		t->cr += dr;
		t->cc += dc;
		t->cr = t->cr < 0 ? 0 : t->cr >= f->rows ? f->rows - 1 : t->cr;
		t->cc = t->cc < 0 ? 0 : t->cc >= f->cols ? f->cols - 1 : t->cc;
	} else if (t->kind == GB_FIG_STRIP)
		t->col0 = t->col0 + dc < 0 ? 0 : t->col0 + dc;
}

static void click(tui *t, int mx, int my)
{
	const gb_cells_shown *sh = &t->shown;
	int y = my - TOP;
	if (!t->fig || t->rerr[0] || y < 0 || y >= t->grid.h)
		return;
	if (t->kind == GB_FIG_HEATMAP && t->dx >= 0) {
		int cw = sh->cell_w > 0 ? sh->cell_w : 1;
		int r = sh->row0 + (y - t->dy), c = sh->col0 + (mx - t->dx) / cw;
		if (y >= t->dy && mx >= t->dx && r < sh->row0 + sh->rows && c < sh->col0 + sh->cols) {
			t->cr = r;
			t->cc = c;
		}
	} else if (t->kind == GB_FIG_BARS) {
		int r = sh->row0 + (y - t->bars_top);
		if (y >= t->bars_top && r < sh->row0 + sh->rows)
			t->cr = r;
	}
}

/* glassbox-attn-L1-H2: what the figure is, so a folder of exports reads like a contents. */
static void export_base(const tui *t, char *out, size_t cap)
{
	session *s = t->s;
	int st = s->stage, l = s->layer, h = s->head;
	if (t->custom) {
		const char *tensor = NULL;
		for (int i = 0; i < t->fig->n_meta; i++)
			if (!strcmp(t->fig->meta_keys[i], "Tensor"))
				tensor = t->fig->meta_vals[i];
		snprintf(out, cap, "glassbox-%s", tensor ? tensor : "figure");
		for (char *p = out; *p; p++)
			if (*p == '/' || *p == ' ')
				*p = '_';
	} else if (t->zoom && st == ST_HEADS)
		snprintf(out, cap, "glassbox-heads-L%d-H%d", l, t->focus + 1);
	else if (t->zoom)
		snprintf(out, cap, "glassbox-%s-L%d-H%d-%d", stage_name(st), l, h, t->focus + 1);
	else if (uses_head(st) && st != ST_HEADS)
		snprintf(out, cap, "glassbox-%s-L%d-H%d", stage_name(st), l, h);
	else if (uses_layer(st))
		snprintf(out, cap, "glassbox-%s-L%d", stage_name(st), l);
	else
		snprintf(out, cap, "glassbox-%s", stage_name(st));
}

static void export_png(tui *t)
{
	if (!t->fig) {
		set_msg(t, 1, "nothing to export: %s", t->err);
		return;
	}
	char base[200], path[256], title[1024], cwd[1024];
	export_base(t, base, sizeof base);
	struct stat st;
	int n = 1;
	for (; n < 10000; n++) { /* the next free number: an export never replaces another */
		if (n == 1)
			snprintf(path, sizeof path, "%s.png", base);
		else
			snprintf(path, sizeof path, "%s-%d.png", base, n);
		if (stat(path, &st) != 0 && errno == ENOENT)
			break;
	}
	gb_figure v = *t->fig;
	if (t->zoom && t->fig->kind == GB_FIG_GRID)
		zoom_view(t, &v, title, sizeof title);
	gb_export_opts o = { 0 };
	o.version = GLASSBOX_VERSION;
	gb_verr err;
	set_msg(t, 0, "writing %s...", path);
	frame(t);
	if (gb_export(&v, path, &o, &err)) {
		set_msg(t, 1, "export: %s", err.msg);
		return;
	}
	if (!getcwd(cwd, sizeof cwd))
		snprintf(cwd, sizeof cwd, ".");
	set_msg(t, 0, "wrote %s in %s (1600x900 PNG)", path, cwd);
}

/* Whether the text, the model or the engine changed under a command. */
typedef struct snap {
	char *text;
	char dir[sizeof ((gb_model *)0)->dir];
	int loaded, have_run, n_ids;
	const gb_kernels *k;
} snap;

static void snap_take(session *s, snap *p)
{
	p->text = s->text ? strdup(s->text) : NULL;
	snprintf(p->dir, sizeof p->dir, "%s", s->loaded ? s->model.dir : "");
	p->loaded = s->loaded;
	p->have_run = s->have_run;
	p->n_ids = s->trace.n_ids;
	p->k = s->k;
}

static int snap_differs(session *s, const snap *p)
{
	int d = p->loaded != s->loaded || p->have_run != s->have_run || p->n_ids != s->trace.n_ids || p->k != s->k ||
	        strcmp(p->dir, s->loaded ? s->model.dir : "") || !p->text != !s->text || (p->text && strcmp(p->text, s->text));
	free(p->text);
	return d;
}

static void run_command(tui *t, const char *line)
{
	session *s = t->s;
	while (*line == ' ')
		line++;
	if (!*line)
		return;
	if (t->n_hist == HIST_N) {
		free(t->hist[0]);
		memmove(t->hist, t->hist + 1, sizeof *t->hist * (HIST_N - 1));
		t->n_hist--;
	}
	if (!t->n_hist || strcmp(t->hist[t->n_hist - 1], line))
		t->hist[t->n_hist++] = strdup(line);
	gb_figure *fig0 = s->fig;
	snap before;
	snap_take(s, &before);
	set_msg(t, 0, "running: %s  (Ctrl-C stops a long command)", line);
	frame(t);
	if (cap_begin(t)) {
		set_msg(t, 1, "cannot run '%s': no temporary file for its output (%s)", line, strerror(errno));
		free(before.text);
		return;
	}
	int rc = command_line(s, line);
	char *said = cap_end(t);
	interrupted = 0; /* a Ctrl-C was for the command, not for the explorer */
	int changed = snap_differs(s, &before);
	/* A view allocates its figure before the old one is freed, so a new s->fig is always a new
	 * address: the command drew a figure. */
	int drew = s->fig && s->fig != fig0;
	if (rc > 0)
		t->quit = t->quit_all = 1;
	if (drew) {
		/* A stage's figure (attn 1 2, next) is the stage on show; anything else (show NAME,
		 * model, pe DIMS) stays on show until a key picks a stage. */
		gb_figure *mine = s->fig, *st = NULL;
		if (s->loaded && s->have_run && cap_begin(t) == 0) {
			st = view_stage(s);
			free(cap_end(t));
		}
		t->custom = !(st && st->kind == mine->kind && st->title && mine->title && !strcmp(st->title, mine->title));
		gb_fig_free(st);
		t->fig = mine;
		t->err[0] = 0;
		t->zoom = 0;
		remember(t);
		fit_focus(t);
	} else if (t->custom && !changed && s->fig == t->made && t->fig == s->fig)
		; /* export, set, trace...: the command's figure stays */
	else {
		t->zoom = changed ? 0 : t->zoom;
		rebuild(t);
	}
	keep_out(t, said);
	char last[1024];
	last_line(said, last, sizeof last);
	if (rc < 0)
		set_msg(t, 1, "%s", last[0] ? last : "the command failed");
	else if (drew)
		set_msg(t, 0, "%s: %s", line, t->custom ? "its figure is on show (Tab returns to the stages)" : "done");
	else if (t->n_out > 2) {
		clip(line, 60, t->out_title, sizeof t->out_title);
		t->show_out = 1;
		set_msg(t, 0, "%s: %d lines of output (o shows them again)", line, t->n_out);
	} else if (t->n_out == 2 && !blank_line(t->out[0]))
		set_msg(t, 0, "%s  |  %s", no_prefix(t->out[0]), last);
	else if (last[0])
		set_msg(t, 0, "%s", last);
	else
		set_msg(t, 0, "%s: done", line);
	free(said);
}

/* Tab in the ':' line: the prompt's completions, from the command table. */
static void complete_edit(tui *t)
{
	char line[EDIT_MAX * 4 + 8];
	size_t k = 0;
	mbstate_t ms;
	memset(&ms, 0, sizeof ms);
	for (int i = 0; i < t->epos; i++) {
		size_t r = wcrtomb(line + k, t->ebuf[i], &ms);
		if (r != (size_t)-1)
			k += r;
	}
	line[k] = 0;
	int start = (int)k;
	while (start > 0 && line[start - 1] != ' ')
		start--;
	char **c = complete_candidates(t->s, line, start, line + start);
	if (!c)
		return;
	int n = 0;
	while (c[n])
		n++;
	if (n > 0) {
		/* the longest common prefix, plus a space when it is the only candidate */
		size_t pl = strlen(c[0]);
		for (int i = 1; i < n; i++) {
			size_t j = 0;
			while (j < pl && c[i][j] == c[0][j])
				j++;
			pl = j;
		}
		char add[512];
		size_t have = k - (size_t)start;
		if (pl > have && pl - have < sizeof add - 2) {
			memcpy(add, c[0] + have, pl - have);
			add[pl - have] = 0;
		} else
			add[0] = 0;
		if (n == 1)
			strcat(add, " ");
		wchar_t w[512];
		size_t nw = mbstowcs(w, add, 511);
		if (nw != (size_t)-1 && t->elen + (int)nw < EDIT_MAX) {
			memmove(t->ebuf + t->epos + nw, t->ebuf + t->epos, sizeof(wchar_t) * (size_t)(t->elen - t->epos));
			memcpy(t->ebuf + t->epos, w, sizeof(wchar_t) * nw);
			t->epos += (int)nw;
			t->elen += (int)nw;
		}
		if (n > 1) {
			char list[1024] = "";
			for (int i = 0; i < n && strlen(list) < 900; i++)
				snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? "  " : "", c[i]);
			set_msg(t, 0, "%s", list);
		}
	}
	for (int i = 0; i < n; i++)
		free(c[i]);
	free(c);
}

static void edit_set(tui *t, const char *s)
{
	size_t n = mbstowcs(t->ebuf, s, EDIT_MAX - 1);
	t->elen = t->epos = n == (size_t)-1 ? 0 : (int)n;
}

/* One key, as get_wch gives it, except that an escape sequence the terminal description does
 * not name (tmux sends Home as ESC [ 1 ~ whatever TERM says) is read whole: ncurses would
 * hand it over as ESC, which leaves, and then '[', which changes the layer. Home and End in
 * their other spellings are recognized; any other such sequence is KEY_CODE_YES with 0. A
 * lone ESC stays ESC. */
static int get_key(wint_t *ch)
{
	int r = get_wch(ch);
	if (r != OK || *ch != 27)
		return r;
	wint_t c;
	char seq[16];
	int n = 0;
	timeout(0); /* the rest of a sequence is already here: nothing means the Esc key */
	if (get_wch(&c) == ERR)
		return OK;
	seq[n++] = (char)(c < 128 ? c : '?');
	if (c == '[' || c == 'O') {
		while (n < (int)sizeof seq - 1 && get_wch(&c) != ERR) {
			seq[n++] = (char)(c < 128 ? c : '?');
			if (c >= 0x40 && c <= 0x7E)
				break;
		}
	}
	seq[n] = 0;
	if (!strcmp(seq, "[1~") || !strcmp(seq, "[7~") || !strcmp(seq, "[H") || !strcmp(seq, "OH"))
		*ch = KEY_HOME;
	else if (!strcmp(seq, "[4~") || !strcmp(seq, "[8~") || !strcmp(seq, "[F") || !strcmp(seq, "OF"))
		*ch = KEY_END;
	else
		*ch = 0;
	return KEY_CODE_YES;
}

/* The ':' line: returns 1 with the command (UTF-8) in out, 0 when cancelled. */
static int read_command(tui *t, char *out, size_t cap)
{
	int hi = t->n_hist, dirty = 1;
	t->editing = 1;
	t->elen = t->epos = 0;
	t->msg[0] = 0;
	for (;;) {
		if (dirty)
			frame(t);
		dirty = 1;
		timeout(t->s->win ? 16 : -1);
		wint_t ch;
		int r = get_key(&ch);
		if (r == ERR) {
			if (interrupted) {
				interrupted = 0;
				break;
			}
			window_pump(t->s);
			dirty = sync_window(t);
			continue;
		}
		if (r == KEY_CODE_YES) {
			switch (ch) {
			case KEY_LEFT: if (t->epos > 0) t->epos--; break;
			case KEY_RIGHT: if (t->epos < t->elen) t->epos++; break;
			case KEY_HOME: t->epos = 0; break;
			case KEY_END: t->epos = t->elen; break;
			case KEY_BACKSPACE:
				if (t->epos > 0) {
					memmove(t->ebuf + t->epos - 1, t->ebuf + t->epos, sizeof(wchar_t) * (size_t)(t->elen - t->epos));
					t->epos--, t->elen--;
				} else if (!t->elen)
					goto cancel; /* backspace on an empty line leaves it, as in vi */
				break;
			case KEY_DC:
				if (t->epos < t->elen) {
					memmove(t->ebuf + t->epos, t->ebuf + t->epos + 1, sizeof(wchar_t) * (size_t)(t->elen - t->epos - 1));
					t->elen--;
				}
				break;
			case KEY_UP:
				if (hi > 0)
					edit_set(t, t->hist[--hi]);
				break;
			case KEY_DOWN:
				if (hi < t->n_hist - 1)
					edit_set(t, t->hist[++hi]);
				else {
					hi = t->n_hist;
					t->elen = t->epos = 0;
				}
				break;
			case KEY_ENTER: goto done;
			default: break; /* resize and the rest: just redraw */
			}
			continue;
		}
		if (ch == '\r' || ch == '\n')
			goto done;
		if (ch == 27 || ch == 7) /* Esc, Ctrl-G */
			goto cancel;
		if (ch == 127 || ch == 8) {
			if (t->epos > 0) {
				memmove(t->ebuf + t->epos - 1, t->ebuf + t->epos, sizeof(wchar_t) * (size_t)(t->elen - t->epos));
				t->epos--, t->elen--;
			} else if (!t->elen)
				goto cancel;
		} else if (ch == 21) /* Ctrl-U */
			t->elen = t->epos = 0;
		else if (ch == 23) { /* Ctrl-W: the word before the cursor */
			int p = t->epos;
			while (p > 0 && t->ebuf[p - 1] == ' ')
				p--;
			while (p > 0 && t->ebuf[p - 1] != ' ')
				p--;
			memmove(t->ebuf + p, t->ebuf + t->epos, sizeof(wchar_t) * (size_t)(t->elen - t->epos));
			t->elen -= t->epos - p;
			t->epos = p;
		} else if (ch == 1)
			t->epos = 0;
		else if (ch == 5)
			t->epos = t->elen;
		else if (ch == '\t')
			complete_edit(t);
		else if (ch >= 32 && t->elen < EDIT_MAX - 1 && wcwidth((wchar_t)ch) >= 0) {
			memmove(t->ebuf + t->epos + 1, t->ebuf + t->epos, sizeof(wchar_t) * (size_t)(t->elen - t->epos));
			t->ebuf[t->epos++] = (wchar_t)ch;
			t->elen++;
		}
	}
cancel:
	t->editing = 0;
	t->msg[0] = 0;
	return 0;
done:
	t->editing = 0;
	t->msg[0] = 0;
	{
		size_t k = 0;
		mbstate_t ms;
		memset(&ms, 0, sizeof ms);
		for (int i = 0; i < t->elen && k + MB_CUR_MAX + 1 < cap; i++) {
			size_t r = wcrtomb(out + k, t->ebuf[i], &ms);
			if (r != (size_t)-1)
				k += r;
		}
		out[k] = 0;
	}
	return 1;
}

static void key(tui *t, int fkey, wint_t ch)
{
	session *s = t->s;
	if (t->help) { /* any key closes the help */
		if (!(fkey && (ch == KEY_RESIZE || ch == KEY_MOUSE)))
			t->help = 0;
		return;
	}
	if (t->show_out) {
		int page = LINES - 5 > 1 ? LINES - 5 : 1;
		if (fkey && ch == KEY_UP) t->out_top--;
		else if (fkey && ch == KEY_DOWN) t->out_top++;
		else if (fkey && ch == KEY_PPAGE) t->out_top -= page;
		else if (fkey && (ch == KEY_NPAGE)) t->out_top += page;
		else if (!fkey && ch == ' ') t->out_top += page;
		else if (fkey && ch == KEY_HOME) t->out_top = 0;
		else if (fkey && ch == KEY_END) t->out_top = t->n_out;
		else if (fkey && (ch == KEY_RESIZE || ch == KEY_MOUSE)) ;
		else t->show_out = 0;
		return;
	}
	if (too_small()) {
		if (!fkey && (ch == 'q' || ch == 27))
			t->quit = 1;
		return;
	}
	t->msg[0] = 0;
	int L = n_layers(s), H = n_heads(s);
	if (fkey) {
		switch (ch) {
		case KEY_BTAB: next_stage(t, -1); break;
		case KEY_PPAGE: if (s->layer > 1) set_view(t, s->stage, s->layer - 1, s->head); break;
		case KEY_NPAGE: if (s->layer < L) set_view(t, s->stage, s->layer + 1, s->head); break;
		case KEY_UP: cursor_move(t, -1, 0); break;
		case KEY_DOWN: cursor_move(t, 1, 0); break;
		case KEY_LEFT: cursor_move(t, 0, -1); break;
		case KEY_RIGHT: cursor_move(t, 0, 1); break;
		case KEY_HOME: cursor_move(t, 0, -1000000); break;
		case KEY_END: cursor_move(t, 0, 1000000); break;
		case KEY_ENTER: goto enter;
		case KEY_BACKSPACE: t->zoom = 0; break;
		case KEY_MOUSE: {
			MEVENT ev;
			if (getmouse(&ev) == OK) {
				if (ev.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED))
					click(t, ev.x, ev.y);
#ifdef BUTTON5_PRESSED
				else if (ev.bstate & BUTTON4_PRESSED)
					cursor_move(t, -1, 0);
				else if (ev.bstate & BUTTON5_PRESSED)
					cursor_move(t, 1, 0);
#endif
			}
			break;
		}
		default: break; /* KEY_RESIZE only needs the redraw; unknown keys do nothing */
		}
		return;
	}
	switch (ch) {
	case '\t': next_stage(t, 1); break;
	case '[': if (s->layer > 1) set_view(t, s->stage, s->layer - 1, s->head); break;
	case ']': if (s->layer < L) set_view(t, s->stage, s->layer + 1, s->head); break;
	case '<': case ',': if (s->head > 1) set_view(t, s->stage, s->layer, s->head - 1); break;
	case '>': case '.': if (s->head < H) set_view(t, s->stage, s->layer, s->head + 1); break;
	case 'k': cursor_move(t, -1, 0); break;
	case 'j': cursor_move(t, 1, 0); break;
	case 'h': cursor_move(t, 0, -1); break;
	case 'l': cursor_move(t, 0, 1); break;
	case 'e': export_png(t); break;
	case '?': t->help = 1; break;
	case 'o':
		if (t->n_out)
			t->show_out = 1;
		else
			set_msg(t, 0, "no command output yet: ':' runs a command");
		break;
	case 'z': case 127: case 8: t->zoom = 0; break;
	case 'q': case 27: t->quit = 1; break;
	case ':': {
		char line[EDIT_MAX * 4 + 8];
		if (read_command(t, line, sizeof line))
			run_command(t, line);
		break;
	}
	case '\r': case '\n':
	enter:
		if (t->fig && t->fig->kind == GB_FIG_GRID && t->fig->n_panels > 0) {
			t->zoom = !t->zoom;
			t->cr = t->cc = 0;
		}
		break;
	default: break;
	}
}

/* $LINES and $COLUMNS as they were (those that were set), with the terminal's size when
 * known; frees the saved values. */
static void put_env_size(char *lines, char *cols, int nl, int nc)
{
	char buf[32];
	if (lines) {
		snprintf(buf, sizeof buf, "%d", nl);
		setenv("LINES", nl > 0 ? buf : lines, 1);
	}
	if (cols) {
		snprintf(buf, sizeof buf, "%d", nc);
		setenv("COLUMNS", nc > 0 ? buf : cols, 1);
	}
	free(lines);
	free(cols);
}

static void put_locale(char *ctype)
{
	if (ctype)
		setlocale(LC_CTYPE, ctype);
	free(ctype);
}

int tui_run(session *s)
{
	static int open_now;
	if (open_now) {
		errorf("the explorer is already open");
		return -1;
	}
	if (!isatty(0) || !isatty(1)) {
		errorf("the explorer needs a terminal: start it at the prompt, not from a script or a pipe");
		return -1;
	}
	/* The character set only: numbers keep the C locale's decimal point, which model files,
	 * printed tensors and CSV depend on. Put back as it was when the explorer closes. */
	const char *ctype0 = setlocale(LC_CTYPE, NULL);
	char *ctype_was = ctype0 ? strdup(ctype0) : NULL;
	setlocale(LC_CTYPE, "");
	fflush(stdout);
	fflush(stderr);
	/* ncurses takes SIGWINCH (and so reports KEY_RESIZE) only when nobody else has it, and
	 * only in the first newterm of a process: the prompt's handler is put aside while the
	 * explorer runs, and ncurses' own kept for the next time. */
	static struct sigaction nc_winch;
	static int have_nc_winch;
	struct sigaction dfl, old_winch;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(SIGWINCH, have_nc_winch ? &nc_winch : &dfl, &old_winch);
	/* The size must come from the terminal: readline exports $LINES and $COLUMNS, and ncurses
	 * would take them over the terminal's word, pinning the explorer to the size the prompt
	 * started at. They are put back afterwards, with the size the terminal has then. */
	char *env_lines = getenv("LINES") ? strdup(getenv("LINES")) : NULL;
	char *env_cols = getenv("COLUMNS") ? strdup(getenv("COLUMNS")) : NULL;
	unsetenv("LINES");
	unsetenv("COLUMNS");
	/* newterm, not initscr: an unknown TERM is an error to report, not a reason to exit */
	SCREEN *scr = newterm(NULL, stdout, stdin);
	if (!scr) {
		const char *term = getenv("TERM");
		sigaction(SIGWINCH, &old_winch, NULL);
		put_env_size(env_lines, env_cols, 0, 0);
		put_locale(ctype_was);
		errorf("the terminal type '%s' is unknown here: set TERM (e.g. TERM=xterm-256color)", term ? term : "");
		return -1;
	}
	tui *t = calloc(1, sizeof *t);
	if (!t) {
		endwin();
		delscreen(scr);
		sigaction(SIGWINCH, &old_winch, NULL);
		put_env_size(env_lines, env_cols, 0, 0);
		put_locale(ctype_was);
		errorf("out of memory for the explorer");
		return -1;
	}
	open_now = 1;
	t->s = s;
	t->save1 = t->save2 = -1;
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	set_escdelay(25);
	mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON4_PRESSED
#ifdef BUTTON5_PRESSED
	          | BUTTON5_PRESSED
#endif
	          , NULL);
	mouseinterval(0); /* presses at once, no wait to tell a click from a drag */
	colours_init(t);
	rebuild(t);
	int dirty = 1;
	while (!t->quit) {
		if (dirty)
			frame(t);
		dirty = 1;
		/* with the window open the loop must turn to pump its events */
		timeout(s->win ? 16 : -1);
		wint_t ch;
		int r = get_key(&ch);
		if (r == ERR) {
			if (interrupted) { /* Ctrl-C leaves, as it stops anything else */
				interrupted = 0;
				break;
			}
			window_pump(s);
			dirty = sync_window(t);
			continue;
		}
		key(t, r == KEY_CODE_YES, ch);
		if (s->win) {
			window_pump(s);
			sync_window(t);
		}
	}
	int lines = LINES, cols = COLS;
	endwin();
	delscreen(scr);
	sigaction(SIGWINCH, &old_winch, &nc_winch);
	have_nc_winch = 1;
	put_env_size(env_lines, env_cols, lines, cols);
	put_locale(ctype_was);
	gb_grid_free(&t->grid);
	gb_grid_free(&t->probe);
	free(t->pkey);
	free(t->pval);
	free(t->ckey);
	free(t->cval);
	free_out(t);
	for (int i = 0; i < t->n_hist; i++)
		free(t->hist[i]);
	if (t->capf)
		fclose(t->capf);
	int rc = t->quit_all ? 1 : 0;
	free(t);
	open_now = 0;
	return rc;
}
