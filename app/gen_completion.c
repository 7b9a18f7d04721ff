/* gen_completion.c — the shell completion files (see gen.h), written from the command table
 * and the options: glassbox's options (with their help in zsh and fish); inside the string
 * after -c (and after train, eval, bench, export-model), the command being typed (the text
 * after the last ';') with each command's one-line help, then its arguments. Those the program
 * itself offers at Tab time (glassbox --complete-list line TEXT: the prompt's own completer,
 * so "set engine <Tab>" offers the engines and "lesson <Tab>" the lessons installed now); the
 * shell adds folders where the usage takes a DIR and files where it takes a FILE. */
#include "app/gen.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "app/cli.h"
#include "app/commands.h"

/* What the shell adds to a command's first argument, from its usage: folders (DIR), files
 * (FILE), or nothing (the words after an option are the program's to offer). */
static const char *usage_kind(const char *usage)
{
	char u[512], *save = NULL;
	snprintf(u, sizeof u, "%s", usage);
	for (char *p = u; *p; p++)
		if (*p == '[' || *p == ']')
			*p = ' ';
	for (char *w = strtok_r(u, " ", &save), *prev = NULL; w; prev = w, w = strtok_r(NULL, " ", &save)) {
		if (w[0] == '-' || (prev && prev[0] == '-' && prev[1] == '-'))
			continue;
		return strstr(w, "DIR") ? "dirs" : strstr(w, "FILE") ? "files" : "";
	}
	return "";
}

/* A help line inside single quotes (bash, zsh) or double quotes (fish). */
static void quoted(const char *s, char q)
{
	for (; *s; s++) {
		if (*s == '\'' && q == '\'')
			fputs("'\\''", stdout);
		else if (q == '"' && strchr("\"$\\", *s))
			printf("\\%c", *s);
		else if (q == ':' && *s == ':')
			fputs("\\:", stdout);
		else
			putchar(*s);
	}
}

static void options_line(void)
{
	for (const cli_option *o = cli_options; o->word; o++) {
		if (*o->word && strcmp(o->word, "FILE"))
			printf(" %s", o->word);
		if (o->alias)
			printf(" %s", o->alias);
	}
}

/* The case arms giving each command's kind (sh syntax; the commands with nothing to add are left
 * out). */
static void case_arms(const char *var_kind)
{
	for (const command *c = commands; c->name; c++)
		if (*usage_kind(c->usage))
			printf("\t%s) %s=%s ;;\n", c->name, var_kind, usage_kind(c->usage));
}

static void bash(void)
{
	printf("# bash completion for glassbox(1). Written by 'glassbox --gen-completion bash' from its\n"
	       "# command table (app/commands.c) and options (app/cli.c); do not edit.\n\n");
	printf("# The candidates for the last word of a command line $1 (one command, or a script whose\n"
	       "# last command, after the last ';', is being typed), one a line.\n"
	       "_glassbox_line() {\n"
	       "\tlocal seg=${1##*;} w kind=\n"
	       "\tseg=${seg#\"${seg%%%%[![:space:]]*}\"}\n"
	       "\tw=${seg##*[[:space:]]}\n"
	       "\t\"${_gb_prog:-glassbox}\" --complete-list line \"$1\" 2>/dev/null\n"
	       "\tlocal prev=${seg%%[[:space:]]*}\n"
	       "\tprev=${prev##*[[:space:]]}\n"
	       "\t[[ $seg == *[[:space:]]* && $w != -* && $prev != -* ]] || return 0\n"
	       "\tcase ${seg%%%%[[:space:]]*} in\n");
	case_arms("kind");
	printf("\tesac\n"
	       "\tcase $kind in\n"
	       "\tdirs) compgen -d -- \"$w\" ;;\n"
	       "\tfiles) compgen -f -- \"$w\" ;;\n"
	       "\tesac\n"
	       "\treturn 0\n}\n\n");
	printf("_glassbox() {\n"
	       "\tlocal cur=${COMP_WORDS[COMP_CWORD]} _gb_prog=${COMP_WORDS[0]} c\n"
	       "\tCOMPREPLY=()\n"
	       "\tif ((COMP_CWORD == 1)); then\n"
	       "\t\tmapfile -t COMPREPLY < <(compgen -W '");
	options_line();
	printf(" ' -- \"$cur\"; compgen -f -- \"$cur\")\n"
	       "\t\treturn\n"
	       "\tfi\n"
	       "\tcase ${COMP_WORDS[1]} in\n"
	       "\t-c)\n"
	       "\t\t((COMP_CWORD == 2)) || return\n"
	       "\t\t# Inside the quoted string readline completes the whole text after the quote: each\n"
	       "\t\t# candidate is that text with its last word completed.\n"
	       "\t\tlocal line=${cur#[\\\"\\']} w\n"
	       "\t\tw=${line##*[[:space:];]}\n"
	       "\t\twhile IFS= read -r c; do COMPREPLY+=(\"${line%%\"$w\"}$c\"); done < <(_glassbox_line \"$line\")\n"
	       "\t\t[[ $line == \"$cur\" ]] || compopt -o nospace 2>/dev/null\n"
	       "\t\t;;\n"
	       "\tbench | train | eval | export-model)\n"
	       "\t\tmapfile -t COMPREPLY < <(_glassbox_line \"${COMP_WORDS[*]:1:COMP_CWORD}\")\n"
	       "\t\t;;\n"
	       "\tesac\n}\n"
	       "complete -F _glassbox glassbox\n");
}

