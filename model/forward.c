/* forward.c — the forward pass. Every architecture runs through the same few functions
 * (stack, layer, attention, ffn, norm); every matrix product and norm goes through the kernel
 * table, so the ref and fast engines share this code; every intermediate lands in the trace,
 * which doubles as the working memory (recording everything costs no extra copies). A run
 * whose record would pass the trace's budget runs each layer in the trace's arena and keeps
 * only the cheap tensors; gb_fwd_replay computes the rest of a layer again on demand
 * (model/lazytrace.h). */
#include "model/forward_int.h"
#include "model/kernels/pool.h"

#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* The setjmp's value as the run's error. */
static int jump_fail(fctx *f, int why, gb_err *err)
{
	gb_trace_reset(f->tr);
	return why == 2 ? gb_fail(err, "stopped (Ctrl-C) after %d of %d layers", f->done, f->total)
	                : gb_fail(err, "out of memory recording the trace");
}

float *gb_fwd_tens(fctx *f, int ndim, const int *d, const unsigned char *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	float *p = gb_trace_addv(f->tr, ndim, d, a, fmt, ap);
	va_end(ap);
	if (!p)
		longjmp(f->oom, 1);
	return p;
}

float *gb_fwd_scratch(fctx *f, size_t n)
{
	float *p = gb_trace_scratch(f->tr, n);
	if (!p)
		longjmp(f->oom, 1);
	return p;
}

