/* corpus.c — see corpus.h. Owns the word lists of the small world, the episode templates
 * (each written once, for the corpus and for the probes alike, so a probe is exactly an
 * episode cut short), the held-out partition and the date forms.
 *
 * Plausibility is kept by tagging: nouns know whether they are people, animals or objects,
 * verbs which kinds may be their subject (and object), adjectives which kinds they describe.
 * Every choice goes through gb_rng, in a fixed order, so the bytes depend on the seed only. */
#include "model/train/corpus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/rng.h"

/* ---- words --------------------------------------------------------------------------- */

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

static const char *const MALE[] = {
	"John", "Tom", "James", "David", "Peter", "Paul", "Sam", "Ben", "Jack", "Leo", "Adam",
	"Noah", "Luke", "Ryan", "Eric", "Daniel", "Michael", "George", "Henry", "Oscar", "Oliver",
	"Harry", "Frank", "Carl", "Victor", "Simon", "Kevin", "Brian", "Steve", "Mike", "Nick",
	"Joe", "Tim", "Ted", "Ian", "Matt", "Fred", "Hugo", "Ivan", "Liam", "Ethan", "Owen",
	"Jake", "Lucas", "Felix", "Arthur", "Edward", "Robert",
};
static const char *const FEMALE[] = {
	"Mary", "Anna", "Sarah", "Emma", "Lucy", "Kate", "Jane", "Lisa", "Amy", "Alice", "Julia",
	"Laura", "Helen", "Emily", "Sophie", "Olivia", "Mia", "Ella", "Chloe", "Zoe", "Ruth",
	"Clara", "Eva", "Nina", "Lily", "Ava", "Hannah", "Maria", "Susan", "Karen", "Linda",
	"Beth", "Claire", "Diana", "Fiona", "Jenny", "Molly", "Nora", "Rachel", "Tina", "Vera",
	"Wendy", "Amelia", "Isabel", "Megan", "Sally", "Jessica", "Joan",
};
#define N_MALE ((int)(sizeof MALE / sizeof *MALE))
#define N_FEMALE ((int)(sizeof FEMALE / sizeof *FEMALE))
#define N_NAMES (N_MALE + N_FEMALE)

