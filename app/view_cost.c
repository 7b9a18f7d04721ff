/* view_cost.c — issue 19, part 3: the measured cost of attention (bench_attn.c) as a figure:
 * time or memory against the sequence length for softmax, sliding-window and linear
 * attention, both axes in log2 (a power law is a straight line, its slope the exponent), the
 * measured slopes in the legend and caption. */
#include "app/view19.h"
#include "app/view_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

gb_figure *view_cost(session *s, const attn_cost *c, int memory)
{
	static const char *const form[3] = { "softmax", "sliding window", "linear" };
	gb_figure *f = gb_fig_new(GB_FIG_LINES);
	float xs[ATTN_COST_MAX], y[ATTN_COST_MAX];
	for (int i = 0; i < c->n; i++)
		xs[i] = (float)log2(c->T[i]);
	gb_fig_set_xs(f, xs, c->n);
	char cap[400];
	int n;
	if (!memory)
		n = snprintf(cap, sizeof cap, "one head, d_head %d, causal, %s kernels on one thread, CPU time, best of 3 means; slopes", c->d_head,
		             c->kernels);
	else
		n = snprintf(cap, sizeof cap, "the bytes each form allocates (softmax: the n x n table; window: its band) or keeps "
		             "(linear: the state); slopes");
	for (int k = 0; k < 3; k++) {
		double sl = attn_slope(c, k, memory);
		for (int i = 0; i < c->n; i++) {
			double v = memory ? c->bytes[k][i] : c->seconds[k][i] * 1e3;
			y[i] = v > 0 ? (float)log2(v) : NAN;
		}
		char lab[96];
		if (k == 1)
			snprintf(lab, sizeof lab, "window %d (slope %.2f)", c->window, sl);
		else
			snprintf(lab, sizeof lab, "%s (slope %.2f)", form[k], sl);
		gb_fig_add_series(f, lab, y, c->n);
		n += snprintf(cap + n, sizeof cap - (size_t)n, "%s %s %.2f", k ? "," : "", form[k], sl);
	}
	/* (the fit's range said: a reviewer read linear's 0.81 over 512-4096, a noisy point in it,
	 * as a cost growing slower than n) */
	snprintf(cap + n, sizeof cap - (size_t)n, ", fitted over %d to %d tokens (2: quadratic, 1: linear, 0: constant)",
	         c->T[c->n / 2], c->T[c->n - 1]);
	if (memory) {
		view_titlef(f, "Attention's memory against the length: log2 bytes over log2 tokens");
		gb_fig_set_axes(f, "log2 bytes (10 = 1 KB, 20 = 1 MB)", "log2 tokens (6 = 64 ... 12 = 4096)");
	} else {
		view_titlef(f, "Attention's time against the length, measured: log2 ms over log2 tokens");
		gb_fig_set_axes(f, "log2 milliseconds (0 = 1 ms, 10 = 1 s)", "log2 tokens (6 = 64 ... 12 = 4096)");
	}
	gb_fig_set_caption(f, cap);
	char sub[128];
	snprintf(sub, sizeof sub, "measured on this machine, %d to %d tokens, %s kernels, one thread", c->T[0], c->T[c->n - 1], c->kernels);
	gb_fig_set_subtitle(f, sub);
	gb_fig_add_meta(f, "Kernels", c->kernels);
	(void)s;
	return f;
}
