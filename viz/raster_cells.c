/* raster_cells.c — what a heatmap draws inside and beside its cells: each cell in its value's
 * colour; in it, when the figure asks and the cell is big enough for TEXT_MIN, its number or
 * its short text (the logit lens's top token), in black or white by the cell's lightness (the
 * numbers a figure asks for that its cells are too small to print are counted as cut, so a
 * slide takes the layout that prints them where it has one); and
 * the side columns right of the rows (layer norm's mean and variance), plain numbers under a
 * title, not on the colour scale. A cell text too long for its cell at TEXT_MIN goes on two
 * lines, broken at a mark ("<|endoftext" / "|>", never inside a word), where the cell is tall
 * enough, else it is shortened with "…" and counted; texts that cannot be drawn at all are
 * counted too. */
#include "viz/raster.h"
#include "viz/raster_layout.h"
#include "viz/colormap.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int has_text(const gb_figure *m, size_t i)
{
	return m->cell_text && m->cell_text[i] && m->cell_text[i][0];
}

/* Whether any cell prints its number: the figure's numbers, or a cell text left empty. */
int gb_cells_want_numbers(const gb_figure *const *panels, int n, int numbers)
{
	for (int p = 0; p < n; p++) {
		const gb_figure *m = panels[p];
		if (!m->cell_text) {
			if (numbers)
				return 1;
			continue;
		}
		for (size_t i = 0; i < (size_t)m->rows * m->cols; i++)
			if (!has_text(m, i))
				return 1;
	}
	return 0;
}

/* How many cells of the panels would print their number (what gb_cells_want_numbers asks
 * about): every cell of a figure with numbers and no texts, the cells a figure with texts left
 * empty, but a hidden weight (a masked cell of a figure that greys them) in neither. */
int gb_cells_numbers_n(const gb_figure *const *panels, int n, int numbers)
{
	int k = 0;
	for (int p = 0; p < n; p++) {
		const gb_figure *m = panels[p];
		if (!m->cell_text && !numbers)
			continue;
		for (size_t i = 0; i < (size_t)m->rows * m->cols; i++)
			k += !has_text(m, i) && !((m->mask_zero || m->mask_what[0]) && gb_fig_is_masked(m, m, m->values[i]));
	}
	return k;
}

static int number_chars(const gb_figure *m, int precision)
{
	int n = 1;
	char buf[48];
	for (size_t i = 0; i < (size_t)m->rows * m->cols; i++) {
		int k;
		if (has_text(m, i))
			continue;
		gb_format_value(m->values[i], precision, buf, sizeof buf);
		k = (int)strlen(buf);
		n = k > n ? k : n;
	}
	return n;
}

/* Whether a cell text d fits a cell (w x h) at px: on one line, or, in a cell tall enough for
 * two, broken once where the first line is as long as it can be (a lens's "<|endoftext|>").
 * The lines go to a and b (b empty for one line). */
static int fit_cell_text(lay *L, int px, const char *d, double w, double h, int mode, char *a, char *b, size_t cap)
{
	size_t n = strlen(d), k;
	snprintf(a, cap, "%s", d);
	b[0] = 0;
	if (tw(L, GB_FACE_SANS, px, d) <= w)
		return 1;
	if (mode == CELL_ONE_LINE || h < 2.3 * px)
		return 0;
	for (k = n; k > 0; k--) {
		if (((unsigned char)d[k] & 0xC0) == 0x80)
			continue; /* not between code points */
		snprintf(a, cap, "%.*s", (int)k, d);
		if (tw(L, GB_FACE_SANS, px, a) <= w)
			break;
	}
	if (k == 0)
		return 0;
	/* not inside a word unless nothing else fits: between a letter and a mark ("<|endoftext"
	 * / "|>" rather than "·kitche" / "n") */
	size_t at = 0;
	for (size_t j = k; j > 0 && !at; j--) {
		unsigned char p = (unsigned char)d[j - 1], c = (unsigned char)d[j];
		if ((c & 0xC0) == 0x80 || (isalnum(p) && isalnum(c)) || (p >= 0x80 && isalnum(c)))
			continue;
		if (tw(L, GB_FACE_SANS, px, d + j) <= w)
			at = j;
	}
	if (!at && mode == CELL_AT_MARKS)
		return 0;
	if (at) {
		k = at;
		snprintf(a, cap, "%.*s", (int)k, d);
	}
	snprintf(b, cap, "%s", d + k);
	return tw(L, GB_FACE_SANS, px, b) <= w;
}

