/* main.c — glassbox's entry point: the command line, the prompt, and script mode.
 *   glassbox                 a prompt (on a terminal) or a script read from stdin
 *   glassbox -c "CMD; CMD"   run commands and exit
 *   glassbox FILE            run a script file and exit
 *   glassbox --teach / --follow HOST:PORT --code C   a class (app/classroom.h)
 *   glassbox bench [...]     the benchmarks (bench decode DIR: decoding speed)
 * Scripts print no prompt or banner and stop at the first error with exit status 1. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "app/bench_forward.h"
#include "app/classroom.h"
#include "app/cli.h"
#include "app/commands.h"
#include "app/complete.h"
#include "app/gen.h"
#include "app/session.h"
#include "app/textout.h"
#include "app/tui.h"
#include "model/fileio.h"

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
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

static session *repl_session;
static int repl_done;

/* readline calls this with each finished line (NULL at end of input). */
static void on_line(char *line)
{
	if (!line) {
		putchar('\n');
		repl_done = 1;
		return;
	}
	if (*line)
		add_history(line);
	if (command_line(repl_session, line) > 0)
		repl_done = 1;
	free(line);
}

/* The prompt and the window share one loop: readline's callback interface reads the
 * terminal a character at a time when poll says there is one, and between characters (every
 * 16 ms while the window is open) the window's events are handled, so it repaints and takes
 * keys while the prompt waits. */
static int repl(session *s)
{
	char hist[1200];
	int have_hist = history_path(hist, sizeof hist) == 0;
	if (have_hist)
		read_history(hist);
	complete_install(s);
	char banner[256]; /* wrapped at the terminal's width, never in a word */
	snprintf(banner, sizeof banner, "glassbox %s — a Transformer you can see through. Type 'help' for the commands.",
	         GLASSBOX_VERSION);
	text_wrap(stdout, banner, text_width(), 0, 0);
	if (!s->loaded)
		printf("No model loaded yet. Try:\n  init /tmp/demo   then   load /tmp/demo   then   run hello world\n");
	else
		printf("Loaded %s. Try:\n  run When Mary and John went to the park, John gave a ball to\n"
		       "  attn 1 1        next        heads\n", s->model.dir);
	repl_session = s;
	rl_callback_handler_install("glassbox> ", on_line);
	classroom_prompt(1);
	while (!repl_done) {
		/* a class's sockets are served in the same wait (classroom.h) */
		int r = classroom_wait(s, 0, s->win ? 16 : -1);
		if (r > 0) {
			rl_callback_read_char();
		} else if (r < 0 && interrupted) {
			/* Ctrl-C at the prompt abandons the line being typed, as a shell does. */
			interrupted = 0;
			rl_free_line_state();
			rl_callback_sigcleanup();
			rl_replace_line("", 0);
			printf("\n");
			rl_on_new_line();
			rl_redisplay();
		}
		if (s->win)
			window_pump(s);
	}
	classroom_prompt(0);
	rl_callback_handler_remove();
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
	if (((argc == 1 || (argc == 2 && !strcmp(argv[1], "--tui")) ||
	      (argc >= 2 && (!strcmp(argv[1], "--follow") || !strcmp(argv[1], "--teach")))) && isatty(0) && isatty(1)) ||
	    (argc >= 2 && !strcmp(argv[1], "train")))
		sigaction(SIGINT, &sa, NULL);
	if (gb_kernels_env_problem())
		fprintf(stderr, "glassbox: %s\n", gb_kernels_env_problem());
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		cli_help(stdout);
	} else if (argc >= 2 && !strcmp(argv[1], "--version")) {
		cli_version(stdout);
	} else if (argc >= 2 && !strncmp(argv[1], "--gen-", 6)) {
		rc = gen_main(argc - 1, argv + 1) ? 1 : 0; /* the build's man pages and completions */
	} else if (argc >= 2 && !strcmp(argv[1], "--complete-list")) {
		rc = gen_complete_list(argc - 1, argv + 1) ? 1 : 0; /* for the shell completions */
	} else if (argc == 2 && !strcmp(argv[1], "--tui")) {
		s.interactive = 1;
		session_load_default(&s);
		rc = tui_run(&s) < 0 ? 1 : 0;
	} else if (argc >= 2 && !strcmp(argv[1], "--follow")) {
		/* a student: the prompt (or --print's state lines) on the teacher's view */
		rc = classroom_follow_main(&s, argc, argv);
		if (rc < 0)
			rc = repl(&s);
	} else if (argc >= 2 && !strcmp(argv[1], "--teach")) {
		/* the teacher: `teach` with these options, then the prompt (or a script on stdin) */
		char line[600] = "teach";
		for (int i = 2; i < argc; i++)
			snprintf(line + strlen(line), sizeof line - strlen(line), " '%s'", argv[i]);
		s.interactive = isatty(0) && isatty(1);
		session_load_default(&s);
		rc = command_line(&s, line) ? 1 : s.interactive ? repl(&s) : 0;
		if (!rc && !s.interactive) {
			gb_err err;
			char *text = gb_read_file("/dev/stdin", 64u << 20, NULL, &err);
			rc = !text || command_script(&s, text, "stdin") ? 1 : 0;
			free(text);
		}
	} else if (argc == 3 && !strcmp(argv[1], "-c")) {
		rc = command_script(&s, argv[2], "-c") ? 1 : 0;
	} else if (argc >= 2 && !strcmp(argv[1], "bench")) {
		rc = bench_main(stdout, argc - 2, argv + 2) ? 1 : 0;
	} else if (argc >= 2 && (!strcmp(argv[1], "train") || !strcmp(argv[1], "eval") ||
	                         !strcmp(argv[1], "export-model") || !strcmp(argv[1], "doctor"))) {
		/* glassbox train ... / eval DIR / export-model ... / doctor: the commands
		 * with the shell's words. */
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
		fprintf(stderr, "glassbox: unknown option '%s' (glassbox --help lists the options)\n", argv[1]);
		rc = 2;
	}
	classroom_end(&s);
	session_free(&s);
	return rc;
}
