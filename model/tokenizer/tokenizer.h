/* tokenizer.h — BPE tokenizers: byte-level BPE, the scheme of GPT-2 (and of Llama 3 and
 * Qwen2, with their own pre-tokenizers), and SentencePiece-style BPE on characters with byte
 * fallback (Llama 2, TinyLlama, Mistral): text bytes to token ids and back, training a
 * byte-level vocabulary, and the two file formats (tokenizer.json; vocab.json + merges.txt).
 *
 * What a gb_tokenizer is: n_vocab tokens, each a non-empty byte string (what it decodes to);
 * in byte-level BPE every one of the 256 bytes is a token by itself, so any byte sequence can
 * be encoded (invalid UTF-8, NUL bytes and all) and decode(encode(x)) == x always; with byte
 * fallback the <0xNN> tokens play that part. A ranked list of merges (left, right) -> result
 * says how pieces grow: rank 0 is applied first. Added ("special") tokens such as
 * "<|endoftext|>" are whole strings outside the merges; encode only produces them when asked
 * to (GB_TOK_SPECIAL), otherwise their text is encoded as ordinary bytes.
 *
 * Encoding, as GPT-2 does it: the text is cut into pre-tokens ("words") by GPT-2's pattern
 *     's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 * (PCRE2, Unicode classes; a byte that is not valid UTF-8 is a piece of its own).
 * Inside each word, starting from single bytes, the adjacent pair with the lowest rank is
 * merged (all of its non-overlapping occurrences, left to right), until no pair has a rank.
 *
 * Other families, from tokenizer.json (gb_tok_load_json says which steps and options): added
 * tokens are cut out first; then each stretch of text between them is normalized (Llama 2's
 * Prepend "▁" + Replace " " -> "▁"), cut by the pre-tokenizers (a regex Split as Llama 3's and
 * Qwen2's, Digits, ByteLevel), and BPE runs in each piece, in Hugging Face's order (the lowest
 * (rank, position) first). A SentencePiece-style vocabulary ("charlevel": tokens spelled as
 * text) starts from characters; a character the vocabulary lacks becomes its UTF-8 bytes as
 * <0xNN> tokens (byte_fallback). Token bytes are what the decoder makes of them ("▁the" is
 * " the", <0x0A> is "\n"), so decode(encode(x)) == x for any x without a "▁" of its own.
 *
 * Files: gb_tok_load reads a model folder (tokenizer.json, else vocab.json + merges.txt).
 * GPT-2's tokenizer.json layout loads (tests/fixtures/gpt2-mini copies it, with ids checked
 * against GPT-2's own encoder.py). Writers go through a temporary name and a rename.
 *
 * Errors: every function that can fail returns 0 or -1 and fills *err with one line
 * (the file and the problem for loaders). A gb_tokenizer is read-only after construction,
 * so one tokenizer may encode from several threads at once.
 *
 * Where the code is: model/tokenizer/ holds the BPE core (tokenizer.c), the byte maps
 * (bytemap.c), the pre-tokenizer (pretok.c), the hash maps (bpe_maps.c) and training
 * (bpe_train.c); model/formats/tokenizer_json.c reads and writes the files. They share
 * tokenizer_impl.h, which nothing else includes. */
#ifndef GLASSBOX_TOKENIZER_H
#define GLASSBOX_TOKENIZER_H

#include <stddef.h>

#include "model/err.h"

typedef struct gb_tokenizer gb_tokenizer;

enum {
	/* encode: recognize added tokens' text in the input (longest match first) */
	GB_TOK_SPECIAL = 1,
	/* train: when the text runs out of pairs before vocab_size, return the smaller
	 * vocabulary instead of failing (gb_tok_vocab_size says how many tokens there are) */
	GB_TOK_ALLOW_SMALLER = 2,
	/* encode: add the tokens tokenizer.json's post_processor puts around a text (Llama's <s>,
	 * Llama 3's <|begin_of_text|>); see gb_tok_template */
	GB_TOK_TEMPLATE = 4,
};

/* ---- construction -------------------------------------------------------------------- */

/* The pure byte tokenizer: ids 0..255 are the bytes 0..255, no merges; then the special
 * tokens, ids 256, 257, ... in the order given (specials may be NULL when n_specials is 0).
 * Special tokens must be non-empty, valid UTF-8 and distinct. */
