/* views.c — from trace tensors to figures. The formulas in captions follow the conventions
 * of ../shared/DESIGN.md (scores / sqrt(d_head), causal j <= i, population variance). */
#include "app/views.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/view_common.h"
#include "model/tokenizer/tokenizer.h"
#include "viz/colormap.h"

/* The prefix of the stack whose self-attention views refer to: the decoder's (or the only). */
static const char *main_stack(session *s) { return s->model.cfg.encdec ? "dec." : ""; }

char **token_labels(session *s, const char *stack, int *n)
{
	const gb_trace *tr = &s->trace;
	const int *ids = tr->ids;
	int count = tr->n_ids;
	if (!strcmp(stack, "dec.")) {
		ids = tr->tgt;
		count = tr->n_tgt;
	}
	char **out = calloc((size_t)(count ? count : 1), sizeof *out);
	for (int i = 0; i < count; i++) {
		size_t len = 0;
		const unsigned char *b = gb_model_piece(&s->model, ids[i], &len);
		if (b) {
			out[i] = malloc(len + 1);
			memcpy(out[i], b, len);
			out[i][len] = 0;
			/* A NUL inside a token would cut the label: show it as the byte it is. */
			for (size_t j = 0; j < len; j++)
				if (!out[i][j])
					out[i][j] = 1;
		} else {
			out[i] = malloc(16);
			snprintf(out[i], 16, "#%d", ids[i]);
		}
	}
	*n = count;
	return out;
}

void free_labels(char **labels, int n)
{
	for (int i = 0; i < n; i++)
		free(labels[i]);
	free(labels);
}


static const char *attn_caption(const char *kind, const gb_config *c)
{
	if (c->attn_kind == GB_ATTN_LINEAR) {
		if (!strcmp(kind, "scores"))
			return "scores(i, j) = phi(q_i) . phi(k_j), phi(x) = elu(x) + 1 (linear attention)";
		if (!strcmp(kind, "masked"))
			return "phi(q_i) . phi(k_j);  -inf where masked (j > i)";
		return "weights(i, j) = phi(q_i).phi(k_j) / sum_j' phi(q_i).phi(k_j') (no softmax);  each row sums to 1";
	}
	if (!strcmp(kind, "scores"))
		return "scores(i, j) = q_i . k_j (raw, before scaling)";
	if (!strcmp(kind, "masked"))
		return c->pos == GB_POS_T5 ? "q_i . k_j / sqrt(d_head) + b_h[bucket(j - i)] (T5);  -inf where masked (j > i)"
		     : c->pos == GB_POS_ALIBI ? "q_i . k_j / sqrt(d_head) + m_h (j - i);  -inf where masked (j > i)"
		                              : "q_i . k_j / sqrt(d_head);  -inf where masked (j > i)";
	return "weights(i, j) = softmax_j(q_i . k_j / sqrt(d_head) + mask);  each row sums to 1";
}

/* The weights the causal mask hid are 0, and a 0 there looks like a weight the model chose
 * to make small: mark them masked (grey, "weight 0") where the masked scores hold -inf. */
static void mask_weights(session *s, gb_figure *f, const char *stack, int layer, int head)
{
	char name[64];
	snprintf(name, sizeof name, "%sL%d.attn.masked", stack, layer);
	gb_ttensor m;
	if (gb_trace_slice(&s->trace, name, head - 1, &m) || !f->values || m.shape[0] != f->rows || m.shape[1] != f->cols)
		return;
	const float *src = m.data;
	int n = 0;
	for (size_t i = 0; i < (size_t)f->rows * f->cols; i++)
		if (isinf(src[i]) && src[i] < 0) {
			f->values[i] = -INFINITY;
			n++;
		}
	f->masked = f->mask_zero = n > 0;
}

