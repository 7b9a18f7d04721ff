#!/usr/bin/python3
"""bench_torch_gpt2_kv.py -- PyTorch's greedy decoding of GPT-2 with a key/value cache, the peer
of glassbox's cached forward in `glassbox bench decode --shape gpt2small` (app/bench_decode.c).

The forward pass follows Hugging Face's GPT-2 (modeling_gpt2.py) conventions, written out here
without the transformers package: Conv1D weights stored (in, out) and applied with torch.addmm,
pre-LayerNorm blocks with eps 1e-5, fused q|k|v columns split into 12 heads, scores divided by
sqrt(head width), a causal mask, softmax, tanh GELU ("gelu_new", through torch's fused
gelu(approximate="tanh"), the same function), learned positions, a final LayerNorm and the
output projection tied to the token embedding. Past keys and values live in preallocated
(layers, heads, context, head width) buffers that each step writes its own row into and attends
over up to its position (Hugging Face concatenates them instead: the same numbers, one copy
more per step). Runs under torch.no_grad with torch.set_num_threads(--threads).

Weights: random fp32 of the shape given (default GPT-2 small: --dim 768 --layers 12 --heads 12
--vocab 50257 --context 1024, FFN 4 x dim), or --load DIR, a glassbox/Hugging Face GPT-2 folder
(config.json + model.safetensors, read here with the standard library and torch).

Modes (one line of output each, or "skip: REASON" when torch is missing or the folder is one
this script does not compute):
  (default)      prefill a --prompt-token prompt, then decode --tokens tokens greedily, step by
                 step through the cache; prints "tok/s X" for the decode steps alone (best of
                 --runs runs after one warm-up run)
  --check        decode with the cache, then recompute the whole sequence in one pass without
                 it; prints "check rel_err E tokens_equal 0|1 steps N", E = max|cached - full|
                 / max|full| over the logits of every decoded position (fp32: about 1e-6)
  --greedy N     prints "tokens T1 T2 ..." : N greedy tokens after the prompt (--ids)
--ids 1,2,3 sets the prompt (default: --prompt ids 0, 1, 2, ... mod vocab).
"""
import argparse
import json
import math
import os
import struct
import sys
import time


def load_folder(folder, torch):
    """(config dict, {name: fp32 tensor}) of a GPT-2 folder; raises ValueError for a folder whose
    architecture this script does not compute (it knows Hugging Face GPT-2's only)."""
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    if cfg.get("model_type") != "gpt2":
        raise ValueError("model_type %r is not gpt2" % cfg.get("model_type"))
    g = cfg.get("glassbox") or {}
    plain = {"norm": "layernorm", "norm_position": "pre", "position": "learned", "attention": "softmax",
             "bias": True, "ffn_bias": True, "norm_bias": True, "window": 0, "textbook_layernorm": False,
             "num_local_experts": 0, "scale_embedding": False, "final_norm": True}
    for k, v in g.items():
        if k in plain and v != plain[k]:
            raise ValueError("glassbox.%s = %r is not GPT-2's" % (k, v))
        if k == "n_kv_head" and v != cfg["n_head"]:
            raise ValueError("shared key/value heads are not GPT-2's")
        if k == "head_dim" and v * cfg["n_head"] != cfg["n_embd"]:
            raise ValueError("head_dim x heads != width is not GPT-2's")
        if k == "activation" and v != "gelu_tanh":
            raise ValueError("glassbox.activation %r is not gelu_new" % v)
    if cfg.get("activation_function", "gelu_new") not in ("gelu_new", "gelu_tanh"):
        raise ValueError("activation_function %r is not gelu_new" % cfg.get("activation_function"))
    if abs(cfg.get("layer_norm_epsilon", 1e-5) - 1e-5) > 1e-9:  # glassbox writes float32's 1e-5
        raise ValueError("layer_norm_epsilon %r is not 1e-5" % cfg.get("layer_norm_epsilon"))
    with open(os.path.join(folder, "model.safetensors"), "rb") as f:
        raw = f.read()
    (hlen,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + hlen])
    dtypes = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}
    W = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        if e["dtype"] not in dtypes:
            raise ValueError("tensor %s is %s (F32, F16 or BF16 only)" % (name, e["dtype"]))
        a, b = e["data_offsets"]
        t = torch.frombuffer(bytearray(raw[8 + hlen + a:8 + hlen + b]), dtype=dtypes[e["dtype"]])
        W[name[len("transformer."):] if name.startswith("transformer.") else name] = \
            t.reshape(e["shape"]).float()
    if not cfg.get("tie_word_embeddings", True) and "lm_head.weight" not in W:
        raise ValueError("untied output without lm_head.weight")
    return cfg, W


