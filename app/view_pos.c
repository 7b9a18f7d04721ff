/* view_pos.c — issue 19, positions: what each way of giving a Transformer positions does to
 * its attention. The score or bias as a function of the query-key offset per head (ALiBi's
 * and T5's exactly, from the model; any other model's as the mean score at each offset of the
 * current text); the shift test, the same words run at two offsets, whose first-layer scores
 * are equal under RoPE, ALiBi and T5's relative bias and differ under learned or sinusoidal
 * positions; RoPE's pairs turning at their own speeds; ALiBi's slopes; T5's buckets. */
#include "app/view19.h"
#include "app/view_common.h"
#include "app/views.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/forward.h"

static const char *pos_name(int pos)
{
	static const char *n[] = { "no positions", "sinusoidal positions", "learned positions", "RoPE", "ALiBi",
	                           "T5's relative bias" };
	return pos >= 0 && pos <= GB_POS_T5 ? n[pos] : "?";
}

static int self_stack_layers(session *s) { return s->model.cfg.n_layer; }
static const char *self_stack(session *s) { return s->model.cfg.encdec ? "dec." : ""; }

/* The bias a head adds at offset d = query - key >= 0 (ALiBi, T5) in layer l (0-based). */
static double bias_at(session *s, int l, int h, int d)
{
	const gb_config *c = &s->model.cfg;
	if (c->pos == GB_POS_ALIBI)
		return d ? -gb_alibi_slope(h, c->n_head) * d : 0; /* not -0 */
	const float *rb = s->model.dec.layers[l].attn.rel_bias;
	return rb[gb_t5_bucket(-d, 0, c->rel_buckets, c->rel_max_dist) * c->n_head + h];
}

gb_figure *view_pos_offset(session *s, int layer)
{
	if (need_run(s))
		return NULL;
	const gb_config *c = &s->model.cfg;
	if (layer < 1 || layer > self_stack_layers(s)) {
		errorf("layer %d does not exist: layers are 1 to %d", layer, self_stack_layers(s));
		return NULL;
	}
	int H = c->n_head, bias = c->pos == GB_POS_ALIBI || c->pos == GB_POS_T5;
	int T = s->trace.encdec ? s->trace.n_tgt : s->trace.n_ids;
	/* a bias is a function of the offset alone: drawn over the context (T5's log buckets
	 * need room to show), at most 160 offsets; a mean over the text only where it has pairs */
	int nd = bias ? (c->n_ctx < 160 ? c->n_ctx : 160) : T;
	float *xs = malloc(sizeof(float) * (size_t)nd), *y = malloc(sizeof(float) * (size_t)nd);
	const gb_ttensor *m = NULL;
	if (!bias) {
		char nm[64];
		snprintf(nm, sizeof nm, "%sL%d.attn.masked", self_stack(s), layer);
		if (!(m = gb_trace_get(&s->trace, nm))) {
			errorf("this run has no %s", nm);
			free(xs);
			free(y);
			return NULL;
		}
	}
	gb_figure *f = gb_fig_new(GB_FIG_LINES);
	for (int d = 0; d < nd; d++)
		xs[d] = (float)d;
	gb_fig_set_xs(f, xs, nd);
	for (int h = 0; h < H; h++) {
		for (int d = 0; d < nd; d++) {
			if (bias) {
				y[d] = (float)bias_at(s, layer - 1, h, d);
				continue;
			}
			/* the mean scaled score of the pairs (i, i - d) the mask lets through */
			double sum = 0;
			int cnt = 0;
			const float *a = m->data + (size_t)h * T * T;
			for (int i = d; i < T; i++) {
				float v = a[(size_t)i * T + (i - d)];
				if (isfinite(v)) {
					sum += v;
					cnt++;
				}
			}
			y[d] = cnt ? (float)(sum / cnt) : NAN;
		}
		char lab[32];
		snprintf(lab, sizeof lab, "head %d", h + 1);
		gb_fig_add_series(f, lab, y, nd);
	}
	free(xs);
	free(y);
	if (c->pos == GB_POS_ALIBI) {
		view_titlef(f, "ALiBi: the bias each head adds to a score, by how far back the key is");
		gb_fig_set_caption(f, "bias = -m_h x (query - key), m_h = 2^(-8h/H): a straight line per head, steep heads "
		                      "look near, flat ones far; the same in every layer and for any text");
	} else if (c->pos == GB_POS_T5) {
		view_titlef(f, "T5 relative bias of layer %d: what each head adds, by how far back the key is", layer);
		char cap[200];
		snprintf(cap, sizeof cap, "learned, one value per head and bucket: offsets 0-%d a bucket each, then "
		         "log-spaced buckets to %d, beyond it the last (steps)", c->rel_buckets / 2 - 1, c->rel_max_dist);
		gb_fig_set_caption(f, cap);
	} else {
		view_titlef(f, "Layer %d, %s: the mean score at each query-key offset, per head", layer, pos_name(c->pos));
		gb_fig_set_caption(f, "mean of q.k / sqrt(d_head) over this text's pairs (i, i - offset): with no bias term, "
		                      "position reaches the score only through q and k, mixed with the words");
	}
	gb_fig_set_axes(f, bias ? "bias added to the score" : "mean scaled score", "offset: query - key (tokens back)");
	char sel[48];
	snprintf(sel, sizeof sel, "layer %d", layer);
	view_subtitle(s, f, bias ? NULL : sel, 0);
	view_meta(s, f, NULL);
	return f;
}

