/* tui_int.h — inside the explorer: the state its three files share, and what each offers the
 * others. Only tui.c (the state, the figure on show, its layout, the keys, tui_run),
 * tui_draw.c (the screen: text, colours, every part of a frame) and tui_cmd.c (the `:` line,
 * what commands print, the PNG export) include it; the rest of glassbox sees tui.h. */
#ifndef GLASSBOX_TUI_INT_H
#define GLASSBOX_TUI_INT_H

#include <curses.h>
#include <stdio.h>
#include <wchar.h>

#include "app/session.h"
#include "app/views.h"
#include "viz/cells.h"

enum { MIN_W = 80, MIN_H = 24 };
enum { TOP = 2, BELOW = 3 };   /* lines above and below the figure area */

/* How figure colours reach the terminal, best first. */
enum { CM_NONE, CM_16, CM_256, CM_DEFINE, CM_DIRECT };

#define PAIR_SLOTS 16384      /* hash slots for colour pairs; at most half are used */
#define RGB_SLOTS 4096        /* hash slots for redefined palette entries (<= 240 used) */
#define HIST_N 32
#define EDIT_MAX 512

typedef struct tui {
	session *s;
	int W, H;

	/* what is on show */
	gb_figure *fig;           /* == s->fig when there is a figure; NULL and err says why */
	char err[512];
	int custom;               /* fig came from a ':' command (show NAME, model...), not the stage */
	int st, ly, hd;           /* the stage, layer and head fig was made for */
	gb_figure *made;          /* the s->fig last made or adopted here: another one means the
	                           * window's keys (window_key) changed the view */
	int zoom, focus;          /* GRID: the chosen panel, and whether it fills the area */
	int cr, cc;               /* the cursor: data row and column (a bar is a row) */
	int row0, col0, prow0;    /* scroll: heatmap or bars window, first row of panels */

	/* the figure's layout, redone every frame (it is cheap) */
	gb_grid grid, probe;      /* (H - TOP - BELOW, W); probe: the same at full colour */
	char rerr[512];           /* the layout's own error (area too small for this figure) */
	int kind;                 /* the kind drawn: a zoomed GRID draws a HEATMAP; -1 nothing */
	int dx, dy;               /* grid cell of the window's first data cell, -1 unknown */
	int bars_top;             /* BARS: lines above the first bar */
	gb_cells_shown shown;

	/* colour */
	int cmode, depth, maxpair, maxcolor;
	int sdepth;               /* the session's `set colors` these colours were set up for */
	long long *pkey;          /* (PAIR_SLOTS) (fg, bg) keys, 0 = empty */
	int *pval;                /* (PAIR_SLOTS) */
	int next_pair, pairs_full;
	unsigned *ckey;           /* (RGB_SLOTS) rgb + 1, 0 = empty */
	int *cval;                /* (RGB_SLOTS) */
	uint8_t cdef[256][3];     /* palette entries defined so far, for the nearest when full */
	int cnum[256], ncdef, next_color, colors_full;

	/* messages, overlays, the ':' line */
	char msg[1024];
	int msg_err;
	int help;
	char **out;               /* the last command's output, for the overlay */
	int n_out, out_top, show_out;
	char out_title[256];
	int editing;
	wchar_t ebuf[EDIT_MAX];
	int elen, epos;
	char *hist[HIST_N];
	int n_hist;
	FILE *capf;
	int save1, save2;
	int quit, quit_all;
} tui;

static inline int n_layers(session *s) { return s->loaded ? s->model.cfg.n_layer : 1; }
static inline int n_heads(session *s) { return s->loaded ? s->model.cfg.n_head : 1; }
static inline int has_cross(session *s) { return s->loaded && s->model.cfg.encdec; }

/* Stages that read the layer and the head, so the selector can dim what does not apply. */
static inline int uses_layer(int st) { return st == ST_QKV || st == ST_SCORES || st == ST_ATTN || st == ST_HEADS || st == ST_LN || st == ST_FFN || st == ST_CROSS; }
static inline int uses_head(int st) { return st == ST_QKV || st == ST_SCORES || st == ST_ATTN || st == ST_CROSS || st == ST_HEADS; }

/* tui.c: the figure on show and its layout, and the keys. */
void tui_remember(tui *t);         /* the view fig was made for, to notice when it changes */
void tui_fit_focus(tui *t);
void tui_rebuild(tui *t);          /* the stage's figure (s->stage, layer, head) on show */
int tui_sync_window(tui *t);       /* after the window's pump: 1 when its keys moved the view */
const gb_figure *tui_drawn(const tui *t);
void tui_zoom_view(const tui *t, gb_figure *v, char *title, size_t cap);
void tui_layout(tui *t);
int tui_get_key(wint_t *ch);

/* tui_draw.c: the screen. */
void tui_set_msg(tui *t, int is_err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int tui_clip(const char *s, int maxw, char *out, size_t cap);
void tui_colours_init(tui *t);   /* at the start, and again when `set colors` changes */
int tui_too_small(void);
void tui_frame(tui *t);

/* tui_cmd.c: commands, their output, export. */
int tui_cap_begin(tui *t);          /* stdout and stderr to a file until tui_cap_end */
char *tui_cap_end(tui *t);
void tui_last_line(const char *text, char *out, size_t cap);
void tui_free_out(tui *t);
void tui_export_png(tui *t);
int tui_read_command(tui *t, char *out, size_t cap);
void tui_run_command(tui *t, const char *line);

#endif
