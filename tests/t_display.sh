#!/bin/sh
# t_display.sh — one path for every figure (issue 18, part 7): each display setting (`set
# palette`, `set colors`) reaches the figures of the prompt, of the explorer (tmux, a private
# server) and of the window (Xvfb), their exports carry it (the PNG's Colormap text chunk),
# a figure already on show follows a change, and a lesson's question that changes a setting
# puts the student's back.
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
T=$ROOT/tests/tmp/display
rm -rf "$T" && mkdir -p "$T/state" "$T/out"
. tests/tap.sh
TEXT="the cat sat on the mat"
# cmap FILE: the Colormap text chunk of a PNG (tEXt is key NUL value, uncompressed)
cmap() { tr '\000' '=' <"$1" 2>/dev/null | grep -ao 'Colormap=[a-z]*' | head -n 1 | cut -d= -f2; }
# colours: the colours stdin's SGR escapes set, one per line: bg16, bg256, bgrgb, fg16, ...
colours() {
	grep -ao "$(printf '\033')\[[0-9;]*m" | tr -d '\033[m' | awk -F';' '{
		for (i = 1; i <= NF; i++) {
			c = $i + 0; w = c >= 40 && c <= 49 || c >= 100 ? "bg" : "fg"
			if (c == 38 || c == 48) { if ($(i + 1) == 5) { print w "256"; i += 2 } else if ($(i + 1) == 2) { print w "rgb"; i += 4 } }
			else if ((c >= 40 && c <= 47) || (c >= 100 && c <= 107) || (c >= 30 && c <= 37) || (c >= 90 && c <= 97)) print w "16"
		} }'
}
# only KIND LIST: LIST (from colours) has background colours of KIND (16, 256, rgb) and none other
only() { case " $2" in *" bg$1 "*) ;; *) return 1 ;; esac; [ -z "$(printf '%s\n' $2 | grep -v "$1\$")" ]; }
gb() { "$ROOT/glassbox" -c "$1"; }
screen() { tmux capture-pane -p -t "$S"; }
waitfor() { i=0; while [ $i -lt "$(slow 100)" ]; do screen | grep -qF -- "$1" && return 0; sleep 0.1; i=$((i + 1)); done; return 1; }
waitfile() { i=0; while [ $i -lt "$(slow 100)" ]; do [ -s "$1" ] && return 0; sleep 0.1; i=$((i + 1)); done; return 1; }
cmdline() { tmux send-keys -t "$S" ":"; sleep 0.2; tmux send-keys -t "$S" "$1" Enter; }
S=
XPID=
command -v tmux >/dev/null 2>&1 && tmux_private "$T"
trap 'tmux_cleanup; [ -n "$XPID" ] && kill "$XPID" 2>/dev/null && wait "$XPID" 2>/dev/null' EXIT

echo "1..21"

# ---- the prompt ----
cd "$T/out" || exit 1
gb "run $TEXT; set palette gray; attn 1 1; export p1.png; heads 1; export p2.png; embed; export p3.png" >/dev/null 2>&1
[ "$(cmap p1.png)" = gray ] && [ "$(cmap p2.png)" = gray ]; ok $? "prompt: set palette gray reaches attn and heads and their exports (Colormap gray)"
[ "$(cmap p3.png)" = coolwarm ]; ok $? "prompt: a signed figure (embed) keeps its diverging map under a palette"
gb "run $TEXT; attn 1 1; set palette cividis; export p4.png; set palette auto; export p5.png" >/dev/null 2>&1
[ "$(cmap p4.png)" = cividis ] && [ "$(cmap p5.png)" = viridis ]; ok $? "prompt: the figure on show follows set palette (cividis), and auto gives the view's own back (viridis)"
out=$(gb "run $TEXT; set colors plain; attn 1 1" 2>&1)
printf '%s' "$out" | grep -q "Layer 1, head 1" && [ -z "$(printf '%s' "$out" | colours)" ]; ok $? "prompt: set colors plain draws without a colour escape"
out=$(gb "run $TEXT; set colors 16; attn 1 1" 2>&1 | colours | sort -u | tr '\n' ' ')
only 16 "$out"; ok $? "prompt: set colors 16 draws in the 16 colours only ($out)"
out=$(gb "run $TEXT; set colors 256; attn 1 1" 2>&1 | colours | sort -u | tr '\n' ' ')
only 256 "$out"; ok $? "prompt: set colors 256 draws in xterm's 256 colours ($out)"
out=$(gb "run $TEXT; set colors truecolor; attn 1 1" 2>&1 | colours | sort -u | tr '\n' ' ')
only rgb "$out"; ok $? "prompt: set colors truecolor draws in 24-bit colour ($out)"

