#!/bin/sh
# t_tui.sh — the full-screen explorer as a student meets it, driven in tmux: entered from the
# prompt with `tui` and started with `glassbox --tui`; the heatmap, the cursor and the value
# under it (checked against `print`), stages, layers and heads under their keys, resizes, a
# terminal too small, the `:` line, PNG export, the help, a mouse click, and leaving.
cd "$(dirname "$0")/.." || exit 1
if ! command -v tmux >/dev/null 2>&1; then
	echo "1..0 # SKIP tmux not installed"
	exit 0
fi
if ! ./glassbox -c "help tui" >/dev/null 2>&1; then
	echo "1..0 # SKIP this glassbox has no tui command"
	exit 0
fi
ROOT=$PWD
T=$ROOT/tests/tmp/tui
rm -rf "$T" && mkdir -p "$T/state" "$T/out"
M=$T/m
TEXT="the cat sat on the mat"
./glassbox -c "init $M" >/dev/null || exit 1
S=
. tests/tap.sh
tmux_private "$T"
screen() { tmux capture-pane -p -t "$S"; }
# waitfor TEXT: up to 10 s for TEXT to appear on the screen; waitgone TEXT: to leave it
waitfor() { i=0; while [ $i -lt "$(slow 100)" ]; do screen | grep -qF -- "$1" && return 0; sleep 0.1; i=$((i + 1)); done; return 1; }
waitgone() { i=0; while [ $i -lt "$(slow 100)" ]; do screen | grep -qF -- "$1" || return 0; sleep 0.1; i=$((i + 1)); done; return 1; }
# the status line: the value under the cursor
status() { screen | grep '^ query ' | tail -n 1; }
# val L H R C: what `print` shows for query R, key C of head H in L<L>.attn.weights (%.5g)
val() {
	./glassbox -c "load $M; run $TEXT; print L$1.attn.weights" |
		awk -v h="head $2" -v r="$3" -v c="$4" '$0 == h { on = 1; k = 0; next } /^head / { on = 0 } on && NF { if (++k == r) print $c }'
}
k=0
start() { # start W H ENV ARGS: a fresh session running glassbox in $T/out
	# the new session starts before the old one ends: the server of a last session would
	# be shutting down just as the new one asks it for a session
	old=$S
	k=$((k + 1))
	S=glassbox-tui-$$-$k
	tmux new-session -d -s "$S" -x "$1" -y "$2" \
		"cd $T/out && env XDG_STATE_HOME=$T/state TERM=xterm-256color $3 $ROOT/glassbox $4; echo EXIT=\$?; sleep 30"
	[ "$k" -gt 1 ] && tmux kill-session -t "$old" 2>/dev/null
}
XPID=
trap 'tmux_cleanup; [ -n "$XPID" ] && kill "$XPID" 2>/dev/null && wait "$XPID" 2>/dev/null' EXIT

echo "1..38"

# ---- entered from the prompt, at 80x24 ----
start 80 24 "" ""
waitfor "glassbox>" || { echo "Bail out! the prompt did not start"; exit 1; }
tmux send-keys -t "$S" "load $M" Enter "run $TEXT" Enter "tui" Enter
waitfor "[attn]"; ok $? "tui opens the explorer on the attention stage"
waitfor "Layer 1, head 1: attention weights"; ok $? "the heatmap's title is drawn"
screen | grep -q "^tokens t h e · c a t · s a t"; ok $? "the tokens of the text run along the top"
screen | grep -q "^weights(i, j) = softmax_j" ; ok $? "the stage's formula is shown"

v=$(val 1 1 3 2)
tmux send-keys -t "$S" Down Down Right
waitfor "query 3 \"e\" × key 2 \"h\" = $v"; ok $? "arrows move the cursor: query 3 x key 2 shows $v, as print does"

v=$(val 1 1 22 2)
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do tmux send-keys -t "$S" Down; done
waitfor "query 22 \"t\" × key 2 \"h\" = $v"; ok $? "the cursor reaches the last query ($v, as print)"
screen | grep -q "rows [0-9]*–22 of 22"; ok $? "the heatmap scrolled to keep the cursor in view"

v=$(val 1 2 22 2)
tmux send-keys -t "$S" ">"
waitfor "Layer 1, head 2: attention weights"; ok $? "> moves to the next head"
waitfor "query 22 \"t\" × key 2 \"h\" = $v"; ok $? "the cursor keeps its cell across heads ($v, head 2 in print)"
tmux send-keys -t "$S" "]"
waitfor "Layer 2, head 2: attention weights"; ok $? "] moves to the next layer"
tmux send-keys -t "$S" "["

