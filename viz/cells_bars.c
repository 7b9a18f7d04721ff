/* cells_bars.c — bar charts in cells: one bar per line, growing from zero in eighths of a cell
 * (plain: '#' per full cell), its label on the left and its value on the right; the bars
 * shown are a window when they do not all fit. */
#include "viz/cells.h"
#include "viz/cells_layout.h"
#include "viz/colormap.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Left-aligned eighths of a cell, 1/8 .. 7/8. */
static const uint32_t EIGHTHS[8] = { ' ', 0x258F, 0x258E, 0x258D, 0x258C, 0x258B, 0x258A, 0x2589 };
#define FULL_BLOCK 0x2588u

int gb_cells_bars(gb_grid *g, int x, int y, int w, int h, const gb_figure *f,
                  const gb_cells_opts *o, gb_verr *err)
{
	area a;
	char buf[LBUF], tmp[16], num[64], notice[96];
	if (gb_cells_check_area(g, x, y, w, h, f, err))
		return -1;
	gb_cells_area_init(&a, g, x, y, w, h, f, o);
	int n = f->rows * f->cols;
	char **labels = f->col_labels && f->cols == n ? f->col_labels
	              : f->row_labels && f->rows == n ? f->row_labels : NULL;
	int title = f->title != NULL, sub = f->subtitle != NULL, cap = f->caption || a.n_bad || a.n_masked;
	int lines = h - title - sub - cap;
	if (lines < 1 && cap) cap = 0, lines++;
	if (lines < 1 && sub) sub = 0, lines++;
	if (lines < 1 && title) title = 0, lines++;
	if (lines < 1 || w < 12)
		return gb_cells_too_small(err, w, h, 12, 1);
	int shown = clampi(lines, 0, n), first = clampi(o->row0, 0, n - shown);
	/* widths: label, bar, value */
	int lw = 0, vw = 1;
	for (int i = 0; i < n; i++) {
		gb_label_display(labels ? labels[i] : (snprintf(tmp, sizeof tmp, "%d", i + 1), tmp),
		                 clampi(w / 3, 3, 24), buf, sizeof buf);
		lw = lw > gb_utf8_width(buf) ? lw : gb_utf8_width(buf);
		int k = gb_cells_fmt_num(f->values[i], f->precision, num, sizeof num);
		vw = vw > k ? vw : k;
	}
	int bw = w - lw - 1 - 1 - vw;
	if (bw < 4) {
		lw = clampi(w - vw - 6, 1, lw);
		bw = w - lw - 2 - vw;
	}
	if (bw < 1)
		return gb_cells_too_small(err, w, h, vw + 6, 1);
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
			gb_cells_range_text(notice, sizeof notice, a.plain, "bars", first, shown, n);
			gb_cells_title_line(&a, yy++, notice);
		} else
			gb_cells_title_line(&a, yy++, NULL);
	}
	if (sub)
		gb_cells_subtitle_line(&a, yy++);
	int xb = x + lw + 1;
	for (int i = first; i < first + shown; i++, yy++) {
		double v = f->values[i];
		gb_label_display(labels ? labels[i] : (snprintf(tmp, sizeof tmp, "%d", i + 1), tmp), lw,
		                 buf, sizeof buf);
		int lwi = gb_utf8_width(buf);
		gb_grid_text(g, x + lw - lwi, yy, lwi, buf, NULL, NULL, 0);
		int k = gb_cells_fmt_num(v, f->precision, num, sizeof num);
		if (!isfinite(v)) {
			if (a.plain)
				gb_cells_set_cell(g, xb, yy, is_masked(&a, v) ? MASK_CHAR : BAD_CHAR, NULL, NULL, 0);
			else
				gb_cells_set_cell(g, xb, yy, FULL_BLOCK, is_masked(&a, v) ? gb_mask_rgb : gb_bad_rgb, NULL, 0);
			gb_grid_text(g, x + w - k, yy, k, num, NULL, NULL, 0);
			touch(g, yy);
			continue;
		}
		double vc = v < lo ? lo : v > hi ? hi : v;
		int e8 = (int)lround((vc - lo) / (hi - lo) * bw * 8);
		if (e8 >= z8) { /* rightwards from zero, eighths at the tip */
			int full = (e8 - z8) / 8, rem = (e8 - z8) % 8, cx = xb + z8 / 8;
			for (int c = 0; c < full; c++)
				gb_cells_set_cell(g, cx + c, yy, a.plain ? '#' : FULL_BLOCK, a.plain ? NULL : pos, NULL, 0);
			if (rem && !a.plain)
				gb_cells_set_cell(g, cx + full, yy, EIGHTHS[rem], pos, NULL, 0);
			else if (rem >= 4)
				gb_cells_set_cell(g, cx + full, yy, '#', NULL, NULL, 0);
		} else { /* leftwards: the tip can only be a right half or a right eighth */
			int len = z8 - e8, full = len / 8, rem = len % 8, cx = xb + z8 / 8 - 1;
			for (int c = 0; c < full; c++)
				gb_cells_set_cell(g, cx - c, yy, a.plain ? '#' : FULL_BLOCK, a.plain ? NULL : neg, NULL, 0);
			if (rem && !a.plain)
				gb_cells_set_cell(g, cx - full, yy, rem >= 4 ? 0x2590 : 0x2595, neg, NULL, 0);
			else if (rem >= 4)
				gb_cells_set_cell(g, cx - full, yy, '#', NULL, NULL, 0);
		}
		gb_grid_text(g, x + w - k, yy, k, num, NULL, NULL, 0);
		touch(g, yy);
	}
	if (cap)
		gb_cells_caption_line(&a, yy);
	memset(&g->shown, 0, sizeof g->shown);
	g->shown.row0 = first;
	g->shown.rows = shown;
	g->shown.rows_total = n;
	g->shown.rows_per_line = 1;
	g->shown.n_bad = a.n_bad;
	g->shown.n_masked = a.n_masked;
	return 0;
}
