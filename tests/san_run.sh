#!/bin/sh
# san_run.sh TEST — how `make check SANITIZE=...` runs each test (prove's -e): TEST with every
# sanitizer report of every process it starts written to a file of its own (log_path) instead
# of stderr, and TEST failed when any was written, the reports printed under its name. Many
# tests run glassbox with its stderr thrown away and its status unread, where they only look at
# what it printed (`2>/dev/null || echo 0`): a leak or an overflow there would pass unseen.
dir=${GB_SAN_REPORTS:-$PWD/build/sanitizer-reports}
rm -rf "$dir" && mkdir -p "$dir" || exit 1
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$dir/asan"
UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$dir/ubsan"
export ASAN_OPTIONS UBSAN_OPTIONS
"$@"
rc=$?
for f in "$dir"/*; do
	[ -s "$f" ] || continue
	echo "# $1: a sanitizer report ($(basename "$f")):" >&2
	sed 's/^/#   /' "$f" >&2
	[ "$rc" = 0 ] && rc=1
done
exit "$rc"
