package autotune

// BatchMeasurer measures batches of one task's candidates: the local
// builder and runner processes (*Measurer) or workers on other machines
// reached through a broker (autotune/distributed). Measure calls onResult
// once per measured candidate, in candidate order; stop, checked while
// the batch is measured, ends it early (the remaining candidates get no
// result). Close releases what the measurer holds.
type BatchMeasurer interface {
	Measure(t *Task, cands []*Candidate, stop func() bool, onResult func(i int, r Result))
	Close()
}

// Fleet is the state of the remote workers a FleetMeasurer dispatches
// trials to, for the progress display and the batch size.
type Fleet struct {
	// Workers is the number of live workers for the job's target.
	Workers int
	// InFlight is the number of trials published and not yet answered.
	InFlight int
	// Redelivered counts the results of trials the broker delivered more
	// than once (a worker died or stalled past its ack wait).
	Redelivered int
}

// FleetMeasurer is a BatchMeasurer that measures on a fleet of workers:
// Tune sizes its batches to the live workers (fleetBatch) and shows the
// fleet in Status.Fleet.
type FleetMeasurer interface {
	BatchMeasurer
	Fleet() Fleet
}

// Submitter is a BatchMeasurer that can start measuring a round before
// Measure awaits it (Options.Lookahead): Submit queues the candidates'
// trials on the workers at once; a later Measure of the same candidates
// waits for their results instead of queueing them again.
type Submitter interface {
	BatchMeasurer
	Submit(t *Task, cands []*Candidate)
}

// fleetBatch is the batch size for n requested candidates per round on
// workers live workers: n rounded up to a multiple of workers (at least
// one candidate per worker), so no worker idles while the others finish
// a round; n itself without workers.
func fleetBatch(n, workers int) int {
	if workers <= 0 {
		return n
	}
	return (n + workers - 1) / workers * workers
}

var _ BatchMeasurer = (*Measurer)(nil)
