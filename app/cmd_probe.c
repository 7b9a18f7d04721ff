/* cmd_probe.c — what the model does inside: `heads` (the head detector), `ablate` (one head
 * zeroed), `lens` (the logit lens), `near` (the nearest embeddings) and `compare` (the ref and
 * fast engines on the same input, tensor by tensor). */
#include "app/cmd.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/textout.h"
#include "app/view_common.h"
#include "app/view19.h"
#include "app/views.h"
#include "model/decode.h"
#include "model/tokenizer/tokenizer.h"

/* The head detector over the current text (and random repeated runs for induction). */
int cmd_heads(session *s, int argc, char **argv, const char *rest)
{
	if (argc == 2) {
		int l;
		if (parse_int(argv[1], -1000000, 1000000, &l, "the layer"))
			return -1;
		return show_stage(s, ST_HEADS, l, s->head);
	}
	if (argc != 1)
		return usage(argv[0]);
	if (need_run(s))
		return -1;
	const gb_config *c = &s->model.cfg;
	int L = c->n_layer, H = c->n_head;
	gb_err err;
	if (c->encdec) {
		if (s->trace.n_tgt < 2) {
			errorf("the decoder has only its start token: translate TEXT first, then heads shows the alignment");
			return -1;
		}
		float *mono = malloc(sizeof(float) * (size_t)L * H);
		const int *src[1] = { s->trace.ids }, *tgt[1] = { s->trace.tgt };
		int sl[1] = { s->trace.n_ids }, tl[1] = { s->trace.n_tgt };
		int rc = gb_cross_monotone(&s->model, s->k, src, sl, tgt, tl, 1, mono, &err);
		if (rc)
			errorf("%s", err.msg);
		else {
			printf("cross-attention heads, on the current source and target: how monotone\n"
			       "each head's alignment is (the share of target steps whose most-attended\n"
			       "source position does not move back)\n");
			printf("layer head  monotone\n");
			for (int i = 0; i < L * H; i++)
				printf("%5d %4d  %8.3f\n", i / H + 1, i % H + 1, (double)mono[i]);
		}
		free(mono);
		return rc;
	}
	gb_head_score *sc = malloc(sizeof *sc * (size_t)L * H);
	const int *texts[1] = { s->trace.ids };
	int lens[1] = { s->trace.n_ids };
	/* Induction runs draw ordinary tokens: merged pieces when the vocabulary has them, never
	 * the special tokens at the end. */
	int lo, hi;
	gb_head_run_tokens(&s->model, &lo, &hi);
	int run = (c->n_ctx - 1) / 2 < 24 ? (c->n_ctx - 1) / 2 : 24;
	int rc = gb_head_scores(&s->model, s->k, texts, lens, 1, run, 20, lo, hi, 1, sc, &err);
	if (rc)
		errorf("%s", err.msg);
	else {
		/* (three lines no wider than the table's 60 columns, so a slide sets the table whole at
		 * the size its rows allow: review 10 found it small under 86-column lines; no
		 * number standing alone in them, which a lesson's `best` would take for a row) */
		printf("each head's mean weight on this text (%d tokens): to the\n", s->trace.n_ids);
		printf("previous token, the first and itself; on random runs seen\n");
		printf("twice (%d runs of %d tokens): previous token and induction\n", 20, run);
		print_head_scores(stdout, sc, L, H, 0, "                 on the current text          on random runs\n");
	}
	free(sc);
	return rc;
}

/* The top next tokens at the last position of a trace, for before/after tables. */
static void top_tokens(const gb_trace *tr, int k, int *ids, double *p)
{
	int V;
	const float *row = gb_last_logits(tr, &V);
	double lz = gb_logsumexp(row, V);
	for (int i = 0; i < k; i++) {
		int best = -1;
		for (int v = 0; v < V; v++) {
			int taken = 0;
			for (int j = 0; j < i; j++)
				taken |= ids[j] == v;
			if (!taken && (best < 0 || row[v] > row[best]))
				best = v;
		}
		ids[i] = best;
		p[i] = exp(row[best] - lz);
	}
}

static double prob_of(const gb_trace *tr, int id)
{
	int V;
	const float *row = gb_last_logits(tr, &V);
	return exp(row[id] - gb_logsumexp(row, V));
}

/* Zeroes the heads named (pairs of layer and head), reruns, and compares the next-token
 * distributions. The session's trace is left as it was (the heads are restored). */
