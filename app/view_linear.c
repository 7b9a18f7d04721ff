/* view_linear.c — issue 19, linear attention: the n x n weights it implies beside the d x d
 * state that replaces them. Softmax attention needs every query's row of n weights; linear
 * attention (phi(x) = elu(x) + 1) can run as a running sum S_i = sum_{j<=i} phi(k_j) v_j^T
 * (d_head x d_head) and z_i = sum phi(k_j), out_i = phi(q_i) S_i / phi(q_i).z_i, whatever the
 * length. Both orders are computed here again from the trace's q_feat, k_feat and v, and
 * compared with the engine's head output. */
#include "app/view19.h"
#include "app/view_common.h"
#include "app/views.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const gb_ttensor *lin_tensor(session *s, int layer, const char *what)
{
	char nm[64];
	snprintf(nm, sizeof nm, "L%d.attn.%s", layer, what);
	const gb_ttensor *t = gb_trace_get(&s->trace, nm);
	if (!t || !t->data)
		errorf("this run has no %s", nm);
	return t && t->data ? t : NULL;
}

int linear_check(session *s, int layer, int head, linear_result *r)
{
	memset(r, 0, sizeof *r);
	if (need_run(s))
		return -1;
	const gb_config *c = &s->model.cfg;
	if (c->attn_kind != GB_ATTN_LINEAR || c->encdec) {
		errorf("this model's attention is softmax, not linear: every query needs its row of n weights");
		return -1;
	}
	if (layer < 1 || layer > c->n_layer || head < 1 || head > c->n_head) {
		errorf("layer %d head %d does not exist: layers 1 to %d, heads 1 to %d", layer, head, c->n_layer, c->n_head);
		return -1;
	}
	const gb_ttensor *qf = lin_tensor(s, layer, "q_feat"), *kf = qf ? lin_tensor(s, layer, "k_feat") : NULL,
	                 *v = kf ? lin_tensor(s, layer, "v") : NULL, *ho = v ? lin_tensor(s, layer, "head_out") : NULL,
	                 *w = ho ? lin_tensor(s, layer, "weights") : NULL;
	if (!w)
		return -1;
	int T = qf->shape[1], E = qf->shape[2], h = head - 1, kv = h / (c->n_head / c->n_kv_head);
	const float *Q = qf->data + (size_t)h * T * E, *Kf = kf->data + (size_t)kv * T * E, *V = v->data + (size_t)kv * T * E,
	            *O = ho->data + (size_t)h * T * E, *W = w->data + (size_t)h * T * T;
	double *S = calloc((size_t)E * E, sizeof(double)), *z = calloc((size_t)E, sizeof(double));
	r->state = malloc(sizeof(float) * (size_t)T * E * E);
	if (!S || !z || !r->state) {
		free(S), free(z), free(r->state);
		r->state = NULL;
		errorf("out of memory");
		return -1;
	}
	for (int i = 0; i < T; i++) {
		/* the recurrent order: add key i to the state, then read it with query i */
		for (int a = 0; a < E; a++) {
			z[a] += Kf[(size_t)i * E + a];
			for (int b = 0; b < E; b++)
				S[a * E + b] += (double)Kf[(size_t)i * E + a] * V[(size_t)i * E + b];
		}
		for (int a = 0; a < E * E; a++)
			r->state[(size_t)i * E * E + a] = (float)S[a];
		double den = 0;
		for (int a = 0; a < E; a++)
			den += Q[(size_t)i * E + a] * z[a];
		for (int b = 0; b < E; b++) {
			double num = 0, quad = 0;
			for (int a = 0; a < E; a++)
				num += Q[(size_t)i * E + a] * S[a * E + b];
			/* the quadratic order: the row of n implied weights times the values */
			for (int j = 0; j <= i; j++)
				quad += (double)W[(size_t)i * T + j] * V[(size_t)j * E + b];
			double rec = num / den, d1 = fabs(rec - quad), d2 = fabs(rec - O[(size_t)i * E + b]);
			r->max_orders = d1 > r->max_orders ? d1 : r->max_orders;
			r->max_engine = d2 > r->max_engine ? d2 : r->max_engine;
			r->max_out = fabs(quad) > r->max_out ? fabs(quad) : r->max_out;
		}
	}
	free(S);
	free(z);
	r->T = T;
	r->E = E;
	r->layer = layer;
	r->head = head;
	return 0;
}

void linear_free(linear_result *r)
{
	free(r->state);
	memset(r, 0, sizeof *r);
}

