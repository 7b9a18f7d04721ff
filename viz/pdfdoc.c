/* pdfdoc.c — slides and handouts as PDF (pdfdoc.h): the Markdown of a lesson's export read
 * into blocks, text set by pango (wrapped, bold and italic from the Markdown's marks), figures
 * recorded once through pdf.c's painter into cairo recording surfaces and replayed as vectors
 * wherever a page places them. */
#include "viz/pdfdoc.h"
#include "viz/export.h"
#include "viz/pdf.h"

#include <cairo-pdf.h>
#include <cairo.h>
#include <ctype.h>
#include <math.h>
#include <pango/pangocairo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIG_W 1600.0
#define FIG_H 900.0

/* A figure is laid out again for the shape a slide leaves it (its heading above, its caption
 * and questions below), not shrunk from 16:9: the layout of 1600 x SLIDE_H(v) pixels, from
 * 1600 x 800 down to 1600 x 560 by 20, so that the slide's figure fills the room it has
 * (a two-line caption, a box of questions) to within 20 px. */
#define N_SLIDE 13
#define SLIDE_H(v) (GB_SLIDE_FIG_H - 20.0 * (v))

typedef struct rec {
	char *name;
	cairo_surface_t *s;       /* a recording of the figure on a 1600 x 900 page (the handout) */
	cairo_surface_t *v[N_SLIDE]; /* the same on 1600 x SLIDE_H(i) (the slides) */
} rec;

struct gb_pdfbook {
	rec *recs;
	int n;
};


gb_pdfbook *gb_pdfbook_new(void)
{
	return calloc(1, sizeof(gb_pdfbook));
}

void gb_pdfbook_free(gb_pdfbook *b)
{
	if (!b)
		return;
	for (int i = 0; i < b->n; i++) {
		free(b->recs[i].name);
		cairo_surface_destroy(b->recs[i].s);
		for (int v = 0; v < N_SLIDE; v++)
			cairo_surface_destroy(b->recs[i].v[v]);
	}
	free(b->recs);
	free(b);
}

/* f laid out on a w x h page, recorded; NULL (err set) when it fails. */
static cairo_surface_t *record(const gb_figure *f, double w, double h, gb_verr *err)
{
	cairo_rectangle_t ext = { 0, 0, w, h };
	cairo_surface_t *s = cairo_recording_surface_create(CAIRO_CONTENT_COLOR_ALPHA, &ext);
	cairo_t *cr = cairo_create(s);
	int rc = gb_pdf_draw(cr, f, w, h, err);
	cairo_destroy(cr);
	if (!rc && cairo_surface_status(s) != CAIRO_STATUS_SUCCESS)
		rc = gb_vfail(err, "cannot record the figure: %s", cairo_status_to_string(cairo_surface_status(s)));
	if (rc) {
		cairo_surface_destroy(s);
		return NULL;
	}
	return s;
}

int gb_pdfbook_add_figure(gb_pdfbook *b, const char *name, const gb_figure *f, gb_verr *err)
{
	rec *r = realloc(b->recs, sizeof *r * (size_t)(b->n + 1));
	if (!r)
		return gb_vfail(err, "out of memory recording a figure");
	b->recs = r;
	rec *k = &r[b->n];
	memset(k, 0, sizeof *k);
	int rc = !(k->s = record(f, FIG_W, FIG_H, err));
	for (int v = 0; !rc && v < N_SLIDE; v++)
		rc = !(k->v[v] = record(f, FIG_W, SLIDE_H(v), err));
	if (!rc && !(k->name = strdup(name)))
		rc = gb_vfail(err, "out of memory recording a figure") || 1;
	if (rc) {
		if (k->s)
			cairo_surface_destroy(k->s);
		for (int v = 0; v < N_SLIDE; v++)
			if (k->v[v])
				cairo_surface_destroy(k->v[v]);
		return -1;
	}
	b->n++;
	return 0;
}

static const rec *find_rec(const gb_pdfbook *b, const char *name)
{
	for (int i = 0; i < b->n; i++)
		if (!strcmp(b->recs[i].name, name))
			return &b->recs[i];
	return NULL;
}

static cairo_surface_t *find_fig(const gb_pdfbook *b, const char *name)
{
	const rec *r = find_rec(b, name);
	return r ? r->s : NULL;
}

/* ---- the Markdown, as blocks ----------------------------------------------------------------- */

enum { B_TITLE, B_SECTION, B_PARA, B_CODE, B_LITERAL, B_ITEM, B_FIGURE, B_NUM };

typedef struct block {
	int kind;
	char *text;               /* the heading, paragraph, code, item, or a figure's alt text */
	char *name;               /* B_FIGURE: the recorded figure's name */
} block;

typedef struct blocks {
	block *b;
	int n, cap;
	int oom;
} blocks;

static void add_block(blocks *bs, int kind, const char *text, size_t len, const char *name, size_t nlen)
{
	if (bs->n == bs->cap) {
		int cap = bs->cap ? 2 * bs->cap : 64;
		block *nb = realloc(bs->b, sizeof *nb * (size_t)cap);
		if (!nb) {
			bs->oom = 1;
			return;
		}
		bs->b = nb;
		bs->cap = cap;
	}
	block *k = &bs->b[bs->n];
	k->kind = kind;
	k->text = strndup(text, len);
	k->name = name ? strndup(name, nlen) : NULL;
	if (!k->text || (name && !k->name)) {
		free(k->text);
		free(k->name);
		bs->oom = 1;
		return;
	}
	bs->n++;
}

static void free_blocks(blocks *bs)
{
	for (int i = 0; i < bs->n; i++) {
		free(bs->b[i].text);
		free(bs->b[i].name);
	}
	free(bs->b);
}

/* Grows a buffer of text kept while lines of one block gather. */
typedef struct acc {
	char *s;
	size_t n, cap;
} acc;

static void acc_add(acc *a, const char *t, size_t n, blocks *bs)
{
	if (a->n + n + 2 > a->cap) {
		size_t cap = (a->n + n + 2) * 2;
		char *ns = realloc(a->s, cap);
		if (!ns) {
			bs->oom = 1;
			return;
		}
		a->s = ns;
		a->cap = cap;
	}
	memcpy(a->s + a->n, t, n);
	a->n += n;
	a->s[a->n] = 0;
}

static void flush(acc *a, int kind, blocks *bs)
{
	if (a->n)
		add_block(bs, kind, a->s, a->n, NULL, 0);
	a->n = 0;
}

/* Whether a line is an item of a numbered list: digits, ". ", then text. */
static int numbered(const char *l, size_t n)
{
	size_t i = 0;
	while (i < n && isdigit((unsigned char)l[i]))
		i++;
	return i > 0 && i + 2 < n && l[i] == '.' && l[i + 1] == ' ';
}

