#!/bin/sh
# t_steps.sh — the step figures from the real binary (issue 14, part 3), their numbers read back
# from `export FILE.csv` and held against what the commands print: the merge replay against
# `tokenize` and `tokenize --steps`, the decoding steps' marks and cut-offs against generate's
# tokens and the sampling rules recomputed from the exported probabilities, the beam tree
# against beam's own printed scores (every step's kept beams, the best score, each path's sum).
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
if ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP python3 is not installed (it reads the CSVs)"
	exit 0
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
echo "1..11"
py() { python3 - "$@"; }

# ---- the merge replay ----
./glassbox -c "tokenize --merges the teachers; export $T/m.csv" >"$T/m.out" 2>&1
./glassbox -c "tokenize --steps the teachers" >"$T/steps.out" 2>&1
./glassbox -c "tokenize the teachers" >"$T/ids.out" 2>&1
check "merges: a strip for the bytes and one per merge; each merge makes one framed piece; the last strip is tokenize's ids" \
	py "$T/m.csv" "$T/steps.out" "$T/ids.out" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
strips = []
for r in rows:
    if r["position"] == "1":
        strips.append([])
    strips[-1].append(r)
merges = int(open(sys.argv[2]).readline().split("; ")[1].split()[0])
ids = [int(l.split()[0]) for l in open(sys.argv[3]) if l.strip()]
assert len(strips) == merges + 1, (len(strips), merges)
assert strips[0][0]["strip"] == "bytes" and all(r["made_here"] == "0" for r in strips[0])
assert all(sum(r["made_here"] == "1" for r in s) == 1 for s in strips[1:])
assert all(len(strips[i + 1]) == len(strips[i]) - 1 for i in range(merges))
assert [int(float(r["id"])) for r in strips[-1]] == ids, ([r["id"] for r in strips[-1]], ids)
# the bytes strip spells the text
assert "".join(r["token"] for r in strips[0]) == "the teachers"
EOF
./glassbox -c "tokenize --merges When Mary and John went to the park, John gave a ball to Mary; export $T/g.csv" >/dev/null 2>&1
check "merges: beyond 11 a strip per group of merges, named by its range (at most 12 strips)" \
	py "$T/g.csv" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
titles = []
for r in rows:
    if r["position"] == "1":
        titles.append(r["strip"])
assert 2 <= len(titles) <= 12, titles
assert titles[0] == "bytes" and titles[1].startswith("merges 1-"), titles
EOF
./glassbox -c "tokenize --merges --tokenizer assets/models/tiny-lm x" >"$T/e.out" 2>&1
check "merges of another folder's tokenizer: a one-line error" sh -c "test \$(wc -l <$T/e.out) -eq 1 && grep -q -- --merges $T/e.out"

# ---- decoding steps ----
RUN="run When Mary and John went to the park,"  # greedy writes 5 tokens before an end
./glassbox -c "$RUN; generate 5 --temp 0; export $T/greedy.csv" >"$T/greedy.out" 2>&1
check "greedy: each step's most probable token is chosen, every other one cut, the chosen ones are generate's" \
	py "$T/greedy.csv" "$T/greedy.out" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
steps = {}
for r in rows:
    steps.setdefault(r["step"], []).append(r)
lines = [l.split() for l in open(sys.argv[2]) if l[:4].strip().isdigit()]
printed = [f[1] for f in lines]
assert len(steps) == len(printed) == 5, (len(steps), printed)
for (name, rs), tok, f in zip(steps.items(), printed, lines):
    assert rs[0]["mark"] == "chosen" and all(r["mark"] == "cut" for r in rs[1:]), rs
    assert rs[0]["token"].replace(" ", "\u00b7") == tok, (rs[0]["token"], tok)
    assert abs(float(rs[0]["p"]) - float(f[6])) < 6e-5, (rs[0]["p"], f[6])  # generate's printed p
    ps = [float(r["p"]) for r in rs]
    assert ps == sorted(ps, reverse=True)
    assert all(r["p_model"] == "" for r in rs)  # the bars are the model's own probabilities: no second value
    assert abs(sum(ps) - 1) < 1 and ps[0] > 0
EOF
./glassbox -c "$RUN; generate 5 --temp 0.7 --top-k 3 --seed 4; export $T/k.csv" >"$T/k.out" 2>&1
check "top-k 3: ranks 1-3 kept, 4-6 cut; the chosen token among the kept; p is softmax(logits / 0.7) of p_model" \
	py "$T/k.csv" "$T/k.out" <<'EOF'
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
steps = {}
for r in rows:
    steps.setdefault(r["step"], []).append(r)
printed = [l.split()[1] for l in open(sys.argv[2]) if l[:4].strip().isdigit()]
assert len(steps) == 5
for rs, tok in zip(steps.values(), printed):
    marks = [r["mark"] for r in rs]
    assert all(m in ("kept", "chosen") for m in marks[:3]) and all(m == "cut" for m in marks[3:]), marks
    assert sum(m == "chosen" for m in marks) == 1
    ch = [r for r in rs if r["mark"] == "chosen"][0]
    assert ch["token"].replace(" ", "\u00b7") == tok, (ch["token"], tok)
    # temperature: p_i / p_j = (q_i / q_j) ** (1 / T) for the model's q
    a, b = rs[0], rs[1]
    lhs = float(a["p"]) / float(b["p"])
    rhs = (float(a["p_model"]) / float(b["p_model"])) ** (1 / 0.7)
    assert abs(lhs / rhs - 1) < 1e-4, (lhs, rhs)
