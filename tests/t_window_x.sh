#!/bin/sh
# t_window_x.sh — the projector window as a teacher drives it in class: the real program at its
# prompt in a private tmux server, its window on a virtual 1920 x 1080 screen (Xvfb), keys and
# mouse from xdotool, screenshots (xwd, converted to PNG) judged by their pixels with the pixel
# tool in build/tests/t_window.t. It checks that the window opens at a slide's size, that
# pointing at a cell writes its value in the status line (and moving away takes it back), that a
# click on a head of the `model` grid opens that head, that F11 and f fill the screen and give it
# back, that + enlarges the text, that [ changes the temperature of `next` (its title and PNG say
# T), that l draws the head as lines, that a command without a figure leaves a card of its text,
# and that q closes the window while the prompt goes on. Screenshots stay in tests/tmp/window_x.
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
PLAN=23
for tool in tmux Xvfb xdotool xwd xwininfo convert; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "1..0 # SKIP $tool is not installed"
		exit 0
	fi
done
PIX=build/tests/t_window.t
if [ ! -x "$PIX" ] || ! ./glassbox -c "help window" >/dev/null 2>&1; then
	echo "1..0 # SKIP build glassbox and the tests first (make check)"
	exit 0
fi
T=$PWD/tests/tmp/window_x
rm -rf "$T" && mkdir -p "$T"
if ! xvfb_start 1920x1080x24; then
	echo "1..0 # SKIP Xvfb did not start"
	exit 0
fi
tmux_private "$T"
trap 'tmux_cleanup; [ -n "$XPID" ] && kill "$XPID" 2>/dev/null && wait "$XPID" 2>/dev/null' EXIT
echo "1..$PLAN"

S=glassbox-window-$$
screen() { tmux capture-pane -p -t "$S"; }
waitfor() { i=0; while [ $i -lt "$(slow 100)" ]; do screen | grep -qF -- "$1" && return 0; sleep 0.1; i=$((i + 1)); done; return 1; }
send() { tmux send-keys -t "$S" "$1" Enter; }
key() { DISPLAY=$D xdotool key "$@"; }
mouse() { DISPLAY=$D xdotool mousemove "$1" "$2"; }
# the window's geometry as "W H X Y" (empty when it is not open)
geom() { DISPLAY=$D xwininfo -root -tree 2>/dev/null | awk '/"glassbox"/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+x[0-9]+\+/) { split($i, a, /[x+]/); print a[1], a[2], a[3], a[4]; exit } }'; }
# (without the date and time chunks convert stamps, so two shots of the same screen are the same file)
shot() { DISPLAY=$D xwd -root -silent | convert xwd:- -define png:exclude-chunks=date,time "$T/$1.png"; }
# diff A B X Y W H: pixels that differ in a box of two screenshots
diff_() { "$PIX" --diff "$T/$1.png" "$T/$2.png" "$3" "$4" "$5" "$6"; }
ink() { "$PIX" --ink "$T/$1.png" "$2" "$3" "$4" "$5"; }
pixel() { "$PIX" --pixel "$T/$1.png" "$2" "$3"; }
# until NAME BASE X Y W H: screenshots into NAME until its box differs from BASE's (5 s at most)
# (then until it has settled: the status line follows the figure by a frame)
until_changed() { n_=$1 b_=$2; shift 2; i=0; while [ $i -lt "$(slow 50)" ]; do shot "$n_"; [ "$(diff_ "$b_" "$n_" "$@")" -gt 0 ] && { settle "$n_"; return 0; }; sleep 0.1; i=$((i + 1)); done; return 1; }
waitfile() { i=0; while [ $i -lt "$(slow 50)" ] && ! [ -s "$1" ]; do sleep 0.1; i=$((i + 1)); done; sleep 0.1; }
pngtext() { "$PIX" --text "$1" "$2"; }
# settle NAME: screenshots into NAME until two in a row are the same (the window has redrawn)
settle() { shot "$1"; i=0; while [ $i -lt "$(slow 50)" ]; do sleep 0.1; shot settle; cmp -s "$T/settle.png" "$T/$1.png" && return 0; mv "$T/settle.png" "$T/$1.png"; i=$((i + 1)); done; return 1; }