static void parse_md(const char *md, blocks *bs)
{
	acc para = { 0 }, code = { 0 }, lit = { 0 };
	int in_code = 0;
	for (const char *l = md; *l;) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l);
		if (in_code) {
			if (n >= 3 && !strncmp(l, "```", 3)) {
				flush(&code, B_CODE, bs);
				in_code = 0;
			} else {
				acc_add(&code, l, n, bs);
				acc_add(&code, "\n", 1, bs);
			}
		} else if (n >= 3 && !strncmp(l, "```", 3)) {
			flush(&para, B_PARA, bs);
			flush(&lit, B_LITERAL, bs);
			in_code = 1;
		} else if (n >= 4 && !strncmp(l, "    ", 4)) {
			flush(&para, B_PARA, bs);
			acc_add(&lit, l + 4, n - 4, bs);
			acc_add(&lit, "\n", 1, bs);
		} else {
			flush(&lit, B_LITERAL, bs);
			if (!n)
				flush(&para, B_PARA, bs);
			else if (n > 2 && !strncmp(l, "# ", 2)) {
				flush(&para, B_PARA, bs);
				add_block(bs, B_TITLE, l + 2, n - 2, NULL, 0);
			} else if (n > 3 && !strncmp(l, "## ", 3)) {
				flush(&para, B_PARA, bs);
				add_block(bs, B_SECTION, l + 3, n - 3, NULL, 0);
			} else if (n > 2 && !strncmp(l, "- ", 2)) {
				flush(&para, B_PARA, bs);
				add_block(bs, B_ITEM, l + 2, n - 2, NULL, 0);
			} else if (numbered(l, n)) { /* "1. ...": the answers, one a line */
				flush(&para, B_PARA, bs);
				add_block(bs, B_NUM, l, n, NULL, 0);
			} else if (n > 4 && !strncmp(l, "![", 2) && l[n - 1] == ')') {
				const char *mid = NULL; /* the last "](" : the alt text may hold escaped brackets */
				for (const char *p = l + 2; p + 1 < l + n; p++)
					if (p[0] == ']' && p[1] == '(' && p[-1] != '\\')
						mid = p;
				flush(&para, B_PARA, bs);
				if (mid)
					add_block(bs, B_FIGURE, l + 2, (size_t)(mid - l - 2), mid + 2, (size_t)(l + n - 1 - (mid + 2)));
			} else {
				if (para.n)
					acc_add(&para, " ", 1, bs);
				acc_add(&para, l, n, bs);
			}
		}
		l = e ? e + 1 : l + n;
	}
	flush(&para, B_PARA, bs);
	flush(&lit, B_LITERAL, bs);
	flush(&code, B_CODE, bs);
	free(para.s);
	free(code.s);
	free(lit.s);
}

/* Pango markup of a Markdown line: the text escaped, **bold**, *italic* and `code` where a
 * mark has its partner, a backslash escape taken literally. malloc'd. */
static char *markup(const char *s)
{
	size_t cap = strlen(s) * 6 + 64, o = 0;
	char *out = malloc(cap);
	int bold = 0, ital = 0, tt = 0;
	if (!out)
		return NULL;
#define PUT(str) do { size_t l_ = strlen(str); if (o + l_ + 16 < cap) { memcpy(out + o, str, l_); o += l_; } } while (0)
	for (const char *p = s; *p; p++) {
		if (*p == '\\' && p[1] && strchr("\\[]*`_", p[1])) {
			p++;
			char c[2] = { *p, 0 };
			PUT(c);
		} else if (!tt && p[0] == '*' && p[1] == '*' && (bold || strstr(p + 2, "**"))) {
			PUT(bold ? "</b>" : "<b>");
			bold = !bold;
			p++;
		} else if (!tt && p[0] == '*' && (ital || (p[1] && p[1] != ' ' && strchr(p + 1, '*')))) {
			PUT(ital ? "</i>" : "<i>");
			ital = !ital;
		} else if (p[0] == '`' && (tt || strchr(p + 1, '`'))) {
			PUT(tt ? "</span>" : "<span font_family=\"DejaVu Sans Mono\">");
			tt = !tt;
		} else if (*p == '&')
			PUT("&amp;");
		else if (*p == '<')
			PUT("&lt;");
		else if (*p == '>')
			PUT("&gt;");
		else {
			char c[2] = { *p, 0 };
			PUT(c);
		}
	}
	if (tt)
		PUT("</span>");
	if (ital)
		PUT("</i>");
	if (bold)
		PUT("</b>");
#undef PUT
	out[o] = 0;
	return out;
}

/* ---- setting text ---------------------------------------------------------------------------- */

typedef struct page {
	cairo_t *cr;
	double W, H, m;           /* page size, margin */
	double y;                 /* the next line's top */
	int pages;
	const char *foot;         /* a footer on every page, or NULL */
} page;

/* A layout of text (Markdown marks honoured unless plain) at size px in family, wrapped at w. */
static PangoLayout *text_layout(page *pg, const char *family, int bold, double px, const char *text, double w,
                                int plain)
{
	PangoLayout *l = pango_cairo_create_layout(pg->cr);
	PangoFontDescription *fd = pango_font_description_from_string(family);
	pango_font_description_set_absolute_size(fd, px * PANGO_SCALE);
	if (bold)
		pango_font_description_set_weight(fd, PANGO_WEIGHT_BOLD);
	pango_layout_set_font_description(l, fd);
	pango_font_description_free(fd);
	pango_layout_set_width(l, (int)(w * PANGO_SCALE));
	pango_layout_set_wrap(l, PANGO_WRAP_WORD_CHAR);
	char *mk = plain ? NULL : markup(text);
	/* markup that pango would refuse (it warns on stderr) is set as plain text instead */
	if (mk && pango_parse_markup(mk, -1, 0, NULL, NULL, NULL, NULL))
		pango_layout_set_markup(l, mk, -1);
	else
		pango_layout_set_text(l, text, -1);
	free(mk);
	return l;
}

static double layout_h(PangoLayout *l)
{
	int w, h;
	pango_layout_get_pixel_size(l, &w, &h);
	return h;
}

static void show_at(page *pg, PangoLayout *l, double x, double y, double gray)
{
	cairo_set_source_rgb(pg->cr, gray, gray, gray);
	cairo_move_to(pg->cr, x, y);
	pango_cairo_show_layout(pg->cr, l);
}

static void end_page(page *pg)
{
	if (pg->foot) {
		char buf[300];
		snprintf(buf, sizeof buf, "%s \xE2\x80\x94 %d", pg->foot, pg->pages + 1);
		PangoLayout *l = text_layout(pg, "DejaVu Sans", 0, 8, buf, pg->W - 2 * pg->m, 1);
		pango_layout_set_alignment(l, PANGO_ALIGN_CENTER);
		show_at(pg, l, pg->m, pg->H - pg->m * 0.6, 0.45);
		g_object_unref(l);
	}
	cairo_show_page(pg->cr);
	pg->pages++;
	pg->y = pg->m;
}

/* A recorded figure scaled into (x, y, w, h), its shape kept and centred; the area it took
 * (in square points) is returned. */
