#!/bin/sh
# t_lesson_pdf.sh — every lesson's slides.pdf and handout.pdf as a teacher's review asked
# (issue 14): each exported figure on a slide of its own (a comparison keeps all its charts),
# the figure filling the slide (its framed rectangle measured in the page's content stream by
# tests/pdf_frames.py), terminal output in the handout on one line wherever it fits at the
# smallest type and broken, never cut, where it does not, the paired next-token charts with
# distinct titles, the residual stream's clipped scale said on the figure, and the text that
# figure commands print (generate, beam, compare) in the handout. The second review (slides
# dropped every formula, table and printed output): each step's literal lines and what its
# commands printed are on its slides, no paragraph that ends in a colon is parted from what it
# introduces, slides of text set nothing under 11 pt, the handout's answers stand one a line,
# and a token's leading space reads as a dot (tests/slide_text.py reads all of it back). The
# third review: a title slide, each figure's command on its slide, the merge replay's every
# strip, no sentence cut across slides, nothing said after a question on its slide, commands
# broken only at spaces, long dumps of output set large on slides of their own. The fourth review:
# the layer norm's slide names all its rows with their statistics, the handout's merge replay
# has every strip, its legends are whole, its residual stream keeps its marks, its feature axis
# reads as numbers, its model view has room; line plots on slides keep their height; no export
# shows the exporter's own folders.
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
for tool in pdftotext pdfinfo python3; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "1..0 # SKIP $tool is not installed (poppler-utils, python3)"
		exit 0
	fi
