#!/usr/bin/env python3
"""pdf_frames.py FILE.pdf — the figures glassbox placed on each page of a PDF it wrote.

pdfdoc.c frames every figure it places with a hairline (stroke 0.8 0.8 0.8 RG, then
"x y w h re S"); this reads the page content streams (Flate, as cairo writes them), in page
order, and prints one line per page: "PAGE W H N x y w h ..." with the page size in points,
the number of framed figures and each one's rectangle. Independent of cairo: zlib and regular
expressions over the file's bytes."""
import re
import sys

from pdfobjs import content, objects, pages

objs = objects(sys.argv[1])
root, page_list = pages(objs)
num = 0
for p in page_list:
    num += 1
    body = objs[p]
    box = re.search(rb"/MediaBox\s*\[\s*([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", body)
    if not box:
        box = re.search(rb"/MediaBox\s*\[\s*([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", objs[root])
    W, H = float(box.group(3)), float(box.group(4))
    frames = re.findall(rb"0\.8 0\.8 0\.8 RG.*?([-\d.]+) ([-\d.]+) ([-\d.]+) ([-\d.]+) re S", content(objs, body), re.S)
    out = [str(num), "%g" % W, "%g" % H, str(len(frames))]
    for f in frames:
        out += [x.decode() for x in f]
    print(" ".join(out))
