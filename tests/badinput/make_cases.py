"""make_cases.py DIR -- writes the broken files of t_badinput.sh into DIR: one folder or file
per case, each from a good file made by glassbox (DIR/good-gpt2, DIR/good-llama, made by the
test before this runs) with one thing broken. Standard library only."""
import json
import os
import struct
import sys

D = sys.argv[1]


def w(path, data):
    path = os.path.join(D, path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def rd(path):
    with open(os.path.join(D, path), "rb") as f:
        return f.read()


def lesson(body):
    return "# A test\n\n== One step\nSome prose.\n\n" + body


# ---- lessons: calc/pick expressions and the lesson parser -----------------------------------
deep = 50000
w("l/paren.lesson", lesson("? q\n= calc: " + "(" * deep + "1" + ")" * deep + "\n"))
w("l/neg.lesson", lesson("? q\n= calc: " + "-" * deep + "1\n"))
w("l/plus.lesson", lesson("? q\n= calc: " + "+" * deep + "1\n"))
w("l/pow.lesson", lesson("? q\n= calc: " + "2^" * deep + "1\n"))
w("l/abs.lesson", lesson("? q\n= calc: " + "abs(" * deep + "1" + ")" * deep + "\n"))
w("l/pick.lesson", lesson("? q\n= pick: " + "(" * deep + "1" + ")" * deep + "\na) x\nb) y\n"))
w("l/let.lesson", lesson("let X = calc: " + "(" * deep + "1" + ")" * deep + "\n"))
w("l/expect.lesson", lesson("expect: " + "(" * deep + "1" + ")" * deep + " > 0\n"))
w("l/div0.lesson", lesson("? q\n= calc: 1/0\n"))
w("l/negdiv0.lesson", lesson("? q\n= calc: -1/0\n"))
w("l/nan.lesson", lesson("? q\n= calc: 0/0\n"))
w("l/inf.lesson", lesson("? q\n= calc: inf\n"))
w("l/letdiv0.lesson", lesson("let X = calc: 2/(1-1)\n\n? q\n= calc: $X\n"))
w("l/unclosed.lesson", lesson("? q\n= calc: (1 + 2\n"))
w("l/unknownfn.lesson", lesson("? q\n= calc: frob(2)\n"))
w("l/empty-calc.lesson", lesson("? q\n= calc:\n"))
w("l/undef.lesson", lesson("? q\n= calc: $NOPE + 1\n"))
w("l/noanswer.lesson", lesson("? a question without an answer\n\n== Next\nmore\n"))
w("l/badcmd.lesson", lesson("> frobnicate 3\n"))
w("l/pickopts.lesson", lesson("? q\n= pick: 1\n"))
w("l/args.lesson", lesson("? q\n= calc: max(" + ",".join(["1"] * 300) + ")\n"))
w("l/self.lesson", lesson("> lesson l/self.lesson\n"))
w("l/empty.lesson", "")
w("l/binary.lesson", b"\x00\xff\xfe garbage \x00\n")
os.makedirs(os.path.join(D, "d.npy"))

# ---- config.json -------------------------------------------------------------------------------
good = json.loads(rd("good-gpt2/config.json"))


def model_dir(name, cfg=None, st=None, raw_cfg=None):
    src = "good-gpt2"
    w(name + "/config.json", raw_cfg if raw_cfg is not None else json.dumps(cfg if cfg is not None else good))
    w(name + "/model.safetensors", st if st is not None else rd(src + "/model.safetensors"))


def cfg_with(**kv):
    c = json.loads(json.dumps(good))
    for k, v in kv.items():
        if v is None:
            c.pop(k, None)
        else:
            c[k] = v
    return c


model_dir("c/notjson", raw_cfg="{ this is not json")
model_dir("c/empty", raw_cfg="")
model_dir("c/array", raw_cfg="[1, 2, 3]")
model_dir("c/deep", raw_cfg="[" * 100000 + "]" * 100000)
model_dir("c/deepobj", raw_cfg='{"a":' * 5000 + "1" + "}" * 5000)
model_dir("c/notype", cfg_with(model_type=None))
model_dir("c/badtype", cfg_with(model_type="bert"))
model_dir("c/neglayers", cfg_with(n_layer=-3))
model_dir("c/hugeembd", cfg_with(n_embd=10 ** 12))
model_dir("c/strlayers", cfg_with(n_layer="two"))
model_dir("c/heads", cfg_with(n_head=3))
model_dir("c/act", cfg_with(activation_function="swish9"))
model_dir("c/vocab0", cfg_with(vocab_size=0))
model_dir("c/dup", raw_cfg=json.dumps(good)[:-1] + ', "n_layer": 1, "n_layer": 2}')

# ---- model.safetensors ------------------------------------------------------------------------
st = rd("good-gpt2/model.safetensors")
hl = struct.unpack("<Q", st[:8])[0]
hdr = json.loads(st[8:8 + hl])
body = st[8 + hl:]


def st_with(h, b=body, pad=True):
    hj = json.dumps(h).encode()
    if pad:
        hj += b" " * (-len(hj) % 8)
    return struct.pack("<Q", len(hj)) + hj + b


def hdr_with(fn):
    h = json.loads(json.dumps(hdr))
    fn(h)
    return h


first = [k for k in hdr if k != "__metadata__"][0]
model_dir("s/empty", st=b"")
model_dir("s/short", st=b"\x08\x00\x00")
model_dir("s/hugelen", st=struct.pack("<Q", 2 ** 63) + b"{}")
model_dir("s/lenpast", st=struct.pack("<Q", 10 ** 6) + b"{}")
model_dir("s/notjson", st=struct.pack("<Q", 8) + b"not json")
model_dir("s/deep", st=st_with(None, b"")[:0] + struct.pack("<Q", 200000) + b"[" * 100000 + b"]" * 100000)
model_dir("s/offpast", st=st_with(hdr_with(lambda h: h[first].update(data_offsets=[0, 10 ** 9]))))
model_dir("s/offneg", st=st_with(hdr_with(lambda h: h[first].update(data_offsets=[-8, 8]))))
model_dir("s/overlap", st=st_with(hdr_with(lambda h: [h[k].update(data_offsets=[0, h[k]["data_offsets"][1] - h[k]["data_offsets"][0]]) for k in list(h)[:3] if k != "__metadata__"])))
model_dir("s/dtype", st=st_with(hdr_with(lambda h: h[first].update(dtype="Q4_K"))))
model_dir("s/shape", st=st_with(hdr_with(lambda h: h[first].update(shape=[3, 3]))))
model_dir("s/negshape", st=st_with(hdr_with(lambda h: h[first].update(shape=[-1, 8]))))
model_dir("s/missing", st=st_with(hdr_with(lambda h: h.pop(first))))
model_dir("s/extra", st=st_with(hdr_with(lambda h: h.update({"stray.weight": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}))))
nan = bytearray(body)
o = hdr[first]["data_offsets"][0]
nan[o:o + 4] = struct.pack("<f", float("nan"))
model_dir("s/nan", st=st_with(hdr, bytes(nan)))
model_dir("s/cut", st=st[:-100])

# ---- sharded index ----------------------------------------------------------------------------
names = [k for k in hdr if k != "__metadata__"]


def idx_dir(name, index, shards=True):
    w(name + "/config.json", json.dumps(good))
    if shards:
        w(name + "/model-00001-of-00001.safetensors", st)
    w(name + "/model.safetensors.index.json", index if isinstance(index, (str, bytes)) else json.dumps(index))


idx_dir("i/notjson", "{ weight_map: ")
idx_dir("i/slash", {"weight_map": {k: "../model-00001-of-00001.safetensors" for k in names}})
idx_dir("i/missing", {"weight_map": {k: "model-00009-of-00009.safetensors" for k in names}})
idx_dir("i/nomap", {"metadata": {}})
idx_dir("i/deep", "[" * 100000 + "]" * 100000)
idx_dir("i/absent", {"weight_map": dict({k: "model-00001-of-00001.safetensors" for k in names}, **{"ghost.weight": "model-00001-of-00001.safetensors"})})

# ---- tokenizer.json ----------------------------------------------------------------------------
tj = json.loads(rd("good-gpt2/tokenizer.json"))


def tok_dir(name, t=None, raw=None):
    model_dir(name)
    w(name + "/tokenizer.json", raw if raw is not None else json.dumps(t))


def tj_with(fn):
    t = json.loads(json.dumps(tj))
    fn(t)
    return t


tok_dir("t/notjson", raw="{ not json")
tok_dir("t/deep", raw='{"model":' + "[" * 100000 + "]" * 100000 + "}")
tok_dir("t/model", tj_with(lambda t: t["model"].update(type="WordPiece")))
tok_dir("t/pretok", tj_with(lambda t: t.update(pre_tokenizer={"type": "Whitespace"})))
seq = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
for _ in range(300):
    seq = {"type": "Sequence", "pretokenizers": [seq]}
tok_dir("t/seqdeep", tj_with(lambda t: t.update(pre_tokenizer=seq)))
tok_dir("t/merge", tj_with(lambda t: t["model"].update(merges=["\u0120zz qq"] + t["model"]["merges"])))
tok_dir("t/gap", tj_with(lambda t: t["model"]["vocab"].update({"zzz": 99999})))
tok_dir("t/dup", raw=json.dumps(tj)[:-1] + ', "model": {}}')

# ---- vocab.json + merges.txt -------------------------------------------------------------------
vm = json.loads(rd("good-gpt2/tokenizer.json"))["model"]


def vm_dir(name, vocab, merges):
    model_dir(name)
    w(name + "/vocab.json", vocab if isinstance(vocab, str) else json.dumps(vocab))
    w(name + "/merges.txt", merges)


merges_txt = "#version: 0.2\n" + "".join(m + "\n" if isinstance(m, str) else " ".join(m) + "\n" for m in vm["merges"])
vm_dir("v/notjson", "[1, 2", merges_txt)
vm_dir("v/array", "[1, 2]", merges_txt)
vm_dir("v/merge", vm["vocab"], "#version: 0.2\nqq zz\n")
vm_dir("v/line", vm["vocab"], "#version: 0.2\nthree words here\n")

# ---- llama2.c checkpoints and tokenizer.bin ----------------------------------------------------
# a legacy (run.c) checkpoint: dim 16, hidden 32, 1 layer, 2 heads, 1 key/value head, vocab 260
# (shared classifier), seq_len 8; small random weights, norms 1
import random  # noqa: E402
rnd = random.Random(5)
dim, hid, nl, nh, nkv, nv, seq = 16, 32, 1, 2, 1, 260, 8
hs = dim // nh


def floats(n, one=False):
    return struct.pack("<%df" % n, *[1.0 if one else rnd.uniform(-0.3, 0.3) for _ in range(n)])


ll = struct.pack("<7i", dim, hid, nl, nh, nkv, nv, seq) + floats(nv * dim) + floats(nl * dim, True) + \
    floats(nl * dim * dim) + floats(nl * dim * nkv * hs) * 2 + floats(nl * dim * dim) + floats(nl * dim, True) + \
    floats(nl * hid * dim) * 3 + floats(dim, True) + floats(seq * hs // 2) * 2
w("good-llama.bin", ll)
w("b/short.bin", ll[:20])
w("b/negdim.bin", struct.pack("<7i", -8, 32, 1, 2, 1, 32, 8) + ll[28:])
w("b/huge.bin", struct.pack("<7i", 2 ** 30, 2 ** 30, 2 ** 30, 1, 1, 2 ** 30, 2 ** 30) + ll[28:])
w("b/cut.bin", ll[:-4])
w("b/heads.bin", struct.pack("<7i", 16, 32, 1, 3, 1, 32, 8) + ll[28:])
w("b/version.bin", struct.pack("<Ii", 0x616b3432, 7) + b"\0" * 248)
w("b/v1short.bin", struct.pack("<Ii", 0x616b3432, 1) + b"\0" * 100)
# n_kv_heads 1795162113: 2 * n_kv_heads overflowed an int in the size check (the fuzzer's find)
w("b/kvheads.bin", struct.pack("<7i", 16, 32, 1, 2, 1795162113, 32, 8) + ll[28:])
nv = abs(struct.unpack("<7i", ll[:28])[5])
pieces = [b"<unk>", b"<s>", b"</s>"] + [("<0x%02X>" % b).encode() for b in range(256)] + [b" ", b"e", b"th"]
pieces = pieces[:nv] + [("p%d" % i).encode() for i in range(nv - len(pieces))]
tb = struct.pack("<I", max(map(len, pieces))) + b"".join(struct.pack("<fi", -float(i), len(p)) + p for i, p in enumerate(pieces))
w("k/tokenizer-good.bin", tb)
w("k/model.bin", ll)
w("k/tokenizer-cut.bin", tb[:-3])
w("k/tokenizer-neglen.bin", tb[:4] + struct.pack("<fi", 0.0, -5) + tb[12:])
w("k/tokenizer-few.bin", tb[:4] + struct.pack("<fi", 0.0, 1) + b"a")
