/* png.c — owns PNG encoding and decoding (libpng) and the text chunks a figure carries.
 *
 * Speed and size: a figure is large flat areas (cells, background) and thin text. The "Up"
 * filter (each byte minus the one above it) turns a heatmap's repeated cell rows into zeros, and
 * zlib level 5 then gets a 1920 x 1080 heatmap to ~60 KiB in ~20 ms; level 6 and above, or
 * libpng's adaptive filter choice, cost 2-4x the time for no smaller file (measured with
 * app/bench_raster.c). Both are fixed so the bytes are reproducible. */
#include "viz/png.h"
#include "viz/colormap.h"
#include "viz/export.h"

#include <png.h>
#include <zlib.h>

#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PNG_ZLEVEL    5
#define PNG_FILTER    PNG_FILTER_UP
#define PNG_STRATEGY  Z_DEFAULT_STRATEGY

typedef struct pngerr {
	jmp_buf jb;
	char msg[200];
} pngerr;

static void on_error(png_structp png, png_const_charp msg)
{
	pngerr *e = png_get_error_ptr(png);
	snprintf(e->msg, sizeof e->msg, "%s", msg);
	longjmp(e->jb, 1);
}

static void on_warning(png_structp png, png_const_charp msg)
{
	(void)png;
	(void)msg; /* libpng warnings (e.g. a text chunk it skipped) are not the user's problem */
}

/* A valid PNG keyword: printable Latin-1 without leading, trailing or doubled spaces, 1-79
 * bytes. Anything else becomes '_' so a view's key can never make libpng abort the write. */
static void make_key(const char *in, char out[80])
{
	int n = 0;
	for (const unsigned char *p = (const unsigned char *)in; *p && n < 79; p++) {
		unsigned char c = *p;
		if (c == ' ' && (n == 0 || out[n - 1] == ' '))
			continue;
		out[n++] = (c >= 0x21 && c <= 0x7E) || c == ' ' ? (char)c : '_';
	}
	while (n > 0 && out[n - 1] == ' ')
		n--;
	if (n == 0)
		out[n++] = '_';
	out[n] = 0;
}

/* A copy of s with invalid UTF-8 bytes replaced by '?'; *ascii says whether it is printable
 * ASCII (tEXt) or needs iTXt. */
static char *clean_utf8(const char *s, int *ascii)
{
	size_t n = strlen(s);
	char *o = malloc(n + 1);
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	*ascii = 1;
	if (!o)
		return NULL;
	while (i < n) {
		unsigned char c = p[i];
		int len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
		int ok = len > 0 && i + len <= n && !(len == 2 && c < 0xC2);
		for (int k = 1; ok && k < len; k++)
			ok = (p[i + k] & 0xC0) == 0x80;
		if (!ok) {
			o[i++] = '?';
			*ascii = 0;
			continue;
		}
		if (len > 1 || (c < 0x20 && c != '\n') || c == 0x7F)
			*ascii = 0;
		memcpy(o + i, p + i, (size_t)len);
		i += (size_t)len;
	}
	o[n] = 0;
	return o;
}

static int opaque(const gb_canvas *c)
{
	size_t n = (size_t)c->w * c->h;
	for (size_t i = 0; i < n; i++)
		if (c->rgba[i * 4 + 3] != 255)
			return 0;
	return 1;
}

/* Everything libpng touches after setjmp lives in this struct, so a longjmp cannot leave a
 * register-cached copy stale. */
typedef struct wstate {
	png_structp png;
	png_infop info;
	png_text *text;
	char (*keys)[80];
	char **vals;
	uint8_t *row;             /* (w, 3) RGB staging row */
	int n_text;
} wstate;

