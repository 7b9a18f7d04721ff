/* moe.c — the mixture-of-experts layer of the forward pass (a sub-layer in place of the FFN):
 * routing (router logits, softmax, top-k, gate weights) and each expert's FFN on the tokens it
 * was given, every step recorded in the trace. */
#include "model/forward_int.h"

#include <string.h>

/* The top-k experts of a row of router probabilities p (E), best first, the lower index
 * winning a tie. */
static void top_k(const float *p, int E, int k, int *pick)
{
	for (int r = 0; r < k; r++) {
		int b = -1;
		for (int e = 0; e < E; e++)
			if ((r == 0 || e != pick[0]) && (b < 0 || p[e] > p[b]))
				b = e;
		pick[r] = b;
	}
}

/* A mixture of experts in place of the FFN: router logits x Wr, their softmax, the top-k
 * experts of each token with their gate weights (the probabilities renormalised over the
 * chosen, Mixtral's rule, or as they are, Switch's), and each expert's FFN on the tokens it
 * got, their outputs summed with the gate weights. Records name.{router, router_probs, chosen,
 * gates, load, up, [gate], hidden, expert_out, out}; returns out's index. */
int gb_fwd_moe(fctx *f, const gb_moe_w *w, const char *name, const float *x, int T)
{
	const gb_config *c = f->c;
	int E = c->n_experts, K = c->top_k, F = c->d_ffn, D = c->d_model, gated = c->ffn == GB_FFN_GATED;
	const unsigned char *te = AXES(GB_AX_TOKEN, GB_AX_EXPERT), *etf = AXES(GB_AX_EXPERT, GB_AX_TOKEN, GB_AX_FFN);
	float *r = tens(f, 2, SHAPE(T, E), te, "%s.router", name);
	lin(f, r, x, T, &w->router);
	float *p = tens(f, 2, SHAPE(T, E), te, "%s.router_probs", name);
	memcpy(p, r, (size_t)T * E * sizeof(float));
	f->k->softmax(p, T, E);
	float *ch = tens(f, 2, SHAPE(T, K), AXES(GB_AX_TOKEN, GB_AX_CHOICE), "%s.chosen", name);
	float *g = tens(f, 2, SHAPE(T, E), te, "%s.gates", name);
	float *load = tens(f, 1, SHAPE(E), AXES(GB_AX_EXPERT), "%s.load", name);
	memset(g, 0, (size_t)T * E * sizeof(float));
	memset(load, 0, (size_t)E * sizeof(float));
	for (int t = 0; t < T; t++) {
		int pick[2];
		const float *pt = p + (size_t)t * E;
		top_k(pt, E, K, pick);
		double sum = 0;
		for (int i = 0; i < K; i++)
			sum += pt[pick[i]];
		for (int i = 0; i < K; i++) {
			g[(size_t)t * E + pick[i]] = c->norm_topk ? (float)(pt[pick[i]] / sum) : pt[pick[i]];
			ch[(size_t)t * K + i] = (float)pick[i];
			load[pick[i]] += 1.0f / (float)(T * K);
		}
	}
	size_t etf_n = (size_t)E * T * F;
	float *up = tens(f, 3, SHAPE(E, T, F), etf, "%s.up", name);
	float *gt = gated ? tens(f, 3, SHAPE(E, T, F), etf, "%s.gate", name) : NULL;
	float *hid = tens(f, 3, SHAPE(E, T, F), etf, "%s.hidden", name);
	float *eo = tens(f, 3, SHAPE(E, T, D), AXES(GB_AX_EXPERT, GB_AX_TOKEN, GB_AX_FEATURE), "%s.expert_out", name);
	float *out = tens(f, TF(T, D), "%s.out", name);
	memset(up, 0, etf_n * sizeof(float));
	memset(hid, 0, etf_n * sizeof(float));
	if (gt)
		memset(gt, 0, etf_n * sizeof(float));
	memset(eo, 0, (size_t)E * T * D * sizeof(float));
	memset(out, 0, (size_t)T * D * sizeof(float));
	float *xs = scratch(f, (size_t)T * D), *ys = scratch(f, (size_t)T * D);
	float *bu = scratch(f, (size_t)T * 2 * F), *bg = scratch(f, (size_t)T * F), *bh = scratch(f, (size_t)T * F);
	int *rows = (int *)scratch(f, (size_t)T); /* a float's room holds an int */
	for (int e = 0; e < E; e++) {
		const gb_ffn_w *x_w = &w->experts[e];
		int n = 0;
		for (int t = 0; t < T; t++)
			if (ch[(size_t)t * K] == e || ch[(size_t)t * K + K - 1] == e) /* K is 1 or 2 */
				rows[n++] = t;
		if (!n)
			continue;
		for (int i = 0; i < n; i++)
			memcpy(xs + (size_t)i * D, x + (size_t)rows[i] * D, (size_t)D * sizeof(float));
		if (gated && x_w->fused_gate) {
			float *both = scratch(f, (size_t)n * 2 * F);
			lin(f, both, xs, n, &x_w->up);
			for (int i = 0; i < n; i++) {
				memcpy(bg + (size_t)i * F, both + (size_t)i * 2 * F, (size_t)F * sizeof(float));
				memcpy(bu + (size_t)i * F, both + (size_t)i * 2 * F + F, (size_t)F * sizeof(float));
			}
		} else {
			lin(f, bu, xs, n, &x_w->up);
			if (gated)
				lin(f, bg, xs, n, &x_w->gate);
		}
		if (gated) {
			f->k->activate(bh, bg, (size_t)n * F, GB_ACT_SILU);
			f->k->mul(bh, bh, bu, (size_t)n * F);
		} else
			f->k->activate(bh, bu, (size_t)n * F, c->act);
		lin(f, ys, bh, n, &x_w->down);
		for (int i = 0; i < n; i++) {
			size_t at = (size_t)e * T + rows[i];
			memcpy(up + at * F, bu + (size_t)i * F, (size_t)F * sizeof(float));
			if (gt)
				memcpy(gt + at * F, bg + (size_t)i * F, (size_t)F * sizeof(float));
			memcpy(hid + at * F, bh + (size_t)i * F, (size_t)F * sizeof(float));
			memcpy(eo + at * D, ys + (size_t)i * D, (size_t)D * sizeof(float));
			float gw = g[(size_t)rows[i] * E + e], *o = out + (size_t)rows[i] * D;
			const float *y = ys + (size_t)i * D;
			for (int d = 0; d < D; d++)
				o[d] += gw * y[d];
		}
	}
	return last(f);
}

