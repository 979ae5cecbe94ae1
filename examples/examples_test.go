package examples_test

// End-to-end checks of the trained example models (see README.md): the
// graph-dialect text written by train_digits.py parses and verifies, the
// reference interpreter reproduces PyTorch's logits on the held-out digits
// and PyTorch's accuracy, and so does the same model after legalize-to-hlo
// and fuse, whose top level is only constants, fusions and the return.

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbinet/npyio"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/tessera-ml/tessera/dialects/graph"
	_ "github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
	_ "github.com/tessera-ml/tessera/lowering"
)

// logitTol is the largest |Δ| allowed between a Tessera logit and PyTorch's.
const logitTol = 1e-4

// shortBatch is the number of held-out images run under -short; otherwise
// the whole held-out set is run (about 2 s, 17 s under -race, on one core).
const shortBatch = 24

// reference mirrors pytorch_reference.json.
type reference struct {
	Command  string `json:"command"`
	HeldOut  int    `json:"held_out"`
	Labels   string `json:"labels"`
	TorchVer string `json:"torch_version"`
	Models   map[string]struct {
		Accuracy float64 `json:"accuracy"`
		Correct  int     `json:"correct"`
		MLIR     string  `json:"mlir"`
		Inputs   string  `json:"inputs"`
		Logits   string  `json:"logits"`
	} `json:"models"`
}

func loadReference(t *testing.T) reference {
	t.Helper()
	raw, err := os.ReadFile("pytorch_reference.json")
	require.NoError(t, err)
	var ref reference
	require.NoError(t, json.Unmarshal(raw, &ref))
	require.Positive(t, ref.HeldOut)
	return ref
}

// readNPY reads a C-order .npy file whose element type matches T and
// returns its data and shape.
func readNPY[T any](t *testing.T, name string) ([]T, []int64) {
	t.Helper()
	f, err := os.Open(name)
	require.NoError(t, err)
	defer f.Close()
	r, err := npyio.NewReader(f)
	require.NoError(t, err, name)
	require.False(t, r.Header.Descr.Fortran, "%s: Fortran order", name)
	var data []T
	require.NoError(t, r.Read(&data), name)
	shape := make([]int64, len(r.Header.Descr.Shape))
	n := int64(1)
	for i, d := range r.Header.Descr.Shape {
		shape[i] = int64(d)
		n *= int64(d)
	}
	require.EqualValues(t, n, len(data), "%s: element count vs shape %v", name, shape)
	return data, shape
}

// batchSize is the number of held-out images a run checks.
func batchSize(heldOut int) int {
	if testing.Short() && heldOut > shortBatch {
		return shortBatch
	}
	return heldOut
}

// withBatch rewrites the model text for a batch of n instead of the
// held-out size: the batch is the leading dimension of the input, of every
// activation and of the logits, and no weight has a leading dimension equal
// to it (checked by the caller through verification and the input type).
func withBatch(src string, heldOut, n int) string {
	if n == heldOut {
		return src
	}
	return strings.ReplaceAll(src, fmt.Sprintf("tensor<%dx", heldOut), fmt.Sprintf("tensor<%dx", n))
}

func argmax(row []float64) int {
	best := 0
	for i, v := range row {
		if v > row[best] {
			best = i
		}
	}
	return best
}

// compareLogits checks got (n×10) against PyTorch's logits and returns the
// largest |Δ| and the number of images classified as labelled.
func compareLogits(t *testing.T, level string, got *graphir.Tensor, want []float32, labels []int64, n int) (float64, int) {
	t.Helper()
	require.Equal(t, []int64{int64(n), 10}, got.Type.Shape, level)
	require.Len(t, got.Data, n*10, level)
	maxDelta, worst := 0.0, 0
	correct, disagree := 0, 0
	for i := 0; i < n; i++ {
		row := got.Data[i*10 : (i+1)*10]
		wantRow := make([]float64, 10)
		for j := range wantRow {
			wantRow[j] = float64(want[i*10+j])
			d := math.Abs(row[j] - wantRow[j])
			if d > maxDelta || math.IsNaN(d) {
				maxDelta, worst = d, i*10+j
			}
		}
		if argmax(row) != argmax(wantRow) {
			disagree++
		}
		if int64(argmax(row)) == labels[i] {
			correct++
		}
	}
	assert.LessOrEqual(t, maxDelta, logitTol, "%s: max |Δ| vs PyTorch at image %d class %d: got %v, want %v",
		level, worst/10, worst%10, got.Data[worst], want[worst])
	assert.Zero(t, disagree, "%s: images whose predicted class differs from PyTorch's", level)
	return maxDelta, correct
}

