/* bench.h — `glassbox bench`: timings of the kernel tables (and, later, of a forward pass). */
#ifndef GLASSBOX_BENCH_H
#define GLASSBOX_BENCH_H

#include <stdio.h>

/* Prints, for every kernel table this CPU has (ref, scalar, avx2, avx512), the matmul
 * GFLOP/s on the benchmark shapes with 1 thread and with all threads, side by side.
 * Takes about 10-20 s. Returns 0, or -1 when memory runs out. */
int bench_kernels(FILE *out);

/* A monotonic clock in seconds, and a qsort comparison of doubles, for every benchmark. */
double bench_now(void);

/* The configuration the issues name for the forward and training figures: tiny-lm's shape
 * (gpt2 family, 4 layers, d_model 128, 4 heads, FFN 512, context 128). */
struct gb_config;
void bench_tiny_config(struct gb_config *c, int vocab);
int bench_cmp_double(const void *a, const void *b);

#endif
