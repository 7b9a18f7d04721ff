/* raster_layout.c — the figure layout's shared parts (raster_layout.h): the frame every kind
 * gets (title, caption, the notes on masked and non-finite values), tick steps and their labels,
 * token labels for display, the colorbar, a value's colour and the outline around cells; and
 * gb_layout_draw, which measures the figure, draws the frame and hands the content box to the
 * layout of its kind. */
#include "viz/raster.h"
#include "viz/raster_layout.h"
#include "viz/colormap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The outline around a heatmap's cells, so cells near the colormap's light end (viridis'
 * yellow, gray's white) do not melt into the page; lighter than the axes, darker than GRID. */
static const uint8_t OUTLINE[3] = { 0x99, 0x99, 0x99 };

/* ---- layout helpers ------------------------------------------------------------------------ */

void gb_format_value(double v, int precision, char *out, int cap)
{
	if (precision < 0)
		precision = 0;
	if (precision > 9)
		precision = 9;
	if (isnan(v))
		snprintf(out, (size_t)cap, "NaN");
	else if (isinf(v))
		snprintf(out, (size_t)cap, v > 0 ? "inf" : "-inf");
	else if (fabs(v) >= 1e6) /* fixed point would widen every cell's number for one outlier */
		snprintf(out, (size_t)cap, "%.*g", precision + 1 > 3 ? precision + 1 : 3, v);
	else {
		snprintf(out, (size_t)cap, "%.*f", precision, v);
		/* "-0.00": the sign of something the reader sees as zero is noise */
		if (out[0] == '-' && strspn(out + 1, "0.") == strlen(out + 1))
			memmove(out, out + 1, strlen(out));
	}
}

