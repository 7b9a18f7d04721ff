/* cells_layout.c — what every figure kind's layout in cells shares (cells_layout.h): numbers
 * and labels as the cells print them, the shade ramp of plain depth, a value's colour, the
 * title, caption and colorbar lines, the area a figure is laid out in, and the dispatch from a
 * figure's kind to its layout.
 *
 * Layout never wraps and never writes past its rectangle: anything that does not fit is cut
 * with "…", or windowed with a notice of what is shown. Every layout function draws the title
 * on its first line and the caption (with the counts of masked cells and of NaN/inf values)
 * on its last. */
#include "viz/cells.h"
#include "viz/cells_layout.h"
#include "viz/colormap.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Plain depth's shades, lightest to darkest ink: value t in [0, 1] -> RAMP[floor(10 t)]. */
static const char RAMP[] = " .:-=+*#%@";
#define RAMP_N 10

/* ---- text helpers --------------------------------------------------------------------- */

/* s cut to at most maxw columns, with "…" marking a cut. */
void gb_cells_shorten(const char *s, int maxw, char *out, size_t cap)
{
	int total = gb_utf8_width(s), w = 0, n;
	size_t k = 0;
	uint32_t cp;
	out[0] = 0;
	if (maxw <= 0 || !s)
		return;
	int room = total <= maxw ? maxw : maxw - 1;
	while ((n = gb_utf8_decode(s, &cp)) > 0) {
		int cw = cp == GB_UTF8_BAD ? 1 : gb_cp_width(cp);
		if (w + cw > room || k + (size_t)n + 4 > cap)
			break;
		memcpy(out + k, s, (size_t)n);
		k += (size_t)n;
		w += cw;
		s += n;
	}
	if (total > maxw && k + 4 <= cap) {
		memcpy(out + k, "\xE2\x80\xA6", 3);
		k += 3;
	}
	out[k] = 0;
}

/* A value as the figure prints it: gb_fig_fmt_num (figure.h), the one formatter every
 * backend shares, so a cell reads the same here as in the PNG. */
int gb_cells_fmt_num(double v, int prec, char *buf, size_t cap)
{
	return gb_fig_fmt_num(v, prec, buf, cap);
}

/* A value with `digits` significant digits (side columns): gb_fig_fmt_sig, as the PNG's. */
int gb_cells_fmt_sig(double v, int digits, char *buf, size_t cap) { return gb_fig_fmt_sig(v, digits, buf, cap); }

/* The two ends of a scale, with enough digits that they differ. */
void gb_cells_fmt_ends(double lo, double hi, int prec, char *a, char *b, size_t cap)
{
	gb_fig_fmt_num(lo, prec, a, cap);
	gb_fig_fmt_num(hi, prec, b, cap);
	for (int p = 3; strcmp(a, b) == 0 && p <= 9; p += 2) {
		gb_fig_fmt_sig(lo, p, a, cap);
		gb_fig_fmt_sig(hi, p, b, cap);
	}
}

/* ---- shared pieces of a layout -------------------------------------------------------- */

static double unit(const area *a, double v)
{
	return gb_fig_unit(a->top ? a->top : a->f, a->lo, a->hi, v); /* a centred scale too */
}

/* The colour of a value: gb_mask_rgb for a masked cell, gb_bad_rgb for NaN/inf. */
void gb_cells_value_rgb(const area *a, double v, uint8_t rgb[3])
{
	if (is_masked(a, v))
		memcpy(rgb, gb_mask_rgb, 3);
	else if (!isfinite(v))
		memcpy(rgb, gb_bad_rgb, 3);
	else /* a grid's panels take the grid's map: the one its colour bar shows */
		gb_cmap_rgb(a->top && a->top->kind == GB_FIG_GRID ? a->top->cmap : a->f->cmap, unit(a, v), rgb);
}

char gb_cells_ramp_char(const area *a, double v)
{
	if (is_masked(a, v))
		return MASK_CHAR;
	if (!isfinite(v))
		return BAD_CHAR;
	double t = unit(a, v);
	int i = t <= 0 ? 0 : (int)floor(t * RAMP_N);
	return RAMP[i >= RAMP_N ? RAMP_N - 1 : i];
}

