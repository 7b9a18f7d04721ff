/* commands.h — the dispatcher: one table of commands drives the REPL, `-c`, script files, the
 * explorer's `:` line and lessons, and help and Tab completion read it. Include this to run
 * commands or to read the table; the handlers and their helpers are in cmd.h. */
#ifndef GLASSBOX_COMMANDS_H
#define GLASSBOX_COMMANDS_H

#include "app/session.h"

/* Whether a follower of a class (classroom.h) runs this command in its own engine when the
 * teacher's figure on show came from it. Every entry decides: REPLAY_UNSET (0, what an entry
 * that forgot gets) fails tests/t_commands.c. REPLAY: a view or figure that only reads the
 * session's run and model and draws, with bounded work; NO_REPLAY: anything that writes files,
 * loads or changes the model or the settings, trains, measures the machine, opens a screen,
 * runs a class, or reads a folder of the teacher's. */
enum { REPLAY_UNSET, REPLAY, NO_REPLAY };

typedef struct command {
	const char *name;
	const char *usage;        /* the arguments, e.g. "DIR" */
	const char *help;         /* one line */
	const char *more;         /* the long help */
	/* argv[0] is the command name; rest is the raw text after the name (for commands that
	 * take free text). Returns 0, -1 after printing a one-line error, or 1 to leave glassbox
	 * (quit, or quit inside a lesson or the explorer). */
	int (*run)(session *s, int argc, char **argv, const char *rest);
	int replay;               /* REPLAY or NO_REPLAY, above */
} command;

extern const command commands[];

/* Finds a command by exact name or unique prefix; NULL with a message printed otherwise. */
const command *command_find(const char *name);
/* The same, quietly: NULL for an unknown or ambiguous name. */
const command *command_lookup(const char *name);

/* Runs one command line (no ';' splitting); blank lines and # comments succeed. */
int command_line(session *s, const char *line);

/* Runs a script: commands separated by newlines or ';' (outside quotes). Stops at the first
 * failure and returns -1; `where` names the source in the error ("-c", a file name). */
int command_script(session *s, const char *text, const char *where);

#endif
