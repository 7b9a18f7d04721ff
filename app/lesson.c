/* lesson.c — lessons: plain text files (lessons/README.md has the format) parsed into steps of
 * prose, commands, pauses and questions, and run through command_line exactly as if typed at
 * the prompt, so a lesson can use every command and shows the same figures.
 *
 * This file owns: the parser (errors as FILE:LINE: expected ...), the small arithmetic of
 * `calc:` answers, the runner (a student at a terminal steps, goes back, jumps, answers and is
 * scored; a script or pipe gets the whole lesson with the answers shown), the answer key, and
 * the export of a lesson's figures as numbered PNGs with a Markdown handout.
 *
 * Expected answers are never copied into a lesson: a question names how to compute its answer
 * (a command's figure or printed output, or arithmetic over the trace), and the runner
 * computes it when the question is reached, from the model in use. Commands that compute an
 * answer run with their output captured and the session put back as it was (text, trace,
 * engine, current figure), so asking a question never changes what the student sees. */
#include "app/lesson.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/commands.h"
#include "app/lesson/lesson_int.h"
#include "model/fileio.h"
#include "viz/cells.h"
#include "viz/export.h"
#include "viz/figure.h"
#include "viz/window.h"

/* ---- the runner ------------------------------------------------------------------------- */

/* ---- one step --------------------------------------------------------------------------- */

/* Commands and what they printed gather in one fenced block of the handout until something
 * else (prose, a figure, a question) comes; terminal escapes are dropped, long output cut. */
void md_code(runner *r, const char *cmd, const char *out)
{
	sb_printf(&r->code, "glassbox> %s\n", cmd);
	int lines = 0, skipped = 0;
	size_t start = r->code.n;
	for (const char *s = out ? out : ""; *s; s++) {
		if (*s == '\033') { /* CSI: ESC [ parameters, then a final byte in @..~ */
			if (s[1] == '[') {
				s += 2;
				while (*s && !(*s >= '@' && *s <= '~'))
					s++;
				if (!*s)
					break;
			}
			continue;
		}
		if (lines >= 40) {
			skipped += *s == '\n';
			continue;
		}
		sb_add(&r->code, s, 1);
		lines += *s == '\n';
	}
	if (r->code.n > start && r->code.s[r->code.n - 1] != '\n')
		sb_puts(&r->code, "\n");
	if (skipped)
		sb_printf(&r->code, "... (%d more lines)\n", skipped);
}

void md_flush(runner *r)
{
	r->last_item = 0;
	if (!r->code.n)
		return;
	sb_printf(&r->md, "```\n%s```\n\n", r->code.s);
	free(r->code.s);
	memset(&r->code, 0, sizeof r->code);
}

void md_para(runner *r, const char *text)
{
	/* A list's items are kept on consecutive lines; the blank line before the next paragraph
	 * ends the list. */
	int in_list = r->last_item && !r->code.n;
	md_flush(r);
	if (in_list && starts(text, "- ") && r->md.n >= 2 && r->md.s[r->md.n - 1] == '\n' && r->md.s[r->md.n - 2] == '\n')
		r->md.s[--r->md.n] = 0;
	if (starts(text, "Try:"))
		sb_printf(&r->md, "**Try:**%s\n\n", text + 4);
	else
		sb_printf(&r->md, "%s\n\n", text);
	r->last_item = starts(text, "- ");
}

void export_figure(runner *r, const char *cmd)
{
	char w[64], name[96], path[1200];
	first_word(cmd, w, sizeof w);
	const command *c = lookup(w);
	snprintf(name, sizeof name, r->n_figs + 1 < 100 ? "%02d-%s.png" : "%03d-%s.png", r->n_figs + 1, c ? c->name : w);
	snprintf(path, sizeof path, "%s/%s", r->dir, name);
	gb_export_opts o = { 0 };
	o.version = GLASSBOX_VERSION;
	o.force = 1;
	gb_verr err;
	if (gb_export(r->s->fig, path, &o, &err)) {
		errorf("lesson %s, step %d: %s", r->L->path, r->cur + 1, err.msg);
		r->failed++;
		return;
	}
	r->n_figs++;
	r->step_figs++;
	printf("step %d/%d: wrote %s\n", r->cur + 1, r->L->n_steps, name);
	fflush(stdout);
	md_code(r, cmd, NULL);
	md_flush(r);
	sb_puts(&r->md, "![");
	for (const char *t = r->s->fig->title ? r->s->fig->title : name; *t; t++) {
		if (*t == '[' || *t == ']' || *t == '\\')
			sb_puts(&r->md, "\\");
		sb_add(&r->md, t, 1);
	}
	sb_printf(&r->md, "](%s)\n\n", name);
}

/* ---- exporting ---------------------------------------------------------------------------- */

