/* raster_axes.c — a heatmap's row and column labels: what each is called (its index, when the
 * figure numbers them, then its token; the index alone where there is no token), and the plan
 * that draws them readable on a slide: every label at the largest size that fits its row or
 * column, columns level, slanted or turned upright, and where even TEXT_MIN does not fit, ticks
 * at a round step (every 2nd, 5th, 10th, ... index) rather than smaller text. A label longer
 * than the share of the slide labels may take is shortened with "…" and counted. */
#include "viz/raster.h"
#include "viz/raster_layout.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Label i as drawn at a stride: thinned tokens carry their index, so a reader can tell which
 * row a tick names ("5 ·the", not a lone "·the" every fifth row). */
static const char *label_at(const gb_axis *a, int i, int stride)
{
	return (stride > 1 && a->alt ? a->alt : a->full) + (size_t)i * LABEL_BUF;
}

static const char *label(const gb_axis *a, int i)
{
	return label_at(a, i, a->stride);
}

/* Whether labels are the numbers v, v + 1, ... themselves (the feature numbers "0" to "63" of
 * a positional encoding, counted from 0 as its formula counts them): *first gets v. */
static int self_numbered(char *const *labels, int n, int *first)
{
	for (int i = 0; labels && i < n; i++) {
		const char *s = labels[i];
		char *e;
		if (!s || !isdigit((unsigned char)s[0]) || strlen(s) > 9)
			return 0;
		long v = strtol(s, &e, 10);
		if (*e || (i == 0 ? (*first = (int)v, 0) : v != *first + i))
			return 0;
	}
	return labels && n > 0;
}

int gb_axis_make(lay *L, gb_axis *a, char *const *labels, int n, int index0)
{
	memset(a, 0, sizeof *a);
	a->n = n;
	/* what a reader counts from: the figure's index, or 1 (as the terminal numbers rows and
	 * columns, and as layers, heads and units are counted) */
	a->idx0 = index0 > 0 ? index0 : 1;
	/* labels that number themselves are index numbers: thinned, they stay plain numbers at
	 * round values of their own ("0 10 20"), never an index beside a quoted one ("2 "1"") */
	int own0;
	if (self_numbered(labels, n, &own0)) {
		labels = NULL;
		index0 = a->idx0 = own0;
	}
	a->numeric = !labels;
	a->stride = 1;
	a->hide = -1;
	a->px = spx(L, LABEL_PX);
	if (n <= 0)
		return 0;
	a->full = malloc((size_t)n * LABEL_BUF);
	a->lab = malloc((size_t)n * LABEL_BUF);
	a->alt = labels && index0 <= 0 ? malloc((size_t)n * LABEL_BUF) : NULL;
	a->precut = calloc((size_t)n, 1);
	if (!a->full || !a->lab || !a->precut || (labels && index0 <= 0 && !a->alt)) {
		gb_axis_free(a);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char *d = a->full + (size_t)i * LABEL_BUF, tok[LABEL_BUF - 16];
		if (!labels)
			snprintf(d, LABEL_BUF, "%d", a->idx0 + i);
		else {
			gb_label_display(labels[i] ? labels[i] : "", LABEL_COLS, tok, sizeof tok);
			a->precut[i] = (char)gb_lay_label_cut(labels[i], LABEL_COLS);
			if (index0 > 0)
				gb_label_indexed(index0 + i, tok, d, LABEL_BUF);
			else {
				snprintf(d, LABEL_BUF, "%s", tok);
				gb_label_indexed(a->idx0 + i, tok, a->alt + (size_t)i * LABEL_BUF, LABEL_BUF);
			}
		}
	}
	memcpy(a->lab, a->full, (size_t)n * LABEL_BUF);
	return 0;
}

void gb_axis_free(gb_axis *a)
{
	free(a->full);
	free(a->lab);
	free(a->alt);
	free(a->precut);
	a->full = a->lab = a->alt = a->precut = NULL;
}

/* Whether label i is drawn: all of them, or those at a multiple of the stride (by index), and
 * the first when the first multiple is far enough on (1, 10, 20, ... but 2, 4, 6: first_fits),
 * and the last (the last query, the prediction's row), the multiple before it left out when
 * the two would touch (..., 16, 18, 21 rather than ..., 18, 20). */
