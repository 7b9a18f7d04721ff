/* cells.c — the terminal side of cells.h: the depth rules, the palette mappings (xterm 256,
 * ANSI 16) and the colour a terminal of each depth really shows, the grid of cells and its
 * painting, and the writer that turns a grid into text with the escapes of a depth.
 *
 * The layout of figures in cells is in cells_layout.c (the shared parts and the dispatch) and
 * one file per kind: cells_heatmap.c, cells_panels.c (small multiples of heatmaps),
 * cells_bars.c, cells_lines.c, cells_strip.c. */
#include "viz/cells.h"
#include "viz/cells_layout.h"
#include "viz/colormap.h"

#include <stdlib.h>
#include <string.h>

/* ---- depth ---------------------------------------------------------------------------- */

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && strcmp(s + a - b, suf) == 0;
}

int gb_term_depth(const char *colorterm, const char *term, const char *no_color, int is_tty,
                  int force)
{
	int dumb = !term || !*term || strcmp(term, "dumb") == 0;
	if (!force && ((no_color && *no_color) || !is_tty || dumb))
		return GB_DEPTH_PLAIN;
	if (colorterm && (strcmp(colorterm, "truecolor") == 0 || strcmp(colorterm, "24bit") == 0))
		return GB_DEPTH_TRUE;
	if (term && ends_with(term, "-direct"))
		return GB_DEPTH_TRUE;
	if (term && strstr(term, "256color"))
		return GB_DEPTH_256;
	return GB_DEPTH_16;
}

/* ---- palettes ------------------------------------------------------------------------- */

const uint8_t gb_ansi16_rgb[16][3] = { /* (16, rgb): xterm's defaults */
	{ 0, 0, 0 },       { 205, 0, 0 },     { 0, 205, 0 },     { 205, 205, 0 },
	{ 0, 0, 238 },     { 205, 0, 205 },   { 0, 205, 205 },   { 229, 229, 229 },
	{ 127, 127, 127 }, { 255, 0, 0 },     { 0, 255, 0 },     { 255, 255, 0 },
	{ 92, 92, 255 },   { 255, 0, 255 },   { 0, 255, 255 },   { 255, 255, 255 },
};

static int dist2(int r, int g, int b, const uint8_t c[3])
{
	return (r - c[0]) * (r - c[0]) + (g - c[1]) * (g - c[1]) + (b - c[2]) * (b - c[2]);
}

static const uint8_t cube_level[6] = { 0, 95, 135, 175, 215, 255 };

/* Nearest cube level of one channel: the midpoints between levels are 47.5, 115, 155, ... */
static int cube_index(int v)
{
	if (v < 48)
		return 0;
	if (v < 115)
		return 1;
	return (v - 35) / 40; /* 115..154 -> 2, 155..194 -> 3, 195..234 -> 4, 235..255 -> 5 */
}

int gb_xterm256(const uint8_t rgb[3])
{
	int ri = cube_index(rgb[0]), gi = cube_index(rgb[1]), bi = cube_index(rgb[2]);
	uint8_t cube[3] = { cube_level[ri], cube_level[gi], cube_level[bi] };
	int avg = (rgb[0] + rgb[1] + rgb[2]) / 3;
	int k = (avg - 3) / 10; /* nearest of 8 + 10k, k = 0..23 */
	if (k < 0) k = 0;
	if (k > 23) k = 23;
	uint8_t gray[3] = { (uint8_t)(8 + 10 * k), (uint8_t)(8 + 10 * k), (uint8_t)(8 + 10 * k) };
	if (dist2(rgb[0], rgb[1], rgb[2], gray) < dist2(rgb[0], rgb[1], rgb[2], cube))
		return 232 + k;
	return 16 + 36 * ri + 6 * gi + bi;
}

int gb_ansi16(const uint8_t rgb[3])
{
	int best = 0, bd = 1 << 30;
	for (int i = 0; i < 16; i++) {
		int d = dist2(rgb[0], rgb[1], rgb[2], gb_ansi16_rgb[i]);
		if (d < bd) {
			bd = d;
			best = i;
		}
	}
	return best;
}

/* ---- the grid ------------------------------------------------------------------------- */

static const gb_cell BLANK = { ' ', { 0, 0, 0 }, { 0, 0, 0 }, 0 };

int gb_grid_init(gb_grid *g, int w, int h, gb_verr *err)
{
	memset(g, 0, sizeof *g);
	if (w < 1 || h < 1 || w > 100000 || h > 100000 || (size_t)w * (size_t)h > ((size_t)1 << 26))
		return gb_vfail(err, "a %dx%d character grid is not a usable size", w, h);
	if (!(g->cells = malloc((size_t)w * (size_t)h * sizeof *g->cells)))
		return gb_vfail(err, "out of memory for a %dx%d character grid", w, h);
	g->w = w;
	g->h = h;
	gb_grid_clear(g);
	return 0;
}

void gb_grid_free(gb_grid *g)
{
	if (!g)
		return;
	free(g->cells);
	memset(g, 0, sizeof *g);
}

