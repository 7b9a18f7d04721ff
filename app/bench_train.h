/* bench_train.h — training speed: tokens per second of whole training steps (forward, loss,
 * backward, AdamW) on tiny-lm's configuration. */
#ifndef GLASSBOX_BENCH_TRAIN_H
#define GLASSBOX_BENCH_TRAIN_H

#include <stdio.h>

/* gpt2 family, 4 layers, d_model 128, 4 heads, FFN 512, vocabulary 1024, context 128; batches
 * of 16 x 128 tokens; on 1 thread and on 2. Prints the figures; returns 0, or -1 when a model
 * or trainer cannot be made (the message is printed). Takes ~10 s. */
int bench_train(FILE *out);

#endif
