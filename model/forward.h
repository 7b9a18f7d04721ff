/* forward.h — one forward pass, written once for every architecture glassbox supports,
 * computing through a kernel table and recording every intermediate in a Trace. */
#ifndef GLASSBOX_FORWARD_H
#define GLASSBOX_FORWARD_H

#include "model/err.h"
#include "model/kernels/kernels.h"
#include "model/model.h"
#include "model/trace.h"

typedef struct gb_fwd_opts {
	const gb_kernels *k;         /* NULL: the fast table */
	/* Per (layer, head) output scale, decoder (or decoder-only) self-attention, (n_layer, n_head);
	 * NULL for all ones. 0 ablates a head. */
	const float *head_scale;
	int textbook_ln;             /* force the textbook's LayerNorm (sigma + eps) */
	int no_mask;                 /* decoder self-attention without the causal mask (a lesson) */
} gb_fwd_opts;

/* Runs ids (n) through the model and fills tr (reset first). For an encoder-decoder, ids is
 * the source and tgt (n_tgt) the decoder input; for decoder-only, tgt must be NULL.
 * Fails (with a message naming the problem) on an empty input, an id outside the vocabulary,
 * or more tokens than the context holds. */
int gb_forward(const gb_model *m, const int *ids, int n, const int *tgt, int n_tgt, gb_trace *tr,
               const gb_fwd_opts *opts, gb_err *err);

/* The sinusoidal encoding, shared with the views: pe (T, D) for positions 0..T-1. */
void gb_sinusoid(float *pe, int T, int D);

/* ALiBi's slope for head h (0-based) of n. */
double gb_alibi_slope(int h, int n);

/* RoPE rotation in place of x (T, E) for positions pos0 .. pos0 + T - 1; pairs is the
 * config's rope_pairs (GB_ROPE_HALF: features f, f + E/2; GB_ROPE_ADJACENT: 2f, 2f + 1). */
void gb_rope(float *x, int T, int E, int pos0, float theta, int pairs);

#endif
