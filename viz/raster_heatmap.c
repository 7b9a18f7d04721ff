/* raster_heatmap.c — the layout of heatmaps and of grids of them (small multiples): one block
 * of equal slots whose cells fill at least BAR_SHARE of the slide each way where the data
 * allows (square cells where they do, non-square where they would leave a sliver), their size
 * settled with the size, thinning and slant of the labels (raster_axes.c), what goes in the
 * cells and the side columns (raster_cells.c), row and column titles, and the colorbar beside
 * it. Records in gb_raster_info where the cells went, for tests and a window's mouse. */
#include "viz/raster.h"
#include "viz/raster_layout.h"
#include "viz/colormap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- heatmaps and grids of them ------------------------------------------------------------- */

typedef struct block {
	const gb_figure *const *panels;
	int n, gc, gr;            /* panels, grid columns and rows (on the page) */
	int gc0, nb;              /* a block's columns (the figure's grid_cols) and the blocks side
	                           * by side (1: the grid as the figure has it; figure.h's
	                           * grid_wrap): block b holds the figure's rows b, b + nb, ...,
	                           * so a page's row reads in order (L1 | L2 over L3 | L4; review
	                           * 8: L1 | L3 over L2 | L4 read as 8 heads a layer) */
	int rows, cols;           /* the largest panel's shape: every slot is this big */
	int titles;               /* panels have titles above them */
	int title_lines;          /* in lines: 2 when a title does not fit its panel on one */
	int square;               /* every panel is a token x token map: its cells may stay square */
} block;

/* Cell width and height for a block with aw x ah pixels for its cells (gaps and titles between
 * panels already taken off). A matrix far from square (19 tokens x 512 units) fills the
 * room it has (cells up to 180 px, or what BAR_AIM needs); a squarish one (token x token
 * attention) keeps square cells while they fill BAR_SHARE of the slide both ways, and
 * otherwise stretches to the bar (a row of panels by half again where there is room); a grid
 * of them in rows and columns keeps them square, the height used up. */
/* The cell width the widest cell text needs on one line at TEXT_MIN (the logit lens's
 * "·everywhere"): a token is never broken, it gets the room (0: no texts). */
static double text_cell_w(const lay *L, const block *B)
{
	double m = 0;
	char d[LABEL_BUF];
	for (int p = 0; p < B->n; p++) {
		const gb_figure *f = B->panels[p];
		for (size_t i = 0; f->cell_text && i < (size_t)f->rows * f->cols; i++)
			if (f->cell_text[i] && f->cell_text[i][0]) {
				gb_label_display(f->cell_text[i], LABEL_COLS, d, sizeof d);
				m = fmax(m, tw((lay *)L, GB_FACE_SANS, spx(L, TEXT_MIN), d));
			}
	}
	return m > 0 ? (m + 2 * L->s) / 0.92 + 1 : 0; /* as gb_cells_text_px measures the room */
}

/* The width between blocks beyond a gap between panels: half again as wide as the gaps, so a
 * block's rows read as rows of their own. */
static double blocks_extra(const block *B, double gapx)
{
	return B->nb > 1 ? (B->nb - 1) * 1.5 * gapx : 0;
}

/* Where panel i goes: its column and row of panels on the page, and its block. */
static void slot(const block *B, int i, int *gx, int *gy, int *b)
{
	int r = i / B->gc0;
	*b = r % B->nb;
	*gx = *b * B->gc0 + i % B->gc0;
	*gy = r / B->nb;
}

