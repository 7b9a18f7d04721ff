#!/bin/sh
# t_classroom_window.sh — the class in the projector window, on a virtual screen (Xvfb): a
# student's window shows the teacher's figure, pixel for pixel the window a glassbox of its own
# draws for the same command; a key in the student's window leaves the teacher's view; the
# teacher's window shows the tally of a lesson's question live. Screenshots (xwd) are judged by
# the pixel tool in build/tests/t_window.t; they stay in tests/tmp/classroom_window.
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
for tool in tmux Xvfb xdotool xwd xwininfo convert; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "1..0 # SKIP $tool is not installed"
		exit 0
	fi
done
PIX=build/tests/t_window.t
if [ ! -x "$PIX" ]; then
	echo "1..0 # SKIP build the tests first (make check)"
	exit 0
fi
T=$PWD/tests/tmp/classroom_window
rm -rf "$T" && mkdir -p "$T"
if ! xvfb_start 1920x1080x24; then
	echo "1..0 # SKIP Xvfb did not start"
	exit 0
fi
tmux_private "$T"
trap 'tmux_cleanup; [ -n "$XPID" ] && kill "$XPID" 2>/dev/null && wait "$XPID" 2>/dev/null' EXIT
echo "1..7"

screen() { tmux capture-pane -p -t "$1"; }
waitfor() { i=0; while [ $i -lt "$(slow 150)" ]; do screen "$1" | grep -qF -- "$2" && return 0; sleep 0.1; i=$((i + 1)); done; return 1; }
send() { tmux send-keys -t "$1" "$2" Enter; }
geom() { DISPLAY=$D xwininfo -root -tree 2>/dev/null | awk '/"glassbox"/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+x[0-9]+\+/) { split($i, a, /[x+]/); print a[1], a[2], a[3], a[4]; exit } }'; }
shot() { DISPLAY=$D xwd -root -silent | convert xwd:- "$T/$1.png"; }
diff_() { "$PIX" --diff "$T/$1.png" "$T/$2.png" "$3" "$4" "$5" "$6"; }
# settle NAME: screenshots into NAME until two in a row have the same pixels (the window has
# redrawn); pixels, not bytes: convert stamps each PNG with the time
settle() { shot "$1"; i=0; while [ $i -lt "$(slow 50)" ]; do sleep 0.1; shot settle; [ "$(diff_ settle "$1" 0 0 1920 1080)" = 0 ] && return 0; mv "$T/settle.png" "$T/$1.png"; i=$((i + 1)); done; return 1; }
until_changed() { n_=$1 b_=$2; shift 2; i=0; while [ $i -lt "$(slow 150)" ]; do shot "$n_"; [ "$(diff_ "$b_" "$n_" "$@")" -gt 0 ] && { settle "$n_"; return 0; }; sleep 0.1; i=$((i + 1)); done; return 1; }
# window NAME: waits for a glassbox window and sets W H X Y from it (says why in the failing
# tests' log when none came: the last lines of NAME's terminal and stderr)
window() {
	w_=$1 i=0; while [ $i -lt "$(slow 600)" ] && [ -z "$(geom)" ]; do sleep 0.1; i=$((i + 1)); done
	set -- $(geom); W=${1:-0} H=${2:-0} X=${3:-0} Y=${4:-0}
	[ "$W" -gt 0 ] && return 0
	diag "no window for $w_ after $(slow 60) s; its screen ends: $(screen "$w_" | grep . | tail -n 3 | tr '\n' '|')" \
		"its stderr: $(head -c 300 "$T/$w_.err" 2>/dev/null | tr '\n' '|')" \
		"windows: $(DISPLAY=$D xwininfo -root -tree 2>&1 | grep -c 0x) listed, $(DISPLAY=$D xwininfo -root -tree 2>&1 | grep -i glassbox | head -n 2 | tr '\n' '|')"
	return 1
}
# why NAME: what the failing tests' log should know of a window that did not change (after
# until_changed: n_ is its last shot)
why() { diag "window ${W}x$H+$X+$Y (now: $(geom)), ink in the last shot's box $("$PIX" --ink "$T/$n_.png" $X $Y $W $H); $1's screen ends: $(screen "$1" | grep . | tail -n 2 | tr '\n' '|') stderr: $(head -c 200 "$T/$1.err" 2>/dev/null | tr '\n' '|')"; }
start() { # start NAME DISPLAY ARGS
	tmux new-session -d -s "$1" -x 120 -y 45 \
		"env DISPLAY=$2 XDG_STATE_HOME=$T/state TERM=xterm-256color ./glassbox $3 2>$T/$1.err; echo EXIT=\$?; sleep 30"
}
TEXT="When Mary and John went to the park, John gave a ball to"
DISPLAY=$D xdotool mousemove 3 3

