package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
	rt "github.com/tessera-ml/tessera/runtime"
)

// structOpCase is a graph function over f32 arguments (and i64 or i32
// index arguments, drawn in [−2, 1]) whose compiled results (every one of
// them: split and topk have several; f32 within 2e-5, integers exactly)
// must match the graph interpreter.
type structOpCase struct {
	name    string
	ins     []string // argument types
	results []string // result types
	body    string   // ops defining the returned values
	ret     string   // returned values; "%0" when empty
}

var structOpCases = []structOpCase{
	{"reduce_sum keepdims", []string{"tensor<3x5x7xf32>"}, []string{"tensor<3x1x7xf32>"},
		`%0 = graph.reduce_sum %arg0 {axes = [1]} : (tensor<3x5x7xf32>) -> tensor<3x1x7xf32>`, ""},
	{"reduce_sum all", []string{"tensor<4x9xf32>"}, []string{"tensor<f32>"},
		`%0 = graph.reduce_sum %arg0 {keepdims = false} : (tensor<4x9xf32>) -> tensor<f32>`, ""},
	{"reduce_mean neg axes", []string{"tensor<2x3x5x4xf32>"}, []string{"tensor<2x3xf32>"},
		`%0 = graph.reduce_mean %arg0 {axes = [-1, -2], keepdims = false} : (tensor<2x3x5x4xf32>) -> tensor<2x3xf32>`, ""},
	{"reduce_max", []string{"tensor<5x6x3xf32>"}, []string{"tensor<1x6x1xf32>"},
		`%0 = graph.reduce_max %arg0 {axes = [2, 0]} : (tensor<5x6x3xf32>) -> tensor<1x6x1xf32>`, ""},
	{"reduce_min", []string{"tensor<7x11xf32>"}, []string{"tensor<11xf32>"},
		`%0 = graph.reduce_min %arg0 {axes = [0], keepdims = false} : (tensor<7x11xf32>) -> tensor<11xf32>`, ""},
	{"reduce_prod", []string{"tensor<3x4x2xf32>"}, []string{"tensor<3x1x2xf32>"},
		`%0 = graph.reduce_prod %arg0 {axes = [1]} : (tensor<3x4x2xf32>) -> tensor<3x1x2xf32>`, ""},
	{"reduce_l2", []string{"tensor<6x5xf32>"}, []string{"tensor<6x1xf32>"},
		`%0 = graph.reduce_l2 %arg0 {axes = [-1]} : (tensor<6x5xf32>) -> tensor<6x1xf32>`, ""},
	{"reduce_log_sum_exp", []string{"tensor<4x7x3xf32>"}, []string{"tensor<4x3xf32>"},
		`%0 = graph.reduce_log_sum_exp %arg0 {axes = [1], keepdims = false} : (tensor<4x7x3xf32>) -> tensor<4x3xf32>`, ""},
	{"reduce_sum noop", []string{"tensor<3x4xf32>"}, []string{"tensor<3x4xf32>"},
		`%0 = graph.reduce_sum %arg0 {noop_with_empty_axes = true} : (tensor<3x4xf32>) -> tensor<3x4xf32>`, ""},
	{"log_softmax axis 1", []string{"tensor<3x7x5xf32>"}, []string{"tensor<3x7x5xf32>"},
		`%0 = graph.log_softmax %arg0 {axis = 1} : tensor<3x7x5xf32>`, ""},
	{"log_softmax default", []string{"tensor<4x19xf32>"}, []string{"tensor<4x19xf32>"},
		`%0 = graph.log_softmax %arg0 : tensor<4x19xf32>`, ""},
	{"hardmax axis 1", []string{"tensor<3x7x5xf32>"}, []string{"tensor<3x7x5xf32>"},
		`%0 = graph.hardmax %arg0 {axis = 1} : tensor<3x7x5xf32>`, ""},
	{"trilu lower", []string{"tensor<3x4x6xf32>"}, []string{"tensor<3x4x6xf32>"},
		`%0 = graph.trilu %arg0 {upper = false} : tensor<3x4x6xf32>`, ""},
	{"layer_norm last axis", []string{"tensor<3x4x10xf32>", "tensor<10xf32>", "tensor<10xf32>"}, []string{"tensor<3x4x10xf32>", "tensor<3x4x1xf32>", "tensor<3x4x1xf32>"},
		`%0:3 = graph.layer_norm %arg0, %arg1, %arg2 : (tensor<3x4x10xf32>, tensor<10xf32>, tensor<10xf32>) -> (tensor<3x4x10xf32>, tensor<3x4x1xf32>, tensor<3x4x1xf32>)`, "%0#0, %0#1, %0#2"},
	{"layer_norm axis 1 broadcast scale", []string{"tensor<2x3x5xf32>", "tensor<1x5xf32>"}, []string{"tensor<2x3x5xf32>"},
		`%y:3 = graph.layer_norm %arg0, %arg1 {axis = 1, epsilon = 0.01 : f32} : (tensor<2x3x5xf32>, tensor<1x5xf32>) -> (tensor<2x3x5xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
    %0 = graph.relu %y#0 : tensor<2x3x5xf32>`, ""},
	{"split three", []string{"tensor<2x9x3xf32>"}, []string{"tensor<2x2x3xf32>", "tensor<2x3x3xf32>", "tensor<2x4x3xf32>"},
		`%0:3 = graph.split %arg0 {axis = -2, split = [2, 3, 4]} : (tensor<2x9x3xf32>) -> (tensor<2x2x3xf32>, tensor<2x3x3xf32>, tensor<2x4x3xf32>)`, "%0#0, %0#1, %0#2"},
	{"split num_outputs", []string{"tensor<7x2xf32>"}, []string{"tensor<3x2xf32>", "tensor<3x2xf32>", "tensor<1x2xf32>"},
		`%0:3 = graph.split %arg0 {num_outputs = 3} : (tensor<7x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<1x2xf32>)`, "%0#0, %0#1, %0#2"},
	{"split concat", []string{"tensor<4x6xf32>"}, []string{"tensor<4x6xf32>"},
		`%p:2 = graph.split %arg0 {axis = 1, split = [4, 2]} : (tensor<4x6xf32>) -> (tensor<4x4xf32>, tensor<4x2xf32>)
    %0 = graph.concat %p#1, %p#0 {axis = 1} : (tensor<4x2xf32>, tensor<4x4xf32>) -> tensor<4x6xf32>`, ""},
	{"slice positive", []string{"tensor<9x8xf32>"}, []string{"tensor<4x2xf32>"},
		`%0 = graph.slice %arg0 {ends = [9, -2], starts = [1, 1], steps = [2, 3]} : (tensor<9x8xf32>) -> tensor<4x2xf32>`, ""},
	{"slice step -1", []string{"tensor<3x7xf32>"}, []string{"tensor<3x7xf32>"},
		`%0 = graph.slice %arg0 {axes = [1], ends = [-100], starts = [100], steps = [-1]} : (tensor<3x7xf32>) -> tensor<3x7xf32>`, ""},
	{"slice step -2 both", []string{"tensor<6x5x4xf32>"}, []string{"tensor<3x5x2xf32>"},
		`%0 = graph.slice %arg0 {axes = [0, -1], ends = [-7, 0], starts = [-1, 3], steps = [-2, -2]} : (tensor<6x5x4xf32>) -> tensor<3x5x2xf32>`, ""},
	{"gather", []string{"tensor<5x4xf32>"}, []string{"tensor<2x3x4xf32>"},
		`%0 = graph.gather %arg0 {indices = dense<[[0, -1, 2], [2, 2, 1]]> : tensor<2x3xi64>} : (tensor<5x4xf32>) -> tensor<2x3x4xf32>`, ""},
	{"gather axis 1", []string{"tensor<3x6x2xf32>"}, []string{"tensor<3x4x2xf32>"},
		`%0 = graph.gather %arg0 {axis = 1, indices = dense<[5, 0, 1, 2]> : tensor<4xi64>} : (tensor<3x6x2xf32>) -> tensor<3x4x2xf32>`, ""},
	{"gather scalar", []string{"tensor<3x6xf32>"}, []string{"tensor<3xf32>"},
		`%0 = graph.gather %arg0 {axis = -1, indices = dense<-2> : tensor<i64>} : (tensor<3x6xf32>) -> tensor<3xf32>`, ""},
	{"pad constant", []string{"tensor<2x3x5xf32>"}, []string{"tensor<2x6x4xf32>"},
		`%0 = graph.pad %arg0 {pads = [0, 1, -1, 0, 2, 0], value = 0.75 : f32} : (tensor<2x3x5xf32>) -> tensor<2x6x4xf32>`, ""},
	{"pad reflect", []string{"tensor<1x2x5x7xf32>"}, []string{"tensor<1x2x8x10xf32>"},
		`%0 = graph.pad %arg0 {mode = "reflect", pads = [0, 0, 2, 1, 0, 0, 1, 2]} : (tensor<1x2x5x7xf32>) -> tensor<1x2x8x10xf32>`, ""},
	{"pad edge", []string{"tensor<3x4xf32>"}, []string{"tensor<7x5xf32>"},
		`%0 = graph.pad %arg0 {mode = "edge", pads = [3, -1, 1, 2]} : (tensor<3x4xf32>) -> tensor<7x5xf32>`, ""},
	{"expand", []string{"tensor<3x1xf32>"}, []string{"tensor<2x3x6xf32>"},
		`%0 = graph.expand %arg0 {shape = [2, 1, 6]} : (tensor<3x1xf32>) -> tensor<2x3x6xf32>`, ""},
	{"tile", []string{"tensor<2x3x5xf32>"}, []string{"tensor<4x3x10xf32>"},
		`%0 = graph.tile %arg0 {repeats = [2, 1, 2]} : (tensor<2x3x5xf32>) -> tensor<4x3x10xf32>`, ""},
	{"argmax axis 1", []string{"tensor<3x7x5xf32>"}, []string{"tensor<3x1x5xi64>"},
		`%0 = graph.argmax %arg0 {axis = 1} : (tensor<3x7x5xf32>) -> tensor<3x1x5xi64>`, ""},
	{"argmax last select_last of ties", []string{"tensor<4x9xf32>"}, []string{"tensor<4xi64>"},
		`%f = graph.floor %arg0 : tensor<4x9xf32>
    %0 = graph.argmax %f {axis = -1, keepdims = false, select_last_index = true} : (tensor<4x9xf32>) -> tensor<4xi64>`, ""},
	{"argmin default axis", []string{"tensor<6x3x2xf32>"}, []string{"tensor<1x3x2xi64>"},
		`%0 = graph.argmin %arg0 : (tensor<6x3x2xf32>) -> tensor<1x3x2xi64>`, ""},
	{"argmin of ties", []string{"tensor<5x11xf32>"}, []string{"tensor<5xi64>"},
		`%f = graph.floor %arg0 : tensor<5x11xf32>
    %0 = graph.argmin %f {axis = 1, keepdims = false} : (tensor<5x11xf32>) -> tensor<5xi64>`, ""},
	{"argmax as f32", []string{"tensor<3x7x5xf32>"}, []string{"tensor<3x5xf32>"},
		`%a = graph.argmax %arg0 {axis = -2, keepdims = false} : (tensor<3x7x5xf32>) -> tensor<3x5xi64>
    %0 = graph.cast %a : (tensor<3x5xi64>) -> tensor<3x5xf32>`, ""},
	{"argmin as f32", []string{"tensor<4x6xf32>"}, []string{"tensor<1x6xf32>"},
		`%a = graph.argmin %arg0 {select_last_index = true} : (tensor<4x6xf32>) -> tensor<1x6xi64>
    %0 = graph.cast %a : (tensor<1x6xi64>) -> tensor<1x6xf32>`, ""},
	{"topk last", []string{"tensor<3x13xf32>"}, []string{"tensor<3x4xf32>", "tensor<3x4xi64>"},
		`%0:2 = graph.topk %arg0 {k = 4} : (tensor<3x13xf32>) -> (tensor<3x4xf32>, tensor<3x4xi64>)`, "%0#0, %0#1"},
	{"topk middle smallest", []string{"tensor<2x7x3xf32>"}, []string{"tensor<2x7x3xf32>", "tensor<2x7x3xi64>"},
		`%0:2 = graph.topk %arg0 {k = 7, axis = 1, largest = false} : (tensor<2x7x3xf32>) -> (tensor<2x7x3xf32>, tensor<2x7x3xi64>)`, "%0#0, %0#1"},
	{"topk axis 0 k 1", []string{"tensor<9x4xf32>"}, []string{"tensor<1x4xf32>", "tensor<1x4xi64>"},
		`%0:2 = graph.topk %arg0 {k = 1, axis = -2} : (tensor<9x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xi64>)`, "%0#0, %0#1"},
	{"topk of ties", []string{"tensor<4x10xf32>"}, []string{"tensor<4x6xf32>", "tensor<4x6xi64>"},
		`%f = graph.floor %arg0 : tensor<4x10xf32>
    %0:2 = graph.topk %f {k = 6, sorted = false} : (tensor<4x10xf32>) -> (tensor<4x6xf32>, tensor<4x6xi64>)`, "%0#0, %0#1"},
	{"topk values plus indices", []string{"tensor<5x8xf32>"}, []string{"tensor<5x3xf32>"},
		`%t:2 = graph.topk %arg0 {k = 3, largest = false} : (tensor<5x8xf32>) -> (tensor<5x3xf32>, tensor<5x3xi64>)
    %i = graph.cast %t#1 : (tensor<5x3xi64>) -> tensor<5x3xf32>
    %0 = graph.add %t#0, %i : tensor<5x3xf32>`, ""},
	{"structural chain", []string{"tensor<2x8x6xf32>"}, []string{"tensor<2x4x1xf32>"},
		`%a = graph.pad %arg0 {mode = "reflect", pads = [0, 1, 1, 0, 1, 1]} : (tensor<2x8x6xf32>) -> tensor<2x10x8xf32>
    %b = graph.slice %a {axes = [1], ends = [0], starts = [9], steps = [-2]} : (tensor<2x10x8xf32>) -> tensor<2x5x8xf32>
    %c = graph.gather %b {axis = 1, indices = dense<[4, 0, 0, 3]> : tensor<4xi64>} : (tensor<2x5x8xf32>) -> tensor<2x4x8xf32>
    %d = graph.log_softmax %c : tensor<2x4x8xf32>
    %0 = graph.reduce_max %d {axes = [2]} : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32>`, ""},
	{"gather runtime embedding", []string{"tensor<9x6xf32>", "tensor<2x5xi64>"}, []string{"tensor<2x5x6xf32>"},
		`%0 = graph.gather %arg0, %arg1 : (tensor<9x6xf32>, tensor<2x5xi64>) -> tensor<2x5x6xf32>`, ""},
	{"gather runtime axis 2 i32", []string{"tensor<3x4x7xf32>", "tensor<5xi32>"}, []string{"tensor<3x4x5xf32>"},
		`%0 = graph.gather %arg0, %arg1 {axis = 2} : (tensor<3x4x7xf32>, tensor<5xi32>) -> tensor<3x4x5xf32>`, ""},
	{"resize linear align_corners", []string{"tensor<1x3x5x7xf32>"}, []string{"tensor<1x3x9x13xf32>"},
		`%0 = graph.resize %arg0 {sizes = [1, 3, 9, 13], mode = "linear", coordinate_transformation_mode = "align_corners"} : (tensor<1x3x5x7xf32>) -> tensor<1x3x9x13xf32>`, ""},
	{"resize cubic down", []string{"tensor<2x2x9x6xf32>"}, []string{"tensor<2x2x4x5xf32>"},
		`%0 = graph.resize %arg0 {sizes = [2, 2, 4, 5], mode = "cubic"} : (tensor<2x2x9x6xf32>) -> tensor<2x2x4x5xf32>`, ""},
	{"resize nearest x2", []string{"tensor<1x4x3x5xf32>"}, []string{"tensor<1x4x6x10xf32>"},
		`%0 = graph.resize %arg0 {sizes = [1, 4, 6, 10], scales = [1.0, 1.0, 2.0, 2.0], coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"} : (tensor<1x4x3x5xf32>) -> tensor<1x4x6x10xf32>`, ""},
	{"nll_loss weighted ignore", []string{"tensor<4x3x5xf32>", "tensor<4x5xi64>", "tensor<3xf32>"}, []string{"tensor<f32>"},
		`%t = graph.abs %arg1 : tensor<4x5xi64>
    %0 = graph.nll_loss %arg0, %t, %arg2 {ignore_index = 2} : (tensor<4x3x5xf32>, tensor<4x5xi64>, tensor<3xf32>) -> tensor<f32>`, ""},
	{"nll_loss none", []string{"tensor<6x4xf32>", "tensor<6xi32>"}, []string{"tensor<6xf32>"},
		`%t = graph.abs %arg1 : tensor<6xi32>
    %0 = graph.nll_loss %arg0, %t {reduction = "none"} : (tensor<6x4xf32>, tensor<6xi32>) -> tensor<6xf32>`, ""},
	{"cumsum reverse exclusive", []string{"tensor<3x11xf32>"}, []string{"tensor<3x11xf32>"},
		`%0 = graph.cumsum %arg0 {axis = 1, exclusive = true, reverse = true} : tensor<3x11xf32>`, ""},
	{"one_hot axis 0", []string{"tensor<2x3xi64>", "tensor<2xf32>"}, []string{"tensor<4x2x3xf32>"},
		`%0 = graph.one_hot %arg0, %arg1 {depth = 4, axis = 0} : (tensor<2x3xi64>, tensor<2xf32>) -> tensor<4x2x3xf32>`, ""},
	{"gather_elements", []string{"tensor<4x6xf32>", "tensor<4x3xi64>"}, []string{"tensor<4x3xf32>"},
		`%0 = graph.gather_elements %arg0, %arg1 {axis = 1} : (tensor<4x6xf32>, tensor<4x3xi64>) -> tensor<4x3xf32>`, ""},
	{"lstm bidirectional peepholes", []string{"tensor<5x2x3xf32>", "tensor<2x20x3xf32>", "tensor<2x20x5xf32>", "tensor<2x40xf32>", "tensor<2x2x5xf32>", "tensor<2x2x5xf32>", "tensor<2x15xf32>"},
		[]string{"tensor<5x2x2x5xf32>", "tensor<2x2x5xf32>", "tensor<2x2x5xf32>"},
		`%0:3 = graph.lstm %arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6 {hidden_size = 5, direction = "bidirectional"} : (tensor<5x2x3xf32>, tensor<2x20x3xf32>, tensor<2x20x5xf32>, tensor<2x40xf32>, tensor<2x2x5xf32>, tensor<2x2x5xf32>, tensor<2x15xf32>) -> (tensor<5x2x2x5xf32>, tensor<2x2x5xf32>, tensor<2x2x5xf32>)`, "%0#0, %0#1, %0#2"},
	{"lstm bidirectional sequence_lens", []string{"tensor<6x4x3xf32>", "tensor<2x20x3xf32>", "tensor<2x20x5xf32>", "tensor<2x40xf32>"},
		[]string{"tensor<6x2x4x5xf32>", "tensor<2x4x5xf32>", "tensor<2x4x5xf32>"},
		`%0:3 = graph.lstm %arg0, %arg1, %arg2, %arg3 {hidden_size = 5, direction = "bidirectional", sequence_lens = [6, 3, 0, 1]} : (tensor<6x4x3xf32>, tensor<2x20x3xf32>, tensor<2x20x5xf32>, tensor<2x40xf32>) -> (tensor<6x2x4x5xf32>, tensor<2x4x5xf32>, tensor<2x4x5xf32>)`, "%0#0, %0#1, %0#2"},
	{"gru reverse layout 1 sequence_lens hidden 19", []string{"tensor<3x5x4xf32>", "tensor<1x57x4xf32>", "tensor<1x57x19xf32>", "tensor<1x114xf32>", "tensor<3x1x19xf32>"},
		[]string{"tensor<3x5x1x19xf32>", "tensor<3x1x19xf32>"},
		`%0:2 = graph.gru %arg0, %arg1, %arg2, %arg3, %arg4 {hidden_size = 19, direction = "reverse", layout = 1, sequence_lens = [2, 5, 0]} : (tensor<3x5x4xf32>, tensor<1x57x4xf32>, tensor<1x57x19xf32>, tensor<1x114xf32>, tensor<3x1x19xf32>) -> (tensor<3x5x1x19xf32>, tensor<3x1x19xf32>)`, "%0#0, %0#1"},
	{"gru reverse linear_before_reset hidden 37", []string{"tensor<4x1x6xf32>", "tensor<1x111x6xf32>", "tensor<1x111x37xf32>", "tensor<1x222xf32>"},
		[]string{"tensor<4x1x1x37xf32>", "tensor<1x1x37xf32>"},
		`%0:2 = graph.gru %arg0, %arg1, %arg2, %arg3 {hidden_size = 37, direction = "reverse", linear_before_reset = true} : (tensor<4x1x6xf32>, tensor<1x111x6xf32>, tensor<1x111x37xf32>, tensor<1x222xf32>) -> (tensor<4x1x1x37xf32>, tensor<1x1x37xf32>)`, "%0#0, %0#1"},
	{"gru clip", []string{"tensor<3x2x4xf32>", "tensor<1x15x4xf32>", "tensor<1x15x5xf32>"},
		[]string{"tensor<3x1x2x5xf32>"},
		`%0:2 = graph.gru %arg0, %arg1, %arg2 {hidden_size = 5, clip = 0.5} : (tensor<3x2x4xf32>, tensor<1x15x4xf32>, tensor<1x15x5xf32>) -> (tensor<3x1x2x5xf32>, tensor<1x2x5xf32>)`, "%0#0"},
	{"rnn layout 1 relu", []string{"tensor<2x5x3xf32>", "tensor<1x5x3xf32>", "tensor<1x5x5xf32>", "tensor<1x10xf32>"},
		[]string{"tensor<2x5x1x5xf32>", "tensor<2x1x5xf32>"},
		`%0:2 = graph.rnn %arg0, %arg1, %arg2, %arg3 {hidden_size = 5, layout = 1, activations = ["Relu"]} : (tensor<2x5x3xf32>, tensor<1x5x3xf32>, tensor<1x5x5xf32>, tensor<1x10xf32>) -> (tensor<2x5x1x5xf32>, tensor<2x1x5xf32>)`, "%0#0, %0#1"},
	{"einsum attention scores bqhd", []string{"tensor<2x5x3x8xf32>", "tensor<2x7x3x8xf32>"}, []string{"tensor<2x3x5x7xf32>"},
		`%0 = graph.einsum %arg0, %arg1 {equation = "bqhd,bkhd->bhqk"} : (tensor<2x5x3x8xf32>, tensor<2x7x3x8xf32>) -> tensor<2x3x5x7xf32>`, ""},
	{"einsum attention values", []string{"tensor<2x3x5x7xf32>", "tensor<2x3x7x9xf32>"}, []string{"tensor<2x3x5x9xf32>"},
		`%0 = graph.einsum %arg0, %arg1 {equation = "bhqk,bhkd->bhqd"} : (tensor<2x3x5x7xf32>, tensor<2x3x7x9xf32>) -> tensor<2x3x5x9xf32>`, ""},
	{"einsum batch diagonal and trace", []string{"tensor<3x5x5xf32>"}, []string{"tensor<3x5xf32>", "tensor<3xf32>"},
		`%0 = graph.einsum %arg0 {equation = "...ii->...i"} : (tensor<3x5x5xf32>) -> tensor<3x5xf32>
    %1 = graph.einsum %arg0 {equation = "bii->b"} : (tensor<3x5x5xf32>) -> tensor<3xf32>`, "%0, %1"},
	{"einsum outer transposed", []string{"tensor<5xf32>", "tensor<3xf32>"}, []string{"tensor<3x5xf32>"},
		`%0 = graph.einsum %arg0, %arg1 {equation = "i,j->ji"} : (tensor<5xf32>, tensor<3xf32>) -> tensor<3x5xf32>`, ""},
	{"einsum ellipsis broadcast matmul", []string{"tensor<2x1x3x4xf32>", "tensor<5x4x6xf32>"}, []string{"tensor<2x5x3x6xf32>"},
		`%0 = graph.einsum %arg0, %arg1 {equation = "...ij,...jk->...ik"} : (tensor<2x1x3x4xf32>, tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32>`, ""},
	{"einsum three operands implicit", []string{"tensor<4x6xf32>", "tensor<6x5xf32>", "tensor<5xf32>"}, []string{"tensor<4xf32>"},
		`%0 = graph.einsum %arg0, %arg1, %arg2 {equation = "ij,jk,k"} : (tensor<4x6xf32>, tensor<6x5xf32>, tensor<5xf32>) -> tensor<4xf32>`, ""},
	{"einsum i64 matmul transposed", []string{"tensor<3x4xi64>", "tensor<4x5xi64>"}, []string{"tensor<5x3xi64>"},
		`%0 = graph.einsum %arg0, %arg1 {equation = "ij,jk->ki"} : (tensor<3x4xi64>, tensor<4x5xi64>) -> tensor<5x3xi64>`, ""},
	{"einsum summed letters", []string{"tensor<2x3x4xf32>", "tensor<3x5xf32>"}, []string{"tensor<5x2xf32>"},
		`%0 = graph.einsum %arg0, %arg1 {equation = "ijk,jl->li"} : (tensor<2x3x4xf32>, tensor<3x5xf32>) -> tensor<5x2xf32>`, ""},
	{"gather_nd batch_dims", []string{"tensor<3x4x5x2xf32>", "tensor<3x6x2xi64>"}, []string{"tensor<3x6x2xf32>"},
		`%0 = graph.gather_nd %arg0, %arg1 {batch_dims = 1} : (tensor<3x4x5x2xf32>, tensor<3x6x2xi64>) -> tensor<3x6x2xf32>`, ""},
	{"scatter_elements add", []string{"tensor<4x6xf32>", "tensor<4x3xi64>", "tensor<4x3xf32>"}, []string{"tensor<4x6xf32>"},
		`%0 = graph.scatter_elements %arg0, %arg1, %arg2 {axis = 1, reduction = "add"} : (tensor<4x6xf32>, tensor<4x3xi64>, tensor<4x3xf32>) -> tensor<4x6xf32>`, ""},
	{"scatter_nd rows", []string{"tensor<3x5xf32>", "tensor<4x1xi32>", "tensor<4x5xf32>"}, []string{"tensor<3x5xf32>"},
		`%0 = graph.scatter_nd %arg0, %arg1, %arg2 : (tensor<3x5xf32>, tensor<4x1xi32>, tensor<4x5xf32>) -> tensor<3x5xf32>`, ""},
}

