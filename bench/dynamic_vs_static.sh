#!/usr/bin/env bash
# The dynamic-batch ResNet-18 compiled once (batch symbolic) against the
# same model compiled for one batch size, in alternating rounds on this
# machine (issue 19's speed line):
#
#   bench/dynamic_vs_static.sh [BATCHES] [ROUNDS] [ITERS]
#
# BATCHES defaults to "1 8", ROUNDS to 5, ITERS (timed calls per round,
# after 3 warm-up calls) to 20. Each round times the dynamic object, then
# the static one, each in a fresh process (bench/dynamic/driver.c); the
# summary line gives the median of each side's per-round medians and the
# ratio dynamic/static (above 1: the dynamic object is slower). Needs
# examples/onnx/resnet18_dynamic.onnx (examples/onnx/export_models.py
# resnet18_dynamic) and clang-16 or cc. Threads: TESSERA_NUM_THREADS or
# all cores, as for any compiled model.
set -euo pipefail
cd "$(dirname "$0")/.."
batches=${1:-"1 8"} rounds=${2:-5} iters=${3:-20}
model=examples/onnx/resnet18_dynamic.onnx
[ -f "$model" ] || { echo "missing $model: run /usr/bin/python3 examples/onnx/export_models.py resnet18_dynamic" >&2; exit 1; }
cc=$(command -v clang-16 || command -v cc)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/tessera" ./cmd/tessera
"$work/tessera" import "$model" -o "$work/model.mlir"
build() { # DIR [compile flags...]
	local dir=$1
	shift
	mkdir -p "$dir"
	"$work/tessera" compile "$work/model.mlir" -o "$dir/model.o" "$@"
	"$cc" -O2 "${defs[@]}" -I "$dir" -o "$dir/driver" bench/dynamic/driver.c "$dir/model.o" -lm -lgomp -ldl
}
defs=(-DDYNAMIC)
build "$work/dynamic"
source bench/rounds.sh
for b in $batches; do
	defs=()
	build "$work/static$b" --fix-dim "batch=$b"
	ds=() ss=()
	for ((r = 1; r <= rounds; r++)); do
		d=$("$work/dynamic/driver" "$b" "$iters" 150528 1000)
		s=$("$work/static$b/driver" "$b" "$iters" 150528 1000)
		echo "batch $b round $r: dynamic $d, static $s"
		ds+=("$(ms "$d")")
		ss+=("$(ms "$s")")
	done
	awk -v d="$(median "${ds[@]}")" -v s="$(median "${ss[@]}")" -v b="$b" -v r="$rounds" \
		'BEGIN { printf "ResNet-18 batch %d, median of %d rounds: dynamic (compiled once) %.3f ms, static %.3f ms, dynamic/static = %.3f\n", b, r, d, s, d / s }'
done
