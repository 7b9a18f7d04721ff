/* t_decode.c — sampling filters against hand-computed distributions, sampling frequencies,
 * and beam search against greedy decoding and recomputed log-probabilities. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/decode.h"
#include "tests/tap.h"

static double worst_diff(const double *a, const double *b, int n)
{
	double w = 0;
	for (int i = 0; i < n; i++)
		w = fmax(w, fabs(a[i] - b[i]));
	return w;
}

static void filters(void)
{
	/* logits log(1..4): softmax at temperature 1 is (1, 2, 3, 4) / 10. */
	float lg[4] = { 0, (float)log(2.0), (float)log(3.0), (float)log(4.0) };
	double p[4];
	gb_sampling s = { 1, 0, 1 };
	gb_sampling_probs(lg, 4, &s, p);
	double want[4] = { .1, .2, .3, .4 };
	tap_ok(worst_diff(p, want, 4) < 1e-7, "temperature 1: softmax of log(1..4) = (.1, .2, .3, .4)");
	s.top_k = 2;
	int kept = gb_sampling_probs(lg, 4, &s, p);
	double want_k[4] = { 0, 0, 3.0 / 7, 4.0 / 7 };
	tap_ok(kept == 2 && worst_diff(p, want_k, 4) < 1e-7, "top-k 2 keeps (.3, .4) renormalized to (3/7, 4/7)");
	s.top_k = 0;
	s.top_p = 0.5; /* .4 < .5, .4 + .3 >= .5: two tokens */
	kept = gb_sampling_probs(lg, 4, &s, p);
	tap_ok(kept == 2 && worst_diff(p, want_k, 4) < 1e-7, "top-p 0.5 keeps the two most probable");
	s.top_p = 0.39; /* the first alone reaches .39 (not .4: float logits put it a hair under) */
	kept = gb_sampling_probs(lg, 4, &s, p);
	double want_1[4] = { 0, 0, 0, 1 };
	tap_ok(kept == 1 && worst_diff(p, want_1, 4) < 1e-7, "top-p 0.39 keeps only the most probable");
	s.top_p = 1;
	s.temp = 2; /* probabilities proportional to sqrt(1, 2, 3, 4) */
	gb_sampling_probs(lg, 4, &s, p);
	double z = 1 + sqrt(2) + sqrt(3) + 2, want_t[4] = { 1 / z, sqrt(2) / z, sqrt(3) / z, 2 / z };
	tap_ok(worst_diff(p, want_t, 4) < 1e-7, "temperature 2 flattens to sqrt(1..4), normalized");
	s.temp = 0;
	tap_ok(gb_sample(lg, 4, &s, NULL, NULL) == 3, "temperature 0 is greedy");

	/* Frequencies: 40000 draws under top-k 2 land on ids 2 and 3 only, 3/7 and 4/7 of the time
	 * (standard error of a proportion ~0.0025; 0.015 is six of them). */
	gb_rng r;
	gb_rng_seed(&r, 1);
	s.temp = 1;
	s.top_k = 2;
	int count[4] = { 0 };
	for (int i = 0; i < 40000; i++)
		count[gb_sample(lg, 4, &s, &r, NULL)]++;
	tap_ok(count[0] == 0 && count[1] == 0, "top-k 2 never samples outside the top 2");
	tap_near(count[2] / 40000.0, 3.0 / 7, 0.015, "top-k 2: id 2 drawn 3/7 of the time");
	gb_rng r2;
	gb_rng_seed(&r2, 1);
	gb_rng_seed(&r, 1);
	int same = 1;
	for (int i = 0; i < 100; i++)
		same &= gb_sample(lg, 4, &s, &r, NULL) == gb_sample(lg, 4, &s, &r2, NULL);
	tap_ok(same, "the same seed draws the same tokens");
}

static int stop_after_2(void *arg, int step, const gb_beam *beams, int n_beams)
{
	(void)beams, (void)n_beams;
	++*(int *)arg;
	return step >= 2;
}

