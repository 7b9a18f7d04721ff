/* t_window.c — the projector window and what it draws, by decoded pixels:
 *   - without SDL, or without a display: the one-line errors;
 *   - without a window at all: the hit test (a pixel to a heatmap cell, a grid panel, a bar, a
 *     token of the attention lines), the status line, the text card, and the attention lines
 *     (BertViz's head view) in PNG, SVG and terminal cells;
 *   - headless with SDL's dummy and offscreen drivers, and on a real X server under Xvfb (this
 *     program runs itself there, with --x11, through xvfb-run): the window shows exactly the
 *     PNG's pixels above its status line, a card's, reports mouse moves and clicks where they
 *     are, and full screen takes the whole screen.
 * It is also the pixel tool of tests/t_window_x.sh (--pixel, --find, --diff, --ink, --text), which
 * drives the real program's window with xdotool. Parts that cannot run here are TAP SKIPs. */
#include "tests/tap.h"
#include "viz/cells.h"
#include "viz/colormap.h"
#include "viz/figure.h"
#include "viz/png.h"
#include "viz/raster.h"
#include "viz/svg.h"
#include "viz/window.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

#if HAVE_SDL2
#include <SDL.h>
#endif

#if defined(__SANITIZE_ADDRESS__) && HAVE_SDL2
/* Under AddressSanitizer (make check SANITIZE=...): SDL unloads the video drivers and the
 * libraries they opened (X11, Mesa) when it quits, and LeakSanitizer then cannot name the
 * module of what they kept, so tests/lsan.supp's library names cannot match it. This program's
 * own dlclose comes first in symbol lookup and keeps every library loaded until exit. */
int dlclose(void *handle);
int dlclose(void *handle)
{
	(void)handle;
	return 0;
}
#endif

static char dir[64];

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void skip(int n, const char *why)
{
	for (int i = 0; i < n; i++)
		printf("ok %d - # SKIP %s\n", ++tap_n, why);
}

static const uint8_t *px(const gb_canvas *c, int x, int y)
{
	return c->rgba + ((size_t)y * c->w + x) * 4;
}

/* Pixels in a box darker than near-white (text or lines over the page). */
static int ink(const gb_canvas *c, int x0, int y0, int x1, int y1)
{
	int n = 0;
	for (int y = y0 < 0 ? 0 : y0; y < y1 && y < c->h; y++)
		for (int x = x0 < 0 ? 0 : x0; x < x1 && x < c->w; x++)
			n += px(c, x, y)[0] < 200 || px(c, x, y)[2] < 200;
	return n;
}

static gb_figure *figure(void)
{
	static const float v[16] = { 1, 0, 0, 0, 0.2689f, 0.7311f, 0, 0, 0.1863f, 0.4093f, 0.4044f, 0,
	                             0.0474f, 0.1288f, 0.0474f, 0.7764f };
	static const char *tok[4] = { "The", " cat", " sat", " on" };
	gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
	gb_fig_set_values(f, v, 4, 4);
	gb_fig_set_row_labels(f, tok);
	gb_fig_set_col_labels(f, tok);
	gb_fig_set_axes(f, "query", "key");
	gb_fig_set_title(f, "Masked softmax");
	gb_fig_set_caption(f, "softmax(q k^T / sqrt(d_head) + mask)");
	f->numbers = 1;
	f->range = GB_RANGE_FIXED;
	f->vmin = 0;
	f->vmax = 1;
	return f;
}

/* The same weights as attention lines, with 8 tokens so labels must stay at 18 px or more. */
static gb_figure *lines_figure(int n)
{
	static const char *tok[8] = { "When", " Mary", " and", " John", " went", " to", " the", " park" };
	float v[64] = { 0 };
	gb_figure *f = gb_fig_new(GB_FIG_ATTNLINES);
	for (int i = 0; i < n; i++) { /* each query: 0.9 on the previous token (itself first), the rest spread */
		int prev = i ? i - 1 : 0;
		for (int j = 0; j <= i; j++)
			v[i * n + j] = i ? 0.1f / i : 0;
		v[i * n + prev] += 0.9f + (i ? 0 : 0.1f);
	}
	gb_fig_set_values(f, v, n, n);
	gb_fig_set_row_labels(f, tok);
	gb_fig_set_col_labels(f, tok);
	gb_fig_set_axes(f, "query", "key");
	gb_fig_set_title(f, "Layer 1, head 1: who attends to whom");
	f->row_index0 = f->col_index0 = 1;
	f->range = GB_RANGE_FIXED;
	f->vmin = 0;
	f->vmax = 1;
	return f;
}

