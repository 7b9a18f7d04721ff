#!/bin/sh
# t_views.sh — what the views put in their figures so that each stands alone on a slide, read
# back from what the real binary exports: titles in words, the window of columns of a wide
# tensor (--units) and its numbers against the trace's, index-numbered columns, colour ranges
# that fit the data (sequential, symmetric, or centred with a side each), the logit lens's rows
# and tokens, layer norm's rows without statistics glued to the tokens, the temperature of
# `next`, and the colours of qkv's panels in the terminal.
cd "$(dirname "$0")/.." || exit 1
T=tests/tmp/views
rm -rf "$T" && mkdir -p "$T"
G=./glassbox
. tests/tap.sh
RUN="run When Mary and John went to the park, John gave a ball to"

echo "1..72"

# range_lo FILE / range_hi FILE: the two ends of a PNG's "Range" chunk ("lo .. hi").
range_lo() { png_text "$1" Range | awk '{ print $1 }'; }
range_hi() { png_text "$1" Range | awk '{ print $3 }'; }
# fields FILE LINE FROM TO: comma-separated fields FROM..TO of line LINE, one per line.
fields() { sed -n "$2p" "$1" | cut -d, -f"$3-$4" | tr ',' '\n'; }

# --- wide tensors: a window of columns, numbered from its first --------------------------------
$G -c "$RUN; dump L1.ffn.hidden $T/hidden.csv; ffn 1; export $T/ffn.png; export $T/ffn.csv; ffn 1 --units 65-128; export $T/ffn65.png; export $T/ffn65.csv" >"$T/out" 2>"$T/err"
ok $? "ffn 1 and ffn 1 --units 65-128 draw and export"
check "ffn 1 shows 64 of the 512 units by default (got $(head -n 1 "$T/ffn.csv" | tr ',' '\n' | tail -n +2 | wc -l))" \
	test "$(head -n 1 "$T/ffn.csv" | tr ',' '\n' | tail -n +2 | wc -l)" -eq 64
check "its columns are numbered 1 to 64" test "$(head -n 1 "$T/ffn.csv" | cut -d, -f2,65)" = "1,64"
check "the PNG records the window: Columns = units 1-64 of 512 (got '$(png_text "$T/ffn.png" Columns)')" \
	test "$(png_text "$T/ffn.png" Columns)" = "units 1-64 of 512"
check "--units 65-128: 64 columns numbered 65 to 128" test "$(head -n 1 "$T/ffn65.csv" | cut -d, -f2,65,66)" = "65,128"
fields "$T/hidden.csv" 2 65 128 >"$T/want"
fields "$T/ffn65.csv" 2 2 65 >"$T/got"
check "their numbers are units 65-128 of the trace's L1.ffn.hidden, first token" cmp -s "$T/want" "$T/got"
fields "$T/hidden.csv" 20 65 128 >"$T/want"
fields "$T/ffn65.csv" 20 2 65 >"$T/got"
check "and of its last token" cmp -s "$T/want" "$T/got"
$G -c "$RUN; ffn --units 65-128 1; export $T/ffn65b.csv" >/dev/null 2>"$T/err"
check "--units may come before the layer: the same table" cmp -s "$T/ffn65.csv" "$T/ffn65b.csv"
check "the PNG says units 65-128 of 512" test "$(png_text "$T/ffn65.png" Columns)" = "units 65-128 of 512"
check "the title is in words, and says which units it shows" \
	test "$(png_text "$T/ffn65.png" Title)" = "Feed-forward hidden units after the activation, layer 1 (units 65-128 of 512)"

$G -c "$RUN; ffn 1 --units 600-700" >/dev/null 2>"$T/err"; rc=$?
check "an out-of-range --units is one line and status 1: $(cat "$T/err")" \
	sh -c "test $rc = 1 && test \$(wc -l <$T/err) = 1 && grep -q 'units 600-700 do not exist: this view has units 1 to 512' $T/err"
$G -c "$RUN; embed --units 9" >/dev/null 2>"$T/err"; rc=$?
check "a malformed --units says the form: $(cat "$T/err")" \
	sh -c "test $rc = 1 && test \$(wc -l <$T/err) = 1 && grep -q -- '--units takes columns A-B counted from 1, e.g. --units 65-128' $T/err"
