/* t_cells.c — the terminal backend and the figure it draws: figure setters and range, label
 * display and widths, the depth rules, cells of small hand-made figures, golden text for every
 * figure kind at every colour depth (tests/golden/cells_*.txt), windowing a 200x200 heatmap
 * into 80x24, NaN marking and counting, bars' eighth blocks, and failures.
 * Run from the repository root (make check does). GB_GOLDEN_WRITE=1 rewrites the golden files
 * instead of comparing (only after looking at the new output: `cat -v`, or in a terminal). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/cells_test.h"
#include "tests/tap.h"
#include "viz/cells.h"
#include "viz/colormap.h"
#include "viz/figure.h"

#define GOLDEN "tests/golden"

static char *slurp(const char *path)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return NULL;
	fseek(fp, 0, SEEK_END);
	long n = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	char *s = malloc((size_t)n + 1);
	if (fread(s, 1, (size_t)n, fp) != (size_t)n) {
		free(s);
		s = NULL;
	} else
		s[n] = 0;
	fclose(fp);
	return s;
}

/* Compares text with tests/golden/cells_<name>_<depth>.txt (or writes it). */
static void golden(const char *name, int depth, const char *text)
{
	char path[256];
	snprintf(path, sizeof path, GOLDEN "/cells_%s_%s.txt", name, depth_name[depth]);
	if (getenv("GB_GOLDEN_WRITE")) {
		FILE *fp = fopen(path, "wb");
		tap_ok(fp && text && fputs(text, fp) >= 0 && fclose(fp) == 0, "wrote %s", path);
		return;
	}
	char *want = slurp(path);
	int ok = want && text && strcmp(want, text) == 0;
	tap_ok(ok, "%s %s matches %s", name, depth_name[depth], path);
	if (!ok && text) {
		/* the first differing line, with escapes visible */
		const char *a = want ? want : "", *b = text;
		int line = 1;
		while (*a && *a == *b) {
			line += *a == '\n';
			a++;
			b++;
		}
		tap_diag("  first difference on line %d; got:", line);
		char *t = strip_sgr(text);
		tap_diag("%s", t);
		free(t);
	}
	free(want);
}

/* The line of the row label "·a" (small_heatmap's " a"); *x0 is where its data start. */
static int find_label_a(gb_grid *g, int *x0)
{
	for (int y = 0; y < g->used_h; y++)
		for (int x = 0; x + 2 < g->w; x++)
			if (at(g, x, y)->cp == 0xB7 && at(g, x + 1, y)->cp == 'a' && at(g, x + 2, y)->cp == ' ') {
				*x0 = x + 3;
				return y;
			}
	*x0 = -1;
	return -1;
}

/* ---- figures ---------------------------------------------------------------------------- */

/* 2x3, values known exactly, range fixed 0..1: row " a" = 0, .5, 1; row "b c" = NaN, .25, .75 */
static gb_figure *small_heatmap(int numbers)
{
	static const float v[6] = { 0.0f, 0.5f, 1.0f, NAN, 0.25f, 0.75f };
	static const char *rows[] = { " a", "b c" }, *cols[] = { "x", "y", "zz" };
	gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
	gb_fig_set_values(f, v, 2, 3);
	gb_fig_set_row_labels(f, rows);
	gb_fig_set_col_labels(f, cols);
	gb_fig_set_title(f, "Small");
	gb_fig_set_caption(f, "known values");
	f->range = GB_RANGE_FIXED;
	f->vmin = 0;
	f->vmax = 1;
	f->numbers = numbers;
	return f;
}
/* 200x200, v = (i - j) / 199 in [-1, 1] and three bad values */
static gb_figure *big_heatmap(void)
{
	enum { N = 200 };
	float *v = malloc(sizeof *v * N * N);
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
			v[i * N + j] = (float)(i - j) / (N - 1);
	v[0 * N + 1] = NAN;
	v[50 * N + 50] = INFINITY;
	v[199 * N + 199] = -INFINITY;
	gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
	gb_fig_set_values(f, v, N, N);
	free(v);
	gb_fig_set_title(f, "Big");
	gb_fig_set_caption(f, "(i - j) / 199");
	f->cmap = GB_CMAP_COOLWARM;
	f->range = GB_RANGE_SYMMETRIC;
	return f;
}

