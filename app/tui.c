/* tui.c — the full-screen explorer.
 *
 * Contract: tui_run owns the terminal from newterm to endwin, and nothing else. What it shows
 * comes from the session (view_stage for the figure, the trace's ids for the tokens) and what
 * it changes is the session's view (s->stage, s->layer, s->head, s->fig), so the prompt, the
 * SDL window and `export` agree with it during and after. Figures are laid out by viz/cells
 * (gb_cells_render into a gb_grid the size of the figure area) and the cells copied to
 * ncurses: nothing here draws a figure itself. Commands and views print (errors on stderr,
 * figures on stdout); while they run both go to a temporary file, and what they said is shown
 * in the status area or an overlay, so nothing ever writes to the screen behind ncurses.
 *
 * The screen (W x H, at least MIN_W x MIN_H; smaller gets one message until enlarged):
 *   0          the current text's tokens, the cursor's query and key marked
 *   1          the stage selector, layer and head
 *   2 .. H-4   the figure (its caption is left out: the formula has a line of its own)
 *   H-3        the formula (the figure's caption)
 *   H-2        status: the value under the cursor with its row and column labels
 *   H-1        a message, the key hints, or the `:` line
 * Heatmaps are laid out one data row per line (no half blocks), so the cursor is one cell.
 *
 * The explorer is three files around tui_int.h: this one (the figure on show, its layout, the
 * keys, tui_run), tui_draw.c (the screen) and tui_cmd.c (the `:` line, what commands print,
 * the PNG export). */
#include "app/tui.h"
#include "app/tui_int.h"

#include <curses.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "app/classroom.h"
#include "app/views.h"
#include "viz/cells.h"
#include "viz/window.h"

/* ---- the figure on show ----------------------------------------------------------------- */

void tui_remember(tui *t)
{
	t->st = t->s->stage;
	t->ly = t->s->layer;
	t->hd = t->s->head;
	t->made = t->s->fig;
}

/* The focus follows the head on the heads stage, where each panel is one. */
void tui_fit_focus(tui *t)
{
	if (!t->fig || t->fig->kind != GB_FIG_GRID || t->fig->n_panels < 1) {
		t->zoom = 0;
		t->focus = 0;
		return;
	}
	if (t->s->stage == ST_HEADS && !t->custom)
		t->focus = t->s->head - 1;
	if (t->focus < 0 || t->focus >= t->fig->n_panels)
		t->focus = 0;
}

/* Makes the stage's figure (s->stage, s->layer, s->head) the one on show. */
void tui_rebuild(tui *t)
{
	session *s = t->s;
	t->custom = 0;
	t->fig = NULL;
	t->err[0] = 0;
	if (s->layer < 1 || s->layer > n_layers(s))
		s->layer = s->layer < 1 ? 1 : n_layers(s);
	if (s->head < 1 || s->head > n_heads(s))
		s->head = s->head < 1 ? 1 : n_heads(s);
	if (!s->loaded)
		snprintf(t->err, sizeof t->err, "no model loaded: press : and type  load DIR  (models lists the shipped ones)");
	else if (!s->have_run)
		snprintf(t->err, sizeof t->err, "no text yet: press : and type  run TEXT  (e.g.  run the cat sat on the mat)");
	else {
		/* views report a bad selection on stderr: catch it for the figure area */
		int capped = tui_cap_begin(t) == 0;
		gb_figure *f = view_stage(s);
		char *said = capped ? tui_cap_end(t) : NULL;
		if (f) {
			gb_verr err;
			if (session_adopt(s, f, &err) > 0)
				tui_set_msg(t, 1, "window: %s", err.msg);
			t->fig = f;
		} else {
			tui_last_line(said ? said : "", t->err, sizeof t->err);
			if (!t->err[0])
				snprintf(t->err, sizeof t->err, "the %s stage cannot be shown for this model", stage_name(s->stage));
		}
		free(said);
	}
	tui_remember(t);
	tui_fit_focus(t);
}

/* After the window's event pump: its keys may have moved the view (window_key made the new
 * stage's figure and freed the old one, so nothing may point into the old one any more). */
