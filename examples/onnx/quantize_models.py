#!/usr/bin/python3
"""Post-training int8 quantization of ResNet-18 and MobileNetV2 (the
examples/onnx models: torchvision architectures, random weights under
torch.manual_seed(0), as export_models.py builds them): output SQNR of the
quantized model against its f32 self, Tessera and PyTorch.

Run from the repository root after `make build` and
`/usr/bin/python3 examples/onnx/export_models.py resnet18 mobilenet_v2`
(Debian's python3-torch, python3-torchvision; no network needed):

    /usr/bin/python3 examples/onnx/quantize_models.py [MODEL ...]

Data: 32 calibration inputs and 8 held-out inputs, 1x3x224x224 standard
normal (torch.Generator seeds 2 and 3).

  Tessera  bin/tessera quantize MODEL.onnx --calibrate c0.npy ... c31.npy
           (minmax; per-channel symmetric int8 weights, per-tensor ui8
           activations, QDQ form), compiled once, run on the 8 held-out
           inputs; SQNR against Tessera's f32 compile of MODEL.onnx; the
           same with --integer (the contractions whose result is
           quantized again as integer kernels; how many is printed), and
           with --integer --reduce-range (7-bit activations)
  PyTorch  torchvision.models.quantization's quantizable MODEL with the
           same weights, fuse_model(), get_default_qconfig(engine) (fbgemm,
           or onednn where this PyTorch lacks fbgemm: Debian's build),
           prepare, the 32 calibration inputs, convert; SQNR against the
           f32 model

SQNR = 10·log10(Σ ref² / Σ (ref − quantized)²) over the 8 outputs, in dB.
With random weights MobileNetV2's outputs are of the order of 1e-9:
PyTorch's observers clamp a scale at float32's epsilon (1.2e-7), so its
quantized model outputs 0 (0 dB); Tessera's scales follow the range.
"""

import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.ao.quantization as tq
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
TESSERA = os.path.join(HERE, "..", "..", "bin", "tessera")
CALIBRATION, HELD_OUT = 32, 8
MODELS = {
    "resnet18": (torchvision.models.resnet18, torchvision.models.quantization.resnet18),
    "mobilenet_v2": (torchvision.models.mobilenet_v2, torchvision.models.quantization.mobilenet_v2),
}


def inputs(seed, n):
    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(1, 3, 224, 224, generator=gen, dtype=torch.float32) for _ in range(n)]


def sqnr(ref, got):
    ref, got = np.concatenate([r.ravel() for r in ref]), np.concatenate([g.ravel() for g in got])
    return 10 * np.log10(np.sum(ref.astype(np.float64) ** 2) / np.sum((ref.astype(np.float64) - got) ** 2))


def engine():
    for e in ("fbgemm", "onednn", "x86", "qnnpack"):
        if e in torch.backends.quantized.supported_engines:
            return e
    raise SystemExit("this PyTorch has no quantized engine")


def torch_sqnr(name, calib, held):
    float_build, quant_build = MODELS[name]
    torch.manual_seed(0)
    fm = float_build(weights=None).eval()
    with torch.no_grad():
        ref = [fm(x).numpy() for x in held]
        eng = engine()
        torch.backends.quantized.engine = eng
        qm = quant_build(weights=None, quantize=False)
        qm.load_state_dict(fm.state_dict())
        qm.eval()
        qm.fuse_model()
        qm.qconfig = tq.get_default_qconfig(eng)
        tq.prepare(qm, inplace=True)
        for x in calib:
            qm(x)
        tq.convert(qm, inplace=True)
        got = [qm(x).numpy() for x in held]
    return sqnr(ref, got), eng


def tessera(*args):
    return subprocess.run([TESSERA, *args], check=True, capture_output=True, text=True)


def tessera_sqnr(name, calib, held, work):
    onnx_path = os.path.join(HERE, name + ".onnx")
    calib_paths, held_paths = [], []
    for i, x in enumerate(calib):
        calib_paths.append(os.path.join(work, "c%d.npy" % i))
        np.save(calib_paths[-1], x.numpy())
    for i, x in enumerate(held):
        held_paths.append(os.path.join(work, "h%d.npy" % i))
        np.save(held_paths[-1], x.numpy())
    q_mlir = os.path.join(work, name + ".int8.mlir")
    i_mlir = os.path.join(work, name + ".integer.mlir")
    r_mlir = os.path.join(work, name + ".integer7.mlir")
    args = ["quantize", onnx_path]
    for p in calib_paths:
        args += ["--calibrate", p]
    tessera(*args, "-o", q_mlir)
    folded = tessera(*args, "--integer", "-o", i_mlir).stderr.strip()
    tessera(*args, "--integer", "--reduce-range", "-o", r_mlir)
    outs = {}
    for kind, model in (("f32", onnx_path), ("int8", q_mlir), ("integer", i_mlir), ("integer7", r_mlir)):
        so = os.path.join(work, "%s_%s.so" % (name, kind))
        tessera("compile", model, "-o", so)
        outs[kind] = []
        for i, h in enumerate(held_paths):
            y = os.path.join(work, "y_%s_%d.npy" % (kind, i))
            tessera("run", so, "--input", h, "--output", y)
            outs[kind].append(np.load(y))
    ymax = max(float(np.abs(y).max()) for y in outs["f32"])
    got = [sqnr(outs["f32"], outs[k]) for k in ("int8", "integer", "integer7")]
    return got, folded[folded.rfind("; ") + 2 : -1], ymax


def main(argv):
    torch.set_num_threads(1)
    names = argv or list(MODELS)
    calib, held = inputs(2, CALIBRATION), inputs(3, HELD_OUT)
    print("%d calibration and %d held-out inputs, 1x3x224x224 N(0, 1)" % (CALIBRATION, HELD_OUT))
    print("%-14s %18s %26s %20s %24s %12s" % ("model", "Tessera int8 SQNR", "with --integer", "and --reduce-range", "PyTorch int8 SQNR", "max |y f32|"))
    for name in names:
        if not os.path.exists(os.path.join(HERE, name + ".onnx")):
            sys.exit("%s.onnx is missing: run /usr/bin/python3 examples/onnx/export_models.py %s" % (name, name))
        with tempfile.TemporaryDirectory() as work:
            (t, ti, tr), folded, ymax = tessera_sqnr(name, calib, held, work)
        p, eng = torch_sqnr(name, calib, held)
        print("%-14s %15.1f dB %8.1f dB (%s) %17.1f dB %15.1f dB (%s) %12.3g" % (name, t, ti, folded, tr, p, eng, ymax))


if __name__ == "__main__":
    main(sys.argv[1:])
