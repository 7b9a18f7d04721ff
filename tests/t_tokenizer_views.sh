#!/bin/sh
# t_tokenizer_views.sh — the tokenize views on a hand-written SentencePiece-style tokenizer
# (tests/fixtures/sp-mini: Prepend/Replace normalizer, 3 merges, unk) beside GPT-2's layout
# (tests/fixtures/gpt2-mini): --steps shows the normalized text and each merge, --compare keeps
# its columns by display width, --file prints a line of ids per line, bad input is one line.
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
SP=tests/fixtures/sp-mini GP=tests/fixtures/gpt2-mini
echo "1..8"
./glassbox -c "tokenize --tokenizer $SP --steps abcc ba" >"$T/steps" 2>&1
# worked by hand: ▁abcc▁ba -> ▁ a b c c ▁ b a; a+b (rank 0), ▁+ab (rank 1), b+a (rank 2)
have "$T/steps" "1 word; 3 merges in the order applied" && have "$T/steps" "normalized: ▁abcc▁ba" &&
	have "$T/steps" "word 1: [·][a][b][c][c][·][b][a]" &&
	grep -q "merge 1 *rank 0 *a + b -> ab" "$T/steps" && grep -q "merge 3 *rank 2 *b + a -> ba" "$T/steps" &&
	have "$T/steps" "ids: 6 7 7 5 8"
ok $? "--steps: normalized text, first pieces, the three merges by rank, ids 6 7 7 5 8"
sed 's/^/# /' "$T/steps"
./glassbox -c "tokenize --tokenizer $SP --template --special ab<s>ab" >"$T/tmpl" 2>&1
[ "$(awk '{print $1}' "$T/tmpl" | tr '\n' ' ')" = "1 6 1 6 " ]
ok $? "--template puts <s> first; --special matches <s> in the text: 1 6 1 6"
./glassbox -c "tokenize --compare $GP $SP abcc ba" >"$T/cmp" 2>&1
# every row's second column starts at the same display column
cols=$(grep -E '^ *[0-9]+ ' "$T/cmp" | perl -CS -ne 'if (/^(\s*\d+\s+\d+\s+\S+\s+)\d+\s/) { print length($1), "\n" }' | sort -u | wc -l)
have "$T/cmp" "A: $GP" && have "$T/cmp" "B: $SP" && have "$T/cmp" "Prepend" && [ "$cols" -eq 1 ]
ok $? "--compare: both tokenizers' steps, rows aligned by display width ($cols column start)"
sed 's/^/# /' "$T/cmp"
printf 'ab ab\nabdd\n\nba\n' >"$T/lines.txt"
./glassbox -c "tokenize --tokenizer $SP --file $T/lines.txt" >"$T/ids" 2>"$T/ids.err"
[ "$(cat "$T/ids" | tr '\n' '|')" = "6 6|6 0||5 8|" ]
ok $? "--file: a line of ids per line (unknown d fused into one <unk>; an empty line is empty)"
have "$T/ids.err" "4 records; decode(encode(x)) == x for 3"
ok $? "--file: the round trip holds except where <unk> lost the text ($(cat "$T/ids.err"))"
./glassbox -c "tokenize --compare $SP" >"$T/bad" 2>&1
rc=$?
[ $rc -ne 0 ] && [ "$(wc -l <"$T/bad")" -eq 1 ] && have "$T/bad" "needs two folders"
ok $? "--compare with one folder: a one-line error ($(cat "$T/bad"))"
mkdir -p "$T/nfc" && sed 's/{"type": "Prepend", "prepend": "▁"},/{"type": "Lowercase"},/' $SP/tokenizer.json >"$T/nfc/tokenizer.json"
./glassbox -c "tokenize --tokenizer $T/nfc hello" >"$T/nfc.out" 2>&1
[ "$(wc -l <"$T/nfc.out")" -eq 1 ] && have "$T/nfc.out" "normalizer Lowercase is not supported"
ok $? "a tokenizer.json with a Lowercase normalizer (not implemented): one line naming it ($(cat "$T/nfc.out"))"
# run on a model whose tokenizer.json has a template puts <s> first, as Hugging Face's does
./glassbox -c "init $T/m --preset llama" >/dev/null 2>&1 && cp $SP/tokenizer.json "$T/m/" &&
	./glassbox -c "load $T/m; run ab ab; print tokens" >"$T/run" 2>&1
[ "$(tr -s ' ' <"$T/run" | sed 's/^ //')" = "1 6 6" ]
ok $? "run on a model with sp-mini's template: <s> then the text's ids (got '$(cat "$T/run")')"
exit $((fails > 0))
