/* textout.c — text at the prompt that reads at any terminal width (textout.h): the
 * terminal's size, wrapped prose, columns padded by display width. */
#include "app/textout.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "viz/figure.h"

void text_size(int *w, int *h)
{
	struct winsize ws;
	const char *c = getenv("COLUMNS"), *l = getenv("LINES");
	*w = 120;
	*h = 80;
	int tty = isatty(1) && !ioctl(1, TIOCGWINSZ, &ws) && ws.ws_col > 0;
	if (tty) {
		*w = ws.ws_col;
		*h = ws.ws_row > 3 ? ws.ws_row - 2 : ws.ws_row;
	}
	/* on a terminal they may narrow it (a lesson keeps room for its prose), never widen it:
	 * readline exports the terminal's own size there, prompt line included */
	if (c && atoi(c) > 0 && (!tty || atoi(c) < *w))
		*w = atoi(c);
	if (l && atoi(l) > 0 && (!tty || atoi(l) < *h))
		*h = atoi(l);
}

int text_width(void)
{
	int w, h;
	text_size(&w, &h);
	return w < 40 ? 40 : w > 100 ? 100 : w;
}

void text_wrap(FILE *fp, const char *text, int width, int col, int indent)
{
	const char *s = text;
	int first = 1;
	for (;;) {
		while (*s == ' ' || *s == '\n' || *s == '\t')
			s++;
		if (!*s)
			break;
		const char *e = s;
		while (*e && *e != ' ' && *e != '\n' && *e != '\t')
			e++;
		char *word = strndup(s, (size_t)(e - s));
		int ww = gb_utf8_width(word);
		if (!first && col + 1 + ww > width) {
			fprintf(fp, "\n%*s", indent, "");
			col = indent;
		} else if (!first) {
			fputc(' ', fp);
			col++;
		}
		fputs(word, fp);
		col += ww;
		first = 0;
		free(word);
		s = e;
	}
	fputc('\n', fp);
}

/* How many bytes of s fit in width columns, and the columns they take. */
static size_t fit(const char *s, int width, int *used)
{
	size_t k = 0;
	*used = 0;
	while (s[k]) {
		uint32_t cp;
		int n = gb_utf8_decode(s + k, &cp);
		if (n <= 0)
			break;
		int w = cp == GB_UTF8_BAD ? 1 : gb_cp_width(cp);
		if (*used + w > width)
			break;
		k += (size_t)n;
		*used += w;
	}
	return k;
}

void text_cols(FILE *fp, const char *s, int width)
{
	int used;
	size_t k = fit(s, width, &used);
	fwrite(s, 1, k, fp);
	fprintf(fp, "%*s", width - used, "");
}

void text_rcols(FILE *fp, const char *s, int width)
{
	int used;
	size_t k = fit(s, width, &used);
	fprintf(fp, "%*s", width - used, "");
	fwrite(s, 1, k, fp);
}
