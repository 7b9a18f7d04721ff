/* t_diagram.c — block diagrams (GB_FIG_DIAGRAM, what `arch` draws) in every backend, and the
 * one formatter of a figure's numbers (issue 18, parts 5 and 7).
 *
 * Diagrams: in cells, the boxes, the group's frame and title, the highlighted block's double
 * lines, colour and marks, the style that fits the room, the window of lines when nothing
 * fits, two stacks side by side with the arrow between them; in the raster layout (through a
 * painter that records every call, so sizes are read, not guessed), every label and detail
 * drawn whole at 1600x900 with no text under 18 px, the highlight filled with the colormap's
 * colour (the palette's, when one is set), the diagram filling the frame; the PNG's pixels;
 * the SVG's text; the CSV's rows.
 *
 * Numbers: gb_fig_fmt_num, _sig and _tick by their cases, and a heatmap cell printed the same
 * by the terminal and by the raster layout (NaN, exponent form, no "-0.00"). */
#include "tests/tap.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "viz/cells.h"
#include "viz/colormap.h"
#include "viz/export.h"
#include "viz/figure.h"
#include "viz/font.h"
#include "viz/raster.h"
#include "viz/svg.h"

/* ---- a painter that records -------------------------------------------------------------- */

typedef struct rec_text {
	char s[256];
	int face, px;
	double x, y;
} rec_text;

typedef struct rec {
	rec_text t[512];
	int nt;
	double minpx;
	int n_rect_rgb;           /* rects of the colour asked for */
	uint8_t want[3];
	int n_poly5;              /* polylines of 5 points (the arrow between two stacks) */
	double poly5_end[2];
} rec;

static double r_width(void *ctx, int face, int px, const char *s)
{
	(void)ctx;
	(void)face;
	return 0.6 * px * gb_utf8_width(s);
}

static void r_rect(void *ctx, double x, double y, double w, double h, const uint8_t rgb[3])
{
	rec *r = ctx;
	if (!memcmp(rgb, r->want, 3) && w > 50 && h > 10)
		r->n_rect_rgb++;
}

static void r_text(void *ctx, int face, int px, double x, double y, double angle, int anchor, const char *s,
                   const uint8_t rgb[3])
{
	rec *r = ctx;
	if (px < r->minpx)
		r->minpx = px;
	if (r->nt < 512) {
		snprintf(r->t[r->nt].s, sizeof r->t[r->nt].s, "%s", s);
		r->t[r->nt].face = face;
		r->t[r->nt].px = px;
		r->t[r->nt].x = x;
		r->t[r->nt].y = y;
		r->nt++;
	}
}

static void r_poly(void *ctx, const double *xy, int n, double width, const uint8_t rgb[3])
{
	rec *r = ctx;
	if (n == 5) {
		r->n_poly5++;
		r->poly5_end[0] = xy[8];
		r->poly5_end[1] = xy[9];
	}
}

static void r_ramp(void *ctx, double x, double y, double w, double h, int cmap, double t0, double t1) {}

static int record(const gb_figure *f, rec *r, gb_raster_info *info, gb_verr *err)
{
	memset(r->t, 0, sizeof r->t);
	r->nt = 0;
	r->minpx = 1e9;
	r->n_rect_rgb = 0;
	r->n_poly5 = 0;
	gb_painter p = { r, r_width, r_rect, r_text, r_poly, r_ramp, NULL, 0 };
	return gb_layout_draw(f, 1600, 900, 1, &p, info, err);
}

static const rec_text *drawn(const rec *r, const char *s)
{
	for (int i = 0; i < r->nt; i++)
		if (!strcmp(r->t[i].s, s))
			return &r->t[i];
	return NULL;
}

/* ---- figures ------------------------------------------------------------------------------ */

