#!/usr/bin/env bash
# The work of the GitHub Action (action.yml), in two steps so that the SARIF upload runs between
# them. Its inputs are environment variables, so it runs and is tested outside Actions too
# (action/test.sh).
#
#   run.sh check    installs idemlint (IDEMLINT_BIN if set; else IDEMLINT_WHEEL, else
#                   idemlint==IDEMLINT_VERSION, else the latest release, into a virtualenv),
#                   runs `idemlint check IDEMLINT_PATHS --format sarif --output
#                   IDEMLINT_SARIF_FILE IDEMLINT_ARGS`, prints the findings for the log, and
#                   writes exit-code and sarif-file to $GITHUB_OUTPUT. It exits 0 whatever
#                   idemlint found, so that the report is uploaded first.
#   run.sh verdict  fails (exit 1) on findings when IDEMLINT_FAIL_ON_FINDINGS is true, and
#                   (exit 2) on any tool error.
set -euo pipefail
out=${GITHUB_OUTPUT:-/dev/null}

case "${1:-}" in
check)
  if [ -n "${IDEMLINT_BIN:-}" ]; then
    bin=$IDEMLINT_BIN
  else
    venv="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/idemlint-venv"
    python3 -m venv "$venv"
    spec=idemlint
    [ -n "${IDEMLINT_VERSION:-}" ] && spec="idemlint==$IDEMLINT_VERSION"
    [ -n "${IDEMLINT_WHEEL:-}" ] && spec=$IDEMLINT_WHEEL
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$spec"
    bin=$venv/bin/idemlint
  fi
  "$bin" --version
  read -ra paths <<< "${IDEMLINT_PATHS:-.}"
  read -ra extra <<< "${IDEMLINT_ARGS:-}"
  sarif=${IDEMLINT_SARIF_FILE:-idemlint.sarif}
  set +e
  "$bin" check "${paths[@]}" "${extra[@]}" --format sarif --output "$sarif"
  code=$?
  set -e
  # The findings for the log, from the result cache the run just wrote (no second analysis).
  if [ "$code" != 2 ]; then
    "$bin" check "${paths[@]}" "${extra[@]}" --exit-zero || true
  fi
  echo "exit-code=$code" >> "$out"
  [ -f "$sarif" ] && echo "sarif-file=$(cd "$(dirname "$sarif")" && pwd)/$(basename "$sarif")" >> "$out"
  exit 0
  ;;
verdict)
  case "${IDEMLINT_EXIT_CODE:-}" in
  0) exit 0 ;;
  1)
    if [ "${IDEMLINT_FAIL_ON_FINDINGS:-true}" = true ]; then
      echo "::error::idemlint reported findings (see the log above or code scanning)"
      exit 1
    fi
    exit 0
    ;;
  *)
    echo "::error::idemlint could not check every file (exit ${IDEMLINT_EXIT_CODE:-?})"
    exit 2
    ;;
  esac
  ;;
*)
  echo "usage: run.sh check|verdict" >&2
  exit 2
  ;;
esac
