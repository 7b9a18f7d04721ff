#!/usr/bin/python3
"""make_seeds.py -- writes the fuzz harnesses' seed corpora (tests/fuzz/corpus/NAME/) and the
fixed files two harnesses load beside their input (model-config.json, shards/), from the
shipped files, the test fixtures and small models made here. Run from the repository root
after `make`: /usr/bin/python3 tests/fuzz/make_seeds.py. The files it writes are committed; it is here
so they can be made again."""
import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, "tests")
import llama2c_oracle as l2c  # noqa: E402  (its writers of llama2.c files)

C = "tests/fuzz/corpus"
G = "./glassbox"


def put(name, fname, data):
    os.makedirs(os.path.join(C, name), exist_ok=True)
    with open(os.path.join(C, name, fname), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def st_file(tensors, meta=None):
    """A safetensors file of (name, dtype, shape, bytes)."""
    h, off, body = {}, 0, b""
    if meta:
        h["__metadata__"] = meta
    for name, dt, shape, raw in tensors:
        h[name] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + len(raw)]}
        off += len(raw)
        body += raw
    hj = json.dumps(h, separators=(",", ":")).encode()
    hj += b" " * (-len(hj) % 8)
    return struct.pack("<Q", len(hj)) + hj + body


def main():
    shutil.rmtree(C, ignore_errors=True)
    tmp = tempfile.mkdtemp()
    # the fixed config of fz_safetensors and fz_index: GPT-2, d_model 8, 1 layer, vocab 16
    subprocess.run([G, "-c", "init %s/m --dim 8 --layers 1 --heads 2 --vocab 257 --context 8; "
                    "init %s/l --preset llama --dim 8 --layers 1 --heads 2 --kv-heads 1 --vocab 257 --context 8"
                    % (tmp, tmp)], check=True)
    cfg = json.load(open(tmp + "/m/config.json"))
    cfg["vocab_size"] = 16
    cfg["bos_token_id"] = cfg["eos_token_id"] = 15
    with open("tests/fuzz/model-config.json", "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    raw = open(tmp + "/m/model.safetensors", "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    hdr = json.loads(raw[8:8 + n])
    rng = np.random.default_rng(1)
    tensors = []
    for k, v in hdr.items():
        if k == "__metadata__":
            continue
        shape = [16, 8] if k == "wte.weight" else v["shape"]
        tensors.append((k, shape, rng.normal(0, 0.3, shape).astype(np.float32)))
    conv = {"F32": "<f4", "F16": "<f2", "F64": "<f8"}
    for dt, npdt in conv.items():
        put("safetensors", "gpt2-%s.safetensors" % dt.lower(),
            st_file([(k, dt, s, a.astype(npdt).tobytes()) for k, s, a in tensors], {"format": "pt"}))
    bf = [(k, "BF16", s, (a.view(np.uint32) >> 16).astype("<u2").tobytes()) for k, s, a in tensors]
    put("safetensors", "gpt2-bf16.safetensors", st_file(bf))
    # hub names (transformer.), a buffer it skips, and lm_head equal to the embedding
    hub = [("transformer." + k, "F32", s, a.tobytes()) for k, s, a in tensors]
    hub.append(("transformer.h.0.attn.bias", "F32", [1, 1, 8, 8], np.tril(np.ones((8, 8), np.float32)).tobytes()))
    hub.append(("lm_head.weight", "F32", [16, 8], tensors[0][2].tobytes()))
    put("safetensors", "gpt2-hub.safetensors", st_file(hub))
    # two shards and their index
    os.makedirs("tests/fuzz/shards", exist_ok=True)
    half = len(tensors) // 2
    parts = [tensors[:half], tensors[half:]]
    wm = {}
    for i, part in enumerate(parts):
        fn = "model-%05d-of-00002.safetensors" % (i + 1)
        with open("tests/fuzz/shards/" + fn, "wb") as f:
            f.write(st_file([(k, "F32", s, a.tobytes()) for k, s, a in part]))
        for k, _, _ in part:
            wm[k] = fn
    put("index", "index.json", json.dumps({"metadata": {"total_size": 0}, "weight_map": wm}, indent=2))
    put("index", "index-one.json", json.dumps({"weight_map": {k: "model-00001-of-00002.safetensors" for k in wm}}))
    # config.json: the shipped models', the small ones made here
    for i, p in enumerate(sorted(glob.glob("assets/models/*/config.json")) + [tmp + "/m/config.json", tmp + "/l/config.json",
                                                                          "tests/fuzz/model-config.json"]):
        put("config", "config-%d.json" % i, open(p, "rb").read())
    # tokenizer.json: shipped, fixtures (GPT-2 and SentencePiece-style)
    for i, p in enumerate(sorted(glob.glob("assets/models/*/tokenizer.json")) + sorted(glob.glob("tests/fixtures/*/tokenizer.json"))
                          + [tmp + "/m/tokenizer.json"]):
        put("tokenizer_json", "tokenizer-%d.json" % i, open(p, "rb").read())
    # vocab.json NUL merges.txt
    fx = "tests/fixtures/gpt2-mini/"
    put("vocab_merges", "gpt2-mini", open(fx + "vocab.json", "rb").read() + b"\0" + open(fx + "merges.txt", "rb").read())
    put("vocab_merges", "tiny", b'{"a": 0, "b": 1, "ab": 2, "<|endoftext|>": 3}\0#version: 0.2\na b\n')
    # llama2.c checkpoints: legacy, version 1 and version 2 (Q8_0) of a small Llama
    r = np.random.default_rng(2)
    for shared in (True, False):
        p, W = l2c.random_model(r, 16, 32, 1, 2, 1, 32, 8, shared)
        s = "shared" if shared else "cls"
        l2c.write_legacy(tmp + "/a.bin", p, W)
        put("llama2c", "legacy-%s.bin" % s, open(tmp + "/a.bin", "rb").read())
        l2c.write_v1(tmp + "/b.bin", p, W)
        put("llama2c", "v1-%s.bin" % s, open(tmp + "/b.bin", "rb").read())
        l2c.write_v2(tmp + "/c.bin", p, W, 16)
        put("llama2c", "v2-%s.bin" % s, open(tmp + "/c.bin", "rb").read())
    # tokenizer.bin: 4 bytes of vocabulary size, then the file
    pieces = [b"<unk>", b"<s>", b"</s>"] + [("<0x%02X>" % b).encode() for b in range(256)] + \
             [b" ", b"e", b"t", b"he", b" t", b" the", b"\xc3\xa9", b"Once", b" upon"]
    scores = [0.0, 0.0, 0.0] + [0.0] * 256 + [-float(i) for i in range(9)]
    l2c.write_tokenizer(tmp + "/t.bin", pieces, scores)
    put("l2c_tok", "bytes.bin", struct.pack("<I", len(pieces)) + open(tmp + "/t.bin", "rb").read())
    small = [b"<unk>", b"<s>", b"</s>", b" ", b"a", b"b", b" a", b"ab"]
    l2c.write_tokenizer(tmp + "/u.bin", small, [0, 0, 0, -1, -2, -3, -4, -5])
    put("l2c_tok", "small.bin", struct.pack("<I", len(small)) + open(tmp + "/u.bin", "rb").read())
    # lessons: the shipped ones
    for p in sorted(glob.glob("lessons/*.lesson")):
        put("lesson", os.path.basename(p), open(p, "rb").read())
    # calc: every calc:/pick:/expect: expression of the shipped lessons
    seen = set()
    for p in sorted(glob.glob("lessons/*.lesson")):
        for line in open(p, encoding="utf-8"):
            for key in ("calc:", "pick:"):
                if key in line:
                    e = line.split(key, 1)[1].strip()
                    if e and e not in seen:
                        seen.add(e)
    for i, e in enumerate(sorted(seen)):
        put("calc", "e%03d" % i, e.replace("$", ""))
    put("calc", "funcs", "softmax(2, 1, 2, 3) + round(sd(1, 2, 3), 2) - abs(-2)^2^0.5 >= log10(100) * cosine(x, 1, 2)")
    # commands: the README's and the lessons' command lines
    cmds = set()
    for p in sorted(glob.glob("lessons/*.lesson")):
        for line in open(p, encoding="utf-8"):
            if line.startswith("> "):
                cmds.add(line[2:].strip())
    cmds |= {"attn 1 2 --range 0 1", "print L1.attn.weights 2 --row -1", "next 5", "tokenize 'hello world'",
             "calc softmax 1, 2, 3 --causal", "heads", "ablate 1 1", "near the 5", "lens", "masks", "show embed.tok",
             "ffn 1 --units 65-128", "qkv 1 2", "scores 1 1", "pair", "compare", "arch", "step", "resid"}
    for i, c in enumerate(sorted(cmds)):
        put("command", "c%03d" % i, c)
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
