#!/usr/bin/env bash
# Builds the wheels a release publishes: portable Linux wheels (manylinux2014, glibc 2.17 and
# later) for each target in $TARGETS, linked with zig (`ziglang` from PyPI) so that no manylinux
# container is needed, and the sdist. Usage: scripts/build-wheels.sh [OUT_DIR]  (default dist/)
#
#   TARGETS="x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu" scripts/build-wheels.sh
#
# A target other than the host's needs its Rust standard library (`rustup target add T`).
# Maturin and ziglang are installed into a virtualenv under target/, not into your Python.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-dist}
targets=${TARGETS:-$(rustc -vV | sed -n 's/^host: //p')}
venv=target/wheel-venv
if [ ! -x "$venv/bin/maturin" ]; then
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet "maturin>=1.9,<2" ziglang
fi
export PATH="$PWD/$venv/bin:$PATH"
for t in $targets; do
  maturin build --release --zig --compatibility manylinux2014 --target "$t" --out "$out"
done
maturin sdist --out "$out"
ls -l "$out"
