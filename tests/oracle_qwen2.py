#!/usr/bin/python3
"""oracle_qwen2.py -- Qwen2 (and Qwen2.5) model folders against a PyTorch forward written from Qwen2's
published conventions (no transformers package): Llama's decoder -- pre-norm RMSNorm with eps
rms_norm_eps, SwiGLU MLP (down(silu(gate x) * up x)), rotate-half RoPE with base rope_theta, grouped
key/value heads -- with one difference: q_proj, k_proj and v_proj carry biases and o_proj has none
(nor has the MLP).  The output projection is the embedding when tie_word_embeddings, else lm_head.

Each folder's config.json is what Qwen2 checkpoints ship (every field of Qwen2.5-0.5B's, sizes
shrunk); weights random, biases large enough to matter.  Checks, for the reference and the fast
kernels: logits within 1e-4 relative of torch's.  Controls: the torch logits without the biases
differ (the biases matter), a file with the biases zeroed is seen by glassbox, an o_proj.bias in the
file is refused by name, `info` names the family, and configs with a field glassbox does not know or
a feature it does not do (use_sliding_window, layer_types with sliding attention, use_mrope) are
one-line errors that name the field.  Prints TAP (tests/t_oracle_qwen2.sh); run from the repository root.
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle import Tap, finish, rel_err, run_glassbox, write_safetensors  # noqa: E402  (file I/O only)

torch.set_default_dtype(torch.float64)
THRESHOLD = 1e-4
IDS = [5, 17, 3, 3, 40, 22, 9, 31, 17, 5, 44, 12, 8]


def qwen2_config(D, L, H, K, F, V, C, theta, eps, tied):
    """A config.json as Qwen2.5-0.5B's, field for field, with small sizes."""
    return {
        "architectures": ["Qwen2ForCausalLM"],
        "attention_dropout": 0.0,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "hidden_act": "silu",
        "hidden_size": D,
        "initializer_range": 0.02,
        "intermediate_size": F,
        "max_position_embeddings": C,
        "max_window_layers": L,
        "model_type": "qwen2",
        "num_attention_heads": H,
        "num_hidden_layers": L,
        "num_key_value_heads": K,
        "rms_norm_eps": eps,
        "rope_theta": theta,
        "sliding_window": C,
        "tie_word_embeddings": tied,
        "torch_dtype": "float32",
        "transformers_version": "4.43.1",
        "use_cache": True,
        "use_mrope": False,
        "use_sliding_window": False,
        "vocab_size": V,
    }


def weights(cfg, rng):
    D, L, H, K = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    F, V, E = cfg["intermediate_size"], cfg["vocab_size"], cfg["hidden_size"] // cfg["num_attention_heads"]
    W = {}

    def r(name, shape, sd, mean=0.0):
        W[name] = rng.normal(mean, sd, size=shape).astype(np.float32).astype(np.float64)
    r("model.embed_tokens.weight", (V, D), 0.5)
    for n in range(L):
        p = "model.layers.%d." % n
        r(p + "input_layernorm.weight", (D,), 0.1, 1.0)
        r(p + "self_attn.q_proj.weight", (H * E, D), 0.2)
        r(p + "self_attn.q_proj.bias", (H * E,), 0.5)
        r(p + "self_attn.k_proj.weight", (K * E, D), 0.2)
        r(p + "self_attn.k_proj.bias", (K * E,), 0.5)
        r(p + "self_attn.v_proj.weight", (K * E, D), 0.2)
        r(p + "self_attn.v_proj.bias", (K * E,), 0.5)
        r(p + "self_attn.o_proj.weight", (D, H * E), 0.2)
        r(p + "post_attention_layernorm.weight", (D,), 0.1, 1.0)
        r(p + "mlp.gate_proj.weight", (F, D), 0.2)
        r(p + "mlp.up_proj.weight", (F, D), 0.2)
        r(p + "mlp.down_proj.weight", (D, F), 0.2)
    r("model.norm.weight", (D,), 0.1, 1.0)
    if not cfg["tie_word_embeddings"]:
        r("lm_head.weight", (V, D), 0.3)
    return W


def rmsnorm(x, g, eps):
    return x / torch.sqrt((x ** 2).mean(-1, keepdim=True) + eps) * g


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], -1)


