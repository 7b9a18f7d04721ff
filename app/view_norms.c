/* view_norms.c — issue 19, norms: for one sentence, the residual stream's norm after the
 * embedding and after each layer (from the trace), and the norm of the loss's gradient with
 * respect to each layer's weights, from a backward pass through the trainer's own code
 * (gb_backward on a forward pass of its own, the loss of predicting each next token). Pre- and
 * post-norm models side by side: `compare-models tiny-lm tiny-lm-postnorm norms --grad`. */
#include "app/view19.h"
#include "app/view_common.h"
#include "app/views.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/train/grad_ops.h"
#include "model/train/train.h"

/* The layer (from 1) a parameter belongs to, from its name ("h.3.", "layers.3."); 0 for the
 * embeddings, the final norm and the output. */
static int param_layer(const char *name)
{
	const char *p = strstr(name, "h.");
	if (p && (p == name || p[-1] == '.') && p[2] >= '0' && p[2] <= '9')
		return atoi(p + 2) + 1;
	p = strstr(name, "layers.");
	if (p && p[7] >= '0' && p[7] <= '9')
		return atoi(p + 7) + 1;
	return 0;
}

/* The mean next-token loss of ids (n) on m, from a forward pass's logits in double. */
static int mean_loss(const gb_model *m, const int *ids, int n, const gb_kernels *k, double *out, gb_err *err)
{
	gb_trace tr = { 0 };
	gb_fwd_opts o = { 0 };
	o.k = k;
	tr.budget = (size_t)1 << 40;
	if (gb_forward(m, ids, n, NULL, 0, &tr, &o, err)) {
		gb_trace_free(&tr);
		return -1;
	}
	const gb_ttensor *lg = gb_trace_get(&tr, "logits");
	int V = lg->shape[1];
	double sum = 0;
	for (int i = 0; i + 1 < n; i++) {
		const float *r = lg->data + (size_t)i * V;
		double mx = -INFINITY, z = 0;
		for (int v = 0; v < V; v++)
			mx = r[v] > mx ? r[v] : mx;
		for (int v = 0; v < V; v++)
			z += exp(r[v] - mx);
		sum += mx + log(z) - r[ids[i + 1]];
	}
	*out = sum / (n - 1);
	gb_trace_free(&tr);
	return 0;
}

int layer_grad_norms(session *s, double *norm, double *loss_out, double *fd)
{
	if (need_run(s))
		return -1;
	const gb_config *c = &s->model.cfg;
	if (c->encdec) {
		errorf("norms --grad runs a decoder-only model's backward pass; this is an encoder-decoder");
		return -1;
	}
	int n = s->trace.n_ids, L = c->n_layer;
	if (n < 2) {
		errorf("the gradient needs at least two tokens: a loss needs a next token to predict");
		return -1;
	}
	if (!s->model.dir[0]) {
		errorf("norms --grad reloads the model from its folder, and this one has none");
		return -1;
	}
	/* the trainer's gradients are laid out as the owned block: a copy of the model of its
	 * own, loaded in place (its parameters' slots point into it) and made writable, so the
	 * session's model stays as it is */
	gb_err err;
	gb_model mm, *m = &mm;
	if (gb_model_load(m, s->model.dir, &err) || gb_model_make_writable(m, &err)) {
		errorf("%s", err.msg);
		return -1;
	}
	int *tgt = malloc(sizeof(int) * (size_t)n);
	float *grad = calloc(m->n_weights, sizeof(float));
	gb_trace tr = { 0 };
	gb_ws ws = { 0 };
	if (!tgt || !grad) {
		free(tgt), free(grad);
		gb_model_free(m);
		errorf("out of memory");
		return -1;
	}
	for (int i = 0; i < n; i++)
		tgt[i] = i + 1 < n ? s->trace.ids[i + 1] : -1;
	/* the trainer's forward pass: default options (no mask, no lesson switches), the session's
	 * kernels, recorded in full */
	gb_fwd_opts o = { 0 };
	o.k = s->k;
	tr.budget = (size_t)1 << 40;
	double loss = 0;
	int count = 0, rc = 0;
	if (gb_forward(m, s->trace.ids, n, NULL, 0, &tr, &o, &err) ||
	    gb_backward(m, &tr, tgt, 0.0, 1.0, grad, s->k, &ws, &loss, &count, NULL, &err)) {
		errorf("%s", err.msg);
		rc = -1;
	}
	for (int l = 0; l <= L; l++)
		norm[l] = 0;
	for (int i = 0; !rc && i < m->n_params; i++) {
		const gb_param *p = &m->params[i];
		size_t off = (size_t)(p->data - m->owned);
		int l = param_layer(p->name);
		if (l > L)
			continue;
		for (size_t k = 0; k < p->n; k++) {
			double g = grad[off + k] / (double)count; /* the gradient of the mean loss */
			norm[l] += g * g;
		}
	}
	for (int l = 0; l <= L; l++)
		norm[l] = sqrt(norm[l]);
	/* the check: the loss's slope along each layer's gradient direction u = g_l / ||g_l||, by
	 * central differences of the forward pass alone, is ||g_l|| */
	for (int l = 0; fd && !rc && l <= L; l++) {
		const double eps = 1e-3;
		double lp = 0, lm = 0;
		/* W + eps u, then W - eps u, then back to W (up to rounding) for the next layer */
		static const double step[3] = { 1, -2, 1 };
		for (int t = 0; t < 3 && !rc; t++) {
			for (int i = 0; i < m->n_params; i++) {
				gb_param *p = &m->params[i];
				size_t off = (size_t)(p->data - m->owned);
				if (param_layer(p->name) == l && norm[l] > 0)
					for (size_t k = 0; k < p->n; k++)
						p->data[k] += (float)(step[t] * eps * grad[off + k] / count / norm[l]);
			}
			if (t < 2 && mean_loss(m, s->trace.ids, n, s->k, t ? &lm : &lp, &err)) {
				errorf("%s", err.msg);
				rc = -1;
			}
		}
		fd[l] = (lp - lm) / (2 * eps);
	}
	if (loss_out)
		*loss_out = count ? loss / count : 0;
	gb_ws_free(&ws);
	gb_trace_free(&tr);
	gb_model_free(m);
	free(tgt);
	free(grad);
	return rc;
}

