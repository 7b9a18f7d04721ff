/* t_headviews.c — the commands that show one head of a long input (issue 12): on a session
 * whose run recorded lazily (model/lazytrace.h), `print NAME HEAD` and `qkv L H` compute that
 * head alone (their layer's attention tensors stay uncomputed), `heads L` computes each head
 * alone too, or the layer's attention sub-layer once when key/value heads are shared, and what
 * each shows equals the full trace's
 * numbers bit for bit: the same model and text run with an unbounded budget in a second
 * session. On gpt2 (learned positions) and llama (RoPE, grouped-query heads, a window), both
 * kernel tables. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/cmd.h"
#include "app/session.h"
#include "app/views.h"
#include "model/forward.h"
#include "tests/model_fixture.h"
#include "tests/tap.h"

enum { T = 14, LAYERS = 3 };

/* What cmd_print writes to stdout, into buf (NUL-terminated); its status in *rc. */
static void print_into(session *s, const char *name, const char *head, char *buf, size_t cap, int *rc)
{
	char *argv[] = { "print", (char *)name, (char *)head, NULL };
	FILE *tmp = tmpfile();
	buf[0] = 0;
	if (!tmp) {
		*rc = -1;
		return;
	}
	fflush(stdout);
	int keep = dup(1);
	dup2(fileno(tmp), 1);
	*rc = cmd_print(s, 3, argv, NULL);
	fflush(stdout);
	dup2(keep, 1);
	close(keep);
	rewind(tmp);
	size_t n = fread(buf, 1, cap - 1, tmp);
	buf[n] = 0;
	fclose(tmp);
}

static int computed(session *s, const char *fmt, int l)
{
	char name[64];
	snprintf(name, sizeof name, fmt, l);
	const gb_ttensor *t = gb_trace_find(&s->trace, name);
	return t && t->data;
}

/* Slice j of the full trace's entry, or NULL. */
static const float *full_slice(session *s, const char *name, int j, int *n)
{
	gb_ttensor o;
	if (gb_trace_slice(&s->trace, name, j, &o))
		return NULL;
	*n = (int)o.n;
	return o.data;
}

/* A figure's values against the slice: bit for bit, but for the weights the view marks
 * masked (-inf where the full trace's masked scores are -inf). */
static int same_values(const gb_figure *f, const float *want, int n, const float *masked)
{
	if (!f || !f->values || !want || f->rows * f->cols != n)
		return 0;
	for (int i = 0; i < n; i++) {
		if (masked && isinf(f->values[i]) && f->values[i] < 0 && isinf(masked[i]) && masked[i] < 0)
			continue;
		if (memcmp(&f->values[i], &want[i], sizeof(float)))
			return 0;
	}
	return 1;
}

