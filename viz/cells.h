/* cells.h — the terminal backend: a figure laid out as a grid of character cells, and the grid
 * written out as text for a terminal's colour depth.
 *
 * Two steps, kept apart so the same grid serves plain stdout and a full-screen (ncurses)
 * explorer:
 *   layout  gb_cells_render (or one kind's function) draws a gb_figure into a rectangle of a
 *           gb_grid: title, notice of the rows and columns shown, labels, the data, colorbar,
 *           caption. Colours stay exact RGB in the cells; only plain depth changes what is
 *           drawn (a shade ramp or numbers instead of colour, no half blocks).
 *   writer  gb_cells_write turns a grid into bytes: SGR escapes for truecolor, xterm 256 or
 *           ANSI 16 colours (the nearest colour of the palette), or none for plain.
 * A figure larger than its rectangle shows a window of it, starting at the row and column the
 * caller gives, and says so ("rows 1–16 of 200, cols 1–38 of 200"); nothing is wrapped. No
 * line is wider than the grid, counted in terminal columns.
 * viz/ never prints: the writer returns a buffer, app/ writes it. */
#ifndef GLASSBOX_CELLS_H
#define GLASSBOX_CELLS_H

#include <stddef.h>
#include <stdint.h>

#include "viz/figure.h"
#include "viz/vizerr.h"

/* Colour depths, from none to 24-bit. */
enum gb_depth { GB_DEPTH_PLAIN, GB_DEPTH_16, GB_DEPTH_256, GB_DEPTH_TRUE };

/* The depth to draw at, from the environment and the output (pure, so it can be tested):
 * colorterm and term are $COLORTERM and $TERM, no_color $NO_COLOR (each may be NULL), is_tty
 * whether the output is a terminal. Without force: plain when NO_COLOR is set and not empty,
 * when the output is not a terminal, or when TERM is unset, empty or "dumb". Otherwise, and
 * always with force (e.g. --color=always): truecolor when COLORTERM is "truecolor" or "24bit"
 * or TERM ends in "-direct", 256 when TERM contains "256color", else 16. */
int gb_term_depth(const char *colorterm, const char *term, const char *no_color, int is_tty,
                  int force);

/* Cell attributes. Without GB_ATTR_FG / GB_ATTR_BG a cell keeps the terminal's own colours,
 * so text reads on light and dark terminals alike. */
enum { GB_ATTR_FG = 1, GB_ATTR_BG = 2, GB_ATTR_BOLD = 4, GB_ATTR_DIM = 8, GB_ATTR_UNDERLINE = 16 };

#define GB_CELL_CONT 0u /* cp of the right half of a two-column character */

typedef struct gb_cell {
	uint32_t cp;              /* one Unicode code point, or GB_CELL_CONT */
	uint8_t fg[3], bg[3];     /* sRGB, used as attr says */
	uint8_t attr;             /* GB_ATTR_* */
} gb_cell;

/* What a layout showed of its figure, so a caller can scroll (feed row0/col0 back, clamped).
 * Heatmap: data rows and columns. Bars: bars (rows). Strip: tokens (cols). Lines: series
 * (rows) and points (cols), never windowed. Grid: rows and columns of panels. */
typedef struct gb_cells_shown {
	int row0, rows, rows_total;  /* rows [row0, row0 + rows) of rows_total are on screen */
	int col0, cols, cols_total;
	int rows_per_line;           /* 2 with half blocks, else 1 */
	int cell_w;                  /* columns per heatmap column */
	int n_bad;                   /* NaN and infinite values in the whole figure (not masked) */
	int n_masked;                /* masked cells: the -inf of a figure marked masked */
} gb_cells_shown;

typedef struct gb_grid {
	int w, h;
	gb_cell *cells;              /* (h, w), row-major */
	int used_h;                  /* lines any layout drew into; writers stop there */
	gb_cells_shown shown;        /* from the last layout */
} gb_grid;

/* A w x h grid of blank cells (spaces in the terminal's colours). */
int gb_grid_init(gb_grid *g, int w, int h, gb_verr *err);
void gb_grid_free(gb_grid *g);
void gb_grid_clear(gb_grid *g);
gb_cell *gb_grid_cell(gb_grid *g, int x, int y); /* NULL outside the grid */

/* Draws UTF-8 text from (x, y), at most maxw columns (never past the grid's edge); a character
 * that would not fit whole is left out, zero-width characters are dropped, control characters
 * drawn as '?'. fg/bg may be NULL (the terminal's colours). Returns the columns used. */
int gb_grid_text(gb_grid *g, int x, int y, int maxw, const char *s, const uint8_t *fg,
                 const uint8_t *bg, int attr);

typedef struct gb_cells_opts {
	int depth;                   /* enum gb_depth: plain draws characters instead of colours */
	int row0, col0;              /* top-left of the window: heatmap row and column, first bar
	                              * (row0), first token (col0), first row of panels (row0) */
	int cell_w;                  /* columns per heatmap column; 0 chooses */
	int half;                    /* half blocks, two data rows per line: -1 when the rows do not
	                              * fit otherwise, 0 never, 1 always (ignored at plain depth) */
} gb_cells_opts;

/* depth given, window at 0,0, everything else chosen. */
void gb_cells_opts_default(gb_cells_opts *o, int depth);

/* Lays f out in the rectangle (x, y, w, h) of g, by its kind, and records g->shown. Returns 0,
 * or -1 when the rectangle is too small for any useful picture (the message says the size
 * needed) or the figure is inconsistent. */
int gb_cells_render(gb_grid *g, int x, int y, int w, int h, const gb_figure *f,
                    const gb_cells_opts *o, gb_verr *err);

/* The same for one kind each, whatever f->kind says (a BARS figure can be seen as a heatmap). */
int gb_cells_heatmap(gb_grid *g, int x, int y, int w, int h, const gb_figure *f,
                     const gb_cells_opts *o, gb_verr *err);
int gb_cells_bars(gb_grid *g, int x, int y, int w, int h, const gb_figure *f,
                  const gb_cells_opts *o, gb_verr *err);
int gb_cells_lines(gb_grid *g, int x, int y, int w, int h, const gb_figure *f,
                   const gb_cells_opts *o, gb_verr *err);
int gb_cells_strip(gb_grid *g, int x, int y, int w, int h, const gb_figure *f,
                   const gb_cells_opts *o, gb_verr *err);
int gb_cells_panels(gb_grid *g, int x, int y, int w, int h, const gb_figure *f,
                    const gb_cells_opts *o, gb_verr *err);
int gb_cells_attnlines(gb_grid *g, int x, int y, int w, int h, const gb_figure *f,
                       const gb_cells_opts *o, gb_verr *err); /* cells_attnlines.c */

/* The grid's first used_h lines as text for depth: each line's trailing blanks dropped, colours
 * as SGR escapes (reset at the end of every line, so nothing bleeds into what follows), one
 * '\n' per line. *out is malloc'd and NUL-terminated, *len its length without the NUL. */
int gb_cells_write(const gb_grid *g, int depth, char **out, size_t *len, gb_verr *err);

/* The palette index a writer uses for a colour: xterm's 256 colours (the 6x6x6 cube 16..231,
 * levels 0,95,135,175,215,255, or the gray ramp 232..255 = 8 + 10k, whichever is nearer; the
 * user-configurable 0..15 are never chosen), and the nearest of the 16 ANSI colours (xterm's
 * default values, gb_ansi16_rgb). */
int gb_xterm256(const uint8_t rgb[3]);
int gb_ansi16(const uint8_t rgb[3]);
extern const uint8_t gb_ansi16_rgb[16][3];

#endif
