/* answer.c — answers computed when the lesson runs. Expected answers are never copied into a
 * lesson: a question names how to compute its answer (a command's figure or printed output, or
 * arithmetic over the trace), and the runner computes it when the question is reached, from the
 * model in use. Commands that compute an answer run with their output captured and the session
 * put back as it was (text, trace, engine, display settings, current figure), so asking a
 * question never changes what the student sees.
 *
 * This file owns running a command with its output captured (the runner shows its commands'
 * output the same way), reading a figure or printed text, and the answer as the student is
 * shown it; state.c owns the snapshot that puts the session back. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/commands.h"
#include "app/lesson/lesson_int.h"
#include "viz/cells.h"
#include "viz/figure.h"
#include "viz/window.h"

/* A number as answers show it: whole numbers exactly, others with four significant digits. */
void fmt_num(double x, char *buf, size_t cap)
{
	if (x == floor(x) && fabs(x) < 1e15)
		snprintf(buf, cap, "%.0f", x);
	else
		snprintf(buf, cap, "%.4g", x);
}

/* Runs fn with stdout going into r->cap (and stderr to /dev/null when quiet_err), then keeps
 * what it printed in r->out. Figures drawn into the capture keep the terminal's colours and
 * size: the session's colour depth is pinned for the duration, the size comes from COLUMNS and
 * LINES (set by the runner while a lesson plays on a terminal). */
int captured(runner *r, const char *line, int quiet_err)
{
	session *s = r->s;
	int pinned = 0, saved_err = -1;
	if (r->tty && s->depth < 0) {
		s->depth = gb_term_depth(getenv("COLORTERM"), getenv("TERM"), getenv("NO_COLOR"), 1, 0);
		pinned = 1 + s->depth;
	}
	fflush(stdout);
	fflush(stderr);
	int fd = fileno(r->cap);
	if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET) < 0) {
		errorf("cannot capture a command's output: %s", strerror(errno));
		return -1;
	}
	int saved = dup(1);
	dup2(fd, 1);
	if (quiet_err) {
		int nul = open("/dev/null", O_WRONLY);
		saved_err = dup(2);
		if (nul >= 0) {
			dup2(nul, 2);
			close(nul);
		}
	}
	int rc = command_line(s, line);
	fflush(stdout);
	fflush(stderr);
	dup2(saved, 1);
	close(saved);
	if (saved_err >= 0) {
		dup2(saved_err, 2);
		close(saved_err);
	}
	if (pinned && s->depth == pinned - 1) /* unless the command itself was `set colors` */
		s->depth = -1;
	off_t len = lseek(fd, 0, SEEK_END);
	free(r->out);
	r->out = malloc(len > 0 ? (size_t)len + 1 : 1);
	size_t got = 0;
	if (len > 0 && lseek(fd, 0, SEEK_SET) == 0) {
		ssize_t k;
		while (got < (size_t)len && (k = read(fd, r->out + got, (size_t)len - got)) > 0)
			got += (size_t)k;
	}
	r->out[got] = 0;
	return rc;
}

static int fig_index(int v, int size, const char *what, char *err, size_t cap)
{
	int k = v < 0 ? v + size + 1 : v;
	if (k < 1 || k > size) {
		snprintf(err, cap, "%s %d is outside 1..%d", what, v, size);
		return -1;
	}
	return k - 1;
}

