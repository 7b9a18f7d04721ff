/* t_tokenizer.c — the byte-level BPE tokenizer: hand-worked merges, GPT-2's pre-tokenizer and
 * file layout (tests/fixtures/gpt2-mini, expected ids from GPT-2's own encoder.py), round
 * trips of arbitrary bytes, training, both file formats, and the error messages.
 * Run from the repository root (make check does); writes under tests/tmp/tok. */
#include <jansson.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "model/tokenizer/tokenizer.h"
#include "tests/tap.h"

#define TMP "tests/tmp/tok"
#define FIX "tests/fixtures/gpt2-mini"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;
static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 11);
}

/* ids of text as "a b c", for comparing with the expected list in one line */
static const char *enc_str(const gb_tokenizer *t, const void *text, size_t len, int flags)
{
	static char buf[4096];
	static gb_err err;
	int *ids, n;
	if (gb_tok_encode(t, text, len, flags, &ids, &n, NULL, &err))
		return err.msg;
	size_t k = 0;
	buf[0] = 0;
	for (int i = 0; i < n && k + 16 < sizeof buf; i++)
		k += (size_t)snprintf(buf + k, sizeof buf - k, i ? " %d" : "%d", ids[i]);
	free(ids);
	return buf;
}

static int same_ids(const char *got, const char *want, const char *what)
{
	int ok = tap_ok(!strcmp(got, want), "%s", what);
	if (!ok)
		tap_diag("  got  [%s]\n#   want [%s]", got, want);
	return ok;
}

/* decode(encode(x)) == x, with and without special-token matching */
static int round_trips(const gb_tokenizer *t, const void *x, size_t len)
{
	for (int flags = 0; flags <= GB_TOK_SPECIAL; flags += GB_TOK_SPECIAL) {
		int *ids, n;
		char *back;
		size_t blen;
		gb_err err;
		if (gb_tok_encode(t, x, len, flags, &ids, &n, NULL, &err))
			return 0;
		int ok = n <= (int)len && !gb_tok_decode(t, ids, n, &back, &blen, &err);
		free(ids);
		if (!ok)
			return 0;
		ok = blen == len && !memcmp(back, x, len) && back[len] == 0;
		free(back);
		if (!ok)
			return 0;
	}
	return 1;
}

/* Pre-tokens as "start:len ..." through the byte tokenizer's trace. */
static const char *words_str(const gb_tokenizer *t, const char *text)
{
	static char buf[1024];
	static gb_err err;
	int *ids, n;
	gb_tok_trace tr;
	if (gb_tok_encode(t, text, strlen(text), 0, &ids, &n, &tr, &err))
		return err.msg;
	size_t k = 0;
	buf[0] = 0;
	for (int i = 0; i < tr.n_words; i++)
		k += (size_t)snprintf(buf + k, sizeof buf - k, i ? " %zu:%zu" : "%zu:%zu",
		                      tr.words[i].start, tr.words[i].len);
	free(ids);
	gb_tok_trace_free(&tr);
	return buf;
}

/* Pseudo-English: syllable words with a skewed frequency, punctuation, digits, new lines. */
static char *make_text(size_t want, size_t *len)
{
	static const char *syl[] = { "th", "e", "an", "re", "in", "on", "at", "er", "st", "ing", "ou",
	                             "al", "ed", "is", "it", "or", "es", "ar", "en", "to", "of",
	                             "qu", "ly", "ch", "sh", "ph", "ex", "un", "pro", "con" };
	static const char *punct[] = { ", ", ". ", "; ", "! ", "? ", ".\n", ".\n\n", " (", ") ",
	                               " - ", "'s ", "'re ", ": " };
	char *s = malloc(want + 64);
	size_t k = 0;
	while (k < want) {
		uint32_t r = rnd();
		if (r % 11 == 0) {
			const char *p = punct[rnd() % 13];
			size_t l = strlen(p);
			memcpy(s + k, p, l);
			k += l;
		} else if (r % 37 == 1) {
			k += (size_t)sprintf(s + k, " %u", rnd() % 2000);
		} else {
			if (k && s[k - 1] != ' ' && s[k - 1] != '\n' && s[k - 1] != '(')
				s[k++] = ' ';
			/* few distinct words, picked with a skew, so pairs repeat as in real text */
			uint32_t w = rnd() % 400;
			w = w * w / 400 * 7919 % 3000;
			int n = 1 + (int)(w % 3);
			for (int i = 0; i < n; i++) {
				const char *y = syl[(w / (i + 1) + (uint32_t)i * 7) % 30];
				size_t l = strlen(y);
				memcpy(s + k, y, l);
				k += l;
			}
			if (w % 17 == 0)
				s[k - 1] = (char)(s[k - 1] - 32); /* some capitals */
		}
	}
	s[k] = 0;
	*len = k;
	return s;
}

