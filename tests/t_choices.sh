#!/bin/sh
# t_choices.sh — issue 19's views of what each architecture choice does, on random models
# made by `init --set` and on the shipped tiny-lm: the loss of each token against -log p of
# the next token from the probs; runs past the trained context (learned positions refuse);
# the shift test's equalities and inequalities; ALiBi's slopes and biases, T5's bucket
# labels and RoPE's pairs against hand-computed values.
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
T=$ROOT/tests/tmp/choices
rm -rf "$T" && mkdir -p "$T"
. tests/tap.sh
gb() { "$ROOT/glassbox" -c "$1"; }
cd "$T" || exit 1
echo "1..60"

# ---- random models of each kind of positions (small: they run in milliseconds) ----
for p in learned sinusoidal rope alibi t5 none; do
	gb "init r-$p --set position=$p --dim 32 --heads 4 --context 48 --seed 3" >/dev/null 2>&1 || echo "init $p failed"
done
check "init --set makes a random model of each kind of positions" test -f r-t5/model.safetensors -a -f r-alibi/config.json
gb "init bad --set colour=red" >bad.txt 2>&1
[ $? = 1 ] && have bad.txt "unknown field 'colour'" && ! test -d bad
ok $? "init --set: an unknown field is one clear error, and no folder"

# ---- loss: -log p(next token), from the probs the trace holds ----
TEXT="When Mary and John went to the park, John gave a ball to"
gb "run $TEXT; loss; export loss.csv; dump tokens tok.csv; dump probs probs.csv; loss --curve; export curve.csv" >out.txt 2>&1
# probs.csv: a comment line, then one row per token; tok.csv: a comment, then the ids
awk -F, 'FNR == 1 { f++; next }
	f == 1 { for (i = 1; i <= NF; i++) id[i - 1] = $i; n = NF; next }
	f == 2 { p[FNR - 2] = $(id[FNR - 1] + 1); next }
	f == 3 { want = -log(p[FNR - 2]); d = $NF - want; if (d < 0) d = -d; if (d > 1e-4 * (1 + want)) bad++; k++ }
	END { exit !(k == n - 1 && k > 5 && !bad) }' tok.csv probs.csv loss.csv
ok $? "loss of each token = -log p(next token) from the probs (tiny-lm, $(($(wc -l <loss.csv) - 1)) tokens)"
awk -F, 'NR > 1 { s += $2; k++; d = $3 - s / k; if (d < 0) d = -d; if (d > 1e-4) bad++ } END { exit !(k > 5 && !bad) }' curve.csv
ok $? "loss --curve: the running mean is the mean of the losses so far"
have out.txt "Loss of each token" && have out.txt "mean " && have out.txt "bits a token"
ok $? "loss: the strip's title and its mean in the caption"

# ---- runs past the trained context ----
gb "set context 200" >ctx.txt 2>&1
[ $? = 1 ] && have ctx.txt "positions are learned: a table of 128 rows" && have ctx.txt "position 129 has no row"
ok $? "set context past a learned table is one clear error (tiny-lm: 128 rows)"
LONG="the cat sat on the mat and the dog ran to the park"
gb "load r-rope; run $LONG; trace" 2>&1 | grep -q "kept the last 48"
ok $? "without set context a long text keeps the last 48 tokens (the context)"
gb "load r-rope; set context 64; run $LONG; loss --curve; export past.csv" >past.txt 2>&1
head -n 1 past.csv | grep -q "past position 48," && [ "$(($(wc -l <past.csv) - 1))" = 49 ] && have past.txt "over 49 predictions" &&
	! grep -q "NaN/inf" past.txt
ok $? "RoPE, set context 64: a 50-token run, its curve's part past position 48 its own line (where a line stops is no NaN/inf)"
awk -F, 'NR > 1 { if ($1 < 48 && ($2 == "nan" || $3 != "nan")) bad++; if ($1 > 48 && ($2 != "nan" || $3 == "nan")) bad++; k++ }
	END { exit !(k == 49 && !bad) }' past.csv
