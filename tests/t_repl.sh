#!/bin/sh
# t_repl.sh — the prompt as a person meets it, driven in tmux: the banner, Tab completion
# generated from the command table, history in $XDG_STATE_HOME, and Ctrl-D leaving cleanly.
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
# waitfor TEXT: up to 5 s for TEXT to appear on the screen
waitfor() { i=0; while [ $i -lt 50 ]; do screen | grep -qF -- "$1" && return 0; sleep 0.1; i=$((i + 1)); done; return 1; }
# (tmux drops trailing spaces: a completed word shows without the space readline added)
lastline() { screen | grep -v "^$" | tail -n 1; }

# waitline REGEX: up to 5 s for the last screen line to match
waitline() { i=0; while [ $i -lt 50 ]; do lastline | grep -q -- "$1" && return 0; sleep 0.1; i=$((i + 1)); done; return 1; }

echo "1..15"
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
tmux send-keys -t "$S" C-u "generate 3 --temp 0.5 --t" Tab
waitline "glassbox> generate 3 --temp 0.5 --top-$"; ok $? "an option already typed is not offered again (--t -> --top-)"
tmux send-keys -t "$S" C-u "generate 3 --temp 0.5 --top-k 5 --top-p 0.9 --seed " Tab
sleep 0.3; waitline "glassbox> generate 3 --temp 0.5 --top-k 5 --top-p 0.9 --seed$"; ok $? "on a long line too, after an option that takes a number Tab offers nothing"
# Ctrl-C stops a long beam search at the end of a step and the session goes on.
tmux send-keys -t "$S" C-u "load tiny-lm" Enter "run The old dog" Enter "beam 64 120" Enter
waitfor "step 1"
tmux send-keys -t "$S" C-c
i=0; while [ $i -lt 600 ] && ! screen | grep -q "^best: "; do sleep 0.1; i=$((i + 1)); done
at=$(screen | sed -n 's/.*stopped by Ctrl-C after step \([0-9]*\).*/\1/p' | tail -n 1)
[ -n "$at" ] && [ "$at" -lt 120 ]; ok $? "Ctrl-C stops a beam search after the step it is in (step ${at:-none} of 120)"
tmux send-keys -t "$S" C-l "info" Enter
waitfor "family      gpt2"; ok $? "the session goes on: the next command runs"
tmux send-keys -t "$S" C-u C-d
waitfor "EXIT=0"; ok $? "Ctrl-D leaves with status 0"
grep -q "run hello there" "$T/state/glassbox/history" 2>/dev/null; ok $? "history is kept in \$XDG_STATE_HOME/glassbox/history"
tmux kill-session -t "$S" 2>/dev/null
exit $((fails > 0))
