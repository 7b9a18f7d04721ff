/* t_world_tokens.c — tiny-lm's vocabulary has one token per word of its world: the tokenizer
 * the recipe trains (gb_recipe_data on the tiny-lm preset: the text and the vocabulary size
 * `glassbox train --preset tiny-lm` uses; 2 s) encodes every word gb_corpus_world_words lists, with
 * its leading space, as a single token; so does every word form the generated text writes
 * (capitalised at a sentence start, or at a document's start with no space before it),
 * collected from the text itself. Words from outside the world still split. When the shipped
 * model's tokenizer.json was trained by this recipe, it must be the same tokenizer. */
#include <ctype.h>
#include <string.h>
#include <time.h>

#include "model/tokenizer/tokenizer.h"
#include "model/train/corpus.h"
#include "model/train/recipe.h"
#include "tests/tap.h"

static int n_tokens(const gb_tokenizer *tok, const char *s)
{
	int *ids = NULL, n = -1;
	gb_err err;
	if (gb_tok_encode(tok, s, strlen(s), 0, &ids, &n, NULL, &err))
		return -1;
	free(ids);
	return n;
}

/* Every distinct run of letters in text, with the space (or the apostrophe of "'s") before it
 * when there is one, is encoded; *bad counts those that are not one token, first_bad names the
 * first. Returns how many distinct forms there were. */
static int each_form(const char *text, size_t len, const gb_tokenizer *tok, int *bad, char *first_bad, size_t cap)
{
	enum { MAXF = 4096 };
	static char seen[MAXF][32];
	int n = 0;
	for (size_t i = 0; i < len;) {
		if (!isalpha((unsigned char)text[i])) {
			i++;
			continue;
		}
		size_t a = i;
		if (a > 0 && text[a - 1] == '|') { /* <|endoftext|>, the special token */
			while (i < len && isalpha((unsigned char)text[i]))
				i++;
			continue;
		}
		while (i < len && isalpha((unsigned char)text[i]))
			i++;
		if (a > 0 && text[a - 1] == '\'') /* "'s": the possessive, a pre-token of its own */
			a--;
		else if (a > 0 && text[a - 1] == ' ')
			a--;
		char f[32];
		if (i - a >= sizeof f) { /* no word of the world is this long */
			if ((*bad)++ == 0)
				snprintf(first_bad, cap, "a word of %zu letters", i - a);
			continue;
		}
		memcpy(f, text + a, i - a);
		f[i - a] = 0;
		int k;
		for (k = 0; k < n; k++)
			if (!strcmp(seen[k], f))
				break;
		if (k < n)
			continue;
		if (n == MAXF) { /* the world has about 830 forms */
			if ((*bad)++ == 0)
				snprintf(first_bad, cap, "more than %d distinct forms", MAXF);
			continue;
		}
		strcpy(seen[n++], f);
		if (n_tokens(tok, f) != 1 && (*bad)++ == 0)
			snprintf(first_bad, cap, "'%s' is %d tokens", f, n_tokens(tok, f));
	}
	return n;
}

static const char **names;
static int n_names;

static int is_name(const char *w)
{
	for (int i = 0; i < n_names; i++)
		if (!strcmp(names[i], w))
			return 1;
	return 0;
}

