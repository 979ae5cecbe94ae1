package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/stat (100 on every Linux
// architecture Go supports).
const clockTicks = 100

// disturbedLimit is the average number of cores other processes may keep
// busy during a run on threads threads before the table warns that its
// timings are disturbed: 0.2 cores plus half of the cores the run leaves
// idle (on this 2-core machine: 0.2 for 2 threads, 0.7 for 1).
func disturbedLimit(threads, cpus int) float64 {
	return 0.2 + 0.5*float64(max(0, cpus-threads))
}

// cpuSample is the machine's busy CPU time and this process's own (with
// its waited-for children), in seconds, at one instant.
type cpuSample struct {
	at          time.Time
	busy, own   float64
	busyMissing bool
}

func sampleCPU() cpuSample {
	s := cpuSample{at: time.Now()}
	busy, err := machineBusy()
	s.busy, s.busyMissing = busy, err != nil
	var self, children syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) == nil && syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children) == nil {
		for _, ru := range []syscall.Rusage{self, children} {
			s.own += tv(ru.Utime) + tv(ru.Stime)
		}
	}
	return s
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

// machineBusy is the busy time of all CPUs since boot from /proc/stat:
// user + nice + system + irq + softirq + steal.
func machineBusy() (float64, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, fmt.Errorf("unexpected /proc/stat line %q", line)
	}
	total := 0.0
	for _, i := range []int{1, 2, 3, 6, 7, 8} { // user nice system (idle iowait) irq softirq steal
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return 0, err
		}
		total += v
	}
	return total / clockTicks, nil
}

// otherCores is the average number of cores that processes other than this
// one and its children kept busy between a and b (−1 when unknown).
func otherCores(a, b cpuSample) float64 {
	wall := b.at.Sub(a.at).Seconds()
	if a.busyMissing || b.busyMissing || wall <= 0 {
		return -1
	}
	return max(0, (b.busy-a.busy)-(b.own-a.own)) / wall
}
