/* corpus.h — the made-up data glassbox trains its shipped models on: nothing can be
 * downloaded, so glassbox writes its own text. Two generators, both deterministic by seed
 * (model/rng.h; the same seed gives the same bytes on every machine), both with a held-out
 * split that shares no combination with training:
 *
 * 1. A small world in English (gb_corpus_world): short documents built from ~700 words
 *    (names with genders, people, animals, objects, places, verbs in singular and plural,
 *    adjectives), in which some next word can only be predicted by fetching an earlier one:
 *      agreement   The keys on the old table | are dusty.        (verb agrees with the head)
 *      pronoun     When Anna came home, | she was tired.          (gender of the antecedent)
 *      ioi         When Mary and John went to the park, John gave a ball to | Mary.
 *      possession  Mary has a cat. John has a dog. Mary's pet is a | cat.
 *      induction   The list was: cup owl red sings old. It started to rain. The list was:
 *                  cup owl | red sings old.                        (copy the earlier run)
 *    ("|" marks where a probe cuts the prompt.) Names are always capitalized, every other
 *    word is lowercase except at the start of a sentence, so a small BPE vocabulary learns
 *    one token per frequent word. gb_corpus_world_probe gives the same episodes cut at the
 *    telling word, with the right and the wrong continuations, for evaluation.
 *
 * 2. Dates to translate (gb_corpus_dates): a date 1950-01-01 .. 2049-12-31 in one of
 *    GB_DATE_N_FORMS surface forms, paired with its ISO 8601 form "2021-03-03".
 *
 * Held-out split (seed-independent, so a model trained on any seed can be tested on any
 * other): a fixed hash of each combination puts 10% of combinations in the held-out set.
 *    ioi, possession  the unordered pair of names (in either order, either role)
 *    possession       also each statement "name has thing" ("Mary has a cat",
 *                     "Anna has a red box"): all of an example's must be on its side
 *    pronoun          (template, name): the held-out set has names in sentences where
 *                     training never had that name
 *    agreement        (template, head noun, attractor noun) by lemma, either number;
 *                     the attractor-free template uses (head noun, verb)
 *    induction        the first two words of a held-out run form a held-out word pair,
 *                     and no training run contains a held-out pair anywhere; runs are at
 *                     least 5 words while no sentence template has more than 4 run-vocabulary
 *                     words in a row, so a held-out run never occurs in training text
 *    dates            the date itself: a held-out date appears in no training pair in
 *                     any form
 * Documents and episodes of the held-out corpus draw only held-out combinations; those of
 * the training corpus only training ones (filler sentences included).
 *
 * Errors: functions that can fail return 0 or -1 and fill *err (out of memory, bad
 * arguments). Nothing here prints; no global state, so any function may run on any thread. */
#ifndef GLASSBOX_CORPUS_H
#define GLASSBOX_CORPUS_H

#include <stddef.h>
#include <stdint.h>

#include "model/err.h"

/* ---- the world ----------------------------------------------------------------------- */

/* Tasks (bits for gb_world_opts.tasks) and probe kinds (the bit numbers). */
enum {
	GB_PROBE_AGREEMENT,
	GB_PROBE_PRONOUN,
	GB_PROBE_IOI,
	GB_PROBE_POSSESSION,
	GB_PROBE_INDUCTION,
	GB_PROBE_N_KINDS
};
enum {
	GB_TASK_AGREEMENT = 1 << GB_PROBE_AGREEMENT,
	GB_TASK_PRONOUN = 1 << GB_PROBE_PRONOUN,
	GB_TASK_IOI = 1 << GB_PROBE_IOI,
	GB_TASK_POSSESSION = 1 << GB_PROBE_POSSESSION,
	GB_TASK_INDUCTION = 1 << GB_PROBE_INDUCTION,
	GB_TASK_ALL = (1 << GB_PROBE_N_KINDS) - 1
};

typedef struct gb_world_opts {
	size_t max_bytes;   /* stop after the document that brings the text to >= max_bytes (0: none) */
	size_t max_docs;    /* stop after this many documents (0: none); at least one limit is set */
	const char *delim;  /* written after every document, e.g. "\n" or "<|endoftext|>" (NULL: "\n") */
	unsigned tasks;     /* GB_TASK_* bits; episodes are drawn from these (0: all) */
	int max_episodes;   /* a document holds 1..max_episodes episodes, uniformly (0: 2; at most 16) */
} gb_world_opts;

/* Writes the corpus into a malloc'd, NUL-terminated buffer (*out, length *out_len without
 * the NUL; release with free). heldout = 0: the training split, 1: the held-out split.
 * Episodes are weighted agreement 3 : pronoun 2 : ioi 2 : possession 2 : induction 2 among
 * the tasks asked for; episodes of a document are separated by one space. A longer request
 * with the same seed and options starts with the bytes of a shorter one. */
int gb_corpus_world(const gb_world_opts *opts, uint64_t seed, int heldout, char **out,
                    size_t *out_len, gb_err *err);

