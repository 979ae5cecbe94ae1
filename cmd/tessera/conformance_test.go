package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/tessera-ml/tessera/dialects/graph/onnx"
	"github.com/tessera-ml/tessera/dialects/graph/onnx/onnxpb"
	"github.com/tessera-ml/tessera/graphir"
	rt "github.com/tessera-ml/tessera/runtime"
)

// The ONNX backend node tests of Debian's libonnx-testdata (ONNX 1.12.0):
// one folder per test with model.onnx and test_data_set_*/{input,output}_N.pb.
const onnxNodeTests = "/usr/share/libonnx-testdata/data/node"

var conformanceTable = flag.String("conformance-table", "", "write the ONNX conformance table (Markdown) to this file, e.g. ../../docs/onnx-conformance.md")

// Tolerances of the node tests (those of ONNX's backend test runner):
// |got − want| ≤ atol + rtol·|want| elementwise for floats; integers and
// booleans compare exactly; NaN must be where the reference has NaN.
const (
	conformanceRtol = 1e-3
	conformanceAtol = 1e-5
)

// conformanceExclusions lists node tests of ops the importer supports that
// do not pass, each with the reason. An excluded test is still run: one that
// passes fails TestONNXConformance until it is removed from this list.
var conformanceExclusions = map[string]string{
	"test_cast_FLOAT_to_BFLOAT16":              bf16Truncates,
	"test_castlike_FLOAT_to_BFLOAT16":          likeShape + "; " + bf16Truncates,
	"test_castlike_FLOAT_to_BFLOAT16_expanded": likeShape + "; " + bf16Truncates,
	"test_castlike_BFLOAT16_to_FLOAT":          likeShape,
	"test_castlike_BFLOAT16_to_FLOAT_expanded": likeShape,
}

// Reasons of conformanceExclusions shared by several tests.
const (
	bf16Truncates = "ONNX 1.12's reference output truncates float32 to bfloat16; Tessera rounds to nearest even (as XLA, PyTorch and ONNX's later test data)"
	likeShape     = "the model declares input 'like' as 3x4 but its test data hold one element"
)

// conformanceShortEvery: under -short, every Nth test (in name order) runs.
const conformanceShortEvery = 8

type conformanceStatus int

const (
	statusPassed conformanceStatus = iota
	statusExcluded
	statusUnsupported
	statusFailed
)

// conformanceResult is the outcome of one node test.
type conformanceResult struct {
	name   string
	op     string
	status conformanceStatus
	reason string // unsupported: the importer's message; failed/excluded: what went wrong
}

// TestONNXConformance imports every ONNX node test with onnx.ImportBytes,
// compiles the supported ones for this CPU and compares their outputs with
// the reference on every data set. With -conformance-table=FILE it writes
// the per-op table (docs/onnx-conformance.md).
func TestONNXConformance(t *testing.T) {
	entries, err := os.ReadDir(onnxNodeTests)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("%s is absent: install Debian's libonnx-testdata (make deps)", onnxNodeTests)
	}
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	require.NotEmpty(t, names, "no node tests in %s", onnxNodeTests)
	for name := range conformanceExclusions {
		require.Contains(t, names, name, "conformanceExclusions names a test that does not exist")
	}
	if testing.Short() {
		var subset []string
		for i, n := range names {
			if i%conformanceShortEvery == 0 {
				subset = append(subset, n)
			}
		}
		names = subset
	}
	ops := nodeTestOps(t, names)

	var mu sync.Mutex
	var results []conformanceResult
	t.Run("node", func(t *testing.T) {
		for _, name := range names {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				r := runNodeTest(t, name, ops[name])
				mu.Lock()
				results = append(results, r)
				mu.Unlock()
				switch r.status {
				case statusFailed:
					t.Errorf("%s (op %s) fails: %s\n(if this is a known limitation, add it to conformanceExclusions in conformance_test.go with the reason)", name, r.op, r.reason)
				case statusExcluded:
					t.Logf("excluded (%s): %s", conformanceExclusions[name], r.reason)
				case statusUnsupported:
					t.Skipf("unsupported: %s", r.reason)
				}
			})
		}
	})
	sort.Slice(results, func(i, j int) bool { return results[i].name < results[j].name })
	sum := summarize(results)
	t.Logf("ONNX node tests: %d passed, %d excluded, %d unsupported, %d failed (of %d)",
		sum.passed, sum.excluded, sum.unsupported, sum.failed, len(results))
	for _, op := range sum.opNames() {
		c := sum.ops[op]
		t.Logf("  %-28s %3d/%-3d passed  %d excluded  %d unsupported  %d failed", op, c.passed, c.total, c.excluded, c.unsupported, c.failed)
	}
	if *conformanceTable != "" {
		require.False(t, testing.Short(), "-conformance-table needs the whole suite: drop -short")
		require.Len(t, results, len(names), "-conformance-table needs the whole suite: run all of TestONNXConformance")
		require.NoError(t, os.WriteFile(*conformanceTable, []byte(conformanceMarkdown(results, sum)), 0o644))
		t.Logf("wrote %s", *conformanceTable)
		require.NoError(t, updateReadmeConformance("../../README.md", sum))
		t.Logf("updated the conformance section of ../../README.md")
	}
}