/* A norm's axis starts at 0, so that a small difference looks small (lesson 19's gradients
 * differ by a quarter; an axis from their minimum made it look like a factor of ten). */
static void from_zero(gb_figure *f, const float *y, int n)
{
	float hi = 0;
	for (int i = 0; i < n; i++)
		hi = y[i] > hi ? y[i] : hi;
	f->range = GB_RANGE_FIXED;
	f->vmin = 0;
	f->vmax = hi > 0 ? hi * 1.05f : 1;
}

gb_figure *view_norms(session *s, int grad)
{
	if (need_run(s))
		return NULL;
	const gb_config *c = &s->model.cfg;
	const char *p = c->encdec ? "dec." : "";
	int L = c->n_layer;
	float *xs = malloc(sizeof(float) * (size_t)(L + 1)), *y = malloc(sizeof(float) * (size_t)(L + 1));
	double *g = malloc(sizeof(double) * (size_t)(L + 1)), loss = 0;
	gb_figure *f = NULL;
	if (!xs || !y || !g)
		goto out;
	for (int l = 0; l <= L; l++)
		xs[l] = (float)l;
	if (grad) {
		if (layer_grad_norms(s, g, &loss, NULL))
			goto out;
		f = gb_fig_new(GB_FIG_LINES);
		gb_fig_set_xs(f, xs + 1, L);
		for (int l = 1; l <= L; l++)
			y[l - 1] = (float)g[l];
		gb_fig_add_series(f, c->prenorm ? "pre-norm" : "post-norm", y, L);
		view_titlef(f, "Gradient of the loss per layer: one sentence's backward pass");
		char cap[240];
		snprintf(cap, sizeof cap, "||d loss / d W_l|| over layer l's weights, for the mean next-token loss %.3f; "
		         "embeddings and output: %.3g", loss, g[0]);
		gb_fig_set_caption(f, cap);
		gb_fig_set_axes(f, "gradient norm", "layer");
		from_zero(f, y, L);
	} else {
		/* the mean over the tokens of ||x||, entering layer 1 and after each layer */
		f = gb_fig_new(GB_FIG_LINES);
		for (int l = 0; l <= L; l++) {
			char nm[64];
			if (l)
				snprintf(nm, sizeof nm, "%sL%d.resid.post", p, l);
			else
				snprintf(nm, sizeof nm, "%sembed.sum", p);
			const gb_ttensor *t = gb_trace_get(&s->trace, nm);
			if (!t || !t->data) {
				errorf("this run has no %s", nm);
				gb_fig_free(f);
				f = NULL;
				goto out;
			}
			int T = t->shape[0], D = t->shape[1];
			double sum = 0;
			for (int i = 0; i < T; i++) {
				double q = 0;
				for (int d = 0; d < D; d++)
					q += (double)t->data[(size_t)i * D + d] * t->data[(size_t)i * D + d];
				sum += sqrt(q);
			}
			y[l] = (float)(sum / T);
		}
		gb_fig_set_xs(f, xs, L + 1);
		gb_fig_add_series(f, c->prenorm ? "pre-norm" : "post-norm", y, L + 1);
		view_titlef(f, "The residual stream's norm, layer by layer");
		gb_fig_set_caption(f, c->prenorm ? "pre-norm adds each sub-layer's output to an unnormalised stream: its norm "
		                                   "grows with depth"
		                                 : "post-norm normalises the stream after every sub-layer: its norm is set by "
		                                   "that norm's learned gains and biases");
		gb_fig_set_axes(f, "mean ||x||", "after layer (0: the embedding)");
		from_zero(f, y, L + 1);
	}
	view_provenance(s, f, NULL, NULL, 0);
out:
	free(xs);
	free(y);
	free(g);
	return f;
}
