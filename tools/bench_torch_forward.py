#!/usr/bin/python3
"""bench_torch_forward.py — PyTorch's plain forward pass of a GPT-2-shaped model with random
weights, for `glassbox bench long` (app/bench_long.c) to compare against, side by side.
(Debian's python3-torch multiplies through the BLAS the system selects; with netlib's
reference BLAS it is slow, and the figure says so only relative to this machine.)

usage: bench_torch_forward.py T THREADS [D LAYERS HEADS FFN VOCAB]

Builds the model (GPT-2 as Hugging Face's 1.13-era code computes it: pre-LayerNorm blocks,
fused q/k/v, causal mask, softmax, tanh GELU, tied output embedding) and runs T tokens once,
timed, under torch.no_grad, as glassbox's bench runs its own once in a fresh process. Prints
one line:
    seconds S weights_mb W extra_mb X
S the run's seconds, W the parameters' MB, X the peak resident memory above the resident
memory once the model was built (VmHWM - VmRSS; the peak is reset when the kernel allows)."""
import math
import sys
import time

import torch
import torch.nn as nn


def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


class Block(nn.Module):
    def __init__(self, d, h, ffn):
        super().__init__()
        self.h = h
        self.ln1 = nn.LayerNorm(d, eps=1e-5)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d, eps=1e-5)
        self.up = nn.Linear(d, ffn)
        self.down = nn.Linear(ffn, d)

    def forward(self, x, mask):
        T, D = x.shape[1], x.shape[2]
        q, k, v = self.qkv(self.ln1(x)).split(D, dim=2)
        q, k, v = (t.view(1, T, self.h, D // self.h).transpose(1, 2) for t in (q, k, v))
        s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(D // self.h)
        s = torch.where(mask[:, :, :T, :T], s, torch.tensor(torch.finfo(s.dtype).min))
        a = torch.matmul(torch.softmax(s, dim=-1), v).transpose(1, 2).reshape(1, T, D)
        x = x + self.proj(a)
        u = self.up(self.ln2(x))
        g = 0.5 * u * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (u + 0.044715 * torch.pow(u, 3.0))))
        return x + self.down(g)


class GPT(nn.Module):
    def __init__(self, d, layers, h, ffn, vocab, ctx):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(Block(d, h, ffn) for _ in range(layers))
        self.lnf = nn.LayerNorm(d, eps=1e-5)
        self.register_buffer("mask", torch.tril(torch.ones(ctx, ctx, dtype=torch.bool)).view(1, 1, ctx, ctx))

    def forward(self, ids):
        T = ids.shape[1]
        x = self.wte(ids) + self.wpe(torch.arange(T).unsqueeze(0))
        for b in self.blocks:
            x = b(x, self.mask)
        return torch.matmul(self.lnf(x), self.wte.weight.t())  # tied output embedding


def main():
    a = [int(v) for v in sys.argv[1:]]
    if len(a) not in (2, 7):
        sys.exit(__doc__.split("\n\n")[1])
    T, threads = a[0], a[1]
    d, layers, h, ffn, vocab = a[2:] if len(a) == 7 else (768, 12, 12, 3072, 50257)
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    with torch.no_grad():
        m = GPT(d, layers, h, ffn, vocab, max(T, 1024)).eval()
        for p in m.parameters():
            p.normal_(0.0, 0.02)
        weights = sum(p.numel() * 4 for p in m.parameters())
        ids = torch.tensor([[(7 + 13 * i) % vocab for i in range(T)]])
        base = status("VmRSS")
        try:  # resets VmHWM to the current RSS (Linux 4.0 on)
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
        except OSError:
            pass
        t0 = time.perf_counter()
        m(ids)
        best = time.perf_counter() - t0
        extra = max(status("VmHWM") - base, 0)
    print("seconds %.4f weights_mb %.1f extra_mb %.1f" % (best, weights / 1048576, extra / 1048576))


if __name__ == "__main__":
    main()
