/* cells_heatmap.c — heatmaps in cells (small multiples of them are in cells_panels.c).
 *
 * Owns the heatmap's plan (label widths, columns per cell, half blocks or not, how the column
 * labels are laid: flat, wrapped in words or one character per line) and the order in which
 * it gives things up when space runs out (axis names, then label lines, colorbar, notice line,
 * caption, subtitle, title), the notice of the rows and columns shown, and the parts a figure
 * may add to its data: index labels ("3 ·the"), a text in each cell (drawn when the cells are
 * wide enough, else the colour alone) and side columns of numbers beside the rows.
 *
 * A heatmap with row labels gives every data row its own line, so every label is whole; only
 * an unlabelled one packs two rows in a line with half blocks (when its rows do not fit). A
 * caller that can scroll (the prompt prints every row; the explorer moves a window) never
 * needs them. */
#include "viz/cells.h"
#include "viz/cells_layout.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define SIDE_MAX 4            /* side columns drawn; more are left out */
#define CLINES_MAX 8          /* lines of column labels at most */

/* Where everything of a heatmap goes: decided once, then drawn. */
typedef struct hplan {
	int half, rpl;             /* half blocks; data rows per line */
	int lw, cw;                /* row-label columns (0: none), columns per data column */
	int iw;                    /* index labels: the index's columns (0: none) */
	int clines;                /* lines of column labels */
	int vert;                  /* column labels one character per line (all of them: a mix of
	                            * flat and vertical labels reads as noise) */
	int title, sub, notice_own, axis, cbar, cap; /* lines given to each (0 or 1) */
	int groups;                /* a line naming the groups of columns ("head 1", col_group) */
	int dlines;                /* lines of data */
	int row0, rows, col0, cols;
	int nside, sw[SIDE_MAX];   /* side columns and their widths */
	int xs, xd;                /* first column of the side columns and of the data, relative to
	                            * the area */
	int ctext;                 /* draw the cells' texts */
} hplan;

/* ---- labels --------------------------------------------------------------------------- */

static int digits(int v)
{
	int n = 1;
	while (v >= 10 || v <= -10) {
		v /= 10;
		n++;
	}
	return n + (v < 0);
}

/* Row i's label as drawn, at most cap columns: its token ("·the"), or with an index "3 ·the"
 * (the index right-aligned in iw columns, so the tokens stand in one column). */
static void row_text(const gb_figure *f, int i, int cap, int iw, char *out, size_t n)
{
	char tok[LBUF];
	if (iw > 0) {
		int k = snprintf(out, n, "%*d", iw, f->row_index0 + i);
		if (f->row_labels && cap > iw + 1) {
			char both[LBUF + 16];
			gb_label_display(f->row_labels[i], cap - iw - 1, tok, sizeof tok);
			gb_label_indexed(0, tok, both, sizeof both); /* the token, quoted as it needs */
			if (strchr(both, '"') && gb_utf8_width(both + 2) > cap - iw - 1) {
				gb_label_display(f->row_labels[i], cap - iw - 3, tok, sizeof tok);
				gb_label_indexed(0, tok, both, sizeof both);
			}
			snprintf(out + k, n - (size_t)k, " %s", both + 2);
		}
	} else if (f->row_labels) {
		gb_label_display(f->row_labels[i], cap, out, n);
	} else {
		snprintf(tok, sizeof tok, "%d", i + 1);
		gb_label_display(tok, cap, out, n);
	}
}

/* Column j's label as drawn, before it is laid into lines: "·the", "65" or "3 ·the". */
static void col_text(const gb_figure *f, int j, char *out, size_t n)
{
	char tok[LBUF - 16];
	int idx = f->col_index0 > 0 ? f->col_index0 + j : 0;
	if (f->col_labels) {
		gb_label_display(f->col_labels[j], 24, tok, sizeof tok);
		if (idx)
			gb_label_indexed(idx, tok, out, n);
		else
			snprintf(out, n, "%s", tok);
	} else
		snprintf(out, n, "%d", idx ? idx : j + 1);
}