int gb_axis_shows(const gb_axis *a, int i)
{
	int k = a->stride;
	if (k <= 1)
		return 1;
	if (i == a->n - 1 && a->last)
		return 1;
	if (i == a->hide)
		return 0;
	if ((a->idx0 + i) % k == 0)
		return 1;
	return i == 0 && a->first;
}

/* The smallest round step (2, 5, 10, 20, 25, 50, 100, ...) of at least k. */
static int round_step(double k)
{
	static const int base[] = { 1, 2, 5, 10, 20, 25, 50 };
	if (k <= 1)
		return 1;
	for (long mag = 1; mag < 100000000; mag *= 100)
		for (int i = 0; i < 7; i++)
			if (base[i] * mag >= k)
				return (int)(base[i] * mag);
	return 100000000;
}

/* Distance two neighbouring labels need between their baselines: digits have no ascenders
 * or descenders to clash. Index numbers turned upright stand side by side as a fence ("10 11
 * 12 13" read as one block on a slide, L14's receptive panels): under a grid's panels, where
 * the same axis repeats and a thinned one loses nothing, they get half a size between them,
 * else they go level at a round step (plan_cols). A single map keeps every label up to 64. */
static double need(const lay *L, const gb_axis *a, int px)
{
	if (a->repeated && a->numeric && !a->rows && a->orient == 90)
		return 1.5 * px;
	return a->numeric ? 0.8 * px + 3 * L->s : 1.1 * px;
}

static double widest(lay *L, const gb_axis *a, int px, int stride, double cap);

/* With thinned labels, whether the first (1, or the figure's first index) also fits before
 * the first round one. */
static void first_fits(lay *L, gb_axis *a, double pitch)
{
	int k = a->stride, off = k > 1 ? (k - a->idx0 % k) % k : 0;
	double room = off * pitch;
	a->first = 0;
	gb_axis_last(L, a, pitch);
	if (k <= 1 || off == 0 || off >= a->n)
		return;
	if (a->rows || a->orient != 0)
		a->first = room >= need(L, a, a->px);
	else
		a->first = room >= widest(L, a, a->px, k, INFINITY) + 8 * L->s;
}

void gb_axis_last(lay *L, gb_axis *a, double pitch)
{
	int k = a->stride, i = a->n - 1;
	a->last = 0;
	a->hide = -1;
	if (k <= 1 || a->n < 2 || (a->idx0 + i) % k == 0)
		return;
	int prev = i - (a->idx0 + i) % k; /* the round one before it */
	double room = (i - prev) * pitch;
	a->last = 1;
	if (prev >= 0 && room < (a->rows || a->orient != 0 ? need(L, a, a->px) : widest(L, a, a->px, k, INFINITY) + 8 * L->s))
		a->hide = prev;
}

/* How long a label may be drawn: rows take a share of the width, turned columns a share of
 * the height (measured along a slanted label, it may be longer by sqrt 2). */
static double cap_w(const gb_axis *a)
{
	return a->orient == 45 ? a->max_w * M_SQRT2 : a->max_w;
}

static double widest(lay *L, const gb_axis *a, int px, int stride, double cap)
{
	double m = 0;
	gb_axis t = *a;
	t.stride = stride;
	for (int i = 0; i < a->n; i++)
		if (gb_axis_shows(&t, i))
			m = fmax(m, tw(L, GB_FACE_SANS, px, label_at(a, i, stride)));
	return fmin(m, cap);
}

void gb_axis_plan_rows(lay *L, gb_axis *a, double pitch)
{
	a->rows = 1;
	a->first = 0;
	int top = spx(L, pitch >= 60 * L->s ? LABEL_BIG : LABEL_PX), lo = spx(L, LABEL_MIN);
	a->orient = 0;
	for (int px = top; px >= lo; px--)
		if (pitch >= need(L, a, px)) {
			a->px = px;
			a->stride = 1;
			return;
		}
	a->px = lo;
	a->stride = round_step(need(L, a, lo) / pitch);
	first_fits(L, a, pitch);
}

static void plan_cols(lay *L, gb_axis *a, double pitch);

void gb_axis_plan_cols(lay *L, gb_axis *a, double pitch)
{
	a->first = 0;
	plan_cols(L, a, pitch);
	first_fits(L, a, pitch);
}

