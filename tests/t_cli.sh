#!/bin/sh
# t_cli.sh — the real binary driven through scripts: the -c contract (load, run, dump, trace,
# compare), script files and stdin, and one-line errors with exit status 1.
cd "$(dirname "$0")/.." || exit 1
T=tests/tmp/cli
rm -rf "$T" && mkdir -p "$T"
G=./glassbox
. tests/tap.sh
# have FILE TEXT: FILE contains TEXT
lines() { wc -l <"$1" | tr -d ' '; }

echo "1..98"

$G -c "init $T/gpt2 --seed 3; init $T/llama --preset llama; init $T/encdec --preset encdec" >"$T/out" 2>"$T/err"
ok $? "init writes three random model folders"
# run --file: the file is the text, its ';' and newlines included (tiny-lm's ids 59 and 10 are
# the bytes ';' and '\n'); a file that is not UTF-8 is refused with the byte that is not
printf 'When Mary went to the park;\nJohn gave a ball to\n' >"$T/story.txt"
$G -c "run --file $T/story.txt; print tokens" >"$T/file.out" 2>"$T/err"
check "run --file keeps ';' and the newline inside the text as tokens (59, 10), and drops the last newline" \
	sh -c "tr -s ' ' '\n' <$T/file.out | grep -qx 59 && tr -s ' ' '\n' <$T/file.out | grep -qx 10 && test \$(tr -s ' ' '\n' <$T/file.out | grep -cx 10) -eq 1"
printf 'bad \377 byte\n' >"$T/bad.txt"
$G -c "run --file $T/bad.txt" >/dev/null 2>"$T/err"
check "run --file of a file that is not UTF-8: one line naming the byte" grep -q "is not UTF-8: byte 4 (0xff)" "$T/err"
# sizes: a model of a chosen shape (the benches' GPT-2-small and Llama-110M come from these)
$G -c "init $T/sized --preset llama --dim 96 --layers 3 --heads 6 --kv-heads 2 --vocab 300 --context 64; load $T/sized; info" >"$T/sized.out" 2>"$T/err"
check "init --dim 96 --heads 6 --kv-heads 2: 6 heads of 16, 2 key/value heads, FFN 4 x 96" \
	sh -c "grep -q 'd_model 96, 6 heads of 16 (2 key/value heads), FFN 384' $T/sized.out && grep -q 'vocabulary  300, context 64' $T/sized.out && grep -q '^layers *3' $T/sized.out"
$G -c "init $T/bad --dim 100 --heads 6" >/dev/null 2>"$T/err"
check "init --dim 100 --heads 6: refused, saying why" grep -q "not a multiple of the 6 heads" "$T/err"
check "the folder has config.json, model.safetensors and tokenizer.json" \
	test -s "$T/gpt2/config.json" -a -s "$T/gpt2/model.safetensors" -a -s "$T/gpt2/tokenizer.json"

$G -c "load $T/gpt2; run hello world; trace" >"$T/trace" 2>"$T/err"
ok $? "load, run and trace succeed"
check "trace lists embed.tok with its axes" have "$T/trace" "embed.tok                  (token 11, feature 64)"
check "trace lists the attention weights as (head, query, key)" have "$T/trace" "L2.attn.weights            (head 4, query 11, key 11)"
check "trace lists logits over the vocabulary" have "$T/trace" "logits                     (token 11, vocab 257)"
check "scripts print no banner" test "$(head -c 5 "$T/trace")" = "token"

$G -c "load $T/gpt2; run 'hello; world'; dump L1.attn.weights $T/w.npy; dump logits $T/l.csv" 2>"$T/err"
ok $? "dump writes .npy and .csv (a quoted ';' stays in the text)"
check ".npy starts with NumPy's magic" sh -c "head -c 6 $T/w.npy | od -c | grep -q 'N   U   M   P   Y'"
check ".npy header records the shape (4, 12, 12)" sh -c "head -c 128 $T/w.npy | grep -aq \"'shape': (4, 12, 12)\""
check ".npy has 4*12*12 float32 after a 128-byte header" test "$(wc -c <"$T/w.npy")" -eq $((128 + 4 * 12 * 12 * 4))
check ".csv has a header line and one line per token" test "$(lines "$T/l.csv")" -eq 13
check ".csv rows have one value per vocabulary entry" test "$(sed -n 2p "$T/l.csv" | tr ',' '\n' | wc -l)" -eq 257
check "no temporary files are left behind" test -z "$(ls "$T" | grep tmp)"