static void test_bytes(void)
{
	gb_tokenizer *t;
	gb_err err;
	const char *sp[] = { "<|endoftext|>", "<pad>" };
	tap_ok(gb_tok_new_bytes(sp, 2, &t, &err) == 0, "byte tokenizer with two specials");
	tap_ok(gb_tok_vocab_size(t) == 258 && gb_tok_n_merges(t) == 0, "258 tokens, no merges");
	same_ids(enc_str(t, "hi\0!", 4, 0), "104 105 0 33", "bytes are their own ids, NUL included");
	tap_ok(gb_tok_special_id(t, "<|endoftext|>") == 256 && gb_tok_special_id(t, "<pad>") == 257 &&
	       gb_tok_special_id(t, "<s>") == -1 && gb_tok_special_id(t, "<pad") == -1,
	       "special ids by text; unknown text is -1");
	same_ids(enc_str(t, "a<pad>b", 7, 0), "97 60 112 97 100 62 98", "specials are raw bytes by default");
	same_ids(enc_str(t, "a<pad>b", 7, GB_TOK_SPECIAL), "97 257 98", "GB_TOK_SPECIAL matches them");
	same_ids(enc_str(t, "<|endoftext|><pad><pa", 21, GB_TOK_SPECIAL), "256 257 60 112 97",
	         "adjacent specials, then a prefix of one");

	int ids[] = { 97, 257, 98, 0, 256 };
	char *out;
	size_t len;
	tap_ok(gb_tok_decode(t, ids, 5, &out, &len, &err) == 0 && len == 21 &&
	       !memcmp(out, "a<pad>b\0<|endoftext|>", 21), "decode: specials to their text, NUL kept");
	free(out);
	int bad[] = { 97, 258 };
	tap_ok(gb_tok_decode(t, bad, 2, &out, &len, &err) == -1 && strstr(err.msg, "258") &&
	       strstr(err.msg, "outside"), "decode of id 258 fails: %s", err.msg);

	size_t pl;
	const unsigned char *p = gb_tok_piece_bytes(t, 256, &pl);
	tap_ok(p && pl == 13 && !memcmp(p, "<|endoftext|>", 13) && gb_tok_is_special(t, 256) &&
	       !gb_tok_is_special(t, 97), "piece bytes and is_special");
	tap_ok(!gb_tok_piece_bytes(t, 258, &pl) && !gb_tok_piece_bytes(t, -1, &pl), "no piece out of range");

	/* GPT-2's bytes_to_unicode: 0x20 -> U+0120 'Ġ', 0x0A -> U+010A 'Ċ', 0x00 -> U+0100 'Ā',
	 * 0x7F -> U+0121 'ġ', 0xAD (soft hyphen, the last unprintable byte) -> U+0143 'Ń',
	 * printable bytes stay. */
	char hf[16];
	struct { int b; const char *s; } m[] = { { ' ', "Ġ" }, { '\n', "Ċ" }, { 0, "Ā" }, { 0x7F, "ġ" },
	                                         { 0xAD, "Ń" }, { 'A', "A" }, { 0xFF, "ÿ" }, { 0xA0, "ł" } };
	int good = 0;
	for (int i = 0; i < 8; i++)
		good += gb_tok_piece_hf(t, m[i].b, hf, sizeof hf) == (int)strlen(m[i].s) && !strcmp(hf, m[i].s);
	tap_ok(good == 8, "Hugging Face spellings of 8 bytes (%d right)", good);
	gb_tok_free(t);

	const char *acc[] = { "<\xc3\xa9>" }; /* "<é>" */
	gb_tok_new_bytes(acc, 1, &t, &err);
	tap_ok(gb_tok_piece_hf(t, 256, hf, 3) == 4 && !strcmp(hf, "<") &&
	       gb_tok_piece_hf(t, 256, hf, 4) == 4 && !strcmp(hf, "<\xc3\xa9"),
	       "a special's spelling is cut at whole characters too");
	gb_tok_free(t);
}

/* Ids: bytes 0..255, then results in rank order.
 *   rank 0  b + c   -> 256 "bc"
 *   rank 1  a + b   -> 257 "ab"
 *   rank 2  a + bc  -> 258 "abc"
 *   rank 3  c + d   -> 259 "cd"
 *   rank 4  ab + cd -> 260 "abcd"   (never reached from "abcd": rank order decides first) */
