/* tui_cmd.c — the explorer's `:` line and what it runs: the line editor (history, Tab
 * completion from the command table), a command's run with stdout and stderr caught in a file
 * (so nothing writes behind ncurses) and its output kept for the overlay, and `e`, the PNG
 * export of the figure on show under a name that says what it is. */
#include "app/tui_int.h"

#include <curses.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wchar.h>

#include "app/commands.h"
#include "app/complete.h"
#include "app/views.h"
#include "viz/export.h"

/* Removes terminal escapes (the SGR colours of a figure a command drew) and carriage
 * returns, in place. */
static void strip_escapes(char *s)
{
	char *o = s;
	for (char *p = s; *p;) {
		if (*p == 27) {
			p++;
			if (*p == '[') {
				p++;
				while (*p && !(*p >= 0x40 && *p <= 0x7E))
					p++;
				if (*p)
					p++;
			} else if (*p == ']') { /* OSC: up to BEL or ST */
				while (*p && *p != 7 && !(p[0] == 27 && p[1] == '\\'))
					p++;
				if (*p == 7)
					p++;
				else if (*p)
					p += 2;
			} else if (*p)
				p++;
		} else if (*p == '\r')
			p++;
		else
			*o++ = *p++;
	}
	*o = 0;
}

static int blank_line(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return !*s;
}

/* "glassbox: " and "glassbox: -c command 1: " mean nothing on this screen. */
static const char *no_prefix(const char *s)
{
	if (!strncmp(s, "glassbox: ", 10))
		s += 10;
	return s;
}

void tui_free_out(tui *t)
{
	for (int i = 0; i < t->n_out; i++)
		free(t->out[i]);
	free(t->out);
	t->out = NULL;
	t->n_out = t->out_top = 0;
}

/* Splits text into t->out (trailing blank lines dropped). */
static void keep_out(tui *t, char *text)
{
	tui_free_out(t);
	int cap = 64;
	t->out = malloc(sizeof *t->out * (size_t)cap);
	for (char *p = text; p && *p;) {
		char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (t->n_out == cap)
			t->out = realloc(t->out, sizeof *t->out * (size_t)(cap *= 2));
		t->out[t->n_out] = malloc(len + 1);
		memcpy(t->out[t->n_out], p, len);
		t->out[t->n_out++][len] = 0;
		p = nl ? nl + 1 : NULL;
	}
	while (t->n_out && blank_line(t->out[t->n_out - 1]))
		free(t->out[--t->n_out]);
}

/* ---- what commands and views print goes to a file, not the screen -------------------- */

int tui_cap_begin(tui *t)
{
	fflush(stdout);
	fflush(stderr);
	if (!t->capf && !(t->capf = tmpfile()))
		return -1;
	int fd = fileno(t->capf);
	if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET) < 0)
		return -1;
	t->save1 = dup(1);
	t->save2 = dup(2);
	if (t->save1 < 0 || t->save2 < 0) {
		if (t->save1 >= 0)
			close(t->save1);
		if (t->save2 >= 0)
			close(t->save2);
		t->save1 = t->save2 = -1;
		return -1;
	}
	dup2(fd, 1);
	dup2(fd, 2);
	return 0;
}

/* Restores the terminal and returns what was written (malloc'd, escapes stripped; at most the
 * last 4 MB, which is more than any screen can show). */
char *tui_cap_end(tui *t)
{
	fflush(stdout);
	fflush(stderr);
	if (t->save1 < 0)
		return strdup("");
	dup2(t->save1, 1);
	dup2(t->save2, 2);
	close(t->save1);
	close(t->save2);
	t->save1 = t->save2 = -1;
	int fd = fileno(t->capf);
	off_t end = lseek(fd, 0, SEEK_END), from = end > (4 << 20) ? end - (4 << 20) : 0;
	if (end < 0)
		end = from = 0;
	char *buf = malloc((size_t)(end - from) + 1);
	ssize_t got = end > from ? pread(fd, buf, (size_t)(end - from), from) : 0;
	buf[got > 0 ? got : 0] = 0;
	for (ssize_t i = 0; i < got; i++)
		if (!buf[i] || buf[i] == '\t')
			buf[i] = ' ';
	strip_escapes(buf);
	return buf;
}

void tui_last_line(const char *text, char *out, size_t cap)
{
	const char *best = NULL, *p = text;
	size_t blen = 0;
	out[0] = 0;
	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		int blank = 1;
		for (size_t i = 0; i < len; i++)
			blank &= p[i] == ' ' || p[i] == '\t';
		if (!blank)
			best = p, blen = len;
		p = nl ? nl + 1 : NULL;
	}
	if (best) {
		if (blen >= cap)
			blen = cap - 1;
		memcpy(out, best, blen);
		out[blen] = 0;
		memmove(out, no_prefix(out), strlen(no_prefix(out)) + 1);
	}
}

