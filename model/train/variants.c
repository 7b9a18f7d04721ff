/* variants.c — tiny-lm's family of variants and `train --set FIELD=VALUE`: one table of the
 * fields a recipe lets a user change (the architecture's and the training's), and the shipped
 * variants, each written as the --set assignments that turn tiny-lm's recipe into it, so a
 * variant is by construction tiny-lm with one choice changed (two where the parameter count
 * needs the FFN's width to follow, said beside it). */
#include "model/train/recipe.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum kind { K_INT, K_FLOAT, K_BOOL, K_ENUM, K_ACT, K_NORMPOS };

typedef struct field {
	const char *name;
	int kind;
	int recipe;                 /* 1: a field of gb_recipe (or its opts), 0: of gb_config */
	size_t off;
	const char *const *names;   /* K_ENUM: the values, by enum value */
	int n_names;
	double lo, hi;              /* K_INT, K_FLOAT: the allowed range */
	const char *help;
} field;

static const char *const pos_names[] = { "none", "sinusoidal", "learned", "rope", "alibi", "t5" };
static const char *const norm_names[] = { "layernorm", "rmsnorm" };
static const char *const attn_names[] = { "softmax", "linear" };
static const char *const bool_names[] = { "false", "true" };

#define CF(f) 0, offsetof(gb_config, f)
#define RF(f) 1, offsetof(gb_recipe, f)

static const field fields[] = {
	{ "position", K_ENUM, CF(pos), pos_names, 6, 0, 0, "how positions enter" },
	{ "norm", K_ENUM, CF(norm), norm_names, 2, 0, 0, "LayerNorm or RMSNorm" },
	{ "norm_position", K_NORMPOS, CF(prenorm), NULL, 0, 0, 0, "pre or post (post: no final norm)" },
	{ "final_norm", K_BOOL, CF(final_norm), NULL, 0, 0, 0, "a norm after the last layer" },
	{ "activation", K_ACT, CF(act), NULL, 0, 0, 0, "relu, gelu, gelu_tanh, silu or swiglu (gated)" },
	{ "attention", K_ENUM, CF(attn_kind), attn_names, 2, 0, 0, "softmax or linear (elu + 1 features)" },
	{ "window", K_INT, CF(window), NULL, 0, 0, 1 << 20, "local attention width, 0 for none" },
	{ "n_kv_head", K_INT, CF(n_kv_head), NULL, 0, 1, 1024, "key/value heads (1: multi-query)" },
	{ "n_head", K_INT, CF(n_head), NULL, 0, 1, 1024, "query heads (head width follows d_model / n_head)" },
	{ "head_dim", K_INT, CF(d_head), NULL, 0, 1, 65536, "per-head width" },
	{ "d_model", K_INT, CF(d_model), NULL, 0, 1, 65536, "width (head width follows d_model / n_head)" },
	{ "n_layer", K_INT, CF(n_layer), NULL, 0, 1, 1024, "layers" },
	{ "d_ffn", K_INT, CF(d_ffn), NULL, 0, 1, 262144, "FFN width (of each expert with experts)" },
	{ "context", K_INT, CF(n_ctx), NULL, 0, 2, 1 << 20, "context length" },
	{ "bias", K_BOOL, CF(bias), NULL, 0, 0, 0, "attention's linear layers have biases" },
	{ "qkv_bias", K_BOOL, CF(qkv_bias), NULL, 0, 0, 0, "q, k and v have biases even without bias (Qwen2's layout)" },
	{ "ffn_bias", K_BOOL, CF(ffn_bias), NULL, 0, 0, 0, "the FFN's linear layers have biases" },
	{ "norm_bias", K_BOOL, CF(norm_bias), NULL, 0, 0, 0, "LayerNorm has a bias" },
	{ "tie_word_embeddings", K_BOOL, CF(tied), NULL, 0, 0, 0, "the output projection is the embedding" },
	{ "scale_embedding", K_BOOL, CF(scale_embed), NULL, 0, 0, 0, "embeddings times sqrt(d_model)" },
	{ "norm_eps", K_FLOAT, CF(norm_eps), NULL, 0, 0, 1, "the norms' epsilon" },
	{ "rope_theta", K_FLOAT, CF(rope_theta), NULL, 0, 1, 1e9, "RoPE's base" },
	{ "relative_attention_num_buckets", K_INT, CF(rel_buckets), NULL, 0, 2, 4096, "T5 bias: offset buckets" },
	{ "relative_attention_max_distance", K_INT, CF(rel_max_dist), NULL, 0, 1, 1 << 20, "T5 bias: the last bucket's offset" },
	{ "num_local_experts", K_INT, CF(n_experts), NULL, 0, 0, 256, "experts (0: a dense FFN)" },
	{ "num_experts_per_tok", K_INT, CF(top_k), NULL, 0, 1, 2, "experts per token (top-k)" },
	{ "norm_topk_prob", K_BOOL, CF(norm_topk), NULL, 0, 0, 0, "renormalise the chosen experts' weights" },
	{ "router_aux_loss_coef", K_FLOAT, CF(aux_coef), NULL, 0, 0, 100, "weight of the load-balancing loss" },
	{ "vocab", K_INT, RF(vocab), NULL, 0, 300, 1 << 20, "BPE vocabulary size" },
	{ "steps", K_INT, RF(steps), NULL, 0, 1, 1e7, "updates" },
	{ "batch", K_INT, RF(batch), NULL, 0, 1, 1024, "sequences per update" },
	{ "seq", K_INT, RF(seq), NULL, 0, 2, 1 << 20, "tokens per sequence" },
	{ "lr", K_FLOAT, RF(opts.lr), NULL, 0, 0, 10, "peak learning rate" },
	{ "warmup", K_INT, RF(opts.warmup), NULL, 0, 0, 1e7, "warm-up steps" },
	{ "lr_min", K_FLOAT, RF(opts.lr_min), NULL, 0, 0, 10, "the cosine's floor" },
	{ "weight_decay", K_FLOAT, RF(opts.weight_decay), NULL, 0, 0, 10, "AdamW's decay" },
	{ "clip", K_FLOAT, RF(opts.clip), NULL, 0, 0, 1e6, "gradient clipping norm (0: none)" },
	{ "label_smoothing", K_FLOAT, RF(opts.label_smoothing), NULL, 0, 0, 0.99, "label smoothing" },
	{ "seed", K_INT, RF(opts.seed), NULL, 0, 0, 2147483647, "the initialization's and the data order's seed" },
	{ "eval_every", K_INT, RF(eval_every), NULL, 0, 1, 1e7, "held-out loss every N steps" },
	{ "save_every", K_INT, RF(save_every), NULL, 0, 1, 1e7, "checkpoint every N steps" },
	{ "induction_frac", K_FLOAT, RF(induction_frac), NULL, 0, 0, 1, "share of repeated random runs" },
};

