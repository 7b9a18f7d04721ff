/* view_moe.c — issue 19, mixture of experts: where the router sends each token of the current
 * text. The tokens x experts map of the router's probabilities with the chosen experts marked,
 * the load per expert (the share of the text's choices each got) and each expert's most
 * frequent tokens, all read from the trace (Ll.ffn.router_probs, .chosen, .load). */
#include "app/view19.h"
#include "app/view_common.h"
#include "app/views.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const gb_ttensor *moe_tensor(session *s, int layer, const char *what)
{
	char nm[64];
	snprintf(nm, sizeof nm, "%sL%d.ffn.%s", s->model.cfg.encdec ? "dec." : "", layer, what);
	const gb_ttensor *t = gb_trace_get(&s->trace, nm);
	if (!t || !t->data)
		errorf("this run has no %s", nm);
	return t && t->data ? t : NULL;
}

static int moe_check(session *s, int layer)
{
	if (need_run(s))
		return -1;
	const gb_config *c = &s->model.cfg;
	if (!c->n_experts) {
		errorf("this model has one dense feed-forward network, not a mixture of experts");
		return -1;
	}
	if (layer < 1 || layer > c->n_layer) {
		errorf("layer %d does not exist: layers are 1 to %d", layer, c->n_layer);
		return -1;
	}
	return 0;
}

static char **expert_labels(int E)
{
	char **l = calloc((size_t)E, sizeof *l);
	for (int e = 0; l && e < E; e++) {
		char w[24];
		snprintf(w, sizeof w, "expert %d", e + 1);
		l[e] = malloc(48);
		words_label(w, l[e], 48); /* no "·" for the space: words, not a token */
	}
	return l;
}

static void free_strs(char **l, int n)
{
	for (int i = 0; l && i < n; i++)
		free(l[i]);
	free(l);
}

gb_figure *view_moe_routing(session *s, int layer)
{
	if (moe_check(s, layer))
		return NULL;
	const gb_ttensor *p = moe_tensor(s, layer, "router_probs"), *ch = p ? moe_tensor(s, layer, "chosen") : NULL;
	if (!ch)
		return NULL;
	int T = p->shape[0], E = p->shape[1], k = ch->shape[1];
	gb_figure *f = view_heat(s, p->data, T, E, s->model.cfg.encdec ? "dec." : "", NULL, "token", "expert");
	if (!f)
		return NULL;
	char **el = expert_labels(E), **txt = calloc((size_t)T * E, sizeof *txt);
	gb_fig_set_col_labels(f, (const char *const *)el);
	free_strs(el, E);
	f->col_index0 = 0;
	/* the chosen experts marked: "[0.62]" in their cells, the others' numbers plain */
	for (int i = 0; txt && i < T; i++)
		for (int e = 0; e < E; e++) {
			int chosen = 0;
			for (int j = 0; j < k; j++)
				chosen |= (int)ch->data[(size_t)i * k + j] == e;
			txt[(size_t)i * E + e] = malloc(24);
			snprintf(txt[(size_t)i * E + e], 24, chosen ? "[%.2f]" : "%.2f", p->data[(size_t)i * E + e]);
		}
	if (txt)
		gb_fig_set_cell_text(f, (const char *const *)txt);
	free_strs(txt, T * E);
	f->numbers = 1;
	f->range = GB_RANGE_FIXED;
	f->vmin = 0;
	f->vmax = 1;
	const gb_config *c = &s->model.cfg;
	view_titlef(f, "Layer %d: the router's probability of each expert for each token; [chosen]", layer);
	char cap[240];
	snprintf(cap, sizeof cap, "p = softmax(x W_router); each token runs its top %d of %d experts (in brackets), "
	         "weighted by %s", k, E, c->norm_topk ? "p renormalised over the chosen (Mixtral)" : "p as it is (Switch)");
	gb_fig_set_caption(f, cap);
	char sel[32];
	snprintf(sel, sizeof sel, "layer %d", layer);
	view_subtitle(s, f, sel, 0);
	view_meta(s, f, p->name);
	return f;
}

