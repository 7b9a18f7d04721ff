/* llama2c.h — Karpathy's llama2.c checkpoints (github.com/karpathy/llama2.c, export.py):
 *
 *   legacy (version 0, what run.c reads): 7 int32 — dim, hidden_dim, n_layers, n_heads,
 *     n_kv_heads, vocab_size (negative: the classifier is not shared with the embedding),
 *     seq_len — then float32 tensors in run.c's order: token embedding (V, D); every layer's
 *     attention RMSNorm (D); wq (H E, D); wk (K E, D); wv (K E, D); wo (D, H E); the FFN's
 *     RMSNorm; w1 (F, D, the gate); w2 (D, F, down); w3 (F, D, up); the final RMSNorm; the
 *     unused freq_cis_real and freq_cis_imag (seq_len x E/2 each); the classifier (V, D) when
 *     not shared.
 *   versioned: a 256-byte header — uint32 magic 0x616b3432 ("ak42"), int32 version, the same
 *     7 ints (vocab_size positive), a byte "shared classifier", for version 2 an int32 group
 *     size (at byte 37), zeros — then version 1: float32 norms (attention, FFN, final), the
 *     embedding, wq, wk, wv, wo, w1, w2, w3 (each for every layer), the classifier if not
 *     shared; version 2 (Q8_0): the norms in float32, then each other tensor as int8 values
 *     followed by one float32 scale per group (value = int8 x scale).
 *
 * Every model is a Llama: RMSNorm (eps 1e-5), SwiGLU, RoPE (theta 10000) rotating adjacent
 * pairs (2f, 2f+1), head width dim / n_heads, no biases. The file's size must be exactly what
 * its header implies. float32 tensors are used in place from the map; Q8_0 ones are
 * dequantized on load (m->load_note says so). */
#ifndef GLASSBOX_LLAMA2C_H
#define GLASSBOX_LLAMA2C_H

#include <stddef.h>

#include "model/config.h"
#include "model/err.h"
#include "model/fileio.h"

struct gb_model;

typedef struct gb_l2c_header {
	int version;          /* 0 legacy, 1 float32, 2 Q8_0 */
	int shared;           /* the classifier is the embedding */
	int group_size;       /* version 2 */
	size_t data;          /* where the tensors start */
} gb_l2c_header;

/* Reads and checks the header of a mapped checkpoint: the sizes (gb_config_check), and the
 * file's length against what they imply. Fills c (family llama) and h. */
int gb_llama2c_header(const gb_map *map, const char *path, gb_config *c, gb_l2c_header *h, gb_err *err);

/* Points m's parameters (listed for m->cfg by the model) at the checkpoint in m->map:
 * float32 in place, Q8_0 dequantized into m->owned. Refuses NaN and infinite values. */
int gb_llama2c_bind(struct gb_model *m, const gb_l2c_header *h, const char *path, gb_err *err);

/* Writes m as a llama2.c checkpoint, version 0 (legacy, run.c's), 1 or 2 (Q8_0, quantized as
 * export.py does; a model loaded from a version 2 file gives back its int8 values, scales and
 * group size as loaded while its weights are unchanged), through a temporary name. The model must be one llama2.c can express; otherwise the error names the first
 * difference. Legacy files carry freq_cis, which run.c skips: the loaded file's bytes when
 * m came from a legacy file with them (m->l2c_freqs), else cos/sin computed in double.
 * A rotate-half model (Hugging Face's Llama) is written with each head's q and k rows
 * reordered for llama2.c's adjacent pairs, so that it computes the same thing. */
int gb_llama2c_write(const struct gb_model *m, const char *path, int version, gb_err *err);

#endif
