#!/bin/sh
# t_pdf.sh — export FILE.pdf: one 16:9 page of vectors with the fonts embedded, the layout of the
# PNG (issue 14, part 4: PDF without pandoc). Each kind of figure is exported as PDF and PNG;
# pdftoppm renders the page back at 72 dpi (1600 x 900 pixels, one per point) and the pixel tool
# of t_window.t compares it with the PNG: not blank, about as much ink, few pixels apart
# (anti-aliasing differs between the two rasterizers, the layout must not).
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
for tool in pdftoppm pdfinfo pdffonts; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "1..0 # SKIP $tool is not installed (poppler-utils)"
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
set -- "attn 3 2" heatmap "next 5" bars "pe 0 1 20 21" lines "heads 2" grid "arch" diagram "attn 3 2 --lines" attnlines
echo "1..$(( $# / 2 * 3 + 2 ))"
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
	check "$kind: rendered back, it has the PNG's ink ($ia vs $ib) and few pixels differ by more than 64 levels ($d of 1440000)" \
		awk "BEGIN { exit !($ia > 20000 && $ia > 0.85 * $ib && $ia < 1.15 * $ib && $d < 0.03 * 1440000) }"
done
./glassbox -c "$RUN; attn 1 1; export $T/t.pdf" >/dev/null 2>&1
check "the PDF's title is the figure's" sh -c "pdfinfo $T/t.pdf | grep -q '^Title: *Layer 1, head 1: attention weights'"
./glassbox -c "$RUN; attn 1 1; export $T/t.pdf" >/dev/null 2>"$T/err"
check "an existing PDF is kept unless --force, in one line" sh -c "test \$(wc -l <$T/err) -eq 1 && grep -q 'already exists' $T/err"
exit $((fails > 0))
