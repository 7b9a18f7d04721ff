/* kvcache.c — the cache's memory: allocated once at its full capacity, so appending a position
 * (gb_forward_cached, in forward.c) writes rows in place and never moves what is there. */
#include "model/kvcache.h"

#include <stdlib.h>
#include <string.h>

gb_kvcache *gb_kvcache_new(const gb_model *m, int cap, gb_err *err)
{
	const gb_config *cf = &m->cfg;
	if (cap < 1 || cap > cf->n_ctx) {
		gb_fail(err, "a key/value cache holds 1 to %d positions (the context), not %d", cf->n_ctx, cap);
		return NULL;
	}
	gb_kvcache *c = calloc(1, sizeof *c);
	if (!c) {
		gb_fail(err, "out of memory");
		return NULL;
	}
	c->n_layer = cf->n_layer;
	c->n_kv_head = cf->n_kv_head;
	c->d_head = cf->d_head;
	c->cap = cap;
	c->encdec = cf->encdec;
	size_t per = (size_t)c->n_layer * c->n_kv_head * c->d_head;
	c->k = malloc(per * (size_t)cap * sizeof(float));
	c->v = malloc(per * (size_t)cap * sizeof(float));
	c->ids = malloc((size_t)cap * sizeof(int));
	int ok = c->k && c->v && c->ids;
	if (ok && c->encdec) {
		c->src_cap = cf->n_ctx;
		c->ck = malloc(per * (size_t)c->src_cap * sizeof(float));
		c->cv = malloc(per * (size_t)c->src_cap * sizeof(float));
		c->src = malloc((size_t)c->src_cap * sizeof(int));
		ok = c->ck && c->cv && c->src;
	}
	if (!ok) {
		gb_kvcache_free(c);
		gb_fail(err, "out of memory for a key/value cache of %d positions", cap);
		return NULL;
	}
	return c;
}

void gb_kvcache_free(gb_kvcache *c)
{
	if (!c)
		return;
	free(c->k);
	free(c->v);
	free(c->ids);
	free(c->ck);
	free(c->cv);
	free(c->src);
	free(c);
}

int gb_kvcache_len(const gb_kvcache *c) { return c->len; }

void gb_kvcache_truncate(gb_kvcache *c, int n)
{
	if (n < 0)
		n = 0;
	if (n < c->len)
		c->len = n;
}

/* Copies positions 0..n-1 of every (layer, head) block from src (stride scap) to dst (dcap). */
static void copy_blocks(float *dst, int dcap, const float *src, int scap, int blocks, int n, int E)
{
	for (int b = 0; b < blocks; b++)
		memcpy(dst + (size_t)b * dcap * E, src + (size_t)b * scap * E, (size_t)n * E * sizeof(float));
}

int gb_kvcache_copy(gb_kvcache *dst, const gb_kvcache *src, gb_err *err)
{
	if (dst == src)
		return 0;
	if (dst->n_layer != src->n_layer || dst->n_kv_head != src->n_kv_head || dst->d_head != src->d_head ||
	    dst->encdec != src->encdec || dst->src_cap != src->src_cap)
		return gb_fail(err, "key/value caches of different model shapes cannot be copied");
	if (src->len > dst->cap)
		return gb_fail(err, "a cache of %d positions cannot take a copy of %d", dst->cap, src->len);
	int blocks = src->n_layer * src->n_kv_head, E = src->d_head;
	copy_blocks(dst->k, dst->cap, src->k, src->cap, blocks, src->len, E);
	copy_blocks(dst->v, dst->cap, src->v, src->cap, blocks, src->len, E);
	memcpy(dst->ids, src->ids, (size_t)src->len * sizeof(int));
	dst->len = src->len;
	/* The source is copied only when dst holds another one (beams of one search share it). */
	if (src->encdec && (dst->src_stamp != src->src_stamp || dst->n_src != src->n_src)) {
		copy_blocks(dst->ck, dst->src_cap, src->ck, src->src_cap, blocks, src->n_src, E);
		copy_blocks(dst->cv, dst->src_cap, src->cv, src->src_cap, blocks, src->n_src, E);
		memcpy(dst->src, src->src, (size_t)src->n_src * sizeof(int));
		dst->n_src = src->n_src;
		dst->src_stamp = src->src_stamp;
	}
	return 0;
}
