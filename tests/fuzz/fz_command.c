/* fz_command.c — one command line as the prompt and scripts run it (command_line): the
 * splitting into words (quotes), the command table's prefix matching, and each command's own
 * argument parsing, on a session with tiny-lm loaded and a text run.
 *
 * What runs comes from the command table (app/commands.c): a REPLAY command only reads the
 * session's run and model and draws, with bounded work, so it is fuzzed, and a command added
 * to the table as REPLAY is fuzzed without a change here. A NO_REPLAY command (it writes
 * files, loads, changes the settings, trains, measures, opens a screen or a class) is skipped
 * unless `runs` below says why it is harmless here. Every exception is listed with its reason,
 * and LLVMFuzzerInitialize refuses to start (so t_fuzz_replay.sh fails in `make check`) when a
 * NO_REPLAY command is in neither list or a list names a command the table no longer has. */
#include <ctype.h>

#include "tests/fuzz/fuzz.h"
#include "app/commands.h"
#include "app/session.h"

struct reason {
	const char *name, *why;
};

/* NO_REPLAY commands that are harmless here: run. */
static const struct reason runs[] = {
	{ "help", "prints the table's help" },
	{ "models", "lists the shipped models" },
	{ "compare-models", "loads two models beside the session's, draws one view, keeps the session's" },
	{ "curves", "reads a folder's loss.csv and draws it" },
	{ "tally", "draws the class's answers: there is no class here" },
	{ "answer", "answers a teacher: there is no class here, an error" },
	{ "quit", "returns 1 to its caller; the session is unchanged" },
	{ NULL, NULL },
};

/* Commands not run, REPLAY or not, and why. Their first word is read as command_line would
 * and the input is dropped. */
static const struct reason skips[] = {
	{ "load", "replaces the model every later input runs on" },
	{ "set", "changes the settings every later input runs with" },
	{ "init", "writes a model folder" },
	{ "export", "writes files" },
	{ "export-model", "writes files" },
	{ "dump", "writes files" },
	{ "window", "opens a window" },
	{ "tui", "takes the terminal over" },
	{ "lesson", "runs a lesson, waiting for keys (fz_lesson fuzzes lesson files)" },
	{ "teach", "listens on a port and waits for students" },
	{ "follow", "connects to a teacher over the network" },
	{ "doctor", "probes the terminal and opens a window when a display answers" },
	{ "train", "trains for minutes and writes a model folder" },
	{ "eval", "runs a model's probes on held-out data: seconds" },
	{ "bench", "measures the machine: seconds" },
	{ "cost", "measures attention's time against the length: seconds" },
	{ "generate", "REPLAY, but up to the context's 128 forward passes an input: the rate would fall" },
	{ "beam", "REPLAY, but up to 64 beams over the context: seconds an input" },
	{ NULL, NULL },
};

static session s;
static signed char *run_it; /* per table entry: 1 run, 0 skip */

static const struct reason *listed(const struct reason *list, const char *name)
{
	for (; list->name; list++)
		if (!strcmp(list->name, name))
			return list;
	return NULL;
}

/* Every command of the table is run or skipped for a stated reason, and every name listed is
 * in the table. FZ_COMMAND_FORGET=NAME drops NAME from both lists: t_fuzz_replay.sh checks
 * with it that a command nobody decided on is caught. Returns the number of problems. */
static int decide(void)
{
	const char *forget = getenv("FZ_COMMAND_FORGET");
	int n = 0, bad = 0;
	while (commands[n].name)
		n++;
	run_it = calloc((size_t)n, 1);
	if (!run_it)
		abort();
	for (int i = 0; i < n; i++) {
		const command *c = &commands[i];
		int forgot = forget && !strcmp(forget, c->name);
		const struct reason *r = forgot ? NULL : listed(runs, c->name), *k = forgot ? NULL : listed(skips, c->name);
		if (r && k) {
			fprintf(stderr, "fz_command: '%s' is both run and skipped\n", c->name);
			bad++;
		} else if (c->replay == REPLAY)
			run_it[i] = !k;
		else if (r || k)
			run_it[i] = r != NULL;
		else {
			fprintf(stderr, "fz_command: the command table's '%s' is NO_REPLAY and neither run nor skipped "
			                "for a stated reason: add it to runs[] or skips[] in tests/fuzz/fz_command.c\n",
			        c->name);
			bad++;
		}
		if (c->replay == REPLAY && r) {
			fprintf(stderr, "fz_command: '%s' is REPLAY (run anyway) and listed in runs[]\n", c->name);
			bad++;
		}
	}
	const struct reason *lists[2] = { runs, skips };
	for (int l = 0; l < 2; l++)
		for (const struct reason *r = lists[l]; r->name; r++)
			if (!command_lookup(r->name) || strcmp(command_lookup(r->name)->name, r->name)) {
				fprintf(stderr, "fz_command: '%s' is listed but the command table has no such command\n", r->name);
				bad++;
			}
	return bad;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char cwd[1024], line[1200];
	if (decide())
		exit(1);
	session_init(&s);
	if (!getcwd(cwd, sizeof cwd))
		abort();
	snprintf(line, sizeof line, "load %s/assets/models/tiny-lm", cwd);
	if (command_line(&s, line) || command_line(&s, "run When Mary and John went to the park, John gave"))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	char *text = fz_text(data, n), *nl = strchr(text, '\n'), word[64];
	if (nl)
		*nl = 0; /* one line: command_script splits lines and ';' before this */
	/* the first word as split_words reads it: a quote groups only when it opens the word, and
	 * the word goes on after the group closes ("ex"port is export) */
	const char *p = text, *start;
	size_t k = 0;
	while (isspace((unsigned char)*p))
		p++;
	start = p;
	while (*p && !isspace((unsigned char)*p) && k + 1 < sizeof word) {
		if ((*p == '"' || *p == '\'') && p == start && strchr(p + 1, *p)) {
			char q = *p++;
			while (*p && *p != q && k + 1 < sizeof word)
				word[k++] = *p++;
			if (*p == q)
				p++;
		} else
			word[k++] = *p++;
	}
	word[k] = 0;
	/* the command it names, as command_line finds it (an unknown or ambiguous word is only an
	 * error there, and so it runs) */
	const command *c = k ? command_lookup(word) : NULL;
	if (!c || run_it[c - commands])
		command_line(&s, text);
	free(text);
	return 0;
}
