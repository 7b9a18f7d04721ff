/* cmd_data.c — the numbers behind the figures: `trace` lists the tensors of the last run,
 * `print` and `dump` give one tensor's numbers, `export` writes the current figure for slides
 * (PNG, SVG) or as numbers (CSV, NPY). */
#include "app/cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/textout.h"
#include "app/views.h"
#include "viz/export.h"

int cmd_trace(session *s, int argc, char **argv, const char *rest)
{
	if (argc != 1)
		return usage(argv[0]);
	if (need_run(s))
		return -1;
	for (int i = 0; i < s->trace.n; i++) {
		const gb_ttensor *t = &s->trace.t[i];
		char shape[96] = "";
		for (int d = 0; d < t->ndim; d++)
			snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%s %d", d ? ", " : "",
			         gb_axis_name(t->axes[d]), t->shape[d]);
		printf("%-26s (%s)\n", t->name, shape);
	}
	return 0;
}

/* The token labels of the tensor's axis ax (a token, query or key axis), or NULL. */
static char **axis_tokens(session *s, const gb_ttensor *t, int ax, int len, int *n)
{
	int a = t->axes[ax];
	if (a != GB_AX_TOKEN && a != GB_AX_QUERY && a != GB_AX_KEY)
		return NULL;
	/* a cross-attention's keys are the encoder's tokens; everything else is its own stack's */
	const char *stack = !strncmp(t->name, "enc.", 4) || (strstr(t->name, ".cross.") && a == GB_AX_KEY) ? "enc."
	                    : !strncmp(t->name, "dec.", 4) ? "dec." : "";
	char **l = token_labels(s, stack, n);
	if (l && *n != len) {
		free_labels(l, *n);
		return NULL;
	}
	return l;
}

/* print NAME [I] [--row R]: every number, or block I of a 3-D tensor (a head), or one row R
 * of it (from 1; -1 is the last) as a column with the tokens of its axis beside it, so a
 * lesson can ask for a number no colour can give. */
int cmd_print(session *s, int argc, char **argv, const char *rest)
{
	int blk = 0, row = 0;
	if (argc < 2 || argc > 5)
		return usage(argv[0]);
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--row") && i + 1 < argc) {
			char *end;
			long r = strtol(argv[++i], &end, 10);
			if (*end || !r || r < -100000 || r > 100000) {
				errorf("--row takes a row number from 1, or -1 for the last (got '%s')", argv[i]);
				return -1;
			}
			row = (int)r;
		} else if (!blk) {
			if (parse_int(argv[i], 1, 1 << 20, &blk, "the slice (a head, from 1)"))
				return -1;
		} else
			return usage(argv[0]);
	}
	if (need_run(s))
		return -1;
	/* its shape first, computing nothing: one head of a long input's attention is then
	 * computed alone, not with the rest of its sub-layer */
	const gb_ttensor *t = gb_trace_find(&s->trace, argv[1]);
	if (!t) {
		find_tensor(s, argv[1]); /* the error, with the nearest name */
		return -1;
	}
	int cols = t->shape[t->ndim - 1], rows = t->ndim >= 2 ? t->shape[t->ndim - 2] : 1;
	int blocks = t->ndim == 3 ? t->shape[0] : 1;
	if (blk && (t->ndim != 3 || blk > blocks)) {
		if (t->ndim != 3)
			errorf("%s has %d dimension%s: a slice picks a head of a 3-D tensor only", argv[1], t->ndim,
			       t->ndim == 1 ? "" : "s");
		else
			errorf("%s has %d slices: pick one from 1 to %d", argv[1], blocks, blocks);
		return -1;
	}
	if (row && (t->ndim == 3 && !blk)) {
		errorf("%s is 3-D: give the slice (the head) before --row, e.g. print %s 1 --row %d", argv[1], argv[1], row);
		return -1;
	}
	if (row && t->ndim < 2) {
		errorf("%s has one dimension: print it whole, without --row", argv[1]);
		return -1;
	}
	if (row && (row > rows || -row > rows)) {
		errorf("%s has %d row%s: --row takes 1 to %d, or -1 to -%d", argv[1], rows, rows == 1 ? "" : "s", rows, rows);
		return -1;
	}
	gb_ttensor one;
	const float *blk0; /* the first number of block blk (or of the tensor) */
	if (blk) {
		if (gb_trace_slice(&s->trace, argv[1], blk - 1, &one)) {
			errorf("could not compute %s (out of memory)", argv[1]);
			return -1;
		}
		blk0 = one.data;
	} else {
		if (!(t = find_tensor(s, argv[1])))
			return -1;
		blk0 = t->data;
	}
	if (row) {
		int r = row > 0 ? row - 1 : rows + row, nl = 0, nr = 0;
		const float *p = blk0 + (size_t)r * cols;
		char **lab = axis_tokens(s, t, t->ndim - 1, cols, &nl), **rlab = axis_tokens(s, t, t->ndim - 2, rows, &nr);
		char disp[128];
		if (blk)
			printf("%s %d, ", gb_axis_name(t->axes[0]), blk);
		if (t->axes[t->ndim - 2] == GB_AX_POSITION) /* positions count from 0, as the formula and pe do */
			printf("position i=%d (row %d)", r, r + 1);
		else
			printf("%s %d", gb_axis_name(t->axes[t->ndim - 2]), r + 1);
		if (rlab) {
			gb_label_display(rlab[r], 24, disp, sizeof disp);
			printf(" (%s)", disp);
		}
		printf(":\n");
		/* a position table's features count from 0 too, as PE(i, 2k) and the pe view count them */
		int c1 = t->axes[t->ndim - 2] == GB_AX_POSITION ? 0 : 1;
		for (int c = 0; c < cols; c++) {
			printf("  %s %4d", gb_axis_name(t->axes[t->ndim - 1]), c + c1);
			if (lab) {
				gb_label_display(lab[c], 16, disp, sizeof disp);
				printf("  ");
				text_cols(stdout, disp, 16);
			}
			printf(" %10.5g\n", (double)p[c]);
		}
		if (lab)
			free_labels(lab, nl);
		if (rlab)
			free_labels(rlab, nr);
		return 0;
	}
	for (int b = blk ? blk - 1 : 0; b < (blk ? blk : blocks); b++) {
		const float *p = blk ? blk0 : blk0 + (size_t)b * rows * cols;
		if (t->ndim == 3)
			printf("%s%s %d\n", b > (blk ? blk - 1 : 0) ? "\n" : "", gb_axis_name(t->axes[0]), b + 1);
		for (int r = 0; r < rows; r++) {
			for (int c = 0; c < cols; c++)
				printf("%s%10.5g", c ? " " : "", (double)*p++);
			putchar('\n');
		}
	}
	return 0;
}