# the reference: a glassbox of its own draws attn 2 3 in its window
start ref "$D" ""
waitfor ref "glassbox>"
send ref "run $TEXT"
send ref "window"
window ref
shot blank
send ref "attn 2 3"
until_changed ref blank $X $Y $W $H || why ref
send ref "quit"
i=0; while [ $i -lt "$(slow 100)" ] && [ -n "$(geom)" ]; do sleep 0.1; i=$((i + 1)); done

# the class: the teacher has no window (no display), the student's window follows
start teacher "" "--teach --port 0 --code 2-7"
waitfor teacher "glassbox --follow"
PORT=$(screen teacher | sed -n 's/.*glassbox --follow [0-9.]*:\([0-9]*\) --code 2-7.*/\1/p' | head -n 1)
send teacher "run $TEXT"
send teacher "attn 1 1"
start student "$D" "--follow 127.0.0.1:$PORT --code 2-7 --name bo"
waitfor student "Layer 1, head 1: attention weights"
send student "window"
RW="$W $H $X $Y"
window student && [ "$W $H $X $Y" = "$RW" ]; ok $? "the student's window opens where and as large as the reference's ($W $H $X $Y, $RW)"
settle s1
send teacher "attn 2 3"
until_changed s2 s1 $X $Y $W $H; r=$?; [ $r = 0 ] || why student
ok $r "the teacher's next figure changes the student's window"
# the status line may name the window's keys differently: the figure above it must match
d=$(diff_ ref s2 $X $Y $W $((H - 40)))
ok $([ "$d" = 0 ] && echo 0 || echo 1) "the student's window draws the teacher's figure exactly as a glassbox of its own does ($d pixels differ)"

# a key in the student's window: exploring, the teacher's next figure waits
DISPLAY=$D xdotool mousemove $((X + W / 2)) $((Y + H / 2)) click 1
DISPLAY=$D xdotool key Right
sleep 0.5
settle s3
send teacher "attn 4 4"
sleep 1
settle s4
d=$(diff_ s3 s4 $X $Y $W $((H - 40)))
ok $([ "$d" = 0 ] && echo 0 || echo 1) "after a key in the student's window, the teacher's next figure waits ($d pixels changed)"
send student "follow"
waitfor student "Following the teacher again"
until_changed s5 s4 $X $Y $W $((H - 40)); r=$?; [ $r = 0 ] || why student
ok $r "follow brings the teacher's figure back into the window"
send student "quit"
i=0; while [ $i -lt "$(slow 100)" ] && [ -n "$(geom)" ]; do sleep 0.1; i=$((i + 1)); done

# the teacher's window: the tally of a question, live
printf '# Quiz\n\n== The question\n> attn 1 1\n\n? Which letter is right?\na) the first\nb) the second\n= b\n' >"$T/q.lesson"
tmux kill-session -t teacher
start teacher "$D" "--teach --port 0 --code 2-8"
waitfor teacher "glassbox --follow"
PORT=$(screen teacher | sed -n 's/.*glassbox --follow [0-9.]*:\([0-9]*\) --code 2-8.*/\1/p' | head -n 1)
send teacher "window"
window teacher
start s2 "" "--follow 127.0.0.1:$PORT --code 2-8"
waitfor teacher "joined"
send teacher "lesson $T/q.lesson"
waitfor s2 "Question: Which letter is right?"
settle q0
send s2 "answer a"
waitfor teacher "Answers: right (b) 0"
ok $? "the teacher's prompt shows the answer"
until_changed q1 q0 $X $Y $W $H; r=$?; [ $r = 0 ] || why teacher
ok $r "and the teacher's window turns to the tally"
exit $((fails > 0))
