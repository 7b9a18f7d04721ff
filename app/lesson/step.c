/* step.c — the student's side of a lesson at a terminal: reading a line while the window
 * stays alive, checking an answer (a letter, a number within its tolerance, a token however it
 * is quoted), hints, the score of the lesson and of the session, and stepping: Enter goes on,
 * b goes back, j N jumps, r repeats, q leaves, anything else runs as a command (the lesson's
 * own state comes back when it goes on). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/classroom.h"
#include "app/commands.h"
#include "app/lesson/lesson_int.h"

/* Score of this glassbox session, over every lesson played. */
int session_right, session_asked;

/* One line from stdin, pumping the window while waiting: -1 at the end of input or on Ctrl-C.
 * Bytes are read one at a time so nothing past the line is buffered (a pipe in tests holds
 * every answer at once). */
int read_line(session *s, char *buf, size_t cap)
{
	size_t n = 0;
	fflush(stdout);
	for (;;) {
		if (s->win || classroom_active()) {
			/* a class's sockets are served while the lesson waits (classroom.h) */
			int k = classroom_wait(s, 0, s->win ? 16 : -1);
			if (k == 0) {
				if (s->win)
					window_pump(s);
				continue;
			}
			if (k < 0) {
				if (interrupted) {
					interrupted = 0;
					putchar('\n');
					return -1;
				}
				continue;
			}
		}
		char c;
		ssize_t k = read(0, &c, 1);
		if (k < 0 && errno == EINTR) {
			if (interrupted) {
				interrupted = 0;
				putchar('\n');
				return -1;
			}
			continue;
		}
		if (k <= 0) {
			if (n)
				break;
			return -1;
		}
		if (c == '\n')
			break;
		if (n + 1 < cap)
			buf[n++] = c;
	}
	while (n && isspace((unsigned char)buf[n - 1]))
		n--;
	buf[n] = 0;
	return 0;
}

/* For comparing tokens: the dot that stands for a space is a space, spaces and quotes around
 * do not count, nor does case. */
char *norm_token(const char *t)
{
	sb b = { 0 };
	for (const char *s = t; *s; s++) {
		if ((unsigned char)s[0] == 0xc2 && (unsigned char)s[1] == 0xb7) {
			sb_puts(&b, " ");
			s++;
		} else {
			char c = (char)tolower((unsigned char)*s);
			sb_add(&b, &c, 1);
		}
	}
	char *x = sb_take(&b), *p = x;
	while (*p == ' ' || *p == '"' || *p == '\'')
		p++;
	size_t n = strlen(p);
	while (n && (p[n - 1] == ' ' || p[n - 1] == '"' || p[n - 1] == '\''))
		p[--n] = 0;
	memmove(x, p, n + 1);
	return x;
}

static int number_right(const question *q, double got, double want)
{
	double d = fabs(got - want);
	if (q->have_tol)
		return d <= (q->tol_rel ? q->tol * fabs(want) : q->tol) + 1e-12 * fabs(want);
	if (want == floor(want))
		return d < 1e-9;
	return d <= 0.01 * fabs(want);
}

static void result_line(runner *r, question *q, int right)
{
	r->qstate[q->index - 1] = right ? 1 : 2;
	r->asked++;
	session_asked++;
	if (right) {
		r->right++;
		session_right++;
	}
}

/* A student's own command in the middle of a lesson: the lesson's state (model, text, engine)
 * is kept aside first, and comes back when the lesson goes on, so its next commands and
 * answers find what they expect. */
static int explore(runner *r, const char *line)
{
	if (!r->exploring) {
		snap_take(r->s, &r->explore, SNAP_MODEL | SNAP_KEEP_FIG);
		r->exploring = 1;
	}
	return command_line(r->s, line);
}

static void explore_end(runner *r)
{
	if (!r->exploring)
		return;
	r->exploring = 0;
	if (snap_restore(r->s, &r->explore))
		printf("(the lesson's model and text are back)\n");
}