/* ---- export, and the ':' line ---------------------------------------------------------------- */

/* glassbox-attn-L1-H2: what the figure is, so a folder of exports reads like a contents. */
static void export_base(const tui *t, char *out, size_t cap)
{
	session *s = t->s;
	int st = s->stage, l = s->layer, h = s->head;
	if (t->custom) {
		const char *tensor = NULL;
		for (int i = 0; i < t->fig->n_meta; i++)
			if (!strcmp(t->fig->meta_keys[i], "Tensor"))
				tensor = t->fig->meta_vals[i];
		snprintf(out, cap, "glassbox-%s", tensor ? tensor : "figure");
		for (char *p = out; *p; p++)
			if (*p == '/' || *p == ' ')
				*p = '_';
	} else if (t->zoom && st == ST_HEADS)
		snprintf(out, cap, "glassbox-heads-L%d-H%d", l, t->focus + 1);
	else if (t->zoom)
		snprintf(out, cap, "glassbox-%s-L%d-H%d-%d", stage_name(st), l, h, t->focus + 1);
	else if (uses_head(st) && st != ST_HEADS)
		snprintf(out, cap, "glassbox-%s-L%d-H%d", stage_name(st), l, h);
	else if (uses_layer(st))
		snprintf(out, cap, "glassbox-%s-L%d", stage_name(st), l);
	else
		snprintf(out, cap, "glassbox-%s", stage_name(st));
}

void tui_export_png(tui *t)
{
	if (!t->fig) {
		tui_set_msg(t, 1, "nothing to export: %s", t->err);
		return;
	}
	char base[200], path[256], title[1024], cwd[1024];
	export_base(t, base, sizeof base);
	struct stat st;
	int n = 1;
	for (; n < 10000; n++) { /* the next free number: an export never replaces another */
		if (n == 1)
			snprintf(path, sizeof path, "%s.png", base);
		else
			snprintf(path, sizeof path, "%s-%d.png", base, n);
		if (stat(path, &st) != 0 && errno == ENOENT)
			break;
	}
	gb_figure v = *t->fig;
	if (t->zoom && t->fig->kind == GB_FIG_GRID)
		tui_zoom_view(t, &v, title, sizeof title);
	gb_export_opts o = { 0 };
	o.version = GLASSBOX_VERSION;
	gb_verr err;
	tui_set_msg(t, 0, "writing %s...", path);
	tui_frame(t);
	if (gb_export(&v, path, &o, &err)) {
		tui_set_msg(t, 1, "export: %s", err.msg);
		return;
	}
	if (!getcwd(cwd, sizeof cwd))
		snprintf(cwd, sizeof cwd, ".");
	tui_set_msg(t, 0, "wrote %s in %s (1600x900 PNG)", path, cwd);
}

/* Whether the text, the model or the engine changed under a command. */
typedef struct snap {
	char *text;
	char dir[sizeof ((gb_model *)0)->dir];
	int loaded, have_run, n_ids;
	const gb_kernels *k;
} snap;

static void snap_take(session *s, snap *p)
{
	p->text = s->text ? strdup(s->text) : NULL;
	snprintf(p->dir, sizeof p->dir, "%s", s->loaded ? s->model.dir : "");
	p->loaded = s->loaded;
	p->have_run = s->have_run;
	p->n_ids = s->trace.n_ids;
	p->k = s->k;
}

static int snap_differs(session *s, const snap *p)
{
	int d = p->loaded != s->loaded || p->have_run != s->have_run || p->n_ids != s->trace.n_ids || p->k != s->k ||
	        strcmp(p->dir, s->loaded ? s->model.dir : "") || !p->text != !s->text || (p->text && strcmp(p->text, s->text));
	free(p->text);
	return d;
}

