"""Print the symbolic input dimensions (dim_param names) of an ONNX model,
one per line, each once, in the order the inputs name them.

    /usr/bin/python3 bench/onnx_dims.py MODEL.onnx

Used by bench/threads.sh to pin them with tessera's --fix-dim.
"""
import sys

import onnx

model = onnx.load(sys.argv[1], load_external_data=False)
seen = []
for value in model.graph.input:
    for dim in value.type.tensor_type.shape.dim:
        if dim.dim_param and dim.dim_param not in seen:
            seen.append(dim.dim_param)
print("\n".join(seen))
