/* forward_int.h — what forward.c and attention.c share (not part of the engine's interface):
 * the context of one run, the helpers that record into its trace, and attention's inputs. */
#ifndef GLASSBOX_FORWARD_INT_H
#define GLASSBOX_FORWARD_INT_H

#include <setjmp.h>

#include "model/forward.h"
#include "model/lazytrace.h"

/* A row-wise operation waiting in a batch (gb_fwd_flush): row i of each output depends on
 * row i of its inputs alone, so a batch runs as one parallel region, each task taking every
 * operation in turn on its own block of rows. */
enum { GB_ROW_OPS = 48 };
/* Fewer rows than this (decoding) run each operation as it comes, and each product whole. */
enum { GB_ROWS_MIN = 32 };

typedef struct gb_row_op {
	int kind;             /* ROW_NORM, ROW_ADD, ... (forward.c) */
	float *out, *out2, *out3;
	const float *x, *y;
	const void *p;        /* the norm's weights, or the token ids */
	int width, act, off, n;
	float scale;
} gb_row_op;

typedef struct fctx {
	const gb_model *m;
	const gb_config *c;
	const gb_kernels *k;
	const gb_fwd_opts *o;
	gb_trace *tr;
	int textbook;
	int done, total;      /* layers run and to run (progress) */
	gb_lazy *lazy;        /* a lazy run (model/lazytrace.h), or NULL */
	size_t part_floats[GB_PARTS]; /* the arena's floats each sub-layer of the last layer took */
	/* Row-wise operations (norms, residual adds, activations, the softmax of the logits)
	 * batched into one parallel region between two linear layers (forward.c): set by the runs
	 * that want it on the fast tables (gb_fwd_init leaves it off: a replay runs each now). */
	int batch;
	int batch_T;          /* rows of the operations in the batch */
	int n_ops;
	gb_row_op ops[GB_ROW_OPS];
	jmp_buf oom;          /* taken when the trace cannot grow (1), or when stopped (2) */
} fctx;

