#!/usr/bin/env bash
# Whole-model latency, Tessera against PyTorch in the same run.
#
#   bench/model_vs_torch.sh [MODEL] [THREADS] [TUNING_DB] [ROUNDS]
#
# MODEL is a torchvision model exported by examples/onnx/export_models.py
# (default resnet18; run `/usr/bin/python3 examples/onnx/export_models.py`
# first when examples/onnx/MODEL.onnx is missing). The script imports the
# ONNX file, checks Tessera's output on the exported input against
# PyTorch's exported output (tessera run --reference), then times Tessera
# (tessera bench, with TUNING_DB when given) and PyTorch
# (bench/torch_model.py, its fastest mode) with THREADS threads (default
# 2), and prints both medians and their ratio. The two are timed in
# ROUNDS alternating rounds (default 3: Tessera, PyTorch, Tessera, ...),
# so that drifts of a shared machine's speed hit both; the result is the
# median of each side's per-round medians.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
model=${1:-resnet18}
threads=${2:-2}
db=${3:-}
rounds=${4:-3}
onnx=examples/onnx/$model.onnx
if [ ! -f "$onnx" ]; then
	echo "$onnx is missing: run /usr/bin/python3 examples/onnx/export_models.py" >&2
	exit 1
fi
unset OPENBLAS_CORETYPE
export TESSERA_NUM_THREADS=$threads OMP_NUM_THREADS=$threads
go build -o bin/tessera ./cmd/tessera
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin/tessera import "$onnx" -o "$work/$model.mlir"
tune=()
[ -n "$db" ] && tune=(--tuning-db "$db")
bin/tessera run "$work/$model.mlir" "${tune[@]}" --threads "$threads" \
	--input "examples/onnx/${model}_input.npy" --reference "examples/onnx/${model}_output.npy"
tessera_once() { bin/tessera bench "$work/$model.mlir" "${tune[@]}" --threads "$threads" --repeats 30 --min-time 2s --input "examples/onnx/${model}_input.npy" 2>/dev/null; }
torch_once() { /usr/bin/python3 bench/torch_model.py --model "$model" --threads "$threads" --input "examples/onnx/${model}_input.npy"; }
source bench/rounds.sh
run_rounds "$rounds" tessera_once torch_once "$model" "$threads"
