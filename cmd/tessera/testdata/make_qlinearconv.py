#!/usr/bin/env python3
"""Writes qlinearconv.onnx: an ONNX QLinearConv (opset 13) whose weight,
per-channel weight scales, zero points and int32 bias are initializers,
as quantized models carry them: ui8 x of 1x3x9x8, int8 w of 5x3x3x3,
stride 2, pads 1, ui8 output. TestONNXFoldQDQ runs it with and without
--fold-qdq. Run with Debian's python3-onnx: /usr/bin/python3 make_qlinearconv.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(11)
w = rng.integers(-127, 128, size=(5, 3, 3, 3), dtype=np.int8)
inits = [
    numpy_helper.from_array(np.array(0.02, dtype=np.float32), "x_scale"),
    numpy_helper.from_array(np.array(128, dtype=np.uint8), "x_zero_point"),
    numpy_helper.from_array(w, "w"),
    numpy_helper.from_array(rng.uniform(0.002, 0.02, size=5).astype(np.float32), "w_scale"),
    numpy_helper.from_array(np.zeros(5, dtype=np.int8), "w_zero_point"),
    numpy_helper.from_array(np.array(0.05, dtype=np.float32), "y_scale"),
    numpy_helper.from_array(np.array(20, dtype=np.uint8), "y_zero_point"),
    numpy_helper.from_array(rng.integers(-3000, 3000, size=5).astype(np.int32), "B"),
]
node = helper.make_node(
    "QLinearConv",
    ["x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point", "y_scale", "y_zero_point", "B"],
    ["y"],
    strides=[2, 2],
    pads=[1, 1, 1, 1],
)
graph = helper.make_graph(
    [node],
    "qlinearconv",
    [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 3, 9, 8])],
    [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 5, 5, 4])],
    initializer=inits,
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
onnx.save(model, os.path.join(os.path.dirname(os.path.abspath(__file__)), "qlinearconv.onnx"))
