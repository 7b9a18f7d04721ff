/* view_common.h — what every view puts around its numbers so that a figure stands alone on a
 * slide (../shared/DESIGN.md, "A figure stands alone"): a title in words for any trace tensor,
 * a subtitle naming the model, the text and the selection, the window of columns a wide view
 * shows (--units), colours that fit the data, and the token-labelled heatmap they start from.
 * Shared by the views (views.c, view_show.c) and the figures commands build themselves (the
 * logit lens). */
#ifndef GLASSBOX_VIEW_COMMON_H
#define GLASSBOX_VIEW_COMMON_H

#include <stddef.h>

#include "app/session.h"
#include "viz/figure.h"

/* The widest a view is by default: wider tensors show their first WIDE_COLS columns, and
 * --units chooses others. 64 columns still read on a slide, one label each. */
#define WIDE_COLS 64

/* A trace tensor's name in words: "L1.resid.mid" -> "After attention, layer 1"; index > 0
 * names one slice of a 3-D tensor (", head 2"). Names it does not know come back as they are. */
void tensor_title(session *s, const char *name, int index, char *out, size_t cap);

/* A label in words ("after layer 1"), with no-break spaces between them: the backends show a
 * plain space in a token's label as "·" (its most important character), which words do not
 * want. Writes into out (cap bytes). */
void words_label(const char *words, char *out, size_t cap);

/* The loaded model's name (its folder's last part). */
const char *model_name(session *s);

/* What a PNG's text chunks and an SVG's metadata record: the model, the text (and an
 * encoder-decoder's target so far), the tensor (may be NULL), the engine. */
void view_meta(session *s, gb_figure *f, const char *tensor_name);

/* Sets f's subtitle: the model, the text in quotes and the selection, e.g.
 * "tiny-lm · “When Mary and John went to …” · units 1-64 of 512" (sel may be NULL or "").
 * A long text keeps its start, or its end when tail is set (a view of what comes next). */
void view_subtitle(session *s, gb_figure *f, const char *sel, int tail);
/* The engine a figure names ("ref", "fast", "scalar", ...), or NULL: a figure names a
 * non-default engine, and any engine once `set engine` was used (lesson 15 sets the charts of
 * both side by side). */
const char *view_engine(const session *s);

/* The window of columns a wide view shows: columns a..b (from 1, inclusive) of n. */
typedef struct colwin {
	int a, b, n;
	char sel[96];             /* in words when it is a part, "units 65-128 of 512"; else "" */
} colwin;

/* Chooses the window: units = {from, to} as --units gave it ({a, 0}: a to the end), or NULL
 * / {0, 0} for the first WIDE_COLS. what names the columns ("units", "features"). Returns -1
 * after a one-line error when the units do not exist. */
int col_window(const int *units, int n, const char *what, colwin *w);

/* The columns w->a..w->b of a (rows, w->n) matrix, as a new (rows, b - a + 1) one. */
float *window_cols(const float *v, int rows, const colwin *w);

/* The figure's title, formatted like printf. */
void view_titlef(gb_figure *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The end of the current text, quoted and cut to max columns ("“…pet is a”"); "" when none. */
void view_text_end(session *s, int max, char *out, size_t cap);
/* The current text quoted whole when it fits max columns, else its start and its end with "…"
 * between (two texts that differ early or late keep their difference in view); "" when none. */
void view_text_whole(session *s, int max, char *out, size_t cap);

/* A heatmap of a (rows, cols) block: token labels of stack stack_rows on the rows and of
 * stack_cols on the columns (attention's keys) where given (NULL: none), numbered from 1 so a
 * lesson can say "row 3"; axis titles. */
gb_figure *view_heat(session *s, const float *v, int rows, int cols, const char *stack_rows,
                     const char *stack_cols, const char *row_title, const char *col_title);

/* A heatmap of a wide (rows, cols) block: the window of columns units chooses (col_window),
 * numbered from its first column; the window in w. NULL after an error line. */
gb_figure *view_wide_heat(session *s, const float *v, int rows, int cols, const int *units, const char *what,
                          const char *stack_rows, const char *row_title, const char *col_title, colwin *w);

/* What a title adds when a window shows only part of the columns, so it claims no more than
 * the slide shows: " (the first 64 of 128 features)", " (units 65-128 of 512)", or "" when
 * every column is shown (w may be NULL). Returns buf. */
const char *view_shown(const colwin *w, char *buf, size_t cap);

/* What every view's figure says about where it came from: the subtitle (model, text and the
 * window of columns w, which may be NULL) and the metadata (view_meta, and "Columns"). */
void view_provenance(session *s, gb_figure *f, const char *tensor_name, const colwin *w, int tail);

/* Colours that fit the data (panels included): values of one sign get the sequential map seq
 * over their [min, max]; signed values a diverging map around 0, symmetric when the two sides
 * are alike and each side to its own extreme when one is much shorter (GB_RANGE_CENTERED:
 * GELU outputs of -0.17 .. 2.8). A grid's panels take the grid's map. */
void fit_range(gb_figure *f, int seq);

/* The trace tensor of this name (printf-style), or NULL after an error line naming it. */
const gb_ttensor *view_trace(session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Slice j (0-based: a head) of that 3-D tensor into *out (gb_trace_slice: a long input's lazy
 * trace computes that head alone); 0, or -1 after an error line. */
int view_trace_slice(session *s, int j, gb_ttensor *out, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A layer (1..n) or a head (1..n_head) named by the user: -1 with a one-line error otherwise. */
int check_layer(session *s, int layer, int n);
int check_head(session *s, int head);

#endif
