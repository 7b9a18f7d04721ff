/* fz_l2c_tok.c — llama2.c's tokenizer.bin as `load FILE` reads it beside a checkpoint
 * (gb_l2c_tok_load). The input's first 4 bytes (little-endian) are the model's vocabulary
 * size, the rest is the file; a tokenizer that loads encodes and decodes a text. */
#include "tests/fuzz/fuzz.h"
#include "model/formats/llama2c_tok.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	static char path[300];
	if (n < 4)
		return 0;
	if (!path[0])
		fz_path(path, sizeof path, "tokenizer.bin");
	int vocab = (int)((uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 | (uint32_t)data[3] << 24);
	fz_write(path, data + 4, n - 4);
	gb_l2c_tok *t = NULL;
	gb_err err;
	if (gb_l2c_tok_load(path, vocab, &t, &err) == 0) {
		static const char text[] = "Once upon a time, \xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80 x\n";
		int *ids = NULL, nid = 0;
		if (gb_l2c_tok_encode(t, text, sizeof text - 1, 1, 1, &ids, &nid, &err) == 0) {
			char *out = NULL;
			size_t len = 0;
			if (gb_l2c_tok_decode(t, ids, nid, &out, &len, &err) == 0)
				free(out);
			free(ids);
		}
		gb_l2c_tok_free(t);
	}
	return 0;
}
