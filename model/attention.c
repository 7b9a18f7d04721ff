/* attention.c — multi-head attention, the forward pass's largest step: projections, RoPE, a
 * key/value cache's rows, scores, masks, softmax, each head's output and the merge. */
#include "model/forward_int.h"
#include "model/kernels/pool.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Where one run's heads take their queries, keys and values from: the projections (q at
 * columns qo + h E of qs, rows qst floats apart; k and v likewise in ks, vs), RoPE, and the
 * layer's cache, into the trace's q (H, Tq, E), k and v (K, Tk, E). */
typedef struct heads_in {
	const gb_config *c;
	const attn_in *in;
	const float *qs, *ks, *vs;  /* ks NULL: cached cross-attention, k and v read from the cache */
	int qst, kst, qo, ko, vo;
	float *q, *k, *v;
	int Tq, Tk;                 /* the rows computed here */
	/* When each head computes its own columns of the projections (the fast tables' matmul_part,
	 * a prefill): the table, and the linear layers that qs, ks and vs are the outputs of. */
	const gb_kernels *kp;
	const gb_linear *lq, *lk, *lv;
} heads_in;

/* Columns [off, off + n) of out (T, l->out) = x (T, l->in) W + b, on this thread: the numbers
 * the whole product has there. */
static void proj_cols(const heads_in *p, const float *out, const float *x, int T, const gb_linear *l, int off, int n)
{
	p->kp->matmul_part((float *)out, x, l->w, l->b, T, l->in, l->out, l->trans, 0, T, off, off + n);
}

/* Query head h: its columns, then RoPE. */
static void prep_q(const heads_in *p, int h)
{
	int E = p->c->d_head;
	float *q = p->q + (size_t)h * p->Tq * E;
	if (p->kp)
		proj_cols(p, p->qs, p->in->xq, p->Tq, p->lq, p->qo + h * E, E);
	for (int t = 0; t < p->Tq; t++)
		memcpy(q + (size_t)t * E, p->qs + (size_t)t * p->qst + p->qo + h * E, (size_t)E * sizeof(float));
	if (p->in->self && p->c->pos == GB_POS_ROPE)
		gb_rope(q, p->Tq, E, p->in->pos0, p->c);
}

/* Key/value head h: its columns (or a cached cross-attention's rows), RoPE on the keys, and
 * with a cache, self-attention's new rows appended to it at pos0. */
static void prep_kv(const heads_in *p, int h)
{
	const attn_in *in = p->in;
	int E = p->c->d_head, Tk = p->Tk;
	float *k = p->k + (size_t)h * Tk * E, *v = p->v + (size_t)h * Tk * E;
	if (!p->ks) { /* cached cross-attention: the trace shows the keys and values it used */
		memcpy(k, in->ck + h * in->cstride, (size_t)Tk * E * sizeof(float));
		memcpy(v, in->cv + h * in->cstride, (size_t)Tk * E * sizeof(float));
		return;
	}
	if (p->kp) {
		const float *x = in->xkv ? in->xkv : in->xq;
		proj_cols(p, p->ks, x, Tk, p->lk, p->ko + h * E, E);
		proj_cols(p, p->vs, x, Tk, p->lv, p->vo + h * E, E);
	}
	for (int t = 0; t < Tk; t++) {
		memcpy(k + (size_t)t * E, p->ks + (size_t)t * p->kst + p->ko + h * E, (size_t)E * sizeof(float));
		memcpy(v + (size_t)t * E, p->vs + (size_t)t * p->kst + p->vo + h * E, (size_t)E * sizeof(float));
	}
	if (in->self && p->c->pos == GB_POS_ROPE)
		gb_rope(k, Tk, E, in->pos0, p->c);
	if (in->ck) {
		memcpy(in->ck + h * in->cstride + (size_t)in->pos0 * E, k, (size_t)Tk * E * sizeof(float));
		memcpy(in->cv + h * in->cstride + (size_t)in->pos0 * E, v, (size_t)Tk * E * sizeof(float));
	}
}