/* The pieces a column label may be broken into: after a space (which a line break swallows)
 * or after a '.' ("L1." "resid." "mid"). Returns the number of pieces; each is [start, end)
 * of s, and space[k] says whether a space follows it. */
static int label_pieces(const char *s, int *start, int *end, int *space, int max)
{
	int n = 0, i = 0, len = (int)strlen(s);
	while (i < len && n < max) {
		while (i < len && s[i] == ' ')
			i++;
		if (i >= len)
			break;
		int b = i;
		while (i < len && s[i] != ' ' && s[i] != '.')
			i++;
		if (i < len && s[i] == '.')
			i++;
		start[n] = b;
		end[n] = i;
		space[n] = i < len && s[i] == ' ';
		n++;
	}
	return n;
}

static int span_width(const char *s, int b, int e)
{
	char tmp[LBUF];
	int n = e - b < (int)sizeof tmp - 1 ? e - b : (int)sizeof tmp - 1;
	memcpy(tmp, s + b, (size_t)n);
	tmp[n] = 0;
	return gb_utf8_width(tmp);
}

/* The widest piece of a label (what the cell must hold for it to be wrapped in words). */
static int widest_piece(const char *s)
{
	int st[32], en[32], sp[32], m = 0;
	int n = label_pieces(s, st, en, sp, 32);
	for (int k = 0; k < n; k++) {
		int w = span_width(s, st[k], en[k]);
		m = w > m ? w : m;
	}
	return m;
}

/* Lays label s into lines of at most w columns: its pieces packed into lines when each fits,
 * else one character per line (a vertical label: *vert is set; when it is set on entry, the
 * label is vertical whatever its pieces). Writes at most max lines (each
 * a string in lines[k]); returns how many lines the whole label needs. */
static int label_lines(const char *s, int w, char (*lines)[LBUF], int max, int *vert_out)
{
	int st[32], en[32], sp[32], need = 0, vert = vert_out && *vert_out;
	int n = label_pieces(s, st, en, sp, 32);
	for (int k = 0; k < n; k++)
		vert |= span_width(s, st[k], en[k]) > w;
	if (w < 1)
		vert = 1;
	if (vert_out)
		*vert_out = vert;
	if (vert) {
		uint32_t cp;
		int k;
		for (const char *p = s; (k = gb_utf8_decode(p, &cp)) > 0; p += k) {
			if (cp != GB_UTF8_BAD && gb_cp_width(cp) == 0)
				continue;
			if (need < max) {
				memcpy(lines[need], p, (size_t)k);
				lines[need][k] = 0;
			}
			need++;
		}
		return need;
	}
	int lw = 0;
	for (int k = 0; k < n; k++) {
		int pw = span_width(s, st[k], en[k]);
		int gap = k > 0 && sp[k - 1];
		if (need == 0 || lw + gap + pw > w) {
			if (need < max)
				lines[need][0] = 0;
			need++;
			lw = 0;
			gap = 0;
		}
		if (need <= max) {
			char *l = lines[need - 1];
			size_t at = strlen(l);
			if (at + (size_t)(en[k] - st[k]) + 2 < LBUF) {
				if (gap)
					l[at++] = ' ';
				memcpy(l + at, s + st[k], (size_t)(en[k] - st[k]));
				l[at + (size_t)(en[k] - st[k])] = 0;
			}
		}
		lw += gap + pw;
	}
	return need;
}

/* ---- sizes ---------------------------------------------------------------------------- */

typedef struct hsizes {
	int rlw;                   /* widest row label */
	int iw;                    /* index columns of row labels (0: none) */
	int clw, cpw;              /* widest column label, and its widest piece */
	int numw;                  /* widest number (numbers on) */
	int textw;                 /* widest cell text */
	int nside, sw[SIDE_MAX];   /* side columns' widths (title or numbers) */
} hsizes;

