/* grad_model_impl.h — the second half of grad_impl.h: the whole-model forward and backward
 * (gb_model_fwd_R, gb_model_bwd_R of grad_ops.h) over the same R. grad_impl.h includes it at
 * its end, after the operations it calls and the helpers and macros (FN, HOT, mm, alr) it
 * uses; built as part of grad_f.c and grad_d.c. Not a header for anyone else. */
#ifndef FN
#error "grad_model_impl.h is included by grad_impl.h, at its end"
#endif

/* ---- the whole model ---- */

enum { SUB_SELF, SUB_CROSS, SUB_FFN };

typedef struct mx {
	const gb_model *m;
	const gb_config *c;
	const R *P;           /* parameters, laid out as m->owned */
	R *G;                 /* gradients, same layout */
	const gb_kernels *k;
	gb_ws *ws;
	int textbook;
	const R *rc, *rs;     /* RoPE tables (T, E/2) of the stack being run */
	double aux_scale;     /* the weight of the load-balancing loss in the loss differentiated */
	double aux;           /* the forward's load-balancing loss, summed over layers */
} mx;

/* A parameter's values and gradient: model pointers index m->owned, so the same offset
 * finds them in P and G. */
static const R *pv(const mx *x, const float *p) { return p ? x->P + (p - x->m->owned) : NULL; }
static R *gv(const mx *x, const float *p) { return p && x->G ? x->G + (p - x->m->owned) : NULL; }
static R *al(const mx *x, size_t n) { return alr(x->ws, n); }

/* dst (H, T, E) = columns [off, off + H E) of src (T rows of `stride`). */
static void split_heads(R *dst, const R *src, int T, int H, int E, int stride, int off)
{
	for (int h = 0; h < H; h++)
		for (int t = 0; t < T; t++)
			memcpy(dst + ((size_t)h * T + t) * E, src + (size_t)t * stride + off + h * E, (size_t)E * sizeof(R));
}

/* The inverse: columns [off, off + H E) of dst (T rows of `stride`) = src (H, T, E). */
static void merge_heads(R *dst, const R *src, int T, int H, int E, int stride, int off)
{
	for (int h = 0; h < H; h++)
		for (int t = 0; t < T; t++)
			memcpy(dst + (size_t)t * stride + off + h * E, src + ((size_t)h * T + t) * E, (size_t)E * sizeof(R));
}

static gb_attn_spec attn_spec(const mx *x, int Tq, int Tk, int self, int causal, const int *key_ids)
{
	const gb_config *c = x->c;
	gb_attn_spec s = { 0 };
	s.H = c->n_head;
	s.K = c->n_kv_head;
	s.E = c->d_head;
	s.Tq = Tq;
	s.Tk = Tk;
	s.causal = causal;
	s.window = self ? c->window : 0;
	s.alibi = self && c->pos == GB_POS_ALIBI;
	if (self && c->pos == GB_POS_T5) { /* an encoder's buckets look both ways */
		int *b = gb_ws_alloc(x->ws, (size_t)Tq * Tk * sizeof *b);
		for (int i = 0; i < Tq; i++)
			for (int j = 0; j < Tk; j++)
				b[(size_t)i * Tk + j] = gb_t5_bucket(j - i, !causal, c->rel_buckets, c->rel_max_dist);
		s.bucket = b;
	}
	if (key_ids && c->pad_id >= 0) {
		unsigned char *mk = gb_ws_alloc(x->ws, (size_t)Tk);
		int any = 0;
		for (int j = 0; j < Tk; j++)
			any |= mk[j] = key_ids[j] == c->pad_id;
		s.key_masked = any ? mk : NULL;
	}
	return s;
}

static void f_norm(const mx *x, const gb_normw *w, const R *in, int T, norm_act *na)
{
	const gb_config *c = x->c;
	int D = c->d_model;
	R *out = al(x, (size_t)T * D);
	memset(na, 0, sizeof *na);
	na->in = in;
	na->out = out;
	if (c->norm == GB_NORM_RMS) {
		R *rms = al(x, (size_t)T);
		FN(gb_rmsnorm_fwd)(out, rms, in, pv(x, w->g), T, D, c->norm_eps);
		na->rms = rms;
	} else {
		R *mean = al(x, (size_t)T), *var = al(x, (size_t)T);
		FN(gb_layernorm_fwd)(out, mean, var, in, pv(x, w->g), pv(x, w->b), T, D, c->norm_eps, x->textbook);
		na->mean = mean;
		na->var = var;
	}
}