$G -c "load $T/llama; run the cat sat; compare" >"$T/cmp" 2>"$T/err"
ok $? "compare runs on a llama-family model"
rel=$(sed -n "1s/^largest relative difference \([^ ]*\) .*/\1/p" "$T/cmp")
check "compare: fast against ref within 1e-4 (got $rel)" awk "BEGIN { exit !($rel <= 1e-4) }"
check "compare lists every trace tensor" test "$(grep -c '^L' "$T/cmp")" -ge 40
# its figure: digits of agreement per layer and tensor, -log10 of the table's relative differences
# (".in" tensors repeat the one before them and are left out); the fewest digits in the figure
# are those of the largest relative difference of a layer's tensors in the table
want=$(awk '/^L[0-9]+\./ && $1 !~ /\.in$/ && $3 > m { m = $3 } END { printf "%.1f", -log(m) / log(10) }' "$T/cmp")
got=$(awk '/^L[0-9]+ / { for (i = 2; i <= NF; i++) if ($i ~ /^[0-9.]+$/ && (m == "" || $i + 0 < m + 0)) m = $i } END { print m }' "$T/cmp")
check "compare's figure: the fewest digits, $got, are -log10 of the largest relative difference in layers ($want)" test "$got" = "$want"

$G -c "load $T/encdec; run --ids 5 6 7 --target-ids 256 9; dump logits $T/ed.npy; dump enc.L1.attn.weights $T/ew.csv" 2>"$T/err"
ok $? "an encoder-decoder runs with --ids and --target-ids"
check "its logits are the decoder's (2, 257)" sh -c "head -c 128 $T/ed.npy | grep -aq \"'shape': (2, 257)\""

printf 'load %s\n# a comment\nrun abc\ndump probs %s\n' "$T/gpt2" "$T/p.npy" >"$T/script.gb"
$G "$T/script.gb" 2>"$T/err"
ok $? "a script file runs"
printf 'load %s\nrun abc\ntrace\n' "$T/gpt2" | $G >"$T/out" 2>"$T/err"
ok $? "commands on stdin run without a prompt"

$G -c "load $T/gpt2; frobnicate; init $T/never" >"$T/out" 2>"$T/err"
ok $(( $? == 1 ? 0 : 1 )) "an unknown command stops the script with status 1"
check "the error is one line naming the line and the command" sh -c "test \$(wc -l <$T/err) -eq 1 && grep -q \"^glassbox: -c command 2: unknown command 'frobnicate'\" $T/err"
check "nothing after the error ran" test ! -e "$T/never"

$G -c "load $T/missing" 2>"$T/err"; rc=$?
check "a missing model folder: status 1 and a message naming it" sh -c "test $rc = 1 && grep -q 'missing: no such model folder' $T/err"
$G -c "load $T/gpt2; run" 2>"$T/err"; rc=$?
check "run without text says what to type" sh -c "test $rc = 1 && grep -q 'run needs a text' $T/err"
long=$(awk 'BEGIN { for (i = 0; i < 200; i++) printf "ab" }')
$G -c "load $T/gpt2; run $long; dump tokens $T/t.csv" 2>"$T/err"
ok $? "a text longer than the context runs, truncated"
check "the truncation is reported" have "$T/err" "kept the last 128"

for m in gpt2 llama encdec; do
	$G -c "load $T/$m; run a b c; info" >"$T/info" 2>&1
	params=$(sed -n 's/^parameters  //p' "$T/info")
	total=$(awk '$1 == "total" { print $2 }' "$T/info")
	check "info: the $m table's total ($total) equals the weights ($params)" test -n "$params" -a "$total" = "$params"
done

printf 'load %s\nrun abc\n\nbogus 1\n' "$T/gpt2" >"$T/bad.gb"
$G "$T/bad.gb" 2>"$T/err"; rc=$?
check "a script file's error names the file and line" sh -c "test $rc = 1 && grep -q \"^glassbox: $T/bad.gb line 4: unknown command 'bogus'\" $T/err"
$G -c "load $T/gpt2; run hello; generate 4 --seed 2 --top-k 5" >"$T/gen" 2>"$T/err"
check "generate prints one line per new token" test "$(grep -c ' p = ' "$T/gen")" -eq 4
check "top-k sampling: each line has the probability drawn with, p_T, and the footer says what it is" \
	sh -c "test \$(grep -c ' p_T = ' $T/gen) -eq 4 && tail -n 1 $T/gen | grep -q '^p: the model.s probability; p_T: the one it was drawn with, top-k 5'"
