#!/usr/bin/env bash
# idemlint benchmark: idemlint vs its own parse floor, Semgrep and ast-grep on one corpus.
#
#   bench/run.sh [options]
#
#   --corpus DIR      corpus to scan (default bench/corpus; built by bench/corpus.sh if missing)
#   --runs N          time every command N times; report the median wall time and the largest
#                     peak RSS (default 1)
#   --tools LIST      comma-separated subset of: idemlint,parse,default,warm,semgrep,ast-grep
#                     (default: all of them)
#   --semgrep-full    also time Semgrep forced to parse every file (rules/semgrep-parse-all.yml
#                     adds a rule with no literal word for its prefilter to skip files on; slow)
#   --scale           instead: time idemlint (every rule, all threads) and the parse floor on
#                     1x, 2x and 4x copies of the corpus, to show that time is linear in size
#   --factors "1 2 4" the scale factors for --scale
#   --bin PATH        time this idemlint binary instead of building one
#   --rev REV         build idemlint from commit REV (git archive into bench/.build; the work
#                     tree is not touched) instead of from the work tree
#   --threads N       the "all threads" count (default: nproc)
#   --out DIR         where raw outputs and the report go (default bench/out)
#   --wait-quiet SECS before each timed command, wait up to SECS for the machine to go quiet
#                     (under 10% CPU); a command that starts on a busy machine is flagged in
#                     the report either way (default 0: do not wait)
#
# What is timed (each from inside the corpus, page cache warmed first; N = --threads):
#   idemlint ALL, 1 thread   idemlint check --select ALL --exit-zero --format json --isolated
#                            --include-tests --threads 1 .
#   idemlint ALL, N threads  the same with --threads N
#   parse floor, 1 / N       idemlint check --parse-only ... (hidden flag: same discovery, every
#                            file parsed, no rule run); "n/a" when the binary lacks it
#   idemlint --no-prefilter  every rule, N threads, prefilter off; only when the binary has the flag
#   idemlint --exhaustive    every rule, N threads, evidence gates off; only when the binary has
#                            the flag; its findings are compared with the gated run's (identical)
#   idemlint default, N      every rule, N threads, test sources skipped (idemlint's default)
#   warm, nothing changed    every rule, N threads, after a run that filled a fresh --cache-dir
#   warm, one file changed   the same, with a comment appended to one source file before each
#                            run (its outline is the same: the cache reuses the result)
#   warm, code changed       the same file with a class declaration appended instead (its
#                            outline changes: a whole run)
#   (every cold row runs with --no-cache when the binary has it)
#   semgrep                  semgrep scan --metrics=off --project-root . --jobs N
#                            --max-target-bytes 0 --config bench/rules/semgrep.yml --json .
#                            (an empty .semgrepignore in the corpus root, so no test folder is
#                            skipped; --project-root . so that file is the one read even when
#                            the corpus sits inside a git work tree)
#   ast-grep                 ast-grep scan -c bench/rules/sgconfig.yml --threads N
#                            --no-ignore vcs --no-ignore parent --json=compact .
# --include-tests and the ignore flags make every tool read the same files; --isolated keeps
# idemlint from picking up a configuration file above the corpus.
#
# Columns: files = what the tool says it scanned; lines and MB = the whole corpus (from its
# MANIFEST); wall = elapsed seconds; MB/s = corpus MB / wall; RSS = peak resident set of the
# largest process in the tool's process tree (GNU time %M); "x idemlint" = wall (or RSS) divided
# by idemlint ALL on N threads.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
corpus="$here/corpus"
runs=1
tools="idemlint,parse,default,warm,semgrep,ast-grep"
semgrep_full=0
scale=0
factors="1 2 4"
bin=""
rev=""
threads=$(nproc 2>/dev/null || echo 2)
outdir="$here/out"
wait_quiet=0

while [ $# -gt 0 ]; do
  case "$1" in
    --corpus) corpus=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --tools) tools=$2; shift 2 ;;
    --semgrep-full) semgrep_full=1; shift ;;
    --scale) scale=1; shift ;;
    --factors) factors=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --rev) rev=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --out) outdir=$2; shift 2 ;;
    --wait-quiet) wait_quiet=$2; shift 2 ;;
    -h|--help) sed -n '2,51p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$corpus" in /*) ;; *) corpus="$PWD/$corpus" ;; esac
