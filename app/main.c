/* main.c — glassbox's entry point: the command line, the prompt, and script mode.
 *   glassbox                 a prompt (on a terminal) or a script read from stdin
 *   glassbox -c "CMD; CMD"   run commands and exit
 *   glassbox FILE            run a script file and exit
 *   glassbox bench           the benchmarks
 * Scripts print no prompt or banner and stop at the first error with exit status 1. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "app/bench_forward.h"
#include "app/commands.h"
#include "app/complete.h"
#include "model/fileio.h"

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: glassbox [-c \"CMD; CMD ...\" | FILE | bench]\n"
	           "  With no arguments on a terminal, glassbox starts a prompt; 'help' lists the commands.\n"
	           "  Commands on stdin, in FILE or after -c run without a prompt and stop at the first error.\n");
}

/* $XDG_STATE_HOME/glassbox/history (or ~/.local/state/...), creating the folders. */
static int history_path(char *out, size_t n)
{
	const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	char base[1024];
	if (state && *state)
		snprintf(base, sizeof base, "%s", state);
	else if (home && *home)
		snprintf(base, sizeof base, "%s/.local/state", home);
	else
		return -1;
	char dir[1100];
	snprintf(dir, sizeof dir, "%s/glassbox", base);
	char tmp[1100];
	snprintf(tmp, sizeof tmp, "%s", dir);
	for (char *p = tmp + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(tmp, 0700);
			*p = '/';
		}
	mkdir(tmp, 0700);
	snprintf(out, n, "%s/history", dir);
	return 0;
}

static int repl(session *s)
{
	char hist[1200];
	int have_hist = history_path(hist, sizeof hist) == 0;
	if (have_hist)
		read_history(hist);
	complete_install(s);
	printf("glassbox %s — a Transformer you can see through. Type 'help' for the commands.\n", GLASSBOX_VERSION);
	if (!s->loaded)
		printf("No model loaded yet. Try:  init /tmp/demo   then   load /tmp/demo   then   run hello world\n");
	else
		printf("Loaded %s. Try:  run When Mary and John went to the park, John gave a ball to\n"
		       "                 attn 1 1        next        heads\n", s->model.dir);
	for (;;) {
		char *line = readline("glassbox> ");
		if (!line) {
			putchar('\n');
			break;
		}
		if (*line)
			add_history(line);
		int rc = command_line(s, line);
		free(line);
		if (rc > 0)
			break;
	}
	if (have_hist)
		write_history(hist);
	return 0;
}

int main(int argc, char **argv)
{
	session s;
	session_init(&s);
	int rc = 0;
	/* Ctrl-C stops a long command (generate, lesson export) and keeps the session; in scripts
	 * it still ends the program the usual way. */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	if ((argc == 1 && isatty(0) && isatty(1)) || (argc >= 2 && !strcmp(argv[1], "train")))
		sigaction(SIGINT, &sa, NULL);
	if (gb_kernels_env_problem())
		fprintf(stderr, "glassbox: %s\n", gb_kernels_env_problem());
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
	} else if (argc >= 2 && !strcmp(argv[1], "--version")) {
		printf("glassbox %s\n", GLASSBOX_VERSION);
	} else if (argc == 3 && !strcmp(argv[1], "-c")) {
		rc = command_script(&s, argv[2], "-c") ? 1 : 0;
	} else if (argc == 2 && !strcmp(argv[1], "bench")) {
		rc = bench_all(stdout) ? 1 : 0;
	} else if (argc >= 2 && (!strcmp(argv[1], "train") || !strcmp(argv[1], "eval"))) {
		/* glassbox train ... / glassbox eval DIR: the commands with the shell's words. */
		const command *c = command_find(argv[1]);
		rc = c->run(&s, argc - 1, argv + 1, "") ? 1 : 0;
	} else if (argc == 2 && argv[1][0] != '-') {
		gb_err err;
		char *text = gb_read_file(argv[1], 64u << 20, NULL, &err);
		if (!text) {
			fprintf(stderr, "glassbox: %s\n", err.msg);
			rc = 1;
		} else {
			rc = command_script(&s, text, argv[1]) ? 1 : 0;
			free(text);
		}
	} else if (argc == 1) {
		if (isatty(0) && isatty(1)) {
			s.interactive = 1;
			session_load_default(&s);
			rc = repl(&s);
		} else {
			gb_err err;
			char *text = gb_read_file("/dev/stdin", 64u << 20, NULL, &err);
			if (!text) {
				fprintf(stderr, "glassbox: %s\n", err.msg);
				rc = 1;
			} else {
				rc = command_script(&s, text, "stdin") ? 1 : 0;
				free(text);
			}
		}
	} else {
		usage(stderr);
		rc = 2;
	}
	session_free(&s);
	return rc;
}
