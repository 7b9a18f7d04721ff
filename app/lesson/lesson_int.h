/* lesson_int.h — what the pieces of the lesson module share. Internal: only app/lesson.c and
 * the files of app/lesson/ include it; the rest of the program sees app/lesson.h.
 *
 * It holds a lesson in memory (steps of prose, literal blocks, commands, pauses, lets and
 * questions), how an answer is found, the runner that plays one lesson, and the functions the
 * pieces call across files:
 *
 *   app/lesson.c        the `lesson` command: finding, listing and checking lessons
 *   app/lesson/text.c   growing strings and the small tests of text every piece uses
 *   app/lesson/parse.c  a lesson file into steps (errors as FILE:LINE: expected ...)
 *   app/lesson/calc.c   the arithmetic of `calc:` and `pick:` answers
 *   app/lesson/answer.c commands run with their output captured; answers computed
 *   app/lesson/state.c  the session's state put back (snapshots, guards) and the state an
 *                       answer is computed on: a question's text:, drift since the last run
 *   app/lesson/expect.c the claims a lesson makes (expect:), checked when it runs
 *   app/lesson/run.c    one step in the runner's mode: prose, commands, lets, questions
 *   app/lesson/step.c   the student's side: answering, scores, stepping at a terminal
 *   app/lesson/export.c numbered figures and the Markdown handout */
#ifndef GLASSBOX_LESSON_INT_H
#define GLASSBOX_LESSON_INT_H

#include <stddef.h>
#include <stdio.h>

#include "app/commands.h"
#include "app/lesson.h"
#include "app/session.h"

/* ---- text.c: growing strings ------------------------------------------------------------- */

typedef struct sb {
	char *s;
	size_t n, cap;
} sb;

