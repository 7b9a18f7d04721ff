/* classroom_tally.c — the class's answers (classroom.h): the question a lesson asks while a
 * class is taught, each follower's latest answer to it (by the follower's own id, so a
 * reconnect does not count twice; names stay here), and the tally as a bar chart: right, each
 * wrong choice, no answer yet. At the teacher's prompt it is a line of bars that follows the
 * answers as they come (at most twice a second); in the window, the figure itself; `tally`
 * shows it as the current figure, so `export` saves it. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/classroom.h"
#include "app/classroom_int.h"
#include "app/cmd.h"
#include "app/view_common.h"
#include "viz/figure.h"

typedef struct vote {
	char id[64], name[64];
	uint32_t qid;
	char *answer;
	int bar;                  /* the judge's answer: 0 right, k wrong choice k, n + 1 wrong */
} vote;

/* the question asked last (asking: still open) and its answers */
static struct {
	uint32_t qid;
	int asking;
	char *qtext, *qopts;
	char **opts;
	int n_opts, right;
	classroom_judge judge;
	void *judge_ctx;
	vote *votes;
	int n_votes;
	int dirty;                /* answers or followers changed since the live tally was said */
	unsigned long long said;
	gb_figure *fig;           /* the tally on show (compared, never dereferenced) */
	int fig_new;              /* `tally` has just shown it */
} Q;

uint32_t tally_open(const char **text, const char **opts)
{
	*text = Q.asking && Q.qtext ? Q.qtext : "";
	*opts = Q.asking && Q.qopts ? Q.qopts : "";
	return Q.asking ? Q.qid : 0;
}

void tally_touch(void) { Q.dirty = 1; }

int tally_pending(void) { return Q.dirty && Q.qid; }

int tally_is(const gb_figure *f) { return f && f == Q.fig; }

void tally_after(const gb_figure *before, const gb_figure *now)
{
	if (now != before && !Q.fig_new)
		Q.fig = NULL; /* a command's figure replaced the tally */
	Q.fig_new = 0;
}

void classroom_question(const char *text, const char *const *opts, int n_opts, int right, classroom_judge judge,
                        void *ctx)
{
	if (!class_teaching())
		return;
	for (int i = 0; i < Q.n_opts; i++)
		free(Q.opts[i]);
	free(Q.opts);
	free(Q.qtext);
	free(Q.qopts);
	if (n_opts > 26)
		n_opts = 26; /* a) to z): the tally's bars */
	if (n_opts && (right < 1 || right > n_opts))
		n_opts = 0; /* a choice without a right one in range: counted as right or wrong only */
	Q.qid++;
	Q.asking = 1;
	Q.qtext = strdup(text);
	Q.opts = calloc((size_t)(n_opts + 1), sizeof *Q.opts);
	size_t len = 1;
	for (int i = 0; i < n_opts; i++) {
		Q.opts[i] = strdup(opts[i]);
		len += strlen(opts[i]) + 1;
	}
	Q.qopts = calloc(len, 1);
	for (int i = 0; i < n_opts; i++) {
		strcat(Q.qopts, opts[i]);
		if (i + 1 < n_opts)
			strcat(Q.qopts, "\n");
	}
	Q.n_opts = n_opts;
	Q.right = right;
	Q.judge = judge;
	Q.judge_ctx = ctx;
	Q.dirty = 1;
}

void classroom_question_end(void)
{
	Q.asking = 0;
	Q.judge = NULL; /* its context belongs to the lesson runner, which goes on */
}

/* right, the wrong choices (or "wrong"), no answer yet */
static int n_bars(void) { return Q.n_opts ? Q.n_opts + 1 : 3; }

/* counts[0] right, then each wrong choice (or "wrong"), then no answer yet */
static int tally_counts(int *counts)
{
	int nb = n_bars(), joined = 0;
	memset(counts, 0, sizeof(int) * (size_t)nb);
	for (int i = 0; i < Q.n_votes; i++)
		if (Q.votes[i].qid == Q.qid && Q.votes[i].bar >= 0) {
			int b = Q.votes[i].bar;
			if (Q.n_opts && (b > Q.n_opts || b == Q.right))
				continue; /* no such choice (the judge's own check is the lesson's) */
			if (Q.n_opts) /* the wrong choices in order, the right one left out */
				counts[b == 0 ? 0 : b < Q.right ? b : b - 1]++;
			else
				counts[b == 0 ? 0 : 1]++;
		}
	const char **ids = malloc(sizeof *ids * (size_t)(class_joined(NULL, 0) + 1));
	joined = class_joined(ids, class_joined(NULL, 0));
	for (int i = 0; i < joined; i++) {
		int has = 0;
		for (int k = 0; k < Q.n_votes && !has; k++)
			has = Q.votes[k].qid == Q.qid && Q.votes[k].bar >= 0 && !strcmp(Q.votes[k].id, ids[i]);
		counts[nb - 1] += !has;
	}
	free(ids);
	return joined;
}