int cmd_ablate(session *s, int argc, char **argv, const char *rest)
{
	if (argc < 3 || argc % 2 == 0)
		return usage(argv[0]);
	if (need_run(s))
		return -1;
	const gb_config *c = &s->model.cfg;
	float *scale = malloc(sizeof(float) * (size_t)c->n_layer * c->n_head);
	char without[160] = "without";
	size_t wl = strlen(without);
	if (!scale) {
		errorf("out of memory");
		return -1;
	}
	for (int i = 0; i < c->n_layer * c->n_head; i++)
		scale[i] = 1;
	for (int a = 1; a + 1 < argc; a += 2) {
		int l, h;
		if (parse_int(argv[a], -1000000, 1000000, &l, "the layer") ||
		    parse_int(argv[a + 1], -1000000, 1000000, &h, "the head") || check_layer(s, l, c->n_layer) ||
		    check_head(s, h)) {
			free(scale);
			return -1;
		}
		scale[(l - 1) * c->n_head + (h - 1)] = 0;
		if (wl + 16 < sizeof without)
			wl += (size_t)snprintf(without + wl, sizeof without - wl, "%s L%d H%d", a > 1 ? "," : "", l, h);
	}
	gb_trace ab = { 0 };
	gb_fwd_opts o = { 0 };
	o.k = s->k;
	o.head_scale = scale;
	mask_opts(s, &o); /* the run it compares with had the session's mask */
	gb_err err;
	const gb_trace *tr = &s->trace;
	int rc = gb_forward(&s->model, tr->ids, tr->n_ids, c->encdec ? tr->tgt : NULL, tr->n_tgt, &ab, &o, &err);
	free(scale);
	if (rc) {
		errorf("%s", err.msg);
		gb_trace_free(&ab);
		return -1;
	}
	int k = 5, before[5], after[5];
	double pb[5], pa[5];
	top_tokens(tr, k, before, pb);
	top_tokens(&ab, k, after, pa);
	/* One row per token: the top tokens with every head, then those that rise into the top
	 * without the head; two plain columns, before and after. */
	int rows[10], n = 0;
	for (int i = 0; i < k; i++)
		rows[n++] = before[i];
	for (int i = 0; i < k; i++) {
		int seen = 0;
		for (int j = 0; j < k; j++)
			seen |= after[i] == before[j];
		if (!seen)
			rows[n++] = after[i];
	}
	int ww = (int)strlen(without) > 15 ? (int)strlen(without) : 15;
	printf("  %-14s %10s %*s\n", "next token", "all heads", ww, without);
	for (int i = 0; i < n; i++) {
		char t[128];
		piece_str(s, rows[i], t, sizeof t);
		/* columns by display width: printf's %-14s counts a "·" as two */
		printf("  ");
		text_cols(stdout, t, 14);
		printf(" %10.3f %*.3f\n", prob_of(tr, rows[i]), ww, prob_of(&ab, rows[i]));
	}
	if (before[0] != after[0]) {
		char a[128], b[128];
		piece_str(s, before[0], b, sizeof b);
		piece_str(s, after[0], a, sizeof a);
		printf("the most probable next token changes: %s -> %s\n", b, a);
	} else
		printf("the most probable next token stays; its probability goes %.3f -> %.3f\n", pb[0], prob_of(&ab, before[0]));
	gb_trace_free(&ab);
	return 0;
}

/* Prints s in exactly `width` terminal columns: cut at a whole character, padded with spaces
 * (printf's %-10s counts bytes, which shifts columns after a "·"). */
/* The columns s takes at a terminal. */
static int str_cols(const char *s)
{
	int used = 0;
	while (*s) {
		uint32_t cp;
		int n = gb_utf8_decode(s, &cp);
		if (n <= 0)
			break;
		used += gb_cp_width(cp);
		s += n;
	}
	return used;
}

/* s in width columns, padded; one too long is cut with "…" at its end, never silently into
 * another token ("·everywher" is a token of its own, or none). */
static void put_cols(const char *s, int width)
{
	int used = 0, cut = str_cols(s) > width;
	if (cut)
		width--;
	while (*s && used < width) {
		uint32_t cp;
		int n = gb_utf8_decode(s, &cp);
		if (n <= 0)
			break;
		int w = gb_cp_width(cp);
		if (used + w > width)
			break;
		fwrite(s, 1, (size_t)n, stdout);
		s += n;
		used += w;
	}
	if (cut)
		fputs("\xE2\x80\xA6", stdout);
	printf("%*s", width - used, "");
}

