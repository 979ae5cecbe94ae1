package tuneplot

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tessera-ml/tessera/autotune"
)

// MaxTasks is the most tasks the best-latency panel draws; a database
// with more shows the MaxTasks with the most trials.
const MaxTasks = 12

// Axis labels shared by the figures.
const (
	labelTrials     = "trials of the task (failed ones included)"
	labelBest       = "best latency so far (ms)"
	labelWall       = "wall time since the first record (s)"
	labelRecordNo   = "record number (the records carry no usable times)"
	labelSum        = "sum of best kernel latencies (ms)"
	labelWeighted   = "Σ calls × best kernel latency (ms)"
	labelTrialCount = "trial"
)

// Options configure DatabaseFigure.
type Options struct {
	// Title starts the figure's title (the database's file name, say); a
	// summary of the records follows it.
	Title string
	// Weights maps a workload key to its task's calls per model run
	// (autotune.Task.Weight). The records do not carry it: without
	// Weights every task counts once in the estimate, and the axis says
	// so. A workload missing from Weights counts once.
	Weights map[string]int
}

// task is one (workload, target) pair of a database and its records in
// file order.
type task struct {
	workload, target, name string
	records                []*autotune.Record
	best                   float64 // final best median latency, seconds (+Inf: none)
}

// DatabaseFigure is the picture of a tuning database's records (in file
// order, autotune.ReadRecords): (a) each task's best latency so far in ms
// against its trial number, one line per task (at most MaxTasks, the
// tasks with the most trials; the panel's title says how many are shown),
// and (b) the model-latency estimate, Σ weight × best latency so far over
// the tasks, against the wall time since the first record (the record
// number when some record's time is missing or unparsable or all times
// are equal), one line per target. In-model records (Record.InModel) are
// not trials and are left out. The estimate starts once every task
// with a successful trial has one; tasks without any are left out, and the
// panel's title says how many. Errors: no records.
func DatabaseFigure(records []*autotune.Record, o Options) (Figure, error) {
	records = slices.DeleteFunc(slices.Clone(records), func(r *autotune.Record) bool { return r.InModel != "" })
	if len(records) == 0 {
		return Figure{}, errors.New("no records to plot")
	}
	tasks := groupTasks(records)
	shown := pickTasks(tasks, MaxTasks)
	a := Panel{Title: "best latency per task", XLabel: labelTrials, YLabel: labelBest, XFromZero: true}
	if len(shown) < len(tasks) {
		a.Title = fmt.Sprintf("best latency per task (%d of %d tasks shown: most trials)", len(shown), len(tasks))
	}
	for _, t := range shown {
		s := BestCurve(t.records)
		s.Name = t.name
		a.Series = append(a.Series, s)
	}
	return Figure{Title: summary(o.Title, records, tasks), Panels: []Panel{a, estimatePanel(records, tasks, o.Weights)}}, nil
}

// estimatePanel is the model-latency estimate against wall time, one line
// per target (named only when there are several).
func estimatePanel(records []*autotune.Record, tasks []*task, weights map[string]int) Panel {
	timed := HasTimes(records)
	p := Panel{Title: "model latency estimate (once every task is measured)", XLabel: labelWall, YLabel: labelSum, XFromZero: true}
	if !timed {
		p.XLabel = labelRecordNo
	}
	if weights != nil {
		p.YLabel = labelWeighted
	}
	var targets []string
	byTarget := map[string][]*autotune.Record{}
	for _, r := range records {
		if byTarget[r.Target] == nil {
			targets = append(targets, r.Target)
		}
		byTarget[r.Target] = append(byTarget[r.Target], r)
	}
	start := startTime(records)
	for _, tg := range targets {
		s := EstimateCurve(byTarget[tg], weights, timed, start)
		if len(targets) > 1 {
			s.Name = tg
		}
		p.Series = append(p.Series, s)
	}
	if n := unmeasured(tasks); n > 0 {
		p.Title += fmt.Sprintf(" (%d task%s without a successful trial left out)", n, plural(n))
	}
	return p
}

