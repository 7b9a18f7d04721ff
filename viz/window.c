/* window.c — owns the SDL2 window, its renderer and texture, what it shows (a borrowed figure,
 * a text card or a canvas, with the status line under a figure and the outline of what the
 * mouse is on), full screen, and the translation of SDL events into gb_window_event. The only
 * file that knows whether SDL2 was built in (HAVE_SDL2, from config.mk): without it, the same
 * functions exist and each says how to get the window. What it draws besides the figure, and
 * the hit test, are window_card.c's (no SDL there). */
#include "viz/window.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef HAVE_SDL2
#define HAVE_SDL2 0
#endif

#if HAVE_SDL2

#include <SDL.h>

#define PEND_MAX 32

struct gb_window {
	SDL_Window *win;
	SDL_Renderer *ren;
	SDL_Texture *tex;
	int tw, th;               /* texture size */
	const gb_figure *fig;     /* borrowed, re-rendered on resize; NULL for a card or a canvas */
	char *card_title, *card_text; /* the text card shown instead of a figure (owned) */
	gb_canvas canvas;         /* what the texture holds: the figure area, then the status line */
	gb_raster_info info;      /* where the shown figure's parts are */
	double scale;             /* the caller's extra scale */
	double shown_scale;       /* what the shown figure was rendered at */
	int status_h;             /* the status line's height (0 with a canvas) */
	char status[1024];
	gb_rect hover[2];         /* outlined: the cell, and the panel around it (0 size: none) */
	int fullscreen;
	unsigned shown;           /* counts the shows */
	SDL_Rect saved;           /* the window's place and size before full screen */
	gb_window_event pend[PEND_MAX]; /* code points of one text event, handed out one by one */
	int npend, ipend;
};

static int n_open;

static void quiet_log(void *u, int cat, SDL_LogPriority pri, const char *msg)
{
	(void)u, (void)cat, (void)pri, (void)msg; /* viz never prints; errors come back as messages */
}

int gb_window_available(void)
{
	return 1;
}

static int start_sdl(gb_verr *err)
{
	const char *drv = getenv("SDL_VIDEODRIVER");
	const char *dpy = getenv("DISPLAY"), *way = getenv("WAYLAND_DISPLAY");
	if (n_open)
		return gb_vfail(err, "a window is already open (glassbox shows one at a time)");
	if ((!drv || !*drv) && (!dpy || !*dpy) && (!way || !*way))
		return gb_vfail(err, "no display for the window (DISPLAY is not set): figures still print "
		                     "here and export to PNG");
	SDL_LogSetOutputFunction(quiet_log, NULL);
	/* SDL would otherwise turn Ctrl-C into a window event and the REPL could not be interrupted */
	SDL_SetHint(SDL_HINT_NO_SIGNAL_HANDLERS, "1");
	SDL_SetHint(SDL_HINT_VIDEO_X11_NET_WM_BYPASS_COMPOSITOR, "0");
	SDL_SetHint(SDL_HINT_RENDER_SCALE_QUALITY, "1");
	if (SDL_InitSubSystem(SDL_INIT_VIDEO) != 0)
		return gb_vfail(err, "cannot open the window (%s): figures still print here and export to PNG",
		                SDL_GetError());
	/* When DISPLAY names no display that answers, SDL falls back to drawing into memory: the
	 * window would "open" where nobody sees it. Only SDL_VIDEODRIVER may ask for that. */
	const char *got = SDL_GetCurrentVideoDriver();
	if ((!drv || !*drv) && got && (!strcmp(got, "offscreen") || !strcmp(got, "dummy"))) {
		SDL_QuitSubSystem(SDL_INIT_VIDEO);
		return gb_vfail(err, "cannot open the window: no display answered at %s%s: figures still print "
		                     "here and export to PNG", dpy && *dpy ? "DISPLAY=" : "WAYLAND_DISPLAY=",
		                dpy && *dpy ? dpy : way);
	}
	return 0;
}

