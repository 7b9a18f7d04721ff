/* pretok.c — normalizers and pre-tokenizers, for the tokenizer module (tokenizer_impl.h): how
 * the text is changed (Prepend, Replace, Metaspace) and cut into pieces ("words") before BPE runs
 * inside each. Regular expressions go through PCRE2 in UTF mode with Unicode properties
 * (\p{L}, \p{N}, \s as Unicode defines them), so GPT-2's, Llama 3's and Qwen2's patterns run
 * as written. PCRE2_MATCH_INVALID_UTF lets any byte string in: an invalid byte never matches
 * a pattern character, so it ends up in a gap between matches, which is a piece of its own. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "model/tokenizer/tokenizer_impl.h"

#include <pcre2.h>
#include <pthread.h>
#include <stdlib.h>
#include <utf8proc.h>
#include <stdio.h>
#include <string.h>

/* GPT-2's pattern (tokenizer.h), the one Hugging Face's ByteLevel pre-tokenizer uses. */
static const char gpt2_pattern[] =
	"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

static pcre2_code *compile(const char *pattern, size_t len, int literal, char *msg, size_t cap)
{
	int ec;
	PCRE2_SIZE off;
	uint32_t opt = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | (literal ? PCRE2_LITERAL : PCRE2_UCP);
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, len, opt, &ec, &off, NULL);
	if (!re) {
		PCRE2_UCHAR m[160];
		pcre2_get_error_message(ec, m, sizeof m);
		snprintf(msg, cap, "%s (at character %zu)", (char *)m, (size_t)off);
		return NULL;
	}
	pcre2_jit_compile(re, PCRE2_JIT_COMPLETE); /* an interpreter is the fallback */
	return re;
}

static pcre2_code *gpt2_re;
static pthread_once_t gpt2_once = PTHREAD_ONCE_INIT;

static void gpt2_init(void)
{
	char msg[200];
	gpt2_re = compile(gpt2_pattern, PCRE2_ZERO_TERMINATED, 0, msg, sizeof msg);
}

const void *gb_bpe_gpt2_re(void)
{
	pthread_once(&gpt2_once, gpt2_init);
	return gpt2_re;
}

int gb_bpe_pre_compile(gb_pre *p, const char *pattern, int is_string, gb_err *err)
{
	char msg[200];
	if (!(p->re = compile(pattern, strlen(pattern), is_string, msg, sizeof msg)))
		return gb_fail(err, "%s", msg);
	return 0;
}

void gb_bpe_pre_free(gb_pre *p)
{
	pcre2_code_free(p->re);
	free(p->pattern);
	p->re = NULL;
	p->pattern = NULL;
}

/* ---- matching --------------------------------------------------------------------------- */

/* One span of a piece, as a match or a gap between matches. */
typedef struct part {
	size_t start, len;
	int match;
} part;

typedef struct spans {
	gb_span *v;
	size_t n, cap;
} spans;

static int push(spans *o, size_t start, size_t len)
{
	if (!len)
		return 0;
	if (GROW(o->v, o->cap, o->n + 1))
		return -1;
	o->v[o->n++] = (gb_span){ start, len };
	return 0;
}

/* The matches of re in s[0..n) and the gaps between them, in order, into *ps (malloc'd).
 * Empty matches are skipped, as Hugging Face's split does. */
static int find_parts(const pcre2_code *re, const unsigned char *s, size_t n, part **ps,
                      size_t *np, size_t *cap, gb_err *err)
{
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
	size_t at = 0, prev = 0;
	*np = 0;
	if (!md)
		return gb_fail(err, "out of memory");
	while (at <= n) {
		int rc = pcre2_match(re, s, n, at, 0, md, NULL);
		if (rc == PCRE2_ERROR_NOMATCH)
			break;
		if (rc < 0) {
			PCRE2_UCHAR m[160];
			pcre2_get_error_message(rc, m, sizeof m);
			pcre2_match_data_free(md);
			return gb_fail(err, "pre-tokenizer regex failed at byte %zu: %s", at, (char *)m);
		}
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
		size_t a = ov[0], b = ov[1];
		if (b == a) { /* empty: step one character on */
			at = a + 1;
			while (at < n && (s[at] & 0xC0) == 0x80)
				at++;
			continue;
		}
		if (GROW(*ps, *cap, *np + 2)) {
			pcre2_match_data_free(md);
			return gb_fail(err, "out of memory");
		}
		if (a > prev)
			(*ps)[(*np)++] = (part){ prev, a - prev, 0 };
		(*ps)[(*np)++] = (part){ a, b - a, 1 };
		prev = at = b;
	}
	pcre2_match_data_free(md);
	if (prev < n) {
		if (GROW(*ps, *cap, *np + 1))
			return gb_fail(err, "out of memory");
		(*ps)[(*np)++] = (part){ prev, n - prev, 0 };
	}
	return 0;
}