/* What a window of pw x ph shows for f with status line text: the figure above, the line
 * under it (the window's own drawing functions, so this checks the window puts them there). */
static int expected(const gb_figure *f, int pw, int ph, int fh, double scale, const char *status, gb_canvas *out)
{
	gb_verr err;
	if (gb_canvas_init(out, pw, ph, &err))
		return -1;
	gb_canvas top = { pw, fh, out->rgba };
	if (gb_raster_draw(f, &top, scale, NULL, &err) ||
	    (fh < ph && gb_win_draw_status(out, fh, ph - fh, status, scale, &err))) {
		tap_diag("expected: %s", err.msg);
		gb_canvas_free(out);
		return -1;
	}
	return 0;
}

/* Differing pixels between two canvases of one size (-1 when the sizes differ). */
static int ndiff(const gb_canvas *a, const gb_canvas *b, int *maxdiff)
{
	int n = 0;
	*maxdiff = 0;
	if (a->w != b->w || a->h != b->h)
		return -1;
	for (size_t i = 0; i < (size_t)a->w * a->h; i++) {
		int d = 0;
		for (int k = 0; k < 3; k++) {
			int e = abs(a->rgba[i * 4 + k] - b->rgba[i * 4 + k]);
			d = e > d ? e : d;
		}
		n += d > 0;
		*maxdiff = d > *maxdiff ? d : *maxdiff;
	}
	return n;
}

/* The window's pixels against the figure at the window's figure size and scale with the status
 * line under it: the number of differing pixels (-1 on error). */
static int window_vs_png(gb_window *w, const gb_figure *f, const char *status, int *maxdiff, int *pw, int *ph)
{
	gb_canvas got, want;
	gb_verr err = { "" };
	int fw, fh, n;
	*maxdiff = 0;
	if (gb_window_read_pixels(w, &got, &err)) {
		tap_diag("read pixels: %s", err.msg);
		return -1;
	}
	*pw = got.w;
	*ph = got.h;
	gb_window_figure_size(w, &fw, &fh);
	if (expected(f, got.w, got.h, fh, gb_window_scale(w), status, &want)) {
		gb_canvas_free(&got);
		return -1;
	}
	n = ndiff(&got, &want, maxdiff);
	if (getenv("GB_WINDOW_SHOT")) /* a screenshot to look at */
		gb_png_write(getenv("GB_WINDOW_SHOT"), &got, NULL, NULL, 0, 1, &err);
	gb_canvas_free(&got);
	gb_canvas_free(&want);
	return n;
}

/* Polls until an event of type arrives or `seconds` pass; returns 1 if it came. */
static int wait_for(gb_window *w, int type, double seconds, gb_window_event *ev)
{
	double t0 = now();
	while (now() - t0 < seconds) {
		while (gb_window_poll(w, ev))
			if (ev->type == type)
				return 1;
		usleep(10000);
	}
	return 0;
}

/* ---- without a window: hit test, status line, card, attention lines: 14 tests ------------ */