func TestTrainedModels(t *testing.T) {
	ref := loadReference(t)
	labels, lshape := readNPY[int64](t, ref.Labels)
	require.Equal(t, []int64{int64(ref.HeldOut)}, lshape)
	n := batchSize(ref.HeldOut)
	if n < ref.HeldOut {
		t.Logf("running the first %d of %d held-out images (-short)", n, ref.HeldOut)
	}

	for _, name := range []string{"lenet5", "mlp"} {
		t.Run(name, func(t *testing.T) {
			m, ok := ref.Models[name]
			require.True(t, ok, "pytorch_reference.json has no model %q", name)
			x, xshape := readNPY[float32](t, m.Inputs)
			want, wshape := readNPY[float32](t, m.Logits)
			require.Equal(t, int64(ref.HeldOut), xshape[0])
			require.Equal(t, []int64{int64(ref.HeldOut), 10}, wshape)

			// PyTorch's own logits give its recorded accuracy.
			pyCorrect := 0
			for i := 0; i < ref.HeldOut; i++ {
				row := make([]float64, 10)
				for j := range row {
					row[j] = float64(want[i*10+j])
				}
				if int64(argmax(row)) == labels[i] {
					pyCorrect++
				}
			}
			require.Equal(t, m.Correct, pyCorrect)
			require.InDelta(t, m.Accuracy, float64(pyCorrect)/float64(ref.HeldOut), 1e-12)
			pyPrefixCorrect := 0
			for i := 0; i < n; i++ {
				row := make([]float64, 10)
				for j := range row {
					row[j] = float64(want[i*10+j])
				}
				if int64(argmax(row)) == labels[i] {
					pyPrefixCorrect++
				}
			}

			src, err := os.ReadFile(m.MLIR)
			require.NoError(t, err)
			start := time.Now()
			mod, err := graphir.Parse(filepath.Base(m.MLIR), []byte(withBatch(string(src), ref.HeldOut, n)))
			require.NoError(t, err)
			require.NoError(t, graphir.Verify(mod))
			t.Logf("parse+verify: %v", time.Since(start).Round(time.Millisecond))
			f := mod.Lookup("main")
			require.NotNil(t, f)
			require.Len(t, f.Type.Inputs, 1)
			inT := graphir.AsTensor(f.Type.Inputs[0])
			require.NotNil(t, inT)
			require.Equal(t, append([]int64{int64(n)}, xshape[1:]...), inT.Shape)
			require.Equal(t, graphir.F32, inT.Elem)
			graphOps := map[string]int{}
			for _, op := range f.Entry().Ops() {
				graphOps[op.Name]++
			}

			stride := len(x) / ref.HeldOut
			in := &graphir.Tensor{Type: inT, Data: make([]float64, n*stride)}
			for i := range in.Data {
				in.Data[i] = float64(x[i])
			}

			start = time.Now()
			out, err := graphir.Interpret(f, []*graphir.Tensor{in})
			require.NoError(t, err)
			require.Len(t, out, 1)
			graphDelta, graphCorrect := compareLogits(t, "graph", out[0], want, labels, n)
			t.Logf("graph level: %v, max |Δ| %.3g, %d/%d correct (PyTorch %d/%d)",
				time.Since(start).Round(time.Millisecond), graphDelta, graphCorrect, n, pyPrefixCorrect, n)
			assert.Equal(t, pyPrefixCorrect, graphCorrect, "graph-level correct count vs PyTorch")
			if n == ref.HeldOut {
				assert.InDelta(t, m.Accuracy, float64(graphCorrect)/float64(n), 1e-12, "graph-level accuracy vs PyTorch")
			}

			start = time.Now()
			require.NoError(t, graphir.RunPipeline(mod, "legalize-to-hlo,fuse"))
			t.Logf("legalize-to-hlo,fuse: %v", time.Since(start).Round(time.Millisecond))
			hloOps := map[string]int{}
			for _, op := range f.Entry().Ops() {
				hloOps[op.Name]++
				assert.Contains(t, []string{"hlo.constant", "hlo.fusion", "func.return"}, op.Name,
					"top-level op after legalize-to-hlo,fuse")
			}
			assert.Positive(t, hloOps["hlo.fusion"])
			assert.Equal(t, graphOps["graph.constant"], hloOps["hlo.constant"], "weights stay top-level constants")
			t.Logf("graph ops %v -> hlo ops %v", graphOps, hloOps)

			start = time.Now()
			hout, err := graphir.Interpret(f, []*graphir.Tensor{in})
			require.NoError(t, err)
			require.Len(t, hout, 1)
			hloDelta, hloCorrect := compareLogits(t, "hlo", hout[0], want, labels, n)
			t.Logf("hlo level: %v, max |Δ| %.3g, %d/%d correct",
				time.Since(start).Round(time.Millisecond), hloDelta, hloCorrect, n)
			assert.Equal(t, pyPrefixCorrect, hloCorrect, "hlo-level correct count vs PyTorch")
			if n == ref.HeldOut {
				assert.InDelta(t, m.Accuracy, float64(hloCorrect)/float64(n), 1e-12, "hlo-level accuracy vs PyTorch")
			}
		})
	}
}

// TestFixtures checks the shapes and dtypes of the held-out fixtures and
// that the model text states its provenance.
func TestFixtures(t *testing.T) {
	ref := loadReference(t)
	_, x32 := readNPY[float32](t, "digits_x.npy")
	_, x28 := readNPY[float32](t, "digits28_x.npy")
	y, _ := readNPY[int64](t, "digits_y.npy")
	h := int64(ref.HeldOut)
	assert.Equal(t, []int64{h, 1, 32, 32}, x32)
	assert.Equal(t, []int64{h, 1, 28, 28}, x28)
	counts := make([]int, 10)
	for _, l := range y {
		require.True(t, l >= 0 && l < 10, "label %d", l)
		counts[l]++
	}
	for c, k := range counts {
		assert.Positive(t, k, "no held-out image of class %d", c)
	}
	for _, name := range []string{"lenet5.mlir", "mlp.mlir"} {
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		assert.Contains(t, string(src), "examples/train_digits.py", "%s names its generator", name)
		assert.Contains(t, string(src), fmt.Sprintf("func.func @main(%%arg0: tensor<%dx1x", h), name)
	}
}