$G -c "$RUN; embed --units 100-; export $T/e100.csv; ln 1 --units all; export $T/lnall.csv; qkv 1 2 --units 9-16; export $T/qkv.csv" >/dev/null 2>"$T/err"
ok $? "embed --units A-, ln --units all and qkv --units run"
check "embed --units 100-: features 100 to 128, 29 of them" \
	test "$(head -n 1 "$T/e100.csv" | cut -d, -f2,30)" = "100,128" -a "$(head -n 1 "$T/e100.csv" | tr ',' '\n' | wc -l)" -eq 30
check "ln 1 --units all: every one of the 128 features" test "$(head -n 1 "$T/lnall.csv" | tr ',' '\n' | tail -n +2 | wc -l)" -eq 128
check "qkv --units 9-16: each panel shows features 9 to 16 (a header of panel, token and 8 numbers)" \
	test "$(head -n 1 "$T/qkv.csv")" = "panel,token,9,10,11,12,13,14,15,16"
check "layer norm's rows are the tokens alone (mean and variance are side columns now)" \
	test "$(sed -n 2p "$T/lnall.csv" | cut -d, -f1)" = "When"

# --- titles in words -----------------------------------------------------------------------------
$G -c "$RUN; show L1.resid.mid; export $T/mid.png; show L2.resid.post; export $T/post.png; show L1.ln2.var; export $T/var.png; show L3.attn.q 2; export $T/q.png" >/dev/null 2>"$T/err"
ok $? "show draws trace tensors"
check "show L1.resid.mid is titled 'After attention, layer 1', claiming only the 64 features shown (got '$(png_text "$T/mid.png" Title)')" \
	test "$(png_text "$T/mid.png" Title)" = "After attention, layer 1 (the first 64 of 128 features)"
check "show L2.resid.post: 'After layer 2 (the first 64 of 128 features)'" \
	test "$(png_text "$T/post.png" Title)" = "After layer 2 (the first 64 of 128 features)"
$G -c "$RUN; embed; export $T/emb.png; export $T/emb.csv; embed --units 1-64; export $T/emb1.png; embed --units 65-128; export $T/emb65.png; pe; export $T/pe64.png" >/dev/null 2>"$T/err"
check "embed shows all of tiny-lm's 128 features by default ($(head -n 1 "$T/emb.csv" | tr ',' '\n' | tail -n +2 | wc -l)), titled so" \
	sh -c "test $(head -n 1 "$T/emb.csv" | tr ',' '\n' | tail -n +2 | wc -l) -eq 128 && test '$(png_text "$T/emb.png" Title)' = 'Token embeddings: a vector of 128 features per token'"
check "a window's title claims only the features shown (got '$(png_text "$T/emb1.png" Title)')" \
	test "$(png_text "$T/emb1.png" Title)" = "Token embeddings: the first 64 of each token's 128 features"
check "and names a later window (got '$(png_text "$T/emb65.png" Title)')" \
	test "$(png_text "$T/emb65.png" Title)" = "Token embeddings: features 65-128 of each token's 128"
check "pe's too (got '$(png_text "$T/pe64.png" Title)')" \
	test "$(png_text "$T/pe64.png" Title)" = "Learned position vectors: the first 64 of each position's 128 features"
check "show L1.ln2.var: the norm named by where it sits (got '$(png_text "$T/var.png" Title)')" \
	test "$(png_text "$T/var.png" Title)" = "Layer norm before the feed-forward, layer 1: variance of each token's input"
check "show L3.attn.q 2: 'Queries, layer 3, head 2'" test "$(png_text "$T/q.png" Title)" = "Queries, layer 3, head 2"
check "the caption: the formula, the slice shown and the tensor's name for dump and print (got '$(png_text "$T/q.png" Description)')" \
	test "$(png_text "$T/q.png" Description)" = "q_i = x_i W_Q (this head's columns);  head 2 of 4: L3.attn.q (14 tokens x 32 features)"
# the heads side by side are named over their columns in the terminal too (the PNG draws rules)
COLUMNS=160 $G -c "$RUN; show L1.attn.merged --units all" >"$T/merged" 2>"$T/err"
check "show L1.attn.merged: '|head 1' to '|head 4' over the columns, 32 apart" \
	sh -c "grep '|head 1' $T/merged | perl -ne 'exit !(index(\$_, \"|head 2\") - index(\$_, \"|head 1\") == 32 && /\\|head 4/)'"
