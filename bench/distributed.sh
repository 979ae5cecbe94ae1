#!/usr/bin/env bash
# Distributed tuning throughput: trials per minute of `tessera tune
# --broker` with 1 and with 2 `tessera worker` processes on this machine.
#
#   bench/distributed.sh [TRIALS] [MODEL]
#
# MODEL (default cmd/tessera/testdata/npu_gemm512.mlir, one GEMM 512³ task)
# is tuned for the NPU target, whose measurement is deterministic
# simulated cycles, for TRIALS trials (default 24) in batches of 16 with
# seed 1, once per worker count, each on a fresh nats-server -js (so no
# run reuses another's results). A local one-trial job first fills the
# reference cache (the interpreter's outputs), which both runs then share.
# Prints the wall time and trials per minute of each run and their ratio.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
trials=${1:-24}
model=${2:-cmd/tessera/testdata/npu_gemm512.mlir}
nats=$(command -v nats-server || echo /usr/sbin/nats-server)
[ -x "$nats" ] || { echo "bench/distributed.sh: nats-server is not installed (make deps, or apt-get install nats-server)" >&2; exit 1; }
go build -o bin/tessera ./cmd/tessera
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
bin/tessera tune "$model" --target npu --trials 1 --db "$work/warm.jsonl" >/dev/null

# run W: trials per minute with W workers on a fresh broker.
run() {
	local w=$1 port=$((14400 + $1)) dir="$work/w$1"
	mkdir -p "$dir"
	"$nats" -js -a 127.0.0.1 -p "$port" -sd "$dir/js" >"$dir/nats.log" 2>&1 &
	local broker=$!
	pids+=("$broker")
	for _ in $(seq 50); do (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
	local workers=()
	for i in $(seq "$w"); do
		bin/tessera worker --broker "nats://127.0.0.1:$port" --target npu --name "bench$i" 2>"$dir/worker$i.log" &
		workers+=($!)
		pids+=($!)
	done
	sleep 1
	local start end
	start=$(date +%s.%N)
	bin/tessera tune "$model" --target npu --trials "$trials" --seed 1 --db "$dir/t.jsonl" --broker "nats://127.0.0.1:$port" >"$dir/tune.log"
	end=$(date +%s.%N)
	kill -TERM "${workers[@]}" "$broker"
	wait "${workers[@]}" "$broker" 2>/dev/null || true
	grep -q "$trials of $trials trials recorded" "$dir/tune.log" || { cat "$dir/tune.log" >&2; exit 1; }
	python3 -c "import sys; s=float(sys.argv[2])-float(sys.argv[1]); print(f'{s:.1f} {int(sys.argv[3])/s*60:.1f}')" "$start" "$end" "$trials"
}

run 1 >"$work/r1"
run 2 >"$work/r2"
read -r s1 tpm1 <"$work/r1"
read -r s2 tpm2 <"$work/r2"
echo "$(basename "$model"), $trials trials on the NPU target (simulated cycles), $(nproc) cores:"
printf '  1 worker : %6.1f s  %6.1f trials/min\n' "$s1" "$tpm1"
printf '  2 workers: %6.1f s  %6.1f trials/min\n' "$s2" "$tpm2"
python3 -c "import sys; print(f'  speed-up : {float(sys.argv[2])/float(sys.argv[1]):.2f}x')" "$tpm1" "$tpm2"
