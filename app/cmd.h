/* cmd.h — inside the command module: what the table (commands.c) and the handlers (one
 * cmd_*.c file per family of commands) share. Only those files include it; everything else
 * runs commands through commands.h.
 *
 * One header for all the families rather than one each: the table needs every handler, and
 * every family needs the same few argument helpers, so a new command is one entry in the
 * table, one handler in its family's file and its name on that family's line here. The
 * families know each other only through the session (session.h) and the views (views.h). */
#ifndef GLASSBOX_CMD_H
#define GLASSBOX_CMD_H

#include "app/session.h"

/* A handler: argv[0] is the command name, rest the raw text after the name (for commands that
 * take free text). Returns 0, -1 after printing a one-line error, or 1 to leave glassbox. */
typedef int cmd_fn(session *s, int argc, char **argv, const char *rest);

cmd_fn cmd_help, cmd_quit;                                   /* commands.c: the table's own */
cmd_fn cmd_run, cmd_tokenize, cmd_step;                      /* cmd_text.c: the current text */
cmd_fn cmd_embed, cmd_pe, cmd_head_stage, cmd_scores, cmd_model, cmd_ln, cmd_ffn, cmd_resid,
       cmd_next, cmd_show, cmd_calc, cmd_masks, cmd_window, cmd_tui, cmd_pair; /* cmd_view.c: figures */
cmd_fn cmd_qkv;                                              /* cmd_view.c: --units (issue 18) */
cmd_fn cmd_arch;                                             /* cmd_view.c: the architecture */
cmd_fn cmd_loss, cmd_positions, cmd_experts, cmd_linear, cmd_receptive, cmd_cost, cmd_norms;                            /* cmd_choices.c: issue 19 */
cmd_fn cmd_compare_models;                                   /* cmd_compare_models.c */
cmd_fn cmd_trace, cmd_print, cmd_dump, cmd_export;           /* cmd_data.c: the numbers */
cmd_fn cmd_generate, cmd_beam, cmd_translate;                /* cmd_gen.c: decoding */
cmd_fn cmd_heads, cmd_ablate, cmd_lens, cmd_near, cmd_compare; /* cmd_probe.c: inside the model */
cmd_fn cmd_models, cmd_load, cmd_info, cmd_init, cmd_set, cmd_bench; /* cmd_model.c */
cmd_fn cmd_export_model;                                     /* cmd_model.c: llama2.c files */
cmd_fn cmd_doctor;                                           /* doctor.c: what this machine can show */
cmd_fn cmd_train, cmd_eval, cmd_curves;                      /* cmd_train.c: training */
/* cmd_lesson is the lesson runner's own (lesson.h). */

/* The argument helpers (commands.c). Each prints its one-line error and returns -1 on bad
 * input. */

/* The full name of the command a handler was called by (argv[0] may be a unique prefix). */
const char *command_name(const char *word);
/* "usage: NAME ARGS" from the table, or "NAME takes no arguments"; always -1. */
int usage(const char *name);
/* A whole number from lo to hi; `what` names it in the error. */
int parse_int(const char *a, int lo, int hi, int *out, const char *what);
/* A range "A-B" (or one number "A") within lo..hi; `what` names it in the error. */
int parse_range(const char *a, int lo, int hi, int *first, int *last, const char *what);
/* Reads "L H" (need 2) or "L" (need 1) as 1-based numbers; the view checks the ranges. */
int layer_head(int argc, char **argv, int need, int *l, int *h);
/* The user's model gallery, $XDG_DATA_HOME/glassbox/models or ~/.local/share/glassbox/models
 * (cmd_model.c); -1 when neither variable says where. */
int user_models_dir(char *out, size_t cap);
/* Loads a model argument (a folder, a shipped model's name, a name in the user's gallery, a
 * llama2.c file with tokenizer) into m (cmd_model.c); -1 after an error line. */
int load_model(const char *arg, const char *tokenizer, gb_model *m);
/* A trace tensor by name; NULL after an error naming the closest name, if one is close. */
const gb_ttensor *find_tensor(session *s, const char *name);

#endif
