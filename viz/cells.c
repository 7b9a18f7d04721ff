/* cells.c — the terminal backend of cells.h: figures laid out in character cells, and cells
 * written as text with the escapes of a colour depth.
 *
 * Owns: how each kind of figure uses a rectangle of cells (what is drawn when space runs out,
 * and in what order things are given up), the shade ramp of plain depth, the choice of text
 * colour over a coloured cell, the palette mappings, and the depth rules.
 *
 * Layout never wraps and never writes past its rectangle: anything that does not fit is cut
 * with "…", or windowed with a notice of what is shown. Every layout function draws the title
 * on its first line and the caption (with the counts of masked cells and of NaN/inf values)
 * on its last. */
#include "viz/cells.h"
#include "viz/colormap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Plain depth's shades, lightest to darkest ink: value t in [0, 1] -> RAMP[floor(10 t)]. */
static const char RAMP[] = " .:-=+*#%@";
#define RAMP_N 10
#define BAD_CHAR '!'          /* plain depth's NaN/inf, not in the ramp */
#define MASK_CHAR '/'         /* plain depth's masked cell (hatched), not in the ramp */
#define LBUF 192              /* bytes of one displayed label (<= 24 columns, escapes 4 bytes) */

/* ---- depth ---------------------------------------------------------------------------- */

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && strcmp(s + a - b, suf) == 0;
}

int gb_term_depth(const char *colorterm, const char *term, const char *no_color, int is_tty,
                  int force)
{
	int dumb = !term || !*term || strcmp(term, "dumb") == 0;
	if (!force && ((no_color && *no_color) || !is_tty || dumb))
		return GB_DEPTH_PLAIN;
	if (colorterm && (strcmp(colorterm, "truecolor") == 0 || strcmp(colorterm, "24bit") == 0))
		return GB_DEPTH_TRUE;
	if (term && ends_with(term, "-direct"))
		return GB_DEPTH_TRUE;
	if (term && strstr(term, "256color"))
		return GB_DEPTH_256;
	return GB_DEPTH_16;
}

/* ---- palettes ------------------------------------------------------------------------- */

const uint8_t gb_ansi16_rgb[16][3] = { /* (16, rgb): xterm's defaults */
	{ 0, 0, 0 },       { 205, 0, 0 },     { 0, 205, 0 },     { 205, 205, 0 },
	{ 0, 0, 238 },     { 205, 0, 205 },   { 0, 205, 205 },   { 229, 229, 229 },
	{ 127, 127, 127 }, { 255, 0, 0 },     { 0, 255, 0 },     { 255, 255, 0 },
	{ 92, 92, 255 },   { 255, 0, 255 },   { 0, 255, 255 },   { 255, 255, 255 },
};

static int dist2(int r, int g, int b, const uint8_t c[3])
{
	return (r - c[0]) * (r - c[0]) + (g - c[1]) * (g - c[1]) + (b - c[2]) * (b - c[2]);
}

static const uint8_t cube_level[6] = { 0, 95, 135, 175, 215, 255 };

/* Nearest cube level of one channel: the midpoints between levels are 47.5, 115, 155, ... */
static int cube_index(int v)
{
	if (v < 48)
		return 0;
	if (v < 115)
		return 1;
	return (v - 35) / 40; /* 115..154 -> 2, 155..194 -> 3, 195..234 -> 4, 235..255 -> 5 */
}

int gb_xterm256(const uint8_t rgb[3])
{
	int ri = cube_index(rgb[0]), gi = cube_index(rgb[1]), bi = cube_index(rgb[2]);
	uint8_t cube[3] = { cube_level[ri], cube_level[gi], cube_level[bi] };
	int avg = (rgb[0] + rgb[1] + rgb[2]) / 3;
	int k = (avg - 3) / 10; /* nearest of 8 + 10k, k = 0..23 */
	if (k < 0) k = 0;
	if (k > 23) k = 23;
	uint8_t gray[3] = { (uint8_t)(8 + 10 * k), (uint8_t)(8 + 10 * k), (uint8_t)(8 + 10 * k) };
	if (dist2(rgb[0], rgb[1], rgb[2], gray) < dist2(rgb[0], rgb[1], rgb[2], cube))
		return 232 + k;
	return 16 + 36 * ri + 6 * gi + bi;
}

int gb_ansi16(const uint8_t rgb[3])
{
	int best = 0, bd = 1 << 30;
	for (int i = 0; i < 16; i++) {
		int d = dist2(rgb[0], rgb[1], rgb[2], gb_ansi16_rgb[i]);
		if (d < bd) {
			bd = d;
			best = i;
		}
	}
	return best;
}

/* ---- the grid ------------------------------------------------------------------------- */

static const gb_cell BLANK = { ' ', { 0, 0, 0 }, { 0, 0, 0 }, 0 };

int gb_grid_init(gb_grid *g, int w, int h, gb_verr *err)
{
	memset(g, 0, sizeof *g);
	if (w < 1 || h < 1 || w > 100000 || h > 100000 || (size_t)w * (size_t)h > ((size_t)1 << 26))
		return gb_vfail(err, "a %dx%d character grid is not a usable size", w, h);
	if (!(g->cells = malloc((size_t)w * (size_t)h * sizeof *g->cells)))
		return gb_vfail(err, "out of memory for a %dx%d character grid", w, h);
	g->w = w;
	g->h = h;
	gb_grid_clear(g);
	return 0;
}

void gb_grid_free(gb_grid *g)
{
	if (!g)
		return;
	free(g->cells);
	memset(g, 0, sizeof *g);
}

void gb_grid_clear(gb_grid *g)
{
	for (size_t i = 0; i < (size_t)g->w * (size_t)g->h; i++)
		g->cells[i] = BLANK;
	g->used_h = 0;
	memset(&g->shown, 0, sizeof g->shown);
}

gb_cell *gb_grid_cell(gb_grid *g, int x, int y)
{
	if (x < 0 || y < 0 || x >= g->w || y >= g->h)
		return NULL;
	return &g->cells[(size_t)y * (size_t)g->w + (size_t)x];
}

static void touch(gb_grid *g, int y)
{
	if (y >= 0 && y < g->h && y + 1 > g->used_h)
		g->used_h = y + 1;
}

static void set_cell(gb_grid *g, int x, int y, uint32_t cp, const uint8_t *fg, const uint8_t *bg,
                     int attr)
{
	gb_cell *c = gb_grid_cell(g, x, y);
	if (!c)
		return;
	if (c->cp == GB_CELL_CONT && cp != GB_CELL_CONT && x > 0)
		c[-1].cp = ' '; /* half a wide character would misalign the rest of the line */
	c->cp = cp;
	c->attr = (uint8_t)(attr & ~(GB_ATTR_FG | GB_ATTR_BG));
	if (fg) {
		memcpy(c->fg, fg, 3);
		c->attr |= GB_ATTR_FG;
	}
	if (bg) {
		memcpy(c->bg, bg, 3);
		c->attr |= GB_ATTR_BG;
	}
	touch(g, y);
}

int gb_grid_text(gb_grid *g, int x, int y, int maxw, const char *s, const uint8_t *fg,
                 const uint8_t *bg, int attr)
{
	int used = 0, n;
	uint32_t cp;
	if (!s || y < 0 || y >= g->h)
		return 0;
	if (x + maxw > g->w)
		maxw = g->w - x;
	while ((n = gb_utf8_decode(s, &cp)) > 0) {
		s += n;
		int w = 1;
		if (cp == GB_UTF8_BAD || cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0))
			cp = '?';
		else if ((w = gb_cp_width(cp)) == 0)
			continue; /* a cell holds one code point: marks cannot ride along */
		if (used + w > maxw)
			break;
		if (x + used >= 0) {
			set_cell(g, x + used, y, cp, fg, bg, attr);
			if (w == 2)
				set_cell(g, x + used + 1, y, GB_CELL_CONT, fg, bg, attr);
		}
		used += w;
	}
	return used;
}

/* ---- text helpers --------------------------------------------------------------------- */

