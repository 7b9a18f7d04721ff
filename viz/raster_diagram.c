/* raster_diagram.c — the layout of block diagrams (GB_FIG_DIAGRAM: the model's architecture)
 * for the raster and SVG painters, so the window, a PNG and an SVG draw the same slide.
 *
 * Blocks are boxes stacked top to bottom with an arrow from each to the next, their label in
 * bold and their detail (the shape) beside it, or under it when the column is narrow. The
 * blocks of a repeated group sit on a tinted panel framed under the group's title ("layer ×
 * 4"). The highlighted block (the stage on show) is filled with the colormap's colour (so a
 * palette chosen for colour-blind viewers reaches it too), drawn with a heavy border and
 * marked "◀ on show". Two stacks (figure.h's stack2: an encoder-decoder) stand side by side,
 * an arrow leading from the first's output into the block it feeds.
 *
 * Sizes follow the content box, so the diagram fills the slide: the block height is what the
 * tallest stack leaves (at most 96 px at scale 1), and text grows with it, never below 18 px
 * at scale 1 (a detail that still does not fit is cut with "…"). The arrows run down the
 * middle of a stack, or right of a group's title when it is long. */
#include "viz/raster.h"
#include "viz/raster_layout.h"
#include "viz/colormap.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define TEXT_MIN  18   /* the smallest text of a slide, at scale 1 */
#define BLOCK_MAX 96   /* the tallest block, at scale 1 */
/* Gaps in block heights: an arrow's, a group's title band and its bottom margin; tighter
 * when the text takes two lines and the blocks need the height. */
typedef struct gaps { double arrow, gtop, gbot; } gaps;
static const gaps ROOMY = { 0.5, 1.0, 0.35 }, TIGHT = { 0.3, 0.8, 0.25 };

static const uint8_t BOX_FILL[3] = { 0xFF, 0xFF, 0xFF };
static const uint8_t BOX_EDGE[3] = { 0x66, 0x66, 0x66 };
static const uint8_t GROUP_FILL[3] = { 0xF1, 0xF3, 0xF6 };
static const uint8_t GROUP_EDGE[3] = { 0x9A, 0xA0, 0xA8 };

typedef struct dl {
	lay *L;
	const gb_figure *f;
	double bh;                /* block height */
	gaps gp;                  /* the gaps, in block heights */
	int lpx, dpx;             /* label and detail text sizes */
	int two_line;             /* detail under the label */
	double lw;                /* the label column's width (one-line) */
	double pad;               /* inside a box, left and right */
} dl;

static double fmax3(double a, double b, double c) { return fmax(a, fmax(b, c)); }

/* The height stack [b0, b1) takes with block height bh. */
static double stack_h(const gb_figure *f, int b0, int b1, double bh, gaps gp)
{
	double h = 0;
	int prev = 0;
	for (int i = b0; i < b1; i++) {
		int g = f->blocks[i].group;
		if (g != prev && prev > 0)
			h += gp.gbot * bh;
		if (i > b0)
			h += gp.arrow * bh;
		if (g != prev && g > 0)
			h += gp.gtop * bh;
		h += bh;
		prev = g;
	}
	return h + (prev > 0 ? gp.gbot * bh : 0);
}

static void frame_rect(lay *L, double x, double y, double w, double h, double lw, const uint8_t rgb[3])
{
	rect(L, x, y, w, lw, rgb);
	rect(L, x, y + h - lw, w, lw, rgb);
	rect(L, x, y, lw, h, rgb);
	rect(L, x + w - lw, y, lw, h, rgb);
}

/* s cut with "…" to fit width w at px (out holds cap bytes). */
static void fit_text(lay *L, int face, int px, const char *s, double w, char *out, size_t cap)
{
	snprintf(out, cap, "%s", s ? s : "");
	if (tw(L, face, px, out) <= w)
		return;
	size_t n = strlen(out);
	while (n > 0) {
		do /* back one UTF-8 character */
			n--;
		while (n > 0 && ((unsigned char)out[n] & 0xC0) == 0x80);
		if (n + 4 > cap)
			continue;
		memcpy(out + n, "\xE2\x80\xA6", 4);
		if (tw(L, face, px, out) <= w)
			return;
	}
	snprintf(out, cap, "\xE2\x80\xA6");
}

