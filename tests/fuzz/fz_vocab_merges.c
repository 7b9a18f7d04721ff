/* fz_vocab_merges.c — GPT-2's vocab.json + merges.txt as gb_tok_load reads them
 * (gb_tok_load_vocab_merges). The input is vocab.json, a NUL byte, then merges.txt; a
 * tokenizer that loads encodes and decodes a text. */
#include "tests/fuzz/fuzz.h"
#include "model/tokenizer/tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	static char vpath[300], mpath[300];
	if (!vpath[0]) {
		fz_path(vpath, sizeof vpath, "vocab.json");
		fz_path(mpath, sizeof mpath, "merges.txt");
	}
	const uint8_t *m;
	size_t nm, nv;
	fz_split(data, n, &m, &nm, &nv);
	fz_write(vpath, data, nv);
	fz_write(mpath, m, nm);
	gb_tokenizer *t = NULL;
	gb_err err;
	if (gb_tok_load_vocab_merges(vpath, mpath, &t, &err) == 0) {
		static const char text[] = "When Mary and John went to the park <|endoftext|> \xe2\x82\xac\xff\n";
		int *ids = NULL, nid = 0;
		if (gb_tok_encode(t, text, sizeof text - 1, GB_TOK_SPECIAL, &ids, &nid, NULL, &err) == 0) {
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
