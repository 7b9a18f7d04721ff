/* gen.c — the man pages, from the tables (see gen.h): glassbox(1) walks the command table and
 * the options, so a command added to app/commands.c is documented by the next build; and
 * glassbox-lesson(5) converts lessons/README.md (the small Markdown it uses: headings,
 * paragraphs, "- " items, indented blocks, tables, `code`) to man(7). Every character that
 * roff would read as markup is escaped and every non-ASCII one is written as \[uXXXX], so
 * groff renders the pages without a warning whatever the locale. */
#include "app/gen.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app/cli.h"
#include "app/cmd.h"
#include "app/commands.h"
#include "app/complete.h"
#include "app/lesson.h"
#include "model/fileio.h"

enum { R_CODE = 1 }; /* roff_text: `code` spans in bold (Markdown) */

/* One UTF-8 sequence at s as a code point; *len its bytes (1 for a stray byte, shown as
 * U+FFFD). */
static unsigned utf8_cp(const unsigned char *s, int *len)
{
	unsigned c = s[0];
	int n = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
	*len = 1;
	if (c < 0x80 || !n)
		return c < 0x80 ? c : 0xFFFD;
	for (int i = 1; i <= n; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0xFFFD;
	c &= 0x3F >> n;
	for (int i = 1; i <= n; i++)
		c = c << 6 | (s[i] & 0x3F);
	*len = n + 1;
	return c;
}

/* Text for a filled line: backslashes, a leading '.' or '\'', option dashes (\-: a minus
 * that copies and pastes as one), non-ASCII as \[uXXXX]; with R_CODE, `x` in bold. */
static void roff_text(FILE *f, const char *s, int flags)
{
	const unsigned char *p = (const unsigned char *)s;
	int code = 0;
	if (*p == '.' || *p == '\'')
		fputs("\\&", f);
	for (; *p; p++) {
		unsigned char prev = p == (const unsigned char *)s ? ' ' : p[-1];
		if (*p == '\\')
			fputs("\\e", f);
		else if (*p == '`' && (flags & R_CODE)) {
			fputs(code ? "\\fR" : "\\fB", f);
			code = !code;
		} else if (*p == '-' && (strchr(" [(|'\"`-/", prev) || code) &&
		           (p[1] == '-' || isalnum(p[1])))
			fputs("\\-", f);
		else if (*p >= 0x80) {
			int len;
			unsigned cp = utf8_cp(p, &len);
			fprintf(f, "\\[u%04X]", cp);
			p += len - 1;
		} else
			fputc(*p, f);
	}
	if (code)
		fputs("\\fR", f);
}

/* An argument synopsis: the placeholders (DIR, FILE, N) in italics, the literal words and
 * options in bold, the brackets and bars in roman. */
static void roff_usage(FILE *f, const char *u)
{
	for (const char *p = u; *p;) {
		size_t n = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
		if (n && isupper((unsigned char)*p)) {
			fputs("\\fI", f);
			fwrite(p, 1, n, f);
			fputs("\\fR", f);
			p += n;
			continue;
		}
		n = strcspn(p, " []|.,;\"ABCDEFGHIJKLMNOPQRSTUVWXYZ");
		if (n && (islower((unsigned char)*p) || *p == '-')) {
			char w[256];
			snprintf(w, sizeof w, "%.*s", (int)(n < 255 ? n : 255), p);
			fputs("\\fB", f);
			roff_text(f, w, 0);
			fputs("\\fR", f);
			p += n;
			continue;
		}
		char one[2] = { *p == ' ' ? ' ' : *p, 0 };
		if (*p == '.' && p > u && p[-1] == ' ')
			fputs("\\&", f);
		roff_text(f, one, 0);
		p++;
	}
}

/* A long help as paragraphs, as `help CMD` joins it: its lines run on, and a line that starts
 * with "word:" or "- " starts a paragraph of its own. Indented under the .TP tag. */
static void roff_more(FILE *f, const char *more)
{
	char *copy = strdup(more), *save = NULL;
	int open = 0;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		size_t k = strspn(l, "abcdefghijklmnopqrstuvwxyz-");
		int starts = (k > 0 && l[k] == ':' && l[k + 1] == ' ') || !strncmp(l, "- ", 2);
		if (!open || starts) {
			fputs(open ? "\n.IP\n" : ".IP\n", f);
			open = 1;
		} else
			fputc('\n', f);
		roff_text(f, l, 0);
	}
	if (open)
		fputc('\n', f);
	free(copy);
}

