/* tokenizer.c — byte-level BPE (see tokenizer.h), the core: building a tokenizer from a
 * draft (the checks every constructor shares), the accessors, encode (a heap of candidate
 * pairs per word, so a long word costs n log n, with every merge recorded when asked) and
 * decode. Owns gb_tokenizer. The module's other pieces (tokenizer_impl.h): bytemap.c,
 * pretok.c, bpe_maps.c, bpe_train.c, and model/formats/tokenizer_json.c for the files. */
#include "model/tokenizer/tokenizer_impl.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- building a tokenizer --------------------------------------------------------------- */

void gb_bpe_draft_free(draft *d)
{
	free(d->bytes);
	free(d->off);
	free(d->kind);
	free(d->merges);
	memset(d, 0, sizeof *d);
}

/* Appends a token; its id, or -1 when out of memory or when the vocabulary is too large. */
int gb_bpe_draft_token(draft *d, const void *s, size_t n, int kind)
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

int gb_bpe_draft_merge(draft *d, int a, int b, int c)
{
	if (GROW(d->merges, d->cap_merges, (size_t)d->n_merges * 3 + 3))
		return -1;
	int *m = d->merges + (size_t)d->n_merges * 3;
	m[0] = a, m[1] = b, m[2] = c;
	d->n_merges++;
	return 0;
}

int gb_bpe_draft_bytes(draft *d)
{
	for (int b = 0; b < 256; b++) {
		unsigned char c = (unsigned char)b;
		if (gb_bpe_draft_token(d, &c, 1, KIND_NORMAL) < 0)
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
		gb_bpe_pmap_free(t->ranks);
	free(t->ranks);
	free(t->added);
	free(t->add_flags);
	for (int i = 0; i < t->n_norm; i++)
		free(t->norm[i].a), free(t->norm[i].b);
	free(t->norm);
	for (int i = 0; i < t->n_pre; i++)
		gb_bpe_pre_free(&t->pre[i]);
	free(t->pre);
	free(t->spell);
	free(t->spell_off);
	if (t->by_spell)
		gb_bpe_smap_free(t->by_spell);
	free(t->by_spell);
	free(t->tmpl);
	free(t->src);
	free(t);
}

/* Checks the draft and turns it into a tokenizer (the draft is emptied either way). what
 * names the source in messages. */
int gb_bpe_draft_finish(draft *d, const char *what, gb_tokenizer **out, gb_err *err)
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
	t->charlevel = d->charlevel;
	t->unk_id = -1;
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
	for (int b = 0; b < 256 && !t->charlevel; b++)
		if (t->byte_id[b] < 0) {
			gb_fail(err, "%s: no token for byte 0x%02X (a byte-level vocabulary has all 256)",
			        what, b);
			goto fail;
		}
	if (!(t->ranks = calloc(1, sizeof *t->ranks)) ||
	    gb_bpe_pmap_init(t->ranks, (size_t)t->n_merges))
		goto oom;
	for (int r = 0; r < t->n_merges; r++) {
		int *m = t->merges + (size_t)r * 3;
		int *slot;
		for (int k = 0; k < 3; k++)
			if (m[k] < 0 || m[k] >= t->n_vocab) {
				gb_fail(err, "%s: merge %d names id %d, outside the vocabulary", what, r, m[k]);
				goto fail;
			}
		if (!(slot = gb_bpe_pmap_slot(t->ranks, m[0], m[1])))
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
		    gb_bpe_smap_init(&normal, (size_t)t->n_vocab)) {
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
			sent *e = gb_bpe_smap_add(&normal, p, len, 0, &fresh);
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
				        gb_bpe_quote(q1, sizeof q1, p, len), keys[i - 1].id, id);
				free(keys);
				goto fail;
			}
			unsigned char *dec = malloc(len);
			uint32_t bad;
			if (!dec) {
				free(keys);
				goto oom;
			}
			long nb = t->charlevel ? (memcpy(dec, p, len), (long)len)
			                       : gb_bpe_hf_to_bytes(p, len, dec, &bad);
			int other = nb > 0 ? gb_bpe_smap_get(&normal, dec, (size_t)nb) : -1;
			free(dec);
			if (other >= 0) {
				gb_fail(err, "%s: special token %s (id %d) is spelled like token %d in "
				        "tokenizer.json; choose another text", what,
				        gb_bpe_quote(q1, sizeof q1, p, len), id, other);
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
		gb_bpe_smap_free(&normal);
	} else {
		for (int b = 0; b <= 256; b++)
			t->added_at[b] = 0;
	}
	*out = t;
	return 0;
oom:
	gb_fail(err, "%s: out of memory", what);
fail:
	gb_bpe_smap_free(&normal);
	gb_tok_free(t);
	gb_bpe_draft_free(d);
	return -1;
}

/* Special tokens given by the caller: non-empty, valid UTF-8 (tokenizer.json must hold them),
 * distinct. */
