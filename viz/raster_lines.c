/* raster_lines.c — the layout of line plots: axes with nice ticks and grid lines, each series
 * clipped to the plot and broken at non-finite points, in colours that stay apart for
 * colour-blind readers, and a legend on the right with as many entries as fit (under the plot,
 * in columns, when its names are too long for the right). */
#include "viz/raster.h"
#include "viz/raster_layout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* the line at y = 0, when the range spans it */
static const uint8_t ZERO[3] = { 0x99, 0x99, 0x99 };

/* Series colours: Paul Tol's "bright" then "muted" qualitative schemes, chosen to stay apart
 * for colour-blind readers and on a projector; they repeat after 14 series. */
static const uint8_t SERIES[][3] = {
	{ 0x44, 0x77, 0xAA }, { 0xEE, 0x66, 0x77 }, { 0x22, 0x88, 0x33 }, { 0xCC, 0xBB, 0x44 },
	{ 0x66, 0xCC, 0xEE }, { 0xAA, 0x33, 0x77 }, { 0x33, 0x22, 0x88 }, { 0x88, 0x22, 0x55 },
	{ 0x44, 0xAA, 0x99 }, { 0x99, 0x99, 0x33 }, { 0x88, 0xCC, 0xEE }, { 0xCC, 0x66, 0x77 },
	{ 0x11, 0x77, 0x33 }, { 0x77, 0x77, 0x77 },
};
#define N_SERIES_COLOURS (int)(sizeof SERIES / sizeof *SERIES)

/* Colours of groups of series (hue 1, 2, ...: one model each): dark enough that a heavy line
 * on the axis still shows, and apart for colour-blind readers (Tol's blue, red, teal, grey). */
static const uint8_t HUES[][3] = {
	{ 0x1F, 0x5A, 0xA6 }, { 0xCC, 0x33, 0x11 }, { 0x00, 0x99, 0x88 }, { 0x55, 0x55, 0x55 },
};
#define N_HUES (int)(sizeof HUES / sizeof *HUES)

static const uint8_t *series_rgb(const gb_figure *f, int k)
{
	int h = f->series[k].hue;
	return h > 0 ? HUES[(h - 1) % N_HUES] : SERIES[k % N_SERIES_COLOURS];
}

static double series_width(const gb_series *sr, double base)
{
	return sr->weight > 1 ? base * sr->weight : base;
}

/* A polyline, dashed when the series says so: dashes of 18 and gaps of 10 (times the scale),
 * the pattern carried on across the points. */
static void series_line(lay *L, const gb_series *sr, const double *pts, int np, double w, const uint8_t *col)
{
	if (!sr->dash || np < 2) {
		L->p->polyline(L->p->ctx, pts, np, w, col);
		return;
	}
	double on = 18 * L->s, off = 10 * L->s, phase = 0, seg[4];
	for (int i = 0; i + 1 < np; i++) {
		double ax = pts[2 * i], ay = pts[2 * i + 1], bx = pts[2 * i + 2], by = pts[2 * i + 3];
		double len = hypot(bx - ax, by - ay), t = 0;
		while (t < len) {
			double left = phase < on ? on - phase : on + off - phase, step = fmin(left, len - t);
			if (phase < on) {
				seg[0] = ax + (bx - ax) * t / len, seg[1] = ay + (by - ay) * t / len;
				seg[2] = ax + (bx - ax) * (t + step) / len, seg[3] = ay + (by - ay) * (t + step) / len;
				L->p->polyline(L->p->ctx, seg, 2, w, col);
			}
			t += step;
			phase = fmod(phase + step, on + off);
		}
	}
}

/* Liang-Barsky: clips segment (a, b) to the box; 0 when nothing is left. */
static int clip(double *ax, double *ay, double *bx, double *by, double x0, double y0, double x1, double y1)
{
	double t0 = 0, t1 = 1, dx = *bx - *ax, dy = *by - *ay;
	double p[4] = { -dx, dx, -dy, dy }, q[4] = { *ax - x0, x1 - *ax, *ay - y0, y1 - *ay };
	for (int i = 0; i < 4; i++) {
		if (p[i] == 0) {
			if (q[i] < 0)
				return 0;
			continue;
		}
		double r = q[i] / p[i];
		if (p[i] < 0) {
			if (r > t1) return 0;
			if (r > t0) t0 = r;
		} else {
			if (r < t0) return 0;
			if (r < t1) t1 = r;
		}
	}
	*bx = *ax + t1 * dx;
	*by = *ay + t1 * dy;
	*ax = *ax + t0 * dx;
	*ay = *ay + t0 * dy;
	return 1;
}

