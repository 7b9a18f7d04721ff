/* bench_attn.h — the cost of softmax, sliding-window and linear attention against the
 * sequence length, measured on the kernel table (bench_attn.c). */
#ifndef GLASSBOX_BENCH_ATTN_H
#define GLASSBOX_BENCH_ATTN_H

#include <stdio.h>

#include "model/kernels/kernels.h"

#define ATTN_COST_MAX 12

/* Forms: 0 softmax, 1 a sliding window of `window`, 2 linear attention. */
typedef struct attn_cost {
	int n;                               /* lengths measured: 64, 128, ... */
	int T[ATTN_COST_MAX];
	double seconds[3][ATTN_COST_MAX];    /* one head's attention, best of three means */
	double bytes[3][ATTN_COST_MAX];      /* the working memory each form allocates or keeps */
	int window, d_head;
	const char *kernels;
} attn_cost;

/* Measures lengths 64, 128, ... up to max_T with kernel table k (NULL: the fast one); -1 when
 * memory runs out. */
int bench_attn_measure(const gb_kernels *k, int max_T, attn_cost *c);
/* The slope of log(time) (what 0) or log(memory) (what 1) on log(length) over the upper half
 * of the lengths: about 2 for a quadratic cost, 1 for a linear one, 0 for a constant. */
double attn_slope(const attn_cost *c, int form, int what);
/* `bench attention`: the table and the slopes. */
int bench_attention(FILE *out);

#endif