int tui_sync_window(tui *t)
{
	session *s = t->s;
	if (s->stage == t->st && s->layer == t->ly && s->head == t->hd && s->fig == t->made)
		return 0;
	if (s->fig && s->have_run && s->fig != t->made) {
		t->fig = s->fig;
		t->custom = 0;
		t->err[0] = 0;
		t->zoom = 0;
		tui_remember(t);
		tui_fit_focus(t);
	} else
		tui_rebuild(t);
	return 1;
}

static void set_view(tui *t, int stage, int layer, int head)
{
	session *s = t->s;
	if (stage != s->stage || t->custom)
		t->zoom = 0;
	s->stage = stage;
	s->layer = layer;
	s->head = head;
	tui_rebuild(t);
}

static void next_stage(tui *t, int dir)
{
	int st = t->s->stage;
	if (t->custom && dir > 0)
		st = st - 1; /* from a command's figure, Tab comes back to the stage it left */
	do
		st = (st + dir + ST_N) % ST_N;
	while (st == ST_CROSS && !has_cross(t->s));
	set_view(t, st, t->s->layer, t->s->head);
}

/* The figure drawn: the shown one, or its chosen panel when zoomed. */
const gb_figure *tui_drawn(const tui *t)
{
	if (!t->fig)
		return NULL;
	if (t->zoom && t->fig->kind == GB_FIG_GRID && t->focus < t->fig->n_panels)
		return t->fig->panels[t->focus];
	return t->fig;
}

/* A zoomed panel as a figure of its own, sharing the panel's arrays: the grid's title before
 * its own, the grid's colormap and range (so it keeps the colours it had among the others),
 * the grid's caption and, when it has none, its metadata. */
void tui_zoom_view(const tui *t, gb_figure *v, char *title, size_t cap)
{
	const gb_figure *g = t->fig, *p = g->panels[t->focus];
	float lo, hi;
	int bad;
	gb_fig_range(g, &lo, &hi, &bad);
	*v = *p;
	snprintf(title, cap, "%s: %s", g->title ? g->title : "", p->title ? p->title : "");
	v->title = title;
	v->caption = g->caption;
	v->cmap = g->cmap;
	v->range = GB_RANGE_FIXED;
	v->vmin = lo;
	v->vmax = hi;
	v->colorbar = 1;
	if (!p->n_meta) {
		v->meta_keys = g->meta_keys;
		v->meta_vals = g->meta_vals;
		v->n_meta = g->n_meta;
	}
}

/* ---- layout ------------------------------------------------------------------------------- */

/* Moves a window [*start, *start + n) so it holds pos; first is where the layout put it.
 * Returns 1 when it had to move. */
static int follow(int *start, int first, int n, int pos)
{
	*start = first;
	if (n <= 0)
		return 0;
	if (pos < first)
		*start = pos;
	else if (pos >= first + n)
		*start = pos - n + 1;
	return *start != first;
}

/* Where the data begins: the first cell with a background colour is the top-left data cell
 * (titles, labels and notices have none; the colorbar and caption come after the data). At
 * plain depth nothing has a colour, so the same figure is laid out at full colour to find it;
 * without half blocks both depths give the same layout. */
static void locate(tui *t, const gb_figure *v, const gb_cells_opts *o)
{
	gb_grid *g = &t->grid;
	gb_verr err;
	if (t->depth == GB_DEPTH_PLAIN) {
		gb_cells_opts q = *o;
		q.depth = GB_DEPTH_TRUE;
		gb_grid_clear(&t->probe);
		if (gb_cells_render(&t->probe, 0, 0, t->probe.w, t->probe.h, v, &q, &err))
			return;
		g = &t->probe;
	}
	for (int y = 0; y < g->used_h; y++)
		for (int x = 0; x < g->w; x++)
			if (g->cells[(size_t)y * g->w + x].attr & GB_ATTR_BG) {
				t->dx = x;
				t->dy = y;
				return;
			}
}

