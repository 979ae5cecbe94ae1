package onnx

import (
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"google.golang.org/protobuf/proto"

	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/dialects/graph/onnx/onnxpb"
	"github.com/tessera-ml/tessera/graphir"
)

// Accepted versions of the default ONNX operator set ("" or "ai.onnx"):
// MinOpset to MaxOpset for every supported op; MinLegacyOpset to MinOpset
// − 1 for the ops whose definition there is their opset-7 one (legacy.go).
const (
	MinLegacyOpset = 1
	MinOpset       = 7
	MaxOpset       = 17
)

// Import reads the ONNX model at path and translates it to a graph-dialect
// module with one function @main. Locations and diagnostics name the file
// by path, as given.
func Import(path string) (*graphir.Module, error) {
	return ImportWith(path, Options{})
}

// Options adjust an import.
type Options struct {
	// Bind gives graph inputs constant values: each named input becomes a
	// constant of that value (its type must be the input's declared type)
	// and leaves the function's arguments. Inputs that decide shapes —
	// Reshape's shape, Resize's scales or sizes, TopK's K — must be
	// constants, since Tessera compiles static shapes; binding them is how
	// a model that takes them as inputs is imported.
	Bind map[string]*graphir.Tensor
	// FixDims pins symbolic dimensions: every input dimension whose
	// dim_param is a key takes that value, so a model exported with
	// dynamic axes (a symbolic batch, a sequence length) imports with
	// static shapes. A key that no input dimension names is an error.
	FixDims map[string]int64
	// InputShapes, when set, gives the shapes of the values the model will
	// run on, one per graph input that is not an initializer, in order
	// (InputNames names them in diagnostics): a symbolic dimension that
	// FixDims leaves free takes its size from them. Two inputs that give
	// one symbol different sizes are an error naming the symbol and both
	// inputs. An input whose rank differs is skipped (the caller's own
	// shape check reports it).
	InputShapes [][]int64
	InputNames  []string
	// KeepQDQ keeps a DequantizeLinear of constants (a quantized model's
	// int8 weights and int32 biases) as a graph.dequantize_linear op, the
	// form the fold-qdq pass turns into integer kernels, instead of
	// folding it into a float constant at import.
	KeepQDQ bool
}

// ImportWith is Import with options.
func ImportWith(path string, opts Options) (*graphir.Module, error) {
	data, unmap, err := mapFile(path)
	if err != nil {
		return nil, graphir.Errorf(graphir.Location{File: path}, "cannot read model: %v", err)
	}
	defer unmap()
	return ImportBytesWith(path, data, opts)
}

// mapFile maps the file at path read-only (or reads it, when it cannot be
// mapped: a pipe, an empty file) and returns its bytes and the function
// that releases them. The message decoded from the bytes copies what it
// keeps, so a model's file is not held in memory beside its weights after
// the import: unmapping returns its pages at once, where a read buffer
// would wait for the garbage collector.
func mapFile(path string) ([]byte, func(), error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err == nil && st.Mode().IsRegular() && st.Size() > 0 && st.Size() == int64(int(st.Size())) {
		if data, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_PRIVATE); err == nil {
			return data, func() { _ = syscall.Munmap(data) }, nil
		}
	}
	data, err := io.ReadAll(f)
	return data, func() {}, err
}

// ImportBytes translates a serialized ModelProto; name is the file name
// used in locations and diagnostics.
func ImportBytes(name string, data []byte) (*graphir.Module, error) {
	return ImportBytesWith(name, data, Options{})
}

// ImportBytesWith is ImportBytes with options. Errors: besides those of
// ImportBytes, a bound name that is no graph input or a bound value whose
// type differs from the input's.
func ImportBytesWith(name string, data []byte, opts Options) (*graphir.Module, error) {
	fileLoc := graphir.Location{File: name}
	var m onnxpb.ModelProto
	if err := proto.Unmarshal(data, &m); err != nil {
		// protobuf-go randomizes the space after "proto:" (U+0020 or
		// U+00A0) so that callers do not depend on its wording; print a
		// stable message.
		return nil, graphir.Errorf(fileLoc, "not a valid ONNX model: %s", strings.ReplaceAll(err.Error(), "\u00a0", " "))
	}
	if m.GetIrVersion() <= 0 {
		return nil, graphir.Errorf(fileLoc, "not a valid ONNX model: no ir_version")
	}
	if m.GetGraph() == nil {
		return nil, graphir.Errorf(fileLoc, "not a valid ONNX model: no graph")
	}
	opset, err := defaultOpset(&m)
	if err != nil {
		return nil, graphir.Errorf(fileLoc, "%v", err)
	}
	im := &importer{file: name, opset: opset, values: map[string]*value{}, bind: opts.Bind, fix: opts.FixDims, fixed: map[string]bool{}, shapes: opts.InputShapes, shapeNames: opts.InputNames, keepQDQ: opts.KeepQDQ, fromInput: map[string]symbolSource{}, argNames: map[*graphir.Value]string{}}
	return im.graph(m.GetGraph())
}

