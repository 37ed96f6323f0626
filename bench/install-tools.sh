#!/usr/bin/env bash
# Install the tools bench/run.sh compares idemlint with, at the versions of bench/RESULTS.md:
#   semgrep   from PyPI into the current Python (pip install semgrep)
#   ast-grep  from npm into bench/.tools (gitignored); bench/tools.sh finds it there
# Override the versions with SEMGREP_VERSION / AST_GREP_VERSION ("" = latest).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
semgrep_version=${SEMGREP_VERSION-1.185.0}
ast_grep_version=${AST_GREP_VERSION-0.51.1}
python3 -m pip install --quiet "semgrep${semgrep_version:+==$semgrep_version}"
mkdir -p "$here/.tools"
npm install --silent --no-audit --no-fund --prefix "$here/.tools" "@ast-grep/cli${ast_grep_version:+@$ast_grep_version}"
# npm may skip the package's postinstall; the platform binary is shipped either way.
"$here/.tools/node_modules/.bin/ast-grep" --version
semgrep --version 2>/dev/null || python3 -m semgrep --version
