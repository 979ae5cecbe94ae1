package autotune

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/tessera-ml/tessera/schedule"
)

// Database is the tuning database (DESIGN.md, "Tuning records"): a JSON
// lines file holding one Record per line, in the order the trials were
// measured. It is append-only: Append writes one line and fsyncs the file
// before returning, so a killed tuner loses no finished record, and a line
// torn by a crash in the middle of an append is dropped on the next open.
//
// All records are also kept in memory, indexed by (workload, target), so
// the queries (Records, Has, Best, Count, Workloads) do not touch the file.
// A Database is safe for concurrent use by several goroutines. It does not
// lock the file against other processes: one process appends at a time.
//
// The *Record values returned by the queries are shared with the database
// and must not be modified.
type Database struct {
	mu        sync.RWMutex
	path      string
	f         *os.File
	size      int64 // bytes of complete lines in the file: where the next append starts
	closed    bool
	records   []*Record
	byTask    map[dbTaskKey][]*Record // the trials (measured alone)
	inModel   map[dbTaskKey][]*Record // in-model records (RerankInModel), file order
	cands     map[dbCandKey]struct{}
	workloads []string
	seen      map[string]bool
	// syncFile makes the written data durable (os.File.Sync; replaced by
	// tests to observe or fail the fsync).
	syncFile func(*os.File) error
}

type dbTaskKey struct{ workload, target string }

type dbCandKey struct{ workload, target, candidate string }

// OpenDatabase opens (creating when absent) the JSONL database at path and
// loads it.
//
// A torn last line (no trailing newline and not valid JSON — an
// interrupted append) is skipped with a warning and the file is truncated
// back to the last complete line so the next append starts a clean line; a
// complete last record that only lacks its newline is kept and the newline
// is added. A malformed line elsewhere (invalid JSON, a missing or
// non-positive version, no workload or target, an unparsable trace) is an
// error naming path:line. A record whose version > RecordVersion (written
// by a newer Tessera) is skipped with a warning. Blank lines are ignored.
//
// Warnings are returned, one string each, "path:line: warning: ...". On
// error the file is closed and no Database is returned.
func OpenDatabase(path string) (*Database, []string, error) {
	_, statErr := os.Stat(path)
	created := errors.Is(statErr, fs.ErrNotExist)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("tuning database: %v", err)
	}
	if created {
		syncDir(path)
	}
	d := &Database{
		path:     path,
		f:        f,
		byTask:   map[dbTaskKey][]*Record{},
		inModel:  map[dbTaskKey][]*Record{},
		cands:    map[dbCandKey]struct{}{},
		seen:     map[string]bool{},
		syncFile: (*os.File).Sync,
	}
	warnings, err := d.load()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return d, warnings, nil
}

// load reads the whole file, fills the indexes and repairs a torn or
// unterminated last line.
func (d *Database) load() ([]string, error) {
	if _, err := d.f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("tuning database: %v", err)
	}
	sc, err := scanRecords(d.f, d.path, d.add)
	if err != nil {
		return nil, err
	}
	warnings := sc.warnings
	if sc.tornLine > 0 {
		// An interrupted append: drop it so the next one starts a clean line.
		warnings = append(warnings, sc.tornWarning("the file is truncated to its last complete line"))
		if err := d.f.Truncate(sc.size); err != nil {
			return nil, fmt.Errorf("%s: truncating the torn last line: %v", d.path, err)
		}
		if err := d.syncFile(d.f); err != nil {
			return nil, fmt.Errorf("%s: %v", d.path, err)
		}
	}
	if sc.unterminated {
		// A complete record whose newline is missing: add it.
		if _, err := d.f.Write([]byte{'\n'}); err != nil {
			return nil, fmt.Errorf("%s: terminating the last line: %v", d.path, err)
		}
		if err := d.syncFile(d.f); err != nil {
			return nil, fmt.Errorf("%s: %v", d.path, err)
		}
		sc.size++
	}
	d.size = sc.size
	return warnings, nil
}

// ReadRecords reads the records of the JSONL database at path, in file
// order, without opening it for writing: the read-only counterpart of
// OpenDatabase for tools that only look at a database (plots). It parses
// the lines as OpenDatabase does and fails on the same malformed lines
// with the same "path:line: malformed record: ..." error; a torn last line
// is skipped with a warning but left in the file, and a record of a newer
// version is skipped with a warning.
//
// Errors: a missing or unreadable file ("tuning database: open PATH: ...",
// one line), a malformed line.
func ReadRecords(path string) ([]*Record, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("tuning database: %v", err)
	}
	defer f.Close()
	var records []*Record
	sc, err := scanRecords(f, path, func(r *Record) { records = append(records, r) })
	if err != nil {
		return nil, nil, err
	}
	warnings := sc.warnings
	if sc.tornLine > 0 {
		warnings = append(warnings, sc.tornWarning("the file is left as it is"))
	}
	return records, warnings, nil
}