int gb_window_probe(char *what, size_t cap, gb_verr *err)
{
	SDL_DisplayMode dm;
	if (n_open) {
		snprintf(what, cap, "%s, a window is open now", SDL_GetCurrentVideoDriver());
		return 0;
	}
	if (start_sdl(err))
		return -1;
	if (SDL_GetCurrentDisplayMode(0, &dm) == 0)
		snprintf(what, cap, "%s, screen %dx%d", SDL_GetCurrentVideoDriver(), dm.w, dm.h);
	else
		snprintf(what, cap, "%s", SDL_GetCurrentVideoDriver());
	SDL_QuitSubSystem(SDL_INIT_VIDEO);
	return 0;
}

/* A 1600 x 900 slide's size where the screen has room for it, else 90% of the screen at 16:9. */
static void default_size(int *w, int *h)
{
	SDL_DisplayMode dm;
	*w = GB_RASTER_W;
	*h = GB_RASTER_H;
	if (SDL_GetDesktopDisplayMode(0, &dm) == 0 && dm.w > 0 && dm.h > 0) {
		double k = fmin(1.0, fmin(0.9 * dm.w / GB_RASTER_W, 0.9 * dm.h / GB_RASTER_H));
		*w = (int)lround(GB_RASTER_W * k);
		*h = (int)lround(GB_RASTER_H * k);
	}
}

gb_window *gb_window_open(const char *title, int w, int h, gb_verr *err)
{
	gb_window *g;
	if (start_sdl(err))
		return NULL;
	g = calloc(1, sizeof *g);
	if (!g) {
		SDL_QuitSubSystem(SDL_INIT_VIDEO);
		gb_vfail(err, "out of memory opening the window");
		return NULL;
	}
	g->scale = 1;
	if (w <= 0 || h <= 0)
		default_size(&w, &h);
	g->win = SDL_CreateWindow(title ? title : "glassbox", SDL_WINDOWPOS_UNDEFINED, SDL_WINDOWPOS_UNDEFINED,
	                          w, h, SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI);
	if (!g->win) {
		gb_vfail(err, "cannot open the window (%s): figures still print here and export to PNG",
		         SDL_GetError());
		free(g);
		SDL_QuitSubSystem(SDL_INIT_VIDEO);
		return NULL;
	}
	g->ren = SDL_CreateRenderer(g->win, -1, 0);
	if (!g->ren)
		g->ren = SDL_CreateRenderer(g->win, -1, SDL_RENDERER_SOFTWARE);
	if (!g->ren) {
		gb_vfail(err, "cannot draw in the window (%s)", SDL_GetError());
		SDL_DestroyWindow(g->win);
		free(g);
		SDL_QuitSubSystem(SDL_INIT_VIDEO);
		return NULL;
	}
	n_open++;
	SDL_StartTextInput();
	SDL_SetRenderDrawColor(g->ren, 255, 255, 255, 255);
	SDL_RenderClear(g->ren);
	SDL_RenderPresent(g->ren);
	return g;
}

int gb_window_size(gb_window *g, int *pw, int *ph)
{
	int w = 0, h = 0;
	if (!g || SDL_GetRendererOutputSize(g->ren, &w, &h) != 0) {
		if (g)
			SDL_GetWindowSize(g->win, &w, &h);
	}
	if (pw)
		*pw = w;
	if (ph)
		*ph = h;
	return g ? 0 : -1;
}

/* The texture over the whole output (1:1 when sizes match), and the outline of what the mouse
 * is on: black outside, white inside, so it shows on any colour. */
static void draw_frame(gb_window *g)
{
	SDL_SetRenderDrawColor(g->ren, 255, 255, 255, 255);
	SDL_RenderClear(g->ren);
	if (g->tex)
		SDL_RenderCopy(g->ren, g->tex, NULL, NULL);
	for (int k = 0; k < 2; k++) {
		const gb_rect *r = &g->hover[k];
		int t = (int)fmax(2, lround(2 * g->shown_scale)) + (k == 1);
		if (r->w <= 0 || r->h <= 0)
			continue;
		for (int i = 0; i < t; i++) {
			SDL_Rect o = { r->x - t + i, r->y - t + i, r->w + 2 * (t - i), r->h + 2 * (t - i) };
			int white = i >= t / 2 + (k == 1);
			SDL_SetRenderDrawColor(g->ren, white ? 255 : 0, white ? 255 : 0, white ? 255 : 0, 255);
			SDL_RenderDrawRect(g->ren, &o);
		}
	}
}

static void present(gb_window *g)
{
	draw_frame(g);
	SDL_RenderPresent(g->ren);
}

