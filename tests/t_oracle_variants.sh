#!/bin/sh
# t_oracle_variants.sh -- T5's relative bias, linear attention and mixtures of experts (Switch,
# Mixtral) against PyTorch models written from their papers (tests/oracle_variants.py), for the
# reference and the fast kernels. Needs Debian's python3-torch and python3-numpy.
cd "$(dirname "$0")/.." || exit 1
if ! /usr/bin/python3 -c 'import torch, numpy' >/dev/null 2>&1; then
	echo "1..0 # SKIP python3-torch not installed"
	exit 0
fi
exec /usr/bin/python3 tests/oracle_variants.py "$@"
