/* pdfdoc.h — documents of several pages through cairo's PDF surface, text set by pango:
 * a deck of 16:9 slides and an A4 handout, made from the small Markdown the lesson export writes
 * and from figures recorded as vectors (the layout of the PNG, drawn once into a cairo
 * recording surface and placed on as many pages as need it). Fonts are embedded (cairo writes
 * the subsets used); files are written safely (export.h).
 *
 * The Markdown read: "# title", "## section", paragraphs, "```" fenced code, four-space
 * literal lines, "- " list items, "1. " numbered lines (the answers, one a line), "![alt](NAME)"
 * figures by the name they were recorded under, and inline **bold**, *italic* and `code`.
 *
 * Slides: a title slide (the lesson's title, its steps and minutes, the glassbox that made
 * it), then each section (a step) with what a teacher needs to teach it, in its order: its
 * prose, list items, literal lines (formulas, small tables), what its commands printed (not
 * the output of a command whose figure follows: the figure is its point), its questions
 * (paragraphs that start "**Question") with their options. A section of n figures makes n
 * figure slides ("k/n" in the heading when n > 1), each figure laid out for the room left,
 * the command that drew it under it ("glassbox> attn 4 3"). Text stays with what it is
 * about: the paragraph before a figure that leads into it (ending in a colon, or mid-sentence:
 * the figure interrupts it) goes above it, as does the short text before a step's first
 * figure; what follows a figure (what to see in it, the questions about it) goes under it as
 * far as it fits with the figure keeping half the page's height (a paragraph that does not
 * fit whole by its first sentences, never a sentence cut), a narrow figure (square maps)
 * standing beside the text instead where that gives it more of the page; the rest goes on
 * slides of text after it. Nothing said after a question is on the question's slide: a
 * question ends its slide. A slide of text sets its text as large as fits (prose from 28 pt
 * down to 11 pt on the 960 x 540 page, 11 pt being 18 px at 1600 x 900; terminal text at 0.85
 * of it, smaller only to fit its longest line, a tenth of its lines broken where that sets
 * the rest larger, broken at 11 pt rather than set smaller), and when that is under 16 pt
 * splits it into two or three slides; a long dump of output (`info`, `heads`, `trace`) gets a
 * slide of its own, with what introduces it, and a tall one set small even so two or three.
 * Code spans in prose break only at their spaces. A section named "Answers" is the handout's
 * alone.
 * In the handout, fenced code (commands and what they printed) is set in a monospace small
 * enough for its longest line, down to 7 pt; a longer line is broken there: a command at a
 * space with " \" at the end (it stays whole to copy), output with "↪" before the rest, at
 * the end of a phrase where it can. What belongs together stays on one page where it fits on
 * one: a command and the figure it drew, a question with its options and hint, the answers. */
#ifndef GLASSBOX_PDFDOC_H
#define GLASSBOX_PDFDOC_H

#include "viz/figure.h"
#include "viz/vizerr.h"

typedef struct gb_pdfbook gb_pdfbook;

/* A slide's figure is laid out for the room the slide leaves it (a heading line above, text
 * and questions below), not shrunk from 16:9: at 1600 x 860 down to 1600 x 480 by 20, or the
 * same shapes 1400 or 1200 wide (type larger on the slide), the layout of `export FILE --size
 * WxH`: of those that leave out least (labels shortened or thinned up to 64, strips), the one
 * with the largest type where its data keeps most of the room. A figure whose data is narrow
 * (square maps) may stand beside its text instead, 1000, 860 or 740 wide. A figure slide keeps
 * text under its figure only where the figure leaves out nothing it shows on a slide of its
 * own and a line plot keeps a third of the page's height; the rest goes on the next slide. */

gb_pdfbook *gb_pdfbook_new(void);
void gb_pdfbook_free(gb_pdfbook *b);

/* Records f under name, e.g. "03-attn.png": for the handout at 1200 x 675 (the PNG's layout at
 * three quarters: its text larger on paper), or 1200 x 900 or 1125 where that leaves out less
 * (the merge replay's every strip) or gives a grid of small maps more room; for the slides at
 * each of their sizes. */
int gb_pdfbook_add_figure(gb_pdfbook *b, const char *name, const gb_figure *f, gb_verr *err);

/* Writes the slides (one page per "## " section but Answers) or the handout of md to path;
 * *pages (may be NULL) gets the page count. */
int gb_pdfbook_slides(gb_pdfbook *b, const char *md, const char *path, const char *version, int *pages,
                      gb_verr *err);
int gb_pdfbook_handout(gb_pdfbook *b, const char *md, const char *path, const char *version, int *pages,
                       gb_verr *err);

#endif
