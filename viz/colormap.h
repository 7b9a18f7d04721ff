/* colormap.h — the colormaps of figure.h as 256-entry RGB tables (the published tables; the
 * numbers are data, their sources named in colormap.c), the NaN/inf marker colour and the
 * colour of masked cells. */
#ifndef GLASSBOX_COLORMAP_H
#define GLASSBOX_COLORMAP_H

#include <stdint.h>

/* The colour of t in [0, 1] (clamped) under cmap: the nearest of the 256 entries. */
void gb_cmap_rgb(int cmap, double t, uint8_t rgb[3]);

/* Entry i (0..255) of a table. */
const uint8_t *gb_cmap_entry(int cmap, int i);

/* Names for settings and files: "viridis", "magma", "cividis", "gray", "coolwarm". */
const char *gb_cmap_name(int cmap);
/* The tint of box i of a strip whose boxes alternate (figure.h's alternate): two light colours
 * far enough apart for neighbours to read as two boxes, dark text legible on both. */
void gb_alt_rgb(int i, uint8_t rgb[3]);
int gb_cmap_by_name(const char *name); /* -1 if unknown */

/* The colour that marks NaN and infinite values in every backend (a magenta no table uses). */
extern const uint8_t gb_bad_rgb[3];

/* The colour of a masked cell (the -inf of a figure marked masked): a neutral dark gray, far
 * from the diverging map masked scores use, and not the alarm of gb_bad_rgb. */
extern const uint8_t gb_mask_rgb[3];

/* CIE L* lightness (0..100) of an sRGB colour, for tests and for choosing a readable text
 * colour (black or white) over a cell. */
double gb_lightness(const uint8_t rgb[3]);

#endif