static void one(const char *what, gb_config c, const gb_kernels *k, uint64_t seed)
{
	session lz, full;
	session_init(&lz);
	session_init(&full);
	if (!tap_ok(!make(&lz.model, &c, seed) && !make(&full.model, &c, seed), "%s (%s): models", what, k->name))
		return;
	lz.loaded = full.loaded = 1;
	lz.k = full.k = k;
	lz.trace.budget = 4096; /* far below the run: recorded lazily, a cache of about one head */
	full.trace.budget = SIZE_MAX;
	int ids[T];
	for (int i = 0; i < T; i++)
		ids[i] = (3 + 5 * i) % c.vocab;
	if (!tap_ok(!forward(&lz, ids, T, NULL, 0) && !forward(&full, ids, T, NULL, 0) && lz.trace.lazy &&
	                    !full.trace.lazy,
	            "%s (%s): the small budget records lazily, the large one fully", what, k->name))
		goto out;

	/* print NAME HEAD: the head alone, the text the full trace prints */
	static char a[1 << 16], b[1 << 16];
	int ok = 1, alone = 1, ra, rb;
	const char *kinds[] = { "q", "k", "v", "scores", "masked", "weights", "head_out" };
	for (int l = 1; l <= LAYERS; l++)
		for (int i = 0; i < 7; i++) {
			char name[48], head[8];
			int kv = i >= 1 && i <= 2, h = 1 + (l + i) % (kv ? c.n_kv_head : c.n_head);
			snprintf(name, sizeof name, "L%d.attn.%s", l, kinds[i]);
			snprintf(head, sizeof head, "%d", h);
			print_into(&lz, name, head, a, sizeof a, &ra);
			print_into(&full, name, head, b, sizeof b, &rb);
			alone &= !computed(&lz, "L%d.attn.weights", l) && !computed(&lz, "L%d.attn.out", l) &&
			         !computed(&lz, "L%d.ln1.out", l);
			/* the numbers print read, again from the head's slot (nothing computed now) */
			int n = 0, nf = 0;
			gb_ttensor o;
			const float *want = full_slice(&full, name, h - 1, &nf);
			if (ra || rb || strcmp(a, b) || !*a || gb_trace_slice(&lz.trace, name, h - 1, &o) || !want ||
			    (n = (int)o.n) != nf || memcmp(o.data, want, (size_t)n * sizeof(float))) {
				tap_diag("print %s %s differs (rc %d %d)", name, head, ra, rb);
				ok = 0;
			}
		}
	tap_ok(ok, "%s (%s): print NAME HEAD of q, k, v, scores, masked, weights, head_out in every layer "
	       "prints the full trace's numbers (bit for bit in the head's slot)", what, k->name);
	tap_ok(alone, "%s (%s): ... and computes that head alone (its layer's weights, out and ln1.out not computed)",
	       what, k->name);

	/* qkv L H: three panels, each this head's (or its key/value head's) columns */
	ok = 1, alone = 1;
	for (int l = 1; l <= LAYERS; l++) {
		int h = 1 + l % c.n_head, g = (h - 1) / (c.n_head / c.n_kv_head);
		gb_figure *f = view_qkv(&lz, l, h, NULL);
		alone &= !computed(&lz, "L%d.attn.q", l) && !computed(&lz, "L%d.attn.weights", l);
		const char *nm[3] = { "q", "k", "v" };
		for (int i = 0; i < 3; i++) {
			char name[48];
			int n = 0;
			snprintf(name, sizeof name, "L%d.attn.%s", l, nm[i]);
			const float *want = full_slice(&full, name, i ? g : h - 1, &n);
			if (!f || f->n_panels != 3 || !same_values(f->panels[i], want, n, NULL)) {
				tap_diag("qkv %d %d: panel %s differs", l, h, nm[i]);
				ok = 0;
			}
		}
		gb_fig_free(f);
	}
	tap_ok(ok, "%s (%s): qkv L H draws the full trace's q, k, v columns of the head, bit for bit", what, k->name);
	tap_ok(alone, "%s (%s): ... computing that head alone", what, k->name);

	/* heads L: every panel the full trace's weights */
	ok = 1;
	int once = 1;
	for (int l = LAYERS; l >= 1; l--) {
		gb_figure *f = view_heads(&lz, l);
		/* grouped key/value heads: the sub-layer once; one per query head: each head alone */
		int shared = c.n_kv_head < c.n_head;
		once &= computed(&lz, "L%d.attn.weights", l) == shared && computed(&lz, "L%d.attn.masked", l) == shared &&
		        computed(&lz, "L%d.attn.out", l) == shared;
		for (int h = 0; h < c.n_head; h++) {
			char name[48], mname[48];
			int n = 0, nm = 0;
			snprintf(name, sizeof name, "L%d.attn.weights", l);
			snprintf(mname, sizeof mname, "L%d.attn.masked", l);
			const float *want = full_slice(&full, name, h, &n), *mk = full_slice(&full, mname, h, &nm);
			if (!f || f->n_panels != c.n_head || nm != n || !same_values(f->panels[h], want, n, mk)) {
				tap_diag("heads %d: panel %d differs", l, h + 1);
				ok = 0;
			}
		}
		gb_fig_free(f);
	}
	tap_ok(ok, "%s (%s): heads L draws every head's weights as the full trace has them, bit for bit", what, k->name);
	tap_ok(once, "%s (%s): ... %s", what, k->name,
	       c.n_kv_head < c.n_head ? "from its attention sub-layer computed once (shared key/value heads)"
	                              : "each head computed alone (its layer's weights, masked, out not computed)");
out:
	session_free(&lz);
	session_free(&full);
}

static void v_llama(gb_config *c) { c->n_kv_head = 2; c->window = 5; }

int main(void)
{
	const gb_kernels *tabs[2] = { gb_kernels_ref(), gb_kernels_fast() };
	for (int t = 0; t < 2; t++) {
		gb_config g = base(GB_FAM_GPT2), l = base(GB_FAM_LLAMA);
		g.n_layer = l.n_layer = LAYERS;
		v_llama(&l);
		one("gpt2", g, tabs[t], 21);
		one("llama GQA + window", l, tabs[t], 22);
	}
	return tap_done();
}
