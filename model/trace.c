/* trace.c — trace storage (one reusable block per trace, so a run allocates nothing once the
 * trace has seen a run of the same size) and dumping to .npy and .csv. */
#include "model/trace.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/fileio.h"

static const char *axis_names[GB_AX_N] = { "token", "position", "head", "kv_head", "query", "key",
                                           "feature", "ffn", "vocab", "expert", "choice" };

const char *gb_axis_name(int a) { return a >= 0 && a < GB_AX_N ? axis_names[a] : "?"; }

static void lazy_drop(gb_trace *tr)
{
	if (tr->lazy && tr->lazy_free)
		tr->lazy_free(tr->lazy);
	tr->lazy = NULL;
	tr->lazy_fetch = NULL;
	tr->lazy_slice = NULL;
	tr->lazy_free = NULL;
	tr->lazy_bytes = NULL;
}

void gb_trace_reset(gb_trace *tr)
{
	lazy_drop(tr);
	gb_trace_arena_free(tr);
	/* The last run tells us how big the block should be: grown when it spilled, shrunk when
	 * a large block (over 64 MB) served a run that used less than a quarter of it (a short
	 * run after a long one). */
	if (tr->n_spill || tr->used > tr->want || (tr->used && tr->size > ((size_t)16 << 20) && tr->used < tr->size / 4))
		tr->want = tr->used;
	for (int i = 0; i < tr->n_spill; i++)
		free(tr->spill[i]);
	tr->n_spill = 0;
	tr->spilled = 0;
	if (tr->want > tr->size || tr->want + tr->want / 4 < tr->size / 4) {
		free(tr->block);
		/* aligned_alloc wants a size that is a multiple of the alignment (16 floats). */
		tr->size = (tr->want + tr->want / 4 + 15) & ~(size_t)15;
		tr->block = tr->size ? aligned_alloc(64, tr->size * sizeof(float)) : NULL;
		if (!tr->block)
			tr->size = 0;
	}
	tr->used = 0;
	tr->n = 0;
	tr->pos0 = 0;
	tr->truncated = 0;
	tr->tail_logits = NULL;
}

void gb_trace_free(gb_trace *tr)
{
	lazy_drop(tr);
	gb_trace_arena_free(tr);
	for (int i = 0; i < tr->n_spill; i++)
		free(tr->spill[i]);
	free(tr->spill);
	free(tr->aspill);
	free(tr->block);
	free(tr->t);
	free(tr->ids);
	free(tr->tgt);
	memset(tr, 0, sizeof *tr);
}

static float *push_alloc(float ***list, int *n, int *cap, size_t floats)
{
	if (*n == *cap) {
		int c = *cap ? 2 * *cap : 16;
		float **s = realloc(*list, (size_t)c * sizeof *s);
		if (!s)
			return NULL;
		*list = s;
		*cap = c;
	}
	float *p = aligned_alloc(64, floats * sizeof(float));
	if (p)
		(*list)[(*n)++] = p;
	return p;
}

static float *arena_alloc(gb_trace *tr, size_t r)
{
	if (tr->arena_used + r <= tr->arena_size) {
		float *p = tr->arena + tr->arena_used;
		tr->arena_used += r;
		return p;
	}
	tr->arena_used += r; /* counted so the next layer's arena fits */
	return push_alloc(&tr->aspill, &tr->n_aspill, &tr->cap_aspill, r);
}

/* Rounds every allocation to 16 floats, so each tensor starts 64-byte aligned. */
static float *alloc_floats(gb_trace *tr, size_t n)
{
	size_t r = (n + 15) & ~(size_t)15;
	if (tr->in_arena)
		return arena_alloc(tr, r);
	if (tr->used + r <= tr->size) {
		float *p = tr->block + tr->used;
		tr->used += r;
		return p;
	}
	tr->used += r; /* counted so the next reset sizes the block to fit */
	float *p = push_alloc(&tr->spill, &tr->n_spill, &tr->cap_spill, r);
	if (p)
		tr->spilled += r;
	return p;
}

float *gb_trace_scratch(gb_trace *tr, size_t n) { return alloc_floats(tr, n); }

/* vsnprintf for tensor names: %s and %d by hand (a forward pass names a hundred tensors, and
 * vsnprintf's setup cost them 1.5% of a tiny model's run, all of it on one thread), anything
 * else through vsnprintf. */