// nodeTestOps names the operator each test checks: the op type of its node,
// or, for an "_expanded" test (a function op's body, often several nodes),
// the op of the test it expands followed by " (expanded)".
func nodeTestOps(t *testing.T, names []string) map[string]string {
	t.Helper()
	single := map[string]string{}
	multi := map[string][]string{}
	read := func(name string) []string {
		data, err := os.ReadFile(filepath.Join(onnxNodeTests, name, "model.onnx"))
		require.NoError(t, err)
		var m onnxpb.ModelProto
		require.NoError(t, proto.Unmarshal(data, &m), name)
		var types []string
		for _, n := range m.GetGraph().GetNode() {
			types = append(types, n.GetOpType())
		}
		return types
	}
	ops := map[string]string{}
	for _, name := range names {
		types := read(name)
		if len(types) == 1 && !strings.Contains(name, "_expanded") {
			single[name] = types[0]
			ops[name] = types[0]
		} else {
			multi[name] = types
		}
	}
	for name, types := range multi {
		base := name
		if i := strings.Index(name, "_expanded"); i > 0 {
			base = name[:i]
		}
		op, ok := single[base]
		if !ok && base != name {
			if _, err := os.Stat(filepath.Join(onnxNodeTests, base, "model.onnx")); err == nil {
				if bt := read(base); len(bt) == 1 {
					op, ok = bt[0], true
				}
			}
		}
		switch {
		case ok && base != name:
			ops[name] = op + " (expanded)"
		case len(types) > 0:
			ops[name] = types[len(types)-1]
		default:
			ops[name] = "(empty graph)"
		}
	}
	return ops
}

// isUnsupported reports whether an import error says that something in the
// model (an op, an attribute value, a data type) is not supported.
// The importer says "unsupported ...", "... is not supported" or "only X
// is supported" (an operator set domain other than ai.onnx).
func isUnsupported(err error) bool {
	msg := strings.ToLower(firstLine(err.Error()))
	return strings.Contains(msg, "unsupported") || strings.Contains(msg, "not supported") ||
		strings.Contains(msg, "only ") && strings.Contains(msg, " supported")
}

