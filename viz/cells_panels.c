/* cells_panels.c — small multiples in cells: a grid of heatmap panels sharing one colour map
 * (the grid's: a panel's own map never contradicts the shared colour bar) and one range.
 *
 * Owns how a grid shares its rectangle among panels: one data row per line when every row of
 * panels fits that way, else half blocks; each panel's tokens beside its rows when the panels
 * are wide enough to show every column with them; the notice of the rows of panels shown. */
#include "viz/cells.h"
#include "viz/cells_layout.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The widest row label of a panel, as the heatmap draws it (0 without labels). */
static int panel_label_w(const gb_figure *p, int w)
{
	char buf[LBUF], tmp[16];
	int m = 0, cap = clampi(w / 4, 3, 16);
	if (!p->row_labels && p->row_index0 <= 0)
		return 0;
	for (int i = 0; i < p->rows; i++) {
		if (p->row_labels)
			gb_label_display(p->row_labels[i], cap, buf, sizeof buf);
		else
			snprintf(tmp, sizeof tmp, "%d", p->row_index0 + i), gb_label_display(tmp, cap, buf, sizeof buf);
		int lw = gb_utf8_width(buf) + (p->row_index0 > 0 && p->row_labels ? 4 : 0);
		if (p->row_index0 > 0 && p->row_labels) { /* '3 "0"': the quotes too */
			char both[LBUF + 16];
			gb_label_indexed(0, buf, both, sizeof both);
			lw += gb_utf8_width(both) - 2 - gb_utf8_width(buf);
		}
		m = lw > m ? lw : m;
	}
	return m;
}

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
	int title = f->title != NULL, sub = f->subtitle != NULL, cbar = f->colorbar;
	int cap = f->caption || a.n_bad || a.n_masked;
	int avail = h - title - sub - cbar - cap;
	if (avail < 2 && cbar) cbar = 0, avail++;
	if (avail < 2 && cap) cap = 0, avail++;
	if (avail < 2 && sub) sub = 0, avail++;
	if (avail < 2 || pw < 4)
		return gb_cells_too_small(err, w, h, 12, 3);
	/* a panel's natural height: its title and its rows, one per line when every row of panels
	 * fits that way (bigger, square cells), else two per line with half blocks */
	int ph = 1, ph_half = 1, half = 0, labels = 1, cl = 0;
	/* numbered columns of labelled panels (qkv's features): their digits stand in cl lines */
	if (f->panel_labels)
		for (int i = 0; i < n; i++) {
			const gb_figure *p = f->panels[i];
			int d = 0;
			for (int v = p->col_index0 + p->cols - 1; v > 0 && !p->col_labels && p->col_index0 > 0; v /= 10)
				d++;
			cl = d > cl ? d : cl;
		}
	for (int i = 0; i < n; i++) {
		const gb_figure *p = f->panels[i];
		int need = 1 + cl + p->rows, need_half = 1 + cl + (p->numbers ? p->rows : (p->rows + 1) / 2);
		ph = need > ph ? need : ph;
		ph_half = need_half > ph_half ? need_half : ph_half;
		int lw = panel_label_w(p, pw);
		if (!lw || pw - lw - 1 < p->cols)
			labels = 0; /* tokens beside the rows only when every column still shows */
	}
	/* half blocks only when they show more rows of panels (or whole ones) */
	int more = ph > avail || clampi(avail / ph_half, 1, gr) > clampi(avail / ph, 1, gr);
	if (!a.plain && o->half != 0 && (o->half > 0 || (ph * gr > avail && more))) {
		half = 1;
		ph = ph_half - cl;
		labels = 0;
	}
	if (!labels && cl) /* no room for labels: the column numbers' lines go too */
		ph -= half ? 0 : cl;
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
			pa.y = y + title + sub + pr * ph;
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
			if (gb_cells_heatmap_in(&pa, &po, P_TITLE | (labels ? (cl ? P_LABELS : P_RLABELS) : 0), &sh, err))
				return -1;
			if (sh.rows < p->rows || sh.cols < p->cols) {
				clipped = 1;
				cut_rows = sh.rows;
				cut_cols = sh.cols;
			}
		}
	int yy = y + title + sub + nr * ph;
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
	if (sub)
		gb_cells_subtitle_line(&a, y + title);
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
