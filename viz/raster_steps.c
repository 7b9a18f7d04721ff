/* raster_steps.c — the layout of the step figures (issue 14, part 3): STRIPS (the BPE merge
 * replay, one token strip a row, each row named by the merge that made it), DECODE (decoding
 * steps side by side, each a bar chart of the candidates with the cut-offs drawn on it) and
 * TREE (a beam search, a node per beam's last token). Kept, cut and chosen differ by fill,
 * hatching and outline as well as by colour, so a projector that washes colours out still
 * shows them. */
#include "viz/raster.h"
#include "viz/raster_layout.h"
#include "viz/colormap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint8_t KEPT_RGB[3] = { 0x44, 0x77, 0xAA };
static const uint8_t CHOSEN_RGB[3] = { 0xDD, 0x77, 0x11 };
static const uint8_t CUT_RGB[3] = { 0x99, 0x99, 0x99 };
static const uint8_t PALE[3] = { 0xEE, 0xEE, 0xEE };
static const uint8_t BEST_RGB[3] = { 0x1F, 0x4E, 0x8C };
static const uint8_t LIVE_RGB[3] = { 0xCF, 0xE0, 0xF5 };

static void line2(lay *L, double x0, double y0, double x1, double y1, double w, const uint8_t rgb[3])
{
	double xy[4] = { x0, y0, x1, y1 };
	L->p->polyline(L->p->ctx, xy, 2, w, rgb);
}

/* A frame of lw pixels around (x, y, w, h), inside it. */
static void box_frame(lay *L, double x, double y, double w, double h, double lw, const uint8_t rgb[3])
{
	rect(L, x, y, w, lw, rgb);
	rect(L, x, y + h - lw, w, lw, rgb);
	rect(L, x, y, lw, h, rgb);
	rect(L, x + w - lw, y, lw, h, rgb);
}

/* Diagonal hatching inside a rectangle: what a cut candidate is, without colour. */
static void hatch(lay *L, double x, double y, double w, double h, const uint8_t rgb[3])
{
	double step = 9 * L->s, lw = fmax(1, 1.5 * L->s);
	for (double k = step / 2; k < w + h; k += step) {
		/* the line x + t = x + k - (y' - y), clipped to the box */
		double xa = x + k, ya = y, xb = x + k - h, yb = y + h;
		if (xa > x + w) {
			ya += xa - (x + w);
			xa = x + w;
		}
		if (xb < x) {
			yb -= x - xb;
			xb = x;
		}
		if (yb > ya)
			line2(L, xa, ya, xb, yb, lw, rgb);
	}
}

static void grow_box(lay *L, double x, double y, double w, double h, int *first)
{
	if (!L->info)
		return;
	gb_rect *b = &L->info->box;
	int x0 = (int)floor(x), y0 = (int)floor(y), x1 = (int)ceil(x + w), y1 = (int)ceil(y + h);
	if (*first) {
		*b = (gb_rect){ x0, y0, x1 - x0, y1 - y0 };
		*first = 0;
		return;
	}
	int bx1 = b->x + b->w, by1 = b->y + b->h;
	b->x = x0 < b->x ? x0 : b->x;
	b->y = y0 < b->y ? y0 : b->y;
	b->w = (x1 > bx1 ? x1 : bx1) - b->x;
	b->h = (y1 > by1 ? y1 : by1) - b->y;
}

/* ---- STRIPS: the merge replay ----------------------------------------------------------- */

