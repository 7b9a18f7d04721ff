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
#include "model/fileio.h"
#include "viz/cells.h"
#include "viz/export.h"
#include "viz/figure.h"
#include "viz/window.h"

/* ---- growing strings ------------------------------------------------------------------ */

typedef struct sb {
	char *s;
	size_t n, cap;
} sb;

static void sb_add(sb *b, const char *t, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		while (b->n + n + 1 > b->cap)
			b->cap = b->cap ? b->cap * 2 : 128;
		b->s = realloc(b->s, b->cap);
	}
	memcpy(b->s + b->n, t, n);
	b->n += n;
	b->s[b->n] = 0;
}

static void sb_puts(sb *b, const char *t) { sb_add(b, t, strlen(t)); }

static void sb_printf(sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sb *b, const char *fmt, ...)
{
	va_list ap;
	char small[512];
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0)
		return; /* an encoding error: nothing sensible to add */
	if (n < (int)sizeof small) {
		sb_add(b, small, (size_t)n);
		return;
	}
	char *big = malloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb_add(b, big, (size_t)n);
	free(big);
}

/* The text so far (malloc'd, "" when empty); the builder starts over. */
static char *sb_take(sb *b)
{
	char *s = b->s ? b->s : strdup("");
	memset(b, 0, sizeof *b);
	return s;
}

static int is_blank(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return !*s;
}

static int starts(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }

static const char *skip_space(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

/* A whole string as a number (spaces around allowed). */
static int parse_num(const char *s, double *x)
{
	char *end;
	s = skip_space(s);
	if (!*s)
		return 0;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno == ERANGE)
		return 0;
	if (*skip_space(end))
		return 0;
	*x = v;
	return 1;
}

static int is_ident_start(int c) { return isalpha(c) || c == '_'; }
static int is_ident(int c) { return isalnum(c) || c == '_'; }

/* ---- a lesson in memory --------------------------------------------------------------- */

/* How an answer is found: a literal, arithmetic, or a selector over a command's figure or
 * printed text. */
enum { SEL_LITERAL, SEL_CALC, SEL_PICK, SEL_TOP, SEL_CELL, SEL_ARGMAX, SEL_WORD, SEL_LINES, SEL_BEST };

static const struct selector {
	const char *name;
	int min_args, max_args;
	int figure;               /* reads a figure (1) or printed text (0); -1: no command */
} SELECTORS[] = {
	[SEL_LITERAL] = { "", 0, 0, -1 },     [SEL_CALC] = { "calc", 0, 0, -1 },
	[SEL_PICK] = { "pick", 0, 0, -1 },    [SEL_TOP] = { "top", 0, 1, 1 },
	[SEL_CELL] = { "cell", 2, 2, 1 },     [SEL_ARGMAX] = { "argmax", 1, 1, 1 },
	[SEL_WORD] = { "word", 2, 2, 0 },     [SEL_LINES] = { "lines", 0, 0, 0 },
	[SEL_BEST] = { "best", 2, 2, 0 },
};
#define N_SEL ((int)(sizeof SELECTORS / sizeof SELECTORS[0]))

typedef struct answer {
	int sel;                  /* SEL_* */
	int a[2];                 /* the selector's numbers (1-based; negative counts from the end) */
	char *arg;                /* the literal, the expression, or the command ("": the current
	                           * figure, or the printed text of the step's last command) */
} answer;

/* What a student must type: a letter, a number, or a word/token; AUTO is decided by the
 * computed value (a `word` of printed text may be either). */
enum { FORM_CHOICE, FORM_NUMBER, FORM_TOKEN, FORM_AUTO };

typedef struct question {
	int line, index;          /* index: 1-based, counted through the lesson */
	char *text;
	char **opts;              /* (n_opts) the choices' texts, a) b) c) ... */
	int n_opts;
	answer ans;
	int have_ans;
	int have_tol, tol_rel;
	double tol;               /* absolute, or a fraction of the answer when tol_rel */
	char **hints;             /* (n_hints) one shown per wrong try */
	int n_hints;
	int form;
} question;