/* Multi-head attention; records name.{q,k,v,scores,masked,weights,head_out,merged,out}.
 * q and k/v hold the rows computed in this run; scores and weights span every key attended to
 * (with a cache: the cached positions too). Returns out's index. */
/* One head's share of attention, a task of its own. */
typedef struct head_job {
	const gb_kernels *k;
	const attn_in *in;
	const float *q, *kall, *vall;
	size_t kstr;
	float *sc, *mk, *wt, *ho, *rc;
	int H, Tq, Tk, E, group, window, pad;
	float inv;
	int alibi;
	const float *relb;    /* (buckets, H) T5's bias, or NULL */
	float *rb;            /* (H, Tq, Tk) the bias each score got (the trace's rel_bias) */
	int nb, maxd;
	/* A whole run's task also prepares its head's inputs (prep) and merges its output: */
	const heads_in *hi;   /* where the inputs come from, or NULL (done before) */
	float *merged;        /* (Tq, H E) head h's columns h E .. h E + E - 1, or NULL */
} head_job;

/* Head h: scores q . k, the scaled and masked scores (causal, window, padding, ALiBi, T5's
 * bias), their softmax, how far back each query looks (rc may be NULL) and the weighted sum of
 * the values: qh (Tq, E) the head's queries, kh and vh its key/value head's rows, s, mm, w
 * (Tq, Tk), rb (Tq, Tk) when T5, rc (Tq), o (Tq, E). The whole run and a single head's replay
 * (gb_fwd_attention_head) both come here, so they compute the same numbers. */
static void head_at(const head_job *j, int h, const float *qh, const float *kh, const float *vh, float *s, float *mm,
                    float *w, float *rb, float *rc, float *o)
{
	const attn_in *in = j->in;
	int Tq = j->Tq, Tk = j->Tk, E = j->E;
	j->k->matmul(s, qh, kh, NULL, Tq, E, Tk, 1);
	float slope = j->alibi ? (float)gb_alibi_slope(h, j->H) : 0.0f;
	for (int i = 0; i < Tq; i++) {
		/* Causal and window masks leave one contiguous range of keys [lo, hi); ia is the
		 * query's position. */
		int ia = in->pos0 + i, window = j->window;
		int lo = window ? ia - window + 1 : 0, hi = in->causal ? ia + 1 : Tk;
		if (window && ia + window < hi)
			hi = ia + window;
		lo = lo < 0 ? 0 : lo;
		hi = hi > Tk ? Tk : hi;
		const float *srow = s + (size_t)i * Tk;
		float *mrow = mm + (size_t)i * Tk;
		for (int c = 0; c < Tk; c++)
			mrow[c] = c >= lo && c < hi ? srow[c] * j->inv + slope * (float)(c - ia) : -INFINITY;
		if (j->relb) {
			float *brow = rb + (size_t)i * Tk;
			for (int c = 0; c < Tk; c++) {
				brow[c] = j->relb[gb_t5_bucket(c - ia, in->bidir, j->nb, j->maxd) * j->H + h];
				mrow[c] += brow[c]; /* -inf stays -inf */
			}
		}
		if (in->key_ids && j->pad >= 0)
			for (int c = lo; c < hi; c++)
				if (in->key_ids[c] == j->pad)
					mrow[c] = -INFINITY;
		if (in->allow)
			for (int c = lo; c < hi; c++)
				if (!in->allow(in->allow_arg, ia, c))
					mrow[c] = -INFINITY;
	}
	memcpy(w, mm, (size_t)Tq * Tk * sizeof(float));
	j->k->softmax(w, Tq, Tk);
	for (int i = 0; rc && i < Tq; i++) { /* sum_c w_ic (i - c), positions counted from pos0 */
		double d = 0;
		for (int c = 0; c < Tk; c++)
			d += (double)w[(size_t)i * Tk + c] * (in->pos0 + i - c);
		rc[i] = (float)d;
	}
	j->k->matmul(o, w, vh, NULL, Tq, Tk, E, 0);
	if (in->scale && in->scale[h] != 1.0f)
		for (size_t i = 0; i < (size_t)Tq * E; i++)
			o[i] *= in->scale[h];
}