static void plan_cols(lay *L, gb_axis *a, double pitch)
{
	int top = spx(L, pitch >= 60 * L->s ? LABEL_BIG : LABEL_PX), lo = spx(L, LABEL_MIN);
	double gap = 8 * L->s;
	a->stride = 1;
	/* every label: level if they fit side by side, then slanted (tokens), then upright */
	if (pitch >= tw(L, GB_FACE_SANS, lo, "0") + gap)
		for (int px = top; px >= lo; px--)
			if (widest(L, a, px, 1, INFINITY) + gap <= pitch) {
				a->px = px;
				a->orient = 0;
				return;
			}
	if (!a->numeric)
		for (int px = top; px >= lo; px--)
			if (pitch * M_SQRT1_2 >= need(L, a, px)) {
				a->px = px;
				a->orient = 45;
				return;
			}
	a->orient = 90;
	for (int px = top; px >= lo; px--)
		if (pitch >= need(L, a, px)) {
			a->px = px;
			return;
		}
	/* ticks at a round step, at the smallest size; index numbers level (0, 50, 100 reads
	 * better than a fence of upright numbers) */
	a->px = lo;
	for (int k = round_step(2);; k = round_step(k + 1)) {
		if (a->numeric) {
			if (widest(L, a, lo, k, INFINITY) + 2 * gap <= pitch * k || k >= a->n) {
				a->orient = 0;
				a->stride = k;
				return;
			}
			continue;
		}
		if (widest(L, a, lo, k, INFINITY) + gap <= pitch * k) {
			a->orient = 0;
			a->stride = k;
			return;
		}
		if (!a->numeric && pitch * k * M_SQRT1_2 >= need(L, a, lo)) {
			a->orient = 45;
			a->stride = k;
			return;
		}
		if (pitch * k >= need(L, a, lo) || k >= a->n) {
			a->orient = 90;
			a->stride = k;
			return;
		}
	}
}

/* Keeps the size and slant, and thins the labels (a rounder step) until they fit the pitch. */
void gb_axis_thin_to_fit(lay *L, gb_axis *a, double pitch)
{
	double gap = 8 * L->s;
	for (;;) {
		int k = a->stride;
		int fits;
		if (a->orient == 45)
			fits = pitch * k * M_SQRT1_2 >= need(L, a, a->px);
		else if (a->orient == 90)
			fits = pitch * k >= need(L, a, a->px);
		else if (a->rows)
			fits = pitch * k >= need(L, a, a->px);
		else
			fits = widest(L, a, a->px, k, INFINITY) + gap <= pitch * k;
		if (fits || k >= a->n) {
			first_fits(L, a, pitch);
			return;
		}
		a->stride = round_step(k + 1);
	}
}

/* Room the row labels take left of the cells (their gap and tick marks included). */
double gb_axis_rows_width(lay *L, gb_axis *a)
{
	if (!a->full)
		return 0;
	return widest(L, a, a->px, a->stride, cap_w(a)) + (a->stride > 1 ? TICK_LEN + 4 : 8) * L->s + 2 * L->s;
}

/* Room the column labels take under the cells. */
double gb_axis_cols_height(lay *L, gb_axis *a)
{
	double w, t = a->stride > 1 ? TICK_LEN * L->s : 0;
	if (!a->full)
		return 0;
	if (a->orient == 0)
		return 1.3 * a->px + 6 * L->s + t;
	w = widest(L, a, a->px, a->stride, cap_w(a));
	return (a->orient == 45 ? w * M_SQRT1_2 + 0.9 * a->px : w) + 8 * L->s + t;
}

/* How far a slanted first label reaches left of the cells. */
double gb_axis_cols_overhang(lay *L, gb_axis *a, double pitch)
{
	if (!a->full || a->orient != 45)
		return 0;
	for (int i = 0; i < a->n; i++)
		if (gb_axis_shows(a, i))
			return fmin(tw(L, GB_FACE_SANS, a->px, label(a, i)), cap_w(a)) * M_SQRT1_2 - (i + 0.5) * pitch;
	return 0;
}

/* Once the plan is final: the labels shortened to their room (counted), and how many show. */
void gb_axis_finish(lay *L, gb_axis *a)
{
	double cap = cap_w(a);
	a->shown = a->cut = 0;
	for (int i = 0; a->full && i < a->n; i++) {
		if (!gb_axis_shows(a, i))
			continue;
		a->shown++;
		a->cut += gb_lay_shorten(L, GB_FACE_SANS, a->px, label(a, i), cap, a->lab + (size_t)i * LABEL_BUF, LABEL_BUF) ||
		          a->precut[i];
	}
	L->cut += a->cut;
}

