# tap.sh — TAP helpers shared by the shell tests (sourced from the repository root).
# ok STATUS DESC: one numbered result; check DESC CMD...: ok when CMD succeeds (quietly);
# have FILE TEXT: FILE contains TEXT. A script ends with `exit $((fails > 0))`.
n=0
fails=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails + 1)); fi; }
check() { desc=$1; shift; if "$@" >/dev/null 2>&1; then ok 0 "$desc"; else ok 1 "$desc"; fi; }
have() { grep -qF -- "$2" "$1"; }
# A private tmux server for this script alone (its own socket in the script's temporary
# folder), so a user's or another test's tmux sessions can never change a result; it is
# killed when the script ends (call tmux_cleanup from the script's own EXIT trap).
unset TMUX
tmux() { command tmux -S "$TMUX_SOCK" "$@"; }
tmux_private() { TMUX_SOCK=$1/tmux.sock; command tmux -S "$TMUX_SOCK" kill-server 2>/dev/null; }
tmux_cleanup() { [ -n "$TMUX_SOCK" ] && command tmux -S "$TMUX_SOCK" kill-server 2>/dev/null; }
# xvfb_start: a virtual X display that Xvfb picks itself (-displayfd: no fixed number to race
# for); sets D=:N and XPID, or leaves D empty when Xvfb cannot start.
xvfb_start() {
	D= XPID=
	command -v Xvfb >/dev/null 2>&1 || return 1
	_xf=$(mktemp)
	Xvfb -displayfd 1 -screen 0 "${1:-1400x900x24}" -nolisten tcp >"$_xf" 2>/dev/null &
	XPID=$!
	_i=0; while [ $_i -lt 100 ] && ! [ -s "$_xf" ]; do sleep 0.05; _i=$((_i + 1)); done
	[ -s "$_xf" ] && D=":$(head -n 1 "$_xf")"
	rm -f "$_xf"
	[ -n "$D" ]
}