// TestEveryStructuralOpCompiledMatchesInterpreter runs each structural
// graph op through `tessera run` (compiled x86-64 code) and compares every
// result with the graph-level reference interpreter on random inputs.
func TestEveryStructuralOpCompiledMatchesInterpreter(t *testing.T) {
	covered := map[string]bool{}
	for _, c := range structOpCases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			results := strings.Join(c.results, ", ")
			src := fmt.Sprintf("func.func @main(%s) -> (%s) {\n    %s\n    func.return %s : %s\n}\n", structParams(c), results, c.body, structRet(c), results)
			model := filepath.Join(dir, "op.mlir")
			require.NoError(t, os.WriteFile(model, []byte(src), 0o644))
			m, err := graphir.ParseString(model, src)
			require.NoError(t, err)
			require.NoError(t, graphir.Verify(m))
			m.Walk(func(op *graphir.Op) { covered[op.Name] = true })

			r := rand.New(rand.NewPCG(11, uint64(len(c.name))))
			args := []string{"run", model}
			var ins []*graphir.Tensor
			for i, ty := range m.Funcs[0].Type.Inputs {
				tt := ty.(*graphir.TensorType)
				gt, rtT := structInput(t, r, tt)
				ins = append(ins, gt)
				p := filepath.Join(dir, fmt.Sprintf("x%d.npy", i))
				require.NoError(t, rt.WriteNPY(p, rtT))
				args = append(args, "--input", p)
			}
			for i := range c.results {
				args = append(args, "--output", filepath.Join(dir, fmt.Sprintf("y%d.npy", i)))
			}
			want, err := graphir.Interpret(m.Funcs[0], ins)
			require.NoError(t, err)
			require.Len(t, want, len(c.results))
			_, stderr, code := tessera(args...)
			require.Equal(t, 0, code, stderr)
			for k := range want {
				got := readOutput(t, filepath.Join(dir, fmt.Sprintf("y%d.npy", k)), want[k].Type.Elem)
				require.Len(t, got, len(want[k].Data))
				for i := range got {
					w := want[k].Data[i]
					if !want[k].Type.Elem.IsFloat() {
						require.Equal(t, w, got[i], "result %d element %d", k, i)
						continue
					}
					require.InDelta(t, w, got[i], 2e-5*math.Max(1, math.Abs(w)), "result %d element %d", k, i)
				}
			}
		})
	}
	for _, name := range []string{graph.ReduceSumOp, graph.ReduceMeanOp, graph.ReduceMaxOp, graph.ReduceMinOp,
		graph.ReduceProdOp, graph.ReduceL2Op, graph.ReduceLogSumExpOp, graph.LogSoftmaxOp,
		graph.SplitOp, graph.SliceOp, graph.GatherOp, graph.GatherElementsOp, graph.GatherNDOp, graph.ScatterElementsOp, graph.ScatterNDOp, graph.ResizeOp, graph.PadOp, graph.ExpandOp, graph.TileOp,
		graph.ArgMaxOp, graph.ArgMinOp, graph.TopKOp, graph.LSTMOp, graph.GRUOp, graph.RNNOp, graph.EinsumOp} {
		assert.True(t, covered[name], "no compiled test for %s", name)
	}
}

