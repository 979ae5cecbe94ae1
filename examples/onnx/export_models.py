#!/usr/bin/python3
"""Export the ONNX example models that cmd/tessera/models_test.go checks.

Run from the repository root with Debian's Python (no network needed):

    /usr/bin/python3 examples/onnx/export_models.py [MODEL ...]

For every model (all of them when none is named) it writes, into
examples/onnx/:

  MODEL.onnx           torch.onnx.export, opset 13, constant folding on,
                       static shapes (no dynamic_axes), eval mode; the
                       *_dynamic models with dynamic_axes (DYNAMIC), their
                       inputs and outputs at several sizes as
                       MODEL_input_K.npy and MODEL_output_K.npy
  MODEL_input.npy      a fixed-seed float32 input
  MODEL_output.npy     PyTorch's float32 output on that input
  manifest.json        per model: file, opset, input/output names and shapes,
                       size in bytes; the torch/torchvision/onnx versions

The torchvision models are built with weights=None (no download) and random
initialisation under torch.manual_seed(0); the numbers are meaningless as
classifications but exercise every op and weight exactly like trained ones.
Files of 16 MB or more are listed in examples/onnx/.gitignore and are not
committed; the tests skip them with a message naming this script.
"""

import json
import os
import sys

import numpy as np
import onnx
import torch
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 13
COMMIT_LIMIT = 16 * 1024 * 1024  # bytes; larger files are git-ignored


def transformer_layer():
    return torch.nn.TransformerEncoderLayer(
        d_model=256, nhead=4, dropout=0.0, batch_first=True)


