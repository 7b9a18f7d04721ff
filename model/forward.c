/* forward.c — the forward pass. Every architecture runs through the same few functions
 * (stack, layer, attention, ffn, norm); every matrix product and norm goes through the kernel
 * table, so the ref and fast engines share this code; every intermediate lands in the trace,
 * which doubles as the working memory (recording everything costs no extra copies). */
#include "model/forward.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fctx {
	const gb_model *m;
	const gb_config *c;
	const gb_kernels *k;
	const gb_fwd_opts *o;
	gb_trace *tr;
	int textbook;
	jmp_buf oom;          /* taken when the trace cannot grow */
} fctx;

/* A new trace tensor; ndim 1..3 with shape d[] and axes a[]. */
static float *tens(fctx *f, int ndim, const int *d, const unsigned char *a, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static float *tens(fctx *f, int ndim, const int *d, const unsigned char *a, const char *fmt, ...)
{
	char name[64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof name, fmt, ap);
	va_end(ap);
	float *p = gb_trace_add(f->tr, ndim, d, a, "%s", name);
	if (!p)
		longjmp(f->oom, 1);
	return p;
}

#define SHAPE(...) ((const int[]){ __VA_ARGS__ })
#define AXES(...) ((const unsigned char[]){ __VA_ARGS__ })
#define TF(T, D) 2, SHAPE(T, D), AXES(GB_AX_TOKEN, GB_AX_FEATURE)

static float *scratch(fctx *f, size_t n)
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
	char name[64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof name, fmt, ap);
	va_end(ap);
	if (gb_trace_alias(f->tr, &f->tr->t[idx], "%s", name))
		longjmp(f->oom, 1);
}

static int last(fctx *f) { return f->tr->n - 1; }
static float *data(fctx *f, int idx) { return f->tr->t[idx].data; }

static void lin(fctx *f, float *out, const float *x, int T, const gb_linear *l)
{
	f->k->matmul(out, x, l->w, l->b, T, l->in, l->out, l->trans);
}

void gb_sinusoid(float *pe, int T, int D)
{
	for (int i = 0; i < T; i++)
		for (int k = 0; 2 * k < D; k++) {
			double a = i / pow(10000.0, 2.0 * k / D);
			pe[(size_t)i * D + 2 * k] = (float)sin(a);
			if (2 * k + 1 < D)
				pe[(size_t)i * D + 2 * k + 1] = (float)cos(a);
		}
}

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

void gb_rope(float *x, int T, int E, int pos0, float theta, int pairs)
{
	int half = E / 2;
	for (int t = 0; t < T; t++) {
		float *r = x + (size_t)t * E;
		for (int i = 0; i < half; i++) {
			/* pair i: features (i, i + E/2) rotating half, (2i, 2i + 1) adjacent; same angle */
			int ia = pairs == GB_ROPE_ADJACENT ? 2 * i : i, ib = pairs == GB_ROPE_ADJACENT ? 2 * i + 1 : i + half;
			double ang = (pos0 + t) * pow((double)theta, -2.0 * i / E);
			double cs = cos(ang), sn = sin(ang), a = r[ia], b = r[ib];
			r[ia] = (float)(a * cs - b * sn);
			r[ib] = (float)(b * cs + a * sn);
		}
	}
}

/* Norm `name` of x (T, D): records name.mean/.var (or .rms) and name.out; returns out's index.
 * The caller has already recorded name.in. */
static int norm(fctx *f, const gb_normw *w, const float *x, int T, const char *name)
{
	int D = f->c->d_model;
	if (f->c->norm == GB_NORM_RMS) {
		float *rms = tens(f, 1, SHAPE(T), AXES(GB_AX_TOKEN), "%s.rms", name);
		float *out = tens(f, TF(T, D), "%s.out", name);
		f->k->rmsnorm(out, rms, x, w->g, T, D, f->c->norm_eps);
	} else {
		float *mean = tens(f, 1, SHAPE(T), AXES(GB_AX_TOKEN), "%s.mean", name);
		float *var = tens(f, 1, SHAPE(T), AXES(GB_AX_TOKEN), "%s.var", name);
		float *out = tens(f, TF(T, D), "%s.out", name);
		f->k->layernorm(out, mean, var, x, w->g, w->b, T, D, f->c->norm_eps, f->textbook);
	}
	return last(f);
}

/* Copies columns [off, off + H E) of src (T rows of `stride` floats) into dst (H, T, E). */
static void split_heads(float *dst, const float *src, int T, int H, int E, int stride, int off)
{
	for (int h = 0; h < H; h++)
		for (int t = 0; t < T; t++)
			memcpy(dst + ((size_t)h * T + t) * E, src + (size_t)t * stride + off + h * E, (size_t)E * sizeof(float));
}