static void beams(void)
{
	gb_config c;
	gb_config_defaults(&c, GB_FAM_GPT2);
	c.d_model = 16, c.n_layer = 2, c.n_head = c.n_kv_head = 2, c.d_head = 8, c.d_ffn = 32, c.vocab = 23, c.n_ctx = 24;
	gb_model m;
	gb_err err;
	gb_model_init(&m, &c, 5, 0.5f, &err);
	int prompt[3] = { 4, 9, 1 };
	const gb_kernels *k = gb_kernels_ref();

	/* Greedy by hand: forward, argmax of the last row, append. */
	int seq[12];
	memcpy(seq, prompt, sizeof prompt);
	gb_trace tr = { 0 };
	gb_fwd_opts o = { 0 };
	o.k = k;
	double greedy_score = 0;
	for (int t = 0; t < 6; t++) {
		gb_forward(&m, seq, 3 + t, NULL, 0, &tr, &o, &err);
		const gb_ttensor *lg = gb_trace_get(&tr, "logits");
		const float *row = lg->data + (size_t)(2 + t) * 23;
		int best = 0;
		for (int v = 1; v < 23; v++)
			if (row[v] > row[best])
				best = v;
		double mx = row[best], zz = 0;
		for (int v = 0; v < 23; v++)
			zz += exp(row[v] - mx);
		greedy_score += -log(zz);
		seq[3 + t] = best;
	}
	gb_beam out[4];
	int n;
	int rc = gb_beam_search(&m, k, prompt, 3, 1, 6, -1, NULL, NULL, out, &n, &err);
	tap_ok(rc == 0 && n == 1 && out[0].n == 6 && !memcmp(out[0].ids, seq + 3, 6 * sizeof(int)),
	       "beam width 1 is greedy decoding");
	tap_near(out[0].score, greedy_score, 1e-5, "beam width 1 scores the greedy sum of log-probabilities");
	gb_beams_free(out, n);

	rc = gb_beam_search(&m, k, prompt, 3, 4, 5, -1, NULL, NULL, out, &n, &err);
	tap_ok(rc == 0 && n == 4, "beam width 4 returns 4 beams");
	int sorted = 1;
	for (int i = 1; i < n; i++)
		sorted &= out[i - 1].score >= out[i].score;
	tap_ok(sorted, "beams come best first");
	/* Recompute the best beam's score from scratch. */
	double again = 0;
	memcpy(seq, prompt, sizeof prompt);
	memcpy(seq + 3, out[0].ids, 5 * sizeof(int));
	gb_forward(&m, seq, 8, NULL, 0, &tr, &o, &err);
	const gb_ttensor *lg = gb_trace_get(&tr, "logits");
	for (int t = 0; t < 5; t++) {
		const float *row = lg->data + (size_t)(2 + t) * 23;
		double mx = -INFINITY, zz = 0;
		for (int v = 0; v < 23; v++)
			mx = fmax(mx, row[v]);
		for (int v = 0; v < 23; v++)
			zz += exp(row[v] - mx);
		again += row[seq[3 + t]] - mx - log(zz);
	}
	tap_near(out[0].score, again, 1e-5, "the best beam's score is the sum of its tokens' log-probabilities");
	int distinct = 1;
	for (int a = 0; a < n; a++)
		for (int b = a + 1; b < n; b++)
			distinct &= memcmp(out[a].ids, out[b].ids, 5 * sizeof(int)) != 0;
	tap_ok(distinct, "the 4 beams are 4 different continuations");
	gb_beams_free(out, n);

	/* A step callback that says stop (Ctrl-C) ends the search with that step's beams. */
	int calls = 0;
	rc = gb_beam_search(&m, k, prompt, 3, 4, 5, -1, stop_after_2, &calls, out, &n, &err);
	tap_ok(rc == 0 && calls == 2 && n == 4 && out[0].n == 2 && out[3].n == 2,
	       "a callback returning non-zero after step 2 stops the search with 4 beams of 2 tokens (%d calls)", calls);
	gb_beams_free(out, n);
	gb_trace_free(&tr);
	gb_model_free(&m);
}

int main(void)
{
	filters();
	beams();
	return tap_done();
}
