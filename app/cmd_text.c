/* cmd_text.c — the current text: `run` (what it runs becomes the text every view shows),
 * `tokenize` (its pieces and ids, or every BPE merge replayed) and `step`, the guided tour of
 * it through the pipeline. */
#include "app/cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/textout.h"
#include "app/view_steps.h"
#include "app/tour.h"
#include "model/fileio.h"
#include "viz/figure.h"
#include "model/tokenizer/tokenizer.h"

static int parse_ids(char **argv, int argc, int *i, int **ids, int *n)
{
	int cap = 16;
	*ids = malloc((size_t)cap * sizeof **ids);
	*n = 0;
	while (*i < argc && strncmp(argv[*i], "--", 2)) {
		int v;
		if (parse_int(argv[*i], 0, 100000000, &v, "a token id")) {
			free(*ids);
			*ids = NULL;
			return -1;
		}
		if (*n == cap)
			*ids = realloc(*ids, (size_t)(cap *= 2) * sizeof **ids);
		(*ids)[(*n)++] = v;
		(*i)++;
	}
	return 0;
}


int cmd_run(session *s, int argc, char **argv, const char *rest)
{
	if (need_model(s))
		return -1;
	const gb_config *c = &s->model.cfg;
	int *ids = NULL, *tgt = NULL, n = 0, n_tgt = 0, rc = -1, exact = 0;
	char *file_text = NULL; /* run --file FILE: the file is the text, newlines and ';' included */
	if (argc > 1 && !strcmp(argv[1], "--file")) {
		if (argc != 3) {
			errorf("run --file takes one file: run --file story.txt");
			return -1;
		}
		gb_err err;
		size_t len;
		file_text = gb_read_file(argv[2], (size_t)64 << 20, &len, &err);
		if (!file_text) {
			errorf("%s", err.msg);
			return -1;
		}
		if (strlen(file_text) != len) {
			errorf("%s holds a NUL byte (at byte %zu): it is not a text file", argv[2], strlen(file_text));
			free(file_text);
			return -1;
		}
		size_t bad = 0;
		uint32_t cp;
		for (int k; bad < len && (k = gb_utf8_decode(file_text + bad, &cp)) > 0 && cp != GB_UTF8_BAD;)
			bad += (size_t)k;
		if (bad < len) {
			errorf("%s is not UTF-8: byte %zu (0x%02x) starts no character", argv[2], bad,
			       (unsigned char)file_text[bad]);
			free(file_text);
			return -1;
		}
		while (len > 0 && (file_text[len - 1] == '\n' || file_text[len - 1] == '\r'))
			file_text[--len] = 0; /* the file's last line break is not part of the text */
		rest = file_text;
	}
	if (argc > 1 && !strcmp(argv[1], "--ids")) {
		int i = 2;
		if (parse_ids(argv, argc, &i, &ids, &n))
			return -1;
		if (i < argc && !strcmp(argv[i], "--target-ids")) {
			i++;
			if (parse_ids(argv, argc, &i, &tgt, &n_tgt))
				goto out;
		}
		if (i < argc) {
			usage(argv[0]);
			goto out;
		}
	} else {
		if (!*rest) {
			errorf("run needs a text: run TEXT (or run --ids N N ...)");
			return -1;
		}
		if (encode(s, rest, &ids, &n))
			return -1;
		if (n == 0) {
			errorf("the text gave no tokens");
			goto out;
		}
		if (n > c->n_ctx) {
			fprintf(stderr, "glassbox: note: the text is %d tokens; kept the last %d (the context)\n", n, c->n_ctx);
			memmove(ids, ids + (n - c->n_ctx), (size_t)c->n_ctx * sizeof *ids);
			n = c->n_ctx;
		} else
			exact = 1; /* every token of the text ran: keep it as typed */
	}
	if (c->encdec && !tgt) {
		tgt = malloc(sizeof *tgt);
		tgt[0] = c->dec_start_id;
		n_tgt = 1;
	}
	if (!c->encdec && tgt) {
		errorf("--target-ids is for encoder-decoder models");
		goto out;
	}
	rc = forward(s, ids, n, tgt, n_tgt);
	if (!rc) {
		/* The text that ran (what figures record): not "--ids 5 6 7", nor the part of a long
		 * text that was cut. */
		free(s->text);
		s->text = exact ? strdup(rest) : ids_text(s, ids, n);
		s->on_show = 0; /* a view of the text before is not this text's (arch) */
	}
out:
	free(ids);
	free(tgt);
	free(file_text);
	return rc;
}

