/* raster.c — owns the canvas and the raster painter (pixels, anti-aliased text and lines, the
 * colormap ramp): gb_painter's primitives in pixels, and the entry points that lay a figure out
 * onto a canvas through it.
 *
 * The layout itself is written once against gb_painter, so svg.c draws the same picture: the
 * parts every kind shares and gb_layout_draw in raster_layout.c, one file per kind
 * (raster_heatmap.c with grids of heatmaps, its labels in raster_axes.c and what goes in and
 * beside its cells in raster_cells.c; raster_bars.c, raster_lines.c, raster_strip.c). */
#include "viz/raster.h"
#include "viz/colormap.h"
#include "viz/font.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

static void r_ramp(void *ctx, double x, double y, double w, double h, int cmap, double t0, double t1)
{
	rctx *r = ctx;
	int x0 = (int)floor(x + 0.5), y0 = (int)floor(y + 0.5);
	int x1 = (int)floor(x + w + 0.5), y1 = (int)floor(y + h + 0.5);
	for (int yy = y0; yy < y1; yy++) {
		uint8_t rgb[3];
		gb_cmap_rgb(cmap, t0 + (t1 - t0) * (1.0 - (yy - y0 + 0.5) / (y1 - y0)), rgb);
		gb_canvas_fill(r->c, x0, yy, x1 - x0, 1, rgb);
	}
}

/* ---- entry points ---------------------------------------------------------------------------- */

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
