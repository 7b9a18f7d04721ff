/* lazytrace.h — the state behind a lazily recorded trace (model/trace.h says what it keeps).
 * gb_forward makes one when a run's full record would pass the trace's budget; it then runs
 * each layer into the trace's arena and keeps only its cheap tensors. Asked for one of the
 * others, the trace reruns that tensor's group — one layer from its recorded input residual,
 * or the output (logits, probs) from the final stream — into a cache slot, with the run's
 * model, kernels and options, so the numbers are the ones the run computed. Asked for one head
 * of an attention tensor (gb_trace_slice) while its layer is not computed, it reruns only that
 * head's share of the attention block (its q, k and v columns, scores, weights, output) into a
 * slot of its own. The cache keeps the groups and heads asked for last while their bytes fit
 * the budget (always the one just asked for); computing a whole group drops its heads' slots.
 *
 * Internal to model/: forward.c fills it; app code sees only trace.h. */
#ifndef GLASSBOX_LAZYTRACE_H
#define GLASSBOX_LAZYTRACE_H

#include "model/forward.h"

enum { GB_LAZY_SLOTS = 32 };

/* The sub-layers a layer's tensors belong to, each replayed alone from the stream the run
 * kept entering it: self-attention (ln1.*, attn.*), cross-attention (an encoder-decoder
 * decoder's ln2.*, cross.*), the feed-forward network (its norm's .*, ffn.*). */
enum gb_part { GB_PART_ATTN, GB_PART_CROSS, GB_PART_FFN, GB_PARTS };

typedef struct gb_lazy_group {
	int stack;            /* 0: the encoder, 1: the decoder (or the only stack) */
	int layer;            /* 0-based; -1: logits, -2: probs */
	size_t floats;        /* what computing it takes (from the run) */
	size_t part_floats[GB_PARTS]; /* what computing each sub-layer takes */
} gb_lazy_group;

typedef struct gb_lazy_stack {
	char pfx[8];          /* "", "enc." or "dec." */
	int T, causal, ablate;
	int enc_out;          /* cross-attention's keys' source: the encoder's output entry, or -1 */
} gb_lazy_stack;

typedef struct gb_lazy {
	const gb_model *m;
	gb_fwd_opts o;        /* the run's kernels and options, without progress and stop */
	float *head_scale;    /* a copy of o.head_scale's (n_layer, n_head), or NULL */
	gb_lazy_stack st[2];
	int x_out;            /* the entry logits are computed from */
	gb_lazy_group *g;     /* group id i + 1 is g[i] */
	int n_g, cap_g;
	struct {
		int grp;          /* 0: empty */
		int part;         /* -1: the whole group (logits, probs); -2 - p: sub-layer p of a layer
		                   * (enum gb_part); >= 0: one head of it, block * n_head + head (block 0
		                   * self-attention, 1 cross-attention) */
		unsigned long used;
		gb_trace t;
	} slot[GB_LAZY_SLOTS];
	unsigned long clock;
	size_t bound;         /* the cache's bytes at most (but for the group just asked for) */
} gb_lazy;

/* A new state for the run about to fill tr (after gb_trace_reset), installed in tr. */
gb_lazy *gb_lazy_install(gb_trace *tr, const gb_model *m, const gb_fwd_opts *opts);

/* A new group; its id (> 0), or -1 when memory runs out. */
int gb_lazy_add_group(gb_lazy *z, int stack, int layer, size_t floats);

/* Computes group g (of main's run) into sub (reset first): logits or probs, or sub-layer
 * part (enum gb_part) of a layer from the stream the run kept entering it (replay.c). */
int gb_fwd_replay(const gb_lazy *z, const gb_trace *main, int g, int part, gb_trace *sub);

/* Computes query head h's share of group g's self-attention (cross 0) or cross-attention
 * (cross 1) into sub (reset first): the tensors gb_fwd_attention_head records, under the run's
 * names, from the stream the run kept entering that block (replay.c). */
int gb_fwd_replay_head(const gb_lazy *z, const gb_trace *main, int g, int cross, int h, gb_trace *sub);

#endif