case "$outdir" in /*) ;; *) outdir="$PWD/$outdir" ;; esac
[ -x /usr/bin/time ] || { echo "run.sh: needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 2; }
has_tool() { case ",$tools," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

# shellcheck source=tools.sh
. "$here/tools.sh"
mkdir -p "$outdir"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
load_before=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
report="$outdir/report-$stamp.md"
log() { echo "$*" >&2; }

# ------------------------------------------------------------------------------ build idemlint
idemlint_desc=""
if [ -n "$bin" ]; then
  case "$bin" in /*) ;; *) bin="$PWD/$bin" ;; esac
  idemlint_desc="$bin (given)"
elif [ -n "$rev" ]; then
  sha=$(git -C "$root" rev-parse --verify "$rev^{commit}") || exit 2
  src="$here/.build/src-$sha"
  if [ ! -f "$src/Cargo.toml" ]; then
    mkdir -p "$src.tmp" && git -C "$root" archive "$sha" | tar -x -C "$src.tmp" && mv "$src.tmp" "$src"
  fi
  log "building idemlint $sha (release) ..."
  CARGO_TARGET_DIR="$here/.build/target" cargo build --release --quiet --manifest-path "$src/Cargo.toml" || exit 2
  bin="$here/.build/target/release/idemlint"
  idemlint_desc="commit $sha"
else
  log "building idemlint (release, work tree) ..."
  cargo build --release --quiet --manifest-path "$root/Cargo.toml" || exit 2
  bin="${CARGO_TARGET_DIR:-$root/target}/release/idemlint"
  head=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
  dirty=""
  [ -n "$(git -C "$root" status --porcelain --untracked-files=no -- src Cargo.toml Cargo.lock 2>/dev/null)" ] && dirty=" + uncommitted changes"
  idemlint_desc="work tree at $head$dirty"
fi
[ -x "$bin" ] || { echo "run.sh: no idemlint binary at $bin" >&2; exit 2; }

# Does the binary know a (hidden) flag? Unknown flags are a usage error naming the flag.
empty=$(mktemp -d)
trap 'rm -rf "$empty"' EXIT
supports() {
  local err
  err=$("$bin" check "$1" --isolated --exit-zero --format json "$empty" 2>&1 >/dev/null)
  case "$err" in *"unexpected argument"*|*"unrecognized"*|*"wasn't expected"*) return 1 ;; esac
  return 0
}
has_parse_only=0; supports --parse-only && has_parse_only=1
has_no_prefilter=0; supports --no-prefilter && has_no_prefilter=1
has_exhaustive=0; supports --exhaustive && has_exhaustive=1
# Cold rows must not be answered from a result cache.
cold_flag=(); supports --no-cache && cold_flag=(--no-cache)

# ------------------------------------------------------------------------------------- corpus
ensure_corpus() { # dir [scale]
  if [ ! -f "$1/MANIFEST" ]; then
    log "building corpus $1 ..."
    "$here/corpus.sh" --out "$1" >&2 || exit 2
  fi
}
corpus_total() { # dir -> "files lines bytes"
  awk '$1 == "total" { print $4, $5, $6 }' "$1/MANIFEST"
}
warm() { tar -cf - -C "$1" . > /dev/null 2>&1 || true; }

# --------------------------------------------------------------------------------------- timing
# CPU use of the whole machine over one second, in percent of all cores (nothing of ours runs
# then). Anything else busy on a 2-core machine skews every figure.
cpu_busy() {
  python3 -c '
import time
def snap():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v), v[3] + v[4]
t0, i0 = snap(); time.sleep(1); t1, i1 = snap()
print(round(100 * (1 - (i1 - i0) / max(1, t1 - t0))))
'
}
BUSY_NOTE=""
check_quiet() {
  local busy waited=0
  busy=$(cpu_busy)
  while [ "$wait_quiet" -gt 0 ] && [ "$busy" -gt 10 ] && [ "$waited" -lt "$wait_quiet" ]; do
    [ "$waited" = 0 ] && log "  machine busy ($busy% CPU); waiting up to ${wait_quiet}s for it to go quiet"
    sleep 10; waited=$((waited + 11)); busy=$(cpu_busy)
  done
  if [ "$busy" -gt 10 ]; then
    log "  warning: machine busy before the run ($busy% CPU): the times are skewed"
    case "$BUSY_NOTE" in *"busy before"*) ;; *) BUSY_NOTE="${BUSY_NOTE:+$BUSY_NOTE; }machine $busy% busy before a run" ;; esac
  fi
}

# time_cmd NAME DIR CMD...: run CMD in DIR $runs times; stdout/stderr to $outdir/NAME.{out,err}.
# Sets T_WALL (median seconds), T_RSS (max KiB), T_RC (last exit code).
cpu_jiffies() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat; }
time_cmd() {
  local name=$1 dir=$2 i walls="" rss=0 line w m u sy j0 j1 foreign worst=0 tries
  shift 2
  T_RC=0
  BUSY_NOTE=""
  for i in $(seq 1 "$runs"); do
    tries=0
    while :; do
      check_quiet
      j0=$(cpu_jiffies)
      (cd "$dir" && /usr/bin/time -f "%e %M %U %S" -o "$outdir/$name.time" "$@" \
          > "$outdir/$name.out" 2> "$outdir/$name.err")
      T_RC=$?
      j1=$(cpu_jiffies)
      read -r w m u sy < <(tail -n 1 "$outdir/$name.time")
      # CPU that other processes used while this ran, in % of the machine (jiffies = 1/100 s)
      foreign=$(awk -v j="$((j1 - j0))" -v u="$u" -v s="$sy" -v w="$w" -v n="$(nproc)" \
        'BEGIN { f = (j / 100 - u - s) / (w * n + 0.01) * 100; print (f < 0) ? 0 : int(f + 0.5) }')
      log "  $name run $i: ${w}s, $((m / 1024)) MiB, exit $T_RC, other processes ${foreign}% CPU"
      # a run that shared the machine is run again (twice at most) when waiting is allowed
      if [ "$foreign" -gt 10 ] && [ "$wait_quiet" -gt 0 ] && [ "$tries" -lt 2 ]; then
        tries=$((tries + 1)); log "  (run again: the machine was shared)"; continue
      fi
      break
    done
    [ "$foreign" -gt "$worst" ] && worst=$foreign
    walls="$walls $w"
    [ "$m" -gt "$rss" ] && rss=$m
  done
  if [ "$worst" -gt 10 ]; then
    BUSY_NOTE="${BUSY_NOTE:+$BUSY_NOTE; }other processes used up to ${worst}% CPU during a run"
  fi
  T_WALL=$(printf '%s\n' $walls | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
  T_RSS=$rss
}

# Files scanned and findings, from a tool's output: prints "files findings" or "? ?".
count_idemlint() {
  python3 - "$1" <<'EOF' 2>/dev/null || echo "? ?"
import json, sys
d = json.load(open(sys.argv[1]))
print(d["summary"]["files_checked"], len(d["findings"]))
EOF
}
count_semgrep() {
  python3 - "$1" <<'EOF' 2>/dev/null || echo "? ?"
import json, sys
d = json.load(open(sys.argv[1]))
print(len(d["paths"]["scanned"]), len(d["results"]))
EOF
}
count_astgrep() { # json stderr
  local files
  files=$(sed -n 's/.*scannedFileCount=\([0-9]*\).*/\1/p' "$2" | head -n 1)
  python3 - "$1" "${files:-?}" <<'EOF' 2>/dev/null || echo "? ?"
