#!/bin/sh
# t_badinput.sh — the bad-input table: broken lessons (calc/pick nested 50,000 deep, 1/0),
# config.json, model.safetensors, sharded indexes, tokenizer.json, vocab.json + merges.txt,
# llama2.c checkpoints and tokenizer.bin, and command lines, each run through the real
# binary. Every row asserts the exit status (1: an error, never a crash), that stderr names the
# file and the problem, that nothing was left half-written (no temporary file, no file made
# under the target's name) and, for the writers, that an existing file is kept.
# tests/badinput/make_cases.py writes the broken files.
cd "$(dirname "$0")/.." || exit 1
T=$(mktemp -d "${TMPDIR:-/tmp}/gb-badinput.XXXXXX")
trap 'rm -rf "$T"' EXIT
G=$PWD/glassbox
. tests/tap.sh

$G -c "init $T/good-gpt2 --dim 8 --layers 1 --heads 2 --vocab 257 --context 8; init $T/good-l --preset llama --dim 16 --layers 1 --heads 2 --kv-heads 1 --vocab 260 --context 8" >/dev/null 2>"$T/init.err" ||
	{ echo "1..0 # SKIP could not make the good models: $(cat "$T/init.err")"; exit 0; }
python3 tests/badinput/make_cases.py "$T" || { echo "Bail out! make_cases.py failed"; exit 1; }

# row RC FILE PROBLEM COMMANDS: runs `glassbox -c COMMANDS` in $T; RC is the exit status it must
# give, FILE and PROBLEM texts stderr must contain (FILE "-": a command-line case, no file).
row() {
	want=$1 file=$2 problem=$3 cmds=$4
	(cd "$T" && exec "$G" -c "$cmds") >"$T/out" 2>"$T/err"
	rc=$?
	why=""
	[ "$rc" = "$want" ] || why="exit status $rc, expected $want;"
	[ "$file" = - ] || grep -qF -- "$file" "$T/err" || why="$why stderr does not name $file;"
	grep -qF -- "$problem" "$T/err" || why="$why stderr does not say '$problem';"
	! grep -q "Sanitizer\|runtime error\|Segmentation\|Aborted" "$T/err" || why="$why a sanitizer or signal report;"
	left=$(find "$T" -name '*.tmp.*' -o -name '.*.tmp-*' | head -n 3)
	[ -z "$left" ] || why="$why left a temporary file: $left;"
	[ -z "$left" ] || rm -f $left
	if [ -z "$why" ]; then ok 0 "$cmds: $(head -c 150 "$T/err" | head -n 1)"; else
		ok 1 "$cmds"; echo "# $why"; sed 's/^/#   /' "$T/err" | head -n 5; fi
}

