/* raster.h — the RGBA canvas shared by the SDL window and PNG export, and the figure layout
 * that draws every figure kind onto it.
 *
 * The layout (where the title, cells, labels, colorbar, axes and legend go) is written once,
 * against a small painter interface (rectangles, text, polylines, a colormap gradient): the
 * raster painter here turns it into pixels, svg.c's painter into SVG elements, so a PNG and an
 * SVG of the same figure have the same layout.
 *
 * Sizes: a figure is laid out for a base size (default 1600 x 900, a 16:9 slide) times a scale
 * (2 for high-DPI: every dimension, line and font size doubles). */
#ifndef GLASSBOX_RASTER_H
#define GLASSBOX_RASTER_H

#include <stdint.h>

#include "viz/figure.h"
#include "viz/vizerr.h"

#define GB_RASTER_W 1600
#define GB_RASTER_H 900

typedef struct gb_canvas {
	int w, h;
	uint8_t *rgba;            /* (h, w, 4), row-major, straight (not premultiplied) alpha */
} gb_canvas;

/* Allocates a w x h canvas filled with opaque white. 0, or -1 (out of memory, bad size). */
int gb_canvas_init(gb_canvas *c, int w, int h, gb_verr *err);
void gb_canvas_free(gb_canvas *c);
/* Fills [x, x+w) x [y, y+h) (clipped) with an opaque colour. */
void gb_canvas_fill(gb_canvas *c, int x, int y, int w, int h, const uint8_t rgb[3]);

typedef struct gb_raster_opts {
	int width, height;        /* base size before scale; 0: GB_RASTER_W x GB_RASTER_H */
	double scale;             /* 0: 1 */
} gb_raster_opts;

/* Where the layout put the data, in output pixels, so tests (and a window's mouse) can find a
 * cell. For a heatmap, strip row, bar chart or line plot, `plot` is its data area; cell (r, c)
 * of a heatmap covers x in [plot.x + c*plot.w/cols, plot.x + (c+1)*plot.w/cols) (integer
 * division), likewise y with rows. For a grid, `plot` is panel 0's cells, and panel p (at grid
 * column p % grid_cols, row p / grid_cols) is offset by (dx * column, dy * row), its block's
 * block_dx too where rows stand side by side (gb_raster_panel_xy). Every
 * heatmap (each panel of a grid) has a gray (#999999) outline just outside its cells,
 * max(1, round(scale)) pixels wide, so light cells at the edge do not melt into the page. */
typedef struct gb_rect {
	int x, y, w, h;
} gb_rect;

typedef struct gb_raster_info {
	gb_rect plot;
	int dx, dy;               /* grid panel pitch */
	int grid_cols;            /* grid columns actually used (in a block: see grid_blocks) */
	int grid_rows;            /* grid rows (in a block) */
	int grid_blocks;          /* blocks of rows side by side (figure.h's grid_wrap; 0 or 1:
	                           * none): block b holds rows [b * grid_rows, (b + 1) * grid_rows)
	                           * of the figure's grid, block_dx pixels right of block b - 1 */
	int block_dx;
	gb_rect colorbar;         /* the colour ramp itself (0 size when none) */
	gb_rect title;            /* title box (0 size when none) */
	int n_bad;                /* NaN / inf values found (not the -inf of a masked figure) */
	int n_masked;             /* masked cells: the -inf of a masked figure */
	int numbers_shown;        /* heatmap numbers were drawn (cells big enough) */
	int label_stride;         /* every k-th row label (bar label) drawn (1: all) */
	int col_label_stride;     /* every k-th column label drawn */
	int angled_labels;        /* column labels drawn at 45 degrees */

	/* What a slide needs checked, as the layout measured it (the PNG writes these as its
	 * "Kind", "PlotBox", "MinTextPx", "LabelsCut" and "LabelsShown" text chunks): */
	gb_rect box;              /* all the data: every cell of every panel (a grid's gaps and
	                           * panel titles between them included), every bar, the line plot's
	                           * axes box, a strip's tokens */
	int min_text_px;          /* the smallest text drawn, in output pixels (0: no text) */
	int labels_cut;           /* texts shortened with "…" or left out for lack of room: labels,
	                           * titles, captions, cell texts (thinned tick labels are not cut:
	                           * the shown / total counts below say how many are drawn) */
	int row_labels_shown, row_labels_total;  /* heatmap rows (panel 0's), bars */
	int col_labels_shown, col_labels_total;  /* heatmap columns (panel 0's) */
	int cols_orient;          /* column labels: 0 level, 45 slanted, 90 vertical */
	int cell_text_px;         /* size of the cells' texts or numbers (0: none drawn) */

	/* ATTNLINES (part 4, the window's hover): the query column and the key column, labels
	 * included; token i of a column covers y in [y + i*h/n, y + (i+1)*h/n) with n = rows (for
	 * queries) or cols (for keys); `plot` spans both and the lines between them. lines_px is
	 * the label text size in output pixels. */
	gb_rect lines_q, lines_k;
	int lines_px;
} gb_raster_info;