/* s cut to at most maxw columns, with "…" marking a cut. */
static void shorten(const char *s, int maxw, char *out, size_t cap)
{
	int total = gb_utf8_width(s), w = 0, n;
	size_t k = 0;
	uint32_t cp;
	out[0] = 0;
	if (maxw <= 0 || !s)
		return;
	int room = total <= maxw ? maxw : maxw - 1;
	while ((n = gb_utf8_decode(s, &cp)) > 0) {
		int cw = cp == GB_UTF8_BAD ? 1 : gb_cp_width(cp);
		if (w + cw > room || k + (size_t)n + 4 > cap)
			break;
		memcpy(out + k, s, (size_t)n);
		k += (size_t)n;
		w += cw;
		s += n;
	}
	if (total > maxw && k + 4 <= cap) {
		memcpy(out + k, "\xE2\x80\xA6", 3);
		k += 3;
	}
	out[k] = 0;
}

/* A value as the figure prints it: fixed point with prec digits, exponent form beyond 1e6,
 * and never "-0.00" (a sign on a zero reads as information). */
static int fmt_num(double v, int prec, char *buf, size_t cap)
{
	if (isnan(v))
		return snprintf(buf, cap, "nan");
	if (isinf(v))
		return snprintf(buf, cap, v > 0 ? "inf" : "-inf");
	if (prec < 0) prec = 0;
	if (prec > 9) prec = 9;
	int n = fabs(v) >= 1e6 ? snprintf(buf, cap, "%.*e", prec, v) : snprintf(buf, cap, "%.*f", prec, v);
	if (buf[0] == '-' && strspn(buf + 1, "0.") == strlen(buf + 1)) {
		memmove(buf, buf + 1, strlen(buf));
		n--;
	}
	return n;
}

/* The two ends of a scale, with enough digits that they differ. */
static void fmt_ends(double lo, double hi, int prec, char *a, char *b, size_t cap)
{
	fmt_num(lo, prec, a, cap);
	fmt_num(hi, prec, b, cap);
	for (int p = 3; strcmp(a, b) == 0 && p <= 9; p += 2) {
		snprintf(a, cap, "%.*g", p, lo);
		snprintf(b, cap, "%.*g", p, hi);
	}
}

static const uint8_t BLACK[3] = { 0, 0, 0 }, WHITE[3] = { 255, 255, 255 };

/* The colour a terminal of this depth will actually show for rgb. */
static void shown_rgb(int depth, const uint8_t rgb[3], uint8_t out[3])
{
	if (depth == GB_DEPTH_16) {
		memcpy(out, gb_ansi16_rgb[gb_ansi16(rgb)], 3);
	} else if (depth == GB_DEPTH_256) {
		int i = gb_xterm256(rgb);
		if (i >= 232) {
			out[0] = out[1] = out[2] = (uint8_t)(8 + 10 * (i - 232));
		} else {
			i -= 16;
			out[0] = cube_level[i / 36];
			out[1] = cube_level[i / 6 % 6];
			out[2] = cube_level[i % 6];
		}
	} else {
		memcpy(out, rgb, 3);
	}
}

/* Text over a coloured cell: black on light colours, white on dark (L* 55 is about where the
 * two contrasts cross), judged on the colour the terminal will show, not the exact one. */
static const uint8_t *ink_for(int depth, const uint8_t bg[3])
{
	uint8_t q[3];
	shown_rgb(depth, bg, q);
	return gb_lightness(q) > 55.0 ? BLACK : WHITE;
}

/* ---- shared pieces of a layout -------------------------------------------------------- */

typedef struct area {
	gb_grid *g;
	int x, y, w, h;
	int plain, depth;
	const gb_figure *f;       /* the figure drawn here (a grid's panel in a panel's area) */
	const gb_figure *top;     /* the whole figure */
	double lo, hi;
	int n_bad;                /* NaN and inf, not the masked -inf */
	int n_masked;             /* -inf of a masked figure */
} area;

static double unit(const area *a, double v)
{
	return (v - a->lo) / (a->hi - a->lo);
}

static int is_masked(const area *a, double v)
{
	return gb_fig_is_masked(a->top, a->f, (float)v);
}

/* The colour of a value: gb_mask_rgb for a masked cell, gb_bad_rgb for NaN/inf. */
static void value_rgb(const area *a, double v, uint8_t rgb[3])
{
	if (is_masked(a, v))
		memcpy(rgb, gb_mask_rgb, 3);
	else if (!isfinite(v))
		memcpy(rgb, gb_bad_rgb, 3);
	else
		gb_cmap_rgb(a->f->cmap, unit(a, v), rgb);
}

static char ramp_char(const area *a, double v)
{
	if (is_masked(a, v))
		return MASK_CHAR;
	if (!isfinite(v))
		return BAD_CHAR;
	double t = unit(a, v);
	int i = t <= 0 ? 0 : (int)floor(t * RAMP_N);
	return RAMP[i >= RAMP_N ? RAMP_N - 1 : i];
}

static void title_line(area *a, int y, const char *notice)
{
	char buf[1024];
	int nw = notice ? gb_utf8_width(notice) : 0;
	int tw = a->w;
	if (notice && a->f->title)
		tw = a->w - nw - 2;
	if (a->f->title) {
		shorten(a->f->title, tw, buf, sizeof buf);
		gb_grid_text(a->g, a->x, y, tw, buf, NULL, NULL, GB_ATTR_BOLD);
	}
	if (notice) {
		shorten(notice, a->w, buf, sizeof buf);
		nw = gb_utf8_width(buf);
		gb_grid_text(a->g, a->x + a->w - nw, y, nw, buf, NULL, NULL, GB_ATTR_DIM);
	}
	touch(a->g, y);
}

/* The caption, cut to leave room for its notes: "  ██ 10 masked (-inf)" when there are masked
 * cells, "  ██ 3 NaN/inf" when there are bad values (plain: "/ 10 masked (-inf)", "! 3 NaN/inf"). */
static void caption_line(area *a, int y)
{
	char note[2][64], buf[1024];
	const uint8_t *swatch[2];
	char sch[2];
	int nn = 0, nw = 0, x = a->x;
	if (a->n_masked) {
		snprintf(note[nn], sizeof note[nn], " %d masked (-inf)", a->n_masked);
		swatch[nn] = gb_mask_rgb;
		sch[nn++] = MASK_CHAR;
	}
	if (a->n_bad) {
		snprintf(note[nn], sizeof note[nn], " %d NaN/inf", a->n_bad);
		swatch[nn] = gb_bad_rgb;
		sch[nn++] = BAD_CHAR;
	}
	/* each note takes "  " + its swatch (2 columns, 1 plain) + its text: 4 + text reserved */
	for (int i = 0; i < nn; i++)
		nw += 4 + (int)strlen(note[i]);
	while (nn && nw > a->w) /* drop the last note first */
		nw -= 4 + (int)strlen(note[--nn]);
	int cw = a->w - nw;
	if (a->f->caption) {
		shorten(a->f->caption, cw, buf, sizeof buf);
		x += gb_grid_text(a->g, x, y, cw, buf, NULL, NULL, 0);
	}
	for (int i = 0; i < nn; i++) {
		int tw = (int)strlen(note[i]);
		x += x > a->x ? 2 : 0;
		if (a->plain) {
			char sw[2] = { sch[i], 0 };
			gb_grid_text(a->g, x, y, 1, sw, NULL, NULL, 0);
			x += 1;
		} else {
			gb_grid_text(a->g, x, y, 2, "  ", NULL, swatch[i], 0);
			x += 2;
		}
		x += gb_grid_text(a->g, x, y, tw, note[i], NULL, NULL, 0);
	}
	touch(a->g, y);
}

/* "lo ████████ hi" from x (plain: "lo [ .:-=+*#%@] hi"), at most w columns. */
static void colorbar_line(area *a, int x, int y, int w)
{
	char sa[64], sb[64];
	fmt_ends(a->lo, a->hi, a->f->precision, sa, sb, sizeof sa);
	int la = (int)strlen(sa), lb = (int)strlen(sb);
	if (a->plain) {
		char bar[RAMP_N + 3];
		snprintf(bar, sizeof bar, "[%s]", RAMP);
		if (la + lb + 2 + RAMP_N + 2 > w)
			return;
		x += gb_grid_text(a->g, x, y, la, sa, NULL, NULL, 0) + 1;
		x += gb_grid_text(a->g, x, y, RAMP_N + 2, bar, NULL, NULL, 0) + 1;
		gb_grid_text(a->g, x, y, lb, sb, NULL, NULL, 0);
	} else {
		int n = w - la - lb - 2;
		if (n > 32)
			n = 32;
		if (n < 4)
			return;
		x += gb_grid_text(a->g, x, y, la, sa, NULL, NULL, 0) + 1;
		for (int i = 0; i < n; i++) {
			uint8_t rgb[3];
			gb_cmap_rgb(a->f->cmap, (double)i / (n - 1), rgb);
			set_cell(a->g, x + i, y, ' ', NULL, rgb, 0);
		}
		gb_grid_text(a->g, x + n + 1, y, lb, sb, NULL, NULL, 0);
	}
	touch(a->g, y);
}