enum { IT_PROSE, IT_LITERAL, IT_CMD, IT_PAUSE, IT_QUESTION, IT_LET };

typedef struct item {
	int kind, line;
	char *text;               /* a paragraph, a literal block, a command line, or a let's name */
	answer let;
	question *q;
} item;

typedef struct step {
	char *heading;
	int line;
	item *items;              /* (n_items) in file order */
	int n_items, cap;
} step;

typedef struct need {
	char *word, *opt;         /* a command name and an option it must offer (or NULL) */
} need;

typedef struct lesson {
	char *path, *title;
	need *needs;
	int n_needs;
	step *steps;
	int n_steps;
	int n_questions, n_cmds, n_words, n_try;
	char **vars;              /* let names, in file order: a $NAME must be defined above it */
	int n_vars;
} lesson;

static void answer_free(answer *a) { free(a->arg); }

static void lesson_free(lesson *L)
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
				answer_free(&q->ans);
				free(q);
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
 * command's output, three quarters of a minute per question, a minute and a half per thing to
 * try by hand. */
static int lesson_minutes(const lesson *L)
{
	double m = L->n_words / 150.0 + 0.5 * L->n_cmds + 0.75 * L->n_questions + 1.5 * L->n_try;
	return m < 1 ? 1 : (int)ceil(m);
}

/* ---- the command table, without printing ------------------------------------------- */

/* The table entry a word names, exactly or as a unique prefix; NULL (silently) otherwise. */
static const command *lookup(const char *word)
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

static void first_word(const char *line, char *w, size_t cap)
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

static int need_met(const need *nd)
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
static const need *unmet_need(const lesson *L, const char *line)
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

/* ---- calc: the arithmetic of computed answers --------------------------------------- */

/* A recursive-descent evaluator. With s == NULL it only checks the syntax (the parser uses
 * it, so a broken expression is a FILE:LINE error before anything runs). */
typedef struct calc {
	const char *p;
	session *s;
	char err[256];
} calc;

static double cfail(calc *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static double cfail(calc *c, const char *fmt, ...)
{
	if (!c->err[0]) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(c->err, sizeof c->err, fmt, ap);
		va_end(ap);
	}
	return NAN;
}

static int ceat(calc *c, char ch)
{
	c->p = skip_space(c->p);
	if (*c->p == ch) {
		c->p++;
		return 1;
	}
	return 0;
}

static double c_cmp(calc *c);

/* Where the expression went wrong, for messages. */
static const char *c_at(const calc *c) { return *c->p ? c->p : "the end"; }

/* A trace tensor name or a config field: letters, digits, '_' and '.'. */
static int c_name(calc *c, char *out, size_t cap)
{
	size_t n = 0;
	c->p = skip_space(c->p);
	while ((is_ident(*c->p) || *c->p == '.') && n + 1 < cap)
		out[n++] = *c->p++;
	out[n] = 0;
	if (!n)
		cfail(c, "expected a name at '%.16s'", c->p);
	return n ? 0 : -1;
}

/* Converts a 1-based index (negative: from the end) into 0-based, or -1. */
static int c_index(calc *c, double v, int size, const char *what)
{
	int k = (int)lround(v);
	if (k < 0)
		k += size + 1;
	if (k < 1 || k > size) {
		cfail(c, "%s index %g is outside 1..%d", what, v, size);
		return -1;
	}
	return k - 1;
}

static const gb_ttensor *c_tensor(calc *c, const char *name)
{
	const gb_ttensor *t = c->s->have_run ? gb_trace_get(&c->s->trace, name) : NULL;
	if (!t)
		cfail(c, "no trace tensor '%s' (run a text first; 'trace' lists the names)", name);
	return t;
}

