/* figure.h — a backend-neutral description of one picture: what kind it is, its numbers, its
 * labels, title, caption, colormap and value range. Pure data: it knows nothing of the model
 * (a view in app/ fills it from a trace) and nothing of how it is drawn (the terminal cells,
 * the raster/PNG/SDL, SVG and CSV/NPY backends each read it).
 *
 * Kinds:
 *   HEATMAP  values (rows, cols), row and column labels (e.g. query and key tokens), optional
 *            numbers in the cells, a colorbar.
 *   BARS     values (n) with a label each (e.g. the next-token distribution), horizontal bars.
 *   LINES    several series over a shared x (e.g. positional-encoding dimensions, loss curves).
 *   STRIP    tokens coloured by a value: values (n), labels (n).
 *   GRID     small multiples: panels (n_panels) laid out in grid_cols columns, sharing one
 *            colormap and value range (all heads of a layer; all layers x heads).
 *   ATTNLINES one head's attention as BertViz's head view draws it: the query tokens
 *            (row_labels) in a left column, the key tokens (col_labels) in a right column,
 *            and a line from each query to each key whose width and opacity follow the
 *            weight in values (rows = queries, cols = keys).
 *   DIAGRAM  a block diagram (the model's architecture): blocks (n_blocks) stacked top to
 *            bottom in reading order, each a box with a label and a detail line (its shape);
 *            blocks of one repeated group (a layer) share a group number and are framed
 *            together with the group's repeat count; one or more blocks may be highlighted
 *            (the stage the current view shows).
 *   STRIPS   a sequence of token strips, one under the other (the BPE merge replay): panels
 *            (n_panels), each a STRIP with its own title (the merge applied and its rank) and
 *            its own tokens, on one colour scale (the ids).
 *   DECODE   decoding steps side by side: panels (n_panels), each a BARS of one step's most
 *            probable candidates (best first) with a mark per bar (kept, cut, chosen), the
 *            cut-offs drawn as rules after a bar (top-k, top-p) and the model's own probability
 *            (temperature 1) as a tick on each bar.
 *   TREE     a beam search: nodes (n_nodes), each a beam's last token under its parent, with
 *            the token's log-probability on the edge and the path's score at the node; pruned
 *            beams grey, the best final path drawn strong.
 * Every string and array is owned by the figure (the setters copy); gb_fig_free frees all. */
#ifndef GLASSBOX_FIGURE_H
#define GLASSBOX_FIGURE_H

#include <stddef.h>
#include <stdint.h>

enum gb_fig_kind { GB_FIG_HEATMAP, GB_FIG_BARS, GB_FIG_LINES, GB_FIG_STRIP, GB_FIG_GRID, GB_FIG_ATTNLINES,
                   GB_FIG_DIAGRAM, GB_FIG_STRIPS, GB_FIG_DECODE, GB_FIG_TREE };

/* DECODE panels: what became of each candidate bar (flags). */
enum { GB_MARK_KEPT = 0, GB_MARK_CUT = 1, GB_MARK_CHOSEN = 2 };

/* TREE nodes: the root (the prompt), a node still alive at the end, one whose line died (a
 * pruned beam), one on the best final path. */
enum { GB_NODE_ROOT, GB_NODE_KEPT, GB_NODE_PRUNED, GB_NODE_BEST };

/* One node of a TREE (a beam's last token). */
typedef struct gb_fig_node {
	char *label;              /* the token (or the prompt's last words at the root) */
	int parent;               /* index of the parent node (< this one), -1 at the root */
	int depth;                /* 0 at the root, the step otherwise */
	double edge;              /* the token's log-probability (the edge from its parent) */
	double score;             /* the sum of log-probabilities along the path */
	int state;                /* GB_NODE_* */
} gb_fig_node;

#define GB_FIG_CUTS 4

/* Colormaps, each from its published 256-entry table (viz/colormap.c names the sources). */
enum gb_cmap { GB_CMAP_VIRIDIS, GB_CMAP_MAGMA, GB_CMAP_CIVIDIS, GB_CMAP_GRAY, GB_CMAP_COOLWARM,
               GB_CMAP_N };

