/* cells_test.h — what the two tests of the terminal backend share (t_cells.c, t_cells_read.c):
 * drawing a figure into a grid as text, measuring the text, and small hand-made figures.
 * Included by those test programs only; everything is static (unused parts are fine). */
#ifndef GLASSBOX_CELLS_TEST_H
#define GLASSBOX_CELLS_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/tap.h"
#include "viz/cells.h"
#include "viz/colormap.h"
#include "viz/figure.h"

#if defined(__GNUC__)
#define CT_UNUSED __attribute__((unused))
#else
#define CT_UNUSED
#endif

CT_UNUSED static const char *depth_name[] = { "plain", "16", "256", "true" };

/* ---- helpers ---------------------------------------------------------------------------- */

/* s without its SGR escapes (malloc'd). */
CT_UNUSED static char *strip_sgr(const char *s)
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
CT_UNUSED static void measure(const char *text, int *max_w, int *lines)
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
CT_UNUSED static char *draw(const gb_figure *f, int w, int h, int depth, int row0, int col0, gb_grid *keep)
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

CT_UNUSED static gb_cell *at(gb_grid *g, int x, int y) { return gb_grid_cell(g, x, y); }

CT_UNUSED static gb_figure *small_bars(void)
{
	static const float v[4] = { 1.0f, 0.5f, 0.3125f, 0.0f };
	static const char *l[] = { " the", " a", "\n", "x" };
	gb_figure *f = gb_fig_new(GB_FIG_BARS);
	gb_fig_set_values(f, v, 1, 4);
	gb_fig_set_col_labels(f, l);
	gb_fig_set_title(f, "Next token");
	return f;
}

CT_UNUSED static gb_figure *small_lines(void)
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

CT_UNUSED static gb_figure *small_strip(void)
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

CT_UNUSED static gb_figure *small_grid(void)
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

#endif