# pair: the last two heatmaps as one slide, on one scale, each panel with its own tokens
$G -c "load tiny-mt; translate 3 March 2021; show enc.L2.attn.weights 1; show dec.L2.attn.weights 1; pair Encoder and decoder; export $T/pair.png" >"$T/pair" 2>"$T/err"
check "pair: a grid titled as asked, from the two figures (got '$(png_text "$T/pair.png" Kind)', '$(png_text "$T/pair.png" Title)')" \
	sh -c "test '$(png_text "$T/pair.png" Kind)' = grid && test '$(png_text "$T/pair.png" Title)' = 'Encoder and decoder'"
check "pair: each panel keeps its own row tokens in the terminal (the decoder's <s>, the encoder's M)" \
	sh -c "grep -q ' 1 <s> ' $T/pair && grep -q ' 3 M ' $T/pair"
# pair of bar charts: side by side as panels on the charts' common axis, each named by what its
# title says apart from the other's, or as asked; wide maps one over the other
$G -c "load tiny-lm; run Mary has a; next 6 --temp 0.5 --range 0 0.1; next 6 --temp 2 --range 0 0.1; pair; export $T/bars.png" >"$T/bars" 2>"$T/err"
check "pair of bar charts: a decode figure of two panels (got '$(png_text "$T/bars.png" Kind)')" \
	test "$(png_text "$T/bars.png" Kind)" = decode
check "its panels named by what their titles say apart: temperature 0.5, temperature 2" \
	sh -c "grep -qx 'temperature 0.5' $T/bars && grep -qx 'temperature 2' $T/bars"
check "on the charts' axis 0 to 0.1: 0.085 is 26 of the terminal's 30 marks, 0.040 is 12" \
	sh -c "grep -q '^  ·white      #\{26\} 0.085$' $T/bars && grep -q '^  ·white      #\{12\} 0.040$' $T/bars"
$G -c "load tiny-lm; run Mary has a; next 6 --temp 0.5 --range 0 0.1; next 6 --temp 2 --range 0 0.1; pair; export $T/bars.svg" >/dev/null 2>"$T/err"
check "paired charts print their numbers alike: 4 decimals in both, since 0.0403 and 0.0397 would both read 0.040" \
	sh -c "grep -q '>0.0850</text>' $T/bars.svg && grep -q '>0.0403</text>' $T/bars.svg && grep -q '>0.0397</text>' $T/bars.svg"
check "each paired chart has its value axis: ticks 0.00 to 0.10 under both panels (review 11)" \
	test "$(perl -0ne 'while (/<g class="axis">(.*?)<\/g>/sg) { my $g = $1; print join(" ", $g =~ />([0-9.]+)<\/text>/g), "|" }' "$T/bars.svg")" = "0.00 0.02 0.04 0.06 0.08 0.10|0.00 0.02 0.04 0.06 0.08 0.10|"
$G -c "load tiny-lm; run The friends of the kings; generate 2 --temp 0; export $T/greedy.svg" >/dev/null 2>"$T/err"
check "decoding bars: a digit more where the two largest read the same (greedy step 2: 0.034 and 0.030, not 0.03 twice)" \
	sh -c "grep -q '>0.034</text>' $T/greedy.svg && grep -q '>0.030</text>' $T/greedy.svg"
$G -c "load tiny-lm; run Mary has a; next 3; next 3 --temp 2; pair Two | cold | warm" >"$T/bars2" 2>"$T/err"
check "pair TITLE | LEFT | RIGHT names the panels" sh -c "grep -qx Two $T/bars2 && grep -qx cold $T/bars2 && grep -qx warm $T/bars2"
$G -c "load tiny-lm; run Mary has a; set engine ref; next 3; set engine fast; next 3; pair E | ref | fast" >"$T/bars3" 2>"$T/err"
check "pair keeps what the two subtitles share, up to their last common ' · ' (the model and text, not the engine)" \
	sh -c "grep -A1 -x E $T/bars3 | tail -n 1 | grep -qx 'tiny-lm · “Mary has a”'"