static int upload(gb_window *g, const gb_canvas *c, gb_verr *err)
{
	if (!g->tex || g->tw != c->w || g->th != c->h) {
		if (g->tex)
			SDL_DestroyTexture(g->tex);
		g->tex = SDL_CreateTexture(g->ren, SDL_PIXELFORMAT_RGBA32, SDL_TEXTUREACCESS_STREAMING, c->w, c->h);
		if (!g->tex) {
			g->tw = g->th = 0;
			return gb_vfail(err, "cannot show a %d x %d picture in the window (%s)", c->w, c->h,
			                SDL_GetError());
		}
		g->tw = c->w;
		g->th = c->h;
	}
	if (SDL_UpdateTexture(g->tex, NULL, c->rgba, c->w * 4) != 0)
		return gb_vfail(err, "cannot update the window (%s)", SDL_GetError());
	return 0;
}

/* The figure is laid out for a 1600 x 900 slide; a window shows it at the scale that fits its
 * pixels (so a full-screen projector at 1920 x 1080 gets larger text, and a high-DPI display,
 * whose drawable has twice the pixels, twice the size), never below 0.75 where labels stop being
 * legible, times the caller's own scale. */
static double fit_scale(const gb_window *g, int pw, int ph)
{
	double s = fmin((double)pw / GB_RASTER_W, (double)ph / GB_RASTER_H);
	return (s < 0.75 ? 0.75 : s) * g->scale;
}

/* Draws what is shown (a figure with the status line, or a card) at the window's pixel size. */
static int render(gb_window *g, gb_verr *err)
{
	int pw, ph, rc;
	double sc;
	gb_canvas c;
	gb_window_size(g, &pw, &ph);
	if (pw < 1 || ph < 1)
		return 0; /* minimised: nothing to draw until it comes back */
	if (!g->fig && !g->card_title && !g->card_text)
		return 0;
	if (gb_canvas_init(&c, pw, ph, err))
		return -1;
	sc = fit_scale(g, pw, ph);
	g->status_h = g->fig ? gb_win_status_height(sc) : 0;
	if (g->status_h > ph / 3)
		g->status_h = 0; /* a tiny window keeps its figure */
	if (g->fig) {
		/* the figure's area is the canvas' top rows: the same memory, fewer rows */
		gb_canvas top = { pw, ph - g->status_h, c.rgba };
		rc = gb_raster_draw(g->fig, &top, sc, &g->info, err);
		if (!rc && g->status_h)
			rc = gb_win_draw_status(&c, ph - g->status_h, g->status_h, g->status, sc, err);
	} else {
		memset(&g->info, 0, sizeof g->info);
		rc = gb_win_draw_card(&c, g->card_title, g->card_text, sc, err);
	}
	if (rc || upload(g, &c, err)) {
		gb_canvas_free(&c);
		return -1;
	}
	gb_canvas_free(&g->canvas);
	g->canvas = c;
	g->shown_scale = g->fig ? sc : 0;
	present(g);
	return 0;
}

double gb_window_scale(const gb_window *g)
{
	return g ? g->shown_scale : 0;
}

double gb_window_text_scale(const gb_window *g)
{
	return g ? g->scale : 1;
}

const gb_figure *gb_window_figure(const gb_window *g)
{
	return g ? g->fig : NULL;
}

unsigned gb_window_shown(const gb_window *g)
{
	return g ? g->shown : 0;
}

static void drop_card(gb_window *g)
{
	free(g->card_title);
	free(g->card_text);
	g->card_title = g->card_text = NULL;
}

int gb_window_show(gb_window *g, const gb_figure *f, gb_verr *err)
{
	if (!g)
		return gb_vfail(err, "no window is open");
	if (!f)
		return gb_vfail(err, "no figure to show");
	drop_card(g);
	g->fig = f;
	g->shown++;
	g->status[0] = 0;
	memset(g->hover, 0, sizeof g->hover);
	if (render(g, err)) {
		g->fig = NULL;
		return -1;
	}
	return 0;
}

int gb_window_show_text(gb_window *g, const char *title, const char *text, gb_verr *err)
{
	if (!g)
		return gb_vfail(err, "no window is open");
	drop_card(g);
	g->fig = NULL;
	g->shown++;
	memset(g->hover, 0, sizeof g->hover);
	g->card_title = strdup(title ? title : "");
	g->card_text = strdup(text ? text : "");
	if (!g->card_title || !g->card_text) {
		drop_card(g);
		return gb_vfail(err, "out of memory for the window's text");
	}
	return render(g, err);
}