static const noun PEOPLE[] = {
	{"boy", "boys", K_P}, {"girl", "girls", K_P}, {"man", "men", K_P},
	{"woman", "women", K_P}, {"child", "children", K_P},
	{"teacher", "teachers", K_P | F_REL}, {"doctor", "doctors", K_P | F_REL},
	{"farmer", "farmers", K_P}, {"student", "students", K_P}, {"baker", "bakers", K_P},
	{"driver", "drivers", K_P}, {"nurse", "nurses", K_P}, {"king", "kings", K_P},
	{"queen", "queens", K_P}, {"friend", "friends", K_P | F_REL},
	{"neighbor", "neighbors", K_P | F_REL}, {"singer", "singers", K_P},
	{"painter", "painters", K_P}, {"player", "players", K_P}, {"sailor", "sailors", K_P},
	{"pilot", "pilots", K_P}, {"writer", "writers", K_P}, {"worker", "workers", K_P},
	{"guard", "guards", K_P}, {"judge", "judges", K_P}, {"dancer", "dancers", K_P},
	{"visitor", "visitors", K_P}, {"soldier", "soldiers", K_P},
	{"brother", "brothers", K_P | F_REL}, {"sister", "sisters", K_P | F_REL},
	{"lady", "ladies", K_P}, {"prince", "princes", K_P}, {"princess", "princesses", K_P},
	{"fisherman", "fishermen", K_P}, {"cousin", "cousins", K_P | F_REL},
	{"uncle", "uncles", K_P | F_REL}, {"aunt", "aunts", K_P | F_REL},
	{"hunter", "hunters", K_P}, {"clown", "clowns", K_P}, {"chef", "chefs", K_P},
};
static const noun ANIMALS[] = {
	{"dog", "dogs", K_A | F_PET}, {"cat", "cats", K_A | F_PET}, {"bird", "birds", K_A | F_PET},
	{"horse", "horses", K_A | F_PET}, {"cow", "cows", K_A}, {"pig", "pigs", K_A | F_PET},
	{"duck", "ducks", K_A | F_PET}, {"goat", "goats", K_A | F_PET},
	{"rabbit", "rabbits", K_A | F_PET}, {"mouse", "mice", K_A | F_PET}, {"fox", "foxes", K_A},
	{"wolf", "wolves", K_A}, {"bear", "bears", K_A}, {"lion", "lions", K_A},
	{"tiger", "tigers", K_A}, {"frog", "frogs", K_A | F_PET}, {"owl", "owls", K_A},
	{"snake", "snakes", K_A | F_PET}, {"monkey", "monkeys", K_A}, {"goose", "geese", K_A},
	{"hen", "hens", K_A | F_PET}, {"lamb", "lambs", K_A | F_PET},
	{"puppy", "puppies", K_A | F_PET}, {"kitten", "kittens", K_A | F_PET},
	{"turtle", "turtles", K_A | F_PET}, {"parrot", "parrots", K_A | F_PET},
	{"hamster", "hamsters", K_A | F_PET}, {"donkey", "donkeys", K_A}, {"camel", "camels", K_A},
	{"zebra", "zebras", K_A}, {"elephant", "elephants", K_A}, {"spider", "spiders", K_A},
	{"squirrel", "squirrels", K_A}, {"crow", "crows", K_A}, {"swan", "swans", K_A},
	{"pony", "ponies", K_A | F_PET}, {"lizard", "lizards", K_A | F_PET},
	{"chicken", "chickens", K_A | F_PET},
};
static const noun OBJECTS[] = {
	{"ball", "balls", K_O | F_GIVE | F_COL | F_SMALL}, {"box", "boxes", K_O | F_GIVE | F_COL | F_SURF | F_CONT | F_SMALL},
	{"book", "books", K_O | F_GIVE | F_COL | F_SMALL}, {"key", "keys", K_O | F_GIVE | F_SMALL},
	{"cup", "cups", K_O | F_GIVE | F_COL | F_SMALL}, {"hat", "hats", K_O | F_GIVE | F_COL | F_SMALL},
	{"lamp", "lamps", K_O | F_COL | F_SMALL}, {"chair", "chairs", K_O | F_COL | F_SURF},
	{"table", "tables", K_O | F_COL | F_SURF}, {"bag", "bags", K_O | F_GIVE | F_COL | F_CONT | F_SMALL},
	{"bottle", "bottles", K_O | F_GIVE | F_SMALL}, {"plate", "plates", K_O | F_GIVE | F_SMALL},
	{"bowl", "bowls", K_O | F_GIVE | F_COL | F_CONT | F_SMALL}, {"spoon", "spoons", K_O | F_GIVE | F_SMALL},
	{"fork", "forks", K_O | F_GIVE | F_SMALL}, {"knife", "knives", K_O | F_GIVE | F_SMALL},
	{"clock", "clocks", K_O | F_COL | F_SMALL}, {"pen", "pens", K_O | F_GIVE | F_COL | F_SMALL},
	{"pencil", "pencils", K_O | F_GIVE | F_COL | F_SMALL}, {"letter", "letters", K_O | F_GIVE | F_SMALL},
	{"map", "maps", K_O | F_GIVE | F_SMALL}, {"coat", "coats", K_O | F_COL | F_SMALL}, {"shoe", "shoes", K_O | F_COL | F_SMALL},
	{"sock", "socks", K_O | F_COL | F_SMALL}, {"shirt", "shirts", K_O | F_COL | F_SMALL},
	{"dress", "dresses", K_O | F_COL | F_SMALL}, {"ring", "rings", K_O | F_GIVE | F_SMALL},
	{"phone", "phones", K_O | F_GIVE | F_COL | F_SMALL}, {"basket", "baskets", K_O | F_GIVE | F_COL | F_CONT | F_SMALL},
	{"bucket", "buckets", K_O | F_GIVE | F_COL | F_CONT | F_SMALL},
	{"blanket", "blankets", K_O | F_GIVE | F_COL | F_SMALL}, {"pillow", "pillows", K_O | F_COL | F_SMALL},
	{"candle", "candles", K_O | F_GIVE | F_COL | F_SMALL}, {"mirror", "mirrors", K_O},
	{"window", "windows", K_O}, {"door", "doors", K_O},
	{"bed", "beds", K_O | F_COL | F_SURF}, {"desk", "desks", K_O | F_COL | F_SURF},
	{"toy", "toys", K_O | F_GIVE | F_SMALL}, {"kite", "kites", K_O | F_GIVE | F_COL | F_SMALL},
	{"drum", "drums", K_O | F_COL | F_SMALL}, {"bell", "bells", K_O | F_GIVE | F_SMALL},
	{"flower", "flowers", K_O | F_GIVE | F_SMALL}, {"apple", "apples", K_O | F_GIVE | F_SMALL},
	{"cake", "cakes", K_O | F_GIVE | F_SMALL}, {"cookie", "cookies", K_O | F_GIVE | F_SMALL},
	{"egg", "eggs", K_O | F_GIVE | F_SMALL}, {"stone", "stones", K_O | F_GIVE | F_SMALL},
	{"shell", "shells", K_O | F_GIVE | F_SMALL}, {"coin", "coins", K_O | F_GIVE | F_SMALL},
	{"ticket", "tickets", K_O | F_GIVE | F_SMALL}, {"picture", "pictures", K_O | F_GIVE | F_SMALL},
	{"bike", "bikes", K_O | F_COL}, {"car", "cars", K_O | F_COL}, {"boat", "boats", K_O | F_COL},
	{"umbrella", "umbrellas", K_O | F_GIVE | F_COL | F_SMALL}, {"glass", "glasses", K_O | F_GIVE | F_SMALL},
	{"brush", "brushes", K_O | F_GIVE | F_SMALL}, {"scarf", "scarves", K_O | F_GIVE | F_COL | F_SMALL},
	{"leaf", "leaves", K_O | F_SMALL}, {"dish", "dishes", K_O | F_GIVE | F_SMALL},
	{"bench", "benches", K_O | F_SURF}, {"shelf", "shelves", K_O | F_SURF},
	{"sofa", "sofas", K_O | F_COL | F_SURF}, {"towel", "towels", K_O | F_COL | F_SMALL},
	{"rope", "ropes", K_O | F_SMALL}, {"stick", "sticks", K_O | F_GIVE | F_SMALL}, {"jar", "jars", K_O | F_GIVE | F_CONT | F_SMALL},
	{"boot", "boots", K_O | F_COL | F_SMALL}, {"glove", "gloves", K_O | F_COL | F_SMALL}, {"truck", "trucks", K_O | F_COL},
	{"ladder", "ladders", K_O}, {"fence", "fences", K_O}, {"drawer", "drawers", K_O | F_CONT},
	{"gift", "gifts", K_O | F_GIVE | F_SMALL}, {"banana", "bananas", K_O | F_GIVE | F_SMALL},
	{"sandwich", "sandwiches", K_O | F_GIVE | F_SMALL}, {"card", "cards", K_O | F_GIVE | F_SMALL},
};
#define N_PEOPLE ((int)(sizeof PEOPLE / sizeof *PEOPLE))
#define N_ANIMALS ((int)(sizeof ANIMALS / sizeof *ANIMALS))
#define N_OBJECTS ((int)(sizeof OBJECTS / sizeof *OBJECTS))

