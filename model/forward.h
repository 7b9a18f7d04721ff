/* forward.h — one forward pass, written once for every architecture glassbox supports,
 * computing through a kernel table and recording every intermediate in a Trace. */
#ifndef GLASSBOX_FORWARD_H
#define GLASSBOX_FORWARD_H

#include <signal.h>

#include "model/err.h"
#include "model/kernels/kernels.h"
#include "model/kvcache.h"
#include "model/model.h"
#include "model/trace.h"

typedef struct gb_fwd_opts {
	const gb_kernels *k;         /* NULL: the fast table */
	/* Per (layer, head) output scale, decoder (or decoder-only) self-attention, (n_layer, n_head);
	 * NULL for all ones. 0 ablates a head. */
	const float *head_scale;
	int textbook_ln;             /* force the textbook's LayerNorm (sigma + eps) */
	int no_mask;                 /* decoder self-attention without the causal mask (a lesson); with
	                              * a cache, a run's tokens see each other and every cached one,
	                              * but cached positions never saw the tokens after them */
	/* A long run (a real model, a long text) can be watched and stopped between layers:
	 * progress (may be NULL) is called after each layer with the layers done and the run's
	 * total; when *stop becomes non-zero the run ends before the next layer and fails with
	 * "stopped" (the trace is emptied; a cache keeps the positions it had). */
	void (*progress)(void *arg, int done, int total);
	void *progress_arg;
	const volatile sig_atomic_t *stop;
	/* A sparse attention pattern on top of the causal mask (issue 19: masks applied to a run),
	 * for decoder (or decoder-only) softmax self-attention: allow(allow_arg, i, j) is 0 where
	 * query position i may not see key position j (-inf before the softmax, as the causal
	 * mask). NULL: none. Linear attention ignores it. allow_arg must outlive the trace (a lazy
	 * trace recomputes layers with these options). */
	int (*allow)(const void *arg, int i, int j);
	const void *allow_arg;
} gb_fwd_opts;

/* Runs ids (n) through the model and fills tr (reset first). For an encoder-decoder, ids is
 * the source and tgt (n_tgt) the decoder input; for decoder-only, tgt must be NULL.
 * Fails (with a message naming the problem) on an empty input, an id outside the vocabulary,
 * or more tokens than the context holds. */
int gb_forward(const gb_model *m, const int *ids, int n, const int *tgt, int n_tgt, gb_trace *tr,
               const gb_fwd_opts *opts, gb_err *err);

/* Runs n new tokens (ids) at positions len .. len + n - 1 of the cache (len =
 * gb_kvcache_len(kc)) and appends their keys and values: decoder-only, the text's next tokens;
 * encoder-decoder, the decoder input's, after gb_kvcache_set_source. Prefill is this call on an
 * empty cache with the whole prompt; a decoding step is this call with the one new token.
 *
 * tr records these tokens only, under gb_forward's names: every (token, ...) tensor has n
 * rows; L*.attn.scores/masked/weights are (head, query = n, key = len + n), so the new tokens'
 * attention over every earlier position is there; L*.attn.k/v hold the n new rows; tr->pos0 is
 * len (the position of row 0) and tr->ids (tr->tgt for an encoder-decoder) hold the whole
 * sequence 0 .. len + n - 1. The numbers are gb_forward's rows len .. len + n - 1 on the whole
 * sequence (exactly so with the reference table; within float rounding with the fast ones). An
 * encoder-decoder's step has no enc.* tensors (gb_kvcache_set_source's trace has them).
 *
 * Fails, leaving the cache as it was, when the tokens do not fit (the context is full), an id
 * is outside the vocabulary, or the cache belongs to another model. */
int gb_forward_cached(const gb_model *m, gb_kvcache *kc, const int *ids, int n, gb_trace *tr,
                      const gb_fwd_opts *opts, gb_err *err);

/* Encoder-decoder: runs the encoder on src (n_src), computes every decoder layer's
 * cross-attention keys and values once into the cache, and empties the decoder's positions.
 * tr (may be NULL) receives the encoder's trace (enc.* as gb_forward records them). */
int gb_kvcache_set_source(gb_kvcache *kc, const gb_model *m, const int *src, int n_src, gb_trace *tr,
                          const gb_fwd_opts *opts, gb_err *err);

/* The sinusoidal encoding, shared with the views: pe (T, D) for positions 0..T-1. */
void gb_sinusoid(float *pe, int T, int D);

/* out (T, l->out) = x (T, l->in) W + b through table k: 16-bit weights (a BF16/F16 file's,
 * kept as read) through matmul_w16, float ones through matmul. Every use of a model's linear
 * layer goes through here, so none forgets the 16-bit case. */
void gb_linear_apply(const gb_kernels *k, float *out, const float *x, int T, const gb_linear *l);

/* ALiBi's slope for head h (0-based) of n. */
double gb_alibi_slope(int h, int n);

/* T5's bucket of a key at offset rel = key position - query position, for a self-attention
 * with nb buckets and max distance maxd: causal (decoder) buckets count how far back the key
 * is (a later key, masked anyway, shares bucket 0); bidirectional (encoder) ones use half the
 * buckets for keys after the query. Small offsets get a bucket each (the first half), larger
 * ones log-spaced buckets up to maxd, beyond it the last; computed in float as T5's
 * _relative_position_bucket does. */
int gb_t5_bucket(int rel, int bidirectional, int nb, int maxd);

/* A mixture of experts' routing decision for one token, from its router probabilities p (E,
 * the softmax of its router logits): the top k experts (k is 1 or 2) into pick, best first, the
 * lower index winning a tie, and their gate weights into gate: the probabilities renormalised
 * over the chosen (Mixtral's rule, renorm) or as they are (Switch's). The engine (moe.c) and
 * the trainer's float and double passes route through it; a float row converts to double
 * exactly, so each gets the numbers its own loop gave. */
void gb_moe_route(const double *p, int E, int k, int renorm, int *pick, double *gate);

/* elu(x) + 1, linear attention's feature map: x + 1 for x > 0, e^x otherwise (always > 0). */
double gb_elu1(double x);

/* RoPE rotation in place of x (T, E) for positions pos0 .. pos0 + T - 1; pairs is the
 * config's rope_pairs (GB_ROPE_HALF: features f, f + E/2; GB_ROPE_ADJACENT: 2f, 2f + 1). */
void gb_rope(float *x, int T, int E, int pos0, const gb_config *c);

#endif
