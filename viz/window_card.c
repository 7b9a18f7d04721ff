/* window_card.c — what the projector window draws besides a figure, and where its figure's
 * parts are, all without SDL (window.c puts the results on screen; tests call them directly):
 * the status line under the figure, the text card shown after a command that has no figure,
 * and the hit test that turns a pixel into a heatmap cell, a grid panel, a bar or a token of
 * the attention lines, from the rectangles the layout recorded in gb_raster_info. */
#include "viz/window.h"
#include "viz/font.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STATUS_PX 18          /* the status line's text at scale 1 */
#define CARD_TITLE_PX 30
#define CARD_TEXT_PX 34   /* a few short lines: as large as a slide's body text */
#define CARD_MIN_PX 14

static const uint8_t INK[3] = { 0x22, 0x22, 0x22 }, INK2[3] = { 0x66, 0x66, 0x66 };
static const uint8_t BAND[3] = { 0xF0, 0xF0, 0xF0 }, RULE[3] = { 0xC8, 0xC8, 0xC8 };

int gb_win_status_height(double scale)
{
	int px = (int)lround(STATUS_PX * scale);
	px = px < 12 ? 12 : px;
	return (int)ceil(1.75 * px);
}

/* s cut (by whole code points) so its width at px is at most w, with "…" when cut. */
static void fit_text(gb_font *f, int px, const char *s, double w, char *out, size_t cap)
{
	size_t n = strlen(s);
	snprintf(out, cap, "%s", s);
	if (gb_font_width(f, px, out) <= w)
		return;
	while (n > 0) {
		do
			n--;
		while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80);
		if (n + 4 > cap)
			continue;
		memcpy(out, s, n);
		memcpy(out + n, "\xE2\x80\xA6", 4);
		if (gb_font_width(f, px, out) <= w)
			return;
	}
	snprintf(out, cap, "\xE2\x80\xA6");
}

int gb_win_draw_status(gb_canvas *c, int y, int h, const char *text, double scale, gb_verr *err)
{
	gb_font *f = gb_font_face(GB_FACE_SANS, err);
	int px = (int)lround(STATUS_PX * scale), pad = (int)lround(12 * scale);
	char buf[1024];
	if (!f)
		return -1;
	px = px < 12 ? 12 : px;
	gb_canvas_fill(c, 0, y, c->w, h, BAND);
	gb_canvas_fill(c, 0, y, c->w, scale >= 1.5 ? 2 : 1, RULE);
	if (!text || !*text)
		return 0;
	while (px > 10 && gb_font_width(f, px, text) > c->w - 2 * pad)
		px--;
	fit_text(f, px, text, c->w - 2 * pad, buf, sizeof buf);
	gb_font_draw(f, c, buf, pad, y + h / 2.0 + 0.35 * px, px, 0, INK);
	return 0;
}

/* The printable form of one line of a command's output: escape sequences (colours) dropped,
 * tabs to the next multiple of 8, other control bytes left out. */
static void clean_line(const char *s, size_t n, char *out, size_t cap)
{
	size_t k = 0, col = 0;
	for (size_t i = 0; i < n && k + 8 < cap; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == 0x1B) { /* CSI ... final byte, OSC ... BEL/ST, or a two-byte escape */
			if (i + 1 < n && s[i + 1] == '[') {
				for (i += 2; i < n && !((unsigned char)s[i] >= 0x40 && (unsigned char)s[i] <= 0x7E); i++)
					;
			} else if (i + 1 < n && s[i + 1] == ']') {
				for (i += 2; i < n && s[i] != 7 && !(s[i] == 0x1B && i + 1 < n && s[i + 1] == '\\'); i++)
					;
				if (i < n && s[i] == 0x1B)
					i++;
			} else
				i++;
			continue;
		}
		if (ch == '\t') {
			do
				out[k++] = ' ';
			while (++col % 8 && k + 8 < cap);
			continue;
		}
		if (ch < 0x20 || ch == 0x7F)
			continue;
		out[k++] = (char)ch;
		if ((ch & 0xC0) != 0x80)
			col++;
	}
	out[k] = 0;
}