static void range_text(char *buf, size_t cap, int plain, const char *what, int first, int n,
                       int total)
{
	snprintf(buf, cap, "%s %d%s%d of %d", what, first + 1, plain ? "-" : "\xE2\x80\x93",
	         first + n, total);
}

/* v within [lo, hi]; an empty interval (hi < lo) means lo, so a window over nothing starts at 0 */
static int clampi(int v, int lo, int hi)
{
	return v > hi ? (hi < lo ? lo : hi) : v < lo ? lo : v;
}

static int too_small(gb_verr *err, int w, int h, int need_w, int need_h)
{
	return gb_vfail(err, "a %dx%d area is too small for this figure (it needs at least %dx%d "
	                "columns x lines): enlarge the terminal", w, h, need_w, need_h);
}

static int check_area(gb_grid *g, int x, int y, int w, int h, const gb_figure *f, gb_verr *err)
{
	if (!g || !g->cells || !f)
		return gb_vfail(err, "no grid or no figure to draw");
	if (x < 0 || y < 0 || w < 1 || h < 1 || x + w > g->w || y + h > g->h)
		return gb_vfail(err, "the area %dx%d at %d,%d is outside the %dx%d grid", w, h, x, y,
		                g->w, g->h);
	if ((size_t)f->rows * (size_t)f->cols > 0 && !f->values)
		return gb_vfail(err, "the figure has a %dx%d shape but no values", f->rows, f->cols);
	return 0;
}

static void area_init(area *a, gb_grid *g, int x, int y, int w, int h, const gb_figure *f,
                      const gb_cells_opts *o)
{
	float lo, hi;
	a->g = g;
	a->x = x;
	a->y = y;
	a->w = w;
	a->h = h;
	a->f = f;
	a->top = f;
	a->plain = o->depth == GB_DEPTH_PLAIN;
	a->depth = o->depth;
	gb_fig_range(f, &lo, &hi, &a->n_bad);
	{
		gb_fig_counts k;
		gb_fig_count(f, &k);
		a->n_masked = k.masked;
	}
	a->lo = lo;
	a->hi = hi;
}

/* ---- heatmap -------------------------------------------------------------------------- */

enum { P_TITLE = 1, P_LABELS = 2, P_COLORBAR = 4, P_CAPTION = 8, P_NOTICE = 16, P_AXIS = 32 };

/* Where everything of a heatmap goes: decided once, then drawn. */
typedef struct hplan {
	int half, rpl;             /* half blocks; data rows per line */
	int lw, cw;                /* row-label columns (0: none), columns per data column */
	int vert, clines;          /* column labels written vertically; their lines */
	int title, notice_own, axis, cbar, cap; /* lines given to each (0 or 1) */
	int dlines;                /* lines of data */
	int row0, rows, col0, cols;
	int xd;                    /* first column of the data, relative to the area */
} hplan;

static const char *row_label(const gb_figure *f, int i, char *tmp)
{
	if (f->row_labels)
		return f->row_labels[i];
	snprintf(tmp, 16, "%d", i + 1);
	return tmp;
}

static const char *col_label(const gb_figure *f, int j, char *tmp)
{
	if (f->col_labels)
		return f->col_labels[j];
	snprintf(tmp, 16, "%d", j + 1);
	return tmp;
}

/* Widest displayed label (each cut at cap columns). */
static int max_label_w(const gb_figure *f, int n, int rows, int cap)
{
	char tmp[16], buf[LBUF];
	int m = 0;
	for (int i = 0; i < n; i++) {
		gb_label_display(rows ? row_label(f, i, tmp) : col_label(f, i, tmp), cap, buf, sizeof buf);
		int w = gb_utf8_width(buf);
		if (w > m)
			m = w;
	}
	return m;
}

static int num_width(const gb_figure *f)
{
	char buf[64];
	int m = 1;
	size_t n = (size_t)f->rows * (size_t)f->cols;
	for (size_t i = 0; i < n; i++) {
		int w = fmt_num(f->values[i], f->precision, buf, sizeof buf);
		if (w > m)
			m = w;
	}
	return m;
}

/* Plans a heatmap with or without half blocks; returns 0, or -1 when not even one line of
 * data fits. */
static int plan_heatmap(const area *a, const gb_cells_opts *o, int parts, int half, int numw,
                        int rlw, int clw, hplan *p)
{
	const gb_figure *f = a->f;
	memset(p, 0, sizeof *p);
	p->half = half;
	p->rpl = half ? 2 : 1;
	if (parts & P_LABELS) {
		p->lw = rlw;
		if (p->lw > a->w / 3)
			p->lw = a->w / 3;
	}
	int avail = a->w - (p->lw ? p->lw + 1 : 0);
	if (avail < 1)
		return -1;
	if (f->numbers)
		p->cw = numw + 1;
	else if (o->cell_w > 0)
		p->cw = o->cell_w;
	else {
		/* Two columns per cell make it square in a typical font (one with half blocks);
		 * wider when that lets the column labels lie flat, if there is room. */
		int want = half ? 1 : 2;
		if ((parts & P_LABELS) && clw + 1 <= 8 && clw + 1 > want)
			want = clw + 1;
		p->cw = clampi(avail / (f->cols ? f->cols : 1), 1, want);
	}
	if (p->cw > avail)
		p->cw = avail;
	p->title = (parts & P_TITLE) && f->title;
	p->axis = (parts & P_LABELS) && (parts & P_AXIS) && (f->row_title || f->col_title);
	p->cbar = (parts & P_COLORBAR) && f->colorbar;
	p->cap = (parts & P_CAPTION) && (f->caption || a->n_bad || a->n_masked);
	if (parts & P_LABELS) {
		p->vert = clw > (p->cw > 1 ? p->cw - 1 : 1);
		p->clines = p->vert ? clw : 1;
	}
	for (;;) {
		int fixed = p->title + p->notice_own + p->axis + p->cbar + p->cap;
		if (p->vert) /* vertical labels take at most a third of what is left, and 8 lines */
			p->clines = clampi(clw, 1, clampi((a->h - fixed) / 3, 1, 8));
		p->dlines = a->h - fixed - p->clines;
		if (p->dlines >= 1)
			break;
		/* Give things up in order of least use to a reader of the data. */
		if (p->axis) p->axis = 0;
		else if (p->clines > 1) clw = 1;
		else if (p->clines) p->clines = 0, p->vert = 0, clw = 0;
		else if (p->cbar) p->cbar = 0;
		else if (p->notice_own) p->notice_own = 0;
		else if (p->cap) p->cap = 0;
		else if (p->title) p->title = 0;
		else return -1;
	}
	p->rows = clampi(p->dlines * p->rpl, 0, f->rows);
	p->cols = clampi(avail / p->cw, 0, f->cols);
	p->row0 = clampi(o->row0, 0, f->rows - p->rows);
	p->col0 = clampi(o->col0, 0, f->cols - p->cols);
	p->xd = p->lw ? p->lw + 1 : 0;
	return 0;
}

/* "rows 1–16 of 200, cols 1–38 of 200" when p shows part of the heatmap, else "": the
 * longest form that fits the area, down to "rows 1–16/200 cols 1–38/200". */
static void heatmap_notice(const area *a, const hplan *p, char *buf, size_t cap)
{
	const gb_figure *f = a->f;
	const char *dash = a->plain ? "-" : "\xE2\x80\x93";
	char r[64], c[64];
	buf[0] = 0;
	if (p->rows == f->rows && p->cols == f->cols)
		return;
	range_text(r, sizeof r, a->plain, "rows", p->row0, p->rows, f->rows);
	range_text(c, sizeof c, a->plain, "cols", p->col0, p->cols, f->cols);
	snprintf(buf, cap, "%s, %s%s", r, c, p->half ? " (2 rows per line)" : "");
	if (gb_utf8_width(buf) > a->w)
		snprintf(buf, cap, "%s, %s", r, c);
	if (gb_utf8_width(buf) > a->w)
		snprintf(buf, cap, "rows %d%s%d/%d cols %d%s%d/%d", p->row0 + 1, dash, p->row0 + p->rows,
		         f->rows, p->col0 + 1, dash, p->col0 + p->cols, f->cols);
}