class MLP(torch.nn.Module):
    """784-200-10 with ReLU, the shape of examples/mlp.mlir (random weights)."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(784, 200)
        self.fc2 = torch.nn.Linear(200, 10)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(torch.flatten(x, 1))))


# name -> (constructor, input shape)
MODELS = {
    "resnet18": (lambda: torchvision.models.resnet18(weights=None), (1, 3, 224, 224)),
    "resnet50": (lambda: torchvision.models.resnet50(weights=None), (1, 3, 224, 224)),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(weights=None), (1, 3, 224, 224)),
    "squeezenet1_1": (lambda: torchvision.models.squeezenet1_1(weights=None), (1, 3, 224, 224)),
    "shufflenet_v2_x1_0": (lambda: torchvision.models.shufflenet_v2_x1_0(weights=None), (1, 3, 224, 224)),
    "densenet121": (lambda: torchvision.models.densenet121(weights=None), (1, 3, 224, 224)),
    "efficientnet_b0": (lambda: torchvision.models.efficientnet_b0(weights=None), (1, 3, 224, 224)),
    "transformer_encoder_layer": (transformer_layer, (1, 16, 256)),
}


def onnx_export(model, x, path, dynamic_axes=None):
    """torch.onnx.export as every model here is exported; returns the checked proto."""
    torch.onnx.export(
        model, (x,), path,
        opset_version=OPSET,
        do_constant_folding=True,
        input_names=["input"],
        output_names=["output"],
        dynamic_axes=dynamic_axes,
        training=torch.onnx.TrainingMode.EVAL,
    )
    proto = onnx.load(path)
    onnx.checker.check_model(proto)
    return proto


def export(name, build, shape):
    torch.manual_seed(0)
    model = build().eval()
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(*shape, generator=gen, dtype=torch.float32)
    # Gradients stay enabled (the parameters require grad): in eval mode
    # under no_grad, TransformerEncoderLayer takes PyTorch's fused fast path
    # (aten::_transformer_encoder_layer_fwd), which has no ONNX export. The
    # reference output comes from the same path that is exported.
    y = model(x).detach()
    path = os.path.join(HERE, name + ".onnx")
    proto = onnx_export(model, x, path)
    np.save(os.path.join(HERE, name + "_input.npy"), x.numpy().astype(np.float32))
    np.save(os.path.join(HERE, name + "_output.npy"), y.numpy().astype(np.float32))

    def dims(vi):
        return [d.dim_value for d in vi.type.tensor_type.shape.dim]

    size = os.path.getsize(path)
    return {
        "model": name,
        "file": name + ".onnx",
        "opset": OPSET,
        "inputs": [{"name": i.name, "shape": dims(i), "file": name + "_input.npy"} for i in proto.graph.input],
        "outputs": [{"name": o.name, "shape": dims(o), "file": name + "_output.npy"} for o in proto.graph.output],
        "size_bytes": size,
        "committed": size < COMMIT_LIMIT,
        "ops": sorted({n.op_type for n in proto.graph.node}),
    }


# Models exported with dynamic axes (issue 19): name -> (constructor, the
# input's symbolic dimensions {axis: name}, the input shapes to sample).
# Each sample writes NAME_input_K.npy and NAME_output_K.npy, K = 1, 2, ...
DYNAMIC = {
    "resnet18_dynamic": (lambda: torchvision.models.resnet18(weights=None), {0: "batch"},
                         [(1, 3, 224, 224), (3, 3, 224, 224), (8, 3, 224, 224)]),
    "mlp_dynamic": (MLP, {0: "batch"}, [(1, 1, 28, 28), (3, 1, 28, 28), (8, 1, 28, 28)]),
    "transformer_encoder_layer_dynamic": (transformer_layer, {0: "batch", 1: "seq"},
                                          [(1, 17, 256), (2, 64, 256), (4, 128, 256)]),
}


def export_dynamic(name, build, axes, shapes):
    torch.manual_seed(0)
    model = build().eval()
    path = os.path.join(HERE, name + ".onnx")
    samples = []
    for k, shape in enumerate(shapes, 1):
        gen = torch.Generator().manual_seed(k)
        x = torch.randn(*shape, generator=gen, dtype=torch.float32)
        y = model(x).detach()  # gradients on: see export()
        if k == 1:
            out_axes = {a: n for a, n in axes.items() if a < y.dim()}
            onnx_export(model, x, path, {"input": axes, "output": out_axes})
        xf, yf = "%s_input_%d.npy" % (name, k), "%s_output_%d.npy" % (name, k)
        np.save(os.path.join(HERE, xf), x.numpy().astype(np.float32))
        np.save(os.path.join(HERE, yf), y.numpy().astype(np.float32))
        samples.append({"input": xf, "output": yf, "shape": list(shape)})
    size = os.path.getsize(path)
    big = size >= COMMIT_LIMIT
    return {
        "model": name,
        "file": name + ".onnx",
        "opset": OPSET,
        "dynamic_axes": {str(a): n for a, n in axes.items()},
        "samples": samples,
        "size_bytes": size,
        "committed": not big,
        # a git-ignored model's samples are regenerated with it
        "ignored_samples": [f for s in samples for f in (s["input"], s["output"])] if big else [],
    }


def main(argv):
    torch.set_num_threads(1)
    names = argv or list(MODELS) + list(DYNAMIC)
    for n in names:
        if n not in MODELS and n not in DYNAMIC:
            sys.exit("unknown model %r (known: %s)" % (n, ", ".join(list(MODELS) + list(DYNAMIC))))
    manifest_path = os.path.join(HERE, "manifest.json")
    manifest = {"models": {}}
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)
    for n in names:
        if n in DYNAMIC:
            entry = export_dynamic(n, *DYNAMIC[n])
        else:
            build, shape = MODELS[n]
            entry = export(n, build, shape)
        manifest["models"][n] = entry
        print("%-26s %10d bytes  %s" % (n, entry["size_bytes"], "commit" if entry["committed"] else "git-ignored"))
    manifest["torch"] = torch.__version__
    manifest["torchvision"] = torchvision.__version__
    manifest["onnx"] = onnx.__version__
    manifest["numpy"] = np.__version__
    manifest["command"] = "/usr/bin/python3 examples/onnx/export_models.py"
    manifest["seeds"] = {"weights": "torch.manual_seed(0)", "input": "torch.Generator().manual_seed(1), torch.randn"}
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    # Everything at or above the limit is regenerated, never committed.
    big = sorted(m["file"] for m in manifest["models"].values() if not m["committed"])
    with open(os.path.join(HERE, ".gitignore"), "w") as f:
        f.write("# Written by export_models.py: model files of 16 MB or more are not\n")
        f.write("# committed; regenerate them with\n")
        f.write("#   /usr/bin/python3 examples/onnx/export_models.py\n")
        for b in big:
            f.write("/" + b + "\n")
        for m in sorted(manifest["models"]):
            for b in manifest["models"][m].get("ignored_samples", []):
                f.write("/" + b + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