void tui_run_command(tui *t, const char *line)
{
	session *s = t->s;
	while (*line == ' ')
		line++;
	if (!*line)
		return;
	if (t->n_hist == HIST_N) {
		free(t->hist[0]);
		memmove(t->hist, t->hist + 1, sizeof *t->hist * (HIST_N - 1));
		t->n_hist--;
	}
	if (!t->n_hist || strcmp(t->hist[t->n_hist - 1], line))
		t->hist[t->n_hist++] = strdup(line);
	gb_figure *fig0 = s->fig;
	snap before;
	snap_take(s, &before);
	tui_set_msg(t, 0, "running: %s  (Ctrl-C stops a long command)", line);
	tui_frame(t);
	if (tui_cap_begin(t)) {
		tui_set_msg(t, 1, "cannot run '%s': no temporary file for its output (%s)", line, strerror(errno));
		free(before.text);
		return;
	}
	int rc = command_line(s, line);
	char *said = tui_cap_end(t);
	if (s->depth != t->sdepth) /* `set colors`: the explorer's colours follow the setting */
		tui_colours_init(t);
	interrupted = 0; /* a Ctrl-C was for the command, not for the explorer */
	int changed = snap_differs(s, &before);
	/* A view allocates its figure before the old one is freed, so a new s->fig is always a new
	 * address: the command drew a figure. */
	int drew = s->fig && s->fig != fig0;
	if (rc > 0)
		t->quit = t->quit_all = 1;
	if (drew) {
		/* A stage's figure (attn 1 2, next) is the stage on show; anything else (show NAME,
		 * model, pe DIMS) stays on show until a key picks a stage. */
		gb_figure *mine = s->fig, *st = NULL;
		if (s->loaded && s->have_run && tui_cap_begin(t) == 0) {
			st = view_stage(s);
			free(tui_cap_end(t));
		}
		t->custom = !(st && st->kind == mine->kind && st->title && mine->title && !strcmp(st->title, mine->title));
		gb_fig_free(st);
		t->fig = mine;
		t->err[0] = 0;
		t->zoom = 0;
		tui_remember(t);
		tui_fit_focus(t);
	} else if (t->custom && !changed && s->fig == t->made && t->fig == s->fig)
		; /* export, set, trace...: the command's figure stays */
	else {
		t->zoom = changed ? 0 : t->zoom;
		tui_rebuild(t);
	}
	keep_out(t, said);
	char last[1024];
	tui_last_line(said, last, sizeof last);
	if (rc < 0)
		tui_set_msg(t, 1, "%s", last[0] ? last : "the command failed");
	else if (drew)
		tui_set_msg(t, 0, "%s: %s", line, t->custom ? "its figure is on show (Tab returns to the stages)" : "done");
	else if (t->n_out > 2) {
		tui_clip(line, 60, t->out_title, sizeof t->out_title);
		t->show_out = 1;
		tui_set_msg(t, 0, "%s: %d lines of output (o shows them again)", line, t->n_out);
	} else if (t->n_out == 2 && !blank_line(t->out[0]))
		tui_set_msg(t, 0, "%s  |  %s", no_prefix(t->out[0]), last);
	else if (last[0])
		tui_set_msg(t, 0, "%s", last);
	else
		tui_set_msg(t, 0, "%s: done", line);
	free(said);
}

/* Tab in the ':' line: the prompt's completions, from the command table. */
static void complete_edit(tui *t)
{
	char line[EDIT_MAX * 4 + 8];
	size_t k = 0;
	mbstate_t ms;
	memset(&ms, 0, sizeof ms);
	for (int i = 0; i < t->epos; i++) {
		size_t r = wcrtomb(line + k, t->ebuf[i], &ms);
		if (r != (size_t)-1)
			k += r;
	}
	line[k] = 0;
	int start = (int)k;
	while (start > 0 && line[start - 1] != ' ')
		start--;
	char **c = complete_candidates(t->s, line, start, line + start);
	if (!c)
		return;
	int n = 0;
	while (c[n])
		n++;
	if (n > 0) {
		/* the longest common prefix, plus a space when it is the only candidate */
		size_t pl = strlen(c[0]);
		for (int i = 1; i < n; i++) {
			size_t j = 0;
			while (j < pl && c[i][j] == c[0][j])
				j++;
			pl = j;
		}
		char add[512];
		size_t have = k - (size_t)start;
		if (pl > have && pl - have < sizeof add - 2) {
			memcpy(add, c[0] + have, pl - have);
			add[pl - have] = 0;
		} else
			add[0] = 0;
		if (n == 1)
			strcat(add, " ");
		wchar_t w[512];
		size_t nw = mbstowcs(w, add, 511);
		if (nw != (size_t)-1 && t->elen + (int)nw < EDIT_MAX) {
			memmove(t->ebuf + t->epos + nw, t->ebuf + t->epos, sizeof(wchar_t) * (size_t)(t->elen - t->epos));
			memcpy(t->ebuf + t->epos, w, sizeof(wchar_t) * nw);
			t->epos += (int)nw;
			t->elen += (int)nw;
		}
		if (n > 1) {
			char list[1024] = "";
			for (int i = 0; i < n && strlen(list) < 900; i++)
				snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? "  " : "", c[i]);
			tui_set_msg(t, 0, "%s", list);
		}
	}
	for (int i = 0; i < n; i++)
		free(c[i]);
	free(c);
}

