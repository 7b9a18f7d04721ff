/* view_common.c — the words, the window and the colours around every view's numbers (see
 * view_common.h). Titles follow the trace's names (model/trace.h lists them) and the model's
 * own arrangement: which sub-layer a norm sits before (or after, in a post-norm model). */
#include "app/view_common.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/view19.h"
#include "app/views.h"
#include "model/tokenizer/tokenizer.h"

void words_label(const char *words, char *out, size_t cap)
{
	size_t o = 0;
	for (const char *p = words; *p && o + 3 < cap; p++) {
		if (*p == ' ') {
			out[o++] = (char)0xC2; /* U+00A0 */
			out[o++] = (char)0xA0;
		} else
			out[o++] = *p;
	}
	if (cap)
		out[o < cap ? o : cap - 1] = 0;
}

const char *model_name(session *s)
{
	const char *d = s->model.dir;
	if (!d[0])
		return "a model in memory";
	size_t n = strlen(d);
	while (n > 1 && d[n - 1] == '/')
		n--;
	static char buf[256];
	size_t i = n;
	while (i > 0 && d[i - 1] != '/')
		i--;
	snprintf(buf, sizeof buf, "%.*s", (int)(n - i), d + i);
	return buf;
}

/* What norm K of a layer normalizes, in this model: decoder-only and encoder layers have
 * norm 1 at attention and norm 2 at the feed-forward; a decoder has cross-attention between. */
static const char *norm_of(session *s, int dec, int k)
{
	const gb_config *c = &s->model.cfg;
	static char buf[64];
	const char *what = k == 1 ? "attention" : k == 2 && c->encdec && dec ? "cross-attention" : "the feed-forward";
	snprintf(buf, sizeof buf, "%s norm %s %s", c->norm == GB_NORM_RMS ? "RMS" : "Layer", c->prenorm ? "before" : "after",
	         what);
	return buf;
}

