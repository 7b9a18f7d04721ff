/* t_window.c — the SDL window shows exactly the PNG's pixels: rendered headless with SDL's dummy
 * and offscreen video drivers, and on a real X server under Xvfb (this program runs itself
 * there, with --x11, through xvfb-run). Also: no display gives the one-line error, and a build
 * without SDL2 says how to get the window. Parts that cannot run here are TAP SKIPs. */
#include "tests/tap.h"
#include "viz/figure.h"
#include "viz/png.h"
#include "viz/raster.h"
#include "viz/window.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

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

static gb_figure *figure(void)
{
	static const float v[16] = { 1, 0, 0, 0, 0.2689f, 0.7311f, 0, 0, 0.1863f, 0.4093f, 0.4044f, 0,
	                             0.0474f, 0.1288f, 0.0474f, 0.7764f };
	static const char *tok[4] = { "The", " cat", " sat", " on" };
	gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
	gb_fig_set_values(f, v, 4, 4);
	gb_fig_set_row_labels(f, tok);
	gb_fig_set_col_labels(f, tok);
	gb_fig_set_title(f, "Masked softmax");
	gb_fig_set_caption(f, "softmax(q k^T / sqrt(d_head) + mask)");
	f->numbers = 1;
	f->range = GB_RANGE_FIXED;
	f->vmin = 0;
	f->vmax = 1;
	return f;
}

/* Compares the window's pixels with the PNG of the same figure at the window's size and scale:
 * returns the number of differing pixels (-1 on error), and the largest channel difference. */
static int window_vs_png(gb_window *w, const gb_figure *f, const char *png, int *maxdiff, int *pw, int *ph)
{
	gb_canvas got, want, page;
	gb_verr err = { "" };
	int ndiff = 0;
	*maxdiff = 0;
	if (gb_window_read_pixels(w, &got, &err)) {
		tap_diag("read pixels: %s", err.msg);
		return -1;
	}
	*pw = got.w;
	*ph = got.h;
	if (gb_canvas_init(&page, got.w, got.h, &err) || gb_raster_draw(f, &page, gb_window_scale(w), NULL, &err) ||
	    gb_png_write(png, &page, NULL, NULL, 0, 1, &err) || gb_png_read(png, &want, NULL, NULL, &err)) {
		tap_diag("png: %s", err.msg);
		gb_canvas_free(&got);
		gb_canvas_free(&page);
		return -1;
	}
	gb_canvas_free(&page);
	for (size_t i = 0; i < (size_t)got.w * got.h; i++) {
		int d = 0;
		for (int k = 0; k < 3; k++) {
			int e = abs(got.rgba[i * 4 + k] - want.rgba[i * 4 + k]);
			d = e > d ? e : d;
		}
		ndiff += d > 0;
		*maxdiff = d > *maxdiff ? d : *maxdiff;
	}
	if (getenv("GB_WINDOW_SHOT")) /* a screenshot to look at */
		gb_png_write(getenv("GB_WINDOW_SHOT"), &got, NULL, NULL, 0, 1, &err);
	gb_canvas_free(&got);
	gb_canvas_free(&want);
	return ndiff;
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

/* The headless checks with one SDL video driver: 7 tests. */
static void driver(const char *name)
{
	gb_figure *f = figure();
	gb_verr err = { "" };
	gb_window *w;
	gb_window_event ev;
	char png[256];
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
		skip(7, why);
		gb_fig_free(f);
		return;
	}
	tap_ok(1, "%s: window opens", name);
	tap_ok(gb_window_show(w, f, &err) == 0, "%s: figure shown (%s)", name, err.msg);
	snprintf(png, sizeof png, "%s/%s.png", dir, name);
	n = window_vs_png(w, f, png, &maxdiff, &pw, &ph);
	tap_ok(n == 0 && pw == 640 && ph == 400 && fabs(gb_window_scale(w) - 0.75) < 1e-9,
	       "%s: the window's %d x %d pixels equal the PNG's at scale %g (%d differ, max %d)", name, pw, ph,
	       gb_window_scale(w), n, maxdiff);
	t0 = now();
	while (gb_window_poll(w, &ev) && polls < 1000)
		polls++;
	tap_ok(polls < 1000 && now() - t0 < 0.5 && gb_window_poll(w, &ev) == 0 && ev.type == GB_WIN_NONE,
	       "%s: poll drains %d pending events and returns 0 without blocking", name, polls);
	{
		int ok = gb_window_resize(w, 800, 450, &err) == 0 && wait_for(w, GB_WIN_RESIZE, 2.0, &ev);
		tap_ok(ok && ev.w == 800 && ev.h == 450, "%s: resize reported as 800 x 450 (%d x %d)", name, ev.w, ev.h);
	}
	n = window_vs_png(w, f, png, &maxdiff, &pw, &ph);
	tap_ok(n == 0 && pw == 800 && ph == 450, "%s: redrawn for the new size: equals an 800 x 450 PNG (%d differ)", name, n);
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

/* Run under xvfb-run by the parent: a real X window. Exit status 0 = pixels match. */
static int x11_child(const char *png)
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
	n = window_vs_png(w, f, png, &maxdiff, &pw, &ph);
	fprintf(stderr, "x11: %d x %d, %d pixels differ, max difference %d\n", pw, ph, n, maxdiff);
	if (n == 0) {
		/* a window manager-less X server grants the size at once; the event follows */
		int got = gb_window_resize(w, 1100, 620, &err) == 0 && wait_for(w, GB_WIN_RESIZE, 3.0, &ev);
		wait_for(w, GB_WIN_CLOSE, 0.3, &ev);
		n = got ? window_vs_png(w, f, png, &maxdiff, &pw, &ph) : -1;
		fprintf(stderr, "x11: resized to %d x %d, %d pixels differ, max difference %d\n", pw, ph, n, maxdiff);
		if (n == 0 && (pw != 1100 || ph != 620))
			n = -1;
	}
	gb_window_close(w);
	gb_fig_free(f);
	return n == 0 ? 0 : 2;
}

