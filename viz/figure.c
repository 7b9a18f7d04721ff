/* figure.c — building, freeing and measuring a gb_figure, and the label and width rules every
 * backend shares (so a token looks the same in the terminal, a PNG and an SVG).
 *
 * Owns: the figure's memory (every setter copies; gb_fig_free frees the whole tree, panels
 * included), the value range rule, UTF-8 decoding and terminal column widths, and the text of
 * a number in a figure (gb_fig_fmt_*: every backend prints numbers through these). */
#include "viz/figure.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dup_str(const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s) + 1;
	char *p = malloc(n);
	if (p)
		memcpy(p, s, n);
	return p;
}

/* Replaces *slot with a copy of s (NULL clears). On failure *slot is unchanged. */
static int set_str(char **slot, const char *s)
{
	char *p = NULL;
	if (s && !(p = dup_str(s)))
		return -1;
	free(*slot);
	*slot = p;
	return 0;
}

static void free_strv(char **v, int n)
{
	if (!v)
		return;
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* A copy of labels (n); NULL entries become "" so backends never test each one. */
static char **dup_strv(const char *const *labels, int n)
{
	char **v = calloc(n > 0 ? (size_t)n : 1, sizeof *v);
	if (!v)
		return NULL;
	for (int i = 0; i < n; i++)
		if (!(v[i] = dup_str(labels[i] ? labels[i] : ""))) {
			free_strv(v, i);
			return NULL;
		}
	return v;
}

gb_figure *gb_fig_new(int kind)
{
	gb_figure *f = calloc(1, sizeof *f);
	if (!f)
		return NULL;
	f->kind = kind;
	f->cmap = GB_CMAP_VIRIDIS;
	f->range = GB_RANGE_AUTO;
	f->vmin = 0;
	f->vmax = 1;
	f->colorbar = 1;
	f->precision = 2;
	return f;
}

void gb_fig_free(gb_figure *f)
{
	if (!f)
		return;
	free(f->title);
	free(f->caption);
	free(f->values);
	free_strv(f->row_labels, f->rows);
	free_strv(f->col_labels, f->cols);
	free(f->row_title);
	free(f->col_title);
	for (int i = 0; i < f->n_series; i++) {
		free(f->series[i].label);
		free(f->series[i].y);
	}
	free(f->series);
	free(f->xs);
	free(f->x_title);
	free(f->y_title);
	for (int i = 0; i < f->n_panels; i++)
		gb_fig_free(f->panels[i]);
	free(f->panels);
	free_strv(f->meta_keys, f->n_meta);
	free_strv(f->meta_vals, f->n_meta);
	free(f->subtitle);
	free_strv(f->cell_text, f->cell_text ? f->rows * f->cols : 0);
	free_strv(f->side_titles, f->n_side);
	free(f->side_values);
	for (int i = 0; i < f->n_blocks; i++) {
		free(f->blocks[i].label);
		free(f->blocks[i].detail);
	}
	free(f->blocks);
	free_strv(f->group_titles, f->n_groups);
	free_strv(f->byte_labels, f->byte_labels ? f->cols : 0);
	free(f->marks);
	free(f->ref);
	free(f->ref_label);
	for (int i = 0; i < f->n_nodes; i++)
		free(f->nodes[i].label);
	free(f->nodes);
	free(f);
}

int gb_fig_set_bytes(gb_figure *f, const char *const *bytes)
{
	char **v = NULL;
	if (bytes && !(v = dup_strv(bytes, f->cols)))
		return -1;
	free_strv(f->byte_labels, f->byte_labels ? f->cols : 0);
	f->byte_labels = v;
	return 0;
}

int gb_fig_set_marks(gb_figure *f, const int *marks, const float *ref, const char *ref_label)
{
	int n = f->rows * f->cols;
	int *m = marks && n > 0 ? malloc(sizeof(int) * (size_t)n) : NULL;
	float *r = ref && n > 0 ? malloc(sizeof(float) * (size_t)n) : NULL;
	if ((marks && n > 0 && !m) || (ref && n > 0 && !r) || set_str(&f->ref_label, ref_label)) {
		free(m);
		free(r);
		return -1;
	}
	if (m)
		memcpy(m, marks, sizeof(int) * (size_t)n);
	if (r)
		memcpy(r, ref, sizeof(float) * (size_t)n);
	free(f->marks);
	free(f->ref);
	f->marks = m;
	f->ref = r;
	return 0;
}

int gb_fig_add_cut(gb_figure *f, int after, const char *label)
{
	if (f->n_cuts >= GB_FIG_CUTS)
		return -1;
	f->cut_at[f->n_cuts] = after;
	snprintf(f->cut_label[f->n_cuts], sizeof f->cut_label[0], "%s", label ? label : "");
	f->n_cuts++;
	return 0;
}

int gb_fig_add_node(gb_figure *f, const char *label, int parent, double edge, double score, int state)
{
	if (parent >= f->n_nodes || (parent < 0 && f->n_nodes > 0 && state != GB_NODE_ROOT))
		return -1;
	gb_fig_node *b = realloc(f->nodes, (size_t)(f->n_nodes + 1) * sizeof *b);
	if (!b)
		return -1;
	f->nodes = b;
	gb_fig_node *nd = &b[f->n_nodes];
	if (!(nd->label = dup_str(label ? label : "")))
		return -1;
	nd->parent = parent;
	nd->depth = parent >= 0 ? b[parent].depth + 1 : 0;
	nd->edge = edge;
	nd->score = score;
	nd->state = state;
	return f->n_nodes++;
}

int gb_fig_set_subtitle(gb_figure *f, const char *subtitle) { return set_str(&f->subtitle, subtitle); }

int gb_fig_set_cell_text(gb_figure *f, const char *const *text)
{
	char **v = NULL;
	if (text && !(v = dup_strv(text, f->rows * f->cols)))
		return -1;
	free_strv(f->cell_text, f->cell_text ? f->rows * f->cols : 0);
	f->cell_text = v;
	return 0;
}

int gb_fig_add_side(gb_figure *f, const char *title, const float *v)
{
	if (f->rows <= 0)
		return -1;
	char **t = realloc(f->side_titles, (size_t)(f->n_side + 1) * sizeof *t);
	if (!t)
		return -1;
	f->side_titles = t;
	float *nv = realloc(f->side_values, (size_t)(f->n_side + 1) * (size_t)f->rows * sizeof *nv);
	if (!nv)
		return -1;
	f->side_values = nv;
	if (!(t[f->n_side] = dup_str(title ? title : "")))
		return -1;
	memcpy(nv + (size_t)f->n_side * (size_t)f->rows, v, (size_t)f->rows * sizeof *nv);
	f->n_side++;
	if (!f->side_precision)
		f->side_precision = 3;
	return 0;
}

int gb_fig_add_block(gb_figure *f, const char *label, const char *detail, int group, int highlight)
{
	gb_fig_block *b = realloc(f->blocks, (size_t)(f->n_blocks + 1) * sizeof *b);
	if (!b)
		return -1;
	f->blocks = b;
	gb_fig_block *nb = &b[f->n_blocks];
	memset(nb, 0, sizeof *nb);
	if (!(nb->label = dup_str(label ? label : "")) || (detail && !(nb->detail = dup_str(detail)))) {
		free(nb->label);
		return -1;
	}
	nb->group = group;
	nb->highlight = highlight;
	f->n_blocks++;
	return 0;
}

int gb_fig_set_group_title(gb_figure *f, int group, const char *title)
{
	if (group < 1)
		return -1;
	if (group > f->n_groups) {
		char **g = realloc(f->group_titles, (size_t)group * sizeof *g);
		if (!g)
			return -1;
		for (int i = f->n_groups; i < group; i++)
			g[i] = NULL;
		f->group_titles = g;
		f->n_groups = group;
	}
	return set_str(&f->group_titles[group - 1], title);
}

int gb_fig_set_title(gb_figure *f, const char *title) { return set_str(&f->title, title); }
int gb_fig_set_caption(gb_figure *f, const char *caption) { return set_str(&f->caption, caption); }

int gb_fig_set_values(gb_figure *f, const float *v, int rows, int cols)
{
	if (rows < 0 || cols < 0 || (rows && cols > INT32_MAX / rows))
		return -1;
	size_t n = (size_t)rows * (size_t)cols;
	float *p = NULL;
	if (n) {
		if (!(p = malloc(n * sizeof *p)))
			return -1;
		memcpy(p, v, n * sizeof *p);
	}
	/* Labels sized for other dimensions would be read out of bounds: they go with the shape. */
	if (rows != f->rows) {
		free_strv(f->row_labels, f->rows);
		f->row_labels = NULL;
	}
	if (cols != f->cols) {
		free_strv(f->col_labels, f->cols);
		f->col_labels = NULL;
	}
	if (rows != f->rows || cols != f->cols) {
		free_strv(f->cell_text, f->cell_text ? f->rows * f->cols : 0);
		f->cell_text = NULL;
		free_strv(f->byte_labels, f->byte_labels ? f->cols : 0);
		f->byte_labels = NULL;
		free(f->marks);
		free(f->ref);
		f->marks = NULL;
		f->ref = NULL;
	}
	if (rows != f->rows) {
		free_strv(f->side_titles, f->n_side);
		free(f->side_values);
		f->side_titles = NULL;
		f->side_values = NULL;
		f->n_side = 0;
	}
	free(f->values);
	f->values = p;
	f->rows = rows;
	f->cols = cols;
	return 0;
}

int gb_fig_set_row_labels(gb_figure *f, const char *const *labels)
{
	char **v = NULL;
	if (labels && !(v = dup_strv(labels, f->rows)))
		return -1;
	free_strv(f->row_labels, f->rows);
	f->row_labels = v;
	return 0;
}

int gb_fig_set_col_labels(gb_figure *f, const char *const *labels)
{
	char **v = NULL;
	if (labels && !(v = dup_strv(labels, f->cols)))
		return -1;
	free_strv(f->col_labels, f->cols);
	f->col_labels = v;
	return 0;
}

int gb_fig_set_axes(gb_figure *f, const char *row_title, const char *col_title)
{
	char *r = NULL, *c = NULL;
	if ((row_title && !(r = dup_str(row_title))) || (col_title && !(c = dup_str(col_title)))) {
		free(r);
		return -1;
	}
	free(f->row_title);
	free(f->col_title);
	f->row_title = r;
	f->col_title = c;
	/* LINES name their axes x and y; the same call sets both pairs so a view need not care. */
	if (f->kind == GB_FIG_LINES) {
		if (set_str(&f->y_title, row_title) || set_str(&f->x_title, col_title))
			return -1;
	}
	return 0;
}

int gb_fig_add_series(gb_figure *f, const char *label, const float *y, int n)
{
	if (n < 0)
		return -1;
	gb_series *s = realloc(f->series, (size_t)(f->n_series + 1) * sizeof *s);
	if (!s)
		return -1;
	f->series = s;
	gb_series *e = &s[f->n_series];
	e->label = dup_str(label ? label : "");
	e->y = malloc((n ? (size_t)n : 1) * sizeof *e->y);
	if (!e->label || !e->y) {
		free(e->label);
		free(e->y);
		return -1;
	}
	if (n)
		memcpy(e->y, y, (size_t)n * sizeof *e->y);
	e->n = n;
	e->gaps = 0;
	e->hue = e->dash = 0;
	e->weight = 0;
	f->n_series++;
	return 0;
}

int gb_fig_set_xs(gb_figure *f, const float *xs, int n)
{
	float *p = NULL;
	if (n < 0)
		return -1;
	if (xs && n) {
		if (!(p = malloc((size_t)n * sizeof *p)))
			return -1;
		memcpy(p, xs, (size_t)n * sizeof *p);
	}
	free(f->xs);
	f->xs = p;
	f->n_xs = p ? n : 0;
	return 0;
}

const char *gb_fig_kind_name(int kind)
{
	static const char *kinds[] = { "heatmap", "bars", "lines", "strip", "grid", "attnlines", "diagram", "strips", "decode",
	                               "tree" };
	return kind >= 0 && kind < (int)(sizeof kinds / sizeof *kinds) ? kinds[kind] : "unknown";
}

int gb_fig_add_panel(gb_figure *f, gb_figure *panel)
{
	gb_figure **p = realloc(f->panels, (size_t)(f->n_panels + 1) * sizeof *p);
	if (!p) {
		gb_fig_free(panel); /* ownership passed either way, so the caller never leaks it */
		return -1;
	}
	f->panels = p;
	p[f->n_panels++] = panel;
	return 0;
}

int gb_fig_add_meta(gb_figure *f, const char *key, const char *value)
{
	char **k = realloc(f->meta_keys, (size_t)(f->n_meta + 1) * sizeof *k);
	if (!k)
		return -1;
	f->meta_keys = k;
	char **v = realloc(f->meta_vals, (size_t)(f->n_meta + 1) * sizeof *v);
	if (!v)
		return -1;
	f->meta_vals = v;
	char *ks = dup_str(key ? key : ""), *vs = dup_str(value ? value : "");
	if (!ks || !vs) {
		free(ks);
		free(vs);
		return -1;
	}
	k[f->n_meta] = ks;
	v[f->n_meta] = vs;
	f->n_meta++;
	return 0;
}

static void count_one(double v, int masked, gb_fig_counts *c)
{
	if (isnan(v))
		c->nan++;
	else if (v > 0)
		c->pinf++;
	else if (masked)
		c->masked++;
	else
		c->ninf++;
}

/* Finite min, max and max |v| of everything f draws, and counts of the values that are not
 * finite (masked: f is part of a masked figure). */
static void scan(const gb_figure *f, int masked, double *mn, double *mx, double *mabs, gb_fig_counts *c)
{
	size_t n = (size_t)f->rows * (size_t)f->cols;
	masked |= f->masked;
	for (size_t i = 0; f->values && i < n; i++) {
		double v = f->values[i];
		if (!isfinite(v)) {
			count_one(v, masked, c);
			continue;
		}
		if (v < *mn) *mn = v;
		if (v > *mx) *mx = v;
		if (fabs(v) > *mabs) *mabs = fabs(v);
	}
	for (int s = 0; s < f->n_series; s++)
		for (int i = 0; i < f->series[s].n; i++) {
			double v = f->series[s].y[i];
			if (isnan(v) && f->series[s].gaps)
				continue;
			if (!isfinite(v)) {
				count_one(v, masked, c);
				continue;
			}
			if (v < *mn) *mn = v;
			if (v > *mx) *mx = v;
			if (fabs(v) > *mabs) *mabs = fabs(v);
		}
	for (int p = 0; p < f->n_panels; p++)
		if (f->panels[p])
			scan(f->panels[p], masked, mn, mx, mabs, c);
}

void gb_fig_count(const gb_figure *f, gb_fig_counts *c)
{
	double mn = INFINITY, mx = -INFINITY, mabs = 0;
	memset(c, 0, sizeof *c);
	if (f)
		scan(f, 0, &mn, &mx, &mabs, c);
}

int gb_fig_is_masked(const gb_figure *top, const gb_figure *m, float v)
{
	return isinf(v) && v < 0 && ((top && top->masked) || (m && m->masked));
}

void gb_fig_range(const gb_figure *f, float *lo, float *hi, int *n_bad)
{
	double mn = INFINITY, mx = -INFINITY, mabs = 0;
	gb_fig_counts c = { 0 };
	scan(f, 0, &mn, &mx, &mabs, &c);
	double l, h;
	if (f->range == GB_RANGE_FIXED && isfinite(f->vmin) && isfinite(f->vmax)) {
		l = f->vmin;
		h = f->vmax;
	} else if (f->range == GB_RANGE_SYMMETRIC) {
		l = -mabs;
		h = mabs;
	} else if (f->range == GB_RANGE_CENTERED && mn <= mx) {
		l = fmin(mn, 0);
		h = fmax(mx, 0);
	} else if (mn <= mx) {
		l = mn;
		h = mx;
	} else { /* nothing finite to scale: any range will do, this one reads naturally */
		l = 0;
		h = 1;
	}
	if (l == h) {
		l -= 1;
		h += 1;
	}
	if (lo) *lo = (float)l;
	if (hi) *hi = (float)h;
	if (n_bad) *n_bad = c.nan + c.pinf + c.ninf;
}

double gb_fig_unit(const gb_figure *f, double lo, double hi, double v)
{
	if (f && f->range == GB_RANGE_CENTERED && lo <= 0 && hi >= 0 && lo < hi) {
		double m = fmax(-lo, hi); /* a truncated symmetric scale: one slope for both signs */
		return 0.5 + 0.5 * v / m;
	}
	return (v - lo) / (hi - lo);
}

int gb_utf8_decode(const char *s, uint32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t c = u[0], min;
	int n;
	if (c == 0) {
		*cp = 0;
		return 0;
	}
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xC2 && c <= 0xDF) { n = 2; c &= 0x1F; min = 0x80; }
	else if (c >= 0xE0 && c <= 0xEF) { n = 3; c &= 0x0F; min = 0x800; }
	else if (c >= 0xF0 && c <= 0xF4) { n = 4; c &= 0x07; min = 0x10000; }
	else goto bad;
	for (int i = 1; i < n; i++) {
		if ((u[i] & 0xC0) != 0x80) /* also stops at the NUL of a truncated sequence */
			goto bad;
		c = c << 6 | (u[i] & 0x3F);
	}
	if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
		goto bad;
	*cp = c;
	return n;
bad:
	*cp = GB_UTF8_BAD;
	return 1;
}

