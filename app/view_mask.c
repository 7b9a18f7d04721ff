/* view_mask.c — issue 19, masks applied to the current run, not only drawn from their
 * definitions: `set mask window 4` (strided, dilated, global tokens, blocks) hides keys from
 * every softmax self-attention of the session's runs, on top of the causal mask; the command
 * says what it changed (the loss, the predicted tokens) with the two loss curves as its figure.
 * `receptive` draws which tokens can reach which after 1..L layers under the pattern. The
 * patterns are those `masks` draws. */
#include "app/view19.h"
#include "app/view_common.h"
#include "app/views.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[MASK_N] = { "none", "window", "blocks", "strided", "dilated", "global" };

int mask_allow(const void *arg, int i, int j)
{
	const struct mask_spec *m = arg;
	int d = i - j;
	if (d < 0)
		return 0;
	switch (m->kind) {
	case MASK_WINDOW: return d < m->a;
	case MASK_BLOCKS: return i / m->a == j / m->a;
	case MASK_STRIDED: return d < m->a || d % m->a == 0;
	case MASK_DILATED: return d % m->b == 0 && d < m->a * m->b;
	case MASK_GLOBAL: return d < m->b || j < m->a;
	default: return 1;
	}
}

void mask_opts(session *s, gb_fwd_opts *o)
{
	if (s->mask.kind) {
		o->allow = mask_allow;
		o->allow_arg = &s->mask;
	}
}

void mask_name(const struct mask_spec *m, char *out, size_t cap)
{
	switch (m->kind) {
	case MASK_WINDOW: snprintf(out, cap, "a window of %d", m->a); break;
	case MASK_BLOCKS: snprintf(out, cap, "blocks of %d", m->a); break;
	case MASK_STRIDED: snprintf(out, cap, "strided by %d", m->a); break;
	case MASK_DILATED: snprintf(out, cap, "a window of %d dilated by %d", m->a, m->b); break;
	case MASK_GLOBAL: snprintf(out, cap, "%d global tokens and a window of %d", m->a, m->b); break;
	default: snprintf(out, cap, "full causal attention"); break;
	}
}

/* The top-1 prediction at each position of the trace (n of them). */
static int *top1(session *s, int *n)
{
	const gb_ttensor *lg = gb_trace_get(&s->trace, "logits");
	if (!lg || !lg->data)
		return NULL;
	int T = lg->shape[0], V = lg->shape[1];
	int *t = malloc(sizeof(int) * (size_t)T);
	for (int i = 0; t && i < T; i++) {
		const float *r = lg->data + (size_t)i * V;
		int b = 0;
		for (int v = 1; v < V; v++)
			b = r[v] > r[b] ? v : b;
		t[i] = b;
	}
	*n = T;
	return t;
}

static int size_arg(const char *a, int lo, int *out)
{
	char *end;
	long v = strtol(a, &end, 10);
	if (!*a || *end || v < lo || v > 65536) {
		errorf("a mask's sizes are whole numbers from %d to 65536 (got '%s')", lo, a);
		return -1;
	}
	*out = (int)v;
	return 0;
}