// init adds every structural case with a single f32 result (the split one
// returns the pieces concatenated; "argmax as f32", "argmin as f32" and
// "topk values plus indices" cast the i64 indices) to opCases, so that
// TestEveryGraphOpCompiledMatchesInterpreter covers these ops too.
func init() {
	for _, c := range structOpCases {
		if len(c.results) == 1 && c.ret == "" && strings.HasSuffix(c.results[0], "f32>") {
			opCases = append(opCases, opCase{name: c.name, ins: c.ins, result: c.results[0], body: c.body})
		}
	}
}

// structInput draws a random argument of type tt: f32 in [−2, 2), or
// integers in [−2, 1] (valid indices, negative ones included, of any
// dimension of size ≥ 2).
func structInput(t *testing.T, r *rand.Rand, tt *graphir.TensorType) (*graphir.Tensor, *rt.Tensor) {
	gt := graphir.NewZeroTensor(tt)
	for j := range gt.Data {
		gt.Data[j] = r.Float64()*4 - 2
		if tt.Elem.IsInt() {
			gt.Data[j] = math.Floor(gt.Data[j])
		}
	}
	var out *rt.Tensor
	var err error
	switch tt.Elem {
	case graphir.I64:
		out, err = rt.FromSlice(tt.Shape, convertSlice[int64](gt.Data))
	case graphir.I32:
		out, err = rt.FromSlice(tt.Shape, convertSlice[int32](gt.Data))
	default:
		f := convertSlice[float32](gt.Data)
		for j := range f {
			gt.Data[j] = float64(f[j])
		}
		out, err = rt.FromSlice(tt.Shape, f)
	}
	require.NoError(t, err)
	return gt, out
}

