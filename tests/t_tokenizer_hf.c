/* t_tokenizer_hf.c — tokenizer.json's steps beyond GPT-2: every unsupported step or option
 * refused with a one-line error naming it; regex Split (Llama 3's pattern) and its behaviours,
 * Digits, ByteLevel without its regex; SentencePiece-style BPE (Prepend/Replace normalizer,
 * byte fallback, unk, the Replace/ByteFallback/Fuse/Strip decoder, Metaspace); added tokens
 * with lstrip/rstrip; the post-processor template; ignore_merges. Small hand-written
 * tokenizer.json files, expected ids and pieces worked out by hand.
 * Run from the repository root (make check does); writes under a mktemp -d directory. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/tokenizer/tokenizer.h"
#include "tests/tap.h"

static char dir[64], path[128];

/* A SentencePiece-style file: the vocabulary spelled as text, "▁" for a space. */
static const char sp_base[] =
	"{\"version\": \"1.0\", \"truncation\": null, \"padding\": null,"
	" \"added_tokens\": [{\"id\": 0, \"content\": \"<unk>\", \"single_word\": false, \"lstrip\": false,"
	"   \"rstrip\": false, \"normalized\": false, \"special\": true},"
	"  {\"id\": 1, \"content\": \"<s>\", \"single_word\": false, \"lstrip\": false,"
	"   \"rstrip\": false, \"normalized\": false, \"special\": true}],"
	" \"normalizer\": {\"type\": \"Sequence\", \"normalizers\": ["
	"   {\"type\": \"Prepend\", \"prepend\": \"\xe2\x96\x81\"},"
	"   {\"type\": \"Replace\", \"pattern\": {\"String\": \" \"}, \"content\": \"\xe2\x96\x81\"}]},"
	" \"pre_tokenizer\": null,"
	" \"post_processor\": {\"type\": \"TemplateProcessing\","
	"   \"single\": [{\"SpecialToken\": {\"id\": \"<s>\", \"type_id\": 0}}, {\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}],"
	"   \"pair\": [], \"special_tokens\": {\"<s>\": {\"id\": \"<s>\", \"ids\": [1], \"tokens\": [\"<s>\"]}}},"
	" \"decoder\": {\"type\": \"Sequence\", \"decoders\": ["
	"   {\"type\": \"Replace\", \"pattern\": {\"String\": \"\xe2\x96\x81\"}, \"content\": \" \"},"
	"   {\"type\": \"ByteFallback\"}, {\"type\": \"Fuse\"},"
	"   {\"type\": \"Strip\", \"content\": \" \", \"start\": 1, \"stop\": 0}]},"
	" \"model\": {\"type\": \"BPE\", \"dropout\": null, \"unk_token\": \"<unk>\","
	"   \"continuing_subword_prefix\": null, \"end_of_word_suffix\": null, \"fuse_unk\": true,"
	"   \"byte_fallback\": false,"
	"   \"vocab\": {\"<unk>\": 0, \"<s>\": 1, \"a\": 2, \"b\": 3, \"ab\": 4, \"\xe2\x96\x81\": 5,"
	"             \"\xe2\x96\x81" "ab\": 6, \"c\": 7, \"ba\": 8},"
	"   \"merges\": [\"a b\", \"\xe2\x96\x81 ab\", [\"b\", \"a\"]]}}";

/* Loads base with root[key] (or model[key] for "model.KEY", or added_tokens[0][KEY] for
 * "added.KEY") replaced by the JSON value val (NULL: removed). */
static int load_with(const char *base, const char *key, const char *val, gb_tokenizer **t,
                     gb_err *err)
{
	json_t *root = json_loads(base, 0, NULL), *obj = root;
	*t = NULL;
	if (!root)
		return tap_ok(0, "the base fixture parses"), -2;
	if (key && !strncmp(key, "model.", 6))
		obj = json_object_get(root, "model"), key += 6;
	else if (key && !strncmp(key, "added.", 6))
		obj = json_array_get(json_object_get(root, "added_tokens"), 0), key += 6;
	if (key && val)
		json_object_set_new(obj, key, json_loads(val, JSON_DECODE_ANY, NULL));
	else if (key)
		json_object_del(obj, key);
	json_dump_file(root, path, 0);
	json_decref(root);
	return gb_tok_load_json(path, t, err);
}

