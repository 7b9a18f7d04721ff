/* views.h — views turn a trace entry plus a selection (layer, head) into a Figure: they know
 * what the numbers mean (token labels, titles, the stage's formula) and nothing of drawing.
 * Layers and heads are numbered from 1, as everywhere the user looks. Each returns a new
 * figure, or NULL after printing a one-line error (bad selection, nothing run yet). */
#ifndef GLASSBOX_VIEWS_H
#define GLASSBOX_VIEWS_H

#include "app/session.h"
#include "viz/figure.h"

/* Token labels of the stack a tensor belongs to ("" = decoder-only, "enc.", "dec."): a
 * malloc'd array of n malloc'd strings (the tokens' raw bytes; the backends make spaces
 * visible). free_labels frees it. */
char **token_labels(session *s, const char *stack, int *n);
void free_labels(char **labels, int n);

/* The wide views (embed, pe, qkv, ln, ffn, show) take units: the window of columns to show,
 * {from, to} counted from 1 ({from, 0}: to the end), as --units gives it; NULL or {0, 0}:
 * the first 64. Their figures number the columns from the window's first. */
gb_figure *view_embed(session *s, const int *units);
gb_figure *view_pe(session *s, const int *dims, int n_dims, const int *units); /* dims may be NULL: a heatmap */
gb_figure *view_attention(session *s, const char *kind, int layer, int head); /* "weights", "scores", "masked" */
gb_figure *view_cross(session *s, int layer, int head);
gb_figure *view_heads(session *s, int layer);
gb_figure *view_model(session *s);
gb_figure *view_qkv(session *s, int layer, int head, const int *units);
gb_figure *view_ln(session *s, int layer, int which, const int *units);
gb_figure *view_ffn(session *s, int layer, const int *units);
gb_figure *view_resid(session *s);
gb_figure *view_next(session *s, int k, double temp);
gb_figure *view_tensor(session *s, const char *name, int index, const int *units); /* index: 3-D slice, 0 = all */

/* The stages a student walks through, in the pipeline's order; the window's keys and the
 * explorer move along them (Tab), across layers (Up/Down) and heads (Left/Right). */
enum stage { ST_EMBED, ST_PE, ST_QKV, ST_SCORES, ST_ATTN, ST_HEADS, ST_LN, ST_FFN, ST_RESID, ST_NEXT, ST_CROSS,
             ST_N };

const char *stage_name(int stage);

/* The figure of the session's current stage, layer and head (s->stage, s->layer, s->head), in
 * the window of columns s->units when it was chosen for this stage. */
gb_figure *view_stage(session *s);
/* A head's scores, masked scores or weights ("scores", "masked", "weights") of any stack
 * ("", "enc.", "dec.") and block ("attn", "cross"), as attn draws them: what `show` gives for
 * such a tensor with a head index. */
gb_figure *view_attention_named(session *s, const char *stack, const char *block, const char *kind, int layer, int head);
/* f (and its panels) on a colour scale (a bar chart's axis) fixed at lo..hi, said once in its
 * subtitle; returns f. */
gb_figure *view_fix_range(gb_figure *f, double lo, double hi);
/* f on the fixed colour scale the session keeps for the stage on show (--range), if any. */
gb_figure *view_stage_range(session *s, gb_figure *f);

/* Part 4 (the window). One head's attention weights as lines (BertViz's head view): queries
 * left, keys right, a line per weight; cross = 1 for cross-attention. */
gb_figure *view_attn_lines(session *s, int layer, int head, int cross);
/* view_next at temperature T with T in its meta ("Temperature"), so the window can change T,
 * and in its title when T is not 1 or always_t is set. */
gb_figure *view_next_temp(session *s, int k, double temp, int always_t);

#endif
