package lowering

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/schedule"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// rnnCase is one recurrent layer: op on X [seq, batch, input] (layout 0)
// or [batch, seq, input] with the optional operands up to nOperands, as
// function arguments or (consts) graph.constant weights W, R, B.
type rnnCase struct {
	name                      string
	op                        string
	seq, batch, input, hidden int64
	nOperands                 int
	attrs                     graphir.DictAttr
	consts                    bool
}

func (c rnnCase) gates() int64 {
	return map[string]int64{graph.LSTMOp: 4, graph.GRUOp: 3, graph.RNNOp: 1}[c.op]
}

func (c rnnCase) operandShapes() [][]int64 {
	dirs := int64(1)
	if d, ok := c.attrs.Get("direction").(graphir.StringAttr); ok && d == "bidirectional" {
		dirs = 2
	}
	layout1 := c.attrs.Get("layout") != nil
	x, state := s(c.seq, c.batch, c.input), s(dirs, c.batch, c.hidden)
	if layout1 {
		x, state = s(c.batch, c.seq, c.input), s(c.batch, dirs, c.hidden)
	}
	n := c.gates() * c.hidden
	all := [][]int64{x, s(dirs, n, c.input), s(dirs, n, c.hidden), s(dirs, 2*n), state, state, s(dirs, 3*c.hidden)}
	return all[:c.nOperands]
}

// rnnModule builds @main(args...) { %r... = op(...); return %r... } and
// the arguments' values.
func rnnModule(t *testing.T, c rnnCase, seed int64) (*graphir.Module, []*graphir.Tensor) {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	shapes := c.operandShapes()
	var argTypes []graphir.Type
	var args, consts []*graphir.Tensor
	for i, sh := range shapes {
		v := randomTensor(rng, graphir.NewTensor(graphir.F32, sh...), -0.8, 0.8)
		if c.consts && i >= 1 && i <= 3 {
			consts = append(consts, v)
			continue
		}
		argTypes = append(argTypes, v.Type)
		args = append(args, v)
	}
	f := graphir.NewFunc("main", &graphir.FunctionType{Inputs: argTypes}, caseLoc)
	var operands []*graphir.Value
	ai, ci := 0, 0
	for i := range shapes {
		if c.consts && i >= 1 && i <= 3 {
			op := graphir.NewOp(graph.ConstantOp, nil, []graphir.Type{consts[ci].Type}, graphir.DictAttr{}.Set("value", consts[ci].ToDense()), caseLoc)
			f.Entry().Append(op)
			operands = append(operands, op.Results[0])
			ci++
			continue
		}
		operands = append(operands, f.Args()[ai])
		ai++
	}
	op, err := graphir.Build(c.op, operands, c.attrs, caseLoc)
	require.NoError(t, err, "building %s", c.name)
	f.Entry().Append(op)
	f.Entry().Append(graphir.NewOp(graphir.ReturnOpName, op.Results, nil, nil, caseLoc))
	for _, r := range op.Results {
		f.Type.Results = append(f.Type.Results, r.Type)
	}
	m := &graphir.Module{}
	m.AddFunc(f)
	require.NoError(t, graphir.Verify(m), "graph IR of %s", c.name)
	return m, args
}

