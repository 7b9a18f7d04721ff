/* svg.c — owns the SVG painter and the document around it (header, metadata, escaping).
 *
 * Text is measured with the same FreeType fonts as the raster (the document asks for DejaVu Sans,
 * so a viewer that has it places every label exactly as in the PNG); without the fonts the
 * layout falls back to average advance widths and the SVG is still written. */
#include "viz/svg.h"
#include "viz/colormap.h"
#include "viz/font.h"
#include "viz/raster.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sbuf {
	char *p;
	size_t n, cap;
	int failed;
} sbuf;

static void put(sbuf *b, const char *s, size_t n)
{
	if (b->failed)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t nc = b->cap ? b->cap : 1 << 16;
		char *np;
		while (nc < b->n + n + 1)
			nc *= 2;
		np = realloc(b->p, nc);
		if (!np) {
			b->failed = 1;
			return;
		}
		b->p = np;
		b->cap = nc;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

static void puts_(sbuf *b, const char *s)
{
	put(b, s, strlen(s));
}

__attribute__((format(printf, 2, 3))) static void putf(sbuf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;
	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* A coordinate with at most two decimals and no trailing zeros: the cells of a 128 x 128
 * heatmap are 16384 rects, and "12.50" vs "12.5" is a tenth of the file. */
static void num(sbuf *b, double v)
{
	char t[40];
	long long k = llround(v * 100);
	int len;
	if (k % 100 == 0)
		len = snprintf(t, sizeof t, "%lld", k / 100);
	else {
		len = snprintf(t, sizeof t, "%.2f", k / 100.0);
		while (len > 0 && t[len - 1] == '0')
			t[--len] = 0;
	}
	put(b, t, (size_t)len);
}

/* Text as XML character data or an attribute value: the five specials as entities, and what
 * XML 1.0 cannot hold at all (control bytes, invalid UTF-8, surrogates, U+FFFE/FFFF) spelled as
 * visible \xNN, like the terminal shows them. */
static void esc(sbuf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	while (*p) {
		unsigned char c = *p;
		int len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
		uint32_t cp = c;
		int ok = len > 0;
		char hex[8];
		for (int k = 1; ok && k < len; k++)
			ok = (p[k] & 0xC0) == 0x80;
		if (ok && len > 1) {
			cp = c & (0x7F >> len);
			for (int k = 1; k < len; k++)
				cp = cp << 6 | (p[k] & 0x3F);
			ok = cp >= (len == 2 ? 0x80u : len == 3 ? 0x800u : 0x10000u) && cp <= 0x10FFFF &&
			     !(cp >= 0xD800 && cp <= 0xDFFF) && cp != 0xFFFE && cp != 0xFFFF;
		}
		if (!ok || (c < 0x20 && c != '\t') || c == 0x7F) {
			snprintf(hex, sizeof hex, "\\x%02X", c);
			puts_(b, hex);
			p++;
			continue;
		}
		switch (c) {
		case '&': puts_(b, "&amp;"); break;
		case '<': puts_(b, "&lt;"); break;
		case '>': puts_(b, "&gt;"); break;
		case '"': puts_(b, "&quot;"); break;
		case '\'': puts_(b, "&apos;"); break;
		default: put(b, (const char *)p, (size_t)len);
		}
		p += len;
	}
}

static void colour(sbuf *b, const uint8_t rgb[3])
{
	putf(b, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

typedef struct sctx {
	sbuf b;
	gb_font *font[GB_FACE_N]; /* NULL: estimate widths */
	int ramps;
} sctx;

static double s_text_width(void *ctx, int face, int px, const char *s)
{
	sctx *c = ctx;
	double w = 0;
	if (c->font[face])
		return gb_font_width(c->font[face], px, s);
	/* average DejaVu advances: 0.602 em monospace, about 0.6 em for sans text */
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if ((*p & 0xC0) != 0x80)
			w += face == GB_FACE_MONO ? 0.602 * px : face == GB_FACE_BOLD ? 0.68 * px : 0.6 * px;
	return w;
}

static void s_rect(void *ctx, double x, double y, double w, double h, const uint8_t rgb[3])
{
	sbuf *b = &((sctx *)ctx)->b;
	puts_(b, "<rect x=\"");
	num(b, x);
	puts_(b, "\" y=\"");
	num(b, y);
	puts_(b, "\" width=\"");
	num(b, w);
	puts_(b, "\" height=\"");
	num(b, h);
	puts_(b, "\" fill=\"");
	colour(b, rgb);
	puts_(b, "\"/>\n");
}

static void s_text(void *ctx, int face, int px, double x, double y, double angle, int anchor,
                   const char *s, const uint8_t rgb[3])
{
	sbuf *b = &((sctx *)ctx)->b;
	puts_(b, "<text x=\"");
	num(b, x);
	puts_(b, "\" y=\"");
	num(b, y);
	putf(b, "\" font-size=\"%d\"", px);
	if (face == GB_FACE_BOLD)
		puts_(b, " font-weight=\"bold\"");
	else if (face == GB_FACE_MONO)
		puts_(b, " font-family=\"'DejaVu Sans Mono', monospace\"");
	if (anchor != GB_ANCHOR_START)
		puts_(b, anchor == GB_ANCHOR_MIDDLE ? " text-anchor=\"middle\"" : " text-anchor=\"end\"");
	if (angle != 0) {
		/* SVG rotates clockwise (its y points down) */
		puts_(b, " transform=\"rotate(");
		num(b, -angle);
		puts_(b, " ");
		num(b, x);
		puts_(b, " ");
		num(b, y);
		puts_(b, ")\"");
	}
	puts_(b, " fill=\"");
	colour(b, rgb);
	puts_(b, "\">");
	esc(b, s);
	puts_(b, "</text>\n");
}

static void s_polyline(void *ctx, const double *xy, int n, double width, const uint8_t rgb[3])
{
	sbuf *b = &((sctx *)ctx)->b;
	if (n == 1) {
		puts_(b, "<circle cx=\"");
		num(b, xy[0]);
		puts_(b, "\" cy=\"");
		num(b, xy[1]);
		puts_(b, "\" r=\"");
		num(b, width / 2);
		puts_(b, "\" fill=\"");
		colour(b, rgb);
		puts_(b, "\"/>\n");
		return;
	}
	puts_(b, "<polyline fill=\"none\" stroke-linejoin=\"round\" stroke-linecap=\"round\" stroke=\"");
	colour(b, rgb);
	puts_(b, "\" stroke-width=\"");
	num(b, width);
	puts_(b, "\" points=\"");
	for (int i = 0; i < n; i++) {
		if (i)
			puts_(b, " ");
		num(b, xy[2 * i]);
		puts_(b, ",");
		num(b, xy[2 * i + 1]);
	}
	puts_(b, "\"/>\n");
}

/* A vertical gradient of 33 stops over the part [t0, t1] of the map in use: the tables are
 * smooth, so linear interpolation between them is within a level or two of the 256 entries. */
static void s_ramp(void *ctx, double x, double y, double w, double h, int cmap, double t0, double t1)
{
	sctx *c = ctx;
	sbuf *b = &c->b;
	int id = ++c->ramps;
	putf(b, "<defs><linearGradient id=\"ramp%d\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">\n", id);
	for (int i = 0; i <= 32; i++) {
		double t = t0 + (t1 - t0) * i / 32.0;
		int e = (int)floor(t * 255 + 0.5);
		e = e < 0 ? 0 : e > 255 ? 255 : e;
		putf(b, "<stop offset=\"%.4f\" stop-color=\"", i / 32.0);
		colour(b, gb_cmap_entry(cmap, e));
		puts_(b, "\"/>\n");
	}
	puts_(b, "</linearGradient></defs>\n<rect x=\"");
	num(b, x);
	puts_(b, "\" y=\"");
	num(b, y);
	puts_(b, "\" width=\"");
	num(b, w);
	puts_(b, "\" height=\"");
	num(b, h);
	putf(b, "\" fill=\"url(#ramp%d)\"/>\n", id);
}

static void s_group(void *ctx, const char *name, int begin)
{
	sbuf *b = &((sctx *)ctx)->b;
	if (!begin) {
		puts_(b, "</g>\n");
		return;
	}
	puts_(b, "<g class=\"");
	esc(b, name);
	/* cells must tile without anti-aliased hairlines between them, and a 1 px outline stays
	 * one sharp pixel */
	puts_(b, strcmp(name, "cells") == 0 || strcmp(name, "colorbar") == 0 || strcmp(name, "outline") == 0
	             ? "\" shape-rendering=\"crispEdges\">\n"
	             : "\">\n");
}

static void meta_item(sbuf *b, const char *key, const char *val)
{
	puts_(b, "<gb:item key=\"");
	esc(b, key);
	puts_(b, "\">");
	esc(b, val);
	puts_(b, "</gb:item>\n");
}

char *gb_svg_render(const gb_figure *f, int w, int h, double scale, const char *version,
                    gb_verr *err)
{
	sctx c = { 0 };
	gb_painter p = { &c, s_text_width, s_rect, s_text, s_polyline, s_ramp, s_group, 0 };
	double W, H;
	if (!f) {
		gb_vfail(err, "no figure to draw");
		return NULL;
	}
	scale = scale > 0 ? scale : 1;
	W = round((w > 0 ? w : GB_RASTER_W) * scale);
	H = round((h > 0 ? h : GB_RASTER_H) * scale);
	for (int i = 0; i < GB_FACE_N; i++)
		c.font[i] = gb_font_face(i, NULL);
	puts_(&c.b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	putf(&c.b, "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:gb=\"urn:glassbox:figure\" "
	           "version=\"1.1\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
	           "font-family=\"'DejaVu Sans', Verdana, sans-serif\" xml:space=\"preserve\">\n",
	     W, H, W, H);
	if (f->title) {
		puts_(&c.b, "<title>");
		esc(&c.b, f->title);
		puts_(&c.b, "</title>\n");
	}
	if (f->caption) {
		puts_(&c.b, "<desc>");
		esc(&c.b, f->caption);
		puts_(&c.b, "</desc>\n");
	}
	puts_(&c.b, "<metadata>\n");
	for (int i = 0; i < f->n_meta; i++)
		meta_item(&c.b, f->meta_keys[i], f->meta_vals[i]);
	{
		char sw[96], range[96];
		snprintf(sw, sizeof sw, "glassbox %s", version && *version ? version : "(unknown version)");
		meta_item(&c.b, "Software", sw);
		if (f->kind != GB_FIG_LINES) {
			float lo, hi;
			int bad;
			gb_fig_range(f, &lo, &hi, &bad);
			snprintf(range, sizeof range, "%.9g .. %.9g", lo, hi);
			meta_item(&c.b, "Colormap", gb_cmap_name(f->cmap));
			meta_item(&c.b, "Range", range);
		}
	}
	{
		/* the body first, so the metadata can say what its layout measured */
		sbuf head = c.b;
		gb_raster_info info;
		gb_layout_report rep;
		c.b = (sbuf){ 0 };
		if (gb_layout_draw(f, W, H, scale, &p, &info, err)) {
			free(c.b.p);
			free(head.p);
			return NULL;
		}
		gb_layout_report_make(f, &info, &rep);
		for (int i = 0; i < GB_LAYOUT_REPORT_N; i++)
			meta_item(&head, rep.keys[i], rep.vals[i]);
		puts_(&head, "</metadata>\n");
		if (c.b.p)
			put(&head, c.b.p, c.b.n);
		head.failed |= c.b.failed;
		free(c.b.p);
		c.b = head;
	}
	puts_(&c.b, "</svg>\n");
	if (c.b.failed) {
		free(c.b.p);
		gb_vfail(err, "out of memory writing the SVG");
		return NULL;
	}
	return c.b.p;
}

int gb_svg_write(const gb_figure *f, const char *path, const gb_export_opts *opts, gb_verr *err)
{
	gb_export_opts def = { 0 };
	gb_outfile o;
	char *doc;
	if (!opts)
		opts = &def;
	doc = gb_svg_render(f, opts->width, opts->height, opts->scale, opts->version, err);
	if (!doc)
		return -1;
	if (gb_outfile_open(&o, path, opts->force, err)) {
		free(doc);
		return -1;
	}
	fputs(doc, o.fp);
	free(doc);
	return gb_outfile_commit(&o, err);
}
