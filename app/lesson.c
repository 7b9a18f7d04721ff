/* lesson.c — lessons: plain text files (lessons/README.md has the format) parsed into steps of
 * prose, commands, pauses and questions, and run through command_line exactly as if typed at
 * the prompt, so a lesson can use every command and shows the same figures.
 *
 * This file owns: the parser (errors as FILE:LINE: expected ...), the small arithmetic of
 * `calc:` answers, the runner (a student at a terminal steps, goes back, jumps, answers and is
 * scored; a script or pipe gets the whole lesson with the answers shown), the answer key, and
 * the export of a lesson's figures as numbered PNGs with a Markdown handout.
 *
 * Expected answers are never copied into a lesson: a question names how to compute its answer
 * (a command's figure or printed output, or arithmetic over the trace), and the runner
 * computes it when the question is reached, from the model in use. Commands that compute an
 * answer run with their output captured and the session put back as it was (text, trace,
 * engine, current figure), so asking a question never changes what the student sees. */
#include "app/lesson.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/commands.h"
#include "app/lesson/lesson_int.h"
#include "model/fileio.h"
#include "viz/cells.h"
#include "viz/export.h"
#include "viz/figure.h"
#include "viz/window.h"

/* ---- the runner ------------------------------------------------------------------------- */

/* Score of this glassbox session, over every lesson played. */
int session_right, session_asked;

static const char *var_get(runner *r, const char *name, size_t n)
{
	for (int i = r->n_vars - 1; i >= 0; i--)
		if (strlen(r->var_names[i]) == n && !strncmp(r->var_names[i], name, n))
			return r->var_vals[i];
	return NULL;
}

static void var_set(runner *r, const char *name, const char *val)
{
	for (int i = 0; i < r->n_vars; i++)
		if (!strcmp(r->var_names[i], name)) {
			free(r->var_vals[i]);
			r->var_vals[i] = strdup(val);
			return;
		}
	r->var_names = realloc(r->var_names, sizeof *r->var_names * (size_t)(r->n_vars + 1));
	r->var_vals = realloc(r->var_vals, sizeof *r->var_vals * (size_t)(r->n_vars + 1));
	r->var_names[r->n_vars] = strdup(name);
	r->var_vals[r->n_vars++] = strdup(val);
}

/* text with every $NAME of a computed value replaced (unknown names stay as written). */
char *subst(runner *r, const char *text)
{
	sb b = { 0 };
	for (const char *s = text; *s; s++) {
		if (*s == '$' && is_ident_start((unsigned char)s[1])) {
			size_t n = 0;
			while (is_ident((unsigned char)s[1 + n]))
				n++;
			const char *v = var_get(r, s + 1, n);
			if (v) {
				sb_puts(&b, v);
				s += n;
				continue;
			}
		}
		sb_add(&b, s, 1);
	}
	return sb_take(&b);
}

/* ---- showing text ---------------------------------------------------------------------- */

/* Wraps text at r->width after a first-line label (e.g. "Question 2: "); the lines after it
 * are indented by the label's width, so the text stands in one column. A list item ("- ...")
 * hangs the same way. */
void print_wrapped(runner *r, const char *text, const char *indent)
{
	int col = 0, first = 1, in = gb_utf8_width(indent);
	char *label = NULL;
	if (!*indent && starts(text, "- ")) {
		indent = label = strdup("- ");
		in = 2;
		text += 2;
	}
	const char *s = text;
	for (;;) {
		s = skip_space(s);
		if (!*s)
			break;
		const char *e = s;
		while (*e && !isspace((unsigned char)*e))
			e++;
		char *w = strndup(s, (size_t)(e - s));
		int ww = gb_utf8_width(w);
		if (first) {
			fputs(indent, stdout);
			col = in;
		} else if (col + 1 + ww > r->width) {
			printf("\n%*s", in, "");
			col = in;
		} else {
			putchar(' ');
			col++;
		}
		/* "Try:" marks what the student does by hand: it stands out on a terminal. */
		if (first && r->bold && !strcmp(w, "Try:"))
			printf("\033[1m%s\033[0m", w);
		else
			fputs(w, stdout);
		col += ww;
		first = 0;
		free(w);
		s = e;
	}
	if (!first)
		putchar('\n');
	free(label);
}

