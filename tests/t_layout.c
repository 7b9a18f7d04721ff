/* t_layout.c — the figure layout as a slide, judged by decoded pixels and by what the layout
 * says it measured: the data fills 40% of a 1600 x 900 slide each way (non-square cells for a
 * wide matrix, square ones for a token x token map that meets the bar), no text under 18 px
 * (measured on the glyphs too), every label up to 64 with its index, round-step ticks beyond,
 * long labels shortened and counted, titles wrapped, the subtitle, text in cells (black or white
 * by the cell), side columns, and the PNG text chunks carrying the measurements. The fourth
 * review's findings on the handout's 1200 x 675: feature numbers thinned as numbers ("0 5 10",
 * not '2 "1"'), a clipped value's mark kept in its cell ("97.8▲"), numbers apart in their cells,
 * panel titles apart, a legend of long names whole (under the plot), every row of a row of maps
 * named where the room allows. */
#include "tests/tap.h"
#include "viz/colormap.h"
#include "viz/figure.h"
#include "viz/font.h"
#include "viz/png.h"
#include "viz/raster.h"
#include "viz/svg.h"

#include <unistd.h>

static const char *TOK[19] = { "When", " Mar", "y", " and", " Jo", "hn", " went", " to", " the", " par",
                               "k", ",", " Jo", "hn", " g", "ave", " a", " ball", " to" };

static const uint8_t *px(const gb_canvas *c, int x, int y)
{
	return c->rgba + ((size_t)y * c->w + x) * 4;
}

/* Dark pixels (text, ticks) in [x0, x1) x [y0, y1). */
static int ink(const gb_canvas *c, int x0, int y0, int x1, int y1)
{
	int n = 0;
	for (int y = y0 < 0 ? 0 : y0; y < y1 && y < c->h; y++)
		for (int x = x0 < 0 ? 0 : x0; x < x1 && x < c->w; x++)
			n += px(c, x, y)[0] < 160 && px(c, x, y)[1] < 160;
	return n;
}

/* The rows of [x0, x1) that hold dark ink, from y0 down to y1: first and last. */
static int ink_rows(const gb_canvas *c, int x0, int x1, int y0, int y1, int *first, int *last)
{
	*first = *last = -1;
	for (int y = y0; y < y1 && y < c->h; y++)
		if (ink(c, x0, y, x1, y + 1)) {
			if (*first < 0)
				*first = y;
			*last = y;
		}
	return *first >= 0;
}

static gb_figure *wide(int rows, int cols)
{
	gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
	float *v = malloc(sizeof *v * (size_t)rows * cols);
	for (int i = 0; i < rows * cols; i++)
		v[i] = sinf(i * 0.37f) * 2;
	gb_fig_set_values(f, v, rows, cols);
	free(v);
	gb_fig_set_row_labels(f, TOK);
	gb_fig_set_axes(f, "token", "hidden unit");
	gb_fig_set_title(f, "Feed-forward hidden units after the activation, layer 1");
	gb_fig_set_caption(f, "h = gelu(x W1 + b1);  out = h W2 + b2");
	f->cmap = GB_CMAP_COOLWARM;
	f->range = GB_RANGE_SYMMETRIC;
	return f;
}

static int is_round(int k)
{
	while (k % 10 == 0)
		k /= 10;
	return k == 1 || k == 2 || k == 5 || k == 25;
}