#define N_FIELDS ((int)(sizeof fields / sizeof fields[0]))

/* The shipped variants: tiny-lm plus these assignments. */
typedef struct variant {
	const char *name;
	const char *sets;
	const char *what;
} variant;

static const variant variants[] = {
	{ "tiny-lm-sinusoidal", "position=sinusoidal", "sinusoidal positions" },
	{ "tiny-lm-rope", "position=rope", "RoPE" },
	{ "tiny-lm-alibi", "position=alibi", "ALiBi" },
	{ "tiny-lm-t5", "position=t5", "T5's learned relative bias (32 buckets, max distance 128)" },
	{ "tiny-lm-nopos", "position=none", "no positions (the causal mask alone)" },
	{ "tiny-lm-postnorm", "norm_position=post", "post-norm" },
	{ "tiny-lm-rmsnorm", "norm=rmsnorm", "RMSNorm" },
	/* one key/value head alone would leave 10.5% fewer parameters than tiny-lm: the FFN widens
	 * to 544 to stay within 10% */
	{ "tiny-lm-mqa", "n_kv_head=1 d_ffn=544", "multi-query attention (1 key/value head)" },
	{ "tiny-lm-gqa", "n_kv_head=2", "grouped-query attention (2 key/value heads)" },
	{ "tiny-lm-window", "window=8", "a sliding window of 8" },
	/* gated: three matrices, so 2/3 of the width keeps the count */
	{ "tiny-lm-swiglu", "activation=swiglu d_ffn=344", "SwiGLU" },
	/* four experts a quarter as wide hold the dense FFN's parameters */
	{ "tiny-lm-moe", "num_local_experts=4 d_ffn=128 num_experts_per_tok=2 norm_topk_prob=true",
	  "a mixture of 4 experts, top-2 (Mixtral's renormalised gates)" },
	{ "tiny-lm-switch", "num_local_experts=4 d_ffn=128 num_experts_per_tok=1 norm_topk_prob=false",
	  "a mixture of 4 experts, top-1 (Switch: the router's probability as the gate)" },
	{ "tiny-lm-linear", "attention=linear", "linear attention (elu + 1 features)" },
};

