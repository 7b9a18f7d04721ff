/* raster_attnlines.c — the layout of one head's attention as lines, as BertViz's head view
 * draws it: the query tokens in a column on the left, the key tokens in a column on the right,
 * and a straight line from each query to each key whose width and opacity follow the weight
 * (the value's place in the figure's range). Opacity is drawn as the line colour mixed with
 * the white page, strongest lines last, so the same picture comes out of every painter (PNG and
 * SVG alike, no alpha channel needed). A focus (figure.h's focus_row / focus_col, the window's
 * hover) keeps one token's lines and prints their weights beside the other column. Labels are
 * "index token" at 18 px or more at 1600 x 900; when the tokens are too many for that, every
 * k-th is labelled (every line is still drawn). Records both columns in gb_raster_info so the
 * window can tell which token the mouse is on. */
#include "viz/raster.h"
#include "viz/raster_layout.h"
#include "viz/colormap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINES_PX     18   /* the smallest text here (labels, titles, the legend) */
#define LINES_BIG    26   /* labels when rows have room */
#define LINE_MIN_W   0.75 /* a line's width at weight 0 and 1, base pixels */
#define LINE_MAX_W   7.0
#define SEG          24   /* lines go to the painter in pieces this long (the raster painter
                           * visits a segment's bounding box: a long diagonal in one piece costs
                           * its whole square) */

static const uint8_t FOCUS_BG[3] = { 0xFF, 0xF1, 0xB8 };

typedef struct edge {
	int q, k;
	float t;                  /* 0..1: width and opacity */
} edge;

static int by_t(const void *a, const void *b)
{
	float x = ((const edge *)a)->t, y = ((const edge *)b)->t;
	return (x > y) - (x < y);
}

/* "3 ·the": the index (when the figure numbers its tokens) and the token as every backend
 * shows it. */
static void label_of(char *const *labels, int i, int index0, char *out, size_t cap)
{
	char tok[LABEL_BUF];
	if (labels)
		gb_label_display(labels[i] ? labels[i] : "", LABEL_COLS, tok, sizeof tok);
	else
		tok[0] = 0;
	if (index0 > 0 && tok[0])
		gb_label_indexed(index0 + i, tok, out, cap);
	else if (index0 > 0 || !tok[0])
		snprintf(out, cap, "%d", (index0 > 0 ? index0 : 1) + i);
	else
		snprintf(out, cap, "%s", tok);
}

/* The line's colour at opacity t over white. */
static void mix(const uint8_t ink[3], double t, uint8_t out[3])
{
	t = t < 0 ? 0 : t > 1 ? 1 : t;
	for (int c = 0; c < 3; c++)
		out[c] = (uint8_t)lround(255 + (ink[c] - 255) * t);
}

static void line(lay *L, double ax, double ay, double bx, double by, double w, const uint8_t rgb[3])
{
	double len = hypot(bx - ax, by - ay);
	int n = (int)ceil(len / (SEG * L->s));
	double xy[2 * 65];
	n = n < 1 ? 1 : n > 64 ? 64 : n;
	for (int i = 0; i <= n; i++) {
		xy[2 * i] = ax + (bx - ax) * i / n;
		xy[2 * i + 1] = ay + (by - ay) * i / n;
	}
	L->p->polyline(L->p->ctx, xy, n + 1, w, rgb);
}

