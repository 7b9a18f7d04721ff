/* bench_decode.h — memory-bound figures: the machine's read bandwidth (a STREAM-like probe),
 * matrix-vector products against it, and `glassbox bench decode`: tokens per second of greedy
 * decoding against the bound set by reading every weight once per token. */
#ifndef GLASSBOX_BENCH_DECODE_H
#define GLASSBOX_BENCH_DECODE_H

#include <stdio.h>

/* The bandwidth probe: a buffer far larger than the caches, read once per sample (a sum of
 * its floats, split in contiguous pieces over the threads). */
typedef struct bench_probe {
	float *buf;
	size_t n;        /* floats */
} bench_probe;

/* Allocates and fills up to 1 GiB (less when memory is short; at least 256 MiB). -1 when
 * even that fails. */
int bench_probe_init(bench_probe *p);
void bench_probe_free(bench_probe *p);

/* Seconds per read of the whole buffer on `threads` threads (the kernel thread pool), over
 * `passes` reads in a row. */
double bench_probe_sample(bench_probe *p, int threads, int passes);

/* One decoding step of a model: feed token `tok` at position `pos` and leave the logits of
 * the next token in logits (vocab). Returns 0, or -1 (the run stops). `what` says what a
 * step computes; it is printed with the figures. */
typedef struct bench_stepper {
	const char *what;
	void *ctx;
	int (*step)(void *ctx, int tok, int pos, float *logits);
} bench_stepper;

/* Matrix-vector products (M = 1, both weight layouts) and a few small M on the shapes of
 * Llama-110M and GPT-2-small, read from a working set far larger than the caches, in GB/s and
 * as a fraction of the probe, 1 thread and all threads side by side. */
int bench_matvec(FILE *out);

/* `bench decode [DIR] [--shape llama110m|gpt2small] [--threads N] [--tokens N]`: argv holds
 * the words after "decode". Prints the figures; returns 0, or -1 after an error message. */
int bench_decode_main(FILE *out, int argc, char **argv);

#endif