int gb_lay_draw_strips(lay *L, gb_verr *err)
{
	const gb_figure *f = L->f;
	int n = f->n_panels, first = 1;
	if (n <= 0)
		return gb_vfail(err, "the sequence of strips has no strips");
	double s = L->s, aw = L->x1 - L->x0, ah = L->y1 - L->y0;
	int px, vpx = spx(L, TEXT_MIN), lpx;
	double labw = 0, rowh = 0, boxh = 0, gap = 0, pad = 0;
	/* the largest size at which every row fits the width and all rows the height */
	for (px = spx(L, 44);; px--) {
		vpx = (int)fmax(spx(L, TEXT_MIN), round(0.55 * px));
		lpx = (int)fmax(spx(L, TEXT_MIN), fmin(spx(L, LABEL_BIG), round(0.6 * px)));
		pad = 0.35 * px;
		gap = 0.18 * px;
		boxh = 1.5 * px;
		rowh = boxh + 1.3 * vpx + 0.5 * px;
		labw = 0;
		for (int r = 0; r < n; r++)
			if (f->panels[r]->title)
				labw = fmax(labw, tw(L, GB_FACE_SANS, lpx, f->panels[r]->title));
		labw = fmin(labw + 24 * s, 0.42 * aw);
		double widest = 0;
		for (int r = 0; r < n; r++) {
			const gb_figure *p = f->panels[r];
			double xx = 0;
			for (int i = 0; i < p->cols; i++) {
				char lab[LABEL_BUF], vb[48];
				gb_label_display(p->col_labels ? p->col_labels[i] : "", LABEL_COLS, lab, sizeof lab);
				gb_format_value(p->values[i], 0, vb, sizeof vb);
				xx += fmax(fmax(tw(L, GB_FACE_SANS, px, lab), tw(L, GB_FACE_MONO, vpx, vb)), 0.8 * px) + 2 * pad + gap;
			}
			widest = fmax(widest, xx);
		}
		if ((widest <= aw - labw && n * rowh <= ah) || px <= spx(L, TEXT_MIN))
			break;
	}
	double y = floor(L->y0 + fmax(0, (ah - n * rowh) / 2)), widest = 0;
	for (int r = 0; r < n; r++) { /* the rows' widest, to centre the block on the slide */
		const gb_figure *p = f->panels[r];
		double xx = 0;
		for (int i = 0; i < p->cols; i++) {
			char lab[LABEL_BUF], vb[48];
			gb_label_display(p->col_labels ? p->col_labels[i] : "", LABEL_COLS, lab, sizeof lab);
			gb_format_value(p->values[i], 0, vb, sizeof vb);
			xx += fmax(fmax(tw(L, GB_FACE_SANS, px, lab), tw(L, GB_FACE_MONO, vpx, vb)), 0.8 * px) + 2 * pad + gap;
		}
		widest = fmax(widest, xx - gap);
	}
	double x0 = L->x0 + fmax(0, (aw - labw - widest) / 2);
	for (int r = 0; r < n; r++, y += rowh) {
		const gb_figure *p = f->panels[r];
		if (y + boxh > L->y1 + 0.5) {
			L->cut += n - r;
			break;
		}
		if (p->title)
			gb_lay_text_fit(L, GB_FACE_SANS, lpx, x0 + labw - 24 * s, mid_baseline(y + boxh / 2, lpx), 0,
			                GB_ANCHOR_END, p->title, labw - 24 * s, INK);
		double xx = x0 + labw;
		group(L, "tokens", 1);
		for (int i = 0; i < p->cols; i++) {
			char lab[LABEL_BUF], vb[48];
			uint8_t rgb[3];
			gb_label_display(p->col_labels ? p->col_labels[i] : "", LABEL_COLS, lab, sizeof lab);
			gb_format_value(p->values[i], 0, vb, sizeof vb);
			double w = fmax(fmax(tw(L, GB_FACE_SANS, px, lab), tw(L, GB_FACE_MONO, vpx, vb)), 0.8 * px) + 2 * pad;
			if (xx + w > L->x1 + 0.5) {
				L->cut += p->cols - i;
				break;
			}
			if (p->alternate)
				gb_alt_rgb(i, rgb);
			else
				gb_lay_cell_colour(L, p, p->values[i], rgb);
			rect(L, xx, y, w, boxh, rgb);
			gb_lay_outline(L, (int)floor(xx + 0.5), (int)floor(y + 0.5), (int)floor(w + 0.5), (int)floor(boxh + 0.5));
			/* the piece this merge made: a heavy frame, so it shows without colour */
			if (p->marks && (p->marks[i] & GB_MARK_CHOSEN))
				box_frame(L, xx - 4 * s, y - 4 * s, w + 8 * s, boxh + 8 * s, 4 * s, BLACK);
			text(L, GB_FACE_SANS, px, xx + w / 2, mid_baseline(y + boxh / 2, px), 0, GB_ANCHOR_MIDDLE, lab,
			     gb_lightness(rgb) > 55 ? BLACK : WHITE);
			text(L, GB_FACE_MONO, vpx, xx + w / 2, y + boxh + 1.1 * vpx, 0, GB_ANCHOR_MIDDLE, vb, INK2);
			grow_box(L, xx, y, w, boxh, &first);
			xx += w + gap;
		}
		group(L, "tokens", 0);
	}
	if (L->info) {
		L->info->plot = L->info->box;
		L->info->row_labels_total = L->info->row_labels_shown = n;
	}
	return 0;
}