/* Head h of a whole run, a task of its own: its inputs (when j->hi: one query head per
 * key/value head, so no other task reads them), its share of attention, and its columns of
 * the merged output (when j->merged). */
static void one_head(void *arg, int h, int worker)
{
	const head_job *j = arg;
	size_t tt = (size_t)j->Tq * j->Tk, kv = (size_t)(h / j->group) * j->kstr;
	float *o = j->ho + (size_t)h * j->Tq * j->E;
	(void)worker;
	if (j->hi) {
		prep_q(j->hi, h);
		prep_kv(j->hi, h);
	}
	head_at(j, h, j->q + (size_t)h * j->Tq * j->E, j->kall + kv, j->vall + kv, j->sc + h * tt, j->mk + h * tt,
	        j->wt + h * tt, j->rb ? j->rb + h * tt : NULL, j->rc ? j->rc + (size_t)h * j->Tq : NULL, o);
	for (int t = 0; j->merged && t < j->Tq; t++)
		memcpy(j->merged + (size_t)t * j->H * j->E + (size_t)h * j->E, o + (size_t)t * j->E, (size_t)j->E * sizeof(float));
}

/* Linear attention's keys that padding leaves (Tk), or NULL when nothing is padded. */
static const unsigned char *keys_ok(fctx *f, const attn_in *in, int Tk)
{
	if (!in->key_ids || f->c->pad_id < 0)
		return NULL;
	unsigned char *ok = (unsigned char *)scratch(f, ((size_t)Tk + 3) / 4);
	for (int j = 0; j < Tk; j++)
		ok[j] = in->key_ids[j] != f->c->pad_id;
	return ok;
}

/* Head h of linear attention: fqh (Tq, E) its query features, fkh and vh (Tk, E) its key/value
 * head's key features and values, ok (Tk) the keys padding leaves (or NULL); the scores, the
 * masked scores and the weights they imply (Tq, Tk), how far back each query looks (rc (Tq),
 * or NULL) and the head's output o (Tq, E). The whole run and a single head's replay share it. */
static void linear_head_at(fctx *f, const attn_in *in, int h, int Tk, const float *fqh, const float *fkh,
                           const float *vh, const unsigned char *ok, float *s, float *m, float *w, float *rc, float *o)
{
	int Tq = in->Tq, E = f->c->d_head;
	f->k->matmul(s, fqh, fkh, NULL, Tq, E, Tk, 1);
	for (int i = 0; i < Tq; i++) {
		int hi = in->causal ? in->pos0 + i + 1 : Tk;
		double z = 0, d = 0;
		for (int j = 0; j < Tk; j++) {
			int on = j < hi && (!ok || ok[j]);
			m[(size_t)i * Tk + j] = on ? s[(size_t)i * Tk + j] : -INFINITY;
			z += on ? s[(size_t)i * Tk + j] : 0;
		}
		for (int j = 0; j < Tk; j++) {
			float v = m[(size_t)i * Tk + j];
			w[(size_t)i * Tk + j] = v == -INFINITY || !(z > 0) ? 0.0f : (float)(v / z);
			d += (double)w[(size_t)i * Tk + j] * (in->pos0 + i - j);
		}
		if (rc)
			rc[i] = (float)d;
	}
	f->k->linear_attn(o, fqh, fkh, vh, Tq, Tk, E, in->pos0, in->causal, ok);
	if (in->scale && in->scale[h] != 1.0f)
		for (size_t i = 0; i < (size_t)Tq * E; i++)
			o[i] *= in->scale[h];
}

/* Linear attention (self-attention of a config with attn_kind linear) on q (H, Tq, E) and the
 * keys and values attended to (kv head h's Tk rows at kall + h kstr): the feature maps, the
 * n x n weights they imply (for the views: scores, masked, weights, reach) and each head's
 * output through the kernel table (the reference's quadratic form, the fast tables' recurrent
 * one). Returns head_out. */
