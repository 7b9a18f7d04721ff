/* eval.c — see eval.h. Every probe is one forward pass over prompt + continuation; the
 * continuation's tokens are read off the logits at the positions before them. */
#include "model/train/eval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/decode.h"
#include "model/heads.h"
#include "model/tokenizer/tokenizer.h"

/* ids of bos + text; *n_pre gets how many come from bos + prefix (prefix_len bytes of text). */
static int encode_with_bos(const gb_model *m, const char *text, size_t len, int **ids, int *n, gb_err *err)
{
	int *t, nt;
	if (gb_tok_encode(m->tok, text, len, 0, &t, &nt, NULL, err))
		return -1;
	int b = m->cfg.bos_id >= 0;
	int *all = malloc(sizeof(int) * (size_t)(nt + b + 1));
	if (!all) {
		free(t);
		return gb_fail(err, "out of memory");
	}
	if (b)
		all[0] = m->cfg.bos_id;
	memcpy(all + b, t, sizeof(int) * (size_t)nt);
	free(t);
	*ids = all;
	*n = nt + b;
	return 0;
}

static double log_softmax_at(const float *row, int V, int id) { return row[id] - gb_logsumexp(row, V); }

/* Whether a token can follow a finished word: it starts with a byte that cannot continue
 * one (a space, punctuation, a newline), or it is a special token (the end of the text). */
