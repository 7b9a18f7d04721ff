/* bench_long.h — `glassbox bench long`: a long input on a GPT-2-small-shaped model, its time
 * and memory against PyTorch's plain forward pass of the same shapes. */
#ifndef GLASSBOX_BENCH_LONG_H
#define GLASSBOX_BENCH_LONG_H

#include <stdio.h>

/* For 512 and 1024 tokens: seconds and peak memory above the weights of a run with the lazy
 * trace (the default for long runs), of one with the full trace, and of PyTorch's forward
 * (tools/bench_torch_forward.py, when /usr/bin/python3 has torch), each in a fresh process,
 * with the same number of threads. Several minutes (PyTorch's is the slow part here). Then
 * the redraws of the 1024-token run's views: the first view of a head (that head computed
 * alone), again, another head, the model's summary, and a layer computed whole. redraws_only
 * (`bench long redraw`): those alone, seconds. */
int bench_long(FILE *out, int redraws_only);

#endif