/* A token for the terminal (as piece_str, for any tokenizer): spaces as a middle dot,
 * newlines as a return symbol, control bytes and bytes that are not whole UTF-8 as \xNN. */
static void tok_piece(const gb_tokenizer *t, int id, char *out, size_t cap)
{
	size_t len = 0, o = 0;
	const unsigned char *b = gb_tok_piece_bytes(t, id, &len);
	if (!b) {
		snprintf(out, cap, "#%d", id);
		return;
	}
	for (size_t j = 0; j < len && o + 8 < cap;) {
		int u = 0;
		if (b[j] >= 0xC2 && b[j] <= 0xF4) {
			int need = b[j] >= 0xF0 ? 4 : b[j] >= 0xE0 ? 3 : 2;
			u = j + (size_t)need <= len ? need : 0;
			for (int k = 1; k < u; k++)
				if ((b[j + (size_t)k] & 0xC0) != 0x80)
					u = 0;
		}
		if (b[j] == ' ')
			o += (size_t)snprintf(out + o, cap - o, "\xc2\xb7");
		else if (b[j] == '\n')
			o += (size_t)snprintf(out + o, cap - o, "\xe2\x8f\x8e");
		else if (b[j] >= 32 && b[j] < 127)
			out[o++] = (char)b[j];
		else if (u) {
			memcpy(out + o, b + j, (size_t)u);
			o += (size_t)u;
			j += (size_t)u;
			continue;
		} else
			o += (size_t)snprintf(out + o, cap - o, "\\x%02x", b[j]);
		j++;
	}
	out[o] = 0;
}

/* Shows one word's pieces, e.g. [th][e] for the merge replay. */
static void print_pieces(const gb_tokenizer *t, const int *p, int n)
{
	for (int i = 0; i < n; i++) {
		char piece[128];
		tok_piece(t, p[i], piece, sizeof piece);
		printf("[%s]", piece);
	}
}

/* Text for the terminal: as tok_piece does, spaces shown as a middle dot. */
static void show_text(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == ' ')
			fputs("\xc2\xb7", stdout);
		else if (c == '\n')
			fputs("\xe2\x8f\x8e", stdout);
		else if (c < 32 || c == 127)
			printf("\\x%02x", c);
		else
			putchar(c);
	}
}

/* --steps: the tokenizer's steps, the normalized text (when it changed), then each word
 * (pre-token) from its first pieces through every merge. */