int cmd_dump(session *s, int argc, char **argv, const char *rest)
{
	int force = argc == 4 && !strcmp(argv[3], "--force");
	if (argc != 3 && !force)
		return usage(argv[0]);
	if (need_run(s))
		return -1;
	const gb_ttensor *t = find_tensor(s, argv[1]);
	gb_err err;
	if (!t)
		return -1;
	if (gb_trace_dump(t, argv[2], force, &err)) {
		errorf("%s", err.msg);
		return -1;
	}
	return 0;
}

int cmd_export(session *s, int argc, char **argv, const char *rest)
{
	const char *path = NULL;
	gb_export_opts o = { 0 };
	o.version = GLASSBOX_VERSION;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--force"))
			o.force = 1;
		else if (!strcmp(argv[i], "--scale") && i + 1 < argc) {
			char *end;
			o.scale = strtod(argv[++i], &end);
			if (*end || !(o.scale >= 0.25 && o.scale <= 8)) {
				errorf("--scale must be a number from 0.25 to 8 (got '%s')", argv[i]);
				return -1;
			}
		} else if (!strcmp(argv[i], "--size") && i + 1 < argc) {
			int used = 0;
			const char *sz = argv[++i];
			if (sscanf(sz, "%dx%d%n", &o.width, &o.height, &used) != 2 || sz[used] || o.width < 200 || o.height < 150 ||
			    o.width > 8000 || o.height > 8000) {
				errorf("--size must be WIDTHxHEIGHT in pixels, from 200x150 to 8000x8000 (got '%s')", sz);
				return -1;
			}
		} else if (!path && argv[i][0] != '-')
			path = argv[i];
		else
			return usage(argv[0]);
	}
	if (!path)
		return usage(argv[0]);
	if (!s->fig) {
		errorf("there is no figure to export yet: show one first (e.g. 'attn 1 1')");
		return -1;
	}
	gb_verr err;
	if (gb_export(s->fig, path, &o, &err)) {
		errorf("%s", err.msg);
		return -1;
	}
	if (s->interactive)
		printf("wrote %s\n", path);
	return 0;
}
