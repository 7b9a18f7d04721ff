/* replay.c — what a lazy trace computes again on demand (model/lazytrace.h), with the run's
 * model, kernels and options, from what the run kept: one sub-layer of a layer (its
 * self-attention, cross-attention or feed-forward network) from the residual stream entering
 * it; one head's share of one of its attention blocks (the first view of a head of a
 * long input: its q, k and v columns, its scores and weights, nothing of the other heads or
 * of the feed-forward network); or logits and probs from the final stream. Each goes through
 * the forward pass's own functions, so it gives the numbers the run computed. */
#include "model/forward_int.h"

#include <setjmp.h>
#include <string.h>

/* The recorded entry named name, with data of n floats; NULL when there is none. */
static const float *kept_data(const gb_trace *main, const char *name, size_t n)
{
	for (int i = 0; i < main->n; i++)
		if (!strcmp(main->t[i].name, name))
			return main->t[i].data && main->t[i].n == n ? main->t[i].data : NULL;
	return NULL;
}

/* The stack group G belongs to, as the run ran it. */
static void replay_stack(const gb_lazy *z, const gb_trace *main, const gb_lazy_group *G, stack_in *in)
{
	const gb_lazy_stack *st = &z->st[G->stack];
	int dec_of_pair = z->m->cfg.encdec && G->stack == 1;
	stack_in s = { st->pfx, dec_of_pair ? main->tgt : main->ids, st->T, st->causal,
	               st->enc_out >= 0 ? main->t[st->enc_out].data : NULL, main->n_ids, main->ids, st->ablate, 0,
	               NULL, G->stack };
	*in = s;
}

/* The stream entering layer l (0-based) of the stack: the run's record of it, named in xn. */
static const float *entering(const gb_trace *main, const stack_in *in, int l, int D, char xn[48])
{
	if (l)
		snprintf(xn, 48, "%sL%d.resid.post", in->pfx, l);
	else
		snprintf(xn, 48, "%sembed.sum", in->pfx);
	return kept_data(main, xn, (size_t)in->T * D);
}

int gb_fwd_replay(const gb_lazy *z, const gb_trace *main, int g, int part, gb_trace *sub)
{
	const gb_lazy_group *G = &z->g[g - 1];
	const gb_model *m = z->m;
	const gb_config *c = &m->cfg;
	fctx f;
	gb_trace_reset(sub);
	gb_fwd_init(&f, m, sub, &z->o);
	if (setjmp(f.oom)) {
		gb_trace_reset(sub);
		return -1;
	}
	if (G->layer < 0) { /* logits or probs (probs: softmax of the logits, in place) */
		const gb_ttensor *x = &main->t[z->x_out];
		int T = x->shape[0];
		float *p = tens(&f, 2, SHAPE(T, c->vocab), AXES(GB_AX_TOKEN, GB_AX_VOCAB), "%s",
		                G->layer == -1 ? "logits" : "probs");
		lin(&f, p, x->data, T, &m->lm_head);
		if (G->layer == -2)
			f.k->softmax(p, T, c->vocab);
		return 0;
	}
	stack_in in;
	replay_stack(z, main, G, &in);
	int T = in.T, D = c->d_model;
	if (part < 0 || part >= GB_PARTS || (part == GB_PART_CROSS && !gb_fwd_has_cross(&in)))
		return -1;
	/* the stream entering the sub-layer, as recorded */
	char xn[48];
	const float *xt;
	if (part == GB_PART_ATTN)
		xt = entering(main, &in, G->layer, D, xn);
	else {
		snprintf(xn, sizeof xn, "%sL%d.resid.%s", in.pfx, G->layer + 1,
		         part == GB_PART_FFN && gb_fwd_has_cross(&in) ? "cross" : "mid");
		xt = kept_data(main, xn, (size_t)T * D);
	}
	if (!xt)
		return -1;
	float *x = tens(&f, TF(T, D), "%s", xn);
	memcpy(x, xt, (size_t)T * D * sizeof(float));
	gb_fwd_sublayer(&f, G->stack ? &m->dec : &m->enc, &in, G->layer, part, last(&f));
	return 0;
}

int gb_fwd_replay_head(const gb_lazy *z, const gb_trace *main, int g, int cross, int h, gb_trace *sub)
{
	const gb_lazy_group *G = &z->g[g - 1];
	const gb_model *m = z->m;
	const gb_config *c = &m->cfg;
	if (G->layer < 0 || h < 0 || h >= c->n_head)
		return -1;
	fctx f;
	gb_trace_reset(sub);
	gb_fwd_init(&f, m, sub, &z->o);
	if (setjmp(f.oom)) {
		gb_trace_reset(sub);
		return -1;
	}
	stack_in in;
	replay_stack(z, main, G, &in);
	int l = G->layer, T = in.T, D = c->d_model;
	const gb_layer_w *L = &(G->stack ? &m->dec : &m->enc)->layers[l];
	char nn[48], sn[48], xn[48];
	attn_in ai;
	const float *x;
	const gb_normw *nw;
	const gb_attn_w *w;
	if (!cross) { /* self-attention reads the stream entering the layer */
		x = entering(main, &in, l, D, xn);
		gb_fwd_self_in(&f, &in, l, &ai);
		nw = &L->ln1;
		w = &L->attn;
		snprintf(nn, sizeof nn, "%sL%d.ln1", in.pfx, l + 1);
		snprintf(sn, sizeof sn, "%sL%d.attn", in.pfx, l + 1);
	} else { /* cross-attention the stream after it, and the encoder's output */
		snprintf(xn, sizeof xn, "%sL%d.resid.mid", in.pfx, l + 1);
		x = kept_data(main, xn, (size_t)T * D);
		if (!in.enc)
			return -1;
		memset(&ai, 0, sizeof ai);
		ai.xkv = in.enc;
		ai.Tq = T;
		ai.Tk = in.Ts;
		ai.key_ids = in.src_ids;
		nw = &L->ln2;
		w = &L->cross;
		snprintf(nn, sizeof nn, "%sL%d.ln2", in.pfx, l + 1);
		snprintf(sn, sizeof sn, "%sL%d.cross", in.pfx, l + 1);
	}
	if (!x)
		return -1;
	/* pre-norm attends to the normed stream (the norm again, as the run computed it: cheap
	 * beside the attention), post-norm to the stream itself */
	ai.xq = x;
	if (c->prenorm) {
		int n = gb_fwd_norm(&f, nw, x, T, nn); /* before reading sub->t, which it may move */
		ai.xq = sub->t[n].data;
	}
	if (ai.self)
		ai.xkv = ai.xq;
	gb_fwd_attention_head(&f, w, sn, &ai, h);
	return 0;
}
