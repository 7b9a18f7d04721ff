/* svg.h — a figure as an SVG document for vector slides: the same layout as the PNG (raster.h's
 * gb_layout_draw through an SVG painter): a <rect> per heatmap cell, <text> labels, the colorbar
 * as a linear gradient, <polyline>s for lines. Well-formed XML whatever the tokens hold: text is
 * escaped and bytes XML cannot carry (control bytes, invalid UTF-8) are made visible first.
 * The figure's meta pairs, its colormap and range and the program version go in <metadata>. */
#ifndef GLASSBOX_SVG_H
#define GLASSBOX_SVG_H

#include "viz/export.h"
#include "viz/figure.h"
#include "viz/vizerr.h"

/* The document as a NUL-terminated string (free() it), laid out for w x h pixels at scale
 * (0s: 1600 x 900, 1). NULL on failure. */
char *gb_svg_render(const gb_figure *f, int w, int h, double scale, const char *version,
                    gb_verr *err);

/* Writes the document to path under the safe-write rule (opts may be NULL). */
int gb_svg_write(const gb_figure *f, const char *path, const gb_export_opts *opts, gb_verr *err);

#endif
