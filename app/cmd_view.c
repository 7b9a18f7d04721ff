/* cmd_view.c — the views at the prompt: each stage of the pipeline as a figure (embed, pe,
 * qkv, scores, attn, cross, model, ln, ffn, resid, next; show NAME for any trace tensor),
 * figures of numbers the user gives (calc, masks), the other places a figure is seen
 * (window, tui), and the architecture (arch). */
#include "app/cmd.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/lesson.h"
#include "app/tui.h"
#include "app/view_common.h"
#include "app/view_arch.h"
#include "app/views.h"
#include "model/rng.h"
#include "viz/colormap.h"
#include "viz/window.h"

/* --units A-B (also "A-" to the end, and "all") taken out of argv: the window of columns a wide
 * view shows, {A, B} from 1 ({A, 0}: to the end); {0, 0} when absent. -1 after an error. */
static int take_units(int *argc, char **argv, int units[2])
{
	units[0] = units[1] = 0;
	for (int i = 1; i < *argc; i++) {
		if (strcmp(argv[i], "--units"))
			continue;
		const char *v = i + 1 < *argc ? argv[i + 1] : "";
		int a = 0, b = 0, used = 0;
		if (!strcmp(v, "all"))
			a = 1;
		else if (!((sscanf(v, "%d-%d%n", &a, &b, &used) == 2 && !v[used] && a >= 1 && b >= a) ||
		           (sscanf(v, "%d-%n", &a, &used) == 1 && !v[used] && a >= 1))) {
			errorf("--units takes columns A-B counted from 1, e.g. --units 65-128 (or A- to the end, or all); got '%s'", v);
			return -1;
		}
		units[0] = a;
		units[1] = b;
		/* the two words move past the end, not away: the caller frees the argc words it made */
		char *opt = argv[i], *val = argv[i + 1];
		for (int j = i; j + 2 < *argc; j++)
			argv[j] = argv[j + 2];
		argv[*argc - 2] = opt;
		argv[*argc - 1] = val;
		*argc -= 2;
		break;
	}
	return 0;
}

/* --range LO HI taken out of argv: a fixed colour scale (a bar chart's value axis) that a pair
 * of figures can share, so raw and scaled scores, or two temperatures, are compared on one
 * scale instead of each on its own. r->set is 0 when absent; -1 after an error. */
typedef struct range_opt {
	int set;
	double lo, hi;
} range_opt;

static int take_range(int *argc, char **argv, range_opt *r)
{
	r->set = 0;
	for (int i = 1; i < *argc; i++) {
		if (strcmp(argv[i], "--range"))
			continue;
		char *e1 = NULL, *e2 = NULL;
		const char *a = i + 1 < *argc ? argv[i + 1] : "", *b = i + 2 < *argc ? argv[i + 2] : "";
		r->lo = strtod(a, &e1);
		r->hi = strtod(b, &e2);
		if (!*a || !*b || *e1 || *e2 || !isfinite(r->lo) || !isfinite(r->hi) || !(r->hi > r->lo)) {
			errorf("--range takes two numbers LO HI with LO < HI, e.g. --range -5 5 (got '%s %s')", a, b);
			return -1;
		}
		r->set = 1;
		/* the three words move past the end, not away: the caller frees the argc words it made */
		char *w[3] = { argv[i], argv[i + 1], argv[i + 2] };
		for (int j = i; j + 3 < *argc; j++)
			argv[j] = argv[j + 3];
		for (int k = 0; k < 3; k++)
			argv[*argc - 3 + k] = w[k];
		*argc -= 3;
		break;
	}
	return 0;
}

/* --at T taken out of argv: the token a too-wide token x token heatmap ends its window on
 * (session.at, kept until the next run). 0, or -1 after an error. */
static int take_at(session *s, int *argc, char **argv)
{
	for (int i = 1; i < *argc; i++) {
		if (strcmp(argv[i], "--at"))
			continue;
		int n = s->trace.encdec ? s->trace.n_tgt : s->trace.n_ids, t;
		if (i + 1 >= *argc) {
			errorf("--at takes a token number from 1 to %d", n > 0 ? n : 1);
			return -1;
		}
		if (parse_int(argv[i + 1], 1, n > 0 ? n : 1, &t, "--at's token"))
			return -1;
		s->at = t;
		char *w[2] = { argv[i], argv[i + 1] };
		for (int j = i; j + 2 < *argc; j++)
			argv[j] = argv[j + 2];
		argv[*argc - 2] = w[0];
		argv[*argc - 1] = w[1];
		*argc -= 2;
		break;
	}
	return 0;
}

