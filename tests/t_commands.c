/* t_commands.c — the command table (app/commands.c) as the classroom reads it: every command
 * decides whether a follower replays it (a new command that forgets fails here, by name), the
 * views are replayed and the commands that write, load, train or run a class are not, and the
 * follower's rule (classroom_replays) reads the table through the prefixes the prompt accepts. */
#include <string.h>

#include "app/classroom.h"
#include "app/commands.h"
#include "tests/tap.h"

/* Hand-picked: what each kind of command must be, whatever else changes in the table. */
static const char *const views[] = { "attn", "scores", "embed", "next", "loss", "positions", "norms", "experts",
	                             "linear", "receptive", "heads", "lens", "generate", "beam", NULL };
static const char *const own[] = { "load", "init", "export", "export-model", "dump", "train", "eval", "curves",
	                           "bench", "cost", "set", "window", "tui", "lesson", "teach", "follow", "answer",
	                           "tally", "quit", "compare-models", NULL };

int main(void)
{
	int n = 0, undecided = 0, bad = 0;
	for (const command *c = commands; c->name; c++, n++) {
		if (c->replay == REPLAY_UNSET) {
			tap_diag("'%s' does not say whether a follower replays it (REPLAY or NO_REPLAY)", c->name);
			undecided++;
		} else if (c->replay != REPLAY && c->replay != NO_REPLAY) {
			tap_diag("'%s' has replay %d, neither REPLAY nor NO_REPLAY", c->name, c->replay);
			bad++;
		}
	}
	tap_ok(n >= 50 && undecided == 0 && bad == 0,
	       "every one of the %d commands decides whether a follower replays it (%d undecided, %d invalid)", n,
	       undecided, bad);

	int views_ok = 1, own_ok = 1;
	for (int i = 0; views[i]; i++) {
		const command *c = command_lookup(views[i]);
		if (!c || strcmp(c->name, views[i]) || c->replay != REPLAY || !classroom_replays(views[i])) {
			tap_diag("the view '%s' is not replayed", views[i]);
			views_ok = 0;
		}
	}
	tap_ok(views_ok, "the views (attn ... receptive, generate, beam) are replayed");
	for (int i = 0; own[i]; i++) {
		const command *c = command_lookup(own[i]);
		if (!c || strcmp(c->name, own[i]) || c->replay != NO_REPLAY || classroom_replays(own[i])) {
			tap_diag("'%s' is replayed by a follower", own[i]);
			own_ok = 0;
		}
	}
	tap_ok(own_ok, "commands that write, load, train, measure, open a screen or run a class are not");

	/* the line as the teacher typed it: arguments, a unique prefix */
	tap_ok(classroom_replays("attn 1 1") && classroom_replays("experts 2 --load") && classroom_replays("gen 8 --temp 0") &&
	               classroom_replays("recep\t8") && classroom_replays("resid"),
	       "a line with arguments, a tab, or a unique prefix (gen, recep) is read by its command");
	tap_ok(!classroom_replays("export x.png") && !classroom_replays("exp x.png") && !classroom_replays("tra x") &&
	               !classroom_replays("attnx 1 1") && !classroom_replays("") && !classroom_replays(" attn 1 1") &&
	               !classroom_replays("abcdefghijklmnopqrstuvwxyzabcdefghijklmnop 1"),
	       "an ambiguous prefix (exp, tra), an unknown word, an empty line or a word longer than any name is not");

	tap_ok(command_lookup("gen") == command_find("generate") && !command_lookup("e") && !command_lookup("") &&
	               !command_lookup("zzz") && command_lookup("export") && !strcmp(command_lookup("export")->name, "export"),
	       "command_lookup: an exact name before longer ones (export), a unique prefix; ambiguous or unknown: NULL");
	return tap_done();
}