static double place_fig(page *pg, cairo_surface_t *fig, double x, double y, double w, double h)
{
	cairo_rectangle_t e = { 0, 0, FIG_W, FIG_H };
	cairo_recording_surface_get_extents(fig, &e);
	double k = w / e.width < h / e.height ? w / e.width : h / e.height;
	double fw = e.width * k, fh = e.height * k;
	cairo_save(pg->cr);
	cairo_translate(pg->cr, x + (w - fw) / 2, y + (h - fh) / 2);
	cairo_scale(pg->cr, k, k);
	cairo_rectangle(pg->cr, 0, 0, e.width, e.height);
	cairo_clip(pg->cr);
	cairo_set_source_surface(pg->cr, fig, 0, 0);
	cairo_paint(pg->cr);
	cairo_restore(pg->cr);
	/* a hairline frame: the figure's white edge ends somewhere on a white page */
	cairo_set_source_rgb(pg->cr, 0.8, 0.8, 0.8);
	cairo_set_line_width(pg->cr, 0.5);
	cairo_rectangle(pg->cr, x + (w - fw) / 2, y + (h - fh) / 2, fw, fh);
	cairo_stroke(pg->cr);
	return fw * fh;
}

static cairo_status_t to_file(void *closure, const unsigned char *data, unsigned int len)
{
	return fwrite(data, 1, len, closure) == len ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

/* Opens the document; its title is md's "# " line. */
static cairo_surface_t *open_doc(gb_outfile *o, double W, double H, const blocks *bs, const char *version,
                                 const char *what)
{
	cairo_surface_t *surf = cairo_pdf_surface_create_for_stream(to_file, o->fp, W, H);
	char t[300] = "glassbox lesson", cr[80];
	for (int i = 0; i < bs->n; i++)
		if (bs->b[i].kind == B_TITLE) {
			snprintf(t, sizeof t, "%s", bs->b[i].text);
			break;
		}
	cairo_pdf_surface_set_metadata(surf, CAIRO_PDF_METADATA_TITLE, t);
	cairo_pdf_surface_set_metadata(surf, CAIRO_PDF_METADATA_SUBJECT, what);
	snprintf(cr, sizeof cr, "glassbox %s", version ? version : "");
	cairo_pdf_surface_set_metadata(surf, CAIRO_PDF_METADATA_CREATOR, cr);
	return surf;
}

static int close_doc(gb_outfile *o, cairo_surface_t *surf, cairo_t *cr, int oom, const char *path, gb_verr *err)
{
	cairo_destroy(cr);
	cairo_surface_finish(surf);
	cairo_status_t st = cairo_surface_status(surf);
	cairo_surface_destroy(surf);
	if (oom || st != CAIRO_STATUS_SUCCESS) {
		gb_outfile_abort(o);
		return gb_vfail(err, "cannot write '%s': %s", path, oom ? "out of memory" : cairo_status_to_string(st));
	}
	return gb_outfile_commit(o, err);
}

/* ---- terminal text too wide for its page ------------------------------------------------- */

/* Code points in s[0, n): columns of a monospace line. */
static int ncols(const char *s, size_t n)
{
	int c = 0;
	for (size_t i = 0; i < n; i++)
		c += ((unsigned char)s[i] & 0xC0) != 0x80;
	return c;
}

/* The byte offset after k code points of s[0, n). */
static size_t at_col(const char *s, size_t n, int k)
{
	size_t i = 0;
	for (int c = 0; i < n; i++) {
		if (((unsigned char)s[i] & 0xC0) != 0x80 && c++ == k)
			break;
	}
	return i;
}

#define CONT_OUT "  \xE2\x86\xAA " /* "  ↪ ": the rest of a line of output */
#define CONT_CMD "    "            /* the rest of a command, after " \" */

/* Lines of terminal text (commands and what they printed, literal lines) broken to cols
 * columns where they are longer: a command ("glassbox> ...") at a space, ending in " \" with
 * the rest indented under it, so the whole command is there to copy; printed output at a
 * space near the end of the room where there is one, else at the column, the rest after
 * "  ↪ ". Text that fits comes back unchanged. malloc'd; *broken (may be NULL) counts the
 * lines that were broken. */
static char *wrap_cols(const char *text, int cols, int *broken)
{
	size_t len = strlen(text), cap = len * 3 + 256, o = 0;
	char *out = malloc(cap);
	int nb = 0;
	if (!out)
		return NULL;
	if (cols < 24)
		cols = 24;
	for (const char *l = text; *l;) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l);
		int cmd = !strncmp(l, "glassbox> ", 10), first = 1;
		const char *r = l;
		size_t rn = n;
		nb += ncols(l, n) > cols;
		for (;;) {
			int room = first ? cols : cols - 4, c = ncols(r, rn);
			if (c <= room) {
				if (!first) {
					const char *pre = cmd ? CONT_CMD : CONT_OUT;
					size_t pl = strlen(pre);
					if (o + pl + 2 >= cap)
						break;
					memcpy(out + o, pre, pl);
					o += pl;
				}
				if (o + rn + 2 >= cap)
					break;
				memcpy(out + o, r, rn);
				o += rn;
				break;
			}
			/* where to break: a command at a space leaving room for " \", output at a space
			 * in the last quarter of the room, else at the room */
			int lim = cmd ? room - 2 : room;
			size_t cut = at_col(r, rn, lim), brk = 0;
			size_t low = cmd ? 1 : at_col(r, rn, lim * 3 / 4);
			for (size_t k = cut; k > low; k--)
				if (r[k] == ' ' && r[k - 1] != ' ') {
					brk = k;
					break;
				}
			if (!brk)
				brk = cut;
			const char *pre = first ? "" : cmd ? CONT_CMD : CONT_OUT;
			size_t pl = strlen(pre);
			if (o + pl + brk + 8 >= cap)
				break;
			memcpy(out + o, pre, pl);
			o += pl;
			memcpy(out + o, r, brk);
			o += brk;
			if (cmd) {
				memcpy(out + o, " \\", 2);
				o += 2;
			}
			out[o++] = '\n';
			while (brk < rn && r[brk] == ' ')
				brk++;
			r += brk;
			rn -= brk;
			first = 0;
		}
		if (e)
			out[o++] = '\n';
		l = e ? e + 1 : l + n;
	}
	out[o] = 0;
	if (broken)
		*broken = nb;
	return out;
}

/* The advance of one monospace column at px. */
static double mono_adv(page *pg, double px)
{
	PangoLayout *l = text_layout(pg, "DejaVu Sans Mono", 0, px, "0000000000000000000000000000000000000000", -1, 1);
	pango_layout_set_width(l, -1);
	int w, h;
	pango_layout_get_size(l, &w, &h);
	g_object_unref(l);
	return (double)w / PANGO_SCALE / 40;
}

/* The width of the widest line of text set in monospace at px, unwrapped. */
static double mono_width(page *pg, double px, const char *text)
{
	PangoLayout *l = text_layout(pg, "DejaVu Sans Mono", 0, px, text, -1, 1);
	pango_layout_set_width(l, -1);
	int w, h;
	pango_layout_get_pixel_size(l, &w, &h);
	g_object_unref(l);
	return w;
}

/* ---- the handout ---------------------------------------------------------------------------- */

/* The smallest type of terminal output in the handout, in points: 6.5 pt of DejaVu Sans Mono
 * still reads on paper and holds about 119 columns in the A4 text width; a longer line is
 * broken there (wrap_cols: a command stays whole to copy) rather than set smaller. */
#define MONO_MIN 6.5

/* Room for h more on this page, or a new one. */
static void need(page *pg, double h)
{
	if (pg->y + h > pg->H - pg->m && pg->y > pg->m + 1)
		end_page(pg);
}

