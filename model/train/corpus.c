/* corpus.c — see corpus.h. Owns the small world's episode templates (each written once, for
 * the corpus and for the probes alike, so a probe is exactly an episode cut short), the
 * held-out partition of their combinations, and the corpus and probe entry points. The word
 * lists are world_words.c's, the date forms dates.c's (corpus_impl.h joins the three).
 *
 * Plausibility is kept by tagging: nouns know whether they are people, animals or objects,
 * verbs which kinds may be their subject (and object), adjectives which kinds they describe.
 * Every choice goes through gb_rng, in a fixed order, so the bytes depend on the seed only. */
#include "model/train/corpus_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/rng.h"

#define N_NAMES (gb_world_n_male + gb_world_n_female)

/* ---- text building ------------------------------------------------------------------- */

/* What an episode tells a probe: where the telling word starts (the offset of its space),
 * the word and the wrong ones, and the construction data of gb_probe. */
#define MAX_RUN 12
typedef struct pinfo {
	size_t at;
	const char *good, *bad[GB_PROBE_MAX_BAD];
	int n_bad, form;
	const char *slot[5];
	int num[2];
	const char *run[MAX_RUN];
	int run_len;
} pinfo;

typedef struct gen {
	gb_rng r;
	int held;   /* draw only held-out (1) or only training (0) combinations */
	sb *b;
	size_t doc; /* where the current document starts: its first word takes no space */
} gen;

static void W(gen *g, const char *w)
{
	if (g->b->n > g->doc)
		sb_put(g->b, " ", 1);
	sb_puts(g->b, w);
}
static void PUN(gen *g, const char *s) { sb_puts(g->b, s); }

static int rnd(gen *g, int n) { return gb_rng_below(&g->r, n); }
static int coin(gen *g, double p) { return gb_rng_uniform(&g->r) < p; }

static const char *article(const char *w) { return strchr("aeiou", w[0]) ? "an" : "a"; }
static const char *form_of(const noun *n, int pl) { return pl ? n->pl : n->sg; }

static const char *name(int i)
{
	return i < gb_world_n_male ? gb_world_male[i] : gb_world_female[i - gb_world_n_male];
}
static int female(int i) { return i >= gb_world_n_male; }

/* A random noun of one of the kinds, having every feature in need (kinds weighted by
 * their number of nouns). */
static const noun *pick_noun(gen *g, unsigned kinds, unsigned need)
{
	unsigned np = kinds & K_P ? gb_world_n_people : 0,
	         na = kinds & K_A ? gb_world_n_animals : 0,
	         no = kinds & K_O ? gb_world_n_objects : 0;
	for (;;) {
		unsigned i = (unsigned)rnd(g, (int)(np + na + no));
		const noun *n = i < np ? &gb_world_people[i] : i < np + na ? &gb_world_animals[i - np] : &gb_world_objects[i - np - na];
		if ((n->f & need) == need)
			return n;
	}
}

static unsigned kind_of(const noun *n) { return n->f & (K_P | K_A | K_O); }

/* an adjective describing kind, with every feature in need (J_COL, J_STATE) */
static const adj *pick_adj(gen *g, unsigned kind, unsigned need)
{
	for (;;) {
		const adj *a = &gb_world_adjs[rnd(g, gb_world_n_adjs)];
		if ((a->f & kind) && (a->f & need) == need)
			return a;
	}
}

/* a verb whose subject may be of kind subj, whose object (obj 0: none) of kind obj, with
 * every feature in need */
static const verb *pick_verb(gen *g, const verb *v, int n, unsigned subj, unsigned obj,
                             unsigned need)
{
	for (;;) {
		const verb *x = &v[rnd(g, n)];
		if ((x->subj & subj) && (!obj || (x->obj & obj)) && (x->f & need) == need)
			return x;
	}
}

static const place *pick_place(gen *g) { return &gb_world_places[rnd(g, gb_world_n_places)]; }

/* "at the station", "in the kitchen" */
static void at_place(gen *g, const place *p)
{
	W(g, p->in ? "in the" : "at the");
	W(g, p->w);
}

