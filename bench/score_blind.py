#!/usr/bin/env python3
"""Score idemlint on a blind set: directories of projects whose lines carry `// expect: IDEMnnn`
(must be reported with exactly those codes) and `// ok: why` (traps). Every other line must be
clean. Each directory holding a build file (pom.xml, build.gradle(.kts), settings.gradle.kts,
Cargo.toml) is linted as one project, with every rule, test sources skipped (the CLI's default,
as the fixture runner does; `--include-tests` checks them too), ignoring configuration.

    bench/score_blind.py BLIND_DIR [--bin target/release/idemlint] [--list] [--include-tests]

Prints TP/FN/FP per rule and in total, precision and recall; --list prints every miss and false
alarm with its line. A `todo-expect`/`todo-ok` marker counts as what it claims to become.
Standard library only; not part of `cargo test` (the fixtures test checks committed sets)."""
import argparse
import collections
import json
import os
import re
import subprocess
import sys

BUILD = {"pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle.kts", "Cargo.toml"}
SRC = (".java", ".kt", ".kts", ".rs")
MARK = re.compile(r"//\s*(todo-expect|expect):\s*((?:IDEM\d{3}[ ,]*)+)")


def projects(root):
    out = []
    for d, dirs, files in os.walk(root):
        if BUILD & set(files):
            out.append(d)
            dirs[:] = []
    return sorted(out) or [root]


def expectations(proj):
    exp = set()
    for d, _, files in os.walk(proj):
        for f in files:
            if not f.endswith(SRC):
                continue
            p = os.path.join(d, f)
            with open(p, encoding="utf-8", errors="replace") as fh:
                for i, line in enumerate(fh, 1):
                    m = MARK.search(line)
                    if m:
                        for c in re.findall(r"IDEM\d{3}", m.group(2)):
                            exp.add((os.path.relpath(p, proj), i, c))
    return exp


def findings(binary, proj, tests):
    r = subprocess.run(
        [binary, "check", ".", "--select", "ALL", "--isolated", "--format", "json", "--exit-zero"]
        + (["--include-tests"] if tests else []),
        cwd=proj, capture_output=True, text=True)
    if r.returncode not in (0, 1):
        print(f"{proj}: exit {r.returncode}: {r.stderr.strip()[:500]}", file=sys.stderr)
    d = json.loads(r.stdout)
    for e in d.get("errors", []):
        print(f"{proj}: tool error: {e}", file=sys.stderr)
    return {(os.path.normpath(f["path"]), f["start"]["line"], f["code"]) for f in d["findings"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "idemlint"))
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--include-tests", action="store_true")
    a = ap.parse_args()
    per = collections.defaultdict(lambda: [0, 0, 0])
    misses, false = [], []
    for proj in projects(a.root):
        exp = expectations(proj)
        got = findings(os.path.abspath(a.bin), proj, a.include_tests)
        rel = os.path.relpath(proj, a.root)
        for k in exp & got:
            per[k[2]][0] += 1
        for k in sorted(exp - got):
            per[k[2]][1] += 1
            misses.append((rel,) + k)
        for k in sorted(got - exp):
            per[k[2]][2] += 1
            false.append((rel,) + k)
    tot = [sum(v[i] for v in per.values()) for i in range(3)]
    print("rule     TP  FN  FP")
    for c in sorted(per):
        print(f"{c}  {per[c][0]:3} {per[c][1]:3} {per[c][2]:3}")
    tp, fn, fp = tot
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    print(f"total    {tp:3} {fn:3} {fp:3}   precision {p:.2f}  recall {r:.2f}")
    if a.list:
        for m in misses:
            print("FN", "/".join(m[:2]) + f":{m[2]}", m[3])
        for m in false:
            print("FP", "/".join(m[:2]) + f":{m[2]}", m[3])


if __name__ == "__main__":
    main()