gb_figure *view_moe_load(session *s, int layer)
{
	if (moe_check(s, layer))
		return NULL;
	const gb_ttensor *ld = moe_tensor(s, layer, "load"), *ch = ld ? moe_tensor(s, layer, "chosen") : NULL;
	if (!ch)
		return NULL;
	int E = ld->shape[0], T = ch->shape[0], k = ch->shape[1];
	char **el = expert_labels(E);
	gb_figure *f = gb_fig_new(GB_FIG_BARS);
	gb_fig_set_values(f, ld->data, 1, E);
	gb_fig_set_col_labels(f, (const char *const *)el);
	free_strs(el, E);
	f->precision = 3;
	view_titlef(f, "Layer %d: the load of each expert, the share of the text's choices it got", layer);
	char cap[200];
	snprintf(cap, sizeof cap, "%d tokens x top-%d = %d choices; an even load is 1/%d = %.3f each (the "
	         "load-balancing loss pushes towards it)", T, k, T * k, E, 1.0 / E);
	gb_fig_set_caption(f, cap);
	char sel[32];
	snprintf(sel, sizeof sel, "layer %d", layer);
	view_subtitle(s, f, sel, 0);
	view_meta(s, f, ld->name);
	return f;
}

/* Each expert's most frequent tokens over the text: experts x N, the count in each cell and the
 * token drawn in it (as the logit lens draws its tokens). */
gb_figure *view_moe_tokens(session *s, int layer, int N)
{
	if (moe_check(s, layer))
		return NULL;
	const gb_ttensor *ch = moe_tensor(s, layer, "chosen");
	if (!ch)
		return NULL;
	const gb_trace *tr = &s->trace;
	const int *ids = tr->encdec ? tr->tgt : tr->ids;
	int T = ch->shape[0], k = ch->shape[1], E = s->model.cfg.n_experts;
	/* per expert, the distinct ids it got and how often (a text has at most T of them) */
	int *cid = malloc(sizeof(int) * (size_t)E * T), *cnt = calloc((size_t)E * T, sizeof(int)),
	    *nd = calloc((size_t)E, sizeof(int));
	float *v = malloc(sizeof(float) * (size_t)E * N);
	char **txt = calloc((size_t)E * N, sizeof *txt);
	if (!cid || !cnt || !nd || !v || !txt) {
		free(cid), free(cnt), free(nd), free(v), free(txt);
		errorf("out of memory");
		return NULL;
	}
	for (int i = 0; i < T; i++)
		for (int j = 0; j < k; j++) {
			int e = (int)ch->data[(size_t)i * k + j], id = ids[tr->pos0 + i], d = 0;
			if (e < 0 || e >= E)
				continue;
			while (d < nd[e] && cid[e * T + d] != id)
				d++;
			if (d == nd[e])
				cid[e * T + nd[e]++] = id;
			cnt[e * T + d]++;
		}
	for (int e = 0; e < E; e++) {
		/* the N most frequent, the earliest first among equals (a stable selection) */
		for (int r = 0; r < N; r++) {
			int best = -1;
			for (int d = 0; d < nd[e]; d++)
				if (cnt[e * T + d] > 0 && (best < 0 || cnt[e * T + d] > cnt[e * T + best]))
					best = d;
			char piece[64] = "";
			if (best >= 0) {
				piece_str(s, cid[e * T + best], piece, sizeof piece);
				v[e * N + r] = (float)cnt[e * T + best];
				cnt[e * T + best] = -cnt[e * T + best]; /* taken */
			} else
				v[e * N + r] = 0;
			txt[e * N + r] = malloc(96);
			if (best >= 0)
				snprintf(txt[e * N + r], 96, "%s\t%d", piece, (int)v[e * N + r]);
			else
				snprintf(txt[e * N + r], 96, "-");
		}
	}
	gb_figure *f = view_heat(s, v, E, N, NULL, NULL, "expert", "its most frequent tokens on this text (count)");
	if (f) {
		char **el = expert_labels(E), **rk = calloc((size_t)N, sizeof *rk);
		for (int r = 0; rk && r < N; r++) {
			rk[r] = malloc(16);
			snprintf(rk[r], 16, "%d", r + 1);
		}
		gb_fig_set_row_labels(f, (const char *const *)el);
		if (rk)
			gb_fig_set_col_labels(f, (const char *const *)rk);
		free_strs(el, E);
		free_strs(rk, N);
		f->row_index0 = f->col_index0 = 0;
		gb_fig_set_cell_text(f, (const char *const *)txt);
		f->numbers = 1;
		fit_range(f, GB_CMAP_VIRIDIS);
		view_titlef(f, "Layer %d: the tokens each expert gets most often", layer);
		gb_fig_set_caption(f, "each cell: a token and how many times the router sent it to this expert "
		                      "(among its top choices) in the current text");
		char sel[32];
		snprintf(sel, sizeof sel, "layer %d", layer);
		view_subtitle(s, f, sel, 0);
		view_meta(s, f, ch->name);
	}
	free_strs(txt, E * N);
	free(cid), free(cnt), free(nd), free(v);
	return f;
}
