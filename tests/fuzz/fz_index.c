/* fz_index.c — a sharded checkpoint's model.safetensors.index.json as `load DIR` reads it
 * (gb_model_load on a folder without model.safetensors): the folder holds the fixed
 * config.json of fz_safetensors and two real shards of that model (tests/fuzz/shards/), the
 * input is the index. */
#include "tests/fuzz/fuzz.h"
#include "model/model.h"

static void copy_in(const char *from, const char *name)
{
	char path[300], *buf = malloc(1 << 20);
	FILE *f = fopen(from, "rb");
	if (!f || !buf)
		abort();
	size_t len = fread(buf, 1, 1 << 20, f);
	fclose(f);
	fz_write(fz_path(path, sizeof path, name), buf, len);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	static char path[300];
	if (!path[0]) {
		copy_in("tests/fuzz/model-config.json", "config.json");
		copy_in("tests/fuzz/shards/model-00001-of-00002.safetensors", "model-00001-of-00002.safetensors");
		copy_in("tests/fuzz/shards/model-00002-of-00002.safetensors", "model-00002-of-00002.safetensors");
		fz_path(path, sizeof path, "model.safetensors.index.json");
	}
	fz_write(path, data, n);
	gb_model m;
	gb_err err;
	if (gb_model_load(&m, fz_dir(), &err) == 0)
		gb_model_free(&m);
	return 0;
}
