#!/usr/bin/env python3
"""pdf_fig_text.py FILE.pdf [-v] — the size at which a glassbox PDF sets the text inside its
figures, as the page shows it: the figures are recorded once and placed on each page as form
XObjects scaled by a "cm" (k: 0.5 sets 18 px of the figure at 9 pt), so a run's size on the page
is its font size times its text matrix's scale times the scales of the matrices above it.

Prints one line per page that places a figure: "PAGE SMALLEST RUNS_UNDER_8 RUNS" (SMALLEST in
points, to a tenth: the least size of any run of text inside a figure on that page). With -v,
each run's size and (roughly decoded) text under its page's line, smallest first.
Independent of cairo: zlib and regular expressions (pdfobjs.py)."""
import math
import re
import sys

from pdfobjs import objects, pages, stream, content

objs = objects(sys.argv[1])
verbose = "-v" in sys.argv[2:]

TOK = re.compile(rb"\s*(?:(\()|(<<|>>)|(<[0-9A-Fa-f\s]*>)|(\[|\])|(/[^\s/\[\]()<>{}%]*)|"
                 rb"([-+]?(?:\d+\.?\d*|\.\d+))|([A-Za-z'\"*]+\d?\*?)|(%[^\n]*))")


def tokens(data):
    """(kind, value) of a content stream: str (a literal string's bytes), num, name, op,
    '[' and ']'."""
    i, n = 0, len(data)
    while i < n:
        m = TOK.match(data, i)
        if not m or m.end() == i:
            i += 1
            continue
        if m.group(1):  # a literal string, balanced parentheses and escapes
            j, depth, out = m.end(), 1, bytearray()
            while j < n and depth:
                c = data[j]
                if c == 0x5C and j + 1 < n:  # backslash
                    d = data[j + 1]
                    if 0x30 <= d <= 0x37:
                        k = j + 1
                        while k < n and k < j + 4 and 0x30 <= data[k] <= 0x37:
                            k += 1
                        out.append(int(data[j + 1 : k], 8) & 255)
                        j = k
                        continue
                    out.append({0x6E: 10, 0x72: 13, 0x74: 9}.get(d, d))
                    j += 2
                    continue
                if c == 0x28:
                    depth += 1
                elif c == 0x29:
                    depth -= 1
                    if not depth:
                        j += 1
                        break
                out.append(c)
                j += 1
            yield "str", bytes(out)
            i = j
            continue
        i = m.end()
        if m.group(2) or m.group(8):
            continue
        if m.group(3):
            yield "str", b"?"
        elif m.group(4):
            yield m.group(4).decode(), None
        elif m.group(5):
            yield "name", m.group(5)[1:]
        elif m.group(6):
            yield "num", float(m.group(6))
        else:
            yield "op", m.group(7)


def mul(a, b):
    """a then b, 6-number PDF matrices."""
    return [a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
            a[2] * b[1] + a[3] * b[3], a[4] * b[0] + a[5] * b[2] + b[4], a[4] * b[1] + a[5] * b[3] + b[5]]


def scale(m):
    return math.sqrt(abs(m[0] * m[3] - m[1] * m[2]))


def xobjects(res):
    """{name: object number} of a resource dictionary's /XObject entry."""
    m = re.search(rb"/Resources\s+(\d+) 0 R", res)
    if m:
        res = objs.get(int(m.group(1)), b"")
    m = re.search(rb"/XObject\s*<<(.*?)>>", res, re.S)
    return {k: int(v) for k, v in re.findall(rb"/([\w.-]+)\s+(\d+) 0 R", m.group(1))} if m else {}


def run(data, res_body, ctm, depth, out, seen):
    xo = xobjects(res_body)
    stack, args, tm, size, inside = [], [], [1, 0, 0, 1, 0, 0], 0.0, False
    for kind, val in tokens(data):
        if kind != "op":
            args.append((kind, val))
            continue
        if val == b"q":
            stack.append(ctm)
        elif val == b"Q":
            ctm = stack.pop() if stack else ctm
        elif val == b"cm" and len(args) >= 6:
            ctm = mul([a[1] for a in args[-6:]], ctm)
        elif val == b"BT":
            tm, inside = [1, 0, 0, 1, 0, 0], True
        elif val == b"ET":
            inside = False
        elif val == b"Tm" and len(args) >= 6:
            tm = [a[1] for a in args[-6:]]
        elif val == b"Tf" and args:
            size = args[-1][1]
        elif val in (b"TJ", b"Tj", b"'", b'"') and inside and depth > 0:
            text = b"".join(v for k, v in args if k == "str").decode("latin-1")
            out.append((round(size * scale(tm) * scale(ctm), 1), text))
        elif val == b"Do" and args and args[-1][0] == "name":
            num = xo.get(args[-1][1])
            if num is not None and num not in seen:
                body = objs.get(num, b"")
                if re.search(rb"/Subtype\s*/Form", body):
                    m = re.search(rb"/Matrix\s*\[([^\]]*)\]", body)
                    fm = [float(x) for x in m.group(1).split()] if m else [1, 0, 0, 1, 0, 0]
                    run(stream(body), body, mul(fm, ctm), depth + 1, out, seen | {num})
        args = []


for num, p in enumerate(pages(objs)[1], 1):
    body = objs[p]
    runs = []
    run(content(objs, body), body, [1, 0, 0, 1, 0, 0], 0, runs, frozenset())
    if not runs:
        continue
    least = min(s for s, _ in runs)
    print(num, "%.1f" % least, sum(1 for s, _ in runs if s < 8), len(runs))
    if verbose:
        for s, t in sorted(runs)[:40]:
            print("   %.1f %s" % (s, t[:60]))