static const struct {
	const char *name, *text;
} environment[] = {
	{ "NO_COLOR", "when set and not empty, figures in the terminal are drawn without colour (numbers and shades of characters)." },
	{ "TERM, COLORTERM", "the terminal's colour depth: COLORTERM=truecolor (or 24bit) for 24-bit colour, a TERM with 256color for 256 colours, TERM=dumb (or unset) for plain text. 'set colors' overrides them." },
	{ "COLUMNS, LINES", "the terminal's size when it cannot be asked (in a pipe)." },
	{ "GLASSBOX_KERNELS", "ref, scalar, avx2 or avx512: forces one kernel table instead of the best this CPU supports." },
	{ "GLASSBOX_WEIGHTS", "f32 widens 16-bit (BF16, F16) weights to 32-bit floats when a model loads; copy copies every weight matrix (float32 and 16-bit) from the file into glassbox's memory, on huge pages, which decoding reads a few per cent faster; mapped reads every one in place from the file, shared with every other program that maps it. By default float32 matrices are read in place and 16-bit ones too, but for those the file puts off a 64-byte boundary, which are copied (read in place they decode 20-30% slower)." },
	{ "GLASSBOX_TRACE_BUDGET", "the memory (in MB, default 256) a long run may keep for its trace; beyond it, a layer's tensors are computed again when a view asks." },
	{ "GLASSBOX_FONT", "a .ttf or .otf file for the text of PNG figures and the window, instead of DejaVu Sans found by fontconfig." },
	{ "DISPLAY, WAYLAND_DISPLAY, SDL_VIDEODRIVER", "where the projector window opens; without any of them 'window' says there is no display and figures still print and export." },
	{ "XDG_DATA_HOME", "the model gallery is $XDG_DATA_HOME/glassbox/models (default ~/.local/share/glassbox/models)." },
	{ "XDG_STATE_HOME", "the prompt's history is $XDG_STATE_HOME/glassbox/history (default ~/.local/state/glassbox/history)." },
	{ "HOME", "the default of the two above (~)." },
	{ "TMPDIR", "where temporary files go." },
};

static const char *examples[][2] = {
	{ "glassbox", "a prompt on the shipped model tiny-lm; try 'run When Mary and John went to the park, John gave a ball to', then 'attn 1 1'." },
	{ "glassbox -c \"run the cat sat on the mat; attn 1 1\"", "the attention weights of layer 1, head 1 as a heatmap in the terminal." },
	{ "glassbox -c \"run the cat sat on the mat; attn 1 1; export attn.png\"", "the same figure as a 1600x900 PNG for a slide." },
	{ "glassbox -c \"lesson 1 --export handout\"", "every figure of lesson 1 as numbered PNGs and a Markdown handout in the folder handout." },
	{ "glassbox -c \"run hello world; dump L1.attn.weights w.npy\"", "a trace tensor as a NumPy file." },
	{ "glassbox doctor", "before a class: what this machine can show, and what to fix." },
	{ "glassbox train --preset tiny-lm --out my-tiny-lm", "train the shipped model again (about 22 minutes on 2 cores)." },
};

/* The date in .TH: SOURCE_DATE_EPOCH's (a reproducible build, as Debian's sets it), or none. */
static void th_date(char *out, size_t cap)
{
	const char *e = getenv("SOURCE_DATE_EPOCH");
	out[0] = 0;
	if (e && *e) {
		time_t t = (time_t)strtoll(e, NULL, 10);
		struct tm tm;
		if (gmtime_r(&t, &tm))
			strftime(out, cap, "%Y-%m-%d", &tm);
	}
}

