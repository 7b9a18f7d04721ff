/* cells_steps.c — the step figures in cells (issue 14, part 3): STRIPS a strip a line after the
 * merge that made it, DECODE each step's candidates as bars of blocks with their fate written
 * out (kept, cut, chosen), TREE the beam search indented by depth. Lines past the area are
 * left out and the title says how many are shown; o->row0 scrolls. */
#include "viz/cells.h"
#include "viz/cells_layout.h"
#include "viz/colormap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct lines {
	area *a;
	const gb_cells_opts *o;
	int y, y1;                /* next line to draw, the first past the body */
	int n, shown;             /* lines made, lines drawn */
} lines;

/* Starts a line: its y, or -1 when it is scrolled off or past the body (counted either way). */
static int next_line(lines *ln)
{
	int k = ln->n++;
	if (k < ln->o->row0 || ln->y >= ln->y1)
		return -1;
	ln->shown++;
	touch(ln->a->g, ln->y);
	return ln->y++;
}

static void text_line(lines *ln, int indent, const char *s, int attr)
{
	int y = next_line(ln);
	if (y >= 0)
		gb_grid_text(ln->a->g, ln->a->x + indent, y, ln->a->w - indent, s, NULL, NULL, attr);
}

/* A strip of tokens on one line after an indent, each on its id's colour (plain: [token]). */
static void strip_line(lines *ln, const gb_figure *p, int indent)
{
	int y = next_line(ln), x = ln->a->x + indent, x1 = ln->a->x + ln->a->w;
	if (y < 0)
		return;
	for (int i = 0; i < p->cols && x < x1; i++) {
		char lab[LBUF], t[LBUF + 8];
		gb_label_display(p->col_labels ? p->col_labels[i] : "", 16, lab, sizeof lab);
		int chosen = p->marks && (p->marks[i] & GB_MARK_CHOSEN);
		if (ln->a->plain) {
			snprintf(t, sizeof t, chosen ? "[*%s*]" : "[%s]", lab);
			x += gb_grid_text(ln->a->g, x, y, x1 - x, t, NULL, NULL, 0);
		} else {
			uint8_t rgb[3];
			if (p->alternate)
				gb_alt_rgb(i, rgb);
			else
				gb_cells_value_rgb(ln->a, p->values[i], rgb);
			snprintf(t, sizeof t, " %s ", lab);
			x += gb_grid_text(ln->a->g, x, y, x1 - x, t, gb_cells_ink_for(ln->a->depth, rgb), rgb,
			                  chosen ? GB_ATTR_BOLD | GB_ATTR_UNDERLINE : 0);
			x++;
		}
	}
}

static void decode_lines(lines *ln, const gb_figure *f)
{
	double vmax = 0;
	for (int i = 0; i < f->n_panels; i++)
		for (int j = 0; j < f->panels[i]->cols; j++)
			if (isfinite(f->panels[i]->values[j]))
				vmax = fmax(vmax, f->panels[i]->values[j]);
	if (f->range == GB_RANGE_FIXED && f->vmax > vmax) /* (paired charts' common axis) */
		vmax = f->vmax;
	if (!(vmax > 0))
		vmax = 1;
	int barw = ln->a->w - 40 < 30 ? ln->a->w - 40 : 30;
	barw = barw < 4 ? 4 : barw;
	for (int i = 0; i < f->n_panels; i++) {
		const gb_figure *p = f->panels[i];
		text_line(ln, 0, p->title ? p->title : "", GB_ATTR_BOLD);
		for (int j = 0; j <= p->cols; j++) {
			for (int c = 0; c < p->n_cuts; c++)
				if (p->cut_at[c] == j) {
					char t[96];
					snprintf(t, sizeof t, "  ---- %s ----", p->cut_label[c]);
					text_line(ln, 0, t, 0);
				}
			if (j == p->cols)
				break;
			char lab[LBUF], t[LBUF + 256], bar[200] = "", num[32];
			int mk = p->marks ? p->marks[j] : 0, len = (int)lround(fmax(0, p->values[j]) / vmax * barw), k = 0;
			gb_label_display(p->col_labels ? p->col_labels[j] : "", 12, lab, sizeof lab);
			for (int b = 0; b < len && k < (int)sizeof bar - 4; b++)
				k += snprintf(bar + k, sizeof bar - (size_t)k, "%s",
				              ln->a->plain ? ((mk & GB_MARK_CUT) ? "/" : "#")
				                           : (mk & GB_MARK_CUT) ? "\xe2\x96\x91" : "\xe2\x96\x88");
			gb_cells_fmt_num(p->values[j], p->precision, num, sizeof num);
			snprintf(t, sizeof t, "  %-12s %s %s%s", lab, bar, num,
			         (mk & GB_MARK_CHOSEN) ? "  <- chosen" : (mk & GB_MARK_CUT) ? "  (cut)" : "");
			text_line(ln, 0, t, (mk & GB_MARK_CHOSEN) ? GB_ATTR_BOLD : (mk & GB_MARK_CUT) ? GB_ATTR_DIM : 0);
		}
	}
}