/* ---- tests ------------------------------------------------------------------------------ */

static void test_figure(void)
{
	float v[4] = { 1, 2, 3, 4 };
	char lab0[] = "one";
	const char *labs[2] = { lab0, NULL };
	gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
	tap_ok(f && f->cmap == GB_CMAP_VIRIDIS && f->range == GB_RANGE_AUTO && f->colorbar == 1 &&
	       f->precision == 2, "a new figure: viridis, automatic range, colorbar, precision 2");
	gb_fig_set_values(f, v, 2, 2);
	gb_fig_set_row_labels(f, labs);
	v[0] = 99;
	lab0[0] = 'X';
	tap_ok(f->values[0] == 1 && strcmp(f->row_labels[0], "one") == 0,
	       "setters copy: changing the caller's arrays changes nothing");
	tap_ok(f->row_labels[1] && f->row_labels[1][0] == 0, "a NULL label is stored as \"\"");
	float lo, hi;
	int bad;
	gb_fig_range(f, &lo, &hi, &bad);
	tap_ok(lo == 1 && hi == 4 && bad == 0, "AUTO range is the data's [1, 4]");
	f->values[1] = NAN;
	f->values[2] = -INFINITY;
	gb_fig_range(f, &lo, &hi, &bad);
	tap_ok(lo == 1 && hi == 4 && bad == 2, "NaN and -inf are counted (2), not ranged");
	f->range = GB_RANGE_SYMMETRIC;
	f->values[0] = -6;
	gb_fig_range(f, &lo, &hi, &bad);
	tap_ok(lo == -6 && hi == 6, "SYMMETRIC range is [-6, 6] for max |v| = 6");
	f->range = GB_RANGE_FIXED;
	f->vmin = 0.5f;
	f->vmax = 0.5f;
	gb_fig_range(f, &lo, &hi, &bad);
	tap_ok(lo == -0.5f && hi == 1.5f, "a degenerate range is widened by 1 each way");
	gb_fig_set_values(f, v, 1, 4);
	tap_ok(f->row_labels == NULL, "new values of another shape drop the old row labels");
	gb_fig_free(f);

	gb_figure *g = gb_fig_new(GB_FIG_GRID);
	gb_figure *p = gb_fig_new(GB_FIG_HEATMAP);
	float pv[2] = { -3, 7 };
	gb_fig_set_values(p, pv, 1, 2);
	gb_fig_add_panel(g, p);
	gb_fig_range(g, &lo, &hi, &bad);
	tap_ok(lo == -3 && hi == 7, "a grid's range covers its panels");
	gb_fig_free(g);

	gb_figure *l = gb_fig_new(GB_FIG_LINES);
	float y[3] = { 2, NAN, 5 };
	gb_fig_add_series(l, "s", y, 3);
	gb_fig_range(l, &lo, &hi, &bad);
	tap_ok(lo == 2 && hi == 5 && bad == 1, "a line plot's range covers its series");
	gb_fig_set_xs(l, y, 3);
	tap_ok(l->n_xs == 3, "set_xs records how many x values there are");
	gb_fig_add_meta(l, "Model", "tiny");
	tap_ok(l->n_meta == 1 && strcmp(l->meta_vals[0], "tiny") == 0, "metadata is kept");
	gb_fig_free(l);
}

static void label_is(const char *in, int cols, const char *want, const char *what)
{
	char out[256];
	gb_label_display(in, cols, out, sizeof out);
	int ok = strcmp(out, want) == 0;
	tap_ok(ok, "label %s -> \"%s\"", what, want);
	if (!ok)
		tap_diag("  got \"%s\"", out);
}

