/* pdf.h — a figure as a one-page PDF (vectors, fonts embedded) through cairo, the layout of the
 * PNG and the SVG; written safely (export.h). */
#ifndef GLASSBOX_PDF_H
#define GLASSBOX_PDF_H

#include "viz/export.h"
#include "viz/raster.h"

int gb_pdf_write(const gb_figure *f, const char *path, const gb_export_opts *opts, gb_verr *err);

/* Draws f laid out on a w x h page (base size, scale 1) into a cairo context at its current
 * transformation, white background included: what gb_pdf_write puts on its page, for a
 * document of many pages (pdfdoc.h) to record and place. info (may be NULL) gets what the
 * layout measured (raster.h): what it had to leave out, where the data went. */
struct _cairo;
int gb_pdf_draw(struct _cairo *cr, const gb_figure *f, double w, double h, gb_raster_info *info, gb_verr *err);

#endif
