/* cells_diagram.c — block diagrams (GB_FIG_DIAGRAM: the model's architecture) in cells.
 *
 * Each block is a box of box-drawing characters holding its label and its detail (its shape);
 * the blocks of a repeated group (a layer) are framed together under the group's title
 * ("layer × 4"); arrows lead from block to block. The highlighted block (the stage on show)
 * is drawn in double lines, with the colormap's colour behind its text and a ◀ beside it, so
 * it stands out at plain depth too. Two stacks (an encoder-decoder: figure.h's stack2) stand
 * side by side when the width allows, with an arrow from the first's output into the block
 * it feeds (the cross-attention), else one above the other.
 *
 * The style follows the room: a block's label and detail on one line when the width allows,
 * else on two; boxes with arrows between them, boxes, text with arrows, text alone; when even
 * that does not fit, a window of its lines with a notice ("lines 1–18 of 21"), starting at
 * o->row0 (g->shown counts lines). */
#include "viz/cells.h"
#include "viz/cells_layout.h"
#include "viz/colormap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GAP = 6 };           /* columns between two stacks: room for the arrow between them */
enum { DETAIL_MIN = 14 };   /* the narrowest detail worth a column of its own */

/* Box-drawing characters: light (a block), double (the highlighted block), rounded (a group). */
static const uint32_t LIGHT[6] = { 0x250C, 0x2500, 0x2510, 0x2502, 0x2514, 0x2518 };
static const uint32_t DOUBLE[6] = { 0x2554, 0x2550, 0x2557, 0x2551, 0x255A, 0x255D };
static const uint32_t ROUND[6] = { 0x256D, 0x2500, 0x256E, 0x2502, 0x2570, 0x256F };
enum { TL, H, TR, V, BL, BR };
#define ARROW_DOWN 0x2193u  /* ↓ */
#define ARROW_RIGHT 0x25B6u /* ▶ */
#define MARK_LEFT 0x25C0u   /* ◀ */

typedef struct style {
	int tl;                   /* text lines of a block: label and detail on one, or one each */
	int box;                  /* a box around the text (2 more lines) */
	int arrows;               /* a line with ↓ between consecutive blocks */
} style;

typedef struct dlay {
	gb_grid *g;               /* the whole diagram, before windowing */
	const gb_figure *f;
	area *a;
	style st;
	int lw;                   /* label column, in terminal columns */
} dlay;

static int maxi(int a, int b) { return a > b ? a : b; }

/* Lines stack [b0, b1) takes in style st. */
static int stack_lines(const gb_figure *f, int b0, int b1, style st)
{
	int n = 0, prev = 0;
	for (int i = b0; i < b1; i++) {
		int g = f->blocks[i].group;
		if (g != prev && prev > 0)
			n++; /* the last group's bottom */
		if (i > b0 && st.arrows)
			n++;
		if (g != prev && g > 0)
			n++; /* the group's top, with its title */
		n += st.tl + 2 * st.box;
		prev = g;
	}
	return n + (prev > 0);
}

/* The widest detail of a stack. */
static int detail_width(const gb_figure *f, int b0, int b1)
{
	int m = 0;
	for (int i = b0; i < b1; i++)
		m = maxi(m, f->blocks[i].detail ? gb_utf8_width(f->blocks[i].detail) : 0);
	return m;
}

static void put(gb_grid *g, int x, int y, uint32_t cp, int attr)
{
	gb_cells_set_cell(g, x, y, cp, NULL, NULL, attr);
	touch(g, y);
}

/* A box's top (which 0) or bottom (which 1) border from x0 to x1. */
static void border(gb_grid *g, int x0, int x1, int y, const uint32_t *ch, int which, int attr)
{
	put(g, x0, y, ch[which ? BL : TL], attr);
	for (int x = x0 + 1; x < x1; x++)
		put(g, x, y, ch[H], attr);
	put(g, x1, y, ch[which ? BR : TR], attr);
}

