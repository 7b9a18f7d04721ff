/* cmd_text.c — the current text: `run` (what it runs becomes the text every view shows),
 * `tokenize` (its pieces and ids, or every BPE merge replayed) and `step`, the guided tour of
 * it through the pipeline. */
#include "app/cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/textout.h"
#include "app/tour.h"
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
	}
out:
	free(ids);
	free(tgt);
	return rc;
}

/* Shows one word's pieces, e.g. [th][e] for the merge replay. */
static void print_pieces(session *s, const int *p, int n)
{
	for (int i = 0; i < n; i++) {
		char piece[128];
		piece_str(s, p[i], piece, sizeof piece);
		printf("[%s]", piece);
	}
}

int cmd_tokenize(session *s, int argc, char **argv, const char *rest)
{
	if (need_model(s))
		return -1;
	int steps = 0;
	if (!strncmp(rest, "--steps", 7) && (rest[7] == ' ' || !rest[7])) {
		steps = 1;
		rest += 7;
		while (*rest == ' ')
			rest++;
	}
	if (!s->model.tok) {
		errorf("%s has no tokenizer (tokenizer.json)", s->model.dir);
		return -1;
	}
	int *ids, n;
	gb_tok_trace tt = { 0 };
	gb_err err;
	if (gb_tok_encode(s->model.tok, rest, strlen(rest), 0, &ids, &n, steps ? &tt : NULL, &err)) {
		errorf("%s", err.msg);
		return -1;
	}
	if (steps) {
		/* Replay: every word starts as its bytes; each merge joins two neighbours, lowest rank
		 * (learned earliest) first. */
		printf("%d word%s; %d merge%s in the order applied (rank = when the merge was learned)\n", tt.n_words,
		       tt.n_words == 1 ? "" : "s", tt.n_steps, tt.n_steps == 1 ? "" : "s");
		int *pieces = malloc(sizeof(int) * (strlen(rest) + 1)), np = 0, cur = -1, rule_w = 0;
		for (int k = 0; k < tt.n_steps; k++) { /* the widest "a + b -> ab", for one column */
			char l[128], r[128], m[128], rule[400];
			piece_str(s, tt.steps[k].left, l, sizeof l);
			piece_str(s, tt.steps[k].right, r, sizeof r);
			piece_str(s, tt.steps[k].result, m, sizeof m);
			snprintf(rule, sizeof rule, "%s + %s -> %s", l, r, m);
			rule_w = gb_utf8_width(rule) > rule_w ? gb_utf8_width(rule) : rule_w;
		}
		for (int k = 0; k <= tt.n_steps; k++) {
			int w = k < tt.n_steps ? tt.steps[k].word : tt.n_words;
			while (cur < w) { /* a new word: finish the previous one, start from its bytes */
				if (cur >= 0) {
					printf("  word %d done: ", cur + 1);
					print_pieces(s, pieces, np);
					printf("\n");
				}
				if (++cur >= tt.n_words)
					break;
				const gb_tok_word *wd = &tt.words[cur];
				np = 0;
				if (wd->special)
					pieces[np++] = ids[wd->first];
				else
					for (size_t b = 0; b < wd->len; b++)
						pieces[np++] = gb_tok_byte_id(s->model.tok, (unsigned char)rest[wd->start + b]);
				printf("word %d: ", cur + 1);
				print_pieces(s, pieces, np);
				printf("\n");
			}
			if (k == tt.n_steps)
				break;
			const gb_tok_step *st = &tt.steps[k];
			char l[128], r[128], m[128];
			piece_str(s, st->left, l, sizeof l);
			piece_str(s, st->right, r, sizeof r);
			piece_str(s, st->result, m, sizeof m);
			pieces[st->pos] = st->result;
			memmove(pieces + st->pos + 1, pieces + st->pos + 2, sizeof(int) * (size_t)(np - st->pos - 2));
			np--;
			/* padded by display width, so the pieces after a "·" stay in their column */
			char rule[400];
			snprintf(rule, sizeof rule, "%s + %s -> %s", l, r, m);
			printf("  merge %-3d rank %-5d ", k + 1, st->rank);
			text_cols(stdout, rule, gb_utf8_width(rule) > rule_w ? gb_utf8_width(rule) : rule_w);
			putchar(' ');
			print_pieces(s, pieces, np);
			printf("\n");
		}
		free(pieces);
		gb_tok_trace_free(&tt);
		printf("ids:");
		for (int i = 0; i < n; i++)
			printf(" %d", ids[i]);
		printf("\n");
	} else
		for (int i = 0; i < n; i++) {
			char piece[128];
			piece_str(s, ids[i], piece, sizeof piece);
			printf("%5d  %s\n", ids[i], piece);
		}
	free(ids);
	return 0;
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
