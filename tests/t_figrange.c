/* t_figrange.c — colour scales that fit the data: GB_RANGE_CENTERED (a truncated symmetric
 * scale: a diverging map linear on [-m, m], m = max |v|, 0 in the middle, the colour bar over
 * the data's own [lo, hi] only) against the symmetric and
 * automatic ranges, by gb_fig_range / gb_fig_unit and by the colours the raster and the
 * terminal actually draw; and a grid's panels in the terminal: drawn in the grid's map, with
 * their labels when the grid asks for them (qkv). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/tap.h"
#include "viz/cells.h"
#include "viz/colormap.h"
#include "viz/figure.h"
#include "viz/raster.h"
#include "viz/svg.h"

static gb_figure *row_of(const float *v, int n, int range)
{
	gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
	gb_fig_set_values(f, v, 1, n);
	f->cmap = GB_CMAP_COOLWARM;
	f->range = range;
	return f;
}

static int same_rgb(const uint8_t *a, const uint8_t *b) { return a[0] == b[0] && a[1] == b[1] && a[2] == b[2]; }

/* The first line of a grid with background colours (the data, above the colour bar). */
static int first_bg_line(gb_grid *g)
{
	for (int y = 0; y < g->h; y++)
		for (int x = 0; x < g->w; x++)
			if (gb_grid_cell(g, x, y)->attr & GB_ATTR_BG)
				return y;
	return -1;
}

/* Whether line y of g has a cell with background rgb. */
static int line_has(gb_grid *g, int y, const uint8_t rgb[3])
{
	for (int x = 0; y >= 0 && x < g->w; x++) {
		gb_cell *c = gb_grid_cell(g, x, y);
		if ((c->attr & GB_ATTR_BG) && same_rgb(c->bg, rgb))
			return 1;
	}
	return 0;
}

/* The smallest distance between two tick labels of svg's colour bar, in units of their text
 * size (a label's height is about 0.75 of it); 99 with fewer than two labels. */
static double bar_label_gap(const char *svg)
{
	const char *g = svg ? strstr(svg, "<g class=\"colorbar\"") : NULL, *end = g ? strstr(g, "</g>") : NULL;
	double y[32], px = 1, best = 99;
	int n = 0;
	for (const char *t = g; t && (t = strstr(t, "<text x=\"")) && t < end && n < 32; t++) {
		const char *ys = strstr(t, " y=\""), *fs = strstr(t, "font-size=\"");
		if (ys && fs)
			y[n++] = atof(ys + 4), px = atof(fs + 11);
	}
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			best = fmin(best, fabs(y[i] - y[j]) / px);
	return best;
}

