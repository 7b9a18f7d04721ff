/* fz_llama2c.c — a llama2.c checkpoint as `load FILE` reads it (gb_model_load_llama2c): the
 * header (legacy, version 1 and 2 with Q8_0 groups), every size against the file's, and the
 * binding of the weights. No tokenizer.bin beside it (fz_l2c_tok fuzzes that). */
#include "tests/fuzz/fuzz.h"
#include "model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	static char path[300];
	if (!path[0])
		fz_path(path, sizeof path, "model.bin");
	fz_write(path, data, n);
	gb_model m;
	gb_err err;
	if (gb_model_load_llama2c(&m, path, NULL, &err) == 0)
		gb_model_free(&m);
	return 0;
}