static void heading(runner *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void heading(runner *r, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	printf("\n%s%s%s\n", r->bold ? "\033[1m" : "", buf, r->bold ? "\033[0m" : "");
	int w = gb_utf8_width(buf);
	for (int i = 0; i < w && i < r->width; i++)
		fputs("\xe2\x94\x80", stdout);
	putchar('\n');
}

/* ---- the student's side ------------------------------------------------------------------ */

/* One line from stdin, pumping the window while waiting: -1 at the end of input or on Ctrl-C.
 * Bytes are read one at a time so nothing past the line is buffered (a pipe in tests holds
 * every answer at once). */
int read_line(session *s, char *buf, size_t cap)
{
	size_t n = 0;
	fflush(stdout);
	for (;;) {
		if (s->win) {
			struct pollfd p = { 0, POLLIN, 0 };
			int k = poll(&p, 1, 16);
			if (k == 0) {
				window_pump(s);
				continue;
			}
			if (k < 0 && errno == EINTR) {
				if (interrupted) {
					interrupted = 0;
					putchar('\n');
					return -1;
				}
				continue;
			}
		}
		char c;
		ssize_t k = read(0, &c, 1);
		if (k < 0 && errno == EINTR) {
			if (interrupted) {
				interrupted = 0;
				putchar('\n');
				return -1;
			}
			continue;
		}
		if (k <= 0) {
			if (n)
				break;
			return -1;
		}
		if (c == '\n')
			break;
		if (n + 1 < cap)
			buf[n++] = c;
	}
	while (n && isspace((unsigned char)buf[n - 1]))
		n--;
	buf[n] = 0;
	return 0;
}

/* For comparing tokens: the dot that stands for a space is a space, spaces and quotes around
 * do not count, nor does case. */
static char *norm_token(const char *t)
{
	sb b = { 0 };
	for (const char *s = t; *s; s++) {
		if ((unsigned char)s[0] == 0xc2 && (unsigned char)s[1] == 0xb7) {
			sb_puts(&b, " ");
			s++;
		} else {
			char c = (char)tolower((unsigned char)*s);
			sb_add(&b, &c, 1);
		}
	}
	char *x = sb_take(&b), *p = x;
	while (*p == ' ' || *p == '"' || *p == '\'')
		p++;
	size_t n = strlen(p);
	while (n && (p[n - 1] == ' ' || p[n - 1] == '"' || p[n - 1] == '\''))
		p[--n] = 0;
	memmove(x, p, n + 1);
	return x;
}

static int number_right(const question *q, double got, double want)
{
	double d = fabs(got - want);
	if (q->have_tol)
		return d <= (q->tol_rel ? q->tol * fabs(want) : q->tol) + 1e-12 * fabs(want);
	if (want == floor(want))
		return d < 1e-9;
	return d <= 0.01 * fabs(want);
}

static void result_line(runner *r, question *q, int right)
{
	r->qstate[q->index - 1] = right ? 1 : 2;
	r->asked++;
	session_asked++;
	if (right) {
		r->right++;
		session_right++;
	}
}

/* Asks until the answer is right, skipped, or missed three times. */
int ask(runner *r, question *q, const value *v, const char *shown)
{
	static const char *const forms[] = { "a letter", "a number", "a word or token" };
	int form = q->form == FORM_AUTO ? (v->is_num ? FORM_NUMBER : FORM_TOKEN) : q->form;
	int tries = 0, hint = 0;
	char line[512];
	for (;;) {
		printf("answer with %s (Enter skips, ? gives a hint, :COMMAND runs a command)> ", forms[form]);
		if (read_line(r->s, line, sizeof line))
			return STOP_LESSON;
		if (!line[0]) {
			printf("Skipped. The answer: %s\n", shown);
			result_line(r, q, 0);
			return GO_ON;
		}
		if (!strcmp(line, "?")) {
			if (hint < q->n_hints) {
				char *h = subst(r, q->hints[hint++]);
				print_wrapped(r, h, "Hint: ");
				free(h);
			} else
				printf("No more hints: Enter shows the answer.\n");
			continue;
		}
		if (line[0] == ':') {
			int rc = command_line(r->s, line + 1);
			if (rc > 0)
				return STOP_ALL;
			continue;
		}
		int right;
		if (form == FORM_CHOICE) {
			char c = (char)tolower((unsigned char)line[0]);
			if (!(c >= 'a' && c < 'a' + q->n_opts && (!line[1] || (line[1] == ')' && !line[2])))) {
				printf("Answer with a letter: ");
				for (int i = 0; i < q->n_opts; i++)
					printf("%s%c", i == 0 ? "" : i == q->n_opts - 1 ? " or " : ", ", 'a' + i);
				printf(".\n");
				continue;
			}
			right = c - 'a' + 1 == (int)lround(v->x);
		} else if (form == FORM_NUMBER) {
			double x;
			if (!parse_num(line, &x)) {
				printf("Answer with a number (for example 0.25 or 3).\n");
				continue;
			}
			right = number_right(q, x, v->x);
		} else {
			char *a = norm_token(line), *b = norm_token(v->text);
			right = !strcmp(a, b);
			free(a);
			free(b);
		}
		if (right) {
			printf("Right: %s\n", shown);
			result_line(r, q, 1);
			return GO_ON;
		}
		if (++tries >= 3) {
			printf("Not quite. The answer: %s\n", shown);
			result_line(r, q, 0);
			return GO_ON;
		}
		if (hint < q->n_hints) {
			char *h = subst(r, q->hints[hint++]);
			print_wrapped(r, h, "Not quite. Hint: ");
			free(h);
		} else
			printf("Not quite: try again.\n");
	}
}

/* ---- one step --------------------------------------------------------------------------- */

/* Commands and what they printed gather in one fenced block of the handout until something
 * else (prose, a figure, a question) comes; terminal escapes are dropped, long output cut. */
void md_code(runner *r, const char *cmd, const char *out)
{
	sb_printf(&r->code, "glassbox> %s\n", cmd);
	int lines = 0, skipped = 0;
	size_t start = r->code.n;
	for (const char *s = out ? out : ""; *s; s++) {
		if (*s == '\033') { /* CSI: ESC [ parameters, then a final byte in @..~ */
			if (s[1] == '[') {
				s += 2;
				while (*s && !(*s >= '@' && *s <= '~'))
					s++;
				if (!*s)
					break;
			}
			continue;
		}
		if (lines >= 40) {
			skipped += *s == '\n';
			continue;
		}
		sb_add(&r->code, s, 1);
		lines += *s == '\n';
	}
	if (r->code.n > start && r->code.s[r->code.n - 1] != '\n')
		sb_puts(&r->code, "\n");
	if (skipped)
		sb_printf(&r->code, "... (%d more lines)\n", skipped);
}

void md_flush(runner *r)
{
	r->last_item = 0;
	if (!r->code.n)
		return;
	sb_printf(&r->md, "```\n%s```\n\n", r->code.s);
	free(r->code.s);
	memset(&r->code, 0, sizeof r->code);
}

void md_para(runner *r, const char *text)
{
	/* A list's items are kept on consecutive lines; the blank line before the next paragraph
	 * ends the list. */
	int in_list = r->last_item && !r->code.n;
	md_flush(r);
	if (in_list && starts(text, "- ") && r->md.n >= 2 && r->md.s[r->md.n - 1] == '\n' && r->md.s[r->md.n - 2] == '\n')
		r->md.s[--r->md.n] = 0;
	if (starts(text, "Try:"))
		sb_printf(&r->md, "**Try:**%s\n\n", text + 4);
	else
		sb_printf(&r->md, "%s\n\n", text);
	r->last_item = starts(text, "- ");
}

void export_figure(runner *r, const char *cmd)
{
	char w[64], name[96], path[1200];
	first_word(cmd, w, sizeof w);
	const command *c = lookup(w);
	snprintf(name, sizeof name, r->n_figs + 1 < 100 ? "%02d-%s.png" : "%03d-%s.png", r->n_figs + 1, c ? c->name : w);
	snprintf(path, sizeof path, "%s/%s", r->dir, name);
	gb_export_opts o = { 0 };
	o.version = GLASSBOX_VERSION;
	o.force = 1;
	gb_verr err;
	if (gb_export(r->s->fig, path, &o, &err)) {
		errorf("lesson %s, step %d: %s", r->L->path, r->cur + 1, err.msg);
		r->failed++;
		return;
	}
	r->n_figs++;
	r->step_figs++;
	printf("step %d/%d: wrote %s\n", r->cur + 1, r->L->n_steps, name);
	fflush(stdout);
	md_code(r, cmd, NULL);
	md_flush(r);
	sb_puts(&r->md, "![");
	for (const char *t = r->s->fig->title ? r->s->fig->title : name; *t; t++) {
		if (*t == '[' || *t == ']' || *t == '\\')
			sb_puts(&r->md, "\\");
		sb_add(&r->md, t, 1);
	}
	sb_printf(&r->md, "](%s)\n\n", name);
}

static void run_command(runner *r, const item *it)
{
	char *cmd = subst(r, it->text);
	int show = r->mode == MODE_SHOW || (r->mode == MODE_PLAY && !r->replay);
	const need *nd = unmet_need(r->L, cmd);
	if (nd) {
		r->todo++;
		if (show)
			printf("glassbox> %s\n(not run: this needs the command '%s%s%s', which this glassbox does not have yet)\n",
			       cmd, nd->word, nd->opt ? " " : "", nd->opt ? nd->opt : "");
		if (r->mode == MODE_EXPORT)
		{
			char note[256];
			snprintf(note, sizeof note, "(not run: this needs the command '%s%s%s', which this glassbox does not have yet)\n",
			         nd->word, nd->opt ? " " : "", nd->opt ? nd->opt : "");
			md_code(r, cmd, note);
		}
		free(cmd);
		return;
	}
	if (show)
		printf("%sglassbox> %s%s\n", r->bold ? "\033[1m" : "", cmd, r->bold ? "\033[0m" : "");
	gb_figure *before = r->s->fig;
	int rc = captured(r, cmd, r->replay);
	if (show) {
		fputs(r->out, stdout);
		fflush(stdout);
	}
	if (rc < 0 && !r->replay) {
		r->failed++;
		errorf("lesson %s, step %d (line %d): '%s' failed; the lesson goes on", r->L->path, r->cur + 1, it->line, cmd);
	}
	if (r->mode == MODE_EXPORT) {
		if (rc >= 0 && r->s->fig && r->s->fig != before)
			export_figure(r, cmd);
		else if (rc >= 0)
			md_code(r, cmd, r->out);
	}
	free(cmd);
}

static void run_let(runner *r, const item *it)
{
	value v;
	char err[512];
	int rc = eval_answer(r, &it->let, &v, err, sizeof err);
	if (rc == -2) {
		r->todo++;
		var_set(r, it->text, "?");
		return;
	}
	if (rc) {
		if (!r->replay) {
			r->failed++;
			errorf("lesson %s, step %d (line %d): cannot compute $%s: %s", r->L->path, r->cur + 1, it->line, it->text, err);
		}
		var_set(r, it->text, "?");
		return;
	}
	var_set(r, it->text, v.text);
	free(v.text);
}

static int run_question(runner *r, const item *it)
{
	question *q = it->q;
	value v;
	char err[512], shown[600];
	int rc = GO_ON;
	if (r->replay)
		return GO_ON;
	int got = eval_answer(r, &q->ans, &v, err, sizeof err);
	if (!got && q->form == FORM_CHOICE)
		got = choice_of(q, &v, err, sizeof err);
	if (got == -2) {
		r->todo++;
		snprintf(shown, sizeof shown, "(not computed: %s)", err);
	} else if (got) {
		r->failed++;
		errorf("lesson %s, step %d (line %d): cannot compute the answer of question %d: %s", r->L->path, r->cur + 1,
		       q->line, q->index, err);
		snprintf(shown, sizeof shown, "(could not be computed: %s)", err);
	} else
		answer_text(q, &v, shown, sizeof shown);

	char *text = subst(r, q->text), label[32];
	snprintf(label, sizeof label, "Question %d: ", q->index);
	if (r->mode == MODE_ANSWERS) {
		printf("step %d question %d: %s\n", r->cur + 1, q->index, shown);
	} else if (r->mode == MODE_EXPORT) {
		md_flush(r);
		sb_printf(&r->md, "**Question %d.** %s\n\n", q->index, text);
		for (int i = 0; i < q->n_opts; i++) {
			char *o = subst(r, q->opts[i]);
			sb_printf(&r->md, "- **%c)** %s\n", 'a' + i, o);
			free(o);
		}
		if (q->n_opts)
			sb_puts(&r->md, "\n");
		for (int i = 0; i < q->n_hints; i++) {
			char *h = subst(r, q->hints[i]);
			sb_printf(&r->md, "*Hint:* %s\n\n", h);
			free(h);
		}
		sb_printf(&r->key, "%d. (step %d) %s\n", q->index, r->cur + 1, shown);
	} else {
		print_wrapped(r, text, label);
		for (int i = 0; i < q->n_opts; i++) {
			char *o = subst(r, q->opts[i]), ind[16];
			snprintf(ind, sizeof ind, "  %c) ", 'a' + i);
			print_wrapped(r, o, ind);
			free(o);
		}
		if (r->mode == MODE_SHOW || got) {
			if (r->mode == MODE_SHOW)
				for (int i = 0; i < q->n_hints; i++) {
					char *h = subst(r, q->hints[i]);
					print_wrapped(r, h, "  hint: ");
					free(h);
				}
			printf("  expected answer: %s\n", shown);
		} else if (r->qstate[q->index - 1])
			printf("(answered before: %s; the answer: %s)\n", r->qstate[q->index - 1] == 1 ? "right" : "missed", shown);
		else
			rc = ask(r, q, &v, shown);
		putchar('\n');
	}
	free(text);
	free(v.text);
	return rc;
}

/* Runs step i in the runner's mode. Returns GO_ON, or STOP_LESSON / STOP_ALL when the student
 * stopped at a pause or a question. */
int do_step(runner *r, int i)
{
	const step *st = &r->L->steps[i];
	int show = r->mode == MODE_SHOW || (r->mode == MODE_PLAY && !r->replay);
	r->cur = i;
	r->step_figs = 0;
	free(r->out);
	r->out = NULL;
	if (show)
		heading(r, "Step %d of %d: %s", i + 1, r->L->n_steps, st->heading);
	if (r->mode == MODE_EXPORT) {
		md_flush(r);
		sb_printf(&r->md, "## %d. %s\n\n", i + 1, st->heading);
	}
	for (int j = 0; j < st->n_items; j++) {
		const item *it = &st->items[j];
		char *t;
		int rc;
		switch (it->kind) {
		case IT_PROSE:
			t = subst(r, it->text);
			if (show) {
				print_wrapped(r, t, "");
				/* items of one list stay together */
				if (!(starts(t, "- ") && j + 1 < st->n_items && st->items[j + 1].kind == IT_PROSE &&
				      starts(st->items[j + 1].text, "- ")))
					putchar('\n');
			}
			if (r->mode == MODE_EXPORT)
				md_para(r, t);
			free(t);
			break;
		case IT_LITERAL:
			t = subst(r, it->text);
			for (const char *l = t; *l;) {
				const char *e = strchr(l, '\n');
				int n = e ? (int)(e - l) : (int)strlen(l);
				if (show)
					printf("    %.*s\n", n, l);
				if (r->mode == MODE_EXPORT) {
					md_flush(r);
					sb_printf(&r->md, "    %.*s\n", n, l);
				}
				l += n + (e ? 1 : 0);
			}
			if (show)
				putchar('\n');
			if (r->mode == MODE_EXPORT)
				sb_puts(&r->md, "\n");
			free(t);
			break;
		case IT_CMD:
			run_command(r, it);
			if (show)
				putchar('\n');
			break;
		case IT_PAUSE:
			if (r->mode == MODE_PLAY && !r->replay) {
				char line[64];
				printf("(Enter goes on, q stops the lesson) ");
				if (read_line(r->s, line, sizeof line) || !strcmp(line, "q"))
					return STOP_LESSON;
			}
			break;
		case IT_LET:
			run_let(r, it);
			break;
		case IT_QUESTION:
			if ((rc = run_question(r, it)) != GO_ON)
				return rc;
			break;
		}
	}
	if (r->mode == MODE_EXPORT && !r->step_figs) {
		printf("step %d/%d: no figure\n", i + 1, r->L->n_steps);
		fflush(stdout);
	}
	return GO_ON;
}

/* Shows step k as if every step before it had run: they run again quietly, so the model, the
 * text and the values of 'let' are what step k expects. */
int goto_step(runner *r, int k)
{
	r->replay = 1;
	for (int i = 0; i < k; i++)
		do_step(r, i);
	r->replay = 0;
	return do_step(r, k);
}

static void score_line(runner *r)
{
	if (!r->asked)
		return;
	printf("Score: %d of %d question%s right", r->right, r->asked, r->asked == 1 ? "" : "s");
	if (session_asked > r->asked)
		printf(" (this session: %d of %d)", session_right, session_asked);
	printf(".\n");
}

int play(runner *r)
{
	int n = r->L->n_steps, i = 0, rc, done = 0;
	char line[1024];
	char intro[600];
	snprintf(intro, sizeof intro, "%s: %d steps. At the end of each step: Enter (or n) goes on, b back, j N jumps, "
	         "r repeats, q stops; anything else runs as a command.", r->L->title, n);
	print_wrapped(r, intro, "");
	rc = do_step(r, 0);
	while (rc == GO_ON) {
		printf("[step %d/%d] Enter: next  b: back  j N: jump  r: again  q: quit  or a command> ", i + 1, n);
		if (read_line(r->s, line, sizeof line))
			break;
		if (!line[0] || !strcmp(line, "n")) {
			if (i + 1 >= n) {
				done = 1;
				break;
			}
			rc = do_step(r, ++i);
		} else if (!strcmp(line, "b")) {
			if (i == 0)
				printf("This is the first step.\n");
			else
				rc = goto_step(r, --i);
		} else if (line[0] == 'j' && (!line[1] || line[1] == ' ')) {
			char *end;
			long k = strtol(line + 1, &end, 10);
			if (end == line + 1 || *skip_space(end) || k < 1 || k > n)
				printf("Jump to a step from 1 to %d: j N\n", n);
			else
				rc = goto_step(r, i = (int)k - 1);
		} else if (!strcmp(line, "r")) {
			rc = goto_step(r, i);
		} else if (!strcmp(line, "q")) {
			break;
		} else if (!strcmp(line, "h") || !strcmp(line, "?")) {
			printf("Enter or n: the next step   b: the step before   j N: step N   r: this step again\n"
			       "q: leave the lesson   anything else: a glassbox command (e.g. attn 1 1, next, help)\n");
		} else if (command_line(r->s, line) > 0)
			rc = STOP_ALL;
	}
	if (rc == STOP_ALL)
		return 1;
	printf("%s%s\n", done ? "End of the lesson: " : "Left the lesson: ", r->L->title);
	score_line(r);
	return 0;
}

/* ---- exporting ---------------------------------------------------------------------------- */

static int mkdir_p(const char *dir)
{
	char *p = strdup(dir);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			mkdir(p, 0777);
			*s = '/';
		}
	int rc = mkdir(p, 0777) && errno != EEXIST ? -1 : 0;
	free(p);
	return rc;
}

