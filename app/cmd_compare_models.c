/* cmd_compare_models.c — issue 19, part 4: the same view on two models as one figure, since
 * the lessons on architecture choices compare (`compare-models tiny-lm tiny-lm-rope attn 3 2`).
 * Each model is loaded, runs the session's current text (through its own tokenizer) and
 * makes the view exactly as the command would at the prompt; the session's own model, trace
 * and figures are put back afterwards. Two heatmaps become two panels on one colour scale (as
 * `pair` sets them), two grids one grid with a row of panels per model, two token strips or
 * bar charts two rows of one scale, two line plots over the same x one plot with each series named by its
 * model. */
#include "app/cmd.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/commands.h"
#include "app/view19.h"
#include "app/view_common.h"
#include "app/views.h"
#include "viz/colormap.h"

/* The view made by `line` on model dir with the current text: a new figure, or NULL after an
 * error line. The session is as it was afterwards. */
static gb_figure *view_on(session *s, const char *dir, const char *line, const char *text)
{
	gb_model m;
	if (load_model(dir, NULL, &m))
		return NULL;
	if (m.cfg.encdec) {
		errorf("compare-models runs decoder-only models (%s is an encoder-decoder)", dir);
		gb_model_free(&m);
		return NULL;
	}
	/* the session's state, set aside */
	session keep = *s;
	int ctx = s->ctx_trained ? s->model.cfg.n_ctx : 0; /* a context `set context` chose */
	s->model = m;
	gb_model_moved(&s->model, &m);
	s->loaded = 1;
	memset(&s->trace, 0, sizeof s->trace);
	s->have_run = 0;
	s->fig = s->prev_fig = NULL;
	s->ctx_trained = 0;
	s->win = NULL; /* the window keeps showing the session's figure */
	s->interactive = 0;
	int *ids = NULL, n = 0;
	gb_figure *f = NULL;
	char cs[16];
	snprintf(cs, sizeof cs, "%d", ctx);
	/* each model runs as long a text as the session's (past its trained context when its
	 * positions allow: learned ones refuse, as set context says) */
	if ((!ctx || !set_context(s, cs)) && !encode(s, text, &ids, &n)) {
		int C = s->model.cfg.n_ctx;
		if (n > C) { /* as run does: the last tokens */
			memmove(ids, ids + (n - C), (size_t)C * sizeof *ids);
			n = C;
		}
		if (!forward(s, ids, n, NULL, 0)) {
			/* the view draws itself at the prompt: not here, only its figure is wanted */
			fflush(stdout);
			int out = dup(1), null = open("/dev/null", O_WRONLY);
			if (out >= 0 && null >= 0)
				dup2(null, 1);
			int rc = command_line(s, line);
			fflush(stdout);
			if (out >= 0 && null >= 0)
				dup2(out, 1);
			if (out >= 0)
				close(out);
			if (null >= 0)
				close(null);
			if (!rc && s->fig) {
				f = s->fig;
				s->fig = NULL;
			} else if (!rc)
				errorf("'%s' makes no figure: compare-models sets two figures side by side", line);
		}
	}
	free(ids);
	gb_fig_free(s->fig);
	gb_fig_free(s->prev_fig);
	gb_trace_free(&s->trace);
	gb_model_free(&s->model);
	*s = keep;
	return f;
}

static const char *short_name(const char *dir)
{
	const char *p = dir + strlen(dir);
	while (p > dir && p[-1] == '/')
		p--;
	const char *e = p;
	while (p > dir && p[-1] != '/')
		p--;
	static char buf[2][96];
	static int k;
	k ^= 1;
	snprintf(buf[k], sizeof buf[k], "%.*s", (int)(e - p), p);
	return buf[k];
}

/* A token strip or bar chart as a heatmap, so two can share a grid: one row (column == 0), or
 * one column, a row a bar with the bar's label beside it (column == 1: for two charts whose
 * bars differ, each model's own top tokens, so each panel keeps its own labels). */
static gb_figure *as_heat(gb_figure *f, int column)
{
	gb_figure *h = gb_fig_new(GB_FIG_HEATMAP);
	const char *none[1] = { "" };
	gb_fig_set_values(h, f->values, column ? f->cols : 1, column ? 1 : f->cols);
	if (f->col_labels)
		(column ? gb_fig_set_row_labels : gb_fig_set_col_labels)(h, (const char *const *)f->col_labels);
	(column ? gb_fig_set_col_labels : gb_fig_set_row_labels)(h, none);
	h->cmap = f->cmap;
	h->view_cmap = f->view_cmap;
	h->view_cmap_set = f->view_cmap_set;
	h->numbers = 1;
	h->precision = f->precision;
	gb_fig_set_title(h, f->title);
	gb_fig_set_caption(h, f->caption);
	gb_fig_free(f);
	return h;
}

