/* corpus_impl.h — internal to the corpus module (corpus.h), shared by its three files:
 * corpus.c (the small world's templates, the corpus and the probes), world_words.c (the
 * world's word lists and gb_corpus_world_words) and dates.c. Nothing else includes it.
 *
 * What they share: the word lists with their tags, a growing text buffer, and the mixing
 * function and rate of the held-out partition. */
#ifndef GLASSBOX_CORPUS_IMPL_H
#define GLASSBOX_CORPUS_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/train/corpus.h"

/* ---- words (world_words.c) ----------------------------------------------------------- */

/* noun kinds and features */
enum {
	K_P = 1, K_A = 2, K_O = 4,      /* person, animal, object */
	F_REL = 8,                     /* "the friend of the kings" */
	F_PET = 16,                    /* someone's pet; all begin with a consonant ("a cat") */
	F_GIVE = 32,                   /* small enough to hand to someone */
	F_COL = 64,                    /* owned in a colour: "a red box" */
	F_SURF = 128,                  /* things lie on, under, behind it */
	F_CONT = 256,                  /* things lie in it */
	F_SMALL = 512,                 /* lies on, under or in something: "the keys on the table" */
};

typedef struct noun {
	const char *sg, *pl;
	unsigned short f;
} noun;

/* Places, and whether one is "in" them rather than "at" them ("in the kitchen"). */
typedef struct place {
	const char *w;
	int in;
} place;

/* adjective features: which kinds it describes (K_P, K_A, K_O), colour, and whether it is
 * a passing state ("When Anna came home, she was tired", not "she was famous"). The scale
 * groups words that would contradict each other ("the short soldiers are tall"): a
 * predicate never takes the scale of its subject's adjective. */
enum { J_COL = 8, J_STATE = 16 };
enum { S_NONE, S_COL, S_SIZE, S_AGE, S_MOOD, S_NOISE, S_CLEAN, S_WET, S_SPEED, S_FORCE,
       S_MONEY, S_LIGHT, S_TEMPER };
typedef struct adj {
	const char *w;
	unsigned char f, scale;
} adj;

/* verbs: subj and obj are the kinds allowed; V_LOC: "runs near the park" reads well;
 * V_HABIT: a pastime ("she wanted to paint", "he swims every day") */
enum { V_LOC = 1, V_HABIT = 2 };
typedef struct verb {
	const char *sg, *pl;
	unsigned char subj, obj, f;
} verb;

/* what one goes somewhere to do: "went to the pool because she wanted to swim" */
struct activity {
	const char *verb, *places[5];
};

/* The lists, each with its length. Names are split by gender; nouns by kind; verbs by
 * whether they take an object. */
extern const char *const gb_world_male[], *const gb_world_female[];
extern const noun gb_world_people[], gb_world_animals[], gb_world_objects[];
extern const place gb_world_places[];
extern const adj gb_world_adjs[];
extern const verb gb_world_intrans[], gb_world_trans[];
extern const char *const gb_world_past[];   /* what a person did to a thing */
extern const char *const gb_world_give[];   /* how a thing changes hands in IOI sentences */
extern const struct activity gb_world_activities[];
extern const char *const gb_world_times[];
extern const char *const gb_world_fillers[];
extern const char *const gb_world_other[];  /* every other word a template writes */
extern const int gb_world_n_male, gb_world_n_female, gb_world_n_people, gb_world_n_animals,
	gb_world_n_objects, gb_world_n_places, gb_world_n_adjs, gb_world_n_intrans,
	gb_world_n_trans, gb_world_n_past, gb_world_n_give, gb_world_n_activities,
	gb_world_n_times, gb_world_n_fillers, gb_world_n_other;

/* ---- text building ------------------------------------------------------------------- */

typedef struct sb {
	char *p;
	size_t n, cap;
	int oom;
} sb;

static inline void sb_put(sb *b, const char *s, size_t len)
{
	if (b->oom)
		return;
	if (b->n + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->n + len + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, len);
	b->n += len;
	b->p[b->n] = 0;
}

static inline void sb_puts(sb *b, const char *s) { sb_put(b, s, strlen(s)); }

static inline void sb_reserve(sb *b, size_t cap)
{
	char *p = cap > b->cap ? realloc(b->p, cap) : b->p;
	if (!p) {
		b->oom = 1;
		return;
	}
	b->p = p;
	if (cap > b->cap)
		b->cap = cap;
	b->p[b->n] = 0;
}

/* ---- the held-out partition ---------------------------------------------------------- */

#define HELD_PER_MILLE 100

static inline uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#endif