typedef struct attn_in {
	const float *xq;      /* (Tq, D) */
	const float *xkv;     /* (Tk, D) */
	int Tq, Tk;
	int causal, self;     /* self-attention gets RoPE, ALiBi and the local window */
	const int *key_ids;   /* (Tk), for the padding mask */
	const float *scale;   /* (H) per-head output scale, or NULL */
} attn_in;

/* Multi-head attention; records name.{q,k,v,scores,masked,weights,head_out,merged,out}.
 * Returns out's index. */
static int attention(fctx *f, const gb_attn_w *a, const char *name, const attn_in *in)
{
	const gb_config *c = f->c;
	int H = c->n_head, K = c->n_kv_head, E = c->d_head, D = c->d_model;
	int Tq = in->Tq, Tk = in->Tk, qw = H * E, kw = K * E, group = H / K;
	const float *qs, *ks, *vs;
	int qst, kst, qo = 0, ko = 0, vo = 0;
	if (a->fused) {
		float *buf = scratch(f, (size_t)Tq * (qw + 2 * kw));
		lin(f, buf, in->xq, Tq, &a->qkv);
		qs = ks = vs = buf;
		qst = kst = qw + 2 * kw;
		ko = qw;
		vo = qw + kw;
	} else {
		float *qb = scratch(f, (size_t)Tq * qw), *kb = scratch(f, (size_t)Tk * kw), *vb = scratch(f, (size_t)Tk * kw);
		lin(f, qb, in->xq, Tq, &a->q);
		lin(f, kb, in->xkv, Tk, &a->k);
		lin(f, vb, in->xkv, Tk, &a->v);
		qs = qb, ks = kb, vs = vb;
		qst = qw;
		kst = kw;
	}
	float *q = tens(f, 3, SHAPE(H, Tq, E), AXES(GB_AX_HEAD, GB_AX_TOKEN, GB_AX_FEATURE), "%s.q", name);
	float *k = tens(f, 3, SHAPE(K, Tk, E), AXES(GB_AX_KV_HEAD, GB_AX_TOKEN, GB_AX_FEATURE), "%s.k", name);
	float *v = tens(f, 3, SHAPE(K, Tk, E), AXES(GB_AX_KV_HEAD, GB_AX_TOKEN, GB_AX_FEATURE), "%s.v", name);
	split_heads(q, qs, Tq, H, E, qst, qo);
	split_heads(k, ks, Tk, K, E, kst, ko);
	split_heads(v, vs, Tk, K, E, kst, vo);
	if (in->self && c->pos == GB_POS_ROPE) {
		for (int h = 0; h < H; h++)
			gb_rope(q + (size_t)h * Tq * E, Tq, E, 0, c->rope_theta, c->rope_pairs);
		for (int h = 0; h < K; h++)
			gb_rope(k + (size_t)h * Tk * E, Tk, E, 0, c->rope_theta, c->rope_pairs);
	}
	const unsigned char *hqk = AXES(GB_AX_HEAD, GB_AX_QUERY, GB_AX_KEY);
	float *sc = tens(f, 3, SHAPE(H, Tq, Tk), hqk, "%s.scores", name);
	float *mk = tens(f, 3, SHAPE(H, Tq, Tk), hqk, "%s.masked", name);
	float *wt = tens(f, 3, SHAPE(H, Tq, Tk), hqk, "%s.weights", name);
	float *ho = tens(f, 3, SHAPE(H, Tq, E), AXES(GB_AX_HEAD, GB_AX_TOKEN, GB_AX_FEATURE), "%s.head_out", name);
	float inv = (float)(1.0 / sqrt((double)E));
	int window = in->self ? c->window : 0, pad = c->pad_id;
	for (int h = 0; h < H; h++) {
		const float *kh = k + (size_t)(h / group) * Tk * E;
		float *s = sc + (size_t)h * Tq * Tk, *mm = mk + (size_t)h * Tq * Tk;
		f->k->matmul(s, q + (size_t)h * Tq * E, kh, NULL, Tq, E, Tk, 1);
		float slope = in->self && c->pos == GB_POS_ALIBI ? (float)gb_alibi_slope(h, H) : 0.0f;
		for (int i = 0; i < Tq; i++) {
			/* Causal and window masks leave one contiguous range of keys [lo, hi). */
			int lo = window ? i - window + 1 : 0, hi = in->causal ? i + 1 : Tk;
			if (window && i + window < hi)
				hi = i + window;
			lo = lo < 0 ? 0 : lo;
			hi = hi > Tk ? Tk : hi;
			const float *srow = s + (size_t)i * Tk;
			float *mrow = mm + (size_t)i * Tk;
			for (int j = 0; j < Tk; j++)
				mrow[j] = j >= lo && j < hi ? srow[j] * inv + slope * (float)(j - i) : -INFINITY;
			if (in->key_ids && pad >= 0)
				for (int j = lo; j < hi; j++)
					if (in->key_ids[j] == pad)
						mrow[j] = -INFINITY;
		}
	}
	memcpy(wt, mk, (size_t)H * Tq * Tk * sizeof(float));
	f->k->softmax(wt, H * Tq, Tk);
	for (int h = 0; h < H; h++) {
		float *o = ho + (size_t)h * Tq * E;
		f->k->matmul(o, wt + (size_t)h * Tq * Tk, v + (size_t)(h / group) * Tk * E, NULL, Tq, Tk, E, 0);
		if (in->scale && in->scale[h] != 1.0f)
			for (size_t i = 0; i < (size_t)Tq * E; i++)
				o[i] *= in->scale[h];
	}
	float *merged = tens(f, TF(Tq, qw), "%s.merged", name);
	for (int t = 0; t < Tq; t++)
		for (int h = 0; h < H; h++)
			memcpy(merged + (size_t)t * qw + h * E, ho + ((size_t)h * Tq + t) * E, (size_t)E * sizeof(float));
	float *out = tens(f, TF(Tq, D), "%s.out", name);
	lin(f, out, merged, Tq, &a->o);
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
			for (int t = 0; t < T; t++) {
				memcpy(gate + (size_t)t * F, buf + (size_t)t * 2 * F, (size_t)F * sizeof(float));
				memcpy(up + (size_t)t * F, buf + (size_t)t * 2 * F + F, (size_t)F * sizeof(float));
			}
		} else {
			gate = tens(f, 2, SHAPE(T, F), tf, "%s.gate", name);
			lin(f, gate, x, T, &w->gate);
			up = tens(f, 2, SHAPE(T, F), tf, "%s.up", name);
			lin(f, up, x, T, &w->up);
		}
		hidden = tens(f, 2, SHAPE(T, F), tf, "%s.hidden", name);
		f->k->activate(hidden, gate, (size_t)T * F, GB_ACT_SILU);
		f->k->mul(hidden, hidden, up, (size_t)T * F);
	} else {
		float *up = tens(f, 2, SHAPE(T, F), tf, "%s.up", name);
		lin(f, up, x, T, &w->up);
		hidden = tens(f, 2, SHAPE(T, F), tf, "%s.hidden", name);
		f->k->activate(hidden, up, (size_t)T * F, c->act);
	}
	float *out = tens(f, TF(T, D), "%s.out", name);
	lin(f, out, hidden, T, &w->down);
	return last(f);
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
		int n = norm(f, nw, data(f, x), T, nname);
		int o = sub(f, w, sname, data(f, n), T, arg);
		float *r = tens(f, TF(T, D), "%s", resid_name);
		memcpy(r, data(f, x), (size_t)T * D * sizeof(float));
		f->k->add(r, data(f, o), (size_t)T * D);
		return last(f);
	}
	int o = sub(f, w, sname, data(f, x), T, arg);
	float *in = tens(f, TF(T, D), "%s.in", nname);
	memcpy(in, data(f, x), (size_t)T * D * sizeof(float));
	f->k->add(in, data(f, o), (size_t)T * D);
	int n = norm(f, nw, in, T, nname);
	alias_idx(f, n, "%s", resid_name);
	return last(f);
}

