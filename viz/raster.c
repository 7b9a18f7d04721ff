/* raster.c — owns the canvas, the raster painter (pixels, anti-aliased text and lines) and the
 * layout of every figure kind, written once against gb_painter so svg.c draws the same picture.
 *
 * Layout units are output pixels; every size below is a base size times the scale, so a figure
 * at --scale 2 is the same picture with twice the pixels. The layout measures text through the
 * painter (FreeType metrics here and in SVG), so labels are placed where they really end. */
#include "viz/raster.h"
#include "viz/colormap.h"
#include "viz/font.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Base sizes (pixels at scale 1) */
#define MARGIN      28
#define TITLE_PX    28
#define CAPTION_PX  18
#define LABEL_PX    16
#define LABEL_BIG   20   /* labels beside cells of 60 px and more */
#define LABEL_MIN   10   /* below this, labels are thinned (every k-th) rather than shrunk */
#define TICK_PX     14
#define AXIS_PX     18
#define PANEL_PX    16
#define NUMBER_MIN  9    /* smallest readable number inside a cell */
#define CB_GAP      28   /* plot to colorbar */
#define CB_W        22
#define TICK_LEN    6
#define LABEL_COLS  16   /* longest token label, in terminal columns, before an ellipsis */
#define LABEL_BUF   128

static const uint8_t INK[3] = { 0x22, 0x22, 0x22 };
static const uint8_t INK2[3] = { 0x55, 0x55, 0x55 };
static const uint8_t AXIS[3] = { 0x44, 0x44, 0x44 };
static const uint8_t GRID[3] = { 0xE2, 0xE2, 0xE2 };
static const uint8_t ZERO[3] = { 0x99, 0x99, 0x99 };
/* The outline around a heatmap's cells, so cells near the colormap's light end (viridis'
 * yellow, gray's white) do not melt into the page; lighter than the axes, darker than GRID. */
static const uint8_t OUTLINE[3] = { 0x99, 0x99, 0x99 };
static const uint8_t BLACK[3] = { 0, 0, 0 };
static const uint8_t WHITE[3] = { 0xFF, 0xFF, 0xFF };
static const uint8_t BAR_POS[3] = { 0x44, 0x77, 0xAA };
static const uint8_t BAR_NEG[3] = { 0xEE, 0x66, 0x77 };

/* Series colours: Paul Tol's "bright" then "muted" qualitative schemes, chosen to stay apart
 * for colour-blind readers and on a projector; they repeat after 14 series. */
static const uint8_t SERIES[][3] = {
	{ 0x44, 0x77, 0xAA }, { 0xEE, 0x66, 0x77 }, { 0x22, 0x88, 0x33 }, { 0xCC, 0xBB, 0x44 },
	{ 0x66, 0xCC, 0xEE }, { 0xAA, 0x33, 0x77 }, { 0x33, 0x22, 0x88 }, { 0x88, 0x22, 0x55 },
	{ 0x44, 0xAA, 0x99 }, { 0x99, 0x99, 0x33 }, { 0x88, 0xCC, 0xEE }, { 0xCC, 0x66, 0x77 },
	{ 0x11, 0x77, 0x33 }, { 0x77, 0x77, 0x77 },
};
#define N_SERIES_COLOURS (int)(sizeof SERIES / sizeof *SERIES)

/* ---- canvas ------------------------------------------------------------------------------ */

int gb_canvas_init(gb_canvas *c, int w, int h, gb_verr *err)
{
	c->w = c->h = 0;
	c->rgba = NULL;
	if (w <= 0 || h <= 0 || w > 32768 || h > 32768)
		return gb_vfail(err, "canvas size %d x %d is out of range (1 .. 32768)", w, h);
	c->rgba = malloc((size_t)w * h * 4);
	if (!c->rgba)
		return gb_vfail(err, "out of memory for a %d x %d canvas", w, h);
	memset(c->rgba, 0xFF, (size_t)w * h * 4);
	c->w = w;
	c->h = h;
	return 0;
}

void gb_canvas_free(gb_canvas *c)
{
	if (!c)
		return;
	free(c->rgba);
	c->rgba = NULL;
	c->w = c->h = 0;
}

void gb_canvas_fill(gb_canvas *c, int x, int y, int w, int h, const uint8_t rgb[3])
{
	int x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
	int x1 = x + w > c->w ? c->w : x + w, y1 = y + h > c->h ? c->h : y + h;
	uint32_t px;
	uint8_t b[4] = { rgb[0], rgb[1], rgb[2], 255 };
	if (x0 >= x1 || y0 >= y1)
		return;
	memcpy(&px, b, 4);
	for (int yy = y0; yy < y1; yy++) {
		uint32_t *row = (uint32_t *)(void *)(c->rgba + ((size_t)yy * c->w + x0) * 4);
		for (int xx = 0; xx < x1 - x0; xx++)
			row[xx] = px;
	}
}

static void blend(gb_canvas *c, int x, int y, const uint8_t rgb[3], double cov)
{
	uint8_t *d;
	unsigned a;
	if (x < 0 || y < 0 || x >= c->w || y >= c->h || cov <= 0)
		return;
	a = cov >= 1 ? 255 : (unsigned)(cov * 255 + 0.5);
	d = c->rgba + ((size_t)y * c->w + x) * 4;
	for (int k = 0; k < 3; k++)
		d[k] = (uint8_t)((rgb[k] * a + d[k] * (255 - a) + 127) / 255);
}

/* ---- the raster painter --------------------------------------------------------------------- */

typedef struct rctx {
	gb_canvas *c;
	gb_font *font[GB_FACE_N];
} rctx;

static double r_text_width(void *ctx, int face, int px, const char *s)
{
	return gb_font_width(((rctx *)ctx)->font[face], px, s);
}