static void test_labels(void)
{
	label_is(" the", 10, "\xC2\xB7the", "\" the\": the leading space shown as ·");
	label_is("a b", 10, "a\xC2\xB7" "b", "inner space shown as ·");
	label_is("hello world", 5, "hell\xE2\x80\xA6", "cut to 5 columns with …");
	label_is("hello", 5, "hello", "exactly 5 columns is not cut");
	label_is("\n", 4, "\xE2\x8F\x8E", "a newline shown as ⏎");
	label_is("\t", 8, " ", "a tab starts an annotation, shown as a space");
	label_is(" cat\tmean 1", 20, "·cat mean 1", "an annotation after a tab keeps plain spaces");
	label_is("\xff" "a", 8, "\\xFFa", "a byte that is not UTF-8 shown as \\xFF");
	label_is("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", 3, "\xe6\x97\xa5\xE2\x80\xA6",
	         "three CJK characters (6 columns) cut to 3: one character and …");
	label_is("\xe2\x80\x8b", 8, "\\u200B", "a zero-width space made visible");
	label_is("abc", 0, "", "no columns, nothing");
	tap_ok(gb_utf8_width("e\xcc\x81") == 1, "e + combining acute is 1 column");
	tap_ok(gb_utf8_width("\xe6\x97\xa5\xe6\x9c\xac") == 4, "two CJK characters are 4 columns");
	tap_ok(gb_utf8_width("\xc2\xb7x\xe2\x80\xa6") == 3, "·x… is 3 columns");
	uint32_t cp;
	tap_ok(gb_utf8_decode("\xc0\xaf", &cp) == 1 && cp == GB_UTF8_BAD, "an overlong sequence is bad");
	tap_ok(gb_utf8_decode("\xed\xa0\x80", &cp) == 1 && cp == GB_UTF8_BAD, "a surrogate is bad");
	tap_ok(gb_utf8_decode("\xf0\x9f\x98\x80", &cp) == 4 && cp == 0x1F600, "U+1F600 decodes");
}

static void test_depth(void)
{
	static const struct {
		const char *colorterm, *term, *no_color;
		int tty, force, want;
	} t[] = {
		{ "truecolor", "xterm-256color", NULL, 1, 0, GB_DEPTH_TRUE },
		{ "24bit", "xterm", NULL, 1, 0, GB_DEPTH_TRUE },
		{ NULL, "xterm-direct", NULL, 1, 0, GB_DEPTH_TRUE },
		{ NULL, "xterm-256color", NULL, 1, 0, GB_DEPTH_256 },
		{ "", "tmux-256color", NULL, 1, 0, GB_DEPTH_256 },
		{ NULL, "xterm", NULL, 1, 0, GB_DEPTH_16 },
		{ NULL, "linux", NULL, 1, 0, GB_DEPTH_16 },
		{ "truecolor", "xterm-256color", "1", 1, 0, GB_DEPTH_PLAIN },
		{ "truecolor", "xterm-256color", "", 1, 0, GB_DEPTH_TRUE }, /* empty NO_COLOR is unset */
		{ "truecolor", "xterm-256color", NULL, 0, 0, GB_DEPTH_PLAIN },
		{ "truecolor", "dumb", NULL, 1, 0, GB_DEPTH_PLAIN },
		{ NULL, NULL, NULL, 1, 0, GB_DEPTH_PLAIN },
		{ NULL, "", NULL, 1, 0, GB_DEPTH_PLAIN },
		{ "truecolor", "xterm-256color", NULL, 0, 1, GB_DEPTH_TRUE },
		{ NULL, "xterm-256color", "1", 0, 1, GB_DEPTH_256 },
		{ NULL, "dumb", NULL, 0, 1, GB_DEPTH_16 },
	};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
		int got = gb_term_depth(t[i].colorterm, t[i].term, t[i].no_color, t[i].tty, t[i].force);
		tap_ok(got == t[i].want, "depth COLORTERM=%s TERM=%s NO_COLOR=%s tty=%d force=%d -> %s",
		       t[i].colorterm ? t[i].colorterm : "(unset)", t[i].term ? t[i].term : "(unset)",
		       t[i].no_color ? t[i].no_color : "(unset)", t[i].tty, t[i].force,
		       depth_name[t[i].want]);
	}
}