/* ---- the shift test ---- */

/* Runs ids through the model into a trace of its own (the session's is untouched). */
static int run_ids(session *s, const int *ids, int n, gb_trace *tr)
{
	gb_err err;
	gb_fwd_opts o = { 0 };
	o.k = s->k;
	o.textbook_ln = s->textbook;
	if (gb_forward(&s->model, ids, n, NULL, 0, tr, &o, &err)) {
		errorf("%s", err.msg);
		return -1;
	}
	return 0;
}

int shift_test(session *s, int layer, int by, shift_result *r)
{
	memset(r, 0, sizeof *r);
	if (need_run(s))
		return -1;
	const gb_config *c = &s->model.cfg;
	if (c->encdec) {
		errorf("the shift test runs a decoder-only model; this is an encoder-decoder");
		return -1;
	}
	int n = s->trace.n_ids, H = c->n_head;
	if (layer < 1 || layer > c->n_layer) {
		errorf("layer %d does not exist: layers are 1 to %d", layer, c->n_layer);
		return -1;
	}
	if (n + by > c->n_ctx) {
		errorf("the text (%d tokens) moved %d places on does not fit the context of %d: a shorter text or a smaller shift",
		       n, by, c->n_ctx);
		return -1;
	}
	int *ids = malloc(sizeof(int) * (size_t)(n + by));
	r->a = malloc(sizeof(float) * (size_t)H * n * n);
	r->b = malloc(sizeof(float) * (size_t)H * n * n);
	r->maxdiff = calloc((size_t)H, sizeof(double));
	r->maxabs = calloc((size_t)H, sizeof(double));
	if (!ids || !r->a || !r->b || !r->maxdiff || !r->maxabs) {
		free(ids);
		shift_free(r);
		errorf("out of memory");
		return -1;
	}
	/* the words at positions by .. by + n - 1, after by copies of the first: layer 1's
	 * scores among the words read only their own embeddings and positions (the prefix adds
	 * keys, which the softmax feels, but no score among the words) */
	for (int i = 0; i < by; i++)
		ids[i] = s->trace.ids[0];
	memcpy(ids + by, s->trace.ids, sizeof(int) * (size_t)n);
	gb_trace ta = { 0 }, tb = { 0 };
	char nm[48];
	snprintf(nm, sizeof nm, "L%d.attn.masked", layer);
	int rc = run_ids(s, ids + by, n, &ta) || run_ids(s, ids, n + by, &tb) ? -1 : 0;
	const gb_ttensor *A = rc ? NULL : gb_trace_get(&ta, nm);
	const float *ad = A ? A->data : NULL;
	if (!rc && A) {
		memcpy(r->a, ad, sizeof(float) * (size_t)H * n * n);
		const gb_ttensor *B = gb_trace_get(&tb, nm);
		int N = n + by;
		for (int h = 0; B && h < H; h++)
			for (int i = 0; i < n; i++)
				for (int j = 0; j < n; j++) {
					float vb = B->data[((size_t)h * N + by + i) * N + by + j], va = r->a[((size_t)h * n + i) * n + j];
					r->b[((size_t)h * n + i) * n + j] = vb;
					if (!isfinite(va) || !isfinite(vb))
						continue; /* masked in both: the key comes after the query */
					double d = fabs((double)va - vb);
					r->maxdiff[h] = d > r->maxdiff[h] ? d : r->maxdiff[h];
					r->maxabs[h] = fabs(va) > r->maxabs[h] ? fabs(va) : r->maxabs[h];
				}
		if (!B)
			rc = -1;
	} else
		rc = -1;
	if (rc)
		errorf("the shift test found no %s", nm);
	gb_trace_free(&ta);
	gb_trace_free(&tb);
	free(ids);
	if (rc) {
		shift_free(r);
		return -1;
	}
	r->n = n;
	r->H = H;
	r->by = by;
	r->layer = layer;
	return 0;
}

