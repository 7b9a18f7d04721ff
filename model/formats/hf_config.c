/* hf_config.c — config.json, read and written in the field names of each family (Hugging
 * Face's for gpt2 and llama, BART/Marian-like for encdec, a "glassbox" object for the rest;
 * model/README.md has the table). What the fields mean is config.h's; this file only spells
 * them, and leaves the range checks to gb_config_check. */
#include "model/formats/hf_config.h"

#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/fileio.h"

/* Parses an activation name; sets act and ffn. */
static int parse_act(gb_config *c, const char *s)
{
	static const struct { const char *name; int act, ffn; } acts[] = {
		{ "relu", GB_ACT_RELU, GB_FFN_PLAIN },
		{ "gelu", GB_ACT_GELU, GB_FFN_PLAIN },
		{ "gelu_new", GB_ACT_GELU_TANH, GB_FFN_PLAIN },
		{ "gelu_tanh", GB_ACT_GELU_TANH, GB_FFN_PLAIN },
		{ "gelu_pytorch_tanh", GB_ACT_GELU_TANH, GB_FFN_PLAIN },
		{ "silu", GB_ACT_SILU, GB_FFN_PLAIN },
		{ "swiglu", GB_ACT_SILU, GB_FFN_GATED },
	};
	for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++)
		if (!strcmp(s, acts[i].name)) {
			c->act = acts[i].act;
			c->ffn = acts[i].ffn;
			return 0;
		}
	return -1;
}

