/* export.c — owns the choice of file format, the CSV and NPY writers, and the safe-write rule
 * (temporary file + rename) that png.c and svg.c use too. */
#include "viz/export.h"
#include "viz/png.h"
#include "viz/raster.h"
#include "viz/pdf.h"
#include "viz/svg.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define KNOWN_EXTS ".png, .svg, .pdf, .csv or .npy"

/* ---- safe writes ----------------------------------------------------------------------- */

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *d;
	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	d = malloc((size_t)(slash - path) + 1);
	if (d) {
		memcpy(d, path, (size_t)(slash - path));
		d[slash - path] = 0;
	}
	return d;
}

static int why_unwritable(const char *path, int e, gb_verr *err)
{
	char *dir = dir_of(path);
	struct stat st;
	int rc;
	if (dir && stat(dir, &st) != 0)
		rc = gb_vfail(err, "cannot write '%s': the folder '%s' does not exist", path, dir);
	else if (dir && !S_ISDIR(st.st_mode))
		rc = gb_vfail(err, "cannot write '%s': '%s' is not a folder", path, dir);
	else if (e == EACCES || e == EPERM || e == EROFS)
		rc = gb_vfail(err, "cannot write '%s': %s (the folder '%s' is not writable)", path,
		              strerror(e), dir ? dir : ".");
	else
		rc = gb_vfail(err, "cannot write '%s': %s", path, strerror(e));
	free(dir);
	return rc;
}

int gb_outfile_open(gb_outfile *o, const char *path, int force, gb_verr *err)
{
	static unsigned counter;
	struct stat st;
	const char *base;
	char *dir;
	size_t cap;
	int fd = -1;
	memset(o, 0, sizeof *o);
	if (!path || !*path)
		return gb_vfail(err, "no file name to write to");
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (!*base)
		return gb_vfail(err, "cannot write '%s': it names a folder, not a file", path);
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return gb_vfail(err, "cannot write '%s': it is a folder", path);
	if (!force && lstat(path, &st) == 0)
		return gb_vfail(err, "'%s' already exists: choose another name, or force to overwrite it", path);
	dir = dir_of(path);
	if (!dir)
		return gb_vfail(err, "out of memory writing '%s'", path);
	cap = strlen(dir) + strlen(base) + 48;
	o->tmp = malloc(cap);
	o->path = strdup(path);
	if (!o->tmp || !o->path) {
		free(dir);
		gb_outfile_abort(o);
		return gb_vfail(err, "out of memory writing '%s'", path);
	}
	/* hidden, in the target's folder (rename is atomic only within one file system) */
	for (int tries = 0; tries < 100 && fd < 0; tries++) {
		snprintf(o->tmp, cap, "%s/.%s.tmp-%ld-%u", dir, base, (long)getpid(), counter++);
		fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	free(dir);
	if (fd < 0) {
		int e = errno;
		free(o->tmp);
		o->tmp = NULL;
		gb_outfile_abort(o);
		return why_unwritable(path, e, err);
	}
	o->fp = fdopen(fd, "wb");
	if (!o->fp) {
		close(fd);
		unlink(o->tmp);
		gb_outfile_abort(o);
		return gb_vfail(err, "cannot write '%s': %s", path, strerror(errno));
	}
	setvbuf(o->fp, NULL, _IOFBF, 1 << 16);
	o->force = force;
	return 0;
}

void gb_outfile_abort(gb_outfile *o)
{
	if (o->fp)
		fclose(o->fp);
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	o->fp = NULL;
	o->tmp = o->path = NULL;
}

int gb_outfile_commit(gb_outfile *o, gb_verr *err)
{
	int bad = ferror(o->fp), e = errno;
	if (fclose(o->fp) != 0 && !bad) {
		bad = 1;
		e = errno;
	}
	o->fp = NULL;
	if (bad) {
		gb_vfail(err, "cannot write '%s': %s", o->path, strerror(e));
		gb_outfile_abort(o);
		return -1;
	}
	if (o->force) {
		if (rename(o->tmp, o->path) != 0) {
			e = errno;
			gb_vfail(err, "cannot write '%s': %s", o->path, strerror(e));
			gb_outfile_abort(o);
			return -1;
		}
	} else if (link(o->tmp, o->path) == 0) {
		/* link, unlike rename, refuses to replace a file created since the open */
		unlink(o->tmp);
	} else if (errno == EEXIST) {
		gb_vfail(err, "'%s' already exists: choose another name, or force to overwrite it", o->path);
		gb_outfile_abort(o);
		return -1;
	} else {
		/* a file system without hard links (FAT on a USB stick): check, then rename */
		struct stat st;
		if (lstat(o->path, &st) == 0) {
			gb_vfail(err, "'%s' already exists: choose another name, or force to overwrite it", o->path);
			gb_outfile_abort(o);
			return -1;
		}
		if (rename(o->tmp, o->path) != 0) {
			e = errno;
			gb_vfail(err, "cannot write '%s': %s", o->path, strerror(e));
			gb_outfile_abort(o);
			return -1;
		}
	}
	free(o->tmp);
	free(o->path);
	o->tmp = o->path = NULL;
	return 0;
}

/* ---- CSV ------------------------------------------------------------------------------------ */

/* A label as a CSV field: valid UTF-8 kept, control bytes and invalid bytes as \xNN, quoted
 * (RFC 4180) when it holds a comma or quote or edge spaces a reader would trim. */
static void csv_text(FILE *fp, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)p);
	int quote = n && (p[0] == ' ' || p[n - 1] == ' ');
	for (size_t i = 0; i < n; i++)
		if (p[i] == ',' || p[i] == '"')
			quote = 1;
	if (quote)
		fputc('"', fp);
	for (size_t i = 0; i < n;) {
		unsigned char c = p[i];
		int len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
		int ok = len > 0 && i + len <= n && !(len == 2 && c < 0xC2);
		for (int k = 1; ok && k < len; k++)
			ok = (p[i + k] & 0xC0) == 0x80;
		if (!ok || c < 0x20 || c == 0x7F) {
			fprintf(fp, "\\x%02X", c);
			i++;
			continue;
		}
		if (c == '"')
			fputc('"', fp);
		fwrite(p + i, 1, (size_t)len, fp);
		i += (size_t)len;
	}
	if (quote)
		fputc('"', fp);
}