/* ---- DECODE: decoding steps as bar charts ----------------------------------------------- */

/* The decimals of a step's numbers: a digit more (two at most) where the two largest bars would
 * read the same, so which of them won is visible (review 12: a greedy step where every
 * candidate read 0.03). */
static int panel_prec(const gb_figure *p)
{
	int prec = p->precision;
	for (char a[48], b[48]; p->cols >= 2 && prec < p->precision + 2 && p->values[0] != p->values[1]; prec++) {
		gb_format_value(p->values[0], prec, a, sizeof a);
		gb_format_value(p->values[1], prec, b, sizeof b);
		if (strcmp(a, b))
			break;
	}
	return prec;
}

/* One step's bars in (x, y, w, h) on the scale 0 .. vmax, their numbers with prec decimals;
 * with ticks, a value axis under them, for charts paired on a common axis (review 11 found the
 * pair's bars with nothing to read their common scale from but the subtitle), as many ticks in
 * each panel, so both read alike. */
static void decode_panel(lay *L, const gb_figure *p, double x, double y, double w, double h, double vmax,
                         int px, int ticks, int prec, int *first)
{
	double s = L->s;
	int n = p->cols;
	char *dl = gb_lay_display_labels(L, p->col_labels, n, LABEL_COLS);
	if (p->title)
		gb_lay_text_fit(L, GB_FACE_BOLD, px, x + w / 2, y + 0.95 * px, 0, GB_ANCHOR_MIDDLE, p->title, w, INK);
	y += 1.5 * px;
	h -= 1.5 * px;
	char wide[16];
	gb_format_value(0.5, prec, wide, sizeof wide); /* (the numbers' width) */
	double lw = 0, vw = tw(L, GB_FACE_MONO, px, wide) + 10 * s;
	for (int i = 0; dl && i < n; i++)
		lw = fmax(lw, tw(L, GB_FACE_SANS, px, dl + (size_t)i * LABEL_BUF));
	lw = fmin(lw + 10 * s, 0.45 * w);
	/* each place a cut-off falls gets a band of its own between the bars, for its rule and name */
	int at[GB_FIG_CUTS], n_at = 0;
	for (int c = 0; c < p->n_cuts; c++) {
		int dup = p->cut_at[c] < 0 || p->cut_at[c] > n;
		for (int e = 0; e < n_at; e++)
			dup |= at[e] == p->cut_at[c];
		if (!dup)
			at[n_at++] = p->cut_at[c];
	}
	double band = 1.3 * px, tpx = spx(L, TICK_PX), th = ticks ? TICK_LEN * s + 1.6 * tpx : 0;
	double bx = x + lw, bw = w - lw - vw - 22 * s, slot = (h - th - n_at * band) / (n > 0 ? n : 1);
	if (bw < 20 * s)
		bw = 20 * s;
	rect(L, bx, y, fmax(1, s), slot * n + n_at * band, AXIS);
	if (ticks && vmax > 0) {
		group(L, "axis", 1);
		gb_lay_value_axis(L, bx, y, bw, slot * n + n_at * band, 0, vmax, (int)fmax(2, fmin(5, w / (160 * s))), tpx);
		group(L, "axis", 0);
	}
	for (int i = 0; i < n; i++) {
		int before = 0; /* bands above row i */
		for (int e = 0; e < n_at; e++)
			before += at[e] <= i;
		double yc = y + (i + 0.5) * slot + before * band, bh = fmin(slot * 0.7, 1.6 * px);
		float v = p->values[i];
		int mk = p->marks ? p->marks[i] : GB_MARK_KEPT;
		double len = isfinite(v) && vmax > 0 ? fmax(0, fmin(1, v / vmax)) * bw : 0;
		char lab[LABEL_BUF];
		snprintf(lab, sizeof lab, "%s", dl ? dl + (size_t)i * LABEL_BUF : "");
		if (gb_lay_shorten(L, GB_FACE_SANS, px, dl ? dl + (size_t)i * LABEL_BUF : "", lw - 10 * s, lab, sizeof lab))
			L->cut++;
		text(L, (mk & GB_MARK_CHOSEN) ? GB_FACE_BOLD : GB_FACE_SANS, px, bx - 8 * s, mid_baseline(yc, px), 0,
		     GB_ANCHOR_END, lab, (mk & GB_MARK_CUT) ? INK2 : INK);
		if (mk & GB_MARK_CUT) { /* outlined and hatched: not in the draw */
			rect(L, bx, yc - bh / 2, fmax(len, 2 * s), bh, WHITE);
			hatch(L, bx, yc - bh / 2, len, bh, CUT_RGB);
			box_frame(L, bx, yc - bh / 2, fmax(len, 2 * s), bh, fmax(1, 1.5 * s), CUT_RGB);
		} else
			rect(L, bx, yc - bh / 2, fmax(len, 2 * s), bh, (mk & GB_MARK_CHOSEN) ? CHOSEN_RGB : KEPT_RGB);
		if (mk & GB_MARK_CHOSEN) /* a heavy frame and an arrow: the token drawn */
			box_frame(L, bx - 3 * s, yc - bh / 2 - 3 * s, fmax(len, 2 * s) + 6 * s, bh + 6 * s, 3 * s, BLACK);
		if (p->ref && isfinite(p->ref[i]) && vmax > 0) {
			double rx = bx + fmax(0, fmin(1, p->ref[i] / vmax)) * bw;
			rect(L, rx - 1.5 * s, yc - bh / 2 - 5 * s, 3 * s, bh + 10 * s, BLACK);
		}
		char vb[48];
		gb_format_value(v, prec, vb, sizeof vb);
		double tx = bx + fmax(len, p->ref && isfinite(p->ref[i]) && vmax > 0 ? fmin(1, p->ref[i] / vmax) * bw : 0);
		text(L, GB_FACE_MONO, px, tx + ((mk & GB_MARK_CHOSEN) ? 10 : 7) * s, mid_baseline(yc, px), 0, GB_ANCHOR_START,
		     vb, INK);
		grow_box(L, bx, yc - bh / 2, fmax(len, 2 * s), bh, first);
	}
	/* the cut-offs: a dashed rule after the last bar each keeps, named on the rule at the right
	 * (on a white patch, between the rows' numbers); cut-offs at one place share a rule */
	for (int c = 0; c < p->n_cuts; c++) {
		int k = p->cut_at[c], dup = 0;
		char lab[2 * 48 + 4];
		if (k < 0 || k > n)
			continue;
		for (int e = 0; e < c; e++)
			dup |= p->cut_at[e] == k;
		if (dup)
			continue;
		snprintf(lab, sizeof lab, "%s", p->cut_label[c]);
		for (int e = c + 1; e < p->n_cuts; e++)
			if (p->cut_at[e] == k)
				snprintf(lab + strlen(lab), sizeof lab - strlen(lab), ", %s", p->cut_label[e]);
		int before = 0;
		for (int e = 0; e < n_at; e++)
			before += at[e] < k;
		double ly = y + k * slot + before * band + band / 2;
		for (double xx = x + 4 * s; xx < x + w - 4 * s; xx += 16 * s)
			rect(L, xx, ly - 1.5 * s, fmin(9 * s, x + w - 4 * s - xx), 3 * s, BLACK);
		double lx = x + w - 4 * s, tw0 = tw(L, GB_FACE_BOLD, px, lab);
		rect(L, lx - tw0 - 8 * s, ly - 0.62 * px, tw0 + 12 * s, 1.24 * px, WHITE);
		text(L, GB_FACE_BOLD, px, lx, mid_baseline(ly, px), 0, GB_ANCHOR_END, lab, BLACK);
	}
	free(dl);
}