static void drawing(void)
{
	gb_verr err = { "" };
	gb_canvas c;
	gb_raster_info in;
	gb_hit h;
	gb_rect o[2];
	gb_figure *f = figure();

	/* a heatmap: the centre of cell (2, 1) is that cell; the outline is the cell's box */
	gb_raster_render(f, NULL, &c, &in, &err);
	{
		int x = in.plot.x + (2 * in.plot.w / 4 + 3 * in.plot.w / 4) / 2 - in.plot.w / 4;
		int y = in.plot.y + (2 * in.plot.h / 4 + 3 * in.plot.h / 4) / 2;
		gb_win_hit(f, &in, x, y, &h, o);
		tap_ok(h.what == GB_HIT_CELL && h.row == 2 && h.col == 1 && h.panel == -1 && o[0].x == in.plot.x + in.plot.w / 4 &&
		       o[0].w == in.plot.w / 2 - in.plot.w / 4,
		       "hit test: (%d, %d) is cell (%d, %d) of the heatmap, outlined at x %d width %d", x, y, h.row, h.col, o[0].x, o[0].w);
		tap_ok(gb_win_hit(f, &in, in.plot.x - 3, y, &h, o) == GB_HIT_NONE && gb_win_hit(f, &in, 5, 5, &h, o) == GB_HIT_NONE,
		       "hit test: the labels and the margin are no cell");
	}
	gb_canvas_free(&c);

	/* a grid of 4 panels in 2 columns: panel 3's cells, and its title above them */
	{
		gb_figure *g = gb_fig_new(GB_FIG_GRID);
		g->grid_cols = 2;
		for (int i = 0; i < 4; i++) {
			gb_figure *p = figure();
			char t[16];
			snprintf(t, sizeof t, "head %d", i + 1);
			gb_fig_set_title(p, t);
			gb_fig_add_panel(g, p);
		}
		gb_raster_render(g, NULL, &c, &in, &err);
		int x = in.plot.x + in.dx + in.plot.w / 8, y = in.plot.y + in.dy + in.plot.h * 7 / 8;
		gb_win_hit(g, &in, x, y, &h, o);
		tap_ok(h.what == GB_HIT_CELL && h.panel == 3 && h.row == 3 && h.col == 0 && o[1].x == in.plot.x + in.dx &&
		       o[1].y == in.plot.y + in.dy && o[1].w == in.plot.w,
		       "hit test: a grid's panel 4, cell (%d, %d); the panel outlined", h.row, h.col);
		gb_win_hit(g, &in, in.plot.x + in.plot.w / 2, in.plot.y + in.dy - 8, &h, o);
		tap_ok(h.what == GB_HIT_CELL && h.panel == 2 && h.row == -1 && h.col == -1,
		       "hit test: just above panel 3's cells (its title) is panel 3, no cell (panel %d)", h.panel + 1);
		gb_canvas_free(&c);
		gb_fig_free(g);
	}

	/* the attention lines: labels at 18 px or more at 1600 x 900, columns for the mouse */
	{
		gb_figure *l = lines_figure(8);
		char *svg;
		gb_raster_render(l, NULL, &c, &in, &err);
		tap_ok(in.lines_px >= 18 && in.label_stride == 1, "lines: every token labelled at %d px (18 or more)", in.lines_px);
		int qx = in.lines_q.x + in.lines_q.w / 2, kx = in.lines_k.x + in.lines_k.w / 2;
		int y5 = in.lines_q.y + (2 * 5 + 1) * in.lines_q.h / 16, y4 = in.lines_k.y + (2 * 4 + 1) * in.lines_k.h / 16;
		int q = gb_win_hit(l, &in, qx, y5, &h, NULL), row = h.row;
		gb_win_hit(l, &in, kx, y4, &h, NULL);
		tap_ok(q == GB_HIT_QUERY && row == 5 && h.what == GB_HIT_KEY && h.col == 4,
		       "hit test: the left column is query 6, the right key 5 (query %d, key %d)", row + 1, h.col + 1);
		/* query 6 -> key 5 (0.92) is a dark, wide line; query 6 -> key 8 (masked, 0) none: look
		 * halfway between the columns */
		int xa = in.lines_q.x + in.lines_q.w, xb = in.lines_k.x, mx = (xa + xb) / 2;
		int strong = ink(&c, mx - 2, (y5 + y4) / 2 - 6, mx + 3, (y5 + y4) / 2 + 7);
		int y8 = in.lines_k.y + (2 * 7 + 1) * in.lines_k.h / 16;
		int none = 0;
		for (int yy = (y5 + y8) / 2 - 2; yy <= (y5 + y8) / 2 + 2; yy++)
			none += px(&c, mx, yy)[0] < 250;
		tap_ok(strong >= 15 && none == 0, "lines: a 0.92 weight draws a wide dark line (%d ink pixels), a masked one none", strong);
		{
			uint8_t want[3], got[3];
			gb_cmap_rgb(l->cmap, 0.2, want);
			memcpy(got, px(&c, mx, (y5 + y4) / 2), 3);
			tap_ok(fabs(got[0] - (255 + (want[0] - 255) * 0.92)) <= 12 && fabs(got[2] - (255 + (want[2] - 255) * 0.92)) <= 12,
			       "lines: its colour is the line colour at opacity 0.92 (%d %d %d)", got[0], got[1], got[2]);
		}
		gb_canvas_free(&c);
		/* focus on query 3: only its lines; its weights printed beside the keys */
		l->focus_row = 3;
		gb_raster_render(l, NULL, &c, &in, &err);
		int others = ink(&c, mx - 1, y5 - 3, mx + 2, y5 + 4) + ink(&c, xa + 2, y5 - 3, xa + 30, y5 + 4);
		int beside = ink(&c, in.lines_k.x + in.lines_k.w, in.lines_k.y, c.w - 40, in.lines_k.y + in.lines_k.h / 4);
		tap_ok(others == 0 && beside > 30, "lines: the focus on query 3 hides query 6's lines (%d ink) and prints weights by the keys (%d)",
		       others, beside);
		gb_canvas_free(&c);
		l->focus_row = 0;
		svg = gb_svg_render(l, 0, 0, 0, "test", &err);
		{
			int nl = 0;
			for (const char *p = svg; p && (p = strstr(p, "<polyline")); p++)
				nl++;
			tap_ok(svg && nl >= 15 && strstr(svg, ">1 When<") && strstr(svg, "8 \xC2\xB7park"),
			       "lines in SVG: %d lines, labels with index and token", nl);
		}
		free(svg);
		/* the terminal: each query's strongest keys, strongest first */
		{
			gb_grid g;
			gb_cells_opts co;
			char *text = NULL;
			size_t n;
			gb_cells_opts_default(&co, GB_DEPTH_PLAIN);
			gb_grid_init(&g, 80, 24, &err);
			int rc = gb_cells_render(&g, 0, 0, 80, 24, l, &co, &err);
			gb_cells_write(&g, GB_DEPTH_PLAIN, &text, &n, &err);
			tap_ok(rc == 0 && text && strstr(text, "6 \xC2\xB7to ->  5 \xC2\xB7went 0.92   1 When 0.02"),
			       "lines in the terminal: query 6's strongest key first with its weight");
			if (text && !strstr(text, "6 \xC2\xB7to ->"))
				tap_diag("%s", text);
			free(text);
			gb_grid_free(&g);
		}
		gb_fig_free(l);
	}

	/* the status line: a pale band with text on its left */
	gb_canvas_init(&c, 800, 40, &err);
	{
		int rc = gb_win_draw_status(&c, 8, gb_win_status_height(1), "query 2 \"cat\" \xC3\x97 key 1 \"The\" = 0.2689", 1, &err);
		const uint8_t *band = px(&c, 790, 20);
		tap_ok(rc == 0 && gb_win_status_height(1) == 32 && band[0] == 0xF0 && px(&c, 5, 2)[0] == 0xFF &&
		       ink(&c, 0, 8, 400, 40) > 100 && ink(&c, 600, 8, 800, 40) == 0,
		       "status line: %d px high, a pale band, the text at the left", gb_win_status_height(1));
	}
	gb_canvas_free(&c);

	/* the text card: the command and its text; or the "no figure" note in the middle */
	gb_canvas_init(&c, 1600, 900, &err);
	{
		int rc = gb_win_draw_card(&c, "tokenize When Anna came home,", "  405  When\n  349  \xC2\xB7" "A\n\x1b[1m  840\x1b[0m  nna\n", 1, &err);
		int title = ink(&c, 40, 40, 800, 80), text = ink(&c, 40, 120, 600, 400), right = ink(&c, 900, 120, 1600, 900);
		tap_ok(rc == 0 && title > 500 && text > 1000 && right == 0,
		       "text card: the command as its title (%d ink), its three lines below (%d), nothing on the right", title, text);
		rc = gb_win_draw_card(&c, "run Anna", NULL, 1, &err);
		tap_ok(rc == 0 && ink(&c, 500, 430, 1100, 470) > 500 && ink(&c, 40, 120, 1600, 400) < 10,
		       "text card without text: \"no figure for this command\" in the middle");
	}
	gb_canvas_free(&c);
	gb_fig_free(f);
}

