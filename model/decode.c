/* decode.c — sampling filters and beam search. Probabilities are computed in double from the
 * float logits, so the filters' thresholds do not depend on summation order. */
#include "model/decode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct ranked {
	double p;
	int id;
} ranked;

static int by_prob(const void *a, const void *b)
{
	const ranked *x = a, *y = b;
	if (x->p != y->p)
		return x->p > y->p ? -1 : 1;
	return x->id - y->id;
}

int gb_sampling_probs(const float *logits, int V, const gb_sampling *s, double *probs)
{
	if (s->temp <= 0) {
		int best = 0;
		for (int v = 1; v < V; v++)
			if (logits[v] > logits[best])
				best = v;
		for (int v = 0; v < V; v++)
			probs[v] = v == best;
		return 1;
	}
	double mx = -INFINITY, z = 0;
	for (int v = 0; v < V; v++)
		mx = fmax(mx, logits[v] / s->temp);
	for (int v = 0; v < V; v++)
		z += probs[v] = exp(logits[v] / s->temp - mx);
	for (int v = 0; v < V; v++)
		probs[v] /= z;
	int keep = V;
	if ((s->top_k > 0 && s->top_k < V) || s->top_p < 1) {
		ranked *r = malloc(sizeof *r * (size_t)V);
		if (!r)
			return V; /* out of memory: sample unfiltered rather than fail */
		for (int v = 0; v < V; v++)
			r[v].p = probs[v], r[v].id = v;
		qsort(r, (size_t)V, sizeof *r, by_prob);
		if (s->top_k > 0 && s->top_k < keep)
			keep = s->top_k;
		if (s->top_p < 1) {
			double cum = 0;
			int n = 0;
			while (n < keep) {
				cum += r[n++].p;
				if (cum >= s->top_p)
					break;
			}
			keep = n;
		}
		double kept = 0;
		for (int i = 0; i < keep; i++)
			kept += r[i].p;
		for (int v = 0; v < V; v++)
			probs[v] = 0;
		for (int i = 0; i < keep; i++)
			probs[r[i].id] = r[i].p / kept;
		free(r);
	}
	return keep;
}

int gb_sample(const float *logits, int V, const gb_sampling *s, gb_rng *rng, double *p)
{
	double *probs = malloc(sizeof *probs * (size_t)V);
	if (!probs)
		return 0;
	gb_sampling_probs(logits, V, s, probs);
	int pick = V - 1;
	if (s->temp <= 0) {
		for (int v = 0; v < V; v++)
			if (probs[v] == 1) {
				pick = v;
				break;
			}
	} else {
		double u = gb_rng_uniform(rng), cum = 0;
		for (int v = 0; v < V; v++) {
			cum += probs[v];
			if (probs[v] > 0 && u < cum) {
				pick = v;
				break;
			}
		}
		while (probs[pick] == 0 && pick > 0) /* rounding left u past the last kept token */
			pick--;
	}
	if (p)
		*p = probs[pick];
	free(probs);
	return pick;
}

int gb_greedy_decode(const gb_model *m, const gb_fwd_opts *o, const int *src, int n_src, gb_trace *tr, int *tgt,
                     int *n_tgt, const volatile sig_atomic_t *stop, gb_err *err)
{
	const gb_config *c = &m->cfg;
	gb_sampling greedy = { 0, 0, 1 };
	int n = 0;
	tgt[n++] = c->dec_start_id;
	while (n < c->n_ctx && !(stop && *stop)) {
		if (gb_forward(m, src, n_src, tgt, n, tr, o, err))
			return -1;
		const gb_ttensor *lg = gb_trace_get(tr, "logits");
		int id = gb_sample(lg->data + (size_t)(n - 1) * lg->shape[1], lg->shape[1], &greedy, NULL, NULL);
		if (id == c->eos_id)
			break;
		tgt[n++] = id;
	}
	*n_tgt = n;
	return 0;
}

void gb_beams_free(gb_beam *b, int n)
{
	for (int i = 0; i < n; i++)
		free(b[i].ids);
}

static int by_score(const void *a, const void *b)
{
	const gb_beam *x = a, *y = b;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return 0;
}

/* log-softmax of the last row of the trace's logits into lp (V). */
double gb_logsumexp(const float *row, int V)
{
	double mx = -INFINITY, z = 0;
	for (int v = 0; v < V; v++)
		mx = fmax(mx, row[v]);
	for (int v = 0; v < V; v++)
		z += exp(row[v] - mx);
	return mx + log(z);
}