int gb_tok_new_bytes(const char *const *specials, int n_specials, gb_tokenizer **out,
                     gb_err *err);

/* A tokenizer from merges written as byte strings: merges[2i], merges[2i+1] is the pair of
 * rank i. Each piece must be a single byte or the result of an earlier merge. Ids: bytes
 * 0..255, then each merge's result in rank order (a result already in the vocabulary keeps
 * its id), then the specials. For hand-made examples in tests and lessons. */
int gb_tok_from_merges(const char *const *merges, int n_merges, const char *const *specials,
                       int n_specials, gb_tokenizer **out, gb_err *err);

/* Learns merges from text: pre-tokens are counted once per distinct word; each round merges
 * the most frequent adjacent pair (ties: the smaller (left id, right id) wins), until the
 * vocabulary holds vocab_size tokens counting the specials. Ids as in gb_tok_from_merges.
 * Occurrences of the special tokens' text in the training text are cut out (never learned).
 * Fails on empty text, on vocab_size < 256 + n_specials, and, unless flags has
 * GB_TOK_ALLOW_SMALLER, when the text has too few distinct pairs to reach vocab_size. */
int gb_tok_train(const void *text, size_t len, int vocab_size, const char *const *specials,
                 int n_specials, int flags, gb_tokenizer **out, gb_err *err);

/* A model folder: tokenizer.json when present, else vocab.json + merges.txt. dir may also
 * name a tokenizer.json file directly. */
int gb_tok_load(const char *dir, gb_tokenizer **out, gb_err *err);

/* Hugging Face tokenizer.json: model.type "BPE" (or absent), model.vocab {token: id},
 * model.merges as "a b" strings or ["a", "b"] pairs, added_tokens [{id, content, special,
 * lstrip, rstrip; single_word must be false, normalized false when there is a normalizer}].
 * Ids must run 0..n-1 with no gap; an added token either has an id of its
 * own or repeats its model.vocab entry (as GPT-2's "<|endoftext|>" does).
 * Steps read (alone or in a Sequence): normalizer Prepend, Replace (a String pattern);
 * pre_tokenizer ByteLevel (add_prefix_space false), Split (Regex or String; every behavior;
 * invert), Digits, Metaspace (split false); model BPE with byte_fallback, unk_token, fuse_unk,
 * ignore_merges; decoder ByteLevel, Replace, ByteFallback, Fuse, Strip (of leading spaces),
 * Metaspace; post_processor ByteLevel, TemplateProcessing (special tokens around $A).
 * Anything else, a step or an option, is refused with a one-line error that names it
 * (NFC, for one: Qwen2's files are refused for it). A file whose steps glassbox cannot write
 * back (all but GPT-2's) is kept and gb_tok_save_json writes it unchanged. */
int gb_tok_load_json(const char *path, gb_tokenizer **out, gb_err *err);

/* GPT-2's vocab.json {token: id} + merges.txt (an optional first line "#version...", then
 * "a b" per line, rank order). These files cannot say which tokens are special: a token
 * that no merge produces, longer than one character, and written <...> or [...] or not
 * byte-level at all, is taken as a special token (as "<|endoftext|>" in GPT-2's files). */
int gb_tok_load_vocab_merges(const char *vocab_path, const char *merges_path,
                             gb_tokenizer **out, gb_err *err);

/* Writes tokenizer.json (Hugging Face's layout, merges as "a b" strings; specials appear in
 * added_tokens and in model.vocab). */
int gb_tok_save_json(const gb_tokenizer *tok, const char *path, gb_err *err);

/* Writes vocab.json and merges.txt ("#version: 0.2" first). */
int gb_tok_save_vocab_merges(const gb_tokenizer *tok, const char *vocab_path,
                             const char *merges_path, gb_err *err);

void gb_tok_free(gb_tokenizer *tok);

/* ---- encoding and decoding ----------------------------------------------------------- */

/* One pre-token of the input as encode saw it. */
typedef struct gb_tok_word {
	size_t start, len; /* its bytes: trace.text[start .. start+len) */
	int first, n;      /* its ids: ids[first .. first+n) */
	int special;       /* 1 when it is an added token matched whole (it has no merges) */
	int sym_first;     /* its pieces before any merge: trace.syms[sym_first .. +n_sym) */
	int n_sym;
	int whole;         /* 1 when the vocabulary has it whole (ignore_merges: no merges run) */
	int fallback;      /* how many of its first pieces are byte-fallback or unknown tokens */
} gb_tok_word;

