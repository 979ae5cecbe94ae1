package onnx

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"

	"golang.org/x/sync/errgroup"

	"github.com/tessera-ml/tessera/dialects/graph/onnx/onnxpb"
	"github.com/tessera-ml/tessera/graphir"
)

// elemType maps an ONNX TensorProto.DataType to a graph element type:
// FLOAT, DOUBLE, FLOAT16, BFLOAT16, INT8 ... INT64, UINT8 ... UINT64 and
// BOOL (STRING, complex and the 8-bit float types are unsupported).
func elemType(dt int32) (graphir.DType, error) {
	switch onnxpb.TensorProto_DataType(dt) {
	case onnxpb.TensorProto_FLOAT:
		return graphir.F32, nil
	case onnxpb.TensorProto_DOUBLE:
		return graphir.F64, nil
	case onnxpb.TensorProto_FLOAT16:
		return graphir.F16, nil
	case onnxpb.TensorProto_BFLOAT16:
		return graphir.BF16, nil
	case onnxpb.TensorProto_INT32:
		return graphir.I32, nil
	case onnxpb.TensorProto_INT64:
		return graphir.I64, nil
	case onnxpb.TensorProto_INT8:
		return graphir.I8, nil
	case onnxpb.TensorProto_INT16:
		return graphir.I16, nil
	case onnxpb.TensorProto_UINT8:
		return graphir.UI8, nil
	case onnxpb.TensorProto_UINT16:
		return graphir.UI16, nil
	case onnxpb.TensorProto_UINT32:
		return graphir.UI32, nil
	case onnxpb.TensorProto_UINT64:
		return graphir.UI64, nil
	case onnxpb.TensorProto_BOOL:
		return graphir.I1, nil
	}
	return 0, fmt.Errorf("unsupported element type %s", dataTypeName(dt))
}

// float16Value decodes the bits of a FLOAT16 (IEEE binary16) or BFLOAT16
// element.
func float16Value(kind onnxpb.TensorProto_DataType, bits uint16) float64 {
	if kind == onnxpb.TensorProto_BFLOAT16 {
		return float64(graphir.BF16ToFloat32(bits))
	}
	return graphir.F16Value(bits)
}

// dataTypeName names an ONNX data type for messages.
func dataTypeName(dt int32) string {
	if n, ok := onnxpb.TensorProto_DataType_name[dt]; ok {
		return n
	}
	return fmt.Sprintf("data type %d", dt)
}

// maxConstantElements bounds a decoded tensor so a corrupt dims field
// cannot ask for an absurd allocation.
const maxConstantElements = 1 << 28

