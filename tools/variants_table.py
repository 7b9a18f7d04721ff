#!/usr/bin/env python3
"""variants_table.py [--check README.md] -- the table comparing tiny-lm and its shipped variants.

Reads each model folder's README under assets/models (written by `glassbox train` and, for the
variants, re-measured on the stored weights by tools/ship_variant.py; tests/t_shipped_variants
holds those to what the weights give): the held-out loss, each probe, the best previous-token
head (on random runs) and the best induction head. Prints the markdown table; with --check,
exits 1 unless README.md holds exactly that table between its two markers. Run from the
repository root."""
import os, re, sys

BEGIN = "<!-- variants table: tools/variants_table.py writes it -->"
END = "<!-- end of the variants table -->"
PROBES = [("agreement (held-out)", "agree"), ("pronoun gender (held-out)", "pronoun"),
          ("indirect object (held-out)", "ind. obj."), ("possession (held-out)", "possess."),
          ("induction, top-1 (held-out)", "induction")]

def variants():
    """The variants in the preset table's order, each with its --set assignments (variants.c)."""
    src = open(os.path.join("model", "train", "variants.c")).read()
    return [(n, "`" + s + "`") for n, s in re.findall(r'\{ "(tiny-lm-[a-z0-9]+)", "([^"]*)"', src)]

def row(name, what):
    path = os.path.join("assets", "models", name, "README.md")
    if not os.path.exists(path):
        return "| %s | %s | not trained yet |  |  |  |  |  |  |  |" % (name, what)
    md = open(path).read()
    stored = re.search(r"stored weights' held-out loss is (\d+\.\d+)", md)
    loss = stored.group(1) if stored else re.search(r"held-out (\d+\.\d+) \(cross-entropy", md).group(1)
    cells = [name, what, loss]
    for probe, _ in PROBES:
        m = re.search(r"^\| %s \| (\d+\.\d)%% \|" % re.escape(probe), md, re.M)
        cells.append(m.group(1) if m else "-")
    heads = [tuple(float(x) if "." in x else int(x) for x in r) for r in
             re.findall(r"^\| (\d+) \| (\d+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|$", md, re.M)]
    prev = max(heads, key=lambda h: h[5])
    ind = max(heads, key=lambda h: h[6])
    cells.append("L%dH%d %.3f" % (prev[0], prev[1], prev[5]))
    cells.append("L%dH%d %.3f" % (ind[0], ind[1], ind[6]))
    return "| " + " | ".join(cells) + " |"

def table():
    lines = ["| model | what changes | held-out loss | " + " | ".join(p[1] for p in PROBES) +
             " | previous-token head | induction head |",
             "|---|---|---|" + "---|" * len(PROBES) + "---|---|",
             row("tiny-lm", "(the base: learned positions, pre-norm LayerNorm, GELU)")]
    lines += [row(n, w) for n, w in variants()]
    return "\n".join(lines) + "\n"

def main(argv):
    t = table()
    if len(argv) == 3 and argv[1] == "--check":
        text = open(argv[2]).read()
        if BEGIN not in text or END not in text:
            sys.exit("%s: the variants table's markers are missing" % argv[2])
        have = text.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n") + "\n"
        if have != t:
            sys.stdout.write(t)
            sys.exit("%s: the variants table differs from the models' READMEs (above: what it should be)" % argv[2])
        return
    sys.stdout.write(t)

if __name__ == "__main__":
    main(sys.argv)
