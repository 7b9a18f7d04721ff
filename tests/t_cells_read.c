/* t_cells_read.c — the terminal backend at a class's terminal sizes: a labelled heatmap gives
 * every row its own line with its whole token (at 80x22 and with room to scroll), column
 * labels stand in whole words before one letter per line, and the figure fields of issue 18
 * are drawn: subtitle (every kind), index labels, text in cells (or the colour alone when the
 * cells are too narrow), side columns; panels take their grid's colour map and label their
 * rows when wide enough; a kind without a terminal layout gets a note. */
#include "tests/cells_test.h"

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
	int n_side = f->n_side;
	f->n_side = 0;
	text = draw(f, 14, 12, GB_DEPTH_TRUE, 0, 0, &g);
	tap_ok(find_line(&g, "ele") < 0 && g.shown.cols >= 1, "cells too narrow show no cut-up text, only colour");
	free(text);
	gb_grid_free(&g);
	f->n_side = n_side; /* so gb_fig_free frees the side columns' titles (ASan found them leaked) */
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
	/* a block diagram (arch) in cells: its title and its block with its shape */
	f = gb_fig_new(GB_FIG_DIAGRAM);
	gb_fig_set_title(f, "tiny-lm");
	gb_fig_add_block(f, "embedding", "1024 x 128", 0, 0);
	gb_grid_init(&g, 60, 10, NULL);
	gb_verr err;
	gb_cells_opts o;
	gb_cells_opts_default(&o, GB_DEPTH_PLAIN);
	int rc = gb_cells_render(&g, 0, 0, 60, 10, f, &o, &err);
	tap_ok(rc == 0 && find_line(&g, "tiny-lm") == 0 && find_line(&g, "embedding") > 0 && find_line(&g, "1024 x 128") > 0,
	       "a diagram in cells: its title, its block and the block's shape");
	gb_grid_free(&g);
	gb_fig_free(f);
}

int main(void)
{
	test_rows_whole();
	test_col_words();
	test_new_fields();
	test_grid_cmap_and_kinds();
	return tap_done();
}
