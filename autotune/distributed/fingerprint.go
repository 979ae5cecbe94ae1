package distributed

import (
	"bufio"
	"fmt"
	"os"
	goruntime "runtime"
	"strings"
)

// HostFingerprint is the fingerprint of this host measuring for target
// (a target string): its CPU model, its number of logical cores and the
// target, as `cpu="AMD EPYC 7B13" cores=2 target="npu -config=default"`.
// Measurements are comparable only between hosts with equal
// fingerprints.
func HostFingerprint(target string) string {
	return fmt.Sprintf("cpu=%q cores=%d target=%q", cpuModel(), goruntime.NumCPU(), target)
}

// cpuModel is the CPU's model name from /proc/cpuinfo (the architecture
// where there is none).
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return goruntime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return goruntime.GOARCH
}