// runNodeTest imports, compiles and runs one node test on all its data sets.
func runNodeTest(t *testing.T, name, op string) conformanceResult {
	r := conformanceResult{name: name, op: op}
	reason, excluded := conformanceExclusions[name]
	fail := func(format string, args ...any) conformanceResult {
		r.reason = fmt.Sprintf(format, args...)
		r.status = statusFailed
		if excluded {
			r.status = statusExcluded
		}
		return r
	}
	dir := filepath.Join(onnxNodeTests, name)
	data, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
	if err != nil {
		return fail("%v", err)
	}
	m, bound, err := importBinding(name, data, dir)
	if err != nil {
		if isUnsupported(err) {
			r.status = statusUnsupported
			r.reason = importMessage(err)
			if excluded {
				return fail("excluded (%s) but the import now reports it unsupported: %s", reason, r.reason)
			}
			return r
		}
		return fail("import: %s", importMessage(err))
	}
	mlir := filepath.Join(t.TempDir(), name+".mlir")
	if err := os.WriteFile(mlir, []byte(graphir.Print(m)), 0o644); err != nil {
		return fail("%v", err)
	}
	l, err := loadCompiled(mlir, compileOptions{target: "cpu"}, 0)
	if err != nil {
		return fail("compile: %s", firstLine(err.Error()))
	}
	defer l.Close()
	sets, _ := filepath.Glob(filepath.Join(dir, "test_data_set_*"))
	sort.Strings(sets)
	if len(sets) == 0 {
		return fail("no test_data_set_* folder")
	}
	for _, set := range sets {
		if msg := runDataSet(l, set, bound); msg != "" {
			return fail("%s: %s", filepath.Base(set), msg)
		}
	}
	if excluded {
		r.status = statusFailed
		r.reason = fmt.Sprintf("passes, but conformanceExclusions lists it (%q): remove it from the list", reason)
		return r
	}
	r.status = statusPassed
	return r
}

// importNodeTest runs the importer and turns a panic into an error, so one
// broken test is reported as such and does not stop the suite.
func importNodeTest(name string, data []byte, opts onnx.Options) (m *graphir.Module, err error) {
	defer func() {
		if p := recover(); p != nil {
			m, err = nil, fmt.Errorf("importer panic: %v", p)
		}
	}()
	return onnx.ImportBytesWith(name+".onnx", data, opts)
}

// needsBinding finds the graph inputs an import error asks to bind.
var needsBinding = regexp.MustCompile(`it is the graph input '([^']+)': give it a value`)

// importBinding imports a node test, binding each graph input the
// importer needs as a constant (shapes, scales, K, ...) to its value in
// test_data_set_0, as a user does with tessera import --bind-input. It
// returns the positions (input_N.pb numbers) of the bound inputs.
func importBinding(name string, data []byte, dir string) (*graphir.Module, map[int]bool, error) {
	opts := onnx.Options{Bind: map[string]*graphir.Tensor{}}
	bound := map[int]bool{}
	for {
		m, err := importNodeTest(name, data, opts)
		if err == nil {
			return m, bound, nil
		}
		matches := needsBinding.FindAllStringSubmatch(err.Error(), -1)
		if len(matches) == 0 {
			return nil, nil, err
		}
		names, nerr := graphInputNames(data)
		if nerr != nil {
			return nil, nil, err
		}
		for _, mt := range matches {
			i := slices.Index(names, mt[1])
			if i < 0 || bound[i] {
				return nil, nil, err
			}
			t, berr := boundValue(dir, i)
			if berr != nil {
				return nil, nil, fmt.Errorf("binding %s: %v", mt[1], berr)
			}
			opts.Bind[mt[1]], bound[i] = t, true
		}
	}
}

// graphInputNames are a model's graph inputs that are not initializers,
// in order: input_N.pb holds the value of the N-th.
func graphInputNames(data []byte) ([]string, error) {
	var mp onnxpb.ModelProto
	if err := proto.Unmarshal(data, &mp); err != nil {
		return nil, err
	}
	inits := map[string]bool{}
	for _, tp := range mp.GetGraph().GetInitializer() {
		inits[tp.GetName()] = true
	}
	var names []string
	for _, in := range mp.GetGraph().GetInput() {
		if !inits[in.GetName()] {
			names = append(names, in.GetName())
		}
	}
	return names, nil
}

// boundValue reads input i of test_data_set_0 as a graph constant.
func boundValue(dir string, i int) (*graphir.Tensor, error) {
	data, err := os.ReadFile(filepath.Join(dir, "test_data_set_0", fmt.Sprintf("input_%d.pb", i)))
	if err != nil {
		return nil, err
	}
	var tp onnxpb.TensorProto
	if err := proto.Unmarshal(data, &tp); err != nil {
		return nil, err
	}
	t, err := tensorFromProto(&tp)
	if err != nil {
		return nil, err
	}
	return graphTensor(t)
}