/* Places, and whether one is "in" them rather than "at" them ("in the kitchen"). */
typedef struct place {
	const char *w;
	int in;
} place;
static const place PLACES[] = {
	{"park", 1}, {"school", 0}, {"market", 0}, {"beach", 0}, {"garden", 1}, {"library", 0},
	{"river", 0}, {"forest", 1}, {"town", 1}, {"farm", 0}, {"station", 0}, {"zoo", 0},
	{"lake", 0}, {"hill", 0}, {"shop", 0}, {"castle", 0}, {"museum", 0}, {"village", 1},
	{"city", 1}, {"bakery", 0}, {"kitchen", 1}, {"field", 1}, {"harbor", 0}, {"airport", 0},
	{"hospital", 0}, {"cinema", 0}, {"playground", 0}, {"bridge", 0}, {"mountain", 0},
	{"island", 0}, {"cafe", 0}, {"office", 0}, {"church", 0}, {"bank", 0}, {"pool", 0},
	{"square", 0}, {"restaurant", 0}, {"theater", 0}, {"hotel", 0}, {"stadium", 0},
};
#define N_PLACES ((int)(sizeof PLACES / sizeof *PLACES))

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
static const adj ADJS[] = {
	{"red", K_O | J_COL, S_COL}, {"blue", K_O | J_COL, S_COL}, {"green", K_O | J_COL, S_COL},
	{"yellow", K_O | J_COL, S_COL}, {"black", K_O | K_A | J_COL, S_COL},
	{"white", K_O | K_A | J_COL, S_COL}, {"brown", K_O | K_A | J_COL, S_COL},
	{"pink", K_O | J_COL, S_COL}, {"purple", K_O | J_COL, S_COL}, {"gray", K_O | K_A | J_COL, S_COL},
	{"happy", K_P | K_A | J_STATE, S_MOOD}, {"sad", K_P | K_A | J_STATE, S_MOOD},
	{"tired", K_P | K_A | J_STATE, S_NONE}, {"hungry", K_P | K_A | J_STATE, S_NONE},
	{"thirsty", K_P | K_A | J_STATE, S_NONE}, {"young", K_P | K_A, S_AGE},
	{"old", K_P | K_A | K_O, S_AGE}, {"new", K_O, S_AGE}, {"big", K_P | K_A | K_O, S_SIZE},
	{"small", K_P | K_A | K_O, S_SIZE}, {"little", K_P | K_A | K_O, S_SIZE},
	{"tiny", K_A | K_O, S_SIZE}, {"huge", K_A | K_O, S_SIZE}, {"tall", K_P, S_SIZE},
	{"short", K_P, S_SIZE}, {"quiet", K_P | K_A, S_NOISE}, {"loud", K_P | K_A, S_NOISE},
	{"noisy", K_P | K_A, S_NOISE}, {"angry", K_P | K_A | J_STATE, S_TEMPER},
	{"calm", K_P | K_A | J_STATE, S_TEMPER}, {"gentle", K_P | K_A, S_TEMPER},
	{"wild", K_A, S_TEMPER}, {"brave", K_P | K_A, S_NONE}, {"kind", K_P, S_NONE},
	{"lazy", K_P | K_A, S_SPEED}, {"busy", K_P | J_STATE, S_NONE},
	{"sleepy", K_P | K_A | J_STATE, S_NONE}, {"friendly", K_P | K_A, S_NONE},
	{"clever", K_P | K_A, S_NONE}, {"funny", K_P | K_A, S_NONE}, {"shy", K_P | K_A, S_NONE},
	{"proud", K_P | K_A, S_NONE}, {"strong", K_P | K_A, S_FORCE}, {"weak", K_P | K_A, S_FORCE},
	{"fast", K_P | K_A, S_SPEED}, {"slow", K_P | K_A, S_SPEED}, {"famous", K_P, S_NONE},
	{"rich", K_P, S_MONEY}, {"poor", K_P, S_MONEY}, {"polite", K_P, S_NONE},
	{"careful", K_P, S_NONE}, {"cheerful", K_P | J_STATE, S_MOOD}, {"fluffy", K_A, S_NONE},
	{"sick", K_P | K_A | J_STATE, S_NONE}, {"scared", K_P | K_A | J_STATE, S_MOOD},
	{"cold", K_P | K_A | K_O | J_STATE, S_NONE}, {"clean", K_O, S_CLEAN},
	{"dirty", K_P | K_A | K_O, S_CLEAN}, {"dusty", K_O, S_CLEAN}, {"shiny", K_O, S_CLEAN},
	{"wet", K_P | K_A | K_O | J_STATE, S_WET}, {"dry", K_O, S_WET}, {"cheap", K_O, S_MONEY},
	{"pretty", K_P | K_A | K_O, S_NONE}, {"strange", K_P | K_A | K_O, S_NONE},
	{"nice", K_P | K_A | K_O, S_NONE}, {"lovely", K_P | K_A | K_O, S_NONE},
	{"heavy", K_O, S_FORCE}, {"bright", K_O, S_LIGHT}, {"dark", K_O, S_LIGHT},
};
#define N_ADJS ((int)(sizeof ADJS / sizeof *ADJS))