/* The range a command gave (or its absence) is kept for its stage: the window's keys draw the
 * stage again on the same scale, until another command chooses. */
static void keep_range(session *s, int stage, const range_opt *r)
{
	s->range_set = r->set;
	s->range_stage = stage;
	s->range_lo = (float)r->lo;
	s->range_hi = (float)r->hi;
}

/* f (and its panels) on the fixed range r asks for; f as it was without one. */
static gb_figure *ranged(gb_figure *f, const range_opt *r)
{
	return f && r->set ? view_fix_range(f, r->lo, r->hi) : f;
}

/* show_stage with a fixed range: the stage recorded as on show, its figure on r's scale. */
static int show_stage_ranged(session *s, int stage, int layer, int head, const range_opt *r)
{
	if (!r->set)
		return show_stage(s, stage, layer, head);
	int old[3] = { s->stage, s->layer, s->head };
	s->stage = stage, s->layer = layer, s->head = head;
	gb_figure *f = view_stage(s);
	if (!f) {
		s->stage = old[0], s->layer = old[1], s->head = old[2];
		return -1;
	}
	return show_figure(s, ranged(f, r));
}

/* Shows a wide stage in the window of columns units: the window stays with the stage (the
 * projector window's arrows keep it across layers) until another command chooses again. */
static int show_stage_units(session *s, int stage, int layer, int head, const int units[2], const range_opt *r)
{
	int old[3] = { s->units[0], s->units[1], s->units_stage };
	s->units[0] = units[0];
	s->units[1] = units[1];
	s->units_stage = stage;
	int rc = show_stage_ranged(s, stage, layer, head, r);
	if (rc) {
		s->units[0] = old[0], s->units[1] = old[1], s->units_stage = old[2];
	}
	return rc;
}

/* qkv L H [--units A-B] */
int cmd_qkv(session *s, int argc, char **argv, const char *rest)
{
	int l, h, u[2];
	range_opt r;
	if (take_units(&argc, argv, u) || take_range(&argc, argv, &r) || layer_head(argc, argv, 2, &l, &h))
		return -1;
	keep_range(s, ST_QKV, &r);
	return show_stage_units(s, ST_QKV, l, h, u, &r);
}

/* attn, cross and qkv: a stage of one head, named like the command. */
int cmd_head_stage(session *s, int argc, char **argv, const char *rest)
{
	int l, h, stage = 0;
	range_opt r;
	if (take_range(&argc, argv, &r) || take_at(s, &argc, argv))
		return -1;
	const char *name = command_name(argv[0]);
	while (stage < ST_N && strcmp(stage_name(stage), name))
		stage++;
	keep_range(s, stage, &r);
	/* attn L H --lines (and cross): the head as BertViz draws it, a line per weight */
	if (argc == 4 && !strcmp(argv[3], "--lines") && (stage == ST_ATTN || stage == ST_CROSS)) {
		if (layer_head(3, argv, 2, &l, &h))
			return -1;
		return show_figure(s, view_attn_lines(s, l, h, stage == ST_CROSS));
	}
	if (layer_head(argc, argv, 2, &l, &h))
		return -1;
	return show_stage_ranged(s, stage, l, h, &r);
}

/* A figure of a stage shown with options of its own (ln 2 3, next 5, pe 0 1): the stage is
 * recorded as on show (what arch highlights, where the explorer and the window go on from),
 * as show_stage does for the rest. */
static int shown_stage(session *s, int rc, int stage, int layer)
{
	if (!rc) {
		s->stage = stage;
		s->layer = layer;
	}
	return rc;
}

int cmd_scores(session *s, int argc, char **argv, const char *rest)
{
	int l, h;
	range_opt r;
	if (take_range(&argc, argv, &r) || take_at(s, &argc, argv))
		return -1;
	keep_range(s, ST_SCORES, &r);
	if (argc == 4 && (!strcmp(argv[3], "raw") || !strcmp(argv[3], "masked"))) {
		if (layer_head(3, argv, 2, &l, &h))
			return -1;
		return shown_stage(s, show_figure(s, ranged(view_attention(s, !strcmp(argv[3], "raw") ? "scores" : "masked", l, h), &r)),
		                   ST_SCORES, l);
	}
	if (layer_head(argc, argv, 2, &l, &h))
		return -1;
	return show_stage_ranged(s, ST_SCORES, l, h, &r);
}