COLUMNS=80 $G -c "run When Anna came home,; generate 6 --temp 0.8 --seed 1" >"$T/gen80" 2>"$T/err"
check "at 80 columns every line of generate is a token's row or the footer (nothing wraps under a row)" \
	sh -c "test \$(grep -c '^ *[0-9][0-9]*  ' $T/gen80) -eq \$((\$(wc -l <$T/gen80) - 1))"

# Views: figures drawn as plain text when output is not a terminal.
$G -c "load $T/gpt2; run the cat sat; attn 1 2" >"$T/attn" 2>"$T/err"
ok $? "attn L H draws a figure"
check "the figure has its title" have "$T/attn" "Layer 1, head 2: attention weights"
check "the tokens label the rows and columns, numbered, spaces made visible" have "$T/attn" "1 t   2 h   3 e 4 \"·\"   5 c"
check "the colorbar shows the fixed range 0..1" have "$T/attn" "0.00 [ .:-=+*#%@] 1.00"
check "the caption gives the formula" have "$T/attn" "softmax_j(q_i . k_j / sqrt(d_head) + mask)"
$G -c "load $T/gpt2; run the cat; attn 3 1" 2>"$T/err"; rc=$?
check "a layer out of range says the range" sh -c "test $rc = 1 && grep -q 'layer 3 does not exist: this model has layers 1 to 2' $T/err"
$G -c "load $T/gpt2; run the cat; attn 1 9" 2>"$T/err"; rc=$?
check "a head out of range says the range" sh -c "test $rc = 1 && grep -q 'head 9 does not exist: this model has heads 1 to 4' $T/err"
for v in "embed" "pe" "pe 0 1 2" "qkv 2 3" "scores 1 1 raw" "heads 2" "model" "ln 2" "ffn 1" "resid" "next 5" "show L1.attn.q 2" "show tokens"; do
	$G -c "load $T/gpt2; run the cat sat on the mat; $v" >"$T/view" 2>"$T/err" || { echo "# $v failed: $(cat "$T/err")"; false; }
done
ok $? "every view draws on a decoder-only model"
for v in "embed" "pe" "cross 1 2" "attn 2 1" "show dec.L1.cross.weights 1"; do
	$G -c "load $T/encdec; run --ids 5 6 7 8 --target-ids 256 9 10; $v" >"$T/view" 2>"$T/err" || { echo "# $v failed: $(cat "$T/err")"; false; }
done
ok $? "the views draw on an encoder-decoder"

# Figures record the text that ran: after run --ids, after generate, after a cut to the context.
$G -c "load $T/gpt2; run hello; attn 1 1; export $T/m0.png; run --ids 104 105 33; attn 1 1; export $T/m1.png; export $T/m1.svg" >/dev/null 2>"$T/err"
ok $? "figures export after run TEXT and run --ids"
check "the PNG of run TEXT records Text = the text (got '$(png_text "$T/m0.png" Text)')" test "$(png_text "$T/m0.png" Text)" = "hello"
check "after run --ids 104 105 33 the PNG records the tokens' text 'hi!' (got '$(png_text "$T/m1.png" Text)')" \
	test "$(png_text "$T/m1.png" Text)" = "hi!"
check "and so does the SVG's metadata" have "$T/m1.svg" '<gb:item key="Text">hi!</gb:item>'
rm -rf "$T/notok" && cp -r "$T/gpt2" "$T/notok" && rm "$T/notok/tokenizer.json"
$G -c "load $T/notok; run --ids 5 6 7; attn 1 1; export $T/m2.png" >/dev/null 2>"$T/err"
check "without a tokenizer, Text lists the ids (got '$(png_text "$T/m2.png" Text)')" test "$(png_text "$T/m2.png" Text)" = "token ids: 5 6 7"
$G -c "load $T/gpt2; run hello; generate 4 --seed 2 --top-k 5; attn 1 1; export $T/m3.png" >"$T/gen2" 2>"$T/err"
want=hello$(awk '/ p = / { printf "%s", $2 }' "$T/gen2" | sed 's/·/ /g')
check "after generate, Text is the prompt and the 4 tokens generated ('$want', got '$(png_text "$T/m3.png" Text)')" \
	test "$(png_text "$T/m3.png" Text)" = "$want" -a "$want" != hello