static float *linear_heads(fctx *f, const char *name, const attn_in *in, const float *q, const float *kall,
                           const float *vall, size_t kstr, int Tk)
{
	const gb_config *c = f->c;
	int H = c->n_head, K = c->n_kv_head, E = c->d_head, Tq = in->Tq, group = H / K;
	const unsigned char *hte = AXES(GB_AX_HEAD, GB_AX_TOKEN, GB_AX_FEATURE);
	float *fq = tens(f, 3, SHAPE(H, Tq, E), hte, "%s.q_feat", name);
	float *fk = tens(f, 3, SHAPE(K, Tk, E), AXES(GB_AX_KV_HEAD, GB_AX_KEY, GB_AX_FEATURE), "%s.k_feat", name);
	float *vv = scratch(f, (size_t)K * Tk * E);
	for (size_t i = 0; i < (size_t)H * Tq * E; i++)
		fq[i] = (float)gb_elu1(q[i]);
	for (int h = 0; h < K; h++)
		for (size_t i = 0; i < (size_t)Tk * E; i++) {
			fk[(size_t)h * Tk * E + i] = (float)gb_elu1(kall[h * kstr + i]);
			vv[(size_t)h * Tk * E + i] = vall[h * kstr + i];
		}
	const unsigned char *ok = keys_ok(f, in, Tk);
	const unsigned char *hqk = AXES(GB_AX_HEAD, GB_AX_QUERY, GB_AX_KEY);
	float *sc = tens(f, 3, SHAPE(H, Tq, Tk), hqk, "%s.scores", name);
	float *mk = tens(f, 3, SHAPE(H, Tq, Tk), hqk, "%s.masked", name);
	float *wt = tens(f, 3, SHAPE(H, Tq, Tk), hqk, "%s.weights", name);
	float *ho = tens(f, 3, SHAPE(H, Tq, E), hte, "%s.head_out", name);
	float *rc = tens(f, 2, SHAPE(H, Tq), AXES(GB_AX_HEAD, GB_AX_QUERY), "%s.reach", name);
	for (int h = 0; h < H; h++) {
		size_t kv = (size_t)(h / group) * Tk * E, tt = (size_t)Tq * Tk;
		linear_head_at(f, in, h, Tk, fq + (size_t)h * Tq * E, fk + kv, vv + kv, ok, sc + h * tt, mk + h * tt, wt + h * tt,
		               rc + (size_t)h * Tq, ho + (size_t)h * Tq * E);
	}
	return ho;
}

/* Softmax attention's heads: scores, masks and biases, weights, reach, each head's output and
 * the merged output (returned). p's inputs are prepared here too, in the heads' tasks when each
 * query head has a key/value head of its own (the fast tables), else first. */