static const char *const LEGEND_NAMES[3] = { "kept (may be drawn)", "cut off (never drawn)", "chosen" };

/* The key's width at text size px. A key names only what the bars show: "cut off" only where
 * some bar is cut (at T = 1 with no top-k or top-p, nothing is). */
static double decode_legend_width(lay *L, int px, int have_cut, int have_ref, const char *ref_label)
{
	double s = L->s, sw = 1.6 * px, total = 0, gap = 30 * s;
	int k = have_ref && ref_label ? 4 : 3;
	for (int i = 0; i < k; i++) {
		if (i == 1 && !have_cut)
			continue;
		total += (i == 3 ? 8 * s : sw) + 8 * s + tw(L, GB_FACE_SANS, px, i == 3 ? ref_label : LEGEND_NAMES[i]) + gap;
	}
	return total - gap;
}

/* The key under the panels: what each bar style means (drawn as the bars are). */
static void decode_legend(lay *L, double y, int px, int have_cut, int have_ref, const char *ref_label)
{
	double s = L->s, sw = 1.6 * px, x, gap = 30 * s;
	const char *names[4] = { LEGEND_NAMES[0], LEGEND_NAMES[1], LEGEND_NAMES[2], ref_label };
	int k = have_ref && ref_label ? 4 : 3;
	double total = decode_legend_width(L, px, have_cut, have_ref, ref_label) + gap;
	x = L->x0 + fmax(0, (L->x1 - L->x0 - total + gap) / 2);
	double h = 0.9 * px, yy = y - h / 2;
	for (int i = 0; i < k; i++) {
		if (i == 1 && !have_cut)
			continue;
		if (i == 0)
			rect(L, x, yy, sw, h, KEPT_RGB);
		else if (i == 1) {
			rect(L, x, yy, sw, h, WHITE);
			hatch(L, x, yy, sw, h, CUT_RGB);
			box_frame(L, x, yy, sw, h, fmax(1, 1.5 * s), CUT_RGB);
		} else if (i == 2) {
			rect(L, x, yy, sw, h, CHOSEN_RGB);
			box_frame(L, x - 3 * s, yy - 3 * s, sw + 6 * s, h + 6 * s, 3 * s, BLACK);
		} else
			rect(L, x + 2.5 * s, yy - 5 * s, 3 * s, h + 10 * s, BLACK);
		x += (i == 3 ? 8 * s : sw) + 8 * s;
		text(L, GB_FACE_SANS, px, x, mid_baseline(y, px), 0, GB_ANCHOR_START, names[i], INK);
		x += tw(L, GB_FACE_SANS, px, names[i]) + gap;
	}
}