static void test_small_cells(void)
{
	gb_figure *f = small_heatmap(0);
	gb_grid g;
	char *text = draw(f, 40, 10, GB_DEPTH_TRUE, 0, 0, &g);
	int xa, ya = find_label_a(&g, &xa);
	tap_ok(ya >= 0 && xa == 4, "the row label \" a\" is drawn as \"·a\", right-aligned to \"b·c\" "
	       "(data from column %d of line %d)", xa, ya);
	if (ya >= 0) {
		gb_cell *c0 = at(&g, xa, ya), *c1 = at(&g, xa + g.shown.cell_w, ya);
		gb_cell *c2 = at(&g, xa + 2 * g.shown.cell_w, ya), *bad = at(&g, xa, ya + 1);
		tap_ok((c0->attr & GB_ATTR_BG) && !memcmp(c0->bg, gb_cmap_entry(GB_CMAP_VIRIDIS, 0), 3),
		       "value 0 has viridis[0] as its background");
		tap_ok(!memcmp(c1->bg, gb_cmap_entry(GB_CMAP_VIRIDIS, 128), 3),
		       "value 0.5 has viridis[128]");
		tap_ok(!memcmp(c2->bg, gb_cmap_entry(GB_CMAP_VIRIDIS, 255), 3),
		       "value 1 has viridis[255]");
		tap_ok(!memcmp(bad->bg, gb_bad_rgb, 3), "NaN has the NaN colour");
	}
	tap_ok(g.shown.rows == 2 && g.shown.cols == 3 && g.shown.n_bad == 1,
	       "the whole 2x3 is shown, 1 bad value");
	free(text);
	gb_grid_free(&g);

	text = draw(f, 40, 10, GB_DEPTH_PLAIN, 0, 0, &g);
	tap_ok(text && !strchr(text, '\x1b'), "plain text has no escapes");
	ya = find_label_a(&g, &xa);
	if (ya >= 0) {
		int cw = g.shown.cell_w;
		char got[7] = { 0 };
		for (int k = 0; k < 3; k++) {
			got[k] = (char)at(&g, xa + k * cw, ya)->cp;
			got[3 + k] = (char)at(&g, xa + k * cw, ya + 1)->cp;
		}
		tap_ok(memcmp(got, " +@!:#", 6) == 0,
		       "plain shades: 0 ' ', 0.5 '+', 1 '@', NaN '!', 0.25 ':', 0.75 '#' (got \"%s\")", got);
	} else
		tap_ok(0, "plain row \" a\" found");
	free(text);
	gb_grid_free(&g);
	gb_fig_free(f);
}

static void test_goldens(void)
{
	static const char *names[] = { "heatmap", "numbers", "bars", "lines", "strip", "grid" };
	for (int k = 0; k < 6; k++) {
		gb_figure *f = k == 0 ? small_heatmap(0) : k == 1 ? small_heatmap(1) : k == 2 ? small_bars()
		             : k == 3 ? small_lines() : k == 4 ? small_strip() : small_grid();
		int w = k == 3 ? 30 : 40, h = k == 3 ? 12 : 10;
		for (int d = GB_DEPTH_PLAIN; d <= GB_DEPTH_TRUE; d++) {
			char *text = draw(f, w, h, d, 0, 0, NULL);
			golden(names[k], d, text);
			free(text);
		}
		gb_fig_free(f);
	}
	/* a window of the big heatmap, scrolled to its middle */
	gb_figure *f = big_heatmap();
	for (int d = GB_DEPTH_PLAIN; d <= GB_DEPTH_TRUE; d += GB_DEPTH_TRUE) {
		char *text = draw(f, 40, 12, d, 100, 100, NULL);
		golden("window", d, text);
		free(text);
	}
	gb_fig_free(f);
}

