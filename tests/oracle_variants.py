#!/usr/bin/python3
"""oracle_variants.py -- the mechanisms of tiny-lm's variants against PyTorch, written from their papers.

  T5's relative bias (Raffel et al. 2020; the bucketing of T5's _relative_position_bucket): a learned
      scalar per head and offset bucket added to each attention score (glassbox adds it after the
      1/sqrt(d_head) scaling, as ALiBi's bias; causal buckets in a decoder);
  linear attention (Katharopoulos et al. 2020, eq. 4-6 and the causal form eq. 8-10): phi(x) = elu(x) + 1,
      V'_i = phi(Q_i) S_i / phi(Q_i) . z_i with S_i = sum_{j<=i} phi(K_j) V_j^T, z_i = sum_{j<=i} phi(K_j),
      computed here as running sums (torch.cumsum), the recurrent form;
  a mixture of experts: Switch (Fedus et al. 2022: top-1, the router's probability as the gate) and
      Mixtral (Jiang et al. 2024: top-2, softmax over the two chosen logits, i.e. the probabilities
      renormalised), with Mixtral's tensor names (block_sparse_moe.gate, experts.N.w1/w2/w3).

Each model is written as a model folder (config.json by hand, model.safetensors through oracle.py's
writer), run through ./glassbox on the reference and the default (fast) kernels, and its logits compared
with the torch ones: max|glassbox - torch| / max|torch| <= 1e-4.  Each mechanism is shown to matter (the
torch logits without it differ by more than 1e-2), and a perturbed weight in a written file must make
the comparison fail (a negative control).  Prints TAP; run from the repository root (tests/t_oracle_variants.sh).
"""
import json
import math
import os
import shutil
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle import Tap, finish, rel_err, run_glassbox, write_safetensors  # noqa: E402  (file I/O only)

torch.set_default_dtype(torch.float64)
THRESHOLD = 1e-4
IDS = [5, 17, 3, 3, 40, 22, 9, 31, 17, 5, 44, 12, 8]


def t5_bucket(rel, bidirectional, num_buckets, max_distance):
    """T5's _relative_position_bucket (rel = key position - query position), in float32 as T5's code."""
    rel = torch.as_tensor(rel)
    ret = torch.zeros_like(rel)
    n = rel
    if bidirectional:
        num_buckets //= 2
        ret = ret + (n > 0).long() * num_buckets
        n = n.abs()
    else:
        n = -torch.min(n, torch.zeros_like(n))
    max_exact = num_buckets // 2
    is_small = n < max_exact
    large = max_exact + (torch.log(n.float() / max_exact) / math.log(max_distance / max_exact)
                         * (num_buckets - max_exact)).long()
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return ret + torch.where(is_small, n, large)


