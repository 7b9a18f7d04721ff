/* t_export.c — the numbers of each figure kind as CSV and NPY, byte for byte, and gb_export's
 * choice of format by extension with its errors. */
#include "tests/tap.h"
#include "viz/export.h"
#include "viz/figure.h"

#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static char *path(const char *name)
{
	static char buf[8][256];
	static int k;
	char *p = buf[k++ % 8];
	snprintf(p, 256, "%s/%s", dir, name);
	return p;
}

static char *slurp(const char *p, long *n)
{
	FILE *fp = fopen(p, "rb");
	char *b;
	long len;
	if (!fp)
		return NULL;
	fseek(fp, 0, SEEK_END);
	len = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	b = malloc((size_t)len + 1);
	if (fread(b, 1, (size_t)len, fp) != (size_t)len)
		len = 0;
	b[len] = 0;
	fclose(fp);
	if (n)
		*n = len;
	return b;
}

/* The CSV gb_write_csv gives for f. */
static char *csv_of(const gb_figure *f)
{
	char *buf = NULL;
	size_t n = 0;
	gb_verr err;
	FILE *fp = open_memstream(&buf, &n);
	if (gb_write_csv(f, fp, &err))
		tap_diag("csv: %s", err.msg);
	fclose(fp);
	return buf;
}

static void show_diff(const char *got, const char *want)
{
	if (!got || strcmp(got, want))
		tap_diag("got:\n%s\nwant:\n%s", got ? got : "(null)", want);
}

/* Checks an NPY file: magic, version 1.0, the header dict (descr, order, shape), the 64-byte
 * alignment numpy uses, then n little-endian float32 equal (bitwise) to want. */
static int npy_is(const char *file, const char *shape, const float *want, long n)
{
	long len;
	unsigned char *b = (unsigned char *)slurp(file, &len);
	char dict[256];
	int ok, hl;
	if (!b)
		return 0;
	hl = b[8] | b[9] << 8;
	snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }", shape);
	ok = len >= 10 && !memcmp(b, "\x93NUMPY\x01\x00", 8) && (10 + hl) % 64 == 0 &&
	     !strncmp((char *)b + 10, dict, strlen(dict)) && b[10 + hl - 1] == '\n' && len == 10 + hl + 4 * n;
	for (size_t i = 10 + strlen(dict); ok && i < (size_t)(10 + hl - 1); i++)
		ok = b[i] == ' ';
	for (long i = 0; ok && i < n; i++) {
		uint32_t u = (uint32_t)b[10 + hl + 4 * i] | (uint32_t)b[11 + hl + 4 * i] << 8 |
		             (uint32_t)b[12 + hl + 4 * i] << 16 | (uint32_t)b[13 + hl + 4 * i] << 24, w;
		memcpy(&w, &want[i], 4);
		ok = u == w;
		if (!ok)
			tap_diag("value %ld: %08x, want %08x", i, u, w);
	}
	if (!ok)
		tap_diag("header: %.*s", hl > 0 && hl < 200 ? hl : 0, (char *)b + 10);
	free(b);
	return ok;
}