/* A block's text inside [x0, x1] (the sides excluded) from line y: label, then detail, on one
 * line or on two (d->st.tl). */
static void block_text(dlay *d, const gb_fig_block *b, int x0, int x1, int y)
{
	char buf[512];
	gb_grid *g = d->g;
	area *a = d->a;
	uint8_t bg[3];
	const uint8_t *fg = NULL, *bgp = NULL;
	if (b->highlight && !a->plain) {
		gb_cmap_rgb(a->f->cmap, 0.8, bg);
		bgp = bg;
		fg = gb_cells_ink_for(a->depth, bg);
		for (int l = 0; l < d->st.tl; l++)
			for (int x = x0; x <= x1; x++)
				gb_cells_set_cell(g, x, y + l, ' ', fg, bgp, 0);
	}
	int room = x1 - x0 - 1, x = x0 + 1;
	if (room <= 0)
		return;
	int lw = d->st.tl == 2 ? room : d->lw < room ? d->lw : room;
	gb_cells_shorten(b->label, lw, buf, sizeof buf);
	gb_grid_text(g, x, y, lw, buf, fg, bgp, GB_ATTR_BOLD);
	int dx = d->st.tl == 2 ? x + 2 : x + lw + 2, dy = y + d->st.tl - 1, dw = x1 - dx;
	if (b->detail && dw > 0) {
		gb_cells_shorten(b->detail, dw, buf, sizeof buf);
		gb_grid_text(g, dx, dy, dw, buf, fg, bgp, b->highlight ? GB_ATTR_BOLD : 0);
	}
	for (int l = 0; l < d->st.tl; l++)
		touch(g, y + l);
}

/* Draws stack [b0, b1) in columns [x, x + w) from line 0 of d->g; returns the line of each
 * block's text in ty[i - b0] and the last line used + 1. */
static int draw_stack(dlay *d, int b0, int b1, int x, int w, int y, int *ty)
{
	const gb_figure *f = d->f;
	gb_grid *g = d->g;
	int prev = 0, cx = x + w / 2;
	int fx0 = x, fx1 = x + w - 1;       /* a group's frame */
	int bx0 = x + 2, bx1 = x + w - 3;   /* a block's box, inside the frame's margin */
	int top = -1;                        /* the open group's top line */
	for (int i = b0; i < b1; i++) {
		const gb_fig_block *b = &f->blocks[i];
		int grp = b->group;
		if (grp != prev && prev > 0) { /* close the group */
			border(g, fx0, fx1, y, ROUND, 1, GB_ATTR_DIM);
			for (int yy = top + 1; yy < y; yy++) {
				put(g, fx0, yy, ROUND[V], GB_ATTR_DIM);
				put(g, fx1, yy, ROUND[V], GB_ATTR_DIM);
			}
			y++;
		}
		if (i > b0 && d->st.arrows)
			put(g, cx, y++, ARROW_DOWN, 0);
		if (grp != prev && grp > 0) { /* open a group: its title in the top border */
			char t[256], buf[256];
			border(g, fx0, fx1, y, ROUND, 0, GB_ATTR_DIM);
			const char *title = grp <= f->n_groups && f->group_titles[grp - 1] ? f->group_titles[grp - 1] : NULL;
			if (title && w > 8) {
				snprintf(t, sizeof t, " %s ", title);
				gb_cells_shorten(t, w - 6, buf, sizeof buf);
				gb_grid_text(g, fx0 + 2, y, w - 6, buf, NULL, NULL, GB_ATTR_BOLD);
			}
			top = y++;
		}
		const uint32_t *ch = b->highlight ? DOUBLE : LIGHT;
		int battr = b->highlight ? GB_ATTR_BOLD : 0;
		int tl = d->st.tl;
		if (d->st.box) {
			border(g, bx0, bx1, y, ch, 0, battr);
			for (int l = 1; l <= tl; l++) {
				put(g, bx0, y + l, ch[V], battr);
				put(g, bx1, y + l, ch[V], battr);
			}
			border(g, bx0, bx1, y + tl + 1, ch, 1, battr);
			block_text(d, b, bx0 + 1, bx1 - 1, y + 1);
			ty[i - b0] = y + 1;
			if (b->highlight)
				put(g, bx1 + 1, y + 1, MARK_LEFT, GB_ATTR_BOLD);
			y += tl + 2;
		} else {
			block_text(d, b, bx0, bx1, y);
			ty[i - b0] = y;
			if (b->highlight) {
				put(g, bx0, y, ARROW_RIGHT, GB_ATTR_BOLD);
				put(g, bx1 + 1, y, MARK_LEFT, GB_ATTR_BOLD);
			}
			y += tl;
		}
		prev = grp;
	}
	if (prev > 0) {
		border(g, fx0, fx1, y, ROUND, 1, GB_ATTR_DIM);
		for (int yy = top + 1; yy < y; yy++) {
			put(g, fx0, yy, ROUND[V], GB_ATTR_DIM);
			put(g, fx1, yy, ROUND[V], GB_ATTR_DIM);
		}
		y++;
	}
	return y;
}