static void flow_text(page *pg, const char *family, int bold, double px, const char *text, double indent,
                      double before, double after, double gray, int plain)
{
	double w = pg->W - 2 * pg->m - indent;
	PangoLayout *l = text_layout(pg, family, bold, px, text, w, plain);
	double h = layout_h(l);
	need(pg, before + h);
	pg->y += before;
	show_at(pg, l, pg->m + indent, pg->y, gray);
	pg->y += h + after;
	g_object_unref(l);
}

int gb_pdfbook_handout(gb_pdfbook *b, const char *md, const char *path, const char *version, int *pages,
                       gb_verr *err)
{
	blocks bs = { 0 };
	gb_outfile o;
	parse_md(md, &bs);
	if (gb_outfile_open(&o, path, 1, err)) {
		free_blocks(&bs);
		return -1;
	}
	const double W = 595.28, H = 841.89; /* A4 in points */
	cairo_surface_t *surf = open_doc(&o, W, H, &bs, version, "a glassbox lesson: the handout");
	page pg = { cairo_create(surf), W, H, 56, 56, 0, NULL };
	char foot[256] = "glassbox";
	for (int i = 0; i < bs.n; i++) {
		block *k = &bs.b[i];
		switch (k->kind) {
		case B_TITLE:
			snprintf(foot, sizeof foot, "%s", k->text);
			pg.foot = foot;
			flow_text(&pg, "DejaVu Sans", 1, 22, k->text, 0, 0, 10, 0.1, 0);
			break;
		case B_SECTION:
			/* a heading never ends a page alone: it needs a few lines under it */
			need(&pg, 90);
			flow_text(&pg, "DejaVu Sans", 1, 15, k->text, 0, 14, 6, 0.1, 0);
			break;
		case B_PARA:
			flow_text(&pg, "DejaVu Sans", 0, 10.5, k->text, 0, 0, 7, 0.1, 0);
			break;
		case B_NUM:
			flow_text(&pg, "DejaVu Sans", 0, 10.5, k->text, 0, 0, 3, 0.1, 0);
			if (i + 1 >= bs.n || bs.b[i + 1].kind != B_NUM)
				pg.y += 5;
			break;
		case B_ITEM: {
			char *t = malloc(strlen(k->text) + 8);
			if (t) {
				sprintf(t, "\xE2\x80\xA2 %s", k->text);
				flow_text(&pg, "DejaVu Sans", 0, 10.5, t, 14, 0, 3, 0.1, 0);
				free(t);
			}
			if (i + 1 >= bs.n || bs.b[i + 1].kind != B_ITEM)
				pg.y += 5;
			break;
		}
		case B_CODE:
		case B_LITERAL: {
			/* terminal output is a table more often than prose: its lines are not wrapped
			 * where it can be helped. The type gets small enough for the longest line, down
			 * to MONO_MIN; a line longer still is broken at the column (wrap_cols). */
			double w = pg.W - 2 * pg.m - 16, px = k->kind == B_CODE ? 8 : 9.5;
			double lw = mono_width(&pg, px, k->text);
			char *text = NULL;
			if (lw > w) {
				px = fmax(MONO_MIN, floor(px * w / lw * 10) / 10);
				/* a tenth of a point at a time from there: hinting is not linear */
				while ((lw = mono_width(&pg, px, k->text)) > w && px > MONO_MIN + 0.05)
					px = fmax(MONO_MIN, px - 0.1);
				for (int cols = (int)floor(w / mono_adv(&pg, px)); lw > w && cols > 24; cols--) {
					free(text);
					text = wrap_cols(k->text, cols, NULL);
					lw = text ? mono_width(&pg, px, text) : 0;
				}
			}
			PangoLayout *l = text_layout(&pg, "DejaVu Sans Mono", 0, px, text ? text : k->text, w, 1);
			pango_layout_set_width(l, -1);
			free(text);
			double h = layout_h(l);
			need(&pg, h + 12);
			cairo_set_source_rgb(pg.cr, 0.95, 0.95, 0.95);
			cairo_rectangle(pg.cr, pg.m, pg.y, pg.W - 2 * pg.m, h + 10);
			cairo_fill(pg.cr);
			show_at(&pg, l, pg.m + 8, pg.y + 5, 0.1);
			pg.y += h + 18;
			g_object_unref(l);
			break;
		}
		case B_FIGURE: {
			cairo_surface_t *fig = find_fig(b, k->name);
			double w = pg.W - 2 * pg.m, h = w * FIG_H / FIG_W;
			if (!fig) { /* a figure the book did not record: its name, never a blank */
				flow_text(&pg, "DejaVu Sans", 0, 10.5, k->name, 0, 0, 7, 0.1, 1);
				break;
			}
			need(&pg, h + 24);
			place_fig(&pg, fig, pg.m, pg.y, w, h);
			pg.y += h + 4;
			flow_text(&pg, "DejaVu Sans", 0, 8.5, k->text, 0, 0, 10, 0.4, 0);
			break;
		}
		}
	}
	end_page(&pg);
	if (pages)
		*pages = pg.pages;
	int rc = close_doc(&o, surf, pg.cr, bs.oom, path, err);
	free_blocks(&bs);
	return rc;
}

/* ---- slides ------------------------------------------------------------------------------- */

/* The slide's geometry in points (a 960 x 540 page). No text on a slide is smaller than
 * SL_MIN: 11 pt of 960 is 18.3 px of 1600, the design's bar for figures ("the smallest text
 * is 18 px"). A step's text is set as large as fits, up to SL_BODY_MAX. */
#define SL_SIDE 12.0
#define SL_TOP 8.0
#define SL_HEAD_PX 22.0
#define SL_CAP_PX 14.0
#define SL_CAP_LINES 2
#define SL_MIN 11.0
#define SL_BODY_MAX 28.0
#define SL_Q_FIG 15.0  /* questions under a figure */
#define SL_Q_TEXT 17.0 /* questions on a slide of text */
#define SL_MONO 0.85 /* terminal text and formulas against the prose: monospace looks larger */

/* What a step shows, in its order: prose, list items, literal lines (formulas, small tables),
 * what a command printed (not the output of the command that drew a figure: the figure is its
 * point), and questions with their options. */
enum { P_PROSE, P_ITEM, P_LITERAL, P_OUTPUT, P_QUESTION };

typedef struct piece {
	int kind;
	char *text;               /* Markdown (prose, items, questions) or plain lines */
	int seg;                  /* how many of the step's figures come before it */
	int slide;                /* which of the step's slides shows it */
	int cap;                  /* shown as the caption under its slide's figure */
} piece;

typedef struct plan {
	piece *p;
	int n;
	const rec **figs;         /* (n_figs) the step's figures in order */
	int n_figs;
	int *fig_of;              /* (n_slides) each slide's figure, or -1: a slide of text */
	int n_slides;
	int oom;
} plan;

static void add_piece(plan *P, int kind, const char *text, size_t len, int seg)
{
	piece *np = realloc(P->p, sizeof *np * (size_t)(P->n + 1));
	char *t = strndup(text, len);
	if (!np || !t) {
		if (np)
			P->p = np;
		free(t);
		P->oom = 1;
		return;
	}
	P->p = np;
	P->p[P->n++] = (piece){ kind, t, seg, -1, 0 };
}