int gb_window_show_canvas(gb_window *g, const gb_canvas *c, gb_verr *err)
{
	gb_canvas copy;
	if (!g)
		return gb_vfail(err, "no window is open");
	if (!c || !c->rgba)
		return gb_vfail(err, "no picture to show");
	drop_card(g);
	g->fig = NULL;
	g->shown++;
	g->shown_scale = 0;
	g->status_h = 0;
	memset(g->hover, 0, sizeof g->hover);
	memset(&g->info, 0, sizeof g->info);
	if (gb_canvas_init(&copy, c->w, c->h, err))
		return -1;
	memcpy(copy.rgba, c->rgba, (size_t)c->w * c->h * 4);
	if (upload(g, &copy, err)) {
		gb_canvas_free(&copy);
		return -1;
	}
	gb_canvas_free(&g->canvas);
	g->canvas = copy;
	present(g);
	return 0;
}

int gb_window_set_scale(gb_window *g, double scale, gb_verr *err)
{
	if (!g)
		return gb_vfail(err, "no window is open");
	if (!(scale > 0 && scale <= 16))
		return gb_vfail(err, "scale %g is out of range (0 .. 16]", scale);
	g->scale = scale;
	memset(g->hover, 0, sizeof g->hover);
	return render(g, err);
}

int gb_window_figure_size(gb_window *g, int *fw, int *fh)
{
	int rc = gb_window_size(g, fw, fh);
	if (fh && g && g->fig)
		*fh -= g->status_h;
	return rc;
}

int gb_window_set_status(gb_window *g, const char *text)
{
	int pw, ph;
	if (!g)
		return -1;
	snprintf(g->status, sizeof g->status, "%s", text ? text : "");
	if (!g->fig || !g->status_h || !g->canvas.rgba)
		return 0;
	pw = g->canvas.w;
	ph = g->canvas.h;
	if (gb_win_draw_status(&g->canvas, ph - g->status_h, g->status_h, g->status, g->shown_scale, NULL))
		return -1;
	{
		/* only the status line's rows go to the texture again */
		SDL_Rect r = { 0, ph - g->status_h, pw, g->status_h };
		if (g->tex && g->tw == pw && g->th == ph)
			SDL_UpdateTexture(g->tex, &r, g->canvas.rgba + (size_t)(ph - g->status_h) * pw * 4, pw * 4);
	}
	present(g);
	return 0;
}

int gb_window_hit(gb_window *g, int x, int y, gb_hit *hit)
{
	if (!g || !g->fig) {
		*hit = (gb_hit){ GB_HIT_NONE, -1, -1, -1 };
		return GB_HIT_NONE;
	}
	return gb_win_hit(g->fig, &g->info, x, y, hit, NULL);
}

void gb_window_set_hover(gb_window *g, const gb_hit *hit)
{
	gb_rect r[2] = { { 0, 0, 0, 0 }, { 0, 0, 0, 0 } };
	gb_hit h;
	if (!g)
		return;
	/* the outline comes from the hit test again, so a stale hit cannot outline the wrong place */
	if (hit && hit->what != GB_HIT_NONE && g->fig) {
		const gb_raster_info *in = &g->info;
		int cx = -1, cy = -1;
		if (g->fig->kind == GB_FIG_HEATMAP && hit->row >= 0 && hit->col >= 0) {
			cx = in->plot.x + (int)(((long)hit->col * 2 + 1) * in->plot.w / (2L * g->fig->cols));
			cy = in->plot.y + (int)(((long)hit->row * 2 + 1) * in->plot.h / (2L * g->fig->rows));
		} else if (g->fig->kind == GB_FIG_GRID && hit->panel >= 0 && hit->panel < g->fig->n_panels) {
			const gb_figure *m = g->fig->panels[hit->panel], *p0 = g->fig->panels[0];
			int px, py;
			gb_raster_panel_xy(in, hit->panel, &px, &py);
			int pw = (int)((long)in->plot.w * m->cols / p0->cols), ph = (int)((long)in->plot.h * m->rows / p0->rows);
			cx = hit->col >= 0 ? px + (int)(((long)hit->col * 2 + 1) * pw / (2L * m->cols)) : px + pw / 2;
			cy = hit->row >= 0 ? py + (int)(((long)hit->row * 2 + 1) * ph / (2L * m->rows)) : py - 1;
		}
		if (cx >= 0)
			gb_win_hit(g->fig, in, cx, cy, &h, r);
	}
	if (!memcmp(r, g->hover, sizeof r))
		return;
	memcpy(g->hover, r, sizeof r);
	present(g);
}