/* Sorted, inclusive ranges of code points. */
typedef struct { uint32_t lo, hi; } range;

/* Zero columns: combining marks and invisible format characters (the common blocks; scripts
 * whose marks are not listed are counted one column too wide, which only ever wastes space). */
static const range zero_w[] = {
	{ 0x0300, 0x036F }, { 0x0483, 0x0489 }, { 0x0591, 0x05BD }, { 0x05BF, 0x05BF },
	{ 0x05C1, 0x05C2 }, { 0x05C4, 0x05C5 }, { 0x05C7, 0x05C7 }, { 0x0610, 0x061A },
	{ 0x064B, 0x065F }, { 0x0670, 0x0670 }, { 0x06D6, 0x06DC }, { 0x06DF, 0x06E4 },
	{ 0x0900, 0x0902 }, { 0x093C, 0x093C }, { 0x0941, 0x0948 }, { 0x094D, 0x094D },
	{ 0x0E31, 0x0E31 }, { 0x0E34, 0x0E3A }, { 0x0E47, 0x0E4E }, { 0x1AB0, 0x1AFF },
	{ 0x1DC0, 0x1DFF }, { 0x200B, 0x200F }, { 0x202A, 0x202E }, { 0x2060, 0x2064 },
	{ 0x20D0, 0x20FF }, { 0xFE00, 0xFE0F }, { 0xFE20, 0xFE2F }, { 0xFEFF, 0xFEFF },
	{ 0xE0100, 0xE01EF },
};