/* A new trace tensor; ndim 1..3 with shape d[] and axes a[] (longjmps on out of memory). */
float *gb_fwd_tens(fctx *f, int ndim, const int *d, const unsigned char *a, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* Scratch memory for the run. */
float *gb_fwd_scratch(fctx *f, size_t n);
/* The index of the tensor added last. */
int gb_fwd_last(fctx *f);
/* y = x W + b through the kernel table (16-bit weights through matmul_w16), now (the batch
 * first). */
void gb_fwd_lin(fctx *f, float *out, const float *x, int T, const gb_linear *l);

/* outs[i] = x W_i + b_i for the n linears l[i] (n <= 4), all of input x: the numbers of n calls of
 * gb_fwd_lin, in one parallel region where the table has matmul_multi and every W_i is stored
 * transposed (out, in), as a Llama checkpoint's are (decoding's q, k and v; gate and up). */
void gb_fwd_lin_multi(fctx *f, float *const *outs, const float *x, int T, const gb_linear *const *l, int n);

/* The same product as gb_fwd_lin, as a row-wise operation of the batch when its weights are
 * few and the table computes parts of products (kernels.h: matmul_part); else gb_fwd_lin. */
void gb_fwd_lin_rows(fctx *f, float *out, const float *x, int T, const gb_linear *l);

/* Runs the batched row-wise operations (nothing when there are none). Whatever reads what a
 * norm, an add or an activation wrote calls it first; gb_fwd_lin does. */
void gb_fwd_flush(fctx *f);

/* Short names inside the two files. */
#define tens gb_fwd_tens
#define scratch gb_fwd_scratch
#define last gb_fwd_last
#define lin gb_fwd_lin

#define SHAPE(...) ((const int[]){ __VA_ARGS__ })
#define AXES(...) ((const unsigned char[]){ __VA_ARGS__ })
#define TF(T, D) 2, SHAPE(T, D), AXES(GB_AX_TOKEN, GB_AX_FEATURE)

typedef struct attn_in {
	const float *xq;      /* (Tq, D) */
	const float *xkv;     /* (Tk, D); NULL: cross-attention whose keys and values are in ck, cv */
	int Tq, Tk;           /* Tk: the keys computed here (or read from ck, cv when xkv is NULL) */
	int causal, self;     /* self-attention gets RoPE, ALiBi, T5's bias and the local window */
	int bidir;            /* an encoder's self-attention: T5's buckets look both ways */
	const int *key_ids;   /* every key's id (position 0 on), for the padding mask */
	const float *scale;   /* (H) per-head output scale, or NULL */
	int pos0;             /* position of the first query (and of the first key computed here) */
	/* A key/value cache of this layer: kv head h's rows at ck + h * cstride. Self-attention
	 * writes its Tk new rows at pos0 and attends to rows 0 .. pos0 + Tk - 1; cross-attention
	 * (xkv NULL) reads its Tk rows. NULL: no cache, the keys are the Tk computed here. */
	float *ck, *cv;
	size_t cstride;
	int (*allow)(const void *arg, int i, int j); /* gb_fwd_opts' pattern, or NULL */
	const void *allow_arg;
} attn_in;

/* What one stack of a run is (the whole run's, or a lazy trace's replay of a layer of it). */
typedef struct stack_in {
	const char *pfx;      /* "", "enc." or "dec." */
	const int *ids;
	int T, causal;
	const float *enc;     /* (Ts, D) encoder output, for cross-attention */
	int Ts;
	const int *src_ids;   /* (Ts), for cross-attention's padding mask */
	int ablate;           /* apply opts->head_scale to this stack's self-attention */
	int pos0;             /* position of ids[0] (0 without a cache) */
	gb_kvcache *cache;    /* the decoder's cache (ids already appended at pos0), or NULL */
	int stack;            /* 0: the encoder, 1: the decoder (or the only stack) */
} stack_in;

/* The context of a run of model m recording into tr (opts may be NULL). */
void gb_fwd_init(fctx *f, const gb_model *m, gb_trace *tr, const gb_fwd_opts *opts);

/* Layer l (0-based) of stack s on the residual stream x (an index); returns the new stream's. */
int gb_fwd_layer(fctx *f, const gb_stack_w *s, const stack_in *in, int l, int x);

/* One sub-layer of it (enum gb_part: self-attention, cross-attention, the FFN) around the
 * stream x entering that sub-layer; returns the stream leaving it. */
int gb_fwd_sublayer(fctx *f, const gb_stack_w *s, const stack_in *in, int l, int part, int x);

/* The stack's layers have cross-attention (an encoder-decoder's decoder). */
int gb_fwd_has_cross(const stack_in *in);

/* Norm `name` of x (T, D): records name.mean/.var (or .rms) and name.out; returns out's index.
 * The caller has already recorded name.in. */
int gb_fwd_norm(fctx *f, const gb_normw *w, const float *x, int T, const char *name);

/* Layer l's self-attention inputs but for xq and xkv (masks, positions, cache, head scales). */
void gb_fwd_self_in(fctx *f, const stack_in *in, int l, attn_in *self);

/* A mixture of experts in place of the FFN (moe.c); returns out's index. */
int gb_fwd_moe(fctx *f, const gb_moe_w *w, const char *name, const float *x, int T);

/* Multi-head attention (attention.c). */
int gb_fwd_attention(fctx *f, const gb_attn_w *a, const char *name, const attn_in *in);

/* Query head h (0-based) of the same attention, alone: records name.q, .scores, .masked,
 * .weights, .head_out (and .rel_bias, .q_feat where the run has them) for head h, and .k, .v
 * (.k_feat) for its key/value head, each with a first axis of 1; the numbers are the whole
 * run's for that head. Nothing of the other heads, no merge, no output projection. */
int gb_fwd_attention_head(fctx *f, const gb_attn_w *a, const char *name, const attn_in *in, int h);

#endif