int cmd_ln(session *s, int argc, char **argv, const char *rest)
{
	int l, which = 1, u[2];
	range_opt r;
	if (take_units(&argc, argv, u) || take_range(&argc, argv, &r))
		return -1;
	if (argc == 3) {
		if (parse_int(argv[2], 1, 3, &which, "the norm (1, 2 or 3)"))
			return -1;
		argc = 2;
	}
	if (layer_head(argc, argv, 1, &l, NULL))
		return -1;
	keep_range(s, ST_LN, &r);
	return shown_stage(s, show_figure(s, ranged(view_ln(s, l, which, u[0] ? u : NULL), &r)), ST_LN, l);
}

int cmd_ffn(session *s, int argc, char **argv, const char *rest)
{
	int l, u[2];
	range_opt r;
	if (take_units(&argc, argv, u) || take_range(&argc, argv, &r) || layer_head(argc, argv, 1, &l, NULL))
		return -1;
	keep_range(s, ST_FFN, &r);
	return show_stage_units(s, ST_FFN, l, s->head, u, &r);
}

int cmd_embed(session *s, int argc, char **argv, const char *rest)
{
	int u[2];
	range_opt r;
	if (take_units(&argc, argv, u) || take_range(&argc, argv, &r))
		return -1;
	if (argc != 1)
		return usage(argv[0]);
	keep_range(s, ST_EMBED, &r);
	return show_stage_units(s, ST_EMBED, s->layer, s->head, u, &r);
}

/* model [--layers A-B]: at the prompt the grid is paged by layers (show_figure_page). */
int cmd_model(session *s, int argc, char **argv, const char *rest)
{
	int a = 1, b = 0;
	if (argc != 1 && (argc != 3 || strcmp(argv[1], "--layers")))
		return usage(argv[0]);
	if (need_run(s) || (argc == 3 && parse_range(argv[2], 1, s->model.cfg.n_layer, &a, &b, "--layers")))
		return -1;
	show_page pg = { a - 1, b ? b - a + 1 : 0, "layer", "model --layers" };
	return show_figure_page(s, view_model(s), &pg);
}
int cmd_resid(session *s, int argc, char **argv, const char *rest) { return argc != 1 ? usage(argv[0]) : show_stage(s, ST_RESID, s->layer, s->head); }

int cmd_pe(session *s, int argc, char **argv, const char *rest)
{
	int dims[16], n = 0, u[2];
	range_opt r;
	if (take_units(&argc, argv, u) || take_range(&argc, argv, &r))
		return -1;
	for (int i = 1; i < argc; i++) {
		if (n == 16) {
			errorf("at most 16 dimensions at once");
			return -1;
		}
		if (parse_int(argv[i], 0, 1 << 20, &dims[n++], "a dimension"))
			return -1;
	}
	if (n && u[0]) {
		errorf("--units picks columns of the heatmap: with dimensions, pe draws them as lines");
		return -1;
	}
	keep_range(s, ST_PE, &r);
	if (!n) /* the heatmap is the pe stage: the projector window's keys keep its window */
		return show_stage_units(s, ST_PE, s->layer, s->head, u, &r);
	return shown_stage(s, show_figure(s, ranged(view_pe(s, dims, n, NULL), &r)), ST_PE, s->layer);
}

int cmd_next(session *s, int argc, char **argv, const char *rest)
{
	int k = 10;
	double temp = 1;
	range_opt r;
	if (take_range(&argc, argv, &r))
		return -1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--temp") && i + 1 < argc) {
			char *end;
			temp = strtod(argv[++i], &end);
			if (*end || !(temp > 0) || temp > 100) {
				errorf("--temp must be a number above 0 and at most 100 (got '%s')", argv[i]);
				return -1;
			}
		} else if (parse_int(argv[i], 1, 1000, &k, "the number of tokens to show"))
			return -1;
	}
	keep_range(s, ST_NEXT, &r);
	return shown_stage(s, show_figure(s, ranged(view_next_temp(s, k, temp, 0), &r)), ST_NEXT, s->layer);
}

int cmd_show(session *s, int argc, char **argv, const char *rest)
{
	int idx = 0, u[2];
	range_opt r;
	if (take_units(&argc, argv, u) || take_range(&argc, argv, &r))
		return -1;
	if (argc < 2 || argc > 3)
		return usage(argv[0]);
	if (argc == 3 && parse_int(argv[2], 0, 1 << 20, &idx, "the index"))
		return -1;
	const gb_ttensor *t;
	if (need_run(s) || !(t = find_tensor(s, argv[1])))
		return -1;
	if (idx > 0 && t->ndim < 3) {
		errorf("%s has %d dimension%s: an index picks a slice of a 3-D tensor only", argv[1], t->ndim,
		       t->ndim == 1 ? "" : "s");
		return -1;
	}
	return show_figure(s, ranged(view_tensor(s, argv[1], idx, u[0] ? u : NULL), &r));
}