/* ---- the held-out partition ---------------------------------------------------------- */

static uint64_t hstr(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* Whether the combination (a, b, c, d) is held out. By the words, not list positions, so
 * adding a word to a list moves no other combination across the split. */
static int held4(const char *a, const char *b, const char *c, const char *d)
{
	uint64_t h = mix64(hstr(a) + 0x9e3779b97f4a7c15ull);
	h = mix64(h ^ hstr(b));
	h = mix64(h ^ hstr(c));
	h = mix64(h ^ hstr(d));
	return h % 1000 < HELD_PER_MILLE;
}

static int pair_side(const char *x, const char *y)
{
	return strcmp(x, y) < 0 ? held4("pair", x, y, "") : held4("pair", y, x, "");
}

/* ---- episodes ------------------------------------------------------------------------ */

/* The predicate after an agreeing subject: its first word is the verb that agrees. */
static void write_vp(gen *g, const noun *head, const adj *head_adj, int pl, pinfo *pi,
                     const char **lemma)
{
	unsigned k = kind_of(head);
	int c = rnd(g, 10);
	const char *good, *bad;
	const verb *v = NULL;
	if (k == K_O || (c >= 5 && c < 8)) {
		good = pl ? "are" : "is", bad = pl ? "is" : "are", *lemma = "be";
	} else if (c >= 8 && k == K_P) {
		good = pl ? "have" : "has", bad = pl ? "has" : "have", *lemma = "have";
	} else {
		v = pick_verb(g, gb_world_intrans, gb_world_n_intrans, k, 0, 0);
		good = pl ? v->pl : v->sg, bad = pl ? v->sg : v->pl, *lemma = v->pl;
	}
	if (pi) {
		pi->at = g->b->n;
		pi->good = good;
		pi->bad[0] = bad;
		pi->n_bad = 1;
	}
	W(g, good);
	if (!strcmp(*lemma, "be")) {
		const adj *a;
		do
			a = pick_adj(g, k, 0);
		while (head_adj && (a == head_adj || (a->scale && a->scale == head_adj->scale)));
		W(g, a->w);
	} else if (!strcmp(*lemma, "have")) {
		const noun *o = pick_noun(g, K_O, F_GIVE);
		if (coin(g, 0.5)) {
			const char *a = pick_adj(g, K_O, 0)->w;
			W(g, article(a));
			W(g, a);
		} else {
			W(g, article(o->sg));
		}
		W(g, o->sg);
	} else if (coin(g, 0.5)) {
		/* a time or a place, never a manner: "sleeps loudly" would not read well */
		if ((v->f & V_LOC) && coin(g, 0.4)) {
			const place *p = pick_place(g);
			if (coin(g, 0.5))
				W(g, "near the"), W(g, p->w);
			else
				at_place(g, p);
		} else {
			W(g, gb_world_times[rnd(g, gb_world_n_times)]);
		}
	}
	PUN(g, ".");
}

/* "the" [adjective] noun; returns the adjective or NULL */
static const adj *the_np(gen *g, const char *the, const noun *n, int pl, double p_adj)
{
	const adj *a = coin(g, p_adj) ? pick_adj(g, kind_of(n), 0) : NULL;
	W(g, the);
	if (a)
		W(g, a->w);
	W(g, form_of(n, pl));
	return a;
}

static const char *const FORM_TAG[] = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};

/* agreement forms:
 *   0 The [adj] N V ...                          The small dog sleeps all day.
 *   1 The N prep the [adj] N2 V ...              The keys on the old table are dusty.
 *   2 The N that the [adj] N2 tv(N2) V ...       The dog that the girls like runs.
 *   3 The N that tv(N) the N2 V ...              The girls that like the dog sing.
 *   4 The thing that the [adj] person past V ... The books that the teacher found are old. */
