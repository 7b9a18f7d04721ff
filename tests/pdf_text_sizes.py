#!/usr/bin/env python3
"""pdf_text_sizes.py FILE.pdf — the sizes of the text a glassbox PDF sets on each page itself
(not inside its figures, which are placed as form XObjects and scaled).

Reads the page content streams (Flate, as cairo writes them) in page order; cairo sets each run
of text as "BT  S 0 0 -S x y Tm  /f-A-B 1 Tf [...] TJ ... ET". Prints one line per font and
size on a page: "PAGE FAMILY SIZE RUNS" (FAMILY: sans, sans-bold, mono; SIZE in points, to a
tenth), e.g. "3 mono 16.0 2". Independent of cairo: zlib and regular expressions."""
import re
import sys

from pdfobjs import content, objects, pages

objs = objects(sys.argv[1])


def deref(body, key):
    """The dictionary under key in body: inline << >> or an indirect reference."""
    m = re.search(rb"/" + key + rb"\s*(\d+) 0 R", body)
    if m:
        return objs.get(int(m.group(1)), b"")
    m = re.search(rb"/" + key + rb"\s*<<", body)
    if not m:
        return b""
    depth, i = 0, m.end() - 2
    while i < len(body):
        if body[i : i + 2] == b"<<":
            depth += 1
            i += 2
        elif body[i : i + 2] == b">>":
            depth -= 1
            i += 2
            if not depth:
                return body[m.end() - 2 : i]
        else:
            i += 1
    return b""


def family(base):
    base = base.split(b"+")[-1]
    if b"Mono" in base:
        return "mono"
    return "sans-bold" if b"Bold" in base else "sans"


for num, p in enumerate(pages(objs)[1], 1):
    body = objs[p]
    fonts = {}
    res = deref(body, b"Resources")
    fd = deref(res, b"Font")
    for name, ref in re.findall(rb"/([\w.-]+)\s+(\d+) 0 R", fd):
        m = re.search(rb"/BaseFont\s*/([\w+.-]+)", objs.get(int(ref), b""))
        if m:
            fonts[name] = family(m.group(1))
    count = {}
    for bt in re.findall(rb"BT(.*?)ET", content(objs, body), re.S):
        size = None
        for tok in re.finditer(rb"([-\d.]+) [-\d.]+ [-\d.]+ ([-\d.]+) [-\d.]+ [-\d.]+ Tm|/([\w.-]+) ([-\d.]+) Tf", bt):
            if tok.group(1):
                size = abs(float(tok.group(2)))
            else:
                fam = fonts.get(tok.group(3), "?")
                s = round((size or 1) * float(tok.group(4)), 1)
                count[(fam, s)] = count.get((fam, s), 0) + 1
    for (fam, s), n in sorted(count.items()):
        print(num, fam, "%.1f" % s, n)