static int lookup(const char *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

/* Reading helpers: each returns 0 when the key is absent (leaving *out), -1 on a wrong type. */
typedef struct {
	const char *path;
	gb_err *err;
	int bad;
} rd;

static json_t *field(rd *r, json_t *o, const char *key)
{
	return o ? json_object_get(o, key) : NULL;
}

static void get_int(rd *r, json_t *o, const char *key, int *out)
{
	json_t *v = field(r, o, key);
	if (!v || json_is_null(v) || r->bad)
		return;
	if (!json_is_integer(v) || json_integer_value(v) < -1 || json_integer_value(v) > 100000000) {
		gb_fail(r->err, "%s: field \"%s\" must be an integer between -1 and 100000000", r->path, key);
		r->bad = 1;
		return;
	}
	*out = (int)json_integer_value(v);
}

static void get_bool(rd *r, json_t *o, const char *key, int *out)
{
	json_t *v = field(r, o, key);
	if (!v || json_is_null(v) || r->bad)
		return;
	if (!json_is_boolean(v)) {
		gb_fail(r->err, "%s: field \"%s\" must be true or false", r->path, key);
		r->bad = 1;
		return;
	}
	*out = json_is_true(v);
}

static void get_float(rd *r, json_t *o, const char *key, float *out)
{
	json_t *v = field(r, o, key);
	if (!v || json_is_null(v) || r->bad)
		return;
	if (!json_is_number(v) || !isfinite(json_number_value(v))) {
		gb_fail(r->err, "%s: field \"%s\" must be a number", r->path, key);
		r->bad = 1;
		return;
	}
	*out = (float)json_number_value(v);
}

/* rope_scaling, as Hugging Face writes it: null, or {"rope_type" (or the older "type"): "linear",
 * "factor"} or {"rope_type": "llama3", "factor", "low_freq_factor", "high_freq_factor",
 * "original_max_position_embeddings"}. Any other type, or a key these do not have, is an error
 * that names it: RoPE scaled another way would rotate every query and key differently. */
static void get_rope_scaling(rd *r, json_t *root, gb_config *c)
{
	json_t *v = field(r, root, "rope_scaling"), *t;
	if (!v || json_is_null(v) || r->bad)
		return;
	t = json_object_get(v, "rope_type");
	if (!t)
		t = json_object_get(v, "type");
	if (!json_is_object(v) || !json_is_string(t)) {
		gb_fail(r->err, "%s: field \"rope_scaling\" must be null or an object with a \"rope_type\"", r->path);
		r->bad = 1;
		return;
	}
	const char *type = json_string_value(t), *k;
	static const char *const types[] = { "default", "linear", "llama3" };
	int ty = lookup(type, types, 3);
	if (ty < 0) {
		gb_fail(r->err, "%s: rope_scaling type \"%s\" is not supported (glassbox has \"linear\" and "
		        "\"llama3\")", r->path, type);
		r->bad = 1;
		return;
	}
	static const char *const keys[] = { "rope_type", "type", "factor", "low_freq_factor", "high_freq_factor",
		                                "original_max_position_embeddings" };
	json_t *x;
	json_object_foreach(v, k, x) {
		int i = lookup(k, keys, 6);
		if (i < 0 || (i >= 2 && ty == 0) || (i >= 3 && ty == 1)) {
			gb_fail(r->err, "%s: rope_scaling %s: option \"%s\" is not supported", r->path, type, k);
			r->bad = 1;
			return;
		}
	}
	c->rope_scale = ty == 0 ? GB_ROPE_SCALE_NONE : ty == 1 ? GB_ROPE_SCALE_LINEAR : GB_ROPE_SCALE_LLAMA3;
	if (ty == 0)
		return;
	c->rope_factor = 0;
	get_float(r, v, "factor", &c->rope_factor);
	if (ty == 2) {
		c->rope_low = c->rope_high = 0;
		c->rope_orig_ctx = 0;
		get_float(r, v, "low_freq_factor", &c->rope_low);
		get_float(r, v, "high_freq_factor", &c->rope_high);
		get_int(r, v, "original_max_position_embeddings", &c->rope_orig_ctx);
	}
}

/* Reads a string field and maps it through a name table (or the activation parser). */
static void get_enum(rd *r, json_t *o, const char *key, const char *const *names, int n, int *out,
                     const char *allowed)
{
	json_t *v = field(r, o, key);
	if (!v || json_is_null(v) || r->bad)
		return;
	int i = json_is_string(v) ? lookup(json_string_value(v), names, n) : -1;
	if (i < 0) {
		gb_fail(r->err, "%s: field \"%s\" is %s%s%s; expected one of %s", r->path, key,
		        json_is_string(v) ? "\"" : "not a string", json_is_string(v) ? json_string_value(v) : "",
		        json_is_string(v) ? "\"" : "", allowed);
		r->bad = 1;
		return;
	}
	*out = i;
}

static void get_act(rd *r, json_t *o, const char *key, gb_config *c)
{
	json_t *v = field(r, o, key);
	if (!v || json_is_null(v) || r->bad)
		return;
	if (!json_is_string(v) || parse_act(c, json_string_value(v))) {
		gb_fail(r->err, "%s: field \"%s\" is not a known activation; expected relu, gelu, gelu_new, "
		        "gelu_tanh, silu or swiglu (gated)", r->path, key);
		r->bad = 1;
	}
}

int gb_config_parse(gb_config *c, const char *text, const char *path, gb_err *err)
{
	json_error_t je;
	/* a key given twice is a file two tools disagree about: which one did its author mean? */
	json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return gb_fail(err, "%s: broken JSON at line %d: %s", path, je.line, je.text);
	if (!json_is_object(root)) {
		json_decref(root);
		return gb_fail(err, "%s: not a JSON object", path);
	}
	json_t *mt = json_object_get(root, "model_type");
	if (!json_is_string(mt)) {
		json_decref(root);
		return gb_fail(err, "%s: no \"model_type\" (expected \"gpt2\", \"llama\" or \"glassbox-encdec\")", path);
	}
	int fam = lookup(json_string_value(mt), gb_family_names, 3);
	if (fam < 0) {
		gb_fail(err, "%s: unknown model_type \"%s\" (expected \"gpt2\", \"llama\" or \"glassbox-encdec\")",
		        path, json_string_value(mt));
		json_decref(root);
		return -1;
	}
	gb_config_defaults(c, fam);
	rd r = { path, err, 0 };
	json_t *gb = json_object_get(root, "glassbox");
	if (gb && !json_is_object(gb)) {
		json_decref(root);
		return gb_fail(err, "%s: \"glassbox\" must be an object", path);
	}
	int kv = -1, head_dim = -1, ffn = -1, post = -1;
	get_int(&r, root, "vocab_size", &c->vocab);
	if (fam == GB_FAM_GPT2) {
		get_int(&r, root, "n_embd", &c->d_model);
		get_int(&r, root, "n_layer", &c->n_layer);
		get_int(&r, root, "n_head", &c->n_head);
		get_int(&r, root, "n_positions", &c->n_ctx);
		get_int(&r, root, "n_inner", &ffn);
		get_float(&r, root, "layer_norm_epsilon", &c->norm_eps);
		get_act(&r, root, "activation_function", c);
	} else if (fam == GB_FAM_LLAMA) {
		get_int(&r, root, "hidden_size", &c->d_model);
		get_int(&r, root, "num_hidden_layers", &c->n_layer);
		get_int(&r, root, "num_attention_heads", &c->n_head);
		get_int(&r, root, "num_key_value_heads", &kv);
		get_int(&r, root, "head_dim", &head_dim);
		get_int(&r, root, "max_position_embeddings", &c->n_ctx);
		get_int(&r, root, "intermediate_size", &ffn);
		get_float(&r, root, "rms_norm_eps", &c->norm_eps);
		get_float(&r, root, "rope_theta", &c->rope_theta);
		get_bool(&r, root, "attention_bias", &c->bias);
		get_bool(&r, root, "mlp_bias", &c->ffn_bias);
		json_t *ha = json_object_get(root, "hidden_act");
		/* Llama's MLP is always gated: hidden_act names the gate's activation. Only silu is
		 * supported gated; glassbox.activation can make it a plain MLP instead. */
		if (ha && (!json_is_string(ha) || strcmp(json_string_value(ha), "silu"))) {
			gb_fail(err, "%s: hidden_act must be \"silu\" (SwiGLU); set glassbox.activation for "
			        "another FFN", path);
			r.bad = 1;
		}
	} else {
		get_int(&r, root, "d_model", &c->d_model);
		get_int(&r, root, "encoder_layers", &c->n_enc_layer);
		get_int(&r, root, "decoder_layers", &c->n_layer);
		get_int(&r, root, "attention_heads", &c->n_head);
		get_int(&r, root, "ffn_dim", &ffn);
		get_int(&r, root, "max_position_embeddings", &c->n_ctx);
		get_act(&r, root, "activation_function", c);
		get_bool(&r, root, "scale_embedding", &c->scale_embed);
		get_int(&r, root, "decoder_start_token_id", &c->dec_start_id);
	}
	get_rope_scaling(&r, root, c);
	get_bool(&r, root, "tie_word_embeddings", &c->tied);
	get_int(&r, root, "bos_token_id", &c->bos_id);
	get_int(&r, root, "eos_token_id", &c->eos_id);
	get_int(&r, root, "pad_token_id", &c->pad_id);

	static const char *prepost[] = { "pre", "post" };
	get_enum(&r, gb, "norm", gb_norm_names, 2, &c->norm, "\"layernorm\", \"rmsnorm\"");
	get_enum(&r, gb, "norm_position", prepost, 2, &post, "\"pre\", \"post\"");
	if (post >= 0) {
		c->prenorm = post == 0;
		c->final_norm = c->prenorm;
	}
	get_bool(&r, gb, "final_norm", &c->final_norm);
	get_enum(&r, gb, "position", gb_pos_names, 6, &c->pos,
	         "\"none\", \"sinusoidal\", \"learned\", \"rope\", \"alibi\", \"t5\"");
	get_int(&r, gb, "relative_attention_num_buckets", &c->rel_buckets);
	get_int(&r, gb, "relative_attention_max_distance", &c->rel_max_dist);
	get_enum(&r, gb, "attention", gb_attn_kind_names, 2, &c->attn_kind, "\"softmax\", \"linear\"");
	get_int(&r, gb, "num_local_experts", &c->n_experts);
	get_int(&r, gb, "num_experts_per_tok", &c->top_k);
	get_bool(&r, gb, "norm_topk_prob", &c->norm_topk);
	get_float(&r, gb, "router_aux_loss_coef", &c->aux_coef);
	get_act(&r, gb, "activation", c);
	int both = -1;
	get_bool(&r, gb, "bias", &both);
	if (both >= 0)
		c->bias = c->ffn_bias = both;
	get_bool(&r, gb, "ffn_bias", &c->ffn_bias);
	get_bool(&r, gb, "norm_bias", &c->norm_bias);
	get_int(&r, gb, "window", &c->window);
	get_bool(&r, gb, "textbook_layernorm", &c->textbook_ln);
	get_int(&r, gb, "n_kv_head", &kv);
	get_int(&r, gb, "head_dim", &head_dim);
	get_float(&r, gb, "norm_eps", &c->norm_eps);
	get_float(&r, gb, "rope_theta", &c->rope_theta);
	get_enum(&r, gb, "rope_pairing", gb_rope_pairs_names, 2, &c->rope_pairs, "\"half\", \"adjacent\"");
	get_bool(&r, gb, "scale_embedding", &c->scale_embed);
	json_decref(root);
	if (r.bad)
		return -1;

	if (c->n_head > 0) {
		c->n_kv_head = kv > 0 ? kv : c->n_head;
		c->d_head = head_dim > 0 ? head_dim : c->d_model / c->n_head;
	}
	c->d_ffn = ffn > 0 ? ffn : 4 * c->d_model;
	if (c->dec_start_id < 0)
		c->dec_start_id = c->bos_id;
	return gb_config_check(c, path, err);
}

int gb_config_load(gb_config *c, const char *path, gb_err *err)
{
	char *text = gb_read_file(path, 16u << 20, NULL, err);
	if (!text)
		return -1;
	int rc = gb_config_parse(c, text, path, err);
	free(text);
	return rc;
}

char *gb_config_to_json(const gb_config *c)
{
	json_t *o = json_object(), *g = json_object();
	json_object_set_new(o, "model_type", json_string(gb_family_name(c->family)));
	json_object_set_new(o, "vocab_size", json_integer(c->vocab));
	const char *act = gb_act_name(c->act, c->ffn);
	if (c->act == GB_ACT_GELU_TANH && c->ffn == GB_FFN_PLAIN)
		act = "gelu_new";
	if (c->family == GB_FAM_GPT2) {
		json_object_set_new(o, "n_embd", json_integer(c->d_model));
		json_object_set_new(o, "n_layer", json_integer(c->n_layer));
		json_object_set_new(o, "n_head", json_integer(c->n_head));
		json_object_set_new(o, "n_positions", json_integer(c->n_ctx));
		json_object_set_new(o, "n_ctx", json_integer(c->n_ctx));
		json_object_set_new(o, "n_inner", json_integer(c->d_ffn));
		json_object_set_new(o, "layer_norm_epsilon", json_real(c->norm_eps));
		json_object_set_new(o, "activation_function", json_string(act));
	} else if (c->family == GB_FAM_LLAMA) {
		json_object_set_new(o, "hidden_size", json_integer(c->d_model));
		json_object_set_new(o, "num_hidden_layers", json_integer(c->n_layer));
		json_object_set_new(o, "num_attention_heads", json_integer(c->n_head));
		json_object_set_new(o, "num_key_value_heads", json_integer(c->n_kv_head));
		json_object_set_new(o, "head_dim", json_integer(c->d_head));
		json_object_set_new(o, "max_position_embeddings", json_integer(c->n_ctx));
		json_object_set_new(o, "intermediate_size", json_integer(c->d_ffn));
		json_object_set_new(o, "rms_norm_eps", json_real(c->norm_eps));
		json_object_set_new(o, "rope_theta", json_real(c->rope_theta));
		json_object_set_new(o, "attention_bias", json_boolean(c->bias));
		json_object_set_new(o, "mlp_bias", json_boolean(c->ffn_bias));
		json_object_set_new(o, "hidden_act", json_string("silu"));
		if (c->ffn != GB_FFN_GATED)
			json_object_set_new(g, "activation", json_string(act));
	} else {
		json_object_set_new(o, "d_model", json_integer(c->d_model));
		json_object_set_new(o, "encoder_layers", json_integer(c->n_enc_layer));
		json_object_set_new(o, "decoder_layers", json_integer(c->n_layer));
		json_object_set_new(o, "attention_heads", json_integer(c->n_head));
		json_object_set_new(o, "ffn_dim", json_integer(c->d_ffn));
		json_object_set_new(o, "max_position_embeddings", json_integer(c->n_ctx));
		json_object_set_new(o, "activation_function", json_string(act));
		json_object_set_new(o, "scale_embedding", json_boolean(c->scale_embed));
		json_object_set_new(o, "decoder_start_token_id", json_integer(c->dec_start_id));
	}
	if (c->rope_scale != GB_ROPE_SCALE_NONE) {
		json_t *rs = json_object();
		json_object_set_new(rs, "rope_type", json_string(gb_rope_scale_names[c->rope_scale]));
		json_object_set_new(rs, "factor", json_real(c->rope_factor));
		if (c->rope_scale == GB_ROPE_SCALE_LLAMA3) {
			json_object_set_new(rs, "low_freq_factor", json_real(c->rope_low));
			json_object_set_new(rs, "high_freq_factor", json_real(c->rope_high));
			json_object_set_new(rs, "original_max_position_embeddings", json_integer(c->rope_orig_ctx));
		}
		json_object_set_new(o, "rope_scaling", rs);
	}
	json_object_set_new(o, "tie_word_embeddings", json_boolean(c->tied));
	if (c->bos_id >= 0) json_object_set_new(o, "bos_token_id", json_integer(c->bos_id));
	if (c->eos_id >= 0) json_object_set_new(o, "eos_token_id", json_integer(c->eos_id));
	if (c->pad_id >= 0) json_object_set_new(o, "pad_token_id", json_integer(c->pad_id));
	/* The glassbox object is written in full, so the file says everything without defaults. */
	json_object_set_new(g, "norm", json_string(gb_norm_name(c->norm)));
	json_object_set_new(g, "norm_position", json_string(c->prenorm ? "pre" : "post"));
	json_object_set_new(g, "final_norm", json_boolean(c->final_norm));
	json_object_set_new(g, "position", json_string(gb_pos_name(c->pos)));
	if (c->pos == GB_POS_T5) {
		json_object_set_new(g, "relative_attention_num_buckets", json_integer(c->rel_buckets));
		json_object_set_new(g, "relative_attention_max_distance", json_integer(c->rel_max_dist));
	}
	if (c->attn_kind == GB_ATTN_LINEAR) /* the new fields only where used: older readers keep working */
		json_object_set_new(g, "attention", json_string("linear"));
	if (c->n_experts) {
		json_object_set_new(g, "num_local_experts", json_integer(c->n_experts));
		json_object_set_new(g, "num_experts_per_tok", json_integer(c->top_k));
		json_object_set_new(g, "norm_topk_prob", json_boolean(c->norm_topk));
		json_object_set_new(g, "router_aux_loss_coef", json_real(c->aux_coef));
	}
	json_object_set_new(g, "activation", json_string(gb_act_name(c->act, c->ffn)));
	if (c->family != GB_FAM_LLAMA) {
		json_object_set_new(g, "bias", json_boolean(c->bias));
		json_object_set_new(g, "ffn_bias", json_boolean(c->ffn_bias));
	}
	json_object_set_new(g, "norm_bias", json_boolean(c->norm_bias));
	json_object_set_new(g, "window", json_integer(c->window));
	json_object_set_new(g, "textbook_layernorm", json_boolean(c->textbook_ln));
	json_object_set_new(g, "n_kv_head", json_integer(c->n_kv_head));
	json_object_set_new(g, "head_dim", json_integer(c->d_head));
	json_object_set_new(g, "norm_eps", json_real(c->norm_eps));
	json_object_set_new(g, "rope_theta", json_real(c->rope_theta));
	json_object_set_new(g, "rope_pairing", json_string(gb_rope_pairs_names[c->rope_pairs == GB_ROPE_ADJACENT]));
	json_object_set_new(g, "scale_embedding", json_boolean(c->scale_embed));
	json_object_set_new(o, "glassbox", g);
	char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(o);
	return s;
}