int main(int argc, char **argv)
{
	gb_verr err = { "" };
	gb_window *w;
	char *saved[3];
	const char *vars[3] = { "DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER" };

	if (argc == 3 && !strcmp(argv[1], "--x11"))
		return x11_child(argv[2]);
	snprintf(dir, sizeof dir, "/tmp/gb-t_window-XXXXXX");
	if (!mkdtemp(dir)) {
		printf("Bail out! cannot make a temporary folder\n");
		return 1;
	}
	tap_plan(19);

	if (!gb_window_available()) {
		w = gb_window_open("x", 100, 100, &err);
		tap_ok(!w && strstr(err.msg, "needs SDL2") && strstr(err.msg, "apt-get install libsdl2-dev"),
		       "built without SDL2: %s", err.msg);
		tap_ok(gb_window_show(NULL, NULL, &err) == -1 && strstr(err.msg, "needs SDL2"), "show says so too");
		tap_ok(gb_window_read_pixels(NULL, NULL, &err) == -1 && strstr(err.msg, "needs SDL2"), "read_pixels says so too");
		skip(16, "built without SDL2 (HAVE_SDL2=0)");
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
		char cmd[2048], self[512], png[256], log[256];
		ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
		int rc;
		self[n > 0 ? n : 0] = 0;
		snprintf(png, sizeof png, "%s/x11.png", dir);
		snprintf(log, sizeof log, "%s/x11.log", dir);
		snprintf(cmd, sizeof cmd, "xvfb-run -a -s '-screen 0 1280x800x24' '%s' --x11 '%s' 2>'%s'", self, png, log);
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
			tap_ok(rc == 0, "Xvfb: the X window's pixels equal the PNG's, before and after a resize");
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
