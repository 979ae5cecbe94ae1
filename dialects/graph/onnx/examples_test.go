package onnx

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/graphir"
)

// examplesDir holds PyTorch-exported models with inputs and PyTorch's
// outputs (examples/onnx/export_models.py).
const examplesDir = "../../../examples/onnx"

// readNpyF32 reads a little-endian float32 .npy file (C order).
func readNpyF32(t *testing.T, path string) *graphir.Tensor {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, len(data) > 10 && string(data[1:6]) == "NUMPY", "%s is not a .npy file", path)
	var hlen, off int
	if data[6] == 1 {
		hlen, off = int(binary.LittleEndian.Uint16(data[8:])), 10
	} else {
		hlen, off = int(binary.LittleEndian.Uint32(data[8:])), 12
	}
	header := string(data[off : off+hlen])
	require.Contains(t, header, "'descr': '<f4'")
	require.Contains(t, header, "'fortran_order': False")
	m := regexp.MustCompile(`'shape': \(([^)]*)\)`).FindStringSubmatch(header)
	require.NotNil(t, m)
	var shape []int64
	for _, s := range strings.Split(m[1], ",") {
		if s = strings.TrimSpace(s); s != "" {
			d, err := strconv.ParseInt(s, 10, 64)
			require.NoError(t, err)
			shape = append(shape, d)
		}
	}
	body := data[off+hlen:]
	x := graphir.NewZeroTensor(graphir.NewTensor(graphir.F32, shape...))
	require.Len(t, body, 4*len(x.Data))
	for i := range x.Data {
		x.Data[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(body[4*i:])))
	}
	return x
}

// TestExampleModels imports the committed PyTorch models and checks the
// reference interpreter against PyTorch's outputs.
func TestExampleModels(t *testing.T) {
	for _, name := range []string{"squeezenet1_1", "transformer_encoder_layer", "shufflenet_v2_x1_0", "mobilenet_v2"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(examplesDir, name+".onnx")
			if _, err := os.Stat(path); err != nil {
				t.Skipf("%s is absent", path)
			}
			if testing.Short() && name != "transformer_encoder_layer" {
				t.Skip("-short: only the transformer layer")
			}
			m, err := Import(path)
			require.NoError(t, err)
			in := readNpyF32(t, filepath.Join(examplesDir, name+"_input.npy"))
			want := readNpyF32(t, filepath.Join(examplesDir, name+"_output.npy"))
			start := time.Now()
			got, err := graphir.Interpret(m.Lookup("main"), []*graphir.Tensor{in})
			require.NoError(t, err)
			require.Equal(t, want.Type.String(), got[0].Type.String())
			maxd := 0.0
			for i, w := range want.Data {
				maxd = math.Max(maxd, math.Abs(got[0].Data[i]-w))
			}
			scale := 0.0
			for _, w := range want.Data {
				scale = math.Max(scale, math.Abs(w))
			}
			t.Logf("%s: max |Δ| vs PyTorch %.3g, max |y| %.3g (interpreted in %v)", name, maxd, scale, time.Since(start).Round(time.Millisecond))
			// relative to the output's magnitude: some exported models have
			// untrained, tiny outputs (mobilenet_v2: max |y| ≈ 3e-9)
			require.Greater(t, scale, 0.0, "all-zero reference output")
			require.LessOrEqual(t, maxd, 1e-4*scale, fmt.Sprintf("%s deviates from PyTorch", name))
		})
	}
}