static void b_norm(const mx *x, const gb_normw *w, const norm_act *na, const R *dy, R *dx, int acc, int T)
{
	const gb_config *c = x->c;
	if (c->norm == GB_NORM_RMS)
		FN(gb_rmsnorm_bwd)(dx, acc, gv(x, w->g), dy, na->in, na->rms, pv(x, w->g), T, c->d_model);
	else
		FN(gb_layernorm_bwd)(dx, acc, gv(x, w->g), gv(x, w->b), dy, na->in, na->mean, na->var, pv(x, w->g), T,
		                     c->d_model, c->norm_eps, x->textbook);
}

typedef struct att_io {
	const R *xq, *xkv;    /* (Tq, D), (Tk, D) */
	int Tq, Tk, self, causal;
	const int *key_ids;   /* (Tk) */
} att_io;

static const R *f_attn(const mx *x, const gb_attn_w *a, const att_io *io, attn_act *aa)
{
	const gb_config *c = x->c;
	int H = c->n_head, K = c->n_kv_head, E = c->d_head, D = c->d_model, Tq = io->Tq, Tk = io->Tk;
	int qw = H * E, kw = K * E;
	R *q = al(x, (size_t)H * Tq * E), *kk = al(x, (size_t)K * Tk * E), *v = al(x, (size_t)K * Tk * E);
	if (a->fused) {
		int st = qw + 2 * kw;
		R *buf = al(x, (size_t)Tq * st);
		FN(gb_linear_fwd)(x->k, buf, io->xq, pv(x, a->qkv.w), pv(x, a->qkv.b), Tq, D, st, a->qkv.trans);
		split_heads(q, buf, Tq, H, E, st, 0);
		split_heads(kk, buf, Tk, K, E, st, qw);
		split_heads(v, buf, Tk, K, E, st, qw + kw);
	} else {
		R *qb = al(x, (size_t)Tq * qw), *kb = al(x, (size_t)Tk * kw), *vb = al(x, (size_t)Tk * kw);
		FN(gb_linear_fwd)(x->k, qb, io->xq, pv(x, a->q.w), pv(x, a->q.b), Tq, D, qw, a->q.trans);
		FN(gb_linear_fwd)(x->k, kb, io->xkv, pv(x, a->k.w), pv(x, a->k.b), Tk, D, kw, a->k.trans);
		FN(gb_linear_fwd)(x->k, vb, io->xkv, pv(x, a->v.w), pv(x, a->v.b), Tk, D, kw, a->v.trans);
		split_heads(q, qb, Tq, H, E, qw, 0);
		split_heads(kk, kb, Tk, K, E, kw, 0);
		split_heads(v, vb, Tk, K, E, kw, 0);
	}
	if (io->self && c->pos == GB_POS_ROPE) {
		for (int h = 0; h < H; h++)
			FN(gb_rope_apply)(q + (size_t)h * Tq * E, x->rc, x->rs, Tq, E, 1);
		for (int h = 0; h < K; h++)
			FN(gb_rope_apply)(kk + (size_t)h * Tk * E, x->rc, x->rs, Tk, E, 1);
	}
	gb_attn_spec s = attn_spec(x, Tq, Tk, io->self, io->causal, io->key_ids);
	R *w = al(x, (size_t)H * Tq * Tk), *ho = al(x, (size_t)H * Tq * E), *merged = al(x, (size_t)Tq * qw);
	if (io->self && c->attn_kind == GB_ATTN_LINEAR)
		FN(gb_linattn_fwd)(x->k, x->ws, &s, w, ho, q, kk, v);
	else
		FN(gb_attn_fwd)(x->k, x->ws, &s, w, ho, q, kk, v, pv(x, a->rel_bias));
	merge_heads(merged, ho, Tq, H, E, qw, 0);
	R *out = al(x, (size_t)Tq * D);
	FN(gb_linear_fwd)(x->k, out, merged, pv(x, a->o.w), pv(x, a->o.b), Tq, qw, D, a->o.trans);
	aa->q = q;
	aa->k = kk;
	aa->v = v;
	aa->w = w;
	aa->merged = merged;
	return out;
}

/* d_out (Tq, D) -> dxq (Tq, D) overwritten; dxkv (Tk, D) added to (cross-attention's keys and
 * values), or NULL for self-attention, whose key/value input is the query input. */
