/* tui_draw.c — the explorer's screen: text cut to the terminal's columns, figure colours
 * turned into ncurses colour pairs (and palette entries, when the terminal lets them be
 * redefined), and each part of a frame: the tokens, the stage selector, the figure with its
 * cursor, the formula, the status line, the bottom line, the help and output overlays. It
 * draws what tui.c decided; it changes nothing but the messages and the colour caches. */
#include "app/tui_int.h"

#include <curses.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "app/views.h"
#include "viz/cells.h"

/* ---- small text helpers ------------------------------------------------------------- */

void tui_set_msg(tui *t, int is_err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof t->msg, fmt, ap);
	va_end(ap);
	t->msg_err = is_err;
}

/* s cut to at most maxw terminal columns (control characters as '?', so a token or a line
 * of output cannot move the cursor); returns the columns used. */
int tui_clip(const char *s, int maxw, char *out, size_t cap)
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
	int w = tui_clip(s, maxw, buf, sizeof buf);
	attron(a);
	mvaddstr(y, x, buf);
	attroff(a);
	return w;
}

/* ---- colour --------------------------------------------------------------------------- */

void tui_colours_init(tui *t)
{
	const char *nc = getenv("NO_COLOR");
	/* again after `set colors`: the caches of the last depth go, nothing on screen keeps them
	 * (every frame is drawn anew) */
	free(t->pkey);
	free(t->pval);
	free(t->ckey);
	free(t->cval);
	t->pkey = NULL;
	t->pval = t->cval = NULL;
	t->ckey = NULL;
	t->next_pair = t->pairs_full = t->ncdef = t->colors_full = 0;
	t->sdepth = t->s->depth;
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

/* ---- drawing -------------------------------------------------------------------------- */

/* Which tokens the cursor points at, when the figure's rows or columns are the text's tokens:
 * the query (row) and the key (column), or -1. */
static void cursor_tokens(const tui *t, int n, int *qi, int *ki)
{
	const gb_figure *f = tui_drawn(t);
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
	const gb_figure *f = tui_drawn(t);
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
		/* numbered as the figure numbers them: a window of units 65-128 starts at 65 */
		snprintf(buf, cap, " %s %d%s \xC3\x97 %s %d%s = %s", f->row_title ? f->row_title : "row",
		         (f->row_index0 > 0 ? f->row_index0 : 1) + r, rl, f->col_title ? f->col_title : "column",
		         (f->col_index0 > 0 ? f->col_index0 : 1) + c, cl, num);
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
	else if (t->kind == GB_FIG_DIAGRAM)
		snprintf(buf, cap, " the architecture: the marked block is the stage you left (Tab goes back to it)%s",
		         t->shown.rows < t->shown.rows_total ? "; arrows scroll" : "");
}

static void draw_status(tui *t)
{
	char buf[1024], pos[64] = "";
	const gb_figure *f = tui_drawn(t);
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
	"a                    the model's architecture, the stage on show marked",
	":                    a command: run TEXT, load DIR, show NAME, help...",
	"                     (Tab completes, Up and Down recall, Esc cancels)",
	"o                    the last command's output again",
	"?                    this help",
	"q or Esc             leave the explorer",
	"",
	"The status line shows the value under the cursor with its row and",
	"column (the query and the key); below the figure is its formula.",
	"The window (:window) follows the explorer, and the explorer it. In the",
	"window: F11 or f full screen, + - text size, point at a cell for its",
	"value, click a head of the grid, l lines, [ ] temperature (:help window).",
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

int tui_too_small(void) { return COLS < MIN_W || LINES < MIN_H; }

/* Grids follow the terminal's size. */
static void fit_size(tui *t)
{
	if (t->W == COLS && t->H == LINES && t->grid.cells)
		return;
	t->W = COLS;
	t->H = LINES;
	gb_grid_free(&t->grid);
	gb_grid_free(&t->probe);
	if (tui_too_small())
		return;
	gb_verr err;
	if (gb_grid_init(&t->grid, COLS, LINES - TOP - BELOW, &err) ||
	    gb_grid_init(&t->probe, COLS, LINES - TOP - BELOW, &err))
		tui_set_msg(t, 1, "%s", err.msg);
}

void tui_frame(tui *t)
{
	fit_size(t);
	erase();
	if (tui_too_small() || !t->grid.cells || !t->probe.cells) {
		curs_set(0);
		draw_small();
		refresh();
		return;
	}
	colours_frame(t);
	tui_layout(t);
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
