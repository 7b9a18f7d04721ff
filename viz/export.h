/* export.h — a figure to a file: PNG, SVG, CSV or NPY chosen by the extension, and the safe-write
 * rule every file backend follows.
 *
 * Safe writes: the bytes go to a hidden temporary file in the target's folder, which is renamed
 * to the target only once complete, so an interrupted export never leaves half a file; an
 * existing target is an error unless `force`.
 *
 * The numbers:
 *   HEATMAP  CSV: a header row (the row axis title, then the column labels), then one row per
 *            matrix row: its label, then the values; unlabelled rows and columns by their
 *            number (from row_index0 / col_index0 when set, else from 0).  NPY: float32 (rows, cols).
 *   BARS, STRIP  CSV: "label,value" rows.  NPY: float32 (n,).
 *   LINES    CSV: "x" (or the x title), then one column per series; a shorter series leaves
 *            empty cells.  NPY: float32 (n, 1 + n_series), column 0 = x, the same table as the
 *            CSV (shorter series padded with NaN).
 *   GRID     CSV: a header "panel,<row title>,<column labels>", then every panel's rows with the
 *            panel title first.  NPY: float32 (n_panels, rows, cols) (panels of one shape).
 *   DIAGRAM  CSV: "group,block,detail,highlight", one row per block.  NPY: none (an error).
 * Values print with 9 significant digits (a float32 round-trips); NaN and infinities as nan, inf
 * and -inf, which numpy and pandas read. Labels are written as their UTF-8 text; control bytes
 * and invalid UTF-8 become \xNN. */
#ifndef GLASSBOX_EXPORT_H
#define GLASSBOX_EXPORT_H

#include <stdio.h>

#include "viz/figure.h"
#include "viz/vizerr.h"

typedef struct gb_export_opts {
	int force;                /* overwrite an existing file */
	const char *version;      /* for the PNG "Software" chunk and SVG metadata, e.g. "0.1.0" */
	int width, height;        /* PNG/SVG base size; 0: 1600 x 900 */
	double scale;             /* PNG/SVG scale (2 for high-DPI slides); 0: 1 */
} gb_export_opts;

/* Writes f to path as PNG, SVG, CSV or NPY by its extension (case-insensitive). An unknown
 * extension is an error that lists the known ones. opts may be NULL (defaults). */
int gb_export(const gb_figure *f, const char *path, const gb_export_opts *opts, gb_verr *err);

int gb_export_csv(const gb_figure *f, const char *path, int force, gb_verr *err);
int gb_export_npy(const gb_figure *f, const char *path, int force, gb_verr *err);

/* The same tables into an open stream (no safe-write): for the app's `dump`, and tests. */
int gb_write_csv(const gb_figure *f, FILE *fp, gb_verr *err);
int gb_write_npy(const gb_figure *f, FILE *fp, gb_verr *err);

/* "png", "svg", "csv", "npy" for a path's extension, or NULL. */
const char *gb_export_format(const char *path);

/* --- the safe-write rule, shared by png.c, svg.c and this file --------------------------- */

typedef struct gb_outfile {
	FILE *fp;                 /* write here */
	char *tmp;                /* the temporary's name, in the target's folder */
	char *path;               /* the target */
	int force;
} gb_outfile;

/* Checks the target (exists without force, is a folder, folder missing or not writable: each a
 * one-line error naming the path) and opens the temporary. */
int gb_outfile_open(gb_outfile *o, const char *path, int force, gb_verr *err);
/* Closes, checks every write succeeded, and renames onto the target (without force, never
 * over a file that appeared meanwhile). On failure the temporary is removed. */
int gb_outfile_commit(gb_outfile *o, gb_verr *err);
/* Closes and removes the temporary. Safe to call twice. */
void gb_outfile_abort(gb_outfile *o);

#endif
