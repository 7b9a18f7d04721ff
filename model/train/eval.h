/* eval.h — probes of what a trained model learned, on held-out data: for each probe whether
 * the right continuation is more probable than every wrong one (or, for induction, whether
 * it is the single most probable next token), and dates translated exactly. */
#ifndef GLASSBOX_EVAL_H
#define GLASSBOX_EVAL_H

#include "model/train/corpus.h"
#include "model/forward.h"

typedef struct gb_eval_result {
	int n;             /* probes scored */
	int correct;
	double margin;     /* mean log p(good) - max log p(bad) (probes), 0 for dates */
} gb_eval_result;

/* log p(cont | prompt) under a decoder-only model with a tokenizer, the prompt preceded by
 * the model's bos token when it has one. */
int gb_eval_logprob(const gb_model *m, const gb_kernels *k, const char *prompt, const char *cont,
                    double *lp, gb_err *err);

/* Scores a probe set. top1: a probe counts when good's first token is the argmax after the
 * prompt (induction); otherwise when log p(good) exceeds log p(bad) for every bad, good and
 * bad being whole words: p(word) = p(its tokens) x p(the next token ends it: a space,
 * punctuation or end of text). Without the last factor " sleep" would be credited with
 * " sleep"+"s" too, and a plural verb would beat a singular one it is a token-prefix of. */
int gb_eval_probes(const gb_model *m, const gb_kernels *k, const gb_probe_set *ps, int top1,
                   gb_eval_result *r, gb_err *err);

/* Greedy translation of src (an encoder-decoder with a tokenizer) into out (cap bytes). */
int gb_translate(const gb_model *m, const gb_kernels *k, const char *src, char *out, size_t cap, gb_err *err);

/* Exact-match accuracy of greedy translation on date pairs. */
int gb_eval_dates(const gb_model *m, const gb_kernels *k, const gb_date_pair *pairs, int n,
                  gb_eval_result *r, gb_err *err);

/* The shipped models' probes on held-out data, with the bars the project holds them to:
 * decoder-only: agreement, pronoun, indirect object, possession, induction (top-1);
 * encoder-decoder: dates exact match. n probes per kind; rows (at least 8). */
typedef struct gb_probe_score {
	const char *name;
	double acc, bar;
	int n;
} gb_probe_score;

int gb_eval_model(const gb_model *m, const gb_kernels *k, int n, gb_probe_score *rows, int *n_rows, gb_err *err);

/* Head scores of a decoder-only model (out (n_layer * n_head)) on 40 held-out documents of
 * the generated world and 50 random runs of 24 ordinary tokens seen twice. */
struct gb_head_score;
int gb_eval_heads(const gb_model *m, const gb_kernels *k, struct gb_head_score *out, gb_err *err);

/* Cross-attention monotonicity of an encoder-decoder (out (n_layer * n_head)) on 50 held-out
 * date pairs with their correct translations. */
int gb_eval_cross(const gb_model *m, const gb_kernels *k, float *out, gb_err *err);

#endif