void tensor_title(session *s, const char *name, int index, char *out, size_t cap)
{
	const char *n = name, *stack = "";
	int dec = 0, layer = 0, k = 0, used = 0;
	if (!strncmp(n, "enc.", 4))
		stack = " (encoder)", n += 4;
	else if (!strncmp(n, "dec.", 4))
		stack = " (decoder)", n += 4, dec = 1;
	if (sscanf(n, "L%d.%n", &layer, &used) == 1 && used > 0)
		n += used;
	else
		layer = 0;
	const char *w = NULL, *part = "";
	char buf[160];
	int cross = !strncmp(n, "cross.", 6);
	if (!strncmp(n, "attn.", 5) || cross) {
		static const char *const names[][2] = {
			{ "q", "Queries" }, { "k", "Keys" }, { "v", "Values" },
			{ "scores", "Raw attention scores q . k" }, { "masked", "Scaled and masked attention scores" },
			{ "weights", "Attention weights" }, { "head_out", "Each head's output: weights x values" },
			{ "merged", "The heads' outputs side by side" }, { "out", "Attention output, after Wo" },
		};
		const char *leaf = n + (cross ? 6 : 5);
		for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
			if (!strcmp(leaf, names[i][0]))
				w = names[i][1];
		if (w && cross) {
			snprintf(buf, sizeof buf, "Cross-attention: %c%s", w[0] - 'A' + 'a', w + 1);
			w = buf;
		}
	} else if (!strcmp(n, "resid.mid"))
		w = "After attention";
	else if (!strcmp(n, "resid.cross"))
		w = "After cross-attention";
	else if (!strcmp(n, "resid.post"))
		w = "After";
	else if (!strcmp(n, "ffn.up"))
		w = "Feed-forward hidden units before the activation";
	else if (!strcmp(n, "ffn.gate"))
		w = "Feed-forward gate, before SiLU";
	else if (!strcmp(n, "ffn.hidden"))
		w = "Feed-forward hidden units after the activation";
	else if (!strcmp(n, "ffn.out"))
		w = "Feed-forward output";
	else if ((sscanf(n, "ln%d.%n", &k, &used) == 1 && used > 0) || !strncmp(n, "lnf.", 4)) {
		const char *leaf = !strncmp(n, "lnf.", 4) ? n + 4 : n + used;
		snprintf(buf, sizeof buf, "%s", !strncmp(n, "lnf.", 4) ? "Final norm" : norm_of(s, dec, k));
		part = !strcmp(leaf, "in") ? ": its input" : !strcmp(leaf, "out") ? ": its output"
		       : !strcmp(leaf, "mean") ? ": mean of each token's input"
		       : !strcmp(leaf, "var") ? ": variance of each token's input"
		       : !strcmp(leaf, "rms") ? ": root mean square of each token's input" : NULL;
		w = part ? buf : NULL;
	} else if (!layer) {
		if (!strcmp(n, "tokens"))
			w = "The text as tokens: each piece and its id";
		else if (!strcmp(n, "embed.tok"))
			w = "Token embeddings";
		else if (!strcmp(n, "embed.pos"))
			w = s->model.cfg.pos == GB_POS_SINUSOIDAL ? "Positional encoding (sinusoids)" : "Learned position vectors";
		else if (!strcmp(n, "embed.sum"))
			w = "Token embeddings plus positions: the input of layer 1";
		else if (!strcmp(n, "logits"))
			w = "Logits: a score for every vocabulary entry";
		else if (!strcmp(n, "probs"))
			w = "Probabilities of the next token";
	}
	if (!w) {
		snprintf(out, cap, "%s", name);
		if (index > 0)
			snprintf(out + strlen(out), cap - strlen(out), " [%d]", index);
		return;
	}
	const gb_ttensor *t = gb_trace_find(&s->trace, name); /* its axes: nothing computed */
	char slice[48] = "";
	if (index > 0 && t && t->ndim == 3)
		snprintf(slice, sizeof slice, ", %s %d", t->axes[0] == GB_AX_KV_HEAD ? "key/value head" : gb_axis_name(t->axes[0]),
		         index);
	if (!strcmp(w, "After")) /* the residual stream leaving a layer */
		snprintf(out, cap, "After layer %d%s%s", layer, slice, stack);
	else if (layer)
		snprintf(out, cap, "%s, layer %d%s%s%s", w, layer, slice, part, stack);
	else
		snprintf(out, cap, "%s%s%s%s", w, slice, part, stack);
}

static void cut_text(const char *clean, int max, int tail, char *out, size_t cap);
static void quote_text(const char *text, int max, int tail, char *out, size_t cap);

void view_text_end(session *s, int max, char *out, size_t cap)
{
	out[0] = 0;
	if (s->text)
		quote_text(s->text, max, 1, out, cap);
}

void view_text_whole(session *s, int max, char *out, size_t cap)
{
	out[0] = 0;
	if (s->text)
		quote_text(s->text, max, 0, out, cap);
}

/* The text a figure came from, quoted and cut to max columns: its start and its end with "…"
 * between, or its end (tail). */
static void quote_text(const char *text, int max, int tail, char *out, size_t cap)
{
	char clean[256];
	size_t o = 0, len = strlen(text);
	const char *from = text;
	if (tail && len >= sizeof clean) { /* the end is what counts: start at a character */
		from = text + len - (sizeof clean - 1);
		while ((*from & 0xC0) == 0x80)
			from++;
	}
	for (const char *p = from; *p && o + 1 < sizeof clean; p++)
		clean[o++] = (unsigned char)*p < 32 ? ' ' : *p; /* a newline would break the line */
	clean[o] = 0;
	const char *q0 = "\xE2\x80\x9C", *q1 = "\xE2\x80\x9D", *ell = "\xE2\x80\xA6";
	if (gb_utf8_width(clean) <= max) {
		snprintf(out, cap, "%s%s%s", q0, clean, q1);
		return;
	}
	if (!tail) { /* the start and the end, cut in the middle: a repeat at the end stays in view */
		char a[256], b[256];
		cut_text(clean, max / 2, 0, a, sizeof a);
		cut_text(clean, max - gb_utf8_width(a), 1, b, sizeof b);
		snprintf(out, cap, "%s%.120s %.120s%s", q0, a, b + strlen(ell), q1);
		return;
	}
	cut_text(clean, max, 1, out + strlen(q0), cap - strlen(q0));
	memcpy(out, q0, strlen(q0));
	snprintf(out + strlen(out), cap - strlen(out), "%s", q1);
}

