/* parse.c — a lesson file (lessons/README.md has the format) read into steps of prose,
 * literal blocks, commands, pauses, lets and questions. Everything that can be checked before
 * anything runs is checked here, as FILE:LINE: expected ...: the commands exist (or are listed
 * under needs:), an answer's command only looks, a $NAME comes from a let above it, a calc:
 * expression parses, a question has an answer of a form its options allow.
 *
 * It also owns the command table as a lesson sees it: a command found without printing, and
 * whether a need is met by this glassbox. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/commands.h"
#include "app/lesson/lesson_int.h"
#include "model/fileio.h"

/* ---- a lesson in memory ------------------------------------------------------------------ */

const struct selector SELECTORS[] = {
	[SEL_LITERAL] = { "", 0, 0, -1 },     [SEL_CALC] = { "calc", 0, 0, -1 },
	[SEL_PICK] = { "pick", 0, 0, -1 },    [SEL_TOP] = { "top", 0, 1, 1 },
	[SEL_CELL] = { "cell", 2, 2, 1 },     [SEL_ARGMAX] = { "argmax", 1, 1, 1 },
	[SEL_WORD] = { "word", 2, 2, 0 },     [SEL_LINES] = { "lines", 0, 0, 0 },
	[SEL_BEST] = { "best", 2, 2, 0 },
};
#define N_SEL ((int)(sizeof SELECTORS / sizeof SELECTORS[0]))

static void answer_free(answer *a) { free(a->arg); }

void lesson_free(lesson *L)
{
	for (int i = 0; i < L->n_steps; i++) {
		step *st = &L->steps[i];
		for (int j = 0; j < st->n_items; j++) {
			item *it = &st->items[j];
			free(it->text);
			answer_free(&it->let);
			if (it->q) {
				question *q = it->q;
				free(q->text);
				for (int k = 0; k < q->n_opts; k++)
					free(q->opts[k]);
				free(q->opts);
				for (int k = 0; k < q->n_hints; k++)
					free(q->hints[k]);
				free(q->hints);
				for (int k = 0; k < q->n_also; k++)
					free(q->also[k]);
				free(q->also);
				answer_free(&q->ans);
				free(q->text_for);
				free(q);
			}
			if (it->ex) {
				expect_free(it->ex);
				free(it->ex);
			}
		}
		free(st->items);
		free(st->heading);
	}
	free(L->steps);
	for (int i = 0; i < L->n_needs; i++) {
		free(L->needs[i].word);
		free(L->needs[i].opt);
	}
	free(L->needs);
	for (int i = 0; i < L->n_vars; i++)
		free(L->vars[i]);
	free(L->vars);
	free(L->path);
	free(L->title);
	memset(L, 0, sizeof *L);
}

/* The estimate `lesson` lists: reading at 150 words a minute, half a minute to look at each
 * command's output (six seconds for the one number of a `calc EXPR`), three quarters of a
 * minute per question, a minute and a half per thing to try by hand. */
int lesson_minutes(const lesson *L)
{
	double m = L->n_words / 150.0 + 0.5 * L->n_cmds + 0.1 * L->n_nums + 0.75 * L->n_questions + 1.5 * L->n_try;
	return m < 1 ? 1 : (int)ceil(m);
}

/* ---- the command table, without printing ------------------------------------------- */

/* The table entry a word names, exactly or as a unique prefix; NULL (silently) otherwise. */
const command *lookup(const char *word)
{
	const command *hit = NULL;
	int n = 0;
	size_t len = strlen(word);
	if (!len)
		return NULL;
	for (const command *c = commands; c->name; c++) {
		if (!strcmp(c->name, word))
			return c;
		if (!strncmp(c->name, word, len)) {
			hit = c;
			n++;
		}
	}
	return n == 1 ? hit : NULL;
}

void first_word(const char *line, char *w, size_t cap)
{
	size_t n = 0;
	line = skip_space(line);
	while (line[n] && !isspace((unsigned char)line[n]) && n + 1 < cap) {
		w[n] = line[n];
		n++;
	}
	w[n] = 0;
}

/* 1 when line has the whole word w after its first word. */
static int has_word(const char *line, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = strstr(line, w); p; p = strstr(p + 1, w))
		if ((p == line || isspace((unsigned char)p[-1])) && (!p[n] || isspace((unsigned char)p[n])))
			return 1;
	return 0;
}