/* A probe: a prompt as the model would read it from the start of a document, the right
 * next word and wrong ones. Continuations start with a space, as in the text (" cat").
 * form is the template (see corpus.c for the list per kind). Construction data, per kind
 * (slots are static strings, unused ones NULL; nums unused are 0):
 *   agreement   slot0 head noun as written, slot1 attractor as written (NULL in form 0),
 *               slot2 head lemma, slot3 attractor lemma (form 0: the verb's lemma: "run",
 *               "be", "have"); num0 head is plural, num1 attractor is plural
 *   pronoun     slot0 the name; num0 1 for a woman's name, 0 for a man's
 *   ioi         slot0 the recipient (the answer), slot1 the giver, slot2 the object,
 *               slot3 the place; num0 1 when the giver is named first in "A and B"
 *   possession  slot0 the name asked about, slot1 the other name, slot2 the first's
 *               thing (a pet, or a colour), slot3 the other's; slot4 the object noun
 *               (NULL for pets); num0 0 pets / 1 coloured objects; num1 1 when the name
 *               asked about was named first
 *   induction   run: the repeated words, space-separated ("cup owl red sings old");
 *               num0 its length (5..12), num1 how many of its words the second copy has
 *               in the prompt (1..num0-1); good is the next one */
#define GB_PROBE_MAX_BAD 3
typedef struct gb_probe {
	char *prompt;
	char *good;
	char *bad[GB_PROBE_MAX_BAD];
	int n_bad;
	int form;
	const char *slot[5];
	int num[2];
	char *run;           /* induction only, else NULL */
} gb_probe;

typedef struct gb_probe_set {
	int kind;            /* GB_PROBE_* */
	int n;
	gb_probe *p;         /* (n) */
} gb_probe_set;

/* n probes of one kind; heldout chooses the split as for the corpus. Probes use their own
 * random stream: they are not the corpus's first episodes, but are drawn exactly as the
 * corpus's episodes are. Release with gb_probe_set_free. */
int gb_corpus_world_probe(gb_probe_set *out, int kind, int n, uint64_t seed, int heldout,
                          gb_err *err);
void gb_probe_set_free(gb_probe_set *s);
const char *gb_probe_kind_name(int kind);   /* "agreement", ... ; NULL when out of range */

/* The vocabulary: every word the world generator can write. */
enum {
	GB_WC_MALE,      /* first names */
	GB_WC_FEMALE,
	GB_WC_NOUN_SG,   /* people, animals, objects */
	GB_WC_NOUN_PL,
	GB_WC_PLACE,
	GB_WC_ADJ,       /* colours included */
	GB_WC_COLOR,
	GB_WC_VERB_SG,   /* present tense, 3rd person singular ("runs", "is", "has") */
	GB_WC_VERB_PL,   /* present tense plural ("run", "are", "have") */
	GB_WC_VERB_PAST, /* past forms the templates fill in ("found", "gave") */
	GB_WC_OTHER,     /* template words: articles, prepositions, pronouns, fixed verbs */
	GB_WC_ALL,       /* the union, each word once */
	GB_WC_N
};
/* A malloc'd array (release with free) of the distinct words of class wc, sorted by strcmp;
 * the strings are static. */
int gb_corpus_world_words(int wc, const char ***out, int *n, gb_err *err);

/* ---- dates ----------------------------------------------------------------------------
 * Forms of 2021-03-03 (slashes and dots with the year last are always day first; two-digit
 * years mean 1950..1999 for 50..99 and 2000..2049 for 00..49):
 *    0 "3 March 2021"            6 "Mar 3, 2021"
 *    1 "march 3rd, 21"           7 "3 mar 21"
 *    2 "03/03/2021"  DD/MM/YYYY  8 "March 3, 2021"
 *    3 "Wednesday, Mar 3 2021"   9 "03-Mar-2021"
 *    4 "2021.03.03"             10 "Wed, 3 March 2021"
 *    5 "3rd of March, 2021"     11 "3.3.2021"    D.M.YYYY  */
#define GB_DATE_N_FORMS 12
#define GB_DATE_YEAR_MIN 1950
#define GB_DATE_YEAR_MAX 2049

typedef struct gb_date_pair {
	char src[32];        /* the surface form */
	char dst[11];        /* "YYYY-MM-DD" */
	unsigned char form;  /* 0 .. GB_DATE_N_FORMS-1 */
	short y;
	unsigned char m, d;
} gb_date_pair;

/* n pairs, dates uniform over the split's days, forms uniform. Release with free. */
int gb_corpus_dates(int n, uint64_t seed, int heldout, gb_date_pair **out, gb_err *err);

/* The same as text: src, sep, dst, delim for each pair (sep NULL: "\t", delim NULL: "\n"),
 * malloc'd and NUL-terminated; release with free. */
int gb_corpus_dates_text(int n, uint64_t seed, int heldout, const char *sep, const char *delim,
                         char **out, size_t *out_len, gb_err *err);

/* One date in one form; fails on an invalid date, a year out of range or a small buffer. */
int gb_date_format(int form, int y, int m, int d, char *buf, size_t cap, gb_err *err);
int gb_date_valid(int y, int m, int d);      /* 1 for a real date in 1950..2049, else 0 */
int gb_date_weekday(int y, int m, int d);    /* 0 Monday .. 6 Sunday (proleptic Gregorian) */
int gb_date_heldout(int y, int m, int d);    /* 1 when the date belongs to the held-out split */

#endif
