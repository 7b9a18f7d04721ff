/* png.h — PNG files through libpng: the canvas as 8-bit RGB (RGBA when any pixel is not opaque)
 * with text chunks, and a reader for tests.
 *
 * Reproducible bytes: no tIME chunk, one fixed filter and zlib level, text chunks in a fixed
 * order, so the same figure and version give the same file on every run. Written through the
 * safe-write rule of export.h (temporary + rename; an existing file needs force). */
#ifndef GLASSBOX_PNG_H
#define GLASSBOX_PNG_H

#include "viz/figure.h"
#include "viz/raster.h"
#include "viz/vizerr.h"

typedef struct gb_png_text {
	char *key, *val;          /* UTF-8 */
} gb_png_text;

/* Writes c to path with n_text (key, value) text chunks: tEXt when the value is printable
 * ASCII, iTXt (UTF-8) otherwise. Keys are made valid PNG keywords (1-79 Latin-1 letters,
 * digits, punctuation and single spaces); values with invalid UTF-8 get '?' for the bad bytes. */
int gb_png_write(const char *path, const gb_canvas *c, const char *const *keys,
                 const char *const *vals, int n_text, int force, gb_verr *err);

/* Renders f (opts: size and scale; NULL for 1600 x 900) and writes it with text chunks: the
 * figure's meta pairs, then Title and Description (the caption) unless the meta has them,
 * "Software" = "glassbox <version>", "Colormap" and "Range" ("lo .. hi", for colour-mapped
 * kinds). */
int gb_png_write_figure(const gb_figure *f, const char *path, const gb_raster_opts *opts,
                        const char *version, int force, gb_verr *err);

/* Decodes any PNG into an RGBA canvas (free with gb_canvas_free) and, when text is not NULL,
 * its text chunks (tEXt, zTXt, iTXt) in file order (free with gb_png_text_free). */
int gb_png_read(const char *path, gb_canvas *out, gb_png_text **text, int *n_text, gb_verr *err);
void gb_png_text_free(gb_png_text *t, int n);

/* The value of key among t (n), or NULL. */
const char *gb_png_text_get(const gb_png_text *t, int n, const char *key);

#endif
