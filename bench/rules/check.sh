#!/usr/bin/env bash
# Validate the benchmark rules: both rule sets must load without errors and report exactly the
# lines marked `expect: IDEMnnn` in bench/rules/samples (no more, no fewer).
#
#   bench/rules/check.sh            # semgrep and ast-grep from PATH (or $SEMGREP / $AST_GREP)
#
# `semgrep --validate` is run too when BENCH_ONLINE=1: it downloads Semgrep's rule lints from
# the Semgrep registry, so it cannot run offline; offline, a rule that does not parse still
# shows up as an error in the samples run below, which fails this script.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../tools.sh
. "$here/../tools.sh"
cd "$here"
status=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

compare() { # tool results-file (lines "path:line:CODE")
  python3 - "$1" "$2" <<'EOF'
import os, re, sys
tool, got_file = sys.argv[1], sys.argv[2]
want = set()
for name in sorted(os.listdir("samples")):
    with open(os.path.join("samples", name), encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            m = re.search(r"expect: (IDEM\d{3})", line)
            if m:
                want.add(f"{name}:{i}:{m.group(1)}")
got = set(l.strip() for l in open(got_file) if l.strip())
missing, extra = sorted(want - got), sorted(got - want)
for m in missing:
    print(f"{tool}: missing {m}")
for e in extra:
    print(f"{tool}: unexpected {e}")
print(f"{tool}: {len(want & got)}/{len(want)} expected findings, {len(extra)} unexpected")
sys.exit(1 if missing or extra else 0)
EOF
}

if [ -n "$SEMGREP" ]; then
  if [ "${BENCH_ONLINE:-0}" = 1 ]; then
    "$SEMGREP" --validate --metrics=off --disable-version-check --config semgrep.yml || status=1
  fi
  (cd samples && "$SEMGREP" scan --metrics=off --disable-version-check --strict --quiet \
      --config ../semgrep.yml --json -o "$tmp/semgrep.json" . ) || true
  python3 - "$tmp/semgrep.json" > "$tmp/semgrep.txt" <<'EOF' || status=1
import json, os, sys
d = json.load(open(sys.argv[1]))
for e in d["errors"]:
    print("semgrep error:", e.get("message", e), file=sys.stderr)
for r in d["results"]:
    code = r["check_id"].split(".")[-1].split("-")[0].upper()
    print(f'{os.path.basename(r["path"])}:{r["start"]["line"]}:{code}')
sys.exit(1 if d["errors"] else 0)
EOF
  compare semgrep "$tmp/semgrep.txt" || status=1
else
  echo "semgrep: not installed (pip install semgrep); skipped"
  status=1
fi

if [ -n "$AST_GREP" ]; then
  rc=0
  "$AST_GREP" scan -c sgconfig.yml --json=compact samples > "$tmp/sg.json" 2> "$tmp/sg.err" || rc=$?
  # exit 1 only says that error-severity findings were reported
  if [ "$rc" -gt 1 ] || ! python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/sg.json" 2>/dev/null; then
    cat "$tmp/sg.err" >&2
    status=1
  else
    python3 - "$tmp/sg.json" > "$tmp/sg.txt" <<'EOF'
import json, os, sys
for r in json.load(open(sys.argv[1])):
    code = r["ruleId"].split("-")[0].upper()
    print(f'{os.path.basename(r["file"])}:{r["range"]["start"]["line"] + 1}:{code}')
EOF
    compare ast-grep "$tmp/sg.txt" || status=1
  fi
else
  echo "ast-grep: not installed (npm install -g @ast-grep/cli); skipped"
  status=1
fi
exit $status