static void show_steps(const gb_tokenizer *t, const char *input, const int *ids, int n,
                       const gb_tok_trace *tt)
{
	/* the first line as lessons read it: "N words; M merges ..." */
	printf("%d word%s; %d merge%s in the order applied (rank = when the merge was learned)\n",
	       tt->n_words, tt->n_words == 1 ? "" : "s", tt->n_steps, tt->n_steps == 1 ? "" : "s");
	printf("steps: ");
	text_wrap(stdout, gb_tok_describe(t), text_width(), 7, 7);
	if (tt->text_len != strlen(input) || memcmp(tt->text, input, tt->text_len)) {
		printf("normalized: ");
		show_text(tt->text, tt->text_len);
		printf("\n");
	}
	int cap = 16, np = 0, cur = -1, rule_w = 0;
	for (int w = 0; w < tt->n_words; w++)
		cap = tt->words[w].n_sym + 1 > cap ? tt->words[w].n_sym + 1 : cap;
	int *pieces = malloc(sizeof(int) * (size_t)cap);
	for (int k = 0; k < tt->n_steps; k++) { /* the widest "a + b -> ab", for one column */
		char l[128], r[128], m[128], rule[400];
		tok_piece(t, tt->steps[k].left, l, sizeof l);
		tok_piece(t, tt->steps[k].right, r, sizeof r);
		tok_piece(t, tt->steps[k].result, m, sizeof m);
		snprintf(rule, sizeof rule, "%s + %s -> %s", l, r, m);
		rule_w = gb_utf8_width(rule) > rule_w ? gb_utf8_width(rule) : rule_w;
	}
	for (int k = 0; k <= tt->n_steps; k++) {
		int w = k < tt->n_steps ? tt->steps[k].word : tt->n_words;
		while (cur < w) { /* a new word: finish the previous one, start from its first pieces */
			if (cur >= 0 && !tt->words[cur].special) {
				printf("  word %d done: ", cur + 1);
				print_pieces(t, pieces, np);
				printf("\n");
			}
			if (++cur >= tt->n_words)
				break;
			const gb_tok_word *wd = &tt->words[cur];
			np = 0;
			if (wd->special) {
				pieces[np++] = ids[wd->first];
				printf("word %d: added token ", cur + 1);
				print_pieces(t, pieces, np);
				printf("\n");
				continue;
			}
			for (int i = 0; i < wd->n_sym; i++)
				pieces[np++] = tt->syms[wd->sym_first + i];
			printf("word %d: ", cur + 1);
			print_pieces(t, pieces, np);
			if (wd->whole)
				printf("  (in the vocabulary whole: no merges)");
			else if (wd->fallback)
				printf("  (%d byte-fallback piece%s: characters the vocabulary lacks)",
				       wd->fallback, wd->fallback == 1 ? "" : "s");
			printf("\n");
		}
		if (k == tt->n_steps)
			break;
		const gb_tok_step *st = &tt->steps[k];
		char l[128], r[128], m[128], rule[400];
		tok_piece(t, st->left, l, sizeof l);
		tok_piece(t, st->right, r, sizeof r);
		tok_piece(t, st->result, m, sizeof m);
		pieces[st->pos] = st->result;
		memmove(pieces + st->pos + 1, pieces + st->pos + 2, sizeof(int) * (size_t)(np - st->pos - 2));
		np--;
		/* padded by display width, so the pieces after a "·" stay in their column */
		snprintf(rule, sizeof rule, "%s + %s -> %s", l, r, m);
		printf("  merge %-3d rank %-6d ", k + 1, st->rank);
		text_cols(stdout, rule, gb_utf8_width(rule) > rule_w ? gb_utf8_width(rule) : rule_w);
		putchar(' ');
		print_pieces(t, pieces, np);
		printf("\n");
	}
	free(pieces);
	printf("ids:");
	for (int i = 0; i < n; i++)
		printf(" %d", ids[i]);
	printf("\n");
}

/* Two tokenizers side by side on one text: the steps of each, then id and piece per row. */
static int show_compare(const char *d1, const char *d2, const char *text, int flags)
{
	gb_tokenizer *t[2] = { NULL, NULL };
	int *ids[2] = { NULL, NULL }, n[2] = { 0, 0 }, rc = -1;
	const char *name[2] = { d1, d2 };
	gb_err err;
	for (int k = 0; k < 2; k++)
		if (gb_tok_load(name[k], &t[k], &err) ||
		    gb_tok_encode(t[k], text, strlen(text), flags, &ids[k], &n[k], NULL, &err)) {
			errorf("%s", err.msg);
			goto out;
		}
	int w = 8; /* the left column: "12345  piece", at least its heading */
	for (int i = 0; i < n[0]; i++) {
		char p[128], cell[160];
		tok_piece(t[0], ids[0][i], p, sizeof p);
		snprintf(cell, sizeof cell, "%6d  %s", ids[0][i], p);
		w = gb_utf8_width(cell) > w ? gb_utf8_width(cell) : w;
	}
	w = gb_utf8_width(d1) > w ? gb_utf8_width(d1) : w;
	for (int k = 0; k < 2; k++) {
		printf("%c: %s (%d tokens)\n   ", 'A' + k, name[k], n[k]);
		text_wrap(stdout, gb_tok_describe(t[k]), text_width(), 3, 3);
	}
	printf("   ");
	text_cols(stdout, "A", w);
	printf("  B\n");
	for (int i = 0; i < n[0] || i < n[1]; i++) {
		char cell[2][160];
		for (int k = 0; k < 2; k++) {
			char p[128];
			cell[k][0] = 0;
			if (i < n[k]) {
				tok_piece(t[k], ids[k][i], p, sizeof p);
				snprintf(cell[k], sizeof cell[k], "%6d  %s", ids[k][i], p);
			}
		}
		printf("%3d", i + 1);
		if (cell[1][0]) {
			text_cols(stdout, cell[0], w);
			printf("  %s\n", cell[1]);
		} else {
			printf("%s\n", cell[0]);
		}
	}
	rc = 0;
out:
	for (int k = 0; k < 2; k++) {
		free(ids[k]);
		gb_tok_free(t[k]);
	}
	return rc;
}

