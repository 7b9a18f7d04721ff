/* classroom_follow.c — a student following a class (classroom.h): `follow`, `answer`,
 * `glassbox --follow`. The teacher's state arrives as a full snapshot on joining (and on
 * coming back), then as changes; the follower keeps the whole state and shows it by running
 * the teacher's view command in its own engine, on the same ids and cursor. A command of the
 * student's own (anything but answer, follow, help) leaves the teacher's view until `follow`;
 * a lost connection is tried again every half second (each try waits 0.3 s at most) and
 * catches up the same way. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/classroom.h"
#include "app/classroom_int.h"
#include "app/cmd.h"
#include "app/commands.h"
#include "app/views.h"
#include "viz/figure.h"

#define RETRY_US 500000ull

static struct {
	int on, connected, ended, refused, exploring, applying, print;
	gbx_conn c;
	char host[256], code[64], id[40], name[64];
	int port;
	cstate st;                /* the teacher's state as received */
	cstate shown;             /* what was last put on this screen */
	int have_state, pending, fresh;
	unsigned long long next_try, sent_us, recv_us;
	size_t bytes;
	FILE *out;                /* --print: state lines (stdout itself goes to /dev/null) */
	char **answers;           /* --answers: one per question, "-" for none */
	int n_answers, next_answer;
	uint32_t q_seen;          /* the last question shown (or answered from --answers) */
	int model_bad;            /* the teacher's model is not here: said once per model */
	uint64_t bad_hash;        /* the hash of the model that was not found */
} F = { .c = { .fd = -1 } };

int following(void) { return F.on; }

/* The commands a follower repeats: those that draw from the current run, never those that
 * write files, load folders, train or open windows. */
static int replayable(const char *cmd)
{
	static const char *const ok[] = { "tokenize", "run", "step", "embed", "pe", "qkv", "scores", "attn", "model",
	                                  "ln", "ffn", "resid", "next", "cross", "arch", "show", "pair", "heads",
	                                  "generate", "beam", "translate", "calc", "near", "masks", "lens", "ablate",
	                                  "print", "trace", "loss", "positions", "norms", "experts", "linear",
	                                  "receptive", NULL };
	char w[32];
	int n = 0;
	while (cmd[n] && cmd[n] != ' ' && n < 31)
		n++;
	memcpy(w, cmd, (size_t)n);
	w[n] = 0;
	for (int i = 0; ok[i]; i++)
		if (!strcmp(w, ok[i]))
			return 1;
	return 0;
}

static void send_hello(void)
{
	gbx_msg *m = malloc(sizeof *m);
	char err[160];
	gbx_init(m, GBX_HELLO);
	gbx_set_s(m, GBX_F_CODE, F.code);
	gbx_set_s(m, GBX_F_ID, F.id);
	if (F.name[0])
		gbx_set_s(m, GBX_F_NAME, F.name);
	if (conn_send_msg(&F.c, m, err, sizeof err))
		F.connected = 0;
	free(m);
}

static int try_connect(int quiet)
{
	char err[300];
	/* a retry waits little: the prompt must not freeze while the teacher is away */
	if (net_connect(F.host, F.port, quiet ? 300 : 3000, &F.c, err, sizeof err)) {
		if (!quiet)
			errorf("%s", err);
		F.next_try = net_now_us() + RETRY_US;
		return -1;
	}
	F.connected = 1;
	send_hello();
	return 0;
}

static int same_ids(const session *s, const int32_t *ids, int n, const int32_t *tgt, int nt)
{
	if (!s->have_run)
		return n == 0;
	if (s->trace.n_ids != n || s->trace.n_tgt != nt)
		return 0;
	for (int i = 0; i < n; i++)
		if (s->trace.ids[i] != ids[i])
			return 0;
	for (int i = 0; i < nt; i++)
		if (s->trace.tgt[i] != tgt[i])
			return 0;
	return 1;
}

static int run_ids(session *s, const int32_t *ids, int n, const int32_t *tgt, int nt)
{
	if (!n || same_ids(s, ids, n, tgt, nt))
		return 0;
	int *a = malloc(sizeof *a * (size_t)n), *b = malloc(sizeof *b * (size_t)(nt + 1));
	for (int i = 0; i < n; i++)
		a[i] = ids[i];
	for (int i = 0; i < nt; i++)
		b[i] = tgt[i];
	int rc = forward(s, a, n, nt ? b : NULL, nt);
	free(a);
	free(b);
	return rc;
}

