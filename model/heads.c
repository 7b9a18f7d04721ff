/* heads.c — see heads.h. The scores read the attention weights from a forward trace, so they
 * describe exactly what the views show. */
#include "model/heads.h"

#include <stdlib.h>
#include <string.h>

#include "model/rng.h"
#include "model/tokenizer/tokenizer.h"

static const gb_ttensor *weights(const gb_trace *tr, const gb_config *c, const char *block, int l)
{
	char name[64];
	snprintf(name, sizeof name, "%sL%d.%s.weights", c->encdec ? "dec." : "", l + 1, block);
	return gb_trace_get(tr, name);
}

/* Sum over rows i >= 1 of a (T, T) head's weight on the token before: sum_i w[i][i-1]. */
static double prev_sum(const float *wh, int T)
{
	double a = 0;
	for (int i = 1; i < T; i++)
		a += wh[(size_t)i * T + i - 1];
	return a;
}

void gb_head_run_tokens(const gb_model *m, int *lo, int *hi)
{
	*hi = m->cfg.vocab;
	*lo = 0;
	if (!m->tok)
		return;
	*hi = gb_tok_vocab_size(m->tok);
	while (*hi > 0 && gb_tok_is_special(m->tok, *hi - 1))
		--*hi;
	if (*hi - 256 >= 64)
		*lo = 256;
}

int gb_head_scores(const gb_model *m, const gb_kernels *k, const int *const *texts, const int *lens,
                   int n_texts, int run, int n_rep, int lo, int hi, uint64_t seed, gb_head_score *out,
                   gb_err *err)
{
	const gb_config *c = &m->cfg;
	int L = c->n_layer, H = c->n_head, rc = 0;
	if (c->encdec)
		return gb_fail(err, "the head detector looks at decoder-only models; for an encoder-decoder see cross-attention");
	memset(out, 0, sizeof *out * (size_t)L * H);
	gb_trace tr = { 0 };
	gb_fwd_opts o = { 0 };
	o.k = k;
	double *acc = calloc((size_t)L * H * 5, sizeof *acc);
	double cnt[5] = { 0 };
	int *seq = malloc(sizeof(int) * (size_t)(2 * run + 1));
	if (!acc || !seq) {
		rc = gb_fail(err, "out of memory");
		goto out;
	}
	for (int t = 0; t < n_texts; t++) {
		int T = lens[t];
		if (T < 2)
			continue;
		if ((rc = gb_forward(m, texts[t], T, NULL, 0, &tr, &o, err)))
			goto out;
		for (int l = 0; l < L; l++) {
			const float *w = weights(&tr, c, "attn", l)->data;
			for (int h = 0; h < H; h++) {
				const float *wh = w + (size_t)h * T * T;
				double *a = acc + ((size_t)l * H + h) * 5;
				a[0] += prev_sum(wh, T);
				for (int i = 1; i < T; i++)
					a[1] += wh[(size_t)i * T];
				for (int i = 0; i < T; i++)
					a[2] += wh[(size_t)i * T + i];
			}
		}
		cnt[0] += T - 1;
		cnt[2] += T;
	}
	cnt[1] = cnt[0];
	gb_rng r;
	gb_rng_seed(&r, seed);
	int b = c->bos_id >= 0 ? 1 : 0, T = b + 2 * run;
	if (T > c->n_ctx) {
		rc = gb_fail(err, "a run of %d tokens repeated twice does not fit the context (%d)", run, c->n_ctx);
		goto out;
	}
	for (int rep = 0; rep < n_rep && hi > lo; rep++) {
		if (b)
			seq[0] = c->bos_id;
		for (int i = 0; i < run; i++)
			seq[b + i] = seq[b + run + i] = lo + gb_rng_below(&r, hi - lo);
		if ((rc = gb_forward(m, seq, T, NULL, 0, &tr, &o, err)))
			goto out;
		for (int l = 0; l < L; l++) {
			const float *w = weights(&tr, c, "attn", l)->data;
			for (int h = 0; h < H; h++) {
				const float *wh = w + (size_t)h * T * T;
				double *a = acc + ((size_t)l * H + h) * 5;
				a[4] += prev_sum(wh, T);
				/* Query b+run+i (the i-th token of the second copy) looks back to b+i+1, the
				 * token that followed the same token the first time. */
				for (int i = 0; i + 1 < run; i++)
					a[3] += wh[(size_t)(b + run + i) * T + b + i + 1];
			}
		}
		cnt[3] += run - 1;
		cnt[4] += T - 1;
	}
	for (int i = 0; i < L * H; i++) {
		double *a = acc + (size_t)i * 5;
		out[i].prev = cnt[0] ? (float)(a[0] / cnt[0]) : 0;
		out[i].first = cnt[1] ? (float)(a[1] / cnt[1]) : 0;
		out[i].self = cnt[2] ? (float)(a[2] / cnt[2]) : 0;
		out[i].induction = cnt[3] ? (float)(a[3] / cnt[3]) : 0;
		out[i].prev_rand = cnt[4] ? (float)(a[4] / cnt[4]) : 0;
	}
out:
	free(acc);
	free(seq);
	gb_trace_free(&tr);
	return rc;
}

int gb_cross_monotone(const gb_model *m, const gb_kernels *k, const int *const *src, const int *src_lens,
                      const int *const *tgt, const int *tgt_lens, int n, float *out, gb_err *err)
{
	const gb_config *c = &m->cfg;
	if (!c->encdec)
		return gb_fail(err, "cross-attention exists only in encoder-decoder models");
	int L = c->n_layer, H = c->n_head, rc = 0;
	double *good = calloc((size_t)L * H, sizeof *good), pairs = 0;
	gb_trace tr = { 0 };
	gb_fwd_opts o = { 0 };
	o.k = k;
	if (!good)
		return gb_fail(err, "out of memory");
	for (int s = 0; s < n; s++) {
		int Ts = src_lens[s], Tt = tgt_lens[s];
		if (Tt < 2)
			continue;
		if ((rc = gb_forward(m, src[s], Ts, tgt[s], Tt, &tr, &o, err)))
			break;
		for (int l = 0; l < L; l++) {
			const float *w = weights(&tr, c, "cross", l)->data;
			for (int h = 0; h < H; h++) {
				int prev = -1;
				for (int i = 0; i < Tt; i++) {
					const float *row = w + ((size_t)h * Tt + i) * Ts;
					int best = 0;
					for (int j = 1; j < Ts; j++)
						if (row[j] > row[best])
							best = j;
					if (i > 0 && best >= prev)
						good[l * H + h]++;
					prev = best;
				}
			}
		}
		pairs += Tt - 1;
	}
	for (int i = 0; i < L * H; i++)
		out[i] = pairs ? (float)(good[i] / pairs) : 0;
	free(good);
	gb_trace_free(&tr);
	return rc;
}
