/* cells_lines.c — line plots in cells: series drawn as braille dots (2x4 per cell; plain: one
 * mark per cell, a different character per series), with the y range at the axis' ends, the
 * x range under it, and a legend. Never windowed: every point is in the plot. */
#include "viz/cells.h"
#include "viz/cells_layout.h"
#include "viz/colormap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	if (gb_cells_check_area(g, x, y, w, h, f, err))
		return -1;
	gb_cells_area_init(&a, g, x, y, w, h, f, o);
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
	/* lines: title, subtitle, y title, plot, axis, x ends, x title, legend, caption */
	int title = f->title != NULL, sub = f->subtitle != NULL, ytl = f->y_title != NULL;
	int xtl = f->x_title != NULL;
	int legend = f->n_series > 0, cap = f->caption || a.n_bad || a.n_masked;
	int ph;
	for (;;) {
		ph = h - title - sub - ytl - 2 - xtl - legend - cap;
		if (ph >= 2)
			break;
		if (ytl) ytl = 0;
		else if (xtl) xtl = 0;
		else if (legend) legend = 0;
		else if (cap) cap = 0;
		else if (sub) sub = 0;
		else if (title) title = 0;
		else return gb_cells_too_small(err, w, h, 16, 4);
	}
	gb_cells_fmt_ends(a.lo, a.hi, f->precision, sa, sb, sizeof sa);
	int yw = (int)(strlen(sa) > strlen(sb) ? strlen(sa) : strlen(sb));
	int pw = w - yw - 1;
	if (pw < 4)
		return gb_cells_too_small(err, w, h, yw + 5, h);
	plot pl = { x + yw + 1, y + title + sub + ytl, pw, ph, a.plain ? 1 : 2, a.plain ? 1 : 4, NULL, NULL };
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
		gb_cells_title_line(&a, yy++, NULL);
	if (sub)
		gb_cells_subtitle_line(&a, yy++);
	if (ytl) {
		gb_cells_shorten(f->y_title, w, buf, sizeof buf);
		gb_grid_text(g, x, yy, w, buf, NULL, NULL, GB_ATTR_DIM);
		touch(g, yy++);
	}
	for (int r = 0; r < ph; r++, yy++) {
		const char *tick = r == 0 ? sb : r == ph - 1 ? sa : NULL;
		if (tick)
			gb_grid_text(g, x + yw - (int)strlen(tick), yy, yw, tick, NULL, NULL, 0);
		gb_cells_set_cell(g, x + yw, yy, a.plain ? (tick ? '+' : '|') : tick ? 0x2524 : 0x2502,
		                  NULL, NULL, GB_ATTR_DIM);
		for (int c = 0; c < pw; c++) {
			size_t i = (size_t)r * (size_t)pw + (size_t)c;
			if (pl.owner[i] < 0)
				continue;
			uint8_t rgb[3];
			if (a.plain) {
				gb_cells_set_cell(g, pl.px + c, yy, (uint32_t)SERIES_MARK[pl.owner[i] % 8], NULL, NULL, 0);
			} else {
				series_rgb(f, pl.owner[i], rgb);
				gb_cells_set_cell(g, pl.px + c, yy, 0x2800u + pl.dots[i], rgb, NULL, 0);
			}
		}
		touch(g, yy);
	}
	free(pl.dots);
	free(pl.owner);
	/* x axis and its ends */
	gb_cells_set_cell(g, x + yw, yy, a.plain ? '+' : 0x2514, NULL, NULL, GB_ATTR_DIM);
	for (int c = 0; c < pw; c++)
		gb_cells_set_cell(g, pl.px + c, yy, a.plain ? '-' : 0x2500, NULL, NULL, GB_ATTR_DIM);
	touch(g, yy++);
	gb_cells_fmt_ends(xlo, xhi, f->xs ? f->precision : 0, sa, sb, sizeof sa);
	gb_grid_text(g, pl.px, yy, pw, sa, NULL, NULL, 0);
	if ((int)(strlen(sa) + strlen(sb)) + 1 <= pw)
		gb_grid_text(g, pl.px + pw - (int)strlen(sb), yy, pw, sb, NULL, NULL, 0);
	touch(g, yy++);
	if (xtl) {
		gb_cells_shorten(f->x_title, pw, buf, sizeof buf);
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
			gb_cells_shorten(f->series[k].label, clampi(x + w - lx, 0, 24), buf, sizeof buf);
			lx += gb_grid_text(g, lx, yy, x + w - lx, buf, NULL, NULL, 0) + 2;
		}
		touch(g, yy++);
	}
	if (cap)
		gb_cells_caption_line(&a, yy);
	memset(&g->shown, 0, sizeof g->shown);
	g->shown.rows = g->shown.rows_total = f->n_series;
	g->shown.cols = g->shown.cols_total = npts;
	g->shown.rows_per_line = 1;
	g->shown.n_bad = a.n_bad;
	g->shown.n_masked = a.n_masked;
	return 0;
}