$G -c "load $T/gpt2; run $long; attn 1 1; export $T/m4.png" >/dev/null 2>"$T/err"
check "a text cut to the context records the 128 tokens that ran" test "$(png_text "$T/m4.png" Text)" = "$(printf %s "$long" | tail -c 128)"
$G -c "load tiny-mt; translate 3 March 2021; cross 1 1; export $T/m5.png" >/dev/null 2>"$T/err"
check "an encoder-decoder's figure records its source and its target (got '$(png_text "$T/m5.png" Text)' -> '$(png_text "$T/m5.png" Target)')" \
	test "$(png_text "$T/m5.png" Text)" = "3 March 2021" -a "$(png_text "$T/m5.png" Target)" = "2021-03-03"

# A strip of small numbers prints them with three significant digits, not as 0.00.
$G -c "load tiny-lm; set colors plain; run The keys on the old table are dusty.; show L1.ln1.mean" >"$T/strip" 2>"$T/err"
check "layer norm means (thousandths) print as 0.00xyz: $(sed -n 2p "$T/strip" | cut -c1-60)" \
	sh -c "grep -q '(-\{0,1\}0\.00[0-9][0-9][0-9])' $T/strip && ! grep -q '(0\.00)' $T/strip"

# Masked scores: the mask's -inf are counted as masked cells, in the terminal, PNG and SVG alike.
$G -c "load $T/gpt2; run abcd; scores 1 1; export $T/sc.svg; set colors truecolor; scores 1 1" >"$T/sc" 2>"$T/err"
ok $? "scores with the mask draws and exports"
check "the terminal caption counts 6 masked (-inf) cells" have "$T/sc" "-inf where masked (j > i)  / 6 masked (-inf)"
check "and does not call them NaN/inf" sh -c "! grep -q 'NaN/inf' $T/sc"
check "in colour, masked cells and their swatch are the mask gray" sh -c "test \$(grep -o '48;2;96;96;96m' $T/sc | wc -l) -ge 4"
check "the SVG caption says 6 masked (-inf) cells, shown in gray" have "$T/sc.svg" ">6 masked cells (-inf), shown in gray</text>"
check "and shows no magenta" sh -c "! grep -q -e magenta -e ff00ff $T/sc.svg"
# Attention weights: the cells the mask hid are grey and said to be weight 0 (not a small weight
# the model chose, not -inf); the lines view draws no line for them.
$G -c "load $T/gpt2; run abcd; attn 1 1; export $T/aw.svg; attn 1 1 --lines; export $T/al.svg" >"$T/aw" 2>"$T/err"
ok $? "attention weights with the mask draw and export"
check "the terminal caption counts 6 masked cells of weight 0" have "$T/aw" "/ 6 masked (0)"
check "the SVG caption says 6 masked cells (weight 0)" have "$T/aw.svg" ">6 masked cells (weight 0), shown in gray</text>"
check "the lines view counts no masked cell" sh -c "! grep -q 'masked cell' $T/al.svg"

