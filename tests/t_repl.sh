#!/bin/sh
# t_repl.sh — the prompt as a person meets it, driven in tmux: the banner, Tab completion
# generated from the command table, history in $XDG_STATE_HOME, Ctrl-D leaving cleanly, and
# the session of t_transcript.sh's golden files on real terminals of 80x24 and 160x48 (one row
# per line with whole labels, paging, help and columns within the width).
cd "$(dirname "$0")/.." || exit 1
if ! command -v tmux >/dev/null 2>&1; then
	echo "1..0 # SKIP tmux not installed"
	exit 0
fi
T=$PWD/tests/tmp/repl
rm -rf "$T" && mkdir -p "$T/state"
./glassbox -c "init $T/m" || exit 1
S=glassbox-test-$$
. tests/tap.sh
tmux_private "$T"
trap tmux_cleanup EXIT
screen() { tmux capture-pane -p -t "$S"; }
# waitfor TEXT: up to 15 s (a loaded machine) for TEXT to appear on the screen
waitfor() { i=0; while [ $i -lt "$(slow 150)" ]; do screen | grep -qF -- "$1" && return 0; sleep 0.1; i=$((i + 1)); done; return 1; }
# (tmux drops trailing spaces: a completed word shows without the space readline added)
lastline() { screen | grep -v "^$" | tail -n 1; }

# waitline REGEX: up to 15 s for the last screen line to match
waitline() { i=0; while [ $i -lt "$(slow 150)" ]; do lastline | grep -q -- "$1" && return 0; sleep 0.1; i=$((i + 1)); done; return 1; }

echo "1..35"
tmux kill-session -t "$S" 2>/dev/null
tmux new-session -d -s "$S" -x 100 -y 30 "env XDG_STATE_HOME=$T/state TERM=xterm-256color ./glassbox; echo EXIT=\$?; sleep 5"
waitfor "glassbox>"; ok $? "the prompt appears"
screen | grep -q "Type 'help'"; ok $? "a welcome line says how to start"

tmux send-keys -t "$S" "load $T/m" Enter
waitfor "loaded $T/m"; ok $? "load at the prompt says what it loaded"
tmux send-keys -t "$S" "run hello there" Enter "gen" Tab
waitline "glassbox> generate$"; ok $? "Tab completes a command name (gen -> generate)"
tmux send-keys -t "$S" "3 --te" Tab
waitline "glassbox> generate 3 --temp$"; ok $? "Tab completes an option from the command's usage (--te -> --temp)"
tmux send-keys -t "$S" C-u "set en" Tab
waitline "glassbox> set engine$"; ok $? "Tab completes a setting (set en -> set engine)"
tmux send-keys -t "$S" C-u "set engine a" Tab
waitline "glassbox> set engine avx$"; ok $? "Tab completes within the setting's own choices (set engine a -> avx, not auto)"
tmux send-keys -t "$S" C-u "generate 3 --temp " Tab
sleep 0.3; waitline "glassbox> generate 3 --temp$"; ok $? "after an option that takes a number, Tab offers nothing (no other option)"
tmux send-keys -t "$S" C-u "train --preset t" Tab
waitline "glassbox> train --preset tiny-$"; ok $? "after --preset, Tab offers the presets (t -> tiny-)"
tmux send-keys -t "$S" "lm-li" Tab
waitline "glassbox> train --preset tiny-lm-linear$"; ok $? "the presets include tiny-lm's variants (tiny-lm-li -> tiny-lm-linear)"
tmux send-keys -t "$S" C-u "generate 3 --temp 0.5 --t" Tab
waitline "glassbox> generate 3 --temp 0.5 --top-$"; ok $? "an option already typed is not offered again (--t -> --top-)"
tmux send-keys -t "$S" C-u "generate 3 --temp 0.5 --top-k 5 --top-p 0.9 --seed " Tab
sleep 0.3; waitline "glassbox> generate 3 --temp 0.5 --top-k 5 --top-p 0.9 --seed$"; ok $? "on a long line too, after an option that takes a number Tab offers nothing"
# Ctrl-C stops a long beam search at the end of a step and the session goes on. (On the
# reference engine: with its key/value cache the fast one can finish 120 steps before the key.)
tmux send-keys -t "$S" C-u "load tiny-lm" Enter "set engine ref" Enter "run The old dog" Enter "beam 64 120" Enter
waitfor "step 1"
tmux send-keys -t "$S" C-c
i=0; while [ $i -lt "$(slow 600)" ] && ! screen | grep -q "^best: "; do sleep 0.1; i=$((i + 1)); done
at=$(screen | sed -n 's/.*stopped by Ctrl-C after step \([0-9]*\).*/\1/p' | tail -n 1)
[ -n "$at" ] && [ "$at" -lt 120 ]; ok $? "Ctrl-C stops a beam search after the step it is in (step ${at:-none} of 120)"
tmux send-keys -t "$S" C-l "info" Enter
waitfor "family      gpt2"; ok $? "the session goes on: the next command runs"
tmux send-keys -t "$S" C-u C-d
waitfor "EXIT=0"; ok $? "Ctrl-D leaves with status 0"
grep -q "run hello there" "$T/state/glassbox/history" 2>/dev/null; ok $? "history is kept in \$XDG_STATE_HOME/glassbox/history"
tmux kill-session -t "$S" 2>/dev/null