/* Whether two bar charts name the same bars in the same order. */
static int same_bars(const gb_figure *a, const gb_figure *b)
{
	if (a->cols != b->cols || !a->col_labels != !b->col_labels)
		return 0;
	for (int i = 0; a->col_labels && i < a->cols; i++)
		if (strcmp(a->col_labels[i] ? a->col_labels[i] : "", b->col_labels[i] ? b->col_labels[i] : ""))
			return 0;
	return 1;
}

static void panel_title(gb_figure *p, const char *model)
{
	char t[256];
	snprintf(t, sizeof t, "%s%s%s", model, p->title ? ": " : "", p->title ? p->title : "");
	gb_fig_set_title(p, t);
	gb_fig_set_subtitle(p, NULL);
}

/* Where the sentences or clauses that two captions end with in common start in a (its length:
 * none in common); only at a clause's start ("; " or ". " before it in both), so a shared
 * "Darker: the model expected it; ..." is said once and a number's last digits never are. */
static size_t common_tail(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), best = la;
	for (size_t k = 1; k <= la && k <= lb && a[la - k] == b[lb - k]; k++) {
		size_t i = la - k, j = lb - k;
		if (i >= 2 && j >= 2 && a[i - 1] == ' ' && (a[i - 2] == ';' || a[i - 2] == '.') &&
		    b[j - 1] == ' ' && b[j - 2] == a[i - 2])
			best = i;
	}
	return best;
}

/* The caption of two figures: one when they say the same, else each after its model's name,
 * what both end with said once after them (G6: the loss strip's "Darker: ... bright: ..." was
 * printed twice). */
static void both_captions(gb_figure *g, const gb_figure *a, const gb_figure *b, const char *na, const char *nb)
{
	if (a->caption && b->caption && strcmp(a->caption, b->caption)) {
		char cap[1024];
		size_t ta = common_tail(a->caption, b->caption), la = strlen(a->caption);
		size_t tb = strlen(b->caption) - (la - ta);
		if (ta < la) { /* "na: ...; nb: .... Shared." with the separator the tail had */
			int pa = (int)ta - 2, pb = (int)tb - 2; /* without "; " or ". " */
			snprintf(cap, sizeof cap, "%s: %.*s;  %s: %.*s%c %s", na, pa, a->caption, nb, pb, b->caption,
			         a->caption[ta - 2], a->caption + ta);
		} else
			snprintf(cap, sizeof cap, "%s: %s;  %s: %s", na, a->caption, nb, b->caption);
		gb_fig_set_caption(g, cap);
	} else
		gb_fig_set_caption(g, a->caption);
}

