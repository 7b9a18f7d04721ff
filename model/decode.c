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
	gb_kvcache *kc = gb_kvcache_new(m, c->n_ctx, err);
	if (!kc)
		return -1;
	if (gb_kvcache_set_source(kc, m, src, n_src, NULL, o, err)) {
		gb_kvcache_free(kc);
		return -1;
	}
	int n = 0;
	tgt[n++] = c->dec_start_id;
	/* each step runs the newest token through the cache: its one row of logits is next */
	while (n < c->n_ctx && !(stop && *stop)) {
		if (gb_forward_cached(m, kc, tgt + n - 1, 1, tr, o, err)) {
			gb_kvcache_free(kc);
			return -1;
		}
		int V;
		const float *row = gb_last_logits(tr, &V);
		int id = gb_sample(row, V, &greedy, NULL, NULL);
		if (id == c->eos_id)
			break;
		tgt[n++] = id;
	}
	*n_tgt = n;
	gb_kvcache_free(kc);
	return 0;
}

void gb_beams_free(gb_beam *b, int n)
{
	for (int i = 0; i < n; i++)
		free(b[i].ids);
}

/* A candidate of a beam search step: the beam it would become, and the index of the beam it
 * extends (its cache), -1 for a finished beam carried over. */
typedef struct cand_t {
	gb_beam b;
	int parent, order;
} cand_t;

/* Best score first; equal scores keep the order they were made in (a stable sort). */
static int by_score(const void *a, const void *b)
{
	const cand_t *x = a, *y = b;
	if (x->b.score != y->b.score)
		return x->b.score > y->b.score ? -1 : 1;
	return x->order - y->order;
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
	const gb_ttensor *t = NULL;
	for (int i = 0; i < tr->n && !t; i++)
		if (!strcmp(tr->t[i].name, "logits"))
			t = &tr->t[i];
	*V = t->shape[1];
	/* a lazy trace (a long run) kept this row without computing the others */
	return gb_trace_last_row(tr, "logits");
}

static void last_logprobs(const gb_trace *tr, double *lp)
{
	int V;
	const float *row = gb_last_logits(tr, &V);
	double lz = gb_logsumexp(row, V);
	for (int v = 0; v < V; v++)
		lp[v] = row[v] - lz;
}

/* The key/value caches of a search's beams: pool[0..n_pool) allocated, at most k; beam b's is
 * cache[b] (NULL for a finished beam, which needs none). */
typedef struct beam_caches {
	gb_kvcache **pool, **cache, **next;
	int n_pool, cap;
	unsigned char *used;   /* (k) pool[i] is handed out this step */
	unsigned char *claimed; /* (k) beam p's cache passed to a child this step */
} beam_caches;

/* A cache nobody uses in next[0..nb) (and not yet handed out), allocated when none is free. */
static gb_kvcache *free_cache(beam_caches *bc, const gb_model *m, gb_err *err)
{
	for (int i = 0; i < bc->n_pool; i++)
		if (!bc->used[i]) {
			bc->used[i] = 1;
			return bc->pool[i];
		}
	gb_kvcache *c = gb_kvcache_new(m, bc->cap, err);
	if (c) {
		bc->used[bc->n_pool] = 1;
		bc->pool[bc->n_pool++] = c;
	}
	return c;
}

static int pool_index(const beam_caches *bc, const gb_kvcache *c)
{
	for (int i = 0; i < bc->n_pool; i++)
		if (bc->pool[i] == c)
			return i;
	return -1;
}

/* After a step picked beams cand[0..nb) from the beams whose caches are bc->cache: a parent's
 * cache passes to its first child as it is, and each further child gets a copy into a cache
 * that no kept beam uses. Caches of beams not kept are reused, never freed mid-search. */