/* The size of the bars' text in panels of pw x ph: as large as DECODE_BIG, shrunk to what a
 * bar's slot holds and to what the label column holds (so a long token, the end token, is not
 * cut), never under the slide's smallest size. */
#define DECODE_BIG 30
static void decode_fit(lay *L, const gb_figure *f, double pw, double ph, int rows_max, int *out)
{
	double s = L->s;
	int px = spx(L, DECODE_BIG);
	while (px > spx(L, TEXT_MIN) && (ph - 1.5 * px) / rows_max < 1.35 * px)
		px--;
	for (int fit = 0; !fit && px > spx(L, TEXT_MIN);) {
		fit = 1;
		for (int i = 0; fit && i < f->n_panels; i++) {
			const gb_figure *p = f->panels[i];
			for (int j = 0; fit && p->col_labels && j < p->cols; j++) {
				char d[LABEL_BUF];
				gb_label_display(p->col_labels[j], LABEL_COLS, d, sizeof d);
				fit = tw(L, GB_FACE_BOLD, px, d) + 20 * s <= 0.45 * pw &&
				      (!p->title || tw(L, GB_FACE_BOLD, px, p->title) <= pw);
			}
			/* the numbers and the bars beside the labels need room too */
			fit = fit && pw - 0.45 * pw - tw(L, GB_FACE_MONO, px, "0.00") - 32 * s >= 6 * px;
		}
		if (!fit)
			px--;
	}
	*out = px;
}

