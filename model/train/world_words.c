/* world_words.c — the small world's word lists (declared in corpus_impl.h) with the tags that
 * keep sentences plausible, and gb_corpus_world_words, which lists them by class. Adding a
 * word here adds it to the corpus and to the vocabulary at once. */
#include "model/train/corpus_impl.h"

#include <stdlib.h>
#include <string.h>

#define COUNT(a) ((int)(sizeof(a) / sizeof *(a)))

const char *const gb_world_male[] = {
	"John", "Tom", "James", "David", "Peter", "Paul", "Sam", "Ben", "Jack", "Leo", "Adam",
	"Noah", "Luke", "Ryan", "Eric", "Daniel", "Michael", "George", "Henry", "Oscar", "Oliver",
	"Harry", "Frank", "Carl", "Victor", "Simon", "Kevin", "Brian", "Steve", "Mike", "Nick",
	"Joe", "Tim", "Ted", "Ian", "Matt", "Fred", "Hugo", "Ivan", "Liam", "Ethan", "Owen",
	"Jake", "Lucas", "Felix", "Arthur", "Edward", "Robert",
};
const char *const gb_world_female[] = {
	"Mary", "Anna", "Sarah", "Emma", "Lucy", "Kate", "Jane", "Lisa", "Amy", "Alice", "Julia",
	"Laura", "Helen", "Emily", "Sophie", "Olivia", "Mia", "Ella", "Chloe", "Zoe", "Ruth",
	"Clara", "Eva", "Nina", "Lily", "Ava", "Hannah", "Maria", "Susan", "Karen", "Linda",
	"Beth", "Claire", "Diana", "Fiona", "Jenny", "Molly", "Nora", "Rachel", "Tina", "Vera",
	"Wendy", "Amelia", "Isabel", "Megan", "Sally", "Jessica", "Joan",
};
const int gb_world_n_male = COUNT(gb_world_male);
const int gb_world_n_female = COUNT(gb_world_female);