static void ep_agreement(gen *g, pinfo *pi, int only_form0)
{
	int form, pl, pl2 = 0;
	const noun *head, *att = NULL;
	const verb *tv = NULL;
	const char *prep = NULL, *past = NULL, *lemma = NULL;
	size_t start = g->b->n;
	for (;;) {
		g->b->n = start;
		att = NULL, tv = NULL, prep = past = NULL; /* nothing carries over from a rejected try */
		form = only_form0 ? 0 : rnd(g, 5);
		pl = rnd(g, 2), pl2 = rnd(g, 2);
		switch (form) {
		case 0:
			head = pick_noun(g, K_P | K_A | K_O, 0);
			break;
		case 1:
			head = pick_noun(g, K_P | K_A | K_O, 0);
			if (kind_of(head) == K_O && !(head->f & F_SMALL)) {
				/* a car is not on the table, nor a door in the box */
				static const char *const P[] = {"near", "behind", "beside"};
				prep = P[rnd(g, 3)], att = pick_noun(g, K_O, F_SURF);
			} else if (kind_of(head) == K_O) {
				if (coin(g, 0.25)) {
					prep = "in", att = pick_noun(g, K_O, F_CONT);
				} else {
					static const char *const P[] = {"on", "under", "near", "behind", "beside"};
					prep = P[rnd(g, 5)], att = pick_noun(g, K_O, F_SURF);
				}
			} else if ((head->f & F_REL) && coin(g, 0.3)) {
				prep = "of", att = pick_noun(g, K_P, 0);
			} else if (coin(g, 0.3)) {
				prep = "with", att = pick_noun(g, K_A | K_O, 0);
			} else {
				static const char *const P[] = {"near", "behind", "beside"};
				prep = P[rnd(g, 3)], att = pick_noun(g, K_P | K_A | K_O, 0);
			}
			break;
		case 2:
			head = pick_noun(g, K_P | K_A, 0);
			att = pick_noun(g, K_P | K_A, 0);
			tv = pick_verb(g, gb_world_trans, gb_world_n_trans, kind_of(att), kind_of(head),
			               0);
			break;
		case 3:
			head = pick_noun(g, K_P | K_A, 0);
			att = pick_noun(g, K_P | K_A, 0);
			tv = pick_verb(g, gb_world_trans, gb_world_n_trans, kind_of(head), kind_of(att),
			               0);
			break;
		default:
			head = pick_noun(g, K_O, F_SMALL); /* nobody dropped the tables */
			att = pick_noun(g, K_P, 0);
			past = gb_world_past[rnd(g, gb_world_n_past)];
			break;
		}
		if (att == head)
			continue; /* "the dogs near the dog" */
		const adj *head_adj = the_np(g, "The", head, pl, form == 0 ? 0.4 : 0.2);
		switch (form) {
		case 1:
			W(g, prep);
			the_np(g, "the", att, pl2, 0.4);
			break;
		case 2:
			W(g, "that");
			the_np(g, "the", att, pl2, 0.3);
			W(g, pl2 ? tv->pl : tv->sg);
			break;
		case 3:
			W(g, "that");
			W(g, pl ? tv->pl : tv->sg);
			the_np(g, "the", att, pl2, 0.3);
			break;
		case 4:
			W(g, "that");
			the_np(g, "the", att, pl2, 0.3);
			W(g, past);
			break;
		}
		write_vp(g, head, head_adj, pl, pi, &lemma);
		if (held4("agr", FORM_TAG[form], head->sg, att ? att->sg : lemma) == g->held)
			break;
	}
	if (pi) {
		pi->form = form;
		pi->slot[0] = form_of(head, pl);
		pi->slot[1] = att ? form_of(att, pl2) : NULL;
		pi->slot[2] = head->sg;
		pi->slot[3] = att ? att->sg : lemma;
		pi->num[0] = pl;
		pi->num[1] = att ? pl2 : 0;
	}
}

/* pronoun forms (the pronoun is the probe):
 *   0 N went to the P because he wanted to V.       4 N lost the O, so he looked for it everywhere.
 *   1 N said that he found the O.                   5 N, who lives near the P, said that he Vs every day.
 *   2 When N came home, he was A.                   6 After N fed the As, he went home.
 *   3 N told the Ps that he was A.                  7 N could not sleep because he was A. */
