/* cli.h — glassbox's own command line (not the command language): the table of its options,
 * read by --help, the man page's OPTIONS and the shell completions (gen.c), so the three cannot
 * disagree; and the texts of --help and --version. main.c dispatches the options themselves. */
#ifndef GLASSBOX_CLI_H
#define GLASSBOX_CLI_H

#include <stdio.h>

typedef struct cli_option {
	const char *word;         /* what is typed first, e.g. "-c", "--tui", "train"; "" for none */
	const char *alias;        /* a second spelling ("-h" for "--help") or NULL */
	const char *args;         /* the arguments after it, e.g. "\"CMD; CMD ...\"", or "" */
	const char *help;         /* one line */
	const char *more;         /* a paragraph for the man page, or "" */
} cli_option;

/* Ends with an entry whose word is NULL. */
extern const cli_option cli_options[];

/* --help: the synopsis and every option with its help (exit status 0). */
void cli_help(FILE *f);

/* --version: the version and what this build has (the window, the kernel tables). */
void cli_version(FILE *f);

#endif
