/* view_show.c — `show NAME`: any trace tensor as a figure. A 1-D tensor is a strip, a 2-D one
 * a heatmap, a 3-D one a grid of its slices (or one slice); tokens label the axes that are
 * tokens, vocabulary pieces the vocabulary's columns, and a wide tensor shows a window of its
 * columns (--units). The title says in words what the tensor is; its name stays in the
 * caption, for `dump` and `print`. */
#include "app/views.h"
#include "app/view_steps.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/view_common.h"
#include "model/tokenizer/tokenizer.h"

/* What a tensor's columns are, in words for "units 1-64 of 512". */
static const char *cols_word(int axis)
{
	switch (axis) {
	case GB_AX_FFN: return "units";
	case GB_AX_VOCAB: return "vocabulary entries";
	case GB_AX_KEY: return "keys";
	case GB_AX_TOKEN: return "tokens";
	case GB_AX_POSITION: return "positions";
	case GB_AX_EXPERT: return "experts";
	case GB_AX_CHOICE: return "choices";
	default: return "features";
	}
}

/* What a trace tensor is, as a formula for the figure's footer (its name without the stack's
 * prefix); NULL when there is no short one. */
static const char *formula_of(const char *name, const gb_config *c)
{
	static const struct { const char *suffix, *formula; } F[] = {
		{ "tokens", "each box is a token: its piece of the text (· is a space), its id in the vocabulary, and under it its bytes (UTF-8, hex); the two tints only tell neighbours apart" },
		{ "embed.tok", "x_i = E[id_i], the row of the embedding table for token i" },
		{ "embed.sum", "x_i = E[id_i] + P[i], the residual stream entering layer 1" },
		{ ".attn.q", "q_i = x_i W_Q (this head's columns)" },
		{ ".attn.k", "k_i = x_i W_K (this head's columns)" },
		{ ".attn.v", "v_i = x_i W_V (this head's columns)" },
		{ ".attn.head_out", "out_i = sum_j w_ij v_j, the head's weighted mix of values" },
		{ ".attn.merged", "the heads' outputs side by side: [out_1 | out_2 | ...]" },
		{ ".attn.out", "merged W_O: what attention adds to the residual stream" },
		{ ".cross.head_out", "out_i = sum_j w_ij v_j, values from the encoder" },
		{ ".resid.mid", "x + attention: the residual stream after the attention sub-layer" },
		{ ".ffn.up", "x W_1 + b_1, before the activation" },
		{ ".ffn.gate", "x W_gate, the gate before silu" },
		{ ".ffn.hidden", "the hidden units after the activation" },
		{ ".ffn.out", "hidden W_2 + b_2: what the feed-forward adds to the residual stream" },
		{ ".resid.post", "the residual stream leaving the layer" },
		{ ".ffn.router", "r = x W_r, the router's score of each expert" },
		{ ".ffn.router_probs", "p = softmax(r), the router's probability of each expert" },
		{ ".ffn.gates", "each expert's weight in the output (0 unless chosen)" },
		{ ".ffn.chosen", "the experts each token was sent to, best first (numbered from 0)" },
		{ ".ffn.expert_out", "each chosen expert's FFN output for the token" },
		{ ".attn.rel_bias", "b_h[bucket(j - i)]: T5's learned bias added to score (i, j)" },
		{ ".attn.q_feat", "phi(q) = elu(q) + 1, linear attention's query features" },
		{ ".attn.k_feat", "phi(k) = elu(k) + 1, linear attention's key features" },
		{ "logits", "logits = h W_U, a score per vocabulary token" },
		{ "probs", "p = softmax(logits)" },
	};
	size_t n = strlen(name);
	(void)c;
	for (size_t i = 0; i < sizeof F / sizeof *F; i++) {
		size_t k = strlen(F[i].suffix);
		if (n >= k && !strcmp(name + n - k, F[i].suffix) && (F[i].suffix[0] == '.' || n == k))
			return F[i].formula;
	}
	return NULL;
}

/* An axis's name as an axis title: "hidden unit" rather than the trace's "ffn". */
static const char *axis_word(int axis)
{
	switch (axis) {
	case GB_AX_FFN: return "hidden unit";
	case GB_AX_VOCAB: return "vocabulary entry";
	case GB_AX_KV_HEAD: return "key/value head";
	default: return gb_axis_name(axis);
	}
}

/* One (R, C) block of a tensor as a heatmap: token labels where its axes are tokens, the
 * window of columns when it is wide, the vocabulary's pieces over vocabulary columns. */