static void ep_pronoun(gen *g, pinfo *pi)
{
	int form, who;
	for (;;) {
		form = rnd(g, 8), who = rnd(g, N_NAMES);
		if (held4("pro", FORM_TAG[form], name(who), "") == g->held)
			break;
	}
	const char *nm = name(who), *pro = female(who) ? "she" : "he";
	size_t at = 0;
#define PRONOUN() (at = g->b->n, W(g, pro))
	switch (form) {
	case 0: {
		const struct activity *a = &gb_world_activities[rnd(g, gb_world_n_activities)];
		int np = 0;
		while (np < 5 && a->places[np])
			np++;
		W(g, nm), W(g, "went to the"), W(g, a->places[rnd(g, np)]), W(g, "because");
		PRONOUN(), W(g, "wanted to"), W(g, a->verb);
		break;
	}
	case 1:
		W(g, nm), W(g, "said that"), PRONOUN(), W(g, gb_world_past[rnd(g, gb_world_n_past)]);
		W(g, "the");
		W(g, pick_noun(g, K_O, 0)->sg);
		break;
	case 2:
		W(g, "When"), W(g, nm), W(g, "came home"), PUN(g, ","), PRONOUN(), W(g, "was");
		W(g, pick_adj(g, K_P, J_STATE)->w);
		break;
	case 3:
		W(g, nm), W(g, "told the"), W(g, pick_noun(g, K_P, 0)->pl), W(g, "that"), PRONOUN();
		W(g, "was"), W(g, pick_adj(g, K_P, J_STATE)->w);
		break;
	case 4:
		W(g, nm), W(g, "lost the"), W(g, pick_noun(g, K_O, F_GIVE)->sg), PUN(g, ","), W(g, "so");
		PRONOUN(), W(g, "looked for it everywhere");
		break;
	case 5:
		W(g, nm), PUN(g, ","), W(g, "who lives near the"), W(g, pick_place(g)->w);
		PUN(g, ","), W(g, "said that"), PRONOUN();
		W(g, pick_verb(g, gb_world_intrans, gb_world_n_intrans, K_P, 0, V_HABIT)->sg);
		W(g, "every day");
		break;
	case 6:
		W(g, "After"), W(g, nm), W(g, "fed the"), W(g, pick_noun(g, K_A, 0)->pl), PUN(g, ",");
		PRONOUN(), W(g, "went home");
		break;
	default:
		W(g, nm), W(g, "could not sleep because"), PRONOUN(), W(g, "was");
		W(g, pick_adj(g, K_P, J_STATE)->w);
		break;
	}
#undef PRONOUN
	PUN(g, ".");
	if (pi) {
		pi->at = at;
		pi->good = pro;
		pi->bad[0] = female(who) ? "he" : "she";
		pi->n_bad = 1;
		pi->form = form;
		pi->slot[0] = nm;
		pi->num[0] = female(who);
	}
}

/* two different names whose pair is on this generator's side of the split */
static void pick_pair(gen *g, int *a, int *b)
{
	do {
		*a = rnd(g, N_NAMES);
		*b = rnd(g, N_NAMES);
	} while (*a == *b || pair_side(name(*a), name(*b)) != g->held);
}

/* IOI forms (the recipient is the probe; G gives, R receives, {G, R} = {A, B}):
 *   0 When A and B went to the P, G gave a O to R.   ("at the P" is "in the P" for some)
 *   1 After A and B arrived at the P, G gave a O to R.
 *   2 A and B were at the P. G gave a O to R.
 *   3 When A and B got a O at the P, G decided to give it to R.
 *   4 While A and B were working at the P, G gave a O to R.
 *   5 Then, A and B had a long day at the P. G gave a O to R. */