/* ids as "a b c" */
static const char *ids_str(const gb_tokenizer *t, const char *s, size_t len, int flags)
{
	static char buf[2048];
	static gb_err err;
	int *ids, n;
	if (gb_tok_encode(t, s, len, flags, &ids, &n, NULL, &err))
		return err.msg;
	size_t k = 0;
	buf[0] = 0;
	for (int i = 0; i < n && k + 16 < sizeof buf; i++)
		k += (size_t)snprintf(buf + k, sizeof buf - k, i ? " %d" : "%d", ids[i]);
	free(ids);
	return buf;
}

/* pieces of the trace as "text|text|..." (the normalized text's spans) */
static const char *words(const gb_tokenizer *t, const char *s)
{
	static char buf[2048];
	static gb_err err;
	int *ids, n;
	gb_tok_trace tr;
	if (gb_tok_encode(t, s, strlen(s), 0, &ids, &n, &tr, &err))
		return err.msg;
	size_t k = 0;
	buf[0] = 0;
	for (int i = 0; i < tr.n_words; i++)
		k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%.*s", i ? "|" : "",
		                      (int)tr.words[i].len, tr.text + tr.words[i].start);
	free(ids);
	gb_tok_trace_free(&tr);
	return buf;
}

static void same(const char *got, const char *want, const char *what)
{
	if (!tap_ok(!strcmp(got, want), "%s", what))
		tap_diag("  got  [%s]\n#   want [%s]", got, want);
}

static const char *dec_str(const gb_tokenizer *t, const int *ids, int n)
{
	static char buf[512];
	char *s;
	size_t len;
	gb_err err;
	if (gb_tok_decode(t, ids, n, &s, &len, &err))
		return "(error)";
	snprintf(buf, sizeof buf, "%s", s);
	free(s);
	return buf;
}