static void csv_num(FILE *fp, double v)
{
	if (isnan(v))
		fputs("nan", fp);
	else if (isinf(v))
		fputs(v > 0 ? "inf" : "-inf", fp);
	else
		fprintf(fp, "%.9g", v);
}

static void csv_matrix(FILE *fp, const gb_figure *m, const char *panel)
{
	for (int r = 0; r < m->rows; r++) {
		if (panel) {
			csv_text(fp, panel);
			fputc(',', fp);
		}
		if (m->row_labels)
			csv_text(fp, m->row_labels[r]);
		else
			fprintf(fp, "%d", m->row_index0 > 0 ? m->row_index0 + r : r); /* as the figure numbers it */
		for (int c = 0; c < m->cols; c++) {
			fputc(',', fp);
			csv_num(fp, m->values[(size_t)r * m->cols + c]);
		}
		fputc('\n', fp);
	}
}

static void csv_header(FILE *fp, const gb_figure *m, int with_panel)
{
	if (with_panel)
		fputs("panel,", fp);
	csv_text(fp, m->row_title ? m->row_title : "");
	for (int c = 0; c < m->cols; c++) {
		fputc(',', fp);
		if (m->col_labels)
			csv_text(fp, m->col_labels[c]);
		else
			fprintf(fp, "%d", m->col_index0 > 0 ? m->col_index0 + c : c); /* units 65-128: 65 .. */
	}
	fputc('\n', fp);
}

static int check_values(const gb_figure *m, gb_verr *err)
{
	if (!m || !m->values || m->rows <= 0 || m->cols <= 0)
		return gb_vfail(err, "the figure has no values to export");
	return 0;
}