/* Full screen is asked of the window manager (SDL's desktop full screen), and the window is
 * also made borderless and as large as its display itself: an X server without a window
 * manager (a kiosk, Xvfb) ignores the request, and the window would keep its size while SDL
 * draws for the screen's. Leaving puts back the size, place and border it had. */
int gb_window_set_fullscreen(gb_window *g, int on, gb_verr *err)
{
	SDL_Rect b;
	if (!g)
		return gb_vfail(err, "no window is open");
	on = on != 0;
	if (on == g->fullscreen)
		return 0;
	if (on) {
		int d = SDL_GetWindowDisplayIndex(g->win);
		if (d < 0 || SDL_GetDisplayBounds(d, &b) != 0)
			return gb_vfail(err, "cannot go full screen (%s)", SDL_GetError());
		SDL_GetWindowPosition(g->win, &g->saved.x, &g->saved.y);
		SDL_GetWindowSize(g->win, &g->saved.w, &g->saved.h);
		SDL_SetWindowBordered(g->win, SDL_FALSE);
		SDL_SetWindowPosition(g->win, b.x, b.y);
		SDL_SetWindowSize(g->win, b.w, b.h);
		if (SDL_SetWindowFullscreen(g->win, SDL_WINDOW_FULLSCREEN_DESKTOP) != 0)
			return gb_vfail(err, "cannot go full screen (%s)", SDL_GetError());
	} else {
		if (SDL_SetWindowFullscreen(g->win, 0) != 0)
			return gb_vfail(err, "cannot leave full screen (%s)", SDL_GetError());
		SDL_SetWindowBordered(g->win, SDL_TRUE);
		SDL_SetWindowSize(g->win, g->saved.w, g->saved.h);
		SDL_SetWindowPosition(g->win, g->saved.x, g->saved.y);
	}
	g->fullscreen = on;
	return 0;
}

int gb_window_is_fullscreen(const gb_window *g)
{
	return g ? g->fullscreen : 0;
}

int gb_window_resize(gb_window *g, int width, int height, gb_verr *err)
{
	if (!g)
		return gb_vfail(err, "no window is open");
	if (width < 1 || height < 1 || width > 16384 || height > 16384)
		return gb_vfail(err, "window size %d x %d is out of range", width, height);
	SDL_SetWindowSize(g->win, width, height);
	return 0;
}

static int mods_of(Uint16 m)
{
	return (m & KMOD_SHIFT ? GB_MOD_SHIFT : 0) | (m & KMOD_CTRL ? GB_MOD_CTRL : 0) |
	       (m & KMOD_ALT ? GB_MOD_ALT : 0);
}

/* A non-text key, or a Ctrl/Alt chord (which produce no text event); 0 for keys that will
 * arrive as text. */
static int special_key(const SDL_KeyboardEvent *k)
{
	SDL_Keycode s = k->keysym.sym;
	switch (s) {
	case SDLK_ESCAPE: return GB_KEY_ESCAPE;
	case SDLK_RETURN: case SDLK_KP_ENTER: return GB_KEY_ENTER;
	case SDLK_TAB: return GB_KEY_TAB;
	case SDLK_BACKSPACE: return GB_KEY_BACKSPACE;
	case SDLK_DELETE: return GB_KEY_DELETE;
	case SDLK_LEFT: return GB_KEY_LEFT;
	case SDLK_RIGHT: return GB_KEY_RIGHT;
	case SDLK_UP: return GB_KEY_UP;
	case SDLK_DOWN: return GB_KEY_DOWN;
	case SDLK_PAGEUP: return GB_KEY_PAGEUP;
	case SDLK_PAGEDOWN: return GB_KEY_PAGEDOWN;
	case SDLK_HOME: return GB_KEY_HOME;
	case SDLK_END: return GB_KEY_END;
	default: break;
	}
	if (s >= SDLK_F1 && s <= SDLK_F12)
		return GB_KEY_F1 + (s - SDLK_F1);
	if ((k->keysym.mod & (KMOD_CTRL | KMOD_ALT)) && s > 0x20 && s < 0x7F)
		return (int)s;
	return 0;
}

