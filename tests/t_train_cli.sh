#!/bin/sh
# t_train_cli.sh — `glassbox train --corpus FILE --resume` through the real binary (TAP), on a
# small generated text: a run stopped with Ctrl-C (SIGINT) and resumed ends with the same
# bits as an uninterrupted one and keeps the loss curves of both parts; a resume keeps the
# checkpoint's schedule whatever --steps says (after its end the rate stays at the floor);
# a checkpoint already at its target changes nothing; a missing or damaged loss.csv is said
# in one line and does not stop the resume; --resume into a new folder starts a run, into a
# folder without a checkpoint refuses.
#
# The runs train for a few dozen steps (about 0.05 s each). Determinism holds for one thread
# count: every run here uses the trainer's default (the machine's CPUs, up to 8).
cd "$(dirname "$0")/.." || exit 1
T=tests/tmp/train_cli
rm -rf "$T" && mkdir -p "$T"
G=./glassbox
. tests/tap.sh
# have2 FILE TEXT1 TEXT2: FILE contains both
have2() { have "$1" "$2" && have "$1" "$3"; }
# oneline FILE TEXT: FILE is one line, containing TEXT
oneline() { test "$(wc -l <"$1")" -eq 1 && have "$1" "$2"; }
# steps DIR: the steps of DIR/loss.csv on one line
steps() { sed 1d "$1/loss.csv" | cut -d, -f1 | tr '\n' ' ' | sed 's/ $//'; }
# row DIR STEP: that row of DIR/loss.csv
row() { grep "^$2," "$1/loss.csv"; }
# sums DIR: a checksum of every file in DIR, to see that nothing changed
sums() { (cd "$1" && cksum * | sort); }
# pts FROM TO: the curve's steps after FROM up to TO: every E-th step (the recipe's
# eval_every), and TO itself
pts() { awk -v a="$1" -v b="$2" -v e="$E" 'BEGIN { s = ""; for (i = (int(a / e) + 1) * e; i < b; i += e) s = s i " "; print s b }'; }
# train ARGS...: glassbox train with a time limit (a resume that ignored its target would
# train the recipe's 60 steps for this text, or more)
train() { timeout $(slow 120) $G train "$@"; }

# About 26 KB of sentences from 20 words (deterministic, no random generator needed).
awk 'BEGIN { split("the cat dog bird fish sat ran saw ate on under near a big small red blue house tree park", w, " ");
	for (i = 0; i < 600; i++) { s = ""; k = 6 + i % 8; for (j = 0; j < k; j++) s = s w[1 + (i * 7 + j * 13 + i * j) % 20] " "; print s "." } }' >"$T/c.txt"
C="--corpus $T/c.txt"
N=40
E=10 # the corpus recipe's eval_every for this text: its 60 steps / 20, but at least every 10

# -- an uninterrupted run of N steps
train $C --out "$T/a" --steps $N >"$T/a.out" 2>"$T/a.err"
ok $? "an uninterrupted run of $N steps"
check "its loss.csv has a point every $E steps: '$(steps "$T/a")'" test "$(steps "$T/a")" = "$(pts 0 $N)"

# -- the same run stopped with SIGINT once training has started, then resumed without --steps
$G train $C --out "$T/b" --steps $N >"$T/b.out" 2>"$T/b.err" &
pid=$! # glassbox's own (a function or timeout in between would get the signal instead)
i=0
while ! grep -q '^training corpus' "$T/b.out" 2>/dev/null && [ $i -lt $(slow 600) ]; do sleep 0.05; i=$((i + 1)); done
sleep 0.2 # a few steps in (any step before the last will do)
kill -INT $pid
wait $pid
ok $? "SIGINT stops the run with status 0"
K=$(sed -n 's/^stopped at step \([0-9]*\);.*/\1/p' "$T/b.out")
check "it says where it stopped and that --resume continues (step ${K:-none})" \
	sh -c "test -n '$K' && test '$K' -ge 1 && test '$K' -lt $N && grep -q 'continue with --resume' $T/b.out"
K=${K:-0}
check "the interrupted run's loss.csv ends with a point at step $K (the steps since the last point): '$(steps "$T/b")'" \
	test "$(steps "$T/b")" = "$(pts 0 $K)"
row "$T/b" $K >"$T/b.rowK"
cp -R "$T/b" "$T/b2" && cp -R "$T/b" "$T/b3" && cp -R "$T/b" "$T/b4"

train $C --out "$T/b" --resume >"$T/r.out" 2>"$T/r.err"
ok $? "the resume without --steps runs"
check "it says where it resumed, and trains to the checkpoint's $N (not the recipe's 60)" \
	have2 "$T/r.out" "$N steps of 16, " "(resumed at step $K)"