static void test_hand(void)
{
	gb_tokenizer *t;
	gb_err err;
	int *ids, n;
	gb_tok_trace tr;
	const char *m[] = { "b", "c", "a", "b", "a", "bc", "c", "d", "ab", "cd" };
	tap_ok(gb_tok_from_merges(m, 5, NULL, 0, &t, &err) == 0 && gb_tok_vocab_size(t) == 261,
	       "hand-made tokenizer: 5 merges, 261 tokens");

	/* "abcd": pairs ab (1), bc (0), cd (3). Lowest rank first: bc at position 1 -> a bc d;
	 * then a+bc is rank 2 -> abc d; abc+d has no rank. Left to right would have said ab cd
	 * then abcd. */
	gb_tok_encode(t, "abcd", 4, 0, &ids, &n, &tr, &err);
	tap_ok(n == 2 && ids[0] == 258 && ids[1] == 'd', "\"abcd\" -> abc d (258 100), not abcd");
	tap_ok(tr.n_words == 1 && tr.n_steps == 2, "one word, two merges");
	gb_tok_step s0 = tr.steps[0], s1 = tr.steps[1];
	tap_ok(s0.word == 0 && s0.pos == 1 && s0.left == 'b' && s0.right == 'c' && s0.result == 256 &&
	       s0.rank == 0, "step 1: b+c at position 1, rank 0 -> 256");
	tap_ok(s1.word == 0 && s1.pos == 0 && s1.left == 'a' && s1.right == 256 && s1.result == 258 &&
	       s1.rank == 2, "step 2: a+bc at position 0, rank 2 -> 258");
	free(ids);
	gb_tok_trace_free(&tr);

	/* "abab": rank 1 (a+b) occurs twice; both merge, left to right: positions 0, then 1 */
	gb_tok_encode(t, "abab", 4, 0, &ids, &n, &tr, &err);
	tap_ok(n == 2 && ids[0] == 257 && ids[1] == 257 && tr.n_steps == 2 && tr.steps[0].pos == 0 &&
	       tr.steps[1].pos == 1 && tr.steps[1].rank == 1, "\"abab\" -> ab ab, merged at 0 then 1");
	free(ids);
	gb_tok_trace_free(&tr);

	/* "ab cd" is two words, "ab" and " cd"; " cd" has no rank for (space, c): c+d at 1 */
	gb_tok_encode(t, "ab cd", 5, 0, &ids, &n, &tr, &err);
	tap_ok(n == 3 && ids[0] == 257 && ids[1] == ' ' && ids[2] == 259, "\"ab cd\" -> 257 32 259");
	tap_ok(tr.n_words == 2 && tr.words[1].start == 2 && tr.words[1].len == 3 &&
	       tr.words[1].first == 1 && tr.words[1].n == 2 && tr.n_steps == 2 &&
	       tr.steps[1].word == 1 && tr.steps[1].pos == 1 && tr.steps[1].result == 259,
	       "word 2 is \" cd\" (bytes 2..4, ids 1..2), merged c+d at position 1");
	free(ids);
	gb_tok_trace_free(&tr);
	gb_tok_free(t);

	/* rank 0 a+a -> 256 "aa", rank 1 aa+aa -> 257 "aaaa". "aaaaa": every a+a of rank 0 first,
	 * left to right and not overlapping: aa aa a (positions 0, 1); then aa+aa: aaaa a. */
	const char *m2[] = { "a", "a", "aa", "aa" };
	gb_tok_from_merges(m2, 2, NULL, 0, &t, &err);
	gb_tok_encode(t, "aaaaa", 5, 0, &ids, &n, &tr, &err);
	tap_ok(n == 2 && ids[0] == 257 && ids[1] == 'a', "\"aaaaa\" -> aaaa a");
	tap_ok(tr.n_steps == 3 && tr.steps[0].pos == 0 && tr.steps[1].pos == 1 && tr.steps[2].pos == 0 &&
	       tr.steps[2].left == 256 && tr.steps[2].right == 256 && tr.steps[2].rank == 1,
	       "steps: a+a at 0, a+a at 1, aa+aa at 0");
	free(ids);
	gb_tok_trace_free(&tr);
	same_ids(enc_str(t, "aaa", 3, 0), "256 97", "\"aaa\" -> aa a (the first pair wins an overlap)");
	gb_tok_free(t);

	const char *m3[] = { "x", "yz" };
	tap_ok(gb_tok_from_merges(m3, 1, NULL, 0, &t, &err) == -1 && strstr(err.msg, "\"yz\"") &&
	       strstr(err.msg, "not a token"), "a merge of an unknown piece fails: %s", err.msg);
}

static void test_pretok(void)
{
	gb_tokenizer *t;
	gb_err err;
	gb_tok_new_bytes(NULL, 0, &t, &err);
	/* Hello | " world" | 's | " " (two spaces before a word: the first stands alone) |
	 * " end" | "\n\n" (trailing whitespace is one piece) */
	same_ids(words_str(t, "Hello world's  end\n\n"), "0:5 5:6 11:2 13:1 14:4 18:2",
	         "pre-tokens of \"Hello world's  end\\n\\n\"");
	same_ids(words_str(t, "I'm 42 ok?!"), "0:1 1:2 3:3 6:3 9:2", "I | 'm | \" 42\" | \" ok\" | ?!");
	same_ids(words_str(t, "x\n\ny"), "0:1 1:1 2:1 3:1", "x | \\n | \\n | y (a lone \\n before y)");
	same_ids(words_str(t, "''s don't"), "0:2 2:1 3:4 7:2", "'' | s | \" don\" | 't");
	same_ids(words_str(t, "caf\xc3\xa9 \xe2\x80\x94x"), "0:5 5:4 9:1",
	         "Unicode classes: \"café\" | \" —\" | x (é is a letter, the dash is not)");
	same_ids(words_str(t, "a\xff\xfe b"), "0:1 1:2 3:2",
	         "invalid UTF-8 is a piece of its own: a | \\xff\\xfe | \" b\"");
	same_ids(words_str(t, "a1b2 3\t\tc"), "0:1 1:1 2:1 3:1 4:2 6:1 7:1 8:1",
	         "letters and digits apart; \\t \\t before c (expected spans from the real regex)");
	gb_tok_free(t);
}