static void ep_ioi(gen *g, pinfo *pi)
{
	int a, b;
	pick_pair(g, &a, &b);
	int form = rnd(g, 6), giver_first = rnd(g, 2);
	const char *A = name(a), *B = name(b), *G = giver_first ? A : B, *R = giver_first ? B : A;
	const place *pl = pick_place(g);
	const char *give = gb_world_give[rnd(g, gb_world_n_give)];
	const noun *o = pick_noun(g, K_O, F_GIVE);
	static const char *const OPEN[] = {"When", "After", NULL, "When", "While", "Then,"};
	static const char *const MID[] = {"went to the", "arrived", "were", NULL, "were working",
	                                  "had a long day"};
	if (OPEN[form])
		W(g, OPEN[form]);
	W(g, A), W(g, "and"), W(g, B);
	if (form == 3)
		W(g, "got"), W(g, article(o->sg)), W(g, o->sg);
	else
		W(g, MID[form]);
	if (form == 0)
		W(g, pl->w);
	else
		at_place(g, pl);
	PUN(g, form == 2 || form == 5 ? "." : ",");
	W(g, G);
	if (form == 3)
		W(g, "decided to give it to");
	else
		W(g, give), W(g, article(o->sg)), W(g, o->sg), W(g, "to");
	size_t at = g->b->n;
	W(g, R);
	PUN(g, ".");
	if (pi) {
		pi->at = at;
		pi->good = R;
		pi->bad[0] = G;
		pi->n_bad = 1;
		pi->form = form;
		pi->slot[0] = R, pi->slot[1] = G, pi->slot[2] = o->sg, pi->slot[3] = pl->w;
		pi->num[0] = giver_first;
	}
}

/* possession forms (the thing is the probe; Q is A or B):
 *   0 A has a pA. B has a pB. Q's pet is a pQ.
 *   1 A has a cA O. B has a cB O. Q's O is cQ.
 *   2 A has a pA, and B has a pB. Q's pet is a pQ.
 *   3 A has a cA O, and B has a cB O. Q's O is cQ. */
static void ep_possession(gen *g, pinfo *pi)
{
	int a, b, form = rnd(g, 4), colour = form & 1, q_first = rnd(g, 2);
	const char *ta = NULL, *tb = NULL, *obj = NULL;
	for (;;) {
		pick_pair(g, &a, &b);
		obj = colour ? pick_noun(g, K_O, F_COL)->sg : "";
		/* both statements on this side too; a few tries, then another pair */
		int ok = 0;
		for (int t = 0; t < 64 && !ok; t++) {
			ta = colour ? pick_adj(g, K_O, J_COL)->w : pick_noun(g, K_A, F_PET)->sg;
			ok = held4("has", name(a), ta, obj) == g->held;
		}
		if (!ok)
			continue;
		ok = 0;
		for (int t = 0; t < 64 && !ok; t++) {
			tb = colour ? pick_adj(g, K_O, J_COL)->w : pick_noun(g, K_A, F_PET)->sg;
			ok = strcmp(ta, tb) && held4("has", name(b), tb, obj) == g->held;
		}
		if (ok)
			break;
	}
	const char *A = name(a), *B = name(b);
	for (int i = 0; i < 2; i++) {
		W(g, i ? B : A), W(g, "has a"), W(g, i ? tb : ta);
		if (colour)
			W(g, obj);
		if (i == 0 && form >= 2)
			PUN(g, ","), W(g, "and");
		else
			PUN(g, ".");
	}
	W(g, q_first ? A : B), PUN(g, "'s");
	if (colour)
		W(g, obj), W(g, "is");
	else
		W(g, "pet is a");
	size_t at = g->b->n;
	W(g, q_first ? ta : tb);
	PUN(g, ".");
	if (pi) {
		pi->at = at;
		pi->good = q_first ? ta : tb;
		pi->bad[0] = q_first ? tb : ta;
		pi->n_bad = 1;
		pi->form = form;
		pi->slot[0] = q_first ? A : B, pi->slot[1] = q_first ? B : A;
		pi->slot[2] = pi->good, pi->slot[3] = pi->bad[0];
		pi->slot[4] = colour ? obj : NULL;
		pi->num[0] = colour, pi->num[1] = q_first;
	}
}

