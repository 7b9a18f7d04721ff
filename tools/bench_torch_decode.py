#!/usr/bin/python3
"""bench_torch_decode.py -- PyTorch's figure for `glassbox bench decode`.

What it measures: the same "weights pass" glassbox times -- one token (a single row) through
a chain of fp32 linear layers with the given shapes and weight layouts, i.e. one
matrix-vector product per layer, weights read once per token -- with
torch.set_num_threads(N), under torch.no_grad(). No attention, no norms, no KV cache: it is
the memory-bound part of decoding, and the part a KV cache cannot shrink.

Layers: --layers IN:OUT:TRANS:BIAS,... in forward order. TRANS 1 is nn.Linear's layout
(weight (OUT, IN), torch.nn.functional.linear); TRANS 0 is GPT-2's Conv1D (weight (IN, OUT),
torch.addmm), so both read the weights in the same layout as glassbox does.

Prints "tok/s X" (the best of 5 runs of --tokens steps), or "skip: REASON" when torch is
missing. Weights are random; speed does not depend on them.
"""
import argparse
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--layers", required=True)
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("skip: python3 has no torch (apt-get install python3-torch)")
        return 0
    torch.set_num_threads(args.threads)
    layers = []
    for item in args.layers.split(","):
        i, o, t, b = (int(v) for v in item.split(":"))
        w = torch.randn((o, i) if t else (i, o)) * 0.02
        layers.append((i, t, w, torch.zeros(o) if b else None))
    width = max(i for i, _, _, _ in layers)
    x = torch.randn(1, width) * 0.1

    def step():
        y = None
        for i, t, w, b in layers:
            xin = x[:, :i]
            if t:
                y = torch.nn.functional.linear(xin, w, b)
            elif b is not None:
                y = torch.addmm(b, xin, w)
            else:
                y = torch.mm(xin, w)
        return int(torch.argmax(y))

    with torch.no_grad():
        step()
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(args.tokens):
                step()
            best = min(best, time.perf_counter() - t0)
    print("tok/s %.3f" % (args.tokens / best))
    return 0


if __name__ == "__main__":
    sys.exit(main())
