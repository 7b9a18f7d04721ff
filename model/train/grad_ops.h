/* grad_ops.h — the differentiable pieces of the forward pass: each operation's forward and
 * backward written once (model/grad_impl.h) and built twice:
 *   _f  float, matrix products through the kernel table: what training runs;
 *   _d  double, plain loops in a fixed order (the kernel table is ignored): what the gradient
 *       check runs, so finite differences can be compared at 1e-6.
 *
 * Conventions, for every backward:
 *  - parameter gradients (dw, db, dg, dE, dP) are ADDED to, so one block accumulates a batch;
 *  - input gradients (dx) are overwritten, or added to when the `acc` argument is 1 (a stream
 *    read by several consumers);
 *  - any gradient pointer may be NULL when that gradient is not wanted;
 *  - temporaries come from a gb_ws (below), which jumps to ws->oom when memory runs out, so
 *    the numeric code has no error paths. gb_model_fwd/bwd (and train.h's gb_backward) set
 *    ws->oom themselves and fail with a message; a caller of the single operations sets it.
 *
 * Besides the primitives, the whole model: gb_model_fwd_R runs the forward pass of
 * model/README.md over parameters held in precision R (laid out as gb_model.owned: the
 * parameters in list order, one block) and records the activations the backward needs;
 * gb_model_bwd_R differentiates it. Training reads the activations from gb_forward's trace
 * instead (model/train.c), so it trains the very forward pass glassbox shows; the double
 * forward here is the oracle of the whole-model gradient check, and tests/t_grad.c checks it
 * against gb_forward. */
#ifndef GLASSBOX_GRAD_OPS_H
#define GLASSBOX_GRAD_OPS_H

#include <setjmp.h>
#include <stddef.h>

#include "model/err.h"
#include "model/kernels/kernels.h"
#include "model/model.h"

/* For model/'s float training code: a function whose element-wise loops should be vectorized
 * for the CPU it runs on (a copy per instruction set, picked at load time), since the build's
 * -O2 leaves most loops scalar. Results stay deterministic on a given machine. Off under
 * ThreadSanitizer, whose runtime is not up yet when the loader picks the copies. */
#if defined(__SANITIZE_THREAD__)
#define GB_VECTORIZE
#elif defined(__x86_64__) && defined(__ELF__) && defined(__GNUC__) && !defined(__clang__)
#define GB_VECTORIZE                                                                               \
	__attribute__((optimize("tree-vectorize", "vect-cost-model=dynamic"),                          \
	               target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#elif defined(__x86_64__) && defined(__ELF__) && defined(__clang__)
#define GB_VECTORIZE __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define GB_VECTORIZE
#endif
/* Before an element-wise loop whose output may be one of its inputs, element for element. */
#if defined(__GNUC__) && !defined(__clang__)
#define GB_IVDEP _Pragma("GCC ivdep")
#else
#define GB_IVDEP
#endif

/* ---- workspace: a bump allocator reused run after run ---- */

typedef struct gb_ws {
	unsigned char *block;
	size_t used, size;     /* bytes */
	size_t peak;           /* the most this run has needed, to size the next block */
	void **spill;          /* allocations that did not fit the block during this run */
	int n_spill, cap_spill;
	jmp_buf *oom;          /* where a failed allocation jumps; NULL (a caller's bug) aborts */
} gb_ws;

/* n bytes, 64-byte aligned, uninitialized; valid until gb_ws_release below their mark or
 * gb_ws_reset. */
void *gb_ws_alloc(gb_ws *ws, size_t n);
size_t gb_ws_mark(const gb_ws *ws);
void gb_ws_release(gb_ws *ws, size_t mark);
/* Frees everything of the previous run; grows the block to the previous run's peak. */
void gb_ws_reset(gb_ws *ws);
void gb_ws_free(gb_ws *ws);

/* ---- the attention core's shape and masks (shared by both precisions) ---- */

typedef struct gb_attn_spec {
	int H, K, E;           /* query heads, key/value heads (divides H), head width */
	int Tq, Tk;            /* queries, keys */
	int causal;            /* key j > query i forbidden */
	int window;            /* 0, or |i - j| >= window forbidden */
	int alibi;             /* add m_h (j - i), m_h = gb_alibi_slope(h, H) */
	const unsigned char *key_masked; /* (Tk) 1 = a padded key nobody may see, or NULL */
	const int *bucket;     /* (Tq, Tk) T5's bucket of each pair (gb_t5_bucket), or NULL: with
	                        * it, the attention adds relb[bucket * H + h] to the scaled score */
} gb_attn_spec;

/* Whether query i may see key j (the rule of model/README.md step 5). */
int gb_attn_allowed(const gb_attn_spec *s, int i, int j);

/* ---- the whole model's activations (pointers into a trace or a workspace) ---- */

#define GB_GRAD_TYPES(R, S)                                                                    \
	typedef struct gb_norm_act##S {                                                            \
		const R *in, *out;   /* (T, D) */                                                      \
		const R *mean, *var; /* (T) LayerNorm */                                               \
		const R *rms;        /* (T) RMSNorm */                                                 \
	} gb_norm_act##S;                                                                          \
	typedef struct gb_attn_act##S {                                                            \
		const R *q;          /* (H, Tq, E) after RoPE */                                       \
		const R *k, *v;      /* (K, Tk, E) k after RoPE */                                     \
		const R *w;          /* (H, Tq, Tk) softmax weights */                                 \
		const R *merged;     /* (Tq, H E) */                                                   \
	} gb_attn_act##S;                                                                          \
	typedef struct gb_ffn_act##S {                                                             \
		const R *up, *gate, *hidden; /* (T, F); gate only when gated; (E, T, F) with experts */ \
		/* a mixture of experts (trace.h's names): router_probs, gates (T, E), chosen (T, k)   \
		 * as numbers, load (E), expert_out (E, T, D) */                                       \
		const R *probs, *gates, *chosen, *load, *eout;                                         \
	} gb_ffn_act##S;                                                                           \
	/* One sub-layer (self-attention, cross-attention or FFN) around the residual stream. */  \
	typedef struct gb_sub_act##S {                                                             \
		const R *x;          /* (T, D) the stream entering the sub-layer */                    \
		gb_norm_act##S n;                                                                      \
		gb_attn_act##S a;                                                                      \
		gb_ffn_act##S f;                                                                       \
	} gb_sub_act##S;                                                                           \
	typedef struct gb_stack_act##S {                                                           \
		const int *ids;      /* (T) */                                                         \
		int T, n_layer;                                                                        \
		gb_sub_act##S (*sub)[3]; /* (n_layer) × self, cross (decoder of encdec), ffn */        \
		gb_norm_act##S fin;  /* the final norm, when the config has one */                     \
		const R *out;        /* (T, D) the stack's output */                                   \
	} gb_stack_act##S;                                                                         \
	typedef struct gb_acts##S {                                                                \
		gb_stack_act##S enc; /* encoder-decoder only */                                        \
		gb_stack_act##S dec;                                                                   \
		const R *logits;     /* (T, V) */                                                      \
		const R *probs;      /* (T, V) softmax of logits, or NULL */                           \
		double aux;          /* the load-balancing loss, summed over the mixture-of-experts    \
		                      * layers: E sum_e f_e P_e each (0 without experts) */            \
	} gb_acts##S;