static gb_figure *attention_of(session *s, const char *stack, const char *block, const char *kind, int layer,
                               int head, const char *row_stack, const char *col_stack)
{
	/* this head alone: the first view of a head of a long input computes no other head */
	gb_ttensor hd, *t = &hd;
	if (view_trace_slice(s, head - 1, &hd, "%sL%d.%s.%s", stack, layer, block, kind))
		return NULL;
	int Tq = t->shape[0], Tk = t->shape[1];
	gb_figure *f = view_heat(s, t->data, Tq, Tk, row_stack, col_stack, "query", "key");
	if (!strcmp(kind, "weights")) {
		f->range = GB_RANGE_FIXED;
		f->vmin = 0;
		f->vmax = 1;
	} else {
		f->cmap = GB_CMAP_COOLWARM;
		f->range = GB_RANGE_SYMMETRIC;
	}
	f->masked = !strcmp(kind, "masked"); /* its -inf are the mask's, not bad numbers */
	if (!strcmp(kind, "weights") && !strcmp(block, "attn"))
		mask_weights(s, f, stack, layer, head);
	f->numbers = Tq <= 8 && Tk <= 8;
	view_titlef(f, "%s %d, head %d: %s%s", !strcmp(block, "cross") ? "Cross-attention, layer" : "Layer", layer, head,
	            !strcmp(kind, "weights") ? "attention weights" : !strcmp(kind, "scores") ? "raw scores" : "scaled and masked scores",
	            stack[0] == 'e' ? " (encoder)" : stack[0] == 'd' && !strcmp(block, "attn") ? " (decoder)" : "");
	/* cross-attention has no mask: every decoder position reads every encoder position */
	gb_fig_set_caption(f, !strcmp(block, "cross") && !strcmp(kind, "weights")
	                          ? "weights(i, j) = softmax_j(q_i . k_j / sqrt(d_head));  queries: decoder, keys and values: encoder (no mask)"
	                      : stack[0] == 'e' && !strcmp(kind, "weights")
	                          ? "weights(i, j) = softmax_j(q_i . k_j / sqrt(d_head));  no mask: every token sees every token"
	                      : stack[0] == 'e' && !strcmp(kind, "masked")
	                          ? "q_i . k_j / sqrt(d_head);  no mask in the encoder"
	                          : attn_caption(kind, &s->model.cfg));
	view_provenance(s, f, t->name, NULL, 0);
	char buf[16];
	snprintf(buf, sizeof buf, "%d", layer);
	gb_fig_add_meta(f, "Layer", buf);
	snprintf(buf, sizeof buf, "%d", head);
	gb_fig_add_meta(f, "Head", buf);
	return f;
}

gb_figure *view_attention_named(session *s, const char *stack, const char *block, const char *kind, int layer, int head)
{
	if (need_run(s) || check_head(s, head))
		return NULL;
	return attention_of(s, stack, block, kind, layer, head, stack, !strcmp(block, "cross") ? "enc." : stack);
}

gb_figure *view_attention(session *s, const char *kind, int layer, int head)
{
	if (need_run(s) || check_layer(s, layer, s->model.cfg.n_layer) || check_head(s, head))
		return NULL;
	const char *p = main_stack(s);
	return attention_of(s, p, "attn", kind, layer, head, p, p);
}

gb_figure *view_cross(session *s, int layer, int head)
{
	if (need_run(s))
		return NULL;
	if (!s->model.cfg.encdec) {
		errorf("cross-attention exists only in encoder-decoder models (this one is decoder-only)");
		return NULL;
	}
	if (check_layer(s, layer, s->model.cfg.n_layer) || check_head(s, head))
		return NULL;
	return attention_of(s, "dec.", "cross", "weights", layer, head, "dec.", "enc.");
}

/* Every head of a layer is drawn. On a long input's lazy trace each head alone (its q, k, v
 * columns, scores, weights) costs less than the attention sub-layer once: 12 heads of a
 * 1024-token GPT-2-small layer took 193 ms of CPU one by one, the sub-layer 240 ms (bench long
 * redraw; it also projects the merged heads). With shared key/value heads, each query head
 * alone would project its key/value head again (4 times with 12 heads on 3), so then the
 * sub-layer is computed once for all. A failure leaves the heads to be computed one by one. */
static void whole_attention(session *s, const char *stack, int layer)
{
	char name[64];
	snprintf(name, sizeof name, "%sL%d.attn.weights", stack, layer);
	const gb_ttensor *t = gb_trace_find(&s->trace, name);
	if (t && !t->data && s->model.cfg.n_kv_head < s->model.cfg.n_head)
		gb_trace_get(&s->trace, name);
}