static int man1(FILE *f)
{
	char date[32];
	th_date(date, sizeof date);
	fprintf(f, ".\\\" glassbox.1: written by 'glassbox --gen-man 1' from the command table and the options\n"
	           ".\\\" (app/commands.c, app/cli.c). Do not edit: change the tables.\n");
	fprintf(f, ".TH GLASSBOX 1 \"%s\" \"glassbox %s\" \"User Commands\"\n", date, GLASSBOX_VERSION);
	fprintf(f, ".SH NAME\nglassbox \\- a Transformer you can see through\n.SH SYNOPSIS\n");
	for (const cli_option *o = cli_options; o->word; o++) {
		fputs(o == cli_options ? "" : ".br\n", f);
		fputs("\\fBglassbox\\fR", f);
		if (*o->word) {
			fputc(' ', f);
			roff_usage(f, o->word);
		}
		if (*o->args) {
			fputc(' ', f);
			roff_usage(f, o->args);
		}
		fputc('\n', f);
	}
	fputs(".SH DESCRIPTION\n", f);
	roff_text(f, "glassbox loads a small trained Transformer and shows what it does to a sentence, stage by "
	             "stage: tokens, embeddings, positions, queries, keys and values, attention per head, layer "
	             "norm, feed-forward, the residual stream and the output distribution. Every intermediate of "
	             "a run is recorded under a stable name and can be drawn in the terminal, in a projector "
	             "window (SDL2), exported as PNG, SVG or PDF for slides, or written as NumPy or CSV.", 0);
	fputs("\n.PP\n", f);
	roff_text(f, "The same commands (below) run at the prompt, after -c, in a script file, on the ':' line of "
	             "the explorer and in lessons. A unique prefix of a command is enough. A script stops at the "
	             "first error, which is one line on standard error.", 0);
	fputs("\n.SH OPTIONS\n", f);
	for (const cli_option *o = cli_options; o->word; o++) {
		fputs(".TP\n", f);
		if (o->alias) {
			roff_usage(f, o->alias);
			fputs(", ", f);
		}
		if (*o->word)
			roff_usage(f, o->word);
		else
			fputs("(no arguments)", f);
		if (*o->args) {
			fputc(' ', f);
			roff_usage(f, o->args);
		}
		fputc('\n', f);
		roff_text(f, o->help, 0);
		fputs(".\n", f);
		if (*o->more)
			roff_more(f, o->more);
	}
	fputs(".SH COMMANDS\n", f);
	roff_text(f, "Every command of the command language, as 'help' lists it and 'help CMD' explains it. "
	             "L and H count layers and heads from 1.", 0);
	fputc('\n', f);
	for (const command *c = commands; c->name; c++) {
		fprintf(f, ".TP\n\\fB");
		roff_text(f, c->name, 0);
		fputs("\\fR", f);
		if (*c->usage) {
			fputc(' ', f);
			roff_usage(f, c->usage);
		}
		fputc('\n', f);
		char first[512];
		snprintf(first, sizeof first, "%s", c->help);
		first[0] = (char)toupper((unsigned char)first[0]);
		roff_text(f, first, 0);
		fputs(".\n", f);
		if (c->more && *c->more)
			roff_more(f, c->more);
	}
	fputs(".SH ENVIRONMENT\n", f);
	for (size_t i = 0; i < sizeof environment / sizeof *environment; i++) {
		fprintf(f, ".TP\n.B %s\n", environment[i].name);
		roff_text(f, environment[i].text, 0);
		fputc('\n', f);
	}
	fputs(".SH FILES\n", f);
	static const char *files[][2] = {
		{ GLASSBOX_DATADIR "/models", "the shipped models (tiny-lm, tiny-mt), one folder each. A copy installed elsewhere finds PREFIX/share/glassbox from the program's own path, and a build tree uses its assets/models." },
		{ GLASSBOX_DATADIR "/lessons", "the lessons, NN-name.lesson, and README.md; see glassbox-lesson(5)." },
		{ "~/.local/share/glassbox/models", "the model gallery: downloaded model folders and llama2.c checkpoints that 'models' lists and 'load NAME' finds (XDG_DATA_HOME)." },
		{ "~/.local/state/glassbox/history", "the prompt's history (XDG_STATE_HOME)." },
	};
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		fputs(".TP\n.I ", f);
		roff_text(f, files[i][0], 0);
		fputc('\n', f);
		roff_text(f, files[i][1], 0);
		fputc('\n', f);
	}
	fputs(".SH \"EXIT STATUS\"\n.TP\n.B 0\nsuccess.\n.TP\n.B 1\n", f);
	roff_text(f, "a command failed (its error is one line on standard error; a script stops there), or doctor "
	             "found something a lesson needs missing.", 0);
	fputs("\n.TP\n.B 2\n", f);
	roff_text(f, "the command line itself is wrong (an unknown option).", 0);
	fputs("\n.SH EXAMPLES\n", f);
	for (size_t i = 0; i < sizeof examples / sizeof *examples; i++) {
		fputs(".TP\n.B ", f);
		roff_text(f, examples[i][0], 0);
		fputc('\n', f);
		roff_text(f, examples[i][1], 0);
		fputc('\n', f);
	}
	fputs(".SH \"SEE ALSO\"\n.BR glassbox-lesson (5)\n", f);
	return 0;
}

/* ---- glassbox-lesson(5): lessons/README.md as man(7) ---- */

static int blank(const char *l) { return l[strspn(l, " \t")] == 0; }
static int indented(const char *l) { return l[0] == '\t' || !strncmp(l, "    ", 4); }