static void arrow_head(lay *L, double x, double y, double dx, double dy, double size, double lw)
{
	/* two strokes back from the tip (x, y), along -(dx, dy) turned by +-30 degrees */
	double c = cos(M_PI / 6), s = sin(M_PI / 6), xy[6];
	xy[0] = x - size * (dx * c - dy * s);
	xy[1] = y - size * (dy * c + dx * s);
	xy[2] = x;
	xy[3] = y;
	xy[4] = x - size * (dx * c + dy * s);
	xy[5] = y - size * (dy * c - dx * s);
	L->p->polyline(L->p->ctx, xy, 3, lw, AXIS);
}

static void arrow_down(lay *L, double x, double y0, double y1)
{
	double lw = fmax(1.5, 2 * L->s), xy[4] = { x, y0, x, y1 - lw };
	L->p->polyline(L->p->ctx, xy, 2, lw, AXIS);
	arrow_head(L, x, y1 - lw / 2, 0, 1, fmin(12 * L->s, (y1 - y0) * 0.6), lw);
}

/* One block's box and text at (x, y), w wide. */
static void draw_block(dl *d, const gb_fig_block *b, double x, double y, double w, int mark)
{
	lay *L = d->L;
	double s = L->s, lw = b->highlight ? fmax(2, 3.5 * s) : fmax(1, 1.5 * s);
	uint8_t fill[3];
	const uint8_t *ink = INK, *ink2 = INK2;
	char buf[512];
	if (b->highlight) {
		gb_cmap_rgb(L->f->cmap, 0.8, fill);
		ink = ink2 = gb_lightness(fill) > 55 ? BLACK : WHITE;
	} else
		memcpy(fill, BOX_FILL, 3);
	rect(L, x, y, w, d->bh, fill);
	frame_rect(L, x, y, w, d->bh, lw, b->highlight ? INK : BOX_EDGE);
	double tx = x + d->pad, room = w - 2 * d->pad;
	if (d->two_line) {
		double lh = d->lpx * 1.15 + d->dpx * 1.15, top = y + (d->bh - lh) / 2;
		fit_text(L, GB_FACE_BOLD, d->lpx, b->label, room, buf, sizeof buf);
		text(L, GB_FACE_BOLD, d->lpx, tx, top + 0.9 * d->lpx, 0, GB_ANCHOR_START, buf, ink);
		if (b->detail) {
			fit_text(L, GB_FACE_SANS, d->dpx, b->detail, room - d->dpx, buf, sizeof buf);
			text(L, GB_FACE_SANS, d->dpx, tx + d->dpx, top + 1.15 * d->lpx + 0.9 * d->dpx, 0, GB_ANCHOR_START, buf,
			     ink2);
		}
	} else {
		double my = y + d->bh / 2;
		fit_text(L, GB_FACE_BOLD, d->lpx, b->label, fmin(d->lw, room), buf, sizeof buf);
		text(L, GB_FACE_BOLD, d->lpx, tx, mid_baseline(my, d->lpx), 0, GB_ANCHOR_START, buf, ink);
		if (b->detail && room - d->lw - d->pad > 0) {
			fit_text(L, GB_FACE_SANS, d->dpx, b->detail, room - d->lw - d->pad, buf, sizeof buf);
			text(L, GB_FACE_SANS, d->dpx, tx + d->lw + d->pad, mid_baseline(my, d->dpx), 0, GB_ANCHOR_START, buf,
			     ink2);
		}
	}
	if (b->highlight && mark)
		text(L, GB_FACE_BOLD, d->dpx, x + w + 10 * s, mid_baseline(y + d->bh / 2, d->dpx), 0, GB_ANCHOR_START,
		     "\xE2\x97\x80 on show", INK);
}

/* The size of a group's title. */
static int title_px(const dl *d) { return (int)fmax(spx(d->L, TEXT_MIN), fmin(d->lpx, 0.42 * d->bh)); }