static void b_attn(const mx *x, const gb_attn_w *a, const att_io *io, const attn_act *aa, const R *d_out,
                   R *dxq, R *dxkv)
{
	const gb_config *c = x->c;
	int H = c->n_head, K = c->n_kv_head, E = c->d_head, D = c->d_model, Tq = io->Tq, Tk = io->Tk;
	int qw = H * E, kw = K * E;
	size_t mark = gb_ws_mark(x->ws);
	R *dm = al(x, (size_t)Tq * qw);
	FN(gb_linear_bwd)(x->k, x->ws, dm, 0, gv(x, a->o.w), gv(x, a->o.b), d_out, aa->merged, pv(x, a->o.w), Tq, qw, D,
	                  a->o.trans);
	R *dho = al(x, (size_t)H * Tq * E);
	split_heads(dho, dm, Tq, H, E, qw, 0);
	R *dq = al(x, (size_t)H * Tq * E), *dk = al(x, (size_t)K * Tk * E), *dv = al(x, (size_t)K * Tk * E);
	gb_attn_spec s = attn_spec(x, Tq, Tk, io->self, io->causal, io->key_ids);
	if (io->self && c->attn_kind == GB_ATTN_LINEAR)
		FN(gb_linattn_bwd)(x->k, x->ws, &s, dq, dk, dv, dho, aa->q, aa->k, aa->v, aa->w);
	else
		FN(gb_attn_bwd)(x->k, x->ws, &s, dq, dk, dv, dho, aa->q, aa->k, aa->v, aa->w, gv(x, a->rel_bias));
	if (io->self && c->pos == GB_POS_ROPE) {
		for (int h = 0; h < H; h++)
			FN(gb_rope_apply)(dq + (size_t)h * Tq * E, x->rc, x->rs, Tq, E, -1);
		for (int h = 0; h < K; h++)
			FN(gb_rope_apply)(dk + (size_t)h * Tk * E, x->rc, x->rs, Tk, E, -1);
	}
	if (a->fused) {
		int st = qw + 2 * kw;
		R *d = al(x, (size_t)Tq * st);
		merge_heads(d, dq, Tq, H, E, st, 0);
		merge_heads(d, dk, Tk, K, E, st, qw);
		merge_heads(d, dv, Tk, K, E, st, qw + kw);
		FN(gb_linear_bwd)(x->k, x->ws, dxq, 0, gv(x, a->qkv.w), gv(x, a->qkv.b), d, io->xq, pv(x, a->qkv.w), Tq, D,
		                  st, a->qkv.trans);
	} else {
		R *dqr = al(x, (size_t)Tq * qw), *dkr = al(x, (size_t)Tk * kw), *dvr = al(x, (size_t)Tk * kw);
		merge_heads(dqr, dq, Tq, H, E, qw, 0);
		merge_heads(dkr, dk, Tk, K, E, kw, 0);
		merge_heads(dvr, dv, Tk, K, E, kw, 0);
		R *kvt = dxkv ? dxkv : dxq;
		FN(gb_linear_bwd)(x->k, x->ws, dxq, 0, gv(x, a->q.w), gv(x, a->q.b), dqr, io->xq, pv(x, a->q.w), Tq, D, qw,
		                  a->q.trans);
		FN(gb_linear_bwd)(x->k, x->ws, kvt, 1, gv(x, a->k.w), gv(x, a->k.b), dkr, io->xkv, pv(x, a->k.w), Tk, D, kw,
		                  a->k.trans);
		FN(gb_linear_bwd)(x->k, x->ws, kvt, 1, gv(x, a->v.w), gv(x, a->v.b), dvr, io->xkv, pv(x, a->v.w), Tk, D, kw,
		                  a->v.trans);
	}
	gb_ws_release(x->ws, mark);
}

static const R *f_ffn(const mx *x, const gb_ffn_w *w, const R *in, int T, ffn_act *fa)
{
	const gb_config *c = x->c;
	int F = c->d_ffn, D = c->d_model;
	R *hidden = al(x, (size_t)T * F);
	memset(fa, 0, sizeof *fa);
	if (c->ffn == GB_FFN_GATED) {
		R *gate = al(x, (size_t)T * F), *up = al(x, (size_t)T * F);
		if (w->fused_gate) {
			R *buf = al(x, (size_t)T * 2 * F);
			FN(gb_linear_fwd)(x->k, buf, in, pv(x, w->up.w), pv(x, w->up.b), T, D, 2 * F, w->up.trans);
			for (int t = 0; t < T; t++) {
				memcpy(gate + (size_t)t * F, buf + (size_t)t * 2 * F, (size_t)F * sizeof(R));
				memcpy(up + (size_t)t * F, buf + (size_t)t * 2 * F + F, (size_t)F * sizeof(R));
			}
		} else {
			FN(gb_linear_fwd)(x->k, gate, in, pv(x, w->gate.w), pv(x, w->gate.b), T, D, F, w->gate.trans);
			FN(gb_linear_fwd)(x->k, up, in, pv(x, w->up.w), pv(x, w->up.b), T, D, F, w->up.trans);
		}
		FN(gb_swiglu_fwd)(hidden, gate, up, (size_t)T * F);
		fa->gate = gate;
		fa->up = up;
	} else {
		R *up = al(x, (size_t)T * F);
		FN(gb_linear_fwd)(x->k, up, in, pv(x, w->up.w), pv(x, w->up.b), T, D, F, w->up.trans);
		FN(gb_act_fwd)(hidden, up, (size_t)T * F, c->act);
		fa->up = up;
	}
	fa->hidden = hidden;
	R *out = al(x, (size_t)T * D);
	FN(gb_linear_fwd)(x->k, out, hidden, pv(x, w->down.w), pv(x, w->down.b), T, F, D, w->down.trans);
	return out;
}