static double c_cfg(calc *c, const char *name)
{
	static const char *const names[] = { "n_layer", "n_enc_layer", "n_head", "n_kv_head", "d_head", "d_model",
	                                     "d_ffn", "vocab", "n_ctx", "window", "eps", "prenorm", "tied", "encdec",
	                                     "textbook", NULL };
	int i;
	for (i = 0; names[i] && strcmp(names[i], name); i++)
		;
	if (!names[i])
		return cfail(c, "expected a field of cfg(): n_layer, n_enc_layer, n_head, n_kv_head, d_head, d_model, d_ffn, "
		             "vocab, n_ctx, window, eps, prenorm, tied, encdec or textbook (not '%s')", name);
	if (!c->s)
		return 1;
	if (!c->s->loaded)
		return cfail(c, "cfg(%s) needs a model: load one first", name);
	const gb_config *g = &c->s->model.cfg;
	const double v[] = { g->n_layer, g->n_enc_layer, g->n_head, g->n_kv_head, g->d_head, g->d_model,
	                     g->d_ffn, g->vocab, g->n_ctx, g->window, g->norm_eps, g->prenorm, g->tied, g->encdec,
	                     c->s->textbook };
	return v[i];
}

#define C_MAXARGS 256

static double c_call(calc *c, const char *fn)
{
	double x[C_MAXARGS];
	int n = 0;
	char name[64];
	int tensor = !strcmp(fn, "t") || !strcmp(fn, "dim") || !strcmp(fn, "cosine");
	if (!strcmp(fn, "cfg")) {
		if (c_name(c, name, sizeof name))
			return NAN;
		if (!ceat(c, ')'))
			return cfail(c, "expected ')' after cfg(%s", name);
		return c_cfg(c, name);
	}
	if (tensor && c_name(c, name, sizeof name))
		return NAN;
	if (!(tensor ? ceat(c, ')') : ceat(c, ')'))) {
		if (tensor && !ceat(c, ','))
			return cfail(c, "expected ',' after the tensor name in %s(", fn);
		do {
			if (n == C_MAXARGS)
				return cfail(c, "expected at most %d arguments", C_MAXARGS);
			x[n++] = c_cmp(c);
		} while (ceat(c, ','));
		if (!ceat(c, ')'))
			return cfail(c, "expected ')' or ',' in %s( at '%.12s'", fn, c_at(c));
	}
	if (c->err[0])
		return NAN;

	static const struct { const char *name; double (*f)(double); } one[] = {
		{ "exp", exp }, { "ln", log }, { "log", log }, { "log10", log10 }, { "log2", log2 },
		{ "sqrt", sqrt }, { "abs", fabs }, { "sin", sin }, { "cos", cos }, { "tan", tan }, { "tanh", tanh },
		{ "floor", floor }, { "ceil", ceil },
	};
	for (size_t i = 0; i < sizeof one / sizeof one[0]; i++)
		if (!strcmp(fn, one[i].name)) {
			if (n != 1)
				return cfail(c, "expected one number in %s()", fn);
			return one[i].f(x[0]);
		}
	if (!strcmp(fn, "round")) {
		if (n < 1 || n > 2)
			return cfail(c, "expected round(x) or round(x, digits)");
		double p = n == 2 ? pow(10, x[1]) : 1;
		return round(x[0] * p) / p;
	}
	if (!strcmp(fn, "min") || !strcmp(fn, "max") || !strcmp(fn, "sum") || !strcmp(fn, "mean") ||
	    !strcmp(fn, "sd") || !strcmp(fn, "var") || !strcmp(fn, "argmax") || !strcmp(fn, "argmin")) {
		if (n < 1)
			return cfail(c, "expected at least one number in %s()", fn);
		double sum = 0, best = x[0];
		int arg = 0;
		for (int i = 0; i < n; i++) {
			sum += x[i];
			if ((fn[3] == 'm' ? x[i] < best : x[i] > best) && (!strcmp(fn, "argmin") || !strcmp(fn, "argmax"))) {
				best = x[i];
				arg = i;
			}
		}
		if (!strcmp(fn, "argmax") || !strcmp(fn, "argmin"))
			return arg + 1;
		if (!strcmp(fn, "sum"))
			return sum;
		double mean = sum / n, ss = 0, lo = x[0], hi = x[0];
		for (int i = 0; i < n; i++) {
			ss += (x[i] - mean) * (x[i] - mean);
			lo = x[i] < lo ? x[i] : lo;
			hi = x[i] > hi ? x[i] : hi;
		}
		/* population statistics, as layer norm uses them */
		return !strcmp(fn, "min") ? lo : !strcmp(fn, "max") ? hi : !strcmp(fn, "mean") ? mean
		     : !strcmp(fn, "var") ? ss / n : sqrt(ss / n);
	}
	if (!strcmp(fn, "softmax")) {
		if (n < 2)
			return cfail(c, "expected softmax(i, x1, x2, ...): the i-th entry of the softmax of x1, x2, ...");
		int i = c_index(c, x[0], n - 1, "softmax's");
		if (i < 0)
			return NAN;
		double m = -INFINITY, z = 0;
		for (int j = 1; j < n; j++)
			m = x[j] > m ? x[j] : m;
		for (int j = 1; j < n; j++)
			z += exp(x[j] - m);
		return exp(x[1 + i] - m) / z;
	}
	if (tensor) {
		if (!c->s)
			return 1;
		const gb_ttensor *t = c_tensor(c, name);
		if (!t)
			return NAN;
		if (!strcmp(fn, "dim")) {
			if (n != 1)
				return cfail(c, "expected dim(NAME, axis)");
			int a = c_index(c, x[0], t->ndim, "the axis");
			return a < 0 ? NAN : t->shape[a];
		}
		if (!strcmp(fn, "t")) {
			if (n != t->ndim)
				return cfail(c, "expected %d indices in t(%s, ...): the tensor has %d axes", t->ndim, name, t->ndim);
			size_t off = 0;
			for (int d = 0; d < t->ndim; d++) {
				int k = c_index(c, x[d], t->shape[d], gb_axis_name(t->axes[d]));
				if (k < 0)
					return NAN;
				off = off * (size_t)t->shape[d] + (size_t)k;
			}
			return t->data[off];
		}
		/* cosine(NAME, [slice,] row, row): the rows as vectors */
		if (t->ndim < 2 || n != t->ndim)
			return cfail(c, "expected cosine(%s, %sROW, ROW)", name, t->ndim == 3 ? "SLICE, " : "");
		int cols = t->shape[t->ndim - 1], rows = t->shape[t->ndim - 2];
		size_t base = 0;
		if (t->ndim == 3) {
			int k = c_index(c, x[0], t->shape[0], gb_axis_name(t->axes[0]));
			if (k < 0)
				return NAN;
			base = (size_t)k * rows * cols;
		}
		int i = c_index(c, x[n - 2], rows, "the row"), j = c_index(c, x[n - 1], rows, "the row");
		if (i < 0 || j < 0)
			return NAN;
		const float *u = t->data + base + (size_t)i * cols, *v = t->data + base + (size_t)j * cols;
		double uv = 0, uu = 0, vv = 0;
		for (int k = 0; k < cols; k++) {
			uv += (double)u[k] * v[k];
			uu += (double)u[k] * u[k];
			vv += (double)v[k] * v[k];
		}
		return uu > 0 && vv > 0 ? uv / sqrt(uu * vv) : 0;
	}
	return cfail(c, "expected a known function, not '%s' (lessons/README.md lists them)", fn);
}

