#!/bin/sh
# t_llama2c.sh -- llama2.c checkpoints and tokenizer.bin against a PyTorch forward and run.c's
# encoder written from the format (tests/llama2c_oracle.py): logits, round trips, broken files.
# Needs Debian's python3-torch and python3-numpy under /usr/bin/python3.
cd "$(dirname "$0")/.." || exit 1
if ! /usr/bin/python3 -c 'import torch, numpy' >/dev/null 2>&1; then
	echo "1..0 # SKIP python3-torch not installed"
	exit 0
fi
exec /usr/bin/python3 tests/llama2c_oracle.py "$@"
