#!/usr/bin/python3
"""llama2c_oracle.py -- glassbox against llama2.c's formats, written from llama2.c's export.py,
run.c and tokenizer.py conventions (never from glassbox's C code).

Writes small random llama2.c checkpoints -- legacy (run.c's layout; shared and unshared
classifier), version 1 (float32) and version 2 (int8 Q8_0 groups) -- with fewer key/value heads
than query heads, and a tokenizer.bin; then checks:
  * glassbox's logits (reference and fast kernels) against a float64 PyTorch forward of the
    format (RMSNorm eps 1e-5, SwiGLU, RoPE theta 10000 on adjacent pairs (2i, 2i+1)), within 1e-4
    relative (max |glassbox - torch| / max |torch|); a rotate-half forward must be far off;
  * `glassbox export-model X.bin --llama2c Y.bin [--version 1]` round trips bit for bit, and
    a Q8_0 file exports as the version 1 file of its dequantized weights;
  * `--version 2` writes byte for byte the Q8_0 file a few lines of numpy make from the format
    (export.py's group size and quantize_q80, which the numpy lines are checked against), which
    loads back with logits close to the float32 model's; a version 2 file written back as version
    2 is the same file;
  * `run TEXT` with tokenizer.bin beside the checkpoint gives the ids of run.c's encode
    (transcribed below from its algorithm: BOS, dummy prefix, characters or byte fallback,
    highest-scoring merge first);
  * broken files give a one-line error and a non-zero exit.
Prints TAP (run by tests/t_llama2c.sh). Options: --bin PATH, --keep.
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np
import torch

BIN = "./glassbox"
KEEP = False
TOL = 1e-4
MAGIC = 0x616b3432


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, desc, diag=None):
        self.n += 1
        if not cond:
            self.failed += 1
        print("%sok %d - %s" % ("" if cond else "not ", self.n, desc))
        if diag and not cond:
            for line in str(diag).splitlines():
                print("# " + line)
        sys.stdout.flush()
        return cond


# ---------------------------------------------------------------------------------------------
# the checkpoint, as export.py writes it
# ---------------------------------------------------------------------------------------------

def random_model(rng, dim, hidden, layers, heads, kv, vocab, seq, shared):
    hs = dim // heads
    W = {"emb": rng.normal(0, 0.5, (vocab, dim)).astype(np.float32)}
    for name, shape in (("ln1", (dim,)), ("wq", (heads * hs, dim)), ("wk", (kv * hs, dim)), ("wv", (kv * hs, dim)),
                        ("wo", (dim, heads * hs)), ("ln2", (dim,)), ("w1", (hidden, dim)), ("w2", (dim, hidden)),
                        ("w3", (hidden, dim))):
        if name.startswith("ln"):
            W[name] = [(1 + rng.normal(0, 0.2, shape)).astype(np.float32) for _ in range(layers)]
        else:
            W[name] = [rng.normal(0, 0.4, shape).astype(np.float32) for _ in range(layers)]
    W["final"] = (1 + rng.normal(0, 0.2, (dim,))).astype(np.float32)
    W["cls"] = W["emb"] if shared else rng.normal(0, 0.5, (vocab, dim)).astype(np.float32)
    p = dict(dim=dim, hidden=hidden, layers=layers, heads=heads, kv=kv, vocab=vocab, seq=seq, shared=shared)
    return p, W


def f32(a):
    return np.ascontiguousarray(a, dtype="<f4").tobytes()


def freq_cis(p):
    """model.py's precompute_freqs_cis for head_dim, computed here in float64, stored float32."""
    hs = p["dim"] // p["heads"]
    k = np.arange(0, hs, 2)[: hs // 2].astype(np.float64)
    freqs = 10000.0 ** (-k / hs)
    ang = np.outer(np.arange(p["seq"], dtype=np.float64), freqs)
    return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)


def header7(p, signed_vocab):
    v = p["vocab"] if (p["shared"] or not signed_vocab) else -p["vocab"]
    return struct.pack("<7i", p["dim"], p["hidden"], p["layers"], p["heads"], p["kv"], v, p["seq"])


