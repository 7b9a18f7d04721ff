/* session.h — what one glassbox session holds: the loaded model, the current text and its
 * trace, the engine in use. Every command reads and changes a session. Also what every
 * command, view and screen shares about it (session.c): the error line, the default model,
 * running a text, showing a figure, the window's keys, token ids as text. */
#ifndef GLASSBOX_SESSION_H
#define GLASSBOX_SESSION_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include "model/forward.h"
#include "model/heads.h"
#include "model/kernels/kernels.h"
#include "model/model.h"
#include "model/trace.h"
#include "viz/figure.h"
#include "viz/vizerr.h"

typedef struct session {
	gb_model model;
	int loaded;
	gb_trace trace;
	int have_run;
	char *text;               /* the current text (decoder-only) or source (encoder-decoder) */
	char *target;             /* encoder-decoder: the decoder's input text, or NULL */
	const gb_kernels *k;      /* the engine in use */
	int interactive;          /* a person at a terminal: prompts, banners, history */
	gb_figure *fig;           /* the current figure: what export writes and the window shows */
	gb_figure *prev_fig;      /* the one before it, which `pair` sets beside it */
	long drawn_at;            /* where show_figure began drawing on stdout when it is a file
	                           * (a lesson's capture): what a command printed before is its
	                           * text; -1: not drawn (the lesson runner resets it) */
	int depth;                /* terminal colour depth (enum gb_depth), -1 to detect: a
	                           * display setting (display_settings below) */
	int stage, layer, head;   /* the view on show (enum stage in views.h; layer, head from 1) */
	int on_show;              /* that view was drawn since the last load or run (`arch`
	                           * highlights it then only) */
	struct gb_window *win;    /* the SDL window, when open */
	int tour;                 /* the guided tour's next stop (step), reset by run */
	int palette;              /* colormap for unsigned figures (enum gb_cmap), -1: the view's;
	                           * a display setting */
	int textbook;             /* layer norm in the textbook's form (sigma + eps) */
	int engine_set;           /* `set engine` was used: from then on every figure names its
	                           * engine, the default one too, so two charts are told apart */
	/* issue 18, views: the window of columns (from 1, inclusive; {a, 0}: a to the end) that
	 * the last --units chose for stage units_stage (-1: every stage); {0, 0}: the first 64 */
	int units[2], units_stage;
	/* the fixed colour scale (--range LO HI) the last command chose for stage range_stage,
	 * kept while the window's keys move that view across layers and heads; range_set 0: none */
	int range_set, range_stage;
	float range_lo, range_hi;
	/* issue 12, long inputs: the token (from 1; 0: the last) that a token x token heatmap too
	 * wide for the terminal is windowed around (`attn L H --at T`); reset by run */
	int at;
	/* issue 19, length: the context the model was trained on when `set context` let runs go
	 * longer (or shorter) than it; 0: the model's own. Reset by load. */
	int ctx_trained;
	/* issue 19, masks applied to a run (`set mask ...`, view_mask.c): a sparse pattern on top
	 * of the causal mask for every run of the session; kind 0: none */
	struct mask_spec {
		int kind;             /* enum mask_kind in view19.h */
		int a, b;             /* its sizes (window, block, stride, dilation, global tokens) */
	} mask;
} session;

/* Prints an error line "glassbox: ..." on stderr. */
void errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Where the command being run came from ("-c line 2"), put before each error line; "" at the
 * prompt. command_script sets it around each command. */
void errorf_where(const char *where);

/* Set by Ctrl-C at the prompt; long commands check it between steps. */
extern volatile sig_atomic_t interrupted;

void session_init(session *s);
void session_free(session *s);

/* Where the shipped models are (a folder beside the program, or the installed data folder);
 * 0 when found. */
int models_dir(char *out, size_t cap);
/* A model argument: a folder as given, or the name of a shipped model (tiny-lm, tiny-mt). */
void resolve_model(const char *arg, char *out, size_t cap);
/* Loads the default model (tiny-lm) when it can be found; 0 on success. */
int session_load_default(session *s);
/* Why the last session_load_default failed, for a message. */
const char *session_default_problem(void);

/* A model is loaded (the default one when none was), or a text has run too; 0, or -1 after
 * printing what to do. */