static gb_figure *tensor_heat(session *s, const float *v, int R, int C, int ax_r, int ax_c,
                              const char *row_stack, const char *col_stack, const int *units, colwin *w)
{
	gb_figure *f;
	if (col_stack && C <= WIDE_COLS && !units) { /* keys: every token, as attention is drawn */
		memset(w, 0, sizeof *w);
		f = view_heat(s, v, R, C, row_stack, col_stack, axis_word(ax_r), axis_word(ax_c));
	} else {
		f = view_wide_heat(s, v, R, C, units, cols_word(ax_c), row_stack, axis_word(ax_r), axis_word(ax_c), w);
		if (f && col_stack) {
			int n;
			char **l = token_labels(s, col_stack, &n);
			if (n == C)
				gb_fig_set_col_labels(f, (const char *const *)(l + w->a - 1));
			free_labels(l, n);
		}
	}
	if (f && ax_c == GB_AX_VOCAB && (s->model.tok || s->model.l2c_tok)) { /* column j is vocabulary entry a - 1 + j */
		int m = w->b - w->a + 1;
		char **l = malloc(sizeof(char *) * (size_t)m);
		for (int j = 0; j < m; j++) {
			size_t len = 0;
			const unsigned char *b = gb_model_piece(&s->model, w->a - 1 + j, &len);
			l[j] = malloc(len + 16);
			if (b) {
				memcpy(l[j], b, len);
				l[j][len] = 0;
				for (size_t k = 0; k < len; k++)
					if (!l[j][k])
						l[j][k] = 1;
			} else
				snprintf(l[j], len + 16, "#%d", w->a - 1 + j);
		}
		gb_fig_set_col_labels(f, (const char *const *)l);
		free_labels(l, m);
		if (w->sel[0]) /* columns count from 1, token ids from 0 */
			snprintf(w->sel + strlen(w->sel), sizeof w->sel - strlen(w->sel), " = ids %d-%d", w->a - 1, w->b - 1);
	}
	if (f && ax_r == GB_AX_POSITION)
		f->row_index0 = 1;
	return f;
}