/* The logit lens: the residual stream after each layer, put through the final norm and the
 * output projection as if it were the last layer. A table of the top token per layer and
 * position, and a figure of that token's probability. */
int cmd_lens(session *s, int argc, char **argv, const char *rest)
{
	if (argc != 1)
		return usage(argv[0]);
	if (need_run(s))
		return -1;
	const gb_config *c = &s->model.cfg;
	const char *p = c->encdec ? "dec." : "";
	int L = c->n_layer, D = c->d_model, V = c->vocab;
	const gb_ttensor *e = gb_trace_get(&s->trace, c->encdec ? "dec.embed.sum" : "embed.sum");
	int T = e->shape[0], show_from = T > 8 ? T - 8 : 0, cols = T - show_from;
	float *x = malloc(sizeof(float) * (size_t)T * D), *lg = malloc(sizeof(float) * (size_t)T * V);
	float *st = malloc(sizeof(float) * (size_t)T * 2), *prob = malloc(sizeof(float) * (size_t)(L + 1) * cols);
	int *top = malloc(sizeof(int) * (size_t)(L + 1) * cols);
	for (int l = 0; l <= L; l++) {
		char name[64];
		snprintf(name, sizeof name, "%sL%d.resid.post", p, l);
		const gb_ttensor *t = l ? gb_trace_get(&s->trace, name) : e;
		memcpy(x, t->data, sizeof(float) * (size_t)T * D);
		if (c->final_norm) {
			const gb_normw *nw = &s->model.dec.final;
			if (c->norm == GB_NORM_RMS)
				s->k->rmsnorm(x, st, x, nw->g, T, D, c->norm_eps);
			else
				s->k->layernorm(x, st, st + T, x, nw->g, nw->b, T, D, c->norm_eps, c->textbook_ln || s->textbook);
		}
		/* through the model's own dispatch: a BF16/F16 checkpoint's lm_head (TinyLlama's) is
		 * kept 16-bit, and its float pointer is NULL */
		gb_linear_apply(s->k, lg, x, T, &s->model.lm_head);
		for (int i = show_from; i < T; i++) {
			const float *row = lg + (size_t)i * V;
			int best = 0;
			double mx, z = 0;
			for (int v = 1; v < V; v++)
				if (row[v] > row[best])
					best = v;
			mx = row[best];
			for (int v = 0; v < V; v++)
				z += exp(row[v] - mx);
			top[l * cols + i - show_from] = best;
			prob[l * cols + i - show_from] = (float)(1 / z);
		}
	}
	int n, cw = 10; /* the columns a token has: its widest, 10 to 14 */
	char **tok = token_labels(s, c->encdec ? "dec." : "", &n);
	for (int i = show_from; i < T; i++) {
		char piece[128];
		piece_str(s, (int)s->trace.t[0].data[i], piece, sizeof piece);
		int w = str_cols(c->encdec ? tok[i] : piece);
		cw = w > cw ? w : cw;
		for (int l = 0; l <= L; l++) {
			piece_str(s, top[l * cols + i - show_from], piece, sizeof piece);
			w = str_cols(piece);
			cw = w > cw ? w : cw;
		}
	}
	cw = cw > 14 ? 14 : cw;
	printf("logit lens: the top next token if the model stopped after each layer%s\n",
	       show_from ? " (the last 8 positions)" : "");
	printf("%-8s", "after");
	for (int i = show_from; i < T; i++) {
		char piece[128];
		piece_str(s, (int)s->trace.t[0].data[i], piece, sizeof piece);
		putchar(' ');
		put_cols(c->encdec ? tok[i] : piece, cw);
	}
	printf("\n");
	for (int l = 0; l <= L; l++) {
		char lab[16];
		snprintf(lab, sizeof lab, l ? "layer %d" : "embed", l);
		printf("%-8s", lab);
		for (int i = 0; i < cols; i++) {
			char piece[128];
			piece_str(s, top[l * cols + i], piece, sizeof piece);
			putchar(' ');
			put_cols(piece, cw);
		}
		printf("\n");
	}
	gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
	gb_fig_set_values(f, prob, L + 1, cols);
	char **rl = malloc(sizeof(char *) * (size_t)(L + 1));
	for (int l = 0; l <= L; l++) {
		char w[24];
		snprintf(w, sizeof w, l ? "after layer %d" : "embeddings", l);
		rl[l] = malloc(32);
		words_label(w, rl[l], 32);
	}
	gb_fig_set_row_labels(f, (const char *const *)rl);
	free_labels(rl, L + 1);
	gb_fig_set_col_labels(f, (const char *const *)(tok + show_from));
	f->col_index0 = show_from + 1; /* the positions' numbers in the text, as other figures count them */
	/* the point of the lens: which token is on top in each cell (its colour is how sure) */
	char **ct = malloc(sizeof(char *) * (size_t)(L + 1) * cols);
	for (int i = 0; i < (L + 1) * cols; i++) {
		size_t len = 0;
		const unsigned char *b = gb_model_piece(&s->model, top[i], &len);
		ct[i] = malloc(len + 16);
		if (b) {
			memcpy(ct[i], b, len);
			ct[i][len] = 0;
		} else
			snprintf(ct[i], len + 16, "#%d", top[i]);
	}
	gb_fig_set_cell_text(f, (const char *const *)ct);
	free_labels(ct, (L + 1) * cols);
	gb_fig_set_axes(f, "read out", "position");
	gb_fig_set_title(f, "Logit lens: the top next token after each layer, coloured by its probability");
	gb_fig_set_caption(f, "p = softmax(norm_final(x_layer) W_out): the residual stream read out early");
	f->range = GB_RANGE_FIXED;
	f->vmin = 0;
	f->vmax = 1;
	char sel[64] = "";
	if (show_from)
		snprintf(sel, sizeof sel, "positions %d-%d of %d", show_from + 1, T, T);
	view_subtitle(s, f, sel, show_from > 0);
	view_meta(s, f, NULL);
	free_labels(tok, n);
	free(x);
	free(lg);
	free(st);
	free(prob);
	free(top);
	return show_figure(s, f);
}

