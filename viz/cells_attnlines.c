/* cells_attnlines.c — one head's attention lines (figure.h's ATTNLINES) in cells, where no line
 * can be drawn: one text line per query, its label ("3 ·the") and then the keys it attends to
 * most, strongest first, each with its weight ("1 When 0.62  2 ·Mary 0.31"), as many as fit and
 * none below 0.005; in colour, each key on its weight's colour. The queries shown are a window
 * from the caller's first row when they do not all fit ("queries 1–20 of 64"). */
#include "viz/cells.h"
#include "viz/cells_layout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_WEIGHT 0.005

/* "3 ·the" (index when the figure numbers its tokens) in at most maxw columns. */
static void token_label(char *const *labels, int i, int index0, int maxw, char *out, size_t cap)
{
	char tok[LBUF], both[LBUF + 16];
	gb_label_display(labels && labels[i] ? labels[i] : "", 16, tok, sizeof tok);
	if (index0 > 0 || !tok[0])
		gb_label_indexed((index0 > 0 ? index0 : 1) + i, tok, both, sizeof both);
	else
		snprintf(both, sizeof both, "%s", tok);
	gb_cells_shorten(both, maxw, out, cap);
}

int gb_cells_attnlines(gb_grid *g, int x, int y, int w, int h, const gb_figure *f,
                       const gb_cells_opts *o, gb_verr *err)
{
	area a;
	char buf[LBUF], num[64], item[LBUF + 80], notice[96];
	if (gb_cells_check_area(g, x, y, w, h, f, err))
		return -1;
	if (f->rows <= 0 || f->cols <= 0)
		return gb_vfail(err, "attention lines have no values");
	gb_cells_area_init(&a, g, x, y, w, h, f, o);
	const int Tq = f->rows, Tk = f->cols;
	int title = f->title != NULL, head = 1, cap = f->caption || a.n_bad || a.n_masked;
	int lines = h - title - head - cap;
	if (lines < 1 && cap) cap = 0, lines++;
	if (lines < 1) head = 0, lines++;
	if (lines < 1 && title) title = 0, lines++;
	if (lines < 1 || w < 20)
		return gb_cells_too_small(err, w, h, 20, 1);
	int shown = clampi(lines, 0, Tq), first = clampi(o->row0, 0, Tq - shown);
	int lw = 1;
	for (int i = first; i < first + shown; i++) {
		token_label(f->row_labels, i, f->row_index0, clampi(w / 3, 4, 22), buf, sizeof buf);
		lw = lw > gb_utf8_width(buf) ? lw : gb_utf8_width(buf);
	}
	int *order = malloc(sizeof *order * (size_t)Tk);
	if (!order)
		return gb_vfail(err, "out of memory laying out attention lines");

	int yy = y;
	if (title) {
		if (shown < Tq) {
			gb_cells_range_text(notice, sizeof notice, a.plain, "queries", first, shown, Tq);
			gb_cells_title_line(&a, yy++, notice);
		} else
			gb_cells_title_line(&a, yy++, NULL);
	}
	if (head) {
		snprintf(item, sizeof item, "%*s   %s, strongest first (weight)", lw, f->row_title ? f->row_title : "query",
		         f->col_title ? f->col_title : "key");
		gb_cells_shorten(item, w, buf, sizeof buf);
		gb_grid_text(g, x, yy, w, buf, NULL, NULL, GB_ATTR_DIM);
		touch(g, yy++);
	}
	for (int i = first; i < first + shown; i++, yy++) {
		const float *row = f->values + (size_t)i * Tk;
		int n = 0, cx;
		token_label(f->row_labels, i, f->row_index0, lw, buf, sizeof buf);
		cx = x + lw - gb_utf8_width(buf);
		gb_grid_text(g, cx, yy, lw, buf, NULL, NULL, GB_ATTR_BOLD);
		cx = x + lw;
		cx += gb_grid_text(g, cx, yy, 3, a.plain ? " ->" : " \xE2\x86\x92", NULL, NULL, 0);
		for (int j = 0; j < Tk; j++)
			if (isfinite(row[j]) && (row[j] - a.lo) / (a.hi - a.lo) >= MIN_WEIGHT)
				order[n++] = j;
		/* strongest first: an insertion sort (a row has at most a context's keys) */
		for (int p = 1; p < n; p++)
			for (int q = p; q > 0 && row[order[q]] > row[order[q - 1]]; q--) {
				int t = order[q];
				order[q] = order[q - 1];
				order[q - 1] = t;
			}
		for (int p = 0; p < n; p++) {
			int j = order[p], iw;
			token_label(f->col_labels, j, f->col_index0, 20, buf, sizeof buf);
			gb_cells_fmt_num(row[j], f->precision, num, sizeof num);
			snprintf(item, sizeof item, " %s %s ", buf, num);
			iw = gb_utf8_width(item);
			if (cx + 1 + iw > x + w) {
				if (cx + 2 <= x + w)
					gb_grid_text(g, cx + 1, yy, 1, "\xE2\x80\xA6", NULL, NULL, GB_ATTR_DIM);
				break;
			}
			cx += 1;
			if (a.plain)
				cx += gb_grid_text(g, cx, yy, iw, item, NULL, NULL, 0);
			else {
				uint8_t rgb[3];
				gb_cells_value_rgb(&a, row[j], rgb);
				cx += gb_grid_text(g, cx, yy, iw, item, gb_cells_ink_for(a.depth, rgb), rgb, 0);
			}
		}
		touch(g, yy);
	}
	free(order);
	if (cap)
		gb_cells_caption_line(&a, yy);
	memset(&g->shown, 0, sizeof g->shown);
	g->shown.row0 = first;
	g->shown.rows = shown;
	g->shown.rows_total = Tq;
	g->shown.cols = g->shown.cols_total = Tk;
	g->shown.rows_per_line = 1;
	g->shown.n_bad = a.n_bad;
	g->shown.n_masked = a.n_masked;
	return 0;
}