static void name_format(char *dst, size_t cap, const char *fmt, va_list ap)
{
	va_list ap2;
	size_t n = 0;
	va_copy(ap2, ap);
	for (const char *p = fmt; *p; p++) {
		char num[16];
		const char *s;
		if (*p != '%') {
			if (n + 1 < cap)
				dst[n++] = *p;
			continue;
		}
		if (p[1] == 's') {
			s = va_arg(ap2, const char *);
		} else if (p[1] == 'd') {
			int v = va_arg(ap2, int), i = (int)sizeof num - 1;
			unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
			num[i] = 0;
			do
				num[--i] = (char)('0' + u % 10);
			while ((u /= 10) != 0);
			if (v < 0)
				num[--i] = '-';
			s = num + i;
		} else if (p[1] == '%') {
			s = "%";
		} else {
			va_end(ap2);
			vsnprintf(dst, cap, fmt, ap);
			return;
		}
		for (; *s; s++)
			if (n + 1 < cap)
				dst[n++] = *s;
		p++;
	}
	va_end(ap2);
	if (cap)
		dst[n] = 0;
}

static gb_ttensor *new_entry(gb_trace *tr, const char *fmt, va_list ap)
{
	if (tr->n == tr->cap) {
		int cap = tr->cap ? 2 * tr->cap : 256;
		gb_ttensor *t = realloc(tr->t, (size_t)cap * sizeof *t);
		if (!t)
			return NULL;
		tr->t = t;
		tr->cap = cap;
	}
	gb_ttensor *t = &tr->t[tr->n++];
	name_format(t->name, sizeof t->name, fmt, ap);
	t->group = 0;
	return t;
}

float *gb_trace_addv(gb_trace *tr, int ndim, const int *shape, const unsigned char *axes, const char *fmt, va_list ap)
{
	gb_ttensor *t = new_entry(tr, fmt, ap);
	if (!t)
		return NULL;
	t->ndim = ndim;
	t->n = 1;
	for (int i = 0; i < ndim; i++) {
		t->shape[i] = shape[i];
		t->axes[i] = axes[i];
		t->n *= (size_t)shape[i];
	}
	t->data = alloc_floats(tr, t->n);
	if (!t->data)
		tr->n--;
	return t->data;
}

float *gb_trace_add(gb_trace *tr, int ndim, const int *shape, const unsigned char *axes, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	float *p = gb_trace_addv(tr, ndim, shape, axes, fmt, ap);
	va_end(ap);
	return p;
}

int gb_trace_aliasv(gb_trace *tr, const gb_ttensor *src, const char *fmt, va_list ap)
{
	gb_ttensor copy = *src; /* src may move when the table grows */
	gb_ttensor *t = new_entry(tr, fmt, ap);
	if (!t)
		return -1;
	char name[sizeof t->name];
	memcpy(name, t->name, sizeof name);
	*t = copy;
	memcpy(t->name, name, sizeof name);
	return 0;
}

int gb_trace_alias(gb_trace *tr, const gb_ttensor *src, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = gb_trace_aliasv(tr, src, fmt, ap);
	va_end(ap);
	return rc;
}

const gb_ttensor *gb_trace_at(const gb_trace *tr, int i)
{
	if (i < 0 || i >= tr->n)
		return NULL;
	const gb_ttensor *t = &tr->t[i];
	if (t->data)
		return t;
	/* Computing a group changes only where its entries' data points: the trace's content is
	 * what it was, so a const trace can fill it in. */
	if (!t->group || !tr->lazy_fetch || tr->lazy_fetch((gb_trace *)tr, i) || !t->data)
		return NULL;
	return t;
}

const gb_ttensor *gb_trace_get(const gb_trace *tr, const char *name)
{
	for (int i = 0; i < tr->n; i++)
		if (!strcmp(tr->t[i].name, name))
			return gb_trace_at(tr, i);
	return NULL;
}

const gb_ttensor *gb_trace_find(const gb_trace *tr, const char *name)
{
	for (int i = 0; i < tr->n; i++)
		if (!strcmp(tr->t[i].name, name))
			return &tr->t[i];
	return NULL;
}

