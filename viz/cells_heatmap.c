/* cells_heatmap.c — heatmaps in cells, alone and as small multiples (a grid of panels).
 *
 * Owns the heatmap's plan (label widths, columns per cell, half blocks or not, vertical column
 * labels) and the order in which it gives things up when space runs out (axis names, then
 * label lines, colorbar, notice line, caption, title), the notice of the rows and columns
 * shown, and how a grid shares its rectangle among panels (one data row per line when every
 * row of panels fits that way, else half blocks). */
#include "viz/cells.h"
#include "viz/cells_layout.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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
		int w = gb_cells_fmt_num(f->values[i], f->precision, buf, sizeof buf);
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
	gb_cells_range_text(r, sizeof r, a->plain, "rows", p->row0, p->rows, f->rows);
	gb_cells_range_text(c, sizeof c, a->plain, "cols", p->col0, p->cols, f->cols);
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
		gb_cells_title_line(a, y++, has_notice && !p->notice_own ? notice : NULL);
	}
	if (p->notice_own) {
		gb_cells_shorten(notice, a->w, buf, sizeof buf);
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
				gb_cells_shorten(buf2, a->x + a->w - xd, buf, sizeof buf);
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
			gb_cells_shorten(buf2, a->w, buf, sizeof buf);
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
				gb_cells_set_cell(g, lx, ly, cp, NULL, NULL, 0);
				if (w == 2 && p->cw >= 2)
					gb_cells_set_cell(g, lx + 1, ly, GB_CELL_CONT, NULL, NULL, 0);
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
				gb_cells_value_rgb(a, v, rgb);
				if (row2)
					gb_cells_value_rgb(a, row2[c], rgb2);
				for (int k = 0; k < p->cw; k++)
					gb_cells_set_cell(g, cx + k, y, 0x2580, rgb, row2 ? rgb2 : NULL, 0); /* ▀ */
			} else if (f->numbers) {
				char num[64];
				int n = gb_cells_fmt_num(v, f->precision, num, sizeof num);
				if (a->plain) {
					gb_grid_text(g, cx + p->cw - n, y, n, num, NULL, NULL, 0);
				} else {
					gb_cells_value_rgb(a, v, rgb);
					for (int k = 0; k < p->cw - n; k++)
						gb_cells_set_cell(g, cx + k, y, ' ', NULL, rgb, 0);
					gb_grid_text(g, cx + p->cw - n, y, n, num, gb_cells_ink_for(a->depth, rgb), rgb, 0);
				}
			} else if (a->plain) {
				char ch = gb_cells_ramp_char(a, v);
				for (int k = 0; k < p->cw; k++)
					gb_cells_set_cell(g, cx + k, y, (uint32_t)ch, NULL, NULL, 0);
			} else {
				gb_cells_value_rgb(a, v, rgb);
				for (int k = 0; k < p->cw; k++)
					gb_cells_set_cell(g, cx + k, y, ' ', NULL, rgb, 0);
			}
		}
		touch(g, y);
	}
	if (p->cbar)
		gb_cells_colorbar_line(a, p->lw ? xd : a->x, y++, a->x + a->w - (p->lw ? xd : a->x));
	if (p->cap)
		gb_cells_caption_line(a, y);
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
		return gb_cells_too_small(err, a->w, a->h, 8, 3);
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
	if (gb_cells_check_area(g, x, y, w, h, f, err))
		return -1;
	if (w < 10 || h < 2) /* below this a heatmap is a few coloured cells without meaning */
		return gb_cells_too_small(err, w, h, 10, 2);
	gb_cells_area_init(&a, g, x, y, w, h, f, o);
	if (f->rows == 0 || f->cols == 0) {
		gb_cells_title_line(&a, y, NULL);
		gb_grid_text(g, x, y + (h > 1), w, "(no values)", NULL, NULL, GB_ATTR_DIM);
		touch(g, y + (h > 1));
		memset(&g->shown, 0, sizeof g->shown);
		return 0;
	}
	memset(&g->shown, 0, sizeof g->shown);
	return heatmap_in(&a, o, P_TITLE | P_LABELS | P_AXIS | P_COLORBAR | P_CAPTION | P_NOTICE,
	                  &g->shown, err);
}

/* ---- small multiples ------------------------------------------------------------------ */

int gb_cells_panels(gb_grid *g, int x, int y, int w, int h, const gb_figure *f,
                    const gb_cells_opts *o, gb_verr *err)
{
	area a;
	char notice[160], r[64];
	if (gb_cells_check_area(g, x, y, w, h, f, err))
		return -1;
	gb_cells_area_init(&a, g, x, y, w, h, f, o);
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
		return gb_cells_too_small(err, w, h, 12, 3);
	/* a panel's natural height: its title and its rows, one per line when every row of panels
	 * fits that way (bigger, square cells), else two per line with half blocks */
	int ph = 1, ph_half = 1, half = 0, parts = P_TITLE | (f->panel_labels ? P_LABELS : 0);
	for (int i = 0; i < n; i++) {
		const gb_figure *p = f->panels[i];
		/* labelled panels: their column labels' lines too (written downwards when long) */
		int cl = (parts & P_LABELS) ? clampi(max_label_w(p, p->cols, 0, 12), 1, 8) : 0;
		int need = 1 + cl + p->rows, need_half = 1 + cl + (p->numbers ? p->rows : (p->rows + 1) / 2);
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
					gb_cells_title_line(&pa, pa.y, NULL);
				continue;
			}
			gb_cells_shown sh;
			if (heatmap_in(&pa, &po, parts, &sh, err))
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
			gb_cells_range_text(r, sizeof r, a.plain, "panel rows", prow0, nr, gr);
			snprintf(notice, sizeof notice, "%s", r);
		}
		if (clipped)
			snprintf(notice + strlen(notice), sizeof notice - strlen(notice),
			         "%seach cut to %dx%d", notice[0] ? ", " : "", cut_rows, cut_cols);
		gb_cells_title_line(&a, y, notice[0] ? notice : NULL);
	}
	if (cbar)
		gb_cells_colorbar_line(&a, x, yy++, w);
	if (cap)
		gb_cells_caption_line(&a, yy);
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