void gb_cells_title_line(area *a, int y, const char *notice)
{
	char buf[1024];
	int nw = notice ? gb_utf8_width(notice) : 0;
	int tw = a->w;
	if (notice && a->f->title)
		tw = a->w - nw - 2;
	if (a->f->title) {
		gb_cells_shorten(a->f->title, tw, buf, sizeof buf);
		gb_grid_text(a->g, a->x, y, tw, buf, NULL, NULL, GB_ATTR_BOLD);
	}
	if (notice) {
		gb_cells_shorten(notice, a->w, buf, sizeof buf);
		nw = gb_utf8_width(buf);
		gb_grid_text(a->g, a->x + a->w - nw, y, nw, buf, NULL, NULL, GB_ATTR_DIM);
	}
	touch(a->g, y);
}

/* The subtitle (what the figure came from and selects), dim, cut with "…" to the area. */
void gb_cells_subtitle_line(area *a, int y)
{
	char buf[1024];
	if (!a->f->subtitle)
		return;
	gb_cells_shorten(a->f->subtitle, a->w, buf, sizeof buf);
	gb_grid_text(a->g, a->x, y, a->w, buf, NULL, NULL, GB_ATTR_DIM);
	touch(a->g, y);
}

/* The caption, cut to leave room for its notes: "  ██ 10 masked (-inf)" when there are masked
 * cells, "  ██ 3 NaN/inf" when there are bad values (plain: "/ 10 masked (-inf)", "! 3 NaN/inf"). */
void gb_cells_caption_line(area *a, int y)
{
	char note[2][64], buf[1024];
	const uint8_t *swatch[2];
	char sch[2];
	int nn = 0, nw = 0, x = a->x;
	if (a->n_masked) {
		if (a->f->mask_what[0])
			snprintf(note[nn], sizeof note[nn], " %d %s", a->n_masked, a->f->mask_what);
		else
			snprintf(note[nn], sizeof note[nn], " %d masked (%s)", a->n_masked,
			         (a->f->mask_zero || (a->top && a->top->mask_zero)) ? "0" : "-inf");
		swatch[nn] = gb_mask_rgb;
		sch[nn++] = MASK_CHAR;
	}
	if (a->n_bad) {
		snprintf(note[nn], sizeof note[nn], " %d NaN/inf", a->n_bad);
		swatch[nn] = gb_bad_rgb;
		sch[nn++] = BAD_CHAR;
	}
	/* each note takes "  " + its swatch (2 columns, 1 plain) + its text: 4 + text reserved */
	for (int i = 0; i < nn; i++)
		nw += 4 + (int)strlen(note[i]);
	while (nn && nw > a->w) /* drop the last note first */
		nw -= 4 + (int)strlen(note[--nn]);
	int cw = a->w - nw;
	if (a->f->caption) {
		gb_cells_shorten(a->f->caption, cw, buf, sizeof buf);
		x += gb_grid_text(a->g, x, y, cw, buf, NULL, NULL, 0);
	}
	for (int i = 0; i < nn; i++) {
		int tw = (int)strlen(note[i]);
		x += x > a->x ? 2 : 0;
		if (a->plain) {
			char sw[2] = { sch[i], 0 };
			gb_grid_text(a->g, x, y, 1, sw, NULL, NULL, 0);
			x += 1;
		} else {
			gb_grid_text(a->g, x, y, 2, "  ", NULL, swatch[i], 0);
			x += 2;
		}
		x += gb_grid_text(a->g, x, y, tw, note[i], NULL, NULL, 0);
	}
	touch(a->g, y);
}

/* "lo ████████ hi" from x (plain: "lo [ .:-=+*#%@] hi"), at most w columns: the colours (or
 * shades) of values evenly spaced from lo to hi, so a truncated scale (GB_RANGE_CENTERED)
 * shows only the part of the map its data use. */
