/* config.c — the architecture description: each family's defaults, the names of the enums,
 * and the checks that keep a bad config from reaching the forward pass. Reading and writing
 * config.json is model/formats/hf_config.c's. */
#include "model/config.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

const char *const gb_family_names[] = { "gpt2", "llama", "glassbox-encdec" };
const char *const gb_norm_names[] = { "layernorm", "rmsnorm" };
const char *const gb_pos_names[] = { "none", "sinusoidal", "learned", "rope", "alibi", "t5" };
const char *const gb_attn_kind_names[] = { "softmax", "linear" };
const char *const gb_rope_pairs_names[] = { "half", "adjacent" };
const char *const gb_rope_scale_names[] = { "none", "linear", "llama3" };

double gb_rope_inv_freq(const gb_config *c, int f)
{
	double inv = pow((double)c->rope_theta, -2.0 * f / c->d_head);
	if (c->rope_scale == GB_ROPE_SCALE_LINEAR)
		return inv / c->rope_factor;
	if (c->rope_scale == GB_ROPE_SCALE_LLAMA3) {
		/* wavelengths shorter than orig/high keep their frequency, longer than orig/low are
		 * slowed by the factor, and those between blend the two linearly in orig/wavelength */
		double wl = 2 * M_PI / inv, lo_wl = c->rope_orig_ctx / (double)c->rope_low,
		       hi_wl = c->rope_orig_ctx / (double)c->rope_high;
		if (wl < hi_wl)
			return inv;
		if (wl > lo_wl)
			return inv / c->rope_factor;
		double s = (c->rope_orig_ctx / wl - c->rope_low) / ((double)c->rope_high - c->rope_low);
		return (1 - s) * inv / c->rope_factor + s * inv;
	}
	return inv;
}

const char *gb_family_name(int f) { return f >= 0 && f <= GB_FAM_ENCDEC ? gb_family_names[f] : "?"; }
const char *gb_norm_name(int n) { return n >= 0 && n <= GB_NORM_RMS ? gb_norm_names[n] : "?"; }
const char *gb_pos_name(int p) { return p >= 0 && p <= GB_POS_T5 ? gb_pos_names[p] : "?"; }

const char *gb_act_name(int act, int ffn)
{
	if (ffn == GB_FFN_GATED)
		return "swiglu"; /* glassbox's only gated FFN: silu(x Wg) * (x Wu) */
	switch (act) {
	case GB_ACT_RELU: return "relu";
	case GB_ACT_GELU: return "gelu";
	case GB_ACT_GELU_TANH: return "gelu_tanh";
	case GB_ACT_SILU: return "silu";
	}
	return "?";
}

void gb_config_defaults(gb_config *c, int family)
{
	memset(c, 0, sizeof *c);
	c->family = family;
	c->encdec = family == GB_FAM_ENCDEC;
	c->norm = family == GB_FAM_LLAMA ? GB_NORM_RMS : GB_NORM_LAYER;
	c->prenorm = family != GB_FAM_ENCDEC;
	c->final_norm = c->prenorm;
	c->pos = family == GB_FAM_GPT2 ? GB_POS_LEARNED : family == GB_FAM_LLAMA ? GB_POS_ROPE
	                                                                     : GB_POS_SINUSOIDAL;
	c->act = family == GB_FAM_GPT2 ? GB_ACT_GELU_TANH : family == GB_FAM_LLAMA ? GB_ACT_SILU
	                                                                        : GB_ACT_RELU;
	c->ffn = family == GB_FAM_LLAMA ? GB_FFN_GATED : GB_FFN_PLAIN;
	c->bias = c->ffn_bias = family != GB_FAM_LLAMA;
	c->norm_bias = 1;
	c->tied = family != GB_FAM_LLAMA;
	c->scale_embed = family == GB_FAM_ENCDEC;
	c->norm_eps = family == GB_FAM_LLAMA ? 1e-6f : 1e-5f;
	c->rope_theta = 10000.0f;
	c->rel_buckets = 32;
	c->rel_max_dist = 128;
	c->top_k = 2;
	c->norm_topk = 1;
	c->aux_coef = 0.01f;
	c->bos_id = c->eos_id = c->pad_id = c->dec_start_id = -1;
}