$G -c "$RUN; show L2.ffn.up --range -3 3; show L2.ffn.hidden --range -3 3; pair" >"$T/stacked" 2>"$T/err"
check "pair of maps wider than tall: one over the other (the caption says top and bottom)" grep -q "^top: .*bottom: " "$T/stacked"
$G -c "$RUN; next 3; ffn 1; pair" >/dev/null 2>"$T/err"
check "pair of a bar chart and a map says what it takes" grep -q "pair sets two heatmaps or two bar charts side by side" "$T/err"
$G -c "load tiny-mt; translate 3 March 2021; pair" >/dev/null 2>"$T/err"
check "pair with fewer than two figures says what it needs" grep -q "pair sets the last two figures side by side" "$T/err"
# compare on an encoder-decoder: the encoder's layers have no cross-attention, and those cells
# are grey and said to be missing, not NaN
$G -c "load tiny-mt; translate 3 March 2021; compare" >"$T/cmpmt" 2>"$T/err"
check "compare on tiny-mt: the encoder's missing cross-attention cells are 'no such tensor', not NaN" \
	sh -c "grep -q '/ 26 no such tensor' $T/cmpmt && ! grep -q 'NaN' $T/cmpmt"
# a model of more than 32 heads: model is one table, layer x head, of how far back each head
# looks (the mean of L.attn.reach over the queries; reach = sum_j w_ij (i - j), checked here
# against the weights themselves for the first head)
$G -c "init $T/wide --dim 48 --layers 3 --heads 12" >/dev/null 2>&1
$G -c "load $T/wide; run abcdefgh; model; export $T/wide.png" >"$T/wide.out" 2>"$T/err"
check "model of 36 heads: one table titled 'how far back each head looks' (got '$(png_text "$T/wide.png" Title)')" \
	grep -q '^Every layer and head: how far back each head looks' "$T/wide.out"
$G -c "load $T/wide; run abcdefgh; print L2.attn.reach" >"$T/reach" 2>"$T/err"
$G -c "load $T/wide; run abcdefgh; print L2.attn.weights 5" >"$T/w5" 2>"$T/err"
# head 5's reach, line 5 of the (head, query) table, against its 8 x 8 weights: sum_j w_ij (i - j)
got=$(sed -n 5p "$T/reach" | awk '{ for (i = 1; i <= NF; i++) s += $i } END { printf "%.4f", s / NF }')
want=$(awk 'NR > 1 && NF { r++; for (j = 1; j <= NF; j++) s += $j * (r - j) } END { printf "%.4f", s / r }' "$T/w5")
check "L2 head 5's reach averages to its weights' sum_j w_ij (i - j) ($got vs $want)" awk "BEGIN { d = $got - $want; exit !(d < 1e-3 && d > -1e-3) }"
# show of one head of an attention table is the attention view: its title, its formula, its mask
$G -c "load tiny-mt; translate 3 March 2021; show dec.L1.attn.weights 1; show enc.L1.attn.weights 1" >"$T/showattn" 2>"$T/err"
check "show dec.L1.attn.weights 1 is titled as attn is" grep -q "^Layer 1, head 1: attention weights (decoder)$" "$T/showattn"
check "and greys the 55 weights the mask hid (an 11-token decoder: 11 x 10 / 2)" grep -q "/ 55 masked (0)" "$T/showattn"
check "show enc.L1.attn.weights 1 says the encoder has no mask" grep -q "no mask: every token sees every token" "$T/showattn"
$G -c "$RUN; next 5 --temp 0.5; export $T/next.png" >/dev/null 2>"$T/err"
check "next names its temperature in the title (got '$(png_text "$T/next.png" Title)')" \
	test "$(png_text "$T/next.png" Title)" = "After “When Mary and John went to the park, John gave a ball to”: the 5 most probable next tokens (temperature 0.5)"
$G -c "set engine ref; $RUN; next 3; export $T/next-ref.png; set engine fast; next 3; export $T/next-fast.png" >/dev/null 2>"$T/err"
check "after set engine, each chart names its engine in the title, the default one too (L15: '$(png_text "$T/next-ref.png" Title | sed 's/.*(//')', '$(png_text "$T/next-fast.png" Title | sed 's/.*(//')')" \
	sh -c 'case "$1" in *"(temperature 1, ref engine)") ;; *) exit 1 ;; esac
	       case "$2" in *"(temperature 1, fast engine)") ;; *) exit 1 ;; esac' - \
	"$(png_text "$T/next-ref.png" Title)" "$(png_text "$T/next-fast.png" Title)"

