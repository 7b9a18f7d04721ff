/* t_heads.c — the head detector on heads built by hand: a previous-token head whose weights
 * are set so that q_i . k_j is large exactly when j = i - 1, and a model whose attention is
 * uniform (all scores equal), where every score has a value worked out by hand. */
#include <math.h>
#include <string.h>

#include "model/heads.h"
#include "tests/tap.h"

/* gpt2 family, 1 layer, 1 head of 8, d_model 16, 8 learned positions in features 8..15,
 * token embeddings 0: the layer sees only positions. */
static int build(gb_model *m, float alpha)
{
	gb_config c;
	gb_config_defaults(&c, GB_FAM_GPT2);
	c.d_model = 16, c.n_layer = 1, c.n_head = c.n_kv_head = 1, c.d_head = 8, c.d_ffn = 8, c.vocab = 10, c.n_ctx = 8;
	gb_err err;
	if (gb_model_init(m, &c, 1, 0.0f, &err))
		return -1;
	float *wpe = gb_model_param(m, "wpe.weight")->data;          /* (8, 16) */
	float *qkv = gb_model_param(m, "h.0.attn.c_attn.weight")->data; /* (16, 24): q | k | v */
	for (int i = 0; i < 8; i++)
		wpe[i * 16 + 8 + i] = 1;
	for (int i = 0; i < 8; i++) {
		qkv[(8 + i) * 24 + i] = alpha;            /* q_i = alpha e_i */
		if (i + 1 < 8)
			qkv[(8 + i) * 24 + 8 + i + 1] = alpha; /* k_j = alpha e_(j+1) */
	}
	return 0;
}

int main(void)
{
	gb_model m;
	gb_err err;
	gb_head_score sc;
	int text[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	const int *texts[1] = { text };
	int lens[1] = { 8 };

	if (!tap_ok(build(&m, 6.0f) == 0, "a hand-built previous-token head"))
		return tap_done();
	int rc = gb_head_scores(&m, gb_kernels_ref(), texts, lens, 1, 3, 4, 1, 10, 7, &sc, &err);
	tap_ok(rc == 0, "head scores computed");
	tap_ok(sc.prev > 0.9, "its previous-token score is high (%.3f > 0.9)", sc.prev);
	tap_ok(sc.prev_rand > 0.9, "and on the random repeated runs too (%.3f > 0.9)", sc.prev_rand);
	/* Only row 0 can attend to itself (it sees nothing else): self = 1/8. Only row 1's previous
	 * token is the first token: first = 1/7. */
	tap_near(sc.self, 1.0 / 8, 0.01, "its self score is 1/8: only position 0 looks at itself");
	tap_near(sc.first, 1.0 / 7, 0.01, "its first-token score is 1/7: only position 1 looks at position 0");
	gb_model_free(&m);

	/* alpha 0: all scores 0, so row i spreads 1/(i+1) over positions 0..i. For T = 8:
	 * prev = first = mean over i = 1..7 of 1/(i+1); self = mean over i = 0..7 of 1/(i+1).
	 * Induction: run 3 after no bos (gpt2 here has none), T = 6; queries 3 and 4 (i = 0, 1)
	 * look at keys 1 and 2 with weight 1/4 and 1/5. */
	build(&m, 0.0f);
	rc = gb_head_scores(&m, gb_kernels_ref(), texts, lens, 1, 3, 4, 1, 10, 7, &sc, &err);
	double h = 0, h0 = 1;
	for (int i = 1; i < 8; i++)
		h += 1.0 / (i + 1);
	tap_near(sc.prev, h / 7, 1e-6, "uniform attention: previous-token score = mean of 1/(i+1), i = 1..7");
	tap_near(sc.first, h / 7, 1e-6, "uniform attention: first-token score is the same");
	tap_near(sc.self, (h + h0) / 8, 1e-6, "uniform attention: self score = mean of 1/(i+1), i = 0..7");
	tap_near(sc.induction, (1.0 / 4 + 1.0 / 5) / 2, 1e-6, "uniform attention: induction score = (1/4 + 1/5) / 2");
	/* the runs: T = 6, rows 1..5 give 1/2 .. 1/6 to their previous token */
	tap_near(sc.prev_rand, (1.0 / 2 + 1.0 / 3 + 1.0 / 4 + 1.0 / 5 + 1.0 / 6) / 5, 1e-6,
	         "uniform attention: previous-token score on the runs = mean of 1/(i+1), i = 1..5");
	gb_model_free(&m);
	return tap_done();
}