static double c_primary(calc *c)
{
	c->p = skip_space(c->p);
	if (c->err[0])
		return NAN;
	if (ceat(c, '(')) {
		double v = c_cmp(c);
		if (!ceat(c, ')'))
			return cfail(c, "expected ')' at '%.12s'", c_at(c));
		return v;
	}
	if (isdigit((unsigned char)*c->p) || *c->p == '.') {
		char *end;
		double v = strtod(c->p, &end);
		if (end == c->p)
			return cfail(c, "expected a number at '%.12s'", c->p);
		c->p = end;
		return v;
	}
	if (is_ident_start((unsigned char)*c->p)) {
		char name[32];
		size_t n = 0;
		while (is_ident((unsigned char)*c->p) && n + 1 < sizeof name)
			name[n++] = *c->p++;
		name[n] = 0;
		if (ceat(c, '('))
			return c_call(c, name);
		if (!strcmp(name, "pi"))
			return M_PI;
		if (!strcmp(name, "e"))
			return M_E;
		if (!strcmp(name, "inf"))
			return INFINITY;
		return cfail(c, "expected a number, a function call or '(' (unknown name '%s'; values from 'let' are written $NAME)", name);
	}
	return cfail(c, "expected a number or '(' at '%.12s'", c_at(c));
}