func convertSlice[T int32 | int64 | float32](xs []float64) []T {
	out := make([]T, len(xs))
	for i, x := range xs {
		out[i] = T(x)
	}
	return out
}

// TestArgTopKCompiledSpecialValues: compiled argmax/argmin/topk on ties,
// ±0, ±inf and NaN give exactly what the graph interpreter gives (NaN is
// the most extreme value, ties go by position; values keep ±inf, NaN and
// the sign of zero).
func TestArgTopKCompiledSpecialValues(t *testing.T) {
	inf, nan, negz := float32(math.Inf(1)), float32(math.NaN()), float32(math.Copysign(0, -1))
	data := []float32{
		1, 3, 3, -2, 3,
		-inf, -inf, -inf, -inf, -inf,
		2, nan, inf, nan, -inf,
		0, negz, -1, negz, 0,
		inf, 5, nan, -inf, inf,
	}
	const x = "tensor<5x5xf32>"
	results := []string{"tensor<5xi64>", "tensor<5xi64>", "tensor<5xi64>", "tensor<5x3xf32>", "tensor<5x3xi64>", "tensor<5x3xf32>", "tensor<5x3xi64>"}
	src := fmt.Sprintf(`func.func @main(%%x: %[1]s) -> (%[2]s) {
    %%0 = graph.argmax %%x {axis = 1, keepdims = false} : (%[1]s) -> tensor<5xi64>
    %%1 = graph.argmax %%x {axis = 1, keepdims = false, select_last_index = true} : (%[1]s) -> tensor<5xi64>
    %%2 = graph.argmin %%x {axis = 1, keepdims = false, select_last_index = true} : (%[1]s) -> tensor<5xi64>
    %%3:2 = graph.topk %%x {k = 3} : (%[1]s) -> (tensor<5x3xf32>, tensor<5x3xi64>)
    %%4:2 = graph.topk %%x {k = 3, largest = false} : (%[1]s) -> (tensor<5x3xf32>, tensor<5x3xi64>)
    func.return %%0, %%1, %%2, %%3#0, %%3#1, %%4#0, %%4#1 : %[2]s
}
`, x, strings.Join(results, ", "))
	dir := t.TempDir()
	model := filepath.Join(dir, "special.mlir")
	require.NoError(t, os.WriteFile(model, []byte(src), 0o644))
	m, err := graphir.ParseString(model, src)
	require.NoError(t, err)
	require.NoError(t, graphir.Verify(m))
	in := graphir.NewZeroTensor(graphir.NewTensor(graphir.F32, 5, 5))
	for i, v := range data {
		in.Data[i] = float64(v)
	}
	xt, err := rt.FromSlice([]int64{5, 5}, data)
	require.NoError(t, err)
	require.NoError(t, rt.WriteNPY(filepath.Join(dir, "x.npy"), xt))
	args := []string{"run", model, "--input", filepath.Join(dir, "x.npy")}
	for i := range results {
		args = append(args, "--output", filepath.Join(dir, fmt.Sprintf("y%d.npy", i)))
	}
	want, err := graphir.Interpret(m.Funcs[0], []*graphir.Tensor{in})
	require.NoError(t, err)
	_, stderr, code := tessera(args...)
	require.Equal(t, 0, code, stderr)
	for k, w := range want {
		got := readOutput(t, filepath.Join(dir, fmt.Sprintf("y%d.npy", k)), w.Type.Elem)
		for i, wv := range w.Data {
			same := wv == got[i] && math.Signbit(wv) == math.Signbit(got[i]) || math.IsNaN(wv) && math.IsNaN(got[i])
			require.True(t, same, "result %d element %d: got %v, want %v (all: %v)", k, i, got[i], wv, got)
		}
	}
	assert.Equal(t, []float64{1, 0, 1, 0, 2}, want[0].Data, "argmax: first maximum, NaN first")
}

// structParams is the case's parameter list (%arg0: type, ...).
func structParams(c structOpCase) string {
	var params []string
	for i, ty := range c.ins {
		params = append(params, fmt.Sprintf("%%arg%d: %s", i, ty))
	}
	return strings.Join(params, ", ")
}

// structRet is the returned values ("%0" when the case names none).
func structRet(c structOpCase) string {
	if c.ret == "" {
		return "%0"
	}
	return c.ret
}