/* Edges rounded the same way for every rect, so adjacent cells tile without gaps or overlap. */
static void r_rect(void *ctx, double x, double y, double w, double h, const uint8_t rgb[3])
{
	rctx *r = ctx;
	int x0 = (int)floor(x + 0.5), y0 = (int)floor(y + 0.5);
	int x1 = (int)floor(x + w + 0.5), y1 = (int)floor(y + h + 0.5);
	gb_canvas_fill(r->c, x0, y0, x1 - x0, y1 - y0, rgb);
}

static void r_text(void *ctx, int face, int px, double x, double y, double angle, int anchor,
                   const char *s, const uint8_t rgb[3])
{
	rctx *r = ctx;
	double a = angle * M_PI / 180.0, w;
	if (anchor != GB_ANCHOR_START) {
		w = gb_font_width(r->font[face], px, s) * (anchor == GB_ANCHOR_MIDDLE ? 0.5 : 1.0);
		x -= w * cos(a);
		y += w * sin(a);
	}
	gb_font_draw(r->font[face], r->c, s, x, y, px, angle, rgb);
}

/* Distance from p to segment ab. */
static double seg_dist(double px, double py, double ax, double ay, double bx, double by)
{
	double dx = bx - ax, dy = by - ay, l2 = dx * dx + dy * dy, t = 0;
	if (l2 > 0) {
		t = ((px - ax) * dx + (py - ay) * dy) / l2;
		t = t < 0 ? 0 : t > 1 ? 1 : t;
	}
	dx = ax + t * dx - px;
	dy = ay + t * dy - py;
	return sqrt(dx * dx + dy * dy);
}

/* Anti-aliased by coverage = how far inside the half-width a pixel centre is. A pixel nearer to
 * a neighbouring segment is left to that segment, so joints are not blended twice (which would
 * show as dark beads along the line). */
static void r_polyline(void *ctx, const double *xy, int n, double width, const uint8_t rgb[3])
{
	rctx *r = ctx;
	double hw = width / 2;
	if (n == 1) {
		for (int y = (int)floor(xy[1] - hw - 1); y <= (int)ceil(xy[1] + hw + 1); y++)
			for (int x = (int)floor(xy[0] - hw - 1); x <= (int)ceil(xy[0] + hw + 1); x++)
				blend(r->c, x, y, rgb, hw + 0.5 - hypot(x + 0.5 - xy[0], y + 0.5 - xy[1]));
		return;
	}
	for (int i = 0; i + 1 < n; i++) {
		double ax = xy[2 * i], ay = xy[2 * i + 1], bx = xy[2 * i + 2], by = xy[2 * i + 3];
		int xa = (int)floor(fmin(ax, bx) - hw - 1), xb = (int)ceil(fmax(ax, bx) + hw + 1);
		int ya = (int)floor(fmin(ay, by) - hw - 1), yb = (int)ceil(fmax(ay, by) + hw + 1);
		if (xa < 0) xa = 0;
		if (ya < 0) ya = 0;
		if (xb >= r->c->w) xb = r->c->w - 1;
		if (yb >= r->c->h) yb = r->c->h - 1;
		for (int y = ya; y <= yb; y++)
			for (int x = xa; x <= xb; x++) {
				double px = x + 0.5, py = y + 0.5, d = seg_dist(px, py, ax, ay, bx, by);
				if (d > hw + 0.5)
					continue;
				if (i > 0 && seg_dist(px, py, xy[2 * i - 2], xy[2 * i - 1], ax, ay) < d)
					continue;
				if (i + 2 < n && seg_dist(px, py, bx, by, xy[2 * i + 4], xy[2 * i + 5]) <= d)
					continue;
				blend(r->c, x, y, rgb, hw + 0.5 - d);
			}
	}
}

static void r_ramp(void *ctx, double x, double y, double w, double h, int cmap)
{
	rctx *r = ctx;
	int x0 = (int)floor(x + 0.5), y0 = (int)floor(y + 0.5);
	int x1 = (int)floor(x + w + 0.5), y1 = (int)floor(y + h + 0.5);
	for (int yy = y0; yy < y1; yy++) {
		uint8_t rgb[3];
		gb_cmap_rgb(cmap, 1.0 - (yy - y0 + 0.5) / (y1 - y0), rgb);
		gb_canvas_fill(r->c, x0, yy, x1 - x0, 1, rgb);
	}
}

/* ---- layout helpers ------------------------------------------------------------------------ */

typedef struct lay {
	const gb_figure *f;
	gb_painter *p;
	double W, H, s;
	double x0, y0, x1, y1;    /* the content box left after margins, title and caption */
	float lo, hi;             /* colour range */
	int n_bad, n_nan, n_pinf, n_ninf;
	int n_masked;             /* -inf of a masked figure: by design, not counted as bad */
	gb_raster_info *info;
} lay;

static int spx(const lay *L, double base)
{
	int v = (int)lround(base * L->s);
	return v < 1 ? 1 : v;
}

static double tw(lay *L, int face, int px, const char *s)
{
	return L->p->text_width(L->p->ctx, face, px, s);
}

static void text(lay *L, int face, int px, double x, double y, double angle, int anchor,
                 const char *s, const uint8_t rgb[3])
{
	L->p->text(L->p->ctx, face, px, x, y, angle, anchor, s, rgb);
}

static void rect(lay *L, double x, double y, double w, double h, const uint8_t rgb[3])
{
	L->p->rect(L->p->ctx, x, y, w, h, rgb);
}

static void group(lay *L, const char *name, int begin)
{
	if (L->p->group)
		L->p->group(L->p->ctx, name, begin);
}

