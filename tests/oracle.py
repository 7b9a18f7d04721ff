#!/usr/bin/python3
"""oracle.py -- an independent check of glassbox's logits against PyTorch.

Written from model/README.md alone (never from the C code): it builds small random models of each
family, writes them as model folders (config.json + model.safetensors, the safetensors file written
by hand), runs the forward pass in float64 torch exactly as the README states, and compares the
logits with what `./glassbox` dumps, for the reference kernels (GLASSBOX_KERNELS=ref) and for the
default (fast) kernels.  Error = max|glassbox - torch| / max|torch|, must be <= 1e-4.

Longer than 800 lines on purpose: it is one reading of the whole spec (every family, norm,
position and activation), and splitting it would invite sharing code with what it checks.

Before trusting itself it checks its own torch side: components against hand-computed values, a
second, loop-by-loop numpy implementation of the same spec, softmax rows, RoPE's relative-position
property, the safetensors writer, and that every variant's distinguishing option really moves the
logits (so a glassbox that ignored the option would fail).  A negative control perturbs one weight
in a written file and requires the comparison to fail.

Last, the PyTorch peer of `bench decode` (tools/bench_torch_gpt2_kv.py): its KV-cached decoding
against its own full recompute (and a nudged cache caught), and its greedy tokens on a folder
`glassbox init` wrote against glassbox's.

Prints TAP (run by tests/t_oracle.sh).  Run from the repository root.
Options: --only SUBSTR (variants whose name contains SUBSTR), --keep (keep tests/tmp/oracle),
         --bin PATH (glassbox binary, default ./glassbox), -v (print more diagnostics).
"""
import copy
import json
import math
import os
import shutil
import struct
import subprocess
import sys

import numpy as np
import torch

torch.set_num_threads(1)
torch.set_default_dtype(torch.float64)

THRESHOLD = 1e-4
TMP = os.path.join("tests", "tmp", "oracle")
IDS = [3, 1, 4, 1, 5, 9, 2, 6]

# --------------------------------------------------------------------------------------------
# config.json -> resolved architecture (the README's tables, defaults included)
# --------------------------------------------------------------------------------------------

ACT_NAMES = {"relu": "relu", "gelu": "gelu", "gelu_new": "gelu_tanh", "gelu_tanh": "gelu_tanh",
             "silu": "silu", "swiglu": "swiglu"}