static void test_gpt2(void)
{
	gb_tokenizer *t, *v;
	gb_err err;
	/* GPT-2's tokenizer.json layout (ids 0..255 in bytes_to_unicode order, no model.type,
	 * empty affixes, <|endoftext|> in model.vocab and added_tokens) with 42 merges; the
	 * expected ids come from GPT-2's encoder.py with its real regex (the fixture's make.py
	 * writes the files and prints them). */
	if (!tap_ok(gb_tok_load(FIX, &t, &err) == 0, "load " FIX " (tokenizer.json)")) {
		tap_diag("%s", err.msg);
		return;
	}
	tap_ok(gb_tok_vocab_size(t) == 299 && gb_tok_n_merges(t) == 42, "299 tokens, 42 merges");
	tap_ok(gb_tok_byte_id(t, '!') == 0 && gb_tok_byte_id(t, 0) == 188 && gb_tok_byte_id(t, ' ') == 220 &&
	       gb_tok_byte_id(t, '\n') == 198 && gb_tok_byte_id(t, 0xAD) == 255,
	       "GPT-2's byte ids: ! 0, NUL 188, space 220, newline 198, 0xAD 255");
	size_t pl;
	const unsigned char *p = gb_tok_piece_bytes(t, 262, &pl);
	tap_ok(p && pl == 4 && !memcmp(p, " the", 4), "token 262 is \" the\"");
	char hf[8];
	tap_ok(gb_tok_piece_hf(t, 262, hf, sizeof hf) == 5 && !strcmp(hf, "\xc4\xa0the") &&
	       gb_tok_piece_hf(t, 262, hf, 3) == 5 && !strcmp(hf, "\xc4\xa0") &&
	       gb_tok_piece_hf(t, 262, hf, 2) == 5 && !strcmp(hf, "") &&
	       gb_tok_piece_hf(t, 298, hf, sizeof hf) == 13 && !strcmp(hf, "<|endof"),
	       "its spelling is \"Ġthe\" (5 bytes), cut at whole characters; specials as is");
	tap_ok(gb_tok_special_id(t, "<|endoftext|>") == 298, "<|endoftext|> is special, id 298");
	const char *s1 = "Hello world, the thing's on and off.";
	const char *e1 = "39 68 291 78 266 273 75 67 11 262 293 278 6 82 220 261 290 286 69 13";
	const char *s2 = "  then\n\n\nin the 1st ORDER of att";
	const char *e2 = "220 262 77 297 198 259 262 296 82 83 220 46 49 35 36 49 286 257 83 83";
	const char *s3 = "the cat sat on the mat", *e3 = "83 258 269 265 264 265 220 261 262 285 265";
	same_ids(enc_str(t, s1, strlen(s1), 0), e1, "GPT-2 encoder.py ids for sentence 1");
	same_ids(enc_str(t, s2, strlen(s2), 0), e2, "... sentence 2 (spaces, new lines, digits)");
	same_ids(enc_str(t, s3, strlen(s3), 0), e3, "... sentence 3");
	same_ids(enc_str(t, "<|endoftext|>", 13, 0), "27 91 268 67 78 69 83 68 87 83 91 29",
	         "<|endoftext|> as text without GB_TOK_SPECIAL");
	same_ids(enc_str(t, "x<|endoftext|>y", 15, GB_TOK_SPECIAL), "87 298 88", "... and with it");

	if (!tap_ok(gb_tok_load_vocab_merges(FIX "/vocab.json", FIX "/merges.txt", &v, &err) == 0,
	            "load vocab.json + merges.txt")) {
		tap_diag("%s", err.msg);
		gb_tok_free(t);
		return;
	}
	tap_ok(gb_tok_vocab_size(v) == 299 && gb_tok_n_merges(v) == 42 &&
	       gb_tok_special_id(v, "<|endoftext|>") == 298 && gb_tok_is_special(v, 298),
	       "same size; <|endoftext|> recognized as special (no merge makes it)");
	same_ids(enc_str(v, s1, strlen(s1), 0), e1, "same ids for sentence 1");
	same_ids(enc_str(v, s2, strlen(s2), 0), e2, "same ids for sentence 2");
	gb_tok_free(v);
	gb_tok_free(t);
}

static int replay_ok(const gb_tokenizer *t, const char *text)
{
	int *ids, n, ok = 1;
	gb_tok_trace tr;
	gb_err err;
	size_t len = strlen(text);
	if (gb_tok_encode(t, text, len, 0, &ids, &n, &tr, &err))
		return 0;
	/* every word as its bytes, then the steps in order; the pieces must end as the ids */
	int *pieces = malloc((len + 1) * sizeof *pieces), *wn = calloc((size_t)tr.n_words + 1, sizeof *wn);
	size_t *wo = calloc((size_t)tr.n_words + 1, sizeof *wo);
	for (int w = 0; w < tr.n_words; w++) {
		wo[w] = tr.words[w].start;
		wn[w] = (int)tr.words[w].len;
		for (size_t k = 0; k < tr.words[w].len; k++)
			pieces[wo[w] + k] = gb_tok_byte_id(t, (unsigned char)text[tr.words[w].start + k]);
	}
	for (int i = 0; i < tr.n_steps && ok; i++) {
		gb_tok_step s = tr.steps[i];
		int *p = pieces + wo[s.word];
		int l, r, res = gb_tok_merge(t, s.rank, &l, &r);
		ok = s.pos + 1 < wn[s.word] && p[s.pos] == s.left && p[s.pos + 1] == s.right &&
		     l == s.left && r == s.right && res == s.result;
		p[s.pos] = s.result;
		memmove(p + s.pos + 1, p + s.pos + 2, (size_t)(wn[s.word] - s.pos - 2) * sizeof *p);
		wn[s.word]--;
		if (i > 0 && tr.steps[i - 1].word == s.word && tr.steps[i - 1].rank > s.rank)
			ok = 0; /* within a word, ranks never go down */
	}
	for (int w = 0; w < tr.n_words && ok; w++)
		ok = wn[w] == tr.words[w].n &&
		     !memcmp(pieces + wo[w], ids + tr.words[w].first, (size_t)wn[w] * sizeof *ids);
	free(pieces);
	free(wn);
	free(wo);
	free(ids);
	gb_tok_trace_free(&tr);
	return ok;
}