void shift_free(shift_result *r)
{
	free(r->a);
	free(r->b);
	free(r->maxdiff);
	free(r->maxabs);
	memset(r, 0, sizeof *r);
}

int shift_equal(const shift_result *r, int h)
{
	/* equal up to float rounding: the angles of two positions are computed apart */
	return r->maxdiff[h] <= 1e-4 * (1 + r->maxabs[h]);
}

gb_figure *view_shift(session *s, const shift_result *r, int head)
{
	int n = r->n;
	gb_figure *g = gb_fig_new(GB_FIG_GRID);
	g->grid_cols = 2;
	g->panel_labels = 1;
	g->masked = 1;
	for (int k = 0; k < 2; k++) {
		const float *v = (k ? r->b : r->a) + (size_t)(head - 1) * n * n;
		gb_figure *p = view_heat(s, v, n, n, "", "", "query", "key");
		if (!p) {
			gb_fig_free(g);
			return NULL;
		}
		p->masked = 1;
		p->numbers = n <= 12;
		char t[96];
		/* rows and columns number the tokens from 1; positions count from 0, so the title
		 * names both */
		if (k)
			snprintf(t, sizeof t, "tokens 1-%d at positions %d-%d (after %d copies)", n, r->by, r->by + n - 1, r->by);
		else
			snprintf(t, sizeof t, "tokens 1-%d at positions 0-%d", n, n - 1);
		gb_fig_set_title(p, t);
		gb_fig_add_panel(g, p);
	}
	fit_range(g, GB_CMAP_COOLWARM);
	const gb_config *c = &s->model.cfg;
	int eq = shift_equal(r, head - 1);
	view_titlef(g, "Shift test, %s: layer %d head %d's scores %s when the words move %d places", pos_name(c->pos),
	            r->layer, head, eq ? "stay the same" : "change", r->by);
	char cap[400], num[32];
	gb_fig_fmt_sig(r->maxdiff[head - 1], 3, num, sizeof num);
	snprintf(cap, sizeof cap, "largest |difference| %s (largest |score| %.3g): %s", num, r->maxabs[head - 1],
	         c->pos == GB_POS_NONE ? "with no positions at all, the scores see only the words"
	         : eq ? "the scores depend on the offset between query and key, not on where the words stand"
	              : "the scores depend on where the words stand, not only on their offset");
	gb_fig_set_caption(g, cap);
	gb_fig_set_axes(g, "query", "key");
	char sel[48];
	snprintf(sel, sizeof sel, "layer %d, head %d", r->layer, head);
	view_subtitle(s, g, sel, 0);
	view_meta(s, g, NULL);
	return g;
}

