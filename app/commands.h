/* commands.h — the command table that drives the REPL, `-c`, script files and (later) the
 * explorer's `:` line and lessons. Adding a command is adding one entry and one handler. */
#ifndef GLASSBOX_COMMANDS_H
#define GLASSBOX_COMMANDS_H

#include <stdio.h>

#include "app/session.h"
#include "model/heads.h"

typedef struct command {
	const char *name;
	const char *usage;        /* the arguments, e.g. "DIR" */
	const char *help;         /* one line */
	const char *more;         /* the long help */
	/* argv[0] is the command name; rest is the raw text after the name (for commands that
	 * take free text). Returns 0, or -1 after printing a one-line error. */
	int (*run)(session *s, int argc, char **argv, const char *rest);
} command;

extern const command commands[];

/* Finds a command by exact name or unique prefix; NULL with a message printed otherwise. */
const command *command_find(const char *name);

/* Runs one command line (no ';' splitting); blank lines and # comments succeed. */
int command_line(session *s, const char *line);

/* Runs a script: commands separated by newlines or ';' (outside quotes). Stops at the first
 * failure and returns -1; `where` names the source in the error ("-c", a file name). */
int command_script(session *s, const char *text, const char *where);

/* Set by Ctrl-C at the prompt; long commands check it between steps. */
#include <signal.h>
extern volatile sig_atomic_t interrupted;

void session_init(session *s);

/* The window's event pump (returns 1 while the window is open) and key handler. */
int window_pump(session *s);
void window_key(session *s, int key, int mods);

/* Makes f the session's current figure and draws it (as every view does); NULL fails. */
int show_figure(session *s, struct gb_figure *f);

/* A model argument: a folder as given, or the name of a shipped model (tiny-lm, tiny-mt). */
void resolve_model(const char *arg, char *out, size_t cap);

/* Loads the default model (tiny-lm) when it can be found; 0 on success. */
int session_load_default(session *s);
/* Why the last session_load_default failed, for a message. */
const char *session_default_problem(void);
/* Token ids as the text they stand for (malloc'd): the tokenizer's bytes, control bytes (but
 * newline) and broken UTF-8 as \xNN; "token ids: 5 6 7" without a tokenizer. */
char *ids_text(session *s, const int *ids, int n);
/* The head detector's table: markdown (md) or aligned columns under `groups` (a line naming
 * the two groups of columns). */
void print_head_scores(FILE *f, const gb_head_score *sc, int L, int H, int md, const char *groups);
void session_free(session *s);

/* Prints an error line "glassbox: ..." on stderr. */
void errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
