/* tui.h — the full-screen explorer (`tui` at the prompt, `glassbox --tui`): the current text's
 * tokens, a selector of stage, layer and head, the stage's figure with a cursor on it, the value
 * under the cursor, the stage's formula, and a `:` line that runs any command. */
#ifndef GLASSBOX_TUI_H
#define GLASSBOX_TUI_H

#include "app/session.h"

/* Runs the explorer on the terminal until q (or Esc, or Ctrl-C). It reads and writes
 * s->stage, s->layer, s->head and s->fig, so the prompt and the SDL window stay in step.
 * Returns 0 when left, 1 when `: quit` asked to leave glassbox altogether (as a command
 * returning 1 does), or -1 after printing a one-line error (not a terminal, unknown TERM,
 * already open). */
int tui_run(session *s);

#endif