// CompareFigure is the picture of several single-task tuning runs of one
// kernel (random against cost-model search, say): (a) each run's best
// latency so far in ms against its trial number, (b) the same against the
// wall time since the run's first record (the record number when some
// run's records carry no usable times). Runs are named in the legend.
// Errors: no run has a record.
func CompareFigure(title string, runs []Run) (Figure, error) {
	var all []*autotune.Record
	timed := true
	for _, r := range runs {
		all = append(all, r.Records...)
		timed = timed && HasTimes(r.Records)
	}
	if len(all) == 0 {
		return Figure{}, errors.New("no records to plot")
	}
	a := Panel{Title: "best latency against trials", XLabel: labelTrialCount, YLabel: labelBest, XFromZero: true}
	b := Panel{Title: "best latency against wall time", XLabel: labelWall, YLabel: labelBest, XFromZero: true}
	if !timed {
		b.XLabel = labelRecordNo
	}
	for _, r := range runs {
		s := BestCurve(r.Records)
		s.Name = r.Name
		a.Series = append(a.Series, s)
		e := EstimateCurve(r.Records, nil, timed, startTime(r.Records))
		e.Name = r.Name
		b.Series = append(b.Series, e)
	}
	return Figure{Title: title, Panels: []Panel{a, b}}, nil
}

// Run is one tuning run of CompareFigure: a legend name and the records
// of its database, in file order.
type Run struct {
	Name    string
	Records []*autotune.Record
}

// BestCurve is the best median latency so far, in ms, against the trial
// number (1 for the first record; failed trials count) of records in
// order. Only the trials that improve the best and the last trial are
// points (the line is a step function); trials before the first success
// have none.
func BestCurve(records []*autotune.Record) Series {
	var s Series
	best := math.Inf(1)
	for i, r := range records {
		m := r.Median()
		last := i == len(records)-1
		if m < best || last && !math.IsInf(best, 1) {
			best = math.Min(best, m)
			s.X = append(s.X, float64(i+1))
			s.Y = append(s.Y, best*1e3)
		}
	}
	return s
}

// EstimateCurve is Σ weight × best median latency so far (ms) over the
// tasks (workload, target) of records that have a successful trial,
// against the seconds since start (timed) or the record number (1 for the
// first record). A workload's weight is weights[workload], 1 when absent
// or weights is nil. The curve starts when every such task has a success;
// only changes and the last record are points.
func EstimateCurve(records []*autotune.Record, weights map[string]int, timed bool, start time.Time) Series {
	need := map[[2]string]bool{}
	for _, r := range records {
		if r.OK() {
			need[[2]string{r.Workload, r.Target}] = true
		}
	}
	best := map[[2]string]float64{}
	var s Series
	x := 0.0
	for i, r := range records {
		x = recordX(r, i, timed, start, x)
		k := [2]string{r.Workload, r.Target}
		changed := false
		if b, ok := best[k]; need[k] && (!ok || r.Median() < b) && r.OK() {
			best[k], changed = r.Median(), true
		}
		if len(best) < len(need) || !changed && i < len(records)-1 {
			continue
		}
		s.X = append(s.X, x)
		s.Y = append(s.Y, weightedSum(best, weights)*1e3)
	}
	return s
}

// recordX is the X of record i: its seconds since start when timed (never
// less than prev, the previous record's, so that the line goes forward),
// else i+1.
func recordX(r *autotune.Record, i int, timed bool, start time.Time, prev float64) float64 {
	if !timed {
		return float64(i + 1)
	}
	t, err := time.Parse(time.RFC3339, r.Time)
	if err != nil {
		return prev
	}
	return math.Max(prev, t.Sub(start).Seconds())
}

// weightedSum is Σ weight × best, in seconds.
func weightedSum(best map[[2]string]float64, weights map[string]int) float64 {
	sum := 0.0
	for k, b := range best {
		w, ok := weights[k[0]]
		if !ok {
			w = 1
		}
		sum += float64(w) * b
	}
	return sum
}