static void test_refused(void)
{
	static const struct { const char *key, *val, *want; } cases[] = {
		{ "normalizer", "{\"type\": \"Lowercase\"}", "normalizer Lowercase is not supported" },
		{ "normalizer", "{\"type\": \"Replace\", \"pattern\": {\"Regex\": \" +\"}, \"content\": \"_\"}",
		  "normalizer Replace with a Regex pattern is not supported" },
		{ "normalizer", "{\"type\": \"Prepend\", \"prepend\": \"x\", \"when\": 1}",
		  "normalizer Prepend: option \"when\" is not supported" },
		{ "pre_tokenizer", "{\"type\": \"Whitespace\"}", "pre_tokenizer Whitespace is not supported" },
		{ "pre_tokenizer", "{\"type\": \"Split\", \"pattern\": {\"Regex\": \"a\"}, \"behavior\": \"Sideways\", \"invert\": false}",
		  "pre_tokenizer Split: behavior Sideways is not supported" },
		{ "pre_tokenizer", "{\"type\": \"Split\", \"pattern\": {\"Regex\": \"(a\"}, \"behavior\": \"Isolated\", \"invert\": false}",
		  "pre_tokenizer Split: the pattern does not compile" },
		{ "pre_tokenizer", "{\"type\": \"Metaspace\", \"replacement\": \"_\", \"prepend_scheme\": \"always\", \"split\": true}",
		  "pre_tokenizer Metaspace with split true is not supported" },
		{ "pre_tokenizer", "{\"type\": \"ByteLevel\", \"add_prefix_space\": true, \"use_regex\": true}",
		  "pre_tokenizer ByteLevel with add_prefix_space true is not supported" },
		{ "pre_tokenizer", "{\"type\": \"Digits\", \"individual_digits\": \"yes\"}",
		  "\"individual_digits\" is not true or false" },
		{ "model.type", "\"WordPiece\"", "model.type is \"WordPiece\"" },
		{ "model.dropout", "0.1", "model.dropout is not supported" },
		{ "model.continuing_subword_prefix", "\"##\"", "model.continuing_subword_prefix \"##\" is not supported" },
		{ "model.cache_capacity", "10", "model BPE: option \"cache_capacity\" is not supported" },
		{ "model.unk_token", "\"<nope>\"", "model.unk_token \"<nope>\" is not in the vocabulary" },
		{ "model.byte_fallback", "true", "model.byte_fallback is true but <0x00> is not in the vocabulary" },
		{ "decoder", "{\"type\": \"WordPiece\", \"prefix\": \"##\"}", "decoder WordPiece is not supported" },
		{ "decoder", "{\"type\": \"Strip\", \"content\": \" \", \"start\": 1, \"stop\": 0}",
		  "decoder Strip is supported only as Strip(\" \", start N, stop 0) after Fuse" },
		{ "post_processor", "{\"type\": \"RobertaProcessing\"}", "post_processor RobertaProcessing is not supported" },
		{ "post_processor", "{\"type\": \"TemplateProcessing\", \"single\": [], \"pair\": [], \"special_tokens\": {}}",
		  "TemplateProcessing: single has no $A" },
		{ "truncation", "{\"max_length\": 8}", "truncation is set" },
		{ "padding", "{\"strategy\": \"BatchLongest\"}", "padding is set" },
		{ "added.single_word", "true", "added_tokens[0]: single_word true is not supported" },
		{ "added.normalized", "true", "added_tokens[0]: normalized true with a normalizer is not supported" },
		{ "added.colour", "true", "added_tokens[0]: option \"colour\" is not supported" },
		{ "extra_steps", "[]", "\"extra_steps\" is not supported" },
		{ "pre_tokenizer", "{\"type\": \"Sequence\", \"pretokenizers\": 5}",
		  "pre_tokenizer Sequence: \"pretokenizers\" is not a list" },
		{ "decoder", "{\"type\": \"Sequence\", \"decoders\": [{\"type\": \"Fuse\"}, {\"type\": \"Strip\", \"content\": \" \", \"start\": \"1\", \"stop\": 0}]}",
		  "decoder Strip is supported only as" },
	};
	gb_tokenizer *t;
	gb_err err;
	tap_ok(load_with(sp_base, NULL, NULL, &t, &err) == 0, "the SentencePiece-style fixture loads");
	gb_tok_free(t);
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		int rc = load_with(sp_base, cases[i].key, cases[i].val, &t, &err);
		tap_ok(rc == -1 && strstr(err.msg, cases[i].want) && strstr(err.msg, "tokenizer.json") &&
		       !strchr(err.msg, '\n'), "refused, one line: %s", rc ? err.msg : "(loaded!)");
		gb_tok_free(t);
	}
}