/* verbs: subj and obj are the kinds allowed; V_LOC: "runs near the park" reads well;
 * V_HABIT: a pastime ("she wanted to paint", "he swims every day") */
enum { V_LOC = 1, V_HABIT = 2 };
typedef struct verb {
	const char *sg, *pl;
	unsigned char subj, obj, f;
} verb;
static const verb INTRANS[] = {
	{"runs", "run", K_P | K_A, 0, V_LOC | V_HABIT}, {"walks", "walk", K_P | K_A, 0, V_LOC | V_HABIT},
	{"sleeps", "sleep", K_P | K_A, 0, V_LOC}, {"jumps", "jump", K_P | K_A, 0, 0},
	{"plays", "play", K_P | K_A, 0, V_LOC | V_HABIT}, {"waits", "wait", K_P | K_A, 0, V_LOC},
	{"eats", "eat", K_P | K_A, 0, 0}, {"sits", "sit", K_P | K_A, 0, V_LOC},
	{"rests", "rest", K_P | K_A, 0, V_LOC}, {"hides", "hide", K_P | K_A, 0, V_LOC},
	{"stays", "stay", K_P | K_A, 0, V_LOC}, {"drinks", "drink", K_P | K_A, 0, 0},
	{"swims", "swim", K_P | K_A, 0, V_HABIT}, {"climbs", "climb", K_P | K_A, 0, V_HABIT},
	{"returns", "return", K_P | K_A, 0, 0}, {"sings", "sing", K_P, 0, V_LOC | V_HABIT},
	{"laughs", "laugh", K_P, 0, 0}, {"smiles", "smile", K_P, 0, 0},
	{"reads", "read", K_P, 0, V_LOC | V_HABIT}, {"writes", "write", K_P, 0, V_HABIT},
	{"works", "work", K_P, 0, V_LOC | V_HABIT}, {"cooks", "cook", K_P, 0, V_HABIT},
	{"dances", "dance", K_P, 0, V_LOC | V_HABIT}, {"talks", "talk", K_P, 0, 0},
	{"shouts", "shout", K_P, 0, 0}, {"cries", "cry", K_P, 0, 0},
	{"thinks", "think", K_P, 0, 0}, {"listens", "listen", K_P, 0, 0},
	{"studies", "study", K_P, 0, V_LOC | V_HABIT}, {"paints", "paint", K_P, 0, V_LOC | V_HABIT},
	{"draws", "draw", K_P, 0, V_HABIT}, {"waves", "wave", K_P, 0, 0},
	{"travels", "travel", K_P, 0, V_HABIT}, {"whistles", "whistle", K_P, 0, 0},
};
static const verb TRANS[] = {
	{"likes", "like", K_P | K_A, K_P | K_A, 0}, {"sees", "see", K_P | K_A, K_P | K_A, 0},
	{"follows", "follow", K_P | K_A, K_P | K_A, 0}, {"watches", "watch", K_P | K_A, K_P | K_A, 0},
	{"chases", "chase", K_P | K_A, K_P | K_A, 0}, {"knows", "know", K_P | K_A, K_P | K_A, 0},
	{"loves", "love", K_P | K_A, K_P | K_A, 0}, {"finds", "find", K_P | K_A, K_P | K_A, 0},
	{"helps", "help", K_P, K_P | K_A, 0}, {"feeds", "feed", K_P, K_A, 0},
	{"visits", "visit", K_P, K_P | K_A, 0}, {"calls", "call", K_P, K_P | K_A, 0},
	{"meets", "meet", K_P, K_P, 0}, {"thanks", "thank", K_P, K_P, 0},
	{"hugs", "hug", K_P, K_P | K_A, 0}, {"teaches", "teach", K_P, K_P | K_A, 0},
};
#define N_INTRANS ((int)(sizeof INTRANS / sizeof *INTRANS))
#define N_TRANS ((int)(sizeof TRANS / sizeof *TRANS))