/* Numbers as large as fit (monospace advance is 0.602 em), none below TEXT_MIN. */
int gb_cells_numbers_px(lay *L, const gb_figure *const *panels, int n, double cw, double ch, int precision)
{
	int chars = 1, px;
	for (int i = 0; i < n; i++) {
		int k = number_chars(panels[i], precision);
		chars = k > chars ? k : chars;
	}
	/* a number takes at most 70% of its cell's width, so neighbours stand apart ("6.6 7.1",
	 * not "6.67.1" read from the back of a hall); only when that would be too small for the
	 * smallest size does it take up to 88%, at that smallest size */
	px = (int)floor(fmin(ch * 0.55, cw * 0.70 / (chars * 0.602)));
	if (px < spx(L, NUMBER_MIN) && ch * 0.55 >= spx(L, NUMBER_MIN) && cw * 0.88 >= chars * 0.602 * spx(L, NUMBER_MIN))
		px = spx(L, NUMBER_MIN); /* the smallest size then, not the largest that fills the cell
		                          * edge to edge ("6.66.76.8" in the handout) */
	px = px > spx(L, NUMBER_MAX) ? spx(L, NUMBER_MAX) : px;
	return px < spx(L, NUMBER_MIN) ? 0 : px;
}

/* The size of the cells' texts: the largest (up to about half the cell's height) at which the
 * widest fits its cell; TEXT_MIN when none does (those too wide are then shortened); 0 when
 * the cells are too low for TEXT_MIN, and then every text is counted as cut. */
int gb_cells_text_px(lay *L, const gb_figure *const *panels, int n, double cw, double ch)
{
	int lo = spx(L, NUMBER_MIN), top = (int)floor(fmin(ch * 0.5, 26 * L->s)), any = 0;
	char d[LABEL_BUF];
	if (top < lo && ch >= 1.1 * lo)
		top = lo;
	for (int p = 0; p < n; p++)
		for (size_t i = 0; panels[p]->cell_text && i < (size_t)panels[p]->rows * panels[p]->cols; i++)
			any += has_text(panels[p], i);
	if (!any)
		return 0;
	if (top < lo) {
		L->cut += any;
		return 0;
	}
	/* on one line where any size allows it, broken over two at a mark only where none does
	 * ("<|endoftext" / "|>"); a word is never split ("·kitche" / "n" reads as two words): one
	 * too long for its cell even so is shortened with "…" (and counted) */
	for (int mode = CELL_ONE_LINE; mode <= CELL_AT_MARKS; mode++)
		for (int px = top; px >= lo; px--) {
			int fits = 1;
			for (int p = 0; p < n && fits; p++) {
				const gb_figure *m = panels[p];
				for (size_t i = 0; m->cell_text && i < (size_t)m->rows * m->cols && fits; i++)
					if (has_text(m, i)) {
						char a[LABEL_BUF], b[LABEL_BUF];
						gb_label_display(m->cell_text[i], LABEL_COLS, d, sizeof d);
						fits = fit_cell_text(L, px, d, cw * 0.92 - 2 * L->s, ch, mode, a, b, sizeof a);
					}
			}
			if (fits) {
				L->cell_break = mode;
				return px;
			}
		}
	L->cell_break = CELL_AT_MARKS;
	return lo;
}

/* The cells of one matrix at (x, y) size (pw, ph): colours, then numbers at npx and texts at
 * tpx (0: none). */
