/* expect.c — the claims a lesson's prose makes about its model, written as `expect:` lines
 * (lessons/README.md) and checked every time the lesson runs: straight through, played,
 * exported and under --check. A retrained model that no longer does what the prose says then
 * fails the lesson with FILE:LINE: the claim and the values that broke it, instead of
 * misleading a class.
 *
 * Three forms: a calc condition over `let` values and the trace (`expect: $B > $G + 1`), two
 * values compared (`expect: $FIRST != $GREEDY`: as numbers when both are, else as tokens), and
 * a value among a list of words (`expect: $N1 in sent, passed, sold`), tokens compared as
 * answers are: case, quotes and the space's dot do not count. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/lesson/lesson_int.h"
#include "viz/figure.h"

void expect_free(expect *ex)
{
	if (!ex)
		return;
	free(ex->claim);
	free(ex->lhs);
	free(ex->rhs);
}

/* The length of the word at s (up to a space), 0 at the end. */
static size_t word_len(const char *s)
{
	size_t n = 0;
	while (s[n] && !isspace((unsigned char)s[n]))
		n++;
	return n;
}

int expect_parse(const char *text, expect *ex, char *err, size_t cap)
{
	memset(ex, 0, sizeof *ex);
	text = skip_space(text);
	if (!*text) {
		snprintf(err, cap, "expected a claim after 'expect:' (a calc condition, A == B, A != B, or A in X, Y, Z)");
		return -1;
	}
	ex->claim = strdup(text);
	size_t n = word_len(text);
	const char *rest = skip_space(text + n);
	int in = starts(rest, "in ") || !strcmp(rest, "in") ? 3 : starts(rest, "not in ") || !strcmp(rest, "not in") ? 7 : 0;
	if (in) {
		ex->kind = in == 3 ? EX_IN : EX_NOT_IN;
		ex->lhs = strndup(text, n);
		ex->rhs = strdup(skip_space(rest + (strlen(rest) < (size_t)in ? strlen(rest) : (size_t)in)));
		/* every item of the list must be a word */
		int items = 0, empty = 0;
		for (const char *p = ex->rhs; *p;) {
			const char *e = strchr(p, ',');
			size_t len = e ? (size_t)(e - p) : strlen(p);
			char *it = strndup(p, len);
			if (is_blank(it))
				empty = 1;
			else
				items++;
			free(it);
			p += len + (e ? 1 : 0);
		}
		if (!items || empty) {
			snprintf(err, cap, "expected a list of words after '%s': 'expect: $X in give, gives, took'", in == 3 ? "in" : "not in");
			return -1;
		}
		return 0;
	}
	/* A == B, A != B with one word or $NAME on each side: words or numbers */
	if ((starts(rest, "== ") || starts(rest, "!= ")) && *skip_space(rest + 3)) {
		const char *b = skip_space(rest + 3);
		size_t bn = word_len(b);
		/* a function call makes it an expression: cfg(vocab) == 1024 */
		if (!*skip_space(b + bn) && !memchr(text, '(', n) && !memchr(b, '(', bn)) {
			ex->kind = rest[0] == '=' ? EX_EQ : EX_NE;
			ex->lhs = strndup(text, n);
			ex->rhs = strndup(b, bn);
			return 0;
		}
	}
	ex->kind = EX_CALC;
	ex->lhs = strdup(text);
	return 0;
}

/* A value and a list: 1 when the value is one of the list's words. */
static int in_list(const char *val, const char *list)
{
	char *v = norm_token(val);
	int hit = 0;
	for (const char *p = list; *p && !hit;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		char *it = strndup(p, len), *w = norm_token(it);
		hit = !strcmp(v, w);
		free(w);
		free(it);
		p += len + (e ? 1 : 0);
	}
	free(v);
	return hit;
}

/* A value as a message shows it: a token with its space's dot, at most 40 columns. */
static void shown(const char *raw, char *out, size_t cap)
{
	gb_label_display(raw, 40, out, cap);
}

void run_expect(runner *r, const item *it)
{
	const expect *ex = it->ex;
	char err[512] = "", a[96], b[96];
	int holds = 0, ok = 1;
	if (r->replay)
		return;
	r->expects++;
	if (ex->kind == EX_CALC) {
		answer an = { SEL_CALC, { 0, 0 }, ex->lhs };
		value v;
		int rc = eval_at(r, &an, NULL, &v, err, sizeof err);
		if (rc) {
			ok = 0;
		} else {
			holds = v.x != 0;
			if (!holds) {
				/* the values that broke it, as the prose shows them */
				char *d = subst(r, ex->lhs);
				snprintf(err, sizeof err, "with its values, %s is false", d);
				free(d);
			}
		}
		free(v.text);
	} else {
		char *l = subst_expr(r, ex->lhs), *rt = subst(r, ex->rhs);
		double x, y;
		if (ex->kind == EX_IN || ex->kind == EX_NOT_IN) {
			holds = in_list(l, rt) == (ex->kind == EX_IN);
			if (!holds) {
				shown(l, a, sizeof a);
				snprintf(err, sizeof err, "%s is %s %s", ex->lhs[0] == '$' ? ex->lhs : "the value",
				         ex->kind == EX_IN ? "not among them: it is" : "among them:", a);
			}
		} else {
			char *rx = subst_expr(r, ex->rhs);
			int same;
			if (parse_num(l, &x) && parse_num(rx, &y))
				same = fabs(x - y) <= 1e-9 * (fabs(x) > fabs(y) ? fabs(x) : fabs(y));
			else {
				char *p = norm_token(l), *q = norm_token(rt);
				same = !strcmp(p, q);
				free(p);
				free(q);
			}
			holds = same == (ex->kind == EX_EQ);
			if (!holds) {
				shown(l, a, sizeof a);
				shown(rt, b, sizeof b);
				snprintf(err, sizeof err, "the two sides are %s and %s", a, b);
			}
			free(rx);
		}
		free(l);
		free(rt);
	}
	if (ok && holds) {
		r->expects_ok++;
		return;
	}
	if (!ok)
		lesson_error(r, it->line, "cannot check the claim '%s': %s", ex->claim, err);
	else
		lesson_error(r, it->line, "the claim '%s' does not hold: %s. The model no longer does what the lesson says "
		             "here: choose another example, or change the prose and the claim", ex->claim, err);
}
