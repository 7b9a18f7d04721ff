/* view_arch.c — the architecture at a glance (`arch`): the loaded model drawn as a block
 * diagram (GB_FIG_DIAGRAM) from its config alone. From the top: the token embedding
 * (vocab x d_model), the positions as this model has them, one layer framed as "layer × N"
 * with the norms where this model puts them (before each sub-layer, or after its residual
 * add), the attention (heads x d_head, the key/value heads when shared) and the feed-forward
 * (d_model -> d_ffn -> d_model, its activation) with their residual adds, the final norm and
 * the output (d_model -> vocab, tied or not). An encoder-decoder gets both stacks side by
 * side, the decoder's with its cross-attention, fed by the encoder's output.
 *
 * The block of the stage the session shows (s->stage: what `attn`, `ffn`, the explorer and
 * the window have on show, when one was drawn since the last load or run) is highlighted, in the stack those views read (an encoder-decoder's
 * embeddings and positions are the encoder's; its attention, norms, FFN and residual the
 * decoder's). It is the slide for "what are d_model, d_head and d_ffn, and where do they
 * live": every detail names them, the caption says what each is. */
#include "app/view_arch.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "app/views.h"

enum { DECODER_ONLY, ENCODER, DECODER }; /* which stack a block belongs to */

typedef struct arch {
	session *s;
	const gb_config *c;
	gb_figure *f;
	const char *norm;         /* "LayerNorm" or "RMSNorm" */
	int oom;
} arch;

