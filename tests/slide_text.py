#!/usr/bin/env python3
"""slide_text.py DIR — what a lesson's slides.pdf and handout.pdf say against its lesson.md
(the export of `lesson N --export DIR`), read back with pdftotext, for t_lesson_pdf.sh.

Prints one line "NAME COUNT" per check (COUNT: how many things are wrong; 0 passes), with
each problem on stderr as "# ...":
  literal    a step's literal lines (formulas, small tables) missing from its slides
  output     lines a step's commands printed (not the command that drew the figure after
             them) missing from its slides
  colon      paragraphs ending in a colon whose slide lacks what they introduce
  small      words on slides of text (no figure) set smaller than 11 pt (18 px at 1600 x 900)
  answers    questions whose answer is not on a line of its own in the handout
  space      code spans in the Markdown that start with a bare space (` the, not `·the)
A step's slides are the pages whose heading is the step's ("2. Sparse patterns", with
"(k/n)" or "(continued)" after it). Text is compared without whitespace and without the marks
of a broken line (" \\" at a command's end, "↪" before the rest of an output line)."""
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

d = sys.argv[1]
md = open(d + "/lesson.md", encoding="utf-8").read().split("\n")


def pdftotext(*args):
    return subprocess.run(["pdftotext", *args], capture_output=True, text=True).stdout


def squash(s):
    s = s.replace("\u21aa", "").replace(" \\\n", " ")
    s = re.sub(r"\\$", "", s, flags=re.M)
    return re.sub(r"\s+", "", s)


# the steps of lesson.md: heading, literal lines, printed lines (of commands without a figure)
steps = []
i = 0
while i < len(md):
    line = md[i]
    if line.startswith("## "):
        steps.append({"head": line[3:], "literal": [], "output": []})
    elif steps and line.startswith("```"):
        j = i + 1
        while j < len(md) and not md[j].startswith("```"):
            j += 1
        body = md[i + 1 : j]
        k = j + 1
        while k < len(md) and not md[k].strip():
            k += 1
        fig_next = k < len(md) and md[k].startswith("![")
        groups = []
        for b in body:
            if b.startswith("glassbox> "):
                groups.append([])
            elif groups:
                groups[-1].append(b)
        if fig_next and groups:
            groups.pop()
        for g in groups:
            steps[-1]["output"] += [b for b in g if b.strip()]
        i = j
    elif steps and line.startswith("    ") and line.strip():
        steps[-1]["literal"].append(line[4:])
    i += 1
steps = [s for s in steps if s["head"] != "Answers"]

# the slides: each page's text, and which step it belongs to by its heading
n_pages = int(re.search(r"Pages:\s+(\d+)", subprocess.run(["pdfinfo", d + "/slides.pdf"], capture_output=True,
                                                          text=True).stdout).group(1))
pages = [pdftotext("-layout", "-f", str(p), "-l", str(p), d + "/slides.pdf", "-") for p in range(1, n_pages + 1)]


def step_of(text):
    first = next((l.strip() for l in text.split("\n") if l.strip()), "")
    for k, s in enumerate(steps):
        if first == s["head"] or first.startswith(s["head"] + " "):
            return k
    return -1


owner = [step_of(t) for t in pages]
fails = {"literal": 0, "output": 0, "colon": 0, "small": 0, "answers": 0, "space": 0}
for k, s in enumerate(steps):
    text = squash("".join(t for t, o in zip(pages, owner) if o == k))
    if not any(o == k for o in owner):
        print("# no slide has the heading '%s'" % s["head"], file=sys.stderr)
    for what in ("literal", "output"):
        for l in s[what]:
            if squash(l) and squash(l) not in text:
                fails[what] += 1
                print("# %s: step '%s' lacks the %s line '%s'" % (d, s["head"], what, l.strip()), file=sys.stderr)

# sizes on slides of text: pages without a framed figure (pdf_frames.py's count)
frames = subprocess.run([sys.executable, sys.path[0] + "/pdf_frames.py", d + "/slides.pdf"], capture_output=True,
                        text=True).stdout.split("\n")
