# Alternating rounds of two timings, sourced by bench/model_vs_torch.sh and
# bench/coverage_vs_torch.sh.
#
#   run_rounds ROUNDS TESSERA_FN TORCH_FN LABEL THREADS
#
# calls the shell functions TESSERA_FN and TORCH_FN (each prints one line
# containing "median X ms") alternately ROUNDS times, so that drifts of a
# shared machine's speed hit both, prints every line, then the median of
# each side's per-round medians and their ratio.

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

ms() { sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' <<<"$1"; }

run_rounds() {
	local rounds=$1 tfn=$2 pfn=$3 label=$4 threads=$5
	local ts=() ps=() t p r
	for ((r = 1; r <= rounds; r++)); do
		t=$($tfn)
		echo "round $r: tessera $t"
		p=$($pfn)
		echo "round $r: $p"
		ts+=("$(ms "$t")")
		ps+=("$(ms "$p")")
	done
	awk -v t="$(median "${ts[@]}")" -v p="$(median "${ps[@]}")" -v m="$label" -v n="$threads" -v r="$rounds" \
		'BEGIN { printf "%s on %s threads, median of %d rounds: Tessera %.4f ms, PyTorch %.4f ms, PyTorch/Tessera = %.2f (above 1: Tessera is faster)\n", m, n, r, t, p, p / t }'
}
