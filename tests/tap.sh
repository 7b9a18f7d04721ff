# tap.sh — TAP helpers shared by the shell tests (sourced from the repository root).
# ok STATUS DESC: one numbered result; check DESC CMD...: ok when CMD succeeds (quietly);
# have FILE TEXT: FILE contains TEXT. A script ends with `exit $((fails > 0))`.
n=0
fails=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails + 1)); fi; }
check() { desc=$1; shift; if "$@" >/dev/null 2>&1; then ok 0 "$desc"; else ok 1 "$desc"; fi; }
have() { grep -qF -- "$2" "$1"; }