static void test_sentencepiece(void)
{
	gb_tokenizer *t;
	gb_err err;
	if (load_with(sp_base, NULL, NULL, &t, &err))
		return (void)tap_ok(0, "load: %s", err.msg);
	tap_ok(gb_tok_charlevel(t) == 1, "no ByteLevel step: a vocabulary of characters");
	/* "ab ab" -> "▁ab▁ab" -> ▁ a b ▁ a b; rank 0 (a b) twice -> ▁ ab ▁ ab; rank 1 (▁ ab) -> ▁ab ▁ab */
	same(ids_str(t, "ab ab", 5, 0), "6 6", "\"ab ab\": Prepend + Replace, then a+b and ▁+ab: 6 6");
	same(words(t, "ab ab"), "\xe2\x96\x81" "ab\xe2\x96\x81" "ab",
	     "no pre-tokenizer: the whole normalized text is one piece");
	/* "abcc ba": ▁ a b c c ▁ b a; c is id 7 here, so: ▁ab c c ▁ ba */
	same(ids_str(t, "abcc ba", 7, 0), "6 7 7 5 8", "\"abcc ba\": 6 7 7 5 8 (b+a is the third merge, a [\"b\",\"a\"] pair)");
	/* "abd": d is unknown -> <unk>; "dd" -> one <unk> (fuse_unk) */
	same(ids_str(t, "abdd", 4, 0), "6 0", "unknown characters fuse into one <unk>: 6 0");
	same(ids_str(t, "ab", 2, GB_TOK_TEMPLATE), "1 6", "the template puts <s> first: 1 6");
	same(ids_str(t, "<s>ab", 5, GB_TOK_SPECIAL), "1 6",
	     "<s> in the text is the special token; Prepend applies to the text after it");
	int ids[] = { 6, 6, 8 };
	same(dec_str(t, ids, 3), "ab abba", "decode: ▁ -> space, fused, the first space stripped");
	const int *before, *after;
	int nb, na;
	gb_tok_template(t, &before, &nb, &after, &na);
	tap_ok(nb == 1 && before[0] == 1 && na == 0, "gb_tok_template: <s> before, nothing after");
	/* steps glassbox cannot write: saved as the file they came from, byte for byte */
	char copy[160], vj[160], mt[160];
	snprintf(copy, sizeof copy, "%s/copy.json", dir);
	snprintf(vj, sizeof vj, "%s/vocab.json", dir);
	snprintf(mt, sizeof mt, "%s/merges.txt", dir);
	FILE *fa = fopen(path, "rb"), *fb2 = NULL;
	int same_file = gb_tok_save_json(t, copy, &err) == 0 && fa && (fb2 = fopen(copy, "rb"));
	for (int ca = 0, cb = 0; same_file && (ca != EOF || cb != EOF);)
		same_file = (ca = fgetc(fa)) == (cb = fgetc(fb2));
	if (fa)
		fclose(fa);
	if (fb2)
		fclose(fb2);
	tap_ok(same_file, "saving a SentencePiece-style tokenizer writes its tokenizer.json unchanged");
	tap_ok(gb_tok_save_vocab_merges(t, vj, mt, &err) == -1 && strstr(err.msg, "cannot hold"),
	       "vocab.json + merges.txt refused: %s", err.msg);
	gb_tok_free(t);

	/* byte fallback: add the 256 <0xNN> tokens (ids 9..264) */
	json_t *root = json_loads(sp_base, 0, NULL), *m = json_object_get(root, "model");
	for (int b = 0; b < 256; b++) {
		char name[8];
		snprintf(name, sizeof name, "<0x%02X>", b);
		json_object_set_new(json_object_get(m, "vocab"), name, json_integer(9 + b));
	}
	json_object_set_new(m, "byte_fallback", json_true());
	char *fb = json_dumps(root, 0);
	json_decref(root);
	if (load_with(fb, NULL, NULL, &t, &err)) {
		free(fb);
		return (void)tap_ok(0, "load with byte fallback: %s", err.msg);
	}
	/* "aé": ▁ a then é = C3 A9 -> <0xC3> <0xA9> = 9+0xC3, 9+0xA9 */
	same(ids_str(t, "a\xc3\xa9", 3, 0), "5 2 204 178", "byte fallback: é becomes <0xC3> <0xA9> (204 178)");
	same(ids_str(t, "\xff", 1, 0), "5 264", "an invalid byte falls back to itself: <0xFF> (264)");
	int i2[] = { 5, 2, 204, 178, 9 + 0x0A };
	same(dec_str(t, i2, 5), "a\xc3\xa9\n", "decode: <0xNN> tokens are their bytes");
	char hf[32];
	gb_tok_piece_hf(t, 204, hf, sizeof hf);
	same(hf, "<0xC3>", "the piece is spelled as the vocabulary spells it");
	gb_tok_free(t);

	/* Metaspace pre-tokenizer instead of the normalizer, prepend_scheme first */
	const char *ms = "{\"type\": \"Metaspace\", \"replacement\": \"\xe2\x96\x81\", \"prepend_scheme\": \"first\", \"split\": false}";
	json_t *r2 = json_loads(fb, 0, NULL);
	json_object_set_new(r2, "normalizer", json_null());
	json_object_set_new(r2, "pre_tokenizer", json_loads(ms, 0, NULL));
	char *ms_json = json_dumps(r2, 0);
	json_decref(r2);
	if (!load_with(ms_json, NULL, NULL, &t, &err)) {
		same(ids_str(t, "ab<s>ab", 7, GB_TOK_SPECIAL), "6 1 4",
		     "Metaspace, prepend first: ▁ab <s> ab (no ▁ after the special token)");
		gb_tok_free(t);
	} else {
		tap_ok(0, "Metaspace loads: %s", err.msg);
	}
	free(ms_json);
	free(fb);
}

