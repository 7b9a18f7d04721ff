/* t_recipe_batch.c — the sequences tiny-lm's recipe trains on, drawn from a small hand-made
 * token stream: half begin with the end-of-text token and half with a document's first word
 * (as a typed sentence does); a repeated random run is scored from its second copy only,
 * with or without the token before it; ordinary sequences predict the next token of the
 * stream. */
#include <stdlib.h>

#include "model/train/recipe.h"
#include "tests/tap.h"

int main(void)
{
	gb_recipe r;
	gb_err err;
	if (!tap_ok(gb_recipe_preset(&r, "tiny-lm", &err) == 0, "the tiny-lm recipe")) {
		tap_diag("%s", err.msg);
		return 1;
	}
	int eot = r.cfg.eos_id, V = r.cfg.vocab, T = r.seq;
	/* A stream of documents of 3 to 10 words (ids 300 + position in the stream, so a wrong
	 * target is seen), each after an end-of-text token; the starts are the tokens. */
	gb_dataset d = { 0 };
	size_t cap = 20000;
	d.tok = malloc(sizeof(int) * cap);
	d.starts = malloc(sizeof(size_t) * cap);
	gb_rng g;
	gb_rng_seed(&g, 11);
	while (d.n_tok + 12 < cap) {
		d.starts[d.n_starts++] = d.n_tok;
		d.tok[d.n_tok++] = eot;
		for (int k = 3 + gb_rng_below(&g, 8); k > 0; k--, d.n_tok++)
			d.tok[d.n_tok] = 300 + (int)(d.n_tok % 1000);
	}
	d.n_starts--; /* the last document's start has no full sequence after it: keep the rest */

	gb_batch_buf buf = { 0 };
	gb_batch b;
	gb_rng rng;
	gb_rng_seed(&rng, 5);
	int seqs = 0, bare = 0, runs = 0, runs_bare = 0, bad_run = 0, bad_text = 0, scored_first = 0;
	for (int it = 0; it < 40; it++) {
		if (gb_recipe_batch(&r, &d, &rng, &buf, &b, &err)) {
			tap_ok(0, "a batch: %s", err.msg);
			break;
		}
		for (int i = 0; i < b.B; i++, seqs++) {
			const int *ids = b.ids + i * T, *tgt = b.tgt + i * T;
			int o = ids[0] == eot ? 1 : 0;
			bare += !o;
			/* A run repeated: find its period as the first t where ids repeat ids[o..]. */
			int len = 0;
			for (int p = 8; p <= 40 && !len; p++) {
				int same = 1;
				for (int t = o; t + p < T && same; t++)
					same = ids[t] == ids[t + p];
				if (same)
					len = p;
			}
			int is_run = len && ids[o] >= 256 && (ids[o] < 300 || ids[o] != ids[o + 1] - 1);
			if (is_run) {
				runs++;
				runs_bare += !o;
				for (int t = 0; t < T; t++) {
					int first = t + 1 < len + o; /* the token at t+1 is in the first copy */
					if (first && tgt[t] != -1)
						scored_first++;
					if (!first && (t + 1 >= T ? tgt[t] != ids[t + 1 - len] : tgt[t] != ids[t + 1]))
						bad_run++;
				}
				continue;
			}
			/* Ordinary text: each target is the next token of the stream. */
			for (int t = 0; t + 1 < T; t++)
				if (tgt[t] != -1 && tgt[t] != ids[t + 1] && ++bad_text < 4)
					tap_diag("sequence %d position %d: ids %d %d target %d", seqs, t, ids[t], ids[t + 1], tgt[t]);
			if (!o && (ids[0] < 300 || ids[0] >= V) && ++bad_text < 4)
				tap_diag("sequence %d begins with %d", seqs, ids[0]);
		}
	}
	double fb = (double)bare / seqs, fr = (double)runs / seqs;
	tap_ok(fb > 0.42 && fb < 0.58, "%d of %d sequences (%.3f) begin without the end-of-text token (half)", bare, seqs,
	       fb);
	tap_ok(fr > 0.08 && fr < 0.17, "%d sequences (%.3f) are repeated runs (the recipe's %.3f)", runs, fr,
	       r.induction_frac);
	tap_ok(runs_bare > runs / 4 && runs_bare < 3 * runs / 4, "%d of the %d runs begin without the token", runs_bare,
	       runs);
	tap_ok(scored_first == 0, "no token of a run's first copy is scored (%d were)", scored_first);
	tap_ok(bad_run == 0, "every later copy's target is the run's next token (%d differ)", bad_run);
	tap_ok(bad_text == 0, "ordinary sequences predict the stream's next token (%d differ)", bad_text);
	gb_batch_buf_free(&buf);
	free(d.tok);
	free(d.starts);
	printf("1..%d\n", tap_n);
	return tap_failed != 0;
}