void tui_layout(tui *t)
{
	gb_grid *g = &t->grid;
	gb_grid_clear(g);
	t->dx = t->dy = -1;
	t->rerr[0] = 0;
	t->kind = -1;
	memset(&t->shown, 0, sizeof t->shown);
	const gb_figure *f = t->fig;
	if (!f)
		return;
	gb_figure v = *f, panel;
	const gb_figure **panels = NULL;
	char title[1024];
	if (f->kind == GB_FIG_GRID && f->n_panels > 0) {
		if (t->zoom)
			tui_zoom_view(t, &v, title, sizeof title);
		else {
			/* the chosen panel wears a mark on its title */
			panels = malloc(sizeof *panels * (size_t)f->n_panels);
			memcpy(panels, f->panels, sizeof *panels * (size_t)f->n_panels);
			panel = *f->panels[t->focus];
			snprintf(title, sizeof title, "\xE2\x96\xB6%s", panel.title ? panel.title : "");
			panel.title = title;
			panels[t->focus] = &panel;
			v.panels = (gb_figure **)panels;
		}
	}
	v.caption = NULL;
	t->kind = v.kind;
	const gb_figure *d = tui_drawn(t);
	if (d->rows > 0 && d->cols > 0) { /* the figure may have changed under the cursor */
		int n = v.kind == GB_FIG_BARS ? d->rows * d->cols : d->rows;
		t->cr = t->cr >= n ? n - 1 : t->cr < 0 ? 0 : t->cr;
		if (v.kind == GB_FIG_HEATMAP)
			t->cc = t->cc >= d->cols ? d->cols - 1 : t->cc < 0 ? 0 : t->cc;
	}
	gb_cells_opts o;
	gb_cells_opts_default(&o, t->depth);
	if (v.kind == GB_FIG_HEATMAP)
		o.half = 0;
	gb_verr err;
	for (int pass = 0; pass < 4; pass++) {
		o.row0 = v.kind == GB_FIG_GRID ? t->prow0 : t->row0;
		o.col0 = t->col0;
		gb_grid_clear(g);
		if (gb_cells_render(g, 0, 0, g->w, g->h, &v, &o, &err)) {
			snprintf(t->rerr, sizeof t->rerr, "%s", err.msg);
			break;
		}
		gb_cells_shown sh = g->shown;
		int moved = 0;
		if (v.kind == GB_FIG_HEATMAP) {
			moved |= follow(&t->row0, sh.row0, sh.rows, t->cr);
			moved |= follow(&t->col0, sh.col0, sh.cols, t->cc);
		} else if (v.kind == GB_FIG_BARS)
			moved = follow(&t->row0, sh.row0, sh.rows, t->cr);
		else if (v.kind == GB_FIG_GRID)
			moved = follow(&t->prow0, sh.row0, sh.rows, t->focus / (sh.cols > 0 ? sh.cols : 1));
		else if (v.kind == GB_FIG_STRIP)
			t->col0 = sh.col0;
		if (!moved)
			break;
	}
	t->shown = g->shown;
	t->bars_top = v.title != NULL;
	if (!t->rerr[0] && v.kind == GB_FIG_HEATMAP && v.rows > 0 && v.cols > 0)
		locate(t, &v, &o);
	free(panels);
}

/* ---- actions ------------------------------------------------------------------------------ */

static void cursor_move(tui *t, int dr, int dc)
{
	const gb_figure *f = tui_drawn(t);
	if (!f)
		return;
	if (t->kind == GB_FIG_GRID) {
		int gc = t->shown.cols > 0 ? t->shown.cols : 1, n = f->n_panels;
		int k = t->focus + dc + dr * gc;
		if (k < 0 || k >= n)
			return;
		t->focus = k;
		if (t->s->stage == ST_HEADS && !t->custom) /* each panel is a head: the head follows */
			t->s->head = t->hd = k + 1;
	} else if (t->kind == GB_FIG_BARS) {
		int n = f->rows * f->cols;
		t->cr += dr ? dr : dc;
		t->cr = t->cr < 0 ? 0 : t->cr >= n ? n - 1 : t->cr;
	} else if (t->kind == GB_FIG_HEATMAP) {
		t->cr += dr;
		t->cc += dc;
		t->cr = t->cr < 0 ? 0 : t->cr >= f->rows ? f->rows - 1 : t->cr;
		t->cc = t->cc < 0 ? 0 : t->cc >= f->cols ? f->cols - 1 : t->cc;
	} else if (t->kind == GB_FIG_STRIP)
		t->col0 = t->col0 + dc < 0 ? 0 : t->col0 + dc;
	else if (t->kind == GB_FIG_DIAGRAM) { /* a diagram taller than the screen scrolls */
		int top = t->shown.rows_total - t->shown.rows;
		t->row0 += dr;
		t->row0 = t->row0 > top ? top : t->row0 < 0 ? 0 : t->row0;
	}
}

