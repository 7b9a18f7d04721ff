/* lazytrace.c — the cache of a lazy trace's computed groups (model/lazytrace.h). */
#include "model/lazytrace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void lazy_free(void *p)
{
	gb_lazy *z = p;
	if (!z)
		return;
	for (int s = 0; s < GB_LAZY_SLOTS; s++)
		gb_trace_free(&z->slot[s].t);
	free(z->head_scale);
	free(z->g);
	free(z);
}

static size_t lazy_bytes(const void *p)
{
	const gb_lazy *z = p;
	size_t b = 0;
	for (int s = 0; s < GB_LAZY_SLOTS; s++)
		if (z->slot[s].grp)
			b += gb_trace_bytes(&z->slot[s].t);
	return b;
}

/* The sub-layer of group g that entry name belongs to (enum gb_part), or -1 for a group that
 * is no layer (logits, probs). */
static int part_of(const gb_lazy *z, int g, const char *name)
{
	const gb_lazy_group *G = &z->g[g - 1];
	if (G->layer < 0)
		return -1;
	const char *p = name + strlen(z->st[G->stack].pfx);
	int l, used = 0;
	if (sscanf(p, "L%d.%n", &l, &used) != 1 || !used)
		return GB_PART_FFN;
	p += used;
	int cross = z->m->cfg.encdec && G->stack == 1; /* a decoder of an encoder-decoder */
	if (!strncmp(p, "ln1.", 4) || !strncmp(p, "attn.", 5) || !strcmp(p, "resid.mid"))
		return GB_PART_ATTN;
	if (!strncmp(p, "cross.", 6) || !strcmp(p, "resid.cross") || (cross && !strncmp(p, "ln2.", 4)))
		return GB_PART_CROSS;
	return GB_PART_FFN;
}

/* Slot s's part: -1 a whole group, -2 - p sub-layer p of a layer, >= 0 one head. */
static int slot_sub(const gb_lazy *z, int s) { return z->slot[s].part <= -2 ? -2 - z->slot[s].part : -1; }

/* Forgets slot s: the entries it gave data to lose it again (a head's slot lends its data to
 * no entry). */
static void evict(gb_trace *tr, gb_lazy *z, int s)
{
	int g = z->slot[s].grp, whole = z->slot[s].part == -1, sub = slot_sub(z, s);
	for (int i = 0; (whole || sub >= 0) && i < tr->n; i++)
		if (tr->t[i].group == g && (whole || part_of(z, g, tr->t[i].name) == sub))
			tr->t[i].data = NULL;
	gb_trace_free(&z->slot[s].t);
	z->slot[s].grp = 0;
}

static int oldest(const gb_lazy *z)
{
	int best = -1;
	for (int s = 0; s < GB_LAZY_SLOTS; s++)
		if (z->slot[s].grp && (best < 0 || z->slot[s].used < z->slot[best].used))
			best = s;
	return best;
}

/* A free slot, after forgetting the least recently used until need more bytes fit the bound
 * (so memory never holds more than the bound and what is about to be computed). */
static int room(gb_trace *tr, gb_lazy *z, size_t need)
{
	for (;;) {
		int free_slot = -1;
		for (int s = 0; s < GB_LAZY_SLOTS && free_slot < 0; s++)
			if (!z->slot[s].grp)
				free_slot = s;
		int o = oldest(z);
		if (o < 0 || (free_slot >= 0 && lazy_bytes(z) + need <= z->bound))
			return free_slot;
		evict(tr, z, o);
	}
}

static size_t up16(size_t n) { return (n + 15) & ~(size_t)15; }

static int fetch(gb_trace *tr, int i)
{
	gb_lazy *z = tr->lazy;
	int g = tr->t[i].group;
	if (!z || g <= 0 || g > z->n_g)
		return -1;
	const gb_lazy_group *G = &z->g[g - 1];
	int sub = part_of(z, g, tr->t[i].name), part = sub < 0 ? -1 : -2 - sub;
	for (int s = 0; s < GB_LAZY_SLOTS; s++)
		if (z->slot[s].grp == g && z->slot[s].part == part)
			return -1; /* computed, and still without this entry: it is not the group's */
	/* the heads of an attention block computed alone are in it: their slots go first */
	int H = z->m->cfg.n_head;
	for (int s = 0; sub == GB_PART_ATTN || sub == GB_PART_CROSS ? s < GB_LAZY_SLOTS : 0; s++)
		if (z->slot[s].grp == g && z->slot[s].part >= 0 && z->slot[s].part / H == (sub == GB_PART_CROSS))
			evict(tr, z, s);
	/* the sub-layer's floats, and the copy of the stream entering it that its replay starts from */
	size_t need = sub < 0 ? G->floats : G->part_floats[sub] + up16((size_t)z->st[G->stack].T * z->m->cfg.d_model);
	int free_slot = room(tr, z, need * sizeof(float));
	gb_trace *t = &z->slot[free_slot].t;
	if (gb_fwd_replay(z, tr, g, sub, t)) {
		gb_trace_free(t);
		return -1;
	}
	z->slot[free_slot].grp = g;
	z->slot[free_slot].part = part;
	z->slot[free_slot].used = ++z->clock;
	for (int j = 0; j < tr->n; j++) {
		if (tr->t[j].group != g || part_of(z, g, tr->t[j].name) != sub)
			continue;
		for (int k = 0; k < t->n; k++)
			if (!strcmp(t->t[k].name, tr->t[j].name)) {
				tr->t[j].data = t->t[k].data;
				break;
			}
	}
	return 0;
}