def random_weights(d, layers, vocab, ctx, ffn, torch):
    """GPT-2's tensors, Hugging Face names and layouts, random: N(0, 0.02) matrices and
    embeddings, norms' gains near 1, small biases (not zero, so a bias left out would show)."""
    g = torch.Generator().manual_seed(1)

    def n(*shape, s=0.02, mean=0.0):
        return torch.randn(*shape, generator=g) * s + mean

    W = {"wte.weight": n(vocab, d), "wpe.weight": n(ctx, d, s=0.01),
         "ln_f.weight": n(d, s=0.1, mean=1.0), "ln_f.bias": n(d, s=0.01)}
    for i in range(layers):
        p = "h.%d." % i
        W.update({p + "ln_1.weight": n(d, s=0.1, mean=1.0), p + "ln_1.bias": n(d, s=0.01),
                  p + "attn.c_attn.weight": n(d, 3 * d), p + "attn.c_attn.bias": n(3 * d, s=0.01),
                  p + "attn.c_proj.weight": n(d, d), p + "attn.c_proj.bias": n(d, s=0.01),
                  p + "ln_2.weight": n(d, s=0.1, mean=1.0), p + "ln_2.bias": n(d, s=0.01),
                  p + "mlp.c_fc.weight": n(d, ffn), p + "mlp.c_fc.bias": n(ffn, s=0.01),
                  p + "mlp.c_proj.weight": n(ffn, d), p + "mlp.c_proj.bias": n(d, s=0.01)})
    return W


class GPT2:
    """GPT-2's forward pass over the weights W (Hugging Face names), with a preallocated cache."""

    def __init__(self, torch, W, layers, heads, ctx, eps=1e-5):
        self.t, self.F = torch, torch.nn.functional
        self.L, self.H, self.C, self.eps = layers, heads, ctx, eps
        self.wte, self.wpe = W["wte.weight"], W["wpe.weight"]
        self.D = self.wte.shape[1]
        self.E = self.D // heads
        self.head = W.get("lm_head.weight", self.wte)  # (V, D): tied unless the folder has one
        self.lnf = (W["ln_f.weight"], W["ln_f.bias"])
        self.blocks = []
        for i in range(layers):
            p = "h.%d." % i
            self.blocks.append(tuple(W[p + k] for k in (
                "ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias",
                "attn.c_proj.weight", "attn.c_proj.bias", "ln_2.weight", "ln_2.bias",
                "mlp.c_fc.weight", "mlp.c_fc.bias", "mlp.c_proj.weight", "mlp.c_proj.bias")))
        self.k = torch.zeros(layers, heads, ctx, self.E)  # (L, H, C, E) past keys
        self.v = torch.zeros(layers, heads, ctx, self.E)  # (L, H, C, E) past values
        self.scale = 1.0 / math.sqrt(self.E)
        self.corrupt = False  # --corrupt-cache: the negative control of --check

    def forward(self, ids, pos, cache=True):
        """Logits (T, V) of the tokens ids (list) at positions pos..pos+T-1. cache: keys and
        values of positions < pos come from the cache and these are written into it; without,
        the pass sees only ids (pos must be 0)."""
        t, F = self.t, self.F
        T, D, H, E = len(ids), self.D, self.H, self.E
        end = pos + T
        x = self.wte[ids] + self.wpe[pos:end]  # (T, D)
        mask = None
        if T > 1:  # query i (position pos + i) sees keys j <= pos + i
            mask = t.ones(T, end, dtype=t.bool).tril(diagonal=pos).logical_not()
        for l, (g1, b1, wqkv, bqkv, wo, bo, g2, b2, wfc, bfc, wpr, bpr) in enumerate(self.blocks):
            h = F.layer_norm(x, (D,), g1, b1, self.eps)
            qkv = t.addmm(bqkv, h, wqkv)  # (T, 3D): Conv1D
            q, k, v = qkv.split(D, dim=1)
            q = q.view(T, H, E).transpose(0, 1)  # (H, T, E)
            k = k.view(T, H, E).transpose(0, 1)
            v = v.view(T, H, E).transpose(0, 1)
            if cache:
                self.k[l, :, pos:end] = k
                self.v[l, :, pos:end] = v
                k, v = self.k[l, :, :end], self.v[l, :, :end]  # (H, end, E)
            s = t.matmul(q, k.transpose(1, 2)) * self.scale  # (H, T, end)
            if mask is not None:
                s = s.masked_fill(mask, float("-inf"))
            a = t.matmul(t.softmax(s, dim=-1), v)  # (H, T, E)
            x = x + t.addmm(bo, a.transpose(0, 1).reshape(T, D), wo)
            h = F.layer_norm(x, (D,), g2, b2, self.eps)
            u = F.gelu(t.addmm(bfc, h, wfc), approximate="tanh")  # gelu_new
            x = x + t.addmm(bpr, u, wpr)
        x = F.layer_norm(x, (D,), self.lnf[0], self.lnf[1], self.eps)
        return F.linear(x, self.head)  # (T, V)

    def greedy(self, prompt, n, keep=False):
        """n greedy tokens after prompt through the cache; with keep, also the logits (n, V)
        each decoded token was chosen from."""
        logits = self.forward(prompt, 0)[-1]
        if self.corrupt:
            self.k[0, 0, 0, 0] += 0.1
        out, rows = [], []
        for i in range(n):
            tok = int(self.t.argmax(logits))
            out.append(tok)
            if keep:
                rows.append(logits)
            if i + 1 < n:
                logits = self.forward([tok], len(prompt) + i)[0]
        return out, (self.t.stack(rows) if keep else None)