/* 19 x 512 (ffn 1): a sliver before; now non-square cells fill the box, ticks at a round step. */
static void test_wide(void)
{
	gb_figure *f = wide(19, 512);
	gb_raster_info in;
	gb_canvas c;
	gb_verr err = { "" };
	if (!tap_ok(gb_raster_render(f, NULL, &c, &in, &err) == 0, "19 x 512 renders (%s)", err.msg))
		return;
	tap_ok(in.box.w >= 0.4 * 1600 && in.box.h >= 0.4 * 900, "19 x 512 fills %d x %d px (%.0f%% x %.0f%%, bar 40%%)",
	       in.box.w, in.box.h, 100.0 * in.box.w / 1600, 100.0 * in.box.h / 900);
	tap_ok(in.plot.h / 19 > 2 * (in.plot.w / 512), "its cells are not square (%.1f x %.1f px)", in.plot.w / 512.0,
	       in.plot.h / 19.0);
	tap_ok(in.min_text_px >= 18 && in.labels_cut == 0, "smallest text %d px, %d labels cut", in.min_text_px, in.labels_cut);
	tap_ok(in.row_labels_shown == 19 && in.row_labels_total == 19, "all 19 rows labelled (%d)", in.row_labels_shown);
	tap_ok(in.col_labels_total == 512 && in.col_label_stride > 1 && is_round(in.col_label_stride) &&
	           in.col_labels_shown == 512 / in.col_label_stride + 1, /* and column 1 */
	       "512 columns: ticks every %d (a round step), %d of them", in.col_label_stride, in.col_labels_shown);
	{
		/* a tick label under column k * stride, none half way between */
		int k = in.col_label_stride, y0 = in.plot.y + in.plot.h + 2, y1 = y0 + 40;
		double cw = in.plot.w / 512.0;
		/* columns are numbered from 1: index 4k is column 4k - 1 */
		int xa = in.plot.x + (int)((4 * k - 0.5) * cw), xb = in.plot.x + (int)((4.5 * k - 0.5) * cw);
		int at = ink(&c, xa - 3, y0, xa + 4, y1), between = ink(&c, xb - 3, y0, xb + 4, y1);
		tap_ok(at > 10 && between == 0, "a label under column %d (%d dark pixels), none under column %d (%d)", 4 * k, at,
		       (int)(4.5 * k), between);
		/* the digits' height on the slide: the cap height of at least 18 px DejaVu (0.73 em) */
		int first, last;
		ink_rows(&c, xa - 3, xa + 4, y0 + (int)(6 + 1), y1, &first, &last);
		tap_ok(first > 0 && last - first + 1 >= 13, "tick digits stand %d px tall (18 px text: 13)", last - first + 1);
	}
	gb_canvas_free(&c);

	/* the same at scale 2: every size doubles, the measurements with it */
	{
		gb_raster_opts o = { 0, 0, 2 };
		gb_raster_info i2 = { 0 };
		int rc = gb_raster_render(f, &o, &c, &i2, &err);
		tap_ok(rc == 0 && i2.min_text_px == 2 * in.min_text_px &&
		           i2.box.w >= 0.4 * 3200 && i2.box.h >= 0.4 * 1800,
		       "scale 2: smallest text %d px (2 x %d), box %d x %d", i2.min_text_px, in.min_text_px, i2.box.w, i2.box.h);
		gb_canvas_free(&c);
	}
	gb_fig_free(f);

	/* 19 x 64 (a window of units, 65-128): every column labelled with its index */
	f = wide(19, 64);
	f->col_index0 = 65;
	f->row_index0 = 1;
	gb_fig_set_subtitle(f, "tiny-lm · units 65-128 of 512");
	if (tap_ok(gb_raster_render(f, NULL, &c, &in, &err) == 0, "19 x 64 renders (%s)", err.msg)) {
		tap_ok(in.col_labels_shown == 64 && in.row_labels_shown == 19 && in.labels_cut == 0 && in.min_text_px >= 18,
		       "19 x 64: all 64 columns and 19 rows labelled at %d px and up, none cut", in.min_text_px);
		tap_ok(in.box.w >= 0.7 * 1600 && in.box.h >= 0.6 * 900, "and it fills the plot box (%d x %d)", in.box.w, in.box.h);
		/* the subtitle: a line of ink between the title and the cells */
		{
			int first, last, tb = in.title.y + in.title.h;
			ink_rows(&c, 600, 1000, tb + 2, in.plot.y - 2, &first, &last);
			tap_ok(first > tb && last < in.plot.y && last - first >= 10, "subtitle drawn under the title (rows %d-%d)",
			       first, last);
		}
		/* "1 When": the index stands left of the token, so row 0's label reaches further left
		 * than the token alone would */
		tap_ok(ink(&c, 0, in.plot.y, in.plot.x - 2, in.plot.y + in.plot.h / 19) > 60, "row 0's label \"1 When\" drawn");
		gb_canvas_free(&c);
	}
	gb_fig_free(f);
}