/* clean (longer than max columns) cut to at most max: its start and "…" (tail 0) or "…" and its
 * end (tail 1), at a word's edge when one is near. */
static void cut_text(const char *clean, int max, int tail, char *out, size_t cap)
{
	const char *ell = "\xE2\x80\xA6";
	uint32_t cp;
	int k, w = 0;
	if (!tail) {
		const char *p = clean;
		while ((k = gb_utf8_decode(p, &cp)) > 0 && w + gb_cp_width(cp) <= max - 1) {
			w += gb_cp_width(cp);
			p += k;
		}
		const char *sp = p; /* end at a word's end when one is near */
		while (sp > clean + max / 2 && sp[0] != ' ' && sp[-1] != ' ')
			sp--;
		if (sp > clean + max / 2)
			p = sp;
		while (p > clean && p[-1] == ' ')
			p--;
		snprintf(out, cap, "%.*s%s", (int)(p - clean), clean, ell);
	} else {
		const char *p = clean;
		int total = gb_utf8_width(clean);
		while (total - w > max - 1 && (k = gb_utf8_decode(p, &cp)) > 0) {
			w += cp == GB_UTF8_BAD ? 1 : gb_cp_width(cp);
			p += k;
		}
		const char *sp = p; /* start at a word's start when one is near */
		while (*sp && sp[0] != ' ' && sp - p < max / 2 && (sp == p || sp[-1] != ' '))
			sp++;
		if (*sp == ' ' && sp - p < max / 2)
			p = sp;
		while (*p == ' ')
			p++;
		snprintf(out, cap, "%s%s", ell, p);
	}
}

void view_meta(session *s, gb_figure *f, const char *tensor_name)
{
	gb_fig_add_meta(f, "Model", s->model.dir[0] ? s->model.dir : "(in memory)");
	if (s->text)
		gb_fig_add_meta(f, "Text", s->text);
	/* an encoder-decoder's figures also depend on the decoder's tokens: its output so far */
	if (s->model.cfg.encdec && s->have_run && s->model.tok && s->trace.n_tgt > 0) {
		const int *t = s->trace.tgt;
		int n = s->trace.n_tgt;
		if (t[0] == s->model.cfg.dec_start_id)
			t++, n--;
		char *out = ids_text(s, t, n);
		gb_fig_add_meta(f, "Target", out ? out : "");
		free(out);
	}
	if (tensor_name)
		gb_fig_add_meta(f, "Tensor", tensor_name);
	gb_fig_add_meta(f, "Engine", s->k->name);
}