static void click(tui *t, int mx, int my)
{
	const gb_cells_shown *sh = &t->shown;
	int y = my - TOP;
	if (!t->fig || t->rerr[0] || y < 0 || y >= t->grid.h)
		return;
	if (t->kind == GB_FIG_HEATMAP && t->dx >= 0) {
		int cw = sh->cell_w > 0 ? sh->cell_w : 1;
		int r = sh->row0 + (y - t->dy), c = sh->col0 + (mx - t->dx) / cw;
		if (y >= t->dy && mx >= t->dx && r < sh->row0 + sh->rows && c < sh->col0 + sh->cols) {
			t->cr = r;
			t->cc = c;
		}
	} else if (t->kind == GB_FIG_BARS) {
		int r = sh->row0 + (y - t->bars_top);
		if (y >= t->bars_top && r < sh->row0 + sh->rows)
			t->cr = r;
	}
}

/* One key, as get_wch gives it, except that an escape sequence the terminal description does
 * not name (tmux sends Home as ESC [ 1 ~ whatever TERM says) is read whole: ncurses would
 * hand it over as ESC, which leaves, and then '[', which changes the layer. Home and End in
 * their other spellings are recognized; any other such sequence is KEY_CODE_YES with 0. A
 * lone ESC stays ESC. */
int tui_get_key(wint_t *ch)
{
	int r = get_wch(ch);
	if (r != OK || *ch != 27)
		return r;
	wint_t c;
	char seq[16];
	int n = 0;
	timeout(0); /* the rest of a sequence is already here: nothing means the Esc key */
	if (get_wch(&c) == ERR)
		return OK;
	seq[n++] = (char)(c < 128 ? c : '?');
	if (c == '[' || c == 'O') {
		while (n < (int)sizeof seq - 1 && get_wch(&c) != ERR) {
			seq[n++] = (char)(c < 128 ? c : '?');
			if (c >= 0x40 && c <= 0x7E)
				break;
		}
	}
	seq[n] = 0;
	if (!strcmp(seq, "[1~") || !strcmp(seq, "[7~") || !strcmp(seq, "[H") || !strcmp(seq, "OH"))
		*ch = KEY_HOME;
	else if (!strcmp(seq, "[4~") || !strcmp(seq, "[8~") || !strcmp(seq, "[F") || !strcmp(seq, "OF"))
		*ch = KEY_END;
	else
		*ch = 0;
	return KEY_CODE_YES;
}

