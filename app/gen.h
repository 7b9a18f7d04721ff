/* gen.h — the build's generated files, written by the program itself from the tables it runs
 * on, so they cannot drift from it: the man pages (glassbox.1 from the command table and the
 * options, glassbox-lesson.5 from lessons/README.md) and the bash, zsh and fish completions.
 * Hidden options of the binary; the Makefile runs them into build/ (README: "man glassbox").
 *
 *   glassbox --gen-man 1                     glassbox(1) on stdout
 *   glassbox --gen-man 5 lessons/README.md   glassbox-lesson(5) from the lesson format's text
 *   glassbox --gen-completion bash|zsh|fish  a completion file for that shell
 *   glassbox --complete-list line TEXT       the completions of TEXT's last word (TEXT: a
 *                                            command line or a script), one a line, as the
 *                                            prompt's Tab finds them, with lesson numbers and
 *                                            names and model names where the command takes one
 *   glassbox --complete-list lessons|models|commands   those words alone */
#ifndef GLASSBOX_GEN_H
#define GLASSBOX_GEN_H

/* argv[0] is "--gen-man" or "--gen-completion". 0, or -1 after a one-line error on stderr. */
int gen_main(int argc, char **argv);

/* argv[0] is "--complete-list". 0, or -1 after a one-line error. */
int gen_complete_list(int argc, char **argv);

/* gen_completion.c: the completion file for shell ("bash", "zsh", "fish") on stdout. */
int gen_completion(const char *shell);

#endif
