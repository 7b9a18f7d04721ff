/* raster_layout.h — internal to the figure layout (raster_layout.c and the kind files
 * raster_heatmap.c with raster_axes.c and raster_cells.c, raster_bars.c, raster_lines.c,
 * raster_strip.c): the layout's state, its base sizes and inks, and the pieces the kinds share. Nothing outside those files includes this;
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

/* Base sizes (pixels at scale 1). A slide is read from the back of a room: no text on a
 * 1600 x 900 figure is smaller than TEXT_MIN (18 px), tick labels, colour-bar labels, numbers
 * in cells and side columns included. Where labels would crowd, they are thinned to ticks at a
 * round step rather than shrunk; where a text is too long it is wrapped, and only then
 * shortened with "…", which the layout counts (gb_raster_info.labels_cut). */
#define MARGIN      28
#define TEXT_MIN    18   /* the smallest text anywhere */
#define TITLE_PX    30
#define TITLE_MIN   22
#define SUBTITLE_PX 22
#define CAPTION_PX  20
#define LABEL_PX    20
#define LABEL_BIG   24   /* labels beside cells of 60 px and more */
#define LABEL_MIN   TEXT_MIN
#define TICK_PX     22
#define AXIS_PX     20
#define PANEL_PX    20
#define NUMBER_MIN  TEXT_MIN /* smallest number (or text) inside a cell */
#define NUMBER_MAX  32
#define LEGEND_PX   20
#define CB_GAP      28   /* plot to colorbar */
#define CB_W        24
#define TICK_LEN    6
#define LABEL_COLS  40   /* longest token label, in terminal columns, before an ellipsis */
#define LABEL_BUF   256
#define LABEL_SHARE 0.28 /* row labels take at most this share of the width (column labels of
                          * the height); a longer label is shortened, and counted */
#define BAR_SHARE   0.40 /* the data fills at least this share of the slide's width and height */
#define BAR_AIM     0.44 /* ... aiming a little higher, so rounding never drops it under */

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
	int min_px;               /* the smallest text drawn so far (0: none) */
	int cut;                  /* texts shortened or left out for lack of room */
	int cell_break;           /* how cell texts may break (CELL_*), as gb_cells_text_px chose */
} lay;

/* A cell text on one line; on two, broken between a letter and a mark; on two, anywhere. */
enum { CELL_ONE_LINE, CELL_AT_MARKS, CELL_ANYWHERE };

static inline int spx(const lay *L, double base)
{
	int v = (int)lround(base * L->s);
	return v < 1 ? 1 : v;
}

static inline double tw(lay *L, int face, int px, const char *s)
{
	return L->p->text_width(L->p->ctx, face, px, s);
}

/* Every text of a figure goes through here, so the smallest size is measured, not assumed. */
static inline void text(lay *L, int face, int px, double x, double y, double angle,
                        int anchor, const char *s, const uint8_t rgb[3])
{
	if (!s || !*s)
		return;
	if (!L->min_px || px < L->min_px)
		L->min_px = px;
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
	return gb_fig_unit(L->f, L->lo, L->hi, v);
}

/* Lines of wrapped text (titles, subtitles, captions). */
#define WRAP_MAX 3
#define WRAP_BUF 512
typedef struct wrapped {
	int n;
	char line[WRAP_MAX][WRAP_BUF];
} wrapped;

/* One axis of a heatmap's labels (raster_axes.c): what each row or column is called, and the
 * plan for drawing them (size, every k-th at round indices, level or turned). */
typedef struct gb_axis {
	int n;                    /* rows or columns */
	char *full;               /* (n, LABEL_BUF) index and token as they read in full; NULL: none */
	char *alt;                /* (n, LABEL_BUF) token labels with their index, for when they
	                           * are thinned; NULL when the figure numbers them itself */
	char *lab;                /* (n, LABEL_BUF) as drawn (shortened to max_w when too long) */
	char *precut;             /* (n) already shortened to LABEL_COLS columns */
	int numeric;              /* index numbers only, no tokens: they pack closer */
	int repeated;             /* the axis repeats under every panel of a grid: upright index
	                           * numbers there are thinned rather than set as a fence */
	int idx0;                 /* the index of label 0: round steps are multiples of the index */
	double max_w;             /* longest a label may be, in pixels, before it is shortened */
	int px, stride, orient;   /* the plan: size, every stride-th, 0 level / 45 / 90 (columns) */
	int shown, cut;           /* labels drawn, and how many of them were shortened */
	int rows;                 /* a row axis (labels stacked), not a column axis */
	int first;                /* thinned, the first label shows too (it fits before the next) */
	int last;                 /* thinned, the last label shows too (a lesson asks about the last
	                           * query) ... */
	int hide;                 /* ... and the round one before it is left out when the two would
	                           * touch (-1: none) */
} gb_axis;