def write_legacy(path, p, W):
    with open(path, "wb") as f:
        f.write(header7(p, True))
        f.write(f32(W["emb"]))
        for name in ("ln1", "wq", "wk", "wv", "wo", "ln2", "w1", "w2", "w3"):
            for t in W[name]:
                f.write(f32(t))
        f.write(f32(W["final"]))
        c, s = freq_cis(p)
        f.write(f32(c))
        f.write(f32(s))
        if not p["shared"]:
            f.write(f32(W["cls"]))


def v_header(p, version, gs=None):
    h = struct.pack("<Ii", MAGIC, version) + header7(p, False) + struct.pack("<B", int(p["shared"]))
    if gs is not None:
        h += struct.pack("<i", gs)
    return h + b"\0" * (256 - len(h))


def write_v1(path, p, W):
    with open(path, "wb") as f:
        f.write(v_header(p, 1))
        for t in W["ln1"] + W["ln2"] + [W["final"], W["emb"]]:
            f.write(f32(t))
        for name in ("wq", "wk", "wv", "wo", "w1", "w2", "w3"):
            for t in W[name]:
                f.write(f32(t))
        if not p["shared"]:
            f.write(f32(W["cls"]))


def quantize(w, gs):
    """export.py's quantize_q80: symmetric int8 per group of gs, scale = max|w| / 127."""
    g = torch.from_numpy(np.asarray(w, dtype=np.float32).reshape(-1, gs))
    scale = g.abs().max(dim=1).values / 127.0
    q = torch.round(g / scale[:, None]).to(torch.int8)
    deq = (q.float() * scale[:, None]).reshape(np.shape(w)).numpy()
    return q.numpy().reshape(-1), scale.numpy().astype(np.float32), deq.astype(np.float32)


def write_v2(path, p, W, gs):
    """Returns the dequantized weights (what glassbox must compute with)."""
    D = {k: (list(v) if isinstance(v, list) else v) for k, v in W.items()}
    with open(path, "wb") as f:
        f.write(v_header(p, 2, gs))
        for t in W["ln1"] + W["ln2"] + [W["final"]]:
            f.write(f32(t))
        seq = [("emb", None)] + [(n, l) for n in ("wq", "wk", "wv", "wo", "w1", "w2", "w3") for l in range(p["layers"])]
        if not p["shared"]:
            seq.append(("cls", None))
        for name, l in seq:
            w = W[name] if l is None else W[name][l]
            q, s, deq = quantize(w, gs)
            f.write(q.astype(np.int8).tobytes())
            f.write(f32(s))
            if l is None:
                D[name] = deq
            else:
                D[name][l] = deq
    if p["shared"]:
        D["cls"] = D["emb"]
    return D