const float *gb_last_logits(const gb_trace *tr, int *V)
{
	const gb_ttensor *t = gb_trace_get(tr, "logits");
	*V = t->shape[1];
	return t->data + (size_t)(t->shape[0] - 1) * t->shape[1];
}

static void last_logprobs(const gb_trace *tr, double *lp)
{
	int V;
	const float *row = gb_last_logits(tr, &V);
	double lz = gb_logsumexp(row, V);
	for (int v = 0; v < V; v++)
		lp[v] = row[v] - lz;
}

int gb_beam_search(const gb_model *m, const gb_kernels *kt, const int *ids, int n, int k, int steps,
                   int eos_id, gb_beam_step_fn fn, void *arg, gb_beam *out, int *n_out, gb_err *err)
{
	const gb_config *c = &m->cfg;
	int V = c->vocab, prefix = c->encdec ? 1 : n;
	if (k < 1 || steps < 1)
		return gb_fail(err, "beam search needs a width and a number of steps of at least 1");
	if (prefix + steps > c->n_ctx)
		steps = c->n_ctx - prefix;
	if (steps < 1)
		return gb_fail(err, "the prompt already fills the context (%d tokens)", c->n_ctx);
	gb_beam *beams = calloc((size_t)k, sizeof *beams), *cand = calloc((size_t)k * k, sizeof *cand);
	int *seq = malloc(sizeof(int) * (size_t)(prefix + steps));
	double *lp = malloc(sizeof(double) * (size_t)V);
	ranked *r = malloc(sizeof *r * (size_t)V);
	gb_trace tr = { 0 };
	gb_fwd_opts o = { 0 };
	o.k = kt;
	int nb = 1, rc = 0;
	if (!beams || !cand || !seq || !lp || !r) {
		rc = gb_fail(err, "out of memory");
		goto out;
	}
	beams[0].ids = malloc(sizeof(int) * (size_t)steps);
	if (!beams[0].ids) {
		rc = gb_fail(err, "out of memory");
		goto out;
	}
	int nc = 0;
	for (int step = 0; step < steps; step++) {
		nc = 0;
		for (int b = 0; b < nb; b++) {
			if (beams[b].done) { /* a finished beam carries over unchanged */
				cand[nc] = beams[b];
				cand[nc].ids = malloc(sizeof(int) * (size_t)steps);
				memcpy(cand[nc].ids, beams[b].ids, sizeof(int) * (size_t)beams[b].n);
				nc++;
				continue;
			}
			if (c->encdec) {
				seq[0] = c->dec_start_id;
				memcpy(seq + 1, beams[b].ids, sizeof(int) * (size_t)beams[b].n);
				rc = gb_forward(m, ids, n, seq, 1 + beams[b].n, &tr, &o, err);
			} else {
				memcpy(seq, ids, sizeof(int) * (size_t)n);
				memcpy(seq + n, beams[b].ids, sizeof(int) * (size_t)beams[b].n);
				rc = gb_forward(m, seq, n + beams[b].n, NULL, 0, &tr, &o, err);
			}
			if (rc) {
				gb_beams_free(cand, nc); /* the extensions made so far this step */
				goto out;
			}
			last_logprobs(&tr, lp);
			for (int v = 0; v < V; v++)
				r[v].p = lp[v], r[v].id = v;
			qsort(r, (size_t)V, sizeof *r, by_prob);
			for (int i = 0; i < k && i < V; i++) {
				gb_beam *x = &cand[nc++];
				x->ids = malloc(sizeof(int) * (size_t)steps);
				memcpy(x->ids, beams[b].ids, sizeof(int) * (size_t)beams[b].n);
				x->n = beams[b].n + 1;
				x->ids[x->n - 1] = r[i].id;
				x->score = beams[b].score + r[i].p;
				x->done = r[i].id == eos_id;
			}
		}
		qsort(cand, (size_t)nc, sizeof *cand, by_score);
		gb_beams_free(beams, nb);
		nb = nc < k ? nc : k;
		memcpy(beams, cand, sizeof *beams * (size_t)nb);
		gb_beams_free(cand + nb, nc - nb);
		if (fn && fn(arg, step + 1, beams, nb))
			break;
		int all_done = 1;
		for (int b = 0; b < nb; b++)
			all_done &= beams[b].done;
		if (all_done)
			break;
	}
	memcpy(out, beams, sizeof *beams * (size_t)nb);
	*n_out = nb;
	nb = 0;
out:
	if (beams)
		gb_beams_free(beams, nb);
	free(beams);
	free(cand);
	free(seq);
	free(lp);
	free(r);
	gb_trace_free(&tr);
	return rc;
}
