/* text.c — the lesson module's growing strings (a paragraph being read, a handout being
 * written) and the small tests of text that the parser, the calculator and the runner share. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/lesson/lesson_int.h"

void sb_add(sb *b, const char *t, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		while (b->n + n + 1 > b->cap)
			b->cap = b->cap ? b->cap * 2 : 128;
		b->s = realloc(b->s, b->cap);
	}
	memcpy(b->s + b->n, t, n);
	b->n += n;
	b->s[b->n] = 0;
}

void sb_puts(sb *b, const char *t) { sb_add(b, t, strlen(t)); }

void sb_printf(sb *b, const char *fmt, ...)
{
	va_list ap;
	char small[512];
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0)
		return; /* an encoding error: nothing sensible to add */
	if (n < (int)sizeof small) {
		sb_add(b, small, (size_t)n);
		return;
	}
	char *big = malloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb_add(b, big, (size_t)n);
	free(big);
}

/* The text so far (malloc'd, "" when empty); the builder starts over. */
char *sb_take(sb *b)
{
	char *s = b->s ? b->s : strdup("");
	memset(b, 0, sizeof *b);
	return s;
}

int is_blank(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return !*s;
}

int starts(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }

const char *skip_space(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

/* A whole string as a number (spaces around allowed). */
int parse_num(const char *s, double *x)
{
	char *end;
	s = skip_space(s);
	if (!*s)
		return 0;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno == ERANGE)
		return 0;
	if (*skip_space(end))
		return 0;
	*x = v;
	return 1;
}

int is_ident_start(int c) { return isalpha(c) || c == '_'; }
int is_ident(int c) { return isalnum(c) || c == '_'; }

/* Text as the student reads it: a code span that starts with a space is a token (` the`),
 * and its space is shown as the figures show it, a middle dot (`·the`), instead of a gap
 * that a reader takes for a typo ("the two  the vectors"). Spans are paired from the start of
 * the text, as Markdown pairs them; the rest is copied as it is. malloc'd. */
char *dot_spaces(const char *text)
{
	sb b = { 0 };
	int in = 0;
	for (const char *s = text; *s; s++) {
		if (*s != '`') {
			sb_add(&b, s, 1);
			continue;
		}
		sb_add(&b, s, 1);
		if (!in && s[1] == ' ' && s[2] && s[2] != ' ' && s[2] != '`' && strchr(s + 2, '`')) {
			sb_puts(&b, "\xC2\xB7");
			s++;
		}
		in = !in;
	}
	return sb_take(&b);
}