import json, sys
print(sys.argv[2], len(json.load(open(sys.argv[1]))))
EOF
}

# Rows: "label|files|findings|wall|rss_kib|note"
ROWS=()
add_row() { ROWS+=("$1|$2|$3|$4|$5|$6"); }
na_row() { ROWS+=("$1|n/a|n/a|n/a|n/a|$2"); }

idemlint_row() { # label name dir extra-args...
  local label=$1 name=$2 dir=$3 counts note=""
  shift 3
  time_cmd "$name" "$dir" "$bin" check --exit-zero --format json --isolated "${cold_flag[@]}" "$@" .
  counts=$(count_idemlint "$outdir/$name.out")
  [ "$T_RC" -eq 0 ] || note="exit $T_RC"
  [ "${counts% *}" != 0 ] || note="${note:+$note; }no file checked"
  note="${EXTRA_NOTE:-}${EXTRA_NOTE:+${note:+; }}$note"; EXTRA_NOTE=""
  note="$note${BUSY_NOTE:+${note:+; }$BUSY_NOTE}"
  add_row "$label" "${counts% *}" "${counts#* }" "$T_WALL" "$T_RSS" "$note"
}

fmt_table() { # bytes lines ref_label
  python3 - "$1" "$2" "$3" "${ROWS[@]}" <<'EOF'
import os, sys
size, lines, ref_label = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rows = [r.split("|") for r in sys.argv[4:]]
ref = next((r for r in rows if r[0] == ref_label and r[3] not in ("n/a", "")), None)
def num(x):
    try:
        return float(x)
    except ValueError:
        return None
hdr = ["tool", "files", "lines", "MB", "findings", "wall s", "MB/s", "peak RSS MiB",
       "wall x idemlint", "RSS x idemlint", "note"]
out = []
for label, files, findings, wall, rss, note in rows:
    w, m = num(wall), num(rss)
    rw = num(ref[3]) if ref else None
    rm = num(ref[4]) if ref else None
    out.append([
        label, files, f"{lines:,}", f"{size / 1e6:.1f}", findings,
        f"{w:.2f}" if w is not None else "n/a",
        f"{size / 1e6 / w:.1f}" if w else "n/a",
        f"{m / 1024:.0f}" if m is not None else "n/a",
        f"{w / rw:.2f}" if w is not None and rw else "n/a",
        f"{m / rm:.2f}" if m is not None and rm else "n/a",
        note,
    ])
print("| " + " | ".join(hdr) + " |")
print("|" + "|".join("---" if i in (0, 10) else "---:" for i in range(len(hdr))) + "|")
for r in out:
    print("| " + " | ".join(r) + " |")
if ref:
    rw, rm = float(ref[3]), float(ref[4])
    print()
    print(f"Against the targets of issue 16 (idemlint ALL on its N threads, cold = {rw:.2f} s, {rm / 1024:.0f} MiB):")
    def row(prefix):
        return next((r for r in rows if r[0].startswith(prefix) and num(r[3])), None)
    for prefix, target in (("semgrep", 10.0), ("ast-grep", 5.0)):
        r = row(prefix)
        if r:
            x = float(r[3]) / rw
            print(f"- vs {r[0]}: idemlint is {x:.2f}x as fast (target >= {target:g}x): "
                  f"{'met' if x >= target else 'NOT met'}")
    print(f"- peak RSS {rm / 1024:.0f} MiB = {rm * 1024 / 1e6:.0f} MB (target <= 150 MB): "
          f"{'met' if rm * 1024 / 1e6 <= 150 else 'NOT met'}")
    d, a = row("idemlint ALL, N threads, tests skipped"), row("ast-grep")
    if d and a:
        x = float(a[3]) / float(d[3])
        print(f"- default run (tests skipped) vs ast-grep: {x:.2f}x (target >= 10x): "
              f"{'met' if x >= 10 else 'NOT met'}")
    for label, target in (("warm, every rule, nothing changed", 0.15),
                          ("warm, every rule, one file changed (a comment)", 0.4),
                          ("warm, every rule, one file's code changed (a class added)", 0.4)):
        r = row(label)
        if r:
            print(f"- {label}: {float(r[3]):.2f} s (target <= {target:g} s): "
                  f"{'met' if float(r[3]) <= target else 'NOT met'}")
    r = row("parse floor, N")
    if r:
        print(f"- {rw / float(r[3]):.2f}x the parse floor on N threads ({float(r[3]):.2f} s); "
              f"the targets need idemlint below it")
    r = row("idemlint --exhaustive")
    if r and row("parse floor, N"):
        print(f"- --exhaustive (evidence gates off): {float(r[3]) / float(row('parse floor, N')[3]):.2f}x "
              f"the parse floor (target <= 1.3x); findings vs the gated run: {os.environ.get('EXHAUSTIVE_SAME', '?')}")
    r = row("idemlint --no-prefilter")
    if r and row("parse floor, N"):
        print(f"- --no-prefilter: {float(r[3]) / float(row('parse floor, N')[3]):.2f}x the parse floor (target <= 1.3x)")
EOF
}

