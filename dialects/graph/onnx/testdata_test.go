package onnx

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/tessera-ml/tessera/dialects/graph/onnx/onnxpb"
	"github.com/tessera-ml/tessera/graphir"
)

// nodeTests is Debian's libonnx-testdata (ONNX 1.12.0 backend node tests).
const nodeTests = "/usr/share/libonnx-testdata/data/node"

func needNodeTests(t testing.TB) {
	if _, err := os.Stat(nodeTests); errors.Is(err, os.ErrNotExist) {
		t.Skipf("%s is absent: install Debian's libonnx-testdata (make deps)", nodeTests)
	}
}

func readTensorPB(t *testing.T, path string) *graphir.Tensor {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var tp onnxpb.TensorProto
	require.NoError(t, proto.Unmarshal(data, &tp))
	x, err := decodeTensor(&tp)
	require.NoError(t, err)
	return x
}

// nodeCase adapts a node test to what the importer accepts: bind lists
// the graph inputs that are shape-like parameters (Reshape's shape,
// Slice's starts, Clip's min, ...) which the importer needs constant; they
// become initializers holding test_data_set_0's values.
type nodeCase struct {
	name string
	bind []int
}

// runNodeTest imports a node test, interprets @main on test_data_set_0 and
// compares with its expected outputs (|Δ| ≤ 1e-5 + 1e-3·|want|).
func runNodeTest(t *testing.T, c nodeCase) *graphir.Module {
	t.Helper()
	dir := filepath.Join(nodeTests, c.name)
	data, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
	require.NoError(t, err)
	var mp onnxpb.ModelProto
	require.NoError(t, proto.Unmarshal(data, &mp))
	bound := map[int]bool{}
	for _, i := range c.bind {
		bound[i] = true
		var tp onnxpb.TensorProto
		raw, err := os.ReadFile(filepath.Join(dir, "test_data_set_0", fmt.Sprintf("input_%d.pb", i)))
		require.NoError(t, err)
		require.NoError(t, proto.Unmarshal(raw, &tp))
		tp.Name = proto.String(mp.Graph.Input[i].GetName())
		mp.Graph.Initializer = append(mp.Graph.Initializer, &tp)
	}
	data, err = proto.Marshal(&mp)
	require.NoError(t, err)
	m, err := ImportBytes("model.onnx", data)
	require.NoError(t, err)
	f := m.Lookup("main")
	var args []*graphir.Tensor
	for i := range mp.Graph.Input {
		if !bound[i] {
			args = append(args, readTensorPB(t, filepath.Join(dir, "test_data_set_0", fmt.Sprintf("input_%d.pb", i))))
		}
	}
	got, err := graphir.Interpret(f, args)
	require.NoError(t, err)
	require.Len(t, got, len(mp.Graph.Output))
	for i, g := range got {
		want := readTensorPB(t, filepath.Join(dir, "test_data_set_0", fmt.Sprintf("output_%d.pb", i)))
		require.Equal(t, want.Type.String(), g.Type.String(), "output %d type", i)
		for k := range want.Data {
			w := want.Data[k]
			require.LessOrEqual(t, math.Abs(g.Data[k]-w), 1e-5+1e-3*math.Abs(w), "output %d element %d: got %g want %g", i, k, g.Data[k], w)
		}
	}
	return m
}

