/* view_loss.c — issue 19, length: the loss of each token of the current text (`loss`), as a
 * token strip and as a curve over the positions, and runs longer than the context the model
 * was trained on (`set context N`) for the positions that allow it, so a class sees which
 * models hold past their training length. Learned positions refuse: there is no row of the
 * position table for a position past it. */
#include "app/views.h"
#include "app/view_common.h"
#include "app/view19.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The text's next-token losses: loss[i] = -log p(ids[i + 1] | ids[0..i]) for i < n - 1,
 * computed from the logits in double (log-sum-exp), so a probability that rounds to 0 in
 * float still gives its loss. Returns the count (n - 1), or -1 after an error line. */
int text_losses(session *s, double **out, int **targets)
{
	if (need_run(s))
		return -1;
	const gb_trace *tr = &s->trace;
	const int *ids = tr->encdec ? tr->tgt : tr->ids;
	int n = tr->encdec ? tr->n_tgt : tr->n_ids;
	if (tr->pos0) {
		errorf("the trace holds a cached step, not a whole text: run the text again");
		return -1;
	}
	if (n < 2) {
		errorf("the loss needs at least two tokens: the first is predicted by nothing, each later one by what comes before");
		return -1;
	}
	const gb_ttensor *lg = gb_trace_get(tr, "logits");
	if (!lg || !lg->data || lg->shape[0] != n) {
		errorf("this run has no logits for each of its tokens ('trace' lists what it has)");
		return -1;
	}
	int V = lg->shape[1];
	double *l = malloc(sizeof(double) * (size_t)(n - 1));
	int *t = malloc(sizeof(int) * (size_t)(n - 1));
	if (!l || !t) {
		free(l);
		free(t);
		errorf("out of memory");
		return -1;
	}
	for (int i = 0; i < n - 1; i++) {
		const float *r = lg->data + (size_t)i * V;
		double m = -INFINITY, z = 0;
		for (int v = 0; v < V; v++)
			m = r[v] > m ? r[v] : m;
		for (int v = 0; v < V; v++)
			z += exp(r[v] - m);
		l[i] = m + log(z) - r[ids[i + 1]];
		t[i] = ids[i + 1];
	}
	*out = l;
	if (targets)
		*targets = t;
	else
		free(t);
	return n - 1;
}

gb_figure *view_loss(session *s, int curve)
{
	double *l;
	int *tg;
	int n = text_losses(s, &l, &tg);
	if (n < 0)
		return NULL;
	const char *stack = s->trace.encdec ? "dec." : "";
	int nl;
	char **lab = token_labels(s, stack, &nl);
	double sum = 0, sum_in = 0, sum_past = 0;
	int trained = s->ctx_trained, n_in = 0;
	for (int i = 0; i < n; i++) {
		sum += l[i];
		/* token i + 1 (0-based) sits at position i + 1: past the trained context when
		 * i + 1 >= trained */
		if (!trained || i + 1 < trained) {
			sum_in += l[i];
			n_in++;
		} else
			sum_past += l[i];
	}
	gb_figure *f = gb_fig_new(curve ? GB_FIG_LINES : GB_FIG_STRIP);
	float *v = malloc(sizeof(float) * (size_t)n * 2), *xs = malloc(sizeof(float) * (size_t)n);
	if (!f || !v || !xs) {
		errorf("out of memory");
		gb_fig_free(f);
		f = NULL;
		goto out;
	}
	char sub[160];
	if (trained && n > n_in)
		snprintf(sub, sizeof sub, "mean %.3f over %d predictions; %.3f within the trained context of %d, %.3f past it",
		         sum / n, n, sum_in / n_in, trained, sum_past / (n - n_in));
	else
		snprintf(sub, sizeof sub, "mean %.3f over %d predictions (%.2f bits a token)", sum / n, n, sum / n / log(2));
	if (!curve) {
		for (int i = 0; i < n; i++)
			v[i] = (float)l[i];
		gb_fig_set_values(f, v, 1, n);
		gb_fig_set_col_labels(f, (const char *const *)(lab + 1));
		view_titlef(f, "Loss of each token: -log p(token | the tokens before it)");
		char cap[320];
		snprintf(cap, sizeof cap, "%s; the first token is predicted by nothing. Darker: the model expected it; "
		         "bright: it was a surprise", sub);
		gb_fig_set_caption(f, cap);
		f->cmap = GB_CMAP_MAGMA;
		fit_range(f, GB_CMAP_MAGMA);
	} else {
		/* the loss at each position and its running mean; past the trained context the
		 * loss is drawn as its own line, so where it breaks (or holds) shows */
		int split = trained && trained <= n;
		double run = 0;
		float *mean = v + n, *past = malloc(sizeof(float) * (size_t)n);
		for (int i = 0; i < n; i++) {
			xs[i] = (float)(i + 2);
			run += l[i];
			mean[i] = (float)(run / (i + 1));
			int in = !split || i + 1 < trained;
			v[i] = in ? (float)l[i] : NAN;
			/* the past line starts on the last point within, so the two lines join */
			if (past)
				past[i] = !in || i + 2 == trained ? (float)l[i] : NAN;
		}
		gb_fig_set_xs(f, xs, n);
		char nm[64];
		snprintf(nm, sizeof nm, "up to position %d", trained);
		if (!gb_fig_add_series(f, split ? nm : "loss of the token", v, n))
			f->series[f->n_series - 1].gaps = split; /* it stops at the trained context */
		if (split && past) { /* the line the figure is about: heavier */
			snprintf(nm, sizeof nm, "past position %d", trained);
			if (!gb_fig_add_series(f, nm, past, n)) {
				f->series[f->n_series - 1].gaps = 1; /* it starts there */
				f->series[f->n_series - 1].weight = 1.8f;
			}
		}
		if (!gb_fig_add_series(f, "running mean", mean, n))
			f->series[f->n_series - 1].dash = 1;
		/* split at the trained context: one colour (the model's, as compare-models gives
		 * each model one), the part past it heavier, the mean dashed; review 12: blue and red
		 * for "up to" and "past" here, then for two models beside each other in lesson 17 */
		for (int k = 0; split && k < f->n_series; k++)
			f->series[k].hue = 1;
		free(past);
		view_titlef(f, "Loss of each token along the text");
		gb_fig_set_caption(f, sub);
		gb_fig_set_axes(f, "loss (nats)", "position of the predicted token (from 1)");
	}
	view_provenance(s, f, "logits", NULL, 0);
	char m[32];
	snprintf(m, sizeof m, "%.6f", sum / n);
	gb_fig_add_meta(f, "Mean loss", m);
out:
	free(v);
	free(xs);
	free(l);
	free(tg);
	free_labels(lab, nl);
	return f;
}
