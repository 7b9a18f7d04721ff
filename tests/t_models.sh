#!/bin/sh
# t_models.sh — the gallery: `models` lists the shipped models and every folder or llama2.c
# checkpoint under $XDG_DATA_HOME/glassbox/models (else ~/.local/share/glassbox/models) with
# family, size, tokenizer and whether it loads; `load NAME` finds them by name.
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
G=$PWD/glassbox
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
echo "1..18"

export XDG_DATA_HOME="$T/data"
M=$XDG_DATA_HOME/glassbox/models
$G -c models >"$T/none" 2>&1
ok $? "models runs with no gallery folder"
check "it says where to put models" have "$T/none" "your models: none yet. Put a model folder"
check "... naming \$XDG_DATA_HOME/glassbox/models" have "$T/none" "$M"

mkdir -p "$M/broken" "$M/empty-folder"
$G -c "init $M/tiny-gpt2 --seed 3; init $M/tiny-llama --preset llama" || exit 1
rm "$M/tiny-llama/tokenizer.json"
echo '{"model_type": "bert"}' >"$M/broken/config.json"
echo "not a model" >"$M/notes.txt"
# llama2.c files: a folder holding stories.bin and tokenizer.bin, and a lone .bin
if /usr/bin/python3 - "$M" <<'PY'
import os, struct, sys
m = sys.argv[1]
dim, hid, L, H, K, V, C = 16, 24, 2, 2, 1, 262, 8
def ckpt(path):
    n = V * dim + L * dim + L * dim * dim * 2 + L * dim * (dim // H * K) * 2 + L * dim + 3 * L * dim * hid + dim + C * (dim // H)
    with open(path, "wb") as f:
        f.write(struct.pack("<7i", dim, hid, L, H, K, V, C))
        f.write(struct.pack("<%df" % n, *[((i * 7919) % 101 - 50) / 500.0 for i in range(n)]))
os.makedirs(os.path.join(m, "stories"))
ckpt(os.path.join(m, "stories", "stories.bin"))
ckpt(os.path.join(m, "lone.bin"))
with open(os.path.join(m, "stories", "tokenizer.bin"), "wb") as f:
    pieces = [b"<unk>", b"\n<s>\n", b"\n</s>\n"] + [b"<0x%02X>" % b for b in range(256)] + [b" ", b"h", b"i"]
    f.write(struct.pack("<I", 6))
    for i, p in enumerate(pieces):
        f.write(struct.pack("<fi", -float(i), len(p)) + p)
PY
then l2c=1; else l2c=0; fi

$G -c models >"$T/list" 2>&1
ok $? "models lists the gallery"
sed 's/^/# /' "$T/list"
params=$($G -c "load $M/tiny-gpt2; info" | awk '/^parameters/ { printf "%.1fK", $2 / 1e3 }')
check "a gpt2 folder: family, layers, width, parameters ($params), format" \
	have "$T/list" "  tiny-gpt2            gpt2, 2 layers, d_model 64, $params parameters (safetensors, "
check "... its tokenizer, and that it checks out" have "$T/list" "tokenizer: byte-level BPE, 257 tokens (tokenizer.json); ok"
check "a folder without a tokenizer says so" have "$T/list" "tokenizer: none (token ids only); ok"
check "a broken folder: why it does not load" have "$T/list" "  broken               does not load: config.json: unknown model_type \"bert\""
check "a folder with nothing in it: does not load" have "$T/list" "  empty-folder         does not load:"
check "a plain file that is not a checkpoint is not listed" sh -c "! grep -q notes.txt '$T/list'"
check "the shipped models are still listed" have "$T/list" "  tiny-lm  decoder-only"
# tiny-lm's variants: those shipped by name and what they change, the others counted as recipes
shipped=$(ls -d assets/models/tiny-lm-*/ 2>/dev/null | wc -l)
check "the $shipped shipped variants are listed, the other $((14 - shipped)) counted as recipes" sh -c \
	"test \$(grep -c '^  tiny-lm-[a-z0-9]* ' '$T/list') -eq $shipped && { test $shipped -eq 14 || grep -qF '($((14 - shipped)) more variant' '$T/list'; }"
if [ $l2c = 1 ]; then
	check "a llama2.c folder: family, format, tokenizer.bin beside it" sh -c \
		"grep -qF '  stories              llama, 2 layers, d_model 16, ' '$T/list' && grep -qF '(llama2.c legacy, ' '$T/list' && grep -qF 'tokenizer: tokenizer.bin, 262 pieces; ok' '$T/list'"
	check "a lone llama2.c file is listed" have "$T/list" "  lone.bin             llama, 2 layers, d_model 16,"
	$G -c "load stories; run hi; dump tokens $T/tok.csv" >"$T/out" 2>&1
	ok $? "load NAME finds a llama2.c folder in the gallery, and run TEXT uses its tokenizer.bin"
else
	ok 0 "# SKIP /usr/bin/python3 missing: no llama2.c files written"
	ok 0 "# SKIP /usr/bin/python3 missing"
	ok 0 "# SKIP /usr/bin/python3 missing"
fi
$G -c "load tiny-gpt2; info" >"$T/info" 2>&1
ok $? "load NAME finds a folder in the gallery"
$G -c "load no-such-model" >"$T/err" 2>&1
check "an unknown name: the error names it as given" have "$T/err" "no-such-model: no such model folder or llama2.c checkpoint"

unset XDG_DATA_HOME
HOME=$T/home $G -c models >"$T/home.txt" 2>&1
check "without XDG_DATA_HOME: ~/.local/share/glassbox/models" have "$T/home.txt" "$T/home/.local/share/glassbox/models"
exit $((fails > 0))