static void zsh(void)
{
	printf("#compdef glassbox\n"
	       "# zsh completion for glassbox(1). Written by 'glassbox --gen-completion zsh' from its\n"
	       "# command table (app/commands.c) and options (app/cli.c); do not edit.\n\n");
	printf("# The command being typed: after the last ';' of -c's string (line: the words before it),\n"
	       "# or the arguments of train, eval, ... (line: those words).\n"
	       "_glassbox_line() {\n"
	       "\tlocal -a cmds gbw\n"
	       "\tlocal line=$1 kind cmd\n"
	       "\tcmds=(\n");
	for (const command *c = commands; c->name; c++) {
		printf("\t\t'");
		quoted(c->name, ':');
		putchar(':');
		quoted(c->help, '\'');
		printf("'\n");
	}
	printf("\t)\n"
	       "\tif [[ -z $line ]]; then\n"
	       "\t\tcompset -P '*;[[:space:]]#'\n"
	       "\t\tif [[ $PREFIX != *[[:space:]]* ]]; then\n"
	       "\t\t\t_describe -t commands 'glassbox command' cmds\n"
	       "\t\t\treturn\n"
	       "\t\tfi\n"
	       "\t\tline=${PREFIX%%${PREFIX##*[[:space:]]}}\n"
	       "\t\tcompset -P '*[[:space:]]'\n"
	       "\tfi\n"
	       "\tgbw=(${(f)\"$($_gb_prog --complete-list line \"$line$PREFIX\" 2>/dev/null)\"})\n"
	       "\tcompadd -a gbw\n"
	       "\tcmd=${${line## #}%%%% *}\n"
	       "\tcase $cmd in\n");
	case_arms("kind");
	printf("\tesac\n"
	       "\tcase $kind in\n"
	       "\tdirs) _files -/ ;;\n"
	       "\tfiles) _files ;;\n"
	       "\tesac\n}\n\n");
	printf("_glassbox() {\n"
	       "\tlocal _gb_prog=${words[1]}\n"
	       "\tif (( CURRENT == 2 )); then\n"
	       "\t\tlocal -a opts\n"
	       "\t\topts=(\n");
	for (const cli_option *o = cli_options; o->word; o++) {
		if (!*o->word || !strcmp(o->word, "FILE"))
			continue;
		for (int k = 0; k < 2; k++) {
			const char *w = k ? o->alias : o->word;
			if (!w)
				continue;
			printf("\t\t\t'");
			quoted(w, ':');
			putchar(':');
			quoted(o->help, '\'');
			printf("'\n");
		}
	}
	printf("\t\t)\n"
	       "\t\t_describe -t options 'glassbox option' opts\n"
	       "\t\t_files\n"
	       "\t\treturn\n"
	       "\tfi\n"
	       "\tcase $words[2] in\n"
	       "\t-c) (( CURRENT == 3 )) && _glassbox_line ;;\n"
	       "\tbench|train|eval|export-model) _glassbox_line \"${(j: :)words[2,CURRENT-1]} \" ;;\n"
	       "\tesac\n}\n\n"
	       "_glassbox \"$@\"\n");
}

