/* window.h — the SDL2 window for the projector: shows a figure rendered by raster.c at the
 * window's own pixel size (re-rendered when the window is resized or goes full screen), a
 * status line under it, or a text card in its place; hands key presses, mouse moves and
 * clicks, resizes and close requests back to the caller, who runs the loop (gb_window_poll
 * never blocks, so a REPL can poll between reading lines) and who decides what they mean. The
 * window tells what is under a point (a heatmap's cell, a grid's panel, a bar, a token of the
 * attention lines) from where the layout put it.
 *
 * Optional: without SDL2 at build time every function fails with a message saying how to get
 * it. Without a display (no DISPLAY / WAYLAND_DISPLAY, e.g. over SSH) opening fails with one
 * line and nothing else is affected. SDL's own signal handlers are turned off, so Ctrl-C still
 * reaches the program. One window at a time. */
#ifndef GLASSBOX_WINDOW_H
#define GLASSBOX_WINDOW_H

#include "viz/figure.h"
#include "viz/raster.h"
#include "viz/vizerr.h"

typedef struct gb_window gb_window;

enum gb_win_ev_type {
	GB_WIN_NONE,
	GB_WIN_KEY,               /* key: a Unicode code point for text, or a GB_KEY_* */
	GB_WIN_RESIZE,            /* w, h: the new size in pixels (already redrawn) */
	GB_WIN_CLOSE,             /* the user closed the window: call gb_window_close */
	GB_WIN_MOTION,            /* x, y: the mouse moved there (the latest of a burst) */
	GB_WIN_CLICK,             /* x, y, button (1 left, 2 middle, 3 right): a press */
	GB_WIN_LEAVE,             /* the mouse left the window */
};

/* Keys that are not text, above the Unicode range. Ctrl+letter arrives as the letter with
 * GB_MOD_CTRL in mods. */
enum gb_key {
	GB_KEY_ESCAPE = 0x110000, GB_KEY_ENTER, GB_KEY_TAB, GB_KEY_BACKSPACE, GB_KEY_DELETE,
	GB_KEY_LEFT, GB_KEY_RIGHT, GB_KEY_UP, GB_KEY_DOWN, GB_KEY_PAGEUP, GB_KEY_PAGEDOWN,
	GB_KEY_HOME, GB_KEY_END, GB_KEY_F1, /* GB_KEY_F1 + k for F(1+k), up to F12 */
};
enum { GB_MOD_SHIFT = 1, GB_MOD_CTRL = 2, GB_MOD_ALT = 4 };

typedef struct gb_window_event {
	int type;                 /* enum gb_win_ev_type */
	int key;                  /* GB_WIN_KEY */
	int mods;                 /* GB_MOD_* */
	int w, h;                 /* GB_WIN_RESIZE */
	int x, y, button;         /* GB_WIN_MOTION, GB_WIN_CLICK: drawable pixels from the top left */
} gb_window_event;

/* What is under a point of a shown figure. Indices count from 0. */
enum gb_hit_what {
	GB_HIT_NONE,
	GB_HIT_CELL,              /* a heatmap's cell (panel -1), or a grid panel's (row and col -1
	                           * when the point is on the panel's title rather than its cells) */
	GB_HIT_BAR,               /* bar row of a bar chart (its label, bar or value) */
	GB_HIT_QUERY,             /* attention lines: query row (the left column) */
	GB_HIT_KEY,               /* attention lines: key col (the right column) */
};

typedef struct gb_hit {
	int what;                 /* enum gb_hit_what */
	int panel, row, col;
} gb_hit;

/* 1 when this build has the window. */
int gb_window_available(void);

/* Whether a window could open here, without opening one: starts SDL's video (the checks
 * gb_window_open makes: a display, a driver) and stops it. 0 with the driver and the screen's
 * size in what ("x11, screen 1920x1080"), or -1 with the one-line reason. */
int gb_window_probe(char *what, size_t cap, gb_verr *err);

/* Opens a resizable window of w x h with a UTF-8 title, showing a blank page. w, h = 0: as
 * large as a 1600 x 900 slide where the screen allows (at most 90% of it, 16:9). */
gb_window *gb_window_open(const char *title, int w, int h, gb_verr *err);

