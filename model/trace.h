/* trace.h — the record of one run: every intermediate of the forward pass as a named tensor
 * with its shape and what each axis means. Anything glassbox shows comes from a Trace, so
 * anything it shows can also be dumped.
 *
 * Names (layers and heads count from 1; an encoder-decoder prefixes "enc." or "dec."):
 *   tokens                      (token)                   the input ids, as numbers
 *   embed.tok                   (token, feature)          E[id] (times sqrt(D) when scaled)
 *   embed.pos                   (position, feature)       sinusoidal or learned positions
 *   embed.sum                   (token, feature)          the residual stream entering layer 1
 *   Ll.lnK.in / .out            (token, feature)          norm K's input and output (K = 1, 2, 3)
 *   Ll.lnK.mean, .var | .rms    (token)                   LayerNorm's statistics | RMSNorm's
 *   Ll.attn.q                   (head, token, feature)    per head, after RoPE where used
 *   Ll.attn.k, Ll.attn.v        (kv_head, token, feature)
 *   Ll.attn.scores              (head, query, key)        q . k, raw
 *   Ll.attn.masked              (head, query, key)        scores / sqrt(E) + ALiBi bias, -inf masked
 *   Ll.attn.weights             (head, query, key)        softmax of masked, rows sum to 1
 *   Ll.attn.rel_bias            (head, query, key)        T5 positions: the learned bias added to
 *                                                         each score (its offset's bucket's value)
 *   Ll.attn.q_feat              (head, token, feature)    linear attention: elu(q) + 1
 *   Ll.attn.k_feat              (kv_head, key, feature)   linear attention: elu(k) + 1, every key
 *                               (linear attention's scores are q_feat . k_feat, masked has -inf
 *                               where masked, weights = masked / its row sum: the n x n weights
 *                               the recurrent form implies)
 *   Ll.attn.reach               (head, query)             sum_j weights(i, j) (i - j): how far back
 *                                                         query i looks (self-attention only)
 *   Ll.attn.head_out            (head, token, feature)    weights . v
 *   Ll.attn.merged              (token, feature)          the heads side by side
 *   Ll.attn.out                 (token, feature)          merged . Wo
 *   Ll.cross.*                  as attn, keys from the encoder (encoder-decoder decoders)
 *   Ll.resid.mid                (token, feature)          after the attention sub-layer(s)
 *   Ll.ffn.up                   (token, ffn)              before the activation
 *   Ll.ffn.gate                 (token, ffn)              SwiGLU's gate, before silu
 *   Ll.ffn.hidden               (token, ffn)              after the activation (and gate)
 *   Ll.ffn.out                  (token, feature)
 *   with a mixture of experts, Ll.ffn.up/.gate/.hidden are (expert, token, ffn), rows of the
 *   tokens an expert did not get all 0, and the routing is recorded:
 *   Ll.ffn.router               (token, expert)           router logits x Wr
 *   Ll.ffn.router_probs         (token, expert)           their softmax
 *   Ll.ffn.chosen               (token, choice)           the top-k experts, as numbers (0-based)
 *   Ll.ffn.gates                (token, expert)           each expert's weight in the output (0
 *                                                         unless chosen)
 *   Ll.ffn.expert_out           (expert, token, feature)  each chosen expert's output
 *   Ll.ffn.load                 (expert)                  share of the run's choices per expert
 *   Ll.resid.post               (token, feature)          the residual stream leaving layer l
 *   lnf.in/.out/.mean/.var|.rms                           the final norm
 *   logits, probs               (token, vocab)            (an encoder-decoder: the decoder's)
 * Tensors may alias each other's data (e.g. pre-norm's L1.ln1.in is embed.sum).
 *
 * A run through a key/value cache (gb_forward_cached) records only its new tokens: pos0 is the
 * position of their first row, every (token, ...) and (position, ...) tensor has a row per new
 * token, and attention's (head, query, key) tensors have a query row per new token and a key
 * column for every position 0 .. pos0 + rows - 1. ids (tgt) still hold the whole sequence, so
 * row r is the token ids[pos0 + r] and key column j the token ids[j]. A full run has pos0 0.
 *
 * A long run is recorded lazily (model/lazytrace.h): when the full record would pass the
 * trace's budget, gb_forward keeps what is cheap (tokens, embeddings, every residual stream,
 * the norms' statistics, the final norm) and lists the rest (a layer's norm outputs, q/k/v,
 * attention tables, head outputs, feed-forward units; logits and probs) with its shape but no
 * data. gb_trace_get and gb_trace_at compute such a tensor on demand, with the rest of its
 * sub-layer (a layer's self-attention, cross-attention or FFN, from the recorded residual
 * entering it) or of logits or probs, and keep the last ones asked for while they fit in the
 * budget; gb_trace_slice computes one head of an attention tensor alone. Their data stays
 * valid until something else is computed; read tr->t[i].data only through gb_trace_at. */