/* How the value range is chosen: from the data's min and max, fixed by the view (e.g. 0..1
 * for attention weights), or symmetric around 0 (max |v|) for signed values. CENTERED is for
 * signed values far from symmetric (GELU outputs, about -0.17 .. 1.6): a truncated symmetric
 * scale. The range is the data's [min(lo, 0), max(hi, 0)]; colours are linear on [-m, m] with
 * m = max(|lo|, |hi|), so 0 keeps the middle colour of a diverging map, -0.17 is a pale blue
 * and 1.6 the full red (one slope for both signs); the colour bar shows only [lo, hi], the
 * part of the map in use. */
enum gb_range { GB_RANGE_AUTO, GB_RANGE_FIXED, GB_RANGE_SYMMETRIC, GB_RANGE_CENTERED };

typedef struct gb_series {
	char *label;
	float *y;                 /* (n) */
	int n;
	int gaps;                 /* its NaN points are gaps the view put there (a line that starts
	                           * or stops part way), drawn as nothing and not counted as bad */
	/* how it is drawn (all 0: the k-th colour, solid, normal width): hue k > 0 gives it the
	 * k-th colour of the figure's groups (two models: one colour each), dash 1 draws it
	 * dashed, weight > 1 heavier (the series the figure is about) */
	int hue, dash;
	float weight;
} gb_series;

/* One box of a DIAGRAM. */
typedef struct gb_fig_block {
	char *label;              /* e.g. "attention" */
	char *detail;             /* e.g. "4 heads x 32 = 128", or NULL */
	int group;                /* 0: on its own; k > 0: part of repeated group k (a layer) */
	int highlight;            /* the block the current view shows */
} gb_fig_block;

