package onnx

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tessera-ml/tessera/dialects/graph/onnx/onnxpb"
	"github.com/tessera-ml/tessera/graphir"
)

// TestNodeTestSuite runs every node test of libonnx-testdata through the
// importer and the reference interpreter (test_data_set_0): each one is
// either reported unsupported or matches its expected outputs. Nothing may
// fail to import for another reason or compute a wrong result.
func TestNodeTestSuite(t *testing.T) {
	needNodeTests(t)
	ents, err := os.ReadDir(nodeTests)
	if err != nil {
		t.Fatal(err)
	}
	pass, unsup, fail := 0, 0, 0
	for _, e := range ents {
		dir := filepath.Join(nodeTests, e.Name())
		m, err := Import(filepath.Join(dir, "model.onnx"))
		if err != nil {
			if strings.Contains(err.Error(), "unsupported") || strings.Contains(err.Error(), "not supported") {
				unsup++
				continue
			}
			fail++
			t.Errorf("%s: import fails without saying unsupported: %v", e.Name(), err)
			continue
		}
		f := m.Lookup("main")
		var args []*graphir.Tensor
		ok := true
		for i := range f.Type.Inputs {
			data, err := os.ReadFile(filepath.Join(dir, "test_data_set_0", fmt.Sprintf("input_%d.pb", i)))
			if err != nil {
				ok = false
				break
			}
			var tp onnxpb.TensorProto
			if err := proto.Unmarshal(data, &tp); err != nil {
				ok = false
				break
			}
			x, err := decodeTensor(&tp)
			if err != nil {
				ok = false
				break
			}
			args = append(args, x)
		}
		if !ok {
			t.Errorf("%s: cannot read its inputs", e.Name())
			continue
		}
		got, err := graphir.Interpret(f, args)
		if err != nil {
			fail++
			t.Errorf("%s: interpretation fails: %v", e.Name(), err)
			continue
		}
		bad := ""
		for i, g := range got {
			data, err := os.ReadFile(filepath.Join(dir, "test_data_set_0", fmt.Sprintf("output_%d.pb", i)))
			if err != nil {
				bad = err.Error()
				break
			}
			var tp onnxpb.TensorProto
			if err := proto.Unmarshal(data, &tp); err != nil {
				bad = err.Error()
				break
			}
			w, err := decodeTensor(&tp)
			if err != nil {
				bad = err.Error()
				break
			}
			if w.Type.String() != g.Type.String() {
				bad = fmt.Sprintf("type %s vs %s", g.Type, w.Type)
				break
			}
			for k := range w.Data {
				if math.IsNaN(w.Data[k]) && math.IsNaN(g.Data[k]) {
					continue
				}
				if !(math.Abs(g.Data[k]-w.Data[k]) <= 1e-5+1e-3*math.Abs(w.Data[k])) {
					bad = fmt.Sprintf("out %d elem %d got %g want %g", i, k, g.Data[k], w.Data[k])
					break
				}
			}
		}
		if bad != "" {
			fail++
			t.Errorf("%s: wrong result: %s", e.Name(), bad)
		} else {
			pass++
		}
	}
	t.Logf("%d node tests match, %d unsupported, %d fail", pass, unsup, fail)
	if pass < 300 {
		t.Errorf("only %d node tests match (337 when this test was written)", pass)
	}
}
