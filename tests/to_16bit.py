#!/usr/bin/env python3
"""to_16bit.py SRC DST bf16|f16 -- a copy of a model folder whose model.safetensors holds every
2-D tensor as BF16 (round to nearest even) or F16, as hub checkpoints ship them (1-D tensors,
norms and biases, stay F32). Written from the safetensors layout: an 8-byte little-endian header
length, the JSON header, the data. Used by tests/t_16bit.sh; numpy only."""
import json, os, shutil, struct, sys
import numpy as np

def main(src, dst, kind):
    os.makedirs(dst, exist_ok=True)
    for f in os.listdir(src):
        if f != "model.safetensors":
            shutil.copy(os.path.join(src, f), os.path.join(dst, f))
    raw = open(os.path.join(src, "model.safetensors"), "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    head = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    out_head, blobs, off = {}, [], 0
    for name, t in sorted(((k, v) for k, v in head.items() if k != "__metadata__"), key=lambda kv: kv[1]["data_offsets"][0]):
        a = np.frombuffer(data[t["data_offsets"][0]:t["data_offsets"][1]], dtype="<f4").reshape(t["shape"])
        if a.ndim == 2:
            if kind == "bf16":
                u = a.astype("<f4").view("<u4").astype(np.uint64)
                b = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype("<u2")
                dt = "BF16"
            else:
                b = a.astype("<f2")
                dt = "F16"
            blob = b.tobytes()
        else:
            blob, dt = a.astype("<f4").tobytes(), "F32"
        out_head[name] = {"dtype": dt, "shape": t["shape"], "data_offsets": [off, off + len(blob)]}
        blobs.append(blob)
        off += len(blob)
    h = json.dumps(out_head).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(os.path.join(dst, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))

if __name__ == "__main__":
    main(*sys.argv[1:4])
