#!/usr/bin/env bash
# Latency of a coverage model (examples/onnx/coverage), Tessera against
# PyTorch in the same run.
#
#   bench/coverage_vs_torch.sh [MODEL] [THREADS] [ROUNDS] [OPSET]
#
# MODEL is a model of examples/onnx/export_coverage_models.py (default
# lstm_tagger: Embedding + LSTM(64→256) + Linear over 128 tokens, batch 1).
# The script imports MODEL_opsetOPSET.onnx (default opset 13), checks
# Tessera's first output on the exported inputs against PyTorch's
# (tessera run --reference), then times Tessera (tessera bench) and
# PyTorch (bench/torch_coverage.py, its fastest mode) with THREADS threads
# (default 2) in ROUNDS alternating rounds (default 5), and prints the
# median of each side's per-round medians and their ratio.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
model=${1:-lstm_tagger}
threads=${2:-2}
rounds=${3:-5}
opset=${4:-13}
cov=examples/onnx/coverage
unset OPENBLAS_CORETYPE
export TESSERA_NUM_THREADS=$threads OMP_NUM_THREADS=$threads
go build -o bin/tessera ./cmd/tessera
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin/tessera import "$cov/${model}_opset${opset}.onnx" -o "$work/$model.mlir"
inputs=()
for f in "$cov/${model}"_input*.npy; do inputs+=(--input "$f"); done
bin/tessera compile "$work/$model.mlir" -o "$work/$model.so"
bin/tessera run "$work/$model.so" "${inputs[@]}" --reference "$cov/${model}_output0.npy"
tessera_once() { bin/tessera bench "$work/$model.so" --threads "$threads" --repeats 50 --min-time 2s "${inputs[@]}" 2>/dev/null; }
torch_once() { /usr/bin/python3 bench/torch_coverage.py --model "$model" --threads "$threads"; }
source bench/rounds.sh
run_rounds "$rounds" tessera_once torch_once "$model" "$threads"