header() {
  local cpu mem
  cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
  mem=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo 2>/dev/null)
  echo "# idemlint benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "- machine: $(nproc) cores (${cpu:-unknown cpu}), $mem, $(uname -sr); N = $threads threads"
  echo "- idemlint: $("$bin" --version 2>/dev/null | head -n 1), $idemlint_desc;" \
       "--parse-only: $([ $has_parse_only = 1 ] && echo yes || echo no)," \
       "--no-prefilter: $([ $has_no_prefilter = 1 ] && echo yes || echo no)"
  if has_tool semgrep; then
    echo "- semgrep: $([ -n "$SEMGREP" ] && "$SEMGREP" --version 2>/dev/null | tail -n 1 || echo 'not installed')"
  fi
  if has_tool ast-grep; then
    echo "- ast-grep: $([ -n "$AST_GREP" ] && "$AST_GREP" --version 2>/dev/null || echo 'not installed')"
  fi
  echo "- runs per command: $runs (median wall time, largest peak RSS)"
  echo "- load average before the run: $load_before (anything else busy on the machine skews the times)"
}

# ----------------------------------------------------------------------------------- --scale
if [ "$scale" = 1 ]; then
  ensure_corpus "$corpus"
  {
    header
    echo
    echo "## Linearity: idemlint on ${factors// /x, }x copies of $(basename "$corpus")"
    echo
  } | tee "$report"
  results=()
  for k in $factors; do
    if [ "$k" = 1 ]; then dir=$corpus; else
      dir="$corpus-x$k"
      [ -f "$dir/MANIFEST" ] || "$here/corpus.sh" --out "$corpus" --scale "$k" >&2 || exit 2
    fi
    read -r files lines bytes < <(corpus_total "$dir")
    warm "$dir"
    log "x$k: $dir ($files files)"
    time_cmd "scale-x$k-all" "$dir" "$bin" check --exit-zero --format json --isolated "${cold_flag[@]}" --include-tests --select ALL --threads "$threads" .
    a_w=$T_WALL a_m=$T_RSS snote=$BUSY_NOTE
    p_w="n/a" p_m="n/a"
    if [ $has_parse_only = 1 ]; then
      time_cmd "scale-x$k-parse" "$dir" "$bin" check --exit-zero --format json --isolated --include-tests --parse-only --threads "$threads" .
      p_w=$T_WALL p_m=$T_RSS
      [ -z "$BUSY_NOTE" ] || snote="${snote:+$snote; }floor: $BUSY_NOTE"
    fi
    results+=("$k|$files|$lines|$bytes|$a_w|$a_m|$p_w|$p_m|$snote")
  done
  python3 - "${results[@]}" <<'EOF' | tee -a "$report"
