/* fz_calc.c — the calc:/pick: expression evaluator (calc_eval), on its own: the lesson parser
 * checks each expression's syntax this way (session NULL) before anything runs. */
#include "tests/fuzz/fuzz.h"
#include "app/lesson/lesson_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	char *text = fz_text(data, n), err[256];
	double v;
	calc_eval(NULL, text, &v, err, sizeof err);
	free(text);
	return 0;
}