/* Parses "a b c, d e f, ..." into a matrix (rows, cols); the rows must have equal lengths. */
static int parse_matrix(int argc, char **argv, int from, double **out, int *rows, int *cols, int *next)
{
	int cap = 64, n = 0, r = 0, c = -1, in_row = 0;
	double *v = malloc(sizeof(double) * (size_t)cap);
	int i = from;
	for (; i < argc && strncmp(argv[i], "--", 2); i++) {
		char *p = argv[i];
		while (*p) {
			if (*p == ',') {
				if (c < 0)
					c = in_row;
				else if (in_row != c)
					goto ragged;
				r++;
				in_row = 0;
				p++;
				continue;
			}
			char *end;
			double x = strtod(p, &end);
			if (end == p || !isfinite(x)) {
				errorf("'%s' is not a number: give rows of numbers separated by commas, e.g. 1 2 3, 4 5 6", argv[i]);
				free(v);
				return -1;
			}
			if (n == cap)
				v = realloc(v, sizeof(double) * (size_t)(cap *= 2));
			v[n++] = x;
			in_row++;
			p = end;
		}
	}
	if (in_row) {
		if (c >= 0 && in_row != c)
			goto ragged;
		if (c < 0)
			c = in_row;
		r++;
	}
	if (n == 0) {
		errorf("give the numbers: rows separated by commas, e.g. 1 2 3, 4 5 6");
		free(v);
		return -1;
	}
	*out = v;
	*rows = r;
	*cols = c;
	*next = i;
	return 0;
ragged:
	errorf("every row needs as many numbers as the first (%d)", c);
	free(v);
	return -1;
}

/* Shows a (rows, cols) result with its numbers, as a small heatmap a slide can use. */
static int show_matrix(session *s, const double *v, const double *in, int rows, int cols, const char *title,
                       const char *caption, int prec, int probs, int causal)
{
	float *f32 = malloc(sizeof(float) * (size_t)rows * cols);
	for (int i = 0; i < rows * cols; i++)
		f32[i] = causal && i % cols > i / cols ? -INFINITY : (float)v[i]; /* a weight the mask hid: grey */
	gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
	gb_fig_set_values(f, f32, rows, cols);
	free(f32);
	f->masked = f->mask_zero = causal;
	f->row_index0 = f->col_index0 = 1; /* "row 4, column 4", as a lesson asks for it */
	gb_fig_set_title(f, title);
	if (in) { /* the numbers it was computed from, so the slide stands on its own */
		char sub[256];
		int k = snprintf(sub, sizeof sub, rows == 1 ? "of the row " : "of the rows ");
		for (int r = 0; r < rows && k < (int)sizeof sub - 40; r++)
			for (int c = 0; c < cols && k < (int)sizeof sub - 40; c++)
				k += snprintf(sub + k, sizeof sub - k, "%s%s%g%s", c ? ", " : r ? "  (" : "(", "", in[r * cols + c],
				              c == cols - 1 ? ")" : "");
		if (k < (int)sizeof sub - 40)
			gb_fig_set_subtitle(f, sub);
	}
	if (in && rows == 1) { /* one row: each column says what went in */
		char **l = malloc(sizeof(char *) * (size_t)cols);
		for (int c = 0; l && c < cols; c++) {
			char b[48];
			snprintf(b, sizeof b, "%g", in[c]);
			l[c] = strdup(b);
		}
		if (l) {
			gb_fig_set_col_labels(f, (const char *const *)l);
			gb_fig_set_axes(f, NULL, "the input x_j of each column");
			f->col_index0 = 0;
		}
		for (int c = 0; l && c < cols; c++)
			free(l[c]);
		free(l);
	}
	gb_fig_set_caption(f, caption);
	f->numbers = 1;
	f->precision = prec;
	fit_range(f, GB_CMAP_VIRIDIS); /* a signed result (a layer norm, a difference) on a diverging map */
	if (probs) { /* probabilities on their whole scale, 0 to 1 */
		f->range = GB_RANGE_FIXED;
		f->vmin = 0;
		f->vmax = 1;
	}
	for (int i = 0; i < rows; i++) {
		printf("  ");
		for (int j = 0; j < cols; j++)
			printf(" %10.*f", prec + 2, v[i * cols + j]);
		printf("\n");
	}
	return show_figure(s, f);
}

