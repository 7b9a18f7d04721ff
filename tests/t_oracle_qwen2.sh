#!/bin/sh
# t_oracle_qwen2.sh -- Qwen2 model folders (Llama with q/k/v biases) against a PyTorch forward
# written from Qwen2's conventions (tests/oracle_qwen2.py), for the reference and the fast kernels,
# and Qwen2 configs glassbox must refuse. Needs Debian's python3-torch and python3-numpy.
cd "$(dirname "$0")/.." || exit 1
if ! /usr/bin/python3 -c 'import torch, numpy' >/dev/null 2>&1; then
	echo "1..0 # SKIP python3-torch not installed"
	exit 0
fi
exec /usr/bin/python3 tests/oracle_qwen2.py "$@"