/* tiny-lm's architecture, as view_arch builds it, attention highlighted. */
static gb_figure *lm_diagram(int cmap)
{
	gb_figure *f = gb_fig_new(GB_FIG_DIAGRAM);
	gb_fig_set_title(f, "The architecture of tiny-lm: a decoder-only Transformer, 4 layers");
	gb_fig_set_caption(f, "d_model 128: each token's vector  ·  d_head 32: one head's width (4 × 32 = 128)");
	gb_fig_add_block(f, "token embedding", "vocab 1024 × d_model 128", 0, 0);
	gb_fig_add_block(f, "+ learned positions", "n_ctx 128 × d_model 128, added", 0, 0);
	gb_fig_add_block(f, "LayerNorm", "over d_model 128: mean, variance; gain, bias", 1, 0);
	gb_fig_add_block(f, "masked self-attention", "4 heads × d_head 32 = d_model 128, causal", 1, 1);
	gb_fig_add_block(f, "+ residual", "x + attention(norm(x)), d_model 128", 1, 0);
	gb_fig_add_block(f, "LayerNorm", "over d_model 128: mean, variance; gain, bias", 1, 0);
	gb_fig_add_block(f, "feed-forward", "d_model 128 → d_ffn 512 → 128, GELU (tanh)", 1, 0);
	gb_fig_add_block(f, "+ residual", "x + FFN(norm(x)), d_model 128", 1, 0);
	gb_fig_add_block(f, "final LayerNorm", "over d_model 128: mean, variance; gain, bias", 0, 0);
	gb_fig_add_block(f, "output", "d_model 128 → vocab 1024 (tied to E), softmax", 0, 0);
	gb_fig_set_group_title(f, 1, "layer × 4");
	f->cmap = cmap;
	return f;
}

/* an encoder-decoder: two stacks, the second's cross-attention fed by the first */
static gb_figure *mt_diagram(void)
{
	gb_figure *f = gb_fig_new(GB_FIG_DIAGRAM);
	gb_fig_set_title(f, "The architecture of tiny-mt: an encoder-decoder, 2 + 2 layers");
	const char *enc[] = { "enc embedding", "enc positions", "enc attention", "enc add & norm", "enc FFN",
	                      "enc add & norm 2" };
	const char *dec[] = { "dec embedding", "dec positions", "dec attention", "dec add & norm", "cross-attention",
	                      "dec add & norm 2", "dec FFN", "dec add & norm 3", "output" };
	for (int i = 0; i < 6; i++)
		gb_fig_add_block(f, enc[i], "d_model 128", i >= 2 ? 1 : 0, 0);
	f->stack2 = f->n_blocks;
	for (int i = 0; i < 9; i++)
		gb_fig_add_block(f, dec[i], "d_model 128", i >= 2 && i <= 7 ? 2 : 0, i == 4);
	f->feeds = 5;
	gb_fig_set_group_title(f, 1, "encoder layer × 2");
	gb_fig_set_group_title(f, 2, "decoder layer × 2");
	return f;
}

/* The grid's text (plain depth) into a malloc'd string. */
static char *cells_text(const gb_figure *f, int w, int h, int depth, int row0, gb_grid *keep)
{
	gb_grid g;
	gb_verr err;
	gb_cells_opts o;
	gb_cells_opts_default(&o, depth);
	o.row0 = row0;
	char *out = NULL;
	size_t len;
	if (gb_grid_init(&g, w, h, &err))
		return NULL;
	if (gb_cells_render(&g, 0, 0, w, h, f, &o, &err) || gb_cells_write(&g, GB_DEPTH_PLAIN, &out, &len, &err)) {
		tap_diag("cells: %s", err.msg);
		gb_grid_free(&g);
		return NULL;
	}
	if (keep)
		*keep = g;
	else
		gb_grid_free(&g);
	return out;
}

static int count(const char *s, const char *sub)
{
	int n = 0;
	for (const char *p = s; p && (p = strstr(p, sub)); p += strlen(sub))
		n++;
	return n;
}

/* ---- the tests ---------------------------------------------------------------------------- */