static int from_figure(const answer *a, const gb_figure *f, value *v, char *err, size_t cap)
{
	if (!f) {
		snprintf(err, cap, "there is no figure to read the answer from");
		return -1;
	}
	int heat = f->kind == GB_FIG_HEATMAP, bars = f->kind == GB_FIG_BARS || f->kind == GB_FIG_STRIP;
	if (f->kind == GB_FIG_LINES && a->sel == SEL_CELL) {
		/* a line plot: row R is its R-th series (the legend's order), column C its C-th point */
		int r = fig_index(a->a[0], f->n_series, "series", err, cap);
		int c = r < 0 ? -1 : fig_index(a->a[1], f->series[r].n, "point", err, cap);
		if (c < 0)
			return -1;
		char buf[64];
		v->is_num = 1;
		v->x = f->series[r].y[c];
		fmt_num(v->x, buf, sizeof buf);
		v->text = strdup(buf);
		return 0;
	}
	if (!heat && !bars) {
		snprintf(err, cap, "'%s' reads a heatmap or a bar chart (cell also a line plot), not this figure (%s)", SELECTORS[a->sel].name,
		         f->title ? f->title : "untitled");
		return -1;
	}
	if (a->sel == SEL_TOP) {
		if (!bars) {
			snprintf(err, cap, "'top' reads a bar chart (e.g. next); for a heatmap use 'argmax ROW'");
			return -1;
		}
		int n = f->rows * f->cols, k = a->a[0] > 0 ? a->a[0] : 1, *order = malloc(sizeof(int) * (size_t)n);
		if (k > n) {
			snprintf(err, cap, "top %d of a chart of %d bars", k, n);
			free(order);
			return -1;
		}
		for (int i = 0; i < n; i++)
			order[i] = i;
		for (int i = 0; i < k; i++) /* a partial selection: the k largest, in order */
			for (int j = i + 1; j < n; j++)
				if (f->values[order[j]] > f->values[order[i]]) {
					int t = order[i];
					order[i] = order[j];
					order[j] = t;
				}
		int idx = order[k - 1];
		free(order);
		v->text = strdup(f->col_labels ? f->col_labels[idx] : "");
		return 0;
	}
	int rows = bars ? 1 : f->rows;
	if (a->sel == SEL_CELL) {
		int r = fig_index(a->a[0], rows, "row", err, cap), c = r < 0 ? -1 : fig_index(a->a[1], f->cols, "column", err, cap);
		if (c < 0)
			return -1;
		char buf[64];
		v->is_num = 1;
		v->x = f->values[(size_t)r * f->cols + c];
		fmt_num(v->x, buf, sizeof buf);
		v->text = strdup(buf);
		return 0;
	}
	/* argmax ROW: the column label of the row's largest value */
	int r = fig_index(a->a[0], rows, "row", err, cap), best = -1;
	if (r < 0)
		return -1;
	for (int c = 0; c < f->cols; c++) {
		float x = f->values[(size_t)r * f->cols + c];
		if (isfinite(x) && (best < 0 || x > f->values[(size_t)r * f->cols + best]))
			best = c;
	}
	if (best < 0) {
		snprintf(err, cap, "row %d has no finite value", a->a[0]);
		return -1;
	}
	if (f->col_labels)
		v->text = strdup(f->col_labels[best]);
	else {
		char buf[16];
		snprintf(buf, sizeof buf, "%d", best + 1);
		v->text = strdup(buf);
	}
	return 0;
}

/* The printed lines (non-blank) and their words, for word, lines and best. */
static int text_lines(const char *text, char ***lines)
{
	int n = 0;
	*lines = NULL;
	for (const char *s = text; *s;) {
		const char *e = strchr(s, '\n');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		char *l = strndup(s, len);
		if (!is_blank(l)) {
			*lines = realloc(*lines, sizeof **lines * (size_t)(n + 1));
			(*lines)[n++] = l;
		} else
			free(l);
		s += len + (e ? 1 : 0);
	}
	return n;
}

static char *nth_word(const char *line, int w)
{
	char *words[256];
	int n = 0;
	const char *s = line;
	for (;;) {
		s = skip_space(s);
		if (!*s || n == 256)
			break;
		const char *e = s;
		while (*e && !isspace((unsigned char)*e))
			e++;
		words[n++] = strndup(s, (size_t)(e - s));
		s = e;
	}
	int k = w < 0 ? w + n : w - 1;
	char *out = k >= 0 && k < n ? strdup(words[k]) : NULL;
	for (int i = 0; i < n; i++)
		free(words[i]);
	return out;
}

