/* raster_strip.c — the layout of token strips: each token a box in its value's colour with the
 * value under it, wrapped into lines at the largest font that fits, centred, with the colorbar
 * beside them. */
#include "viz/raster.h"
#include "viz/raster_layout.h"
#include "viz/colormap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A token's bytes ("e2 96 81") as boxes of one hex pair each, under its id: their count, and
 * the width the row of them takes at size bpx. */
static int n_bytes(const char *b)
{
	int n = 0;
	for (; b && *b; b++)
		n += *b != ' ' && (b[1] == ' ' || !b[1]);
	return n;
}

static double bytes_width(lay *L, const char *b, int bpx)
{
	int n = n_bytes(b);
	return n ? n * (tw(L, GB_FACE_MONO, bpx, "00") + 0.5 * bpx) + (n - 1) * 0.25 * bpx : 0;
}

static void draw_bytes(lay *L, const char *b, int bpx, double cx, double y)
{
	double bw = tw(L, GB_FACE_MONO, bpx, "00") + 0.5 * bpx, bh = 1.35 * bpx, gap = 0.25 * bpx;
	double x = cx - bytes_width(L, b, bpx) / 2;
	while (b && *b) {
		char hex[8];
		int k = 0;
		while (*b == ' ')
			b++;
		while (*b && *b != ' ' && k < 7)
			hex[k++] = *b++;
		hex[k] = 0;
		if (!k)
			break;
		rect(L, x, y, bw, bh, WHITE);
		gb_lay_outline(L, (int)floor(x + 0.5), (int)floor(y + 0.5), (int)floor(bw + 0.5), (int)floor(bh + 0.5));
		text(L, GB_FACE_MONO, bpx, x + bw / 2, mid_baseline(y + bh / 2, bpx), 0, GB_ANCHOR_MIDDLE, hex, INK);
		x += bw + gap;
	}
}

