/* classroom.c — the teacher's side of a class (classroom.h): `teach`, the hooks the
 * dispatcher and the lesson runner call, and classroom_wait, the one poll() every prompt waits
 * in while a class runs.
 *
 * The state that travels is rebuilt from the session whenever the teacher is idle (a wait, or
 * the end of a command typed at the top level) and only what changed is sent. The figure on
 * show is named by the command that made it: the dispatcher's hooks remember, for each new
 * figure, the command and the ids and cursor it ran on, so a follower can make the same figure
 * in its own engine. A figure no command made (the window's keys) travels as its stage and
 * cursor. One connection's bad bytes close that connection, with a line on stderr saying why;
 * nothing else changes. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/classroom.h"
#include "app/classroom_int.h"
#include "app/cmd.h"
#include "app/views.h"
#include "viz/figure.h"

#define MAX_FOLLOWERS 1024
#define N_REC 16
#define HELLO_US (10ull * 1000000ull) /* a connection must say hello within 10 s */

typedef struct runstate {
	int valid;
	int32_t *ids, *tgt;
	int n_ids, n_tgt;
	int32_t cur[4];
	gb_figure *fig;
} runstate;

typedef struct record {
	gb_figure *fig;           /* the figure a command made (compared, never dereferenced) */
	char *title, *cmd;        /* title: its title and subtitle (fig_words) */
	runstate pre;             /* the ids and cursor it ran on */
} record;

typedef struct follower {
	gbx_conn c;
	int joined;
	unsigned long long since;
	char id[64], name[64];
} follower;

static struct {
	int on, lfd, port;
	int interactive;          /* the teacher is at a terminal: joins are said */
	char code[32], host[64];
	follower *f;
	int n_f;
	cstate sent;
	int sent_any;
	uint64_t seq;
	unsigned long long updates, bytes, catchups;
	record rec[N_REC];
	int rec_next;
	runstate stack[32];
	int depth;
	char *lesson, *heading;
	int step, n_steps;
} T = { .lfd = -1 };

int class_teaching(void) { return T.on; }

int class_joined(const char **ids, int cap)
{
	int n = 0;
	for (int i = 0; i < T.n_f; i++)
		if (T.f[i].joined) {
			if (ids && n < cap)
				ids[n] = T.f[i].id;
			n++;
		}
	return ids && n > cap ? cap : n;
}

int classroom_active(void) { return T.on || following(); }
void classroom_prompt(int on) { class_prompt_on = on; }

static void run_take(const session *s, runstate *r)
{
	r->valid = 1;
	r->n_ids = s->have_run ? s->trace.n_ids : 0;
	r->n_tgt = s->have_run ? s->trace.n_tgt : 0;
	r->ids = malloc(sizeof(int32_t) * (size_t)(r->n_ids + 1));
	r->tgt = malloc(sizeof(int32_t) * (size_t)(r->n_tgt + 1));
	for (int i = 0; i < r->n_ids; i++)
		r->ids[i] = s->trace.ids[i];
	for (int i = 0; i < r->n_tgt; i++)
		r->tgt[i] = s->trace.tgt[i];
	r->cur[0] = s->stage;
	r->cur[1] = s->layer;
	r->cur[2] = s->head;
	r->cur[3] = s->tour;
	r->fig = s->fig;
}

static void run_free(runstate *r)
{
	free(r->ids);
	free(r->tgt);
	memset(r, 0, sizeof *r);
}

/* A figure by its title and subtitle (what it shows, and of which text), for telling a
 * remembered figure from a new one at the same address. */
static char *fig_words(const gb_figure *f)
{
	const char *t = f->title ? f->title : "", *u = f->subtitle ? f->subtitle : "";
	char *w = malloc(strlen(t) + strlen(u) + 2);
	sprintf(w, "%s\n%s", t, u);
	return w;
}

static record *rec_find(const gb_figure *f)
{
	if (!f)
		return NULL;
	record *hit = NULL;
	char *w = NULL;
	for (int k = 1; k <= N_REC && !hit; k++) { /* newest first: a freed figure's address may come back */
		record *r = &T.rec[(T.rec_next - k + N_REC) % N_REC];
		if (r->fig == f && r->title) {
			if (!w)
				w = fig_words(f);
			if (!strcmp(r->title, w))
				hit = r;
		}
	}
	free(w);
	return hit;
}