static double c_unary(calc *c);

static double c_pow(calc *c)
{
	double b = c_primary(c);
	if (ceat(c, '^'))
		return pow(b, c_unary(c)); /* right-associative: 2^3^2 = 2^9 */
	return b;
}

static double c_unary(calc *c)
{
	if (ceat(c, '-'))
		return -c_unary(c);
	if (ceat(c, '+'))
		return c_unary(c);
	return c_pow(c);
}

static double c_term(calc *c)
{
	double v = c_unary(c);
	for (;;) {
		if (ceat(c, '*'))
			v *= c_unary(c);
		else if (ceat(c, '/'))
			v /= c_unary(c);
		else
			return v;
	}
}

static double c_sum(calc *c)
{
	double v = c_term(c);
	for (;;) {
		if (ceat(c, '+'))
			v += c_term(c);
		else if (ceat(c, '-'))
			v -= c_term(c);
		else
			return v;
	}
}

/* Comparisons give 1 or 0, so `pick: 1 + (x > y)` chooses between two options. */
static double c_cmp(calc *c)
{
	double a = c_sum(c);
	c->p = skip_space(c->p);
	static const char *const ops[] = { "<=", ">=", "==", "!=", "<", ">" };
	for (int i = 0; i < 6; i++)
		if (starts(c->p, ops[i])) {
			c->p += strlen(ops[i]);
			double b = c_sum(c);
			switch (i) {
			case 0: return a <= b;
			case 1: return a >= b;
			case 2: return a == b;
			case 3: return a != b;
			case 4: return a < b;
			default: return a > b;
			}
		}
	return a;
}

