/* cmd_gen.c — decoding after the current text: `generate` (sampling, a token a step, with the
 * tokens it looks at), `beam` (beam search, every step shown) and `translate` (greedy, with
 * an encoder-decoder). Ctrl-C stops each between steps. */
#include "app/cmd.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/classroom.h"
#include "app/textout.h"
#include "app/view19.h"
#include "app/view_steps.h"
#include "model/decode.h"
#include "model/tokenizer/tokenizer.h"

/* Options shared by generate: --temp T --top-k K --top-p P --seed S. */
static int parse_sampling(int argc, char **argv, int from, gb_sampling *sm, int *seed)
{
	for (int i = from; i < argc; i++) {
		char *end;
		if (i + 1 >= argc) {
			errorf("%s needs a value", argv[i]);
			return -1;
		}
		const char *v = argv[++i];
		if (!strcmp(argv[i - 1], "--temp")) {
			sm->temp = strtod(v, &end);
			if (*end || !(sm->temp >= 0) || sm->temp > 100) {
				errorf("--temp must be a number from 0 (greedy) to 100 (got '%s')", v);
				return -1;
			}
		} else if (!strcmp(argv[i - 1], "--top-k")) {
			if (parse_int(v, 0, 1 << 24, &sm->top_k, "--top-k"))
				return -1;
		} else if (!strcmp(argv[i - 1], "--top-p")) {
			sm->top_p = strtod(v, &end);
			if (*end || !(sm->top_p > 0 && sm->top_p <= 1)) {
				errorf("--top-p must be a number above 0 and at most 1 (got '%s')", v);
				return -1;
			}
		} else if (!strcmp(argv[i - 1], "--seed")) {
			if (parse_int(v, 0, 2000000000, seed, "--seed"))
				return -1;
		} else {
			errorf("unknown option '%s': --temp, --top-k, --top-p or --seed", argv[i - 1]);
			return -1;
		}
	}
	return 0;
}

/* The tokens the newest position attends to most, averaged over the last layer's heads of tr
 * (a cached step's trace: its last query row spans every key so far): printed after a
 * generated token ("looks at ..."), whose line has col columns so far. */
static void attended(session *s, const gb_trace *tr, int col)
{
	const gb_config *c = &s->model.cfg;
	char name[64];
	snprintf(name, sizeof name, "%sL%d.attn.weights", c->encdec ? "dec." : "", c->n_layer);
	const gb_ttensor *w = gb_trace_get(tr, name);
	const int *ids = c->encdec ? tr->tgt : tr->ids;
	int n = c->encdec ? tr->n_tgt : tr->n_ids;
	if (!w || n < 2) {
		printf("\n");
		return;
	}
	int H = w->shape[0], Tq = w->shape[1], T = w->shape[2];
	double best[3] = { -1, -1, -1 };
	int at[3] = { 0, 0, 0 };
	for (int j = 0; j < T; j++) {
		double m = 0;
		for (int h = 0; h < H; h++)
			m += w->data[((size_t)h * Tq + (Tq - 1)) * T + j] / H;
		for (int k = 0; k < 3; k++)
			if (m > best[k]) {
				for (int q = 2; q > k; q--)
					best[q] = best[q - 1], at[q] = at[q - 1];
				best[k] = m, at[k] = j;
				break;
			}
	}
	/* on the token's line, as many as fit the terminal (the strongest at least): a second line
	 * under a row reads as a row of its own */
	int width, h;
	text_size(&width, &h);
	printf("  looks at");
	col += 10;
	for (int k = 0; k < 3 && best[k] >= 0; k++) {
		char piece[128], item[160];
		piece_str(s, ids[at[k]], piece, sizeof piece);
		snprintf(item, sizeof item, " %s (%.2f)", piece, best[k]);
		int w = gb_utf8_width(item);
		if (k > 0 && col + w > width)
			break;
		fputs(item, stdout);
		col += w;
	}
	printf("\n");
}