/* A byte-level file with the given pre_tokenizer and normalizer (NULL: none): every byte a
 * token, no merges. */
static int bytelevel_norm(const char *pre, const char *norm, gb_tokenizer **t, gb_err *err)
{
	gb_tokenizer *b;
	char tmp[160];
	snprintf(tmp, sizeof tmp, "%s/bytes.json", dir);
	if (gb_tok_new_bytes(NULL, 0, &b, err) || gb_tok_save_json(b, tmp, err))
		return -1;
	gb_tok_free(b);
	json_t *root = json_load_file(tmp, 0, NULL);
	json_object_set_new(root, "pre_tokenizer", json_loads(pre, 0, NULL));
	if (norm)
		json_object_set_new(root, "normalizer", json_loads(norm, 0, NULL));
	char *s = json_dumps(root, 0);
	json_decref(root);
	int rc = load_with(s, NULL, NULL, t, err);
	free(s);
	return rc;
}

static int bytelevel_with(const char *pre, gb_tokenizer **t, gb_err *err)
{
	return bytelevel_norm(pre, NULL, t, err);
}

#define LLAMA3 "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}{1,3}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+"

#define QWEN2 "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+"

static void test_split(void)
{
	gb_tokenizer *t;
	gb_err err;
	const char *l3 = "{\"type\": \"Sequence\", \"pretokenizers\": ["
	                 "{\"type\": \"Split\", \"pattern\": {\"Regex\": \"" LLAMA3 "\"}, \"behavior\": \"Isolated\", \"invert\": false},"
	                 "{\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": true, \"use_regex\": false}]}";
	if (bytelevel_with(l3, &t, &err))
		return (void)tap_ok(0, "Llama 3's pre-tokenizer loads: %s", err.msg);
	/* worked by hand through the pattern's alternatives, first match wins */
	same(words(t, "I'M 2026 hello\n\n  world"), "I|'M| |202|6| hello|\n\n| | world",
	     "Llama 3's Split: I | 'M | \" \" | 202 | 6 | \" hello\" | \\n\\n | \" \" | \" world\"");
	same(words(t, "x=1234567;  \xc3\xa9t\xc3\xa9!"), "x|=|123|456|7|;| | \xc3\xa9t\xc3\xa9|!",
	     "digits in threes; a letter run keeps one non-letter before it");
	tap_ok(strstr(gb_tok_describe(t), "Split(/(?i:'s") != NULL, "the description names the Split: %s",
	       gb_tok_describe(t));
	gb_tok_free(t);

	/* Qwen2's pattern: as Llama 3's but \p{N} one digit at a time */
	const char *qw = "{\"type\": \"Sequence\", \"pretokenizers\": ["
	                 "{\"type\": \"Split\", \"pattern\": {\"Regex\": \"" QWEN2 "\"}, \"behavior\": \"Isolated\", \"invert\": false},"
	                 "{\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": false, \"use_regex\": false}]}";
	if (!bytelevel_with(qw, &t, &err)) {
		same(words(t, "it's 2026!\n"), "it|'s| |2|0|2|6|!\n", "Qwen2's Split: it | 's | \" \" | 2 | 0 | 2 | 6 | !\\n");
		gb_tok_free(t);
	} else {
		tap_ok(0, "Qwen2's pre-tokenizer loads: %s", err.msg);
	}
	static const struct { const char *beh; int inv; const char *want; } bs[] = {
		{ "Isolated", 0, "a|-|b|-|-|c" },        { "Removed", 0, "a|b|c" },
		{ "MergedWithPrevious", 0, "a-|b-|-|c" }, { "MergedWithNext", 0, "a|-b|-|-c" },
		{ "Contiguous", 0, "a|-|b|--|c" },      { "Removed", 1, "-|-|-" },
	};
	for (size_t i = 0; i < sizeof bs / sizeof *bs; i++) {
		char pre[256];
		snprintf(pre, sizeof pre, "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", "
		         "\"pattern\": {\"String\": \"-\"}, \"behavior\": \"%s\", \"invert\": %s}, "
		         "{\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"use_regex\": false}]}",
		         bs[i].beh, bs[i].inv ? "true" : "false");
		if (bytelevel_with(pre, &t, &err)) {
			tap_ok(0, "Split %s loads: %s", bs[i].beh, err.msg);
			continue;
		}
		char what[96];
		snprintf(what, sizeof what, "Split \"-\" %s%s on a-b--c: %s", bs[i].beh,
		         bs[i].inv ? " inverted" : "", bs[i].want);
		same(words(t, "a-b--c"), bs[i].want, what);
		gb_tok_free(t);
	}
	const char *dg = "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Digits\", \"individual_digits\": true},"
	                 "{\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"use_regex\": true}]}";
	if (!bytelevel_with(dg, &t, &err)) {
		same(words(t, "ab12 3x"), "ab|1|2| |3|x", "Digits (individual) then GPT-2's pattern: ab|1|2| |3|x");
		gb_tok_free(t);
	}
	dg = "{\"type\": \"Digits\", \"individual_digits\": false}";
	if (!bytelevel_with(dg, &t, &err)) {
		same(words(t, "ab12 3x"), "ab|12| |3|x", "Digits alone, runs kept: ab|12| |3|x");
		gb_tok_free(t);
	}
}

