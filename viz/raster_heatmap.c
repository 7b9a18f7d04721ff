/* raster_heatmap.c — the layout of heatmaps and of grids of them (small multiples): one block
 * of equal slots, its cell size settled with the size, thinning and slant of its labels, the
 * numbers inside cells when they are readable, row and column titles, and the colorbar beside
 * it. Records in gb_raster_info where the cells went, for tests and a window's mouse. */
#include "viz/raster.h"
#include "viz/raster_layout.h"
#include "viz/colormap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- heatmaps and grids of them ------------------------------------------------------------- */

/* The cells of one matrix at (x, y) size (pw, ph), with numbers at npx (0: none). */
static void draw_cells(lay *L, const gb_figure *m, int x, int y, int pw, int ph, int npx,
                       int precision)
{
	group(L, "cells", 1);
	for (int r = 0; r < m->rows; r++) {
		int ya = y + (int)((long)r * ph / m->rows), yb = y + (int)((long)(r + 1) * ph / m->rows);
		for (int c = 0; c < m->cols; c++) {
			int xa = x + (int)((long)c * pw / m->cols), xb = x + (int)((long)(c + 1) * pw / m->cols);
			uint8_t rgb[3];
			gb_lay_cell_colour(L, m, m->values[(size_t)r * m->cols + c], rgb);
			rect(L, xa, ya, xb - xa, yb - ya, rgb);
		}
	}
	group(L, "cells", 0);
	if (!npx)
		return;
	group(L, "numbers", 1);
	for (int r = 0; r < m->rows; r++) {
		double yc = y + ((double)r + 0.5) * ph / m->rows;
		for (int c = 0; c < m->cols; c++) {
			float v = m->values[(size_t)r * m->cols + c];
			double xc = x + ((double)c + 0.5) * pw / m->cols;
			uint8_t rgb[3];
			char buf[48];
			gb_lay_cell_colour(L, m, v, rgb);
			gb_format_value(v, precision, buf, sizeof buf);
			/* L* 55 is where black and white text are about equally legible */
			text(L, GB_FACE_MONO, npx, xc, mid_baseline(yc, npx) - 0.02 * npx, 0,
			     GB_ANCHOR_MIDDLE, buf, gb_lightness(rgb) > 55 ? BLACK : WHITE);
		}
	}
	group(L, "numbers", 0);
}

static int number_chars(const gb_figure *m, int precision)
{
	int n = 1;
	char buf[48];
	for (size_t i = 0; i < (size_t)m->rows * m->cols; i++) {
		int k;
		gb_format_value(m->values[i], precision, buf, sizeof buf);
		k = (int)strlen(buf);
		n = k > n ? k : n;
	}
	return n;
}

typedef struct block {
	const gb_figure *const *panels;
	int n, gc, gr;            /* panels, grid columns and rows */
	int rows, cols;           /* the largest panel's shape: every slot is this big */
	int titles;               /* panels have titles above them */
} block;

