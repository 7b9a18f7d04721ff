#!/bin/sh
# t_arch.sh — `arch`, the architecture at a glance (issue 18, part 5): the blocks of the
# shipped tiny-lm and tiny-mt and of a Llama-style model, each label and detail derived from
# the model's config.json; the highlight following the stage on show (at the prompt and in
# the PNG's pixels); the terminal's box-drawing shapes at 160x48 and 80x24; the explorer's
# 'a' (tmux, a private server); the window (Xvfb). Its files go to a folder of its own
# (mktemp -d), removed at the end; its waits wait for what they check, not for a time.
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
T=$(mktemp -d)
mkdir -p "$T/state"
. tests/tap.sh
gb() { "$ROOT/glassbox" -c "$1"; }
# cfg DIR KEY: a number or word of DIR/config.json (the first "KEY": value)
cfg() { grep -o "\"$2\": *[^,}]*" "$1/config.json" | head -n 1 | sed 's/.*: *//; s/"//g'; }
# csv FILE: the diagram's CSV rows (after the header) as group|block|detail|highlight
csv() {
	tail -n +2 "$1" | awk '
	function split_csv(line, f,   n, i, c, q, cur) {
		n = 0; cur = ""; q = 0
		for (i = 1; i <= length(line); i++) {
			c = substr(line, i, 1)
			if (q) { if (c == "\"") { if (substr(line, i + 1, 1) == "\"") { cur = cur c; i++ } else q = 0 } else cur = cur c }
			else if (c == "\"") q = 1
			else if (c == ",") { f[++n] = cur; cur = "" }
			else cur = cur c
		}
		f[++n] = cur
		return n
	}
	{ split_csv($0, f); print f[1] "|" f[2] "|" f[3] "|" f[4] }'
}
# rows CSV BLOCK: that block's rows as group|detail|highlight
rows() { csv "$1" | awk -F'|' -v b="$2" '$2 == b { print $1 "|" $3 "|" $4 }'; }
# order CSV: the blocks' labels in order, joined by " / "
order() { csv "$1" | awk -F'|' '{ printf "%s%s", (NR > 1 ? " / " : ""), $2 }'; }
# hl CSV: the highlighted block(s); hln CSV: its row number
hl() { csv "$1" | awk -F'|' '$4 == 1 { print $2 }'; }
hln() { csv "$1" | awk -F'|' '$4 == 1 { print NR }'; }
LM=$ROOT/assets/models/tiny-lm
MT=$ROOT/assets/models/tiny-mt
S=
XPID=
command -v tmux >/dev/null 2>&1 && tmux_private "$T"
trap 'tmux_cleanup; [ -n "$XPID" ] && kill "$XPID" 2>/dev/null && wait "$XPID" 2>/dev/null; cd /; rm -rf "$T"' EXIT

echo "1..25"
cd "$T" || exit 1

# ---- tiny-lm: the blocks from its config ----
D=$(cfg "$LM" n_embd) V=$(cfg "$LM" vocab_size) L=$(cfg "$LM" n_layer) H=$(cfg "$LM" n_head) E=$(cfg "$LM" head_dim)
F=$(cfg "$LM" n_inner) C=$(cfg "$LM" n_positions)
gb "arch; export lm.csv" >lm.txt 2>&1
[ "$(order lm.csv)" = "token embedding / + learned positions / LayerNorm / masked self-attention / + residual / LayerNorm / feed-forward / + residual / final LayerNorm / output" ]
ok $? "tiny-lm (pre-norm, learned positions, final norm): the blocks in the model's order"
[ "$(rows lm.csv 'token embedding')" = "|vocab $V × d_model $D|0" ] &&
	[ "$(rows lm.csv '+ learned positions')" = "|n_ctx $C × d_model $D, added|0" ]
ok $? "tiny-lm: embedding vocab $V × d_model $D, learned positions $C × $D (config.json)"
[ "$(rows lm.csv 'masked self-attention')" = "layer × $L|$H heads × d_head $E = d_model $D, causal|0" ] && [ -z "$(hl lm.csv)" ]
ok $? "tiny-lm: attention $H heads × d_head $E in a group 'layer × $L'; nothing highlighted, no view drawn yet"
[ "$(rows lm.csv 'feed-forward')" = "layer × $L|d_model $D → d_ffn $F → $D, GELU (tanh)|0" ] &&
	[ "$(rows lm.csv 'output')" = "|d_model $D → vocab $V (tied to E), softmax|0" ]
ok $? "tiny-lm: the FFN $D → $F → $D with its activation; the output tied to the embedding"