static float *softmax_heads(fctx *f, const gb_attn_w *a, const char *name, const attn_in *in, const heads_in *p,
                            const float *kall, const float *vall, size_t kstr, int Tk)
{
	const float *q = p->q;
	const gb_config *c = f->c;
	int H = c->n_head, K = c->n_kv_head, E = c->d_head, Tq = in->Tq, group = H / K;
	const unsigned char *hqk = AXES(GB_AX_HEAD, GB_AX_QUERY, GB_AX_KEY);
	float *sc = tens(f, 3, SHAPE(H, Tq, Tk), hqk, "%s.scores", name);
	float *mk = tens(f, 3, SHAPE(H, Tq, Tk), hqk, "%s.masked", name);
	float *wt = tens(f, 3, SHAPE(H, Tq, Tk), hqk, "%s.weights", name);
	float *ho = tens(f, 3, SHAPE(H, Tq, E), AXES(GB_AX_HEAD, GB_AX_TOKEN, GB_AX_FEATURE), "%s.head_out", name);
	head_job j = { f->k, in, q, kall, vall, kstr, sc, mk, wt, ho, NULL, H, Tq, Tk, E, group,
	               in->self ? c->window : 0, c->pad_id, (float)(1.0 / sqrt((double)E)),
	               in->self && c->pos == GB_POS_ALIBI, NULL, NULL, c->rel_buckets, c->rel_max_dist, NULL, NULL };
	if (in->self && c->pos == GB_POS_T5 && a->rel_bias) {
		j.relb = a->rel_bias;
		j.rb = tens(f, 3, SHAPE(H, Tq, Tk), hqk, "%s.rel_bias", name);
	}
	if (in->self) /* how far back each query looks: cheap, kept by lazy runs */
		j.rc = tens(f, 2, SHAPE(H, Tq), AXES(GB_AX_HEAD, GB_AX_QUERY), "%s.reach", name);
	j.merged = tens(f, TF(Tq, H * E), "%s.merged", name);
	/* The heads are independent: on the fast tables they run side by side (the kernels they
	 * call then run on one thread each, with the same results), each copying its own inputs
	 * and outputs, so that one parallel region covers the whole of attention between the
	 * projections; the reference keeps one thread. Either way every number is computed by the
	 * same operations. */
	int par = f->k != gb_kernels_ref() && H >= 2;
	if (par && group == 1) {
		j.hi = p;
	} else {
		for (int h = 0; h < H; h++)
			prep_q(p, h);
		for (int h = 0; h < K; h++)
			prep_kv(p, h);
	}
	if (par)
		gb_pool_run(H, one_head, &j);
	else
		for (int h = 0; h < H; h++)
			one_head(&j, h, 0);
	return j.merged;
}

int gb_fwd_attention(fctx *f, const gb_attn_w *a, const char *name, const attn_in *in)
{
	const gb_config *c = f->c;
	int H = c->n_head, K = c->n_kv_head, E = c->d_head, D = c->d_model;
	int Tq = in->Tq, Tk = in->Tk, qw = H * E, kw = K * E;
	const float *qs, *ks = NULL, *vs = NULL;
	int qst, kst = kw, qo = 0, ko = 0, vo = 0;
	/* A prefill on the fast tables with a key/value head per query head, on several threads:
	 * each head's task computes its own columns of the projections (proj_cols) before its
	 * attention, one parallel region instead of two, and the columns a head reads are where its
	 * thread wrote them. (On one thread the whole products are a little faster; the numbers are
	 * the same either way.) */
	int own = f->k->matmul_part && gb_pool_threads() > 1 && Tq >= GB_ROWS_MIN && H >= 2 && K == H &&
	          !(in->self && c->attn_kind == GB_ATTN_LINEAR) &&
	          (a->fused ? a->qkv.w != NULL : a->q.w && (!in->xkv || (a->k.w && a->v.w)));
	if (own)
		gb_fwd_flush(f); /* what the heads read */
	if (a->fused) { /* self-attention only: q, k and v all come from xq */
		float *buf = scratch(f, (size_t)Tq * (qw + 2 * kw));
		if (!own)
			lin(f, buf, in->xq, Tq, &a->qkv);
		qs = ks = vs = buf;
		qst = kst = qw + 2 * kw;
		ko = qw;
		vo = qw + kw;
	} else {
		float *qb = scratch(f, (size_t)Tq * qw);
		qs = qb;
		qst = qw;
		if (in->xkv) {
			float *kb = scratch(f, (size_t)Tk * kw), *vb = scratch(f, (size_t)Tk * kw);
			/* self-attention: the three of one input, one parallel region where the table can */
			if (!own && in->xkv == in->xq && Tk == Tq)
				gb_fwd_lin_multi(f, (float *[]){ qb, kb, vb }, in->xq, Tq,
				                 (const gb_linear *[]){ &a->q, &a->k, &a->v }, 3);
			else if (!own) {
				lin(f, qb, in->xq, Tq, &a->q);
				lin(f, kb, in->xkv, Tk, &a->k);
				lin(f, vb, in->xkv, Tk, &a->v);
			}
			ks = kb, vs = vb;
		} else if (!own) {
			lin(f, qb, in->xq, Tq, &a->q);
		}
	}
	float *q = tens(f, 3, SHAPE(H, Tq, E), AXES(GB_AX_HEAD, GB_AX_TOKEN, GB_AX_FEATURE), "%s.q", name);
	float *k = tens(f, 3, SHAPE(K, Tk, E), AXES(GB_AX_KV_HEAD, GB_AX_TOKEN, GB_AX_FEATURE), "%s.k", name);
	float *v = tens(f, 3, SHAPE(K, Tk, E), AXES(GB_AX_KV_HEAD, GB_AX_TOKEN, GB_AX_FEATURE), "%s.v", name);
	heads_in p = { c, in, qs, ks, vs, qst, kst, qo, ko, vo, q, k, v, Tq, Tk, NULL, NULL, NULL, NULL };
	if (own) {
		p.kp = f->k;
		p.lq = a->fused ? &a->qkv : &a->q;
		p.lk = a->fused ? &a->qkv : &a->k;
		p.lv = a->fused ? &a->qkv : &a->v;
	}
	/* The keys attended to: kv head h's Tk rows at kall + h * kstr. With a cache, self-attention
	 * appends its new rows in place and reads every row so far (Tk grows to pos0 + Tk). */
	const float *kall = k, *vall = v;
	size_t kstr = (size_t)Tk * E;
	if (in->ck && ks) {
		kall = in->ck, vall = in->cv, kstr = in->cstride;
		Tk = in->pos0 + Tk;
	}
	float *merged;
	if (in->self && c->attn_kind == GB_ATTN_LINEAR) {
		for (int h = 0; h < H; h++)
			prep_q(&p, h);
		for (int h = 0; h < K; h++)
			prep_kv(&p, h);
		float *ho = linear_heads(f, name, in, q, kall, vall, kstr, Tk);
		merged = tens(f, TF(Tq, qw), "%s.merged", name);
		for (int t = 0; t < Tq; t++)
			for (int h = 0; h < H; h++)
				memcpy(merged + (size_t)t * qw + h * E, ho + ((size_t)h * Tq + t) * E, (size_t)E * sizeof(float));
	} else {
		merged = softmax_heads(f, a, name, in, &p, kall, vall, kstr, Tk);
	}
	float *out = tens(f, TF(Tq, D), "%s.out", name);
	gb_fwd_lin_rows(f, out, merged, Tq, &a->o); /* with the residual add and norm after it */
	return last(f);
}


