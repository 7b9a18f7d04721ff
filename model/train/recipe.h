/* recipe.h — the shipped training recipes and the data they train on: a recipe names a
 * model configuration, a tokenizer, a data set and the optimizer's settings, so that
 * `glassbox train --preset NAME` rebuilds a shipped model from nothing but this source.
 *
 *   tiny-lm   decoder-only (gpt2 family), pre-norm LayerNorm, tanh GELU, learned positions,
 *             4 layers x 4 heads, d_model 128, context 128, byte-level BPE of 1727 tokens
 *             learned on the generated English world (model/corpus.h): every merge its
 *             text supports, so each of the world's words is one token
 *   tiny-mt   encoder-decoder in the textbook's layout (post-norm, sinusoidal, ReLU, scaled
 *             embeddings), 2 + 2 layers x 4 heads, d_model 128, characters (bytes), on dates
 *   corpus    for a teacher's own text: a small decoder-only model and a BPE vocabulary
 *             learned on that text */
#ifndef GLASSBOX_RECIPE_H
#define GLASSBOX_RECIPE_H

#include "model/model.h"
#include "model/rng.h"
#include "model/tokenizer/tokenizer.h"
#include "model/train/train.h"

typedef struct gb_recipe {
	char name[32];
	gb_config cfg;
	gb_train_opts opts;
	int steps;            /* updates */
	int batch;            /* sequences per update */
	int seq;              /* tokens per sequence (decoder-only) */
	int eval_every;       /* held-out loss every this many steps */
	int save_every;       /* checkpoint every this many steps */
	uint64_t data_seed;
	size_t corpus_bytes;  /* tiny-lm: the generated training text */
	size_t extra_bytes;   /* tiny-lm: more text of the harder tasks (agreement, possession) */
	float induction_frac; /* tiny-lm: share of sequences that are a random run of tokens
	                       * repeated, the setting in which induction heads form */
	int vocab;            /* BPE vocabulary (decoder-only) */
	int n_pairs;          /* tiny-mt: training date pairs */
} gb_recipe;

/* The recipe of a preset ("tiny-lm", "tiny-mt", or one of tiny-lm's variants below); -1 with
 * the list of names when unknown. */
int gb_recipe_preset(gb_recipe *r, const char *name, gb_err *err);

/* tiny-lm's variants (variants.c): tiny-lm's recipe with one choice changed, each written as
 * --set assignments (gb_recipe_variant_info gives them): tiny-lm-sinusoidal, -rope, -alibi,
 * -t5, -nopos, -postnorm, -rmsnorm, -mqa, -gqa, -window, -swiglu, -moe, -switch, -linear.
 * gb_recipe_variant fails with the list of every preset when name is none of them. */
int gb_recipe_variant(gb_recipe *r, const char *name, gb_err *err);
int gb_recipe_variant_count(void);
/* Variant i's name (NULL past the end), its assignments and a few words on what it changes. */
const char *gb_recipe_variant_info(int i, const char **sets, const char **what);

/* One FIELD=VALUE of `train --set`: a field of the architecture (config.json's meaning:
 * position, norm, norm_position, activation, attention, window, n_kv_head, d_ffn, the T5 and
 * mixture-of-experts fields, ...) or of the training (steps, lr, warmup, batch, ...). An
 * unknown field fails naming every field; a bad value names the allowed values or range.
 * Combinations are checked afterwards by gb_recipe_check. */
int gb_recipe_set(gb_recipe *r, const char *assign, gb_err *err);
int gb_recipe_check(const gb_recipe *r, gb_err *err);
/* Field i's name (NULL past the end) and a few words on it. */
const char *gb_recipe_field_info(int i, const char **help);

/* A recipe for a teacher's text of len bytes: vocabulary, steps (about 1 KB of text a step,
 * 60 to 3000), warm-up, held-out points (6 to 20 a run) and checkpoints (4 a run) scaled to
 * the text. */
int gb_recipe_for_text(gb_recipe *r, size_t len, gb_err *err);

/* Training data, tokenized. Decoder-only: one token stream with document starts (positions
 * right after an end-of-text token) to cut sequences at. Encoder-decoder: (source, target)
 * pairs, the target ending with eos. */
typedef struct gb_dataset {
	int *tok;             /* (n_tok) */
	size_t n_tok;
	size_t *starts;       /* (n_starts) document starts in tok */
	size_t n_starts;
	int **src, **tgt;     /* (n_pairs) each */
	int *src_len, *tgt_len;
	int n_pairs;
} gb_dataset;

void gb_dataset_free(gb_dataset *d);

/* Builds the tokenizer (into *tok) and the training and held-out sets of a preset recipe.
 * For gb_recipe_for_text, text (len bytes) is the teacher's file: the last 5% of it (at a
 * line break) is held out. */
int gb_recipe_data(const gb_recipe *r, const char *text, size_t len, gb_tokenizer **tok, gb_dataset *train,
                   gb_dataset *held, gb_err *err);

/* Fills a batch of r->batch sequences drawn with rng: ids/tgt (batch, T), src (batch, Ts) for
 * encoder-decoders; buffers are malloc'd once into *buf and reused. Returns 0 or -1. */
typedef struct gb_batch_buf {
	int *ids, *tgt, *src;
	int cap_ids, cap_tgt, cap_src;
} gb_batch_buf;

int gb_recipe_batch(const gb_recipe *r, const gb_dataset *d, gb_rng *rng, gb_batch_buf *buf, gb_batch *b,
                    gb_err *err);
void gb_batch_buf_free(gb_batch_buf *b);

#endif
