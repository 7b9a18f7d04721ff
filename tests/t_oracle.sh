#!/bin/sh
# t_oracle.sh -- glassbox's logits against an independent PyTorch implementation of
# model/README.md (tests/oracle.py), for the reference and the fast kernels.
# Needs Debian's python3-torch and python3-numpy under /usr/bin/python3.
cd "$(dirname "$0")/.." || exit 1
if ! /usr/bin/python3 -c 'import torch, numpy' >/dev/null 2>&1; then
	echo "1..0 # SKIP python3-torch not installed"
	exit 0
fi
exec /usr/bin/python3 tests/oracle.py "$@"
