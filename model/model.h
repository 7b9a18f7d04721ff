/* model.h — a model's weights and its folder (config.json, model.safetensors, tokenizer).
 *
 * The weights are a flat list of named parameters (gb_param) in the family's tensor names and
 * file layouts (model/README.md); the per-layer structs below point into them, so the forward
 * pass reads gb_linear/gb_normw and the loader, the writer, the initializer and (later) the
 * optimizer all walk the same list. */
#ifndef GLASSBOX_MODEL_H
#define GLASSBOX_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "model/config.h"
#include "model/err.h"
#include "model/fileio.h"

struct gb_tokenizer;
struct gb_l2c_tok;

/* y = x W + b with W (in, out) when trans == 0 (GPT-2's Conv1D), or y = x Wᵀ + b with
 * W (out, in) when trans == 1 (nn.Linear). */
typedef struct gb_linear {
	const float *w; /* (in, out) or (out, in); NULL when the weights are kept 16-bit */
	const uint16_t *w16; /* the same, kept as the file's BF16 or F16 (widened in the kernel) */
	int wtype;           /* enum gb_wtype (kernels.h) of w16 */
	const float *b; /* (out) or NULL */
	int in, out, trans;
} gb_linear;

typedef struct gb_normw {
	const float *g; /* (d) */
	const float *b; /* (d) or NULL (RMSNorm, or LayerNorm without bias) */
} gb_normw;

typedef struct gb_attn_w {
	int fused;            /* 1: qkv holds q | k | v columns (GPT-2's c_attn) */
	gb_linear qkv;        /* D -> (H + 2K) E, when fused */
	gb_linear q, k, v;    /* D -> H E, D -> K E, D -> K E, when not fused */
	gb_linear o;          /* H E -> D */
	const float *rel_bias; /* (buckets, H) T5's relative bias of self-attention, or NULL */
} gb_attn_w;

typedef struct gb_ffn_w {
	int fused_gate;       /* gated FFN whose gate and up halves share one matrix */
	gb_linear up;         /* D -> F (plain, llama's up), or D -> 2F (gate | up, fused) */
	gb_linear gate;       /* D -> F, gated and not fused */
	gb_linear down;       /* F -> D */
} gb_ffn_w;

/* A mixture of experts in place of the FFN: a router (D -> n_experts, no bias) and n_experts
 * FFNs of width d_ffn each, shaped as the dense one. */
typedef struct gb_moe_w {
	gb_linear router;
	gb_ffn_w *experts;    /* (n_experts) */
} gb_moe_w;

typedef struct gb_layer_w {
	gb_normw ln1;         /* before (pre-norm) or after (post-norm) self-attention */
	gb_normw ln2;         /* the FFN's norm; an encoder-decoder's decoder: cross-attention's */
	gb_normw ln3;         /* an encoder-decoder's decoder: the FFN's norm */
	gb_attn_w attn;
	gb_attn_w cross;      /* decoder layers of an encoder-decoder */
	gb_ffn_w ffn;         /* unused with a mixture of experts */
	gb_moe_w moe;         /* when cfg.n_experts */
} gb_layer_w;

typedef struct gb_stack_w {
	int n_layer;
	const float *pos;     /* learned positions (C, D), or NULL */
	gb_layer_w *layers;   /* (n_layer) */
	gb_normw final;       /* when cfg.final_norm */
} gb_stack_w;

typedef struct gb_param {
	char name[112];
	int ndim;
	int shape[2];         /* as stored in the file */
	size_t n;             /* element count */
	float *data;          /* F32; points into the map (read-only) or into owned memory; NULL
	                       * while the weights are kept 16-bit (data16) */
	const uint16_t *data16; /* a linear layer's BF16/F16 weights as the file holds them */
	int wtype;            /* enum gb_wtype of data16 */
	struct gb_linear *lin; /* the linear layer this is the weight of, or NULL */
	const int8_t *q8;     /* a llama2.c Q8_0 tensor's int8 values as the file holds them (its n /
	                       * l2c_group float32 scales follow), in the map; NULL otherwise */
	const float **slot;   /* where the per-layer structs keep this pointer */
	int init;             /* how gb_model_init fills it: 0 random, 1 ones (norm gain), 2 zeros */
} gb_param;

typedef struct gb_model {
	gb_config cfg;
	char dir[1024];             /* the folder it was loaded from, or "" */
	/* The token embedding (V, D), held as the linear layer D -> V (trans) that a tied output
	 * head is: embed.w the float table, or NULL while a BF16/F16 file's table is kept 16-bit
	 * in embed.w16. Rows are read through gb_model_embed_row, products through
	 * gb_linear_apply (forward.h); only a writable model (training) reads embed.w directly. */
	gb_linear embed;
	gb_linear lm_head;          /* D -> V; a copy of embed when tied */
	gb_stack_w dec;             /* decoder-only: the stack; encoder-decoder: the decoder */
	gb_stack_w enc;             /* encoder-decoder: the encoder */
	gb_param *params;
	int n_params;
	size_t n_weights;           /* total parameter count */
	float *owned;               /* one block for every non-mapped parameter */
	uint16_t *owned16;          /* 16-bit matrices copied out of the map (those off a cache
	                             * line, or all with GLASSBOX_WEIGHTS=copy), or NULL */
	gb_map map;                 /* model.safetensors, or a llama2.c checkpoint */
	gb_map *shards;             /* a sharded checkpoint's files (n_shards) */
	int n_shards;
	char load_note[512];        /* what loading skipped or converted, for `info` ("" if nothing) */
	int writable;               /* every parameter lives in owned memory */
	struct gb_tokenizer *tok;   /* NULL when the folder has none */
	struct gb_l2c_tok *l2c_tok; /* a llama2.c checkpoint's tokenizer.bin, or NULL */
	const float *l2c_freqs;     /* a legacy llama2.c file's unused freq_cis, in the map, or NULL */
	int l2c;                    /* a llama2.c checkpoint: 1 + its version (1 legacy, 2, 3); else 0 */
	int l2c_group;              /* a version 2 checkpoint's group size, else 0 */
	int check_only;             /* gb_model_check: headers, names and shapes, not the values */
} gb_model;