static void test_formatter(void)
{
	char b[64];
	gb_fig_fmt_num(NAN, 2, b, sizeof b);
	tap_ok(!strcmp(b, "NaN"), "fmt_num: NaN is \"NaN\" (%s)", b);
	gb_fig_fmt_num(-INFINITY, 2, b, sizeof b);
	tap_ok(!strcmp(b, "-inf"), "fmt_num: -inf (%s)", b);
	gb_fig_fmt_num(-0.001, 2, b, sizeof b);
	tap_ok(!strcmp(b, "0.00"), "fmt_num: -0.001 at 2 digits is \"0.00\", not \"-0.00\" (%s)", b);
	gb_fig_fmt_num(1234567, 2, b, sizeof b);
	tap_ok(!strcmp(b, "1.23e+06"), "fmt_num: 1234567 in exponent form (%s)", b);
	gb_fig_fmt_num(-0.125, 3, b, sizeof b);
	tap_ok(!strcmp(b, "-0.125"), "fmt_num: -0.125 at 3 digits (%s)", b);
	int n = gb_fig_fmt_num(0.5, 40, b, sizeof b);
	tap_ok(!strcmp(b, "0.500000000") && n == 11, "fmt_num: precision clamped to 9 digits, length returned (%s, %d)", b, n);
	gb_fig_fmt_num(3.14159, 2, b, 4);
	tap_ok(!strcmp(b, "3.1"), "fmt_num: a short buffer is cut and terminated (%s)", b);
	gb_fig_fmt_sig(0.123456, 3, b, sizeof b);
	tap_ok(!strcmp(b, "0.123"), "fmt_sig: 3 significant digits (%s)", b);
	gb_fig_fmt_tick(0.4, 0.2, b, sizeof b);
	tap_ok(!strcmp(b, "0.4"), "fmt_tick: step 0.2 gives one decimal (%s)", b);
	gb_fig_fmt_tick(1e-12, 0.5, b, sizeof b);
	tap_ok(!strcmp(b, "0.0"), "fmt_tick: a rounding residue is 0 (%s)", b);
	gb_fig_fmt_tick(10, 5, b, sizeof b);
	tap_ok(!strcmp(b, "10"), "fmt_tick: step 5 gives none (%s)", b);
}

/* The terminal and the raster layout print a cell's number alike. */
static void test_one_formatter(void)
{
	float v[4] = { NAN, 1234567.0f, -0.001f, 0.25f };
	gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
	gb_fig_set_values(f, v, 2, 2);
	gb_fig_set_title(f, "numbers");
	f->numbers = 1;
	f->precision = 2;
	char *t = cells_text(f, 100, 20, GB_DEPTH_PLAIN, 0, NULL);
	rec r;
	gb_verr err;
	int rc = record(f, &r, NULL, &err);
	const char *want[4] = { "NaN", "1.23e+06", "0.00", "0.25" };
	int cells_all = t != NULL, raster_all = rc == 0;
	for (int i = 0; i < 4; i++) {
		cells_all &= t && strstr(t, want[i]) != NULL;
		raster_all &= drawn(&r, want[i]) != NULL;
	}
	tap_ok(cells_all && raster_all, "a heatmap's cells read NaN, 1.23e+06, 0.00, 0.25 in the terminal and in the PNG/SVG layout alike");
	tap_ok(t && !strstr(t, "nan") && !strstr(t, "-0.00") && !drawn(&r, "-0.00"),
	       "no \"nan\" and no \"-0.00\" in either");
	free(t);
	gb_fig_free(f);
}