static void draw_heatmap(area *a, const hplan *p, int parts)
{
	const gb_figure *f = a->f;
	gb_grid *g = a->g;
	char notice[160], buf[LBUF], buf2[LBUF], tmp[16], tmp2[16];
	int y = a->y;
	heatmap_notice(a, p, notice, sizeof notice);
	int has_notice = notice[0] && (parts & P_NOTICE);
	if (p->title) {
		title_line(a, y++, has_notice && !p->notice_own ? notice : NULL);
	}
	if (p->notice_own) {
		shorten(notice, a->w, buf, sizeof buf);
		gb_grid_text(g, a->x, y++, a->w, buf, NULL, NULL, GB_ATTR_DIM);
	}
	int xd = a->x + p->xd;
	if (p->axis) {
		/* The row title over the row labels and the column title over the columns when they
		 * fit; otherwise both in words from the left edge. */
		const char *right = a->plain ? "->" : "\xE2\x86\x92", *down = a->plain ? "v" : "\xE2\x86\x93";
		int rw = f->row_title ? gb_utf8_width(f->row_title) : 0;
		if (rw <= p->lw) {
			if (f->row_title)
				gb_grid_text(g, xd - 1 - rw, y, rw, f->row_title, NULL, NULL, GB_ATTR_DIM);
			if (f->col_title) {
				snprintf(buf2, sizeof buf2, "%s %s", f->col_title, right);
				shorten(buf2, a->x + a->w - xd, buf, sizeof buf);
				gb_grid_text(g, xd, y, a->x + a->w - xd, buf, NULL, NULL, GB_ATTR_DIM);
			}
		} else {
			if (a->plain)
				snprintf(buf2, sizeof buf2, "rows: %s%s%s", f->row_title, f->col_title ? ", cols: " : "",
				         f->col_title ? f->col_title : "");
			else
				snprintf(buf2, sizeof buf2, "%s %s%s%s%s", f->row_title, down, f->col_title ? "  " : "",
				         f->col_title ? f->col_title : "", f->col_title ? " " : "");
			if (!a->plain && f->col_title)
				snprintf(buf2 + strlen(buf2), sizeof buf2 - strlen(buf2), "%s", right);
			shorten(buf2, a->w, buf, sizeof buf);
			gb_grid_text(g, a->x, y, a->w, buf, NULL, NULL, GB_ATTR_DIM);
		}
		touch(g, y++);
	}
	/* column labels, right-aligned on their cell (as the numbers below them are) or, when too
	 * long, downwards and ending just above the data */
	if (p->clines) {
		for (int j = 0; j < p->cols; j++) {
			int cx = xd + j * p->cw;
			if (!p->vert) {
				gb_label_display(col_label(f, p->col0 + j, tmp), p->cw > 1 ? p->cw - 1 : 1, buf,
				                 sizeof buf);
				int w = gb_utf8_width(buf);
				gb_grid_text(g, cx + p->cw - w, y, w, buf, NULL, NULL, 0);
				continue;
			}
			gb_label_display(col_label(f, p->col0 + j, tmp), p->clines, buf, sizeof buf);
			int n = 0, k;
			uint32_t cp;
			for (const char *s = buf; (k = gb_utf8_decode(s, &cp)) > 0; s += k)
				n += gb_cp_width(cp) > 0;
			int ly = y + p->clines - n, lx = cx + (p->cw - 1) / 2;
			for (const char *s = buf; (k = gb_utf8_decode(s, &cp)) > 0; s += k) {
				int w = gb_cp_width(cp);
				if (w == 0)
					continue;
				if (w == 2 && p->cw < 2)
					cp = '?'; /* a wide character would cover its neighbour's label */
				set_cell(g, lx, ly, cp, NULL, NULL, 0);
				if (w == 2 && p->cw >= 2)
					set_cell(g, lx + 1, ly, GB_CELL_CONT, NULL, NULL, 0);
				ly++;
			}
		}
		for (int i = 0; i < p->clines; i++)
			touch(g, y + i);
		y += p->clines;
	}
	/* rows */
	for (int line = 0; line < p->dlines && line * p->rpl < p->rows; line++, y++) {
		int r = p->row0 + line * p->rpl, r2 = r + 1 < p->row0 + p->rows ? r + 1 : -1;
		if (p->lw) {
			if (!p->half || r2 < 0 || !f->row_labels || p->lw < 3) {
				gb_label_display(row_label(f, r, tmp), p->lw, buf, sizeof buf);
			} else { /* both rows' labels, halved: "the/cat" */
				int hw = (p->lw - 1) / 2;
				gb_label_display(row_label(f, r, tmp), hw, buf2, sizeof buf2);
				size_t k = strlen(buf2);
				buf2[k++] = '/';
				gb_label_display(row_label(f, r2, tmp2), p->lw - gb_utf8_width(buf2), buf2 + k,
				                 sizeof buf2 - k);
				memcpy(buf, buf2, sizeof buf);
			}
			int w = gb_utf8_width(buf);
			gb_grid_text(g, xd - 1 - w, y, w, buf, NULL, NULL, 0);
		}
		const float *row = f->values + (size_t)r * (size_t)f->cols;
		const float *row2 = r2 >= 0 ? f->values + (size_t)r2 * (size_t)f->cols : NULL;
		for (int j = 0; j < p->cols; j++) {
			int c = p->col0 + j, cx = xd + j * p->cw;
			double v = row[c];
			uint8_t rgb[3], rgb2[3];
			if (p->half) {
				value_rgb(a, v, rgb);
				if (row2)
					value_rgb(a, row2[c], rgb2);
				for (int k = 0; k < p->cw; k++)
					set_cell(g, cx + k, y, 0x2580, rgb, row2 ? rgb2 : NULL, 0); /* ▀ */
			} else if (f->numbers) {
				char num[64];
				int n = fmt_num(v, f->precision, num, sizeof num);
				if (a->plain) {
					gb_grid_text(g, cx + p->cw - n, y, n, num, NULL, NULL, 0);
				} else {
					value_rgb(a, v, rgb);
					for (int k = 0; k < p->cw - n; k++)
						set_cell(g, cx + k, y, ' ', NULL, rgb, 0);
					gb_grid_text(g, cx + p->cw - n, y, n, num, ink_for(a->depth, rgb), rgb, 0);
				}
			} else if (a->plain) {
				char ch = ramp_char(a, v);
				for (int k = 0; k < p->cw; k++)
					set_cell(g, cx + k, y, (uint32_t)ch, NULL, NULL, 0);
			} else {
				value_rgb(a, v, rgb);
				for (int k = 0; k < p->cw; k++)
					set_cell(g, cx + k, y, ' ', NULL, rgb, 0);
			}
		}
		touch(g, y);
	}
	if (p->cbar)
		colorbar_line(a, p->lw ? xd : a->x, y++, a->x + a->w - (p->lw ? xd : a->x));
	if (p->cap)
		caption_line(a, y);
}