static int ends_word(const gb_tokenizer *tok, int id)
{
	if (gb_tok_is_special(tok, id))
		return 1;
	size_t n;
	const unsigned char *b = gb_tok_piece_bytes(tok, id, &n);
	if (!b || !n)
		return 0;
	unsigned c = b[0];
	return !(c >= 0x80 || c == '\'' || c == '-' || (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z'));
}

/* log of the probability that the next token ends the word: the sum over the tokens that
 * can follow a finished word. */
static double log_word_end(const gb_tokenizer *tok, const float *row, int V)
{
	double mx = -INFINITY, s = 0;
	for (int v = 0; v < V; v++)
		if (ends_word(tok, v) && row[v] > mx)
			mx = row[v];
	if (mx == -INFINITY)
		return -INFINITY;
	for (int v = 0; v < V; v++)
		if (ends_word(tok, v))
			s += exp((double)row[v] - mx);
	return mx + log(s) - gb_logsumexp(row, V);
}

/* Runs prompt + cont; lp = sum of the continuation's token log-probabilities; *argmax_first
 * (may be NULL) = 1 when cont's first token is the argmax after the prompt. word: cont is a
 * whole word, so lp also counts the probability that the word ends there. Without it a word
 * that is a token-prefix of another (" sleep" of " sleep"+"s") would be credited with the
 * longer word's probability too. */
static int score(const gb_model *m, const gb_kernels *k, gb_trace *tr, const char *prompt, const char *cont,
                 int word, double *lp, int *argmax_first, gb_err *err)
{
	if (!m->tok)
		return gb_fail(err, "the model has no tokenizer");
	size_t lp_len = strlen(prompt), lc = strlen(cont);
	char *text = malloc(lp_len + lc + 1);
	memcpy(text, prompt, lp_len);
	memcpy(text + lp_len, cont, lc + 1);
	int *pre, np, *all, na;
	if (encode_with_bos(m, prompt, lp_len, &pre, &np, err)) {
		free(text);
		return -1;
	}
	int rc = encode_with_bos(m, text, lp_len + lc, &all, &na, err);
	free(text);
	if (rc) {
		free(pre);
		return -1;
	}
	/* Byte-level BPE cuts words at the space a continuation starts with, so the prompt's ids
	 * are a prefix of the whole text's; anything else would make the scores meaningless. */
	if (na <= np || memcmp(pre, all, sizeof(int) * (size_t)np)) {
		free(pre);
		free(all);
		return gb_fail(err, "the continuation \"%s\" does not tokenize apart from its prompt", cont);
	}
	int start = 0;
	if (na > m->cfg.n_ctx)
		start = na - m->cfg.n_ctx; /* keep the end: the part that decides */
	if (start >= np) {
		free(pre);
		free(all);
		return gb_fail(err, "the continuation alone is longer than the context");
	}
	gb_fwd_opts o = { 0 };
	o.k = k;
	rc = gb_forward(m, all + start, na - start, NULL, 0, tr, &o, err);
	if (!rc) {
		const gb_ttensor *lg = gb_trace_get(tr, "logits");
		int V = lg->shape[1];
		double sum = 0;
		for (int i = np; i < na; i++)
			sum += log_softmax_at(lg->data + (size_t)(i - 1 - start) * V, V, all[i]);
		if (word)
			sum += log_word_end(m->tok, lg->data + (size_t)(na - 1 - start) * V, V);
		*lp = sum;
		if (argmax_first) {
			const float *row = lg->data + (size_t)(np - 1 - start) * V;
			int best = 0;
			for (int v = 1; v < V; v++)
				if (row[v] > row[best])
					best = v;
			*argmax_first = best == all[np];
		}
	}
	free(pre);
	free(all);
	return rc;
}

int gb_eval_logprob(const gb_model *m, const gb_kernels *k, const char *prompt, const char *cont, double *lp,
                    gb_err *err)
{
	gb_trace tr = { 0 };
	int rc = score(m, k, &tr, prompt, cont, 0, lp, NULL, err);
	gb_trace_free(&tr);
	return rc;
}

int gb_eval_probes(const gb_model *m, const gb_kernels *k, const gb_probe_set *ps, int top1, gb_eval_result *r,
                   gb_err *err)
{
	memset(r, 0, sizeof *r);
	gb_trace tr = { 0 };
	int rc = 0;
	double margins = 0;
	for (int i = 0; i < ps->n && !rc; i++) {
		const gb_probe *p = &ps->p[i];
		double good, bad, worst = -INFINITY;
		int first;
		if ((rc = score(m, k, &tr, p->prompt, p->good, !top1, &good, &first, err)))
			break;
		for (int b = 0; b < p->n_bad && !rc; b++) {
			rc = score(m, k, &tr, p->prompt, p->bad[b], !top1, &bad, NULL, err);
			worst = fmax(worst, bad);
		}
		if (rc)
			break;
		r->n++;
		r->correct += top1 ? first : good > worst;
		margins += good - worst;
	}
	r->margin = r->n ? margins / r->n : 0;
	gb_trace_free(&tr);
	return rc;
}

int gb_translate(const gb_model *m, const gb_kernels *k, const char *src, char *out, size_t cap, gb_err *err)
{
	const gb_config *c = &m->cfg;
	if (!c->encdec || !m->tok)
		return gb_fail(err, "translation needs an encoder-decoder model with a tokenizer");
	int *s, ns;
	if (gb_tok_encode(m->tok, src, strlen(src), 0, &s, &ns, NULL, err))
		return -1;
	if (ns == 0 || ns > c->n_ctx) {
		free(s);
		return gb_fail(err, "the source is %d tokens; it must be 1 to %d", ns, c->n_ctx);
	}
	int *t = malloc(sizeof(int) * (size_t)c->n_ctx), nt = 0;
	gb_trace tr = { 0 };
	gb_fwd_opts o = { 0 };
	o.k = k;
	int rc = gb_greedy_decode(m, &o, s, ns, &tr, t, &nt, NULL, err);
	if (!rc) {
		char *text;
		size_t len;
		if ((rc = gb_tok_decode(m->tok, t + 1, nt - 1, &text, &len, err)) == 0) {
			snprintf(out, cap, "%.*s", (int)len, text);
			free(text);
		}
	}
	gb_trace_free(&tr);
	free(s);
	free(t);
	return rc;
}

int gb_eval_dates(const gb_model *m, const gb_kernels *k, const gb_date_pair *pairs, int n, gb_eval_result *r,
                  gb_err *err)
{
	memset(r, 0, sizeof *r);
	char out[64];
	for (int i = 0; i < n; i++) {
		if (gb_translate(m, k, pairs[i].src, out, sizeof out, err))
			return -1;
		r->n++;
		r->correct += !strcmp(out, pairs[i].dst);
	}
	return 0;
}

int gb_eval_model(const gb_model *m, const gb_kernels *k, int n, gb_probe_score *rows, int *n_rows, gb_err *err)
{
	*n_rows = 0;
	if (m->cfg.encdec) {
		gb_date_pair *p;
		gb_eval_result r;
		if (gb_corpus_dates(n, 77, 1, &p, err))
			return -1;
		int rc = gb_eval_dates(m, k, p, n, &r, err);
		free(p);
		if (rc)
			return -1;
		rows[(*n_rows)++] = (gb_probe_score){ "dates, exact match (held-out)", (double)r.correct / r.n, 0.98, r.n };
		return 0;
	}
	static const double bars[GB_PROBE_N_KINDS] = { 0.95, 0.95, 0.90, 0.90, 0.90 };
	static const char *names[GB_PROBE_N_KINDS] = { "agreement (held-out)", "pronoun gender (held-out)",
	                                                "indirect object (held-out)", "possession (held-out)",
	                                                "induction, top-1 (held-out)" };
	for (int kind = 0; kind < GB_PROBE_N_KINDS; kind++) {
		gb_probe_set ps;
		gb_eval_result r;
		if (gb_corpus_world_probe(&ps, kind, n, 77, 1, err))
			return -1;
		int rc = gb_eval_probes(m, k, &ps, kind == GB_PROBE_INDUCTION, &r, err);
		gb_probe_set_free(&ps);
		if (rc)
			return -1;
		rows[(*n_rows)++] = (gb_probe_score){ names[kind], (double)r.correct / r.n, bars[kind], r.n };
	}
	return 0;
}

int gb_eval_heads(const gb_model *m, const gb_kernels *k, gb_head_score *out, gb_err *err)
{
	const gb_config *c = &m->cfg;
	if (c->encdec || !m->tok)
		return gb_fail(err, "head scores need a decoder-only model with a tokenizer");
	gb_world_opts o = { 0 };
	o.max_docs = 40;
	o.delim = "\n";
	char *text;
	size_t len;
	if (gb_corpus_world(&o, 79, 1, &text, &len, err))
		return -1;
	/* Each line (a document) is one text, after the end-of-text token, as in training. */
	int *texts[40], lens[40], n = 0;
	char *line = text;
	while (n < 40 && *line) {
		char *nl = strchr(line, '\n');
		size_t ll = nl ? (size_t)(nl - line) : strlen(line);
		int *ids, ni;
		if (gb_tok_encode(m->tok, line, ll, 0, &ids, &ni, NULL, err) == 0) {
			if (ni + 1 <= c->n_ctx && ni > 2) {
				texts[n] = malloc(sizeof(int) * (size_t)(ni + 1));
				texts[n][0] = c->bos_id;
				memcpy(texts[n] + 1, ids, sizeof(int) * (size_t)ni);
				lens[n++] = ni + 1;
			}
			free(ids);
		}
		line = nl ? nl + 1 : line + ll;
	}
	free(text);
	int lo, hi;
	gb_head_run_tokens(m, &lo, &hi);
	int rc = gb_head_scores(m, k, (const int *const *)texts, lens, n, 24, 50, lo, hi, 5, out, err);
	for (int i = 0; i < n; i++)
		free(texts[i]);
	return rc;
}

int gb_eval_cross(const gb_model *m, const gb_kernels *k, float *out, gb_err *err)
{
	const gb_config *c = &m->cfg;
	gb_date_pair *p;
	enum { N = 50 };
	if (gb_corpus_dates(N, 78, 1, &p, err))
		return -1;
	int *src[N], *tgt[N], sl[N], tl[N];
	for (int i = 0; i < N; i++) {
		sl[i] = (int)strlen(p[i].src);
		tl[i] = (int)strlen(p[i].dst) + 1;
		src[i] = malloc(sizeof(int) * (size_t)sl[i]);
		tgt[i] = malloc(sizeof(int) * (size_t)tl[i]);
		for (int j = 0; j < sl[i]; j++)
			src[i][j] = (unsigned char)p[i].src[j];
		tgt[i][0] = c->dec_start_id;
		for (int j = 1; j < tl[i]; j++)
			tgt[i][j] = (unsigned char)p[i].dst[j - 1];
	}
	int rc = gb_cross_monotone(m, k, (const int *const *)src, sl, (const int *const *)tgt, tl, N, out, err);
	for (int i = 0; i < N; i++) {
		free(src[i]);
		free(tgt[i]);
	}
	free(p);
	return rc;
}