void classroom_before(session *s)
{
	if (T.depth >= (int)(sizeof T.stack / sizeof T.stack[0])) {
		T.depth++;
		return;
	}
	/* figures are remembered before a class starts too: `teach` in the middle of a session
	 * sends the figure already on show by its command */
	run_take(s, &T.stack[T.depth++]);
}

static void teacher_flush(session *s);

void classroom_after(session *s, const char *line, int rc)
{
	if (T.depth <= 0)
		return;
	int d = --T.depth;
	if (d < (int)(sizeof T.stack / sizeof T.stack[0])) {
		runstate *pre = &T.stack[d];
		tally_after(pre->fig, s->fig);
		if (pre->valid && rc == 0 && s->fig && s->fig != pre->fig && !tally_is(s->fig) && !rec_find(s->fig)) {
			record *r = &T.rec[T.rec_next];
			T.rec_next = (T.rec_next + 1) % N_REC;
			free(r->title);
			free(r->cmd);
			run_free(&r->pre);
			r->fig = s->fig;
			r->title = fig_words(s->fig);
			while (*line == ' ' || *line == '\t')
				line++;
			r->cmd = strdup(line);
			r->pre = *pre;
			memset(pre, 0, sizeof *pre);
		} else if (pre->valid)
			run_free(pre);
	}
	if (T.on && d == 0)
		teacher_flush(s);
	if (following())
		follow_after(s, line, rc);
}

void classroom_step(const char *title, int step, int n_steps, const char *heading)
{
	free(T.lesson);
	free(T.heading);
	T.lesson = strdup(title ? title : "");
	T.heading = strdup(title && heading ? heading : "");
	T.step = title ? step : 0;
	T.n_steps = title ? n_steps : 0;
}

/* ---- the state, rebuilt and sent ---------------------------------------------------------- */

static void teacher_now(session *s, cstate *c)
{
	cstate_init(c);
	free(c->model);
	c->model = strdup(class_model_name(s));
	c->hash = model_hash(s);
	free(c->text);
	c->text = strdup(s->have_run && s->text ? s->text : "");
	runstate now;
	run_take(s, &now);
	free(c->ids);
	free(c->tgt);
	c->ids = now.ids;
	c->tgt = now.tgt;
	c->n_ids = now.n_ids;
	c->n_tgt = now.n_tgt;
	memcpy(c->cur, now.cur, sizeof c->cur);
	free(c->lesson);
	free(c->heading);
	c->lesson = strdup(T.lesson ? T.lesson : "");
	c->heading = strdup(T.heading ? T.heading : "");
	c->step[0] = T.step;
	c->step[1] = T.n_steps;
	record *r = rec_find(s->fig);
	free(c->view);
	if (r) {
		c->view = strdup(r->cmd);
		free(c->vids);
		free(c->vtgt);
		c->vids = malloc(sizeof(int32_t) * (size_t)(r->pre.n_ids + 1));
		c->vtgt = malloc(sizeof(int32_t) * (size_t)(r->pre.n_tgt + 1));
		memcpy(c->vids, r->pre.ids, sizeof(int32_t) * (size_t)r->pre.n_ids);
		memcpy(c->vtgt, r->pre.tgt, sizeof(int32_t) * (size_t)r->pre.n_tgt);
		c->n_vids = r->pre.n_ids;
		c->n_vtgt = r->pre.n_tgt;
		memcpy(c->vcur, r->pre.cur, sizeof c->vcur);
	} else if (tally_is(s->fig) && T.sent_any) {
		/* the tally is the teacher's own: followers keep the view they had */
		c->view = strdup(T.sent.view);
		free(c->vids);
		free(c->vtgt);
		c->vids = malloc(sizeof(int32_t) * (size_t)(T.sent.n_vids + 1));
		c->vtgt = malloc(sizeof(int32_t) * (size_t)(T.sent.n_vtgt + 1));
		memcpy(c->vids, T.sent.vids, sizeof(int32_t) * (size_t)T.sent.n_vids);
		memcpy(c->vtgt, T.sent.vtgt, sizeof(int32_t) * (size_t)T.sent.n_vtgt);
		c->n_vids = T.sent.n_vids;
		c->n_vtgt = T.sent.n_vtgt;
		memcpy(c->vcur, T.sent.vcur, sizeof c->vcur);
	} else
		c->view = strdup(s->fig && !tally_is(s->fig) && s->stage >= 0 && s->stage < ST_N ? "@stage" : "");
	const char *qt, *qo;
	c->qid = tally_open(&qt, &qo);
	free(c->qtext);
	free(c->qopts);
	c->qtext = strdup(qt);
	c->qopts = strdup(qo);
}