static int heatmap_in(area *a, const gb_cells_opts *o, int parts, gb_cells_shown *sh,
                      gb_verr *err)
{
	const gb_figure *f = a->f;
	hplan p;
	int numw = f->numbers ? num_width(f) : 1;
	int lcap = clampi(a->w / 4, 3, 16);
	int rlw = (parts & P_LABELS) ? max_label_w(f, f->rows, 1, lcap) : 0;
	int clw = (parts & P_LABELS) ? max_label_w(f, f->cols, 0, 12) : 0;
	int can_half = !a->plain && !f->numbers && o->half != 0;
	int half = can_half && o->half == 1;
	if (plan_heatmap(a, o, parts, half, numw, rlw, clw, &p))
		return too_small(err, a->w, a->h, 8, 3);
	if (can_half && !half && o->half < 0 && p.rows < f->rows) {
		hplan q;
		if (plan_heatmap(a, o, parts, 1, numw, rlw, clw, &q) == 0 && q.rows > p.rows)
			p = q;
	}
	if (p.axis && p.rows < f->rows) { /* rows of data matter more than the axis names */
		hplan q;
		if (plan_heatmap(a, o, parts & ~P_AXIS, p.half, numw, rlw, clw, &q) == 0)
			p = q;
	}
	/* A window needs its notice: on the title line when both fit, else on a line of its own. */
	char notice[160];
	heatmap_notice(a, &p, notice, sizeof notice);
	if ((parts & P_NOTICE) && notice[0]) {
		int tw = f->title ? gb_utf8_width(f->title) : 0;
		if (!p.title || tw + 2 + gb_utf8_width(notice) > a->w) {
			hplan q = p;
			q.notice_own = 1;
			int fixed = q.title + 1 + q.axis + q.cbar + q.cap;
			if (a->h - fixed - q.clines >= 1) {
				q.dlines = a->h - fixed - q.clines;
				q.rows = clampi(q.dlines * q.rpl, 0, f->rows);
				q.row0 = clampi(o->row0, 0, f->rows - q.rows);
				p = q;
			}
		}
	}
	draw_heatmap(a, &p, parts);
	if (sh) {
		sh->row0 = p.row0;
		sh->rows = p.rows;
		sh->rows_total = f->rows;
		sh->col0 = p.col0;
		sh->cols = p.cols;
		sh->cols_total = f->cols;
		sh->rows_per_line = p.rpl;
		sh->cell_w = p.cw;
		sh->n_bad = a->n_bad;
		sh->n_masked = a->n_masked;
	}
	return 0;
}

int gb_cells_heatmap(gb_grid *g, int x, int y, int w, int h, const gb_figure *f,
                     const gb_cells_opts *o, gb_verr *err)
{
	area a;
	if (check_area(g, x, y, w, h, f, err))
		return -1;
	if (w < 10 || h < 2) /* below this a heatmap is a few coloured cells without meaning */
		return too_small(err, w, h, 10, 2);
	area_init(&a, g, x, y, w, h, f, o);
	if (f->rows == 0 || f->cols == 0) {
		title_line(&a, y, NULL);
		gb_grid_text(g, x, y + (h > 1), w, "(no values)", NULL, NULL, GB_ATTR_DIM);
		touch(g, y + (h > 1));
		memset(&g->shown, 0, sizeof g->shown);
		return 0;
	}
	memset(&g->shown, 0, sizeof g->shown);
	return heatmap_in(&a, o, P_TITLE | P_LABELS | P_AXIS | P_COLORBAR | P_CAPTION | P_NOTICE,
	                  &g->shown, err);
}

/* ---- bars ----------------------------------------------------------------------------- */

/* Left-aligned eighths of a cell, 1/8 .. 7/8. */
static const uint32_t EIGHTHS[8] = { ' ', 0x258F, 0x258E, 0x258D, 0x258C, 0x258B, 0x258A, 0x2589 };
#define FULL_BLOCK 0x2588u

int gb_cells_bars(gb_grid *g, int x, int y, int w, int h, const gb_figure *f,
                  const gb_cells_opts *o, gb_verr *err)
{
	area a;
	char buf[LBUF], tmp[16], num[64], notice[96];
	if (check_area(g, x, y, w, h, f, err))
		return -1;
	area_init(&a, g, x, y, w, h, f, o);
	int n = f->rows * f->cols;
	char **labels = f->col_labels && f->cols == n ? f->col_labels
	              : f->row_labels && f->rows == n ? f->row_labels : NULL;
	int title = f->title != NULL, cap = f->caption || a.n_bad || a.n_masked;
	int lines = h - title - cap;
	if (lines < 1 && cap) cap = 0, lines++;
	if (lines < 1 && title) title = 0, lines++;
	if (lines < 1 || w < 12)
		return too_small(err, w, h, 12, 1);
	int shown = clampi(lines, 0, n), first = clampi(o->row0, 0, n - shown);
	/* widths: label, bar, value */
	int lw = 0, vw = 1;
	for (int i = 0; i < n; i++) {
		gb_label_display(labels ? labels[i] : (snprintf(tmp, sizeof tmp, "%d", i + 1), tmp),
		                 clampi(w / 3, 3, 24), buf, sizeof buf);
		lw = lw > gb_utf8_width(buf) ? lw : gb_utf8_width(buf);
		int k = fmt_num(f->values[i], f->precision, num, sizeof num);
		vw = vw > k ? vw : k;
	}
	int bw = w - lw - 1 - 1 - vw;
	if (bw < 4) {
		lw = clampi(w - vw - 6, 1, lw);
		bw = w - lw - 2 - vw;
	}
	if (bw < 1)
		return too_small(err, w, h, vw + 6, 1);
	/* Bars grow from zero: the scale always contains it. */
	double lo = a.lo < 0 ? a.lo : 0, hi = a.hi > 0 ? a.hi : 0;
	if (lo == hi)
		hi = lo + 1;
	int z8 = (int)lround((0 - lo) / (hi - lo) * bw * 8);
	if (lo < 0 && hi > 0)
		z8 = (z8 + 4) / 8 * 8; /* bars of both signs meet on a cell edge */
	int diverging = f->cmap == GB_CMAP_COOLWARM;
	uint8_t pos[3], neg[3];
	gb_cmap_rgb(f->cmap, diverging ? 0.9 : 0.65, pos);
	gb_cmap_rgb(f->cmap, diverging ? 0.1 : 0.65, neg);

	int yy = y;
	if (title) {
		if (shown < n) {
			range_text(notice, sizeof notice, a.plain, "bars", first, shown, n);
			title_line(&a, yy++, notice);
		} else
			title_line(&a, yy++, NULL);
	}
	int xb = x + lw + 1;
	for (int i = first; i < first + shown; i++, yy++) {
		double v = f->values[i];
		gb_label_display(labels ? labels[i] : (snprintf(tmp, sizeof tmp, "%d", i + 1), tmp), lw,
		                 buf, sizeof buf);
		int lwi = gb_utf8_width(buf);
		gb_grid_text(g, x + lw - lwi, yy, lwi, buf, NULL, NULL, 0);
		int k = fmt_num(v, f->precision, num, sizeof num);
		if (!isfinite(v)) {
			if (a.plain)
				set_cell(g, xb, yy, is_masked(&a, v) ? MASK_CHAR : BAD_CHAR, NULL, NULL, 0);
			else
				set_cell(g, xb, yy, FULL_BLOCK, is_masked(&a, v) ? gb_mask_rgb : gb_bad_rgb, NULL, 0);
			gb_grid_text(g, x + w - k, yy, k, num, NULL, NULL, 0);
			touch(g, yy);
			continue;
		}
		double vc = v < lo ? lo : v > hi ? hi : v;
		int e8 = (int)lround((vc - lo) / (hi - lo) * bw * 8);
		if (e8 >= z8) { /* rightwards from zero, eighths at the tip */
			int full = (e8 - z8) / 8, rem = (e8 - z8) % 8, cx = xb + z8 / 8;
			for (int c = 0; c < full; c++)
				set_cell(g, cx + c, yy, a.plain ? '#' : FULL_BLOCK, a.plain ? NULL : pos, NULL, 0);
			if (rem && !a.plain)
				set_cell(g, cx + full, yy, EIGHTHS[rem], pos, NULL, 0);
			else if (rem >= 4)
				set_cell(g, cx + full, yy, '#', NULL, NULL, 0);
		} else { /* leftwards: the tip can only be a right half or a right eighth */
			int len = z8 - e8, full = len / 8, rem = len % 8, cx = xb + z8 / 8 - 1;
			for (int c = 0; c < full; c++)
				set_cell(g, cx - c, yy, a.plain ? '#' : FULL_BLOCK, a.plain ? NULL : neg, NULL, 0);
			if (rem && !a.plain)
				set_cell(g, cx - full, yy, rem >= 4 ? 0x2590 : 0x2595, neg, NULL, 0);
			else if (rem >= 4)
				set_cell(g, cx - full, yy, '#', NULL, NULL, 0);
		}
		gb_grid_text(g, x + w - k, yy, k, num, NULL, NULL, 0);
		touch(g, yy);
	}
	if (cap)
		caption_line(&a, yy);
	memset(&g->shown, 0, sizeof g->shown);
	g->shown.row0 = first;
	g->shown.rows = shown;
	g->shown.rows_total = n;
	g->shown.rows_per_line = 1;
	g->shown.n_bad = a.n_bad;
	g->shown.n_masked = a.n_masked;
	return 0;
}

