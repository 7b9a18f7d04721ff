/* complete.c — see complete.h. The candidates come from the same table that runs the
 * commands, so a new command or option completes without further work. */
#include "app/complete.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <readline/readline.h>

#include "app/commands.h"
#include "model/train/recipe.h"

static session *cur;

typedef struct list {
	char **v;
	int n, cap;
} list;

static void push(list *l, const char *s, const char *text)
{
	if (strncmp(s, text, strlen(text)))
		return;
	for (int i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], s))
			return;
	if (l->n + 2 > l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		l->v = realloc(l->v, sizeof(char *) * (size_t)l->cap);
	}
	l->v[l->n++] = strdup(s);
	l->v[l->n] = NULL;
}

/* Words before the cursor word, split on spaces (a command line holds far fewer). */
#define MAX_WORDS 64
static int words_before(const char *line, int start, char words[MAX_WORDS][64])
{
	int n = 0;
	const char *p = line, *stop = line + start;
	while (p < stop && n < MAX_WORDS) {
		while (p < stop && isspace((unsigned char)*p))
			p++;
		if (p >= stop)
			break;
		int k = 0;
		while (p < stop && !isspace((unsigned char)*p)) {
			if (k < 63)
				words[n][k++] = *p;
			p++;
		}
		words[n][k] = 0;
		n++;
	}
	return n;
}