/* The teacher's cursor, when it is one (a frame is never trusted: the views check the layer
 * and head against the model, this checks what would index a table). */
static void set_cursor(session *s, const int32_t *c)
{
	if (c[0] < 0 || c[0] >= ST_N || c[1] < 1 || c[1] > 100000 || c[2] < 1 || c[2] > 100000 || c[3] < 0 ||
	    c[3] > 100000)
		return;
	s->stage = c[0];
	s->layer = c[1];
	s->head = c[2];
	s->tour = c[3];
}

/* The teacher's model, here: the one loaded, or the one of that name; 0 when they match. */
static int ensure_model(session *s)
{
	if (s->loaded && model_hash(s) == F.st.hash)
		return 0;
	if (F.model_bad && F.bad_hash == F.st.hash)
		return -1; /* tried already: said once */
	F.bad_hash = F.st.hash;
	if (F.st.model[0] && !strchr(F.st.model, '/') && strcmp(F.st.model, "..") && strcmp(F.st.model, ".")) {
		char line[400];
		snprintf(line, sizeof line, "load %s", F.st.model);
		command_line(s, line);
		if (s->loaded && model_hash(s) == F.st.hash) {
			F.model_bad = 0;
			return 0;
		}
	}
	if (!F.model_bad)
		class_say("The teacher uses the model %s (hash %016llx), which this glassbox does not have%s: copy the "
		          "teacher's model folder here and follow again with --model DIR.\n",
		          F.st.model, (unsigned long long)F.st.hash, s->loaded ? " (the one loaded differs)" : "");
	F.model_bad = 1;
	return -1;
}