static void b_ffn(const mx *x, const gb_ffn_w *w, const ffn_act *fa, const R *d_out, const R *in, int T, R *dx)
{
	const gb_config *c = x->c;
	int F = c->d_ffn, D = c->d_model;
	size_t mark = gb_ws_mark(x->ws);
	R *dh = al(x, (size_t)T * F);
	FN(gb_linear_bwd)(x->k, x->ws, dh, 0, gv(x, w->down.w), gv(x, w->down.b), d_out, fa->hidden, pv(x, w->down.w), T,
	                  F, D, w->down.trans);
	if (c->ffn == GB_FFN_GATED) {
		R *dg = al(x, (size_t)T * F), *du = al(x, (size_t)T * F);
		FN(gb_swiglu_bwd)(dg, du, dh, fa->gate, fa->up, (size_t)T * F);
		if (w->fused_gate) {
			R *d = al(x, (size_t)T * 2 * F);
			for (int t = 0; t < T; t++) {
				memcpy(d + (size_t)t * 2 * F, dg + (size_t)t * F, (size_t)F * sizeof(R));
				memcpy(d + (size_t)t * 2 * F + F, du + (size_t)t * F, (size_t)F * sizeof(R));
			}
			FN(gb_linear_bwd)(x->k, x->ws, dx, 0, gv(x, w->up.w), gv(x, w->up.b), d, in, pv(x, w->up.w), T, D, 2 * F,
			                  w->up.trans);
		} else {
			FN(gb_linear_bwd)(x->k, x->ws, dx, 0, gv(x, w->gate.w), gv(x, w->gate.b), dg, in, pv(x, w->gate.w), T, D,
			                  F, w->gate.trans);
			FN(gb_linear_bwd)(x->k, x->ws, dx, 1, gv(x, w->up.w), gv(x, w->up.b), du, in, pv(x, w->up.w), T, D, F,
			                  w->up.trans);
		}
	} else {
		FN(gb_act_bwd)(dh, dh, fa->up, (size_t)T * F, c->act);
		FN(gb_linear_bwd)(x->k, x->ws, dx, 0, gv(x, w->up.w), gv(x, w->up.b), dh, in, pv(x, w->up.w), T, D, F,
		                  w->up.trans);
	}
	gb_ws_release(x->ws, mark);
}

/* ---- a mixture of experts (model/moe.c's forward) ---- */

/* Rows of expert e: the tokens that chose it, into rows (T); returns their number. */
static int expert_rows(const R *chosen, int T, int K, int e, int *rows)
{
	int n = 0;
	for (int t = 0; t < T; t++)
		for (int i = 0; i < K; i++)
			if ((int)chosen[(size_t)t * K + i] == e) {
				rows[n++] = t;
				break;
			}
	return n;
}

/* The load-balancing loss E Σ_e f_e P_e of a layer: f the share of choices, P the mean
 * router probability. */
static double aux_loss(const gb_config *c, const R *load, const R *probs, int T)
{
	double sum = 0;
	for (int e = 0; e < c->n_experts; e++) {
		double P = 0;
		for (int t = 0; t < T; t++)
			P += probs[(size_t)t * c->n_experts + e];
		sum += load[e] * P / T;
	}
	return c->n_experts * sum;
}