char **complete_candidates(session *s, const char *line, int start, const char *text)
{
	list l = { 0 };
	char w[MAX_WORDS][64];
	int nw = words_before(line, start, w);
	if (nw == 0) {
		for (const command *c = commands; c->name; c++)
			push(&l, c->name, text);
		return l.v;
	}
	const command *c = NULL;
	size_t len = strlen(w[0]);
	int hits = 0;
	for (const command *k = commands; k->name; k++)
		if (!strncmp(k->name, w[0], len)) {
			c = k;
			hits++;
			if (!strcmp(k->name, w[0])) {
				hits = 1;
				break;
			}
		}
	if (hits != 1)
		return NULL;
	/* From the usage: every --option, and the literal words (lowercase, alternatives a|b|c)
	 * at the position being typed in any of the usage's " | "-separated forms. */
	char usage[256];
	snprintf(usage, sizeof usage, "%s", c->usage);
	for (char *p = usage; *p; p++)
		if (*p == '[' || *p == ']')
			*p = ' ';
	/* A bare "|" word separates the forms, restarting the position count. Past the first
	 * argument, only the form whose first word the user typed counts ("set engine <Tab>"
	 * offers engines, not palettes). */
	/* Options: offered where a word may start with "-", once each; the word after an option
	 * that takes a value is that value ("--preset <Tab>" offers the presets, "--temp <Tab>"
	 * nothing: it wants a number). */
	const char *prev = w[nw - 1];
	int after_option = 0;
	{
		char u2[256], *fs2 = NULL, *last = NULL;
		snprintf(u2, sizeof u2, "%s", usage);
		for (char *tok = strtok_r(u2, " ", &fs2); tok; last = tok, tok = strtok_r(NULL, " ", &fs2)) {
			if (!last || strncmp(last, "--", 2) || strcmp(last, prev) || !strncmp(tok, "--", 2) || !strcmp(tok, "|"))
				continue;
			after_option = 1;
			if (!strcmp(prev, "--preset") && !strcmp(tok, "NAME")) { /* train's recipes, by name */
				push(&l, "tiny-lm", text);
				push(&l, "tiny-mt", text);
				for (int i = 0; gb_recipe_variant_info(i, NULL, NULL); i++)
					push(&l, gb_recipe_variant_info(i, NULL, NULL), text);
				continue;
			}
			char alt[128], *save = NULL;
			snprintf(alt, sizeof alt, "%s", tok);
			for (char *a = strtok_r(alt, "|", &save); a; a = strtok_r(NULL, "|", &save))
				if (islower((unsigned char)a[0]))
					push(&l, a, text);
		}
	}
	if (after_option)
		return l.v ? l.v : calloc(1, sizeof(char *));
	char *fs = NULL;
	int pos = 0, form_ok = 1, value = 0;
	for (char *tok = strtok_r(usage, " ", &fs); tok; tok = strtok_r(NULL, " ", &fs)) {
		if (!strcmp(tok, "|")) {
			pos = value = 0;
			form_ok = 1;
			continue;
		}
		if (value && strncmp(tok, "--", 2)) { /* an option's value is not a positional word */
			value = 0;
			continue;
		}
		value = !strncmp(tok, "--", 2);
		if (value) {
			int typed = 0;
			for (int i = 1; i < nw; i++)
				typed |= !strcmp(w[i], tok);
			if (!typed && (!*text || *text == '-'))
				push(&l, tok, text);
			continue;
		}
		int at = pos++;
		if (at == 0 && nw >= 2 && islower((unsigned char)tok[0]) && !strchr(tok, '|'))
			form_ok = !strcmp(tok, w[1]);
		if (!form_ok || at != nw - 1 || !islower((unsigned char)tok[0]))
			continue;
		char alt[128], *save = NULL;
		snprintf(alt, sizeof alt, "%s", tok);
		for (char *a = strtok_r(alt, "|", &save); a; a = strtok_r(NULL, "|", &save))
			if (islower((unsigned char)a[0]))
				push(&l, a, text);
	}
	/* Trace names where the usage takes a NAME; layer and head numbers where it takes L and H. */
	/* NAME as a word of its own (not "DIR|NAME" of load or lesson's "N|NAME|FILE"). */
	const char *nm = strstr(c->usage, "NAME");
	if (nm && (nm == c->usage || nm[-1] == ' ') && (nm[4] == ' ' || !nm[4]) && s->have_run)
		for (int i = 0; i < s->trace.n; i++)
			push(&l, s->trace.t[i].name, text);
	if (s->loaded) {
		const char *u = c->usage;
		int arg = nw - 1; /* which positional argument is being typed */
		char want = 0;
		for (int i = 0, k = 0; u[i]; i++) {
			if ((u[i] == 'L' || u[i] == 'H') && (i == 0 || u[i - 1] == ' ') && (!u[i + 1] || u[i + 1] == ' ')) {
				if (k == arg)
					want = u[i];
				k++;
			}
		}
		if (want) {
			int max = want == 'L' ? s->model.cfg.n_layer : s->model.cfg.n_head;
			for (int i = 1; i <= max; i++) {
				char num[16];
				snprintf(num, sizeof num, "%d", i);
				push(&l, num, text);
			}
		}
	}
	return l.v;
}

static char **attempt(const char *text, int start, int end)
{
	(void)end;
	rl_attempted_completion_over = 1; /* no file names unless a command asks for them */
	char **v = complete_candidates(cur, rl_line_buffer, start, text);
	if (!v)
		return NULL;
	int n = 0;
	while (v[n])
		n++;
	if (n == 0) {
		free(v);
		return NULL;
	}
	/* readline wants the common prefix first, then the matches. */
	char **out = malloc(sizeof(char *) * (size_t)(n + 2));
	size_t common = strlen(v[0]);
	for (int i = 1; i < n; i++) {
		size_t k = 0;
		while (k < common && v[i][k] == v[0][k])
			k++;
		common = k;
	}
	out[0] = strndup(v[0], common);
	memcpy(out + 1, v, sizeof(char *) * (size_t)n);
	out[n + 1] = NULL;
	free(v);
	if (n == 1) {
		free(out[0]);
		out[0] = out[1];
		out[1] = NULL;
	}
	return out;
}

void complete_install(session *s)
{
	cur = s;
	rl_attempted_completion_function = attempt;
	rl_basic_word_break_characters = " \t";
}
