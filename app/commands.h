/* commands.h — the dispatcher: one table of commands drives the REPL, `-c`, script files, the
 * explorer's `:` line and lessons, and help and Tab completion read it. Include this to run
 * commands or to read the table; the handlers and their helpers are in cmd.h. */
#ifndef GLASSBOX_COMMANDS_H
#define GLASSBOX_COMMANDS_H

#include "app/session.h"

typedef struct command {
	const char *name;
	const char *usage;        /* the arguments, e.g. "DIR" */
	const char *help;         /* one line */
	const char *more;         /* the long help */
	/* argv[0] is the command name; rest is the raw text after the name (for commands that
	 * take free text). Returns 0, -1 after printing a one-line error, or 1 to leave glassbox
	 * (quit, or quit inside a lesson or the explorer). */
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

#endif
