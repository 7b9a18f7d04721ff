/* t_raster.c — the raster backend and PNG files, judged by decoded pixels: cells have their
 * colormap colours, NaN is marked, masked cells are told from it, every heatmap has its gray
 * outline, labels and numbers really draw, text chunks come back, the bytes are reproducible,
 * and the file rules (existing file, unwritable path, font missing) give their errors. */
#include "tests/tap.h"
#include "viz/colormap.h"
#include "viz/export.h"
#include "viz/figure.h"
#include "viz/font.h"
#include "viz/png.h"
#include "viz/raster.h"

#include <dirent.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static const uint8_t *px(const gb_canvas *c, int x, int y)
{
	return c->rgba + ((size_t)y * c->w + x) * 4;
}

static int same_rgb(const uint8_t *a, const uint8_t *b)
{
	return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}

/* Centre of cell (r, c) by the geometry raster.h documents. */
static void cell_centre(const gb_raster_info *in, int rows, int cols, int r, int c, int *x, int *y)
{
	int xa = in->plot.x + c * in->plot.w / cols, xb = in->plot.x + (c + 1) * in->plot.w / cols;
	int ya = in->plot.y + r * in->plot.h / rows, yb = in->plot.y + (r + 1) * in->plot.h / rows;
	*x = (xa + xb) / 2;
	*y = (ya + yb) / 2;
}

/* Pixels in a box darker than near-white (text over the white page). */
static int ink(const gb_canvas *c, int x0, int y0, int x1, int y1)
{
	int n = 0;
	for (int y = y0 < 0 ? 0 : y0; y < y1 && y < c->h; y++)
		for (int x = x0 < 0 ? 0 : x0; x < x1 && x < c->w; x++)
			n += px(c, x, y)[0] < 200;
	return n;
}

static char *path(const char *name)
{
	static char buf[8][256];
	static int k;
	char *p = buf[k++ % 8];
	snprintf(p, 256, "%s/%s", dir, name);
	return p;
}

