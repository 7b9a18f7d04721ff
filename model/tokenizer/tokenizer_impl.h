/* tokenizer_impl.h — internal to the tokenizer module (tokenizer.h): shared by its pieces
 * in model/tokenizer/ (tokenizer.c the BPE core, bytemap.c, pretok.c, bpe_maps.c, bpe_train.c)
 * and model/formats/tokenizer_json.c, which reads and writes the files. Nothing else includes
 * it: the rest of glassbox sees a gb_tokenizer only through tokenizer.h.
 *
 * What the pieces share: the tokenizer's layout, the draft every constructor fills and
 * gb_bpe_draft_finish checks, the two hash maps, GPT-2's byte map and the pre-tokenizer. */
#ifndef GLASSBOX_TOKENIZER_IMPL_H
#define GLASSBOX_TOKENIZER_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "model/tokenizer/tokenizer.h"

/* Ids above this are taken for corruption rather than a vocabulary (and keep sizes in int). */
#define MAX_VOCAB (1 << 24)

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

/* ---- bytes as characters (bytemap.c) ------------------------------------------------- */

/* GPT-2's bytes_to_unicode: the code point that stands for byte b in a spelling. */
int gb_bpe_byte_to_cp(int b);
size_t gb_bpe_utf8_next(const unsigned char *s, size_t n, uint32_t *cp);
int gb_bpe_utf8_valid(const void *p, size_t n);
long gb_bpe_hf_to_bytes(const char *spell, size_t n, unsigned char *out, uint32_t *bad);
size_t gb_bpe_bytes_to_hf(const unsigned char *s, size_t n, char *out);
const char *gb_bpe_quote(char *dst, size_t cap, const void *p, size_t n);

/* ---- hash maps (bpe_maps.c) ---------------------------------------------------------- */

/* (left id, right id) -> int. Ids are >= 0, so the all-ones key marks an empty slot. */
typedef struct pmap {
	uint64_t *key;
	int *val;
	size_t cap, n;
} pmap;

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

int gb_bpe_pmap_init(pmap *m, size_t want);
void gb_bpe_pmap_free(pmap *m);
int gb_bpe_pmap_get(const pmap *m, int a, int b);
int *gb_bpe_pmap_slot(pmap *m, int a, int b);
int gb_bpe_smap_init(smap *m, size_t want);
void gb_bpe_smap_free(smap *m);
int gb_bpe_smap_get(const smap *m, const void *k, size_t n);
sent *gb_bpe_smap_add(smap *m, const void *k, size_t n, int copy, int *fresh);

/* ---- the pre-tokenizer (pretok.c) ---------------------------------------------------- */

/* The end of the pre-token (GPT-2's pattern, tokenizer.h) that starts at s[i], i < n. */
size_t gb_bpe_pretok_end(const unsigned char *s, size_t n, size_t i);

/* ---- building a tokenizer (tokenizer.c) ---------------------------------------------- */

/* A tokenizer under construction: tokens and merges, indexes built by gb_bpe_draft_finish. */
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

void gb_bpe_draft_free(draft *d);
int gb_bpe_draft_token(draft *d, const void *s, size_t n, int kind);
int gb_bpe_draft_merge(draft *d, int a, int b, int c);
int gb_bpe_draft_bytes(draft *d);   /* the 256 byte tokens, ids 0..255 */
int gb_bpe_draft_finish(draft *d, const char *what, gb_tokenizer **out, gb_err *err);
int gb_bpe_check_specials(const char *const *sp, int n, gb_err *err);
int gb_bpe_draft_specials(draft *d, const char *const *sp, int n);

#endif