static void side_num(const gb_figure *f, int k, int i, char *buf, size_t cap)
{
	double v = f->side_values[(size_t)k * (size_t)f->rows + (size_t)i];
	if (f->side_decimals > 0)
		gb_cells_fmt_num(v, f->side_decimals, buf, cap);
	else
		gb_cells_fmt_sig(v, f->side_precision > 0 ? f->side_precision : 3, buf, cap);
}

static void measure(const area *a, int parts, hsizes *z)
{
	const gb_figure *f = a->f;
	char buf[LBUF];
	memset(z, 0, sizeof *z);
	if (parts & (P_LABELS | P_RLABELS)) {
		int lcap = clampi(a->w / 4, 3, 16);
		if (f->row_index0 > 0)
			z->iw = digits(f->row_index0 + f->rows - 1);
		for (int i = 0; i < f->rows; i++) {
			row_text(f, i, lcap + z->iw + (z->iw > 0), z->iw, buf, sizeof buf);
			int w = gb_utf8_width(buf);
			z->rlw = w > z->rlw ? w : z->rlw;
		}
	}
	if (parts & P_LABELS)
		for (int j = 0; j < f->cols; j++) {
			col_text(f, j, buf, sizeof buf);
			int w = gb_utf8_width(buf), pw = widest_piece(buf);
			z->clw = w > z->clw ? w : z->clw;
			z->cpw = pw > z->cpw ? pw : z->cpw;
		}
	size_t n = (size_t)f->rows * (size_t)f->cols;
	z->numw = 1;
	if (f->numbers)
		for (size_t i = 0; i < n; i++) {
			int w = gb_cells_fmt_num(f->values[i], f->precision, buf, sizeof buf);
			z->numw = w > z->numw ? w : z->numw;
		}
	if (f->cell_text)
		for (size_t i = 0; i < n; i++) {
			gb_label_display(f->cell_text[i], 12, buf, sizeof buf);
			int w = gb_utf8_width(buf);
			z->textw = w > z->textw ? w : z->textw;
		}
	if ((parts & (P_LABELS | P_RLABELS)) && f->n_side > 0 && f->side_values) {
		z->nside = f->n_side < SIDE_MAX ? f->n_side : SIDE_MAX;
		for (int k = 0; k < z->nside; k++) {
			int m = f->side_titles && f->side_titles[k] ? gb_utf8_width(f->side_titles[k]) : 1;
			m = m > 12 ? 12 : m;
			for (int i = 0; i < f->rows; i++) {
				side_num(f, k, i, buf, sizeof buf);
				int w = gb_utf8_width(buf);
				m = w > m ? w : m;
			}
			z->sw[k] = m;
		}
	}
}

/* ---- plan ----------------------------------------------------------------------------- */

/* The lines the column labels of the columns shown need, at cw columns per cell. */
static int clines_needed(const gb_figure *f, hplan *p)
{
	char buf[LBUF];
	int m = 1, w = p->cw > 1 ? p->cw - 1 : 1;
	p->vert = 0;
	for (int j = 0; j < p->cols; j++) {
		col_text(f, p->col0 + j, buf, sizeof buf);
		p->vert |= widest_piece(buf) > w;
	}
	for (int j = 0; j < p->cols; j++) {
		int v = p->vert;
		col_text(f, p->col0 + j, buf, sizeof buf);
		int n = label_lines(buf, w, NULL, 0, &v);
		m = n > m ? n : m;
	}
	return m;
}

/* Plans a heatmap with or without half blocks; returns 0, or -1 when not even one line of
 * data fits. */