/* The tokens whose embeddings point the most the same way as TEXT's (cosine similarity). */
int cmd_near(session *s, int argc, char **argv, const char *rest)
{
	if (need_model(s))
		return -1;
	int k = 10;
	char text[256];
	snprintf(text, sizeof text, "%s", rest);
	char *sp = strrchr(text, ' ');
	if (sp && sp[1] && strspn(sp + 1, "0123456789") == strlen(sp + 1)) {
		k = atoi(sp + 1);
		*sp = 0;
		if (k < 1 || k > 100) {
			errorf("K must be a whole number from 1 to 100");
			return -1;
		}
	}
	if (!*text) {
		errorf("usage: near TEXT [K]");
		return -1;
	}
	int *ids, n;
	/* A word inside a sentence carries its space (" cat"): prefer that form when it is one token. */
	char spaced[260];
	snprintf(spaced, sizeof spaced, " %s", text);
	if (encode(s, spaced, &ids, &n))
		return -1;
	if (n != 1) {
		free(ids);
		if (encode(s, text, &ids, &n))
			return -1;
	}
	if (n == 0) {
		errorf("the text gave no tokens");
		free(ids);
		return -1;
	}
	int id = ids[0], D = s->model.cfg.d_model, V = s->model.cfg.vocab;
	char piece[128];
	piece_str(s, id, piece, sizeof piece);
	if (n > 1)
		printf("'%s' is %d tokens; using the first, %s\n", text, n, piece);
	free(ids);
	/* rows through the model's accessor: a table kept 16-bit is widened a row at a time */
	double *sim = malloc(sizeof(double) * (size_t)V);
	float *ebuf = malloc(sizeof(float) * 2 * (size_t)D);
	if (!sim || !ebuf) {
		free(sim);
		free(ebuf);
		errorf("out of memory");
		return -1;
	}
	float *rbuf = ebuf + D;
	const float *e = gb_model_embed_row(&s->model, id, ebuf);
	double ne = 0;
	for (int d = 0; d < D; d++)
		ne += (double)e[d] * e[d];
	for (int v = 0; v < V; v++) {
		const float *r = gb_model_embed_row(&s->model, v, rbuf);
		double dot = 0, nv = 0;
		for (int d = 0; d < D; d++) {
			dot += (double)e[d] * r[d];
			nv += (double)r[d] * r[d];
		}
		sim[v] = nv > 0 && ne > 0 ? dot / sqrt(ne * nv) : 0;
	}
	free(ebuf);
	printf("closest embeddings to %s (cosine):\n", piece);
	sim[id] = -2; /* itself */
	for (int i = 0; i < k; i++) {
		int best = 0;
		for (int v = 1; v < V; v++)
			if (sim[v] > sim[best])
				best = v;
		piece_str(s, best, piece, sizeof piece);
		printf("  ");
		text_cols(stdout, piece, 16);
		printf(" %6.3f\n", sim[best]);
		sim[best] = -3;
	}
	free(sim);
	return 0;
}

