/* view_steps.c — figures of the steps that are not a trace tensor (issue 14, part 3): a token
 * strip's bytes, the merge replay, the decoding steps and the beam search tree (view_steps.h).
 * The commands compute; these turn what they computed into a Figure. */
#include "app/view_steps.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/view_common.h"
#include "app/views.h"

void view_hex_bytes(const unsigned char *b, size_t len, char *out, size_t cap)
{
	size_t o = 0;
	out[0] = 0;
	for (size_t i = 0; i < len && o + 4 < cap; i++)
		o += (size_t)snprintf(out + o, cap - o, "%s%02x", i ? " " : "", b[i]);
}

int view_set_token_bytes(session *s, gb_figure *f, const int *ids, int n)
{
	if (n != f->cols || n <= 0)
		return 0;
	char **v = calloc((size_t)n, sizeof *v);
	int rc = v ? 0 : -1;
	for (int i = 0; !rc && i < n; i++) {
		size_t len = 0;
		const unsigned char *b = gb_model_piece(&s->model, ids[i], &len);
		char hex[3 * 16 + 8];
		/* a long piece shows its first bytes: the point is where characters are cut */
		view_hex_bytes(b, b ? (len > 16 ? 16 : len) : 0, hex, sizeof hex);
		if (!(v[i] = strdup(hex)))
			rc = -1;
	}
	if (!rc)
		rc = gb_fig_set_bytes(f, (const char *const *)v);
	for (int i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
	return rc;
}

/* ---- the merge replay ----------------------------------------------------------------------- */

static char *piece_raw(const gb_tokenizer *t, int id)
{
	size_t len = 0;
	const unsigned char *b = gb_tok_piece_bytes(t, id, &len);
	char *out = malloc(len + 1);
	if (out) {
		if (b)
			memcpy(out, b, len);
		out[b ? len : 0] = 0;
	}
	return out;
}

/* One row: the pieces now, the ones made in this row marked. */
static int merge_row(gb_figure *f, const gb_tokenizer *t, const int *p, const int *fresh, int np, const char *title)
{
	gb_figure *r = gb_fig_new(GB_FIG_STRIP);
	if (r) { /* ids are names: the boxes alternate two tints, no colour scale */
		r->alternate = 1;
		r->colorbar = 0;
	}
	float *v = malloc(sizeof(float) * (size_t)(np ? np : 1));
	char **l = calloc((size_t)(np ? np : 1), sizeof *l);
	int rc = r && v && l ? 0 : -1;
	for (int i = 0; !rc && i < np; i++) {
		v[i] = (float)p[i];
		if (!(l[i] = piece_raw(t, p[i])))
			rc = -1;
	}
	if (!rc && (gb_fig_set_values(r, v, 1, np) || gb_fig_set_col_labels(r, (const char *const *)l) ||
	            gb_fig_set_title(r, title) || gb_fig_set_marks(r, fresh, NULL, NULL)))
		rc = -1;
	for (int i = 0; l && i < np; i++)
		free(l[i]);
	free(l);
	free(v);
	if (rc) {
		gb_fig_free(r);
		return -1;
	}
	return gb_fig_add_panel(f, r);
}

gb_figure *view_merges(session *s, const gb_tokenizer *t, const char *text, const int *ids, int n,
                       const gb_tok_trace *tt)
{
	int cap = 1;
	for (int w = 0; w < tt->n_words; w++)
		cap += tt->words[w].special ? tt->words[w].n : tt->words[w].n_sym;
	int *p = malloc(sizeof(int) * (size_t)cap), *wd = malloc(sizeof(int) * (size_t)cap);
	int *fresh = calloc((size_t)cap, sizeof(int)), np = 0;
	gb_figure *f = gb_fig_new(GB_FIG_STRIPS);
	if (!p || !wd || !fresh || !f)
		goto oom;
	for (int w = 0; w < tt->n_words; w++) {
		const gb_tok_word *W = &tt->words[w];
		int k = W->special ? W->n : W->n_sym;
		for (int i = 0; i < k; i++, np++) {
			p[np] = W->special ? ids[W->first + i] : tt->syms[W->sym_first + i];
			wd[np] = w;
		}
	}
	/* one strip per merge, or per group of g merges: a slide holds about a dozen strips */
	int g = tt->n_steps > GB_MERGE_ROWS ? (tt->n_steps + GB_MERGE_ROWS - 1) / GB_MERGE_ROWS : 1;
	if (merge_row(f, t, p, fresh, np, "bytes"))
		goto oom;
	char title[256] = "", ranks[128] = "";
	for (int k = 0; k < tt->n_steps; k++) {
		const gb_tok_step *st = &tt->steps[k];
		if (k % g == 0) {
			memset(fresh, 0, sizeof(int) * (size_t)cap);
			ranks[0] = 0;
		}
		int at = 0;
		while (at < np && wd[at] != st->word)
			at++;
		at += st->pos;
		if (at + 1 >= np)
			break; /* a trace that does not fit its own words: stop rather than read past */
		p[at] = st->result;
		fresh[at] = GB_MARK_CHOSEN;
		memmove(p + at + 1, p + at + 2, sizeof(int) * (size_t)(np - at - 2));
		memmove(wd + at + 1, wd + at + 2, sizeof(int) * (size_t)(np - at - 2));
		memmove(fresh + at + 1, fresh + at + 2, sizeof(int) * (size_t)(np - at - 2));
		np--;
		size_t rl = strlen(ranks);
		snprintf(ranks + rl, sizeof ranks - rl, "%s%d", rl ? ", " : "", st->rank);
		if (k % g == g - 1 || k == tt->n_steps - 1) {
			if (g == 1) {
				char a[64], b[64];
				char *lr = piece_raw(t, st->left), *rr = piece_raw(t, st->right);
				gb_label_display(lr ? lr : "", 12, a, sizeof a);
				gb_label_display(rr ? rr : "", 12, b, sizeof b);
				free(lr);
				free(rr);
				snprintf(title, sizeof title, "%d. %s + %s (rank %d)", k + 1, a, b, st->rank);
			} else
				snprintf(title, sizeof title, "merges %d-%d (ranks %s)", k / g * g + 1, k + 1, ranks);
			if (merge_row(f, t, p, fresh, np, title))
				goto oom;
		}
	}
	view_titlef(f, "Tokenization: the merges, one %s", g == 1 ? "strip per merge" : "strip per group of merges");
	{
		char sel[160], q[128];
		snprintf(q, sizeof q, "%.100s", text);
		if (g == 1)
			snprintf(sel, sizeof sel, "%d merge%s", tt->n_steps, tt->n_steps == 1 ? "" : "s");
		else
			snprintf(sel, sizeof sel, "%d merges, %d a strip", tt->n_steps, g);
		char sub[400];
		snprintf(sub, sizeof sub, "%s \xC2\xB7 \xE2\x80\x9C%s\xE2\x80\x9D \xC2\xB7 %s", model_name(s), q, sel);
		gb_fig_set_subtitle(f, sub);
	}
	gb_fig_set_caption(f, "the lowest-ranked merge of a word is applied first; a framed piece is what the merge "
	                      "made; the number under a piece: its id (the two tints only tell neighbours apart)");
	f->colorbar = 0;
	view_meta(s, f, NULL);
	free(p), free(wd), free(fresh);
	return f;
oom:
	errorf("out of memory drawing the merges");
	gb_fig_free(f);
	free(p), free(wd), free(fresh);
	return NULL;
}

/* ---- decoding steps ---------------------------------------------------------------------- */

struct view_decode {
	session *s;
	gb_sampling sm;
	int n, total;
	int tail;             /* steps whose chosen token was not among the most probable shown */
	gb_figure *f;
};

view_decode *view_decode_new(session *s, const gb_sampling *sm)
{
	view_decode *d = calloc(1, sizeof *d);
	if (!d || !(d->f = gb_fig_new(GB_FIG_DECODE))) {
		free(d);
		return NULL;
	}
	d->s = s;
	d->sm = *sm;
	return d;
}

/* How many tokens the sampling keeps under sm (after the temperature and cut-offs). */
static int kept_count(const float *logits, int V, const gb_sampling *sm, double *tmp)
{
	int k = gb_sampling_probs(logits, V, sm, tmp);
	return k;
}

int view_decode_add(view_decode *d, const float *logits, int V, int chosen)
{
	d->total++;
	if (d->n >= GB_DECODE_STEPS)
		return 0;
	const gb_sampling *sm = &d->sm;
	double *q = malloc(sizeof(double) * (size_t)V), *kept = malloc(sizeof(double) * (size_t)V);
	if (!q || !kept) {
		free(q), free(kept);
		return -1;
	}
	int greedy = sm->temp == 0 || sm->top_k == 1;
	/* the bars: the probabilities after the temperature, before the cut-offs (greedy: the model's) */
	gb_sampling pre = { greedy ? 1 : sm->temp, 0, 1 };
	gb_sampling_probs(logits, V, &pre, q);
	int n_kept = gb_sampling_probs(logits, V, sm, kept);
	int top[GB_DECODE_SHOW], m = 0;
	for (int r = 0; r < GB_DECODE_SHOW && r < V; r++) { /* the most probable, ties by lower id */
		int best = -1;
		for (int v = 0; v < V; v++) {
			int used = 0;
			for (int j = 0; j < m; j++)
				used |= top[j] == v;
			if (!used && (best < 0 || q[v] > q[best]))
				best = v;
		}
		top[m++] = best;
	}
	int in = 0;
	for (int j = 0; j < m; j++)
		in |= top[j] == chosen;
	int rank = 0; /* a draw from the tail: shown in the last place, so the mark is seen, and its
	               * rank said in the step's title (the bars are then not the top m) */
	if (!in && m > 0) {
		top[m - 1] = chosen;
		for (int v = 0; v < V; v++)
			rank += q[v] > q[chosen] || (q[v] == q[chosen] && v < chosen);
		rank++;
		d->tail++;
	}
	double lse = gb_logsumexp(logits, V);
	float vals[GB_DECODE_SHOW], ref[GB_DECODE_SHOW];
	int marks[GB_DECODE_SHOW];
	char *labels[GB_DECODE_SHOW];
	for (int j = 0; j < m; j++) {
		vals[j] = (float)q[top[j]];
		ref[j] = (float)exp(logits[top[j]] - lse);
		marks[j] = (kept[top[j]] > 0 ? GB_MARK_KEPT : GB_MARK_CUT) | (top[j] == chosen ? GB_MARK_CHOSEN : 0);
		size_t len = 0;
		const unsigned char *b = gb_model_piece(&d->s->model, top[j], &len);
		labels[j] = malloc(len + 1);
		if (labels[j]) {
			if (b)
				memcpy(labels[j], b, len);
			labels[j][b ? len : 0] = 0;
		}
	}
	gb_figure *p = gb_fig_new(GB_FIG_BARS);
	int rc = p ? 0 : -1;
	char title[160], cl[64], ch[64];
	ch[0] = 0;
	for (int j = 0; j < m; j++)
		if (top[j] == chosen && labels[j])
			gb_label_display(labels[j], 14, ch, sizeof ch);
	/* the probability the chosen token was drawn with (after the temperature and the cut-offs,
	 * renormalised): generate prints it as p_T, and the bars (before the cut-offs) differ from
	 * it, so the step's title says it */
	char pt[40] = "";
	if (!greedy && (sm->temp != 1 || sm->top_k > 0 || sm->top_p < 1))
		snprintf(pt, sizeof pt, kept[chosen] >= 0.01 ? ", p_T %.2f" : ", p_T %.2g", kept[chosen]);
	if (rank)
		snprintf(title, sizeof title, "step %d: %s%s (rank %d)", d->n + 1, ch, pt, rank);
	else if (n_kept > m && n_kept < V && !greedy) /* a cut-off left these; none: no note */
		snprintf(title, sizeof title, "step %d: %s%s (%d kept)", d->n + 1, ch, pt, n_kept);
	else
		snprintf(title, sizeof title, "step %d: %s%s", d->n + 1, ch, pt);
	if (!rc && (gb_fig_set_values(p, vals, 1, m) || gb_fig_set_col_labels(p, (const char *const *)labels) ||
	            gb_fig_set_title(p, title) ||
	            gb_fig_set_marks(p, marks, sm->temp != 1 && !greedy ? ref : NULL, NULL)))
		rc = -1;
	/* the cut-offs where they fall among the bars shown */
	if (!rc && greedy)
		gb_fig_add_cut(p, 1, "greedy");
	else if (!rc) {
		if (sm->top_k > 0 && sm->top_k < m) {
			snprintf(cl, sizeof cl, "top-k %d", sm->top_k);
			gb_fig_add_cut(p, sm->top_k, cl);
		}
		if (sm->top_p < 1) {
			gb_sampling only_p = { sm->temp, 0, sm->top_p };
			int np = kept_count(logits, V, &only_p, kept);
			if (np < m) {
				snprintf(cl, sizeof cl, "top-p %g", sm->top_p);
				gb_fig_add_cut(p, np, cl);
			}
		}
	}
	for (int j = 0; j < m; j++)
		free(labels[j]);
	free(q), free(kept);
	if (rc) {
		gb_fig_free(p);
		return -1;
	}
	if (gb_fig_add_panel(d->f, p))
		return -1;
	d->n++;
	return 0;
}

gb_figure *view_decode_figure(view_decode *d)
{
	if (!d)
		return NULL;
	gb_figure *f = d->f;
	session *s = d->s;
	const gb_sampling *sm = &d->sm;
	int greedy = sm->temp == 0 || sm->top_k == 1;
	if (!d->n) {
		gb_fig_free(f);
		free(d);
		return NULL;
	}
	char how[160], sel[200];
	int k = 0;
	if (greedy)
		k = snprintf(how, sizeof how, "greedy (temperature 0)");
	else {
		k = snprintf(how, sizeof how, "temperature %g", sm->temp);
		if (sm->top_k > 0)
			k += snprintf(how + k, sizeof how - (size_t)k, ", top-k %d", sm->top_k);
		if (sm->top_p < 1)
			snprintf(how + k, sizeof how - (size_t)k, ", top-p %g", sm->top_p);
	}
	if (d->total > d->n)
		snprintf(sel, sizeof sel, "%s \xC2\xB7 steps 1-%d of %d", how, d->n, d->total);
	else
		snprintf(sel, sizeof sel, "%s", how);
	if (d->tail)
		view_titlef(f, "Decoding: the most probable next tokens at each step, and the one drawn");
	else
		view_titlef(f, "Decoding: the %d most probable next tokens at each step", GB_DECODE_SHOW);
	view_subtitle(s, f, sel, 1);
	if (greedy)
		gb_fig_set_caption(f, "bars: the model's probabilities; greedy keeps only the most probable; the chosen "
		                      "token is framed");
	else if (sm->top_k > 0 || sm->top_p < 1)
		gb_fig_set_caption(f, "bars: probabilities before the cut-offs (dashed); p_T: the chosen token's after "
		                      "them, the kept ones renormalised to sum to 1; hatched bars are never drawn");
	else if (sm->temp != 1)
		gb_fig_set_caption(f, "bars: probabilities after the temperature, the p_T a token is drawn with; the "
		                      "chosen token is framed");
	else
		gb_fig_set_caption(f, "bars: the model's probabilities, the ones a token is drawn with; the chosen "
		                      "token is framed");
	if (sm->temp != 1 && !greedy) {
		free(f->ref_label);
		f->ref_label = strdup("the model's own p (T 1)");
	}
	f->colorbar = 0;
	view_meta(s, f, "logits");
	free(d);
	return f;
}

/* ---- beam search ----------------------------------------------------------------------------- */

typedef struct bstep {
	gb_beam *beams;
	int n;
} bstep;

struct view_beam {
	session *s;
	int k;
	bstep *steps;
	int n_steps;
};

#define BEAM_SHOW 8     /* beams a step shows */
#define BEAM_DEPTH 12   /* steps a tree shows */

view_beam *view_beam_new(session *s, int k)
{
	view_beam *b = calloc(1, sizeof *b);
	if (b) {
		b->s = s;
		b->k = k;
	}
	return b;
}

int view_beam_add(view_beam *b, int step, const gb_beam *beams, int n)
{
	if (!b || b->n_steps >= BEAM_DEPTH)
		return 0;
	bstep *st = realloc(b->steps, sizeof *st * (size_t)(b->n_steps + 1));
	if (!st)
		return -1;
	b->steps = st;
	bstep *s = &st[b->n_steps];
	s->n = n < BEAM_SHOW ? n : BEAM_SHOW;
	s->beams = calloc((size_t)(s->n ? s->n : 1), sizeof *s->beams);
	if (!s->beams)
		return -1;
	for (int i = 0; i < s->n; i++) {
		s->beams[i] = beams[i];
		s->beams[i].ids = malloc(sizeof(int) * (size_t)(beams[i].n ? beams[i].n : 1));
		if (!s->beams[i].ids) {
			s->n = i;
			b->n_steps++;
			return -1;
		}
		memcpy(s->beams[i].ids, beams[i].ids, sizeof(int) * (size_t)beams[i].n);
	}
	b->n_steps++;
	(void)step;
	return 0;
}

static int same_prefix(const gb_beam *a, int n, const gb_beam *full)
{
	return n <= full->n && !memcmp(a->ids, full->ids, sizeof(int) * (size_t)n);
}

gb_figure *view_beam_figure(view_beam *b, const gb_beam *final, int n_final)
{
	if (!b)
		return NULL;
	session *s = b->s;
	gb_figure *f = b->n_steps ? gb_fig_new(GB_FIG_TREE) : NULL;
	/* node i stands for beam bi[i] of step si[i] (the root: none) */
	int cap = 1;
	for (int t = 0; t < b->n_steps; t++)
		cap += b->steps[t].n;
	const gb_beam **of = calloc((size_t)cap, sizeof *of);
	int *prev = NULL, n_prev = 0;
	char root[96];
	view_text_end(s, 12, root, sizeof root);
	if (!f || !of || gb_fig_add_node(f, root, -1, 0, 0, GB_NODE_ROOT) < 0)
		goto out;
	prev = malloc(sizeof(int) * (BEAM_SHOW + 1));
	if (!prev)
		goto out;
	prev[0] = 0, n_prev = 1;
	for (int t = 0; t < b->n_steps; t++) {
		int cur[BEAM_SHOW], n_cur = 0;
		for (int i = 0; i < b->steps[t].n; i++) {
			const gb_beam *bm = &b->steps[t].beams[i];
			int node = -1;
			if (bm->n < t + 1) { /* ended earlier: the same node, carried along */
				for (int j = 0; j < n_prev && node < 0; j++)
					if (of[prev[j]] && of[prev[j]]->n == bm->n && same_prefix(of[prev[j]], bm->n, bm))
						node = prev[j];
			} else {
				int parent = -1;
				for (int j = 0; j < n_prev && parent < 0; j++) {
					const gb_beam *pb = of[prev[j]];
					if (t == 0 ? prev[j] == 0 : pb && pb->n == bm->n - 1 && same_prefix(pb, pb->n, bm))
						parent = prev[j];
				}
				if (parent < 0)
					continue; /* its parent was past the beams shown */
				size_t len = 0;
				const unsigned char *pc = gb_model_piece(&s->model, bm->ids[bm->n - 1], &len);
				char lab[128];
				snprintf(lab, sizeof lab, "%.*s", (int)(pc ? len : 0), pc ? (const char *)pc : "");
				double ps = parent == 0 ? 0 : of[parent]->score;
				node = gb_fig_add_node(f, lab, parent, bm->score - ps, bm->score, GB_NODE_PRUNED);
				if (node < 0)
					goto out;
				of[node] = bm;
			}
			if (node >= 0)
				cur[n_cur++] = node;
		}
		memcpy(prev, cur, sizeof(int) * (size_t)n_cur);
		n_prev = n_cur;
	}
	/* what survived: the paths of the final beams, the best one strongest */
	for (int i = 1; i < f->n_nodes; i++)
		for (int j = 0; j < n_final; j++)
			if (same_prefix(of[i], of[i]->n, &final[j]))
				f->nodes[i].state = j == 0 ? GB_NODE_BEST : f->nodes[i].state == GB_NODE_BEST ? GB_NODE_BEST
				                                                                             : GB_NODE_KEPT;
	{
		char sel[128];
		int total = b->n_steps;
		if (b->k > BEAM_SHOW)
			snprintf(sel, sizeof sel, "beam width %d (the best %d of each step shown)", b->k, BEAM_SHOW);
		else
			snprintf(sel, sizeof sel, "beam width %d, %d step%s", b->k, total, total == 1 ? "" : "s");
		view_titlef(f, "Beam search: the beams kept at each step");
		view_subtitle(s, f, sel, 1);
		gb_fig_set_caption(f, "each token's log-probability on the edge into its box (or in the box, under it); "
		                      "\xCE\xA3: the path's score, their sum; grey: a beam that was dropped; dark: the best "
		                      "final beam");
		f->colorbar = 0;
		view_meta(s, f, "logits");
	}
out:
	for (int t = 0; t < b->n_steps; t++) {
		for (int i = 0; i < b->steps[t].n; i++)
			free(b->steps[t].beams[i].ids);
		free(b->steps[t].beams);
	}
	free(b->steps);
	free(of);
	free(prev);
	free(b);
	if (f && f->n_nodes < 2) {
		gb_fig_free(f);
		return NULL;
	}
	return f;
}
