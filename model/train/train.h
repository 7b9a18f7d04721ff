/* train.h — training in C: the backward pass of one sequence from gb_forward's trace, batches
 * split across threads, cross-entropy with label smoothing, AdamW, clipping by global norm,
 * learning-rate schedules, checkpoints that resume bit for bit.
 *
 * The trainer runs gb_forward itself (the very forward pass glassbox shows), then
 * differentiates it with model/grad_ops.h's float operations. Determinism: a batch is cut into
 * a fixed number of slots (the thread count given at init); each slot accumulates its
 * sequences' gradients in order into its own block, and the blocks are summed in slot order,
 * so the same seed, data and slot count give bit-identical weights on the same machine.
 *
 * Padding: sequences of one batch share a padded length. Decoder positions whose target is -1
 * (padding, or a prompt that is not to be learned) count for nothing; trailing ones are not
 * even run, which changes nothing since a causal decoder's earlier positions never see them.
 * A source is padded with the config's pad_token_id: padded keys are masked in attention (as
 * gb_forward does) and trailing ones are not run. */
#ifndef GLASSBOX_TRAIN_H
#define GLASSBOX_TRAIN_H

#include <stdint.h>

#include "model/err.h"
#include "model/train/grad_ops.h"
#include "model/kernels/kernels.h"
#include "model/model.h"
#include "model/rng.h"
#include "model/trace.h"

enum gb_sched {
	GB_SCHED_CONSTANT,    /* lr0, after a linear warm-up when warmup > 0 */
	GB_SCHED_NOAM,        /* the textbook's lr0 · min(step^-0.5, step · warmup^-1.5) */
	GB_SCHED_COSINE,      /* linear warm-up to lr0, then cosine decay to lr_min at total_steps;
	                       * lr_min after total_steps (even when it ends inside the warm-up) */
};

typedef struct gb_train_opts {
	float lr;             /* lr0 (noam: the factor, e.g. d_model^-0.5) */
	int schedule;         /* enum gb_sched */
	int warmup;           /* warm-up steps (noam needs >= 1) */
	int total_steps;      /* cosine: where the decay ends */
	float lr_min;         /* cosine: the floor */
	float beta1, beta2, eps;
	float weight_decay;   /* AdamW's decoupled decay, on weight matrices */
	int decay_embed;      /* also decay the token and learned position embeddings */
	int decay_vectors;    /* also decay biases and norm gains */
	float clip;           /* clip the gradient to this global L2 norm; 0: no clipping */
	float label_smoothing;
	int threads;          /* slots (and threads) per batch; 0: gb_kernels_threads() at init */
	uint64_t seed;        /* the trainer's generator, for the caller's data order; checkpointed */
	const gb_kernels *k;  /* NULL: the fast table */
} gb_train_opts;

/* lr 1e-3 constant, betas 0.9 / 0.999, eps 1e-8, weight decay 0.01, clip 1, no smoothing. */
void gb_train_defaults(gb_train_opts *o);

/* The learning rate of step `step` (counted from 1). */
double gb_train_lr(const gb_train_opts *o, long step);

typedef struct gb_batch {
	int B;                /* sequences */
	int T;                /* padded length of ids and tgt */
	const int *ids;       /* (B, T) the decoder's input: the text (decoder-only) or the target
	                       * side starting with decoder_start_token_id (encoder-decoder) */
	const int *tgt;       /* (B, T) the token to predict at each position; -1: not counted */
	int Ts;               /* encoder-decoder: padded source length */
	const int *src;       /* (B, Ts) encoder-decoder: the source, padded with pad_token_id */
} gb_batch;

typedef struct gb_step_stats {
	double loss;          /* mean cross-entropy (with smoothing) over the counted tokens */
	double aux;           /* a mixture of experts: the load-balancing loss (E sum_e f_e P_e,
	                       * summed over layers; near 1 a layer when balanced), a mean over the
	                       * sequences weighted by their counted targets; 0 without experts.
	                       * Training minimizes loss + aux_coef aux. */
	long tokens;          /* counted targets */
	long positions;       /* decoder (and encoder) positions run, padding trimmed */
	long correct;         /* counted targets that are the argmax of their logits */
	double grad_norm;     /* global L2 norm before clipping */
	double lr;            /* the rate used */
	int diverged;         /* 1: non-finite loss, gradient or update; nothing was changed */
} gb_step_stats;

