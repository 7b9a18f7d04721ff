/* fz_lesson.c — a lesson file as `lesson FILE` reads it (lesson_parse): steps, commands
 * checked against the command table, lets, questions, answers and their calc:/pick:
 * expressions (checked for syntax at parse time), expect: claims. */
#include "tests/fuzz/fuzz.h"
#include "app/lesson/lesson_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	static char path[300];
	if (!path[0])
		fz_path(path, sizeof path, "fuzz.lesson");
	fz_write(path, data, n);
	lesson L;
	char err[512];
	memset(&L, 0, sizeof L);
	if (lesson_parse(path, &L, err, sizeof err) == 0)
		lesson_free(&L);
	return 0;
}