int gb_lay_draw_decode(lay *L, gb_verr *err)
{
	const gb_figure *f = L->f;
	int n = f->n_panels, first = 1, have_ref = 0, have_cut = 0, have_marks = 0;
	if (n <= 0)
		return gb_vfail(err, "the decoding figure has no steps");
	double s = L->s, vmax = 0;
	int rows_max = 1;
	for (int i = 0; i < n; i++) {
		const gb_figure *p = f->panels[i];
		if (p->kind != GB_FIG_BARS || !p->values || p->cols <= 0)
			return gb_vfail(err, "step %d of the decoding figure has no bars", i + 1);
		rows_max = p->cols > rows_max ? p->cols : rows_max;
		for (int j = 0; j < p->cols; j++) {
			if (isfinite(p->values[j]))
				vmax = fmax(vmax, p->values[j]);
			if (p->ref && isfinite(p->ref[j]))
				vmax = fmax(vmax, p->ref[j]), have_ref = 1;
			if (p->marks && (p->marks[j] & GB_MARK_CUT))
				have_cut = 1;
		}
		have_marks |= p->marks != NULL;
	}
	/* a fixed scale (two charts paired on their common axis) where it holds every bar */
	int fixed = f->range == GB_RANGE_FIXED;
	if (fixed && f->vmax > vmax)
		vmax = f->vmax;
	if (!(vmax > 0))
		vmax = 1;
	/* the key as large as a label beside the bars when it fits the width */
	int lpx = spx(L, LABEL_BIG);
	while (lpx > spx(L, LEGEND_PX) && decode_legend_width(L, lpx, have_cut, have_ref, f->ref_label) > L->x1 - L->x0)
		lpx--;
	/* (bar charts paired, with no marks and no second value: nothing for a key to name) */
	double leg = have_marks || have_ref ? 2.0 * lpx : 0, gapx = 36 * s, gapy = 26 * s;
	/* the grid whose text comes out largest: four steps two by two rather than a row of thin
	 * panels; at a tie the usual grid (up to four steps in a row, else two rows); a figure
	 * that names its columns keeps them */
	int gc0 = f->grid_cols > 0 ? f->grid_cols : n <= 4 ? n : (n + 1) / 2, gc = 0, px = 0;
	gc0 = gc0 > n ? n : gc0;
	double pw = 0, ph = 0;
	/* (twice where the key came out larger than the bars' text: the key then at their size,
	 * the bars get its height; review 10: a key larger than the squeezed steps it names) */
	for (int pass = 0; pass < 2; pass++) {
		gc = gc0, px = 0;
		for (int k = 0; k <= n; k++) {
			int c = k ? k : gc0, r;
			if (k && (f->grid_cols > 0 || c == gc0))
				continue;
			r = (n + c - 1) / c;
			double cw = (L->x1 - L->x0 - (c - 1) * gapx) / c, chh = (L->y1 - L->y0 - leg - (r - 1) * gapy) / r;
			int cpx;
			decode_fit(L, f, cw, chh, rows_max, &cpx);
			if (!k || cpx > px)
				gc = c, px = cpx, pw = cw, ph = chh;
		}
		if (leg <= 0 || lpx <= px || lpx <= spx(L, LEGEND_PX))
			break;
		lpx = px > spx(L, LEGEND_PX) ? px : spx(L, LEGEND_PX);
		leg = 2.0 * lpx;
	}
	/* (charts paired on one axis print their numbers alike) */
	int prec_all = 0;
	for (int i = 0, p; fixed && i < n; i++)
		prec_all = (p = panel_prec(f->panels[i])) > prec_all ? p : prec_all;
	group(L, "steps", 1);
	for (int i = 0; i < n; i++) {
		double x = L->x0 + (i % gc) * (pw + gapx), y = L->y0 + (i / gc) * (ph + gapy);
		decode_panel(L, f->panels[i], x, y, pw, ph, vmax, px, fixed, fixed ? prec_all : panel_prec(f->panels[i]),
		             &first);
		if (i == 0 && L->info)
			L->info->plot = (gb_rect){ (int)x, (int)y, (int)pw, (int)ph };
	}
	group(L, "steps", 0);
	if (leg > 0)
		decode_legend(L, L->y1 - leg / 2, lpx, have_cut, have_ref, f->ref_label);
	if (L->info) {
		L->info->dx = (int)(pw + gapx);
		L->info->dy = (int)(ph + gapy);
		L->info->grid_cols = gc;
		L->info->row_labels_total = L->info->row_labels_shown = rows_max;
	}
	return 0;
}

/* ---- TREE: a beam search ------------------------------------------------------------------ */