static int pass_caches(beam_caches *bc, const gb_model *m, const cand_t *cand, int nb, int n_old, gb_err *err)
{
	unsigned char *claimed = bc->claimed;
	memset(bc->used, 0, (size_t)bc->n_pool);
	memset(claimed, 0, (size_t)n_old);
	for (int i = 0; i < nb; i++) {
		int p = cand[i].b.done ? -1 : cand[i].parent; /* a finished beam runs no more */
		bc->next[i] = NULL;
		if (p >= 0 && !claimed[p]) {
			claimed[p] = 1;
			bc->next[i] = bc->cache[p];
			bc->used[pool_index(bc, bc->cache[p])] = 1;
		}
	}
	for (int i = 0; i < nb; i++) {
		int p = cand[i].b.done ? -1 : cand[i].parent;
		if (p < 0 || bc->next[i] == bc->cache[p])
			continue;
		/* the sibling that took the parent's cache has not changed it yet */
		gb_kvcache *c = free_cache(bc, m, err);
		if (!c || gb_kvcache_copy(c, bc->cache[p], err))
			return -1;
		bc->next[i] = c;
	}
	gb_kvcache **t = bc->cache;
	bc->cache = bc->next;
	bc->next = t;
	return 0;
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
	gb_beam *beams = calloc((size_t)k, sizeof *beams);
	cand_t *cand = calloc((size_t)k * k, sizeof *cand);
	int *seq = malloc(sizeof(int) * (size_t)(prefix + steps));
	double *lp = malloc(sizeof(double) * (size_t)V);
	ranked *r = malloc(sizeof *r * (size_t)V);
	beam_caches bc = { 0 };
	bc.cap = prefix + steps;
	bc.pool = calloc((size_t)k, sizeof *bc.pool);
	bc.cache = calloc((size_t)k, sizeof *bc.cache);
	bc.next = calloc((size_t)k, sizeof *bc.next);
	bc.used = calloc((size_t)k, 1);
	bc.claimed = calloc((size_t)k, 1);
	gb_trace tr = { 0 };
	gb_fwd_opts o = { 0 };
	o.k = kt;
	int nb = 1, nc = 0, rc = 0;
	if (!beams || !cand || !seq || !lp || !r || !bc.pool || !bc.cache || !bc.next || !bc.used || !bc.claimed) {
		rc = gb_fail(err, "out of memory");
		goto out;
	}
	beams[0].ids = malloc(sizeof(int) * (size_t)steps);
	if (!beams[0].ids || !(bc.cache[0] = free_cache(&bc, m, err))) {
		rc = beams[0].ids ? -1 : gb_fail(err, "out of memory");
		goto out;
	}
	if (c->encdec && (rc = gb_kvcache_set_source(bc.cache[0], m, ids, n, NULL, &o, err)))
		goto out;
	for (int step = 0; step < steps; step++) {
		nc = 0;
		for (int b = 0; b < nb; b++) {
			if (beams[b].done) { /* a finished beam carries over unchanged */
				cand[nc].b = beams[b];
				cand[nc].parent = -1;
				cand[nc].order = nc;
				cand[nc].b.ids = malloc(sizeof(int) * (size_t)steps);
				if (!cand[nc].b.ids) {
					rc = gb_fail(err, "out of memory");
					goto out;
				}
				memcpy(cand[nc].b.ids, beams[b].ids, sizeof(int) * (size_t)beams[b].n);
				nc++;
				continue;
			}
			/* The beam's sequence is the prompt (or the decoder start) and its tokens; its
			 * cache holds all but the newest (at the first step: nothing), which run now. */
			if (c->encdec)
				seq[0] = c->dec_start_id;
			else
				memcpy(seq, ids, sizeof(int) * (size_t)n);
			memcpy(seq + prefix, beams[b].ids, sizeof(int) * (size_t)beams[b].n);
			gb_kvcache *kc = bc.cache[b];
			int have = gb_kvcache_len(kc), total = prefix + beams[b].n;
			if ((rc = gb_forward_cached(m, kc, seq + have, total - have, &tr, &o, err)))
				goto out;
			last_logprobs(&tr, lp);
			for (int v = 0; v < V; v++)
				r[v].p = lp[v], r[v].id = v;
			qsort(r, (size_t)V, sizeof *r, by_prob);
			for (int i = 0; i < k && i < V; i++) {
				cand_t *x = &cand[nc];
				x->b.ids = malloc(sizeof(int) * (size_t)steps);
				if (!x->b.ids) {
					rc = gb_fail(err, "out of memory");
					goto out;
				}
				memcpy(x->b.ids, beams[b].ids, sizeof(int) * (size_t)beams[b].n);
				x->b.n = beams[b].n + 1;
				x->b.ids[x->b.n - 1] = r[i].id;
				x->b.score = beams[b].score + r[i].p;
				x->b.done = r[i].id == eos_id;
				x->parent = b;
				x->order = nc++;
			}
		}
		qsort(cand, (size_t)nc, sizeof *cand, by_score);
		int kept = nc < k ? nc : k;
		if ((rc = pass_caches(&bc, m, cand, kept, nb, err)))
			goto out;
		gb_beams_free(beams, nb);
		nb = kept;
		for (int i = 0; i < nc; i++) {
			if (i < nb)
				beams[i] = cand[i].b;
			else
				free(cand[i].b.ids);
		}
		nc = 0;
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
	for (int i = 0; i < nc; i++) /* the extensions made so far in a step that failed */
		free(cand[i].b.ids);
	if (beams)
		gb_beams_free(beams, nb);
	for (int i = 0; i < bc.n_pool; i++)
		gb_kvcache_free(bc.pool[i]);
	free(bc.pool);
	free(bc.cache);
	free(bc.next);
	free(bc.used);
	free(bc.claimed);
	free(beams);
	free(cand);
	free(seq);
	free(lp);
	free(r);
	gb_trace_free(&tr);
	return rc;
}
