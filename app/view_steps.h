/* view_steps.h — the figures of the steps that are not a trace tensor (issue 14, part 3): the
 * bytes under a token strip, the BPE merge replay (tokenize --steps / --merges), the decoding
 * steps of generate and the tree of beam. Each builds a figure from what the command computed;
 * it never prints. */
#ifndef GLASSBOX_VIEW_STEPS_H
#define GLASSBOX_VIEW_STEPS_H

#include "app/session.h"
#include "model/decode.h"
#include "model/tokenizer/tokenizer.h"
#include "viz/figure.h"

/* A token's raw bytes as hex pairs ("e2 96 81"), into out. */
void view_hex_bytes(const unsigned char *b, size_t len, char *out, size_t cap);

/* The strip f (cols = n tokens) gets each token's bytes from the session's model. */
int view_set_token_bytes(session *s, gb_figure *f, const int *ids, int n);

/* The merge replay of text as token strips: the bytes, then a strip after each merge (after
 * each group of merges when there are more than GB_MERGE_ROWS, the title says which). */
#define GB_MERGE_ROWS 11
gb_figure *view_merges(session *s, const gb_tokenizer *t, const char *text, const int *ids, int n,
                       const gb_tok_trace *tt);

/* The decoding steps of generate: made step by step as it samples. */
#define GB_DECODE_SHOW 6      /* candidates a step shows */
#define GB_DECODE_STEPS 8     /* steps a figure shows */
typedef struct view_decode view_decode;
view_decode *view_decode_new(session *s, const gb_sampling *sm);
/* One step: the logits it sampled from (V) and the token chosen. 0, or -1 out of memory. */
int view_decode_add(view_decode *d, const float *logits, int V, int chosen);
/* The figure (NULL when no step was added or out of memory); frees d either way. */
gb_figure *view_decode_figure(view_decode *d);

/* The tree of a beam search: every step's kept beams (as gb_beam_search's callback gives them,
 * copied), then the final ones. */
typedef struct view_beam view_beam;
view_beam *view_beam_new(session *s, int k);
int view_beam_add(view_beam *b, int step, const gb_beam *beams, int n);
/* The figure from the steps added and the final beams (best first); frees b either way. */
gb_figure *view_beam_figure(view_beam *b, const gb_beam *final, int n_final);

#endif
