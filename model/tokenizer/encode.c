/* encode.c — text to ids and back for the tokenizer module (tokenizer.h): added tokens cut out
 * first, each stretch between them normalized and pre-tokenized (pretok.c), then BPE in every
 * piece: a heap of candidate pairs per word, so a long word costs n log n, with every merge
 * recorded when a trace is asked for. Decode concatenates the tokens' bytes. */
#include "model/tokenizer/tokenizer_impl.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct hent {
	int rank, pos; /* a candidate merge of the pair starting at node pos */
} hent;

typedef struct enc {
	const gb_tokenizer *t;
	int *ids;
	size_t n_ids, cap_ids;
	gb_tok_trace *tr;
	size_t cap_words, cap_steps, cap_text, cap_syms;
	/* one word: a linked list of pieces (id -1: merged away) and its candidate pairs */
	int *id, *prev, *next;
	hent *heap, *pend;
	int n_heap, n_pend;
	size_t cap_nodes;
	gb_err *err;
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

static int rank_of(const gb_tokenizer *t, int a, int b) { return gb_bpe_pmap_get(t->ranks, a, b); }

static int cand_valid(const enc *e, hent h)
{
	int p = h.pos;
	return e->id[p] >= 0 && e->next[p] >= 0 && rank_of(e->t, e->id[p], e->id[e->next[p]]) == h.rank;
}

static int out_id(enc *e, int id)
{
	if (GROW(e->ids, e->cap_ids, e->n_ids + 1))
		return -1;
	e->ids[e->n_ids++] = id;
	return 0;
}

static int merge_at(enc *e, int p, int rank, int word)
{
	const gb_tokenizer *t = e->t;
	int q = e->next[p], c = t->merges[(size_t)rank * 3 + 2];
	if (e->tr) {
		if (GROW(e->tr->steps, e->cap_steps, (size_t)e->tr->n_steps + 1))
			return -1;
		int pos = 0;
		for (int k = 0; k != p; k = e->next[k]) /* node 0 is always the first piece */
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
	int r;
	if (e->prev[p] >= 0 && (r = rank_of(t, e->id[e->prev[p]], c)) >= 0)
		e->pend[e->n_pend++] = (hent){ r, e->prev[p] };
	if (nq >= 0 && (r = rank_of(t, c, e->id[nq])) >= 0)
		e->pend[e->n_pend++] = (hent){ r, p };
	return 0;
}

static int nodes(enc *e, size_t n)
{
	if (n <= e->cap_nodes)
		return 0;
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
	return 0;
}

/* The first pieces of a word into e->id[0..): bytes (byte-level) or characters (charlevel),
 * with byte fallback or the unknown token for a character the vocabulary lacks. Returns the
 * count, or -1 (out of memory, or a character with neither fallback nor unk). *fb counts
 * the fallback pieces. */
static int first_pieces(enc *e, const unsigned char *s, size_t n, int *fb)
{
	const gb_tokenizer *t = e->t;
	int m = 0;
	*fb = 0;
	if (nodes(e, n))
		return gb_fail(e->err, "out of memory");
	if (!t->charlevel) {
		for (size_t k = 0; k < n; k++)
			e->id[m++] = t->byte_id[s[k]];
		return m;
	}
	int last_unk = 0;
	for (size_t i = 0, k; i < n; i += k) {
		uint32_t cp;
		if (!(k = gb_bpe_utf8_next(s + i, n - i, &cp)))
			k = 1; /* an invalid byte: a character of its own, never in the vocabulary */
		int id = gb_bpe_smap_get(t->by_spell, s + i, k);
		if (id >= 0 && t->kind[id] == KIND_NORMAL) {
			e->id[m++] = id;
			last_unk = 0;
		} else if (t->byte_fallback) {
			for (size_t b = 0; b < k; b++)
				e->id[m++] = t->fb_id[s[i + b]];
			*fb += (int)k;
		} else if (t->unk_id >= 0) {
			if (!(t->fuse_unk && last_unk)) {
				e->id[m++] = t->unk_id;
				++*fb;
			}
			last_unk = 1;
		} else {
			char q[40];
			return gb_fail(e->err, "character %s is not in the vocabulary, which has no "
			               "unk_token or byte_fallback", gb_bpe_quote(q, sizeof q, s + i, k));
		}
	}
	return m;
}

static int encode_word(enc *e, const unsigned char *s, size_t n, int word)
{
	const gb_tokenizer *t = e->t;
	gb_tok_word *wd = e->tr ? &e->tr->words[word] : NULL;
	int whole = -1, fb = 0, m, r;
	if (t->ignore_merges && t->by_spell)
		whole = gb_bpe_smap_get(t->by_spell, s, n);
	if (whole >= 0 && t->kind[whole] == KIND_NORMAL) {
		if (wd)
			wd->whole = 1;
		if (nodes(e, 1))
			return gb_fail(e->err, "out of memory");
		e->id[0] = whole;
		m = 1;
	} else if ((m = first_pieces(e, s, n, &fb)) < 0) {
		return -1;
	}
	if (wd) {
		wd->fallback = fb;
		wd->sym_first = e->tr->n_syms;
		wd->n_sym = m;
		if (GROW(e->tr->syms, e->cap_syms, (size_t)e->tr->n_syms + (size_t)m))
			return gb_fail(e->err, "out of memory");
		memcpy(e->tr->syms + e->tr->n_syms, e->id, (size_t)m * sizeof *e->id);
		e->tr->n_syms += m;
	}
	for (int k = 0; k < m; k++) {
		e->prev[k] = k - 1;
		e->next[k] = k + 1;
	}
	e->next[m - 1] = -1;
	e->n_heap = 0;
	if (t->n_merges && m > 1)
		for (int k = 0; k + 1 < m; k++)
			if ((r = rank_of(t, e->id[k], e->id[k + 1])) >= 0)
				heap_push(e, (hent){ r, k });
	while (e->n_heap) {
		hent h = heap_pop(e);
		if (!cand_valid(e, h))
			continue;
		e->n_pend = 0;
		if (merge_at(e, h.pos, h.rank, word))
			return gb_fail(e->err, "out of memory");
		/* GPT-2 merges every occurrence of the chosen pair before it looks for the next pair;
		 * Hugging Face takes the lowest (rank, position) each time. They differ only when a
		 * merge list is not in learning order (as merges converted from SentencePiece). */
		if (!t->hf_order)
			while (e->n_heap && e->heap[0].rank == h.rank) {
				hent g = heap_pop(e);
				if (cand_valid(e, g) && merge_at(e, g.pos, g.rank, word))
					return gb_fail(e->err, "out of memory");
			}
		for (int i = 0; i < e->n_pend; i++)
			heap_push(e, e->pend[i]);
	}
	for (int k = 0; k >= 0; k = e->next[k])
		if (out_id(e, e->id[k]))
			return gb_fail(e->err, "out of memory");
	return 0;
}

/* Appends to the trace's text (the normalized input); its offset there. */
static int trace_text(enc *e, const void *s, size_t n, size_t *at)
{
	gb_tok_trace *tr = e->tr;
	*at = 0;
	if (!tr)
		return 0;
	if (GROW(tr->text, e->cap_text, tr->text_len + n + 1))
		return -1;
	memcpy(tr->text + tr->text_len, s, n);
	*at = tr->text_len;
	tr->text_len += n;
	tr->text[tr->text_len] = 0;
	return 0;
}

static int add_word(enc *e, size_t start, size_t len, int special)
{
	if (!e->tr)
		return 0;
	if (GROW(e->tr->words, e->cap_words, (size_t)e->tr->n_words + 1))
		return -1;
	e->tr->words[e->tr->n_words++] =
		(gb_tok_word){ start, len, (int)e->n_ids, 0, special, e->tr->n_syms, 0, 0, 0 };
	return 0;
}

/* GPT-2's pre-tokenizer, for tokenizers built in glassbox. */
static const gb_pre gpt2_pre = { .type = PRE_BYTELEVEL, .use_regex = 1 };

/* A stretch of text between added tokens: normalize, pre-tokenize, BPE in each piece. */
static int encode_plain(enc *e, const unsigned char *text, size_t len, int first)
{
	const gb_tokenizer *t = e->t;
	unsigned char *norm = NULL;
	const unsigned char *s = text;
	size_t n = len, base;
	gb_span *sp = NULL;
	int n_sp = 0, rc = -1;
	if (!len)
		return 0;
	if (t->n_norm) {
		if (gb_bpe_normalize(t->norm, t->n_norm, text, len, first, &norm, &n))
			return gb_fail(e->err, "out of memory");
		s = norm;
	}
	if (trace_text(e, s, n, &base)) {
		gb_fail(e->err, "out of memory");
		goto done;
	}
	if (gb_bpe_pretokenize(t->pre ? t->pre : &gpt2_pre, t->pre ? t->n_pre : 1, s, n, &sp, &n_sp,
	                       e->err))
		goto done;
	for (int i = 0; i < n_sp; i++) {
		int w = e->tr ? e->tr->n_words : 0;
		if (add_word(e, base + sp[i].start, sp[i].len, 0)) {
			gb_fail(e->err, "out of memory");
			goto done;
		}
		if (encode_word(e, s + sp[i].start, sp[i].len, w))
			goto done;
		if (e->tr)
			e->tr->words[w].n = (int)e->n_ids - e->tr->words[w].first;
	}
	rc = 0;
done:
	free(norm);
	free(sp);
	return rc;
}

static int is_space(unsigned c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* The longest added token at s[i] (n bytes in all): its id and the span it takes [*a, *b) with
 * lstrip / rstrip whitespace (never before lo), or -1. */
static int match_added(const gb_tokenizer *t, const unsigned char *s, size_t n, size_t i,
                       size_t lo, size_t *a, size_t *b)
{
	for (int k = t->added_at[s[i]]; k < t->added_at[s[i] + 1]; k++) {
		int id = t->added[k];
		size_t l = t->off[id + 1] - t->off[id];
		if (l <= n - i && !memcmp(t->bytes + t->off[id], s + i, l)) {
			int f = t->add_flags ? t->add_flags[id] : 0;
			*a = i, *b = i + l;
			while ((f & ADD_LSTRIP) && *a > lo && is_space(s[*a - 1]))
				--*a;
			while ((f & ADD_RSTRIP) && *b < n && is_space(s[*b]))
				++*b;
			return id;
		}
	}
	return -1;
}

void gb_tok_trace_free(gb_tok_trace *tr)
{
	if (!tr)
		return;
	free(tr->text);
	free(tr->syms);
	free(tr->words);
	free(tr->steps);
	memset(tr, 0, sizeof *tr);
}

static void enc_free(enc *e)
{
	free(e->id), free(e->prev), free(e->next), free(e->heap), free(e->pend);
}

int gb_tok_encode(const gb_tokenizer *t, const void *text, size_t len, int flags, int **ids,
                  int *n_ids, gb_tok_trace *trace, gb_err *err)
{
	enc e = { 0 };
	const unsigned char *s = text;
	*ids = NULL;
	*n_ids = 0;
	if (trace)
		memset(trace, 0, sizeof *trace);
	if (len > INT_MAX / 8)
		return gb_fail(err, "text too long to encode (%zu bytes)", len);
	if (len && !text)
		return gb_fail(err, "no text to encode");
	e.t = t;
	e.tr = trace;
	e.err = err;
	if (GROW(e.ids, e.cap_ids, len + 1) || (trace && trace_text(&e, "", 0, &(size_t){ 0 })))
		goto oom;
	if (flags & GB_TOK_TEMPLATE)
		for (int k = 0; k < t->n_tmpl_pre; k++)
			if (out_id(&e, t->tmpl[k]))
				goto oom;
	size_t seg = 0;
	if ((flags & GB_TOK_SPECIAL) && t->n_added) {
		for (size_t i = 0; i < len;) {
			size_t a, b, at;
			int id = match_added(t, s, len, i, seg, &a, &b);
			if (id < 0) {
				i++;
				continue;
			}
			if (encode_plain(&e, s + seg, a - seg, seg == 0))
				goto fail;
			if (trace_text(&e, s + a, b - a, &at) || add_word(&e, at, b - a, 1) || out_id(&e, id))
				goto oom;
			if (trace) {
				trace->words[trace->n_words - 1].n = 1;
				trace->words[trace->n_words - 1].n_sym = 0;
			}
			i = seg = b;
		}
	}
	if (encode_plain(&e, s + seg, len - seg, seg == 0))
		goto fail;
	if (flags & GB_TOK_TEMPLATE)
		for (int k = 0; k < t->n_tmpl_post; k++)
			if (out_id(&e, t->tmpl[t->n_tmpl_pre + k]))
				goto oom;
	if (e.n_ids > INT_MAX)
		goto oom;
	enc_free(&e);
	*ids = e.ids;
	*n_ids = (int)e.n_ids;
	return 0;
oom:
	gb_fail(err, "out of memory encoding %zu bytes", len);
fail:
	enc_free(&e);
	free(e.ids);
	gb_tok_trace_free(trace);
	return -1;
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
	size_t cut = 0;
	while ((int)cut < t->dec_strip && cut < k && s[cut] == ' ')
		cut++;
	memmove(s, s + cut, k - cut);
	k -= cut;
	s[k] = 0;
	*out = s;
	if (len)
		*len = k;
	return 0;
}
