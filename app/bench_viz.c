/* bench_viz.c — `glassbox bench`: timings of the terminal backend (viz/cells).
 *
 * Each figure is the best of many samples, after a warm-up run, for the same reason as the
 * kernel benchmark: everything else on the machine only ever adds time. What is timed is what
 * the REPL does per figure: layout into a fresh grid plus the writer, not the terminal. */
#include "app/bench.h"
#include "app/bench_viz.h"
#include "viz/cells.h"
#include "viz/figure.h"

#include <stdlib.h>
#include <time.h>

/* Best time in seconds of layout + truecolor writer for f in a w x h grid; -1 on failure. */
static double time_cells(const gb_figure *f, int w, int h, size_t *bytes)
{
	gb_grid g;
	gb_cells_opts o;
	gb_verr err;
	double best = 1e30;
	if (gb_grid_init(&g, w, h, &err))
		return -1;
	gb_cells_opts_default(&o, GB_DEPTH_TRUE);
	for (int s = 0; s < 200; s++) {
		char *text;
		double t0 = bench_now();
		gb_grid_clear(&g);
		if (gb_cells_render(&g, 0, 0, w, h, f, &o, &err) ||
		    gb_cells_write(&g, GB_DEPTH_TRUE, &text, bytes, &err)) {
			gb_grid_free(&g);
			return -1;
		}
		double t = bench_now() - t0;
		free(text);
		if (s > 0 && t < best) /* sample 0 is the warm-up */
			best = t;
	}
	gb_grid_free(&g);
	return best;
}

int bench_cells(FILE *out)
{
	enum { N = 128 };
	static float v[N * N];          /* (N, N) */
	static char names[N][16];
	const char *labels[N];
	unsigned long long x = 0x9E3779B97F4A7C15ull;
	for (int i = 0; i < N * N; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		v[i] = (float)(x >> 40) * 0x1p-24f;
	}
	for (int i = 0; i < N; i++) {
		snprintf(names[i], sizeof names[i], " t%d", i);
		labels[i] = names[i];
	}
	gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
	if (!f || gb_fig_set_values(f, v, N, N) || gb_fig_set_row_labels(f, labels) ||
	    gb_fig_set_col_labels(f, labels) || gb_fig_set_title(f, "128x128 heatmap") ||
	    gb_fig_set_caption(f, "uniform random values")) {
		gb_fig_free(f);
		return -1;
	}
	static const struct { int w, h; const char *what; } areas[] = {
		{ 160, 80, "whole, half blocks" },
		{ 80, 24, "window" },
	};
	fprintf(out, "terminal cells: 128x128 heatmap, layout + truecolor writer (budget 5 ms)\n");
	for (int i = 0; i < 2; i++) {
		size_t bytes = 0;
		double t = time_cells(f, areas[i].w, areas[i].h, &bytes);
		if (t < 0) {
			gb_fig_free(f);
			return -1;
		}
		fprintf(out, "  %3dx%-3d %-20s %7.3f ms  %7zu bytes\n", areas[i].w, areas[i].h,
		        areas[i].what, t * 1e3, bytes);
	}
	gb_fig_free(f);
	return 0;
}
