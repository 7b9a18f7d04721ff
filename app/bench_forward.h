/* bench_forward.h — the forward-pass benchmark, and `glassbox bench` as a whole. */
#ifndef GLASSBOX_BENCH_FORWARD_H
#define GLASSBOX_BENCH_FORWARD_H

#include <stdio.h>

/* The 64-token forward pass with the full trace through a 4-layer, d_model 128, 4-head
 * model, on every kernel table, side by side; then bench_forward_gpt2. */
int bench_forward(FILE *out);

/* The same 64-token prefill on GPT-2 small's shape, the fast table, 1 thread and all threads
 * alternating. */
int bench_forward_gpt2(FILE *out);

/* Loading tiny-lm, and run + attn on a 30-token sentence. */
int bench_session(FILE *out);

/* Everything `glassbox bench` measures: the kernels, matrix-vector products, the forward pass. */
int bench_all(FILE *out);

/* `glassbox bench [kernels|matvec|forward|decode ...]`: argv holds the words after "bench";
 * none runs bench_all. Returns 0, or -1 after a message on stderr. */
int bench_main(FILE *out, int argc, char **argv);

#endif
