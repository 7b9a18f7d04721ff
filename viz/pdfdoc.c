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
#include <strings.h>

#define FIG_W 1600.0
#define FIG_H 900.0
/* The handout's figures are laid out on 1200 x 675, the PNG's 16:9 at three quarters: the
 * A4 text width (483 pt) makes 18 px, the smallest text of a figure, 7.2 pt on paper rather
 * than 5.4 (the beam search's sums, the feature ticks). A figure that leaves something out at
 * that height (the merge replay's last strips, the rows of a row of maps) is laid out taller,
 * as is one whose data would cover less than a sixth of it (the model view's 16 maps): 900 or
 * 1125 high, the full text width always. */
#define HANDOUT_W 1200.0
#define HANDOUT_H 675.0
#define N_HANDOUT 3
static const double handout_h[N_HANDOUT] = { 675, 900, 1125 };
#define HANDOUT_SPARSE 0.16
/* A figure that would leave the rest of a page blank is set smaller there, down to this share
 * of the text width (its smallest text, 7.2 pt, at 6.1), rather than overleaf (review 7: handout
 * pages two thirds blank), unless it was laid out taller to keep its labels or give its maps
 * room; and a listing taller than HANDOUT_LONG of the page does not wait for its figure's page. */
#define HANDOUT_SHRINK 0.85
#define HANDOUT_LONG 0.3

/* A figure is laid out again for the shape a slide leaves it (its heading above, its caption
 * and questions below), not shrunk from 16:9: the layout of W x H pixels, H from 0.5375 W down
 * to 0.3 W by steps of 20 / 1600 W, so that the slide's figure fills the room it has (lines of
 * text above and under it, a box of questions) to within 20 px at the scale of the slide's
 * width. W is 1600 (18 px, the smallest text of a figure, is 10.5 pt on the 936 pt the slide
 * gives it), 1400 or 1200 (14 pt), H rounded to a whole pixel (the layout of `export FILE --size
 * WxH`): the layout with the larger type where its data keeps most of its room and nothing more
 * is left out (pick_layout below). */
#define N_SLIDE 20
#define SLIDE_H(v) (860.0 - 20.0 * (v))
#define N_WIDE 3
static const double wide_w[N_WIDE] = { 1600, 1400, 1200 };
/* a figure whose data is narrow (square maps) also on narrower pages, to stand beside the text
 * about it: 1000 wide, H from 860 to 480 (and 860 or 740 wide, the same shapes) */
#define NARROW_W 1000.0
static const double narrow_w[N_WIDE] = { 1000, 860, 740 };

/* One layout of a figure for the slides. */
typedef struct lay_v {
	cairo_surface_t *s;       /* the figure recorded on W x H */
	double W, H;
	int lost;                 /* what the layout left out or shortened (labels, strips, cell
	                           * texts), and the labels it thinned on an axis of at most 64
	                           * (the design labels every one up to 64: the layer norm's 14
	                           * rows, not every second one with its mean and variance) */
	gb_rect box;              /* where its data went */
	int min_px;               /* its smallest text, in its pixels (gb_raster_info.min_text_px:
	                           * ticks, labels, panel titles, the numbers in its cells) */
} lay_v;

typedef struct rec {
	char *name;
	int kind;                 /* the figure's kind (gb_fig_kind) */
	cairo_surface_t *s;       /* the handout's layout, HANDOUT_W x hh */
	double hh;
	lay_v *v;                 /* (nv) the slide layouts: [0, nw) wide ones, then narrow ones
	                           * (none when the data is not narrow), which may also stand
	                           * beside the text */
	int nv, nw;
	int least;                /* what the figure leaves out at least on a slide of its own */
	double k_alone;           /* its scale there */
	double t_alone;           /* and its type there (type_pt), in points */
} rec;

struct gb_pdfbook {
	rec *recs;
	int n;
};


gb_pdfbook *gb_pdfbook_new(void)
{
	return calloc(1, sizeof(gb_pdfbook));
}

static void free_rec(rec *r)
{
	free(r->name);
	if (r->s)
		cairo_surface_destroy(r->s);
	for (int v = 0; v < r->nv; v++)
		cairo_surface_destroy(r->v[v].s);
	free(r->v);
}

void gb_pdfbook_free(gb_pdfbook *b)
{
	if (!b)
		return;
	for (int i = 0; i < b->n; i++)
		free_rec(&b->recs[i]);
	free(b->recs);
	free(b);
}

/* f laid out on a w x h page, recorded, what the layout measured in *info (may be NULL); NULL
 * (err set) when it fails. */
static cairo_surface_t *record(const gb_figure *f, double w, double h, gb_raster_info *info, gb_verr *err)
{
	cairo_rectangle_t ext = { 0, 0, w, h };
	cairo_surface_t *s = cairo_recording_surface_create(CAIRO_CONTENT_COLOR_ALPHA, &ext);
	cairo_t *cr = cairo_create(s);
	int rc = gb_pdf_draw(cr, f, w, h, info, err);
	cairo_destroy(cr);
	if (!rc && cairo_surface_status(s) != CAIRO_STATUS_SUCCESS)
		rc = gb_vfail(err, "cannot record the figure: %s", cairo_status_to_string(cairo_surface_status(s)));
	if (rc) {
		cairo_surface_destroy(s);
		return NULL;
	}
	return s;
}

/* What a layout left out: texts shortened or dropped, and labels thinned on an axis of at most
 * 64 (beyond, ticks are the design). */
static int lost_of(const gb_raster_info *in)
{
	int n = in->labels_cut;
	if (in->row_labels_total <= 64 && in->row_labels_shown < in->row_labels_total)
		n += in->row_labels_total - in->row_labels_shown;
	if (in->col_labels_total <= 64 && in->col_labels_shown < in->col_labels_total)
		n += in->col_labels_total - in->col_labels_shown;
	return n;
}

/* Records f on w x h into a new layout at the end of (*v, *n); a layout the figure cannot take
 * (too small for its labels) is only not offered. */
static int add_layout(lay_v **v, int *n, const gb_figure *f, double w, double h)
{
	gb_raster_info in = { 0 };
	gb_verr e;
	cairo_surface_t *s = record(f, w, h, &in, &e);
	if (!s)
		return 0;
	lay_v *nv = realloc(*v, sizeof *nv * (size_t)(*n + 1));
	if (!nv) {
		cairo_surface_destroy(s);
		return -1;
	}
	*v = nv;
	nv[(*n)++] = (lay_v){ s, w, h, lost_of(&in), in.box, in.min_text_px };
	return 0;
}

/* The data's area on the page when layout l is placed at scale k (a layout that reports no data
 * box: the whole figure's). */
static double data_area(const lay_v *l, double k)
{
	return (l->box.w > 0 && l->box.h > 0 ? (double)l->box.w * l->box.h : l->W * l->H) * k * k;
}

/* The scale of a figure slide's figure at least: 1600 px on 800 pt, its 18 px text 9 pt; and
 * where a layout allows it (and for text to go under the figure), SL_K_FIT: 9.9 pt. */
#define SL_K_MIN 0.5
#define SL_K_FIT 0.55
/* A layout with larger type is taken where its data keeps this share of the most it could have
 * (0.8 left most slides at 1400 wide, 12 pt; 0.7 shrank square maps by a sixth for a point) */
#define SL_AREA_KEEP 0.75

/* The type of a figure on a slide: the smallest text of its layout (ticks, labels, panel titles,
 * the numbers in its cells; 18 px at the least) times its scale, in points. Review 6 found the
 * labels a question reads unreadable from the back of a hall at 10-11.6 pt (18 px at 0.56-0.65:
 * figures beside a column of text, or over a paragraph); the ones it passed were at 12 pt or
 * more. SL_TYPE_MIN, 12 pt, is 18 px at 2/3: a layout 1400 px wide across the slide, and 2.2% of
 * the slide's height (body text is 18 pt). A layout that reaches it is taken where its data keeps
 * SL_AREA_TYPE of the most it could have. */
#define SL_TYPE_MIN 12.0
#define SL_AREA_TYPE 0.7
#define LAY_TEXT_MIN 18 /* the figure layout's smallest text (raster_layout.h's TEXT_MIN) */

static double type_pt(const lay_v *l, double k)
{
	return (l->min_px > 0 ? l->min_px : LAY_TEXT_MIN) * k;
}

/* Layout l in a room of w x h: its scale *k, its data's area *a and its type *t; whether it
 * may go there (at kmin and tmin or more). */
static int placed(const lay_v *l, double w, double h, double kmin, double tmin, double *k, double *a, double *t)
{
	*k = fmin(w / l->W, h / l->H);
	*a = data_area(l, *k);
	*t = type_pt(l, *k);
	return *k >= kmin && *t >= tmin;
}

/* Which of layouts l[0, n) goes in a room of w x h points (-1: none): among those at SL_K_FIT
 * or more (those at SL_K_MIN when none is, all when none is that) and whose type is tmin or
 * more (0: any), the ones that leave out least; among them, those whose data keeps SL_AREA_KEEP
 * of the most any layout leaving out as little gives it (at any type), the one with the largest
 * type, then the largest data, then (data within 2%) the smallest page; where that one's type
 * is under SL_TYPE_MIN (or there is none), the one at SL_TYPE_MIN with the largest data, if its
 * data keeps SL_AREA_TYPE of that most; else the one with the largest data. *ko gets its
 * scale. */
static int pick_layout(const lay_v *l, int n, double w, double h, double tmin, double *ko)
{
	int least = -1, best = -1, up = -1, big = -1;
	double amax = 0, bt = 0, bk = 0, ba = 0, ua = 0, ut = 0, uk = 0, ga = 0, gk = 0, kmin = 0, k, a, t;
	for (int i = 0; i < n; i++) {
		k = fmin(w / l[i].W, h / l[i].H);
		kmin = fmax(kmin, k >= SL_K_FIT ? SL_K_FIT : k >= SL_K_MIN ? SL_K_MIN : 0);
	}
	for (int i = 0; i < n; i++)
		if (placed(&l[i], w, h, kmin, tmin, &k, &a, &t) && (least < 0 || l[i].lost < least))
			least = l[i].lost;
	for (int i = 0; i < n; i++)
		if (placed(&l[i], w, h, kmin, 0, &k, &a, &t) && l[i].lost == least)
			amax = fmax(amax, a);
	for (int i = 0; i < n; i++) {
		if (!placed(&l[i], w, h, kmin, tmin, &k, &a, &t) || l[i].lost != least)
			continue;
		if (big < 0 || a > ga) {
			big = i;
			ga = a;
			gk = k;
		}
		if (t >= SL_TYPE_MIN && a >= SL_AREA_TYPE * amax && (up < 0 || a > ua * 1.0001 || (a > ua * 0.9999 && t > ut))) {
			up = i;
			ua = a;
			ut = t;
			uk = k;
		}
		if (a < SL_AREA_KEEP * amax)
			continue;
		/* (data that does not grow with the page, a beam tree of width 1: the least page for
		 * it, not a frame four fifths empty) */
		if (best < 0 || t > bt * 1.0001 ||
		    (t > bt * 0.9999 && (a > ba * 1.02 || (a > ba * 0.98 && l[i].W * l[i].H < l[best].W * l[best].H)))) {
			best = i;
			bt = t;
			bk = k;
			ba = a;
		}
	}
	if ((best < 0 || bt < SL_TYPE_MIN) && up >= 0) {
		best = up;
		bk = uk;
	} else if (best < 0) {
		best = big;
		bk = gk;
	}
	if (ko)
		*ko = bk;
	return best;
}

/* The slide's room for a figure alone: the text width, the page under a heading line and over
 * its command (slide geometry below). */
#define SL_ALONE_W 936.0
#define SL_ALONE_H 480.0