// scanned is what scanRecords found at the end of a database file.
type scanned struct {
	path     string
	warnings []string
	// size is the length in bytes of the complete lines, a complete last
	// record without its newline included: where the next append starts.
	size int64
	// tornLine is the number of a torn last line (no newline and not valid
	// JSON: an interrupted append), 0 when there is none; tornBytes is its
	// length. It is not part of size.
	tornLine, tornBytes int
	// unterminated is set when the last record is complete but lacks its
	// newline.
	unterminated bool
}

// tornWarning is the warning about a torn last line; what says what
// happens to it.
func (s *scanned) tornWarning(what string) string {
	return fmt.Sprintf("%s:%d: warning: skipping a torn last line (%d bytes without a newline: an interrupted append); %s", s.path, s.tornLine, s.tornBytes, what)
}

// scanRecords decodes the lines of a database file read from rd (named
// path in messages) and passes each record of a version this Tessera reads
// to add, in file order. Blank lines are ignored; a record of a newer
// version is skipped with a warning. A malformed line is an error naming
// path:line; a read error names the line it stopped at.
func scanRecords(rd io.Reader, path string, add func(*Record)) (scanned, error) {
	sc := scanned{path: path}
	br := bufio.NewReader(rd)
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return sc, fmt.Errorf("%s:%d: %v", path, lineNo, err)
		}
		if len(line) == 0 {
			return sc, nil // clean end of file
		}
		terminated := line[len(line)-1] == '\n'
		if !terminated && !json.Valid(line) {
			sc.tornLine, sc.tornBytes = lineNo, len(line)
			return sc, nil
		}
		sc.size += int64(len(line))
		if len(bytes.TrimSpace(line)) > 0 {
			r, future, err := decodeRecord(line)
			switch {
			case err != nil:
				return sc, fmt.Errorf("%s:%d: malformed record: %v", path, lineNo, err)
			case future > 0:
				sc.warnings = append(sc.warnings, fmt.Sprintf("%s:%d: warning: skipping a record of version %d (this Tessera reads versions up to %d)", path, lineNo, future, RecordVersion))
			default:
				add(r)
			}
		}
		if !terminated {
			sc.unterminated = true
			return sc, nil
		}
	}
}

// add indexes a record (the caller holds the write lock or owns d).
func (d *Database) add(r *Record) {
	d.records = append(d.records, r)
	k := dbTaskKey{r.Workload, r.Target}
	if r.InModel != "" {
		d.inModel[k] = append(d.inModel[k], r)
		return
	}
	d.byTask[k] = append(d.byTask[k], r)
	d.cands[dbCandKey{r.Workload, r.Target, r.Candidate}] = struct{}{}
	if !d.seen[r.Workload] {
		d.seen[r.Workload] = true
		d.workloads = append(d.workloads, r.Workload)
	}
}

// Append adds a record to the database: it stamps r (Version =
// RecordVersion, Tessera = Version, Time = now as RFC 3339 UTC, each only
// when empty), marshals it on one line, writes the line and fsyncs the
// file. The database keeps its own copy, decoded back from the line, so
// later changes to r do not affect it.
//
// Errors: a nil record, an empty workload or target, a version outside
// 1..RecordVersion, a value JSON cannot encode (NaN or infinite seconds, a
// trace attribute of an unsupported type), a closed database, a failed
// write or fsync. On error nothing is recorded and the file is cut back to
// its previous length.
func (d *Database) Append(r *Record) error {
	if r == nil {
		return errors.New("tuning database: append: nil record")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return fmt.Errorf("tuning database %s: append: the database is closed", d.path)
	}
	if r.Version == 0 {
		r.Version = RecordVersion
	}
	if r.Tessera == "" {
		r.Tessera = Version
	}
	if r.Time == "" {
		r.Time = time.Now().UTC().Format(time.RFC3339)
	}
	line, err := encodeRecord(r)
	if err != nil {
		return fmt.Errorf("tuning database %s: append: %v", d.path, err)
	}
	stored, future, err := decodeRecord(line)
	if err == nil && future > 0 {
		err = fmt.Errorf("version %d is newer than this Tessera's %d", future, RecordVersion)
	}
	if err != nil {
		return fmt.Errorf("tuning database %s: append: %v", d.path, err)
	}
	line = append(line, '\n')
	if _, err := d.f.Write(line); err != nil {
		d.f.Truncate(d.size)
		return fmt.Errorf("tuning database %s: append: %v", d.path, err)
	}
	if err := d.syncFile(d.f); err != nil {
		d.f.Truncate(d.size)
		return fmt.Errorf("tuning database %s: append: fsync: %v", d.path, err)
	}
	d.size += int64(len(line))
	d.add(stored)
	return nil
}

// Records returns the records (trials) of a workload on a target, failed
// ones included, in file order; in-model records (Record.InModel) are not
// trials and are left out.
func (d *Database) Records(workload, target string) []*Record {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return append([]*Record(nil), d.byTask[dbTaskKey{workload, target}]...)
}

// Has reports whether the database holds a record (successful or failed)
// of the candidate for the workload on the target.
func (d *Database) Has(workload, target, candidate string) bool {
	d.mu.RLock()
	defer d.mu.RUnlock()
	_, ok := d.cands[dbCandKey{workload, target, candidate}]
	return ok
}

