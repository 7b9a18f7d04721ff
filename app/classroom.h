/* classroom.h — teaching a class over the local network (issue 14).
 *
 *   teach [--port N] [--code C]   the teacher: listens (port 7341; 0 picks a free one) and
 *                                 prints the join line "glassbox --follow HOST:PORT --code C"
 *   teach                         while teaching: who follows, updates and bytes sent
 *   teach end                     ends the class (followers are told, then disconnected)
 *   tally [--names]               the answers to the question asked last, as a bar chart
 *                                 (right / each wrong choice / no answer yet); export saves it
 *   follow HOST:PORT --code C [--name N]   a student joins; `follow` alone comes back to the
 *                                 teacher after exploring (catching up at once)
 *   answer X                      a student's answer to the question on show
 *
 * What travels is the teacher's view state, never a tensor: the model's identity (its name and
 * a hash of its config, tokenizer and weights), the text and its token ids, the lesson and
 * step, the command that made the figure on show (with the ids and cursor it ran on), the
 * cursor (stage, layer, head, tour) and the question asked. Each follower runs the command in
 * its own engine on its own copy of the model. Followers send only their hello and answers.
 *
 * The hooks below let the prompt, the lesson runner and the command dispatcher serve the
 * sockets without threads: every wait for the keyboard goes through classroom_wait. */
#ifndef GLASSBOX_CLASSROOM_H
#define GLASSBOX_CLASSROOM_H

#include "app/session.h"

int cmd_teach(session *s, int argc, char **argv, const char *rest);
int cmd_tally(session *s, int argc, char **argv, const char *rest);
int cmd_follow(session *s, int argc, char **argv, const char *rest);
int cmd_answer(session *s, int argc, char **argv, const char *rest);

/* glassbox --follow HOST:PORT --code C [--name N] [--model DIR] [--print] [--answers LIST]:
 * a follower at the prompt, or with --print (or without a terminal) one line per state on
 * stdout until the teacher ends the class ("final ..." then); --answers a,-,c answers the
 * questions in turn (for scripts). Returns the exit status. */
int classroom_follow_main(session *s, int argc, char **argv);

/* Waits up to timeout_ms (-1: forever) for fd (-1: none) to be readable while serving the
 * class's sockets: 1 when fd is readable, 0 on timeout, -1 when interrupted (EINTR). Without
 * a class it is poll() on fd. */
int classroom_wait(session *s, int fd, int timeout_ms);
/* A class is being taught or followed: the prompt must wake for it. */
int classroom_active(void);
/* The prompt tells whether readline owns the line (messages then redraw it). */
void classroom_prompt(int on);

/* The explorer owns the screen (on 1, until 0): the classroom prints nothing meanwhile. */
void classroom_fullscreen(int on);
/* A follower's own key in the explorer: it explores on its own until `:follow`. */
void classroom_explore(void);

/* The dispatcher's hooks around every command. */
void classroom_before(session *s);
void classroom_after(session *s, const char *line, int rc);

/* The lesson runner's: the step on show (title NULL: no lesson), and the question asked.
 * judge tells an answer's bar: 0 right, k >= 1 the wrong choice k (1-based) or, for a number
 * or a word, n_opts + 1 (wrong), -1 not an answer of the right form. */
void classroom_step(const char *title, int step, int n_steps, const char *heading);
typedef int (*classroom_judge)(void *ctx, const char *answer);
void classroom_question(const char *text, const char *const *opts, int n_opts, int right,
                        classroom_judge judge, void *ctx);
void classroom_question_end(void);

/* At exit: a class still taught ends (followers are told). */
void classroom_end(session *s);

#endif