void view_subtitle(session *s, gb_figure *f, const char *sel, int tail)
{
	char text[512] = "", buf[768];
	if (s->text)
		quote_text(s->text, s->model.cfg.encdec ? 28 : 56, tail, text, sizeof text);
	/* an encoder-decoder's figures also depend on the decoder's tokens: its output so far */
	if (s->model.cfg.encdec && s->have_run && s->model.tok && s->trace.n_tgt > 1) {
		const int *t = s->trace.tgt;
		int n = s->trace.n_tgt;
		if (t[0] == s->model.cfg.dec_start_id)
			t++, n--;
		char *o = ids_text(s, t, n), q[256];
		if (o) {
			quote_text(o, 28, 1, q, sizeof q);
			snprintf(text + strlen(text), sizeof text - strlen(text), " \xE2\x86\x92 %s", q);
		}
		free(o);
	}
	/* a figure made by another engine than the default says which (lesson 15 compares them) */
	char eng[160] = "";
	if (view_engine(s))
		snprintf(eng, sizeof eng, " \xC2\xB7 %s engine", view_engine(s));
	if (s->textbook) /* and a run with the textbook's layer norm, which the library form's looks like */
		snprintf(eng + strlen(eng), sizeof eng - strlen(eng), " \xC2\xB7 textbook layer norm");
	if (s->mask.kind) { /* issue 19: a run under `set mask` says so */
		char mk[96];
		mask_name(&s->mask, mk, sizeof mk);
		snprintf(eng + strlen(eng), sizeof eng - strlen(eng), " \xC2\xB7 mask: %s", mk);
	}
	snprintf(buf, sizeof buf, "%s%s%s%s%s%s", model_name(s), text[0] ? " \xC2\xB7 " : "", text,
	         sel && *sel ? " \xC2\xB7 " : "", sel ? sel : "", eng);
	gb_fig_set_subtitle(f, buf);
}

const char *view_engine(const session *s)
{
	if (!s->k)
		return NULL;
	if (s->k == gb_kernels_fast()) /* whichever table the processor chose: "fast" everywhere */
		return s->engine_set ? "fast" : NULL;
	return s->k->name;
}

int col_window(const int *units, int n, const char *what, colwin *w)
{
	memset(w, 0, sizeof *w);
	w->n = n;
	if (!units || (units[0] == 0 && units[1] == 0)) {
		w->a = 1;
		w->b = n < WIDE_COLS ? n : WIDE_COLS;
	} else {
		w->a = units[0];
		w->b = units[1] ? units[1] : n;
		if (w->a < 1 || w->a > n || w->b > n || w->b < w->a) {
			if (units[1])
				errorf("%s %d-%d do not exist: this view has %s 1 to %d (e.g. --units 1-%d)", what, units[0], units[1],
				       what, n, n < WIDE_COLS ? n : WIDE_COLS);
			else
				errorf("%s %d do not exist: this view has %s 1 to %d", what, units[0], what, n);
			return -1;
		}
	}
	if (w->a > 1 || w->b < n)
		snprintf(w->sel, sizeof w->sel, "%s %d-%d of %d", what, w->a, w->b, n);
	return 0;
}

float *window_cols(const float *v, int rows, const colwin *w)
{
	int m = w->b - w->a + 1;
	float *out = malloc(sizeof(float) * (size_t)(rows ? rows : 1) * (size_t)(m > 0 ? m : 1));
	if (!out)
		return NULL;
	for (int r = 0; r < rows; r++)
		memcpy(out + (size_t)r * m, v + (size_t)r * w->n + (w->a - 1), sizeof(float) * (size_t)m);
	return out;
}

/* The finite min and max of f's values and its panels', the mask's -inf left out. */
static void extent(const gb_figure *f, double *mn, double *mx)
{
	size_t n = (size_t)f->rows * (size_t)f->cols;
	for (size_t i = 0; f->values && i < n; i++)
		if (isfinite(f->values[i])) {
			*mn = fmin(*mn, f->values[i]);
			*mx = fmax(*mx, f->values[i]);
		}
	for (int p = 0; p < f->n_panels; p++)
		extent(f->panels[p], mn, mx);
}

void fit_range(gb_figure *f, int seq)
{
	double mn = INFINITY, mx = -INFINITY;
	extent(f, &mn, &mx);
	if (!(mn <= mx) || mn >= 0 || mx <= 0) {
		f->cmap = seq;
		f->range = GB_RANGE_AUTO;
	} else {
		double small = fmin(-mn, mx), big = fmax(-mn, mx);
		f->cmap = GB_CMAP_COOLWARM;
		/* a third: GELU's -0.17 against 2.8 is far below it; an embedding's -0.31 .. 0.27 is not */
		f->range = small >= big / 3 ? GB_RANGE_SYMMETRIC : GB_RANGE_CENTERED;
	}
	for (int p = 0; p < f->n_panels; p++) {
		f->panels[p]->cmap = f->cmap;
		f->panels[p]->range = f->range;
	}
}