done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
echo "1..$(($(ls lessons/[0-9][0-9]-*.lesson | wc -l) * 11 + 18))"
flat() { tr '\n' ' ' | tr -s ' '; }
for f in lessons/[0-9][0-9]-*.lesson; do
	les=$(basename "$f" .lesson)
	D=$T/$les
	./glassbox -c "lesson $f --export $D" >"$T/$les.out" 2>&1
	pngs=$(ls "$D" | grep -c '^[0-9][0-9]*-.*\.png$')
	python3 tests/pdf_frames.py "$D/slides.pdf" >"$T/$les.frames" 2>/dev/null
	framed=$(awk '{ s += $4 } END { print s + 0 }' "$T/$les.frames")
	pages=$(wc -l <"$T/$les.frames")
	# the k-th framed slide shows the k-th figure: its title's first words are on that page (a
	# figure shown again over its questions says so under it, and counts once)
	# (a `pair` stands on the slides for the maps right before it in its step, two at most,
	# nothing but their commands between: their titles go)
	python3 tests/slide_text.py --figures "$D/lesson.md" >"$T/$les.titles"
	pngs=$(wc -l <"$T/$les.titles")
	miss=0 k=0
	for p in $(awk '$4 == 1 { print $1 }' "$T/$les.frames"); do
		if pdftotext -f "$p" -l "$p" "$D/slides.pdf" - 2>/dev/null | flat | grep -qF "(the figure again, for its question)"; then
			framed=$((framed - 1))
			prev=$(sed -n "${k}p" "$T/$les.titles" | cut -d' ' -f1-3)
			pdftotext -f "$p" -l "$p" "$D/slides.pdf" - 2>/dev/null | flat | grep -qF -- "$prev" ||
				{ miss=$((miss + 1)); echo "# $les slide $p shows again a figure that is not the one before it"; }
			continue
		fi
		k=$((k + 1))
		want=$(sed -n "${k}p" "$T/$les.titles" | cut -d' ' -f1-3)
		pdftotext -f "$p" -l "$p" "$D/slides.pdf" - 2>/dev/null | flat >"$T/page"
		grep -qF -- "$want" "$T/page" || { miss=$((miss + 1)); echo "# $les slide $p lacks '$want'"; }
	done
	check "$les: each of its $pngs exported figures is on a slide of its own ($framed framed on $pages slides; $miss not where expected)" \
		test "$framed" = "$pngs" -a "$miss" = 0 -a "$pages" -ge 1
	# fill: the framed rectangle against the page. A figure keeps half the slide's height
	# whatever is said about it beside it (review 3: what to see in it and its questions stay
	# on its slide, the figure a little smaller), and a third of the page at least
	for p in $(awk '$4 == 1 { print $1 }' "$T/$les.frames"); do
		awk -v p="$p" '$1 == p { print $8 / $3, $7 * $8 / ($2 * $3) }' "$T/$les.frames"
	done >"$T/$les.fill"
	set -- $(awk '{ n++; if (!h || $1 < h) h = $1; if (!a || $2 < a) a = $2 } END { printf "%d %.3f %.3f\n", n, h, a }' "$T/$les.fill")
	check "$les: every figure fills its slide (on $1 slides, the least height $2 of the page's, the least area $3)" \
		awk "BEGIN { exit !($1 == 0 || ($2 >= 0.49 && $3 >= 0.33)) }"
	# the handout: each line of terminal output (25 characters or more) that fits the text width
	# at the smallest type (7 pt of DejaVu Sans Mono: 110 columns) on one line of the PDF; a
	# longer one broken but whole (its pieces in order, the marks of the break left out)
	pdftotext -layout "$D/handout.pdf" - 2>/dev/null | tr -s ' ' >"$T/$les.hand"
	wrapped=$(python3 - "$D/lesson.md" "$T/$les.hand" <<'PY'
import re, sys
md = open(sys.argv[1], encoding="utf-8").read().split("\n")
raw = open(sys.argv[2], encoding="utf-8").read()
pdf = [re.sub(r"\s+", " ", l).strip() for l in raw.split("\n")]
whole = re.sub(r"\s+", "", re.sub(r" \\$", "", raw.replace("\u21aa", ""), flags=re.M))
code, bad, cut, longest = False, 0, 0, 0
for l in md:
    if l.startswith("```"):
        code = not code
        continue
    t = re.sub(r"\s+", " ", l).strip()
    if code and len(t) >= 25:
        longest = max(longest, len(l))
        if len(l) <= 110 and not any(t in p for p in pdf):
            bad += 1
            print("# wrapped: " + l, file=sys.stderr)
        if re.sub(r"\s+", "", l) not in whole:
            cut += 1
            print("# not whole: " + l[:100], file=sys.stderr)
print(bad, cut, longest)
PY
)
	set -- $wrapped
	check "$les: terminal output in handout.pdf: lines that fit on one line, the longer ones whole (${1:-?} wrapped, ${2:-?} not whole; the longest is ${3:-?} columns)" \
		test "${1:-1}" = 0 -a "${2:-1}" = 0
	# the slides against lesson.md, read back (tests/slide_text.py)
	python3 tests/slide_text.py "$D" >"$T/$les.text" 2>"$T/$les.texterr"
	sed -n 's/^/# /p' "$T/$les.texterr" | head -20
	v() { awk -v k="$1" '$1 == k { print $2 }' "$T/$les.text"; }
	check "$les: each step's formulas and printed output are on its slides ($(v literal) literal lines and $(v output) printed lines missing; $(v steps_without_slide) steps without a slide)" \
		test "$(v literal)" = 0 -a "$(v output)" = 0 -a "$(v steps_without_slide)" = 0
	check "$les: no paragraph that ends in a colon is parted from what it introduces ($(v colon) on $(v pages) slides)" \
		test "$(v colon)" = 0
	check "$les: slides of text set nothing under 11 pt (18 px at 1600 x 900; smallest word box $(v smallest) pt, $(v small) slides under)" \
		test "$(v small)" = 0
	# the fifth review (G1, G2): the slides' own text (not inside figures) read from the back
	# of a hall: prose, items and questions 18 pt at least on every slide but the title, terminal
	# text and formulas 15 pt, the grey command under a figure (12 pt) the one exception
	small=$(python3 tests/pdf_text_sizes.py "$D/slides.pdf" 2>/dev/null |
		awk '$1 > 1 && (($2 != "mono" && $3 < 18) || ($2 == "mono" && $3 < 15 && $3 != 12.0)) { print $1 ":" $2 ":" $3 }' | tr '\n' ' ')
	least=$(python3 tests/pdf_text_sizes.py "$D/slides.pdf" 2>/dev/null | awk '$1 > 1 && $2 != "mono" { if (!m || $3 < m) m = $3 } END { print m + 0 }')
	check "$les: slides set prose at 18 pt and terminal text at 15 pt at least (the least prose ${least} pt; under: ${small:-none})" \
		test -z "$small" -a "${least%.*}" -ge 18
	# the sixth review: the text inside figures (ticks, labels, panel titles, the numbers in
	# cells), as the slide sets it (tests/pdf_fig_text.py: the figure's font sizes times the
	# scale it is placed at), 10 pt at least: 18 px at the least scale a figure slide gives a
	# figure with text or a question under it (0.55 of its layout); the figures a question
	# reads are held larger below
	python3 tests/pdf_fig_text.py "$D/slides.pdf" >"$T/$les.figtext" 2>/dev/null
	figmin=$(awk 'NR == 1 || $2 < m { m = $2 } END { print m + 0 }' "$T/$les.figtext")
	figlow=$(awk '$2 < 10 { printf "%s:%s ", $1, $2 }' "$T/$les.figtext")
	check "$les: figures set their text at 10 pt at least on the slides (the least ${figmin} pt; under: ${figlow:-none})" \
		test -z "$figlow"
	check "$les: the handout's answers one a line ($(v answers) not), tokens' spaces as dots in the prose ($(v space) bare)" \
		test "$(v answers)" = 0 -a "$(v space)" = 0
	# the third review: a title slide; each figure with the command that drew it and all of
	# itself (the merge replay's 9 strips); commands broken at spaces only; a long dump of output
	# on a slide of its own, never under 12 pt
	check "$les: a title slide ($(v title) missing), the command on each figure's slide ($(v command) without), every strip of a merge replay ($(v strips) short), no command broken inside a word ($(v cmdbreak)), long dumps at $(v dump_min) pt at least" \
		awk "BEGIN { exit !($(v title) + $(v command) + $(v strips) + $(v cmdbreak) == 0 && $(v dump_min) >= 12) }"
	# text stays with what it is about: no sentence cut across slides, nothing that follows a
	# question in the lesson shown on its slide (an answer given away)
	check "$les: every sentence whole on one slide ($(v sentence) cut), nothing said after a question on its slide ($(v after_question))" \
		test "$(v sentence)" = 0 -a "$(v after_question)" = 0
