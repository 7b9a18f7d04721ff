/* window.h — the SDL2 window for the projector: shows a figure rendered by raster.c at the
 * window's own pixel size, re-rendered when the window is resized, and hands key presses,
 * resizes and close requests back to the caller, who runs the loop (gb_window_poll never
 * blocks, so a REPL can poll between reading lines).
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
} gb_window_event;

/* 1 when this build has the window. */
int gb_window_available(void);

/* Opens a resizable window of w x h (0: 1280 x 720) with a UTF-8 title, showing a blank page. */
gb_window *gb_window_open(const char *title, int w, int h, gb_verr *err);

/* Renders f at the window's pixel size and shows it, scaled to fit (the layout is made for
 * 1600 x 900: scale = min(w / 1600, h / 900), at least 0.75, times gb_window_set_scale's). The window BORROWS f to re-render it on
 * resize: keep f alive until the next gb_window_show / gb_window_show_canvas / gb_window_close. */
int gb_window_show(gb_window *w, const gb_figure *f, gb_verr *err);

/* Shows a ready canvas, stretched to the window (1:1 when the sizes match). Not borrowed. */
int gb_window_show_canvas(gb_window *w, const gb_canvas *c, gb_verr *err);

/* Extra scale for the figure's text and lines (e.g. 1.5 for a projector far from the back
 * row). Re-renders the shown figure. */
int gb_window_set_scale(gb_window *w, double scale, gb_verr *err);

/* The scale the shown figure was rendered at (0 when a canvas is shown): exporting with the
 * window's pixel size and this scale gives exactly what the window shows. */
double gb_window_scale(const gb_window *w);

/* Asks for a new window size (e.g. the projector's 1920 x 1080). The redraw happens when the
 * resize event comes back through gb_window_poll. */
int gb_window_resize(gb_window *w, int width, int height, gb_verr *err);

/* Takes one pending event into ev: returns 1, or 0 when nothing is pending. Redraws on expose
 * and resize by itself (resizes are still reported). Never blocks. */
int gb_window_poll(gb_window *w, gb_window_event *ev);

/* The drawable size in pixels. */
int gb_window_size(gb_window *w, int *pw, int *ph);

/* What the window shows, read back from the renderer (for tests and screenshots). */
int gb_window_read_pixels(gb_window *w, gb_canvas *out, gb_verr *err);

void gb_window_close(gb_window *w);

#endif