// runDataSet feeds input_N.pb to the compiled model and compares its results
// with output_N.pb; it returns "" when everything matches.
func runDataSet(l *loaded, set string, bound map[int]bool) string {
	all, err := readTensorProtos(set, "input", len(l.inputs)+len(bound))
	if err != nil {
		return err.Error()
	}
	var ins []*rt.Tensor
	for i, in := range all {
		if !bound[i] {
			ins = append(ins, in)
			continue
		}
		want, err := boundValue(filepath.Dir(set), i)
		got, gerr := graphTensor(in)
		if err != nil || gerr != nil || !got.Type.Equal(want.Type) || !slices.Equal(got.Data, want.Data) {
			return fmt.Sprintf("input_%d.pb differs from test_data_set_0's, to which it was bound", i)
		}
	}
	wants, err := readTensorProtos(set, "output", len(l.outputs))
	if err != nil {
		return err.Error()
	}
	for i := range ins {
		ins[i] = bf16Bits(ins[i], l.inputs[i])
	}
	for i := range wants {
		wants[i] = bf16Bits(wants[i], l.outputs[i])
	}
	for i, in := range ins {
		if !sameSpec(in.Spec(), l.inputs[i]) {
			return fmt.Sprintf("input_%d.pb holds %s, but the compiled model takes %s", i, in, l.inputs[i])
		}
	}
	outs, err := l.newOutputs()
	if err != nil {
		return err.Error()
	}
	if err := l.entry.Call(ins, outs); err != nil {
		return "run: " + err.Error()
	}
	for i, want := range wants {
		if msg := compareTensors(outs[i], want); msg != "" {
			return fmt.Sprintf("output %d: %s", i, msg)
		}
	}
	return ""
}

// bf16Bits reads a UINT16 tensor as bfloat16 bits where the model's
// tensor is bf16: NumPy has no bfloat16, so ONNX's test data hold bfloat16
// values as their 16 bits in UINT16 tensors.
func bf16Bits(t *rt.Tensor, spec rt.TensorSpec) *rt.Tensor {
	if spec.DType != rt.BFloat16 || t.DType() != rt.Uint16 || !sameSpec(rt.TensorSpec{DType: rt.BFloat16, Shape: t.Shape()}, spec) {
		return t
	}
	b, err := rt.FromBytes(rt.BFloat16, t.Shape(), t.Bytes())
	if err != nil {
		return t
	}
	return b
}

// readTensorProtos reads PREFIX_0.pb ... PREFIX_{n-1}.pb and checks that
// there are exactly n of them.
func readTensorProtos(set, prefix string, n int) ([]*rt.Tensor, error) {
	files, _ := filepath.Glob(filepath.Join(set, prefix+"_*.pb"))
	if len(files) != n {
		return nil, fmt.Errorf("%d %s_N.pb files, but the compiled model has %d %ss", len(files), prefix, n, prefix)
	}
	ts := make([]*rt.Tensor, n)
	for i := range ts {
		data, err := os.ReadFile(filepath.Join(set, fmt.Sprintf("%s_%d.pb", prefix, i)))
		if err != nil {
			return nil, err
		}
		var tp onnxpb.TensorProto
		if err := proto.Unmarshal(data, &tp); err != nil {
			return nil, fmt.Errorf("%s_%d.pb: %v", prefix, i, err)
		}
		if ts[i], err = tensorFromProto(&tp); err != nil {
			return nil, fmt.Errorf("%s_%d.pb: %v", prefix, i, err)
		}
	}
	return ts, nil
}