static gb_tokenizer *trained; /* vocab 500 on 200 kB of pseudo-English, three specials */
static const char *sp3[] = { "<|endoftext|>", "<pad>", "</s>" };

static void test_train(void)
{
	gb_tokenizer *t;
	gb_err err;
	/* Words: "aaab" x1, " aaab" x2, " cd" x1. Pair counts: a+a 2+2*2 = 6, a+b 1+2 = 3,
	 * space+a 2, space+c 1, c+d 1 -> merge 0 is a+a (256). Then aa+a 3 and a+b 3 tie: the
	 * smaller pair (97, 98) < (256, 97) wins -> merge 1 a+b (257); then aa+ab 3 -> 258 "aaab";
	 * space+aaab 2 -> 259; space+c 1 and c+d 1 tie -> (32, 99) first -> 260 " c"; then
	 * " c"+d -> 261 " cd". After that every word is one token: 262 tokens. */
	const char *text = "aaab aaab aaab cd";
	const char *sp[] = { "<|endoftext|>" };
	tap_ok(gb_tok_train(text, strlen(text), 263, sp, 1, 0, &t, &err) == 0 &&
	       gb_tok_vocab_size(t) == 263 && gb_tok_n_merges(t) == 6, "train: 263 tokens, 6 merges");
	int want[6][3] = { { 97, 97, 256 }, { 97, 98, 257 }, { 256, 257, 258 },
	                   { 32, 258, 259 }, { 32, 99, 260 }, { 260, 100, 261 } };
	int good = 0;
	for (int r = 0; r < 6; r++) {
		int l, rr, res = gb_tok_merge(t, r, &l, &rr);
		good += l == want[r][0] && rr == want[r][1] && res == want[r][2];
	}
	tap_ok(good == 6, "the six merges, in order, as counted by hand (%d right)", good);
	tap_ok(gb_tok_special_id(t, "<|endoftext|>") == 262, "the special comes last: 262");
	same_ids(enc_str(t, "aaab aaab cd", 12, 0), "258 259 261", "encode with what was learned");
	gb_tok_free(t);

	tap_ok(gb_tok_train(text, strlen(text), 264, sp, 1, 0, &t, &err) == -1 &&
	       strstr(err.msg, "too small") && strstr(err.msg, "264"),
	       "one token more than the text allows fails: %s", err.msg);
	tap_ok(gb_tok_train(text, strlen(text), 264, sp, 1, GB_TOK_ALLOW_SMALLER, &t, &err) == 0 &&
	       gb_tok_vocab_size(t) == 263, "... unless GB_TOK_ALLOW_SMALLER: 263 tokens");
	gb_tok_free(t);

	/* Special tokens' text is cut out of the training text: inside three <|endoftext|>,
	 * e+n would count 3 and beat x+y (1). */
	const char *t2 = "<|endoftext|>xy<|endoftext|><|endoftext|>";
	int l, r;
	tap_ok(gb_tok_train(t2, strlen(t2), 258, sp, 1, 0, &t, &err) == 0 &&
	       gb_tok_merge(t, 0, &l, &r) == 256 && l == 'x' && r == 'y',
	       "specials are not learned from: the one merge is x+y");
	gb_tok_free(t);

	tap_ok(gb_tok_train(text, strlen(text), 256, sp, 1, 0, &t, &err) == -1 &&
	       strstr(err.msg, "at least 257"), "vocab_size 256 with a special fails: %s", err.msg);
	tap_ok(gb_tok_train("", 0, 300, NULL, 0, 0, &t, &err) == -1 && strstr(err.msg, "empty"),
	       "empty text fails: %s", err.msg);
	const char *dup[] = { "<s>", "<s>" };
	tap_ok(gb_tok_train(text, strlen(text), 300, dup, 2, 0, &t, &err) == -1 &&
	       strstr(err.msg, "twice"), "a special listed twice fails: %s", err.msg);
	const char *spelled[] = { "Ġaaab" };
	tap_ok(gb_tok_train(text, strlen(text), 261, spelled, 1, 0, &t, &err) == -1 &&
	       strstr(err.msg, "spelled like"), "a special spelled like a token fails: %s", err.msg);

	/* On 200 kB: the vocabulary has exactly the size asked, and merge 0 is the most frequent
	 * pair inside pre-tokens, counted here directly from the byte tokenizer's words. */
	size_t len;
	char *big = make_text(200000, &len);
	tap_ok(gb_tok_train(big, len, 500, sp3, 3, 0, &trained, &err) == 0 &&
	       gb_tok_vocab_size(trained) == 500 && gb_tok_special_id(trained, "</s>") == 499,
	       "train on %zu bytes: 500 tokens, specials at 497..499", len);
	gb_tokenizer *b;
	int *ids, n;
	gb_tok_trace tr;
	gb_tok_new_bytes(NULL, 0, &b, &err);
	gb_tok_encode(b, big, len, 0, &ids, &n, &tr, &err);
	long *cnt = calloc(65536, sizeof *cnt);
	for (int w = 0; w < tr.n_words; w++)
		for (size_t k = 0; k + 1 < tr.words[w].len; k++)
			cnt[(unsigned char)big[tr.words[w].start + k] * 256 +
			    (unsigned char)big[tr.words[w].start + k + 1]]++;
	int best = 0;
	for (int p = 1; p < 65536; p++)
		if (cnt[p] > cnt[best])
			best = p;
	int res = gb_tok_merge(trained, 0, &l, &r);
	tap_ok(l == best / 256 && r == best % 256 && res == 256,
	       "merge 0 is the most frequent pair (%d, %d), %ld times", best / 256, best % 256, cnt[best]);
	free(cnt);
	free(ids);
	gb_tok_trace_free(&tr);
	gb_tok_free(b);

	tap_ok(replay_ok(trained, "The quick thing's on, 1234 ingredients (prostate) - rested.\n\n") &&
	       replay_ok(trained, big + 1000) , "replaying the recorded merges gives the ids");
	free(big);
}