/* raster_layout.c: ticks, labels, the colorbar, a value's colour, the outline of cells */
int gb_lay_shorten(lay *L, int face, int px, const char *s, double max_w, char *out, size_t cap);
void gb_lay_text_fit(lay *L, int face, int px, double x, double y, double angle, int anchor, const char *s,
                     double max_w, const uint8_t rgb[3]);
int gb_lay_fit_lines(lay *L, int face, int hi, int lo, const char *s, double avail, int max,
                     wrapped *w);
void gb_lay_tick_label(double v, double step, char *out, int cap);
int gb_lay_ticks(double lo, double hi, int want, double *t, int max, double *step_out);
/* A value axis along the bottom of the box (x, y, w, h) for lo .. hi: about want ticks, a
 * light grid line up through the box at each, its mark and label (text tpx) under the box, and
 * the axis line itself. */
void gb_lay_value_axis(lay *L, double x, double y, double w, double h, double lo, double hi, int want, int tpx);
int gb_lay_label_cut(const char *label, int max_cols);
char *gb_lay_display_labels(lay *L, char *const *labels, int n, int max_cols);
double gb_lay_max_width(lay *L, int face, int px, const char *labels, int n, int stride);
double gb_lay_colorbar_width(lay *L);
void gb_lay_colorbar(lay *L, double x, double y, double h);
void gb_lay_cell_colour(const lay *L, const gb_figure *m, float v, uint8_t rgb[3]);
void gb_lay_outline(lay *L, int x, int y, int w, int h);

/* raster_axes.c: a heatmap's row and column labels */
int gb_axis_make(lay *L, gb_axis *a, char *const *labels, int n, int index0);
void gb_axis_free(gb_axis *a);
int gb_axis_shows(const gb_axis *a, int i);
/* Thinned labels: whether the last shows too, at this pitch (sets last and hide). */
void gb_axis_last(lay *L, gb_axis *a, double pitch);
void gb_axis_plan_rows(lay *L, gb_axis *a, double pitch);
void gb_axis_plan_cols(lay *L, gb_axis *a, double pitch);
double gb_axis_rows_width(lay *L, gb_axis *a);
double gb_axis_cols_height(lay *L, gb_axis *a);
double gb_axis_cols_overhang(lay *L, gb_axis *a, double pitch);
void gb_axis_thin_to_fit(lay *L, gb_axis *a, double pitch);
void gb_axis_finish(lay *L, gb_axis *a);
void gb_axis_draw_rows(lay *L, const gb_axis *a, double x, double y, double pitch, int n);
void gb_axis_draw_cols(lay *L, const gb_axis *a, double x, double y, double pitch, int n);

/* raster_cells.c: what goes inside a heatmap's cells (colours, numbers, short texts) and the
 * side columns beside its rows */
int gb_cells_want_numbers(const gb_figure *const *panels, int n, int numbers);
int gb_cells_numbers_n(const gb_figure *const *panels, int n, int numbers);
int gb_cells_numbers_px(lay *L, const gb_figure *const *panels, int n, double cw, double ch, int precision);
int gb_cells_text_px(lay *L, const gb_figure *const *panels, int n, double cw, double ch);
void gb_cells_draw(lay *L, const gb_figure *m, int x, int y, int pw, int ph, int npx, int tpx, int precision);
#define SIDE_MAX 8
double gb_sides_width(lay *L, const gb_figure *f, int px, double colw[SIDE_MAX]);
void gb_sides_draw(lay *L, const gb_figure *f, const gb_axis *rows, double x, double y, double pitch,
                   const double colw[SIDE_MAX]);

/* one file each: the layout of a kind in the content box frame() left */
int gb_lay_draw_heatmap(lay *L, gb_verr *err); /* raster_heatmap.c */
int gb_lay_draw_grid(lay *L, gb_verr *err);    /* raster_heatmap.c */
int gb_lay_draw_bars(lay *L, gb_verr *err);    /* raster_bars.c */
int gb_lay_draw_lines(lay *L, gb_verr *err);   /* raster_lines.c */
int gb_lay_draw_strip(lay *L, gb_verr *err);   /* raster_strip.c */
int gb_lay_draw_diagram(lay *L, gb_verr *err); /* raster_diagram.c */
int gb_lay_draw_attnlines(lay *L, gb_verr *err); /* raster_attnlines.c */
int gb_lay_draw_strips(lay *L, gb_verr *err);  /* raster_steps.c */
int gb_lay_draw_decode(lay *L, gb_verr *err);  /* raster_steps.c */
int gb_lay_draw_tree(lay *L, gb_verr *err);    /* raster_steps.c */

#endif