int need_model(session *s);
int need_run(session *s);
/* TEXT as token ids (malloc'd) with the model's tokenizer; -1 after an error line. */
int encode(session *s, const char *text, int **ids, int *n);
/* Runs ids (and tgt for an encoder-decoder) into s->trace with the session's engine. */
int forward(session *s, const int *ids, int n, const int *tgt, int n_tgt);
/* Runs the current input again with the session's settings (engine, layer norm). */
int rerun(session *s);

/* ---- one path for every figure -----------------------------------------------------------
 * Display settings say how figures look, never what they show: the palette (`set palette`)
 * and the terminal's colour depth (`set colors`). Every figure anyone sees becomes the
 * session's figure through session_adopt: at the prompt (show_figure), in the explorer, in
 * the window (its keys), in a lesson (and a lesson's answer snapshot puts the figure back the
 * same way), so its exports carry the settings too. A new display setting is a field of
 * display_settings and of the session, a line in display_get/display_set, and, when it
 * changes a figure, a line in session_style. */
typedef struct display_settings {
	int palette;              /* enum gb_cmap, -1: each view's own colormap */
	int depth;                /* enum gb_depth, -1: detected from the terminal */
} display_settings;

display_settings display_get(const session *s);
/* Puts d in force: the figure on show is restyled (and redrawn in the window). */
void display_set(session *s, const display_settings *d);

/* Applies the display settings to f (its panels too): the palette replaces the colormap of a
 * figure whose view chose a sequential one (signed figures keep their diverging map). Works
 * from the view's own choice (f->view_cmap), so it can be applied again after a change. */
void session_style(const session *s, gb_figure *f);

/* Makes f the session's current figure, styled, and shows it in the window when one is open
 * (the old figure is freed; f may be the current one). NULL fails (a view's error). The
 * window's own failure is a line on stderr, or, when werr is given (the explorer owns the
 * screen), left in werr with a return of 1. */
int session_adopt(session *s, gb_figure *f, gb_verr *werr);

/* session_adopt, then draws f in the terminal (as every view at the prompt does). */
int show_figure(session *s, gb_figure *f);
/* The same for a grid shown a page at a time at the prompt: rows of panels from `first`
 * (0-based), `count` of them (0: as many as fit the screen), and a line naming the page and
 * the command for the others ("layers 1-2 of 4: model --layers 3-4 for the rest"). */
typedef struct show_page {
	int first, count;
	const char *what;         /* what a row of panels is: "layer" ("layers 1-2 of 4") */
	const char *cmd;          /* the command that pages: "model --layers" */
} show_page;
int show_figure_page(session *s, gb_figure *f, const show_page *pg);
/* The view of a stage (enum stage in views.h), recorded as the session's current one. */
int show_stage(session *s, int stage, int layer, int head);

/* The window's event pump (returns 1 while the window is open) and key handler. */
int window_pump(session *s);
void window_key(session *s, int key, int mods);
/* A figure the window made (its keys, a click) becomes the current one, shown in the window. */
void window_adopt(session *s, gb_figure *f);
/* projector.c: the window's mouse, its own keys (1 when handled), its status line (the pump
 * calls window_tick), and the text card after a command without a figure (command_line calls
 * begin and end around each command). */
void window_hover(session *s, int x, int y);
void window_leave(session *s);
void window_resized(session *s);
void window_click(session *s, int x, int y, int button);
int window_key_extra(session *s, int key, int mods);
void window_tick(session *s);
void window_command_begin(session *s, const char *name);
void window_command_end(session *s, const char *line, int rc);

/* Length of the valid UTF-8 sequence at b (n bytes left), or 0. */
int utf8_len(const unsigned char *b, size_t n);
/* Token ids as the text they stand for (malloc'd): the tokenizer's bytes, control bytes (but
 * newline) and broken UTF-8 as \xNN; "token ids: 5 6 7" without a tokenizer. */
char *ids_text(session *s, const int *ids, int n);
/* A token for the terminal: spaces as a middle dot, newlines as a return symbol, other control
 * bytes and broken UTF-8 as \xNN; "#ID" without a tokenizer. */
void piece_str(session *s, int id, char *out, size_t cap);
/* The head detector's table: markdown (md) or aligned columns under `groups` (a line naming
 * the two groups of columns). */
void print_head_scores(FILE *f, const gb_head_score *sc, int L, int H, int md, const char *groups);

#endif