static void test_roundtrip(void)
{
	gb_tokenizer *b;
	gb_err err;
	gb_tok_new_bytes(sp3, 3, &b, &err);
	static const struct { const char *s; size_t n; const char *what; } fixed[] = {
		{ "", 0, "the empty string" },
		{ "\xff\xfe\xc3 \xc3\x28 \xe2\x82 \xed\xa0\x80", 13, "invalid UTF-8" },
		{ "\xf0\x9f\x98\x80 \xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd!", 14, "emoji" },
		{ "\x01\x02\x7f\t\r\n\x1b[0m\x0b\x0c", 12, "control characters" },
		{ "a\0b\0\0 \0", 7, "NUL bytes" },
		{ "<|endoftext|><pad></s><pad", 26, "special tokens' text" },
		{ "   \n\n  x  ", 10, "whitespace runs" },
	};
	for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
		tap_ok(round_trips(trained, fixed[i].s, fixed[i].n) && round_trips(b, fixed[i].s, fixed[i].n),
		       "round trip: %s", fixed[i].what);
	int *ids, n;
	tap_ok(gb_tok_encode(trained, "", 0, 0, &ids, &n, NULL, &err) == 0 && n == 0 && ids,
	       "the empty string is no ids");
	free(ids);

	unsigned char buf[256];
	int fails = 0, total = 0;
	for (int i = 0; i < 3000; i++) {
		size_t len = rnd() % 201;
		uint32_t mode = rnd() % 3;
		for (size_t k = 0; k < len; k++) /* all bytes, or mostly text, or few distinct bytes */
			buf[k] = (unsigned char)(mode == 0 ? rnd() : mode == 1 ? (uint32_t)(unsigned char)"ab ing\n'.\xc3\xa9th"[rnd() % 14] : rnd() % 4 * 64);
		fails += !round_trips(trained, buf, len) + !round_trips(b, buf, len);
		total += 2;
	}
	tap_ok(fails == 0, "%d random byte strings (lengths 0..200) round-trip (%d failures)", total, fails);
	gb_tok_free(b);
}

static void mkdirs(void)
{
	mkdir("tests/tmp", 0777);
	mkdir(TMP, 0777);
	mkdir(TMP "/json", 0777);
	mkdir(TMP "/vm", 0777);
	mkdir(TMP "/empty", 0777);
	mkdir(TMP "/gpt2", 0777);
}

static int same_tokenizer(const gb_tokenizer *a, const gb_tokenizer *b)
{
	if (gb_tok_vocab_size(a) != gb_tok_vocab_size(b) || gb_tok_n_merges(a) != gb_tok_n_merges(b))
		return 0;
	for (int i = 0; i < gb_tok_vocab_size(a); i++) {
		size_t la, lb;
		const unsigned char *pa = gb_tok_piece_bytes(a, i, &la), *pb = gb_tok_piece_bytes(b, i, &lb);
		if (la != lb || memcmp(pa, pb, la) || gb_tok_is_special(a, i) != gb_tok_is_special(b, i))
			return 0;
	}
	for (int r = 0; r < gb_tok_n_merges(a); r++) {
		int l1, r1, l2, r2;
		if (gb_tok_merge(a, r, &l1, &r1) != gb_tok_merge(b, r, &l2, &r2) || l1 != l2 || r1 != r2)
			return 0;
	}
	return 1;
}

static int same_encodings(const gb_tokenizer *a, const gb_tokenizer *b)
{
	static const char *texts[] = { "The quick thing's on, 1234 ingredients.\n\n", "xy<pad>z</s>",
	                               "\xf0\x9f\x98\x80\x00\xff tail  ", "" };
	for (int i = 0; i < 4; i++)
		for (int f = 0; f <= GB_TOK_SPECIAL; f += GB_TOK_SPECIAL) {
			char ea[4096];
			size_t len = i == 2 ? 13 : strlen(texts[i]);
			snprintf(ea, sizeof ea, "%s", enc_str(a, texts[i], len, f));
			if (strcmp(ea, enc_str(b, texts[i], len, f)))
				return 0;
		}
	return 1;
}

static json_t *load_jansson(const char *path)
{
	return json_load_file(path, 0, NULL);
}

