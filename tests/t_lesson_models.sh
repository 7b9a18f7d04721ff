#!/bin/sh
# t_lesson_models.sh — lesson 18 ("Your own model") loads no model: it runs on the one the
# session has loaded, as a teacher runs it on a downloaded GPT-2, TinyLlama, SmolLM or llama2.c
# TinyStories checkpoint. No real checkpoint can be downloaded here, so each family is a small
# random model in the layout the hub ships it (tests/hub_folder.py): GPT-2 ("transformer."
# prefix, the attn.bias mask buffers, lm_head stored although tied, two shards named by
# model.safetensors.index.json), TinyLlama (BF16 kept 16-bit, its own lm_head, grouped
# key/value heads, inv_freq buffers), SmolLM (tied, F32) and a llama2.c checkpoint written by
# export-model with a tokenizer.bin. On each: `lesson --check` passes (every answer computed,
# every claim of the prose holds, among them that the logit lens's last row is the model's own
# prediction), the straight run shows every step without an error, the session keeps its
# model, and every step leaves a figure for the export (GPT-2 and llama2.c). The numbers each run
# computed are printed as comments. The real GPT-2 and Llama 2 vocabularies: t_tokenizer_npm.sh.
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
G=$PWD/glassbox
L=$PWD/lessons/18-your-model.lesson
if ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP python3 is not installed (tests/hub_folder.py writes the hub layouts)"
	exit 0
fi
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
M=$T/models
mkdir -p "$M"
if ! nice -n 10 $G -c "init $T/g --seed 5 --layers 2 --heads 4 --dim 64 --context 64;
	init $T/l --preset llama --seed 6 --layers 2 --heads 4 --kv-heads 2 --dim 64 --context 64 --set norm_eps=1e-5;
	export-model $T/l --safetensors $T/lb --dtype bf16;
	init $T/s --preset llama --seed 8 --layers 3 --heads 3 --kv-heads 1 --dim 48 --context 64 --set tie_word_embeddings=true;
	init $T/c --preset llama --seed 7 --layers 2 --heads 4 --dim 48 --hidden 128 --vocab 360 --context 64 --set norm_eps=1e-5;
	export-model $T/c --llama2c $M/stories.bin" >"$T/init.log" 2>&1 ||
	! python3 tests/hub_folder.py "$T/g" "$M/gpt2" gpt2 --shards 2 ||
	! python3 tests/hub_folder.py "$T/lb" "$M/tinyllama" llama --inv-freq ||
	! python3 tests/hub_folder.py "$T/s" "$M/smollm" llama ||
	! python3 tests/hub_folder.py --tokenizer-bin "$M/tokenizer.bin" 360; then
	echo "1..1"
	echo "not ok 1 - the test models (init, export-model, tests/hub_folder.py)"
	sed 's/^/# /' "$T/init.log"
	exit 1
fi
models="tiny-lm gpt2 tinyllama smollm stories.bin"
echo "1..$((5 * 3 + 2 + 3))"

check "the hub folders look as the hub ships them (shards and index, prefixes, buffers, BF16, no glassbox block)" sh -c "
	test -f '$M/gpt2/model.safetensors.index.json' && test -f '$M/gpt2/model-00002-of-00002.safetensors' &&
	! grep -q glassbox '$M/gpt2/config.json' '$M/tinyllama/config.json' &&
	grep -q bfloat16 '$M/tinyllama/config.json' && grep -q 'transformer.h.1.attn.bias' '$M/gpt2/model.safetensors.index.json'"

# lesson_on MODEL: --check, the straight run and the export of lesson 18 on MODEL
export XDG_DATA_HOME=$T/data
mkdir -p "$XDG_DATA_HOME/glassbox"
ln -s "$M" "$XDG_DATA_HOME/glassbox/models"
for m in $models; do
	b=$(echo "$m" | tr . _)
	nice -n 10 $G -c "load $m; lesson $L --check; info" >"$T/$b.check" 2>"$T/$b.err"
	rc=$?
	claims=$(sed -n 's/^  ran it: .*claims (expect:) \([0-9]*\), \([0-9]*\) of them hold$/\1 \2/p' "$T/$b.check")
	check "$m: lesson 18 --check passes: its 5 answers computed, its claims hold (status $rc, claims held: $claims)" \
		sh -c "test $rc = 0 && test ! -s '$T/$b.err' && grep -q '^  ran it: 5 questions computed' '$T/$b.check' &&
			set -- $claims && test \$# = 2 && test \$1 = \$2 && test \$1 -ge 3"
	[ "$rc" = 0 ] || sed 's/^/# /' "$T/$b.err" | head -5
	want=$m
	[ "$m" = tiny-lm ] && want=assets/models/tiny-lm
	check "$m: the lesson ran on the session's model and left it loaded" grep -q "^model  *.*$want\$" "$T/$b.check"

	nice -n 10 $G -c "load $m; lesson your-model" >"$T/$b.out" 2>"$T/$b.runerr"
	rc=$?
	check "$m: 'lesson your-model' runs straight through, every step, no error line (status $rc)" \
		sh -c "test $rc = 0 && ! grep -v '^glassbox: note:' '$T/$b.runerr' | grep -q '^glassbox:' &&
			test \$(grep -c '^Step [0-9]* of 6: ' '$T/$b.out') = 6"
	# what it computed on this model, for the log
	tr '\n' ' ' <"$T/$b.out" | tr -s ' ' | grep -o \
		-e 'This is a [^.]*context of [0-9]*' -e 'The seven words are [0-9]* tokens' -e 'takes [0-9]* of them' \
		-e 'expected answer: [^ ]*' -e 'The most probable next token is [^ ]* with probability [0-9.e-]*' \
		-e 'is layer [0-9]*, head [0-9]*: [0-9.]* of its weight' -e 'before it [0-9.e-]* of its weight' \
		-e 'is layer [0-9]*, head [0-9]*, with [0-9.]*' -e 'gives position [0-9]* [0-9.e-]* of its weight' |
		sed "s/^/# $m: /"
	case $m in gpt2 | stories.bin) ;; *) continue ;; esac
	nice -n 10 $G -c "load $m; lesson $L --export $T/$b.export" >"$T/$b.exp" 2>&1
	rc=$?
	check "$m: the export leaves a figure on every step (status $rc)" \
		sh -c "test $rc = 0 && ! grep -q 'no figure' '$T/$b.exp' && test \$(grep -o '^step [0-9]*/6' '$T/$b.exp' | sort -u | wc -l) = 6"
done

# A BF16 checkpoint's own lm_head stays 16-bit: the lens reads it as the forward pass does.
nice -n 10 $G -c "load tinyllama; run Once upon a time, there was a little; lens" >"$T/bf16.lens" 2>&1
GLASSBOX_WEIGHTS=f32 nice -n 10 $G -c "load tinyllama; run Once upon a time, there was a little; lens" >"$T/f32.lens" 2>&1
grep -E '^(after|embed|layer) ' "$T/bf16.lens" >"$T/bf16.top"
grep -E '^(after|embed|layer) ' "$T/f32.lens" >"$T/f32.top"
check "lens on a BF16 lm_head kept 16-bit: the same top tokens as with the weights widened at load" \
	sh -c "test \$(grep -c '^layer' '$T/bf16.top') = 2 && cmp -s '$T/bf16.top' '$T/f32.top'"
check "the SmolLM folder loads as tied, the TinyLlama one with its own lm_head" sh -c \
	"grep -q '^output  *tied' '$T/smollm.check' && grep -q '^output  *its own' '$T/tinyllama.check'"
exit $((fails > 0))