int gb_lay_draw_tree(lay *L, gb_verr *err)
{
	const gb_figure *f = L->f;
	int n = f->n_nodes, D = 0, first = 1;
	if (n <= 0)
		return gb_vfail(err, "the tree has no nodes");
	double s = L->s;
	int *count = NULL, widest_col = 1;
	double *ny = malloc(sizeof(double) * (size_t)n);
	for (int i = 0; i < n; i++)
		D = f->nodes[i].depth > D ? f->nodes[i].depth : D;
	count = calloc((size_t)D + 1, sizeof(int));
	if (!ny || !count) {
		free(ny);
		free(count);
		return gb_vfail(err, "out of memory laying out a tree");
	}
	for (int i = 0; i < n; i++)
		widest_col = ++count[f->nodes[i].depth] > widest_col ? count[f->nodes[i].depth] : widest_col;
	double aw = L->x1 - L->x0, ah = L->y1 - L->y0, cw = aw / (D + 1);
	int px = spx(L, 30), vpx = spx(L, TEXT_MIN), inbox = 0, tight = 0;
	double boxw = 0, boxh = 0, elw = 0;
	char sb[64];
	/* The log-probabilities go on the edges while the boxes and the edges' numbers fit side by
	 * side; when they do not (many steps, long tokens) they move into the boxes, whose columns
	 * then need no room between them. Only then is a token shortened (and counted). */
	for (int fits = 0; !fits;) {
		vpx = (int)fmax(spx(L, TEXT_MIN), round(0.8 * px));
		boxh = 1.45 * px + (inbox ? 2.5 : 1.35) * vpx;
		double lab = 0, sw = 0;
		for (int i = 0; i < n; i++) {
			char d[LABEL_BUF];
			gb_label_display(f->nodes[i].label, LABEL_COLS, d, sizeof d);
			lab = fmax(lab, tw(L, GB_FACE_BOLD, px, d)); /* the best path's tokens are bold */
		}
		elw = 0;
		for (int i = 1; i < n; i++) { /* the widest edge and score texts, as drawn */
			gb_format_value(f->nodes[i].edge, 2, sb, sizeof sb);
			elw = fmax(elw, tw(L, GB_FACE_MONO, vpx, sb));
			char sc[48];
			gb_format_value(f->nodes[i].score, 2, sc, sizeof sc);
			snprintf(sb, sizeof sb, "\xCE\xA3 %s", sc);
			sw = fmax(sw, tw(L, GB_FACE_MONO, vpx, sb));
		}
		elw = inbox ? 0 : elw + 10 * s;
		boxw = fmax(lab, sw) + 0.6 * px;
		double gapw = inbox ? (tight ? 10 : 24) * s : elw + 8 * s;
		fits = boxw + gapw <= cw && widest_col * (boxh + 0.6 * px) <= ah;
		if (!fits && px <= spx(L, TEXT_MIN)) {
			if (inbox && tight)
				break;
			/* last, before a token is shortened: the columns closer together */
			if (inbox)
				tight = 1, px = spx(L, 30);
			inbox = 1, px = spx(L, 30);
		} else if (!fits)
			px--;
	}
	/* a column of boxes taller than the room even at the least type: the boxes overlap and hide
	 * one another's numbers. Counted as left out, so a layout with more height is chosen where
	 * there is one (a slide's figure beside text would otherwise squash the tree). */
	if (widest_col * (boxh + 0.6 * px) > ah)
		L->cut += widest_col;
	boxw = fmin(boxw, cw - (inbox ? (tight ? 10 : 24) * s : elw + 8 * s));
	boxw = fmax(boxw, 2 * px);
	/* y of each node: the nodes of a depth in their parents' order (fewer crossings), spread
	 * over the height */
	double pitch = ah / widest_col;
	for (int d = 0; d <= D; d++) {
		int m = 0, *idx = malloc(sizeof(int) * (size_t)count[d]);
		if (!idx)
			continue;
		for (int i = 0; i < n; i++)
			if (f->nodes[i].depth == d)
				idx[m++] = i;
		for (int a = 1; a < m; a++) /* insertion sort by the parent's y, stable */
			for (int b = a; b > 0; b--) {
				int u = idx[b - 1], v = idx[b];
				double yu = f->nodes[u].parent >= 0 ? ny[f->nodes[u].parent] : 0;
				double yv = f->nodes[v].parent >= 0 ? ny[f->nodes[v].parent] : 0;
				if (yv >= yu)
					break;
				idx[b - 1] = v, idx[b] = u;
			}
		for (int k = 0; k < m; k++)
			ny[idx[k]] = L->y0 + ah / 2 + (k - (m - 1) / 2.0) * pitch;
		free(idx);
	}
	/* edges first, under the boxes; the best path last, over the others */
	group(L, "edges", 1);
	for (int pass = 0; pass < 3; pass++)
		for (int i = 0; i < n; i++) {
			const gb_fig_node *nd = &f->nodes[i];
			if (nd->parent < 0)
				continue;
			int st = nd->state, want = st == GB_NODE_PRUNED ? 0 : st == GB_NODE_BEST ? 2 : 1;
			if (want != pass)
				continue;
			double x1 = L->x0 + nd->depth * cw + (cw - boxw) / 2, y1 = ny[i];
			double x0 = L->x0 + (nd->depth - 1) * cw + (cw + boxw) / 2, y0 = ny[nd->parent];
			line2(L, x0, y0, x1, y1, pass == 2 ? 5 * s : pass == 1 ? 2.5 * s : 2 * s,
			      pass == 2 ? BEST_RGB : pass == 1 ? INK2 : CUT_RGB);
		}
	group(L, "edges", 0);
	group(L, "nodes", 1);
	for (int i = 0; i < n; i++) {
		const gb_fig_node *nd = &f->nodes[i];
		double cx = L->x0 + nd->depth * cw + cw / 2, bw = i == 0 && nd->parent < 0 ? fmin(cw - 8 * s, boxw) : boxw;
		double x = cx - bw / 2, y = ny[i] - boxh / 2;
		int st = nd->state;
		const uint8_t *fill = st == GB_NODE_BEST ? BEST_RGB : st == GB_NODE_KEPT ? LIVE_RGB : st == GB_NODE_ROOT ? WHITE : PALE;
		const uint8_t *ink = st == GB_NODE_BEST ? WHITE : st == GB_NODE_PRUNED ? INK2 : INK;
		char d[LABEL_BUF];
		rect(L, x, y, bw, boxh, fill);
		box_frame(L, x, y, bw, boxh, st == GB_NODE_BEST ? 3 * s : fmax(1, 1.5 * s),
		          st == GB_NODE_BEST ? BLACK : st == GB_NODE_PRUNED ? CUT_RGB : AXIS);
		gb_label_display(nd->label, LABEL_COLS, d, sizeof d);
		L->cut += gb_lay_label_cut(nd->label, LABEL_COLS);
		gb_lay_text_fit(L, st == GB_NODE_BEST ? GB_FACE_BOLD : GB_FACE_SANS, px, cx, y + 0.25 * px + 0.9 * px, 0,
		                GB_ANCHOR_MIDDLE, d, bw - 0.4 * px, ink);
		if (nd->parent >= 0 && inbox) { /* the token's log-probability, then the path's score */
			gb_format_value(nd->edge, 2, sb, sizeof sb);
			text(L, GB_FACE_MONO, vpx, cx, y + 1.45 * px + 0.95 * vpx, 0, GB_ANCHOR_MIDDLE, sb, ink);
			char sc[48];
			gb_format_value(nd->score, 2, sc, sizeof sc);
			snprintf(sb, sizeof sb, "\xCE\xA3 %s", sc);
			text(L, GB_FACE_MONO, vpx, cx, y + boxh - 0.35 * vpx, 0, GB_ANCHOR_MIDDLE, sb, ink);
		} else if (nd->parent >= 0) {
			char sc[48];
			gb_format_value(nd->score, 2, sc, sizeof sc);
			snprintf(sb, sizeof sb, "\xCE\xA3 %s", sc);
			text(L, GB_FACE_MONO, vpx, cx, y + boxh - 0.35 * vpx, 0, GB_ANCHOR_MIDDLE, sb, ink);
			/* the edge's log-probability, on a white patch at the edge's middle */
			double ex = cx - cw / 2, ey = (ny[i] + ny[nd->parent]) / 2;
			gb_format_value(nd->edge, 2, sb, sizeof sb);
			double ew = tw(L, GB_FACE_MONO, vpx, sb);
			rect(L, ex - ew / 2 - 3 * s, ey - 0.62 * vpx, ew + 6 * s, 1.24 * vpx, WHITE);
			text(L, GB_FACE_MONO, vpx, ex, mid_baseline(ey, vpx), 0, GB_ANCHOR_MIDDLE, sb,
			     st == GB_NODE_PRUNED ? INK2 : st == GB_NODE_BEST ? BEST_RGB : INK);
		} else
			text(L, GB_FACE_MONO, vpx, cx, y + 1.45 * px + 0.95 * vpx, 0, GB_ANCHOR_MIDDLE, "prompt", ink);
		grow_box(L, x, y, bw, boxh, &first);
	}
	group(L, "nodes", 0);
	if (L->info) {
		L->info->plot = L->info->box;
		L->info->row_labels_total = L->info->row_labels_shown = n;
	}
	free(ny);
	free(count);
	return 0;
}
