/* run.c — one step of a lesson in the runner's mode, the same code for all four: shown
 * straight through (a script or a pipe: questions show their answers), played (a student at a
 * terminal answers), exported (figures and the handout), or the answer key. Commands run
 * through command_line exactly as if typed at the prompt, so a lesson can use every command
 * and shows the same figures. The values of `let` live in the runner; $NAME in any text is
 * replaced by them. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/classroom.h"
#include "app/commands.h"
#include "app/lesson/lesson_int.h"
#include "viz/figure.h"

static const char *var_get(runner *r, const char *name, size_t n, int exact)
{
	for (int i = r->n_vars - 1; i >= 0; i--)
		if (strlen(r->var_names[i]) == n && !strncmp(r->var_names[i], name, n))
			return exact && r->var_exact[i] ? r->var_exact[i] : r->var_vals[i];
	return NULL;
}

/* A let's value: as shown, and a number's full value for expressions (NULL for a word). */
static void var_set(runner *r, const char *name, const char *val, const value *v)
{
	char full[64];
	if (v && v->is_num)
		snprintf(full, sizeof full, "%.17g", v->x);
	int i;
	for (i = 0; i < r->n_vars && strcmp(r->var_names[i], name); i++)
		;
	if (i == r->n_vars) {
		r->var_names = realloc(r->var_names, sizeof *r->var_names * (size_t)(r->n_vars + 1));
		r->var_vals = realloc(r->var_vals, sizeof *r->var_vals * (size_t)(r->n_vars + 1));
		r->var_exact = realloc(r->var_exact, sizeof *r->var_exact * (size_t)(r->n_vars + 1));
		r->var_names[r->n_vars++] = strdup(name);
	} else {
		free(r->var_vals[i]);
		free(r->var_exact[i]);
	}
	r->var_vals[i] = strdup(val);
	r->var_exact[i] = v && v->is_num ? strdup(full) : NULL;
}

static char *subst_in(runner *r, const char *text, int exact)
{
	sb b = { 0 };
	for (const char *s = text; *s; s++) {
		if (*s == '$' && is_ident_start((unsigned char)s[1])) {
			size_t n = 0;
			while (is_ident((unsigned char)s[1 + n]))
				n++;
			const char *v = var_get(r, s + 1, n, exact);
			if (v) {
				/* a negative number inside an expression keeps its sign: 1 - $X */
				int paren = exact && v[0] == '-';
				if (paren)
					sb_puts(&b, "(");
				sb_puts(&b, v);
				if (paren)
					sb_puts(&b, ")");
				s += n;
				continue;
			}
		}
		sb_add(&b, s, 1);
	}
	return sb_take(&b);
}

/* text with every $NAME of a computed value replaced (unknown names stay as written). */
char *subst(runner *r, const char *text) { return subst_in(r, text, 0); }
char *subst_expr(runner *r, const char *text) { return subst_in(r, text, 1); }

/* Text the student reads (prose, a question, its options and hints): its values filled in,
 * a token's leading space as a dot. A command is run from subst alone: its ` the` stays a
 * space, which is what the command needs. */
char *subst_read(runner *r, const char *text)
{
	char *t = subst(r, text), *d = dot_spaces(t);
	free(t);
	return d;
}

void lesson_error(runner *r, int line, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	r->failed++;
	if (r->mode == MODE_CHECK)
		errorf("%s:%d: %s", r->L->path, line, msg);
	else
		errorf("%s:%d: %s (lesson step %d)", r->L->path, line, msg, r->cur + 1);
}

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

/* Commands that only show, never change what a lesson computes: not run when it is checked. */
static int display_only(const char *cmd)
{
	char w[64];
	first_word(cmd, w, sizeof w);
	const command *c = lookup(w);
	return c && (!strcmp(c->name, "window") || !strcmp(c->name, "tui"));
}