# The transcript session at 80x24 and 160x48, in colour, as a class would see it.
SENT="When Mary and John went to the park, John gave a ball to"
# col TEXT: the display column where TEXT starts on each screen line that has it, one a line
col() { all | perl -CS -ne "print index(\$_, '$1'), \"\\n\" if index(\$_, '$1') >= 0"; }
all() { tmux capture-pane -p -S - -t "$S"; }
# same_col TEXT N: TEXT is on at least N lines, all at one column
same_col() { [ "$(col "$1" | wc -l)" -ge "$2" ] && [ "$(col "$1" | sort -u | wc -l)" -eq 1 ]; }
# unwrapped: no line of the whole scrollback was wrapped by the terminal (-J joins them)
unwrapped() { [ "$(tmux capture-pane -p -S - -t "$S" | wc -l)" -eq "$(tmux capture-pane -pJ -S - -t "$S" | wc -l)" ]; }
# run_cmd CMD: clears the screen and its history, runs CMD, waits for the prompt after it
run_cmd() { tmux send-keys -t "$S" C-l; tmux clear-history -t "$S"; tmux send-keys -t "$S" "$1" Enter; sleep 0.3; waitline "^glassbox> *$"; }
for size in 80x24 160x48; do
	w=${size%x*} h=${size#*x}
	tmux new-session -d -s "$S" -x "$w" -y "$h" "env XDG_STATE_HOME=$T/state TERM=xterm-256color COLORTERM=truecolor ./glassbox; sleep 5"
	waitfor "glassbox>"
	tmux send-keys -t "$S" "set engine ref" Enter "run $SENT" Enter
	run_cmd "attn 3 2"
	rows=0
	for tok in When "·Mary" "·went" "·park" "," "·ball"; do
		all | grep -qE "^ *([0-9]+ )?\"?$tok\"?( |\$)" && rows=$((rows + 1))
	done
	[ "$rows" -eq 6 ] && ! all | grep -q "…/\|/·" && unwrapped; ok $? "$size: attn 3 2 has a line per row with its whole token, none packed or wrapped ($rows of 6 found)"
	# 19 rows and their labels are taller than 24 lines, not than 48: only then the title,
	# scrolled away, is named again under the figure
	if [ "$h" -lt 30 ]; then screen | grep -q "^(above: Layer 3, head 2: attention weights)"; else ! all | grep -q "^(above:"; fi
	ok $? "$size: a figure taller than the terminal names its title again at the bottom (only then)"
	run_cmd "model"
	# 14 tokens: at 80x24 some layers fit and the line names the command for the rest; at
	# 160x48 all four fit, and no such line is printed
	if [ "$h" -lt 30 ]; then screen | grep -q "^layers\? [0-9-]* of 4: model --layers [0-9-]* for the"
	else all | grep -q "^L1 H1" && all | grep -q "^L4 H1" && ! all | grep -q "^layers\? [0-9-]* of 4"; fi && unwrapped
	ok $? "$size: model shows the layers that fit and names the command for the rest (all four at 160x48)"
	run_cmd "model --layers 3-4"
	all | grep -q "L3 H1" && all | grep -q "L4 H4"; ok $? "$size: model --layers 3-4 shows layers 3 and 4"
	run_cmd "help"
	unwrapped && tmux capture-pane -p -S - -t "$S" | grep -q "^Start here:" && tmux capture-pane -p -S - -t "$S" | grep -q "^generation"; ok $? "$size: help starts with 'Start here', is grouped by family, and wraps at the width"
	run_cmd "generate 3 --top-k 1"
	same_col " id " 3 && same_col "p = " 3; ok $? "$size: generate's columns line up after a '·' (id at $(col ' id ' | tr '\n' ' '))"
	run_cmd "tokenize --steps When Mary gave the ball"
	merges=$(all | grep -c '^  merge')
	cols=$(all | grep '^  merge' | perl -CS -ne 'print index($_, "rank"), " ", index($_, "["), "\n"' | sort -u | wc -l)
	[ "$merges" -eq 18 ] && [ "$cols" -eq 1 ]; ok $? "$size: tokenize --steps keeps its columns with '·' pieces"
	run_cmd "ablate 3 2"
	arows=$(all | grep -cE '^  .* [01]\.[0-9]{3} +[01]\.[0-9]{3} *$')
	awidths=$(all | grep -E '^  .* [01]\.[0-9]{3} +[01]\.[0-9]{3} *$' | sed 's/ *$//' | perl -CS -ne 'chomp; print length($_), "\n"' | sort -u | wc -l)
	[ "$arows" -ge 5 ] && [ "$awidths" -eq 1 ] && unwrapped; ok $? "$size: ablate's two columns line up ($arows rows) and fit the width"
	tmux kill-session -t "$S" 2>/dev/null
done

# A long run (here: a 400-token text through 12 layers of d_model 256 on the reference engine,
# seconds) shows its progress after half a second, and Ctrl-C stops it between layers with one
# line; the prompt goes on and the next command runs.
./glassbox -c "init $T/slow --dim 256 --layers 12 --heads 4 --context 512" || exit 1
LONG=$(awk 'BEGIN { for (i = 0; i < 15; i++) printf "the cat sat on the mat and "; }' | cut -c1-400)
tmux new-session -d -s "$S" -x 120 -y 30 "env XDG_STATE_HOME=$T/state TERM=xterm-256color ./glassbox 2>&1; sleep 5"
waitfor "glassbox>"
tmux send-keys -t "$S" "load $T/slow" Enter "set engine ref" Enter "run $LONG" Enter
i=0; while [ $i -lt "$(slow 100)" ] && ! screen | grep -q "running: layer [0-9]* of 12 done (Ctrl-C stops)"; do sleep 0.1; i=$((i + 1)); done
screen | grep -q "running: layer [0-9]* of 12 done (Ctrl-C stops)"; ok $? "a run past half a second shows 'running: layer k of 12'"
tmux send-keys -t "$S" C-c
waitfor "stopped (Ctrl-C) after"; ok $? "Ctrl-C stops it between layers, in one line ($(screen | grep -o 'stopped.*layers'))"
tmux send-keys -t "$S" "info" Enter
waitfor "parameters"; ok $? "and the prompt goes on: the next command runs"
tmux kill-session -t "$S" 2>/dev/null
exit $((fails > 0))