/* --file: one line of ids per record (records end at NUL when the file has one, else at a
 * newline), and decode(encode(x)) == x checked for each; the count goes to stderr. */
static int tokenize_file(const gb_tokenizer *t, const char *path, int flags)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		errorf("%s: cannot open", path);
		return -1;
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	for (size_t k; buf && (k = fread(buf + n, 1, cap - n, f)) > 0;) {
		n += k;
		if (n == cap)
			buf = realloc(buf, cap *= 2);
	}
	fclose(f);
	if (!buf) {
		errorf("out of memory reading %s", path);
		return -1;
	}
	char sep = memchr(buf, 0, n) ? 0 : '\n';
	long records = 0, same = 0;
	gb_err err;
	for (size_t i = 0; i < n;) {
		char *e = memchr(buf + i, sep, n - i);
		size_t len = e ? (size_t)(e - buf) - i : n - i;
		int *ids, m;
		if (gb_tok_encode(t, buf + i, len, flags, &ids, &m, NULL, &err)) {
			errorf("record %ld: %s", records + 1, err.msg);
			free(buf);
			return -1;
		}
		for (int k = 0; k < m; k++)
			printf(k ? " %d" : "%d", ids[k]);
		putchar('\n');
		char *back;
		size_t blen;
		if (!gb_tok_decode(t, ids, m, &back, &blen, &err)) {
			same += blen == len && !memcmp(back, buf + i, len);
			free(back);
		}
		free(ids);
		records++;
		i += len + 1;
	}
	free(buf);
	fprintf(stderr, "tokenize --file: %ld records; decode(encode(x)) == x for %ld\n", records, same);
	return 0;
}