/* Two figures of one kind as one; takes both. */
static gb_figure *combine(gb_figure *a, gb_figure *b, const char *na, const char *nb)
{
	gb_figure *g = NULL;
	if ((a->kind == GB_FIG_STRIP && b->kind == GB_FIG_STRIP) || (a->kind == GB_FIG_BARS && b->kind == GB_FIG_BARS &&
	                                                            !a->marks && !b->marks)) {
		/* token strips, or bar charts (the experts' load, ALiBi's slopes): a row each, with
		 * its numbers, on one scale; bar charts of different bars (each model's own most
		 * probable tokens) a column each, side by side, each with its own labels */
		int own = a->kind == GB_FIG_BARS && !same_bars(a, b);
		a = as_heat(a, own);
		b = as_heat(b, own);
		g = gb_fig_new(GB_FIG_GRID);
		g->grid_cols = own ? 2 : 1;
	} else if (a->kind == GB_FIG_HEATMAP && b->kind == GB_FIG_HEATMAP) {
		g = gb_fig_new(GB_FIG_GRID);
		g->grid_cols = 2;
	}
	if (g) {
		float lo[2], hi[2];
		int bad;
		gb_fig_range(a, &lo[0], &hi[0], &bad);
		gb_fig_range(b, &lo[1], &hi[1], &bad);
		g->cmap = a->cmap;
		g->view_cmap = a->view_cmap;
		g->view_cmap_set = a->view_cmap_set;
		g->range = GB_RANGE_FIXED;
		g->vmin = lo[0] < lo[1] ? lo[0] : lo[1];
		g->vmax = hi[0] > hi[1] ? hi[0] : hi[1];
		g->masked = a->masked || b->masked;
		g->mask_zero = a->mask_zero || b->mask_zero;
		g->panel_labels = 1;
		gb_fig_set_title(g, a->title);
		both_captions(g, a, b, na, nb);
		gb_fig_set_axes(g, a->row_title, a->col_title);
		gb_figure *p[2] = { a, b };
		const char *nm[2] = { na, nb };
		for (int i = 0; i < 2; i++) {
			p[i]->range = GB_RANGE_FIXED;
			p[i]->vmin = g->vmin;
			p[i]->vmax = g->vmax;
			gb_fig_set_title(p[i], nm[i]);
			gb_fig_set_subtitle(p[i], NULL);
			gb_fig_add_panel(g, p[i]);
		}
		return g;
	}
	if (a->kind == GB_FIG_GRID && b->kind == GB_FIG_GRID && a->n_panels && b->n_panels) {
		/* a row of panels per model: A's then B's, grid_cols the wider's count */
		g = gb_fig_new(GB_FIG_GRID);
		int na_ = a->n_panels, nb_ = b->n_panels, cols = na_ > nb_ ? na_ : nb_;
		if (cols > 8 || na_ != nb_) {
			/* a model grid (layers x heads): keep each model's own layout */
			cols = a->grid_cols > 0 ? a->grid_cols : 1;
			if ((b->grid_cols > 0 ? b->grid_cols : 1) != cols) {
				errorf("the two models' grids have different shapes (%d and %d columns): compare one layer or head",
				       cols, b->grid_cols);
				gb_fig_free(g);
				gb_fig_free(a);
				gb_fig_free(b);
				return NULL;
			}
		}
		g->grid_cols = cols;
		g->cmap = a->cmap;
		g->view_cmap = a->view_cmap;
		g->view_cmap_set = a->view_cmap_set;
		float lo[2], hi[2];
		int bad;
		gb_fig_range(a, &lo[0], &hi[0], &bad);
		gb_fig_range(b, &lo[1], &hi[1], &bad);
		g->range = GB_RANGE_FIXED;
		g->vmin = lo[0] < lo[1] ? lo[0] : lo[1];
		g->vmax = hi[0] > hi[1] ? hi[0] : hi[1];
		g->masked = a->masked || b->masked;
		g->mask_zero = a->mask_zero || b->mask_zero;
		g->panel_labels = a->panel_labels;
		gb_fig_set_title(g, a->title);
		both_captions(g, a, b, na, nb);
		gb_fig_set_axes(g, a->row_title, a->col_title);
		gb_figure *src[2] = { a, b };
		const char *nm[2] = { na, nb };
		for (int k = 0; k < 2; k++) {
			for (int i = 0; i < src[k]->n_panels; i++) {
				gb_figure *p = src[k]->panels[i];
				src[k]->panels[i] = NULL;
				p->range = GB_RANGE_FIXED;
				p->vmin = g->vmin;
				p->vmax = g->vmax;
				panel_title(p, nm[k]);
				gb_fig_add_panel(g, p);
			}
			/* a row per model: pad A's row when it is shorter */
			for (int i = src[k]->n_panels; k == 0 && i % cols; i++) {
				gb_figure *e = gb_fig_new(GB_FIG_HEATMAP);
				float z = 0;
				gb_fig_set_values(e, &z, 1, 1);
				gb_fig_add_panel(g, e);
			}
			src[k]->n_panels = 0;
		}
		gb_fig_free(a);
		gb_fig_free(b);
		return g;
	}
	if (a->kind == GB_FIG_LINES && b->kind == GB_FIG_LINES) {
		int same = a->n_xs == b->n_xs && (!a->xs) == (!b->xs);
		for (int i = 0; same && a->xs && i < a->n_xs; i++)
			same = a->xs[i] == b->xs[i];
		if (!same) {
			errorf("the two line plots have different x values (the models tokenize the text differently?)");
			gb_fig_free(a);
			gb_fig_free(b);
			return NULL;
		}
		g = gb_fig_new(GB_FIG_LINES);
		if (a->xs)
			gb_fig_set_xs(g, a->xs, a->n_xs);
		gb_figure *src[2] = { a, b };
		const char *nm[2] = { na, nb };
		for (int k = 0; k < 2; k++)
			for (int i = 0; i < src[k]->n_series; i++) {
				char lab[160];
				snprintf(lab, sizeof lab, "%s: %s", nm[k], src[k]->series[i].label);
				if (!gb_fig_add_series(g, lab, src[k]->series[i].y, src[k]->series[i].n)) {
					/* one colour a model; its series apart by dash and weight, as its
					 * own view draws them, or else in turn: solid, dashed, heavy ... */
					gb_series *d = &g->series[g->n_series - 1], *o = &src[k]->series[i];
					int styled = 0;
					for (int j = 0; j < src[k]->n_series; j++)
						styled |= src[k]->series[j].dash || src[k]->series[j].weight > 1;
					d->gaps = o->gaps;
					d->hue = k + 1;
					d->dash = styled ? o->dash : i & 1;
					d->weight = styled ? o->weight : (i & 2) ? 1.8f : 0;
				}
			}
		if (a->range == GB_RANGE_FIXED && b->range == GB_RANGE_FIXED) { /* both fixed: one axis for both */
			g->range = GB_RANGE_FIXED;
			g->vmin = a->vmin < b->vmin ? a->vmin : b->vmin;
			g->vmax = a->vmax > b->vmax ? a->vmax : b->vmax;
		}
		gb_fig_set_title(g, a->title);
		both_captions(g, a, b, na, nb);
		gb_fig_set_axes(g, a->row_title, a->col_title);
		gb_fig_free(a);
		gb_fig_free(b);
		return g;
	}
	errorf("compare-models sets heatmaps, grids, token strips, bar charts or line plots side by side; the view makes a %s and a %s",
	       gb_fig_kind_name(a->kind), gb_fig_kind_name(b->kind));
	gb_fig_free(a);
	gb_fig_free(b);
	return NULL;
}

