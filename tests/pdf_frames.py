#!/usr/bin/env python3
"""pdf_frames.py FILE.pdf — the figures glassbox placed on each page of a PDF it wrote.

pdfdoc.c frames every figure it places with a hairline (stroke 0.8 0.8 0.8 RG, then
"x y w h re S"); this reads the page content streams (Flate, as cairo writes them), in page
order, and prints one line per page: "PAGE W H N x y w h ..." with the page size in points,
the number of framed figures and each one's rectangle. Independent of cairo: zlib and regular
expressions over the file's bytes."""
import re
import sys
import zlib

data = open(sys.argv[1], "rb").read()
objs = {}
for m in re.finditer(rb"(\d+) 0 obj(.*?)endobj", data, re.S):
    objs[int(m.group(1))] = m.group(2)


def stream(body):
    m = re.search(rb"stream\r?\n(.*?)endstream", body, re.S)
    if not m:
        return b""
    raw = m.group(1)
    return zlib.decompress(raw) if b"FlateDecode" in body[: m.start()] else raw


def pages(num):
    body = objs[num]
    if re.search(rb"/Type\s*/Pages", body):
        kids = re.search(rb"/Kids\s*\[(.*?)\]", body, re.S).group(1)
        for k in re.findall(rb"(\d+) 0 R", kids):
            yield from pages(int(k))
    else:
        yield num


cat = next(n for n, b in objs.items() if re.search(rb"/Type\s*/Catalog", b))
root = int(re.search(rb"/Pages\s+(\d+) 0 R", objs[cat]).group(1))
num = 0
for p in pages(root):
    num += 1
    body = objs[p]
    box = re.search(rb"/MediaBox\s*\[\s*([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", body)
    if not box:
        box = re.search(rb"/MediaBox\s*\[\s*([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", objs[root])
    W, H = float(box.group(3)), float(box.group(4))
    content = b""
    c = re.search(rb"/Contents\s+(\d+) 0 R", body)
    if c:
        content = stream(objs[int(c.group(1))])
    frames = re.findall(rb"0\.8 0\.8 0\.8 RG.*?([-\d.]+) ([-\d.]+) ([-\d.]+) ([-\d.]+) re S", content, re.S)
    out = [str(num), "%g" % W, "%g" % H, str(len(frames))]
    for f in frames:
        out += [x.decode() for x in f]
    print(" ".join(out))