int gb_write_csv(const gb_figure *f, FILE *fp, gb_verr *err)
{
	if (!f)
		return gb_vfail(err, "no figure to export");
	switch (f->kind) {
	case GB_FIG_HEATMAP:
	case GB_FIG_ATTNLINES: /* its weights, as the heatmap of the same head */
		if (check_values(f, err))
			return -1;
		csv_header(fp, f, 0);
		csv_matrix(fp, f, NULL);
		break;
	case GB_FIG_BARS:
	case GB_FIG_STRIP: {
		int n = f->rows * f->cols;
		char *const *labels = f->cols == n ? f->col_labels : f->row_labels;
		if (check_values(f, err))
			return -1;
		fputs("label,value\n", fp);
		for (int i = 0; i < n; i++) {
			if (labels)
				csv_text(fp, labels[i]);
			else
				fprintf(fp, "%d", i);
			fputc(',', fp);
			csv_num(fp, f->values[i]);
			fputc('\n', fp);
		}
		break;
	}
	case GB_FIG_LINES: {
		int nmax = 0;
		if (f->n_series <= 0)
			return gb_vfail(err, "the line plot has no series to export");
		csv_text(fp, f->x_title ? f->x_title : "x");
		for (int k = 0; k < f->n_series; k++) {
			fputc(',', fp);
			if (f->series[k].label && *f->series[k].label)
				csv_text(fp, f->series[k].label);
			else
				fprintf(fp, "series %d", k + 1);
			nmax = f->series[k].n > nmax ? f->series[k].n : nmax;
		}
		if (f->xs && f->n_xs < nmax)
			nmax = f->n_xs; /* points without an x are not drawn, so not exported either */
		fputc('\n', fp);
		for (int i = 0; i < nmax; i++) {
			csv_num(fp, f->xs ? f->xs[i] : i);
			for (int k = 0; k < f->n_series; k++) {
				fputc(',', fp);
				if (i < f->series[k].n)
					csv_num(fp, f->series[k].y[i]);
			}
			fputc('\n', fp);
		}
		break;
	}
	case GB_FIG_GRID:
		if (f->n_panels <= 0)
			return gb_vfail(err, "the grid has no panels to export");
		for (int p = 0; p < f->n_panels; p++)
			if (check_values(f->panels[p], err))
				return -1;
		csv_header(fp, f->panels[0], 1);
		for (int p = 0; p < f->n_panels; p++) {
			char name[32];
			snprintf(name, sizeof name, "panel %d", p + 1);
			csv_matrix(fp, f->panels[p], f->panels[p]->title ? f->panels[p]->title : name);
		}
		break;
	case GB_FIG_DIAGRAM: /* the blocks as a table: which group, what, its shape */
		fputs("group,block,detail,highlight\n", fp);
		for (int i = 0; i < f->n_blocks; i++) {
			const gb_fig_block *b = &f->blocks[i];
			csv_text(fp, b->group > 0 && b->group <= f->n_groups && f->group_titles[b->group - 1]
			                 ? f->group_titles[b->group - 1] : "");
			fputc(',', fp);
			csv_text(fp, b->label);
			fputc(',', fp);
			csv_text(fp, b->detail ? b->detail : "");
			fprintf(fp, ",%d\n", b->highlight);
		}
		break;
	case GB_FIG_STRIPS: /* one row per token of each strip: which strip, its place, piece, id */
	case GB_FIG_DECODE: /* one row per candidate of each step, with its fate */
		if (f->n_panels <= 0)
			return gb_vfail(err, "the figure has no panels to export");
		fputs(f->kind == GB_FIG_STRIPS ? "strip,position,token,id,made_here\n" : "step,rank,token,p,p_model,mark\n", fp);
		for (int p = 0; p < f->n_panels; p++) {
			const gb_figure *m = f->panels[p];
			if (check_values(m, err))
				return -1;
			for (int i = 0; i < m->cols; i++) {
				int mk = m->marks ? m->marks[i] : 0;
				csv_text(fp, m->title ? m->title : "");
				fprintf(fp, ",%d,", i + 1);
				csv_text(fp, m->col_labels ? m->col_labels[i] : "");
				fputc(',', fp);
				csv_num(fp, m->values[i]);
				if (f->kind == GB_FIG_STRIPS)
					fprintf(fp, ",%d\n", (mk & GB_MARK_CHOSEN) != 0);
				else {
					fputc(',', fp);
					if (m->ref)
						csv_num(fp, m->ref[i]);
					fprintf(fp, ",%s\n", (mk & GB_MARK_CHOSEN) ? "chosen" : (mk & GB_MARK_CUT) ? "cut" : "kept");
				}
			}
		}
		break;
	case GB_FIG_TREE: /* the nodes, parents first */
		fputs("node,parent,depth,token,logprob,score,state\n", fp);
		for (int i = 0; i < f->n_nodes; i++) {
			const gb_fig_node *nd = &f->nodes[i];
			static const char *st[] = { "prompt", "kept", "pruned", "best" };
			fprintf(fp, "%d,%d,%d,", i, nd->parent, nd->depth);
			csv_text(fp, nd->label);
			fprintf(fp, ",%.9g,%.9g,%s\n", nd->edge, nd->score, st[nd->state & 3]);
		}
		break;
	default:
		return gb_vfail(err, "unknown figure kind %d", f->kind);
	}
	if (ferror(fp))
		return gb_vfail(err, "cannot write the CSV: %s", strerror(errno));
	return 0;
}