// tensorFromProto decodes an ONNX TensorProto (raw_data or the typed data
// fields, little-endian) into a runtime tensor.
func tensorFromProto(tp *onnxpb.TensorProto) (*rt.Tensor, error) {
	shape := tp.GetDims()
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return nil, fmt.Errorf("negative dimension %d", d)
		}
		n *= d
	}
	var dt rt.DType
	switch onnxpb.TensorProto_DataType(tp.GetDataType()) {
	case onnxpb.TensorProto_FLOAT:
		dt = rt.Float32
	case onnxpb.TensorProto_DOUBLE:
		dt = rt.Float64
	case onnxpb.TensorProto_INT8:
		dt = rt.Int8
	case onnxpb.TensorProto_INT16:
		dt = rt.Int16
	case onnxpb.TensorProto_INT32:
		dt = rt.Int32
	case onnxpb.TensorProto_INT64:
		dt = rt.Int64
	case onnxpb.TensorProto_UINT8:
		dt = rt.Uint8
	case onnxpb.TensorProto_UINT16:
		dt = rt.Uint16
	case onnxpb.TensorProto_UINT32:
		dt = rt.Uint32
	case onnxpb.TensorProto_UINT64:
		dt = rt.Uint64
	case onnxpb.TensorProto_BOOL:
		dt = rt.Bool
	case onnxpb.TensorProto_FLOAT16:
		dt = rt.Float16
	case onnxpb.TensorProto_BFLOAT16:
		dt = rt.BFloat16
	default:
		return nil, fmt.Errorf("TensorProto data type %s is not supported by the harness", onnxpb.TensorProto_DataType(tp.GetDataType()))
	}
	if tp.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
		return nil, fmt.Errorf("external tensor data is not supported by the harness")
	}
	size := dt.Size()
	buf := make([]byte, int(n)*size)
	if raw := tp.GetRawData(); raw != nil || n == 0 {
		if len(raw) != len(buf) {
			return nil, fmt.Errorf("raw_data has %d bytes, want %d for %d elements of %s", len(raw), len(buf), n, dt)
		}
		copy(buf, raw)
		return rt.FromBytes(dt, shape, buf)
	}
	count := 0
	put := func(i int, bits uint64) {
		switch size {
		case 1:
			buf[i] = byte(bits)
		case 2:
			binary.LittleEndian.PutUint16(buf[2*i:], uint16(bits))
		case 4:
			binary.LittleEndian.PutUint32(buf[4*i:], uint32(bits))
		case 8:
			binary.LittleEndian.PutUint64(buf[8*i:], bits)
		}
	}
	switch dt {
	case rt.Float32:
		count = len(tp.GetFloatData())
		for i, v := range tp.GetFloatData() {
			if i < int(n) {
				put(i, uint64(math.Float32bits(v)))
			}
		}
	case rt.Float64:
		count = len(tp.GetDoubleData())
		for i, v := range tp.GetDoubleData() {
			if i < int(n) {
				put(i, math.Float64bits(v))
			}
		}
	case rt.Int64:
		count = len(tp.GetInt64Data())
		for i, v := range tp.GetInt64Data() {
			if i < int(n) {
				put(i, uint64(v))
			}
		}
	case rt.Uint32, rt.Uint64:
		count = len(tp.GetUint64Data())
		for i, v := range tp.GetUint64Data() {
			if i < int(n) {
				put(i, v)
			}
		}
	default: // int8/16/32, uint8/16, bool and the bits of float16/bfloat16 live in int32_data
		count = len(tp.GetInt32Data())
		for i, v := range tp.GetInt32Data() {
			if i < int(n) {
				put(i, uint64(int64(v)))
			}
		}
	}
	if count != int(n) {
		return nil, fmt.Errorf("%d data values for %d elements of %s", count, n, dt)
	}
	return rt.FromBytes(dt, shape, buf)
}