def resolve(cfg):
    """Everything the forward pass needs, from a config.json dict, per model/README.md."""
    g = cfg.get("glassbox", {}) or {}
    mt = cfg["model_type"]
    a = {}
    if mt == "gpt2":
        a["fam"] = "gpt2"
        a["D"] = cfg["n_embd"]
        a["L"] = cfg["n_layer"]
        a["H"] = cfg["n_head"]
        a["K"] = g.get("n_kv_head", a["H"])
        a["E"] = g.get("head_dim", a["D"] // a["H"])
        a["F"] = cfg.get("n_inner") or 4 * a["D"]
        a["C"] = cfg["n_positions"]
        a["eps"] = cfg.get("layer_norm_epsilon", 1e-5)
        a["act"] = ACT_NAMES[cfg.get("activation_function", "gelu_new")]
        a["tied"] = cfg.get("tie_word_embeddings", True)
        a["theta"] = g.get("rope_theta", 10000.0)
        a["scale"] = g.get("scale_embedding", False)
        d = dict(norm="layernorm", pos="pre", position="learned", bias=True)
    elif mt == "llama":
        a["fam"] = "llama"
        a["D"] = cfg["hidden_size"]
        a["L"] = cfg["num_hidden_layers"]
        a["H"] = cfg["num_attention_heads"]
        a["K"] = cfg.get("num_key_value_heads") or a["H"]
        a["E"] = cfg.get("head_dim") or a["D"] // a["H"]
        a["F"] = cfg["intermediate_size"]
        a["C"] = cfg["max_position_embeddings"]
        a["eps"] = cfg.get("rms_norm_eps", 1e-6)
        assert cfg.get("hidden_act", "silu") == "silu"
        a["act"] = "swiglu"
        a["tied"] = cfg.get("tie_word_embeddings", False)
        a["theta"] = cfg.get("rope_theta", 10000.0)
        a["scale"] = g.get("scale_embedding", False)
        d = dict(norm="rmsnorm", pos="pre", position="rope", bias=cfg.get("attention_bias", False),
                 ffn_bias=cfg.get("mlp_bias", False))
    elif mt == "glassbox-encdec":
        a["fam"] = "encdec"
        a["D"] = cfg["d_model"]
        a["Le"] = cfg["encoder_layers"]
        a["L"] = cfg["decoder_layers"]
        a["H"] = cfg["attention_heads"]
        a["K"] = g.get("n_kv_head", a["H"])
        a["E"] = g.get("head_dim", a["D"] // a["H"])
        a["F"] = cfg["ffn_dim"]
        a["C"] = cfg["max_position_embeddings"]
        a["eps"] = g.get("norm_eps", 1e-5)
        a["act"] = ACT_NAMES[cfg["activation_function"]]
        a["tied"] = cfg.get("tie_word_embeddings", True)
        a["theta"] = g.get("rope_theta", 10000.0)
        a["scale"] = cfg.get("scale_embedding", True)
        d = dict(norm="layernorm", pos="post", position="sinusoidal", bias=True)
    else:
        raise ValueError(mt)
    a["norm"] = g.get("norm", d["norm"])
    a["pos"] = g.get("norm_position", d["pos"])
    # model/README.md: in every family the default is a final norm with pre-norm only.
    a["final"] = g.get("final_norm", a["pos"] == "pre")
    a["position"] = g.get("position", d["position"])
    a["pairs"] = g.get("rope_pairing", "half")
    if "activation" in g:
        a["act"] = ACT_NAMES[g["activation"]]
    a["bias"] = g.get("bias", d["bias"])
    a["ffn_bias"] = g.get("ffn_bias", g.get("bias", d.get("ffn_bias", d["bias"])))
    a["norm_bias"] = g.get("norm_bias", True) and a["norm"] == "layernorm"
    a["window"] = g.get("window", 0)
    a["textbook"] = g.get("textbook_layernorm", False)
    a["V"] = cfg["vocab_size"]
    a["pad"] = cfg.get("pad_token_id")
    a["rope_scaling"] = cfg.get("rope_scaling")
    return a


def rope_theta_f(a, f, E):
    """theta_f of RoPE pair f, per model/README.md (rope_scaling: linear or llama3)."""
    th = float(a["theta"]) ** (-2.0 * f / E)
    rs = a.get("rope_scaling")
    if not rs:
        return th
    kind = rs.get("rope_type", rs.get("type"))
    if kind == "linear":
        return th / rs["factor"]
    assert kind == "llama3", kind
    lam = 2 * math.pi / th
    C, lo, hi = rs["original_max_position_embeddings"], rs["low_freq_factor"], rs["high_freq_factor"]
    if lam < C / hi:
        return th
    if lam > C / lo:
        return th / rs["factor"]
    s = (C / lam - lo) / (hi - lo)
    return (1 - s) * th / rs["factor"] + s * th


# --------------------------------------------------------------------------------------------
# tensor names and shapes per family (model/README.md, "Tensor names and layouts")
# --------------------------------------------------------------------------------------------

def layout(a, prefix=""):
    """Ordered list of (name, shape, kind); kind picks the random initialisation."""
    D, H, K, E, F, V, C = a["D"], a["H"], a["K"], a["E"], a["F"], a["V"], a["C"]
    gated = a["act"] == "swiglu"
    out = []

    def t(name, shape, kind):
        out.append((prefix + name, tuple(shape), kind))

    def norm(name):
        t(name + ".weight", (D,), "gain")
        if a["norm_bias"]:
            t(name + ".bias", (D,), "nbias")

    if a["fam"] == "gpt2":
        t("wte.weight", (V, D), "emb")
        if a["position"] == "learned":
            t("wpe.weight", (C, D), "posemb")
        for n in range(a["L"]):
            p = "h.%d." % n
            norm(p + "ln_1")
            t(p + "attn.c_attn.weight", (D, (H + 2 * K) * E), "w")
            if a["bias"]:
                t(p + "attn.c_attn.bias", ((H + 2 * K) * E,), "b")
            t(p + "attn.c_proj.weight", (H * E, D), "w")
            if a["bias"]:
                t(p + "attn.c_proj.bias", (D,), "b")
            norm(p + "ln_2")
            t(p + "mlp.c_fc.weight", (D, 2 * F if gated else F), "wfc")
            if a["ffn_bias"]:
                t(p + "mlp.c_fc.bias", (2 * F if gated else F,), "bfc")
            t(p + "mlp.c_proj.weight", (F, D), "wd")
            if a["ffn_bias"]:
                t(p + "mlp.c_proj.bias", (D,), "b")
        if a["final"]:
            norm("ln_f")
        if not a["tied"]:
            t("lm_head.weight", (V, D), "emb")
    elif a["fam"] == "llama":
        t("model.embed_tokens.weight", (V, D), "emb")
        if a["position"] == "learned":
            t("model.embed_positions.weight", (C, D), "posemb")
        for n in range(a["L"]):
            p = "model.layers.%d." % n
            norm(p + "input_layernorm")
            for nm, o, i in (("q_proj", H * E, D), ("k_proj", K * E, D), ("v_proj", K * E, D),
                             ("o_proj", D, H * E)):
                t(p + "self_attn.%s.weight" % nm, (o, i), "w")
                if a["bias"]:
                    t(p + "self_attn.%s.bias" % nm, (o,), "b")
            norm(p + "post_attention_layernorm")
            if gated:
                t(p + "mlp.gate_proj.weight", (F, D), "wfc")
                if a["ffn_bias"]:
                    t(p + "mlp.gate_proj.bias", (F,), "bfc")
            t(p + "mlp.up_proj.weight", (F, D), "wfc")
            if a["ffn_bias"]:
                t(p + "mlp.up_proj.bias", (F,), "bfc")
            t(p + "mlp.down_proj.weight", (D, F), "wd")
            if a["ffn_bias"]:
                t(p + "mlp.down_proj.bias", (D,), "b")
        if a["final"]:
            norm("model.norm")
        if not a["tied"]:
            t("lm_head.weight", (V, D), "emb")
    else:
        t("model.shared.weight", (V, D), "emb")
        for S, nl in (("encoder", a["Le"]), ("decoder", a["L"])):
            if a["position"] == "learned":
                t("model.%s.embed_positions.weight" % S, (C, D), "posemb")
            for n in range(nl):
                p = "model.%s.layers.%d." % (S, n)
                atts = ["self_attn"] + (["encoder_attn"] if S == "decoder" else [])
                for at in atts:
                    for nm, o, i in (("q_proj", H * E, D), ("k_proj", K * E, D),
                                     ("v_proj", K * E, D), ("out_proj", D, H * E)):
                        t(p + "%s.%s.weight" % (at, nm), (o, i), "w")
                        if a["bias"]:
                            t(p + "%s.%s.bias" % (at, nm), (o,), "b")
                    norm(p + at + "_layer_norm")
                t(p + "fc1.weight", (2 * F if gated else F, D), "wfc")
                if a["ffn_bias"]:
                    t(p + "fc1.bias", (2 * F if gated else F,), "bfc")
                t(p + "fc2.weight", (D, F), "wd")
                if a["ffn_bias"]:
                    t(p + "fc2.bias", (D,), "b")
                norm(p + "final_layer_norm")
            if a["final"]:
                norm("model.%s.layer_norm" % S)
        if not a["tied"]:
            t("lm_head.weight", (V, D), "emb")
    return out


def make_weights(a, seed, prefix="", init=None):
    """Random weights, rounded to float32 (what the file holds), kept as float64 numpy arrays."""
    std = {"emb": 0.5, "posemb": 0.3, "w": 0.2, "wfc": 0.2, "wd": 0.2, "b": 0.1, "bfc": 0.1,
           "gain": 0.1, "nbias": 0.1}
    mean = {}
    for k, x in (init or {}).items():
        if k.endswith("_mean"):
            mean[k[:-5]] = x
        else:
            std[k] = x
    rng = np.random.default_rng(seed)
    w = {}
    for name, shape, kind in layout(a, prefix):
        v = rng.normal(mean.get(kind, 0.0), std[kind], size=shape)
        if kind == "gain":
            v = 1.0 + v
        w[name] = v.astype(np.float32).astype(np.float64)
    return w


# --------------------------------------------------------------------------------------------
# safetensors, written and read by hand
# --------------------------------------------------------------------------------------------

def _encode(arr, dtype):
    t = torch.from_numpy(np.ascontiguousarray(arr, dtype=np.float32))
    if dtype == "F32":
        return t.numpy().astype("<f4").tobytes()
    if dtype == "F16":
        return t.to(torch.float16).numpy().astype("<f2").tobytes()
    if dtype == "BF16":
        return t.to(torch.bfloat16).view(torch.int16).numpy().astype("<i2").tobytes()
    raise ValueError(dtype)


def stored_value(arr, dtype):
    """The value the file holds for arr written as dtype (float64)."""
    t = torch.from_numpy(np.ascontiguousarray(arr, dtype=np.float32))
    if dtype == "F16":
        t = t.to(torch.float16)
    elif dtype == "BF16":
        t = t.to(torch.bfloat16)
    return t.to(torch.float64).numpy()


def write_safetensors(path, tensors, dtypes=None):
    """tensors: ordered dict name -> array.  Returns {name: (absolute byte offset, dtype)}."""
    dtypes = dtypes or {}
    header = {"__metadata__": {"format": "pt", "writer": "glassbox tests/oracle.py"}}
    blobs, off = [], 0
    for name, arr in tensors.items():
        dt = dtypes.get(name, "F32")
        b = _encode(arr, dt)
        header[name] = {"dtype": dt, "shape": list(arr.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    hj = json.dumps(header, separators=(",", ":")).encode()
    hj += b" " * ((-len(hj)) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(hj)))
        f.write(hj)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)
    base = 8 + len(hj)
    return {n: (base + header[n]["data_offsets"][0], header[n]["dtype"]) for n in tensors}


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode())
    data = raw[8 + n:]
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b0, b1 = e["data_offsets"]
        buf = data[b0:b1]
        if e["dtype"] == "F32":
            v = np.frombuffer(buf, "<f4").astype(np.float64)
        elif e["dtype"] == "F16":
            v = np.frombuffer(buf, "<f2").astype(np.float64)
        elif e["dtype"] == "BF16":
            v = (np.frombuffer(buf, "<u2").astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        else:
            raise ValueError(e["dtype"])
        out[name] = v.reshape(e["shape"])
    return out, n


# --------------------------------------------------------------------------------------------
# the forward pass in torch, float64, vectorised (model/README.md "The forward pass, exactly")
# --------------------------------------------------------------------------------------------

def gelu_exact(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def silu(x):
    return x * torch.sigmoid(x)


def act_fn(name, x):
    return {"relu": torch.relu, "gelu": gelu_exact, "gelu_tanh": gelu_tanh, "silu": silu}[name](x)


def t_norm(a, x, g, b):
    if a["norm"] == "layernorm":
        mu = x.mean(-1, keepdim=True)
        var = ((x - mu) ** 2).mean(-1, keepdim=True)
        if a["textbook"]:
            y = (x - mu) / (var.sqrt() + a["eps"])
        else:
            y = (x - mu) / (var + a["eps"]).sqrt()
        y = y * g
        if b is not None:
            y = y + b
        return y
    return x / ((x ** 2).mean(-1, keepdim=True) + a["eps"]).sqrt() * g


def sinusoidal(T, D):
    pe = torch.zeros(T, D)
    i = torch.arange(T, dtype=torch.float64)[:, None]
    k2 = torch.arange(0, D, 2, dtype=torch.float64)[None, :]
    ang = i / torch.pow(torch.tensor(10000.0), k2 / D)
    pe[:, 0::2] = torch.sin(ang)
    pe[:, 1::2] = torch.cos(ang)[:, : D // 2]
    return pe


def alibi_slopes(H):
    def pow2(n):
        start = 2.0 ** (-(2.0 ** -(math.log2(n) - 3)))
        return [start * start ** i for i in range(n)]
    if math.log2(H).is_integer():
        return pow2(H)
    c = 2 ** math.floor(math.log2(H))
    return pow2(c) + alibi_slopes(2 * c)[0::2][: H - c]


def t_rope(x, theta, pairs="half", a=None):
    """x (heads, T, E): RoPE at positions 0..T-1; pair f is (f, f + E/2) rotating half, or
    (2f, 2f + 1) adjacent (llama2.c, Meta). With a (the resolved config), its rope_scaling too."""
    _, T, E = x.shape
    h = E // 2
    f = torch.arange(h, dtype=torch.float64)
    inv = torch.pow(torch.tensor(float(theta)), -2.0 * f / E)
    if a is not None and a.get("rope_scaling"):
        inv = torch.tensor([rope_theta_f(a, i, E) for i in range(h)], dtype=torch.float64)
    ang = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]  # (T, E/2)
    c, s = torch.cos(ang), torch.sin(ang)
    if pairs == "adjacent":
        a_, b_ = x[..., 0::2], x[..., 1::2]
        return torch.stack([a_ * c - b_ * s, b_ * c + a_ * s], dim=-1).reshape(x.shape)
    a_, b_ = x[..., :h], x[..., h:]
    return torch.cat([a_ * c - b_ * s, b_ * c + a_ * s], dim=-1)


def masked_softmax(m, allowed):
    m = m.masked_fill(~allowed, float("-inf"))
    row_any = allowed.any(-1, keepdim=True)
    m = torch.where(row_any, m, torch.zeros_like(m))
    w = torch.softmax(m, dim=-1)
    return torch.where(row_any, w, torch.zeros_like(w))


def t_attention(a, xq, xkv, P, allowed, rope, alibi, trace=None):
    """P: dict with Wq (D, H*E) etc in (in, out) orientation, biases or None."""
    H, K, E = a["H"], a["K"], a["E"]
    Tq, Tk = xq.shape[0], xkv.shape[0]

    def lin(x, W, b):
        y = x @ W
        return y + b if b is not None else y

    q = lin(xq, P["Wq"], P["bq"]).reshape(Tq, H, E).transpose(0, 1)
    k = lin(xkv, P["Wk"], P["bk"]).reshape(Tk, K, E).transpose(0, 1)
    v = lin(xkv, P["Wv"], P["bv"]).reshape(Tk, K, E).transpose(0, 1)
    if rope:
        q, k = t_rope(q, a["theta"], a["pairs"], a), t_rope(k, a["theta"], a["pairs"], a)
    rep = H // K
    kk, vv = k.repeat_interleave(rep, dim=0), v.repeat_interleave(rep, dim=0)
    scores = q @ kk.transpose(1, 2)
    masked = scores / math.sqrt(E)
    if alibi:
        m = torch.tensor(alibi_slopes(H))[:, None, None]
        i = torch.arange(Tq, dtype=torch.float64)[:, None]
        j = torch.arange(Tk, dtype=torch.float64)[None, :]
        masked = masked + m * (j - i)[None]
    w = masked_softmax(masked, allowed[None].expand(H, Tq, Tk))
    if trace is not None:
        trace.append((w, allowed))
    ho = w @ vv
    merged = ho.transpose(0, 1).reshape(Tq, H * E)
    return lin(merged, P["Wo"], P["bo"])


def unpack(a, W, prefix=""):
    """Per-layer parameters in (in, out) orientation, from the family's tensors."""
    T = {k: torch.from_numpy(v) for k, v in W.items()}
    H, K, E, F = a["H"], a["K"], a["E"], a["F"]
    gated = a["act"] == "swiglu"
    get = lambda n: T.get(prefix + n)

    def nrm(n):
        return (get(n + ".weight"), get(n + ".bias") if a["norm_bias"] else None)

    def lin_t(n):  # nn.Linear (out, in) -> (in, out)
        w = get(n + ".weight")
        return w.t(), get(n + ".bias") if a["bias"] else None

    def attn_linear(p):
        r = {}
        r["Wq"], r["bq"] = lin_t(p + "q_proj")
        r["Wk"], r["bk"] = lin_t(p + "k_proj")
        r["Wv"], r["bv"] = lin_t(p + "v_proj")
        r["Wo"], r["bo"] = lin_t(p + ("o_proj" if a["fam"] == "llama" else "out_proj"))
        return r

    M = {"layers": [], "enc_layers": []}
    if a["fam"] == "gpt2":
        M["emb"] = get("wte.weight")
        M["pos"] = get("wpe.weight")
        for n in range(a["L"]):
            p = "h.%d." % n
            L = {"n1": nrm(p + "ln_1"), "n2": nrm(p + "ln_2")}
            W = get(p + "attn.c_attn.weight")
            b = get(p + "attn.c_attn.bias") if a["bias"] else None
            q1, k1 = H * E, H * E + K * E
            A = {"Wq": W[:, :q1], "Wk": W[:, q1:k1], "Wv": W[:, k1:],
                 "bq": None if b is None else b[:q1], "bk": None if b is None else b[q1:k1],
                 "bv": None if b is None else b[k1:],
                 "Wo": get(p + "attn.c_proj.weight"),
                 "bo": get(p + "attn.c_proj.bias") if a["bias"] else None}
            L["attn"] = A
            W1 = get(p + "mlp.c_fc.weight")
            b1 = get(p + "mlp.c_fc.bias") if a["ffn_bias"] else None
            if gated:
                L["ffn"] = {"Wg": W1[:, :F], "Wu": W1[:, F:],
                            "bg": None if b1 is None else b1[:F], "bu": None if b1 is None else b1[F:]}
            else:
                L["ffn"] = {"Wu": W1, "bu": b1}
            L["ffn"]["Wd"] = get(p + "mlp.c_proj.weight")
            L["ffn"]["bd"] = get(p + "mlp.c_proj.bias") if a["ffn_bias"] else None
            M["layers"].append(L)
        M["final"] = nrm("ln_f") if a["final"] else None
    elif a["fam"] == "llama":
        M["emb"] = get("model.embed_tokens.weight")
        M["pos"] = get("model.embed_positions.weight")
        for n in range(a["L"]):
            p = "model.layers.%d." % n
            L = {"n1": nrm(p + "input_layernorm"), "n2": nrm(p + "post_attention_layernorm"),
                 "attn": attn_linear(p + "self_attn.")}
            fb = (lambda n: get(n + ".bias")) if a["ffn_bias"] else (lambda n: None)
            ffn = {"Wu": get(p + "mlp.up_proj.weight").t(), "bu": fb(p + "mlp.up_proj"),
                   "Wd": get(p + "mlp.down_proj.weight").t(), "bd": fb(p + "mlp.down_proj")}
            if gated:
                ffn["Wg"], ffn["bg"] = get(p + "mlp.gate_proj.weight").t(), fb(p + "mlp.gate_proj")
            L["ffn"] = ffn
            M["layers"].append(L)
        M["final"] = nrm("model.norm") if a["final"] else None
    else:
        M["emb"] = get("model.shared.weight")
        for S, key, nl in (("encoder", "enc_layers", a["Le"]), ("decoder", "layers", a["L"])):
            M[S + "_pos"] = get("model.%s.embed_positions.weight" % S)
            for n in range(nl):
                p = "model.%s.layers.%d." % (S, n)
                L = {"attn": attn_linear(p + "self_attn."), "n1": nrm(p + "self_attn_layer_norm")}
                if S == "decoder":
                    L["cross"] = attn_linear(p + "encoder_attn.")
                    L["n2"] = nrm(p + "encoder_attn_layer_norm")
                    L["n3"] = nrm(p + "final_layer_norm")
                else:
                    L["n2"] = nrm(p + "final_layer_norm")
                W1 = get(p + "fc1.weight")
                b1 = get(p + "fc1.bias") if a["ffn_bias"] else None
                if gated:
                    ffn = {"Wg": W1[:F].t(), "Wu": W1[F:].t(),
                           "bg": None if b1 is None else b1[:F], "bu": None if b1 is None else b1[F:]}
                else:
                    ffn = {"Wu": W1.t(), "bu": b1}
                ffn["Wd"] = get(p + "fc2.weight").t()
                ffn["bd"] = get(p + "fc2.bias") if a["ffn_bias"] else None
                L["ffn"] = ffn
                M[key].append(L)
            M[S + "_final"] = nrm("model.%s.layer_norm" % S) if a["final"] else None
    M["out"] = M["emb"] if a["tied"] else get("lm_head.weight")
    return M


def t_ffn(a, x, P):
    def lin(x, W, b):
        y = x @ W
        return y + b if b is not None else y
    if a["act"] == "swiglu":
        h = silu(lin(x, P["Wg"], P["bg"])) * lin(x, P["Wu"], P["bu"])
    else:
        h = act_fn(a["act"], lin(x, P["Wu"], P["bu"]))
    return lin(h, P["Wd"], P["bd"])


def self_mask(a, ids, causal):
    T = len(ids)
    i = torch.arange(T)[:, None]
    j = torch.arange(T)[None, :]
    allowed = torch.ones(T, T, dtype=torch.bool)
    if causal:
        allowed &= j <= i
    if a["window"]:
        allowed &= (i - j).abs() < a["window"]
    if a["pad"] is not None:
        allowed &= torch.tensor([t != a["pad"] for t in ids])[None, :]
    return allowed


def embed(a, M, ids, pos_table):
    x = M["emb"][torch.tensor(ids)]
    if a["scale"]:
        x = x * math.sqrt(a["D"])
    T = len(ids)
    if a["position"] == "sinusoidal":
        x = x + sinusoidal(T, a["D"])
    elif a["position"] == "learned":
        x = x + pos_table[:T]
    return x


def t_stack(a, x, layers, ids, causal, enc=None, src_ids=None, trace=None):
    rope = a["position"] == "rope"
    alibi = a["position"] == "alibi"
    allowed = self_mask(a, ids, causal)
    if enc is not None:
        cross_allowed = torch.ones(len(ids), len(src_ids), dtype=torch.bool)
        if a["pad"] is not None:
            cross_allowed &= torch.tensor([t != a["pad"] for t in src_ids])[None, :]
    N = lambda x, n: t_norm(a, x, n[0], n[1])
    for L in layers:
        A = lambda y: t_attention(a, y, y, L["attn"], allowed, rope, alibi, trace)
        if a["pos"] == "pre":
            h = x + A(N(x, L["n1"]))
            if enc is not None:
                c = h + t_attention(a, N(h, L["n2"]), enc, L["cross"], cross_allowed, False, False, trace)
                x = c + t_ffn(a, N(c, L["n3"]), L["ffn"])
            else:
                x = h + t_ffn(a, N(h, L["n2"]), L["ffn"])
        else:
            h = N(x + A(x), L["n1"])
            if enc is not None:
                c = N(h + t_attention(a, h, enc, L["cross"], cross_allowed, False, False, trace), L["n2"])
                x = N(c + t_ffn(a, c, L["ffn"]), L["n3"])
            else:
                x = N(h + t_ffn(a, h, L["ffn"]), L["n2"])
    return x


def torch_logits(a, W, ids, tgt=None, prefix="", trace=None):
    """Logits (T, V) as float64 numpy: decoder-only on ids, or encdec's decoder on tgt."""
    M = unpack(a, W, prefix)
    with torch.no_grad():
        if a["fam"] != "encdec":
            x = embed(a, M, ids, M["pos"])
            x = t_stack(a, x, M["layers"], ids, True, trace=trace)
            if M["final"] is not None:
                x = t_norm(a, x, *M["final"])
        else:
            e = embed(a, M, ids, M["encoder_pos"])
            e = t_stack(a, e, M["enc_layers"], ids, False, trace=trace)
            if M["encoder_final"] is not None:
                e = t_norm(a, e, *M["encoder_final"])
            x = embed(a, M, tgt, M["decoder_pos"])
            x = t_stack(a, x, M["layers"], tgt, True, enc=e, src_ids=ids, trace=trace)
            if M["decoder_final"] is not None:
                x = t_norm(a, x, *M["decoder_final"])
        return (x @ M["out"].t()).numpy()


# --------------------------------------------------------------------------------------------
# a second implementation: explicit loops over tokens, heads, keys (numpy, float64), written
# independently of the torch one so that reshape/transposition slips show up
# --------------------------------------------------------------------------------------------

def loop_logits(a, W, ids, tgt=None, prefix=""):
    D, H, K, E, F = a["D"], a["H"], a["K"], a["E"], a["F"]
    fam = a["fam"]
    w = lambda n: W[prefix + n]
    has = lambda n: (prefix + n) in W

    def norm(v, name):
        g = w(name + ".weight")
        if a["norm"] == "layernorm":
            mu = sum(v) / D
            var = sum((t - mu) ** 2 for t in v) / D
            den = (math.sqrt(var) + a["eps"]) if a["textbook"] else math.sqrt(var + a["eps"])
            out = np.array([(v[d] - mu) / den * g[d] for d in range(D)])
            if a["norm_bias"]:
                out = out + w(name + ".bias")
            return out
        ms = sum(t * t for t in v) / D
        return np.array([v[d] / math.sqrt(ms + a["eps"]) * g[d] for d in range(D)])

    def act(z):
        if a["act"] == "relu":
            return max(z, 0.0)
        if a["act"] == "gelu":
            return z * 0.5 * (1 + math.erf(z / math.sqrt(2)))
        if a["act"] == "silu":
            return z / (1 + math.exp(-z))
        return 0.5 * z * (1 + math.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z ** 3)))

    def linear(x, name, n_out, col0=0, bias=True):
        """Output features col0 .. col0+n_out-1 of the family's linear layer `name`."""
        Wt = w(name + ".weight")
        y = np.zeros(n_out)
        for o in range(n_out):
            if fam == "gpt2":
                y[o] = float(np.dot(x, Wt[:, col0 + o]))
            else:
                y[o] = float(np.dot(Wt[col0 + o, :], x))
            if (a["ffn_bias"] if bias == "ffn" else a["bias"] and bias):
                y[o] += w(name + ".bias")[col0 + o]
        return y

    def rope(vec, i):
        out = vec.copy()
        for f in range(E // 2):
            th = rope_theta_f(a, f, E)
            c, s = math.cos(i * th), math.sin(i * th)
            ia, ib = (2 * f, 2 * f + 1) if a["pairs"] == "adjacent" else (f, f + E // 2)
            x0, x1 = vec[ia], vec[ib]
            out[ia] = x0 * c - x1 * s
            out[ib] = x1 * c + x0 * s
        return out

    slopes = alibi_slopes(H)

    def attention(xs_q, xs_kv, p, q_ids, k_ids, causal, self_attn):
        """p: prefix of the attention block; returns the list of output vectors."""
        Tq, Tk = len(xs_q), len(xs_kv)
        if fam == "gpt2":
            Q = [linear(x, p + "c_attn", H * E, 0) for x in xs_q]
            Kx = [linear(x, p + "c_attn", K * E, H * E) for x in xs_kv]
            Vx = [linear(x, p + "c_attn", K * E, H * E + K * E) for x in xs_kv]
        else:
            Q = [linear(x, p + "q_proj", H * E) for x in xs_q]
            Kx = [linear(x, p + "k_proj", K * E) for x in xs_kv]
            Vx = [linear(x, p + "v_proj", K * E) for x in xs_kv]
        outs = []
        for i in range(Tq):
            merged = np.zeros(H * E)
            for h in range(H):
                kh = h // (H // K)
                q = Q[i][h * E:(h + 1) * E]
                if a["position"] == "rope" and self_attn:
                    q = rope(q, i)
                logit = []
                for j in range(Tk):
                    ok = True
                    if causal and j > i:
                        ok = False
                    if self_attn and a["window"] and abs(i - j) >= a["window"]:
                        ok = False
                    if a["pad"] is not None and k_ids[j] == a["pad"]:
                        ok = False
                    if not ok:
                        logit.append(None)
                        continue
                    k = Kx[j][kh * E:(kh + 1) * E]
                    if a["position"] == "rope" and self_attn:
                        k = rope(k, j)
                    sc = float(np.dot(q, k)) / math.sqrt(E)
                    if a["position"] == "alibi" and self_attn:
                        sc += slopes[h] * (j - i)
                    logit.append(sc)
                live = [s for s in logit if s is not None]
                if not live:
                    continue  # every key forbidden: weights 0, head output 0
                mx = max(live)
                ex = [0.0 if s is None else math.exp(s - mx) for s in logit]
                z = sum(ex)
                for j in range(Tk):
                    if ex[j]:
                        merged[h * E:(h + 1) * E] += ex[j] / z * Vx[j][kh * E:(kh + 1) * E]
            if fam == "gpt2":
                outs.append(linear(merged, p + "c_proj", D))
            else:
                outs.append(linear(merged, p + ("o_proj" if fam == "llama" else "out_proj"), D))
        return outs

    def ffn(x, p):
        gated = a["act"] == "swiglu"
        if fam == "gpt2":
            if gated:
                g = linear(x, p + "mlp.c_fc", F, 0, bias="ffn")
                u = linear(x, p + "mlp.c_fc", F, F, bias="ffn")
                hid = np.array([g[f] / (1 + math.exp(-g[f])) * u[f] for f in range(F)])
            else:
                hid = np.array([act(z) for z in linear(x, p + "mlp.c_fc", F, bias="ffn")])
            return linear(hid, p + "mlp.c_proj", D, bias="ffn")
        if fam == "llama":
            u = linear(x, p + "mlp.up_proj", F, bias="ffn")
            if gated:
                g = linear(x, p + "mlp.gate_proj", F, bias="ffn")
                hid = np.array([g[f] / (1 + math.exp(-g[f])) * u[f] for f in range(F)])
            else:
                hid = np.array([act(z) for z in u])
            return linear(hid, p + "mlp.down_proj", D, bias="ffn")
        if gated:
            g = linear(x, p + "fc1", F, 0, bias="ffn")
            u = linear(x, p + "fc1", F, F, bias="ffn")
            hid = np.array([g[f] / (1 + math.exp(-g[f])) * u[f] for f in range(F)])
        else:
            hid = np.array([act(z) for z in linear(x, p + "fc1", F, bias="ffn")])
        return linear(hid, p + "fc2", D, bias="ffn")

    def embed_ids(tok, emb_name, pos_name):
        xs = []
        for i, t in enumerate(tok):
            v = w(emb_name)[t].copy()
            if a["scale"]:
                v = v * math.sqrt(D)
            if a["position"] == "sinusoidal":
                for d in range(D):
                    k2 = d - (d % 2)
                    ang = i / (10000.0 ** (k2 / D))
                    v[d] += math.sin(ang) if d % 2 == 0 else math.cos(ang)
            elif a["position"] == "learned":
                v = v + w(pos_name)[i]
            xs.append(v)
        return xs

    def add(u, v):
        return [p + q for p, q in zip(u, v)]

    def layer(xs, tok, names, causal, enc=None, src=None):
        n1, n2, n3, at, cr, fp = names
        pre = a["pos"] == "pre"
        if pre:
            hs = add(xs, attention([norm(x, n1) for x in xs], [norm(x, n1) for x in xs], at, tok, tok, causal, True))
        else:
            hs = [norm(v, n1) for v in add(xs, attention(xs, xs, at, tok, tok, causal, True))]
        nf = n2
        if enc is not None:
            if pre:
                hs = add(hs, attention([norm(x, n2) for x in hs], enc, cr, tok, src, False, False))
            else:
                hs = [norm(v, n2) for v in add(hs, attention(hs, enc, cr, tok, src, False, False))]
            nf = n3
        if pre:
            return add(hs, [ffn(norm(x, nf), fp) for x in hs])
        return [norm(v, nf) for v in add(hs, [ffn(x, fp) for x in hs])]

    if fam == "gpt2":
        xs = embed_ids(ids, "wte.weight", "wpe.weight")
        for n in range(a["L"]):
            p = "h.%d." % n
            xs = layer(xs, ids, (p + "ln_1", p + "ln_2", None, p + "attn.", None, p), True)
        fin, emb = "ln_f", "wte.weight"
    elif fam == "llama":
        xs = embed_ids(ids, "model.embed_tokens.weight", "model.embed_positions.weight")
        for n in range(a["L"]):
            p = "model.layers.%d." % n
            xs = layer(xs, ids, (p + "input_layernorm", p + "post_attention_layernorm", None,
                                 p + "self_attn.", None, p), True)
        fin, emb = "model.norm", "model.embed_tokens.weight"
    else:
        es = embed_ids(ids, "model.shared.weight", "model.encoder.embed_positions.weight")
        for n in range(a["Le"]):
            p = "model.encoder.layers.%d." % n
            es = layer(es, ids, (p + "self_attn_layer_norm", p + "final_layer_norm", None,
                                 p + "self_attn.", None, p), False)
        if a["final"]:
            es = [norm(v, "model.encoder.layer_norm") for v in es]
        xs = embed_ids(tgt, "model.shared.weight", "model.decoder.embed_positions.weight")
        for n in range(a["L"]):
            p = "model.decoder.layers.%d." % n
            xs = layer(xs, tgt, (p + "self_attn_layer_norm", p + "encoder_attn_layer_norm",
                                 p + "final_layer_norm", p + "self_attn.", p + "encoder_attn.", p),
                       True, enc=es, src=ids)
        fin, emb = "model.decoder.layer_norm", "model.shared.weight"
    if a["final"]:
        xs = [norm(v, fin) for v in xs]
    Wout = w(emb) if a["tied"] else w("lm_head.weight")
    return np.array([[float(np.dot(Wout[t], x)) for t in range(a["V"])] for x in xs])


# --------------------------------------------------------------------------------------------
# the configurations
# --------------------------------------------------------------------------------------------

def gpt2_cfg(**kw):
    c = {"model_type": "gpt2", "vocab_size": 48, "n_embd": 32, "n_layer": 2, "n_head": 4,
         "n_positions": 16, "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new",
         "bos_token_id": 0, "eos_token_id": 0, "tie_word_embeddings": True}
    c.update(kw)
    return c


def llama_cfg(**kw):
    c = {"model_type": "llama", "vocab_size": 48, "hidden_size": 32, "num_hidden_layers": 2,
         "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 64,
         "max_position_embeddings": 16, "rms_norm_eps": 1e-6, "hidden_act": "silu",
         "tie_word_embeddings": False, "rope_theta": 10000.0, "attention_bias": False,
         "bos_token_id": 1, "eos_token_id": 2}
    c.update(kw)
    return c


def encdec_cfg(**kw):
    c = {"model_type": "glassbox-encdec", "vocab_size": 48, "d_model": 32, "encoder_layers": 2,
         "decoder_layers": 2, "attention_heads": 4, "ffn_dim": 64, "max_position_embeddings": 16,
         "activation_function": "relu", "scale_embedding": True, "bos_token_id": 0,
         "eos_token_id": 2, "pad_token_id": 1, "decoder_start_token_id": 2}
    c.update(kw)
    return c


def with_gb(cfg, **g):
    c = copy.deepcopy(cfg)
    c.setdefault("glassbox", {}).update(g)
    return c


SRC = [5, 9, 3, 7, 4, 8, 6, 2]
TGT = [2, 7, 4, 8, 6, 5]


def mixed_dtypes(names):
    """Alternate F16 / BF16 / F32 over the tensors (exercises conversion and unaligned copies)."""
    return {n: ("F16", "BF16", "F32")[i % 3] for i, n in enumerate(names)}


# Each variant: name, what it exercises, config, ids, (target ids), and a "contrast": config
# edits that switch the exercised option off -- the torch logits must move by far more than the
# threshold, or the variant would not catch a glassbox that ignored the option.
VARIANTS = [
    dict(name="gpt2", what="GPT-2: pre-LN, learned pos, tanh GELU, biases, tied, fused c_attn",
         cfg=gpt2_cfg(), contrast=lambda c: with_gb(c, position="none")),
    dict(name="llama", what="Llama: RMSNorm, RoPE, SwiGLU, GQA 4q/2kv, no biases, untied",
         cfg=llama_cfg(), contrast=lambda c: with_gb(c, position="none")),
    dict(name="encdec", what="original Transformer: post-LN, sinusoidal, ReLU, scaled emb, cross-attn",
         cfg=encdec_cfg(), src=SRC, tgt=TGT, contrast=lambda c: dict(c, scale_embedding=False)),
    dict(name="gpt2-alibi-window", what="gpt2 + ALiBi (4 heads) + local window 3",
         cfg=with_gb(gpt2_cfg(), position="alibi", window=3),
         contrast=lambda c: with_gb(c, window=0)),
    dict(name="gpt2-alibi3-headdim", what="gpt2 + ALiBi with 3 heads (interpolated slopes), head_dim 8 != D/H",
         cfg=with_gb(gpt2_cfg(n_embd=16, n_head=3, n_inner=40), position="alibi", head_dim=8),
         contrast=lambda c: with_gb(c, position="none")),
    dict(name="gpt2-gelu-untied", what="gpt2 + exact GELU, untied lm_head, LayerNorm without bias",
         cfg=with_gb(gpt2_cfg(activation_function="gelu", tie_word_embeddings=False), norm_bias=False),
         # exact and tanh GELU differ by at most 4.7e-4 (at |x| = 2.7): FFN inputs sit near -2.7
         # and a large down-projection turns that difference into a visible one
         init={"wfc": 0.05, "bfc_mean": -2.7, "bfc": 0.2, "wd": 8.0},
         contrast=lambda c: dict(c, activation_function="gelu_new")),
    dict(name="gpt2-postnorm", what="decoder-only post-norm, no final norm, sinusoidal, ReLU, 'transformer.' prefix",
         cfg=with_gb(gpt2_cfg(activation_function="relu"), norm_position="post", final_norm=False,
                     position="sinusoidal"),
         prefix="transformer.", contrast=lambda c: with_gb(c, norm_position="pre")),
    dict(name="gpt2-textbook-ln", what="gpt2 + textbook LayerNorm (sigma + eps), eps 0.1",
         cfg=with_gb(gpt2_cfg(layer_norm_epsilon=0.1), textbook_layernorm=True),
         contrast=lambda c: with_gb(c, textbook_layernorm=False)),
    dict(name="gpt2-rope-gqa-swiglu", what="gpt2 + RoPE (theta 100), GQA 4q/2kv in fused c_attn, gated c_fc, RMSNorm, no biases",
         cfg=with_gb(gpt2_cfg(activation_function="swiglu", n_inner=48), position="rope", rope_theta=100.0,
                     n_kv_head=2, norm="rmsnorm", bias=False),
         contrast=lambda c: with_gb(c, rope_theta=10000.0)),
    dict(name="llama-adjacent-rope", what="llama + RoPE on adjacent pairs (2f, 2f+1), as llama2.c and Meta",
         cfg=with_gb(llama_cfg(), rope_pairing="adjacent"),
         contrast=lambda c: with_gb(c, rope_pairing="half")),
    dict(name="llama-learned-ln", what="llama + learned positions + LayerNorm (with bias) via glassbox{}",
         cfg=with_gb(llama_cfg(), norm="layernorm", position="learned"),
         contrast=lambda c: with_gb(c, norm="rmsnorm")),
    dict(name="llama-gelu-mqa", what="llama + plain tanh-GELU FFN, MQA (1 kv head), head_dim 16, tied, scaled emb",
         cfg=with_gb(llama_cfg(num_key_value_heads=1, head_dim=16, tie_word_embeddings=True),
                     activation="gelu_tanh", scale_embedding=True),
         contrast=lambda c: with_gb(c, scale_embedding=False)),
    dict(name="llama-attn-bias", what="llama + attention_bias (q, k, v, o only, as Hugging Face's Llama)",
         cfg=llama_cfg(attention_bias=True), init={"b": 0.5},
         contrast=lambda c: dict(c, attention_bias=False)),
    dict(name="llama-mlp-bias", what="llama + mlp_bias (gate, up, down) without attention biases",
         cfg=llama_cfg(mlp_bias=True), init={"bfc": 0.5, "b": 0.5},
         contrast=lambda c: dict(c, mlp_bias=False)),
    dict(name="gpt2-post-default", what="gpt2 post-norm with final_norm left to its default (none), plain SiLU",
         cfg=with_gb(gpt2_cfg(activation_function="silu"), norm_position="post"),
         contrast=lambda c: dict(c, activation_function="relu")),
    dict(name="llama-pad", what="llama + pad_token_id 3 (first key padded: an all-forbidden row)",
         cfg=llama_cfg(pad_token_id=3), contrast=lambda c: dict(c, pad_token_id=47)),
    dict(name="encdec-pad", what="encdec + padded source (pad 1), decoder_start = bos by default",
         cfg={k: v for k, v in encdec_cfg().items() if k != "decoder_start_token_id"},
         src=[5, 9, 1, 7, 4, 8, 1, 1], tgt=[0, 7, 4, 8, 6, 5],
         contrast=lambda c: dict(c, pad_token_id=47)),
    dict(name="encdec-prenorm", what="encdec pre-norm (final norms), learned pos, SwiGLU fc1, GQA, untied, unscaled, 3 enc / 1 dec layers",
         cfg=with_gb(encdec_cfg(activation_function="swiglu", scale_embedding=False, tie_word_embeddings=False,
                                encoder_layers=3, decoder_layers=1),
                     norm_position="pre", position="learned", n_kv_head=2),
         src=SRC, tgt=TGT,
         contrast=lambda c: with_gb(c, final_norm=False)),
    dict(name="gpt2-f16-bf16", what="gpt2 with tensors stored as F16 / BF16 / F32 alternately",
         cfg=gpt2_cfg(), dtypes=mixed_dtypes, contrast=None),
    # wider, odd sizes and longer sequences, so that the fast kernels leave their small-shape
    # fallbacks: SIMD tails, blocking and threading
    dict(name="gpt2-wide", what="gpt2 D 100, 5 heads, F 264, V 301, T = C = 40",
         cfg=gpt2_cfg(n_embd=100, n_head=5, n_inner=264, vocab_size=301, n_positions=40),
         ids=[(7 * i * i + 3 * i + 1) % 301 for i in range(40)], init={"emb": 0.25, "w": 0.1, "wfc": 0.1, "wd": 0.06},
         contrast=lambda c: with_gb(c, position="none")),
    # E = 16: wavelengths 6.3, 19.9, 62.8, 199, ... against C = 64, hi 4, lo 1 -- one pair kept,
    # two blended, five slowed by the factor, so every branch of llama3's rule is exercised
    dict(name="llama-rope-llama3", what="llama + rope_scaling llama3 (factor 4, lo 1, hi 4, C 64), T 37",
         cfg=llama_cfg(rope_scaling={"rope_type": "llama3", "factor": 4.0, "low_freq_factor": 1.0,
                                     "high_freq_factor": 4.0, "original_max_position_embeddings": 64},
                       max_position_embeddings=256, hidden_size=64, intermediate_size=128),
         ids=[(11 * i * i + 5 * i + 2) % 48 for i in range(37)],
         contrast=lambda c: dict(c, rope_scaling=None)),
    dict(name="llama-rope-linear", what="llama + rope_scaling linear (factor 2, the older \"type\" key), T 37",
         cfg=llama_cfg(rope_scaling={"type": "linear", "factor": 2.0}, max_position_embeddings=256),
         ids=[(7 * i * i + 3 * i + 1) % 48 for i in range(37)],
         contrast=lambda c: dict(c, rope_scaling=None)),
    dict(name="llama-wide", what="llama D 96, 6q/2kv heads of 16, F 200, V 257, T 37",
         cfg=llama_cfg(hidden_size=96, num_attention_heads=6, num_key_value_heads=2, intermediate_size=200,
                       vocab_size=257, max_position_embeddings=64),
         ids=[(11 * i * i + 5 * i + 2) % 257 for i in range(37)], init={"emb": 0.25, "w": 0.1, "wfc": 0.1, "wd": 0.07},
         contrast=lambda c: with_gb(c, position="none")),
]


# --------------------------------------------------------------------------------------------
# building folders, running glassbox
# --------------------------------------------------------------------------------------------

def build(v, seed):
    """Writes the variant's folder; returns (arch, weights as stored, folder, offsets)."""
    a = resolve(v["cfg"])
    prefix = v.get("prefix", "")
    W = make_weights(a, seed, prefix, v.get("init"))
    dts = v["dtypes"](list(W)) if v.get("dtypes") else {}
    W = {n: stored_value(x, dts.get(n, "F32")) for n, x in W.items()}
    folder = os.path.join(TMP, v["name"])
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(v["cfg"], f, indent=2)
    offs = write_safetensors(os.path.join(folder, "model.safetensors"), W, dts)
    return a, W, folder, offs


def ids_of(v):
    """The ids glassbox runs on: the source ids of an encdec model, or the decoder-only ids."""
    return v.get("src") or v.get("ids") or IDS


def run_glassbox(binary, folder, v, kernels, out):
    ids = ids_of(v)
    run = "run --ids " + " ".join(map(str, ids))
    if v.get("tgt"):
        run += " --target-ids " + " ".join(map(str, v["tgt"]))
    script = "load %s; %s; dump logits %s" % (folder, run, out)
    env = dict(os.environ)
    env.pop("GLASSBOX_KERNELS", None)
    if kernels == "ref":
        env["GLASSBOX_KERNELS"] = "ref"
    if os.path.exists(out):
        os.remove(out)
    if not os.path.exists(binary):
        return None, "%s does not exist (build it with make)" % binary
    try:
        p = subprocess.run([binary, "-c", script], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
    except subprocess.TimeoutExpired:
        return None, "timed out after 60 s: glassbox -c %r" % script
    except OSError as e:
        return None, "cannot run %s: %s" % (binary, e)
    err = p.stderr.decode(errors="replace").strip()
    if p.returncode != 0:
        return None, "exit status %d: glassbox -c %r: %s" % (p.returncode, script, err or "(no stderr)")
    try:
        g = np.load(out).astype(np.float64)
    except Exception as e:  # noqa: BLE001 -- any failure to read is a test failure
        return None, "cannot read %s (%s); glassbox -c %r; stderr: %s" % (out, e, script, err)
    return g, None


def rel_err(g, t):
    return float(np.max(np.abs(g - t)) / np.max(np.abs(t)))


# --------------------------------------------------------------------------------------------
# TAP
# --------------------------------------------------------------------------------------------

class Tap:
    def __init__(self, n):
        self.n, self.failed = 0, 0
        print("1..%d" % n, flush=True)

    def ok(self, cond, desc, diag=None):
        self.n += 1
        if not cond:
            self.failed += 1
        print("%sok %d - %s" % ("" if cond else "not ", self.n, desc))
        if diag:
            for line in str(diag).splitlines():
                print("# " + line)
        sys.stdout.flush()
        return cond


def finish(tap, tmp, keep):
    """The end of an oracle script: its folder kept (--keep) or removed; the exit status."""
    if keep:
        print("# kept %s" % tmp)
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if tap.failed else 0


def close(x, y, tol=1e-12):
    return np.allclose(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64), rtol=0, atol=tol)


def check_components():
    """Hand-computed values of each formula the forward uses; returns a list of failures."""
    bad = []
    T = lambda *v: torch.tensor(v, dtype=torch.float64)
    ln = dict(norm="layernorm", eps=0.0, textbook=False)
    # LayerNorm of 1, 2, 3, 4: mean 2.5, population variance 1.25
    s = math.sqrt(1.25)
    if not close(t_norm(ln, T(1, 2, 3, 4), T(1, 1, 1, 1), None), [-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s]):
        bad.append("layernorm")
    # the textbook's worked example: h = [1, 1, 2], eps 0.1: mu 4/3, sigma sqrt(2/9)
    tb = dict(norm="layernorm", eps=0.1, textbook=True)
    den = math.sqrt(2 / 9) + 0.1
    if not close(t_norm(tb, T(1, 1, 2), T(1, 1, 1), T(0, 0, 0)), [(-1 / 3) / den, (-1 / 3) / den, (2 / 3) / den]):
        bad.append("textbook layernorm")
    if not close(t_norm(dict(ln, eps=0.5), T(1, 3), T(2, 1), T(1, 0)), [1 - 2 / math.sqrt(1.5), 1 / math.sqrt(1.5)]):
        bad.append("layernorm with gain, bias, eps")
    rms = dict(norm="rmsnorm", eps=0.0)
    if not close(t_norm(rms, T(1, 2, 3, 4), T(1, 1, 1, 2), None),
                 [1 / math.sqrt(7.5), 2 / math.sqrt(7.5), 3 / math.sqrt(7.5), 8 / math.sqrt(7.5)]):
        bad.append("rmsnorm")
    # activations at 1 and -2 (values from tables of GELU / its tanh approximation)
    if not close(gelu_exact(T(1.0, -2.0)), [0.8413447460685429, -0.04550026389635842], 1e-12):
        bad.append("exact gelu")
    if not close(gelu_tanh(T(1.0, -2.0)), [0.8411919906082768, -0.04540230591222], 1e-12):
        bad.append("tanh gelu")
    if not close(silu(T(1.0)), [1 / (1 + math.exp(-1))]):
        bad.append("silu")
    # sinusoidal: D = 4, position 1: sin(1), cos(1), sin(1/100), cos(1/100)
    pe = sinusoidal(3, 4)
    if not close(pe[0], [0, 1, 0, 1]) or not close(pe[1], [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)]):
        bad.append("sinusoidal")
    # ALiBi slopes: 4 heads 1/4 .. 1/256; 8 heads 1/2 .. 1/256; 3 heads (paper's interpolation)
    if not close(alibi_slopes(4), [1 / 4, 1 / 16, 1 / 64, 1 / 256]) or \
       not close(alibi_slopes(8), [2.0 ** -k for k in range(1, 9)]) or \
       not close(alibi_slopes(3), [1 / 16, 1 / 256, 1 / 4]) or \
       not close(alibi_slopes(6), [2 ** -2, 2 ** -4, 2 ** -6, 2 ** -8, 2 ** -1, 2 ** -3]):
        bad.append("alibi slopes")
    # RoPE on E = 4 at position 1 with base 100: theta = 1, 1/10; pairs (0, 2) and (1, 3)
    r = t_rope(torch.tensor([[[0.0, 0, 0, 0], [1.0, 2.0, 3.0, 4.0]]]), 100.0)[0, 1]
    c0, s0, c1, s1 = math.cos(1), math.sin(1), math.cos(0.1), math.sin(0.1)
    if not close(r, [1 * c0 - 3 * s0, 2 * c1 - 4 * s1, 3 * c0 + 1 * s0, 4 * c1 + 2 * s1]):
        bad.append("rope")
    # attention by hand: one head, E = 1, q = [1, 1], k = [0, 1], v = [1, 3], causal
    a = dict(H=1, K=1, E=1)
    P = {"Wq": T(1.0)[None], "Wk": T(1.0)[None], "Wv": T(1.0)[None], "Wo": T(1.0)[None],
         "bq": None, "bk": None, "bv": None, "bo": None}
    allowed = torch.tensor([[True, False], [True, True]])
    xq = T(1.0, 1.0)[:, None]
    xkv = T(0.0, 1.0)[:, None]
    Pv = dict(P, Wv=T(2.0)[None], bv=T(1.0))  # v = 2 * [0, 1] + 1 = [1, 3]
    o = t_attention(a, xq, xkv, Pv, allowed, False, False)[:, 0]
    e = math.e
    if not close(o, [1.0, (1 + 3 * e) / (1 + e)]):
        bad.append("attention")
    # a row with every key forbidden is all zero
    o = t_attention(a, xq, xkv, Pv, torch.tensor([[False, False], [True, True]]), False, False)[:, 0]
    if not close(o, [0.0, (1 + 3 * e) / (1 + e)]):
        bad.append("all-forbidden row")
    # ALiBi by hand, H = 1 (slope 1/2... H=1 gives 2^-8): scores 0 so weights follow bias only
    aa = dict(H=1, K=1, E=1)
    Pz = dict(Pv, Wq=T(0.0)[None])
    o = t_attention(aa, xq, xkv, Pz, allowed, False, True)[:, 0]
    m = 2.0 ** -8
    w0 = math.exp(-m) / (math.exp(-m) + 1)
    if not close(o, [1.0, w0 * 1 + (1 - w0) * 3]):
        bad.append("alibi bias")
    return bad


def nn_logits(a, W, ids, tgt=None, prefix=""):
    """The same model through PyTorch's own nn.TransformerEncoderLayer / DecoderLayer (post-norm
    or pre-norm, ReLU or exact GELU, H == K, LayerNorm, E == D/H): an implementation of attention
    and of the layer structure that owes nothing to this file.  Embedding and output as above."""
    import torch.nn as nn
    D, H, F = a["D"], a["H"], a["F"]
    assert a["K"] == H and a["E"] * H == D and a["norm"] == "layernorm" and not a["textbook"]
    M = unpack(a, W, prefix)
    act = {"relu": "relu", "gelu": "gelu"}[a["act"]]
    first = a["pos"] == "pre"

    def set_ln(ln, n):
        ln.weight.copy_(n[0])
        ln.bias.copy_(n[1] if n[1] is not None else torch.zeros(D))
        ln.eps = a["eps"]

    def set_mha(m, P):
        m.in_proj_weight.copy_(torch.cat([P["Wq"].t(), P["Wk"].t(), P["Wv"].t()], 0))
        z = torch.zeros(D)
        m.in_proj_bias.copy_(torch.cat([P[b] if P[b] is not None else z for b in ("bq", "bk", "bv")]))
        m.out_proj.weight.copy_(P["Wo"].t())
        m.out_proj.bias.copy_(P["bo"] if P["bo"] is not None else z)

    def set_ffn(lyr, P):
        lyr.linear1.weight.copy_(P["Wu"].t())
        lyr.linear1.bias.copy_(P["bu"] if P["bu"] is not None else torch.zeros(F))
        lyr.linear2.weight.copy_(P["Wd"].t())
        lyr.linear2.bias.copy_(P["bd"] if P["bd"] is not None else torch.zeros(D))

    def mask_of(n):  # additive float mask: -inf above the diagonal
        return torch.triu(torch.full((n, n), float("-inf")), diagonal=1)

    def pad_of(tok):
        return torch.tensor([[a["pad"] is not None and t == a["pad"] for t in tok]])

    with torch.no_grad():
        if a["fam"] != "encdec":
            x = embed(a, M, ids, M["pos"])[None]
            for L in M["layers"]:
                lyr = nn.TransformerEncoderLayer(D, H, F, dropout=0.0, activation=act, batch_first=True,
                                                 norm_first=first, dtype=torch.float64)
                set_mha(lyr.self_attn, L["attn"]); set_ffn(lyr, L["ffn"])
                set_ln(lyr.norm1, L["n1"]); set_ln(lyr.norm2, L["n2"])
                x = lyr(x, src_mask=mask_of(len(ids)), src_key_padding_mask=pad_of(ids))
            fin = M["final"]
        else:
            e = embed(a, M, ids, M["encoder_pos"])[None]
            for L in M["enc_layers"]:
                lyr = nn.TransformerEncoderLayer(D, H, F, dropout=0.0, activation=act, batch_first=True,
                                                 norm_first=first, dtype=torch.float64)
                set_mha(lyr.self_attn, L["attn"]); set_ffn(lyr, L["ffn"])
                set_ln(lyr.norm1, L["n1"]); set_ln(lyr.norm2, L["n2"])
                e = lyr(e, src_key_padding_mask=pad_of(ids))
            if M["encoder_final"] is not None:
                e = t_norm(a, e, *M["encoder_final"])
            x = embed(a, M, tgt, M["decoder_pos"])[None]
            for L in M["layers"]:
                lyr = nn.TransformerDecoderLayer(D, H, F, dropout=0.0, activation=act, batch_first=True,
                                                 norm_first=first, dtype=torch.float64)
                set_mha(lyr.self_attn, L["attn"]); set_mha(lyr.multihead_attn, L["cross"])
                set_ffn(lyr, L["ffn"])
                set_ln(lyr.norm1, L["n1"]); set_ln(lyr.norm2, L["n2"]); set_ln(lyr.norm3, L["n3"])
                x = lyr(x, e, tgt_mask=mask_of(len(tgt)), tgt_key_padding_mask=pad_of(tgt),
                        memory_key_padding_mask=pad_of(ids))
            fin = M["decoder_final"]
        x = x[0]
        if fin is not None:
            x = t_norm(a, x, *fin)
        return (x @ M["out"].t()).numpy()


def check_rope_relative():
    rng = np.random.default_rng(7)
    E = 8
    q = torch.from_numpy(rng.normal(size=E))
    k = torch.from_numpy(rng.normal(size=E))
    worst = 0.0
    T = 12
    rq = t_rope(q.expand(1, T, E).clone(), 37.0)[0]
    rk = t_rope(k.expand(1, T, E).clone(), 37.0)[0]
    dots = rq @ rk.t()  # dots[i, j] must depend only on i - j
    for d in range(-(T - 1), T):
        vals = torch.diagonal(dots, offset=-d)
        worst = max(worst, float(vals.max() - vals.min()))
    # and position 0 is the identity; norms are kept
    worst = max(worst, float((rq[0] - q).abs().max()), float((rq.norm(dim=1) - q.norm()).abs().max()))
    return worst


def main(argv):
    only, keep, verbose, binary = None, False, False, "./glassbox"
    i = 0
    while i < len(argv):
        if argv[i] == "--only":
            only = argv[i + 1]; i += 1
        elif argv[i] == "--keep":
            keep = True
        elif argv[i] == "--bin":
            binary = argv[i + 1]; i += 1
        elif argv[i] == "-v":
            verbose = True
        else:
            print("usage: oracle.py [--only SUBSTR] [--keep] [--bin PATH] [-v]", file=sys.stderr)
            return 2
        i += 1
    variants = [v for v in VARIANTS if only is None or only in v["name"]]
    n_self = 7
    tap = Tap(n_self + 2 * len(variants) + 1 + N_BENCH)
    shutil.rmtree(TMP, ignore_errors=True)
    os.makedirs(TMP, exist_ok=True)

    # ---- self-checks of the torch side ----
    bad = check_components()
    tap.ok(not bad, "oracle: components match hand-computed values (norms, GELUs, sinusoid, ALiBi, RoPE, attention)",
           "failed: " + ", ".join(bad) if bad else None)
    worst = check_rope_relative()
    tap.ok(worst < 1e-12, "oracle: RoPE dot products depend only on i - j (max spread %.1e)" % worst)

    built = []
    for k, v in enumerate(variants):
        a, W, folder, offs = build(v, 1000 + k)
        built.append((v, a, W, folder, offs))

    # safetensors round trip: header multiple of 8, values read back bit for bit
    st_bad = []
    for v, a, W, folder, offs in built:
        R, hlen = read_safetensors(os.path.join(folder, "model.safetensors"))
        if hlen % 8 or set(R) != set(W) or any(not np.array_equal(R[n], W[n]) for n in W):
            st_bad.append(v["name"])
        if set(R) != {n for n, _, _ in layout(a, v.get("prefix", ""))}:
            st_bad.append(v["name"] + " (tensor set)")
    tap.ok(not st_bad, "oracle: safetensors files read back exactly (%d models)" % len(built),
           "bad: " + ", ".join(st_bad) if st_bad else None)

    # torch forward vs the loop implementation; softmax rows
    worst, rows_bad, logit_max = 0.0, [], []
    torch_out = {}
    for v, a, W, folder, offs in built:
        trace = []
        t = torch_logits(a, W, ids_of(v), v.get("tgt"), v.get("prefix", ""), trace)
        torch_out[v["name"]] = t
        lp = loop_logits(a, W, ids_of(v), v.get("tgt"), v.get("prefix", ""))
        e = rel_err(lp, t) if lp.shape == t.shape else float("inf")
        worst = max(worst, e)
        logit_max.append("%s %.2f" % (v["name"], float(np.abs(t).max())))
        for w, allowed in trace:
            sums = w.sum(-1)
            full = allowed.any(-1)[None].expand_as(sums)
            if not (torch.allclose(sums[full], torch.ones_like(sums[full]), atol=1e-12, rtol=0)
                    and bool((sums[~full] == 0).all())
                    and bool((w[~allowed[None].expand_as(w)] == 0).all())):
                rows_bad.append(v["name"])
                break
    tap.ok(worst < 1e-11, "oracle: torch forward == independent loop implementation on every model (max rel diff %.1e)" % worst,
           "max |logit| per model: " + ", ".join(logit_max) if verbose else None)
    tap.ok(not rows_bad, "oracle: attention rows sum to 1, all-forbidden rows and forbidden entries are 0",
           "bad: " + ", ".join(sorted(set(rows_bad))) if rows_bad else None)

    # PyTorch's own Transformer layers, where they can express the model
    nn_names = ("encdec", "encdec-pad", "gpt2-gelu-untied", "gpt2-postnorm")
    worst, done = 0.0, []
    for v, a, W, folder, offs in built:
        if v["name"] in nn_names:
            t = nn_logits(a, W, ids_of(v), v.get("tgt"), v.get("prefix", ""))
            worst = max(worst, rel_err(t, torch_out[v["name"]]))
            done.append(v["name"])
    tap.ok(worst < 1e-11, "oracle: torch.nn.Transformer*Layer agrees on %s (max rel diff %.1e)"
           % (", ".join(done) or "nothing", worst))

    # every variant's option must matter
    weak = []
    for v, a, W, folder, offs in built:
        if not v.get("contrast"):
            continue
        a2 = resolve(v["contrast"](v["cfg"]))
        t2 = torch_logits(a2, W, ids_of(v), v.get("tgt"), v.get("prefix", ""))
        e = rel_err(t2, torch_out[v["name"]])
        if e < 100 * THRESHOLD:
            weak.append("%s %.1e" % (v["name"], e))
        elif verbose:
            print("# contrast %s: %.2e" % (v["name"], e))
    tap.ok(not weak, "oracle: each variant's option moves the logits by > 100x the threshold",
           "too weak: " + ", ".join(weak) if weak else None)

    # ---- glassbox against torch ----
    for v, a, W, folder, offs in built:
        t = torch_out[v["name"]]
        for kernels in ("ref", "fast"):
            out = os.path.join(TMP, "%s.%s.npy" % (v["name"], kernels))
            g, err = run_glassbox(binary, folder, v, kernels, out)
            desc = "%s [%s]: %s" % (v["name"], kernels, v["what"])
            if err is not None:
                tap.ok(False, desc + ": glassbox failed", err)
                continue
            if g.shape != t.shape:
                tap.ok(False, desc + ": logits shape %s, expected %s" % (g.shape, t.shape))
                continue
            e = rel_err(g, t)
            diag = None
            if e > THRESHOLD or verbose:
                d = np.abs(g - t)
                r, c = np.unravel_index(int(np.argmax(d)), d.shape)
                diag = ("worst at token %d vocab %d: glassbox %.6g torch %.6g; max|torch| %.4g"
                        % (r, c, g[r, c], t[r, c], np.abs(t).max()))
                errs_by_row = ", ".join("%.1e" % x for x in (d.max(1) / np.abs(t).max()))
                diag += "\nrel err per position: " + errs_by_row
            tap.ok(e <= THRESHOLD, "%s: rel err %.2e" % (desc, e), diag)

    # ---- negative control: one perturbed weight must be caught ----
    v, a, W, folder, offs = built[0]
    t = torch_out[v["name"]]
    nfold = os.path.join(TMP, "negative-control")
    shutil.rmtree(nfold, ignore_errors=True)
    shutil.copytree(folder, nfold)
    chosen = None
    for name in sorted(W):
        if W[name].ndim != 2 or offs[name][1] != "F32":
            continue
        W2 = dict(W)
        W2[name] = W[name].copy()
        W2[name].flat[5] += 0.25
        t2 = torch_logits(a, W2, ids_of(v), v.get("tgt"), v.get("prefix", ""))
        if rel_err(t2, t) > 100 * THRESHOLD:
            chosen = (name, t2)
            break
    if chosen is None:
        tap.ok(False, "negative control: no single-weight perturbation moved the torch logits")
        return 1
    name, t2 = chosen
    st = os.path.join(nfold, "model.safetensors")
    with open(st, "r+b") as f:
        pos = offs[name][0] + 5 * 4
        f.seek(pos)
        (old,) = struct.unpack("<f", f.read(4))
        f.seek(pos)
        f.write(struct.pack("<f", old + 0.25))
    g, err = run_glassbox(binary, nfold, v, "ref", os.path.join(TMP, "negative-control.npy"))
    if err is not None:
        tap.ok(False, "negative control (%s[5] += 0.25): glassbox failed" % name, err)
    elif g.shape != t.shape:
        tap.ok(False, "negative control: logits shape %s, expected %s" % (g.shape, t.shape))
    else:
        e, e2 = rel_err(g, t), rel_err(g, t2)
        tap.ok(e > THRESHOLD, "negative control: %s[5] += 0.25 in the file is caught: rel err %.2e > %.0e"
               % (name, e, THRESHOLD), "glassbox vs torch with the perturbed weight: rel err %.2e" % e2)

    check_bench_script(tap, binary)
    if not keep and tap.failed == 0:
        shutil.rmtree(TMP, ignore_errors=True)
    return 1 if tap.failed else 0


# --------------------------------------------------------------------------------------------
# tools/bench_torch_gpt2_kv.py, the PyTorch peer of `bench decode --shape gpt2small`: its cached
# decoding equals its own full recompute, a nudged cache is caught, and on a folder glassbox
# wrote (`init`) its greedy tokens are glassbox's.
# --------------------------------------------------------------------------------------------

N_BENCH = 3
BENCH_SCRIPT = os.path.join("tools", "bench_torch_gpt2_kv.py")


def bench_script(args):
    """(stdout's last line, error or None) of the bench script run with args."""
    try:
        p = subprocess.run(["/usr/bin/python3", BENCH_SCRIPT] + args, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        return "", str(e)
    out = p.stdout.decode(errors="replace").strip().splitlines()
    if p.returncode != 0 or not out:
        return "", "exit status %d: %s" % (p.returncode, p.stderr.decode(errors="replace").strip())
    return out[-1], None


def check_bench_script(tap, binary):
    small = ["--dim", "64", "--layers", "3", "--heads", "4", "--vocab", "300", "--context", "64",
             "--prompt", "5", "--tokens", "40"]
    line, err = bench_script(small + ["--check"])
    w = line.split()
    good = err is None and len(w) == 7 and w[0] == "check" and float(w[2]) <= 1e-5 and w[4] == "1"
    tap.ok(good, "bench_torch_gpt2_kv.py --check: cached greedy decoding (40 steps) equals a full recompute "
           "(%s)" % (line or err))
    line, err = bench_script(small + ["--check", "--corrupt-cache"])
    w = line.split()
    tap.ok(err is None and len(w) == 7 and float(w[2]) > 1e-5,
           "bench_torch_gpt2_kv.py --check --corrupt-cache: a nudged cached key is caught (%s)" % (line or err))
    folder = os.path.join(TMP, "bench-gpt2")
    shutil.rmtree(folder, ignore_errors=True)
    script = "init %s --seed 7 --layers 3; load %s; run the cat sat on; print tokens; generate 12 --temp 0; print tokens" \
        % (folder, folder)
    p = subprocess.run([binary, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    rows = [r.split() for r in p.stdout.decode(errors="replace").splitlines()]
    rows = [r for r in rows if r and all(x.isdigit() for x in r)]
    if p.returncode != 0 or len(rows) < 2 or len(rows[-1]) != len(rows[0]) + 12:
        tap.ok(False, "glassbox's greedy tokens on an init folder equal bench_torch_gpt2_kv.py --load's",
               "glassbox -c %r: status %d: %s" % (script, p.returncode, p.stderr.decode(errors="replace")))
        return
    prompt, gen = rows[0], rows[-1][len(rows[0]):]
    line, err = bench_script(["--load", folder, "--ids", ",".join(prompt), "--greedy", "12"])
    tap.ok(err is None and line.split()[1:] == gen,
           "glassbox's 12 greedy tokens on an init folder equal bench_torch_gpt2_kv.py --load's (%s)"
           % " ".join(gen), "torch: %s" % (line or err))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
