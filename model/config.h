/* config.h — a model's architecture: the families, the choices each makes, the sizes, and
 * the checks. A family names the fields and tensors of real model folders:
 *   family "gpt2"   GPT-2's config.json (n_embd, n_layer, n_head, n_positions, n_inner, ...);
 *   family "llama"  Llama's (hidden_size, num_hidden_layers, num_key_value_heads, ...);
 *   family "encdec" glassbox's own encoder-decoder (BART/Marian-like field names).
 * config.json is read and written by model/formats/hf_config.h. model/README.md documents
 * every field and every tensor name. */
#ifndef GLASSBOX_CONFIG_H
#define GLASSBOX_CONFIG_H

#include "model/err.h"

enum gb_family { GB_FAM_GPT2, GB_FAM_LLAMA, GB_FAM_ENCDEC };
enum gb_norm { GB_NORM_LAYER, GB_NORM_RMS };
/* GB_POS_T5: T5's learned relative bias, one value per (offset bucket, head) added to the
 * scaled scores of self-attention (each layer its own table). */
enum gb_pos { GB_POS_NONE, GB_POS_SINUSOIDAL, GB_POS_LEARNED, GB_POS_ROPE, GB_POS_ALIBI, GB_POS_T5 };
/* Self-attention's kind: softmax, or linear attention (Katharopoulos et al. 2020) with the
 * feature map elu(x) + 1 and its normaliser. */
enum gb_attn_kind { GB_ATTN_SOFTMAX, GB_ATTN_LINEAR };
/* Activations as kernels see them; GB_ACT_SILU is only used inside SwiGLU. */
enum gb_act { GB_ACT_RELU, GB_ACT_GELU, GB_ACT_GELU_TANH, GB_ACT_SILU };
/* The feed-forward network's shape: a plain up/activation/down, or gated (SwiGLU). */
enum gb_ffn { GB_FFN_PLAIN, GB_FFN_GATED };
/* Which features RoPE rotates together: Hugging Face's Llama pairs feature f with f + E/2
 * ("rotate half"); Meta's original code and llama2.c pair 2f with 2f + 1 (adjacent). */
enum gb_rope_pairs { GB_ROPE_HALF, GB_ROPE_ADJACENT };
/* Hugging Face's rope_scaling: none, "linear" (every frequency / factor) or "llama3" (Llama
 * 3.1's: long wavelengths / factor, short ones kept, a smooth blend between) */
enum gb_rope_scale { GB_ROPE_SCALE_NONE, GB_ROPE_SCALE_LINEAR, GB_ROPE_SCALE_LLAMA3 };

typedef struct gb_config {
	int family;        /* enum gb_family */
	int encdec;        /* 1 for encoder-decoder, 0 for decoder-only */
	int n_layer;       /* decoder-only: layers; encoder-decoder: decoder layers */
	int n_enc_layer;   /* encoder-decoder: encoder layers (0 otherwise) */
	int d_model;
	int n_head;        /* query heads */
	int n_kv_head;     /* key/value heads; divides n_head (== n_head: plain multi-head) */
	int d_head;        /* per-head width (usually d_model / n_head) */
	int d_ffn;         /* feed-forward hidden width */
	int vocab;
	int n_ctx;         /* context length: the longest sequence a run accepts */
	int prenorm;       /* 1: x + f(norm(x)); 0 (post-norm): norm(x + f(x)) */
	int norm;          /* enum gb_norm */
	int final_norm;    /* a norm after the last layer of each stack */
	int pos;           /* enum gb_pos */
	int act;           /* enum gb_act of the FFN (GB_ACT_SILU with ffn == GB_FFN_GATED: SwiGLU) */
	int ffn;           /* enum gb_ffn */
	int bias;          /* attention's linear layers have biases */
	int ffn_bias;      /* the FFN's linear layers have biases */
	int norm_bias;     /* LayerNorm has a bias (RMSNorm never has) */
	int tied;          /* output projection is the token embedding (transposed) */
	int scale_embed;   /* token embeddings are multiplied by sqrt(d_model) (the textbook) */
	int window;        /* local attention: 0 = unlimited; w > 0 = a query sees keys at distance < w */
	int textbook_ln;   /* LayerNorm divides by (sigma + eps) instead of sqrt(var + eps) */
	float norm_eps;
	float rope_theta;  /* RoPE base, 10000 by default */
	int rope_pairs;    /* enum gb_rope_pairs: which features RoPE rotates together */
	int rope_scale;    /* enum gb_rope_scale */
	float rope_factor; /* LINEAR, LLAMA3: the factor */
	float rope_low, rope_high; /* LLAMA3: low_freq_factor, high_freq_factor */
	int rope_orig_ctx; /* LLAMA3: original_max_position_embeddings */
	int rel_buckets;   /* GB_POS_T5: offset buckets (32): half exact, half log-spaced */
	int rel_max_dist;  /* GB_POS_T5: offsets from here on share the last bucket (128) */
	int attn_kind;     /* enum gb_attn_kind of self-attention */
	int n_experts;     /* 0: one dense FFN; E > 1: a mixture of E experts of width d_ffn */
	int top_k;         /* experts per token (1 or 2) */
	int norm_topk;     /* gate weights renormalised over the chosen experts (Mixtral), or the
	                    * router's probabilities as they are (Switch) */
	float aux_coef;    /* weight of the load-balancing loss in training */
	int bos_id, eos_id, pad_id; /* -1 when absent */
	int dec_start_id;  /* encoder-decoder: the first decoder input (default bos_id) */
} gb_config;

/* A config with every field at its family default (sizes zero). */
void gb_config_defaults(gb_config *c, int family);

/* Checks sizes and combinations (heads divide, d_head even for RoPE, ...). */
int gb_config_check(const gb_config *c, const char *path, gb_err *err);

/* Names for display and for config files. */
extern const char *const gb_family_names[];   /* (3) by enum gb_family */
extern const char *const gb_norm_names[];     /* (2) by enum gb_norm */
extern const char *const gb_pos_names[];      /* (6) by enum gb_pos */
extern const char *const gb_attn_kind_names[]; /* (2) "softmax", "linear" */
const char *gb_family_name(int family);
const char *gb_norm_name(int norm);
const char *gb_pos_name(int pos);
const char *gb_act_name(int act, int ffn);
extern const char *const gb_rope_pairs_names[]; /* (2) "half", "adjacent" */
extern const char *const gb_rope_scale_names[]; /* (3) "none", "linear", "llama3" */

/* RoPE's angle per position of feature pair f (0 <= f < d_head/2): base^(-2f/d_head), scaled as
 * rope_scale says. Every RoPE in glassbox (forward, trainer, views) takes its angles here. */
double gb_rope_inv_freq(const gb_config *c, int f);

#endif