static void key(tui *t, int fkey, wint_t ch)
{
	session *s = t->s;
	if (t->help) { /* any key closes the help */
		if (!(fkey && (ch == KEY_RESIZE || ch == KEY_MOUSE)))
			t->help = 0;
		return;
	}
	if (t->show_out) {
		int page = LINES - 5 > 1 ? LINES - 5 : 1;
		if (fkey && ch == KEY_UP) t->out_top--;
		else if (fkey && ch == KEY_DOWN) t->out_top++;
		else if (fkey && ch == KEY_PPAGE) t->out_top -= page;
		else if (fkey && (ch == KEY_NPAGE)) t->out_top += page;
		else if (!fkey && ch == ' ') t->out_top += page;
		else if (fkey && ch == KEY_HOME) t->out_top = 0;
		else if (fkey && ch == KEY_END) t->out_top = t->n_out;
		else if (fkey && (ch == KEY_RESIZE || ch == KEY_MOUSE)) ;
		else t->show_out = 0;
		return;
	}
	if (tui_too_small()) {
		if (!fkey && (ch == 'q' || ch == 27))
			t->quit = 1;
		return;
	}
	t->msg[0] = 0;
	int L = n_layers(s), H = n_heads(s);
	if (fkey) {
		switch (ch) {
		case KEY_BTAB: next_stage(t, -1); break;
		case KEY_PPAGE: if (s->layer > 1) set_view(t, s->stage, s->layer - 1, s->head); break;
		case KEY_NPAGE: if (s->layer < L) set_view(t, s->stage, s->layer + 1, s->head); break;
		case KEY_UP: cursor_move(t, -1, 0); break;
		case KEY_DOWN: cursor_move(t, 1, 0); break;
		case KEY_LEFT: cursor_move(t, 0, -1); break;
		case KEY_RIGHT: cursor_move(t, 0, 1); break;
		case KEY_HOME: cursor_move(t, 0, -1000000); break;
		case KEY_END: cursor_move(t, 0, 1000000); break;
		case KEY_ENTER: goto enter;
		case KEY_BACKSPACE: t->zoom = 0; break;
		case KEY_MOUSE: {
			MEVENT ev;
			if (getmouse(&ev) == OK) {
				if (ev.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED))
					click(t, ev.x, ev.y);
#ifdef BUTTON5_PRESSED
				else if (ev.bstate & BUTTON4_PRESSED)
					cursor_move(t, -1, 0);
				else if (ev.bstate & BUTTON5_PRESSED)
					cursor_move(t, 1, 0);
#endif
			}
			break;
		}
		default: break; /* KEY_RESIZE only needs the redraw; unknown keys do nothing */
		}
		return;
	}
	switch (ch) {
	case '\t': next_stage(t, 1); break;
	case '[': if (s->layer > 1) set_view(t, s->stage, s->layer - 1, s->head); break;
	case ']': if (s->layer < L) set_view(t, s->stage, s->layer + 1, s->head); break;
	case '<': case ',': if (s->head > 1) set_view(t, s->stage, s->layer, s->head - 1); break;
	case '>': case '.': if (s->head < H) set_view(t, s->stage, s->layer, s->head + 1); break;
	case 'k': cursor_move(t, -1, 0); break;
	case 'j': cursor_move(t, 1, 0); break;
	case 'h': cursor_move(t, 0, -1); break;
	case 'l': cursor_move(t, 0, 1); break;
	case 'e': tui_export_png(t); break;
	case 'a': tui_run_command(t, "arch"); t->row0 = 0; break; /* the architecture, this stage marked */
	case '?': t->help = 1; break;
	case 'o':
		if (t->n_out)
			t->show_out = 1;
		else
			tui_set_msg(t, 0, "no command output yet: ':' runs a command");
		break;
	case 'z': case 127: case 8: t->zoom = 0; break;
	case 'q': case 27: t->quit = 1; break;
	case ':': {
		char line[EDIT_MAX * 4 + 8];
		if (tui_read_command(t, line, sizeof line))
			tui_run_command(t, line);
		break;
	}
	case '\r': case '\n':
	enter:
		if (t->fig && t->fig->kind == GB_FIG_GRID && t->fig->n_panels > 0) {
			t->zoom = !t->zoom;
			t->cr = t->cc = 0;
		}
		break;
	default: break;
	}
}

/* $LINES and $COLUMNS as they were (those that were set), with the terminal's size when
 * known; frees the saved values. */
static void put_env_size(char *lines, char *cols, int nl, int nc)
{
	char buf[32];
	if (lines) {
		snprintf(buf, sizeof buf, "%d", nl);
		setenv("LINES", nl > 0 ? buf : lines, 1);
	}
	if (cols) {
		snprintf(buf, sizeof buf, "%d", nc);
		setenv("COLUMNS", nc > 0 ? buf : cols, 1);
	}
	free(lines);
	free(cols);
}

static void put_locale(char *ctype)
{
	if (ctype)
		setlocale(LC_CTYPE, ctype);
	free(ctype);
}