/* ---- RoPE, ALiBi, T5 ---- */

gb_figure *view_rope_pairs(session *s, const int *pairs, int np)
{
	if (need_model(s))
		return NULL;
	const gb_config *c = &s->model.cfg;
	if (c->pos != GB_POS_ROPE) {
		errorf("this model has %s, not RoPE: no pairs of features are rotated", pos_name(c->pos));
		return NULL;
	}
	int half = c->d_head / 2, def[4] = { 0, half / 4, half / 2, half - 1 }, nd = 0;
	if (!np) {
		pairs = def;
		for (int k = 0; k < 4; k++) /* the default pairs, without repeats for a tiny head */
			if (!k || def[k] != def[k - 1])
				def[nd++] = def[k];
		np = nd;
	}
	for (int k = 0; k < np; k++)
		if (pairs[k] < 0 || pairs[k] >= half) {
			errorf("pair %d does not exist: pairs are 0 to %d (d_head %d / 2)", pairs[k], half - 1, c->d_head);
			return NULL;
		}
	int P = c->n_ctx < 64 ? c->n_ctx : 64, steps = 4, n = (P - 1) * steps + 1;
	float *xs = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)n);
	gb_figure *f = gb_fig_new(GB_FIG_LINES);
	for (int i = 0; i < n; i++)
		xs[i] = (float)i / steps;
	gb_fig_set_xs(f, xs, n);
	char cap[400] = "cos(i theta_k): a query and a key of the same content, i positions apart, agree by this much "
	                "in pair k. theta_k = base^(-2k/d_head):";
	for (int k = 0; k < np; k++) {
		double th = gb_rope_inv_freq(c, pairs[k]);
		for (int i = 0; i < n; i++)
			y[i] = (float)cos(xs[i] * th);
		char lab[80];
		snprintf(lab, sizeof lab, "pair %d, period %.3g", pairs[k], 2 * M_PI / th);
		gb_fig_add_series(f, lab, y, n);
		size_t L = strlen(cap);
		snprintf(cap + L, sizeof cap - L, "%s pair %d turns once in %.0f positions", k ? ";" : "", pairs[k], 2 * M_PI / th);
	}
	free(xs);
	free(y);
	view_titlef(f, "RoPE: each pair of features turns at its own speed along the positions");
	gb_fig_set_caption(f, cap);
	gb_fig_set_axes(f, "cos(angle)", "offset i between query and key (positions)");
	view_subtitle(s, f, c->rope_pairs == GB_ROPE_ADJACENT ? "pairs (2k, 2k+1)" : "pairs (k, k + d_head/2)", 0);
	view_meta(s, f, NULL);
	return f;
}

gb_figure *view_alibi_slopes(session *s)
{
	if (need_model(s))
		return NULL;
	const gb_config *c = &s->model.cfg;
	if (c->pos != GB_POS_ALIBI) {
		errorf("this model has %s, not ALiBi: it has no slopes", pos_name(c->pos));
		return NULL;
	}
	int H = c->n_head;
	float *v = malloc(sizeof(float) * (size_t)H);
	char **lab = calloc((size_t)H, sizeof *lab);
	for (int h = 0; h < H; h++) {
		v[h] = (float)gb_alibi_slope(h, H);
		char w[24];
		snprintf(w, sizeof w, "head %d", h + 1);
		lab[h] = malloc(48);
		words_label(w, lab[h], 48);
	}
	gb_figure *f = gb_fig_new(GB_FIG_BARS);
	gb_fig_set_values(f, v, 1, H);
	gb_fig_set_col_labels(f, (const char *const *)lab);
	f->precision = 4;
	for (int h = 0; h < H; h++)
		free(lab[h]);
	free(lab);
	free(v);
	view_titlef(f, "ALiBi slopes: how fast each head's bias falls with distance");
	char cap[160];
	snprintf(cap, sizeof cap, "m_h = 2^(-8h/H) for H = %d heads%s; a key d tokens back gets -m_h x d", H,
	         H & (H - 1) ? " (not a power of two: the paper's interpolation)" : "");
	gb_fig_set_caption(f, cap);
	view_subtitle(s, f, NULL, 0);
	view_meta(s, f, NULL);
	return f;
}

