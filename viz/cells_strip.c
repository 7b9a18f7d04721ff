/* cells_strip.c — token strips in cells: each token's label on its value's colour (plain: the
 * value in brackets after it), wrapped at the right edge; the tokens shown are a window
 * starting at the caller's column when they do not all fit. */
#include "viz/cells.h"
#include "viz/cells_layout.h"
#include "viz/colormap.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int gb_cells_strip(gb_grid *g, int x, int y, int w, int h, const gb_figure *f,
                   const gb_cells_opts *o, gb_verr *err)
{
	area a;
	char lab[LBUF], num[64], text[LBUF + 80], notice[96], tmp[16];
	if (gb_cells_check_area(g, x, y, w, h, f, err))
		return -1;
	gb_cells_area_init(&a, g, x, y, w, h, f, o);
	int n = f->rows * f->cols;
	char **labels = f->col_labels && f->cols == n ? f->col_labels
	              : f->row_labels && f->rows == n ? f->row_labels : NULL;
	int title = f->title != NULL, sub = f->subtitle != NULL, cbar = f->colorbar;
	int cap = f->caption || a.n_bad || a.n_masked;
	int lines = h - title - sub - cbar - cap;
	if (lines < 1 && cbar) cbar = 0, lines++;
	if (lines < 1 && cap) cap = 0, lines++;
	if (lines < 1 && sub) sub = 0, lines++;
	if (lines < 1 && title) title = 0, lines++;
	if (lines < 1 || w < 8)
		return gb_cells_too_small(err, w, h, 8, 1);
	int first = clampi(o->col0, 0, n > 0 ? n - 1 : 0), i = first, line = 0, cx = x;
	int ty = y + title + sub;
	/* with its bytes, a token takes two lines: the label over its bytes (issue 14) */
	char **bytes = f->byte_labels && f->cols == n && lines >= 2 ? f->byte_labels : NULL;
	int step = bytes ? 2 : 1;
	/* Each token: " label " on its colour (plain: "label(0.12)"), then a gap; a token that
	 * does not fit on what is left of a line starts the next one. */
	while (i < n && line + step <= lines) {
		double v = f->values[i];
		gb_label_display(labels ? labels[i] : (snprintf(tmp, sizeof tmp, "%d", i + 1), tmp),
		                 clampi(w - 4, 1, 24), lab, sizeof lab);
		gb_cells_fmt_num(v, f->precision, num, sizeof num);
		if (a.plain)
			snprintf(text, sizeof text, "%s(%s%s)", lab, isfinite(v) ? "" : "!", num);
		else if (f->numbers)
			snprintf(text, sizeof text, " %s %s ", lab, num);
		else
			snprintf(text, sizeof text, " %s ", lab);
		int bw = bytes ? gb_utf8_width(bytes[i]) + (a.plain ? 2 : 0) : 0;
		if (bw > gb_utf8_width(text) && strlen(text) + (size_t)bw < sizeof text) { /* the box as wide as its bytes */
			int pad = bw - gb_utf8_width(text);
			memmove(text + pad / 2, text, strlen(text) + 1);
			memset(text, ' ', (size_t)(pad / 2));
			size_t l = strlen(text);
			memset(text + l, ' ', (size_t)(pad - pad / 2));
			text[l + (size_t)(pad - pad / 2)] = 0;
		}
		int tw = gb_utf8_width(text);
		if (tw > w)
			tw = w;
		if (cx > x && cx + tw > x + w) {
			line += step;
			cx = x;
			continue;
		}
		if (bytes) {
			char bt[LBUF];
			snprintf(bt, sizeof bt, a.plain ? "[%s]" : "%s", bytes[i]);
			int bx = cx + (tw - gb_utf8_width(bt)) / 2;
			gb_grid_text(g, bx, ty + line + 1, x + w - bx, bt, NULL, NULL, a.plain ? 0 : GB_ATTR_DIM);
			touch(g, ty + line + 1);
		}
		if (a.plain) {
			gb_grid_text(g, cx, ty + line, tw, text, NULL, NULL, 0);
		} else {
			uint8_t rgb[3];
			if (f->alternate)
				gb_alt_rgb(i, rgb);
			else
				gb_cells_value_rgb(&a, v, rgb);
			gb_grid_text(g, cx, ty + line, tw, text, gb_cells_ink_for(a.depth, rgb), rgb, 0);
		}
		touch(g, ty + line);
		cx += tw + 1;
		i++;
	}
	int shown = i - first;
	if (title) {
		if (shown < n) {
			gb_cells_range_text(notice, sizeof notice, a.plain, "tokens", first, shown, n);
			gb_cells_title_line(&a, y, notice);
		} else
			gb_cells_title_line(&a, y, NULL);
	}
	if (sub)
		gb_cells_subtitle_line(&a, y + title);
	int yy = ty + (cx > x ? line + step : line);
	if (cbar)
		gb_cells_colorbar_line(&a, x, yy++, w);
	if (cap)
		gb_cells_caption_line(&a, yy);
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