// Best returns the first of Ranked: the record whose schedule the
// compiler applies, or false when there is no successful record.
func (d *Database) Best(workload, target string) (*Record, bool) {
	rs := d.Ranked(workload, target)
	if len(rs) == 0 {
		return nil, false
	}
	return rs[0], true
}

// Ranked returns the successful records of the workload on the target in
// the order the compiler tries them: first the in-model records of the
// latest in-model rerank of the workload (RerankInModel; the last job's
// in the file), fastest in the model first, then the trials not among
// them, fastest alone first (rankedTrials). Times in the model and alone
// are not compared with each other.
func (d *Database) Ranked(workload, target string) []*Record {
	d.mu.RLock()
	all := d.inModel[dbTaskKey{workload, target}]
	var first []*Record
	if n := len(all); n > 0 {
		job := all[n-1].InModel
		for _, r := range all {
			if r.InModel == job && r.OK() {
				first = append(first, r)
			}
		}
	}
	d.mu.RUnlock()
	sortInModel(first)
	seen := map[string]bool{}
	for _, r := range first {
		seen[r.Candidate] = true
	}
	for _, r := range d.rankedTrials(workload, target) {
		if !seen[r.Candidate] {
			first = append(first, r)
		}
	}
	return first
}

// rankedTrials returns the successful trials of the workload on the
// target, fastest first (file order on ties). Trials of a symbolic
// workload measured at different sizes compare by latency per unit of
// work (median / Rows): the kernel's fastest per row.
func (d *Database) rankedTrials(workload, target string) []*Record {
	d.mu.RLock()
	defer d.mu.RUnlock()
	type ranked struct {
		r   *Record
		key float64
	}
	var rs []ranked
	for _, r := range d.byTask[dbTaskKey{workload, target}] {
		if r.OK() {
			rs = append(rs, ranked{r, r.Median() / r.Rows()})
		}
	}
	sort.SliceStable(rs, func(a, b int) bool { return rs[a].key < rs[b].key })
	out := make([]*Record, len(rs))
	for i, x := range rs {
		out[i] = x.r
	}
	return out
}

// Count returns the number of records (trials) of the workload on the
// target, failed ones included.
func (d *Database) Count(workload, target string) int {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return len(d.byTask[dbTaskKey{workload, target}])
}

// Workloads returns the distinct workload keys, on any target, in the
// order they first appear.
func (d *Database) Workloads() []string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return append([]string(nil), d.workloads...)
}

// Path returns the path of the database file.
func (d *Database) Path() string { return d.path }

// Close closes the file. The loaded records stay queryable; Append fails
// afterwards. Closing twice is not an error.
func (d *Database) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	if err := d.f.Close(); err != nil {
		return fmt.Errorf("tuning database %s: %v", d.path, err)
	}
	return nil
}

// recordFields has Record's fields without its methods, so that
// wireRecord can embed them.
type recordFields Record

// wireRecord is a Record as written on a line: the trace goes through
// schedule.Trace's own JSON form (its field shadows the embedded one), so
// that decoding keeps integral numbers as int64 (schedule.ParseTrace)
// where encoding/json would give float64. The trace comes last on the line.
type wireRecord struct {
	*recordFields
	Trace json.RawMessage `json:"trace"`
}

// encodeRecord marshals r on one line (without the newline).
func encodeRecord(r *Record) ([]byte, error) {
	w := wireRecord{recordFields: (*recordFields)(r), Trace: json.RawMessage("null")}
	if r.Trace != nil {
		data, err := r.Trace.JSON()
		if err != nil {
			return nil, err
		}
		var c bytes.Buffer
		if err := json.Compact(&c, data); err != nil {
			return nil, fmt.Errorf("trace: %v", err)
		}
		w.Trace = c.Bytes()
	}
	return json.Marshal(w)
}

// decodeRecord parses one line. A record of a version newer than
// RecordVersion is not decoded further: its version is returned as future
// (its other fields may follow a format this Tessera does not know).
func decodeRecord(line []byte) (r *Record, future int, err error) {
	var head struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return nil, 0, err
	}
	switch {
	case head.Version == nil:
		return nil, 0, errors.New("no version")
	case *head.Version > RecordVersion:
		return nil, *head.Version, nil
	case *head.Version < 1:
		return nil, 0, fmt.Errorf("version %d is not positive", *head.Version)
	}
	r = &Record{}
	w := wireRecord{recordFields: (*recordFields)(r)}
	if err := json.Unmarshal(line, &w); err != nil {
		return nil, 0, err
	}
	if r.Workload == "" {
		return nil, 0, errors.New("no workload")
	}
	if r.Target == "" {
		return nil, 0, errors.New("no target")
	}
	r.Trace = nil
	if t := bytes.TrimSpace(w.Trace); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		tr, err := schedule.ParseTrace(t)
		if err != nil {
			return nil, 0, err
		}
		r.Trace = tr
	}
	return r, 0, nil
}

// syncDir fsyncs the directory holding path, so that a newly created
// database file survives a crash (best effort: not every system can sync
// a directory).
func syncDir(path string) {
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return
	}
	dir.Sync()
	dir.Close()
}