/* ---- the headless window with one SDL video driver: 11 tests ------------------------------- */

static void driver(const char *name)
{
	gb_figure *f = figure();
	gb_verr err = { "" };
	gb_window *w;
	gb_window_event ev;
	int maxdiff, n, pw, ph, polls = 0;
	double t0;
	setenv("SDL_VIDEODRIVER", name, 1);
	/* offscreen's default renderer draws into an EGL pbuffer, which keeps its first size when
	 * the window grows (seen here: the new rows read back empty); SDL's software renderer
	 * follows the window, as renderers on a real display do (the Xvfb part checks that) */
	if (!strcmp(name, "offscreen"))
		setenv("SDL_RENDER_DRIVER", "software", 1);
	w = gb_window_open("glassbox test", 640, 400, &err);
	if (!w) {
		char why[700];
		snprintf(why, sizeof why, "SDL video driver '%s' unavailable here: %s", name, err.msg);
		skip(11, why);
		gb_fig_free(f);
		return;
	}
	tap_ok(1, "%s: window opens", name);
	tap_ok(gb_window_show(w, f, &err) == 0, "%s: figure shown (%s)", name, err.msg);
	{
		int fw, fh;
		gb_window_figure_size(w, &fw, &fh);
		n = window_vs_png(w, f, "", &maxdiff, &pw, &ph);
		tap_ok(n == 0 && pw == 640 && ph == 400 && fh == 400 - gb_win_status_height(0.75) && fabs(gb_window_scale(w) - 0.75) < 1e-9,
		       "%s: the window's %d x %d pixels are the PNG's at scale %g over a %d px status line (%d differ, max %d)",
		       name, pw, ph, gb_window_scale(w), ph - fh, n, maxdiff);
	}
	t0 = now();
	while (gb_window_poll(w, &ev) && polls < 1000)
		polls++;
	tap_ok(polls < 1000 && now() - t0 < 0.5 && gb_window_poll(w, &ev) == 0 && ev.type == GB_WIN_NONE,
	       "%s: poll drains %d pending events and returns 0 without blocking", name, polls);
	{
		int ok = gb_window_resize(w, 800, 450, &err) == 0 && wait_for(w, GB_WIN_RESIZE, 2.0, &ev);
		tap_ok(ok && ev.w == 800 && ev.h == 450, "%s: resize reported as 800 x 450 (%d x %d)", name, ev.w, ev.h);
	}
	gb_window_set_status(w, "query 3 \"sat\" \xC3\x97 key 2 \"cat\" = 0.4093");
	n = window_vs_png(w, f, "query 3 \"sat\" \xC3\x97 key 2 \"cat\" = 0.4093", &maxdiff, &pw, &ph);
	tap_ok(n == 0 && pw == 800 && ph == 450, "%s: redrawn for the new size, with a status text: equals an 800 x 450 PNG (%d differ)", name, n);
	/* the hit test through the window, and the outline it draws */
	{
		gb_raster_info in;
		gb_canvas page, got;
		int fw, fh;
		gb_window_figure_size(w, &fw, &fh);
		gb_canvas_init(&page, fw, fh, &err);
		gb_raster_draw(f, &page, gb_window_scale(w), &in, &err);
		int x = in.plot.x + in.plot.w * 5 / 8, y = in.plot.y + in.plot.h / 8;
		gb_hit h;
		gb_window_hit(w, x, y, &h);
		gb_window_set_hover(w, &h);
		gb_window_read_pixels(w, &got, &err);
		int edge = in.plot.x + in.plot.w / 2 - 2; /* left of cell (0, 2): the outline's black ring */
		const uint8_t *o = px(&got, edge, y), *p = px(&page, edge, y);
		tap_ok(h.what == GB_HIT_CELL && h.row == 0 && h.col == 2 && o[0] == 0 && o[1] == 0 && o[2] == 0 &&
		       px(&got, edge + 1, y)[0] == 255 && (p[0] || p[1] || p[2]),
		       "%s: the mouse at (%d, %d) is on cell (1, 3), which the window outlines", name, x, y);
		gb_window_set_hover(w, NULL);
		gb_canvas_free(&got);
		gb_canvas_free(&page);
	}
	/* mouse events as SDL delivers them */
#if HAVE_SDL2
	{
		SDL_Event e = { 0 };
		int got_move, got_click;
		e.type = SDL_MOUSEMOTION;
		e.motion.x = 100;
		e.motion.y = 50;
		SDL_PushEvent(&e);
		e.motion.x = 120; /* a burst: only the latest counts */
		SDL_PushEvent(&e);
		got_move = wait_for(w, GB_WIN_MOTION, 1.0, &ev) && ev.x == 120 && ev.y == 50 && !gb_window_poll(w, &ev);
		memset(&e, 0, sizeof e);
		e.type = SDL_MOUSEBUTTONDOWN;
		e.button.button = SDL_BUTTON_LEFT;
		e.button.x = 30;
		e.button.y = 40;
		SDL_PushEvent(&e);
		got_click = wait_for(w, GB_WIN_CLICK, 1.0, &ev) && ev.x == 30 && ev.y == 40 && ev.button == 1;
		tap_ok(got_move && got_click, "%s: a burst of mouse moves comes as its last position, a click with its place", name);
	}
#else
	skip(1, "no SDL");
#endif
	/* a card instead of the figure */
	{
		gb_canvas got, want;
		gb_window_show_text(w, "info", "layers  4\nheads   4", &err);
		gb_window_read_pixels(w, &got, &err);
		gb_canvas_init(&want, got.w, got.h, &err);
		gb_win_draw_card(&want, "info", "layers  4\nheads   4", gb_window_scale(w) > 0 ? gb_window_scale(w) : 0.75, &err);
		n = ndiff(&got, &want, &maxdiff);
		tap_ok(n == 0 && gb_window_figure(w) == NULL && gb_window_hit(w, 100, 100, &(gb_hit){ 0 }) == GB_HIT_NONE,
		       "%s: a text card fills the window (%d pixels differ from the card), and nothing is under the mouse", name, n);
		gb_canvas_free(&got);
		gb_canvas_free(&want);
		gb_window_show(w, f, &err);
	}
	/* text size: everything scales */
	{
		gb_window_set_scale(w, 1.5, &err);
		n = window_vs_png(w, f, "", &maxdiff, &pw, &ph);
		tap_ok(n == 0 && fabs(gb_window_scale(w) - 0.75 * 1.5) < 1e-9 && fabs(gb_window_text_scale(w) - 1.5) < 1e-9,
		       "%s: text size 150%% draws at scale %g, still the PNG's pixels (%d differ)", name, gb_window_scale(w), n);
		gb_window_set_scale(w, 1, &err);
	}
	{
		int ok = gb_window_resize(w, 1920, 1080, &err) == 0 && wait_for(w, GB_WIN_RESIZE, 2.0, &ev);
		double sc = gb_window_scale(w);
		tap_ok(ok && fabs(sc - 1.2) < 1e-9, "%s: a 1920 x 1080 projector window draws at scale 1.2 (%g)", name, sc);
	}
	gb_window_close(w);
	unsetenv("SDL_VIDEODRIVER");
	unsetenv("SDL_RENDER_DRIVER");
	gb_fig_free(f);
}