/* Two columns: East Asian Wide and Fullwidth blocks and the emoji that terminals draw wide
 * (after Unicode's EastAsianWidth.txt, coarsened to whole blocks). */
static const range wide[] = {
	{ 0x1100, 0x115F }, { 0x231A, 0x231B }, { 0x2329, 0x232A }, { 0x23E9, 0x23EC },
	{ 0x23F0, 0x23F0 }, { 0x23F3, 0x23F3 }, { 0x25FD, 0x25FE }, { 0x2614, 0x2615 },
	{ 0x2648, 0x2653 }, { 0x267F, 0x267F }, { 0x2693, 0x2693 }, { 0x26A1, 0x26A1 },
	{ 0x26AA, 0x26AB }, { 0x26BD, 0x26BE }, { 0x26C4, 0x26C5 }, { 0x26CE, 0x26CE },
	{ 0x26D4, 0x26D4 }, { 0x26EA, 0x26EA }, { 0x26F2, 0x26F3 }, { 0x26F5, 0x26F5 },
	{ 0x26FA, 0x26FA }, { 0x26FD, 0x26FD }, { 0x2705, 0x2705 }, { 0x270A, 0x270B },
	{ 0x2728, 0x2728 }, { 0x274C, 0x274C }, { 0x274E, 0x274E }, { 0x2753, 0x2755 },
	{ 0x2757, 0x2757 }, { 0x2795, 0x2797 }, { 0x27B0, 0x27B0 }, { 0x27BF, 0x27BF },
	{ 0x2B1B, 0x2B1C }, { 0x2B50, 0x2B50 }, { 0x2B55, 0x2B55 }, { 0x2E80, 0x303E },
	{ 0x3041, 0x33FF }, { 0x3400, 0x4DBF }, { 0x4E00, 0x9FFF }, { 0xA000, 0xA4CF },
	{ 0xA960, 0xA97F }, { 0xAC00, 0xD7A3 }, { 0xF900, 0xFAFF }, { 0xFE10, 0xFE19 },
	{ 0xFE30, 0xFE6F }, { 0xFF00, 0xFF60 }, { 0xFFE0, 0xFFE6 }, { 0x1F004, 0x1F004 },
	{ 0x1F0CF, 0x1F0CF }, { 0x1F18E, 0x1F18E }, { 0x1F191, 0x1F19A }, { 0x1F200, 0x1F251 },
	{ 0x1F300, 0x1F64F }, { 0x1F680, 0x1F6FF }, { 0x1F900, 0x1F9FF }, { 0x1FA70, 0x1FAFF },
	{ 0x20000, 0x2FFFD }, { 0x30000, 0x3FFFD },
};

