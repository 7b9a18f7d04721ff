#!/bin/sh
# t_doctor.sh — `glassbox doctor` in hermetic environments (env -i: only what each case sets):
# no display gives a ✘ window line with its fix and exit status 0 (a lesson runs without the
# window); the shipped models and lessons found give ✔ with their folders; a virtual X display
# gives ✔ with the screen's size; a missing font, a broken kernel setting or a copy of the
# program with no data beside it gives ✘, the fix, a one-line error and status 1; a pseudo
# terminal (script) gives the colour depth and size that the prompt would use. Also --help and
# --version.
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
T=$(mktemp -d)
XPID=
trap '[ -n "$XPID" ] && kill $XPID 2>/dev/null; rm -rf "$T"' EXIT
G=$PWD/glassbox
# clean_env ENV... CMD: CMD with only PATH, HOME and ENV; the sanitizers' settings pass through
# (make check SANITIZE=... sets them: without them a sanitized glassbox reports the leaks of
# fontconfig that tests/lsan.supp suppresses, exits 1 and loses its buffered output)
clean_env() {
	env -i PATH=/usr/bin:/bin HOME="$T/home" ASAN_OPTIONS="${ASAN_OPTIONS:-}" LSAN_OPTIONS="${LSAN_OPTIONS:-}" \
		UBSAN_OPTIONS="${UBSAN_OPTIONS:-}" "$@"
}
# run ENV...: doctor with only these variables (and PATH), out in $T/out, err in $T/err, status in rc
run() {
	clean_env "$@" "$G" doctor >"$T/out" 2>"$T/err"
	rc=$?
}
mkdir -p "$T/home"

run LANG=C.UTF-8 TERM=xterm-256color
ok $([ $rc = 0 ]; echo $?) "no display, models and lessons present: exit status 0 (the window is not needed for a lesson)"
ok $(grep -q "^✘ window *cannot open: no display (neither DISPLAY nor WAYLAND_DISPLAY is set)" "$T/out" &&
	grep -A1 "^✘ window" "$T/out" | grep -q "fix: run glassbox in the desktop session"; echo $?) "no display: ✘ window, why, and the fix under it"
# (the folders as the program resolves them: under make check SANITIZE=... the tree's folders
# are links from build/san/root)
assets=$(cd assets && pwd -P) lessons=$(cd lessons && pwd -P)
ok $(grep -q "^✔ models *tiny-lm: 4 layers x 4 heads, d_model 128.*($assets/models/tiny-lm)" "$T/out" &&
	grep -q "^✔ models *tiny-mt: 2 + 2 layers" "$T/out"; echo $?) "✔ both shipped models, loaded, with their folder and sizes"