def q80_numpy(w, gs):
    """Q8_0 from the format alone, in numpy float32: per group of gs, scale = max|w| / 127 and
    q = round(w / scale), ties to even (np.rint, as torch.round); a group of zeros: scale 0, q 0."""
    g = np.asarray(w, dtype=np.float32).reshape(-1, gs)
    s = np.abs(g).max(axis=1) / np.float32(127.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(s[:, None] == 0, np.float32(0), np.rint(g / s[:, None]))
    return q.astype(np.int8), s.astype(np.float32)


def v2_bytes_numpy(p, W, gs):
    """A version 2 file of W as export.py's version2_export lays it out, quantized by q80_numpy."""
    out = [v_header(p, 2, gs)]
    for t in W["ln1"] + W["ln2"] + [W["final"]]:
        out.append(f32(t))
    seq = [W["emb"]] + [t for n in ("wq", "wk", "wv", "wo", "w1", "w2", "w3") for t in W[n]]
    if not p["shared"]:
        seq.append(W["cls"])
    for w in seq:
        q, s = q80_numpy(w, gs)
        out.append(q.tobytes() + f32(s))
    return b"".join(out)


def export_group_size(dim):
    gs = 64
    while dim % gs:
        gs //= 2
    return gs


def check_q8_write(tap, tmp, files, ids):
    """export-model --version 2: byte for byte what the format says, close to the float32 model,
    and a version 2 file written back as version 2 unchanged."""
    for name in ("v1-shared", "v1-unshared", "legacy-unshared", "v1-zero-groups"):
        if name == "v1-zero-groups":  # whole groups of zeros: scale 0, q 0
            rng = np.random.default_rng(11)
            V = files["v1-unshared"][1]["vocab"]
            p, W = random_model(rng, dim=64, hidden=96, layers=1, heads=4, kv=2, vocab=V, seq=16, shared=False)
            W["w1"][0][3] = 0
            W["wo"][0][5, :] = 0
            path = os.path.join(tmp, name + ".bin")
            write_v1(path, p, W)
        else:
            path, p, W, _ = files[name]
        gs = export_group_size(p["dim"])
        out = path + ".q8"
        rc, _, err = glassbox(["export-model", path, "--llama2c", out, "--version", "2"])
        want = v2_bytes_numpy(p, W, gs)
        got = open(out, "rb").read() if rc == 0 else b""
        ndiff = sum(a != b for a, b in zip(got, want)) + abs(len(got) - len(want))
        tap.ok(rc == 0 and got == want, "%s -> version 2 (group size %d): byte for byte the numpy quantization of "
               "its weights (%d bytes, %d differ)" % (name, gs, len(want), ndiff), err)
        # the numpy lines agree with export.py's torch code (tests' quantize) on these weights
        agree = all(np.array_equal(q80_numpy(w, gs)[0].reshape(-1), quantize(w, gs)[0]) and
                    np.array_equal(q80_numpy(w, gs)[1].view(np.uint32), quantize(w, gs)[1].view(np.uint32))
                    for w in [W["emb"]] + W["w1"] + W["wo"])
        tap.ok(agree, "%s: numpy's Q8_0 equals export.py's torch quantize_q80 on its weights (torch %s%s)"
               % (name, torch.__version__, ", groups of zeros included" if name == "v1-zero-groups" else ""))
        D = dict(W)
        for n in ("wq", "wk", "wv", "wo", "w1", "w2", "w3"):
            D[n] = [(lambda q, s: (q.astype(np.float32).reshape(-1, gs) * s[:, None]).reshape(t.shape))(*q80_numpy(t, gs))
                    for t in W[n]]
        for n in ("emb", "cls"):
            q, s = q80_numpy(W[n], gs)
            D[n] = (q.astype(np.float32).reshape(-1, gs) * s[:, None]).reshape(W[n].shape)
        if p["shared"]:
            D["cls"] = D["emb"]
        g, err = logits_of(out, ids, "ref")
        full = forward(p, W, ids)
        if g is None:
            tap.ok(False, "%s: the version 2 file loads and runs" % name, err)
            continue
        e_full, e_deq = rel(g, full), rel(g, forward(p, D, ids))
        # each weight within half a step (scale / 2) of its float32 value; the logits move by what
        # these random models (weights of sd 0.4, gains above 1 per layer) make of that
        steps = max(float(np.max(np.abs(np.asarray(D[n][l] if isinstance(D[n], list) else D[n]).reshape(-1, gs) -
                                        np.asarray(W[n][l] if isinstance(W[n], list) else W[n]).reshape(-1, gs))
                              / np.maximum(q80_numpy(W[n][l] if isinstance(W[n], list) else W[n], gs)[1], 1e-30)[:, None]))
                    for n in ("emb", "wq", "wo", "w1", "w2", "cls") for l in range(p["layers"]))
        tap.ok(0 < e_full < 0.25 and e_deq <= TOL and steps <= 0.5 + 1e-5,
               "%s: loaded back, its logits against the float32 model's: max |diff| %.3g, relative %.2e (< 0.25); "
               "largest weight error %.4f steps (<= 0.5); against the dequantized weights %.1e (<= %g)"
               % (name, float(np.max(np.abs(g - full))), e_full, steps, e_deq, TOL))
        back = out + ".back"
        rc, _, err = glassbox(["export-model", out, "--llama2c", back, "--version", "2"])
        tap.ok(rc == 0 and open(back, "rb").read() == got, "%s: glassbox's version 2 file written back as version 2 "
               "is the same file" % name, err)
    for name in ("v2-q8-unshared", "v2-q8-shared"):
        path = files[name][0]
        back = path + ".back"
        rc, _, err = glassbox(["export-model", path, "--llama2c", back, "--version", "2"])
        tap.ok(rc == 0 and open(back, "rb").read() == open(path, "rb").read(),
               "%s: written back as version 2, bit for bit (its group size 16 kept)" % name, err)
    # A file whose scales were computed as max * fl(1/127) (as some torch versions divide by a
    # scalar): quantizing its dequantized weights again would move some scales by one unit in the
    # last place, so only a writer that keeps what it loaded gives the file back.
    path, p, D, _ = files["v2-q8-unshared"]
    rng = np.random.default_rng(5)
    p, W = random_model(rng, dim=64, hidden=128, layers=2, heads=4, kv=2, vocab=p["vocab"], seq=16, shared=False)
    recip = np.float32(1) / np.float32(127)
    gs, parts, deq = 32, [v_header(p, 2, 32)], {}
    for t in W["ln1"] + W["ln2"] + [W["final"]]:
        parts.append(f32(t))
    for n in ["emb"] + ["%s%d" % (k, l) for k in ("wq", "wk", "wv", "wo", "w1", "w2", "w3") for l in range(2)] + ["cls"]:
        w = W[n] if n in W else W[n[:2]][int(n[2:])]
        g = w.reshape(-1, gs)
        sc = (np.abs(g).max(1) * recip).astype(np.float32)
        q = np.rint(g / sc[:, None]).astype(np.int8)
        parts.append(q.tobytes() + f32(sc))
        deq[n] = (q.astype(np.float32) * sc[:, None]).reshape(w.shape)
    path = os.path.join(tmp, "recip.bin")
    with open(path, "wb") as f:
        f.write(b"".join(parts))
    D = {"emb": deq["emb"], "cls": deq["cls"], "ln1": W["ln1"], "ln2": W["ln2"], "final": W["final"]}
    for k in ("wq", "wk", "wv", "wo", "w1", "w2", "w3"):
        D[k] = [deq["%s%d" % (k, l)] for l in range(2)]
    again = v2_bytes_numpy(p, D, gs)
    moved = sum(a != b for a, b in zip(again[::4], open(path, "rb").read()[::4]))
    back = path + ".back"
    rc, _, err = glassbox(["export-model", path, "--llama2c", back, "--version", "2"])
    tap.ok(rc == 0 and again != open(path, "rb").read() and open(back, "rb").read() == open(path, "rb").read(),
           "scales made as max * (1/127): quantizing again would differ (%d words), glassbox writes the file back "
           "bit for bit" % moved, err)


# ---------------------------------------------------------------------------------------------
# the forward pass, from run.c's conventions
# ---------------------------------------------------------------------------------------------

def rmsnorm(x, g):
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + 1e-5) * g