static int in_ranges(uint32_t c, const range *r, int n)
{
	int a = 0, b = n - 1;
	while (a <= b) {
		int m = (a + b) / 2;
		if (c < r[m].lo)
			b = m - 1;
		else if (c > r[m].hi)
			a = m + 1;
		else
			return 1;
	}
	return 0;
}

int gb_cp_width(uint32_t cp)
{
	if (cp < 0x300)
		return 1;
	if (in_ranges(cp, zero_w, (int)(sizeof zero_w / sizeof *zero_w)))
		return 0;
	if (in_ranges(cp, wide, (int)(sizeof wide / sizeof *wide)))
		return 2;
	return 1;
}

int gb_utf8_width(const char *s)
{
	int w = 0, n;
	uint32_t cp;
	while (s && (n = gb_utf8_decode(s, &cp)) > 0) {
		w += cp == GB_UTF8_BAD ? 1 : gb_cp_width(cp);
		s += n;
	}
	return w;
}

static int put_utf8(char *o, uint32_t c)
{
	if (c < 0x80) { o[0] = (char)c; return 1; }
	if (c < 0x800) { o[0] = (char)(0xC0 | c >> 6); o[1] = (char)(0x80 | (c & 0x3F)); return 2; }
	if (c < 0x10000) {
		o[0] = (char)(0xE0 | c >> 12); o[1] = (char)(0x80 | (c >> 6 & 0x3F));
		o[2] = (char)(0x80 | (c & 0x3F));
		return 3;
	}
	o[0] = (char)(0xF0 | c >> 18); o[1] = (char)(0x80 | (c >> 12 & 0x3F));
	o[2] = (char)(0x80 | (c >> 6 & 0x3F)); o[3] = (char)(0x80 | (c & 0x3F));
	return 4;
}