# train refuses bad corpora and existing folders with one line each.
printf '' >"$T/empty.txt"
printf 'caf\351 cr\350me br\373l\351e na\357ve \351t\351 \340 la fa\347on' >"$T/latin1.txt"
printf 'the cat sat on the mat. ' >"$T/small.txt"
$G train --corpus "$T/empty.txt" --out "$T/c1" 2>"$T/err"; rc=$?
check "train: an empty corpus is refused" sh -c "test $rc = 1 && grep -q 'empty.txt: is empty' $T/err"
$G train --corpus "$T/latin1.txt" --out "$T/c2" 2>"$T/err"; rc=$?
check "train: a file that is not UTF-8 is refused" sh -c "test $rc = 1 && grep -q 'is not UTF-8 text' $T/err"
$G train --corpus "$T/small.txt" --out "$T/c3" 2>"$T/err" >/dev/null; rc=$?
check "train: a corpus too small to train on is refused" sh -c "test $rc = 1 && grep -q 'a model needs at least a few thousand' $T/err"
$G train --preset tiny-mt --out "$T/gpt2" 2>"$T/err"; rc=$?
check "train: an existing folder is kept unless --force" sh -c "test $rc = 1 && grep -q 'already exists' $T/err && test -s $T/gpt2/model.safetensors"
$G train --preset tiny-xl 2>"$T/err"; rc=$?
check "train: an unknown preset names the ones there are" sh -c "test $rc = 1 && grep -q 'tiny-lm, tiny-mt, tiny-lm-sinusoidal' $T/err"
$G train --preset tiny-lm --set colour=red --out "$T/set" 2>"$T/err"; rc=$?
check "train --set: an unknown field is named, with the fields there are" sh -c "test $rc = 1 && grep -q \"unknown field 'colour'; fields: position norm\" $T/err && test ! -e $T/set"
# help train lists every field --set takes (the same list the error gives)
fields=$(sed -n "s/.*unknown field 'colour'; fields: //p" "$T/err")
$G -c "help train" | tr -d '\n' | tr -s ' ' >"$T/help"
missing=""; for f in $fields; do grep -q "[ ,]$f[,;. ]" "$T/help" || missing="$missing $f"; done
check "help train names every field of --set ($(echo $fields | wc -w) fields${missing:+; missing:$missing})" test -n "$fields" -a -z "$missing"
$G train --preset tiny-lm-rope --set position=polar --out "$T/set" 2>"$T/err"; rc=$?
check "train --set: a bad value names the values allowed" sh -c "test $rc = 1 && grep -q 'position=polar: position is one of none, sinusoidal, learned, rope, alibi, t5' $T/err"

# calc: the textbook's masked softmax and layer norm, computed exactly.
$G -c "calc softmax 2 0.1 1 1, 0 0.9 0.9 0.9, 0.2 0.8 0.7 2, 0.3 1 0.3 3 --causal" >"$T/calc" 2>"$T/err"
check "calc softmax --causal: row 2 is (0.2891, 0.7109, 0, 0)" have "$T/calc" "0.2891     0.7109     0.0000     0.0000"
check "calc softmax --causal: row 4 is (0.0529, 0.1066, 0.0529, 0.7876)" have "$T/calc" "0.0529     0.1066     0.0529     0.7876"
$G -c "calc layernorm 1 1 2, 0.9 0.9 0, 0.7 0.8 0, 3 1 7 --eps 0.1 --textbook" >"$T/calc" 2>"$T/err"
check "calc layernorm --textbook: h4 has mean 11/3 and sigma 2.494438" have "$T/calc" "4        3.666667   6.222222   2.494438"
check "calc layernorm --textbook: h1 normalizes to (-0.58336, -0.58336, 1.16672)" have "$T/calc" "-0.58336   -0.58336    1.16672"
# h1 = (1, 1, 2): mean 4/3, var 2/9; with eps 0.1 the library form gives (2/3) / sqrt(2/9 + 0.1)
# = 1.17444 and the book's (2/3) / (sqrt(2/9) + 0.1) = 1.16672: the difference is 0.00772
$G -c "calc layernorm 1 1 2, 3 1 7 --eps 0.1 --compare" >"$T/cmpln" 2>"$T/err"
check "calc layernorm --compare: h1's last difference is 1.17444 - 1.16672 = 0.00772" have "$T/cmpln" "-0.00386   -0.00386    0.00772"
$G -c "calc layernorm 1 1 2 --textbook --compare" >"$T/cmpln2" 2>"$T/err"
check "calc --compare with --textbook is refused with the rule" have "$T/err" "--compare sets the two forms of layernorm side by side"
$G -c "load $T/gpt2; run the cat sat; ablate 1 2; lens; tokenize --steps the cat; near cat 3; masks 8" >"$T/more" 2>"$T/err"
ok $? "ablate, lens, tokenize --steps, near and masks run"
$G -c "calc softmax 1 2, 3" 2>"$T/err"; rc=$?
check "calc: ragged rows are refused with the rule" sh -c "test $rc = 1 && grep -q 'every row needs as many numbers as the first (2)' $T/err"

# calc EXPR: a number as lessons compute it, printed alone
$G -c "calc 2^10 + sqrt(16); calc softmax(1, 2, 0.1, 1, 1)" >"$T/expr" 2>"$T/err"
check "calc EXPR: 2^10 + sqrt(16) is 1028, and softmax(1, ...) the first entry of calc softmax's row (0.5304)" \
	sh -c "test \"\$(cat $T/expr | tr '\n' ' ')\" = '1028 0.5304 '"