gb_figure *view_heads(session *s, int layer)
{
	if (need_run(s) || check_layer(s, layer, s->model.cfg.n_layer))
		return NULL;
	int H = s->model.cfg.n_head, K = s->model.cfg.n_kv_head, share = K < H && H / K <= 16;
	gb_figure *g = gb_fig_new(GB_FIG_GRID);
	g->grid_cols = H <= 4 ? H : (H + 1) / 2;
	if (share && H > 4) /* issue 19: the heads that share a key/value head side by side, a row
	                      * each; four heads or fewer stay one row (square panels on a slide) */
		g->grid_cols = H / K;
	g->range = GB_RANGE_FIXED;
	g->vmin = 0;
	g->vmax = 1;
	whole_attention(s, main_stack(s), layer);
	for (int h = 1; h <= H; h++) {
		gb_figure *f = view_attention(s, "weights", layer, h);
		if (!f) {
			gb_fig_free(g);
			return NULL;
		}
		if (share)
			view_titlef(f, "head %d, key/value head %d", h, (h - 1) / (H / K) + 1);
		else
			view_titlef(f, "head %d", h);
		gb_fig_set_subtitle(f, NULL); /* the grid's says it once */
		g->mask_zero |= f->mask_zero;
		gb_fig_add_panel(g, f);
	}
	view_titlef(g, "Layer %d: attention weights of every head", layer);
	if (share) {
		char cap[400];
		if (K == 1)
			snprintf(cap, sizeof cap, "%s; all %d heads share one key and value head (multi-query attention)",
			         attn_caption("weights", &s->model.cfg), H);
		else
			snprintf(cap, sizeof cap, "%s; %s %d heads sharing one key and value head (grouped-query attention)",
			         attn_caption("weights", &s->model.cfg), H > 4 ? "each row: a group of" : "groups of", H / K);
		gb_fig_set_caption(g, cap);
	} else
		gb_fig_set_caption(g, attn_caption("weights", &s->model.cfg));
	view_provenance(s, g, NULL, NULL, 0);
	return g;
}

/* A real model's every head (GPT-2 small: 144) as one table: how far back each looks, on
 * average over the text's queries. 144 maps of 1024 x 1024 tokens would be slivers on a slide
 * (and seconds to compute again for a long run); the reach is recorded with every run. */
static gb_figure *model_summary(session *s, const char *p, int L, int H)
{
	float *v = malloc(sizeof(float) * (size_t)L * H);
	char **rl = malloc(sizeof(char *) * (size_t)L), **cl = malloc(sizeof(char *) * (size_t)H);
	for (int l = 0; v && rl && cl && l < L; l++) {
		const gb_ttensor *t = view_trace(s, "%sL%d.attn.reach", p, l + 1);
		if (!t) {
			free(v), free(rl), free(cl);
			return NULL;
		}
		int Tq = t->shape[1];
		for (int h = 0; h < H; h++) {
			double m = 0;
			for (int i = 0; i < Tq; i++)
				m += t->data[(size_t)h * Tq + i];
			v[l * H + h] = (float)(m / Tq);
		}
	}
	for (int l = 0; rl && l < L; l++) {
		rl[l] = malloc(16);
		snprintf(rl[l], 16, "L%d", (l + 1) % 1000);
	}
	for (int h = 0; cl && h < H; h++) {
		cl[h] = malloc(16);
		snprintf(cl[h], 16, "H%d", (h + 1) % 1000);
	}
	gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
	gb_fig_set_values(f, v, L, H);
	gb_fig_set_row_labels(f, (const char *const *)rl);
	gb_fig_set_col_labels(f, (const char *const *)cl);
	free_labels(rl, L);
	free_labels(cl, H);
	free(v);
	gb_fig_set_axes(f, "layer", "head");
	f->numbers = 1;
	f->precision = 1;
	fit_range(f, GB_CMAP_MAGMA);
	view_titlef(f, "Every layer and head: how far back each head looks, in tokens (mean over the text)");
	gb_fig_set_caption(f, "reach = mean over queries i of sum_j w_ij (i - j):  0 itself, 1 the token before, large: "
	                      "the start of the text;  attn L H draws one head");
	view_provenance(s, f, NULL, NULL, 0);
	return f;
}