static int encode(FILE *fp, const gb_canvas *c, const char *const *keys, const char *const *vals,
                  int n_text, const char *path, gb_verr *err)
{
	pngerr pe = { .msg = "" };
	wstate *volatile st = calloc(1, sizeof *st);
	volatile int rc = -1;
	int rgb;
	if (!st)
		return gb_vfail(err, "out of memory writing '%s'", path);
	rgb = opaque(c);
	st->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &pe, on_error, on_warning);
	st->info = st->png ? png_create_info_struct(st->png) : NULL;
	st->text = calloc((size_t)(n_text > 0 ? n_text : 1), sizeof *st->text);
	st->keys = calloc((size_t)(n_text > 0 ? n_text : 1), sizeof *st->keys);
	st->vals = calloc((size_t)(n_text > 0 ? n_text : 1), sizeof *st->vals);
	st->row = malloc((size_t)c->w * 3);
	if (!st->info || !st->text || !st->keys || !st->vals || !st->row) {
		gb_vfail(err, "out of memory writing '%s'", path);
		goto out;
	}
	for (int i = 0; i < n_text; i++) {
		int ascii;
		make_key(keys[i] ? keys[i] : "", st->keys[i]);
		st->vals[i] = clean_utf8(vals[i] ? vals[i] : "", &ascii);
		if (!st->vals[i]) {
			gb_vfail(err, "out of memory writing '%s'", path);
			goto out;
		}
		st->text[i].compression = ascii ? PNG_TEXT_COMPRESSION_NONE : PNG_ITXT_COMPRESSION_NONE;
		st->text[i].key = st->keys[i];
		st->text[i].text = st->vals[i];
		st->n_text = i + 1;
	}
	if (setjmp(pe.jb)) {
		gb_vfail(err, "cannot write PNG '%s': %s", path, pe.msg);
		goto out;
	}
	png_init_io(st->png, fp);
	png_set_IHDR(st->png, st->info, (png_uint_32)c->w, (png_uint_32)c->h, 8,
	             rgb ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_RGBA, PNG_INTERLACE_NONE,
	             PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	png_set_filter(st->png, PNG_FILTER_TYPE_BASE, PNG_FILTER);
	png_set_compression_level(st->png, PNG_ZLEVEL);
	png_set_compression_strategy(st->png, PNG_STRATEGY);
	if (st->n_text)
		png_set_text(st->png, st->info, st->text, st->n_text);
	png_write_info(st->png, st->info);
	for (int y = 0; y < c->h; y++) {
		const uint8_t *src = c->rgba + (size_t)y * c->w * 4;
		if (rgb) {
			for (int x = 0; x < c->w; x++) {
				st->row[3 * x] = src[4 * x];
				st->row[3 * x + 1] = src[4 * x + 1];
				st->row[3 * x + 2] = src[4 * x + 2];
			}
			png_write_row(st->png, st->row);
		} else
			png_write_row(st->png, (png_const_bytep)src);
	}
	png_write_end(st->png, st->info);
	rc = 0;
out:
	if (st->png)
		png_destroy_write_struct(&st->png, st->info ? &st->info : NULL);
	for (int i = 0; i < st->n_text; i++)
		free(st->vals[i]);
	free(st->text);
	free(st->keys);
	free(st->vals);
	free(st->row);
	free(st);
	return rc;
}

int gb_png_write(const char *path, const gb_canvas *c, const char *const *keys,
                 const char *const *vals, int n_text, int force, gb_verr *err)
{
	gb_outfile o;
	if (!c || !c->rgba || c->w <= 0 || c->h <= 0)
		return gb_vfail(err, "no picture to write to '%s'", path ? path : "");
	if (gb_outfile_open(&o, path, force, err))
		return -1;
	if (encode(o.fp, c, keys, vals, n_text, path, err)) {
		gb_outfile_abort(&o);
		return -1;
	}
	return gb_outfile_commit(&o, err);
}

static int has_key(const gb_figure *f, const char *key)
{
	for (int i = 0; i < f->n_meta; i++)
		if (f->meta_keys[i] && strcmp(f->meta_keys[i], key) == 0)
			return 1;
	return 0;
}

int gb_png_write_figure(const gb_figure *f, const char *path, const gb_raster_opts *opts,
                        const char *version, int force, gb_verr *err)
{
	gb_canvas c;
	gb_raster_info info;
	gb_layout_report rep;
	const char **keys, **vals;
	char software[96], range[96];
	int n = 0, rc;
	if (!f)
		return gb_vfail(err, "no figure to write to '%s'", path ? path : "");
	if (gb_raster_render(f, opts, &c, &info, err))
		return -1;
	keys = malloc(sizeof *keys * (size_t)(f->n_meta + 5 + GB_LAYOUT_REPORT_N));
	vals = malloc(sizeof *vals * (size_t)(f->n_meta + 5 + GB_LAYOUT_REPORT_N));
	if (!keys || !vals) {
		free(keys);
		free(vals);
		gb_canvas_free(&c);
		return gb_vfail(err, "out of memory writing '%s'", path);
	}
	for (int i = 0; i < f->n_meta; i++, n++) {
		keys[n] = f->meta_keys[i];
		vals[n] = f->meta_vals[i];
	}
	if (f->title && !has_key(f, "Title")) {
		keys[n] = "Title";
		vals[n++] = f->title;
	}
	if (f->caption && !has_key(f, "Description")) {
		keys[n] = "Description";
		vals[n++] = f->caption;
	}
	snprintf(software, sizeof software, "glassbox %s", version && *version ? version : "(unknown version)");
	keys[n] = "Software";
	vals[n++] = software;
	if (f->kind != GB_FIG_LINES) {
		float lo, hi;
		int bad;
		gb_fig_range(f, &lo, &hi, &bad);
		snprintf(range, sizeof range, "%.9g .. %.9g", lo, hi);
		keys[n] = "Colormap";
		vals[n++] = gb_cmap_name(f->cmap);
		keys[n] = "Range";
		vals[n++] = range;
	}
	/* what the layout measured, for a test (or a reader) to check the slide by */
	gb_layout_report_make(f, &info, &rep);
	for (int i = 0; i < GB_LAYOUT_REPORT_N; i++, n++) {
		keys[n] = rep.keys[i];
		vals[n] = rep.vals[i];
	}
	rc = gb_png_write(path, &c, keys, vals, n, force, err);
	gb_canvas_free(&c);
	free(keys);
	free(vals);
	return rc;
}

