package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/tessera-ml/tessera/autotune"
	"github.com/tessera-ml/tessera/autotune/distributed"
)

// useBroker points opts at the workers behind --broker: it starts the
// embedded broker when asked (its store beside the database), connects,
// and sets opts.Measurer to the distributed measurer, whose accepted host
// is the one of the database's earlier distributed records of the tasks
// (none: the first result's). The returned function closes the
// connection and the embedded broker. Errors: a bad --broker, an
// unreachable broker or one without JetStream.
func useBroker(opts *autotune.Options, o tuneOptions, tasks []*autotune.Task, db *autotune.Database, stdout, stderr io.Writer) (func(), error) {
	url := o.broker
	closeAll := func() {}
	port, embedded, err := distributed.ParseEmbedded(url)
	if err != nil {
		return nil, err
	}
	if embedded {
		e, err := distributed.StartEmbedded("127.0.0.1", port, o.db+".jetstream")
		if err != nil {
			return nil, err
		}
		url, closeAll = e.URL(), e.Shutdown
		name, _, _ := strings.Cut(opts.Target.Key(), " ")
		fmt.Fprintf(stdout, "embedded broker on %s (JetStream store %s.jetstream); start workers with:\n  tessera worker --broker %s --target %s\n", url, o.db, url, name)
	}
	b, err := distributed.Connect(context.Background(), url, o.brokerCreds, "tessera tune")
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("--broker: %v", err)
	}
	host := recordedHost(tasks, db, opts.Target.Key())
	opts.Measurer = func(mo autotune.MeasureOptions) (autotune.BatchMeasurer, error) {
		return distributed.NewMeasurer(context.Background(), b, distributed.MeasurerOptions{Measure: mo, Host: host, Log: stderr})
	}
	return func() { b.Close(); closeAll() }, nil
}

// recordedHost is the host fingerprint of the first record of tasks on
// target measured by a distributed worker ("" when there is none).
func recordedHost(tasks []*autotune.Task, db *autotune.Database, target string) string {
	for _, t := range tasks {
		for _, r := range db.Records(t.Key, target) {
			if r.Host != "" {
				return r.Host
			}
		}
	}
	return ""
}
