/* fz_tokenizer_json.c — tokenizer.json as gb_tok_load reads it (gb_tok_load_json); a tokenizer
 * that loads then encodes and decodes a text, so the steps it declared run too. */
#include "tests/fuzz/fuzz.h"
#include "model/tokenizer/tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	static char path[300];
	if (!path[0])
		fz_path(path, sizeof path, "tokenizer.json");
	fz_write(path, data, n);
	gb_tokenizer *t = NULL;
	gb_err err;
	if (gb_tok_load_json(path, &t, &err) == 0) {
		static const char text[] = "When Mary and John went to the park, 2024-01-31 \xc3\xa9t\xc3\xa9 <|endoftext|>\n\t x";
		int *ids = NULL, nid = 0;
		if (gb_tok_encode(t, text, sizeof text - 1, GB_TOK_SPECIAL | GB_TOK_TEMPLATE, &ids, &nid, NULL, &err) == 0) {
			char *out = NULL;
			size_t len = 0;
			if (gb_tok_decode(t, ids, nid, &out, &len, &err) == 0)
				free(out);
			free(ids);
		}
		gb_tok_free(t);
	}
	return 0;
}