/* Cuts piece [off, off+n) by re with Hugging Face's SplitDelimiterBehavior, appending to o. */
static int split_piece(const pcre2_code *re, int behavior, int invert, const unsigned char *s,
                       size_t off, size_t n, spans *o, part **ps, size_t *cap, gb_err *err)
{
	size_t np;
	if (find_parts(re, s + off, n, ps, &np, cap, err))
		return -1;
	part *p = *ps;
	size_t pend_start = 0, pend_len = 0; /* MERGED_NEXT: a match waiting for what follows */
	for (size_t i = 0; i < np; i++) {
		int m = p[i].match ^ invert;
		size_t a = off + p[i].start, l = p[i].len;
		int rc = 0;
		switch (behavior) {
		case BEH_ISOLATED:
			rc = push(o, a, l);
			break;
		case BEH_REMOVED:
			if (!m)
				rc = push(o, a, l);
			break;
		case BEH_MERGED_PREV: /* a match joins the piece before it, unless that is a match */
			if (m && i > 0 && !(p[i - 1].match ^ invert))
				o->v[o->n - 1].len += l;
			else
				rc = push(o, a, l);
			break;
		case BEH_MERGED_NEXT: /* a match joins the piece after it */
			if (m) {
				if (pend_len)
					rc = push(o, pend_start, pend_len);
				pend_start = a, pend_len = l;
			} else if (pend_len) {
				rc = push(o, pend_start, pend_len + l);
				pend_len = 0;
			} else {
				rc = push(o, a, l);
			}
			break;
		case BEH_CONTIGUOUS: /* consecutive matches become one piece */
			if (m && i > 0 && (p[i - 1].match ^ invert) && o->n)
				o->v[o->n - 1].len += l;
			else
				rc = push(o, a, l);
			break;
		}
		if (rc)
			return gb_fail(err, "out of memory");
	}
	if (pend_len && push(o, pend_start, pend_len))
		return gb_fail(err, "out of memory");
	return 0;
}

int gb_bpe_pretokenize(const gb_pre *pre, int n_pre, const unsigned char *s, size_t n,
                       gb_span **out, int *n_out, gb_err *err)
{
	spans cur = { 0 }, nxt = { 0 };
	part *ps = NULL;
	size_t cap = 0;
	*out = NULL;
	*n_out = 0;
	if (push(&cur, 0, n))
		goto oom;
	for (int k = 0; k < n_pre; k++) {
		const gb_pre *p = &pre[k];
		const pcre2_code *re = p->re;
		int beh = p->behavior, inv = p->invert;
		if (p->type == PRE_BYTELEVEL) {
			if (!p->use_regex)
				continue; /* the byte mapping itself: BPE already runs on bytes */
			re = gb_bpe_gpt2_re();
			beh = BEH_ISOLATED, inv = 0;
		} else if (p->type == PRE_DIGITS) {
			beh = BEH_ISOLATED, inv = 0;
		}
		if (!re) {
			gb_fail(err, "GPT-2's pre-tokenizer pattern did not compile");
			goto fail;
		}
		nxt.n = 0;
		for (size_t i = 0; i < cur.n; i++)
			if (split_piece(re, beh, inv, s, cur.v[i].start, cur.v[i].len, &nxt, &ps, &cap, err))
				goto fail;
		spans t = cur;
		cur = nxt;
		nxt = t;
	}
	free(nxt.v);
	free(ps);
	if (cur.n > (size_t)INT32_MAX) {
		free(cur.v);
		return gb_fail(err, "too many pre-tokens");
	}
	*out = cur.v;
	*n_out = (int)cur.n;
	return 0;
oom:
	gb_fail(err, "out of memory");
fail:
	free(cur.v);
	free(nxt.v);
	free(ps);
	return -1;
}

/* The end of the pre-token that starts at s[i] (i < n), by GPT-2's pattern: a match, or the gap
 * before the next one (an invalid byte, which no pattern character matches). */