/* what a person did to a thing: "the books that the girl found" */
static const char *const PAST[] = {
	"found", "bought", "lost", "took", "dropped", "carried", "brought", "sold", "hid", "kept",
	"moved", "saw", "liked", "wanted", "cleaned",
};
/* how a thing changes hands in the IOI sentences */
static const char *const GIVE[] = {
	"gave", "handed", "passed", "showed", "brought", "sent", "offered", "sold",
};
#define N_PAST ((int)(sizeof PAST / sizeof *PAST))
#define N_GIVE ((int)(sizeof GIVE / sizeof *GIVE))

/* what one goes somewhere to do: "went to the pool because she wanted to swim" */
static const struct activity {
	const char *verb, *places[5];
} ACTIVITIES[] = {
	{"run", {"park", "beach", "field", "forest"}},
	{"walk", {"park", "beach", "forest", "river", "village"}},
	{"play", {"park", "playground", "beach", "garden", "field"}},
	{"swim", {"pool", "lake", "river", "beach"}},
	{"climb", {"mountain", "hill"}},
	{"sing", {"church", "theater", "square"}},
	{"read", {"library", "cafe", "garden", "park"}},
	{"write", {"library", "cafe", "office"}},
	{"work", {"office", "bank", "farm", "hospital", "bakery"}},
	{"cook", {"kitchen", "restaurant"}},
	{"dance", {"theater", "square", "hotel"}},
	{"study", {"library", "school"}},
	{"paint", {"garden", "museum", "harbor", "bridge"}},
	{"draw", {"museum", "school", "park", "island"}},
	{"travel", {"station", "airport", "harbor"}},
	{"eat", {"restaurant", "cafe", "bakery", "kitchen"}},
	{"shop", {"market", "town", "city"}},
	{"rest", {"hotel", "village", "island"}},
};
#define N_ACTIVITIES ((int)(sizeof ACTIVITIES / sizeof *ACTIVITIES))

static const char *const TIMES[] = {
	"every day", "all day", "at night", "in the morning", "every morning", "again", "today",
	"sometimes", "often",
};
#define N_TIMES ((int)(sizeof TIMES / sizeof *TIMES))

/* filler sentences that name nothing the tasks ask about */
static const char *const FILLERS[] = {
	"It was a sunny day.", "The sky was clear.", "It started to rain.", "Everyone was quiet.",
	"Nobody said a word.", "The day went by slowly.", "It was late in the evening.",
	"The wind was cold.",
};
#define N_FILLERS ((int)(sizeof FILLERS / sizeof *FILLERS))

/* Every other word a template writes; gb_corpus_world_words lists them, and the test checks
 * that the text holds no word outside the vocabulary. */
static const char *const OTHER[] = {
	"the", "The", "a", "an", "and", "to", "of", "on", "in", "at", "near", "under", "behind",
	"beside", "with", "that", "who", "When", "After", "While", "Then", "because", "so",
	"it", "It", "he", "she", "them", "they", "Here", "are", "is", "was", "were",
	"has", "have", "had", "said", "told", "went", "came", "home", "arrived", "got", "decided",
	"give", "working", "long", "day", "wanted", "lost", "looked", "for", "everywhere", "lives",
	"every", "fed", "could", "not", "sleep", "pet", "wrote", "down", "some", "words", "read",
	"again", "list", "all", "night", "morning", "today", "sometimes", "often", "sunny", "sky",
	"clear", "started", "rain", "Everyone", "quiet", "Nobody", "word", "by", "slowly", "late",
	"evening", "wind", "cold", "s",
};
#define N_OTHER ((int)(sizeof OTHER / sizeof *OTHER))

/* ---- text building ------------------------------------------------------------------- */

typedef struct sb {
	char *p;
	size_t n, cap;
	int oom;
} sb;

static void sb_put(sb *b, const char *s, size_t len)
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

static void sb_puts(sb *b, const char *s) { sb_put(b, s, strlen(s)); }

static void sb_reserve(sb *b, size_t cap)
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

static const char *name(int i) { return i < N_MALE ? MALE[i] : FEMALE[i - N_MALE]; }
static int female(int i) { return i >= N_MALE; }

/* A random noun of one of the kinds, having every feature in need (kinds weighted by
 * their number of nouns). */
