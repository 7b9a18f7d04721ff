/* bench_raster.h — how fast a figure becomes a PNG: the 128 x 128 heatmap at 1920 x 1080. */
#ifndef GLASSBOX_BENCH_RASTER_H
#define GLASSBOX_BENCH_RASTER_H

#include <stdio.h>

/* Times render + PNG encode (+ write to a temporary file) of a labelled 128 x 128 heatmap at
 * 1920 x 1080: the first, cold run (fonts opened, glyphs rasterised) and the best of several
 * warm runs, split into render and encode. The target is under 100 ms. Prints; asserts
 * nothing. Returns 0, or -1 when the figure cannot be made (e.g. no font). */
int bench_raster(FILE *out);

#endif