/* The visible form of one decoded piece of a label, into piece (>= 24 bytes); its columns. */
static int display_piece(const char *src, int len, uint32_t cp, int first, int note, char *piece, int *plen)
{
	static const char hex[] = "0123456789ABCDEF";
	int k = 0, w;
	if (note && (cp == ' ' || cp == '\t')) { /* an annotation after the tab: plain spaces */
		piece[k++] = ' ';
		w = 1;
	} else if (cp == ' ') { /* a token's leading space is its most important character */
		k = put_utf8(piece, 0xB7);
		w = 1;
	} else if (cp == '\n') {
		k = put_utf8(piece, 0x23CE);
		w = 1;
	} else if (cp == GB_UTF8_BAD || cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0)) {
		/* Control bytes and bytes that are not UTF-8 (a byte-level token can be half a
		 * character): each byte as \xNN, never raw, so nothing reaches the terminal as a
		 * command or as mojibake. */
		w = 0;
		for (int i = 0; i < len; i++) {
			unsigned char b = (unsigned char)src[i];
			piece[k++] = '\\'; piece[k++] = 'x';
			piece[k++] = hex[b >> 4]; piece[k++] = hex[b & 15];
			w += 4;
		}
	} else if (cp == 0x200B || cp == 0x200C || cp == 0x200D || cp == 0x2060 || cp == 0xFEFF) {
		/* invisible but meaningful: a token made of one would otherwise look empty */
		piece[k++] = '\\'; piece[k++] = 'u';
		for (int sh = 12; sh >= 0; sh -= 4)
			piece[k++] = hex[cp >> sh & 15];
		w = 6;
	} else {
		w = gb_cp_width(cp);
		if (w == 0 && first) { /* a mark with nothing to sit on: give it the dotted circle */
			k = put_utf8(piece, 0x25CC);
			w = 1;
		}
		memcpy(piece + k, src, (size_t)len);
		k += len;
	}
	*plen = k;
	return w;
}