void sb_add(sb *b, const char *t, size_t n);
void sb_puts(sb *b, const char *t);
void sb_printf(sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *sb_take(sb *b);

int is_blank(const char *s);
int starts(const char *s, const char *prefix);
const char *skip_space(const char *s);
int parse_num(const char *s, double *x);
int is_ident_start(int c);
int is_ident(int c);
/* A token in a code span (` the`) with its space as a middle dot (`·the`), as figures show
 * it; for text the student reads, never for commands. malloc'd. */
char *dot_spaces(const char *text);

/* ---- a lesson in memory ------------------------------------------------------------------ */

/* How an answer is found: a literal, arithmetic, or a selector over a command's figure or
 * printed text. */
enum { SEL_LITERAL, SEL_CALC, SEL_PICK, SEL_TOP, SEL_CELL, SEL_ARGMAX, SEL_WORD, SEL_LINES, SEL_BEST };

struct selector {
	const char *name;
	int min_args, max_args;
	int figure;               /* reads a figure (1) or printed text (0); -1: no command */
};
extern const struct selector SELECTORS[]; /* indexed by SEL_* */

typedef struct answer {
	int sel;                  /* SEL_* */
	int a[2];                 /* the selector's numbers (1-based; negative counts from the end) */
	char *arg;                /* the literal, the expression, or the command ("": the current
	                           * figure, or the printed text of the step's last command) */
} answer;

/* What a student must type: a letter, a number, or a word/token; AUTO is decided by the
 * computed value (a `word` of printed text may be either). */
enum { FORM_CHOICE, FORM_NUMBER, FORM_TOKEN, FORM_AUTO };

typedef struct question {
	int line, index;          /* index: 1-based, counted through the lesson */
	char *text;
	char **opts;              /* (n_opts) the choices' texts, a) b) c) ... */
	int n_opts;
	answer ans;
	int have_ans;
	int have_tol, tol_rel;
	double tol;               /* absolute, or a fraction of the answer when tol_rel */
	char **hints;             /* (n_hints) one shown per wrong try */
	int n_hints;
	int form;
	char *text_for;           /* `text:` the text the answer is computed on (run quietly,
	                           * then put back), or NULL: the lesson's current text */
	int text_line;
	char **also;              /* (n_also) `also: WORD` other answers taken as right (a word
	                           * the student knows for a token, "Mary" for ·Mar) */
	int n_also;
} question;

/* A claim of the prose, checked when the lesson runs (`expect: ...`, lessons/README.md):
 * a calc condition, two values compared as words or numbers, or a value among a list. */
enum { EX_CALC, EX_EQ, EX_NE, EX_IN, EX_NOT_IN };

typedef struct expect {
	int kind;                 /* EX_* */
	char *claim;              /* the line as written, for messages */
	char *lhs, *rhs;          /* EX_CALC: the expression in lhs; EX_EQ/NE: both sides;
	                           * EX_IN/NOT_IN: the value and the comma-separated list */
} expect;

enum { IT_PROSE, IT_LITERAL, IT_CMD, IT_PAUSE, IT_QUESTION, IT_LET, IT_EXPECT };

typedef struct item {
	int kind, line;
	char *text;               /* a paragraph, a literal block, a command line, or a let's name */
	answer let;
	question *q;
	expect *ex;
} item;

typedef struct step {
	char *heading;
	int line;
	item *items;              /* (n_items) in file order */
	int n_items, cap;
} step;

typedef struct need {
	char *word, *opt;         /* a command name and an option it must offer (or NULL) */
} need;

typedef struct lesson {
	char *path, *title;
	need *needs;
	int n_needs;
	step *steps;
	int n_steps;
	int n_questions, n_cmds, n_words, n_try, n_expects;
	int n_nums;               /* `calc EXPR` commands: one number to read */
	char **vars;              /* let names, in file order: a $NAME must be defined above it */
	int n_vars;
} lesson;

/* ---- parse.c ----------------------------------------------------------------------------- */

/* Reads and checks a lesson file; on failure err holds "FILE:LINE: expected ...". */
int lesson_parse(const char *path, lesson *L, char *err, size_t cap);
void lesson_free(lesson *L);
/* The estimate `lesson` lists and the handout states. */
int lesson_minutes(const lesson *L);
/* The command table as a lesson sees it: found without printing, needs met or not. */
const command *lookup(const char *word);
void first_word(const char *line, char *w, size_t cap);
int need_met(const need *nd);
const need *unmet_need(const lesson *L, const char *line);

/* ---- calc.c: calc_eval (app/lesson.h) ----------------------------------------------------- */

/* ---- the runner -------------------------------------------------------------------------- */

/* MODE_CHECK runs the lesson with nothing shown but its errors (lesson N --check). */
enum { MODE_SHOW, MODE_PLAY, MODE_EXPORT, MODE_ANSWERS, MODE_CHECK };

/* The token ids of the session's trace (and an encoder-decoder's target ids). */
typedef struct ids_copy {
	int have_run, n_ids, n_tgt;
	int *ids, *tgt;
} ids_copy;

/* What a command may change, put back afterwards: the text and its trace, the engine, the
 * layer-norm form, the view and the current figure (detached while it is away); with
 * SNAP_MODEL also the loaded model (a lesson may load another one); with SNAP_KEEP_FIG the
 * figure stays the session's (a student exploring may export it). */
enum { SNAP_MODEL = 1, SNAP_KEEP_FIG = 2 };

typedef struct snapshot {
	ids_copy ids;
	int stage, layer, head, on_show, tour, textbook;
	char *text, *target;
	const gb_kernels *k;
	display_settings disp;    /* a command may `set palette`: the student's comes back */
	gb_figure *fig;
	int flags, loaded;
	char *model_dir;
} snapshot;

/* The text the lesson ran last (`run` or `translate`), and the first command since then that
 * changed the text without naming it (generate): an answer computed after such a command may
 * not be what the question describes. */
typedef struct text_state {
	ids_copy base;            /* base.have_run: a run happened and is still the session's */
	char *text;
	int line;                 /* the run's line in the lesson file */
	int drift_line;           /* 0, or the line of the command that changed the text */
	char *drift_cmd;
} text_state;

typedef struct runner {
	session *s;
	lesson *L;
	int mode;
	int tty;                  /* stdout is a terminal: figures keep its colours and size */
	int bold;                 /* headings in bold (a terminal without NO_COLOR) */
	int width;                /* prose wraps at this column */
	FILE *cap;                /* commands print here; the runner copies what is shown */
	char *out;                /* the printed text of the last command */
	char **var_names, **var_vals;
	char **var_exact;         /* a number's value in full (for expressions), or NULL */
	int n_vars;
	int failed, todo;
	int expects, expects_ok;  /* claims checked, and how many held */
	text_state ts;
	snapshot explore;         /* the lesson's state while a student runs commands of their own */
	int exploring;
	int cur;                  /* the step running, from 0 */
	int replay;               /* rebuilding the state of a step quietly: no questions */
	int *qstate;              /* per question: 0 not asked, 1 right, 2 missed or skipped */
	int right, asked;
	/* export */
	const char *dir;
	int n_figs, step_figs;
	sb md, key, code;
	int last_item;            /* the handout's last paragraph was a list item */
	struct gb_pdfbook *book;  /* the figures recorded as vectors for slides.pdf and handout.pdf */
} runner;

/* What a step returns: go on, or the student stopped the lesson, or the whole session. */
enum { GO_ON, STOP_LESSON, STOP_ALL };

typedef struct value {
	int is_num;
	double x;
	char *text;               /* the number as shown, or the word/token's raw bytes */
} value;

/* ---- answer.c ---------------------------------------------------------------------------- */

int captured(runner *r, const char *line, int quiet_err);
/* Computes an answer now; -2 when it needs a command glassbox does not have yet. */
int eval_answer(runner *r, const answer *a, value *v, char *err, size_t cap);
void answer_text(const question *q, const value *v, char *out, size_t cap);
int choice_of(const question *q, value *v, char *err, size_t cap);
/* fmt_num: app/lesson.h */

/* ---- state.c ----------------------------------------------------------------------------- */

void ids_take(const session *s, ids_copy *c);
int ids_same(const session *s, const ids_copy *c);
void ids_free(ids_copy *c);

void snap_take(session *s, snapshot *sn, int flags);
/* Puts it back; 1 when the text or the model had changed, else 0. */
int snap_restore(session *s, snapshot *sn);
/* After a command of the lesson itself ran (cmd as run, from line of the file): notes a new
 * text (run, translate) or a change of it (generate, or any other command). */
void track_text(runner *r, const char *cmd, int line, int rc, const ids_copy *before);
void text_state_free(text_state *ts);
/* Computes an answer on the state it describes: the question's text (NULL: the lesson's
 * current one). -2: it needs a missing command; -3: err says the answer depends on a text
 * that a command changed since the last run (the lesson must name its text). */
int eval_at(runner *r, const answer *a, const char *text, value *v, char *err, size_t cap);

/* ---- expect.c ---------------------------------------------------------------------------- */

/* Reads "expect: ..." (after the colon); 0, or -1 with err. */
int expect_parse(const char *text, expect *ex, char *err, size_t cap);
void expect_free(expect *ex);
/* Checks the claim now; failures are reported as FILE:LINE: ... and counted. */
void run_expect(runner *r, const item *it);

/* ---- run.c ------------------------------------------------------------------------------- */

char *subst(runner *r, const char *text);
/* The same for text the student reads (prose, questions, options, hints): a token's leading
 * space in a code span shown as a dot (dot_spaces); commands use subst. */
char *subst_read(runner *r, const char *text);
/* The same for an expression: numbers from `let` in full precision. */
char *subst_expr(runner *r, const char *text);
/* An error of the running lesson at a line of its file: FILE:LINE: ... under --check, else
 * "lesson FILE, step N (line L): ..."; counted as a failure. */
void lesson_error(runner *r, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void print_wrapped(runner *r, const char *text, const char *indent);
int do_step(runner *r, int i);
int goto_step(runner *r, int k);

/* ---- step.c ------------------------------------------------------------------------------ */

/* A token for comparing (malloc'd): the dot that stands for a space is a space, spaces and
 * quotes around do not count, nor does case. */
char *norm_token(const char *t);

/* Score of this glassbox session, over every lesson played. */
extern int session_right, session_asked;
int read_line(session *s, char *buf, size_t cap);
int ask(runner *r, question *q, const value *v, const char *shown);
int play(runner *r);

/* ---- export.c ---------------------------------------------------------------------------- */

void md_code(runner *r, const char *cmd, const char *out);
void md_flush(runner *r);
void md_para(runner *r, const char *text);
void export_figure(runner *r, const char *cmd);
int export_lesson(runner *r, int force);

#endif
