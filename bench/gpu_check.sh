#!/bin/sh
# bench/gpu_check.sh — the CUDA target on a real NVIDIA GPU, in two halves.
#
#   bench/gpu_check.sh prepare        # here: Go and LLVM 16; writes build/gpu*.tgz
#   bench/gpu_check.sh run OUTDIR     # on the GPU machine (no Go, no LLVM needed)
#   bench/gpu_check.sh tune OUTDIR [TRIALS]   # on the GPU machine: tune GEMM 1024³
#
# prepare compiles every case of the GPU check for the CUDA target with the
# default GPU rules (cmd/tessera TestGPUCheckPrepare: the ONNX node tests
# the importer takes, the example, seed and coverage models, f32 GEMMs
# 1024³ and 4096³, the MLP's C-ABI object, the tuner's reference output
# for GEMM 1024³), builds the two test binaries statically
# (CGO_ENABLED=0 go test -c; they load libcuda.so.1 through purego) and
# packs them into build/gpu-r18.tgz, build/gpu-models.tgz (the example
# models, mostly weights) and build/gpu.tgz (the rest).
#
# run unpacks it and runs, in order: the committed runtime fixtures on the
# GPU against the interpreting driver (targets/cuda TestRuntimeOnGPU);
# PyTorch's anchors (bench/gpu_torch.py: cuBLAS GEMMs with TF32 off,
# ResNet-18 and MobileNetV2 eager at batch 1); every case of the check
# against its reference, timing the GEMMs and the two models with CUDA
# events, each kernel of the models timed on its own too (TestGPUCheck);
# then the comparison table; then the C ABI: the MLP example's object
# (--emit obj) built into a C program with cc against libcuda.so.1 and
# run through both entry points. Results go to OUTDIR (tessera.json,
# torch.json, table.txt, *.log).
#
# tune runs `tessera tune --target cuda` on GEMM 1024³ (the test binary
# acts as the CLI), with clang-16 or llc-16 on the machine for the PTX and
# the reference output prepare computed, then benches the tuned and the
# default schedules.
set -eu
cmd=${1:-}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
mcpu=${GPU_MCPU:-sm_90}

case "$cmd" in
prepare)
	rm -rf "$build/gpu" && mkdir -p "$build"
	(cd "$root/cmd/tessera" && go test -run '^TestGPUCheckPrepare$' -timeout 60m \
		-gpu-prepare "$build/gpu" -gpu-mcpu "$mcpu" >"$build/gpu-prepare.log" 2>&1) ||
		{ tail -20 "$build/gpu-prepare.log"; exit 1; }
	(cd "$root" && CGO_ENABLED=0 go test -c -ldflags=-s -o "$build/tessera.test" ./cmd/tessera &&
		CGO_ENABLED=0 go test -c -ldflags=-s -o "$build/cuda.test" ./targets/cuda)
	# Three archives, each small enough to carry to the GPU machine in one
	# call (the working tree and the carried files travel together, 64 MiB
	# at most): ResNet-18's weights, the other example models' weights, the
	# rest.
	big="gpu/mobilenet_v2.cuda gpu/shufflenet_v2_x1_0.cuda gpu/squeezenet1_1.cuda gpu/transformer_encoder_layer.cuda"
	tar -C "$build" -czf "$build/gpu-r18.tgz" gpu/resnet18.cuda
	# shellcheck disable=SC2086
	tar -C "$build" -czf "$build/gpu-models.tgz" $big
	tar -C "$build" -czf "$build/gpu.tgz" --exclude gpu/resnet18.cuda $(for f in $big; do echo --exclude "$f"; done) gpu tessera.test cuda.test
	ls -la "$build"/gpu*.tgz
	;;
run)
	out=${2:?usage: bench/gpu_check.sh run OUTDIR}
	mkdir -p "$out"
	work=$(mktemp -d)
	for a in "$build"/gpu*.tgz; do tar -C "$work" -xzf "$a"; done
	nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv
	status=0
	(cd "$root/targets/cuda" && "$work/cuda.test" -test.run '^TestRuntimeOnGPU$' -test.v) >"$out/fixtures.log" 2>&1 || status=1
	tail -8 "$out/fixtures.log"
	python3 "$root/bench/gpu_torch.py" --json "$out/torch.json" >"$out/torch.log" 2>&1 || status=1
	tail -3 "$out/torch.log"
	(cd "$root/cmd/tessera" && "$work/tessera.test" -test.run '^TestGPUCheck$' -test.v -test.timeout 30m \
		-gpu-check "$work/gpu" -gpu-report "$out/tessera.json") >"$out/check.log" 2>&1 || status=1
	grep -E -- '--- FAIL|gpu_check_test.go.*(median|passed,|panic|calls|kernels:)|FAIL|^ok|^PASS' "$out/check.log" | head -80
	grep -E 'gpu_check_test.go' "$out/check.log" | grep -v -E 'median|passed,|refused by|calls|kernels:' | head -40
	[ -s "$out/tessera.json" ] && python3 "$root/bench/gpu_torch.py" --anchors "$out/torch.json" --tessera "$out/tessera.json" | tee "$out/table.txt"
	# The C ABI: the MLP example's object (tessera compile --target cuda
	# -o mlp.o) linked into a C program against the driver's libcuda.so.1.
	lib=$(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 /{print $NF; exit}')
	(cd "$work/gpu/cabi" && cc -O2 -o cabi_check cabi_check.c mlp.o "${lib:--lcuda}" -lm && ./cabi_check x.bin y.bin) >"$out/cabi.log" 2>&1 || status=1
	tail -3 "$out/cabi.log"
	exit $status
	;;
tune)
	out=${2:?usage: bench/gpu_check.sh tune OUTDIR [TRIALS]}
	trials=${3:-200}
	mkdir -p "$out"
	work=$(mktemp -d)
	tar -C "$work" -xzf "$build/gpu.tgz"
	m=$work/gpu/gemm1024.mlir # written by prepare, beside its reference output
	export TESSERA_TEST_AS_CLI=1
	# The tuner's reference output, computed by prepare (the interpreter
	# takes minutes on GEMM 1024³): its reference cache is
	# $XDG_CACHE_HOME/tessera/autotune-ref.
	export XDG_CACHE_HOME="$work/gpu/cache"
	timeout "${TUNE_SECONDS:-300}" "$work/tessera.test" tune "$m" --target cuda --mcpu "$mcpu" --trials "$trials" \
		--db "$out/tune.jsonl" --timeout 5s >"$out/tune.log" 2>&1 || echo "tune exited with $?"
	tail -25 "$out/tune.log"
	for db in "" "$out/tune.jsonl"; do
		flag=""; [ -n "$db" ] && flag="--tuning-db $db"
		# shellcheck disable=SC2086
		"$work/tessera.test" bench "$m" --target cuda --mcpu "$mcpu" $flag --repeats 30 --min-time 1s 2>&1 | tail -3
	done
	;;
*)
	echo "usage: bench/gpu_check.sh prepare | run OUTDIR | tune OUTDIR [TRIALS]" >&2
	exit 2
	;;
esac