void gb_grid_clear(gb_grid *g)
{
	for (size_t i = 0; i < (size_t)g->w * (size_t)g->h; i++)
		g->cells[i] = BLANK;
	g->used_h = 0;
	memset(&g->shown, 0, sizeof g->shown);
}

gb_cell *gb_grid_cell(gb_grid *g, int x, int y)
{
	if (x < 0 || y < 0 || x >= g->w || y >= g->h)
		return NULL;
	return &g->cells[(size_t)y * (size_t)g->w + (size_t)x];
}

void gb_cells_set_cell(gb_grid *g, int x, int y, uint32_t cp, const uint8_t *fg,
                       const uint8_t *bg, int attr)
{
	gb_cell *c = gb_grid_cell(g, x, y);
	if (!c)
		return;
	if (c->cp == GB_CELL_CONT && cp != GB_CELL_CONT && x > 0)
		c[-1].cp = ' '; /* half a wide character would misalign the rest of the line */
	c->cp = cp;
	c->attr = (uint8_t)(attr & ~(GB_ATTR_FG | GB_ATTR_BG));
	if (fg) {
		memcpy(c->fg, fg, 3);
		c->attr |= GB_ATTR_FG;
	}
	if (bg) {
		memcpy(c->bg, bg, 3);
		c->attr |= GB_ATTR_BG;
	}
	touch(g, y);
}

int gb_grid_text(gb_grid *g, int x, int y, int maxw, const char *s, const uint8_t *fg,
                 const uint8_t *bg, int attr)
{
	int used = 0, n;
	uint32_t cp;
	if (!s || y < 0 || y >= g->h)
		return 0;
	if (x + maxw > g->w)
		maxw = g->w - x;
	while ((n = gb_utf8_decode(s, &cp)) > 0) {
		s += n;
		int w = 1;
		if (cp == GB_UTF8_BAD || cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0))
			cp = '?';
		else if ((w = gb_cp_width(cp)) == 0)
			continue; /* a cell holds one code point: marks cannot ride along */
		if (used + w > maxw)
			break;
		if (x + used >= 0) {
			gb_cells_set_cell(g, x + used, y, cp, fg, bg, attr);
			if (w == 2)
				gb_cells_set_cell(g, x + used + 1, y, GB_CELL_CONT, fg, bg, attr);
		}
		used += w;
	}
	return used;
}

/* ---- the colours a terminal shows ------------------------------------------------------ */

static const uint8_t BLACK[3] = { 0, 0, 0 }, WHITE[3] = { 255, 255, 255 };

/* The colour a terminal of this depth will actually show for rgb. */
static void shown_rgb(int depth, const uint8_t rgb[3], uint8_t out[3])
{
	if (depth == GB_DEPTH_16) {
		memcpy(out, gb_ansi16_rgb[gb_ansi16(rgb)], 3);
	} else if (depth == GB_DEPTH_256) {
		int i = gb_xterm256(rgb);
		if (i >= 232) {
			out[0] = out[1] = out[2] = (uint8_t)(8 + 10 * (i - 232));
		} else {
			i -= 16;
			out[0] = cube_level[i / 36];
			out[1] = cube_level[i / 6 % 6];
			out[2] = cube_level[i % 6];
		}
	} else {
		memcpy(out, rgb, 3);
	}
}

/* Text over a coloured cell: black on light colours, white on dark (L* 55 is about where the
 * two contrasts cross), judged on the colour the terminal will show, not the exact one. */
const uint8_t *gb_cells_ink_for(int depth, const uint8_t bg[3])
{
	uint8_t q[3];
	shown_rgb(depth, bg, q);
	return gb_lightness(q) > 55.0 ? BLACK : WHITE;
}

/* ---- writer --------------------------------------------------------------------------- */

typedef struct sbuf {
	char *p;
	size_t n, cap;
	int oom;
} sbuf;

