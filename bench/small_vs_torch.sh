#!/usr/bin/env bash
# Batch-1 latency of the digits models, Tessera against PyTorch in the same run.
#
#   bench/small_vs_torch.sh [MODELS] [THREADS] [ROUNDS]
#
# MODELS (default "lenet5 mlp") are examples/lenet5.mlir and examples/mlp.mlir,
# THREADS (default "1 2") the thread counts. The .mlir files hold batch 360
# (the held-out images); the script rewrites their batch dimension to 1
# (tensor<360x... -> tensor<1x...) into a temporary directory, takes the
# first held-out image as input, checks Tessera's output on it against the
# first row of the trained model's PyTorch logits (tessera run --reference),
# then times Tessera (tessera bench) and PyTorch (bench/torch_model.py
# --model lenet5|mlp, its fastest mode) in ROUNDS alternating rounds
# (default 5) per model and thread count, and prints each side's median of
# per-round medians and their ratio (bench/rounds.sh).
#
# The PyTorch side builds the same layers (bench/torch_model.py repeats
# examples/train_digits.py's LeNet5 and MLP) with random initial weights,
# not the trained ones: the latency does not depend on the weights' values.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
models=${1:-lenet5 mlp}
thread_counts=${2:-1 2}
rounds=${3:-5}
unset OPENBLAS_CORETYPE
go build -o bin/tessera ./cmd/tessera
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Batch-1 inputs and reference logits: the first held-out image.
/usr/bin/python3 - "$work" <<'EOF'
import sys
import numpy as np
w = sys.argv[1]
np.save(f"{w}/lenet5_x.npy", np.load("examples/digits_x.npy")[:1])
np.save(f"{w}/mlp_x.npy", np.load("examples/digits28_x.npy")[:1])
np.save(f"{w}/lenet5_ref.npy", np.load("examples/lenet5_logits.npy")[:1])
np.save(f"{w}/mlp_ref.npy", np.load("examples/mlp_logits.npy")[:1])
EOF
source bench/rounds.sh
for model in $models; do
	sed 's/tensor<360x/tensor<1x/g' "examples/$model.mlir" >"$work/$model.mlir"
	bin/tessera run "$work/$model.mlir" --input "$work/${model}_x.npy" --reference "$work/${model}_ref.npy"
	for threads in $thread_counts; do
		export TESSERA_NUM_THREADS=$threads OMP_NUM_THREADS=$threads
		tessera_once() { bin/tessera bench "$work/$model.mlir" --threads "$threads" --repeats 30 --min-time 2s --input "$work/${model}_x.npy" 2>/dev/null; }
		torch_once() { /usr/bin/python3 bench/torch_model.py --model "$model" --threads "$threads" --input "$work/${model}_x.npy"; }
		run_rounds "$rounds" tessera_once torch_once "$model batch 1" "$threads"
	done
done
