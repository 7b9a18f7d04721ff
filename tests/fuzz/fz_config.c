/* fz_config.c — config.json as gb_config_load reads it (gb_config_parse). */
#include "tests/fuzz/fuzz.h"
#include "model/formats/hf_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	char *text = fz_text(data, n);
	gb_config c;
	gb_err err;
	memset(&c, 0, sizeof c);
	gb_config_parse(&c, text, "config.json", &err);
	free(text);
	return 0;
}
