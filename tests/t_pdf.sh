#!/bin/sh
# t_pdf.sh — export FILE.pdf: one 16:9 page of vectors with the fonts embedded, the layout of the
# PNG (issue 14, part 4: PDF without pandoc). Each kind of figure is exported as PDF and PNG;
# pdftoppm renders the page back at 72 dpi (1600 x 900 pixels, one per point) and the pixel tool
# of t_window.t compares it with the PNG: not blank, about as much ink, few pixels apart
# (anti-aliasing differs between the two rasterizers, the layout must not).
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
for tool in pdftoppm pdfinfo pdffonts python3; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "1..0 # SKIP $tool is not installed (poppler-utils, python3)"
		exit 0
	fi
done
PIX=build/tests/t_window.t
if [ ! -x "$PIX" ]; then
	echo "1..0 # SKIP build the tests first (make check)"
	exit 0
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
RUN="run When Mary and John went to the park, John gave a ball to"
STEPS=build/tests/t_steps.t
if [ ! -x "$STEPS" ]; then
	echo "1..0 # SKIP build the tests first (make check)"
	exit 0
fi
set -- "attn 3 2" heatmap "next 5" bars "pe 0 1 20 21" lines "heads 2" grid "arch" diagram "attn 3 2 --lines" attnlines \
	"tokenize --merges the teachers" strips "generate 4 --temp 0.8 --top-k 3 --seed 2" decode "beam 3 4" tree