/* Exact arithmetic on numbers the user gives: the textbook's worked examples. */
/* calc EXPR: one number from the lessons' arithmetic (cosine(embed.sum, 3, 8), t(NAME, i, j),
 * cfg(d_model) ...), printed alone as lessons quote it (fmt_num; the command line above it
 * already says what it is: a slide's column beside a figure has room for the number, not for
 * the expression twice). */
static int calc_expr(session *s, const char *expr)
{
	double v;
	char err[256], num[64];
	if (calc_eval(s, expr, &v, err, sizeof err)) {
		errorf("calc %s: %s", expr, err);
		return -1;
	}
	fmt_num(v, num, sizeof num);
	printf("%s\n", num);
	return 0;
}

int cmd_calc(session *s, int argc, char **argv, const char *rest)
{
	if (argc >= 2 && strcmp(argv[1], "softmax") && strcmp(argv[1], "layernorm"))
		return calc_expr(s, rest);
	if (argc < 3)
		return usage(argv[0]);
	double *v;
	int rows, cols, i;
	if (parse_matrix(argc, argv, 2, &v, &rows, &cols, &i))
		return -1;
	int causal = 0, textbook = 0, compare = 0, rc = 0;
	double eps = 1e-5;
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "--causal"))
			causal = 1;
		else if (!strcmp(argv[i], "--textbook"))
			textbook = 1;
		else if (!strcmp(argv[i], "--compare"))
			compare = 1;
		else if (!strcmp(argv[i], "--eps") && i + 1 < argc) {
			char *end;
			eps = strtod(argv[++i], &end);
			if (*end || !(eps >= 0)) {
				errorf("--eps must be a number >= 0");
				free(v);
				return -1;
			}
		} else {
			errorf("unknown option '%s': --causal, --eps E, --textbook or --compare", argv[i]);
			free(v);
			return -1;
		}
	}
	if (compare && (textbook || strcmp(argv[1], "layernorm"))) {
		errorf("--compare sets the two forms of layernorm side by side: without --textbook, and only for layernorm");
		free(v);
		return -1;
	}
	double *out = malloc(sizeof(double) * (size_t)rows * cols * 2), *book = out + (size_t)rows * cols;
	if (!strcmp(argv[1], "softmax")) {
		for (int r = 0; r < rows; r++) {
			double mx = -INFINITY, z = 0;
			for (int c = 0; c < cols; c++)
				if (!(causal && c > r))
					mx = fmax(mx, v[r * cols + c]);
			for (int c = 0; c < cols; c++)
				z += out[r * cols + c] = causal && c > r ? 0 : exp(v[r * cols + c] - mx);
			for (int c = 0; c < cols; c++)
				out[r * cols + c] /= z;
		}
		printf("softmax of each row%s:\n", causal ? ", with the causal mask (-inf added where j > i)" : "");
		rc = show_matrix(s, out, v, rows, cols, causal ? "Masked softmax, computed exactly" : "Softmax, computed exactly",
		                 causal ? "softmax_j(x_ij + m_ij), m_ij = 0 for j <= i and -inf for j > i" : "softmax_j(x_ij) = e^x_ij / sum_k e^x_ik", 2, 1, causal);
	} else if (!strcmp(argv[1], "layernorm")) {
		printf("%-6s %10s %10s %10s\n", "row", "mean", "variance", "sigma");
		for (int r = 0; r < rows; r++) {
			double mu = 0, var = 0;
			for (int c = 0; c < cols; c++)
				mu += v[r * cols + c];
			mu /= cols;
			for (int c = 0; c < cols; c++)
				var += (v[r * cols + c] - mu) * (v[r * cols + c] - mu);
			var /= cols;
			double den = textbook ? sqrt(var) + eps : sqrt(var + eps);
			for (int c = 0; c < cols; c++) {
				out[r * cols + c] = (v[r * cols + c] - mu) / den;
				book[r * cols + c] = (v[r * cols + c] - mu) / (sqrt(var) + eps);
			}
			printf("%-6d %10.6f %10.6f %10.6f\n", r + 1, mu, var, sqrt(var));
		}
		char cap[160];
		snprintf(cap, sizeof cap, textbook ? "(h - mean) / (sigma + eps), eps = %g (population sigma)" : "(h - mean) / sqrt(var + eps), eps = %g", eps);
		printf("normalized (gain 1, bias 0), %s:\n", cap);
		if (compare) {
			/* the two forms differ in the second decimal: two heatmaps of them look the same,
			 * their difference does not */
			for (int r = 0; r < rows; r++) {
				printf("  ");
				for (int c = 0; c < cols; c++)
					printf(" %10.5f", out[r * cols + c]);
				printf("\n");
			}
			for (int k = 0; k < rows * cols; k++)
				out[k] -= book[k];
			snprintf(cap, sizeof cap, "(h - mean) / sqrt(var + eps)  -  (h - mean) / (sigma + eps),  eps = %g", eps);
			printf("library form minus the textbook's, %s:\n", cap);
			rc = show_matrix(s, out, v, rows, cols, "Layer norm: the library form minus the textbook's", cap, 3, 0, 0);
		} else
			rc = show_matrix(s, out, v, rows, cols, textbook ? "Layer norm, the textbook's form" : "Layer norm, the library form", cap, 3, 0, 0);
	} else {
		errorf("calc knows softmax and layernorm (got '%s')", argv[1]);
		rc = -1;
	}
	free(v);
	free(out);
	return rc;
}

