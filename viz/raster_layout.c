/* raster_layout.c — the figure layout's shared parts (raster_layout.h): the frame every kind
 * gets (title and subtitle, wrapped to the width; caption and the notes on masked and
 * non-finite values), text shortened to a width and counted, tick steps and their labels,
 * token labels for display, the colorbar, a value's colour and the outline around cells;
 * gb_layout_draw, which measures the figure, draws the frame and hands the content box to the
 * layout of its kind; and the report of what the layout measured (gb_layout_report_make). */
#include "viz/raster.h"
#include "viz/raster_layout.h"
#include "viz/colormap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The outline around a heatmap's cells, so cells near the colormap's light end (viridis'
 * yellow, gray's white) do not melt into the page; lighter than the axes, darker than GRID. */
static const uint8_t OUTLINE[3] = { 0x99, 0x99, 0x99 };

/* ---- layout helpers ------------------------------------------------------------------------ */

/* gb_fig_fmt_num (figure.h): the one formatter every backend shares. */
void gb_format_value(double v, int precision, char *out, int cap)
{
	gb_fig_fmt_num(v, precision, out, cap > 0 ? (size_t)cap : 0);
}

/* A "nice" tick step (1, 2 or 5 times a power of ten) giving about n ticks over span. */
static double nice_step(double span, int n)
{
	double raw, mag, norm;
	if (!(span > 0) || n < 1)
		return 1;
	raw = span / n;
	mag = pow(10, floor(log10(raw)));
	norm = raw / mag;
	return (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
}

void gb_lay_tick_label(double v, double step, char *out, int cap)
{
	gb_fig_fmt_tick(v, step, out, cap > 0 ? (size_t)cap : 0);
}

/* Ticks in [lo, hi]; returns how many (at most max) and their step. */
int gb_lay_ticks(double lo, double hi, int want, double *t, int max, double *step_out)
{
	double step = nice_step(hi - lo, want), first = ceil(lo / step - 1e-9) * step;
	int n = 0;
	for (double v = first; v <= hi + step * 1e-9 && n < max; v = first + n * step)
		t[n++] = v;
	*step_out = step;
	return n;
}

/* Whether gb_label_display shortens label to max_cols columns. */
int gb_lay_label_cut(const char *label, int max_cols)
{
	char full[LABEL_BUF * 2];
	gb_label_display(label ? label : "", 4 * LABEL_BUF, full, sizeof full);
	return gb_utf8_width(full) > max_cols;
}

/* Display labels for n tokens: shortened to max_cols columns, spaces and control bytes made
 * visible. (The caller counts the ones it draws shortened: gb_lay_label_cut.) */
char *gb_lay_display_labels(lay *L, char *const *labels, int n, int max_cols)
{
	char *d;
	(void)L;
	if (!labels || n <= 0)
		return NULL;
	d = malloc((size_t)n * LABEL_BUF);
	if (!d)
		return NULL;
	for (int i = 0; i < n; i++)
		gb_label_display(labels[i] ? labels[i] : "", max_cols, d + (size_t)i * LABEL_BUF, LABEL_BUF);
	return d;
}

double gb_lay_max_width(lay *L, int face, int px, const char *labels, int n, int stride)
{
	double m = 0;
	for (int i = 0; labels && i < n; i += stride) {
		double w = tw(L, face, px, labels + (size_t)i * LABEL_BUF);
		m = w > m ? w : m;
	}
	return m;
}

/* ---- text that must fit: shortened (and counted), or wrapped ------------------------------ */

/* s (display text) shortened with "…" to at most max_w pixels at px: returns 1 when it was
 * shortened (the caller counts it), 0 when it fits as it is. At least "…" is kept. */
int gb_lay_shorten(lay *L, int face, int px, const char *s, double max_w, char *out, size_t cap)
{
	size_t n = strlen(s);
	snprintf(out, cap, "%s", s);
	if (tw(L, face, px, out) <= max_w)
		return 0;
	while (n > 0) {
		/* back up one code point */
		do
			n--;
		while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80);
		snprintf(out, cap, "%.*s\xe2\x80\xa6", (int)n, s);
		if (tw(L, face, px, out) <= max_w)
			return 1;
	}
	snprintf(out, cap, "\xe2\x80\xa6");
	return 1;
}