static void drop(int i, const char *why)
{
	follower *f = &T.f[i];
	if (class_prompt_on)
		printf("\r\033[K"); /* the line readline was drawing, drawn again below */
	fflush(stdout);
	fprintf(stderr, "glassbox: classroom: closed %s%s%s%s: %s\n", f->c.peer, f->name[0] ? " (" : "", f->name,
	        f->name[0] ? ")" : "", why);
	class_redraw();
	conn_close(&f->c);
	T.f[i] = T.f[--T.n_f];
	tally_touch();
}

/* Sends frame b (n bytes) to every follower that has joined. */
static void broadcast(const unsigned char *b, size_t n)
{
	char err[160];
	for (int i = 0; i < T.n_f; i++)
		if (T.f[i].joined && conn_send(&T.f[i].c, b, n, err, sizeof err)) {
			drop(i, err);
			i--;
		}
}

static unsigned char frame[GBX_HDR + GBX_MAX_MSG];

static void teacher_flush(session *s)
{
	if (!T.on)
		return;
	cstate now;
	teacher_now(s, &now);
	gbx_msg *m = malloc(sizeof *m);
	gbx_init(m, GBX_STATE);
	if (cstate_delta(&now, T.sent_any ? &T.sent : NULL, m)) {
		now.seq = ++T.seq;
		gbx_set_u(m, GBX_F_SEQ, now.seq);
		gbx_set_u(m, GBX_F_TIME, net_now_us());
		long n = gbx_encode(m, frame, sizeof frame);
		if (n < 0) {
			/* a text too long for one frame: the view still travels, the text is cut */
			fprintf(stderr, "glassbox: classroom: this state is larger than a frame (%u bytes): not sent\n",
			        GBX_MAX_MSG);
		} else {
			T.updates++;
			T.bytes += (unsigned long long)n;
			broadcast(frame, (size_t)n);
		}
		cstate_copy(&T.sent, &now);
		T.sent_any = 1;
	}
	free(m);
	cstate_free(&now);
}

/* A follower that has just joined (or come back) gets everything at once. */
static int catch_up(follower *f)
{
	char err[160];
	gbx_msg *m = malloc(sizeof *m);
	gbx_init(m, GBX_STATE);
	cstate_delta(&T.sent, NULL, m);
	gbx_set_u(m, GBX_F_SEQ, T.sent.seq);
	gbx_set_u(m, GBX_F_TIME, net_now_us());
	gbx_set_u(m, GBX_F_FLAGS, GBX_FULL);
	int rc = conn_send_msg(&f->c, m, err, sizeof err);
	free(m);
	T.catchups++;
	return rc;
}

/* ---- the sockets ------------------------------------------------------------------------- */

static void on_message(int i, const gbx_msg *m)
{
	follower *f = &T.f[i];
	if (!f->joined) {
		if (m->type != GBX_HELLO) {
			drop(i, "spoke before its hello");
			return;
		}
		if (strcmp(m->s[GBX_F_CODE], T.code)) {
			gbx_msg *b = malloc(sizeof *b);
			char err[160];
			gbx_init(b, GBX_BYE);
			gbx_set_s(b, GBX_F_REASON, "wrong code: ask the teacher for the code on the join line");
			conn_send_msg(&f->c, b, err, sizeof err);
			free(b);
			drop(i, "wrong code");
			return;
		}
		f->joined = 1;
		snprintf(f->id, sizeof f->id, "%s", m->s[GBX_F_ID]);
		snprintf(f->name, sizeof f->name, "%s", gbx_has(m, GBX_F_NAME) ? m->s[GBX_F_NAME] : "");
		if (T.interactive)
			class_say("%s joined (%s).\n", f->name[0] ? f->name : "a student", f->c.peer);
		tally_touch();
		if (catch_up(f))
			drop(i, "could not send the state");
		return;
	}
	if (m->type == GBX_ANSWER)
		tally_answer(f->id, f->name, (uint32_t)m->u[GBX_F_QID], m->s[GBX_F_ANSWER]);
	else if (m->type == GBX_BYE)
		drop(i, "left");
	else {
		char why[80];
		snprintf(why, sizeof why, "a follower may not send %s messages", gbx_type_name(m->type));
		drop(i, why);
	}
}