// compareTensors checks got against want: same dtype and shape; floats
// within atol + rtol·|want| with NaN where want has NaN and infinities
// equal; integers and booleans exactly. It returns "" on a match.
func compareTensors(got, want *rt.Tensor) string {
	if !sameSpec(got.Spec(), want.Spec()) {
		return fmt.Sprintf("got %s, want %s", got, want)
	}
	switch got.DType() {
	case rt.Float32, rt.Float64, rt.Float16, rt.BFloat16:
		g, _ := asFloat64(got)
		w, _ := asFloat64(want)
		bad, worst := 0, -1
		for i := range w {
			if !closeEnough(g[i], w[i]) {
				if worst < 0 {
					worst = i
				}
				bad++
			}
		}
		if bad > 0 {
			return fmt.Sprintf("%d of %d elements differ (rtol %g, atol %g); first at flat index %d: got %g, want %g",
				bad, len(w), conformanceRtol, conformanceAtol, worst, g[worst], w[worst])
		}
	default:
		gb, wb := got.Bytes(), want.Bytes()
		size := got.DType().Size()
		for i := 0; i < len(wb); i += size {
			if string(gb[i:i+size]) != string(wb[i:i+size]) {
				return fmt.Sprintf("%s element %d differs: got %s, want %s", got.DType(), i/size, elemString(got, i/size), elemString(want, i/size))
			}
		}
	}
	return ""
}

func closeEnough(g, w float64) bool {
	switch {
	case math.IsNaN(w) || math.IsNaN(g):
		return math.IsNaN(w) && math.IsNaN(g)
	case g == w:
		return true
	case math.IsInf(w, 0) || math.IsInf(g, 0):
		return false
	}
	return math.Abs(g-w) <= conformanceAtol+conformanceRtol*math.Abs(w)
}

