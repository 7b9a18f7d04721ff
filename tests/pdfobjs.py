"""pdfobjs.py — the PDF reading that tests/pdf_frames.py and tests/pdf_text_sizes.py share:
the file's objects, a stream's bytes (Flate, as cairo writes them) and the pages in order.
Independent of cairo: zlib and regular expressions over the file's bytes."""
import re
import zlib


def objects(path):
    """{number: body} of every "N 0 obj ... endobj" in the file."""
    data = open(path, "rb").read()
    return {int(m.group(1)): m.group(2) for m in re.finditer(rb"(\d+) 0 obj(.*?)endobj", data, re.S)}


def stream(body):
    m = re.search(rb"stream\r?\n(.*?)endstream", body, re.S)
    if not m:
        return b""
    raw = m.group(1)
    return zlib.decompress(raw) if b"FlateDecode" in body[: m.start()] else raw


def pages(objs):
    """(root, page object numbers in order): the catalog's page tree walked depth first."""
    cat = next(n for n, b in objs.items() if re.search(rb"/Type\s*/Catalog", b))
    root = int(re.search(rb"/Pages\s+(\d+) 0 R", objs[cat]).group(1))

    def walk(num):
        body = objs[num]
        if re.search(rb"/Type\s*/Pages", body):
            kids = re.search(rb"/Kids\s*\[(.*?)\]", body, re.S).group(1)
            for k in re.findall(rb"(\d+) 0 R", kids):
                yield from walk(int(k))
        else:
            yield num

    return root, list(walk(root))


def content(objs, body):
    """A page's content streams, joined (one reference or an array of them)."""
    m = re.search(rb"/Contents\s*(\[.*?\]|\d+ 0 R)", body, re.S)
    if not m:
        return b""
    return b"".join(stream(objs[int(r)]) for r in re.findall(rb"(\d+) 0 R", m.group(1)))
