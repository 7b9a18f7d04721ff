/* export.c — a lesson's figures as numbered PNGs and a Markdown handout that embeds them: prose,
 * the commands with what they printed, the questions with their options and hints, and the
 * answers at the end; from the same Markdown and the figures recorded as vectors, slides.pdf
 * (16:9, a page a step) and handout.pdf (A4) without pandoc (viz/pdfdoc.h). An export into an
 * existing folder first removes what an earlier export wrote, so no stale slide survives. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/commands.h"
#include "app/lesson/lesson_int.h"
#include "model/fileio.h"
#include "viz/export.h"
#include "viz/figure.h"
#include "viz/pdfdoc.h"

/* The exporter's own folders in what a command printed, as a reader of the handout would
 * write them: the folder of the program (a build tree: "assets/models/tiny-lm") and the current
 * one relative, the home folder as "~" ("~/.local/share/glassbox/models"), never
 * "/work/review4/repo/assets/models/tiny-lm". malloc'd. */
static char *elide_paths(const char *text)
{
	char pre[3][1100] = { "", "", "" }, exe[1024];
	const char *rep[3] = { "", "", "~/" };
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash && slash > exe)
			snprintf(pre[0], sizeof pre[0], "%.*s/", (int)(slash - exe), exe);
	}
	if (getcwd(exe, sizeof exe) && strlen(exe) > 1)
		snprintf(pre[1], sizeof pre[1], "%s/", exe);
	const char *home = getenv("HOME");
	if (home && strlen(home) > 1 && strlen(home) < 1024)
		snprintf(pre[2], sizeof pre[2], "%s/", home);
	size_t len = strlen(text);
	char *o = malloc(len + 1), *w = o;
	if (!o)
		return NULL;
	for (const char *s = text; *s;) {
		int hit = -1;
		for (int k = 0; k < 3; k++) /* the longest that matches at a path's start */
			if (pre[k][0] && !strncmp(s, pre[k], strlen(pre[k])) && (s == text || s[-1] != '/' ) &&
			    (hit < 0 || strlen(pre[k]) > strlen(pre[hit])))
				hit = k;
		if (hit >= 0) {
			w += sprintf(w, "%s", rep[hit]);
			s += strlen(pre[hit]);
		} else
			*w++ = *s++;
	}
	*w = 0;
	return o;
}

/* Commands and what they printed gather in one fenced block of the handout until something
 * else (prose, a figure, a question) comes; terminal escapes are dropped, long output cut, the
 * exporter's folders elided (elide_paths). */
void md_code(runner *r, const char *cmd, const char *out)
{
	sb_printf(&r->code, "glassbox> %s\n", cmd);
	int lines = 0, skipped = 0;
	size_t start = r->code.n;
	char *el = out ? elide_paths(out) : NULL;
	if (el)
		out = el;
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
	free(el);
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
	if (r->book && gb_pdfbook_add_figure(r->book, name, r->s->fig, &err)) {
		errorf("lesson %s, step %d: %s", r->L->path, r->cur + 1, err.msg);
		r->failed++;
	}
	r->n_figs++;
	r->step_figs++;
	printf("step %d/%d: wrote %s\n", r->cur + 1, r->L->n_steps, name);
	fflush(stdout);
	/* what the command printed before its figure (generate's and beam's lines, compare's
	 * table; all of it when the figure was not drawn at the terminal) goes with it: the prose
	 * that reads those lines finds them in the handout */
	char *text = r->out ? strdup(r->out) : NULL;
	if (text && r->s->drawn_at >= 0 && (size_t)r->s->drawn_at < strlen(text))
		text[r->s->drawn_at] = 0;
	md_code(r, cmd, text);
	free(text);
	md_flush(r);
	sb_puts(&r->md, "![");
	for (const char *t = r->s->fig->title ? r->s->fig->title : name; *t; t++) {
		if (*t == '[' || *t == ']' || *t == '\\')
			sb_puts(&r->md, "\\");
		sb_add(&r->md, t, 1);
	}
	sb_printf(&r->md, "](%s)\n\n", name);
}

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

/* Whether dir holds nothing (a folder made with mkdir for the export): no --force needed. */
static int empty_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int empty = d != NULL;
	while (d && empty && (e = readdir(d)))
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	return empty;
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
		int ours = !strcmp(n, "lesson.md") || !strcmp(n, "slides.pdf") || !strcmp(n, "handout.pdf") ||
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
		if (!force && !empty_dir(r->dir)) {
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
	r->book = gb_pdfbook_new();
	for (int i = 0; i < r->L->n_steps; i++) {
		if (interrupted) {
			printf("(stopped at step %d: the handout was not written)\n", i + 1);
			interrupted = 0;
			gb_pdfbook_free(r->book);
			r->book = NULL;
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
		gb_pdfbook_free(r->book);
		r->book = NULL;
		return -1;
	}
	printf("wrote %s (%d figure%s, %d question%s)\n", path, r->n_figs, r->n_figs == 1 ? "" : "s",
	       r->L->n_questions, r->L->n_questions == 1 ? "" : "s");
	/* the PDFs from the same Markdown, the figures as vectors */
	int rc = r->failed ? -1 : 0, pages;
	gb_verr verr;
	const char *pdfs[2] = { "slides.pdf", "handout.pdf" };
	for (int k = 0; r->book && k < 2; k++) {
		snprintf(path, sizeof path, "%s/%s", r->dir, pdfs[k]);
		if ((k ? gb_pdfbook_handout : gb_pdfbook_slides)(r->book, r->md.s, path, GLASSBOX_VERSION, &pages, &verr)) {
			errorf("%s", verr.msg);
			rc = -1;
		} else
			printf("wrote %s (%d page%s)\n", path, pages, pages == 1 ? "" : "s");
	}
	gb_pdfbook_free(r->book);
	r->book = NULL;
	return rc;
}