int tui_run(session *s)
{
	static int open_now;
	if (open_now) {
		errorf("the explorer is already open");
		return -1;
	}
	if (!isatty(0) || !isatty(1)) {
		errorf("the explorer needs a terminal: start it at the prompt, not from a script or a pipe");
		return -1;
	}
	/* The character set only: numbers keep the C locale's decimal point, which model files,
	 * printed tensors and CSV depend on. Put back as it was when the explorer closes. */
	const char *ctype0 = setlocale(LC_CTYPE, NULL);
	char *ctype_was = ctype0 ? strdup(ctype0) : NULL;
	setlocale(LC_CTYPE, "");
	fflush(stdout);
	fflush(stderr);
	/* ncurses takes SIGWINCH (and so reports KEY_RESIZE) only when nobody else has it, and
	 * only in the first newterm of a process: the prompt's handler is put aside while the
	 * explorer runs, and ncurses' own kept for the next time. */
	static struct sigaction nc_winch;
	static int have_nc_winch;
	struct sigaction dfl, old_winch;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(SIGWINCH, have_nc_winch ? &nc_winch : &dfl, &old_winch);
	/* The size must come from the terminal: readline exports $LINES and $COLUMNS, and ncurses
	 * would take them over the terminal's word, pinning the explorer to the size the prompt
	 * started at. They are put back afterwards, with the size the terminal has then. */
	char *env_lines = getenv("LINES") ? strdup(getenv("LINES")) : NULL;
	char *env_cols = getenv("COLUMNS") ? strdup(getenv("COLUMNS")) : NULL;
	unsetenv("LINES");
	unsetenv("COLUMNS");
	/* newterm, not initscr: an unknown TERM is an error to report, not a reason to exit */
	SCREEN *scr = newterm(NULL, stdout, stdin);
	if (!scr) {
		const char *term = getenv("TERM");
		sigaction(SIGWINCH, &old_winch, NULL);
		put_env_size(env_lines, env_cols, 0, 0);
		put_locale(ctype_was);
		errorf("the terminal type '%s' is unknown here: set TERM (e.g. TERM=xterm-256color)", term ? term : "");
		return -1;
	}
	tui *t = calloc(1, sizeof *t);
	if (!t) {
		endwin();
		delscreen(scr);
		sigaction(SIGWINCH, &old_winch, NULL);
		put_env_size(env_lines, env_cols, 0, 0);
		put_locale(ctype_was);
		errorf("out of memory for the explorer");
		return -1;
	}
	open_now = 1;
	t->s = s;
	t->save1 = t->save2 = -1;
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	set_escdelay(25);
	mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON4_PRESSED
#ifdef BUTTON5_PRESSED
	          | BUTTON5_PRESSED
#endif
	          , NULL);
	mouseinterval(0); /* presses at once, no wait to tell a click from a drag */
	tui_colours_init(t);
	tui_rebuild(t);
	classroom_fullscreen(1);
	int dirty = 1;
	while (!t->quit) {
		if (dirty)
			tui_frame(t);
		dirty = 1;
		/* with the window open the loop must turn to pump its events */
		timeout(s->win ? 16 : -1);
		wint_t ch;
		int r = ERR;
		/* a class's sockets are served while the explorer waits for a key (classroom.h) */
		if (!classroom_active() || classroom_wait(s, 0, s->win ? 16 : 200) > 0) {
			if (classroom_active())
				timeout(0);
			r = tui_get_key(&ch);
		}
		if (r == ERR) {
			if (interrupted) { /* Ctrl-C leaves, as it stops anything else */
				interrupted = 0;
				break;
			}
			window_pump(s);
			dirty = tui_sync_window(t);
			continue;
		}
		if (!(r == KEY_CODE_YES && (ch == KEY_RESIZE || ch == KEY_MOUSE)))
			classroom_explore(); /* a follower's own key leaves the teacher's view (:follow) */
		key(t, r == KEY_CODE_YES, ch);
		if (s->win) {
			window_pump(s);
			tui_sync_window(t);
		}
	}
	classroom_fullscreen(0);
	int lines = LINES, cols = COLS;
	endwin();
	delscreen(scr);
	sigaction(SIGWINCH, &old_winch, &nc_winch);
	have_nc_winch = 1;
	put_env_size(env_lines, env_cols, lines, cols);
	put_locale(ctype_was);
	gb_grid_free(&t->grid);
	gb_grid_free(&t->probe);
	free(t->pkey);
	free(t->pval);
	free(t->ckey);
	free(t->cval);
	tui_free_out(t);
	for (int i = 0; i < t->n_hist; i++)
		free(t->hist[i]);
	if (t->capf)
		fclose(t->capf);
	int rc = t->quit_all ? 1 : 0;
	free(t);
	open_now = 0;
	return rc;
}
