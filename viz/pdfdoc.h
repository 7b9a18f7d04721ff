/* pdfdoc.h — documents of several pages through cairo's PDF surface, text set by pango:
 * a deck of 16:9 slides and an A4 handout, made from the small Markdown the lesson export writes
 * and from figures recorded as vectors (the layout of the PNG, drawn once into a cairo
 * recording surface and placed on as many pages as need it). Fonts are embedded (cairo writes
 * the subsets used); files are written safely (export.h).
 *
 * The Markdown read: "# title", "## section" (a slide each), paragraphs, "```" fenced code,
 * four-space literal lines, "- " list items, "![alt](NAME)" figures by the name they were
 * recorded under, and inline **bold**, *italic* and `code`. A slide holds its section's
 * heading, one of its figures (a section of n figures makes n slides, "k/n" in the heading: a
 * comparison keeps all its charts), the first sentence of its first paragraph as the caption,
 * and its questions (paragraphs that start "**Question") with their options (the list items
 * after them), each on the slide of the figure it follows (the first one when none does); a section named "Answers" is the handout's alone.
 * In the handout, fenced code (commands and what they printed) is set in a monospace small
 * enough for its longest line, never wrapped; a line too long even so is cut with a mark. */
#ifndef GLASSBOX_PDFDOC_H
#define GLASSBOX_PDFDOC_H

#include "viz/figure.h"
#include "viz/vizerr.h"

typedef struct gb_pdfbook gb_pdfbook;

/* A slide's figure is laid out for the room the slide leaves it (a heading line above, a
 * caption line below, the page's width), not shrunk from 16:9: at 1600 x 800, the layout of
 * `export FILE --size 1600x800`; a slide with questions may take a flatter layout. */
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