/* Run under xvfb-run by the parent: a real X window. Exit status 0 = pixels match, and full
 * screen takes the screen and gives it back. */
static int x11_child(void)
{
	gb_figure *f = figure();
	gb_verr err = { "" };
	gb_window *w;
	gb_window_event ev;
	int maxdiff, n, pw, ph;
	unsetenv("SDL_VIDEODRIVER");
	w = gb_window_open("glassbox under Xvfb", 960, 540, &err);
	if (!w) {
		fprintf(stderr, "x11: %s\n", err.msg);
		return 3;
	}
	if (gb_window_show(w, f, &err)) {
		fprintf(stderr, "x11: %s\n", err.msg);
		return 3;
	}
	wait_for(w, GB_WIN_CLOSE, 0.5, &ev); /* let the server map and expose the window */
	n = window_vs_png(w, f, "", &maxdiff, &pw, &ph);
	fprintf(stderr, "x11: %d x %d, %d pixels differ, max difference %d\n", pw, ph, n, maxdiff);
	if (n == 0) {
		/* a window manager-less X server grants the size at once; the event follows */
		int got = gb_window_resize(w, 1100, 620, &err) == 0 && wait_for(w, GB_WIN_RESIZE, 3.0, &ev);
		wait_for(w, GB_WIN_CLOSE, 0.3, &ev);
		n = got ? window_vs_png(w, f, "", &maxdiff, &pw, &ph) : -1;
		fprintf(stderr, "x11: resized to %d x %d, %d pixels differ, max difference %d\n", pw, ph, n, maxdiff);
		if (n == 0 && (pw != 1100 || ph != 620))
			n = -1;
	}
	if (n == 0) {
		/* full screen on a server without a window manager, and back */
		int got = gb_window_set_fullscreen(w, 1, &err) == 0 && wait_for(w, GB_WIN_RESIZE, 3.0, &ev);
		wait_for(w, GB_WIN_CLOSE, 0.3, &ev);
		n = got ? window_vs_png(w, f, "", &maxdiff, &pw, &ph) : -1;
		fprintf(stderr, "x11: full screen %d x %d, %d pixels differ\n", pw, ph, n);
		if (n == 0 && (pw != 1280 || ph != 800 || !gb_window_is_fullscreen(w)))
			n = -1;
		got = gb_window_set_fullscreen(w, 0, &err) == 0 && wait_for(w, GB_WIN_RESIZE, 3.0, &ev);
		wait_for(w, GB_WIN_CLOSE, 0.5, &ev);
		gb_window_size(w, &pw, &ph);
		fprintf(stderr, "x11: back to %d x %d\n", pw, ph);
		if (n == 0 && (!got || pw != 1100 || ph != 620))
			n = -1;
	}
	gb_window_close(w);
	gb_fig_free(f);
	return n == 0 ? 0 : 2;
}