/* Text drawn no longer than max_w: shortened with "…" where it would be, and counted. */
void gb_lay_text_fit(lay *L, int face, int px, double x, double y, double angle, int anchor, const char *s,
                     double max_w, const uint8_t rgb[3])
{
	char buf[WRAP_BUF];
	L->cut += gb_lay_shorten(L, face, px, s, max_w, buf, sizeof buf);
	text(L, face, px, x, y, angle, anchor, buf, rgb);
}

/* Greedy word wrap of s at px into lines of at most avail pixels. Returns how many lines it
 * needs (a word wider than avail on its own counts as one more than max, so it never
 * "fits"); w holds at most max of them, the last shortened with "…" when more were needed. */
static int wrap_lines(lay *L, int face, int px, const char *s, double avail, int max, wrapped *w)
{
	char line[WRAP_BUF] = "", cand[WRAP_BUF];
	const char *p = s;
	int need = 0, too_wide = 0;
	w->n = 0;
	if (max >= 1 && strlen(s) < WRAP_BUF && tw(L, face, px, s) <= avail) {
		/* as written, spaces and all */
		snprintf(w->line[0], WRAP_BUF, "%s", s);
		w->n = 1;
		return 1;
	}
	while (*p) {
		const char *e;
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		e = strchr(p, ' ');
		if (!e)
			e = p + strlen(p);
		if (*line)
			snprintf(cand, sizeof cand, "%s %.*s", line, (int)(e - p), p);
		else
			snprintf(cand, sizeof cand, "%.*s", (int)(e - p), p);
		if (*line && tw(L, face, px, cand) > avail) {
			if (need < max)
				snprintf(w->line[need], WRAP_BUF, "%s", line);
			need++;
			snprintf(line, sizeof line, "%.*s", (int)(e - p), p);
		} else
			snprintf(line, sizeof line, "%s", cand);
		too_wide |= tw(L, face, px, line) > avail;
		p = e;
	}
	if (*line) {
		if (need < max)
			snprintf(w->line[need], WRAP_BUF, "%s", line);
		need++;
	}
	w->n = need < max ? need : max;
	if (need > max || too_wide) {
		/* the last line that shows takes what is left, shortened */
		if (need > max) {
			char rest[WRAP_BUF];
			snprintf(rest, sizeof rest, "%s …", w->line[max - 1]);
			snprintf(w->line[max - 1], WRAP_BUF, "%s", rest);
		}
		for (int i = 0; i < w->n; i++) {
			char cut[WRAP_BUF];
			if (gb_lay_shorten(L, face, px, w->line[i], avail, cut, sizeof cut))
				snprintf(w->line[i], WRAP_BUF, "%s", cut);
		}
		return max + 1;
	}
	return need;
}

/* The largest size in [lo, hi] at which s fits avail in the fewest lines (up to max): one line
 * at any size first, then two, ... At lo and max lines, what is left is shortened and counted. */
int gb_lay_fit_lines(lay *L, int face, int hi, int lo, const char *s, double avail, int max,
                     wrapped *w)
{
	for (int lines = 1; lines <= max; lines++)
		for (int px = hi; px >= lo; px--)
			if (wrap_lines(L, face, px, s, avail, lines, w) <= lines)
				return px;
	wrap_lines(L, face, lo, s, avail, max, w);
	L->cut++;
	return lo;
}

/* ---- frame: title, subtitle, caption, the notes on masked and non-finite values ------------ */