nl=$(ls lessons/*.lesson | wc -l)
ok $(grep -q "^✔ lessons *$nl in $lessons" "$T/out"; echo $?) "✔ lessons: the $nl of lessons/ and their folder"
ok $(grep -q "^✔ fonts .*sans /.*\.ttf" "$T/out"; echo $?) "✔ fonts: the files the PNG path opens"
ok $(grep -Eq "^✔ kernels *(avx512|avx2|scalar) on [0-9]+ threads? .*against ref: [0-9.]+e-0[5-9]" "$T/out"; echo $?) \
	"✔ kernels: the fast table, threads, agreement with the reference"
ok $(grep -q "^✘ colours .*(the output is not a terminal)" "$T/out" && [ ! -s "$T/err" ] && tail -n 1 "$T/out" | grep -qx "Ready for a lesson."; echo $?) \
	"a pipe: ✘ colours (not a terminal), nothing on stderr, ready for a lesson"
run LANG=C TERM=xterm-256color
ok $(grep -q "^x UTF-8 *no (character set ANSI_X3.4-1968)" "$T/out" && grep -q "^+ models" "$T/out" &&
	grep -q "fix: export LANG=C.UTF-8" "$T/out"; echo $?) "LANG=C: ✘ UTF-8 with the fix, and marks in ASCII (+, x)"
run LANG=C.UTF-8 TERM=dumb
ok $(grep -q "^+ models" "$T/out"; echo $?) "TERM=dumb: marks in ASCII"

# a font that is not there: needed for every PNG and a lesson's export
run LANG=C.UTF-8 GLASSBOX_FONT=/nonexistent.ttf
ok $([ $rc = 1 ] && grep -q "^✘ fonts *cannot load font '/nonexistent.ttf'" "$T/out" && grep -q "fix: apt-get install fonts-dejavu-core" "$T/out" &&
	[ "$(wc -l <"$T/err")" = 1 ] && grep -q "doctor: 1 thing a lesson needs is missing" "$T/err"; echo $?) \
	"GLASSBOX_FONT missing: ✘ fonts, the fix, one line on stderr, exit status 1"
run LANG=C.UTF-8 GLASSBOX_KERNELS=avx9000
ok $([ $rc = 1 ] && grep -q "^✘ kernels .*GLASSBOX_KERNELS=avx9000: unknown kernel table" "$T/out" && grep -q "fix: unset GLASSBOX_KERNELS" "$T/out"; echo $?) \
	"GLASSBOX_KERNELS=avx9000: ✘ kernels with the fix, exit status 1"

# the program alone, with no data beside it (nor in its configured place)
prefix=$(sed -n 's/^PREFIX ?= //p' config.mk)
mkdir -p "$T/alone/bin"
cp glassbox "$T/alone/bin/"
if [ -d "$prefix/share/glassbox" ]; then
	echo "ok $((n + 1)) # SKIP $prefix/share/glassbox exists (an installed copy): the program would find its data"
	n=$((n + 1))
else
	clean_env LANG=C.UTF-8 "$T/alone/bin/glassbox" doctor >"$T/out" 2>"$T/err"
	rc=$?
	ok $([ $rc = 1 ] && grep -q "^✘ models *the shipped models were not found" "$T/out" && grep -q "^✘ lessons *not found" "$T/out" &&
		grep -q "fix: install glassbox with its data" "$T/out" && grep -qx "glassbox: doctor: 2 things a lesson needs are missing (the fix is under each ✘)" "$T/err"; echo $?) \
		"no models or lessons: ✘ both with the fix, one line on stderr, exit status 1"
fi
# an installed tree (make install-files PREFIX=...: install's recipe on the built program, which
# another PREFIX does not rebuild): found from the program's own path
make install-files PREFIX="$T/inst" >/dev/null 2>&1
clean_env LANG=C.UTF-8 "$T/inst/bin/glassbox" doctor >"$T/out" 2>"$T/err"
ok $([ $? = 0 ] && grep -q "^✔ models *tiny-lm.*($T/inst/share/glassbox/models/tiny-lm)" "$T/out" && grep -q "^✔ lessons .* in $T/inst/share/glassbox/lessons" "$T/out"; echo $?) \
	"make install PREFIX=...: doctor finds the installed models and lessons"

if grep -q "HAVE_SDL2 = 1" config.mk && xvfb_start 1280x720x24; then
	run LANG=C.UTF-8 DISPLAY="$D"
	ok $([ $rc = 0 ] && grep -q "^✔ window *can open (x11, screen 1280x720, DISPLAY=$D)" "$T/out"; echo $?) "a virtual display: ✔ window, its driver and screen size"
	kill $XPID 2>/dev/null
	wait $XPID 2>/dev/null
	XPID=
	run LANG=C.UTF-8 DISPLAY="$D"
	# SDL fails, or falls back to drawing off screen, which the window module refuses
	ok $([ $rc = 0 ] && grep -Eq "^✘ window *cannot open the window(: no display answered at DISPLAY=$D| \(.+\))" "$T/out" &&
		grep -A1 "^✘ window" "$T/out" | grep -q "fix: check that DISPLAY"; echo $?) \
		"a display that is gone: ✘ window with the reason and the fix, exit status 0"
else
	for i in 1 2; do echo "ok $((n + 1)) # SKIP no SDL2 build or no Xvfb"; n=$((n + 1)); done
fi

# at a terminal (a pseudo terminal from script(1)): what the prompt's figures would use
if command -v script >/dev/null 2>&1; then
	tty_doctor() { clean_env LANG=C.UTF-8 "$@" script -qec "stty cols $C rows $R; $G doctor" /dev/null >"$T/out" 2>&1; }
	C=100 R=30 tty_doctor TERM=xterm-256color
	ok $(grep -q "^✔ colours *256 colours (TERM=xterm-256color)" "$T/out" && grep -q "^✔ size *100x30 (the explorer needs 80x24)" "$T/out"; echo $?) \
		"a 100x30 terminal with 256 colours: ✔ colours and size"
	C=70 R=20 tty_doctor TERM=xterm-256color COLORTERM=truecolor NO_COLOR=1
	ok $(grep -q "^✘ colours *plain text (no colour) (NO_COLOR is set)" "$T/out" && grep -q "fix: unset NO_COLOR" "$T/out" &&
		grep -q "^✘ size *70x20" "$T/out"; echo $?) "NO_COLOR and a 70x20 terminal: ✘ colours and size, each with its fix"
	C=100 R=30 tty_doctor TERM=xterm COLORTERM=truecolor
	ok $(grep -q "^✔ colours *24-bit colour (TERM=xterm, COLORTERM=truecolor)" "$T/out"; echo $?) "COLORTERM=truecolor: 24-bit"
else
	for i in 1 2 3; do echo "ok $((n + 1)) # SKIP script(1) not installed"; n=$((n + 1)); done
fi

# --help and --version
"$G" --help >"$T/help" 2>&1
ok $? "--help: exit status 0"
missing=""
for o in -c --tui doctor bench train eval export-model --help -h --version FILE; do grep -q -- "^  \(-h, \)\?$o\b" "$T/help" || missing="$missing $o"; done
ok $([ -z "$missing" ]; echo $?) "--help lists every option${missing:+: missing$missing}"
"$G" --version >"$T/ver" 2>&1
ok $? "--version: exit status 0"
mk=$(sed -n 's/^VERSION *= *//p' Makefile)
deb=$(sed -n '1s/^glassbox (\([^)]*\)).*/\1/p' debian/changelog)
sdl=$(sed -n 's/^HAVE_SDL2 = //p' config.mk)
ok $(head -n 1 "$T/ver" | grep -qx "glassbox $mk" && [ "${deb%-*}" = "$mk" ]; echo $?) "--version says the Makefile's version, and debian/changelog's is the same ($mk, $deb)"
ok $(if [ "$sdl" = 1 ]; then grep -qx "window (SDL2): on" "$T/ver"; else grep -q "^window (SDL2): off" "$T/ver"; fi; echo $?) "--version: the window as configured (HAVE_SDL2=$sdl)"
ok $(grep -Eq "^kernel tables: ref scalar.*; fast = (avx512|avx2|scalar), [0-9]+ threads" "$T/ver"; echo $?) "--version: the kernel tables and the one in use"
"$G" --bogus >"$T/out" 2>"$T/err"
ok $([ $? = 2 ] && [ ! -s "$T/out" ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -q "unknown option '--bogus'" "$T/err"; echo $?) \
	"an unknown option: one line on stderr, exit status 2"

echo "1..$n"
exit $((fails > 0))