/* Renders f in the window's figure area (all of it but the status line) and shows it. The
 * layout is made for 1600 x 900: scale = min(w / 1600, h / 900) of the whole window, at least
 * 0.75, times gb_window_set_scale's. The window BORROWS f to re-render it on resize: keep f
 * alive until the next gb_window_show / gb_window_show_text / gb_window_show_canvas /
 * gb_window_close. Clears the hover outline and the status line. */
int gb_window_show(gb_window *w, const gb_figure *f, gb_verr *err);

/* Shows a text card instead of a figure: a title (e.g. the command that ran) over the first
 * lines of text that fit, in a typewriter face, or "no figure for this command" when text is
 * NULL or blank. Both are copied. */
int gb_window_show_text(gb_window *w, const char *title, const char *text, gb_verr *err);

/* Shows a ready canvas, stretched to the window (1:1 when the sizes match). Not borrowed. */
int gb_window_show_canvas(gb_window *w, const gb_canvas *c, gb_verr *err);

/* The figure shown (NULL for a card or a canvas), and a number that changes with every show
 * (a new figure may sit at a freed one's address). */
const gb_figure *gb_window_figure(const gb_window *w);
unsigned gb_window_shown(const gb_window *w);

/* Extra scale for the figure's text and lines (the text size keys: 1.5 for a projector far
 * from the back row). Re-renders what is shown. */
int gb_window_set_scale(gb_window *w, double scale, gb_verr *err);
/* The caller's extra scale (1 until set). */
double gb_window_text_scale(const gb_window *w);

/* The scale the shown figure was rendered at (0 when a canvas is shown): exporting with the
 * size of gb_window_figure_size and this scale gives exactly what the window's figure area
 * shows. */
double gb_window_scale(const gb_window *w);

/* Asks for a new window size (e.g. the projector's 1920 x 1080). The redraw happens when the
 * resize event comes back through gb_window_poll. */
int gb_window_resize(gb_window *w, int width, int height, gb_verr *err);

/* Full screen on the window's display (on = 1) or back to the window it was (0); the redraw
 * follows the resize event. */
int gb_window_set_fullscreen(gb_window *w, int on, gb_verr *err);
int gb_window_is_fullscreen(const gb_window *w);

/* The line of text under the figure (what the mouse is on, the keys): NULL or "" leaves it
 * blank. Redraws only that line. */
int gb_window_set_status(gb_window *w, const char *text);

/* What is under drawable pixel (x, y): fills hit and returns hit->what. */
int gb_window_hit(gb_window *w, int x, int y, gb_hit *hit);
/* Outlines what a hit found (a cell, and a grid's panel around it); NULL or GB_HIT_NONE: none. */
void gb_window_set_hover(gb_window *w, const gb_hit *hit);

/* Takes one pending event into ev: returns 1, or 0 when nothing is pending. Redraws on expose
 * and resize by itself (resizes are still reported). Never blocks. */
int gb_window_poll(gb_window *w, gb_window_event *ev);

/* The drawable size in pixels, and the part of it the figure takes (above the status line). */
int gb_window_size(gb_window *w, int *pw, int *ph);
int gb_window_figure_size(gb_window *w, int *fw, int *fh);

/* What the window shows, read back from the renderer (for tests and screenshots). */
int gb_window_read_pixels(gb_window *w, gb_canvas *out, gb_verr *err);

void gb_window_close(gb_window *w);

/* --- the window's drawing, without SDL (window_card.c; the window uses them, tests too) --- */

/* The status line's height for a window drawn at scale. */
int gb_win_status_height(double scale);
/* Draws the status line into rows [y, y + h) of c: a pale band, text at the left, shrunk or
 * cut with "…" to fit. */
int gb_win_draw_status(gb_canvas *c, int y, int h, const char *text, double scale, gb_verr *err);
/* Draws a text card on all of c (see gb_window_show_text). */
int gb_win_draw_card(gb_canvas *c, const char *title, const char *text, double scale, gb_verr *err);
/* What of f is under (x, y), from where the layout put it (info from gb_raster_draw); the
 * rectangles to outline (cell, panel; 0 size when none) when outline is not NULL. */
int gb_win_hit(const gb_figure *f, const gb_raster_info *info, int x, int y, gb_hit *hit,
               gb_rect outline[2]);

#endif