# ---- a lesson: a question whose command changes a setting puts the student's back ----
cat >"$T/display.lesson" <<'EOF'
# Display settings survive a question

== A question that changes the settings
> run the cat sat on the mat
> attn 1 1
? How many lines does `set palette gray` print?
= lines: set palette gray
? And `set colors plain`?
= lines: set colors plain
EOF
gb "set palette magma; set colors 256; lesson $T/display.lesson; export l1.png; attn 1 2; export l2.png" >"$T/lesson.out" 2>&1
[ "$(cmap l1.png)" = magma ]; ok $? "lesson: the figure put back after a question keeps the student's palette (magma)"
[ "$(cmap l2.png)" = magma ]; ok $? "lesson: the next figure after the lesson is still magma (the question's 'set palette gray' was undone)"
awk '/Layer 1, head 2/ { on = 1 } on' "$T/lesson.out" | colours | grep -q '^bg256$'; ok $? "lesson: the student's colour depth (256) is back too (the question's 'set colors plain' was undone)"

# ---- the explorer, in tmux on a private server ----
if ! command -v tmux >/dev/null 2>&1; then
	for k in 1 2 3 4 5 6; do n=$((n + 1)); echo "ok $n # SKIP tmux not installed"; done
else
	S=glassbox-display-$$
	mkdir -p "$T/tui" && cd "$T/tui" || exit 1
	tmux new-session -d -s "$S" -x 160 -y 48 \
		"cd $T/tui && env XDG_STATE_HOME=$T/state TERM=xterm-256color $ROOT/glassbox; echo EXIT=\$?; sleep 30"
	waitfor "glassbox>" || { echo "Bail out! the prompt did not start"; exit 1; }
	tmux send-keys -t "$S" "set palette gray" Enter "run $TEXT" Enter "tui" Enter
	waitfor "Layer 1, head 1: attention weights"
	tmux send-keys -t "$S" e
	waitfile glassbox-attn-L1-H1.png
	[ "$(cmap glassbox-attn-L1-H1.png)" = gray ]; ok $? "explorer: the stage it builds itself carries the prompt's palette (export says Colormap gray)"
	tmux send-keys -t "$S" Tab
	waitfor "Layer 1: attention weights of every head"
	tmux send-keys -t "$S" e
	waitfile glassbox-heads-L1.png
	[ "$(cmap glassbox-heads-L1.png)" = gray ]; ok $? "explorer: so does the next stage (heads, Tab)"
	cmdline "set palette cividis"
	sleep 0.3
	tmux send-keys -t "$S" e
	waitfile glassbox-heads-L1-2.png
	[ "$(cmap glassbox-heads-L1-2.png)" = cividis ]; ok $? "explorer: ':set palette cividis' reaches the figure on show and its export"
	cmdline "set colors plain"
	sleep 0.5
	[ -z "$(tmux capture-pane -e -p -t "$S" | colours)" ] && screen | grep -q "Layer 1: attention weights"
	ok $? "explorer: ':set colors plain' redraws the figure without a colour"
	cmdline "set colors 16"
	sleep 0.5
	bg=$(tmux capture-pane -e -p -t "$S" | colours | sort -u | tr '\n' ' ')
	only 16 "$bg"; ok $? "explorer: ':set colors 16' draws in the 16 colours ($bg)"
	tmux send-keys -t "$S" q
	waitfor "glassbox>"
	tmux send-keys -t "$S" "export after.png" Enter
	waitfile after.png
	[ "$(cmap after.png)" = cividis ]; ok $? "explorer: back at the prompt, export writes the explorer's figure with the palette set in it"
	tmux send-keys -t "$S" "quit" Enter
	waitfor "EXIT=0" >/dev/null
	tmux kill-session -t "$S" 2>/dev/null