static void say_question(void)
{
	class_say("Question: %s\n", F.st.qtext);
	if (F.st.qopts[0]) {
		char *o = strdup(F.st.qopts), *save = NULL;
		int k = 0;
		for (char *l = strtok_r(o, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
			class_say("  %c) %s\n", 'a' + k++, l);
		free(o);
	}
	class_say("Answer with: answer %s\n", F.st.qopts[0] ? "LETTER" : "YOUR ANSWER");
}

static void send_answer(const char *a)
{
	gbx_msg *m = malloc(sizeof *m);
	char err[160];
	gbx_init(m, GBX_ANSWER);
	gbx_set_u(m, GBX_F_QID, F.st.qid);
	gbx_set_s(m, GBX_F_ANSWER, a);
	if (F.connected && conn_send_msg(&F.c, m, err, sizeof err))
		F.connected = 0;
	free(m);
}

/* The state as this session holds it, for the lines a test compares with the teacher's: the
 * teacher's lesson, view and question, with this session's own model, run, text, cursor and
 * figure (its hash). */
static void own_line(session *s, const char *what)
{
	cstate c;
	cstate_init(&c);
	cstate_copy(&c, &F.st);
	int n = s->have_run ? s->trace.n_ids : 0, nt = s->have_run ? s->trace.n_tgt : 0;
	free(c.model);
	free(c.text);
	free(c.ids);
	free(c.tgt);
	c.model = strdup(class_model_name(s));
	c.hash = model_hash(s);
	c.text = strdup(s->have_run && s->text ? s->text : "");
	c.ids = malloc(sizeof(int32_t) * (size_t)(n + 1));
	c.tgt = malloc(sizeof(int32_t) * (size_t)(nt + 1));
	for (int i = 0; i < n; i++)
		c.ids[i] = s->trace.ids[i];
	for (int i = 0; i < nt; i++)
		c.tgt[i] = s->trace.tgt[i];
	c.n_ids = n;
	c.n_tgt = nt;
	c.cur[0] = s->stage;
	c.cur[1] = s->layer;
	c.cur[2] = s->head;
	c.cur[3] = s->tour;
	cstate_line(F.out, what, &c, F.model_bad ? 0 : fig_hash(s->fig));
	cstate_free(&c);
}

/* A new question reaches a student even while exploring: shown at the prompt, or answered
 * from --answers. */
static void question(int again)
{
	if (!F.st.qid || (F.st.qid == F.q_seen && !again))
		return;
	int first = F.st.qid != F.q_seen;
	F.q_seen = F.st.qid;
	if (!F.print)
		say_question();
	else if (first && F.next_answer < F.n_answers) {
		const char *a = F.answers[F.next_answer++];
		if (strcmp(a, "-"))
			send_answer(a);
	}
}

/* Puts the teacher's state on this screen (all of it after a catch-up or a `follow`). */
static void apply(session *s)
{
	F.pending = 0;
	if (F.exploring) {
		question(0);
		return;
	}
	F.applying = 1;
	/* in the explorer, what the replayed commands print would land on its screen */
	int saved = -1;
	if (class_fullscreen) {
		fflush(stdout);
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0) {
			saved = dup(1);
			dup2(null, 1);
			close(null);
		}
	}
	int all = F.fresh;
	F.fresh = 0;
	cstate *o = &F.shown;
	int model_new = all || strcmp(o->model, F.st.model) || o->hash != F.st.hash;
	int ok = ensure_model(s) == 0;
	int view_new = all || model_new || strcmp(o->view, F.st.view) || o->n_vids != F.st.n_vids ||
	               (F.st.n_vids && memcmp(o->vids, F.st.vids, sizeof(int32_t) * (size_t)F.st.n_vids)) ||
	               memcmp(o->vcur, F.st.vcur, sizeof o->vcur);
	if (all || strcmp(o->lesson, F.st.lesson) || memcmp(o->step, F.st.step, sizeof o->step))
		if (F.st.lesson[0] && !F.print)
			class_say("── %s, step %d of %d: %s\n", F.st.lesson, F.st.step[0], F.st.step[1], F.st.heading);
	if (ok && view_new) {
		if (class_prompt_on)
			printf("\r\033[K");
		if (!strcmp(F.st.view, "@stage") && F.st.cur[0] >= 0 && F.st.cur[0] < ST_N) {
			run_ids(s, F.st.ids, F.st.n_ids, F.st.tgt, F.st.n_tgt);
			show_stage(s, F.st.cur[0], F.st.cur[1], F.st.cur[2]);
		} else if (F.st.view[0]) {
			run_ids(s, F.st.vids, F.st.n_vids, F.st.vtgt, F.st.n_vtgt);
			set_cursor(s, F.st.vcur);
			if (replayable(F.st.view)) {
				if (!F.print)
					printf("teacher> %s\n", F.st.view);
				command_line(s, F.st.view);
			} else
				class_say("(the teacher ran '%s', which a follower does not repeat)\n", F.st.view);
		}
		class_redraw();
	}
	if (ok) {
		run_ids(s, F.st.ids, F.st.n_ids, F.st.tgt, F.st.n_tgt);
		if (s->have_run && F.st.text[0]) {
			free(s->text);
			s->text = strdup(F.st.text);
		}
		set_cursor(s, F.st.cur);
	}
	question(all);
	cstate_copy(&F.shown, &F.st);
	F.applying = 0;
	if (saved >= 0) {
		fflush(stdout);
		dup2(saved, 1);
		close(saved);
	}
	if (F.out) {
		unsigned long long now = net_now_us();
		own_line(s, "state");
		fprintf(F.out, " recv_us=%lld applied_us=%lld bytes=%zu\n", (long long)(F.recv_us - F.sent_us),
		        (long long)(now - F.sent_us), F.bytes);
		fflush(F.out);
	}
}

static void lost(const char *why)
{
	conn_close(&F.c);
	F.connected = 0;
	if (!F.ended) {
		class_say("Lost the teacher (%s): trying again.\n", why);
		F.next_try = net_now_us() + RETRY_US;
	}
}

void follow_fds(struct pollfd *p, int *n)
{
	if (F.on && F.connected)
		p[(*n)++] = (struct pollfd){ F.c.fd, (short)(POLLIN | (F.c.out_n ? POLLOUT : 0)), 0 };
}

int follow_timeout(void)
{
	if (!F.on || F.connected || F.ended)
		return -1;
	unsigned long long now = net_now_us();
	return F.next_try > now ? (int)((F.next_try - now) / 1000) + 1 : 0;
}

void follow_service(session *s, const struct pollfd *p, int n)
{
	if (!F.on || F.ended)
		return;
	if (!F.connected) {
		if (net_now_us() >= F.next_try && !try_connect(1))
			class_say("Back with the teacher.\n");
		return;
	}
	if (n < 1 || !p[0].revents)
		return;
	char err[160];
	if ((p[0].revents & POLLOUT) && conn_flush(&F.c, err, sizeof err)) {
		lost(err);
		return;
	}
	int closed = conn_read(&F.c, err, sizeof err);
	gbx_msg *m = malloc(sizeof *m);
	gbx_error e;
	int rc;
	size_t before = F.c.in_n;
	while ((rc = conn_next(&F.c, m, &e)) == 1) {
		if (m->type == GBX_STATE) {
			F.sent_us = m->u[GBX_F_TIME];
			F.recv_us = net_now_us();
			F.bytes = before - F.c.in_n;
			if (m->u[GBX_F_FLAGS] & GBX_FULL) {
				cstate_free(&F.st);
				cstate_init(&F.st);
				F.fresh = 1;
			}
			cstate_merge(&F.st, m);
			F.have_state = 1;
			F.pending = 1;
			before = F.c.in_n;
		} else if (m->type == GBX_BYE) {
			if (F.pending)
				apply(s); /* the last state before the end is shown too */
			F.ended = 1;
			F.refused = !F.have_state;
			class_say("%s%s.\n", F.refused ? "The teacher refused: " : "", m->s[GBX_F_REASON]);
			break;
		} else {
			rc = -1;
			snprintf(e.msg, sizeof e.msg, "the teacher sent a %s message", gbx_type_name(m->type));
			break;
		}
	}
	free(m);
	if (F.pending && !F.ended)
		apply(s);
	if (F.ended) {
		conn_close(&F.c);
		F.connected = 0;
	} else if (rc < 0)
		lost(e.msg);
	else if (closed)
		lost(err);
}

void classroom_explore(void)
{
	if (F.on && !F.exploring && !F.applying)
		F.exploring = 1;
}

/* A word names a command (exactly or by a unique prefix); found without printing. */
static int command_known(const char *w)
{
	int hits = 0;
	for (const command *c = commands; c->name; c++) {
		if (!strcmp(c->name, w))
			return 1;
		hits += !strncmp(c->name, w, strlen(w));
	}
	return hits == 1;
}

void follow_after(session *s, const char *line, int rc)
{
	if (F.applying || !F.on || F.ended)
		return;
	char w[32];
	int n = 0;
	while (*line == ' ')
		line++;
	while (line[n] && line[n] != ' ' && n < 31)
		n++;
	memcpy(w, line, (size_t)n);
	w[n] = 0;
	/* the class's own words (or their prefixes), and opening the window, keep the teacher's view */
	static const char *const keep[] = { "answer", "follow", "help", "window", NULL };
	for (int i = 0; keep[i]; i++)
		if (!n || !strncmp(keep[i], w, (size_t)n))
			return;
	if (rc < 0 && !command_known(w))
		return; /* a typo changed nothing */
	if (!F.exploring)
		printf("(exploring on your own: the teacher's view waits; 'follow' brings it back)\n");
	F.exploring = 1;
}

void follow_end(void)
{
	if (F.on && F.connected) {
		gbx_msg *m = malloc(sizeof *m);
		char err[160];
		gbx_init(m, GBX_BYE);
		gbx_set_s(m, GBX_F_REASON, "left");
		conn_send_msg(&F.c, m, err, sizeof err);
		free(m);
	}
	conn_close(&F.c);
	F.on = F.connected = 0;
}

static int parse_hostport(const char *a)
{
	const char *colon = strrchr(a, ':');
	char *end;
	long p = colon ? strtol(colon + 1, &end, 10) : -1;
	if (!colon || colon == a || !colon[1] || *end || p < 1 || p > 65535 || (size_t)(colon - a) >= sizeof F.host) {
		errorf("follow takes HOST:PORT as the teacher's join line gives it (e.g. 192.168.1.20:7341), not '%s'", a);
		return -1;
	}
	snprintf(F.host, sizeof F.host, "%.*s", (int)(colon - a), a);
	F.port = (int)p;
	return 0;
}

int cmd_follow(session *s, int argc, char **argv, const char *rest)
{
	if (argc == 1) {
		if (!F.on) {
			errorf("not in a class: follow HOST:PORT --code CODE (the teacher's join line)");
			return -1;
		}
		F.exploring = 0;
		if (F.have_state) {
			F.fresh = 1;
			apply(s);
		}
		printf("Following the teacher again%s.\n", F.connected ? "" : " (reconnecting)");
		return 0;
	}
	if (F.on) {
		errorf("already following a class (quit leaves it)");
		return -1;
	}
	const char *code = NULL;
	if (parse_hostport(argv[1]))
		return -1;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--code") && i + 1 < argc)
			code = argv[++i];
		else if (!strcmp(argv[i], "--name") && i + 1 < argc)
			snprintf(F.name, sizeof F.name, "%s", argv[++i]);
		else
			return usage(argv[0]);
	}
	if (!code) {
		errorf("follow needs the class's code: follow %s --code CODE", argv[1]);
		return -1;
	}
	snprintf(F.code, sizeof F.code, "%s", code);
	unsigned char r[8] = { 0 };
	int u = open("/dev/urandom", O_RDONLY);
	if (u < 0 || read(u, r, sizeof r) != (ssize_t)sizeof r) {
		unsigned long long t = net_now_us() ^ (unsigned long long)getpid() << 32;
		memcpy(r, &t, sizeof r);
	}
	if (u >= 0)
		close(u);
	for (int i = 0; i < 8; i++)
		snprintf(F.id + 2 * i, 3, "%02x", r[i]);
	cstate_free(&F.st);
	cstate_free(&F.shown);
	cstate_init(&F.st);
	cstate_init(&F.shown);
	F.ended = F.refused = F.exploring = F.have_state = 0;
	if (try_connect(0))
		return -1;
	F.on = 1;
	printf("Following the teacher at %s:%d. Any command of your own explores on your own; 'follow' comes back.\n",
	       F.host, F.port);
	return 0;
}