static int sb_reserve(sbuf *b, size_t more)
{
	if (b->n + more + 1 <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->n + more + 1)
		cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p) {
		b->oom = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

static void sb_mem(sbuf *b, const char *s, size_t n)
{
	if (sb_reserve(b, n))
		return;
	memcpy(b->p + b->n, s, n);
	b->n += n;
}

static void sb_uint(sbuf *b, unsigned v)
{
	char t[12];
	int k = 0;
	do {
		t[k++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (sb_reserve(b, (size_t)k))
		return;
	while (k)
		b->p[b->n++] = t[--k];
}

static void sb_cp(sbuf *b, uint32_t c)
{
	if (sb_reserve(b, 4))
		return;
	char *o = b->p + b->n;
	if (c < 0x80) { o[0] = (char)c; b->n += 1; }
	else if (c < 0x800) { o[0] = (char)(0xC0 | c >> 6); o[1] = (char)(0x80 | (c & 0x3F)); b->n += 2; }
	else if (c < 0x10000) {
		o[0] = (char)(0xE0 | c >> 12); o[1] = (char)(0x80 | (c >> 6 & 0x3F));
		o[2] = (char)(0x80 | (c & 0x3F)); b->n += 3;
	} else {
		o[0] = (char)(0xF0 | c >> 18); o[1] = (char)(0x80 | (c >> 12 & 0x3F));
		o[2] = (char)(0x80 | (c >> 6 & 0x3F)); o[3] = (char)(0x80 | (c & 0x3F)); b->n += 4;
	}
}

/* A colour as the depth encodes it: 0xRRGGBB, a palette index, or -1 for the terminal's own. */
static long colour_key(int depth, const uint8_t rgb[3], int set)
{
	if (!set)
		return -1;
	if (depth == GB_DEPTH_TRUE)
		return (long)rgb[0] << 16 | (long)rgb[1] << 8 | rgb[2];
	if (depth == GB_DEPTH_256)
		return gb_xterm256(rgb);
	return gb_ansi16(rgb);
}

static void sgr_colour(sbuf *b, int depth, long key, int bg)
{
	if (key < 0) {
		sb_mem(b, bg ? "49" : "39", 2);
	} else if (depth == GB_DEPTH_TRUE) {
		sb_mem(b, bg ? "48;2;" : "38;2;", 5);
		sb_uint(b, (unsigned)(key >> 16 & 255));
		sb_mem(b, ";", 1);
		sb_uint(b, (unsigned)(key >> 8 & 255));
		sb_mem(b, ";", 1);
		sb_uint(b, (unsigned)(key & 255));
	} else if (depth == GB_DEPTH_256) {
		sb_mem(b, bg ? "48;5;" : "38;5;", 5);
		sb_uint(b, (unsigned)key);
	} else {
		sb_uint(b, (unsigned)((key < 8 ? (bg ? 40 : 30) : (bg ? 100 : 90)) + key % 8));
	}
}

static int blank(const gb_cell *c)
{
	return c->cp == ' ' && !(c->attr & (GB_ATTR_BG | GB_ATTR_UNDERLINE));
}

int gb_cells_write(const gb_grid *g, int depth, char **out, size_t *len, gb_verr *err)
{
	sbuf b = { 0 };
	const int style = GB_ATTR_BOLD | GB_ATTR_DIM | GB_ATTR_UNDERLINE;
	sb_reserve(&b, (size_t)g->used_h * (size_t)g->w * (depth == GB_DEPTH_PLAIN ? 2 : 12));
	for (int y = 0; y < g->used_h; y++) {
		const gb_cell *row = g->cells + (size_t)y * (size_t)g->w;
		int end = g->w;
		while (end > 0 && (blank(&row[end - 1]) || row[end - 1].cp == GB_CELL_CONT))
			end--;
		int cur_style = 0;
		long cur_fg = -1, cur_bg = -1;
		for (int x = 0; x < end; x++) {
			const gb_cell *c = &row[x];
			uint32_t cp = c->cp;
			if (cp == GB_CELL_CONT) {
				if (x > 0 && gb_cp_width(row[x - 1].cp) == 2)
					continue; /* the terminal already advanced over it */
				cp = ' '; /* its wide character was overwritten: keep the column */
			}
			if (depth != GB_DEPTH_PLAIN) {
				int st = c->attr & style;
				/* a space shows only its background: keeping the old foreground saves bytes */
				long fg = c->cp == ' ' ? cur_fg : colour_key(depth, c->fg, c->attr & GB_ATTR_FG);
				long bgk = colour_key(depth, c->bg, c->attr & GB_ATTR_BG);
				if (st != cur_style || fg != cur_fg || bgk != cur_bg) {
					int sep = 0;
					sb_mem(&b, "\x1b[", 2);
					if (cur_style & ~st) { /* SGR can only turn bold and dim off together */
						sb_mem(&b, "0", 1);
						sep = 1;
						cur_style = 0;
						cur_fg = cur_bg = -1;
					}
					for (int bit = GB_ATTR_BOLD; bit <= GB_ATTR_UNDERLINE; bit <<= 1)
						if ((st & bit) && !(cur_style & bit)) {
							if (sep) sb_mem(&b, ";", 1);
							sb_mem(&b, bit == GB_ATTR_BOLD ? "1" : bit == GB_ATTR_DIM ? "2" : "4", 1);
							sep = 1;
						}
					if (fg != cur_fg) {
						if (sep) sb_mem(&b, ";", 1);
						sgr_colour(&b, depth, fg, 0);
						sep = 1;
					}
					if (bgk != cur_bg) {
						if (sep) sb_mem(&b, ";", 1);
						sgr_colour(&b, depth, bgk, 1);
					}
					sb_mem(&b, "m", 1);
					cur_style = st;
					cur_fg = fg;
					cur_bg = bgk;
				}
			}
			sb_cp(&b, cp);
		}
		if (cur_style || cur_fg >= 0 || cur_bg >= 0)
			sb_mem(&b, "\x1b[0m", 4);
		sb_mem(&b, "\n", 1);
	}
	if (sb_reserve(&b, 0) || b.oom) {
		free(b.p);
		return gb_vfail(err, "out of memory writing a %dx%d character grid", g->w, g->used_h);
	}
	b.p[b.n] = 0;
	*out = b.p;
	if (len)
		*len = b.n;
	return 0;
}