/* Gives the most recently added tensor another name. */
static void alias_idx(fctx *f, int idx, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void alias_idx(fctx *f, int idx, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = gb_trace_aliasv(f->tr, &f->tr->t[idx], fmt, ap);
	va_end(ap);
	if (rc)
		longjmp(f->oom, 1);
}

int gb_fwd_last(fctx *f) { return f->tr->n - 1; }
static float *data(fctx *f, int idx) { return f->tr->t[idx].data; }

void gb_linear_apply(const gb_kernels *k, float *out, const float *x, int T, const gb_linear *l)
{
	if (l->w16) /* kept as the file's BF16/F16: half the bytes read, widened in the kernel */
		k->matmul_w16(out, x, l->w16, l->wtype, l->b, T, l->in, l->out, l->trans);
	else
		k->matmul(out, x, l->w, l->b, T, l->in, l->out, l->trans);
}

void gb_fwd_lin(fctx *f, float *out, const float *x, int T, const gb_linear *l)
{
	gb_fwd_flush(f);
	gb_linear_apply(f->k, out, x, T, l);
}

void gb_fwd_lin_multi(fctx *f, float *const *outs, const float *x, int T, const gb_linear *const *l, int n)
{
	gb_mm_one p[4];
	int ok = f->k->matmul_multi && n >= 2 && n <= 4;
	for (int i = 0; ok && i < n; i++) {
		ok = l[i]->trans && l[i]->in == l[0]->in && (l[i]->w || l[i]->w16);
		p[i] = (gb_mm_one){ outs[i], l[i]->w ? (const void *)l[i]->w : l[i]->w16,
		                    l[i]->w ? GB_W_F32 : l[i]->wtype, l[i]->b, l[i]->out };
	}
	gb_fwd_flush(f);
	if (ok)
		f->k->matmul_multi(p, n, x, T, l[0]->in);
	else
		for (int i = 0; i < n; i++)
			gb_linear_apply(f->k, outs[i], x, T, l[i]);
}

/* ---- batches of row-wise operations ----
 *
 * Between two linear layers a layer runs small operations whose row i (token i) depends on row
 * i of their inputs alone: a residual add and the norm after it, an activation, the softmax of
 * the logits. On a tiny model each took a parallel region of its own, a few microseconds of
 * work behind a barrier. A run that batches (fctx.batch) records them instead; whatever reads
 * their outputs first (a linear layer, attention, the end of the run) calls gb_fwd_flush, which
 * runs the batch as one parallel region, each task taking its block of rows through every
 * operation in turn. The numbers are the same: each operation computes a row as it does when
 * it runs on all rows at once. The linear layers stay outside: split by columns, each thread
 * reads half of the weights, which is what the time of a small model's matmuls goes to
 * (split by rows, every thread would read all of them from L3). The exception is a product
 * with few weights (gb_fwd_lin_rows: a tiny model's attention output and FFN), which joins the
 * batch as a row-wise operation, so that the residual add, the norm and the FFN after it need no
 * parallel region of their own: a tiny layer is two regions, its heads and the rest. */
enum { ROW_NORM, ROW_ADD, ROW_SOFTMAX, ROW_ACT, ROW_MUL, ROW_COLS, ROW_EMBED, ROW_LIN };

/* A linear layer with at most this many weights may join a batch as a row-wise operation
 * (gb_fwd_lin_rows): every thread then reads all of them, which a small matrix (a tiny model's
 * attention output, 128 x 128) costs less than the parallel region of its own it would
 * take, and than the other thread's half of each row it would have to fetch after it. */
enum { LIN_ROWS_MAX = 1 << 16 };

/* Rows per task of a batch with such a product: the table's part_rows (kernels.h), the rows its
 * block kernel takes a pass, reading W in place, unpacked (at most 16 rows at a time): 8 on
 * avx512, so 8 rows cost no more reads of W per row than 16; 6 on avx2, where 8 rows took two
 * passes over W (6 + 2): the tiny model's attention output and FFN products, 64 rows in parts of
 * 8 on one thread, took 1.1-1.25x as long as in parts of 6.
 * Smaller tasks are what balance the threads: two threads that each take a fixed half of a tiny
 * layer's FFN finish ~10 us apart (on a VM, from the noise of each core alone), and the other
 * thread waited; with 8 tasks the one ahead takes a late task of the other's (2 threads awake:
 * 0.78 -> 0.74 ms, a 64-token prefill of the tiny model on avx512). */
static int rows_lin(const fctx *f)
{
	return f->k->part_rows > 0 ? f->k->part_rows : 8;
}

/* e (D) = the embedding of token id, times scale; a table kept 16-bit is widened into the row
 * it fills. */
static void embed_row(fctx *f, float *e, int id, float scale)
{
	int D = f->c->d_model;
	const float *row = gb_model_embed_row(f->m, id, e);
	for (int d = 0; d < D; d++)
		e[d] = row[d] * scale;
}

/* Rows [r0, r1) of op o. */
static void row_run(fctx *f, const gb_row_op *o, int r0, int r1)
{
	const gb_kernels *k = f->k;
	size_t d = (size_t)o->width, off = (size_t)r0 * d, n = (size_t)(r1 - r0);
	switch (o->kind) {
	case ROW_NORM: {
		const gb_normw *w = o->p;
		if (f->c->norm == GB_NORM_RMS)
			k->rmsnorm(o->out + off, o->out2 + r0, o->x + off, w->g, (int)n, (int)d, f->c->norm_eps);
		else
			k->layernorm(o->out + off, o->out2 + r0, o->out3 + r0, o->x + off, w->g, w->b, (int)n, (int)d,
			             f->c->norm_eps, f->textbook);
		break;
	}
	case ROW_ADD:
		memcpy(o->out + off, o->x + off, n * d * sizeof(float));
		k->add(o->out + off, o->y + off, n * d);
		break;
	case ROW_SOFTMAX:
		memcpy(o->out + off, o->x + off, n * d * sizeof(float));
		k->softmax(o->out + off, (int)n, (int)d);
		break;
	case ROW_ACT:
		k->activate(o->out + off, o->x + off, n * d, o->act);
		break;
	case ROW_MUL:
		k->mul(o->out + off, o->x + off, o->y + off, n * d);
		break;
	case ROW_COLS: /* out (T, n) = columns [off, off + n) of x (T, width) */
		for (int r = r0; r < r1; r++)
			memcpy(o->out + (size_t)r * o->n, o->x + (size_t)r * d + o->off, (size_t)o->n * sizeof(float));
		break;
	case ROW_EMBED: /* out (T, width) = the embedding rows of ids p (T), times scale */
		for (int r = r0; r < r1; r++)
			embed_row(f, o->out + (size_t)r * d, ((const int *)o->p)[r], o->scale);
		break;
	case ROW_LIN: { /* out (T, l->out) = x (T, l->in) W + b, rows [r0, r1) */
		const gb_linear *l = o->p;
		k->matmul_part(o->out, o->x, l->w, l->b, f->batch_T, l->in, l->out, l->trans, r0, r1, 0, l->out);
		break;
	}
	}
}

typedef struct rows_job {
	fctx *f;
	int T, tasks;
} rows_job;

static void rows_task(void *arg, int t, int worker)
{
	const rows_job *j = arg;
	int r0 = (int)((long)j->T * t / j->tasks), r1 = (int)((long)j->T * (t + 1) / j->tasks);
	(void)worker;
	for (int i = 0; i < j->f->n_ops; i++)
		row_run(j->f, &j->f->ops[i], r0, r1);
}

void gb_fwd_flush(fctx *f)
{
	if (!f->n_ops)
		return;
	/* a block of rows per thread: the operations are short, and a thread that comes late
	 * leaves its block to the others */
	rows_job j = { f, f->batch_T, gb_pool_threads() };
	int lin = 0;
	for (int i = 0; i < f->n_ops; i++)
		lin |= f->ops[i].kind == ROW_LIN;
	if (j.tasks > j.T / (GB_ROWS_MIN / 2))
		j.tasks = j.T / (GB_ROWS_MIN / 2);
	else if (lin && j.tasks > 1) /* blocks of at most rows_lin rows */
		j.tasks = ((j.T + rows_lin(f) - 1) / rows_lin(f) + j.tasks - 1) / j.tasks * j.tasks;
	if (j.tasks < 2) {
		j.tasks = 1;
		rows_task(&j, 0, 0);
	} else {
		gb_pool_run(j.tasks, rows_task, &j);
	}
	f->n_ops = 0;
}

/* A slot for a row-wise operation on T rows, or NULL when it must run now (the run does not
 * batch, or T is short); either way, what it may read from the batch is computed. */
static gb_row_op *row_op(fctx *f, int T, int kind)
{
	if (!f->batch || T < GB_ROWS_MIN) {
		gb_fwd_flush(f);
		return NULL;
	}
	if (f->n_ops && (T != f->batch_T || f->n_ops == GB_ROW_OPS))
		gb_fwd_flush(f);
	f->batch_T = T;
	gb_row_op *o = &f->ops[f->n_ops++];
	memset(o, 0, sizeof *o);
	o->kind = kind;
	return o;
}

/* Whether product l may join the batch as a row-wise operation (gb_fwd_lin_rows). */
static int lin_rows_ok(const fctx *f, const gb_linear *l)
{
	return f->k->matmul_part && gb_pool_threads() > 1 && l->w && (size_t)l->in * l->out <= LIN_ROWS_MAX;
}

void gb_fwd_lin_rows(fctx *f, float *out, const float *x, int T, const gb_linear *l)
{
	gb_row_op *o = NULL;
	if (lin_rows_ok(f, l))
		o = row_op(f, T, ROW_LIN);
	if (o)
		o->out = out, o->x = x, o->p = l, o->width = l->out;
	else
		lin(f, out, x, T, l);
}

/* out = x W + b and act_out = act(out): in one pass where the table has matmul_act (the same
 * numbers as the two steps), else the two steps. */
static void lin_act(fctx *f, float *out, float *act_out, const float *x, int T, const gb_linear *l, int act)
{
	gb_fwd_flush(f);
	if (!f->k->matmul_act) {
		gb_linear_apply(f->k, out, x, T, l);
		f->k->activate(act_out, out, (size_t)T * l->out, act);
	} else if (l->w16) {
		f->k->matmul_act(out, act_out, x, l->w16, l->wtype, l->b, T, l->in, l->out, l->trans, act);
	} else {
		f->k->matmul_act(out, act_out, x, l->w, GB_W_F32, l->b, T, l->in, l->out, l->trans, act);
	}
}

/* out (T, d) = act(x), element-wise. */
static void act_rows(fctx *f, float *out, const float *x, int T, int d, int act)
{
	gb_row_op *o = row_op(f, T, ROW_ACT);
	if (o)
		o->out = out, o->x = x, o->width = d, o->act = act;
	else
		f->k->activate(out, x, (size_t)T * d, act);
}

/* out (T, d) = a * b, element-wise. */
static void mul_rows(fctx *f, float *out, const float *a, const float *b, int T, int d)
{
	gb_row_op *o = row_op(f, T, ROW_MUL);
	if (o)
		o->out = out, o->x = a, o->y = b, o->width = d;
	else
		f->k->mul(out, a, b, (size_t)T * d);
}

/* out (T, n) = columns [off, off + n) of x (T, width). */
static void cols_rows(fctx *f, float *out, const float *x, int T, int width, int off, int n)
{
	gb_row_op *o = row_op(f, T, ROW_COLS);
	if (o) {
		o->out = out, o->x = x, o->width = width, o->off = off, o->n = n;
		return;
	}
	for (int t = 0; t < T; t++)
		memcpy(out + (size_t)t * n, x + (size_t)t * width + off, (size_t)n * sizeof(float));
}

/* The sinusoidal encoding of positions pos0 .. pos0 + T - 1 into pe (T, D). */
static void sinusoid_at(float *pe, int pos0, int T, int D)
{
	for (int i = 0; i < T; i++)
		for (int k = 0; 2 * k < D; k++) {
			double a = (pos0 + i) / pow(10000.0, 2.0 * k / D);
			pe[(size_t)i * D + 2 * k] = (float)sin(a);
			if (2 * k + 1 < D)
				pe[(size_t)i * D + 2 * k + 1] = (float)cos(a);
		}
}

void gb_sinusoid(float *pe, int T, int D) { sinusoid_at(pe, 0, T, D); }

double gb_alibi_slope(int h, int n)
{
	int p = 1;
	while (p * 2 <= n)
		p *= 2;
	if (h < p)
		return pow(2.0, -8.0 * (h + 1) / p);
	/* Heads past the largest power of two take every other slope of 2p heads (ALiBi paper). */
	return pow(2.0, -8.0 * (2 * (h - p) + 1) / (2 * p));
}

int gb_t5_bucket(int rel, int bidirectional, int nb, int maxd)
{
	int b = 0, n;
	if (bidirectional) {
		nb /= 2;
		b = rel > 0 ? nb : 0;
		n = rel < 0 ? -rel : rel;
	} else {
		n = rel < 0 ? -rel : 0;
	}
	int exact = nb / 2;
	if (n < exact)
		return b + n;
	/* float throughout, then truncation, as torch computes it */
	float r = logf((float)n / (float)exact) / (float)log((double)maxd / exact) * (float)(nb - exact);
	int large = exact + (int)r;
	return b + (large < nb - 1 ? large : nb - 1);
}

double gb_elu1(double x) { return x > 0 ? x + 1.0 : exp(x); }

/* The cosines and sines of a run's rotation angles, kept per thread: every head of every layer
 * rotates its rows by the same angles, which took a pow, a cos and a sin per pair and head
 * (decoding a Llama-110M token: 9,216 of each, ~5% of the step on one thread). A table is
 * reused while the settings the angles come from, the positions and the head size are the same. */
struct rope_key {
	double theta, factor;
	double low, high;
	int scale, orig_ctx, d_head, pos0, T, E;
};

struct rope_tab {
	struct rope_key key;
	int valid;
	size_t cap; /* doubles */
	double *cs; /* (T, E/2, 2): cos, sin */
};

static pthread_key_t rope_tls;
static pthread_once_t rope_once = PTHREAD_ONCE_INIT;

static void rope_tab_free(void *v)
{
	struct rope_tab *t = v;
	free(t->cs);
	free(t);
}

static void rope_tls_init(void)
{
	pthread_key_create(&rope_tls, rope_tab_free);
}

/* This thread's table for (pos0, T, E) under c's settings, or NULL when memory is short. */
static const double *rope_table(const gb_config *c, int pos0, int T, int E)
{
	struct rope_key k;
	memset(&k, 0, sizeof k); /* padding too: keys are compared with memcmp */
	k.theta = c->rope_theta, k.factor = c->rope_factor, k.scale = c->rope_scale, k.orig_ctx = c->rope_orig_ctx;
	k.low = c->rope_low, k.high = c->rope_high, k.d_head = c->d_head, k.pos0 = pos0, k.T = T, k.E = E;
	pthread_once(&rope_once, rope_tls_init);
	struct rope_tab *tab = pthread_getspecific(rope_tls);
	if (!tab) {
		if (!(tab = calloc(1, sizeof *tab)))
			return NULL;
		if (pthread_setspecific(rope_tls, tab)) {
			free(tab);
			return NULL;
		}
	}
	if (tab->valid && !memcmp(&tab->key, &k, sizeof k))
		return tab->cs;
	int half = E / 2;
	size_t need = (size_t)T * half * 2;
	if (need > tab->cap) {
		double *p = realloc(tab->cs, (need ? need : 1) * sizeof *p);
		if (!p)
			return NULL;
		tab->cs = p, tab->cap = need;
	}
	tab->valid = 0;
	for (int i = 0; i < half; i++) {
		double inv = gb_rope_inv_freq(c, i);
		for (int t = 0; t < T; t++) {
			double ang = (pos0 + t) * inv;
			tab->cs[((size_t)t * half + i) * 2] = cos(ang);
			tab->cs[((size_t)t * half + i) * 2 + 1] = sin(ang);
		}
	}
	tab->key = k;
	tab->valid = 1;
	return tab->cs;
}

void gb_rope(float *x, int T, int E, int pos0, const gb_config *c)
{
	int half = E / 2, pairs = c->rope_pairs;
	const double *tab = rope_table(c, pos0, T, E);
	for (int t = 0; t < T; t++) {
		float *r = x + (size_t)t * E;
		for (int i = 0; i < half; i++) {
			/* pair i: features (i, i + E/2) rotating half, (2i, 2i + 1) adjacent; same angle */
			int ia = pairs == GB_ROPE_ADJACENT ? 2 * i : i, ib = pairs == GB_ROPE_ADJACENT ? 2 * i + 1 : i + half;
			double cs, sn, a = r[ia], b = r[ib];
			if (tab) {
				cs = tab[((size_t)t * half + i) * 2], sn = tab[((size_t)t * half + i) * 2 + 1];
			} else { /* no memory for the table: each angle here, the same numbers */
				double ang = (pos0 + t) * gb_rope_inv_freq(c, i);
				cs = cos(ang), sn = sin(ang);
			}
			r[ia] = (float)(a * cs - b * sn);
			r[ib] = (float)(b * cs + a * sn);
		}
	}
}

int gb_fwd_norm(fctx *f, const gb_normw *w, const float *x, int T, const char *name)
{
	int D = f->c->d_model;
	float *s1, *s2 = NULL, *out;
	if (f->c->norm == GB_NORM_RMS) {
		s1 = tens(f, 1, SHAPE(T), AXES(GB_AX_TOKEN), "%s.rms", name);
	} else {
		s1 = tens(f, 1, SHAPE(T), AXES(GB_AX_TOKEN), "%s.mean", name);
		s2 = tens(f, 1, SHAPE(T), AXES(GB_AX_TOKEN), "%s.var", name);
	}
	out = tens(f, TF(T, D), "%s.out", name);
	gb_row_op *o = row_op(f, T, ROW_NORM);
	if (o)
		o->out = out, o->out2 = s1, o->out3 = s2, o->x = x, o->p = w, o->width = D;
	else if (f->c->norm == GB_NORM_RMS)
		f->k->rmsnorm(out, s1, x, w->g, T, D, f->c->norm_eps);
	else
		f->k->layernorm(out, s1, s2, x, w->g, w->b, T, D, f->c->norm_eps, f->textbook);
	return last(f);
}

/* The feed-forward network; records name.{up,gate,hidden,out}; returns out's index. */
static int ffn(fctx *f, const gb_ffn_w *w, const char *name, const float *x, int T)
{
	const gb_config *c = f->c;
	int F = c->d_ffn, D = c->d_model;
	const unsigned char *tf = AXES(GB_AX_TOKEN, GB_AX_FFN);
	float *hidden;
	if (c->ffn == GB_FFN_GATED) {
		float *gate, *up;
		if (w->fused_gate) {
			float *buf = scratch(f, (size_t)T * 2 * F);
			lin(f, buf, x, T, &w->up);
			gate = tens(f, 2, SHAPE(T, F), tf, "%s.gate", name);
			up = tens(f, 2, SHAPE(T, F), tf, "%s.up", name);
			cols_rows(f, gate, buf, T, 2 * F, 0, F);
			cols_rows(f, up, buf, T, 2 * F, F, F);
		} else { /* one parallel region for the two where the table can */
			gate = tens(f, 2, SHAPE(T, F), tf, "%s.gate", name);
			up = tens(f, 2, SHAPE(T, F), tf, "%s.up", name);
			gb_fwd_lin_multi(f, (float *[]){ gate, up }, x, T, (const gb_linear *[]){ &w->gate, &w->up }, 2);
		}
		hidden = tens(f, 2, SHAPE(T, F), tf, "%s.hidden", name);
		act_rows(f, hidden, gate, T, F, GB_ACT_SILU);
		mul_rows(f, hidden, hidden, up, T, F);
	} else {
		float *up = tens(f, 2, SHAPE(T, F), tf, "%s.up", name);
		hidden = tens(f, 2, SHAPE(T, F), tf, "%s.hidden", name);
		/* a tiny model's FFN on several threads: both products join the batch by rows, with the
		 * add and norm around them, one parallel region for the whole of it (the same numbers:
		 * matmul_act is matmul then activate) */
		if (lin_rows_ok(f, &w->up) && lin_rows_ok(f, &w->down)) {
			gb_fwd_lin_rows(f, up, x, T, &w->up);
			act_rows(f, hidden, up, T, F, c->act);
		} else
			lin_act(f, up, hidden, x, T, &w->up, c->act);
	}
	float *out = tens(f, TF(T, D), "%s.out", name);
	gb_fwd_lin_rows(f, out, hidden, T, &w->down);
	return last(f);
}

/* Copies and their one-pass follow-ups, split across threads on the fast tables in one parallel
 * region (the reference, and anything small, on this thread): each thread copies and finishes
 * its own rows, instead of one thread copying what the next operation then splits. */
typedef struct copy_job {
	const gb_kernels *k;
	float *dst;
	const float *src, *add; /* add: dst = src + add element-wise; NULL: dst = softmax(src) by rows */
	size_t rows, d;
	int tasks;
} copy_job;

static void copy_task(void *arg, int t, int worker)
{
	const copy_job *j = arg;
	size_t r0 = j->rows * t / j->tasks, r1 = j->rows * (t + 1) / j->tasks, off = r0 * j->d, n = (r1 - r0) * j->d;
	(void)worker;
	if (!n)
		return;
	memcpy(j->dst + off, j->src + off, n * sizeof(float));
	if (j->add)
		j->k->add(j->dst + off, j->add + off, n);
	else
		j->k->softmax(j->dst + off, (int)(r1 - r0), (int)j->d);
}

static void copy_then(fctx *f, float *dst, const float *src, const float *add, size_t rows, size_t d)
{
	gb_row_op *o = row_op(f, (int)rows, add ? ROW_ADD : ROW_SOFTMAX);
	if (o) {
		o->out = dst, o->x = src, o->y = add, o->width = (int)d;
		return;
	}
	copy_job j = { f->k, dst, src, add, rows, d, gb_pool_threads() };
	if (j.tasks > (int)rows)
		j.tasks = (int)rows;
	if (f->k == gb_kernels_ref() || rows * d < 4096 || j.tasks < 2)
		copy_task(&(copy_job){ f->k, dst, src, add, rows, d, 1 }, 0, 0);
	else
		gb_pool_run(j.tasks, copy_task, &j);
}

/* One sub-layer around the residual stream x (index): pre-norm x + f(norm(x)), post-norm
 * norm(x + f(x)). `sub` computes f on its input and returns the index of its output. The new
 * stream is recorded as resid_name; returns its index. */
typedef int (*sublayer_fn)(fctx *f, const void *w, const char *name, const float *x, int T, const void *arg);

static int residual(fctx *f, int x, const gb_normw *nw, const char *nname, sublayer_fn sub, const void *w,
                    const char *sname, const void *arg, int T, const char *resid_name)
{
	int D = f->c->d_model;
	if (f->c->prenorm) {
		alias_idx(f, x, "%s.in", nname);
		int n = gb_fwd_norm(f, nw, data(f, x), T, nname);
		int o = sub(f, w, sname, data(f, n), T, arg);
		float *r = tens(f, TF(T, D), "%s", resid_name);
		copy_then(f, r, data(f, x), data(f, o), (size_t)T, (size_t)D);
		return last(f);
	}
	int o = sub(f, w, sname, data(f, x), T, arg);
	float *in = tens(f, TF(T, D), "%s.in", nname);
	copy_then(f, in, data(f, x), data(f, o), (size_t)T, (size_t)D);
	int n = gb_fwd_norm(f, nw, in, T, nname);
	alias_idx(f, n, "%s", resid_name);
	return last(f);
}

static int sub_attn(fctx *f, const void *w, const char *name, const float *x, int T, const void *arg)
{
	attn_in in = *(const attn_in *)arg;
	in.xq = x;
	if (in.self)
		in.xkv = x;
	return gb_fwd_attention(f, w, name, &in);
}

static int sub_ffn(fctx *f, const void *w, const char *name, const float *x, int T, const void *arg)
{
	if (f->c->n_experts) {
		gb_fwd_flush(f); /* routing reads its input on this thread */
		return gb_fwd_moe(f, w, name, x, T);
	}
	return ffn(f, w, name, x, T);
}


void gb_fwd_self_in(fctx *f, const stack_in *in, int l, attn_in *self)
{
	gb_kvcache *kc = in->cache;
	memset(self, 0, sizeof *self);
	self->Tq = self->Tk = in->T;
	self->causal = in->causal && !(f->o && f->o->no_mask);
	self->self = 1;
	if (in->causal && f->o && f->o->allow) {
		self->allow = f->o->allow;
		self->allow_arg = f->o->allow_arg;
	}
	self->bidir = !in->causal;
	self->key_ids = in->ids;
	self->pos0 = in->pos0;
	if (kc) {
		self->key_ids = kc->ids;
		self->ck = gb_kvcache_k(kc, l, 0);
		self->cv = gb_kvcache_v(kc, l, 0);
		self->cstride = (size_t)kc->cap * kc->d_head;
	}
	if (in->ablate && f->o && f->o->head_scale)
		self->scale = f->o->head_scale + (size_t)l * f->c->n_head;
}

int gb_fwd_sublayer(fctx *f, const gb_stack_w *s, const stack_in *in, int l, int part, int x)
{
	const gb_config *c = f->c;
	const char *p = in->pfx;
	int T = in->T;
	char nn[48], sn[48], rn[48];
	gb_kvcache *kc = in->cache;
	const gb_layer_w *L = &s->layers[l];
	size_t before = f->tr->arena_used;
	if (part == GB_PART_ATTN) {
		attn_in self;
		gb_fwd_self_in(f, in, l, &self);
		snprintf(nn, sizeof nn, "%sL%d.ln1", p, l + 1);
		snprintf(sn, sizeof sn, "%sL%d.attn", p, l + 1);
		snprintf(rn, sizeof rn, "%sL%d.resid.mid", p, l + 1);
		x = residual(f, x, &L->ln1, nn, sub_attn, &L->attn, sn, &self, T, rn);
	} else if (part == GB_PART_CROSS) {
		attn_in cross = { 0 };
		cross.xkv = in->enc;
		cross.Tq = T;
		cross.Tk = in->Ts;
		cross.key_ids = in->src_ids;
		if (!in->enc) { /* keys and values computed once, by gb_kvcache_set_source */
			size_t cs = (size_t)kc->src_cap * kc->d_head;
			cross.Tk = kc->n_src;
			cross.key_ids = kc->src;
			cross.ck = kc->ck + (size_t)l * kc->n_kv_head * cs;
			cross.cv = kc->cv + (size_t)l * kc->n_kv_head * cs;
			cross.cstride = cs;
		}
		snprintf(nn, sizeof nn, "%sL%d.ln2", p, l + 1);
		snprintf(sn, sizeof sn, "%sL%d.cross", p, l + 1);
		snprintf(rn, sizeof rn, "%sL%d.resid.cross", p, l + 1);
		x = residual(f, x, &L->ln2, nn, sub_attn, &L->cross, sn, &cross, T, rn);
	} else {
		int fn = gb_fwd_has_cross(in) ? 3 : 2;
		snprintf(nn, sizeof nn, "%sL%d.ln%d", p, l + 1, fn);
		snprintf(sn, sizeof sn, "%sL%d.ffn", p, l + 1);
		snprintf(rn, sizeof rn, "%sL%d.resid.post", p, l + 1);
		const void *fw = c->n_experts ? (const void *)&L->moe : (const void *)&L->ffn;
		x = residual(f, x, fn == 3 ? &L->ln3 : &L->ln2, nn, sub_ffn, fw, sn, NULL, T, rn);
	}
	f->part_floats[part] = f->tr->arena_used - before;
	return x;
}

int gb_fwd_has_cross(const stack_in *in) { return in->enc || (in->cache && in->cache->encdec); }

/* Layer l (0-based) of stack s on the residual stream x (an index); returns the new stream's. */
int gb_fwd_layer(fctx *f, const gb_stack_w *s, const stack_in *in, int l, int x)
{
	x = gb_fwd_sublayer(f, s, in, l, GB_PART_ATTN, x);
	if (gb_fwd_has_cross(in))
		x = gb_fwd_sublayer(f, s, in, l, GB_PART_CROSS, x);
	return gb_fwd_sublayer(f, s, in, l, GB_PART_FFN, x);
}

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

/* What a lazy run keeps of a layer: its residual streams, its norms' statistics and how far
 * back each head looks. */
static int kept(const char *name)
{
	return strstr(name, ".resid.") || ends_with(name, ".mean") || ends_with(name, ".var") ||
	       ends_with(name, ".rms") || ends_with(name, ".reach");
}

/* Embeds ids and runs the stack's layers and final norm; returns the output's index. */
static int stack(fctx *f, const gb_stack_w *s, const stack_in *in)
{
	const gb_config *c = f->c;
	const char *p = in->pfx;
	int T = in->T, D = c->d_model;
	float *tk = tens(f, 1, SHAPE(T), AXES(GB_AX_TOKEN), "%stokens", p);
	for (int i = 0; i < T; i++)
		tk[i] = (float)in->ids[i];
	float *e = tens(f, TF(T, D), "%sembed.tok", p);
	float scale = c->scale_embed ? (float)sqrt((double)D) : 1.0f;
	gb_row_op *o = row_op(f, T, ROW_EMBED);
	if (o)
		o->out = e, o->p = in->ids, o->width = D, o->scale = scale;
	else
		for (int i = 0; i < T; i++)
			embed_row(f, e + (size_t)i * D, in->ids[i], scale);
	const float *pos = NULL;
	if (c->pos == GB_POS_SINUSOIDAL) {
		float *pe = tens(f, 2, SHAPE(T, D), AXES(GB_AX_POSITION, GB_AX_FEATURE), "%sembed.pos", p);
		sinusoid_at(pe, in->pos0, T, D);
		pos = pe;
	} else if (c->pos == GB_POS_LEARNED) {
		float *pe = tens(f, 2, SHAPE(T, D), AXES(GB_AX_POSITION, GB_AX_FEATURE), "%sembed.pos", p);
		cols_rows(f, pe, s->pos + (size_t)in->pos0 * D, T, D, 0, D);
		pos = pe;
	}
	float *sum = tens(f, TF(T, D), "%sembed.sum", p);
	if (pos)
		copy_then(f, sum, e, pos, (size_t)T, (size_t)D);
	else
		cols_rows(f, sum, e, T, D, 0, D);
	int x = last(f);

	for (int l = 0; l < s->n_layer; l++) {
		if (f->o && f->o->stop && *f->o->stop)
			longjmp(f->oom, 2);
		if (f->lazy) {
			/* the layer runs in the arena; what is cheap is kept, the rest computed on demand */
			int first = f->tr->n;
			gb_trace_arena_begin(f->tr, f->tr->arena_size);
			memset(f->part_floats, 0, sizeof f->part_floats);
			x = gb_fwd_layer(f, s, in, l, x);
			int g = gb_lazy_add_group(f->lazy, in->stack, l, f->tr->arena_used);
			if (g < 0)
				longjmp(f->oom, 1);
			memcpy(f->lazy->g[g - 1].part_floats, f->part_floats, sizeof f->part_floats);
			gb_trace_arena_end(f->tr, first, g, kept);
		} else
			x = gb_fwd_layer(f, s, in, l, x);
		f->done++;
		if (f->o && f->o->progress)
			f->o->progress(f->o->progress_arg, f->done, f->total);
	}
	if (c->final_norm) {
		char nn[48];
		snprintf(nn, sizeof nn, "%slnf", p);
		alias_idx(f, x, "%s.in", nn);
		x = gb_fwd_norm(f, &s->final, data(f, x), T, nn);
	}
	return x;
}

static int check_ids(const gb_config *c, const int *ids, int n, const char *what, gb_err *err)
{
	if (n <= 0)
		return gb_fail(err, "the %s is empty: type some text", what);
	if (n > c->n_ctx)
		return gb_fail(err, "the %s is %d tokens; the model's context holds %d", what, n, c->n_ctx);
	for (int i = 0; i < n; i++)
		if (ids[i] < 0 || ids[i] >= c->vocab)
			return gb_fail(err, "token id %d at position %d of the %s is outside the vocabulary (0..%d)",
			               ids[i], i + 1, what, c->vocab - 1);
	return 0;
}

static int keep_ids(int **dst, int *n_dst, const int *src, int n)
{
	int *p = realloc(*dst, (size_t)(n ? n : 1) * sizeof *p);
	if (!p)
		return -1;
	if (n)
		memcpy(p, src, (size_t)n * sizeof *p);
	*dst = p;
	*n_dst = n;
	return 0;
}

void gb_fwd_init(fctx *f, const gb_model *m, gb_trace *tr, const gb_fwd_opts *opts)
{
	f->m = m;
	f->c = &m->cfg;
	f->k = opts && opts->k ? opts->k : gb_kernels_fast();
	f->o = opts;
	f->tr = tr;
	f->textbook = m->cfg.textbook_ln || (opts && opts->textbook_ln);
	f->done = f->total = 0;
	f->lazy = NULL;
	f->batch = f->n_ops = 0;
}

/* logits and probs (T, vocab) from the stack's output x. */
static void output(fctx *f, int x, int T)
{
	const gb_config *c = f->c;
	const unsigned char *tv = AXES(GB_AX_TOKEN, GB_AX_VOCAB);
	float *logits = tens(f, 2, SHAPE(T, c->vocab), tv, "logits");
	lin(f, logits, data(f, x), T, &f->m->lm_head);
	float *probs = tens(f, 2, SHAPE(T, c->vocab), tv, "probs");
	copy_then(f, probs, logits, NULL, (size_t)T, (size_t)c->vocab);
}

/* What the full record of a run takes (floats), near enough to choose lazy recording. */
static size_t eager_floats(const gb_config *c, size_t n, size_t nt)
{
	size_t D = c->d_model, F = c->d_ffn, H = c->n_head, E = c->d_head, K = c->n_kv_head;
	size_t q = H * E, kv = K * E;
#define ATTN(Tq, Tk) (3 * H * (Tq) * (Tk) + (Tq) * (4 * q + 2 * kv + 2 * D) + 2 * (Tk) * kv)
	size_t sz;
	if (c->encdec)
		sz = (size_t)c->n_enc_layer * (ATTN(n, n) + 5 * n * F + 6 * n * D) +
		     (size_t)c->n_layer * (ATTN(nt, nt) + ATTN(nt, n) + 5 * nt * F + 9 * nt * D) + (5 * n + 5 * nt) * D;
	else
		sz = (size_t)c->n_layer * (ATTN(n, n) + 5 * n * F + 6 * n * D) + 5 * n * D, nt = n;
#undef ATTN
	if (c->n_experts) /* per layer and token: E experts' (up, gate, hidden, out) rows and routing */
		sz += (size_t)(c->n_layer + c->n_enc_layer) * (n > nt ? n : nt) * (size_t)c->n_experts * (3 * F + D + 4);
	if (c->pos == GB_POS_T5 || c->attn_kind == GB_ATTN_LINEAR) /* rel_bias; or q_feat, k_feat */
		sz += (size_t)(c->n_layer + c->n_enc_layer) * H * (n > nt ? n : nt) * ((n > nt ? n : nt) + 2 * E);
	return sz + 2 * nt * (size_t)c->vocab;
}

/* A lazy run's note of a stack it is about to run (enc_out: the encoder output's entry). */
static void lazy_stack(fctx *f, const stack_in *in, int enc_out)
{
	if (!f->lazy)
		return;
	gb_lazy_stack *st = &f->lazy->st[in->stack];
	snprintf(st->pfx, sizeof st->pfx, "%s", in->pfx);
	st->T = in->T;
	st->causal = in->causal;
	st->ablate = in->ablate;
	st->enc_out = enc_out;
}

/* A lazy run's output: logits and probs listed (computed on demand), the last row of logits
 * kept. */
static void lazy_output(fctx *f, int x, int T)
{
	const gb_config *c = f->c;
	const unsigned char *tv = AXES(GB_AX_TOKEN, GB_AX_VOCAB);
	size_t tv_n = (size_t)T * c->vocab;
	float *row = scratch(f, (size_t)c->vocab);
	lin(f, row, data(f, x) + (size_t)(T - 1) * c->d_model, 1, &f->m->lm_head);
	f->tr->tail_logits = row;
	f->lazy->x_out = x;
	int gl = gb_lazy_add_group(f->lazy, 1, -1, tv_n), gp = gb_lazy_add_group(f->lazy, 1, -2, tv_n);
	if (gl < 0 || gp < 0 || gb_trace_add_lazy(f->tr, 2, SHAPE(T, c->vocab), tv, gl, "logits") ||
	    gb_trace_add_lazy(f->tr, 2, SHAPE(T, c->vocab), tv, gp, "probs"))
		longjmp(f->oom, 1);
}

int gb_forward(const gb_model *m, const int *ids, int n, const int *tgt, int n_tgt, gb_trace *tr,
               const gb_fwd_opts *opts, gb_err *err)
{
	const gb_config *c = &m->cfg;
	if (check_ids(c, ids, n, c->encdec ? "source" : "text", err))
		return -1;
	if (c->encdec && check_ids(c, tgt, n_tgt, "decoder input", err))
		return -1;
	if (!c->encdec && tgt)
		return gb_fail(err, "a decoder-only model takes no separate target");
	gb_trace_reset(tr);
	if (keep_ids(&tr->ids, &tr->n_ids, ids, n) || keep_ids(&tr->tgt, &tr->n_tgt, tgt, c->encdec ? n_tgt : 0))
		return gb_fail(err, "out of memory");
	tr->encdec = c->encdec;
	tr->pos0 = 0;
	fctx f;
	gb_fwd_init(&f, m, tr, opts);
	if (eager_floats(c, n, c->encdec ? n_tgt : 0) * sizeof(float) > gb_trace_budget(tr) &&
	    !(f.lazy = gb_lazy_install(tr, m, opts)))
		return gb_fail(err, "out of memory");
	f.batch = !f.lazy && f.k != gb_kernels_ref();
	int why = setjmp(f.oom);
	if (why)
		return jump_fail(&f, why, err);
	f.total = m->dec.n_layer + (c->encdec ? m->enc.n_layer : 0);
	int x, T;
	if (c->encdec) {
		stack_in se = { "enc.", ids, n, 0, NULL, 0, NULL, 0, 0, NULL, 0 };
		lazy_stack(&f, &se, -1);
		int enc = stack(&f, &m->enc, &se);
		gb_fwd_flush(&f);
		stack_in sd = { "dec.", tgt, n_tgt, 1, data(&f, enc), n, ids, 1, 0, NULL, 1 };
		lazy_stack(&f, &sd, enc);
		x = stack(&f, &m->dec, &sd);
		T = n_tgt;
	} else {
		stack_in sd = { "", ids, n, 1, NULL, 0, NULL, 1, 0, NULL, 1 };
		lazy_stack(&f, &sd, -1);
		x = stack(&f, &m->dec, &sd);
		T = n;
	}
	if (f.lazy)
		lazy_output(&f, x, T);
	else
		output(&f, x, T);
	gb_fwd_flush(&f);
	gb_trace_arena_free(tr);
	return 0;
}

/* The cache was made for this model's decoder. */
static int cache_fits(const gb_model *m, const gb_kvcache *kc, gb_err *err)
{
	const gb_config *c = &m->cfg;
	if (kc->n_layer != c->n_layer || kc->n_kv_head != c->n_kv_head || kc->d_head != c->d_head ||
	    kc->encdec != c->encdec || kc->cap > c->n_ctx)
		return gb_fail(err, "the key/value cache was made for another model");
	return 0;
}

/* gb_kvcache_set_source's work, into the trace t. */
static int run_source(gb_kvcache *kc, const gb_model *m, const int *src, int n_src, gb_trace *t,
                      const gb_fwd_opts *opts, gb_err *err)
{
	const gb_config *c = &m->cfg;
	static uint64_t stamps;
	gb_trace_reset(t);
	if (keep_ids(&t->ids, &t->n_ids, src, n_src) || keep_ids(&t->tgt, &t->n_tgt, NULL, 0))
		return gb_fail(err, "out of memory");
	t->encdec = 1;
	t->pos0 = 0;
	fctx f;
	gb_fwd_init(&f, m, t, opts);
	int why = setjmp(f.oom);
	if (why)
		return jump_fail(&f, why, err);
	f.total = m->enc.n_layer;
	stack_in se = { "enc.", src, n_src, 0, NULL, 0, NULL, 0, 0, NULL, 0 };
	f.batch = f.k != gb_kernels_ref();
	const float *enc = data(&f, stack(&f, &m->enc, &se));
	gb_fwd_flush(&f);
	/* Each decoder layer's cross-attention keys and values, as attention() computes them. */
	int K = c->n_kv_head, E = c->d_head, kw = K * E;
	float *buf = scratch(&f, (size_t)n_src * kw);
	size_t cs = (size_t)kc->src_cap * E;
	for (int l = 0; l < c->n_layer; l++) {
		const gb_attn_w *a = &m->dec.layers[l].cross;
		for (int kv = 0; kv < 2; kv++) {
			lin(&f, buf, enc, n_src, kv ? &a->v : &a->k);
			float *dst = (kv ? kc->cv : kc->ck) + (size_t)l * K * cs;
			for (int h = 0; h < K; h++)
				for (int i = 0; i < n_src; i++)
					memcpy(dst + h * cs + (size_t)i * E, buf + (size_t)i * kw + h * E, (size_t)E * sizeof(float));
		}
	}
	memcpy(kc->src, src, (size_t)n_src * sizeof(int));
	kc->n_src = n_src;
	kc->src_stamp = ++stamps;
	return 0;
}

int gb_kvcache_set_source(gb_kvcache *kc, const gb_model *m, const int *src, int n_src, gb_trace *tr,
                          const gb_fwd_opts *opts, gb_err *err)
{
	const gb_config *c = &m->cfg;
	if (!c->encdec)
		return gb_fail(err, "a decoder-only model has no source: run the text with gb_forward_cached");
	if (cache_fits(m, kc, err) || check_ids(c, src, n_src, "source", err))
		return -1;
	/* a new source starts a new decoding; a failed one leaves none */
	kc->len = 0;
	kc->n_src = 0;
	gb_trace own = { 0 };
	int rc = run_source(kc, m, src, n_src, tr ? tr : &own, opts, err);
	gb_trace_free(&own);
	return rc;
}

int gb_forward_cached(const gb_model *m, gb_kvcache *kc, const int *ids, int n, gb_trace *tr,
                      const gb_fwd_opts *opts, gb_err *err)
{
	const gb_config *c = &m->cfg;
	int len = kc->len;
	if (cache_fits(m, kc, err))
		return -1;
	if (c->encdec && !kc->n_src)
		return gb_fail(err, "the cache has no source yet: set it with gb_kvcache_set_source");
	if (n <= 0)
		return gb_fail(err, "no tokens to run");
	if (len + n > kc->cap)
		return gb_fail(err, "the context is full: %d positions are cached and %d more do not fit in %d", len, n,
		               kc->cap);
	if (check_ids(c, ids, n, c->encdec ? "decoder input" : "text", err))
		return -1;
	memcpy(kc->ids + len, ids, (size_t)n * sizeof(int));
	gb_trace_reset(tr);
	int bad = c->encdec ? keep_ids(&tr->ids, &tr->n_ids, kc->src, kc->n_src) || keep_ids(&tr->tgt, &tr->n_tgt, kc->ids, len + n)
	                    : keep_ids(&tr->ids, &tr->n_ids, kc->ids, len + n) || keep_ids(&tr->tgt, &tr->n_tgt, NULL, 0);
	if (bad)
		return gb_fail(err, "out of memory");
	tr->encdec = c->encdec;
	tr->pos0 = len;
	fctx f;
	gb_fwd_init(&f, m, tr, opts);
	int why = setjmp(f.oom);
	if (why)
		return jump_fail(&f, why, err);
	f.total = m->dec.n_layer;
	stack_in sd = { c->encdec ? "dec." : "", ids, n, 1, NULL, 0, NULL, 1, len, kc, 1 };
	f.batch = f.k != gb_kernels_ref();
	output(&f, stack(&f, &m->dec, &sd), n);
	gb_fwd_flush(&f);
	kc->len = len + n;
	return 0;
}
