#!/usr/bin/env bash
# Tries this mirror for real, as a user would: pre-commit from PyPI, the idemlint wheel from a
# local directory (PIP_FIND_LINKS with PIP_NO_INDEX: the hook's install fetches nothing else),
# and no cargo on PATH. On a copy of idemlint's demo in a scratch git repository it checks that
# staging a file with findings fails the hook with that file's whole-project findings, that a
# clean file passes, and that --all-files reports what `idemlint check` reports.
#
#   pre-commit-mirror/test.sh WHEEL_DIR     (a directory holding an idemlint-*.whl)
set -euo pipefail
wheels=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
demo=$(cd "$here/../demo" && pwd)
version=$(sed -n 's/^dependencies = \["idemlint==\(.*\)"\]/\1/p' "$here/pyproject.toml")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# pre-commit (and the mirror's build backend, served locally like the wheel) from PyPI.
python3 -m venv "$work/tools"
"$work/tools/bin/pip" install --quiet pre-commit "$wheels"/idemlint-"$version"-*.whl
mkdir "$work/links"
cp "$wheels"/idemlint-"$version"-*.whl "$work/links/"
"$work/tools/bin/pip" download --quiet --dest "$work/links" "setuptools>=77"

# The mirror as its own repository, tagged as its release.
cp -r "$here" "$work/mirror"
git -C "$work/mirror" init -q
git -C "$work/mirror" add -A
git -C "$work/mirror" -c user.name=t -c user.email=t@t commit -qm mirror
git -C "$work/mirror" tag "v$version"

# A project using it.
cp -r "$demo" "$work/project"
cd "$work/project"
git init -q
cat > .pre-commit-config.yaml <<YAML
repos:
  - repo: $work/mirror
    rev: v$version
    hooks:
      - id: idemlint
YAML
# Enough files that pre-commit splits --all-files over several runs (past its command-line
# limit): each run must still report its files' whole-project findings.
for i in $(seq 1 2500); do
  d=billing-service/src/main/java/com/acme/billing/generated/p$((i / 100))
  mkdir -p "$d"
  printf 'package com.acme.billing.generated.p%d;\n\npublic final class LongGeneratedHelperClassName%d {\n    int value() { return %d; }\n}\n' \
    $((i / 100)) "$i" "$i" > "$d/LongGeneratedHelperClassName$i.java"
done
git add -A
git -C . -c user.name=t -c user.email=t@t commit -qm project --no-verify

# What a whole-project run reports, per file (the wheel's binary).
"$work/tools/bin/idemlint" check . --format json --no-cache > "$work/expected.json" || true
read -r flagged clean < <(python3 - "$work/expected.json" <<'PY'
import json, subprocess, sys
found = {f["path"] for f in json.load(open(sys.argv[1]))["findings"]}
files = subprocess.run(["git", "ls-files", "*.java", "*.kt", "*.rs"], capture_output=True,
                       text=True).stdout.split()
flagged = sorted(f for f in files if f in found)
clean = sorted(f for f in files if f not in found and "/test/" not in f)
print(flagged[0], clean[0])
PY
)

export PIP_FIND_LINKS="$work/links" PIP_NO_INDEX=1 PRE_COMMIT_HOME="$work/cache"
export PATH="$work/tools/bin:/usr/bin:/bin"
if command -v cargo > /dev/null; then
  echo "FAIL: cargo is on PATH ($(command -v cargo))"; exit 1
fi
fail=0
start=$(date +%s.%N)
if pre-commit run --files "$flagged" > "$work/flagged.out" 2>&1; then
  echo "FAIL: staging $flagged passed"; fail=1
fi
echo "hook installed and run in $(python3 -c "import time; print(round(time.time() - $start, 1))") s"
grep -q "$flagged" "$work/flagged.out" || { echo "FAIL: no finding in $flagged"; fail=1; }
pre-commit run --files "$clean" > "$work/clean.out" 2>&1 || { echo "FAIL: $clean did not pass"; cat "$work/clean.out"; fail=1; }
pre-commit run --all-files > "$work/all.out" 2>&1 && { echo "FAIL: --all-files passed"; fail=1; }
# Each idemlint run ends with its summary line: how many runs pre-commit made.
runs=$(grep -cE "^(Found [0-9]+ finding|No findings in|Checked [0-9]+ file)" "$work/all.out" || true)
echo "--all-files over $(git ls-files | wc -l) files: $runs idemlint runs"
[ "$runs" -ge 2 ] || { echo "FAIL: pre-commit did not split the file list"; fail=1; }

python3 - "$work/expected.json" "$work/all.out" <<'PY' || fail=1
import json, re, sys
want = sorted((f["code"], f["path"]) for f in json.load(open(sys.argv[1]))["findings"])
out = open(sys.argv[2]).read()
got = sorted(re.findall(r"^(IDEM\d{3})\(.*?[╭┌]─\[([^:\]]+):", out, re.S | re.M))
if got != want:
    print(f"FAIL: --all-files reported {len(got)} findings, idemlint check {len(want)}")
    sys.exit(1)
print(f"--all-files: the same {len(want)} findings as idemlint check")
PY
echo "staged $flagged: hook failed with its findings; staged $clean: passed"
[ $fail = 0 ] && echo "OK"
exit $fail
