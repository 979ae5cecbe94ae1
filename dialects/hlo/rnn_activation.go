package hlo

import (
	"math"
	"strings"

	g "github.com/tessera-ml/tessera/graphir"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// RNNActivation is one activation function of a recurrent cell (ONNX
// LSTM/GRU/RNN's `activations`, with its alpha and beta).
type RNNActivation struct {
	Name        string
	Alpha, Beta float64
}

// rnnActivationDefs are the activations ONNX lists for LSTM, GRU and RNN
// that Tessera supports, with their default alpha and beta (those of the
// ONNX operators of the same name) and whether each takes an alpha and a
// beta from activation_alpha / activation_beta.
var rnnActivationDefs = map[string]struct {
	alpha, beta           float64
	takesAlpha, takesBeta bool
}{
	"Relu": {}, "Tanh": {}, "Sigmoid": {}, "Softsign": {}, "Softplus": {},
	"Affine":          {alpha: 1, takesAlpha: true, takesBeta: true},
	"LeakyRelu":       {alpha: 0.01, takesAlpha: true},
	"ThresholdedRelu": {alpha: 1, takesAlpha: true},
	"ScaledTanh":      {alpha: 1, beta: 1, takesAlpha: true, takesBeta: true},
	"HardSigmoid":     {alpha: 0.2, beta: 0.5, takesAlpha: true, takesBeta: true},
	"Elu":             {alpha: 1, takesAlpha: true},
}

// CanonicalRNNActivation returns the supported activation named name
// (compared without case, as ONNX Runtime does) in its ONNX spelling.
func CanonicalRNNActivation(name string) (string, bool) {
	for k := range rnnActivationDefs {
		if strings.EqualFold(k, name) {
			return k, true
		}
	}
	return "", false
}

// ResolveRNNActivations gives names (canonical spellings) their alpha and
// beta: alphas and betas are consumed in order by the activations that take
// one (ONNX Runtime's reading of activation_alpha/beta); the others, and
// those past the end of the lists, get the ONNX operator's default.
func ResolveRNNActivations(names []string, alphas, betas []float64) []RNNActivation {
	out := make([]RNNActivation, len(names))
	for i, n := range names {
		d := rnnActivationDefs[n]
		a := RNNActivation{Name: n, Alpha: d.alpha, Beta: d.beta}
		if d.takesAlpha && len(alphas) > 0 {
			a.Alpha, alphas = alphas[0], alphas[1:]
		}
		if d.takesBeta && len(betas) > 0 {
			a.Beta, betas = betas[0], betas[1:]
		}
		out[i] = a
	}
	return out
}

// Eval applies the activation to x (float64, ONNX definitions).
func (a RNNActivation) Eval(x float64) float64 {
	switch a.Name {
	case "Relu":
		return math.Max(x, 0)
	case "Tanh":
		return math.Tanh(x)
	case "Sigmoid":
		return 1 / (1 + math.Exp(-x))
	case "Affine":
		return a.Alpha*x + a.Beta
	case "LeakyRelu":
		if x >= 0 {
			return x
		}
		return a.Alpha * x
	case "ThresholdedRelu":
		if x > a.Alpha {
			return x
		}
		return 0
	case "ScaledTanh":
		return a.Alpha * math.Tanh(a.Beta*x)
	case "HardSigmoid":
		return math.Min(math.Max(a.Alpha*x+a.Beta, 0), 1)
	case "Elu":
		if x >= 0 {
			return x
		}
		return a.Alpha * (math.Exp(x) - 1)
	case "Softsign":
		return x / (1 + math.Abs(x))
	case "Softplus":
		return math.Log(1 + math.Exp(x))
	}
	return math.NaN()
}

// Expr is the activation of x (of float dtype t) in tensor IR.
func (a RNNActivation) Expr(x tir.Expr, t tir.DType) tir.Expr {
	c := func(v float64) tir.Expr { return tir.Float(t, v) }
	call := func(name string, x tir.Expr) tir.Expr { return &tir.Call{Name: name, Args: []tir.Expr{x}} }
	switch a.Name {
	case "Relu":
		return tir.Max(x, c(0))
	case "Tanh":
		return call("tanh", x)
	case "Sigmoid":
		return call("sigmoid", x)
	case "Affine":
		return tir.Add(tir.Mul(c(a.Alpha), x), c(a.Beta))
	case "LeakyRelu":
		return &tir.Select{Cond: tir.Bin(tir.OpGE, x, c(0)), T: x, F: tir.Mul(c(a.Alpha), x)}
	case "ThresholdedRelu":
		return &tir.Select{Cond: tir.Bin(tir.OpGT, x, c(a.Alpha)), T: x, F: c(0)}
	case "ScaledTanh":
		return tir.Mul(c(a.Alpha), call("tanh", tir.Mul(c(a.Beta), x)))
	case "HardSigmoid":
		return tir.Min(tir.Max(tir.Add(tir.Mul(c(a.Alpha), x), c(a.Beta)), c(0)), c(1))
	case "Elu":
		return &tir.Select{Cond: tir.Bin(tir.OpGE, x, c(0)), T: x, F: tir.Mul(c(a.Alpha), tir.Sub(call("exp", x), c(1)))}
	case "Softsign":
		return tir.Div(x, tir.Add(c(1), call("abs", x)))
	case "Softplus":
		return call("log", tir.Add(c(1), call("exp", x)))
	}
	return x
}

// rnnActivations reads hlo.rnn_scan's activations with their alpha and
// beta (one each per activation).
func rnnActivations(op *g.Op, want int) ([]RNNActivation, error) {
	arr, ok := op.Attr("activations").(g.ArrayAttr)
	if !ok || len(arr) != want {
		return nil, op.Errorf("'activations' must list %d activation names", want)
	}
	alphas, err := op.Floats("activation_alpha")
	if err != nil {
		return nil, err
	}
	betas, err := op.Floats("activation_beta")
	if err != nil {
		return nil, err
	}
	if len(alphas) != want || len(betas) != want {
		return nil, op.Errorf("'activation_alpha' and 'activation_beta' must have one value per activation (%d), got %d and %d", want, len(alphas), len(betas))
	}
	out := make([]RNNActivation, want)
	for i, a := range arr {
		s, ok := a.(g.StringAttr)
		name, known := CanonicalRNNActivation(string(s))
		if !ok || !known {
			return nil, op.Errorf("unsupported activation '%s' (supported: Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus)", strings.Trim(g.FormatAttr(a), `"`))
		}
		out[i] = RNNActivation{Name: name, Alpha: alphas[i], Beta: betas[i]}
	}
	return out, nil
}