static int plan_heatmap(const area *a, const gb_cells_opts *o, int parts, int half,
                        const hsizes *z, hplan *p)
{
	const gb_figure *f = a->f;
	memset(p, 0, sizeof *p);
	p->half = half;
	p->rpl = half ? 2 : 1;
	if (parts & (P_LABELS | P_RLABELS)) {
		p->lw = z->rlw;
		p->iw = z->iw;
		if (p->lw > a->w / 3)
			p->lw = a->w / 3;
	}
	int x = p->lw ? p->lw + 1 : 0;
	p->xs = x;
	/* side columns, as many as leave room for data */
	for (int k = 0; k < z->nside && x + z->sw[k] + 1 < a->w - 4; k++) {
		p->sw[k] = z->sw[k];
		x += z->sw[k] + 1;
		p->nside = k + 1;
	}
	p->xd = x;
	int avail = a->w - p->xd;
	if (avail < 1)
		return -1;
	if (f->numbers) {
		p->cw = (z->textw > z->numw ? z->textw : z->numw) + 1;
		/* wider, when every column still fits, so short column labels lie flat */
		if ((parts & P_LABELS) && z->clw + 1 > p->cw && z->clw + 1 <= 8 && (z->clw + 1) * f->cols <= avail)
			p->cw = z->clw + 1;
	} else if (o->cell_w > 0)
		p->cw = o->cell_w;
	else {
		/* Two columns per cell make it square in a typical font (one with half blocks);
		 * wider when that lets the column labels lie flat, or stand in whole words, or the
		 * cells' texts be read, if there is room. */
		int want = half ? 1 : 2;
		if ((parts & P_LABELS) && z->clw + 1 <= 8 && z->clw + 1 > want)
			want = z->clw + 1;
		else if ((parts & P_LABELS) && z->cpw + 1 <= 10 && z->cpw + 1 > want)
			want = z->cpw + 1;
		if (f->cell_text && z->textw + 1 > want)
			want = z->textw + 1;
		p->cw = clampi(avail / (f->cols ? f->cols : 1), 1, want);
	}
	if (p->cw > avail)
		p->cw = avail;
	/* texts in the cells when they can be read (cut to no fewer than 4 columns), else colour */
	p->ctext = f->cell_text && !half && p->cw - 1 >= (z->textw < 4 ? z->textw : 4);
	p->cols = clampi(avail / p->cw, 0, f->cols);
	p->col0 = clampi(o->col0, 0, f->cols - p->cols);
	p->title = (parts & P_TITLE) && f->title;
	p->sub = (parts & P_TITLE) && f->subtitle;
	p->axis = (parts & P_LABELS) && (parts & P_AXIS) && (f->row_title || f->col_title);
	p->cbar = (parts & P_COLORBAR) && f->colorbar;
	p->cap = (parts & P_CAPTION) && (f->caption || a->n_bad || a->n_masked);
	p->groups = (parts & P_LABELS) && f->col_group > 0;
	int need = (parts & P_LABELS) ? clines_needed(f, p) : 0;
	if (!need && p->nside && (parts & (P_LABELS | P_RLABELS)))
		need = 1; /* the side columns' titles */
	for (;;) {
		int fixed = p->title + p->sub + p->notice_own + p->axis + p->cbar + p->cap + p->groups;
		/* labels of more than one line take at most a third of what is left, and 8 lines */
		p->clines = need <= 1 ? need : clampi(need, 1, clampi((a->h - fixed) / 3, 1, CLINES_MAX));
		p->dlines = a->h - fixed - p->clines;
		if (p->dlines >= 1)
			break;
		/* Give things up in order of least use to a reader of the data. */
		if (p->axis) p->axis = 0;
		else if (p->groups) p->groups = 0;
		else if (need > 1) need = 1;
		else if (need) need = 0;
		else if (p->cbar) p->cbar = 0;
		else if (p->notice_own) p->notice_own = 0;
		else if (p->cap) p->cap = 0;
		else if (p->sub) p->sub = 0;
		else if (p->title) p->title = 0;
		else return -1;
	}
	p->rows = clampi(p->dlines * p->rpl, 0, f->rows);
	p->row0 = clampi(o->row0, 0, f->rows - p->rows);
	return 0;
}

