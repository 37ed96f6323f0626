#!/usr/bin/env bash
# Build the benchmark corpus.
#
#   bench/corpus.sh [--out DIR] [--scale N] [--generated] [--gen-files N] [--force]
#
# Default: DIR = bench/corpus (gitignored). The corpus is the Java/Kotlin/Rust sources
# (*.java *.kt *.kts *.rs, nothing else) of six public repositories, unpacked from local bare
# git mirrors:
#
#   spring-projects/spring-framework  square/okhttp  apache/httpcomponents-client
#   square/retrofit  Kotlin/kotlinx.coroutines  tokio-rs/tokio
#
# A mirror is looked for as $BENCH_MIRRORS/<owner>+<name>* (default BENCH_MIRRORS=/work/.mirror),
# either a bare git dir itself or one with a `repo/` bare git dir inside. The pinned commit
# below is used when the mirror has it, else the mirror's HEAD (printed, and recorded in
# DIR/MANIFEST). With BENCH_CLONE=1, a repository with no mirror is cloned (--depth 1 --filter)
# from GitHub instead; off by default, for machines with no route to GitHub.
#
# If no repository can be had at all (or with --generated), the corpus is generated instead by
# bench/gen_corpus.py: N (default 13683, the real corpus' file count) realistic Java/Kotlin/Rust
# files, a sprinkling of them with interceptor/retry/scheduler patterns.
#
# --scale N (N = 2, 4, ...): also make DIR-xN holding N full copies of DIR (copy1/ .. copyN/),
# for the linearity check. Builds DIR first if it is missing.
#
# DIR/MANIFEST records where each part came from, and the files / lines / bytes.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out="$here/corpus"
scale=1
generated=0
gen_files=13683
force=0
mirrors=${BENCH_MIRRORS:-/work/.mirror}

while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --out=*) out=${1#*=}; shift ;;
    --scale) scale=$2; shift 2 ;;
    --scale=*) scale=${1#*=}; shift ;;
    --generated) generated=1; shift ;;
    --gen-files) gen_files=$2; shift 2 ;;
    --gen-files=*) gen_files=${1#*=}; shift ;;
    --force) force=1; shift ;;
    -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "corpus.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac

# owner/name  pinned-commit (the snapshot the reference figures in bench/RESULTS.md were taken on)
REPOS="
spring-projects/spring-framework 91eb42645e26a7ef9382b4a655bcefe5c8682fee
square/okhttp 1682d9bac8c03dffde2969b0b74d47649d0dbb52
apache/httpcomponents-client 86c313b2876a8796ab696a2aab546ba4fe6ac227
square/retrofit 0b118105fe8436791436b8bc9c95b9aa2cfd3bdd
Kotlin/kotlinx.coroutines 792ac67bdcd5592e5764753e623a9e8c6e4bcb29
tokio-rs/tokio ea91b33ca57ff0581b38e735cc108f831bccbdaa
"

# Count source files, lines and bytes under a directory: "files lines bytes".
measure() {
  find "$1" -type f \( -name '*.java' -o -name '*.kt' -o -name '*.kts' -o -name '*.rs' \) -print0 |
    python3 -c '
import sys
files = lines = size = 0
for p in sys.stdin.buffer.read().split(b"\0"):
    if not p:
        continue
    with open(p, "rb") as f:
        data = f.read()
    files += 1
    size += len(data)
    lines += data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
print(files, lines, size)
'
}