/* Window coordinates (what SDL's mouse events give) to drawable pixels (high-DPI: twice). */
static void to_pixels(gb_window *g, int x, int y, int *px, int *py)
{
	int ww = 0, wh = 0, pw, ph;
	SDL_GetWindowSize(g->win, &ww, &wh);
	gb_window_size(g, &pw, &ph);
	*px = ww > 0 ? (int)((long)x * pw / ww) : x;
	*py = wh > 0 ? (int)((long)y * ph / wh) : y;
}

/* Splits a text event into one key event per code point. */
static void queue_text(gb_window *g, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	g->npend = g->ipend = 0;
	while (*p && g->npend < PEND_MAX) {
		uint32_t cp;
		int n = gb_utf8_decode((const char *)p, &cp);
		if (n <= 0)
			break;
		p += n;
		if (cp == GB_UTF8_BAD)
			continue;
		g->pend[g->npend++] = (gb_window_event){ .type = GB_WIN_KEY, .key = (int)cp };
	}
}

int gb_window_poll(gb_window *g, gb_window_event *ev)
{
	SDL_Event e;
	if (!g || !ev)
		return 0;
	memset(ev, 0, sizeof *ev);
	for (;;) {
		if (g->ipend < g->npend) {
			*ev = g->pend[g->ipend++];
			return 1;
		}
		if (!SDL_PollEvent(&e))
			return 0;
		switch (e.type) {
		case SDL_QUIT:
			ev->type = GB_WIN_CLOSE;
			return 1;
		case SDL_WINDOWEVENT:
			if (e.window.event == SDL_WINDOWEVENT_CLOSE) {
				ev->type = GB_WIN_CLOSE;
				return 1;
			}
			if (e.window.event == SDL_WINDOWEVENT_SIZE_CHANGED) {
				/* a failed re-render leaves the old picture stretched: still the right figure */
				if ((!g->fig && !g->card_title) || render(g, NULL))
					present(g);
				memset(g->hover, 0, sizeof g->hover);
				ev->type = GB_WIN_RESIZE;
				gb_window_size(g, &ev->w, &ev->h);
				return 1;
			}
			if (e.window.event == SDL_WINDOWEVENT_EXPOSED)
				present(g);
			if (e.window.event == SDL_WINDOWEVENT_LEAVE) {
				ev->type = GB_WIN_LEAVE;
				return 1;
			}
			break;
		case SDL_MOUSEMOTION: {
			/* only the latest position of a burst matters (each may redraw the status line) */
			SDL_Event later;
			while (SDL_PeepEvents(&later, 1, SDL_GETEVENT, SDL_MOUSEMOTION, SDL_MOUSEMOTION) == 1)
				e = later;
			ev->type = GB_WIN_MOTION;
			to_pixels(g, e.motion.x, e.motion.y, &ev->x, &ev->y);
			return 1;
		}
		case SDL_MOUSEBUTTONDOWN:
			ev->type = GB_WIN_CLICK;
			ev->button = e.button.button;
			to_pixels(g, e.button.x, e.button.y, &ev->x, &ev->y);
			return 1;
		case SDL_KEYDOWN: {
			int k = special_key(&e.key);
			if (k) {
				ev->type = GB_WIN_KEY;
				ev->key = k;
				ev->mods = mods_of(e.key.keysym.mod);
				return 1;
			}
			break;
		}
		case SDL_TEXTINPUT:
			queue_text(g, e.text.text);
			break;
		default:
			break;
		}
	}
}

int gb_window_read_pixels(gb_window *g, gb_canvas *out, gb_verr *err)
{
	int pw, ph;
	if (!g)
		return gb_vfail(err, "no window is open");
	gb_window_size(g, &pw, &ph);
	if (gb_canvas_init(out, pw, ph, err))
		return -1;
	/* the back buffer is undefined after a present, so draw the frame again, then read it */
	draw_frame(g);
	if (SDL_RenderReadPixels(g->ren, NULL, SDL_PIXELFORMAT_RGBA32, out->rgba, pw * 4) != 0) {
		gb_canvas_free(out);
		return gb_vfail(err, "cannot read the window's pixels (%s)", SDL_GetError());
	}
	SDL_RenderPresent(g->ren);
	return 0;
}