/* Runs the current input through ref and through the session's other engine, per tensor. */
/* compare's figure: the digits two engines agree on, -log10 of the relative difference, for
 * each layer (rows) and each of a layer's tensors (columns); "exact" where they are equal.
 * Names are split at the layer ("L2.attn.q" -> row "L2", column "attn.q"; an encoder-decoder's
 * rows are "enc.L1" ... "dec.L2"); tensors outside the layers (embeddings, final norm, logits)
 * are in the printed table only. A ".in" is the tensor before it again, and is left out. */
static gb_figure *agreement_figure(session *s, const gb_trace *a, const double *rel, const char *fast, const char *ref)
{
	enum { MAXR = 64, MAXC = 48 };
	char rows[MAXR][16], cols[MAXC][32];
	int nr = 0, nc = 0;
	int *cell = malloc(sizeof(int) * (size_t)(a->n ? a->n : 1) * 2);
	if (!cell)
		return NULL;
	for (int i = 0; i < a->n; i++) {
		const char *nm = a->t[i].name, *l = strstr(nm, "L");
		char row[16], col[32];
		int layer, used = 0;
		cell[2 * i] = -1;
		if (!l || (l != nm && l[-1] != '.') || sscanf(l, "L%d.%n", &layer, &used) != 1 || !used)
			continue;
		snprintf(row, sizeof row, "%.*sL%d", (int)(l - nm), nm, layer);
		snprintf(col, sizeof col, "%s", l + used);
		size_t cl = strlen(col);
		if (cl >= 3 && !strcmp(col + cl - 3, ".in"))
			continue;
		int r = 0, c = 0;
		while (r < nr && strcmp(rows[r], row))
			r++;
		while (c < nc && strcmp(cols[c], col))
			c++;
		if ((r == nr && nr == MAXR) || (c == nc && nc == MAXC))
			continue;
		if (r == nr)
			snprintf(rows[nr++], sizeof rows[0], "%s", row);
		if (c == nc)
			snprintf(cols[nc++], sizeof cols[0], "%s", col);
		cell[2 * i] = r;
		cell[2 * i + 1] = c;
	}
	if (!nr || !nc) {
		free(cell);
		return NULL;
	}
	float *v = malloc(sizeof(float) * (size_t)nr * nc);
	char **txt = calloc((size_t)nr * nc, sizeof(char *));
	for (int k = 0; v && k < nr * nc; k++)
		v[k] = -INFINITY; /* no such tensor (an encoder layer's cross-attention): grey */
	for (int i = 0; v && txt && i < a->n; i++) {
		if (cell[2 * i] < 0)
			continue;
		int k = cell[2 * i] * nc + cell[2 * i + 1];
		/* equal: drawn above the scale (float32 carries ~7), and said in words */
		v[k] = rel[i] > 0 ? (float)-log10(rel[i]) : 9.0f;
		if (!(rel[i] > 0))
			txt[k] = strdup("exact");
	}
	gb_figure *f = NULL;
	if (v && txt) {
		const char *rl[MAXR], *cl[MAXC];
		for (int r = 0; r < nr; r++)
			rl[r] = rows[r];
		for (int c = 0; c < nc; c++)
			cl[c] = cols[c];
		f = gb_fig_new(GB_FIG_HEATMAP);
		gb_fig_set_values(f, v, nr, nc);
		gb_fig_set_row_labels(f, rl);
		gb_fig_set_col_labels(f, cl);
		gb_fig_set_axes(f, "layer", "tensor");
		gb_fig_set_cell_text(f, (const char *const *)txt);
		f->numbers = 1;
		f->precision = 1;
		f->masked = 1;
		snprintf(f->mask_what, sizeof f->mask_what, "no such tensor");
		f->cmap = GB_CMAP_VIRIDIS;
		/* float32 gives 6 or 7 digits: a scale from 4 to 8 shows which tensors keep fewer */
		f->range = GB_RANGE_FIXED;
		f->vmin = 4;
		f->vmax = 8;
		view_titlef(f, "Digits the %s engine agrees on with %s, per layer and tensor", fast, ref);
		/* the tensors outside the layers (the output's probabilities are often the least
		 * exact) in the caption, so the figure holds the whole trace's worst */
		char cap[640];
		int k = snprintf(cap, sizeof cap, "digits = -log10(max|%s - %s| / max|%s|) over each tensor;  float32 carries about 7",
		                 fast, ref, ref);
		int first = 1;
		for (int i = 0; i < a->n && k < (int)sizeof cap - 40; i++) {
			const char *nm = a->t[i].name;
			size_t nl = strlen(nm);
			if (cell[2 * i] >= 0 || !strcmp(nm, "tokens") || (nl >= 3 && !strcmp(nm + nl - 3, ".in")) ||
			    strstr(nm, "tokens"))
				continue;
			if (rel[i] > 0)
				k += snprintf(cap + k, sizeof cap - (size_t)k, "%s %s %.1f", first ? ";  outside the layers:" : ",", nm,
				              -log10(rel[i]));
			else
				k += snprintf(cap + k, sizeof cap - (size_t)k, "%s %s exact", first ? ";  outside the layers:" : ",", nm);
			first = 0;
		}
		gb_fig_set_caption(f, cap);
		view_provenance(s, f, NULL, NULL, 0);
	}
	for (int k = 0; txt && k < nr * nc; k++)
		free(txt[k]);
	free(txt);
	free(v);
	free(cell);
	return f;
}