// defaultOpset returns the version of the default-domain operator set.
func defaultOpset(m *onnxpb.ModelProto) (int64, error) {
	version := int64(-1)
	for _, o := range m.GetOpsetImport() {
		switch o.GetDomain() {
		case "", "ai.onnx":
			version = o.GetVersion()
		}
	}
	if version < 0 {
		if len(m.GetOpsetImport()) == 0 {
			return 0, fmt.Errorf("not a valid ONNX model: no opset_import")
		}
		return 0, fmt.Errorf("unsupported: the model imports no default-domain (ai.onnx) operator set; only ai.onnx is supported")
	}
	if version < MinLegacyOpset || version > MaxOpset {
		return 0, fmt.Errorf("unsupported opset %d: Tessera imports ai.onnx opsets %d to %d (below %d, only the ops unchanged since)", version, MinLegacyOpset, MaxOpset, MinOpset)
	}
	return version, nil
}

// value is an ONNX tensor during import: a graph value, a compile-time
// constant, or both (a constant that has been materialized).
type value struct {
	v *graphir.Value
	c *graphir.Tensor
	// raw is a float initializer's data as its raw_data bytes; c is
	// materialized from it only when an op folds the constant at import
	// time (a reshape of a shape tensor), so weights feeding convolutions
	// and matrix products are never widened to float64.
	raw *graphir.DenseElementsAttr
	// loc is where a constant was produced, for its graph.constant op.
	loc graphir.Location
	// sym, when set, is a shape value over symbolic dimensions (an i64
	// vector, or a scalar when symScalar) known only as its elements'
	// expressions; it has no graph value (symvalue.go).
	sym       []*graphir.SymExpr
	symScalar bool
}

func (x *value) typ() *graphir.TensorType {
	switch {
	case x.sym != nil && x.symScalar:
		return graphir.NewTensor(graphir.I64)
	case x.sym != nil:
		return graphir.NewTensor(graphir.I64, int64(len(x.sym)))
	case x.c != nil:
		return x.c.Type
	case x.raw != nil:
		return x.raw.Type
	}
	return graphir.AsTensor(x.v.Type)
}

// isConst reports whether x is a compile-time constant.
func (x *value) isConst() bool { return x.c != nil || x.raw != nil }

// tensor returns constant x's elements as a reference tensor,
// materializing (once) those of a raw initializer; nil when x is not
// constant.
func (x *value) tensor() *graphir.Tensor {
	if x.c == nil && x.raw != nil {
		x.c, _ = graphir.TensorFromDense(x.raw) // never elided: fails only on elided data
	}
	return x.c
}

// dense is constant x's value attribute: the raw initializer's own, or
// the tensor's data shared with it.
func (x *value) dense() *graphir.DenseElementsAttr {
	if x.raw != nil {
		return x.raw
	}
	return x.c.SharedDense()
}

func constValue(t *graphir.Tensor, loc graphir.Location) *value { return &value{c: t, loc: loc} }

// importer holds the state of one model translation.
type importer struct {
	file   string
	opset  int64
	fn     *graphir.Func
	values map[string]*value
	bind   map[string]*graphir.Tensor
	// fix pins symbolic dimensions (Options.FixDims); fixed records the
	// ones an input used.
	fix   map[string]int64
	fixed map[string]bool
	// keepQDQ is Options.KeepQDQ.
	keepQDQ bool
	// shapes and shapeNames are Options.InputShapes and InputNames;
	// fromInput records which input dimension bound a symbol; curInput is
	// the position among the function's arguments of the graph input
	// being read (−1 for one bound to a constant).
	shapes     [][]int64
	shapeNames []string
	fromInput  map[string]symbolSource
	curInput   int
	// argNames names the graph input of each function argument.
	argNames map[*graphir.Value]string
}