/* A table row "| a | b | c |": the first cell as the tag, the others after it. */
static void md_row(FILE *f, char *l)
{
	char *cells[16];
	int n = 0, tick = 0;
	char *start = l + 1;
	for (char *p = l + 1; *p && n < 16; p++) {
		if (*p == '`')
			tick = !tick;
		if (*p == '|' && !tick) {
			*p = 0;
			cells[n++] = start;
			start = p + 1;
		}
	}
	fputs(".TP\n", f);
	for (int i = 0; i < n; i++) {
		char *c = cells[i];
		while (*c == ' ')
			c++;
		size_t k = strlen(c);
		while (k && c[k - 1] == ' ')
			c[--k] = 0;
		if (i > 1)
			fputs(" \\(em ", f);
		roff_text(f, c, R_CODE);
		if (i == 0 || i == n - 1)
			fputc('\n', f);
	}
}

static int man5(FILE *f, const char *md_path)
{
	gb_err err;
	char *md = gb_read_file(md_path, 1u << 20, NULL, &err);
	if (!md) {
		fprintf(stderr, "glassbox: %s\n", err.msg);
		return -1;
	}
	char date[32];
	th_date(date, sizeof date);
	fprintf(f, ".\\\" glassbox-lesson.5: written by 'glassbox --gen-man 5' from lessons/README.md. Do not\n"
	           ".\\\" edit: change the README.\n");
	fprintf(f, ".TH GLASSBOX-LESSON 5 \"%s\" \"glassbox %s\" \"File Formats\"\n", date, GLASSBOX_VERSION);
	fputs(".SH NAME\nglassbox-lesson \\- the format of glassbox's lesson files\n", f);
	fputs(".SH SYNOPSIS\n.I NN\\-name.lesson\n", f);
	int para = 0, code = 0, row = -1; /* row: table rows seen (the header is skipped) */
	char *save = NULL, *next;
	for (char *l = md; l; l = next) {
		next = strchr(l, '\n');
		if (next)
			*next++ = 0;
		if (code && (indented(l) || (blank(l) && next && indented(next)))) {
			const char *t = l[0] == '\t' ? l + 1 : blank(l) ? "" : l + 4;
			roff_text(f, t, 0);
			fputc('\n', f);
			continue;
		}
		if (code) {
			fputs(".fi\n.RE\n", f);
			code = 0;
		}
		if (*l != '|')
			row = -1;
		if (blank(l)) {
			para = 0;
			continue;
		}
		if (!strncmp(l, "# ", 2)) {
			fputs(".SH DESCRIPTION\n", f);
			para = 0;
		} else if (!strncmp(l, "## ", 3) || !strncmp(l, "### ", 4)) {
			int sub = l[2] == '#';
			fputs(sub ? ".SS \"" : ".SH \"", f);
			for (char *p = l + (sub ? 4 : 3); *p; p++)
				if (*p != '"')
					fputc(sub ? *p : toupper((unsigned char)*p), f);
			fputs("\"\n", f);
			para = 0;
		} else if (*l == '|') {
			if (++row > 1 || (row == 1 && !strstr(l, "---")))
				md_row(f, l);
			para = 0;
		} else if (indented(l) && !para) {
			fputs(".PP\n.RS 4\n.nf\n", f);
			code = 1;
			roff_text(f, l[0] == '\t' ? l + 1 : l + 4, 0);
			fputc('\n', f);
		} else if (!strncmp(l, "- ", 2)) {
			fputs(".IP \\(bu 2\n", f);
			roff_text(f, l + 2, R_CODE);
			fputc('\n', f);
			para = 2;
		} else {
			if (!para)
				fputs(".PP\n", f);
			para = para ? para : 1;
			roff_text(f, l + strspn(l, " "), R_CODE);
			fputc('\n', f);
		}
	}
	(void)save;
	if (code)
		fputs(".fi\n.RE\n", f);
	fputs(".SH \"SEE ALSO\"\n.BR glassbox (1)\n", f);
	free(md);
	return 0;
}

int gen_main(int argc, char **argv)
{
	if (!strcmp(argv[0], "--gen-man") && argc == 2 && !strcmp(argv[1], "1"))
		return man1(stdout);
	if (!strcmp(argv[0], "--gen-man") && argc == 3 && !strcmp(argv[1], "5"))
		return man5(stdout, argv[2]);
	if (!strcmp(argv[0], "--gen-completion") && argc == 2)
		return gen_completion(argv[1]);
	fprintf(stderr, "glassbox: usage: --gen-man 1 | --gen-man 5 lessons/README.md | --gen-completion bash|zsh|fish\n");
	return -1;
}