/* The arrow from the first stack's output (below its last line, out_y, under column ax) into
 * the block of the second stack whose text is on line cy, entered from its left at bx. */
static void feed_arrow(gb_grid *g, int ax, int out_y, int rx, int cy, int bx)
{
	gb_cell *c = gb_grid_cell(g, ax, out_y - 1);
	if (c && c->cp == ROUND[H])
		c->cp = 0x252C; /* ┬: the output leaves the stack's frame here */
	put(g, ax, out_y, cy == out_y ? ROUND[H] : 0x2514, 0); /* └ */
	for (int x = ax + 1; x < rx; x++)
		put(g, x, out_y, 0x2500, 0);
	if (cy < out_y) {
		put(g, rx, out_y, 0x2518, 0); /* ┘ */
		for (int y = cy + 1; y < out_y; y++)
			put(g, rx, y, 0x2502, 0);
		put(g, rx, cy, 0x250C, 0); /* ┌ */
	} else if (cy > out_y) {
		put(g, rx, out_y, 0x2510, 0); /* ┐ */
		for (int y = out_y + 1; y < cy; y++)
			put(g, rx, y, 0x2502, 0);
		put(g, rx, cy, 0x2514, 0); /* └ */
	} else
		put(g, rx, out_y, 0x2500, 0);
	for (int x = rx + 1; x < bx - 1; x++) {
		gb_cell *k = gb_grid_cell(g, x, cy);
		put(g, x, cy, k && k->cp == ROUND[V] ? 0x253C : 0x2500, 0); /* ┼ across a frame */
	}
	put(g, bx - 1, cy, ARROW_RIGHT, GB_ATTR_BOLD);
}