/* ---- lines ---------------------------------------------------------------------------- */

/* Braille dots of a 2x4 cell: bit of dot (column dx, row dy). */
static const uint8_t BRAILLE_BIT[4][2] = { { 0x01, 0x08 }, { 0x02, 0x10 }, { 0x04, 0x20 },
                                           { 0x40, 0x80 } };
static const char SERIES_MARK[] = "*+ox#@%&";

static void series_rgb(const gb_figure *f, int k, uint8_t rgb[3])
{
	/* spread over the map but away from its darkest end, which vanishes on a dark terminal */
	double t = f->n_series == 1 ? 0.6 : 0.3 + 0.65 * k / (f->n_series - 1);
	if (f->cmap == GB_CMAP_COOLWARM && f->n_series > 1)
		t = (double)k / (f->n_series - 1);
	gb_cmap_rgb(f->cmap, t, rgb);
}

typedef struct plot {
	int px, py, pw, ph;        /* the plot's cells */
	int sx, sy;                /* dots per cell: 2x4 braille, 1x1 plain */
	uint8_t *dots;             /* (ph, pw) braille bits per cell */
	int8_t *owner;             /* (ph, pw) last series to touch a cell, -1 none */
} plot;

static void plot_dot(plot *pl, int dx, int dy, int k)
{
	if (dx < 0 || dy < 0 || dx >= pl->pw * pl->sx || dy >= pl->ph * pl->sy)
		return;
	int cx = dx / pl->sx, cy = dy / pl->sy;
	size_t i = (size_t)cy * (size_t)pl->pw + (size_t)cx;
	if (pl->sx == 2)
		pl->dots[i] |= BRAILLE_BIT[dy % 4][dx % 2];
	pl->owner[i] = (int8_t)(k > 127 ? 127 : k);
}

static void plot_segment(plot *pl, int x0, int y0, int x1, int y1, int k)
{
	int dx = abs(x1 - x0), dy = -abs(y1 - y0), sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
	int e = dx + dy;
	for (;;) { /* Bresenham */
		plot_dot(pl, x0, y0, k);
		if (x0 == x1 && y0 == y1)
			break;
		int e2 = 2 * e;
		if (e2 >= dy) { e += dy; x0 += sx; }
		if (e2 <= dx) { e += dx; y0 += sy; }
	}
}

int gb_cells_lines(gb_grid *g, int x, int y, int w, int h, const gb_figure *f,
                   const gb_cells_opts *o, gb_verr *err)
{
	area a;
	char buf[1024], sa[64], sb[64];
	if (check_area(g, x, y, w, h, f, err))
		return -1;
	area_init(&a, g, x, y, w, h, f, o);
	int npts = 0;
	for (int s = 0; s < f->n_series; s++)
		npts = f->series[s].n > npts ? f->series[s].n : npts;
	if (f->xs && f->n_xs < npts)
		npts = f->n_xs;
	double xlo = 0, xhi = npts > 1 ? npts - 1 : 1;
	if (f->xs && npts > 0) {
		xlo = INFINITY;
		xhi = -INFINITY;
		for (int i = 0; i < npts; i++)
			if (isfinite(f->xs[i])) {
				xlo = fmin(xlo, f->xs[i]);
				xhi = fmax(xhi, f->xs[i]);
			}
		if (!(xlo <= xhi))
			xlo = 0, xhi = 1;
		if (xlo == xhi)
			xlo -= 1, xhi += 1;
	}
	/* lines: title, y title, plot, axis, x ends, x title, legend, caption */
	int title = f->title != NULL, ytl = f->y_title != NULL, xtl = f->x_title != NULL;
	int legend = f->n_series > 0, cap = f->caption || a.n_bad || a.n_masked;
	int ph;
	for (;;) {
		ph = h - title - ytl - 2 - xtl - legend - cap;
		if (ph >= 2)
			break;
		if (ytl) ytl = 0;
		else if (xtl) xtl = 0;
		else if (legend) legend = 0;
		else if (cap) cap = 0;
		else if (title) title = 0;
		else return too_small(err, w, h, 16, 4);
	}
	fmt_ends(a.lo, a.hi, f->precision, sa, sb, sizeof sa);
	int yw = (int)(strlen(sa) > strlen(sb) ? strlen(sa) : strlen(sb));
	int pw = w - yw - 1;
	if (pw < 4)
		return too_small(err, w, h, yw + 5, h);
	plot pl = { x + yw + 1, y + title + ytl, pw, ph, a.plain ? 1 : 2, a.plain ? 1 : 4, NULL, NULL };
	pl.dots = calloc((size_t)pw * (size_t)ph, 1);
	pl.owner = malloc((size_t)pw * (size_t)ph);
	if (!pl.dots || !pl.owner) {
		free(pl.dots);
		free(pl.owner);
		return gb_vfail(err, "out of memory for a %dx%d plot", pw, ph);
	}
	memset(pl.owner, -1, (size_t)pw * (size_t)ph);
	int DX = pw * pl.sx - 1, DY = ph * pl.sy - 1;
	for (int k = 0; k < f->n_series; k++) {
		const gb_series *s = &f->series[k];
		int have = 0, px0 = 0, py0 = 0, n = s->n < npts || !f->xs ? s->n : npts;
		for (int i = 0; i < n; i++) {
			double xv = f->xs ? f->xs[i] : i, yv = s->y[i];
			if (!isfinite(xv) || !isfinite(yv)) { /* a gap, not a jump to the edge */
				have = 0;
				continue;
			}
			int px = (int)lround((xv - xlo) / (xhi - xlo) * DX);
			int py = (int)lround((a.hi - yv) / (a.hi - a.lo) * DY);
			px = clampi(px, 0, DX);
			py = clampi(py, 0, DY);
			if (have)
				plot_segment(&pl, px0, py0, px, py, k);
			else
				plot_dot(&pl, px, py, k);
			have = 1;
			px0 = px;
			py0 = py;
		}
	}
	int yy = y;
	if (title)
		title_line(&a, yy++, NULL);
	if (ytl) {
		shorten(f->y_title, w, buf, sizeof buf);
		gb_grid_text(g, x, yy, w, buf, NULL, NULL, GB_ATTR_DIM);
		touch(g, yy++);
	}
	for (int r = 0; r < ph; r++, yy++) {
		const char *tick = r == 0 ? sb : r == ph - 1 ? sa : NULL;
		if (tick)
			gb_grid_text(g, x + yw - (int)strlen(tick), yy, yw, tick, NULL, NULL, 0);
		set_cell(g, x + yw, yy, a.plain ? (tick ? '+' : '|') : tick ? 0x2524 : 0x2502, NULL, NULL,
		         GB_ATTR_DIM);
		for (int c = 0; c < pw; c++) {
			size_t i = (size_t)r * (size_t)pw + (size_t)c;
			if (pl.owner[i] < 0)
				continue;
			uint8_t rgb[3];
			if (a.plain) {
				set_cell(g, pl.px + c, yy, (uint32_t)SERIES_MARK[pl.owner[i] % 8], NULL, NULL, 0);
			} else {
				series_rgb(f, pl.owner[i], rgb);
				set_cell(g, pl.px + c, yy, 0x2800u + pl.dots[i], rgb, NULL, 0);
			}
		}
		touch(g, yy);
	}
	free(pl.dots);
	free(pl.owner);
	/* x axis and its ends */
	set_cell(g, x + yw, yy, a.plain ? '+' : 0x2514, NULL, NULL, GB_ATTR_DIM);
	for (int c = 0; c < pw; c++)
		set_cell(g, pl.px + c, yy, a.plain ? '-' : 0x2500, NULL, NULL, GB_ATTR_DIM);
	touch(g, yy++);
	fmt_ends(xlo, xhi, f->xs ? f->precision : 0, sa, sb, sizeof sa);
	gb_grid_text(g, pl.px, yy, pw, sa, NULL, NULL, 0);
	if ((int)(strlen(sa) + strlen(sb)) + 1 <= pw)
		gb_grid_text(g, pl.px + pw - (int)strlen(sb), yy, pw, sb, NULL, NULL, 0);
	touch(g, yy++);
	if (xtl) {
		shorten(f->x_title, pw, buf, sizeof buf);
		int tw = gb_utf8_width(buf);
		gb_grid_text(g, pl.px + (pw - tw) / 2, yy, tw, buf, NULL, NULL, GB_ATTR_DIM);
		touch(g, yy++);
	}
	if (legend) {
		int lx = x;
		for (int k = 0; k < f->n_series && lx < x + w; k++) {
			uint8_t rgb[3];
			char mark[8];
			series_rgb(f, k, rgb);
			if (a.plain)
				snprintf(mark, sizeof mark, "%c", SERIES_MARK[k % 8]);
			else
				snprintf(mark, sizeof mark, "\xE2\x94\x81\xE2\x94\x81"); /* ━━ */
			int used = gb_grid_text(g, lx, yy, x + w - lx, mark, a.plain ? NULL : rgb, NULL, 0);
			lx += used + 1;
			shorten(f->series[k].label, clampi(x + w - lx, 0, 24), buf, sizeof buf);
			lx += gb_grid_text(g, lx, yy, x + w - lx, buf, NULL, NULL, 0) + 2;
		}
		touch(g, yy++);
	}
	if (cap)
		caption_line(&a, yy);
	memset(&g->shown, 0, sizeof g->shown);
	g->shown.rows = g->shown.rows_total = f->n_series;
	g->shown.cols = g->shown.cols_total = npts;
	g->shown.rows_per_line = 1;
	g->shown.n_bad = a.n_bad;
	g->shown.n_masked = a.n_masked;
	return 0;
}

