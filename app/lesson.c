/* lesson.c — the `lesson` command: lessons are plain text files (lessons/README.md has the
 * format) parsed into steps and run through command_line exactly as if typed at the prompt.
 *
 * This file owns the command's arguments, finding a lesson (a file, a number, a part of a
 * name; beside the program or in the installed data), the list of lessons with their
 * estimates, the --check report, and choosing the runner's mode. The rest of the module is in
 * app/lesson/ (lesson_int.h lists its pieces): parse.c reads a file, run.c and step.c run a
 * lesson, answer.c and calc.c compute its answers, export.c writes its figures and handout. */
#include "app/lesson.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/classroom.h"
#include "app/commands.h"
#include "app/lesson/lesson_int.h"
#include "viz/figure.h"

/* Beside the program (a build tree), in the installed data folder found from the program's
 * path, or in the configured one: the same places as the shipped models. */
int lessons_dir(char *out, size_t cap)
{
	char exe[1024];
	struct stat st;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = 0;
		snprintf(out, cap, "%s/lessons", exe);
		if (!stat(out, &st) && S_ISDIR(st.st_mode))
			return 0;
		snprintf(out, cap, "%s/../share/glassbox/lessons", exe);
		if (!stat(out, &st) && S_ISDIR(st.st_mode))
			return 0;
	}
	snprintf(out, cap, "%s/lessons", GLASSBOX_DATADIR);
	return !stat(out, &st) && S_ISDIR(st.st_mode) ? 0 : -1;
}

static int is_lesson_file(const struct dirent *e)
{
	size_t n = strlen(e->d_name);
	return e->d_name[0] != '.' && n > 7 && !strcmp(e->d_name + n - 7, ".lesson");
}

/* The number a file name starts with, or -1. */
static int file_number(const char *name)
{
	return isdigit((unsigned char)name[0]) ? atoi(name) : -1;
}