/* "rows 1–16 of 200, cols 1–38 of 200" when p shows part of the heatmap, else "": the
 * longest form that fits the area, down to "rows 1–16/200 cols 1–38/200". */
static void heatmap_notice(const area *a, const hplan *p, char *buf, size_t cap)
{
	const gb_figure *f = a->f;
	const char *dash = a->plain ? "-" : "\xE2\x80\x93";
	char r[64], c[64];
	buf[0] = 0;
	if (p->rows == f->rows && p->cols == f->cols)
		return;
	gb_cells_range_text(r, sizeof r, a->plain, "rows", p->row0, p->rows, f->rows);
	gb_cells_range_text(c, sizeof c, a->plain, "cols", p->col0, p->cols, f->cols);
	snprintf(buf, cap, "%s, %s%s", r, c, p->half ? " (2 rows per line)" : "");
	if (gb_utf8_width(buf) > a->w)
		snprintf(buf, cap, "%s, %s", r, c);
	if (gb_utf8_width(buf) > a->w)
		snprintf(buf, cap, "rows %d%s%d/%d cols %d%s%d/%d", p->row0 + 1, dash, p->row0 + p->rows,
		         f->rows, p->col0 + 1, dash, p->col0 + p->cols, f->cols);
}

/* ---- drawing -------------------------------------------------------------------------- */

static void draw_axis(area *a, const hplan *p, int y)
{
	const gb_figure *f = a->f;
	gb_grid *g = a->g;
	char buf[LBUF], buf2[LBUF];
	int xd = a->x + p->xd;
	/* The row title over the row labels and the column title over the columns when they fit;
	 * otherwise both in words from the left edge. */
	const char *right = a->plain ? "->" : "\xE2\x86\x92", *down = a->plain ? "v" : "\xE2\x86\x93";
	int rw = f->row_title ? gb_utf8_width(f->row_title) : 0;
	if (rw <= p->lw) {
		if (f->row_title)
			gb_grid_text(g, a->x + p->lw - rw, y, rw, f->row_title, NULL, NULL, GB_ATTR_DIM);
		if (f->col_title) {
			snprintf(buf2, sizeof buf2, "%s %s", f->col_title, right);
			gb_cells_shorten(buf2, a->x + a->w - xd, buf, sizeof buf);
			gb_grid_text(g, xd, y, a->x + a->w - xd, buf, NULL, NULL, GB_ATTR_DIM);
		}
	} else {
		if (a->plain)
			snprintf(buf2, sizeof buf2, "rows: %s%s%s", f->row_title, f->col_title ? ", cols: " : "",
			         f->col_title ? f->col_title : "");
		else
			snprintf(buf2, sizeof buf2, "%s %s%s%s%s", f->row_title, down, f->col_title ? "  " : "",
			         f->col_title ? f->col_title : "", f->col_title ? " " : "");
		if (!a->plain && f->col_title)
			snprintf(buf2 + strlen(buf2), sizeof buf2 - strlen(buf2), "%s", right);
		gb_cells_shorten(buf2, a->w, buf, sizeof buf);
		gb_grid_text(g, a->x, y, a->w, buf, NULL, NULL, GB_ATTR_DIM);
	}
	touch(g, y);
}

/* Column labels in p->clines lines ending just above the data: flat or wrapped in words,
 * right-aligned on their cell (as the numbers below them are), or one character per line in
 * the cell's middle; a label with more lines than there are ends in "…". The side columns'
 * titles stand on the last line. */