GB_GRAD_TYPES(float, _f)
GB_GRAD_TYPES(double, _d)

/* ---- the operations ---- */

#define GB_GRAD_DECLS(R, S)                                                                    \
	/* y (T, out) = x (T, in) W + b: W (in, out) when trans == 0 (Conv1D), (out, in) when 1     \
	 * (nn.Linear); b (out) or NULL. */                                                        \
	void gb_linear_fwd##S(const gb_kernels *k, R *y, const R *x, const R *w, const R *b, int T, \
	                      int in, int out, int trans);                                         \
	/* dx (T, in); dw shaped as w; db (out). */                                                \
	void gb_linear_bwd##S(const gb_kernels *k, gb_ws *ws, R *dx, int acc, R *dw, R *db,         \
	                      const R *dy, const R *x, const R *w, int T, int in, int out, int trans); \
	/* c (M, N) = aᵀ b (+ c when acc), a (K, M), b (K, N). */                                   \
	void gb_matmul_tn##S(const gb_kernels *k, gb_ws *ws, R *c, const R *a, const R *b, int M,   \
	                     int K, int N, int acc);                                               \
	/* LayerNorm of x (T, D): y = g (x - mean) / d + b, d = sqrt(var + eps), or sqrt(var) + eps \
	 * when textbook; mean, var (T) recorded; g, b (D) may be NULL. */                          \
	void gb_layernorm_fwd##S(R *y, R *mean, R *var, const R *x, const R *g, const R *b, int T,  \
	                         int D, double eps, int textbook);                                 \
	/* dx may alias dy. */                                                                     \
	void gb_layernorm_bwd##S(R *dx, int acc, R *dg, R *db, const R *dy, const R *x,            \
	                         const R *mean, const R *var, const R *g, int T, int D, double eps, \
	                         int textbook);                                                    \
	/* RMSNorm: rms (T) = sqrt(mean(x²) + eps), y = g x / rms. */                               \
	void gb_rmsnorm_fwd##S(R *y, R *rms, const R *x, const R *g, int T, int D, double eps);    \
	void gb_rmsnorm_bwd##S(R *dx, int acc, R *dg, const R *dy, const R *x, const R *rms,        \
	                       const R *g, int T, int D);                                          \
	/* Row softmax in place over x (rows, n); -inf gives 0, an all -inf row all 0. */          \
	void gb_softmax_fwd##S(R *x, int rows, int n);                                             \
	/* dz (rows, n) from dp and the softmax output p; dz may alias dp. */                      \
	void gb_softmax_bwd##S(R *dz, const R *dp, const R *p, int rows, int n);                   \
	/* q (H, Tq, E), k v (K, Tk, E) -> w (H, Tq, Tk) weights, o (H, Tq, E); scale 1/sqrt(E);   \
	 * relb (buckets, H): T5's bias when s->bucket, else unused (may be NULL). */              \
	void gb_attn_fwd##S(const gb_kernels *k, gb_ws *ws, const gb_attn_spec *s, R *w, R *o,     \
	                    const R *q, const R *kk, const R *v, const R *relb);                   \
	/* dq (H, Tq, E) overwritten; dk, dv (K, Tk, E) overwritten; drelb (buckets, H) added to   \
	 * when s->bucket (may be NULL). */                                                        \
	void gb_attn_bwd##S(const gb_kernels *k, gb_ws *ws, const gb_attn_spec *s, R *dq, R *dk,    \
	                    R *dv, const R *d_o, const R *q, const R *kk, const R *v, const R *w,   \
	                    R *drelb);                                                             \
	/* Linear attention (model/README.md): the feature map f = elu + 1 of q and k, weights     \
	 * w_ij = f(q_i).f(k_j) / sum_j' f(q_i).f(k_j') over the allowed keys (s's masks; ALiBi,    \
	 * window and buckets unused), o = w v: the quadratic form. */                             \
	void gb_linattn_fwd##S(const gb_kernels *k, gb_ws *ws, const gb_attn_spec *s, R *w, R *o,  \
	                       const R *q, const R *kk, const R *v);                               \
	/* As gb_attn_bwd, from the weights w of the forward. */                                  \
	void gb_linattn_bwd##S(const gb_kernels *k, gb_ws *ws, const gb_attn_spec *s, R *dq, R *dk, \
	                       R *dv, const R *d_o, const R *q, const R *kk, const R *v, const R *w); \
	/* RoPE tables cs, sn (T, E/2) for positions 0..T-1, base theta. */                        \
	void gb_rope_tables##S(R *cs, R *sn, int T, const gb_config *c);                          \
	/* Rotates x (T, E) in place: dir 1 the forward rotation, -1 its transpose (the backward). */ \
	void gb_rope_apply##S(R *x, const R *cs, const R *sn, int T, int E, int dir);              \
	/* y (n) = act(x (n)), act an enum gb_act. */                                              \
	void gb_act_fwd##S(R *y, const R *x, size_t n, int act);                                   \
	/* dx (n) = dy act'(x); x the pre-activation; dx may alias dy. */                          \
	void gb_act_bwd##S(R *dx, const R *dy, const R *x, size_t n, int act);                     \
	/* SwiGLU: h (n) = silu(gate) up. */                                                       \
	void gb_swiglu_fwd##S(R *h, const R *gate, const R *up, size_t n);                         \
	void gb_swiglu_bwd##S(R *dgate, R *dup, const R *dh, const R *gate, const R *up, size_t n); \
	/* x (T, D) = E[ids] scale + pos (T, D) (learned rows or the sinusoid; NULL for none). */   \
	void gb_embed_fwd##S(R *x, const int *ids, const R *E, const R *pos, double scale, int T,  \
	                     int D);                                                               \
	/* dE (V, D) rows ids += scale dx; dpos (T, D) += dx (learned positions) or NULL. */       \
	void gb_embed_bwd##S(R *dE, R *dpos, const R *dx, const int *ids, double scale, int T,     \
	                     int D);                                                               \
	/* The sinusoidal encoding pe (T, D) (model/README.md step 2). */                          \
	void gb_sinusoid##S(R *pe, int T, int D);                                                  \
	/* Cross-entropy of logits z (T, V) against tgt (T; -1 = ignored) with label smoothing eps: \
	 * loss_t = -(1 - eps) log p[y] - eps/V sum_j log p[j]. Returns the sum over counted        \
	 * positions; *count gets their number and *correct (may be NULL) how many have          \
	 * argmax z == y. dz (T, V) (NULL: loss only) = scale (p - q) on counted rows, 0 on ignored \
	 * ones. p (T, V): softmax of z when the caller has it, else NULL. dz may not alias z. */   \
	double gb_xent##S(R *dz, const R *z, const R *p, const int *tgt, int T, int V, double eps,   \
	                  double scale, int *count, int *correct);                                 \
	/* The whole model: forward over parameters P (m->n_weights, laid out as m->owned), ids (n) \
	 * (encoder-decoder: the source) and tgt (n_tgt) (encoder-decoder: the decoder input, else  \
	 * NULL). Fills *a with pointers into ws (valid until ws is released). No head ablation, no \
	 * truncation: the trainer's forward. */                                                   \
	int gb_model_fwd##S(const gb_model *m, const R *P, const int *ids, int n, const int *tgt,   \
	                    int n_tgt, gb_acts##S *a, const gb_kernels *k, gb_ws *ws, gb_err *err);  \
	/* Adds the gradient of the loss to G (m->n_weights, laid out as m->owned), from the        \
	 * activations a and dlogits (T, V), the loss's gradient w.r.t. the logits, plus aux_scale  \
	 * times the gradient of a->aux (the load-balancing loss; 0: none). */                     \
	int gb_model_bwd##S(const gb_model *m, const R *P, const gb_acts##S *a, const R *dlogits,   \
	                    double aux_scale, R *G, const gb_kernels *k, gb_ws *ws, gb_err *err);

GB_GRAD_DECLS(float, _f)
GB_GRAD_DECLS(double, _d)

#endif