ok $? "the two lines split at the trained context (within: positions 2-48, past: 49-51)"
gb "load r-rope; set context 64; run $LONG; loss --curve; export past.svg" >/dev/null 2>&1
[ "$(grep -o '<polyline[^>]*stroke="#[0-9a-f]*"' past.svg | grep -o 'stroke="#[0-9a-f]*"' | sort -u | wc -l)" = 1 ]
ok $? "split at the trained context, the curve is drawn in one colour, the model's (lesson 17 gives each model one; review 12)"
gb "load r-alibi; set context 64; run $LONG; load r-rope; run $LONG" 2>&1 | grep -q "kept the last 48"
ok $? "load goes back to the new model's own context"
gb "load r-learned; set context 20; run $LONG" 2>&1 | grep -q "kept the last 20"
ok $? "a shorter context is allowed for learned positions too"

# ---- the shift test ----
for p in learned sinusoidal rope alibi t5 none; do
	gb "load r-$p; set engine ref; run the cat sat on; positions shift 1 2 --by 5; export shift-$p.csv" >shift-$p.txt 2>&1
done
for p in rope alibi t5 none; do
	[ "$(grep -c ' equal$' shift-$p.txt)" = 4 ] || echo "$p: not every head equal"
done >eq.txt
[ ! -s eq.txt ] && grep -q "depend only on the offset" shift-rope.txt && grep -q "with no positions they depend only on the tokens" shift-none.txt
ok $? "shift test: RoPE, ALiBi, T5 and no positions keep every head's layer-1 scores ($(grep -h 'head  1' shift-rope.txt | awk '{print $6}') for RoPE)"
grep -h "head" shift-alibi.txt shift-t5.txt | grep -q "difference| 0 " && ! grep -h "head  [0-9]" shift-alibi.txt shift-t5.txt | grep -vq "difference| 0 "
ok $? "shift test: ALiBi's and T5's biases on the reference engine: differences exactly 0"
for p in learned sinusoidal; do
	[ "$(grep -c ' different$' shift-$p.txt)" = 4 ] || echo "$p: a head kept its scores"
done >ne.txt
[ ! -s ne.txt ]
ok $? "shift test: learned and sinusoidal positions change every head's scores ($(grep -h 'head  1' shift-learned.txt | awk '{print $6}') for learned)"
# the figure's two panels: the rows of the second (positions 5..) are the first's, for RoPE
awk -F, 'NR > 1 { k = $2 SUBSEP (NR % 14); if ($1 ~ /^tokens 1-14 at positions 0-/) a[NR - 1] = $0; else b[NR - 1 - 14] = $0 }
	END { for (i in a) { split(a[i], x, ","); split(b[i], y, ","); for (j = 3; j <= 16; j++) { if (x[j] == "-inf") continue; d = x[j] - y[j]; if (d < 0) d = -d; if (d > 1e-4) bad++; m++ } } exit !(m > 50 && !bad) }' shift-rope.csv
ok $? "shift test's figure (RoPE): the two panels hold the same scores"
grep -q "scores stay the same" shift-rope.txt && grep -q "scores change" shift-learned.txt
ok $? "shift test's title says which (stay the same / change)"

# ---- ALiBi, T5, RoPE against hand-computed values ----
gb "load r-alibi; run the cat; positions alibi; export slopes.csv; positions offset; export off.csv" >/dev/null 2>&1
[ "$(tail -n +2 slopes.csv | sed 's/\xc2\xa0/ /g' | tr '\n' ' ')" = "head 1,0.25 head 2,0.0625 head 3,0.015625 head 4,0.00390625 " ]
ok $? "ALiBi slopes of 4 heads: 2^-2, 2^-4, 2^-6, 2^-8"
[ "$(sed -n 5p off.csv)" = "3,-0.75,-0.1875,-0.046875,-0.01171875" ] && [ "$(sed -n 2p off.csv)" = "0,0,0,0,0" ]
ok $? "ALiBi's bias at offset 3: -3 m_h for each head; 0 at offset 0"
gb "load r-t5; positions buckets; export buckets.csv" >/dev/null 2>&1
head -n 1 buckets.csv | grep -q "^head,0,1,2,.*,14,15,16-18,19-20,21-23,.*,99-112,113+$"
ok $? "T5 buckets (32, max 128): offsets 0-15 one each, bucket 16 = 16-18 (16 log(n/16)/log 8 < 1), the last 113+"
gb "load r-rope; positions rope 0 3; export rope.csv" >/dev/null 2>&1
# theta_k = 10000^(-2k/8) with d_head 8: pair 0 turns 1 rad a position, pair 3 0.001^0.75
awk -F, '$1 == 3 { d = $2 - cos(3); e = $3 - cos(3 * 10000 ^ (-6 / 8)); if (d < 0) d = -d; if (e < 0) e = -e; ok = d < 1e-5 && e < 1e-5 } END { exit !ok }' rope.csv
ok $? "RoPE pairs: cos(3 theta_0) = cos 3 and cos(3 theta_3), theta_3 = 10000^(-6/8)"
gb "load r-rope; positions alibi" >err.txt 2>&1
[ $? = 1 ] && have err.txt "this model has RoPE, not ALiBi"
ok $? "positions alibi on a RoPE model: one clear error"

# ---- compare-models: one figure, each panel the single view's numbers ----
gb "load r-learned; run the cat sat; compare-models r-rope r-alibi attn 1 2; export cm.csv; loss; export after.csv; info" >cm.txt 2>&1
gb "load r-rope; run the cat sat; attn 1 2; export a-rope.csv; loss --curve; export lc-rope.csv" >/dev/null 2>&1
gb "load r-alibi; run the cat sat; attn 1 2; export a-alibi.csv; loss --curve; export lc-alibi.csv" >/dev/null 2>&1
gb "load r-learned; run the cat sat; loss; export learned.csv" >/dev/null 2>&1
[ "$(grep '^r-rope,' cm.csv | cut -d, -f2-)" = "$(tail -n +2 a-rope.csv)" ] &&
	[ "$(grep '^r-alibi,' cm.csv | cut -d, -f2-)" = "$(tail -n +2 a-alibi.csv)" ] && [ "$(grep -c '^r-rope,' cm.csv)" = 11 ]
ok $? "compare-models r-rope r-alibi attn 1 2: each panel holds the single view's weights (11 x 11)"
cmp -s after.csv learned.csv && grep -q "Layer 1, head 2: attention weights" cm.txt && grep -q "r-rope and r-alibi" cm.txt
ok $? "compare-models: one titled figure naming both models; the session's own model (r-learned) and text stay"
gb "run the cat sat; compare-models r-rope r-alibi loss --curve; export cmc.csv" >/dev/null 2>&1
[ "$(head -n 1 cmc.csv)" = "position of the predicted token (from 1),r-rope: loss of the token,r-rope: running mean,r-alibi: loss of the token,r-alibi: running mean" ] &&
	[ "$(cut -d, -f2 cmc.csv | tail -n +2)" = "$(cut -d, -f2 lc-rope.csv | tail -n +2)" ] &&
	[ "$(cut -d, -f4 cmc.csv | tail -n +2)" = "$(cut -d, -f2 lc-alibi.csv | tail -n +2)" ]
ok $? "compare-models ... loss --curve: one plot, each model's series named and equal to its own curve"
gb "run the cat; compare-models r-rope r-alibi heads 1; export cmh.csv" >/dev/null 2>&1
[ "$(cut -d, -f1 cmh.csv | sort -u | tr '\n' ' ')" = "panel r-alibi: head 1 r-alibi: head 2 r-alibi: head 3 r-alibi: head 4 r-rope: head 1 r-rope: head 2 r-rope: head 3 r-rope: head 4 " ]
ok $? "compare-models ... heads 1: a row of four head panels per model"
# each model's own ten most probable tokens: a column each, with its own labels (the two lists
# differ here: both models have ·are and ·have first, then other tokens)
gb "load tiny-lm; run The friends of the kings; compare-models tiny-lm tiny-lm-rope next; export cmn.csv" >cmn.txt 2>&1
gb "load tiny-lm-rope; run The friends of the kings; next; export n-rope.csv" >/dev/null 2>&1
gb "load tiny-lm; run The friends of the kings; next; export n-lm.csv" >/dev/null 2>&1
[ "$(grep '^tiny-lm,' cmn.csv | cut -d, -f2-)" = "$(tail -n +2 n-lm.csv)" ] &&
	[ "$(grep '^tiny-lm-rope,' cmn.csv | cut -d, -f2-)" = "$(tail -n +2 n-rope.csv)" ] &&
	! cmp -s n-lm.csv n-rope.csv && grep -q "·think" cmn.txt && grep -q "·work" cmn.txt
ok $? "compare-models tiny-lm tiny-lm-rope next: each model's panel names its own top tokens beside their probabilities"
gb "run the cat; compare-models r-rope nowhere attn 1 1" >cmerr.txt 2>&1
[ $? = 1 ] && grep -q "nowhere" cmerr.txt && gb "run the cat; compare-models r-rope r-alibi load x" 2>&1 | grep -q "shows a view"
ok $? "compare-models: a model that does not load, or a command that is not a view, is one clear error"

# ---- shared keys and values: the cache's bytes in info, the heads drawn by key/value head ----
gb "init gqa --preset llama --dim 64 --heads 8 --kv-heads 2 --layers 2; load gqa; info; run the cat; heads 1; export gqa.csv" >gqa.txt 2>&1
unwrap <gqa.txt >gqa1.txt
have gqa1.txt "kv cache    256 bytes per token (2 x 2 layers x 2 key/value heads x 8 x 4 bytes); 1024 with a key/value head per query head (4x); 32.8 KB for the context of 128"
ok $? "info: the KV cache per token, 2 L K d_head 4 = 256 bytes for 2 key/value heads (1024 without sharing)"
gb "info" | unwrap | grep -q "kv cache    4096 bytes per token (2 x 4 layers x 4 key/value heads x 32 x 4 bytes); 524.3 KB for the context of 128"
ok $? "info on tiny-lm: 4096 bytes per token, 524.3 KB for its 128 positions"
[ "$(grep -o '^"head [0-9]*, key/value head [0-9]*"' gqa.csv | uniq | tr -d '"' | tr '\n' '|')" = "head 1, key/value head 1|head 2, key/value head 1|head 3, key/value head 1|head 4, key/value head 1|head 5, key/value head 2|head 6, key/value head 2|head 7, key/value head 2|head 8, key/value head 2|" ] &&
	have gqa.txt "each row sums to 1; each row: a group o"
ok $? "heads on grouped-query attention: a row per key/value head, each panel naming its own"

# ---- mixture of experts: routing, load, tokens, from the trace ----
gb "init moe --set num_local_experts=4 --set num_experts_per_tok=2 --dim 32 --context 48" >/dev/null 2>&1
gb "load moe; run the cat sat; experts 1; export route.csv; dump L1.ffn.router_probs rp.csv; dump L1.ffn.chosen ch.csv; experts 1 --load; export load.csv; experts 1 --tokens 3; export mtok.csv" >moe.txt 2>&1
[ "$(tail -n +2 route.csv | cut -d, -f2-)" = "$(tail -n +2 rp.csv)" ]
ok $? "experts 1: the map is the router's probabilities (L1.ffn.router_probs)"
# the chosen experts in brackets, row by row, as L1.ffn.chosen has them
grep '^ *[0-9]* ' moe.txt | grep '\[' | head -n 11 | awk '{ s = ""; for (i = 3; i <= NF; i++) if ($i ~ /^\[/) s = s (s == "" ? "" : ",") (i - 3); print s }' >marks.txt
tail -n +2 ch.csv | awk -F, '{ print ($1 < $2 ? $1 "," $2 : $2 "," $1) }' >want.txt
cmp -s marks.txt want.txt && [ "$(wc -l <marks.txt)" = 11 ]
ok $? "experts 1: each token's two chosen experts in brackets, as L1.ffn.chosen (11 tokens)"
tail -n +2 ch.csv | awk -F, '{ c[$1]++; c[$2]++; n += 2 } END { for (e = 0; e < 4; e++) printf "expert 1,%g\n", c[e] / n }' >wl.txt
awk -F, -v OFS=, 'NR > 1 { print "expert 1", $2 + 0 }' load.csv | awk -F, 'NR == FNR { w[NR] = $2; next } { d = $2 - w[FNR]; if (d < 0) d = -d; if (d > 1e-6) bad++; k++ } END { exit !(k == 4 && !bad) }' wl.txt -
ok $? "experts 1 --load: each expert's share of the 22 choices, counted from L1.ffn.chosen"
gb "load moe; run the cat sat; dump tokens tk.csv" >/dev/null 2>&1
awk -F, 'FNR == 1 { f++; next } f == 1 { for (i = 1; i <= NF; i++) id[i - 1] = $i; next }
	{ for (j = 1; j <= 2; j++) c[$j, id[FNR - 2]]++ }
	END { for (e = 0; e < 4; e++) { n = 0; for (k in c) { split(k, p, SUBSEP); if (p[1] == e) v[++n] = c[k] }
		for (a = 1; a <= n; a++) for (b = a + 1; b <= n; b++) if (v[b] > v[a]) { t = v[a]; v[a] = v[b]; v[b] = t }
		printf "expert %d", e + 1; for (r = 1; r <= 3; r++) printf ",%d", r <= n ? v[r] : 0; printf "\n"; delete v } }' tk.csv ch.csv >wt.txt
[ "$(tail -n +2 mtok.csv | sed 's/\xc2\xa0/ /g')" = "$(cat wt.txt)" ]
ok $? "experts 1 --tokens 3: each expert's three largest counts of one token, counted from the trace"
gb "init moe1 --set num_local_experts=4 --set num_experts_per_tok=1 --dim 32 --context 48" >/dev/null 2>&1
gb "load moe1; run the cat sat; experts 1 --load; export load1.csv" >/dev/null 2>&1
gb "run the cat sat; compare-models moe moe1 experts 1 --load; export cmload.csv" >/dev/null 2>&1
[ "$(grep '^moe,' cmload.csv | cut -d, -f3-)" = "$(tail -n +2 load.csv | cut -d, -f2 | tr '\n' ',' | sed 's/,$//')" ] &&
	[ "$(grep '^moe1,' cmload.csv | cut -d, -f3-)" = "$(tail -n +2 load1.csv | cut -d, -f2 | tr '\n' ',' | sed 's/,$//')" ]
ok $? "compare-models moe moe1 experts 1 --load: two rows on one scale, each the model's own load"
gb "run the cat; experts 1" >dense.txt 2>&1
[ $? = 1 ] && have dense.txt "one dense feed-forward network, not a mixture of experts"
ok $? "experts on a dense model: one clear error"

# ---- linear attention: both orders of computation, the state ----
gb "init lin --set attention=linear --dim 32 --context 48" >/dev/null 2>&1
for e in ref fast; do
	gb "load lin; set engine $e; run the cat sat on the mat; linear 1 2; linear 2 3" >lin-$e.txt 2>&1
done
awk '/largest \|difference\| of the outputs/ { d = $6; m = $10; sub(/\)/, "", m); e = $NF; k++; if (!(d < 1e-5 * (1 + m) && e < 1e-5 * (1 + m))) bad++ } END { exit !(k == 4 && !bad) }' lin-ref.txt lin-fast.txt
ok $? "linear: the recurrent order (a d x d state) gives the quadratic order's output and the engine's, ref and fast ($(grep -h 'largest |diff' lin-fast.txt | head -n 1 | awk '{print $6}'))"
have lin-ref.txt "quadratic order: the 22 x 22 implied weights" && have lin-ref.txt "recurrent order: a 8 x 8 state"
ok $? "linear: the sizes of the two orders (22 x 22 weights, an 8 x 8 state)"
gb "load lin; run the cat; dump L1.attn.k_feat kf.csv; dump L1.attn.v v.csv; linear 1 1 --state 1; export st.csv" >/dev/null 2>&1
# the state after the 7 keys of head 1 (kv head 1: the first 7 rows after its comment) = sum phi(k) v^T
awk -F, 'FNR == 1 { f++; r = 0; blk = 0; next } /^#/ { blk++; next } NF == 0 { next }
	f == 1 && blk == 1 { r++; for (a = 1; a <= NF; a++) K[r, a - 1] = $a; next }
	f == 2 && blk == 1 { r++; for (b = 1; b <= NF; b++) V[r, b - 1] = $b; n = r; next }
	f == 3 { a = $2; for (b = 0; b < 8; b++) { w = 0; for (j = 1; j <= 7; j++) w += K[j, a] * V[j, b]; d = $(b + 3) - w; if (d < 0) d = -d; if (d > 1e-4 * (1 + (w < 0 ? -w : w))) bad++; c++ } }
	END { exit !(c == 64 && n == 7 && !bad) }' kf.csv v.csv st.csv
ok $? "linear --state: the state after 7 keys is sum_j phi(k_j) v_j^T (8 x 8, from the trace's k_feat and v)"
gb "load lin; run the cat sat on the mat; linear 1 2; export both.csv" >/dev/null 2>&1
awk -F, 'NR == 1 { next } { p = ($1 ~ /weights/) ? 1 : 2; n[p]++; for (i = 3; i <= NF; i++) { v = $i; if (v == "-inf") continue; a = v < 0 ? -v : v; if (a > m[p]) m[p] = a } }
	END { exit !(n[1] == 22 && n[2] == 8 && m[1] == 1 && m[2] == 1) }' both.csv
ok $? "linear 1 2: the 22 x 22 implied weights beside the 8 x 8 state, each divided by its largest |value|"
gb "load lin; run the cat sat on the mat; linear 1 2; export both.svg" >/dev/null 2>&1
for t in query key "phi(k) feature" "v feature"; do
	[ "$(grep -c ">$t</text>" both.svg)" = 1 ] || echo "axis title '$t' not drawn once"
done >axes.txt
[ -s both.svg ] && ! [ -s axes.txt ]
ok $? "linear 1 2 (L22): each panel names its own axes, query/key under the weights, phi(k) feature/v feature under the state $(cat axes.txt)"
gb "load lin; info" | unwrap | grep -q "linear attention needs only its running state: 2304 bytes (2 layers x 4 key/value heads x (8 x 8 + 8) x 4), whatever the length"
ok $? "info on linear attention: the running state's bytes, 2 x 4 x (64 + 8) x 4 = 2304, beside the cache's 512 a token"
gb "run the cat; linear 1 1" >soft.txt 2>&1
[ $? = 1 ] && have soft.txt "attention is softmax, not linear"
ok $? "linear on a softmax model: one clear error"

# ---- masks applied to the run ----
gb "init w0 --dim 32 --context 48 --seed 5; init w4 --dim 32 --context 48 --seed 5 --set window=4" >/dev/null 2>&1
gb "load w0; set engine ref; run the cat sat on the mat; set mask window 4; dump logits m.csv; dump L1.attn.weights mw.csv; loss; export ml.csv; set mask none; dump logits n.csv" >mask.txt 2>&1
gb "load w4; set engine ref; run the cat sat on the mat; dump logits w.csv" >/dev/null 2>&1
gb "load w0; set engine ref; run the cat sat on the mat; dump logits z.csv; loss; export zl.csv" >/dev/null 2>&1
cmp -s m.csv w.csv && ! cmp -s m.csv z.csv
ok $? "set mask window 4 on a model gives the logits of the same weights with the config's window 4 (and not the full ones)"
cmp -s n.csv z.csv
ok $? "set mask none gives the full run back, bit for bit"
# the weights: every key 4 or more back is 0, in every head
awk -F, '/^#/ || NF == 0 { if ($0 ~ /^# head/) i = 0; next } { for (j = 1; j <= NF; j++) { d = i - (j - 1); if (d >= 4 && $j != 0) bad++; if (d >= 0 && d < 4 && $j == 0) zero++ } i++; n++ }
	END { exit !(n == 4 * 22 && !bad && !zero) }' mw.csv
ok $? "under the window the weights of keys 4 or more back are 0 in every head of layer 1"
want=$(awk -F, 'NR == FNR { if (FNR > 1) a += $NF; k = FNR - 1; next } FNR > 1 { b += $NF } END { printf "%.4f -> %.4f", a / k, b / k }' zl.csv ml.csv)
have mask.txt "mean loss of the text $want"
ok $? "set mask prints the change of the mean loss ($want), the loss views' own numbers"
have mask.txt "the most probable next token changed at" && have mask.txt "mask: full causal attention -> a window of 4"
ok $? "set mask says what changed: the pattern and the predictions"
gb "set mask window 3; receptive 16; export rf.csv" >/dev/null 2>&1
[ "$(grep -o '^[0-9] layers\{0,1\}: the last sees [0-9]* of 16' rf.csv | uniq | tr -d '"' | tr '\n' '|')" = "1 layer: the last sees 3 of 16|2 layers: the last sees 5 of 16|3 layers: the last sees 7 of 16|4 layers: the last sees 9 of 16|" ]
ok $? "receptive under a window of 3 on tiny-lm's 4 layers: the last token sees l(w - 1) + 1 = 3, 5, 7, 9 of 16"
gb "run $TEXT; set mask window 4; receptive; export rf14.png" >/dev/null 2>&1
shown=$(png_text rf14.png LabelsShown)
cols=${shown#*columns }
[ -n "$shown" ] && [ "${cols%/*}" -lt "${cols#*/}" ] && [ "$((3 * ${cols%/*}))" -ge "${cols#*/}" ] && [ "$(png_text rf14.png MinTextPx)" -ge 18 ]
ok $? "receptive (L14): the position numbers under its four panels are thinned to a round step, not set upright side by side ($shown)"

# ---- the cost of attention, measured (the numbers are timings: only their shape is checked) ----
gb "cost --memory --max 256; export costm.csv; cost --max 256; export cost.csv" >cost.txt 2>&1
[ "$(cut -d, -f1 costm.csv | tr '\n' ' ')" = "log2 tokens (6 = 64 ... 12 = 4096) 6 7 8 " ] &&
	awk -F, 'NR > 1 { if ($2 != 2 * $1 + 2 || $3 != 15) bad++; d = $4 - log(4 * (64 * 64 + 64)) / log(2); if (d < 0) d = -d; if (d > 1e-4) bad++ } END { exit bad > 0 }' costm.csv &&
	head -n 1 costm.csv | grep -q "softmax (slope 2.00),window 64 (slope 0.00),linear (slope 0.00)"
ok $? "cost --memory: the n x n table is 4 n^2 bytes (slope 2), the window's band 64 x 128 x 4, linear's state (64^2 + 64) x 4"
awk -F, 'NR > 1 { for (i = 2; i <= 4; i++) if ($i == "nan" || $i == "" || $i + 0 != $i) bad++; k++ } END { exit !(k == 3 && !bad) }' cost.csv &&
	have cost.txt "softmax ms" && [ "$(grep -c '^ *[0-9]* *[0-9.]* *[0-9.]* *[0-9.]* *[0-9]*$' cost.txt)" -ge 6 ]
ok $? "cost: a measured time for each form at 64, 128 and 256 tokens, the table printed"

# ---- norms: the residual stream, the gradient per layer through the trainer's backward pass ----
gb "init pre --dim 32 --layers 4 --context 48; init post --dim 32 --layers 4 --context 48 --set norm_position=post" >/dev/null 2>&1
for m in pre post; do
	gb "load $m; run the cat sat on the mat; norms --grad --check; norms --grad; export g-$m.csv; norms; export r-$m.csv; dump embed.sum e-$m.csv; dump L4.resid.post p-$m.csv" >n-$m.txt 2>&1
done
awk '/relative difference/ { k++; if (!($NF < 2e-3)) bad++ } END { exit !(k == 10 && !bad) }' n-pre.txt n-post.txt
ok $? "norms --grad --check: each layer's gradient norm is the loss's slope along it by central differences (pre- and post-norm, 10 of 10 within 2e-3)"
for m in pre post; do
	awk '/relative difference/ && $1 == "layer" { print $2 "," $5 }' n-$m.txt >want-$m.txt
	tail -n +2 g-$m.csv | awk -F, '{ printf "%d,%.6g\n", $1, $2 }' >got-$m.txt
	awk -F, '{ printf "%d,%.6g\n", $1, $2 }' want-$m.txt | cmp -s - got-$m.txt || echo "$m differs"
done >gd.txt
[ ! -s gd.txt ] && [ "$(wc -l <got-post.txt)" = 4 ]
ok $? "norms --grad: the figure's four points are the checked gradient norms"
for m in pre post; do
	for f in e p; do
		awk -F, '/^#/ || NF == 0 { next } { q = 0; for (i = 1; i <= NF; i++) q += $i * $i; s += sqrt(q); n++ } END { printf "%.5g\n", s / n }' $f-$m.csv
	done | tr '\n' ' '
	echo
	awk -F, 'NR == 2 || NR == 6 { printf "%.5g ", $2 } END { print "" }' r-$m.csv
done >rn.txt
[ "$(sed -n 1p rn.txt)" = "$(sed -n 2p rn.txt)" ] && [ "$(sed -n 3p rn.txt)" = "$(sed -n 4p rn.txt)" ]
ok $? "norms: the residual norm after the embedding and after layer 4 is the mean of ||x|| over the tokens ($(sed -n 1p rn.txt))"
gb "run the cat; norms --grad; next 3" >after.txt 2>&1 && grep -q "Gradient of the loss per layer" after.txt
ok $? "norms --grad on tiny-lm leaves the session's model as it was (next runs after it)"

# ---- generate's cached steps under the mask: each token the argmax of a full masked run ----
gb "load r-rope; set mask window 2; run the cat sat; generate 3 --temp 0; dump tokens gen.csv" >/dev/null 2>&1
IDS=$(tail -n +2 gen.csv | tr ',' ' ')
set -- $IDS
N=$#
good=0
for k in 1 2 3; do
	pre=$(echo "$IDS" | cut -d' ' -f1-$((N - 4 + k)))
	want=$(echo "$IDS" | cut -d' ' -f$((N - 3 + k)))
	rm -f lg.csv # dump keeps an existing file
	gb "load r-rope; set mask window 2; run --ids $pre; dump logits lg.csv" >/dev/null 2>&1
	got=$(awk -F, '/^#/ { next } NF { last = $0 } END { n = split(last, v, ","); b = 1; for (i = 2; i <= n; i++) if (v[i] + 0 > v[b] + 0) b = i; print b - 1 }' lg.csv)
	[ "$got" = "$want" ] && good=$((good + 1))
done
[ "$good" = 3 ] && [ "$N" = 14 ]
ok $? "generate under set mask window 2: each of its 3 cached steps picks the argmax of a full masked run"

# ---- compare-models past the trained context ----
gb "load r-rope; set context 64; run $LONG; compare-models r-rope r-alibi loss --curve; export cmpast.csv" >cmp.txt 2>&1
head -n 1 cmpast.csv | grep -q "r-rope: past position 48,r-rope: running mean,r-alibi: up to position 48,r-alibi: past position 48" &&
	[ "$(($(wc -l <cmpast.csv) - 1))" = 49 ] && ! grep -q "NaN/inf" cmp.txt
ok $? "compare-models after set context 64: both models run the 50 tokens, each curve past its trained 48 its own line"
gb "load r-rope; set context 64; run $LONG; compare-models r-rope r-learned loss" >cmpl.txt 2>&1
[ $? = 1 ] && have cmpl.txt "positions are learned: a table of 48 rows"
ok $? "compare-models past the context with a learned-positions model: its clear error"

exit $((fails > 0))