/* Columns [off, off + n) of x W (+ b) into out (T, n): the same numbers as those columns of
 * the whole product (every kernel computes each output from its row and column alone). */
static void lin_cols(fctx *f, float *out, const float *x, int T, const gb_linear *l, int off, int n)
{
	gb_linear p = *l;
	p.out = n;
	p.b = l->b ? l->b + off : NULL;
	if (l->trans) { /* (out, in): the columns are rows, one piece of memory */
		if (l->w16)
			p.w16 = l->w16 + (size_t)off * l->in;
		else
			p.w = l->w + (size_t)off * l->in;
	} else if (l->w16) { /* (in, out): the columns gathered into a matrix of their own */
		uint16_t *w = (uint16_t *)scratch(f, ((size_t)l->in * n + 1) / 2);
		for (int i = 0; i < l->in; i++)
			memcpy(w + (size_t)i * n, l->w16 + (size_t)i * l->out + off, (size_t)n * sizeof *w);
		p.w16 = w;
	} else {
		float *w = scratch(f, (size_t)l->in * n);
		for (int i = 0; i < l->in; i++)
			memcpy(w + (size_t)i * n, l->w + (size_t)i * l->out + off, (size_t)n * sizeof *w);
		p.w = w;
	}
	lin(f, out, x, T, &p);
}