# ---- tiny-mt: two stacks, post-norm, cross-attention ----
D=$(cfg "$MT" d_model) V=$(cfg "$MT" vocab_size) Le=$(cfg "$MT" encoder_layers) Ld=$(cfg "$MT" decoder_layers)
H=$(cfg "$MT" attention_heads) F=$(cfg "$MT" ffn_dim)
gb "load tiny-mt; arch; export mt.csv" >mt.txt 2>&1
[ "$(order mt.csv)" = "token embedding / + sinusoidal positions / self-attention / add & LayerNorm / feed-forward / add & LayerNorm / token embedding / + sinusoidal positions / masked self-attention / add & LayerNorm / cross-attention / add & LayerNorm / feed-forward / add & LayerNorm / output" ]
ok $? "tiny-mt (post-norm, sinusoidal, no final norm): encoder then decoder, norms after the residual adds"
[ "$(rows mt.csv 'cross-attention')" = "decoder layer × $Ld|$H heads × d_head 32; k, v from the encoder|0" ] &&
	rows mt.csv 'self-attention' | grep -q "^encoder layer × $Le|$H heads × d_head 32 = d_model $D, all tokens|"
ok $? "tiny-mt: 'encoder layer × $Le' attends to all tokens; 'decoder layer × $Ld' has the cross-attention"
rows mt.csv 'token embedding' | head -n 1 | grep -q "|vocab $V × d_model $D, × √d_model|" &&
	rows mt.csv 'feed-forward' | grep -q "d_model $D → d_ffn $F → $D, ReLU"
ok $? "tiny-mt: embeddings scaled by √d_model, a ReLU FFN of $F (config.json)"
grep -q "^The architecture of tiny-mt: an encoder-decoder, $Le + $Ld layers" mt.txt && grep -q "┼▶│ cross-attention\|┼▶║ cross-attention" mt.txt
ok $? "tiny-mt at the prompt: both stacks side by side, the encoder's output led into the cross-attention"

# ---- a Llama-style model: RMSNorm, RoPE, SwiGLU, grouped key/value heads, untied ----
gb "init $T/llama --preset llama; load $T/llama; arch; export llama.csv" >/dev/null 2>&1
Dl=$(cfg "$T/llama" hidden_size) Hl=$(cfg "$T/llama" num_attention_heads) K=$(cfg "$T/llama" num_key_value_heads)
Fl=$(cfg "$T/llama" intermediate_size) El=$(cfg "$T/llama" head_dim)
[ "$(rows llama.csv 'RoPE positions')" = "|none added: q, k rotate by position (θ 10000)|0" ] &&
	rows llama.csv 'masked self-attention' | grep -q "|$Hl heads × d_head $El = d_model $Dl, $K kv heads, causal|" &&
	rows llama.csv 'feed-forward' | grep -q "|d_model $Dl → 2 × d_ffn $Fl → $Dl, SwiGLU|" &&
	rows llama.csv 'output' | grep -q "(own weights)" && [ "$(rows llama.csv 'RMSNorm' | wc -l)" = 2 ] &&
	rows llama.csv 'final RMSNorm' | grep -q "root mean square; gain"
ok $? "llama: RoPE, $K key/value heads for $Hl, SwiGLU, RMSNorm (no bias), an output of its own"

# ---- the highlight follows the stage on show ----
TEXT="When Mary and John went to the park"
gb "run $TEXT; ffn 3; arch; export ffn.csv; export ffn.png; next; arch; export next.csv; embed; arch; export embed.csv; ln 2; arch; export ln.csv; resid; arch; export resid.csv" >/dev/null 2>&1
[ "$(hl ffn.csv)" = "feed-forward" ] && rows ffn.csv feed-forward | grep -q "^layer × 4, layer 3 on show|"
ok $? "ffn 3: the feed-forward is highlighted, its group says layer 3"
[ "$(hl next.csv)" = output ] && [ "$(hl embed.csv)" = "token embedding" ]; ok $? "next highlights the output, embed the embedding"
[ "$(hl ln.csv)" = LayerNorm ] && [ "$(hln ln.csv)" = 3 ]
ok $? "ln 2 highlights the layer's first norm (the one 'ln L' shows)"
[ "$(hl resid.csv | tr '\n' /)" = "+ residual/+ residual/" ]; ok $? "resid highlights both residual adds"
gb "load tiny-mt; translate 3 March 2021; cross 2 1; arch; export mtx.csv; embed; arch; export mte.csv" >/dev/null 2>&1
[ "$(hl mtx.csv)" = cross-attention ] && [ "$(hln mte.csv)" = 1 ]
ok $? "tiny-mt: cross highlights the decoder's cross-attention; embed the encoder's embedding (what 'embed' shows)"
# a view drawn on the text before a run (or before a load) is no longer on show: a lesson's
# `load` then `arch` showed "the attention weights of layer 1, head 1 (the view on show)"
gb "run $TEXT; attn 2 1; run Another text; arch; export rerun.csv; attn 3 2; load tiny-lm; arch; export reload.csv" >/dev/null 2>&1
[ -z "$(hl rerun.csv)" ] && [ -z "$(hl reload.csv)" ] && [ "$(order rerun.csv)" = "$(order lm.csv)" ]
ok $? "after a run or a load, nothing is highlighted until a view is drawn again"

