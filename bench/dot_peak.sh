#!/usr/bin/env bash
# The multiply-add ceilings of this x86 processor's AVX2 instructions on
# one core (bench/native/dot_peak.c): f32 FMA against the 8-bit forms
# Tessera's int8 kernels use on processors without VNNI.
#
#   bench/dot_peak.sh
#
# Needs a C compiler (CC, default cc, else clang-16) and AVX2 and FMA.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cc=${CC:-cc}
command -v "$cc" >/dev/null || cc=clang-16
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$cc" -O3 -mavx2 -mfma bench/native/dot_peak.c -o "$out"
"$out" || true
