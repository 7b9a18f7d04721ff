/* calc.c — the arithmetic of computed answers (`calc:` and `pick:`, lessons/README.md lists
 * the functions): numbers, + - * / ^, comparisons, functions of numbers, the trace's tensors
 * (t, dim, cosine) and the model's config (cfg). */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/lesson/lesson_int.h"

/* A recursive-descent evaluator. With s == NULL it only checks the syntax (the parser uses
 * it, so a broken expression is a FILE:LINE error before anything runs). Every way down (a
 * parenthesis, a function's arguments, a unary sign, the right side of ^) counts one level of
 * depth: a file's 50,000 '(' would otherwise overflow the stack. */
#define CALC_MAX_DEPTH 200

typedef struct calc {
	const char *p;
	session *s;
	int depth;
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

/* Enters one level; 0 past CALC_MAX_DEPTH (the error is set). */
static int c_down(calc *c)
{
	if (++c->depth <= CALC_MAX_DEPTH)
		return 1;
	cfail(c, "the expression is nested too deeply (more than %d levels of brackets, signs or powers)",
	      CALC_MAX_DEPTH);
	return 0;
}

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
		int arg = 0, smallest = !strcmp(fn, "argmin");
		for (int i = 0; i < n; i++) {
			sum += x[i];
			/* the first of equal values wins, as numpy's argmax does */
			if (smallest ? x[i] < best : x[i] > best) {
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
		if (!c_down(c))
			return NAN;
		double v = c_cmp(c);
		c->depth--;
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
		if (ceat(c, '(')) {
			if (!c_down(c))
				return NAN;
			double v = c_call(c, name);
			c->depth--;
			return v;
		}
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
	double b = c_primary(c), e;
	if (!ceat(c, '^'))
		return b;
	if (!c_down(c))
		return NAN;
	e = c_unary(c); /* right-associative: 2^3^2 = 2^9 */
	c->depth--;
	return pow(b, e);
}

static double c_unary(calc *c)
{
	int neg = 0;
	double v;
	if (ceat(c, '-'))
		neg = 1;
	else if (!ceat(c, '+'))
		return c_pow(c);
	if (!c_down(c))
		return NAN;
	v = c_unary(c);
	c->depth--;
	return neg ? -v : v;
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
int calc_eval(session *s, const char *expr, double *out, char *err, size_t cap)
{
	calc c = { expr, s, 0, "" };
	double v = c_cmp(&c);
	c.p = skip_space(c.p);
	if (!c.err[0] && *c.p)
		cfail(&c, "expected an operator or the end at '%.16s'", c.p);
	if (!c.err[0] && s && isnan(v))
		cfail(&c, "the expression gives no number (NaN)");
	/* 1/0 is inf: an answer nobody can type, so a lesson that computes it is wrong */
	if (!c.err[0] && s && isinf(v))
		cfail(&c, "the expression gives %s, not a finite number (a division by zero?)", v > 0 ? "inf" : "-inf");
	if (c.err[0]) {
		snprintf(err, cap, "%s", c.err);
		return -1;
	}
	*out = v;
	return 0;
}