static int ask_until(runner *r, question *q, const value *v, const char *shown);

static int answer_form(const question *q, const value *v)
{
	return q->form == FORM_AUTO ? (v->is_num ? FORM_NUMBER : FORM_TOKEN) : q->form;
}

/* 1 right, 0 wrong, -1 not an answer of the question's form (say is then what to type). */
static int judge_line(const question *q, const value *v, const char *line, const char **say)
{
	int form = answer_form(q, v);
	if (form == FORM_CHOICE) {
		char c = (char)tolower((unsigned char)line[0]);
		if (!(c >= 'a' && c < 'a' + q->n_opts && (!line[1] || (line[1] == ')' && !line[2])))) {
			*say = "letter";
			return -1;
		}
		return c - 'a' + 1 == (int)lround(v->x);
	}
	if (form == FORM_NUMBER) {
		double x;
		if (!parse_num(line, &x)) {
			*say = "Answer with a number (for example 0.25 or 3).";
			return -1;
		}
		return number_right(q, x, v->x);
	}
	char *a = norm_token(line), *b = norm_token(v->text);
	int right = !strcmp(a, b);
	for (int k = 0; k < q->n_also && !right; k++) {
		char *c = norm_token(q->also[k]);
		right = !strcmp(a, c);
		free(c);
	}
	free(a);
	free(b);
	return right;
}

/* A follower's answer for the class's tally: 0 right, the wrong choice's number, or 1 (wrong)
 * for a number or a word; -1 not an answer. */
typedef struct judge_ctx {
	const question *q;
	const value *v;
} judge_ctx;

static int class_judge(void *ctx, const char *answer)
{
	judge_ctx *j = ctx;
	const char *say;
	int rc = judge_line(j->q, j->v, answer, &say);
	if (rc < 0)
		return -1;
	if (rc)
		return 0;
	return answer_form(j->q, j->v) == FORM_CHOICE ? tolower((unsigned char)answer[0]) - 'a' + 1 : j->q->n_opts + 1;
}

/* Asks until the answer is right, skipped, or missed three times. A class being taught counts
 * its followers' answers meanwhile. */
int ask(runner *r, question *q, const value *v, const char *shown)
{
	judge_ctx jc = { q, v };
	char *text = subst_read(r, q->text), **opts = calloc((size_t)q->n_opts + 1, sizeof *opts);
	for (int i = 0; i < q->n_opts; i++)
		opts[i] = subst_read(r, q->opts[i]);
	classroom_question(text, (const char *const *)opts, q->n_opts,
	                   answer_form(q, v) == FORM_CHOICE ? (int)lround(v->x) : 0, class_judge, &jc);
	int rc = ask_until(r, q, v, shown);
	classroom_question_end();
	for (int i = 0; i < q->n_opts; i++)
		free(opts[i]);
	free(opts);
	free(text);
	explore_end(r);
	return rc;
}

