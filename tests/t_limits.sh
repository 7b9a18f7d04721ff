#!/bin/sh
# t_limits.sh — README's table of limits ("Limits: what glassbox accepts, and what happens past
# it") against the program, at both sides of a few of them: config.json's size (16 MiB) and
# d_model (65,536), a lesson file's size (4 MiB), a tokenizer's largest id (16,777,215), and a
# run past the model's context. At the limit the file is read (whatever fails next, it is not
# the limit); one past it, one line names the file and the limit.
cd "$(dirname "$0")/.." || exit 1
T=$(mktemp -d "${TMPDIR:-/tmp}/gb-limits.XXXXXX")
trap 'rm -rf "$T"' EXIT
G=$PWD/glassbox
. tests/tap.sh
echo "1..11"

# the README says it, in its table
lim=$(sed -n '/^## Limits: what glassbox accepts/,/^## /p' README.md)
ok $(printf '%s\n' "$lim" | grep -q '^| config.json | 16 MiB |' && printf '%s\n' "$lim" | grep -q '^| lesson file | 4 MiB;' &&
	printf '%s\n' "$lim" | grep -q 'd_model 65,536' && printf '%s\n' "$lim" | grep -q '16,777,215'; echo $?) \
	"README's limits table lists config.json 16 MiB, lesson 4 MiB, d_model 65,536, token ids to 16,777,215"

# pad_to FILE SIZE: FILE grown with spaces to exactly SIZE bytes
pad_to() {
	have=$(wc -c <"$1")
	head -c $(($2 - have)) /dev/zero | tr '\000' ' ' >>"$1"
}

"$G" -c "init $T/m --dim 8 --layers 1 --heads 2 --vocab 257 --context 8" >/dev/null 2>&1 || { echo "Bail out! init failed"; exit 1; }

# config.json: 16 MiB is read, one byte more is refused
cp -R "$T/m" "$T/c16" && pad_to "$T/c16/config.json" $((16 << 20))
"$G" -c "load $T/c16" >/dev/null 2>"$T/err"
ok $? "config.json of exactly 16 MiB (16,777,216 bytes) loads$(head -c 200 "$T/err")"
cp -R "$T/m" "$T/c17" && pad_to "$T/c17/config.json" $(((16 << 20) + 1))
"$G" -c "load $T/c17" >/dev/null 2>"$T/err"
ok $([ $? = 1 ] && grep -q "c17/config.json: larger than 16777216 bytes" "$T/err" && [ "$(wc -l <"$T/err")" = 1 ]; echo $?) \
	"config.json one byte past 16 MiB: one line naming the file and the limit ($(head -c 150 "$T/err"))"

# d_model: 65,536 passes the size check (the weights then do not match), 65,537 does not
setdim() { cp -R "$T/m" "$T/$1" && sed -i "s/\"n_embd\": *[0-9]*/\"n_embd\": $2/" "$T/$1/config.json"; }
setdim d64k 65536 && "$G" -c "load $T/d64k" >/dev/null 2>"$T/err"
ok $([ $? = 1 ] && ! grep -q "too large" "$T/err" && grep -q "d64k" "$T/err"; echo $?) \
	"d_model 65,536 is within the limit (the error is the weights': $(head -c 120 "$T/err"))"
setdim d64k1 65537 && "$G" -c "load $T/d64k1" >/dev/null 2>"$T/err"
ok $([ $? = 1 ] && grep -q "d64k1/config.json: sizes too large for glassbox" "$T/err"; echo $?) \
	"d_model 65,537: 'sizes too large for glassbox', naming config.json"

# a lesson: 4 MiB is read (prose), one byte more is refused
printf '# A long lesson\n\n== One step\nSome prose.\n' >"$T/l4.lesson"
pad_to "$T/l4.lesson" $((4 << 20))
"$G" -c "lesson $T/l4.lesson --check" >/dev/null 2>"$T/err"
ok $? "a lesson of exactly 4 MiB passes --check$(head -c 200 "$T/err")"
cp "$T/l4.lesson" "$T/l5.lesson" && printf ' ' >>"$T/l5.lesson"
"$G" -c "lesson $T/l5.lesson --check" >/dev/null 2>"$T/err"
ok $([ $? = 1 ] && grep -q "l5.lesson: larger than 4194304 bytes" "$T/err"; echo $?) \
	"a lesson one byte past 4 MiB: 'larger than 4194304 bytes' ($(head -c 150 "$T/err"))"

# tokenizer.json: ids up to 16,777,215 (2^24 - 1) load, 16,777,216 is refused
tok() {
	mkdir -p "$T/$1"
	printf '{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": %s}, "merges": ["a b"]}}\n' "$2" >"$T/$1/tokenizer.json"
}
tok t-max 16777215 && "$G" -c "tokenize --tokenizer $T/t-max ab" >"$T/out" 2>"$T/err"
ok $([ $? = 1 ] && ! grep -q "out of range" "$T/err" && grep -q "t-max/tokenizer.json: no token has id 2 (ids must run from 0 to 16777215 without gaps)" "$T/err"; echo $?) \
	"id 16,777,215 is within the range (the error is the gap below it: $(head -c 150 "$T/err"))"
tok t-over 16777216 && "$G" -c "tokenize --tokenizer $T/t-over ab" >/dev/null 2>"$T/err"
ok $([ $? = 1 ] && grep -q "t-over/tokenizer.json: .*id 16777216 .* out of range (0..16777215)" "$T/err"; echo $?) \
	"id 16,777,216: out of range, naming the file ($(head -c 150 "$T/err"))"

# a run past the context keeps its last n_ctx tokens and says so; at the context, no note
words=$(printf 'the cat %.0s' $(seq 1 100))
"$G" -c "run $words; print tokens" >"$T/out" 2>"$T/err"
ok $([ $? = 0 ] && grep -q "note: the text is [0-9]* tokens; kept the last 128 (the context)" "$T/err"; echo $?) \
	"tiny-lm (n_ctx 128): a 200-word run keeps its last 128 tokens and says so"
"$G" -c "run the cat; print tokens" >"$T/out" 2>"$T/err"
ok $([ $? = 0 ] && ! grep -q "kept the last" "$T/err"; echo $?) "a short run: no note"
exit $((fails > 0))