static void frame(lay *L)
{
	const gb_figure *f = L->f;
	double m = MARGIN * L->s, avail;
	char note[128], mnote[96];
	const char *lines[3];
	int nl = 0;
	wrapped w;
	L->x0 = m;
	L->y0 = m;
	L->x1 = L->W - m;
	L->y1 = L->H - m;
	avail = L->x1 - L->x0;
	if (f->title && *f->title) {
		int px = gb_lay_fit_lines(L, GB_FACE_BOLD, spx(L, TITLE_PX), spx(L, TITLE_MIN), f->title, avail, 2, &w);
		double wmax = 0, lh = 1.2 * px;
		for (int i = 0; i < w.n; i++) {
			text(L, GB_FACE_BOLD, px, L->W / 2, L->y0 + 0.93 * px + i * lh, 0, GB_ANCHOR_MIDDLE, w.line[i], INK);
			wmax = fmax(wmax, tw(L, GB_FACE_BOLD, px, w.line[i]));
		}
		if (L->info)
			L->info->title = (gb_rect){ (int)(L->W / 2 - wmax / 2), (int)L->y0, (int)ceil(wmax),
			                            (int)ceil((w.n - 1) * lh + 1.17 * px) };
		L->y0 += w.n * lh + 8 * L->s;
	}
	if (f->subtitle && *f->subtitle) {
		int px = gb_lay_fit_lines(L, GB_FACE_SANS, spx(L, SUBTITLE_PX), spx(L, TEXT_MIN), f->subtitle, avail, 2, &w);
		double lh = 1.25 * px;
		for (int i = 0; i < w.n; i++)
			text(L, GB_FACE_SANS, px, L->W / 2, L->y0 + 0.93 * px + i * lh, 0, GB_ANCHOR_MIDDLE, w.line[i], INK2);
		L->y0 += w.n * lh + 6 * L->s;
	}
	if ((f->title && *f->title) || (f->subtitle && *f->subtitle))
		L->y0 += 8 * L->s;
	if (f->caption && *f->caption)
		lines[nl++] = f->caption;
	if (L->n_masked) {
		if (f->mask_what[0])
			snprintf(mnote, sizeof mnote, "%d cell%s in gray: %s", L->n_masked, L->n_masked == 1 ? "" : "s", f->mask_what);
		else
			snprintf(mnote, sizeof mnote, "%d masked cell%s (%s), shown in gray", L->n_masked,
			         L->n_masked == 1 ? "" : "s", f->mask_zero ? "weight 0" : "-inf");
		lines[nl++] = mnote;
	}
	if (L->n_bad) {
		const char *where = f->kind == GB_FIG_LINES ? "gaps in the lines" : "shown in magenta";
		int kinds = (L->n_nan > 0) + (L->n_pinf > 0) + (L->n_ninf > 0);
		if (kinds == 1)
			snprintf(note, sizeof note, "%d value%s %s (%s)", L->n_bad, L->n_bad == 1 ? " is" : "s are",
			         L->n_nan ? "NaN" : L->n_pinf ? "inf" : "-inf", where);
		else {
			int k = snprintf(note, sizeof note, "%d values are not finite (%s):", L->n_bad, where);
			const char *sep = " ";
			if (L->n_nan)
				k += snprintf(note + k, sizeof note - (size_t)k, "%s%d NaN", sep, L->n_nan), sep = ", ";
			if (L->n_pinf)
				k += snprintf(note + k, sizeof note - (size_t)k, "%s%d inf", sep, L->n_pinf), sep = ", ";
			if (L->n_ninf)
				snprintf(note + k, sizeof note - (size_t)k, "%s%d -inf", sep, L->n_ninf);
		}
		lines[nl++] = note;
	}
	if (nl) {
		/* one size for every line under the plot, the largest at which each fits in as few
		 * lines as it can (the caption up to three) */
		wrapped cw[3];
		int px = spx(L, CAPTION_PX), total = 0;
		for (int i = 0; i < nl; i++) {
			int p = gb_lay_fit_lines(L, GB_FACE_SANS, spx(L, CAPTION_PX), spx(L, TEXT_MIN), lines[i], avail,
			                         i == 0 ? 3 : 2, &cw[i]);
			px = p < px ? p : px;
		}
		for (int i = 0; i < nl; i++) {
			wrap_lines(L, GB_FACE_SANS, px, lines[i], avail, i == 0 ? 3 : 2, &cw[i]);
			total += cw[i].n;
		}
		{
			double lh = 1.35 * px, y = L->y1 - (total - 1) * lh - 0.24 * px;
			for (int i = 0; i < nl; i++)
				for (int k = 0; k < cw[i].n; k++, y += lh)
					text(L, GB_FACE_SANS, px, L->W / 2, y, 0, GB_ANCHOR_MIDDLE, cw[i].line[k], INK2);
			L->y1 -= total * lh + 12 * L->s;
		}
	}
}

