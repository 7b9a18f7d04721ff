/* doctor.c — `doctor` (and `glassbox doctor`): before a class, what this machine can show. One
 * line per check, ✔ or ✘, and after a ✘ the fix. The probes are the program's own: the colour
 * depth the figures will use (gb_term_depth, as the prompt decides it), the window's start-up
 * without a window (gb_window_probe), the fonts as the PNG path opens them (gb_font_face), the
 * shipped models loaded as `load` loads them, the lessons folder the runner reads, and the fast
 * kernel table checked against the reference on one product.
 *
 * A lesson needs its lessons, the shipped models, the fonts (a lesson's --export and every
 * PNG/PDF) and working kernels: a ✘ there makes the exit status 1 (a one-line error at the
 * end). The colours, the size, UTF-8 and the window make a class better but a lesson runs
 * without them: their ✘ says so and leaves the status alone. */
#include "app/cmd.h"

#include <dirent.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "app/lesson.h"
#include "app/tui_int.h"
#include "model/kernels/kernels.h"
#include "model/model.h"
#include "viz/cells.h"
#include "viz/font.h"
#include "viz/window.h"

typedef struct doc {
	int utf8;      /* the locale's character set is UTF-8 */
	int marks;     /* the marks as ✔ ✘ (UTF-8, not TERM=dumb), else + x */
	char codeset[32];
	int needed;    /* checks a lesson needs that failed */
} doc;

/* One line: the mark, the topic in a column, what was found; after a ✘, "  fix: ..." under it.
 * need: a lesson needs it (a failure counts). */