static void draw_col_labels(area *a, const hplan *p, int y)
{
	const gb_figure *f = a->f;
	gb_grid *g = a->g;
	char buf[LBUF], lines[CLINES_MAX][LBUF];
	int xd = a->x + p->xd, w = p->cw > 1 ? p->cw - 1 : 1;
	for (int j = 0; j < p->cols && p->clines > 0; j++) {
		int cx = xd + j * p->cw;
		col_text(f, p->col0 + j, buf, sizeof buf);
		int vert = p->vert, n = label_lines(buf, w, lines, CLINES_MAX, &vert);
		if (n > p->clines) { /* cut: the last line shown says there is more */
			char cut[LBUF];
			snprintf(cut, sizeof cut, "%s\xE2\x80\xA6", vert ? "" : lines[p->clines - 1]);
			gb_cells_shorten(cut, w, lines[p->clines - 1], LBUF);
			if (vert || gb_utf8_width(lines[p->clines - 1]) == 0)
				snprintf(lines[p->clines - 1], LBUF, "\xE2\x80\xA6");
			n = p->clines;
		}
		for (int k = 0; k < n; k++) {
			int ly = y + p->clines - n + k, lw = gb_utf8_width(lines[k]);
			if (vert) {
				uint32_t cp;
				gb_utf8_decode(lines[k], &cp);
				int cwid = cp == GB_UTF8_BAD ? 1 : gb_cp_width(cp);
				int lx = cx + (p->cw - 1) / 2;
				if (cwid == 2 && p->cw < 2) /* a wide character would cover its neighbour's label */
					gb_grid_text(g, lx, ly, 1, "?", NULL, NULL, 0);
				else
					gb_grid_text(g, lx, ly, cwid, lines[k], NULL, NULL, 0);
			} else
				gb_grid_text(g, cx + p->cw - lw, ly, lw, lines[k], NULL, NULL, 0);
		}
	}
	/* the side columns' titles, right-aligned over their numbers */
	int sx = a->x + p->xs;
	for (int k = 0; k < p->nside; k++) {
		const char *t = f->side_titles && f->side_titles[k] ? f->side_titles[k] : "";
		gb_cells_shorten(t, p->sw[k], buf, sizeof buf);
		int tw = gb_utf8_width(buf);
		gb_grid_text(g, sx + p->sw[k] - tw, y + p->clines - 1, tw, buf, NULL, NULL, GB_ATTR_DIM);
		sx += p->sw[k] + 1;
	}
	for (int i = 0; i < p->clines; i++)
		touch(g, y + i);
}

/* One cell of one-row-per-line data: its text, its number or its colour (plain: its shade). */
static void draw_cell(area *a, const hplan *p, int cx, int y, int r, int c)
{
	const gb_figure *f = a->f;
	gb_grid *g = a->g;
	double v = f->values[(size_t)r * (size_t)f->cols + (size_t)c];
	const char *text = p->ctext ? f->cell_text[(size_t)r * (size_t)f->cols + (size_t)c] : NULL;
	char s[LBUF];
	int n = 0;
	uint8_t rgb[3];
	if (text && *text) {
		gb_label_display(text, p->cw - 1, s, sizeof s);
		n = gb_utf8_width(s);
	} else if (f->numbers && !((f->mask_zero || f->mask_what[0]) && is_masked(a, v))) /* a hidden weight: grey, no number */
		n = gb_cells_fmt_num(v, f->precision, s, sizeof s);
	if (n > 0) {
		if (a->plain) {
			gb_grid_text(g, cx + p->cw - n, y, n, s, NULL, NULL, 0);
		} else {
			gb_cells_value_rgb(a, v, rgb);
			for (int k = 0; k < p->cw - n; k++)
				gb_cells_set_cell(g, cx + k, y, ' ', NULL, rgb, 0);
			gb_grid_text(g, cx + p->cw - n, y, n, s, gb_cells_ink_for(a->depth, rgb), rgb, 0);
		}
	} else if (a->plain) {
		char ch = gb_cells_ramp_char(a, v);
		for (int k = 0; k < p->cw; k++)
			gb_cells_set_cell(g, cx + k, y, (uint32_t)ch, NULL, NULL, 0);
	} else {
		gb_cells_value_rgb(a, v, rgb);
		for (int k = 0; k < p->cw; k++)
			gb_cells_set_cell(g, cx + k, y, ' ', NULL, rgb, 0);
	}
}

