#!/usr/bin/python3
"""PyTorch anchor for whole models (bench/model_vs_torch.sh).

  /usr/bin/python3 bench/torch_model.py --model resnet18 --input x.npy --threads 2

Builds torchvision.models.<model>(weights=None) in eval mode — or, for
--model lenet5 and mlp, the digits models of examples/digits_models.py
(bench/small_vs_torch.sh) with their random initial weights — (latency
does not depend on the weights' values), times it on the input (or a random
one of --shape) in each mode that works — eager, torch.jit.freeze of the
traced module, torch.jit.optimize_for_inference — under
torch.inference_mode() with torch.set_num_threads(threads); every mode's
output must match eager's. Each mode gets a short probe; the fastest is
timed in full (warmup untimed calls, then at least --repeats calls lasting
at least --min-time seconds). Prints one line:
  pytorch resnet18: median 13.102 ms (mode jit.freeze, 2 threads, 77 runs, torch 1.13.1)

With --quantized CALIB.npy[,CALIB.npy...] the model is instead
torchvision.models.quantization.<model> (the quantizable ResNet-18,
MobileNetV2, ...), fused (fuse_model), given the default qconfig of the
first quantized engine this PyTorch has (fbgemm, x86, onednn, qnnpack),
calibrated on the given batches and converted: PyTorch's own
post-training static int8 model (bench/int8.sh compares it with
Tessera's on the same calibration data).
"""

import argparse
import os
import statistics
import sys

import numpy as np
import torch
import torchvision

from torch_anchor import time_fastest  # bench/torch_anchor.py, beside this script

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
from digits_models import MLP, LeNet5  # noqa: E402  examples/digits_models.py


def build(name):
    """The model: the digits models for "lenet5" and "mlp" (random initial
    weights), else torchvision.models.<name>(weights=None)."""
    digits = {"lenet5": LeNet5, "mlp": MLP}
    if name in digits:
        return digits[name]()
    return getattr(torchvision.models, name)(weights=None)


def quantized(name, calib):
    """PyTorch's post-training static int8 <name> calibrated on calib (a
    comma-separated list of .npy batches), and the engine it runs on."""
    import torch.ao.quantization as tq

    eng = next((e for e in ("fbgemm", "x86", "onednn", "qnnpack") if e in torch.backends.quantized.supported_engines), None)
    if eng is None:
        raise SystemExit("torch_model: this PyTorch has no quantized engine")
    torch.backends.quantized.engine = eng
    m = getattr(torchvision.models.quantization, name)(weights=None, quantize=False).eval()
    m.fuse_model()
    m.qconfig = tq.get_default_qconfig(eng)
    tq.prepare(m, inplace=True)
    with torch.no_grad():
        for path in calib.split(","):
            m(torch.from_numpy(np.load(path).astype(np.float32)))
    tq.convert(m, inplace=True)
    return m, eng


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="resnet18")
    ap.add_argument("--input", help=".npy input (default: random of --shape)")
    ap.add_argument("--shape", default="1,3,224,224")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--min-time", type=float, default=2.0)
    ap.add_argument("--quantized", help="calibration batches (.npy, comma-separated): time PyTorch's int8 model")
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(a.threads)
    if a.input:
        x = torch.from_numpy(np.load(a.input).astype(np.float32))
    else:
        x = torch.rand(*[int(d) for d in a.shape.split(",")]) * 2 - 1
    label = a.model
    if a.quantized:
        m, eng = quantized(a.model, a.quantized)
        label = f"{a.model} int8 ({eng})"
    else:
        m = build(a.model).eval()
    with torch.inference_mode():
        modes = {"eager": lambda: m(x)}
    try:
        with torch.no_grad():
            frozen = torch.jit.freeze(torch.jit.trace(m, x))
        modes["jit.freeze"] = lambda: frozen(x)
        with torch.no_grad():
            opt = torch.jit.optimize_for_inference(torch.jit.trace(m, x))
        modes["optimize_for_inference"] = lambda: opt(x)
    except Exception as e:  # noqa: BLE001 - a mode that fails is skipped
        print(f"torch_model: a scripted mode is unavailable: {e}", file=sys.stderr)
    with torch.inference_mode():
        ref = modes["eager"]()
        for name in list(modes)[1:]:
            got = modes[name]()
            if not torch.allclose(got, ref, rtol=1e-3, atol=1e-3 * float(ref.abs().max())):
                print(f"torch_model: mode {name} disagrees with eager; skipped", file=sys.stderr)
                del modes[name]
        best, secs = time_fastest(modes, a.warmup, a.repeats, a.min_time)
    print(f"pytorch {label}: median {statistics.median(secs) * 1e3:.4f} ms (mode {best}, "
          f"{torch.get_num_threads()} threads, {len(secs)} runs, torch {torch.__version__})")


if __name__ == "__main__":
    main()