/* Stack [b0, b1) in x .. x + w from y; each block's top in top[i - b0]; returns the bottom. */
static double draw_stack(dl *d, int b0, int b1, double x, double w, double y, int mark, double *top)
{
	lay *L = d->L;
	const gb_figure *f = d->f;
	double s = L->s, inset = fmax(14 * s, 0.28 * d->bh), bh = d->bh;
	/* the arrows run down the middle, or right of the widest group title when it reaches
	 * the middle, so no title is crossed out */
	double ax = x + w / 2;
	for (int i = b0; i < b1; i++) {
		int g = f->blocks[i].group;
		if (g > 0 && g <= f->n_groups && f->group_titles[g - 1])
			ax = fmax(ax, x + inset + tw(L, GB_FACE_BOLD, title_px(d), f->group_titles[g - 1]) + 24 * s);
	}
	ax = fmin(ax, x + w - inset - 24 * s);
	/* where the blocks go, and the groups' panels under them */
	double yy = y, gy = 0;
	int prev = 0;
	for (int i = b0; i <= b1; i++) {
		int g = i < b1 ? f->blocks[i].group : 0;
		if (g != prev && prev > 0) {
			double gh = yy + d->gp.gbot * bh - gy;
			rect(L, x, gy, w, gh, GROUP_FILL);
			frame_rect(L, x, gy, w, gh, fmax(1, 1.5 * s), GROUP_EDGE);
			const char *title = prev <= f->n_groups ? f->group_titles[prev - 1] : NULL;
			if (title) {
				int px = title_px(d);
				char buf[256];
				fit_text(L, GB_FACE_BOLD, px, title, w - 2 * inset, buf, sizeof buf);
				text(L, GB_FACE_BOLD, px, x + inset, gy + d->gp.gtop * bh * 0.5 + 0.35 * px, 0, GB_ANCHOR_START,
				     buf, INK);
			}
			yy += d->gp.gbot * bh;
		}
		if (i == b1)
			break;
		if (i > b0)
			yy += d->gp.arrow * bh;
		if (g != prev && g > 0) {
			gy = yy;
			yy += d->gp.gtop * bh;
		}
		top[i - b0] = yy;
		yy += bh;
		prev = g;
	}
	/* the blocks and the arrows between them */
	for (int i = b0; i < b1; i++) {
		draw_block(d, &f->blocks[i], x + inset, top[i - b0], w - 2 * inset, mark);
		if (i + 1 < b1)
			arrow_down(L, ax, top[i - b0] + bh, top[i + 1 - b0]);
	}
	return yy;
}

