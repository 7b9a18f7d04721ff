/* view_input.c — the views of the model's input side: the token embeddings of the current text
 * and the positional encoding of each kind (learned, sinusoidal, RoPE's angles, ALiBi's and
 * T5's biases), split from views.c. */
#include "app/views.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/view_common.h"
#include "model/forward.h"
#include "viz/colormap.h"

gb_figure *view_embed(session *s, const int *units)
{
	if (need_run(s))
		return NULL;
	const char *p = s->model.cfg.encdec ? "enc." : "";
	const gb_ttensor *t = view_trace(s, "%sembed.tok", p);
	if (!t)
		return NULL;
	colwin w;
	/* every feature by default while they fit a slide with readable ticks (tiny-lm's 128 at
	 * 1600 px): "count the columns" then counts the model's d_model */
	const int all[2] = { 1, 0 };
	if ((!units || (units[0] == 0 && units[1] == 0)) && t->shape[1] <= 128)
		units = all;
	gb_figure *f = view_wide_heat(s, t->data, t->shape[0], t->shape[1], units, "features", p, "token", "feature", &w);
	if (!f)
		return NULL;
	if (w.sel[0] && w.a == 1) /* the title claims only what the slide shows */
		view_titlef(f, "Token embeddings%s: the first %d of each token's %d features", p[0] ? " (encoder)" : "", w.b, w.n);
	else if (w.sel[0])
		view_titlef(f, "Token embeddings%s: features %d-%d of each token's %d", p[0] ? " (encoder)" : "", w.a, w.b, w.n);
	else
		view_titlef(f, "Token embeddings: a vector of %d features per token%s", t->shape[1], p[0] ? " (encoder)" : "");
	gb_fig_set_caption(f, s->model.cfg.scale_embed ? "x_i = E[token_i] * sqrt(d_model)" : "x_i = E[token_i]");
	fit_range(f, GB_CMAP_VIRIDIS);
	view_provenance(s, f, t->name, &w, 0);
	return f;
}

/* Rows that are positions: "i=0", "i=1" ..., counted from 0 as the formulas count them (PE(i, 2k)),
 * after the row number (row 4 is position 3). */
static void position_labels(gb_figure *f)
{
	char **l = malloc(sizeof(char *) * (size_t)(f->rows ? f->rows : 1));
	for (int i = 0; i < f->rows; i++) {
		l[i] = malloc(24);
		snprintf(l[i], 24, "i=%d", i);
	}
	gb_fig_set_row_labels(f, (const char *const *)l);
	free_labels(l, f->rows);
	f->row_index0 = 0; /* "i=3" alone: the position the formula counts, not a row number beside it */
}

/* Columns labelled by the feature each is, from 0 as the formula counts (first: the window's). */
static void feature_labels(gb_figure *f, int first)
{
	char **l = malloc(sizeof(char *) * (size_t)(f->cols ? f->cols : 1));
	for (int j = 0; j < f->cols; j++) {
		l[j] = malloc(16);
		snprintf(l[j], 16, "%d", first + j);
	}
	gb_fig_set_col_labels(f, (const char *const *)l);
	free_labels(l, f->cols);
	f->col_index0 = 0;
}

