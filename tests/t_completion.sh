#!/bin/sh
# t_completion.sh — the shell completions the build writes (build/completion): the bash file
# sourced and its function called as bash calls it (COMP_WORDS, COMP_CWORD), for every command
# of the table (iterated, not a list: commands others add are covered) and for the arguments
# the program offers (a setting's values, lesson numbers and names, shipped and gallery models,
# layers of the default model, an option's values); fish through its own `complete -C`; zsh's
# file parsed by zsh. Expected values come from the sources (the table's usage, the lessons
# folder, tiny-lm's config.json), not from the completion code.
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
G=./glassbox
B=build/completion
# a private gallery, so the user's own models never change a result
export XDG_DATA_HOME="$T/data" HOME="$T/home"
mkdir -p "$T/data/glassbox/models/my-model" "$T/home" "$T/data/glassbox/models/not-a-model"
echo '{}' >"$T/data/glassbox/models/my-model/config.json"
: >"$T/data/glassbox/models/stories15M.bin"

if ! command -v bash >/dev/null 2>&1; then
	echo "1..0 # SKIP bash not installed"
	exit 0
fi
# comp WORD...: what the bash completion offers for the command line WORD... (the last word is
# the one being completed), one a line, sorted
comp() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _glassbox
		printf "%s\n" "${COMPREPLY[@]}"' comp "$B/glassbox.bash" "$@" | sort
}
PATH="$PWD:$PATH"
export PATH

ok $(bash -n "$B/glassbox.bash"; echo $?) "the bash file parses"
ok $(bash -c ". $B/glassbox.bash; complete -p glassbox" 2>/dev/null | grep -q -- "-F _glassbox glassbox"; echo $?) \
	"sourcing it registers _glassbox for glassbox"

