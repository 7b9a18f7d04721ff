/* cells_layout.h — internal to the terminal backend (cells.c and cells_*.c): what the layout of
 * each figure kind shares. Nothing outside those files includes this; users have cells.h.
 *
 * An area is the rectangle of a grid one figure (or one panel) is laid out in, with the
 * figure's colour range and its counts of bad and masked values. The pieces here draw the
 * parts every kind has (title, caption, colorbar, the "rows 1–16 of 200" notices), check an
 * area and size it, and write numbers and labels as the cells show them. cells.c paints the
 * grid (gb_cells_set_cell) and knows what colour a terminal shows (gb_cells_ink_for);
 * cells_layout.c owns the rest, and the dispatch by kind. */
#ifndef GLASSBOX_CELLS_LAYOUT_H
#define GLASSBOX_CELLS_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "viz/cells.h"

#define BAD_CHAR '!'          /* plain depth's NaN/inf, not in the ramp */
#define MASK_CHAR '/'         /* plain depth's masked cell (hatched), not in the ramp */
#define LBUF 192              /* bytes of one displayed label (<= 24 columns, escapes 4 bytes) */

typedef struct area {
	gb_grid *g;
	int x, y, w, h;
	int plain, depth;
	const gb_figure *f;       /* the figure drawn here (a grid's panel in a panel's area) */
	const gb_figure *top;     /* the whole figure */
	double lo, hi;
	int n_bad;                /* NaN and inf, not the masked -inf */
	int n_masked;             /* -inf of a masked figure */
} area;

/* Line y has been drawn into: writers stop after the last such line. */
static inline void touch(gb_grid *g, int y)
{
	if (y >= 0 && y < g->h && y + 1 > g->used_h)
		g->used_h = y + 1;
}

/* v within [lo, hi]; an empty interval (hi < lo) means lo, so a window over nothing starts at 0 */
static inline int clampi(int v, int lo, int hi)
{
	return v > hi ? (hi < lo ? lo : hi) : v < lo ? lo : v;
}

static inline int is_masked(const area *a, double v)
{
	return gb_fig_is_masked(a->top, a->f, (float)v);
}

/* The parts of a heatmap a layout asks for (a grid's panels ask for fewer): P_RLABELS is the
 * row labels alone (and side columns), P_LABELS row and column labels. */
enum { P_TITLE = 1, P_LABELS = 2, P_COLORBAR = 4, P_CAPTION = 8, P_NOTICE = 16, P_AXIS = 32,
       P_RLABELS = 64 };

/* cells.c: painting one cell, and text colour over a coloured cell */
void gb_cells_set_cell(gb_grid *g, int x, int y, uint32_t cp, const uint8_t *fg,
                       const uint8_t *bg, int attr);
const uint8_t *gb_cells_ink_for(int depth, const uint8_t bg[3]);

/* cells_layout.c: text */
void gb_cells_shorten(const char *s, int maxw, char *out, size_t cap);
int gb_cells_fmt_num(double v, int prec, char *buf, size_t cap);
int gb_cells_fmt_sig(double v, int digits, char *buf, size_t cap);
void gb_cells_fmt_ends(double lo, double hi, int prec, char *a, char *b, size_t cap);
void gb_cells_range_text(char *buf, size_t cap, int plain, const char *what, int first, int n,
                         int total);

/* cells_layout.c: values, the parts every kind draws, and the area */
void gb_cells_value_rgb(const area *a, double v, uint8_t rgb[3]);
char gb_cells_ramp_char(const area *a, double v);
void gb_cells_title_line(area *a, int y, const char *notice);
void gb_cells_subtitle_line(area *a, int y);
void gb_cells_caption_line(area *a, int y);
void gb_cells_colorbar_line(area *a, int x, int y, int w);
int gb_cells_too_small(gb_verr *err, int w, int h, int need_w, int need_h);
int gb_cells_check_area(gb_grid *g, int x, int y, int w, int h, const gb_figure *f,
                        gb_verr *err);
void gb_cells_area_init(area *a, gb_grid *g, int x, int y, int w, int h, const gb_figure *f,
                        const gb_cells_opts *o);

/* cells_heatmap.c: a heatmap (a->f) with the parts asked for, recording what it showed in sh
 * (may be NULL); cells_panels.c draws each panel with it. */
int gb_cells_heatmap_in(area *a, const gb_cells_opts *o, int parts, gb_cells_shown *sh,
                        gb_verr *err);

/* cells_diagram.c: block diagrams (GB_FIG_DIAGRAM), windowed by o->row0 in lines */
int gb_cells_diagram(gb_grid *g, int x, int y, int w, int h, const gb_figure *f,
                     const gb_cells_opts *o, gb_verr *err);

/* cells_steps.c: the step figures (GB_FIG_STRIPS, DECODE, TREE) as lines, windowed by o->row0 */
int gb_cells_steps(gb_grid *g, int x, int y, int w, int h, const gb_figure *f,
                   const gb_cells_opts *o, gb_verr *err);

#endif