static const R *f_moe(mx *x, const gb_moe_w *w, const R *in, int T, ffn_act *fa)
{
	const gb_config *c = x->c;
	int E = c->n_experts, K = c->top_k, F = c->d_ffn, D = c->d_model, gated = c->ffn == GB_FFN_GATED;
	memset(fa, 0, sizeof *fa);
	R *p = al(x, (size_t)T * E), *g = al(x, (size_t)T * E), *ch = al(x, (size_t)T * K), *load = al(x, (size_t)E);
	FN(gb_linear_fwd)(x->k, p, in, pv(x, w->router.w), NULL, T, D, E, w->router.trans);
	FN(gb_softmax_fwd)(p, T, E);
	memset(g, 0, (size_t)T * E * sizeof *g);
	memset(load, 0, (size_t)E * sizeof *load);
	for (int t = 0; t < T; t++) { /* the engine's routing (moe.c), on this pass's probabilities */
		int pick[2];
		double pt[GB_MAX_EXPERTS], gate[2];
		for (int e = 0; e < E; e++)
			pt[e] = p[(size_t)t * E + e];
		gb_moe_route(pt, E, K, c->norm_topk, pick, gate);
		for (int i = 0; i < K; i++) {
			g[(size_t)t * E + pick[i]] = (R)gate[i];
			ch[(size_t)t * K + i] = (R)pick[i];
			load[pick[i]] += (R)1 / (R)(T * K);
		}
	}
	size_t etf = (size_t)E * T * F;
	R *up = al(x, etf), *gt = gated ? al(x, etf) : NULL, *hid = al(x, etf), *eo = al(x, (size_t)E * T * D);
	R *out = al(x, (size_t)T * D), *xs = al(x, (size_t)T * D);
	int *rows = gb_ws_alloc(x->ws, (size_t)T * sizeof *rows);
	memset(up, 0, etf * sizeof *up);
	memset(hid, 0, etf * sizeof *hid);
	if (gt)
		memset(gt, 0, etf * sizeof *gt);
	memset(eo, 0, (size_t)E * T * D * sizeof *eo);
	memset(out, 0, (size_t)T * D * sizeof *out);
	for (int e = 0; e < E; e++) {
		int n = expert_rows(ch, T, K, e, rows);
		if (!n)
			continue;
		size_t mark = gb_ws_mark(x->ws);
		for (int i = 0; i < n; i++)
			memcpy(xs + (size_t)i * D, in + (size_t)rows[i] * D, (size_t)D * sizeof *xs);
		ffn_act ea;
		const R *y = f_ffn(x, &w->experts[e], xs, n, &ea);
		for (int i = 0; i < n; i++) {
			size_t at = (size_t)e * T + rows[i];
			memcpy(up + at * F, ea.up + (size_t)i * F, (size_t)F * sizeof *up);
			if (gt)
				memcpy(gt + at * F, ea.gate + (size_t)i * F, (size_t)F * sizeof *gt);
			memcpy(hid + at * F, ea.hidden + (size_t)i * F, (size_t)F * sizeof *hid);
			memcpy(eo + at * D, y + (size_t)i * D, (size_t)D * sizeof *eo);
			R gw = g[(size_t)rows[i] * E + e];
			for (int d = 0; d < D; d++)
				out[(size_t)rows[i] * D + d] += gw * y[(size_t)i * D + d];
		}
		gb_ws_release(x->ws, mark);
	}
	fa->probs = p;
	fa->gates = g;
	fa->chosen = ch;
	fa->load = load;
	fa->up = up;
	fa->gate = gt;
	fa->hidden = hid;
	fa->eout = eo;
	return out;
}

/* d_out (T, D) -> dx (T, D) overwritten: each expert's backward on its rows, scaled by their
 * gate weights; the gate weights' gradient d_out . expert_out through the renormalisation (or
 * none, Switch's) to the router's probabilities, plus the load-balancing loss's
 * aux_scale E f_e / T (f counts choices: a constant), then the softmax and the router. */