tmux new-session -d -s "$S" -x 160 -y 48 "env DISPLAY=$D TERM=xterm-256color COLORTERM=truecolor ./glassbox 2>$T/stderr; echo EXIT=\$?; sleep 5"
waitfor "glassbox>"
send "run When Mary and John went to the park, John gave a ball to"
send "window"
i=0; while [ $i -lt "$(slow 100)" ] && [ -z "$(geom)" ]; do sleep 0.1; i=$((i + 1)); done
set -- $(geom); W=${1:-0} H=${2:-0} X=${3:-0} Y=${4:-0}
[ "$W" = 1600 ] && [ "$H" = 900 ]; ok $? "the window opens at a 1600 x 900 slide's size on a 1920 x 1080 screen (${W}x$H+$X+$Y)"
# the boxes: the title, the status line (32 px at 1600 x 900) and its left half
TX=$((X + 200)) TY=$((Y + 15)) TW=$((W - 400)) TH=70
SX=$X SY=$((Y + H - 30)) SW=$((W / 2)) SH=28
mouse 3 3
shot blank
send "attn 1 1"
until_changed attn blank $TX $TY $TW $TH
[ "$(pixel attn $((X + W - 4)) $((Y + H - 4)))" = f0f0f0 ] && [ "$(ink attn $SX $SY $SW $SH)" -gt 100 ]
ok $? "attn 1 1 shows its figure with a status line under it, the keys written in it"

# pointing at the middle of the heatmap: the cell's value in the status line, an outline there
mouse $((X + W / 2)) $((Y + H / 2))
until_changed hover attn $SX $SY $SW $SH
d=$(diff_ attn hover $SX $SY $SW $SH) o=$(diff_ attn hover $((X + W / 2 - 80)) $((Y + H / 2 - 80)) 160 160)
[ "$d" -gt 100 ] && [ "$o" -gt 20 ]; ok $? "pointing at a cell writes its value in the status line ($d pixels change) and outlines it ($o)"
mouse 3 3
until_changed away hover $SX $SY $SW $SH
[ "$(diff_ attn away $SX $SY $SW $SH)" = 0 ] && [ "$(diff_ attn away $X $Y $W $H)" = 0 ]
ok $? "moving the mouse away brings back the keys and takes the outline away"

# a click on a head of the model grid opens it
send "model"
until_changed model attn $TX $TY $TW $TH
# (anywhere in the grid: at 1600 x 900 its layers stand in two blocks, a wider gap between them
# in the middle)
at=$("$PIX" --find "$T/model.png" 440154 $((X + 100)) $((Y + 150)) $((W - 300)) $((H - 300)))
[ -n "$at" ]; ok $? "the model grid is on the screen (a zero weight's colour at ${at:-nowhere})"
set -- $at
mouse "${1:-0}" "${2:-0}"
until_changed modelhover model $SX $SY $SW $SH
screen >"$T/term-before.txt"
DISPLAY=$D xdotool click 1
until_changed head modelhover $TX $TY $TW $TH; ok $? "a click on a panel of the grid changes the figure's title"
sleep 0.3
screen | cmp -s - "$T/term-before.txt"; ok $? "the window's click leaves the terminal and its prompt alone"
send "export $T/export-head.png"
waitfile "$T/export-head.png"
l=$(pngtext "$T/export-head.png" Layer) h=$(pngtext "$T/export-head.png" Head) tt=$(pngtext "$T/export-head.png" Title)
[ -n "$l" ] && [ -n "$h" ] && [ "${tt#Layer $l, head $h}" != "$tt" ]; ok $? "the click opened one head's attention: layer $l, head $h (\"$tt\")"

# full screen: F11 and f, there and back
mouse $((X + W / 2)) $((Y + H / 2))
key F11
i=0; while [ $i -lt "$(slow 50)" ] && [ "$(geom)" != "1920 1080 0 0" ]; do sleep 0.1; i=$((i + 1)); done
[ "$(geom)" = "1920 1080 0 0" ]; ok $? "F11: the window takes the whole 1920 x 1080 screen ($(geom))"
i=0; while [ $i -lt "$(slow 50)" ]; do shot full; [ "$(pixel full 1915 1075)" = f0f0f0 ] && break; sleep 0.1; i=$((i + 1)); done
[ "$(pixel full 1915 1075)" = f0f0f0 ] && [ "$(ink full 0 0 1920 120)" -gt 500 ]; ok $? "full screen: the figure is drawn for the screen, its status line at the screen's bottom"
key F11
i=0; while [ $i -lt "$(slow 50)" ] && [ "$(geom)" != "$W $H $X $Y" ]; do sleep 0.1; i=$((i + 1)); done
[ "$(geom)" = "$W $H $X $Y" ]; ok $? "F11 again: back to ${W}x$H+$X+$Y"
key f
i=0; while [ $i -lt "$(slow 50)" ] && [ "$(geom)" != "1920 1080 0 0" ]; do sleep 0.1; i=$((i + 1)); done
g1=$(geom)
key f
i=0; while [ $i -lt "$(slow 50)" ] && [ "$(geom)" != "$W $H $X $Y" ]; do sleep 0.1; i=$((i + 1)); done
[ "$g1" = "1920 1080 0 0" ] && [ "$(geom)" = "$W $H $X $Y" ]; ok $? "f does the same ($g1, then back)"

