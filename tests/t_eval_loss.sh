#!/bin/sh
# t_eval_loss.sh — `eval DIR --preset NAME` measures the held-out loss on the batches training
# measured it on: for tiny-lm (stored as float32) it is the README's final held-out loss to the
# 4 decimals written there; for a variant stored as bf16 the README says what the stored weights
# give, and that is what is measured now. A preset of another vocabulary is refused in one line.
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
G=$PWD/glassbox
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
export XDG_DATA_HOME="$T/data" XDG_CONFIG_HOME="$T/config"
echo "1..4"
readme_loss() { sed -n 's/.*held-out \([0-9.]*\) (cross-entropy.*/\1/p' "assets/models/$1/README.md" | head -1; }
eval_loss() { $G eval "$1" --preset "$2" 2>&1 | sed -n "s/.*held-out loss on $2's held-out batches: \([0-9.]*\)$/\1/p"; }
want=$(readme_loss tiny-lm)
got=$(eval_loss tiny-lm tiny-lm)
check "tiny-lm: eval --preset gives the README's held-out loss ($got = $want)" test -n "$want" -a "$got" = "$want"
# the first shipped variant (stored as bf16): README's sentence about the stored weights
v=$(ls -d assets/models/tiny-lm-* 2>/dev/null | head -1)
if [ -n "$v" ]; then
	v=$(basename "$v")
	want=$(sed -n "s/.*stored weights' held-out loss is \([0-9.]*\).*/\1/p" "assets/models/$v/README.md")
	got=$(eval_loss "$v" "$v")
	check "$v (bf16): eval --preset gives what its README says of the stored weights ($got = $want)" \
		test -n "$want" -a "$got" = "$want"
else
	echo "ok 2 # SKIP no variant shipped"; n=$((n + 1))
fi
$G eval tiny-mt --preset tiny-lm >"$T/out" 2>"$T/err"
check "a preset of another vocabulary is refused in one line ($(cat "$T/err"))" \
	sh -c "test \$(wc -l <$T/err) -eq 1 && grep -q 'not the preset it was trained by' $T/err"
$G eval tiny-lm --preset no-such-preset >"$T/out" 2>"$T/err"
check "an unknown preset is refused in one line ($(cat "$T/err"))" \
	sh -c "test \$(wc -l <$T/err) -eq 1 && grep -q 'no-such-preset' $T/err"
exit $((fails > 0))