/* Writes a copy of TMP/json/tokenizer.json changed by edit() to TMP/bad.json, loads it. */
static int load_edited(void (*edit)(json_t *), gb_err *err)
{
	json_t *j = load_jansson(TMP "/json/tokenizer.json");
	gb_tokenizer *t = NULL;
	edit(j);
	json_dump_file(j, TMP "/bad.json", 0);
	json_decref(j);
	int rc = gb_tok_load_json(TMP "/bad.json", &t, err);
	gb_tok_free(t);
	return rc;
}

static json_t *model_of(json_t *j) { return json_object_get(j, "model"); }
static void ed_pairs(json_t *j)
{
	json_t *m = json_object_get(model_of(j), "merges"), *x, *p;
	size_t i;
	json_array_foreach(m, i, x) {
		char *s = strdup(json_string_value(x)), *sp = strchr(s, ' ');
		*sp = 0;
		p = json_pack("[ss]", s, sp + 1);
		json_array_set_new(m, i, p);
		free(s);
	}
}
static void ed_unknown(json_t *j)
{
	json_array_append_new(json_object_get(model_of(j), "merges"), json_string("Q zzqz"));
}
static void ed_result(json_t *j)
{
	json_array_append_new(json_object_get(model_of(j), "merges"), json_string("Q Q"));
}
static void ed_dup(json_t *j)
{
	json_object_set_new(json_object_get(model_of(j), "vocab"), "Qdupe", json_integer(5));
}
static void ed_range(json_t *j)
{
	json_object_set_new(json_object_get(model_of(j), "vocab"), "Qbig", json_integer(99999999));
}
static void ed_gap(json_t *j)
{
	json_object_set_new(json_object_get(model_of(j), "vocab"), "Qgap", json_integer(510));
}
static void ed_notbytes(json_t *j)
{
	json_t *v = json_object_get(model_of(j), "vocab");
	json_object_set_new(v, "\xe2\x96\x81x", json_integer(500)); /* "▁x": SentencePiece style */
}
static void ed_nobyte(json_t *j)
{
	json_t *v = json_object_get(model_of(j), "vocab");
	json_object_del(v, "\xc4\x81"); /* "ā", byte 0x01 */
	json_object_set_new(v, "\xc4\x81\xc4\x81\xc4\x81", json_integer(1));
}
static void ed_sentencepiece(json_t *j)
{
	json_object_set_new(j, "pre_tokenizer", json_pack("{ss}", "type", "Whitespace"));
}
static void ed_merge_shape(json_t *j)
{
	json_array_append_new(json_object_get(model_of(j), "merges"), json_string("a  b"));
}