static void line(doc *d, int ok, int need, const char *topic, const char *fix, const char *fmt, ...)
{
	char what[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	printf("%s %-9s %s\n", ok ? (d->marks ? "\u2714" : "+") : (d->marks ? "\u2718" : "x"), topic, what);
	if (!ok && fix)
		printf("  %-9s fix: %s%s\n", "", fix, need ? "" : " (lessons run without it)");
	if (!ok && need)
		d->needed++;
}

static void terminal(doc *d)
{
	const char *term = getenv("TERM"), *ct = getenv("COLORTERM"), *nc = getenv("NO_COLOR");
	int tty = isatty(1);
	int depth = gb_term_depth(ct, term, nc, tty, 0);
	static const char *names[] = { "plain text (no colour)", "16 colours", "256 colours", "24-bit colour" };
	char why[200] = "";
	if (!tty)
		snprintf(why, sizeof why, " (the output is not a terminal)");
	else if (nc && *nc)
		snprintf(why, sizeof why, " (NO_COLOR is set)");
	else
		snprintf(why, sizeof why, " (TERM=%s%s%s)", term ? term : "", ct && *ct ? ", COLORTERM=" : "",
		         ct && *ct ? ct : "");
	line(d, depth >= GB_DEPTH_256, 0, "colours",
	     depth == GB_DEPTH_PLAIN && tty && nc && *nc ? "unset NO_COLOR for coloured heatmaps"
	     : !tty ? "run doctor at the terminal the class will use"
	            : "a terminal with 256 colours (TERM=xterm-256color) or 24-bit (COLORTERM=truecolor)",
	     "%s%s", names[depth], why);
	struct winsize ws;
	if (tty && !ioctl(1, TIOCGWINSZ, &ws) && ws.ws_col > 0)
		line(d, ws.ws_col >= MIN_W && ws.ws_row >= MIN_H, 0, "size",
		     "enlarge the window or choose a smaller font: the explorer (tui) needs 80x24",
		     "%dx%d (the explorer needs %dx%d)", ws.ws_col, ws.ws_row, MIN_W, MIN_H);
	else
		line(d, 0, 0, "size", "run doctor at the terminal the class will use", "not a terminal");
	line(d, d->utf8, 0, "UTF-8", "export LANG=C.UTF-8 (or a UTF-8 locale of your language): heatmaps use block characters",
	     "%s (character set %s)", d->utf8 ? "yes" : "no", d->codeset);
}

static void window(doc *d)
{
	char what[200];
	gb_verr err;
	const char *dpy = getenv("DISPLAY"), *way = getenv("WAYLAND_DISPLAY"), *drv = getenv("SDL_VIDEODRIVER");
	if (!gb_window_available()) {
		line(d, 0, 0, "window", "apt-get install libsdl2-dev, then ./configure && make (figures still export to PNG)",
		     "this glassbox was built without SDL2");
		return;
	}
	if ((!dpy || !*dpy) && (!way || !*way) && (!drv || !*drv)) {
		line(d, 0, 0, "window",
		     "run glassbox in the desktop session of the projector's screen (over SSH: ssh -X, or export "
		     "DISPLAY=:0); figures still print here and export to PNG",
		     "cannot open: no display (neither DISPLAY nor WAYLAND_DISPLAY is set)");
		return;
	}
	const char *fix = "check that DISPLAY/WAYLAND_DISPLAY names a running display you may use (xhost, XAUTHORITY)";
	if (gb_window_probe(what, sizeof what, &err))
		line(d, 0, 0, "window", fix, "%s", err.msg);
	else
		line(d, 1, 0, "window", NULL, "can open (%s%s%s)", what, dpy && *dpy ? ", DISPLAY=" : "",
		     dpy && *dpy ? dpy : "");
}

static void fonts(doc *d)
{
	static const char *names[] = { "sans", "bold", "mono" };
	char found[1024] = "", missing[512] = "";
	for (int i = 0; i < GB_FACE_N; i++) {
		gb_verr err;
		if (gb_font_face(i, &err))
			snprintf(found + strlen(found), sizeof found - strlen(found), "%s%s %s", found[0] ? ", " : "",
			         names[i], gb_font_file(i));
		else
			snprintf(missing, sizeof missing, "%s", err.msg);
	}
	if (missing[0])
		line(d, 0, 1, "fonts", "apt-get install fonts-dejavu-core (or GLASSBOX_FONT=FILE.ttf)", "%s", missing);
	else
		line(d, 1, 1, "fonts", NULL, "for PNG, PDF and the window: %s", found);
}

/* "tiny-lm: 4 layers x 4 heads, d_model 64" after loading it as `load` does. */
/* A folder as the user would type it: "/usr/share/glassbox/models", not ".../bin/../share/...". */
static void tidy(char *dir, size_t cap)
{
	char *r = realpath(dir, NULL);
	if (r && strlen(r) < cap)
		memcpy(dir, r, strlen(r) + 1);
	free(r);
}

static void models(doc *d)
{
	char dir[600];
	if (models_dir(dir, sizeof dir)) {
		line(d, 0, 1, "models", "install glassbox with its data (make install, or the Debian package), or run it from its build tree",
		     "the shipped models were not found beside the program nor in %s/models", GLASSBOX_DATADIR);
		return;
	}
	tidy(dir, sizeof dir);
	static const char *shipped[] = { "tiny-lm", "tiny-mt" };
	for (int i = 0; i < 2; i++) {
		char p[700];
		gb_model m;
		gb_err err;
		snprintf(p, sizeof p, "%s/%s", dir, shipped[i]);
		if (gb_model_load(&m, p, &err)) {
			line(d, 0, 1, "models", "reinstall glassbox's data (make install, or apt-get install --reinstall glassbox)",
			     "%s: %s", shipped[i], err.msg);
			continue;
		}
		char layers[64];
		if (m.cfg.n_enc_layer)
			snprintf(layers, sizeof layers, "%d + %d layers", m.cfg.n_enc_layer, m.cfg.n_layer);
		else
			snprintf(layers, sizeof layers, "%d layers", m.cfg.n_layer);
		line(d, 1, 1, "models", NULL, "%s: %s x %d heads, d_model %d, vocabulary %d (%s)", shipped[i], layers,
		     m.cfg.n_head, m.cfg.d_model, m.cfg.vocab, p);
		gb_model_free(&m);
	}
	char user[700];
	if (!user_models_dir(user, sizeof user)) {
		DIR *dd = opendir(user);
		int n = 0;
		for (struct dirent *e; dd && (e = readdir(dd));)
			n += e->d_name[0] != '.';
		if (dd) {
			closedir(dd);
			printf("  %-9s your gallery: %s (%d entr%s)\n", "", user, n, n == 1 ? "y" : "ies");
		} else
			printf("  %-9s your gallery: %s (none yet)\n", "", user);
	}
}

static void lessons(doc *d)
{
	char dir[1200];
	if (lessons_dir(dir, sizeof dir)) {
		line(d, 0, 1, "lessons", "install glassbox with its data (make install, or the Debian package)",
		     "not found beside the program nor in %s", dir);
		return;
	}
	tidy(dir, sizeof dir);
	DIR *dd = opendir(dir);
	int n = 0;
	for (struct dirent *e; dd && (e = readdir(dd));) {
		size_t k = strlen(e->d_name);
		n += e->d_name[0] != '.' && k > 7 && !strcmp(e->d_name + k - 7, ".lesson");
	}
	if (dd)
		closedir(dd);
	line(d, n > 0, 1, "lessons", "reinstall glassbox's data (make install, or apt-get install --reinstall glassbox)",
	     "%d in %s", n, dir);
}

/* The fast table against the reference on one 33 x 70 x 45 product (odd sizes: the blocked
 * paths' edges): a CPU or a build where the SIMD path computes wrongly is caught here. */
static void kernels(doc *d)
{
	const gb_kernels *fast = gb_kernels_fast(), *ref = gb_kernels_ref();
	enum { M = 33, K = 70, N = 45 };
	static float a[M * K], b[K * N], o1[M * N], o2[M * N];
	unsigned x = 12345;
	for (int i = 0; i < M * K; i++)
		a[i] = (float)((x = x * 1103515245u + 12345u) >> 16 & 0x7fff) / 32768.0f - 0.5f;
	for (int i = 0; i < K * N; i++)
		b[i] = (float)((x = x * 1103515245u + 12345u) >> 16 & 0x7fff) / 32768.0f - 0.5f;
	fast->matmul(o1, a, b, NULL, M, K, N, 0);
	ref->matmul(o2, a, b, NULL, M, K, N, 0);
	double worst = 0;
	for (int i = 0; i < M * N; i++)
		worst = fmax(worst, fabs((double)o1[i] - o2[i]));
	char have[128] = "";
	static const char *names[] = { "ref", "scalar", "avx2", "avx512" };
	for (int i = 0; i < 4; i++)
		if (gb_kernels_by_name(names[i]))
			snprintf(have + strlen(have), sizeof have - strlen(have), " %s", names[i]);
	const char *env = gb_kernels_env_problem();
	line(d, worst < 1e-4 && !env, 1, "kernels",
	     env ? "unset GLASSBOX_KERNELS, or set it to a table this CPU has"
	         : "GLASSBOX_KERNELS=ref uses the reference table; please report this CPU",
	     "%s on %d thread%s (this CPU has:%s); against ref: %.1e%s%s", fast->name, gb_kernels_threads(),
	     gb_kernels_threads() == 1 ? "" : "s", have, worst, env ? "; " : "", env ? env : "");
}

int cmd_doctor(session *s, int argc, char **argv, const char *rest)
{
	if (argc != 1)
		return usage(argv[0]);
	doc d = { 0 };
	/* the user's character set, as a terminal program sees it; glassbox itself runs in "C" */
	char *was = strdup(setlocale(LC_CTYPE, NULL));
	setlocale(LC_CTYPE, "");
	snprintf(d.codeset, sizeof d.codeset, "%s", nl_langinfo(CODESET));
	setlocale(LC_CTYPE, was);
	free(was);
	const char *term = getenv("TERM");
	d.utf8 = !strcmp(d.codeset, "UTF-8");
	d.marks = d.utf8 && !(term && !strcmp(term, "dumb"));
	printf("glassbox %s: what this machine can show\n", GLASSBOX_VERSION);
	terminal(&d);
	window(&d);
	fonts(&d);
	models(&d);
	lessons(&d);
	kernels(&d);
	if (d.needed) {
		errorf("doctor: %d thing%s a lesson needs %s missing (the fix is under each %s)", d.needed,
		       d.needed == 1 ? "" : "s", d.needed == 1 ? "is" : "are", d.marks ? "\u2718" : "x");
		return -1;
	}
	printf("Ready for a lesson.\n");
	return 0;
}
