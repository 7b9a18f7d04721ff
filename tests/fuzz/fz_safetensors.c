/* fz_safetensors.c — model.safetensors as `load DIR` reads it: gb_model_load on a folder with
 * a fixed small config.json (tests/fuzz/model-config.json: GPT-2 layout, d_model 8, 1 layer,
 * 2 heads, vocab 16, context 8) and the input as its model.safetensors: the header's JSON,
 * every offset, dtype and shape check, the binding of each tensor to the architecture and the
 * NaN/inf scan. */
#include "tests/fuzz/fuzz.h"
#include "model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	static char dir[300], path[300];
	if (!dir[0]) {
		snprintf(dir, sizeof dir, "%s", fz_dir());
		char *cfg = NULL;
		size_t len = 0;
		FILE *f = fopen("tests/fuzz/model-config.json", "rb");
		if (!f)
			abort();
		cfg = malloc(4096);
		len = fread(cfg, 1, 4096, f);
		fclose(f);
		fz_write(fz_path(path, sizeof path, "config.json"), cfg, len);
		free(cfg);
		fz_path(path, sizeof path, "model.safetensors");
	}
	fz_write(path, data, n);
	gb_model m;
	gb_err err;
	if (gb_model_load(&m, dir, &err) == 0)
		gb_model_free(&m);
	return 0;
}