/* Token x token: square cells while they meet the bar. */
static void test_square(void)
{
	gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
	float v[19 * 19];
	gb_raster_info in;
	gb_canvas c;
	gb_verr err = { "" };
	for (int i = 0; i < 19 * 19; i++)
		v[i] = i % 19 <= i / 19 ? 1.0f / (i / 19 + 1) : 0;
	gb_fig_set_values(f, v, 19, 19);
	gb_fig_set_row_labels(f, TOK);
	gb_fig_set_col_labels(f, TOK);
	gb_fig_set_axes(f, "query", "key");
	gb_fig_set_title(f, "Layer 1, head 1: attention weights");
	if (tap_ok(gb_raster_render(f, NULL, &c, &in, &err) == 0, "19 x 19 attention renders (%s)", err.msg)) {
		tap_ok(in.plot.w == in.plot.h, "square cells (%d x %d plot)", in.plot.w, in.plot.h);
		tap_ok(in.box.w >= 640 && in.box.h >= 360, "and they meet the bar (%d x %d)", in.box.w, in.box.h);
		tap_ok(in.row_labels_shown == 19 && in.col_labels_shown == 19 && in.min_text_px >= 18 && in.labels_cut == 0,
		       "every query and key labelled, at %d px and up", in.min_text_px);
		gb_canvas_free(&c);
	}
	gb_fig_free(f);
}

/* The logit lens: a token in each cell, black on light cells, white on dark; "" prints the
 * number; a text too long for its cell is shortened and counted. */
static void test_cell_text(void)
{
	gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
	static const char *rl[5] = { "embed", "layer 1", "layer 2", "layer 3", "layer 4" };
	float v[5 * 8];
	const char *ct[5 * 8];
	gb_raster_info in;
	gb_canvas c;
	gb_verr err = { "" };
	for (int i = 0; i < 40; i++) {
		v[i] = (i % 2) ? 0.02f : 0.98f; /* dark and light cells in turn */
		ct[i] = TOK[i % 19];
	}
	ct[5] = "";
	gb_fig_set_values(f, v, 5, 8);
	gb_fig_set_row_labels(f, rl);
	gb_fig_set_col_labels(f, TOK + 11);
	gb_fig_set_cell_text(f, ct);
	f->range = GB_RANGE_FIXED;
	f->vmin = 0;
	f->vmax = 1;
	gb_fig_set_title(f, "Logit lens: the top next token after each layer");
	if (tap_ok(gb_raster_render(f, NULL, &c, &in, &err) == 0, "lens renders (%s)", err.msg)) {
		int cw = in.plot.w / 8, ch = in.plot.h / 5, white = 0, black = 0, num = 0;
		tap_ok(in.cell_text_px >= 18 && in.labels_cut == 0, "cell texts at %d px, none cut", in.cell_text_px);
		/* cell (0,0) light: black text; cell (0,1) dark: white text; (0,5) "" prints 0.02 */
		for (int y = in.plot.y + ch / 4; y < in.plot.y + 3 * ch / 4; y++)
			for (int x = 0; x < cw; x++) {
				const uint8_t *a = px(&c, in.plot.x + x, y), *b = px(&c, in.plot.x + cw + x, y);
				black += a[0] < 60 && a[1] < 60 && a[2] < 60;
				white += b[0] > 200 && b[1] > 200 && b[2] > 200;
				num += px(&c, in.plot.x + 5 * cw + x, y)[0] > 200;
			}
		tap_ok(black > 50 && white > 50, "black text on the light cell (%d px), white on the dark one (%d px)", black, white);
		tap_ok(num > 50, "an empty cell text prints the cell's number (%d px)", num);
		gb_canvas_free(&c);
	}
	/* too long for a cell at 18 px, even on two lines: shortened, and the layout says so */
	{
		char *ct2[40];
		for (int i = 0; i < 40; i++)
			ct2[i] = (char *)(i == 7 ? "<|endoftext|><|endoftext|><|endoftext|>" : TOK[i % 19]);
		gb_fig_set_cell_text(f, (const char *const *)ct2);
		int rc = gb_raster_render(f, NULL, &c, &in, &err);
		tap_ok(rc == 0 && in.labels_cut == 1,
		       "a cell text too long for its cell is counted as cut (%d)", in.labels_cut);
		gb_canvas_free(&c);
	}
	gb_fig_free(f);
}

