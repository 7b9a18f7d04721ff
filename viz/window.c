/* window.c — owns the SDL2 window, its renderer and texture, and the translation of SDL events
 * into gb_window_event. The only file that knows whether SDL2 was built in (HAVE_SDL2, from
 * config.mk): without it, the same functions exist and each says how to get the window. */
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
	const gb_figure *fig;     /* borrowed, re-rendered on resize; NULL when a canvas is shown */
	gb_canvas canvas;         /* what the texture holds */
	double scale;             /* the caller's extra scale */
	double shown_scale;       /* what the shown figure was rendered at */
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
	return 0;
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
	g->win = SDL_CreateWindow(title ? title : "glassbox", SDL_WINDOWPOS_UNDEFINED, SDL_WINDOWPOS_UNDEFINED,
	                          w > 0 ? w : 1280, h > 0 ? h : 720,
	                          SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI);
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

/* Draws the texture over the whole output; when sizes match the copy is 1:1. */
static void present(gb_window *g)
{
	SDL_SetRenderDrawColor(g->ren, 255, 255, 255, 255);
	SDL_RenderClear(g->ren);
	if (g->tex)
		SDL_RenderCopy(g->ren, g->tex, NULL, NULL);
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

static int render_fig(gb_window *g, gb_verr *err)
{
	int pw, ph;
	gb_canvas c;
	gb_window_size(g, &pw, &ph);
	if (pw < 1 || ph < 1)
		return 0; /* minimised: nothing to draw until it comes back */
	if (gb_canvas_init(&c, pw, ph, err))
		return -1;
	if (gb_raster_draw(g->fig, &c, fit_scale(g, pw, ph), NULL, err) || upload(g, &c, err)) {
		gb_canvas_free(&c);
		return -1;
	}
	gb_canvas_free(&g->canvas);
	g->canvas = c;
	g->shown_scale = fit_scale(g, pw, ph);
	present(g);
	return 0;
}

double gb_window_scale(const gb_window *g)
{
	return g ? g->shown_scale : 0;
}

int gb_window_show(gb_window *g, const gb_figure *f, gb_verr *err)
{
	if (!g)
		return gb_vfail(err, "no window is open");
	if (!f)
		return gb_vfail(err, "no figure to show");
	g->fig = f;
	if (render_fig(g, err)) {
		g->fig = NULL;
		return -1;
	}
	return 0;
}

int gb_window_show_canvas(gb_window *g, const gb_canvas *c, gb_verr *err)
{
	gb_canvas copy;
	if (!g)
		return gb_vfail(err, "no window is open");
	if (!c || !c->rgba)
		return gb_vfail(err, "no picture to show");
	g->fig = NULL;
	g->shown_scale = 0;
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
	return g->fig ? render_fig(g, err) : 0;
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
				if (!g->fig || render_fig(g, NULL))
					present(g);
				ev->type = GB_WIN_RESIZE;
				gb_window_size(g, &ev->w, &ev->h);
				return 1;
			}
			if (e.window.event == SDL_WINDOWEVENT_EXPOSED)
				present(g);
			break;
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
	SDL_SetRenderDrawColor(g->ren, 255, 255, 255, 255);
	SDL_RenderClear(g->ren);
	if (g->tex)
		SDL_RenderCopy(g->ren, g->tex, NULL, NULL);
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