/* ---- colorbar ---------------------------------------------------------------------------- */

/* Where value v sits along the colour bar, 0 at the bottom (lo) and 1 at the top (hi): linear
 * in value, for a truncated scale too (its colours are gb_fig_unit's, its ticks evenly spaced). */
static double bar_pos(const lay *L, double v)
{
	return L->hi > L->lo ? (v - L->lo) / (L->hi - L->lo) : 0.5;
}

/* The colour bar's ticks (t) and the step each is labelled with (st): nice values over the
 * range; for a centred scale (GB_RANGE_CENTERED) whose short side got no tick, that side's own
 * nice tick too (-0.1 on -0.17 .. 1.6), when it stands at least gap (a fraction of the bar)
 * from every other tick. */
static int bar_ticks(const lay *L, int want, double gap, double *t, double *st, int max)
{
	double s1, s2, u[8];
	int n = gb_lay_ticks(L->lo, L->hi, want, t, max, &s1);
	for (int i = 0; i < n; i++)
		st[i] = s1;
	if (L->f->range != GB_RANGE_CENTERED || !(L->lo < 0 && L->hi > 0) || n >= max)
		return n;
	int neg = 0, pos = 0;
	for (int i = 0; i < n; i++) {
		neg += t[i] < -s1 * 1e-6;
		pos += t[i] > s1 * 1e-6;
	}
	if (neg && pos)
		return n;
	int m = neg ? gb_lay_ticks(0, L->hi, 2, u, 8, &s2) : gb_lay_ticks(L->lo, 0, 2, u, 8, &s2);
	if (m < 1)
		return n;
	double v = neg ? u[m - 1] : u[0]; /* the short side's outermost nice value */
	if (fabs(v) < s2 * 1e-6)
		return n;
	for (int i = 0; i < n; i++)
		if (fabs(bar_pos(L, v) - bar_pos(L, t[i])) < gap)
			return n;
	t[n] = v;
	st[n] = s2;
	return n + 1;
}

double gb_lay_colorbar_width(lay *L)
{
	char buf[64];
	double t[16], st[16], m = 0;
	int n = bar_ticks(L, 6, 0, t, st, 16), px = spx(L, TICK_PX);
	for (int i = 0; i < n; i++) {
		gb_lay_tick_label(t[i], st[i], buf, sizeof buf);
		double w = tw(L, GB_FACE_SANS, px, buf);
		m = w > m ? w : m;
	}
	return (CB_GAP + CB_W + TICK_LEN + 5) * L->s + m;
}