static void test_cells(void)
{
	gb_figure *f = lm_diagram(GB_CMAP_VIRIDIS);
	gb_grid g;
	char *t = cells_text(f, 160, 46, GB_DEPTH_PLAIN, 0, &g);
	int labels = 1;
	for (int i = 0; i < f->n_blocks; i++)
		labels &= t && strstr(t, f->blocks[i].label) && strstr(t, f->blocks[i].detail);
	tap_ok(labels, "cells at 160x46: every block's label and detail, whole");
	tap_ok(t && count(t, "┌") == 9 && count(t, "╔") == 1 && count(t, "╚") == 1,
	       "cells at 160x46: a box per block, the highlighted one in double lines (%d light, %d double)", count(t, "┌"),
	       count(t, "╔"));
	tap_ok(t && strstr(t, "╭─ layer × 4 ") && count(t, "╰") == 1, "cells: the layer's blocks framed under \"layer × 4\"");
	tap_ok(t && count(t, "↓") == 9 && strstr(t, "║◀"), "cells: an arrow between each two blocks (%d), ◀ marks the highlight",
	       count(t, "↓"));
	/* the highlighted line, and nothing else, wears the colormap's colour behind its text */
	gb_grid_free(&g);
	gb_cells_opts o;
	gb_cells_opts_default(&o, GB_DEPTH_TRUE);
	gb_verr err;
	gb_grid_init(&g, 160, 46, &err);
	gb_cells_render(&g, 0, 0, 160, 46, f, &o, &err);
	uint8_t want[3];
	gb_cmap_rgb(GB_CMAP_VIRIDIS, 0.8, want);
	int coloured = 0, rows_coloured = 0;
	for (int y = 0; y < g.used_h; y++) {
		int in_row = 0;
		for (int x = 0; x < g.w; x++) {
			const gb_cell *c = &g.cells[(size_t)y * g.w + x];
			if ((c->attr & GB_ATTR_BG) && !memcmp(c->bg, want, 3))
				coloured++, in_row = 1;
		}
		rows_coloured += in_row;
	}
	tap_ok(coloured > 60 && rows_coloured == 1,
	       "truecolor: one line (the highlighted block's) behind viridis(0.8): %d cells on %d line(s)", coloured,
	       rows_coloured);
	gb_grid_free(&g);
	free(t);

	/* 80x22: one line a block, every label still there, the highlight marked ▶ ... ◀ */
	t = cells_text(f, 80, 22, GB_DEPTH_PLAIN, 0, &g);
	labels = 1;
	for (int i = 0; i < f->n_blocks; i++)
		labels &= t && strstr(t, f->blocks[i].label) != NULL;
	tap_ok(labels && t && strstr(t, "▶masked self-attention") && count(t, "◀") == 1 && g.used_h <= 22,
	       "cells at 80x22: every block on a line of its own (%d lines), the highlight marked", g.used_h);
	int longest = 0;
	for (const char *p = t; p && *p;) {
		const char *e = strchr(p, '\n');
		char line[1024];
		size_t k = e ? (size_t)(e - p) : strlen(p);
		memcpy(line, p, k < sizeof line ? k : sizeof line - 1);
		line[k < sizeof line ? k : sizeof line - 1] = 0;
		longest = gb_utf8_width(line) > longest ? gb_utf8_width(line) : longest;
		p = e ? e + 1 : NULL;
	}
	tap_ok(longest <= 80, "cells at 80x22: no line wider than 80 columns (%d)", longest);
	gb_grid_free(&g);
	free(t);

	/* too little room: a window of lines, which row0 moves */
	char *t0 = cells_text(f, 60, 8, GB_DEPTH_PLAIN, 0, &g);
	int total = g.shown.rows_total, shown = g.shown.rows;
	gb_grid_free(&g);
	char *t1 = cells_text(f, 60, 8, GB_DEPTH_PLAIN, 3, &g);
	tap_ok(t0 && t1 && shown < total && strstr(t0, "lines 1-") && g.shown.row0 == 3 && strcmp(t0, t1),
	       "cells at 60x8: a window of %d of %d lines, with a notice, scrolled by row0", shown, total);
	gb_grid_free(&g);
	free(t0);
	free(t1);
	gb_fig_free(f);

	/* two stacks */
	f = mt_diagram();
	t = cells_text(f, 160, 46, GB_DEPTH_PLAIN, 0, NULL);
	const char *enc = t ? strstr(t, "enc attention") : NULL, *dec = t ? strstr(t, "dec attention") : NULL;
	int same_line = enc && dec && !memchr(enc, '\n', (size_t)(dec - enc));
	tap_ok(same_line && strstr(t, "encoder layer × 2") && strstr(t, "decoder layer × 2"),
	       "cells at 160x46: an encoder-decoder's stacks side by side, each framed");
	tap_ok(t && strstr(t, "▶│ cross-attention") == NULL && strstr(t, "┼▶║ cross-attention"),
	       "cells: the arrow from the encoder enters the cross-attention block");
	free(t);
	t = cells_text(f, 80, 40, GB_DEPTH_PLAIN, 0, NULL);
	enc = t ? strstr(t, "enc attention") : NULL;
	dec = t ? strstr(t, "dec attention") : NULL;
	tap_ok(enc && dec && dec > enc && memchr(enc, '\n', (size_t)(dec - enc)), "cells at 80 columns: one stack above the other");
	free(t);
	gb_fig_free(f);
}