static void b_moe(const mx *x, const gb_moe_w *w, const ffn_act *fa, const R *d_out, const R *in, int T, R *dx)
{
	const gb_config *c = x->c;
	int E = c->n_experts, K = c->top_k, F = c->d_ffn, D = c->d_model, gated = c->ffn == GB_FFN_GATED;
	size_t mark = gb_ws_mark(x->ws);
	R *dg = al(x, (size_t)T * E), *dys = al(x, (size_t)T * D), *xs = al(x, (size_t)T * D), *dxs = al(x, (size_t)T * D);
	R *us = al(x, (size_t)T * F), *gs = al(x, (size_t)T * F), *hs = al(x, (size_t)T * F);
	int *rows = gb_ws_alloc(x->ws, (size_t)T * sizeof *rows);
	memset(dg, 0, (size_t)T * E * sizeof *dg);
	memset(dx, 0, (size_t)T * D * sizeof *dx);
	for (int e = 0; e < E; e++) {
		int n = expert_rows(fa->chosen, T, K, e, rows);
		for (int i = 0; i < n; i++) {
			int t = rows[i];
			size_t at = (size_t)e * T + t;
			R gw = fa->gates[(size_t)t * E + e];
			double dot = 0;
			for (int d = 0; d < D; d++) {
				R dy = d_out[(size_t)t * D + d];
				dot += dy * fa->eout[at * D + d];
				dys[(size_t)i * D + d] = gw * dy;
			}
			dg[(size_t)t * E + e] = (R)dot;
			memcpy(xs + (size_t)i * D, in + (size_t)t * D, (size_t)D * sizeof *xs);
			memcpy(us + (size_t)i * F, fa->up + at * F, (size_t)F * sizeof *us);
			if (gated)
				memcpy(gs + (size_t)i * F, fa->gate + at * F, (size_t)F * sizeof *gs);
			memcpy(hs + (size_t)i * F, fa->hidden + at * F, (size_t)F * sizeof *hs);
		}
		if (!n)
			continue;
		ffn_act ea = { 0 };
		ea.up = us;
		ea.gate = gated ? gs : NULL;
		ea.hidden = hs;
		b_ffn(x, &w->experts[e], &ea, dys, xs, n, dxs);
		for (int i = 0; i < n; i++)
			vadd(dx + (size_t)rows[i] * D, dxs + (size_t)i * D, (size_t)D);
	}
	/* gate weights -> probabilities -> router logits (dg becomes dp, then dz, in place) */
	for (int t = 0; t < T; t++) {
		R *dr = dg + (size_t)t * E;
		const R *pt = fa->probs + (size_t)t * E, *gt = fa->gates + (size_t)t * E, *ct = fa->chosen + (size_t)t * K;
		if (c->norm_topk) {
			double S = 0, gd = 0;
			for (int i = 0; i < K; i++) {
				int e = (int)ct[i];
				S += pt[e];
				gd += gt[e] * dr[e];
			}
			for (int i = 0; i < K; i++) {
				int e = (int)ct[i];
				dr[e] = (R)((dr[e] - gd) / S);
			}
		}
		if (x->aux_scale != 0)
			for (int e = 0; e < E; e++)
				dr[e] += (R)(x->aux_scale * E * fa->load[e] / T);
	}
	FN(gb_softmax_bwd)(dg, dg, fa->probs, T, E);
	FN(gb_linear_bwd)(x->k, x->ws, dx, 1, gv(x, w->router.w), NULL, dg, in, pv(x, w->router.w), T, D, E,
	                  w->router.trans);
	gb_ws_release(x->ws, mark);
}

/* What a sub-layer reads besides the stream: its weights, and for attention the keys' side. */
typedef struct sub_io {
	int kind;             /* SUB_* */
	const gb_normw *nw;
	const gb_attn_w *aw;
	const gb_ffn_w *fw;
	const gb_moe_w *mw;   /* the FFN's mixture of experts, when the config has one */
	int T, causal;
	const int *ids;       /* (T) the stream's ids: self-attention's padding mask */
	const R *enc;         /* (Ts, D) cross-attention's keys and values */
	int Ts;
	const int *src_ids;   /* (Ts) */
	R *denc;              /* (Ts, D) cross-attention adds its keys' gradient here */
} sub_io;

static att_io att_of(const sub_io *io, const R *in)
{
	att_io a = { 0 };
	a.xq = in;
	a.Tq = io->T;
	if (io->kind == SUB_SELF) {
		a.xkv = in;
		a.Tk = io->T;
		a.self = 1;
		a.causal = io->causal;
		a.key_ids = io->ids;
	} else {
		a.xkv = io->enc;
		a.Tk = io->Ts;
		a.key_ids = io->src_ids;
	}
	return a;
}

/* Pre-norm: x + f(N(x)); post-norm: N(x + f(x)). Returns the new stream. */
static const R *f_sub(mx *x, const sub_io *io, const R *xs, sub_act *sa)
{
	int T = io->T, D = x->c->d_model;
	sa->x = xs;
	const R *in = xs;
	if (x->c->prenorm) {
		f_norm(x, io->nw, xs, T, &sa->n);
		in = sa->n.out;
	}
	const R *o;
	if (io->kind == SUB_FFN && x->c->n_experts) {
		o = f_moe(x, io->mw, in, T, &sa->f);
		x->aux += aux_loss(x->c, sa->f.load, sa->f.probs, T);
	} else if (io->kind == SUB_FFN) {
		o = f_ffn(x, io->fw, in, T, &sa->f);
	} else {
		att_io a = att_of(io, in);
		o = f_attn(x, io->aw, &a, &sa->a);
	}
	R *r = al(x, (size_t)T * D);
	for (size_t i = 0; i < (size_t)T * D; i++)
		r[i] = xs[i] + o[i];
	if (x->c->prenorm)
		return r;
	f_norm(x, io->nw, r, T, &sa->n);
	return sa->n.out;
}