static int sub_attn(fctx *f, const void *w, const char *name, const float *x, int T, const void *arg)
{
	attn_in in = *(const attn_in *)arg;
	in.xq = x;
	if (in.self)
		in.xkv = x;
	return attention(f, w, name, &in);
}

static int sub_ffn(fctx *f, const void *w, const char *name, const float *x, int T, const void *arg)
{
	return ffn(f, w, name, x, T);
}

typedef struct stack_in {
	const char *pfx;      /* "", "enc." or "dec." */
	const int *ids;
	int T, causal;
	const float *enc;     /* (Ts, D) encoder output, for cross-attention */
	int Ts;
	const int *src_ids;   /* (Ts), for cross-attention's padding mask */
	int ablate;           /* apply opts->head_scale to this stack's self-attention */
} stack_in;

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
	for (int i = 0; i < T; i++) {
		const float *row = f->m->tok_embed + (size_t)in->ids[i] * D;
		for (int d = 0; d < D; d++)
			e[(size_t)i * D + d] = row[d] * scale;
	}
	const float *pos = NULL;
	if (c->pos == GB_POS_SINUSOIDAL) {
		float *pe = tens(f, 2, SHAPE(T, D), AXES(GB_AX_POSITION, GB_AX_FEATURE), "%sembed.pos", p);
		gb_sinusoid(pe, T, D);
		pos = pe;
	} else if (c->pos == GB_POS_LEARNED) {
		float *pe = tens(f, 2, SHAPE(T, D), AXES(GB_AX_POSITION, GB_AX_FEATURE), "%sembed.pos", p);
		memcpy(pe, s->pos, (size_t)T * D * sizeof(float));
		pos = pe;
	}
	float *sum = tens(f, TF(T, D), "%sembed.sum", p);
	memcpy(sum, e, (size_t)T * D * sizeof(float));
	if (pos)
		f->k->add(sum, pos, (size_t)T * D);
	int x = last(f);

	char nn[48], sn[48], rn[48];
	for (int l = 0; l < s->n_layer; l++) {
		const gb_layer_w *L = &s->layers[l];
		attn_in self = { 0 };
		self.Tq = self.Tk = T;
		self.causal = in->causal && !(f->o && f->o->no_mask);
		self.self = 1;
		self.key_ids = in->ids;
		if (in->ablate && f->o && f->o->head_scale)
			self.scale = f->o->head_scale + (size_t)l * c->n_head;
		snprintf(nn, sizeof nn, "%sL%d.ln1", p, l + 1);
		snprintf(sn, sizeof sn, "%sL%d.attn", p, l + 1);
		snprintf(rn, sizeof rn, "%sL%d.resid.mid", p, l + 1);
		x = residual(f, x, &L->ln1, nn, sub_attn, &L->attn, sn, &self, T, rn);
		int fn = 2;
		if (in->enc) {
			attn_in cross = { 0 };
			cross.xkv = in->enc;
			cross.Tq = T;
			cross.Tk = in->Ts;
			cross.key_ids = in->src_ids;
			snprintf(nn, sizeof nn, "%sL%d.ln2", p, l + 1);
			snprintf(sn, sizeof sn, "%sL%d.cross", p, l + 1);
			snprintf(rn, sizeof rn, "%sL%d.resid.cross", p, l + 1);
			x = residual(f, x, &L->ln2, nn, sub_attn, &L->cross, sn, &cross, T, rn);
			fn = 3;
		}
		snprintf(nn, sizeof nn, "%sL%d.ln%d", p, l + 1, fn);
		snprintf(sn, sizeof sn, "%sL%d.ffn", p, l + 1);
		snprintf(rn, sizeof rn, "%sL%d.resid.post", p, l + 1);
		x = residual(f, x, fn == 3 ? &L->ln3 : &L->ln2, nn, sub_ffn, &L->ffn, sn, NULL, T, rn);
	}
	if (c->final_norm) {
		snprintf(nn, sizeof nn, "%slnf", p);
		alias_idx(f, x, "%s.in", nn);
		x = norm(f, &s->final, data(f, x), T, nn);
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
	fctx f;
	f.m = m;
	f.c = c;
	f.k = opts && opts->k ? opts->k : gb_kernels_fast();
	f.o = opts;
	f.tr = tr;
	f.textbook = c->textbook_ln || (opts && opts->textbook_ln);
	if (setjmp(f.oom)) {
		gb_trace_reset(tr);
		return gb_fail(err, "out of memory recording the trace");
	}
	int x, T;
	if (c->encdec) {
		stack_in se = { "enc.", ids, n, 0, NULL, 0, NULL, 0 };
		int enc = stack(&f, &m->enc, &se);
		stack_in sd = { "dec.", tgt, n_tgt, 1, data(&f, enc), n, ids, 1 };
		x = stack(&f, &m->dec, &sd);
		T = n_tgt;
	} else {
		stack_in sd = { "", ids, n, 1, NULL, 0, NULL, 1 };
		x = stack(&f, &m->dec, &sd);
		T = n;
	}
	const unsigned char *tv = AXES(GB_AX_TOKEN, GB_AX_VOCAB);
	float *logits = tens(&f, 2, SHAPE(T, c->vocab), tv, "logits");
	f.k->matmul(logits, data(&f, x), m->lm_head.w, NULL, T, c->d_model, c->vocab, m->lm_head.trans);
	float *probs = tens(&f, 2, SHAPE(T, c->vocab), tv, "probs");
	memcpy(probs, logits, (size_t)T * c->vocab * sizeof(float));
	f.k->softmax(probs, T, c->vocab);
	return 0;
}
