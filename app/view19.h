/* view19.h — issue 19's views of what each architecture choice does: the loss along the text
 * and runs past the trained context (view_loss.c), positions (view_pos.c), two models side by
 * side (cmd_compare_models.c), shared key/value heads (view_kv.c), the mixture of experts'
 * routing (view_moe.c). Each view returns a new figure, or NULL after a one-line error. */
#ifndef GLASSBOX_VIEW19_H
#define GLASSBOX_VIEW19_H

#include "app/bench_attn.h"
#include "app/session.h"
#include "viz/figure.h"

/* The current text's next-token losses, -log p(token i + 1 | tokens 0..i), from the logits in
 * double: *out (n - 1, malloc'd) and the predicted ids in *targets (may be NULL). Returns
 * n - 1, or -1 after an error line. */
int text_losses(session *s, double **out, int **targets);
/* The losses as a token strip (curve 0) or a curve over the positions with its running mean
 * (curve 1); past the trained context (set context) the curve is its own line. */
gb_figure *view_loss(session *s, int curve);
/* set context N|trained (cmd_set's hook): 0, or -1 after an error line. */
int set_context(session *s, const char *v);

/* Positions (view_pos.c). The score or bias by query-key offset, per head, of layer L: ALiBi's
 * and T5's bias from the model, any other model's mean scaled score at each offset of the
 * current text. */
gb_figure *view_pos_offset(session *s, int layer);

/* The shift test: the current text run alone (positions 0..n-1) and after `by` copies of its
 * first token (positions by..by+n-1), each in a trace of its own; a and b (head, n, n) are
 * layer L's scaled, masked scores among the text's tokens in the two runs, maxdiff (head)
 * the largest |a - b| over the pairs the mask lets through, maxabs (head) the largest |a|. */
typedef struct shift_result {
	int n, H, by, layer;
	float *a, *b;
	double *maxdiff, *maxabs;
} shift_result;
int shift_test(session *s, int layer, int by, shift_result *r);
void shift_free(shift_result *r);
/* Head h's (0-based) scores are the same at both offsets, up to float rounding. */
int shift_equal(const shift_result *r, int h);
/* The two runs' scores of head (from 1) side by side on one scale, the verdict in the title. */
gb_figure *view_shift(session *s, const shift_result *r, int head);
/* RoPE: cos(i theta_k) over the offset i for the pairs given (np 0: four from fast to slow). */
gb_figure *view_rope_pairs(session *s, const int *pairs, int np);
/* ALiBi: each head's slope, as bars. */
gb_figure *view_alibi_slopes(session *s);
/* T5: layer L's table, head x bucket, each bucket labelled with the offsets it covers. */
gb_figure *view_t5_buckets(session *s, int layer);

/* Mixture of experts (view_moe.c), layer L: the tokens x experts map of the router's
 * probabilities with the chosen marked "[p]"; the load per expert; each expert's N most
 * frequent tokens on the text (experts x N, the count in each cell, the token drawn in it). */
gb_figure *view_moe_routing(session *s, int layer);
gb_figure *view_moe_load(session *s, int layer);
gb_figure *view_moe_tokens(session *s, int layer, int N);

/* Linear attention (view_linear.c), head H of layer L: the running state S_i (T, E, E) after
 * each key, computed again from the trace's q_feat, k_feat and v; max_orders the largest
 * |recurrent - quadratic| output (phi(q) S / phi(q).z against the implied weights times v),
 * max_engine the largest |recurrent - the engine's head_out|, max_out the largest |output|. */
typedef struct linear_result {
	int T, E, layer, head;
	float *state;
	double max_orders, max_engine, max_out;
} linear_result;
int linear_check(session *s, int layer, int head, linear_result *r);
void linear_free(linear_result *r);
/* The state after T/n, 2T/n, ..., T keys: n panels on one scale. */
gb_figure *view_linear_state(session *s, const linear_result *r, int n_steps);
/* The implied n x n weights beside the state after every key, each panel divided by its own
 * largest |value| (named in its title), on one diverging scale. */
gb_figure *view_linear_both(session *s, const linear_result *r);

/* Masks applied to a run (view_mask.c). The session's pattern (session.h's mask_spec) on top
 * of the causal mask: window W (i - j < W), blocks B (i / B == j / B), strided S (i - j < S or
 * a multiple of S), dilated W D (i - j a multiple of D below W D), global G W (the first G
 * tokens, and a window of W). */
enum mask_kind { MASK_NONE, MASK_WINDOW, MASK_BLOCKS, MASK_STRIDED, MASK_DILATED, MASK_GLOBAL, MASK_N };
/* gb_fwd_opts' allow: arg is a struct mask_spec. */
int mask_allow(const void *arg, int i, int j);
void mask_name(const struct mask_spec *m, char *out, size_t cap);
/* Puts the session's pattern (if any) into o: every run of the session's text uses it. */
void mask_opts(session *s, gb_fwd_opts *o);
/* set mask KIND [A [B]] (argv from "mask" on): the pattern for every run, the current text run
 * again, the change in loss and predictions printed and drawn. */
int set_mask(session *s, int argc, char **argv);
/* Which tokens each position can reach after 1..L layers under the pattern (T positions, 0:
 * the current text's, at most 64). */
gb_figure *view_receptive(session *s, int T);

/* The measured cost of attention (bench_attn.c) on log2-log2 axes: time (memory 0) or
 * memory (1) against the length for softmax, sliding-window and linear attention. */
gb_figure *view_cost(session *s, const attn_cost *c, int memory);

/* Norms (view_norms.c). norm (n_layer + 1): the L2 norm of the gradient of the current text's
 * mean next-token loss with respect to each layer's weights (norm[0]: the embeddings, the
 * final norm and the output), from a forward and a backward pass of the trainer's own code;
 * *loss the mean loss. The model is loaded again from its folder for it (the copy made
 * writable, as the trainer needs); the session's model is untouched. fd (n_layer + 1, may be
 * NULL) gets the check: the loss's slope along each layer's gradient direction by central
 * differences of the forward pass alone, which is ||g_l|| when the backward pass is right. */
int layer_grad_norms(session *s, double *norm, double *loss, double *fd);
/* The residual stream's mean norm after the embedding and each layer (grad 0), or the
 * gradient norms per layer (grad 1), as a line over the layers. */
gb_figure *view_norms(session *s, int grad);

#endif
