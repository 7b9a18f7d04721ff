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

/* Added tokens' matching flags (tokenizer.json's lstrip / rstrip): the match also takes the
 * whitespace on its left / right. */
enum { ADD_LSTRIP = 1, ADD_RSTRIP = 2 };

/* ---- the steps around the BPE model (pretok.c) ----------------------------------------- */

/* A normalizer step, applied to each stretch of text between added tokens. */
enum { NORM_PREPEND, NORM_REPLACE, NORM_METASPACE, NORM_UNICODE };
typedef struct gb_norm {
	int type;
	char *a, *b;      /* PREPEND: a; REPLACE: every a becomes b; METASPACE: spaces become a;
	                   * UNICODE: a names the form (NFC, NFD, NFKC, NFKD) */
	size_t la, lb;
	int scheme;       /* METASPACE: 0 never prepend, 1 always, 2 only before the first stretch;
	                   * UNICODE: utf8proc's options for the form */
} gb_norm;

/* A pre-tokenizer step: cuts every current piece into smaller ones. */
enum { PRE_SPLIT, PRE_BYTELEVEL, PRE_DIGITS };
enum { BEH_ISOLATED, BEH_REMOVED, BEH_MERGED_PREV, BEH_MERGED_NEXT, BEH_CONTIGUOUS };
typedef struct gb_pre {
	int type;
	int behavior, invert; /* SPLIT */
	int individual;       /* DIGITS: each digit alone (else runs of digits) */
	int use_regex;        /* BYTELEVEL: cut with GPT-2's pattern */
	char *pattern;        /* SPLIT: as the file gives it (for the steps view) */
	void *re;             /* SPLIT, DIGITS: the compiled pcre2_code */
} gb_pre;

/* Compiles pattern (literal when is_string) into p->re; 0 or -1 with PCRE2's message. */
int gb_bpe_pre_compile(gb_pre *p, const char *pattern, int is_string, gb_err *err);
void gb_bpe_pre_free(gb_pre *p);

/* A span of text: a pre-token. */
typedef struct gb_span {
	size_t start, len;
} gb_span;

/* Runs the pre-tokenizer steps over s[0..n): *out (malloc'd, *n_out spans, in text order). With
 * no steps the whole text is one span. 0, or -1 with a message (out of memory, regex failure). */
int gb_bpe_pretokenize(const gb_pre *pre, int n_pre, const unsigned char *s, size_t n,
                       gb_span **out, int *n_out, gb_err *err);

/* Applies the normalizer steps to s[0..n) into *out (malloc'd, *n_out bytes). first: this is
 * the text's first stretch (Metaspace's prepend_scheme "first"). */
int gb_bpe_normalize(const gb_norm *norm, int n_norm, const unsigned char *s, size_t n, int first,
                     unsigned char **out, size_t *n_out);

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
	unsigned char *add_flags;   /* (n_vocab) ADD_* for added tokens, or NULL */

	/* The steps around BPE, from tokenizer.json (tokenizer.h). A tokenizer built in glassbox
	 * has none of these: no normalizer, GPT-2's pre-tokenizer, GPT-2's merge order. */
	int custom;                 /* a pipeline other than glassbox's own (saving refuses it) */
	gb_norm *norm;
	int n_norm;
	gb_pre *pre;                /* NULL: GPT-2's pattern */
	int n_pre;
	int charlevel;              /* 1: the model's alphabet is characters (SentencePiece style) */
	unsigned char *spell;       /* charlevel: every token's spelling in the vocabulary */
	size_t *spell_off;          /* (n_vocab + 1) */
	struct smap *by_spell;      /* spelling -> id: charlevel symbols, and ignore_merges */
	int byte_fallback;          /* unknown characters become <0xNN> tokens (charlevel) */
	int fb_id[256];             /* the <0xNN> token of each byte, when byte_fallback */
	int unk_id, fuse_unk;       /* the unknown token (-1: none); consecutive ones fuse */
	int ignore_merges;          /* a pre-token that is a token is taken whole */
	int hf_order;               /* merges in Hugging Face's order: lowest (rank, position) */
	int dec_strip;              /* decode drops up to this many leading spaces */
	int *tmpl;                  /* post-processor: ids before (tmpl[0..n_pre_tmpl)) and after */
	int n_tmpl_pre, n_tmpl_post;
	char desc[1024];            /* the steps in one paragraph, for the steps view */
	char *src;                  /* custom: the tokenizer.json it came from, saved as is */
	size_t n_src;
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

/* GPT-2's pattern, compiled once (thread-safe); NULL only when PCRE2 fails to compile it. */
const void *gb_bpe_gpt2_re(void);

/* ---- tokenizer.json's steps (model/formats/tokenizer_steps.c) --------------------------- */

/* What tokenizer.json says around the vocabulary, checked: every type and option glassbox does
 * not implement was refused by gb_bpe_steps_read. */
typedef struct gb_steps {
	int charlevel;            /* no ByteLevel step: the vocabulary is spelled as text */
	gb_norm *norm;            /* normalizers, then a leading Metaspace pre-tokenizer */
	int n_norm;
	gb_pre *pre;
	int n_pre;
	int byte_fallback, fuse_unk, ignore_merges;
	const char *unk;          /* model.unk_token or NULL (borrowed from the JSON) */
	struct { const char *from, *to; } dec_rep[4]; /* decoder Replace steps, in order */
	int n_dec_rep;
	int dec_bytes;            /* decoder ByteFallback: <0xNN> tokens are the byte NN */
	int dec_strip;            /* decoder Strip: leading spaces dropped */
	int *tmpl;                /* post-processor token ids, those before then those after */
	int n_tmpl_pre, n_tmpl_post;
	int plain;                /* exactly glassbox's own pipeline (GPT-2's) */
	char desc[1024];
} gb_steps;

struct json_t;
int gb_bpe_steps_read(struct json_t *root, const char *path, gb_steps *st, gb_err *err);
void gb_bpe_steps_free(gb_steps *st);
unsigned char *gb_bpe_charlevel_bytes(const gb_steps *st, const char *s, size_t l, size_t *n);
int gb_bpe_steps_attach(gb_tokenizer *t, const char *file, const char *const *str, const size_t *len,
                        unsigned char **add_flags, gb_steps *st, const struct smap *ids, gb_err *err);

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
	int charlevel; /* tokens are text, not bytes: no byte tokens required */
} draft;

void gb_bpe_draft_free(draft *d);
int gb_bpe_draft_token(draft *d, const void *s, size_t n, int kind);
int gb_bpe_draft_merge(draft *d, int a, int b, int c);
int gb_bpe_draft_bytes(draft *d);   /* the 256 byte tokens, ids 0..255 */
int gb_bpe_draft_finish(draft *d, const char *what, gb_tokenizer **out, gb_err *err);
int gb_bpe_check_specials(const char *const *sp, int n, gb_err *err);
int gb_bpe_draft_specials(draft *d, const char *const *sp, int n);

#endif