static int add_slide(plan *P, int fig)
{
	int *nf = realloc(P->fig_of, sizeof *nf * (size_t)(P->n_slides + 1));
	if (!nf) {
		P->oom = 1;
		return 0;
	}
	P->fig_of = nf;
	P->fig_of[P->n_slides] = fig;
	return P->n_slides++;
}

static void free_plan(plan *P)
{
	for (int i = 0; i < P->n; i++)
		free(P->p[i].text);
	free(P->p);
	free(P->figs);
	free(P->fig_of);
}

static int is_question(const block *k)
{
	return k->kind == B_PARA && !strncmp(k->text, "**Question", 10);
}

/* A fenced block of commands and what they printed, one piece per command that printed
 * something; the command whose figure follows the block gives none (the figure shows it). */
static void code_pieces(plan *P, const char *t, int fig_next, int seg)
{
	const char *g = t;        /* the group's start */
	int has_out = 0;
	for (const char *l = t;; ) {
		const char *e = strchr(l, '\n');
		int last = !e || !e[1];
		const char *next = e ? e + 1 : l + strlen(l);
		int cmd = !strncmp(l, "glassbox> ", 10);
		if (cmd && l > g) { /* a new command closes the group before it */
			if (has_out)
				add_piece(P, P_OUTPUT, g, (size_t)(l - g - 1), seg);
			g = l;
			has_out = 0;
		} else if (!cmd && l < next && *l != '\n')
			has_out = 1;
		if (last) {
			size_t n = (size_t)(next - g);
			while (n && g[n - 1] == '\n')
				n--;
			if (has_out && !fig_next)
				add_piece(P, P_OUTPUT, g, n, seg);
			break;
		}
		l = next;
	}
}

/* The pieces and figures of section [from, to). */
static void collect(plan *P, const blocks *bs, int from, int to, const gb_pdfbook *b)
{
	int seg = 0, q = -1; /* q: the question whose options may follow */
	for (int i = from + 1; i < to; i++) {
		const block *k = &bs->b[i];
		int opt = k->kind == B_ITEM && q >= 0;
		if (k->kind != B_ITEM)
			q = -1;
		switch (k->kind) {
		case B_NUM:
		case B_PARA:
			if (is_question(k)) {
				add_piece(P, P_QUESTION, k->text, strlen(k->text), seg);
				q = P->n - 1;
			} else if (strncmp(k->text, "*Hint", 5))
				add_piece(P, P_PROSE, k->text, strlen(k->text), seg);
			break;
		case B_ITEM:
			if (opt && !P->oom) {
				piece *qp = &P->p[q];
				size_t a = strlen(qp->text), c = strlen(k->text);
				char *t = realloc(qp->text, a + c + 6);
				if (!t) {
					P->oom = 1;
					break;
				}
				sprintf(t + a, "\n    %s", k->text);
				qp->text = t;
			} else
				add_piece(P, P_ITEM, k->text, strlen(k->text), seg);
			break;
		case B_LITERAL: {
			size_t n = strlen(k->text);
			while (n && k->text[n - 1] == '\n')
				n--;
			add_piece(P, P_LITERAL, k->text, n, seg);
			break;
		}
		case B_CODE:
			code_pieces(P, k->text, i + 1 < to && bs->b[i + 1].kind == B_FIGURE && find_rec(b, bs->b[i + 1].name), seg);
			break;
		case B_FIGURE: {
			const rec *r = find_rec(b, k->name);
			if (!r)
				break;
			const rec **nf = realloc(P->figs, sizeof *nf * (size_t)(P->n_figs + 1));
			if (!nf) {
				P->oom = 1;
				break;
			}
			P->figs = nf;
			P->figs[P->n_figs++] = r;
			seg++;
			break;
		}
		}
	}
}

/* The Markdown of slide sl's pieces, joined a line apart: its caption (caps 1) or the rest,
 * its questions (questions 1) or the rest. */
static char *join(const plan *P, int sl, int caps, int questions)
{
	size_t n = 1;
	for (int i = 0; i < P->n; i++)
		n += strlen(P->p[i].text) + 1;
	char *s = malloc(n), *o = s;
	if (!s)
		return NULL;
	*s = 0;
	for (int i = 0; i < P->n; i++) {
		const piece *p = &P->p[i];
		if (p->slide != sl || p->cap != caps || (p->kind == P_QUESTION) != questions)
			continue;
		o += sprintf(o, "%s%s", o > s ? "\n" : "", p->text);
	}
	return s;
}

/* The Markdown of segment s's text (not its questions), after `before` (may be NULL). */
static char *seg_text(const plan *P, int s, const char *before)
{
	size_t n = (before ? strlen(before) : 0) + 2;
	for (int i = 0; i < P->n; i++)
		n += strlen(P->p[i].text) + 1;
	char *t = malloc(n), *o = t;
	if (!t)
		return NULL;
	o += sprintf(o, "%s", before ? before : "");
	for (int i = 0; i < P->n; i++)
		if (P->p[i].seg == s && P->p[i].kind != P_QUESTION)
			o += sprintf(o, "%s%s", o > t ? "\n" : "", P->p[i].text);
	return t;
}

/* Where the last sentence of a paragraph starts (0: it is one sentence): after ". ", "! " or
 * "? " that follows a word and comes before a capital, a quote or code ("q_i . k_j" and
 * "e.g. a" go on). */
static size_t last_sentence(const char *p)
{
	size_t at = 0;
	for (size_t i = 1; p[i] && p[i + 1] && p[i + 2]; i++)
		if (strchr(".!?", p[i]) && p[i + 1] == ' ' && p[i - 1] != ' ' && p[i - 1] != '.' &&
		    (isupper((unsigned char)p[i + 2]) || strchr("`\"*", p[i + 2])))
			at = i + 2;
	return at;
}

/* Piece i cut in two at byte k of its text, the second part a piece of its own after it. */
static int split_piece(plan *P, int i, size_t k)
{
	piece *np = realloc(P->p, sizeof *np * (size_t)(P->n + 1));
	if (!np) {
		P->oom = 1;
		return 0;
	}
	P->p = np;
	char *rest = strdup(np[i].text + k);
	if (!rest) {
		P->oom = 1;
		return 0;
	}
	memmove(&np[i + 2], &np[i + 1], sizeof *np * (size_t)(P->n - i - 1));
	np[i + 1] = np[i];
	np[i + 1].text = rest;
	while (k > 0 && np[i].text[k - 1] == ' ')
		k--;
	np[i].text[k] = 0;
	P->n++;
	return 1;
}

/* Whether text goes under a figure as its caption: SL_CAP_LINES lines at SL_CAP_PX at most. */
static int caption_fits(page *pg, const char *text, double w)
{
	PangoLayout *l = text_layout(pg, "DejaVu Sans", 0, SL_CAP_PX, text, w, 0);
	int lines = pango_layout_get_line_count(l);
	g_object_unref(l);
	return lines <= SL_CAP_LINES;
}