/* Layer norm: mean and variance beside the rows, not on the colour scale. */
static void test_sides(void)
{
	gb_figure *f = wide(19, 128);
	float mean[19], var[19];
	gb_raster_info in, bare;
	gb_canvas c;
	gb_verr err = { "" };
	gb_raster_render(f, NULL, &c, &bare, &err);
	gb_canvas_free(&c);
	for (int i = 0; i < 19; i++) {
		mean[i] = 0.001f * (i - 9);
		var[i] = 0.02f + 0.001f * i;
	}
	gb_fig_add_side(f, "mean", mean);
	gb_fig_add_side(f, "variance", var);
	f->side_precision = 3;
	if (tap_ok(gb_raster_render(f, NULL, &c, &in, &err) == 0, "layer norm with side columns renders (%s)", err.msg)) {
		int right = in.plot.x + in.plot.w, gap = in.colorbar.x - right;
		int row0 = ink(&c, right + 4, in.plot.y, in.colorbar.x - 20, in.plot.y + in.plot.h / 19);
		int title = ink(&c, right + 4, in.plot.y - 30, in.colorbar.x - 20, in.plot.y - 2);
		tap_ok(gap > 120, "the colorbar moves right for them (%d px after the cells)", gap);
		tap_ok(row0 > 40 && title > 40, "row 0's numbers (%d px) and the titles above (%d px)", row0, title);
		tap_ok(in.min_text_px >= 18 && in.labels_cut == 0, "at %d px and up, nothing cut", in.min_text_px);
		tap_ok(in.box.w >= 640 && in.box.h >= 360, "and the cells still fill the bar (%d x %d)", in.box.w, in.box.h);
		gb_canvas_free(&c);
	}
	gb_fig_free(f);
}

/* Long labels and titles: wrapped, or shortened and counted, never cut silently. */
static void test_long_text(void)
{
	gb_figure *f = wide(19, 64);
	char *rl[19], longl[300];
	gb_raster_info in;
	gb_canvas c;
	gb_verr err = { "" };
	memset(longl, 'x', 200);
	longl[200] = 0;
	for (int i = 0; i < 19; i++)
		rl[i] = (char *)(i == 3 ? longl : TOK[i]);
	gb_fig_set_row_labels(f, (const char *const *)rl);
	gb_fig_set_title(f, "A title long enough that it cannot stand on one line of a slide at any size a "
	                    "reader at the back of a room could still read, so it wraps");
	if (tap_ok(gb_raster_render(f, NULL, &c, &in, &err) == 0, "long labels render (%s)", err.msg)) {
		tap_ok(in.labels_cut == 1, "the one long row label is shortened and counted (%d)", in.labels_cut);
		tap_ok(in.plot.x <= 0.28 * 1600 + 28 + 80, "and takes no more than its share of the width (cells from x %d)",
		       in.plot.x);
		tap_ok(in.title.h >= 2 * 22 && in.min_text_px >= 18, "the title wraps onto two lines (%d px tall)", in.title.h);
		gb_canvas_free(&c);
	}
	gb_fig_free(f);
}