/* dx (T, D): the gradient of the stream after the sub-layer in, before it out. */
static void b_sub(const mx *x, const sub_io *io, const sub_act *sa, R *dx)
{
	int T = io->T, D = x->c->d_model;
	size_t mark = gb_ws_mark(x->ws);
	R *t = al(x, (size_t)T * D);
	const R *in = x->c->prenorm ? sa->n.out : sa->x;
	if (!x->c->prenorm)
		b_norm(x, io->nw, &sa->n, dx, dx, 0, T);
	if (io->kind == SUB_FFN && x->c->n_experts) {
		b_moe(x, io->mw, &sa->f, dx, in, T, t);
	} else if (io->kind == SUB_FFN) {
		b_ffn(x, io->fw, &sa->f, dx, in, T, t);
	} else {
		att_io a = att_of(io, in);
		b_attn(x, io->aw, &a, &sa->a, dx, t, io->kind == SUB_CROSS ? io->denc : NULL);
	}
	if (x->c->prenorm)
		b_norm(x, io->nw, &sa->n, t, dx, 1, T);
	else
		vadd(dx, t, (size_t)T * D);
	gb_ws_release(x->ws, mark);
}

static void rope_for(mx *x, int T)
{
	const gb_config *c = x->c;
	x->rc = x->rs = NULL;
	if (c->pos != GB_POS_ROPE)
		return;
	R *cs = al(x, (size_t)T * (c->d_head / 2)), *sn = al(x, (size_t)T * (c->d_head / 2));
	FN(gb_rope_tables)(cs, sn, T, c);
	x->rc = cs;
	x->rs = sn;
}

static sub_io sub_of(const gb_layer_w *L, int kind, int has_cross, int T, int causal, const int *ids,
                     const R *enc, int Ts, const int *src, R *denc)
{
	sub_io io = { 0 };
	io.kind = kind;
	io.T = T;
	io.causal = causal;
	io.ids = ids;
	io.enc = enc;
	io.Ts = Ts;
	io.src_ids = src;
	io.denc = denc;
	if (kind == SUB_SELF) {
		io.nw = &L->ln1;
		io.aw = &L->attn;
	} else if (kind == SUB_CROSS) {
		io.nw = &L->ln2;
		io.aw = &L->cross;
	} else {
		io.nw = has_cross ? &L->ln3 : &L->ln2; /* an encoder's FFN norm is its second */
		io.fw = &L->ffn;
		io.mw = &L->moe;
	}
	return io;
}

static void f_stack(mx *x, const gb_stack_w *s, const int *ids, int T, int causal, const R *enc, int Ts,
                    const int *src, stack_act *sa)
{
	const gb_config *c = x->c;
	int D = c->d_model;
	memset(sa, 0, sizeof *sa);
	sa->ids = ids;
	sa->T = T;
	sa->n_layer = s->n_layer;
	sa->sub = gb_ws_alloc(x->ws, (size_t)s->n_layer * sizeof *sa->sub);
	memset(sa->sub, 0, (size_t)s->n_layer * sizeof *sa->sub);
	const R *pos = NULL;
	if (c->pos == GB_POS_SINUSOIDAL) {
		R *pe = al(x, (size_t)T * D);
		FN(gb_sinusoid)(pe, T, D);
		pos = pe;
	} else if (c->pos == GB_POS_LEARNED) {
		pos = pv(x, s->pos);
	}
	R *e = al(x, (size_t)T * D);
	FN(gb_embed_fwd)(e, ids, pv(x, x->m->embed.w), pos, c->scale_embed ? sqrt((double)D) : 1.0, T, D);
	rope_for(x, T);
	const R *xs = e;
	for (int l = 0; l < s->n_layer; l++) {
		const gb_layer_w *L = &s->layers[l];
		sub_io io = sub_of(L, SUB_SELF, enc != NULL, T, causal, ids, enc, Ts, src, NULL);
		xs = f_sub(x, &io, xs, &sa->sub[l][0]);
		if (enc) {
			io = sub_of(L, SUB_CROSS, enc != NULL, T, causal, ids, enc, Ts, src, NULL);
			xs = f_sub(x, &io, xs, &sa->sub[l][1]);
		}
		io = sub_of(L, SUB_FFN, enc != NULL, T, causal, ids, enc, Ts, src, NULL);
		xs = f_sub(x, &io, xs, &sa->sub[l][2]);
	}
	if (c->final_norm) {
		f_norm(x, &s->final, xs, T, &sa->fin);
		xs = sa->fin.out;
	}
	sa->out = xs;
}