/* An attention tensor's part after ".attn." or ".cross." that a head's replay records: 1 per
 * query head, 2 per key/value head, 0 when it needs the whole layer. */
static int head_kind(const char *what)
{
	static const char *const per_q[] = { "q", "scores", "masked", "weights", "head_out", "rel_bias", "q_feat" };
	static const char *const per_kv[] = { "k", "v", "k_feat" };
	for (size_t i = 0; i < sizeof per_q / sizeof *per_q; i++)
		if (!strcmp(what, per_q[i]))
			return 1;
	for (size_t i = 0; i < sizeof per_kv / sizeof *per_kv; i++)
		if (!strcmp(what, per_kv[i]))
			return 2;
	return 0;
}

static const float *in_slot(gb_lazy *z, int s, const char *name)
{
	const gb_trace *t = &z->slot[s].t;
	for (int k = 0; k < t->n; k++)
		if (!strcmp(t->t[k].name, name)) {
			z->slot[s].used = ++z->clock;
			return t->t[k].data;
		}
	return NULL;
}

/* Slice idx of entry i, whose group is not computed: from a head's slot, computed first when
 * none has it; NULL when the entry is not one a head's replay gives (the caller then computes
 * the whole group) or when computing fails. */
static const float *slice(gb_trace *tr, int i, int idx)
{
	gb_lazy *z = tr->lazy;
	const gb_ttensor *t = &tr->t[i];
	int g = t->group;
	if (!z || g <= 0 || g > z->n_g || z->g[g - 1].layer < 0 || t->ndim != 3 || idx < 0 || idx >= t->shape[0])
		return NULL;
	const char *p = strstr(t->name, ".attn.");
	int cross = 0;
	if (!p && (p = strstr(t->name, ".cross.")))
		cross = 1;
	int kind = p ? head_kind(p + (cross ? 7 : 6)) : 0;
	if (!kind)
		return NULL;
	int H = z->m->cfg.n_head, group = H / z->m->cfg.n_kv_head;
	for (int s = 0; s < GB_LAZY_SLOTS; s++) {
		int part = z->slot[s].part, h = part % H;
		if (z->slot[s].grp == g && part >= 0 && part / H == cross && (kind == 1 ? h == idx : h / group == idx))
			return in_slot(z, s, t->name);
	}
	/* what the head's replay takes, at most (each allocation rounded up to 16 floats): its
	 * share of the group's (head, ...) and (kv head, ...) entries of this block, the normed
	 * input and its statistics, a copy of each projection's columns, the padding mask */
	const gb_config *c = &z->m->cfg;
	size_t T = (size_t)z->st[z->g[g - 1].stack].T, len = (size_t)(p - t->name) + (cross ? 7 : 6);
	size_t need = up16(T * c->d_model) + 2 * up16(T) + 3 * up16((size_t)c->d_model * c->d_head) +
	              up16((size_t)z->st[0].T + T);
	for (int j = 0; j < tr->n; j++)
		if (tr->t[j].group == g && tr->t[j].ndim == 3 && !strncmp(tr->t[j].name, t->name, len) &&
		    head_kind(tr->t[j].name + len))
			need += up16(tr->t[j].n / (size_t)tr->t[j].shape[0]);
	int s = room(tr, z, need * sizeof(float));
	int h = kind == 1 ? idx : idx * group;
	if (gb_fwd_replay_head(z, tr, g, cross, h, &z->slot[s].t)) {
		gb_trace_free(&z->slot[s].t);
		return NULL;
	}
	z->slot[s].grp = g;
	z->slot[s].part = cross * H + h;
	return in_slot(z, s, t->name);
}

gb_lazy *gb_lazy_install(gb_trace *tr, const gb_model *m, const gb_fwd_opts *opts)
{
	gb_lazy *z = calloc(1, sizeof *z);
	if (!z)
		return NULL;
	z->m = m;
	if (opts)
		z->o = *opts;
	z->o.progress = NULL;
	z->o.progress_arg = NULL;
	z->o.stop = NULL;
	if (opts && opts->head_scale) {
		size_t n = (size_t)m->cfg.n_layer * m->cfg.n_head;
		z->head_scale = malloc(n * sizeof(float));
		if (!z->head_scale) {
			free(z);
			return NULL;
		}
		memcpy(z->head_scale, opts->head_scale, n * sizeof(float));
		z->o.head_scale = z->head_scale;
	}
	z->x_out = -1;
	z->st[0].enc_out = z->st[1].enc_out = -1;
	z->bound = gb_trace_budget(tr);
	tr->lazy = z;
	tr->lazy_fetch = fetch;
	tr->lazy_slice = slice;
	tr->lazy_free = lazy_free;
	tr->lazy_bytes = lazy_bytes;
	return z;
}

int gb_lazy_add_group(gb_lazy *z, int stack, int layer, size_t floats)
{
	if (z->n_g == z->cap_g) {
		int cap = z->cap_g ? 2 * z->cap_g : 32;
		gb_lazy_group *g = realloc(z->g, (size_t)cap * sizeof *g);
		if (!g)
			return -1;
		z->g = g;
		z->cap_g = cap;
	}
	memset(&z->g[z->n_g], 0, sizeof z->g[z->n_g]);
	z->g[z->n_g].stack = stack;
	z->g[z->n_g].layer = layer;
	z->g[z->n_g].floats = floats;
	return ++z->n_g;
}