def main():
    ap = argparse.ArgumentParser(description="PyTorch GPT-2 greedy decoding with a KV cache")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--tokens", type=int, default=32, help="decode steps timed per run")
    ap.add_argument("--prompt", type=int, default=8, help="prompt length (ids 0, 1, 2, ...)")
    ap.add_argument("--ids", help="the prompt's ids, comma-separated (instead of --prompt)")
    ap.add_argument("--runs", type=int, default=3, help="timed runs (the best is printed)")
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--ffn", type=int, default=0, help="FFN width (default 4 x dim)")
    ap.add_argument("--vocab", type=int, default=50257)
    ap.add_argument("--context", type=int, default=1024)
    ap.add_argument("--load", metavar="DIR", help="a GPT-2 model folder instead of random weights")
    ap.add_argument("--check", action="store_true", help="cached decoding against a full recompute")
    ap.add_argument("--greedy", type=int, metavar="N", help="print N greedy tokens after the prompt")
    ap.add_argument("--corrupt-cache", action="store_true",
                    help="with --check: nudge one cached key after the prompt (the check must fail)")
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("skip: python3 has no torch (apt-get install python3-torch)")
        return 0
    torch.set_num_threads(args.threads)
    if args.load:
        try:
            cfg, W = load_folder(args.load, torch)
        except (OSError, ValueError, KeyError) as e:
            print("skip: %s: %s" % (args.load, e))
            return 0
        layers, heads, ctx, vocab = cfg["n_layer"], cfg["n_head"], cfg["n_positions"], cfg["vocab_size"]
    else:
        layers, heads, ctx, vocab = args.layers, args.heads, args.context, args.vocab
        W = random_weights(args.dim, layers, vocab, ctx, args.ffn or 4 * args.dim, torch)
    prompt = ([int(v) for v in args.ids.split(",")] if args.ids
              else [i % vocab for i in range(max(args.prompt, 1))])
    if any(not 0 <= i < vocab for i in prompt):
        sys.exit("bench_torch_gpt2_kv.py: an id of --ids is outside the vocabulary (0..%d)" % (vocab - 1))
    with torch.no_grad():
        m = GPT2(torch, W, layers, heads, ctx)
        m.corrupt = args.corrupt_cache
        if args.greedy is not None or args.check:
            n = args.greedy if args.greedy is not None else args.tokens
            n = min(n, ctx - len(prompt) + 1)
            toks, rows = m.greedy(prompt, n, keep=args.check)
            if args.greedy is not None:
                print("tokens " + " ".join(str(t) for t in toks))
            if args.check:
                seq = prompt + toks[:-1]  # the inputs whose last n logits chose toks
                full = m.forward(seq, 0, cache=False)[len(prompt) - 1:]
                err = float((rows - full).abs().max() / full.abs().max())
                same = [int(t) for t in full.argmax(dim=1)] == toks
                print("check rel_err %.3e tokens_equal %d steps %d" % (err, int(same), n))
            return 0
        if len(prompt) + args.tokens > ctx:
            sys.exit("bench_torch_gpt2_kv.py: prompt + tokens is longer than the context %d" % ctx)

        def run():
            logits = m.forward(prompt, 0)[-1]  # the prefill, not timed
            tok = int(torch.argmax(logits))
            t0 = time.perf_counter()
            for i in range(args.tokens):
                logits = m.forward([tok], len(prompt) + i)[0]
                tok = int(torch.argmax(logits))
            return time.perf_counter() - t0

        run()
        best = min(run() for _ in range(max(args.runs, 1)))
    print("tok/s %.3f" % (args.tokens / best))
    return 0


if __name__ == "__main__":
    sys.exit(main())