func (im *importer) graph(g *onnxpb.GraphProto) (*graphir.Module, error) {
	fileLoc := graphir.Location{File: im.file}
	inits := map[string]bool{}
	decoded, err := decodeAll(g.GetInitializer(), fileLoc)
	if err != nil {
		return nil, graphir.Errorf(fileLoc, "initializer: %v", err)
	}
	for i, tp := range g.GetInitializer() {
		inits[tp.GetName()] = true
		im.values[tp.GetName()] = decoded[i]
	}
	if len(g.GetSparseInitializer()) > 0 {
		return nil, graphir.Errorf(fileLoc, "sparse initializers are not supported")
	}
	argTypes, argNames, err := im.inputs(g, inits)
	if err != nil {
		return nil, err
	}
	ft := &graphir.FunctionType{Inputs: argTypes}
	im.fn = graphir.NewFunc("main", ft, graphir.Location{File: im.file, Line: 1, Col: 1})
	for i, n := range argNames {
		im.values[n] = &value{v: im.fn.Args()[i]}
		im.argNames[im.fn.Args()[i]] = n
	}
	if err := im.unsupported(g.GetNode()); err != nil {
		return nil, err
	}
	for i, np := range g.GetNode() {
		if err := im.node(i, np); err != nil {
			return nil, err
		}
	}
	if len(g.GetOutput()) == 0 {
		return nil, graphir.Errorf(fileLoc, "the graph has no outputs")
	}
	var results []*graphir.Value
	retLoc := graphir.Location{File: im.file, Line: len(g.GetNode()) + 1, Col: 1}
	for _, out := range g.GetOutput() {
		x, ok := im.values[out.GetName()]
		if !ok {
			return nil, graphir.Errorf(fileLoc, "graph output '%s' is not produced by any node", out.GetName())
		}
		if x.sym != nil {
			return nil, graphir.Errorf(fileLoc, "%v", errSymOutput(out.GetName(), x))
		}
		if err := checkOutputType(out, x.typ()); err != nil {
			return nil, graphir.Errorf(fileLoc, "%v", err)
		}
		results = append(results, im.materialize(x, retLoc))
	}
	ret := graphir.NewOp(graphir.ReturnOpName, results, nil, nil, retLoc)
	im.fn.Entry().Append(ret)
	for _, r := range results {
		ft.Results = append(ft.Results, r.Type)
	}
	mod := &graphir.Module{}
	mod.AddFunc(im.fn)
	if err := graphir.Verify(mod); err != nil {
		return nil, err
	}
	return mod, nil
}

// inputs returns the types and names of the graph inputs that become
// function arguments: not initializers, not bound (bound ones become
// constants).
func (im *importer) inputs(g *onnxpb.GraphProto, inits map[string]bool) ([]graphir.Type, []string, error) {
	fileLoc := graphir.Location{File: im.file}
	var types []graphir.Type
	var names []string
	seen := map[string]bool{}
	for _, in := range g.GetInput() {
		if inits[in.GetName()] {
			continue // an initializer listed as input: a constant
		}
		seen[in.GetName()] = true
		im.curInput = -1 // a bound input takes no shape from InputShapes
		if _, bound := im.bind[in.GetName()]; !bound {
			im.curInput = len(names)
		}
		t, err := im.inputType(in)
		if b, ok := im.bind[in.GetName()]; ok {
			if err == nil && !b.Type.Equal(t) {
				err = fmt.Errorf("bound value of input '%s' is %s, but the input is %s", in.GetName(), b.Type, t)
			}
			if err != nil {
				return nil, nil, graphir.Errorf(fileLoc, "%v", err)
			}
			im.values[in.GetName()] = constValue(b, fileLoc)
			continue
		}
		if err != nil {
			return nil, nil, graphir.Errorf(fileLoc, "%v", err)
		}
		types = append(types, t)
		names = append(names, in.GetName())
	}
	for name := range im.bind {
		if !seen[name] {
			return nil, nil, graphir.Errorf(fileLoc, "cannot bind '%s': the model has no graph input of that name", name)
		}
	}
	if err := im.unusedFixes(g); err != nil {
		return nil, nil, graphir.Errorf(fileLoc, "%v", err)
	}
	return types, names, nil
}

