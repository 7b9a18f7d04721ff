/* bpe_train.c — gb_tok_train (see tokenizer.h): learning merges from text, with distinct
 * words and their counts, pair counts updated incrementally and a lazy max-heap. */
#include "model/tokenizer/tokenizer_impl.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
	int *slot = gb_bpe_pmap_slot(&tr->pidx, a, b);
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
		gb_bpe_pmap_free(&tr->pidx);
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
	if (gb_bpe_smap_init(&words, 1 << 14))
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
			b = seg + gb_bpe_pretok_end(s + seg, i - seg, a - seg);
			if (b - a > INT_MAX / 2) {
				gb_bpe_smap_free(&words);
				return gb_fail(err, "a pre-token of %zu bytes is too long to train on", b - a);
			}
			sent *e = gb_bpe_smap_add(&words, s + a, b - a, 0, &fresh);
			if (!e || (fresh && GROW(tr->w, tr->cap_w, (size_t)tr->n_w + 1))) {
				gb_bpe_smap_free(&words);
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
	gb_bpe_smap_free(&words);
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
			tr->pr[gb_bpe_pmap_get(&tr->pidx, s[k], s[k + 1])].count -= cnt;
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
	if (gb_bpe_check_specials(specials, n_specials, err))
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
	    gb_bpe_pmap_init(&tr.pidx, 1 << 12))
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
	if (gb_bpe_draft_bytes(&d) || gb_bpe_smap_init(&ids, (size_t)target + 256))
		goto oom;
	for (int b = 0; b < 256; b++) {
		sent *e = gb_bpe_smap_add(&ids, d.bytes + b, 1, 1, &fresh);
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
		sent *e = gb_bpe_smap_add(&ids, tmp, la + lb, 1, &fresh);
		if (!e)
			goto oom;
		if (fresh && (e->val = gb_bpe_draft_token(&d, tmp, la + lb, KIND_NORMAL)) < 0)
			goto oom;
		if (gb_bpe_draft_merge(&d, p->a, p->b, e->val) || train_merge(&tr, h.pair, e->val, round++))
			goto oom;
	}
	if (d.n < target && !(flags & GB_TOK_ALLOW_SMALLER)) {
		gb_fail(err, "the training text is too small for vocab_size %d: every word is a single "
		        "token after %d merges (%d tokens with the specials); give more text or a "
		        "smaller vocab_size", vocab_size, d.n_merges, d.n + n_specials);
		goto fail;
	}
	if (gb_bpe_draft_specials(&d, specials, n_specials))
		goto oom;
	free(tmp);
	gb_bpe_smap_free(&ids);
	trainer_free(&tr);
	return gb_bpe_draft_finish(&d, "trained tokenizer", out, err);
oom:
	gb_fail(err, "out of memory while training the tokenizer");
fail:
	free(tmp);
	if (ids.e)
		gb_bpe_smap_free(&ids);
	trainer_free(&tr);
	gb_bpe_draft_free(&d);
	return -1;
}