/* The run vocabulary: every content word in lowercase, each form once per list. */
static const char *run_word(gen *g)
{
	const int NP = gb_world_n_people, NA = gb_world_n_animals, NO = gb_world_n_objects;
	int i = rnd(g, 2 * (NP + NA + NO) + gb_world_n_places + gb_world_n_adjs +
	                   2 * (gb_world_n_intrans + gb_world_n_trans) + gb_world_n_past);
	if (i < 2 * NP) return i & 1 ? gb_world_people[i / 2].pl : gb_world_people[i / 2].sg;
	i -= 2 * NP;
	if (i < 2 * NA) return i & 1 ? gb_world_animals[i / 2].pl : gb_world_animals[i / 2].sg;
	i -= 2 * NA;
	if (i < 2 * NO) return i & 1 ? gb_world_objects[i / 2].pl : gb_world_objects[i / 2].sg;
	i -= 2 * NO;
	if (i < gb_world_n_places) return gb_world_places[i].w;
	i -= gb_world_n_places;
	if (i < gb_world_n_adjs) return gb_world_adjs[i].w;
	i -= gb_world_n_adjs;
	if (i < 2 * gb_world_n_intrans)
		return i & 1 ? gb_world_intrans[i / 2].pl : gb_world_intrans[i / 2].sg;
	i -= 2 * gb_world_n_intrans;
	if (i < 2 * gb_world_n_trans)
		return i & 1 ? gb_world_trans[i / 2].pl : gb_world_trans[i / 2].sg;
	i -= 2 * gb_world_n_trans;
	return gb_world_past[i];
}