int gb_win_draw_card(gb_canvas *c, const char *title, const char *text, double scale, gb_verr *err)
{
	gb_font *bold = gb_font_face(GB_FACE_BOLD, err), *mono = bold ? gb_font_face(GB_FACE_MONO, err) : NULL;
	gb_font *sans = mono ? gb_font_face(GB_FACE_SANS, err) : NULL;
	double m = 40 * scale, y, avail = c->w - 2 * m, widest = 0;
	int tpx = (int)lround(CARD_TITLE_PX * scale), px = (int)lround(CARD_TEXT_PX * scale);
	int minpx = (int)lround(CARD_MIN_PX * scale), spx = (int)lround(18 * scale), n = 0, fit, k;
	char line[1024], cut[1024];
	const char *p;
	static const uint8_t WHITE[3] = { 0xFF, 0xFF, 0xFF };
	if (!sans)
		return -1;
	gb_canvas_fill(c, 0, 0, c->w, c->h, WHITE);
	y = m;
	if (title && *title) {
		while (tpx > 12 && gb_font_width(bold, tpx, title) > avail)
			tpx--;
		fit_text(bold, tpx, title, avail, cut, sizeof cut);
		gb_font_draw(bold, c, cut, m, y + 0.93 * tpx, tpx, 0, INK);
		y += 1.3 * tpx + 8 * scale;
	}
	/* the lines of text from the first that is not blank to the last that is not: count them
	 * and find the widest */
	{
		int i = 0, first = -1;
		for (p = text ? text : ""; *p; i++) {
			const char *e = strchr(p, '\n');
			size_t len = e ? (size_t)(e - p) : strlen(p);
			clean_line(p, len, line, sizeof line);
			if (line[strspn(line, " ")]) {
				widest = fmax(widest, gb_font_width(mono, 100, line) / 100);
				first = first < 0 ? i : first;
				n = i + 1 - first;
			}
			p += len + (e ? 1 : 0);
		}
		if (first > 0) /* skip the leading blank lines */
			for (p = text; first > 0; first--)
				p = strchr(p, '\n') + 1;
		else
			p = text;
	}
	if (!n) {
		const char *none = "no figure for this command";
		int npx = (int)lround(34 * scale);
		gb_canvas_fill(c, (int)m, (int)y, (int)avail, scale >= 1.5 ? 2 : 1, RULE);
		while (npx > 12 && gb_font_width(sans, npx, none) > avail)
			npx--;
		gb_font_draw(sans, c, none, c->w / 2.0 - gb_font_width(sans, npx, none) / 2, c->h / 2.0, npx, 0, INK2);
		{
			const char *keys = "the arrows or Tab in this window show a view of the current text";
			while (spx > 10 && gb_font_width(sans, spx, keys) > avail)
				spx--;
			gb_font_draw(sans, c, keys, c->w / 2.0 - gb_font_width(sans, spx, keys) / 2, c->h / 2.0 + 1.6 * npx,
			             spx, 0, INK2);
		}
		return 0;
	}
	{
		const char *what = "no figure for this command; what it printed:";
		gb_font_draw(sans, c, what, m, y + 0.93 * spx, spx, 0, INK2);
		y += 1.3 * spx + 4 * scale;
		gb_canvas_fill(c, (int)m, (int)y, (int)avail, scale >= 1.5 ? 2 : 1, RULE);
		y += 12 * scale;
	}
	/* the text as large as fits its widest line and all its lines, never below the smallest
	 * readable size (then long lines are cut, and the lines that do not fit are counted) */
	if (widest > 0 && widest * px > avail)
		px = (int)floor(avail / widest);
	if (n * 1.3 * px > c->h - m / 2 - y)
		px = (int)floor((c->h - m / 2 - y) / (1.3 * n));
	px = px < minpx ? minpx : px;
	fit = (int)floor((c->h - m / 2 - y) / (1.3 * px));
	fit = fit < 1 ? 1 : fit;
	for (k = 0; *p && k < fit && k < n;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		int last = k == fit - 1 && n > fit;
		if (last)
			snprintf(line, sizeof line, "\xE2\x80\xA6 %d more line%s in the terminal", n - k, n - k == 1 ? "" : "s");
		else
			clean_line(p, len, line, sizeof line);
		p += len + (e ? 1 : 0);
		fit_text(mono, px, line, avail, cut, sizeof cut);
		gb_font_draw(last ? sans : mono, c, cut, m, y + (k + 0.8) * 1.3 * px, px, 0, last ? INK2 : INK);
		k++;
	}
	return 0;
}