int main(void)
{
	tap_plan(35);
	/* GELU outputs (lesson 9): a short negative side and a long positive one */
	const float gelu[3] = { -0.17f, 0.0f, 1.6f };
	float lo, hi;
	int bad;
	gb_figure *c = row_of(gelu, 3, GB_RANGE_CENTERED);
	gb_fig_range(c, &lo, &hi, &bad);
	tap_ok(lo == -0.17f && hi == 1.6f, "centred: the range is the data's own, [-0.17, 1.6] (got [%g, %g])", lo, hi);
	double ulo = 0.5 - 0.5 * 0.17 / 1.6; /* 0.447: a pale blue */
	tap_near(gb_fig_unit(c, lo, hi, -0.17), ulo, 1e-6, "centred: -0.17 is a pale blue, 0.17/1.6 of the lower half");
	tap_near(gb_fig_unit(c, lo, hi, 0), 0.5, 1e-6, "centred: 0 is the middle colour");
	tap_near(gb_fig_unit(c, lo, hi, 1.6), 1.0, 1e-6, "centred: the largest value is the high end");
	tap_near(gb_fig_unit(c, lo, hi, 0.8), 0.75, 1e-6, "centred: half the positive side is three quarters");
	tap_near(gb_fig_unit(c, lo, hi, -0.1) - 0.5, -(gb_fig_unit(c, lo, hi, 0.1) - 0.5), 1e-6,
	         "centred: one slope for both signs (-0.1 as far below the middle as 0.1 above)");
	gb_figure *c2 = row_of((const float[]){ -1.6f, 0.17f }, 2, GB_RANGE_CENTERED);
	gb_fig_range(c2, &lo, &hi, &bad);
	tap_near(gb_fig_unit(c2, lo, hi, -1.6), 0.0, 1e-6, "centred, long negative side: -1.6 the low end");
	tap_near(gb_fig_unit(c2, lo, hi, 0.17), 1 - ulo, 1e-6, "centred, long negative side: 0.17 a pale red");
	gb_fig_free(c2);

	const float gelu28[3] = { -0.17f, 0.0f, 2.8f };
	gb_figure *s = row_of(gelu28, 3, GB_RANGE_SYMMETRIC);
	gb_fig_range(s, &lo, &hi, &bad);
	tap_ok(lo == -2.8f && hi == 2.8f, "symmetric: [-2.8, 2.8]");
	tap_near(gb_fig_unit(s, lo, hi, -0.17), (2.8 - 0.17) / 5.6, 1e-6,
	         "symmetric: -0.17 sits near the middle");

	const float pos[2] = { 0.5f, 2.0f }, zeros[2] = { 0, 0 };
	gb_figure *p = row_of(pos, 2, GB_RANGE_CENTERED);
	gb_fig_range(p, &lo, &hi, &bad);
	tap_ok(lo == 0 && hi == 2, "centred, values of one sign: the range still holds 0 ([%g, %g])", lo, hi);
	tap_near(gb_fig_unit(p, lo, hi, 1), 0.75, 1e-6, "centred, one sign: the upper half only");
	gb_figure *z = row_of(zeros, 2, GB_RANGE_CENTERED);
	gb_fig_range(z, &lo, &hi, &bad);
	tap_ok(lo == -1 && hi == 1 && gb_fig_unit(z, lo, hi, 0) == 0.5, "centred, all zero: widened to [-1, 1], 0 in the middle");
	gb_figure *a = row_of(gelu28, 3, GB_RANGE_AUTO);
	gb_fig_range(a, &lo, &hi, &bad);
	tap_near(gb_fig_unit(a, lo, hi, 0), 0.17 / 2.97, 1e-6, "automatic: linear from min to max");

	/* The raster draws each cell in the colour of its place on the centred scale. */
	gb_canvas cv;
	gb_raster_info info;
	gb_verr err;
	uint8_t want[3][3];
	uint8_t low_end[3];
	double ts[3] = { ulo, 0.5, 1 };
	for (int i = 0; i < 3; i++)
		gb_cmap_rgb(GB_CMAP_COOLWARM, ts[i], want[i]);
	gb_cmap_rgb(GB_CMAP_COOLWARM, 0, low_end);
	int ok_px = 0, bar_top = 0, bar_bottom = 0, bar_zero = 0;
	if (gb_raster_render(c, NULL, &cv, &info, &err) == 0) {
		for (int i = 0; i < 3; i++) {
			int x0 = info.plot.x + i * info.plot.w / 3, x1 = info.plot.x + (i + 1) * info.plot.w / 3;
			int x = (x0 + x1) / 2, y = info.plot.y + info.plot.h / 2;
			const uint8_t *px = cv.rgba + ((size_t)y * cv.w + x) * 4;
			ok_px += same_rgb(px, want[i]);
		}
		/* the colour bar: only the part of the map in use, 0 at 0.17/1.77 of its height */
		gb_rect b = info.colorbar;
		int bx = b.x + b.w / 2;
		const uint8_t *top = cv.rgba + ((size_t)b.y * cv.w + bx) * 4;
		const uint8_t *bot = cv.rgba + ((size_t)(b.y + b.h - 1) * cv.w + bx) * 4;
		int yz = b.y + b.h - (int)(b.h * 0.17 / 1.77);
		const uint8_t *zer = cv.rgba + ((size_t)yz * cv.w + bx) * 4;
		uint8_t mid[3];
		gb_cmap_rgb(GB_CMAP_COOLWARM, 0.5, mid);
		bar_top = abs(top[0] - want[2][0]) + abs(top[2] - want[2][2]) < 12;
		bar_bottom = abs(bot[0] - want[0][0]) + abs(bot[2] - want[0][2]) < 12 &&
		             abs(bot[0] - low_end[0]) + abs(bot[2] - low_end[2]) > 60;
		bar_zero = abs(zer[0] - mid[0]) + abs(zer[2] - mid[2]) < 16;
		tap_diag("bar top %d,%d,%d bottom %d,%d,%d zero %d,%d,%d", top[0], top[1], top[2], bot[0], bot[1],
		         bot[2], zer[0], zer[1], zer[2]);
		gb_canvas_free(&cv);
	} else
		tap_diag("raster: %s", err.msg);
	tap_ok(ok_px == 3, "raster: -0.17, 0 and 1.6 drawn as a pale blue, the middle and the high end (%d of 3)", ok_px);
	tap_ok(bar_top && bar_bottom, "raster colour bar: full red at the top, the pale blue of -0.17 at the bottom (not the map's dark end)");
	tap_ok(bar_zero, "raster colour bar: linear in value, the middle colour at 0.17/1.77 of its height");

	/* The colour bar is numbered linearly over [lo, hi]; the short side of -0.17 .. 1.6 is too
	 * short for a number of its own, a longer one (-1 .. 1.6) gets one. */
	char *svg = gb_svg_render(c, 0, 0, 0, "test", &err);
	tap_ok(svg && (strstr(svg, ">0</text>") || strstr(svg, ">0.0</text>")) && strstr(svg, ">1.6</text>") &&
	       !strstr(svg, ">-0.1</text>") && !strstr(svg, ">-0.2</text>"),
	       "centred colour bar: ticks 0 .. 1.6, none crowded below 0");
	free(svg);
	gb_figure *c3 = row_of((const float[]){ -1.0f, 0.0f, 1.6f }, 3, GB_RANGE_CENTERED);
	svg = gb_svg_render(c3, 0, 0, 0, "test", &err);
	tap_ok(svg && (strstr(svg, ">-1</text>") || strstr(svg, ">-0.5</text>")) && strstr(svg, ">1.5</text>"),
	       "centred colour bar, a longer negative side: numbered on both sides");
	free(svg);
	gb_fig_free(c3);
	svg = gb_svg_render(s, 0, 0, 0, "test", &err);
	tap_ok(svg && !strstr(svg, ">-0.1</text>") && strstr(svg, ">-2</text>") && strstr(svg, ">2</text>"),
	       "symmetric colour bar: ticks at -2 and 2, none at -0.1");
	free(svg);

	/* Labels never crowd: -3.2 .. 0.45 (L16's ALiBi scores) on bars short and tall, ticks 1
	 * apart with 0.4 on the short side only where it stands clear of 0 */
	{
		gb_figure *a = row_of((const float[]){ -3.21f, 0.0f, 0.45f }, 3, GB_RANGE_CENTERED);
		double worst = 99;
		int worst_h = 0;
		for (int h = 250; h <= 900; h += 25) {
			char *sv = gb_svg_render(a, 1600, h, 0, "test", &err);
			double d = bar_label_gap(sv);
			if (d < worst)
				worst = d, worst_h = h;
			free(sv);
		}
		tap_ok(worst >= 1.5, "colour bar labels at least 1.5 text sizes apart at every height (closest %.2f, at %d px)",
		       worst, worst_h);
		gb_fig_free(a);
	}

	/* The terminal does the same. */
	gb_grid g;
	gb_cells_opts o;
	gb_cells_opts_default(&o, GB_DEPTH_TRUE);
	gb_grid_init(&g, 60, 12, &err);
	int rc = gb_cells_render(&g, 0, 0, 60, 12, c, &o, &err);
	int y = first_bg_line(&g);
	tap_ok(rc == 0 && line_has(&g, y, want[0]) && line_has(&g, y, want[1]) && line_has(&g, y, want[2]),
	       "terminal: the three cells in a pale blue, the middle and the high end");
	int bar_line = -1, dark = 0;
	for (int yy = y + 1; yy < g.h; yy++) {
		if (line_has(&g, yy, want[0]) && line_has(&g, yy, want[2]))
			bar_line = yy;
		dark += line_has(&g, yy, low_end);
	}
	tap_ok(bar_line > y && dark == 0, "terminal colour bar: from -0.17's pale blue to the red end, never the map's dark blue (line %d)", bar_line);
	gb_grid_free(&g);

	/* A grid whose panels were made with another map: the terminal draws them in the grid's,
	 * the one its colour bar shows (qkv's panels were viridis under a coolwarm bar). */
	gb_figure *grid = gb_fig_new(GB_FIG_GRID);
	grid->cmap = GB_CMAP_COOLWARM;
	grid->range = GB_RANGE_CENTERED;
	grid->grid_cols = 2;
	const char *rows[2] = { "the", "cat" };
	const float pv[4] = { -0.17f, 0.0f, 2.8f, 1.4f };
	for (int i = 0; i < 2; i++) {
		gb_figure *pn = gb_fig_new(GB_FIG_HEATMAP);
		gb_fig_set_values(pn, pv, 2, 2);
		gb_fig_set_row_labels(pn, rows);
		pn->col_index0 = 1;
		pn->cmap = GB_CMAP_VIRIDIS;
		gb_fig_set_title(pn, i ? "k" : "q");
		gb_fig_add_panel(grid, pn);
	}
	uint8_t vlow[3], plow[3];
	gb_cmap_rgb(GB_CMAP_VIRIDIS, 0, vlow);
	gb_cmap_rgb(GB_CMAP_COOLWARM, 0.5 - 0.5 * 0.17 / 2.8, plow);
	gb_grid_init(&g, 60, 14, &err);
	rc = gb_cells_render(&g, 0, 0, 60, 14, grid, &o, &err);
	y = first_bg_line(&g);
	tap_ok(rc == 0 && line_has(&g, y, plow) && !line_has(&g, y, vlow), "terminal grid: panels in the grid's coolwarm, not their own viridis");
	gb_grid_free(&g);

	/* Labels in the panels: the rows' tokens wherever the panels have the room (a model view
	 * of sixteen has none); the columns' numbers only when the grid asks for them. */
	gb_cells_opts_default(&o, GB_DEPTH_PLAIN);
	for (int want_labels = 0; want_labels <= 1; want_labels++) {
		grid->panel_labels = want_labels;
		gb_grid_init(&g, 60, 14, &err);
		rc = gb_cells_render(&g, 0, 0, 60, 14, grid, &o, &err);
		int n_cat = 0;
		for (int yy = 0; yy < g.h; yy++)
			for (int x = 0; x + 2 < g.w; x++)
				n_cat += gb_grid_cell(&g, x, yy)->cp == 'c' && gb_grid_cell(&g, x + 1, yy)->cp == 'a' &&
				         gb_grid_cell(&g, x + 2, yy)->cp == 't';
		tap_ok(rc == 0 && n_cat == 2, "panel_labels = %d: 'cat' labels %d rows (want 2: there is room)", want_labels,
		       n_cat);
		gb_grid_free(&g);
	}
	/* and the column numbers over each panel */
	grid->panel_labels = 1;
	gb_grid_init(&g, 60, 14, &err);
	gb_cells_render(&g, 0, 0, 60, 14, grid, &o, &err);
	int n12 = 0;
	for (int yy = 0; yy < g.h; yy++)
		for (int x = 0; x + 2 < g.w; x++)
			n12 += gb_grid_cell(&g, x, yy)->cp == '1' && gb_grid_cell(&g, x + 1, yy)->cp == ' ' &&
			       gb_grid_cell(&g, x + 2, yy)->cp == '2';
	tap_ok(n12 == 2, "panel_labels: each panel numbers its columns (%d of 2)", n12);
	gb_grid_free(&g);
	grid->panel_labels = 0;
	gb_grid_init(&g, 60, 14, &err);
	gb_cells_render(&g, 0, 0, 60, 14, grid, &o, &err);
	n12 = 0;
	for (int yy = 0; yy < g.h; yy++)
		for (int x = 0; x + 2 < g.w; x++)
			n12 += gb_grid_cell(&g, x, yy)->cp == '1' && gb_grid_cell(&g, x + 1, yy)->cp == ' ' &&
			       gb_grid_cell(&g, x + 2, yy)->cp == '2';
	tap_ok(n12 == 0, "panel_labels = 0: no column numbers (%d)", n12);
	gb_grid_free(&g);

	/* The range of a grid is over every panel, and a lone panel (the explorer's zoom) keeps
	 * the centred kind the view gave it. */
	gb_fig_range(grid, &lo, &hi, &bad);
	tap_ok(lo == -0.17f && hi == 2.8f, "grid: the centred range spans every panel");
	gb_figure *one = row_of(pv, 4, GB_RANGE_CENTERED);
	gb_fig_range(one, &lo, &hi, &bad);
	tap_near(gb_fig_unit(one, lo, hi, 1.4), 0.75, 1e-6, "a lone panel: the same scale");
	gb_fig_free(one);
	gb_fig_free(grid);
	gb_fig_free(c);
	gb_fig_free(s);
	gb_fig_free(p);
	gb_fig_free(z);
	gb_fig_free(a);

	/* An index beside a token: the token quoted when it would read as part of the number. */
	char lb[64];
	gb_label_indexed(10, "0", lb, sizeof lb);
	tap_ok(strcmp(lb, "10 \"0\"") == 0, "index beside a digit: '10 \"0\"' (got '%s')", lb);
	gb_label_indexed(11, ".", lb, sizeof lb);
	int punct = strcmp(lb, "11 \".\"") == 0;
	gb_label_indexed(2, "\xC2\xB7", lb, sizeof lb);
	tap_ok(punct && strcmp(lb, "2 \"\xC2\xB7\"") == 0, "punctuation and a lone space token quoted too ('%s')", lb);
	gb_label_indexed(3, "\xC2\xB7the", lb, sizeof lb);
	int word = strcmp(lb, "3 \xC2\xB7the") == 0;
	gb_label_indexed(5, "M", lb, sizeof lb);
	tap_ok(word && strcmp(lb, "5 M") == 0, "a word is not quoted ('3 \xC2\xB7the', '%s')", lb);
	/* A line that stops or starts part way marks its missing points NaN as a gap: not bad
	 * values; the same NaN in an ordinary series is counted. */
	gb_figure *gl = gb_fig_new(GB_FIG_LINES);
	const float ya[] = { 1, 2, NAN, NAN }, yb[] = { NAN, NAN, 3, 4 }, yc[] = { 5, NAN, 6, 7 };
	gb_fig_add_series(gl, "within", ya, 4);
	gb_fig_add_series(gl, "past", yb, 4);
	gl->series[0].gaps = gl->series[1].gaps = 1;
	float glo, ghi;
	int gbad = -1;
	gb_fig_range(gl, &glo, &ghi, &gbad);
	tap_ok(gbad == 0 && glo == 1 && ghi == 4, "gap series: 4 NaN gaps not counted, range 1..4 (bad %d, %g..%g)", gbad,
	       glo, ghi);
	gb_fig_add_series(gl, "broken", yc, 4);
	gb_fig_range(gl, &glo, &ghi, &gbad);
	tap_ok(gbad == 1 && ghi == 7, "an ordinary series' NaN is still counted (bad %d)", gbad);
	gb_fig_free(gl);
	return tap_done();
}