int gb_config_check(const gb_config *c, const char *path, gb_err *err)
{
	static const struct { const char *what; size_t off; } sizes[] = {
		{ "the width (d_model)", offsetof(gb_config, d_model) },
		{ "the number of layers", offsetof(gb_config, n_layer) },
		{ "the number of heads", offsetof(gb_config, n_head) },
		{ "the vocabulary size", offsetof(gb_config, vocab) },
		{ "the context length", offsetof(gb_config, n_ctx) },
		{ "the FFN width", offsetof(gb_config, d_ffn) },
	};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		int v = *(const int *)((const char *)c + sizes[i].off);
		if (v <= 0)
			return gb_fail(err, "%s: %s is missing or not positive", path, sizes[i].what);
	}
	if (c->d_model > 65536 || c->d_ffn > 262144 || c->vocab > 1048576 || c->n_ctx > 1048576 ||
	    c->n_layer > 1024 || c->n_enc_layer > 1024 || c->n_head > 1024)
		return gb_fail(err, "%s: sizes too large for glassbox", path);
	/* Products of sizes index arrays as int: keep every one far from overflow (computed in long:
	 * n_kv_head is not bounded yet here, and 2 * 1795162113 overflowed; the fuzzer found it). */
	if (c->d_head > 65536 || ((long)c->n_head + 2L * c->n_kv_head) * c->d_head > (1L << 24) ||
	    (long)c->n_ctx * c->d_model > (1L << 30) || (long)c->vocab * c->d_model > (1L << 30) ||
	    (long)c->d_model * c->d_ffn > (1L << 30))
		return gb_fail(err, "%s: sizes too large for glassbox", path);
	if (c->encdec && c->n_enc_layer <= 0)
		return gb_fail(err, "%s: an encoder-decoder needs encoder_layers > 0", path);
	if (c->d_head <= 0 || c->n_kv_head <= 0 || c->n_kv_head > c->n_head || c->n_head % c->n_kv_head)
		return gb_fail(err, "%s: %d key/value heads must divide %d query heads", path, c->n_kv_head,
		               c->n_head);
	if (c->pos == GB_POS_ROPE && c->d_head % 2)
		return gb_fail(err, "%s: RoPE needs an even head width (have %d)", path, c->d_head);
	if (c->pos == GB_POS_SINUSOIDAL && c->d_model % 2)
		return gb_fail(err, "%s: sinusoidal positions need an even width (have %d)", path, c->d_model);
	if (c->rope_pairs != GB_ROPE_HALF && c->rope_pairs != GB_ROPE_ADJACENT)
		return gb_fail(err, "%s: unknown RoPE pairing %d", path, c->rope_pairs);
	if (c->rope_scale < GB_ROPE_SCALE_NONE || c->rope_scale > GB_ROPE_SCALE_LLAMA3)
		return gb_fail(err, "%s: unknown RoPE scaling %d", path, c->rope_scale);
	if (c->rope_scale && !(c->rope_factor > 0))
		return gb_fail(err, "%s: rope_scaling's factor must be > 0", path);
	if (c->rope_scale == GB_ROPE_SCALE_LLAMA3 &&
	    !(c->rope_low > 0 && c->rope_high > c->rope_low && c->rope_orig_ctx > 0))
		return gb_fail(err, "%s: rope_scaling llama3 needs 0 < low_freq_factor < high_freq_factor and "
		               "original_max_position_embeddings > 0", path);
	if (c->window < 0)
		return gb_fail(err, "%s: glassbox.window must be 0 (none) or positive", path);
	if (c->pos == GB_POS_T5 && (c->rel_buckets < 2 || c->rel_buckets > 4096 || c->rel_max_dist < 1))
		return gb_fail(err, "%s: the T5 relative bias needs 2..4096 buckets and a max distance >= 1", path);
	if (c->pos == GB_POS_T5 && c->rel_max_dist <= c->rel_buckets / (c->encdec ? 4 : 2))
		return gb_fail(err, "%s: the T5 relative bias's max distance (%d) must pass its exact buckets (%d)", path,
		               c->rel_max_dist, c->rel_buckets / (c->encdec ? 4 : 2));
	if (c->attn_kind != GB_ATTN_SOFTMAX && c->attn_kind != GB_ATTN_LINEAR)
		return gb_fail(err, "%s: unknown attention kind %d", path, c->attn_kind);
	/* The recurrent form keeps one running sum over every earlier key: a bias or a rotation
	 * per (query, key) pair, or a window, has no place in it. */
	if (c->attn_kind == GB_ATTN_LINEAR && (c->pos == GB_POS_ROPE || c->pos == GB_POS_ALIBI || c->pos == GB_POS_T5 ||
	                                       c->window))
		return gb_fail(err, "%s: linear attention takes no %s: use position learned, sinusoidal or none", path,
		               c->window ? "local window" : gb_pos_name(c->pos));
	if (c->n_experts < 0 || c->n_experts == 1 || c->n_experts > 256)
		return gb_fail(err, "%s: num_local_experts must be 0 (a dense FFN) or 2..256 (have %d)", path, c->n_experts);
	if (c->n_experts && (c->top_k < 1 || c->top_k > 2 || c->top_k > c->n_experts))
		return gb_fail(err, "%s: num_experts_per_tok must be 1 or 2, at most the %d experts (have %d)", path,
		               c->n_experts, c->top_k);
	if (!(c->aux_coef >= 0))
		return gb_fail(err, "%s: router_aux_loss_coef must be >= 0", path);
	if (!(c->norm_eps >= 0) || !(c->rope_theta > 0))
		return gb_fail(err, "%s: norm epsilon must be >= 0 and rope_theta > 0", path);
	int ids[] = { c->bos_id, c->eos_id, c->pad_id, c->dec_start_id };
	for (int i = 0; i < 4; i++)
		if (ids[i] < -1 || ids[i] >= c->vocab)
			return gb_fail(err, "%s: special token id %d is outside the vocabulary (0..%d)", path,
			               ids[i], c->vocab - 1);
	if (c->encdec && c->dec_start_id < 0)
		return gb_fail(err, "%s: an encoder-decoder needs decoder_start_token_id or bos_token_id", path);
	return 0;
}