#define N_VARIANTS ((int)(sizeof variants / sizeof variants[0]))

static int parse_act(const char *v, int *act, int *ffn)
{
	static const struct { const char *n; int act, ffn; } a[] = {
		{ "relu", GB_ACT_RELU, GB_FFN_PLAIN }, { "gelu", GB_ACT_GELU, GB_FFN_PLAIN },
		{ "gelu_tanh", GB_ACT_GELU_TANH, GB_FFN_PLAIN }, { "gelu_new", GB_ACT_GELU_TANH, GB_FFN_PLAIN },
		{ "silu", GB_ACT_SILU, GB_FFN_PLAIN }, { "swiglu", GB_ACT_SILU, GB_FFN_GATED },
	};
	for (size_t i = 0; i < sizeof a / sizeof a[0]; i++)
		if (!strcmp(v, a[i].n)) {
			*act = a[i].act;
			*ffn = a[i].ffn;
			return 0;
		}
	return -1;
}

static void list_fields(char *buf, size_t cap)
{
	size_t n = 0;
	buf[0] = 0;
	for (int i = 0; i < N_FIELDS && n < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? " " : "", fields[i].name);
}

static void list_names(const field *f, char *buf, size_t cap)
{
	size_t n = 0;
	buf[0] = 0;
	for (int i = 0; i < f->n_names && n < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? ", " : "", f->names[i]);
}

