#!/usr/bin/env bash
# Replays the action's steps (action.yml) in scratch git repositories, as GitHub would run them:
# the install from a wheel (served locally: PIP_FIND_LINKS with PIP_NO_INDEX), the check from a
# subdirectory of the repository, the SARIF it leaves for the upload step, and the verdict for
# each exit code and fail-on-findings setting.
#
#   action/test.sh WHEEL_DIR     (a directory holding an idemlint-*.whl)
set -euo pipefail
wheels=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
run=$here/run.sh
demo=$(cd "$here/../demo" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PIP_FIND_LINKS=$wheels PIP_NO_INDEX=1 RUNNER_TEMP=$work/runner
mkdir -p "$RUNNER_TEMP"
wheel=$(ls "$wheels"/idemlint-*.whl | head -n 1)
fail=0
check() { # name, condition...
  local name=$1; shift
  if "$@"; then echo "ok: $name"; else echo "FAIL: $name"; fail=1; fi
}
output() { sed -n "s/^$1=//p" "$GITHUB_OUTPUT" | tail -n 1; }

# A repository whose service lives in a subdirectory; the action runs there.
repo=$work/repo
mkdir -p "$repo"
cp -r "$demo" "$repo/demo"
git -C "$repo" init -q
export GITHUB_OUTPUT=$work/out1
(cd "$repo/demo" && IDEMLINT_WHEEL=$wheel IDEMLINT_PATHS=. IDEMLINT_ARGS="" \
  IDEMLINT_SARIF_FILE=idemlint.sarif "$run" check > "$work/log1" 2>&1)
sarif=$(output sarif-file)
check "findings give exit-code 1" [ "$(output exit-code)" = 1 ]
check "the SARIF path is absolute and exists" [ -f "$sarif" ] && [ "${sarif#/}" != "$sarif" ]
check "the log shows the findings" grep -q "IDEM001(key-generated-in-interceptor)" "$work/log1"
bin=$RUNNER_TEMP/idemlint-venv/bin/idemlint
"$bin" check "$repo/demo" --format json --no-cache > "$work/expected.json" || true
check "SARIF paths start at the repository root, none absolute, as many results as a check" \
  python3 - "$sarif" "$work/expected.json" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
expected = json.load(open(sys.argv[2]))["findings"]
text = open(sys.argv[1]).read()
uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in runs[0]["results"]]
ok = ("file:" not in text and len(uris) == len(expected)
      and all(u.startswith("demo/billing-service/") or u.startswith("demo/payments-rs/") for u in uris))
if not ok:
    print(uris[:3], len(uris), len(expected))
sys.exit(0 if ok else 1)
PY

# The verdict step, for each exit code.
verdict() { IDEMLINT_EXIT_CODE=$1 IDEMLINT_FAIL_ON_FINDINGS=$2 "$run" verdict > /dev/null 2>&1; echo $?; }
check "findings fail the job" [ "$(verdict 1 true)" = 1 ]
check "findings pass when fail-on-findings is false" [ "$(verdict 1 false)" = 0 ]
check "a clean run passes" [ "$(verdict 0 true)" = 0 ]
check "a tool error fails even with fail-on-findings false" [ "$(verdict 2 false)" = 2 ]

# A clean repository, with extra arguments and another report path.
clean=$work/clean
mkdir -p "$clean/src/main/java"
echo 'class Clean { int one() { return 1; } }' > "$clean/src/main/java/Clean.java"
git -C "$clean" init -q
export GITHUB_OUTPUT=$work/out2
(cd "$clean" && IDEMLINT_BIN=$bin IDEMLINT_PATHS="src" IDEMLINT_ARGS="--select ALL" \
  IDEMLINT_SARIF_FILE=reports/idemlint.sarif "$run" check > "$work/log2" 2>&1) || true
check "a clean repository gives exit-code 0" [ "$(output exit-code)" = 0 ]
check "the report goes where asked" [ "$(output sarif-file)" = "$clean/reports/idemlint.sarif" ]

# A file that cannot be read as UTF-8: exit 2, and the SARIF still holds the other findings.
printf 'class Broken { String s = "\xff"; }\n' > "$repo/demo/billing-service/src/main/java/Broken.java"
export GITHUB_OUTPUT=$work/out3
(cd "$repo/demo" && IDEMLINT_BIN=$bin IDEMLINT_SARIF_FILE=idemlint.sarif "$run" check > "$work/log3" 2>&1)
check "a file that cannot be read gives exit-code 2" [ "$(output exit-code)" = 2 ]
check "and the report keeps the other findings" python3 -c "
import json, sys
r = json.load(open('$(output sarif-file)'))['runs'][0]
sys.exit(0 if len(r['results']) == $(python3 -c "import json; print(len(json.load(open('$work/expected.json'))['findings']))") and not r['invocations'][0]['executionSuccessful'] else 1)"

# action.yml itself: every input it refers to is declared, and every variable run.sh reads
# is handed to it by a step.
check "action.yml's inputs and run.sh's variables agree" python3 - "$here/../action.yml" "$run" <<'PY'
import re, sys
import yaml
action, script = yaml.safe_load(open(sys.argv[1])), open(sys.argv[2]).read()
text = open(sys.argv[1]).read()
used = set(re.findall(r"inputs\.([a-z-]+)", text))
declared = set(action["inputs"])
given = {k for s in action["runs"]["steps"] for k in s.get("env", {})}
read = set(re.findall(r"\$\{?(IDEMLINT_[A-Z_]+)", script)) - {"IDEMLINT_BIN"}
bad = (used - declared) | (read - given)
if bad:
    print("undeclared or not handed over:", sorted(bad))
sys.exit(1 if bad else 0)
PY

[ $fail = 0 ] && echo OK
exit $fail
