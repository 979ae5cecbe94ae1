#!/usr/bin/env bash
# The integer kernels (fold-qdq) against the float path on the CPU.
#
#   bench/int8.sh [ROUNDS] [THREADS] [MCPU]
#
# Times, alternating round by round (ROUNDS, default 5; THREADS, default
# all cores) with `tessera bench`:
#   - GEMM 1024³ by a constant weight: f32 against the integer path (ui8
#     input × i8 weight, i32 accumulation, requantization to ui8; vpdpbusd
#     where the processor has AVX-512 VNNI), in GOP/s; and against the
#     same integer GEMM whose input a clip to [0, 127] (its own kernel)
#     proves 7-bit, as a --reduce-range model's activations are (AVX2
#     then multiplies with one vpmaddubsw per step);
#   - LeNet-5 and the MLP (examples/, batch 360) quantized with
#     `tessera quantize` on the digits: the QDQ model (float contractions)
#     against `--integer` (integer kernels);
#   - when examples/onnx/resnet18.onnx exists (export_models.py) and
#     Debian's python3 has numpy: ResNet-18 at batch 1 quantized on 4 N(0, 1)
#     inputs, its QDQ model and its f32 model each against `--integer`,
#     its f32 model against `--integer --reduce-range` (7-bit
#     activations, which AVX2 multiplies with one vpmaddubsw), and
#     PyTorch's int8 ResNet-18 (torchvision's quantizable model,
#     calibrated on the same inputs with the default qconfig of its first
#     quantized engine: fbgemm's and x86's have 7-bit activations too,
#     onednn's 8-bit; bench/torch_model.py --quantized) against Tessera's
#     `--integer --reduce-range` one.
# MCPU (default: this machine) compiles Tessera's code for another
# processor, e.g. haswell (AVX2's exact vpmaddubsw emulation) or alderlake
# (AVX-VNNI), which this machine must be able to run; PyTorch's line is
# then left out.
# Prints every round and the medians with their ratio (above 1: the
# integer path is faster).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rounds=${1:-5}
threads=${2:-$(nproc)}
mcpu=(${3:+--mcpu "$3"})
source bench/rounds.sh
go build -o bin/tessera ./cmd/tessera
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The GEMMs multiply an input by a constant weight (a layer: rewrite-layout
# stores it in the order the kernel reads it). The integer one is what
# fold-qdq makes of a layer with ui8 activations and symmetric i8 weights:
# the 8-bit operands' matmul into i32, a per-column constant (the bias less
# the activations' zero point times the weight's column sums) and
# requantization to ui8.
python3 - "$work" <<'PY'
import random, struct, sys
random.seed(2)
n = 1024
w8 = bytes(random.getrandbits(8) for _ in range(n * n)).hex()
wf = struct.pack("<%df" % (n * n), *(random.gauss(0, 1) for _ in range(n * n))).hex()
corr = ", ".join(str(random.randint(-100000, 100000)) for _ in range(n))
open(sys.argv[1] + "/gemm_f32.mlir", "w").write(f"""func.func @main(%a: tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32> {{
  %b = graph.constant {{value = dense<"0x{wf}"> : tensor<{n}x{n}xf32>}} : tensor<{n}x{n}xf32>
  %0 = graph.matmul %a, %b : (tensor<{n}x{n}xf32>, tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32>
  func.return %0 : tensor<{n}x{n}xf32>
}}
""")
open(sys.argv[1] + "/gemm_int8.mlir", "w").write(f"""func.func @main(%a: tensor<{n}x{n}xui8>) -> tensor<{n}x{n}xui8> {{
  %b = graph.constant {{value = dense<"0x{w8}"> : tensor<{n}x{n}xi8>}} : tensor<{n}x{n}xi8>
  %acc = graph.matmul %a, %b : (tensor<{n}x{n}xui8>, tensor<{n}x{n}xi8>) -> tensor<{n}x{n}xi32>
  %c = graph.constant {{value = dense<[{corr}]> : tensor<{n}xi32>}} : tensor<{n}xi32>
  %acc2 = graph.add %acc, %c : (tensor<{n}x{n}xi32>, tensor<{n}xi32>) -> tensor<{n}x{n}xi32>
  %m = graph.constant {{value = dense<1518500250> : tensor<i32>}} : tensor<i32>
  %s = graph.constant {{value = dense<12> : tensor<i32>}} : tensor<i32>
  %z = graph.constant {{value = dense<128> : tensor<ui8>}} : tensor<ui8>
  %0 = graph.requantize %acc2, %m, %s, %z : (tensor<{n}x{n}xi32>, tensor<i32>, tensor<i32>, tensor<ui8>) -> tensor<{n}x{n}xui8>
  func.return %0 : tensor<{n}x{n}xui8>
}}
""")
src = open(sys.argv[1] + "/gemm_int8.mlir").read()
src = src.replace("%a: tensor", "%a0: tensor", 1).replace("  %b = graph.constant", f"""  %a = graph.clip %a0 {{min = 0.0, max = 127.0}} : (tensor<{n}x{n}xui8>) -> tensor<{n}x{n}xui8>
  %b = graph.constant""", 1)
open(sys.argv[1] + "/gemm_int7.mlir", "w").write(src)
PY
for m in lenet5 mlp; do
	calib=examples/digits_calib_x.npy
	[ "$m" = mlp ] && calib=examples/digits28_calib_x.npy
	bin/tessera quantize examples/$m.mlir --calibrate $calib -o "$work/${m}_qdq.mlir" 2>/dev/null
	bin/tessera quantize examples/$m.mlir --calibrate $calib --integer -o "$work/${m}_int.mlir" 2>/dev/null
done

# bench_line MODEL: one `tessera bench` run, "median X ms".
bench_line() {
	local m=("${mcpu[@]}")
	[[ $1 == *.so ]] && m=() # compiled for MCPU already
	bin/tessera bench "$1" "${m[@]}" --threads "$threads" --warmup 2 --repeats 10 --min-time 1s 2>/dev/null | grep -o 'median [0-9.]* ms' | head -1
}

# line X: one timing of X, "median X ms": a model file with `tessera
# bench`, or "torch:CALIB" for PyTorch's int8 ResNet-18 calibrated on
# CALIB (bench/torch_model.py --quantized).
line() {
	case $1 in
	torch:*) $py bench/torch_model.py --model resnet18 --threads "$threads" --input "$work/c0.npy" --quantized "${1#torch:}" \
		--repeats 10 --min-time 1 2>/dev/null | grep -o 'median [0-9.]* ms' ;;
	*) bench_line "$1" ;;
	esac
}