static void block(arch *a, int group, int highlight, const char *label, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void block(arch *a, int group, int highlight, const char *label, const char *fmt, ...)
{
	char detail[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof detail, fmt, ap);
	va_end(ap);
	a->oom |= gb_fig_add_block(a->f, label, detail, group, highlight) != 0;
}

/* Whether the session's stage is one of those given (a list ended by -1). */
static int on(const arch *a, ...)
{
	va_list ap;
	int st, hit = 0;
	va_start(ap, a);
	while ((st = va_arg(ap, int)) >= 0)
		hit |= st == a->s->stage && a->s->on_show;
	va_end(ap);
	return hit;
}

static const char *act_name(const gb_config *c)
{
	if (c->ffn == GB_FFN_GATED)
		return "SwiGLU";
	switch (c->act) {
	case GB_ACT_RELU: return "ReLU";
	case GB_ACT_GELU: return "GELU";
	case GB_ACT_GELU_TANH: return "GELU (tanh)";
	case GB_ACT_SILU: return "SiLU";
	}
	return "?";
}

static void norm_block(arch *a, int group, int hi, const char *label_fmt)
{
	char label[64];
	const gb_config *c = a->c;
	snprintf(label, sizeof label, label_fmt, a->norm);
	if (c->norm == GB_NORM_RMS)
		block(a, group, hi, label, "over d_model %d: root mean square; gain", c->d_model);
	else
		block(a, group, hi, label, "over d_model %d: mean, variance; gain%s", c->d_model, c->norm_bias ? ", bias" : "");
}

/* A sub-layer with its norm and residual add, where this model puts them: pre-norm
 * x + f(norm(x)), post-norm norm(x + f(x)). The norm is highlighted for `ln` when it is the
 * first of the layer (the one `ln L` shows), the adds for `resid`. */
static void sublayer(arch *a, int group, int main_stack, int first, int hi_f, const char *label,
                     const char *what, const char *detail)
{
	int hi_ln = main_stack && first && on(a, ST_LN, -1), hi_res = main_stack && on(a, ST_RESID, -1);
	char lbl[64];
	if (a->c->prenorm) {
		norm_block(a, group, hi_ln, "%s");
		block(a, group, hi_f, label, "%s", detail);
		block(a, group, hi_res, "+ residual", "x + %s(norm(x)), d_model %d", what, a->c->d_model);
	} else {
		block(a, group, hi_f, label, "%s", detail);
		snprintf(lbl, sizeof lbl, "add & %s", a->norm);
		block(a, group, hi_ln || hi_res, lbl, "norm(x + %s(x)), over d_model %d", what, a->c->d_model);
	}
}

static void attention_detail(const gb_config *c, int causal, char *out, size_t cap)
{
	int hd = c->n_head * c->d_head, k = 0;
	k += snprintf(out + k, cap - (size_t)k, "%d heads × d_head %d = %s%d", c->n_head, c->d_head,
	              hd == c->d_model ? "d_model " : "", hd);
	if (hd != c->d_model)
		k += snprintf(out + k, cap - (size_t)k, " → d_model %d", c->d_model);
	if (c->n_kv_head != c->n_head)
		k += snprintf(out + k, cap - (size_t)k, ", %d kv head%s", c->n_kv_head, c->n_kv_head == 1 ? "" : "s");
	k += snprintf(out + k, cap - (size_t)k, "%s", causal ? ", causal" : ", all tokens");
	if (c->attn_kind == GB_ATTN_LINEAR)
		k += snprintf(out + k, cap - (size_t)k, ", linear (elu + 1)");
	if (c->window > 0)
		snprintf(out + k, cap - (size_t)k, ", window %d", c->window);
}

/* One stack: its embedding and positions, one layer (group `group`), its final norm, and for
 * a decoder its output. */
static void stack(arch *a, int which, int group)
{
	const gb_config *c = a->c;
	int main_stack = which != ENCODER;          /* the stack the layer views read */
	int input_views = which != DECODER;          /* the stack embed and pe read */
	char detail[256];
	if (which == DECODER)
		block(a, 0, 0, "token embedding", "shared: vocab %d × d_model %d%s", c->vocab,
		      c->d_model, c->scale_embed ? ", × √d_model" : "");
	else
		block(a, 0, input_views && on(a, ST_EMBED, -1), "token embedding", "vocab %d × d_model %d%s", c->vocab,
		      c->d_model, c->scale_embed ? ", × √d_model" : "");
	int hi_pe = input_views && on(a, ST_PE, -1);
	switch (c->pos) {
	case GB_POS_LEARNED:
		block(a, 0, hi_pe, "+ learned positions", "n_ctx %d × d_model %d, added", c->n_ctx, c->d_model);
		break;
	case GB_POS_SINUSOIDAL:
		block(a, 0, hi_pe, "+ sinusoidal positions", "sin/cos over d_model %d, added, no weights", c->d_model);
		break;
	case GB_POS_ROPE:
		block(a, 0, hi_pe, "RoPE positions", "none added: q, k rotate by position (θ %g)", (double)c->rope_theta);
		break;
	case GB_POS_ALIBI:
		block(a, 0, hi_pe, "ALiBi positions", "none added: scores get −m_h·(i − j) per head");
		break;
	case GB_POS_T5:
		block(a, 0, hi_pe, "T5 relative positions", "none added: scores get a learned bias per head and offset "
		      "bucket (%d)", c->rel_buckets);
		break;
	default:
		block(a, 0, 0, "no positions", "%s", which == ENCODER ? "none: the encoder sees a bag of tokens"
		                                                      : "none: only the causal mask orders tokens");
	}
	attention_detail(c, which != ENCODER, detail, sizeof detail);
	sublayer(a, group, main_stack, 1, main_stack && on(a, ST_QKV, ST_SCORES, ST_ATTN, ST_HEADS, -1),
	         which == ENCODER ? "self-attention" : "masked self-attention", "attention", detail);
	if (which == DECODER) {
		snprintf(detail, sizeof detail, "%d heads × d_head %d; k, v from the encoder",
		         c->n_head, c->d_head);
		sublayer(a, group, main_stack, 0, on(a, ST_CROSS, -1), "cross-attention", "cross-attention", detail);
	}
	if (c->n_experts)
		snprintf(detail, sizeof detail, "%d experts of d_ffn %d, %s, top-%d per token", c->n_experts, c->d_ffn,
		         c->ffn == GB_FFN_GATED ? "SwiGLU" : act_name(c), c->top_k);
	else if (c->ffn == GB_FFN_GATED)
		snprintf(detail, sizeof detail, "d_model %d → 2 × d_ffn %d → %d, SwiGLU", c->d_model, c->d_ffn, c->d_model);
	else
		snprintf(detail, sizeof detail, "d_model %d → d_ffn %d → %d, %s", c->d_model, c->d_ffn, c->d_model, act_name(c));
	sublayer(a, group, main_stack, 0, main_stack && on(a, ST_FFN, -1), "feed-forward", "FFN", detail);
	if (c->final_norm)
		norm_block(a, 0, 0, "final %s");
	if (which != ENCODER)
		block(a, 0, on(a, ST_NEXT, -1), "output", "d_model %d → vocab %d (%s), softmax", c->d_model, c->vocab,
		      c->tied ? "tied to E" : "own weights");
}

/* What the highlighted block is, in words: the view on show. */
static void on_show(const session *s, char *out, size_t cap)
{
	int l = s->layer, h = s->head;
	switch (s->stage) {
	case ST_EMBED: snprintf(out, cap, "the token embeddings"); break;
	case ST_PE: snprintf(out, cap, "the positions"); break;
	case ST_QKV: snprintf(out, cap, "queries, keys and values of layer %d, head %d", l, h); break;
	case ST_SCORES: snprintf(out, cap, "the scores of layer %d, head %d", l, h); break;
	case ST_ATTN: snprintf(out, cap, "the attention weights of layer %d, head %d", l, h); break;
	case ST_HEADS: snprintf(out, cap, "every head of layer %d", l); break;
	case ST_LN: snprintf(out, cap, "the first norm of layer %d", l); break;
	case ST_FFN: snprintf(out, cap, "the feed-forward of layer %d", l); break;
	case ST_RESID: snprintf(out, cap, "the residual stream"); break;
	case ST_NEXT: snprintf(out, cap, "the next-token distribution"); break;
	case ST_CROSS: snprintf(out, cap, "the cross-attention of layer %d, head %d", l, h); break;
	default: snprintf(out, cap, "nothing");
	}
}

gb_figure *view_arch(session *s)
{
	if (need_model(s))
		return NULL;
	const gb_config *c = &s->model.cfg;
	arch a = { s, c, gb_fig_new(GB_FIG_DIAGRAM), c->norm == GB_NORM_RMS ? "RMSNorm" : "LayerNorm", 0 };
	if (!a.f) {
		errorf("out of memory for the architecture's figure");
		return NULL;
	}
	const char *name = strrchr(s->model.dir, '/') ? strrchr(s->model.dir, '/') + 1 : s->model.dir;
	char buf[512], what[160];
	int layer_view = s->on_show && (s->stage == ST_QKV || s->stage == ST_SCORES || s->stage == ST_ATTN || s->stage == ST_HEADS ||
	                 s->stage == ST_LN || s->stage == ST_FFN || s->stage == ST_CROSS);
	char shown[48] = "";
	if (layer_view)
		snprintf(shown, sizeof shown, ", layer %d on show", s->layer);
	if (c->encdec) {
		stack(&a, ENCODER, 1);
		a.f->stack2 = a.f->n_blocks;
		stack(&a, DECODER, 2);
		for (int i = a.f->stack2; i < a.f->n_blocks; i++)
			if (!strcmp(a.f->blocks[i].label, "cross-attention"))
				a.f->feeds = i - a.f->stack2 + 1;
		snprintf(buf, sizeof buf, "encoder layer × %d", c->n_enc_layer);
		a.oom |= gb_fig_set_group_title(a.f, 1, buf) != 0;
		snprintf(buf, sizeof buf, "decoder layer × %d%s", c->n_layer, shown);
		a.oom |= gb_fig_set_group_title(a.f, 2, buf) != 0;
		snprintf(buf, sizeof buf, "The architecture of %.100s: an encoder-decoder, %d + %d layers", name[0] ? name : "this model",
		         c->n_enc_layer, c->n_layer);
	} else {
		stack(&a, DECODER_ONLY, 1);
		snprintf(buf, sizeof buf, "layer × %d%s", c->n_layer, shown);
		a.oom |= gb_fig_set_group_title(a.f, 1, buf) != 0;
		snprintf(buf, sizeof buf, "The architecture of %.100s: a decoder-only Transformer, %d layers",
		         name[0] ? name : "this model", c->n_layer);
	}
	a.oom |= gb_fig_set_title(a.f, buf) != 0;
	on_show(s, what, sizeof what);
	if (s->on_show)
		snprintf(buf, sizeof buf, "highlighted: %s (the view on show)", what);
	else /* after a load or a run nothing is on show yet: no leftover of an earlier view */
		snprintf(buf, sizeof buf, "each block as the model's config sets it; the block of a view on show (attn, "
		         "ffn, ln, next ...) is highlighted");
	a.oom |= gb_fig_set_subtitle(a.f, buf) != 0;
	snprintf(buf, sizeof buf, "d_model %d: each token's vector  ·  d_head %d: one head's width (%d × %d = %d)  ·  "
	         "d_ffn %d: the FFN's hidden width", c->d_model, c->d_head, c->n_head, c->d_head, c->n_head * c->d_head,
	         c->d_ffn);
	a.oom |= gb_fig_set_caption(a.f, buf) != 0;
	a.f->colorbar = 0;
	a.oom |= gb_fig_add_meta(a.f, "Model", s->model.dir[0] ? s->model.dir : "(in memory)") != 0;
	if (s->text)
		a.oom |= gb_fig_add_meta(a.f, "Text", s->text) != 0;
	a.oom |= gb_fig_add_meta(a.f, "Highlight", s->on_show ? stage_name(s->stage) : "none") != 0;
	if (a.oom) {
		gb_fig_free(a.f);
		errorf("out of memory for the architecture's figure");
		return NULL;
	}
	return a.f;
}