int gb_trace_slice(const gb_trace *tr, const char *name, int j, gb_ttensor *out)
{
	int i = 0;
	while (i < tr->n && strcmp(tr->t[i].name, name))
		i++;
	if (i == tr->n || tr->t[i].ndim != 3 || j < 0 || j >= tr->t[i].shape[0])
		return -1;
	const gb_ttensor *t = &tr->t[i];
	size_t n = t->n / (size_t)t->shape[0];
	const float *d = t->data ? t->data + (size_t)j * n : NULL;
	if (!d && t->group && tr->lazy_slice)
		d = tr->lazy_slice((gb_trace *)tr, i, j);
	if (!d) {
		if (!(t = gb_trace_at(tr, i)))
			return -1;
		d = t->data + (size_t)j * n;
	}
	*out = *t;
	out->ndim = 2;
	out->shape[0] = t->shape[1];
	out->shape[1] = t->shape[2];
	out->shape[2] = 0;
	out->axes[0] = t->axes[1];
	out->axes[1] = t->axes[2];
	out->n = n;
	out->data = (float *)d;
	return 0;
}

const float *gb_trace_last_row(const gb_trace *tr, const char *name)
{
	for (int i = 0; i < tr->n; i++) {
		const gb_ttensor *t = &tr->t[i];
		if (strcmp(t->name, name))
			continue;
		if (!t->data && tr->tail_logits && !strcmp(name, "logits"))
			return tr->tail_logits;
		t = gb_trace_at(tr, i);
		if (!t || t->ndim < 1 || !t->shape[0])
			return NULL;
		return t->data + (t->n / (size_t)t->shape[0]) * (size_t)(t->shape[0] - 1);
	}
	return NULL;
}

size_t gb_trace_budget(const gb_trace *tr)
{
	if (tr->budget)
		return tr->budget;
	const char *e = getenv("GLASSBOX_TRACE_BUDGET");
	char *end;
	double mb = e ? strtod(e, &end) : 0;
	if (e && end != e && !*end && mb > 0 && mb < 1e9)
		return (size_t)(mb * 1048576.0) + 1;
	return (size_t)256 << 20;
}

size_t gb_trace_cache_bytes(const gb_trace *tr)
{
	return tr->lazy && tr->lazy_bytes ? tr->lazy_bytes(tr->lazy) : 0;
}

size_t gb_trace_bytes(const gb_trace *tr)
{
	size_t arena = tr->arena_size;
	if (tr->arena_used > arena)
		arena = tr->arena_used;
	return (tr->size + tr->spilled + arena) * sizeof(float) + gb_trace_cache_bytes(tr);
}

int gb_trace_add_lazy(gb_trace *tr, int ndim, const int *shape, const unsigned char *axes, int g,
                      const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	gb_ttensor *t = new_entry(tr, fmt, ap);
	va_end(ap);
	if (!t)
		return -1;
	t->ndim = ndim;
	t->n = 1;
	for (int i = 0; i < ndim; i++) {
		t->shape[i] = shape[i];
		t->axes[i] = axes[i];
		t->n *= (size_t)shape[i];
	}
	t->data = NULL;
	t->group = g;
	return 0;
}

void gb_trace_arena_begin(gb_trace *tr, size_t floats)
{
	floats = (floats + 15) & ~(size_t)15;
	if (tr->arena_size < floats) {
		free(tr->arena);
		tr->arena = aligned_alloc(64, floats * sizeof(float));
		tr->arena_size = tr->arena ? floats : 0;
	}
	tr->arena_used = 0;
	tr->in_arena = 1;
}

static int in_arena(const gb_trace *tr, const float *p)
{
	if (p >= tr->arena && p < tr->arena + tr->arena_size)
		return 1;
	for (int i = 0; i < tr->n_aspill; i++)
		if (p == tr->aspill[i])
			return 1;
	return 0;
}