/* A probability in six columns: 0.1234, or 2e-05 when four decimals would print 0.0000. */
static void fmt_p(char *out, size_t size, double p)
{
	if (p >= 0.0001 || p == 0)
		snprintf(out, size, "%.4f", p);
	else
		snprintf(out, size, "%-6.0e", p);
}

int cmd_generate(session *s, int argc, char **argv, const char *rest)
{
	if (argc < 2)
		return usage(argv[0]);
	if (need_run(s))
		return -1;
	const gb_config *c = &s->model.cfg;
	int steps, seed = 1;
	gb_sampling sm = { 1, 0, 1 };
	if (parse_int(argv[1], 1, 100000, &steps, "the number of tokens") || parse_sampling(argc, argv, 2, &sm, &seed))
		return -1;
	if (classroom_replaying() && steps > FOLLOW_MAX_TOKENS) {
		errorf("the teacher generated %d tokens: a follower repeats at most %d", steps, FOLLOW_MAX_TOKENS);
		return -1;
	}
	gb_rng rng;
	gb_rng_seed(&rng, (uint64_t)seed);
	/* The sequence the decoder sees grows by one token a step. */
	int cap = c->n_ctx + 1, n, *seq = malloc(sizeof(int) * (size_t)cap);
	const gb_trace *tr = &s->trace;
	if (c->encdec) {
		n = tr->n_tgt;
		memcpy(seq, tr->tgt, sizeof(int) * (size_t)n);
	} else {
		n = tr->n_ids;
		memcpy(seq, tr->ids, sizeof(int) * (size_t)n);
	}
	int *src = NULL, n_src = tr->n_ids;
	if (c->encdec) {
		src = malloc(sizeof(int) * (size_t)n_src);
		memcpy(src, tr->ids, sizeof(int) * (size_t)n_src);
	}
	/* Each step runs only the new token through a key/value cache (the first also the
	 * prompt, which the cache does not have yet); the session's trace gets the whole text in
	 * one full run at the end, so every view sees it as before. */
	gb_fwd_opts o = { 0 };
	o.k = s->k;
	o.textbook_ln = s->textbook;
	mask_opts(s, &o); /* each cached step under the session's mask, as the full run */
	gb_err err;
	gb_trace step_tr = { 0 };
	const gb_trace *cur = &s->trace; /* where the next token's logits are */
	gb_kvcache *kc = gb_kvcache_new(&s->model, c->n_ctx, &err);
	if (!kc || (c->encdec && gb_kvcache_set_source(kc, &s->model, src, n_src, NULL, &o, &err))) {
		errorf("%s", err.msg);
		gb_kvcache_free(kc);
		free(seq);
		free(src);
		return -1;
	}
	interrupted = 0;
	int rc = 0, n0 = n;
	/* sampling that changes the distribution (a temperature, top-k, top-p) draws with other
	 * probabilities than the model's own; greedy (T 0, top-k 1) draws with 1, which says nothing */
	int drawn = (sm.temp != 1 || sm.top_k > 0 || sm.top_p < 1) && sm.temp > 0 && sm.top_k != 1;
	view_decode *fig = view_decode_new(s, &sm); /* the steps as a figure (NULL: none, no error) */
	for (int step = 0; step < steps; step++) {
		if (interrupted) {
			printf("(stopped after %d tokens)\n", step);
			break;
		}
		if (n >= c->n_ctx) {
			printf("(the context is full: %d tokens)\n", c->n_ctx);
			break;
		}
		const gb_ttensor *lg = gb_trace_get(cur, "logits");
		int V = lg->shape[1];
		double p;
		int id = gb_sample(lg->data + (size_t)(lg->shape[0] - 1) * V, V, &sm, &rng, &p);
		if (fig && view_decode_add(fig, lg->data + (size_t)(lg->shape[0] - 1) * V, V, id))
			gb_fig_free(view_decode_figure(fig)), fig = NULL;
		seq[n++] = id;
		char piece[128];
		piece_str(s, id, piece, sizeof piece);
		/* columns by display width: a "·" is one column but two bytes */
		printf("%3d  ", step + 1);
		int pw = gb_utf8_width(piece) > 13 ? gb_utf8_width(piece) : 13; /* <|endoftext|> fits */
		text_cols(stdout, piece, pw);
		/* p is the model's own probability (softmax at T 1); when the sampling changes the
		 * distribution (a temperature, top-k, top-p), the probability it drew with follows;
		 * greedy (T 0, top-k 1) draws with 1 every time, which says nothing. */
		const float *row = lg->data + (size_t)(lg->shape[0] - 1) * V;
		double pm = exp((double)row[id] - gb_logsumexp(row, V));
		char pt[24];
		fmt_p(pt, sizeof pt, pm);
		printf("  id %-5d p = %s", id, pt);
		int col = 5 + pw + 2 + 8 + 11;
		if (drawn) { /* the probability it was drawn with; the footer says how */
			char how[48], ps[24];
			fmt_p(ps, sizeof ps, p);
			snprintf(how, sizeof how, "  p_T = %s", ps);
			fputs(how, stdout);
			col += (int)strlen(how);
		}
		int have = gb_kvcache_len(kc);
		if ((rc = gb_forward_cached(&s->model, kc, seq + have, n - have, &step_tr, &o, &err))) {
			printf("\n");
			errorf("%s", err.msg);
			break;
		}
		cur = &step_tr;
		attended(s, cur, col);
		fflush(stdout);
		if (id == c->eos_id && c->eos_id >= 0)
			break;
	}
	if (drawn && n > n0) {
		char how[96];
		int k = snprintf(how, sizeof how, "p: the model's probability; p_T: the one it was drawn with");
		if (sm.temp != 1)
			k += snprintf(how + k, sizeof how - (size_t)k, ", T %g", sm.temp);
		if (sm.top_k > 0)
			k += snprintf(how + k, sizeof how - (size_t)k, ", top-k %d", sm.top_k);
		if (sm.top_p < 1)
			snprintf(how + k, sizeof how - (size_t)k, ", top-p %g", sm.top_p);
		int tw, th;
		text_size(&tw, &th);
		text_wrap(stdout, how, tw, 0, 3);
	}
	gb_kvcache_free(kc);
	gb_trace_free(&step_tr);
	if (n > n0 && (c->encdec ? forward(s, src, n_src, seq, n) : forward(s, seq, n, NULL, 0)))
		rc = -1;
	/* The text now is the prompt and what was generated, as it ran (an encoder-decoder's
	 * source does not change: its decoder's tokens grew). */
	if (!c->encdec && s->have_run) {
		free(s->text);
		s->text = ids_text(s, s->trace.ids, s->trace.n_ids);
	}
	/* after the text has grown, so the figure names the text it came from */
	gb_figure *df = view_decode_figure(fig);
	if (df && session_adopt(s, df, NULL))
		rc = -1;
	free(seq);
	free(src);
	return rc;
}

