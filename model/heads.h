/* heads.h — the head detector: what each attention head of a model does, as scores that the
 * literature names (previous-token, first-token, self, induction heads) and, for
 * encoder-decoders, how monotone each cross-attention head's alignment is. */
#ifndef GLASSBOX_HEADS_H
#define GLASSBOX_HEADS_H

#include "model/forward.h"

typedef struct gb_head_score {
	float prev;      /* mean weight from position i to i - 1 (i >= 1) */
	float first;     /* mean weight from position i to position 0 (i >= 1) */
	float self;      /* mean weight from position i to itself */
	float induction; /* on a random run repeated twice, mean weight from each token of the
	                  * second copy to the token after its earlier occurrence */
	float prev_rand; /* prev on those same random runs (both copies): a head that attends to
	                  * the previous token whatever the tokens are. On text a head can mix
	                  * position with content (tiny-lm's previous-token head attends to the
	                  * sentence's subject in the world's sentences), so both are reported. */
} gb_head_score;

/* Scores of every (decoder) self-attention head, out (n_layer * n_head), layer-major.
 * prev, first and self average over the given texts (texts[i] has lens[i] ids); induction and
 * prev_rand use n_rep random runs of `run` tokens drawn from ids [lo, hi), repeated twice,
 * after the model's bos token when it has one. */
int gb_head_scores(const gb_model *m, const gb_kernels *k, const int *const *texts, const int *lens,
                   int n_texts, int run, int n_rep, int lo, int hi, uint64_t seed, gb_head_score *out,
                   gb_err *err);

/* The ids the random runs draw from, [lo, hi): the merged (word-like) tokens when the
 * tokenizer has at least 64 of them, never the special tokens at the end of the vocabulary. */
void gb_head_run_tokens(const gb_model *m, int *lo, int *hi);

/* Encoder-decoders: per decoder layer and head (out (n_layer * n_head)), the fraction of
 * consecutive decoder positions whose most-attended source position does not move backwards,
 * averaged over the (source, target) pairs given. 1 = a perfectly monotone alignment. */
int gb_cross_monotone(const gb_model *m, const gb_kernels *k, const int *const *src, const int *src_lens,
                      const int *const *tgt, const int *tgt_lens, int n, float *out, gb_err *err);

#endif
