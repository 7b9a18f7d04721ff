#!/bin/sh
# t_classroom.sh — a class on loopback: a teacher (driven through a FIFO, as if typing) plays a
# 15-step lesson while 40 followers (--print: one state line per change) follow it; each ends on
# the teacher's exact state, its figure made by its own engine (the figure's hash included).
# One follower is killed mid-lesson and started again: it catches up at once. Followers answer
# the lesson's question and the teacher's tally counts them. A fuzzer throws random and
# malformed frames at the port meanwhile: each bad connection is logged and closed, and nothing
# else changes. Port 0 (a free one), a temporary folder, no other network.
cd "$(dirname "$0")/.." || exit 1
G=./glassbox
. tests/tap.sh
T=$(mktemp -d)
N=40
CODE=4-7-2-9
pids=
cleanup() {
	for p in $pids $TP; do kill "$p" 2>/dev/null; done
	exec 3>&- 2>/dev/null
	[ -n "$KEEP" ] && echo "# kept $T" || rm -rf "$T"
}
trap cleanup EXIT

echo "1..20"

cat >"$T/c.lesson" <<'EOF'
# Classroom test lesson

== One
> run When Mary and John went to the park, John gave a ball to
== Two
> attn 1 1
== Three
> attn 2 3
== Four
> scores 1 2
== Five
> embed
== Six
> pe
== Seven
> ln 1
== Eight
> next

? Which letter is right?
a) the first
b) the second
c) the third
= b
== Nine
> ffn 1
== Ten
> resid
== Eleven
> heads 2
== Twelve
> run The cat sat on the mat
== Thirteen
> attn 1 2
== Fourteen
> step
== Fifteen
> step
EOF

# until_n N PATTERN FILES...: waits (up to 40 s) until N of FILES have PATTERN on their last line
until_n() {
	_want=$1 _pat=$2
	shift 2
	_i=0
	while [ $_i -lt "$(slow 800)" ]; do
		_got=$(awk -v p="$_pat" 'FNR == 1 { seen[FILENAME] = 1 } { last[FILENAME] = $0 }
			END { c = 0; for (f in last) if (index(last[f], p)) c++; print c }' "$@" 2>/dev/null)
		[ "${_got:-0}" -ge "$_want" ] && return 0
		sleep 0.05
		_i=$((_i + 1))
	done
	echo "# waited for $_want files with '$_pat' on their last line: $_got" >&2
	return 1
}

mkfifo "$T/in"
$G -c "teach --port 0 --code $CODE; lesson $T/c.lesson --interactive; teach --state; tally --names; teach end" \
	<"$T/in" >"$T/teacher.out" 2>"$T/teacher.err" &
TP=$!
exec 3>"$T/in"
PORT=$(join_port "$T/teacher.out")
check "teach --port 0 prints a join line with the port it got and the code" \
	sh -c "[ -n '$PORT' ] && [ '$PORT' -gt 0 ] && grep -q -- '--code $CODE' '$T/teacher.out'"

# a wrong code is refused with a message, and the follower exits 1
$G --follow "127.0.0.1:$PORT" --code 0-0-0-0 --print >"$T/wrong.out" 2>"$T/wrong.err"
rc=$?
check "a follower with a wrong code is refused (status $rc): 'wrong code' on its stderr" \
	sh -c "[ $rc = 1 ] && grep -q 'wrong code' '$T/wrong.err'"

files=
k=1
while [ $k -le $N ]; do
	case $((k % 4)) in 0) a=b ;; 1) a=a ;; 2) a=c ;; 3) a=- ;; esac
	$G --follow "127.0.0.1:$PORT" --code $CODE --name "student$k" --print --answers "$a" >"$T/f$k.out" 2>"$T/f$k.err" &
	pids="$pids $!"
	files="$files $T/f$k.out"
	k=$((k + 1))
done
# the follower that is killed and started again
$G --follow "127.0.0.1:$PORT" --code $CODE --print >"$T/k1.out" 2>"$T/k1.err" &
KP=$!
pids="$pids $KP"
until_n $((N + 1)) "step=1/15" $files "$T/k1.out"
ok $? "all $N followers (and one more) caught up with step 1 on joining"