const noun gb_world_people[] = {
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
const noun gb_world_animals[] = {
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
const noun gb_world_objects[] = {
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
const int gb_world_n_people = COUNT(gb_world_people);
const int gb_world_n_animals = COUNT(gb_world_animals);
const int gb_world_n_objects = COUNT(gb_world_objects);

const place gb_world_places[] = {
	{"park", 1}, {"school", 0}, {"market", 0}, {"beach", 0}, {"garden", 1}, {"library", 0},
	{"river", 0}, {"forest", 1}, {"town", 1}, {"farm", 0}, {"station", 0}, {"zoo", 0},
	{"lake", 0}, {"hill", 0}, {"shop", 0}, {"castle", 0}, {"museum", 0}, {"village", 1},
	{"city", 1}, {"bakery", 0}, {"kitchen", 1}, {"field", 1}, {"harbor", 0}, {"airport", 0},
	{"hospital", 0}, {"cinema", 0}, {"playground", 0}, {"bridge", 0}, {"mountain", 0},
	{"island", 0}, {"cafe", 0}, {"office", 0}, {"church", 0}, {"bank", 0}, {"pool", 0},
	{"square", 0}, {"restaurant", 0}, {"theater", 0}, {"hotel", 0}, {"stadium", 0},
};
const int gb_world_n_places = COUNT(gb_world_places);

const adj gb_world_adjs[] = {
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
const int gb_world_n_adjs = COUNT(gb_world_adjs);

const verb gb_world_intrans[] = {
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
const verb gb_world_trans[] = {
	{"likes", "like", K_P | K_A, K_P | K_A, 0}, {"sees", "see", K_P | K_A, K_P | K_A, 0},
	{"follows", "follow", K_P | K_A, K_P | K_A, 0}, {"watches", "watch", K_P | K_A, K_P | K_A, 0},
	{"chases", "chase", K_P | K_A, K_P | K_A, 0}, {"knows", "know", K_P | K_A, K_P | K_A, 0},
	{"loves", "love", K_P | K_A, K_P | K_A, 0}, {"finds", "find", K_P | K_A, K_P | K_A, 0},
	{"helps", "help", K_P, K_P | K_A, 0}, {"feeds", "feed", K_P, K_A, 0},
	{"visits", "visit", K_P, K_P | K_A, 0}, {"calls", "call", K_P, K_P | K_A, 0},
	{"meets", "meet", K_P, K_P, 0}, {"thanks", "thank", K_P, K_P, 0},
	{"hugs", "hug", K_P, K_P | K_A, 0}, {"teaches", "teach", K_P, K_P | K_A, 0},
};
const int gb_world_n_intrans = COUNT(gb_world_intrans);
const int gb_world_n_trans = COUNT(gb_world_trans);

/* what a person did to a thing: "the books that the girl found" */
const char *const gb_world_past[] = {
	"found", "bought", "lost", "took", "dropped", "carried", "brought", "sold", "hid", "kept",
	"moved", "saw", "liked", "wanted", "cleaned",
};
/* how a thing changes hands in the IOI sentences */
const char *const gb_world_give[] = {
	"gave", "handed", "passed", "showed", "brought", "sent", "offered", "sold",
};
const int gb_world_n_past = COUNT(gb_world_past);
const int gb_world_n_give = COUNT(gb_world_give);

/* what one goes somewhere to do: "went to the pool because she wanted to swim" */
const struct activity gb_world_activities[] = {
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
const int gb_world_n_activities = COUNT(gb_world_activities);

const char *const gb_world_times[] = {
	"every day", "all day", "at night", "in the morning", "every morning", "again", "today",
	"sometimes", "often",
};
const int gb_world_n_times = COUNT(gb_world_times);

/* filler sentences that name nothing the tasks ask about */
const char *const gb_world_fillers[] = {
	"It was a sunny day.", "The sky was clear.", "It started to rain.", "Everyone was quiet.",
	"Nobody said a word.", "The day went by slowly.", "It was late in the evening.",
	"The wind was cold.",
};
const int gb_world_n_fillers = COUNT(gb_world_fillers);

/* Every other word a template writes; gb_corpus_world_words lists them, and the test checks
 * that the text holds no word outside the vocabulary. */
const char *const gb_world_other[] = {
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
const int gb_world_n_other = COUNT(gb_world_other);

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
	case GB_WC_MALE: for (int i = 0; i < gb_world_n_male; i++) ADD(gb_world_male[i]); break;
	case GB_WC_FEMALE: for (int i = 0; i < gb_world_n_female; i++) ADD(gb_world_female[i]); break;
	case GB_WC_NOUN_SG:
	case GB_WC_NOUN_PL:
		for (int i = 0; i < gb_world_n_people; i++) ADD(wc == GB_WC_NOUN_SG ? gb_world_people[i].sg : gb_world_people[i].pl);
		for (int i = 0; i < gb_world_n_animals; i++) ADD(wc == GB_WC_NOUN_SG ? gb_world_animals[i].sg : gb_world_animals[i].pl);
		for (int i = 0; i < gb_world_n_objects; i++) ADD(wc == GB_WC_NOUN_SG ? gb_world_objects[i].sg : gb_world_objects[i].pl);
		break;
	case GB_WC_PLACE: for (int i = 0; i < gb_world_n_places; i++) ADD(gb_world_places[i].w); break;
	case GB_WC_ADJ: for (int i = 0; i < gb_world_n_adjs; i++) ADD(gb_world_adjs[i].w); break;
	case GB_WC_COLOR:
		for (int i = 0; i < gb_world_n_adjs; i++)
			if (gb_world_adjs[i].f & J_COL)
				ADD(gb_world_adjs[i].w);
		break;
	case GB_WC_VERB_SG:
	case GB_WC_VERB_PL:
		for (int i = 0; i < gb_world_n_intrans; i++) ADD(wc == GB_WC_VERB_SG ? gb_world_intrans[i].sg : gb_world_intrans[i].pl);
		for (int i = 0; i < gb_world_n_trans; i++) ADD(wc == GB_WC_VERB_SG ? gb_world_trans[i].sg : gb_world_trans[i].pl);
		ADD(wc == GB_WC_VERB_SG ? "is" : "are");
		ADD(wc == GB_WC_VERB_SG ? "has" : "have");
		break;
	case GB_WC_VERB_PAST:
		for (int i = 0; i < gb_world_n_past; i++) ADD(gb_world_past[i]);
		for (int i = 0; i < gb_world_n_give; i++) ADD(gb_world_give[i]);
		break;
	case GB_WC_OTHER:
		for (int i = 0; i < gb_world_n_other; i++) ADD(gb_world_other[i]);
		/* the time phrases are several words: their words are listed in gb_world_other */
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