typedef struct gb_figure {
	int kind;                 /* enum gb_fig_kind */
	char *title;              /* e.g. "Layer 1, head 2: attention weights" */
	char *caption;            /* e.g. the stage's formula "softmax(q k^T / sqrt(d_head))" */
	int cmap;                 /* enum gb_cmap */
	int range;                /* enum gb_range */
	float vmin, vmax;         /* with GB_RANGE_FIXED */
	int colorbar;             /* draw a colorbar (heatmap, strip, grid) */
	int numbers;              /* print each cell's value in it (heatmap) */
	int precision;            /* digits after the point for printed numbers (default 2) */
	int masked;               /* -inf values are masked cells, there by design (an attention
	                           * mask's -inf above the diagonal), not bad numbers: backends draw
	                           * them in gb_mask_rgb and count them apart from NaN and +inf. On
	                           * a grid it covers every panel. */
	int mask_zero;            /* the masked cells stand for a weight of 0 (attention weights,
	                           * where the view puts -inf in the cells the mask hid): notes and
	                           * hover say "weight 0", not "-inf" */
	char mask_what[32];       /* when set, what the grey cells are instead (e.g. "no such
	                           * tensor": an encoder's layers have no cross-attention) */

	/* HEATMAP (rows, cols); BARS and STRIP (1, cols) */
	float *values;            /* (rows, cols), row-major; NaN and inf allowed (drawn marked) */
	int rows, cols;
	char **row_labels;        /* (rows) or NULL */
	char **col_labels;        /* (cols) or NULL */
	char *row_title;          /* axis titles, e.g. "query" and "key"; may be NULL */
	char *col_title;

	/* LINES */
	gb_series *series;        /* (n_series) */
	int n_series;
	float *xs;                /* (n_xs) shared x values, or NULL for 0 .. n-1 */
	int n_xs;                 /* points beyond n_xs have no x: backends stop there */
	char *x_title, *y_title;

	/* GRID */
	struct gb_figure **panels; /* (n_panels), each a HEATMAP with its own title ("head 3") */
	int n_panels, grid_cols;

	/* A second line under the title, in words: what the figure came from and what it selects,
	 * e.g. "tiny-lm · \"When Mary and John\" · units 1-64 of 512" or "temperature 0.5".
	 * NULL: none. */
	char *subtitle;

	/* HEATMAP: index labels. When > 0, backends label row i (and column j) with its index
	 * row_index0 + i (col_index0 + j) before the token, e.g. "3 ·the", so a lesson can say
	 * "row 3"; a window of columns (units 65-128) sets col_index0 = 65. 0: no index. */
	int row_index0, col_index0;

	/* HEATMAP: a short text in each cell drawn instead of its number (e.g. the logit lens's
	 * top token in each cell); (rows, cols) strings, or NULL. */
	char **cell_text;

	/* HEATMAP: side columns, numbers beside each row that are not on the colour scale (layer
	 * norm's mean and variance of each token's input): n_side columns, each with a title,
	 * values (n_side, rows), printed with side_precision significant digits. */
	int n_side;
	char **side_titles;       /* (n_side) */
	float *side_values;       /* (n_side, rows) */
	int side_precision;
	int side_decimals;        /* > 0: every side number with this many decimals instead (a column
	                           * reads down its points: 0.0076 over -0.0000, not 2.1e-05) */

	/* DIAGRAM */
	gb_fig_block *blocks;     /* (n_blocks) */
	int n_blocks;
	char **group_titles;      /* (n_groups) e.g. "layer x 4"; group k's title is [k - 1] */
	int n_groups;

	/* What the figure shows, for PNG tEXt chunks and SVG metadata: (key, value) pairs such as
	 * ("Model", "tiny-lm"), ("Text", "the cat sat"), ("Tensor", "L1.attn.weights"). */
	char **meta_keys, **meta_vals;
	int n_meta;

	/* Issue 18, the views' part. GRID: every panel keeps its row and column labels in the
	 * terminal as well (qkv's three panels of tokens x features have the room; the model
	 * view's sixteen small maps do not, and go without). */
	int panel_labels;

	/* GRID: 1 = every panel fills its slot, its cells stretched to it (panels of different
	 * sizes that are not in the same units, as linear attention's n x n weights beside its
	 * d x d state); 0 = one cell size for all, a smaller panel drawn smaller. PNG only. */
	int panel_fill;

	/* GRID: 1 = on a page wider than the grid needs, whole rows of panels may stand side by side
	 * in blocks, where that gives the cells more room and leaves out no more: block b takes
	 * rows [b * n, (b + 1) * n) of the grid in their order, with a wider gap between blocks, so
	 * a row is still a row (the model view's layers: 1-2 left, 3-4 right on a slide). 0 = as
	 * grid_cols says. Raster, SVG and PDF only. */
	int grid_wrap;

	/* Issue 18, part 7 (one path for every figure): the colormap the view chose, kept when
	 * app/ puts the session's palette in cmap, so another palette (or none) can be applied
	 * later from the view's choice rather than from the last palette's. view_cmap_set is 0
	 * until app/ first styles the figure. */
	int view_cmap, view_cmap_set;

	/* Issue 18, part 5 (arch): a DIAGRAM of two stacks side by side (an encoder-decoder).
	 * stack2 > 0: blocks [0, stack2) are the first stack (the encoder), drawn on the left,
	 * and blocks [stack2, n_blocks) the second (the decoder) on the right; 0: one stack.
	 * feeds > 0: the first stack's output enters block feeds - 1 of the second stack (the
	 * cross-attention), drawn as an arrow between the stacks; 0: no such arrow. */
	int stack2, feeds;

	/* Part 4 (the window): ATTNLINES focus, as BertViz's hover does. focus_row = k > 0 draws
	 * only query k's lines (1-based) and prints its weights beside the keys; focus_col = k > 0
	 * only the lines into key k, with the weights beside the queries. 0: every line. */
	int focus_row, focus_col;

	/* Issue 18, the figures' part (the lesson review): a HEATMAP's columns in groups of
	 * col_group (a per-head tensor's heads, d_head columns each): the PNG, SVG and window draw
	 * a rule between groups and "head k" over each. Groups count from the tensor's first
	 * column (col_index0 places a window of columns). 0: no groups. */
	int col_group;

	/* Issue 14, part 3 (every step has a figure). STRIP: each token's bytes, drawn as small
	 * boxes under it ("e2 96" for a piece holding part of a character, the one byte of a
	 * byte-fallback piece), (cols) strings of hex pairs separated by spaces, or NULL. */
	char **byte_labels;
	/* STRIP (and a STRIPS panel): the boxes alternate two light tints by position instead of
	 * a colour per value: the values are token ids, names rather than amounts, and a colour
	 * per id would claim an order they do not have (a teacher's review); no colour bar. */
	int alternate;
	/* BARS drawn as a DECODE panel: marks (cols) GB_MARK_* flags, or NULL (all kept); ref
	 * (cols) a second value per bar drawn as a tick across it, or NULL, named ref_label in
	 * the legend; cuts: a rule after bar cut_at[i] (1-based: after the first cut_at[i] bars)
	 * labelled cut_label[i] ("top-k 3"). */
	int *marks;
	float *ref;
	char *ref_label;
	int n_cuts;
	int cut_at[GB_FIG_CUTS];
	char cut_label[GB_FIG_CUTS][48];
	/* TREE */
	gb_fig_node *nodes;       /* (n_nodes), parents before children */
	int n_nodes;
} gb_figure;

