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
 * and questions below), not shrunk from 16:9: the layout of 1600 x SLIDE_H[v] pixels. */
#define N_SLIDE 2
static const double SLIDE_H[N_SLIDE] = { GB_SLIDE_FIG_H, 620 };

typedef struct rec {
	char *name;
	cairo_surface_t *s;       /* a recording of the figure on a 1600 x 900 page (the handout) */
	cairo_surface_t *v[N_SLIDE]; /* the same on 1600 x SLIDE_H[i] (the slides) */
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
		rc = !(k->v[v] = record(f, FIG_W, SLIDE_H[v], err));
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

enum { B_TITLE, B_SECTION, B_PARA, B_CODE, B_LITERAL, B_ITEM, B_FIGURE };

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

/* ---- the handout ---------------------------------------------------------------------------- */

/* The smallest type of terminal output in the handout, in points: 5.5 pt of DejaVu Sans Mono
 * prints legibly on A4 and holds 140 columns in its text width. */
#define MONO_MIN 5.5

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
			/* terminal output is a table more often than prose: its lines are never wrapped.
			 * The type gets small enough for the longest line (down to MONO_MIN); a line
			 * longer still is cut with an ellipsis, one line a line. */
			double w = pg.W - 2 * pg.m - 16, px = k->kind == B_CODE ? 8 : 9.5;
			PangoLayout *l = text_layout(&pg, "DejaVu Sans Mono", 0, px, k->text, w, 1);
			pango_layout_set_width(l, -1);
			int lw, lh;
			pango_layout_get_pixel_size(l, &lw, &lh);
			if (lw > w) {
				/* in proportion, then a tenth of a point at a time: hinting is not linear */
				for (double want = fmax(MONO_MIN, floor(px * w / lw * 10) / 10); lw > w && want >= MONO_MIN;
				     want -= 0.1) {
					px = want;
					g_object_unref(l);
					l = text_layout(&pg, "DejaVu Sans Mono", 0, px, k->text, w, 1);
					pango_layout_set_width(l, -1);
					pango_layout_get_pixel_size(l, &lw, &lh);
				}
				if (lw > w) {
					pango_layout_set_width(l, (int)(w * PANGO_SCALE));
					pango_layout_set_height(l, -1);
					pango_layout_set_ellipsize(l, PANGO_ELLIPSIZE_END);
				}
			}
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

/* Whether the '.', '!' or '?' at p[n] ends a sentence: at the end, or after a word and before
 * a space and a capital (or a quote): "q_i . k_j" and "e.g. a" go on. */
static int sentence_end(const char *p, size_t n)
{
	if (!p[n + 1])
		return 1;
	if (p[n + 1] != ' ' || (n > 0 && p[n - 1] == ' '))
		return 0;
	const char *q = p + n + 1;
	while (*q == ' ')
		q++;
	return !*q || isupper((unsigned char)*q) || *q == '`' || *q == '"' || (unsigned char)*q >= 0x80;
}

/* The first sentence of a paragraph (at most about 160 characters, cut at a word). */
static void first_sentence(const char *p, char *out, size_t cap)
{
	size_t n = 0;
	while (p[n] && !((p[n] == '.' || p[n] == '!' || p[n] == '?') && sentence_end(p, n)))
		n++;
	if (p[n])
		n++;
	if (n > 160) {
		n = 160;
		while (n > 60 && p[n] != ' ')
			n--;
	}
	snprintf(out, cap, "%.*s%s", (int)n, p, n < strlen(p) && !strchr(".!?", p[n - 1]) ? "\xE2\x80\xA6" : "");
}

/* The slide's geometry in points (a 960 x 540 page): the heading's line at the top, the
 * caption's line at the bottom, the figure in between at the page's full width. */
#define SL_SIDE 12.0
#define SL_TOP 8.0
#define SL_HEAD_PX 22.0
#define SL_CAP_PX 14.0

/* One slide of the section [from, to): its heading (with "k/n" when the step made n figures),
 * figure number fig_no (0-based; -1: a step without a figure), its caption, and the questions
 * asked after that figure (before the next one). */
static void slide(page *pg, const blocks *bs, int from, int to, const gb_pdfbook *b, int fig_no, int n_figs)
{
	const double m = SL_SIDE, w = pg->W - 2 * m;
	const rec *fig = NULL;
	const char *cap = NULL;
	for (int i = from + 1, k = 0; i < to; i++) {
		const block *bk = &bs->b[i];
		if (bk->kind == B_FIGURE && find_rec(b, bk->name)) {
			if (k++ == fig_no)
				fig = find_rec(b, bk->name);
		} else if (bk->kind == B_PARA && !cap && strncmp(bk->text, "**", 2) && strncmp(bk->text, "*Hint", 5))
			cap = bk->text;
	}
	/* the heading, one line: the figure carries its own title and subtitle under it */
	char head[600];
	if (n_figs > 1)
		snprintf(head, sizeof head, "%s  (%d/%d)", bs->b[from].text, fig_no + 1, n_figs);
	else
		snprintf(head, sizeof head, "%s", bs->b[from].text);
	PangoLayout *hl = text_layout(pg, "DejaVu Sans", 1, SL_HEAD_PX, head, w, 0);
	pango_layout_set_ellipsize(hl, PANGO_ELLIPSIZE_END);
	show_at(pg, hl, m, SL_TOP, 0.1);
	double top = SL_TOP + layout_h(hl) + 4;
	g_object_unref(hl);
	/* the questions, from the bottom up: each with its options */
	double bottom = pg->H - 8;
	char qbuf[4096] = "";
	size_t qn = 0;
	/* a question goes on the slide of the figure before it (the first slide when none is) */
	int seen = 0, mine = 0;
	for (int i = from + 1; i < to; i++) {
		const block *k = &bs->b[i];
		if (k->kind == B_FIGURE && find_rec(b, k->name))
			seen++;
		if (k->kind == B_PARA && !strncmp(k->text, "**Question", 10)) {
			mine = fig_no < 0 || (seen ? seen - 1 : 0) == fig_no;
			if (mine)
				qn += (size_t)snprintf(qbuf + qn, qn < sizeof qbuf ? sizeof qbuf - qn : 0, "%s%s", qn ? "\n" : "", k->text);
		} else if (k->kind == B_ITEM && mine && qn && i > from + 1 &&
		           (bs->b[i - 1].kind == B_ITEM || (bs->b[i - 1].kind == B_PARA && !strncmp(bs->b[i - 1].text, "**Question", 10))))
			qn += (size_t)snprintf(qbuf + qn, qn < sizeof qbuf ? sizeof qbuf - qn : 0, "\n    %s", k->text);
		if (qn >= sizeof qbuf)
			qn = sizeof qbuf - 1;
	}
	if (qn) {
		PangoLayout *ql = text_layout(pg, "DejaVu Sans", 0, 15, qbuf, w - 24, 0);
		double qh = layout_h(ql);
		if (qh > 0.4 * pg->H) { /* many questions: smaller, never off the page */
			g_object_unref(ql);
			ql = text_layout(pg, "DejaVu Sans", 0, 12, qbuf, w - 24, 0);
			qh = layout_h(ql);
		}
		bottom -= qh + 12;
		cairo_set_source_rgb(pg->cr, 0.93, 0.95, 0.99);
		cairo_rectangle(pg->cr, m, bottom, w, qh + 12);
		cairo_fill(pg->cr);
		show_at(pg, ql, m + 12, bottom + 6, 0.1);
		bottom -= 4;
		g_object_unref(ql);
	}
	/* the caption over the questions, the figure filling what is left */
	if (cap) {
		char first[400];
		first_sentence(cap, first, sizeof first);
		PangoLayout *cl = text_layout(pg, "DejaVu Sans", 0, fig ? SL_CAP_PX : 22, fig ? first : cap, w, 0);
		if (fig) {
			pango_layout_set_alignment(cl, PANGO_ALIGN_CENTER);
			double ch = layout_h(cl);
			bottom -= ch;
			show_at(pg, cl, m, bottom, 0.25);
			bottom -= 4;
		} else {
			show_at(pg, cl, m, top + 20, 0.15);
		}
		g_object_unref(cl);
	}
	if (fig && bottom - top > 40) {
		/* the layout whose shape fills the room best */
		cairo_surface_t *best = fig->v[0];
		double area = 0;
		for (int v = 0; v < N_SLIDE; v++) {
			double k = fmin(w / FIG_W, (bottom - top) / SLIDE_H[v]);
			if (FIG_W * k * SLIDE_H[v] * k > area * 1.02) {
				area = FIG_W * k * SLIDE_H[v] * k;
				best = fig->v[v];
			}
		}
		place_fig(pg, best, m, top, w, bottom - top);
	}
	end_page(pg);
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
		int j = i + 1, n_figs = 0;
		for (; j < bs.n && bs.b[j].kind != B_SECTION; j++)
			n_figs += bs.b[j].kind == B_FIGURE && find_rec(b, bs.b[j].name);
		/* a slide per figure the step made: a comparison keeps all its figures */
		for (int k = 0; k < (n_figs ? n_figs : 1); k++)
			slide(&pg, &bs, i, j, b, n_figs ? k : -1, n_figs);
	}
	if (pages)
		*pages = pg.pages;
	int rc = close_doc(&o, surf, pg.cr, bs.oom, path, err);
	free_blocks(&bs);
	return rc;
}