/* ---- reading ------------------------------------------------------------------------------- */

typedef struct rstate {
	png_structp png;
	png_infop info;
	FILE *fp;
	gb_png_text *text;
	int n_text;
	uint8_t **rows;           /* (h) pointers into the canvas */
	gb_canvas c;
} rstate;

int gb_png_read(const char *path, gb_canvas *out, gb_png_text **text, int *n_text, gb_verr *err)
{
	pngerr pe = { .msg = "" };
	rstate *volatile st = calloc(1, sizeof *st);
	volatile int rc = -1;
	png_uint_32 w, h;
	int depth, ctype;
	if (text)
		*text = NULL;
	if (n_text)
		*n_text = 0;
	if (!st)
		return gb_vfail(err, "out of memory reading '%s'", path);
	st->fp = fopen(path, "rb");
	if (!st->fp) {
		gb_vfail(err, "cannot open '%s': %s", path, strerror(errno));
		free(st);
		return -1;
	}
	st->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &pe, on_error, on_warning);
	st->info = st->png ? png_create_info_struct(st->png) : NULL;
	if (!st->info) {
		gb_vfail(err, "out of memory reading '%s'", path);
		goto out;
	}
	if (setjmp(pe.jb)) {
		gb_vfail(err, "cannot read PNG '%s': %s", path, pe.msg);
		goto out;
	}
	png_init_io(st->png, st->fp);
	png_read_info(st->png, st->info);
	png_get_IHDR(st->png, st->info, &w, &h, &depth, &ctype, NULL, NULL, NULL);
	if (w > 32768 || h > 32768) {
		gb_vfail(err, "'%s' is %u x %u pixels, larger than glassbox reads", path, (unsigned)w, (unsigned)h);
		goto out;
	}
	/* whatever the file holds, hand back 8-bit RGBA */
	png_set_expand(st->png);
	png_set_strip_16(st->png);
	png_set_gray_to_rgb(st->png);
	png_set_add_alpha(st->png, 0xFF, PNG_FILLER_AFTER);
	png_set_interlace_handling(st->png);
	png_read_update_info(st->png, st->info);
	if (gb_canvas_init(&st->c, (int)w, (int)h, err))
		goto out;
	st->rows = malloc(sizeof *st->rows * h);
	if (!st->rows) {
		gb_vfail(err, "out of memory reading '%s'", path);
		goto out;
	}
	for (png_uint_32 y = 0; y < h; y++)
		st->rows[y] = st->c.rgba + (size_t)y * w * 4;
	png_read_image(st->png, st->rows);
	png_read_end(st->png, st->info);
	if (text) {
		png_textp t;
		int nt = png_get_text(st->png, st->info, &t, NULL);
		st->text = calloc((size_t)(nt > 0 ? nt : 1), sizeof *st->text);
		if (!st->text) {
			gb_vfail(err, "out of memory reading '%s'", path);
			goto out;
		}
		for (int i = 0; i < nt; i++) {
			st->text[i].key = strdup(t[i].key);
			st->text[i].val = strdup(t[i].text ? t[i].text : "");
			st->n_text = i + 1;
			if (!st->text[i].key || !st->text[i].val) {
				gb_vfail(err, "out of memory reading '%s'", path);
				goto out;
			}
		}
	}
	*out = st->c;
	st->c.rgba = NULL;
	if (text) {
		*text = st->text;
		*n_text = st->n_text;
		st->text = NULL;
		st->n_text = 0;
	}
	rc = 0;
out:
	if (st->png)
		png_destroy_read_struct(&st->png, st->info ? &st->info : NULL, NULL);
	fclose(st->fp);
	free(st->rows);
	gb_canvas_free(&st->c);
	gb_png_text_free(st->text, st->n_text);
	free(st);
	return rc;
}

void gb_png_text_free(gb_png_text *t, int n)
{
	if (!t)
		return;
	for (int i = 0; i < n; i++) {
		free(t[i].key);
		free(t[i].val);
	}
	free(t);
}

const char *gb_png_text_get(const gb_png_text *t, int n, const char *key)
{
	for (int i = 0; t && i < n; i++)
		if (strcmp(t[i].key, key) == 0)
			return t[i].val;
	return NULL;
}