static int draw_block(lay *L, const block *B, gb_verr *err)
{
	const gb_figure *f = L->f, *p0 = B->panels[0];
	const int grid = f->kind == GB_FIG_GRID;
	char *rl = gb_lay_display_labels(L, p0->row_labels, p0->rows, LABEL_COLS);
	char *cl = gb_lay_display_labels(L, p0->col_labels, p0->cols, LABEL_COLS);
	double s = L->s, cb_w = f->colorbar ? gb_lay_colorbar_width(L) : 0;
	double rt_w = p0->row_title ? 1.6 * AXIS_PX * s : 0, ct_h = p0->col_title ? 1.7 * AXIS_PX * s : 0;
	double pt_h = B->titles ? 1.5 * PANEL_PX * s : 0, gapx = grid ? 20 * s : 0, gapy = grid ? 14 * s : 0;
	double cell = 1, rlw = 0, clw = 0, clh = 0, left = 0;
	int lpx = spx(L, LABEL_PX), stride = 1, cstride = 1, angled = 0, show_labels = 1, npx = 0;
	int cw, pw, ph;
	double bw, bh, bx, by;

	if ((p0->row_labels && !rl) || (p0->col_labels && !cl)) {
		free(rl);
		free(cl);
		return gb_vfail(err, "out of memory laying out a heatmap");
	}
	/* Label size follows cell size, and cell size follows the room labels leave: a few rounds
	 * settle it (each round only shrinks labels or thins them). */
	for (int it = 0; it < 4; it++) {
		double aw, ah;
		rlw = rl && show_labels
		      ? gb_lay_max_width(L, GB_FACE_SANS, lpx, rl, p0->rows, stride) + 10 * s : 0;
		clw = cl && show_labels ? gb_lay_max_width(L, GB_FACE_SANS, lpx, cl, p0->cols, cstride) : 0;
		clh = !cl || !show_labels ? 0 : angled ? clw * M_SQRT1_2 + 1.3 * lpx + 6 * s : 1.4 * lpx + 6 * s;
		left = rt_w + rlw;
		aw = (L->x1 - L->x0) - left - cb_w - (B->gc - 1) * gapx;
		ah = (L->y1 - L->y0) - B->gr * pt_h - (B->gr - 1) * gapy - clh - ct_h;
		cell = fmin(aw / ((double)B->gc * B->cols), ah / ((double)B->gr * B->rows));
		/* an angled first label reaches left of the plot by its length */
		if (angled && clw * M_SQRT1_2 - cell / 2 > left) {
			left = clw * M_SQRT1_2 - cell / 2;
			aw = (L->x1 - L->x0) - left - cb_w - (B->gc - 1) * gapx;
			cell = fmin(aw / ((double)B->gc * B->cols), ah / ((double)B->gr * B->rows));
		}
		cell = fmin(cell, 180 * s);
		if (cell <= 0) {
			free(rl);
			free(cl);
			return gb_vfail(err, "figure too small for a %d x %d heatmap", B->rows, B->cols);
		}
		{
			/* big cells (a 4 x 4 on a slide) take bigger labels */
			int top = cell >= 60 * s ? spx(L, LABEL_BIG) : spx(L, LABEL_PX);
			lpx = (int)floor(cell * 0.72);
			lpx = lpx > top ? top : lpx < spx(L, LABEL_MIN) ? spx(L, LABEL_MIN) : lpx;
		}
		stride = (int)ceil(1.15 * lpx / cell);
		stride = stride < 1 ? 1 : stride;
		/* in a grid, labels on cells smaller than the label font would be noise */
		show_labels = !grid || cell * 1.2 >= spx(L, LABEL_MIN);
		clw = cl && show_labels ? gb_lay_max_width(L, GB_FACE_SANS, lpx, cl, p0->cols, stride) : 0;
		angled = cl && show_labels && clw + 8 * s > cell * stride;
		/* slanted labels stand cell * stride / sqrt(2) apart, measured across their baselines */
		cstride = angled ? (int)ceil(1.15 * lpx / (cell * M_SQRT1_2)) : stride;
		cstride = cstride < stride ? stride : cstride;
	}
	/* The room under the plot for the labels as they are finally drawn: the rounds above sized
	 * the cells for the previous round's slant. Less room (now level) only centres the block
	 * again; more (now slanted) shrinks the cells to fit, or the plot would climb into the
	 * title. */
	{
		double used = clh;
		clw = cl && show_labels ? gb_lay_max_width(L, GB_FACE_SANS, lpx, cl, p0->cols, cstride) : 0;
		clh = !cl || !show_labels ? 0 : angled ? clw * M_SQRT1_2 + 1.3 * lpx + 6 * s : 1.4 * lpx + 6 * s;
		if (clh > used) {
			double ah = (L->y1 - L->y0) - B->gr * pt_h - (B->gr - 1) * gapy - clh - ct_h;
			cell = fmin(cell, ah / ((double)B->gr * B->rows));
			if (cell <= 0) {
				free(rl);
				free(cl);
				return gb_vfail(err, "figure too small for a %d x %d heatmap", B->rows, B->cols);
			}
			stride = (int)ceil(1.15 * lpx / cell);
			stride = stride < 1 ? 1 : stride;
			if (angled) {
				cstride = (int)ceil(1.15 * lpx / (cell * M_SQRT1_2));
				cstride = cstride < stride ? stride : cstride;
			}
		}
	}
	cw = cell >= 2 ? (int)floor(cell) : 0;
	pw = cw ? B->cols * cw : (int)floor(cell * B->cols);
	ph = cw ? B->rows * cw : (int)floor(cell * B->rows);
	if (pw < 1 || ph < 1) {
		free(rl);
		free(cl);
		return gb_vfail(err, "figure too small for a %d x %d heatmap", B->rows, B->cols);
	}
	/* numbers: as large as fits (monospace advance is 0.602 em), none below readable */
	if (f->numbers || (grid && B->n && B->panels[0]->numbers)) {
		int chars = 1;
		for (int i = 0; i < B->n; i++) {
			int k = number_chars(B->panels[i], f->precision);
			chars = k > chars ? k : chars;
		}
		npx = (int)floor(fmin(cell * 0.36, cell * 0.88 / (chars * 0.602)));
		npx = npx > spx(L, 30) ? spx(L, 30) : npx;
		if (npx < spx(L, NUMBER_MIN) || npx < 8)
			npx = 0;
	}
	/* centre the whole block in the content box */
	bw = left + B->gc * (double)pw + (B->gc - 1) * gapx + cb_w;
	bh = B->gr * (pt_h + ph) + (B->gr - 1) * gapy + clh + ct_h;
	bx = floor(L->x0 + ((L->x1 - L->x0) - bw) / 2 + left);
	by = floor(L->y0 + ((L->y1 - L->y0) - bh) / 2 + pt_h);

	for (int i = 0; i < B->n; i++) {
		const gb_figure *m = B->panels[i];
		int gx = i % B->gc, gy = i / B->gc;
		int x = (int)(bx + gx * (pw + gapx)), y = (int)(by + gy * (ph + pt_h + gapy));
		int mpw = cw ? m->cols * cw : pw * m->cols / B->cols;
		int mph = cw ? m->rows * cw : ph * m->rows / B->rows;
		int last_in_column = i + B->gc >= B->n;
		if (B->titles && m->title) {
			int tpx = spx(L, PANEL_PX);
			while (tpx > spx(L, 8) && tw(L, GB_FACE_SANS, tpx, m->title) > pw + gapx * 0.8)
				tpx--;
			text(L, GB_FACE_SANS, tpx, x + pw / 2.0, y - 0.45 * pt_h, 0, GB_ANCHOR_MIDDLE, m->title, INK);
		}
		draw_cells(L, m, x, y, mpw, mph, npx, f->precision);
		gb_lay_outline(L, x, y, mpw, mph);
		if (show_labels && rl && gx == 0) {
			group(L, "row-labels", 1);
			for (int r = 0; r < p0->rows && r < m->rows; r += stride)
				text(L, GB_FACE_SANS, lpx, x - 8 * s, mid_baseline(y + (r + 0.5) * mph / m->rows, lpx),
				     0, GB_ANCHOR_END, rl + (size_t)r * LABEL_BUF, INK);
			group(L, "row-labels", 0);
		}
		if (show_labels && cl && last_in_column) {
			group(L, "col-labels", 1);
			for (int c = 0; c < p0->cols && c < m->cols; c += cstride) {
				double xc = x + (c + 0.5) * mpw / m->cols;
				if (angled)
					/* ends under the column, rising to it; shifted half an x-height so the
					 * slanted text's middle, not its baseline, points at the column */
					text(L, GB_FACE_SANS, lpx, xc + 0.3 * lpx, y + mph + 6 * s + 0.75 * lpx, 45,
					     GB_ANCHOR_END, cl + (size_t)c * LABEL_BUF, INK);
				else
					text(L, GB_FACE_SANS, lpx, xc, y + mph + 6 * s + 0.93 * lpx, 0,
					     GB_ANCHOR_MIDDLE, cl + (size_t)c * LABEL_BUF, INK);
			}
			group(L, "col-labels", 0);
		}
		if (i == 0 && L->info) {
			L->info->plot = (gb_rect){ x, y, mpw, mph };
			L->info->dx = (int)(pw + gapx);
			L->info->dy = (int)(ph + pt_h + gapy);
		}
	}
	{
		double gw = B->gc * (double)pw + (B->gc - 1) * gapx, gh = B->gr * (ph + pt_h) + (B->gr - 1) * gapy - pt_h;
		int apx = spx(L, AXIS_PX);
		if (p0->row_title)
			text(L, GB_FACE_SANS, apx, bx - left + 0.95 * apx, by + gh / 2, 90, GB_ANCHOR_MIDDLE,
			     p0->row_title, INK2);
		if (p0->col_title)
			text(L, GB_FACE_SANS, apx, bx + gw / 2, by + gh + clh + 1.2 * apx, 0, GB_ANCHOR_MIDDLE,
			     p0->col_title, INK2);
		if (f->colorbar) {
			/* a short plot (one row of cells) still gets a readable ramp, inside the content
			 * box so it never reaches into the title or the caption */
			double ch = fmin(fmax(gh, 220 * s), L->y1 - L->y0), cy = by + gh / 2 - ch / 2;
			cy = fmax(L->y0, fmin(cy, L->y1 - ch));
			gb_lay_colorbar(L, bx + gw + CB_GAP * s, cy, ch);
		}
	}
	if (L->info) {
		int lastp = B->n - 1;
		L->info->box = (gb_rect){ (int)bx, (int)by,
		                          (int)(B->n > B->gc ? B->gc : B->n) * (int)(pw + gapx) - (int)gapx,
		                          (lastp / B->gc + 1) * (int)(ph + pt_h + gapy) - (int)(pt_h + gapy) };
		L->info->row_labels_total = p0->rows;
		L->info->col_labels_total = p0->cols;
		L->info->row_labels_shown = show_labels && rl ? (p0->rows + stride - 1) / stride : 0;
		L->info->col_labels_shown = show_labels && cl ? (p0->cols + cstride - 1) / cstride : 0;
		L->info->cell_text_px = npx;
		L->info->grid_cols = B->gc;
		L->info->numbers_shown = npx > 0;
		L->info->label_stride = stride;
		L->info->col_label_stride = cstride;
		L->info->angled_labels = angled;
	}
	free(rl);
	free(cl);
	return 0;
}