/* ---- token strip ---------------------------------------------------------------------- */

int gb_cells_strip(gb_grid *g, int x, int y, int w, int h, const gb_figure *f,
                   const gb_cells_opts *o, gb_verr *err)
{
	area a;
	char lab[LBUF], num[64], text[LBUF + 80], notice[96], tmp[16];
	if (check_area(g, x, y, w, h, f, err))
		return -1;
	area_init(&a, g, x, y, w, h, f, o);
	int n = f->rows * f->cols;
	char **labels = f->col_labels && f->cols == n ? f->col_labels
	              : f->row_labels && f->rows == n ? f->row_labels : NULL;
	int title = f->title != NULL, cbar = f->colorbar, cap = f->caption || a.n_bad || a.n_masked;
	int lines = h - title - cbar - cap;
	if (lines < 1 && cbar) cbar = 0, lines++;
	if (lines < 1 && cap) cap = 0, lines++;
	if (lines < 1 && title) title = 0, lines++;
	if (lines < 1 || w < 8)
		return too_small(err, w, h, 8, 1);
	int first = clampi(o->col0, 0, n > 0 ? n - 1 : 0), i = first, line = 0, cx = x;
	int ty = y + title;
	/* Each token: " label " on its colour (plain: "label(0.12)"), then a gap; a token that
	 * does not fit on what is left of a line starts the next one. */
	while (i < n && line < lines) {
		double v = f->values[i];
		gb_label_display(labels ? labels[i] : (snprintf(tmp, sizeof tmp, "%d", i + 1), tmp),
		                 clampi(w - 4, 1, 24), lab, sizeof lab);
		fmt_num(v, f->precision, num, sizeof num);
		if (a.plain)
			snprintf(text, sizeof text, "%s(%s%s)", lab, isfinite(v) ? "" : "!", num);
		else if (f->numbers)
			snprintf(text, sizeof text, " %s %s ", lab, num);
		else
			snprintf(text, sizeof text, " %s ", lab);
		int tw = gb_utf8_width(text);
		if (tw > w)
			tw = w;
		if (cx > x && cx + tw > x + w) {
			line++;
			cx = x;
			continue;
		}
		if (a.plain) {
			gb_grid_text(g, cx, ty + line, tw, text, NULL, NULL, 0);
		} else {
			uint8_t rgb[3];
			value_rgb(&a, v, rgb);
			gb_grid_text(g, cx, ty + line, tw, text, ink_for(a.depth, rgb), rgb, 0);
		}
		touch(g, ty + line);
		cx += tw + 1;
		i++;
	}
	int shown = i - first;
	if (title) {
		if (shown < n) {
			range_text(notice, sizeof notice, a.plain, "tokens", first, shown, n);
			title_line(&a, y, notice);
		} else
			title_line(&a, y, NULL);
	}
	int yy = ty + (cx > x ? line + 1 : line);
	if (cbar)
		colorbar_line(&a, x, yy++, w);
	if (cap)
		caption_line(&a, yy);
	memset(&g->shown, 0, sizeof g->shown);
	g->shown.col0 = first;
	g->shown.cols = shown;
	g->shown.cols_total = n;
	g->shown.rows = g->shown.rows_total = 1;
	g->shown.rows_per_line = 1;
	g->shown.n_bad = a.n_bad;
	g->shown.n_masked = a.n_masked;
	return 0;
}

/* ---- small multiples ------------------------------------------------------------------ */

int gb_cells_panels(gb_grid *g, int x, int y, int w, int h, const gb_figure *f,
                    const gb_cells_opts *o, gb_verr *err)
{
	area a;
	char notice[160], r[64];
	if (check_area(g, x, y, w, h, f, err))
		return -1;
	area_init(&a, g, x, y, w, h, f, o);
	int n = f->n_panels;
	for (int i = 0; i < n; i++)
		if (!f->panels[i] || ((size_t)f->panels[i]->rows * (size_t)f->panels[i]->cols > 0 &&
		                      !f->panels[i]->values))
			return gb_vfail(err, "panel %d of the grid has no values", i + 1);
	int gc = f->grid_cols > 0 ? f->grid_cols : (int)ceil(sqrt(n > 0 ? n : 1));
	int pw = (w - (gc - 1)) / gc;
	while (gc > 1 && pw < 6) { /* too narrow to show anything: fewer, wider columns */
		gc--;
		pw = (w - (gc - 1)) / gc;
	}
	int gr = (n + gc - 1) / gc;
	int title = f->title != NULL, cbar = f->colorbar, cap = f->caption || a.n_bad || a.n_masked;
	int avail = h - title - cbar - cap;
	if (avail < 2 && cbar) cbar = 0, avail++;
	if (avail < 2 && cap) cap = 0, avail++;
	if (avail < 2 || pw < 4)
		return too_small(err, w, h, 12, 3);
	/* a panel's natural height: its title and its rows, one per line when every row of panels
	 * fits that way (bigger, square cells), else two per line with half blocks */
	int ph = 1, ph_half = 1, half = 0;
	for (int i = 0; i < n; i++) {
		const gb_figure *p = f->panels[i];
		int need = 1 + p->rows, need_half = 1 + (p->numbers ? p->rows : (p->rows + 1) / 2);
		ph = need > ph ? need : ph;
		ph_half = need_half > ph_half ? need_half : ph_half;
	}
	if (!a.plain && o->half != 0 && (o->half > 0 || ph * gr > avail)) {
		half = 1;
		ph = ph_half;
	}
	if (ph > avail)
		ph = avail;
	int nr = clampi(avail / ph, 1, gr > 0 ? gr : 1);
	int prow0 = clampi(o->row0, 0, gr - nr);
	int clipped = 0, cut_rows = 0, cut_cols = 0;
	for (int pr = 0; pr < nr; pr++)
		for (int pc = 0; pc < gc; pc++) {
			int idx = (prow0 + pr) * gc + pc;
			if (idx >= n)
				break;
			const gb_figure *p = f->panels[idx];
			area pa = a;
			pa.x = x + pc * (pw + 1);
			pa.y = y + title + pr * ph;
			pa.w = pw;
			pa.h = ph;
			pa.f = p;
			gb_cells_opts po = *o;
			po.row0 = po.col0 = 0;
			po.cell_w = 0;
			po.half = half ? 1 : 0;
			if (p->rows == 0 || p->cols == 0) {
				if (p->title)
					title_line(&pa, pa.y, NULL);
				continue;
			}
			gb_cells_shown sh;
			if (heatmap_in(&pa, &po, P_TITLE, &sh, err))
				return -1;
			if (sh.rows < p->rows || sh.cols < p->cols) {
				clipped = 1;
				cut_rows = sh.rows;
				cut_cols = sh.cols;
			}
		}
	int yy = y + title + nr * ph;
	if (title) {
		notice[0] = 0;
		if (nr < gr) {
			range_text(r, sizeof r, a.plain, "panel rows", prow0, nr, gr);
			snprintf(notice, sizeof notice, "%s", r);
		}
		if (clipped)
			snprintf(notice + strlen(notice), sizeof notice - strlen(notice),
			         "%seach cut to %dx%d", notice[0] ? ", " : "", cut_rows, cut_cols);
		title_line(&a, y, notice[0] ? notice : NULL);
	}
	if (cbar)
		colorbar_line(&a, x, yy++, w);
	if (cap)
		caption_line(&a, yy);
	memset(&g->shown, 0, sizeof g->shown);
	g->shown.row0 = prow0;
	g->shown.rows = nr;
	g->shown.rows_total = gr;
	g->shown.cols = g->shown.cols_total = gc;
	g->shown.rows_per_line = half ? 2 : 1;
	g->shown.n_bad = a.n_bad;
	g->shown.n_masked = a.n_masked;
	return 0;
}