/* The sparse attention patterns of efficient Transformers, from their definitions: which keys
 * (columns) each query (row) may see. Each panel's title counts the pairs it computes. */
int cmd_masks(session *s, int argc, char **argv, const char *rest)
{
	int T = 16, w = 3;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--window") && i + 1 < argc) {
			if (parse_int(argv[++i], 1, 64, &w, "--window"))
				return -1;
		} else if (parse_int(argv[i], 4, 64, &T, "the length"))
			return -1;
	}
	enum { CAUSAL, WINDOW, BLOCK, STRIDED, DILATED, GLOBAL, RANDOM, HYBRID, N_MASKS };
	static const char *names[N_MASKS] = { "causal (full)", "local window", "blocks (chunked)", "strided",
	                                      "dilated window", "global tokens", "random", "all three (BigBird)" };
	gb_figure *g = gb_fig_new(GB_FIG_GRID);
	g->grid_cols = 4;
	g->grid_wrap = 1; /* eight in a row where the page is wide: a slide under its text */
	g->range = GB_RANGE_FIXED;
	g->vmin = 0;
	g->vmax = 1;
	g->cmap = GB_CMAP_GRAY;
	g->colorbar = 0;
	float *m = malloc(sizeof(float) * (size_t)T * T);
	gb_rng rng;
	gb_rng_seed(&rng, 7);
	for (int k = 0; k < N_MASKS; k++) {
		int pairs = 0;
		for (int i = 0; i < T; i++)
			for (int j = 0; j < T; j++) {
				int d = i - j, on;
				switch (k) {
				case CAUSAL: on = d >= 0; break;
				case WINDOW: on = d >= 0 && d < w; break;
				case BLOCK: on = d >= 0 && i / w == j / w; break;
				case STRIDED: on = d >= 0 && (d < w || d % w == 0); break;
				case DILATED: on = d >= 0 && d % 2 == 0 && d < 2 * w; break;
				case GLOBAL: on = d >= 0 && (d < w || j < 2); break;
				case RANDOM: on = d == 0 || (d > 0 && gb_rng_uniform(&rng) < 0.25); break;
				default: on = d >= 0 && (d < w || j < 2 || gb_rng_uniform(&rng) < 0.15); break;
				}
				m[i * T + j] = (float)on;
				pairs += on;
			}
		gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
		gb_fig_set_values(f, m, T, T);
		char title[96];
		snprintf(title, sizeof title, "%s: %d pairs", names[k], pairs);
		gb_fig_set_title(f, title);
		gb_fig_set_axes(f, "query", "key"); /* each panel stands alone on a slide too */
		gb_fig_add_panel(g, f);
	}
	free(m);
	char title[128], cap[256];
	snprintf(title, sizeof title, "Sparse attention patterns for %d tokens (white: the query may see the key)", T);
	snprintf(cap, sizeof cap, "full causal attention computes %d pairs (n(n+1)/2); a window of %d computes about n*%d: "
	                          "L stacked layers see L(%d - 1) + 1 positions (the query and L(%d - 1) back)", T * (T + 1) / 2, w, w, w, w);
	gb_fig_set_title(g, title);
	gb_fig_set_caption(g, cap);
	gb_fig_set_axes(g, "query", "key");
	return show_figure(s, g);
}

int cmd_window(session *s, int argc, char **argv, const char *rest)
{
	int full = argc == 2 && (!strcmp(argv[1], "--full") || !strcmp(argv[1], "full"));
	if (argc > 2 || (argc == 2 && !full))
		return usage(argv[0]);
	if (s->win && !full) {
		gb_window_close(s->win);
		s->win = NULL;
		if (s->interactive)
			printf("window closed\n");
		return 0;
	}
	gb_verr err;
	if (!s->win && !(s->win = gb_window_open("glassbox", 0, 0, &err))) {
		errorf("%s", err.msg);
		return -1;
	}
	if (full && gb_window_set_fullscreen(s->win, 1, &err))
		errorf("window: %s", err.msg);
	if (s->fig)
		session_adopt(s, s->fig, NULL);
	if (s->interactive)
		printf("window open: it shows every figure; in it, arrows change layer and head, Tab the stage, "
		       "F11 full screen, + - text size, q closes it ('help window': all its keys)\n");
	return 0;
}