/* Which slide shows what. A step without a figure is one slide of text (more when it cannot
 * fit at SL_MIN). A step of n figures gives n figure slides; the text between them goes with
 * the figure it introduces: as its caption when it is prose short enough, else on a slide of
 * its own before that figure (a paragraph ending in a colon that leads into the figure stays
 * its caption); text after the last figure is that figure's caption too when it fits with the
 * caption it has, else a slide after it. A question goes with the text it follows, or onto
 * the slide of the figure before it. */
static void plan_slides(plan *P, page *pg, double w)
{
	int nf = P->n_figs;
	if (!nf) {
		add_slide(P, -1);
		for (int i = 0; i < P->n; i++)
			P->p[i].slide = 0;
		return;
	}
	int *fig_slide = calloc((size_t)nf, sizeof *fig_slide);
	if (!fig_slide) {
		P->oom = 1;
		return;
	}
	for (int s = 0; s <= nf && !P->oom; s++) {
		int first = -1, last = -1, prose_only = 1;
		for (int i = 0; i < P->n; i++)
			if (P->p[i].seg == s && P->p[i].kind != P_QUESTION) {
				first = first < 0 ? i : first;
				last = i;
				prose_only &= P->p[i].kind == P_PROSE;
			}
		/* the caption: all the segment's text, or the colon paragraph that ends it */
		int cap_from = -1;
		if (first >= 0) {
			char *have = s == nf ? join(P, fig_slide[nf - 1], 1, 0) : NULL;
			char *t = seg_text(P, s, have);
			const char *lt = P->p[last].text;
			size_t ln = strlen(lt);
			if (prose_only && t && caption_fits(pg, t, w))
				cap_from = first;
			else if (s < nf && P->p[last].kind == P_PROSE && ln && lt[ln - 1] == ':') {
				size_t k = last_sentence(lt);
				if (caption_fits(pg, lt, w))
					cap_from = last;
				else if (k && caption_fits(pg, lt + k, w) && split_piece(P, last, k))
					cap_from = last + 1; /* its last sentence leads into the figure */
			}
			free(have);
			free(t);
		}
		/* the body: the segment's text not in the caption, on a slide of its own */
		int body = -1, body_first = -1;
		for (int i = 0; i < P->n; i++)
			if (P->p[i].seg == s && P->p[i].kind != P_QUESTION && (cap_from < 0 || i < cap_from)) {
				if (body < 0)
					body = add_slide(P, -1);
				body_first = body_first < 0 ? i : body_first;
				P->p[i].slide = body;
			}
		if (s < nf)
			fig_slide[s] = add_slide(P, s);
		for (int i = 0; i < P->n; i++) {
			piece *p = &P->p[i];
			if (p->seg != s)
				continue;
			if (p->kind != P_QUESTION) {
				if (cap_from >= 0 && i >= cap_from) {
					p->slide = fig_slide[s < nf ? s : nf - 1];
					p->cap = 1;
				}
			} else if (body >= 0 && (s == 0 || i > body_first))
				p->slide = body;
			else
				p->slide = fig_slide[s > 0 ? s - 1 : 0];
		}
	}
	free(fig_slide);
}

/* Plain text as Pango markup: escaped, its first line (the command) in grey when gray_first. */
static char *mono_markup(const char *text, int gray_first)
{
	const char *e = gray_first ? strchr(text, '\n') : NULL;
	char *a = g_markup_escape_text(text, e ? (gssize)(e - text) : -1);
	char *b = e ? g_markup_escape_text(e, -1) : NULL;
	char *out = e ? g_strdup_printf("<span foreground=\"#707070\">%s</span>%s", a, b) : g_strdup(a);
	g_free(a);
	g_free(b);
	return out;
}

/* A monospace layout of text at px, its lines as they are (plain, or markup). */
static PangoLayout *mono_layout(page *pg, double px, const char *text, int gray_first)
{
	PangoLayout *l = text_layout(pg, "DejaVu Sans Mono", 0, px, "", -1, 1);
	char *mk = mono_markup(text, gray_first);
	pango_layout_set_width(l, -1);
	pango_layout_set_markup(l, mk, -1);
	g_free(mk);
	return l;
}

/* The monospace size for a block of terminal text next to prose of size px: SL_MONO of it, or
 * smaller for the longest line to fit w, never under SL_MIN (then *wrap says at how many
 * columns its long lines break). */
static double mono_px(page *pg, double px, const char *text, double w, int *wrap)
{
	double want = fmax(SL_MIN, px * SL_MONO), lw = mono_width(pg, 10, text);
	double fit = lw > 0 ? floor(10 * w / lw * 4) / 4 : want;
	*wrap = 0;
	if (fit >= want)
		fit = want;
	/* widths do not scale quite linearly (hinting): a quarter point at a time from there */
	while (fit > SL_MIN && mono_width(pg, fit, text) > w)
		fit = fmax(SL_MIN, fit - 0.25);
	if (fit >= SL_MIN && mono_width(pg, fit, text) <= w)
		return fit;
	int cols = (int)floor(w / mono_adv(pg, SL_MIN));
	char *t;
	while (cols > 24 && (t = wrap_cols(text, cols, NULL))) {
		double tw2 = mono_width(pg, SL_MIN, t);
		free(t);
		if (tw2 <= w)
			break;
		cols--;
	}
	*wrap = cols;
	return SL_MIN;
}

/* The text pieces of a slide of text, set at prose size px from (x, y) in width w: drawn when
 * draw, measured always; the height they take is returned. With cols, a long narrow output
 * (more than 24 lines) is set in as many columns as fit (up to 3). */
static double body(page *pg, piece *const *ps, int n, double px, int cols, double x, double y, double w, int draw)
{
	double y0 = y;
	for (int i = 0; i < n; i++) {
		const piece *p = ps[i];
		double gap = 0.55 * px;
		if (i + 1 < n && p->kind == P_ITEM && ps[i + 1]->kind == P_ITEM)
			gap = 0.2 * px;
		if (p->kind == P_PROSE || p->kind == P_ITEM) {
			double ind = p->kind == P_ITEM ? 1.1 * px : 0;
			PangoLayout *l = text_layout(pg, "DejaVu Sans", 0, px, p->text, w - ind, 0);
			if (draw) {
				show_at(pg, l, x + ind, y, 0.12);
				if (ind) {
					PangoLayout *bl = text_layout(pg, "DejaVu Sans", 0, px, "\xE2\x80\xA2", ind, 1);
					show_at(pg, bl, x + 0.2 * px, y, 0.12);
					g_object_unref(bl);
				}
			}
			y += layout_h(l) + gap;
			g_object_unref(l);
			continue;
		}
		/* literal lines (formulas, small tables) indented; printed output in a grey box,
		 * its command above it in grey */
		int out = p->kind == P_OUTPUT, wrap;
		double pad = out ? 8 : 1.2 * px, room = w - (out ? 2 * pad : pad);
		double mpx = mono_px(pg, px, p->text, room, &wrap);
		char *t = wrap ? wrap_cols(p->text, wrap, NULL) : NULL;
		const char *text = t ? t : p->text;
		/* columns: the lines dealt out evenly, the command heading the first */
		int nl = 1, nc = 1;
		for (const char *c = text; *c; c++)
			nl += *c == '\n';
		double lw = mono_width(pg, mpx, text), cgap = 2.5 * mpx;
		if (cols && out && nl > 24)
			while (nc < 3 && (nc + 1) * lw + nc * cgap <= room && (nl + nc) / (nc + 1) >= 6)
				nc++;
		if (draw && out) { /* the box first, measured as the text will be set */
			cairo_set_source_rgb(pg->cr, 0.94, 0.94, 0.95);
			cairo_rectangle(pg->cr, x, y, w, body(pg, &ps[i], 1, px, cols, x, y, w, 0));
			cairo_fill(pg->cr);
		}
		double h = 0;
		const char *c = text;
		for (int k = 0; k < nc; k++) {
			int take = (nl + nc - 1 - k) / nc; /* the first columns take the extra lines */
			const char *e = c;
			for (int j = 0; j < take && *e; j++) {
				const char *nx = strchr(e, '\n');
				e = nx ? nx + 1 : e + strlen(e);
			}
			char *part = strndup(c, (size_t)(e - c));
			size_t pl = part ? strlen(part) : 0;
			if (pl && part[pl - 1] == '\n')
				part[pl - 1] = 0;
			PangoLayout *l = mono_layout(pg, mpx, part ? part : "", out && k == 0 && !strncmp(text, "glassbox> ", 10));
			double lh = layout_h(l);
			if (draw)
				show_at(pg, l, x + pad + k * (lw + cgap), y + (out ? 0.4 * mpx : 0), out ? 0.08 : 0.05);
			h = fmax(h, lh);
			g_object_unref(l);
			free(part);
			c = e;
		}
		if (out)
			h += 0.8 * mpx;
		y += h + gap;
		free(t);
	}
	return y - y0 - (n ? 0.55 * px : 0);
}

