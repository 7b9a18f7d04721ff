/* t_layout.c — the figure layout as a slide, judged by decoded pixels and by what the layout
 * says it measured: the data fills 40% of a 1600 x 900 slide each way (non-square cells for a
 * wide matrix, square ones for a token x token map that meets the bar), no text under 18 px
 * (measured on the glyphs too), every label up to 64 with its index, round-step ticks beyond,
 * long labels shortened and counted, titles wrapped, the subtitle, text in cells (black or white
 * by the cell), side columns, and the PNG text chunks carrying the measurements. */
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

int main(void)
{
	test_wide();
	test_square();
	test_cell_text();
	test_sides();
	test_long_text();
	test_report();
	test_bars();
	gb_font_release();
	return tap_done();
}