static int lesson_file(const struct dirent *e)
{
	size_t n = strlen(e->d_name);
	return e->d_name[0] != '.' && n > 7 && !strcmp(e->d_name + n - 7, ".lesson");
}

static void say(const char *w, const char *prefix)
{
	if (!strncmp(w, prefix, strlen(prefix)))
		printf("%s\n", w);
}

/* Lesson numbers and names: "06-softmax-mask.lesson" gives 6 and softmax-mask. */
static void list_lessons(const char *prefix)
{
	char dir[1200];
	struct dirent **names;
	int n = lessons_dir(dir, sizeof dir) ? -1 : scandir(dir, &names, lesson_file, alphasort);
	for (int i = 0; i < n; i++) {
		const char *d = names[i]->d_name, *dash = strchr(d, '-');
		char w[300];
		if (isdigit((unsigned char)d[0])) {
			snprintf(w, sizeof w, "%d", atoi(d));
			say(w, prefix);
			if (dash) {
				snprintf(w, sizeof w, "%.*s", (int)(strlen(dash + 1) - 7), dash + 1);
				say(w, prefix);
			}
		}
		free(names[i]);
	}
	if (n > 0)
		free(names);
}

/* Model folders (a config.json inside) and llama2.c checkpoints (.bin) in dir, by name. */
static void list_models_in(const char *dir, const char *prefix)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		const char *d = names[i]->d_name;
		size_t k = strlen(d);
		char p[1400];
		snprintf(p, sizeof p, "%s/%s/config.json", dir, d);
		FILE *c = d[0] != '.' ? fopen(p, "r") : NULL;
		if (c || (d[0] != '.' && k > 4 && !strcmp(d + k - 4, ".bin") && strcmp(d, "tokenizer.bin")))
			say(d, prefix);
		if (c)
			fclose(c);
		free(names[i]);
	}
	if (n > 0)
		free(names);
}

/* The shipped models, then the gallery's. */
static void list_models(const char *prefix)
{
	char dir[1200];
	if (!models_dir(dir, sizeof dir))
		list_models_in(dir, prefix);
	if (!user_models_dir(dir, sizeof dir))
		list_models_in(dir, prefix);
}

/* The candidates for the last word of a command line (the command after a script's last ';'):
 * the prompt's own completer (complete.c: command names, the words and options of the usage at
 * that position, layer and head numbers of the default model), and lesson or model names where
 * the usage takes one. */
static int complete_line(const char *text)
{
	const char *seg = strrchr(text, ';') ? strrchr(text, ';') + 1 : text;
	while (isspace((unsigned char)*seg))
		seg++;
	const char *word = seg + strlen(seg);
	while (word > seg && !isspace((unsigned char)word[-1]))
		word--;
	session s;
	session_init(&s);
	if (word > seg)
		session_load_default(&s); /* "attn <Tab>": its layers */
	char **v = complete_candidates(&s, seg, (int)(word - seg), word);
	for (int i = 0; v && v[i]; i++) {
		printf("%s\n", v[i]);
		free(v[i]);
	}
	free(v);
	session_free(&s);
	if (word == seg || *word == '-')
		return 0;
	/* the command (a unique prefix), and what its usage takes */
	char name[64];
	snprintf(name, sizeof name, "%.*s", (int)strcspn(seg, " \t"), seg);
	const command *hit = NULL;
	int n = 0;
	for (const command *c = commands; c->name; c++)
		if (!strncmp(c->name, name, strlen(name))) {
			hit = c;
			n++;
			if (!strcmp(c->name, name)) {
				n = 1;
				break;
			}
		}
	if (n == 1 && strstr(hit->usage, "N|NAME"))
		list_lessons(word);
	else if (n == 1 && strstr(hit->usage, "DIR|NAME"))
		list_models(word);
	return 0;
}

int gen_complete_list(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "lessons"))
		list_lessons("");
	else if (argc == 2 && !strcmp(argv[1], "models"))
		list_models("");
	else if (argc == 2 && !strcmp(argv[1], "commands"))
		for (const command *c = commands; c->name; c++)
			printf("%s\n", c->name);
	else if (argc == 3 && !strcmp(argv[1], "line"))
		return complete_line(argv[2]);
	else {
		fprintf(stderr, "glassbox: usage: --complete-list lessons|models|commands|line TEXT\n");
		return -1;
	}
	return 0;
}