void gb_lay_colorbar(lay *L, double x, double y, double h)
{
	double w = CB_W * L->s, t[16], st[16], lw = fmax(1, round(L->s));
	int px = spx(L, TICK_PX), n;
	char buf[64];
	group(L, "colorbar", 1);
	L->p->ramp(L->p->ctx, x, y, w, h, L->f->cmap, to_t(L, L->lo), to_t(L, L->hi));
	rect(L, x - lw, y - lw, w + 2 * lw, lw, AXIS);
	rect(L, x - lw, y + h, w + 2 * lw, lw, AXIS);
	rect(L, x - lw, y, lw, h, AXIS);
	rect(L, x + w, y, lw, h, AXIS);
	/* no two labels closer than gap (centre to centre, a fraction of the bar): a label's
	 * height and most of another between them, so they never touch (L16: "0.4" on "0" on a
	 * slide's short bar); the nice ticks thinned to fewer where even they would crowd */
	double gap = h > 0 ? 1.6 * px / h : 1;
	for (int want = h > 300 * L->s ? 6 : 4;; want--) {
		double s1;
		int m = gb_lay_ticks(L->lo, L->hi, want, t, 16, &s1), crowd = 0;
		for (int i = 1; i < m; i++)
			crowd |= fabs(bar_pos(L, t[i]) - bar_pos(L, t[i - 1])) < gap;
		if (!crowd || want <= 2) {
			n = bar_ticks(L, want, gap, t, st, 16);
			break;
		}
	}
	int kept = 0; /* and on a bar too short even for two, the first of a crowding pair only */
	for (int i = 0; i < n; i++) {
		int ok = 1;
		for (int j = 0; j < kept; j++)
			ok &= fabs(bar_pos(L, t[i]) - bar_pos(L, t[j])) >= gap;
		if (ok)
			t[kept] = t[i], st[kept] = st[i], kept++;
	}
	n = kept;
	for (int i = 0; i < n; i++) {
		double ty = y + h - bar_pos(L, t[i]) * h;
		rect(L, x + w, ty - lw / 2, TICK_LEN * L->s, lw, AXIS);
		gb_lay_tick_label(t[i], st[i], buf, sizeof buf);
		text(L, GB_FACE_SANS, px, x + w + (TICK_LEN + 4) * L->s, mid_baseline(ty, px), 0,
		     GB_ANCHOR_START, buf, INK);
	}
	group(L, "colorbar", 0);
	if (L->info)
		L->info->colorbar = (gb_rect){ (int)floor(x + 0.5), (int)floor(y + 0.5),
		                               (int)floor(x + w + 0.5) - (int)floor(x + 0.5),
		                               (int)floor(y + h + 0.5) - (int)floor(y + 0.5) };
}

/* ---- heatmaps and grids of them ------------------------------------------------------------- */
/* ---- the colour of a value, the outline of cells ----------------------------------------- */

/* The colour of value v of figure m (the figure drawn, or one of its panels). */
void gb_lay_cell_colour(const lay *L, const gb_figure *m, float v, uint8_t rgb[3])
{
	if (gb_fig_is_masked(L->f, m, v))
		memcpy(rgb, gb_mask_rgb, 3);
	else if (!isfinite(v))
		memcpy(rgb, gb_bad_rgb, 3);
	else
		gb_cmap_rgb(L->f->cmap, to_t(L, v), rgb);
}

/* A thin gray frame just outside a heatmap's cells (x, y, w, h): 1 px at scale 1, scaled with
 * it, so no cell is covered and a light cell at the edge still ends somewhere. */
void gb_lay_outline(lay *L, int x, int y, int w, int h)
{
	double lw = fmax(1, round(L->s));
	group(L, "outline", 1);
	rect(L, x - lw, y - lw, w + 2 * lw, lw, OUTLINE);
	rect(L, x - lw, y + h, w + 2 * lw, lw, OUTLINE);
	rect(L, x - lw, y, lw, h, OUTLINE);
	rect(L, x + w, y, lw, h, OUTLINE);
	group(L, "outline", 0);
}

/* Longest printed number of a matrix, in characters. */
/* ---- entry points ---------------------------------------------------------------------------- */

void gb_raster_panel_xy(const gb_raster_info *in, int p, int *x, int *y)
{
	int gc = in->grid_cols > 0 ? in->grid_cols : 1, r = p / gc, b = 0;
	if (in->grid_blocks > 1 && in->grid_rows > 0) {
		b = r % in->grid_blocks; /* (rows in turn to the blocks: raster_heatmap.c's slot) */
		r /= in->grid_blocks;
	}
	*x = in->plot.x + b * in->block_dx + (p % gc) * in->dx;
	*y = in->plot.y + r * in->dy;
}