/* Where the cells of panel p of a grid begin, in output pixels, as the layout measured it into
 * in (blocks of rows side by side included). */
void gb_raster_panel_xy(const gb_raster_info *in, int p, int *x, int *y);

/* Renders f at opts' size into out (allocated here; free with gb_canvas_free). info may be
 * NULL. Fails on a malformed figure (e.g. no values) or a missing font. */
int gb_raster_render(const gb_figure *f, const gb_raster_opts *opts, gb_canvas *out,
                     gb_raster_info *info, gb_verr *err);

/* Renders into an existing canvas, laid out for its size at the given scale. */
int gb_raster_draw(const gb_figure *f, gb_canvas *c, double scale, gb_raster_info *info,
                   gb_verr *err);

/* The layout's measurements as text, for PNG text chunks and SVG metadata (keys in this
 * order): "Kind" (heatmap, grid, bars, lines, strip, ...), "PlotBox" ("x y w h" in output
 * pixels: info.box), "MinTextPx" (info.min_text_px), "LabelsCut" (info.labels_cut) and
 * "LabelsShown" ("rows 19/19, columns 64/512"). */
#define GB_LAYOUT_REPORT_N 5
typedef struct gb_layout_report {
	const char *keys[GB_LAYOUT_REPORT_N];
	const char *vals[GB_LAYOUT_REPORT_N];
	char buf[GB_LAYOUT_REPORT_N - 1][64];
} gb_layout_report;
void gb_layout_report_make(const gb_figure *f, const gb_raster_info *info, gb_layout_report *r);

/* --- the layout's painter interface (for svg.c) ---------------------------------------- */

enum gb_anchor { GB_ANCHOR_START, GB_ANCHOR_MIDDLE, GB_ANCHOR_END };

/* Coordinates in output pixels, y down; text at its baseline point, rotated angle degrees
 * counter-clockwise, anchored by its start, middle or end there. */
typedef struct gb_painter {
	void *ctx;
	double (*text_width)(void *ctx, int face, int px, const char *s);
	void (*rect)(void *ctx, double x, double y, double w, double h, const uint8_t rgb[3]);
	void (*text)(void *ctx, int face, int px, double x, double y, double angle, int anchor,
	             const char *s, const uint8_t rgb[3]);
	/* xy (n, 2); a line of the given width with round-ish joins */
	void (*polyline)(void *ctx, const double *xy, int n, double width, const uint8_t rgb[3]);
	/* a colormap ramp filling the rect, the map's t1 at the top, t0 at the bottom (0 and 1 for
	 * the whole map; a truncated scale draws only the part of the map its data use) */
	void (*ramp)(void *ctx, double x, double y, double w, double h, int cmap, double t0, double t1);
	/* optional (may be NULL): brackets around a part ("cells", "labels", ...) for SVG groups */
	void (*group)(void *ctx, const char *name, int begin);
	int failed;               /* set by a painter when it ran out of memory */
} gb_painter;

/* Lays f out on a w x h surface at scale and draws it through p. */
int gb_layout_draw(const gb_figure *f, double w, double h, double scale, gb_painter *p,
                   gb_raster_info *info, gb_verr *err);

/* Text of a value as the figures print it: gb_fig_fmt_num (figure.h), the formatter every
 * backend shares (the terminal's cells too). */
void gb_format_value(double v, int precision, char *out, int cap);

#endif