/* Evaluates expr (its $NAMEs already replaced); s NULL checks the syntax only. */
static int calc_eval(session *s, const char *expr, double *out, char *err, size_t cap)
{
	calc c = { expr, s, "" };
	double v = c_cmp(&c);
	c.p = skip_space(c.p);
	if (!c.err[0] && *c.p)
		cfail(&c, "expected an operator or the end at '%.16s'", c.p);
	if (!c.err[0] && s && isnan(v))
		cfail(&c, "the expression gives no number (NaN)");
	if (c.err[0]) {
		snprintf(err, cap, "%s", c.err);
		return -1;
	}
	*out = v;
	return 0;
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
	if (starts(s, "hint:")) {
		if (!p->q)
			return perr(p, line, "expected a question above its hint");
		question *q = p->q;
		q->hints = realloc(q->hints, sizeof *q->hints * (size_t)(q->n_hints + 1));
		q->hints[q->n_hints++] = strdup(skip_space(s + 5));
		return 0;
	}
	if (p->q && !p->q->have_ans)
		return perr(p, line, "expected '= ANSWER' for the question of line %d (its lines start with '? ', 'a) ', "
		            "'= ', '~ ' or 'hint:')", p->q->line);
	if (p->q)
		return perr(p, line, "expected '~ ' or 'hint:' after a question's answer, or a blank line to end it");
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
static int lesson_parse(const char *path, lesson *L, char *err, size_t cap)
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

/* ---- the runner ------------------------------------------------------------------------- */

enum { MODE_SHOW, MODE_PLAY, MODE_EXPORT, MODE_ANSWERS };

typedef struct runner {
	session *s;
	lesson *L;
	int mode;
	int tty;                  /* stdout is a terminal: figures keep its colours and size */
	int bold;                 /* headings in bold (a terminal without NO_COLOR) */
	int width;                /* prose wraps at this column */
	FILE *cap;                /* commands print here; the runner copies what is shown */
	char *out;                /* the printed text of the last command */
	char **var_names, **var_vals;
	int n_vars;
	int failed, todo;
	int cur;                  /* the step running, from 0 */
	int replay;               /* rebuilding the state of a step quietly: no questions */
	int *qstate;              /* per question: 0 not asked, 1 right, 2 missed or skipped */
	int right, asked;
	/* export */
	const char *dir;
	int n_figs, step_figs;
	sb md, key, code;
	int last_item;            /* the handout's last paragraph was a list item */
} runner;

/* Score of this glassbox session, over every lesson played. */
static int session_right, session_asked;

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
static char *subst(runner *r, const char *text)
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

/* A number as answers show it: whole numbers exactly, others with four significant digits. */
static void fmt_num(double x, char *buf, size_t cap)
{
	if (x == floor(x) && fabs(x) < 1e15)
		snprintf(buf, cap, "%.0f", x);
	else
		snprintf(buf, cap, "%.4g", x);
}

/* ---- running commands with their output captured ------------------------------------- */

/* Runs fn with stdout going into r->cap (and stderr to /dev/null when quiet_err), then keeps
 * what it printed in r->out. Figures drawn into the capture keep the terminal's colours and
 * size: the session's colour depth is pinned for the duration, the size comes from COLUMNS and
 * LINES (set by the runner while a lesson plays on a terminal). */
static int captured(runner *r, const char *line, int quiet_err)
{
	session *s = r->s;
	int pinned = 0, saved_err = -1;
	if (r->tty && s->depth < 0) {
		s->depth = gb_term_depth(getenv("COLORTERM"), getenv("TERM"), getenv("NO_COLOR"), 1, 0);
		pinned = 1;
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
	if (pinned)
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

/* What an answer's command may change, put back afterwards. */
typedef struct snapshot {
	int have_run, n_ids, n_tgt, stage, layer, head, tour, textbook;
	int *ids, *tgt;
	char *text, *target;
	const gb_kernels *k;
	gb_figure *fig;
} snapshot;

static int *dup_ids(const int *ids, int n)
{
	int *c = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
	if (n > 0)
		memcpy(c, ids, sizeof(int) * (size_t)n);
	return c;
}

static void snap_take(session *s, snapshot *sn)
{
	memset(sn, 0, sizeof *sn);
	sn->have_run = s->have_run;
	sn->n_ids = s->trace.n_ids;
	sn->n_tgt = s->trace.n_tgt;
	sn->ids = dup_ids(s->trace.ids, s->trace.n_ids);
	sn->tgt = dup_ids(s->trace.tgt, s->trace.n_tgt);
	sn->text = s->text ? strdup(s->text) : NULL;
	sn->target = s->target ? strdup(s->target) : NULL;
	sn->stage = s->stage, sn->layer = s->layer, sn->head = s->head, sn->tour = s->tour;
	sn->textbook = s->textbook;
	sn->k = s->k;
	/* Detached, so the command's own show() cannot free it: it comes back afterwards. */
	sn->fig = s->fig;
	s->fig = NULL;
}

static void snap_restore(session *s, snapshot *sn)
{
	int same = s->have_run == sn->have_run && s->k == sn->k && s->textbook == sn->textbook;
	if (same && sn->have_run)
		same = s->trace.n_ids == sn->n_ids && s->trace.n_tgt == sn->n_tgt &&
		       !memcmp(s->trace.ids, sn->ids, sizeof(int) * (size_t)sn->n_ids) &&
		       (!sn->n_tgt || !memcmp(s->trace.tgt, sn->tgt, sizeof(int) * (size_t)sn->n_tgt));
	s->k = sn->k;
	s->textbook = sn->textbook;
	if (!same && sn->have_run) {
		gb_err err;
		gb_fwd_opts o = { 0 };
		o.k = s->k;
		o.textbook_ln = s->textbook;
		s->have_run = !gb_forward(&s->model, sn->ids, sn->n_ids, s->model.cfg.encdec ? sn->tgt : NULL,
		                          s->model.cfg.encdec ? sn->n_tgt : 0, &s->trace, &o, &err);
		if (!s->have_run)
			errorf("lesson: cannot restore the text after computing an answer: %s", err.msg);
	} else if (!sn->have_run)
		s->have_run = 0;
	free(s->text);
	free(s->target);
	s->text = sn->text;
	s->target = sn->target;
	s->stage = sn->stage, s->layer = sn->layer, s->head = sn->head, s->tour = sn->tour;
	if (sn->fig) {
		gb_verr err;
		/* The window borrows the figure it shows: point it back before freeing the other. */
		if (s->win && gb_window_show(s->win, sn->fig, &err))
			errorf("window: %s", err.msg);
		gb_fig_free(s->fig);
		s->fig = sn->fig;
	}
	free(sn->ids);
	free(sn->tgt);
}

/* ---- answers ----------------------------------------------------------------------------- */

typedef struct value {
	int is_num;
	double x;
	char *text;               /* the number as shown, or the word/token's raw bytes */
} value;

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
	if (!heat && !bars) {
		snprintf(err, cap, "'%s' reads a heatmap or a bar chart, not this figure (%s)", SELECTORS[a->sel].name,
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
static int eval_answer(runner *r, const answer *a, value *v, char *err, size_t cap)
{
	memset(v, 0, sizeof *v);
	err[0] = 0;
	if (a->sel == SEL_LITERAL) {
		v->text = subst(r, a->arg);
		v->is_num = parse_num(v->text, &v->x);
		return 0;
	}
	if (a->sel == SEL_CALC || a->sel == SEL_PICK) {
		char *e = subst(r, a->arg), buf[64];
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
	snap_take(r->s, &sn);
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

/* ---- showing text ---------------------------------------------------------------------- */

/* Wraps text at r->width after a first-line label (e.g. "Question 2: "); the lines after it
 * are indented by the label's width, so the text stands in one column. A list item ("- ...")
 * hangs the same way. */
static void print_wrapped(runner *r, const char *text, const char *indent)
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

/* A token as the terminal and the handout show it: spaces as a middle dot. */
static void show_token(const char *raw, char *out, size_t cap)
{
	gb_label_display(raw, 60, out, cap);
}

/* The expected answer as shown to the student. */
static void answer_text(const question *q, const value *v, char *out, size_t cap)
{
	char tok[256];
	if (q->form == FORM_CHOICE) {
		int k = (int)lround(v->x);
		if (q->ans.sel == SEL_LITERAL)
			k = v->text[0] - 'a' + 1;
		snprintf(out, cap, "%c) %s", 'a' + k - 1, q->opts[k - 1]);
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
static int choice_of(const question *q, value *v, char *err, size_t cap)
{
	int k = q->ans.sel == SEL_LITERAL ? v->text[0] - 'a' + 1 : (int)lround(v->x);
	if (k < 1 || k > q->n_opts) {
		snprintf(err, cap, "the computed choice %s is not one of the %d options", v->text, q->n_opts);
		return -1;
	}
	v->x = k;
	return 0;
}

/* ---- the student's side ------------------------------------------------------------------ */

/* One line from stdin, pumping the window while waiting: -1 at the end of input or on Ctrl-C.
 * Bytes are read one at a time so nothing past the line is buffered (a pipe in tests holds
 * every answer at once). */
static int read_line(session *s, char *buf, size_t cap)
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

enum { GO_ON, STOP_LESSON, STOP_ALL };

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
static int ask(runner *r, question *q, const value *v, const char *shown)
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
static void md_code(runner *r, const char *cmd, const char *out)
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

static void md_flush(runner *r)
{
	r->last_item = 0;
	if (!r->code.n)
		return;
	sb_printf(&r->md, "```\n%s```\n\n", r->code.s);
	free(r->code.s);
	memset(&r->code, 0, sizeof r->code);
}

static void md_para(runner *r, const char *text)
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

static void export_figure(runner *r, const char *cmd)
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
static int do_step(runner *r, int i)
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
static int goto_step(runner *r, int k)
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

static int play(runner *r)
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

static int export_lesson(runner *r, int force)
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
