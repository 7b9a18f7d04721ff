/* raster_bars.c — the layout of bar charts: one horizontal bar per value growing from zero
 * (the scale always holds it), a value axis with grid lines under the bars, labels on the left
 * (every k-th when they would crowd) and the value at each bar's tip. */
#include "viz/raster.h"
#include "viz/raster_layout.h"
#include "viz/colormap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const uint8_t BAR_POS[3] = { 0x44, 0x77, 0xAA };
static const uint8_t BAR_NEG[3] = { 0xEE, 0x66, 0x77 };

int gb_lay_draw_bars(lay *L, gb_verr *err)
{
	const gb_figure *f = L->f;
	int n = f->rows * f->cols;
	char *const *labels = f->cols == n ? f->col_labels : f->row_labels;
	char *dl, vbuf[48];
	double s = L->s, lo = 0, hi = 0, slot, lw, vw = 0, x, y, pw, ph, zx;
	int lpx = spx(L, LABEL_PX), vpx, stride = 1, tpx = spx(L, TICK_PX);
	const char *axis_title = f->x_title ? f->x_title : f->col_title;
	if (!f->values || n <= 0)
		return gb_vfail(err, "bar chart has no values");
	dl = gb_lay_display_labels(L, labels, n, LABEL_COLS);
	if (labels && !dl)
		return gb_vfail(err, "out of memory laying out a bar chart");
	if (f->range == GB_RANGE_AUTO) {
		for (int i = 0; i < n; i++)
			if (isfinite(f->values[i])) {
				lo = fmin(lo, f->values[i]);
				hi = fmax(hi, f->values[i]);
			}
	} else {
		lo = L->lo;
		hi = L->hi;
	}
	if (!(hi > lo))
		hi = lo + 1;
	{
		double axis_h = 1.6 * tpx + 8 * s + (axis_title ? 1.6 * AXIS_PX * s : 0);
		/* a few bars still fill BAR_SHARE of the slide's height */
		/* a few bars fill most of the slide's height, not its middle band */
		slot = fmin(((L->y1 - L->y0) - axis_h) / n, fmax(60 * s, 0.62 * L->H / n));
		if (slot <= 0) {
			free(dl);
			return gb_vfail(err, "figure too small for %d bars", n);
		}
	}
	lpx = (int)fmin(slot >= 56 * s ? spx(L, LABEL_BIG) : lpx, floor(slot * 0.6));
	lpx = lpx < spx(L, LABEL_MIN) ? spx(L, LABEL_MIN) : lpx;
	stride = (int)ceil(1.1 * lpx / slot);
	stride = stride < 1 ? 1 : stride;
	if (dl) {
		/* labels longer than their share of the width are shortened, and counted */
		double cap = LABEL_SHARE * (L->x1 - L->x0);
		for (int i = 0; i < n; i += stride) {
			char cut[LABEL_BUF];
			if (gb_lay_shorten(L, GB_FACE_SANS, lpx, dl + (size_t)i * LABEL_BUF, cap, cut, sizeof cut)) {
				L->cut++;
				memcpy(dl + (size_t)i * LABEL_BUF, cut, LABEL_BUF);
			} else
				L->cut += gb_lay_label_cut(labels[i], LABEL_COLS);
		}
	}
	vpx = lpx;
	for (int i = 0; i < n; i += stride) {
		gb_format_value(f->values[i], f->precision, vbuf, sizeof vbuf);
		vw = fmax(vw, tw(L, GB_FACE_MONO, vpx, vbuf));
	}
	vw += 10 * s;
	lw = dl ? gb_lay_max_width(L, GB_FACE_SANS, lpx, dl, n, stride) + 12 * s : 0;
	x = L->x0 + lw + (lo < 0 ? vw : 0);
	pw = (L->x1 - x) - (hi > 0 ? vw : 0);
	ph = slot * n;
	y = floor(L->y0 + ((L->y1 - L->y0) - ph - 1.6 * tpx - 8 * s - (axis_title ? 1.6 * AXIS_PX * s : 0)) / 2);
	if (pw < 10) {
		free(dl);
		return gb_vfail(err, "figure too small for the bar labels");
	}
	zx = x + (0 - lo) / (hi - lo) * pw;
	/* value axis: grid lines under the bars, tick labels below */
	group(L, "axis", 1);
	gb_lay_value_axis(L, x, y, pw, ph, lo, hi, (int)fmax(2, fmin(8, pw / (110 * s))), tpx);
	if (axis_title)
		gb_lay_text_fit(L, GB_FACE_SANS, spx(L, AXIS_PX), x + pw / 2,
		                y + ph + TICK_LEN * s + 1.6 * tpx + 1.3 * AXIS_PX * s, 0, GB_ANCHOR_MIDDLE, axis_title,
		                L->x1 - L->x0, INK2);
	group(L, "axis", 0);
	group(L, "bars", 1);
	for (int i = 0; i < n; i++) {
		float v = f->values[i];
		double yc = y + (i + 0.5) * slot, bh = fmax(1, fmin(slot * 0.72, 40 * s + 0.3 * slot));
		if (isfinite(v)) {
			double vx = x + (v - lo) / (hi - lo) * pw;
			vx = fmin(fmax(vx, x), x + pw);
			rect(L, fmin(zx, vx), yc - bh / 2, fmax(fabs(vx - zx), fmax(1, s)), bh, v < 0 ? BAR_NEG : BAR_POS);
			if (i % stride == 0) {
				gb_format_value(v, f->precision, vbuf, sizeof vbuf);
				text(L, GB_FACE_MONO, vpx, v < 0 ? fmin(vx, zx) - 6 * s : fmax(vx, zx) + 6 * s,
				     mid_baseline(yc, vpx), 0, v < 0 ? GB_ANCHOR_END : GB_ANCHOR_START, vbuf, INK);
			}
		} else {
			rect(L, zx - bh / 2, yc - bh / 2, bh, bh, gb_fig_is_masked(f, f, v) ? gb_mask_rgb : gb_bad_rgb);
			if (i % stride == 0) {
				gb_format_value(v, f->precision, vbuf, sizeof vbuf);
				text(L, GB_FACE_MONO, vpx, zx + bh / 2 + 6 * s, mid_baseline(yc, vpx), 0,
				     GB_ANCHOR_START, vbuf, INK);
			}
		}
	}
	rect(L, zx - 0.5 * s, y, fmax(1, s), ph, AXIS);
	group(L, "bars", 0);
	if (dl) {
		group(L, "labels", 1);
		for (int i = 0; i < n; i += stride)
			text(L, GB_FACE_SANS, lpx, L->x0 + lw - 12 * s,
			     mid_baseline(y + (i + 0.5) * slot, lpx), 0, GB_ANCHOR_END, dl + (size_t)i * LABEL_BUF, INK);
		group(L, "labels", 0);
	}
	if (L->info) {
		L->info->plot = (gb_rect){ (int)x, (int)y, (int)pw, (int)ph };
		L->info->label_stride = stride;
		L->info->row_labels_total = n;
		L->info->row_labels_shown = dl ? (n + stride - 1) / stride : 0;
		L->info->cell_text_px = vpx;
	}
	free(dl);
	return 0;
}
