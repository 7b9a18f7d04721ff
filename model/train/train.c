/* train.c — see train.h. Owns: reading the backward's activations out of a trace, the batch
 * split into slots, AdamW with clipping and schedules. The arithmetic of the backward pass is
 * model/train/grad_impl.h's; the checkpoint's files are checkpoint.c's. */
#include "model/train/train.h"

#include <errno.h>
#include <float.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/fileio.h"
#include "model/formats/hf_config.h"
#include "model/formats/safetensors.h"
#include "model/forward.h"
#include "model/kernels/pool.h"

/* ---- options and schedules ---- */

void gb_train_defaults(gb_train_opts *o)
{
	memset(o, 0, sizeof *o);
	o->lr = 1e-3f;
	o->schedule = GB_SCHED_CONSTANT;
	o->beta1 = 0.9f;
	o->beta2 = 0.999f;
	o->eps = 1e-8f;
	o->weight_decay = 0.01f;
	o->clip = 1.0f;
	o->seed = 1;
}

double gb_train_lr(const gb_train_opts *o, long step)
{
	double lr0 = o->lr, s = step < 1 ? 1 : (double)step, w = o->warmup;
	switch (o->schedule) {
	case GB_SCHED_NOAM: {
		w = w < 1 ? 1 : w;
		double a = 1.0 / sqrt(s), b = s * pow(w, -1.5);
		return lr0 * (a < b ? a : b);
	}
	case GB_SCHED_COSINE: {
		/* after its total the rate stays at the floor, even when the total ends inside the
		 * warm-up (a run continued past a short schedule) */
		if (o->total_steps > 0 && s > o->total_steps)
			return o->lr_min;
		if (s <= w)
			return lr0 * s / w;
		double span = o->total_steps - w, p = span > 0 ? (s - w) / span : 1;
		p = p > 1 ? 1 : p;
		return o->lr_min + 0.5 * (lr0 - o->lr_min) * (1 + cos(M_PI * p));
	}
	default:
		return w > 0 && s < w ? lr0 * s / w : lr0;
	}
}

/* ---- activations from the trace ---- */

/* Trace lookups by name, starting where the last one was found: the backward asks for tensors
 * roughly in the order the forward recorded them, so each lookup is a step or two. */
typedef struct tlook {
	const gb_trace *tr;
	int hint;
	char missing[64];
} tlook;