int gb_pdfbook_add_figure(gb_pdfbook *b, const char *name, const gb_figure *f, gb_verr *err)
{
	rec *r = realloc(b->recs, sizeof *r * (size_t)(b->n + 1));
	if (!r)
		return gb_vfail(err, "out of memory recording a figure");
	b->recs = r;
	rec *k = &r[b->n];
	memset(k, 0, sizeof *k);
	k->kind = f->kind;
	if (err)
		err->msg[0] = 0;
	/* the handout's: 16:9 unless taller leaves out less, or gives sparse data (a grid of small
	 * maps) more of itself */
	int rc = 0, hlost = 0;
	double hcover = 0;
	for (int i = 0; i < N_HANDOUT; i++) {
		gb_raster_info in = { 0 };
		gb_verr e1;
		cairo_surface_t *s = record(f, HANDOUT_W, handout_h[i], &in, &e1);
		if (!s)
			continue;
		int lost = lost_of(&in);
		double cover = (double)in.box.w * in.box.h / (HANDOUT_W * handout_h[i]);
		int take = !k->s || lost < hlost || (lost == hlost && hcover < HANDOUT_SPARSE && cover > hcover * 1.2);
		if (take) {
			if (k->s)
				cairo_surface_destroy(k->s);
			k->s = s;
			k->hh = handout_h[i];
			hlost = lost;
			hcover = cover;
		} else
			cairo_surface_destroy(s);
	}
	if (!k->s) { /* too small even so: as the PNG */
		k->s = record(f, FIG_W, FIG_H, NULL, err);
		k->hh = FIG_H * HANDOUT_W / FIG_W;
		rc = !k->s;
	}
	/* the slides': every shape at 1600, every other one at the narrower widths */
	for (int w = 0; !rc && w < N_WIDE; w++)
		for (int v = 0; !rc && v < N_SLIDE; v += w ? 2 : 1)
			rc = add_layout(&k->v, &k->nv, f, wide_w[w], round(SLIDE_H(v) * wide_w[w] / FIG_W));
	if (!rc && !k->nv) { /* hardly: the handout's was laid out; the tallest, then, again */
		gb_raster_info in = { 0 };
		cairo_surface_t *s = record(f, FIG_W, SLIDE_H(0), &in, err);
		if (!s || !(k->v = malloc(sizeof *k->v)))
			rc = 1;
		else
			k->v[k->nv++] = (lay_v){ s, FIG_W, SLIDE_H(0), lost_of(&in), in.box, in.min_text_px };
	}
	/* data in less than half the width even on the tallest: narrower layouts too */
	k->nw = k->nv;
	if (!rc && k->v[0].W == FIG_W && k->v[0].box.w > 0 && k->v[0].box.w < 0.5 * FIG_W)
		for (int w = 0; !rc && w < N_WIDE; w++)
			for (int v = 0; !rc && v < N_SLIDE; v += w ? 2 : 1)
				rc = add_layout(&k->v, &k->nv, f, narrow_w[w], round(SLIDE_H(v) * narrow_w[w] / NARROW_W));
	if (!rc) {
		int v = pick_layout(k->v, k->nv, SL_ALONE_W, SL_ALONE_H, 0, &k->k_alone);
		k->least = v >= 0 ? k->v[v].lost : 0;
		k->t_alone = v >= 0 ? type_pt(&k->v[v], k->k_alone) : 0;
	}
	if (!rc && !(k->name = strdup(name)))
		rc = 1;
	if (rc) {
		free_rec(k);
		return err && err->msg[0] ? -1 : gb_vfail(err, "out of memory recording a figure");
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
	size_t cap = strlen(s) * 40 + 128, o = 0; /* a space in code grows to 35 bytes */
	char *out = malloc(cap);
	int bold = 0, ital = 0, tt = 0, opt = 0;
	if (!out)
		return NULL;
#define PUT(str) do { size_t l_ = strlen(str); if (o + l_ + 16 < cap) { memcpy(out + o, str, l_); o += l_; } } while (0)
	for (const char *p = s; *p; p++) {
		if (opt && strchr(" *`\\", *p)) {
			PUT("</span>");
			opt = 0;
		}
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
			/* code (a command, a token) breaks only at its spaces: never "generate --" and
			 * "temp 0" on two lines */
			PUT(tt ? "</span></span>" : "<span font_family=\"DejaVu Sans Mono\"><span allow_breaks=\"false\">");
			tt = !tt;
		} else if (tt && *p == ' ')
			PUT("</span> <span allow_breaks=\"false\">");
		else if (!tt && !opt && p[0] == '-' && p[1] == '-' && isalpha((unsigned char)p[2]) && (p == s || p[-1] == ' ')) {
			/* an option in prose, outside code ("With --temp 1"), is not broken after its
			 * dashes either */
			PUT("<span allow_breaks=\"false\">--");
			opt = 1;
			p++;
		}
		else if (*p == '&')
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
		PUT("</span></span>");
	if (opt)
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
	/* slides: the step being set, its first page and how many it takes (0: not counted yet,
	 * its headings as given); a step on several slides is "NAME (k/n)" on each */
	const char *step;
	int step_first, step_n;
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
/* The lines of text s (1 for one without a newline). */
static int n_lines(const char *s)
{
	int n = 1;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

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
			 * in the last quarter of the room, else at the room; output at the end of a
			 * phrase where there is one ("...4 bytes);" / "524.3 KB for ..."), else outside
			 * brackets ("for a full context" / "(m = 128)", not "(m =" / "128)") */
			int lim = cmd ? room - 2 : room;
			size_t cut = at_col(r, rn, lim), brk = 0;
			size_t low = cmd ? 1 : at_col(r, rn, lim * 3 / 4);
			for (int pass = cmd ? 2 : 0; pass < 3 && !brk; pass++)
				for (size_t k = cut; k > low; k--) {
					if (r[k] != ' ' || r[k - 1] == ' ')
						continue;
					int depth = 0;
					for (size_t j = 0; j < k; j++)
						depth += (r[j] == '(') - (r[j] == ')');
					if (pass == 2 || (pass == 1 && depth <= 0) ||
					    (pass == 0 && depth <= 0 && (r[k - 1] == ';' || r[k - 1] == ','))) {
						brk = k;
						break;
					}
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

static int open_end(const char *t);
struct block;
static int is_question(const struct block *k);

/* The smallest type of terminal output in the handout, in points: 7 pt of DejaVu Sans Mono
 * (the usual minimum on paper; 6.5 read small in the `info` tables) holds 110 columns in the
 * A4 text width; a longer line is broken there (wrap_cols: a command stays whole to copy)
 * rather than set smaller. */
#define MONO_MIN 7.0

/* Room for h more on this page, or a new one. */
static void need(page *pg, double h)
{
	if (pg->y + h > pg->H - pg->m && pg->y > pg->m + 1)
		end_page(pg);
}

/* The height of a bold heading at px across the text width. */
static double layout_h_of(page *pg, double px, const char *text)
{
	PangoLayout *l = text_layout(pg, "DejaVu Sans", 1, px, text, pg->W - 2 * pg->m, 0);
	double h = layout_h(l);
	g_object_unref(l);
	return h;
}

/* The height flow_text gives a paragraph (before and after included). */
static double flow_h(page *pg, double px, const char *text, double indent, double before, double after)
{
	PangoLayout *l = text_layout(pg, "DejaVu Sans", 0, px, text, pg->W - 2 * pg->m - indent, 0);
	double h = layout_h(l);
	g_object_unref(l);
	return before + h + after;
}

/* The monospace size and text (malloc'd, or NULL: text as it is) of a fenced block in the
 * handout: small enough for its longest line in w, down to MONO_MIN, then broken. */
static double code_fit(page *pg, const block *k, double w, char **text)
{
	double px = k->kind == B_CODE ? 8 : 9.5, lw = mono_width(pg, px, k->text);
	*text = NULL;
	if (lw > w) {
		px = fmax(MONO_MIN, floor(px * w / lw * 10) / 10);
		/* a tenth of a point at a time from there: hinting is not linear */
		while ((lw = mono_width(pg, px, k->text)) > w && px > MONO_MIN + 0.05)
			px = fmax(MONO_MIN, px - 0.1);
		for (int cols = (int)floor(w / mono_adv(pg, px)); lw > w && cols > 24; cols--) {
			free(*text);
			*text = wrap_cols(k->text, cols, NULL);
			lw = *text ? mono_width(pg, px, *text) : 0;
		}
	}
	return px;
}

/* The height a block takes in the handout (its spacing included); 0 for a figure the book did
 * not record. */
static double handout_block_h(page *pg, const gb_pdfbook *b, const blocks *bs, int i)
{
	const block *k = &bs->b[i];
	switch (k->kind) {
	case B_PARA:
		return flow_h(pg, 10.5, k->text, 0, 0, 7);
	case B_NUM:
		return flow_h(pg, 10.5, k->text, 0, 0, 3);
	case B_ITEM:
		return flow_h(pg, 10.5, k->text, 14, 0, 3) + 5;
	case B_CODE:
	case B_LITERAL: {
		char *t;
		double px = code_fit(pg, k, pg->W - 2 * pg->m - 16, &t);
		PangoLayout *l = text_layout(pg, "DejaVu Sans Mono", 0, px, t ? t : k->text, -1, 1);
		pango_layout_set_width(l, -1);
		double h = layout_h(l) + 18;
		g_object_unref(l);
		free(t);
		return h;
	}
	case B_FIGURE: { /* the least it may take (HANDOUT_SHRINK, not a figure laid out taller) */
		const rec *r = find_rec(b, k->name);
		return r ? (r->hh <= HANDOUT_H ? HANDOUT_SHRINK : 1) * (pg->W - 2 * pg->m) * r->hh / HANDOUT_W + 4 +
		                   flow_h(pg, 8.5, k->text, 0, 0, 10)
		         : 0;
	}
	}
	return 0;
}

/* The height of what block i keeps with it on one page: a question with its options and hint;
 * a paragraph that introduces a command and its figure ("Plot a few features along the
 * positions:") with them; a command with the figure it drew; the answers together; else the
 * block alone. */
static double keep_h(page *pg, const gb_pdfbook *b, const blocks *bs, int i)
{
	const block *k = &bs->b[i];
	double h = handout_block_h(pg, b, bs, i);
	int j = i + 1;
	if (k->kind == B_PARA && !strncmp(k->text, "**Question", 10)) {
		for (; j < bs->n && (bs->b[j].kind == B_ITEM || (bs->b[j].kind == B_PARA && !strncmp(bs->b[j].text, "*Hint", 5)));
		     j++)
			h += handout_block_h(pg, b, bs, j);
	} else if (k->kind == B_PARA && open_end(k->text) == 1 && j < bs->n &&
	           (bs->b[j].kind == B_CODE || bs->b[j].kind == B_FIGURE)) {
		if (bs->b[j].kind == B_CODE)
			h += handout_block_h(pg, b, bs, j++);
		if (j < bs->n && bs->b[j].kind == B_FIGURE)
			h += handout_block_h(pg, b, bs, j) + 6;
	} else if (k->kind == B_CODE && j < bs->n && bs->b[j].kind == B_FIGURE && h <= HANDOUT_LONG * pg->H)
		h += handout_block_h(pg, b, bs, j) + 6;
	else if (k->kind == B_NUM && (i == 0 || bs->b[i - 1].kind != B_NUM))
		for (; j < bs->n && bs->b[j].kind == B_NUM; j++)
			h += handout_block_h(pg, b, bs, j);
	return h;
}

/* Room for what block i keeps with it (keep_h) where that fits on a page at all. */
static void need_kept(page *pg, const gb_pdfbook *b, const blocks *bs, int i)
{
	double h = keep_h(pg, b, bs, i);
	if (h <= pg->H - 2 * pg->m)
		need(pg, h);
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
	page pg = { cairo_create(surf), W, H, 56, 56, 0, NULL, NULL, 0, 0 };
	char foot[256] = "glassbox";
	for (int i = 0; i < bs.n; i++) {
		block *k = &bs.b[i];
		switch (k->kind) {
		case B_TITLE:
			snprintf(foot, sizeof foot, "%s", k->text);
			pg.foot = foot;
			flow_text(&pg, "DejaVu Sans", 1, 22, k->text, 0, 0, 10, 0.1, 0);
			break;
		case B_SECTION: {
			/* a heading never ends a page alone: it goes with what it keeps under it where
			 * they fit on a page, and needs a few lines under it anyway */
			double hh = 14 + layout_h_of(&pg, 15, k->text) + 6, h = i + 1 < bs.n ? hh + keep_h(&pg, b, &bs, i + 1) : 0;
			/* and with the paragraphs under it up to the first listing, figure or question
			 * where all that fits on a page: a heading and its first paragraph at a page's
			 * foot, the listing they introduce overleaf, read as stranded (review 5, G4) */
			double chain = hh;
			int j = i + 1;
			for (; j < bs.n && (bs.b[j].kind == B_PARA || bs.b[j].kind == B_ITEM) && !is_question(&bs.b[j]) &&
			       !(bs.b[j].kind == B_PARA && open_end(bs.b[j].text) == 1);
			     j++)
				chain += handout_block_h(&pg, b, &bs, j);
			double own = j > i + 1 && j < bs.n && bs.b[j].kind != B_SECTION ? handout_block_h(&pg, b, &bs, j) : 0;
			double kept = own > 0 ? keep_h(&pg, b, &bs, j) : 0;
			/* (with all the listing keeps: a command goes with its figure, so less would
			 * strand the heading all the same) */
			if (chain + kept > h && chain + kept <= pg.H - 2 * pg.m)
				h = chain + kept;
			need(&pg, h > 90 && h <= pg.H - 2 * pg.m ? h : 90);
			flow_text(&pg, "DejaVu Sans", 1, 15, k->text, 0, 14, 6, 0.1, 0);
			break;
		}
		case B_PARA:
			need_kept(&pg, b, &bs, i);
			flow_text(&pg, "DejaVu Sans", 0, 10.5, k->text, 0, 0, 7, 0.1, 0);
			break;
		case B_NUM:
			need_kept(&pg, b, &bs, i); /* the answers on one page where they fit on one */
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
			double w = pg.W - 2 * pg.m - 16;
			char *text;
			double px = code_fit(&pg, k, w, &text);
			PangoLayout *l = text_layout(&pg, "DejaVu Sans Mono", 0, px, text ? text : k->text, w, 1);
			pango_layout_set_width(l, -1);
			free(text);
			double h = layout_h(l);
			/* the command that draws a figure on the page of the figure, where both fit on one
			 * (not the command at a page's foot and its figure overleaf) */
			need(&pg, h + 12);
			need_kept(&pg, b, &bs, i);
			cairo_set_source_rgb(pg.cr, 0.95, 0.95, 0.95);
			cairo_rectangle(pg.cr, pg.m, pg.y, pg.W - 2 * pg.m, h + 10);
			cairo_fill(pg.cr);
			show_at(&pg, l, pg.m + 8, pg.y + 5, 0.1);
			pg.y += h + 18;
			g_object_unref(l);
			break;
		}
		case B_FIGURE: {
			const rec *fr = find_rec(b, k->name);
			cairo_surface_t *fig = fr ? fr->s : NULL;
			double w = pg.W - 2 * pg.m, h = fig ? w * fr->hh / HANDOUT_W : 0;
			if (!fig) { /* a figure the book did not record: its name, never a blank */
				flow_text(&pg, "DejaVu Sans", 0, 10.5, k->name, 0, 0, 7, 0.1, 1);
				break;
			}
			/* smaller to fill this page where it fits at HANDOUT_SHRINK, else overleaf */
			double room = pg.H - pg.m - pg.y - 24 - flow_h(&pg, 8.5, k->text, 0, 0, 10);
			if (h > room && HANDOUT_SHRINK * h <= room && pg.y > pg.m + 1 && fr->hh <= HANDOUT_H)
				h = room;
			else
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

/* The slide's geometry in points (a 960 x 540 page, PowerPoint's 16:9 at 13.33 x 7.5 in). No
 * prose, list item or question on a slide is smaller than SL_MIN: 18 pt, the usual floor for
 * slides read from the back of a hall (a thirtieth of the slide's height; review 5, G2: text
 * of 11 to 13 pt beside a figure was the third of the body's size and read as 6 pt at the
 * back). Terminal text and formulas are never under SL_MONO_MIN: 15 pt of DejaVu Sans Mono,
 * SL_MONO of 18 pt (its x-height matches 18 pt of the prose), 98 columns in a slide's text width
 * (review 5, G1: `info` at 11 pt). Text that does not fit at these sizes goes on a slide of its
 * own or continues on the next (text_run, dump_run), never smaller. A step's text is set as
 * large as fits, up to SL_BODY_MAX, never larger than the heading over it (a 28 pt paragraph
 * under a 22 pt heading made the headings of text slides look smaller than those of figure
 * slides); questions alone on a slide at SL_Q_ALONE at most. */
#define SL_SIDE 12.0
#define SL_TOP 8.0
#define SL_HEAD_PX 24.0
#define SL_MIN 18.0
#define SL_MONO_MIN 15.0
#define SL_BODY_MAX 24.0
#define SL_Q_FIG 18.0  /* questions under a figure */
#define SL_Q_TEXT 20.0 /* questions on a slide of text */
#define SL_Q_ALONE 22.0
#define SL_MONO 0.85 /* terminal text and formulas against the prose: monospace looks larger */
/* Text above and under a figure: as large as leaves the figure its room, from SL_CAP_MAX down
 * to SL_CAP_MIN; a lead-in above it takes SL_LEAD_LINES lines at most (3 left eight steps
 * with an intro of four lines alone on a slide); the figure keeps
 * SL_FIG_MIN of the page's height for what is said about it beside it (SL_FIG_MORE for text
 * beyond the paragraph after it that no question follows), more than that and the text goes on
 * a slide of its own. */
#define SL_CAP_MAX 20.0
#define SL_CAP_MIN SL_MIN
#define SL_LEAD_LINES 4
#define SL_FIG_MIN 0.5
#define SL_FIG_MORE 0.62
#define SL_PLOT_MIN 0.33 /* a line plot's axes box at least, of the page's height */
/* Text shares a figure's slide only where the figure keeps SL_FIG_KEEP of the scale (so of
 * the type) it has on a slide of its own; else the figure gets the slide and the text the next
 * (review 5: the merge replay's ranks, the model view's ticks, the router's cell numbers at
 * half size beside a column of text). */
#define SL_FIG_KEEP 0.85
/* (a question about the figure stays under it at a little more cost: review 5 found questions
 * a slide away from the figure they ask about) */
#define SL_FIG_KEEP_Q 0.75
/* (but a figure need not keep more than this scale, its 18 px text 12 pt, to have text under
 * it: the 1200-wide layouts of bar charts and line plots stand alone at 14 pt) */
#define SL_K_READ 0.66
/* a slide of text no longer than this many lines at SL_MIN joins the slide before it where it
 * fits there (review 5, G3: slides of one sentence, or only "Try: ...") */
#define SL_SHORT_LINES 3
/* what a figure's command printed, this many lines at most, is shown after the figure */
#define SL_OUT_LINES 6
/* what would be left alone on a slide after a figure (a line or two, or its questions) stays
 * under it where the figure keeps this share of its scale alone (and SL_K_FIT) and this share
 * of the page's height: a figure a little smaller rather than a slide of one sentence, or a
 * question projected without the figure it asks about (review 6, R3 and R5) */
#define SL_FIG_KEEP_SHORT 0.62
#define SL_FIG_MIN_SHORT 0.42
#define SL_REPRISE_MIN 0.3 /* a figure shown again over its questions: this share at least */
#define SL_PLOT_MIN_SHORT 0.25 /* and a line plot's axes box this share of the page's height */
/* text shares a long dump's slide where the dump keeps its size, or this one */
#define SL_DUMP_OK 16.0
#define SL_CMD_PX 12.0 /* the command that drew the figure, under it */

/* What a step shows, in its order: prose, list items, literal lines (formulas, small tables),
 * what a command printed (not the output of the command that drew a figure: the figure is its
 * point), and questions with their options. */
enum { P_PROSE, P_ITEM, P_LITERAL, P_OUTPUT, P_QUESTION };
/* Where a piece goes on its slide: on a slide of text, above its slide's figure (the lead-in
 * that introduces it), or under it (what to see in it). */
enum { R_BODY, R_AFTER, R_LEAD };

typedef struct piece {
	int kind;
	char *text;               /* Markdown (prose, items, questions) or plain lines */
	int seg;                  /* how many of the step's figures come before it */
	int slide;                /* which of the step's slides shows it */
	int role;                 /* R_BODY, R_AFTER or R_LEAD */
	int looks;                /* a question that may read the figure before it (looks_at) */
	int fig_out;              /* what the command of the figure before it printed */
} piece;

typedef struct plan {
	piece *p;
	int n;
	const rec **figs;         /* (n_figs) the step's figures in order */
	char **cmds;              /* (n_figs) the command that drew each, or NULL */
	int n_figs;
	int *fig_of;              /* (n_slides) each slide's figure, or -1: a slide of text, or
	                           * -2 - f: figure f again, over its questions */
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
	P->p[P->n++] = (piece){ kind, t, seg, -1, R_BODY, 0, 0 };
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
	for (int i = 0; i < P->n_figs; i++)
		free(P->cmds[i]);
	free(P->p);
	free(P->figs);
	free(P->cmds);
	free(P->fig_of);
}

static int is_question(const block *k)
{
	return k->kind == B_PARA && !strncmp(k->text, "**Question", 10);
}

/* A fenced block of commands and what they printed, one piece per command that printed
 * something; the command whose figure follows the block gives none (the figure shows it), but
 * its command line goes to *cmd (malloc'd) to be shown under the figure. */
static void code_pieces(plan *P, const char *t, int fig_next, int seg, char **cmd, char **out)
{
	const char *g = t;        /* the group's start */
	int has_out = 0;
	for (const char *l = t;; ) {
		const char *e = strchr(l, '\n');
		int last = !e || !e[1];
		const char *next = e ? e + 1 : l + strlen(l);
		int is_cmd = !strncmp(l, "glassbox> ", 10);
		if (is_cmd && l > g) { /* a new command closes the group before it */
			if (has_out)
				add_piece(P, P_OUTPUT, g, (size_t)(l - g - 1), seg);
			g = l;
			has_out = 0;
		} else if (!is_cmd && l < next && *l != '\n')
			has_out = 1;
		if (last) {
			size_t n = (size_t)(next - g);
			while (n && g[n - 1] == '\n')
				n--;
			if (has_out && !fig_next)
				add_piece(P, P_OUTPUT, g, n, seg);
			if (fig_next && !strncmp(g, "glassbox> ", 10)) {
				const char *ce = strchr(g, '\n');
				free(*cmd);
				*cmd = strndup(g + 10, ce ? (size_t)(ce - g - 10) : strlen(g + 10));
				/* what it printed beside its figure, a few lines: shown after the figure (review
				 * 8, C4: the prose quoted numbers of a printout the slides left out) */
				free(*out);
				*out = has_out && ce ? strndup(ce + 1, (size_t)(g + n - ce - 1)) : NULL;
				if (*out && n_lines(*out) > SL_OUT_LINES) {
					free(*out);
					*out = NULL;
				}
			}
			break;
		}
		l = next;
	}
}

/* Appends sep and text to piece p's text (a question's options, its Try). */
static void append_text(plan *P, piece *p, const char *sep, const char *text)
{
	char *t = realloc(p->text, strlen(p->text) + strlen(sep) + strlen(text) + 1);
	if (!t) {
		P->oom = 1;
		return;
	}
	strcat(strcat(t, sep), text);
	p->text = t;
}

/* Whether a question may read something off the figure before it: not one that asks why, a
 * count of parameters, or a guess before the figure (review 8: "why divide by sqrt(d_head)?"
 * and "how many weights in one attention layer?" under a figure shown again for them). Only
 * such a question gets that figure shown again over it. */
static int looks_at(const char *t)
{
	static const char *const starts[] = { "why ", "before you look" };
	static const char *const has[] = { "how many parameters", "how many weights" };
	const char *q = strstr(t, ".** ");
	q = q ? q + 4 : t;
	for (size_t i = 0; i < sizeof starts / sizeof *starts; i++)
		if (!strncasecmp(q, starts[i], strlen(starts[i])))
			return 0;
	for (size_t i = 0; i < sizeof has / sizeof *has; i++)
		for (const char *s = q; *s; s++)
			if (!strncasecmp(s, has[i], strlen(has[i])))
				return 0;
	return 1;
}

/* The pieces and figures of section [from, to). */
static void collect(plan *P, const blocks *bs, int from, int to, const gb_pdfbook *b)
{
	int seg = 0, q = -1; /* q: the question whose options may follow */
	char *cmd = NULL;    /* the command of the figure that comes next */
	char *out = NULL;    /* and what it printed, when short */
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
				if (!P->oom)
					P->p[q].looks = looks_at(k->text);
			} else if (!strncmp(k->text, "**Try:**", 8) && P->n && P->p[P->n - 1].kind == P_QUESTION &&
			           P->p[P->n - 1].seg == seg && !P->oom) {
				/* a "Try:" right after a question goes in its box, under it: it gives nothing
				 * away, and alone it was a slide of two lines (review 7) */
				append_text(P, &P->p[P->n - 1], "\n\n", k->text);
			} else if (strncmp(k->text, "*Hint", 5))
				add_piece(P, P_PROSE, k->text, strlen(k->text), seg);
			break;
		case B_ITEM:
			if (opt && !P->oom)
				append_text(P, &P->p[q], "\n    ", k->text);
			else
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
			code_pieces(P, k->text, i + 1 < to && bs->b[i + 1].kind == B_FIGURE && find_rec(b, bs->b[i + 1].name), seg,
			            &cmd, &out);
			break;
		case B_FIGURE: {
			const rec *r = find_rec(b, k->name);
			if (!r)
				break;
			const rec **nf = realloc(P->figs, sizeof *nf * (size_t)(P->n_figs + 1));
			char **nc = nf ? realloc(P->cmds, sizeof *nc * (size_t)(P->n_figs + 1)) : NULL;
			if (nf)
				P->figs = nf;
			if (!nf || !nc) {
				P->oom = 1;
				break;
			}
			P->cmds = nc;
			/* `pair` right after the maps it pairs (the two before it, or the one before it in
			 * this step), nothing said between them: on the slides the pair stands for them
			 * (review 7: three slides for two maps); the handout keeps them all */
			int f = P->n_figs, drop = 0;
			if (cmd && !strncmp(cmd, "pair", 4) && (cmd[4] == ' ' || !cmd[4]))
				for (drop = f < 2 ? f : 2; drop > 0; drop--) {
					int between = 0;
					for (int j = 0; j < P->n; j++)
						between |= P->p[j].seg > f - drop;
					if (!between)
						break;
				}
			for (; drop > 0; drop--) {
				free(P->cmds[--f]);
				P->n_figs = f;
				seg--;
			}
			P->cmds[f] = cmd;
			cmd = NULL;
			P->figs[P->n_figs++] = r;
			seg++;
			if (out) {
				add_piece(P, P_OUTPUT, out, strlen(out), seg);
				if (!P->oom)
					P->p[P->n - 1].fig_out = 1;
			}
			free(out);
			out = NULL;
			break;
		}
		}
	}
	free(cmd);
	free(out);
	/* a "Try:" that ends the step is set like a question, in a box at the bottom of the last
	 * slide that has room for it, rather than alone on a slide (review 7) */
	if (P->n && P->p[P->n - 1].kind == P_PROSE && !strncmp(P->p[P->n - 1].text, "**Try:**", 8))
		P->p[P->n - 1].kind = P_QUESTION;
}

/* Where the sentences of a paragraph start after its first: after ". ", "! " or "? " that
 * follows a word and comes before a capital, a quote or code ("q_i . k_j" and "e.g. a" go
 * on). At most max of them in at[]; their count is returned. */
static int sentence_starts(const char *p, size_t *at, int max)
{
	int n = 0;
	for (size_t i = 1; p[i] && p[i + 1] && p[i + 2]; i++)
		if (strchr(".!?", p[i]) && p[i + 1] == ' ' && p[i - 1] != ' ' && p[i - 1] != '.' &&
		    (isupper((unsigned char)p[i + 2]) || strchr("`\"*", p[i + 2])) && n < max)
			at[n++] = i + 2;
	return n;
}

/* Where the last sentence of a paragraph starts (0: it is one sentence). */
static size_t last_sentence(const char *p)
{
	size_t at[64];
	int n = sentence_starts(p, at, 64);
	return n ? at[n - 1] : 0;
}

/* How a paragraph ends: 0 a sentence is finished (". ! ?", maybe inside closing marks), 1 on a
 * colon (it introduces what follows), 2 mid-sentence (a comma, a word: the sentence goes on
 * after what follows, "Its last query, ` to`," and the figure, then "gives ..."). */
static int open_end(const char *t)
{
	size_t n = strlen(t);
	while (n && (t[n - 1] == ' ' || t[n - 1] == '\n'))
		n--;
	/* closing marks: emphasis, code, quotes, brackets (a closing curly quote is 3 bytes) */
	for (;;) {
		if (n && strchr("*`\")]'", t[n - 1]))
			n--;
		else if (n >= 3 && (unsigned char)t[n - 3] == 0xE2 && (unsigned char)t[n - 2] == 0x80 &&
		         ((unsigned char)t[n - 1] == 0x9D || (unsigned char)t[n - 1] == 0x99))
			n -= 3;
		else
			break;
	}
	if (!n)
		return 0;
	if (strchr(".!?", t[n - 1]))
		return 0;
	return t[n - 1] == ':' ? 1 : 2;
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

/* How many lines text takes as prose at px in width w. */
static int prose_lines(page *pg, const char *text, double px, double w)
{
	PangoLayout *l = text_layout(pg, "DejaVu Sans", 0, px, text, w, 0);
	int lines = pango_layout_get_line_count(l);
	g_object_unref(l);
	return lines;
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

static int cmp_int_desc(const void *a, const void *b)
{
	return *(const int *)b - *(const int *)a;
}

/* The largest size, to a quarter point and at most want, at which text fits w (0: none down to
 * SL_MONO_MIN). */
static double mono_fit(page *pg, const char *text, double w, double want)
{
	double lw = mono_width(pg, 10, text);
	double fit = lw > 0 ? floor(10 * w / lw * 4) / 4 : want;
	if (fit >= want)
		fit = want;
	/* widths do not scale quite linearly (hinting): a quarter point at a time from there */
	while (fit > SL_MONO_MIN && mono_width(pg, fit, text) > w)
		fit = fmax(SL_MONO_MIN, fit - 0.25);
	return fit >= SL_MONO_MIN && mono_width(pg, fit, text) <= w ? fit : 0;
}

/* The monospace size for a block of terminal text next to prose of size px: SL_MONO of it, or
 * smaller for the longest line to fit w, never under SL_MIN. A tenth of its lines at most (the
 * `kv cache` line of `info`, longer than its table) may break instead (then *wrap says at how
 * many columns) when the rest is set larger for it; and so do the long lines of text that does
 * not fit at SL_MIN. */
static double mono_px(page *pg, double px, const char *text, double w, int *wrap)
{
	double want = fmax(SL_MONO_MIN, px * SL_MONO), fit = mono_fit(pg, text, w, want);
	*wrap = 0;
	if (fit >= want)
		return fit;
	int nl = 0, widths[400];
	for (const char *l = text; *l && nl < 400;) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l);
		widths[nl++] = ncols(l, n);
		l = e ? e + 1 : l + n;
	}
	int k = nl >= 5 ? (nl / 10 > 1 ? nl / 10 : 1) : 0;
	if (k) {
		qsort(widths, (size_t)nl, sizeof *widths, cmp_int_desc);
		int cols = widths[k] + 1;
		char *t = cols < widths[0] && cols > 24 ? wrap_cols(text, cols, NULL) : NULL;
		double f2 = t ? mono_fit(pg, t, w, want) : 0;
		free(t);
		if (f2 >= fit + 1) {
			*wrap = cols;
			return f2;
		}
	}
	if (fit >= SL_MONO_MIN)
		return fit;
	int cols = (int)floor(w / mono_adv(pg, SL_MONO_MIN));
	char *t;
	while (cols > 24 && (t = wrap_cols(text, cols, NULL))) {
		double tw2 = mono_width(pg, SL_MONO_MIN, t);
		free(t);
		if (tw2 <= w)
			break;
		cols--;
	}
	*wrap = cols;
	return SL_MONO_MIN;
}

/* The text pieces of a slide, set at prose size px from (x, y) in width w: drawn when draw,
 * measured always; the height they take is returned. With cols, a long narrow output (more
 * than 24 lines) is set in as many columns as fit (up to 3). *mono_out (may be NULL) gets the
 * smallest monospace size used. */
static double body_m(page *pg, piece *const *ps, int n, double px, int cols, double x, double y, double w, int draw,
                     double *mono_out)
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
			if (draw && p->kind == P_PROSE && !strncmp(p->text, "**Try:**", 8)) {
				/* "Try: ..." is the class's activity: in a tinted box wherever it is, as the
				 * questions are in theirs (review 7: tinted only when alone on a slide) */
				cairo_set_source_rgb(pg->cr, 0.92, 0.97, 0.92);
				cairo_rectangle(pg->cr, x - 0.35 * px, y - 0.25 * px, w + 0.7 * px, layout_h(l) + 0.5 * px);
				cairo_fill(pg->cr);
			}
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
		if (mono_out && (*mono_out <= 0 || mpx < *mono_out))
			*mono_out = mpx;
		char *t = wrap ? wrap_cols(p->text, wrap, NULL) : NULL;
		const char *text = t ? t : p->text;
		/* columns: the lines dealt out evenly, the command heading the first */
		int nl = 1, nc = 1;
		for (const char *c = text; *c; c++)
			nl += *c == '\n';
		double lw = mono_width(pg, mpx, text), cgap = 2.5 * mpx;
		if (cols && out && nl > 16)
			while (nc < 3 && (nc + 1) * lw + nc * cgap <= room && (nl + nc) / (nc + 1) >= 6)
				nc++;
		if (draw && out) { /* the box first, measured as the text will be set */
			cairo_set_source_rgb(pg->cr, 0.94, 0.94, 0.95);
			cairo_rectangle(pg->cr, x, y, w, body_m(pg, &ps[i], 1, px, cols, x, y, w, 0, NULL));
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

static double body(page *pg, piece *const *ps, int n, double px, int cols, double x, double y, double w, int draw)
{
	return body_m(pg, ps, n, px, cols, x, y, w, draw, NULL);
}

/* The heading on one line at the top; the y under it is returned (measured only when !draw).
 * A step on several slides has one mark on every one of them, the first too: "NAME (2/3)"
 * (review 5, G5: "(continued)", "(1/2)" after two spaces, or nothing). */
static double slide_heading(page *pg, const char *head, int draw)
{
	const double m = SL_SIDE, w = pg->W - 2 * m;
	char num[700];
	if (pg->step && pg->step_n > 1) {
		snprintf(num, sizeof num, "%s (%d/%d)", pg->step, pg->pages - pg->step_first + 1, pg->step_n);
		head = num;
	}
	PangoLayout *hl = text_layout(pg, "DejaVu Sans", 1, SL_HEAD_PX, head, w, 0);
	pango_layout_set_ellipsize(hl, PANGO_ELLIPSIZE_END);
	if (draw)
		show_at(pg, hl, m, SL_TOP, 0.1);
	double top = SL_TOP + layout_h(hl) + 4;
	g_object_unref(hl);
	return top;
}

/* Questions (Markdown, a line each, options indented by four spaces) at px in width w: a line
 * that wraps goes on under its text, past the option's letter, not at the box's edge. */
static PangoLayout *q_layout(page *pg, double px, const char *qs, double w)
{
	PangoLayout *l = text_layout(pg, "DejaVu Sans", 0, px, qs, w, 0);
	pango_layout_set_indent(l, (int)(-2.6 * px * PANGO_SCALE));
	return l;
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
	PangoLayout *ql = q_layout(pg, px, qs, w - 24);
	double qh = layout_h(ql);
	if (qh > 0.4 * pg->H) { /* many questions: smaller, never off the page */
		g_object_unref(ql);
		ql = q_layout(pg, fmax(SL_MIN, 0.8 * px), qs, w - 24);
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

/* The command that drew a figure, "glassbox> attn 4 3" in grey monospace at (x, y), broken
 * only at the spaces between its words when it is longer than w; its height is returned (0
 * without one), drawn when draw. */
static double cmd_line(page *pg, const char *cmd, double x, double y, double w, int draw)
{
	if (!cmd || !*cmd)
		return 0;
	char *line = g_strdup_printf("glassbox> %s", cmd);
	int cols = (int)floor(w / mono_adv(pg, SL_CMD_PX));
	char *t = ncols(line, strlen(line)) > cols ? wrap_cols(line, cols, NULL) : NULL;
	PangoLayout *l = mono_layout(pg, SL_CMD_PX, t ? t : line, 0);
	double h = layout_h(l);
	if (draw)
		show_at(pg, l, x, y, 0.38);
	g_object_unref(l);
	free(t);
	g_free(line);
	return h;
}

/* Which of a figure's layouts goes in a room of w x h under its text (pick_layout), its type
 * tmin or more (0: any): a narrow one too, centred (a square map's every row named over its
 * question). */
static int best_variant(const rec *r, double w, double h, double tmin, double *k)
{
	return pick_layout(r->v, r->nv, w, h, tmin, k);
}

/* A figure slide's content: the figure and its command, the lead-in above it, what is said
 * about it under it, its questions. */
typedef struct figtext {
	const rec *fig;
	const char *cmd;
	piece **lead, **after;
	int nl, na;
	const char *qs;           /* Markdown, a question a line (NULL: none) */
} figtext;

/* Text shares a figure's slide only where the figure's type (type_pt) stays at SL_TYPE_MIN, or,
 * for a figure that has less on a slide of its own (the model view's 16 maps, a map of 21
 * tokens named on both axes), at SL_TYPE_KEEP of what it has there (SL_TYPE_KEEP_Q with
 * questions, which are better projected under the figure they ask about); beside a column of
 * text, at SL_TYPE_SIDE of that: a figure stands beside its text only where that costs it next
 * to nothing of its type (review 6: the model view, the merge replay, the residual stream and
 * an attention map at 10 pt beside a sentence, where they had 11-12 alone). */
#define SL_TYPE_KEEP 0.95
#define SL_TYPE_KEEP_Q 0.85
#define SL_TYPE_SIDE 0.98

/* The least type F's figure may have with F's text on its slide (0: no text, any) */
static double type_floor(const figtext *F)
{
	if (!F->nl && !F->na && !F->qs)
		return 0;
	return fmin(SL_TYPE_MIN, (F->qs ? SL_TYPE_KEEP_Q : SL_TYPE_KEEP) * F->fig->t_alone);
}

/* The height of a figure's lead-in and what is said under it, one after the other in a
 * column of width tw at px, drawn at (x, y) when draw. */
static double side_text(page *pg, const figtext *F, double px, double x, double y, double tw, int draw)
{
	double h = 0;
	if (F->nl)
		h += body(pg, F->lead, F->nl, px, 0, x, y, tw, draw) + (F->na ? 0.8 * px : 0);
	if (F->na)
		h += body(pg, F->after, F->na, px, 0, x, y + h, tw, draw);
	return h;
}

/* F's questions in a tinted box (as slide_questions draws them under a figure) in a column of
 * width w at (x, y), drawn when draw; its height. */
static double side_questions(page *pg, const char *qs, double x, double y, double w, int draw)
{
	PangoLayout *ql = q_layout(pg, SL_Q_FIG, qs, w - 16);
	double qh = layout_h(ql) + 12;
	if (draw) {
		cairo_set_source_rgb(pg->cr, 0.93, 0.95, 0.99);
		cairo_rectangle(pg->cr, x, y, w, qh);
		cairo_fill(pg->cr);
		show_at(pg, ql, x + 8, y + 6, 0.1);
	}
	g_object_unref(ql);
	return qh;
}

/* The height of the column beside a figure: its lead-in and what is said after it at px, and,
 * with qcol, its questions under them; drawn at (x, y) when draw. */
static double side_column(page *pg, const figtext *F, double px, int qcol, double x, double y, double tw, int draw)
{
	double h = side_text(pg, F, px, x, y, tw, draw);
	if (qcol && F->qs) {
		h += h > 0 ? 0.8 * px : 0;
		h += side_questions(pg, F->qs, x, y + h, tw, draw);
	}
	return h;
}

/* Beside a narrow figure (its data in less than half the slide's width: square maps): its
 * narrow layout at the left of the room, as tall as the room, its type tmin or more and leaving
 * out no more than alone, the text in a column at its right at the largest size from SL_CAP_MAX
 * that fits there; with qcol, the questions too, under the text in that column, and the room
 * down to the page's foot. The area its data takes on the page is returned (0: no narrow
 * layout, or the text does not fit beside it); *vo, *ko and *pxo get the layout, its scale and
 * the text's size. */
static double side_option(page *pg, const figtext *F, double top, double bottom, double ch, double tmin, int qcol,
                          int *vo, double *ko, double *pxo)
{
	const double m = SL_SIDE, w = pg->W - 2 * m;
	const rec *r = F->fig;
	double bk = 0;
	int best = pick_layout(r->v + r->nw, r->nv - r->nw, 0.66 * w, bottom - top - ch, tmin, &bk);
	if (best < 0 || bk < SL_K_MIN || r->v[best + r->nw].lost > r->least)
		return 0;
	best += r->nw;
	double tw = w - r->v[best].W * bk - 14;
	for (double px = SL_CAP_MAX; tw > 150 && px >= SL_CAP_MIN; px -= 1)
		if (side_column(pg, F, px, qcol, 0, 0, tw, 0) <= bottom - top) {
			*vo = best;
			*ko = bk;
			*pxo = px;
			return data_area(&r->v[best], bk);
		}
	return 0;
}

/* A figure slide: the heading; the lead-in; the figure in the layout that fills the room left
 * best, the command that drew it under its left edge, what is said about it under that (text
 * at px); the questions in a box at the bottom. A narrow figure with text stands beside it
 * instead where its data gets more of the page so. The room the figure has (stacked) is
 * returned; the page is drawn only when draw. */
/* Where a figure slide's parts go with its text at px: the room under the heading and over
 * the questions, the lead-in's and the text after's heights, the command's; the figure stacked
 * (layout v at scale k) or beside the text (layout sv at sk, the text at spx). */
typedef struct figplan {
	double top, bottom, lh, ah, ch, room;
	int v, sv, beside;
	int qcol;                 /* beside, the questions in the text's column (the figure down
	                           * to the page's foot) */
	double k, sk, spx;
} figplan;

/* The best of F's figure beside its text at type tmin or more: the questions at the foot of the
 * page, or in the text's column where that gives the figure larger type; the data's area (0:
 * none), the layout, its scale, the text's size and where the questions go in *P. */
static double side_best(page *pg, const figtext *F, const figplan *P, double tmin, int *sv, double *sk, double *spx,
                        int *qcol)
{
	double a = 0, a2, k2, px2, foot = pg->H - 8;
	int v2;
	*qcol = 0;
	if (F->nl || F->na)
		a = side_option(pg, F, P->top, P->bottom, P->ch, tmin, 0, sv, sk, spx);
	if (F->qs && (a2 = side_option(pg, F, P->top, foot, P->ch, tmin, 1, &v2, &k2, &px2)) > 0 &&
	    (a <= 0 || type_pt(&F->fig->v[v2], k2) > 1.01 * type_pt(&F->fig->v[*sv], *sk))) {
		a = a2;
		*sv = v2;
		*sk = k2;
		*spx = px2;
		*qcol = 1;
	}
	return a;
}

static void fig_plan(page *pg, const char *head, const figtext *F, double px, int side, figplan *P)
{
	const double m = SL_SIDE, w = pg->W - 2 * m;
	memset(P, 0, sizeof *P);
	P->top = slide_heading(pg, head, 0) + 2;
	P->bottom = slide_questions(pg, F->qs, SL_Q_FIG, 0);
	P->lh = F->nl ? body(pg, F->lead, F->nl, px, 0, m + 4, P->top, w - 8, 0) + 0.5 * px : 0;
	P->ah = F->na ? body(pg, F->after, F->na, px, 0, m + 4, 0, w - 8, 0) + 0.4 * px : 0;
	P->ch = cmd_line(pg, F->cmd, 0, 0, w, 0);
	P->ch = P->ch ? P->ch + 3 : 0;
	P->room = P->bottom - P->top - P->lh - P->ah - P->ch;
	P->sv = -1;
	if (!side)
		return;
	double stacked = 0, beside = 0;
	/* (no layout at type_floor: v is -1, the text does not fit here; fig_slide draws the
	 * figure all the same where a plan put it there: a lead-in) */
	P->v = P->room > 40 ? best_variant(F->fig, w, P->room, type_floor(F), &P->k) : -1;
	if (P->v >= 0 && F->fig->v[P->v].lost > F->fig->least)
		P->v = -1; /* (nor there if it leaves out more than alone) */
	if (P->v >= 0)
		stacked = data_area(&F->fig->v[P->v], P->k);
	beside = side_best(pg, F, P, (F->qs ? SL_TYPE_KEEP_Q : SL_TYPE_SIDE) * fmin(SL_TYPE_MIN, F->fig->t_alone), &P->sv,
	                   &P->sk, &P->spx, &P->qcol);
	/* beside the text where that leaves out less, or as much and gives the data more room, its
	 * type not much less than stacked */
	const rec *r = F->fig;
	P->beside = beside > 0 && P->sk >= SL_FIG_KEEP * r->k_alone &&
	            (P->v < 0 || r->v[P->sv].lost < r->v[P->v].lost ||
	             (r->v[P->sv].lost == r->v[P->v].lost && beside > 1.15 * stacked &&
	              type_pt(&r->v[P->sv], P->sk) >= SL_TYPE_KEEP * type_pt(&r->v[P->v], P->k)));
}

static double fig_slide(page *pg, const char *head, const figtext *F, double px, int draw)
{
	const double m = SL_SIDE, w = pg->W - 2 * m;
	figplan P;
	fig_plan(pg, head, F, px, draw, &P);
	double top = P.top, bottom = P.bottom, lh = P.lh, ch = P.ch, room = P.room;
	if (!draw)
		return room;
	slide_heading(pg, head, 1);
	double k = P.k, sk = P.sk, spx = P.spx;
	int v = P.v, sv = P.sv, beside = P.beside, qcol = P.qcol;
	if (!beside && v < 0 && room > 40) {
		/* text a plan put here all the same (a lead-in) leaves the figure under type_floor:
		 * stacked or beside it, whichever keeps the larger type */
		v = best_variant(F->fig, w, room, 0, &k);
		beside = side_best(pg, F, &P, 0, &sv, &sk, &spx, &qcol) > 0 &&
		         (v < 0 || (F->fig->v[sv].lost <= F->fig->v[v].lost &&
		                    type_pt(&F->fig->v[sv], sk) > 1.02 * type_pt(&F->fig->v[v], k)));
	}
	if (!beside || !qcol)
		slide_questions(pg, F->qs, SL_Q_FIG, 1);
	if (beside) {
		double b = qcol ? pg->H - 8 : bottom;
		double fw = F->fig->v[sv].W * sk, fh = F->fig->v[sv].H * sk, y = top + (b - top - ch - fh) / 2;
		place_fig(pg, F->fig->v[sv].s, m, y, fw, fh);
		cmd_line(pg, F->cmd, m, y + fh + 3, fw, 1);
		side_column(pg, F, spx, qcol, m + fw + 14, top + 4, w - fw - 14, 1);
	} else if (v >= 0) {
		if (F->nl)
			body(pg, F->lead, F->nl, px, 0, m + 4, top, w - 8, 1);
		top += lh;
		double fw = F->fig->v[v].W * k, fh = F->fig->v[v].H * k;
		/* the figure, its command and its text together, centred in the height they have */
		double y = top + (room - fh) / 2, x = m + (w - fw) / 2;
		place_fig(pg, F->fig->v[v].s, x, y, fw, fh);
		y += fh + 3;
		cmd_line(pg, F->cmd, x, y, m + w - x, 1);
		y += ch;
		if (F->na)
			body(pg, F->after, F->na, px, 0, m + 4, y + 0.4 * px - 3, w - 8, 1);
	}
	end_page(pg);
	return room;
}

/* The size of a figure slide's text: the largest from SL_CAP_MAX down that leaves the figure
 * SL_FIG_MIN of the page and most of the room it has with the text at SL_CAP_MIN. */
static double fig_text_px(page *pg, const char *head, const figtext *F)
{
	if (!F->nl && !F->na)
		return SL_CAP_MIN;
	const double w = pg->W - 2 * SL_SIDE;
	double least = fig_slide(pg, head, F, SL_CAP_MIN, 0), k0 = 0, k, tmin = type_floor(F);
	/* the figure's type counts as much as its room: the larger text only where the figure's
	 * type stays within 5% of what the smallest text leaves it (and at type_floor where that
	 * left it there), it leaves out no more, and a line plot keeps SL_PLOT_MIN of the page (or
	 * what it had) */
	int v0 = least > 40 ? best_variant(F->fig, w, least, tmin, &k0) : -1, v;
	if (v0 < 0 && least > 40)
		v0 = best_variant(F->fig, w, least, tmin = 0, &k0);
	const lay_v *l0 = v0 >= 0 ? &F->fig->v[v0] : NULL;
	for (double px = SL_CAP_MAX; px > SL_CAP_MIN; px -= 1) {
		double room = fig_slide(pg, head, F, px, 0);
		if (room < SL_FIG_MIN * pg->H || room < 0.88 * least)
			continue;
		if (!l0)
			return px;
		if ((v = best_variant(F->fig, w, room, tmin, &k)) < 0 || type_pt(&F->fig->v[v], k) < 0.95 * type_pt(l0, k0) ||
		    F->fig->v[v].lost > l0->lost)
			continue;
		if (F->fig->kind == GB_FIG_LINES &&
		    F->fig->v[v].box.h * k < fmin(SL_PLOT_MIN * pg->H, 0.97 * l0->box.h * k0))
			continue;
		return px;
	}
	return SL_CAP_MIN;
}

/* ---- which slide shows what ---------------------------------------------------------------- */

/* The pieces of segment s: [*a, *b) (pieces come in the order of their segments). */
static void seg_range(const plan *P, int s, int *a, int *b)
{
	*a = 0;
	while (*a < P->n && P->p[*a].seg < s)
		(*a)++;
	*b = *a;
	while (*b < P->n && P->p[*b].seg == s)
		(*b)++;
}

/* Slides of text for the pieces idx[0, n), in order: a new one after each question that text
 * follows, so nothing said after a question is on its slide (an answer given away). */
static void text_groups(plan *P, const int *idx, int n)
{
	int sl = -1, after_q = 0;
	for (int j = 0; j < n; j++) {
		piece *p = &P->p[idx[j]];
		if (sl < 0 || (p->kind != P_QUESTION && after_q))
			sl = add_slide(P, -1);
		p->slide = sl;
		p->role = R_BODY;
		after_q = p->kind == P_QUESTION;
	}
}

/* The questions among pieces idx[0, n), Markdown a line each; malloc'd, NULL when none. */
static char *questions_of(const plan *P, const int *idx, int n)
{
	size_t len = 1;
	int any = 0;
	for (int j = 0; j < n; j++)
		if (P->p[idx[j]].kind == P_QUESTION) {
			len += strlen(P->p[idx[j]].text) + 1;
			any = 1;
		}
	char *s = any ? malloc(len) : NULL, *o = s;
	if (!s)
		return NULL;
	*s = 0;
	for (int j = 0; j < n; j++)
		if (P->p[idx[j]].kind == P_QUESTION)
			o += sprintf(o, "%s%s", o > s ? "\n" : "", P->p[idx[j]].text);
	return s;
}

/* Literal lines short enough to go under a figure with the prose around them. */
static int short_literal(const piece *p)
{
	int lines = n_lines(p->text);
	return (p->kind == P_LITERAL && lines <= 4) || (p->kind == P_OUTPUT && lines <= SL_OUT_LINES);
}

/* Whether figure f's slide, with the pieces of role R_LEAD in segment f above it and pieces
 * idx[0, m) under it (the questions among them in the box), leaves the figure share of the
 * page's height at SL_CAP_MIN, its type at SL_K_FIT of the PNG's at least (a layout flatter
 * than the room allows cuts labels: a taller one shrinks), everything it shows on a slide of
 * its own, and a line plot SL_PLOT_MIN of the page's height (review 4: a chart squashed to a
 * fifth of the slide by the prose and questions under it). */
static int fits_k(page *pg, plan *P, const char *head, int f, const int *idx, int m, double share, double keep,
                  int with_lead);

static int fits(page *pg, plan *P, const char *head, int f, const int *idx, int m, double share)
{
	return fits_k(pg, P, head, f, idx, m, share, 0, 1);
}

/* fits, the figure keeping the share keep of its scale alone (0: SL_FIG_KEEP, or SL_FIG_KEEP_Q
 * with questions), the lead-in above it counted unless with_lead is 0 (the figure shown again) */
static int fits_k(page *pg, plan *P, const char *head, int f, const int *idx, int m, double share, double keep,
                  int with_lead)
{
	piece **lead = malloc(sizeof *lead * (size_t)(P->n + 1)), **after = malloc(sizeof *after * (size_t)(m + 1));
	figtext F = { P->figs[f], P->cmds[f], lead, after, 0, 0, NULL };
	int ok = 0;
	if (lead && after) {
		for (int i = 0; i < P->n && with_lead; i++)
			if (P->p[i].seg == f && P->p[i].role == R_LEAD)
				lead[F.nl++] = &P->p[i];
		for (int j = 0; j < m; j++)
			if (P->p[idx[j]].kind != P_QUESTION)
				after[F.na++] = &P->p[idx[j]];
		char *qs = questions_of(P, idx, m);
		F.qs = qs;
		figplan Pl;
		fig_plan(pg, head, &F, SL_CAP_MIN, 1, &Pl);
		double room = Pl.room, k = Pl.k;
		int v = Pl.v;
		/* and it leaves out no more than on a slide of its own (every row of the layer norm's
		 * map named), and a line plot keeps SL_PLOT_MIN of the page's height for its lines;
		 * beside its text, at SL_K_FIT and leaving out no more */
		double kk = (keep > 0 ? keep : qs ? SL_FIG_KEEP_Q : SL_FIG_KEEP) * F.fig->k_alone;
		double kmin = fmax(SL_K_FIT, fmin(SL_K_READ, kk));
		/* a line plot: SL_PLOT_MIN of the page, or most of what it has alone when it has less
		 * (a short plot over a wide legend: the gradients per layer) */
		double plot_min = (keep == SL_FIG_KEEP_SHORT ? SL_PLOT_MIN_SHORT : SL_PLOT_MIN) * pg->H;
		if (F.fig->kind == GB_FIG_LINES && (F.na || qs)) {
			figtext F0 = F;
			figplan P0;
			F0.na = 0;
			F0.qs = NULL;
			fig_plan(pg, head, &F0, SL_CAP_MIN, 1, &P0);
			if (P0.v >= 0)
				plot_min = fmin(plot_min, SL_FIG_KEEP * F.fig->v[P0.v].box.h * P0.k);
		} else if (F.fig->kind == GB_FIG_LINES)
			plot_min = 0; /* nothing under it: as it is alone */
		if (Pl.beside) /* (beside a column of text at the scale it keeps alone: SL_K_READ is for
		                * text under it, where it keeps the slide's width) */
			ok = Pl.sk >= fmax(SL_K_FIT, kk) &&
			     F.fig->v[Pl.sv].lost <= F.fig->least;
		else
			ok = v >= 0 && room >= share * pg->H && k >= kmin && F.fig->v[v].lost <= F.fig->least &&
			     (F.fig->kind != GB_FIG_LINES || F.fig->v[v].box.h * k >= plot_min);
		free(qs);
	}
	free(lead);
	free(after);
	return ok;
}

/* The pieces after figure f (the next segment but its lead-in) into idx; their count. */
static int after_of(const plan *P, int f, int *idx)
{
	int a, b, n = 0;
	seg_range(P, f + 1, &a, &b);
	for (int i = a; i < b; i++)
		if (P->p[i].role != R_LEAD)
			idx[n++] = i;
	return n;
}

/* How many of the pieces idx[0, n) after figure f may go under it: prose, list items, a
 * formula, then its questions (output and tables go on slides of text), as many as fit; *allowed
 * gets how many might, room permitting. The printout of a decoding figure's command (a line a
 * step) under a lead-in goes on a slide of text after it: the figure draws those steps, a
 * panel each, and needs the height (review 10: the top-k steps squashed between three lines
 * of lead-in and generate's lines). */
static int under(page *pg, plan *P, const char *head, int f, const int *idx, int n, int *allowed)
{
	int q = 0, m, steps = 0;
	for (int i = 0; i < P->n && P->figs[f]->kind == GB_FIG_DECODE; i++)
		steps |= P->p[i].seg == f && P->p[i].role == R_LEAD;
	for (*allowed = 0; *allowed < n; (*allowed)++) {
		const piece *p = &P->p[idx[*allowed]];
		if ((q && p->kind != P_QUESTION) || (p->kind == P_OUTPUT && !short_literal(p)) ||
		    (p->kind == P_LITERAL && !short_literal(p)) || (p->fig_out && steps))
			break;
		q |= p->kind == P_QUESTION;
	}
	for (m = *allowed; m > 0 && !fits(pg, P, head, f, idx, m, SL_FIG_MIN); m--)
		;
	return m;
}


/* Which slide shows what. A step without a figure is slides of text. With figures, text stays
 * with what it is about: the text before a figure that leads into it (a last paragraph ending
 * in a colon, or a sentence the figure interrupts: "Its last query, ` to`," figure, "gives
 * ...") goes above it, and so does the whole text before a step's first figure when it is
 * short prose; what comes after a figure (what to see in it, the questions about it) goes under
 * it as far as it fits with the figure keeping SL_FIG_MIN of the page, a paragraph that does
 * not fit whole by its first sentences; the rest goes on slides of text after it (before the
 * first figure: before it). Nothing said after a question is shown on its slide. */
static void plan_slides(plan *P, page *pg, const char *head)
{
	int nf = P->n_figs;
	double lw = pg->W - 2 * SL_SIDE - 8;
	int *idx = calloc((size_t)(P->n + 2 * nf + 8), sizeof *idx), n, a, b, m, allowed;
	if (!idx) {
		P->oom = 1;
		return;
	}
	if (!nf) {
		for (n = 0; n < P->n; n++)
			idx[n] = n;
		text_groups(P, idx, n);
		free(idx);
		return;
	}
	/* the lead-ins */
	for (int s = 0; s < nf && !P->oom; s++) {
		seg_range(P, s, &a, &b);
		if (a == b)
			continue;
		/* a paragraph ending in a colon or mid-sentence leads into the figure; before the
		 * first figure, so does any short last paragraph ("The strongest induction head is
		 * layer 4, head 3." over its attention) */
		piece *L = &P->p[b - 1];
		if (L->kind != P_PROSE || (s > 0 && !open_end(L->text)))
			continue;
		size_t k = last_sentence(L->text);
		if ((s == 0 || !k) && prose_lines(pg, L->text, SL_CAP_MIN, lw) <= SL_LEAD_LINES)
			L->role = R_LEAD;
		else if (k && prose_lines(pg, L->text + k, SL_CAP_MIN, lw) <= SL_LEAD_LINES && split_piece(P, b - 1, k))
			P->p[b].role = R_LEAD; /* its last sentence leads into the figure */
	}
	/* short prose before the first figure: all of it above the figure, unless that leaves less
	 * of what follows the figure under it, or its last paragraph, or none */
	seg_range(P, 0, &a, &b);
	int lines = 0, prose = a < b;
	for (int i = a; i < b && prose; i++) {
		prose &= P->p[i].kind == P_PROSE || P->p[i].kind == P_ITEM;
		lines += prose ? prose_lines(pg, P->p[i].text, SL_CAP_MIN, lw) : 0;
	}
	if (prose && lines <= SL_LEAD_LINES) {
		int last = P->p[b - 1].role == R_LEAD, best = -1, best_m = -1;
		for (int c = 0; c < 3; c++) { /* all, the last paragraph as it was, none */
			if ((c == 1 && !last) || (c == 2 && open_end(P->p[b - 1].text)))
				continue; /* (a paragraph that leads into the figure stays with it) */
			for (int i = a; i < b; i++)
				P->p[i].role = c == 0 || (c == 1 && i == b - 1) ? R_LEAD : R_BODY;
			n = after_of(P, 0, idx);
			m = under(pg, P, head, 0, idx, n, &allowed);
			if (m > best_m) {
				best_m = m;
				best = c;
			}
		}
		for (int i = a; i < b; i++)
			P->p[i].role = best == 0 || (best == 1 && i == b - 1) ? R_LEAD : R_BODY;
	}
	/* a line plot whose lead-in leaves it under SL_PLOT_MIN of the page: the lead-in on the
	 * slide before (the norms plot at a quarter of the slide under two lines of 18 pt) */
	for (int f = 0; f < nf && !P->oom; f++) {
		if (P->figs[f]->kind != GB_FIG_LINES || fits(pg, P, head, f, idx, 0, SL_FIG_MIN))
			continue;
		seg_range(P, f, &a, &b);
		for (int i = a; i < b; i++)
			if (P->p[i].role == R_LEAD && open_end(P->p[i].text) != 2)
				P->p[i].role = R_BODY;
	}
	/* the text before the first figure, on slides of its own */
	seg_range(P, 0, &a, &b);
	n = 0;
	for (int i = a; i < b; i++)
		if (P->p[i].role != R_LEAD)
			idx[n++] = i;
	text_groups(P, idx, n);
	for (int f = 0; f < nf && !P->oom; f++) {
		int sl = add_slide(P, f), q;
		seg_range(P, f, &a, &b);
		for (int i = a; i < b; i++)
			if (P->p[i].role == R_LEAD)
				P->p[i].slide = sl;
		n = after_of(P, f, idx);
		m = under(pg, P, head, f, idx, n, &allowed);
		/* more than the paragraph that says what to see, with no question after it: only
		 * where the figure keeps SL_FIG_MORE of the page (the rest reads better larger) */
		for (q = 0; q < m && P->p[idx[q]].kind != P_QUESTION; q++)
			;
		if (q == m)
			while (m > 1 && !fits(pg, P, head, f, idx, m, SL_FIG_MORE))
				m--;
		/* a paragraph that does not fit whole: its first sentences, where they fit */
		if (m < allowed && P->p[idx[m]].kind == P_PROSE && strncmp(P->p[idx[m]].text, "**Try:**", 8)) {
			/* (a "Try:" stays whole, in its box: review 7 found one cut in two) */
			size_t at[64];
			char *t = P->p[idx[m]].text;
			for (int j = sentence_starts(t, at, 64) - 1; j >= 0; j--) {
				char c = t[at[j]];
				t[at[j]] = 0;
				int ok = fits(pg, P, head, f, idx, m + 1, m ? SL_FIG_MORE : SL_FIG_MIN);
				t[at[j]] = c;
				if (ok) {
					if (split_piece(P, idx[m], at[j])) {
						for (int i = n; i > m + 1; i--)
							idx[i] = idx[i - 1] + 1;
						idx[m + 1] = idx[m] + 1;
						n++;
						allowed++;
						m++;
					}
					break;
				}
			}
		}
		/* what is left of what may go under it is only its questions, two at most and short:
		 * under the figure too where it keeps SL_FIG_KEEP_SHORT of its scale; else none of
		 * them, rather than a run of questions cut in two */
		if (m < allowed) {
			size_t chars = 0;
			int only_q = 1, qa = m;
			for (int j = m; j < allowed; j++) {
				only_q &= P->p[idx[j]].kind == P_QUESTION;
				chars += strlen(P->p[idx[j]].text);
			}
			while (qa > 0 && P->p[idx[qa - 1]].kind == P_QUESTION)
				qa--;
			if (only_q && allowed - qa <= 2 && chars < 400 &&
			    fits_k(pg, P, head, f, idx, allowed, SL_FIG_MIN_SHORT, SL_FIG_KEEP_SHORT, 1))
				m = allowed;
			else if (only_q)
				m = qa;
		}
		/* what is left for a slide of text is only a question or two: the last paragraph
		 * under the figure (not the first, which says what to see in it) goes with them,
		 * rather than a question alone on a slide (review 4, N1) */
		if (m >= 2 && m < n && P->p[idx[m - 1]].kind != P_QUESTION && P->p[idx[m - 1]].kind != P_LITERAL) {
			size_t chars = 0;
			int only_q = 1;
			for (int j = m; j < n; j++) {
				only_q &= P->p[idx[j]].kind == P_QUESTION;
				chars += strlen(P->p[idx[j]].text);
			}
			if (only_q && chars < 400)
				m--;
		}
		/* what is left is a line or two and no question: under the figure too where it fits
		 * there at the least sizes, rather than a slide of one sentence (review 5, G3) */
		if (m < n && n <= allowed && n - m <= 2) {
			double lines = 0;
			int q = 0;
			for (int j = m; j < n; j++) { /* (what the figure's command printed counts its lines) */
				const piece *pj = &P->p[idx[j]];
				q |= pj->kind == P_QUESTION || (pj->kind == P_OUTPUT && !pj->fig_out);
				lines += pj->fig_out ? n_lines(pj->text) : prose_lines(pg, pj->text, SL_MIN, lw);
			}
			/* (not a paragraph that introduces what comes after it: "... beside the source
			 * characters:" stays with the printout) */
			if (!q && lines <= SL_SHORT_LINES && open_end(P->p[idx[n - 1]].text) != 1 &&
			    fits_k(pg, P, head, f, idx, n, SL_FIG_MIN_SHORT, SL_FIG_KEEP_SHORT, 1))
				m = n;
		}
		/* a paragraph that introduces what comes after it (a colon) goes with that, not under
		 * the figure without it */
		while (m > 0 && m < n && P->p[idx[m - 1]].kind == P_PROSE && open_end(P->p[idx[m - 1]].text) == 1)
			m--;
		for (int j = 0; j < m; j++) {
			P->p[idx[j]].slide = sl;
			P->p[idx[j]].role = P->p[idx[j]].kind == P_QUESTION ? R_BODY : R_AFTER;
		}
		int sl0 = P->n_slides;
		text_groups(P, idx + m, n - m);
		/* questions about the figure that did not fit under it, with a little prose before
		 * them: the figure again on their slide, smaller (review 7: "where is the bright line
		 * of this figure?" projected without it) */
		if (m < n && P->n_slides > sl0) {
			int g = m, q = 0, ok = 1;
			while (g < n && P->p[idx[g]].slide == sl0) {
				q |= P->p[idx[g]].kind == P_QUESTION && P->p[idx[g]].looks;
				ok &= P->p[idx[g]].kind == P_QUESTION || P->p[idx[g]].kind == P_PROSE ||
				      P->p[idx[g]].kind == P_ITEM || short_literal(&P->p[idx[g]]);
				g++;
			}
			if (q && ok && fits_k(pg, P, head, f, idx + m, g - m, SL_REPRISE_MIN, SL_FIG_KEEP_SHORT, 0)) {
				P->fig_of[sl0] = -2 - f; /* (a figure shown again: -2 - f) */
				for (int j = m; j < g; j++)
					P->p[idx[j]].role = P->p[idx[j]].kind == P_QUESTION ? R_BODY : R_AFTER;
			}
		}
	}
	free(idx);
}

/* ---- slides of text ------------------------------------------------------------------------ */

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

/* One slide of text: the heading, body pieces at px, the questions in their box right under
 * them (review 8: a paragraph at the top, its question at the bottom, half a slide of white
 * between them). */
static void draw_text_slide(page *pg, const char *head, piece *const *ps, int n, double px, int cols, const char *qs)
{
	const double m = SL_SIDE + 8, w = pg->W - 2 * m;
	double top = slide_heading(pg, head, 1) + 10, qtop = slide_questions(pg, qs, SL_Q_TEXT, 0);
	double under = top + body(pg, ps, n, px, cols, m, top, w, 0) + 0.8 * px;
	cairo_save(pg->cr);
	if (qs && *qs && under < qtop)
		cairo_translate(pg->cr, 0, under - qtop);
	slide_questions(pg, qs, SL_Q_TEXT, 1);
	cairo_restore(pg->cr);
	cairo_save(pg->cr);
	cairo_rectangle(pg->cr, 0, 0, pg->W, qtop + 2);
	cairo_clip(pg->cr); /* only a piece longer than a whole slide at SL_MIN reaches past it */
	body(pg, ps, n, px, cols, m, top, w, 1);
	cairo_restore(pg->cr);
	end_page(pg);
}

/* A step's text slides so far: the first has the step's heading, the others "(continued)". */
typedef struct tslides {
	const char *head;
	char h2[600];
	int made;
} tslides;

static const char *next_head(tslides *T)
{
	return T->made++ ? T->h2 : T->head;
}

/* Body pieces B[a, b) of a slide of text (questions Q anchored among them): as large as it
 * fits on one slide; when that does not fit at SL_COMFY, split into as few slides of about
 * equal length as fit (up to SL_MAX_RUN), each question on the slide of the piece it follows;
 * a piece taller than a slide was cut before (split_tall). */
#define SL_COMFY SL_MIN
#define SL_MAX_RUN 8
static void text_run(page *pg, tslides *T, piece **B, int a, int b, piece **Q, const int *anchor, int nq)
{
	const double w = pg->W - 2 * (SL_SIDE + 8);
	int nb = b - a;
	double *hh = malloc(sizeof *hh * (size_t)(nb + 1));
	if (!hh || nb <= 0) {
		free(hh);
		return;
	}
	double top = slide_heading(pg, T->head, 0) + 10;
	/* each piece's height at SL_MIN, to cut the text into slides of about equal length */
	double total = 0;
	for (int i = 0; i < nb; i++)
		total += hh[i] = body(pg, &B[a + i], 1, SL_MIN, 1, 0, 0, w, 0) + 0.55 * SL_MIN;
	int best_k = 0, cut[4] = { 0 }, best_cut[4] = { 0 };
	double best = -1;
	for (int k = 1; k <= SL_MAX_RUN && k <= nb; k++) {
		/* cut g ends where the running height comes nearest g/k of the total */
		double run = 0, score = 1e9;
		int g = 1;
		cut[0] = a;
		for (int i = a; i < b && g < k; i++) {
			double before = run;
			run += hh[i - a];
			if (run >= total * g / k) {
				int end = run - total * g / k < total * g / k - before || i == cut[g - 1] ? i + 1 : i;
				cut[g++] = end;
			}
		}
		while (g < k) /* fewer pieces than slides: not this k */
			cut[g++] = b;
		cut[k] = b;
		/* a paragraph that ends in a colon stays with what it introduces */
		for (int j = 1; j < k; j++) {
			if (cut[j] <= a || cut[j] >= b)
				continue;
			if (B[cut[j] - 1]->kind == P_PROSE && open_end(B[cut[j] - 1]->text) == 1)
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
			draw_text_slide(pg, next_head(T), B + best_cut[j], best_cut[j + 1] - best_cut[j], px, cols, qs);
			free(qs);
		}
		free(hh);
		return;
	}
	/* too much even for SL_MAX_RUN slides at SL_MIN: as many pieces a slide as fit, in order */
	for (int i = a; i < b;) {
		int j = i + 1;
		for (;;) {
			char *qs = anchored_questions(Q, anchor, nq, i, j + 1);
			double room = slide_questions(pg, qs, SL_Q_TEXT, 0) - top - 6;
			free(qs);
			if (j >= b || body(pg, B + i, j + 1 - i, SL_MIN, 1, 0, 0, w, 0) > room)
				break;
			j++;
		}
		char *qs = anchored_questions(Q, anchor, nq, i, j);
		draw_text_slide(pg, next_head(T), B + i, j - i, SL_MIN, 1, qs);
		free(qs);
		i = j;
	}
	free(hh);
}

/* Whether a piece is a long dump of terminal output (`info`, `heads`, `trace`): set as large
 * as it fits its width (SL_MONO of SL_BODY_MAX at most), it would take more than half a slide
 * of text; it gets a slide of its own, where nothing else makes it smaller. */
static int big_output(page *pg, const piece *p)
{
	if (p->kind != P_OUTPUT)
		return 0;
	const double w = pg->W - 2 * (SL_SIDE + 8) - 16;
	double mono = mono_fit(pg, p->text, w, SL_BODY_MAX * SL_MONO);
	if (mono <= 0)
		return 1;
	PangoLayout *l = mono_layout(pg, mono, p->text, 0);
	double h = layout_h(l);
	g_object_unref(l);
	return h > 0.5 * (pg->H - slide_heading(pg, "X", 0));
}

/* Lines [from, to) of text (lines counted from 0), malloc'd. */
static char *lines_of(const char *text, int from, int to)
{
	const char *s = text, *e;
	for (int i = 0; i < from && s; i++)
		s = (e = strchr(s, '\n')) ? e + 1 : NULL;
	if (!s)
		return strdup("");
	e = s;
	for (int i = from; i < to && e && *e; i++) {
		const char *nx = strchr(e, '\n');
		e = nx ? nx + 1 : e + strlen(e);
	}
	size_t n = (size_t)(e - s);
	while (n && s[n - 1] == '\n')
		n--;
	return strndup(s, n);
}

/* The smallest monospace size of pieces ps[0, n) set as large as they fit a slide of text with
 * questions qs (0: they do not fit at SL_MIN); *px and *cols get the prose size and columns. */
static double dump_size(page *pg, const char *head, piece *const *ps, int n, const char *qs, double *px, int *cols)
{
	const double w = pg->W - 2 * (SL_SIDE + 8);
	double room = slide_questions(pg, qs, SL_Q_TEXT, 0) - (slide_heading(pg, head, 0) + 10) - 6, mono = 0;
	*px = fit_px(pg, ps, n, w, room, cols);
	if (*px > 0)
		body_m(pg, ps, n, *px, *cols, 0, 0, w, 0, &mono);
	return *px > 0 ? mono : 0;
}

/* A long dump of output (the last of B[a, b), after the paragraph that introduces it) on a
 * slide of its own, as large as it fits; a tall one whose lines are set small to fit the
 * height (`trace`) goes on two or three slides, its lines dealt out in order, when each is
 * set larger for it. */
static void dump_run(page *pg, tslides *T, piece **B, int a, int b, piece **Q, const int *anchor, int nq)
{
	piece *d = B[b - 1];
	int lines = n_lines(d->text), cols, best_k = 1;
	char *qs = anchored_questions(Q, anchor, nq, a, b);
	double px, one = dump_size(pg, T->head, B + a, b - a, qs, &px, &cols), best = one;
	int body_lines = lines - !strncmp(d->text, "glassbox> ", 10);
	/* (a table split in two loses its header: only when it is set small otherwise) */
	for (int k = 2; k <= 3 && one < 13 && d->kind == P_OUTPUT && body_lines >= 8 * k; k++) {
		double score = 1e9, p2;
		int c2, first = lines - body_lines;
		for (int j = 0; j < k; j++) {
			int from = first + body_lines * j / k, to = first + body_lines * (j + 1) / k;
			piece part = *d, *ps[2];
			int n = 0;
			part.text = lines_of(d->text, j ? from : 0, to);
			if (!j && b - a > 1)
				ps[n++] = B[a];
			ps[n++] = &part;
			score = fmin(score, part.text ? dump_size(pg, T->h2, ps, n, j == k - 1 ? qs : NULL, &p2, &c2) : 0);
			free(part.text);
		}
		if (score > best + (best_k == 1 ? 3 : 1)) {
			best = score;
			best_k = k;
		}
	}
	if (best_k == 1) {
		if (one > 0)
			draw_text_slide(pg, next_head(T), B + a, b - a, px, cols, qs);
		else
			text_run(pg, T, B, a, b, Q, anchor, nq);
		free(qs);
		return;
	}
	int first = lines - body_lines;
	for (int j = 0; j < best_k; j++) {
		int from = first + body_lines * j / best_k, to = first + body_lines * (j + 1) / best_k, n = 0;
		piece part = *d, *ps[2];
		part.text = lines_of(d->text, j ? from : 0, to);
		if (!j && b - a > 1)
			ps[n++] = B[a];
		ps[n++] = &part;
		const char *h = next_head(T), *q = j == best_k - 1 ? qs : NULL;
		if (part.text && dump_size(pg, h, ps, n, q, &px, &cols) > 0)
			draw_text_slide(pg, h, ps, n, px, cols, q);
		free(part.text);
	}
	free(qs);
}

/* The pieces a slide of text made (split_tall's), freed with it. */
typedef struct piece_list {
	piece **p;
	int n;
} piece_list;

/* Appends p to (*B, *nb), cut in parts that each fit a slide of text at the smallest sizes
 * where it does not: prose and items between sentences, terminal text and formulas between
 * lines (a long listing continues on the next slide, never set smaller: review 5, G1). The
 * parts are new pieces owned by own. 0: out of memory. */
static int split_tall(page *pg, piece *p, piece ***B, int *nb, int *cap, piece_list *own)
{
	const double w = pg->W - 2 * (SL_SIDE + 8);
	const double room = pg->H - 8 - (slide_heading(pg, "X", 0) + 10) - 6;
	size_t at[256];
	int n = 0, mono = p->kind == P_OUTPUT || p->kind == P_LITERAL;
	piece *one[1] = { p };
	if (body(pg, one, 1, SL_MIN, 1, 0, 0, w, 0) > room) {
		if (mono) { /* line starts */
			for (const char *c = p->text; *c && n < 255; c++)
				if (*c == '\n' && c[1])
					at[n++] = (size_t)(c + 1 - p->text);
		} else
			n = sentence_starts(p->text, at, 255);
	}
	at[n] = strlen(p->text);
	size_t from = 0;
	for (int j = 0; j <= n;) {
		/* the longest run of parts from `from` that fits (one at least) */
		int k = j;
		while (k < n) {
			piece t = *p;
			t.text = strndup(p->text + from, at[k + 1] - from);
			piece *tp = &t;
			double h = t.text ? body(pg, &tp, 1, SL_MIN, 1, 0, 0, w, 0) : 1e9;
			free(t.text);
			if (h > room)
				break;
			k++;
		}
		size_t to = at[k], len = to - from;
		while (len && (p->text[from + len - 1] == '\n' || p->text[from + len - 1] == ' '))
			len--;
		piece *np = p;
		if (from || to < strlen(p->text)) {
			np = malloc(sizeof *np);
			piece **no = realloc(own->p, sizeof *no * (size_t)(own->n + 1));
			if (!np || !no) {
				free(np);
				if (no)
					own->p = no;
				return 0;
			}
			own->p = no;
			*np = *p;
			if (!(np->text = strndup(p->text + from, len))) {
				free(np);
				return 0;
			}
			own->p[own->n++] = np;
		}
		if (*nb + 1 >= *cap) {
			piece **nB = realloc(*B, sizeof *nB * (size_t)(*cap * 2));
			if (!nB)
				return 0;
			*B = nB;
			*cap *= 2;
		}
		(*B)[(*nb)++] = np;
		from = to;
		j = k + 1;
		if (k >= n)
			break;
	}
	return 1;
}

/* The slides of a step's text (pieces in order, questions last: a question ends its group):
 * a long dump of output on a slide of its own (the paragraph that introduces it with it), the
 * rest as large as it fits, each question on the slide of the piece it follows. */
static void text_slides(page *pg, tslides *T, piece *const *all, int n_all)
{
	int cap = n_all + 1;
	piece **B = malloc(sizeof *B * (size_t)cap), **Q = malloc(sizeof *Q * (size_t)(n_all + 1));
	int *anchor = malloc(sizeof *anchor * (size_t)(n_all + 1)), nb = 0, nq = 0;
	piece_list own[1] = { { NULL, 0 } };
	if (!B || !Q || !anchor)
		goto out;
	for (int i = 0; i < n_all; i++) {
		if (all[i]->kind == P_QUESTION) {
			anchor[nq] = nb;
			Q[nq++] = all[i];
		} else if (!split_tall(pg, all[i], &B, &nb, &cap, own))
			goto out;
	}
	if (!nb) { /* questions alone: in their box under the heading, as large as fits */
		char *qs = anchored_questions(Q, anchor, nq, 0, 1);
		const double m = SL_SIDE, w = pg->W - 2 * m;
		double top = slide_heading(pg, next_head(T), 1) + 14, px = SL_Q_ALONE;
		PangoLayout *ql = NULL;
		for (; qs && px >= SL_MIN; px -= 1) {
			if (ql)
				g_object_unref(ql);
			ql = q_layout(pg, px, qs, w - 2 * px);
			if (layout_h(ql) + px <= pg->H - top - 12)
				break;
		}
		if (ql) {
			double qh = layout_h(ql);
			cairo_set_source_rgb(pg->cr, 0.93, 0.95, 0.99);
			cairo_rectangle(pg->cr, m, top, w, qh + px);
			cairo_fill(pg->cr);
			show_at(pg, ql, m + px, top + px / 2, 0.1);
			g_object_unref(ql);
		}
		end_page(pg);
		free(qs);
		goto out;
	}
	for (int ra = 0, i = 0; i <= nb; i++) {
		if (i < nb && !big_output(pg, B[i]))
			continue;
		int start = i;
		if (i < nb && i > ra && B[i - 1]->kind == P_PROSE && open_end(B[i - 1]->text) == 1)
			start = i - 1; /* "`info` prints:" stays with what it introduces */
		if (i < nb && start > ra) { /* and so does the text before it that leaves it its size */
			double px, alone, with;
			int cols;
			char *qs = anchored_questions(Q, anchor, nq, start, i + 1);
			alone = dump_size(pg, T->head, B + start, i + 1 - start, qs, &px, &cols);
			free(qs);
			for (int s = ra; s < start && alone > 0; s++) {
				qs = anchored_questions(Q, anchor, nq, s, i + 1);
				with = dump_size(pg, T->head, B + s, i + 1 - s, qs, &px, &cols);
				free(qs);
				if (with >= fmin(alone, SL_DUMP_OK) - 0.25) {
					start = s;
					break;
				}
			}
		}
		if (start > ra)
			text_run(pg, T, B, ra, start, Q, anchor, nq);
		if (i == nb)
			break;
		/* a line or two after it, before the next dump, with no question between: on its
		 * slide where that keeps the dump at SL_DUMP_OK (review 5, G3) */
		int e = i + 1;
		{
			int nx = i + 1, lines = 0, ok = 1;
			while (nx < nb && !big_output(pg, B[nx]))
				nx++;
			for (int j = i + 1; j < nx && ok; j++)
				ok = B[j]->kind == P_PROSE || B[j]->kind == P_ITEM;
			if (ok && nx > i + 1 && nx - (i + 1) <= 2 && !(nx < nb && open_end(B[nx - 1]->text) == 1)) {
				for (int j = i + 1; j < nx; j++)
					lines += prose_lines(pg, B[j]->text, SL_MIN, pg->W - 2 * (SL_SIDE + 8));
				for (int q = 0; q < nq; q++)
					ok &= anchor[q] <= i || anchor[q] >= nx;
				if (ok && lines <= SL_SHORT_LINES) {
					double px, alone, with;
					int cols;
					char *qs = anchored_questions(Q, anchor, nq, start, i + 1);
					alone = dump_size(pg, T->head, B + start, i + 1 - start, qs, &px, &cols);
					free(qs);
					qs = anchored_questions(Q, anchor, nq, start, nx);
					with = dump_size(pg, T->head, B + start, nx - start, qs, &px, &cols);
					free(qs);
					if (alone > 0 && with >= fmin(alone, SL_DUMP_OK) - 0.25)
						e = nx;
				}
			}
		}
		dump_run(pg, T, B, start, e, Q, anchor, nq);
		ra = e;
		i = e - 1;
	}
out:
	for (int i = 0; i < own->n; i++) {
		free(own->p[i]->text);
		free(own->p[i]);
	}
	free(own->p);
	free(B);
	free(Q);
	free(anchor);
}

/* ---- a step, a deck ---------------------------------------------------------------------- */

/* The slides of section [from, to) of bs. */
static void step_slides(page *pg, const blocks *bs, int from, int to, const gb_pdfbook *b)
{
	plan P = { 0 };
	const char *name = bs->b[from].text;
	collect(&P, bs, from, to, b);
	plan_slides(&P, pg, name);
	piece **ps = malloc(sizeof *ps * (size_t)(P.n + 1)), **lead = malloc(sizeof *lead * (size_t)(P.n + 1));
	piece **after = malloc(sizeof *after * (size_t)(P.n + 1));
	int *qi = malloc(sizeof *qi * (size_t)(P.n + 1));
	if (P.oom || !ps || !lead || !after || !qi)
		goto out;
	tslides T = { name, "", 0 };
	snprintf(T.h2, sizeof T.h2, "%s", name); /* (slide_heading numbers them) */
	for (int sl = 0; sl < P.n_slides; sl++) {
		int f = P.fig_of[sl], n = 0, nq = 0, again = f <= -2;
		if (again)
			f = -2 - f;
		if (f >= 0) {
			char head[600];
			/* (shown again: its command says so, so the class knows it is the same figure) */
			char *cmd = again && P.cmds[f] ? g_strdup_printf("%s   (the figure again, for its question)", P.cmds[f]) : NULL;
			figtext F = { P.figs[f], cmd ? cmd : P.cmds[f], lead, after, 0, 0, NULL };
			for (int i = 0; i < P.n; i++) {
				if (P.p[i].slide != sl)
					continue;
				if (P.p[i].kind == P_QUESTION)
					qi[nq++] = i;
				else if (P.p[i].role == R_LEAD)
					lead[F.nl++] = &P.p[i];
				else
					after[F.na++] = &P.p[i];
			}
			char *qs = questions_of(&P, qi, nq);
			F.qs = qs;
			snprintf(head, sizeof head, "%s", name);
			fig_slide(pg, head, &F, fig_text_px(pg, head, &F), 1);
			free(qs);
			g_free(cmd);
		} else {
			for (int i = 0; i < P.n; i++)
				if (P.p[i].slide == sl)
					ps[n++] = &P.p[i];
			text_slides(pg, &T, ps, n);
		}
	}
out:
	free(ps);
	free(lead);
	free(after);
	free(qi);
	free_plan(&P);
}

/* The title slide: the lesson's title, its length ("5 steps, about 15 minutes", from the
 * handout's line under the title), its steps, the glassbox that made it. */
static void title_slide(page *pg, const blocks *bs, const char *version)
{
	const char *title = "glassbox lesson";
	char sub[160] = "";
	int steps = 0, mins = 0, first = -1;
	for (int i = 0; i < bs->n; i++) {
		if (bs->b[i].kind == B_TITLE && first < 0) {
			title = bs->b[i].text;
			first = i;
		} else if (first >= 0 && bs->b[i].kind == B_PARA && !sub[0] &&
		           sscanf(bs->b[i].text, "*A glassbox lesson: %d steps, about %d minutes", &steps, &mins) == 2)
			snprintf(sub, sizeof sub, "%d step%s, about %d minute%s", steps, steps == 1 ? "" : "s", mins,
			         mins == 1 ? "" : "s");
		if (bs->b[i].kind == B_SECTION)
			break;
	}
	const double m = 60, w = pg->W - 2 * m;
	PangoLayout *tl = text_layout(pg, "DejaVu Sans", 1, 40, title, w, 0);
	pango_layout_set_alignment(tl, PANGO_ALIGN_CENTER);
	double y = 0.2 * pg->H;
	show_at(pg, tl, m, y, 0.1);
	y += layout_h(tl) + 16;
	g_object_unref(tl);
	if (sub[0]) {
		PangoLayout *sl = text_layout(pg, "DejaVu Sans", 0, 24, sub, w, 1);
		pango_layout_set_alignment(sl, PANGO_ALIGN_CENTER);
		show_at(pg, sl, m, y, 0.3);
		y += layout_h(sl) + 28;
		g_object_unref(sl);
	}
	/* the steps, an agenda: a column centred on the page, as large as fits (18 pt down) */
	size_t len = 1;
	for (int i = 0; i < bs->n; i++)
		if (bs->b[i].kind == B_SECTION)
			len += strlen(bs->b[i].text) + 1;
	char *list = malloc(len), *o = list;
	if (list) {
		*o = 0;
		for (int i = 0; i < bs->n; i++)
			if (bs->b[i].kind == B_SECTION && strcmp(bs->b[i].text, "Answers"))
				o += sprintf(o, "%s%s", o > list ? "\n" : "", bs->b[i].text);
		double room = pg->H - 60 - y;
		for (double px = 18; px >= SL_MIN; px -= 1) {
			PangoLayout *ll = text_layout(pg, "DejaVu Sans", 0, px, list, w, 0);
			int lw, lh;
			pango_layout_get_pixel_size(ll, &lw, &lh);
			if (lh <= room || px < SL_MIN + 1) {
				show_at(pg, ll, m + (w - lw) / 2, y, 0.2);
				g_object_unref(ll);
				break;
			}
			g_object_unref(ll);
		}
		free(list);
	}
	char made[96];
	snprintf(made, sizeof made, "glassbox %s", version ? version : "");
	PangoLayout *vl = text_layout(pg, "DejaVu Sans", 0, 14, made, w, 1);
	pango_layout_set_alignment(vl, PANGO_ALIGN_CENTER);
	show_at(pg, vl, m, pg->H - 40, 0.45);
	g_object_unref(vl);
	end_page(pg);
}

/* A PDF stream that goes nowhere: the scratch surface that counts a step's slides is a PDF
 * surface like the deck's, so text measures the same on both (a recording surface's metrics
 * differed, and steps were numbered "(3/2)": review 6). */
static cairo_status_t discard(void *closure, const unsigned char *data, unsigned int length)
{
	(void)closure, (void)data, (void)length;
	return CAIRO_STATUS_SUCCESS;
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
	page pg = { cairo_create(surf), W, H, 28, 28, 0, NULL, NULL, 0, 0 };
	title_slide(&pg, &bs, version);
	for (int i = 0; i < bs.n; i++) {
		if (bs.b[i].kind != B_SECTION || !strcmp(bs.b[i].text, "Answers"))
			continue;
		int j = i + 1;
		while (j < bs.n && bs.b[j].kind != B_SECTION)
			j++;
		/* set once on a scratch surface to count its slides, then for the deck, numbered */
		cairo_surface_t *scratch = cairo_pdf_surface_create_for_stream(discard, NULL, W, H);
		page dry = pg;
		dry.cr = cairo_create(scratch);
		dry.step = NULL;
		dry.step_n = 0;
		step_slides(&dry, &bs, i, j, b);
		cairo_destroy(dry.cr);
		cairo_surface_destroy(scratch);
		pg.step = bs.b[i].text;
		pg.step_first = pg.pages;
		pg.step_n = dry.pages - pg.pages;
		step_slides(&pg, &bs, i, j, b);
		pg.step = NULL;
		pg.step_n = 0;
	}
	if (pages)
		*pages = pg.pages;
	int rc = close_doc(&o, surf, pg.cr, bs.oom, path, err);
	free_blocks(&bs);
	return rc;
}