# --- colour ranges that fit the data -------------------------------------------------------------
lo=$(range_lo "$T/ffn.png"); hi=$(range_hi "$T/ffn.png")
check "GELU outputs ($lo .. $hi): a diverging map, centred, each side to its own extreme" \
	sh -c "test '$(png_text "$T/ffn.png" Colormap)' = coolwarm && awk 'BEGIN { exit !($lo < 0 && $lo > -0.2 && $hi > 1) }'"
$G -c "$RUN; pe; export $T/pe.png; resid; export $T/resid.png; show L1.ln1.var; export $T/lnvar.png; embed; export $T/embed.png" >/dev/null 2>"$T/err"
lo=$(range_lo "$T/pe.png"); hi=$(range_hi "$T/pe.png")
check "learned positions are drawn on their own scale ($lo .. $hi), not on -1 .. 1" \
	awk "BEGIN { exit !($lo == -$hi && $hi < 0.8 && $hi > 0.1) }"
lo=$(range_lo "$T/resid.png")
check "lengths |x| (non-negative): a sequential map from their minimum ($lo, magma)" \
	sh -c "test '$(png_text "$T/resid.png" Colormap)' = magma && awk 'BEGIN { exit !($lo > 0) }'"
lo=$(range_lo "$T/lnvar.png")
check "variances: sequential, from their minimum ($lo, viridis)" \
	sh -c "test '$(png_text "$T/lnvar.png" Colormap)' = viridis && awk 'BEGIN { exit !($lo > 0) }'"
lo=$(range_lo "$T/embed.png"); hi=$(range_hi "$T/embed.png")
check "embeddings (signed, both sides alike): symmetric ($lo .. $hi)" awk "BEGIN { exit !($lo == -$hi) }"
$G -c "load tiny-mt; run 3 March 2021; pe; export $T/sin.png" >/dev/null 2>"$T/err"
check "sinusoids keep the scale of sin and cos, -1 .. 1 (got $(png_text "$T/sin.png" Range))" \
	test "$(png_text "$T/sin.png" Range)" = "-1 .. 1"
# In the terminal a centred (truncated symmetric) range gives the largest GELU output the map's
# red end and its small negatives (-0.17 of +1.6) a pale blue, never the dark blue end, in the
# cells and in the colour bar alike.
COLUMNS=200 LINES=60 $G -c "set colors truecolor; $RUN; ffn 1" >"$T/ffn.ans" 2>"$T/err"
check "the terminal draws GELU's largest output in coolwarm's red end and nothing in its blue end" \
	sh -c "grep -q '8;2;180;4;38m' $T/ffn.ans && ! grep -q '8;2;59;76;192m' $T/ffn.ans"

# --- qkv: the panels in the colour map of their bar, with labels --------------------------------
COLUMNS=160 LINES=48 $G -c "set colors truecolor; $RUN; qkv 1 1" >"$T/qkv.ans" 2>"$T/err"
check "qkv's panels are drawn in coolwarm (its blue end is there)" grep -q '48;2;59;76;192m' "$T/qkv.ans"
check "and not in viridis (its dark end 68,1,84 is not)" sh -c "! grep -q '48;2;68;1;84m' $T/qkv.ans"
COLUMNS=160 LINES=48 $G -c "set colors plain; $RUN; qkv 1 1" >"$T/qkv.txt" 2>"$T/err"
check "each panel's rows carry the tokens (three '·ball' rows)" test "$(grep -o '·ball' "$T/qkv.txt" | wc -l)" -eq 3
check "and its columns the feature numbers 1 to 32" grep -q '12345678901234567890123456789012 .*12345678901234567890123456789012 .*12345678901234567890123456789012' "$T/qkv.txt"

# --- the logit lens ------------------------------------------------------------------------------
$G -c "$RUN; lens; export $T/lens.csv" >/dev/null 2>"$T/err"
nb=$(printf '\302\240')
check "the lens's rows read 'embeddings' and 'after layer 1' (no-break spaces, so not 'layer·1')" \
	sh -c "cut -d, -f1 $T/lens.csv | sed -n '2p;3p' | tr '\n' '|' | grep -qx 'embeddings|after${nb}layer${nb}1|'"