/* Added tokens: lstrip / rstrip take the whitespace beside them. */
static void test_added(void)
{
	gb_tokenizer *t;
	gb_err err;
	char tmp[160];
	const char *sp[] = { "<m>" };
	snprintf(tmp, sizeof tmp, "%s/added.json", dir);
	gb_tok_new_bytes(sp, 1, &t, &err);
	gb_tok_save_json(t, tmp, &err);
	gb_tok_free(t);
	json_t *root = json_load_file(tmp, 0, NULL);
	json_t *a = json_array_get(json_object_get(root, "added_tokens"), 0);
	json_object_set_new(a, "lstrip", json_true());
	char *s = json_dumps(root, 0);
	if (!load_with(s, NULL, NULL, &t, &err)) {
		same(ids_str(t, "a  <m> b", 8, GB_TOK_SPECIAL), "97 256 32 98",
		     "lstrip: the spaces before <m> go with it: a <m> \" \" b");
		gb_tok_free(t);
	}
	free(s);
	json_object_set_new(a, "lstrip", json_false());
	json_object_set_new(a, "rstrip", json_true());
	s = json_dumps(root, 0);
	if (!load_with(s, NULL, NULL, &t, &err)) {
		same(ids_str(t, "a <m>  b", 8, GB_TOK_SPECIAL), "97 32 256 98",
		     "rstrip: the spaces after <m> go with it: a \" \" <m> b");
		same(ids_str(t, "a <m>  b", 8, 0), "97 32 60 109 62 32 32 98",
		     "without GB_TOK_SPECIAL the text of <m> is ordinary bytes");
		gb_tok_free(t);
	}
	free(s);
	json_decref(root);
}

/* ignore_merges: a piece that is a token is taken whole, even where merges would split it. */
static void test_ignore_merges(void)
{
	gb_tokenizer *t;
	gb_err err;
	char tmp[160];
	/* merges: "a b" -> ab (256), "b c" -> bc (257), "a bc" -> abc (258). BPE on "abc": a+b
	 * first (rank 0) -> ab c, and no "ab c" merge: two tokens. Taken whole: abc. */
	const char *m[] = { "a", "b", "b", "c", "a", "bc" };
	snprintf(tmp, sizeof tmp, "%s/im.json", dir);
	gb_tok_from_merges(m, 3, NULL, 0, &t, &err);
	same(ids_str(t, "abc", 3, 0), "256 99", "merges alone: abc is ab c (256 99)");
	gb_tok_save_json(t, tmp, &err);
	gb_tok_free(t);
	json_t *root = json_load_file(tmp, 0, NULL);
	json_object_set_new(json_object_get(root, "model"), "ignore_merges", json_true());
	char *s = json_dumps(root, 0);
	json_decref(root);
	if (!load_with(s, NULL, NULL, &t, &err)) {
		same(ids_str(t, "abc abc", 7, 0), "258 32 256 99",
		     "ignore_merges: abc whole (258); \" abc\" is not a token: BPE gives \" \" ab c");
		gb_tok_trace tr;
		int *ids, n;
		if (!gb_tok_encode(t, "abc", 3, 0, &ids, &n, &tr, &err)) {
			tap_ok(tr.n_words == 1 && tr.words[0].whole == 1 && tr.n_steps == 0,
			       "the trace says the piece was taken whole, no merges");
			free(ids);
			gb_tok_trace_free(&tr);
		}
		gb_tok_free(t);
	}
	free(s);
}