static int check_matrix(const gb_figure *m, gb_verr *err)
{
	if (!m || m->kind != GB_FIG_HEATMAP)
		return gb_vfail(err, "a grid's panels must be heatmaps");
	if (!m->values || m->rows <= 0 || m->cols <= 0)
		return gb_vfail(err, "heatmap%s%s has no values", m->title ? " " : "", m->title ? m->title : "");
	return 0;
}

int gb_lay_draw_heatmap(lay *L, gb_verr *err)
{
	block B = { 0 };
	const gb_figure *one[1] = { L->f };
	if (check_matrix(L->f, err))
		return -1;
	B.panels = one;
	B.n = B.gc = B.gr = 1;
	B.rows = L->f->rows;
	B.cols = L->f->cols;
	return draw_block(L, &B, err);
}

int gb_lay_draw_grid(lay *L, gb_verr *err)
{
	const gb_figure *f = L->f;
	block B = { 0 };
	if (f->n_panels <= 0 || !f->panels)
		return gb_vfail(err, "grid figure has no panels");
	for (int i = 0; i < f->n_panels; i++) {
		if (check_matrix(f->panels[i], err))
			return -1;
		B.rows = f->panels[i]->rows > B.rows ? f->panels[i]->rows : B.rows;
		B.cols = f->panels[i]->cols > B.cols ? f->panels[i]->cols : B.cols;
		B.titles |= f->panels[i]->title != NULL;
	}
	B.panels = (const gb_figure *const *)f->panels;
	B.n = f->n_panels;
	B.gc = f->grid_cols > 0 ? f->grid_cols : (int)ceil(sqrt((double)B.n));
	B.gc = B.gc > B.n ? B.n : B.gc;
	B.gr = (B.n + B.gc - 1) / B.gc;
	return draw_block(L, &B, err);
}