static int list_lessons(void)
{
	char dir[1200];
	struct dirent **names;
	if (lessons_dir(dir, sizeof dir)) {
		printf("no lessons found (looked beside the program and in %s/lessons); 'lesson FILE' runs a file\n", GLASSBOX_DATADIR);
		return 0;
	}
	int n = scandir(dir, &names, is_lesson_file, alphasort);
	if (n <= 0) {
		printf("no lessons in %s; 'lesson FILE' runs a file\n", dir);
		return 0;
	}
	printf("Lessons (in %s):\n", dir);
	int total = 0, counted = 0;
	for (int i = 0; i < n; i++) {
		char path[2600], err[600];
		lesson L;
		snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
		int num = file_number(names[i]->d_name);
		char nb[16] = "";
		if (num >= 0)
			snprintf(nb, sizeof nb, "%d", num);
		if (lesson_parse(path, &L, err, sizeof err))
			printf("  %3s  %-50s (does not parse: %s)\n", nb, names[i]->d_name, err);
		else {
			char missing[256] = "";
			for (int k = 0; k < L.n_needs; k++)
				if (!need_met(&L.needs[k]))
					snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%s", missing[0] ? ", " : "  (needs ", L.needs[k].word);
			if (missing[0])
				snprintf(missing + strlen(missing), sizeof missing - strlen(missing), ")");
			/* Padded by display width, so a long or non-ASCII title does not shift the columns. */
			int w = gb_utf8_width(L.title);
			printf("  %3s  %s%*s %2d steps  %2d min%s\n", nb, L.title, w < 50 ? 50 - w : 0, "", L.n_steps,
			       lesson_minutes(&L), missing);
			total += lesson_minutes(&L);
			counted++;
			lesson_free(&L);
		}
		free(names[i]);
	}
	free(names);
	if (counted > 1)
		printf("All %d take about %d minutes: for one 90-minute class, lessons 2, 5, 6, 7, 9 and 10 make a\n"
		       "path from tokens to sampling (lessons/README.md, \"Planning a class\").\n", counted, total);
	printf("Start one with 'lesson N'; 'lesson N --export DIR' writes its figures and a handout.\n");
	if (session_asked)
		printf("Your score this session: %d of %d questions right.\n", session_right, session_asked);
	return 0;
}

/* A lesson argument: a file, a number (the file name's NN), or a unique part of a name. */
static int find_lesson(const char *arg, char *out, size_t cap)
{
	struct stat st;
	char dir[1200];
	if (strchr(arg, '/') || !stat(arg, &st)) {
		if (stat(arg, &st)) {
			errorf("no lesson file %s", arg);
			return -1;
		}
		snprintf(out, cap, "%s", arg);
		return 0;
	}
	if (lessons_dir(dir, sizeof dir)) {
		errorf("no lessons folder found: give a lesson file ('lesson path/to/file.lesson')");
		return -1;
	}
	struct dirent **names;
	int n = scandir(dir, &names, is_lesson_file, alphasort), hits = 0, num = -1;
	char list[512] = "";
	int digits = *arg && strspn(arg, "0123456789") == strlen(arg);
	if (digits)
		num = atoi(arg);
	for (int i = 0; i < n; i++) {
		const char *f = names[i]->d_name;
		if (digits ? file_number(f) == num : strstr(f, arg) != NULL) {
			if (!hits++)
				snprintf(out, cap, "%s/%s", dir, f);
			snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", list[0] ? ", " : "", f);
		}
		free(names[i]);
	}
	if (n > 0)
		free(names);
	if (hits == 1)
		return 0;
	if (hits > 1)
		errorf("'%s' names several lessons: %s", arg, list);
	else
		errorf("no lesson '%s': 'lesson' lists them", arg);
	return -1;
}

static void check_report(const lesson *L)
{
	static const char *const forms[] = { "choice", "number", "token", "number or token" };
	printf("%s: \"%s\": %d steps, %d commands, %d questions, about %d minutes\n", L->path, L->title, L->n_steps,
	       L->n_cmds, L->n_questions, lesson_minutes(L));
	for (int i = 0; i < L->n_steps; i++)
		for (int j = 0; j < L->steps[i].n_items; j++) {
			const question *q = L->steps[i].items[j].q;
			if (q)
				printf("  question %d (step %d, line %d): %s, %s%s%s\n", q->index, i + 1, q->line, forms[q->form],
				       q->ans.sel == SEL_LITERAL ? "literal" : "computed by ",
				       q->ans.sel == SEL_LITERAL ? "" : SELECTORS[q->ans.sel].name,
				       q->text_for ? " on its own text" : "");
		}
	for (int i = 0; i < L->n_needs; i++)
		printf("  needs %s%s%s: %s\n", L->needs[i].word, L->needs[i].opt ? " " : "",
		       L->needs[i].opt ? L->needs[i].opt : "", need_met(&L->needs[i]) ? "present" : "missing");
	printf("  things to try by hand: %d\n", L->n_try);
}

/* While a lesson plays on a terminal, figures leave room for the prose above them. */
typedef struct term_env {
	char *cols, *lines;
	int set;
} term_env;

static void term_env_set(term_env *t, int cols, int rows)
{
	char buf[16];
	const char *c = getenv("COLUMNS"), *l = getenv("LINES");
	t->cols = c ? strdup(c) : NULL;
	t->lines = l ? strdup(l) : NULL;
	t->set = 1;
	snprintf(buf, sizeof buf, "%d", cols);
	setenv("COLUMNS", buf, 1);
	snprintf(buf, sizeof buf, "%d", rows > 28 ? rows - 12 : 16);
	setenv("LINES", buf, 1);
}

static void term_env_restore(term_env *t)
{
	if (!t->set)
		return;
	if (t->cols)
		setenv("COLUMNS", t->cols, 1);
	else
		unsetenv("COLUMNS");
	if (t->lines)
		setenv("LINES", t->lines, 1);
	else
		unsetenv("LINES");
	free(t->cols);
	free(t->lines);
}

int cmd_lesson(session *s, int argc, char **argv, const char *rest)
{
	static int running;
	const char *which = NULL, *dir = NULL;
	int force = 0, check = 0, answers = 0, inter = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--export") && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "--force"))
			force = 1;
		else if (!strcmp(argv[i], "--check"))
			check = 1;
		else if (!strcmp(argv[i], "--answers"))
			answers = 1;
		else if (!strcmp(argv[i], "--interactive"))
			inter = 1;
		else if (argv[i][0] != '-' && !which)
			which = argv[i];
		else {
			errorf("usage: lesson [N|NAME|FILE] [--export DIR [--force]] [--answers] [--check] [--interactive]");
			return -1;
		}
	}
	if (!which) {
		if (dir || force || check || answers || inter) {
			errorf("which lesson? 'lesson N --export DIR' (plain 'lesson' lists them)");
			return -1;
		}
		return list_lessons();
	}
	if (running) {
		errorf("a lesson is running: leave it first (q at the step prompt)");
		return -1;
	}
	if (force && !dir) {
		errorf("--force goes with --export DIR");
		return -1;
	}
	if ((dir != NULL) + check + answers > 1) {
		errorf("choose one of --export, --answers and --check");
		return -1;
	}
	char path[2048], err[1024];
	if (find_lesson(which, path, sizeof path))
		return -1;
	lesson L;
	if (lesson_parse(path, &L, err, sizeof err)) {
		errorf("%s", err);
		return -1;
	}
	if (check)
		check_report(&L);
	runner r = { 0 };
	r.s = s;
	r.L = &L;
	r.dir = dir;
	r.mode = check ? MODE_CHECK : dir ? MODE_EXPORT : answers ? MODE_ANSWERS
	       : (inter || (s->interactive && isatty(0))) ? MODE_PLAY : MODE_SHOW;
	r.tty = (r.mode == MODE_PLAY || r.mode == MODE_SHOW) && isatty(1);
	r.bold = r.tty && !getenv("NO_COLOR");
	r.qstate = calloc((size_t)L.n_questions + 1, sizeof *r.qstate);
	r.cap = tmpfile();
	struct winsize ws;
	const char *cols = getenv("COLUMNS");
	int tcols = 80, trows = 40;
	if (r.tty && !ioctl(1, TIOCGWINSZ, &ws) && ws.ws_col > 0) {
		tcols = ws.ws_col;
		trows = ws.ws_row;
	} else if (cols && atoi(cols) > 0)
		tcols = atoi(cols);
	r.width = tcols < 40 ? 40 : tcols > 100 ? 100 : tcols;
	term_env te = { 0 };
	if (r.tty)
		term_env_set(&te, tcols, trows);
	int rc = 0;
	running = 1;
	/* Checking a lesson or listing its answers only looks: the session, model included, is
	 * put back afterwards. */
	snapshot guard;
	int guarded = r.mode == MODE_CHECK || r.mode == MODE_ANSWERS;
	if (guarded)
		snap_take(s, &guard, SNAP_MODEL);
	if (!r.cap) {
		errorf("cannot open a temporary file for the lesson: %s", strerror(errno));
		rc = -1;
	} else if (r.mode == MODE_EXPORT) {
		rc = export_lesson(&r, force);
	} else if (r.mode == MODE_PLAY) {
		rc = play(&r);
	} else {
		if (r.mode == MODE_SHOW)
			printf("%s%s%s (%d steps, about %d minutes)\n", r.bold ? "\033[1m" : "", L.title, r.bold ? "\033[0m" : "",
			       L.n_steps, lesson_minutes(&L));
		for (int i = 0; i < L.n_steps; i++)
			do_step(&r, i);
		rc = r.failed ? -1 : 0;
	}
	if (guarded)
		snap_restore(s, &guard);
	if (r.mode == MODE_SHOW || r.mode == MODE_PLAY)
		classroom_step(NULL, 0, 0, NULL); /* the class leaves the lesson too */
	running = 0;
	term_env_restore(&te);
	if (r.mode == MODE_CHECK)
		printf("  ran it: %d question%s computed; claims (expect:) %d, %d of them hold%s\n", L.n_questions,
		       L.n_questions == 1 ? "" : "s", r.expects, r.expects_ok, r.failed ? "; see the errors above" : "");
	fflush(stdout);
	if (r.todo && r.mode != MODE_PLAY && r.mode != MODE_CHECK)
		printf("(%d command%s or answer%s not run: %s glassbox does not have yet; 'lesson %s --check' lists them)\n",
		       r.todo, r.todo == 1 ? "" : "s", r.todo == 1 ? "" : "s", r.todo == 1 ? "it needs a command this" : "they need commands this", which);
	if (r.failed && r.mode == MODE_CHECK)
		errorf("lesson %s --check: %d problem%s (above, as FILE:LINE)", L.path, r.failed, r.failed == 1 ? "" : "s");
	else if (r.failed && r.mode != MODE_PLAY)
		errorf("lesson %s: %d command%s, answer%s or claim%s failed (see above)", L.path, r.failed,
		       r.failed == 1 ? "" : "s", r.failed == 1 ? "" : "s", r.failed == 1 ? "" : "s");
	if (r.cap)
		fclose(r.cap);
	for (int i = 0; i < r.n_vars; i++) {
		free(r.var_names[i]);
		free(r.var_vals[i]);
		free(r.var_exact[i]);
	}
	free(r.var_names);
	free(r.var_vals);
	free(r.var_exact);
	text_state_free(&r.ts);
	free(r.qstate);
	free(r.out);
	free(r.md.s);
	free(r.key.s);
	free(r.code.s);
	lesson_free(&L);
	return rc;
}