void gb_cells_draw(lay *L, const gb_figure *m, int x, int y, int pw, int ph, int npx, int tpx, int precision)
{
	double cw = (double)pw / m->cols, ch = (double)ph / m->rows;
	group(L, "cells", 1);
	for (int r = 0; r < m->rows; r++) {
		int ya = y + (int)((long)r * ph / m->rows), yb = y + (int)((long)(r + 1) * ph / m->rows);
		for (int c = 0; c < m->cols; c++) {
			int xa = x + (int)((long)c * pw / m->cols), xb = x + (int)((long)(c + 1) * pw / m->cols);
			uint8_t rgb[3];
			gb_lay_cell_colour(L, m, m->values[(size_t)r * m->cols + c], rgb);
			rect(L, xa, ya, xb - xa, yb - ya, rgb);
		}
	}
	group(L, "cells", 0);
	if (!npx && !tpx)
		return;
	group(L, "numbers", 1);
	for (int r = 0; r < m->rows; r++) {
		double yc = y + ((double)r + 0.5) * ph / m->rows;
		for (int c = 0; c < m->cols; c++) {
			size_t i = (size_t)r * m->cols + c;
			float v = m->values[i];
			double xc = x + ((double)c + 0.5) * cw;
			uint8_t rgb[3];
			char buf[LABEL_BUF], cut[LABEL_BUF];
			gb_lay_cell_colour(L, m, v, rgb);
			/* L* 55 is where black and white text are about equally legible */
			const uint8_t *ink = gb_lightness(rgb) > 55 ? BLACK : WHITE;
			if (has_text(m, i)) {
				if (!tpx)
					continue;
				char a[LABEL_BUF], b[LABEL_BUF];
				double w = cw * 0.92 - 2 * L->s;
				gb_label_display(m->cell_text[i], LABEL_COLS, buf, sizeof buf);
				if (fit_cell_text(L, tpx, buf, w, ch, L->cell_break, a, b, sizeof a) && b[0]) {
					text(L, GB_FACE_SANS, tpx, xc, mid_baseline(yc - 0.55 * tpx, tpx), 0, GB_ANCHOR_MIDDLE, a, ink);
					text(L, GB_FACE_SANS, tpx, xc, mid_baseline(yc + 0.55 * tpx, tpx), 0, GB_ANCHOR_MIDDLE, b, ink);
					continue;
				}
				L->cut += gb_lay_shorten(L, GB_FACE_SANS, tpx, buf, w, cut, sizeof cut);
				text(L, GB_FACE_SANS, tpx, xc, mid_baseline(yc, tpx), 0, GB_ANCHOR_MIDDLE, cut, ink);
			} else if (npx && !((m->mask_zero || m->mask_what[0]) && gb_fig_is_masked(m, m, v))) { /* a hidden weight: grey, no number */
				gb_format_value(v, precision, buf, sizeof buf);
				text(L, GB_FACE_MONO, npx, xc, mid_baseline(yc, npx) - 0.02 * npx, 0, GB_ANCHOR_MIDDLE, buf, ink);
			}
		}
	}
	group(L, "numbers", 0);
}

/* ---- side columns --------------------------------------------------------------------------- */

static void side_value(const gb_figure *f, int k, int r, char *out, int cap)
{
	float v = f->side_values[(size_t)k * f->rows + r];
	if (f->side_decimals > 0)
		gb_fig_fmt_num(v, f->side_decimals, out, (size_t)cap);
	else
		gb_fig_fmt_sig(v, f->side_precision > 0 ? f->side_precision : 3, out, (size_t)cap);
}

/* The room the side columns take right of the cells (0 without them), each column's width in
 * colw: its widest number or its title, at the row labels' size px. */
double gb_sides_width(lay *L, const gb_figure *f, int px, double colw[SIDE_MAX])
{
	double total = 0;
	int n = f->n_side < SIDE_MAX ? f->n_side : SIDE_MAX;
	char buf[64];
	if (n <= 0 || !f->side_values)
		return 0;
	for (int k = 0; k < n; k++) {
		double w = f->side_titles && f->side_titles[k] ? tw(L, GB_FACE_SANS, px, f->side_titles[k]) : 0;
		for (int r = 0; r < f->rows; r++) {
			side_value(f, k, r, buf, sizeof buf);
			w = fmax(w, tw(L, GB_FACE_MONO, px, buf));
		}
		colw[k] = w + 20 * L->s;
		total += colw[k];
	}
	return total + 6 * L->s;
}

/* The side columns at x (right of the cells), rows from y at pitch, with the row labels' size
 * and thinning (a row without its label has no side numbers either); titles above the cells. */
void gb_sides_draw(lay *L, const gb_figure *f, const gb_axis *rows, double x, double y, double pitch,
                   const double colw[SIDE_MAX])
{
	int n = f->n_side < SIDE_MAX ? f->n_side : SIDE_MAX, px = rows->px;
	double cx = x + 6 * L->s;
	char buf[64];
	if (n <= 0 || !f->side_values)
		return;
	group(L, "side-columns", 1);
	for (int k = 0; k < n; k++) {
		double right = cx + colw[k] - 4 * L->s;
		if (f->side_titles && f->side_titles[k])
			text(L, GB_FACE_SANS, px, right, y - 0.45 * px, 0, GB_ANCHOR_END, f->side_titles[k], INK2);
		for (int r = 0; r < f->rows; r++) {
			if (!gb_axis_shows(rows, r))
				continue;
			side_value(f, k, r, buf, sizeof buf);
			text(L, GB_FACE_MONO, px, right, mid_baseline(y + (r + 0.5) * pitch, px), 0, GB_ANCHOR_END, buf, INK);
		}
		cx += colw[k];
	}
	group(L, "side-columns", 0);
}
