/* textout.h — text at the prompt that reads at any terminal width: the terminal's size,
 * prose wrapped at it without breaking a word, and table columns padded by display width
 * (printf's %-10s counts bytes, so every "·" or "é" in a token would shift the columns after
 * it by one). */
#ifndef GLASSBOX_TEXTOUT_H
#define GLASSBOX_TEXTOUT_H

#include <stdio.h>

/* The space output may take: the terminal's columns and lines (less two lines, for the
 * prompt) on a terminal, where $COLUMNS and $LINES may make it smaller (a lesson keeps room
 * for its prose); for scripts and pipes $COLUMNS x $LINES, else 120 x 80. */
void text_size(int *w, int *h);

/* The column prose wraps at: the terminal's width, at most 100 (longer lines are hard to
 * read), at least 40. */
int text_width(void);

/* Prints text wrapped at width columns without breaking a word (a word longer than a line
 * stands alone on its line): the first line goes on from column `col` (what the caller has
 * printed on it already), the others start with `indent` spaces. Newlines in text are spaces
 * (it is one paragraph). Ends with a newline. */
void text_wrap(FILE *fp, const char *text, int width, int col, int indent);

/* s in exactly `width` terminal columns: left-aligned (text_cols) or right-aligned
 * (text_rcols), cut at a whole character when longer. */
void text_cols(FILE *fp, const char *s, int width);
void text_rcols(FILE *fp, const char *s, int width);

#endif
