/* raster_layout.h — internal to the figure layout (raster_layout.c and the kind files
 * raster_heatmap.c, raster_bars.c, raster_lines.c, raster_strip.c): the layout's state, its base
 * sizes and inks, and the pieces the kinds share. Nothing outside those files includes this;
 * users have raster.h (gb_layout_draw, and the raster painter in raster.c).
 *
 * Layout units are output pixels; every size below is a base size times the scale, so a figure
 * at --scale 2 is the same picture with twice the pixels. The layout measures text through the
 * painter (FreeType metrics in PNG and in SVG), so labels are placed where they really end. */
#ifndef GLASSBOX_RASTER_LAYOUT_H
#define GLASSBOX_RASTER_LAYOUT_H

#include <math.h>
#include <stdint.h>

#include "viz/font.h"
#include "viz/raster.h"

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
static const uint8_t BLACK[3] = { 0, 0, 0 };
static const uint8_t WHITE[3] = { 0xFF, 0xFF, 0xFF };

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

static inline int spx(const lay *L, double base)
{
	int v = (int)lround(base * L->s);
	return v < 1 ? 1 : v;
}

static inline double tw(lay *L, int face, int px, const char *s)
{
	return L->p->text_width(L->p->ctx, face, px, s);
}

static inline void text(lay *L, int face, int px, double x, double y, double angle,
                        int anchor, const char *s, const uint8_t rgb[3])
{
	L->p->text(L->p->ctx, face, px, x, y, angle, anchor, s, rgb);
}

static inline void rect(lay *L, double x, double y, double w, double h, const uint8_t rgb[3])
{
	L->p->rect(L->p->ctx, x, y, w, h, rgb);
}

static inline void group(lay *L, const char *name, int begin)
{
	if (L->p->group)
		L->p->group(L->p->ctx, name, begin);
}

/* Baseline that centres a line of text of size px on y (DejaVu's cap height is 0.73 em; a
 * little below half of it looks centred for mixed lowercase). */
static inline double mid_baseline(double y, int px)
{
	return y + 0.35 * px;
}

static inline double to_t(const lay *L, double v)
{
	return (v - L->lo) / ((double)L->hi - L->lo);
}

/* raster_layout.c: ticks, labels, the colorbar, a value's colour, the outline of cells */
void gb_lay_tick_label(double v, double step, char *out, int cap);
int gb_lay_ticks(double lo, double hi, int want, double *t, int max, double *step_out);
char *gb_lay_display_labels(char *const *labels, int n, int max_cols);
double gb_lay_max_width(lay *L, int face, int px, const char *labels, int n, int stride);
double gb_lay_colorbar_width(lay *L);
void gb_lay_colorbar(lay *L, double x, double y, double h);
void gb_lay_cell_colour(const lay *L, const gb_figure *m, float v, uint8_t rgb[3]);
void gb_lay_outline(lay *L, int x, int y, int w, int h);

/* one file each: the layout of a kind in the content box frame() left */
int gb_lay_draw_heatmap(lay *L, gb_verr *err); /* raster_heatmap.c */
int gb_lay_draw_grid(lay *L, gb_verr *err);    /* raster_heatmap.c */
int gb_lay_draw_bars(lay *L, gb_verr *err);    /* raster_bars.c */
int gb_lay_draw_lines(lay *L, gb_verr *err);   /* raster_lines.c */
int gb_lay_draw_strip(lay *L, gb_verr *err);   /* raster_strip.c */
int gb_lay_draw_attnlines(lay *L, gb_verr *err); /* raster_attnlines.c */

#endif
