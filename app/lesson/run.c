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

#include "app/commands.h"
#include "app/lesson/lesson_int.h"
#include "viz/figure.h"

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