/* Baseline that centres a line of text of size px on y (DejaVu's cap height is 0.73 em; a
 * little below half of it looks centred for mixed lowercase). */
static double mid_baseline(double y, int px)
{
	return y + 0.35 * px;
}

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

static void tick_label(double v, double step, char *out, int cap)
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
static int ticks(double lo, double hi, int want, double *t, int max, double *step_out)
{
	double step = nice_step(hi - lo, want), first = ceil(lo / step - 1e-9) * step;
	int n = 0;
	for (double v = first; v <= hi + step * 1e-9 && n < max; v = first + n * step)
		t[n++] = v;
	*step_out = step;
	return n;
}

/* Display labels for n tokens: shortened, spaces and control bytes made visible. */
static char *display_labels(char *const *labels, int n, int max_cols)
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

static double max_width(lay *L, int face, int px, const char *labels, int n, int stride)
{
	double m = 0;
	for (int i = 0; labels && i < n; i += stride) {
		double w = tw(L, face, px, labels + (size_t)i * LABEL_BUF);
		m = w > m ? w : m;
	}
	return m;
}

static double to_t(const lay *L, double v)
{
	return (v - L->lo) / ((double)L->hi - L->lo);
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

static double colorbar_width(lay *L)
{
	char buf[64];
	double t[16], step, m = 0;
	int n = ticks(L->lo, L->hi, 6, t, 16, &step), px = spx(L, TICK_PX);
	for (int i = 0; i < n; i++) {
		tick_label(t[i], step, buf, sizeof buf);
		double w = tw(L, GB_FACE_SANS, px, buf);
		m = w > m ? w : m;
	}
	return (CB_GAP + CB_W + TICK_LEN + 5) * L->s + m;
}

static void colorbar(lay *L, double x, double y, double h)
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
	n = ticks(L->lo, L->hi, h > 300 * L->s ? 6 : 4, t, 16, &step);
	for (int i = 0; i < n; i++) {
		double ty = y + h - to_t(L, t[i]) * h;
		rect(L, x + w, ty - lw / 2, TICK_LEN * L->s, lw, AXIS);
		tick_label(t[i], step, buf, sizeof buf);
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

/* The colour of value v of figure m (the figure drawn, or one of its panels). */
static void cell_colour(const lay *L, const gb_figure *m, float v, uint8_t rgb[3])
{
	if (gb_fig_is_masked(L->f, m, v))
		memcpy(rgb, gb_mask_rgb, 3);
	else if (!isfinite(v))
		memcpy(rgb, gb_bad_rgb, 3);
	else
		gb_cmap_rgb(L->f->cmap, to_t(L, v), rgb);
}

/* The cells of one matrix at (x, y) size (pw, ph), with numbers at npx (0: none). */
static void draw_cells(lay *L, const gb_figure *m, int x, int y, int pw, int ph, int npx,
                       int precision)
{
	group(L, "cells", 1);
	for (int r = 0; r < m->rows; r++) {
		int ya = y + (int)((long)r * ph / m->rows), yb = y + (int)((long)(r + 1) * ph / m->rows);
		for (int c = 0; c < m->cols; c++) {
			int xa = x + (int)((long)c * pw / m->cols), xb = x + (int)((long)(c + 1) * pw / m->cols);
			uint8_t rgb[3];
			cell_colour(L, m, m->values[(size_t)r * m->cols + c], rgb);
			rect(L, xa, ya, xb - xa, yb - ya, rgb);
		}
	}
	group(L, "cells", 0);
	if (!npx)
		return;
	group(L, "numbers", 1);
	for (int r = 0; r < m->rows; r++) {
		double yc = y + ((double)r + 0.5) * ph / m->rows;
		for (int c = 0; c < m->cols; c++) {
			float v = m->values[(size_t)r * m->cols + c];
			double xc = x + ((double)c + 0.5) * pw / m->cols;
			uint8_t rgb[3];
			char buf[48];
			cell_colour(L, m, v, rgb);
			gb_format_value(v, precision, buf, sizeof buf);
			/* L* 55 is where black and white text are about equally legible */
			text(L, GB_FACE_MONO, npx, xc, mid_baseline(yc, npx) - 0.02 * npx, 0,
			     GB_ANCHOR_MIDDLE, buf, gb_lightness(rgb) > 55 ? BLACK : WHITE);
		}
	}
	group(L, "numbers", 0);
}

/* A thin gray frame just outside a heatmap's cells (x, y, w, h): 1 px at scale 1, scaled with
 * it, so no cell is covered and a light cell at the edge still ends somewhere. */
static void outline(lay *L, int x, int y, int w, int h)
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
static int number_chars(const gb_figure *m, int precision)
{
	int n = 1;
	char buf[48];
	for (size_t i = 0; i < (size_t)m->rows * m->cols; i++) {
		int k;
		gb_format_value(m->values[i], precision, buf, sizeof buf);
		k = (int)strlen(buf);
		n = k > n ? k : n;
	}
	return n;
}

typedef struct block {
	const gb_figure *const *panels;
	int n, gc, gr;            /* panels, grid columns and rows */
	int rows, cols;           /* the largest panel's shape: every slot is this big */
	int titles;               /* panels have titles above them */
} block;

static int draw_block(lay *L, const block *B, gb_verr *err)
{
	const gb_figure *f = L->f, *p0 = B->panels[0];
	const int grid = f->kind == GB_FIG_GRID;
	char *rl = display_labels(p0->row_labels, p0->rows, LABEL_COLS);
	char *cl = display_labels(p0->col_labels, p0->cols, LABEL_COLS);
	double s = L->s, cb_w = f->colorbar ? colorbar_width(L) : 0;
	double rt_w = p0->row_title ? 1.6 * AXIS_PX * s : 0, ct_h = p0->col_title ? 1.7 * AXIS_PX * s : 0;
	double pt_h = B->titles ? 1.5 * PANEL_PX * s : 0, gapx = grid ? 20 * s : 0, gapy = grid ? 14 * s : 0;
	double cell = 1, rlw = 0, clw = 0, clh = 0, left = 0;
	int lpx = spx(L, LABEL_PX), stride = 1, cstride = 1, angled = 0, show_labels = 1, npx = 0;
	int cw, pw, ph;
	double bw, bh, bx, by;

	if ((p0->row_labels && !rl) || (p0->col_labels && !cl)) {
		free(rl);
		free(cl);
		return gb_vfail(err, "out of memory laying out a heatmap");
	}
	/* Label size follows cell size, and cell size follows the room labels leave: a few rounds
	 * settle it (each round only shrinks labels or thins them). */
	for (int it = 0; it < 4; it++) {
		double aw, ah;
		rlw = rl && show_labels ? max_width(L, GB_FACE_SANS, lpx, rl, p0->rows, stride) + 10 * s : 0;
		clw = cl && show_labels ? max_width(L, GB_FACE_SANS, lpx, cl, p0->cols, cstride) : 0;
		clh = !cl || !show_labels ? 0 : angled ? clw * M_SQRT1_2 + 1.3 * lpx + 6 * s : 1.4 * lpx + 6 * s;
		left = rt_w + rlw;
		aw = (L->x1 - L->x0) - left - cb_w - (B->gc - 1) * gapx;
		ah = (L->y1 - L->y0) - B->gr * pt_h - (B->gr - 1) * gapy - clh - ct_h;
		cell = fmin(aw / ((double)B->gc * B->cols), ah / ((double)B->gr * B->rows));
		/* an angled first label reaches left of the plot by its length */
		if (angled && clw * M_SQRT1_2 - cell / 2 > left) {
			left = clw * M_SQRT1_2 - cell / 2;
			aw = (L->x1 - L->x0) - left - cb_w - (B->gc - 1) * gapx;
			cell = fmin(aw / ((double)B->gc * B->cols), ah / ((double)B->gr * B->rows));
		}
		cell = fmin(cell, 180 * s);
		if (cell <= 0) {
			free(rl);
			free(cl);
			return gb_vfail(err, "figure too small for a %d x %d heatmap", B->rows, B->cols);
		}
		{
			/* big cells (a 4 x 4 on a slide) take bigger labels */
			int top = cell >= 60 * s ? spx(L, LABEL_BIG) : spx(L, LABEL_PX);
			lpx = (int)floor(cell * 0.72);
			lpx = lpx > top ? top : lpx < spx(L, LABEL_MIN) ? spx(L, LABEL_MIN) : lpx;
		}
		stride = (int)ceil(1.15 * lpx / cell);
		stride = stride < 1 ? 1 : stride;
		/* in a grid, labels on cells smaller than the label font would be noise */
		show_labels = !grid || cell * 1.2 >= spx(L, LABEL_MIN);
		clw = cl && show_labels ? max_width(L, GB_FACE_SANS, lpx, cl, p0->cols, stride) : 0;
		angled = cl && show_labels && clw + 8 * s > cell * stride;
		/* slanted labels stand cell * stride / sqrt(2) apart, measured across their baselines */
		cstride = angled ? (int)ceil(1.15 * lpx / (cell * M_SQRT1_2)) : stride;
		cstride = cstride < stride ? stride : cstride;
	}
	/* The room under the plot for the labels as they are finally drawn: the rounds above sized
	 * the cells for the previous round's slant. Less room (now level) only centres the block
	 * again; more (now slanted) shrinks the cells to fit, or the plot would climb into the
	 * title. */
	{
		double used = clh;
		clw = cl && show_labels ? max_width(L, GB_FACE_SANS, lpx, cl, p0->cols, cstride) : 0;
		clh = !cl || !show_labels ? 0 : angled ? clw * M_SQRT1_2 + 1.3 * lpx + 6 * s : 1.4 * lpx + 6 * s;
		if (clh > used) {
			double ah = (L->y1 - L->y0) - B->gr * pt_h - (B->gr - 1) * gapy - clh - ct_h;
			cell = fmin(cell, ah / ((double)B->gr * B->rows));
			if (cell <= 0) {
				free(rl);
				free(cl);
				return gb_vfail(err, "figure too small for a %d x %d heatmap", B->rows, B->cols);
			}
			stride = (int)ceil(1.15 * lpx / cell);
			stride = stride < 1 ? 1 : stride;
			if (angled) {
				cstride = (int)ceil(1.15 * lpx / (cell * M_SQRT1_2));
				cstride = cstride < stride ? stride : cstride;
			}
		}
	}
	cw = cell >= 2 ? (int)floor(cell) : 0;
	pw = cw ? B->cols * cw : (int)floor(cell * B->cols);
	ph = cw ? B->rows * cw : (int)floor(cell * B->rows);
	if (pw < 1 || ph < 1) {
		free(rl);
		free(cl);
		return gb_vfail(err, "figure too small for a %d x %d heatmap", B->rows, B->cols);
	}
	/* numbers: as large as fits (monospace advance is 0.602 em), none below readable */
	if (f->numbers || (grid && B->n && B->panels[0]->numbers)) {
		int chars = 1;
		for (int i = 0; i < B->n; i++) {
			int k = number_chars(B->panels[i], f->precision);
			chars = k > chars ? k : chars;
		}
		npx = (int)floor(fmin(cell * 0.36, cell * 0.88 / (chars * 0.602)));
		npx = npx > spx(L, 30) ? spx(L, 30) : npx;
		if (npx < spx(L, NUMBER_MIN) || npx < 8)
			npx = 0;
	}
	/* centre the whole block in the content box */
	bw = left + B->gc * (double)pw + (B->gc - 1) * gapx + cb_w;
	bh = B->gr * (pt_h + ph) + (B->gr - 1) * gapy + clh + ct_h;
	bx = floor(L->x0 + ((L->x1 - L->x0) - bw) / 2 + left);
	by = floor(L->y0 + ((L->y1 - L->y0) - bh) / 2 + pt_h);

	for (int i = 0; i < B->n; i++) {
		const gb_figure *m = B->panels[i];
		int gx = i % B->gc, gy = i / B->gc;
		int x = (int)(bx + gx * (pw + gapx)), y = (int)(by + gy * (ph + pt_h + gapy));
		int mpw = cw ? m->cols * cw : pw * m->cols / B->cols;
		int mph = cw ? m->rows * cw : ph * m->rows / B->rows;
		int last_in_column = i + B->gc >= B->n;
		if (B->titles && m->title) {
			int tpx = spx(L, PANEL_PX);
			while (tpx > spx(L, 8) && tw(L, GB_FACE_SANS, tpx, m->title) > pw + gapx * 0.8)
				tpx--;
			text(L, GB_FACE_SANS, tpx, x + pw / 2.0, y - 0.45 * pt_h, 0, GB_ANCHOR_MIDDLE, m->title, INK);
		}
		draw_cells(L, m, x, y, mpw, mph, npx, f->precision);
		outline(L, x, y, mpw, mph);
		if (show_labels && rl && gx == 0) {
			group(L, "row-labels", 1);
			for (int r = 0; r < p0->rows && r < m->rows; r += stride)
				text(L, GB_FACE_SANS, lpx, x - 8 * s, mid_baseline(y + (r + 0.5) * mph / m->rows, lpx),
				     0, GB_ANCHOR_END, rl + (size_t)r * LABEL_BUF, INK);
			group(L, "row-labels", 0);
		}
		if (show_labels && cl && last_in_column) {
			group(L, "col-labels", 1);
			for (int c = 0; c < p0->cols && c < m->cols; c += cstride) {
				double xc = x + (c + 0.5) * mpw / m->cols;
				if (angled)
					/* ends under the column, rising to it; shifted half an x-height so the
					 * slanted text's middle, not its baseline, points at the column */
					text(L, GB_FACE_SANS, lpx, xc + 0.3 * lpx, y + mph + 6 * s + 0.75 * lpx, 45,
					     GB_ANCHOR_END, cl + (size_t)c * LABEL_BUF, INK);
				else
					text(L, GB_FACE_SANS, lpx, xc, y + mph + 6 * s + 0.93 * lpx, 0,
					     GB_ANCHOR_MIDDLE, cl + (size_t)c * LABEL_BUF, INK);
			}
			group(L, "col-labels", 0);
		}
		if (i == 0 && L->info) {
			L->info->plot = (gb_rect){ x, y, mpw, mph };
			L->info->dx = (int)(pw + gapx);
			L->info->dy = (int)(ph + pt_h + gapy);
		}
	}
	{
		double gw = B->gc * (double)pw + (B->gc - 1) * gapx, gh = B->gr * (ph + pt_h) + (B->gr - 1) * gapy - pt_h;
		int apx = spx(L, AXIS_PX);
		if (p0->row_title)
			text(L, GB_FACE_SANS, apx, bx - left + 0.95 * apx, by + gh / 2, 90, GB_ANCHOR_MIDDLE,
			     p0->row_title, INK2);
		if (p0->col_title)
			text(L, GB_FACE_SANS, apx, bx + gw / 2, by + gh + clh + 1.2 * apx, 0, GB_ANCHOR_MIDDLE,
			     p0->col_title, INK2);
		if (f->colorbar) {
			/* a short plot (one row of cells) still gets a readable ramp, inside the content
			 * box so it never reaches into the title or the caption */
			double ch = fmin(fmax(gh, 220 * s), L->y1 - L->y0), cy = by + gh / 2 - ch / 2;
			cy = fmax(L->y0, fmin(cy, L->y1 - ch));
			colorbar(L, bx + gw + CB_GAP * s, cy, ch);
		}
	}
	if (L->info) {
		L->info->grid_cols = B->gc;
		L->info->numbers_shown = npx > 0;
		L->info->label_stride = stride;
		L->info->col_label_stride = cstride;
		L->info->angled_labels = angled;
	}
	free(rl);
	free(cl);
	return 0;
}

static int check_matrix(const gb_figure *m, gb_verr *err)
{
	if (!m || m->kind != GB_FIG_HEATMAP)
		return gb_vfail(err, "a grid's panels must be heatmaps");
	if (!m->values || m->rows <= 0 || m->cols <= 0)
		return gb_vfail(err, "heatmap%s%s has no values", m->title ? " " : "", m->title ? m->title : "");
	return 0;
}

static int draw_heatmap(lay *L, gb_verr *err)
{
	block B = { 0 };
	const gb_figure *one[1] = { L->f };
	if (check_matrix(L->f, err))
		return -1;
	B.panels = one;
	B.n = B.gc = B.gr = 1;
	B.rows = L->f->rows;
	B.cols = L->f->cols;
	return draw_block(L, &B, err);
}

static int draw_grid(lay *L, gb_verr *err)
{
	const gb_figure *f = L->f;
	block B = { 0 };
	if (f->n_panels <= 0 || !f->panels)
		return gb_vfail(err, "grid figure has no panels");
	for (int i = 0; i < f->n_panels; i++) {
		if (check_matrix(f->panels[i], err))
			return -1;
		B.rows = f->panels[i]->rows > B.rows ? f->panels[i]->rows : B.rows;
		B.cols = f->panels[i]->cols > B.cols ? f->panels[i]->cols : B.cols;
		B.titles |= f->panels[i]->title != NULL;
	}
	B.panels = (const gb_figure *const *)f->panels;
	B.n = f->n_panels;
	B.gc = f->grid_cols > 0 ? f->grid_cols : (int)ceil(sqrt((double)B.n));
	B.gc = B.gc > B.n ? B.n : B.gc;
	B.gr = (B.n + B.gc - 1) / B.gc;
	return draw_block(L, &B, err);
}

/* ---- bars ------------------------------------------------------------------------------------ */

static int draw_bars(lay *L, gb_verr *err)
{
	const gb_figure *f = L->f;
	int n = f->rows * f->cols;
	char *const *labels = f->cols == n ? f->col_labels : f->row_labels;
	char *dl, vbuf[48];
	double s = L->s, lo = 0, hi = 0, slot, lw, vw = 0, x, y, pw, ph, zx, t[16], step;
	int lpx = spx(L, LABEL_PX), vpx, stride = 1, nt, tpx = spx(L, TICK_PX);
	const char *axis_title = f->x_title ? f->x_title : f->col_title;
	if (!f->values || n <= 0)
		return gb_vfail(err, "bar chart has no values");
	dl = display_labels(labels, n, 24);
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
		slot = fmin(((L->y1 - L->y0) - axis_h) / n, 60 * s);
		if (slot <= 0) {
			free(dl);
			return gb_vfail(err, "figure too small for %d bars", n);
		}
	}
	lpx = (int)fmin(slot >= 56 * s ? spx(L, LABEL_BIG) : lpx, floor(slot * 0.6));
	lpx = lpx < spx(L, LABEL_MIN) ? spx(L, LABEL_MIN) : lpx;
	stride = (int)ceil(1.15 * lpx / slot);
	stride = stride < 1 ? 1 : stride;
	vpx = lpx;
	for (int i = 0; i < n; i += stride) {
		gb_format_value(f->values[i], f->precision, vbuf, sizeof vbuf);
		vw = fmax(vw, tw(L, GB_FACE_MONO, vpx, vbuf));
	}
	vw += 10 * s;
	lw = dl ? max_width(L, GB_FACE_SANS, lpx, dl, n, stride) + 12 * s : 0;
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
	nt = ticks(lo, hi, (int)fmax(2, fmin(8, pw / (110 * s))), t, 16, &step);
	group(L, "axis", 1);
	for (int i = 0; i < nt; i++) {
		double tx = x + (t[i] - lo) / (hi - lo) * pw;
		char buf[48];
		rect(L, tx - 0.5 * s, y, fmax(1, s), ph, GRID);
		tick_label(t[i], step, buf, sizeof buf);
		rect(L, tx - 0.5 * s, y + ph, fmax(1, s), TICK_LEN * s, AXIS);
		text(L, GB_FACE_SANS, tpx, tx, y + ph + TICK_LEN * s + 1.05 * tpx, 0, GB_ANCHOR_MIDDLE, buf, INK);
	}
	rect(L, x, y + ph, pw, fmax(1, s), AXIS);
	if (axis_title)
		text(L, GB_FACE_SANS, spx(L, AXIS_PX), x + pw / 2, y + ph + TICK_LEN * s + 1.6 * tpx + 1.3 * AXIS_PX * s,
		     0, GB_ANCHOR_MIDDLE, axis_title, INK2);
	group(L, "axis", 0);
	group(L, "bars", 1);
	for (int i = 0; i < n; i++) {
		float v = f->values[i];
		double yc = y + (i + 0.5) * slot, bh = fmax(1, slot * 0.72);
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
	}
	free(dl);
	return 0;
}

/* ---- lines ----------------------------------------------------------------------------------- */

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

static int draw_lines(lay *L, gb_verr *err)
{
	const gb_figure *f = L->f;
	double s = L->s, xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
	double xt[16], yt[16], xstep, ystep, x, y, pw, ph, legend_w = 0, lw, ylw = 0;
	int nmax = 0, nxt, nyt, tpx = spx(L, TICK_PX), apx = spx(L, AXIS_PX), lgpx = spx(L, 15);
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

	/* legend on the right, outside the data, as many entries as fit */
	legend_n = f->n_series;
	if (f->n_series > 1 || (f->series[0].label && *f->series[0].label)) {
		for (int k = 0; k < f->n_series; k++) {
			char lab[LABEL_BUF];
			legend_text(f, k, lab);
			legend_w = fmax(legend_w, tw(L, GB_FACE_SANS, lgpx, lab));
		}
		legend_w = fmin(legend_w, 260 * s) + 58 * s;
	} else
		legend_n = 0;
	nyt = ticks(ylo, yhi, 6, yt, 16, &ystep);
	for (int i = 0; i < nyt; i++) {
		tick_label(yt[i], ystep, buf, sizeof buf);
		ylw = fmax(ylw, tw(L, GB_FACE_SANS, tpx, buf));
	}
	x = L->x0 + (f->y_title ? 1.6 * apx : 0) + ylw + (TICK_LEN + 6) * s;
	pw = L->x1 - x - legend_w - 12 * s;
	y = L->y0 + 0.6 * tpx;
	ph = L->y1 - y - (TICK_LEN * s + 1.6 * tpx) - (f->x_title ? 1.7 * apx : 0);
	if (pw < 20 || ph < 20)
		return gb_vfail(err, "figure too small for the line plot");
	nxt = ticks(xlo, xhi, (int)fmax(2, fmin(10, pw / (100 * s))), xt, 16, &xstep);
	lw = fmax(1, round(s));
	group(L, "axes", 1);
	for (int i = 0; i < nyt; i++) {
		double ty = y + ph - (yt[i] - ylo) / (yhi - ylo) * ph;
		rect(L, x, ty - lw / 2, pw, lw, GRID);
		rect(L, x - TICK_LEN * s, ty - lw / 2, TICK_LEN * s, lw, AXIS);
		tick_label(yt[i], ystep, buf, sizeof buf);
		text(L, GB_FACE_SANS, tpx, x - (TICK_LEN + 4) * s, mid_baseline(ty, tpx), 0, GB_ANCHOR_END, buf, INK);
	}
	for (int i = 0; i < nxt; i++) {
		double tx = x + (xt[i] - xlo) / (xhi - xlo) * pw;
		rect(L, tx - lw / 2, y, lw, ph, GRID);
		rect(L, tx - lw / 2, y + ph, lw, TICK_LEN * s, AXIS);
		tick_label(xt[i], xstep, buf, sizeof buf);
		text(L, GB_FACE_SANS, tpx, tx, y + ph + TICK_LEN * s + 1.05 * tpx, 0, GB_ANCHOR_MIDDLE, buf, INK);
	}
	if (ylo < 0 && yhi > 0)
		rect(L, x, y + ph - (0 - ylo) / (yhi - ylo) * ph - lw / 2, pw, lw, ZERO);
	rect(L, x - lw, y, lw, ph + lw, AXIS);
	rect(L, x - lw, y + ph, pw + lw, lw, AXIS);
	if (f->y_title)
		text(L, GB_FACE_SANS, apx, L->x0 + 1.0 * apx, y + ph / 2, 90, GB_ANCHOR_MIDDLE, f->y_title, INK2);
	if (f->x_title)
		text(L, GB_FACE_SANS, apx, x + pw / 2, y + ph + TICK_LEN * s + 1.6 * tpx + 1.3 * apx, 0,
		     GB_ANCHOR_MIDDLE, f->x_title, INK2);
	group(L, "axes", 0);

	pts = malloc(sizeof *pts * 2 * (size_t)(2 * nmax + 2));
	if (!pts)
		return gb_vfail(err, "out of memory drawing lines");
	group(L, "series", 1);
	for (int k = 0; k < f->n_series; k++) {
		const gb_series *sr = &f->series[k];
		const uint8_t *col = SERIES[k % N_SERIES_COLOURS];
		int np = 0, n = points(f, sr);
		double lwid = 2.5 * s;
		/* Breaks at NaN and where a segment leaves the box; a run is sent as one polyline. */
		for (int i = 0; i + 1 < n || (n == 1 && i == 0); i++) {
			double ax, ay, bx, by;
			double xa = f->xs ? f->xs[i] : i, xb = n == 1 ? xa : f->xs ? f->xs[i + 1] : i + 1;
			float ya = sr->y[i], yb = n == 1 ? ya : sr->y[i + 1];
			if (!isfinite(ya) || !isfinite(yb) || !isfinite(xa) || !isfinite(xb)) {
				if (np)
					L->p->polyline(L->p->ctx, pts, np, lwid, col);
				np = 0;
				continue;
			}
			ax = x + (xa - xlo) / (xhi - xlo) * pw;
			bx = x + (xb - xlo) / (xhi - xlo) * pw;
			ay = y + ph - (ya - ylo) / (yhi - ylo) * ph;
			by = y + ph - (yb - ylo) / (yhi - ylo) * ph;
			if (!clip(&ax, &ay, &bx, &by, x, y, x + pw, y + ph)) {
				if (np)
					L->p->polyline(L->p->ctx, pts, np, lwid, col);
				np = 0;
				continue;
			}
			if (np && (fabs(pts[2 * np - 2] - ax) > 1e-9 || fabs(pts[2 * np - 1] - ay) > 1e-9)) {
				L->p->polyline(L->p->ctx, pts, np, lwid, col);
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
			L->p->polyline(L->p->ctx, pts, np == 2 && n == 1 ? 1 : np, n == 1 ? 3 * lwid : lwid, col);
	}
	group(L, "series", 0);
	free(pts);

	if (legend_n) {
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
			double seg[4] = { lx, cy, lx + 26 * s, cy };
			char lab[LABEL_BUF];
			L->p->polyline(L->p->ctx, seg, 2, 3 * s, SERIES[k % N_SERIES_COLOURS]);
			legend_text(f, k, lab);
			text(L, GB_FACE_SANS, lgpx, lx + 34 * s, mid_baseline(cy, lgpx), 0, GB_ANCHOR_START, lab, INK);
		}
		if (more > 0) {
			snprintf(buf, sizeof buf, "+%d more", more);
			text(L, GB_FACE_SANS, lgpx, lx + 34 * s, mid_baseline(ly + (legend_n + 0.5) * lh, lgpx), 0,
			     GB_ANCHOR_START, buf, INK2);
		}
		group(L, "legend", 0);
	}
	if (L->info)
		L->info->plot = (gb_rect){ (int)x, (int)y, (int)pw, (int)ph };
	return 0;
}

/* ---- token strip ----------------------------------------------------------------------------- */

static int draw_strip(lay *L, gb_verr *err)
{
	const gb_figure *f = L->f;
	int n = f->rows * f->cols;
	char *const *labels = f->cols == n ? f->col_labels : f->row_labels;
	char *dl, vbuf[48];
	double s = L->s, cb_w = f->colorbar ? colorbar_width(L) : 0, aw = L->x1 - L->x0 - cb_w;
	double pad, gap, boxh, rowh, total_h = 0, widest = 0;
	int px = spx(L, 32), vpx = 0, lines = 1;
	if (!f->values || n <= 0)
		return gb_vfail(err, "token strip has no values");
	dl = display_labels(labels, n, LABEL_COLS);
	if (labels && !dl)
		return gb_vfail(err, "out of memory laying out a token strip");
	/* the largest font at which the wrapped strip fits the box */
	for (;; px--) {
		double xx = 0;
		pad = 0.45 * px;
		gap = 0.25 * px;
		vpx = (int)fmax(8, round(0.6 * px));
		boxh = 1.6 * px;
		rowh = boxh + 1.5 * vpx + 0.6 * px;
		lines = 1;
		widest = 0;
		for (int i = 0; i < n; i++) {
			double w = fmax(dl ? tw(L, GB_FACE_SANS, px, dl + (size_t)i * LABEL_BUF) : 0, 1.2 * px) + 2 * pad;
			gb_format_value(f->values[i], f->precision, vbuf, sizeof vbuf);
			w = fmax(w, tw(L, GB_FACE_MONO, vpx, vbuf) + 0.3 * px);
			if (xx > 0 && xx + w > aw) {
				lines++;
				widest = fmax(widest, xx - gap);
				xx = 0;
			}
			xx += w + gap;
		}
		widest = fmax(widest, xx - gap);
		total_h = lines * rowh;
		if (total_h <= L->y1 - L->y0 || px <= spx(L, 8))
			break;
	}
	{
		double x0 = floor(L->x0 + (aw - widest) / 2), y0 = floor(L->y0 + ((L->y1 - L->y0) - total_h) / 2);
		double xx = x0, yy = y0;
		group(L, "tokens", 1);
		for (int i = 0; i < n; i++) {
			const char *lab = dl ? dl + (size_t)i * LABEL_BUF : "";
			double w = fmax(dl ? tw(L, GB_FACE_SANS, px, lab) : 0, 1.2 * px) + 2 * pad;
			uint8_t rgb[3];
			gb_format_value(f->values[i], f->precision, vbuf, sizeof vbuf);
			w = fmax(w, tw(L, GB_FACE_MONO, vpx, vbuf) + 0.3 * px);
			if (xx > x0 && xx + w > x0 + aw + 0.5) {
				xx = x0;
				yy += rowh;
			}
			cell_colour(L, f, f->values[i], rgb);
			rect(L, xx, yy, w, boxh, rgb);
			/* a light box stays visible on the page */
			outline(L, (int)floor(xx + 0.5), (int)floor(yy + 0.5), (int)(floor(xx + w + 0.5) - floor(xx + 0.5)),
			        (int)(floor(yy + boxh + 0.5) - floor(yy + 0.5)));
			text(L, GB_FACE_SANS, px, xx + w / 2, mid_baseline(yy + boxh / 2, px), 0, GB_ANCHOR_MIDDLE, lab,
			     gb_lightness(rgb) > 55 ? BLACK : WHITE);
			text(L, GB_FACE_MONO, vpx, xx + w / 2, yy + boxh + 1.15 * vpx, 0, GB_ANCHOR_MIDDLE, vbuf, INK2);
			if (i == 0 && L->info)
				L->info->plot = (gb_rect){ (int)floor(xx + 0.5), (int)floor(yy + 0.5),
				                           (int)floor(xx + w + 0.5) - (int)floor(xx + 0.5),
				                           (int)floor(yy + boxh + 0.5) - (int)floor(yy + 0.5) };
			xx += w + gap;
		}
		group(L, "tokens", 0);
		if (f->colorbar) {
			double ch = fmin(L->y1 - L->y0, fmax(total_h, 220 * s));
			double cy = fmax(L->y0, fmin(y0 + total_h / 2 - ch / 2, L->y1 - ch));
			colorbar(L, x0 + widest + CB_GAP * s, cy, ch);
		}
	}
	free(dl);
	return 0;
}

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
	case GB_FIG_HEATMAP: rc = draw_heatmap(&L, err); break;
	case GB_FIG_GRID: rc = draw_grid(&L, err); break;
	case GB_FIG_BARS: rc = draw_bars(&L, err); break;
	case GB_FIG_LINES: rc = draw_lines(&L, err); break;
	case GB_FIG_STRIP: rc = draw_strip(&L, err); break;
	default: rc = gb_vfail(err, "unknown figure kind %d", f->kind);
	}
	if (!rc && p->failed)
		rc = gb_vfail(err, "out of memory drawing the figure");
	return rc;
}

