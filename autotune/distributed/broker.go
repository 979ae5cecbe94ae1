package distributed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Broker is a connection to a NATS server with JetStream, with the
// tuning streams and the worker registry set up.
type Broker struct {
	NC      *nats.Conn
	JS      jetstream.JetStream
	Jobs    jetstream.Stream
	Results jetstream.Stream
	Workers jetstream.KeyValue
}

// WorkerTTL is how long a worker's registration lives without a
// heartbeat: a worker that stops heartbeating (killed) leaves the count
// of live workers this long after its last one.
const WorkerTTL = 10 * time.Second

// Connect connects to the broker at url (nats://host:4222, tls://… for
// TLS, credentials in the URL or in the NATS credentials file creds when
// not empty), named name, and creates or updates the tuning streams and
// the worker registry. The connection reconnects forever (a broker
// restart). Errors: the broker cannot be reached, has no JetStream
// (start it with -js), or refuses the streams.
func Connect(ctx context.Context, url, creds, name string) (*Broker, error) {
	opts := []nats.Option{nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(500 * time.Millisecond), nats.Timeout(5 * time.Second)}
	if creds != "" {
		if _, err := os.Stat(creds); err != nil {
			return nil, fmt.Errorf("--broker-creds: %v", err)
		}
		opts = append(opts, nats.UserCredentials(creds))
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, fmt.Errorf("broker %s: %v", url, err)
	}
	b, err := setup(ctx, nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("broker %s: %v", url, err)
	}
	return b, nil
}

// setup creates the streams and the worker registry where they are
// missing; existing ones are used as they are (an update of a stream
// while another client creates a consumer on it races inside
// nats-server 2.15's file store, and the configuration never changes).
func setup(ctx context.Context, nc *nats.Conn) (*Broker, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	b := &Broker{NC: nc, JS: js}
	b.Jobs, err = ensureStream(ctx, js, jetstream.StreamConfig{
		Name:        JobsStream,
		Description: "Tessera tuning jobs: one build-and-measure job per candidate, by target",
		Subjects:    []string{jobsPrefix + ">"},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     jetstream.FileStorage,
		Duplicates:  2 * time.Minute,
		MaxMsgSize:  maxMessageSize,
		AllowDirect: true,
	})
	if err != nil {
		if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, nats.ErrJetStreamNotEnabled) {
			return nil, errors.New("JetStream is not enabled (start the server with nats-server -js)")
		}
		return nil, fmt.Errorf("stream %s: %v", JobsStream, err)
	}
	b.Results, err = ensureStream(ctx, js, jetstream.StreamConfig{
		Name:              ResultsStream,
		Description:       "Tessera tuning results: the last result per candidate",
		Subjects:          []string{resultsPrefix + ">"},
		Retention:         jetstream.LimitsPolicy,
		Storage:           jetstream.FileStorage,
		MaxMsgsPerSubject: 1,
		MaxAge:            7 * 24 * time.Hour,
		Duplicates:        2 * time.Minute,
		MaxMsgSize:        maxMessageSize,
		AllowDirect:       true,
	})
	if err != nil {
		return nil, fmt.Errorf("stream %s: %v", ResultsStream, err)
	}
	b.Workers, err = js.KeyValue(ctx, WorkersBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		b.Workers, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: WorkersBucket, Description: "live Tessera workers", TTL: WorkerTTL, Storage: jetstream.MemoryStorage})
		if err != nil {
			// Another client created it first: the server answers
			// "bucket exists" or, inside the creation's window, "subjects
			// overlap with an existing stream" (err_code 10065); either
			// way the bucket is there to use.
			if kv, lookErr := js.KeyValue(ctx, WorkersBucket); lookErr == nil {
				b.Workers, err = kv, nil
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("worker registry %s: %v", WorkersBucket, err)
	}
	return b, nil
}

// ensureStream returns the stream cfg names, created with cfg when it
// does not exist (by this client or, concurrently, another).
func ensureStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	s, err := js.Stream(ctx, cfg.Name)
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return s, err
	}
	s, err = js.CreateStream(ctx, cfg)
	if err == nil {
		return s, nil
	}
	// Another client created it first: the server answers "stream name
	// already in use" or, inside the creation's window, "subjects overlap
	// with an existing stream" (err_code 10065); either way the stream is
	// there to use once the other creation completes.
	for range 20 {
		if existing, lookErr := js.Stream(ctx, cfg.Name); lookErr == nil {
			return existing, nil
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil, err
}

// Close drains and closes the connection (closes it at once while the
// broker is unreachable).
func (b *Broker) Close() {
	if b == nil || b.NC == nil {
		return
	}
	if b.NC.IsConnected() {
		_ = b.NC.Drain()
	}
	b.NC.Close()
}

// Embedded is a NATS server with JetStream run inside this process
// (--broker embedded).
type Embedded struct {
	srv *server.Server
}

// StartEmbedded starts a NATS server with JetStream listening on
// host:port (port 0: a free one), storing its streams under dir. Errors:
// the port is taken, the server does not come up in 10 s.
func StartEmbedded(host string, port int, dir string) (*Embedded, error) {
	if port == 0 {
		port = server.RANDOM_PORT // the server's 0 is its default port
	}
	srv, err := server.NewServer(&server.Options{Host: host, Port: port, JetStream: true, StoreDir: dir, NoSigs: true, MaxPayload: maxMessageSize})
	if err != nil {
		return nil, fmt.Errorf("embedded broker: %v", err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		return nil, fmt.Errorf("embedded broker: not listening on %s after 10 s (port taken?)", net.JoinHostPort(host, strconv.Itoa(port)))
	}
	return &Embedded{srv: srv}, nil
}

// URL is the client URL of the embedded server.
func (e *Embedded) URL() string { return e.srv.ClientURL() }

// Shutdown stops the server.
func (e *Embedded) Shutdown() {
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
}

// ParseEmbedded reports whether a --broker value asks for the embedded
// server ("embedded", or "embedded:PORT" for another port than 4222) and
// its port. Errors: a bad port.
func ParseEmbedded(url string) (port int, ok bool, err error) {
	rest, ok := strings.CutPrefix(url, "embedded")
	if !ok || (rest != "" && rest[0] != ':') {
		return 0, false, nil
	}
	if rest == "" {
		return 4222, true, nil
	}
	port, err = strconv.Atoi(rest[1:])
	if err != nil || port < 0 || port > 65535 {
		return 0, true, fmt.Errorf("--broker %s: the port is not a number in 0..65535", url)
	}
	return port, true, nil
}