/* A new empty figure of a kind (viridis, automatic range, colorbar on, precision 2). NULL when
 * out of memory. */
gb_figure *gb_fig_new(int kind);
void gb_fig_free(gb_figure *f);

/* Setters copy their arguments. Each returns 0, or -1 when out of memory. */
int gb_fig_set_title(gb_figure *f, const char *title);
int gb_fig_set_caption(gb_figure *f, const char *caption);
int gb_fig_set_values(gb_figure *f, const float *v, int rows, int cols); /* (rows, cols) */
int gb_fig_set_row_labels(gb_figure *f, const char *const *labels);       /* (rows) */
int gb_fig_set_col_labels(gb_figure *f, const char *const *labels);       /* (cols) */
int gb_fig_set_axes(gb_figure *f, const char *row_title, const char *col_title);
int gb_fig_add_series(gb_figure *f, const char *label, const float *y, int n);
int gb_fig_set_xs(gb_figure *f, const float *xs, int n);
int gb_fig_add_panel(gb_figure *f, gb_figure *panel); /* takes ownership (freed on failure too) */
/* A kind's name: "heatmap", "bars", "lines", "strip", "grid", "attnlines", "diagram", "strips",
 * "decode", "tree". */
const char *gb_fig_kind_name(int kind);
int gb_fig_add_meta(gb_figure *f, const char *key, const char *value);
int gb_fig_set_subtitle(gb_figure *f, const char *subtitle);
/* After gb_fig_set_values: (rows, cols) strings (copied; a NULL entry becomes "", which
 * backends draw as the cell's number). Setting new values of another shape drops them. */
int gb_fig_set_cell_text(gb_figure *f, const char *const *text);
/* After gb_fig_set_values: one side column of rows numbers (dropped with a new row count). */
int gb_fig_add_side(gb_figure *f, const char *title, const float *v);
/* DIAGRAM: a block (group 0 = alone) and a group's title (groups numbered from 1). */
int gb_fig_add_block(gb_figure *f, const char *label, const char *detail, int group, int highlight);
int gb_fig_set_group_title(gb_figure *f, int group, const char *title);
/* STRIP: the tokens' bytes (cols strings, copied). BARS: marks and ref (cols each, either may
 * be NULL), a cut-off rule (at most GB_FIG_CUTS). TREE: a node; returns its index, -1 on
 * failure (out of memory, a parent that is not an earlier node). */
int gb_fig_set_bytes(gb_figure *f, const char *const *bytes);
int gb_fig_set_marks(gb_figure *f, const int *marks, const float *ref, const char *ref_label);
int gb_fig_add_cut(gb_figure *f, int after, const char *label);
int gb_fig_add_node(gb_figure *f, const char *label, int parent, double edge, double score, int state);

/* The range a backend maps to colours: for AUTO the finite min and max of every value (panels
 * and LINES series included), for SYMMETRIC [-m, m] with m the largest finite |v|, for FIXED [vmin, vmax]; a
 * degenerate range (lo == hi) is widened by 1 around it. *n_bad counts NaN and infinite values
 * (backends draw them in a distinct colour and say how many in the caption), except the -inf
 * of a masked figure, which gb_fig_count counts as masked. */
void gb_fig_range(const gb_figure *f, float *lo, float *hi, int *n_bad);

