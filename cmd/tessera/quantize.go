package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
	rt "github.com/tessera-ml/tessera/runtime"
)

type quantizeOptions struct {
	calibrate  []string
	method     string
	percentile float64
	output     string
	fixDims    []string
	// on is where the calibration batches run: "cpu" (compiled) or
	// "interpreter".
	on string
	// integer folds the QDQ contractions into integer kernels (fold-qdq).
	integer bool
	// reduceRange quantizes activations to 7 bits (PyTorch's reduce_range).
	reduceRange bool
}

func newQuantizeCmd(stdout, stderr io.Writer) *cobra.Command {
	var o quantizeOptions
	cmd := &cobra.Command{
		Use:   "quantize MODEL --calibrate X.npy [--calibrate ...] [-o OUT.mlir]",
		Short: "post-training static quantization: write the model in QDQ form with calibrated int8 ranges",
		Long: `quantize runs the f32 model on calibration batches — compiled for the
CPU with the activations as extra results (--calibrate-on cpu, the
default), or in the reference interpreter (--calibrate-on interpreter) —
collects the range of every activation that a convolution or
matrix product reads, and writes the model with those activations read
through graph.quantize_linear/graph.dequantize_linear pairs (ui8,
asymmetric, per tensor) and its constant weights as int8 constants
dequantized per output channel (symmetric), ONNX Runtime's default QDQ
scheme:

  tessera quantize examples/lenet5.mlir --calibrate calib.npy -o lenet5.int8.mlir
  tessera run lenet5.int8.mlir --input x.npy

Each --calibrate is one batch: a .npy of the model's input type, or
A.npy,B.npy for a model of several inputs. --method picks how a range is
read from the values seen: minmax (smallest to largest), percentile
(--percentile, default 99.99, of the values; clips outliers) or entropy
(TensorRT's KL-divergence threshold on |x|). Biases stay float.

--integer writes the quantized convolutions and matrix products whose
result is quantized again (by the next contraction's input, through relu,
clip, flatten or reshape) as integer kernels instead: i32 accumulation of
the 8-bit operands and graph.requantize (a fixed-point multiplier and
shift per output channel, the bias in the accumulator's scale; the
fold-qdq pass, which tessera compile --fold-qdq also runs on QDQ models).

--reduce-range: 7-bit activations ([0, 127], PyTorch fbgemm's
reduce_range): on AVX2 processors without VNNI the integer kernels then
use one vpmaddubsw per four products instead of an exact two-instruction
emulation; costs one bit of activation resolution. The quantize ops
carry max = 127, and so does every graph.requantize that --integer
writes; weights stay symmetric int8.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := runQuantize(args[0], o, stdout, stderr); err != nil {
				return fail(stderr, err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.calibrate, "calibrate", nil, "calibration batch: a .npy of the model's input (A.npy,B.npy for several inputs; repeatable)")
	f.StringVar(&o.method, "method", graph.CalibrateMinMax, "calibration method: "+strings.Join(graph.CalibrationMethods, ", "))
	f.Float64Var(&o.percentile, "percentile", 99.99, "percent of the values the percentile method keeps")
	f.StringVarP(&o.output, "output", "o", "", "output file (default stdout)")
	f.StringArrayVar(&o.fixDims, "fix-dim", nil, fixDimUsage)
	f.BoolVar(&o.reduceRange, "reduce-range", false, "quantize activations to 7 bits, [0, 127] (PyTorch fbgemm's reduce_range: AVX2's vpmaddubsw cannot saturate)")
	f.BoolVar(&o.integer, "integer", false, "write the quantized contractions as integer kernels (i32 convolutions and matrix products, graph.requantize; the fold-qdq pass) instead of QDQ form")
	f.StringVar(&o.on, "calibrate-on", "cpu", "where the calibration batches run: cpu (the model compiled, with the activations as extra results) or interpreter (the reference interpreter)")
	return cmd
}

func runQuantize(model string, o quantizeOptions, stdout, stderr io.Writer) error {
	if len(o.calibrate) == 0 {
		return fmt.Errorf("--calibrate: give at least one calibration batch (.npy of the model's input)")
	}
	first := strings.Split(o.calibrate[0], ",") // an ONNX model's free symbols take the first batch's sizes
	m, err := loadModelFor(model, o.fixDims, first, false)
	if err == nil {
		err = requireBound(m, "quantization")
	}
	if err != nil {
		return err
	}
	f := m.Lookup("main")
	batches, err := readCalibration(f, o.calibrate)
	if err != nil {
		return err
	}
	values := graph.QuantizedInputs(f)
	var eval graph.Evaluator
	switch o.on {
	case "interpreter":
		eval = graph.InterpreterEvaluator(f, values)
	case "cpu":
		probe, err := compiledEvaluator(model, o.fixDims, first, len(values))
		if err != nil {
			return fmt.Errorf("--calibrate-on cpu: %v", err)
		}
		defer probe.Close()
		eval = probe.eval
	default:
		return fmt.Errorf("--calibrate-on %q: expected cpu or interpreter", o.on)
	}
	bar := newCalibrationBar(stderr)
	ranges, err := graph.Calibrate(eval, batches, values, graph.CalibrateOptions{Method: o.method, Percentile: o.percentile, Progress: bar})
	if err != nil {
		return fmt.Errorf("calibration: %v", err)
	}
	if err := graph.QuantizeStatic(f, ranges, graph.QuantizeOptions{ReduceRange: o.reduceRange}); err != nil {
		return err
	}
	notes := ""
	if o.reduceRange {
		notes = "; 7-bit activations"
	}
	if o.integer {
		notes += fmt.Sprintf("; %d contractions and residual adds as integer kernels", graph.FoldQDQ(f))
	}
	if err := graphir.Verify(m); err != nil {
		return err
	}
	text := graphir.PrintWith(m, graphir.PrintOptions{DebugInfo: true, HexLargerThan: 1024})
	fmt.Fprintf(stderr, "quantized %d activations and their contractions' weights (%s calibration over %d batches on the %s%s)\n", len(values), o.method, len(batches), o.on, notes)
	if o.output == "" {
		_, err = io.WriteString(stdout, text)
		return err
	}
	return os.WriteFile(o.output, []byte(text), 0o644)
}

// readCalibration reads the --calibrate batches, checking each against
// f's inputs. Errors name the argument.
func readCalibration(f *graphir.Func, flags []string) ([][]*graphir.Tensor, error) {
	var batches [][]*graphir.Tensor
	for _, flag := range flags {
		var batch []*graphir.Tensor
		for _, path := range strings.Split(flag, ",") {
			t, err := rt.ReadNPY(path)
			if err != nil {
				return nil, fmt.Errorf("--calibrate %s: %v", flag, err)
			}
			g, err := graphTensor(t)
			if err != nil {
				return nil, fmt.Errorf("--calibrate %s: %v", path, err)
			}
			batch = append(batch, g)
		}
		if err := graph.CheckCalibrationBatch(f, batch); err != nil {
			return nil, fmt.Errorf("--calibrate %s: %v", flag, err)
		}
		batches = append(batches, batch)
	}
	return batches, nil
}

// newCalibrationBar is a progress bar over the calibration batches on a
// terminal, nothing otherwise.
func newCalibrationBar(w io.Writer) func(done, total int) {
	if f, ok := w.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	var bar *progressbar.ProgressBar
	return func(done, total int) {
		if bar == nil {
			bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription("calibrating"),
				progressbar.OptionShowCount(), progressbar.OptionSetElapsedTime(true), progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }))
		}
		_ = bar.Set(done)
	}
}

// calibrationProbe is the model compiled for the CPU with the activations
// being calibrated as one extra result, loaded into this process.
type calibrationProbe struct {
	l      *loaded
	file   string
	shapes []*graphir.TensorType // the calibrated values, flattened and concatenated in the last result
}

func (p *calibrationProbe) Close() {
	p.l.Close()
	os.Remove(p.file)
}

// compiledEvaluator compiles model (loaded again: the probe's @main also
// returns the n values graph.QuantizedInputs lists, flattened and
// concatenated in that order into one f32 vector, so that any number of
// them passes the entry point's argument limit) and loads it.
func compiledEvaluator(model string, fixDims, first []string, n int) (*calibrationProbe, error) {
	m, err := loadModelFor(model, fixDims, first, false)
	if err == nil {
		err = requireBound(m, "quantization")
	}
	if err != nil {
		return nil, err
	}
	f := m.Lookup("main")
	values := graph.QuantizedInputs(f)
	if len(values) != n {
		return nil, fmt.Errorf("the model's activations changed between two loads (%d, %d)", n, len(values))
	}
	if err := returnFlattened(f, values); err != nil {
		return nil, err
	}
	if err := graphir.Verify(m); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp("", "tessera-calibrate-*.mlir")
	if err != nil {
		return nil, err
	}
	p := &calibrationProbe{file: tmp.Name()}
	for _, v := range values {
		p.shapes = append(p.shapes, graphir.AsTensor(v.Type))
	}
	_, err = io.WriteString(tmp, graphir.PrintWith(m, graphir.PrintOptions{HexLargerThan: 1024}))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		p.l, err = loadCompiled(p.file, compileOptions{target: "cpu", mcpu: "native", log: io.Discard}, 0)
	}
	if err != nil {
		os.Remove(p.file)
		return nil, err
	}
	return p, nil
}

// eval runs one batch and returns the calibrated values (the results after
// the model's own).
func (p *calibrationProbe) eval(batch []*graphir.Tensor) ([]*graphir.Tensor, error) {
	ins := make([]*rt.Tensor, len(batch))
	for i, g := range batch {
		t, err := rt.NewTensor(p.l.inputs[i].DType, p.l.inputs[i].Shape)
		if err != nil {
			return nil, err
		}
		if err := t.SetFloat64Values(g.Data); err != nil {
			return nil, err
		}
		ins[i] = t
	}
	outs, err := p.l.newOutputs()
	if err != nil {
		return nil, err
	}
	if err := p.l.entry.Call(ins, outs); err != nil {
		return nil, err
	}
	flat, err := outs[len(outs)-1].Float32s()
	if err != nil {
		return nil, err
	}
	res := make([]*graphir.Tensor, len(p.shapes))
	for i, t := range p.shapes {
		n := int(t.NumElements())
		res[i] = &graphir.Tensor{Type: t, Data: make([]float64, n)}
		for k, x := range flat[:n] {
			res[i].Data[k] = float64(x)
		}
		flat = flat[n:]
	}
	return res, nil
}

// returnFlattened makes f also return values, each reshaped to 1-D, as one
// concatenated vector (the last result).
func returnFlattened(f *graphir.Func, values []*graphir.Value) error {
	ret := f.Entry().Last()
	var flats []*graphir.Value
	total := int64(0)
	for _, v := range values {
		n := graphir.AsTensor(v.Type).NumElements()
		op, err := graphir.Build(graph.ReshapeOp, []*graphir.Value{v}, graphir.DictAttr{}.Set("shape", graphir.I64Array(n)), ret.Loc)
		if err != nil {
			return err
		}
		f.Entry().InsertBefore(ret, op)
		flats = append(flats, op.Results[0])
		total += n
	}
	cat, err := graphir.Build(graph.ConcatOp, flats, graphir.DictAttr{}.Set("axis", graphir.IntAttr(0)), ret.Loc)
	if err != nil {
		return err
	}
	f.Entry().InsertBefore(ret, cat)
	ret.SetOperands(append(ret.Operands(), cat.Results[0]))
	f.Type.Results = append(f.Type.Results, cat.Results[0].Type)
	return nil
}
