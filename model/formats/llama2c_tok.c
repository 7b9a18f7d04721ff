/* llama2c_tok.c — tokenizer.bin read with every length checked, pieces found through a hash
 * table, and run.c's encoder (highest-scoring adjacent merge first) and decoder. */
#include "model/formats/llama2c_tok.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/fileio.h"

struct gb_l2c_tok {
	int n;
	unsigned char *bytes;   /* every piece back to back */
	size_t *off;            /* (n + 1) piece i is bytes[off[i] .. off[i+1]) */
	float *score;           /* (n) */
	short *byteval;         /* (n) the byte a "<0xNN>" piece stands for, or -1 */
	int has_bytes;          /* ids 3..258 are <0x00>..<0xFF>, as run.c's byte fallback assumes */
	int *slot;              /* hash table of piece ids (-1 empty), cap a power of two */
	size_t cap;
	unsigned char byte[256];
};

/* FNV-1a over the concatenation a + b. */
static uint64_t hash2(const unsigned char *a, size_t la, const unsigned char *b, size_t lb)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < la; i++)
		h = (h ^ a[i]) * 1099511628211ull;
	for (size_t i = 0; i < lb; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

/* The id of the piece a + b, or -1. */
static int lookup2(const gb_l2c_tok *t, const unsigned char *a, size_t la, const unsigned char *b, size_t lb)
{
	size_t mask = t->cap - 1;
	for (size_t i = hash2(a, la, b, lb) & mask;; i = (i + 1) & mask) {
		int id = t->slot[i];
		if (id < 0)
			return -1;
		const unsigned char *p = t->bytes + t->off[id];
		if (t->off[id + 1] - t->off[id] == la + lb && !memcmp(p, a, la) && !memcmp(p + la, b, lb))
			return id;
	}
}

static int lookup(const gb_l2c_tok *t, const void *s, size_t n)
{
	return lookup2(t, s, n, (const unsigned char *)"", 0); /* "": memcmp never sees NULL */
}

void gb_l2c_tok_free(gb_l2c_tok *t)
{
	if (!t)
		return;
	free(t->bytes);
	free(t->off);
	free(t->score);
	free(t->byteval);
	free(t->slot);
	free(t);
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int gb_l2c_tok_load(const char *path, int vocab, gb_l2c_tok **out, gb_err *err)
{
	*out = NULL;
	gb_map map;
	if (gb_map_file(&map, path, err))
		return -1;
	gb_l2c_tok *t = calloc(1, sizeof *t);
	int rc = -1;
	if (!t || vocab <= 0 || vocab > (1 << 24)) {
		gb_fail(err, "%s: %s", path, t ? "bad vocabulary size" : "out of memory");
		goto out;
	}
	/* every token takes 8 bytes at least (score, length): a file too small for the vocabulary
	 * is refused before the tables for it are allocated */
	if (map.len < 4) {
		gb_fail(err, "%s: %zu bytes, too short for a tokenizer.bin", path, map.len);
		goto out;
	}
	if ((map.len - 4) / 8 < (size_t)vocab) {
		gb_fail(err, "%s: %zu bytes cannot hold the model's %d tokens (8 bytes each at least; a tokenizer for a "
		        "smaller vocabulary?)", path, map.len, vocab);
		goto out;
	}
	t->n = vocab;
	t->off = malloc(sizeof *t->off * ((size_t)vocab + 1));
	t->score = malloc(sizeof *t->score * (size_t)vocab);
	t->byteval = malloc(sizeof *t->byteval * (size_t)vocab);
	t->bytes = malloc(map.len);
	for (t->cap = 16; t->cap < 2 * (size_t)vocab; t->cap *= 2)
		;
	t->slot = malloc(sizeof *t->slot * t->cap);
	if (!t->off || !t->score || !t->byteval || !t->bytes || !t->slot) {
		gb_fail(err, "%s: out of memory", path);
		goto out;
	}
	memset(t->slot, 0xff, sizeof *t->slot * t->cap);
	const unsigned char *p = map.data, *end = map.data + map.len;
	uint32_t maxlen;
	memcpy(&maxlen, p, 4);
	p += 4;
	size_t used = 0;
	for (int i = 0; i < vocab; i++) {
		int32_t len;
		if (end - p < 8) {
			gb_fail(err, "%s: ends at token %d of the model's %d (a tokenizer for a smaller vocabulary?)", path, i, vocab);
			goto out;
		}
		memcpy(&t->score[i], p, 4);
		memcpy(&len, p + 4, 4);
		p += 8;
		if (isnan(t->score[i])) {
			gb_fail(err, "%s: token %d has a NaN score", path, i);
			goto out;
		}
		if (len >= 0 && len > end - p) {
			gb_fail(err, "%s: ends inside token %d of the model's %d (a tokenizer for a smaller vocabulary?)", path, i,
			        vocab);
			goto out;
		}
		if (len < 0 || (uint32_t)len > maxlen) {
			gb_fail(err, "%s: token %d has length %d (max_token_length %u)", path, i, len, maxlen);
			goto out;
		}
		t->off[i] = used;
		memcpy(t->bytes + used, p, (size_t)len);
		used += (size_t)len;
		p += len;
		const unsigned char *s = t->bytes + t->off[i];
		t->byteval[i] = -1;
		if (len == 6 && !memcmp(s, "<0x", 3) && s[5] == '>' && hexval(s[3]) >= 0 && hexval(s[4]) >= 0)
			t->byteval[i] = (short)(hexval(s[3]) * 16 + hexval(s[4]));
	}
	t->off[vocab] = used;
	if (p != end) {
		gb_fail(err, "%s: %td bytes after the model's %d tokens (a tokenizer for a larger vocabulary?)", path, end - p,
		        vocab);
		goto out;
	}
	/* Insert in id order, so that of two ids with one spelling the lower is found. */
	for (int i = 0; i < vocab; i++) {
		const unsigned char *s = t->bytes + t->off[i];
		size_t n = t->off[i + 1] - t->off[i];
		if (lookup(t, s, n) >= 0)
			continue;
		size_t k = hash2(s, n, (const unsigned char *)"", 0) & (t->cap - 1);
		while (t->slot[k] >= 0)
			k = (k + 1) & (t->cap - 1);
		t->slot[k] = i;
	}
	t->has_bytes = vocab >= 259;
	for (int b = 0; b < 256 && t->has_bytes; b++)
		t->has_bytes = t->byteval[b + 3] == b;
	for (int b = 0; b < 256; b++)
		t->byte[b] = (unsigned char)b;
	rc = 0;
out:
	gb_unmap(&map);
	if (rc)
		gb_l2c_tok_free(t);
	else
		*out = t;
	return rc;
}

int gb_l2c_tok_vocab_size(const gb_l2c_tok *t) { return t->n; }

const unsigned char *gb_l2c_tok_raw(const gb_l2c_tok *t, int id, size_t *len, float *score)
{
	if (id < 0 || id >= t->n)
		return NULL;
	*len = t->off[id + 1] - t->off[id];
	if (score)
		*score = t->score[id];
	return t->bytes + t->off[id];
}

const unsigned char *gb_l2c_tok_piece(const gb_l2c_tok *t, int id, size_t *len)
{
	if (id < 0 || id >= t->n)
		return NULL;
	if (t->byteval[id] >= 0) {
		*len = 1;
		return &t->byte[t->byteval[id]];
	}
	return gb_l2c_tok_raw(t, id, len, NULL);
}

int gb_l2c_tok_encode(const gb_l2c_tok *t, const char *text, size_t len, int bos, int eos, int **ids, int *n,
                      gb_err *err)
{
	*ids = NULL;
	*n = 0;
	const unsigned char *s = (const unsigned char *)text;
	size_t L = strnlen(text, len);
	int *tok = malloc(sizeof *tok * (L + 3)), *pair = malloc(sizeof *pair * (L + 3)), m = 0;
	if (!tok || !pair) {
		free(tok);
		free(pair);
		return gb_fail(err, "out of memory encoding %zu bytes", L);
	}
	if ((bos && t->n < 2) || (eos && t->n < 3))
		goto no_special;
	if (bos)
		tok[m++] = 1;
	if (L) {
		int sp = lookup(t, " ", 1);
		if (sp < 0) {
			free(tok);
			free(pair);
			return gb_fail(err, "the llama2.c vocabulary has no \" \" piece for SentencePiece's dummy prefix");
		}
		tok[m++] = sp;
	}
	/* Characters: a lead byte and its continuation bytes, at most four bytes (run.c's rule). */
	size_t start = 0, sl = 0;
	for (size_t i = 0; i < L; i++) {
		if ((s[i] & 0xC0) != 0x80)
			sl = 0;
		if (!sl)
			start = i;
		sl++;
		if (i + 1 < L && (s[i + 1] & 0xC0) == 0x80 && sl < 4)
			continue;
		int id = lookup(t, s + start, sl);
		if (id >= 0) {
			tok[m++] = id;
		} else if (!t->has_bytes) {
			free(tok);
			free(pair);
			return gb_fail(err, "byte %zu of the text is not in the llama2.c vocabulary, which has no byte pieces "
			               "<0x00>..<0xFF> at ids 3..258 to fall back on", start);
		} else {
			for (size_t k = start; k < start + sl; k++)
				tok[m++] = s[k] + 3;
		}
		sl = 0;
	}
	/* Merges: the pair whose concatenation scores highest, leftmost among equals. */
	for (int i = 0; i + 1 < m; i++) {
		size_t la = 0, lb = 0;
		const unsigned char *a = gb_l2c_tok_raw(t, tok[i], &la, NULL), *b = gb_l2c_tok_raw(t, tok[i + 1], &lb, NULL);
		pair[i] = lookup2(t, a, la, b, lb);
	}
	for (;;) {
		float best = -1e10f;
		int at = -1;
		for (int i = 0; i + 1 < m; i++)
			if (pair[i] >= 0 && t->score[pair[i]] > best) {
				best = t->score[pair[i]];
				at = i;
			}
		if (at < 0)
			break;
		tok[at] = pair[at];
		memmove(tok + at + 1, tok + at + 2, sizeof *tok * (size_t)(m - at - 2));
		memmove(pair + at + 1, pair + at + 2, sizeof *pair * (size_t)(m > at + 3 ? m - at - 3 : 0));
		m--;
		for (int i = at - 1; i <= at; i++)
			if (i >= 0 && i + 1 < m) {
				size_t la = 0, lb = 0;
				const unsigned char *a = gb_l2c_tok_raw(t, tok[i], &la, NULL), *b = gb_l2c_tok_raw(t, tok[i + 1], &lb, NULL);
				pair[i] = lookup2(t, a, la, b, lb);
			}
	}
	if (eos)
		tok[m++] = 2;
	free(pair);
	*ids = tok;
	*n = m;
	return 0;
no_special:
	free(tok);
	free(pair);
	return gb_fail(err, "the llama2.c vocabulary is too small for BOS (1) and EOS (2)");
}

int gb_l2c_tok_decode(const gb_l2c_tok *t, const int *ids, int n, char **out, size_t *len, gb_err *err)
{
	size_t total = 0;
	for (int i = 0; i < n; i++) {
		if (ids[i] < 0 || ids[i] >= t->n)
			return gb_fail(err, "token id %d is outside the vocabulary (0..%d)", ids[i], t->n - 1);
		total += t->off[ids[i] + 1] - t->off[ids[i]];
	}
	char *buf = malloc(total + 1);
	if (!buf)
		return gb_fail(err, "out of memory decoding %d tokens", n);
	size_t at = 0;
	for (int i = 0; i < n; i++) {
		size_t l = 0;
		if (ids[i] == 1 || ids[i] == 2)
			continue; /* BOS and EOS are not text (SentencePiece's decode drops them too) */
		const unsigned char *p = gb_l2c_tok_piece(t, ids[i], &l);
		if (i > 0 && ids[i - 1] == 1 && l && p[0] == ' ' && t->byteval[ids[i]] < 0) {
			p++; /* SentencePiece drops the space that follows BOS */
			l--;
		}
		memcpy(buf + at, p, l);
		at += l;
	}
	buf[at] = 0;
	*out = buf;
	*len = at;
	return 0;
}