/* A "nice" tick step (1, 2 or 5 times a power of ten) giving about n ticks over span. */
static double nice_step(double span, int n)
{
	double raw, mag, norm;
	if (!(span > 0) || n < 1)
		return 1;
	raw = span / n;
	mag = pow(10, floor(log10(raw)));
	norm = raw / mag;
	return (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
}

void gb_lay_tick_label(double v, double step, char *out, int cap)
{
	int dec = step > 0 ? (int)ceil(-log10(step) - 1e-9) : 0;
	if (fabs(v) < step * 1e-6)
		v = 0;
	if (dec < 0)
		dec = 0;
	if (fabs(v) >= 1e6 || dec > 6)
		snprintf(out, (size_t)cap, "%.3g", v);
	else
		snprintf(out, (size_t)cap, "%.*f", dec, v);
}

/* Ticks in [lo, hi]; returns how many (at most max) and their step. */
int gb_lay_ticks(double lo, double hi, int want, double *t, int max, double *step_out)
{
	double step = nice_step(hi - lo, want), first = ceil(lo / step - 1e-9) * step;
	int n = 0;
	for (double v = first; v <= hi + step * 1e-9 && n < max; v = first + n * step)
		t[n++] = v;
	*step_out = step;
	return n;
}

/* Display labels for n tokens: shortened, spaces and control bytes made visible. */
char *gb_lay_display_labels(char *const *labels, int n, int max_cols)
{
	char *d;
	if (!labels || n <= 0)
		return NULL;
	d = malloc((size_t)n * LABEL_BUF);
	if (!d)
		return NULL;
	for (int i = 0; i < n; i++)
		gb_label_display(labels[i] ? labels[i] : "", max_cols, d + (size_t)i * LABEL_BUF, LABEL_BUF);
	return d;
}

double gb_lay_max_width(lay *L, int face, int px, const char *labels, int n, int stride)
{
	double m = 0;
	for (int i = 0; labels && i < n; i += stride) {
		double w = tw(L, face, px, labels + (size_t)i * LABEL_BUF);
		m = w > m ? w : m;
	}
	return m;
}

/* ---- frame: title, caption, the NaN note ----------------------------------------------------- */

static void frame(lay *L)
{
	const gb_figure *f = L->f;
	double m = MARGIN * L->s, avail;
	char note[128], mnote[96];
	const char *lines[3];
	int nl = 0;
	L->x0 = m;
	L->y0 = m;
	L->x1 = L->W - m;
	L->y1 = L->H - m;
	avail = L->x1 - L->x0;
	if (f->title && *f->title) {
		int px = spx(L, TITLE_PX);
		while (px > spx(L, 12) && tw(L, GB_FACE_BOLD, px, f->title) > avail)
			px--;
		text(L, GB_FACE_BOLD, px, L->W / 2, L->y0 + 0.93 * px, 0, GB_ANCHOR_MIDDLE, f->title, INK);
		if (L->info) {
			double w = tw(L, GB_FACE_BOLD, px, f->title);
			L->info->title = (gb_rect){ (int)(L->W / 2 - w / 2), (int)L->y0, (int)ceil(w),
			                            (int)ceil(1.17 * px) };
		}
		L->y0 += 1.2 * px + 14 * L->s;
	}
	if (f->caption && *f->caption)
		lines[nl++] = f->caption;
	if (L->n_masked) {
		snprintf(mnote, sizeof mnote, "%d masked (-inf) cell%s, shown in gray", L->n_masked,
		         L->n_masked == 1 ? "" : "s");
		lines[nl++] = mnote;
	}
	if (L->n_bad) {
		const char *where = f->kind == GB_FIG_LINES ? "gaps in the lines" : "shown in magenta";
		int kinds = (L->n_nan > 0) + (L->n_pinf > 0) + (L->n_ninf > 0);
		if (kinds == 1)
			snprintf(note, sizeof note, "%d value%s %s (%s)", L->n_bad, L->n_bad == 1 ? " is" : "s are",
			         L->n_nan ? "NaN" : L->n_pinf ? "inf" : "-inf", where);
		else {
			int k = snprintf(note, sizeof note, "%d values are not finite (%s):", L->n_bad, where);
			const char *sep = " ";
			if (L->n_nan)
				k += snprintf(note + k, sizeof note - (size_t)k, "%s%d NaN", sep, L->n_nan), sep = ", ";
			if (L->n_pinf)
				k += snprintf(note + k, sizeof note - (size_t)k, "%s%d inf", sep, L->n_pinf), sep = ", ";
			if (L->n_ninf)
				snprintf(note + k, sizeof note - (size_t)k, "%s%d -inf", sep, L->n_ninf);
		}
		lines[nl++] = note;
	}
	if (nl) {
		int px = spx(L, CAPTION_PX);
		double lh = 1.4 * px;
		for (int i = 0; i < nl; i++)
			while (px > spx(L, 10) && tw(L, GB_FACE_SANS, px, lines[i]) > avail)
				px--;
		for (int i = 0; i < nl; i++) {
			double y = L->y1 - (nl - 1 - i) * lh - 0.24 * px;
			text(L, GB_FACE_SANS, px, L->W / 2, y, 0, GB_ANCHOR_MIDDLE, lines[i], INK2);
		}
		L->y1 -= nl * lh + 12 * L->s;
	}
}

/* ---- colorbar ---------------------------------------------------------------------------- */

double gb_lay_colorbar_width(lay *L)
{
	char buf[64];
	double t[16], step, m = 0;
	int n = gb_lay_ticks(L->lo, L->hi, 6, t, 16, &step), px = spx(L, TICK_PX);
	for (int i = 0; i < n; i++) {
		gb_lay_tick_label(t[i], step, buf, sizeof buf);
		double w = tw(L, GB_FACE_SANS, px, buf);
		m = w > m ? w : m;
	}
	return (CB_GAP + CB_W + TICK_LEN + 5) * L->s + m;
}

void gb_lay_colorbar(lay *L, double x, double y, double h)
{
	double w = CB_W * L->s, t[16], step, lw = fmax(1, round(L->s));
	int px = spx(L, TICK_PX), n;
	char buf[64];
	group(L, "colorbar", 1);
	L->p->ramp(L->p->ctx, x, y, w, h, L->f->cmap);
	rect(L, x - lw, y - lw, w + 2 * lw, lw, AXIS);
	rect(L, x - lw, y + h, w + 2 * lw, lw, AXIS);
	rect(L, x - lw, y, lw, h, AXIS);
	rect(L, x + w, y, lw, h, AXIS);
	n = gb_lay_ticks(L->lo, L->hi, h > 300 * L->s ? 6 : 4, t, 16, &step);
	for (int i = 0; i < n; i++) {
		double ty = y + h - to_t(L, t[i]) * h;
		rect(L, x + w, ty - lw / 2, TICK_LEN * L->s, lw, AXIS);
		gb_lay_tick_label(t[i], step, buf, sizeof buf);
		text(L, GB_FACE_SANS, px, x + w + (TICK_LEN + 4) * L->s, mid_baseline(ty, px), 0,
		     GB_ANCHOR_START, buf, INK);
	}
	group(L, "colorbar", 0);
	if (L->info)
		L->info->colorbar = (gb_rect){ (int)floor(x + 0.5), (int)floor(y + 0.5),
		                               (int)floor(x + w + 0.5) - (int)floor(x + 0.5),
		                               (int)floor(y + h + 0.5) - (int)floor(y + 0.5) };
}

/* ---- heatmaps and grids of them ------------------------------------------------------------- */
/* ---- the colour of a value, the outline of cells ----------------------------------------- */

/* The colour of value v of figure m (the figure drawn, or one of its panels). */
void gb_lay_cell_colour(const lay *L, const gb_figure *m, float v, uint8_t rgb[3])
{
	if (gb_fig_is_masked(L->f, m, v))
		memcpy(rgb, gb_mask_rgb, 3);
	else if (!isfinite(v))
		memcpy(rgb, gb_bad_rgb, 3);
	else
		gb_cmap_rgb(L->f->cmap, to_t(L, v), rgb);
}

/* A thin gray frame just outside a heatmap's cells (x, y, w, h): 1 px at scale 1, scaled with
 * it, so no cell is covered and a light cell at the edge still ends somewhere. */
void gb_lay_outline(lay *L, int x, int y, int w, int h)
{
	double lw = fmax(1, round(L->s));
	group(L, "outline", 1);
	rect(L, x - lw, y - lw, w + 2 * lw, lw, OUTLINE);
	rect(L, x - lw, y + h, w + 2 * lw, lw, OUTLINE);
	rect(L, x - lw, y, lw, h, OUTLINE);
	rect(L, x + w, y, lw, h, OUTLINE);
	group(L, "outline", 0);
}

/* Longest printed number of a matrix, in characters. */
/* ---- entry points ---------------------------------------------------------------------------- */

int gb_layout_draw(const gb_figure *f, double w, double h, double scale, gb_painter *p,
                   gb_raster_info *info, gb_verr *err)
{
	lay L = { 0 };
	int rc;
	if (!f)
		return gb_vfail(err, "no figure to draw");
	if (!(scale > 0))
		scale = 1;
	L.f = f;
	L.p = p;
	L.W = w;
	L.H = h;
	L.s = scale;
	L.info = info;
	if (info)
		memset(info, 0, sizeof *info);
	if (f->kind == GB_FIG_LINES) {
		L.lo = 0;
		L.hi = 1;
	} else
		gb_fig_range(f, &L.lo, &L.hi, &L.n_bad);
	{
		gb_fig_counts k;
		gb_fig_count(f, &k);
		L.n_nan = k.nan;
		L.n_pinf = k.pinf;
		L.n_ninf = k.ninf;
		L.n_masked = k.masked;
	}
	L.n_bad = L.n_nan + L.n_pinf + L.n_ninf;
	if (info) {
		info->n_bad = L.n_bad;
		info->n_masked = L.n_masked;
	}
	rect(&L, 0, 0, w, h, WHITE);
	frame(&L);
	switch (f->kind) {
	case GB_FIG_HEATMAP: rc = gb_lay_draw_heatmap(&L, err); break;
	case GB_FIG_GRID: rc = gb_lay_draw_grid(&L, err); break;
	case GB_FIG_BARS: rc = gb_lay_draw_bars(&L, err); break;
	case GB_FIG_LINES: rc = gb_lay_draw_lines(&L, err); break;
	case GB_FIG_STRIP: rc = gb_lay_draw_strip(&L, err); break;
	case GB_FIG_ATTNLINES: rc = gb_lay_draw_attnlines(&L, err); break;
	default: rc = gb_vfail(err, "unknown figure kind %d", f->kind);
	}
	if (!rc && p->failed)
		rc = gb_vfail(err, "out of memory drawing the figure");
	return rc;
}