framed = {int(l.split()[0]) for l in frames if l.strip() and int(l.split()[3]) > 0}
# a paragraph ending in a colon is followed, on its slide, by what it introduces: the next
# block of lesson.md (a figure, literal lines, list items, printed output, a question, prose)
def md_text(l):
    return re.sub(r"[*`\\]", "", l)


intro = []  # (the paragraph, squashed; what must be on its slide: "figure" or squashed text)
code = False
for i, line in enumerate(md):
    if line.startswith("```"):
        code = not code
        continue
    if code or not line.strip() or line.startswith(("    ", "#", "![")) or not line.rstrip().endswith(":"):
        continue
    j = i + 1
    while j < len(md) and not md[j].strip():
        j += 1
    nxt = md[j] if j < len(md) else ""
    if nxt.startswith("```"):
        body = []
        k = j + 1
        while k < len(md) and not md[k].startswith("```"):
            body.append(md[k])
            k += 1
        k += 1
        while k < len(md) and not md[k].strip():
            k += 1
        out = [b for b in body if b.strip() and not b.startswith("glassbox> ")]
        if k < len(md) and md[k].startswith("!["):
            want = "figure"
        elif out:
            want = squash(out[0])
        else:
            continue
    elif nxt.startswith("!["):
        want = "figure"
    else:
        want = squash(md_text(nxt.lstrip("- ").split(". ")[0])[:40])
    intro.append((squash(md_text(line)), want))

for p, t in enumerate(pages, 1):
    lines = [l.strip() for l in t.split("\n") if l.strip()]
    for n, l in enumerate(lines):
        if not l.endswith(":"):
            continue
        for para, want in intro:
            if para.endswith(squash(l)) and len(squash(l)) >= 12:
                after = squash("".join(lines[n + 1 :]))
                ok = p in framed if want == "figure" else want in after or (want in squash(t) and p in framed)
                if not ok:
                    fails["colon"] += 1
                    print("# %s: slide %d stops at '%s' without what it introduces" % (d, p, l), file=sys.stderr)
                break

bbox = pdftotext("-bbox", d + "/slides.pdf", "-")
bbox = re.sub(r"<!DOCTYPE[^>]*>", "", bbox)
root = ET.fromstring(bbox.replace('xmlns="http://www.w3.org/1999/xhtml"', ""))
smallest = 99.0
for p, page in enumerate(root.iter("page"), 1):
    if p in framed:
        continue
    for w in page.iter("word"):
        h = float(w.get("yMax")) - float(w.get("yMin"))
        smallest = min(smallest, h)
        if h < 11 * 1.1:  # a word's box is about 1.16 em tall in DejaVu
            fails["small"] += 1
            print("# %s: slide %d sets '%s' at a %.1f pt box" % (d, p, w.text, h), file=sys.stderr)
            break

# the handout's answers, one a line
hand = pdftotext("-layout", d + "/handout.pdf", "-")
key = hand[hand.rfind("Answers") :] if "Answers" in hand else ""
want = [l for l in md[md.index("## Answers") + 1 :] if re.match(r"\d+\. ", l)] if "## Answers" in md else []
for a in want:
    n = a.split(".")[0]
    if not re.search(r"^\s*%s\. \(step \d+\)" % n, key, re.M):
        fails["answers"] += 1
        print("# %s: answer %s is not on a line of its own in handout.pdf" % (d, n), file=sys.stderr)

# code spans with a bare leading space, outside fenced code and literal lines
code = False
for line in md:
    if line.startswith("```"):
        code = not code
        continue
    if code or line.startswith("    "):
        continue
    for span in line.split("`")[1::2]:
        if re.match(r" \S", span):
            fails["space"] += 1
            print("# %s: '`%s`' shows a token's space as a gap" % (d, span), file=sys.stderr)

for k, v in fails.items():
    print(k, v)
print("smallest %.1f" % smallest)
print("pages %d" % n_pages)
print("steps_without_slide %d" % sum(1 for k in range(len(steps)) if k not in owner))
