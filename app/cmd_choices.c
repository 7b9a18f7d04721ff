/* cmd_choices.c — issue 19's commands: what each architecture choice does, seen on the loaded
 * model (loss, positions, the context a run may take); the views are in view_loss.c and
 * view_pos.c (view19.h). */
#include "app/cmd.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/view19.h"
#include "app/views.h"

int cmd_loss(session *s, int argc, char **argv, const char *rest)
{
	int curve = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--curve"))
			curve = 1;
		else
			return usage(argv[0]);
	}
	return show_figure(s, view_loss(s, curve));
}

/* set context N|trained: the longest run the session accepts. A model's n_ctx is only a
 * limit for the positions that have a rule for any position (sinusoidal, RoPE, ALiBi, T5's
 * buckets, none); learned positions have C rows and no more. */
int set_context(session *s, const char *v)
{
	if (need_model(s))
		return -1;
	gb_config *c = &s->model.cfg;
	int trained = s->ctx_trained ? s->ctx_trained : c->n_ctx, n;
	if (!strcmp(v, "trained"))
		n = trained;
	else if (parse_int(v, 1, 1 << 16, &n, "the context"))
		return -1;
	if (n > trained && c->pos == GB_POS_LEARNED) {
		errorf("this model's positions are learned: a table of %d rows, one per position it was trained on, "
		       "and position %d has no row (RoPE, ALiBi, T5, sinusoidal or no positions can run longer)",
		       trained, trained + 1);
		return -1;
	}
	if (c->encdec && n > trained) {
		errorf("set context runs a decoder-only model past its context; this is an encoder-decoder");
		return -1;
	}
	c->n_ctx = n;
	s->ctx_trained = n == trained ? 0 : trained;
	if (s->interactive)
		printf("runs may be %d tokens long (the model was trained on %d)\n", n, trained);
	return 0;
}

static int int_arg(const char *a, int lo, int hi, int *out, const char *what)
{
	return parse_int(a, lo, hi, out, what);
}

/* positions offset [L] | shift [L] [H] [--by K] | rope [PAIR ...] | alibi | buckets [L] */
int cmd_positions(session *s, int argc, char **argv, const char *rest)
{
	if (argc < 2)
		return usage(argv[0]);
	const char *sub = argv[1];
	if (need_model(s))
		return -1;
	int L = s->model.cfg.n_layer;
	if (!strcmp(sub, "offset") || !strcmp(sub, "buckets")) {
		int layer = 1;
		if (argc > 3 || (argc == 3 && int_arg(argv[2], 1, L, &layer, "the layer")))
			return argc > 3 ? usage(argv[0]) : -1;
		return show_figure(s, sub[0] == 'o' ? view_pos_offset(s, layer) : view_t5_buckets(s, layer));
	}
	if (!strcmp(sub, "alibi"))
		return argc != 2 ? usage(argv[0]) : show_figure(s, view_alibi_slopes(s));
	if (!strcmp(sub, "rope")) {
		int pairs[16], np = 0;
		for (int i = 2; i < argc; i++) {
			if (np == 16) {
				errorf("at most 16 pairs at once");
				return -1;
			}
			if (int_arg(argv[i], 0, 1 << 20, &pairs[np++], "a pair"))
				return -1;
		}
		return show_figure(s, view_rope_pairs(s, pairs, np));
	}
	if (!strcmp(sub, "shift")) {
		int layer = 1, head = 1, by = 8, pos = 0;
		for (int i = 2; i < argc; i++) {
			if (!strcmp(argv[i], "--by") && i + 1 < argc) {
				if (int_arg(argv[++i], 1, 1 << 20, &by, "the shift"))
					return -1;
			} else if (pos == 0) {
				if (int_arg(argv[i], 1, L, &layer, "the layer"))
					return -1;
				pos++;
			} else if (pos == 1) {
				if (int_arg(argv[i], 1, s->model.cfg.n_head, &head, "the head"))
					return -1;
				pos++;
			} else
				return usage(argv[0]);
		}
		shift_result r;
		if (shift_test(s, layer, by, &r))
			return -1;
		int n_eq = 0;
		printf("shift test, layer %d: the text's %d tokens at positions 0-%d and %d-%d\n", layer, r.n, r.n - 1, by,
		       by + r.n - 1);
		for (int h = 0; h < r.H; h++) {
			int eq = shift_equal(&r, h);
			n_eq += eq;
			printf("  head %2d  largest |score difference| %-10.3g (largest |score| %.3g)  %s\n", h + 1, r.maxdiff[h],
			       r.maxabs[h], eq ? "equal" : "different");
		}
		const char *same = s->model.cfg.pos == GB_POS_NONE
		                           ? "every head's scores are the same: with no positions they depend only on the tokens"
		                           : "every head's scores are the same: they depend only on the offset";
		printf("%s\n", n_eq == r.H ? same
		                           : n_eq == 0 ? "every head's scores changed: they depend on where the words stand"
		                                       : "some heads' scores changed");
		int rc = show_figure(s, view_shift(s, &r, head));
		shift_free(&r);
		return rc;
	}
	errorf("positions shows offset, shift, rope, alibi or buckets (got '%s')", sub);
	return -1;
}