void gb_label_indexed(int index, const char *tok, char *out, size_t cap)
{
	int word = 0;
	for (const unsigned char *u = (const unsigned char *)tok; *u; u++)
		if (isalnum(*u) || (*u >= 0x80 && !(u[0] == 0xC2 && u[1] == 0xB7) && *u != 0xB7))
			word = 1; /* a letter (any non-ASCII but the "·" of a space counts as one) */
	int quote = tok[0] && (isdigit((unsigned char)tok[0]) || !word);
	if (!tok[0])
		snprintf(out, cap, "%d", index);
	else
		snprintf(out, cap, quote ? "%d \"%s\"" : "%d %s", index, tok);
}

void gb_label_display(const char *label, int max_cols, char *out, size_t cap)
{
	if (!out || cap == 0)
		return;
	out[0] = 0;
	if (!label || max_cols <= 0)
		return;
	/* Pass 1: the full width, to know whether an ellipsis is needed. */
	int total = 0, n, plen;
	uint32_t cp;
	char piece[32];
	const char *s = label;
	int note = 0;
	for (int first = 1; (n = gb_utf8_decode(s, &cp)) > 0; s += n, first = 0) {
		note |= cp == '\t';
		total += display_piece(s, n, cp, first, note, piece, &plen);
	}
	int room = total <= max_cols ? max_cols : max_cols - 1; /* keep a column for the "…" */
	int cut = total > max_cols;
	size_t k = 0;
	int w = 0;
	s = label;
	note = 0;
	for (int first = 1; (n = gb_utf8_decode(s, &cp)) > 0; s += n, first = 0) {
		note |= cp == '\t';
		int pw = display_piece(s, n, cp, first, note, piece, &plen);
		if (w + pw > room)
			break;
		if (k + (size_t)plen + 4 > cap) { /* out is full: still say the label goes on */
			cut = 1;
			break;
		}
		memcpy(out + k, piece, (size_t)plen);
		k += (size_t)plen;
		w += pw;
	}
	if (cut && w < max_cols && k + 4 <= cap)
		k += (size_t)put_utf8(out + k, 0x2026);
	out[k] = 0;
}