static void test_raster(void)
{
	gb_figure *f = lm_diagram(GB_CMAP_VIRIDIS);
	rec r;
	gb_raster_info info;
	gb_verr err;
	gb_cmap_rgb(GB_CMAP_VIRIDIS, 0.8, r.want);
	int rc = record(f, &r, &info, &err);
	int all = rc == 0;
	for (int i = 0; i < f->n_blocks; i++)
		all &= drawn(&r, f->blocks[i].label) && drawn(&r, f->blocks[i].detail);
	tap_ok(all, "1600x900: every label and detail drawn whole");
	tap_ok(rc == 0 && r.minpx >= 18, "1600x900: no text under 18 px (smallest %g)", r.minpx);
	const rec_text *l = drawn(&r, "masked self-attention");
	tap_ok(l && l->px >= 18 && l->face == GB_FACE_BOLD, "labels in bold at %d px", l ? l->px : 0);
	tap_ok(r.n_rect_rgb == 1, "the highlighted block is filled with viridis(0.8) (%d such box)", r.n_rect_rgb);
	tap_ok(drawn(&r, "\xE2\x97\x80 on show") && drawn(&r, "layer × 4"), "marked \"◀ on show\"; the group titled");
	tap_ok(info.plot.h >= 0.7 * 900 && info.plot.w >= 0.55 * 1600,
	       "the diagram fills the frame: %dx%d of 1600x900", info.plot.w, info.plot.h);
	/* top to bottom in reading order */
	const rec_text *a = drawn(&r, "token embedding"), *b = drawn(&r, "output");
	tap_ok(a && b && a->y < l->y && l->y < b->y, "blocks top to bottom in reading order");
	gb_fig_free(f);

	/* a palette reaches the highlight */
	f = lm_diagram(GB_CMAP_GRAY);
	gb_cmap_rgb(GB_CMAP_GRAY, 0.8, r.want);
	record(f, &r, NULL, &err);
	tap_ok(r.n_rect_rgb == 1 && r.want[0] == r.want[1] && r.want[1] == r.want[2],
	       "with the gray palette the highlight is gray (%d,%d,%d)", r.want[0], r.want[1], r.want[2]);

	/* the PNG's pixels */
	gb_canvas c;
	gb_raster_opts ro = { 0 };
	rc = gb_raster_render(f, &ro, &c, &info, &err);
	long ink = 0, hl = 0;
	for (int y = info.plot.y; rc == 0 && y < info.plot.y + info.plot.h; y++)
		for (int x = info.plot.x; x < info.plot.x + info.plot.w; x++) {
			const uint8_t *p = c.rgba + ((size_t)y * c.w + x) * 4;
			ink += p[0] < 200 || p[1] < 200 || p[2] < 200 || (p[0] != 255 && p[0] != 0xF1 && p[0] != 0xFF);
			hl += !memcmp(p, r.want, 3);
		}
	tap_ok(rc == 0 && ink > 20000 && hl > 20000, "PNG pixels: %ld inked and %ld highlight pixels in the plot area", ink, hl);
	if (rc == 0)
		gb_canvas_free(&c);
	gb_fig_free(f);

	/* two stacks, and the arrow between them */
	f = mt_diagram();
	r.want[0] = r.want[1] = r.want[2] = 0;
	rc = record(f, &r, &info, &err);
	const rec_text *e = drawn(&r, "enc attention"), *d = drawn(&r, "dec attention"), *x = drawn(&r, "cross-attention");
	tap_ok(rc == 0 && e && d && e->x < 800 && d->x > 800 && fabs(e->y - d->y) < 1,
	       "two stacks side by side, aligned at the top");
	tap_ok(r.n_poly5 == 1 && x && fabs(r.poly5_end[1] - (x->y - 0.35 * x->px)) < 0.6 * x->px && r.poly5_end[0] < x->x,
	       "an arrow from the encoder ends at the cross-attention block's side");
	tap_ok(r.minpx >= 18, "two stacks: no text under 18 px (smallest %g)", r.minpx);
	char *svg = gb_svg_render(f, 0, 0, 0, "test", &err);
	tap_ok(svg && strstr(svg, ">cross-attention<") && strstr(svg, ">decoder layer × 2<"), "SVG: the blocks and groups as text");
	free(svg);
	gb_fig_free(f);
}

static void test_csv(void)
{
	gb_figure *f = lm_diagram(GB_CMAP_VIRIDIS);
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	gb_verr err;
	int rc = gb_write_csv(f, fp, &err);
	fclose(fp);
	tap_ok(rc == 0 && buf && !strncmp(buf, "group,block,detail,highlight\n", 29) &&
	       strstr(buf, "layer × 4,masked self-attention,\"4 heads × d_head 32 = d_model 128, causal\",1\n") &&
	       count(buf, "\n") == 11, "CSV: a row per block with its group, detail and highlight");
	free(buf);
	fp = open_memstream(&buf, &len);
	rc = gb_write_npy(f, fp, &err);
	fclose(fp);
	tap_ok(rc != 0 && strstr(err.msg, "PNG, SVG or CSV"), "NPY: an error that says what to use");
	free(buf);
	gb_fig_free(f);
}

int main(void)
{
	test_formatter();
	test_one_formatter();
	test_cells();
	test_raster();
	test_csv();
	return tap_done();
}