int cmd_tokenize(session *s, int argc, char **argv, const char *rest)
{
	int steps = 0, flags = 0;
	char *tokdir = NULL, *cmp[2] = { NULL, NULL }, *file = NULL;
	/* options first, each a word; --tokenizer, --compare and --file take paths */
	while (!strncmp(rest, "--", 2)) {
		const char *e = rest + strcspn(rest, " ");
		size_t l = (size_t)(e - rest);
		int take = 0;
		char **one[2] = { &tokdir, NULL };
		if (l == 7 && !strncmp(rest, "--steps", 7))
			steps = 1;
		else if (l == 8 && !strncmp(rest, "--merges", 8))
			steps = 2; /* the replay as a figure: a strip per merge */
		else if (l == 9 && !strncmp(rest, "--special", 9))
			flags |= GB_TOK_SPECIAL;
		else if (l == 10 && !strncmp(rest, "--template", 10))
			flags |= GB_TOK_TEMPLATE;
		else if (l == 11 && !strncmp(rest, "--tokenizer", 11))
			take = 1, one[0] = &tokdir;
		else if (l == 6 && !strncmp(rest, "--file", 6))
			take = 1, one[0] = &file;
		else if (l == 9 && !strncmp(rest, "--compare", 9))
			take = 2, one[0] = &cmp[0], one[1] = &cmp[1];
		else
			break; /* a text that starts with "--" */
		rest = e;
		for (int k = 0; k < take; k++) {
			while (*rest == ' ')
				rest++;
			size_t pl = strcspn(rest, " ");
			if (!pl) {
				errorf("%.*s needs %s", (int)l, e - l, take == 2 ? "two folders" : "a path");
				goto fail;
			}
			free(*one[k]);
			*one[k] = strndup(rest, pl);
			rest += pl;
		}
		while (*rest == ' ')
			rest++;
	}
	if (cmp[0]) {
		int rc = show_compare(cmp[0], cmp[1], rest, flags);
		free(cmp[0]), free(cmp[1]), free(tokdir), free(file);
		return rc;
	}
	gb_tokenizer *own = NULL;
	const gb_tokenizer *t;
	gb_err err;
	if (tokdir) {
		if (gb_tok_load(tokdir, &own, &err)) {
			errorf("%s", err.msg);
			goto fail;
		}
		t = own;
	} else {
		if (need_model(s))
			goto fail;
		if (!s->model.tok && s->model.l2c_tok) {
			/* llama2.c's tokenizer.bin: its ids and pieces (it merges by score: no steps) */
			if (steps || file || flags) {
				errorf("a llama2.c tokenizer.bin shows its ids and pieces only: --steps, --file and the "
				       "options read a tokenizer.json");
				goto fail;
			}
			int *ids, n;
			if (gb_model_encode(&s->model, rest, strlen(rest), &ids, &n, &err)) {
				errorf("%s", err.msg);
				goto fail;
			}
			for (int i = 0; i < n; i++) {
				char piece[128];
				piece_str(s, ids[i], piece, sizeof piece);
				printf("%5d  %s\n", ids[i], piece);
			}
			free(ids);
			free(tokdir), free(file);
			return 0;
		}
		if (!s->model.tok) {
			errorf("%s has no tokenizer (tokenizer.json)", s->model.dir);
			goto fail;
		}
		t = s->model.tok;
	}
	int rc = -1;
	if (file) {
		rc = tokenize_file(t, file, flags);
	} else {
		int *ids, n;
		gb_tok_trace tt = { 0 };
		if (gb_tok_encode(t, rest, strlen(rest), flags, &ids, &n, steps ? &tt : NULL, &err)) {
			errorf("%s", err.msg);
		} else {
			if (steps == 1)
				show_steps(t, rest, ids, n, &tt);
			else if (!steps)
				for (int i = 0; i < n; i++) {
					char piece[128];
					tok_piece(t, ids[i], piece, sizeof piece);
					printf("%5d  %s\n", ids[i], piece);
				}
			rc = 0;
			/* the replay as strips: --merges shows it, --steps makes it the figure for the
			 * window and export beside its text */
			if (steps && t == s->model.tok) {
				gb_figure *f = view_merges(s, t, rest, ids, n, &tt);
				rc = !f ? -1 : steps == 2 ? show_figure(s, f) : session_adopt(s, f, NULL);
			} else if (steps == 2) {
				errorf("--merges draws the loaded model's tokenizer: load it, or use --steps with --tokenizer");
				rc = -1;
			}
			gb_tok_trace_free(&tt);
			free(ids);
		}
	}
	gb_tok_free(own);
	free(tokdir), free(file);
	return rc;
fail:
	free(cmp[0]), free(cmp[1]), free(tokdir), free(file);
	return -1;
}

/* The guided tour: each `step` shows the next stop, `step back` the previous one. */
int cmd_step(session *s, int argc, char **argv, const char *rest)
{
	if (need_run(s))
		return -1;
	int n = tour_length(s), i = s->tour;
	if (argc == 2 && !strcmp(argv[1], "back"))
		i = s->tour - 2;
	else if (argc == 2) {
		if (parse_int(argv[1], 1, n, &i, "the stop"))
			return -1;
		i--;
	} else if (argc != 1)
		return usage(argv[0]);
	if (i < 0) {
		errorf("this is the first stop: 'step' goes forward");
		return -1;
	}
	if (i >= n) {
		printf("the tour is over (%d stops): 'step 1' starts again, or 'run' a new text\n", n);
		return 0;
	}
	char heading[160];
	const char *text;
	gb_figure *f = tour_stop(s, i, heading, sizeof heading, &text);
	s->tour = i + 1; /* a stop this model cannot show (e.g. no positions) is passed, not a wall */
	if (!f)
		return -1;
	printf("== stop %d of %d: %s\n", i + 1, n, heading);
	text_wrap(stdout, text, text_width(), 0, 0); /* one paragraph, at the terminal's width */
	putchar('\n');
	return show_figure(s, f);
}
