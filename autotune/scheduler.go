package autotune

import (
	"math"
	"math/rand"
)

// Task schedulers (Options.Scheduler).
const (
	// SchedulerGradient allocates each round to the task with the largest
	// expected gain in the model's weighted latency, Ansor's gradient-based
	// task scheduler (Zheng et al., OSDI 2020, §6).
	SchedulerGradient = "gradient"
	// SchedulerRoundRobin tunes the tasks in turn.
	SchedulerRoundRobin = "round-robin"
)

// taskProgress is what a scheduler sees of a task.
type taskProgress struct {
	weight    float64
	trials    int       // trials spent (records in the database)
	rounds    int       // rounds proposed (measured or ahead, Options.Lookahead)
	history   []float64 // best latency in seconds after each round (+Inf: none yet)
	exhausted bool      // no unmeasured candidate left
}

func (p *taskProgress) best() float64 {
	if len(p.history) == 0 {
		return math.Inf(1)
	}
	return p.history[len(p.history)-1]
}

// pickTask returns the index of the task to tune next, or -1 when every
// task is exhausted. Round-robin takes the task with the fewest rounds
// (proposed ones included); the gradient scheduler first gives every
// task one round, then with probability 0.05 a random task, else the
// task whose objective
// f = Σ weightᵢ·bestᵢ has the most negative estimated derivative with
// respect to its trials:
//
//	∂f/∂tᵢ ≈ wᵢ·(α·(gᵢ(tᵢ) − gᵢ(tᵢ−Δt))/Δt + (1−α)·(−gᵢ(tᵢ)/tᵢ))
//
// with α = 0.2 and a backward window of Δt = 3 rounds (Ansor's
// formula without the similar-task term).
func pickTask(kind string, tasks []*taskProgress, rng *rand.Rand) int {
	open := []int{}
	for i, t := range tasks {
		if !t.exhausted {
			open = append(open, i)
		}
	}
	if len(open) == 0 {
		return -1
	}
	fewest := open[0]
	for _, i := range open {
		if tasks[i].rounds < tasks[fewest].rounds {
			fewest = i
		}
	}
	if kind == SchedulerRoundRobin || tasks[fewest].rounds == 0 {
		return fewest
	}
	if rng.Float64() < 0.05 {
		return open[rng.Intn(len(open))]
	}
	const alpha, window = 0.2, 3
	bestIdx, bestGrad := open[0], math.Inf(1)
	for _, i := range open {
		t := tasks[i]
		g := t.best()
		if math.IsInf(g, 1) {
			return i // every trial failed so far: nothing is known yet
		}
		back := 0.0
		if n := len(t.history); n > window {
			prev := t.history[n-1-window]
			if !math.IsInf(prev, 1) {
				back = (g - prev) / window
			}
		}
		forward := -g / math.Max(1, float64(len(t.history)))
		grad := t.weight * (alpha*back + (1-alpha)*forward)
		if grad < bestGrad {
			bestIdx, bestGrad = i, grad
		}
	}
	return bestIdx
}