// decodeAll decodes the initializers concurrently, one per core at a time
// (a model's weights are its bulk: ResNet-18's 11.7M elements). The error
// is that of the first tensor, in order, that fails.
func decodeAll(tps []*onnxpb.TensorProto, loc graphir.Location) ([]*value, error) {
	out := make([]*value, len(tps))
	errs := make([]error, len(tps))
	var eg errgroup.Group
	eg.SetLimit(runtime.GOMAXPROCS(0))
	for i, tp := range tps {
		eg.Go(func() error {
			out[i], errs[i] = decodeInitializer(tp, loc)
			return nil
		})
	}
	eg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// decodeInitializer decodes an initializer: a float tensor given as
// raw_data keeps those bytes as its elements (graphir.NewRawDense,
// shared with the message, not widened to float64), so the weights are
// held once, in their storage size; every other tensor is decoded by
// decodeTensor.
func decodeInitializer(tp *onnxpb.TensorProto, loc graphir.Location) (*value, error) {
	dt, n, err := checkTensor(tp)
	if err != nil {
		return nil, err
	}
	raw := tp.GetRawData()
	if raw == nil || !dt.IsFloat() {
		t, err := decodeTensor(tp)
		return constValue(t, loc), err
	}
	if size := dt.Format().Size(); int64(len(raw)) != n*int64(size) {
		return nil, fmt.Errorf("tensor '%s' of shape %v has %d bytes of raw_data, want %d (%d elements of %d bytes)", tp.GetName(), tp.GetDims(), len(raw), n*int64(size), n, size)
	}
	t := graphir.NewTensor(dt, append([]int64{}, tp.GetDims()...)...)
	return &value{raw: graphir.NewRawDense(t, raw), loc: loc}, nil
}

// checkTensor checks that a TensorProto can be decoded (its data inside
// the model, not segmented, a known data type, a sane element count) and
// returns its element type and count.
func checkTensor(tp *onnxpb.TensorProto) (graphir.DType, int64, error) {
	if tp.GetDataLocation() == onnxpb.TensorProto_EXTERNAL || len(tp.GetExternalData()) > 0 {
		return 0, 0, fmt.Errorf("tensor '%s' keeps its data in an external file, which Tessera does not read; save the model with its weights inside (onnx.save_model(..., save_as_external_data=False))", tp.GetName())
	}
	if tp.GetSegment() != nil {
		return 0, 0, fmt.Errorf("tensor '%s' is segmented, which is not supported", tp.GetName())
	}
	dt, err := elemType(tp.GetDataType())
	if err != nil {
		return 0, 0, fmt.Errorf("tensor '%s': %v", tp.GetName(), err)
	}
	n := int64(1)
	for _, d := range tp.GetDims() {
		if d < 0 {
			return 0, 0, fmt.Errorf("tensor '%s' has negative dimension %d", tp.GetName(), d)
		}
		if d > 0 && n > maxConstantElements/d {
			return 0, 0, fmt.Errorf("tensor '%s' is too large (dims %v)", tp.GetName(), tp.GetDims())
		}
		n *= d
	}
	if n > maxConstantElements {
		return 0, 0, fmt.Errorf("tensor '%s' is too large (dims %v)", tp.GetName(), tp.GetDims())
	}
	return dt, n, nil
}

// decodeTensor decodes a TensorProto (typed fields or raw_data,
// little-endian) into a reference tensor. External data is refused.
func decodeTensor(tp *onnxpb.TensorProto) (*graphir.Tensor, error) {
	dt, n, err := checkTensor(tp)
	if err != nil {
		return nil, err
	}
	data := make([]float64, n)
	raw := tp.GetRawData()
	kind := onnxpb.TensorProto_DataType(tp.GetDataType())
	count := func(have int) error {
		if int64(have) != n {
			return fmt.Errorf("tensor '%s' of shape %v holds %d elements, want %d", tp.GetName(), tp.GetDims(), have, n)
		}
		return nil
	}
	if raw != nil {
		size := max(1, dt.Bits()/8)
		if len(raw)%size != 0 {
			return nil, fmt.Errorf("tensor '%s': raw_data has %d bytes, not a multiple of %d", tp.GetName(), len(raw), size)
		}
		if err := count(len(raw) / size); err != nil {
			return nil, err
		}
		le := binary.LittleEndian
		for i := range data {
			if kind == onnxpb.TensorProto_FLOAT { // the common case, without the switch per element
				for ; i < len(data); i++ {
					data[i] = float64(math.Float32frombits(le.Uint32(raw[4*i:])))
				}
				break
			}
			b := raw[i*size:]
			switch kind {
			case onnxpb.TensorProto_FLOAT:
				data[i] = float64(math.Float32frombits(le.Uint32(b)))
			case onnxpb.TensorProto_DOUBLE:
				data[i] = math.Float64frombits(le.Uint64(b))
			case onnxpb.TensorProto_FLOAT16, onnxpb.TensorProto_BFLOAT16:
				data[i] = float16Value(kind, le.Uint16(b))
			case onnxpb.TensorProto_INT32:
				data[i] = float64(int32(le.Uint32(b)))
			case onnxpb.TensorProto_INT64:
				data[i] = float64(int64(le.Uint64(b)))
			case onnxpb.TensorProto_INT8:
				data[i] = float64(int8(b[0]))
			case onnxpb.TensorProto_INT16:
				data[i] = float64(int16(le.Uint16(b)))
			case onnxpb.TensorProto_UINT8, onnxpb.TensorProto_BOOL:
				data[i] = float64(b[0])
			case onnxpb.TensorProto_UINT16:
				data[i] = float64(le.Uint16(b))
			case onnxpb.TensorProto_UINT32:
				data[i] = float64(le.Uint32(b))
			case onnxpb.TensorProto_UINT64:
				data[i] = float64(le.Uint64(b))
			}
		}
	} else {
		switch kind {
		case onnxpb.TensorProto_FLOAT:
			if err := count(len(tp.GetFloatData())); err != nil {
				return nil, err
			}
			for i, v := range tp.GetFloatData() {
				data[i] = float64(v)
			}
		case onnxpb.TensorProto_DOUBLE:
			if err := count(len(tp.GetDoubleData())); err != nil {
				return nil, err
			}
			copy(data, tp.GetDoubleData())
		case onnxpb.TensorProto_INT64:
			if err := count(len(tp.GetInt64Data())); err != nil {
				return nil, err
			}
			for i, v := range tp.GetInt64Data() {
				data[i] = float64(v)
			}
		case onnxpb.TensorProto_UINT32, onnxpb.TensorProto_UINT64:
			if err := count(len(tp.GetUint64Data())); err != nil {
				return nil, err
			}
			for i, v := range tp.GetUint64Data() {
				data[i] = float64(v)
			}
		default: // int32, int16, int8, uint16, uint8, bool, float16 and bfloat16 (bits) are stored in int32_data
			if err := count(len(tp.GetInt32Data())); err != nil {
				return nil, err
			}
			for i, v := range tp.GetInt32Data() {
				switch kind {
				case onnxpb.TensorProto_FLOAT16, onnxpb.TensorProto_BFLOAT16:
					data[i] = float16Value(kind, uint16(v))
					continue
				case onnxpb.TensorProto_INT8:
					v = int32(int8(v))
				case onnxpb.TensorProto_INT16:
					v = int32(int16(v))
				case onnxpb.TensorProto_UINT8:
					v = int32(uint8(v))
				case onnxpb.TensorProto_UINT16:
					v = int32(uint16(v))
				case onnxpb.TensorProto_BOOL:
					if v != 0 {
						v = 1
					}
				}
				data[i] = float64(v)
			}
		}
	}
	t := &graphir.Tensor{Type: graphir.NewTensor(dt, append([]int64{}, tp.GetDims()...)...), Data: data}
	return t.Round(), nil
}