echo "1..$(( $# / 2 * 3 + 2 + 2 * 6 ))"
while [ $# -ge 2 ]; do
	cmd=$1 kind=$2
	shift 2
	if [ $kind = lines ]; then pre="load tiny-mt; translate 3 March 2021"; else pre=$RUN; fi
	./glassbox -c "$pre; $cmd; export $T/$kind.pdf; export $T/$kind.png" >/dev/null 2>"$T/err"
	size=$(pdfinfo "$T/$kind.pdf" 2>/dev/null | awk '/^Page size/ { print $3 "x" $5 }')
	pages=$(pdfinfo "$T/$kind.pdf" 2>/dev/null | awk '/^Pages/ { print $2 }')
	check "$kind ($cmd): a PDF of one 1600 x 900 pt page (got $pages page(s) of $size)" test "$size" = "1600x900" -a "$pages" = 1
	check "$kind: its fonts are embedded" sh -c "pdffonts $T/$kind.pdf | awk 'NR > 2 { n++; if (\$(NF - 4) != \"yes\") bad = 1 } END { exit !(n > 0 && !bad) }'"
	pdftoppm -png -r 72 -singlefile "$T/$kind.pdf" "$T/$kind-back" 2>/dev/null
	ia=$($PIX --ink "$T/$kind-back.png" 0 0 1600 900 2>/dev/null || echo 0)
	ib=$($PIX --ink "$T/$kind.png" 0 0 1600 900 2>/dev/null || echo 0)
	d=$($PIX --diff "$T/$kind-back.png" "$T/$kind.png" 0 0 1600 900 64 2>/dev/null || echo 1440000)
	# (4%: glyphs of cairo's fonts and of the raster font land a pixel or two apart; the decoding
	# figure's 30 px text alone differs in 3.4% of the pixels while its bars match exactly)
	check "$kind: rendered back, it has the PNG's ink ($ia vs $ib) and few pixels differ by more than 64 levels ($d of 1440000)" \
		awk "BEGIN { exit !($ia > 20000 && $ia > 0.85 * $ib && $ia < 1.15 * $ib && $d < 0.04 * 1440000) }"
done
./glassbox -c "$RUN; attn 1 1; export $T/t.pdf" >/dev/null 2>&1
check "the PDF's title is the figure's" sh -c "pdfinfo $T/t.pdf | grep -q '^Title: *Layer 1, head 1: attention weights'"
./glassbox -c "$RUN; attn 1 1; export $T/t.pdf" >/dev/null 2>"$T/err"
check "an existing PDF is kept unless --force, in one line" sh -c "test \$(wc -l <$T/err) -eq 1 && grep -q 'already exists' $T/err"

# ---- lesson N --export DIR: slides.pdf and handout.pdf (issue 14, part 4) ----
# fit.sh-like: the figure's words in the single-figure PDF (the PNG's layout, checked above) and
# on the slide page; a least-squares fit of slide = offset + scale * figure, per axis. Prints
# "kx ky ox oy words maxerr".
words() { # words PDF PAGE TAG: "TAG xMin yMin xMax yMax word" per word of a page
	pdftotext -bbox -f "$2" -l "$2" "$1" - 2>/dev/null |
		sed -n "s/.*xMin=\"\([^\"]*\)\" yMin=\"\([^\"]*\)\" xMax=\"\([^\"]*\)\" yMax=\"\([^\"]*\)\">\(.*\)<\/word>/$3 \1 \2 \3 \4 \5/p"
}
fit() {
	{ words "$1" 1 A; words "$2" "$3" B; } | awk '
	{ w = $6; for (i = 7; i <= NF; i++) w = w " " $i; n[$1, w]++; x[$1, w] = ($2 + $4) / 2; y[$1, w] = ($3 + $5) / 2; all[w] = 1 }
	END {
		m = 0
		for (w in all) if (n["A", w] == 1 && n["B", w] == 1) {
			m++; ax += x["A", w]; bx += x["B", w]; axx += x["A", w]^2; axb += x["A", w] * x["B", w]
			ay += y["A", w]; by += y["B", w]; ayy += y["A", w]^2; ayb += y["A", w] * y["B", w]
		}
		if (m < 3) { print "0 0 0 0 0 999"; exit }
		kx = (m * axb - ax * bx) / (m * axx - ax * ax); ox = (bx - kx * ax) / m
		ky = (m * ayb - ay * by) / (m * ayy - ay * ay); oy = (by - ky * ay) / m
		for (w in all) if (n["A", w] == 1 && n["B", w] == 1) {
			e = sqrt((ox + kx * x["A", w] - x["B", w])^2 + (oy + ky * y["A", w] - y["B", w])^2); if (e > mx) mx = e
		}
		printf "%.6f %.6f %.3f %.3f %d %.3f\n", kx, ky, ox, oy, m, mx
	}'
}
# spec: lesson, which of its figures (its k-th PNG), the commands that make that figure alone
for spec in "2:2:tokenize --merges the teachers" "11:4:run The friends of the kings; beam 3 6"; do
	l=${spec%%:*} rest=${spec#*:}
	fig=${rest%%:*} figcmd=${rest#*:}
	file=$(ls lessons/$(printf %02d "$l")-*.lesson)
	steps=$(grep -c '^== ' "$file")
	./glassbox -c "lesson $l --export $T/l$l" >"$T/l$l.out" 2>&1
	pages=$(pdfinfo "$T/l$l/slides.pdf" 2>/dev/null | awk '/^Pages/ { print $2 }')
	size=$(pdfinfo "$T/l$l/slides.pdf" 2>/dev/null | awk '/^Page size/ { print $3 "x" $5 }')
	# a page per step, or per figure where a step made several (lesson.md's sections), and
	# the step's text on pages of its own beside them where it does not fit as a caption; the
	# page of the k-th figure is the k-th page with a framed figure
	want=$(awk '/^## / { if (s) n += f > 1 ? f : 1; s = $0 != "## Answers"; f = 0 } /^!\[/ { f++ }
		END { if (s) n += f > 1 ? f : 1; print n }' "$T/l$l/lesson.md")
	python3 tests/pdf_frames.py "$T/l$l/slides.pdf" >"$T/l$l.frames" 2>/dev/null
	page=$(awk '$4 == 1 { print $1 }' "$T/l$l.frames" | sed -n "${fig}p")
	check "lesson $l: slides.pdf has 16:9 pages, at least one per step and per figure ($pages pages of $size, $steps steps, $want at least; figure $fig on page ${page:-none})" \
		test "$pages" -ge "$want" -a "$size" = "960x540" -a "$want" -ge "$steps" -a -n "$page"
	hp=$(pdfinfo "$T/l$l/handout.pdf" 2>/dev/null | awk '/^Pages/ { print $2 }')
	hs=$(pdfinfo "$T/l$l/handout.pdf" 2>/dev/null | awk '/^Page size/ { print int($3) "x" int($5) }')
	title=$(sed -n 's/^# //p' "$file" | head -1)
	check "lesson $l: handout.pdf is A4 ($hp pages of $hs) with the title, the commands, the questions and the answers" \
		sh -c "test '$hs' = 595x841 && test '$hp' -ge 2 && pdftotext $T/l$l/handout.pdf - | tr '\n' ' ' >$T/h.txt &&
			grep -qF '$title' $T/h.txt && grep -q 'glassbox> ' $T/h.txt && grep -q 'Question 1\.' $T/h.txt && grep -q 'Answers' $T/h.txt"
	check "lesson $l: every font of both PDFs is embedded" sh -c "for p in slides handout; do
		pdffonts $T/l$l/\$p.pdf | awk 'NR > 2 { n++; if (\$(NF - 4) != \"yes\") bad = 1 } END { exit !(n > 0 && !bad) }' || exit 1; done"
	blank=0
	for k in $(seq 1 "${pages:-0}"); do
		pdftoppm -png -r 24 -f "$k" -l "$k" -singlefile "$T/l$l/slides.pdf" "$T/p" 2>/dev/null
		ink=$($STEPS --ink "$T/p.png" 2>/dev/null || echo 0)
		[ "$ink" -gt 400 ] || blank=$((blank + 1))
	done
	check "lesson $l: no slide is blank (rendered back at 24 dpi, each has ink; $blank without)" test "$blank" = 0 -a "${pages:-0}" -gt 0
	# the slide lays its figure out for the room it has (1600 x 860 down to 1600 x 480 by 20, the
	# same shapes 1400 or 1200 wide, or 1000, 860 or 740 wide beside its text when its data is
	# narrow; heights rounded): the same layout as an export at that size, found from the frame
	# around it on the page (the sizes of its shape) and the words (the one whose words fit best)
	sizes=$(awk -v p="$page" '$1 == p && $4 == 1 { split("1600 1400 1200 1000 860 740", W, " ");
		for (i = 1; i <= 6; i++) for (v = 0; v < 20; v++) { base = i <= 3 ? 1600 : 1000;
			h = int((860 - 20 * v) * W[i] / base + 0.5); d = h - W[i] * $8 / $7; if (d < 0) d = -d;
			if (d < 1.5) print W[i] "x" h } }' "$T/l$l.frames")
	best=999 fw=1600 fh=900
	for sz in ${sizes:-1600x900}; do
		./glassbox -c "$figcmd; export $T/try$sz.pdf --size $sz" >/dev/null 2>&1
		set -- $(fit "$T/try$sz.pdf" "$T/l$l/slides.pdf" "$page")
		if awk "BEGIN { exit !($6 < $best) }"; then
			best=$6 fw=${sz%x*} fh=${sz#*x}
		fi
	done
	./glassbox -c "$figcmd; export $T/f$l.pdf --size ${fw}x$fh; export $T/f$l.png --size ${fw}x$fh" >/dev/null 2>&1
	set -- $(fit "$T/f$l.pdf" "$T/l$l/slides.pdf" "$page")
	kx=$1 ky=$2 ox=$3 oy=$4 words=$5 err=$6
	# (within 4.3 px of the figure: 2.5 pt at 1600 px across the slide, more pt at a larger scale)
	check "lesson $l, slide $page: its figure's $words words sit where the figure's own PDF has them at ${fw}x$fh, scaled (x $kx, y $ky; worst $err pt off)" \
		awk "BEGIN { exit !($words >= 15 && $err / $kx < 4.3 && $kx > 0.2 && ($kx / $ky) > 0.98 && ($kx / $ky) < 1.02) }"
	# the slide's figure cut out at the figure's own size, against the PNG, block by block
	r=$(awk "BEGIN { print 72 / $ky }")
	pdftoppm -png -r "$r" -f "$page" -l "$page" -x "$(awk "BEGIN { printf \"%d\", $ox / $ky + 0.5 }")" \
		-y "$(awk "BEGIN { printf \"%d\", $oy / $ky + 0.5 }")" -W "$fw" -H "$fh" -singlefile "$T/l$l/slides.pdf" "$T/crop" 2>/dev/null
	c=$($STEPS --corr "$T/crop.png" "$T/f$l.png" 32 18 2>/dev/null || echo 0)
	check "lesson $l, slide $page: the figure on it matches the PNG export (ink correlation over 32 x 18 blocks $c)" \
		awk "BEGIN { exit !($c > 0.97) }"
done
exit $((fails > 0))