# --- an index beside a digit token: '10 "0"', not "10 0", in the terminal and the SVG, the
# index in the lighter ink (#555555) and the token in the darker one ----------------------------
COLUMNS=160 LINES=48 $G -c "load tiny-mt; run 3 March 2021; show enc.L1.attn.weights; export $T/mt.svg" >"$T/mt.txt" 2>"$T/err"
check "terminal: digit and space tokens beside their index are quoted (10 \"0\", 8 \"·\")" \
	sh -c "grep -q '10 \"0\"' $T/mt.txt && grep -q ' 8 \"·\"' $T/mt.txt && ! grep -q '10 0 ' $T/mt.txt"
check "svg: the label '10 \"0\"': its index '10 ' in gray, its token '\"0\"' beside it in the dark ink" \
	sh -c "grep '>10 <' $T/mt.svg | grep -q '#555555' && grep '>&quot;0&quot;<' $T/mt.svg | grep -q '#222222'"

# --- --range LO HI: a pair of figures on one scale ----------------------------------------------
$G -c "$RUN; scores 1 1 raw; export $T/raw.png; scores 1 1 --range -4.2 4.2; export $T/scaled.png; next 5 --temp 0.5 --range 0 0.5; export $T/n05.png; export $T/n05.svg" >/dev/null 2>"$T/err"
check "scores --range -4.2 4.2: the scaled scores on the raw scores' scale (got '$(png_text "$T/scaled.png" Range)', raw '$(png_text "$T/raw.png" Range)')" \
	sh -c "test '$(range_lo "$T/scaled.png")' = -4.19999981 && test '$(range_hi "$T/scaled.png")' = 4.19999981"
check "next --range 0 0.5: the probability axis as asked, not its own 0 .. 1 (got '$(png_text "$T/n05.png" Range)')" \
	test "$(png_text "$T/n05.png" Range)" = "0 .. 0.5"
check "next's value axis is titled 'probability'" grep -q '>probability</text>' "$T/n05.svg"
$G -c "$RUN; scores 1 1 --range 1 0" >/dev/null 2>"$T/err"
check "--range 1 0 is refused in one line ($(cat "$T/err"))" \
	sh -c "test \$? -ne 0 -o -s $T/err && grep -q 'LO < HI' $T/err && test \$(wc -l < $T/err) -eq 1"

# --- the heads' outputs side by side: all 128 features, a rule and "head k" per 32 -------------
$G -c "$RUN; show L1.attn.merged; export $T/merged.svg; export $T/merged.csv; show L1.attn.merged --units 17-80; export $T/merged2.svg" >/dev/null 2>"$T/err"
check "show L1.attn.merged shows all 128 features by default ($(head -n 1 "$T/merged.csv" | tr ',' '\n' | tail -n +2 | wc -l))" \
	test "$(head -n 1 "$T/merged.csv" | tr ',' '\n' | tail -n +2 | wc -l)" -eq 128
check "and labels its four heads over their columns" \
	sh -c "grep -q '>head 1</text>' $T/merged.svg && grep -q '>head 4</text>' $T/merged.svg && ! grep -q '>head 5</text>' $T/merged.svg"
check "a window 17-80 labels heads 1 to 3 (head 1 narrow: 16 columns)" \
	sh -c "grep -q '>head 2</text>' $T/merged2.svg && grep -q '>head 3</text>' $T/merged2.svg && ! grep -q '>head 4</text>' $T/merged2.svg"

# --- cross-attention's footer: no mask, and who gives queries and keys -------------------------
$G -c "load tiny-mt; run 3 March 2021; cross 1 1; export $T/cross.png" >/dev/null 2>"$T/err"
d=$(png_text "$T/cross.png" Description)
check "cross's caption has no '+ mask' and names decoder and encoder (got '$d')" \
	sh -c "case '$d' in *'+ mask'*) exit 1;; *'queries: decoder'*) exit 0;; *) exit 1;; esac"

# --- a long text in the subtitle is cut in the middle: its start and its end stay in view -------
$G -c "run The cup owl sat on the shelf. It started to rain and then the cup owl; attn 1 1" >"$T/long.txt" 2>"$T/err"
sub=$(sed -n 2p "$T/long.txt")
check "the subtitle keeps the start and the repeated end ($sub)" \
	sh -c "echo '$sub' | grep -q '“The cup owl' && echo '$sub' | grep -q '… .*the cup owl”'"

exit $((fails > 0))
