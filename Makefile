# Tessera build and test entry points.
#
#   make test    install LLVM 16 when missing, then gofmt check, go vet and
#                go test -race ./... (unit tests, lit suite, mlir-opt check)
#   make demo    the main job: compile LeNet-5 and the MLP, run them on the
#                held-out digits, print accuracy and max deviation from PyTorch
#   make build   go build ./... and bin/tessera-opt, bin/tessera
#   make lit     the lit suite only (go test ./lit/...)
#   make fuzz    a short run of every parser fuzz target
#   make deps    install LLVM 16 (llc-16, FileCheck-16, mlir-opt-16, clang-16),
#                GNU binutils (as, ld) and nats-server (distributed tuning
#                tests) when missing

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
GO ?= go

# Debian packages that provide llc-16/opt-16, FileCheck-16, mlir-opt-16,
# clang-16 (the C ABI test) and GNU as, ld and objcopy (a model's weights
# are assembled, joined and linked with them: LLVM's tools hold them three
# times over).
LLVM_PKGS := llvm-16 llvm-16-tools mlir-16-tools clang-16 binutils

# Debian's NATS server (nats-server -js): the broker of distributed tuning,
# which cmd/tessera's TestDistributedWorkersNATSServer starts.
NATS_PKGS := nats-server

# Fuzz targets as package:FuzzName, found by name (every func FuzzXxx in a
# _test.go file) so a new target joins `make fuzz` by being written;
# FUZZTIME per target.
FUZZ_TARGETS = $(shell git grep --untracked -l '^func Fuzz' -- '*_test.go' | xargs grep -H '^func Fuzz' | sed -E 's|^(.*)/[^/]*_test[.]go:func (Fuzz[A-Za-z0-9_]*).*|./\1:\2|')
FUZZTIME ?= 30s

.PHONY: all build test deps fmt-check vet gotest lit fuzz clean demo

all: build

build:
	$(GO) build ./...
	$(GO) build -o bin/tessera-opt ./tools/tessera-opt
	$(GO) build -o bin/tessera ./cmd/tessera

# demo is the main job: compile LeNet-5 (trained on the digits data) to
# x86-64, run it on the 360 held-out images, and print the accuracy and
# the largest deviation from PyTorch's logits; then the same for the MLP.
demo: deps build
	bin/tessera run examples/lenet5.mlir --input examples/digits_x.npy --output lenet5_y.npy \
		--reference examples/lenet5_logits.npy --labels examples/digits_y.npy
	bin/tessera run examples/mlp.mlir --input examples/digits28_x.npy --output mlp_y.npy \
		--reference examples/mlp_logits.npy --labels examples/digits_y.npy

# deps installs LLVM 16, libonnx-testdata (the ONNX node tests of
# cmd/tessera's TestONNXConformance), OpenBLAS (the bench/ anchor) and
# nats-server (the distributed tuning test against a real broker) only
# when one of them is missing; as root it
# runs apt-get, otherwise through sudo when available, else it stops and
# prints the command to run.
deps:
	@have() { command -v "$$1" >/dev/null 2>&1 || [ -x "/usr/lib/llvm-16/bin/$$2" ]; }; \
	if have llc-16 llc && have FileCheck-16 FileCheck && have mlir-opt-16 mlir-opt && have ld.bfd ld.bfd && have as as && have clang-16 clang \
		&& [ -d /usr/share/libonnx-testdata/data/node ] && [ -e /usr/lib/x86_64-linux-gnu/libopenblas.so.0 ] \
		&& { command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ]; }; then \
		exit 0; \
	fi; \
	cmd="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $(LLVM_PKGS) libonnx-testdata libopenblas0-pthread $(NATS_PKGS)"; \
	if [ "$$(id -u)" = 0 ]; then \
		echo "installing LLVM 16, the ONNX test data and nats-server: $$cmd"; \
		bash -c "$$cmd"; \
	elif command -v sudo >/dev/null 2>&1; then \
		echo "installing LLVM 16, the ONNX test data and nats-server: sudo sh -c '$$cmd'"; \
		sudo sh -c "$$cmd"; \
	else \
		echo "LLVM 16 tools (llc-16, FileCheck-16, mlir-opt-16), libonnx-testdata or nats-server are missing and this user cannot install them." >&2; \
		echo "Run as root:  $$cmd" >&2; \
		exit 1; \
	fi

fmt-check:
	@files="$$(git ls-files --cached --others --exclude-standard '*.go' 2>/dev/null || find . -name '*.go' -not -path './.git/*')"; \
	[ -n "$$files" ] || { echo "no Go files found" >&2; exit 1; }; \
	out="$$(gofmt -l $$files)"; \
	if [ -n "$$out" ]; then echo "gofmt -l lists files that need formatting (run gofmt -w):" >&2; echo "$$out" >&2; exit 1; fi

vet:
	$(GO) vet ./...

# cmd/tessera's tests compile hundreds of models in-process (the ONNX node
# tests, the example and coverage models). Its only concurrent code is the
# tuner's (tune.go), so its tune tests run under the race detector and the
# rest without it (the detector slows the single-goroutine compiler several
# times over); every other package runs under -race, but for the tests
# below.
RACE_PKGS = $(shell $(GO) list ./... | grep -v '/cmd/tessera$$')

# targets/npu's tensor-IR tests (TestCompileTIR*, *TensorIR) schedule and
# emit whole kernels (LeNet-5's, ResNet-18's) in one goroutine, checking
# every staged element: they too run without the race detector.
NPU_TIR_TESTS = ^TestCompileTIR|TensorIR$$

gotest:
	$(GO) test -race -timeout 20m -skip '$(NPU_TIR_TESTS)' $(RACE_PKGS)
	$(GO) test -timeout 10m -run '$(NPU_TIR_TESTS)' ./targets/npu
	$(GO) test -race -timeout 10m -run 'Tune' ./cmd/tessera
	$(GO) test -timeout 20m ./cmd/tessera

test: deps fmt-check vet gotest

lit: deps
	$(GO) test ./lit/...

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg="$${t%%:*}"; name="$${t##*:}"; \
		echo "fuzzing $$name in $$pkg for $(FUZZTIME)"; \
		$(GO) test "$$pkg" -run='^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZTIME) -fuzzminimizetime=10s; \
	done

clean:
	rm -rf bin