/* Points of a series that can be drawn: with shared xs, only those that have an x. */
static int points(const gb_figure *f, const gb_series *sr)
{
	return f->xs && f->n_xs < sr->n ? f->n_xs : sr->n;
}

/* A series' name in the legend: its label (cut to the buffer), or "series k" when unnamed. */
static void legend_text(const gb_figure *f, int k, char lab[LABEL_BUF])
{
	if (f->series[k].label && *f->series[k].label)
		snprintf(lab, LABEL_BUF, "%s", f->series[k].label);
	else
		snprintf(lab, LABEL_BUF, "series %d", k + 1);
}

/* One legend entry at (lx, cy), the middle of its line: a 34-unit sample of series k's line,
 * then its name, shortened to width. */
static void legend_entry(lay *L, const gb_figure *f, int k, double lx, double cy, int lgpx, double width)
{
	double s = L->s, seg[4] = { lx, cy, lx + 34 * s, cy };
	char lab[LABEL_BUF], cut[LABEL_BUF];
	series_line(L, &f->series[k], seg, 2, series_width(&f->series[k], 3 * s), series_rgb(f, k));
	legend_text(f, k, lab);
	L->cut += gb_lay_shorten(L, GB_FACE_SANS, lgpx, lab, width, cut, sizeof cut);
	text(L, GB_FACE_SANS, lgpx, lx + 42 * s, mid_baseline(cy, lgpx), 0, GB_ANCHOR_START, cut, INK);
}