/* Loads a folder: config.json, then model.safetensors or, without it, the shards that
 * model.safetensors.index.json names, then the tokenizer when there is one. On failure *m is
 * left empty and err names the file and the problem. */
int gb_model_load(gb_model *m, const char *dir, gb_err *err);

/* Loads a llama2.c checkpoint (model/formats/llama2c.h) and its tokenizer: tokenizer_path,
 * or when NULL tokenizer.bin beside the checkpoint if there is one (m->load_note says when
 * there is none). gb_model_load calls it for a path that is a file. */
int gb_model_load_llama2c(gb_model *m, const char *path, const char *tokenizer_path, gb_err *err);

/* What the gallery (`models`) shows of a model without reading its weights. */
typedef struct gb_model_summary {
	gb_config cfg;
	size_t n_weights;
	size_t bytes;          /* the weight files' size on disk */
	char format[64];       /* "safetensors", "safetensors, 3 shards", "llama2.c legacy", ... */
	char tokenizer[96];    /* the tokenizer's kind and size, or "none" */
} gb_model_summary;

/* Checks a folder or llama2.c file as gb_model_load would -- every header, name, shape,
 * offset and size, and the tokenizer -- without converting or scanning the weights (NaN and
 * infinite values are not looked for), so it is fast for large models. */
int gb_model_check(const char *path, gb_model_summary *out, gb_err *err);

/* Text to ids with the model's tokenizer, whichever it has: tokenizer.json's BPE, or
 * tokenizer.bin's (llama2.c's encoder, BOS first as run.c's generate does). Fails when the
 * model has no tokenizer. */
int gb_model_encode(const gb_model *m, const char *text, size_t len, int **ids, int *n, gb_err *err);

/* The bytes of token id under the model's tokenizer, NULL without one or out of range. */
const unsigned char *gb_model_piece(const gb_model *m, int id, size_t *len);

/* Memory for n owned weights (m->owned) from gb_big_alloc: on a cache line, and from 4 MB up
 * on huge pages. NULL when out of memory; free() releases it. */
float *gb_weights_alloc(size_t n);

/* The floats a parameter of n values takes in such a block, so that the next one starts on a
 * cache line too: n rounded up to a multiple of 16; gb_weights_slot16, the same for n 16-bit
 * values (a multiple of 32). */
static inline size_t gb_weights_slot(size_t n) { return (n + 15) / 16 * 16; }
static inline size_t gb_weights_slot16(size_t n) { return (n + 31) / 32 * 32; }

/* Whether a loader copies the matrices that a file could serve in place into owned memory
 * (gb_big_alloc: huge pages): 1 every matrix, float32 and 16-bit (GLASSBOX_WEIGHTS=copy;
 * float32 ones decoded 4-7% faster so on Llama-110M's shape, one process, the two
 * alternating, at the cost of the copy at load and of memory no longer shared with other
 * processes mapping the file, a class on one server); 0 (the default) only 16-bit matrices
 * off a cache line, whose loads would straddle two lines (20-30% slower); -1 none
 * (GLASSBOX_WEIGHTS=mapped). */
int gb_weights_copy(void);
/* Overrides GLASSBOX_WEIGHTS for gb_weights_copy with v (1, 0 or -1 as it returns), or with
 * v < -1 gives it back to the environment (the bench's side-by-side loads). */
void gb_weights_copy_set(int v);

/* A model with random weights (N(0, std^2); norm gains 1, biases 0), parameters owned. */
int gb_model_init(gb_model *m, const gb_config *c, uint64_t seed, float std, gb_err *err);

/* Copies mapped parameters into owned memory, so they can be changed (training, ablation);
 * weights kept 16-bit are widened to F32 on the way (save, export and training need floats). */
int gb_model_make_writable(gb_model *m, gb_err *err);

/* Writes config.json, model.safetensors (F32) and, when the model has one, tokenizer.json into
 * dir (created if missing). Each file is written to a temporary name and renamed. */
int gb_model_save(const gb_model *m, const char *dir, gb_err *err);
/* The same with bf16 set: the weight matrices stored as BF16 (half the bytes; each weight
 * rounded to 8 significant bits), vectors F32 (safetensors.h). */
int gb_model_save_as(const gb_model *m, const char *dir, int bf16, gb_err *err);

void gb_model_free(gb_model *m);

/* After a struct copy (*m = *from, e.g. into a session): the parameters' slots and linear
 * layers that pointed into *from (the embedding, the output head) point into *m again, so a
 * later rebinding (gb_model_make_writable) writes into m, not into the old copy. */
void gb_model_moved(gb_model *m, const gb_model *from);

/* Token id's embedding row (d_model floats), unscaled: a pointer into the table when it is
 * float, else the row widened (exactly) into buf (d_model floats) and buf. */
const float *gb_model_embed_row(const gb_model *m, int id, float *buf);

/* The parameter with this name, or NULL. */
gb_param *gb_model_param(const gb_model *m, const char *name);

#endif
