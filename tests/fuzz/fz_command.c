/* fz_command.c — one command line as the prompt and scripts run it (command_line): the
 * splitting into words (quotes), the command table's prefix matching, and each command's own
 * argument parsing, on a session with tiny-lm loaded and a text run. Commands that open a
 * screen or window, write files, train or run long (listed below) are not run: their first
 * word is read as command_line would and the input is dropped. */
#include <ctype.h>

#include "tests/fuzz/fuzz.h"
#include "app/commands.h"
#include "app/session.h"

static const char *const skipped[] = { "tui", "window", "lesson", "bench", "train", "eval", "curves", "init",
	                                   "export", "export-model", "dump", "generate", "beam", "translate",
	                                   "quit", "load", "set", "tour", NULL };

static session s;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char cwd[1024], line[1200];
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
	/* the first word as split_words reads it: a quote opens a group only at its start */
	const char *p = text;
	size_t k = 0;
	while (isspace((unsigned char)*p))
		p++;
	if ((*p == '"' || *p == '\'') && strchr(p + 1, *p)) {
		char q = *p++;
		while (*p && *p != q && k + 1 < sizeof word)
			word[k++] = *p++;
	} else
		while (*p && !isspace((unsigned char)*p) && k + 1 < sizeof word)
			word[k++] = *p++;
	word[k] = 0;
	int run = 1;
	for (int i = 0; skipped[i]; i++)
		if (k && !strncmp(skipped[i], word, k))
			run = 0;
	if (run)
		command_line(&s, text);
	free(text);
	return 0;
}