# ---- the PNG: the diagram fills the frame; the highlight is where the stage is ----
gb "run $TEXT; attn 1 1; arch; export attn.png" >/dev/null 2>&1
# box X Y W H of the saturated pixels (the highlight: everything else is gray)
sat_box() { convert "$1" -colorspace HSB -channel G -separate +channel -threshold 30% -format '%@' info: 2>/dev/null; }
fill() { convert "$1" -crop "$2" -colorspace Gray -format '%[fx:mean]' info: 2>/dev/null; }
a=$(sat_box attn.png) f=$(sat_box ffn.png)
ya=$(echo "$a" | sed 's/.*+//') yf=$(echo "$f" | sed 's/.*+//') wa=$(echo "$a" | sed 's/x.*//')
[ "$(head -c 8 attn.png | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] && [ -n "$ya" ] && [ -n "$yf" ] && [ "$yf" -gt "$ya" ] && [ "$wa" -gt 600 ]
ok $? "PNG: the highlight is a block $wa px wide, lower for ffn (y $yf) than for attn (y $ya)"
m=$(fill attn.png 1000x700+300+80)
awk -v m="$m" 'BEGIN { exit !(m > 0.5 && m < 0.97) }'; ok $? "PNG: the plot area is drawn in (mean gray $m over 1000x700)"
tr '\000' '=' <attn.png | grep -aq 'Highlight=attn' && tr '\000' '=' <attn.png | grep -aq 'Title=The architecture of tiny-lm'
ok $? "PNG: its text chunks say the title and the highlighted stage"

# ---- the terminal: box-drawing shapes at 160x48, a line a block at 80x24 ----
# (attn 1 1 drawn first, for a block to highlight; the diagram is what follows its title)
COLUMNS=160 LINES=46 gb "run $TEXT; attn 1 1; arch" 2>&1 | sed -n '/^The architecture of/,$p' >t160.txt
[ "$(grep -c '┌' t160.txt)" = 9 ] && [ "$(grep -c '╔' t160.txt)" = 1 ] && grep -q '╭─ layer × 4' t160.txt && [ "$(grep -c '↓' t160.txt)" = 9 ] && [ "$(wc -l <t160.txt)" -le 46 ]
ok $? "terminal 160x48: a box per block, the highlight in double lines, the layer framed, arrows between ($(wc -l <t160.txt) lines)"
COLUMNS=80 LINES=22 gb "run $TEXT; attn 1 1; arch" 2>&1 | sed -n '/^The architecture of/,$p' >t80.txt
n80=$(wc -l <t80.txt) w80=$(awk '{ if (length($0) > m) m = length($0) } END { print m }' t80.txt)
grep -q '▶masked self-attention .*◀' t80.txt && grep -q 'feed-forward .*d_ffn' t80.txt && [ "$n80" -le 22 ]
ok $? "terminal 80x24: every block on its own line ($n80 lines), the highlight marked ▶ ◀"

# ---- the explorer: 'a' ----
if [ -z "$TMUX_SOCK" ]; then
	for k in 1 2 3; do n=$((n + 1)); echo "ok $n # SKIP tmux not installed"; done
else
	S=glassbox-arch-$$
	screen() { tmux capture-pane -p -t "$S"; }
	# (30 s, times GB_SLOW, for a loaded machine: the wait ends as soon as the text is there)
	waitfor() { i=0; while [ $i -lt "$(slow 300)" ]; do screen | grep -qF -- "$1" && return 0; sleep 0.1; i=$((i + 1)); done; return 1; }
	tmux new-session -d -s "$S" -x 80 -y 24 \
		"cd $T && env XDG_STATE_HOME=$T/state TERM=xterm-256color $ROOT/glassbox; echo EXIT=\$?; sleep 30"
	waitfor "glassbox>"
	tmux send-keys -t "$S" "run $TEXT" Enter "tui" Enter
	waitfor "Layer 1, head 1: attention weights"
	tmux send-keys -t "$S" "]" Tab Tab Tab
	waitfor "[ffn]"
	tmux send-keys -t "$S" a
	waitfor "The architecture of tiny-lm"; ok $? "explorer: 'a' shows the architecture"
	screen | grep -q "▶feed-forward .*◀" && screen | grep -q "layer × 4, layer 2 on show"
	ok $? "explorer: the stage it left (ffn, layer 2) is the block marked"
	tmux send-keys -t "$S" Tab
	waitfor "Feed-forward hidden units after the activation, layer 2"; ok $? "explorer: Tab goes back to the stage"
	tmux send-keys -t "$S" q
	waitfor "glassbox>"
	tmux send-keys -t "$S" quit Enter
	waitfor "EXIT=0" >/dev/null
	tmux kill-session -t "$S" 2>/dev/null
fi

# ---- the window ----
D=
winid() { DISPLAY=$D xwininfo -root -tree 2>/dev/null | awk '/"glassbox"/ { print $1; exit }'; }
if [ -n "$TMUX_SOCK" ] && command -v Xvfb >/dev/null 2>&1 && command -v xdotool >/dev/null 2>&1 &&
	command -v xwd >/dev/null 2>&1 && command -v convert >/dev/null 2>&1 && command -v xwininfo >/dev/null 2>&1 &&
	"$ROOT/glassbox" -c "help window" >/dev/null 2>&1; then
	if xvfb_start 1400x900x24; then
		[ $i -lt "$(slow 50)" ] || D=
	fi
fi
if [ -z "$D" ]; then
	for k in 1 2; do n=$((n + 1)); echo "ok $n # SKIP no tmux, Xvfb, xdotool, xwd or convert for the window"; done
else
	S=glassbox-arch-w-$$
	tmux new-session -d -s "$S" -x 120 -y 40 \
		"cd $T && env XDG_STATE_HOME=$T/state TERM=xterm-256color DISPLAY=$D $ROOT/glassbox; echo EXIT=\$?; sleep 30"
	waitfor "glassbox>"
	tmux send-keys -t "$S" "run $TEXT" Enter "window" Enter
	waitfor "window open"
	i=0; while [ $i -lt "$(slow 300)" ] && [ -z "$(winid)" ]; do sleep 0.1; i=$((i + 1)); done
	W=$(winid)
	tmux send-keys -t "$S" "ffn 1" Enter "arch" Enter
	waitfor "The architecture of tiny-lm"
	# the window redraws on its own time: its picture is taken until the diagram is there (a
	# wide saturated block low in the frame: the feed-forward highlighted) or the wait is over
	b= bw= by= i=0
	while [ -n "$W" ] && [ $i -lt "$(slow 60)" ]; do
		DISPLAY=$D xwd -id "$W" -silent >w.xwd 2>/dev/null && convert w.xwd window-arch.png 2>/dev/null
		b=$(sat_box window-arch.png)
		bw=$(echo "$b" | sed 's/x.*//') by=$(echo "$b" | sed 's/.*+//')
		[ -n "$bw" ] && [ "$bw" -gt 400 ] && [ "$by" -gt 300 ] && break
		sleep 0.25; i=$((i + 1))
	done
	[ -n "$W" ] && [ -n "$bw" ] && [ "$bw" -gt 400 ] && [ "$by" -gt 300 ]
	ok $? "window: the diagram is shown, the feed-forward highlighted ($b)"
	# Tab once the window has the focus; then the figure on show is exported until it is no
	# longer the diagram (each try its own file: export keeps an existing one)
	DISPLAY=$D xdotool windowfocus "$W" 2>/dev/null
	i=0; while [ $i -lt "$(slow 50)" ] && [ "$(DISPLAY=$D xdotool getwindowfocus 2>/dev/null)" != "$(printf '%d' "$W" 2>/dev/null)" ]; do
		sleep 0.1; i=$((i + 1)); done
	DISPLAY=$D xdotool key Tab
	title= i=0
	while [ $i -lt "$(slow 40)" ]; do
		tmux send-keys -t "$S" "export w$i.png" Enter
		j=0; while [ $j -lt "$(slow 100)" ] && ! [ -s "w$i.png" ]; do sleep 0.1; j=$((j + 1)); done
		title=$(png_text "w$i.png" Title)
		case $title in "The architecture"*|"") sleep 0.25; i=$((i + 1)) ;; *) break ;; esac
	done
	case $title in "The residual stream"*) true ;; *) false ;; esac
	ok $? "window: Tab in it goes on from the stage the diagram marked (ffn) to the next (resid): ${title:-no export}"
	tmux send-keys -t "$S" quit Enter
	waitfor "EXIT=0" >/dev/null
	tmux kill-session -t "$S" 2>/dev/null
fi
exit $((fails > 0))
