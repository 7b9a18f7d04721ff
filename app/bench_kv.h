/* bench_kv.h — greedy decoding with the key/value cache against a full recompute a token. */
#ifndef GLASSBOX_BENCH_KV_H
#define GLASSBOX_BENCH_KV_H

#include <stdio.h>

/* Tokens per second of 100 greedy tokens after an 8-token prompt, with and without the
 * cache, 1 and 2 threads, on tiny-lm and a random GPT-2-small-shaped model (a few minutes:
 * the full recompute of the large model is slow by design). */
int bench_kvcache(FILE *out);

#endif
