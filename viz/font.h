/* font.h — anti-aliased text for the raster backend: FreeType renders, fontconfig finds the
 * font (DejaVu Sans, its bold, and DejaVu Sans Mono for numbers, from fonts-dejavu-core).
 *
 * The fonts are process-wide: opened on first use, their glyphs cached (by code point, pixel
 * size and angle) so a 128 x 128 heatmap's labels and numbers cost one FreeType render per
 * distinct glyph. Not thread-safe: one thread draws. */
#ifndef GLASSBOX_FONT_H
#define GLASSBOX_FONT_H

#include <stdint.h>

#include "viz/vizerr.h"

struct gb_canvas; /* viz/raster.h */

typedef struct gb_font gb_font;

enum gb_face { GB_FACE_SANS, GB_FACE_BOLD, GB_FACE_MONO, GB_FACE_N };

/* The shared font for a face, opened on first use. NULL with a message naming the Debian
 * package (fonts-dejavu-core) when it cannot be found or loaded. The file comes from, first,
 * gb_font_set_path; then the environment variable GLASSBOX_FONT; then fontconfig. */
gb_font *gb_font_face(int face, gb_verr *err);

/* The file an open face was loaded from (after gb_font_face succeeded), else NULL. */
const char *gb_font_file(int face);

/* Every face from this one .ttf/.otf file from now on (NULL: back to GLASSBOX_FONT or
 * fontconfig). Closes the open fonts, so pointers from gb_font_face become invalid. */
void gb_font_set_path(const char *path);

/* Closes the shared fonts and frees their caches (they reopen on next use). */
void gb_font_release(void);

/* Typographic metrics at px pixels per em, in pixels: the advance width of a UTF-8 string
 * (invalid bytes count as U+FFFD), and the ascent / descent (both positive) of the face. */
double gb_font_width(gb_font *f, int px, const char *s);
double gb_font_ascent(gb_font *f, int px);
double gb_font_descent(gb_font *f, int px);

/* Draws s with its baseline starting at (x, y) (canvas pixels, y down), rotated angle_deg
 * counter-clockwise (45: rising to the right), alpha-blended over the canvas in rgb and clipped
 * to it. Returns the advance length along the baseline. */
double gb_font_draw(gb_font *f, struct gb_canvas *c, const char *s, double x, double y, int px,
                    double angle_deg, const uint8_t rgb[3]);

#endif
