/* state.c — the session's state as a lesson sees it. A lesson computes answers by running
 * commands, checks itself by running the whole lesson, and lets a student explore between its
 * steps; each time the session is put back afterwards, so what the student sees next is what
 * the lesson expects.
 *
 * This file owns the snapshot of a session (the text and its trace, the engine, the layer-norm
 * form, the view, the current figure and, when asked, the loaded model) and the state an answer
 * is computed on: the text a question names (`text:`), or else the lesson's current text, which
 * is checked against the text of the last `run`. A command that changes the text without
 * naming it (generate) makes the lesson drift: an answer that differs between the two texts
 * fails, because a student who types what the question describes gets the other one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/commands.h"
#include "app/lesson/lesson_int.h"
#include "model/model.h"
#include "viz/figure.h"
#include "viz/window.h"

static int *dup_ids(const int *ids, int n)
{
	int *c = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
	if (n > 0)
		memcpy(c, ids, sizeof(int) * (size_t)n);
	return c;
}

void ids_take(const session *s, ids_copy *c)
{
	c->have_run = s->have_run;
	c->n_ids = s->have_run ? s->trace.n_ids : 0;
	c->n_tgt = s->have_run ? s->trace.n_tgt : 0;
	c->ids = dup_ids(s->trace.ids, c->n_ids);
	c->tgt = dup_ids(s->trace.tgt, c->n_tgt);
}

int ids_same(const session *s, const ids_copy *c)
{
	if (s->have_run != c->have_run)
		return 0;
	if (!c->have_run)
		return 1;
	return s->trace.n_ids == c->n_ids && s->trace.n_tgt == c->n_tgt &&
	       !memcmp(s->trace.ids, c->ids, sizeof(int) * (size_t)c->n_ids) &&
	       (!c->n_tgt || !memcmp(s->trace.tgt, c->tgt, sizeof(int) * (size_t)c->n_tgt));
}

void ids_free(ids_copy *c)
{
	free(c->ids);
	free(c->tgt);
	memset(c, 0, sizeof *c);
}

void snap_take(session *s, snapshot *sn, int flags)
{
	memset(sn, 0, sizeof *sn);
	ids_take(s, &sn->ids);
	sn->text = s->text ? strdup(s->text) : NULL;
	sn->target = s->target ? strdup(s->target) : NULL;
	sn->stage = s->stage, sn->layer = s->layer, sn->head = s->head, sn->tour = s->tour;
	sn->on_show = s->on_show;
	sn->textbook = s->textbook;
	sn->k = s->k;
	sn->disp = display_get(s);
	sn->flags = flags;
	sn->loaded = s->loaded;
	sn->model_dir = s->loaded ? strdup(s->model.dir) : NULL;
	/* Detached, so the command's own show() cannot free it: it comes back afterwards. */
	if (!(flags & SNAP_KEEP_FIG)) {
		sn->fig = s->fig;
		s->fig = NULL;
	}
}

/* The model of the snapshot again, when a command loaded another one; 0 or -1. */
static int reload(session *s, const snapshot *sn)
{
	if (!(sn->flags & SNAP_MODEL) || !sn->loaded || (s->loaded && !strcmp(s->model.dir, sn->model_dir)))
		return 0;
	gb_model m;
	gb_err err;
	if (gb_model_load(&m, sn->model_dir, &err)) {
		errorf("lesson: cannot load %s again afterwards: %s", sn->model_dir, err.msg);
		return -1;
	}
	if (s->loaded)
		gb_model_free(&s->model);
	s->model = m;
	s->loaded = 1;
	s->have_run = 0;
	return 0;
}

int snap_restore(session *s, snapshot *sn)
{
	int model_back = (sn->flags & SNAP_MODEL) && sn->loaded && !(s->loaded && !strcmp(s->model.dir, sn->model_dir));
	int text_back = !ids_same(s, &sn->ids);
	int ok = !reload(s, sn);
	int same = ok && !model_back && s->k == sn->k && s->textbook == sn->textbook && ids_same(s, &sn->ids);
	s->k = sn->k;
	s->textbook = sn->textbook;
	if (ok && !same && sn->ids.have_run) {
		gb_err err;
		gb_fwd_opts o = { 0 };
		o.k = s->k;
		o.textbook_ln = s->textbook;
		s->have_run = !gb_forward(&s->model, sn->ids.ids, sn->ids.n_ids, s->model.cfg.encdec ? sn->ids.tgt : NULL,
		                          s->model.cfg.encdec ? sn->ids.n_tgt : 0, &s->trace, &o, &err);
		if (!s->have_run)
			errorf("lesson: cannot restore the text: %s", err.msg);
	} else if (!sn->ids.have_run)
		s->have_run = 0;
	free(s->text);
	free(s->target);
	s->text = sn->text;
	s->target = sn->target;
	s->stage = sn->stage, s->layer = sn->layer, s->head = sn->head, s->tour = sn->tour;
	s->on_show = sn->on_show;
	display_set(s, &sn->disp);
	/* Without a figure before, the command's own stays: the window may be showing it. The one
	 * path every figure takes points the window back at it before the other is freed. */
	if (sn->fig)
		session_adopt(s, sn->fig, NULL);
	ids_free(&sn->ids);
	free(sn->model_dir);
	sn->model_dir = NULL;
	return model_back || text_back;
}

