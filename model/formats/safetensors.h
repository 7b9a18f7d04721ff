/* safetensors.h — the safetensors container, as model.safetensors and the trainer's
 * optimizer.safetensors use it: an 8-byte little-endian header length, a JSON header
 * {name: {dtype, shape, data_offsets}} (and "__metadata__"), then the raw little-endian data.
 * model/README.md says what a model folder's file must hold.
 *
 * Both directions work on a gb_model's parameter list (model.h): reading fills it, writing
 * walks it. Errors: 0 or -1 with a message naming the file and, where there is one, the
 * tensor. */
#ifndef GLASSBOX_SAFETENSORS_H
#define GLASSBOX_SAFETENSORS_H

#include "model/err.h"
#include "model/model.h"

/* Maps path into m->map and points every parameter of m->params (listed for m->cfg, data
 * still unset) at its tensor: in place when F32 and aligned, else converted into m->owned.
 * Every header entry is checked first (offsets inside the data, no two tensors overlapping,
 * a known dtype, size as shape and dtype need); then each tensor must have the shape the
 * config implies and a float dtype (F32, F16, BF16, F64), none may be missing, listed twice
 * or not part of the architecture, and no value may be NaN or infinite.
 * Hub layouts load: GPT-2 names with or without "transformer.", Llama's with or without
 * "model."; the buffers checkpoints carry beside the weights (GPT-2's h.N.attn.bias and
 * attn.masked_bias, RoPE's inv_freq, which must match rope_theta) are skipped; a tied model
 * may also hold lm_head.weight if it equals the embedding. What was skipped is said in
 * m->load_note. On failure m->map and m->owned may be set: gb_model_free releases them. */
int gb_safetensors_load(gb_model *m, const char *path, gb_err *err);

/* A sharded checkpoint: index_path is model.safetensors.index.json in dir, whose weight_map
 * {tensor: shard file} names files in dir. Each shard is mapped (m->shards) and checked as
 * above; a missing shard, a tensor in two shards, in a shard the index does not name for it,
 * or named by the index but absent are errors. */
int gb_safetensors_load_index(gb_model *m, const char *dir, const char *index_path, gb_err *err);

/* Writes a safetensors file of n_blocks copies of the parameter list: block b's tensors
 * are named prefixes[b] + the parameter's name, with data data[b * n_params + i]; metadata
 * as n_meta (key, value) pairs in meta (2 * n_meta strings). Tensors are F32; with bf16 set,
 * matrices (2 or more dimensions) are BF16, rounded to nearest even, while vectors (norm
 * gains, biases: a fraction of a percent of the bytes) stay F32. Temporary name, then rename.
 * gb_model_save and the trainer's optimizer state both write through it. */
int gb_safetensors_write(const gb_model *m, const char *path, const char *const *prefixes, const float *const *data,
                         int n_blocks, const char *const *meta, int n_meta, int bf16, gb_err *err);

#endif
