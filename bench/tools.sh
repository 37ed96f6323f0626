# Sourced by bench/run.sh and bench/rules/check.sh: find semgrep and ast-grep.
#   SEMGREP   semgrep executable (default: `semgrep` on PATH)
#   AST_GREP  ast-grep executable (default: `ast-grep` on PATH, else bench/.tools, where
#             bench/install-tools.sh puts it). Never `sg`: on Debian /usr/bin/sg is newgrp.
_bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ -z "${SEMGREP:-}" ]; then
  SEMGREP=$(command -v semgrep || true)
fi
if [ -z "${AST_GREP:-}" ]; then
  for _c in "$(command -v ast-grep || true)" \
            "$_bench_dir/.tools/node_modules/.bin/ast-grep" \
            /work/tools/npm/node_modules/.bin/ast-grep; do
    if [ -n "$_c" ] && [ -x "$_c" ]; then AST_GREP=$_c; break; fi
  done
fi
AST_GREP=${AST_GREP:-}
# Semgrep must not phone home during a timed run.
export SEMGREP_ENABLE_VERSION_CHECK=0 SEMGREP_SEND_METRICS=off
