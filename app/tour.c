/* tour.c — the stops of the guided tour. The tour reads the trace through the same views as
 * the commands, so every stop can be revisited with its command (named in the heading). */
#include "app/tour.h"

#include <stdio.h>

#include "app/views.h"

/* The stops: 3 at the start, 6 per layer, 2 at the end. */
enum { START = 3, PER_LAYER = 6, END = 2 };

int tour_length(session *s)
{
	return s->loaded ? START + PER_LAYER * s->model.cfg.n_layer + END : 0;
}

gb_figure *tour_stop(session *s, int i, char *heading, size_t cap, const char **text)
{
	const gb_config *c = &s->model.cfg;
	int L = c->n_layer;
	if (i < START) {
		static const char *t[START] = {
			"The text is cut into tokens: common words are one token, rare words several pieces.\n"
			"Each token is a number (its id) the model looks up. The strip shows the ids.",
			"Each token id picks a row of the embedding matrix: a vector of numbers that the\n"
			"model learned so that tokens used alike point alike. One row per token here.",
			"Attention alone does not know the order of the tokens, so position information is\n"
			"added: sinusoidal waves of different frequencies, or learned vectors per position.",
		};
		static const char *h[START] = { "tokens (tokenize, show tokens)", "embeddings (embed)",
		                                "positions (pe)" };
		snprintf(heading, cap, "%s", h[i]);
		*text = t[i];
		return i == 0 ? view_tensor(s, c->encdec ? "enc.tokens" : "tokens", 0, NULL) : i == 1 ? view_embed(s, NULL)
		                                                                                     : view_pe(s, NULL, 0, NULL);
	}
	i -= START;
	if (i < PER_LAYER * L) {
		int l = i / PER_LAYER + 1, k = i % PER_LAYER;
		static const char *t[PER_LAYER] = {
			"Layer norm rescales each token's vector to mean 0 and variance 1 (then a learned gain\n"
			"and bias), so the next step sees numbers of a steady size.",
			"Each token's vector is turned into a query (what am I looking for?), a key (what do I\n"
			"offer?) and a value (what do I pass on?), separately for every head.",
			"Every query is compared with every key by a dot product, scaled by 1/sqrt(d_head).\n"
			"The causal mask sets the future to -inf: a token may only look back.",
			"A softmax over each row turns the scores into weights that sum to 1: how much each\n"
			"token takes from each earlier token's value. Bright cells are where it looks.",
			"The heads look at different things at once: some at the previous token, some at the\n"
			"first, some at a matching earlier word. Here are all the heads of this layer.",
			"The feed-forward network works on each token alone: widen, a nonlinearity, narrow.\n"
			"Its output is added to the residual stream, the running sum every layer writes to.",
		};
		static const char *h[PER_LAYER] = { "layer norm (ln %d)", "queries, keys, values (qkv %d 1)",
		                                    "scores (scores %d 1)", "attention weights (attn %d 1)",
		                                    "all heads (heads %d)", "feed-forward (ffn %d)" };
		char fmt[96];
		snprintf(fmt, sizeof fmt, "layer %d of %d: %s", l, L, h[k]);
		snprintf(heading, cap, fmt, l);
		*text = t[k];
		switch (k) {
		case 0: return view_ln(s, l, 1, NULL);
		case 1: return view_qkv(s, l, 1, NULL);
		case 2: return view_attention(s, "masked", l, 1);
		case 3: return view_attention(s, "weights", l, 1);
		case 4: return view_heads(s, l);
		default: return view_ffn(s, l, NULL);
		}
	}
	i -= PER_LAYER * L;
	if (i == 0) {
		snprintf(heading, cap, "the residual stream (resid)");
		*text = "Every sub-layer adds its output to the residual stream. Its length per token after each\n"
		        "sub-layer shows where the model writes the most.";
		return view_resid(s);
	}
	snprintf(heading, cap, "the next token (next)");
	*text = "The last vector is compared with every token's embedding (the output projection): one\n"
	        "score, a logit, per vocabulary entry. A softmax turns them into probabilities.";
	return view_next(s, 10, 1);
}