fuzz() {
	/usr/bin/python3 - "$PORT" "$CODE" >"$T/fuzz.out" 2>&1 <<'EOF'
import random, socket, struct, sys, time
port, code = int(sys.argv[1]), sys.argv[2].encode()
random.seed(14)
def frame(t, fields, ver=1):
    body = bytes([ver, t]) + b"".join(bytes([k]) + struct.pack(">I", len(v)) + v for k, v in fields)
    return struct.pack(">I", len(body)) + body
hello = frame(1, [(20, code), (21, b"fuzz")])
cases = [("oversized", struct.pack(">I", 10**9) + b"x" * 64),
         ("version", frame(1, [(20, code), (21, b"v")], ver=9)),
         ("wrong code", frame(1, [(20, b"0-0-0-0"), (21, b"w")])),
         ("malformed", struct.pack(">I", 6) + bytes([1, 1, 20, 0, 0, 0])),
         ("type", frame(9, [])),
         ("state from a follower", hello + frame(2, [(1, bytes(8)), (2, bytes(8)), (12, b"quit")])),
         ("answer before hello", frame(3, [(17, bytes([0, 0, 0, 1])), (23, b"b")])),
         ("truncated", hello[:7])]
for i in range(40):
    cases.append(("random", bytes(random.getrandbits(8) for _ in range(random.randint(1, 3000)))))
for i in range(20):
    cases.append(("hello+random", hello + bytes(random.getrandbits(8) for _ in range(random.randint(1, 500)))))
closed = 0
for what, data in cases:
    s = socket.create_connection(("127.0.0.1", port))
    try:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    s.settimeout(5)
    try:
        while s.recv(65536):
            pass
        closed += 1
    except OSError:
        closed += 1  # reset by the teacher: closed too
    s.close()
print("closed %d of %d" % (closed, len(cases)))
EOF
}

step=1
while [ $step -lt 15 ]; do
	if [ $step = 8 ]; then
		# the question: every follower sees it (and answers, or not), then the teacher looks
		# at the tally, exports it, and moves on (Enter skips its own answer)
		until_n $N "q=1" $files || echo "# not every follower saw the question"
		sleep 0.3
		printf ':tally\n:export %s\n\n' "$T/tally.svg" >&3
	fi
	[ $step = 5 ] && kill -9 $KP
	[ $step = 11 ] && fuzz
	echo >&3
	step=$((step + 1))
	until_n $N "step=$step/15" $files || echo "# step $step did not reach every follower"
	if [ $step = 9 ]; then
		$G --follow "127.0.0.1:$PORT" --code $CODE --print >"$T/k2.out" 2>"$T/k2.err" &
		KP2=$!
		pids="$pids $KP2"
		until_n 1 "step=9/15" "$T/k2.out"
		ok $? "the killed follower, started again, catches up at step 9 at once"
		check "its first state line is already step 9 (a snapshot, no replay of steps 1-8)" \
			sh -c "head -n 1 '$T/k2.out' | grep -q 'step=9/15'"
	fi
done
echo >&3 # the end of the lesson; then teach --state, tally, teach end
exec 3>&-
i=0
while [ $i -lt "$(slow 600)" ] && kill -0 $TP 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
wait $TP
ok $? "the teacher's session ran to the end (status 0)"
for p in $pids; do
	[ "$p" = "$KP" ] && continue
	i=0
	while [ $i -lt "$(slow 200)" ] && kill -0 "$p" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
	wait "$p"
	echo $? >>"$T/status"
done

final=$(grep '^final ' "$T/teacher.out")
check "the teacher printed its final state, on the last figure of the lesson" \
	sh -c "echo '$final' | grep -q 'view=\"step\" cursor=' && ! echo '$final' | grep -q 'fig=0000000000000000'"
same=0
for f in $files "$T/k2.out"; do
	[ "$(grep '^final ' "$f")" = "$final" ] && same=$((same + 1))
done
ok $([ $same = $((N + 1)) ] && echo 0 || echo 1) "all $((N + 1)) followers end on the teacher's exact state, figure hash included ($same did)"
[ $same = $((N + 1)) ] || { echo "# teacher: $final"; for f in $files; do grep '^final ' "$f" | head -1; done | sort | uniq -c | head -5; }
steps=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^step=[0-9]+\/15$/) print FILENAME, $i }' $files | sort -u | wc -l)
ok $([ "$steps" -ge $((N * 15)) ] && echo 0 || echo 1) "each follower showed every one of the 15 steps ($steps file-step pairs of $((N * 15)))"
ended=0
for k in $(seq 1 $N); do
	[ "$(cat "$T/f$k.err")" = "glassbox: the teacher ended the class." ] && ended=$((ended + 1))
done
ok $([ $ended = $N ] && echo 0 || echo 1) "each follower's only message: the teacher ended the class ($ended of $N)"
check "and each exited with status 0" test "$(cat "$T/status")" = "$(printf '0\n%.0s' $(seq 1 $((N + 1))))"

# the tally: followers k%4 == 0 answered b (right), 1 a, 2 c, 3 nothing
check "tally: 10 right (b), 10 a), 10 c), 10 no answer yet" \
	sh -c "grep -Eq '^  right \(b\) +10$' '$T/teacher.out' && grep -Eq '^  a\) the first +10$' '$T/teacher.out' &&
	       grep -Eq '^  c\) the third +10$' '$T/teacher.out' && grep -Eq '^  no answer yet +10$' '$T/teacher.out'"