/* What an earlier export wrote (NN-name.png, lesson.md) goes, so no stale slide survives. */
static void clean_export(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d))) {
		const char *n = e->d_name;
		size_t len = strlen(n);
		int ours = !strcmp(n, "lesson.md") ||
		           (len > 7 && isdigit((unsigned char)n[0]) && isdigit((unsigned char)n[1]) && strchr(n, '-') &&
		            !strcmp(n + len - 4, ".png"));
		if (ours) {
			char p[2048];
			snprintf(p, sizeof p, "%s/%s", dir, n);
			unlink(p);
		}
	}
	closedir(d);
}

int export_lesson(runner *r, int force)
{
	struct stat st;
	if (!stat(r->dir, &st)) {
		if (!S_ISDIR(st.st_mode)) {
			errorf("%s exists and is not a folder: choose another folder for the export", r->dir);
			return -1;
		}
		if (!force) {
			errorf("%s already exists: choose another folder, or add --force to replace its figures and handout", r->dir);
			return -1;
		}
		clean_export(r->dir);
	} else if (mkdir_p(r->dir)) {
		errorf("cannot create the folder %s: %s", r->dir, strerror(errno));
		return -1;
	}
	sb_printf(&r->md, "# %s\n\n*A glassbox lesson: %d steps, about %d minutes. Figures made by glassbox %s.*\n\n",
	          r->L->title, r->L->n_steps, lesson_minutes(r->L), GLASSBOX_VERSION);
	interrupted = 0;
	for (int i = 0; i < r->L->n_steps; i++) {
		if (interrupted) {
			printf("(stopped at step %d: the handout was not written)\n", i + 1);
			interrupted = 0;
			return -1;
		}
		do_step(r, i);
	}
	md_flush(r);
	if (r->key.n)
		sb_printf(&r->md, "## Answers\n\n%s", r->key.s);
	char path[2048];
	gb_err err;
	snprintf(path, sizeof path, "%s/lesson.md", r->dir);
	if (gb_write_file(path, r->md.s, r->md.n, &err)) {
		errorf("%s", err.msg);
		return -1;
	}
	printf("wrote %s (%d figure%s, %d question%s; cd %s && pandoc lesson.md -o lesson.pdf)\n", path, r->n_figs,
	       r->n_figs == 1 ? "" : "s", r->L->n_questions, r->L->n_questions == 1 ? "" : "s", r->dir);
	return r->failed ? -1 : 0;
}