int cmd_compare(session *s, int argc, char **argv, const char *rest)
{
	if (argc != 1)
		return usage(argv[0]);
	if (need_run(s))
		return -1;
	const gb_kernels *ref = gb_kernels_ref(), *fast = s->k == ref ? gb_kernels_fast() : s->k;
	gb_trace a = { 0 }, b = { 0 };
	gb_err err;
	gb_fwd_opts oa = { 0 }, ob = { 0 };
	oa.k = ref;
	ob.k = fast;
	mask_opts(s, &oa);
	mask_opts(s, &ob);
	const gb_trace *cur = &s->trace;
	if (gb_forward(&s->model, cur->ids, cur->n_ids, cur->encdec ? cur->tgt : NULL, cur->n_tgt, &a, &oa, &err) ||
	    gb_forward(&s->model, cur->ids, cur->n_ids, cur->encdec ? cur->tgt : NULL, cur->n_tgt, &b, &ob, &err)) {
		errorf("%s", err.msg);
		gb_trace_free(&a);
		gb_trace_free(&b);
		return -1;
	}
	/* The summary comes first, so that a cut listing (a handout shows 40 lines) still has it. */
	double *md = calloc((size_t)(a.n ? a.n : 1), sizeof *md), *rel = calloc((size_t)(a.n ? a.n : 1), sizeof *rel);
	if (!md || !rel) {
		errorf("out of memory");
		free(md);
		free(rel);
		gb_trace_free(&a);
		gb_trace_free(&b);
		return -1;
	}
	int worst = -1;
	for (int i = 0; i < a.n; i++) {
		/* a long run's traces compute their tensors on demand, a layer at a time */
		const gb_ttensor *x = gb_trace_at(&a, i), *y = gb_trace_at(&b, i);
		if (!x || !y) {
			errorf("out of memory computing %s", a.t[i].name);
			free(md);
			free(rel);
			gb_trace_free(&a);
			gb_trace_free(&b);
			return -1;
		}
		double mx = 0;
		for (size_t j = 0; j < x->n; j++) {
			double r = x->data[j], f = y->data[j];
			if (isinf(r) && r == f)
				continue; /* the same masked -inf in both */
			double d = fabs(r - f);
			if (!(d <= md[i]))
				md[i] = d;
			if (fabs(r) > mx)
				mx = fabs(r);
		}
		rel[i] = mx > 0 ? md[i] / mx : md[i];
		if (worst < 0 || rel[i] > rel[worst])
			worst = i;
	}
	printf("largest relative difference %.3g (%s; %s against %s)\n", worst >= 0 ? rel[worst] : 0.0,
	       worst >= 0 ? a.t[worst].name : "no tensors", fast->name, ref->name);
	printf("%-26s %12s %12s   (relative = max|diff| / max|%s| over the tensor)\n", "tensor", "max abs", "relative",
	       ref->name);
	for (int i = 0; i < a.n; i++)
		printf("%-26s %12.3g %12.3g\n", a.t[i].name, md[i], rel[i]);
	gb_figure *f = agreement_figure(s, &a, rel, fast->name, ref->name);
	free(md);
	free(rel);
	gb_trace_free(&a);
	gb_trace_free(&b);
	return f ? show_figure(s, f) : 0;
}
