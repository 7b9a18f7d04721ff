/* tokenizer.c — byte-level BPE (see tokenizer.h): the byte <-> character mapping of GPT-2's
 * bytes_to_unicode, the pre-tokenizer, encode (a heap of candidate pairs per word, so a long
 * word costs n log n), decode, training (distinct words with counts, pair counts updated
 * incrementally, a lazy max-heap), and the tokenizer.json / vocab.json + merges.txt formats
 * through jansson. Owns gb_tokenizer and the two small open-addressing hash maps below. */
#include "model/tokenizer/tokenizer.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/fileio.h"

/* Ids above this are taken for corruption rather than a vocabulary (and keep sizes in int). */
#define MAX_VOCAB (1 << 24)
/* The largest tokenizer file read (GPT-2's tokenizer.json is 1.4 MB; Llama 3's 9 MB). */
#define MAX_FILE ((size_t)512 << 20)

enum { KIND_NORMAL = 0, KIND_ADDED = 1, KIND_SPECIAL = 2 };

struct gb_tokenizer {
	int n_vocab;
	unsigned char *bytes;       /* every token's bytes, back to back */
	size_t *off;                /* (n_vocab + 1) token i is bytes[off[i] .. off[i+1]) */
	unsigned char *kind;        /* (n_vocab) KIND_* */
	int byte_id[256];           /* the single-byte token of each byte */
	int n_merges;
	int *merges;                /* (n_merges, 3) left, right, result, in rank order */
	struct pmap *ranks;         /* (left, right) -> rank */
	int n_added;
	int *added;                 /* (n_added) added ids by first byte, longest first */
	int added_at[257];          /* added[added_at[b] .. added_at[b+1]) begin with byte b */
};

/* Grows a malloc'd array to hold at least need elements; 0 or -1 (out of memory). */
#define GROW(arr, cap, need) __extension__ ({                                    \
	int grow_rc_ = 0;                                                        \
	if ((size_t)(need) > (size_t)(cap)) {                                    \
		size_t grow_nc_ = (cap) ? (size_t)(cap) : 16;                        \
		while (grow_nc_ < (size_t)(need)) grow_nc_ *= 2;                     \
		void *grow_p_ = realloc((arr), grow_nc_ * sizeof *(arr));            \
		if (grow_p_) { (arr) = grow_p_; (cap) = grow_nc_; } else grow_rc_ = -1; \
	}                                                                        \
	grow_rc_; })

/* ---- GPT-2's bytes_to_unicode ---------------------------------------------------------
 * The 188 printable bytes stand for themselves; the other 68, in byte order, become
 * U+0100..U+0143, so a space is U+0120 'Ġ' and a newline U+010A 'Ċ'. */

static int byte_to_cp(int b)
{
	if ((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE)
		return b;
	if (b <= 0x20)
		return 256 + b;
	if (b <= 0xA0)
		return 256 + 33 + (b - 0x7F);
	return 256 + 67; /* 0xAD, the soft hyphen */
}

static int cp_to_byte(uint32_t cp)
{
	if ((cp >= 0x21 && cp <= 0x7E) || (cp >= 0xA1 && cp <= 0xAC) || (cp >= 0xAE && cp <= 0xFF))
		return (int)cp;
	if (cp >= 256 && cp <= 256 + 32)
		return (int)cp - 256;
	if (cp >= 256 + 33 && cp <= 256 + 66)
		return (int)cp - 256 - 33 + 0x7F;
	if (cp == 256 + 67)
		return 0xAD;
	return -1;
}

/* Strict UTF-8: the length of the character at s (1..4) and its code point, or 0. */
static size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned c = s[0];
	size_t len;
	uint32_t v, min;
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xC2 && c <= 0xDF)
		len = 2, v = c & 0x1F, min = 0x80;
	else if (c >= 0xE0 && c <= 0xEF)
		len = 3, v = c & 0x0F, min = 0x800;
	else if (c >= 0xF0 && c <= 0xF4)
		len = 4, v = c & 0x07, min = 0x10000;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3F);
	}
	if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
		return 0;
	*cp = v;
	return len;
}

static int utf8_valid(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint32_t cp;
	for (size_t i = 0, k; i < n; i += k)
		if (!(k = utf8_next(s + i, n - i, &cp)))
			return 0;
	return 1;
}

/* A Hugging Face spelling to bytes, into out (at least n bytes). Returns the byte count, or
 * -1 with *bad the offending code point (UINT32_MAX for invalid UTF-8). */
static long hf_to_bytes(const char *spell, size_t n, unsigned char *out, uint32_t *bad)
{
	const unsigned char *s = (const unsigned char *)spell;
	size_t i = 0, j = 0, k;
	uint32_t cp;
	while (i < n) {
		if (!(k = utf8_next(s + i, n - i, &cp))) {
			*bad = UINT32_MAX;
			return -1;
		}
		int b = cp_to_byte(cp);
		if (b < 0) {
			*bad = cp;
			return -1;
		}
		out[j++] = (unsigned char)b;
		i += k;
	}
	return (long)j;
}

/* Bytes to their Hugging Face spelling into out (room for 2n bytes); returns its length. */
static size_t bytes_to_hf(const unsigned char *s, size_t n, char *out)
{
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		int cp = byte_to_cp(s[i]);
		if (cp < 0x80) {
			out[j++] = (char)cp;
		} else {
			out[j++] = (char)(0xC0 | cp >> 6);
			out[j++] = (char)(0x80 | (cp & 0x3F));
		}
	}
	return j;
}

/* A short quoted rendering of s for a one-line message: control bytes escaped, long text cut. */
static const char *quote(char *dst, size_t cap, const void *p, size_t n)
{
	const unsigned char *s = p;
	size_t j = 0;
	dst[j++] = '"';
	for (size_t i = 0; i < n; i++) {
		unsigned c = s[i];
		if (j + 4 + 5 >= cap) {
			while (j > 1 && ((unsigned char)dst[j - 1] & 0xC0) == 0x80)
				j--; /* do not leave half a character */
			if (j > 1 && ((unsigned char)dst[j - 1] & 0xC0) == 0xC0)
				j--;
			memcpy(dst + j, "...", 3);
			j += 3;
			break;
		}
		if (c == '"' || c == '\\') {
			dst[j++] = '\\';
			dst[j++] = (char)c;
		} else if (c < 0x20 || c == 0x7F) {
			j += (size_t)snprintf(dst + j, cap - j, "\\x%02X", c);
		} else {
			dst[j++] = (char)c;
		}
	}
	dst[j++] = '"';
	dst[j] = 0;
	return dst;
}

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

/* (left id, right id) -> int. Ids are >= 0, so the all-ones key marks an empty slot. */
typedef struct pmap {
	uint64_t *key;
	int *val;
	size_t cap, n;
} pmap;

#define PMAP_EMPTY UINT64_MAX

static uint64_t pkey(int a, int b) { return (uint64_t)(uint32_t)a << 32 | (uint32_t)b; }

static int pmap_init(pmap *m, size_t want)
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

static void pmap_free(pmap *m)
{
	free(m->key);
	free(m->val);
	m->key = NULL;
	m->val = NULL;
	m->cap = m->n = 0;
}

static int pmap_get(const pmap *m, int a, int b)
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
	if (pmap_init(&g, m->cap))
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
	pmap_free(m);
	*m = g;
	return 0;
}

/* The value slot of (a, b), created holding -1 when absent; NULL when out of memory. */
static int *pmap_slot(pmap *m, int a, int b)
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

/* Byte strings -> int. Keys are borrowed (the caller keeps them alive) unless added with
 * copy set. A NULL key marks an empty slot. */
typedef struct sent {
	const unsigned char *key;
	size_t len;
	uint64_t h;
	int val;
	int owned;
} sent;

typedef struct smap {
	sent *e;
	size_t cap, n;
} smap;

static uint64_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a, then mixed: short keys, cheap enough */
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ULL;
	return mix64(h ^ n);
}

static int smap_init(smap *m, size_t want)
{
	size_t cap = 16;
	while (cap < want * 2)
		cap <<= 1;
	m->e = calloc(cap, sizeof *m->e);
	m->cap = m->e ? cap : 0;
	m->n = 0;
	return m->e ? 0 : -1;
}

static void smap_free(smap *m)
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

static int smap_get(const smap *m, const void *k, size_t n)
{
	sent *e = smap_find(m, k, n);
	return e ? e->val : -1;
}

/* The entry of key k, created with val -1 (and *fresh set) when absent; NULL when out of
 * memory. */