# Find a bare git dir for owner/name under $mirrors.
find_mirror() {
  local key=${1/\//+} d
  for d in "$mirrors/$key" "$mirrors/$key"*; do
    [ -d "$d" ] || continue
    if [ -f "$d/HEAD" ] && [ -d "$d/objects" ]; then echo "$d"; return 0; fi
    if [ -f "$d/repo/HEAD" ] && [ -d "$d/repo/objects" ]; then echo "$d/repo"; return 0; fi
    if [ -d "$d/.git" ]; then echo "$d/.git"; return 0; fi
  done
  return 1
}

# Keep only regular Java/Kotlin/Rust source files (no symlinks, no ignore files, nothing else),
# so that every tool sees the same files.
keep_sources() {
  find "$1" \( -type l -o \( -type f ! -name '*.java' ! -name '*.kt' ! -name '*.kts' ! -name '*.rs' \) \) -delete
  find "$1" -depth -type d -empty -delete
}

# Unpack the sources of one repository into $2.
unpack_repo() {
  local repo=$1 pin=$2 dest=$3 gitdir rev
  if gitdir=$(find_mirror "$repo"); then
    if git --git-dir="$gitdir" cat-file -e "$pin^{commit}" 2>/dev/null; then
      rev=$pin
    else
      rev=$(git --git-dir="$gitdir" rev-parse HEAD)
      echo "  note: $repo mirror lacks pinned $pin; using its HEAD $rev" >&2
    fi
    mkdir -p "$dest"
    git --git-dir="$gitdir" archive --format=tar "$rev" | tar -x -C "$dest" || return 1
    keep_sources "$dest"
    echo "$repo $rev mirror:$gitdir"
    return 0
  fi
  if [ "${BENCH_CLONE:-0}" = 1 ]; then
    local tmp
    tmp=$(mktemp -d)
    if timeout 600 git clone -q --depth 1 --filter=blob:none --no-checkout \
        "https://github.com/$repo.git" "$tmp/r" 2>/dev/null; then
      rev=$(git -C "$tmp/r" rev-parse HEAD)
      mkdir -p "$dest"
      git -C "$tmp/r" archive --format=tar HEAD | tar -x -C "$dest" || { rm -rf "$tmp"; return 1; }
      keep_sources "$dest"
      rm -rf "$tmp"
      echo "$repo $rev clone"
      return 0
    fi
    rm -rf "$tmp"
  fi
  return 1
}

build_corpus() {
  local dir=$1 tmp manifest got=0 repo pin line
  tmp="$dir.tmp.$$"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  manifest="$tmp/MANIFEST"
  {
    echo "# idemlint benchmark corpus, built $(date -u +%Y-%m-%dT%H:%M:%SZ) by bench/corpus.sh"
    echo "# part  revision  source  files  lines  bytes"
  } > "$manifest"
  if [ "$generated" = 0 ]; then
    while read -r repo pin; do
      [ -n "$repo" ] || continue
      echo "corpus: $repo ..." >&2
      if line=$(unpack_repo "$repo" "$pin" "$tmp/${repo#*/}"); then
        got=$((got + 1))
        echo "$line $(measure "$tmp/${repo#*/}")" >> "$manifest"
      else
        echo "  $repo: no mirror under $mirrors (and no clone); skipped" >&2
        echo "# $repo missing" >> "$manifest"
      fi
    done <<EOF
$REPOS
EOF
  fi
  if [ "$got" = 0 ]; then
    if [ "$generated" = 1 ]; then echo "corpus: generating $gen_files files" >&2; else echo "corpus: no repository available; generating $gen_files files" >&2; fi
    python3 "$here/gen_corpus.py" --out "$tmp/generated" --files "$gen_files"
    echo "generated seed=1 gen_corpus.py $(measure "$tmp/generated")" >> "$manifest"
  fi
  echo "total - - $(measure "$tmp")" >> "$manifest"
  rm -rf "$dir"
  mv "$tmp" "$dir"
}

if [ "$force" = 1 ] || [ ! -f "$out/MANIFEST" ]; then
  build_corpus "$out"
else
  echo "corpus: $out exists (use --force to rebuild)" >&2
fi
cat "$out/MANIFEST"

if [ "$scale" -gt 1 ]; then
  big="$out-x$scale"
  if [ "$force" = 1 ] || [ ! -f "$big/MANIFEST" ]; then
    rm -rf "$big" "$big.tmp.$$"
    mkdir -p "$big.tmp.$$"
    i=1
    while [ "$i" -le "$scale" ]; do
      mkdir -p "$big.tmp.$$/copy$i"
      # real copies, not hard links: each copy is its own file
      (cd "$out" && tar -c --exclude=./MANIFEST .) | tar -x -C "$big.tmp.$$/copy$i"
      i=$((i + 1))
    done
    {
      echo "# $scale copies of $out"
      echo "total - - $(measure "$big.tmp.$$")"
    } > "$big.tmp.$$/MANIFEST"
    mv "$big.tmp.$$" "$big"
  fi
  echo "corpus x$scale: $big: $(tail -n 1 "$big/MANIFEST")"
fi
