#!/usr/bin/env python3
"""slide_text.py DIR — what a lesson's slides.pdf and handout.pdf say against its lesson.md
(the export of `lesson N --export DIR`), read back with pdftotext, for t_lesson_pdf.sh.

Prints one line "NAME COUNT" per check (COUNT: how many things are wrong; 0 passes), with
each problem on stderr as "# ...":
  literal    a step's literal lines (formulas, small tables) missing from its slides
  output     lines a step's commands printed (not the command that drew the figure after
             them) missing from its slides
  colon      paragraphs ending in a colon, or mid-sentence in a comma ("Its last query, ·to,"
             and the figure), whose slide lacks what they introduce
  small      words on slides of text (no figure) set smaller than 11 pt (18 px at 1600 x 900)
  answers    questions whose answer is not on a line of its own in the handout
  space      code spans in the Markdown that start with a bare space (` the, not `·the)
and the third review's:
  title          slide 1 is a title slide: the lesson's title, "N steps, about M minutes",
                 the glassbox that made it
  sentence       sentences of the prose, items and questions not whole on one of their
                 step's slides (a sentence cut across two)
  after_question text that follows a question in the lesson on the question's slide (the
                 first sentence of each later paragraph of its step): an answer given away
  strips         a merge replay ("N merges") with fewer strips than merges on its slide
  command        figure slides without the command that drew the figure ("glassbox> attn 4 3")
  cmdbreak       lines of slide text that end in an option's dashes (a command broken inside
                 a word, "generate --" / "temp 0")
  dump_min       the smallest size a long dump of output (12 lines or more) is set in, on the
                 slide that holds most of it (pdf_text_sizes.py; 99 without one)
A step's slides are the pages whose heading is the step's ("2. Sparse patterns", with
"(k/n)" or "(continued)" after it). Text is compared without whitespace and without the marks
of a broken line (" \\" at a command's end, "↪" before the rest of an output line)."""
import re
import subprocess
import sys
import xml.etree.ElementTree as ET



def slide_figures(md):
    """(title, command) of each figure of lesson.md that has a slide of its own, in order: a
    `pair` stands for the maps right before it in its step (two at most) with nothing but their
    commands between them, as the slides show it (pdfdoc.c, collect)."""
    figs, last, near, code = [], None, 0, False
    for line in md:
        if line.startswith("```"):
            code = not code
        elif line.startswith("## "):
            near = 0
        elif line.startswith("glassbox> "):
            last = line[10:]
        elif line.startswith("!["):
            if last and re.match(r"pair( |$)", last):
                del figs[len(figs) - min(near, 2):]
            figs.append((re.sub(r"^!\[(.*)\]\([^)]*\)$", r"\1", line).replace("\\", ""), last))
            near += 1
        elif line.strip():
            near = 0  # prose, or what a command printed
    return figs


if sys.argv[1] == "--figures":  # the titles of the figures with slides, one a line
    for t, c in slide_figures(open(sys.argv[2], encoding="utf-8").read().split("\n")):
        print(t)
    sys.exit(0)

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
    if code or not line.strip() or line.startswith(("    ", "#", "![")) or not line.rstrip().endswith((":", ",")):
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
    elif nxt.startswith("    "):  # literal lines: as written, marks and all
        want = squash(nxt)[:40]
    else:
        want = squash(md_text(nxt.lstrip("- ").split(". ")[0])[:40])
    intro.append((squash(md_text(line)), want))

for p, t in enumerate(pages, 1):
    lines = [l.strip() for l in t.split("\n") if l.strip()]
    for n, l in enumerate(lines):
        if not l.endswith((":", ",")):
            continue
        tail = squash(l) if len(squash(l)) >= 12 or not n else squash(lines[n - 1] + l)  # ("·to,")
        for para, want in intro:
            if para.endswith(tail) and len(tail) >= 12:
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

# ---- review 3 ----
# the md's paragraphs (prose, items, questions) with the step they are in, in order
paras = []  # (step index, text without marks)
code, step = False, -1
for line in md:
    if line.startswith("```"):
        code = not code
        continue
    if code or not line.strip() or line.startswith(("    ", "![", "# ")):
        continue
    if line.startswith("## "):
        step = next((k for k, s in enumerate(steps) if s["head"] == line[3:]), -2)
        continue
    if step < 0 or line.startswith(("*Hint", "*A glassbox lesson")):
        continue
    paras.append((step, line[2:] if line.startswith("- ") else line))


def sentences(t):
    """The sentences of a paragraph of lesson.md (its marks taken off after: a code span
    starts a sentence as a capital does, as the slides cut paragraphs)."""
    return [md_text(x) for x in re.split(r"(?<=[.!?:])\s+(?=[A-Z`\"*(·])", t) if x.strip()]


flat = [squash(t) for t in pages]
# (and in reading order: text in a column beside a figure is not interleaved with its lines)
raw = [squash(t) for t in pdftotext(d + "/slides.pdf", "-").split("\f")]
raw += [""] * (len(flat) - len(raw))
fails.update({"title": 0, "sentence": 0, "after_question": 0, "strips": 0, "command": 0, "cmdbreak": 0})
# a title slide first: the lesson's title, its steps and minutes, the glassbox that made it
title = next((l[2:] for l in md if l.startswith("# ")), "")
m = re.search(r"A glassbox lesson: (\d+) steps?, about (\d+) minutes?", "\n".join(md))
if not (flat and squash(title) in flat[0] and m and squash("%s steps, about %s minutes" % m.groups()) in flat[0]
        and "glassbox" in flat[0] and owner[0] == -1):
    fails["title"] += 1
    print("# %s: slide 1 is not the title slide (title, steps and minutes, glassbox)" % d, file=sys.stderr)