gb_figure *view_t5_buckets(session *s, int layer)
{
	if (need_model(s))
		return NULL;
	const gb_config *c = &s->model.cfg;
	if (c->pos != GB_POS_T5) {
		errorf("this model has %s, not T5's relative bias: it has no buckets", pos_name(c->pos));
		return NULL;
	}
	if (layer < 1 || layer > c->n_layer) {
		errorf("layer %d does not exist: layers are 1 to %d", layer, c->n_layer);
		return NULL;
	}
	int B = c->rel_buckets, H = c->n_head;
	/* a decoder's buckets count offsets back: bucket b covers offsets lo[b]..hi[b] */
	int *lo = malloc(sizeof(int) * (size_t)B), *hi = malloc(sizeof(int) * (size_t)B);
	for (int b = 0; b < B; b++)
		lo[b] = hi[b] = -1;
	int top = c->rel_max_dist * 2 > 4096 ? 4096 : c->rel_max_dist * 2;
	for (int d = 0; d <= top; d++) {
		int b = gb_t5_bucket(-d, 0, B, c->rel_max_dist);
		if (lo[b] < 0)
			lo[b] = d;
		hi[b] = d;
	}
	char **lab = calloc((size_t)B, sizeof *lab);
	float *v = malloc(sizeof(float) * (size_t)H * B);
	const float *rb = s->model.dec.layers[layer - 1].attn.rel_bias;
	for (int b = 0; b < B; b++) {
		lab[b] = malloc(32);
		if (lo[b] < 0)
			snprintf(lab[b], 32, "unused");
		else if (b == B - 1 || hi[b] == top)
			snprintf(lab[b], 32, "%d+", lo[b]);
		else if (lo[b] == hi[b])
			snprintf(lab[b], 32, "%d", lo[b]);
		else
			snprintf(lab[b], 32, "%d-%d", lo[b], hi[b]);
		for (int h = 0; h < H; h++)
			v[h * B + b] = rb[b * H + h];
	}
	gb_figure *f = view_heat(s, v, H, B, NULL, NULL, "head", "bucket: the offsets it covers (tokens back)");
	if (f) {
		gb_fig_set_col_labels(f, (const char *const *)lab);
		f->row_index0 = 1;
		f->col_index0 = 0;
		f->numbers = B <= 32 && H <= 8;
		fit_range(f, GB_CMAP_COOLWARM);
		view_titlef(f, "T5 relative bias of layer %d: one learned number per head and offset bucket", layer);
		char cap[200];
		snprintf(cap, sizeof cap, "%d buckets: offsets 0-%d one each, then log-spaced up to %d; every offset beyond "
		         "shares the last (a decoder's later keys are masked)", B, B / 2 - 1, c->rel_max_dist);
		gb_fig_set_caption(f, cap);
		char sel[32];
		snprintf(sel, sizeof sel, "layer %d", layer);
		view_subtitle(s, f, sel, 0);
		view_meta(s, f, NULL);
	}
	for (int b = 0; b < B; b++)
		free(lab[b]);
	free(lab);
	free(v);
	free(lo);
	free(hi);
	return f;
}