/* ---- NPY (format version 1.0) ------------------------------------------------------------- */

static void put_f32le(FILE *fp, float v)
{
	uint32_t u;
	uint8_t b[4];
	memcpy(&u, &v, 4);
	b[0] = (uint8_t)u;
	b[1] = (uint8_t)(u >> 8);
	b[2] = (uint8_t)(u >> 16);
	b[3] = (uint8_t)(u >> 24);
	fwrite(b, 1, 4, fp);
}

/* Magic, version, then the header dict padded with spaces so the data starts on a multiple of
 * 64 bytes, as numpy writes it. */
static void npy_header(FILE *fp, const long *shape, int ndim)
{
	char dict[256], sh[160] = "(";
	size_t len, total;
	uint8_t pre[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0 };
	for (int i = 0; i < ndim; i++) {
		size_t k = strlen(sh);
		snprintf(sh + k, sizeof sh - k, "%ld%s", shape[i], ndim == 1 ? "," : i + 1 < ndim ? ", " : "");
	}
	strcat(sh, ")");
	snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }", sh);
	len = strlen(dict);
	total = (10 + len + 1 + 63) / 64 * 64;
	pre[8] = (uint8_t)((total - 10) & 0xFF);
	pre[9] = (uint8_t)((total - 10) >> 8);
	fwrite(pre, 1, 10, fp);
	fwrite(dict, 1, len, fp);
	for (size_t i = 10 + len; i + 1 < total; i++)
		fputc(' ', fp);
	fputc('\n', fp);
}

int gb_write_npy(const gb_figure *f, FILE *fp, gb_verr *err)
{
	long shape[3];
	if (!f)
		return gb_vfail(err, "no figure to export");
	switch (f->kind) {
	case GB_FIG_HEATMAP:
	case GB_FIG_ATTNLINES: /* its weights, as the heatmap of the same head */
		if (check_values(f, err))
			return -1;
		shape[0] = f->rows;
		shape[1] = f->cols;
		npy_header(fp, shape, 2);
		for (size_t i = 0; i < (size_t)f->rows * f->cols; i++)
			put_f32le(fp, f->values[i]);
		break;
	case GB_FIG_BARS:
	case GB_FIG_STRIP:
		if (check_values(f, err))
			return -1;
		shape[0] = (long)f->rows * f->cols;
		npy_header(fp, shape, 1);
		for (long i = 0; i < shape[0]; i++)
			put_f32le(fp, f->values[i]);
		break;
	case GB_FIG_LINES: {
		int nmax = 0;
		if (f->n_series <= 0)
			return gb_vfail(err, "the line plot has no series to export");
		for (int k = 0; k < f->n_series; k++)
			nmax = f->series[k].n > nmax ? f->series[k].n : nmax;
		if (f->xs && f->n_xs < nmax)
			nmax = f->n_xs;
		shape[0] = nmax;
		shape[1] = 1 + f->n_series;
		npy_header(fp, shape, 2);
		for (int i = 0; i < nmax; i++) {
			put_f32le(fp, f->xs ? f->xs[i] : (float)i);
			for (int k = 0; k < f->n_series; k++)
				put_f32le(fp, i < f->series[k].n ? f->series[k].y[i] : NAN);
		}
		break;
	}
	case GB_FIG_GRID:
		if (f->n_panels <= 0)
			return gb_vfail(err, "the grid has no panels to export");
		for (int p = 0; p < f->n_panels; p++) {
			if (check_values(f->panels[p], err))
				return -1;
			if (f->panels[p]->rows != f->panels[0]->rows || f->panels[p]->cols != f->panels[0]->cols)
				return gb_vfail(err, "the grid's panels differ in shape (%d x %d and %d x %d): "
				                "NPY needs one shape; export CSV instead", f->panels[0]->rows,
				                f->panels[0]->cols, f->panels[p]->rows, f->panels[p]->cols);
		}
		shape[0] = f->n_panels;
		shape[1] = f->panels[0]->rows;
		shape[2] = f->panels[0]->cols;
		npy_header(fp, shape, 3);
		for (int p = 0; p < f->n_panels; p++)
			for (size_t i = 0; i < (size_t)shape[1] * shape[2]; i++)
				put_f32le(fp, f->panels[p]->values[i]);
		break;
	case GB_FIG_DIAGRAM:
		return gb_vfail(err, "a block diagram has no numbers for NPY: export it as PNG, SVG or CSV");
	case GB_FIG_STRIPS:
	case GB_FIG_DECODE:
	case GB_FIG_TREE:
		return gb_vfail(err, "a %s figure has rows of different lengths, not one array: export it as CSV",
		                gb_fig_kind_name(f->kind));
	default:
		return gb_vfail(err, "unknown figure kind %d", f->kind);
	}
	if (ferror(fp))
		return gb_vfail(err, "cannot write the NPY: %s", strerror(errno));
	return 0;
}

