#!/usr/bin/env bash
# Per-call cost of a compiled model's entry point: the host work around
# the kernels (argument checks, arena set-up, the thread-count decision).
#
#   bench/entry_overhead.sh [CALLS] [ROUNDS]
#
# Compiles a tiny model, y = relu(x·W1)·W2 with x 1×4 and W1, W2 4×4
# (two kernels and an intermediate in the arena, 32 multiply-adds: nearly
# all that is timed is the entry's own work), to an object, links it into
# a C program (clang-16) that calls tiny_main CALLS times (default
# 10,000,000) in each of ROUNDS rounds (default 5), and prints the median
# nanoseconds per call, with TESSERA_NUM_THREADS=1 and 2 alternating round
# by round. The kernels are below the parallelism threshold, so neither
# count opens a parallel region.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
calls=${1:-10000000}
rounds=${2:-5}
go build -o bin/tessera ./cmd/tessera
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/tiny.mlir" <<'MLIR'
func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %w1 = graph.constant {value = dense<[[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]]> : tensor<4x4xf32>} : tensor<4x4xf32>
  %w2 = graph.constant {value = dense<[[2.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 2.0, 0.0], [0.0, 0.0, 0.0, 2.0]]> : tensor<4x4xf32>} : tensor<4x4xf32>
  %h = graph.matmul %x, %w1 : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
  %r = graph.relu %h : tensor<1x4xf32>
  %y = graph.matmul %r, %w2 : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
  func.return %y : tensor<1x4xf32>
}
MLIR
bin/tessera compile "$work/tiny.mlir" -o "$work/tiny.o"
cat > "$work/main.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "tiny.h"
int main(int argc, char **argv) {
  long n = atol(argv[1]);
  float x[4] = {1.5f, -1, 0, 2}, y[4] = {0};
  struct timespec a, b;
  if (tiny_main(x, y) != 0 || y[0] != 3.0f || y[1] != 0.0f || y[3] != 4.0f) { fprintf(stderr, "wrong result %g %g\n", y[0], y[1]); return 1; }
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (long i = 0; i < n; i++) {
    x[0] = (float)(i & 7);
    if (tiny_main(x, y) != 0) return 1;
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("%.2f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
  return y[0] == 14.0f ? 0 : 1;
}
C
clang-16 -O2 -I"$work" "$work/main.c" "$work/tiny.o" -lm -ldl -lpthread -o "$work/main"
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
: > "$work/t1"; : > "$work/t2"
for r in $(seq "$rounds"); do
  TESSERA_NUM_THREADS=1 "$work/main" "$calls" >> "$work/t1"
  TESSERA_NUM_THREADS=2 "$work/main" "$calls" >> "$work/t2"
done
echo "entry point of relu(x·W1)·W2 (1×4, two kernels), $calls calls x $rounds rounds, median ns per call:"
echo "  1 thread:  $(median < "$work/t1") ns"
echo "  2 threads: $(median < "$work/t2") ns"
