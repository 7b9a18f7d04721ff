#!/usr/bin/env python3
"""hub_folder.py -- rewrite a glassbox model folder (from `init` or `export-model --safetensors`)
in the layout the Hugging Face hub ships a family in, so tests can load what a teacher downloads
without downloading it. Standard library only.

    hub_folder.py SRC DST gpt2  [--shards N] [--tokenizer FILE]
    hub_folder.py SRC DST llama [--shards N] [--tokenizer FILE] [--bos N --eos N] [--inv-freq]
    hub_folder.py --tokenizer-bin OUT.bin N

gpt2: as GPT2LMHeadModel's checkpoints hold it: every weight under "transformer.", each layer's
causal-mask buffers transformer.h.N.attn.bias (1, 1, C, C) and attn.masked_bias, and
lm_head.weight stored although tied (a copy of wte). llama: LlamaForCausalLM's names ("model."
and lm_head, tied or not as SRC is), with --inv-freq each layer's rotary inv_freq buffer as
older checkpoints carry it. Both: config.json as the hub writes it (no "glassbox" block:
the loader must read the family's own fields), the weights' bytes and dtypes as SRC stores them
(F32 or BF16), in one model.safetensors or N shards named by model.safetensors.index.json;
--tokenizer FILE replaces tokenizer.json (a real vocabulary, e.g. from tests/tok_npm.mjs).

--tokenizer-bin writes a llama2.c tokenizer.bin of N pieces (N >= 324) as llama2.c's
tokenizer.py lays one out: <unk>, <s>, </s>, the 256 byte pieces <0x00>..<0xFF>, then a space,
letters, digits and punctuation, then merged pieces of English, the earlier the higher the score.
"""
import json
import os
import shutil
import struct
import sys


def read_st(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        head = json.loads(f.read(n))
        data = f.read()
    out = []
    for name, t in head.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        out.append((name, t["dtype"], t["shape"], data[a:b]))
    return out


def write_st(path, tensors):
    head, off, blobs = {"__metadata__": {"format": "pt"}}, 0, []
    for name, dtype, shape, raw in tensors:
        head[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + len(raw)]}
        off += len(raw)
        blobs.append(raw)
    h = json.dumps(head, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


MERGES = ["th", "he", "in", "er", "an", "re", "on", "at", "en", "nd", "ed", "es", "or", "te", "ti",
          "is", "it", "ar", "al", "st", "to", "nt", "ng", "se", "ha", "ou", "ea", "le", "ve", "me"]


def tokenizer_bin(path, n):
    pieces = [b"<unk>", b"\n<s>\n", b"\n</s>\n"] + [b"<0x%02X>" % b for b in range(256)]
    chars = " abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789,.'"
    pieces += [c.encode() for c in chars]
    words = [" " + m for m in MERGES] + MERGES + [" the", " a", " and", " was", " there", " time", " upon", " once"]
    for w in words:
        if len(pieces) < n and w.encode() not in pieces:
            pieces.append(w.encode())
    k = 0
    while len(pieces) < n:  # more merged pieces: two letters and a space
        pieces.append((" " + chr(97 + k // 26) + chr(97 + k % 26)).encode())
        k += 1
    if len(pieces) != n or len(set(pieces)) != n:
        raise SystemExit("hub_folder.py: cannot make %d distinct pieces" % n)
    with open(path, "wb") as f:
        f.write(struct.pack("<I", max(len(p) for p in pieces)))
        for i, p in enumerate(pieces):
            score = 0.0 if i < 259 + len(chars) else -float(i - 259 - len(chars))
            f.write(struct.pack("<fi", score, len(p)) + p)


def main(argv):
    if len(argv) == 4 and argv[1] == "--tokenizer-bin":
        tokenizer_bin(argv[2], int(argv[3]))
        return 0
    if len(argv) < 4 or argv[3] not in ("gpt2", "llama"):
        sys.stderr.write(__doc__)
        return 2
    src, dst, fam = argv[1], argv[2], argv[3]
    shards, tok, bos, eos, inv_freq = 1, None, None, None, False
    i = 4
    while i < len(argv):
        if argv[i] == "--shards":
            shards = int(argv[i + 1]); i += 2
        elif argv[i] == "--tokenizer":
            tok = argv[i + 1]; i += 2
        elif argv[i] == "--bos":
            bos = int(argv[i + 1]); i += 2
        elif argv[i] == "--eos":
            eos = int(argv[i + 1]); i += 2
        elif argv[i] == "--inv-freq":
            inv_freq = True; i += 1
        else:
            sys.stderr.write("hub_folder.py: unknown option %s\n" % argv[i])
            return 2
    with open(os.path.join(src, "config.json")) as f:
        cfg = json.load(f)
    tensors = read_st(os.path.join(src, "model.safetensors"))
    cfg.pop("glassbox", None)
    dtype = {"F32": "float32", "BF16": "bfloat16", "F16": "float16"}[tensors[0][1]]
    out = []
    if fam == "gpt2":
        C, L = cfg["n_positions"], cfg["n_layer"]
        by = {}
        for name, dt, shape, raw in tensors:
            by[name] = (dt, shape, raw)
            out.append(("transformer." + name, dt, shape, raw))
        mask = b"".join(struct.pack("<%df" % C, *[1.0 if j <= r else 0.0 for j in range(C)]) for r in range(C))
        for l in range(L):
            out.append(("transformer.h.%d.attn.bias" % l, "F32", [1, 1, C, C], mask))
            out.append(("transformer.h.%d.attn.masked_bias" % l, "F32", [], struct.pack("<f", -1e4)))
        dt, shape, raw = by["wte.weight"]
        out.append(("lm_head.weight", dt, shape, raw))
        cfg["architectures"] = ["GPT2LMHeadModel"]
        cfg.pop("tie_word_embeddings", None)  # GPT-2's config.json leaves it to the default (tied)
    else:
        out = list(tensors)
        if inv_freq:
            d = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
            theta = cfg.get("rope_theta", 10000.0)
            inv = struct.pack("<%df" % (d // 2), *[theta ** (-2.0 * k / d) for k in range(d // 2)])
            for l in range(cfg["num_hidden_layers"]):
                out.append(("model.layers.%d.self_attn.rotary_emb.inv_freq" % l, "F32", [d // 2], inv))
        cfg["architectures"] = ["LlamaForCausalLM"]
    cfg["torch_dtype"] = dtype
    if bos is not None:
        cfg["bos_token_id"] = bos
    if eos is not None:
        cfg["eos_token_id"] = eos
    os.makedirs(dst, exist_ok=True)
    with open(os.path.join(dst, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    shutil.copyfile(tok or os.path.join(src, "tokenizer.json"), os.path.join(dst, "tokenizer.json"))
    if shards <= 1:
        write_st(os.path.join(dst, "model.safetensors"), out)
        return 0
    per = -(-len(out) // shards)
    wmap, total = {}, 0
    for s in range(shards):
        part = out[s * per:(s + 1) * per]
        fn = "model-%05d-of-%05d.safetensors" % (s + 1, shards)
        write_st(os.path.join(dst, fn), part)
        for name, _, _, raw in part:
            wmap[name] = fn
            total += len(raw)
    with open(os.path.join(dst, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": wmap}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