import sys
rows = [r.split("|") for r in sys.argv[1:]]
print("| scale | corpus files | lines | MB | idemlint ALL s | MB/s | s per 1x | peak RSS MiB | parse floor s | floor RSS MiB | note |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
base = None
for k, files, lines, size, aw, am, pw, pm, note in rows:
    k, aw, am, size = int(k), float(aw), int(am), int(size)
    base = base or aw / k
    pws = f"{float(pw):.2f}" if pw != "n/a" else "n/a"
    pms = f"{int(pm) / 1024:.0f}" if pm != "n/a" else "n/a"
    print(f"| {k}x | {int(files):,} | {int(lines):,} | {size / 1e6:.1f} | {aw:.2f} | {size / 1e6 / aw:.1f} "
          f"| {aw / k:.2f} ({aw / k / base:.2f}) | {am / 1024:.0f} | {pws} | {pms} | {note} |")
print()
print("`s per 1x` = wall time divided by the scale factor (in brackets: relative to 1x); it stays"
      " flat when time is linear in corpus size.")
EOF
  log "report: $report"
  exit 0
fi

# ------------------------------------------------------------------------------- side by side
ensure_corpus "$corpus"
read -r c_files c_lines c_bytes < <(corpus_total "$corpus")
manifest_stamp=$(head -n 1 "$corpus/MANIFEST")
: > "$corpus/.semgrepignore" # empty: Semgrep's default ignore list would skip test folders
log "corpus: $corpus: $c_files files, $c_lines lines, $c_bytes bytes"
warm "$corpus"

if has_tool idemlint; then
  log "idemlint, every rule, 1 thread"
  idemlint_row "idemlint ALL, 1 thread" idemlint-all-1 "$corpus" --select ALL --include-tests --threads 1
  log "idemlint, every rule, $threads threads"
  idemlint_row "idemlint ALL, N threads" idemlint-all-n "$corpus" --select ALL --include-tests --threads "$threads"
fi
if has_tool parse; then
  if [ $has_parse_only = 1 ]; then
    log "parse floor, 1 thread"
    idemlint_row "parse floor, 1 thread" parse-1 "$corpus" --parse-only --include-tests --threads 1
    log "parse floor, $threads threads"
    idemlint_row "parse floor, N threads" parse-n "$corpus" --parse-only --include-tests --threads "$threads"
  else
    na_row "parse floor, 1 thread" "this idemlint has no --parse-only"
    na_row "parse floor, N threads" "this idemlint has no --parse-only"
  fi
fi
if has_tool idemlint && [ $has_no_prefilter = 1 ]; then
  log "idemlint --no-prefilter, $threads threads"
  idemlint_row "idemlint --no-prefilter, N threads" idemlint-noprefilter-n "$corpus" --select ALL --include-tests --no-prefilter --threads "$threads"
fi
if has_tool idemlint && [ $has_exhaustive = 1 ]; then
  log "idemlint --exhaustive, $threads threads"
  idemlint_row "idemlint --exhaustive, N threads" idemlint-exhaustive-n "$corpus" --select ALL --include-tests --exhaustive --threads "$threads"
  same=$(python3 - "$outdir/idemlint-all-n.out" "$outdir/idemlint-exhaustive-n.out" <<'PY'
import json, sys
a, b = (json.load(open(p))["findings"] for p in sys.argv[1:3])
print("identical" if a == b else f"DIFFERENT ({len(a)} gated, {len(b)} exhaustive)")
PY
)
  log "--exhaustive findings vs the gated run: $same"
  export EXHAUSTIVE_SAME="$same"
fi
if has_tool default; then
  log "idemlint default (tests skipped), $threads threads"
  EXTRA_NOTE="test sources not read: lines, MB and MB/s are the corpus's"
  idemlint_row "idemlint ALL, N threads, tests skipped" idemlint-default-n "$corpus" --select ALL --threads "$threads"
fi
if has_tool warm; then
  if [ ${#cold_flag[@]} = 1 ]; then
    cache_dir=$(mktemp -d)
    warm_args=(check --exit-zero --format json --isolated --include-tests --select ALL --threads "$threads" --cache-dir "$cache_dir" .)
    (cd "$corpus" && "$bin" "${warm_args[@]}" > /dev/null)
    log "warm, nothing changed"
    time_cmd warm-nochange "$corpus" "$bin" "${warm_args[@]}"
    counts=$(count_idemlint "$outdir/warm-nochange.out")
    add_row "warm, every rule, nothing changed" "${counts% *}" "${counts#* }" "$T_WALL" "$T_RSS" "${BUSY_NOTE:-}"
    # One file changed before each timed run: a line appended to the corpus's first source
    # file (restored afterwards). A comment leaves its outline as it was (the cache reuses the
    # result); a class declaration changes it (nothing learnt from it can be reused).
    changed=$(cd "$corpus" && find . -name '*.java' -print | LC_ALL=C sort | head -n 1)
    cp "$corpus/$changed" "$outdir/changed.orig"
    warm_edit() { # name, label, the line's shell text (run per timed run)
      log "$2 ($changed)"
      time_cmd "$1" "$corpus" sh -c "echo \"$3\" >> \"\$0\"; exec \"\$@\"" \
        "$changed" "$bin" "${warm_args[@]}"
      cp "$outdir/changed.orig" "$corpus/$changed"
      counts=$(count_idemlint "$outdir/$1.out")
      add_row "$2" "${counts% *}" "${counts#* }" "$T_WALL" "$T_RSS" "${BUSY_NOTE:-}"
    }
    warm_edit warm-onechanged "warm, every rule, one file changed (a comment)" \
      '// changed $(date +%s%N)'
    warm_edit warm-codechanged "warm, every rule, one file's code changed (a class added)" \
      'class IdemlintBenchEdit$(date +%s%N) {}'
    rm -rf "$cache_dir"
  else
    na_row "warm, every rule, nothing changed" "this idemlint has no result cache"
  fi
fi
if has_tool semgrep; then
  if [ -n "$SEMGREP" ]; then
    log "semgrep"
    semgrep_args=(scan --metrics=off --disable-version-check --project-root . --jobs "$threads"
      --max-target-bytes 0 --config "$here/rules/semgrep.yml" --json -o "$outdir/semgrep.json" .)
    time_cmd semgrep "$corpus" "$SEMGREP" "${semgrep_args[@]}"
    counts=$(count_semgrep "$outdir/semgrep.json")
    note=""; [ "$T_RC" -eq 0 ] || note="exit $T_RC"
    note="$note${BUSY_NOTE:+${note:+; }$BUSY_NOTE}"
    add_row "semgrep" "${counts% *}" "${counts#* }" "$T_WALL" "$T_RSS" "$note"
    if [ "$semgrep_full" = 1 ]; then
      log "semgrep, every file parsed"
      semgrep_args=(scan --metrics=off --disable-version-check --project-root . --jobs "$threads"
        --max-target-bytes 0 --config "$here/rules/semgrep.yml" --config "$here/rules/semgrep-parse-all.yml"
        --json -o "$outdir/semgrep-full.json" .)
      time_cmd semgrep-full "$corpus" "$SEMGREP" "${semgrep_args[@]}"
      counts=$(python3 - "$outdir/semgrep-full.json" <<'EOF' 2>/dev/null || echo "? ?"
import json, sys
d = json.load(open(sys.argv[1]))
bench = [r for r in d["results"] if not r["check_id"].endswith("bench-parse-every-file")]
print(len(d["paths"]["scanned"]), len(bench))
EOF
)
      note="+ rules/semgrep-parse-all.yml"; [ "$T_RC" -eq 0 ] || note="$note, exit $T_RC"
      note="$note${BUSY_NOTE:+; $BUSY_NOTE}"
      add_row "semgrep, every file parsed" "${counts% *}" "${counts#* }" "$T_WALL" "$T_RSS" "$note"
    fi
  else
    na_row "semgrep" "not installed (bench/install-tools.sh)"
  fi
fi
if has_tool ast-grep; then
  if [ -n "$AST_GREP" ]; then
    log "ast-grep"
    time_cmd ast-grep "$corpus" "$AST_GREP" scan -c "$here/rules/sgconfig.yml" --threads "$threads" \
      --no-ignore vcs --no-ignore parent --inspect summary --json=compact .
    counts=$(count_astgrep "$outdir/ast-grep.out" "$outdir/ast-grep.err")
    note=""; [ "$T_RC" -le 1 ] || note="exit $T_RC" # 1 = error-severity matches found
    note="$note${BUSY_NOTE:+${note:+; }$BUSY_NOTE}"
    add_row "ast-grep" "${counts% *}" "${counts#* }" "$T_WALL" "$T_RSS" "$note"
  else
    na_row "ast-grep" "not installed (bench/install-tools.sh)"
  fi
fi

{
  header
  echo "- corpus: $corpus: $c_files files, $c_lines lines, $(awk -v b="$c_bytes" 'BEGIN { printf "%.1f", b / 1e6 }') MB"
  awk '$1 !~ /^#/ && $1 != "total" && NF >= 6 { printf "  - %s @ %s: %s files, %s lines\n", $1, substr($2, 1, 12), $(NF-2), $(NF-1) }' "$corpus/MANIFEST"
  echo
  fmt_table "$c_bytes" "$c_lines" "idemlint ALL, N threads"
  if [ "$(head -n 1 "$corpus/MANIFEST" 2>/dev/null)" != "$manifest_stamp" ]; then
    echo
    echo "**WARNING: the corpus was rebuilt while this ran: these figures are not valid.**"
  fi
} | tee "$report"
log "raw outputs in $outdir; report: $report"