int gb_bpe_check_specials(const char *const *sp, int n, gb_err *err)
{
	char q1[80];
	if (n < 0 || (n > 0 && !sp))
		return gb_fail(err, "invalid list of special tokens");
	for (int i = 0; i < n; i++) {
		if (!sp[i] || !sp[i][0])
			return gb_fail(err, "special token %d is empty", i + 1);
		if (!gb_bpe_utf8_valid(sp[i], strlen(sp[i])))
			return gb_fail(err, "special token %s is not valid UTF-8",
			               gb_bpe_quote(q1, sizeof q1, sp[i], strlen(sp[i])));
		for (int j = 0; j < i; j++)
			if (!strcmp(sp[i], sp[j]))
				return gb_fail(err, "special token %s is listed twice",
				               gb_bpe_quote(q1, sizeof q1, sp[i], strlen(sp[i])));
	}
	return 0;
}

int gb_bpe_draft_specials(draft *d, const char *const *sp, int n)
{
	for (int i = 0; i < n; i++)
		if (gb_bpe_draft_token(d, sp[i], strlen(sp[i]), KIND_SPECIAL) < 0)
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
	if (gb_bpe_check_specials(specials, n_specials, err))
		return -1;
	if (n_merges < 0 || (n_merges > 0 && !merges))
		return gb_fail(err, "invalid list of merges");
	if (gb_bpe_draft_bytes(&d) || gb_bpe_smap_init(&ids, 512))
		goto oom;
	for (int b = 0; b < 256; b++) {
		/* copied: d.bytes moves */
		sent *e = gb_bpe_smap_add(&ids, d.bytes + b, 1, 1, &fresh);
		if (!e)
			goto oom;
		e->val = b;
	}
	for (int r = 0; r < n_merges; r++) {
		const char *s[2] = { merges[2 * r], merges[2 * r + 1] };
		int id[2];
		for (int k = 0; k < 2; k++) {
			if (!s[k] || (id[k] = gb_bpe_smap_get(&ids, s[k], strlen(s[k]))) < 0) {
				gb_fail(err, "merge %d: %s is not a token yet (a piece must be a byte or "
				        "the result of an earlier merge)", r,
				        s[k] ? gb_bpe_quote(q1, sizeof q1, s[k], strlen(s[k]))
				             : "(null)");
				goto fail;
			}
		}
		size_t la = strlen(s[0]), lb = strlen(s[1]);
		if (GROW(tmp, cap_tmp, la + lb))
			goto oom;
		memcpy(tmp, s[0], la);
		memcpy(tmp + la, s[1], lb);
		sent *e = gb_bpe_smap_add(&ids, tmp, la + lb, 1, &fresh);
		if (!e)
			goto oom;
		if (fresh && (e->val = gb_bpe_draft_token(&d, tmp, la + lb, KIND_NORMAL)) < 0)
			goto oom;
		if (gb_bpe_draft_merge(&d, id[0], id[1], e->val))
			goto oom;
	}
	if (gb_bpe_draft_specials(&d, specials, n_specials))
		goto oom;
	free(tmp);
	gb_bpe_smap_free(&ids);
	return gb_bpe_draft_finish(&d, "tokenizer", out, err);
oom:
	gb_fail(err, "out of memory");
fail:
	free(tmp);
	gb_bpe_smap_free(&ids);
	gb_bpe_draft_free(&d);
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
	if (t->charlevel && t->spell) { /* the vocabulary's own spelling ("▁the", "<0x0A>") */
		size_t l = t->spell_off[id + 1] - t->spell_off[id];
		if (cap) {
			size_t k = l < cap - 1 ? l : cap - 1;
			while (k < l && k > 0 && (t->spell[t->spell_off[id] + k] & 0xC0) == 0x80)
				k--; /* whole characters only */
			memcpy(buf, t->spell + t->spell_off[id], k);
			buf[k] = 0;
		}
		return l > INT_MAX ? INT_MAX : (int)l;
	}
	size_t need = 0, put = 0; /* put: bytes written, whole characters only */
	int full = 0;
	for (size_t i = 0; i < len; i++) {
		char u[4];
		int w = 1;
		if (t->kind[id] != KIND_NORMAL) { /* as is, a whole UTF-8 character at a time */
			uint32_t cp;
			size_t k = gb_bpe_utf8_next(p + i, len - i, &cp);
			w = k ? (int)k : 1;
			memcpy(u, p + i, (size_t)w);
			i += (size_t)w - 1;
		} else {
			int cp = gb_bpe_byte_to_cp(p[i]);
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

int gb_tok_charlevel(const gb_tokenizer *t) { return t->charlevel; }

void gb_tok_template(const gb_tokenizer *t, const int **before, int *n_before, const int **after,
                     int *n_after)
{
	*before = t->tmpl;
	*n_before = t->n_tmpl_pre;
	*after = t->tmpl ? t->tmpl + t->n_tmpl_pre : NULL;
	*n_after = t->n_tmpl_post;
}

const char *gb_tok_describe(const gb_tokenizer *t)
{
	return t->desc[0] ? t->desc : "byte-level BPE: GPT-2's pre-tokenizer pattern, merges by rank";
}

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