gb_figure *view_model(session *s)
{
	if (need_run(s))
		return NULL;
	int L = s->model.cfg.n_layer, H = s->model.cfg.n_head;
	if (L * H > 32)
		return model_summary(s, main_stack(s), L, H);
	gb_figure *g = gb_fig_new(GB_FIG_GRID);
	g->grid_cols = H;
	g->grid_wrap = 1; /* on a wide page, layers 1-2 beside 3-4: maps twice the size */
	g->range = GB_RANGE_FIXED;
	g->vmin = 0;
	g->vmax = 1;
	for (int l = 1; l <= L; l++)
		for (int h = 1; h <= H; h++) {
			if (h == 1)
				whole_attention(s, main_stack(s), l);
			gb_figure *f = view_attention(s, "weights", l, h);
			if (!f) {
				gb_fig_free(g);
				return NULL;
			}
			view_titlef(f, "L%d H%d", l, h);
			gb_fig_set_subtitle(f, NULL);
			g->mask_zero |= f->mask_zero;
			f->numbers = 0;
			gb_fig_add_panel(g, f);
		}
	view_titlef(g, "Every head: attention weights (L1 H2 = layer 1, head 2)");
	gb_fig_set_caption(g, "the model view: each panel is query x key, rows sum to 1");
	view_provenance(s, g, NULL, NULL, 0);
	return g;
}

gb_figure *view_qkv(session *s, int layer, int head, const int *units)
{
	if (need_run(s) || check_layer(s, layer, s->model.cfg.n_layer) || check_head(s, head))
		return NULL;
	const gb_config *c = &s->model.cfg;
	const char *p = main_stack(s), *names[3] = { "q", "k", "v" };
	static const char *const words[3] = { "queries", "keys", "values" };
	gb_figure *g = gb_fig_new(GB_FIG_GRID);
	g->grid_cols = 3;
	colwin w = { 0 };
	for (int i = 0; i < 3; i++) {
		/* this head's (or its key/value head's) columns alone: a long input computes no other head */
		int h = i == 0 ? head - 1 : (head - 1) / (c->n_head / c->n_kv_head);
		gb_ttensor hd, *t = &hd;
		if (view_trace_slice(s, h, &hd, "%sL%d.attn.%s", p, layer, names[i])) {
			gb_fig_free(g);
			return NULL;
		}
		int T = t->shape[0], E = t->shape[1];
		gb_figure *f = view_wide_heat(s, t->data, T, E, units, "features", p, "token", "feature", &w);
		if (!f) {
			gb_fig_free(g);
			return NULL;
		}
		view_titlef(f, "%s: %s (head %d%s)", names[i], words[i], i ? h + 1 : head,
		            i && c->n_kv_head != c->n_head ? ", shared" : "");
		gb_fig_add_panel(g, f);
	}
	/* one colour scale for the three, and each panel drawn in it (a terminal draws a panel in
	 * the panel's own map: a sequential one under a diverging bar read wrong) */
	fit_range(g, GB_CMAP_VIRIDIS);
	g->panel_labels = 1; /* tokens and feature numbers on each of the three */
	view_titlef(g, "Layer %d, head %d: queries, keys and values", layer, head);
	gb_fig_set_caption(g, c->pos == GB_POS_ROPE ? "q = x Wq, k = x Wk (then rotated by RoPE), v = x Wv"
	                                            : "q = x Wq, k = x Wk, v = x Wv, split into heads");
	gb_fig_set_axes(g, "token", "feature");
	view_provenance(s, g, NULL, &w, 0);
	return g;
}

