/* decode.h — from logits to tokens: temperature, top-k and top-p sampling, greedy decoding
 * and beam search, beside the forward pass and running through it. */
#ifndef GLASSBOX_DECODE_H
#define GLASSBOX_DECODE_H

#include <signal.h>

#include "model/forward.h"
#include "model/rng.h"

typedef struct gb_sampling {
	double temp;     /* 0: greedy (argmax); otherwise logits are divided by temp */
	int top_k;       /* keep the k most probable (0: all) */
	double top_p;    /* keep the smallest set whose probability reaches p (1: all) */
} gb_sampling;

/* log(sum_v exp(row[v])) of a row of logits (V), computed stably in double: a token's
 * log-probability is row[id] minus it. */
double gb_logsumexp(const float *row, int V);

/* The last position's row of a trace's logits (V floats; *V receives the vocabulary size). */
const float *gb_last_logits(const gb_trace *tr, int *V);

/* The distribution sampling draws from, into probs (V): softmax(logits / temp), then top-k,
 * then top-p, renormalized (greedy: 1 on the argmax). Returns how many tokens keep a
 * probability above 0. Ties in top-k and top-p are broken by the lower id. */
int gb_sampling_probs(const float *logits, int V, const gb_sampling *s, double *probs);

/* Draws a token from logits (V) under s, with rng (unused for greedy). *p gets the chosen
 * token's probability under the filtered distribution (may be NULL). */
int gb_sample(const float *logits, int V, const gb_sampling *s, gb_rng *rng, double *p);

/* Greedy decoding of an encoder-decoder: tgt (at least n_ctx) starts with the decoder start
 * token and grows by the argmax until eos (not kept) or the context is full; *n_tgt counts
 * the start token. Runs through a key/value cache: the encoder once, then one token a step.
 * tr holds the last step's cached run (one row; tr->pos0 is its position): run gb_forward on
 * the result for the whole trace. stop (may be NULL) ends the loop early when it becomes
 * non-zero (Ctrl-C). */
int gb_greedy_decode(const gb_model *m, const gb_fwd_opts *o, const int *src, int n_src, gb_trace *tr, int *tgt,
                     int *n_tgt, const volatile sig_atomic_t *stop, gb_err *err);

/* One hypothesis of a beam search. */
typedef struct gb_beam {
	int *ids;        /* (n) the generated tokens (not the prompt) */
	int n;
	double score;    /* sum of log-probabilities of the generated tokens */
	int done;        /* ended with eos */
} gb_beam;

/* Called after every step of a beam search with the beams kept at that step (best first);
 * a non-zero return stops the search there (Ctrl-C), with those beams as the result. */
typedef int (*gb_beam_step_fn)(void *arg, int step, const gb_beam *beams, int n_beams);

/* Beam search of width k for up to steps tokens after the prompt (ids, n) of a decoder-only
 * model, or after the decoder start for an encoder-decoder (ids is then the source). Beams
 * that produce eos_id (when >= 0) are finished and kept. out (k) receives the final beams,
 * best first (free with gb_beams_free). Each live beam has a key/value cache (at most k exist,
 * reused step after step): the prompt runs once, then each step runs one token per beam; a
 * kept beam inherits its parent's cache, a second child of one parent a copy of it. Equal
 * scores keep the order the candidates were made in (beam by beam, most probable first). */
int gb_beam_search(const gb_model *m, const gb_kernels *kt, const int *ids, int n, int k, int steps,
                   int eos_id, gb_beam_step_fn fn, void *arg, gb_beam *out, int *n_out, gb_err *err);
void gb_beams_free(gb_beam *b, int n);

#endif