/* Where v sits on f's colour map for range [lo, hi] (from gb_fig_range), 0 at lo and 1 at hi:
 * linear, except for GB_RANGE_CENTERED, where it is linear on [-m, m] (m = max(|lo|, |hi|)):
 * 0 maps to 0.5, m to 1, -m to 0, and the shorter side reaches only part of its half.
 * Not clamped. Every backend maps values through it; a colour bar is drawn over [lo, hi] in
 * the colours gb_fig_unit(lo) .. gb_fig_unit(hi), with ticks placed linearly in value. */
double gb_fig_unit(const gb_figure *f, double lo, double hi, double v);

/* The values of a figure (panels and LINES series included) that have no place on the colour
 * scale, by kind: what the backends' captions report. */
typedef struct gb_fig_counts {
	int nan, pinf, ninf;      /* bad numbers: NaN, +inf, and -inf where the figure is not masked */
	int masked;               /* -inf in a masked figure (or a masked grid's panel) */
} gb_fig_counts;
void gb_fig_count(const gb_figure *f, gb_fig_counts *c);

/* Whether v of figure m (drawn as part of top, which may be m itself) is a masked cell. */
int gb_fig_is_masked(const gb_figure *top, const gb_figure *m, float v);

/* A label shortened to at most max_cols terminal columns (a tab ends the token: what follows
 * is an annotation, e.g. "mean 0.1 var 2", shown with plain spaces) (UTF-8 aware; an ellipsis "…" marks
 * a cut), with spaces made visible as "·" and control bytes as "\xNN" or "⏎" for a newline.
 * Writes a NUL-terminated string into out (cap bytes). Shared by every backend so a token
 * looks the same in the terminal, in a PNG and in an SVG. */
void gb_label_display(const char *label, int max_cols, char *out, size_t cap);

/* A token label (as gb_label_display gives it) that stands next to an index number, in quotes
 * when it would read as part of the number: when it starts with a digit or has no letter or
 * digit at all (punctuation, "·"), so "10 0" reads '10 "0"' and "11 ." reads '11 "."'.
 * Every backend labels "index token" through it. Writes a NUL-terminated string into out. */
void gb_label_indexed(int index, const char *tok, char *out, size_t cap);

/* Terminal columns a UTF-8 string takes: 1 per code point, 0 for combining marks and
 * invisible format characters, 2 for East Asian wide and fullwidth characters and wide emoji
 * (a terminal draws those in two columns, so counting them as one overflows a line); a byte
 * that is not UTF-8 counts 1. */
int gb_utf8_width(const char *s);

/* One code point from a NUL-terminated UTF-8 string: returns the bytes used (0 at the NUL).
 * A byte that does not start a valid, complete, shortest-form sequence uses 1 byte and gives
 * GB_UTF8_BAD. */
#define GB_UTF8_BAD 0xFFFFFFFFu
int gb_utf8_decode(const char *s, uint32_t *cp);

/* Terminal columns of one code point (0, 1 or 2), by the rule of gb_utf8_width. */
int gb_cp_width(uint32_t cp);

/* ---- numbers as every backend prints them (issue 18, part 7) ----------------------------------
 * One place for the text of a number in a figure, so the terminal, the window, a PNG and an
 * SVG print the same cell the same way. */

/* A value: prec digits after the point (0 .. 9); NaN, inf and -inf spelled "NaN", "inf",
 * "-inf"; |v| >= 1e6 in exponent form with max(prec + 1, 3) significant digits ("1.23e+06"),
 * since fixed point would widen every cell for one outlier; never "-0.00" (a sign on what
 * reads as zero is noise). Writes a NUL-terminated string into buf (cap bytes); returns its
 * length. */
int gb_fig_fmt_num(double v, int prec, char *buf, size_t cap);

/* A value with digits significant digits (1 .. 17), NaN and infinities spelled as above: for
 * the two ends of a scale that gb_fig_fmt_num would print alike. Returns the length. */
int gb_fig_fmt_sig(double v, int digits, char *buf, size_t cap);

/* A tick at v on an axis or colour bar whose ticks are step apart: as many decimals as the
 * step needs (step 0.2: "0.4"; step 5: "10"), a tiny v (a rounding residue of 0) as "0",
 * exponent form for |v| >= 1e6 or steps below 1e-6. Returns the length. */
int gb_fig_fmt_tick(double v, double step, char *buf, size_t cap);

#endif