static void bar_label(int b, char *out, size_t cap)
{
	int nb = n_bars();
	if (b == 0)
		snprintf(out, cap, Q.n_opts ? "right (%c)" : "right", 'a' + Q.right - 1);
	else if (b == nb - 1)
		snprintf(out, cap, "no answer yet");
	else if (!Q.n_opts)
		snprintf(out, cap, "wrong");
	else {
		int opt = b < Q.right ? b : b + 1; /* 1-based choice */
		snprintf(out, cap, "%c) %.40s", 'a' + opt - 1, Q.opts[opt - 1]);
	}
}

static gb_figure *tally_figure(void)
{
	int counts[40], nb = n_bars();
	tally_counts(counts);
	gb_figure *f = gb_fig_new(GB_FIG_BARS);
	float v[40];
	char lab[40][64];
	const char *labs[40];
	int answered = 0;
	for (int b = 0; b < nb; b++) {
		v[b] = (float)counts[b];
		char words[64];
		bar_label(b, words, sizeof words);
		words_label(words, lab[b], sizeof lab[b]); /* words, not tokens: no dots for spaces */
		labs[b] = lab[b];
		if (b < nb - 1)
			answered += counts[b];
	}
	gb_fig_set_values(f, v, 1, nb);
	gb_fig_set_col_labels(f, labs);
	char t[300];
	snprintf(t, sizeof t, "Answers to question %u: %.200s", Q.qid, Q.qtext);
	gb_fig_set_title(f, t);
	snprintf(t, sizeof t, "%d answered, %d not yet%s", answered, counts[nb - 1], Q.asking ? " (still open)" : "");
	gb_fig_set_subtitle(f, t);
	gb_fig_set_axes(f, NULL, "students");
	f->range = GB_RANGE_FIXED;
	f->vmin = 0;
	f->vmax = (float)(answered + counts[nb - 1] > 0 ? answered + counts[nb - 1] : 1);
	f->precision = 0;
	return f;
}

/* The tally as one line at the terminal, at most twice a second, and in the window. */
void tally_live(session *s)
{
	if (!Q.dirty || !Q.qid)
		return;
	unsigned long long now = net_now_us();
	if (now - Q.said < 500000)
		return;
	Q.dirty = 0;
	Q.said = now;
	int counts[40], nb = n_bars(), total = 0;
	tally_counts(counts);
	for (int b = 0; b < nb; b++)
		total += counts[b];
	/* one line: each bar's label, a bar of up to 8 blocks in proportion, its count */
	char line[1200] = "Answers:", lab[64];
	for (int b = 0; b < nb; b++) {
		bar_label(b, lab, sizeof lab);
		char *cut = strchr(lab, ')');
		if (cut && b && b < nb - 1)
			cut[1] = 0; /* a wrong choice by its letter alone */
		snprintf(line + strlen(line), sizeof line - strlen(line), "%s %s ", b ? "  " : "", lab);
		int w = total ? (counts[b] * 8 + total / 2) / total : 0;
		for (int k = 0; k < w; k++)
			snprintf(line + strlen(line), sizeof line - strlen(line), "\u2588");
		snprintf(line + strlen(line), sizeof line - strlen(line), "%s%d", w ? " " : "", counts[b]);
	}
	if (s->interactive || isatty(1))
		class_say("%s\n", line);
	if (s->win) {
		Q.fig = tally_figure();
		session_adopt(s, Q.fig, NULL);
	}
}

void tally_answer(const char *id, const char *name, uint32_t qid, const char *answer)
{
	if (!Q.asking || qid != Q.qid || !Q.judge)
		return; /* a late answer to a question that closed: not counted */
	int bar = Q.judge(Q.judge_ctx, answer);
	vote *v = NULL;
	for (int i = 0; i < Q.n_votes && !v; i++)
		if (!strcmp(Q.votes[i].id, id) && Q.votes[i].qid == qid)
			v = &Q.votes[i];
	if (!v) {
		Q.votes = realloc(Q.votes, sizeof *Q.votes * (size_t)(Q.n_votes + 1));
		v = &Q.votes[Q.n_votes++];
		memset(v, 0, sizeof *v);
		snprintf(v->id, sizeof v->id, "%s", id);
		v->qid = qid;
	}
	snprintf(v->name, sizeof v->name, "%s", name);
	free(v->answer);
	v->answer = strdup(answer);
	v->bar = bar;
	Q.dirty = 1;
}

int cmd_tally(session *s, int argc, char **argv, const char *rest)
{
	int names = argc == 2 && !strcmp(argv[1], "--names");
	if (argc > 2 || (argc == 2 && !names))
		return usage(argv[0]);
	if (!Q.qid) {
		errorf("no question has been asked in this class yet (a lesson's questions are counted while you teach)");
		return -1;
	}
	int counts[40], nb = n_bars();
	tally_counts(counts);
	char lab[64];
	printf("Question %u: %s\n", Q.qid, Q.qtext);
	for (int b = 0; b < nb; b++) {
		bar_label(b, lab, sizeof lab);
		printf("  %-44s %d\n", lab, counts[b]);
	}
	if (names)
		for (int i = 0; i < Q.n_votes; i++)
			if (Q.votes[i].qid == Q.qid)
				printf("  %s: %s\n", Q.votes[i].name[0] ? Q.votes[i].name : "(no name)", Q.votes[i].answer);
	Q.fig = tally_figure();
	Q.fig_new = 1;
	return show_figure(s, Q.fig) ? -1 : 0;
}
