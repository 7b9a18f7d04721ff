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

#include "tests/tap.h"
#include "viz/cells.h"
#include "viz/colormap.h"
#include "viz/figure.h"

#define GOLDEN "tests/golden"

static const char *depth_name[] = { "plain", "16", "256", "true" };

/* ---- helpers ---------------------------------------------------------------------------- */

/* s without its SGR escapes (malloc'd). */
static char *strip_sgr(const char *s)
{
	char *o = malloc(strlen(s) + 1), *p = o;
	while (*s) {
		if (s[0] == '\x1b' && s[1] == '[') {
			s += 2;
			while (*s && *s != 'm')
				s++;
			if (*s)
				s++;
			continue;
		}
		*p++ = *s++;
	}
	*p = 0;
	return o;
}

/* Widest line in display columns and the number of lines of text with escapes removed. */
static void measure(const char *text, int *max_w, int *lines)
{
	char *t = strip_sgr(text), *save = NULL;
	*max_w = 0;
	*lines = 0;
	for (char *l = strtok_r(t, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		int w = gb_utf8_width(l);
		if (w > *max_w)
			*max_w = w;
	}
	for (const char *c = text; *c; c++)
		*lines += *c == '\n';
	free(t);
}

/* f drawn in a w x h grid at depth, as text (malloc'd); NULL when layout fails. */
static char *draw(const gb_figure *f, int w, int h, int depth, int row0, int col0, gb_grid *keep)
{
	gb_grid g;
	gb_verr err;
	gb_cells_opts o;
	char *out = NULL;
	size_t n;
	if (gb_grid_init(&g, w, h, &err))
		return NULL;
	gb_cells_opts_default(&o, depth);
	o.row0 = row0;
	o.col0 = col0;
	if (gb_cells_render(&g, 0, 0, w, h, f, &o, &err) == 0)
		gb_cells_write(&g, depth, &out, &n, &err);
	else
		tap_diag("layout failed: %s", err.msg);
	if (keep)
		*keep = g;
	else
		gb_grid_free(&g);
	return out;
}

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

static gb_cell *at(gb_grid *g, int x, int y) { return gb_grid_cell(g, x, y); }

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

static gb_figure *small_bars(void)
{
	static const float v[4] = { 1.0f, 0.5f, 0.3125f, 0.0f };
	static const char *l[] = { " the", " a", "\n", "x" };
	gb_figure *f = gb_fig_new(GB_FIG_BARS);
	gb_fig_set_values(f, v, 1, 4);
	gb_fig_set_col_labels(f, l);
	gb_fig_set_title(f, "Next token");
	return f;
}

static gb_figure *small_lines(void)
{
	float a[9], b[9];
	for (int i = 0; i < 9; i++) {
		a[i] = (float)i / 8;
		b[i] = (float)(i % 4) / 4;
	}
	gb_figure *f = gb_fig_new(GB_FIG_LINES);
	gb_fig_add_series(f, "rise", a, 9);
	gb_fig_add_series(f, "saw", b, 9);
	gb_fig_set_title(f, "Lines");
	gb_fig_set_axes(f, "y", "x");
	return f;
}

static gb_figure *small_strip(void)
{
	static const float v[5] = { 0.0f, 0.25f, 0.5f, 0.75f, 1.0f };
	static const char *l[] = { "The", " cat", " sat", " on", " it" };
	gb_figure *f = gb_fig_new(GB_FIG_STRIP);
	gb_fig_set_values(f, v, 1, 5);
	gb_fig_set_col_labels(f, l);
	gb_fig_set_title(f, "Strip");
	f->cmap = GB_CMAP_MAGMA;
	return f;
}

static gb_figure *small_grid(void)
{
	gb_figure *f = gb_fig_new(GB_FIG_GRID);
	for (int p = 0; p < 3; p++) {
		float v[16];
		for (int i = 0; i < 16; i++)
			v[i] = (float)((i * (p + 1)) % 16) / 15;
		gb_figure *q = gb_fig_new(GB_FIG_HEATMAP);
		char t[24];
		snprintf(t, sizeof t, "head %d", p + 1);
		gb_fig_set_values(q, v, 4, 4);
		gb_fig_set_title(q, t);
		gb_fig_add_panel(f, q);
	}
	f->grid_cols = 3;
	gb_fig_set_title(f, "Heads");
	gb_fig_set_caption(f, "shared scale");
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


/* The text of line y of a grid (cells' code points as UTF-8, trailing blanks dropped). */
static void line_text(gb_grid *g, int y, char *out, size_t cap)
{
	size_t k = 0;
	for (int x = 0; x < g->w && k + 5 < cap; x++) {
		uint32_t c = at(g, x, y)->cp;
		if (c == GB_CELL_CONT)
			continue;
		if (c < 0x80) out[k++] = (char)c;
		else if (c < 0x800) { out[k++] = (char)(0xC0 | c >> 6); out[k++] = (char)(0x80 | (c & 0x3F)); }
		else { out[k++] = (char)(0xE0 | c >> 12); out[k++] = (char)(0x80 | (c >> 6 & 0x3F)); out[k++] = (char)(0x80 | (c & 0x3F)); }
	}
	while (k > 0 && out[k - 1] == ' ')
		k--;
	out[k] = 0;
}

/* The first line whose text contains s, or -1. */
static int find_line(gb_grid *g, const char *s)
{
	char buf[2048];
	for (int y = 0; y < g->used_h; y++) {
		line_text(g, y, buf, sizeof buf);
		if (strstr(buf, s))
			return y;
	}
	return -1;
}

/* The first line that starts with s, or -1. */
static int find_start(gb_grid *g, const char *s)
{
	char buf[2048];
	for (int y = 0; y < g->used_h; y++) {
		line_text(g, y, buf, sizeof buf);
		if (!strncmp(buf, s, strlen(s)))
			return y;
	}
	return -1;
}

static const char *SENT[19] = { "When", " Mary", " and", " John", " went", " to", " the", " park", ",",
                                " John", " gave", " a", " ball", " to", " her", " on", " Tuesday",
                                " morning", "." };

/* 19x19 causal attention-like weights with the sentence's tokens on both axes */
static gb_figure *sentence_heatmap(void)
{
	float v[19 * 19];
	for (int i = 0; i < 19; i++)
		for (int j = 0; j < 19; j++)
			v[i * 19 + j] = j <= i ? (float)(j + 1) / (float)((i + 1) * (i + 2) / 2) : 0.0f;
	gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
	gb_fig_set_values(f, v, 19, 19);
	gb_fig_set_row_labels(f, SENT);
	gb_fig_set_col_labels(f, SENT);
	gb_fig_set_axes(f, "query", "key");
	gb_fig_set_title(f, "Layer 3, head 2: attention weights");
	f->range = GB_RANGE_FIXED;
	f->vmin = 0;
	f->vmax = 1;
	return f;
}

static void test_rows_whole(void)
{
	gb_figure *f = sentence_heatmap();
	for (int d = GB_DEPTH_PLAIN; d <= GB_DEPTH_TRUE; d += GB_DEPTH_TRUE) {
		gb_grid g;
		/* a screen of 80x22: fewer lines than rows, half blocks allowed (-1, the default) */
		char *text = draw(f, 80, 22, d, 0, 0, &g);
		int whole = 0, packed = 0;
		char want[32];
		for (int i = 0; i < g.shown.rows; i++) {
			gb_label_display(SENT[i], 16, want, sizeof want);
			int y = find_line(&g, want);
			whole += y >= 0;
		}
		for (int y = 0; y < g.used_h; y++)
			for (int x = 0; x < g.w; x++)
				packed += at(&g, x, y)->cp == 0x2580 || at(&g, x, y)->cp == '/';
		tap_ok(g.shown.rows_per_line == 1 && packed == 0 && whole == g.shown.rows && g.shown.rows >= 8,
		       "(%s) 80x22: labelled rows one per line, every one of the %d shown whole, no half "
		       "blocks or packed labels (%d)", depth_name[d], g.shown.rows, packed);
		free(text);
		gb_grid_free(&g);
		/* room to scroll (the prompt gives every row its line): all 19 rows */
		text = draw(f, 80, 60, d, 0, 0, &g);
		whole = 0;
		for (int i = 0; i < 19; i++) {
			gb_label_display(SENT[i], 16, want, sizeof want);
			whole += find_line(&g, want) >= 0;
		}
		tap_ok(g.shown.rows == 19 && whole == 19, "(%s) 80x60: all 19 rows, all 19 labels whole",
		       depth_name[d]);
		int w, lines;
		measure(text ? text : "", &w, &lines);
		tap_ok(w <= 80, "(%s) no line wider than 80 columns (widest %d)", depth_name[d], w);
		free(text);
		gb_grid_free(&g);
	}
	/* at 200 columns the column labels lie flat, whole (·morning takes 8) */
	gb_grid g;
	char *text = draw(f, 200, 60, GB_DEPTH_TRUE, 0, 0, &g);
	int y = find_line(&g, "\xC2\xB7Tuesday");
	char buf[2048];
	if (y >= 0)
		line_text(&g, y, buf, sizeof buf);
	tap_ok(y >= 0 && y == find_line(&g, "When") && strstr(buf, "\xC2\xB7morning"),
	       "200 columns: the column labels are flat and whole on one line (line %d)", y);
	free(text);
	gb_grid_free(&g);
	gb_fig_free(f);
}

static void test_col_words(void)
{
	static const char *cols[] = { "embed", "L1.resid.mid", "L1.resid.post", "L2.resid.mid" };
	static const char *rows[] = { "a", "b" };
	float v[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
	gb_fig_set_values(f, v, 2, 4);
	gb_fig_set_row_labels(f, rows);
	gb_fig_set_col_labels(f, cols);
	gb_fig_set_title(f, "Residual");
	gb_grid g;
	char *text = draw(f, 40, 20, GB_DEPTH_PLAIN, 0, 0, &g);
	int y1 = find_line(&g, "L1."), y2 = find_line(&g, "resid."), y3 = find_line(&g, "post");
	tap_ok(y1 >= 0 && y2 == y1 + 1 && y3 == y2 + 1 && g.shown.cell_w >= 7,
	       "a long column label stands in words on lines of their own (L1. / resid. / post, "
	       "lines %d %d %d, cells %d wide)", y1, y2, y3, g.shown.cell_w);
	int vertical = 0;
	for (int y = 0; y < g.used_h; y++) {
		char buf[256];
		line_text(&g, y, buf, sizeof buf);
		vertical += strcmp(buf, "L") == 0 || strstr(buf, " L L") != NULL;
	}
	tap_ok(vertical == 0, "no label is spelled one letter per line");
	free(text);
	gb_grid_free(&g);
	gb_fig_free(f);
}

static void test_new_fields(void)
{
	static const char *toks[] = { "The", " cat", " sat" };
	static const char *tops[] = { "cat", " sat", " on", "dog", " ran", " off" };
	float v[6] = { 0.1f, 0.5f, 0.9f, 0.2f, 0.4f, 0.8f };
	gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
	gb_fig_set_values(f, v, 2, 3);
	gb_fig_set_row_labels(f, (const char *const *)toks);
	gb_fig_set_col_labels(f, (const char *const *)toks);
	gb_fig_set_title(f, "Lens");
	gb_fig_set_subtitle(f, "tiny-lm \xC2\xB7 \"The cat sat\"");
	gb_fig_set_cell_text(f, tops);
	f->row_index0 = 1;
	f->col_index0 = 1;
	f->range = GB_RANGE_FIXED;
	f->vmin = 0;
	f->vmax = 1;
	float mean[2] = { 0.00731f, -1.5f }, var[2] = { 1234.5f, 0.5f };
	gb_fig_add_side(f, "mean", mean);
	gb_fig_add_side(f, "var", var);
	gb_grid g;
	char *text = draw(f, 60, 20, GB_DEPTH_TRUE, 0, 0, &g);
	tap_ok(find_line(&g, "tiny-lm \xC2\xB7 \"The cat sat\"") == 1 && (at(&g, 0, 1)->attr & GB_ATTR_DIM),
	       "the subtitle is the second line, dim");
	int y1 = find_start(&g, "1 The"), y2 = find_start(&g, "2 \xC2\xB7" "cat");
	tap_ok(y1 >= 0 && y2 == y1 + 1 && at(&g, 0, y1)->cp == '1',
	       "rows carry their index: \"1 The\", \"2 ·cat\", left-aligned (lines %d %d)", y1, y2);
	char buf[1024];
	if (y1 >= 0)
		line_text(&g, y1, buf, sizeof buf);
	tap_ok(y1 >= 0 && strstr(buf, "0.00731") && strstr(buf, "1.23e+03"),
	       "side columns print mean 0.00731 and var 1.23e+03 (3 significant digits) on row 1");
	int yt = find_line(&g, "mean");
	tap_ok(yt >= 0 && yt < y1 && find_line(&g, "var") == yt, "the side columns' titles stand above them");
	tap_ok(find_line(&g, "3 \xC2\xB7sat") >= 0 || (find_line(&g, "\xC2\xB7sat") >= 0 && find_line(&g, "3") >= 0),
	       "columns carry their index too (3 ·sat)");
	/* the cell text "·sat" on row 1, column 2, over the cell's colour with readable ink */
	int x = -1;
	if (y1 >= 0)
		for (int k = 0; k + 3 < g.w; k++)
			if (at(&g, k, y1)->cp == 0xB7 && at(&g, k + 1, y1)->cp == 's' && at(&g, k + 2, y1)->cp == 'a' &&
			    (at(&g, k, y1)->attr & GB_ATTR_BG))
				x = k;
	uint8_t want[3];
	gb_cmap_rgb(GB_CMAP_VIRIDIS, 0.5, want);
	tap_ok(x >= 0 && !memcmp(at(&g, x, y1)->bg, want, 3) && (at(&g, x, y1)->attr & GB_ATTR_FG),
	       "the cell's text \"·sat\" is drawn on the cell's colour (viridis 0.5)");
	free(text);
	gb_grid_free(&g);
	/* cells too narrow for their text: the colour alone */
	static const char *longt[] = { "elephant", "elephant", "elephant", "elephant", "elephant", "elephant" };
	gb_fig_set_cell_text(f, longt);
	f->n_side = 0;
	text = draw(f, 14, 12, GB_DEPTH_TRUE, 0, 0, &g);
	tap_ok(find_line(&g, "ele") < 0 && g.shown.cols >= 1, "cells too narrow show no cut-up text, only colour");
	free(text);
	gb_grid_free(&g);
	gb_fig_free(f);

	/* columns numbered from 65 (a window of units) without labels */
	float u[2 * 4] = { 0 };
	f = gb_fig_new(GB_FIG_HEATMAP);
	gb_fig_set_values(f, u, 2, 4);
	f->col_index0 = 65;
	text = draw(f, 40, 10, GB_DEPTH_PLAIN, 0, 0, &g);
	tap_ok(find_line(&g, "65 66 67 68") >= 0, "a window of units is labelled 65 66 67 68");
	free(text);
	gb_grid_free(&g);
	gb_fig_free(f);

	/* subtitles in every kind */
	for (int k = 0; k < 4; k++) {
		gb_figure *q = k == 0 ? small_bars() : k == 1 ? small_strip() : k == 2 ? small_lines() : small_grid();
		gb_fig_set_subtitle(q, "temperature 0.5");
		text = draw(q, 40, 14, GB_DEPTH_TRUE, 0, 0, &g);
		tap_ok(find_line(&g, "temperature 0.5") == 1, "%s: the subtitle is line 2",
		       k == 0 ? "bars" : k == 1 ? "strip" : k == 2 ? "lines" : "grid");
		free(text);
		gb_grid_free(&g);
		gb_fig_free(q);
	}
}

static void test_grid_cmap_and_kinds(void)
{
	/* a coolwarm grid of panels made viridis (as qkv's were): the panels follow the grid */
	gb_figure *f = small_grid();
	f->cmap = GB_CMAP_COOLWARM;
	gb_grid g;
	char *text = draw(f, 40, 10, GB_DEPTH_TRUE, 0, 0, &g);
	int cool = 0, vir = 0;
	uint8_t lo_c[3], lo_v[3];
	gb_cmap_rgb(GB_CMAP_COOLWARM, 0, lo_c);
	gb_cmap_rgb(GB_CMAP_VIRIDIS, 0, lo_v);
	for (int y = 1; y < 6; y++)
		for (int x = 0; x < g.w; x++) {
			gb_cell *c = at(&g, x, y);
			cool += (c->attr & (GB_ATTR_FG | GB_ATTR_BG)) && (!memcmp(c->fg, lo_c, 3) || !memcmp(c->bg, lo_c, 3));
			vir += (c->attr & (GB_ATTR_FG | GB_ATTR_BG)) && (!memcmp(c->fg, lo_v, 3) || !memcmp(c->bg, lo_v, 3));
		}
	tap_ok(cool > 0 && vir == 0, "panels are drawn in the grid's colour map, the one its bar shows "
	       "(%d coolwarm cells, %d viridis)", cool, vir);
	free(text);
	gb_grid_free(&g);
	gb_fig_free(f);
	/* panels wide enough: each row's token beside it */
	f = gb_fig_new(GB_FIG_GRID);
	for (int p = 0; p < 2; p++) {
		float v[9] = { 1, 0, 0, .5f, .5f, 0, .3f, .3f, .4f };
		static const char *t[] = { "The", " cat", " sat" };
		gb_figure *q = gb_fig_new(GB_FIG_HEATMAP);
		gb_fig_set_values(q, v, 3, 3);
		gb_fig_set_row_labels(q, t);
		gb_fig_set_title(q, p ? "head 2" : "head 1");
		gb_fig_add_panel(f, q);
	}
	f->grid_cols = 2;
	gb_fig_set_title(f, "Heads");
	text = draw(f, 40, 10, GB_DEPTH_TRUE, 0, 0, &g);
	int y = find_line(&g, "\xC2\xB7" "cat");
	char buf[512];
	if (y >= 0)
		line_text(&g, y, buf, sizeof buf);
	tap_ok(y >= 0 && strstr(strstr(buf, "\xC2\xB7" "cat") + 2, "\xC2\xB7" "cat"),
	       "wide panels label their rows: ·cat beside both panels");
	free(text);
	gb_grid_free(&g);
	gb_fig_free(f);
	/* a kind the terminal does not draw: its title and a note, not a failure */
	f = gb_fig_new(GB_FIG_DIAGRAM);
	gb_fig_set_title(f, "tiny-lm");
	gb_fig_add_block(f, "embedding", "1024 x 128", 0, 0);
	gb_grid_init(&g, 60, 10, NULL);
	gb_verr err;
	gb_cells_opts o;
	gb_cells_opts_default(&o, GB_DEPTH_PLAIN);
	int rc = gb_cells_render(&g, 0, 0, 60, 10, f, &o, &err);
	tap_ok(rc == 0 && find_line(&g, "tiny-lm") == 0 && find_line(&g, "window") == 1 && g.used_h == 2,
	       "a diagram in cells: its title and a one-line note");
	gb_grid_free(&g);
	gb_fig_free(f);
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
	test_rows_whole();
	test_col_words();
	test_new_fields();
	test_grid_cmap_and_kinds();
	return tap_done();
}