/* The session's text becomes ids (and tgt), run quietly with its settings. */
static int set_ids(session *s, const ids_copy *c, const char *text)
{
	gb_err err;
	gb_fwd_opts o = { 0 };
	o.k = s->k;
	o.textbook_ln = s->textbook;
	s->have_run = !gb_forward(&s->model, c->ids, c->n_ids, s->model.cfg.encdec ? c->tgt : NULL,
	                          s->model.cfg.encdec ? c->n_tgt : 0, &s->trace, &o, &err);
	free(s->text);
	s->text = text ? strdup(text) : NULL;
	return s->have_run ? 0 : -1;
}

void text_state_free(text_state *ts)
{
	ids_free(&ts->base);
	free(ts->text);
	free(ts->drift_cmd);
	memset(ts, 0, sizeof *ts);
}

void track_text(runner *r, const char *cmd, int line, int rc, const ids_copy *before)
{
	session *s = r->s;
	text_state *ts = &r->ts;
	char w[64];
	first_word(cmd, w, sizeof w);
	const command *c = lookup(w);
	if (!s->have_run) { /* load: no text any more */
		text_state_free(ts);
		return;
	}
	/* run and translate name the text they leave: the state a question after them describes */
	if (rc >= 0 && c && (!strcmp(c->name, "run") || !strcmp(c->name, "translate"))) {
		text_state_free(ts);
		ids_take(s, &ts->base);
		ts->text = s->text ? strdup(s->text) : NULL;
		ts->line = line;
		return;
	}
	if (ts->base.have_run && !ts->drift_line && !ids_same(s, before)) {
		ts->drift_line = line;
		ts->drift_cmd = strdup(cmd);
	}
}

/* An answer that reads the session (a command, or calc over the trace) can depend on the
 * text; a literal, or a figure or printed text already on show, cannot change with it. */
static int reads_session(const answer *a)
{
	if (a->sel == SEL_LITERAL)
		return 0;
	if (a->sel == SEL_CALC || a->sel == SEL_PICK)
		return 1;
	return a->arg[0] != 0;
}

int eval_at(runner *r, const answer *a, const char *text, value *v, char *err, size_t cap)
{
	session *s = r->s;
	snapshot sn;
	if (text) {
		/* the question's own text, run quietly; the session is put back afterwards */
		char *line = malloc(strlen(text) + 8), *keep = r->out;
		sprintf(line, "run %s", text);
		snap_take(s, &sn, 0);
		r->out = NULL;
		int rc = captured(r, line, 1);
		free(r->out);
		r->out = keep;
		if (rc < 0) {
			snprintf(err, cap, "its text cannot run ('%s' failed)", line);
			memset(v, 0, sizeof *v);
		} else
			rc = eval_answer(r, a, v, err, cap);
		snap_restore(s, &sn);
		free(line);
		return rc;
	}
	int rc = eval_answer(r, a, v, err, cap);
	const text_state *ts = &r->ts;
	if (rc || !ts->drift_line || !ts->base.have_run || !reads_session(a))
		return rc;
	/* The text changed since the last run: the answer must not depend on it. */
	value w;
	char e2[256];
	snap_take(s, &sn, 0);
	int rc2 = set_ids(s, &ts->base, ts->text) ? -1 : eval_answer(r, a, &w, e2, sizeof e2);
	snap_restore(s, &sn);
	if (rc2)
		return rc; /* nothing to compare with */
	int same = !strcmp(w.text, v->text);
	if (!same) {
		char now[80], then[80];
		gb_label_display(v->text, 30, now, sizeof now);
		gb_label_display(w.text, 30, then, sizeof then);
		snprintf(err, cap,
		         "it depends on the text, which '%s' (line %d) changed after the run of line %d: it is %s now "
		         "but %s on the text that ran; put 'text: %s' under the question, or run the text again above it",
		         ts->drift_cmd, ts->drift_line, ts->line, now, then, ts->text ? ts->text : "...");
		free(v->text);
		memset(v, 0, sizeof *v);
	}
	free(w.text);
	return same ? 0 : -3;
}