static int from_text(const answer *a, const char *text, value *v, char *err, size_t cap)
{
	char **lines;
	int n = text_lines(text, &lines), rc = -1;
	if (a->sel == SEL_LINES) {
		char buf[32];
		snprintf(buf, sizeof buf, "%d", n);
		v->text = strdup(buf);
		rc = 0;
	} else if (a->sel == SEL_WORD) {
		int k = a->a[0] < 0 ? a->a[0] + n : a->a[0] - 1;
		if (k < 0 || k >= n)
			snprintf(err, cap, "line %d is outside the %d printed lines", a->a[0], n);
		else if (!(v->text = nth_word(lines[k], a->a[1])))
			snprintf(err, cap, "line %d has no word %d", a->a[0], a->a[1]);
		else
			rc = 0;
	} else { /* best V K: the line with the largest number as word V gives its word K */
		int bl = -1;
		double bx = 0, x;
		for (int i = 0; i < n; i++) {
			char *w = nth_word(lines[i], a->a[0]);
			if (w && parse_num(w, &x) && (bl < 0 || x > bx)) {
				bl = i;
				bx = x;
			}
			free(w);
		}
		if (bl < 0)
			snprintf(err, cap, "no printed line has a number as word %d", a->a[0]);
		else if (!(v->text = nth_word(lines[bl], a->a[1])))
			snprintf(err, cap, "the best line has no word %d", a->a[1]);
		else
			rc = 0;
	}
	for (int i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
	if (!rc && parse_num(v->text, &v->x))
		v->is_num = 1;
	return rc;
}

/* Computes an answer now, from the session as the lesson has left it. */
int eval_answer(runner *r, const answer *a, value *v, char *err, size_t cap)
{
	memset(v, 0, sizeof *v);
	err[0] = 0;
	if (a->sel == SEL_LITERAL) {
		v->text = subst(r, a->arg);
		v->is_num = parse_num(v->text, &v->x);
		return 0;
	}
	if (a->sel == SEL_CALC || a->sel == SEL_PICK) {
		char *e = subst_expr(r, a->arg), buf[64];
		int rc = calc_eval(r->s, e, &v->x, err, cap);
		free(e);
		if (rc)
			return -1;
		v->is_num = 1;
		fmt_num(v->x, buf, sizeof buf);
		v->text = strdup(buf);
		return 0;
	}
	int fig = SELECTORS[a->sel].figure;
	if (!a->arg[0]) {
		if (fig)
			return from_figure(a, r->s->fig, v, err, cap);
		return from_text(a, r->out ? r->out : "", v, err, cap);
	}
	char *cmd = subst(r, a->arg);
	const need *nd = unmet_need(r->L, cmd);
	if (nd) {
		snprintf(err, cap, "it needs the command '%s%s%s', which this glassbox does not have yet", nd->word,
		         nd->opt ? " " : "", nd->opt ? nd->opt : "");
		free(cmd);
		return -2;
	}
	snapshot sn;
	snap_take(r->s, &sn, 0);
	char *keep = r->out;
	r->out = NULL;
	int rc = captured(r, cmd, 0);
	if (rc < 0)
		snprintf(err, cap, "'%s' failed", cmd);
	else if (fig)
		rc = from_figure(a, r->s->fig, v, err, cap);
	else
		rc = from_text(a, r->out, v, err, cap);
	free(r->out);
	r->out = keep;
	snap_restore(r->s, &sn);
	free(cmd);
	return rc;
}

/* A token as the terminal and the handout show it: spaces as a middle dot. */
static void show_token(const char *raw, char *out, size_t cap)
{
	gb_label_display(raw, 60, out, cap);
}

/* The expected answer as shown to the student. */
void answer_text(const question *q, const value *v, char *out, size_t cap)
{
	char tok[256];
	if (q->form == FORM_CHOICE) {
		int k = (int)lround(v->x);
		if (q->ans.sel == SEL_LITERAL)
			k = v->text[0] - 'a' + 1;
		char *o = dot_spaces(q->opts[k - 1]);
		snprintf(out, cap, "%c) %s", 'a' + k - 1, o);
		free(o);
		return;
	}
	if (v->is_num && (q->form == FORM_NUMBER || q->form == FORM_AUTO)) {
		char n[64];
		fmt_num(v->x, n, sizeof n);
		if (q->have_tol && q->tol > 0)
			snprintf(out, cap, "%s (within %g%s)", n, q->tol_rel ? q->tol * 100 : q->tol, q->tol_rel ? "%" : "");
		else
			snprintf(out, cap, "%s", n);
		return;
	}
	show_token(v->text, tok, sizeof tok);
	snprintf(out, cap, "%s", tok);
}

/* A pick: or literal letter must name an option. */
int choice_of(const question *q, value *v, char *err, size_t cap)
{
	int k = q->ans.sel == SEL_LITERAL ? v->text[0] - 'a' + 1 : (int)lround(v->x);
	if (k < 1 || k > q->n_opts) {
		snprintf(err, cap, "the computed choice %s is not one of the %d options", v->text, q->n_opts);
		return -1;
	}
	v->x = k;
	return 0;
}
