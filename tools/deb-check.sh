#!/bin/sh
# deb-check.sh — the Debian package, tried as a school's IT would: build it (make deb), lintian
# (no errors), install it with apt-get (dependencies from the archive), run the installed copy
# from outside the source tree (a figure, a lesson's export, doctor, the man page, the bash
# completion), and remove it leaving nothing behind. It installs a system package: run it as
# root on a machine you may change (CI does, after make check); make check never runs it.
set -eu
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "deb-check: run as root (it installs and removes the package)" >&2; exit 1; }
for t in dpkg-buildpackage dh lintian; do
	command -v "$t" >/dev/null 2>&1 || { echo "deb-check: $t missing (apt-get install dpkg-dev debhelper lintian)" >&2; exit 1; }
done
if dpkg -s glassbox >/dev/null 2>&1; then
	echo "deb-check: a glassbox package is installed already; remove it first" >&2
	exit 1
fi
fail() { echo "deb-check: $*" >&2; exit 1; }
t0=$(date +%s)
make deb >build/deb.log 2>&1 || { tail -20 build/deb.log; fail "make deb failed (build/deb.log)"; }
version=$(dpkg-parsechangelog -l debian/changelog -S Version)
deb=build/deb/glassbox_${version}_amd64.deb
[ -f "$deb" ] || fail "$deb was not built"
t1=$(date +%s)
lintian --fail-on error "build/deb/glassbox_${version}_amd64.changes" || fail "lintian reports errors"
t2=$(date +%s)
tmp=$(mktemp -d)
installed=0
# A failure after the install still removes the package: the machine is left as it was.
trap 'rm -rf "$tmp"; [ $installed = 0 ] || DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq glassbox >/dev/null 2>&1' EXIT
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "./$deb" >/dev/null || fail "apt-get install ./$deb failed"
installed=1
t3=$(date +%s)
# From an empty folder, so nothing of the source tree can be found beside it.
cd "$tmp"
[ "$(command -v glassbox)" = /usr/bin/glassbox ] || fail "glassbox is not /usr/bin/glassbox"
glassbox -c "run the cat sat on the mat; attn 1 1" >attn.txt || fail "the installed glassbox could not draw attn 1 1"
grep -q "mat" attn.txt || fail "attn 1 1 did not label its tokens"
glassbox -c "lesson 1 --export l1" >lesson.txt || fail "lesson 1 --export failed from the installed copy"
[ -f l1/lesson.md ] && ls l1/*.png >/dev/null 2>&1 || fail "lesson 1 --export wrote no handout or figures"
glassbox doctor >doctor.txt || { cat doctor.txt; fail "doctor found something a lesson needs missing"; }
grep -q "models .*tiny-lm.*/usr/share/glassbox/models/tiny-lm" doctor.txt || fail "doctor did not find tiny-lm in /usr/share/glassbox"
grep -q "lessons .*/usr/share/glassbox/lessons" doctor.txt || fail "doctor did not find the lessons in /usr/share/glassbox"
[ "$(man -w glassbox)" = /usr/share/man/man1/glassbox.1.gz ] || fail "man glassbox does not find the page"
[ "$(man -w 5 glassbox-lesson)" = /usr/share/man/man5/glassbox-lesson.5.gz ] || fail "man 5 glassbox-lesson does not find the page"
bash -c '. /usr/share/bash-completion/completions/glassbox; COMP_WORDS=(glassbox -c "\"lesson so"); COMP_CWORD=2;
	_glassbox; [ "${COMPREPLY[*]}" = "lesson softmax-mask" ]' || fail "the installed bash completion does not complete lesson names"
t4=$(date +%s)
cd - >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq glassbox >/dev/null || fail "apt-get purge glassbox failed"
[ ! -e /usr/bin/glassbox ] && [ ! -e /usr/share/glassbox ] && [ ! -e /usr/share/man/man1/glassbox.1.gz ] ||
	fail "files left after apt-get purge glassbox"
installed=0
t5=$(date +%s)
echo "deb-check: $deb ok; seconds: build $((t1 - t0)), lintian $((t2 - t1)), install $((t3 - t2)), run $((t4 - t3)), remove $((t5 - t4))"