static void serve(int i)
{
	follower *f = &T.f[i];
	char err[160];
	int closed = conn_read(&f->c, err, sizeof err);
	gbx_msg *m = malloc(sizeof *m);
	gbx_error e;
	int n = T.n_f, rc;
	/* frames already whole are handled even when the peer closed after sending them */
	while (T.n_f == n && T.f[i].c.fd == f->c.fd && (rc = conn_next(&f->c, m, &e)) == 1)
		on_message(i, m);
	if (T.n_f == n && rc < 0)
		drop(i, e.msg);
	else if (T.n_f == n && closed)
		drop(i, f->joined ? "left (connection closed)" : err);
	free(m);
}

int classroom_wait(session *s, int fd, int timeout_ms)
{
	if (T.on)
		teacher_flush(s);
	struct pollfd p[MAX_FOLLOWERS + 8];
	int n = 0;
	if (fd >= 0)
		p[n++] = (struct pollfd){ fd, POLLIN, 0 };
	int lslot = -1, first = n;
	if (T.on) {
		lslot = n;
		p[n++] = (struct pollfd){ T.lfd, POLLIN, 0 };
		first = n;
		for (int i = 0; i < T.n_f; i++)
			p[n++] = (struct pollfd){ T.f[i].c.fd, (short)(POLLIN | (T.f[i].c.out_n ? POLLOUT : 0)), 0 };
		if (tally_pending() && (timeout_ms < 0 || timeout_ms > 250))
			timeout_ms = 250;
		if (T.n_f && (timeout_ms < 0 || timeout_ms > 1000))
			timeout_ms = 1000; /* hellos that never come are timed out */
	}
	int fstart = n;
	follow_fds(p, &n);
	int ft = follow_timeout();
	if (ft >= 0 && (timeout_ms < 0 || ft < timeout_ms))
		timeout_ms = ft;
	int k = poll(p, (nfds_t)n, timeout_ms);
	if (k < 0)
		return errno == EINTR ? -1 : 0;
	if (T.on) {
		int nf = T.n_f;
		/* followers from the last to the first: a dropped one's slot takes the last one */
		for (int i = nf - 1; i >= 0; i--) {
			short re = p[first + i].revents;
			if (re & (POLLIN | POLLHUP | POLLERR))
				serve(i);
			else if (re & POLLOUT) {
				char err[160];
				if (conn_flush(&T.f[i].c, err, sizeof err))
					drop(i, err);
			}
		}
		unsigned long long now = net_now_us();
		for (int i = T.n_f - 1; i >= 0; i--)
			if (!T.f[i].joined && now - T.f[i].since > HELLO_US)
				drop(i, "no hello within 10 s");
		if (p[lslot].revents & POLLIN)
			for (;;) {
				gbx_conn c;
				if (net_accept(T.lfd, &c))
					break;
				if (T.n_f >= MAX_FOLLOWERS) {
					fprintf(stderr, "glassbox: classroom: closed %s: the class is full (%d)\n", c.peer, MAX_FOLLOWERS);
					conn_close(&c);
					continue;
				}
				T.f = realloc(T.f, sizeof *T.f * (size_t)(T.n_f + 1));
				follower *f = &T.f[T.n_f++];
				memset(f, 0, sizeof *f);
				f->c = c;
				f->since = now;
			}
		tally_live(s);
	}
	follow_service(s, p + fstart, n - fstart);
	return fd >= 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR)) ? 1 : 0;
}

/* ---- the commands ------------------------------------------------------------------------ */

static int joined_count(void)
{
	int joined = 0;
	for (int k = 0; k < T.n_f; k++)
		joined += T.f[k].joined;
	return joined;
}

static void teach_status(void)
{
	int joined = joined_count();
	printf("Teaching on port %d, code %s: %d following.\n", T.port, T.code, joined);
	printf("Join with: glassbox --follow %s:%d --code %s\n", T.host, T.port, T.code);
	printf("%llu updates sent, %llu bytes each on average (%llu catch-ups).\n", T.updates,
	       T.updates ? T.bytes / T.updates : 0, T.catchups);
}

static void class_stop(session *s, const char *reason)
{
	teacher_flush(s);
	gbx_msg *b = malloc(sizeof *b);
	gbx_init(b, GBX_BYE);
	gbx_set_s(b, GBX_F_REASON, reason);
	long n = gbx_encode(b, frame, sizeof frame);
	free(b);
	broadcast(frame, (size_t)n);
	/* what is queued goes out (up to 2 s), then every connection closes */
	unsigned long long until = net_now_us() + 2000000;
	for (;;) {
		struct pollfd p[MAX_FOLLOWERS];
		int k = 0;
		for (int i = 0; i < T.n_f; i++)
			if (T.f[i].c.out_n)
				p[k++] = (struct pollfd){ T.f[i].c.fd, POLLOUT, 0 };
		if (!k || net_now_us() > until)
			break;
		poll(p, (nfds_t)k, 50);
		char err[160];
		for (int i = 0; i < T.n_f; i++)
			if (T.f[i].c.out_n && conn_flush(&T.f[i].c, err, sizeof err))
				T.f[i].c.out_n = 0;
	}
	for (int i = 0; i < T.n_f; i++)
		conn_close(&T.f[i].c);
	T.n_f = 0;
	close(T.lfd);
	T.lfd = -1;
	T.on = 0;
}