static const noun *pick_noun(gen *g, unsigned kinds, unsigned need)
{
	unsigned np = kinds & K_P ? N_PEOPLE : 0, na = kinds & K_A ? N_ANIMALS : 0,
	         no = kinds & K_O ? N_OBJECTS : 0;
	for (;;) {
		unsigned i = (unsigned)rnd(g, (int)(np + na + no));
		const noun *n = i < np ? &PEOPLE[i] : i < np + na ? &ANIMALS[i - np] : &OBJECTS[i - np - na];
		if ((n->f & need) == need)
			return n;
	}
}

static unsigned kind_of(const noun *n) { return n->f & (K_P | K_A | K_O); }

/* an adjective describing kind, with every feature in need (J_COL, J_STATE) */
static const adj *pick_adj(gen *g, unsigned kind, unsigned need)
{
	for (;;) {
		const adj *a = &ADJS[rnd(g, N_ADJS)];
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

static const place *pick_place(gen *g) { return &PLACES[rnd(g, N_PLACES)]; }

/* "at the station", "in the kitchen" */
static void at_place(gen *g, const place *p)
{
	W(g, p->in ? "in the" : "at the");
	W(g, p->w);
}

/* ---- the held-out partition ---------------------------------------------------------- */

#define HELD_PER_MILLE 100

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

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
		v = pick_verb(g, INTRANS, N_INTRANS, k, 0, 0);
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
			W(g, TIMES[rnd(g, N_TIMES)]);
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
			tv = pick_verb(g, TRANS, N_TRANS, kind_of(att), kind_of(head), 0);
			break;
		case 3:
			head = pick_noun(g, K_P | K_A, 0);
			att = pick_noun(g, K_P | K_A, 0);
			tv = pick_verb(g, TRANS, N_TRANS, kind_of(head), kind_of(att), 0);
			break;
		default:
			head = pick_noun(g, K_O, F_SMALL); /* nobody dropped the tables */
			att = pick_noun(g, K_P, 0);
			past = PAST[rnd(g, N_PAST)];
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
		const struct activity *a = &ACTIVITIES[rnd(g, N_ACTIVITIES)];
		int np = 0;
		while (np < 5 && a->places[np])
			np++;
		W(g, nm), W(g, "went to the"), W(g, a->places[rnd(g, np)]), W(g, "because");
		PRONOUN(), W(g, "wanted to"), W(g, a->verb);
		break;
	}
	case 1:
		W(g, nm), W(g, "said that"), PRONOUN(), W(g, PAST[rnd(g, N_PAST)]), W(g, "the");
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
		W(g, pick_verb(g, INTRANS, N_INTRANS, K_P, 0, V_HABIT)->sg), W(g, "every day");
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
	const char *give = GIVE[rnd(g, N_GIVE)];
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
	enum { NP = N_PEOPLE, NA = N_ANIMALS, NO = N_OBJECTS };
	int i = rnd(g, 2 * (N_PEOPLE + N_ANIMALS + N_OBJECTS) + N_PLACES + N_ADJS +
	                   2 * (N_INTRANS + N_TRANS) + N_PAST);
	if (i < 2 * NP) return i & 1 ? PEOPLE[i / 2].pl : PEOPLE[i / 2].sg;
	i -= 2 * NP;
	if (i < 2 * NA) return i & 1 ? ANIMALS[i / 2].pl : ANIMALS[i / 2].sg;
	i -= 2 * NA;
	if (i < 2 * NO) return i & 1 ? OBJECTS[i / 2].pl : OBJECTS[i / 2].sg;
	i -= 2 * NO;
	if (i < N_PLACES) return PLACES[i].w;
	i -= N_PLACES;
	if (i < N_ADJS) return ADJS[i].w;
	i -= N_ADJS;
	if (i < 2 * N_INTRANS) return i & 1 ? INTRANS[i / 2].pl : INTRANS[i / 2].sg;
	i -= 2 * N_INTRANS;
	if (i < 2 * N_TRANS) return i & 1 ? TRANS[i / 2].pl : TRANS[i / 2].sg;
	i -= 2 * N_TRANS;
	return PAST[i];
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
				int i = rnd(g, N_FILLERS - 1);
				i += i >= last && last >= 0; /* never the same sentence twice in a row */
				W(g, FILLERS[i]);
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

/* ---- the vocabulary ------------------------------------------------------------------ */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Appends class wc's words to v (v NULL: only counts); returns the count. */
static int collect(int wc, const char **v)
{
	int n = 0;
#define ADD(w) do { if (v) v[n] = (w); n++; } while (0)
	switch (wc) {
	case GB_WC_MALE: for (int i = 0; i < N_MALE; i++) ADD(MALE[i]); break;
	case GB_WC_FEMALE: for (int i = 0; i < N_FEMALE; i++) ADD(FEMALE[i]); break;
	case GB_WC_NOUN_SG:
	case GB_WC_NOUN_PL:
		for (int i = 0; i < N_PEOPLE; i++) ADD(wc == GB_WC_NOUN_SG ? PEOPLE[i].sg : PEOPLE[i].pl);
		for (int i = 0; i < N_ANIMALS; i++) ADD(wc == GB_WC_NOUN_SG ? ANIMALS[i].sg : ANIMALS[i].pl);
		for (int i = 0; i < N_OBJECTS; i++) ADD(wc == GB_WC_NOUN_SG ? OBJECTS[i].sg : OBJECTS[i].pl);
		break;
	case GB_WC_PLACE: for (int i = 0; i < N_PLACES; i++) ADD(PLACES[i].w); break;
	case GB_WC_ADJ: for (int i = 0; i < N_ADJS; i++) ADD(ADJS[i].w); break;
	case GB_WC_COLOR:
		for (int i = 0; i < N_ADJS; i++)
			if (ADJS[i].f & J_COL)
				ADD(ADJS[i].w);
		break;
	case GB_WC_VERB_SG:
	case GB_WC_VERB_PL:
		for (int i = 0; i < N_INTRANS; i++) ADD(wc == GB_WC_VERB_SG ? INTRANS[i].sg : INTRANS[i].pl);
		for (int i = 0; i < N_TRANS; i++) ADD(wc == GB_WC_VERB_SG ? TRANS[i].sg : TRANS[i].pl);
		ADD(wc == GB_WC_VERB_SG ? "is" : "are");
		ADD(wc == GB_WC_VERB_SG ? "has" : "have");
		break;
	case GB_WC_VERB_PAST:
		for (int i = 0; i < N_PAST; i++) ADD(PAST[i]);
		for (int i = 0; i < N_GIVE; i++) ADD(GIVE[i]);
		break;
	case GB_WC_OTHER:
		for (int i = 0; i < N_OTHER; i++) ADD(OTHER[i]);
		/* the time phrases are several words: their words are listed in OTHER */
		break;
	default:
		for (int c = 0; c < GB_WC_ALL; c++)
			n += collect(c, v ? v + n : NULL);
		break;
	}
#undef ADD
	return n;
}

int gb_corpus_world_words(int wc, const char ***out, int *n, gb_err *err)
{
	if (wc < 0 || wc >= GB_WC_N)
		return gb_fail(err, "words: unknown word class %d", wc);
	int m = collect(wc, NULL);
	const char **v = malloc((size_t)m * sizeof *v);
	if (!v)
		return gb_fail(err, "words: out of memory");
	collect(wc, v);
	qsort(v, (size_t)m, sizeof *v, cmp_str);
	int k = 0;
	for (int i = 0; i < m; i++)
		if (!k || strcmp(v[k - 1], v[i]))
			v[k++] = v[i];
	*out = v;
	*n = k;
	return 0;
}

/* ---- dates --------------------------------------------------------------------------- */

static const char *const MONTH[] = {"January", "February", "March", "April", "May", "June",
                                    "July", "August", "September", "October", "November",
                                    "December"};
static const char *const MONTH_LC[] = {"january", "february", "march", "april", "may", "june",
                                       "july", "august", "september", "october", "november",
                                       "december"};
static const char *const MON[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
static const char *const MON_LC[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                     "jul", "aug", "sep", "oct", "nov", "dec"};
static const char *const WEEKDAY[] = {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday",
                                      "Saturday", "Sunday"};

/* days since 1970-01-01 (H. Hinnant's days_from_civil), valid for any Gregorian date */
static long days_from_civil(int y, int m, int d)
{
	y -= m <= 2;
	long era = (y >= 0 ? y : y - 399) / 400;
	long yoe = y - era * 400;
	long doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void civil_from_days(long z, int *y, int *m, int *d)
{
	z += 719468;
	long era = (z >= 0 ? z : z - 146096) / 146097;
	long doe = z - era * 146097;
	long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	long mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = (int)(yoe + era * 400 + (*m <= 2));
}

static int leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int gb_date_valid(int y, int m, int d)
{
	static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	if (y < GB_DATE_YEAR_MIN || y > GB_DATE_YEAR_MAX || m < 1 || m > 12 || d < 1)
		return 0;
	return d <= mdays[m - 1] + (m == 2 && leap(y));
}

int gb_date_weekday(int y, int m, int d)
{
	long z = days_from_civil(y, m, d);
	return (int)(((z % 7) + 7 + 3) % 7); /* 1970-01-01 was a Thursday */
}

int gb_date_heldout(int y, int m, int d)
{
	return mix64(0xda7e5eed00000000ull ^ (uint64_t)(y * 10000 + m * 100 + d)) % 1000 <
	       HELD_PER_MILLE;
}

static const char *ordinal(int d)
{
	if (d >= 11 && d <= 13)
		return "th";
	return d % 10 == 1 ? "st" : d % 10 == 2 ? "nd" : d % 10 == 3 ? "rd" : "th";
}

int gb_date_format(int form, int y, int m, int d, char *buf, size_t cap, gb_err *err)
{
	if (!gb_date_valid(y, m, d))
		return gb_fail(err, "date: %04d-%02d-%02d is not a date in %d..%d", y, m, d,
		               GB_DATE_YEAR_MIN, GB_DATE_YEAR_MAX);
	const int i = m - 1, yy = y % 100;
	int k;
	switch (form) {
	case 0: k = snprintf(buf, cap, "%d %s %d", d, MONTH[i], y); break;
	case 1: k = snprintf(buf, cap, "%s %d%s, %02d", MONTH_LC[i], d, ordinal(d), yy); break;
	case 2: k = snprintf(buf, cap, "%02d/%02d/%d", d, m, y); break;
	case 3: k = snprintf(buf, cap, "%s, %s %d %d", WEEKDAY[gb_date_weekday(y, m, d)], MON[i], d, y); break;
	case 4: k = snprintf(buf, cap, "%d.%02d.%02d", y, m, d); break;
	case 5: k = snprintf(buf, cap, "%d%s of %s, %d", d, ordinal(d), MONTH[i], y); break;
	case 6: k = snprintf(buf, cap, "%s %d, %d", MON[i], d, y); break;
	case 7: k = snprintf(buf, cap, "%d %s %02d", d, MON_LC[i], yy); break;
	case 8: k = snprintf(buf, cap, "%s %d, %d", MONTH[i], d, y); break;
	case 9: k = snprintf(buf, cap, "%02d-%s-%d", d, MON[i], y); break;
	case 10:
		k = snprintf(buf, cap, "%.3s, %d %s %d", WEEKDAY[gb_date_weekday(y, m, d)], d, MONTH[i], y);
		break;
	case 11: k = snprintf(buf, cap, "%d.%d.%d", d, m, y); break;
	default: return gb_fail(err, "date: unknown form %d (0..%d)", form, GB_DATE_N_FORMS - 1);
	}
	if (k < 0 || (size_t)k >= cap)
		return gb_fail(err, "date: buffer of %zu bytes too small for form %d", cap, form);
	return 0;
}

/* "YYYY-MM-DD" by hand: snprintf cannot be shown to fit in 11 bytes */
static void iso(char *s, int y, int m, int d)
{
	s[0] = (char)('0' + y / 1000), s[1] = (char)('0' + y / 100 % 10);
	s[2] = (char)('0' + y / 10 % 10), s[3] = (char)('0' + y % 10), s[4] = '-';
	s[5] = (char)('0' + m / 10), s[6] = (char)('0' + m % 10), s[7] = '-';
	s[8] = (char)('0' + d / 10), s[9] = (char)('0' + d % 10), s[10] = 0;
}

int gb_corpus_dates(int n, uint64_t seed, int heldout, gb_date_pair **out, gb_err *err)
{
	if (!out)
		return gb_fail(err, "dates: no output");
	*out = NULL;
	if (n < 0)
		return gb_fail(err, "dates: negative count %d", n);
	gb_date_pair *v = calloc(n ? (size_t)n : 1, sizeof *v);
	if (!v)
		return gb_fail(err, "dates: out of memory");
	gb_rng r;
	gb_rng_seed(&r, mix64(seed ^ 0xda7e0000ull ^ (heldout != 0)));
	long lo = days_from_civil(GB_DATE_YEAR_MIN, 1, 1);
	int span = (int)(days_from_civil(GB_DATE_YEAR_MAX, 12, 31) - lo + 1);
	for (int i = 0; i < n; i++) {
		int y, m, d;
		do
			civil_from_days(lo + gb_rng_below(&r, span), &y, &m, &d);
		while (gb_date_heldout(y, m, d) != (heldout != 0));
		gb_date_pair *p = &v[i];
		p->form = (unsigned char)gb_rng_below(&r, GB_DATE_N_FORMS);
		p->y = (short)y, p->m = (unsigned char)m, p->d = (unsigned char)d;
		if (gb_date_format(p->form, y, m, d, p->src, sizeof p->src, err)) {
			free(v);
			return -1;
		}
		iso(p->dst, y, m, d);
	}
	*out = v;
	return 0;
}

int gb_corpus_dates_text(int n, uint64_t seed, int heldout, const char *sep, const char *delim,
                         char **out, size_t *out_len, gb_err *err)
{
	gb_date_pair *v;
	if (!out || !out_len)
		return gb_fail(err, "dates: no output");
	if (gb_corpus_dates(n, seed, heldout, &v, err))
		return -1;
	sep = sep ? sep : "\t";
	delim = delim ? delim : "\n";
	sb b = {0};
	sb_reserve(&b, (size_t)n * 40 + 64);
	for (int i = 0; i < n; i++) {
		sb_puts(&b, v[i].src);
		sb_puts(&b, sep);
		sb_puts(&b, v[i].dst);
		sb_puts(&b, delim);
	}
	free(v);
	if (b.oom) {
		free(b.p);
		return gb_fail(err, "dates: out of memory");
	}
	*out = b.p;
	*out_len = b.n;
	return 0;
}