tmux send-keys -t "$S" Tab
waitfor "[heads]" && waitfor "Layer 1: attention weights of every head"; ok $? "Tab moves to the next stage (heads)"
tmux send-keys -t "$S" BTab
waitfor "[attn]"; ok $? "Shift-Tab moves back"

tmux resize-window -t "$S" -x 100 -y 30
i=0; while [ $i -lt "$(slow 100)" ] && ! screen | sed -n 29p | grep -q "^ query 22"; do sleep 0.1; i=$((i + 1)); done
screen | sed -n 29p | grep -q "^ query 22 .* 22,2 of 22x22 *$"; ok $? "a resize to 100x30 is followed (the status line moves to line 29)"

tmux resize-window -t "$S" -x 50 -y 15
waitfor "glassbox needs at least 80x24 (this is 50x15)"; ok $? "at 50x15 it says the terminal is too small"
tmux send-keys -t "$S" Down
tmux resize-window -t "$S" -x 80 -y 24
waitfor "Layer 1, head 2: attention weights" && waitfor "query 22"; ok $? "enlarged again, it recovers (keys were ignored meanwhile)"

tmux send-keys -t "$S" ":"
sleep 0.2
tmux send-keys -t "$S" "run a dog ran" Enter
waitfor "tokens a · d o g · r a n"; ok $? ": runs a command: 'run a dog ran' puts the new text on show"
waitfor "query 9 \"n\" × key 2"; ok $? "the cursor stays inside the shorter text"