typedef struct beam_print {
	session *s;
	view_beam *fig;           /* the tree as it grows (NULL: out of memory, no figure) */
} beam_print;

static int print_beams(void *arg, int step, const gb_beam *beams, int n)
{
	session *s = ((beam_print *)arg)->s;
	printf("step %d\n", step);
	/* the best 8: a wide beam would otherwise fill the screen at every step */
	int shown = n < 8 ? n : 8;
	for (int b = 0; b < shown; b++) {
		printf("  %d  score %8.4f  ", b + 1, beams[b].score);
		for (int i = 0; i < beams[b].n; i++) {
			char piece[128];
			piece_str(s, beams[b].ids[i], piece, sizeof piece);
			printf("%s%s", i ? " " : "", piece);
		}
		printf("%s\n", beams[b].done ? "  (ended)" : "");
	}
	if (n > shown)
		printf("  ... and %d more beams\n", n - shown);
	beam_print *bp = arg;
	if (bp->fig && view_beam_add(bp->fig, step, beams, n))
		gb_fig_free(view_beam_figure(bp->fig, NULL, 0)), bp->fig = NULL;
	fflush(stdout);
	if (interrupted) {
		printf("stopped by Ctrl-C after step %d\n", step);
		return 1;
	}
	return 0;
}

int cmd_beam(session *s, int argc, char **argv, const char *rest)
{
	if (argc != 3)
		return usage(argv[0]);
	if (need_run(s))
		return -1;
	int k, steps;
	if (parse_int(argv[1], 1, 64, &k, "the beam width") || parse_int(argv[2], 1, 10000, &steps, "the number of steps"))
		return -1;
	if (classroom_replaying() && (k > FOLLOW_MAX_BEAM || steps > FOLLOW_MAX_TOKENS)) {
		errorf("the teacher's beam is %d wide for %d steps: a follower repeats at most %d wide for %d", k, steps,
		       FOLLOW_MAX_BEAM, FOLLOW_MAX_TOKENS);
		return -1;
	}
	const gb_trace *tr = &s->trace;
	int n = tr->n_ids, *ids = malloc(sizeof(int) * (size_t)n);
	memcpy(ids, tr->ids, sizeof(int) * (size_t)n);
	gb_beam out[64];
	int n_out = 0;
	gb_err err;
	beam_print bp = { s, view_beam_new(s, k) };
	interrupted = 0;
	int rc = gb_beam_search(&s->model, s->k, ids, n, k, steps, s->model.cfg.eos_id, print_beams, &bp, out, &n_out, &err);
	free(ids);
	if (rc) {
		gb_fig_free(view_beam_figure(bp.fig, NULL, 0));
		errorf("%s", err.msg);
		return -1;
	}
	printf("best: score %.4f (sum of log-probabilities)\n", out[0].score);
	gb_figure *tree = view_beam_figure(bp.fig, out, n_out);
	gb_beams_free(out, n_out);
	return tree ? session_adopt(s, tree, NULL) : 0;
}