def rope(x, theta):
    """Hugging Face's apply_rotary_pos_emb: x * cos + rotate_half(x) * sin, the angles repeated twice."""
    T, E = x.shape[-2], x.shape[-1]
    inv = 1.0 / theta ** (torch.arange(0, E, 2, dtype=torch.float64) / E)
    ang = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]
    emb = torch.cat([ang, ang], -1)
    return x * torch.cos(emb) + rotate_half(x) * torch.sin(emb)


def qwen2_logits(cfg, W, ids, biases=True):
    D, L, H, K = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    E, eps, theta = D // H, cfg["rms_norm_eps"], cfg["rope_theta"]
    t = {n: torch.from_numpy(a) for n, a in W.items()}
    T = len(ids)
    x = t["model.embed_tokens.weight"][ids]
    causal = torch.arange(T)[None, :] > torch.arange(T)[:, None]
    for n in range(L):
        p = "model.layers.%d." % n

        def proj(h, name, heads):
            y = h @ t[p + "self_attn.%s.weight" % name].t()
            if biases:
                y = y + t[p + "self_attn.%s.bias" % name]
            return y.reshape(T, heads, E).transpose(0, 1)
        h = rmsnorm(x, t[p + "input_layernorm.weight"], eps)
        q, k, v = rope(proj(h, "q_proj", H), theta), rope(proj(h, "k_proj", K), theta), proj(h, "v_proj", K)
        k, v = k.repeat_interleave(H // K, 0), v.repeat_interleave(H // K, 0)
        s = (q @ k.transpose(1, 2) / math.sqrt(E)).masked_fill(causal, float("-inf"))
        o = (torch.softmax(s, -1) @ v).transpose(0, 1).reshape(T, H * E)
        x = x + o @ t[p + "self_attn.o_proj.weight"].t()
        h = rmsnorm(x, t[p + "post_attention_layernorm.weight"], eps)
        g = h @ t[p + "mlp.gate_proj.weight"].t()
        x = x + (g * torch.sigmoid(g) * (h @ t[p + "mlp.up_proj.weight"].t())) @ t[p + "mlp.down_proj.weight"].t()
    x = rmsnorm(x, t["model.norm.weight"], eps)
    out = t["model.embed_tokens.weight"] if cfg["tie_word_embeddings"] else t["lm_head.weight"]
    return (x @ out.t()).numpy()


def glassbox(binary, script):
    p = subprocess.run([binary, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def write_folder(folder, cfg, W):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    write_safetensors(os.path.join(folder, "model.safetensors"), W)


MODELS = [
    # name, D, L, H, K, F, V, C, rope_theta, rms_norm_eps, tied
    ("qwen2-tied-gqa", 32, 2, 4, 2, 48, 64, 32, 1000000.0, 1e-6, True),
    ("qwen2-untied-mqa", 24, 3, 6, 1, 40, 50, 16, 10000.0, 1e-5, False),
]

# (what, config changes, a word the error must contain)
BAD = [
    ("an unknown field", {"attention_bias": True}, "attention_bias"),
    ("a field glassbox does not know", {"rope_mystery": 3}, "rope_mystery"),
    ("use_sliding_window true", {"use_sliding_window": True}, "use_sliding_window"),
    ("layer_types with a sliding layer", {"layer_types": ["full_attention", "sliding_attention"]}, "layer_types"),
    ("use_mrope true", {"use_mrope": True}, "use_mrope"),
    ("rope_scaling yarn", {"rope_scaling": {"type": "yarn", "factor": 4.0}}, "yarn"),
    ("hidden_act gelu", {"hidden_act": "gelu"}, "hidden_act"),
]


def main(argv):
    binary = "./glassbox"
    if "--bin" in argv:
        binary = argv[argv.index("--bin") + 1]
    keep = "--keep" in argv
    tap = Tap(2 + 6 * len(MODELS) + len(BAD))
    # the oracle's RoPE against the README's pair form (f, f + E/2) by hand at one position
    x = torch.arange(1.0, 9.0)[None, None, :].repeat(1, 3, 1)
    y = rope(x, 100.0)[0, 2]
    a, b = x[0, 2, :4], x[0, 2, 4:]
    th = 2 * 100.0 ** (-torch.arange(0, 8, 2) / 8.0)
    want = torch.cat([a * torch.cos(th) - b * torch.sin(th), b * torch.cos(th) + a * torch.sin(th)])
    tap.ok(torch.allclose(y, want, atol=1e-14), "oracle: rotate_half RoPE equals the (f, f + E/2) rotation at position 2")
    tmp = tempfile.mkdtemp(prefix="gb_oracle_qwen2.")
    folder0 = None
    for i, (name, D, L, H, K, F, V, C, theta, eps, tied) in enumerate(MODELS):
        cfg = qwen2_config(D, L, H, K, F, V, C, theta, eps, tied)
        W = weights(cfg, np.random.default_rng(200 + i))
        folder = os.path.join(tmp, name)
        write_folder(folder, cfg, W)
        folder0 = folder0 or folder
        want = qwen2_logits(cfg, W, IDS)
        moved = rel_err(qwen2_logits(cfg, W, IDS, biases=False), want)
        tap.ok(moved > 1e-2, "%s: the q, k, v biases matter (torch logits move by %.3g without them)" % (name, moved))
        for kern in ("ref", "fast"):
            got, err = run_glassbox(binary, folder, {"ids": IDS}, kern, os.path.join(tmp, name + "-" + kern + ".npy"))
            e = rel_err(got, want) if got is not None else float("inf")
            tap.ok(got is not None and e <= THRESHOLD,
                   "%s: glassbox (%s kernels) vs torch (Llama + q/k/v biases): logits relative error %.2g <= %g"
                   % (name, kern, e, THRESHOLD), err)
        # negative control: the same folder with the biases zeroed must be seen (glassbox reads them)
        W0 = {n: (a * 0 if n.endswith("_proj.bias") else a) for n, a in W.items()}
        nfold = folder + "-nobias"
        write_folder(nfold, cfg, W0)
        got, err = run_glassbox(binary, nfold, {"ids": IDS}, "ref", os.path.join(tmp, name + "-nobias.npy"))
        e = rel_err(got, want) if got is not None else 0
        e0 = rel_err(got, qwen2_logits(cfg, W0, IDS)) if got is not None else float("inf")
        tap.ok(got is not None and e > 1e-2 and e0 <= THRESHOLD,
               "%s: negative control: biases zeroed in the file, glassbox's logits move by %.3g (and match torch "
               "without biases, %.2g)" % (name, e, e0), err)
        # an o_proj bias is not Qwen2's: refused by name, not silently used or ignored
        Wo = dict(W)
        Wo["model.layers.0.self_attn.o_proj.bias"] = np.ones(D)
        ofold = folder + "-obias"
        write_folder(ofold, cfg, Wo)
        rc, out, errtext = glassbox(binary, "load %s" % ofold)
        tap.ok(rc != 0 and "o_proj.bias" in errtext and len(errtext.strip().splitlines()) == 1,
               "%s: a file with o_proj.bias is refused in one line naming it" % name, errtext.strip())
        rc, out, errtext = glassbox(binary, "load %s; info" % folder)
        tap.ok(rc == 0 and "family      qwen2" in out and "parameters  %d" % sum(a.size for a in W.values()) in out
               and "does not match" not in out,
               "%s: info names the family qwen2 and counts the %d parameters" % (name, sum(a.size for a in W.values())),
               (out + errtext).strip()[:600])
    # configs glassbox must refuse, each in one line naming the field
    for what, changes, word in BAD:
        cfg = qwen2_config(32, 2, 4, 2, 48, 64, 32, 1000000.0, 1e-6, True)
        cfg.update(changes)
        folder = os.path.join(tmp, "bad-" + word)
        os.makedirs(folder, exist_ok=True)
        shutil.copy(os.path.join(folder0, "model.safetensors"), folder)
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(cfg, f)
        rc, out, errtext = glassbox(binary, "load %s" % folder)
        lines = errtext.strip().splitlines()
        tap.ok(rc != 0 and len(lines) == 1 and word in lines[0],
               "qwen2 config with %s: a one-line error naming %s" % (what, word), errtext.strip())
    # a sliding_window value with use_sliding_window false is Qwen2's default: nothing to refuse
    rc, out, errtext = glassbox(binary, "load %s; run --ids 1 2 3" % folder0)
    tap.ok(rc == 0, "a config with sliding_window set but use_sliding_window false loads and runs", errtext.strip())
    return finish(tap, tmp, keep)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
