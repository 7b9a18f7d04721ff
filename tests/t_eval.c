/* t_eval.c — the probe scorer against log-probabilities recomputed by hand from a forward
 * pass, on a small random model with a byte tokenizer. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/train/eval.h"
#include "model/tokenizer/tokenizer.h"
#include "tests/tap.h"

/* word: add log p(the next byte ends the word), the byte tokenizer's word-ending tokens
 * being every byte but letters, digits, ' and -, bytes >= 0x80, and the special token. */
static double manual_w(const gb_model *m, const char *prompt, const char *cont, int word)
{
	/* bos, then one id per byte (the byte tokenizer). */
	int n = 1 + (int)strlen(prompt) + (int)strlen(cont), ids[128], np = 1 + (int)strlen(prompt);
	ids[0] = m->cfg.bos_id;
	for (int i = 1; i < n; i++)
		ids[i] = (unsigned char)(i < np ? prompt[i - 1] : cont[i - np]);
	gb_trace tr = { 0 };
	gb_err err;
	gb_fwd_opts o = { 0 };
	o.k = gb_kernels_ref();
	gb_forward(m, ids, n, NULL, 0, &tr, &o, &err);
	const gb_ttensor *lg = gb_trace_get(&tr, "logits");
	int V = lg->shape[1];
	double lp = 0;
	for (int i = np; i < n; i++) {
		const float *row = lg->data + (size_t)(i - 1) * V;
		double z = 0;
		for (int v = 0; v < V; v++)
			z += exp(row[v]);
		lp += row[ids[i]] - log(z);
	}
	if (word) {
		const float *row = lg->data + (size_t)(n - 1) * V;
		double z = 0, e = 0;
		for (int v = 0; v < V; v++) {
			z += exp(row[v]);
			int letter = (v >= 'a' && v <= 'z') || (v >= 'A' && v <= 'Z') || (v >= '0' && v <= '9') ||
			             v == '\'' || v == '-' || (v >= 0x80 && v < 256);
			if (!letter)
				e += exp(row[v]);
		}
		lp += log(e / z);
	}
	gb_trace_free(&tr);
	return lp;
}

static double manual(const gb_model *m, const char *prompt, const char *cont) { return manual_w(m, prompt, cont, 0); }

int main(void)
{
	gb_config c;
	gb_config_defaults(&c, GB_FAM_GPT2);
	c.d_model = 16, c.n_layer = 1, c.n_head = c.n_kv_head = 2, c.d_head = 8, c.d_ffn = 32, c.vocab = 257, c.n_ctx = 64;
	c.bos_id = 256;
	gb_model m;
	gb_err err;
	gb_model_init(&m, &c, 3, 0.5f, &err);
	const char *sp = "<|endoftext|>";
	gb_tok_new_bytes(&sp, 1, &m.tok, &err);

	double lp;
	int rc = gb_eval_logprob(&m, gb_kernels_ref(), "the cat", " sat", &lp, &err);
	tap_ok(rc == 0, "log p(continuation) computed");
	tap_near(lp, manual(&m, "the cat", " sat"), 1e-6, "log p(\" sat\" | \"the cat\") equals the sum recomputed by hand");

	/* A probe set of four: each is right when its good word is more probable than its bad
	 * one, a word's probability counting that it ends there (" sleep" is not credited with
	 * " sleeps"). */
	const char *prompts[4] = { "ab", "the keys", "Mary and John", "the dog" };
	const char *goods[4] = { "c", " are", " Mary", " sleeps" }, *bads[4] = { "d", " is", " John", " sleep" };
	gb_probe p[4];
	memset(p, 0, sizeof p);
	int want = 0;
	for (int i = 0; i < 4; i++) {
		p[i].prompt = (char *)prompts[i];
		p[i].good = (char *)goods[i];
		p[i].bad[0] = (char *)bads[i];
		p[i].n_bad = 1;
		want += manual_w(&m, prompts[i], goods[i], 1) > manual_w(&m, prompts[i], bads[i], 1);
	}
	gb_probe_set ps = { GB_PROBE_AGREEMENT, 4, p };
	gb_eval_result r;
	rc = gb_eval_probes(&m, gb_kernels_ref(), &ps, 0, &r, &err);
	tap_ok(rc == 0 && r.n == 4 && r.correct == want, "probes: %d of 4 right, as recomputed by hand (%d)", r.correct, want);
	double mg = 0;
	for (int i = 0; i < 4; i++)
		mg += manual_w(&m, prompts[i], goods[i], 1) - manual_w(&m, prompts[i], bads[i], 1);
	tap_near(r.margin, mg / 4, 1e-6, "the mean margin is the hand-computed word-level one (%.4f)", mg / 4);

	/* top-1: the good continuation's first token must be the argmax after the prompt. */
	int ids[4] = { 256, 'a', 'b' };
	gb_trace tr = { 0 };
	gb_fwd_opts o = { 0 };
	o.k = gb_kernels_ref();
	gb_forward(&m, ids, 3, NULL, 0, &tr, &o, &err);
	const gb_ttensor *lg = gb_trace_get(&tr, "logits");
	int best = 0;
	for (int v = 1; v < 257; v++)
		if (lg->data[2 * 257 + v] > lg->data[2 * 257 + best])
			best = v;
	char good[2] = { (char)best, 0 }, bad[2] = { (char)(best == 'x' ? 'y' : 'x'), 0 };
	gb_probe q = { 0 };
	q.prompt = "ab";
	q.good = good;
	q.bad[0] = bad;
	q.n_bad = 1;
	gb_probe_set one = { GB_PROBE_INDUCTION, 1, &q };
	rc = gb_eval_probes(&m, gb_kernels_ref(), &one, 1, &r, &err);
	tap_ok(best != 0 && rc == 0 && r.correct == 1, "top-1: the argmax continuation (byte %d) counts as right", best);
	q.good = bad;
	q.bad[0] = good;
	rc = gb_eval_probes(&m, gb_kernels_ref(), &one, 1, &r, &err);
	tap_ok(rc == 0 && r.n == 1 && r.correct == 0, "top-1: any other continuation counts as wrong");
	gb_trace_free(&tr);
	gb_model_free(&m);
	return tap_done();
}