/* One merge as encode applied it. Replaying: split every word into its byte tokens, then
 * for each step in order replace pieces[pos], pieces[pos+1] of word `word` by `result`. */
typedef struct gb_tok_step {
	int word;        /* index into gb_tok_trace.words */
	int pos;         /* index of the left piece in the word's pieces just before this merge */
	int left, right; /* the two pieces merged (ids) */
	int result;      /* the merged token (id) */
	int rank;        /* the merge's rank: 0 = first learned = applied first */
} gb_tok_step;

/* What encode did, for the lesson that replays tokenization. Free with gb_tok_trace_free. */
typedef struct gb_tok_trace {
	char *text;         /* the text the words index: the input after the normalizer, NUL-ended */
	size_t text_len;
	int *syms;          /* (n_syms) every word's pieces before merges (see gb_tok_word) */
	int n_syms;
	gb_tok_word *words; /* (n_words) in input order */
	int n_words;
	gb_tok_step *steps; /* (n_steps) in the order applied: word by word, lowest rank first */
	int n_steps;
} gb_tok_trace;

/* text (len bytes, any values) to *ids (malloc'd, *n_ids entries; never NULL on success; at
 * most len for byte-level BPE without a template). flags: GB_TOK_SPECIAL, GB_TOK_TEMPLATE or
 * 0. trace may be NULL; when given it receives the words
 * and merge steps. Without a trace a word of n bytes costs O(n log n); with one, each step
 * also walks its word to find pos, so traces are meant for sentences, not whole books. */
int gb_tok_encode(const gb_tokenizer *tok, const void *text, size_t len, int flags,
                  int **ids, int *n_ids, gb_tok_trace *trace, gb_err *err);

void gb_tok_trace_free(gb_tok_trace *trace);

/* ids to bytes: *out is malloc'd, *len bytes plus a terminating NUL that is not counted (the
 * bytes themselves may contain NUL). Special tokens decode to their text; a decoder's Strip
 * drops its leading spaces (Llama's "▁" before the first word). Fails on an id outside
 * 0..n_vocab-1. */
int gb_tok_decode(const gb_tokenizer *tok, const int *ids, int n_ids, char **out, size_t *len,
                  gb_err *err);

/* ---- the vocabulary ------------------------------------------------------------------ */

int gb_tok_vocab_size(const gb_tokenizer *tok);

/* The raw bytes of token id (not NUL-terminated; *len bytes), NULL for an id out of range.
 * The viewer decides how to show spaces, newlines and partial UTF-8. */
const unsigned char *gb_tok_piece_bytes(const gb_tokenizer *tok, int id, size_t *len);

/* The token as Hugging Face spells it in vocab.json ("Ġthe" for " the"; a special token's
 * text as is), NUL-terminated into buf like snprintf. Returns the spelling's length in
 * bytes, or -1 for an id out of range. */
int gb_tok_piece_hf(const gb_tokenizer *tok, int id, char *buf, size_t cap);

/* The id of the single-byte token for byte b (0..255). */
int gb_tok_byte_id(const gb_tokenizer *tok, int b);

/* 1 for an added token (special or not in Hugging Face's sense), 0 otherwise. */
int gb_tok_is_special(const gb_tokenizer *tok, int id);

/* The id of the added token whose text is s, or -1. */
int gb_tok_special_id(const gb_tokenizer *tok, const char *s);

int gb_tok_n_merges(const gb_tokenizer *tok);

/* Merge of the given rank: *left, *right get its pieces; returns the result's id, or -1 for
 * a rank out of range. */
int gb_tok_merge(const gb_tokenizer *tok, int rank, int *left, int *right);

/* 1 when the vocabulary is spelled as text (SentencePiece style), 0 for byte-level BPE. */
int gb_tok_charlevel(const gb_tokenizer *tok);

/* The post-processor's tokens around a single text: *before / *after point at n_before /
 * n_after ids (none for a tokenizer without a template). */
void gb_tok_template(const gb_tokenizer *tok, const int **before, int *n_before,
                     const int **after, int *n_after);

/* The tokenizer's steps in one line for people, e.g. "normalizer: Prepend(\"▁\"), Replace(...);
 * ...". */
const char *gb_tok_describe(const gb_tokenizer *tok);

#endif