func rnnCases() []rnnCase {
	var cs []rnnCase
	add := func(c rnnCase) {
		if c.seq == 0 {
			c.seq, c.batch, c.input, c.hidden = 4, 2, 3, 5
		}
		cs = append(cs, c)
	}
	acts := func(names ...string) graphir.ArrayAttr {
		out := graphir.ArrayAttr{}
		for _, n := range names {
			out = append(out, graphir.StringAttr(n))
		}
		return out
	}
	for _, op := range []string{graph.LSTMOp, graph.GRUOp, graph.RNNOp} {
		short := op[len("graph."):]
		full := 7
		if op != graph.LSTMOp {
			full = 5
		}
		add(rnnCase{name: short + "/forward_plain", op: op, nOperands: 3, attrs: attrs("hidden_size", 5)})
		add(rnnCase{name: short + "/forward_bias", op: op, nOperands: 4, attrs: attrs("hidden_size", 5)})
		add(rnnCase{name: short + "/reverse_all", op: op, nOperands: full, attrs: attrs("hidden_size", 5, "direction", "reverse")})
		add(rnnCase{name: short + "/bidirectional", op: op, nOperands: full, attrs: attrs("hidden_size", 5, "direction", "bidirectional")})
		add(rnnCase{name: short + "/bidirectional_const", op: op, nOperands: full, consts: true, attrs: attrs("hidden_size", 5, "direction", "bidirectional")})
		add(rnnCase{name: short + "/clip", op: op, nOperands: full, attrs: attrs("hidden_size", 5, "clip", 0.3)})
		add(rnnCase{name: short + "/layout1_bidirectional", op: op, nOperands: full, attrs: attrs("hidden_size", 5, "direction", "bidirectional", "layout", 1)})
		// varied sequence_lens (batch 3: a full, a short and an empty entry)
		add(rnnCase{name: short + "/lens_forward", op: op, seq: 5, batch: 3, input: 3, hidden: 4, nOperands: full,
			attrs: attrs("hidden_size", 4, "sequence_lens", []int64{5, 2, 0})})
		add(rnnCase{name: short + "/lens_bidirectional", op: op, seq: 5, batch: 3, input: 3, hidden: 4, nOperands: full,
			attrs: attrs("hidden_size", 4, "direction", "bidirectional", "sequence_lens", []int64{3, 5, 1})})
		add(rnnCase{name: short + "/lens_reverse_layout1", op: op, seq: 4, batch: 3, input: 2, hidden: 3, nOperands: full,
			attrs: attrs("hidden_size", 3, "direction", "reverse", "layout", 1, "sequence_lens", []int64{0, 4, 2})})
		add(rnnCase{name: short + "/wide", op: op, seq: 3, batch: 1, input: 7, hidden: 37, nOperands: 4, attrs: attrs("hidden_size", 37)})
	}
	add(rnnCase{name: "lstm/peephole_input_forget", op: graph.LSTMOp, nOperands: 7, attrs: attrs("hidden_size", 5, "input_forget", true)})
	add(rnnCase{name: "lstm/activations", op: graph.LSTMOp, nOperands: 4, attrs: attrs("hidden_size", 5,
		"activations", acts("HardSigmoid", "Relu", "ScaledTanh"), "activation_alpha", []float64{0.3, 0.7}, "activation_beta", []float64{0.4, 1.2})})
	add(rnnCase{name: "gru/linear_before_reset", op: graph.GRUOp, nOperands: 5, attrs: attrs("hidden_size", 5, "linear_before_reset", true)})
	add(rnnCase{name: "gru/linear_before_reset_bidirectional_const", op: graph.GRUOp, nOperands: 5, consts: true,
		attrs: attrs("hidden_size", 5, "linear_before_reset", true, "direction", "bidirectional")})
	add(rnnCase{name: "gru/activations", op: graph.GRUOp, nOperands: 4, attrs: attrs("hidden_size", 5,
		"activations", acts("LeakyRelu", "Softsign"), "activation_alpha", []float64{0.2})})
	add(rnnCase{name: "rnn/activations_bidirectional", op: graph.RNNOp, nOperands: 5, attrs: attrs("hidden_size", 5, "direction", "bidirectional",
		"activations", acts("Relu", "Affine"), "activation_alpha", []float64{0.5}, "activation_beta", []float64{0.1})})
	add(rnnCase{name: "rnn/elu_softplus_thresholded", op: graph.RNNOp, nOperands: 4, attrs: attrs("hidden_size", 5, "direction", "bidirectional",
		"activations", acts("Elu", "ThresholdedRelu"), "activation_alpha", []float64{0.5, 0.1})})
	add(rnnCase{name: "rnn/softplus", op: graph.RNNOp, nOperands: 4, attrs: attrs("hidden_size", 5, "activations", acts("Softplus"))})
	return cs
}

// TestLegalizeRNNAgreement: graph interpreter = legalized hlo = fused hlo =
// tensor IR interpreter (of the kernels as scheduled by lower-to-tir).
func TestLegalizeRNNAgreement(t *testing.T) {
	for i, c := range rnnCases() {
		t.Run(c.name, func(t *testing.T) {
			m, args := rnnModule(t, c, int64(i)+3)
			want, err := graphir.Interpret(m.Funcs[0], args)
			require.NoError(t, err)

			lm, _ := rnnModule(t, c, int64(i)+3)
			runPipeline(t, lm, graph.LegalizeToHLOPassName)
			checkLowered(t, lm, &caseLoc, c.name)
			got, err := graphir.Interpret(lm.Funcs[0], args)
			require.NoError(t, err, "interpreting\n%s", graphir.Print(lm))
			requireClose(t, want, got, c.name)

			fm, _ := rnnModule(t, c, int64(i)+3)
			runPipeline(t, fm, graph.LegalizeToHLOPassName+",canonicalize,cse,fuse")
			got, err = graphir.Interpret(fm.Funcs[0], args)
			require.NoError(t, err, "interpreting\n%s", graphir.Print(fm))
			requireClose(t, want, got, c.name+" (fused)")

			tm, err := LowerToTIR(fm)
			require.NoError(t, err, "lowering\n%s", graphir.Print(fm))
			require.NoError(t, schedule.InlineElementwiseModule(tm))
			outs := runHost(t, tm, "main", args)
			require.Len(t, outs, len(want))
			for k := range want {
				requireTIRClose(t, want[k], outs[k], 1e-4, c.name)
			}
			// The recurrence kernels as the lower-to-tir step schedules them.
			n := 0
			for i, f := range tm.Funcs {
				if _, rec := f.Attrs[tir.AttrRecurrence]; rec {
					sf, err := schedule.ScheduleRecurrence(f, schedule.RecurrenceVectorBits)
					require.NoError(t, err)
					tm.Funcs[i] = sf
					n++
				}
			}
			require.Positive(t, n, "no recurrence kernel")
			outs = runHost(t, tm, "main", args)
			for k := range want {
				requireTIRClose(t, want[k], outs[k], 1e-4, c.name+" (scheduled)")
			}
		})
	}
}
