/* lesson.h — `lesson`: prepared lessons read from plain text files (lessons/NN-name.lesson, the
 * format is in lessons/README.md) and run through the command table as if typed at the prompt.
 *
 *   lesson                       the lessons with their titles, steps and estimated minutes
 *   lesson N|NAME|FILE           start one: at a terminal step by step (Enter or n next, b back,
 *                                j N jump, q quit, questions checked and scored); in a script
 *                                or a pipe straight through, questions showing their answers
 *   lesson N --export DIR        every figure as DIR/01-attn.png ... and DIR/lesson.md, a
 *                                Markdown handout (answers at the end); DIR must not exist
 *                                unless --force
 *   lesson N --answers           the answer key, computed from the loaded model
 *   lesson N --check             parses it, then runs it quietly (the session is put back):
 *                                syntax errors as FILE:LINE: expected ..., answers that cannot
 *                                be computed or depend on a text a command changed, claims of
 *                                the prose (expect:) that do not hold, and the commands the
 *                                lesson needs that glassbox does not have yet
 *   lesson N --interactive       step by step even without a terminal (tests, demos)
 *
 * Expected answers are computed when the lesson runs (from a command's figure or printed
 * output, or by arithmetic), on the text the question describes, so they always agree with the
 * model in use; the prose's claims about the model are checked the same way (expect:). */
#ifndef GLASSBOX_LESSON_H
#define GLASSBOX_LESSON_H

#include "app/session.h"

/* The command table's handler for `lesson`. Returns 0, -1 after an error (a lesson that does
 * not parse, a command that failed in a straight run), or 1 when the student typed `quit`
 * inside the lesson (the prompt ends too). */
int cmd_lesson(session *s, int argc, char **argv, const char *rest);

/* The lessons folder: beside the program (a build tree), PREFIX/share/glassbox/lessons found
 * from the program's path, or the configured one. 0 when it exists, else -1 (out still names
 * the configured place). */
int lessons_dir(char *out, size_t cap);

/* The arithmetic of lessons' computed answers (lessons/README.md: numbers, + - * / ^,
 * comparisons, functions, the trace's tensors t(), dim(), cosine(), the model's cfg()) on the
 * session's current run (expr with its $NAMEs already replaced; s NULL checks the syntax only):
 * 0 and *out, or -1 and a one-line reason in err. `calc EXPR` prints it at the prompt, so a
 * lesson can show the number its prose quotes. */
int calc_eval(session *s, const char *expr, double *out, char *err, size_t cap);

/* A number as answers show it: whole numbers exactly, others with four significant digits. */
void fmt_num(double x, char *buf, size_t cap);

#endif