# a sentence is never cut across slides: each is whole on one page of its step
for k, t in paras:
    for x in sentences(t):
        q = squash(x)
        if len(q) < 12:
            continue
        # (pdftotext joins a line that ends in "-" to the next without it: "bottom-" / "left"
        # in a column beside a figure reads "bottomleft", "x <-" / "x + ffn" "x <x + ffn")
        if not any(q in f or q in r or q.replace("-", "") in r.replace("-", "")
                   for f, r, o in zip(flat, raw, owner) if o == k):
            fails["sentence"] += 1
            print("# %s: step %d's sentence '%s' is on no slide whole" % (d, k + 1, x[:70]), file=sys.stderr)
# nothing that comes after a question in the lesson is on the question's slide (an answer
# given away): the first sentence of each later paragraph of its step. A "Try:" is the one
# paragraph that may be there: it asks the class to do something, and says nothing of the
# answer (it goes in the question's box rather than alone on a slide).
for p_i, f in enumerate(flat):
    for qn in re.findall(r"Question(\d+)\.", f):
        at = next((i for i, (k, t) in enumerate(paras) if md_text(t).startswith("Question %s." % qn)), None)
        if at is None:
            continue
        k0 = paras[at][0]
        for k, t in paras[at + 1 :]:
            if k != k0:
                break
            if md_text(t).startswith(("Question", "a) ", "b) ", "c) ", "d) ", "e) ", "Try:")):
                continue
            first = squash(sentences(t)[0]) if sentences(t) else ""
            if len(first) >= 20 and first in f:
                fails["after_question"] += 1
                print("# %s: slide %d shows '%s', which follows question %s, on the question's slide" %
                      (d, p_i + 1, t[:60], qn), file=sys.stderr)
# a merge replay shows all its strips: "N merges" in its subtitle, N "(rank" strips on its slide
for p_i, t in enumerate(pages):
    m = re.search(r"· (\d+) merges?", t)
    if m and t.count("(rank ") != int(m.group(1)):
        fails["strips"] += 1
        print("# %s: slide %d says %s merges and shows %d strips" % (d, p_i + 1, m.group(1), t.count("(rank ")),
              file=sys.stderr)
# each figure's slide shows the command that drew it ("glassbox> attn 4 3"): the k-th framed
# slide, the last command of the block before the k-th figure
cmds = [c for t, c in slide_figures(md)]
framed_pages = [int(l.split()[0]) for l in frames if l.strip() and int(l.split()[3]) > 0]
# (a figure shown again over its questions says so, and is not the next figure)
framed_pages = [p for p in framed_pages if squash("(the figure again, for its question)") not in flat[p - 1]]
for k, p_no in enumerate(framed_pages):
    if k < len(cmds) and cmds[k] and squash("glassbox> " + cmds[k]) not in flat[p_no - 1]:
        fails["command"] += 1
        print("# %s: slide %d lacks its figure's command 'glassbox> %s'" % (d, p_no, cmds[k]), file=sys.stderr)
# commands in the prose break only at spaces: no line ends in an option's dashes
for p_i, t in enumerate(pages):
    for l in t.split("\n"):
        if re.search(r"(^|\s)--?$", l.strip()):
            fails["cmdbreak"] += 1
            print("# %s: slide %d breaks a command after '%s'" % (d, p_i + 1, l.strip()[-30:]), file=sys.stderr)

# long dumps of output (12 lines or more: info, heads, trace) and the monospace size of the
# slide that holds the most of their lines (the size its most runs of monospace are set in)
sizes = {}
for l in subprocess.run([sys.executable, sys.path[0] + "/pdf_text_sizes.py", d + "/slides.pdf"], capture_output=True,
                        text=True).stdout.split("\n"):
    f = l.split()
    if len(f) == 4 and f[1] == "mono":
        sizes.setdefault(int(f[0]), []).append((int(f[3]), float(f[2])))
dump_min, code, body = 99.0, False, []
for line in md:
    if line.startswith("```"):
        if code:
            groups, g = [], []
            for b in body:
                if b.startswith("glassbox> "):
                    g = [b]
                    groups.append(g)
                elif groups:
                    g.append(b)
            for g in groups:
                out = [squash(x) for x in g[1:] if len(squash(x)) >= 8]
                if len(g) - 1 < 12 or not out:
                    continue
                best = max(range(n_pages), key=lambda p: sum(1 for x in out if x in flat[p]))
                if sum(1 for x in out if x in flat[best]) and sizes.get(best + 1):
                    size = max(sizes[best + 1])[1]
                    dump_min = min(dump_min, size)
                    print("# %s: %s (%d lines) on slide %d at %.1f pt" % (d, g[0], len(g) - 1, best + 1, size),
                          file=sys.stderr)
        code, body = not code, []
        continue
    if code:
        body.append(line)

for k, v in fails.items():
    print(k, v)
print("dump_min %.1f" % dump_min)
print("smallest %.1f" % smallest)
print("pages %d" % n_pages)
print("steps_without_slide %d" % sum(1 for k in range(len(steps)) if k not in owner))
