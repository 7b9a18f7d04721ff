/* pdf.c — a figure as a one-page PDF through cairo's PDF surface: the same layout as the PNG and
 * the SVG (the painter of raster.h), drawn as vectors, with the text as embedded fonts (cairo
 * embeds the subsets it uses), written through the safe-write rule of export.h.
 *
 * Text is measured with glassbox's own fonts (viz/font.h), so every label lands where the PNG
 * puts it; cairo draws it in DejaVu Sans (and its bold and mono) found through fontconfig, the
 * same files the PNG uses unless GLASSBOX_FONT names another. */
#include "viz/pdf.h"
#include "viz/colormap.h"
#include "viz/font.h"
#include "viz/raster.h"

#include <cairo-pdf.h>
#include <cairo.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct pctx {
	cairo_t *cr;
	gb_font *font[GB_FACE_N];
} pctx;

static void set_rgb(cairo_t *cr, const uint8_t rgb[3])
{
	cairo_set_source_rgb(cr, rgb[0] / 255.0, rgb[1] / 255.0, rgb[2] / 255.0);
}

static void face_of(cairo_t *cr, int face, int px)
{
	cairo_select_font_face(cr, face == GB_FACE_MONO ? "DejaVu Sans Mono" : "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
	                       face == GB_FACE_BOLD ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_font_size(cr, px);
}

static double p_text_width(void *ctx, int face, int px, const char *s)
{
	pctx *c = ctx;
	if (c->font[face])
		return gb_font_width(c->font[face], px, s);
	cairo_text_extents_t e;
	face_of(c->cr, face, px);
	cairo_text_extents(c->cr, s, &e);
	return e.x_advance;
}

static void p_rect(void *ctx, double x, double y, double w, double h, const uint8_t rgb[3])
{
	cairo_t *cr = ((pctx *)ctx)->cr;
	set_rgb(cr, rgb);
	cairo_rectangle(cr, x, y, w, h);
	cairo_fill(cr);
}

static void p_text(void *ctx, int face, int px, double x, double y, double angle, int anchor, const char *s,
                   const uint8_t rgb[3])
{
	cairo_t *cr = ((pctx *)ctx)->cr;
	cairo_text_extents_t e;
	face_of(cr, face, px);
	cairo_text_extents(cr, s, &e); /* anchored on what cairo draws */
	double dx = anchor == GB_ANCHOR_MIDDLE ? -e.x_advance / 2 : anchor == GB_ANCHOR_END ? -e.x_advance : 0;
	cairo_save(cr);
	cairo_translate(cr, x, y);
	cairo_rotate(cr, -angle * M_PI / 180); /* counter-clockwise on the page, y down */
	set_rgb(cr, rgb);
	cairo_move_to(cr, dx, 0);
	cairo_show_text(cr, s);
	cairo_restore(cr);
}

static void p_polyline(void *ctx, const double *xy, int n, double width, const uint8_t rgb[3])
{
	cairo_t *cr = ((pctx *)ctx)->cr;
	set_rgb(cr, rgb);
	if (n == 1) {
		cairo_arc(cr, xy[0], xy[1], width / 2, 0, 2 * M_PI);
		cairo_fill(cr);
		return;
	}
	cairo_set_line_width(cr, width);
	cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
	cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
	cairo_move_to(cr, xy[0], xy[1]);
	for (int i = 1; i < n; i++)
		cairo_line_to(cr, xy[2 * i], xy[2 * i + 1]);
	cairo_stroke(cr);
}

/* The part [t0, t1] of the map as a vertical gradient of 33 stops (as the SVG's). */
static void p_ramp(void *ctx, double x, double y, double w, double h, int cmap, double t0, double t1)
{
	cairo_t *cr = ((pctx *)ctx)->cr;
	cairo_pattern_t *g = cairo_pattern_create_linear(0, y + h, 0, y);
	for (int i = 0; i <= 32; i++) {
		double t = t0 + (t1 - t0) * i / 32.0;
		int e = (int)floor(t * 255 + 0.5);
		e = e < 0 ? 0 : e > 255 ? 255 : e;
		const uint8_t *rgb = gb_cmap_entry(cmap, e);
		cairo_pattern_add_color_stop_rgb(g, i / 32.0, rgb[0] / 255.0, rgb[1] / 255.0, rgb[2] / 255.0);
	}
	cairo_rectangle(cr, x, y, w, h);
	cairo_set_source(cr, g);
	cairo_fill(cr);
	cairo_pattern_destroy(g);
}

static cairo_status_t to_file(void *closure, const unsigned char *data, unsigned int len)
{
	return fwrite(data, 1, len, closure) == len ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

int gb_pdf_draw(struct _cairo *cr, const gb_figure *f, double w, double h, gb_raster_info *info, gb_verr *err)
{
	pctx c = { cr, { 0 } };
	for (int i = 0; i < GB_FACE_N; i++)
		c.font[i] = gb_font_face(i, NULL);
	gb_painter p = { &c, p_text_width, p_rect, p_text, p_polyline, p_ramp, NULL, 0 };
	p_rect(&c, 0, 0, w, h, (const uint8_t[]){ 255, 255, 255 });
	int rc = gb_layout_draw(f, w, h, 1, &p, info, err);
	if (!rc && p.failed)
		rc = gb_vfail(err, "out of memory drawing the figure");
	return rc;
}

int gb_pdf_write(const gb_figure *f, const char *path, const gb_export_opts *opts, gb_verr *err)
{
	gb_export_opts def = { 0 };
	gb_outfile o;
	if (!f)
		return gb_vfail(err, "no figure to draw");
	if (!opts)
		opts = &def;
	double s = opts->scale > 0 ? opts->scale : 1;
	double W = round((opts->width > 0 ? opts->width : GB_RASTER_W) * s);
	double H = round((opts->height > 0 ? opts->height : GB_RASTER_H) * s);
	if (gb_outfile_open(&o, path, opts->force, err))
		return -1;
	/* one page of W x H points: a 1600 x 900 figure is a 16:9 page, whatever the size shown */
	cairo_surface_t *surf = cairo_pdf_surface_create_for_stream(to_file, o.fp, W, H);
	cairo_pdf_surface_set_metadata(surf, CAIRO_PDF_METADATA_TITLE, f->title ? f->title : "glassbox figure");
	if (f->caption)
		cairo_pdf_surface_set_metadata(surf, CAIRO_PDF_METADATA_SUBJECT, f->caption);
	char creator[64];
	snprintf(creator, sizeof creator, "glassbox %s", opts->version ? opts->version : "");
	cairo_pdf_surface_set_metadata(surf, CAIRO_PDF_METADATA_CREATOR, creator);
	pctx c = { cairo_create(surf), { 0 } };
	for (int i = 0; i < GB_FACE_N; i++)
		c.font[i] = gb_font_face(i, NULL);
	gb_painter p = { &c, p_text_width, p_rect, p_text, p_polyline, p_ramp, NULL, 0 };
	p_rect(&c, 0, 0, W, H, (const uint8_t[]){ 255, 255, 255 });
	int rc = gb_layout_draw(f, W, H, s, &p, NULL, err);
	cairo_show_page(c.cr);
	cairo_destroy(c.cr);
	cairo_surface_finish(surf);
	cairo_status_t st = cairo_surface_status(surf);
	cairo_surface_destroy(surf);
	if (!rc && (p.failed || st != CAIRO_STATUS_SUCCESS))
		rc = gb_vfail(err, "cannot write '%s': %s", path, p.failed ? "out of memory" : cairo_status_to_string(st));
	if (rc) {
		gb_outfile_abort(&o);
		return -1;
	}
	return gb_outfile_commit(&o, err);
}