/* The heading on one line at the top; the y under it is returned (measured only when !draw). */
static double slide_heading(page *pg, const char *head, int draw)
{
	const double m = SL_SIDE, w = pg->W - 2 * m;
	PangoLayout *hl = text_layout(pg, "DejaVu Sans", 1, SL_HEAD_PX, head, w, 0);
	pango_layout_set_ellipsize(hl, PANGO_ELLIPSIZE_END);
	if (draw)
		show_at(pg, hl, m, SL_TOP, 0.1);
	double top = SL_TOP + layout_h(hl) + 4;
	g_object_unref(hl);
	return top;
}

/* The questions (Markdown, a line each, options indented) in a tinted box at the bottom, at
 * px (4/5 of it when they would take more than 40% of the page), drawn when draw; the y over
 * the box is returned (the page's bottom without questions). */
static double slide_questions(page *pg, const char *qs, double px, int draw)
{
	const double m = SL_SIDE, w = pg->W - 2 * m;
	double bottom = pg->H - 8;
	if (!qs || !*qs)
		return bottom;
	PangoLayout *ql = text_layout(pg, "DejaVu Sans", 0, px, qs, w - 24, 0);
	double qh = layout_h(ql);
	if (qh > 0.4 * pg->H) { /* many questions: smaller, never off the page */
		g_object_unref(ql);
		ql = text_layout(pg, "DejaVu Sans", 0, fmax(SL_MIN, 0.8 * px), qs, w - 24, 0);
		qh = layout_h(ql);
	}
	bottom -= qh + 12;
	if (draw) {
		cairo_set_source_rgb(pg->cr, 0.93, 0.95, 0.99);
		cairo_rectangle(pg->cr, m, bottom, w, qh + 12);
		cairo_fill(pg->cr);
		show_at(pg, ql, m + 12, bottom + 6, 0.1);
	}
	g_object_unref(ql);
	return bottom - 4;
}

/* A figure slide: the heading, the figure in the layout whose shape fills the room best, its
 * caption under it (the step's own words, centred), the questions at the bottom. */
static void fig_slide(page *pg, const char *head, const rec *fig, const char *cap, const char *qs)
{
	const double m = SL_SIDE, w = pg->W - 2 * m;
	double top = slide_heading(pg, head, 1), bottom = slide_questions(pg, qs, SL_Q_FIG, 1);
	if (cap && *cap) {
		PangoLayout *cl = text_layout(pg, "DejaVu Sans", 0, SL_CAP_PX, cap, w, 0);
		pango_layout_set_alignment(cl, PANGO_ALIGN_CENTER);
		bottom -= layout_h(cl);
		show_at(pg, cl, m, bottom, 0.25);
		bottom -= 4;
		g_object_unref(cl);
	}
	if (bottom - top > 40) {
		cairo_surface_t *best = fig->v[0];
		double area = 0;
		for (int v = 0; v < N_SLIDE; v++) {
			double k = fmin(w / FIG_W, (bottom - top) / SLIDE_H(v));
			if (FIG_W * k * SLIDE_H(v) * k > area * 1.0001) {
				area = FIG_W * k * SLIDE_H(v) * k;
				best = fig->v[v];
			}
		}
		place_fig(pg, best, m, top, w, bottom - top);
	}
	end_page(pg);
}

/* The largest prose size, from SL_BODY_MAX down by 1 pt, at which the pieces fit in room,
 * output in columns only when one column does not fit (*cols); 0 when not even at SL_MIN. */
static double fit_px(page *pg, piece *const *ps, int n, double w, double room, int *cols)
{
	for (double px = SL_BODY_MAX; px >= SL_MIN; px -= 1)
		for (*cols = 0; *cols < 2; (*cols)++)
			if (body(pg, ps, n, px, *cols, 0, 0, w, 0) <= room)
				return px;
	*cols = 1;
	return 0;
}

/* The questions of a slide of text that shows body pieces [a, b): those whose anchor (the
 * number of body pieces before them) falls in it, the ones before any piece on the first. */
static char *anchored_questions(piece *const *qs, const int *anchor, int nq, int a, int b)
{
	size_t n = 1;
	for (int i = 0; i < nq; i++)
		n += strlen(qs[i]->text) + 1;
	char *t = malloc(n), *o = t;
	if (!t)
		return NULL;
	*t = 0;
	for (int i = 0; i < nq; i++) {
		int at = anchor[i] > 0 ? anchor[i] - 1 : 0;
		if (at >= a && at < b)
			o += sprintf(o, "%s%s", o > t ? "\n" : "", qs[i]->text);
	}
	return t;
}

/* One slide of text: the heading, body pieces at px, the questions. */
static void draw_text_slide(page *pg, const char *head, piece *const *ps, int n, double px, int cols, const char *qs)
{
	const double m = SL_SIDE + 8, w = pg->W - 2 * m;
	double top = slide_heading(pg, head, 1) + 10, qtop = slide_questions(pg, qs, SL_Q_TEXT, 1);
	cairo_save(pg->cr);
	cairo_rectangle(pg->cr, 0, 0, pg->W, qtop + 2);
	cairo_clip(pg->cr); /* only a piece longer than a whole slide at SL_MIN reaches past it */
	body(pg, ps, n, px, cols, m, top, w, 1);
	cairo_restore(pg->cr);
	end_page(pg);
}

/* The slides of a step's text (pieces in order, questions among them): as large as it fits
 * on one slide; when that is smaller than SL_COMFY, split into two or three slides of about
 * equal length where each is set larger, each question on the slide of the piece it follows;
 * what fits nowhere at SL_MIN is cut at the slide's bottom. */