/* What the layout measured goes into the PNG (and the SVG) as text chunks. */
static void test_report(void)
{
	char dir[] = "/tmp/gb-t_layout-XXXXXX", path[64];
	gb_figure *f = wide(19, 512);
	gb_raster_info in;
	gb_canvas c, d;
	gb_png_text *t = NULL;
	int nt = 0;
	gb_verr err = { "" };
	char want[64];
	if (!mkdtemp(dir))
		return;
	snprintf(path, sizeof path, "%s/ffn.png", dir);
	gb_raster_render(f, NULL, &c, &in, &err);
	if (tap_ok(gb_png_write_figure(f, path, NULL, "1", 0, &err) == 0 && gb_png_read(path, &d, &t, &nt, &err) == 0,
	           "PNG written and read (%s)", err.msg)) {
		snprintf(want, sizeof want, "%d %d %d %d", in.box.x, in.box.y, in.box.w, in.box.h);
		tap_ok(gb_png_text_get(t, nt, "PlotBox") && !strcmp(gb_png_text_get(t, nt, "PlotBox"), want),
		       "PlotBox = the layout's box (%s)", want);
		tap_ok(gb_png_text_get(t, nt, "Kind") && !strcmp(gb_png_text_get(t, nt, "Kind"), "heatmap"), "Kind = heatmap");
		tap_ok(gb_png_text_get(t, nt, "MinTextPx") && atoi(gb_png_text_get(t, nt, "MinTextPx")) == in.min_text_px,
		       "MinTextPx = %d", in.min_text_px);
		tap_ok(gb_png_text_get(t, nt, "LabelsCut") && !strcmp(gb_png_text_get(t, nt, "LabelsCut"), "0"), "LabelsCut = 0");
		snprintf(want, sizeof want, "rows 19/19, columns %d/512", in.col_labels_shown);
		tap_ok(gb_png_text_get(t, nt, "LabelsShown") && !strcmp(gb_png_text_get(t, nt, "LabelsShown"), want),
		       "LabelsShown = %s", want);
		gb_png_text_free(t, nt);
		gb_canvas_free(&d);
	}
	gb_canvas_free(&c);
	{
		char *svg = gb_svg_render(f, 0, 0, 1, "1", &err);
		snprintf(want, sizeof want, "<gb:item key=\"PlotBox\">%d %d %d %d</gb:item>", in.box.x, in.box.y, in.box.w, in.box.h);
		tap_ok(svg && strstr(svg, want) && strstr(svg, "<gb:item key=\"MinTextPx\">18</gb:item>"),
		       "the SVG's metadata says the same (%s)", want);
		free(svg);
	}
	unlink(path);
	rmdir(dir);
	gb_fig_free(f);
}

/* Bars: three still fill the bar's height; labels and values at 18 px and up. */
static void test_bars(void)
{
	static const float v[3] = { 0.9f, 0.07f, 0.03f };
	static const char *l[3] = { " cat", " dog", " lamb" };
	gb_figure *f = gb_fig_new(GB_FIG_BARS);
	gb_raster_info in;
	gb_canvas c;
	gb_verr err = { "" };
	gb_fig_set_values(f, v, 1, 3);
	gb_fig_set_col_labels(f, l);
	if (tap_ok(gb_raster_render(f, NULL, &c, &in, &err) == 0, "3 bars render (%s)", err.msg)) {
		tap_ok(in.box.h >= 360 && in.box.w >= 640 && in.min_text_px >= 18,
		       "3 bars fill %d x %d, smallest text %d px", in.box.w, in.box.h, in.min_text_px);
		gb_canvas_free(&c);
	}
	gb_fig_free(f);
}


/* The layout of f on w x h as SVG (its texts as <text> elements), what it measured in *in. */
static char *svg_of(const gb_figure *f, int w, int h, gb_raster_info *in)
{
	gb_verr err = { "" };
	gb_raster_opts o = { w, h, 1 };
	gb_canvas c;
	if (in && !gb_raster_render(f, &o, &c, in, &err))
		gb_canvas_free(&c);
	return gb_svg_render(f, w, h, 1, "1", &err);
}

/* Positional encoding's features "0" .. "63" (labels that are their own numbers), thinned on
 * the handout's 1200 x 675: plain numbers at round values from 0, never an index beside a
 * quoted feature ('2 "1"'). */
