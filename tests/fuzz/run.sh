#!/bin/sh
# run.sh SECONDS HARNESS... -- runs each libFuzzer harness (build/fuzz/fz_NAME) for SECONDS
# (FUZZ_BUDGET="NAME=S ..." gives one its own) on its seed corpus (tests/fuzz/corpus/NAME, read
# only) plus a working corpus it grows (build/fuzz/corpus/NAME), one after another, from the
# repository root (the harnesses read tests/fuzz/ files by relative path). Crashes, leaks and sanitizer reports are written to
# build/fuzz/crashes/ and make the run fail. Each harness's figures (executions, exec/s,
# libFuzzer's cov and ft) go to build/fuzz/report.txt (FUZZ_REPORT names another, so that two
# runs side by side keep their own) and stdout. `make fuzz` calls this.
secs=$1
shift
cd "$(dirname "$0")/../.." || exit 1
mkdir -p build/fuzz/crashes build/fuzz/logs
report=${FUZZ_REPORT:-build/fuzz/report.txt}
fail=0
printf '%-16s %8s %12s %10s %8s %8s %s\n' harness seconds executions exec/s cov ft result >"$report"
for bin in "$@"; do
	name=$(basename "$bin" | sed 's/^fz_//')
	# FUZZ_BUDGET="calc=600 lesson=300" gives some harnesses their own number of seconds
	t=$secs
	for kv in ${FUZZ_BUDGET:-}; do [ "${kv%%=*}" = "$name" ] && t=${kv#*=}; done
	mkdir -p "build/fuzz/corpus/$name"
	log=build/fuzz/logs/$name.log
	"$bin" "build/fuzz/corpus/$name" "tests/fuzz/corpus/$name" -max_total_time="$t" -timeout=20 \
		-rss_limit_mb=2048 -close_fd_mask=3 -print_final_stats=1 \
		-artifact_prefix="build/fuzz/crashes/$name-" >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	persec=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
	last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
	cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	if [ "$rc" = 0 ]; then res=ok; else res="FAILED (rc $rc, $log)"; fail=1; fi
	printf '%-16s %8s %12s %10s %8s %8s %s\n' "$name" "$t" "${runs:-?}" "${persec:-?}" "${cov:-?}" "${ft:-?}" "$res" >>"$report"
done
cat "$report"
exit $fail