void gb_layout_report_make(const gb_figure *f, const gb_raster_info *in, gb_layout_report *r)
{
	r->keys[0] = "Kind";
	r->vals[0] = gb_fig_kind_name(f ? f->kind : -1);
	r->keys[1] = "PlotBox";
	snprintf(r->buf[0], sizeof r->buf[0], "%d %d %d %d", in->box.x, in->box.y, in->box.w, in->box.h);
	r->keys[2] = "MinTextPx";
	snprintf(r->buf[1], sizeof r->buf[1], "%d", in->min_text_px);
	r->keys[3] = "LabelsCut";
	snprintf(r->buf[2], sizeof r->buf[2], "%d", in->labels_cut);
	r->keys[4] = "LabelsShown";
	snprintf(r->buf[3], sizeof r->buf[3], "rows %d/%d, columns %d/%d", in->row_labels_shown,
	         in->row_labels_total, in->col_labels_shown, in->col_labels_total);
	for (int i = 1; i < GB_LAYOUT_REPORT_N; i++)
		r->vals[i] = r->buf[i - 1];
}

int gb_layout_draw(const gb_figure *f, double w, double h, double scale, gb_painter *p,
                   gb_raster_info *info, gb_verr *err)
{
	lay L = { 0 };
	int rc;
	if (!f)
		return gb_vfail(err, "no figure to draw");
	if (!(scale > 0))
		scale = 1;
	L.f = f;
	L.p = p;
	L.W = w;
	L.H = h;
	L.s = scale;
	L.info = info;
	if (info)
		memset(info, 0, sizeof *info);
	if (f->kind == GB_FIG_LINES) {
		L.lo = 0;
		L.hi = 1;
	} else
		gb_fig_range(f, &L.lo, &L.hi, &L.n_bad);
	{
		gb_fig_counts k;
		gb_fig_count(f, &k);
		L.n_nan = k.nan;
		L.n_pinf = k.pinf;
		L.n_ninf = k.ninf;
		L.n_masked = k.masked;
	}
	L.n_bad = L.n_nan + L.n_pinf + L.n_ninf;
	if (info) {
		info->n_bad = L.n_bad;
		info->n_masked = L.n_masked;
	}
	rect(&L, 0, 0, w, h, WHITE);
	frame(&L);
	switch (f->kind) {
	case GB_FIG_HEATMAP: rc = gb_lay_draw_heatmap(&L, err); break;
	case GB_FIG_GRID: rc = gb_lay_draw_grid(&L, err); break;
	case GB_FIG_BARS: rc = gb_lay_draw_bars(&L, err); break;
	case GB_FIG_LINES: rc = gb_lay_draw_lines(&L, err); break;
	case GB_FIG_STRIP: rc = gb_lay_draw_strip(&L, err); break;
	case GB_FIG_DIAGRAM: rc = gb_lay_draw_diagram(&L, err); break;
	case GB_FIG_ATTNLINES: rc = gb_lay_draw_attnlines(&L, err); break;
	case GB_FIG_STRIPS: rc = gb_lay_draw_strips(&L, err); break;
	case GB_FIG_DECODE: rc = gb_lay_draw_decode(&L, err); break;
	case GB_FIG_TREE: rc = gb_lay_draw_tree(&L, err); break;
	default: rc = gb_vfail(err, "unknown figure kind %d", f->kind);
	}
	if (!rc && p->failed)
		rc = gb_vfail(err, "out of memory drawing the figure");
	if (info) {
		info->min_text_px = L.min_px;
		info->labels_cut = L.cut;
		if (!info->box.w && !info->box.h)
			info->box = info->plot;
	}
	return rc;
}

void gb_lay_value_axis(lay *L, double x, double y, double w, double h, double lo, double hi, int want, int tpx)
{
	double t[16], step, s = L->s;
	int nt = gb_lay_ticks(lo, hi, want, t, 16, &step);
	for (int i = 0; i < nt; i++) {
		double tx = x + (t[i] - lo) / (hi - lo) * w;
		char buf[48];
		rect(L, tx - 0.5 * s, y, fmax(1, s), h, GRID);
		gb_lay_tick_label(t[i], step, buf, sizeof buf);
		rect(L, tx - 0.5 * s, y + h, fmax(1, s), TICK_LEN * s, AXIS);
		text(L, GB_FACE_SANS, tpx, tx, y + h + TICK_LEN * s + 1.05 * tpx, 0, GB_ANCHOR_MIDDLE, buf, INK);
	}
	rect(L, x, y + h, w, fmax(1, s), AXIS);
}
