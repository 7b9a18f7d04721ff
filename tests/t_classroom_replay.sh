#!/bin/sh
# t_classroom_replay.sh — what a follower repeats of the teacher's generation: the command
# table says generate and beam are replayed (tests/t_commands.c checks the table), and a
# follower caps their work (64 tokens, a beam 8 wide) since a frame is never trusted. Within
# the caps the follower ends on the teacher's exact state, its own figure's hash included;
# beyond them it says why in one line and follows on. Port 0, a temporary folder.
cd "$(dirname "$0")/.." || exit 1
G=./glassbox
. tests/tap.sh
T=$(mktemp -d)
TP=
trap '[ -n "$TP" ] && kill $TP 2>/dev/null; rm -rf "$T"' EXIT

echo "1..8"

# class NAME COMMANDS: a teacher runs COMMANDS, teaches one follower (--print) and ends;
# NAME.t is the teacher's output, NAME.out and NAME.err the follower's; $rc its status
class() {
	$G -c "run The cat sat on the mat; $2; teach --port 0 --code 2-7; teach --wait 1; teach --state; teach end" \
		>"$T/$1.t" 2>"$T/$1.terr" &
	TP=$!
	port=$(join_port "$T/$1.t")
	$G --follow "127.0.0.1:$port" --code 2-7 --print >"$T/$1.out" 2>"$T/$1.err"
	rc=$?
	wait $TP
	TP=
}
final() { grep '^final ' "$T/$1"; }
fig() { final "$1" | sed -n 's/.* fig=\([0-9a-f]*\).*/\1/p'; }
nofig() { final "$1" | sed 's/ fig=[0-9a-f]*//'; }
# same A B: the two final lines are equal (said on a failure)
same() {
	[ -n "$(final "$1")" ] && [ "$(final "$1")" = "$(final "$2")" ] && return 0
	echo "# $1: $(final "$1")" >&2
	echo "# $2: $(final "$2")" >&2
	return 1
}
drawn() { [ -n "$(fig "$1")" ] && [ "$(fig "$1")" != 0000000000000000 ]; }

class gen "gen 8 --temp 0"
r=1
[ $rc = 0 ] && same gen.out gen.t && drawn gen.t && have "$T/gen.t" 'view="gen 8 --temp 0"' && r=0
ok $r \
	"generate 8, typed as the prefix gen, is replayed: the follower ends on the teacher's state, its own figure's hash $(fig gen.out) included (status $rc)"
check "and prints nothing but the end of the class" test "$(cat "$T/gen.err")" = "glassbox: the teacher ended the class."

class gen65 "generate 65 --temp 0"
check "generate 65: the follower says in one line that it repeats at most 64 tokens (status $rc)" \
	grep -qx 'glassbox: the teacher generated 65 tokens: a follower repeats at most 64' "$T/gen65.err"
r=1
[ $rc = 0 ] && drawn gen65.t && [ "$(fig gen65.out)" != "$(fig gen65.t)" ] && [ "$(nofig gen65.out)" = "$(nofig gen65.t)" ] && r=0
ok $r "and does not draw the teacher's figure, but ends on the rest of its state (the longer text included)"

class beam "beam 3 8"
r=1
[ $rc = 0 ] && same beam.out beam.t && drawn beam.t && have "$T/beam.t" 'view="beam 3 8"' && r=0
ok $r "beam 3 8 is replayed: the follower ends on the teacher's state, figure hash included (status $rc)"

class beam9 "beam 9 4"
r=1
[ $rc = 0 ] && [ "$(fig beam9.out)" != "$(fig beam9.t)" ] &&
	grep -qx "glassbox: the teacher's beam is 9 wide for 4 steps: a follower repeats at most 8 wide for 64" "$T/beam9.err" && r=0
ok $r "beam 9 4: a follower repeats a beam at most 8 wide, and says so (status $rc)"
class beam65 "beam 2 65"
check "beam 2 65: and at most 64 steps (status $rc)" \
	grep -q 'beam is 2 wide for 65 steps: a follower repeats at most 8 wide for 64' "$T/beam65.err"

class curves "curves assets/models/tiny-lm"
r=1
[ $rc = 0 ] && drawn curves.t && have "$T/curves.t" 'view="curves assets/models/tiny-lm"' &&
	[ "$(fig curves.out)" != "$(fig curves.t)" ] && [ "$(nofig curves.out)" = "$(nofig curves.t)" ] && r=0
ok $r "a figure from a folder of the teacher's (curves DIR) is not repeated; the rest of the state is (status $rc)"
exit $((fails > 0))