/* ---- the pixel tool of t_window_x.sh ------------------------------------------------------- */

static int load(const char *p, gb_canvas *c)
{
	gb_verr err;
	if (gb_png_read(p, c, NULL, NULL, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	return 0;
}

static int tool_run(int argc, char **argv, gb_canvas *pa, gb_canvas *pb);

/* The images the tool reads are freed before it exits, so a sanitizer's leak check of the
 * shell tests that call it (make check SANITIZE=address) finds nothing of the tool's. */
static int tool(int argc, char **argv)
{
	gb_canvas a = { 0 }, b = { 0 };
	int rc = tool_run(argc, argv, &a, &b);
	gb_canvas_free(&a);
	gb_canvas_free(&b);
	return rc;
}

static int tool_run(int argc, char **argv, gb_canvas *pa, gb_canvas *pb)
{
#define a (*pa)
#define b (*pb)
	if (argc >= 5 && !strcmp(argv[1], "--pixel") && !load(argv[2], &a)) {
		int x = atoi(argv[3]), y = atoi(argv[4]);
		if (x < 0 || y < 0 || x >= a.w || y >= a.h)
			return 1;
		printf("%02x%02x%02x\n", px(&a, x, y)[0], px(&a, x, y)[1], px(&a, x, y)[2]);
		return 0;
	}
	if (argc >= 8 && !strcmp(argv[1], "--find") && !load(argv[2], &a)) {
		/* --find FILE RRGGBB X Y W H: the pixel of that colour nearest the box's centre */
		unsigned rgb = (unsigned)strtoul(argv[3], NULL, 16);
		int x0 = atoi(argv[4]), y0 = atoi(argv[5]), w = atoi(argv[6]), h = atoi(argv[7]), bx = -1, by = -1;
		double best = 1e18;
		for (int y = y0; y < y0 + h && y < a.h; y++)
			for (int x = x0; x < x0 + w && x < a.w; x++) {
				const uint8_t *p = px(&a, x, y);
				double d = hypot(x - (x0 + w / 2.0), y - (y0 + h / 2.0));
				if (((unsigned)p[0] << 16 | (unsigned)p[1] << 8 | p[2]) == rgb && d < best)
					best = d, bx = x, by = y;
			}
		if (bx < 0)
			return 1;
		printf("%d %d\n", bx, by);
		return 0;
	}
	if (argc >= 7 && !strcmp(argv[1], "--ink") && !load(argv[2], &a)) {
		int x0 = atoi(argv[3]), y0 = atoi(argv[4]);
		printf("%d\n", ink(&a, x0, y0, x0 + atoi(argv[5]), y0 + atoi(argv[6])));
		return 0;
	}
	if (argc >= 8 && !strcmp(argv[1], "--diff") && !load(argv[2], &a) && !load(argv[3], &b)) {
		/* an optional 8th argument: a channel may differ by that much (anti-aliasing) */
		int x0 = atoi(argv[4]), y0 = atoi(argv[5]), w = atoi(argv[6]), h = atoi(argv[7]), n = 0;
		int tol = argc >= 9 ? atoi(argv[8]) : 0;
		for (int y = y0; y < y0 + h && y < a.h && y < b.h; y++)
			for (int x = x0; x < x0 + w && x < a.w && x < b.w; x++) {
				const uint8_t *p = px(&a, x, y), *q = px(&b, x, y);
				int d = 0;
				for (int c = 0; c < 3; c++)
					d = abs(p[c] - q[c]) > d ? abs(p[c] - q[c]) : d;
				n += d > tol;
			}
		printf("%d\n", n);
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "--text")) {
		gb_png_text *t;
		int nt;
		gb_verr err;
		if (gb_png_read(argv[2], &a, &t, &nt, &err))
			return 1;
		const char *v = gb_png_text_get(t, nt, argv[3]);
		printf("%s\n", v ? v : "");
		int found = v != NULL;
		gb_png_text_free(t, nt);
		return found ? 0 : 1;
	}
	fprintf(stderr, "usage: t_window.t --pixel|--find|--ink|--diff|--text ...\n");
	return 2;
#undef a
#undef b
}

int main(int argc, char **argv)
{
	gb_verr err = { "" };
	gb_window *w;
	char *saved[3];
	const char *vars[3] = { "DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER" };

	if (argc == 2 && !strcmp(argv[1], "--x11"))
		return x11_child();
	if (argc >= 2 && !strncmp(argv[1], "--", 2))
		return tool(argc, argv);
	snprintf(dir, sizeof dir, "/tmp/gb-t_window-XXXXXX");
	if (!mkdtemp(dir)) {
		printf("Bail out! cannot make a temporary folder\n");
		return 1;
	}
	tap_plan(41);

	drawing();

	if (!gb_window_available()) {
		w = gb_window_open("x", 100, 100, &err);
		tap_ok(!w && strstr(err.msg, "needs SDL2") && strstr(err.msg, "apt-get install libsdl2-dev"),
		       "built without SDL2: %s", err.msg);
		tap_ok(gb_window_show(NULL, NULL, &err) == -1 && strstr(err.msg, "needs SDL2"), "show says so too");
		tap_ok(gb_window_read_pixels(NULL, NULL, &err) == -1 && strstr(err.msg, "needs SDL2"), "read_pixels says so too");
		skip(24, "built without SDL2 (HAVE_SDL2=0)");
		rmdir(dir);
		return tap_done();
	}

	/* no display at all: one line, and nothing else breaks */
	for (int i = 0; i < 3; i++) {
		saved[i] = getenv(vars[i]) ? strdup(getenv(vars[i])) : NULL;
		unsetenv(vars[i]);
	}
	w = gb_window_open("x", 100, 100, &err);
	tap_ok(!w && !strcmp(err.msg, "no display for the window (DISPLAY is not set): figures still print here and export to PNG"),
	       "no display: %s", err.msg);
	tap_ok(strchr(err.msg, '\n') == NULL, "the message is one line");
	{
		gb_figure *f = figure();
		gb_canvas c;
		tap_ok(gb_raster_render(f, NULL, &c, NULL, &err) == 0, "rendering still works without a display");
		gb_canvas_free(&c);
		gb_fig_free(f);
	}

	driver("dummy");
	driver("offscreen");

	/* a real X server */
	if (system("command -v xvfb-run >/dev/null 2>&1") != 0)
		skip(2, "xvfb-run not installed (apt-get install xvfb)");
	else {
		char cmd[2048], self[512], log[256];
		ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
		int rc;
		self[n > 0 ? n : 0] = 0;
		snprintf(log, sizeof log, "%s/x11.log", dir);
		snprintf(cmd, sizeof cmd, "xvfb-run -a -s '-screen 0 1280x800x24' '%s' --x11 2>'%s'", self, log);
		rc = system(cmd);
		rc = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
		{
			FILE *fp = fopen(log, "r");
			char line[512];
			while (fp && fgets(line, sizeof line, fp)) {
				line[strcspn(line, "\n")] = 0;
				tap_diag("%s", line);
			}
			if (fp)
				fclose(fp);
		}
		if (rc == 3 || rc == 1)
			skip(2, "Xvfb did not start or no X window could be opened here");
		else {
			tap_ok(rc == 0 || rc == 2, "window opened on Xvfb (exit %d)", rc);
			tap_ok(rc == 0, "Xvfb: the X window's pixels equal the PNG's, before and after a resize, and in full screen "
			                "(1280 x 800, the screen's size) and back");
		}
	}
	for (int i = 0; i < 3; i++) {
		if (saved[i])
			setenv(vars[i], saved[i], 1);
		free(saved[i]);
	}
	{
		char cmd[128];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			tap_diag("could not remove %s", dir);
	}
	return tap_done();
}