static int inside(const gb_rect *r, int x, int y)
{
	return r->w > 0 && r->h > 0 && x >= r->x && x < r->x + r->w && y >= r->y && y < r->y + r->h;
}

/* The row (or column) of n equal bands of [a, a + len) that v falls in. */
static int band(int v, int a, int len, int n)
{
	long i = len > 0 ? (long)(v - a) * n / len : 0;
	return i < 0 ? 0 : i >= n ? n - 1 : (int)i;
}

int gb_win_hit(const gb_figure *f, const gb_raster_info *info, int x, int y, gb_hit *hit,
               gb_rect outline[2])
{
	gb_rect none = { 0, 0, 0, 0 };
	*hit = (gb_hit){ GB_HIT_NONE, -1, -1, -1 };
	if (outline)
		outline[0] = outline[1] = none;
	if (!f || !info)
		return GB_HIT_NONE;
	if (f->kind == GB_FIG_HEATMAP && f->rows > 0 && f->cols > 0 && inside(&info->plot, x, y)) {
		const gb_rect *p = &info->plot;
		hit->what = GB_HIT_CELL;
		hit->row = band(y, p->y, p->h, f->rows);
		hit->col = band(x, p->x, p->w, f->cols);
		if (outline)
			outline[0] = (gb_rect){ p->x + (int)((long)hit->col * p->w / f->cols), p->y + (int)((long)hit->row * p->h / f->rows),
			                        (int)((long)(hit->col + 1) * p->w / f->cols - (long)hit->col * p->w / f->cols),
			                        (int)((long)(hit->row + 1) * p->h / f->rows - (long)hit->row * p->h / f->rows) };
	} else if (f->kind == GB_FIG_GRID && f->n_panels > 0 && info->plot.w > 0) {
		const gb_figure *p0 = f->panels[0];
		for (int i = 0; i < f->n_panels; i++) {
			const gb_figure *m = f->panels[i];
			int px, py;
			gb_raster_panel_xy(info, i, &px, &py);
			int pw = p0->cols > 0 ? (int)((long)info->plot.w * m->cols / p0->cols) : info->plot.w;
			int ph = p0->rows > 0 ? (int)((long)info->plot.h * m->rows / p0->rows) : info->plot.h;
			/* the panel's slot: its cells and its title above them */
			gb_rect slot = { px, py - (info->dy - info->plot.h), pw, info->dy - info->plot.h + ph };
			gb_rect cells = { px, py, pw, ph };
			if (!inside(&slot, x, y))
				continue;
			hit->what = GB_HIT_CELL;
			hit->panel = i;
			if (inside(&cells, x, y) && m->rows > 0 && m->cols > 0) {
				hit->row = band(y, py, ph, m->rows);
				hit->col = band(x, px, pw, m->cols);
				if (outline)
					outline[0] = (gb_rect){ px + (int)((long)hit->col * pw / m->cols), py + (int)((long)hit->row * ph / m->rows),
					                        (int)((long)(hit->col + 1) * pw / m->cols - (long)hit->col * pw / m->cols),
					                        (int)((long)(hit->row + 1) * ph / m->rows - (long)hit->row * ph / m->rows) };
			}
			if (outline)
				outline[1] = cells;
			break;
		}
	} else if (f->kind == GB_FIG_BARS && f->rows * f->cols > 0 && info->plot.h > 0) {
		const gb_rect *p = &info->plot;
		if (y >= p->y && y < p->y + p->h && x < p->x + p->w) {
			hit->what = GB_HIT_BAR;
			hit->row = band(y, p->y, p->h, f->rows * f->cols);
		}
	} else if (f->kind == GB_FIG_ATTNLINES && f->rows > 0 && f->cols > 0) {
		if (inside(&info->lines_q, x, y)) {
			hit->what = GB_HIT_QUERY;
			hit->row = band(y, info->lines_q.y, info->lines_q.h, f->rows);
		} else if (inside(&info->lines_k, x, y)) {
			hit->what = GB_HIT_KEY;
			hit->col = band(y, info->lines_k.y, info->lines_k.h, f->cols);
		}
	}
	return hit->what;
}
