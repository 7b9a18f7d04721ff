#!/usr/bin/env python3
"""ship_variant.py NAME TRAINDIR -- ship a trained variant of tiny-lm under assets/models/NAME.

Stores TRAINDIR's weights with their matrices as bf16 (glassbox export-model --dtype bf16), copies
the README, loss.csv and loss.png that training wrote, and then measures the stored weights with
`glassbox eval --preset NAME`: the README's probe and head tables are rewritten with what the bf16
weights give, and a paragraph says how they are stored and their held-out loss. tests/t_shipped_variants
checks the result. Run from the repository root after `make`."""
import os, re, shutil, subprocess, sys

def main(name, train):
    out = os.path.join("assets", "models", name)
    subprocess.run(["./glassbox", "export-model", train, "--safetensors", out, "--dtype", "bf16", "--force"], check=True)
    for f in ("README.md", "loss.csv", "loss.png"):
        shutil.copy(os.path.join(train, f), os.path.join(out, f))
    ev = subprocess.run(["./glassbox", "eval", out, "--preset", name], check=True, capture_output=True, text=True).stdout
    probes = dict(re.findall(r"^  (.+?)\s{2,}(\d+\.\d)%", ev, re.M))
    heads = {(l.split()[0], l.split()[1]): l.split()[2:] for l in ev.splitlines()
             if re.match(r"^\s+\d+\s+\d+(\s+\d\.\d{3}){5}$", l)}
    loss = re.search(r"held-out loss on .*?: (\d+\.\d+)", ev).group(1)
    md = open(os.path.join(out, "README.md")).read().splitlines()
    changed = 0
    for i, l in enumerate(md):
        cells = [c.strip() for c in l.strip().strip("|").split("|")]
        if l.startswith("| ") and len(cells) == 4 and cells[0] in probes:
            new = "| %s | %s%% | %s | %s |" % (cells[0], probes[cells[0]], cells[2], cells[3])
        elif l.startswith("| ") and len(cells) == 7 and (cells[0], cells[1]) in heads:
            new = "| %s | %s | %s |" % (cells[0], cells[1], " | ".join(heads[(cells[0], cells[1])]))
        else:
            continue
        changed += new != l
        md[i] = new
    text = "\n".join(md) + "\n"
    size = os.path.getsize(os.path.join(out, "model.safetensors")) / 1e6
    f32 = os.path.getsize(os.path.join(train, "model.safetensors")) / 1e6
    para = ("The weight matrices are stored as bfloat16 (norms and biases as float32): %.1f MB instead of %.1f MB.\n"
            "The stored weights' held-out loss is %s (`glassbox eval %s --preset %s`),\n"
            "and the probes and heads below are measured on them.\n" % (size, f32, loss, name, name))
    text = re.sub(r"(The curves are in loss.csv and loss.png.\n)", lambda m: m.group(1) + "\n" + para, text, count=1)
    text = re.sub(r"(    glassbox train --preset .*\n)",
                  lambda m: m.group(1) + "    glassbox export-model %s --safetensors assets/models/%s --dtype bf16\n"
                  % (train, name), text, count=1)
    open(os.path.join(out, "README.md"), "w").write(text)
    print("shipped %s: %.1f MB, held-out %s as stored, %d table cells changed by bf16" % (name, size, loss, changed))

if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