/* ---- dispatch ------------------------------------------------------------------------- */

void gb_cells_opts_default(gb_cells_opts *o, int depth)
{
	memset(o, 0, sizeof *o);
	o->depth = depth;
	o->half = -1;
}

int gb_cells_render(gb_grid *g, int x, int y, int w, int h, const gb_figure *f,
                    const gb_cells_opts *o, gb_verr *err)
{
	gb_cells_opts def;
	if (!o) {
		gb_cells_opts_default(&def, GB_DEPTH_PLAIN);
		o = &def;
	}
	if (!f)
		return gb_vfail(err, "no figure to draw");
	switch (f->kind) {
	case GB_FIG_HEATMAP: return gb_cells_heatmap(g, x, y, w, h, f, o, err);
	case GB_FIG_BARS: return gb_cells_bars(g, x, y, w, h, f, o, err);
	case GB_FIG_LINES: return gb_cells_lines(g, x, y, w, h, f, o, err);
	case GB_FIG_STRIP: return gb_cells_strip(g, x, y, w, h, f, o, err);
	case GB_FIG_GRID: return gb_cells_panels(g, x, y, w, h, f, o, err);
	}
	return gb_vfail(err, "unknown figure kind %d", f->kind);
}

/* ---- writer --------------------------------------------------------------------------- */

typedef struct sbuf {
	char *p;
	size_t n, cap;
	int oom;
} sbuf;

static int sb_reserve(sbuf *b, size_t more)
{
	if (b->n + more + 1 <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->n + more + 1)
		cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p) {
		b->oom = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

static void sb_mem(sbuf *b, const char *s, size_t n)
{
	if (sb_reserve(b, n))
		return;
	memcpy(b->p + b->n, s, n);
	b->n += n;
}

static void sb_uint(sbuf *b, unsigned v)
{
	char t[12];
	int k = 0;
	do {
		t[k++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (sb_reserve(b, (size_t)k))
		return;
	while (k)
		b->p[b->n++] = t[--k];
}

static void sb_cp(sbuf *b, uint32_t c)
{
	if (sb_reserve(b, 4))
		return;
	char *o = b->p + b->n;
	if (c < 0x80) { o[0] = (char)c; b->n += 1; }
	else if (c < 0x800) { o[0] = (char)(0xC0 | c >> 6); o[1] = (char)(0x80 | (c & 0x3F)); b->n += 2; }
	else if (c < 0x10000) {
		o[0] = (char)(0xE0 | c >> 12); o[1] = (char)(0x80 | (c >> 6 & 0x3F));
		o[2] = (char)(0x80 | (c & 0x3F)); b->n += 3;
	} else {
		o[0] = (char)(0xF0 | c >> 18); o[1] = (char)(0x80 | (c >> 12 & 0x3F));
		o[2] = (char)(0x80 | (c >> 6 & 0x3F)); o[3] = (char)(0x80 | (c & 0x3F)); b->n += 4;
	}
}

/* A colour as the depth encodes it: 0xRRGGBB, a palette index, or -1 for the terminal's own. */
static long colour_key(int depth, const uint8_t rgb[3], int set)
{
	if (!set)
		return -1;
	if (depth == GB_DEPTH_TRUE)
		return (long)rgb[0] << 16 | (long)rgb[1] << 8 | rgb[2];
	if (depth == GB_DEPTH_256)
		return gb_xterm256(rgb);
	return gb_ansi16(rgb);
}

static void sgr_colour(sbuf *b, int depth, long key, int bg)
{
	if (key < 0) {
		sb_mem(b, bg ? "49" : "39", 2);
	} else if (depth == GB_DEPTH_TRUE) {
		sb_mem(b, bg ? "48;2;" : "38;2;", 5);
		sb_uint(b, (unsigned)(key >> 16 & 255));
		sb_mem(b, ";", 1);
		sb_uint(b, (unsigned)(key >> 8 & 255));
		sb_mem(b, ";", 1);
		sb_uint(b, (unsigned)(key & 255));
	} else if (depth == GB_DEPTH_256) {
		sb_mem(b, bg ? "48;5;" : "38;5;", 5);
		sb_uint(b, (unsigned)key);
	} else {
		sb_uint(b, (unsigned)((key < 8 ? (bg ? 40 : 30) : (bg ? 100 : 90)) + key % 8));
	}
}

static int blank(const gb_cell *c)
{
	return c->cp == ' ' && !(c->attr & (GB_ATTR_BG | GB_ATTR_UNDERLINE));
}

int gb_cells_write(const gb_grid *g, int depth, char **out, size_t *len, gb_verr *err)
{
	sbuf b = { 0 };
	const int style = GB_ATTR_BOLD | GB_ATTR_DIM | GB_ATTR_UNDERLINE;
	sb_reserve(&b, (size_t)g->used_h * (size_t)g->w * (depth == GB_DEPTH_PLAIN ? 2 : 12));
	for (int y = 0; y < g->used_h; y++) {
		const gb_cell *row = g->cells + (size_t)y * (size_t)g->w;
		int end = g->w;
		while (end > 0 && (blank(&row[end - 1]) || row[end - 1].cp == GB_CELL_CONT))
			end--;
		int cur_style = 0;
		long cur_fg = -1, cur_bg = -1;
		for (int x = 0; x < end; x++) {
			const gb_cell *c = &row[x];
			uint32_t cp = c->cp;
			if (cp == GB_CELL_CONT) {
				if (x > 0 && gb_cp_width(row[x - 1].cp) == 2)
					continue; /* the terminal already advanced over it */
				cp = ' '; /* its wide character was overwritten: keep the column */
			}
			if (depth != GB_DEPTH_PLAIN) {
				int st = c->attr & style;
				/* a space shows only its background: keeping the old foreground saves bytes */
				long fg = c->cp == ' ' ? cur_fg : colour_key(depth, c->fg, c->attr & GB_ATTR_FG);
				long bgk = colour_key(depth, c->bg, c->attr & GB_ATTR_BG);
				if (st != cur_style || fg != cur_fg || bgk != cur_bg) {
					int sep = 0;
					sb_mem(&b, "\x1b[", 2);
					if (cur_style & ~st) { /* SGR can only turn bold and dim off together */
						sb_mem(&b, "0", 1);
						sep = 1;
						cur_style = 0;
						cur_fg = cur_bg = -1;
					}
					for (int bit = GB_ATTR_BOLD; bit <= GB_ATTR_UNDERLINE; bit <<= 1)
						if ((st & bit) && !(cur_style & bit)) {
							if (sep) sb_mem(&b, ";", 1);
							sb_mem(&b, bit == GB_ATTR_BOLD ? "1" : bit == GB_ATTR_DIM ? "2" : "4", 1);
							sep = 1;
						}
					if (fg != cur_fg) {
						if (sep) sb_mem(&b, ";", 1);
						sgr_colour(&b, depth, fg, 0);
						sep = 1;
					}
					if (bgk != cur_bg) {
						if (sep) sb_mem(&b, ";", 1);
						sgr_colour(&b, depth, bgk, 1);
					}
					sb_mem(&b, "m", 1);
					cur_style = st;
					cur_fg = fg;
					cur_bg = bgk;
				}
			}
			sb_cp(&b, cp);
		}
		if (cur_style || cur_fg >= 0 || cur_bg >= 0)
			sb_mem(&b, "\x1b[0m", 4);
		sb_mem(&b, "\n", 1);
	}
	if (sb_reserve(&b, 0) || b.oom) {
		free(b.p);
		return gb_vfail(err, "out of memory writing a %dx%d character grid", g->w, g->used_h);
	}
	b.p[b.n] = 0;
	*out = b.p;
	if (len)
		*len = b.n;
	return 0;
}
