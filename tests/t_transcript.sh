#!/bin/sh
# t_transcript.sh — golden transcripts: scripts run through the real binary, their whole
# output compared with tests/golden/transcript-*.txt. The model is a random one written by
# `init` (the same seed gives the same weights everywhere) and the engine is ref, so the
# numbers do not depend on the CPU. GB_GOLDEN_WRITE=1 rewrites the golden files (read them
# before committing). The session-* transcripts are one representative session on the two
# terminals a class meets, 80x24 and 160x48 (a figure may take the lines the prompt leaves:
# 22 and 46); t_repl.sh runs the same session in tmux at those sizes.
cd "$(dirname "$0")/.." || exit 1
T=tests/tmp/transcript
rm -rf "$T" && mkdir -p "$T"
./glassbox -c "init $T/m --seed 11" || exit 1
n=0
fails=0
echo "1..6"
cols=100 lines=60
transcript() { # name, then one or more scripts, each run by its own glassbox
	n=$((n + 1))
	name=$1
	shift
	: >"$T/$name.txt"
	for script in "$@"; do
		echo "\$ glassbox -c \"$script\"" >>"$T/$name.txt"
		COLUMNS=$cols LINES=$lines NO_COLOR=1 ./glassbox -c "$script" >>"$T/$name.txt" 2>&1
		echo "exit $?" >>"$T/$name.txt"
	done
	set -- "$name"
	sed -i "s|$T/|MODEL/|g" "$T/$1.txt"
	if [ "${GB_GOLDEN_WRITE:-}" = 1 ]; then
		cp "$T/$1.txt" "tests/golden/transcript-$1.txt"
	fi
	if diff -u "tests/golden/transcript-$1.txt" "$T/$1.txt" >"$T/$1.diff"; then
		echo "ok $n - transcript $1"
	else
		echo "not ok $n - transcript $1"
		sed 's/^/# /' "$T/$1.diff" | head -40
		fails=$((fails + 1))
	fi
}
transcript basics "load $T/m; set engine ref; info; tokenize --steps hello there; run hello there; trace; print L1.attn.weights; next 5"
transcript views "load $T/m; set engine ref; run the cat sat; attn 2 3; scores 1 1 raw; ln 1; resid; heads; calc softmax 1 2 3, 3 2 1 --causal"
transcript errors "load $T/m; run abc; attn 3 1" "load $T/m; run abc; show L1.attn.weight" \
	"load $T/m; run abc; dump logits /nonexistent/x.npy" "load $T/m; atn 1 1" "load $T/m; a 1 1" "load $T/m; run" \
	"load $T/m; attn one 1" "load $T/missing" "attn 1 1" "load $T/m; run abc; generate 2 --temp -1" \
	"load $T/m; translate 3 May" "load $T/m; run abc; export $T/x.bmp" "load $T/m; export $T/x.png"
# One session as a class sees it, at 80x24 and at 160x48: every line within the width, every
# row of a heatmap on its own line, help in families, columns by display width.
# It runs on tiny-lm (the sentence and the heads the issue was written about) with the ref
# engine, whose numbers do not depend on the CPU.
session="load tiny-lm; set engine ref; run When Mary and John went to the park, John gave a ball to; attn 3 2; resid; model; help; generate 3 --top-k 1; tokenize --steps When Mary gave the ball; ablate 3 2"
cols=80 lines=22
transcript session-80x24 "$session"
cols=160 lines=46
transcript session-160x48 "$session"
cols=100 lines=60
# A script that loads nothing gets the default model, tiny-lm, as the prompt does.
out=$(./glassbox -c "run The dog; info" 2>&1)
if echo "$out" | grep -q "^model .*/assets/models/tiny-lm$" && echo "$out" | grep -q "vocabulary  1727"; then
	echo "ok 6 - a script without 'load' runs on tiny-lm"
else
	echo "not ok 6 - a script without 'load' runs on tiny-lm"
	echo "$out" | sed 's/^/# /' | head -5
	fails=$((fails + 1))
fi
exit $((fails > 0))