/* The Unicode normal forms (Qwen2's tokenizer.json has an NFC normalizer), worked by hand
 * from the Unicode tables: e + U+0301 composes to é under NFC; NFD splits é back; the ligature
 * U+FB01 (ﬁ) and U+2460 (①) stay under NFC/NFD and become "fi" and "1" under NFKC/NFKD. */
static void test_unicode_forms(void)
{
	static const struct { const char *form, *in, *want; } cases[] = {
		{ "NFC", "Cafe\xcc\x81 \xef\xac\x81\xe2\x91\xa0", "Caf\xc3\xa9 \xef\xac\x81\xe2\x91\xa0" },
		{ "NFD", "Caf\xc3\xa9", "Cafe\xcc\x81" },
		{ "NFKC", "Cafe\xcc\x81 \xef\xac\x81\xe2\x91\xa0", "Caf\xc3\xa9 fi1" },
		{ "NFKD", "\xc3\xa9\xef\xac\x81", "e\xcc\x81" "fi" },
		/* Hangul: U+1100 U+1161 compose to U+AC00 */
		{ "NFC", "\xe1\x84\x80\xe1\x85\xa1", "\xea\xb0\x80" },
		/* an invalid byte passes through; each side is normalized on its own */
		{ "NFC", "e\xcc\x81\xff" "e\xcc\x81", "\xc3\xa9\xff\xc3\xa9" },
	};
	const char *pre = "{\"type\": \"ByteLevel\", \"add_prefix_space\": false, "
	                  "\"trim_offsets\": false, \"use_regex\": false}";
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char norm[64];
		gb_tokenizer *t;
		gb_err err;
		snprintf(norm, sizeof norm, "{\"type\": \"%s\"}", cases[i].form);
		if (bytelevel_norm(pre, norm, &t, &err)) {
			tap_ok(0, "a %s normalizer loads: %s", cases[i].form, err.msg);
			continue;
		}
		char what[96];
		snprintf(what, sizeof what, "%s normalizes case %zu to the form worked by hand",
		         cases[i].form, i + 1);
		same(words(t, cases[i].in), cases[i].want, what);
		if (i == 0) {
			tap_ok(strstr(gb_tok_describe(t), "NFC") != NULL, "the description names NFC: %s",
			       gb_tok_describe(t));
			char a[64], b[64];
			snprintf(a, sizeof a, "%s", ids_str(t, "Cafe\xcc\x81", 6, 0));
			snprintf(b, sizeof b, "%s", ids_str(t, "Caf\xc3\xa9", 5, 0));
			same(a, b, "under NFC the two spellings of Caf\xc3\xa9 give the same ids");
		}
		gb_tok_free(t);
	}
	gb_tokenizer *t;
	gb_err err;
	tap_ok(bytelevel_norm(pre, "{\"type\": \"NFC\", \"mode\": 1}", &t, &err) == -1 &&
	       strstr(err.msg, "normalizer NFC: option \"mode\" is not supported"),
	       "an unknown option of NFC is refused: %s", err.msg);
}

int main(void)
{
	snprintf(dir, sizeof dir, "/tmp/t_tokhf.XXXXXX");
	if (!mkdtemp(dir))
		return tap_ok(0, "mkdtemp"), tap_done();
	snprintf(path, sizeof path, "%s/tokenizer.json", dir);
	test_refused();
	test_sentencepiece();
	test_split();
	test_unicode_forms();
	test_added();
	test_ignore_merges();
	char cmd[160];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd))
		tap_diag("could not remove %s", dir);
	return tap_done();
}