# pair LABEL A B [NAME_A NAME_B]: alternating rounds of A (default name
# "float") and B ("integer").
pair() {
	local label=$1 a=$2 b=$3 na=${4:-float} nb=${5:-integer} as=() bs=() x y r
	for ((r = 1; r <= rounds; r++)); do
		x=$(line "$a")
		y=$(line "$b")
		echo "  round $r: $na $x, $nb $y"
		as+=("$(ms "$x")")
		bs+=("$(ms "$y")")
	done
	awk -v a="$(median "${as[@]}")" -v b="$(median "${bs[@]}")" -v l="$label" -v n="$threads" -v na="$na" -v nb="$nb" \
		'BEGIN { printf "%s, %s threads: %s %.3f ms, %s %.3f ms, %s/%s = %.2f", l, n, na, a, nb, b, na, nb, a / b; if (l ~ /GEMM/) printf " (%.1f and %.1f GOP/s)", 2 * 1024^3 / a / 1e6, 2 * 1024^3 / b / 1e6; printf "\n" }'
}

pair "GEMM 1024^3" "$work/gemm_f32.mlir" "$work/gemm_int8.mlir"
pair "GEMM 1024^3, 7-bit input" "$work/gemm_f32.mlir" "$work/gemm_int7.mlir"
pair "LeNet-5 (batch 360)" "$work/lenet5_qdq.mlir" "$work/lenet5_int.mlir"
pair "MLP (batch 360)" "$work/mlp_qdq.mlir" "$work/mlp_int.mlir"

r18=examples/onnx/resnet18.onnx
py=/usr/bin/python3
[ -x $py ] || py=python3
if [ -f "$r18" ] && $py -c 'import numpy' 2>/dev/null; then
	$py -c 'import numpy as np, sys
r = np.random.default_rng(2)
for i in range(4): np.save(sys.argv[1] + "/c%d.npy" % i, r.standard_normal((1, 3, 224, 224)).astype(np.float32))' "$work"
	calib=(--calibrate "$work/c0.npy" --calibrate "$work/c1.npy" --calibrate "$work/c2.npy" --calibrate "$work/c3.npy")
	bin/tessera quantize "$r18" "${calib[@]}" -o "$work/r18_qdq.mlir" 2>/dev/null
	bin/tessera quantize "$r18" "${calib[@]}" --integer -o "$work/r18_int.mlir" 2>/dev/null
	bin/tessera quantize "$r18" "${calib[@]}" --integer --reduce-range -o "$work/r18_int7.mlir" 2>/dev/null
	for m in r18_qdq r18_int r18_int7; do bin/tessera compile "$work/$m.mlir" "${mcpu[@]}" -o "$work/$m.so" >/dev/null; done
	bin/tessera compile "$r18" "${mcpu[@]}" -o "$work/r18_f32.so" >/dev/null
	pair "ResNet-18 QDQ (batch 1)" "$work/r18_qdq.so" "$work/r18_int.so"
	pair "ResNet-18 f32 (batch 1)" "$work/r18_f32.so" "$work/r18_int.so"
	pair "ResNet-18 f32 vs 7-bit activations (batch 1)" "$work/r18_f32.so" "$work/r18_int7.so"
	if [ ${#mcpu[@]} = 0 ] && $py -c 'import torchvision' 2>/dev/null; then
		pair "ResNet-18 int8 (batch 1)" "torch:$work/c0.npy,$work/c1.npy,$work/c2.npy,$work/c3.npy" "$work/r18_int7.so" pytorch tessera
	fi
fi
