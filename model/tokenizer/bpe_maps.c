/* bpe_maps.c — the tokenizer module's two hash maps (declared in tokenizer_impl.h): merge
 * ranks by (left id, right id), and ids by byte string. */
#include "model/tokenizer/tokenizer_impl.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- hash maps ------------------------------------------------------------------------
 * Open addressing with linear probing, power-of-two capacity, at most half full. */

static uint64_t mix64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k;
}

#define PMAP_EMPTY UINT64_MAX

static uint64_t pkey(int a, int b) { return (uint64_t)(uint32_t)a << 32 | (uint32_t)b; }

int gb_bpe_pmap_init(pmap *m, size_t want)
{
	size_t cap = 16;
	while (cap < want * 2)
		cap <<= 1;
	m->key = malloc(cap * sizeof *m->key);
	m->val = malloc(cap * sizeof *m->val);
	m->cap = cap;
	m->n = 0;
	if (!m->key || !m->val) {
		free(m->key);
		free(m->val);
		m->key = NULL;
		m->val = NULL;
		m->cap = 0;
		return -1;
	}
	memset(m->key, 0xFF, cap * sizeof *m->key);
	return 0;
}

void gb_bpe_pmap_free(pmap *m)
{
	free(m->key);
	free(m->val);
	m->key = NULL;
	m->val = NULL;
	m->cap = m->n = 0;
}

int gb_bpe_pmap_get(const pmap *m, int a, int b)
{
	uint64_t k = pkey(a, b);
	size_t mask = m->cap - 1, i = (size_t)mix64(k) & mask;
	while (m->key[i] != PMAP_EMPTY) {
		if (m->key[i] == k)
			return m->val[i];
		i = (i + 1) & mask;
	}
	return -1;
}

static int pmap_grow(pmap *m)
{
	pmap g;
	if (gb_bpe_pmap_init(&g, m->cap))
		return -1;
	size_t mask = g.cap - 1;
	for (size_t i = 0; i < m->cap; i++) {
		if (m->key[i] == PMAP_EMPTY)
			continue;
		size_t j = (size_t)mix64(m->key[i]) & mask;
		while (g.key[j] != PMAP_EMPTY)
			j = (j + 1) & mask;
		g.key[j] = m->key[i];
		g.val[j] = m->val[i];
	}
	g.n = m->n;
	gb_bpe_pmap_free(m);
	*m = g;
	return 0;
}

/* The value slot of (a, b), created holding -1 when absent; NULL when out of memory. */
int *gb_bpe_pmap_slot(pmap *m, int a, int b)
{
	if ((m->n + 1) * 2 > m->cap && pmap_grow(m))
		return NULL;
	uint64_t k = pkey(a, b);
	size_t mask = m->cap - 1, i = (size_t)mix64(k) & mask;
	while (m->key[i] != PMAP_EMPTY) {
		if (m->key[i] == k)
			return &m->val[i];
		i = (i + 1) & mask;
	}
	m->key[i] = k;
	m->val[i] = -1;
	m->n++;
	return &m->val[i];
}

static uint64_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a, then mixed: short keys, cheap enough */
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ULL;
	return mix64(h ^ n);
}

int gb_bpe_smap_init(smap *m, size_t want)
{
	size_t cap = 16;
	while (cap < want * 2)
		cap <<= 1;
	m->e = calloc(cap, sizeof *m->e);
	m->cap = m->e ? cap : 0;
	m->n = 0;
	return m->e ? 0 : -1;
}

void gb_bpe_smap_free(smap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->e[i].key && m->e[i].owned)
			free((void *)m->e[i].key);
	free(m->e);
	m->e = NULL;
	m->cap = m->n = 0;
}

static sent *smap_find(const smap *m, const void *k, size_t n)
{
	uint64_t h = hash_bytes(k, n);
	size_t mask = m->cap - 1, i = (size_t)h & mask;
	while (m->e[i].key) {
		if (m->e[i].h == h && m->e[i].len == n && !memcmp(m->e[i].key, k, n))
			return &m->e[i];
		i = (i + 1) & mask;
	}
	return NULL;
}

int gb_bpe_smap_get(const smap *m, const void *k, size_t n)
{
	sent *e = smap_find(m, k, n);
	return e ? e->val : -1;
}

/* The entry of key k, created with val -1 (and *fresh set) when absent; NULL when out of
 * memory. */
sent *gb_bpe_smap_add(smap *m, const void *k, size_t n, int copy, int *fresh)
{
	if ((m->n + 1) * 2 > m->cap) {
		smap g;
		if (gb_bpe_smap_init(&g, m->cap))
			return NULL;
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->e[i].key)
				continue;
			size_t j = (size_t)m->e[i].h & (g.cap - 1);
			while (g.e[j].key)
				j = (j + 1) & (g.cap - 1);
			g.e[j] = m->e[i];
		}
		g.n = m->n;
		free(m->e);
		*m = g;
	}
	uint64_t h = hash_bytes(k, n);
	size_t mask = m->cap - 1, i = (size_t)h & mask;
	*fresh = 0;
	while (m->e[i].key) {
		if (m->e[i].h == h && m->e[i].len == n && !memcmp(m->e[i].key, k, n))
			return &m->e[i];
		i = (i + 1) & mask;
	}
	const unsigned char *key = k;
	if (copy) {
		unsigned char *c = malloc(n ? n : 1);
		if (!c)
			return NULL;
		memcpy(c, k, n);
		key = c;
	}
	m->e[i] = (sent){ key ? key : (const unsigned char *)"", n, h, -1, copy };
	m->n++;
	*fresh = 1;
	return &m->e[i];
}