int gb_lay_draw_attnlines(lay *L, gb_verr *err)
{
	const gb_figure *f = L->f;
	const int Tq = f->rows, Tk = f->cols, n = Tq > Tk ? Tq : Tk;
	const int fq = f->focus_row >= 1 && f->focus_row <= Tq ? f->focus_row - 1 : -1;
	const int fk = fq < 0 && f->focus_col >= 1 && f->focus_col <= Tk ? f->focus_col - 1 : -1;
	double s = L->s, top, pitch, head_h, legend_h, qw = 0, kw = 0, numw, gap = 14 * s, span, x, xq, xk;
	int lpx, hpx = spx(L, LINES_PX), stride = 1, ne = 0;
	char (*ql)[LABEL_BUF], (*kl)[LABEL_BUF], buf[64];
	uint8_t ink[3];
	edge *e;

	if (!f->values || Tq <= 0 || Tk <= 0)
		return gb_vfail(err, "attention lines have no values");
	ql = malloc(sizeof *ql * (size_t)Tq);
	kl = malloc(sizeof *kl * (size_t)Tk);
	e = malloc(sizeof *e * (size_t)Tq * Tk);
	if (!ql || !kl || !e) {
		free(ql), free(kl), free(e);
		return gb_vfail(err, "out of memory laying out attention lines");
	}
	for (int i = 0; i < Tq; i++)
		label_of(f->row_labels, i, f->row_index0, ql[i], LABEL_BUF);
	for (int j = 0; j < Tk; j++)
		label_of(f->col_labels, j, f->col_index0, kl[j], LABEL_BUF);
	gb_cmap_rgb(f->cmap, f->cmap == GB_CMAP_GRAY ? 0.0 : 0.2, ink);

	/* rows: the column titles above, the legend below, the tokens at the largest size that
	 * fits (at least 18 px; beyond that, every k-th label) */
	head_h = 1.9 * hpx;
	legend_h = 2.4 * hpx;
	pitch = ((L->y1 - L->y0) - head_h - legend_h) / n;
	if (pitch <= 1) {
		free(ql), free(kl), free(e);
		return gb_vfail(err, "figure too small for %d tokens of attention lines", n);
	}
	lpx = (int)floor(pitch * 0.7);
	lpx = lpx > spx(L, LINES_BIG) ? spx(L, LINES_BIG) : lpx < hpx ? hpx : lpx;
	stride = (int)ceil(1.1 * lpx / pitch);
	stride = stride < 1 ? 1 : stride;
	for (int i = 0; i < Tq; i += stride)
		qw = fmax(qw, tw(L, GB_FACE_SANS, lpx, ql[i]));
	for (int j = 0; j < Tk; j += stride)
		kw = fmax(kw, tw(L, GB_FACE_SANS, lpx, kl[j]));
	qw = fmax(qw, tw(L, GB_FACE_SANS, hpx, f->row_title ? f->row_title : ""));
	kw = fmax(kw, tw(L, GB_FACE_SANS, hpx, f->col_title ? f->col_title : ""));
	numw = tw(L, GB_FACE_MONO, lpx, "0.00") + gap; /* the focus's weights beside a column */
	/* the lines take what the labels leave, within reason: too wide and they flatten */
	span = (L->x1 - L->x0) - qw - kw - 4 * gap - 2 * numw;
	span = fmin(span, fmax(360 * s, 0.42 * (L->x1 - L->x0)));
	if (span < 40 * s) {
		free(ql), free(kl), free(e);
		return gb_vfail(err, "figure too narrow for the attention lines' labels");
	}
	x = floor(L->x0 + ((L->x1 - L->x0) - (numw + qw + 2 * gap + span + kw + numw)) / 2 + numw);
	xq = x + qw + gap;        /* where the lines start */
	xk = xq + span;           /* and end */
	top = floor(L->y0 + head_h + ((L->y1 - L->y0) - head_h - legend_h - n * pitch) / 2);

	/* column titles */
	if (f->row_title)
		text(L, GB_FACE_SANS, hpx, xq - gap, top - 0.8 * hpx, 0, GB_ANCHOR_END, f->row_title, INK2);
	if (f->col_title)
		text(L, GB_FACE_SANS, hpx, xk + gap, top - 0.8 * hpx, 0, GB_ANCHOR_START, f->col_title, INK2);

	/* the lines, faintest first so strong ones stay on top */
	for (int i = 0; i < Tq; i++)
		for (int j = 0; j < Tk; j++) {
			float v = f->values[(size_t)i * Tk + j];
			double t;
			if (!isfinite(v) || (fq >= 0 && i != fq) || (fk >= 0 && j != fk))
				continue;
			t = to_t(L, v);
			if (t < 0.004) /* invisible at this opacity: not worth a line */
				continue;
			e[ne++] = (edge){ i, j, (float)fmin(t, 1) };
		}
	qsort(e, (size_t)ne, sizeof *e, by_t);
	/* rows closer than a wide line would merge their lines: the widest is 60% of a row */
	double wmax = fmin(LINE_MAX_W * s, fmax(LINE_MIN_W * s + 1, 0.6 * pitch));
	group(L, "lines", 1);
	for (int m = 0; m < ne; m++) {
		uint8_t rgb[3];
		mix(ink, e[m].t, rgb);
		line(L, xq, top + (e[m].q + 0.5) * pitch, xk, top + (e[m].k + 0.5) * pitch,
		     LINE_MIN_W * s + (wmax - LINE_MIN_W * s) * e[m].t, rgb);
	}
	group(L, "lines", 0);

	/* the tokens; a focused one on a pale box, the other column with its weights */
	group(L, "labels", 1);
	for (int i = 0; i < Tq; i++) {
		double y = top + (i + 0.5) * pitch;
		if (i == fq) {
			double w = tw(L, GB_FACE_BOLD, lpx, ql[i]);
			rect(L, xq - gap - w - 0.3 * lpx, y - 0.65 * lpx, w + 0.6 * lpx, 1.3 * lpx, FOCUS_BG);
		}
		if (i % stride == 0 || i == fq)
			text(L, i == fq ? GB_FACE_BOLD : GB_FACE_SANS, lpx, xq - gap, mid_baseline(y, lpx), 0,
			     GB_ANCHOR_END, ql[i], fk >= 0 || fq >= 0 ? (i == fq ? BLACK : INK2) : INK);
		/* a weight of exactly 0 is the mask's: left blank, as its line is */
		if (fk >= 0 && isfinite(f->values[(size_t)i * Tk + fk]) && f->values[(size_t)i * Tk + fk] != 0) {
			gb_format_value(f->values[(size_t)i * Tk + fk], 2, buf, sizeof buf);
			text(L, GB_FACE_MONO, lpx, x - gap, mid_baseline(y, lpx), 0, GB_ANCHOR_END, buf, INK);
		}
	}
	for (int j = 0; j < Tk; j++) {
		double y = top + (j + 0.5) * pitch;
		if (j == fk) {
			double w = tw(L, GB_FACE_BOLD, lpx, kl[j]);
			rect(L, xk + gap - 0.3 * lpx, y - 0.65 * lpx, w + 0.6 * lpx, 1.3 * lpx, FOCUS_BG);
		}
		if (j % stride == 0 || j == fk)
			text(L, j == fk ? GB_FACE_BOLD : GB_FACE_SANS, lpx, xk + gap, mid_baseline(y, lpx), 0,
			     GB_ANCHOR_START, kl[j], fk >= 0 || fq >= 0 ? (j == fk ? BLACK : INK2) : INK);
		if (fq >= 0 && isfinite(f->values[(size_t)fq * Tk + j]) && f->values[(size_t)fq * Tk + j] != 0) {
			gb_format_value(f->values[(size_t)fq * Tk + j], 2, buf, sizeof buf);
			text(L, GB_FACE_MONO, lpx, xk + 2 * gap + kw, mid_baseline(y, lpx), 0, GB_ANCHOR_START, buf, INK);
		}
	}
	group(L, "labels", 0);

	/* the legend: what width and opacity mean, with three sample lines */
	{
		static const double ts[3] = { 0.1, 0.5, 1.0 };
		double ly = top + n * pitch + 1.4 * hpx, lx;
		const char *what = "line width and opacity: weight";
		double ww = tw(L, GB_FACE_SANS, hpx, what), sw = 54 * s, total = ww;
		for (int k = 0; k < 3; k++) {
			snprintf(buf, sizeof buf, "%.1f", L->lo + ts[k] * (L->hi - L->lo));
			total += gap * 1.5 + sw + 0.4 * hpx + tw(L, GB_FACE_SANS, hpx, buf);
		}
		lx = floor((xq + xk) / 2 - total / 2);
		group(L, "legend", 1);
		text(L, GB_FACE_SANS, hpx, lx, mid_baseline(ly, hpx), 0, GB_ANCHOR_START, what, INK2);
		lx += ww + 1.5 * gap;
		for (int k = 0; k < 3; k++) {
			uint8_t rgb[3];
			mix(ink, ts[k], rgb);
			line(L, lx, ly, lx + sw, ly, LINE_MIN_W * s + (wmax - LINE_MIN_W * s) * ts[k], rgb);
			snprintf(buf, sizeof buf, "%.1f", L->lo + ts[k] * (L->hi - L->lo));
			text(L, GB_FACE_SANS, hpx, lx + sw + 0.4 * hpx, mid_baseline(ly, hpx), 0, GB_ANCHOR_START, buf, INK);
			lx += sw + 0.4 * hpx + tw(L, GB_FACE_SANS, hpx, buf) + 1.5 * gap;
		}
		group(L, "legend", 0);
	}

	if (L->info) {
		L->info->lines_q = (gb_rect){ (int)floor(xq - gap - qw), (int)top, (int)ceil(qw + gap), (int)lround(Tq * pitch) };
		L->info->lines_k = (gb_rect){ (int)floor(xk), (int)top, (int)ceil(kw + gap), (int)lround(Tk * pitch) };
		L->info->plot = (gb_rect){ (int)floor(xq - gap - qw), (int)top, (int)ceil(qw + kw + span + 2 * gap),
		                           (int)lround(n * pitch) };
		L->info->lines_px = lpx;
		L->info->label_stride = stride;
		L->info->col_label_stride = stride;
	}
	free(ql), free(kl), free(e);
	return 0;
}
