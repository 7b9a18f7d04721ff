#!/bin/sh
# t_classroom_tui.sh — a class as people meet it, in tmux: the teacher at the prompt
# (glassbox --teach), a student at the prompt (glassbox --follow) who sees the teacher's
# figures appear, leaves to explore with a command of their own, comes back with `follow`,
# answers nothing it should not, and then follows inside the explorer, where the teacher's
# moves in the teacher's own explorer (keys, no command) arrive too. Port 0, a private tmux.
cd "$(dirname "$0")/.." || exit 1
if ! command -v tmux >/dev/null 2>&1; then
	echo "1..0 # SKIP tmux not installed"
	exit 0
fi
ROOT=$PWD
T=$(mktemp -d)
. tests/tap.sh
tmux_private "$T"
trap 'tmux_cleanup; rm -rf "$T"' EXIT
screen() { tmux capture-pane -p -t "$1"; }
# waitfor SESSION TEXT: up to 15 s for TEXT on the screen; absent SESSION TEXT: not there after 1 s
waitfor() { i=0; while [ $i -lt "$(slow 150)" ]; do screen "$1" | grep -qF -- "$2" && return 0; sleep 0.1; i=$((i + 1)); done; return 1; }
absent() { sleep 1; ! screen "$1" | grep -qF -- "$2"; }
start() { # start NAME ARGS
	tmux new-session -d -s "$1" -x 120 -y 45 \
		"cd $T && env XDG_STATE_HOME=$T/state TERM=xterm-256color $ROOT/glassbox $2; echo EXIT=\$?; sleep 30"
}

echo "1..15"

start teacher "--teach --port 0 --code 3-1-4-1"
waitfor teacher "glassbox --follow"
PORT=$(screen teacher | sed -n 's/.*glassbox --follow [0-9.]*:\([0-9]*\) --code 3-1-4-1.*/\1/p' | head -n 1)
check "glassbox --teach starts the prompt with the join line (port $PORT)" sh -c "[ -n '$PORT' ]"
tmux send-keys -t teacher "run When Mary and John went to the park, John gave a ball to" Enter "attn 1 2" Enter

start student "--follow 127.0.0.1:$PORT --code 3-1-4-1 --name ann"
waitfor student "teacher> attn 1 2"
ok $? "a student joining late catches up: the teacher's command is replayed at once"
waitfor student "Layer 1, head 2: attention weights"
ok $? "and its figure is drawn by the student's own engine"
tmux send-keys -t teacher "teach" Enter
waitfor teacher "1 following"
ok $? "teach shows one follower"

tmux send-keys -t teacher "attn 2 3" Enter
waitfor student "Layer 2, head 3: attention weights"
ok $? "the teacher's next figure follows within the wait"

tmux send-keys -t student "embed" Enter
waitfor student "exploring on your own"
ok $? "a command of the student's own leaves the teacher's view, saying how to come back"
tmux send-keys -t teacher "attn 3 4" Enter
absent student "Layer 3, head 4"
ok $? "while exploring, the teacher's new figure waits"
tmux send-keys -t student "follow" Enter
waitfor student "Layer 3, head 4: attention weights"
ok $? "follow catches up with the teacher at once"
tmux send-keys -t student "answer a" Enter
waitfor student "no question is open now"
ok $? "answer without a question: a one-line error"

# a lesson's question: the student answers on their own screen, the teacher sees the tally
printf '# Quiz\n\n== The question\n> attn 1 1\n\n? Which letter is right?\na) the first\nb) the second\n= b\n' >"$T/q.lesson"
tmux send-keys -t teacher "lesson $T/q.lesson" Enter
waitfor student "Question: Which letter is right?"
ok $? "the lesson's question appears on the student's screen"
tmux send-keys -t student "answer b" Enter
waitfor student "Sent: b"
waitfor teacher "Answers: right (b) ████████ 1"
ok $? "the teacher's prompt shows the answers as a live bar"
tmux send-keys -t teacher Enter Enter
waitfor teacher "End of the lesson"
tmux send-keys -t teacher "tally --names" Enter
waitfor teacher "ann: b"
ok $? "tally --names: the student's name and answer, on the teacher's screen only"

# the explorer: the student follows inside it; the teacher moves with keys in its own
tmux send-keys -t student "tui" Enter
waitfor student "[attn]"
tmux send-keys -t student ":follow" Enter
tmux send-keys -t teacher "attn 4 1" Enter
waitfor student "Layer 4, head 1"
ok $? "in the explorer, after :follow, the teacher's command arrives"
tmux send-keys -t teacher "tui" Enter
waitfor teacher "[attn]"
tmux send-keys -t teacher ">"
waitfor student "Layer 4, head 2"
ok $? "the teacher's key in its explorer (a figure no command made) reaches the student's explorer"
tmux send-keys -t teacher "q"
tmux send-keys -t teacher "teach end" Enter
waitfor teacher "Class ended (1 were following"
ok $? "teach end ends the class"
exit $((fails > 0))