#ifndef GLASSBOX_TRACE_H
#define GLASSBOX_TRACE_H

#include <stdarg.h>
#include <stddef.h>

#include "model/err.h"

enum gb_axis { GB_AX_TOKEN, GB_AX_POSITION, GB_AX_HEAD, GB_AX_KV_HEAD, GB_AX_QUERY, GB_AX_KEY,
               GB_AX_FEATURE, GB_AX_FFN, GB_AX_VOCAB, GB_AX_EXPERT, GB_AX_CHOICE, GB_AX_N };

#define GB_TRACE_MAXDIM 3

typedef struct gb_ttensor {
	char name[48];
	int ndim;
	int shape[GB_TRACE_MAXDIM];
	unsigned char axes[GB_TRACE_MAXDIM]; /* enum gb_axis */
	size_t n;                            /* element count */
	float *data;                         /* NULL: not computed yet (group > 0) */
	int group;                           /* 0: recorded; > 0: a lazy trace's group */
} gb_ttensor;

typedef struct gb_trace {
	gb_ttensor *t;
	int n, cap;
	/* The tensors' memory: one block reused run after run, grown when a run needs more. */
	float *block;
	size_t used, size;     /* floats */
	size_t want;           /* what the last run asked for, to size the next block */
	float **spill;         /* allocations that did not fit in block during this run */
	int n_spill, cap_spill;
	/* The inputs of the run. */
	int *ids, n_ids;       /* decoder-only: the text; encoder-decoder: the source */
	int *tgt, n_tgt;       /* encoder-decoder: the decoder's input ids */
	int encdec;
	int pos0;              /* position of the first token row (0 but for a cached run) */
	int truncated;         /* tokens dropped from the front to fit the context (0 if none) */
	size_t spilled;        /* floats in spill */
	/* Lazy recording. budget (bytes; 0: $GLASSBOX_TRACE_BUDGET MB, else 256 MB) is both the
	 * size above which a run records lazily and the bound of the cache of computed groups. */
	size_t budget;
	/* While a lazy run is inside a layer its tensors go to the arena, freed when it ends. */
	int in_arena;
	float *arena;
	size_t arena_used, arena_size;
	float **aspill;
	int n_aspill, cap_aspill;
	const float *tail_logits;                  /* a lazy run: logits' last row (vocab) */
	void *lazy;                                /* model/lazytrace.c's state, or NULL */
	int (*lazy_fetch)(struct gb_trace *, int); /* computes entry i's group; 0 on success */
	/* slice j of entry i's first axis, computed alone where the lazy trace can (one head of
	 * an attention tensor); NULL: it cannot, or it failed */
	const float *(*lazy_slice)(struct gb_trace *, int i, int j);
	void (*lazy_free)(void *);
	size_t (*lazy_bytes)(const void *);        /* the cache's bytes */
} gb_trace;

const char *gb_axis_name(int axis);

/* Forgets the tensors of the previous run (their memory is reused). */
void gb_trace_reset(gb_trace *tr);
void gb_trace_free(gb_trace *tr);