/* One share of a batch: what a thread needs of its own. */
typedef struct gb_train_slot {
	gb_trace tr;
	gb_ws ws;
	float *grad;          /* (n_weights), laid out as the model's owned block */
	double loss, aux;     /* aux: the load-balancing losses times each sequence's counted targets */
	long tokens, positions, correct;
	int failed;
	gb_err err;
} gb_train_slot;

typedef struct gb_trainer {
	gb_model *m;          /* borrowed; made writable by init */
	gb_train_opts o;
	long step;            /* updates done */
	gb_rng rng;           /* seeded from o.seed; for the caller's data; checkpointed */
	float *mom, *vel;     /* (n_weights) AdamW's first and second moments */
	unsigned char *decay; /* (n_params) 1: weight decay applies */
	gb_train_slot *slot;
	int n_slots;
	double seconds;       /* training time so far, kept by the caller; checkpointed, so a
	                       * resumed run can report the whole time */
} gb_trainer;

/* Prepares to train m (made writable if it was mapped). */
int gb_trainer_init(gb_trainer *t, gb_model *m, const gb_train_opts *o, gb_err *err);
void gb_trainer_free(gb_trainer *t);

/* Forward, loss, backward, clipping and one AdamW update on a batch. A step that meets a
 * non-finite loss, gradient norm or updated value changes nothing (weights, moments, step),
 * sets st->diverged and fails with a message. st may be NULL. */
int gb_train_step(gb_trainer *t, const gb_batch *b, gb_step_stats *st, gb_err *err);

/* Loss and accuracy of a batch without any update (grad_norm 0). */
int gb_train_eval(gb_trainer *t, const gb_batch *b, gb_step_stats *st, gb_err *err);

/* A checkpoint: gb_model_save into dir, plus dir/optimizer.safetensors (AdamW's moments per
 * parameter as exp_avg.<name> / exp_avg_sq.<name>; step, generator state and a hash of the
 * weights in the metadata). Each file is written to a temporary name and renamed. */
int gb_train_save(const gb_trainer *t, const char *dir, gb_err *err);

/* Loads weights and optimizer state from a checkpoint written by gb_train_save, and keeps the
 * checkpoint's schedule: t->o.total_steps becomes the total it was saved with (when its
 * options record one), so a resumed run's learning rates are the uninterrupted run's. Refuses
 * (and changes nothing) when the checkpoint's configuration differs from the trainer's model,
 * or its optimizer file does not belong to its weights. */
int gb_train_resume(gb_trainer *t, const char *dir, gb_err *err);

/* What a checkpoint's optimizer.safetensors says of its run, read from the metadata alone
 * (cheap: no weights are read), e.g. to decide before preparing any data whether a resume has
 * anything left to do. */
typedef struct gb_checkpoint_info {
	long step;            /* updates done */
	int total_steps;      /* the schedule's total_steps it was saved with; -1: not recorded */
	double seconds;       /* the training time it records (0: not recorded) */
	int schedule, warmup; /* the schedule it was saved with (-1: not recorded) */
	double lr, lr_min;    /* its peak and floor rates (-1: not recorded) */
} gb_checkpoint_info;

int gb_train_checkpoint_info(const char *dir, gb_checkpoint_info *info, gb_err *err);

/* The backward pass of one sequence whose forward pass gb_forward left in tr (with default
 * options but the kernel table: no head ablation, no lesson switches): cross-entropy of the logits against tgt (T, the decoder's length; -1 ignored)
 * with label smoothing, its gradient times `scale` added to grad (m->n_weights, laid out as
 * m->owned). *loss gets the unscaled summed loss, *count the counted targets, *correct (may be
 * NULL) the argmax hits. ws is scratch, reset by the call. */
int gb_backward(const gb_model *m, const gb_trace *tr, const int *tgt, double smoothing, double scale,
                float *grad, const gb_kernels *k, gb_ws *ws, double *loss, int *count, int *correct,
                gb_err *err);

#endif