def gelu_tanh(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def layernorm(x, g, b, eps=1e-5):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * g + b


def rmsnorm(x, g, eps=1e-6):
    return x / torch.sqrt((x ** 2).mean(-1, keepdim=True) + eps) * g


def rope(x, theta=10000.0):
    """Rotate-half RoPE of x (heads, T, E) at positions 0..T-1."""
    T, E = x.shape[-2], x.shape[-1]
    inv = theta ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    ang = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]
    c, s = torch.cos(ang), torch.sin(ang)
    a, b = x[..., :E // 2], x[..., E // 2:]
    return torch.cat([a * c - b * s, b * c + a * s], -1)


def phi(x):
    return torch.nn.functional.elu(x) + 1


def attention(q, k, v, kind, relb=None, nb=32, md=128):
    """q (H, T, E), k v (K, T, E), causal. kind: softmax | t5 | linear."""
    H, T, E = q.shape
    rep = H // k.shape[0]
    k, v = k.repeat_interleave(rep, 0), v.repeat_interleave(rep, 0)
    if kind == "linear":
        fq, fk = phi(q), phi(k)
        S = torch.cumsum(fk[:, :, :, None] * v[:, :, None, :], dim=1)   # (H, T, E, E): sum_{j<=i} phi(k_j) v_j^T
        z = torch.cumsum(fk, dim=1)                                     # (H, T, E)
        num = torch.einsum("hte,htef->htf", fq, S)
        den = torch.einsum("hte,hte->ht", fq, z)[..., None]
        return num / den
    s = q @ k.transpose(1, 2) / math.sqrt(E)
    i = torch.arange(T)[:, None]
    j = torch.arange(T)[None, :]
    if kind == "t5":
        b = t5_bucket(j - i, False, nb, md)                             # (T, T)
        s = s + relb[b].permute(2, 0, 1)                                # relb (buckets, H)
    s = s.masked_fill(j > i, float("-inf"))
    return torch.softmax(s, -1) @ v


def moe(x, router_logits, experts, k, renorm):
    """experts: list of callables (T, D) -> (T, D)."""
    p = torch.softmax(router_logits, -1)
    top_p, top_i = torch.topk(p, k, dim=-1)
    if renorm:
        top_p = top_p / top_p.sum(-1, keepdim=True)
    out = torch.zeros_like(x)
    for e, f in enumerate(experts):
        w = (top_p * (top_i == e)).sum(-1, keepdim=True)               # 0 for tokens that did not choose e
        rows = (top_i == e).any(-1)
        if rows.any():
            y = torch.zeros_like(x)
            y[rows] = f(x[rows])
            out = out + w * y
    return out


def gpt2_model(v, W, ids):
    D, H, E, L = v["D"], v["H"], v["E"], v["L"]
    T = len(ids)
    t = {n: torch.from_numpy(a) for n, a in W.items()}
    x = t["wte.weight"][ids]
    if v["position"] == "learned":
        x = x + t["wpe.weight"][:T]
    for n in range(L):
        p = "h.%d." % n
        h = layernorm(x, t[p + "ln_1.weight"], t[p + "ln_1.bias"])
        qkv = h @ t[p + "attn.c_attn.weight"] + t[p + "attn.c_attn.bias"]
        q = qkv[:, :H * E].reshape(T, H, E).transpose(0, 1)
        k = qkv[:, H * E:2 * H * E].reshape(T, H, E).transpose(0, 1)
        vv = qkv[:, 2 * H * E:].reshape(T, H, E).transpose(0, 1)
        kind = "linear" if v.get("attention") == "linear" else "t5" if v["position"] == "t5" else "softmax"
        o = attention(q, k, vv, kind, t.get(p + "attn.relative_attention_bias.weight"), v.get("nb", 32), v.get("md", 128))
        x = x + o.transpose(0, 1).reshape(T, H * E) @ t[p + "attn.c_proj.weight"] + t[p + "attn.c_proj.bias"]
        h = layernorm(x, t[p + "ln_2.weight"], t[p + "ln_2.bias"])

        def ffn(z, q=p):
            return gelu_tanh(z @ t[q + "c_fc.weight"] + t[q + "c_fc.bias"]) @ t[q + "c_proj.weight"] + t[q + "c_proj.bias"]
        if v.get("experts"):
            experts = [lambda z, e=e: ffn(z, p + "mlp.experts.%d." % e) for e in range(v["experts"])]
            x = x + moe(h, h @ t[p + "mlp.router.weight"], experts, v["top_k"], v["renorm"])
        else:
            x = x + ffn(h, p + "mlp.")
    x = layernorm(x, t["ln_f.weight"], t["ln_f.bias"])
    return (x @ t["wte.weight"].t()).numpy()


def mixtral_model(v, W, ids):
    """Mixtral: RMSNorm, RoPE, separate q/k/v/o, block_sparse_moe with SwiGLU experts (w1 gate, w3 up, w2 down)."""
    D, H, K, E, L = v["D"], v["H"], v["K"], v["E"], v["L"]
    T = len(ids)
    t = {n: torch.from_numpy(a) for n, a in W.items()}
    x = t["model.embed_tokens.weight"][ids]
    for n in range(L):
        p = "model.layers.%d." % n
        h = rmsnorm(x, t[p + "input_layernorm.weight"])
        q = (h @ t[p + "self_attn.q_proj.weight"].t()).reshape(T, H, E).transpose(0, 1)
        k = (h @ t[p + "self_attn.k_proj.weight"].t()).reshape(T, K, E).transpose(0, 1)
        vv = (h @ t[p + "self_attn.v_proj.weight"].t()).reshape(T, K, E).transpose(0, 1)
        o = attention(rope(q), rope(k), vv, "softmax")
        x = x + o.transpose(0, 1).reshape(T, H * E) @ t[p + "self_attn.o_proj.weight"].t()
        h = rmsnorm(x, t[p + "post_attention_layernorm.weight"])
        m = p + "block_sparse_moe."

        def expert(z, e):
            q = m + "experts.%d." % e
            g = z @ t[q + "w1.weight"].t()
            return (g * torch.sigmoid(g) * (z @ t[q + "w3.weight"].t())) @ t[q + "w2.weight"].t()
        experts = [lambda z, e=e: expert(z, e) for e in range(v["experts"])]
        x = x + moe(h, h @ t[m + "gate.weight"].t(), experts, v["top_k"], True)
    x = rmsnorm(x, t["model.norm.weight"])
    return (x @ t["lm_head.weight"].t()).numpy()


def gpt2_weights(v, rng):
    D, H, E, F, L, V, C = v["D"], v["H"], v["E"], v["F"], v["L"], v["V"], v["C"]
    W = {}

    def r(name, shape, sd, mean=0.0):
        W[name] = rng.normal(mean, sd, size=shape).astype(np.float32).astype(np.float64)
    r("wte.weight", (V, D), 0.5)
    if v["position"] == "learned":
        r("wpe.weight", (C, D), 0.3)
    for n in range(L):
        p = "h.%d." % n
        r(p + "ln_1.weight", (D,), 0.1, 1.0)
        r(p + "ln_1.bias", (D,), 0.1)
        r(p + "attn.c_attn.weight", (D, 3 * H * E), 0.2)
        r(p + "attn.c_attn.bias", (3 * H * E,), 0.1)
        r(p + "attn.c_proj.weight", (H * E, D), 0.2)
        r(p + "attn.c_proj.bias", (D,), 0.1)
        if v["position"] == "t5":
            r(p + "attn.relative_attention_bias.weight", (v["nb"], H), 1.0)
        r(p + "ln_2.weight", (D,), 0.1, 1.0)
        r(p + "ln_2.bias", (D,), 0.1)
        if v.get("experts"):
            r(p + "mlp.router.weight", (D, v["experts"]), 0.5)
            pre = [p + "mlp.experts.%d." % e for e in range(v["experts"])]
        else:
            pre = [p + "mlp."]
        for q in pre:
            r(q + "c_fc.weight", (D, F), 0.2)
            r(q + "c_fc.bias", (F,), 0.1)
            r(q + "c_proj.weight", (F, D), 0.2)
            r(q + "c_proj.bias", (D,), 0.1)
    r("ln_f.weight", (D,), 0.1, 1.0)
    r("ln_f.bias", (D,), 0.1)
    return W


def mixtral_weights(v, rng):
    D, H, K, E, F, L, V = v["D"], v["H"], v["K"], v["E"], v["F"], v["L"], v["V"]
    W = {}

    def r(name, shape, sd, mean=0.0):
        W[name] = rng.normal(mean, sd, size=shape).astype(np.float32).astype(np.float64)
    r("model.embed_tokens.weight", (V, D), 0.5)
    for n in range(L):
        p = "model.layers.%d." % n
        r(p + "input_layernorm.weight", (D,), 0.1, 1.0)
        r(p + "self_attn.q_proj.weight", (H * E, D), 0.2)
        r(p + "self_attn.k_proj.weight", (K * E, D), 0.2)
        r(p + "self_attn.v_proj.weight", (K * E, D), 0.2)
        r(p + "self_attn.o_proj.weight", (D, H * E), 0.2)
        r(p + "post_attention_layernorm.weight", (D,), 0.1, 1.0)
        m = p + "block_sparse_moe."
        r(m + "gate.weight", (v["experts"], D), 0.5)
        for e in range(v["experts"]):
            q = m + "experts.%d." % e
            r(q + "w1.weight", (F, D), 0.2)
            r(q + "w3.weight", (F, D), 0.2)
            r(q + "w2.weight", (D, F), 0.2)
    r("model.norm.weight", (D,), 0.1, 1.0)
    r("lm_head.weight", (V, D), 0.5)
    return W


def config_of(v):
    g = {"position": v["position"]}
    if v["position"] == "t5":
        g["relative_attention_num_buckets"] = v["nb"]
        g["relative_attention_max_distance"] = v["md"]
    if v.get("attention"):
        g["attention"] = v["attention"]
    if v.get("experts"):
        g.update(num_local_experts=v["experts"], num_experts_per_tok=v["top_k"], norm_topk_prob=v["renorm"])
    if v["family"] == "gpt2":
        return {"model_type": "gpt2", "vocab_size": v["V"], "n_embd": v["D"], "n_layer": v["L"], "n_head": v["H"],
                "n_positions": v["C"], "n_inner": v["F"], "activation_function": "gelu_new", "glassbox": g}
    return {"model_type": "llama", "vocab_size": v["V"], "hidden_size": v["D"], "num_hidden_layers": v["L"],
            "num_attention_heads": v["H"], "num_key_value_heads": v["K"], "intermediate_size": v["F"],
            "max_position_embeddings": v["C"], "rms_norm_eps": 1e-6, "hidden_act": "silu",
            "tie_word_embeddings": False, "glassbox": g}


BASE = dict(family="gpt2", D=32, H=4, E=8, F=24, L=2, V=50, C=32, position="learned")
VARIANTS = [
    # (name, changes, what to switch off to show it matters)
    ("t5-bias", dict(position="t5", nb=8, md=10), "the relative bias"),
    ("t5-bias-32", dict(position="t5", nb=32, md=128), "the relative bias"),
    ("linear-attention", dict(attention="linear"), "elu + 1 (softmax instead)"),
    ("moe-switch-top1", dict(experts=4, top_k=1, renorm=False, F=12), "the routing (expert 0 for all)"),
    ("moe-top2-renormalised", dict(experts=4, top_k=2, renorm=True, F=12), "the routing (expert 0 for all)"),
    ("mixtral", dict(family="llama", K=2, experts=4, top_k=2, renorm=True, F=16, position="rope"),
     "the routing (expert 0 for all)"),
]


def variant(name, changes):
    v = dict(BASE)
    v.update(changes)
    v["name"] = name
    return v


def torch_logits(v, W, ids):
    return (gpt2_model if v["family"] == "gpt2" else mixtral_model)(v, W, ids)


def without(v, W):
    """The same model with its distinguishing mechanism switched off (to show it matters)."""
    v2, W2 = dict(v), dict(W)
    if v["position"] == "t5":
        for n in W2:
            if "relative_attention_bias" in n:
                W2[n] = np.zeros_like(W2[n])
    elif v.get("attention") == "linear":
        v2["attention"] = None
    else:
        for n in W2:
            if n.endswith("router.weight") or n.endswith("moe.gate.weight"):
                W2[n] = np.zeros_like(W2[n])   # equal logits: the lowest index wins every tie
    return v2, W2


def main(argv):
    binary = "./glassbox"
    if "--bin" in argv:
        binary = argv[argv.index("--bin") + 1]
    keep = "--keep" in argv
    tap = Tap(4 + 4 * len(VARIANTS))
    # the bucketing, checked by hand (causal, 32 buckets, max distance 128, and bidirectional)
    got = t5_bucket(torch.tensor([0, -1, -15, -16, -20, -32, -64, -127, -1000, 3]), False, 32, 128).tolist()
    tap.ok(got == [0, 1, 15, 16, 17, 21, 26, 31, 31, 0], "oracle: T5's causal buckets by hand", got)
    got = t5_bucket(torch.tensor([0, 1, -1, 7, -8, 16, -16, 127]), True, 32, 128).tolist()
    tap.ok(got == [0, 17, 1, 23, 8, 26, 10, 31], "oracle: T5's bidirectional buckets by hand", got)
    # the recurrent linear attention against its quadratic form (the paper's eq. 4-6, masked)
    g = torch.Generator().manual_seed(3)
    q, k, vv = (torch.randn(2, 9, 5, generator=g) for _ in range(3))
    a = phi(q) @ phi(k).transpose(1, 2)
    a = a.masked_fill(torch.arange(9)[None, :] > torch.arange(9)[:, None], 0)
    quad = (a / a.sum(-1, keepdim=True)) @ vv
    tap.ok(torch.allclose(attention(q, k, vv, "linear"), quad, atol=1e-12),
           "oracle: causal linear attention as running sums equals its quadratic form")
    # the mixture's routing on a hand case: probabilities (0.5, 0.3, 0.2): top-2 renormalised 0.625/0.375
    lg = torch.log(torch.tensor([[0.5, 0.3, 0.2]]))
    x = torch.ones(1, 2)
    fs = [lambda z: z * 1.0, lambda z: z * 10.0, lambda z: z * 100.0]
    tap.ok(torch.allclose(moe(x, lg, fs, 2, True), torch.tensor([[0.625 + 3.75] * 2])) and
           torch.allclose(moe(x, lg, fs, 1, False), torch.tensor([[0.5] * 2])),
           "oracle: the routing by hand (top-2 renormalised 0.625, 0.375; Switch top-1 gate 0.5)")
    tmp = tempfile.mkdtemp(prefix="gb_oracle_variants.")
    for i, (name, changes, what) in enumerate(VARIANTS):
        v = variant(name, changes)
        rng = np.random.default_rng(100 + i)
        W = (gpt2_weights if v["family"] == "gpt2" else mixtral_weights)(v, rng)
        folder = os.path.join(tmp, name)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(config_of(v), f, indent=2)
        write_safetensors(os.path.join(folder, "model.safetensors"), W)
        want = torch_logits(v, W, IDS)
        v2, W2 = without(v, W)
        moved = rel_err(torch_logits(v2, W2, IDS), want)
        tap.ok(moved > 1e-2, "%s: %s matters (logits move by %.3g without it)" % (name, what, moved))
        for kern in ("ref", "fast"):
            got, err = run_glassbox(binary, folder, {"ids": IDS}, kern, os.path.join(tmp, name + "-" + kern + ".npy"))
            e = rel_err(got, want) if got is not None else float("inf")
            tap.ok(got is not None and e <= THRESHOLD,
                   "%s: glassbox (%s kernels) vs torch from the paper: logits relative error %.2g <= %g"
                   % (name, kern, e, THRESHOLD), err)
        # a negative control on each: one weight of the mechanism perturbed in the file must be seen
        W3 = dict(W)
        key = next(n for pat in ("relative_attention_bias", "router", "moe.gate", "c_attn") for n in W3 if pat in n)
        W3[key] = W3[key].copy()
        W3[key].flat[1] += 0.5
        nfold = folder + "-perturbed"
        os.makedirs(nfold, exist_ok=True)
        shutil.copy(os.path.join(folder, "config.json"), nfold)
        write_safetensors(os.path.join(nfold, "model.safetensors"), W3)
        got, err = run_glassbox(binary, nfold, {"ids": IDS}, "ref", os.path.join(tmp, name + "-neg.npy"))
        e = rel_err(got, want) if got is not None else 0
        tap.ok(got is not None and e > THRESHOLD,
               "%s: negative control: %s perturbed in the file, the comparison fails (%.2g)" % (name, key, e), err)
    return finish(tap, tmp, keep)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