gb_figure *view_ln(session *s, int layer, int which, const int *units)
{
	if (need_run(s) || check_layer(s, layer, s->model.cfg.n_layer))
		return NULL;
	const char *p = main_stack(s);
	const gb_ttensor *out = view_trace(s, "%sL%d.ln%d.out", p, layer, which);
	if (!out)
		return NULL;
	int rms = s->model.cfg.norm == GB_NORM_RMS;
	const gb_ttensor *a = rms ? view_trace(s, "%sL%d.ln%d.rms", p, layer, which) : view_trace(s, "%sL%d.ln%d.mean", p, layer, which);
	const gb_ttensor *b = rms ? NULL : view_trace(s, "%sL%d.ln%d.var", p, layer, which);
	if (!a || (!rms && !b))
		return NULL;
	colwin w;
	int T = out->shape[0], D = out->shape[1];
	/* the side columns take a slide's width from the cells: by default 48 features, so that
	 * each column still gets its number at 18 px (64 would be ticks) */
	int narrow[2] = { 1, D < 48 ? D : 48 };
	if (!units || (units[0] == 0 && units[1] == 0))
		units = narrow;
	gb_figure *f = view_wide_heat(s, out->data, T, D, units, "features", p, "token", "feature", &w);
	if (!f)
		return NULL;
	/* the statistics of each token's input, beside its row: what the norm divided out */
	if (rms)
		gb_fig_add_side(f, "input rms", a->data);
	else { /* the input's: what the norm divides out */
		gb_fig_add_side(f, "input mean", a->data);
		gb_fig_add_side(f, "input var", b->data);
	}
	f->side_precision = 3;
	f->side_decimals = 4;
	fit_range(f, GB_CMAP_VIRIDIS);
	char words[160];
	tensor_title(s, out->name, 0, words, sizeof words);
	/* "Layer norm before attention, layer 1: its output" -> "..., layer 1: each token's output" */
	char *its = strstr(words, ": its output");
	if (its)
		snprintf(its, sizeof words - (size_t)(its - words), ": each token's output");
	char part[96];
	view_titlef(f, "%s%s", words, view_shown(&w, part, sizeof part));
	gb_fig_set_caption(f, rms ? "y = g * x / sqrt(mean(x^2) + eps);  beside each row: the rms of its input"
	                          : s->model.cfg.textbook_ln || s->textbook
	                                ? "y = g * (x - mean) / (sigma + eps) + b   (textbook form);  beside each row: its input's mean and variance"
	                                : "y = g * (x - mean) / sqrt(var + eps) + b;  beside each row: its input's mean and variance");
	view_provenance(s, f, out->name, &w, 0);
	return f;
}