int gb_recipe_set(gb_recipe *r, const char *assign, gb_err *err)
{
	char key[64], list[1024];
	const char *eq = strchr(assign, '=');
	if (!eq || eq == assign || (size_t)(eq - assign) >= sizeof key)
		return gb_fail(err, "--set takes FIELD=VALUE (e.g. position=alibi), not '%s'", assign);
	memcpy(key, assign, (size_t)(eq - assign));
	key[eq - assign] = 0;
	const char *v = eq + 1;
	const field *f = NULL;
	for (int i = 0; i < N_FIELDS && !f; i++)
		if (!strcmp(fields[i].name, key))
			f = &fields[i];
	if (!f) {
		list_fields(list, sizeof list);
		return gb_fail(err, "--set: unknown field '%.20s'; fields: %s", key, list);
	}
	if (r->cfg.encdec && f->recipe && (!strcmp(key, "vocab") || !strcmp(key, "seq") || !strcmp(key, "induction_frac")))
		return gb_fail(err, "--set %s: an encoder-decoder recipe (bytes, date pairs) has no %s", key, key);
	char *base = f->recipe ? (char *)r : (char *)&r->cfg, *end;
	void *at = base + f->off;
	switch (f->kind) {
	case K_ENUM:
		for (int i = 0; i < f->n_names; i++)
			if (!strcmp(v, f->names[i])) {
				*(int *)at = i;
				return 0;
			}
		list_names(f, list, sizeof list);
		return gb_fail(err, "--set %s=%s: %s is one of %s", key, v, key, list);
	case K_BOOL:
		for (int i = 0; i < 2; i++)
			if (!strcmp(v, bool_names[i]) || !strcmp(v, i ? "1" : "0")) {
				*(int *)at = i;
				return 0;
			}
		return gb_fail(err, "--set %s=%s: %s is true or false", key, v, key);
	case K_NORMPOS:
		if (strcmp(v, "pre") && strcmp(v, "post"))
			return gb_fail(err, "--set %s=%s: %s is pre or post", key, v, key);
		/* as config.json's norm_position: a post-norm stack already ends on a norm */
		r->cfg.prenorm = r->cfg.final_norm = !strcmp(v, "pre");
		return 0;
	case K_ACT:
		if (parse_act(v, &r->cfg.act, &r->cfg.ffn))
			return gb_fail(err, "--set %s=%s: %s is one of relu, gelu, gelu_tanh, silu, swiglu", key, v, key);
		return 0;
	}
	errno = 0;
	double x = strtod(v, &end);
	if (!*v || *end || errno || !isfinite(x) || x < f->lo || x > f->hi || (f->kind == K_INT && x != floor(x)))
		return gb_fail(err, f->kind == K_INT ? "--set %s=%.40s: %s is a whole number from %.0f to %.0f"
		                                     : "--set %s=%.40s: %s is a number from %g to %g", key, v, key, f->lo, f->hi);
	if (f->kind == K_FLOAT) {
		*(float *)at = (float)x;
		return 0;
	}
	if (!strcmp(key, "seed")) {
		r->opts.seed = (uint64_t)x;
		return 0;
	}
	*(int *)at = (int)x;
	gb_config *c = &r->cfg;
	if (!strcmp(key, "d_model") || !strcmp(key, "n_head")) { /* the head width follows */
		c->d_head = c->d_model / c->n_head;
		if (c->d_head * c->n_head != c->d_model)
			return gb_fail(err, "--set %s=%s: d_model %d is not a multiple of the %d heads", key, v, c->d_model,
			               c->n_head);
		if (c->n_kv_head > c->n_head || c->n_head % c->n_kv_head)
			c->n_kv_head = c->n_head; /* a grouping that no longer divides: plain multi-head */
	} else if (!strcmp(key, "vocab")) {
		c->vocab = r->vocab;
		c->bos_id = c->eos_id = r->vocab - 1; /* the end-of-text token, last */
	} else if (!strcmp(key, "steps")) {
		r->opts.total_steps = r->steps; /* the cosine ends where the run does */
	} else if (!strcmp(key, "context") && r->seq > c->n_ctx) {
		r->seq = c->n_ctx;
	}
	return 0;
}

int gb_recipe_check(const gb_recipe *r, gb_err *err)
{
	if (gb_config_check(&r->cfg, "--set", err))
		return -1;
	if (!r->cfg.encdec && r->seq > r->cfg.n_ctx)
		return gb_fail(err, "--set: sequences of %d tokens do not fit the context of %d", r->seq, r->cfg.n_ctx);
	return 0;
}

int gb_recipe_variant(gb_recipe *r, const char *name, gb_err *err)
{
	for (int i = 0; i < N_VARIANTS; i++) {
		if (strcmp(name, variants[i].name))
			continue;
		if (gb_recipe_preset(r, "tiny-lm", err))
			return -1;
		char buf[256], *save = NULL;
		snprintf(buf, sizeof buf, "%s", variants[i].sets);
		for (char *a = strtok_r(buf, " ", &save); a; a = strtok_r(NULL, " ", &save))
			if (gb_recipe_set(r, a, err))
				return -1;
		snprintf(r->name, sizeof r->name, "%s", name);
		return gb_recipe_check(r, err);
	}
	char list[1024];
	size_t n = (size_t)snprintf(list, sizeof list, "tiny-lm, tiny-mt");
	for (int i = 0; i < N_VARIANTS && n < sizeof list; i++)
		n += (size_t)snprintf(list + n, sizeof list - n, ", %s", variants[i].name);
	return gb_fail(err, "unknown preset '%s': %s", name, list);
}

int gb_recipe_variant_count(void) { return N_VARIANTS; }

const char *gb_recipe_variant_info(int i, const char **sets, const char **what)
{
	if (i < 0 || i >= N_VARIANTS)
		return NULL;
	if (sets)
		*sets = variants[i].sets;
	if (what)
		*what = variants[i].what;
	return variants[i].name;
}

const char *gb_recipe_field_info(int i, const char **help)
{
	if (i < 0 || i >= N_FIELDS)
		return NULL;
	if (help)
		*help = fields[i].help;
	return fields[i].name;
}