// HasTimes reports whether every record's time parses (RFC 3339) and the
// times are not all equal: whether wall time can be an axis.
func HasTimes(records []*autotune.Record) bool {
	var lo, hi time.Time
	for i, r := range records {
		t, err := time.Parse(time.RFC3339, r.Time)
		if err != nil {
			return false
		}
		if i == 0 || t.Before(lo) {
			lo = t
		}
		if i == 0 || t.After(hi) {
			hi = t
		}
	}
	return hi.After(lo)
}

// startTime is the earliest parsable time of the records (zero when none).
func startTime(records []*autotune.Record) time.Time {
	var start time.Time
	for _, r := range records {
		if t, err := time.Parse(time.RFC3339, r.Time); err == nil && (start.IsZero() || t.Before(start)) {
			start = t
		}
	}
	return start
}

// groupTasks splits records into tasks in order of first appearance and
// names them: the record's kernel name, made unique with the target or a
// workload prefix where two tasks share one.
func groupTasks(records []*autotune.Record) []*task {
	var tasks []*task
	byKey := map[[2]string]*task{}
	for _, r := range records {
		k := [2]string{r.Workload, r.Target}
		t := byKey[k]
		if t == nil {
			t = &task{workload: r.Workload, target: r.Target, name: r.Task, best: math.Inf(1)}
			if t.name == "" {
				t.name = shortKey(r.Workload)
			}
			byKey[k] = t
			tasks = append(tasks, t)
		}
		t.records = append(t.records, r)
		t.best = math.Min(t.best, r.Median())
	}
	uniqueNames(tasks)
	return tasks
}

// uniqueNames appends " [target]" (or " #workload-prefix" when the
// targets are equal too) to names that several tasks share.
func uniqueNames(tasks []*task) {
	count := map[string]int{}
	countOnTarget := map[[2]string]int{}
	for _, t := range tasks {
		count[t.name]++
		countOnTarget[[2]string{t.name, t.target}]++
	}
	for _, t := range tasks {
		switch {
		case countOnTarget[[2]string{t.name, t.target}] > 1:
			t.name += " #" + shortKey(t.workload)
		case count[t.name] > 1:
			t.name += " [" + t.target + "]"
		}
	}
}

func shortKey(workload string) string {
	if len(workload) > 8 {
		return workload[:8]
	}
	return workload
}

// pickTasks returns at most n tasks, those with the most trials (ties:
// the larger best latency first), ordered by final best latency from the
// slowest down (the legend then lists the lines top to bottom), tasks
// without a success last.
func pickTasks(tasks []*task, n int) []*task {
	out := append([]*task(nil), tasks...)
	if len(out) > n {
		sort.SliceStable(out, func(i, j int) bool {
			if len(out[i].records) != len(out[j].records) {
				return len(out[i].records) > len(out[j].records)
			}
			return out[i].best > out[j].best && !math.IsInf(out[i].best, 1)
		})
		out = out[:n]
	}
	sort.SliceStable(out, func(i, j int) bool {
		bi, bj := out[i].best, out[j].best
		if math.IsInf(bi, 1) || math.IsInf(bj, 1) {
			return !math.IsInf(bi, 1) && math.IsInf(bj, 1)
		}
		return bi > bj
	})
	return out
}

// unmeasured counts the tasks without a successful trial.
func unmeasured(tasks []*task) int {
	n := 0
	for _, t := range tasks {
		if math.IsInf(t.best, 1) {
			n++
		}
	}
	return n
}

// summary is the figure's title: prefix, then the task, trial and failure
// counts and the targets.
func summary(prefix string, records []*autotune.Record, tasks []*task) string {
	failed := 0
	var targets []string
	seen := map[string]bool{}
	for _, r := range records {
		if !r.OK() {
			failed++
		}
		if !seen[r.Target] {
			seen[r.Target] = true
			targets = append(targets, r.Target)
		}
	}
	s := fmt.Sprintf("%d task%s, %d trial%s (%d failed) on %s", len(tasks), plural(len(tasks)), len(records), plural(len(records)), failed, strings.Join(targets, ", "))
	if prefix != "" {
		s = prefix + ": " + s
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