# text size: + twice makes the title larger (the box holds the title alone at either size)
mouse $((X + 10)) $((Y + 10))
settle size0
key plus plus
until_changed size1 size0 $X $Y $W 72
a=$(ink size0 $X $Y $W 72) b=$(ink size1 $X $Y $W 72)
[ "$b" -gt $((a * 13 / 10)) ]; ok $? "+ twice: the title's ink grows from $a to $b pixels (text size 125%)"
key 0
until_changed size2 size1 $X $Y $W 72
[ "$(diff_ size0 size2 $X $Y $W $((H - 40)))" = 0 ]; ok $? "0 brings the text size back to 100%"

# the temperature of next, on [ and ]
send "next"
until_changed next0 size2 $TX $TY $TW $TH
key bracketleft bracketleft bracketleft
until_changed next1 next0 $TX $TY $TW $TH; ok $? "[ redraws the next-token view at another temperature (its title changes)"
send "export $T/export-next.png"
waitfile "$T/export-next.png"
tt=$(pngtext "$T/export-next.png" Title)
[ "$(pngtext "$T/export-next.png" Temperature)" = 0.7 ] && { [ "${tt%T = 0.7)}" != "$tt" ] || [ "${tt%temperature 0.7}" != "$tt" ] || [ "${tt%(temperature 0.7)}" != "$tt" ]; }; ok $? "three times [ from T = 1: T = 0.7, in the PNG and its title (\"$tt\")"

# l: the head as lines and back
send "attn 3 2"
until_changed attn32 next1 $TX $TY $TW $TH
key l
until_changed lines attn32 $TX $TY $TW $TH
send "export $T/export-lines.png"
waitfile "$T/export-lines.png"
tt=$(pngtext "$T/export-lines.png" Title)
[ "$(pngtext "$T/export-lines.png" Layer)" = 3 ] && [ "$(pngtext "$T/export-lines.png" Head)" = 2 ] && [ "${tt#*who attends}" != "$tt" ]
ok $? "l draws layer 3, head 2 as lines (\"$tt\")"
key l
until_changed back lines $TX $TY $TW $TH
[ "$(diff_ attn32 back $X $Y $W $((H - 40)))" = 0 ]; ok $? "l again: the heatmap of the same head, pixel for pixel"

# a command without a figure: a card of what it printed, no stale figure
send "tokenize When Anna came home,"
until_changed card back $TX $TY $TW $TH
waitfor "·came"
[ "$(pixel card $((X + W - 4)) $((Y + H - 4)))" = ffffff ] && [ "$(ink card $((X + 40)) $((Y + 120)) 400 300)" -gt 1000 ] &&
	[ "$(ink card $((X + 900)) $((Y + 120)) 600 700)" = 0 ]
ok $? "tokenize: the window shows a card of its lines instead of the last figure"
send "run Anna"
until_changed card2 card $X $Y $W $H
[ "$(ink card2 $((X + 500)) $((Y + 420)) 600 60)" -gt 500 ] && [ "$(ink card2 $((X + 40)) $((Y + 120)) 1500 250)" -lt 10 ]
ok $? "run (it prints nothing): \"no figure for this command\" in the middle of the card"
key Tab
until_changed embed card2 $X $Y $W $H
[ "$(pixel embed $((X + W - 4)) $((Y + H - 4)))" = f0f0f0 ]; ok $? "Tab in the window after a card shows a stage of the new text"

# q closes the window; the prompt goes on
key q
i=0; while [ $i -lt "$(slow 50)" ] && [ -n "$(geom)" ]; do sleep 0.1; i=$((i + 1)); done
send "info"
[ -z "$(geom)" ] && waitfor "family      gpt2"; ok $? "q closes the window and the prompt goes on"
send "quit"
waitfor "EXIT=0"; ok $? "glassbox ends with status 0 (stderr: $(head -c 200 "$T/stderr" | tr '\n' ' '))"
exit $((fails > 0))