static void test_self_numbered(void)
{
	gb_figure *f = wide(12, 64);
	char *cl[64];
	gb_raster_info in;
	for (int i = 0; i < 64; i++) {
		cl[i] = malloc(8);
		snprintf(cl[i], 8, "%d", i);
	}
	gb_fig_set_col_labels(f, (const char *const *)cl);
	f->col_index0 = 0;
	char *svg = svg_of(f, 1200, 675, &in);
	tap_ok(svg && in.col_labels_shown < 64 && !strstr(svg, "&quot;") && strstr(svg, ">0</text>") &&
	       strstr(svg, ">10</text>") && !strstr(svg, ">1</text>"),
	       "feature numbers 0-63 thinned as numbers (%d of 64 shown, 0 and 10 among them, no quotes)",
	       in.col_labels_shown);
	free(svg);
	for (int i = 0; i < 64; i++)
		free(cl[i]);
	gb_fig_free(f);
}

/* The residual stream on the handout: 9 stages x 14 tokens, a clipped value's text "97.8▲" in
 * its cell whole (it was "97...."), and numbers never wider than their cells allow. */
static void test_cell_mark(void)
{
	gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
	float v[14 * 9];
	const char *ct[14 * 9];
	gb_raster_info in;
	for (int i = 0; i < 14 * 9; i++) {
		v[i] = 2 + (i % 9) * 1.3f + (i / 9) * 0.1f;
		ct[i] = i % 9 == 8 && i / 9 % 3 == 0 ? "97.8\xe2\x96\xb2" : "";
	}
	gb_fig_set_values(f, v, 14, 9);
	gb_fig_set_row_labels(f, TOK);
	gb_fig_set_cell_text(f, ct);
	f->numbers = 1;
	f->precision = 1;
	gb_fig_set_title(f, "The residual stream: its length |x| per token after each sub-layer");
	char *svg = svg_of(f, 1200, 675, &in);
	tap_ok(svg && in.labels_cut == 0 && strstr(svg, "97.8\xe2\x96\xb2</text>"),
	       "a clipped value's text and mark whole in a square map's cell (%d cut)", in.labels_cut);
	free(svg);
	gb_fig_free(f);
	/* digits on the handout: 4 x 22 cells of "6.6": at the smallest size, not filling the cell */
	f = gb_fig_new(GB_FIG_HEATMAP);
	float d[4 * 22];
	for (int i = 0; i < 4 * 22; i++)
		d[i] = 6.1f + (i % 7) * 0.1f;
	gb_fig_set_values(f, d, 4, 22);
	gb_fig_set_row_labels(f, (const char *const[]){ "L1", "L2", "L3", "L4" });
	f->numbers = 1;
	f->precision = 1;
	svg = svg_of(f, 1200, 675, &in);
	double cw = (double)in.plot.w / 22, nw = gb_font_width(gb_font_face(GB_FACE_MONO, NULL), in.cell_text_px, "6.6");
	tap_ok(in.numbers_shown && nw <= 0.78 * cw,
	       "numbers in cells stand apart: \"6.6\" %.0f px wide in a %.0f px cell (%d px type)", nw, cw, in.cell_text_px);
	free(svg);
	gb_fig_free(f);
}

/* Texts of an SVG whose content starts with pre: their x, y, size and string. */
typedef struct svgtext {
	double x, y;
	int px;
	char s[128];
} svgtext;

static int svg_texts(const char *svg, const char *pre, svgtext *out, int max)
{
	int n = 0;
	for (const char *p = svg; p && (p = strstr(p, "<text x=\"")) && n < max; p++) {
		svgtext t;
		const char *gt = strchr(p, '>'), *end = gt ? strstr(gt, "</text>") : NULL;
		if (!end || sscanf(p, "<text x=\"%lf\" y=\"%lf\" font-size=\"%d\"", &t.x, &t.y, &t.px) != 3)
			continue;
		snprintf(t.s, sizeof t.s, "%.*s", (int)(end - gt - 1), gt + 1);
		if (!strncmp(t.s, pre, strlen(pre)))
			out[n++] = t;
	}
	return n;
}