/* The groups of columns (a per-head tensor's heads): "|head 2" where each group starts, as
 * much of it as fits before the next, so the heads side by side can be told apart. */
static void draw_groups(area *a, const hplan *p, int y)
{
	const gb_figure *f = a->f;
	int G = f->col_group, c0 = f->col_index0 > 0 ? f->col_index0 - 1 : 0; /* tensor column of cell 0 */
	for (int j = 0; j < p->cols;) {
		int c = p->col0 + j, g = (c0 + c) / G, end = (g + 1) * G - c0 - p->col0; /* first cell after it */
		if (end > p->cols)
			end = p->cols;
		char buf[32];
		int room = (end - j) * p->cw;
		snprintf(buf, sizeof buf, room >= 8 ? "|head %d" : "|%d", g + 1);
		int w = (int)strlen(buf) < room ? (int)strlen(buf) : room;
		if (w > 0)
			gb_grid_text(a->g, a->x + p->xd + j * p->cw, y, w, buf, NULL, NULL, GB_ATTR_DIM);
		j = end;
	}
}

static void draw_heatmap(area *a, const hplan *p, int parts)
{
	const gb_figure *f = a->f;
	gb_grid *g = a->g;
	char notice[160], buf[LBUF];
	int y = a->y;
	heatmap_notice(a, p, notice, sizeof notice);
	int has_notice = notice[0] && (parts & P_NOTICE);
	if (p->title)
		gb_cells_title_line(a, y++, has_notice && !p->notice_own ? notice : NULL);
	if (p->sub)
		gb_cells_subtitle_line(a, y++);
	if (p->notice_own) {
		gb_cells_shorten(notice, a->w, buf, sizeof buf);
		gb_grid_text(g, a->x, y++, a->w, buf, NULL, NULL, GB_ATTR_DIM);
	}
	int xd = a->x + p->xd;
	if (p->axis)
		draw_axis(a, p, y++);
	if (p->groups)
		draw_groups(a, p, y++);
	if (p->clines) {
		draw_col_labels(a, p, y);
		y += p->clines;
	}
	/* rows */
	for (int line = 0; line < p->dlines && line * p->rpl < p->rows; line++, y++) {
		int r = p->row0 + line * p->rpl, r2 = r + 1 < p->row0 + p->rows ? r + 1 : -1;
		if (p->lw) { /* tokens right-aligned on the data; with an index, left-aligned */
			row_text(f, r, p->lw, p->iw, buf, sizeof buf);
			int w = gb_utf8_width(buf);
			gb_grid_text(g, p->iw ? a->x : a->x + p->lw - w, y, w, buf, NULL, NULL, 0);
		}
		int sx = a->x + p->xs;
		for (int k = 0; k < p->nside; k++) {
			side_num(f, k, r, buf, sizeof buf);
			int w = gb_utf8_width(buf);
			gb_grid_text(g, sx + p->sw[k] - w, y, w, buf, NULL, NULL, 0);
			sx += p->sw[k] + 1;
		}
		const float *row2 = r2 >= 0 ? f->values + (size_t)r2 * (size_t)f->cols : NULL;
		for (int j = 0; j < p->cols; j++) {
			int c = p->col0 + j, cx = xd + j * p->cw;
			if (p->half) {
				uint8_t rgb[3], rgb2[3];
				gb_cells_value_rgb(a, f->values[(size_t)r * (size_t)f->cols + (size_t)c], rgb);
				if (row2)
					gb_cells_value_rgb(a, row2[c], rgb2);
				for (int k = 0; k < p->cw; k++)
					gb_cells_set_cell(g, cx + k, y, 0x2580, rgb, row2 ? rgb2 : NULL, 0); /* ▀ */
			} else
				draw_cell(a, p, cx, y, r, c);
		}
		touch(g, y);
	}
	if (p->cbar)
		gb_cells_colorbar_line(a, p->lw ? xd : a->x, y++, a->x + a->w - (p->lw ? xd : a->x));
	if (p->cap)
		gb_cells_caption_line(a, y);
}

