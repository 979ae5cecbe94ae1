package autotune

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// A worker is a builder or runner child process speaking JSON lines:
// one request on its stdin, one response on its stdout. A crash (signal,
// exit) or a timeout costs only the request in flight; the process is
// restarted for the next one.
type worker struct {
	role    string
	command []string
	env     []string

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte
	stderr *tailBuffer
	done   chan struct{} // closed when the process has exited
}

// errWorkerTimeout is returned by call when the deadline passed.
var errWorkerTimeout = errors.New("timed out")

func newWorker(role string, command, env []string) *worker {
	return &worker{role: role, command: command, env: env}
}

func (w *worker) start() error {
	cmd := exec.Command(w.command[0], w.command[1:]...)
	cmd.Env = append(append(os.Environ(), w.env...), WorkerEnv+"="+w.role)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	w.stderr = &tailBuffer{max: 4096}
	cmd.Stderr = w.stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the %s worker: %v", w.role, err)
	}
	w.cmd, w.stdin = cmd, stdin
	w.lines = make(chan []byte, 1)
	w.done = make(chan struct{})
	lines := w.lines
	go func() {
		r := bufio.NewReaderSize(stdout, 1<<16)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 && err == nil {
				lines <- line
			}
			if err != nil {
				close(lines)
				return
			}
		}
	}()
	done := w.done
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	return nil
}

// call sends req and decodes the response into resp, waiting at most
// timeout. A dead or timed-out process is killed and forgotten (the next
// call starts a new one); the error then says how it ended.
func (w *worker) call(req, resp any, timeout time.Duration) error {
	if w.cmd == nil {
		if err := w.start(); err != nil {
			return err
		}
	}
	data, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if _, err := w.stdin.Write(append(data, '\n')); err != nil {
		return w.died()
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case line, ok := <-w.lines:
		if !ok {
			return w.died()
		}
		if err := json.Unmarshal(line, resp); err != nil {
			w.kill()
			return fmt.Errorf("bad response from the %s worker: %v", w.role, err)
		}
		return nil
	case <-timer.C:
		w.kill()
		return errWorkerTimeout
	}
}

// died waits for the exited process and describes its end.
func (w *worker) died() error {
	select {
	case <-w.done:
	case <-time.After(5 * time.Second):
		w.kill()
	}
	msg := "exited"
	if st := w.cmd.ProcessState; st != nil {
		msg = st.String() // "signal: segmentation fault", "exit status 2"
	}
	tail := w.stderr.signalLine()
	if strings.Contains(tail, "SIGSEGV") && !strings.Contains(msg, "segmentation fault") {
		// a fault on the Go thread (a kernel running serially there): the
		// runtime catches it and exits with status 2
		msg = "segmentation fault, " + msg
	}
	if tail != "" {
		msg += ": " + tail
	}
	w.cmd = nil
	return fmt.Errorf("the %s worker died (%s)", w.role, msg)
}

// kill ends the process (and forgets it).
func (w *worker) kill() {
	if w.cmd == nil {
		return
	}
	_ = w.cmd.Process.Kill()
	_ = w.stdin.Close()
	<-w.done
	w.cmd = nil
}

// close ends the worker politely (stdin closed), killing it after 2 s.
func (w *worker) close() {
	if w.cmd == nil {
		return
	}
	_ = w.stdin.Close()
	select {
	case <-w.done:
	case <-time.After(2 * time.Second):
		_ = w.cmd.Process.Kill()
		<-w.done
	}
	w.cmd = nil
}

// tailBuffer keeps the last max bytes written to it, and the first line
// naming a signal (the Go runtime's "[signal SIGSEGV: segmentation
// violation ...]", which a long goroutine dump would push out of the
// tail).
type tailBuffer struct {
	mu     sync.Mutex
	max    int
	b      []byte
	signal string
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if t.signal == "" {
		t.signal = firstSignalLine(t.b)
	}
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

// firstSignalLine is the first complete line of b that names a signal:
// the Go runtime's "SIGSEGV: segmentation violation" (a fault in foreign
// code on a Go thread) or "[signal SIGSEGV: ...]"; "" when none.
func firstSignalLine(b []byte) string {
	for len(b) > 0 {
		j := bytes.IndexByte(b, '\n')
		if j < 0 {
			return ""
		}
		l := strings.Trim(string(b[:j]), "[] \t")
		if strings.HasPrefix(l, "SIG") || strings.HasPrefix(l, "signal SIG") {
			return l
		}
		b = b[j+1:]
	}
	return ""
}

// signalLine is the Go runtime's "signal SIGSEGV: ..." line, or the last
// non-empty line of the captured stderr.
func (t *tailBuffer) signalLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.signal != "" {
		return t.signal
	}
	last := ""
	for _, l := range strings.Split(string(t.b), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "signal ") || strings.HasPrefix(l, "SIG") {
			return l
		}
		if l != "" && last == "" {
			last = l
		}
	}
	return last
}