static int ask_until(runner *r, question *q, const value *v, const char *shown)
{
	static const char *const forms[] = { "a letter", "a number", "a word or token" };
	int form = answer_form(q, v);
	int tries = 0, hint = 0;
	char line[512];
	for (;;) {
		printf("answer with %s (Enter skips, ? gives a hint, :COMMAND runs a command)> ", forms[form]);
		if (read_line(r->s, line, sizeof line))
			return STOP_LESSON;
		if (!line[0]) {
			printf("Skipped. The answer: %s\n", shown);
			result_line(r, q, 0);
			return GO_ON;
		}
		if (!strcmp(line, "?")) {
			if (hint < q->n_hints) {
				char *h = subst_read(r, q->hints[hint++]);
				print_wrapped(r, h, "Hint: ");
				free(h);
			} else
				printf("No more hints: Enter shows the answer.\n");
			continue;
		}
		if (line[0] == ':') {
			int rc = explore(r, line + 1);
			if (rc > 0)
				return STOP_ALL;
			continue;
		}
		const char *say = NULL;
		int right = judge_line(q, v, line, &say);
		if (right < 0 && !strcmp(say, "letter")) {
			printf("Answer with a letter: ");
			for (int i = 0; i < q->n_opts; i++)
				printf("%s%c", i == 0 ? "" : i == q->n_opts - 1 ? " or " : ", ", 'a' + i);
			printf(".\n");
			continue;
		}
		if (right < 0) {
			printf("%s\n", say);
			continue;
		}
		if (right) {
			printf("Right: %s\n", shown);
			result_line(r, q, 1);
			return GO_ON;
		}
		if (++tries >= 3) {
			printf("Not quite. The answer: %s\n", shown);
			result_line(r, q, 0);
			return GO_ON;
		}
		if (hint < q->n_hints) {
			char *h = subst_read(r, q->hints[hint++]);
			print_wrapped(r, h, "Not quite. Hint: ");
			free(h);
		} else
			printf("Not quite: try again.\n");
	}
}
static void score_line(runner *r)
{
	if (!r->asked)
		return;
	printf("Score: %d of %d question%s right", r->right, r->asked, r->asked == 1 ? "" : "s");
	if (session_asked > r->asked)
		printf(" (this session: %d of %d)", session_right, session_asked);
	printf(".\n");
}

int play(runner *r)
{
	int n = r->L->n_steps, i = 0, rc, done = 0;
	char line[1024];
	char intro[600];
	snprintf(intro, sizeof intro, "%s: %d steps. At the end of each step: Enter (or n) goes on, b back, j N jumps, "
	         "r repeats, q stops; anything else runs as a command.", r->L->title, n);
	print_wrapped(r, intro, "");
	rc = do_step(r, 0);
	while (rc == GO_ON) {
		printf("[step %d/%d] Enter: next  b: back  j N: jump  r: again  q: quit  or a command> ", i + 1, n);
		if (read_line(r->s, line, sizeof line))
			break;
		/* anything but a command of the student's own: the lesson goes on from its own state */
		int nav = !line[0] || !strcmp(line, "n") || !strcmp(line, "b") || !strcmp(line, "r") || !strcmp(line, "q") ||
		          !strcmp(line, "h") || !strcmp(line, "?") || (line[0] == 'j' && (!line[1] || line[1] == ' '));
		if (nav && strcmp(line, "h") && strcmp(line, "?"))
			explore_end(r);
		if (!line[0] || !strcmp(line, "n")) {
			if (i + 1 >= n) {
				done = 1;
				break;
			}
			rc = do_step(r, ++i);
		} else if (!strcmp(line, "b")) {
			if (i == 0)
				printf("This is the first step.\n");
			else
				rc = goto_step(r, --i);
		} else if (line[0] == 'j' && (!line[1] || line[1] == ' ')) {
			char *end;
			long k = strtol(line + 1, &end, 10);
			if (end == line + 1 || *skip_space(end) || k < 1 || k > n)
				printf("Jump to a step from 1 to %d: j N\n", n);
			else
				rc = goto_step(r, i = (int)k - 1);
		} else if (!strcmp(line, "r")) {
			rc = goto_step(r, i);
		} else if (!strcmp(line, "q")) {
			break;
		} else if (!strcmp(line, "h") || !strcmp(line, "?")) {
			printf("Enter or n: the next step   b: the step before   j N: step N   r: this step again\n"
			       "q: leave the lesson   anything else: a glassbox command (e.g. attn 1 1, next, help)\n");
		} else if (explore(r, line) > 0)
			rc = STOP_ALL;
	}
	explore_end(r);
	if (rc == STOP_ALL)
		return 1;
	printf("%s%s\n", done ? "End of the lesson: " : "Left the lesson: ", r->L->title);
	score_line(r);
	return 0;
}