/* Depth-first from node i: each node under its parent, indented two columns a step. */
static void tree_lines(lines *ln, const gb_figure *f, int i)
{
	const gb_fig_node *nd = &f->nodes[i];
	char lab[LBUF], t[LBUF + 96];
	gb_label_display(nd->label, 24, lab, sizeof lab);
	if (nd->parent < 0)
		snprintf(t, sizeof t, "%s  (prompt)", lab);
	else
		snprintf(t, sizeof t, "%s  %.2f  = %.2f%s", lab, nd->edge, nd->score,
		         nd->state == GB_NODE_BEST ? "  best" : nd->state == GB_NODE_PRUNED ? "  (pruned)" : "");
	int ind = 2 * nd->depth < ln->a->w / 2 ? 2 * nd->depth : ln->a->w / 2;
	text_line(ln, ind, t, nd->state == GB_NODE_BEST ? GB_ATTR_BOLD : nd->state == GB_NODE_PRUNED ? GB_ATTR_DIM : 0);
	for (int c = i + 1; c < f->n_nodes; c++)
		if (f->nodes[c].parent == i)
			tree_lines(ln, f, c);
}

int gb_cells_steps(gb_grid *g, int x, int y, int w, int h, const gb_figure *f, const gb_cells_opts *o,
                   gb_verr *err)
{
	area a;
	char notice[96];
	if (w < 16 || h < 3)
		return gb_cells_too_small(err, w, h, 16, 3);
	if (f->kind == GB_FIG_TREE ? f->n_nodes <= 0 : f->n_panels <= 0)
		return gb_vfail(err, "the figure has nothing to draw");
	gb_cells_area_init(&a, g, x, y, w, h, f, o);
	int title = f->title != NULL, sub = f->subtitle != NULL && h > 4, cap = f->caption != NULL && h > 5;
	lines ln = { &a, o, y + title + sub, y + h - cap, 0, 0 };
	if (f->kind == GB_FIG_STRIPS) {
		int lw = 0;
		for (int i = 0; i < f->n_panels; i++)
			if (f->panels[i]->title && gb_utf8_width(f->panels[i]->title) > lw)
				lw = gb_utf8_width(f->panels[i]->title);
		lw = lw + 2 < w / 2 ? lw + 2 : w / 2;
		for (int i = 0; i < f->n_panels; i++) {
			int yy = ln.y;
			strip_line(&ln, f->panels[i], lw);
			if (yy < ln.y && f->panels[i]->title) {
				char t[512];
				gb_cells_shorten(f->panels[i]->title, lw - 2, t, sizeof t);
				gb_grid_text(g, x, yy, lw - 2, t, NULL, NULL, 0);
			}
		}
	} else if (f->kind == GB_FIG_DECODE)
		decode_lines(&ln, f);
	else
		tree_lines(&ln, f, 0);
	if (title) {
		if (ln.shown < ln.n) {
			gb_cells_range_text(notice, sizeof notice, a.plain, "lines", o->row0, ln.shown, ln.n);
			gb_cells_title_line(&a, y, notice);
		} else
			gb_cells_title_line(&a, y, NULL);
	}
	if (sub)
		gb_cells_subtitle_line(&a, y + title);
	if (cap)
		gb_cells_caption_line(&a, ln.y);
	memset(&g->shown, 0, sizeof g->shown);
	g->shown.row0 = o->row0;
	g->shown.rows = ln.shown;
	g->shown.rows_total = ln.n;
	g->shown.rows_per_line = 1;
	g->shown.cols = g->shown.cols_total = 1;
	return 0;
}