static int mkdir_p(const char *dir)
{
	char *p = strdup(dir);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			mkdir(p, 0777);
			*s = '/';
		}
	int rc = mkdir(p, 0777) && errno != EEXIST ? -1 : 0;
	free(p);
	return rc;
}

/* What an earlier export wrote (NN-name.png, lesson.md) goes, so no stale slide survives. */
static void clean_export(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d))) {
		const char *n = e->d_name;
		size_t len = strlen(n);
		int ours = !strcmp(n, "lesson.md") ||
		           (len > 7 && isdigit((unsigned char)n[0]) && isdigit((unsigned char)n[1]) && strchr(n, '-') &&
		            !strcmp(n + len - 4, ".png"));
		if (ours) {
			char p[2048];
			snprintf(p, sizeof p, "%s/%s", dir, n);
			unlink(p);
		}
	}
	closedir(d);
}

int export_lesson(runner *r, int force)
{
	struct stat st;
	if (!stat(r->dir, &st)) {
		if (!S_ISDIR(st.st_mode)) {
			errorf("%s exists and is not a folder: choose another folder for the export", r->dir);
			return -1;
		}
		if (!force) {
			errorf("%s already exists: choose another folder, or add --force to replace its figures and handout", r->dir);
			return -1;
		}
		clean_export(r->dir);
	} else if (mkdir_p(r->dir)) {
		errorf("cannot create the folder %s: %s", r->dir, strerror(errno));
		return -1;
	}
	sb_printf(&r->md, "# %s\n\n*A glassbox lesson: %d steps, about %d minutes. Figures made by glassbox %s.*\n\n",
	          r->L->title, r->L->n_steps, lesson_minutes(r->L), GLASSBOX_VERSION);
	interrupted = 0;
	for (int i = 0; i < r->L->n_steps; i++) {
		if (interrupted) {
			printf("(stopped at step %d: the handout was not written)\n", i + 1);
			interrupted = 0;
			return -1;
		}
		do_step(r, i);
	}
	md_flush(r);
	if (r->key.n)
		sb_printf(&r->md, "## Answers\n\n%s", r->key.s);
	char path[2048];
	gb_err err;
	snprintf(path, sizeof path, "%s/lesson.md", r->dir);
	if (gb_write_file(path, r->md.s, r->md.n, &err)) {
		errorf("%s", err.msg);
		return -1;
	}
	printf("wrote %s (%d figure%s, %d question%s; cd %s && pandoc lesson.md -o lesson.pdf)\n", path, r->n_figs,
	       r->n_figs == 1 ? "" : "s", r->L->n_questions, r->L->n_questions == 1 ? "" : "s", r->dir);
	return r->failed ? -1 : 0;
}

/* ---- finding lessons -------------------------------------------------------------------- */

/* Beside the program (a build tree), in the installed data folder found from the program's
 * path, or in the configured one: the same places as the shipped models. */
static int lessons_dir(char *out, size_t cap)
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
			lesson_free(&L);
		}
		free(names[i]);
	}
	free(names);
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
				printf("  question %d (step %d, line %d): %s, %s%s\n", q->index, i + 1, q->line, forms[q->form],
				       q->ans.sel == SEL_LITERAL ? "literal" : "computed by ",
				       q->ans.sel == SEL_LITERAL ? "" : SELECTORS[q->ans.sel].name);
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
	if (check) {
		check_report(&L);
		lesson_free(&L);
		return 0;
	}
	runner r = { 0 };
	r.s = s;
	r.L = &L;
	r.dir = dir;
	r.mode = dir ? MODE_EXPORT : answers ? MODE_ANSWERS : (inter || (s->interactive && isatty(0))) ? MODE_PLAY : MODE_SHOW;
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
	running = 0;
	term_env_restore(&te);
	if (r.todo && r.mode != MODE_PLAY)
		printf("(%d command%s or answer%s not run: %s glassbox does not have yet; 'lesson %s --check' lists them)\n",
		       r.todo, r.todo == 1 ? "" : "s", r.todo == 1 ? "" : "s", r.todo == 1 ? "it needs a command this" : "they need commands this", which);
	if (r.failed && r.mode != MODE_PLAY)
		errorf("lesson %s: %d command%s or answer%s failed (see above)", L.path, r.failed, r.failed == 1 ? "" : "s",
		       r.failed == 1 ? "" : "s");
	if (r.cap)
		fclose(r.cap);
	for (int i = 0; i < r.n_vars; i++) {
		free(r.var_names[i]);
		free(r.var_vals[i]);
	}
	free(r.var_names);
	free(r.var_vals);
	free(r.qstate);
	free(r.out);
	free(r.md.s);
	free(r.key.s);
	free(r.code.s);
	lesson_free(&L);
	return rc;
}