int need_met(const need *nd)
{
	const command *c;
	for (c = commands; c->name; c++)
		if (!strcmp(c->name, nd->word))
			break;
	if (!c->name)
		return 0;
	return !nd->opt || (c->usage && strstr(c->usage, nd->opt));
}

/* The unmet need a command line depends on, or NULL. */
const need *unmet_need(const lesson *L, const char *line)
{
	char w[64];
	first_word(line, w, sizeof w);
	for (int i = 0; i < L->n_needs; i++) {
		const need *nd = &L->needs[i];
		if (strcmp(nd->word, w) || (nd->opt && !has_word(line, nd->opt)))
			continue;
		if (!need_met(nd))
			return nd;
	}
	return NULL;
}

/* ---- the parser ------------------------------------------------------------------------ */

typedef struct parser {
	lesson *L;
	char *err;
	size_t cap;
	sb para;
	int para_line;
	sb lit;
	int lit_line;
	question *q;              /* the question being read, NULL outside one */
	int q_line, q_phase;      /* phase 0: its text, 1: its options, 2: after its answer */
} parser;

static int perr(parser *p, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int perr(parser *p, int line, const char *fmt, ...)
{
	int n = snprintf(p->err, p->cap, "%s:%d: ", p->L->path, line);
	va_list ap;
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < p->cap)
		vsnprintf(p->err + n, p->cap - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static item *add_item(parser *p, int kind, int line)
{
	step *st = &p->L->steps[p->L->n_steps - 1];
	if (st->n_items == st->cap) {
		st->cap = st->cap ? st->cap * 2 : 16;
		st->items = realloc(st->items, sizeof *st->items * (size_t)st->cap);
	}
	item *it = &st->items[st->n_items++];
	memset(it, 0, sizeof *it);
	it->kind = kind;
	it->line = line;
	return it;
}

static int count_words(const char *s)
{
	int n = 0;
	for (;;) {
		s = skip_space(s);
		if (!*s)
			return n;
		n++;
		while (*s && !isspace((unsigned char)*s))
			s++;
	}
}

static void flush_para(parser *p)
{
	if (!p->para.n)
		return;
	item *it = add_item(p, IT_PROSE, p->para_line);
	it->text = sb_take(&p->para);
	p->L->n_words += count_words(it->text);
	if (starts(it->text, "Try:"))
		p->L->n_try++;
}

static void flush_lit(parser *p)
{
	if (!p->lit.n)
		return;
	item *it = add_item(p, IT_LITERAL, p->lit_line);
	it->text = sb_take(&p->lit);
	p->L->n_words += count_words(it->text) / 2; /* tables and formulas are looked at, not read */
}

static int var_known(const lesson *L, const char *name, size_t n)
{
	for (int i = 0; i < L->n_vars; i++)
		if (strlen(L->vars[i]) == n && !strncmp(L->vars[i], name, n))
			return 1;
	return 0;
}

/* Every $NAME in text must come from a `let` above it. */
static int check_vars(parser *p, int line, const char *text)
{
	for (const char *s = strchr(text, '$'); s; s = strchr(s + 1, '$')) {
		size_t n = 0;
		while (is_ident((unsigned char)s[1 + n]))
			n++;
		if (!n || !is_ident_start((unsigned char)s[1]))
			return perr(p, line, "expected a name after '$' (a value from 'let NAME = ...')");
		if (!var_known(p->L, s + 1, n))
			return perr(p, line, "expected 'let %.*s = ...' above the first use of $%.*s", (int)n, s + 1, (int)n, s + 1);
	}
	return 0;
}

/* Replaces every $NAME by "1", for checking an expression's syntax before anything runs. */
static char *vars_as_one(const char *text)
{
	sb b = { 0 };
	for (const char *s = text; *s; s++) {
		if (*s == '$' && is_ident_start((unsigned char)s[1])) {
			while (is_ident((unsigned char)s[1]))
				s++;
			sb_puts(&b, "1");
		} else
			sb_add(&b, s, 1);
	}
	return sb_take(&b);
}

/* A command of the lesson (answer: it only computes an answer, so it must not change the
 * model or write files). */
static int check_cmd(parser *p, int line, const char *text, int answer)
{
	char w[64];
	first_word(text, w, sizeof w);
	if (!w[0])
		return perr(p, line, "expected a command after '>'");
	const command *c = lookup(w);
	if (!c) {
		for (int i = 0; i < p->L->n_needs; i++)
			if (!strcmp(p->L->needs[i].word, w))
				return check_vars(p, line, text);
		return perr(p, line, "expected a glassbox command: '%s' is not one ('help' lists them; a command glassbox "
		            "does not have yet goes under 'needs:' above the first step)", w);
	}
	if (!strcmp(c->name, "lesson") || !strcmp(c->name, "quit"))
		return perr(p, line, "expected a command other than '%s' inside a lesson", c->name);
	static const char *const writes[] = { "load", "init", "train", "eval", "window", "export", "dump", "bench", NULL };
	if (answer)
		for (int i = 0; writes[i]; i++)
			if (!strcmp(c->name, writes[i]))
				return perr(p, line, "expected a command that only looks: an answer's command must not load, "
				            "write or train ('%s')", c->name);
	return check_vars(p, line, text);
}

/* "= ..." or "let NAME = ...": a selector "NAME ARGS: REST", or else a literal. */
static int parse_answer(parser *p, int line, const char *text, answer *a, int is_let)
{
	memset(a, 0, sizeof *a);
	text = skip_space(text);
	if (!*text)
		return perr(p, line, "expected an answer after '='");
	const char *colon = strchr(text, ':');
	if (colon) {
		char head[128];
		size_t hn = (size_t)(colon - text);
		if (hn < sizeof head) {
			memcpy(head, text, hn);
			head[hn] = 0;
			char w[32];
			first_word(head, w, sizeof w);
			for (int k = 1; k < N_SEL; k++) {
				if (strcmp(w, SELECTORS[k].name))
					continue;
				const char *q = skip_space(head) + strlen(w);
				int n = 0;
				for (;;) {
					q = skip_space(q);
					if (!*q)
						break;
					char *end;
					long v = strtol(q, &end, 10);
					if (end == q || (*end && !isspace((unsigned char)*end)) || n == 2 || v == 0)
						return perr(p, line, "expected '%s' to be followed by %s%s then ':'", w,
						            SELECTORS[k].max_args ? "whole numbers (not 0)" : "nothing",
						            SELECTORS[k].max_args ? "," : "");
					a->a[n++] = (int)v;
					q = end;
				}
				if (n < SELECTORS[k].min_args || n > SELECTORS[k].max_args)
					return perr(p, line, "expected %d number%s after '%s'", SELECTORS[k].min_args,
					            SELECTORS[k].min_args == 1 ? "" : "s", w);
				if (k == SEL_TOP && n == 0)
					a->a[0] = 1;
				a->sel = k;
				a->arg = strdup(skip_space(colon + 1));
				if (k == SEL_CALC || k == SEL_PICK) {
					char err[256], *one;
					double v;
					if (!a->arg[0])
						return perr(p, line, "expected an expression after '%s:'", w);
					if (check_vars(p, line, a->arg))
						return -1;
					one = vars_as_one(a->arg);
					int rc = calc_eval(NULL, one, &v, err, sizeof err);
					free(one);
					if (rc)
						return perr(p, line, "%s", err);
					return 0;
				}
				if (a->arg[0])
					return check_cmd(p, line, a->arg, 1);
				return 0;
			}
		}
	}
	if (is_let)
		return perr(p, line, "expected 'let NAME = SELECTOR: ...' (calc, top, cell, argmax, word, lines or best)");
	a->sel = SEL_LITERAL;
	a->arg = strdup(text);
	return 0;
}

/* The question block ends: it must have its answer, in a form its options allow. */
static int end_question(parser *p, int line)
{
	question *q = p->q;
	if (!q)
		return 0;
	p->q = NULL;
	if (!q->have_ans)
		return perr(p, line, "expected '= ANSWER' for the question of line %d", q->line);
	/* text: runs the answer's command on that text; a figure or output already on show, or a
	 * written-out answer, would not be computed from it */
	if (q->text_for && (q->ans.sel == SEL_LITERAL || (q->ans.sel != SEL_CALC && q->ans.sel != SEL_PICK && !q->ans.arg[0])))
		return perr(p, q->text_line, "expected an answer computed by a command or calc with 'text:' (this one %s)",
		            q->ans.sel == SEL_LITERAL ? "is written out" : "reads what is already on show");
	if (q->n_opts) {
		if (q->ans.sel == SEL_LITERAL) {
			const char *a = q->ans.arg;
			if (!(a[0] >= 'a' && a[0] < 'a' + q->n_opts && !a[1]))
				return perr(p, q->line, "expected the answer of a choice question to be one of a..%c (or 'pick: EXPR')",
				            'a' + q->n_opts - 1);
		} else if (q->ans.sel != SEL_PICK)
			return perr(p, q->line, "expected the answer of a choice question to be a letter or 'pick: EXPR'");
		if (q->have_tol)
			return perr(p, q->line, "expected no '~ TOLERANCE' on a choice question");
		q->form = FORM_CHOICE;
		return 0;
	}
	double x;
	switch (q->ans.sel) {
	case SEL_PICK:
		return perr(p, q->line, "expected options (a) ... b) ...) for a 'pick:' answer");
	case SEL_CALC: case SEL_CELL: case SEL_LINES:
		q->form = FORM_NUMBER;
		break;
	case SEL_TOP: case SEL_ARGMAX:
		q->form = FORM_TOKEN;
		break;
	case SEL_LITERAL:
		q->form = parse_num(q->ans.arg, &x) ? FORM_NUMBER : FORM_TOKEN;
		break;
	default:
		q->form = FORM_AUTO;
	}
	if (q->have_tol && q->form == FORM_TOKEN)
		return perr(p, q->line, "expected a number answer with '~ TOLERANCE' (this answer is a word or token)");
	return 0;
}

static int parse_needs(parser *p, int line, const char *text)
{
	char *dup = strdup(text), *save = NULL;
	for (char *e = strtok_r(dup, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
		char w[64], o[64] = "";
		int n = sscanf(e, "%63s %63s", w, o);
		if (n < 1)
			continue;
		p->L->needs = realloc(p->L->needs, sizeof *p->L->needs * (size_t)(p->L->n_needs + 1));
		need *nd = &p->L->needs[p->L->n_needs++];
		nd->word = strdup(w);
		nd->opt = n == 2 ? strdup(o) : NULL;
		if (n == 2 && o[0] != '-') {
			free(dup);
			return perr(p, line, "expected 'needs: COMMAND [--OPTION], ...' (got '%s %s')", w, o);
		}
	}
	free(dup);
	return 0;
}

static int parse_line(parser *p, char *s, int line)
{
	lesson *L = p->L;
	if (starts(s, "//"))
		return 0;
	if (!L->title) {
		if (is_blank(s))
			return 0;
		if (!starts(s, "# ") || is_blank(s + 2))
			return perr(p, line, "expected '# TITLE' as the first line");
		L->title = strdup(skip_space(s + 2));
		return 0;
	}
	if (is_blank(s)) {
		flush_para(p);
		flush_lit(p);
		return end_question(p, line);
	}
	/* Indented lines keep their layout: tables, formulas, small matrices. */
	if ((starts(s, "    ") || s[0] == '\t') && L->n_steps && !p->q) {
		flush_para(p);
		if (!p->lit.n)
			p->lit_line = line;
		sb_puts(&p->lit, s[0] == '\t' ? s + 1 : s + 4);
		sb_puts(&p->lit, "\n");
		return 0;
	}
	flush_lit(p);
	if (starts(s, "== ")) {
		if (end_question(p, line))
			return -1;
		flush_para(p);
		if (is_blank(s + 3))
			return perr(p, line, "expected a heading after '=='");
		L->steps = realloc(L->steps, sizeof *L->steps * (size_t)(L->n_steps + 1));
		step *st = &L->steps[L->n_steps++];
		memset(st, 0, sizeof *st);
		st->heading = strdup(skip_space(s + 3));
		st->line = line;
		return 0;
	}
	if (starts(s, "needs:")) {
		if (L->n_steps)
			return perr(p, line, "expected 'needs:' before the first step");
		return parse_needs(p, line, s + 6);
	}
	if (starts(s, "# "))
		return perr(p, line, "expected one title: '# ' starts only the first line (a step starts with '== ')");
	if (!L->n_steps)
		return perr(p, line, "expected '== HEADING' to start the first step (or 'needs: ...')");
	if (s[0] == '>') {
		if (end_question(p, line))
			return -1;
		flush_para(p);
		const char *cmd = skip_space(s + 1);
		if (check_cmd(p, line, cmd, 0))
			return -1;
		add_item(p, IT_CMD, line)->text = strdup(cmd);
		const char *arg = starts(cmd, "calc ") ? skip_space(cmd + 5) : NULL;
		if (arg && !starts(arg, "softmax ") && !starts(arg, "layernorm "))
			L->n_nums++;
		else
			L->n_cmds++;
		return 0;
	}
	if (!strcmp(s, "...")) {
		if (end_question(p, line))
			return -1;
		flush_para(p);
		add_item(p, IT_PAUSE, line);
		return 0;
	}
	if (starts(s, "let ")) {
		if (end_question(p, line))
			return -1;
		flush_para(p);
		const char *q = skip_space(s + 4);
		size_t n = 0;
		while (is_ident((unsigned char)q[n]))
			n++;
		const char *eq = skip_space(q + n);
		if (!n || !is_ident_start((unsigned char)q[0]) || *eq != '=')
			return perr(p, line, "expected 'let NAME = SELECTOR: ...'");
		item *it = add_item(p, IT_LET, line);
		it->text = strndup(q, n);
		if (parse_answer(p, line, eq + 1, &it->let, 1))
			return -1;
		if (!var_known(L, q, n)) {
			L->vars = realloc(L->vars, sizeof *L->vars * (size_t)(L->n_vars + 1));
			L->vars[L->n_vars++] = strndup(q, n);
		}
		return 0;
	}
	if (s[0] == '?' && (s[1] == ' ' || !s[1])) {
		const char *t = skip_space(s + 1);
		if (p->q && p->q_phase == 0) {
			size_t n = strlen(p->q->text);
			p->q->text = realloc(p->q->text, n + strlen(t) + 2);
			snprintf(p->q->text + n, strlen(t) + 2, " %s", t);
			return 0;
		}
		if (end_question(p, line))
			return -1;
		flush_para(p);
		if (!*t)
			return perr(p, line, "expected the question's text after '?'");
		question *q = calloc(1, sizeof *q);
		q->text = strdup(t);
		q->line = line;
		q->index = ++L->n_questions;
		add_item(p, IT_QUESTION, line)->q = q;
		p->q = q;
		p->q_line = line;
		p->q_phase = 0;
		return 0;
	}
	if (p->q && p->q_phase <= 1 && s[0] >= 'a' && s[0] <= 'z' && s[1] == ')' && s[2] == ' ') {
		question *q = p->q;
		if (s[0] != 'a' + q->n_opts)
			return perr(p, line, "expected option '%c)' here", 'a' + q->n_opts);
		q->opts = realloc(q->opts, sizeof *q->opts * (size_t)(q->n_opts + 1));
		q->opts[q->n_opts++] = strdup(skip_space(s + 3));
		p->q_phase = 1;
		return 0;
	}
	if (s[0] == '=' && (s[1] == ' ' || !s[1])) {
		if (!p->q)
			return perr(p, line, "expected a question ('? ...') right above its answer");
		if (p->q->have_ans)
			return perr(p, line, "expected one answer per question");
		if (parse_answer(p, line, s + 1, &p->q->ans, 0))
			return -1;
		p->q->have_ans = 1;
		p->q_phase = 2;
		return 0;
	}
	if (s[0] == '~' && (s[1] == ' ' || !s[1])) {
		if (!p->q || !p->q->have_ans || p->q->have_tol)
			return perr(p, line, "expected '~ TOLERANCE' right after a question's '= ANSWER'");
		char *t = strdup(skip_space(s + 1));
		size_t n = strlen(t);
		int rel = n && t[n - 1] == '%';
		if (rel)
			t[--n] = 0;
		double x;
		int ok = parse_num(t, &x) && x >= 0;
		free(t);
		if (!ok)
			return perr(p, line, "expected a number (or a percentage such as 5%%) after '~'");
		p->q->have_tol = 1;
		p->q->tol_rel = rel;
		p->q->tol = rel ? x / 100 : x;
		return 0;
	}
	if (starts(s, "text:") && p->q) {
		question *q = p->q;
		const char *t = skip_space(s + 5);
		if (q->text_for)
			return perr(p, line, "expected one 'text:' per question");
		if (!*t)
			return perr(p, line, "expected the text the answer is computed on after 'text:'");
		if (check_vars(p, line, t))
			return -1;
		q->text_for = strdup(t);
		q->text_line = line;
		return 0;
	}
	if (starts(s, "expect:")) {
		if (end_question(p, line))
			return -1;
		flush_para(p);
		if (!L->n_steps)
			return perr(p, line, "expected '== HEADING' to start the first step (or 'needs: ...')");
		expect *ex = calloc(1, sizeof *ex);
		char err[256];
		item *it = add_item(p, IT_EXPECT, line);
		it->ex = ex;
		if (expect_parse(s + 7, ex, err, sizeof err))
			return perr(p, line, "%s", err);
		if (check_vars(p, line, ex->lhs) || (ex->rhs && check_vars(p, line, ex->rhs)))
			return -1;
		if (ex->kind == EX_CALC) {
			char *one = vars_as_one(ex->lhs);
			double v;
			int rc = calc_eval(NULL, one, &v, err, sizeof err);
			free(one);
			if (rc)
				return perr(p, line, "%s (in 'expect: %s')", err, ex->claim);
		}
		L->n_expects++;
		return 0;
	}
	if (starts(s, "hint:")) {
		if (!p->q)
			return perr(p, line, "expected a question above its hint");
		question *q = p->q;
		q->hints = realloc(q->hints, sizeof *q->hints * (size_t)(q->n_hints + 1));
		q->hints[q->n_hints++] = strdup(skip_space(s + 5));
		return 0;
	}
	if (starts(s, "also:") && p->q) {
		if (!p->q->have_ans)
			return perr(p, line, "expected a question and its '= ANSWER' above 'also:'");
		question *q = p->q;
		q->also = realloc(q->also, sizeof *q->also * (size_t)(q->n_also + 1));
		q->also[q->n_also++] = strdup(skip_space(s + 5));
		return 0;
	}
	if (p->q && !p->q->have_ans)
		return perr(p, line, "expected '= ANSWER' for the question of line %d (its lines start with '? ', 'a) ', "
		            "'= ', '~ ', 'text:', 'also:' or 'hint:')", p->q->line);
	if (p->q)
		return perr(p, line, "expected '~ ', 'text:', 'also:' or 'hint:' after a question's answer, or a blank line to end it");
	if (starts(s, "- "))
		flush_para(p); /* a list item is a paragraph of its own */
	if (!p->para.n)
		p->para_line = line;
	else
		sb_puts(&p->para, " ");
	sb_puts(&p->para, skip_space(s));
	return 0;
}

/* Reads and checks a lesson file; on failure err holds "FILE:LINE: expected ...". */
int lesson_parse(const char *path, lesson *L, char *err, size_t cap)
{
	memset(L, 0, sizeof *L);
	L->path = strdup(path);
	gb_err e;
	size_t len;
	char *text = gb_read_file(path, 4u << 20, &len, &e);
	if (!text) {
		snprintf(err, cap, "%s", e.msg);
		lesson_free(L);
		return -1;
	}
	if (strlen(text) != len) {
		snprintf(err, cap, "%s: expected a text file (it holds a NUL byte)", path);
		free(text);
		lesson_free(L);
		return -1;
	}
	parser p = { 0 };
	p.L = L;
	p.err = err;
	p.cap = cap;
	int line = 0, rc = 0;
	for (char *s = text; s && !rc;) {
		char *nl = strchr(s, '\n');
		if (nl)
			*nl = 0;
		line++;
		size_t n = strlen(s);
		while (n && isspace((unsigned char)s[n - 1]))
			s[--n] = 0;
		rc = parse_line(&p, s, line);
		s = nl ? nl + 1 : NULL;
	}
	if (!rc) {
		flush_para(&p);
		flush_lit(&p);
		rc = end_question(&p, line + 1);
	}
	if (!rc && !L->title)
		rc = perr(&p, line ? line : 1, "expected '# TITLE' as the first line");
	if (!rc && !L->n_steps)
		rc = perr(&p, line ? line : 1, "expected at least one step ('== HEADING')");
	free(p.para.s);
	free(p.lit.s);
	free(text);
	if (rc)
		lesson_free(L);
	return rc;
}