static void test_window(void)
{
	gb_figure *f = big_heatmap();
	for (int d = GB_DEPTH_PLAIN; d <= GB_DEPTH_TRUE; d++) {
		gb_grid g;
		char *text = draw(f, 80, 24, d, 0, 0, &g);
		int w, lines;
		measure(text ? text : "", &w, &lines);
		char *plain = text ? strip_sgr(text) : NULL;
		tap_ok(w <= 80 && lines <= 24, "200x200 in 80x24 (%s): %d lines, widest %d columns",
		       depth_name[d], lines, w);
		char want[96];
		snprintf(want, sizeof want, "rows 1%s%d of 200, cols 1%s%d of 200",
		         d ? "\xE2\x80\x93" : "-", g.shown.rows, d ? "\xE2\x80\x93" : "-", g.shown.cols);
		tap_ok(plain && strstr(plain, want), "(%s) the notice says \"%s\"", depth_name[d], want);
		tap_ok(g.shown.rows >= (d ? 24 : 12) && g.shown.cols >= 60,
		       "(%s) a usable window: %d rows x %d columns of data", depth_name[d], g.shown.rows,
		       g.shown.cols);
		tap_ok(plain && strstr(plain, "3 NaN/inf"), "(%s) the caption counts 3 NaN/inf",
		       depth_name[d]);
		free(plain);
		free(text);
		gb_grid_free(&g);
	}
	/* scrolled past the end: the window is clamped to the last columns */
	gb_grid g;
	char *text = draw(f, 80, 24, GB_DEPTH_TRUE, 120, 190, &g);
	tap_ok(g.shown.row0 == 120 && g.shown.col0 == 200 - g.shown.cols,
	       "a window asked at col 190 is clamped to end at 200 (col0 %d)", g.shown.col0);
	/* its first data cell is value (120, col0), drawn as the upper half of a half block */
	int found = 0;
	for (int y = 0; y < g.used_h && !found; y++)
		for (int x = 0; x < g.w && !found; x++)
			if (at(&g, x, y)->cp == 0x2580) {
				uint8_t want[3];
				double v = (120.0 - g.shown.col0) / 199;
				gb_cmap_rgb(GB_CMAP_COOLWARM, (v + 1) / 2, want);
				tap_ok(!memcmp(at(&g, x, y)->fg, want, 3),
				       "the window's first cell has the colour of value (121, %d)", g.shown.col0 + 1);
				found = 1;
			}
	if (!found)
		tap_ok(0, "half blocks drawn");
	free(text);
	gb_grid_free(&g);
	gb_fig_free(f);
}

static void test_nan(void)
{
	static const float v[6] = { 0, NAN, 1, INFINITY, 0.5f, -INFINITY };
	gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
	gb_fig_set_values(f, v, 2, 3);
	gb_fig_set_caption(f, "c");
	gb_grid g;
	char *text = draw(f, 30, 8, GB_DEPTH_PLAIN, 0, 0, &g);
	int bangs = 0;
	for (int y = 0; y < g.used_h; y++)
		for (int x = 0; x < g.w; x++)
			bangs += at(&g, x, y)->cp == '!';
	/* one per bad cell (each cell_w wide) and one in the caption's legend */
	tap_ok(bangs == 3 * g.shown.cell_w + 1, "plain: 3 bad cells marked '!' (%d marks, cell width %d)",
	       bangs, g.shown.cell_w);
	tap_ok(text && strstr(text, "c  ! 3 NaN/inf"), "plain caption: \"c  ! 3 NaN/inf\"");
	free(text);
	gb_grid_free(&g);
	text = draw(f, 30, 8, GB_DEPTH_TRUE, 0, 0, &g);
	int magenta = 0;
	for (int y = 0; y < g.used_h; y++)
		for (int x = 0; x < g.w; x++)
			magenta += (at(&g, x, y)->attr & GB_ATTR_BG) && !memcmp(at(&g, x, y)->bg, gb_bad_rgb, 3);
	tap_ok(magenta == 3 * g.shown.cell_w + 2, "truecolor: 3 bad cells in the NaN colour + the 2-cell swatch");
	char *plain = text ? strip_sgr(text) : NULL;
	tap_ok(plain && strstr(plain, "3 NaN/inf"), "truecolor caption counts 3 NaN/inf");
	free(plain);
	free(text);
	gb_grid_free(&g);
	gb_fig_free(f);
}