static void size_cells(const lay *L, const block *B, double aw, double ah, double gapx, double gapy,
                       double pt_h, double *cw, double *ch)
{
	double nc = (double)B->gc * B->cols, nr = (double)B->gr * B->rows, s = L->s;
	double cwm = aw / nc, chm = ah / nr;
	double between_x = (B->gc - 1) * gapx + blocks_extra(B, gapx), between_y = (B->gr - 1) * (gapy + pt_h);
	double cw_aim = (BAR_AIM * L->W - between_x) / nc, ch_aim = (BAR_AIM * L->H - between_y) / nr;
	double cap = fmax(180 * s, fmax(cw_aim, ch_aim));
	double sq = fmin(fmin(cwm, chm), cap), sqd = sq >= 12 ? floor(sq) : sq; /* as drawn */
	if (!B->square) {
		*cw = fmin(cwm, fmax(fmax(sq, text_cell_w(L, B)), fmax(180 * s, cw_aim)));
		*ch = fmin(chm, fmax(sq, fmax(180 * s, ch_aim)));
	} else if ((nc * sqd + between_x >= BAR_SHARE * L->W && nr * sqd + between_y >= BAR_SHARE * L->H) ||
	           ((B->gr > 1 || B->nb > 1) && B->gc > 1)) {
		/* square cells; small multiples of token x token maps in rows and columns (the model
		 * view's layers x heads) stay square too, using the height: a map squashed to 2.5
		 * times as wide as tall hid its diagonals */
		*cw = *ch = sq;
	} else {
		/* to the bar; a row (or column) of small multiples on to cells half again as long,
		 * where there is room, rather than leave half the slide blank; and rows (columns) at
		 * least as long as their labels need at the smallest size where there is room, so
		 * that every token is named (raster_axes.c: a row label 1.1 of its size, a slanted
		 * column label that divided by sqrt 2) */
		double more = B->n > 1 ? 1.5 * sq : 0;
		const gb_figure *p0 = B->panels[0];
		double rneed = p0->row_labels ? 1.1 * LABEL_MIN * s : (0.8 * LABEL_MIN + 3) * s;
		double cneed = p0->col_labels ? 1.1 * LABEL_MIN * s / M_SQRT1_2 : (0.8 * LABEL_MIN + 3) * s;
		*cw = fmax(sq, fmin(cwm, fmax(fmax(cw_aim, more), cneed)));
		*ch = fmax(sq, fmin(chm, fmax(fmax(ch_aim, more), rneed)));
	}
	/* a cell text ("97.8▲", a clipped value and its mark) gets the width it needs on one line
	 * where the room allows, square cells or not */
	double tcw = text_cell_w(L, B);
	if (tcw > *cw)
		*cw = fmin(cwm, tcw);
}

/* How far a panel's title may reach into the gaps beside its panel, as a share of a gap: both
 * neighbours reaching as far still leave 60% of the gap between them ("head 1, key/value head 1"
 * ran into "head 2, ..."). */
#define TITLE_OVER 0.4

#define TOO_SMALL (-2)
#define WRAP_TITLES (-3) /* a panel title does not fit on one line: lay out again for two */

static int too_small(const block *B, gb_verr *err)
{
	gb_vfail(err, "figure too small for a %d x %d heatmap", B->rows, B->cols);
	return TOO_SMALL;
}

/* The groups of columns of f (col_group, e.g. the heads of a per-head tensor): a rule between
 * two groups across the cells (x, y, w, h), and "head k" centred over each group's columns that
 * are shown, in the band of height band above the cells. */
static void draw_col_groups(lay *L, const gb_figure *f, int x, int y, int w, int h, double band)
{
	int G = f->col_group, c0 = f->col_index0 > 0 ? f->col_index0 - 1 : 0; /* tensor column of cell 0 */
	double pitch = (double)w / f->cols, lw = fmax(2, round(2 * L->s));
	int px = spx(L, PANEL_PX);
	char buf[32];
	group(L, "col-groups", 1);
	for (int j = 0; j < f->cols;) {
		int g = (c0 + j) / G, end = (g + 1) * G - c0; /* first cell after this group */
		if (end > f->cols)
			end = f->cols;
		if (j > 0)
			rect(L, x + j * pitch - lw / 2, y, lw, h, INK);
		snprintf(buf, sizeof buf, "head %d", g + 1);
		if ((end - j) * pitch >= tw(L, GB_FACE_SANS, px, buf) + 4 * L->s)
			text(L, GB_FACE_SANS, px, x + (j + end) / 2.0 * pitch, y - 0.45 * band, 0, GB_ANCHOR_MIDDLE, buf, INK);
		j = end;
	}
	group(L, "col-groups", 0);
}