int gb_lay_draw_lines(lay *L, gb_verr *err)
{
	const gb_figure *f = L->f;
	double s = L->s, xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
	double xt[16], yt[16], xstep, ystep, x, y, pw, ph, legend_w = 0, lw, ylw = 0;
	int nmax = 0, nxt, nyt, tpx = spx(L, TICK_PX), apx = spx(L, AXIS_PX), lgpx = spx(L, LEGEND_PX);
	int legend_n, more;
	char buf[64];
	double *pts;
	if (f->n_series <= 0 || !f->series)
		return gb_vfail(err, "line plot has no series");
	for (int k = 0; k < f->n_series; k++) {
		const gb_series *sr = &f->series[k];
		int n = points(f, sr);
		nmax = n > nmax ? n : nmax;
		for (int i = 0; i < n; i++) {
			double xv = f->xs ? f->xs[i] : i;
			if (!isfinite(sr->y[i]) || !isfinite(xv))
				continue;
			xlo = fmin(xlo, xv);
			xhi = fmax(xhi, xv);
			ylo = fmin(ylo, sr->y[i]);
			yhi = fmax(yhi, sr->y[i]);
		}
	}
	if (nmax <= 0)
		return gb_vfail(err, "line plot has no points");
	if (f->range == GB_RANGE_FIXED) {
		ylo = f->vmin;
		yhi = f->vmax;
	} else if (f->range == GB_RANGE_SYMMETRIC && isfinite(ylo)) {
		yhi = fmax(fabs(ylo), fabs(yhi));
		ylo = -yhi;
	} else if (isfinite(ylo)) {
		double pad = (yhi - ylo) * 0.05;
		ylo -= pad;
		yhi += pad;
	}
	if (!isfinite(xlo)) xlo = 0, xhi = 1;
	if (!isfinite(ylo)) ylo = 0, yhi = 1;
	if (!(xhi > xlo)) xlo -= 0.5, xhi += 0.5;
	if (!(yhi > ylo)) ylo -= 0.5, yhi += 0.5;

	/* legend on the right, outside the data, as many entries as fit; names too long for the
	 * right (two models' series side by side: "tiny-lm-rope: up to position 128") go under the
	 * plot instead, in as many columns as the width holds, whole */
	legend_n = f->n_series;
	double nat = 0, below_h = 0, lcol_w = 0;
	int below = 0, lcols = 1, lrows = 0;
	if (f->n_series > 1 || (f->series[0].label && *f->series[0].label)) {
		for (int k = 0; k < f->n_series; k++) {
			char lab[LABEL_BUF];
			legend_text(f, k, lab);
			nat = fmax(nat, tw(L, GB_FACE_SANS, lgpx, lab));
		}
		/* long names may take up to 30% of the width on the right */
		double side = fmax(260 * s, 0.3 * (L->x1 - L->x0) - 66 * s);
		if (nat > side) {
			double avail = L->x1 - L->x0;
			below = 1;
			lcol_w = fmin(nat + 66 * s, avail);
			lcols = (int)floor((avail + 24 * s) / (lcol_w + 24 * s));
			lcols = lcols < 1 ? 1 : lcols > f->n_series ? f->n_series : lcols;
			lrows = (f->n_series + lcols - 1) / lcols;
			below_h = lrows * 1.6 * lgpx + 10 * s;
		} else
			legend_w = nat + 66 * s;
	} else
		legend_n = 0;
	nyt = gb_lay_ticks(ylo, yhi, 6, yt, 16, &ystep);
	for (int i = 0; i < nyt; i++) {
		gb_lay_tick_label(yt[i], ystep, buf, sizeof buf);
		ylw = fmax(ylw, tw(L, GB_FACE_SANS, tpx, buf));
	}
	x = L->x0 + (f->y_title ? 1.6 * apx : 0) + ylw + (TICK_LEN + 6) * s;
	pw = L->x1 - x - legend_w - 12 * s;
	y = L->y0 + 0.6 * tpx;
	ph = L->y1 - y - (TICK_LEN * s + 1.6 * tpx) - (f->x_title ? 1.7 * apx : 0) - below_h;
	if (pw < 20 || ph < 20)
		return gb_vfail(err, "figure too small for the line plot");
	nxt = gb_lay_ticks(xlo, xhi, (int)fmax(2, fmin(10, pw / (100 * s))), xt, 16, &xstep);
	/* x values that are all whole numbers (layers, positions) get whole ticks: "layer 1.5" is no place */
	int xint = 1;
	for (int k = 0; f->xs && k < f->n_xs; k++)
		xint &= f->xs[k] == floorf(f->xs[k]);
	if (xint && xstep < 1 && xhi - xlo < 16) {
		nxt = 0;
		for (double v = ceil(xlo); v <= xhi + 1e-9 && nxt < 16; v += 1)
			xt[nxt++] = v;
		xstep = 1;
	}
	lw = fmax(1, round(s));
	group(L, "axes", 1);
	for (int i = 0; i < nyt; i++) {
		double ty = y + ph - (yt[i] - ylo) / (yhi - ylo) * ph;
		rect(L, x, ty - lw / 2, pw, lw, GRID);
		rect(L, x - TICK_LEN * s, ty - lw / 2, TICK_LEN * s, lw, AXIS);
		gb_lay_tick_label(yt[i], ystep, buf, sizeof buf);
		text(L, GB_FACE_SANS, tpx, x - (TICK_LEN + 4) * s, mid_baseline(ty, tpx), 0, GB_ANCHOR_END, buf, INK);
	}
	for (int i = 0; i < nxt; i++) {
		double tx = x + (xt[i] - xlo) / (xhi - xlo) * pw;
		rect(L, tx - lw / 2, y, lw, ph, GRID);
		rect(L, tx - lw / 2, y + ph, lw, TICK_LEN * s, AXIS);
		gb_lay_tick_label(xt[i], xstep, buf, sizeof buf);
		text(L, GB_FACE_SANS, tpx, tx, y + ph + TICK_LEN * s + 1.05 * tpx, 0, GB_ANCHOR_MIDDLE, buf, INK);
	}
	if (ylo < 0 && yhi > 0)
		rect(L, x, y + ph - (0 - ylo) / (yhi - ylo) * ph - lw / 2, pw, lw, ZERO);
	rect(L, x - lw, y, lw, ph + lw, AXIS);
	rect(L, x - lw, y + ph, pw + lw, lw, AXIS);
	if (f->y_title)
		gb_lay_text_fit(L, GB_FACE_SANS, apx, L->x0 + 1.0 * apx, y + ph / 2, 90, GB_ANCHOR_MIDDLE, f->y_title,
		                L->y1 - L->y0, INK2);
	if (f->x_title)
		gb_lay_text_fit(L, GB_FACE_SANS, apx, x + pw / 2, y + ph + TICK_LEN * s + 1.6 * tpx + 1.3 * apx, 0,
		                GB_ANCHOR_MIDDLE, f->x_title, L->x1 - L->x0, INK2);
	group(L, "axes", 0);

	pts = malloc(sizeof *pts * 2 * (size_t)(2 * nmax + 2));
	if (!pts)
		return gb_vfail(err, "out of memory drawing lines");
	group(L, "series", 1);
	/* heavy series last, on top of the others */
	for (int kk = 0; kk < 2 * f->n_series; kk++) {
		int k = kk % f->n_series;
		if ((kk < f->n_series) == (f->series[k].weight > 1))
			continue;
		const gb_series *sr = &f->series[k];
		const uint8_t *col = series_rgb(f, k);
		int np = 0, n = points(f, sr);
		double lwid = series_width(sr, 2.5 * s);
		/* Breaks at NaN and where a segment leaves the box; a run is sent as one polyline. */
		for (int i = 0; i + 1 < n || (n == 1 && i == 0); i++) {
			double ax, ay, bx, by;
			double xa = f->xs ? f->xs[i] : i, xb = n == 1 ? xa : f->xs ? f->xs[i + 1] : i + 1;
			float ya = sr->y[i], yb = n == 1 ? ya : sr->y[i + 1];
			if (!isfinite(ya) || !isfinite(yb) || !isfinite(xa) || !isfinite(xb)) {
				if (np)
					series_line(L, sr, pts, np, lwid, col);
				np = 0;
				continue;
			}
			ax = x + (xa - xlo) / (xhi - xlo) * pw;
			bx = x + (xb - xlo) / (xhi - xlo) * pw;
			ay = y + ph - (ya - ylo) / (yhi - ylo) * ph;
			by = y + ph - (yb - ylo) / (yhi - ylo) * ph;
			if (!clip(&ax, &ay, &bx, &by, x, y, x + pw, y + ph)) {
				if (np)
					series_line(L, sr, pts, np, lwid, col);
				np = 0;
				continue;
			}
			if (np && (fabs(pts[2 * np - 2] - ax) > 1e-9 || fabs(pts[2 * np - 1] - ay) > 1e-9)) {
				series_line(L, sr, pts, np, lwid, col);
				np = 0;
			}
			if (!np) {
				pts[0] = ax;
				pts[1] = ay;
				np = 1;
			}
			pts[2 * np] = bx;
			pts[2 * np + 1] = by;
			np++;
		}
		if (np)
			series_line(L, sr, pts, np == 2 && n == 1 ? 1 : np, n == 1 ? 3 * lwid : lwid, col);
	}
	group(L, "series", 0);
	free(pts);

	if (legend_n && below) {
		/* under the x axis and its title, column by column (a model's series together), the
		 * columns centred under the whole width */
		double lh = 1.6 * lgpx, total = lcols * lcol_w + (lcols - 1) * 24 * s;
		double lx0 = L->x0 + fmax(0, (L->x1 - L->x0 - total) / 2), ly = L->y1 - lrows * lh;
		group(L, "legend", 1);
		for (int k = 0; k < legend_n; k++) {
			int c = k / lrows, r = k % lrows;
			double lx = lx0 + c * (lcol_w + 24 * s), cy = ly + (r + 0.5) * lh;
			legend_entry(L, f, k, lx, cy, lgpx, lcol_w - 42 * s);
		}
		group(L, "legend", 0);
	} else if (legend_n) {
		double lx = x + pw + 24 * s, ly = y, lh = 1.6 * lgpx;
		int fit = (int)((ph) / lh);
		more = 0;
		if (legend_n > fit) {
			more = legend_n - (fit - 1);
			legend_n = fit - 1;
		}
		group(L, "legend", 1);
		for (int k = 0; k < legend_n; k++) {
			double cy = ly + (k + 0.5) * lh;
			legend_entry(L, f, k, lx, cy, lgpx, legend_w - 66 * s);
		}
		if (more > 0) {
			/* said on the figure, but still names the figure does not show */
			L->cut += more;
			snprintf(buf, sizeof buf, "+%d more", more);
			text(L, GB_FACE_SANS, lgpx, lx + 42 * s, mid_baseline(ly + (legend_n + 0.5) * lh, lgpx), 0,
			     GB_ANCHOR_START, buf, INK2);
		}
		group(L, "legend", 0);
	}
	if (L->info)
		L->info->plot = (gb_rect){ (int)x, (int)y, (int)pw, (int)ph };
	return 0;
}