static sent *smap_add(smap *m, const void *k, size_t n, int copy, int *fresh)
{
	if ((m->n + 1) * 2 > m->cap) {
		smap g;
		if (smap_init(&g, m->cap))
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

/* ---- the pre-tokenizer ------------------------------------------------------------------ */

enum { C_LETTER, C_DIGIT, C_SPACE, C_OTHER };

static inline int cls(unsigned c)
{
	if (c >= 0x80 || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z'))
		return C_LETTER;
	if (c >= '0' && c <= '9')
		return C_DIGIT;
	if (c == ' ' || (c >= '\t' && c <= '\r'))
		return C_SPACE;
	return C_OTHER;
}

/* The end of the pre-token that starts at s[i] (i < n): the first alternative of GPT-2's
 * pattern that matches there, as the regex engine would pick it. */
static size_t pretok_end(const unsigned char *s, size_t n, size_t i)
{
	if (s[i] == '\'' && i + 1 < n) { /* 's 't 're 've 'm 'll 'd */
		unsigned c = s[i + 1];
		if (c == 's' || c == 't' || c == 'm' || c == 'd')
			return i + 2;
		if (i + 2 < n && ((c == 'r' && s[i + 2] == 'e') || (c == 'v' && s[i + 2] == 'e') ||
		                  (c == 'l' && s[i + 2] == 'l')))
			return i + 3;
	}
	size_t j = i;
	if (s[j] == ' ' && j + 1 < n && cls(s[j + 1]) != C_SPACE)
		j++; /* " ?" before a run of letters, digits or other symbols */
	int k = cls(s[j]);
	if (k != C_SPACE) {
		while (j < n && cls(s[j]) == k)
			j++;
		return j;
	}
	while (j < n && cls(s[j]) == C_SPACE)
		j++;
	if (j == n)
		return n; /* \s+(?!\S) at the end of the text */
	if (j - i >= 2)
		return j - 1; /* \s+(?!\S): leave the last space to the word after it */
	return j;         /* \s+ */
}

/* ---- building a tokenizer --------------------------------------------------------------- */

/* A tokenizer under construction: tokens and merges, indexes built by draft_finish. */
typedef struct draft {
	unsigned char *bytes;
	size_t n_bytes, cap_bytes;
	size_t *off; /* (n + 1) */
	unsigned char *kind;
	int n;
	size_t cap_off, cap_kind;
	int *merges; /* (n_merges, 3) */
	int n_merges;
	size_t cap_merges;
} draft;

static void draft_free(draft *d)
{
	free(d->bytes);
	free(d->off);
	free(d->kind);
	free(d->merges);
	memset(d, 0, sizeof *d);
}

/* Appends a token; its id, or -1 when out of memory or when the vocabulary is too large. */
static int draft_token(draft *d, const void *s, size_t n, int kind)
{
	if (d->n >= MAX_VOCAB || GROW(d->off, d->cap_off, d->n + 2) ||
	    GROW(d->kind, d->cap_kind, d->n + 1) || GROW(d->bytes, d->cap_bytes, d->n_bytes + n + 1))
		return -1;
	if (d->n == 0)
		d->off[0] = 0;
	memcpy(d->bytes + d->n_bytes, s, n);
	d->n_bytes += n;
	d->kind[d->n] = (unsigned char)kind;
	d->off[++d->n] = d->n_bytes;
	return d->n - 1;
}

static int draft_merge(draft *d, int a, int b, int c)
{
	if (GROW(d->merges, d->cap_merges, (size_t)d->n_merges * 3 + 3))
		return -1;
	int *m = d->merges + (size_t)d->n_merges * 3;
	m[0] = a, m[1] = b, m[2] = c;
	d->n_merges++;
	return 0;
}

static int draft_bytes(draft *d)
{
	for (int b = 0; b < 256; b++) {
		unsigned char c = (unsigned char)b;
		if (draft_token(d, &c, 1, KIND_NORMAL) < 0)
			return -1;
	}
	return 0;
}

typedef struct added_key {
	int first;
	size_t len;
	int id;
} added_key;

static int added_cmp(const void *pa, const void *pb)
{
	const added_key *a = pa, *b = pb;
	if (a->first != b->first)
		return a->first < b->first ? -1 : 1;
	if (a->len != b->len)
		return a->len > b->len ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

void gb_tok_free(gb_tokenizer *t)
{
	if (!t)
		return;
	free(t->bytes);
	free(t->off);
	free(t->kind);
	free(t->merges);
	if (t->ranks)
		pmap_free(t->ranks);
	free(t->ranks);
	free(t->added);
	free(t);
}

/* Checks the draft and turns it into a tokenizer (the draft is emptied either way). what
 * names the source in messages. */
static int draft_finish(draft *d, const char *what, gb_tokenizer **out, gb_err *err)
{
	char q1[80];
	smap normal = { 0 };
	gb_tokenizer *t = calloc(1, sizeof *t);
	*out = NULL;
	if (!t)
		goto oom;
	t->n_vocab = d->n;
	t->bytes = d->bytes;
	t->off = d->off;
	t->kind = d->kind;
	t->n_merges = d->n_merges;
	t->merges = d->merges;
	memset(d, 0, sizeof *d);
	if (t->n_vocab == 0) {
		gb_fail(err, "%s: the vocabulary is empty", what);
		goto fail;
	}
	for (int b = 0; b < 256; b++)
		t->byte_id[b] = -1;
	for (int i = 0; i < t->n_vocab; i++) {
		size_t len = t->off[i + 1] - t->off[i];
		if (len == 0) {
			gb_fail(err, "%s: token %d is empty", what, i);
			goto fail;
		}
		if (t->kind[i] == KIND_NORMAL && len == 1 && t->byte_id[t->bytes[t->off[i]]] < 0)
			t->byte_id[t->bytes[t->off[i]]] = i;
		if (t->kind[i] != KIND_NORMAL)
			t->n_added++;
	}
	for (int b = 0; b < 256; b++)
		if (t->byte_id[b] < 0) {
			gb_fail(err, "%s: no token for byte 0x%02X (a byte-level vocabulary has all 256)",
			        what, b);
			goto fail;
		}
	if (!(t->ranks = calloc(1, sizeof *t->ranks)) || pmap_init(t->ranks, (size_t)t->n_merges))
		goto oom;
	for (int r = 0; r < t->n_merges; r++) {
		int *m = t->merges + (size_t)r * 3;
		int *slot;
		for (int k = 0; k < 3; k++)
			if (m[k] < 0 || m[k] >= t->n_vocab) {
				gb_fail(err, "%s: merge %d names id %d, outside the vocabulary", what, r, m[k]);
				goto fail;
			}
		if (!(slot = pmap_slot(t->ranks, m[0], m[1])))
			goto oom;
		*slot = r; /* a repeated pair keeps its last rank, as GPT-2's dict(zip(...)) does */
	}

	/* Added tokens: sorted for longest-match-first lookup, and none may share its text with
	 * another or be spelled like an ordinary token (tokenizer.json would then hold one key
	 * for two ids). */
	added_key *keys = NULL;
	if (t->n_added) {
		if (!(t->added = malloc((size_t)t->n_added * sizeof *t->added)) ||
		    !(keys = malloc((size_t)t->n_added * sizeof *keys)) ||
		    smap_init(&normal, (size_t)t->n_vocab)) {
			free(keys);
			goto oom;
		}
		int k = 0, fresh;
		for (int i = 0; i < t->n_vocab; i++) {
			const unsigned char *p = t->bytes + t->off[i];
			size_t len = t->off[i + 1] - t->off[i];
			if (t->kind[i] != KIND_NORMAL) {
				keys[k++] = (added_key){ p[0], len, i };
				continue;
			}
			sent *e = smap_add(&normal, p, len, 0, &fresh);
			if (!e) {
				free(keys);
				goto oom;
			}
			if (fresh)
				e->val = i;
		}
		qsort(keys, (size_t)t->n_added, sizeof *keys, added_cmp);
		for (int i = 0; i < t->n_added; i++) {
			int id = keys[i].id;
			const char *p = (const char *)t->bytes + t->off[id];
			size_t len = keys[i].len;
			t->added[i] = id;
			if (i > 0 && keys[i - 1].first == keys[i].first && keys[i - 1].len == len &&
			    !memcmp(t->bytes + t->off[keys[i - 1].id], p, len)) {
				gb_fail(err, "%s: special token %s appears twice (ids %d and %d)", what,
				        quote(q1, sizeof q1, p, len), keys[i - 1].id, id);
				free(keys);
				goto fail;
			}
			unsigned char *dec = malloc(len);
			uint32_t bad;
			if (!dec) {
				free(keys);
				goto oom;
			}
			long nb = hf_to_bytes(p, len, dec, &bad);
			int other = nb > 0 ? smap_get(&normal, dec, (size_t)nb) : -1;
			free(dec);
			if (other >= 0) {
				gb_fail(err, "%s: special token %s (id %d) is spelled like token %d in "
				        "tokenizer.json; choose another text", what,
				        quote(q1, sizeof q1, p, len), id, other);
				free(keys);
				goto fail;
			}
		}
		int b = 0;
		for (int i = 0; i <= t->n_added; i++) {
			int first = i < t->n_added ? keys[i].first : 256;
			while (b <= first)
				t->added_at[b++] = i;
		}
		free(keys);
		smap_free(&normal);
	} else {
		for (int b = 0; b <= 256; b++)
			t->added_at[b] = 0;
	}
	*out = t;
	return 0;
oom:
	gb_fail(err, "%s: out of memory", what);
fail:
	smap_free(&normal);
	gb_tok_free(t);
	draft_free(d);
	return -1;
}

/* Special tokens given by the caller: non-empty, valid UTF-8 (tokenizer.json must hold them),
 * distinct. */
static int check_specials(const char *const *sp, int n, gb_err *err)
{
	char q1[80];
	if (n < 0 || (n > 0 && !sp))
		return gb_fail(err, "invalid list of special tokens");
	for (int i = 0; i < n; i++) {
		if (!sp[i] || !sp[i][0])
			return gb_fail(err, "special token %d is empty", i + 1);
		if (!utf8_valid(sp[i], strlen(sp[i])))
			return gb_fail(err, "special token %s is not valid UTF-8",
			               quote(q1, sizeof q1, sp[i], strlen(sp[i])));
		for (int j = 0; j < i; j++)
			if (!strcmp(sp[i], sp[j]))
				return gb_fail(err, "special token %s is listed twice",
				               quote(q1, sizeof q1, sp[i], strlen(sp[i])));
	}
	return 0;
}

static int draft_specials(draft *d, const char *const *sp, int n)
{
	for (int i = 0; i < n; i++)
		if (draft_token(d, sp[i], strlen(sp[i]), KIND_SPECIAL) < 0)
			return -1;
	return 0;
}

int gb_tok_from_merges(const char *const *merges, int n_merges, const char *const *specials,
                       int n_specials, gb_tokenizer **out, gb_err *err)
{
	char q1[80];
	draft d = { 0 };
	smap ids = { 0 };
	unsigned char *tmp = NULL;
	size_t cap_tmp = 0;
	int fresh;
	*out = NULL;
	if (check_specials(specials, n_specials, err))
		return -1;
	if (n_merges < 0 || (n_merges > 0 && !merges))
		return gb_fail(err, "invalid list of merges");
	if (draft_bytes(&d) || smap_init(&ids, 512))
		goto oom;
	for (int b = 0; b < 256; b++) {
		sent *e = smap_add(&ids, d.bytes + b, 1, 1, &fresh); /* copied: d.bytes moves */
		if (!e)
			goto oom;
		e->val = b;
	}
	for (int r = 0; r < n_merges; r++) {
		const char *s[2] = { merges[2 * r], merges[2 * r + 1] };
		int id[2];
		for (int k = 0; k < 2; k++) {
			if (!s[k] || (id[k] = smap_get(&ids, s[k], strlen(s[k]))) < 0) {
				gb_fail(err, "merge %d: %s is not a token yet (a piece must be a byte or "
				        "the result of an earlier merge)", r,
				        s[k] ? quote(q1, sizeof q1, s[k], strlen(s[k])) : "(null)");
				goto fail;
			}
		}
		size_t la = strlen(s[0]), lb = strlen(s[1]);
		if (GROW(tmp, cap_tmp, la + lb))
			goto oom;
		memcpy(tmp, s[0], la);
		memcpy(tmp + la, s[1], lb);
		sent *e = smap_add(&ids, tmp, la + lb, 1, &fresh);
		if (!e)
			goto oom;
		if (fresh && (e->val = draft_token(&d, tmp, la + lb, KIND_NORMAL)) < 0)
			goto oom;
		if (draft_merge(&d, id[0], id[1], e->val))
			goto oom;
	}
	if (draft_specials(&d, specials, n_specials))
		goto oom;
	free(tmp);
	smap_free(&ids);
	return draft_finish(&d, "tokenizer", out, err);
oom:
	gb_fail(err, "out of memory");
fail:
	free(tmp);
	smap_free(&ids);
	draft_free(&d);
	return -1;
}

int gb_tok_new_bytes(const char *const *specials, int n_specials, gb_tokenizer **out,
                     gb_err *err)
{
	return gb_tok_from_merges(NULL, 0, specials, n_specials, out, err);
}

/* ---- accessors -------------------------------------------------------------------------- */

int gb_tok_vocab_size(const gb_tokenizer *t) { return t->n_vocab; }
int gb_tok_n_merges(const gb_tokenizer *t) { return t->n_merges; }

const unsigned char *gb_tok_piece_bytes(const gb_tokenizer *t, int id, size_t *len)
{
	if (id < 0 || id >= t->n_vocab) {
		if (len)
			*len = 0;
		return NULL;
	}
	if (len)
		*len = t->off[id + 1] - t->off[id];
	return t->bytes + t->off[id];
}

int gb_tok_piece_hf(const gb_tokenizer *t, int id, char *buf, size_t cap)
{
	size_t len;
	const unsigned char *p = gb_tok_piece_bytes(t, id, &len);
	if (!p)
		return -1;
	size_t need = 0, put = 0; /* put: bytes written, whole characters only */
	int full = 0;
	for (size_t i = 0; i < len; i++) {
		char u[4];
		int w = 1;
		if (t->kind[id] != KIND_NORMAL) { /* as is, a whole UTF-8 character at a time */
			uint32_t cp;
			size_t k = utf8_next(p + i, len - i, &cp);
			w = k ? (int)k : 1;
			memcpy(u, p + i, (size_t)w);
			i += (size_t)w - 1;
		} else {
			int cp = byte_to_cp(p[i]);
			if (cp < 0x80)
				u[0] = (char)cp;
			else
				w = 2, u[0] = (char)(0xC0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3F));
		}
		if (!full && put + (size_t)w < cap) {
			memcpy(buf + put, u, (size_t)w);
			put += (size_t)w;
		} else {
			full = 1;
		}
		need += (size_t)w;
	}
	if (cap)
		buf[put] = 0;
	return need > INT_MAX ? INT_MAX : (int)need;
}

int gb_tok_byte_id(const gb_tokenizer *t, int b) { return b >= 0 && b < 256 ? t->byte_id[b] : -1; }

int gb_tok_is_special(const gb_tokenizer *t, int id)
{
	return id >= 0 && id < t->n_vocab && t->kind[id] != KIND_NORMAL;
}

int gb_tok_special_id(const gb_tokenizer *t, const char *s)
{
	if (!s || !s[0])
		return -1;
	size_t n = strlen(s);
	int b = (unsigned char)s[0];
	for (int i = t->added_at[b]; i < t->added_at[b + 1]; i++) {
		int id = t->added[i];
		if (t->off[id + 1] - t->off[id] == n && !memcmp(t->bytes + t->off[id], s, n))
			return id;
	}
	return -1;
}

int gb_tok_merge(const gb_tokenizer *t, int rank, int *left, int *right)
{
	if (rank < 0 || rank >= t->n_merges)
		return -1;
	const int *m = t->merges + (size_t)rank * 3;
	if (left)
		*left = m[0];
	if (right)
		*right = m[1];
	return m[2];
}

/* ---- encode ----------------------------------------------------------------------------- */

typedef struct hent {
	int rank, pos; /* a candidate merge of the pair starting at node pos */
} hent;

typedef struct enc {
	const gb_tokenizer *t;
	const unsigned char *text;
	int *ids;
	int n_ids;
	gb_tok_trace *tr;
	size_t cap_words, cap_steps;
	/* one word: a linked list of pieces (id -1: merged away) and its candidate pairs */
	int *id, *prev, *next;
	hent *heap, *pend;
	int n_heap, n_pend;
	size_t cap_nodes;
} enc;

static int hless(hent a, hent b) { return a.rank < b.rank || (a.rank == b.rank && a.pos < b.pos); }

static void heap_push(enc *e, hent x)
{
	int i = e->n_heap++;
	while (i > 0) {
		int p = (i - 1) / 2;
		if (!hless(x, e->heap[p]))
			break;
		e->heap[i] = e->heap[p];
		i = p;
	}
	e->heap[i] = x;
}

static hent heap_pop(enc *e)
{
	hent top = e->heap[0], x = e->heap[--e->n_heap];
	int i = 0, n = e->n_heap;
	for (;;) {
		int c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && hless(e->heap[c + 1], e->heap[c]))
			c++;
		if (!hless(e->heap[c], x))
			break;
		e->heap[i] = e->heap[c];
		i = c;
	}
	if (n)
		e->heap[i] = x;
	return top;
}

static int rank_of(const gb_tokenizer *t, int a, int b) { return pmap_get(t->ranks, a, b); }

static int cand_valid(const enc *e, hent h)
{
	int p = h.pos;
	return e->id[p] >= 0 && e->next[p] >= 0 && rank_of(e->t, e->id[p], e->id[e->next[p]]) == h.rank;
}

static int merge_at(enc *e, int p, int rank, int word)
{
	const gb_tokenizer *t = e->t;
	int q = e->next[p], c = t->merges[(size_t)rank * 3 + 2];
	if (e->tr) {
		if (GROW(e->tr->steps, e->cap_steps, (size_t)e->tr->n_steps + 1))
			return -1;
		int pos = 0;
		for (int k = 0; k != p; k = e->next[k])
			pos++;
		e->tr->steps[e->tr->n_steps++] =
			(gb_tok_step){ word, pos, e->id[p], e->id[q], c, rank };
	}
	int nq = e->next[q];
	e->id[p] = c;
	e->id[q] = -1;
	e->next[p] = nq;
	if (nq >= 0)
		e->prev[nq] = p;
	/* New neighbours wait until this rank is done everywhere in the word: GPT-2 merges every
	 * occurrence of the chosen pair before it looks for the next pair. */
	int r;
	if (e->prev[p] >= 0 && (r = rank_of(t, e->id[e->prev[p]], c)) >= 0)
		e->pend[e->n_pend++] = (hent){ r, e->prev[p] };
	if (nq >= 0 && (r = rank_of(t, c, e->id[nq])) >= 0)
		e->pend[e->n_pend++] = (hent){ r, p };
	return 0;
}

static int encode_word(enc *e, size_t start, size_t n, int word)
{
	const gb_tokenizer *t = e->t;
	const unsigned char *s = e->text + start;
	if (n == 1) {
		e->ids[e->n_ids++] = t->byte_id[s[0]];
		return 0;
	}
	if (n > e->cap_nodes) {
		size_t c = e->cap_nodes ? e->cap_nodes : 64;
		while (c < n)
			c *= 2;
		free(e->id), free(e->prev), free(e->next), free(e->heap), free(e->pend);
		e->id = malloc(c * sizeof *e->id);
		e->prev = malloc(c * sizeof *e->prev);
		e->next = malloc(c * sizeof *e->next);
		e->heap = malloc(3 * c * sizeof *e->heap); /* n-1 pairs + 2 per merge */
		e->pend = malloc(2 * c * sizeof *e->pend);
		e->cap_nodes = c;
		if (!e->id || !e->prev || !e->next || !e->heap || !e->pend) {
			e->cap_nodes = 0;
			return -1;
		}
	}
	int m = (int)n, r;
	for (int k = 0; k < m; k++) {
		e->id[k] = t->byte_id[s[k]];
		e->prev[k] = k - 1;
		e->next[k] = k + 1;
	}
	e->next[m - 1] = -1;
	e->n_heap = 0;
	if (t->n_merges)
		for (int k = 0; k + 1 < m; k++)
			if ((r = rank_of(t, e->id[k], e->id[k + 1])) >= 0)
				heap_push(e, (hent){ r, k });
	while (e->n_heap) {
		hent h = heap_pop(e);
		if (!cand_valid(e, h))
			continue;
		e->n_pend = 0;
		if (merge_at(e, h.pos, h.rank, word))
			return -1;
		/* the rest of this rank, left to right (node indexes grow left to right) */
		while (e->n_heap && e->heap[0].rank == h.rank) {
			hent g = heap_pop(e);
			if (cand_valid(e, g) && merge_at(e, g.pos, g.rank, word))
				return -1;
		}
		for (int i = 0; i < e->n_pend; i++)
			heap_push(e, e->pend[i]);
	}
	for (int k = 0; k >= 0; k = e->next[k])
		e->ids[e->n_ids++] = e->id[k];
	return 0;
}

static int add_word(enc *e, size_t start, size_t len, int special)
{
	if (!e->tr)
		return 0;
	if (GROW(e->tr->words, e->cap_words, (size_t)e->tr->n_words + 1))
		return -1;
	e->tr->words[e->tr->n_words++] = (gb_tok_word){ start, len, e->n_ids, 0, special };
	return 0;
}

static int encode_plain(enc *e, size_t from, size_t to)
{
	for (size_t i = from, j; i < to; i = j) {
		j = from + pretok_end(e->text + from, to - from, i - from);
		int w = e->tr ? e->tr->n_words : 0;
		if (add_word(e, i, j - i, 0) || encode_word(e, i, j - i, w))
			return -1;
		if (e->tr)
			e->tr->words[w].n = e->n_ids - e->tr->words[w].first;
	}
	return 0;
}

/* The longest added token at s (n bytes left): its id and length, or -1. */
static int match_added(const gb_tokenizer *t, const unsigned char *s, size_t n, size_t *len)
{
	for (int i = t->added_at[s[0]]; i < t->added_at[s[0] + 1]; i++) {
		int id = t->added[i];
		size_t l = t->off[id + 1] - t->off[id];
		if (l <= n && !memcmp(t->bytes + t->off[id], s, l)) {
			*len = l;
			return id;
		}
	}
	return -1;
}

void gb_tok_trace_free(gb_tok_trace *tr)
{
	if (!tr)
		return;
	free(tr->words);
	free(tr->steps);
	memset(tr, 0, sizeof *tr);
}

int gb_tok_encode(const gb_tokenizer *t, const void *text, size_t len, int flags, int **ids,
                  int *n_ids, gb_tok_trace *trace, gb_err *err)
{
	enc e = { 0 };
	*ids = NULL;
	*n_ids = 0;
	if (trace)
		memset(trace, 0, sizeof *trace);
	if (len > INT_MAX / 4)
		return gb_fail(err, "text too long to encode (%zu bytes)", len);
	if (len && !text)
		return gb_fail(err, "no text to encode");
	e.t = t;
	e.text = text;
	e.tr = trace;
	if (!(e.ids = malloc((len + 1) * sizeof *e.ids)))
		return gb_fail(err, "out of memory encoding %zu bytes", len);
	size_t seg = 0;
	if ((flags & GB_TOK_SPECIAL) && t->n_added) {
		for (size_t i = 0; i < len;) {
			size_t l;
			int id = match_added(t, e.text + i, len - i, &l);
			if (id < 0) {
				i++;
				continue;
			}
			if (encode_plain(&e, seg, i) || add_word(&e, i, l, 1))
				goto oom;
			if (trace)
				trace->words[trace->n_words - 1].n = 1;
			e.ids[e.n_ids++] = id;
			i += l;
			seg = i;
		}
	}
	if (encode_plain(&e, seg, len))
		goto oom;
	free(e.id), free(e.prev), free(e.next), free(e.heap), free(e.pend);
	*ids = e.ids;
	*n_ids = e.n_ids;
	return 0;
oom:
	free(e.id), free(e.prev), free(e.next), free(e.heap), free(e.pend);
	free(e.ids);
	gb_tok_trace_free(trace);
	return gb_fail(err, "out of memory encoding %zu bytes", len);
}

int gb_tok_decode(const gb_tokenizer *t, const int *ids, int n, char **out, size_t *len,
                  gb_err *err)
{
	size_t total = 0;
	*out = NULL;
	if (len)
		*len = 0;
	if (n < 0 || (n > 0 && !ids))
		return gb_fail(err, "invalid list of ids to decode");
	for (int i = 0; i < n; i++) {
		if (ids[i] < 0 || ids[i] >= t->n_vocab)
			return gb_fail(err, "token id %d at position %d is outside the vocabulary (0..%d)",
			               ids[i], i, t->n_vocab - 1);
		total += t->off[ids[i] + 1] - t->off[ids[i]];
	}
	char *s = malloc(total + 1);
	if (!s)
		return gb_fail(err, "out of memory decoding %d tokens", n);
	size_t k = 0;
	for (int i = 0; i < n; i++) {
		size_t l = t->off[ids[i] + 1] - t->off[ids[i]];
		memcpy(s + k, t->bytes + t->off[ids[i]], l);
		k += l;
	}
	s[k] = 0;
	*out = s;
	if (len)
		*len = k;
	return 0;
}

/* ---- training ----------------------------------------------------------------------------
 * Words are the distinct pre-tokens with their counts. pair[p] holds a pair's total count
 * (over words, times each word's count) and the words it may occur in (a superset: entries go
 * stale when a merge removes the pair from a word). The heap is lazy: an entry whose count no
 * longer matches is pushed back with the current count when popped. Only pairs containing
 * the newly merged token can grow, and they are pushed after each merge, so the first
 * up-to-date entry popped is the true maximum. */

typedef struct tword {
	const unsigned char *p;
	int len;
	int64_t count;
	size_t sym;        /* its pieces are syms[sym .. sym+n) */
	int n;
} tword;

typedef struct tpair {
	int a, b;
	int64_t count;
	int *where;        /* word indexes, possibly stale or repeated */
	int n_where;
	size_t cap_where;
} tpair;

typedef struct theap {
	int64_t count;
	int pair;
} theap;

typedef struct trainer {
	tword *w;
	int n_w;
	size_t cap_w;
	int *syms;
	tpair *pr;
	int n_pr;
	size_t cap_pr;
	pmap pidx;         /* (a, b) -> index into pr */
	theap *heap;
	int n_heap;
	size_t cap_heap;
	int *stamp;        /* (n_w) last merge that visited the word */
	int *touched;      /* pairs whose count grew in this merge */
	int n_touched;
	size_t cap_touched;
	int *queued;       /* (n_pr) last merge that queued the pair */
	size_t cap_queued;
} trainer;

static int th_before(const trainer *tr, theap x, theap y)
{
	if (x.count != y.count)
		return x.count > y.count;
	const tpair *a = &tr->pr[x.pair], *b = &tr->pr[y.pair];
	if (a->a != b->a)
		return a->a < b->a;
	return a->b < b->b;
}

static int th_push(trainer *tr, int64_t count, int pair)
{
	if (GROW(tr->heap, tr->cap_heap, (size_t)tr->n_heap + 1))
		return -1;
	theap x = { count, pair };
	int i = tr->n_heap++;
	while (i > 0) {
		int p = (i - 1) / 2;
		if (!th_before(tr, x, tr->heap[p]))
			break;
		tr->heap[i] = tr->heap[p];
		i = p;
	}
	tr->heap[i] = x;
	return 0;
}

static theap th_pop(trainer *tr)
{
	theap top = tr->heap[0], x = tr->heap[--tr->n_heap];
	int i = 0, n = tr->n_heap;
	for (;;) {
		int c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && th_before(tr, tr->heap[c + 1], tr->heap[c]))
			c++;
		if (!th_before(tr, tr->heap[c], x))
			break;
		tr->heap[i] = tr->heap[c];
		i = c;
	}
	if (n)
		tr->heap[i] = x;
	return top;
}

/* The index of pair (a, b), created with count 0 when new; -1 when out of memory. */
static int pair_index(trainer *tr, int a, int b)
{
	int *slot = pmap_slot(&tr->pidx, a, b);
	if (!slot)
		return -1;
	if (*slot < 0) {
		if (GROW(tr->pr, tr->cap_pr, (size_t)tr->n_pr + 1) ||
		    GROW(tr->queued, tr->cap_queued, (size_t)tr->n_pr + 1))
			return -1;
		tr->pr[tr->n_pr] = (tpair){ a, b, 0, NULL, 0, 0 };
		tr->queued[tr->n_pr] = -1;
		*slot = tr->n_pr++;
	}
	return *slot;
}

static int pair_where(tpair *p, int w)
{
	if (p->n_where && p->where[p->n_where - 1] == w)
		return 0;
	if (GROW(p->where, p->cap_where, (size_t)p->n_where + 1))
		return -1;
	p->where[p->n_where++] = w;
	return 0;
}

static void trainer_free(trainer *tr)
{
	for (int i = 0; i < tr->n_pr; i++)
		free(tr->pr[i].where);
	free(tr->pr);
	free(tr->w);
	free(tr->syms);
	free(tr->heap);
	free(tr->stamp);
	free(tr->touched);
	free(tr->queued);
	if (tr->pidx.key)
		pmap_free(&tr->pidx);
}

/* Length of the longest special token at s[i], or 0. */
static size_t special_at(const unsigned char *s, size_t n, size_t i, const char *const *sp,
                         int n_sp)
{
	size_t best = 0;
	for (int k = 0; k < n_sp; k++) {
		if ((unsigned char)sp[k][0] != s[i])
			continue;
		size_t l = strlen(sp[k]);
		if (l <= n - i && l > best && !memcmp(s + i, sp[k], l))
			best = l;
	}
	return best;
}

/* Counts the distinct pre-tokens of text, skipping the specials' occurrences. */
static int count_words(trainer *tr, const unsigned char *s, size_t len, const char *const *sp,
                       int n_sp, gb_err *err)
{
	smap words;
	if (smap_init(&words, 1 << 14))
		return gb_fail(err, "out of memory");
	size_t seg = 0;
	for (size_t i = 0; i <= len;) {
		size_t l = 0;
		if (i < len && !(n_sp && (l = special_at(s, len, i, sp, n_sp)))) {
			i++;
			continue;
		}
		for (size_t a = seg, b; a < i; a = b) {
			int fresh;
			b = seg + pretok_end(s + seg, i - seg, a - seg);
			if (b - a > INT_MAX / 2) {
				smap_free(&words);
				return gb_fail(err, "a pre-token of %zu bytes is too long to train on", b - a);
			}
			sent *e = smap_add(&words, s + a, b - a, 0, &fresh);
			if (!e || (fresh && GROW(tr->w, tr->cap_w, (size_t)tr->n_w + 1))) {
				smap_free(&words);
				return gb_fail(err, "out of memory");
			}
			if (fresh) {
				e->val = tr->n_w;
				tr->w[tr->n_w++] = (tword){ s + a, (int)(b - a), 0, 0, 0 };
			}
			tr->w[e->val].count++;
		}
		i += l ? l : 1;
		seg = i;
	}
	smap_free(&words);
	return 0;
}

/* Merges (a, b) -> c in every word that has it, keeping pair counts exact. */
static int train_merge(trainer *tr, int pi, int c, int round)
{
	int a = tr->pr[pi].a, b = tr->pr[pi].b;
	int *list = tr->pr[pi].where, n_list = tr->pr[pi].n_where;
	tr->pr[pi].where = NULL;
	tr->pr[pi].n_where = 0;
	tr->pr[pi].cap_where = 0;
	tr->n_touched = 0;
	for (int li = 0; li < n_list; li++) {
		int w = list[li];
		if (tr->stamp[w] == round)
			continue;
		tr->stamp[w] = round;
		int *s = tr->syms + tr->w[w].sym, m = tr->w[w].n, k;
		int64_t cnt = tr->w[w].count;
		for (k = 0; k + 1 < m; k++)
			if (s[k] == a && s[k + 1] == b)
				break;
		if (k + 1 >= m)
			continue; /* a stale entry */
		for (k = 0; k + 1 < m; k++)
			tr->pr[pmap_get(&tr->pidx, s[k], s[k + 1])].count -= cnt;
		int j = 0;
		for (k = 0; k < m;) {
			if (k + 1 < m && s[k] == a && s[k + 1] == b) {
				s[j++] = c;
				k += 2;
			} else {
				s[j++] = s[k++];
			}
		}
		tr->w[w].n = m = j;
		for (k = 0; k + 1 < m; k++) {
			int p = pair_index(tr, s[k], s[k + 1]);
			if (p < 0)
				goto oom;
			tr->pr[p].count += cnt;
			if (s[k] != c && s[k + 1] != c)
				continue;
			if (pair_where(&tr->pr[p], w))
				goto oom;
			if (tr->queued[p] != round) {
				tr->queued[p] = round;
				if (GROW(tr->touched, tr->cap_touched, (size_t)tr->n_touched + 1))
					goto oom;
				tr->touched[tr->n_touched++] = p;
			}
		}
	}
	free(list);
	for (int i = 0; i < tr->n_touched; i++) {
		int p = tr->touched[i];
		if (tr->pr[p].count > 0 && th_push(tr, tr->pr[p].count, p))
			return -1;
	}
	return 0;
oom:
	free(list);
	return -1;
}

int gb_tok_train(const void *text, size_t len, int vocab_size, const char *const *specials,
                 int n_specials, int flags, gb_tokenizer **out, gb_err *err)
{
	trainer tr = { 0 };
	draft d = { 0 };
	smap ids = { 0 };
	unsigned char *tmp = NULL;
	size_t cap_tmp = 0;
	const unsigned char *s = text;
	*out = NULL;
	if (check_specials(specials, n_specials, err))
		return -1;
	if (!text || len == 0)
		return gb_fail(err, "the training text is empty");
	if (vocab_size < 256 + n_specials)
		return gb_fail(err, "vocab_size %d is too small: it needs at least %d (256 byte tokens "
		               "+ %d special)", vocab_size, 256 + n_specials, n_specials);
	if (vocab_size > MAX_VOCAB)
		return gb_fail(err, "vocab_size %d is too large (at most %d)", vocab_size, MAX_VOCAB);
	int target = vocab_size - n_specials; /* bytes + merge results */

	if (count_words(&tr, s, len, specials, n_specials, err))
		goto fail;
	size_t n_syms = 0;
	for (int w = 0; w < tr.n_w; w++) {
		tr.w[w].sym = n_syms;
		tr.w[w].n = tr.w[w].len;
		n_syms += (size_t)tr.w[w].len;
	}
	if (!(tr.syms = malloc((n_syms + 1) * sizeof *tr.syms)) ||
	    !(tr.stamp = malloc(((size_t)tr.n_w + 1) * sizeof *tr.stamp)) ||
	    pmap_init(&tr.pidx, 1 << 12))
		goto oom;
	for (int w = 0; w < tr.n_w; w++) {
		int *sy = tr.syms + tr.w[w].sym;
		tr.stamp[w] = -1;
		for (int k = 0; k < tr.w[w].len; k++)
			sy[k] = tr.w[w].p[k]; /* byte b is token b */
		for (int k = 0; k + 1 < tr.w[w].len; k++) {
			int p = pair_index(&tr, sy[k], sy[k + 1]);
			if (p < 0 || pair_where(&tr.pr[p], w))
				goto oom;
			tr.pr[p].count += tr.w[w].count;
		}
	}
	for (int p = 0; p < tr.n_pr; p++)
		if (th_push(&tr, tr.pr[p].count, p))
			goto oom;

	int fresh;
	if (draft_bytes(&d) || smap_init(&ids, (size_t)target + 256))
		goto oom;
	for (int b = 0; b < 256; b++) {
		sent *e = smap_add(&ids, d.bytes + b, 1, 1, &fresh);
		if (!e)
			goto oom;
		e->val = b;
	}
	for (int round = 0; d.n < target && tr.n_heap;) {
		theap h = th_pop(&tr);
		tpair *p = &tr.pr[h.pair];
		if (h.count != p->count) {
			if (p->count > 0 && th_push(&tr, p->count, h.pair))
				goto oom;
			continue;
		}
		size_t la = d.off[p->a + 1] - d.off[p->a], lb = d.off[p->b + 1] - d.off[p->b];
		if (GROW(tmp, cap_tmp, la + lb))
			goto oom;
		memcpy(tmp, d.bytes + d.off[p->a], la);
		memcpy(tmp + la, d.bytes + d.off[p->b], lb);
		sent *e = smap_add(&ids, tmp, la + lb, 1, &fresh);
		if (!e)
			goto oom;
		if (fresh && (e->val = draft_token(&d, tmp, la + lb, KIND_NORMAL)) < 0)
			goto oom;
		if (draft_merge(&d, p->a, p->b, e->val) || train_merge(&tr, h.pair, e->val, round++))
			goto oom;
	}
	if (d.n < target && !(flags & GB_TOK_ALLOW_SMALLER)) {
		gb_fail(err, "the training text is too small for vocab_size %d: every word is a single "
		        "token after %d merges (%d tokens with the specials); give more text or a "
		        "smaller vocab_size", vocab_size, d.n_merges, d.n + n_specials);
		goto fail;
	}
	if (draft_specials(&d, specials, n_specials))
		goto oom;
	free(tmp);
	smap_free(&ids);
	trainer_free(&tr);
	return draft_finish(&d, "trained tokenizer", out, err);
oom:
	gb_fail(err, "out of memory while training the tokenizer");
fail:
	free(tmp);
	if (ids.e)
		smap_free(&ids);
	trainer_free(&tr);
	draft_free(&d);
	return -1;
}

/* ---- reading files ---------------------------------------------------------------------- */

/* Tokens by their spelling, as both file formats give them. */
typedef struct spelled {
	const char *file;    /* for messages about tokens */
	const char *mfile;   /* for messages about merges */
	int n;               /* ids 0..n-1 */
	const char **str;    /* (n) Hugging Face spelling, or an added token's text */
	size_t *len;         /* (n) */
	unsigned char *kind; /* (n) KIND_* */
	int n_merges;
	const char **m_str;  /* (n_merges, 2) the pieces' spellings */
	size_t *m_len;       /* (n_merges, 2) */
	const int *m_line;   /* (n_merges) merges.txt line numbers, or NULL: model.merges[i] */
	int infer_added;     /* vocab.json: find the special tokens (see tokenizer.h) */
} spelled;

static const char *merge_where(const spelled *sp, int i, char *buf, size_t cap)
{
	if (sp->m_line)
		snprintf(buf, cap, "line %d", sp->m_line[i]);
	else
		snprintf(buf, cap, "model.merges[%d]", i);
	return buf;
}

/* Resolves spellings to ids and bytes; the tokenizer or -1 with a message naming sp->file. */
static int build_spelled(spelled *sp, gb_tokenizer **out, gb_err *err)
{
	char q1[80], q2[80], q3[80], wh[48];
	smap ids = { 0 };
	draft d = { 0 };
	int *m = NULL;
	unsigned char *buf = NULL, *reach = NULL;
	size_t cap_buf = 0;
	int fresh;
	if (smap_init(&ids, (size_t)sp->n) ||
	    !(m = malloc(((size_t)sp->n_merges * 3 + 1) * sizeof *m)))
		goto oom;
	for (int i = 0; i < sp->n; i++) {
		sent *e = smap_add(&ids, sp->str[i], sp->len[i], 0, &fresh);
		if (!e)
			goto oom;
		if (!fresh) {
			gb_fail(err, "%s: ids %d and %d are both %s", sp->file, e->val, i,
			        quote(q1, sizeof q1, sp->str[i], sp->len[i]));
			goto fail;
		}
		e->val = i;
	}
	for (int r = 0; r < sp->n_merges; r++) {
		const char *a = sp->m_str[2 * r], *b = sp->m_str[2 * r + 1];
		size_t la = sp->m_len[2 * r], lb = sp->m_len[2 * r + 1];
		int ia = smap_get(&ids, a, la), ib = smap_get(&ids, b, lb);
		if (ia < 0 || ib < 0) {
			gb_fail(err, "%s: %s: merge %s %s names an unknown token %s", sp->mfile,
			        merge_where(sp, r, wh, sizeof wh), quote(q1, sizeof q1, a, la),
			        quote(q2, sizeof q2, b, lb), ia < 0 ? q1 : q2);
			goto fail;
		}
		if (GROW(buf, cap_buf, la + lb + 1))
			goto oom;
		memcpy(buf, a, la);
		memcpy(buf + la, b, lb);
		int ic = smap_get(&ids, buf, la + lb);
		if (ic < 0) {
			gb_fail(err, "%s: %s: merge %s %s makes %s, which is not in the vocabulary",
			        sp->mfile, merge_where(sp, r, wh, sizeof wh), quote(q1, sizeof q1, a, la),
			        quote(q2, sizeof q2, b, lb), quote(q3, sizeof q3, buf, la + lb));
			goto fail;
		}
		m[3 * r] = ia, m[3 * r + 1] = ib, m[3 * r + 2] = ic;
	}
	if (sp->infer_added) {
		if (!(reach = calloc((size_t)sp->n, 1)))
			goto oom;
		for (int r = 0; r < sp->n_merges; r++)
			reach[m[3 * r + 2]] = 1;
		for (int i = 0; i < sp->n; i++) {
			const char *s = sp->str[i];
			size_t l = sp->len[i];
			uint32_t cp, bad;
			if (reach[i] || (l && utf8_next((const unsigned char *)s, l, &cp) == l))
				continue; /* produced by a merge, or one character: a byte */
			if (GROW(buf, cap_buf, l + 1))
				goto oom;
			if ((l >= 2 && ((s[0] == '<' && s[l - 1] == '>') || (s[0] == '[' && s[l - 1] == ']'))) ||
			    hf_to_bytes(s, l, buf, &bad) < 0)
				sp->kind[i] = KIND_SPECIAL;
		}
	}
	for (int i = 0; i < sp->n; i++) {
		const char *s = sp->str[i];
		size_t l = sp->len[i];
		uint32_t bad;
		if (sp->kind[i] != KIND_NORMAL) {
			if (draft_token(&d, s, l, sp->kind[i]) < 0)
				goto oom;
			continue;
		}
		if (GROW(buf, cap_buf, l + 1))
			goto oom;
		long nb = hf_to_bytes(s, l, buf, &bad);
		if (nb < 0) {
			if (bad == UINT32_MAX)
				gb_fail(err, "%s: token %d is not valid UTF-8", sp->file, i);
			else
				gb_fail(err, "%s: token %s (id %d) is not byte-level BPE: U+%04X is not one of "
				        "GPT-2's 256 byte characters", sp->file, quote(q1, sizeof q1, s, l), i,
				        (unsigned)bad);
			goto fail;
		}
		if (draft_token(&d, buf, (size_t)nb, KIND_NORMAL) < 0)
			goto oom;
	}
	for (int r = 0; r < sp->n_merges; r++)
		if (draft_merge(&d, m[3 * r], m[3 * r + 1], m[3 * r + 2]))
			goto oom;
	free(m);
	free(buf);
	free(reach);
	smap_free(&ids);
	return draft_finish(&d, sp->file, out, err);
oom:
	gb_fail(err, "%s: out of memory", sp->file);
fail:
	free(m);
	free(buf);
	free(reach);
	if (ids.e)
		smap_free(&ids);
	draft_free(&d);
	return -1;
}

static void spelled_free(spelled *sp)
{
	free(sp->str);
	free(sp->len);
	free(sp->kind);
	free((void *)sp->m_str);
	free(sp->m_len);
	free((void *)sp->m_line);
}

static json_t *load_json_file(const char *path, gb_err *err)
{
	size_t n;
	json_error_t je;
	char *text = gb_read_file(path, MAX_FILE, &n, err);
	if (!text)
		return NULL;
	json_t *root = json_loadb(text, n, JSON_REJECT_DUPLICATES, &je);
	free(text);
	if (!root)
		gb_fail(err, "%s: invalid JSON (line %d, column %d): %s", path, je.line, je.column,
		        je.text);
	return root;
}

/* Fills sp->str/len/kind from a {spelling: id} object; n = largest id + 1. */
static int vocab_from_object(spelled *sp, json_t *vocab, const char *field, gb_err *err)
{
	char q1[80];
	const char *key;
	json_t *v;
	json_int_t max = -1;
	json_object_foreach(vocab, key, v) {
		if (!json_is_integer(v))
			return gb_fail(err, "%s: %s: the id of %s is not an integer", sp->file, field,
			               quote(q1, sizeof q1, key, strlen(key)));
		json_int_t id = json_integer_value(v);
		if (id < 0 || id >= MAX_VOCAB)
			return gb_fail(err, "%s: %s: id %lld of %s is out of range (0..%d)", sp->file,
			               field, (long long)id, quote(q1, sizeof q1, key, strlen(key)),
			               MAX_VOCAB - 1);
		if (id > max)
			max = id;
	}
	sp->n = (int)(max + 1);
	return 0;
}

static int spelled_alloc(spelled *sp, int n, gb_err *err)
{
	sp->n = n;
	sp->str = calloc((size_t)n + 1, sizeof *sp->str);
	sp->len = calloc((size_t)n + 1, sizeof *sp->len);
	sp->kind = calloc((size_t)n + 1, 1);
	if (!sp->str || !sp->len || !sp->kind)
		return gb_fail(err, "%s: out of memory", sp->file);
	return 0;
}

static int vocab_fill(spelled *sp, json_t *vocab, const char *field, gb_err *err)
{
	char q1[80], q2[80];
	const char *key;
	json_t *v;
	json_object_foreach(vocab, key, v) {
		int id = (int)json_integer_value(v);
		if (sp->str[id])
			return gb_fail(err, "%s: %s: id %d is given to both %s and %s", sp->file, field, id,
			               quote(q1, sizeof q1, sp->str[id], sp->len[id]),
			               quote(q2, sizeof q2, key, strlen(key)));
		sp->str[id] = key;
		sp->len[id] = strlen(key);
	}
	return 0;
}

static int check_gaps(const spelled *sp, gb_err *err)
{
	for (int i = 0; i < sp->n; i++)
		if (!sp->str[i])
			return gb_fail(err, "%s: no token has id %d (ids must run from 0 to %d without gaps)",
			               sp->file, i, sp->n - 1);
	return 0;
}

/* A ByteLevel pre-tokenizer or decoder, alone or inside a Sequence. */
static int has_bytelevel(json_t *node)
{
	const char *type = json_string_value(json_object_get(node, "type"));
	if (!type)
		return 0;
	if (!strcmp(type, "ByteLevel"))
		return 1;
	if (!strcmp(type, "Sequence")) {
		json_t *list = json_object_get(node, "pretokenizers"), *x;
		size_t i;
		if (!list)
			list = json_object_get(node, "decoders");
		json_array_foreach(list, i, x)
			if (has_bytelevel(x))
				return 1;
	}
	return 0;
}

int gb_tok_load_json(const char *path, gb_tokenizer **out, gb_err *err)
{
	char q1[80], q2[80];
	spelled sp = { 0 };
	*out = NULL;
	sp.file = sp.mfile = path;
	json_t *root = load_json_file(path, err), *model, *vocab, *merges, *added, *x;
	if (!root)
		return -1;
	int rc = -1;
	if (!json_is_object(root) || !json_is_object(model = json_object_get(root, "model"))) {
		gb_fail(err, "%s: no \"model\" object: not a Hugging Face tokenizer.json", path);
		goto done;
	}
	x = json_object_get(model, "type");
	if (x && (!json_is_string(x) || strcmp(json_string_value(x), "BPE"))) {
		gb_fail(err, "%s: model.type is %s; glassbox reads only BPE", path,
		        json_is_string(x) ? quote(q1, sizeof q1, json_string_value(x),
		                                  strlen(json_string_value(x))) : "not a string");
		goto done;
	}
	if (!has_bytelevel(json_object_get(root, "pre_tokenizer")) &&
	    !has_bytelevel(json_object_get(root, "decoder"))) {
		gb_fail(err, "%s: not a byte-level BPE (neither pre_tokenizer nor decoder is "
		        "ByteLevel); glassbox reads only GPT-2-style byte-level BPE", path);
		goto done;
	}
	const char *affix[] = { "continuing_subword_prefix", "end_of_word_suffix" };
	for (int k = 0; k < 2; k++) {
		const char *v = json_string_value(json_object_get(model, affix[k]));
		if (v && v[0]) {
			gb_fail(err, "%s: model.%s is %s; byte-level BPE has none", path, affix[k],
			        quote(q1, sizeof q1, v, strlen(v)));
			goto done;
		}
	}
	if (!json_is_object(vocab = json_object_get(model, "vocab"))) {
		gb_fail(err, "%s: model.vocab is missing or not an object", path);
		goto done;
	}
	merges = json_object_get(model, "merges");
	if (merges && !json_is_array(merges)) {
		gb_fail(err, "%s: model.merges is not an array", path);
		goto done;
	}
	added = json_object_get(root, "added_tokens");
	if (added && !json_is_null(added) && !json_is_array(added)) {
		gb_fail(err, "%s: added_tokens is not an array", path);
		goto done;
	}

	/* ids: model.vocab, then added tokens (which may repeat a vocab entry) */
	if (vocab_from_object(&sp, vocab, "model.vocab", err))
		goto done;
	int n = sp.n;
	size_t i;
	json_array_foreach(added, i, x) {
		json_t *id = json_object_get(x, "id"), *content = json_object_get(x, "content");
		if (!json_is_integer(id) || !json_is_string(content) || !json_string_length(content)) {
			gb_fail(err, "%s: added_tokens[%zu] needs an integer \"id\" and a non-empty "
			        "\"content\"", path, i);
			goto done;
		}
		json_int_t v = json_integer_value(id);
		if (v < 0 || v >= MAX_VOCAB) {
			gb_fail(err, "%s: added_tokens[%zu]: id %lld is out of range (0..%d)", path, i,
			        (long long)v, MAX_VOCAB - 1);
			goto done;
		}
		if (v >= n)
			n = (int)v + 1;
	}
	if (spelled_alloc(&sp, n, err) || vocab_fill(&sp, vocab, "model.vocab", err))
		goto done;
	json_array_foreach(added, i, x) {
		int id = (int)json_integer_value(json_object_get(x, "id"));
		json_t *content = json_object_get(x, "content");
		const char *c = json_string_value(content);
		size_t l = json_string_length(content);
		if (sp.kind[id] != KIND_NORMAL) {
			gb_fail(err, "%s: added_tokens: two tokens have id %d", path, id);
			goto done;
		}
		if (sp.str[id] && (sp.len[id] != l || memcmp(sp.str[id], c, l))) {
			gb_fail(err, "%s: added_tokens[%zu]: id %d is %s there but %s in model.vocab",
			        path, i, id, quote(q1, sizeof q1, c, l),
			        quote(q2, sizeof q2, sp.str[id], sp.len[id]));
			goto done;
		}
		sp.str[id] = c;
		sp.len[id] = l;
		sp.kind[id] = json_is_true(json_object_get(x, "special")) ? KIND_SPECIAL : KIND_ADDED;
	}
	if (check_gaps(&sp, err))
		goto done;

	sp.n_merges = (int)json_array_size(merges);
	sp.m_str = malloc(((size_t)sp.n_merges * 2 + 1) * sizeof *sp.m_str);
	sp.m_len = malloc(((size_t)sp.n_merges * 2 + 1) * sizeof *sp.m_len);
	if (!sp.m_str || !sp.m_len) {
		gb_fail(err, "%s: out of memory", path);
		goto done;
	}
	json_array_foreach(merges, i, x) {
		const char *a = NULL, *b = NULL;
		size_t la = 0, lb = 0;
		if (json_is_string(x)) { /* "a b": exactly one space, as Hugging Face splits it */
			const char *s = json_string_value(x), *sp1 = strchr(s, ' ');
			if (sp1 && !strchr(sp1 + 1, ' ') && sp1 > s && sp1[1]) {
				a = s, la = (size_t)(sp1 - s);
				b = sp1 + 1, lb = strlen(b);
			}
		} else if (json_is_array(x) && json_array_size(x) == 2 &&
		           json_is_string(json_array_get(x, 0)) && json_is_string(json_array_get(x, 1))) {
			a = json_string_value(json_array_get(x, 0));
			b = json_string_value(json_array_get(x, 1));
			la = json_string_length(json_array_get(x, 0));
			lb = json_string_length(json_array_get(x, 1));
		}
		if (!a || !la || !lb) {
			gb_fail(err, "%s: model.merges[%zu] is neither \"a b\" nor [\"a\", \"b\"]", path, i);
			goto done;
		}
		sp.m_str[2 * i] = a, sp.m_len[2 * i] = la;
		sp.m_str[2 * i + 1] = b, sp.m_len[2 * i + 1] = lb;
	}
	rc = build_spelled(&sp, out, err);
done:
	spelled_free(&sp);
	json_decref(root);
	return rc;
}

int gb_tok_load_vocab_merges(const char *vocab_path, const char *merges_path,
                             gb_tokenizer **out, gb_err *err)
{
	spelled sp = { 0 };
	char *text = NULL;
	int rc = -1, *lines = NULL;
	size_t n_text;
	*out = NULL;
	sp.file = vocab_path;
	sp.mfile = merges_path;
	json_t *vocab = load_json_file(vocab_path, err);
	if (!vocab)
		return -1;
	if (!json_is_object(vocab)) {
		gb_fail(err, "%s: not a JSON object {token: id}", vocab_path);
		goto done;
	}
	if (vocab_from_object(&sp, vocab, "vocab", err) || spelled_alloc(&sp, sp.n, err) ||
	    vocab_fill(&sp, vocab, "vocab", err) || check_gaps(&sp, err))
		goto done;

	if (!(text = gb_read_file(merges_path, MAX_FILE, &n_text, err)))
		goto done;
	if (memchr(text, 0, n_text)) {
		gb_fail(err, "%s: contains a NUL byte: not a merges.txt", merges_path);
		goto done;
	}
	size_t n_lines = 1;
	for (size_t k = 0; k < n_text; k++)
		n_lines += text[k] == '\n';
	sp.m_str = malloc((n_lines * 2 + 1) * sizeof *sp.m_str);
	sp.m_len = malloc((n_lines * 2 + 1) * sizeof *sp.m_len);
	sp.m_line = lines = malloc((n_lines + 1) * sizeof *lines);
	if (!sp.m_str || !sp.m_len || !lines) {
		gb_fail(err, "%s: out of memory", merges_path);
		goto done;
	}
	int line = 0;
	for (char *p = text, *end = text + n_text; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end, *s1;
		line++;
		if (e > p && e[-1] == '\r')
			e--;
		size_t l = (size_t)(e - p);
		if (line == 1 && l >= 8 && !memcmp(p, "#version", 8)) {
			/* the header GPT-2's files carry */
		} else if (l > 0) {
			s1 = memchr(p, ' ', l);
			if (!s1 || s1 == p || s1 + 1 == e || memchr(s1 + 1, ' ', (size_t)(e - s1 - 1))) {
				gb_fail(err, "%s: line %d: expected two tokens separated by one space",
				        merges_path, line);
				goto done;
			}
			if (sp.n_merges > INT_MAX / 4) {
				gb_fail(err, "%s: too many merges", merges_path);
				goto done;
			}
			int r = sp.n_merges++;
			sp.m_str[2 * r] = p, sp.m_len[2 * r] = (size_t)(s1 - p);
			sp.m_str[2 * r + 1] = s1 + 1, sp.m_len[2 * r + 1] = (size_t)(e - s1 - 1);
			lines[r] = line;
		}
		p = nl ? nl + 1 : end;
	}
	sp.infer_added = 1;
	rc = build_spelled(&sp, out, err);
done:
	spelled_free(&sp);
	free(text);
	json_decref(vocab);
	return rc;
}

int gb_tok_load(const char *dir, gb_tokenizer **out, gb_err *err)
{
	struct stat st;
	*out = NULL;
	if (stat(dir, &st))
		return gb_fail(err, "%s: cannot open (%s)", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return gb_tok_load_json(dir, out, err);
	size_t n = strlen(dir) + 32;
	char *tj = malloc(n), *vj = malloc(n), *mt = malloc(n);
	int rc = -1;
	if (!tj || !vj || !mt) {
		gb_fail(err, "out of memory");
		goto done;
	}
	snprintf(tj, n, "%s/tokenizer.json", dir);
	snprintf(vj, n, "%s/vocab.json", dir);
	snprintf(mt, n, "%s/merges.txt", dir);
	int has_v = !stat(vj, &st), has_m = !stat(mt, &st);
	if (!stat(tj, &st))
		rc = gb_tok_load_json(tj, out, err);
	else if (has_v && has_m)
		rc = gb_tok_load_vocab_merges(vj, mt, out, err);
	else if (has_v || has_m)
		gb_fail(err, "%s: has %s but no %s (and no tokenizer.json)", dir,
		        has_v ? "vocab.json" : "merges.txt", has_v ? "merges.txt" : "vocab.json");
	else
		gb_fail(err, "%s: no tokenizer: neither tokenizer.json nor vocab.json + merges.txt", dir);
done:
	free(tj);
	free(vj);
	free(mt);
	return rc;
}

/* ---- writing files ---------------------------------------------------------------------- */

/* The spelling of token id as the files carry it, malloc'd and NUL-terminated. */
static char *spell(const gb_tokenizer *t, int id)
{
	size_t len = t->off[id + 1] - t->off[id];
	char *s = malloc(2 * len + 1);
	if (!s)
		return NULL;
	if (t->kind[id] != KIND_NORMAL) {
		memcpy(s, t->bytes + t->off[id], len);
		s[len] = 0;
	} else {
		s[bytes_to_hf(t->bytes + t->off[id], len, s)] = 0;
	}
	return s;
}

/* {spelling: id} for every token, or NULL with a message. */
static json_t *vocab_object(const gb_tokenizer *t, char **sp, const char *path, gb_err *err)
{
	json_t *v = json_object();
	if (!v) {
		gb_fail(err, "%s: out of memory", path);
		return NULL;
	}
	for (int i = 0; i < t->n_vocab; i++)
		if (json_object_set_new(v, sp[i], json_integer(i))) {
			gb_fail(err, "%s: cannot store token %d (not valid UTF-8?)", path, i);
			json_decref(v);
			return NULL;
		}
	return v;
}

static char **spell_all(const gb_tokenizer *t, const char *path, gb_err *err)
{
	char **sp = calloc((size_t)t->n_vocab, sizeof *sp);
	for (int i = 0; sp && i < t->n_vocab; i++)
		if (!(sp[i] = spell(t, i))) {
			for (int k = 0; k < i; k++)
				free(sp[k]);
			free(sp);
			sp = NULL;
		}
	if (!sp)
		gb_fail(err, "%s: out of memory", path);
	return sp;
}

static void spell_free(const gb_tokenizer *t, char **sp)
{
	if (!sp)
		return;
	for (int i = 0; i < t->n_vocab; i++)
		free(sp[i]);
	free(sp);
}

static int dump_json(json_t *root, const char *path, gb_err *err)
{
	gb_file w;
	if (gb_file_begin(&w, path, err))
		return -1;
	if (json_dumpf(root, w.f, JSON_INDENT(2)) || fputc('\n', w.f) == EOF) {
		gb_file_abort(&w);
		return gb_fail(err, "%s: write failed (%s)", path, strerror(errno));
	}
	return gb_file_commit(&w, err);
}

/* json_pack would do, but a failed set must not leak: build step by step. */
static json_t *obj(json_t *o, const char *k, json_t *v)
{
	if (o && (!v || json_object_set_new(o, k, v))) {
		json_decref(o);
		return NULL;
	}
	if (!o)
		json_decref(v);
	return o;
}

static json_t *bytelevel(int add_prefix_space)
{
	json_t *o = json_object();
	o = obj(o, "type", json_string("ByteLevel"));
	o = obj(o, "add_prefix_space", json_boolean(add_prefix_space));
	o = obj(o, "trim_offsets", json_true());
	o = obj(o, "use_regex", json_true());
	return o;
}

int gb_tok_save_json(const gb_tokenizer *t, const char *path, gb_err *err)
{
	char **sp = spell_all(t, path, err);
	if (!sp)
		return -1;
	int rc = -1, pairs = 0;
	json_t *root = NULL, *added = json_array(), *merges = json_array(), *vocab;
	if (!(vocab = vocab_object(t, sp, path, err)))
		goto done;
	for (int r = 0; r < t->n_merges; r++)
		for (int k = 0; k < 2; k++)
			if (strchr(sp[t->merges[3 * r + k]], ' '))
				pairs = 1; /* a piece with a space: only the pair form can say it */
	for (int r = 0; r < t->n_merges && merges; r++) {
		const char *a = sp[t->merges[3 * r]], *b = sp[t->merges[3 * r + 1]];
		json_t *m;
		if (pairs) {
			m = json_array();
			if (m && (json_array_append_new(m, json_string(a)) ||
			          json_array_append_new(m, json_string(b)))) {
				json_decref(m);
				m = NULL;
			}
		} else {
			size_t la = strlen(a), lb = strlen(b);
			char *s = malloc(la + lb + 2);
			m = NULL;
			if (s) {
				memcpy(s, a, la);
				s[la] = ' ';
				memcpy(s + la + 1, b, lb + 1);
				m = json_string(s);
				free(s);
			}
		}
		if (!m || json_array_append_new(merges, m)) {
			json_decref(merges);
			merges = NULL;
		}
	}
	for (int i = 0; i < t->n_vocab && added; i++) {
		if (t->kind[i] == KIND_NORMAL)
			continue;
		json_t *a = json_object();
		a = obj(a, "id", json_integer(i));
		a = obj(a, "content", json_string(sp[i]));
		a = obj(a, "single_word", json_false());
		a = obj(a, "lstrip", json_false());
		a = obj(a, "rstrip", json_false());
		a = obj(a, "normalized", json_false());
		a = obj(a, "special", json_boolean(t->kind[i] == KIND_SPECIAL));
		if (!a || json_array_append_new(added, a)) {
			json_decref(added);
			added = NULL;
		}
	}
	json_t *model = json_object();
	model = obj(model, "type", json_string("BPE"));
	model = obj(model, "dropout", json_null());
	model = obj(model, "unk_token", json_null());
	model = obj(model, "continuing_subword_prefix", json_null());
	model = obj(model, "end_of_word_suffix", json_null());
	model = obj(model, "fuse_unk", json_false());
	model = obj(model, "byte_fallback", json_false());
	model = obj(model, "vocab", vocab);
	model = obj(model, "merges", merges);
	vocab = merges = NULL;
	root = json_object();
	root = obj(root, "version", json_string("1.0"));
	root = obj(root, "truncation", json_null());
	root = obj(root, "padding", json_null());
	root = obj(root, "added_tokens", added);
	root = obj(root, "normalizer", json_null());
	root = obj(root, "pre_tokenizer", bytelevel(0));
	root = obj(root, "post_processor", json_null());
	root = obj(root, "decoder", bytelevel(1));
	root = obj(root, "model", model);
	added = NULL;
	if (!root) {
		gb_fail(err, "%s: out of memory (or a token that is not valid UTF-8)", path);
		goto done;
	}
	rc = dump_json(root, path, err);
done:
	json_decref(root);
	json_decref(vocab);
	json_decref(merges);
	json_decref(added);
	spell_free(t, sp);
	return rc;
}

int gb_tok_save_vocab_merges(const gb_tokenizer *t, const char *vocab_path,
                             const char *merges_path, gb_err *err)
{
	char **sp = spell_all(t, vocab_path, err);
	if (!sp)
		return -1;
	int rc = -1;
	json_t *vocab = NULL;
	gb_file w;
	for (int r = 0; r < t->n_merges; r++)
		for (int k = 0; k < 2; k++)
			if (strchr(sp[t->merges[3 * r + k]], ' ') || strchr(sp[t->merges[3 * r + k]], '\n')) {
				gb_fail(err, "%s: merge %d has a piece with a space or newline, which "
				        "merges.txt cannot hold; write tokenizer.json instead", merges_path, r);
				goto done;
			}
	if (!(vocab = vocab_object(t, sp, vocab_path, err)) || dump_json(vocab, vocab_path, err))
		goto done;
	if (gb_file_begin(&w, merges_path, err))
		goto done;
	fputs("#version: 0.2\n", w.f);
	for (int r = 0; r < t->n_merges; r++)
		fprintf(w.f, "%s %s\n", sp[t->merges[3 * r]], sp[t->merges[3 * r + 1]]);
	rc = gb_file_commit(&w, err);
done:
	json_decref(vocab);
	spell_free(t, sp);
	return rc;
}