fi

# ---- the window, on a virtual X display ----
D=
winid() { DISPLAY=$D xwininfo -root -tree 2>/dev/null | awk '/"glassbox"/ { print $1; exit }'; }
# sat FILE.xwd: the largest colour saturation in the window's picture (0 for grays)
sat() { convert "$1" -colorspace HSB -channel G -separate -format '%[fx:maxima]' info: 2>/dev/null; }
if command -v tmux >/dev/null 2>&1 && command -v Xvfb >/dev/null 2>&1 && command -v xdotool >/dev/null 2>&1 &&
	command -v xwd >/dev/null 2>&1 && command -v convert >/dev/null 2>&1 && command -v xwininfo >/dev/null 2>&1 &&
	"$ROOT/glassbox" -c "help window" >/dev/null 2>&1; then
	if xvfb_start 1400x900x24; then
		[ $i -lt "$(slow 50)" ] || D=
	fi
fi
if [ -z "$D" ]; then
	for k in 1 2 3 4 5; do n=$((n + 1)); echo "ok $n # SKIP no tmux, Xvfb, xdotool, xwd or convert for the window"; done
else
	S=glassbox-display-w-$$
	mkdir -p "$T/win" && cd "$T/win" || exit 1
	tmux new-session -d -s "$S" -x 120 -y 40 \
		"cd $T/win && env XDG_STATE_HOME=$T/state TERM=xterm-256color DISPLAY=$D $ROOT/glassbox; echo EXIT=\$?; sleep 30"
	waitfor "glassbox>"
	tmux send-keys -t "$S" "set palette gray" Enter "run $TEXT" Enter "attn 1 1" Enter "window" Enter
	waitfor "window open"
	i=0; while [ $i -lt "$(slow 50)" ] && [ -z "$(winid)" ]; do sleep 0.1; i=$((i + 1)); done
	W=$(winid)
	sleep 0.5
	DISPLAY=$D xdotool windowfocus "$W" 2>/dev/null
	sleep 0.2
	DISPLAY=$D xdotool key Tab
	sleep 0.8
	DISPLAY=$D xwd -id "$W" -silent >"$T/w1.xwd" 2>/dev/null
	s1=$(sat "$T/w1.xwd")
	[ -n "$W" ] && [ -n "$s1" ] && awk -v s="$s1" 'BEGIN { exit !(s < 0.05) }'; ok $? "window: the stage its own keys made (Tab: heads) is drawn in gray (largest saturation $s1)"
	tmux send-keys -t "$S" "export w1.png" Enter
	waitfile w1.png
	[ "$(cmap w1.png)" = gray ] && tr '\000' '=' <w1.png | grep -aq 'Title=Layer 1: attention weights of every head'
	ok $? "window: the export of the window's figure (heads, from its Tab) says Colormap gray"
	tmux send-keys -t "$S" "set palette magma" Enter
	sleep 0.8
	DISPLAY=$D xwd -id "$W" -silent >"$T/w2.xwd" 2>/dev/null
	s2=$(sat "$T/w2.xwd")
	[ -n "$s2" ] && awk -v s="$s2" 'BEGIN { exit !(s > 0.3) }'; ok $? "window: set palette magma at the prompt redraws the window in colour (largest saturation $s2)"
	tmux send-keys -t "$S" "export w2.png" Enter
	waitfile w2.png
	[ "$(cmap w2.png)" = magma ]; ok $? "window: and its export says Colormap magma"
	convert "$T/w2.xwd" "$T/window-magma.png" 2>/dev/null
	DISPLAY=$D xdotool windowfocus "$W" 2>/dev/null
	sleep 0.2
	DISPLAY=$D xdotool key Down
	sleep 0.8
	tmux send-keys -t "$S" "export w3.png" Enter
	waitfile w3.png
	[ "$(cmap w3.png)" = magma ] && tr '\000' '=' <w3.png | grep -aq 'Title=Layer 2: attention weights of every head'
	ok $? "window: the next view its keys make (Down: layer 2) is magma too"
	tmux send-keys -t "$S" "quit" Enter
	waitfor "EXIT=0" >/dev/null
	tmux kill-session -t "$S" 2>/dev/null
fi
exit $((fails > 0))
