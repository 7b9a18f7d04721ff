/* pdf.h — a figure as a one-page PDF (vectors, fonts embedded) through cairo, the layout of the
 * PNG and the SVG; written safely (export.h). */
#ifndef GLASSBOX_PDF_H
#define GLASSBOX_PDF_H

#include "viz/export.h"

int gb_pdf_write(const gb_figure *f, const char *path, const gb_export_opts *opts, gb_verr *err);

#endif