static int is_letter(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* How many words of text[0, n) are w, or share with w a beginning of 3 letters or more that
 * is all of one of them: each gives a copying head a second place to look (" cat" may be
 * the first token of " cats"). Shorter ones ("a" before "angry") are left alone: they
 * would bar every word starting with a from half the episodes. */
static int n_clashes(const char *text, size_t n, const char *w)
{
	size_t wl = strlen(w);
	int c = 0;
	for (size_t i = 0; i < n;) {
		if (!is_letter((unsigned char)text[i])) {
			i++;
			continue;
		}
		size_t j = i;
		while (j < n && is_letter((unsigned char)text[j]))
			j++;
		size_t m = j - i < wl ? j - i : wl;
		if ((j - i == wl || m >= 3) && !memcmp(text + i, w, m))
			c++;
		i = j;
	}
	return c;
}

/* induction forms (a word of the second copy is the probe):
 *   0 N wrote down some words: RUN. FILLER Then he read them again: RUN.
 *   1 N said: RUN. FILLER Then N said it again: RUN.
 *   2 The list was: RUN. FILLER The list was: RUN.
 *   3 Here are some words: RUN. FILLER Here they are again: RUN.
 * The run's words occur nowhere else in the episode, so the next word is determined. */
static void ep_induction(gen *g, pinfo *pi)
{
	const char *run[MAX_RUN];
	size_t start = g->b->n, offs[MAX_RUN];
	int len, form, who;
	for (;;) {
		g->b->n = start;
		len = 5 + rnd(g, MAX_RUN - 4);
		form = rnd(g, 4), who = rnd(g, N_NAMES);
		/* the first pair decides the side; a training run holds no held-out pair */
		for (int i = 0; i < len; i++) {
			run[i] = run_word(g);
			if (i == 1 && held4("bi", run[0], run[1], "") != g->held)
				i = -1;
			else if (i > 1 && !g->held && held4("bi", run[i - 1], run[i], ""))
				i--;
		}
		const char *nm = name(who);
		if (form == 0)
			W(g, nm), W(g, "wrote down some words:");
		else if (form == 1)
			W(g, nm), W(g, "said:");
		else if (form == 2)
			W(g, "The list was:");
		else
			W(g, "Here are some words:");
		for (int i = 0; i < len; i++)
			W(g, run[i]);
		PUN(g, ".");
		int nf = 1 + rnd(g, 2), last = -1;
		for (int f = 0; f < nf; f++) {
			if (coin(g, 0.5)) {
				int i = rnd(g, gb_world_n_fillers - 1);
				i += i >= last && last >= 0; /* never the same sentence twice in a row */
				W(g, gb_world_fillers[i]);
				last = i;
			} else {
				ep_agreement(g, NULL, 1);
			}
		}
		if (form == 0)
			W(g, "Then"), W(g, female(who) ? "she" : "he"), W(g, "read them again:");
		else if (form == 1)
			W(g, "Then"), W(g, nm), W(g, "said it again:");
		else if (form == 2)
			W(g, "The list was:");
		else
			W(g, "Here they are again:");
		for (int i = 0; i < len; i++) {
			offs[i] = g->b->n;
			W(g, run[i]);
		}
		PUN(g, ".");
		if (g->b->oom)
			return;
		int ok = 1;
		for (int i = 0; i < len && ok; i++)
			ok = n_clashes(g->b->p + start, g->b->n - start, run[i]) == 2;
		if (ok)
			break;
	}
	if (pi) {
		int k = 1 + rnd(g, len - 1);
		pi->at = offs[k];
		pi->good = run[k];
		pi->n_bad = 0;
		/* wrong: other words of the run, which a model that only knows "a run word
		 * comes next" would find just as likely */
		for (int t = 0; t < 16 && pi->n_bad < GB_PROBE_MAX_BAD; t++) {
			const char *w = run[rnd(g, len)];
			int dup = w == run[k];
			for (int j = 0; j < pi->n_bad; j++)
				dup |= w == pi->bad[j];
			if (!dup)
				pi->bad[pi->n_bad++] = w;
		}
		pi->form = form;
		pi->slot[0] = form < 2 ? name(who) : NULL;
		pi->num[0] = len, pi->num[1] = k;
		memcpy(pi->run, run, sizeof run);
		pi->run_len = len;
	}
}

static void episode(gen *g, int kind, pinfo *pi)
{
	switch (kind) {
	case GB_PROBE_AGREEMENT: ep_agreement(g, pi, 0); break;
	case GB_PROBE_PRONOUN: ep_pronoun(g, pi); break;
	case GB_PROBE_IOI: ep_ioi(g, pi); break;
	case GB_PROBE_POSSESSION: ep_possession(g, pi); break;
	default: ep_induction(g, pi); break;
	}
}

/* ---- corpus and probes --------------------------------------------------------------- */

static void gen_seed(gen *g, uint64_t seed, uint64_t purpose, int held)
{
	gb_rng_seed(&g->r, mix64(seed ^ mix64(purpose * 2 + (held != 0))));
	g->held = held != 0;
}

int gb_corpus_world(const gb_world_opts *o, uint64_t seed, int heldout, char **out,
                    size_t *out_len, gb_err *err)
{
	static const int weight[GB_PROBE_N_KINDS] = {3, 2, 2, 2, 2};
	if (!o || !out || !out_len)
		return gb_fail(err, "corpus: missing options or output");
	if (!o->max_bytes && !o->max_docs)
		return gb_fail(err, "corpus: set max_bytes or max_docs, or the text would never end");
	unsigned tasks = o->tasks ? o->tasks : GB_TASK_ALL;
	if (tasks & ~(unsigned)GB_TASK_ALL)
		return gb_fail(err, "corpus: unknown task bits 0x%x", tasks & ~(unsigned)GB_TASK_ALL);
	int max_ep = o->max_episodes ? o->max_episodes : 2;
	if (max_ep < 1 || max_ep > 16)
		return gb_fail(err, "corpus: max_episodes %d is not in 1..16", o->max_episodes);
	const char *delim = o->delim ? o->delim : "\n";
	int total = 0;
	for (int k = 0; k < GB_PROBE_N_KINDS; k++)
		total += tasks >> k & 1 ? weight[k] : 0;

	sb b = {0};
	gen g;
	gen_seed(&g, seed, 1, heldout);
	g.b = &b;
	g.doc = 0;
	sb_reserve(&b, o->max_bytes + 4096);
	for (size_t docs = 0; !b.oom; ) {
		int n_ep = 1 + rnd(&g, max_ep);
		for (int e = 0; e < n_ep; e++) {
			int r = rnd(&g, total), k = 0;
			for (;; k++)
				if (tasks >> k & 1 && (r -= weight[k]) < 0)
					break;
			episode(&g, k, NULL);
		}
		sb_puts(&b, delim);
		g.doc = b.n;
		docs++;
		if ((o->max_docs && docs >= o->max_docs) || (o->max_bytes && b.n >= o->max_bytes))
			break;
	}
	if (b.oom || !b.p) {
		free(b.p);
		return gb_fail(err, "corpus: out of memory");
	}
	*out = b.p;
	*out_len = b.n;
	return 0;
}

static char *dup_space(const char *w)
{
	size_t n = strlen(w);
	char *s = malloc(n + 2);
	if (s) {
		s[0] = ' ';
		memcpy(s + 1, w, n + 1);
	}
	return s;
}

void gb_probe_set_free(gb_probe_set *s)
{
	if (!s || !s->p)
		return;
	for (int i = 0; i < s->n; i++) {
		gb_probe *p = &s->p[i];
		free(p->prompt);
		free(p->good);
		for (int j = 0; j < GB_PROBE_MAX_BAD; j++)
			free(p->bad[j]);
		free(p->run);
	}
	free(s->p);
	s->p = NULL;
	s->n = 0;
}

int gb_corpus_world_probe(gb_probe_set *out, int kind, int n, uint64_t seed, int heldout,
                          gb_err *err)
{
	if (!out)
		return gb_fail(err, "probes: no output");
	out->p = NULL;
	out->n = 0;
	out->kind = kind;
	if (kind < 0 || kind >= GB_PROBE_N_KINDS)
		return gb_fail(err, "probes: unknown kind %d (0..%d)", kind, GB_PROBE_N_KINDS - 1);
	if (n < 0)
		return gb_fail(err, "probes: negative count %d", n);
	out->p = calloc(n ? (size_t)n : 1, sizeof *out->p);
	if (!out->p)
		return gb_fail(err, "probes: out of memory");
	sb b = {0};
	gen g;
	gen_seed(&g, seed, 100 + (uint64_t)kind, heldout);
	g.b = &b;
	g.doc = 0;
	for (int i = 0; i < n; i++) {
		pinfo pi;
		memset(&pi, 0, sizeof pi);
		b.n = 0;
		episode(&g, kind, &pi);
		out->n = i + 1;
		gb_probe *p = &out->p[i];
		int fail = b.oom;
		if (!fail) {
			p->prompt = malloc(pi.at + 1);
			p->good = dup_space(pi.good);
			fail = !p->prompt || !p->good;
		}
		if (!fail) {
			memcpy(p->prompt, b.p, pi.at);
			p->prompt[pi.at] = 0;
			p->n_bad = pi.n_bad;
			for (int j = 0; j < pi.n_bad && !fail; j++)
				fail = !(p->bad[j] = dup_space(pi.bad[j]));
			p->form = pi.form;
			memcpy(p->slot, pi.slot, sizeof p->slot);
			memcpy(p->num, pi.num, sizeof p->num);
		}
		if (!fail && pi.run_len) {
			size_t len = 0;
			for (int j = 0; j < pi.run_len; j++)
				len += strlen(pi.run[j]) + 1;
			fail = !(p->run = malloc(len));
			for (int j = 0, o = 0; !fail && j < pi.run_len; j++)
				o += sprintf(p->run + o, j ? " %s" : "%s", pi.run[j]);
		}
		if (fail) {
			free(b.p);
			gb_probe_set_free(out);
			return gb_fail(err, "probes: out of memory");
		}
	}
	free(b.p);
	return 0;
}

const char *gb_probe_kind_name(int kind)
{
	static const char *const names[GB_PROBE_N_KINDS] = {"agreement", "pronoun", "ioi",
	                                                    "possession", "induction"};
	return kind >= 0 && kind < GB_PROBE_N_KINDS ? names[kind] : NULL;
}