int main(void)
{
	gb_err err;
	gb_recipe r;
	gb_tokenizer *tok = NULL;
	gb_dataset train, held;
	tap_plan(9);
	if (!tap_ok(!gb_recipe_preset(&r, "tiny-lm", &err), "the tiny-lm preset"))
		return 1;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int rc = gb_recipe_data(&r, NULL, 0, &tok, &train, &held, &err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (!tap_ok(!rc, "the recipe's text and tokenizer (%s)", rc ? err.msg : "ok"))
		return 1;
	tap_diag("the recipe's data: %.1f s, %zu training tokens, vocabulary %d",
	         t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) * 1e-9, train.n_tok, gb_tok_vocab_size(tok));
	tap_ok(gb_tok_vocab_size(tok) == r.cfg.vocab, "the tokenizer has the preset's %d tokens (got %d)", r.cfg.vocab,
	       gb_tok_vocab_size(tok));

	/* The word lists: " word" always; a name also bare, as a document starts ("Mary has a
	 * cat."). Which other words start a document ("The", "When") is read off the text below. */
	const char **w;
	int n_w, bad = 0, forms = 0;
	char first_bad[128] = "";
	const char **men, **women;
	int n_men, n_women;
	if (gb_corpus_world_words(GB_WC_ALL, &w, &n_w, &err) || gb_corpus_world_words(GB_WC_MALE, &men, &n_men, &err) ||
	    gb_corpus_world_words(GB_WC_FEMALE, &women, &n_women, &err))
		return 1;
	names = malloc(sizeof *names * (size_t)(n_men + n_women));
	memcpy(names, men, sizeof *names * (size_t)n_men);
	memcpy(names + n_men, women, sizeof *names * (size_t)n_women);
	n_names = n_men + n_women;
	free(men);
	free(women);
	for (int i = 0; i < n_w; i++) {
		char f[2][40];
		int nf = 1;
		if (!strcmp(w[i], "s"))
			snprintf(f[0], sizeof f[0], "'s");
		else
			snprintf(f[0], sizeof f[0], " %s", w[i]);
		if (is_name(w[i]))
			snprintf(f[nf++], sizeof f[1], "%s", w[i]);
		for (int k = 0; k < nf; k++, forms++) {
			int m = n_tokens(tok, f[k]);
			if (m != 1 && bad++ == 0)
				snprintf(first_bad, sizeof first_bad, "'%s' is %d tokens", f[k], m);
		}
	}
	tap_ok(n_w > 700 && bad == 0, "each of the %d forms of the world's %d words is one token%s%s", forms, n_w,
	       bad ? ": not so for " : "", first_bad);
	tap_diag("%d words (%d of them names), %d forms", n_w, n_names, forms);
	free(w);
	free(names);

	/* The forms the generated text writes, read off the text (training and held-out). */
	gb_world_opts o = { 0 };
	o.max_bytes = 2u << 20;
	o.delim = "<|endoftext|>";
	for (int h = 0; h < 2; h++) {
		char *text;
		size_t len;
		if (gb_corpus_world(&o, r.data_seed + h, h, &text, &len, &err))
			return 1;
		bad = 0;
		first_bad[0] = 0;
		int n = each_form(text, len, tok, &bad, first_bad, sizeof first_bad);
		tap_ok(n > 700 && bad == 0, "every word form in %s of %s text (%d forms) is one token%s%s",
		       "2 MB", h ? "held-out" : "training", n, bad ? ": not so for " : "", first_bad);
		free(text);
	}

	/* The sentence reads as words; a word from outside the world splits. */
	tap_ok(n_tokens(tok, "When Mary and John went to the park, John gave") == 11,
	       "'When Mary and John went to the park, John gave' is 11 tokens (got %d)",
	       n_tokens(tok, "When Mary and John went to the park, John gave"));
	tap_ok(n_tokens(tok, " Marybeth") > 1 && n_tokens(tok, " unbelievable") > 2 && n_tokens(tok, " glassbox") > 2,
	       "words outside the world split: Marybeth %d, unbelievable %d, glassbox %d tokens",
	       n_tokens(tok, " Marybeth"), n_tokens(tok, " unbelievable"), n_tokens(tok, " glassbox"));

	/* The shipped tokenizer, when it is this recipe's: the same merges give the same ids. */
	gb_tokenizer *shipped = NULL;
	if (gb_tok_load("assets/models/tiny-lm", &shipped, &err) || gb_tok_vocab_size(shipped) != r.cfg.vocab) {
		tap_ok(1, "the shipped tiny-lm is the same tokenizer # SKIP assets/models/tiny-lm is not this recipe's "
		          "(vocabulary %d)", shipped ? gb_tok_vocab_size(shipped) : -1);
	} else {
		const char *probe = "When Mary and John went to the park, John gave a ball to Mary. Marybeth's zebra.";
		int *a = NULL, *b = NULL, na = 0, nb = 0;
		int same = !gb_tok_encode(tok, probe, strlen(probe), 0, &a, &na, NULL, &err) &&
		       !gb_tok_encode(shipped, probe, strlen(probe), 0, &b, &nb, NULL, &err) && na == nb &&
		       !memcmp(a, b, sizeof *a * (size_t)na);
		/* every id names the same bytes */
		for (int id = 0; id < r.cfg.vocab && same; id++) {
			char *x = NULL, *y = NULL;
			size_t lx = 0, ly = 0;
			same = !gb_tok_decode(tok, &id, 1, &x, &lx, &err) && !gb_tok_decode(shipped, &id, 1, &y, &ly, &err) &&
			       lx == ly && !memcmp(x, y, lx);
			free(x);
			free(y);
		}
		/* and the whole held-out stream, token for token */
		int *c = NULL, nc = 0;
		char *dec = NULL;
		size_t dl = 0;
		if (same && !gb_tok_decode(tok, held.tok, (int)held.n_tok, &dec, &dl, &err) &&
		    !gb_tok_encode(shipped, dec, dl, GB_TOK_SPECIAL, &c, &nc, NULL, &err))
			same = (size_t)nc == held.n_tok && !memcmp(c, held.tok, sizeof *c * held.n_tok);
		else
			same = 0;
		tap_ok(same, "the shipped tiny-lm's tokenizer is the recipe's: each of the %d ids names the same bytes, "
		       "and the held-out text (%zu tokens) encodes to the same ids", r.cfg.vocab, held.n_tok);
		free(a);
		free(b);
		free(c);
		free(dec);
	}
	gb_tok_free(shipped);
	gb_tok_free(tok);
	gb_dataset_free(&train);
	gb_dataset_free(&held);
	return tap_failed != 0;
}