gb_figure *view_linear_state(session *s, const linear_result *r, int n_steps)
{
	int T = r->T, E = r->E;
	gb_figure *g = gb_fig_new(GB_FIG_GRID);
	if (n_steps > T)
		n_steps = T;
	g->grid_cols = n_steps;
	g->panel_labels = 0;
	char **fl = calloc((size_t)E, sizeof *fl);
	for (int a = 0; fl && a < E; a++) {
		fl[a] = malloc(12);
		snprintf(fl[a], 12, "%d", a);
	}
	int ntok;
	char **tl = token_labels(s, "", &ntok);
	for (int k = 0; k < n_steps; k++) {
		/* T/n, 2T/n, ..., T: the state after these many keys */
		int i = (int)((long)(k + 1) * T / n_steps) - 1;
		gb_figure *p = view_heat(s, r->state + (size_t)i * E * E, E, E, NULL, NULL, "phi(k) feature", "v feature");
		if (!p)
			break;
		if (fl) {
			gb_fig_set_row_labels(p, (const char *const *)fl);
			gb_fig_set_col_labels(p, (const char *const *)fl);
		}
		p->row_index0 = p->col_index0 = 0;
		char t[96], tok[48] = "";
		if (i < ntok)
			gb_label_display(tl[i], 12, tok, sizeof tok);
		snprintf(t, sizeof t, "after %d key%s (%s)", i + 1, i ? "s" : "", tok);
		gb_fig_set_title(p, t);
		gb_fig_set_subtitle(p, NULL);
		gb_fig_add_panel(g, p);
	}
	free_labels(tl, ntok);
	for (int a = 0; fl && a < E; a++)
		free(fl[a]);
	free(fl);
	fit_range(g, GB_CMAP_COOLWARM);
	view_titlef(g, "Linear attention, layer %d head %d: the %d x %d state filling in, key by key", r->layer, r->head, E, E);
	char cap[400];
	snprintf(cap, sizeof cap, "S_i = sum_{j<=i} phi(k_j) v_j^T replaces the n x n weights: %d numbers (+ %d for the "
	         "normaliser z) whatever the length, against %d x %d = %d weights for this text; out_i = phi(q_i) S_i / "
	         "phi(q_i).z_i", E * E, E, T, T, T * T);
	gb_fig_set_caption(g, cap);
	gb_fig_set_axes(g, "phi(k) feature", "v feature");
	char sel[48];
	snprintf(sel, sizeof sel, "layer %d, head %d", r->layer, r->head);
	view_subtitle(s, g, sel, 0);
	view_meta(s, g, NULL);
	return g;
}

/* The n x n weights linear attention implies beside the d x d state that replaces them, as
 * one slide: two panels on one diverging scale, each divided by its own largest |value| (the
 * weights and the state are not in the same units; the divisors are in the panel titles). */
gb_figure *view_linear_both(session *s, const linear_result *r)
{
	char nm[64];
	snprintf(nm, sizeof nm, "L%d.attn.weights", r->layer);
	const gb_ttensor *w = gb_trace_get(&s->trace, nm);
	if (!w || !w->data) {
		errorf("this run has no %s", nm);
		return NULL;
	}
	int T = r->T, E = r->E;
	const float *W = w->data + (size_t)(r->head - 1) * T * T, *S = r->state + (size_t)(T - 1) * E * E;
	float *a = malloc(sizeof(float) * (size_t)T * T), *b = malloc(sizeof(float) * (size_t)E * E);
	double mw = 0, ms = 0;
	for (int i = 0; i < T * T; i++)
		mw = isfinite(W[i]) && fabs(W[i]) > mw ? fabs(W[i]) : mw;
	for (int i = 0; i < E * E; i++)
		ms = fabs(S[i]) > ms ? fabs(S[i]) : ms;
	for (int i = 0; i < T; i++)
		for (int j = 0; j < T; j++) /* the keys after the query: masked, as attn draws them */
			a[i * T + j] = j > i ? -INFINITY : (float)(W[i * T + j] / (mw > 0 ? mw : 1));
	for (int i = 0; i < E * E; i++)
		b[i] = (float)(S[i] / (ms > 0 ? ms : 1));
	gb_figure *g = gb_fig_new(GB_FIG_GRID);
	gb_figure *pa = view_heat(s, a, T, T, "", "", "query", "key"), *pb = view_heat(s, b, E, E, NULL, NULL, "phi(k) feature", "v feature");
	free(a);
	free(b);
	if (!g || !pa || !pb) {
		gb_fig_free(g), gb_fig_free(pa), gb_fig_free(pb);
		return NULL;
	}
	char t[160];
	snprintf(t, sizeof t, "the %d x %d weights it implies (/ %.2g)", T, T, mw);
	gb_fig_set_title(pa, t);
	pa->masked = pa->mask_zero = 1;
	snprintf(t, sizeof t, "the %d x %d state after all %d keys (/ %.3g)", E, E, T, ms);
	gb_fig_set_title(pb, t);
	pb->row_index0 = pb->col_index0 = 0;
	gb_fig_add_panel(g, pa);
	gb_fig_add_panel(g, pb);
	g->grid_cols = 2;
	g->panel_labels = 1;
	g->panel_fill = 1;
	g->masked = g->mask_zero = 1;
	g->range = GB_RANGE_FIXED;
	g->vmin = -1;
	g->vmax = 1;
	g->cmap = GB_CMAP_COOLWARM;
	for (int k = 0; k < 2; k++) {
		g->panels[k]->range = GB_RANGE_FIXED;
		g->panels[k]->vmin = -1;
		g->panels[k]->vmax = 1;
		g->panels[k]->cmap = GB_CMAP_COOLWARM;
	}
	view_titlef(g, "Linear attention, layer %d head %d: %d weights, or a state of %d numbers", r->layer, r->head, T * T, E * E + E);
	char cap[300];
	snprintf(cap, sizeof cap, "each panel divided by its largest |value|; out_i = phi(q_i) S_i / phi(q_i).z_i gives what "
	         "the weights give (largest difference %.2g): the state's size does not grow with the text", r->max_orders);
	gb_fig_set_caption(g, cap);
	char sel[48];
	snprintf(sel, sizeof sel, "layer %d, head %d", r->layer, r->head);
	view_subtitle(s, g, sel, 0);
	view_meta(s, g, nm);
	return g;
}