int cmd_answer(session *s, int argc, char **argv, const char *rest)
{
	if (!F.on) {
		errorf("answer is for a student following a class (follow HOST:PORT --code CODE)");
		return -1;
	}
	if (!*rest) {
		errorf("usage: answer X (a letter, a number or a word)");
		return -1;
	}
	if (!F.st.qid) {
		errorf("no question is open now");
		return -1;
	}
	if (F.st.qopts[0]) {
		int n = 1;
		for (const char *p = F.st.qopts; *p; p++)
			n += *p == '\n';
		int c = rest[0] | 0x20;
		if (rest[1] || c < 'a' || c >= 'a' + n) {
			errorf("answer with a letter from a to %c", 'a' + n - 1);
			return -1;
		}
	}
	send_answer(rest);
	printf("Sent: %s (you may change it while the question is open).\n", rest);
	return 0;
}

int classroom_follow_main(session *s, int argc, char **argv)
{
	int print = !isatty(0) || !isatty(1);
	const char *model = NULL, *answers = NULL;
	char line[600] = "follow";
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--print"))
			print = 1;
		else if (!strcmp(argv[i], "--model") && i + 1 < argc)
			model = argv[++i];
		else if (!strcmp(argv[i], "--answers") && i + 1 < argc)
			answers = argv[++i];
		else if ((!strcmp(argv[i], "--code") || !strcmp(argv[i], "--name")) && i + 1 < argc) {
			snprintf(line + strlen(line), sizeof line - strlen(line), " %s '%s'", argv[i], argv[i + 1]);
			i++;
		} else if (i == 2 && argv[i][0] != '-')
			snprintf(line + strlen(line), sizeof line - strlen(line), " %s", argv[i]);
		else {
			fprintf(stderr, "usage: glassbox --follow HOST:PORT --code CODE [--name NAME] [--model DIR] [--print] "
			                "[--answers a,-,c]\n");
			return 2;
		}
	}
	if (argc < 3 || argv[2][0] == '-') {
		fprintf(stderr, "glassbox: --follow needs HOST:PORT, as the teacher's join line gives it\n");
		return 2;
	}
	s->interactive = !print;
	F.print = print;
	class_say_stderr = print;
	if (answers) {
		char *a = strdup(answers), *save = NULL;
		for (char *t = strtok_r(a, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			F.answers = realloc(F.answers, sizeof *F.answers * (size_t)(F.n_answers + 1));
			F.answers[F.n_answers++] = strdup(t);
		}
		free(a);
	}
	if (print) {
		/* state lines on the real stdout; what the replayed commands print goes nowhere */
		int keep = dup(1), null = open("/dev/null", O_WRONLY);
		F.out = fdopen(keep, "w");
		if (null >= 0) {
			dup2(null, 1);
			close(null);
		}
	}
	if (model) {
		char l[1200];
		snprintf(l, sizeof l, "load %s", model);
		if (command_line(s, l))
			return 1;
	} else
		session_load_default(s);
	if (command_line(s, line))
		return 1;
	if (!print)
		return -1; /* the prompt takes over, and waits through classroom_wait */
	while (!F.ended && !interrupted)
		classroom_wait(s, -1, 1000);
	if (F.have_state && F.out) {
		own_line(s, "final");
		fputc('\n', F.out);
		fflush(F.out);
	}
	int rc = F.refused || F.model_bad || !F.have_state ? 1 : 0;
	follow_end();
	return rc;
}