int gb_fwd_attention_head(fctx *f, const gb_attn_w *a, const char *name, const attn_in *in, int h)
{
	const gb_config *c = f->c;
	int H = c->n_head, K = c->n_kv_head, E = c->d_head, Tq = in->Tq, Tk = in->Tk, group = H / K, kh = h / group;
	int qw = H * E, kw = K * E;
	const unsigned char *hte = AXES(GB_AX_HEAD, GB_AX_TOKEN, GB_AX_FEATURE);
	const unsigned char *kte = AXES(GB_AX_KV_HEAD, GB_AX_TOKEN, GB_AX_FEATURE);
	const unsigned char *hqk = AXES(GB_AX_HEAD, GB_AX_QUERY, GB_AX_KEY);
	float *q = tens(f, 3, SHAPE(1, Tq, E), hte, "%s.q", name);
	float *k = tens(f, 3, SHAPE(1, Tk, E), kte, "%s.k", name);
	float *v = tens(f, 3, SHAPE(1, Tk, E), kte, "%s.v", name);
	if (a->fused) {
		lin_cols(f, q, in->xq, Tq, &a->qkv, h * E, E);
		lin_cols(f, k, in->xq, Tk, &a->qkv, qw + kh * E, E);
		lin_cols(f, v, in->xq, Tk, &a->qkv, qw + kw + kh * E, E);
	} else {
		lin_cols(f, q, in->xq, Tq, &a->q, h * E, E);
		lin_cols(f, k, in->xkv, Tk, &a->k, kh * E, E);
		lin_cols(f, v, in->xkv, Tk, &a->v, kh * E, E);
	}
	if (in->self && c->pos == GB_POS_ROPE) {
		gb_rope(q, Tq, E, in->pos0, c);
		gb_rope(k, Tk, E, in->pos0, c);
	}
	if (in->self && c->attn_kind == GB_ATTN_LINEAR) {
		float *fq = tens(f, 3, SHAPE(1, Tq, E), hte, "%s.q_feat", name);
		float *fk = tens(f, 3, SHAPE(1, Tk, E), AXES(GB_AX_KV_HEAD, GB_AX_KEY, GB_AX_FEATURE), "%s.k_feat", name);
		for (size_t i = 0; i < (size_t)Tq * E; i++)
			fq[i] = (float)gb_elu1(q[i]);
		for (size_t i = 0; i < (size_t)Tk * E; i++)
			fk[i] = (float)gb_elu1(k[i]);
		const unsigned char *ok = keys_ok(f, in, Tk);
		float *sc = tens(f, 3, SHAPE(1, Tq, Tk), hqk, "%s.scores", name);
		float *mk = tens(f, 3, SHAPE(1, Tq, Tk), hqk, "%s.masked", name);
		float *wt = tens(f, 3, SHAPE(1, Tq, Tk), hqk, "%s.weights", name);
		float *ho = tens(f, 3, SHAPE(1, Tq, E), hte, "%s.head_out", name);
		linear_head_at(f, in, h, Tk, fq, fk, v, ok, sc, mk, wt, NULL, ho);
		return 0;
	}
	float *sc = tens(f, 3, SHAPE(1, Tq, Tk), hqk, "%s.scores", name);
	float *mk = tens(f, 3, SHAPE(1, Tq, Tk), hqk, "%s.masked", name);
	float *wt = tens(f, 3, SHAPE(1, Tq, Tk), hqk, "%s.weights", name);
	float *ho = tens(f, 3, SHAPE(1, Tq, E), hte, "%s.head_out", name);
	head_job j = { f->k, in, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, H, Tq, Tk, E, group,
	               in->self ? c->window : 0, c->pad_id, (float)(1.0 / sqrt((double)E)),
	               in->self && c->pos == GB_POS_ALIBI, NULL, NULL, c->rel_buckets, c->rel_max_dist, NULL, NULL };
	float *rb = NULL;
	if (in->self && c->pos == GB_POS_T5 && a->rel_bias) {
		j.relb = a->rel_bias;
		rb = tens(f, 3, SHAPE(1, Tq, Tk), hqk, "%s.rel_bias", name);
	}
	head_at(&j, h, q, k, v, sc, mk, wt, rb, NULL, ho);
	return 0;
}