size_t gb_bpe_pretok_end(const unsigned char *s, size_t n, size_t i)
{
	const pcre2_code *re = gb_bpe_gpt2_re();
	pcre2_match_data *md = re ? pcre2_match_data_create_from_pattern(re, NULL) : NULL;
	size_t end = n;
	if (md) {
		int rc = pcre2_match(re, s, n, i, 0, md, NULL);
		if (rc >= 0) {
			PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
			end = ov[0] > i ? ov[0] : ov[1] > i ? ov[1] : i + 1;
		}
		pcre2_match_data_free(md);
	} else {
		end = i + 1; /* cannot happen with a working PCRE2; still makes progress */
	}
	return end;
}

/* ---- normalizers ------------------------------------------------------------------------ */

typedef struct buf {
	unsigned char *p;
	size_t n, cap;
} buf;

static int put(buf *b, const void *s, size_t n)
{
	if (GROW(b->p, b->cap, b->n + n + 1))
		return -1;
	memcpy(b->p + b->n, s, n);
	b->n += n;
	return 0;
}

static int replace_all(buf *b, const unsigned char *s, size_t n, const char *a, size_t la,
                       const char *to, size_t lt)
{
	for (size_t i = 0; i < n;) {
		if (la && i + la <= n && !memcmp(s + i, a, la)) {
			if (put(b, to, lt))
				return -1;
			i += la;
		} else {
			if (put(b, s + i, 1))
				return -1;
			i++;
		}
	}
	return 0;
}

/* A Unicode normal form (utf8proc's options) of s[0..n) appended to b. Hugging Face's
 * normalizers only ever see valid UTF-8; here an invalid byte (which byte fallback encodes)
 * passes through unchanged and each valid stretch between such bytes is normalized alone. */
static int unicode_form(buf *b, const unsigned char *s, size_t n, int options)
{
	for (size_t i = 0; i < n;) {
		size_t j = i;
		utf8proc_int32_t c;
		while (j < n) {
			utf8proc_ssize_t l = utf8proc_iterate(s + j, (utf8proc_ssize_t)(n - j), &c);
			if (l <= 0)
				break;
			j += (size_t)l;
		}
		if (j > i) {
			utf8proc_uint8_t *d = NULL;
			utf8proc_ssize_t l = utf8proc_map(s + i, (utf8proc_ssize_t)(j - i), &d,
			                                  (utf8proc_option_t)options);
			int rc = l < 0 || put(b, d, (size_t)l);
			free(d);
			if (rc)
				return -1;
		}
		if (j < n && put(b, s + j, 1)) /* the invalid byte */
			return -1;
		i = j < n ? j + 1 : j;
	}
	return 0;
}

int gb_bpe_normalize(const gb_norm *norm, int n_norm, const unsigned char *s, size_t n, int first,
                     unsigned char **out, size_t *n_out)
{
	buf cur = { 0 };
	*out = NULL;
	*n_out = 0;
	if (put(&cur, s, n))
		return -1;
	for (int k = 0; k < n_norm; k++) {
		const gb_norm *g = &norm[k];
		buf nxt = { 0 };
		int rc = put(&nxt, "", 0);
		if (g->type == NORM_PREPEND) {
			if (cur.n) /* Hugging Face prepends to non-empty text only */
				rc = rc || put(&nxt, g->a, g->la) || put(&nxt, cur.p, cur.n);
		} else if (g->type == NORM_REPLACE) {
			rc = rc || replace_all(&nxt, cur.p, cur.n, g->a, g->la, g->b, g->lb);
		} else if (g->type == NORM_UNICODE) {
			rc = rc || unicode_form(&nxt, cur.p, cur.n, g->scheme);
		} else { /* METASPACE: spaces become the replacement, which may be prepended */
			int pre = cur.n && (g->scheme == 1 || (g->scheme == 2 && first)) &&
			          !(cur.n >= g->la && !memcmp(cur.p, g->a, g->la)) && cur.p[0] != ' ';
			rc = rc || (pre && put(&nxt, g->a, g->la)) ||
			     replace_all(&nxt, cur.p, cur.n, " ", 1, g->a, g->la);
		}
		free(cur.p);
		cur = nxt;
		if (rc) {
			free(cur.p);
			return -1;
		}
	}
	*out = cur.p;
	*n_out = cur.n;
	return 0;
}