check "nothing on stderr" test ! -s "$T/r.err"
check "model.safetensors equals the uninterrupted run's, bit for bit" cmp "$T/a/model.safetensors" "$T/b/model.safetensors"
# the optimizer file also records the training time: blank its digits, then compare
untimed() { LC_ALL=C sed 's/"seconds":"[0-9.]*"/"seconds":"-"/' "$1"; }
secs() { LC_ALL=C grep -ao '"seconds":"[0-9.]*"' "$1" | sed 's/.*:"0*\([0-9]\{1,\}\.[0-9]\)"/\1/'; }
untimed "$T/a/optimizer.safetensors" >"$T/a.opt" && untimed "$T/b/optimizer.safetensors" >"$T/b.opt"
check "optimizer.safetensors too (moments, step, generator, options), but for the time it records" \
	cmp "$T/a.opt" "$T/b.opt"
check "the time it records is both parts' ($(secs "$T/b2/optimizer.safetensors") s, then $(secs "$T/b/optimizer.safetensors") s)" \
	awk -v x="$(secs "$T/b2/optimizer.safetensors")" -v y="$(secs "$T/b/optimizer.safetensors")" 'BEGIN { exit !(x != "" && y > x) }'
check "and the resumed run says the whole time and this run's" grep -q "^trained in [0-9.]* minutes ([0-9.]* in this run)" "$T/r.out"
check "loss.csv holds both parts in order, no gap or duplicate: steps '$(steps "$T/b")'" \
	test "$(steps "$T/b")" = "$(pts 0 $K) $(pts $K $N)"
check "the first part's row is kept as it was: $(cat "$T/b.rowK")" test "$(row "$T/b" $K)" = "$(cat "$T/b.rowK")"
check "the last row's held-out loss and rate equal the uninterrupted run's: $(row "$T/a" $N | cut -d, -f3,4)" \
	test "$(row "$T/b" $N | cut -d, -f3,4)" = "$(row "$T/a" $N | cut -d, -f3,4)"
check "loss.png is drawn from both parts (2 points)" test -s "$T/b/loss.png"
check "README.md reports all $N steps" have "$T/b/README.md" "$N steps of 16 sequences"

# -- a resume that stops early keeps the schedule; a third part then ends the same
M=$((K + 1))
if [ $M -lt $N ]; then
	train $C --out "$T/b2" --resume --steps $M >"$T/b2.out" 2>"$T/b2.err"
	ok $? "resume with --steps $M (before the schedule's end)"
	check "it says it keeps the checkpoint's schedule and stops early" \
		have "$T/b2.out" "keeping the checkpoint's schedule (cosine down to step $N): stopping at step $M, before it ends"
	check "the checkpoint still records the schedule's total=$N" grep -aq "total=$N " "$T/b2/optimizer.safetensors"
	train $C --out "$T/b2" --resume >"$T/b2.out" 2>"$T/b2.err"
	check "a third part without --steps goes on to $N: the same bits as the uninterrupted run" \
		cmp "$T/a/model.safetensors" "$T/b2/model.safetensors"
	check "and loss.csv has the three parts: '$(steps "$T/b2")'" test "$(steps "$T/b2")" = "$(pts 0 $K) $M $(pts $M $N)"
else
	for d in 1 2 3 4 5; do n=$((n + 1)); echo "ok $n # SKIP stopped at step $K, too late for a part before $N"; done
fi

# -- a damaged or missing loss.csv: one line, and the resume goes on with an empty curve
printf 'step,train_loss,heldout_loss,lr\n1,oops\n' >"$T/b3/loss.csv"
train $C --out "$T/b3" --resume --steps $((K + 1)) >"$T/b3.out" 2>"$T/b3.err"
ok $? "resume with a damaged loss.csv succeeds"
check "it says so in one line: $(head -c 150 "$T/b3.err")" \
	sh -c "test \$(wc -l <$T/b3.err) -eq 1 && grep -q '^glassbox: note: .*b3/loss.csv: line 2 is damaged' $T/b3.err"
check "loss.csv then starts again after step $K" test "$(steps "$T/b3")" = "$(pts $K $((K + 1)))"
rm "$T/b4/loss.csv"
train $C --out "$T/b4" --resume --steps $((K + 1)) >"$T/b4.out" 2>"$T/b4.err"
ok $? "resume without a loss.csv succeeds"
check "it says so in one line: $(head -c 150 "$T/b4.err")" \
	sh -c "test \$(wc -l <$T/b4.err) -eq 1 && grep -q '^glassbox: note: .*loss.csv.*start again after step $K' $T/b4.err"
check "loss.csv then starts again after step $K" test "$(steps "$T/b4")" = "$(pts $K $((K + 1)))"

# -- a text too small for its steps: the held-out loss turns up, and the run says so
awk 'BEGIN { srand(7); for (i = 0; i < 400; i++) { s = ""; for (j = 0; j < 5; j++) { w = "";
	for (k = 0; k < 2 + int(rand() * 5); k++) w = w sprintf("%c", 97 + int(rand() * 26)); s = s w " " } print s "." } }' >"$T/rnd.txt"