# every command of the table: its whole name completes inside -c's string, and a unique prefix
# of it completes to it alone (or to its name among the names it begins)
awk '/^const command commands\[\] = \{/ { on = 1; next } on && /^\};/ { on = 0 }
     on && match($0, /^\t\{ "[a-z][a-z0-9-]*", /) { s = substr($0, RSTART + 4); print substr(s, 1, index(s, "\"") - 1) }' \
	app/commands.c >"$T/cmds"
missing=""
while read -r c; do
	comp glassbox -c "\"$c" | grep -qx "$c" || missing="$missing $c"
	comp glassbox -c "\"run hello; $c" | grep -qxF "run hello; $c" || missing="$missing $c(after ;)"
done <"$T/cmds"
ok $([ -z "$missing" ] && [ "$(wc -l <"$T/cmds")" -ge 40 ]; echo $?) \
	"every command of the table ($(wc -l <"$T/cmds")) completes after -c, alone and after a ';'${missing:+: missing$missing}"
# the completions of an empty command are exactly the table
comp glassbox -c '"' >"$T/all"
ok $(sort "$T/cmds" | cmp -s - "$T/all"; echo $?) "-c \" offers exactly the table's commands"
ok $([ "$(comp glassbox -c '"run the cat; at')" = "run the cat; attn" ]; echo $?) \
	"a script's last command completes, what comes before it kept"

# the options, from --help
comp glassbox - >"$T/opts"
missing=""
for o in -c --tui --help -h --version; do grep -qx -- "$o" "$T/opts" || missing="$missing $o"; done
ok $([ -z "$missing" ]; echo $?) "the first word offers the options${missing:+: missing$missing}"
ok $([ "$(comp glassbox --v)" = --version ] && [ "$(comp glassbox doc)" = doctor ]; echo $?) "--v completes to --version, doc to doctor"

# arguments: set engine's values are the usage's (engine ref|fast|scalar|avx2|avx512)
want=$(sed -n 's/.*{ "set", "engine \([a-z0-9|]*\) .*/\1/p' app/commands.c | tr '|' '\n' | sed 's/^/set engine /' | sort)
ok $([ -n "$want" ] && [ "$(comp glassbox -c '"set engine ')" = "$want" ]; echo $?) \
	"set engine offers the engines of the table's usage, and nothing else"
ok $(comp glassbox -c '"set ' | grep -qx "set palette" && ! comp glassbox -c '"set ' | grep -qx "set viridis"; echo $?) \
	"set offers its settings, not the values of one"
# lessons: the numbers and names of lessons/NN-name.lesson
comp glassbox -c '"lesson ' >"$T/les"
missing=""
for l in lessons/*.lesson; do
	f=$(basename "$l" .lesson) # n is the TAP counter
	grep -qx "lesson $(echo "$f" | sed 's/^0*\([0-9]*\)-.*/\1/')" "$T/les" || missing="$missing $f(number)"
	grep -qx "lesson ${f#*-}" "$T/les" || missing="$missing $f(name)"
done
ok $([ -z "$missing" ]; echo $?) "lesson offers every lesson's number and name${missing:+: missing$missing}"
ok $([ "$(comp glassbox -c '"lesson so')" = "lesson softmax-mask" ]; echo $?) "lesson so completes to softmax-mask"
# models: shipped ones and the gallery's (a folder with config.json, a .bin checkpoint)
comp glassbox -c '"load ' >"$T/load"
ok $(grep -qx "load tiny-lm" "$T/load" && grep -qx "load tiny-mt" "$T/load" && grep -qx "load my-model" "$T/load" &&
	grep -qx "load stories15M.bin" "$T/load" && ! grep -qx "load not-a-model" "$T/load"; echo $?) \
	"load offers the shipped models and the gallery's, and not a folder that is no model"
ok $(comp glassbox -c '"load ' | grep -qx "load tests"; echo $?) "load offers folders too (a model folder by path)"
# layers: tiny-lm's n_layer, from its config.json
nl=$(sed -n 's/.*"n_layer": *\([0-9]*\).*/\1/p' assets/models/tiny-lm/config.json)
want=$(i=1; while [ $i -le "$nl" ]; do echo "attn $i"; i=$((i + 1)); done | sort)
ok $([ -n "$nl" ] && [ "$(comp glassbox -c '"attn ' | grep -v -- ' --')" = "$want" ]; echo $?) \
	"attn offers the layers of the default model (tiny-lm: $nl)"
# after train: an option's values
# the recipes as train names them when refusing an unknown one
presets=$($G -c "train --preset nope" 2>&1 | sed 's/.*unknown preset .nope.: //' | tr ',' '\n' | tr -d ' ' | sort)
ok $([ "$(echo "$presets" | wc -l)" -ge 3 ] && [ "$(comp glassbox train --preset '')" = "$presets" ]; echo $?) "train --preset offers the presets ($(echo $presets | wc -w) recipes)"
ok $(comp glassbox train --p | grep -qx -- --preset; echo $?) "train --p offers --preset"

if command -v fish >/dev/null 2>&1; then
	fc() { fish -c "source $B/glassbox.fish; complete -C '$1'" | cut -f1 | sort; }
	ok $(fish -n "$B/glassbox.fish"; echo $?) "fish: the file parses"
	ok $([ "$(fc 'glassbox -c "run the cat; at')" = "run the cat; attn" ]; echo $?) "fish: a script's last command completes"
	ok $([ "$(fc 'glassbox -c "lesson so')" = "lesson softmax-mask" ]; echo $?) "fish: lesson names"
	ok $(fc 'glassbox --' | grep -qx -- --version; echo $?) "fish: the options"
	missing=""
	while read -r c; do fc "glassbox -c \"$c" | grep -qx "$c" || missing="$missing $c"; done <"$T/cmds"
	ok $([ -z "$missing" ]; echo $?) "fish: every command of the table completes${missing:+: missing$missing}"
else
	for i in 1 2 3 4 5; do echo "ok $((n + 1)) # SKIP fish not installed"; n=$((n + 1)); done
fi
if command -v zsh >/dev/null 2>&1; then
	ok $(zsh -n "$B/_glassbox"; echo $?) "zsh: the file parses"
	missing=""
	while read -r c; do grep -q "^		'$c:" "$B/_glassbox" || missing="$missing $c"; done <"$T/cmds"
	ok $([ -z "$missing" ]; echo $?) "zsh: every command of the table is described${missing:+: missing$missing}"
else
	for i in 1 2; do echo "ok $((n + 1)) # SKIP zsh not installed"; n=$((n + 1)); done
fi

# At a real prompt (a private tmux server): readline and zsh's completion system replace the
# quoted text as the functions intend. wait_for SESSION TEXT: up to 15 s for TEXT on screen.
wait_for() {
	i=0
	while [ $i -lt "$(slow 150)" ]; do
		tmux capture-pane -p -t "$1" 2>/dev/null | grep -qF -- "$2" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
if command -v tmux >/dev/null 2>&1; then
	tmux_private "$T"
	trap 'tmux_cleanup; rm -rf "$T"' EXIT
	tmux new-session -d -s b -x 150 -y 20 "env -i PATH=$PATH HOME=$T/home XDG_DATA_HOME=$T/data TERM=xterm LANG=C.UTF-8 PS1='$ ' bash --norc --noprofile"
	tmux send-keys -t b ". $B/glassbox.bash" Enter
	tmux send-keys -t b 'glassbox -c "run the cat; at' Tab
	ok $(wait_for b 'glassbox -c "run the cat; attn"'; echo $?) "bash at a prompt: -c \"run the cat; at<Tab> gives attn, the quote closed"
	tmux send-keys -t b C-u 'glassbox -c "lesson so' Tab
	ok $(wait_for b 'glassbox -c "lesson softmax-mask"'; echo $?) "bash at a prompt: a lesson's name"
	if command -v zsh >/dev/null 2>&1; then
		mkdir -p "$T/z"
		printf 'fpath=(%s/%s $fpath)\nautoload -U compinit && compinit -u -d %s/z/.zcompdump\nPS1="%%%% "\n' "$PWD" "$B" "$T" >"$T/z/.zshrc"
		tmux new-session -d -s z -x 150 -y 20 "env -i PATH=$PATH HOME=$T/home ZDOTDIR=$T/z XDG_DATA_HOME=$T/data TERM=xterm LANG=C.UTF-8 zsh"
		wait_for z "%"
		tmux send-keys -t z 'glassbox -c "run the cat; at' Tab
		ok $(wait_for z 'glassbox -c "run the cat; attn"'; echo $?) "zsh at a prompt: -c \"run the cat; at<Tab> gives attn"
		tmux send-keys -t z C-u 'glassbox -c "set engine r' Tab
		ok $(wait_for z 'glassbox -c "set engine ref"'; echo $?) "zsh at a prompt: set engine r<Tab> gives ref"
		tmux send-keys -t z C-u 'glassbox -c "lesson so' Tab
		ok $(wait_for z 'glassbox -c "lesson softmax-mask"'; echo $?) "zsh at a prompt: a lesson's name"
		tmux send-keys -t z C-u 'glassbox train --preset tiny-l' Tab
		ok $(wait_for z 'glassbox train --preset tiny-lm'; echo $?) "zsh at a prompt: train --preset's values"
	else
		for i in 1 2 3 4; do echo "ok $((n + 1)) # SKIP zsh not installed"; n=$((n + 1)); done
	fi
else
	for i in 1 2 3 4 5 6; do echo "ok $((n + 1)) # SKIP tmux not installed"; n=$((n + 1)); done
fi

# make install-files (install's recipe on the built files: another PREFIX rebuilds nothing)
# puts them where the shells look
make install-files PREFIX=/opt/gb DESTDIR="$T/root" >/dev/null 2>&1
ok $(cmp -s "$B/glassbox.bash" "$T/root/opt/gb/share/bash-completion/completions/glassbox" &&
	cmp -s "$B/_glassbox" "$T/root/opt/gb/share/zsh/site-functions/_glassbox" &&
	cmp -s "$B/glassbox.fish" "$T/root/opt/gb/share/fish/vendor_completions.d/glassbox.fish"; echo $?) \
	"make install: bash-completion/completions, zsh/site-functions, fish/vendor_completions.d"

echo "1..$n"
exit $((fails > 0))