int set_mask(session *s, int argc, char **argv)
{
	/* argv: "mask" KIND [A [B]] */
	if (need_model(s))
		return -1;
	const gb_config *c = &s->model.cfg;
	struct mask_spec m = { 0, 0, 0 };
	int k = 0;
	while (k < MASK_N && (argc < 2 || strcmp(argv[1], kind_names[k])))
		k++;
	static const int need[MASK_N] = { 0, 1, 1, 1, 1, 2 };
	if (k == MASK_N || !(argc - 2 == need[k] || (k == MASK_DILATED && argc == 4))) {
		errorf("usage: set mask none | window W | blocks B | strided S | dilated W [D] | global G W");
		return -1;
	}
	m.kind = k;
	if ((argc > 2 && size_arg(argv[2], 1, &m.a)) || (argc > 3 && size_arg(argv[3], k == MASK_DILATED ? 2 : 1, &m.b)))
		return -1;
	if (k == MASK_DILATED && argc == 3)
		m.b = 2;
	if (k && (c->attn_kind == GB_ATTN_LINEAR || c->encdec)) {
		errorf("set mask hides keys from a decoder's softmax attention; this model's is %s",
		       c->encdec ? "an encoder-decoder" : "linear attention");
		return -1;
	}
	char before[96], after[96];
	mask_name(&s->mask, before, sizeof before);
	mask_name(&m, after, sizeof after);
	if (!s->have_run) {
		s->mask = m;
		if (s->interactive)
			printf("runs now use %s\n", after);
		return 0;
	}
	double *l0 = NULL, *l1 = NULL;
	int n0 = 0, n1, *p0 = NULL, *p1 = NULL;
	if (s->trace.n_ids >= 2 && !s->trace.encdec)
		n0 = text_losses(s, &l0, NULL);
	p0 = top1(s, &n1);
	s->mask = m;
	if (rerun(s)) {
		free(l0);
		free(p0);
		return -1;
	}
	int nn = n0 > 0 ? text_losses(s, &l1, NULL) : -1, np;
	p1 = top1(s, &np);
	int changed = 0;
	for (int i = 0; p0 && p1 && i < np && i < n1; i++)
		changed += p0[i] != p1[i];
	double m0 = 0, m1 = 0;
	for (int i = 0; i < n0 && nn == n0; i++) {
		m0 += l0[i];
		m1 += l1[i];
	}
	printf("mask: %s -> %s\n", before, after);
	if (nn == n0 && n0 > 0)
		printf("  mean loss of the text %.4f -> %.4f (%+.4f)\n", m0 / n0, m1 / n0, (m1 - m0) / n0);
	if (p0 && p1) {
		char a[64], b[64];
		piece_str(s, p0[np - 1], a, sizeof a);
		piece_str(s, p1[np - 1], b, sizeof b);
		printf("  the most probable next token changed at %d of %d positions; after the text: %s -> %s\n", changed, np, a,
		       b);
	}
	int rc = 0;
	/* taking the mask off prints the change but draws nothing: its figure would be the one the
	 * mask drew, the two lines' names swapped (and a lesson ends its window with `set mask none`) */
	if (nn == n0 && n0 > 0 && m.kind) {
		gb_figure *f = gb_fig_new(GB_FIG_LINES);
		float *xs = malloc(sizeof(float) * (size_t)n0), *y = malloc(sizeof(float) * (size_t)n0);
		for (int i = 0; i < n0; i++) {
			xs[i] = (float)(i + 2);
			y[i] = (float)l0[i];
		}
		gb_fig_set_xs(f, xs, n0);
		gb_fig_add_series(f, before, y, n0);
		for (int i = 0; i < n0; i++)
			y[i] = (float)l1[i];
		gb_fig_add_series(f, after, y, n0);
		free(xs);
		free(y);
		view_titlef(f, "Loss of each token with %s, and before", after);
		char cap[240];
		snprintf(cap, sizeof cap, "mean loss %.3f with %s, %.3f before; the most probable next token changed at %d of "
		         "%d positions", m1 / n0, after, m0 / n0, changed, np);
		gb_fig_set_caption(f, cap);
		gb_fig_set_axes(f, "loss (nats)", "position of the predicted token (from 1)");
		view_provenance(s, f, "logits", NULL, 0);
		rc = show_figure(s, f);
	}
	free(l0), free(l1), free(p0), free(p1);
	return rc;
}

gb_figure *view_receptive(session *s, int T)
{
	if (need_model(s))
		return NULL;
	int L = s->model.cfg.n_layer;
	if (T <= 0)
		T = s->have_run && !s->trace.encdec ? s->trace.n_ids : 16;
	if (T > 64)
		T = 64;
	/* reach_l(i, j): j's token can affect position i after l layers; reach_1 is the mask and
	 * reach_l = reach_{l-1} . mask (boolean product: through some position k in between) */
	unsigned char *m = malloc((size_t)T * T), *r = malloc((size_t)T * T), *t = malloc((size_t)T * T);
	float *v = malloc(sizeof(float) * (size_t)T * T);
	struct mask_spec none = { 0, 0, 0 }, *ms = s->mask.kind ? &s->mask : &none;
	for (int i = 0; i < T; i++)
		for (int j = 0; j < T; j++)
			m[i * T + j] = r[i * T + j] = (unsigned char)mask_allow(ms, i, j);
	gb_figure *g = gb_fig_new(GB_FIG_GRID);
	g->grid_cols = L <= 4 ? L : (L + 1) / 2;
	g->range = GB_RANGE_FIXED;
	g->vmin = 0;
	g->vmax = 1;
	g->cmap = GB_CMAP_GRAY;
	g->colorbar = 0;
	for (int l = 1; l <= L; l++) {
		if (l > 1) {
			for (int i = 0; i < T; i++)
				for (int j = 0; j < T; j++) {
					unsigned char on = 0;
					for (int k = j; k <= i && !on; k++)
						on = r[i * T + k] && m[k * T + j];
					t[i * T + j] = on;
				}
			memcpy(r, t, (size_t)T * T);
		}
		int last = 0;
		for (int j = 0; j < T; j++) {
			v[j] = 0;
			last += r[(T - 1) * T + j];
		}
		for (int i = 0; i < T * T; i++)
			v[i] = r[i];
		gb_figure *p = gb_fig_new(GB_FIG_HEATMAP);
		gb_fig_set_values(p, v, T, T);
		char title[96];
		snprintf(title, sizeof title, "%d layer%s: the last sees %d of %d", l, l > 1 ? "s" : "", last, T);
		gb_fig_set_title(p, title);
		gb_fig_set_axes(p, "position", "token it can reach");
		gb_fig_add_panel(g, p);
	}
	free(m), free(r), free(t), free(v);
	char nm[96];
	mask_name(ms, nm, sizeof nm);
	view_titlef(g, "Receptive field under %s, layer by layer (white: the token can reach the position)", nm);
	gb_fig_set_caption(g, "after l layers position i has read token j when a chain i >= k1 >= ... >= j of allowed "
	                      "pairs links them, one pair per layer: a sparse pattern reaches further with depth");
	gb_fig_set_axes(g, "position", "token it can reach");
	char sel[32];
	snprintf(sel, sizeof sel, "%d positions", T);
	view_subtitle(s, g, sel, 0);
	view_meta(s, g, NULL);
	return g;
}
