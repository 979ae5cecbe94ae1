package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/tessera-ml/tessera/autotune/distributed"
	"github.com/tessera-ml/tessera/targets"
)

type workerOptions struct {
	broker, creds, target, name, mcpu, npuConfig string
	threads                                      int
	ackWait, hold                                time.Duration
}

// newWorkerCmd is `tessera worker`: a distributed tuning job's worker.
func newWorkerCmd(stdout, stderr io.Writer) *cobra.Command {
	var o workerOptions
	cmd := &cobra.Command{
		Use:   "worker --broker nats://HOST:4222 --target cpu|npu [--threads N] [--name NAME]",
		Short: "serve the build-and-measure jobs of distributed tuning jobs (tessera tune --broker)",
		Long: `worker connects to a NATS server with JetStream (nats-server -js), pulls the
build-and-measure jobs that tessera tune --broker publishes for this worker's
target (the target string, e.g. "cpu -mcpu=native -vector-bits=512
-threads=2", must be the tuner's exactly), builds and measures each candidate
with the same isolation as local tuning (builder and runner processes,
timeouts, the correctness check against the interpreter) and publishes the
result with this host's fingerprint (CPU model, cores, target string).

  nats-server -js &
  tessera worker --broker nats://127.0.0.1:4222 --target npu &
  tessera tune model.mlir --target npu --trials 200 --db t.jsonl --broker nats://127.0.0.1:4222

While measuring it heartbeats (in-progress acknowledgements), so a long
measurement is not redelivered; a worker that dies leaves its job to be
redelivered to another after --ack-wait. SIGTERM or Ctrl-C finishes the job
in hand (a job taken but not started goes back to the queue) and exits 0.
A malformed job (truncated JSON, another target, a trace that does not apply
to its kernel) is terminated with a logged reason.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkThreads(cmd, o.threads); err != nil {
				return fail(stderr, err)
			}
			return runWorker(o, stderr)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.broker, "broker", "", "NATS server URL with JetStream: nats://host:4222 (tls://host:4222 for TLS; user:password@ in the URL)")
	f.StringVar(&o.creds, "broker-creds", "", "NATS credentials file (JWT and NKey seed) for the broker")
	f.StringVar(&o.target, "target", "cpu", "target to measure for ("+strings.Join(targets.Names(), ", ")+")")
	f.IntVar(&o.threads, "threads", 0, "threads of parallel loops when measuring (default: TESSERA_NUM_THREADS, OMP_NUM_THREADS or all cores); part of the target string")
	f.StringVar(&o.name, "name", "", "worker name in the registry and the results, unique per broker (default: host name and process id)")
	f.StringVar(&o.mcpu, "mcpu", "native", "CPU for llc-16 -mcpu")
	f.StringVar(&o.npuConfig, "npu-config", "", "NPU configuration JSON for --target npu (default: the built-in default NPU)")
	f.DurationVar(&o.ackWait, "ack-wait", 30*time.Second, "how long the broker waits for a worker's heartbeat before redelivering its job elsewhere (set by the first worker of a target on a broker; later workers follow it)")
	f.DurationVar(&o.hold, "hold", 0, "wait this long (heartbeating) before measuring each job (for tests)")
	_ = f.MarkHidden("hold")
	return cmd
}

// stopOnSignal calls cancel on the first SIGTERM or Ctrl-C (the worker
// finishes the job in hand) and exits 130 on the second (the job in hand
// is redelivered after its ack wait).
func stopOnSignal(name string, cancel func(), stderr io.Writer) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		fmt.Fprintf(stderr, "tessera worker %s: stopping after the job in hand (signal again to quit at once)\n", name)
		cancel()
		<-sigs
		fmt.Fprintf(stderr, "tessera worker %s: second signal, exiting now (the job in hand is redelivered after its ack wait)\n", name)
		os.Exit(130)
	}()
}

// runWorker serves jobs until SIGTERM or Ctrl-C.
func runWorker(o workerOptions, stderr io.Writer) error {
	if o.broker == "" {
		return fail(stderr, fmt.Errorf("--broker is required (a NATS server URL with JetStream: nats://host:4222)"))
	}
	if o.ackWait < time.Second {
		return fail(stderr, fmt.Errorf("--ack-wait must be at least 1s, got %v", o.ackWait))
	}
	target, err := measuringTarget(o.target, o.mcpu, o.npuConfig, o.threads)
	if err != nil {
		return fail(stderr, err)
	}
	if o.name == "" {
		host, _ := os.Hostname()
		o.name = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopOnSignal(o.name, cancel, stderr)
	b, err := distributed.Connect(ctx, o.broker, o.creds, "tessera worker "+o.name)
	if err != nil {
		return fail(stderr, err)
	}
	defer b.Close()
	w, err := distributed.NewWorker(b, distributed.WorkerOptions{Name: o.name, Target: target, AckWait: o.ackWait, Hold: o.hold, Log: stderr})
	if err != nil {
		return fail(stderr, err)
	}
	if err := w.Run(ctx); err != nil {
		return fail(stderr, err)
	}
	fmt.Fprintf(stderr, "tessera worker %s: stopped after %d jobs (%d poison messages terminated)\n", o.name, w.Served(), w.Terminated())
	return nil
}