/* Whether labels (n of them) differ from the first panel's (m of them). */
static int same_text(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static int labels_differ(char *const *a, int n, char *const *b, int m)
{
	if (n != m || !a != !b)
		return 1;
	for (int i = 0; a && i < n; i++)
		if (strcmp(a[i] ? a[i] : "", b[i] ? b[i] : ""))
			return 1;
	return 0;
}

/* A panel's own labels on the plan of the first panel's axis (size, stride, slant): `pair`
 * sets an encoder's map beside a decoder's, whose tokens differ. */
static void draw_own_axis(lay *L, const gb_axis *base, char *const *labels, int n, int index0, int rows, double x,
                          double y, double pitch)
{
	gb_axis a;
	if (gb_axis_make(L, &a, labels, n, index0))
		return;
	a.max_w = base->max_w;
	a.px = base->px;
	a.stride = base->stride;
	a.orient = base->orient;
	a.rows = base->rows;
	a.first = base->first;
	gb_axis_last(L, &a, pitch);
	gb_axis_finish(L, &a);
	if (rows)
		gb_axis_draw_rows(L, &a, x, y, pitch, n);
	else
		gb_axis_draw_cols(L, &a, x, y, pitch, n);
	gb_axis_free(&a);
}

/* Lays the block out and draws it; with labels 0, without row and column labels. Returns
 * TOO_SMALL, having drawn nothing, when the cells find no room. */
static int draw_block(lay *L, const block *B, int labels, gb_verr *err)
{
	const gb_figure *f = L->f, *p0 = B->panels[0];
	const int grid = f->kind == GB_FIG_GRID;
	const gb_figure *sides = grid ? NULL : f; /* a grid's panels have no side columns */
	double s = L->s, cb_w = f->colorbar ? gb_lay_colorbar_width(L) : 0;
	double rt_w = p0->row_title ? 1.6 * AXIS_PX * s : 0, ct_h = p0->col_title ? 1.7 * AXIS_PX * s : 0;
	double pt_h = B->titles ? (B->title_lines > 1 ? 2.8 : 1.5) * PANEL_PX * s : 0, gapx = grid ? 20 * s : 0, gapy = grid ? 14 * s : 0;
	if (!grid && f->col_group > 0) /* a line of "head k" over the groups of columns */
		pt_h = 1.5 * PANEL_PX * s;
	/* panels with tokens of their own (an encoder's map beside a decoder's) label each panel:
	 * the gap between panels makes room for the row labels */
	int own_rows = 0, own_cols = 0, own_titles = 0;
	/* panels whose axes mean other things (linear attention's query x key weights beside its
	 * feature x feature state, L22) name their own axes */
	for (int i = 1; grid && i < B->n; i++)
		own_titles |= !same_text(B->panels[i]->row_title, p0->row_title) ||
		              !same_text(B->panels[i]->col_title, p0->col_title);
	for (int i = 1; grid && labels && i < B->n; i++) {
		own_rows |= labels_differ(B->panels[i]->row_labels, B->panels[i]->rows, p0->row_labels, p0->rows);
		own_cols |= labels_differ(B->panels[i]->col_labels, B->panels[i]->cols, p0->col_labels, p0->cols);
	}
	double CW = L->x1 - L->x0, CH = L->y1 - L->y0;
	double cw = 1, ch = 1, left = 0, bottom = 0, side_w = 0, side_h = 0, colw[SIDE_MAX] = { 0 };
	int npx = 0, tpx = 0, cwi, chi, pw, ph, rc = -1;
	double bw, bh, bx, by;
	gb_axis ra, ca;

	if (gb_axis_make(L, &ra, p0->row_labels, labels ? p0->rows : 0, p0->row_index0) ||
	    gb_axis_make(L, &ca, p0->col_labels, labels ? p0->cols : 0, p0->col_index0)) {
		gb_axis_free(&ra);
		return gb_vfail(err, "out of memory laying out a heatmap");
	}
	ra.max_w = LABEL_SHARE * CW;
	ca.max_w = LABEL_SHARE * CH;
	ca.repeated = grid && B->n > 1 && !own_cols;
	/* Label sizes follow cell sizes, and cell sizes the room labels leave: a few rounds settle
	 * it. */
	for (int it = 0; it < 6; it++) {
		int rpx = ra.px, rst = ra.stride, cpx = ca.px, cst = ca.stride, cor = ca.orient;
		double aw, ah;
		side_w = sides ? gb_sides_width(L, sides, ra.px, colw) : 0;
		side_h = side_w > 0 ? 1.5 * ra.px : 0;
		left = rt_w + gb_axis_rows_width(L, &ra);
		bottom = gb_axis_cols_height(L, &ca) + ct_h;
		left = fmax(left, gb_axis_cols_overhang(L, &ca, cw));
		if (own_rows)
			gapx = fmax(20 * s, left + 8 * s);
		aw = CW - left - side_w - cb_w - (B->gc - 1) * gapx - blocks_extra(B, gapx);
		ah = CH - B->gr * pt_h - (B->gr - 1) * gapy - bottom - side_h;
		if (aw <= 0 || ah <= 0) {
			rc = too_small(B, err);
			goto out;
		}
		size_cells(L, B, aw, ah, gapx, gapy, pt_h, &cw, &ch);
		gb_axis_plan_rows(L, &ra, ch);
		gb_axis_plan_cols(L, &ca, cw);
		if (it > 0 && rpx == ra.px && rst == ra.stride && cpx == ca.px && cst == ca.stride && cor == ca.orient)
			break;
	}
	/* The cells as the final plan leaves room for them; if that is less than the last round
	 * assumed, labels that no longer fit their row or column are thinned (never grown) — but
	 * level token labels that would lose some are slanted first, once, since every label up
	 * to 64 should stand (a slant needs only ~0.7 of the pitch). */
	for (int pass = 0; pass < 2; pass++) {
		double aw, ah, cw2, ch2;
		side_w = sides ? gb_sides_width(L, sides, ra.px, colw) : 0;
		side_h = side_w > 0 ? 1.5 * ra.px : 0;
		left = fmax(rt_w + gb_axis_rows_width(L, &ra), gb_axis_cols_overhang(L, &ca, cw));
		bottom = gb_axis_cols_height(L, &ca) + ct_h;
		if (own_rows)
			gapx = fmax(20 * s, left + 8 * s);
		aw = CW - left - side_w - cb_w - (B->gc - 1) * gapx - blocks_extra(B, gapx);
		ah = CH - B->gr * pt_h - (B->gr - 1) * gapy - bottom - side_h;
		if (aw <= 0 || ah <= 0) {
			rc = too_small(B, err);
			goto out;
		}
		size_cells(L, B, aw, ah, gapx, gapy, pt_h, &cw2, &ch2);
		cw = fmin(cw, cw2);
		ch = fmin(ch, ch2);
		gb_axis_thin_to_fit(L, &ra, ch);
		int st = ca.stride;
		gb_axis_thin_to_fit(L, &ca, cw);
		if (pass == 0 && ca.stride > st && st == 1 && ca.orient == 0 && !ca.numeric && ca.n <= 64) {
			ca.orient = 45;
			ca.stride = 1;
			continue;
		}
		break;
	}
	/* whole-pixel cells where rounding costs little; narrower ones share the pixels out (cell
	 * edges by integer division, raster.h) rather than leave a fifth of the room unused */
	cwi = cw >= 12 ? (int)floor(cw) : 0;
	chi = ch >= 12 ? (int)floor(ch) : 0;
	pw = cwi ? B->cols * cwi : (int)floor(cw * B->cols);
	ph = chi ? B->rows * chi : (int)floor(ch * B->rows);
	if (pw < 1 || ph < 1) {
		rc = too_small(B, err);
		goto out;
	}
	gb_axis_finish(L, &ra);
	gb_axis_finish(L, &ca);
	if (gb_cells_want_numbers(B->panels, B->n, f->numbers || (grid && p0->numbers))) {
		npx = gb_cells_numbers_px(L, B->panels, B->n, (double)pw / B->cols, (double)ph / B->rows, f->precision);
		if (!npx) /* numbers asked for and left out: cut, every one */
			L->cut += gb_cells_numbers_n(B->panels, B->n, f->numbers || (grid && p0->numbers));
	}
	tpx = gb_cells_text_px(L, B->panels, B->n, (double)pw / B->cols, (double)ph / B->rows);
	if (tpx && npx > tpx) /* a number among texts is no louder than they are */
		npx = tpx;
	/* a panel's title says what the panel is (the pair counts of the masks): one too long for
	 * its panel at TEXT_MIN gets a second line, and the panels make room for it */
	for (int i = 0; B->titles && B->title_lines < 2 && i < B->n; i++)
		if (B->panels[i]->title && tw(L, GB_FACE_SANS, spx(L, TEXT_MIN), B->panels[i]->title) > pw + TITLE_OVER * gapx) {
			rc = WRAP_TITLES;
			goto out;
		}
	/* centre the whole block in the content box */
	bw = left + B->gc * (double)pw + (B->gc - 1) * gapx + blocks_extra(B, gapx) + side_w + cb_w;
	bh = side_h + B->gr * (pt_h + ph) + (B->gr - 1) * gapy + bottom;
	bx = floor(L->x0 + (CW - bw) / 2 + left);
	by = floor(L->y0 + (CH - bh) / 2 + side_h + pt_h);

	/* the panels' titles at one size, the largest at which each fits (on one line, or two):
	 * a title that wraps is no larger than one that does not */
	int title_px = spx(L, PANEL_PX);
	for (int i = 0; B->titles && i < B->n; i++) {
		const char *t = B->panels[i]->title;
		int p = spx(L, PANEL_PX);
		if (!t)
			continue;
		if (B->title_lines > 1) {
			wrapped w;
			int cut = L->cut; /* measured here, counted where it is drawn */
			p = gb_lay_fit_lines(L, GB_FACE_SANS, spx(L, PANEL_PX), spx(L, TEXT_MIN), t, pw + TITLE_OVER * gapx, 2, &w);
			L->cut = cut;
		} else
			while (p > spx(L, TEXT_MIN) && tw(L, GB_FACE_SANS, p, t) > pw + TITLE_OVER * gapx)
				p--;
		title_px = p < title_px ? p : title_px;
	}
	for (int i = 0; i < B->n; i++) {
		const gb_figure *m = B->panels[i];
		int gx, gy, blk;
		slot(B, i, &gx, &gy, &blk);
		int x = (int)(bx + gx * (pw + gapx) + blocks_extra(B, gapx) / (B->nb > 1 ? B->nb - 1 : 1) * blk);
		int y = (int)(by + gy * (ph + pt_h + gapy));
		int mpw = cwi ? m->cols * cwi : pw * m->cols / B->cols;
		int mph = chi ? m->rows * chi : ph * m->rows / B->rows;
		if (grid && f->panel_fill)
			mpw = pw, mph = ph;
		int last_in_column = gy == B->gr - 1 || i + B->gc0 * B->nb >= B->n;
		if (B->titles && m->title && B->title_lines > 1) {
			wrapped w;
			int tpx2 = gb_lay_fit_lines(L, GB_FACE_SANS, title_px, title_px, m->title, pw + TITLE_OVER * gapx, 2, &w);
			for (int k = 0; k < w.n; k++)
				text(L, GB_FACE_SANS, tpx2, x + pw / 2.0, y - 0.5 * tpx2 - 1.2 * tpx2 * (w.n - 1 - k), 0, GB_ANCHOR_MIDDLE,
				     w.line[k], INK);
		} else if (B->titles && m->title) {
			int tpx2 = title_px;
			char t[LABEL_BUF];
			L->cut += gb_lay_shorten(L, GB_FACE_SANS, tpx2, m->title, pw + TITLE_OVER * gapx, t, sizeof t);
			text(L, GB_FACE_SANS, tpx2, x + pw / 2.0, y - 0.45 * pt_h, 0, GB_ANCHOR_MIDDLE, t, INK);
		}
		gb_cells_draw(L, m, x, y, mpw, mph, npx, tpx, f->precision);
		gb_lay_outline(L, x, y, mpw, mph);
		if (!grid && f->col_group > 0)
			draw_col_groups(L, f, x, y, mpw, mph, pt_h);
		if (gx == 0 && i == 0)
			gb_axis_draw_rows(L, &ra, x, y, (double)mph / m->rows, m->rows);
		else if (labels && own_rows)
			draw_own_axis(L, &ra, m->row_labels, m->rows, m->row_index0, 1, x, y, (double)mph / m->rows);
		else if (gx == 0)
			gb_axis_draw_rows(L, &ra, x, y, (double)mph / m->rows, m->rows);
		if (last_in_column && i > 0 && labels && own_cols)
			draw_own_axis(L, &ca, m->col_labels, m->cols, m->col_index0, 0, x, y + mph, (double)mpw / m->cols);
		else if (last_in_column)
			gb_axis_draw_cols(L, &ca, x, y + mph, (double)mpw / m->cols, m->cols);
		if (own_titles) {
			int apx = spx(L, AXIS_PX);
			if (m->row_title && (gx == 0 || own_rows))
				gb_lay_text_fit(L, GB_FACE_SANS, apx, x - left + 0.95 * apx, y + ph / 2.0, 90, GB_ANCHOR_MIDDLE,
				                m->row_title, ph, INK2);
			if (m->col_title && last_in_column)
				gb_lay_text_fit(L, GB_FACE_SANS, apx, x + pw / 2.0, y + ph + bottom - ct_h + 1.2 * apx, 0,
				                GB_ANCHOR_MIDDLE, m->col_title, pw + gapx, INK2);
		}
		if (L->info) {
			/* the box: every panel's cells, as drawn */
			gb_rect *b = &L->info->box;
			if (i == 0)
				*b = (gb_rect){ x, y, mpw, mph };
			else {
				int x1 = b->x + b->w > x + mpw ? b->x + b->w : x + mpw;
				int y1 = b->y + b->h > y + mph ? b->y + b->h : y + mph;
				b->x = b->x < x ? b->x : x;
				b->y = b->y < y ? b->y : y;
				b->w = x1 - b->x;
				b->h = y1 - b->y;
			}
		}
		if (i == 0) {
			if (sides)
				gb_sides_draw(L, sides, &ra, x + mpw, y, (double)mph / m->rows, colw);
			if (L->info) {
				L->info->plot = (gb_rect){ x, y, mpw, mph };
				L->info->dx = (int)(pw + gapx);
				L->info->dy = (int)(ph + pt_h + gapy);
				L->info->grid_rows = B->gr;
				L->info->grid_blocks = B->nb;
				L->info->block_dx = (int)(B->gc0 * (pw + gapx) + (B->nb > 1 ? 1.5 * gapx : 0));
			}
		}
	}
	{
		double gw = B->gc * (double)pw + (B->gc - 1) * gapx + blocks_extra(B, gapx), gh = B->gr * (ph + pt_h) + (B->gr - 1) * gapy - pt_h;
		int apx = spx(L, AXIS_PX);
		if (p0->row_title && !own_titles)
			gb_lay_text_fit(L, GB_FACE_SANS, apx, bx - left + 0.95 * apx, by + gh / 2, 90, GB_ANCHOR_MIDDLE,
			                p0->row_title, CH, INK2);
		if (p0->col_title && !own_titles)
			gb_lay_text_fit(L, GB_FACE_SANS, apx, bx + gw / 2, by + gh + bottom - ct_h + 1.2 * apx, 0,
			                GB_ANCHOR_MIDDLE, p0->col_title, CW, INK2);
		if (f->colorbar) {
			/* a short plot (one row of cells) still gets a readable ramp, inside the content
			 * box so it never reaches into the title or the caption */
			double cbh = fmin(fmax(gh, 220 * s), L->y1 - L->y0), cy = by + gh / 2 - cbh / 2;
			cy = fmax(L->y0, fmin(cy, L->y1 - cbh));
			gb_lay_colorbar(L, bx + gw + side_w + CB_GAP * s, cy, cbh);
		}
	}
	if (L->info) {
		L->info->grid_cols = B->gc0;
		L->info->numbers_shown = npx > 0;
		L->info->cell_text_px = tpx ? tpx : npx;
		L->info->label_stride = ra.stride;
		L->info->col_label_stride = ca.stride;
		L->info->angled_labels = ca.orient == 45;
		L->info->cols_orient = ca.orient;
		L->info->row_labels_shown = ra.shown;
		L->info->row_labels_total = p0->rows;
		L->info->col_labels_shown = ca.shown;
		L->info->col_labels_total = p0->cols;
	}
	rc = 0;
out:
	gb_axis_free(&ra);
	gb_axis_free(&ca);
	return rc;
}

/* A surface too small for the labels (a shrunken window) still shows the cells: without their
 * labels, which count as cut. */
static int draw_fitting(lay *L, const block *B0, gb_verr *err)
{
	block two = *B0;
	const block *B = B0;
	int cut = L->cut, rc = draw_block(L, B, 1, err);
	if (rc == WRAP_TITLES) {
		two.title_lines = 2;
		B = &two;
		rc = draw_block(L, B, 1, err);
	}
	if (rc != TOO_SMALL)
		return rc;
	L->cut = cut + B->panels[0]->rows + B->panels[0]->cols;
	rc = draw_block(L, B, 0, err);
	return rc == TOO_SMALL ? -1 : rc;
}

/* A token x token map (self-attention, or cross-attention between two texts): a square matrix,
 * or one labelled on both axes whose sides are within a factor 2. */
static int squarish(const gb_figure *m)
{
	return m->rows == m->cols ||
	       (m->row_labels && m->col_labels && m->rows <= 2 * m->cols && m->cols <= 2 * m->rows);
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
	B.n = B.gc = B.gr = B.gc0 = B.nb = 1;
	B.rows = L->f->rows;
	B.cols = L->f->cols;
	B.square = squarish(L->f);
	return draw_fitting(L, &B, err);
}

/* The painter that measures and draws nothing (a layout tried before it is drawn). */
static void no_rect(void *ctx, double x, double y, double w, double h, const uint8_t rgb[3])
{
	(void)ctx, (void)x, (void)y, (void)w, (void)h, (void)rgb;
}

static void no_text(void *ctx, int face, int px, double x, double y, double angle, int anchor, const char *s,
                    const uint8_t rgb[3])
{
	(void)ctx, (void)face, (void)px, (void)x, (void)y, (void)angle, (void)anchor, (void)s, (void)rgb;
}

static void no_line(void *ctx, const double *xy, int n, double width, const uint8_t rgb[3])
{
	(void)ctx, (void)xy, (void)n, (void)width, (void)rgb;
}

static void no_ramp(void *ctx, double x, double y, double w, double h, int cmap, double t0, double t1)
{
	(void)ctx, (void)x, (void)y, (void)w, (void)h, (void)cmap, (void)t0, (void)t1;
}

/* B laid out on L's page without drawing: the area of a cell (0: it does not fit), and in *lost
 * what it leaves out (texts cut, labels thinned on an axis of at most 64). */
static double try_block(lay *L, const block *B, int *lost)
{
	gb_painter quiet = { L->p->ctx, L->p->text_width, no_rect, no_text, no_line, no_ramp, NULL, 0 };
	gb_raster_info in;
	gb_verr e;
	lay M = *L;
	M.p = &quiet;
	M.info = &in;
	M.cut = 0;
	memset(&in, 0, sizeof in);
	if (draw_fitting(&M, B, &e))
		return 0;
	*lost = M.cut;
	if (in.row_labels_total <= 64)
		*lost += in.row_labels_total - in.row_labels_shown;
	if (in.col_labels_total <= 64)
		*lost += in.col_labels_total - in.col_labels_shown;
	return (double)in.plot.w * in.plot.h / ((double)B->panels[0]->rows * B->panels[0]->cols);
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
	B.square = 1;
	for (int i = 0; i < f->n_panels; i++)
		B.square &= squarish(f->panels[i]);
	B.gc = f->grid_cols > 0 ? f->grid_cols : (int)ceil(sqrt((double)B.n));
	B.gc = B.gc > B.n ? B.n : B.gc;
	B.gr = (B.n + B.gc - 1) / B.gc;
	B.gc0 = B.gc;
	B.nb = 1;
	/* rows of panels side by side, in blocks, where that makes the cells larger and leaves out
	 * no more (the model view's four layers on a slide: two blocks of two) */
	if (f->grid_wrap && B.gr > 1) {
		block T = B;
		int lost0 = 0, lost;
		double a0 = try_block(L, &B, &lost0), best = a0;
		for (int nb = 2; nb <= T.gr; nb++) {
			if (T.gr % nb)
				continue;
			block W = T;
			W.nb = nb;
			W.gc = T.gc0 * nb;
			W.gr = T.gr / nb;
			double a = try_block(L, &W, &lost);
			if (a > 1.02 * best && (a0 <= 0 || lost <= lost0)) {
				best = a;
				B = W;
			}
		}
	}
	return draw_fitting(L, &B, err);
}
