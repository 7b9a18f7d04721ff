/* cli.c — see cli.h. Feature facts come from the modules that own them (gb_window_available,
 * gb_kernels_by_name), never from a second #if here. */
#include "app/cli.h"

#include <string.h>

#include "model/kernels/kernels.h"
#include "viz/window.h"

const cli_option cli_options[] = {
	{ "", NULL, "", "a prompt on a terminal; without one, commands read from stdin",
	  "At the prompt 'help' lists the commands and Tab completes them. From a pipe, the commands\n"
	  "run as a script: no prompt, no banner, and the first error ends it with status 1." },
	{ "-c", NULL, "\"CMD; CMD ...\"", "run commands (separated by ';' or newlines) and exit",
	  "Stops at the first error with status 1; its message names the command by its position.\n"
	  "Without a 'load', the commands run on the shipped model tiny-lm, as the prompt does." },
	{ "FILE", NULL, "", "run a script file (one command per line, # comments) and exit", "" },
	{ "--tui", NULL, "", "the full-screen explorer ('?' lists its keys)", "" },
	{ "--teach", NULL, "[--port N] [--code C] [--wait N]", "teach a class: print the join line, then the prompt",
	  "Students on the local network run the join line it prints and follow your screen: the\n"
	  "figure, the lesson step, the cursor and the text. Only commands and view state travel; each\n"
	  "student's copy of glassbox computes on its own copy of the model. --port 0 picks a free port.\n"
	  "With a script on stdin, --wait N starts it when N students follow." },
	{ "--follow", NULL, "HOST:PORT --code C [--name N] [--model DIR] [--print]",
	  "follow a teacher's class (the join line the teacher's glassbox prints)",
	  "Any command of your own leaves the teacher's view to explore; 'follow' comes back to it.\n"
	  "--model DIR names your copy of the teacher's model when it is not a shipped one; --print\n"
	  "prints one line per change of the teacher's state instead of drawing it (for scripts)." },
	{ "doctor", NULL, "", "what this machine can show: terminal, window, fonts, models, lessons, kernels",
	  "One line per check, each with its fix. Exit status 1 when something a lesson needs is missing." },
	{ "bench", NULL, "[kernels|matvec|forward|decode ...]", "the benchmarks (the command bench below)", "" },
	{ "train", NULL, "ARGS", "train a model (the command train below)", "" },
	{ "eval", NULL, "DIR [--preset NAME]", "measure a trained model's probes (the command eval below)", "" },
	{ "export-model", NULL, "ARGS", "write a llama2.c checkpoint (the command export-model below)", "" },
	{ "--help", "-h", "", "this list of options, then exit", "" },
	{ "--version", NULL, "", "the version and what this build has (window, kernel tables), then exit", "" },
	{ NULL, NULL, NULL, NULL, NULL },
};

void cli_help(FILE *f)
{
	fprintf(f, "usage: glassbox [OPTION | FILE]\n"
	           "glassbox shows a small Transformer's internals, stage by stage.\n\n");
	for (const cli_option *o = cli_options; o->word; o++) {
		char head[128];
		snprintf(head, sizeof head, "%s%s%s%s%s", o->alias ? o->alias : "", o->alias ? ", " : "",
		         *o->word ? o->word : "(nothing)", *o->args ? " " : "", o->args);
		if (strlen(head) > 26)
			fprintf(f, "  %s\n  %-26s %s\n", head, "", o->help);
		else
			fprintf(f, "  %-26s %s\n", head, o->help);
	}
	fprintf(f, "\nThe commands (at the prompt, after -c, in a FILE): glassbox -c help, or 'help CMD'.\n"
	           "Environment: NO_COLOR, TERM, COLORTERM, GLASSBOX_KERNELS, GLASSBOX_WEIGHTS, GLASSBOX_FONT,\n"
	           "GLASSBOX_TRACE_BUDGET, XDG_DATA_HOME, XDG_STATE_HOME. Everything: man glassbox.\n");
}

void cli_version(FILE *f)
{
	fprintf(f, "glassbox %s\n", GLASSBOX_VERSION);
	fprintf(f, "window (SDL2): %s\n", gb_window_available() ? "on" : "off (built without SDL2)");
	/* The tables this build has: the reference and the scalar path always; the SIMD ones are
	 * built on x86-64 and used when this CPU has the instructions. */
	fprintf(f, "kernel tables: ref scalar");
#if defined(__x86_64__)
	fprintf(f, " avx2 avx512");
#endif
	fprintf(f, "; on this CPU:");
	static const char *names[] = { "ref", "scalar", "avx2", "avx512" };
	for (int i = 0; i < 4; i++)
		if (gb_kernels_by_name(names[i]))
			fprintf(f, " %s", names[i]);
	fprintf(f, "; fast = %s, %d threads\n", gb_kernels_fast()->name, gb_kernels_threads());
	fprintf(f, "figures: terminal, PNG, SVG, PDF (cairo), CSV, NPY\n");
}