static long file_size(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

static unsigned char *slurp(const char *p, long *n)
{
	FILE *fp = fopen(p, "rb");
	unsigned char *b;
	*n = file_size(p);
	if (!fp || *n < 0)
		return NULL;
	b = malloc((size_t)*n + 1);
	if (fread(b, 1, (size_t)*n, fp) != (size_t)*n) {
		free(b);
		b = NULL;
	}
	fclose(fp);
	return b;
}

static int has_chunk(const unsigned char *b, long n, const char *type)
{
	for (long i = 8; i + 8 <= n;) {
		unsigned long len = (unsigned long)b[i] << 24 | b[i + 1] << 16 | b[i + 2] << 8 | b[i + 3];
		if (memcmp(b + i + 4, type, 4) == 0)
			return 1;
		i += 12 + (long)len;
	}
	return 0;
}

static int leftover_temps(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	while (d && (e = readdir(d)))
		n += strstr(e->d_name, ".tmp-") != NULL;
	if (d)
		closedir(d);
	return n;
}

/* 3 x 4, values 0 .. 1 across, one NaN at (1, 2). */
static gb_figure *known_heatmap(void)
{
	static const float v[12] = { 0.0f, 0.25f, 0.5f, 1.0f, 0.1f, 0.9f, NAN, 0.75f, 0.6f, 0.3f, 0.05f, 0.95f };
	static const char *rows[3] = { "The", " cat", " sat" };
	static const char *cols[4] = { "k0", "k1", "k2", "k3" };
	gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
	gb_fig_set_title(f, "Known heatmap");
	gb_fig_set_caption(f, "softmax(q k^T / sqrt(d_head))");
	gb_fig_set_values(f, v, 3, 4);
	gb_fig_set_row_labels(f, rows);
	gb_fig_set_col_labels(f, cols);
	f->range = GB_RANGE_FIXED;
	f->vmin = 0;
	f->vmax = 1;
	gb_fig_add_meta(f, "Model", "tiny-lm");
	gb_fig_add_meta(f, "Text", "the café sat"); /* not ASCII: goes as iTXt */
	return f;
}

static void test_cells_and_text(void)
{
	gb_figure *f = known_heatmap();
	gb_raster_info info;
	gb_canvas c, d;
	gb_verr err = { "" };
	gb_png_text *t = NULL;
	int nt = 0, bad_cells = 0, x, y;
	gb_raster_opts ro = { 0 };
	unsigned char *bytes;
	long nbytes;
	const char *p1 = path("known.png");

	tap_ok(gb_raster_render(f, &ro, &c, &info, &err) == 0, "heatmap renders (%s)", err.msg);
	tap_ok(c.w == 1600 && c.h == 900, "default size is a 16:9 slide, 1600 x 900 (got %d x %d)", c.w, c.h);
	tap_ok(info.plot.w >= 4 * 50 && info.plot.h >= 3 * 50, "cells are large (plot %d x %d)", info.plot.w, info.plot.h);
	tap_ok(gb_png_write_figure(f, p1, &ro, "9.8.7", 0, &err) == 0, "PNG written (%s)", err.msg);
	tap_ok(gb_png_read(p1, &d, &t, &nt, &err) == 0, "PNG decodes (%s)", err.msg);
	tap_ok(d.w == c.w && d.h == c.h && memcmp(d.rgba, c.rgba, (size_t)c.w * c.h * 4) == 0,
	       "decoded PNG equals the rendered canvas, pixel for pixel");
	for (int r = 0; r < 3; r++)
		for (int k = 0; k < 4; k++) {
			float v = f->values[r * 4 + k];
			uint8_t want[3];
			if (isnan(v))
				continue;
			gb_cmap_rgb(GB_CMAP_VIRIDIS, v, want);
			cell_centre(&info, 3, 4, r, k, &x, &y);
			if (!same_rgb(px(&d, x, y), want)) {
				bad_cells++;
				tap_diag("cell (%d,%d) at (%d,%d): %d,%d,%d, want %d,%d,%d", r, k, x, y, px(&d, x, y)[0],
				         px(&d, x, y)[1], px(&d, x, y)[2], want[0], want[1], want[2]);
			}
		}
	tap_ok(bad_cells == 0, "all 11 finite cells have their viridis colour at the centre");
	{
		uint8_t want[3];
		cell_centre(&info, 3, 4, 0, 3, &x, &y);
		gb_cmap_rgb(GB_CMAP_VIRIDIS, 1.0, want);
		tap_ok(same_rgb(px(&d, x, y), want) && want[0] > 200 && want[1] > 200 && want[2] < 80,
		       "cell (0,3) = 1.0 is viridis yellow (%d,%d,%d)", px(&d, x, y)[0], px(&d, x, y)[1], px(&d, x, y)[2]);
		/* a corner pixel, not just the centre: the cell is filled edge to edge */
		tap_ok(same_rgb(px(&d, info.plot.x + 3 * info.plot.w / 4 + 1, info.plot.y + 1), want),
		       "cell (0,3) is filled to its top-left corner");
	}
	cell_centre(&info, 3, 4, 1, 2, &x, &y);
	tap_ok(same_rgb(px(&d, x, y), gb_bad_rgb), "the NaN cell is gb_bad_rgb (%d,%d,%d)", px(&d, x, y)[0],
	       px(&d, x, y)[1], px(&d, x, y)[2]);
	tap_ok(info.n_bad == 1, "layout counted 1 non-finite value (%d)", info.n_bad);
	/* the colorbar: its top is vmax's colour, its bottom vmin's */
	{
		uint8_t top[3], bot[3];
		gb_cmap_rgb(GB_CMAP_VIRIDIS, 1.0, top);
		gb_cmap_rgb(GB_CMAP_VIRIDIS, 0.0, bot);
		tap_ok(info.colorbar.h > 100 && same_rgb(px(&d, info.colorbar.x + info.colorbar.w / 2, info.colorbar.y), top) &&
		       same_rgb(px(&d, info.colorbar.x + info.colorbar.w / 2, info.colorbar.y + info.colorbar.h - 1), bot),
		       "colorbar runs from vmax's colour at the top to vmin's at the bottom");
		tap_ok(ink(&d, info.colorbar.x + info.colorbar.w + 4, info.colorbar.y - 10, info.colorbar.x + info.colorbar.w + 60,
		           info.colorbar.y + info.colorbar.h + 10) > 50, "colorbar tick values are drawn");
	}
	/* labels: the row label column left of row 0, the column labels under the plot, the title */
	{
		int ry0 = info.plot.y, ry1 = info.plot.y + info.plot.h / 3;
		int n_row = ink(&d, info.plot.x - 80, ry0, info.plot.x - 2, ry1);
		int n_col = ink(&d, info.plot.x, info.plot.y + info.plot.h + 2, info.plot.x + info.plot.w / 4,
		                info.plot.y + info.plot.h + 40);
		int n_title = ink(&d, info.title.x, info.title.y, info.title.x + info.title.w, info.title.y + info.title.h);
		int n_between = ink(&d, info.plot.x - 80, info.plot.y + info.plot.h + 60, info.plot.x - 2, info.plot.y + info.plot.h + 80);
		tap_ok(n_row > 40, "row label 'The' draws ink left of row 0 (%d pixels)", n_row);
		tap_ok(n_col > 30, "column label 'k0' draws ink under column 0 (%d pixels)", n_col);
		tap_ok(info.title.w > 100 && n_title > 300, "title drawn (%d x %d box, %d pixels)", info.title.w, info.title.h, n_title);
		tap_ok(n_between == 0, "and the page is blank where nothing is drawn (%d)", n_between);
		tap_ok(info.title.y + info.title.h < info.plot.y, "title ends above the plot (%d < %d)",
		       info.title.y + info.title.h, info.plot.y);
		tap_ok(info.plot.y + info.plot.h + 40 < c.h - 28 - 2 * 25, "caption lines sit below the labels");
	}
	tap_ok(gb_png_text_get(t, nt, "Software") && !strcmp(gb_png_text_get(t, nt, "Software"), "glassbox 9.8.7"),
	       "tEXt Software = glassbox 9.8.7 (%s)", gb_png_text_get(t, nt, "Software"));
	tap_ok(gb_png_text_get(t, nt, "Model") && !strcmp(gb_png_text_get(t, nt, "Model"), "tiny-lm"), "tEXt Model = tiny-lm");
	tap_ok(gb_png_text_get(t, nt, "Text") && !strcmp(gb_png_text_get(t, nt, "Text"), "the café sat"),
	       "iTXt Text keeps its UTF-8 (%s)", gb_png_text_get(t, nt, "Text"));
	tap_ok(gb_png_text_get(t, nt, "Colormap") && !strcmp(gb_png_text_get(t, nt, "Colormap"), "viridis"), "Colormap = viridis");
	tap_ok(gb_png_text_get(t, nt, "Range") && !strcmp(gb_png_text_get(t, nt, "Range"), "0 .. 1"),
	       "Range = 0 .. 1 (%s)", gb_png_text_get(t, nt, "Range"));
	tap_ok(gb_png_text_get(t, nt, "Title") && !strcmp(gb_png_text_get(t, nt, "Title"), "Known heatmap"), "Title chunk");
	tap_ok(gb_png_text_get(t, nt, "Description") && !strcmp(gb_png_text_get(t, nt, "Description"), f->caption),
	       "Description = the caption");
	bytes = slurp(p1, &nbytes);
	tap_ok(bytes && !has_chunk(bytes, nbytes, "tIME"), "no tIME chunk");
	tap_ok(bytes && bytes[25] == 2 && bytes[24] == 8, "8-bit RGB (IHDR colour type %d, depth %d)", bytes ? bytes[25] : -1,
	       bytes ? bytes[24] : -1);
	free(bytes);

	/* reproducible: the same figure twice gives the same bytes */
	{
		const char *p2 = path("known2.png");
		unsigned char *a, *b;
		long na, nb;
		tap_ok(gb_png_write_figure(f, p2, &ro, "9.8.7", 0, &err) == 0, "second write (%s)", err.msg);
		a = slurp(p1, &na);
		b = slurp(p2, &nb);
		tap_ok(a && b && na == nb && memcmp(a, b, (size_t)na) == 0, "writing twice gives identical bytes (%ld, %ld)", na, nb);
		free(a);
		free(b);
	}
	/* the file rules */
	{
		long before = file_size(p1);
		gb_verr e2 = { "" };
		int rc = gb_png_write_figure(f, p1, &ro, "1", 0, &e2);
		tap_ok(rc == -1 && strstr(e2.msg, "already exists") && strstr(e2.msg, p1), "existing file is an error: %s", e2.msg);
		tap_ok(file_size(p1) == before, "and the file is untouched");
		e2.msg[0] = 0;
		tap_ok(gb_png_write_figure(f, p1, &ro, "1", 1, &e2) == 0, "force overwrites (%s)", e2.msg);
		rc = gb_png_write_figure(f, "/nonexistent-glassbox-dir/x.png", &ro, "1", 0, &e2);
		tap_ok(rc == -1 && strstr(e2.msg, "cannot write '/nonexistent-glassbox-dir/x.png'") &&
		       strstr(e2.msg, "does not exist"), "missing folder: %s", e2.msg);
		rc = gb_png_write_figure(f, path("known.png/x.png"), &ro, "1", 0, &e2);
		tap_ok(rc == -1 && strstr(e2.msg, "is not a folder"), "a file as folder: %s", e2.msg);
		rc = gb_png_write_figure(f, dir, &ro, "1", 1, &e2);
		tap_ok(rc == -1 && strstr(e2.msg, "is a folder"), "a folder as the file: %s", e2.msg);
		tap_ok(leftover_temps() == 0, "no temporary files left behind");
	}
	gb_png_text_free(t, nt);
	gb_canvas_free(&c);
	gb_canvas_free(&d);

	/* --scale 2 doubles every dimension */
	{
		gb_raster_opts r2 = { .scale = 2 };
		gb_raster_info i2;
		gb_canvas c2, d2;
		int rc = gb_raster_render(f, &r2, &c2, &i2, &err);
		tap_ok(rc == 0 && c2.w == 3200 && c2.h == 1800, "scale 2: 3200 x 1800 (%d x %d)", c2.w, c2.h);
		tap_ok(abs(i2.plot.w - 2 * info.plot.w) <= 8 && abs(i2.plot.x - 2 * info.plot.x) <= 8,
		       "scale 2: the plot doubles (%d -> %d wide)", info.plot.w, i2.plot.w);
		tap_ok(abs(i2.title.h - 2 * info.title.h) <= 2, "scale 2: the title font doubles (%d -> %d)", info.title.h, i2.title.h);
		tap_ok(gb_png_write(path("scale2.png"), &c2, NULL, NULL, 0, 0, &err) == 0 &&
		       gb_png_read(path("scale2.png"), &d2, NULL, NULL, &err) == 0 && d2.w == 3200 && d2.h == 1800,
		       "scale 2 PNG decodes at 3200 x 1800");
		gb_canvas_free(&c2);
		gb_canvas_free(&d2);
	}
	gb_fig_free(f);
}

/* The textbook's masked softmax, numbers on: readable black on light cells, white on dark. */
static void test_numbers(void)
{
	static const float sm[16] = { 1, 0, 0, 0, 0.2689f, 0.7311f, 0, 0, 0.1863f, 0.4093f, 0.4044f, 0,
	                              0.0474f, 0.1288f, 0.0474f, 0.7764f };
	static const char *tok[4] = { "The", " cat", " sat", " on" };
	gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
	gb_raster_info info;
	gb_canvas c;
	gb_verr err = { "" };
	int x, y, white = 0, black = 0, cw;
	gb_fig_set_values(f, sm, 4, 4);
	gb_fig_set_row_labels(f, tok);
	gb_fig_set_col_labels(f, tok);
	f->numbers = 1;
	f->range = GB_RANGE_FIXED;
	f->vmin = 0;
	f->vmax = 1;
	tap_ok(gb_raster_render(f, NULL, &c, &info, &err) == 0 && info.numbers_shown, "4x4 with numbers renders them (%s)", err.msg);
	cw = info.plot.w / 4;
	/* cell (0,1) = 0: dark purple, its "0.00" must be near-white */
	cell_centre(&info, 4, 4, 0, 1, &x, &y);
	for (int yy = y - cw / 4; yy < y + cw / 4; yy++)
		for (int xx = x - cw / 3; xx < x + cw / 3; xx++)
			white += px(&c, xx, yy)[0] > 230 && px(&c, xx, yy)[1] > 230 && px(&c, xx, yy)[2] > 230;
	/* cell (0,0) = 1: yellow, its "1.00" must be near-black */
	cell_centre(&info, 4, 4, 0, 0, &x, &y);
	for (int yy = y - cw / 4; yy < y + cw / 4; yy++)
		for (int xx = x - cw / 3; xx < x + cw / 3; xx++)
			black += px(&c, xx, yy)[0] < 40 && px(&c, xx, yy)[1] < 40 && px(&c, xx, yy)[2] < 40;
	tap_ok(white > 80, "white digits on the dark cell (%d pixels)", white);
	tap_ok(black > 80, "black digits on the yellow cell (%d pixels)", black);
	{
		uint8_t dark[3], light[3];
		gb_cmap_rgb(GB_CMAP_VIRIDIS, 0, dark);
		gb_cmap_rgb(GB_CMAP_VIRIDIS, 1, light);
		tap_ok(gb_lightness(dark) < 55 && gb_lightness(light) > 55, "the lightness rule picks those (L* %.0f and %.0f)",
		       gb_lightness(dark), gb_lightness(light));
	}
	tap_ok(info.angled_labels == 0, "short labels on wide cells stay horizontal");
	gb_canvas_free(&c);
	gb_fig_free(f);

	/* 128 x 128: labels thin out and slant, numbers give way */
	{
		float *v = malloc(sizeof *v * 128 * 128);
		char *labs[128], buf[128][24];
		for (int i = 0; i < 128 * 128; i++)
			v[i] = (float)(i % 97) / 97.0f;
		for (int i = 0; i < 128; i++) {
			snprintf(buf[i], sizeof buf[i], " token%d", i);
			labs[i] = buf[i];
		}
		f = gb_fig_new(GB_FIG_HEATMAP);
		gb_fig_set_values(f, v, 128, 128);
		gb_fig_set_row_labels(f, (const char *const *)labs);
		gb_fig_set_col_labels(f, (const char *const *)labs);
		f->numbers = 1;
		tap_ok(gb_raster_render(f, &(gb_raster_opts){ 1920, 1080, 1 }, &c, &info, &err) == 0, "128 x 128 renders (%s)", err.msg);
		tap_ok(info.numbers_shown == 0, "numbers omitted when cells are too small (%d px)", info.plot.w / 128);
		tap_ok(info.angled_labels == 1 && info.col_label_stride > 1 && info.label_stride > 1,
		       "labels slanted and thinned (every %d row, %d column)", info.label_stride, info.col_label_stride);
		tap_ok(info.plot.y + info.plot.h < c.h && info.plot.x > 0, "plot inside the canvas");
		gb_canvas_free(&c);
		gb_fig_free(f);
		free(v);
	}
}

static void test_other_kinds(void)
{
	gb_verr err = { "" };
	gb_raster_info info;
	gb_canvas c;
	/* bars */
	{
		static const float v[3] = { 0.6f, 0.3f, 0.1f };
		static const char *l[3] = { " mat", " floor", " <&>" };
		gb_figure *f = gb_fig_new(GB_FIG_BARS);
		int x, y, blue = 0;
		gb_fig_set_values(f, v, 1, 3);
		gb_fig_set_col_labels(f, l);
		tap_ok(gb_raster_render(f, NULL, &c, &info, &err) == 0, "bars render (%s)", err.msg);
		/* bar 0 spans the whole plot width (it is the max): its middle is the bar colour */
		x = info.plot.x + info.plot.w / 2;
		y = info.plot.y + info.plot.h / 6;
		blue = px(&c, x, y)[2] > px(&c, x, y)[0] + 40;
		tap_ok(blue, "the longest bar crosses the middle of the plot (%d,%d,%d)", px(&c, x, y)[0], px(&c, x, y)[1], px(&c, x, y)[2]);
		/* bar 2 (0.1) ends at a sixth of the width: past its end there is no bar */
		y = info.plot.y + 5 * info.plot.h / 6;
		tap_ok(px(&c, info.plot.x + info.plot.w / 2, y)[0] > 200, "the shortest bar stops early");
		tap_ok(ink(&c, info.plot.x - 90, info.plot.y, info.plot.x - 4, info.plot.y + info.plot.h / 3) > 30, "bar labels drawn");
		gb_canvas_free(&c);
		gb_fig_free(f);
	}
	/* lines: two series in their distinct colours */
	{
		float a[50], b[50];
		gb_figure *f = gb_fig_new(GB_FIG_LINES);
		int na = 0, nb = 0;
		for (int i = 0; i < 50; i++) {
			a[i] = sinf(i * 0.2f);
			b[i] = cosf(i * 0.2f);
		}
		gb_fig_add_series(f, "sin", a, 50);
		gb_fig_add_series(f, "cos", b, 50);
		tap_ok(gb_raster_render(f, NULL, &c, &info, &err) == 0, "lines render (%s)", err.msg);
		for (int y = info.plot.y; y < info.plot.y + info.plot.h; y++)
			for (int x = info.plot.x; x < info.plot.x + info.plot.w; x++) {
				const uint8_t *p = px(&c, x, y);
				na += p[0] == 0x44 && p[1] == 0x77 && p[2] == 0xAA;
				nb += p[0] == 0xEE && p[1] == 0x66 && p[2] == 0x77;
			}
		tap_ok(na > 1000 && nb > 1000, "both series drawn in distinct colours (%d and %d pixels)", na, nb);
		tap_ok(ink(&c, info.plot.x + info.plot.w + 20, info.plot.y, c.w, info.plot.y + 60) > 50, "legend drawn");
		gb_canvas_free(&c);
		gb_fig_free(f);
	}
	/* strip: the first token's box has its value's colour */
	{
		static const float v[4] = { 0.0f, 0.5f, 1.0f, 0.25f };
		static const char *l[4] = { "The", " cat", " sat", " on" };
		gb_figure *f = gb_fig_new(GB_FIG_STRIP);
		uint8_t want[3];
		gb_fig_set_values(f, v, 1, 4);
		gb_fig_set_col_labels(f, l);
		f->range = GB_RANGE_FIXED;
		f->vmin = 0;
		f->vmax = 1;
		gb_cmap_rgb(f->cmap, 0, want);
		tap_ok(gb_raster_render(f, NULL, &c, &info, &err) == 0, "strip renders (%s)", err.msg);
		tap_ok(info.plot.w > 20 && same_rgb(px(&c, info.plot.x + 2, info.plot.y + 2), want),
		       "first token box is vmin's colour");
		{
			static const uint8_t gray[3] = { 153, 153, 153 }, white[3] = { 255, 255, 255 };
			int x = info.plot.x, y = info.plot.y + info.plot.h / 2;
			tap_ok(same_rgb(px(&c, x - 1, y), gray) && same_rgb(px(&c, x - 2, y), white) &&
			       same_rgb(px(&c, x + info.plot.w, y), gray) && same_rgb(px(&c, x + 2, info.plot.y - 1), gray),
			       "the box is framed in gray (#999999) just outside it, then the page");
		}
		gb_canvas_free(&c);
		gb_fig_free(f);
	}
	/* grid: panel p's cells at the documented offsets, one shared range */
	{
		gb_figure *g = gb_fig_new(GB_FIG_GRID);
		int ok = 1;
		g->grid_cols = 3;
		for (int p = 0; p < 5; p++) {
			gb_figure *q = gb_fig_new(GB_FIG_HEATMAP);
			float v[6];
			char t[32];
			for (int i = 0; i < 6; i++)
				v[i] = (float)(p * 6 + i);
			gb_fig_set_values(q, v, 2, 3);
			snprintf(t, sizeof t, "head %d", p);
			gb_fig_set_title(q, t);
			gb_fig_add_panel(g, q);
		}
		tap_ok(gb_raster_render(g, NULL, &c, &info, &err) == 0 && info.grid_cols == 3, "grid renders (%s)", err.msg);
		for (int p = 0; p < 5; p++)
			for (int i = 0; i < 6; i++) {
				uint8_t want[3];
				int x, y;
				cell_centre(&info, 2, 3, i / 3, i % 3, &x, &y);
				x += (p % 3) * info.dx;
				y += (p / 3) * info.dy;
				gb_cmap_rgb(g->cmap, (p * 6 + i) / 29.0, want);
				ok &= same_rgb(px(&c, x, y), want);
			}
		tap_ok(ok, "all 30 cells of 5 panels have the shared-range colour");
		tap_ok(ink(&c, info.plot.x, info.plot.y - 30, info.plot.x + info.plot.w, info.plot.y - 2) > 30, "panel title drawn");
		gb_canvas_free(&c);
		gb_fig_free(g);
	}
	/* a grid whose rows may stand side by side (figure.h's grid_wrap, the model view): on a
	 * wide, low page its four rows of square 6 x 6 maps go in two blocks of two rows, each
	 * panel's cells where gb_raster_panel_xy says; on a tall page they stay four rows */
	{
		gb_figure *g = gb_fig_new(GB_FIG_GRID);
		gb_raster_opts wide = { 1600, 560, 1 }, tall = { 900, 1200, 1 };
		int ok = 1;
		g->grid_cols = 4;
		g->grid_wrap = 1;
		for (int p = 0; p < 16; p++) {
			gb_figure *q = gb_fig_new(GB_FIG_HEATMAP);
			float v[36];
			char t[32];
			for (int i = 0; i < 36; i++)
				v[i] = (float)p;
			gb_fig_set_values(q, v, 6, 6);
			snprintf(t, sizeof t, "L%d H%d", p / 4 + 1, p % 4 + 1);
			gb_fig_set_title(q, t);
			gb_fig_add_panel(g, q);
		}
		int rc = gb_raster_render(g, &wide, &c, &info, &err);
		tap_ok(rc == 0 && info.grid_blocks == 2 && info.grid_cols == 4 &&
		       info.grid_rows == 2, "a wide page sets the grid's rows in %d blocks of %d rows of %d (%s)", info.grid_blocks,
		       info.grid_rows, info.grid_cols, err.msg);
		for (int p = 0; p < 16; p++) {
			uint8_t want[3];
			int x, y;
			gb_raster_panel_xy(&info, p, &x, &y);
			gb_cmap_rgb(g->cmap, p / 15.0, want);
			ok &= same_rgb(px(&c, x + info.plot.w / 2, y + info.plot.h / 2), want);
		}
		tap_ok(ok, "each of the 16 panels where gb_raster_panel_xy puts it (layers 1 and 3 left, 2 and 4 right)");
		{
			/* a page's row reads in order: L1 | L2 on top, L3 | L4 under them (review 8) */
			int x0, y0, x3, y3, x4, y4, x8, y8;
			gb_raster_panel_xy(&info, 0, &x0, &y0);
			gb_raster_panel_xy(&info, 3, &x3, &y3);
			gb_raster_panel_xy(&info, 4, &x4, &y4);
			gb_raster_panel_xy(&info, 8, &x8, &y8);
			int gap = x4 - (x3 + info.plot.w);
			tap_ok(y4 == info.plot.y && y3 == y4 && gap > info.dx - info.plot.w && x8 == x0 && y8 > y0,
			       "row 2 begins the second block on the top row, a wider gap before it (%d px, %d between "
			       "panels); row 3 goes under row 1", gap, info.dx - info.plot.w);
		}
		gb_canvas_free(&c);
		rc = gb_raster_render(g, &tall, &c, &info, &err);
		tap_ok(rc == 0 && info.grid_blocks <= 1 && info.grid_cols == 4, "a tall page keeps its four rows (%d block)",
		       info.grid_blocks);
		gb_canvas_free(&c);
		gb_fig_free(g);
	}
	/* malformed figures fail with a message, not a crash */
	{
		gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
		tap_ok(gb_raster_render(f, NULL, &c, NULL, &err) == -1 && strstr(err.msg, "no values"), "empty heatmap: %s", err.msg);
		gb_fig_free(f);
		f = gb_fig_new(GB_FIG_LINES);
		tap_ok(gb_raster_render(f, NULL, &c, NULL, &err) == -1 && strstr(err.msg, "no series"), "empty line plot: %s", err.msg);
		gb_fig_free(f);
	}
	/* a file that is not a PNG */
	{
		FILE *fp = fopen(path("not.png"), "w");
		fputs("hello", fp);
		fclose(fp);
		tap_ok(gb_png_read(path("not.png"), &c, NULL, NULL, &err) == -1 && strstr(err.msg, "not.png"),
		       "reading a non-PNG fails: %s", err.msg);
	}
}

/* ---- outlines and masked cells ---------------------------------------------------------- */

static const uint8_t OUTLINE_RGB[3] = { 0x99, 0x99, 0x99 }; /* raster.h: every heatmap's outline */
static const uint8_t PAGE_RGB[3] = { 0xFF, 0xFF, 0xFF };

static int is_rgb(const gb_canvas *c, int x, int y, const uint8_t want[3], const char *what)
{
	const uint8_t *p = px(c, x, y);
	return tap_ok(same_rgb(p, want), "%s at (%d,%d) is %d,%d,%d (got %d,%d,%d)", what, x, y, want[0], want[1],
	              want[2], p[0], p[1], p[2]);
}

/* The `masks` gallery's kind of grid: 8 causal 0/1 panels on the gray map, 1 = white, so the
 * cells along a panel's left and bottom edges are as white as the page. */
static gb_figure *white_edged_grid(void)
{
	gb_figure *g = gb_fig_new(GB_FIG_GRID);
	float v[64];
	g->grid_cols = 4;
	g->cmap = GB_CMAP_GRAY;
	g->range = GB_RANGE_FIXED;
	g->vmin = 0;
	g->vmax = 1;
	g->colorbar = 0;
	for (int i = 0; i < 64; i++)
		v[i] = (float)(i / 8 >= i % 8);
	for (int p = 0; p < 8; p++) {
		gb_figure *q = gb_fig_new(GB_FIG_HEATMAP);
		char t[32];
		gb_fig_set_values(q, v, 8, 8);
		snprintf(t, sizeof t, "pattern %d", p + 1);
		gb_fig_set_title(q, t);
		gb_fig_add_panel(g, q);
	}
	return g;
}

static void test_outline(void)
{
	gb_figure *g = white_edged_grid();
	gb_raster_info info;
	gb_canvas c;
	gb_verr err = { "" };
	tap_ok(gb_raster_render(g, NULL, &c, &info, &err) == 0 && info.grid_cols == 4, "white-edged grid renders (%s)",
	       err.msg);
	/* panel 0 (top left) and panel 5 (second row, second column) */
	for (int p = 0; p < 8; p += 5) {
		int x0 = info.plot.x + (p % 4) * info.dx, y0 = info.plot.y + (p / 4) * info.dy;
		int w = info.plot.w, h = info.plot.h, ym = y0 + h / 2;
		char what[64];
		snprintf(what, sizeof what, "panel %d: its first cell, white (value 1)", p);
		is_rgb(&c, x0, ym, PAGE_RGB, what);
		snprintf(what, sizeof what, "panel %d: the left outline", p);
		is_rgb(&c, x0 - 1, ym, OUTLINE_RGB, what);
		snprintf(what, sizeof what, "panel %d: the page left of it", p);
		is_rgb(&c, x0 - 2, ym, PAGE_RGB, what);
		snprintf(what, sizeof what, "panel %d: the bottom outline under a white cell", p);
		is_rgb(&c, x0 + w / 4, y0 + h, OUTLINE_RGB, what);
		snprintf(what, sizeof what, "panel %d: the page under it", p);
		is_rgb(&c, x0 + w / 4, y0 + h + 1, PAGE_RGB, what);
		snprintf(what, sizeof what, "panel %d: the top outline", p);
		is_rgb(&c, x0 + w / 2, y0 - 1, OUTLINE_RGB, what);
		snprintf(what, sizeof what, "panel %d: the right outline", p);
		is_rgb(&c, x0 + w, ym, OUTLINE_RGB, what);
		snprintf(what, sizeof what, "panel %d: the top-left corner", p);
		is_rgb(&c, x0 - 1, y0 - 1, OUTLINE_RGB, what);
		snprintf(what, sizeof what, "panel %d: the bottom-right corner", p);
		is_rgb(&c, x0 + w, y0 + h, OUTLINE_RGB, what);
	}
	gb_canvas_free(&c);
	/* at scale 2 the outline is 2 px, still outside the cells */
	{
		gb_raster_opts ro = { 0, 0, 2 };
		tap_ok(gb_raster_render(g, &ro, &c, &info, &err) == 0, "scale 2 renders (%s)", err.msg);
		int x0 = info.plot.x, ym = info.plot.y + info.plot.h / 2, yb = info.plot.y + info.plot.h;
		is_rgb(&c, x0, ym, PAGE_RGB, "scale 2: the first cell, white");
		is_rgb(&c, x0 - 1, ym, OUTLINE_RGB, "scale 2: the outline's inner pixel");
		is_rgb(&c, x0 - 2, ym, OUTLINE_RGB, "scale 2: the outline's outer pixel");
		is_rgb(&c, x0 - 3, ym, PAGE_RGB, "scale 2: the page beyond");
		is_rgb(&c, x0 + 4, yb + 1, OUTLINE_RGB, "scale 2: the bottom outline's second row");
		is_rgb(&c, x0 + 4, yb + 2, PAGE_RGB, "scale 2: the page under it");
		gb_canvas_free(&c);
	}
	gb_fig_free(g);
	/* a single heatmap has the same outline */
	{
		gb_figure *f = known_heatmap();
		tap_ok(gb_raster_render(f, NULL, &c, &info, &err) == 0, "known heatmap renders (%s)", err.msg);
		is_rgb(&c, info.plot.x - 1, info.plot.y + info.plot.h / 2, OUTLINE_RGB, "single heatmap: the left outline");
		is_rgb(&c, info.plot.x + info.plot.w / 2, info.plot.y + info.plot.h, OUTLINE_RGB,
		       "single heatmap: the bottom outline");
		is_rgb(&c, info.plot.x - 2, info.plot.y + info.plot.h / 2, PAGE_RGB, "single heatmap: the page left of it");
		gb_canvas_free(&c);
		gb_fig_free(f);
	}
}

/* Causal scores after the mask: -inf above the diagonal by design, one real NaN. */
static gb_figure *masked_scores(int masked)
{
	static const float v[9] = { 0.5f, -INFINITY, -INFINITY, 0.2f, -0.3f, -INFINITY, NAN, 0.1f, 0.4f };
	gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
	gb_fig_set_values(f, v, 3, 3);
	gb_fig_set_title(f, "masked scores");
	gb_fig_set_caption(f, "q_i . k_j / sqrt(d_head);  -inf where masked (j > i)");
	f->cmap = GB_CMAP_COOLWARM;
	f->range = GB_RANGE_SYMMETRIC;
	f->masked = masked;
	return f;
}

static void test_masked(void)
{
	gb_raster_info info;
	gb_canvas c;
	gb_verr err = { "" };
	gb_fig_counts k;
	int x, y, bad;
	gb_figure *f = masked_scores(1);
	gb_fig_count(f, &k);
	tap_ok(k.masked == 3 && k.nan == 1 && k.ninf == 0 && k.pinf == 0,
	       "masked figure: 3 masked cells and 1 NaN counted apart (masked %d, nan %d, -inf %d, inf %d)", k.masked,
	       k.nan, k.ninf, k.pinf);
	gb_fig_range(f, NULL, NULL, &bad);
	tap_ok(bad == 1, "gb_fig_range's bad count leaves the masked -inf out (%d)", bad);
	tap_ok(gb_raster_render(f, NULL, &c, &info, &err) == 0, "masked scores render (%s)", err.msg);
	tap_ok(info.n_masked == 3 && info.n_bad == 1, "layout: 3 masked, 1 bad (%d, %d)", info.n_masked, info.n_bad);
	cell_centre(&info, 3, 3, 0, 1, &x, &y);
	is_rgb(&c, x, y, gb_mask_rgb, "masked cell (0,1): gb_mask_rgb");
	cell_centre(&info, 3, 3, 1, 2, &x, &y);
	is_rgb(&c, x, y, gb_mask_rgb, "masked cell (1,2): gb_mask_rgb");
	cell_centre(&info, 3, 3, 2, 0, &x, &y);
	is_rgb(&c, x, y, gb_bad_rgb, "the NaN cell (2,0): still the NaN magenta");
	gb_canvas_free(&c);
	gb_fig_free(f);

	/* without the mark, -inf is a bad number like any other */
	f = masked_scores(0);
	gb_fig_count(f, &k);
	tap_ok(k.masked == 0 && k.ninf == 3 && k.nan == 1, "unmarked figure: 3 -inf and 1 NaN, none masked");
	tap_ok(gb_raster_render(f, NULL, &c, &info, &err) == 0, "unmarked scores render (%s)", err.msg);
	tap_ok(info.n_masked == 0 && info.n_bad == 4, "layout: 0 masked, 4 bad (%d, %d)", info.n_masked, info.n_bad);
	cell_centre(&info, 3, 3, 0, 1, &x, &y);
	is_rgb(&c, x, y, gb_bad_rgb, "unmarked -inf cell (0,1): gb_bad_rgb");
	gb_canvas_free(&c);
	gb_fig_free(f);

	/* marked on a grid, it covers the panels */
	{
		gb_figure *g = gb_fig_new(GB_FIG_GRID);
		g->masked = 1;
		gb_fig_add_panel(g, masked_scores(0));
		gb_fig_add_panel(g, masked_scores(0));
		gb_fig_count(g, &k);
		tap_ok(k.masked == 6 && k.nan == 2 && k.ninf == 0, "masked grid: 6 masked, 2 NaN over two panels (%d, %d, %d)",
		       k.masked, k.nan, k.ninf);
		tap_ok(gb_raster_render(g, NULL, &c, &info, &err) == 0, "masked grid renders (%s)", err.msg);
		cell_centre(&info, 3, 3, 0, 2, &x, &y);
		is_rgb(&c, x + info.dx, y, gb_mask_rgb, "the second panel's masked cell (0,2): gb_mask_rgb");
		gb_canvas_free(&c);
		gb_fig_free(g);
	}
	tap_ok(gb_lightness(gb_mask_rgb) < 55, "white numbers on the mask gray (L* %.0f)", gb_lightness(gb_mask_rgb));
}

static void test_missing_font(void)
{
	gb_figure *f = known_heatmap();
	gb_verr err = { "" };
	gb_canvas c;
	gb_font_set_path("/nonexistent/NoSuchFont.ttf");
	tap_ok(gb_raster_render(f, NULL, &c, NULL, &err) == -1 && strstr(err.msg, "fonts-dejavu-core") &&
	       strstr(err.msg, "/nonexistent/NoSuchFont.ttf"), "missing font names the package: %s", err.msg);
	gb_font_set_path(NULL);
	setenv("GLASSBOX_FONT", "/nonexistent/Env.ttf", 1);
	tap_ok(gb_raster_render(f, NULL, &c, NULL, &err) == -1 && strstr(err.msg, "GLASSBOX_FONT"),
	       "GLASSBOX_FONT pointing nowhere: %s", err.msg);
	unsetenv("GLASSBOX_FONT");
	gb_font_release();
	err.msg[0] = 0;
	tap_ok(gb_raster_render(f, NULL, &c, NULL, &err) == 0, "fontconfig finds DejaVu again (%s)", err.msg);
	gb_canvas_free(&c);
	gb_fig_free(f);
}

/* The axis title sits just under the column labels as they are finally drawn: an 11 x 11
 * heatmap whose labels end up level (after a layout round that slanted them) once left a
 * label-height gap, sized for slanted labels, between them and the title. */
static void test_axis_title_gap(void)
{
	/* "·" is U+00B7 (c2 b7), as the app writes a token's leading space */
	static const char *tok[11] = { "The", "\xc2\xb7" "key", "s", "\xc2\xb7", "on", "\xc2\xb7" "the", "\xc2\xb7" "old",
	                               "\xc2\xb7" "table", "\xc2\xb7" "are", "\xc2\xb7" "dusty", "." };
	float v[121];
	for (int i = 0; i < 121; i++)
		v[i] = (float)(i % 11) / 10;
	gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
	gb_raster_info info;
	gb_canvas c;
	gb_verr err = { "" };
	gb_fig_set_values(f, v, 11, 11);
	gb_fig_set_row_labels(f, tok);
	gb_fig_set_col_labels(f, tok);
	gb_fig_set_axes(f, "query", "key");
	gb_fig_set_title(f, "Layer 1, head 1: scaled and masked scores");
	gb_fig_set_caption(f, "q_i . k_j / sqrt(d_head);  -inf where masked (j > i)");
	if (!tap_ok(gb_raster_render(f, NULL, &c, &info, &err) == 0, "an 11 x 11 heatmap with axis titles renders (%s)", err.msg)) {
		gb_fig_free(f);
		return;
	}
	/* Rows under the plot that hold ink (any dark pixel across the plot's width): the labels'
	 * band, then the title's. */
	int band[2][2] = { { -1, -1 }, { -1, -1 } }, nb = 0, in = 0;
	for (int y = info.plot.y + info.plot.h + 3; y < c.h && nb < 2; y++) {
		int ink = 0;
		for (int x = info.plot.x; x < info.plot.x + info.plot.w && !ink; x++)
			ink = px(&c, x, y)[0] < 160;
		if (ink && !in)
			band[nb][0] = y;
		if (!ink && in)
			band[nb++][1] = y;
		in = ink;
	}
	int gap = nb == 2 ? band[1][0] - band[0][1] : -1;
	tap_ok(info.col_label_stride == 1 && nb == 2 && gap > 0 && gap < 24,
	       "every label (%s), then the title %d px under them (labels rows %d-%d, title from %d; bar < 24)",
	       info.angled_labels ? "slanted" : "level", gap, band[0][0], band[0][1], band[1][0]);
	gb_canvas_free(&c);
	/* the same as masked scores: -inf above the diagonal, a second caption line for them */
	for (int i = 0; i < 11; i++)
		for (int j = i + 1; j < 11; j++)
			v[i * 11 + j] = -INFINITY;
	gb_fig_set_values(f, v, 11, 11);
	f->masked = 1;
	f->cmap = GB_CMAP_COOLWARM;
	f->range = GB_RANGE_SYMMETRIC;
	/* At every scale a window uses (0.75 and up), the plot stays under the title, whether its
	 * labels end up level or slanted (at 0.8 a slanted last round once pushed it up into it). */
	static const double scales[] = { 0.75, 0.8, 0.9, 1.0, 1.25, 1.5, 2.0 };
	int clear = 1;
	char where[160] = "";
	for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++) {
		gb_raster_opts o = { 0, 0, scales[k] };
		if (gb_raster_render(f, &o, &c, &info, &err)) {
			clear = 0;
			snprintf(where, sizeof where, "scale %g: %s", scales[k], err.msg);
			break;
		}
		if (info.title.y + info.title.h > info.plot.y || info.plot.y + info.plot.h > c.h) {
			clear = 0;
			snprintf(where, sizeof where, "scale %g: title ends at %d, plot spans %d-%d of %d", scales[k],
			         info.title.y + info.title.h, info.plot.y, info.plot.y + info.plot.h, c.h);
		}
		gb_canvas_free(&c);
	}
	tap_ok(clear, "at scales 0.75 to 2 the plot stays under its title and on the page%s%s", *where ? ": " : "", where);
	gb_fig_free(f);
}

int main(void)
{
	snprintf(dir, sizeof dir, "/tmp/gb-t_raster-XXXXXX");
	if (!mkdtemp(dir)) {
		printf("Bail out! cannot make a temporary folder\n");
		return 1;
	}
	test_cells_and_text();
	test_numbers();
	test_other_kinds();
	test_outline();
	test_masked();
	test_axis_title_gap();
	test_missing_font();
	gb_font_release();
	{
		char cmd[128];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			tap_diag("could not remove %s", dir);
	}
	return tap_done();
}
