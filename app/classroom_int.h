/* classroom_int.h — what the classroom's files share (app/classroom.h is the outside view):
 *   app/classroom_state.c   the teacher's state as data: copies, deltas to and from frames,
 *                           the model's and the figure's hashes, the one-line state dump
 *   app/classroom.c         the teacher: hooks, the listening socket, broadcasts
 *   app/classroom_tally.c   the question asked, the answers, the tally
 *   app/classroom_follow.c  the follower: connecting, catching up, replaying, answering */
#ifndef GLASSBOX_CLASSROOM_INT_H
#define GLASSBOX_CLASSROOM_INT_H

#include <poll.h>
#include <stdint.h>
#include <stdio.h>

#include "app/classroom_net.h"
#include "app/classroom_proto.h"
#include "app/session.h"

#define CLASS_PORT 7341

typedef struct cstate {
	uint64_t seq;
	char *model;               /* the model's name */
	uint64_t hash;             /* its files' hash */
	char *text;
	int32_t *ids, *tgt;        /* (n_ids), (n_tgt) the run on show */
	int n_ids, n_tgt;
	char *lesson;              /* "" when none */
	int32_t step[2];           /* step from 1, steps */
	char *heading;
	char *view;                /* the command of the figure on show, "@stage" for a stage view
	                            * chosen by keys (the cursor says which), "" for none */
	int32_t *vids, *vtgt;      /* (n_vids), (n_vtgt) the ids it ran on */
	int n_vids, n_vtgt;
	int32_t vcur[4];           /* stage, layer, head, tour before it ran */
	int32_t cur[4];            /* and now */
	uint32_t qid;
	char *qtext, *qopts;       /* the question, its choices one per line */
} cstate;

void cstate_init(cstate *c);
void cstate_free(cstate *c);
void cstate_copy(cstate *dst, const cstate *src);
/* The fields of now that differ from old (all of them when old is NULL) into m (pointing into
 * now); the number of groups that changed. */
int cstate_delta(const cstate *now, const cstate *old, gbx_msg *m);
/* A state frame's fields into c. */
void cstate_merge(cstate *c, const gbx_msg *m);
/* "seq=.. model=.. lesson=.. step=K/N view=.. cursor=S,L,H,T ids=HASH q=.. fig=HASH": what a
 * test compares between the teacher and each follower (fig: the figure's own hash). */
void cstate_line(FILE *f, const char *what, const cstate *c, uint64_t fig);

/* A hash of a figure's kind, title, labels and values (not its subtitle, which may name a
 * folder): two engines that drew the same figure agree. 0 for none. */
uint64_t fig_hash(const gb_figure *f);
/* The loaded model's name (its folder's last part) and the hash of its files (config,
 * tokenizer, weights), cached per folder. */
const char *class_model_name(const session *s);
uint64_t model_hash(const session *s);

/* Lines from the classroom while the prompt waits: clears readline's line and draws it back. */
void class_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern int class_prompt_on;
extern int class_say_stderr;  /* a follower's --print: its messages go to stderr */
extern int class_fullscreen;  /* the explorer owns the screen: nothing is printed */
/* After output of its own (a figure): readline's prompt and line drawn again. */
void class_redraw(void);

/* The teacher's class (classroom.c): teaching now; the ids of the followers who joined (all
 * of them when ids is NULL: the count), at most cap. */
int class_teaching(void);
int class_joined(const char **ids, int cap);

/* The question and its answers (classroom_tally.c): the open question's id (0: none) with its
 * text and choices; an answer from a follower; the class changed (the live tally is said
 * again); whether a live tally waits to be said; the live tally (prompt line, window); f is
 * the tally on show; after a command, whether its figure replaced the tally. */
uint32_t tally_open(const char **text, const char **opts);
void tally_answer(const char *id, const char *name, uint32_t qid, const char *answer);
void tally_touch(void);
int tally_pending(void);
void tally_live(session *s);
int tally_is(const gb_figure *f);
void tally_after(const gb_figure *before, const gb_figure *now);

/* The follower's side of classroom_wait (classroom_follow.c). */
void follow_fds(struct pollfd *p, int *n);
void follow_service(session *s, const struct pollfd *p, int n);
int follow_timeout(void);
int following(void);
void follow_after(session *s, const char *line, int rc);
void follow_end(void);

#endif