/* compare-models A B VIEW [ARGS]: rest holds "A B VIEW ARGS" as typed. */
int cmd_compare_models(session *s, int argc, char **argv, const char *rest)
{
	if (argc < 4)
		return usage(argv[0]);
	if (need_run(s))
		return -1;
	if (s->model.cfg.encdec || !s->text) {
		errorf("compare-models runs the current text of a decoder-only model: run a text first");
		return -1;
	}
	/* the view's command as typed: rest after the two model words */
	const char *p = rest;
	for (int w = 0; w < 2; w++) {
		while (*p == ' ' || *p == '\t')
			p++;
		while (*p && *p != ' ' && *p != '\t')
			p++;
	}
	while (*p == ' ' || *p == '\t')
		p++;
	const command *c = command_find(argv[3]);
	if (!c)
		return -1;
	/* a view only reads the run and the model and draws (REPLAY in the table); a NO_REPLAY
	 * command (dump, bench, export-model, ...) would write or measure twice. Of the REPLAY
	 * ones, these run a text rather than show one. */
	static const char *const refuse[] = { "run", "generate", "beam", "translate" };
	int refused = c->replay != REPLAY;
	for (size_t i = 0; i < sizeof refuse / sizeof *refuse; i++)
		refused |= !strcmp(c->name, refuse[i]);
	if (refused) {
		errorf("compare-models shows a view (attn, heads, loss, positions, next, ...), not '%s'", c->name);
		return -1;
	}
	char *text = strdup(s->text);
	gb_figure *a = view_on(s, argv[1], p, text), *b = a ? view_on(s, argv[2], p, text) : NULL;
	free(text);
	if (!a || !b) {
		gb_fig_free(a);
		return -1;
	}
	/* what the view selected (its subtitle after the model and the text: "layer 1, head 2"),
	 * named in words as the single view names it, not as the command typed ("loss --curve") */
	char what[160] = "";
	if (a->subtitle) {
		const char *w = a->subtitle;
		for (int k = 0; k < 2 && w; k++)
			if ((w = strstr(w, " \xC2\xB7 ")))
				w += 4;
		if (w)
			snprintf(what, sizeof what, " \xC2\xB7 %s", w);
	}
	const char *na = short_name(argv[1]), *nb = short_name(argv[2]);
	char ma[96], mb[96];
	snprintf(ma, sizeof ma, "%s", na);
	snprintf(mb, sizeof mb, "%s", nb);
	gb_figure *g = combine(a, b, ma, mb);
	if (!g)
		return -1;
	/* the subtitle names both models and the text */
	char sub[512], q[160];
	int len = (int)strlen(s->text), cut = len > 48;
	if (cut) /* at a character's start */
		for (len = 45; len > 0 && ((unsigned char)s->text[len] & 0xC0) == 0x80; len--)
			;
	snprintf(q, sizeof q, "\u201c%.*s%s\u201d", len, s->text, cut ? "\u2026" : "");
	snprintf(sub, sizeof sub, "%s and %s · %s%s", ma, mb, q, what);
	gb_fig_set_subtitle(g, sub);
	gb_fig_add_meta(g, "Models", sub);
	gb_fig_add_meta(g, "View", p);
	return show_figure(s, g);
}