/* dx (T, D): the gradient of the stack's output; consumed. */
static void b_stack(mx *x, const gb_stack_w *s, const stack_act *sa, R *dx, int causal, const R *enc, int Ts,
                    const int *src, R *denc)
{
	const gb_config *c = x->c;
	int T = sa->T;
	size_t mark = gb_ws_mark(x->ws);
	rope_for(x, T);
	if (c->final_norm)
		b_norm(x, &s->final, &sa->fin, dx, dx, 0, T);
	for (int l = s->n_layer - 1; l >= 0; l--) {
		const gb_layer_w *L = &s->layers[l];
		sub_io io = sub_of(L, SUB_FFN, enc != NULL, T, causal, sa->ids, enc, Ts, src, denc);
		b_sub(x, &io, &sa->sub[l][2], dx);
		if (enc) {
			io = sub_of(L, SUB_CROSS, enc != NULL, T, causal, sa->ids, enc, Ts, src, denc);
			b_sub(x, &io, &sa->sub[l][1], dx);
		}
		io = sub_of(L, SUB_SELF, enc != NULL, T, causal, sa->ids, enc, Ts, src, denc);
		b_sub(x, &io, &sa->sub[l][0], dx);
	}
	FN(gb_embed_bwd)(gv(x, x->m->embed.w), c->pos == GB_POS_LEARNED ? gv(x, s->pos) : NULL, dx, sa->ids,
	                 c->scale_embed ? sqrt((double)c->d_model) : 1.0, T, c->d_model);
	gb_ws_release(x->ws, mark);
}

static int model_check(const gb_model *m, gb_err *err)
{
	if (!m->owned || !m->n_params || m->params[0].data != m->owned)
		return gb_fail(err, "training needs the parameters in one owned block (gb_model_make_writable)");
	return 0;
}

int FN(gb_model_fwd)(const gb_model *m, const R *P, const int *ids, int n, const int *tgt, int n_tgt, acts *a,
                     const gb_kernels *k, gb_ws *ws, gb_err *err)
{
	const gb_config *c = &m->cfg;
	if (model_check(m, err))
		return -1;
	if (n <= 0 || n > c->n_ctx || (c->encdec && (n_tgt <= 0 || n_tgt > c->n_ctx)))
		return gb_fail(err, "sequence length %d (target %d) outside 1..%d", n, n_tgt, c->n_ctx);
	mx x = { m, c, P, NULL, k ? k : gb_kernels_fast(), ws, c->textbook_ln, NULL, NULL, 0, 0 };
	jmp_buf oom, *saved = ws->oom;
	memset(a, 0, sizeof *a);
	ws->oom = &oom;
	if (setjmp(oom)) {
		ws->oom = saved;
		return gb_fail(err, "out of memory in the forward pass");
	}
	int T = n;
	if (c->encdec) {
		f_stack(&x, &m->enc, ids, n, 0, NULL, 0, NULL, &a->enc);
		f_stack(&x, &m->dec, tgt, n_tgt, 1, a->enc.out, n, ids, &a->dec);
		T = n_tgt;
	} else {
		f_stack(&x, &m->dec, ids, n, 1, NULL, 0, NULL, &a->dec);
	}
	R *logits = al(&x, (size_t)T * c->vocab);
	FN(gb_linear_fwd)(x.k, logits, a->dec.out, pv(&x, m->lm_head.w), NULL, T, c->d_model, c->vocab, 1);
	a->logits = logits;
	a->probs = NULL;
	a->aux = x.aux;
	ws->oom = saved;
	return 0;
}

int FN(gb_model_bwd)(const gb_model *m, const R *P, const acts *a, const R *dlogits, double aux_scale, R *G,
                     const gb_kernels *k, gb_ws *ws, gb_err *err)
{
	const gb_config *c = &m->cfg;
	if (model_check(m, err))
		return -1;
	mx x = { m, c, P, G, k ? k : gb_kernels_fast(), ws, c->textbook_ln, NULL, NULL, aux_scale, 0 };
	int T = a->dec.T, D = c->d_model;
	size_t mark = gb_ws_mark(ws);
	jmp_buf oom, *saved = ws->oom;
	ws->oom = &oom;
	if (setjmp(oom)) {
		ws->oom = saved;
		gb_ws_release(ws, mark);
		return gb_fail(err, "out of memory in the backward pass");
	}
	R *dx = al(&x, (size_t)T * D);
	FN(gb_linear_bwd)(x.k, ws, dx, 0, gv(&x, m->lm_head.w), NULL, dlogits, a->dec.out, pv(&x, m->lm_head.w), T, D,
	                  c->vocab, 1);
	if (c->encdec) {
		int Ts = a->enc.T;
		R *denc = al(&x, (size_t)Ts * D);
		memset(denc, 0, (size_t)Ts * D * sizeof *denc);
		b_stack(&x, &m->dec, &a->dec, dx, 1, a->enc.out, Ts, a->enc.ids, denc);
		b_stack(&x, &m->enc, &a->enc, denc, 0, NULL, 0, NULL, NULL);
	} else {
		b_stack(&x, &m->dec, &a->dec, dx, 1, NULL, 0, NULL, NULL);
	}
	gb_ws_release(ws, mark);
	ws->oom = saved;
	return 0;
}