void gb_window_close(gb_window *g)
{
	if (!g)
		return;
	SDL_StopTextInput();
	if (g->tex)
		SDL_DestroyTexture(g->tex);
	SDL_DestroyRenderer(g->ren);
	SDL_DestroyWindow(g->win);
	gb_canvas_free(&g->canvas);
	drop_card(g);
	free(g);
	if (--n_open == 0)
		SDL_QuitSubSystem(SDL_INIT_VIDEO);
}

#else /* !HAVE_SDL2 */

#define NO_SDL "the window needs SDL2, and this glassbox was built without it: apt-get install " \
               "libsdl2-dev, then ./configure && make (figures still print here and export to PNG)"

struct gb_window {
	int unused;
};

int gb_window_available(void)
{
	return 0;
}

int gb_window_probe(char *what, size_t cap, gb_verr *err)
{
	(void)what, (void)cap;
	return gb_vfail(err, NO_SDL);
}

gb_window *gb_window_open(const char *title, int w, int h, gb_verr *err)
{
	(void)title, (void)w, (void)h;
	gb_vfail(err, NO_SDL);
	return NULL;
}

int gb_window_show(gb_window *g, const gb_figure *f, gb_verr *err)
{
	(void)g, (void)f;
	return gb_vfail(err, NO_SDL);
}

int gb_window_show_canvas(gb_window *g, const gb_canvas *c, gb_verr *err)
{
	(void)g, (void)c;
	return gb_vfail(err, NO_SDL);
}

int gb_window_show_text(gb_window *g, const char *title, const char *text, gb_verr *err)
{
	(void)g, (void)title, (void)text;
	return gb_vfail(err, NO_SDL);
}

const gb_figure *gb_window_figure(const gb_window *g)
{
	(void)g;
	return NULL;
}

unsigned gb_window_shown(const gb_window *g)
{
	(void)g;
	return 0;
}

double gb_window_text_scale(const gb_window *g)
{
	(void)g;
	return 1;
}

int gb_window_set_fullscreen(gb_window *g, int on, gb_verr *err)
{
	(void)g, (void)on;
	return gb_vfail(err, NO_SDL);
}

int gb_window_is_fullscreen(const gb_window *g)
{
	(void)g;
	return 0;
}

int gb_window_set_status(gb_window *g, const char *text)
{
	(void)g, (void)text;
	return -1;
}

int gb_window_hit(gb_window *g, int x, int y, gb_hit *hit)
{
	(void)g, (void)x, (void)y;
	*hit = (gb_hit){ GB_HIT_NONE, -1, -1, -1 };
	return GB_HIT_NONE;
}

void gb_window_set_hover(gb_window *g, const gb_hit *hit)
{
	(void)g, (void)hit;
}

int gb_window_figure_size(gb_window *g, int *fw, int *fh)
{
	return gb_window_size(g, fw, fh);
}

int gb_window_set_scale(gb_window *g, double scale, gb_verr *err)
{
	(void)g, (void)scale;
	return gb_vfail(err, NO_SDL);
}

int gb_window_resize(gb_window *g, int width, int height, gb_verr *err)
{
	(void)g, (void)width, (void)height;
	return gb_vfail(err, NO_SDL);
}

double gb_window_scale(const gb_window *g)
{
	(void)g;
	return 0;
}

int gb_window_poll(gb_window *g, gb_window_event *ev)
{
	(void)g;
	if (ev)
		memset(ev, 0, sizeof *ev);
	return 0;
}

int gb_window_size(gb_window *g, int *pw, int *ph)
{
	(void)g;
	if (pw)
		*pw = 0;
	if (ph)
		*ph = 0;
	return -1;
}

int gb_window_read_pixels(gb_window *g, gb_canvas *out, gb_verr *err)
{
	(void)g, (void)out;
	return gb_vfail(err, NO_SDL);
}

void gb_window_close(gb_window *g)
{
	(void)g;
}

#endif