static const float *tget(tlook *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static const float *tget(tlook *L, const char *fmt, ...)
{
	char name[64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof name, fmt, ap);
	va_end(ap);
	int n = L->tr->n;
	for (int i = 0; i < n; i++) {
		int j = (L->hint + i) % n;
		if (!strcmp(L->tr->t[j].name, name)) {
			L->hint = j + 1;
			return L->tr->t[j].data;
		}
	}
	if (!L->missing[0])
		snprintf(L->missing, sizeof L->missing, "%s", name);
	return NULL;
}

static void norm_from(tlook *L, const gb_config *c, const char *nn, gb_norm_act_f *na)
{
	memset(na, 0, sizeof *na);
	na->in = tget(L, "%s.in", nn);
	if (c->norm == GB_NORM_RMS) {
		na->rms = tget(L, "%s.rms", nn);
	} else {
		na->mean = tget(L, "%s.mean", nn);
		na->var = tget(L, "%s.var", nn);
	}
	na->out = tget(L, "%s.out", nn);
}

static void attn_from(tlook *L, const char *an, gb_attn_act_f *a)
{
	a->q = tget(L, "%s.q", an);
	a->k = tget(L, "%s.k", an);
	a->v = tget(L, "%s.v", an);
	a->w = tget(L, "%s.weights", an);
	a->merged = tget(L, "%s.merged", an);
}

/* Fills sa from the trace names of model/trace.h (prefix p: "", "enc." or "dec."). */
static void stack_from(tlook *L, const gb_config *c, const char *p, int n_layer, int cross, const int *ids, int T,
                       gb_stack_act_f *sa, gb_sub_act_f (*sub)[3])
{
	char nn[48], an[48];
	memset(sa, 0, sizeof *sa);
	memset(sub, 0, (size_t)n_layer * sizeof *sub);
	sa->ids = ids;
	sa->T = T;
	sa->n_layer = n_layer;
	sa->sub = sub;
	const float *x = tget(L, "%sembed.sum", p);
	for (int l = 1; l <= n_layer; l++) {
		gb_sub_act_f *s = sub[l - 1];
		s[0].x = x;
		snprintf(nn, sizeof nn, "%sL%d.ln1", p, l);
		snprintf(an, sizeof an, "%sL%d.attn", p, l);
		norm_from(L, c, nn, &s[0].n);
		attn_from(L, an, &s[0].a);
		x = tget(L, "%sL%d.resid.mid", p, l);
		if (cross) {
			s[1].x = x;
			snprintf(nn, sizeof nn, "%sL%d.ln2", p, l);
			snprintf(an, sizeof an, "%sL%d.cross", p, l);
			norm_from(L, c, nn, &s[1].n);
			attn_from(L, an, &s[1].a);
			x = tget(L, "%sL%d.resid.cross", p, l);
		}
		s[2].x = x;
		snprintf(nn, sizeof nn, "%sL%d.ln%d", p, l, cross ? 3 : 2);
		norm_from(L, c, nn, &s[2].n);
		if (c->n_experts) { /* in the order model/moe.c records them */
			s[2].f.probs = tget(L, "%sL%d.ffn.router_probs", p, l);
			s[2].f.chosen = tget(L, "%sL%d.ffn.chosen", p, l);
			s[2].f.gates = tget(L, "%sL%d.ffn.gates", p, l);
			s[2].f.load = tget(L, "%sL%d.ffn.load", p, l);
		}
		s[2].f.up = tget(L, "%sL%d.ffn.up", p, l);
		if (c->ffn == GB_FFN_GATED)
			s[2].f.gate = tget(L, "%sL%d.ffn.gate", p, l);
		s[2].f.hidden = tget(L, "%sL%d.ffn.hidden", p, l);
		if (c->n_experts)
			s[2].f.eout = tget(L, "%sL%d.ffn.expert_out", p, l);
		x = tget(L, "%sL%d.resid.post", p, l);
	}
	if (c->final_norm) {
		snprintf(nn, sizeof nn, "%slnf", p);
		norm_from(L, c, nn, &sa->fin);
		x = sa->fin.out;
	}
	sa->out = x;
}

int gb_backward(const gb_model *m, const gb_trace *tr, const int *tgt, double smoothing, double scale,
                float *grad, const gb_kernels *k, gb_ws *ws, double *loss, int *count, int *correct,
                gb_err *err)
{
	const gb_config *c = &m->cfg;
	jmp_buf oom;
	jmp_buf *saved = ws->oom;
	gb_ws_reset(ws);
	ws->oom = &oom;
	if (setjmp(oom)) {
		ws->oom = saved;
		return gb_fail(err, "out of memory in the backward pass");
	}
	if (tr->encdec != c->encdec || !tr->n)
		goto mismatch;
	if (tr->lazy) {
		ws->oom = saved;
		return gb_fail(err, "the trace was recorded lazily (a long run): set its budget above the run's size");
	}
	gb_acts_f a;
	tlook L = { tr, 0, "" };
	memset(&a, 0, sizeof a);
	int T = c->encdec ? tr->n_tgt : tr->n_ids, V = c->vocab;
	if (c->encdec) {
		gb_sub_act_f (*se)[3] = gb_ws_alloc(ws, (size_t)c->n_enc_layer * sizeof *se);
		stack_from(&L, c, "enc.", c->n_enc_layer, 0, tr->ids, tr->n_ids, &a.enc, se);
	}
	gb_sub_act_f (*sd)[3] = gb_ws_alloc(ws, (size_t)c->n_layer * sizeof *sd);
	stack_from(&L, c, c->encdec ? "dec." : "", c->n_layer, c->encdec, c->encdec ? tr->tgt : tr->ids, T, &a.dec, sd);
	a.logits = tget(&L, "logits");
	a.probs = tget(&L, "probs");
	if (L.missing[0]) {
		ws->oom = saved;
		return gb_fail(err, "the trace lacks \"%s\": it was not recorded by gb_forward for this model", L.missing);
	}
	float *dz = gb_ws_alloc(ws, (size_t)T * V * sizeof *dz);
	int cnt = 0;
	*loss = gb_xent_f(dz, a.logits, a.probs, tgt, T, V, smoothing, scale, &cnt, correct);
	if (count)
		*count = cnt;
	/* The load-balancing loss of this sequence weighs as its share of the batch's counted
	 * targets (scale is 1 / that count): the batch's loss is the mean cross-entropy plus
	 * aux_coef times the token-weighted mean of the sequences' load-balancing losses. */
	double aux_scale = c->n_experts ? c->aux_coef * scale * cnt : 0;
	int rc = 0;
	if (cnt > 0)
		rc = gb_model_bwd_f(m, m->owned, &a, dz, aux_scale, grad, k, ws, err);
	ws->oom = saved;
	return rc;
mismatch:
	ws->oom = saved;
	return gb_fail(err, "the trace is not a forward pass of this model");
}

/* ---- the trainer ---- */

void gb_trainer_free(gb_trainer *t)
{
	for (int s = 0; s < t->n_slots; s++) {
		gb_trace_free(&t->slot[s].tr);
		gb_ws_free(&t->slot[s].ws);
		free(t->slot[s].grad);
	}
	free(t->slot);
	free(t->mom);
	free(t->vel);
	free(t->decay);
	memset(t, 0, sizeof *t);
}

static int is_embedding(const gb_model *m, const gb_param *p)
{
	return p->data && (p->data == m->embed.w || p->data == m->dec.pos || p->data == m->enc.pos);
}

int gb_trainer_init(gb_trainer *t, gb_model *m, const gb_train_opts *o, gb_err *err)
{
	memset(t, 0, sizeof *t);
	/* The gradients rotate RoPE's pairs as Hugging Face does (grad_impl.h). */
	if (m->cfg.pos == GB_POS_ROPE && m->cfg.rope_pairs != GB_ROPE_HALF)
		return gb_fail(err, "training supports RoPE with rotate-half pairing only (this model pairs adjacent "
		               "features, as llama2.c)");
	if (!m->writable && gb_model_make_writable(m, err))
		return -1;
	float *p = m->owned;
	for (int i = 0; i < m->n_params; p += m->params[i].n, i++)
		if (m->params[i].data != p)
			return gb_fail(err, "parameter %s is not in the model's owned block", m->params[i].name);
	if (!(o->lr >= 0) || !(o->beta1 >= 0 && o->beta1 < 1) || !(o->beta2 >= 0 && o->beta2 < 1) || !(o->eps > 0) ||
	    !(o->weight_decay >= 0) || !(o->clip >= 0) || !(o->label_smoothing >= 0 && o->label_smoothing < 1) ||
	    o->warmup < 0 || o->schedule < GB_SCHED_CONSTANT || o->schedule > GB_SCHED_COSINE)
		return gb_fail(err, "training options out of range (lr >= 0, 0 <= betas < 1, eps > 0, "
		               "weight decay >= 0, clip >= 0, 0 <= label smoothing < 1, warm-up >= 0)");
	t->m = m;
	t->o = *o;
	gb_rng_seed(&t->rng, o->seed);
	int n = o->threads > 0 ? o->threads : gb_kernels_threads();
	t->n_slots = n < 1 ? 1 : n > 64 ? 64 : n;
	size_t nw = m->n_weights;
	t->mom = calloc(nw, sizeof *t->mom);
	t->vel = calloc(nw, sizeof *t->vel);
	t->decay = calloc((size_t)m->n_params, 1);
	t->slot = calloc((size_t)t->n_slots, sizeof *t->slot);
	if (!t->mom || !t->vel || !t->decay || !t->slot)
		goto oom;
	for (int s = 0; s < t->n_slots; s++)
		if (!(t->slot[s].grad = malloc(nw * sizeof(float))))
			goto oom;
	for (int i = 0; i < m->n_params; i++) {
		const gb_param *q = &m->params[i];
		int embed = is_embedding(m, q), vec = q->ndim == 1;
		t->decay[i] = o->weight_decay > 0 && (embed ? o->decay_embed : vec ? o->decay_vectors : 1);
	}
	return 0;
oom:
	t->n_slots = t->slot ? t->n_slots : 0;
	gb_trainer_free(t);
	return gb_fail(err, "out of memory for the trainer (%zu parameters)", nw);
}

typedef struct step_job {
	gb_trainer *t;
	const gb_batch *b;
	double scale;
	int backward;
	int n_slots;          /* the batch's shares: at most one per sequence */
} step_job;

/* The load-balancing loss of a run from its trace: E sum_e load_e P_e per mixture-of-experts
 * layer (P_e the mean router probability), summed (grad_model_impl.h's aux_loss, in double). */
static double trace_aux(const gb_model *m, const gb_trace *tr)
{
	const gb_config *c = &m->cfg;
	double sum = 0;
	char name[64];
	for (int st = 0; st < 1 + c->encdec; st++)
		for (int l = 1; l <= (st ? c->n_enc_layer : c->n_layer); l++) {
			const char *p = c->encdec ? (st ? "enc." : "dec.") : "";
			snprintf(name, sizeof name, "%sL%d.ffn.load", p, l);
			const gb_ttensor *ld = gb_trace_get(tr, name);
			snprintf(name, sizeof name, "%sL%d.ffn.router_probs", p, l);
			const gb_ttensor *pr = gb_trace_get(tr, name);
			if (!ld || !pr)
				continue;
			int T = pr->shape[0], E = c->n_experts;
			for (int e = 0; e < E; e++) {
				double P = 0;
				for (int t = 0; t < T; t++)
					P += pr->data[(size_t)t * E + e];
				sum += (double)E * ld->data[e] * P / T;
			}
		}
	return sum;
}

/* Runs sequence i of the batch on slot s. */
static int run_seq(step_job *J, gb_train_slot *s, int i)
{
	const gb_trainer *t = J->t;
	const gb_model *m = t->m;
	const gb_config *c = &m->cfg;
	const gb_batch *b = J->b;
	const int *ids = b->ids + (size_t)i * b->T, *tg = b->tgt + (size_t)i * b->T;
	int n = b->T;
	while (n > 0 && tg[n - 1] < 0)
		n--;
	if (n == 0)
		return 0;
	gb_fwd_opts fo = { 0 };
	fo.k = t->o.k;
	s->tr.budget = SIZE_MAX; /* the backward pass reads every activation: never a lazy trace */
	if (c->encdec) {
		const int *src = b->src + (size_t)i * b->Ts;
		int ns = b->Ts;
		while (ns > 1 && c->pad_id >= 0 && src[ns - 1] == c->pad_id)
			ns--;
		if (gb_forward(m, src, ns, ids, n, &s->tr, &fo, &s->err))
			return -1;
		s->positions += ns;
	} else if (gb_forward(m, ids, n, NULL, 0, &s->tr, &fo, &s->err)) {
		return -1;
	}
	s->positions += n;
	double loss;
	int cnt = 0, cor = 0;
	if (J->backward) {
		if (gb_backward(m, &s->tr, tg, t->o.label_smoothing, J->scale, s->grad, t->o.k ? t->o.k : gb_kernels_fast(),
		                &s->ws, &loss, &cnt, &cor, &s->err))
			return -1;
	} else {
		const gb_ttensor *z = gb_trace_get(&s->tr, "logits"), *p = gb_trace_get(&s->tr, "probs");
		loss = gb_xent_f(NULL, z->data, p->data, tg, n, c->vocab, t->o.label_smoothing, 1.0, &cnt, &cor);
	}
	s->loss += loss;
	if (c->n_experts)
		s->aux += trace_aux(m, &s->tr) * cnt;
	s->tokens += cnt;
	s->correct += cor;
	return 0;
}

static void slot_task(void *arg, int si, int worker)
{
	step_job *J = arg;
	gb_trainer *t = J->t;
	gb_train_slot *s = &t->slot[si];
	int B = J->b->B, n = J->n_slots;
	s->loss = s->aux = 0;
	s->tokens = s->positions = s->correct = 0;
	s->failed = 0;
	if (J->backward)
		memset(s->grad, 0, t->m->n_weights * sizeof *s->grad);
	for (int i = (int)((long)B * si / n); i < (int)((long)B * (si + 1) / n); i++)
		if (run_seq(J, s, i)) {
			s->failed = 1;
			return;
		}
}

static int check_batch(const gb_trainer *t, const gb_batch *b, long *count, gb_err *err)
{
	const gb_config *c = &t->m->cfg;
	if (b->B <= 0 || b->T <= 0 || !b->ids || !b->tgt)
		return gb_fail(err, "empty batch");
	if (c->encdec && (!b->src || b->Ts <= 0))
		return gb_fail(err, "an encoder-decoder batch needs its sources");
	if (!c->encdec && b->src)
		return gb_fail(err, "a decoder-only model takes no source");
	long n = 0;
	for (size_t i = 0; i < (size_t)b->B * b->T; i++) {
		int y = b->tgt[i];
		if (y < -1 || y >= c->vocab)
			return gb_fail(err, "target %d of sequence %zu is outside the vocabulary (0..%d, or -1 to skip)", y,
			               i / b->T + 1, c->vocab - 1);
		n += y >= 0;
	}
	*count = n;
	return 0;
}

/* Runs every slot over the batch; returns -1 with the first failing slot's message. */
static int run_slots(gb_trainer *t, const gb_batch *b, int backward, double scale, gb_err *err)
{
	/* Fewer sequences than slots: the spare slots would hold zeros, and adding zeros changes
	 * no bit, so skipping them keeps results the same. */
	int n = t->n_slots < b->B ? t->n_slots : b->B;
	step_job J = { t, b, scale, backward, n };
	if (n > 1)
		gb_pool_run(n, slot_task, &J);
	else
		slot_task(&J, 0, 0);
	for (int s = 0; s < n; s++)
		if (t->slot[s].failed) {
			gb_fail(err, "%s", t->slot[s].err.msg);
			return -1;
		}
	return n;
}

static void gather_stats(const gb_trainer *t, int n, long count, gb_step_stats *st)
{
	double loss = 0, aux = 0;
	memset(st, 0, sizeof *st);
	for (int s = 0; s < n; s++) {
		loss += t->slot[s].loss;
		aux += t->slot[s].aux;
		st->positions += t->slot[s].positions;
		st->correct += t->slot[s].correct;
	}
	st->tokens = count;
	st->loss = count ? loss / count : 0;
	st->aux = count ? aux / count : 0;
}

int gb_train_eval(gb_trainer *t, const gb_batch *b, gb_step_stats *st, gb_err *err)
{
	long count = 0;
	gb_step_stats tmp;
	if (check_batch(t, b, &count, err))
		return -1;
	unsigned csr = gb_fp_fast_enter();
	int n = run_slots(t, b, 0, 1.0, err);
	gb_fp_fast_leave(csr);
	if (n < 0)
		return -1;
	gather_stats(t, n, count, st ? st : &tmp);
	return 0;
}

/* AdamW (PyTorch's): p -= lr wd p (where decay applies), then p -= lr m̂ / (√v̂ + eps), m̂ and v̂
 * the bias-corrected moments. adam_check computes every new value without storing it, so a
 * step that would leave a non-finite number can be refused before anything changes;
 * adam_write then does the same arithmetic and stores it. */
typedef struct adam_k {
	float gscale, keep, b1, b2, c1, c2, step_size, rb2, eps;
} adam_k;

GB_VECTORIZE static int adam_check(const float *restrict p, const float *restrict g, const float *restrict mo,
                                   const float *restrict ve, size_t n, const adam_k *k)
{
	int bad = 0;
	for (size_t j = 0; j < n; j++) {
		float gj = g[j] * k->gscale;
		float mj = k->b1 * mo[j] + k->c1 * gj, vj = k->b2 * ve[j] + k->c2 * gj * gj;
		float pj = p[j] * k->keep - k->step_size * mj / (sqrtf(vj) * k->rb2 + k->eps);
		/* NaN fails every comparison; infinities exceed FLT_MAX */
		bad |= !(fabsf(pj) <= FLT_MAX) | !(vj <= FLT_MAX) | !(fabsf(mj) <= FLT_MAX);
	}
	return bad;
}

GB_VECTORIZE static void adam_write(float *restrict p, const float *restrict g, float *restrict mo,
                                    float *restrict ve, size_t n, const adam_k *k)
{
	for (size_t j = 0; j < n; j++) {
		float gj = g[j] * k->gscale;
		float mj = k->b1 * mo[j] + k->c1 * gj, vj = k->b2 * ve[j] + k->c2 * gj * gj;
		p[j] = p[j] * k->keep - k->step_size * mj / (sqrtf(vj) * k->rb2 + k->eps);
		mo[j] = mj;
		ve[j] = vj;
	}
}

/* g += h over n. */
GB_VECTORIZE static void grad_add(float *restrict g, const float *restrict h, size_t n)
{
	for (size_t j = 0; j < n; j++)
		g[j] += h[j];
}

/* Σ g² in double, in eight interleaved partial sums (a fixed order, and no single chain of
 * dependent additions to wait on). */
GB_VECTORIZE static double sum_squares(const float *g, size_t n)
{
	double a[8] = { 0 }, s = 0;
	size_t j = 0;
	for (; j + 8 <= n; j += 8)
		for (int k = 0; k < 8; k++)
			a[k] += (double)g[j + k] * g[j + k];
	for (int k = 0; k < 8; k++)
		s += a[k];
	for (; j < n; j++)
		s += (double)g[j] * g[j];
	return s;
}

/* The optimizer's passes over the parameters, cut into a fixed number of chunks (so the
 * squared norm's partial sums add up in the same order whatever the thread count):
 * phase 0 sums the slots' gradients into slot 0's and squares them, 1 checks the update,
 * 2 applies it. */
enum { OPT_CHUNKS = 16 };

typedef struct opt_job {
	gb_trainer *t;
	int phase, n_slots;
	adam_k k;
	double lr;
	double ss[OPT_CHUNKS];
	int bad[OPT_CHUNKS];
} opt_job;

static void opt_task(void *arg, int c, int worker)
{
	opt_job *J = arg;
	gb_trainer *t = J->t;
	const gb_model *m = t->m;
	size_t nw = m->n_weights, j0 = nw * c / OPT_CHUNKS, j1 = nw * (c + 1) / OPT_CHUNKS;
	float *g = t->slot[0].grad;
	if (J->phase == 0) {
		for (int s = 1; s < J->n_slots; s++)
			grad_add(g + j0, t->slot[s].grad + j0, j1 - j0);
		J->ss[c] = sum_squares(g + j0, j1 - j0);
		return;
	}
	adam_k k = J->k;
	size_t off = 0;
	J->bad[c] = 0;
	for (int i = 0; i < m->n_params && off < j1; off += m->params[i].n, i++) {
		size_t a = off > j0 ? off : j0, b = off + m->params[i].n < j1 ? off + m->params[i].n : j1;
		if (a >= b)
			continue;
		k.keep = t->decay[i] ? (float)(1 - J->lr * t->o.weight_decay) : 1.0f;
		if (J->phase == 2)
			adam_write(m->owned + a, g + a, t->mom + a, t->vel + a, b - a, &k);
		else
			J->bad[c] |= adam_check(m->owned + a, g + a, t->mom + a, t->vel + a, b - a, &k);
	}
}

static void opt_run(opt_job *J, int phase)
{
	J->phase = phase;
	gb_pool_run(OPT_CHUNKS, opt_task, J);
}

int gb_train_step(gb_trainer *t, const gb_batch *b, gb_step_stats *st, gb_err *err)
{
	gb_step_stats tmp;
	long count = 0;
	st = st ? st : &tmp;
	memset(st, 0, sizeof *st);
	if (check_batch(t, b, &count, err))
		return -1;
	if (count == 0)
		return gb_fail(err, "the batch has no target to learn (every target is -1)");
	unsigned csr = gb_fp_fast_enter();
	int n = run_slots(t, b, 1, 1.0 / count, err);
	if (n < 0) {
		gb_fp_fast_leave(csr);
		return -1;
	}
	gather_stats(t, n, count, st);
	opt_job J;
	memset(&J, 0, sizeof J);
	J.t = t;
	J.n_slots = n;
	opt_run(&J, 0);
	double ss = 0;
	for (int c = 0; c < OPT_CHUNKS; c++)
		ss += J.ss[c];
	st->grad_norm = sqrt(ss);
	st->lr = gb_train_lr(&t->o, t->step + 1);
	float gscale = 1.0f;
	if (t->o.clip > 0 && st->grad_norm > t->o.clip)
		gscale = (float)(t->o.clip / (st->grad_norm + 1e-6));
	double step = (double)(t->step + 1);
	adam_k k = { gscale, 1, t->o.beta1, t->o.beta2, 1 - t->o.beta1, 1 - t->o.beta2,
	             (float)(st->lr / (1 - pow(t->o.beta1, step))), (float)(1 / sqrt(1 - pow(t->o.beta2, step))),
	             t->o.eps };
	J.k = k;
	J.lr = st->lr;
	int bad = !isfinite(st->loss) || !isfinite(st->grad_norm) || !isfinite(st->lr);
	if (!bad) {
		opt_run(&J, 1);
		for (int c = 0; c < OPT_CHUNKS; c++)
			bad |= J.bad[c];
	}
	int rc = 0;
	if (bad) {
		st->diverged = 1;
		rc = gb_fail(err, "training diverged at step %ld (loss %g, gradient norm %g); the weights were left as "
		             "they were: lower the learning rate (%g)", t->step + 1, st->loss, st->grad_norm, st->lr);
	} else {
		opt_run(&J, 2);
		t->step++;
	}
	gb_fp_fast_leave(csr);
	return rc;
}