int cmd_tui(session *s, int argc, char **argv, const char *rest)
{
	if (argc != 1)
		return usage(argv[0]);
	return tui_run(s);
}

/* The loaded model's architecture, with the stage on show highlighted (view_arch.c). */
int cmd_arch(session *s, int argc, char **argv, const char *rest)
{
	return argc != 1 ? usage(argv[0]) : show_figure(s, view_arch(s));
}

/* The part of title a that differs from title b, widened to its clause (back to an opening
 * bracket, a colon or a comma, on to a closing one): "temperature 0.5" of "... next tokens
 * (temperature 0.5)" beside "... (temperature 2)". Empty when the titles are the same. */
static void differing(const char *a, const char *b, char *out, size_t cap)
{
	size_t la = strlen(a), lb = strlen(b), p = 0, q = 0;
	while (p < la && p < lb && a[p] == b[p])
		p++;
	while (q < la - p && q < lb - p && a[la - 1 - q] == b[lb - 1 - q])
		q++;
	if (p == la && p == lb) {
		*out = 0;
		return;
	}
	size_t e = la - q;
	while (p > 0 && !strchr("(:,;", a[p - 1]))
		p--;
	while (e < la && !strchr("),;", a[e]))
		e++;
	while (p < e && a[p] == ' ')
		p++;
	snprintf(out, cap, "%.*s", (int)(e - p), a + p);
}

/* pair's words: TITLE, or TITLE | LEFT | RIGHT (each panel's name); NULL where not given. */
static void pair_words(const char *rest, char *title, char *name[2], size_t cap)
{
	const char *w[3] = { rest ? rest : "", NULL, NULL };
	char *out[3] = { title, name[0], name[1] };
	for (int i = 1; i < 3 && w[i - 1]; i++)
		w[i] = strchr(w[i - 1], '|') ? strchr(w[i - 1], '|') + 1 : NULL;
	for (int i = 0; i < 3; i++) {
		*out[i] = 0;
		if (!w[i])
			continue;
		const char *e = i < 2 && w[i + 1] ? w[i + 1] - 1 : w[i] + strlen(w[i]);
		while (w[i] < e && *w[i] == ' ')
			w[i]++;
		while (e > w[i] && e[-1] == ' ')
			e--;
		snprintf(out[i], cap, "%.*s", (int)(e - w[i]), w[i]);
	}
}

/* What a pair g of a and b says of itself: the title asked for (else dflt), both captions
 * named by where their panels stand (grid_cols set first), the second figure's metadata. */
static void pair_labels(gb_figure *g, const gb_figure *a, const gb_figure *b, const char *title, const char *dflt)
{
	gb_fig_set_title(g, *title ? title : dflt);
	if (a->caption && b->caption && strcmp(a->caption, b->caption)) {
		char cap[1024];
		snprintf(cap, sizeof cap, "%s: %s;  %s: %s", g->grid_cols == 1 ? "top" : "left", a->caption,
		         g->grid_cols == 1 ? "bottom" : "right", b->caption);
		gb_fig_set_caption(g, cap);
	} else
		gb_fig_set_caption(g, b->caption);
	for (int i = 0; i < b->n_meta; i++)
		gb_fig_add_meta(g, b->meta_keys[i], b->meta_vals[i]);
}

/* The subtitles' common part, to the last " · " they share (the model and the text; not the
 * engine or the norm that differs, which the panels' names say); NULL-safe. */
static void common_subtitle(gb_figure *g, const char *a, const char *b)
{
	if (!a || !b)
		return;
	size_t n = 0, cut = 0;
	while (a[n] && a[n] == b[n])
		n++;
	if (!a[n] && !b[n])
		cut = n;
	else
		for (size_t i = 0; i + 4 <= n; i++)
			if (!strncmp(a + i, " \xC2\xB7 ", 4))
				cut = i;
	char sub[512];
	snprintf(sub, sizeof sub, "%.*s", (int)cut, a);
	gb_fig_set_subtitle(g, cut ? sub : NULL);
}

/* Two bar charts side by side on one scale, their values printed: a DECODE figure of two
 * panels without marks (no key); both move into it. */
