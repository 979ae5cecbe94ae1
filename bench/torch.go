package main

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

//go:embed torch_anchor.py
var torchAnchorScript []byte

// TorchResult is the PyTorch anchor's measurement of one workload.
type TorchResult struct {
	Name    string             `json:"name"`
	Mode    string             `json:"mode"` // the fastest mode (mm, linear, eager, jit.freeze, optimize_for_inference)
	Median  float64            `json:"median_s"`
	Seconds []float64          `json:"seconds"`
	Probe   map[string]float64 `json:"probe"` // each mode's probe median, seconds
}

// TorchReport is the anchor script's output.
type TorchReport struct {
	Version string        `json:"torch"`
	Threads int           `json:"threads"`
	Results []TorchResult `json:"results"`
}

// TorchAvailable reports whether python can import torch; the error says
// why not.
func TorchAvailable(python string) error {
	out, err := exec.Command(python, "-c", "import torch").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s cannot import torch: %v: %s", python, err, strings.TrimSpace(lastLine(string(out))))
	}
	return nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// RunTorch times ws with PyTorch on threads threads by running the embedded
// torch_anchor.py under python (a subprocess, started without
// OPENBLAS_CORETYPE).
func RunTorch(python string, ws []Workload, threads, warmup, repeats int, minTime time.Duration) (*TorchReport, error) {
	dir, err := os.MkdirTemp("", "tessera-bench-torch-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "torch_anchor.py")
	if err := os.WriteFile(script, torchAnchorScript, 0o644); err != nil {
		return nil, err
	}
	type reqW struct {
		Name string `json:"name"`
		Kind Kind   `json:"kind"`
		M    int    `json:"m,omitempty"`
		K    int    `json:"k,omitempty"`
		N    int    `json:"n,omitempty"`
		C    int    `json:"c,omitempty"`
		H    int    `json:"h,omitempty"`
		W    int    `json:"w,omitempty"`
	}
	req := struct {
		Threads   int     `json:"threads"`
		Warmup    int     `json:"warmup"`
		Repeats   int     `json:"repeats"`
		MinTime   float64 `json:"min_time"`
		Workloads []reqW  `json:"workloads"`
	}{threads, warmup, repeats, minTime.Seconds(), nil}
	for _, w := range ws {
		req.Workloads = append(req.Workloads, reqW{w.Name, w.Kind, w.M, w.K, w.N, w.C, w.H, w.W})
	}
	in, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(python, script)
	cmd.Env = anchorEnv(os.Environ(), threads)
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("torch anchor: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	var rep TorchReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		return nil, fmt.Errorf("torch anchor: bad output %q: %v", stdout.String(), err)
	}
	if len(rep.Results) != len(ws) {
		return nil, fmt.Errorf("torch anchor: %d results for %d workloads", len(rep.Results), len(ws))
	}
	return &rep, nil
}

// anchorEnv is env without OPENBLAS_CORETYPE (DESIGN.md: it forces
// OpenBLAS's slower AVX2 kernels) and with the thread-count variables of
// the OpenMP and OpenBLAS runtimes set to threads.
func anchorEnv(env []string, threads int) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "OPENBLAS_CORETYPE", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "TESSERA_NUM_THREADS":
			continue
		}
		out = append(out, kv)
	}
	n := fmt.Sprint(threads)
	return append(out, "OMP_NUM_THREADS="+n, "OPENBLAS_NUM_THREADS="+n, "MKL_NUM_THREADS="+n, "TESSERA_NUM_THREADS="+n)
}