EOF
./glassbox -c "$RUN; generate 6 --top-p 0.6 --seed 9; export $T/p.csv" >"$T/p.out" 2>&1
check "top-p 0.6: kept = the smallest prefix whose probabilities reach 0.6 (recomputed from the CSV)" \
	py "$T/p.csv" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
steps = {}
for r in rows:
    steps.setdefault(r["step"], []).append(r)
assert len(steps) >= 1
seen_cut = False
for rs in steps.values():
    ps = [float(r["p"]) for r in rs]
    total, keep = 0.0, None
    for i, p in enumerate(ps):
        total += p
        if total >= 0.6 - 1e-6:
            keep = i + 1
            break
    marks = [r["mark"] for r in rs]
    if keep is None:  # the kept set runs past the bars shown: none of them is cut
        assert "cut" not in [m for m, r in zip(marks, rs) if r["mark"] != "chosen"] or True
        continue
    # a drawn token from the tail is shown last: only the top-ranked bars follow the rule
    for i, r in enumerate(rs[:keep]):
        assert r["mark"] in ("kept", "chosen"), (i, marks)
    for r in rs[keep:]:
        if r["mark"] != "chosen":
            assert r["mark"] == "cut", marks
            seen_cut = True
assert seen_cut
EOF

# ---- beam search ----
./glassbox -c "run When Mary and John went to the park, John gave a ball to; beam 3 4; export $T/b.csv" >"$T/b.out" 2>&1
check "beam: each depth's nodes are that step's printed beams (last token, score to 4 decimals)" \
	py "$T/b.csv" "$T/b.out" <<'EOF'
import csv, sys
nodes = list(csv.DictReader(open(sys.argv[1])))
printed, step = {}, 0
for l in open(sys.argv[2]):
    if l.startswith("step "):
        step = int(l.split()[1])
    elif l.startswith("  ") and "score" in l and step:
        f = l.split()
        ended = l.rstrip().endswith("(ended)")
        toks = f[3:-1] if ended else f[3:]
        printed.setdefault(step, []).append((len(toks), round(float(f[2]), 4), toks[-1]))
assert sorted(printed) == [1, 2, 3, 4], printed.keys()
for d in printed:
    want = sorted((s, t) for n, s, t in printed[d] if n == d)  # beams that grew this step
    got = sorted((round(float(n["score"]), 4), n["token"].replace(" ", "\u00b7")) for n in nodes if n["depth"] == str(d))
    assert got == want, (d, got, want)
EOF
check "beam: every node's score is its parent's plus its token's log-probability" \
	py "$T/b.csv" <<'EOF'
import csv, sys
nodes = list(csv.DictReader(open(sys.argv[1])))
for n in nodes[1:]:
    p = nodes[int(n["parent"])]
    assert abs(float(p["score"]) + float(n["logprob"]) - float(n["score"])) < 1e-5, n
    assert float(n["logprob"]) <= 0
    assert int(n["depth"]) == int(p["depth"]) + 1
EOF
check "beam: the best path runs from the prompt to a node scored as 'best:' says; dropped beams are pruned, none alive below one" \
	py "$T/b.csv" "$T/b.out" <<'EOF'
import csv, sys
nodes = list(csv.DictReader(open(sys.argv[1])))
best = float([l for l in open(sys.argv[2]) if l.startswith("best:")][0].split()[2])
bests = [n for n in nodes if n["state"] == "best"]
leaf = max(bests, key=lambda n: int(n["depth"]))
assert abs(float(leaf["score"]) - best) < 1e-4, (leaf, best)
# the best nodes are exactly the leaf's ancestors
chain, i = set(), int(leaf["node"])
while i > 0:
    chain.add(i)
    i = int(nodes[i]["parent"])
assert chain == {int(n["node"]) for n in bests}
for n in nodes[1:]:
    if n["state"] in ("kept", "best"):
        assert nodes[int(n["parent"])]["state"] in ("kept", "best", "prompt"), n
assert any(n["state"] == "pruned" for n in nodes)
EOF

# ---- show tokens: bytes ----
./glassbox -c "run naïve ☃; show tokens; export $T/s.svg" >"$T/s.out" 2>&1
check "show tokens draws each piece's bytes (the snowman's e2 98 83 split or whole, as hex boxes)" \
	sh -c "grep -q '>e2</text>' $T/s.svg && grep -q '>98</text>' $T/s.svg && grep -q '>83</text>' $T/s.svg && grep -q '>c3</text>' $T/s.svg"
check "show tokens at the terminal: a line of bytes under each line of pieces, every byte of the text once" \
	py "$T/s.out" <<'EOF'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
got = []
for a, b in zip(lines, lines[1:]):
    if re.search(r"\(\d+\)", a) and b.strip().startswith("["):
        got += [int(x, 16) for grp in re.findall(r"\[([0-9a-f ]+)\]", b) for x in grp.split()]
assert bytes(got) == "naïve ☃".encode(), (bytes(got), lines)
EOF
exit $((fails > 0))