void view_titlef(gb_figure *f, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	gb_fig_set_title(f, buf);
}

gb_figure *view_heat(session *s, const float *v, int rows, int cols, const char *stack_rows,
                     const char *stack_cols, const char *row_title, const char *col_title)
{
	gb_figure *f = gb_fig_new(GB_FIG_HEATMAP);
	if (!f)
		return NULL;
	gb_fig_set_values(f, v, rows, cols);
	int n;
	if (stack_rows) {
		char **l = token_labels(s, stack_rows, &n);
		if (n == rows)
			gb_fig_set_row_labels(f, (const char *const *)l);
		free_labels(l, n);
		f->row_index0 = 1;
	}
	if (stack_cols) {
		char **l = token_labels(s, stack_cols, &n);
		if (n == cols)
			gb_fig_set_col_labels(f, (const char *const *)l);
		free_labels(l, n);
		f->col_index0 = 1;
	}
	gb_fig_set_axes(f, row_title, col_title);
	return f;
}

gb_figure *view_wide_heat(session *s, const float *v, int rows, int cols, const int *units, const char *what,
                          const char *stack_rows, const char *row_title, const char *col_title, colwin *w)
{
	if (col_window(units, cols, what, w))
		return NULL;
	float *part = window_cols(v, rows, w);
	gb_figure *f = part ? view_heat(s, part, rows, w->b - w->a + 1, stack_rows, NULL, row_title, col_title) : NULL;
	free(part);
	if (f)
		f->col_index0 = w->a;
	return f;
}

const char *view_shown(const colwin *w, char *buf, size_t cap)
{
	buf[0] = 0;
	if (!w || !w->sel[0])
		return buf;
	char what[32];
	int k = (int)strcspn(w->sel, " ");
	snprintf(what, sizeof what, "%.*s", k < 31 ? k : 31, w->sel);
	if (w->a == 1)
		snprintf(buf, cap, " (the first %d of %d %s)", w->b, w->n, what);
	else
		snprintf(buf, cap, " (%s %d-%d of %d)", what, w->a, w->b, w->n);
	return buf;
}

void view_provenance(session *s, gb_figure *f, const char *tensor_name, const colwin *w, int tail)
{
	view_subtitle(s, f, w ? w->sel : NULL, tail);
	view_meta(s, f, tensor_name);
	if (w && w->sel[0])
		gb_fig_add_meta(f, "Columns", w->sel);
}

int view_trace_slice(session *s, int j, gb_ttensor *out, const char *fmt, ...)
{
	char name[64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof name, fmt, ap);
	va_end(ap);
	if (!gb_trace_slice(&s->trace, name, j, out))
		return 0;
	if (!gb_trace_find(&s->trace, name))
		errorf("this model's trace has no %s ('trace' lists what it has)", name);
	else
		errorf("could not compute %s (out of memory)", name);
	return -1;
}

const gb_ttensor *view_trace(session *s, const char *fmt, ...)
{
	char name[64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof name, fmt, ap);
	va_end(ap);
	const gb_ttensor *t = gb_trace_get(&s->trace, name);
	if (!t)
		errorf("this model's trace has no %s ('trace' lists what it has)", name);
	return t;
}

int check_layer(session *s, int layer, int n)
{
	if (layer < 1 || layer > n) {
		errorf("layer %d does not exist: this model has layers 1 to %d", layer, n);
		return -1;
	}
	return 0;
}

int check_head(session *s, int head)
{
	int n = s->model.cfg.n_head;
	if (head < 1 || head > n) {
		errorf("head %d does not exist: this model has heads 1 to %d", head, n);
		return -1;
	}
	return 0;
}