static void run_command(runner *r, const item *it)
{
	char *cmd = subst(r, it->text);
	int show = r->mode == MODE_SHOW || (r->mode == MODE_PLAY && !r->replay);
	if (r->mode == MODE_CHECK && display_only(cmd)) {
		free(cmd);
		return;
	}
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
	ids_copy ids;
	ids_take(r->s, &ids);
	r->s->drawn_at = -1;
	int rc = captured(r, cmd, r->replay || r->mode == MODE_CHECK);
	track_text(r, cmd, it->line, rc, &ids);
	ids_free(&ids);
	if (show) {
		fputs(r->out, stdout);
		fflush(stdout);
	}
	if (rc < 0 && !r->replay) {
		if (r->mode == MODE_CHECK)
			lesson_error(r, it->line, "'%s' failed", cmd);
		else {
			r->failed++;
			errorf("lesson %s, step %d (line %d): '%s' failed; the lesson goes on", r->L->path, r->cur + 1, it->line, cmd);
		}
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
	int rc = eval_at(r, &it->let, NULL, &v, err, sizeof err);
	if (rc == -2) {
		r->todo++;
		var_set(r, it->text, "?", NULL);
		return;
	}
	if (rc) {
		if (!r->replay)
			lesson_error(r, it->line, "cannot compute $%s: %s", it->text, err);
		var_set(r, it->text, "?", NULL);
		return;
	}
	if (v.is_num)
		var_set(r, it->text, v.text, &v);
	else {
		/* a token as the prose shows tokens: its space as a dot */
		char tok[256];
		gb_label_display(v.text, 60, tok, sizeof tok);
		var_set(r, it->text, tok, &v);
	}
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
	char *qtext = q->text_for ? subst(r, q->text_for) : NULL;
	int got = eval_at(r, &q->ans, qtext, &v, err, sizeof err);
	free(qtext);
	if (!got && q->form == FORM_CHOICE)
		got = choice_of(q, &v, err, sizeof err);
	if (got == -2) {
		r->todo++;
		snprintf(shown, sizeof shown, "(not computed: %s)", err);
	} else if (got) {
		lesson_error(r, q->line, "cannot compute the answer of question %d: %s", q->index, err);
		snprintf(shown, sizeof shown, "(could not be computed: %s)", err);
	} else {
		/* an option's text as the question showed it: its values filled in (L07's key read
		 * "b) at `$W1`" while the option read "at `When`") */
		answer_text(q, &v, shown, sizeof shown);
		int k = shown[0] - 'a';
		if (q->form == FORM_CHOICE && k >= 0 && k < q->n_opts) {
			char *o = subst_read(r, q->opts[k]);
			if (o)
				snprintf(shown, sizeof shown, "%c) %s", 'a' + k, o);
			free(o);
		}
	}

	char *text = subst_read(r, q->text), label[32];
	snprintf(label, sizeof label, "Question %d: ", q->index);
	if (r->mode == MODE_CHECK) {
		/* nothing to show: an error was reported above */
	} else if (r->mode == MODE_ANSWERS) {
		printf("step %d question %d: %s\n", r->cur + 1, q->index, shown);
	} else if (r->mode == MODE_EXPORT) {
		md_flush(r);
		sb_printf(&r->md, "**Question %d.** %s\n\n", q->index, text);
		for (int i = 0; i < q->n_opts; i++) {
			char *o = subst_read(r, q->opts[i]);
			sb_printf(&r->md, "- **%c)** %s\n", 'a' + i, o);
			free(o);
		}
		if (q->n_opts)
			sb_puts(&r->md, "\n");
		for (int i = 0; i < q->n_hints; i++) {
			char *h = subst_read(r, q->hints[i]);
			sb_printf(&r->md, "*Hint:* %s\n\n", h);
			free(h);
		}
		sb_printf(&r->key, "%d. (step %d) %s\n", q->index, r->cur + 1, shown);
	} else {
		print_wrapped(r, text, label);
		for (int i = 0; i < q->n_opts; i++) {
			char *o = subst_read(r, q->opts[i]), ind[16];
			snprintf(ind, sizeof ind, "  %c) ", 'a' + i);
			print_wrapped(r, o, ind);
			free(o);
		}
		if (r->mode == MODE_SHOW || got) {
			if (r->mode == MODE_SHOW)
				for (int i = 0; i < q->n_hints; i++) {
					char *h = subst_read(r, q->hints[i]);
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
	if (r->mode == MODE_SHOW || r->mode == MODE_PLAY) /* a class sees the step too */
		classroom_step(r->L->title, i + 1, r->L->n_steps, st->heading);
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
			t = subst_read(r, it->text);
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
		case IT_EXPECT:
			run_expect(r, it);
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