def rope(x, adjacent):
    """x (T, n, hs): pair i of each head rotates by pos * 10000^(-2i/hs)."""
    T, n, hs = x.shape
    pos = torch.arange(T, dtype=torch.float64)[:, None]
    ang = pos * (10000.0 ** (-torch.arange(0, hs, 2, dtype=torch.float64) / hs))[None, :]
    c, s = torch.cos(ang)[:, None, :], torch.sin(ang)[:, None, :]
    if adjacent:
        a, b = x[..., 0::2], x[..., 1::2]
        out = torch.empty_like(x)
        out[..., 0::2] = a * c - b * s
        out[..., 1::2] = a * s + b * c
        return out
    a, b = x[..., : hs // 2], x[..., hs // 2:]
    return torch.cat([a * c - b * s, a * s + b * c], -1)


def forward(p, W, ids, adjacent=True):
    t = lambda a: torch.from_numpy(np.asarray(a, dtype=np.float64))
    H, K, hs = p["heads"], p["kv"], p["dim"] // p["heads"]
    x = t(W["emb"])[ids]
    T = len(ids)
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    for l in range(p["layers"]):
        h = rmsnorm(x, t(W["ln1"][l]))
        q = (h @ t(W["wq"][l]).T).reshape(T, H, hs)
        k = (h @ t(W["wk"][l]).T).reshape(T, K, hs)
        v = (h @ t(W["wv"][l]).T).reshape(T, K, hs)
        q, k = rope(q, adjacent), rope(k, adjacent)
        heads = []
        for hh in range(H):
            kv = hh // (H // K)
            sc = (q[:, hh] @ k[:, kv].T) / np.sqrt(hs)
            sc = sc.masked_fill(mask, float("-inf"))
            heads.append(torch.softmax(sc, -1) @ v[:, kv])
        x = x + torch.cat(heads, -1) @ t(W["wo"][l]).T
        h = rmsnorm(x, t(W["ln2"][l]))
        a = h @ t(W["w1"][l]).T
        x = x + ((a * torch.sigmoid(a)) * (h @ t(W["w3"][l]).T)) @ t(W["w2"][l]).T
    return (rmsnorm(x, t(W["final"])) @ t(W["cls"]).T).numpy()


# ---------------------------------------------------------------------------------------------
# tokenizer.bin and run.c's encode
# ---------------------------------------------------------------------------------------------

def make_vocab(rng):
    """<unk>, BOS, EOS, the 256 byte pieces, single characters, then merged pieces with scores
    (some equal, one spelled twice) -- a SentencePiece-like vocabulary as tokenizer.py exports."""
    pieces = [b"<unk>", b"\n<s>\n", b"\n</s>\n"] + [("<0x%02X>" % b).encode() for b in range(256)]
    scores = [0.0] * len(pieces)
    chars = list(" abcdefghijklmnopqrstuvwxyzTOSH.,'!0123456789") + ["é", "ü", "中", "文"]
    for ch in chars:
        pieces.append(ch.encode())
        scores.append(-1000.0 - len(pieces))
    words = [" the", " a", " and", " cat", " sat", " on", " mat", "ing", " Once", " upon", " time", " there",
             " was", " happy", " little", " dog", " played", " sun", "ed", "er", " 12", "00", " é", "中文", " ",
             "  ", "    ", "th", "he", "at", "an", "in", " t", " s", " o", " w", " h", " d", " p", "ll", "tt", "ee"]
    merged = set()
    for w in words:
        b = w.encode()
        for i in range(2, len(b) + 1):
            pre = b[:i]
            if pre not in merged and pre.decode("utf-8", "ignore").encode() == pre and pre not in pieces:
                merged.add(pre)
    merged = sorted(merged, key=lambda s: (len(s), s))
    for i, m in enumerate(merged):
        pieces.append(m)
        scores.append(float(-(i // 3)))  # groups of three share a score: ties are resolved leftmost
    pieces.append(b" the")  # the same piece again at a higher id: the lower id is the piece
    scores.append(5.0)
    return pieces, scores


def write_tokenizer(path, pieces, scores):
    with open(path, "wb") as f:
        f.write(struct.pack("<I", max(len(p) for p in pieces)))
        for pc, sc in zip(pieces, scores):
            f.write(struct.pack("<fi", sc, len(pc)))
            f.write(pc)


def encode(pieces, scores, text, bos=True):
    """run.c's encode, transcribed from its algorithm."""
    look = {}
    for i, pc in enumerate(pieces):
        look.setdefault(pc, i)
    sc = np.asarray(scores, dtype=np.float32)
    b = text.encode("utf-8") if isinstance(text, str) else text
    toks = [1] if bos else []
    if b:
        toks.append(look[b" "])
    i = 0
    while i < len(b):
        j = i + 1
        while j < len(b) and (b[j] & 0xC0) == 0x80 and j - i < 4:
            j += 1
        cp = b[i:j]
        if cp in look:
            toks.append(look[cp])
        else:
            toks.extend(x + 3 for x in cp)
        i = j
    while True:
        best, at = np.float32(-1e10), -1
        for i in range(len(toks) - 1):
            m = look.get(pieces[toks[i]] + pieces[toks[i + 1]])
            if m is not None and sc[m] > best:
                best, at = sc[m], i
        if at < 0:
            break
        toks[at:at + 2] = [look[pieces[toks[at]] + pieces[toks[at + 1]]]]
    return toks


# ---------------------------------------------------------------------------------------------

def glassbox(args, env=None, script=None):
    e = dict(os.environ)
    e.pop("GLASSBOX_KERNELS", None)
    e.update(env or {})
    cmd = [BIN] + (["-c", script] if script is not None else args)
    p = subprocess.run(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace").strip()


def logits_of(path, ids, kernels):
    out = path + ".%s.npy" % kernels
    if os.path.exists(out):
        os.remove(out)
    rc, _, err = glassbox(None, {"GLASSBOX_KERNELS": kernels} if kernels == "ref" else {},
                          "load %s; run --ids %s; dump logits %s" % (path, " ".join(map(str, ids)), out))
    if rc:
        return None, err
    return np.load(out).astype(np.float64), None


def rel(g, t):
    return float(np.max(np.abs(g - t)) / np.max(np.abs(t)))


def main(argv):
    global BIN, KEEP
    i = 1
    while i < len(argv):
        if argv[i] == "--bin":
            BIN = argv[i + 1]
            i += 1
        elif argv[i] == "--keep":
            KEEP = True
        i += 1
    tap = Tap()
    tmp = tempfile.mkdtemp(prefix="gb_l2c.")
    try:
        run_all(tap, tmp)
    finally:
        if not KEEP:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print("# kept " + tmp)
    print("1..%d" % tap.n)
    return 1 if tap.failed else 0


def run_all(tap, tmp):
    rng = np.random.default_rng(7)
    pieces, scores = make_vocab(rng)
    V = len(pieces)
    ids = [1, 300, 45, 77, 3, 260, 299, 12, 100, V - 1, 5, 6, 280]
    variants = [
        ("legacy-shared", dict(dim=32, hidden=48, layers=2, heads=4, kv=2, vocab=V, seq=64, shared=True), "legacy"),
        ("legacy-unshared", dict(dim=32, hidden=40, layers=2, heads=4, kv=1, vocab=V, seq=16, shared=False), "legacy"),
        ("v1-shared", dict(dim=48, hidden=64, layers=3, heads=6, kv=2, vocab=V, seq=20, shared=True), "v1"),
        ("v1-unshared", dict(dim=32, hidden=48, layers=2, heads=4, kv=4, vocab=V, seq=16, shared=False), "v1"),
        ("v2-q8-unshared", dict(dim=32, hidden=64, layers=2, heads=4, kv=2, vocab=V, seq=16, shared=False), "v2"),
        ("v2-q8-shared", dict(dim=32, hidden=48, layers=2, heads=2, kv=1, vocab=V, seq=16, shared=True), "v2"),
    ]
    files = {}
    for name, cfg, kind in variants:
        p, W = random_model(rng, **cfg)
        d = os.path.join(tmp, name)
        os.makedirs(d)
        path = os.path.join(d, "model.bin")
        if kind == "legacy":
            write_legacy(path, p, W)
        elif kind == "v1":
            write_v1(path, p, W)
        else:
            W = write_v2(path, p, W, 16)
        write_tokenizer(os.path.join(d, "tokenizer.bin"), pieces, scores)
        files[name] = (path, p, W, kind)
        want = forward(p, W, ids)
        half = forward(p, W, ids, adjacent=False)
        tap.ok(rel(half, want) > 100 * TOL, "%s: a rotate-half forward differs (rel %.2g), so the test sees the pairing"
               % (name, rel(half, want)))
        for k in ("ref", "fast"):
            g, err = logits_of(path, ids, k)
            if g is None or g.shape != want.shape:
                tap.ok(False, "%s [%s]: glassbox logits" % (name, k), err or "shape %s" % (g.shape,))
                continue
            r = rel(g, want)
            tap.ok(r <= TOL, "%s [%s]: logits match the PyTorch forward (rel err %.2e <= %g)" % (name, k, r, TOL))

    # Round trips: the same layout back, bit for bit.
    for name, (path, p, W, kind) in files.items():
        if kind == "v2":
            continue
        out = path + ".back"
        rc, _, err = glassbox(["export-model", path, "--llama2c", out] + (["--version", "1"] if kind == "v1" else []))
        same = rc == 0 and open(out, "rb").read() == open(path, "rb").read()
        tap.ok(same, "%s: export-model --llama2c writes the file back bit for bit" % name, err)
    # Across layouts: legacy -> version 1 equals the v1 file written here, and back again.
    path, p, W, _ = files["legacy-unshared"]
    ref1 = os.path.join(tmp, "ref-v1.bin")
    write_v1(ref1, p, W)
    out1 = os.path.join(tmp, "legacy-to-v1.bin")
    rc, _, err = glassbox(["export-model", path, "--llama2c", out1, "--version", "1"])
    tap.ok(rc == 0 and open(out1, "rb").read() == open(ref1, "rb").read(),
           "legacy -> version 1 equals the version 1 file of the same weights", err)
    out0 = os.path.join(tmp, "v1-to-legacy.bin")
    rc, _, err = glassbox(["export-model", out1, "--llama2c", out0])
    tap.ok(rc == 0 and open(out0, "rb").read() == open(path, "rb").read(),
           "... and version 1 -> legacy gives the original file back (freq_cis recomputed)", err)
    # Q8_0 -> version 1: the dequantized weights.
    for name in ("v2-q8-unshared", "v2-q8-shared"):
        path, p, D, _ = files[name]
        ref = path + ".deq-v1"
        write_v1(ref, p, D)
        out = path + ".v1"
        rc, _, err = glassbox(["export-model", path, "--llama2c", out, "--version", "1"])
        tap.ok(rc == 0 and open(out, "rb").read() == open(ref, "rb").read(),
               "%s: exported as version 1, the file of its dequantized weights" % name, err)

    check_q8_write(tap, tmp, files, ids)

    # info says what was loaded.
    path = files["v2-q8-unshared"][0]
    rc, out, err = glassbox(None, script="load %s; info" % path)
    out1 = re.sub(r"\n {12}(?=\S)", " ", out)  # info's wrapped values joined back
    tap.ok(rc == 0 and "int8 Q8_0 weights (groups of 16) dequantized to float32" in out1 and "adjacent pairs" in out1,
           "info of a Q8_0 checkpoint says it was dequantized and names the RoPE pairing", out + err)

    # Tokenization through the program: tokenizer.bin beside the checkpoint, and --tokenizer.
    # (the command line drops leading and trailing blanks: t_llama2c.c covers those)
    texts = ["Once upon a time there was a happy little dog", "the cat sat on the mat", "a", "two  spaces",
             "x    indented", "thethethe", "tttt eeee llll", "1200 12 00 1", "é ü 中文 中", "emoji 🙂 and ☃",
             "Ünïcödé", "THE CAT", "it's", "played, sat. on!", "x" * 40, "the the the the the", "sun" * 7,
             "mixed 中文 text with ümlauts and 12345", "a\t tab", "space before the end !"]
    path = files["legacy-shared"][0]
    lines, outs = [], []
    for k, t in enumerate(texts):
        o = os.path.join(tmp, "tok%d.npy" % k)
        outs.append(o)
        lines.append("run %s\ndump tokens %s" % (t, o))
    script = os.path.join(tmp, "tok.gb")
    with open(script, "w", encoding="utf-8") as f:
        f.write("load %s\n" % path + "\n".join(lines) + "\n")
    rc, _, err = glassbox([script])
    bad = []
    for k, t in enumerate(texts):
        want = encode(pieces, scores, t)
        try:
            got = [int(x) for x in np.load(outs[k]).reshape(-1)]
        except Exception as e:  # noqa: BLE001
            got = "unreadable (%s)" % e
        if got != want:
            bad.append("%r: glassbox %s, run.c's encode %s" % (t, got, want))
    tap.ok(rc == 0 and not bad, "run TEXT with tokenizer.bin beside the checkpoint: ids equal run.c's encode on %d texts"
           % len(texts), (err + "\n" + "\n".join(bad[:5])).strip())
    # `tokenize TEXT` lists the same ids with their pieces; --steps is refused in one line
    t = texts[0]
    rc, out, err = glassbox(["-c", "load %s; tokenize %s" % (path, t)])
    got = [int(l.split()[0]) for l in out.splitlines() if l.strip()]
    tap.ok(rc == 0 and got == encode(pieces, scores, t),
           "tokenize on a llama2.c model lists run.c's ids (%d of them)" % len(got), out + err)
    rc, out, err = glassbox(["-c", "load %s; tokenize --steps %s" % (path, t)])
    tap.ok(rc != 0 and len(err.strip().splitlines()) == 1 and "tokenizer.bin shows its ids and pieces only" in err,
           "tokenize --steps on a llama2.c model: one line saying why not", err)
    moved = os.path.join(tmp, "elsewhere.bin")
    shutil.copy(path, moved)
    o = os.path.join(tmp, "tokx.npy")
    rc, _, err = glassbox(None, script="load %s --tokenizer %s; run the cat sat; dump tokens %s"
                          % (moved, os.path.join(os.path.dirname(path), "tokenizer.bin"), o))
    tap.ok(rc == 0 and [int(x) for x in np.load(o).reshape(-1)] == encode(pieces, scores, "the cat sat"),
           "load FILE --tokenizer TOKENIZER.bin", err)
    rc, _, err = glassbox(None, script="load %s; run the cat" % moved)
    tap.ok(rc != 0 and "no tokenizer" in err, "without tokenizer.bin, run TEXT says so (%s)" % err)

    # Broken files: one line, non-zero exit.
    good = open(files["legacy-unshared"][0], "rb").read()
    goodv2 = open(files["v2-q8-unshared"][0], "rb").read()
    tokb = open(os.path.join(os.path.dirname(path), "tokenizer.bin"), "rb").read()
    cases = [
        ("empty file", b"", "empty file"),
        ("3 bytes", b"abc", "too short for a llama2.c checkpoint"),
        ("cut short", good[:-4], "bytes, but a llama2.c legacy checkpoint of these sizes"),
        ("one float too many", good + b"\0\0\0\0", "bytes, but a llama2.c legacy checkpoint"),
        ("negative n_layers", good[:8] + struct.pack("<i", -2) + good[12:], "n_layers is -2"),
        ("heads not dividing dim", good[:12] + struct.pack("<i", 5) + good[16:], "not a multiple of n_heads"),
        ("kv heads not dividing", good[:16] + struct.pack("<i", 3) + good[20:], "must divide"),
        ("huge dim", struct.pack("<i", 1 << 30) + good[4:], "too large"),
        ("version 3", goodv2[:4] + struct.pack("<i", 3) + goodv2[8:], "version 3"),
        ("bad shared flag", goodv2[:36] + b"\x07" + goodv2[37:], "shared-classifier flag is 7"),
        ("group size 0", goodv2[:37] + struct.pack("<i", 0) + goodv2[41:], "group size 0"),
        ("group size 5", goodv2[:37] + struct.pack("<i", 5) + goodv2[41:], "not a multiple of the group size 5"),
        ("v2 cut short", goodv2[:-1], "version 2 checkpoint of these sizes"),
        ("NaN weight", good[:100] + struct.pack("<f", float("nan")) + good[104:], "NaN"),
    ]
    d = os.path.join(tmp, "broken")
    os.makedirs(d)
    for desc, data, want in cases:
        f = os.path.join(d, "m.bin")
        with open(f, "wb") as fh:
            fh.write(data)
        rc, _, err = glassbox(None, script="load %s" % f)
        tap.ok(rc != 0 and want in err and "\n" not in err, "broken checkpoint, %s: refused (%s)" % (desc, err))
    with open(os.path.join(d, "m.bin"), "wb") as fh:
        fh.write(good)
    tok_cases = [
        ("tokenizer.bin cut short", tokb[:-3], "ends inside token"),
        ("tokenizer.bin with a token too many", tokb + struct.pack("<fi", 0.0, 1) + b"x", "bytes after the model's"),
        ("a negative length", tokb[:8] + struct.pack("<i", -4) + tokb[12:], "has length -4"),
        ("a length past max_token_length", struct.pack("<I", 3) + tokb[4:], "max_token_length 3"),
        ("a NaN score", tokb[:4] + struct.pack("<f", float("nan")) + tokb[8:], "NaN score"),
    ]
    for desc, data, want in tok_cases:
        with open(os.path.join(d, "tokenizer.bin"), "wb") as fh:
            fh.write(data)
        rc, _, err = glassbox(None, script="load %s" % os.path.join(d, "m.bin"))
        tap.ok(rc != 0 and want in err and "\n" not in err, "broken %s: refused (%s)" % (desc, err))
    # A model llama2.c cannot hold is refused by name.
    rc, _, err = glassbox(None, script="init %s --preset llama; export-model %s --llama2c %s"
                          % (os.path.join(tmp, "hf"), os.path.join(tmp, "hf"), os.path.join(tmp, "hf.bin")))
    tap.ok(rc != 0 and "llama2.c cannot hold this model" in err and not os.path.exists(os.path.join(tmp, "hf.bin")),
           "export of a model llama2.c cannot hold: refused (%s)" % err)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