$G -c "load $T/gpt2; run the cat sat; calc cosine(embed.tok, 2, 2); calc t(nope, 1)" >"$T/expr" 2>"$T/err"; rc=$?
check "calc EXPR reads the run (a row's cosine with itself is 1) and names a tensor it does not have" \
	sh -c "test $rc = 1 && test \"\$(cat $T/expr)\" = 1 && grep -q \"no trace tensor 'nope'\" $T/err"

$G -c "load $T/gpt2; run the cat sat; step; step; step; step back" >"$T/tour" 2>"$T/err"
ok $? "step walks the tour and step back returns"
check "the tour numbers its stops out of the model's total (3 + 6 per layer + 2)" sh -c "grep -c '^== stop' $T/tour | grep -q 4 && grep -q '== stop 3 of 17: positions (pe)' $T/tour && tail -n 30 $T/tour | grep -q '== stop 2 of 17'"
$G -c "load $T/gpt2; run the cat; step back" 2>"$T/err"; rc=$?
check "step back at the first stop says so" sh -c "test $rc = 1 && grep -q 'this is the first stop' $T/err"

$G -c "load $T/gpt2; run the cat; set engine ref; dump logits $T/ref.npy; set engine fast; dump logits $T/fast.npy" 2>"$T/err"
ok $? "set engine runs the text again, so the views stay valid"
$G -c "load $T/gpt2; run the cat; set textbook on; ln 1" >"$T/ln" 2>"$T/err"
check "set textbook on: layer norm in the textbook's form" have "$T/ln" "(sigma + eps) + b   (textbook form)"
$G -c "set colors sepia" 2>"$T/err"; rc=$?
check "an unknown setting value lists the choices" sh -c "test $rc = 1 && grep -q 'auto, plain, 16, 256 or truecolor' $T/err"

$G -c "load $T/gpt2; run John's ball; trace" >"$T/apos" 2>"$T/err"
check "an apostrophe inside a word does not swallow the commands after it" sh -c "grep -q '^logits' $T/apos"
$G -c "load $T/gpt2; run \"oops; trace" >"$T/apos" 2>"$T/err"; rc=$?
check "a quote left open is an error, and nothing after it runs" sh -c "test $rc = 1 && grep -q 'is not closed on this line' $T/err && ! grep -q logits $T/apos"

# A long input (issue 12): the query x key map wider than the terminal is a square window ending
# on the last token, or on --at T; the rows and the columns shown are the same tokens.
$G -c "init $T/long --preset gpt2 --dim 32 --layers 1 --heads 2 --context 600" >/dev/null 2>&1
awk 'BEGIN { for (i = 0; i < 150; i++) printf "the cat "; print "" }' >"$T/long.txt"
$G -c "load $T/long; run --file $T/long.txt; attn 1 2" >"$T/lw" 2>"$T/err"
check "attn on 600 tokens: a square window ending on the last token, said under the map" \
	sh -c "grep -Eq 'rows ([0-9]+)-600 of 600, cols \\1-600 of 600' $T/lw && grep -q 'a window ending on token 600 of 600 (the last)' $T/lw"
$G -c "load $T/long; run --file $T/long.txt; attn 1 2 --at 300; scores 1 1" >"$T/lw" 2>"$T/err"
check "attn --at 300: rows and columns end on token 300; scores after it keeps the token" \
	sh -c "test \$(grep -Ec 'rows ([0-9]+)-300 of 600, cols \\1-300 of 600' $T/lw) = 2 && test \$(grep -c 'ending on token 300 of 600' $T/lw) = 2"
n1=$(grep -Eo 'rows [0-9]+' "$T/lw" | head -1 | cut -d' ' -f2)
rows=$(grep -Ec '^ {0,3}[0-9]+ ' "$T/lw")
check "the window shows each of its rows once (rows $n1-300 of an attention map and of scores: $rows lines)" \
	test "$rows" = $(( (300 - n1 + 1) * 2 ))
$G -c "load $T/long; run --file $T/long.txt; attn 1 2 --at 601" >/dev/null 2>"$T/err"; rc=$?
check "--at past the text is refused with the range" sh -c "test $rc = 1 && grep -q \"\-\-at's token must be a whole number from 1 to 600 (got '601')\" $T/err"

exit $((fails > 0))