gb_figure *view_tensor(session *s, const char *name, int index, const int *units)
{
	if (need_run(s))
		return NULL;
	const gb_ttensor *entry = gb_trace_find(&s->trace, name), *t = entry;
	if (!entry) {
		errorf("no trace tensor '%s': 'trace' lists the names", name);
		return NULL;
	}
	if (entry->ndim == 3 && (index < 0 || index > entry->shape[0])) {
		errorf("%s has %d %ss: choose 1 to %d (or 0 for all)", name, entry->shape[0], gb_axis_name(entry->axes[0]),
		       entry->shape[0]);
		return NULL;
	}
	/* one head of a 3-D tensor: that head alone (a long input's lazy trace computes no other) */
	gb_ttensor one;
	if (entry->ndim == 3 && index > 0)
		t = gb_trace_slice(&s->trace, name, index - 1, &one) ? NULL : &one;
	else
		t = gb_trace_get(&s->trace, name);
	if (!t) {
		errorf("could not compute %s (out of memory)", name);
		return NULL;
	}
	const char *stack = !strncmp(name, "enc.", 4) ? "enc." : !strncmp(name, "dec.", 4) ? "dec." : "";
	/* a head of an attention table is the attention view: its titles, its formula, its mask */
	int layer, used = 0;
	char block[8], kind[12];
	if (index > 0 && !units && sscanf(name + strlen(stack), "L%d.%7[a-z].%11[a-z]%n", &layer, block, kind, &used) == 3 &&
	    !name[strlen(stack) + used] && (!strcmp(block, "attn") || !strcmp(block, "cross")) &&
	    (!strcmp(kind, "weights") || !strcmp(kind, "masked") || !strcmp(kind, "scores")))
		return view_attention_named(s, stack, block, kind, layer, index);
	int tok_rows = t->ndim >= 2 && (t->axes[t->ndim - 2] == GB_AX_TOKEN || t->axes[t->ndim - 2] == GB_AX_QUERY);
	/* Cross-attention's keys and values come from the encoder: their rows are source tokens. */
	if (strstr(name, ".cross.k") || strstr(name, ".cross.v"))
		stack = "enc.";
	int tok_cols = t->ndim >= 1 && t->axes[t->ndim - 1] == GB_AX_KEY;
	const char *col_stack = tok_cols ? (strstr(name, ".cross.") ? "enc." : stack) : NULL;
	gb_figure *f;
	colwin w = { 0 };
	if (t->ndim == 1) {
		if (units) {
			errorf("%s is one row of %d numbers: --units picks columns of a wider table", name, t->shape[0]);
			return NULL;
		}
		f = gb_fig_new(GB_FIG_STRIP);
		gb_fig_set_values(f, t->data, 1, t->shape[0]);
		/* numbers with three significant digits when they are small (a layer norm's means are
		 * thousandths: "0.00" under every box says nothing) */
		double mx = 0;
		for (int i = 0; i < t->shape[0]; i++)
			if (isfinite(t->data[i]) && fabs(t->data[i]) > mx)
				mx = fabs(t->data[i]);
		if (mx > 0 && mx < 0.1) {
			int p = (int)ceil(-log10(mx)) + 2;
			f->precision = p > 6 ? 6 : p;
		}
		if (!strcmp(name + strlen(stack), "tokens")) {
			f->precision = 0; /* ids are whole numbers */
			f->alternate = 1; /* and names, not amounts: no colour scale */
			f->colorbar = 0;
			/* each piece's bytes under it: a character cut between tokens shows (issue 14) */
			int *ids = malloc(sizeof(int) * (size_t)t->shape[0]);
			for (int i = 0; ids && i < t->shape[0]; i++)
				ids[i] = (int)t->data[i];
			if (ids)
				view_set_token_bytes(s, f, ids, t->shape[0]);
			free(ids);
		}
		if (t->axes[0] == GB_AX_TOKEN) {
			int n;
			char **l = token_labels(s, stack, &n);
			if (n == t->shape[0])
				gb_fig_set_col_labels(f, (const char *const *)l);
			free_labels(l, n);
		}
	} else if (t->ndim == 2) {
		/* the heads' outputs side by side: every head by default (the point of the slide),
		 * a rule and "head k" at each head's d_head columns */
		int merged = strstr(name, ".attn.merged") != NULL && s->model.cfg.d_head > 0 &&
		             t->shape[1] == s->model.cfg.n_head * s->model.cfg.d_head;
		const int all[2] = { 1, 0 };
		f = tensor_heat(s, t->data, t->shape[0], t->shape[1], t->axes[0], t->axes[1], tok_rows ? stack : NULL,
		                col_stack, units ? units : merged && t->shape[1] <= 256 ? all : NULL, &w);
		if (f && merged)
			f->col_group = s->model.cfg.d_head;
	} else {
		int n0 = t->shape[0], R = t->shape[1], C = t->shape[2];
		{ /* index 0: every slice (one is a 2-D slice, above) */
			f = gb_fig_new(GB_FIG_GRID);
			f->grid_cols = n0 <= 4 ? n0 : 4;
			for (int i = 0; f && i < n0; i++) {
				gb_figure *pnl = tensor_heat(s, t->data + (size_t)i * R * C, R, C, t->axes[1], t->axes[2],
				                             tok_rows ? stack : NULL, col_stack, units, &w);
				if (!pnl) {
					gb_fig_free(f);
					return NULL;
				}
				view_titlef(pnl, "%s %d", axis_word(t->axes[0]), i + 1);
				gb_fig_add_panel(f, pnl);
			}
			if (f)
				gb_fig_set_axes(f, axis_word(t->axes[1]), axis_word(t->axes[2]));
		}
	}
	if (!f)
		return NULL;
	int is_weights = strstr(name, ".weights") != NULL || !strcmp(name, "probs");
	if (is_weights) {
		f->range = GB_RANGE_FIXED;
		f->vmin = 0;
		f->vmax = 1;
		for (int i = 0; i < f->n_panels; i++)
			f->panels[i]->range = GB_RANGE_FIXED, f->panels[i]->vmin = 0, f->panels[i]->vmax = 1;
	} else
		fit_range(f, GB_CMAP_VIRIDIS);
	/* the scores after the mask: their -inf are masked cells (on a grid, in every panel) */
	{
		size_t nl = strlen(name);
		f->masked = nl >= 7 && !strcmp(name + nl - 7, ".masked");
	}
	char words[192], cap[192], shape[96] = "";
	tensor_title(s, name, index, words, sizeof words);
	char part[96];
	view_titlef(f, "%s%s", words, view_shown(&w, part, sizeof part));
	/* the name stays on the figure, small: it is what `dump` and `print` take; a slice's sizes
	 * are the slice's ("head: 4" under one head's table read as the head shown) */
	t = entry;
	for (int d = index > 0 ? 1 : 0; d < t->ndim; d++)
		snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%d %s", *shape ? " x " : "", t->shape[d],
		         t->axes[d] == GB_AX_HEAD || t->axes[d] == GB_AX_KV_HEAD ? "heads" : t->axes[d] == GB_AX_QUERY ? "queries"
		                                                                                                   : cols_word(t->axes[d]));
	const char *fm = formula_of(name + strlen(stack), &s->model.cfg);
	if (index > 0)
		snprintf(cap, sizeof cap, "%s%s%s %d of %d: %s (%s)", fm ? fm : "", fm ? ";  " : "", gb_axis_name(t->axes[0]),
		         index, t->shape[0], name, shape);
	else
		snprintf(cap, sizeof cap, "%s%s%s (%s)", fm ? fm : "", fm ? ";  " : "", name, shape);
	gb_fig_set_caption(f, cap);
	view_provenance(s, f, name, &w, 0);
	return f;
}