int gb_lay_draw_diagram(lay *L, gb_verr *err)
{
	const gb_figure *f = L->f;
	int n = f->n_blocks;
	if (!f->blocks || n <= 0)
		return gb_vfail(err, "the block diagram has no blocks");
	double s = L->s, W = L->x1 - L->x0, Hh = L->y1 - L->y0;
	int s2 = f->stack2 > 0 && f->stack2 < n ? f->stack2 : n, two = s2 < n;
	dl d = { 0 };
	d.L = L;
	d.f = f;
	/* the block height the tallest stack leaves (the first stack also needs room under it
	 * for the arrow to the second) */
	d.gp = ROOMY;
	double ua = stack_h(f, 0, s2, 1, d.gp) + (two && f->feeds > 0 ? 0.6 : 0), ub = two ? stack_h(f, s2, n, 1, d.gp) : 0;
	d.bh = fmin(Hh / fmax(ua, ub), BLOCK_MAX * s);
	d.pad = fmax(12 * s, 0.3 * d.bh);
	if (d.bh < TEXT_MIN * s * 1.3)
		return gb_vfail(err, "a %gx%g figure is too small for %d blocks at %d px text: export it larger",
		                L->W, L->H, n, (int)lround(TEXT_MIN * s));
	/* columns */
	double gap = two ? fmax(90 * s, 0.08 * W) : 0, mark_w = 0;
	double colw = two ? (W - gap) / 2 : W;
	/* text: as large as the block allows, then one line if label and detail fit side by side */
	d.lpx = (int)lround(fmin(fmax(0.40 * d.bh, TEXT_MIN * s), 28 * s));
	d.dpx = (int)lround(fmin(fmax(0.34 * d.bh, TEXT_MIN * s), 24 * s));
	double lmax = 0, dmax = 0;
	for (int i = 0; i < n; i++) {
		lmax = fmax(lmax, tw(L, GB_FACE_BOLD, d.lpx, f->blocks[i].label));
		if (f->blocks[i].detail)
			dmax = fmax(dmax, tw(L, GB_FACE_SANS, d.dpx, f->blocks[i].detail));
	}
	if (!two)
		mark_w = 10 * s + tw(L, GB_FACE_BOLD, d.dpx, "\xE2\x97\x80 on show") + 4 * s;
	double inset = fmax(14 * s, 0.28 * d.bh);
	double natural = 2 * inset + 2 * d.pad + lmax + d.pad + dmax;
	d.lw = lmax;
	if (natural + mark_w > colw) {
		/* two lines when the block is tall enough for them, else one line with the detail cut */
		double need2 = 1.15 * (TEXT_MIN * s) * 2 + 10 * s;
		gaps gp = TIGHT;
		double ua2 = stack_h(f, 0, s2, 1, gp) + (two && f->feeds > 0 ? 0.6 : 0), ub2 = two ? stack_h(f, s2, n, 1, gp) : 0;
		double bh2 = fmin(Hh / fmax(ua2, ub2), BLOCK_MAX * s);
		if (bh2 >= need2) {
			d.two_line = 1;
			d.gp = gp;
			d.bh = bh2;
			d.pad = fmax(12 * s, 0.3 * d.bh);
			d.lpx = (int)lround(fmax(fmin(28 * s, (d.bh - 10 * s) / 2.3 * 1.1), TEXT_MIN * s));
			d.dpx = (int)lround(fmax(fmin(24 * s, (d.bh - 10 * s) / 2.3), TEXT_MIN * s));
			lmax = 0;
			dmax = 0;
			for (int i = 0; i < n; i++) {
				lmax = fmax(lmax, tw(L, GB_FACE_BOLD, d.lpx, f->blocks[i].label));
				if (f->blocks[i].detail)
					dmax = fmax(dmax, tw(L, GB_FACE_SANS, d.dpx, f->blocks[i].detail) + d.dpx);
			}
			natural = 2 * inset + 2 * d.pad + fmax(lmax, dmax);
		}
	}
	if (!two) {
		/* one stack: as wide as its text needs, at least 62% of the slide, centred */
		colw = fmin(W - mark_w * 2, fmax(natural, 0.62 * W));
		if (colw < natural && W - mark_w >= natural)
			colw = natural;
	} else
		colw = fmin(colw, fmax(natural, 0.45 * W));
	double used_w = two ? 2 * colw + gap : colw;
	double xa = L->x0 + (W - used_w) / 2;
	double ha = stack_h(f, 0, s2, d.bh, d.gp), hb = two ? stack_h(f, s2, n, d.bh, d.gp) : 0;
	double y0 = L->y0 + (Hh - fmax3(ha + (two && f->feeds ? 0.6 * d.bh : 0), hb, 0)) / 2;
	double top[256], *tops = n <= 256 ? top : NULL;
	if (!tops)
		return gb_vfail(err, "a block diagram of %d blocks is more than this layout draws (256)", n);
	group(L, "diagram", 1);
	double ya = draw_stack(&d, 0, s2, xa, colw, y0, !two, tops);
	if (two) {
		double xb = xa + colw + gap;
		draw_stack(&d, s2, n, xb, colw, y0, 0, tops + s2);
		if (f->feeds > 0 && f->feeds <= n - s2) {
			/* from under the first stack, through the gap, into the side of the block fed */
			double lw = fmax(1.5, 2 * s), ax = xa + colw / 2, ry = ya + 0.35 * d.bh, gx = xa + colw + gap / 2;
			double cy = tops[s2 + f->feeds - 1] + d.bh / 2, ex = xb + fmax(14 * s, 0.28 * d.bh);
			double xy[10] = { ax, ya, ax, ry, gx, ry, gx, cy, ex - lw, cy };
			L->p->polyline(L->p->ctx, xy, 5, lw, AXIS);
			arrow_head(L, ex - lw / 2, cy, 1, 0, 12 * s, lw);
		}
	}
	group(L, "diagram", 0);
	if (L->info) {
		L->info->plot = (gb_rect){ (int)floor(xa), (int)floor(y0), (int)ceil(used_w),
		                           (int)ceil(fmax3(ha, hb, 0)) };
		L->info->label_stride = 1;
		L->info->col_label_stride = 1;
	}
	return 0;
}