// elemString formats element i of an integer or boolean tensor.
func elemString(t *rt.Tensor, i int) string {
	b := t.Bytes()
	switch t.DType() {
	case rt.Bool:
		return fmt.Sprint(b[i] != 0)
	case rt.Int8:
		return fmt.Sprint(int8(b[i]))
	case rt.Uint8:
		return fmt.Sprint(b[i])
	case rt.Int16:
		return fmt.Sprint(int16(binary.LittleEndian.Uint16(b[2*i:])))
	case rt.Uint16:
		return fmt.Sprint(binary.LittleEndian.Uint16(b[2*i:]))
	case rt.Int32:
		return fmt.Sprint(int32(binary.LittleEndian.Uint32(b[4*i:])))
	case rt.Uint32:
		return fmt.Sprint(binary.LittleEndian.Uint32(b[4*i:]))
	case rt.Int64:
		return fmt.Sprint(int64(binary.LittleEndian.Uint64(b[8*i:])))
	case rt.Uint64:
		return fmt.Sprint(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return "?"
}

// importMessage is the first line of an import error without its
// "file:line:col: error: " prefix (the file is the test's model.onnx).
func importMessage(err error) string {
	s := firstLine(err.Error())
	if i := strings.Index(s, "error: "); i >= 0 {
		s = s[i+len("error: "):]
	}
	return s
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// opCounts are the per-op totals of a conformance run.
type opCounts struct{ total, passed, excluded, unsupported, failed int }

type conformanceSummary struct {
	passed, excluded, unsupported, failed int
	ops                                   map[string]*opCounts
}

func summarize(results []conformanceResult) conformanceSummary {
	s := conformanceSummary{ops: map[string]*opCounts{}}
	for _, r := range results {
		c := s.ops[r.op]
		if c == nil {
			c = &opCounts{}
			s.ops[r.op] = c
		}
		c.total++
		switch r.status {
		case statusPassed:
			s.passed++
			c.passed++
		case statusExcluded:
			s.excluded++
			c.excluded++
		case statusUnsupported:
			s.unsupported++
			c.unsupported++
		case statusFailed:
			s.failed++
			c.failed++
		}
	}
	return s
}

func (s conformanceSummary) opNames() []string {
	names := make([]string, 0, len(s.ops))
	for op := range s.ops {
		names = append(names, op)
	}
	sort.Strings(names)
	return names
}

// conformanceMarkdown renders docs/onnx-conformance.md.
func conformanceMarkdown(results []conformanceResult, s conformanceSummary) string {
	var b strings.Builder
	b.WriteString("# ONNX conformance\n\n")
	b.WriteString("Generated by `TestONNXConformance` (cmd/tessera/conformance_test.go); do not edit by hand. Regenerate with\n\n")
	b.WriteString("```sh\ngo test ./cmd/tessera -run TestONNXConformance -args -conformance-table=../../docs/onnx-conformance.md\n```\n\n")
	fmt.Fprintf(&b, "The ONNX backend node tests of Debian's `libonnx-testdata` (%s, one folder per test). ", onnxNodeTests)
	b.WriteString("Each test is imported with `onnx.ImportBytesWith`. Tessera compiles static shapes, so a graph input the importer needs as a constant (Reshape's shape, Resize's scales or sizes, TopK's K, ...) is bound to its value in `test_data_set_0`, as a user does with `tessera import --bind-input NAME=FILE.npy`; every data set must hold that same value. A test whose import reports something unsupported is counted as *unsupported*. ")
	b.WriteString("Every other test is compiled for this CPU (the `tessera run` pipeline) and run on each of its data sets. ")
	fmt.Fprintf(&b, "Float outputs must satisfy |got − want| ≤ %g + %g·|want| elementwise, with NaN where the reference has NaN. Integer and boolean outputs must match exactly. ", conformanceAtol, conformanceRtol)
	b.WriteString("A test that imports but does not pass fails `go test` unless it is in the exclusion list of `conformance_test.go`, which gives the reason for each test.\n\n")
	fmt.Fprintf(&b, "**%d of %d node tests pass**: %d excluded, %d unsupported", s.passed, len(results), s.excluded, s.unsupported)
	if s.failed > 0 {
		fmt.Fprintf(&b, ", %d failed", s.failed)
	}
	b.WriteString(".\n\n")
	b.WriteString("| op | passed / total | excluded | unsupported |\n|---|---|---|---|\n")
	for _, op := range s.opNames() {
		c := s.ops[op]
		fmt.Fprintf(&b, "| %s | %d / %d | %d | %d |\n", op, c.passed, c.total, c.excluded, c.unsupported)
	}
	b.WriteString("\n## Excluded tests\n\n")
	n := 0
	for _, r := range results {
		if r.status == statusExcluded {
			fmt.Fprintf(&b, "- `%s` (%s): %s\n", r.name, r.op, conformanceExclusions[r.name])
			n++
		}
	}
	if n == 0 {
		b.WriteString("None.\n")
	}
	b.WriteString("\n## Unsupported tests\n\nThe importer's message, for each test.\n\n")
	n = 0
	for _, r := range results {
		if r.status == statusUnsupported {
			fmt.Fprintf(&b, "- `%s` (%s): %s\n", r.name, r.op, strings.ReplaceAll(r.reason, "|", "\\|"))
			n++
		}
	}
	if n == 0 {
		b.WriteString("None.\n")
	}
	if s.failed > 0 {
		b.WriteString("\n## Failed tests\n\n")
		for _, r := range results {
			if r.status == statusFailed {
				fmt.Fprintf(&b, "- `%s` (%s): %s\n", r.name, r.op, r.reason)
			}
		}
	}
	return b.String()
}

// TestConformanceHarness checks the harness itself: the TensorProto decoder
// (raw_data and typed fields agree) and the comparison (what it accepts and
// what it rejects), so a conformance pass means what it says.
func TestConformanceHarness(t *testing.T) {
	raw := make([]byte, 12)
	for i, v := range []float32{1.5, -2, 3.25} {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	fromRaw, err := tensorFromProto(&onnxpb.TensorProto{Dims: []int64{3}, DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), RawData: raw})
	require.NoError(t, err)
	fromFloats, err := tensorFromProto(&onnxpb.TensorProto{Dims: []int64{3}, DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), FloatData: []float32{1.5, -2, 3.25}})
	require.NoError(t, err)
	require.Equal(t, fromRaw.Bytes(), fromFloats.Bytes())
	require.Equal(t, "", compareTensors(fromRaw, fromFloats))
	_, err = tensorFromProto(&onnxpb.TensorProto{Dims: []int64{4}, DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), FloatData: []float32{1, 2, 3}})
	require.ErrorContains(t, err, "3 data values for 4 elements")
	bools, err := tensorFromProto(&onnxpb.TensorProto{Dims: []int64{2}, DataType: proto.Int32(int32(onnxpb.TensorProto_BOOL)), Int32Data: []int32{1, 0}})
	require.NoError(t, err)
	require.Equal(t, []byte{1, 0}, bools.Bytes())

	f32 := func(v ...float32) *rt.Tensor {
		x, err := rt.FromSlice([]int64{int64(len(v))}, v)
		require.NoError(t, err)
		return x
	}
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	require.Equal(t, "", compareTensors(f32(1000.9, 0, nan, inf), f32(1000, 0.000009, nan, inf)))
	require.Contains(t, compareTensors(f32(1001.1), f32(1000)), "1 of 1 elements differ")
	require.Contains(t, compareTensors(f32(0.00002), f32(0)), "differ")
	require.Contains(t, compareTensors(f32(1), f32(nan)), "differ")
	require.Contains(t, compareTensors(f32(nan), f32(1)), "differ")
	require.Contains(t, compareTensors(f32(3e38), f32(inf)), "differ")
	require.Contains(t, compareTensors(f32(1, 2), f32(1)), "got tensor<2xf32>, want tensor<1xf32>")
	i64 := func(v ...int64) *rt.Tensor {
		x, err := rt.FromSlice([]int64{int64(len(v))}, v)
		require.NoError(t, err)
		return x
	}
	require.Equal(t, "", compareTensors(i64(-3, 7), i64(-3, 7)))
	require.Equal(t, "i64 element 1 differs: got 8, want 7", compareTensors(i64(-3, 8), i64(-3, 7)))

	require.True(t, isUnsupported(errors.New("x.onnx:1:1: error: node #0 (Foo, opset 13): unsupported op 'Foo'")))
	require.True(t, isUnsupported(errors.New("x.onnx: error: the model imports no default-domain (ai.onnx) operator set; only ai.onnx is supported")))
	require.False(t, isUnsupported(errors.New("x.onnx:1:1: error: 'graph.pow' op operand #1 has element type i64, but operand #0 has f32")))
}

// The README's conformance section lies between these markers; the
// -conformance-table run rewrites it.
const (
	readmeConformanceBegin = "<!-- onnx-conformance:begin (generated by TestONNXConformance) -->"
	readmeConformanceEnd   = "<!-- onnx-conformance:end -->"
)

// updateReadmeConformance replaces the README's conformance section with
// the totals and, for every op with a supported test, passed / total.
func updateReadmeConformance(path string, s conformanceSummary) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	text := string(data)
	i, j := strings.Index(text, readmeConformanceBegin), strings.Index(text, readmeConformanceEnd)
	if i < 0 || j < i {
		return fmt.Errorf("%s has no %q … %q section", path, readmeConformanceBegin, readmeConformanceEnd)
	}
	var b strings.Builder
	b.WriteString(readmeConformanceBegin + "\n\n")
	fmt.Fprintf(&b, "**%d of %d** ONNX node tests pass (%d excluded, %d unsupported: an op, dtype, opset or dynamic input Tessera does not handle yet; the reason for each is in [docs/onnx-conformance.md](docs/onnx-conformance.md)).\n\n", s.passed, s.passed+s.excluded+s.unsupported+s.failed, s.excluded, s.unsupported)
	b.WriteString("| op | passed / total | excluded |\n|---|---|---|\n")
	for _, op := range s.opNames() {
		c := s.ops[op]
		if c.passed+c.excluded+c.failed == 0 {
			continue
		}
		fmt.Fprintf(&b, "| %s | %d / %d | %d |\n", op, c.passed, c.total, c.excluded)
	}
	b.WriteString("\n")
	text = text[:i] + b.String() + text[j:]
	return os.WriteFile(path, []byte(text), 0o644)
}