int cmd_translate(session *s, int argc, char **argv, const char *rest)
{
	if (need_model(s))
		return -1;
	const gb_config *c = &s->model.cfg;
	if (!c->encdec) {
		errorf("translate needs an encoder-decoder model (this one is decoder-only): try 'generate'");
		return -1;
	}
	if (!*rest) {
		errorf("translate needs a text: translate TEXT");
		return -1;
	}
	int *src, n;
	if (encode(s, rest, &src, &n))
		return -1;
	if (n == 0 || n > c->n_ctx) {
		errorf(n ? "the text is %d tokens; the model's context holds %d" : "the text gave no tokens", n, c->n_ctx);
		free(src);
		return -1;
	}
	int *tgt = malloc(sizeof(int) * (size_t)(c->n_ctx + 1)), m = 0;
	gb_err derr;
	gb_fwd_opts o = { 0 };
	o.k = s->k;
	o.textbook_ln = s->textbook;
	interrupted = 0;
	int rc = gb_greedy_decode(&s->model, &o, src, n, &s->trace, tgt, &m, &interrupted, &derr);
	if (rc) {
		s->have_run = 0;
		errorf("%s", derr.msg);
	}
	if (!rc)
		rc = forward(s, src, n, tgt, m); /* the trace shows the whole translation */
	if (!rc) {
		s->on_show = 0; /* as after run: a view of the text before is not this text's */
		char *out = NULL;
		size_t len = 0;
		gb_err err;
		if (gb_tok_decode(s->model.tok, tgt + 1, m - 1, &out, &len, &err)) {
			errorf("%s", err.msg);
			rc = -1;
		} else {
			/* Bytes that are not whole UTF-8 characters are shown as \xNN, never raw. */
			for (size_t i = 0; i < len;) {
				int u = utf8_len((const unsigned char *)out + i, len - i);
				unsigned char ch = (unsigned char)out[i];
				if (!u || ch < 32 || ch == 127) {
					printf("\\x%02x", ch);
					i++;
				} else {
					fwrite(out + i, 1, (size_t)u, stdout);
					i += (size_t)u;
				}
			}
			putchar('\n');
			free(out);
			free(s->text);
			s->text = strdup(rest);
		}
	}
	free(src);
	free(tgt);
	return rc;
}
