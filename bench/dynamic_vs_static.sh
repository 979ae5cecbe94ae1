#!/usr/bin/env bash
# A model exported with dynamic axes compiled once (its symbols left
# free) against the same model compiled for one size, in alternating
# rounds on this machine (issue 19's speed line):
#
#   bench/dynamic_vs_static.sh [SIZES] [ROUNDS] [ITERS]
#
# MODEL=resnet18 (default: ResNet-18, symbol batch) or MODEL=transformer
# (the transformer encoder layer, symbols batch and seq). SIZES defaults
# to "1 8" for ResNet-18 and "1x17 4x128" for the transformer (batch x
# seq), ROUNDS to 5, ITERS (timed calls per round, after 3 warm-up calls)
# to 20. Each round times the dynamic object, then the static one, each in
# a fresh process (bench/dynamic/driver.c); the summary line gives the
# median of each side's per-round medians and the ratio dynamic/static
# (above 1: the dynamic object is slower). ResNet-18 needs
# examples/onnx/resnet18_dynamic.onnx (examples/onnx/export_models.py
# resnet18_dynamic); both need clang-16 or cc. Threads:
# TESSERA_NUM_THREADS or all cores, as for any compiled model.
set -euo pipefail
cd "$(dirname "$0")/.."
case ${MODEL:-resnet18} in
resnet18)
	label=ResNet-18 model=examples/onnx/resnet18_dynamic.onnx syms=(batch) per=(150528 1000) default="1 8" ;;
transformer)
	label="transformer layer" model=examples/onnx/transformer_encoder_layer_dynamic.onnx syms=(batch seq) per=(256 256) default="1x17 4x128" ;;
*)
	echo "MODEL must be resnet18 or transformer" >&2
	exit 2
	;;
esac
sizes=${1:-$default} rounds=${2:-5} iters=${3:-20}
[ -f "$model" ] || { echo "missing $model: run /usr/bin/python3 examples/onnx/export_models.py $(basename "$model" .onnx)" >&2; exit 1; }
cc=$(command -v clang-16 || command -v cc)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/tessera" ./cmd/tessera
"$work/tessera" import "$model" -o "$work/model.mlir"
build() { # DIR NSYM [compile flags...]
	local dir=$1 nsym=$2
	shift 2
	mkdir -p "$dir"
	"$work/tessera" compile "$work/model.mlir" -o "$dir/model.o" "$@"
	"$cc" -O2 "-DNSYM=$nsym" -I "$dir" -o "$dir/driver" bench/dynamic/driver.c "$dir/model.o" -lm -lgomp -ldl
}
build "$work/dynamic" "${#syms[@]}"
source bench/rounds.sh
for s in $sizes; do
	IFS=x read -r -a vals <<<"$s"
	fix=()
	for i in "${!syms[@]}"; do fix+=(--fix-dim "${syms[$i]}=${vals[$i]}"); done
	build "$work/static$s" 0 "${fix[@]}"
	ds=() ss=()
	for ((r = 1; r <= rounds; r++)); do
		d=$("$work/dynamic/driver" "$iters" "${per[@]}" "${vals[@]}")
		t=$("$work/static$s/driver" "$iters" "${per[@]}" "${vals[@]}")
		echo "$s round $r: dynamic $d, static $t"
		ds+=("$(ms "$d")")
		ss+=("$(ms "$t")")
	done
	awk -v d="$(median "${ds[@]}")" -v t="$(median "${ss[@]}")" -v s="$s" -v r="$rounds" -v m="$label" \
		'BEGIN { printf "%s at %s, median of %d rounds: dynamic (compiled once) %.3f ms, static %.3f ms, dynamic/static = %.3f\n", m, s, r, d, t, d / t }'
done