tmux send-keys -t "$S" e
waitfor "wrote glassbox-attn-L1-H2.png in "; ok $? "e exports a PNG and says where"
[ "$(head -c 8 "$T/out/glassbox-attn-L1-H2.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; ok $? "the file is there, in the current folder, and is a PNG"
tmux send-keys -t "$S" e
waitfor "wrote glassbox-attn-L1-H2-2.png"; ok $? "a second export takes the next free number"

tmux send-keys -t "$S" "?"
waitfor "glassbox explorer: keys"; ok $? "? shows the help"
screen | grep -q "window: F11 or f full screen" && screen | grep -q "any key closes"; ok $? "the help names the window's keys and fits 80x24"
tmux send-keys -t "$S" x
waitgone "glassbox explorer: keys"; ok $? "any key closes the help"

# a click: one line above the cursor's cell is the query before
pos=$(screen | awk '{ i = match($0, /\[ *\]/); if (i) { print i, NR; exit } }')
x=${pos% *}
y=${pos#* }
tmux send-keys -t "$S" -l "$(printf '\033[<0;%d;%dM\033[<0;%d;%dm' "$x" $((y - 1)) "$x" $((y - 1)))"
waitfor "query 8 \"a\" × key 2"; ok $? "a mouse click puts the cursor on the cell clicked"

tmux send-keys -t "$S" ":"
sleep 0.2
tmux send-keys -t "$S" "trace" Enter
waitfor "L1.attn.weights" && waitfor "q closes"; ok $? ": with a long output shows it in an overlay"
tmux send-keys -t "$S" q
waitgone "q closes"; ok $? "q closes the overlay, not the explorer"

tmux send-keys -t "$S" F5 Z x "§" Home End PPage
sleep 0.3
tmux send-keys -t "$S" q
waitfor "glassbox>" && screen | grep -v "^$" | tail -n 1 | grep -q "^glassbox> *$"; ok $? "unknown keys are ignored; q goes back to the prompt"
tmux send-keys -t "$S" "tui" Enter
waitfor "[attn]" && tmux send-keys -t "$S" ":" && sleep 0.2 && tmux send-keys -t "$S" "quit" Enter
waitfor "EXIT=0"; ok $? "': quit' in the explorer leaves glassbox with status 0"

# ---- a colour scale chosen at the prompt (--range) stays while the keys move the view ----
start 80 24 "" ""
waitfor "glassbox>"
tmux send-keys -t "$S" "load $M" Enter "run $TEXT" Enter "attn 1 1 --range 0 0.5" Enter "tui" Enter
waitfor "[attn]" && tmux send-keys -t "$S" ">" && waitfor "Layer 1, head 2: attention weights" && tmux send-keys -t "$S" e
waitfor "wrote glassbox-attn-L1-H2-3.png"
r=$(png_text "$T/out/glassbox-attn-L1-H2-3.png" Range)
[ "$r" = "0 .. 0.5" ]; ok $? "attn 1 1 --range 0 0.5, then > in the explorer: head 2 keeps the range (got '$r')"
tmux send-keys -t "$S" q
waitfor "glassbox>" && tmux send-keys -t "$S" "attn 1 1" Enter "tui" Enter
waitfor "[attn]" && tmux send-keys -t "$S" ">" && waitfor "Layer 1, head 2: attention weights" && tmux send-keys -t "$S" e
waitfor "wrote glassbox-attn-L1-H2-4.png"
r=$(png_text "$T/out/glassbox-attn-L1-H2-4.png" Range)
[ "$r" = "0 .. 1" ]; ok $? "attn 1 1 without --range gives the scale back (got '$r')"
tmux send-keys -t "$S" q

# ---- glassbox --tui, without colour (the cursor is found by the layout, not by colour) ----
start 80 24 "NO_COLOR=1" "--tui"
tmux send-keys -t "$S" ":"
sleep 0.2
tmux send-keys -t "$S" "load $M" Enter
waitfor "no text yet: press : and type  run TEXT"; ok $? "--tui without a text says what to do"
tmux send-keys -t "$S" ":"
sleep 0.2
v=$(val 1 1 2 1)
tmux send-keys -t "$S" "run $TEXT" Enter
waitfor "Layer 1, head 1: attention weights" && tmux send-keys -t "$S" Down
waitfor "query 2 \"h\" × key 1 \"t\" = $v" && screen | grep -q "^ *2 h *\[.\]"; ok $? "without colour the cursor is drawn on its cell ($v)"
tmux send-keys -t "$S" ":"
sleep 0.2
tmux send-keys -t "$S" "ffn 1 --units 65-128" Enter
waitfor "units 65-128 of" && screen | grep -q "hidden unit 6[5-9] "; ok $? "a window of units: the status line numbers the cursor's unit as the figure does (65 on)"
tmux send-keys -t "$S" Escape
waitfor "EXIT=0"; ok $? "Esc leaves glassbox --tui with status 0"

# ---- the SDL window and the explorer in step, on a virtual X display when there is one ----
D=
# the window's id (SDL names it "glassbox"), or nothing when it is not open
winid() { DISPLAY=$D xwininfo -root -tree 2>/dev/null | awk '/"glassbox"/ { print $1; exit }'; }
if command -v Xvfb >/dev/null 2>&1 && command -v xdotool >/dev/null 2>&1 && command -v xwd >/dev/null 2>&1 && command -v xwininfo >/dev/null 2>&1 &&
	"$ROOT/glassbox" -c "help window" >/dev/null 2>&1; then
	if xvfb_start 1400x900x24; then
		[ $i -lt "$(slow 50)" ] || D=
	fi
fi
if [ -z "$D" ]; then
	for k in 1 2 3 4; do n=$((n + 1)); echo "ok $n # SKIP no Xvfb, xdotool or xwd for the window"; done
else
	start 80 24 "DISPLAY=$D" "--tui"
	tmux send-keys -t "$S" ":"
	sleep 0.2
	tmux send-keys -t "$S" "load $M" Enter
	waitfor "no text yet"
	tmux send-keys -t "$S" ":"
	sleep 0.2
	tmux send-keys -t "$S" "run $TEXT" Enter
	waitfor "Layer 1, head 1: attention weights"
	tmux send-keys -t "$S" ":"
	sleep 0.2
	tmux send-keys -t "$S" "window" Enter
	waitfor "window open"; ok $? ": window opens the projector window from the explorer"
	i=0; while [ $i -lt "$(slow 50)" ] && [ -z "$(winid)" ]; do sleep 0.1; i=$((i + 1)); done
	W=$(winid)
	DISPLAY=$D xwd -root -silent >"$T/a.xwd"
	tmux send-keys -t "$S" ">"
	waitfor "Layer 1, head 2: attention weights"
	i=0; while [ $i -lt "$(slow 50)" ]; do DISPLAY=$D xwd -root -silent >"$T/b.xwd"; cmp -s "$T/a.xwd" "$T/b.xwd" || break; sleep 0.1; i=$((i + 1)); done
	[ -n "$W" ] && ! cmp -s "$T/a.xwd" "$T/b.xwd"; ok $? "the window follows the explorer (> redraws it)"
	DISPLAY=$D xdotool windowfocus "$W" 2>/dev/null
	sleep 0.2
	DISPLAY=$D xdotool key Tab
	waitfor "[heads]"; ok $? "the explorer follows the window (Tab in the window moves both to heads)"
	DISPLAY=$D xdotool key q
	i=0; while [ $i -lt "$(slow 50)" ] && [ -n "$(winid)" ]; do sleep 0.1; i=$((i + 1)); done
	tmux send-keys -t "$S" BTab
	waitfor "[attn]" && [ -z "$(winid)" ]; ok $? "q in the window closes it; the explorer goes on"
	tmux send-keys -t "$S" q
	waitfor "EXIT=0" >/dev/null
fi

tmux kill-session -t "$S" 2>/dev/null
exit $((fails > 0))