train --corpus "$T/rnd.txt" --out "$T/o" --steps 100 >"$T/o.out" 2>&1
ok $? "100 steps on 10 KB of random letters"
low=$(sed 1d "$T/o/loss.csv" | sort -t, -k3 -g | head -n 1 | cut -d, -f1)
check "it says the held-out loss was lowest at step ${low:-?} and rose (the loss.csv minimum)" \
	grep -q "^note: the held-out loss was lowest at step $low (" "$T/o.out"
check "and so does its README" have "$T/o/README.md" "The held-out loss was lowest at step $low"
check "a run whose held-out loss did not rise says nothing of it" sh -c "! grep -q 'lowest at step' $T/a.out $T/a/README.md"

# -- the schedule is the checkpoint's: 4 steps, then resumed to 8 at the floor rate
train $C --out "$T/s" --steps 4 >"$T/s.out" 2>&1
train $C --out "$T/s" --resume --steps 8 >"$T/s.out" 2>"$T/s.err"
ok $? "4 steps, then --resume --steps 8"
check "it says which schedule it keeps" \
	have "$T/s.out" "keeping the checkpoint's schedule: cosine down to step 4, then its floor rate 5e-05 to step 8"
check "loss.csv: steps '$(steps "$T/s")' = '4 8'" test "$(steps "$T/s")" = "4 8"
check "the rate at step 4 is the warm-up's 1e-3 * 4/10 ($(row "$T/s" 4 | cut -d, -f4))" \
	test "$(row "$T/s" 4 | cut -d, -f4)" = "0.00040000002"
check "at step 8, past the schedule's end, it is the floor 5e-5 ($(row "$T/s" 8 | cut -d, -f4); a schedule stretched to 8 would give 8e-04)" \
	test "$(row "$T/s" 8 | cut -d, -f4)" = "4.9999999e-05"
check "the checkpoint still records total=4" grep -aq "total=4 " "$T/s/optimizer.safetensors"
check "README.md says where the schedule ends" have "$T/s/README.md" "warm-up and cosine schedule ending at step 4"

# -- a checkpoint already at its target: one line, status 0, nothing changed
sums "$T/a" >"$T/a.sums"
train $C --out "$T/a" --resume >"$T/x.out" 2>"$T/x.err"
ok $? "resume of a finished run without --steps: status 0"
check "one line: $(cat "$T/x.out")" oneline "$T/x.out" "is already at step $N, where its schedule ends: nothing to train"
check "nothing on stderr" test ! -s "$T/x.err"
train $C --out "$T/a" --resume --steps 20 >"$T/x.out" 2>"$T/x.err"
ok $? "resume with --steps 20 of a run at step $N: status 0"
check "one line: $(cat "$T/x.out")" oneline "$T/x.out" "is already at step $N, past --steps 20: nothing to train"
check "no file of the folder changed" sh -c "sums() { (cd \$1 && cksum * | sort); }; sums $T/a | cmp -s - $T/a.sums"

# -- Ctrl-C while the data is prepared (tiny-lm's world takes over a second to write and
# tokenize; the signal goes as soon as the run says it is preparing): status 1, one line, no folder
$G train --preset tiny-lm --out "$T/cancel" >"$T/c.out" 2>"$T/c.err" &
pid=$!
i=0
while ! grep -q '^preparing the data' "$T/c.out" 2>/dev/null && [ $i -lt $(slow 400) ]; do sleep 0.02; i=$((i + 1)); done
kill -INT $pid
wait $pid
ok $(( $? == 1 ? 0 : 1 )) "Ctrl-C before the first step: status 1"
check "one line says nothing was written: $(cat "$T/c.err")" \
	oneline "$T/c.err" "glassbox: stopped by Ctrl-C before the first step: nothing was written"
check "and nothing was" test ! -e "$T/cancel"

# -- --resume into a folder that does not exist yet starts a run; one without a checkpoint refuses
train $C --out "$T/new" --resume --steps 2 >"$T/n.out" 2>"$T/n.err"
ok $? "--resume into a new folder trains"
check "it says it starts a new run" have "$T/n.out" "does not exist yet: starting a new run there"
check "and writes it (loss.csv at step 2)" test "$(steps "$T/new")" = "2"
mkdir "$T/empty"
train $C --out "$T/empty" --resume --steps 2 >"$T/e.out" 2>"$T/e.err"
ok $(( $? == 1 ? 0 : 1 )) "--resume into a folder without a checkpoint fails with status 1"
check "with one line: $(cat "$T/e.err")" sh -c "test \$(wc -l <$T/e.err) -eq 1 && grep -q 'has no checkpoint to resume' $T/e.err"
check "and writes nothing there" test -z "$(ls "$T/empty")"

echo "1..$n"
exit $((fails > 0))