void gb_trace_arena_end(gb_trace *tr, int first, int g, int (*keep)(const char *name))
{
	tr->in_arena = 0;
	for (int i = first; i < tr->n; i++) {
		float *p = tr->t[i].data;
		if (!p || !in_arena(tr, p) || !keep(tr->t[i].name))
			continue;
		float *q = alloc_floats(tr, tr->t[i].n);
		if (q)
			memcpy(q, p, tr->t[i].n * sizeof(float));
		/* an alias of it (a post-norm's resid is its norm's output) moves along; q NULL
		 * (out of memory) leaves it to be computed on demand */
		for (int j = first; j < tr->n; j++)
			if (tr->t[j].data == p)
				tr->t[j].data = q;
	}
	for (int i = first; i < tr->n; i++)
		if (!tr->t[i].data || in_arena(tr, tr->t[i].data)) {
			tr->t[i].data = NULL;
			tr->t[i].group = g;
		}
	/* the next layer's arena is one block that fits this one's whole need */
	size_t need = tr->arena_used;
	for (int i = 0; i < tr->n_aspill; i++)
		free(tr->aspill[i]);
	tr->n_aspill = 0;
	if (need > tr->arena_size) {
		free(tr->arena);
		tr->arena = NULL;
		tr->arena_size = 0;
		gb_trace_arena_begin(tr, need);
		tr->in_arena = 0;
	}
	tr->arena_used = 0;
}

void gb_trace_arena_free(gb_trace *tr)
{
	for (int i = 0; i < tr->n_aspill; i++)
		free(tr->aspill[i]);
	tr->n_aspill = 0;
	free(tr->arena);
	tr->arena = NULL;
	tr->arena_size = tr->arena_used = 0;
	tr->in_arena = 0;
}

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcasecmp(s + a - b, suf);
}

static int begin(gb_file *w, const char *path, int force, gb_err *err)
{
	return force ? gb_file_begin(w, path, err) : gb_file_begin_new(w, path, err);
}

static int dump_npy(const gb_ttensor *t, const char *path, int force, gb_err *err)
{
	char shape[96] = "";
	for (int i = 0; i < t->ndim; i++)
		snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%d,%s", t->shape[i],
		         i + 1 < t->ndim ? " " : "");
	if (t->ndim > 1)
		shape[strlen(shape) - 1] = 0; /* (a, b) has no trailing comma; (a,) keeps it */
	char dict[160];
	int len = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", shape);
	/* The header (magic 6 + version 2 + length 2 + dict + padding + newline) is a multiple of 64. */
	int total = (10 + len + 1 + 63) / 64 * 64, pad = total - 10 - len - 1;
	gb_file w;
	if (begin(&w, path, force, err))
		return -1;
	unsigned char pre[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)((total - 10) & 255),
	                          (unsigned char)((total - 10) >> 8) };
	fwrite(pre, 1, 10, w.f);
	fwrite(dict, 1, (size_t)len, w.f);
	for (int i = 0; i < pad; i++)
		fputc(' ', w.f);
	fputc('\n', w.f);
	fwrite(t->data, sizeof(float), t->n, w.f); /* the host is little-endian */
	return gb_file_commit(&w, err);
}

static int dump_csv(const gb_ttensor *t, const char *path, int force, gb_err *err)
{
	gb_file w;
	if (begin(&w, path, force, err))
		return -1;
	int cols = t->shape[t->ndim - 1];
	int rows = t->ndim >= 2 ? t->shape[t->ndim - 2] : 1;
	int blocks = t->ndim == 3 ? t->shape[0] : 1;
	fprintf(w.f, "# %s (", t->name);
	for (int i = 0; i < t->ndim; i++)
		fprintf(w.f, "%s%s %d", i ? ", " : "", gb_axis_name(t->axes[i]), t->shape[i]);
	fprintf(w.f, ")\n");
	const float *p = t->data;
	for (int b = 0; b < blocks; b++) {
		if (t->ndim == 3)
			fprintf(w.f, "%s# %s %d\n", b ? "\n" : "", gb_axis_name(t->axes[0]), b + 1);
		for (int r = 0; r < rows; r++) {
			for (int c = 0; c < cols; c++)
				fprintf(w.f, "%s%.9g", c ? "," : "", (double)*p++);
			fputc('\n', w.f);
		}
	}
	return gb_file_commit(&w, err);
}

int gb_trace_dump(const gb_ttensor *t, const char *path, int force, gb_err *err)
{
	if (ends_with(path, ".npy"))
		return dump_npy(t, path, force, err);
	if (ends_with(path, ".csv"))
		return dump_csv(t, path, force, err);
	return gb_fail(err, "%s: unknown format; name the file .npy or .csv", path);
}