/* ---- finding lessons -------------------------------------------------------------------- */

/* Beside the program (a build tree), in the installed data folder found from the program's
 * path, or in the configured one: the same places as the shipped models. */
static int lessons_dir(char *out, size_t cap)
{
	char exe[1024];
	struct stat st;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = 0;
		snprintf(out, cap, "%s/lessons", exe);
		if (!stat(out, &st) && S_ISDIR(st.st_mode))
			return 0;
		snprintf(out, cap, "%s/../share/glassbox/lessons", exe);
		if (!stat(out, &st) && S_ISDIR(st.st_mode))
			return 0;
	}
	snprintf(out, cap, "%s/lessons", GLASSBOX_DATADIR);
	return !stat(out, &st) && S_ISDIR(st.st_mode) ? 0 : -1;
}

static int is_lesson_file(const struct dirent *e)
{
	size_t n = strlen(e->d_name);
	return e->d_name[0] != '.' && n > 7 && !strcmp(e->d_name + n - 7, ".lesson");
}

/* The number a file name starts with, or -1. */
static int file_number(const char *name)
{
	return isdigit((unsigned char)name[0]) ? atoi(name) : -1;
}

static int list_lessons(void)
{
	char dir[1200];
	struct dirent **names;
	if (lessons_dir(dir, sizeof dir)) {
		printf("no lessons found (looked beside the program and in %s/lessons); 'lesson FILE' runs a file\n", GLASSBOX_DATADIR);
		return 0;
	}
	int n = scandir(dir, &names, is_lesson_file, alphasort);
	if (n <= 0) {
		printf("no lessons in %s; 'lesson FILE' runs a file\n", dir);
		return 0;
	}
	printf("Lessons (in %s):\n", dir);
	for (int i = 0; i < n; i++) {
		char path[2600], err[600];
		lesson L;
		snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
		int num = file_number(names[i]->d_name);
		char nb[16] = "";
		if (num >= 0)
			snprintf(nb, sizeof nb, "%d", num);
		if (lesson_parse(path, &L, err, sizeof err))
			printf("  %3s  %-50s (does not parse: %s)\n", nb, names[i]->d_name, err);
		else {
			char missing[256] = "";
			for (int k = 0; k < L.n_needs; k++)
				if (!need_met(&L.needs[k]))
					snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%s", missing[0] ? ", " : "  (needs ", L.needs[k].word);
			if (missing[0])
				snprintf(missing + strlen(missing), sizeof missing - strlen(missing), ")");
			/* Padded by display width, so a long or non-ASCII title does not shift the columns. */
			int w = gb_utf8_width(L.title);
			printf("  %3s  %s%*s %2d steps  %2d min%s\n", nb, L.title, w < 50 ? 50 - w : 0, "", L.n_steps,
			       lesson_minutes(&L), missing);
			lesson_free(&L);
		}
		free(names[i]);
	}
	free(names);
	printf("Start one with 'lesson N'; 'lesson N --export DIR' writes its figures and a handout.\n");
	if (session_asked)
		printf("Your score this session: %d of %d questions right.\n", session_right, session_asked);
	return 0;
}

/* A lesson argument: a file, a number (the file name's NN), or a unique part of a name. */
static int find_lesson(const char *arg, char *out, size_t cap)
{
	struct stat st;
	char dir[1200];
	if (strchr(arg, '/') || !stat(arg, &st)) {
		if (stat(arg, &st)) {
			errorf("no lesson file %s", arg);
			return -1;
		}
		snprintf(out, cap, "%s", arg);
		return 0;
	}
	if (lessons_dir(dir, sizeof dir)) {
		errorf("no lessons folder found: give a lesson file ('lesson path/to/file.lesson')");
		return -1;
	}
	struct dirent **names;
	int n = scandir(dir, &names, is_lesson_file, alphasort), hits = 0, num = -1;
	char list[512] = "";
	int digits = *arg && strspn(arg, "0123456789") == strlen(arg);
	if (digits)
		num = atoi(arg);
	for (int i = 0; i < n; i++) {
		const char *f = names[i]->d_name;
		if (digits ? file_number(f) == num : strstr(f, arg) != NULL) {
			if (!hits++)
				snprintf(out, cap, "%s/%s", dir, f);
			snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", list[0] ? ", " : "", f);
		}
		free(names[i]);
	}
	if (n > 0)
		free(names);
	if (hits == 1)
		return 0;
	if (hits > 1)
		errorf("'%s' names several lessons: %s", arg, list);
	else
		errorf("no lesson '%s': 'lesson' lists them", arg);
	return -1;
}

static void check_report(const lesson *L)
{
	static const char *const forms[] = { "choice", "number", "token", "number or token" };
	printf("%s: \"%s\": %d steps, %d commands, %d questions, about %d minutes\n", L->path, L->title, L->n_steps,
	       L->n_cmds, L->n_questions, lesson_minutes(L));
	for (int i = 0; i < L->n_steps; i++)
		for (int j = 0; j < L->steps[i].n_items; j++) {
			const question *q = L->steps[i].items[j].q;
			if (q)
				printf("  question %d (step %d, line %d): %s, %s%s\n", q->index, i + 1, q->line, forms[q->form],
				       q->ans.sel == SEL_LITERAL ? "literal" : "computed by ",
				       q->ans.sel == SEL_LITERAL ? "" : SELECTORS[q->ans.sel].name);
		}
	for (int i = 0; i < L->n_needs; i++)
		printf("  needs %s%s%s: %s\n", L->needs[i].word, L->needs[i].opt ? " " : "",
		       L->needs[i].opt ? L->needs[i].opt : "", need_met(&L->needs[i]) ? "present" : "missing");
	printf("  things to try by hand: %d\n", L->n_try);
}

/* While a lesson plays on a terminal, figures leave room for the prose above them. */
typedef struct term_env {
	char *cols, *lines;
	int set;
} term_env;

static void term_env_set(term_env *t, int cols, int rows)
{
	char buf[16];
	const char *c = getenv("COLUMNS"), *l = getenv("LINES");
	t->cols = c ? strdup(c) : NULL;
	t->lines = l ? strdup(l) : NULL;
	t->set = 1;
	snprintf(buf, sizeof buf, "%d", cols);
	setenv("COLUMNS", buf, 1);
	snprintf(buf, sizeof buf, "%d", rows > 28 ? rows - 12 : 16);
	setenv("LINES", buf, 1);
}

static void term_env_restore(term_env *t)
{
	if (!t->set)
		return;
	if (t->cols)
		setenv("COLUMNS", t->cols, 1);
	else
		unsetenv("COLUMNS");
	if (t->lines)
		setenv("LINES", t->lines, 1);
	else
		unsetenv("LINES");
	free(t->cols);
	free(t->lines);
}

int cmd_lesson(session *s, int argc, char **argv, const char *rest)
{
	static int running;
	const char *which = NULL, *dir = NULL;
	int force = 0, check = 0, answers = 0, inter = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--export") && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "--force"))
			force = 1;
		else if (!strcmp(argv[i], "--check"))
			check = 1;
		else if (!strcmp(argv[i], "--answers"))
			answers = 1;
		else if (!strcmp(argv[i], "--interactive"))
			inter = 1;
		else if (argv[i][0] != '-' && !which)
			which = argv[i];
		else {
			errorf("usage: lesson [N|NAME|FILE] [--export DIR [--force]] [--answers] [--check] [--interactive]");
			return -1;
		}
	}
	if (!which) {
		if (dir || force || check || answers || inter) {
			errorf("which lesson? 'lesson N --export DIR' (plain 'lesson' lists them)");
			return -1;
		}
		return list_lessons();
	}
	if (running) {
		errorf("a lesson is running: leave it first (q at the step prompt)");
		return -1;
	}
	if (force && !dir) {
		errorf("--force goes with --export DIR");
		return -1;
	}
	if ((dir != NULL) + check + answers > 1) {
		errorf("choose one of --export, --answers and --check");
		return -1;
	}
	char path[2048], err[1024];
	if (find_lesson(which, path, sizeof path))
		return -1;
	lesson L;
	if (lesson_parse(path, &L, err, sizeof err)) {
		errorf("%s", err);
		return -1;
	}
	if (check) {
		check_report(&L);
		lesson_free(&L);
		return 0;
	}
	runner r = { 0 };
	r.s = s;
	r.L = &L;
	r.dir = dir;
	r.mode = dir ? MODE_EXPORT : answers ? MODE_ANSWERS : (inter || (s->interactive && isatty(0))) ? MODE_PLAY : MODE_SHOW;
	r.tty = (r.mode == MODE_PLAY || r.mode == MODE_SHOW) && isatty(1);
	r.bold = r.tty && !getenv("NO_COLOR");
	r.qstate = calloc((size_t)L.n_questions + 1, sizeof *r.qstate);
	r.cap = tmpfile();
	struct winsize ws;
	const char *cols = getenv("COLUMNS");
	int tcols = 80, trows = 40;
	if (r.tty && !ioctl(1, TIOCGWINSZ, &ws) && ws.ws_col > 0) {
		tcols = ws.ws_col;
		trows = ws.ws_row;
	} else if (cols && atoi(cols) > 0)
		tcols = atoi(cols);
	r.width = tcols < 40 ? 40 : tcols > 100 ? 100 : tcols;
	term_env te = { 0 };
	if (r.tty)
		term_env_set(&te, tcols, trows);
	int rc = 0;
	running = 1;
	if (!r.cap) {
		errorf("cannot open a temporary file for the lesson: %s", strerror(errno));
		rc = -1;
	} else if (r.mode == MODE_EXPORT) {
		rc = export_lesson(&r, force);
	} else if (r.mode == MODE_PLAY) {
		rc = play(&r);
	} else {
		if (r.mode == MODE_SHOW)
			printf("%s%s%s (%d steps, about %d minutes)\n", r.bold ? "\033[1m" : "", L.title, r.bold ? "\033[0m" : "",
			       L.n_steps, lesson_minutes(&L));
		for (int i = 0; i < L.n_steps; i++)
			do_step(&r, i);
		rc = r.failed ? -1 : 0;
	}
	running = 0;
	term_env_restore(&te);
	if (r.todo && r.mode != MODE_PLAY)
		printf("(%d command%s or answer%s not run: %s glassbox does not have yet; 'lesson %s --check' lists them)\n",
		       r.todo, r.todo == 1 ? "" : "s", r.todo == 1 ? "" : "s", r.todo == 1 ? "it needs a command this" : "they need commands this", which);
	if (r.failed && r.mode != MODE_PLAY)
		errorf("lesson %s: %d command%s or answer%s failed (see above)", L.path, r.failed, r.failed == 1 ? "" : "s",
		       r.failed == 1 ? "" : "s");
	if (r.cap)
		fclose(r.cap);
	for (int i = 0; i < r.n_vars; i++) {
		free(r.var_names[i]);
		free(r.var_vals[i]);
	}
	free(r.var_names);
	free(r.var_vals);
	free(r.qstate);
	free(r.out);
	free(r.md.s);
	free(r.key.s);
	free(r.code.s);
	lesson_free(&L);
	return rc;
}