/* Panel titles ("head 1, key/value head 1") on the handout: each within its panel and 40% of
 * the gaps beside it, neighbours at least 8 px apart (they ran into each other). */
static void test_panel_titles(void)
{
	gb_figure *g = gb_fig_new(GB_FIG_GRID);
	float v[21 * 21];
	gb_raster_info in;
	svgtext t[16];
	const char *lab[21]; /* TOK's 19 tokens and two more: one label for each of 21 rows */
	for (int i = 0; i < 21; i++)
		lab[i] = i < 19 ? TOK[i] : i == 19 ? " and" : " then";
	for (int i = 0; i < 21 * 21; i++)
		v[i] = i % 21 <= i / 21 ? 1.0f / (i / 21 + 1) : 0;
	for (int h = 0; h < 4; h++) {
		gb_figure *p = gb_fig_new(GB_FIG_HEATMAP);
		char title[64];
		gb_fig_set_values(p, v, 21, 21);
		gb_fig_set_row_labels(p, lab);
		gb_fig_set_col_labels(p, lab);
		snprintf(title, sizeof title, "head %d, key/value head 1", h + 1);
		gb_fig_set_title(p, title);
		gb_fig_add_panel(g, p);
	}
	g->grid_cols = 4;
	gb_fig_set_title(g, "Layer 4: attention weights of every head");
	char *svg = svg_of(g, 1200, 675, &in);
	int n = svg ? svg_texts(svg, "head ", t, 16) : 0, apart = n >= 4;
	double least = 1e9;
	gb_font *sans = gb_font_face(GB_FACE_SANS, NULL);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (i != j && fabs(t[i].y - t[j].y) < 1 && t[j].x > t[i].x) {
				double gap = (t[j].x - gb_font_width(sans, t[j].px, t[j].s) / 2) -
				             (t[i].x + gb_font_width(sans, t[i].px, t[i].s) / 2);
				least = fmin(least, gap);
				apart &= gap >= 8;
			}
	tap_ok(apart && in.labels_cut == 0, "4 panel titles on %d lines, neighbours %.0f px apart at least", n, least);
	free(svg);
	/* with the room (1200 x 900), every one of the 21 rows named, not every second */
	svg = svg_of(g, 1200, 900, &in);
	tap_ok(in.row_labels_shown == 21, "a row of 4 maps of 21 tokens names every row on 1200 x 900 (%d)",
	       in.row_labels_shown);
	free(svg);
	gb_fig_free(g);
}

/* Two models' series with long names on the handout: the legend goes under the plot, whole. */
static void test_legend(void)
{
	static const char *names[6] = { "tiny-lm-rope: up to position 128", "tiny-lm-rope: past position 128",
	                                "tiny-lm-rope: running mean", "tiny-lm-alibi: up to position 128",
	                                "tiny-lm-alibi: past position 128", "tiny-lm-alibi: running mean" };
	gb_figure *f = gb_fig_new(GB_FIG_LINES);
	float y[250];
	gb_raster_info in;
	for (int k = 0; k < 6; k++) {
		for (int i = 0; i < 250; i++)
			y[i] = (float)(k + 1) * sinf(i * 0.1f + k);
		gb_fig_add_series(f, names[k], y, 250);
	}
	gb_fig_set_title(f, "Loss of each token along the text");
	char *svg = svg_of(f, 1200, 675, &in);
	int whole = 1;
	for (int k = 0; k < 6; k++) {
		char want[80];
		snprintf(want, sizeof want, ">%s</text>", names[k]);
		whole &= svg && strstr(svg, want) != NULL;
	}
	tap_ok(whole && in.labels_cut == 0 && in.plot.w > 0.8 * 1200, "6 long legend names whole (%d cut), the plot %d px wide",
	       in.labels_cut, in.plot.w);
	free(svg);
	gb_fig_free(f);
}

int main(void)
{
	test_wide();
	test_square();
	test_cell_text();
	test_sides();
	test_long_text();
	test_report();
	test_bars();
	test_self_numbered();
	test_cell_mark();
	test_panel_titles();
	test_legend();
	gb_font_release();
	return tap_done();
}