gb_figure *view_pe(session *s, const int *dims, int n_dims, const int *units)
{
	if (need_run(s))
		return NULL;
	const gb_config *c = &s->model.cfg;
	const char *p = c->encdec ? "enc." : "";
	const char *enc = c->encdec ? " (encoder)" : "";
	if (c->pos == GB_POS_ROPE || c->pos == GB_POS_ALIBI || c->pos == GB_POS_T5 || c->pos == GB_POS_NONE) {
		/* No added position vectors: show what the model does instead. */
		int T = s->trace.n_ids, E = c->d_head, H = c->n_head;
		if (c->pos == GB_POS_NONE) {
			errorf("this model has no position information at all (position: none)");
			return NULL;
		}
		int cols = c->pos == GB_POS_ROPE ? E / 2 : T;
		int rows = c->pos == GB_POS_ROPE ? T : H;
		float *v = malloc(sizeof(float) * (size_t)rows * cols);
		if (c->pos == GB_POS_ROPE)
			for (int i = 0; i < T; i++)
				for (int k = 0; k < E / 2; k++)
					v[i * cols + k] = (float)fmod(i * gb_rope_inv_freq(c, k), 2 * M_PI);
		else if (c->pos == GB_POS_T5) { /* layer 1's table, read at each key's offset bucket */
			const float *rb = (c->encdec ? s->model.enc.layers : s->model.dec.layers)[0].attn.rel_bias;
			for (int h = 0; h < H; h++)
				for (int j = 0; j < T; j++)
					v[h * cols + j] = rb[gb_t5_bucket(j - (T - 1), c->encdec, c->rel_buckets, c->rel_max_dist) * H + h];
		} else
			for (int h = 0; h < H; h++)
				for (int j = 0; j < T; j++)
					v[h * cols + j] = (float)(gb_alibi_slope(h, H) * (j - (T - 1)));
		colwin w;
		gb_figure *f = c->pos == GB_POS_ROPE ? view_wide_heat(s, v, rows, cols, units, "pairs", NULL, "position", "frequency pair", &w)
		                                     : view_wide_heat(s, v, rows, cols, units, "keys", NULL, "head", "key", &w);
		free(v);
		if (!f)
			return NULL;
		if (c->pos == GB_POS_ROPE) {
			position_labels(f);
			view_titlef(f, "RoPE rotation angles%s (radians, mod 2pi): position x frequency pair", enc);
			char cap[240];
			snprintf(cap, sizeof cap, "angle(i, k) = i * theta^(-2k/d_head)%s: pair %s of q and k is rotated by it (%s)",
			         c->rope_scale == GB_ROPE_SCALE_LINEAR ? " / factor" : c->rope_scale == GB_ROPE_SCALE_LLAMA3
			         ? ", scaled as llama3 (long wavelengths / factor)" : "",
			         c->rope_pairs == GB_ROPE_ADJACENT ? "(2k, 2k+1)" : "(k, k + d_head/2)",
			         c->rope_pairs == GB_ROPE_ADJACENT ? "adjacent pairs, as llama2.c" : "rotate-half");
			gb_fig_set_caption(f, cap);
			fit_range(f, GB_CMAP_VIRIDIS);
		} else {
			/* the keys are the tokens of the text: label them as an attention map's keys */
			int n;
			char **l = token_labels(s, p, &n);
			if (n == cols)
				gb_fig_set_col_labels(f, (const char *const *)(l + w.a - 1));
			free_labels(l, n);
			f->row_index0 = 1;
			if (c->pos == GB_POS_T5) {
				view_titlef(f, "T5 relative bias of layer 1%s added to the last query's scores: head x key", enc);
				gb_fig_set_caption(f, "bias(i, j) = b_h[bucket(j - i)]: learned, one per head and bucket; a bucket per "
				                      "offset up to half the buckets, then log-spaced to the max distance");
			} else {
				view_titlef(f, "ALiBi bias%s added to the last query's scores: head x key", enc);
				gb_fig_set_caption(f, "bias(i, j) = m_h * (j - i), m_h = 2^(-8h/H)");
			}
			fit_range(f, GB_CMAP_MAGMA);
		}
		view_provenance(s, f, NULL, &w, 0);
		return f;
	}
	const gb_ttensor *t = view_trace(s, "%sembed.pos", p);
	if (!t)
		return NULL;
	int T = t->shape[0], D = t->shape[1];
	int sinus = c->pos == GB_POS_SINUSOIDAL;
	gb_figure *f;
	colwin w = { 0 };
	if (n_dims > 0) {
		f = gb_fig_new(GB_FIG_LINES);
		/* the sinusoids are functions of the position: drawn smooth (4 points per position)
		 * over at least 40 positions, so a wave shows as a wave; learned vectors exist at the
		 * text's positions only */
		int steps = sinus ? 4 : 1, last = sinus && T - 1 < 40 ? 40 : T - 1, n = last * steps + 1;
		float *y = malloc(sizeof(float) * n), *xs = malloc(sizeof(float) * n);
		for (int k = 0; k < n; k++)
			xs[k] = (float)k / steps;
		gb_fig_set_xs(f, xs, n);
		for (int d = 0; d < n_dims; d++) {
			if (dims[d] < 0 || dims[d] >= D) {
				errorf("feature %d does not exist: features are 0 to %d", dims[d], D - 1);
				free(y);
				free(xs);
				gb_fig_free(f);
				return NULL;
			}
			for (int k = 0; k < n; k++) {
				double a = xs[k] / pow(10000.0, 2.0 * (dims[d] / 2) / D);
				y[k] = sinus ? (float)(dims[d] % 2 ? cos(a) : sin(a)) : t->data[k * D + dims[d]];
			}
			char label[32];
			snprintf(label, sizeof label, "feature %d", dims[d]);
			gb_fig_add_series(f, label, y, n);
		}
		free(y);
		free(xs);
		f->x_title = strdup("position");
		f->y_title = strdup("value");
		view_titlef(f, "%s%s: chosen features along the positions", sinus ? "Positional encoding" : "Learned position vectors",
		            enc);
	} else {
		/* The formula counts positions and features from 0, and so do the labels (i=3, 0);
		 * --units counts columns from 1, as everywhere: the subtitle says both ("columns 1-64
		 * of 128 = features 0-63"). */
		f = view_wide_heat(s, t->data, T, D, units, "columns", NULL, "position", "feature", &w);
		if (!f)
			return NULL;
		if (w.sel[0])
			snprintf(w.sel + strlen(w.sel), sizeof w.sel - strlen(w.sel), " = features %d-%d", w.a - 1, w.b - 1);
		position_labels(f);
		feature_labels(f, w.a > 0 ? w.a - 1 : 0);
		if (sinus) { /* sin and cos: the scale of the functions themselves */
			f->cmap = GB_CMAP_COOLWARM;
			f->range = GB_RANGE_FIXED;
			f->vmin = -1;
			f->vmax = 1;
		} else
			fit_range(f, GB_CMAP_VIRIDIS);
		if (w.sel[0] && w.a == 1)
			view_titlef(f, "%s%s: the first %d of each position's %d features",
			            sinus ? "Positional encoding" : "Learned position vectors", enc, w.b, D);
		else if (w.sel[0])
			view_titlef(f, "%s%s: features %d-%d of each position's %d",
			            sinus ? "Positional encoding" : "Learned position vectors", enc, w.a - 1, w.b - 1, D);
		else
			view_titlef(f, "%s%s: a vector of %d features per position",
			            sinus ? "Positional encoding" : "Learned position vectors", enc, D);
	}
	gb_fig_set_caption(f, sinus ? "PE(i, 2k) = sin(i / 10000^(2k/d)),  PE(i, 2k+1) = cos(i / 10000^(2k/d))"
	                            : "learned: P[i] is a trained vector per position");
	view_provenance(s, f, t->name, n_dims > 0 ? NULL : &w, 0);
	return f;
}