int main(void)
{
	gb_verr err = { "" };
	char *got;
	snprintf(dir, sizeof dir, "/tmp/gb-t_export-XXXXXX");
	if (!mkdtemp(dir)) {
		printf("Bail out! cannot make a temporary folder\n");
		return 1;
	}

	/* heatmap: labels that need quoting and escaping, NaN and inf */
	{
		static const float v[6] = { 1, 0.5f, -2, NAN, INFINITY, 0.1f };
		static const char *rows[2] = { "a,b", "x\"y" };
		static const char *cols[3] = { " c", "d", "e\n" };
		const char *want = "query,\" c\",d,e\\x0A\n"
		                   "\"a,b\",1,0.5,-2\n"
		                   "\"x\"\"y\",nan,inf,0.100000001\n";
		gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
		gb_fig_set_values(f, v, 2, 3);
		gb_fig_set_row_labels(f, rows);
		gb_fig_set_col_labels(f, cols);
		gb_fig_set_axes(f, "query", "key");
		got = csv_of(f);
		tap_ok(got && !strcmp(got, want), "heatmap CSV: header of column labels, label first, nan/inf, quoting");
		show_diff(got, want);
		free(got);
		tap_ok(gb_export(f, path("h.csv"), NULL, &err) == 0, "gb_export .csv (%s)", err.msg);
		got = slurp(path("h.csv"), NULL);
		tap_ok(got && !strcmp(got, want), "the file holds the same CSV");
		free(got);
		tap_ok(gb_export(f, path("h.npy"), NULL, &err) == 0, "gb_export .npy (%s)", err.msg);
		tap_ok(npy_is(path("h.npy"), "(2, 3)", v, 6), "heatmap NPY: float32 (2, 3), values bit-exact (NaN and inf kept)");
		tap_ok(gb_export(f, path("h.npy"), NULL, &err) == -1 && strstr(err.msg, "already exists"), "existing NPY: %s", err.msg);
		tap_ok(gb_export(f, path("h.npy"), &(gb_export_opts){ .force = 1 }, &err) == 0, "force overwrites");
		/* unlabelled: indices stand in */
		{
			gb_figure *g = gb_fig_new(GB_FIG_HEATMAP);
			static const float w[4] = { 0.25f, 0.75f, 1e-10f, 123456789.0f };
			gb_fig_set_values(g, w, 2, 2);
			got = csv_of(g);
			tap_ok(got && !strcmp(got, ",0,1\n0,0.25,0.75\n1,1.00000001e-10,123456792\n"),
			       "no labels: indices; 9 significant digits round-trip float32");
			show_diff(got, ",0,1\n0,0.25,0.75\n1,1.00000001e-10,123456792\n");
			free(got);
			gb_fig_free(g);
		}
		/* by extension */
		tap_ok(gb_export(f, path("H.CSV"), NULL, &err) == 0, "extension is case-insensitive (.CSV)");
		tap_ok(gb_export(f, path("h.jpg"), NULL, &err) == -1 && strstr(err.msg, "'.jpg'") && strstr(err.msg, ".png") &&
		       strstr(err.msg, ".svg") && strstr(err.msg, ".csv") && strstr(err.msg, ".npy"),
		       "unknown extension lists the known ones: %s", err.msg);
		tap_ok(gb_export(f, path("noext"), NULL, &err) == -1 && strstr(err.msg, "no extension"), "no extension: %s", err.msg);
		tap_ok(gb_export(f, path(".hidden"), NULL, &err) == -1 && strstr(err.msg, "no extension"), "dotfile has no extension");
		tap_ok(gb_export(f, "/nonexistent-glassbox-dir/h.csv", NULL, &err) == -1 && strstr(err.msg, "does not exist"),
		       "unwritable path: %s", err.msg);
		tap_ok(!strcmp(gb_export_format("a/b.c/fig.Svg") ? gb_export_format("a/b.c/fig.Svg") : "", "svg") &&
		       gb_export_format("a.png/fig") == NULL, "the extension is the file name's, not a folder's");
		tap_ok(gb_export(f, path("h.png"), &(gb_export_opts){ .version = "0.1.0" }, &err) == 0, "gb_export .png (%s)", err.msg);
		got = slurp(path("h.png"), NULL);
		tap_ok(got && !memcmp(got, "\x89PNG\r\n\x1a\n", 8), "it is a PNG");
		free(got);
		tap_ok(gb_export(f, path("h.svg"), NULL, &err) == 0, "gb_export .svg (%s)", err.msg);
		got = slurp(path("h.svg"), NULL);
		tap_ok(got && !strncmp(got, "<?xml", 5) && strstr(got, "<svg"), "it is an SVG");
		free(got);
		gb_fig_free(f);
	}

	/* bars and strip: label,value */
	{
		static const float v[3] = { 0.5f, 0.25f, -1 };
		static const char *l[3] = { " mat", "é", "\xff" };
		const char *want = "label,value\n\" mat\",0.5\né,0.25\n\\xFF,-1\n";
		for (int kind = 0; kind < 2; kind++) {
			gb_figure *f = gb_fig_new(kind ? GB_FIG_STRIP : GB_FIG_BARS);
			const char *name = kind ? "strip" : "bars";
			char file[32];
			gb_fig_set_values(f, v, 1, 3);
			gb_fig_set_col_labels(f, l);
			got = csv_of(f);
			tap_ok(got && !strcmp(got, want), "%s CSV: label,value; UTF-8 kept, an invalid byte as \\xFF", name);
			show_diff(got, want);
			free(got);
			snprintf(file, sizeof file, "%s.npy", name);
			tap_ok(gb_export_npy(f, path(file), 0, &err) == 0 && npy_is(path(file), "(3,)", v, 3), "%s NPY: float32 (3,)", name);
			gb_fig_free(f);
		}
	}

	/* lines: x, then a column per series; a short series leaves blanks (NaN in NPY) */
	{
		static const float a[3] = { 1, 2, 3 }, b[2] = { -1, NAN }, xs[3] = { 0, 0.5f, 1 };
		const char *want = "t,sin,\"cos, shifted\"\n0,1,-1\n0.5,2,nan\n1,3,\n";
		gb_figure *f = gb_fig_new(GB_FIG_LINES);
		float table[3 * 3] = { 0, 1, -1, 0.5f, 2, NAN, 1, 3, NAN };
		gb_fig_add_series(f, "sin", a, 3);
		gb_fig_add_series(f, "cos, shifted", b, 2);
		gb_fig_set_xs(f, xs, 3);
		f->x_title = strdup("t");
		got = csv_of(f);
		tap_ok(got && !strcmp(got, want), "lines CSV: x title, series columns, blank past a short series");
		show_diff(got, want);
		free(got);
		tap_ok(gb_export_npy(f, path("l.npy"), 0, &err) == 0 && npy_is(path("l.npy"), "(3, 3)", table, 9),
		       "lines NPY: (n, 1 + n_series), x first, NaN padding");
		gb_fig_set_xs(f, xs, 2);
		got = csv_of(f);
		tap_ok(got && !strcmp(got, "t,sin,\"cos, shifted\"\n0,1,-1\n0.5,2,nan\n"), "points beyond n_xs are left out");
		free(got);
		gb_fig_free(f);
		f = gb_fig_new(GB_FIG_LINES);
		gb_fig_add_series(f, NULL, a, 3);
		got = csv_of(f);
		tap_ok(got && !strcmp(got, "x,series 1\n0,1\n1,2\n2,3\n"), "no xs: 0 .. n-1; unnamed series numbered");
		free(got);
		gb_fig_free(f);
	}

	/* grid: panel title first; NPY (panels, rows, cols) */
	{
		gb_figure *g = gb_fig_new(GB_FIG_GRID);
		static const char *r[2] = { "q0", "q1" }, *c[2] = { "k0", "k1" };
		float all[8];
		const char *want = "panel,query,k0,k1\nhead 0,q0,0,1\nhead 0,q1,2,3\nhead 1,q0,4,5\nhead 1,q1,6,7\n";
		for (int p = 0; p < 2; p++) {
			gb_figure *q = gb_fig_new(GB_FIG_HEATMAP);
			char t[32];
			for (int i = 0; i < 4; i++)
				all[p * 4 + i] = (float)(p * 4 + i);
			gb_fig_set_values(q, all + p * 4, 2, 2);
			gb_fig_set_row_labels(q, r);
			gb_fig_set_col_labels(q, c);
			gb_fig_set_axes(q, "query", "key");
			snprintf(t, sizeof t, "head %d", p);
			gb_fig_set_title(q, t);
			gb_fig_add_panel(g, q);
		}
		got = csv_of(g);
		tap_ok(got && !strcmp(got, want), "grid CSV: panel, row label, values");
		show_diff(got, want);
		free(got);
		tap_ok(gb_export_npy(g, path("g.npy"), 0, &err) == 0 && npy_is(path("g.npy"), "(2, 2, 2)", all, 8), "grid NPY (2, 2, 2)");
		{
			gb_figure *q = gb_fig_new(GB_FIG_HEATMAP);
			gb_fig_set_values(q, all, 1, 3);
			gb_fig_add_panel(g, q);
		}
		tap_ok(gb_export_npy(g, path("g2.npy"), 0, &err) == -1 && strstr(err.msg, "differ in shape"),
		       "panels of different shapes: %s", err.msg);
		tap_ok(access(path("g2.npy"), F_OK) != 0, "and no file is left");
		gb_fig_free(g);
	}
	/* an empty figure */
	{
		gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
		tap_ok(gb_export(f, path("e.csv"), NULL, &err) == -1 && strstr(err.msg, "no values"), "empty figure: %s", err.msg);
		tap_ok(access(path("e.csv"), F_OK) != 0, "and no file is left");
		gb_fig_free(f);
	}
	{
		char cmd[128];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			tap_diag("could not remove %s", dir);
	}
	return tap_done();
}