static void edit_set(tui *t, const char *s)
{
	size_t n = mbstowcs(t->ebuf, s, EDIT_MAX - 1);
	t->elen = t->epos = n == (size_t)-1 ? 0 : (int)n;
}

/* The ':' line: returns 1 with the command (UTF-8) in out, 0 when cancelled. */
int tui_read_command(tui *t, char *out, size_t cap)
{
	int hi = t->n_hist, dirty = 1;
	t->editing = 1;
	t->elen = t->epos = 0;
	t->msg[0] = 0;
	for (;;) {
		if (dirty)
			tui_frame(t);
		dirty = 1;
		timeout(t->s->win ? 16 : -1);
		wint_t ch;
		int r = tui_get_key(&ch);
		if (r == ERR) {
			if (interrupted) {
				interrupted = 0;
				break;
			}
			window_pump(t->s);
			dirty = tui_sync_window(t);
			continue;
		}
		if (r == KEY_CODE_YES) {
			switch (ch) {
			case KEY_LEFT: if (t->epos > 0) t->epos--; break;
			case KEY_RIGHT: if (t->epos < t->elen) t->epos++; break;
			case KEY_HOME: t->epos = 0; break;
			case KEY_END: t->epos = t->elen; break;
			case KEY_BACKSPACE:
				if (t->epos > 0) {
					memmove(t->ebuf + t->epos - 1, t->ebuf + t->epos, sizeof(wchar_t) * (size_t)(t->elen - t->epos));
					t->epos--, t->elen--;
				} else if (!t->elen)
					goto cancel; /* backspace on an empty line leaves it, as in vi */
				break;
			case KEY_DC:
				if (t->epos < t->elen) {
					memmove(t->ebuf + t->epos, t->ebuf + t->epos + 1, sizeof(wchar_t) * (size_t)(t->elen - t->epos - 1));
					t->elen--;
				}
				break;
			case KEY_UP:
				if (hi > 0)
					edit_set(t, t->hist[--hi]);
				break;
			case KEY_DOWN:
				if (hi < t->n_hist - 1)
					edit_set(t, t->hist[++hi]);
				else {
					hi = t->n_hist;
					t->elen = t->epos = 0;
				}
				break;
			case KEY_ENTER: goto done;
			default: break; /* resize and the rest: just redraw */
			}
			continue;
		}
		if (ch == '\r' || ch == '\n')
			goto done;
		if (ch == 27 || ch == 7) /* Esc, Ctrl-G */
			goto cancel;
		if (ch == 127 || ch == 8) {
			if (t->epos > 0) {
				memmove(t->ebuf + t->epos - 1, t->ebuf + t->epos, sizeof(wchar_t) * (size_t)(t->elen - t->epos));
				t->epos--, t->elen--;
			} else if (!t->elen)
				goto cancel;
		} else if (ch == 21) /* Ctrl-U */
			t->elen = t->epos = 0;
		else if (ch == 23) { /* Ctrl-W: the word before the cursor */
			int p = t->epos;
			while (p > 0 && t->ebuf[p - 1] == ' ')
				p--;
			while (p > 0 && t->ebuf[p - 1] != ' ')
				p--;
			memmove(t->ebuf + p, t->ebuf + t->epos, sizeof(wchar_t) * (size_t)(t->elen - t->epos));
			t->elen -= t->epos - p;
			t->epos = p;
		} else if (ch == 1)
			t->epos = 0;
		else if (ch == 5)
			t->epos = t->elen;
		else if (ch == '\t')
			complete_edit(t);
		else if (ch >= 32 && t->elen < EDIT_MAX - 1 && wcwidth((wchar_t)ch) >= 0) {
			memmove(t->ebuf + t->epos + 1, t->ebuf + t->epos, sizeof(wchar_t) * (size_t)(t->elen - t->epos));
			t->ebuf[t->epos++] = (wchar_t)ch;
			t->elen++;
		}
	}
cancel:
	t->editing = 0;
	t->msg[0] = 0;
	return 0;
done:
	t->editing = 0;
	t->msg[0] = 0;
	{
		size_t k = 0;
		mbstate_t ms;
		memset(&ms, 0, sizeof ms);
		for (int i = 0; i < t->elen && k + MB_CUR_MAX + 1 < cap; i++) {
			size_t r = wcrtomb(out + k, t->ebuf[i], &ms);
			if (r != (size_t)-1)
				k += r;
		}
		out[k] = 0;
	}
	return 1;
}