int gb_lay_draw_strip(lay *L, gb_verr *err)
{
	const gb_figure *f = L->f;
	int n = f->rows * f->cols;
	char *const *labels = f->cols == n ? f->col_labels : f->row_labels;
	char *dl, vbuf[48];
	double s = L->s, cb_w = f->colorbar ? gb_lay_colorbar_width(L) : 0, aw = L->x1 - L->x0 - cb_w;
	double pad, gap, boxh, rowh, total_h = 0, widest = 0;
	char **bytes = f->byte_labels && f->cols == n ? f->byte_labels : NULL;
	int px = spx(L, 56), vpx = 0, lines = 1; /* as large as the slide holds: a class reads it from the back */
	if (!f->values || n <= 0)
		return gb_vfail(err, "token strip has no values");
	dl = gb_lay_display_labels(L, labels, n, LABEL_COLS);
	if (labels && !dl)
		return gb_vfail(err, "out of memory laying out a token strip");
	/* the largest font at which the wrapped strip fits the box */
	for (;; px--) {
		double xx = 0;
		pad = 0.45 * px;
		gap = 0.25 * px;
		vpx = (int)fmax(spx(L, TEXT_MIN), round(0.6 * px));
		boxh = 1.6 * px;
		rowh = boxh + 1.5 * vpx + 0.6 * px + (bytes ? 1.9 * vpx : 0);
		lines = 1;
		widest = 0;
		for (int i = 0; i < n; i++) {
			double w = fmax(dl ? tw(L, GB_FACE_SANS, px, dl + (size_t)i * LABEL_BUF) : 0, 1.2 * px) + 2 * pad;
			gb_format_value(f->values[i], f->precision, vbuf, sizeof vbuf);
			w = fmax(w, tw(L, GB_FACE_MONO, vpx, vbuf) + 0.3 * px);
			if (bytes)
				w = fmax(w, bytes_width(L, bytes[i], vpx) + 0.3 * px);
			if (xx > 0 && xx + w > aw) {
				lines++;
				widest = fmax(widest, xx - gap);
				xx = 0;
			}
			xx += w + gap;
		}
		widest = fmax(widest, xx - gap);
		total_h = lines * rowh;
		if (total_h <= L->y1 - L->y0 || px <= spx(L, TEXT_MIN))
			break;
	}
	{
		double x0 = floor(L->x0 + (aw - widest) / 2), y0 = floor(L->y0 + fmax(0, ((L->y1 - L->y0) - total_h) / 2));
		double xx = x0, yy = y0;
		group(L, "tokens", 1);
		for (int i = 0; i < n; i++) {
			const char *lab = dl ? dl + (size_t)i * LABEL_BUF : "";
			double w = fmax(dl ? tw(L, GB_FACE_SANS, px, lab) : 0, 1.2 * px) + 2 * pad;
			uint8_t rgb[3];
			gb_format_value(f->values[i], f->precision, vbuf, sizeof vbuf);
			w = fmax(w, tw(L, GB_FACE_MONO, vpx, vbuf) + 0.3 * px);
			if (bytes)
				w = fmax(w, bytes_width(L, bytes[i], vpx) + 0.3 * px);
			if (xx > x0 && xx + w > x0 + aw + 0.5) {
				xx = x0;
				yy += rowh;
			}
			if (yy + boxh > L->y1 + 0.5) {
				/* more tokens than a slide holds at TEXT_MIN: the rest are left out, counted */
				L->cut += n - i;
				break;
			}
			if (f->alternate)
				gb_alt_rgb(i, rgb);
			else
				gb_lay_cell_colour(L, f, f->values[i], rgb);
			if (dl)
				L->cut += gb_lay_label_cut(labels[i], LABEL_COLS);
			rect(L, xx, yy, w, boxh, rgb);
			/* a light box stays visible on the page */
			gb_lay_outline(L, (int)floor(xx + 0.5), (int)floor(yy + 0.5),
			               (int)(floor(xx + w + 0.5) - floor(xx + 0.5)),
			               (int)(floor(yy + boxh + 0.5) - floor(yy + 0.5)));
			text(L, GB_FACE_SANS, px, xx + w / 2, mid_baseline(yy + boxh / 2, px), 0, GB_ANCHOR_MIDDLE, lab,
			     gb_lightness(rgb) > 55 ? BLACK : WHITE);
			text(L, GB_FACE_MONO, vpx, xx + w / 2, yy + boxh + 1.15 * vpx, 0, GB_ANCHOR_MIDDLE, vbuf, INK2);
			if (bytes)
				draw_bytes(L, bytes[i], vpx, xx + w / 2, yy + boxh + 1.5 * vpx);
			if (i == 0 && L->info)
				L->info->plot = (gb_rect){ (int)floor(xx + 0.5), (int)floor(yy + 0.5),
				                           (int)floor(xx + w + 0.5) - (int)floor(xx + 0.5),
				                           (int)floor(yy + boxh + 0.5) - (int)floor(yy + 0.5) };
			if (L->info) {
				gb_rect *b = &L->info->box;
				int bx1 = (int)floor(xx + w + 0.5), by1 = (int)floor(yy + boxh + 0.5);
				if (i == 0)
					*b = (gb_rect){ (int)floor(xx + 0.5), (int)floor(yy + 0.5), 0, 0 };
				b->w = bx1 - b->x > b->w ? bx1 - b->x : b->w;
				b->h = by1 - b->y > b->h ? by1 - b->y : b->h;
				L->info->row_labels_total = n;
				L->info->row_labels_shown = i + 1;
			}
			xx += w + gap;
		}
		group(L, "tokens", 0);
		if (f->colorbar) {
			double ch = fmin(L->y1 - L->y0, fmax(total_h, 220 * s));
			double cy = fmax(L->y0, fmin(y0 + total_h / 2 - ch / 2, L->y1 - ch));
			gb_lay_colorbar(L, x0 + widest + CB_GAP * s, cy, ch);
		}
	}
	free(dl);
	return 0;
}