/* Where the token of an "index token" label starts (after "10 "), or NULL for a label with
 * no index (a token axis's labels carry no spaces: gb_label_display shows them as "·"). */
static const char *token_part(const gb_axis *a, const char *l)
{
	const char *p = l;
	if (a->numeric || !isdigit((unsigned char)*p))
		return NULL;
	while (isdigit((unsigned char)*p))
		p++;
	return *p == ' ' && p[1] ? p + 1 : NULL;
}

/* Label l at (x, y): an index in the lighter ink INK2 and its token in INK, so "10 "0"" reads
 * as a number and a token at a glance. The token is drawn at the label's end and the index
 * (with its space) ends where the token begins, along the text's direction: two strings side
 * by side, never one drawn over the other (at an angle, glyph origins rounded twice did not
 * line up, and the token looked printed twice). */
static void axis_text(lay *L, const gb_axis *a, double x, double y, double angle, int anchor, const char *l)
{
	const char *tok = token_part(a, l);
	if (!tok) {
		text(L, GB_FACE_SANS, a->px, x, y, angle, anchor, l, INK);
		return;
	}
	if (anchor == GB_ANCHOR_MIDDLE && angle == 0) { /* the token ends where the label does */
		x += tw(L, GB_FACE_SANS, a->px, l) / 2;
		anchor = GB_ANCHOR_END;
	}
	if (anchor != GB_ANCHOR_END) {
		text(L, GB_FACE_SANS, a->px, x, y, angle, anchor, l, INK);
		return;
	}
	char idx[LABEL_BUF];
	size_t n = (size_t)(tok - l) < sizeof idx ? (size_t)(tok - l) : sizeof idx - 1;
	memcpy(idx, l, n);
	idx[n] = 0;
	double w = tw(L, GB_FACE_SANS, a->px, tok), r = angle * M_PI / 180;
	text(L, GB_FACE_SANS, a->px, x, y, angle, GB_ANCHOR_END, tok, INK);
	text(L, GB_FACE_SANS, a->px, x - w * cos(r), y + w * sin(r), angle, GB_ANCHOR_END, idx, INK2);
}

void gb_axis_draw_rows(lay *L, const gb_axis *a, double x, double y, double pitch, int n)
{
	double s = L->s, lw = fmax(1, round(s)), gap = (a->stride > 1 ? TICK_LEN + 4 : 8) * s;
	if (!a->lab)
		return;
	group(L, "row-labels", 1);
	for (int i = 0; i < n && i < a->n; i++) {
		double yc = y + (i + 0.5) * pitch;
		if (!gb_axis_shows(a, i))
			continue;
		if (a->stride > 1)
			rect(L, x - TICK_LEN * s, yc - lw / 2, TICK_LEN * s, lw, AXIS);
		axis_text(L, a, x - gap, mid_baseline(yc, a->px), 0, GB_ANCHOR_END, a->lab + (size_t)i * LABEL_BUF);
	}
	group(L, "row-labels", 0);
}

void gb_axis_draw_cols(lay *L, const gb_axis *a, double x, double y, double pitch, int n)
{
	double s = L->s, lw = fmax(1, round(s)), t = a->stride > 1 ? TICK_LEN * s : 0;
	if (!a->lab)
		return;
	group(L, "col-labels", 1);
	for (int i = 0; i < n && i < a->n; i++) {
		double xc = x + (i + 0.5) * pitch;
		const char *l = a->lab + (size_t)i * LABEL_BUF;
		if (!gb_axis_shows(a, i))
			continue;
		if (t > 0)
			rect(L, xc - lw / 2, y, lw, t, AXIS);
		if (a->orient == 45)
			/* ends under the column, rising to it; shifted half an x-height so the slanted
			 * text's middle, not its baseline, points at the column */
			axis_text(L, a, xc + 0.3 * a->px, y + t + 6 * s + 0.75 * a->px, 45, GB_ANCHOR_END, l);
		else if (a->orient == 90)
			/* reads upwards, ending just under the column */
			axis_text(L, a, xc + 0.36 * a->px, y + t + 6 * s, 90, GB_ANCHOR_END, l);
		else
			axis_text(L, a, xc, y + t + 6 * s + 0.93 * a->px, 0, GB_ANCHOR_MIDDLE, l);
	}
	group(L, "col-labels", 0);
}
