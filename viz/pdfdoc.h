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
 * Slides: a section (a step) carries what a teacher needs to teach it, in its order: its prose,
 * list items, literal lines (formulas, small tables), what its commands printed (not the
 * output of a command whose figure follows: the figure is its point), its questions (paragraphs
 * that start "**Question") with their options. A section of n figures makes n figure slides
 * ("k/n" in the heading when n > 1), each figure laid out for the room left; the text before a
 * figure is its caption when it is prose of two lines or less, else a slide of its own before
 * it (a closing paragraph that ends in a colon stays the figure's caption, so nothing ends on
 * a colon); text after the last figure is its caption too when it fits, else a slide after it.
 * A slide of text sets its text as large as fits (prose from 28 pt down to 11 pt on the 960 x
 * 540 page, 11 pt being 18 px at 1600 x 900; terminal text at 0.85 of it, smaller only to fit
 * its longest line, broken at 11 pt rather than set smaller), and when that is under 16 pt
 * splits it into two or three slides. A question goes on the slide of the text or figure it
 * follows. A section named "Answers" is the handout's alone.
 * In the handout, fenced code (commands and what they printed) is set in a monospace small
 * enough for its longest line, down to 6.5 pt; a longer line is broken there: a command at a
 * space with " \" at the end (it stays whole to copy), output with "↪" before the rest. */
#ifndef GLASSBOX_PDFDOC_H
#define GLASSBOX_PDFDOC_H

#include "viz/figure.h"
#include "viz/vizerr.h"

typedef struct gb_pdfbook gb_pdfbook;

/* A slide's figure is laid out for the room the slide leaves it (a heading line above, a
 * caption below, the page's width), not shrunk from 16:9: at 1600 x 800, the layout of
 * `export FILE --size 1600x800`; a slide with a longer caption or questions takes a flatter
 * layout, down to 1600 x 560 by 20. */
#define GB_SLIDE_FIG_W 1600
#define GB_SLIDE_FIG_H 800

gb_pdfbook *gb_pdfbook_new(void);
void gb_pdfbook_free(gb_pdfbook *b);

/* Records f (as the PNG would lay it out at 1600 x 900) under name, e.g. "03-attn.png". */
int gb_pdfbook_add_figure(gb_pdfbook *b, const char *name, const gb_figure *f, gb_verr *err);

/* Writes the slides (one page per "## " section but Answers) or the handout of md to path;
 * *pages (may be NULL) gets the page count. */
int gb_pdfbook_slides(gb_pdfbook *b, const char *md, const char *path, const char *version, int *pages,
                      gb_verr *err);
int gb_pdfbook_handout(gb_pdfbook *b, const char *md, const char *path, const char *version, int *pages,
                       gb_verr *err);

#endif
