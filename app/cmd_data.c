/* cmd_data.c — the numbers behind the figures: `trace` lists the tensors of the last run,
 * `print` and `dump` give one tensor's numbers, `export` writes the current figure for slides
 * (PNG, SVG) or as numbers (CSV, NPY). */
#include "app/cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int cmd_print(session *s, int argc, char **argv, const char *rest)
{
	if (argc != 2)
		return usage(argv[0]);
	if (need_run(s))
		return -1;
	const gb_ttensor *t = find_tensor(s, argv[1]);
	if (!t)
		return -1;
	int cols = t->shape[t->ndim - 1], rows = t->ndim >= 2 ? t->shape[t->ndim - 2] : 1;
	int blocks = t->ndim == 3 ? t->shape[0] : 1;
	const float *p = t->data;
	for (int b = 0; b < blocks; b++) {
		if (t->ndim == 3)
			printf("%s%s %d\n", b ? "\n" : "", gb_axis_name(t->axes[0]), b + 1);
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
	if (argc != 3)
		return usage(argv[0]);
	if (need_run(s))
		return -1;
	const gb_ttensor *t = find_tensor(s, argv[1]);
	gb_err err;
	if (!t)
		return -1;
	if (gb_trace_dump(t, argv[2], &err)) {
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