static int export_stream(const gb_figure *f, const char *path, int force,
                         int (*write)(const gb_figure *, FILE *, gb_verr *), gb_verr *err)
{
	gb_outfile o;
	if (!f)
		return gb_vfail(err, "no figure to export");
	if (gb_outfile_open(&o, path, force, err))
		return -1;
	if (write(f, o.fp, err)) {
		gb_outfile_abort(&o);
		return -1;
	}
	return gb_outfile_commit(&o, err);
}

int gb_export_csv(const gb_figure *f, const char *path, int force, gb_verr *err)
{
	return export_stream(f, path, force, gb_write_csv, err);
}

int gb_export_npy(const gb_figure *f, const char *path, int force, gb_verr *err)
{
	return export_stream(f, path, force, gb_write_npy, err);
}

/* ---- by extension --------------------------------------------------------------------------- */

static const char *extension(const char *path)
{
	const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
	if (!dot || (slash && dot < slash) || dot == (slash ? slash + 1 : path))
		return NULL;
	return dot + 1;
}

const char *gb_export_format(const char *path)
{
	static const char *known[] = { "png", "svg", "pdf", "csv", "npy" };
	const char *ext = path ? extension(path) : NULL;
	for (int i = 0; ext && i < 5; i++)
		if (strcasecmp(ext, known[i]) == 0)
			return known[i];
	return NULL;
}

int gb_export(const gb_figure *f, const char *path, const gb_export_opts *opts, gb_verr *err)
{
	gb_export_opts def = { 0 };
	const char *fmt;
	if (!path || !*path)
		return gb_vfail(err, "no file name to export to (it ends in " KNOWN_EXTS ")");
	if (!opts)
		opts = &def;
	fmt = gb_export_format(path);
	if (!fmt) {
		const char *ext = extension(path);
		if (!ext)
			return gb_vfail(err, "'%s' has no extension: name it *.png, *.svg, *.pdf, *.csv or *.npy", path);
		return gb_vfail(err, "unknown export format '.%s' for '%s': use " KNOWN_EXTS, ext, path);
	}
	if (!strcmp(fmt, "png")) {
		gb_raster_opts ro = { opts->width, opts->height, opts->scale };
		return gb_png_write_figure(f, path, &ro, opts->version, opts->force, err);
	}
	if (!strcmp(fmt, "svg"))
		return gb_svg_write(f, path, opts, err);
	if (!strcmp(fmt, "pdf"))
		return gb_pdf_write(f, path, opts, err);
	if (!strcmp(fmt, "csv"))
		return gb_export_csv(f, path, opts->force, err);
	return gb_export_npy(f, path, opts->force, err);
}