# The rows (99). A lesson is checked with `lesson FILE --check`; a model with `load`.
cat >"$T/table" <<'TABLE'
1|l/paren.lesson:7|nested too deeply|lesson l/paren.lesson --check
1|l/neg.lesson:7|nested too deeply|lesson l/neg.lesson --check
1|l/plus.lesson:7|nested too deeply|lesson l/plus.lesson --check
1|l/pow.lesson:7|nested too deeply|lesson l/pow.lesson --check
1|l/abs.lesson:7|nested too deeply|lesson l/abs.lesson --check
1|l/pick.lesson:7|nested too deeply|lesson l/pick.lesson --check
1|l/let.lesson:6|nested too deeply|lesson l/let.lesson --check
1|l/expect.lesson:6|nested too deeply|lesson l/expect.lesson --check
1|l/paren.lesson:7|nested too deeply|lesson l/paren.lesson
1|l/div0.lesson:6|gives inf, not a finite number|lesson l/div0.lesson --check
1|l/negdiv0.lesson:6|gives -inf, not a finite number|lesson l/negdiv0.lesson --check
1|l/nan.lesson:6|gives no number (NaN)|lesson l/nan.lesson --check
1|l/inf.lesson:6|gives inf, not a finite number|lesson l/inf.lesson --check
1|l/letdiv0.lesson:6|gives inf|lesson l/letdiv0.lesson --check
1|l/unclosed.lesson:7|expected ')'|lesson l/unclosed.lesson --check
1|l/unknownfn.lesson:7|expected a known function, not 'frob'|lesson l/unknownfn.lesson --check
1|l/empty-calc.lesson:7|expected an expression after 'calc:'|lesson l/empty-calc.lesson --check
1|l/undef.lesson:7|$NOPE|lesson l/undef.lesson --check
1|l/noanswer.lesson|answer|lesson l/noanswer.lesson --check
1|l/badcmd.lesson:6|frobnicate|lesson l/badcmd.lesson --check
1|l/pickopts.lesson|options|lesson l/pickopts.lesson --check
1|l/args.lesson:7|at most 256 arguments|lesson l/args.lesson --check
1|l/self.lesson:6|expected a command other than 'lesson' inside a lesson|lesson l/self.lesson --check
1|l/empty.lesson:1|expected '# TITLE' as the first line|lesson l/empty.lesson --check
1|l/binary.lesson|expected a text file (it holds a NUL byte)|lesson l/binary.lesson --check
1|l/none.lesson|no lesson file|lesson l/none.lesson --check
1|l|Is a directory|lesson l --check
1|c/notjson/config.json|broken JSON at line 1|load c/notjson
1|c/empty/config.json|broken JSON|load c/empty
1|c/array/config.json|not a JSON object|load c/array
1|c/deep/config.json|maximum parsing depth|load c/deep
1|c/deepobj/config.json|maximum parsing depth|load c/deepobj
1|c/notype/config.json|no "model_type"|load c/notype
1|c/badtype/config.json|unknown model_type "bert"|load c/badtype
1|c/neglayers/config.json|n_layer|load c/neglayers
1|c/hugeembd/config.json|n_embd|load c/hugeembd
1|c/strlayers/config.json|"n_layer" must be an integer|load c/strlayers
1|c/heads/config.json|head|load c/heads
1|c/act/config.json|not a known activation|load c/act
1|c/vocab0/config.json|vocab|load c/vocab0
1|c/dup/config.json|duplicate object key|load c/dup
1|s/empty/model.safetensors|empty file|load s/empty
1|s/short/model.safetensors|truncated (3 bytes|load s/short
1|s/hugelen/model.safetensors|header|load s/hugelen
1|s/lenpast/model.safetensors|header|load s/lenpast
1|s/notjson/model.safetensors|JSON|load s/notjson
1|s/deep/model.safetensors|maximum parsing depth|load s/deep
1|s/offpast/model.safetensors|wte.weight|load s/offpast
1|s/offneg/model.safetensors|wte.weight|load s/offneg
1|s/overlap/model.safetensors|overlap|load s/overlap
1|s/dtype/model.safetensors|Q4_K|load s/dtype
1|s/shape/model.safetensors|wte.weight|load s/shape
1|s/negshape/model.safetensors|wte.weight|load s/negshape
1|s/missing/model.safetensors|wte.weight|load s/missing
1|s/extra/model.safetensors|stray.weight|load s/extra
1|s/nan/model.safetensors|NaN|load s/nan
1|s/cut/model.safetensors|bytes|load s/cut
1|i/notjson/model.safetensors.index.json|JSON|load i/notjson
1|i/slash/model.safetensors.index.json|the shard must be a file name in the model's folder|load i/slash
1|i/missing/model.safetensors.index.json|shard model-00009-of-00009.safetensors|load i/missing
1|i/nomap/model.safetensors.index.json|weight_map|load i/nomap
1|i/deep/model.safetensors.index.json|maximum parsing depth|load i/deep
1|i/absent|ghost.weight|load i/absent
1|t/notjson/tokenizer.json|JSON|load t/notjson
1|t/deep/tokenizer.json|maximum parsing depth|load t/deep
1|t/model/tokenizer.json|WordPiece|load t/model
1|t/pretok/tokenizer.json|Whitespace is not supported|load t/pretok
1|t/seqdeep/tokenizer.json|nested too deeply|load t/seqdeep
1|t/merge/tokenizer.json|merge|load t/merge
1|t/gap/tokenizer.json|99999|load t/gap
1|t/dup/tokenizer.json|duplicate|load t/dup
1|v/notjson/vocab.json|JSON|load v/notjson
1|v/array/vocab.json|object|load v/array
1|v/merge/merges.txt|qq|load v/merge
1|v/line/merges.txt|line 2|load v/line
1|b/short.bin|too short|load b/short.bin
1|b/negdim.bin|dim is -8|load b/negdim.bin
1|b/huge.bin|b/huge.bin|load b/huge.bin
1|b/cut.bin|bytes, but a llama2.c legacy checkpoint|load b/cut.bin
1|b/heads.bin|not a multiple of n_heads 3|load b/heads.bin
1|b/version.bin|version 7|load b/version.bin
1|b/v1short.bin|cut short|load b/v1short.bin
1|b/kvheads.bin|sizes too large for glassbox|load b/kvheads.bin
1|k/tokenizer-cut.bin|k/tokenizer-cut.bin|load k/model.bin --tokenizer k/tokenizer-cut.bin
1|k/tokenizer-neglen.bin|k/tokenizer-neglen.bin|load k/model.bin --tokenizer k/tokenizer-neglen.bin
1|k/tokenizer-few.bin|k/tokenizer-few.bin|load k/model.bin --tokenizer k/tokenizer-few.bin
1|nowhere|no such model folder|load nowhere
1|-|unknown command 'frobnicate'|frobnicate 1 2
1|-|a quote (") is not closed|run "unclosed
1|-|is ambiguous|load good-gpt2; t
1|-|layer|load good-gpt2; run ab; attn 99 1
1|w.npy|already exists|load good-gpt2; run ab; dump logits w.npy; dump logits w.npy
1|w.csv|unknown format|load good-gpt2; run ab; dump logits w.csv.txt
1|no/such/dir/w.npy|cannot write|load good-gpt2; run ab; dump logits no/such/dir/w.npy
1|d.npy|already exists|load good-gpt2; run ab; dump logits d.npy
1|keep.png|already exists|load good-gpt2; run ab; attn 1 1; export keep.png
1|missing.txt|cannot open|run --file missing.txt
1|-|shows a view (attn, heads, loss, positions, next, ...), not 'dump'|load good-gpt2; run ab; compare-models good-gpt2 good-gpt2 dump logits cm.npy
1|-|not 'export-model'|load good-gpt2; run ab; compare-models good-gpt2 good-gpt2 export-model cm-model
TABLE
echo "1..$(($(wc -l <"$T/table") + 8))"
: >"$T/keep.png"
while IFS='|' read -r want file problem cmds; do
	row "$want" "$file" "$problem" "$cmds"
done <"$T/table"
check "an existing file that dump and export refused is untouched (empty as it was)" test ! -s "$T/keep.png"
check "compare-models ran neither dump nor export-model (a view only: no cm.npy, no cm-model)" sh -c "! ls '$T'/cm* 2>/dev/null | grep -q ."
check "dump's first write to w.npy is complete (a NumPy header and the logits)" sh -c "head -c 6 '$T/w.npy' | grep -q NUMPY"

# A symlink planted under dump's temporary name is never followed: the name is new on every
# try and created exclusively. A new shell's pid is glassbox's after exec, so the first name
# it tries ("FILE.tmp.PID.0") is the one planted.
rm -f "$T/victim"
(cd "$T" && G="$G" sh -c 'ln -s "$PWD/victim" "s.npy.tmp.$$.0"; exec "$G" -c "load good-gpt2; run ab; dump logits s.npy"') >/dev/null 2>"$T/err"
ok $? "dump with a symlink planted under its first temporary name succeeds"
check "the symlink's target was not created" test ! -e "$T/victim"
check "the planted symlink was passed over, not written through or removed" sh -c "ls -l '$T'/s.npy.tmp.*.0 | grep -q victim"
check "s.npy holds the logits" sh -c "head -c 6 '$T/s.npy' | grep -q NUMPY"
rm -f "$T/s.npy.tmp."*
(cd "$T" && exec "$G" -c "load good-gpt2; run ab; dump logits w.npy --force") >/dev/null 2>"$T/err"
ok $? "dump --force replaces an existing file"
exit $((fails > 0))