/* A new tensor of the given shape (ndim 1..3, axes as enum gb_axis), uninitialized; NULL when
 * memory runs out. The name is formatted like printf. */
float *gb_trace_add(gb_trace *tr, int ndim, const int *shape, const unsigned char *axes,
                    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* A new name for data that already is in the trace (no copy). */
int gb_trace_alias(gb_trace *tr, const gb_ttensor *src, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The two above with a va_list. */
float *gb_trace_addv(gb_trace *tr, int ndim, const int *shape, const unsigned char *axes,
                     const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));
int gb_trace_aliasv(gb_trace *tr, const gb_ttensor *src, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/* Looks a tensor up by name, computing it first if the trace is lazy; NULL when absent (or
 * when memory runs out computing it). */
const gb_ttensor *gb_trace_get(const gb_trace *tr, const char *name);

/* The entry named name as listed, never computed (a lazy trace's may have no data yet): for
 * its shape and axes. NULL when absent. */
const gb_ttensor *gb_trace_find(const gb_trace *tr, const char *name);

/* Slice j (0-based) of the first axis of a 3-D tensor: one head of a (head, ...) tensor, one
 * key/value head of a (kv_head, ...) one. Fills *out with the slice as a 2-D tensor (the
 * entry's name, its last two axes, data pointing at the slice's rows) and returns 0; -1 when
 * the tensor is absent or not 3-D, j is out of range, or computing fails. A lazy trace whose
 * layer is not computed computes only that head's share of its attention (q, k, v, scores,
 * masked, weights, rel_bias, q_feat, k_feat, head_out), not the whole layer; other tensors
 * are computed as gb_trace_get does. The data stays valid as gb_trace_get's: until another
 * group or head is computed. */
int gb_trace_slice(const gb_trace *tr, const char *name, int j, gb_ttensor *out);

/* Entry i (0 <= i < tr->n), computed first if needed; NULL when that fails. */
const gb_ttensor *gb_trace_at(const gb_trace *tr, int i);

/* The last row of a (token, ...) tensor: of a lazy trace's logits, the row the run kept
 * (without computing the rest); NULL when absent. */
const float *gb_trace_last_row(const gb_trace *tr, const char *name);

/* The budget in bytes (tr->budget, or the environment's, or the default). */
size_t gb_trace_budget(const gb_trace *tr);

/* Bytes the trace holds: its block, spills and arena, and a lazy trace's computed groups;
 * gb_trace_cache_bytes: those groups only. */
size_t gb_trace_bytes(const gb_trace *tr);
size_t gb_trace_cache_bytes(const gb_trace *tr);

/* For gb_forward's lazy mode: a tensor listed without data (computed by group g on demand). */
int gb_trace_add_lazy(gb_trace *tr, int ndim, const int *shape, const unsigned char *axes, int g,
                      const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Sends the allocations that follow to the arena (floats: its size to start with). */
void gb_trace_arena_begin(gb_trace *tr, size_t floats);

/* Ends the arena: of entries first .. n - 1 whose data is in it, those keep() accepts (by
 * name) are copied to the trace's own memory (with every entry sharing their data); the others
 * lose their data and join group g. The arena is then empty. */
void gb_trace_arena_end(gb_trace *tr, int first, int g, int (*keep)(const char *name));

/* Frees the arena's memory (the end of a lazy run). */
void gb_trace_arena_free(gb_trace *tr);

/* Scratch memory for the duration of a run (not a named tensor). */
float *gb_trace_scratch(gb_trace *tr, size_t n);

/* Writes one tensor as .npy (NumPy format 1.0, little-endian float32, C order) or .csv (2-D:
 * one row per line; 3-D: rows of the last two axes, blocks separated by a blank line and a
 * "# head N" comment), chosen by the file's extension; atomic. An existing file is replaced
 * only with force. */
int gb_trace_dump(const gb_ttensor *t, const char *path, int force, gb_err *err);

#endif