// materialize returns x as a graph value, appending a graph.constant for a
// constant that has none yet.
func (im *importer) materialize(x *value, loc graphir.Location) *graphir.Value {
	if x.v == nil {
		if x.loc.Known() {
			loc = x.loc
		}
		op := graphir.NewOp(graph.ConstantOp, nil, []graphir.Type{x.typ()}, graphir.DictAttr{}.Set("value", x.dense()), loc)
		im.fn.Entry().Append(op)
		x.v = op.Result(0)
	}
	return x.v
}

// unsupportedHint points users at the list of what is supported.
const unsupportedHint = "(the supported ops are listed in the README's \"Importing ONNX models\" section)"

// unsupported reports every node whose op or domain the importer does not
// handle, one diagnostic each, before any is translated: a model with
// three unsupported ops says so once, not one op per attempt.
func (im *importer) unsupported(nodes []*onnxpb.NodeProto) error {
	var ds graphir.Diagnostics
	for i, np := range nodes {
		n := &node{im: im, p: np, idx: i, loc: graphir.Location{File: im.file, Line: i + 1, Col: 1}, opset: im.opset}
		var err error
		if d := np.GetDomain(); d != "" && d != "ai.onnx" {
			err = n.errorf("unsupported operator domain '%s'; only the default ONNX domain (ai.onnx) is supported", d)
		} else if _, ok := converters[np.GetOpType()]; !ok && graph.ONNXOp(np.GetOpType()) == nil {
			err = n.errorf("unsupported op '%s' %s", np.GetOpType(), unsupportedHint)
		} else if why := legacyRefusal(np.GetOpType(), im.opset); why != "" {
			err = n.errorf("%s", why)
		}
		if err != nil {
			ds = append(ds, graphir.AsDiagnostics(err)...)
		}
	}
	if len(ds) == 1 {
		return ds[0]
	}
	return ds.Err()
}

// node translates one NodeProto. Shape arithmetic over symbols that
// overflows is an error at the node.
func (im *importer) node(idx int, np *onnxpb.NodeProto) (err error) {
	n := &node{im: im, p: np, idx: idx, loc: graphir.Location{File: im.file, Line: idx + 1, Col: 1}, opset: im.opset}
	var overflow error
	defer func() {
		if overflow != nil {
			err = n.errorf("%v", overflow)
		}
	}()
	defer graphir.CatchOverflow(&overflow, func() string { return "its shape arithmetic" })
	if d := np.GetDomain(); d != "" && d != "ai.onnx" {
		return n.errorf("unsupported operator domain '%s'; only the default ONNX domain (ai.onnx) is supported", d)
	}
	for _, name := range np.GetInput() {
		if name == "" {
			n.ins = append(n.ins, nil)
			continue
		}
		x, ok := im.values[name]
		if !ok {
			return n.errorf("input '%s' is not defined before this node", name)
		}
		n.ins = append(n.ins, x)
	}
	conv, ok := converters[np.GetOpType()]
	if def := graph.ONNXOp(np.GetOpType()); !ok && def != nil {
		conv, ok = func(n *node) ([]*value, error) { return convertDirect(n, def) }, true
	}
	if !ok {
		return n.errorf("unsupported op '%s' %s", np.GetOpType(), unsupportedHint)
	}
	var outs []*value
	switch _, custom := converters[np.GetOpType()]; {
	case n.hasSymInput():
		outs, err = n.foldSymbolic()
	case custom && !symbolicConverters[np.GetOpType()]:
		if err = n.staticInputs(); err == nil {
			outs, err = conv(n)
		}
	default:
		outs, err = conv(n)
	}
	if err != nil {
		return err
	}
	if len(outs) < len(np.GetOutput()) {
		// Optional trailing outputs (Dropout's mask, BatchNormalization's
		// training statistics) are only accepted when nothing uses them.
		for _, name := range np.GetOutput()[len(outs):] {
			if name != "" {
				return n.errorf("output '%s' is not supported (only the first %d outputs)", name, len(outs))
			}
		}
	}
	for i, name := range np.GetOutput() {
		if name == "" || i >= len(outs) {
			continue
		}
		im.values[name] = outs[i]
	}
	return nil
}