static int pair_bars(session *s, gb_figure *a, gb_figure *b, const char *title, char *name[2])
{
	gb_figure *g = gb_fig_new(GB_FIG_DECODE);
	if (!g) {
		errorf("out of memory");
		return -1;
	}
	g->grid_cols = 2;
	/* one scale: the charts' own fixed axis where they share one, else their largest bar */
	if (a->range == GB_RANGE_FIXED && b->range == GB_RANGE_FIXED && a->vmax == b->vmax && a->vmax > 0) {
		g->range = GB_RANGE_FIXED;
		g->vmin = 0;
		g->vmax = a->vmax;
	}
	pair_labels(g, a, b, title, "Side by side, on one scale");
	common_subtitle(g, a->subtitle, b->subtitle);
	s->prev_fig = s->fig = NULL;
	gb_figure *p[2] = { a, b };
	char d[2][256];
	for (int i = 0; i < 2; i++)
		differing(p[i]->title ? p[i]->title : "", p[1 - i]->title ? p[1 - i]->title : "", d[i], sizeof d[i]);
	for (int i = 0; i < 2; i++) {
		gb_fig_set_title(p[i], *name[i] ? name[i] : *d[i] ? d[i] : i ? "right" : "left");
		gb_fig_set_subtitle(p[i], NULL);
		gb_fig_add_panel(g, p[i]);
	}
	return show_figure(s, g);
}

/* pair [TITLE [| LEFT | RIGHT]]: the figure before the current one and the current one as one
 * slide, side by side on one scale, so two maps or two bar charts can be compared at a glance:
 * an encoder's and a decoder's attention, raw and scaled scores, the next tokens at two
 * temperatures. Heatmaps take the union of their ranges; bar charts a common length scale. */
int cmd_pair(session *s, int argc, char **argv, const char *rest)
{
	gb_figure *a = s->prev_fig, *b = s->fig;
	char title[256], n0[128], n1[128], *name[2] = { n0, n1 };
	pair_words(rest, title, name, sizeof n0);
	if (!a || !b) {
		errorf("pair sets the last two figures side by side: show two heatmaps or two bar charts first "
		       "(e.g. attn 1 1, then attn 2 1)");
		return -1;
	}
	if (a->kind == GB_FIG_BARS && b->kind == GB_FIG_BARS && !a->marks && !b->marks && !a->ref && !b->ref)
		return pair_bars(s, a, b, title, name);
	if (a->kind != GB_FIG_HEATMAP || b->kind != GB_FIG_HEATMAP) {
		errorf("pair sets two heatmaps or two bar charts side by side: the last two figures are a %s and a %s",
		       gb_fig_kind_name(a->kind), gb_fig_kind_name(b->kind));
		return -1;
	}
	if (a->cmap != b->cmap) {
		errorf("pair needs two figures on one kind of colour map (these use %s and %s)", gb_cmap_name(a->cmap),
		       gb_cmap_name(b->cmap));
		return -1;
	}
	float lo[2], hi[2];
	int bad;
	gb_fig_range(a, &lo[0], &hi[0], &bad);
	gb_fig_range(b, &lo[1], &hi[1], &bad);
	gb_figure *g = gb_fig_new(GB_FIG_GRID);
	if (!g) {
		errorf("out of memory");
		return -1;
	}
	/* side by side; maps much wider than tall (tokens x units) one over the other */
	g->grid_cols = a->cols > 2 * a->rows && b->cols > 2 * b->rows ? 1 : 2;
	g->cmap = a->cmap;
	g->range = GB_RANGE_FIXED;
	g->vmin = lo[0] < lo[1] ? lo[0] : lo[1];
	g->vmax = hi[0] > hi[1] ? hi[0] : hi[1];
	g->masked = a->masked || b->masked;
	g->mask_zero = a->mask_zero || b->mask_zero;
	g->panel_labels = 1;
	pair_labels(g, a, b, title, "Side by side, on one colour scale");
	gb_fig_set_subtitle(g, b->subtitle);
	if (a->row_title || a->col_title)
		gb_fig_set_axes(g, a->row_title, a->col_title);
	s->prev_fig = s->fig = NULL; /* both move into the grid */
	gb_figure *p[2] = { a, b };
	for (int i = 0; i < 2; i++) {
		p[i]->range = GB_RANGE_FIXED;
		p[i]->vmin = g->vmin;
		p[i]->vmax = g->vmax;
		gb_fig_set_subtitle(p[i], NULL);
		if (*name[i])
			gb_fig_set_title(p[i], name[i]);
		gb_fig_add_panel(g, p[i]);
	}
	return show_figure(s, g);
}