/* experts L [--load | --tokens [N]] */
int cmd_experts(session *s, int argc, char **argv, const char *rest)
{
	if (argc < 2 || argc > 4)
		return usage(argv[0]);
	if (need_model(s))
		return -1;
	int layer, n = 6;
	if (parse_int(argv[1], 1, s->model.cfg.n_layer, &layer, "the layer"))
		return -1;
	if (argc == 2)
		return show_figure(s, view_moe_routing(s, layer));
	if (!strcmp(argv[2], "--load") && argc == 3)
		return show_figure(s, view_moe_load(s, layer));
	if (!strcmp(argv[2], "--tokens")) {
		if (argc == 4 && parse_int(argv[3], 1, 32, &n, "the number of tokens"))
			return -1;
		return show_figure(s, view_moe_tokens(s, layer, n));
	}
	return usage(argv[0]);
}

/* linear L H [--state [N]] */
int cmd_linear(session *s, int argc, char **argv, const char *rest)
{
	if (argc < 3 || argc > 5)
		return usage(argv[0]);
	if (need_model(s))
		return -1;
	int layer, head, n = 4, state = 0;
	if (parse_int(argv[1], 1, s->model.cfg.n_layer, &layer, "the layer") ||
	    parse_int(argv[2], 1, s->model.cfg.n_head, &head, "the head"))
		return -1;
	if (argc >= 4) {
		if (strcmp(argv[3], "--state"))
			return usage(argv[0]);
		state = 1;
		if (argc == 5 && parse_int(argv[4], 1, 8, &n, "the number of panels"))
			return -1;
	}
	linear_result r;
	if (linear_check(s, layer, head, &r))
		return -1;
	int rc;
	if (state)
		rc = show_figure(s, view_linear_state(s, &r, n));
	else {
		printf("linear attention, layer %d head %d, %d tokens:\n", layer, head, r.T);
		printf("  quadratic order: the %d x %d implied weights times the values\n", r.T, r.T);
		printf("  recurrent order: a %d x %d state and a normaliser of %d, one key at a time\n", r.E, r.E, r.E);
		printf("  largest |difference| of the outputs %.3g (largest |output| %.3g); against the engine's head "
		       "output %.3g\n", r.max_orders, r.max_out, r.max_engine);
		gb_figure *f = view_linear_both(s, &r);
		rc = show_figure(s, f);
	}
	linear_free(&r);
	return rc;
}

/* receptive [N] */
int cmd_receptive(session *s, int argc, char **argv, const char *rest)
{
	int n = 0;
	if (argc > 2 || (argc == 2 && parse_int(argv[1], 2, 64, &n, "the number of positions")))
		return argc > 2 ? usage(argv[0]) : -1;
	return show_figure(s, view_receptive(s, n));
}

/* cost [--memory] [--max N] */
int cmd_cost(session *s, int argc, char **argv, const char *rest)
{
	int memory = 0, max = 4096;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--memory"))
			memory = 1;
		else if (!strcmp(argv[i], "--max") && i + 1 < argc) {
			if (parse_int(argv[++i], 128, 8192, &max, "--max"))
				return -1;
		} else
			return usage(argv[0]);
	}
	attn_cost c;
	if (bench_attn_measure(s->k, max, &c)) {
		errorf("out of memory measuring attention up to %d tokens", max);
		return -1;
	}
	printf("%8s %12s %12s %12s %14s\n", "tokens", "softmax ms", "window ms", "linear ms", "softmax bytes");
	for (int i = 0; i < c.n; i++)
		printf("%8d %12.4f %12.4f %12.4f %14.0f\n", c.T[i], c.seconds[0][i] * 1e3, c.seconds[1][i] * 1e3,
		       c.seconds[2][i] * 1e3, c.bytes[0][i]);
	return show_figure(s, view_cost(s, &c, memory));
}

/* norms [--grad [--check]] */
int cmd_norms(session *s, int argc, char **argv, const char *rest)
{
	int grad = argc >= 2 && !strcmp(argv[1], "--grad"), check = argc == 3 && grad && !strcmp(argv[2], "--check");
	if (argc > 3 || (argc == 2 && !grad) || (argc == 3 && !check))
		return usage(argv[0]);
	if (check) { /* the backward pass against central differences of the forward pass */
		if (need_run(s))
			return -1;
		int L = s->model.cfg.n_layer;
		double *g = malloc(sizeof(double) * (size_t)(L + 1)), *fd = malloc(sizeof(double) * (size_t)(L + 1)), loss;
		int rc = g && fd ? layer_grad_norms(s, g, &loss, fd) : -1;
		for (int l = 0; !rc && l <= L; l++) {
			char what[32];
			snprintf(what, sizeof what, l ? "layer %d" : "embeddings and output", l);
			printf("  %-22s gradient norm %-12.6g slope along it (central differences) %-12.6g relative difference %.2g\n",
			       what, g[l], fd[l], fabs(g[l] - fd[l]) / (g[l] > 0 ? g[l] : 1));
		}
		free(g);
		free(fd);
		return rc;
	}
	return show_figure(s, view_norms(s, grad));
}