int gb_cells_heatmap_in(area *a, const gb_cells_opts *o, int parts, gb_cells_shown *sh,
                        gb_verr *err)
{
	const gb_figure *f = a->f;
	hplan p;
	hsizes z;
	measure(a, parts, &z);
	/* Half blocks pack two rows in a line: never for labelled rows (each label is whole on
	 * its own line), numbers, texts or side columns. */
	int labelled = (parts & (P_LABELS | P_RLABELS)) && (f->row_labels || f->row_index0 > 0);
	int can_half = !a->plain && !f->numbers && !f->cell_text && !z.nside && !labelled && o->half != 0;
	int half = can_half && o->half == 1;
	if (plan_heatmap(a, o, parts, half, &z, &p))
		return gb_cells_too_small(err, a->w, a->h, 8, 3);
	if (can_half && !half && o->half < 0 && p.rows < f->rows) {
		hplan q;
		if (plan_heatmap(a, o, parts, 1, &z, &q) == 0 && q.rows > p.rows)
			p = q;
	}
	if (p.axis && p.rows < f->rows) { /* rows of data matter more than the axis names */
		hplan q;
		if (plan_heatmap(a, o, parts & ~P_AXIS, p.half, &z, &q) == 0)
			p = q;
	}
	/* A window needs its notice: on the title line when both fit, else on a line of its own. */
	char notice[160];
	heatmap_notice(a, &p, notice, sizeof notice);
	if ((parts & P_NOTICE) && notice[0]) {
		int tw = f->title ? gb_utf8_width(f->title) : 0;
		if (!p.title || tw + 2 + gb_utf8_width(notice) > a->w) {
			hplan q = p;
			q.notice_own = 1;
			int fixed = q.title + q.sub + 1 + q.axis + q.cbar + q.cap;
			if (a->h - fixed - q.clines >= 1) {
				q.dlines = a->h - fixed - q.clines;
				q.rows = clampi(q.dlines * q.rpl, 0, f->rows);
				q.row0 = clampi(o->row0, 0, f->rows - q.rows);
				p = q;
			}
		}
	}
	draw_heatmap(a, &p, parts);
	if (sh) {
		sh->row0 = p.row0;
		sh->rows = p.rows;
		sh->rows_total = f->rows;
		sh->col0 = p.col0;
		sh->cols = p.cols;
		sh->cols_total = f->cols;
		sh->rows_per_line = p.rpl;
		sh->cell_w = p.cw;
		sh->n_bad = a->n_bad;
		sh->n_masked = a->n_masked;
	}
	return 0;
}

int gb_cells_heatmap(gb_grid *g, int x, int y, int w, int h, const gb_figure *f,
                     const gb_cells_opts *o, gb_verr *err)
{
	area a;
	if (gb_cells_check_area(g, x, y, w, h, f, err))
		return -1;
	if (w < 10 || h < 2) /* below this a heatmap is a few coloured cells without meaning */
		return gb_cells_too_small(err, w, h, 10, 2);
	gb_cells_area_init(&a, g, x, y, w, h, f, o);
	if (f->rows == 0 || f->cols == 0) {
		gb_cells_title_line(&a, y, NULL);
		gb_grid_text(g, x, y + (h > 1), w, "(no values)", NULL, NULL, GB_ATTR_DIM);
		touch(g, y + (h > 1));
		memset(&g->shown, 0, sizeof g->shown);
		return 0;
	}
	memset(&g->shown, 0, sizeof g->shown);
	return gb_cells_heatmap_in(&a, o, P_TITLE | P_LABELS | P_AXIS | P_COLORBAR | P_CAPTION | P_NOTICE,
	                           &g->shown, err);
}
