#!/usr/bin/env bash
# Distributed tuning throughput: trials per minute of `tessera tune
# --broker` with 1 and with 2 `tessera worker` processes on this machine.
#
#   bench/distributed.sh [TRIALS] [MODEL] [ROUNDS]
#
# MODEL (default cmd/tessera/testdata/npu_gemm512.mlir, one GEMM 512³ task
# whose design space has 2,985 tilings, 781 of them with 2 virtual threads;
# npu_conv64.mlir, a ResNet-18 layer, has 1,754 and 452) is tuned for the NPU target, whose measurement is deterministic
# simulated cycles, for TRIALS trials (default 36) in batches of 16 with
# seed 1 (and tune's default --lookahead 1 with --broker), once per
# worker count, each on a fresh nats-server -js (so no run reuses
# another's results). A local one-trial job first fills the reference
# cache (the interpreter's outputs), which both runs then share. The two
# runs alternate ROUNDS times (default 3: the machine's other load
# drifts) and the medians are compared. Prints the wall time and trials
# per minute of each run and the ratio of the medians.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
trials=${1:-36}
model=${2:-cmd/tessera/testdata/npu_gemm512.mlir}
rounds=${3:-3}
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

# run W R: seconds and trials per minute with W workers on a fresh broker.
run() {
	local w=$1 port=$((14400 + $1)) dir="$work/w$1-r$2"
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

echo "$(basename "$model"), $trials trials on the NPU target (simulated cycles), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg):"
for r in $(seq "$rounds"); do
	for w in 1 2; do
		run "$w" "$r" >"$work/r$w-$r"
		read -r s tpm <"$work/r$w-$r"
		printf '  round %d, %d worker(s): %6.1f s  %6.1f trials/min\n' "$r" "$w" "$s" "$tpm"
	done
done
python3 - "$work" "$rounds" <<'PY'
import statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
tpm = {w: statistics.median(float(open(f"{work}/r{w}-{r}").read().split()[1]) for r in range(1, rounds + 1)) for w in (1, 2)}
print(f"  median: 1 worker {tpm[1]:.1f}, 2 workers {tpm[2]:.1f} trials/min; speed-up {tpm[2] / tpm[1]:.2f}x")
PY
