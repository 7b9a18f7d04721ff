/* kvcache.h — the key/value cache of decoding: each layer's keys and values (after RoPE where
 * the model uses it) for every position already run, so a new token costs one row of work per
 * layer instead of a forward pass over the whole text.
 *
 * Layout: per decoder layer, K = n_kv_head blocks of (cap, d_head) floats for keys and as many
 * for values (grouped-query models store only their K heads); position p of head h lives at
 * row p of block h, so one head's keys 0..len-1 are one contiguous (len, d_head) matrix that the
 * kernels read in place. New positions are written in place after the last one: nothing is
 * copied or moved as the cache grows, and nothing is reallocated after gb_kvcache_new.
 *
 * An encoder-decoder's cache also holds the cross-attention keys and values of every decoder
 * layer, computed once from the encoder's output by gb_kvcache_set_source (forward.h), and the
 * source ids (cross-attention's padding mask). Beams share nothing: gb_kvcache_copy copies.
 *
 * The cache does not own the model; it must outlive none of it. gb_forward_cached (forward.h)
 * runs tokens through it. */
#ifndef GLASSBOX_KVCACHE_H
#define GLASSBOX_KVCACHE_H

#include <stdint.h>

#include "model/err.h"
#include "model/model.h"

typedef struct gb_kvcache {
	int n_layer, n_kv_head, d_head;
	int cap;               /* positions it holds at most (<= n_ctx) */
	int len;               /* positions filled: 0 .. len-1 */
	float *k, *v;          /* (n_layer, n_kv_head, cap, d_head) each */
	int *ids;              /* (cap) the token at each position (labels, the padding mask) */
	/* encoder-decoder only */
	int encdec;
	int src_cap, n_src;    /* source positions allocated (n_ctx) and set (0: no source yet) */
	float *ck, *cv;        /* (n_layer, n_kv_head, src_cap, d_head) cross-attention keys, values */
	int *src;              /* (src_cap) the source ids */
	uint64_t src_stamp;    /* which gb_kvcache_set_source filled ck/cv (copies skip equal ones) */
} gb_kvcache;

/* A cache for up to cap positions (1 <= cap <= n_ctx) of m's decoder; NULL with err set when
 * cap is out of range or memory runs out. */
gb_kvcache *gb_kvcache_new(const gb_model *m, int cap, gb_err *err);
void gb_kvcache_free(gb_kvcache *c);

/* Positions filled. */
int gb_kvcache_len(const gb_kvcache *c);

/* Forgets positions n.. (0 <= n <= len; other n are clamped): the next gb_forward_cached
 * continues at position n. The source of an encoder-decoder is kept. */
void gb_kvcache_truncate(gb_kvcache *c, int n);

/* Makes dst hold what src holds (its positions and, for an encoder-decoder, its source),
 * copying only the filled positions. Both must come from the same model's shape and dst's
 * capacity must reach src's length; -1 with err set otherwise. */
int gb_kvcache_copy(gb_kvcache *dst, const gb_kvcache *src, gb_err *err);

/* Block of keys (values) of layer l (0-based), kv head h: (cap, d_head), row p = position p. */
static inline float *gb_kvcache_k(const gb_kvcache *c, int l, int h)
{
	return c->k + ((size_t)l * c->n_kv_head + h) * c->cap * c->d_head;
}
static inline float *gb_kvcache_v(const gb_kvcache *c, int l, int h)
{
	return c->v + ((size_t)l * c->n_kv_head + h) * c->cap * c->d_head;
}

#endif