done
# lesson 2's merge replay on its slide: a strip for each merge `tokenize --steps the teachers`
# printed ("merge 9   rank 1135   ·teacher + s -> ·teachers"), as "9. ·teacher + s (rank 1135)"
# (the ninth was missing from the slide, the review's blocker)
sed -n '/^glassbox> tokenize --steps the teachers/,/^```/p' "$T/02-tokens/lesson.md" |
	sed -n 's/^ *merge \([0-9]*\) *rank \([0-9]*\) *\([^ ]*\) + \([^ ]*\) ->.*/\1. \3 + \4 (rank \2)/p' | sort -u >"$T/strips.want"
pdftotext "$T/02-tokens/slides.pdf" - 2>/dev/null | grep -o '^[0-9]*\. [^ ]* + [^ ]* (rank [0-9]*)' | sort -u >"$T/strips.s"
check "lesson 2: the slides show a strip for each of the $(wc -l <"$T/strips.want") merges (the last '$(sort -n "$T/strips.want" | tail -1)'; $(comm -23 "$T/strips.want" "$T/strips.s" | wc -l) missing)" \
	sh -c "test \$(wc -l <$T/strips.want) -ge 9 && comm -23 $T/strips.want $T/strips.s | wc -l | grep -qx 0"
# the layer norm's slide (lesson 8) and the RMS norm's (lesson 19): every one of the 14 rows named
# (the slides named every second one) and, beside each, its input's mean and variance (28
# numbers) or its rms (14)
for spec in "08-layernorm:Layer norm before attention:28" "19-norm-placement:RMS norm before attention:14"; do
	les=${spec%%:*} rest=${spec#*:}
	title=${rest%%:*} nstat=${rest#*:}
	pages=$(pdfinfo "$T/$les/slides.pdf" 2>/dev/null | awk '/^Pages/ { print $2 }')
	rows=0 stats=0 found=none
	for p in $(seq 1 "${pages:-0}"); do
		pdftotext -f "$p" -l "$p" "$T/$les/slides.pdf" "$T/pg" 2>/dev/null
		grep -q "$title" "$T/pg" || continue
		found=$p
		rows=$(grep -cE '^[0-9]+ (When|·[^ ]+|",")$' "$T/pg")
		stats=$(grep -cE '^-?0\.[0-9]{4}$' "$T/pg")
		break
	done
	check "$les: the slide of '$title' ($found) names all 14 rows ($rows) with each one's statistics ($stats of $nstat)" \
		test "$rows" = 14 -a "$stats" = "$nstat"
done
# the figures whose numbers and labels review 6 had a question read at 10-11.6 pt: 12 pt now (its
# ticks at 18 px over 1400 px of the slide's width); the layer norm, the logit lens and an
# attention map of 21 tokens named on both axes, with a paragraph or a question, 11 (alone: 12.7
# and 11.7; the layer norm was 11.5 shown again over its question, and is 11.2 on one slide with
# its lead-in and question since review 12, which found it shown twice)
small=
for spec in "08-layernorm:Layer norm before attention, layer 1:11" "09-ffn-residual:The residual stream: its length:12" \
	"09-ffn-residual:Logit lens: the top next token:11" "11-decoding:Beam search: the beams kept:12" \
	"13-circuits:Layer 4, head 3: attention weights:11" "15-kernels:Digits the avx512 engine:12" \
	"18-your-model:The architecture of tiny-lm:12" "18-your-model:Logit lens: the top next token:11" \
	"21-experts:Layer 1: the router's probability:12" "21-experts:Layer 4: the router's probability:12"; do
	les=${spec%%:*} rest=${spec#*:}
	title=${rest%:*} want=${rest##*:}
	pages=$(pdfinfo "$T/$les/slides.pdf" 2>/dev/null | awk '/^Pages/ { print $2 }')
	got=
	for p in $(seq 1 "${pages:-0}"); do
		pdftotext -f "$p" -l "$p" "$T/$les/slides.pdf" - 2>/dev/null | flat | grep -qF -- "$title" || continue
		got="$got $(awk -v p="$p" '$1 == p { print $2 }' "$T/$les.figtext")"
	done
	got=$(echo $got | tr ' ' '\n' | sort -n | head -1)
	awk "BEGIN { exit !(\"${got:-none}\" != \"none\" && ${got:-0} >= $want) }" || small="$small $les:'$title':${got:-none}<$want"
done
check "the figures a question reads are set large on their slides (under: ${small:-none})" test -z "$small"
# the handout's merge replay has every strip too (it showed 7 of 9)
pdftotext "$T/02-tokens/handout.pdf" - 2>/dev/null | grep -o '^[0-9]*\. [^ ]* + [^ ]* (rank [0-9]*)' | sort -u >"$T/strips.h"
check "lesson 2: the handout shows a strip for each of the $(wc -l <"$T/strips.want") merges ($(comm -23 "$T/strips.want" "$T/strips.h" | wc -l) missing)" \
	sh -c "test \$(wc -l <$T/strips.want) -ge 9 && comm -23 $T/strips.want $T/strips.h | wc -l | grep -qx 0"
# legends whole in the handout: the names that tell the trained range from the test
pdftotext "$T/17-past-the-context/handout.pdf" - 2>/dev/null | flat >"$T/h17"
pdftotext "$T/19-norm-placement/handout.pdf" - 2>/dev/null | flat >"$T/h19"
check "lessons 17 and 19: the handout's legends are whole ('tiny-lm-rope: up to position 128', 'tiny-lm-postnorm: post-norm'; no 'positi…')" \
	sh -c "grep -q 'tiny-lm-rope: up to position 128' $T/h17 && grep -q 'tiny-lm-alibi: past position 128' $T/h17 &&
		grep -q 'tiny-lm-postnorm: post-norm' $T/h19 && ! grep -q 'positi…\|post-n…' $T/h17 $T/h19"
# the residual stream's clipped values keep their mark in the handout's cells (they read "97....")
pdftotext "$T/09-ffn-residual/handout.pdf" - 2>/dev/null | flat >"$T/h9"
check "lesson 9: the handout's residual stream prints 97.8▲, its clipped values whole" \
	sh -c "grep -q '97.8▲' $T/h9 && ! grep -q '97\.\.\.\|97\.…' $T/h9"
# the positional encoding's feature axis in the handout: numbers, never an index beside a quoted
# feature ('2 "1"')
pdftotext "$T/04-positions/handout.pdf" - 2>/dev/null | flat >"$T/h4"
check "lesson 4: the handout's feature axis reads as numbers ($(grep -oE '[0-9]+ \"[0-9]+\"' "$T/h4" | wc -l) quoted ones)" \
	sh -c "! grep -qE '[0-9]+ \"[0-9]+\"' $T/h4"
# the model view in the handout: taller than a 16:9 figure, so its 16 maps are not 7 mm wide
python3 tests/pdf_frames.py "$T/07-heads/handout.pdf" >"$T/h7.frames" 2>/dev/null
mv_page=$(for p in $(awk '$4 >= 1 { print $1 }' "$T/h7.frames"); do
	pdftotext -f "$p" -l "$p" "$T/07-heads/handout.pdf" - 2>/dev/null | grep -q 'Every head: attention weights' && echo "$p" && break; done)
mv_h=$(awk -v p="$mv_page" '$1 == p { for (i = 0; i < $4; i++) print $(8 + 4 * i) }' "$T/h7.frames" | sort -n | tail -1)
check "lesson 7: the handout's model view is laid out tall (page ${mv_page:-none}, ${mv_h:-0} pt high; 16:9 is 272)" \
	awk "BEGIN { exit !(${mv_h:-0} >= 400) }"
# line plots on slides keep their height: the span of the y axis's tick labels (review 4 found
# the loss curve and the norms at under a fifth of the slide, squashed by the text under them;
# since review 6 a plot whose question would otherwise be projected a slide later keeps its
# question under it at a little less: tick spans of 0.22 of the page at the least)
low=$(for spec in "17-past-the-context:Loss of each token along the text" "19-norm-placement:norm, layer by layer" \
	"19-norm-placement:Gradient of the loss"; do
	python3 - "$T/${spec%%:*}/slides.pdf" "${spec#*:}" <<'PY'
import re, subprocess, sys
from collections import defaultdict
out = subprocess.run(["pdftotext", "-bbox", sys.argv[1], "-"], capture_output=True, text=True).stdout
for n, page in enumerate(out.split("<page ")[1:], 1):
    H = float(re.search(r'height="([\d.]+)"', page).group(1))
    words = re.findall(r'xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>', page)
    if sys.argv[2] not in " ".join(w[4] for w in words):
        continue
    ticks = defaultdict(list)  # right-aligned numbers: the y axis's tick labels
    for x0, y0, x1, y1, w in words:
        if re.fullmatch(r"-?\d+(\.\d+)?", w):
            ticks[round(float(x1) * 2)].append((float(y0) + float(y1)) / 2)
    col = max(ticks.values(), key=len) if ticks else []
    print("%d:%.3f" % (n, (max(col) - min(col)) / H if len(col) >= 3 else 0))
PY
done)
check "lessons 17 and 19: line plots keep their height on the slides (tick spans, of the page: $(echo $low))" \
	sh -c "test -n '$low' && echo '$low' | tr ' ' '\n' | awk -F: '\$2 < 0.22 { bad = 1 } END { exit bad }'"
# no export shows the exporter's own folders (review 4: "/work/review4/repo/assets/models/tiny-lm")
home=${HOME:-/nonexistent}
[ "${#home}" -gt 1 ] || home=/nonexistent
abs=$(cat "$T"/*/lesson.md | grep -cF -e "$PWD/" -e "$home/")
check "no lesson.md shows the current folder or the home folder ($abs lines do)" test "$abs" = 0
# the paired next-token charts: titles that differ, and say how
t4=$T/04-positions.titles t8=$T/08-layernorm.titles
check "lesson 4: the two next-token charts have distinct titles, each with its text's start" \
	sh -c "grep -c 'next tokens' $t4 | grep -qx 2 && grep -q '^After “Here Mary has a cat' $t4 && grep -q '^After “Here John has a cat' $t4"
check "lesson 8: the library form's next-token chart, then the pair of both forms (on the slides, for the textbook form's chart)" \
	sh -c "grep -c 'next tokens' $t8 | grep -qx 1 && grep -q 'the first choices with each form of the norm' $t8"
# lesson 9: the residual stream's scale is clipped, and the figure says so
pdftotext "$T/09-ffn-residual/slides.pdf" - 2>/dev/null | flat >"$T/l9"
check "lesson 9: the residual stream's slide says its colour scale is clipped, the values above marked" \
	sh -c "grep -q 'colour scale clipped at [0-9.]*: [0-9]* values\{0,1\} above it (up to 97.8)' $T/l9 && grep -q '97.8▲' $T/l9"
# what figure commands print goes in the handout with them
pdftotext "$T/10-sampling/handout.pdf" - 2>/dev/null | flat >"$T/h10"
pdftotext "$T/11-decoding/handout.pdf" - 2>/dev/null | flat >"$T/h11"
pdftotext "$T/15-kernels/handout.pdf" - 2>/dev/null | flat >"$T/h15"
check "lesson 10's handout: generate's lines under the command (token, id, p, what it looks at)" \
	sh -c "grep -q 'glassbox> generate [0-9]* --temp 1 --seed 10 1 ·[A-Za-z]* id [0-9]* p = 0\.[0-9]* looks at' $T/h10"
check "lesson 11's handout: beam's steps and scores under the command" \
	sh -c "grep -q 'glassbox> beam 3 6 step 1 1 score -[0-9.]* ·' $T/h11"
check "lesson 15's handout: compare's table under the command" \
	sh -c "grep -q 'glassbox> compare largest relative difference [0-9.e-]* (' $T/h15 && grep -q 'embed.tok 0 0' $T/h15"
# a step on several slides is numbered 1/n ... n/n, n counted with the headings as they read
for f in lessons/[0-9][0-9]-*.lesson; do
	les=$(basename "$f" .lesson)
	pdftotext "$T/$les/slides.pdf" - 2>/dev/null | grep -o '([0-9]*/[0-9]*)$' | tr -d '()' |
		awk -F/ -v l="$les" 'BEGIN { k = 0; n = 0 }
			{ if ($1 == 1) { if (k != n) print l ": ended at " k "/" n; k = 0; n = $2 }
			  if ($1 != k + 1 || $2 != n) print l ": " $1 "/" $2 " after " k "/" n; k = $1 }
			END { if (k != n) print l ": ended at " k "/" n }'
done >"$T/marks"
check "every split step's slides run 1/n to n/n ($(wc -l <"$T/marks") off)" test ! -s "$T/marks"
exit $((fails > 0))
