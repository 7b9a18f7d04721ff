# tap.sh — TAP helpers shared by the shell tests (sourced from the repository root).
# ok STATUS DESC: one numbered result; check DESC CMD...: ok when CMD succeeds (quietly);
# have FILE TEXT: FILE contains TEXT. A script ends with `exit $((fails > 0))`.
n=0
fails=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails + 1)); diag "not ok $n - $2"; fi; }
# diag LINE...: a line to stderr, and to GB_TEST_DIAG's file when make check names one (it prints
# that file's end after a failed run, where CI's short log shows it); each line names its script
diag() { for _l in "$@"; do echo "# $_l" >&2; [ -n "${GB_TEST_DIAG:-}" ] && echo "${0##*/}: $_l" >>"$GB_TEST_DIAG"; done; return 0; }
# unwrap < FILE: `info`'s description with each wrapped value joined back onto one line
unwrap() { awk '/^            [^ ]/ && NR > 1 { sub(/^ +/, ""); prev = prev " " $0; next } NR > 1 { print prev } { prev = $0 } END { if (NR) print prev }'; }
check() { desc=$1; shift; if "$@" >/dev/null 2>&1; then ok 0 "$desc"; else ok 1 "$desc"; fi; }
have() { grep -qF -- "$2" "$1"; }
# slow N: N times GB_SLOW (tests/sanitize.env sets it under sanitizers), for time limits and
# waiting loops that a slower build would run past.
slow() { echo $(($1 * ${GB_SLOW:-1})); }
# join_port FILE: waits (10 s, times GB_SLOW) for a teacher's join line ("glassbox --follow
# HOST:PORT --code C") in FILE and prints its port; nothing when it never came.
join_port() {
	_i=0
	while [ $_i -lt "$(slow 200)" ] && ! grep -q 'glassbox --follow' "$1" 2>/dev/null; do sleep 0.05; _i=$((_i + 1)); done
	sed -n 's/.*glassbox --follow [0-9.]*:\([0-9]*\) --code .*/\1/p' "$1" | head -n 1
}
# A private tmux server for this script alone (its own socket in the script's temporary
# folder), so a user's or another test's tmux sessions can never change a result; it is
# killed when the script ends (call tmux_cleanup from the script's own EXIT trap). A keeper
# session holds the server up between a test's sessions: a server whose last session ends
# exits, and a session started at that moment could meet the dying server and never start.
unset TMUX
tmux() { command tmux -S "$TMUX_SOCK" "$@"; }
tmux_private() {
	# a script stopped by a signal (Ctrl-C on prove, a kill) still runs its EXIT trap, which
	# takes its tmux server, the programs in it and its Xvfb down with it
	trap 'exit 130' HUP INT TERM
	TMUX_SOCK=$1/tmux.sock
	command tmux -S "$TMUX_SOCK" kill-server 2>/dev/null
	command tmux -S "$TMUX_SOCK" new-session -d -s keeper -x 80 -y 24 "sleep 100000" 2>/dev/null
}
tmux_cleanup() { [ -n "$TMUX_SOCK" ] && command tmux -S "$TMUX_SOCK" kill-server 2>/dev/null; }
# xvfb_start: a virtual X display that Xvfb picks itself (-displayfd: no fixed number to race
# for); sets D=:N and XPID, or leaves D empty when Xvfb cannot start. -noreset: the server does
# not reset when its last client leaves (between two windows, a client connecting then could fail).
xvfb_start() {
	D= XPID=
	command -v Xvfb >/dev/null 2>&1 || return 1
	_xf=$(mktemp)
	Xvfb -displayfd 1 -screen 0 "${1:-1400x900x24}" -nolisten tcp -noreset >"$_xf" 2>/dev/null &
	XPID=$!
	_i=0; while [ $_i -lt 100 ] && ! [ -s "$_xf" ]; do sleep 0.05; _i=$((_i + 1)); done
	[ -s "$_xf" ] && D=":$(head -n 1 "$_xf")"
	rm -f "$_xf"
	[ -n "$D" ] || return 1
	# and until a client gets an answer from it (a loaded machine: a window opened too soon
	# found no display)
	command -v xdotool >/dev/null 2>&1 || return 0
	_i=0; while [ $_i -lt "$(slow 300)" ] && ! DISPLAY=$D xdotool getdisplaygeometry >/dev/null 2>&1; do sleep 0.1; _i=$((_i + 1)); done
	DISPLAY=$D xdotool getdisplaygeometry >/dev/null 2>&1
}
# png_text FILE KEY: the value of a PNG's tEXt chunk KEY, or of its iTXt chunk (UTF-8, not
# compressed: what the exporter writes for a text outside Latin-1); nothing when absent
png_text() {
	od -An -v -tu1 "$1" | LC_ALL=C awk -v key="$2" '
		{ for (i = 1; i <= NF; i++) b[n++] = $i }
		END {
			for (p = 8; p + 8 <= n; p += 12 + len) {
				len = ((b[p] * 256 + b[p + 1]) * 256 + b[p + 2]) * 256 + b[p + 3]
				type = sprintf("%c%c%c%c", b[p + 4], b[p + 5], b[p + 6], b[p + 7])
				if (type != "tEXt" && type != "iTXt")
					continue
				k = ""
				for (j = p + 8; b[j] != 0; j++)
					k = k sprintf("%c", b[j])
				if (k != key)
					continue
				if (type == "iTXt") { # flag, method, language NUL, translated keyword NUL
					j += 2
					for (z = 0; z < 2; z++)
						for (j++; b[j] != 0; j++)
							;
				}
				v = ""
				for (j++; j < p + 8 + len; j++)
					v = v sprintf("%c", b[j])
				print v
				exit
			}
		}'
}