check "tally --names lists the names, which stay on the teacher's machine" \
	sh -c "grep -q '^  student4: b' '$T/teacher.out' && ! grep -rq student4 $T/f*.out"
check "export saves the tally as a bar chart (SVG)" sh -c "grep -q 'Answers to question 1' '$T/tally.svg' && grep -q 'no.*answer.*yet' '$T/tally.svg' &&
	       grep -q 'right.*(b)' '$T/tally.svg' && ! grep -q 'd)' '$T/tally.svg'"

# the fuzzer's connections: every one closed, each bad kind with its reason logged
check "the fuzzer's connections were all closed: $(cat "$T/fuzz.out")" grep -q 'closed 68 of 68' "$T/fuzz.out"
check "the teacher logged each kind: oversized, wrong version, wrong code, malformed, a follower's state, no hello" \
	sh -c "grep -q 'closed 127.0.0.1:[0-9]*: oversized message' '$T/teacher.err' &&
	       grep -q 'wrong protocol version 9' '$T/teacher.err' && grep -q ': wrong code' '$T/teacher.err' &&
	       grep -q 'malformed message' '$T/teacher.err' && grep -q 'may not send state messages' '$T/teacher.err' &&
	       grep -q 'spoke before its hello' '$T/teacher.err'"

# the model's identity: a follower without the teacher's model is told so (and exits 1); one
# given a copy with --model follows
$G -c "init $T/m --seed 5; load $T/m; run hello world; attn 1 2; teach --port 0 --code 9-9; teach --wait 2; teach --state; teach end" \
	>"$T/t2.out" 2>"$T/t2.err" &
TP=$!
P2=$(join_port "$T/t2.out")
$G --follow "127.0.0.1:$P2" --code 9-9 --print >"$T/m1.out" 2>"$T/m1.err" &
M1=$!
$G --follow "127.0.0.1:$P2" --code 9-9 --print --model "$T/m" >"$T/m2.out" 2>"$T/m2.err"
m2=$?
wait $M1
m1=$?
wait $TP
check "a follower without the teacher's model: status 1 and a message naming it and what to do" \
	sh -c "[ $m1 = 1 ] && grep -q 'The teacher uses the model m (hash [0-9a-f]*), which this glassbox does not have.*--model DIR' '$T/m1.err'"
check "one given a copy with --model ends on the teacher's state (status $m2)" \
	sh -c "[ $m2 = 0 ] && [ \"\$(grep '^final ' '$T/m2.out')\" = \"\$(grep '^final ' '$T/t2.out')\" ] && grep -q 'view=\"attn 1 2\"' '$T/t2.out'"

# a connection that drops (the teacher's glassbox dies and starts again on its port): the
# follower tries again by itself and catches up with the new session at once
$G -c "run When Mary; attn 1 1; teach --port 0 --code 5-5; teach --wait 2" >"$T/t3.out" 2>"$T/t3.err" &
TP=$!
P3=$(join_port "$T/t3.out")
$G --follow "127.0.0.1:$P3" --code 5-5 --print >"$T/r.out" 2>"$T/r.err" &
RP=$!
pids="$pids $RP"
until_n 1 'view="attn 1 1"' "$T/r.out"
kill -9 $TP
wait $TP 2>/dev/null
$G -c "run When Mary and John; attn 2 2; teach --port $P3 --code 5-5; teach --wait 1; teach --state; teach end" \
	>"$T/t4.out" 2>"$T/t4.err"
wait $RP
rc=$?
check "the follower saw the connection drop and came back by itself" \
	sh -c "grep -q 'Lost the teacher' '$T/r.err' && grep -q 'Back with the teacher' '$T/r.err'"
check "and ended on the new session's state (status $rc)" \
	sh -c "[ $rc = 0 ] && grep -q 'view=\"attn 2 2\"' '$T/t4.out' && [ \"\$(grep '^final ' '$T/r.out')\" = \"\$(grep '^final ' '$T/t4.out')\" ]"

# latency: from the teacher's send to the follower's own figure, every update but the catch-ups
awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^applied_us=/) { sub("applied_us=", "", $i); if (FNR > 1) print $i } }' $files |
	sort -n >"$T/lat"
bytes=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^bytes=/) { sub("bytes=", "", $i); if (FNR > 1) { s += $i; n++ } } } END { if (n) printf "%d", s / n }' $files)
n=$(wc -l <"$T/lat")
echo "# latency teacher -> follower's figure over $n updates: median $(sed -n "$(((n + 1) / 2))p" "$T/lat") us, max $(tail -n 1 "$T/lat") us; $bytes bytes per update on average"
exit $((fails > 0))