#define SL_COMFY 16.0
static void text_slides(page *pg, const char *head, piece *const *all, int n_all)
{
	const double w = pg->W - 2 * (SL_SIDE + 8);
	piece **B = malloc(sizeof *B * (size_t)(n_all + 1)), **Q = malloc(sizeof *Q * (size_t)(n_all + 1));
	int *anchor = malloc(sizeof *anchor * (size_t)(n_all + 1)), nb = 0, nq = 0;
	double *hh = malloc(sizeof *hh * (size_t)(n_all + 1));
	if (!B || !Q || !anchor || !hh)
		goto out;
	for (int i = 0; i < n_all; i++) {
		if (all[i]->kind == P_QUESTION) {
			anchor[nq] = nb;
			Q[nq++] = all[i];
		} else
			B[nb++] = all[i];
	}
	char h2[600];
	snprintf(h2, sizeof h2, "%s (continued)", head);
	double top = slide_heading(pg, head, 0) + 10;
	if (!nb) { /* questions alone */
		char *qs = anchored_questions(Q, anchor, nq, 0, 1);
		draw_text_slide(pg, head, B, 0, SL_MIN, 0, qs);
		free(qs);
		goto out;
	}
	/* each piece's height at SL_MIN, to cut the text into slides of about equal length */
	double total = 0;
	for (int i = 0; i < nb; i++)
		total += hh[i] = body(pg, &B[i], 1, SL_MIN, 1, 0, 0, w, 0) + 0.55 * SL_MIN;
	int best_k = 0, cut[4] = { 0 }, best_cut[4] = { 0 };
	double best = -1;
	for (int k = 1; k <= 3 && k <= nb; k++) {
		/* cut g ends where the running height comes nearest g/k of the total */
		double run = 0, score = 1e9;
		int g = 1;
		cut[0] = 0;
		for (int i = 0; i < nb && g < k; i++) {
			double before = run;
			run += hh[i];
			if (run >= total * g / k) {
				int end = run - total * g / k < total * g / k - before || i == cut[g - 1] ? i + 1 : i;
				cut[g++] = end;
			}
		}
		while (g < k) /* fewer pieces than slides: not this k */
			cut[g++] = nb;
		cut[k] = nb;
		/* a paragraph that ends in a colon stays with what it introduces */
		for (int j = 1; j < k; j++) {
			const char *t = B[cut[j] - 1]->text;
			size_t tl = strlen(t);
			if (cut[j] < nb && B[cut[j] - 1]->kind == P_PROSE && tl && t[tl - 1] == ':')
				cut[j] += cut[j] - 1 > cut[j - 1] ? -1 : 1;
		}
		for (int j = 0; j < k; j++) {
			int cols;
			char *qs = anchored_questions(Q, anchor, nq, cut[j], cut[j + 1]);
			double room = slide_questions(pg, qs, SL_Q_TEXT, 0) - top - 6;
			double px = cut[j + 1] > cut[j] ? fit_px(pg, B + cut[j], cut[j + 1] - cut[j], w, room, &cols) : 0;
			free(qs);
			score = fmin(score, px);
		}
		if (score > best + 0.5) {
			best = score;
			best_k = k;
			memcpy(best_cut, cut, sizeof cut);
		}
		if (best >= SL_COMFY)
			break;
	}
	if (best > 0) {
		for (int j = 0; j < best_k; j++) {
			int cols;
			char *qs = anchored_questions(Q, anchor, nq, best_cut[j], best_cut[j + 1]);
			double room = slide_questions(pg, qs, SL_Q_TEXT, 0) - top - 6;
			double px = fit_px(pg, B + best_cut[j], best_cut[j + 1] - best_cut[j], w, room, &cols);
			draw_text_slide(pg, j ? h2 : head, B + best_cut[j], best_cut[j + 1] - best_cut[j], px, cols, qs);
			free(qs);
		}
		goto out;
	}
	/* too much even for three slides at SL_MIN: as many pieces a slide as fit, in order */
	for (int i = 0; i < nb;) {
		int j = i + 1;
		for (;;) {
			char *qs = anchored_questions(Q, anchor, nq, i, j + 1);
			double room = slide_questions(pg, qs, SL_Q_TEXT, 0) - top - 6;
			free(qs);
			if (j >= nb || body(pg, B + i, j + 1 - i, SL_MIN, 1, 0, 0, w, 0) > room)
				break;
			j++;
		}
		char *qs = anchored_questions(Q, anchor, nq, i, j);
		draw_text_slide(pg, i ? h2 : head, B + i, j - i, SL_MIN, 1, qs);
		free(qs);
		i = j;
	}
out:
	free(B);
	free(Q);
	free(anchor);
	free(hh);
}

/* The slides of section [from, to) of bs. */
static void step_slides(page *pg, const blocks *bs, int from, int to, const gb_pdfbook *b)
{
	plan P = { 0 };
	collect(&P, bs, from, to, b);
	plan_slides(&P, pg, pg->W - 2 * SL_SIDE);
	if (P.oom) {
		free_plan(&P);
		return;
	}
	const char *name = bs->b[from].text;
	for (int sl = 0; sl < P.n_slides; sl++) {
		char *qs = join(&P, sl, 0, 1);
		int f = P.fig_of[sl];
		if (f >= 0) {
			char head[600], *cap = join(&P, sl, 1, 0);
			if (P.n_figs > 1)
				snprintf(head, sizeof head, "%s  (%d/%d)", name, f + 1, P.n_figs);
			else
				snprintf(head, sizeof head, "%s", name);
			fig_slide(pg, head, P.figs[f], cap, qs);
			free(cap);
		} else {
			piece **ps = malloc(sizeof *ps * (size_t)(P.n + 1));
			int n = 0;
			for (int i = 0; ps && i < P.n; i++)
				if (P.p[i].slide == sl && !P.p[i].cap)
					ps[n++] = &P.p[i];
			if (ps)
				text_slides(pg, name, ps, n);
			free(ps);
		}
		free(qs);
	}
	free_plan(&P);
}

int gb_pdfbook_slides(gb_pdfbook *b, const char *md, const char *path, const char *version, int *pages,
                      gb_verr *err)
{
	blocks bs = { 0 };
	gb_outfile o;
	parse_md(md, &bs);
	if (gb_outfile_open(&o, path, 1, err)) {
		free_blocks(&bs);
		return -1;
	}
	const double W = 960, H = 540; /* 16:9 in points */
	cairo_surface_t *surf = open_doc(&o, W, H, &bs, version, "a glassbox lesson: one slide a step");
	page pg = { cairo_create(surf), W, H, 28, 28, 0, NULL };
	for (int i = 0; i < bs.n; i++) {
		if (bs.b[i].kind != B_SECTION || !strcmp(bs.b[i].text, "Answers"))
			continue;
		int j = i + 1;
		while (j < bs.n && bs.b[j].kind != B_SECTION)
			j++;
		step_slides(&pg, &bs, i, j, b);
	}
	if (pages)
		*pages = pg.pages;
	int rc = close_doc(&o, surf, pg.cr, bs.oom, path, err);
	free_blocks(&bs);
	return rc;
}