static void fish(void)
{
	printf("# fish completion for glassbox(1). Written by 'glassbox --gen-completion fish' from its\n"
	       "# command table (app/commands.c) and options (app/cli.c); do not edit.\n\n");
	printf("# The candidates for the token being typed after -c (a whole script: its last command is\n"
	       "# completed, each candidate the token with its last word completed) or after train, eval,\n"
	       "# bench, export-model.\n"
	       "function __glassbox_line\n"
	       "\tset -l words (commandline -opc)\n"
	       "\tset -l tok (commandline -ct | string replace -r '^[\"\\']' '')\n"
	       "\tset -l line $tok\n"
	       "\tset -l keep\n"
	       "\tset -l w (string replace -r '^.*[\\s;]' '' -- $tok)\n"
	       "\tif test \"$words[2]\" = -c\n"
	       "\t\tset keep (string sub -l (math (string length -- \"$tok\") - (string length -- \"$w\")) -- $tok)\n"
	       "\telse\n"
	       "\t\tset line (string join ' ' -- $words[2..-1] $tok)\n"
	       "\tend\n"
	       "\tset -l seg (string replace -r '^.*;' '' -- $line | string trim -l)\n"
	       "\tif not string match -qr '\\s' -- $seg\n");
	for (const command *c = commands; c->name; c++) {
		printf("\t\tstring match -q -- \"$w*\" ");
		quoted(c->name, '"');
		printf("; and printf '%%s\\t%%s\\n' \"$keep\"");
		quoted(c->name, '"');
		printf(" \"");
		quoted(c->help, '"');
		printf("\"\n");
	}
	printf("\t\treturn\n"
	       "\tend\n"
	       "\tfor c in ($words[1] --complete-list line \"$line\" 2>/dev/null)\n"
	       "\t\tprintf '%%s\\n' \"$keep$c\"\n"
	       "\tend\n"
	       "\tstring match -q -- '-*' $w; and return\n"
	       "\tswitch (string replace -r '\\s.*' '' -- $seg)\n");
	for (const command *c = commands; c->name; c++)
		if (*usage_kind(c->usage))
			printf("\tcase %s\n\t\tfor c in (%s $w)\n\t\t\tprintf '%%s\\n' \"$keep$c\"\n\t\tend\n", c->name,
			       !strcmp(usage_kind(c->usage), "dirs") ? "__fish_complete_directories" : "__fish_complete_path");
	printf("\tend\n"
	       "end\n\n");
	printf("complete -c glassbox -f\n");
	for (const cli_option *o = cli_options; o->word; o++) {
		if (!*o->word || !strcmp(o->word, "FILE"))
			continue;
		const char *w = o->word;
		printf("complete -c glassbox -n '__fish_is_first_token' ");
		if (w[0] == '-' && w[1] == '-')
			printf("-l %s", w + 2);
		else if (w[0] == '-')
			printf("-s %s", w + 1);
		else
			printf("-a %s", w);
		if (o->alias)
			printf(" -s %s", o->alias + 1);
		printf(" -d \"");
		quoted(o->help, '"');
		printf("\"%s\n", !strcmp(w, "-c") ? " -x -a '(__glassbox_line)'" : "");
	}
	printf("complete -c glassbox -n '__fish_is_first_token' -F\n");
	printf("complete -c glassbox -n 'not __fish_is_first_token; and __fish_seen_subcommand_from bench train eval export-model' -x -a '(__glassbox_line)'\n");
}

int gen_completion(const char *shell)
{
	if (!strcmp(shell, "bash"))
		bash();
	else if (!strcmp(shell, "zsh"))
		zsh();
	else if (!strcmp(shell, "fish"))
		fish();
	else {
		fprintf(stderr, "glassbox: --gen-completion takes bash, zsh or fish (got '%s')\n", shell);
		return -1;
	}
	return 0;
}
