/* eval.h — probes of what a trained model learned, on held-out data: for each probe whether
 * the right continuation is more probable than every wrong one (or, for induction, whether
 * it is the single most probable next token), and dates translated exactly. */
#ifndef GLASSBOX_EVAL_H
#define GLASSBOX_EVAL_H

#include "model/corpus.h"
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
 * prompt (induction); otherwise when log p(good) exceeds log p(bad) for every bad. */
int gb_eval_probes(const gb_model *m, const gb_kernels *k, const gb_probe_set *ps, int top1,
                   gb_eval_result *r, gb_err *err);

/* Greedy translation of src (an encoder-decoder with a tokenizer) into out (cap bytes). */
int gb_translate(const gb_model *m, const gb_kernels *k, const char *src, char *out, size_t cap, gb_err *err);

/* Exact-match accuracy of greedy translation on date pairs. */
int gb_eval_dates(const gb_model *m, const gb_kernels *k, const gb_date_pair *pairs, int n,
                  gb_eval_result *r, gb_err *err);

#endif
