/* lazytrace.c — the cache of a lazy trace's computed groups (model/lazytrace.h). */
#include "model/lazytrace.h"

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

/* Forgets slot s: its group's entries lose their data again. */
static void evict(gb_trace *tr, gb_lazy *z, int s)
{
	int g = z->slot[s].grp;
	for (int i = 0; i < tr->n; i++)
		if (tr->t[i].group == g)
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

static int fetch(gb_trace *tr, int i)
{
	gb_lazy *z = tr->lazy;
	int g = tr->t[i].group;
	if (!z || g <= 0 || g > z->n_g)
		return -1;
	for (int s = 0; s < GB_LAZY_SLOTS; s++)
		if (z->slot[s].grp == g)
			return -1; /* computed, and still without this entry: it is not the group's */
	/* Room first, so memory never holds more than the bound and the new group. */
	size_t need = z->g[g - 1].floats * sizeof(float);
	int free_slot = -1;
	for (;;) {
		free_slot = -1;
		for (int s = 0; s < GB_LAZY_SLOTS && free_slot < 0; s++)
			if (!z->slot[s].grp)
				free_slot = s;
		int o = oldest(z);
		if (o < 0 || (free_slot >= 0 && lazy_bytes(z) + need <= z->bound))
			break;
		evict(tr, z, o);
	}
	gb_trace *sub = &z->slot[free_slot].t;
	if (gb_fwd_replay(z, tr, g, sub)) {
		gb_trace_free(sub);
		return -1;
	}
	z->slot[free_slot].grp = g;
	z->slot[free_slot].used = ++z->clock;
	for (int j = 0; j < tr->n; j++) {
		if (tr->t[j].group != g)
			continue;
		for (int k = 0; k < sub->n; k++)
			if (!strcmp(sub->t[k].name, tr->t[j].name)) {
				tr->t[j].data = sub->t[k].data;
				break;
			}
	}
	return 0;
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
	z->g[z->n_g].stack = stack;
	z->g[z->n_g].layer = layer;
	z->g[z->n_g].floats = floats;
	return ++z->n_g;
}
