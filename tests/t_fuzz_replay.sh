#!/bin/sh
# t_fuzz_replay.sh — every fuzz harness (tests/fuzz/fz_NAME.c, linked with tests/fuzz/replay.c
# as build/tests/fz_NAME.replay by the ordinary build) runs once over its seed corpus and over
# tests/fuzz/regress/NAME/, the inputs that once crashed it: each must return without a crash,
# a sanitizer report (under `make check SANITIZE=...`) or a leak. The harnesses read
# tests/fuzz/ files by relative path, so this runs from the repository root.
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
set -- build/tests/fz_*.replay
[ -x "$1" ] || { echo "1..0 # SKIP no replay harnesses built (make check builds them)"; exit 0; }
cmdz=build/tests/fz_command.replay
echo "1..$(($# + $([ -x "$cmdz" ] && echo 1 || echo 0)))"
err=$(mktemp)
trap 'rm -f "$err"' EXIT
for bin in "$@"; do
	name=$(basename "$bin" .replay | sed 's/^fz_//')
	dirs="tests/fuzz/corpus/$name"
	[ -d "tests/fuzz/regress/$name" ] && dirs="$dirs tests/fuzz/regress/$name"
	"$bin" $dirs >/dev/null 2>"$err" </dev/null
	rc=$?
	out=$(grep -E "Sanitizer|runtime error|replay:|SUMMARY" "$err" | head -n 5)
	count=$(find $dirs -type f | wc -l | tr -d " ")
	if [ "$rc" = 0 ]; then ok 0 "fz_$name: $count inputs (seeds and regressions) run clean"; else
		ok 1 "fz_$name: exit status $rc over $count inputs"; echo "$out" | sed 's/^/# /'; fi
done
# fz_command runs what the command table marks REPLAY and lists every other command as run or
# skipped with a reason: one it has no word on (here 'export', dropped from its lists with
# FZ_COMMAND_FORGET) stops it before the first input, naming the command
if [ -x "$cmdz" ]; then
	FZ_COMMAND_FORGET=export "$cmdz" tests/fuzz/corpus/command >/dev/null 2>"$err" </dev/null
	rc=$?
	ok $([ $rc = 1 ] && grep -q "fz_command: the command table's 'export' is NO_REPLAY and neither run nor skipped" "$err"; echo $?) \
		"fz_command refuses to start when a NO_REPLAY command is neither run nor skipped for a reason (exit status $rc)"
fi
exit $((fails > 0))