func TestNodeTestData(t *testing.T) {
	needNodeTests(t)
	for _, c := range []nodeCase{
		{name: "test_relu"},
		{name: "test_conv_with_strides_padding"},
		{name: "test_conv_with_strides_no_padding"},
		{name: "test_conv_with_autopad_same"},
		{name: "test_gemm_default_zero_bias"},
		{name: "test_gemm_default_single_elem_vector_bias"},
		{name: "test_gemm_all_attributes"},
		{name: "test_maxpool_2d_pads"},
		{name: "test_maxpool_2d_same_upper"},
		{name: "test_maxpool_2d_same_lower"},
		{name: "test_maxpool_2d_ceil"},
		{name: "test_maxpool_2d_dilations"},
		{name: "test_averagepool_2d_pads_count_include_pad"},
		{name: "test_averagepool_2d_same_lower"},
		{name: "test_softmax_axis_1"},
		{name: "test_softmax_example"},
		{name: "test_batchnorm_example"},
		{name: "test_batchnorm_epsilon"},
		{name: "test_globalaveragepool"},
		{name: "test_flatten_axis2"},
		{name: "test_transpose_default"},
		{name: "test_concat_2d_axis_1"},
		{name: "test_matmul_3d"},
		{name: "test_reshape_reordered_all_dims", bind: []int{1}},
		{name: "test_reshape_negative_dim", bind: []int{1}},
		{name: "test_squeeze", bind: []int{1}},
		{name: "test_unsqueeze_two_axes", bind: []int{1}},
		{name: "test_shape"},
		{name: "test_sigmoid"},
		{name: "test_tanh"},
		{name: "test_add_bcast"},
		{name: "test_div"},
		{name: "test_mul_bcast"},
		{name: "test_sub"},
		{name: "test_constant"},
		{name: "test_identity"},
		{name: "test_clip", bind: []int{1, 2}},
		{name: "test_clip_default_min", bind: []int{1}},
		{name: "test_leakyrelu"},
		{name: "test_elu"},
		{name: "test_selu"},
		{name: "test_hardsigmoid"},
		{name: "test_hardswish"},
		{name: "test_prelu_broadcast"},
		{name: "test_softplus"},
		{name: "test_softsign"},
		{name: "test_exp"},
		{name: "test_log"},
		{name: "test_sqrt"},
		{name: "test_erf"},
		{name: "test_atan"},
		{name: "test_atan_example"},
		{name: "test_sin"},
		{name: "test_cos_example"},
		{name: "test_tan"},
		{name: "test_asin"},
		{name: "test_acos_example"},
		{name: "test_sinh"},
		{name: "test_cosh_example"},
		{name: "test_asinh"},
		{name: "test_acosh"},
		{name: "test_atanh"},
		{name: "test_mod_mixed_sign_int32"},
		{name: "test_mod_mixed_sign_int8"},
		{name: "test_mod_int64_fmod"},
		{name: "test_mod_mixed_sign_float64"},
		{name: "test_mod_broadcast"},
		{name: "test_celu"},
		{name: "test_shrink_hard"},
		{name: "test_shrink_soft"},
		{name: "test_elu_default"},
		{name: "test_reduce_log_sum"},
		{name: "test_globalmaxpool"},
		{name: "test_neg"},
		{name: "test_abs"},
		{name: "test_reciprocal"},
		{name: "test_floor"},
		{name: "test_ceil"},
		{name: "test_sign"},
		{name: "test_pow"},
		{name: "test_equal"},
		{name: "test_less"},
		{name: "test_greater"},
		{name: "test_less_equal"},
		{name: "test_greater_equal"},
		{name: "test_not_2d"},
		{name: "test_and_bcast3v1d"},
		{name: "test_or2d"},
		{name: "test_where_example"},
		{name: "test_max_example"},
		{name: "test_min_example"},
		{name: "test_sum_example"},
		{name: "test_mean_example"},
		{name: "test_cast_FLOAT_to_DOUBLE"},
		{name: "test_reduce_mean_default_axes_keepdims_example"},
		{name: "test_reduce_sum_keepdims_example", bind: []int{1}},
		{name: "test_reduce_max_do_not_keepdims_example"},
		{name: "test_reduce_min_keepdims_random"},
		{name: "test_reduce_prod_default_axes_keepdims_example"},
		{name: "test_reduce_l2_keep_dims_example"},
		{name: "test_reduce_log_sum_exp_default_axes_keepdims_example"},
		{name: "test_split_equal_parts_2d"},
		{name: "test_split_variable_parts_2d", bind: []int{1}},
		{name: "test_slice", bind: []int{1, 2, 3, 4}},
		{name: "test_slice_neg_steps", bind: []int{1, 2, 3, 4}},
		{name: "test_slice_default_axes", bind: []int{1, 2}},
		{name: "test_gather_0", bind: []int{1}},
		{name: "test_gather_1", bind: []int{1}},
		{name: "test_constant_pad", bind: []int{1, 2}},
		{name: "test_edge_pad", bind: []int{1}},
		{name: "test_reflect_pad", bind: []int{1}},
		{name: "test_expand_dim_changed", bind: []int{1}},
		{name: "test_logsoftmax_axis_1"},
		{name: "test_tile", bind: []int{1}},
		{name: "test_range_float_type_positive_delta", bind: []int{0, 1, 2}},
		{name: "test_constantofshape_float_ones", bind: []int{0}},
		{name: "test_size"},
		{name: "test_xor_bcast3v1d"},
		{name: "test_pow_types_int64_float32"},
		{name: "test_pow_types_float32_int64"},
		{name: "test_castlike_FLOAT_to_DOUBLE"},
		{name: "test_thresholdedrelu"},
		{name: "test_reduce_sum_square_default_axes_keepdims_example"},
		{name: "test_reduce_l1_keep_dims_example"},
		{name: "test_reduce_log_sum_asc_axes"},
		{name: "test_dropout_default_mask"},
		{name: "test_argmax_negative_axis_keepdims_random_select_last_index"},
		{name: "test_argmin_no_keepdims_example"},
		{name: "test_top_k", bind: []int{1}},
		{name: "test_top_k_negative_axis", bind: []int{1}},
		{name: "test_top_k_smallest", bind: []int{1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(nodeTests, c.name)); err != nil {
				t.Fatalf("node test %s is missing: %v", c.name, err)
			}
			runNodeTest(t, c)
		})
	}
}