void gb_cells_colorbar_line(area *a, int x, int y, int w)
{
	char sa[64], sb[64];
	gb_cells_fmt_ends(a->lo, a->hi, a->f->precision, sa, sb, sizeof sa);
	int la = (int)strlen(sa), lb = (int)strlen(sb);
	if (a->plain) {
		char bar[RAMP_N + 3];
		bar[0] = '[';
		for (int i = 0; i < RAMP_N; i++)
			bar[1 + i] = gb_cells_ramp_char(a, a->lo + (a->hi - a->lo) * (i + 0.5) / RAMP_N);
		bar[RAMP_N + 1] = ']';
		bar[RAMP_N + 2] = 0;
		if (la + lb + 2 + RAMP_N + 2 > w)
			return;
		x += gb_grid_text(a->g, x, y, la, sa, NULL, NULL, 0) + 1;
		x += gb_grid_text(a->g, x, y, RAMP_N + 2, bar, NULL, NULL, 0) + 1;
		gb_grid_text(a->g, x, y, lb, sb, NULL, NULL, 0);
	} else {
		int n = w - la - lb - 2;
		if (n > 32)
			n = 32;
		if (n < 4)
			return;
		x += gb_grid_text(a->g, x, y, la, sa, NULL, NULL, 0) + 1;
		for (int i = 0; i < n; i++) {
			uint8_t rgb[3];
			gb_cmap_rgb(a->f->cmap, unit(a, a->lo + (a->hi - a->lo) * i / (n - 1)), rgb);
			gb_cells_set_cell(a->g, x + i, y, ' ', NULL, rgb, 0);
		}
		gb_grid_text(a->g, x + n + 1, y, lb, sb, NULL, NULL, 0);
	}
	touch(a->g, y);
}

void gb_cells_range_text(char *buf, size_t cap, int plain, const char *what, int first, int n,
                         int total)
{
	snprintf(buf, cap, "%s %d%s%d of %d", what, first + 1, plain ? "-" : "\xE2\x80\x93",
	         first + n, total);
}

int gb_cells_too_small(gb_verr *err, int w, int h, int need_w, int need_h)
{
	return gb_vfail(err, "a %dx%d area is too small for this figure (it needs at least %dx%d "
	                "columns x lines): enlarge the terminal", w, h, need_w, need_h);
}

int gb_cells_check_area(gb_grid *g, int x, int y, int w, int h, const gb_figure *f, gb_verr *err)
{
	if (!g || !g->cells || !f)
		return gb_vfail(err, "no grid or no figure to draw");
	if (x < 0 || y < 0 || w < 1 || h < 1 || x + w > g->w || y + h > g->h)
		return gb_vfail(err, "the area %dx%d at %d,%d is outside the %dx%d grid", w, h, x, y,
		                g->w, g->h);
	if ((size_t)f->rows * (size_t)f->cols > 0 && !f->values)
		return gb_vfail(err, "the figure has a %dx%d shape but no values", f->rows, f->cols);
	return 0;
}

void gb_cells_area_init(area *a, gb_grid *g, int x, int y, int w, int h, const gb_figure *f,
                        const gb_cells_opts *o)
{
	float lo, hi;
	a->g = g;
	a->x = x;
	a->y = y;
	a->w = w;
	a->h = h;
	a->f = f;
	a->top = f;
	a->plain = o->depth == GB_DEPTH_PLAIN;
	a->depth = o->depth;
	gb_fig_range(f, &lo, &hi, &a->n_bad);
	{
		gb_fig_counts k;
		gb_fig_count(f, &k);
		a->n_masked = k.masked;
	}
	a->lo = lo;
	a->hi = hi;
}

/* ---- dispatch ------------------------------------------------------------------------- */

void gb_cells_opts_default(gb_cells_opts *o, int depth)
{
	memset(o, 0, sizeof *o);
	o->depth = depth;
	o->half = -1;
}

int gb_cells_render(gb_grid *g, int x, int y, int w, int h, const gb_figure *f,
                    const gb_cells_opts *o, gb_verr *err)
{
	gb_cells_opts def;
	if (!o) {
		gb_cells_opts_default(&def, GB_DEPTH_PLAIN);
		o = &def;
	}
	if (!f)
		return gb_vfail(err, "no figure to draw");
	switch (f->kind) {
	case GB_FIG_HEATMAP: return gb_cells_heatmap(g, x, y, w, h, f, o, err);
	case GB_FIG_BARS: return gb_cells_bars(g, x, y, w, h, f, o, err);
	case GB_FIG_LINES: return gb_cells_lines(g, x, y, w, h, f, o, err);
	case GB_FIG_STRIP: return gb_cells_strip(g, x, y, w, h, f, o, err);
	case GB_FIG_GRID: return gb_cells_panels(g, x, y, w, h, f, o, err);
	case GB_FIG_ATTNLINES: return gb_cells_attnlines(g, x, y, w, h, f, o, err);
	case GB_FIG_DIAGRAM: return gb_cells_diagram(g, x, y, w, h, f, o, err);
	case GB_FIG_STRIPS:
	case GB_FIG_DECODE:
	case GB_FIG_TREE: return gb_cells_steps(g, x, y, w, h, f, o, err);
	}
	return gb_vfail(err, "unknown figure kind %d", f->kind);
}