int gb_raster_draw(const gb_figure *f, gb_canvas *c, double scale, gb_raster_info *info, gb_verr *err)
{
	rctx r = { .c = c };
	gb_painter p = { &r, r_text_width, r_rect, r_text, r_polyline, r_ramp, NULL, 0 };
	for (int i = 0; i < GB_FACE_N; i++) {
		r.font[i] = gb_font_face(i, err);
		if (!r.font[i])
			return -1;
	}
	return gb_layout_draw(f, c->w, c->h, scale, &p, info, err);
}

int gb_raster_render(const gb_figure *f, const gb_raster_opts *opts, gb_canvas *out,
                     gb_raster_info *info, gb_verr *err)
{
	double scale = opts && opts->scale > 0 ? opts->scale : 1;
	int w = opts && opts->width > 0 ? opts->width : GB_RASTER_W;
	int h = opts && opts->height > 0 ? opts->height : GB_RASTER_H;
	if (!(scale <= 16))
		return gb_vfail(err, "scale %g is out of range (0 .. 16]", scale);
	if (gb_canvas_init(out, (int)lround(w * scale), (int)lround(h * scale), err))
		return -1;
	if (gb_raster_draw(f, out, scale, info, err)) {
		gb_canvas_free(out);
		return -1;
	}
	return 0;
}