static void test_bars(void)
{
	gb_figure *f = small_bars();
	gb_grid g;
	/* 40 columns: labels 4 ("·the"), space, bar, space, value 4 ("1.00") -> a 30-column bar */
	char *text = draw(f, 40, 10, GB_DEPTH_TRUE, 0, 0, &g);
	int y1 = 1; /* after the title */
	int full = 0;
	for (int x = 0; x < g.w; x++)
		full += at(&g, x, y1)->cp == 0x2588;
	tap_ok(full == 30, "the largest bar fills the 30-column bar area (%d full blocks)", full);
	int half = 0;
	for (int x = 0; x < g.w; x++)
		half += at(&g, x, y1 + 1)->cp == 0x2588;
	tap_ok(half == 15, "0.5 is 15 full blocks");
	/* 0.3125 * 30 = 9.375 cells = 9 full + 3/8 */
	int n9 = 0;
	uint32_t tip = 0;
	for (int x = 0; x < g.w; x++) {
		uint32_t c = at(&g, x, y1 + 2)->cp;
		n9 += c == 0x2588;
		if (c >= 0x2589 && c <= 0x258F)
			tip = c;
	}
	tap_ok(n9 == 9 && tip == 0x258D, "0.3125 is 9 full blocks and a 3/8 block (U+258D)");
	tap_ok(at(&g, 0, y1 + 2)->cp == ' ' && at(&g, 3, y1 + 2)->cp == 0x23CE,
	       "the newline token's label is ⏎, right-aligned");
	free(text);
	gb_grid_free(&g);
	gb_fig_free(f);
}

static void test_writer_and_errors(void)
{
	gb_grid g;
	gb_verr err;
	char *out;
	size_t n;
	gb_grid_init(&g, 10, 3, &err);
	gb_grid_text(&g, 0, 0, 10, "ab", NULL, NULL, 0);
	const uint8_t red[3] = { 255, 0, 0 };
	gb_grid_text(&g, 0, 1, 10, "x", red, NULL, GB_ATTR_BOLD);
	gb_grid_text(&g, 0, 2, 10, "\xe6\x97\xa5z", NULL, NULL, 0);
	gb_cells_write(&g, GB_DEPTH_TRUE, &out, &n, &err);
	tap_ok(strcmp(out, "ab\n\x1b[1;38;2;255;0;0mx\x1b[0m\n\xe6\x97\xa5z\n") == 0,
	       "truecolor writer: trailing blanks dropped, SGR only where needed, reset at line end");
	free(out);
	gb_cells_write(&g, GB_DEPTH_256, &out, &n, &err);
	tap_ok(strstr(out, "\x1b[1;38;5;196mx") != NULL, "256 writer: red is 38;5;196");
	free(out);
	gb_cells_write(&g, GB_DEPTH_16, &out, &n, &err);
	tap_ok(strstr(out, "\x1b[1;91mx") != NULL, "16 writer: red is bright red 91");
	free(out);
	tap_ok(at(&g, 1, 2)->cp == GB_CELL_CONT && at(&g, 2, 2)->cp == 'z',
	       "a wide character takes two cells");
	tap_ok(gb_grid_text(&g, 8, 0, 5, "\xe6\x97\xa5\xe6\x97\xa5", NULL, NULL, 0) == 2,
	       "text stops at the grid's edge: one wide character fits in 2 columns");
	gb_grid_free(&g);

	gb_figure *f = small_heatmap(0);
	gb_grid_init(&g, 5, 1, &err);
	gb_cells_opts o;
	gb_cells_opts_default(&o, GB_DEPTH_TRUE);
	err.msg[0] = 0;
	tap_ok(gb_cells_render(&g, 0, 0, 5, 1, f, &o, &err) == -1 && strstr(err.msg, "too small"),
	       "a 5x1 area is too small, and the message says so: %s", err.msg);
	tap_ok(gb_cells_render(&g, 3, 0, 5, 1, f, &o, &err) == -1 && strstr(err.msg, "outside"),
	       "an area outside the grid is refused");
	gb_grid_free(&g);
	gb_fig_free(f);
	tap_ok(gb_grid_init(&g, 0, 5, &err) == -1, "a 0-wide grid is refused");
}


int main(void)
{
	test_figure();
	test_labels();
	test_depth();
	test_small_cells();
	test_goldens();
	test_window();
	test_nan();
	test_bars();
	test_writer_and_errors();
	return tap_done();
}