gb_figure *view_ffn(session *s, int layer, const int *units)
{
	if (need_run(s) || check_layer(s, layer, s->model.cfg.n_layer))
		return NULL;
	const char *p = main_stack(s);
	const gb_ttensor *t = view_trace(s, "%sL%d.ffn.hidden", p, layer);
	if (!t)
		return NULL;
	colwin w;
	gb_figure *f = view_wide_heat(s, t->data, t->shape[0], t->shape[1], units, "units", p, "token", "hidden unit", &w);
	if (!f)
		return NULL;
	fit_range(f, GB_CMAP_VIRIDIS);
	char part[96];
	view_titlef(f, "Feed-forward hidden units after the activation, layer %d%s", layer, view_shown(&w, part, sizeof part));
	const gb_config *c = &s->model.cfg;
	gb_fig_set_caption(f, c->ffn == GB_FFN_GATED ? "h = silu(x Wg) * (x Wu);  out = h Wd"
	                      : c->act == GB_ACT_RELU ? "h = relu(x W1 + b1);  out = h W2 + b2"
	                      : c->act == GB_ACT_SILU ? "h = silu(x W1 + b1);  out = h W2 + b2"
	                                              : "h = gelu(x W1 + b1);  out = h W2 + b2");
	view_provenance(s, f, t->name, &w, 0);
	return f;
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

/* A few lengths far above the rest (the first token's stream, a "sink", reaches ~100 when the
 * others stay under 30) would leave every other cell one dark colour: the colour scale then
 * ends at the largest of the rest, the values above it are drawn in its top colour, marked
 * with a triangle beside their number, and the subtitle says so. Never clipped in silence. */
static void resid_clip(gb_figure *f)
{
	int n = f->rows * f->cols, n_out = 0;
	float *v = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
	if (!v || n < 8) {
		free(v);
		return;
	}
	int m = 0;
	for (int i = 0; i < n; i++)
		if (isfinite(f->values[i]))
			v[m++] = f->values[i];
	qsort(v, (size_t)m, sizeof *v, cmp_float);
	/* an outlier: more than twice the 95th percentile; the scale keeps everything below */
	float q = m ? v[(int)(0.95 * (m - 1))] : 0, top = 0, lo = m ? v[0] : 0, worst = 0;
	for (int i = 0; i < m; i++) {
		if (v[i] > 2 * q && q > 0)
			n_out++, worst = v[i];
		else
			top = v[i];
	}
	free(v);
	if (!n_out || !(top > lo))
		return;
	f->range = GB_RANGE_FIXED;
	f->vmin = lo;
	f->vmax = top;
	char **ct = f->numbers ? calloc((size_t)n, sizeof *ct) : NULL;
	for (int i = 0; ct && i < n; i++) {
		char b[48];
		snprintf(b, sizeof b, "%.*f%s", f->precision, f->values[i], f->values[i] > top ? "\xE2\x96\xB2" : "");
		ct[i] = strdup(b);
	}
	if (ct)
		gb_fig_set_cell_text(f, (const char *const *)ct);
	free_labels(ct, ct ? n : 0);
	char sub[600];
	snprintf(sub, sizeof sub, "%s%scolour scale clipped at %.1f: %d value%s above it (up to %.1f)%s drawn in its top colour",
	         f->subtitle ? f->subtitle : "", f->subtitle ? " \xC2\xB7 " : "", top, n_out, n_out == 1 ? "" : "s", worst,
	         ct ? ", marked \xE2\x96\xB2," : "");
	gb_fig_set_subtitle(f, sub);
	/* and first in the caption, which a narrow terminal shows whole */
	snprintf(sub, sizeof sub, "%s above %.1f, the colour scale's top;  %s", ct ? "\xE2\x96\xB2:" : "values", top,
	         f->caption ? f->caption : "");
	gb_fig_set_caption(f, sub);
}

gb_figure *view_resid(session *s)
{
	if (need_run(s))
		return NULL;
	const char *p = main_stack(s);
	int L = s->model.cfg.n_layer, cross = s->model.cfg.encdec;
	int stages = 1 + L * (cross ? 3 : 2);
	const gb_ttensor *e = view_trace(s, "%sembed.sum", p);
	if (!e)
		return NULL;
	int T = e->shape[0], D = e->shape[1];
	float *v = malloc(sizeof(float) * (size_t)T * stages);
	char **cols = malloc(sizeof(char *) * (size_t)stages);
	int c = 0;
	for (int st = 0; st < stages; st++) {
		const gb_ttensor *t;
		char name[64];
		if (st == 0)
			snprintf(name, sizeof name, "%sembed.sum", p);
		else {
			int l = (st - 1) / (cross ? 3 : 2) + 1, k = (st - 1) % (cross ? 3 : 2);
			snprintf(name, sizeof name, "%sL%d.resid.%s", p, l, k == 0 ? "mid" : cross && k == 1 ? "cross" : "post");
		}
		t = gb_trace_get(&s->trace, name);
		if (!t) {
			errorf("this model's trace has no %s ('trace' lists what it has)", name);
			free_labels(cols, c);
			free(v);
			return NULL;
		}
		/* short words a column can carry: "embed", then "attn 1", "ffn 1" (and "cross 1") */
		char lab[32];
		if (st == 0)
			snprintf(lab, sizeof lab, "embed");
		else {
			int l = (st - 1) / (cross ? 3 : 2) + 1, k = (st - 1) % (cross ? 3 : 2);
			snprintf(lab, sizeof lab, "%s %d", k == 0 ? "attn" : cross && k == 1 ? "cross" : "ffn", l);
		}
		char w[48];
		words_label(lab, w, sizeof w);
		cols[c] = strdup(w);
		for (int i = 0; i < T; i++) {
			double sum = 0;
			for (int d = 0; d < D; d++)
				sum += (double)t->data[i * D + d] * t->data[i * D + d];
			v[i * stages + c] = (float)sqrt(sum);
		}
		c++;
	}
	gb_figure *f = view_heat(s, v, T, stages, p, NULL, "token", "stage");
	gb_fig_set_col_labels(f, (const char *const *)cols);
	free_labels(cols, stages);
	free(v);
	fit_range(f, GB_CMAP_MAGMA);
	/* a few large lengths set the colour scale and leave the rest alike: the numbers say it */
	f->numbers = T <= 32;
	f->precision = 1;
	view_titlef(f, "The residual stream: its length |x| per token after each sub-layer");
	gb_fig_set_caption(f, s->model.cfg.prenorm ? "after each sub-layer: x <- x + sublayer(norm(x));  the figure shows |x|"
	                                           : "after each sub-layer: x <- norm(x + sublayer(x));  the figure shows |x|");
	view_provenance(s, f, NULL, NULL, 0);
	resid_clip(f);
	return f;
}

gb_figure *view_next(session *s, int k, double temp)
{
	if (need_run(s))
		return NULL;
	/* the last row only: a long run keeps it, and computing every row's logits (T x vocab)
	 * for one row's chart would take seconds and hundreds of MB */
	const gb_ttensor *lg = NULL;
	for (int i = 0; i < s->trace.n; i++)
		if (!strcmp(s->trace.t[i].name, "logits"))
			lg = &s->trace.t[i];
	const float *row = gb_trace_last_row(&s->trace, "logits");
	if (!lg || !row) {
		errorf("this run has no logits ('trace' lists what it has)");
		return NULL;
	}
	int V = lg->shape[1];
	if (k < 1)
		k = 1;
	if (k > V)
		k = V;
	double mx = -INFINITY, z = 0;
	for (int v = 0; v < V; v++)
		mx = fmax(mx, row[v] / temp);
	double *p = malloc(sizeof(double) * V);
	for (int v = 0; v < V; v++)
		z += p[v] = exp(row[v] / temp - mx);
	int *idx = malloc(sizeof(int) * k);
	float *val = malloc(sizeof(float) * k);
	char **labels = malloc(sizeof(char *) * k);
	/* k passes over the vocabulary, a flag per token taken: `next 1000` on GPT-2's 50,257
	 * tokens once compared each token with every one taken before (10^10 steps; the fuzzer
	 * found it) */
	char *taken = calloc((size_t)V, 1);
	for (int i = 0; i < k; i++) {
		int best = -1;
		for (int v = 0; v < V; v++)
			if (!taken[v] && (best < 0 || p[v] > p[best]))
				best = v;
		taken[best] = 1;
		idx[i] = best;
		val[i] = (float)(p[best] / z);
		size_t len = 0;
		const unsigned char *b = gb_model_piece(&s->model, best, &len);
		labels[i] = malloc(len + 16);
		if (b) {
			memcpy(labels[i], b, len);
			labels[i][len] = 0;
		} else
			snprintf(labels[i], len + 16, "#%d", best);
	}
	gb_figure *f = gb_fig_new(GB_FIG_BARS);
	gb_fig_set_values(f, val, 1, k);
	gb_fig_set_col_labels(f, (const char *const *)labels);
	f->range = GB_RANGE_FIXED;
	f->vmin = 0;
	f->vmax = 1;
	f->precision = 3;
	f->x_title = strdup("probability"); /* what the bars' length is */
	/* the words the next token follows, in the title, whole when they fit, else their start
	 * and end (two texts that differ only early, as lesson 4's swapped names, kept apart), and
	 * what else made the run differ: two charts side by side must not share a title */
	char end[300], how[96] = "";
	view_text_whole(s, 60, end, sizeof end);
	if (s->textbook)
		snprintf(how, sizeof how, ", textbook layer norm");
	if (view_engine(s))
		snprintf(how + strlen(how), sizeof how - strlen(how), ", %s engine", view_engine(s));
	if (end[0])
		view_titlef(f, "After %s: the %d most probable next tokens (temperature %g%s)", end, k, temp, how);
	else
		view_titlef(f, "The next token: the %d most probable (temperature %g%s)", k, temp, how);
	char cap[128];
	snprintf(cap, sizeof cap, "p(v) = softmax(logits / T)_v with T = %g, at the last position", temp);
	gb_fig_set_caption(f, cap);
	/* the prompt's end is what the next token follows */
	view_provenance(s, f, "logits", NULL, 1);
	snprintf(cap, sizeof cap, "%g", temp);
	gb_fig_add_meta(f, "Temperature", cap);
	free_labels(labels, k);
	free(idx);
	free(taken);
	free(val);
	free(p);
	return f;
}

static const char *stage_names[ST_N] = { "embed", "pe", "qkv", "scores", "attn", "heads", "ln", "ffn", "resid",
                                         "next", "cross" };

const char *stage_name(int stage) { return stage >= 0 && stage < ST_N ? stage_names[stage] : "?"; }

gb_figure *view_fix_range(gb_figure *f, double lo, double hi)
{
	if (!f)
		return NULL;
	f->range = GB_RANGE_FIXED;
	f->vmin = (float)lo;
	f->vmax = (float)hi;
	for (int i = 0; i < f->n_panels; i++)
		if (f->panels[i]) {
			f->panels[i]->range = GB_RANGE_FIXED;
			f->panels[i]->vmin = (float)lo;
			f->panels[i]->vmax = (float)hi;
		}
	/* a scale chosen to compare with another figure says so, where the slide shows it */
	if (f->subtitle && strstr(f->subtitle, " (fixed)"))
		return f;
	char buf[512];
	snprintf(buf, sizeof buf, "%s%s%s %g to %g (fixed)", f->subtitle ? f->subtitle : "", f->subtitle ? " \xC2\xB7 " : "",
	         f->kind == GB_FIG_BARS ? "axis" : "colour scale", lo, hi);
	gb_fig_set_subtitle(f, buf);
	return f;
}

gb_figure *view_stage_range(session *s, gb_figure *f)
{
	if (!f || !s->range_set || s->range_stage != s->stage)
		return f;
	return view_fix_range(f, s->range_lo, s->range_hi);
}

static gb_figure *stage_figure(session *s);

gb_figure *view_stage(session *s)
{
	gb_figure *f = view_stage_range(s, stage_figure(s));
	if (f)
		s->on_show = 1;
	return f;
}

static gb_figure *stage_figure(session *s)
{
	int l = s->layer, h = s->head;
	/* the window of columns the last --units chose, while the view stays on its stage */
	const int *u = s->units_stage == s->stage || s->units_stage < 0 ? s->units : NULL;
	switch (s->stage) {
	case ST_EMBED: return view_embed(s, u);
	case ST_PE: return view_pe(s, NULL, 0, u);
	case ST_QKV: return view_qkv(s, l, h, u);
	case ST_SCORES: return view_attention(s, "masked", l, h);
	case ST_ATTN: return view_attention(s, "weights", l, h);
	case ST_HEADS: return view_heads(s, l);
	case ST_LN: return view_ln(s, l, 1, u);
	case ST_FFN: return view_ffn(s, l, u);
	case ST_RESID: return view_resid(s);
	case ST_NEXT: return view_next(s, 10, 1);
	case ST_CROSS: return view_cross(s, l, h);
	}
	return NULL;
}

/* ---- part 4 (the window): attention as lines, the next-token view with its temperature ---- */

/* One head's attention weights as BertViz's head view draws them: the queries on the left, the
 * keys on the right, a line for each weight. Cross-attention (cross = 1) joins the decoder's
 * tokens to the encoder's. */
gb_figure *view_attn_lines(session *s, int layer, int head, int cross)
{
	gb_figure *h = cross ? view_cross(s, layer, head) : view_attention(s, "weights", layer, head);
	if (!h)
		return NULL;
	h->kind = GB_FIG_ATTNLINES;
	/* a masked key gets no line: its weight is 0 again, not a grey cell */
	for (size_t i = 0; h->mask_zero && i < (size_t)h->rows * h->cols; i++)
		if (isinf(h->values[i]))
			h->values[i] = 0;
	h->masked = h->mask_zero = 0;
	h->numbers = 0;
	h->row_index0 = h->col_index0 = 1;
	view_titlef(h, "%sLayer %d, head %d: who attends to whom", cross ? "Cross-attention, " : "", layer, head);
	gb_fig_set_caption(h, cross ? "a line from decoder token i to encoder token j for each weight: softmax_j(q_i . k_j / sqrt(d_head))"
	                            : "a line from query i to key j for each weight: softmax_j(q_i . k_j / sqrt(d_head) + mask)");
	return h;
}

/* The next-token view at temperature T, marked as such (meta "Temperature") so the window's
 * keys can change T and draw it again. Its title says T when T is not 1, or always with
 * always_t (the window, where T changes under the keys). */
gb_figure *view_next_temp(session *s, int k, double temp, int always_t)
{
	gb_figure *f = view_next(s, k, temp);
	char buf[320];
	if (!f)
		return NULL;
	snprintf(buf, sizeof buf, "%g", temp);
	gb_fig_add_meta(f, "Temperature", buf);
	/* (a title that already says T, "T = 0.5" or "temperature 0.5", is left as it is) */
	int says_t = f->title && (strstr(f->title, "T =") || strstr(f->title, "T="));
	for (const char *p = f->title; p && !says_t && (p = strstr(p, "temperature ")); p++)
		says_t = p[12] >= '0' && p[12] <= '9';
	if ((always_t || temp != 1) && f->title && !says_t) {
		const char *cut = strstr(f->title, " (temperature applied)");
		int len = cut ? (int)(cut - f->title) : (int)strlen(f->title);
		snprintf(buf, sizeof buf, "%.*s (temperature T = %g)", len, f->title, temp);
		gb_fig_set_title(f, buf);
	}
	return f;
}
