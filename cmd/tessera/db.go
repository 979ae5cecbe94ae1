package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/tessera-ml/tessera/autotune"
	"github.com/tessera-ml/tessera/autotune/tuneplot"
)

// newDBCmd is `tessera db`: tools that read a tuning database.
func newDBCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "db",
		Short: "inspect a tuning database (tessera tune --db)",
	}
	cmd.AddCommand(newDBPlotCmd(stdout, stderr))
	return cmd
}

func newDBPlotCmd(stdout, stderr io.Writer) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "plot TUNE.jsonl -o curves.png|curves.svg",
		Short: "draw a tuning database's search curves (PNG or SVG)",
		Long: `plot draws the records of a tuning database side by side:
(a) each task's best latency so far (ms) against its trial number, one
line per task (the 12 with the most trials when there are more), and
(b) the model-latency estimate, the sum of the tasks' best latencies so
far (ms; the records do not say how often a model calls each kernel, so
each task counts once), against the wall time since the first record.
The format comes from the extension of -o (.png or .svg). The database
is only read; the picture is written to a temporary file and renamed.

  tessera tune mlp.mlir --trials 100 --db mlp.jsonl
  tessera db plot mlp.jsonl -o curves.png`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fail(stderr, fmt.Errorf("-o is required (the picture to write: .png or .svg)"))
			}
			if err := plotDatabase(args[0], out, nil, nil, stderr); err != nil {
				return fail(stderr, err)
			}
			fmt.Fprintf(stdout, "wrote %s\n", out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "picture to write: .png or .svg")
	return cmd
}

// plotDatabase draws the tuning database at db into the picture out (PNG
// or SVG by its extension; see tuneplot.DatabaseFigure). keep, when not
// nil, selects the records to draw; weights (workload key → calls per
// model run, nil: unknown) weight the model estimate. The database's
// warnings (a torn last line, records of a newer version) go to warn.
//
// Errors: an unsupported extension (checked before reading), a missing or
// unreadable database, a malformed line (path:line, as `tessera tune`
// reports it), no records to draw, a failed write. Nothing is written on
// error.
func plotDatabase(db, out string, keep func(*autotune.Record) bool, weights map[string]int, warn io.Writer) error {
	if _, err := tuneplot.Format(out); err != nil {
		return err
	}
	records, warns, err := autotune.ReadRecords(db)
	if err != nil {
		return err
	}
	for _, w := range warns {
		fmt.Fprintln(warn, w)
	}
	if keep != nil {
		var kept []*autotune.Record
		for _, r := range records {
			if keep(r) {
				kept = append(kept, r)
			}
		}
		records = kept
	}
	fig, err := tuneplot.DatabaseFigure(records, tuneplot.Options{Title: filepath.Base(db), Weights: weights})
	if err != nil {
		return fmt.Errorf("%s: %v", db, err)
	}
	return tuneplot.Write(out, fig)
}
