#!/bin/sh
# t_man.sh — the man pages the build writes from the tables (build/man): every command of the
# command table has its entry in glassbox(1) with its arguments and its help, every option of
# --help and every environment variable the sources read is there, both pages render through
# man -l with groff's warnings on (-ww) and none appears, glassbox-lesson(5) carries every
# section and line kind of lessons/README.md, and make install(-files) puts them where man finds them.
# The commands come from app/commands.c's source text itself, so a command the generator
# skipped is caught, and the list is the table's, whatever commands others add.
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
G=./glassbox
M1=build/man/glassbox.1
M5=build/man/glassbox-lesson.5
export LC_ALL=C.UTF-8 MANWIDTH=200 MAN_DISABLE_SECCOMP=1
# No hyphenation, no justification: a name or a help line is found whole in the rendering.
export MANROFFOPT="-ww -rHY=0"

if ! command -v man >/dev/null 2>&1 || ! command -v groff >/dev/null 2>&1; then
	echo "1..0 # SKIP man-db or groff not installed (apt-get install man-db groff)"
	exit 0
fi

# The table's names from the source: the entries of `const command commands[]`.
awk '/^const command commands\[\] = \{/ { on = 1; next } on && /^\};/ { on = 0 }
     on && match($0, /^\t\{ "[a-z][a-z0-9-]*", /) { s = substr($0, RSTART + 4); print substr(s, 1, index(s, "\"") - 1) }' \
	app/commands.c >"$T/src"
$G --complete-list commands >"$T/bin"
ok $([ -s "$T/src" ] && cmp -s "$T/src" "$T/bin"; echo $?) "the binary's command table is app/commands.c's ($(wc -l <"$T/src") commands, same order)"

man -l "$M1" >"$T/man1.txt" 2>"$T/man1.err"
ok $? "man -l glassbox.1 renders"
ok $([ ! -s "$T/man1.err" ]; echo $?) "man -l glassbox.1 with groff -ww: no warning$(head -c 300 "$T/man1.err" | tr '\n' ' ')"
preconv "$M1" | groff -ww -man -Tutf8 -z 2>"$T/groff1.err"
ok $([ ! -s "$T/groff1.err" ]; echo $?) "groff -ww -man glassbox.1 directly: no warning"

sed -n '/^COMMANDS$/,/^ENVIRONMENT$/p' "$T/man1.txt" >"$T/cmds.txt"
# Each command: a tagged paragraph "NAME USAGE" at the page's command indent, then its help.
missing=""
while read -r c; do
	# `help CMD`: "NAME USAGE" (wrapped under itself when long), then "  HELP" (two spaces)
	$G -c "help $c" >"$T/h" 2>/dev/null
	usage=$(awk 'NR == 1 { print; next } /^  [^ ]/ { exit } { sub(/^ +/, ""); print }' "$T/h" | tr '\n' ' ' | sed 's/ *$//')
	help=$(grep -m1 '^  [^ ]' "$T/h" | sed 's/^ *//')
	first=$(printf '%s' "$help" | cut -c1 | tr '[:lower:]' '[:upper:]')$(printf '%s' "$help" | cut -c2-)
	words=$(printf '%s' "$first" | cut -d' ' -f1-6) # the help wraps at the terminal's width
	# the tag "NAME USAGE" at the command indent, wrapped over up to four lines when long (set's),
	# then the help: compared with runs of spaces squeezed (man justifies the lines it fills)
	at=$(grep -nE "^       $c( |\$)" "$T/cmds.txt" | head -n 1 | cut -d: -f1)
	entry=$( [ -n "$at" ] && sed -n "${at},$((at + 6))p" "$T/cmds.txt" | tr '\n' ' ' | tr -s ' ')
	if [ -z "$at" ] || ! printf '%s' "$entry" | grep -qF -- " $(printf '%s' "$usage" | tr -s ' ')"; then
		missing="$missing $c(usage)"
	elif ! printf '%s' "$entry" | grep -qF -- "$words"; then
		missing="$missing $c(help)"
	fi
done <"$T/src"
ok $([ -z "$missing" ]; echo $?) "every command of the table has its entry (name, arguments, help) in glassbox(1)${missing:+: missing$missing}"

# the long help, joined into paragraphs: for each command with one, its last line's last words
missing=""
for c in $(cat "$T/src"); do
	$G -c "help $c" >"$T/help" 2>/dev/null
	[ "$(wc -l <"$T/help")" -gt 3 ] || continue
	last=$(tail -n 1 "$T/help" | awk '{ n = NF < 3 ? NF : 3; s = $(NF - n + 1); for (i = NF - n + 2; i <= NF; i++) s = s " " $i; print s }')
	tr '\n' ' ' <"$T/man1.txt" | tr -s ' ' | grep -qF -- "$last" || missing="$missing $c"
done
ok $([ -z "$missing" ]; echo $?) "every long help (help CMD) is in the page too${missing:+: missing in$missing}"

# every option --help lists, in SYNOPSIS and OPTIONS
$G --help >"$T/help.txt"
missing=""
for o in $(sed -n 's/^  \(-[-a-z]*\|[a-z][-a-z]*\).*/\1/p' "$T/help.txt" | tr -d ','); do
	# an alias (-h of --help) is in OPTIONS only, beside its option
	need=2; [ "$o" = -h ] && need=1
	[ "$(grep -c -- "^       $o\( \|,\|$\)\|^       glassbox $o\( \|$\)\|^       -h, $o" "$T/man1.txt")" -ge $need ] || missing="$missing $o"
done
ok $([ -z "$missing" ] && grep -q -- "^  -c " "$T/help.txt"; echo $?) "every option of --help is in SYNOPSIS and OPTIONS${missing:+: missing$missing}"

# every environment variable the program reads (getenv in the sources) is documented
missing=""
# (SOURCE_DATE_EPOCH is the build's: the pages' date)
for v in $(grep -rhoE 'getenv\("[A-Z_]+"\)' app model viz | sed 's/getenv("\(.*\)")/\1/' | grep -vx SOURCE_DATE_EPOCH | sort -u); do
	sed -n '/^ENVIRONMENT/,/^FILES/p' "$T/man1.txt" | grep -q "^       .*\b$v\b" || missing="$missing $v"
done
ok $([ -z "$missing" ]; echo $?) "every variable the sources getenv() is under ENVIRONMENT${missing:+: missing$missing}"

missing=""
for s in NAME SYNOPSIS DESCRIPTION OPTIONS COMMANDS ENVIRONMENT FILES "EXIT STATUS" EXAMPLES "SEE ALSO"; do
	grep -qx "$s" "$T/man1.txt" || missing="$missing '$s'"
done
ok $([ -z "$missing" ]; echo $?) "glassbox(1) has every section${missing:+: missing$missing}"
ok $(grep -q "^GLASSBOX(1) .* User Commands" "$T/man1.txt" && grep -q "glassbox $($G --version | sed -n '1s/glassbox //p')" "$T/man1.txt"; echo $?) \
	"the page's header and footer: GLASSBOX(1), the version"

# glassbox-lesson(5)
man -l "$M5" >"$T/man5.txt" 2>"$T/man5.err"
ok $? "man -l glassbox-lesson.5 renders"
ok $([ ! -s "$T/man5.err" ]; echo $?) "man -l glassbox-lesson.5 with groff -ww: no warning$(head -c 300 "$T/man5.err" | tr '\n' ' ')"
missing=""
for h in $(sed -n 's/^##* \(.*\)/\1/p' lessons/README.md | tr ' ' '_'); do
	h=$(printf '%s' "$h" | tr '_' ' ')
	[ "$h" = Lessons ] && continue
	grep -qix " *$h" "$T/man5.txt" || missing="$missing '$h'"
done
ok $([ -z "$missing" ]; echo $?) "every heading of lessons/README.md is a section of glassbox-lesson(5)${missing:+: missing$missing}"
# the format table: each line kind (its first cell, without the backquotes) tags a paragraph
missing=""
sed -n '/^| line | meaning |/,/^$/p' lessons/README.md | sed -n '3,$p' | sed 's/^| \([^|]*\) |.*/\1/; s/`//g; s/ *$//' >"$T/kinds"
while IFS= read -r k; do
	[ -n "$k" ] || continue
	# a short tag shares its line with the text (.TP)
	grep -qxF "       $k" "$T/man5.txt" || grep -qE "^       $(printf '%s' "$k" | sed 's/[].[*^$/]/\\&/g') +[a-z]" "$T/man5.txt" || missing="$missing '$k'"
done <"$T/kinds"
ok $([ -z "$missing" ] && [ "$(wc -l <"$T/kinds")" -ge 15 ]; echo $?) "every line kind of the format table ($(wc -l <"$T/kinds")) is in glassbox-lesson(5)${missing:+: missing$missing}"
ok $(grep -qF "    = word 1 2: generate 1 --top-k 1" "$T/man5.txt"; echo $?) "an indented example stays as written (no filling)"

# make install-files (install's recipe on the built files: another PREFIX rebuilds nothing):
# where man finds them
make install-files PREFIX=/opt/gb DESTDIR="$T/root" >/dev/null 2>&1
ok $? "make install-files PREFIX=/opt/gb DESTDIR=..."
ok $(cmp -s "$M1" "$T/root/opt/gb/share/man/man1/glassbox.1" && cmp -s "$M5" "$T/root/opt/gb/share/man/man5/glassbox-lesson.5"; echo $?) \
	"the pages are installed under share/man/man1 and man5"
ok $([ "$(man -M "$T/root/opt/gb/share/man" -w glassbox)" = "$T/root/opt/gb/share/man/man1/glassbox.1" ] &&
	[ "$(man -M "$T/root/opt/gb/share/man" -w 5 glassbox-lesson)" = "$T/root/opt/gb/share/man/man5/glassbox-lesson.5" ]; echo $?) \
	"man finds both in the installed tree (man -M PREFIX/share/man glassbox)"
ok $(grep -q "man glassbox" README.md; echo $?) "README says where the manual is"

echo "1..$n"
exit $((fails > 0))
