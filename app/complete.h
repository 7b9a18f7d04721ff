/* complete.h — Tab completion for the prompt, generated from the command table: command names,
 * the options a command's usage names, layer and head numbers, and trace tensor names. */
#ifndef GLASSBOX_COMPLETE_H
#define GLASSBOX_COMPLETE_H

#include "app/session.h"

/* Installs the completer for readline on session s. */
void complete_install(session *s);

/* The candidates for the word `text` of `line` when the cursor word starts at `start`
 * (readline-independent, for tests): a NULL-terminated malloc'd array of malloc'd strings. */
char **complete_candidates(session *s, const char *line, int start, const char *text);

#endif
