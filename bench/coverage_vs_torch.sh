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
ts=() ps=()
for ((r = 1; r <= rounds; r++)); do
	t=$(bin/tessera bench "$work/$model.so" --threads "$threads" --repeats 50 --min-time 2s "${inputs[@]}" 2>/dev/null)
	echo "round $r: tessera $t"
	p=$(/usr/bin/python3 bench/torch_coverage.py --model "$model" --threads "$threads")
	echo "round $r: $p"
	ts+=("$(sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' <<<"$t")")
	ps+=("$(sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' <<<"$p")")
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
tm=$(median "${ts[@]}")
pm=$(median "${ps[@]}")
awk -v t="$tm" -v p="$pm" -v m="$model" -v n="$threads" -v r="$rounds" 'BEGIN { printf "%s on %s threads, median of %d rounds: Tessera %.3f ms, PyTorch %.3f ms, PyTorch/Tessera = %.2f (above 1: Tessera is faster)\n", m, n, r, t, p, p / t }'