int gb_cells_diagram(gb_grid *g, int x, int y, int w, int h, const gb_figure *f,
                     const gb_cells_opts *o, gb_verr *err)
{
	area a;
	char notice[96];
	if (gb_cells_check_area(g, x, y, w, h, f, err))
		return -1;
	if (!f->blocks || f->n_blocks <= 0)
		return gb_vfail(err, "the block diagram has no blocks");
	gb_cells_area_init(&a, g, x, y, w, h, f, o);
	int title = f->title != NULL, cap = f->caption != NULL;
	int avail = h - title - cap;
	if (avail < 3 && cap)
		cap = 0, avail++;
	int n = f->n_blocks, s2 = f->stack2 > 0 && f->stack2 < n ? f->stack2 : n;
	int two = s2 < n;
	/* widths: the label column, the details, the column of each stack */
	dlay d = { 0 };
	d.f = f;
	d.a = &a;
	for (int i = 0; i < n; i++)
		d.lw = maxi(d.lw, gb_utf8_width(f->blocks[i].label));
	d.lw = d.lw > 28 ? 28 : d.lw;
	int dw = maxi(detail_width(f, 0, s2), two ? detail_width(f, s2, n) : 0);
	/* a column: frame and box sides with a space inside the box, a space left of the box and
	 * the ◀ right of it (8) */
	int natural = 8 + d.lw + 2 + dw, natural2 = 8 + maxi(d.lw, 2 + dw);
	int min_col = 8 + d.lw + 2 + DETAIL_MIN;
	if (w < 8 + 8 || avail < 1)
		return gb_cells_too_small(err, w, h, 16, 3 + title + cap);
	int side = two && (w - GAP) / 2 >= min_col;
	int cw = side ? (w - GAP) / 2 : w;
	int fits1 = cw >= natural; /* label and detail side by side, whole */
	cw = cw > (fits1 ? natural : natural2) ? (fits1 ? natural : natural2) : cw;
	/* the roomiest style that fits: whole text first, then boxes, then arrows */
	static const style one[] = { { 1, 1, 1 }, { 1, 1, 0 }, { 2, 1, 1 }, { 2, 1, 0 }, { 1, 0, 1 }, { 1, 0, 0 } };
	static const style two_[] = { { 2, 1, 1 }, { 2, 1, 0 }, { 2, 0, 1 }, { 2, 0, 0 }, { 1, 0, 0 } };
	const style *list = fits1 ? one : two_;
	int n_st = fits1 ? (int)(sizeof one / sizeof *one) : (int)(sizeof two_ / sizeof *two_);
	int need = 0, k;
	for (k = 0; k < n_st; k++) {
		int la = stack_lines(f, 0, s2, list[k]), lb = two ? stack_lines(f, s2, n, list[k]) : 0;
		need = side ? maxi(la + (f->feeds > 0), lb) : la + lb + (two && list[k].box); /* a line between */
		if (need <= avail)
			break;
	}
	if (k == n_st)
		k = n_st - 1;
	d.st = list[k];
	/* the whole diagram into a grid of its own, then the window of it that fits */
	gb_grid full;
	if (gb_grid_init(&full, w, need, err))
		return -1;
	d.g = &full;
	int *ty = malloc(sizeof(int) * (size_t)n);
	if (!ty) {
		gb_grid_free(&full);
		return gb_vfail(err, "out of memory laying out a block diagram");
	}
	int x0 = side ? (w - (2 * cw + GAP)) / 2 : (w - cw) / 2;
	x0 = x0 < 0 ? 0 : x0;
	int la = draw_stack(&d, 0, s2, x0, cw, 0, ty);
	if (two) {
		int bx = side ? x0 + cw + GAP : x0, by = side ? 0 : la + d.st.box;
		draw_stack(&d, s2, n, bx, cw, by, ty + s2);
		if (side && f->feeds > 0 && f->feeds <= n - s2)
			feed_arrow(&full, x0 + cw / 2, la, x0 + cw + GAP / 2, ty[s2 + f->feeds - 1], bx + 2);
	}
	free(ty);
	int used = full.used_h;
	int shown = used < avail ? used : avail, first = clampi(o->row0, 0, used - shown);
	int yy = y;
	if (title) {
		if (shown < used) {
			gb_cells_range_text(notice, sizeof notice, a.plain, "lines", first, shown, used);
			gb_cells_title_line(&a, yy++, notice);
		} else
			gb_cells_title_line(&a, yy++, NULL);
	}
	for (int r = 0; r < shown; r++, yy++) {
		memcpy(&g->cells[(size_t)yy * g->w + x], &full.cells[(size_t)(first + r) * full.w],
		       sizeof *g->cells * (size_t)w);
		touch(g, yy);
	}
	gb_grid_free(&full);
	if (cap)
		gb_cells_caption_line(&a, yy);
	memset(&g->shown, 0, sizeof g->shown);
	g->shown.row0 = first;
	g->shown.rows = shown;
	g->shown.rows_total = used;
	g->shown.rows_per_line = 1;
	return 0;
}