void classroom_end(session *s)
{
	if (T.on)
		class_stop(s, "the teacher's glassbox ended");
	follow_end();
}

/* teach --wait N: the class starts when N students follow (a script's start; Ctrl-C stops). */
static int wait_for(session *s, int n)
{
	unsigned long long until = net_now_us() + 120ull * 1000000ull;
	while (joined_count() < n) {
		if (interrupted || net_now_us() > until) {
			interrupted = 0;
			errorf("%d of %d students follow: stopped waiting", joined_count(), n);
			return -1;
		}
		classroom_wait(s, -1, 200);
	}
	return 0;
}

int cmd_teach(session *s, int argc, char **argv, const char *rest)
{
	int port = CLASS_PORT, state = 0, wait = 0;
	const char *code = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "end") || !strcmp(argv[i], "--end")) {
			if (!T.on) {
				errorf("no class is being taught");
				return -1;
			}
			int joined = joined_count();
			class_stop(s, "the teacher ended the class");
			printf("Class ended (%d were following; %llu updates, %llu bytes each on average).\n", joined, T.updates,
			       T.updates ? T.bytes / T.updates : 0);
			return 0;
		} else if (!strcmp(argv[i], "--state"))
			state = 1;
		else if (!strcmp(argv[i], "--wait") && i + 1 < argc) {
			if (parse_int(argv[++i], 1, MAX_FOLLOWERS, &wait, "--wait"))
				return -1;
		}
		else if (!strcmp(argv[i], "--port") && i + 1 < argc) {
			if (parse_int(argv[++i], 0, 65535, &port, "--port"))
				return -1;
		} else if (!strcmp(argv[i], "--code") && i + 1 < argc) {
			code = argv[++i];
			if (!*code || strlen(code) >= sizeof T.code) {
				errorf("--code takes a short code such as 4-7-2-9");
				return -1;
			}
		} else
			return usage(argv[0]);
	}
	if (wait) {
		if (!T.on) {
			errorf("no class is being taught: teach first, then teach --wait N");
			return -1;
		}
		return wait_for(s, wait);
	}
	if (state) {
		if (!T.on) {
			errorf("no class is being taught");
			return -1;
		}
		teacher_flush(s);
		cstate_line(stdout, "final", &T.sent, fig_hash(tally_is(s->fig) ? NULL : s->fig));
		putchar('\n');
		return 0;
	}
	if (T.on) {
		if (argc > 1) {
			errorf("a class is already being taught (teach end first)");
			return -1;
		}
		teach_status();
		return 0;
	}
	if (need_model(s))
		return -1;
	char err[200];
	int fd = net_listen(port, &T.port, err, sizeof err);
	if (fd < 0) {
		errorf("%s", err);
		return -1;
	}
	T.lfd = fd;
	if (code)
		snprintf(T.code, sizeof T.code, "%s", code);
	else {
		unsigned char r[4] = { 0 };
		int u = open("/dev/urandom", O_RDONLY);
		if (u < 0 || read(u, r, 4) != 4)
			for (int i = 0; i < 4; i++)
				r[i] = (unsigned char)(net_now_us() >> (8 * i));
		if (u >= 0)
			close(u);
		snprintf(T.code, sizeof T.code, "%d-%d-%d-%d", r[0] % 10, r[1] % 10, r[2] % 10, r[3] % 10);
	}
	net_lan_address(T.host, sizeof T.host);
	T.on = 1;
	T.interactive = s->interactive;
	T.sent_any = 0;
	T.updates = T.bytes = T.catchups = 0;
	teacher_flush(s);
	printf("Teaching %s. Students join with:\n  glassbox --follow %s:%d --code %s\n", class_model_name(s), T.host, T.port,
	       T.code);
	printf("(they run their own copy of %s; only your commands and view travel. 'teach' shows who follows, "
	       "'teach end' ends the class.)\n", class_model_name(s));
	fflush(stdout);
	return 0;
}