static void test_files(void)
{
	gb_tokenizer *t, *g;
	gb_err err;
	int nm = gb_tok_n_merges(trained); /* 241 unless two merges made the same token */
	char where[64];
	mkdirs();
	tap_ok(gb_tok_save_json(trained, TMP "/json/tokenizer.json", &err) == 0, "save tokenizer.json");
	tap_ok(gb_tok_load(TMP "/json", &t, &err) == 0, "load it back from the folder");
	tap_ok(same_tokenizer(trained, t), "same tokens, specials and merges");
	tap_ok(same_encodings(trained, t), "identical encodings");
	gb_tok_free(t);

	json_t *j = load_jansson(TMP "/json/tokenizer.json");
	json_t *m = model_of(j);
	tap_ok(j && !strcmp(json_string_value(json_object_get(m, "type")), "BPE") &&
	       json_array_size(json_object_get(m, "merges")) == (size_t)nm &&
	       json_is_string(json_array_get(json_object_get(m, "merges"), 0)) &&
	       json_integer_value(json_object_get(json_object_get(m, "vocab"), "\xc4\xa0")) == 32 &&
	       json_array_size(json_object_get(j, "added_tokens")) == 3 &&
	       !strcmp(json_string_value(json_object_get(json_object_get(j, "pre_tokenizer"), "type")),
	               "ByteLevel"),
	       "the file: BPE, %d \"a b\" merges, \"Ġ\" is 32, 3 added tokens, ByteLevel", nm);
	json_decref(j);
	tap_ok(!access(TMP "/json/tokenizer.json", R_OK), "written under its real name");

	tap_ok(load_edited(ed_pairs, &err) == 0, "merges as [\"a\", \"b\"] pairs load too");
	gb_tok_load_json(TMP "/bad.json", &t, &err);
	tap_ok(same_encodings(trained, t) && same_tokenizer(trained, t), "... and encode the same");
	gb_tok_free(t);

	tap_ok(gb_tok_save_vocab_merges(trained, TMP "/vm/vocab.json", TMP "/vm/merges.txt", &err) == 0,
	       "save vocab.json + merges.txt");
	FILE *f = fopen(TMP "/vm/merges.txt", "r");
	char line[256] = "";
	int lines = 0;
	if (f) {
		char l2[256];
		if (fgets(line, sizeof line, f))
			lines++;
		while (fgets(l2, sizeof l2, f))
			lines++;
		fclose(f);
	}
	tap_ok(!strcmp(line, "#version: 0.2\n") && lines == 1 + nm,
	       "merges.txt: #version line, then %d merges", nm);
	tap_ok(gb_tok_load(TMP "/vm", &t, &err) == 0 && same_tokenizer(trained, t) &&
	       same_encodings(trained, t), "load them back: the same tokenizer, specials found again");
	gb_tok_free(t);

	g = t = NULL;
	tap_ok(gb_tok_load(FIX, &g, &err) == 0 && gb_tok_save_json(g, TMP "/gpt2/tokenizer.json", &err) == 0 &&
	       gb_tok_load(TMP "/gpt2", &t, &err) == 0 && same_tokenizer(g, t) && same_encodings(g, t),
	       "GPT-2 layout: write and read back, ids unchanged");
	gb_tok_free(t);
	gb_tok_free(g);

	/* errors, each one line naming the file */
	f = fopen(TMP "/corrupt.json", "w");
	fputs("{\"model\": {\"vocab\": {\"a\": 1,}}", f);
	fclose(f);
	tap_ok(gb_tok_load_json(TMP "/corrupt.json", &t, &err) == -1 && strstr(err.msg, "corrupt.json") &&
	       strstr(err.msg, "invalid JSON") && strstr(err.msg, "line 1"), "corrupt JSON: %s", err.msg);
	snprintf(where, sizeof where, "model.merges[%d]", nm);
	tap_ok(load_edited(ed_unknown, &err) == -1 && strstr(err.msg, "unknown token") &&
	       strstr(err.msg, "zzqz") && strstr(err.msg, where), "unknown token in merges: %s", err.msg);
	tap_ok(load_edited(ed_result, &err) == -1 && strstr(err.msg, "\"QQ\"") &&
	       strstr(err.msg, "not in the vocabulary"), "merge result not in the vocabulary: %s", err.msg);
	tap_ok(load_edited(ed_dup, &err) == -1 && strstr(err.msg, "id 5 is given to both"),
	       "duplicate id: %s", err.msg);
	tap_ok(load_edited(ed_range, &err) == -1 && strstr(err.msg, "out of range"),
	       "id out of range: %s", err.msg);
	tap_ok(load_edited(ed_gap, &err) == -1 && strstr(err.msg, "no token has id 500"),
	       "a gap in the ids: %s", err.msg);
	tap_ok(load_edited(ed_notbytes, &err) == -1 && strstr(err.msg, "not byte-level") &&
	       strstr(err.msg, "U+2581"), "a token that is not byte-level: %s", err.msg);
	tap_ok(load_edited(ed_nobyte, &err) == -1 && strstr(err.msg, "byte 0x01"),
	       "a missing byte token: %s", err.msg);
	tap_ok(load_edited(ed_sentencepiece, &err) == -1 &&
	       strstr(err.msg, "pre_tokenizer Whitespace is not supported"),
	       "a pre-tokenizer glassbox does not implement: %s", err.msg);
	tap_ok(load_edited(ed_merge_shape, &err) == -1 && strstr(err.msg, where),
	       "a merge with two spaces: %s", err.msg);

	f = fopen(TMP "/vm/merges.txt", "a");
	fputs("a b c\n", f);
	fclose(f);
	snprintf(where, sizeof where, "merges.txt: line %d", nm + 2);
	tap_ok(gb_tok_load(TMP "/vm", &t, &err) == -1 && strstr(err.msg, where),
	       "a bad merges.txt line: %s", err.msg);
	f = fopen(TMP "/vm/merges.txt", "w");
	fputs("#version: 0.2\nQ zzqz\n", f);
	fclose(f);
	tap_ok(gb_tok_load(TMP "/vm", &t, &err) == -1 && strstr(err.msg, "merges.txt: line 2") &&
	       strstr(err.msg, "unknown token"), "an unknown token in merges.txt: %s", err.msg);
	tap_ok(gb_tok_load(TMP "/no-such-folder", &t, &err) == -1 && strstr(err.msg, "no-such-folder") &&
	       strstr(err.msg, "No such file"), "a missing folder: %s", err.msg);
	tap_ok(gb_tok_load(TMP "/empty", &t, &err) == -1 && strstr(err.msg, "no tokenizer"),
	       "a folder without a tokenizer: %s", err.msg);
}

static void test_speed(void)
{
	gb_err err;
	size_t len;
	char *text = make_text(2000000, &len);
	gb_tokenizer *t;
	double t0 = now();
	int rc = gb_tok_train(text, len, 1000, sp3, 3, 0, &t, &err);
	double dt = now() - t0;
	tap_ok(rc == 0 && gb_tok_vocab_size(t) == 1000 && dt < 10,
	       "train a 1000-token vocabulary on %.1f MB in %.3f s", len / 1e6, dt);
	const char *s = "The students typed a sentence at the prompt and watched the small model "
	                "process it, stage by stage: tokenization, embeddings and attention for "
	                "every head.";
	int *ids, n, reps = 2000;
	gb_tok_encode(t, s, strlen(s), 0, &ids, &n, NULL, &err);
	free(ids);
	t0 = now();
	for (int i = 0; i < reps; i++) {
		gb_tok_encode(t, s, strlen(s), 0, &ids, &n, NULL, &err);
		free(ids);
	}
	dt = (now() - t0) / reps;
	tap_ok(dt < 1e-3, "encode %zu bytes -> %d tokens in %.1f us", strlen(s), n, dt * 1e6);
	gb_tok_free(t);
	free(text);
}

int main(void)
{
	test_bytes();
	test_hand();
	test_pretok();
	test_gpt2();
	test_train();
	test_roundtrip();
	test_files();
	test_speed();
	gb_tok_free(trained);
	return tap_done();
}