/* ---- numbers ------------------------------------------------------------------------------ */

/* NaN and the infinities, spelled the same by every formatter; 0 when v is finite. */
static int fmt_special(double v, char *buf, size_t cap)
{
	if (isnan(v))
		return snprintf(buf, cap, "NaN");
	if (isinf(v))
		return snprintf(buf, cap, v > 0 ? "inf" : "-inf");
	return 0;
}

/* "-0.00", "-0" and "-0e+00" lose their sign: a sign on what reads as zero is noise. */
static int drop_negative_zero(char *buf, int n)
{
	if (n > 1 && buf[0] == '-' && strspn(buf + 1, "0.") == strcspn(buf + 1, "e")) {
		memmove(buf, buf + 1, (size_t)n);
		n--;
	}
	return n;
}

int gb_fig_fmt_num(double v, int prec, char *buf, size_t cap)
{
	int n;
	if (!buf || cap == 0)
		return 0;
	if ((n = fmt_special(v, buf, cap)))
		return n;
	if (prec < 0) prec = 0;
	if (prec > 9) prec = 9;
	if (fabs(v) >= 1e6) /* fixed point would widen every cell's number for one outlier */
		n = snprintf(buf, cap, "%.*g", prec + 1 > 3 ? prec + 1 : 3, v);
	else
		n = snprintf(buf, cap, "%.*f", prec, v);
	n = n < 0 ? 0 : (size_t)n >= cap ? (int)cap - 1 : n;
	return drop_negative_zero(buf, n);
}

int gb_fig_fmt_sig(double v, int digits, char *buf, size_t cap)
{
	int n;
	if (!buf || cap == 0)
		return 0;
	if ((n = fmt_special(v, buf, cap)))
		return n;
	if (digits < 1) digits = 1;
	if (digits > 17) digits = 17;
	n = snprintf(buf, cap, "%.*g", digits, v);
	return n < 0 ? 0 : (size_t)n >= cap ? (int)cap - 1 : n;
}

int gb_fig_fmt_tick(double v, double step, char *buf, size_t cap)
{
	int n;
	if (!buf || cap == 0)
		return 0;
	if ((n = fmt_special(v, buf, cap)))
		return n;
	int dec = step > 0 ? (int)ceil(-log10(step) - 1e-9) : 0;
	if (fabs(v) < step * 1e-6)
		v = 0;
	if (dec < 0)
		dec = 0;
	if (fabs(v) >= 1e6 || dec > 6)
		n = snprintf(buf, cap, "%.3g", v);
	else
		n = snprintf(buf, cap, "%.*f", dec, v);
	n = n < 0 ? 0 : (size_t)n >= cap ? (int)cap - 1 : n;
	return drop_negative_zero(buf, n);
}
