#!/usr/bin/python3
"""Post-training static int8 quantization of LeNet-5 and the MLP: Tessera's
`tessera quantize` against PyTorch's torch.ao.quantization, same data.

Run from the repository root after `make build` (Debian's python3-torch and
python3-sklearn; no network needed):

    /usr/bin/python3 examples/quantize_digits.py [--method minmax|percentile|entropy]

It retrains both models exactly as examples/train_digits.py does (same
seeds, so the weights of examples/lenet5.mlir and examples/mlp.mlir; the
held-out logits are checked against the committed ones), writes one
calibration batch of 360 *training* images per model (digits_calib_x.npy,
digits28_calib_x.npy, beside this script), and quantizes:

  PyTorch  eager-mode PTQ on the fbgemm backend, or onednn where PyTorch
           lacks fbgemm (Debian's build): QuantStub/DeQuantStub around the
           model, get_default_qconfig(engine) (per-channel symmetric int8
           weights, histogram-observed quint8 activations), prepare, one
           calibration pass, convert
  Tessera  bin/tessera quantize MODEL.mlir --calibrate CALIB.npy --method M
           (per-channel symmetric int8 weights, per-tensor ui8 activations,
           QDQ form), then bin/tessera run on the held-out images

and prints, per model, the four held-out accuracies: PyTorch f32, PyTorch
int8, Tessera f32, Tessera int8.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.ao.quantization as tq

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from digits_models import MLP, LeNet5  # noqa: E402
from train_digits import EPOCHS, TORCH_SEED, digits_split, train, upsample  # noqa: E402

TESSERA = os.path.join(HERE, "..", "bin", "tessera")
CALIBRATION = 360  # training images in the calibration batch (the model's batch)


class Quantizable(torch.nn.Module):
    """model between a QuantStub and a DeQuantStub (eager-mode PTQ)."""

    def __init__(self, model):
        super().__init__()
        self.quant, self.model, self.dequant = tq.QuantStub(), model, tq.DeQuantStub()

    def forward(self, x):
        return self.dequant(self.model(self.quant(x)))


def quantized_engine():
    """fbgemm when this PyTorch has it; Debian's build has onednn (the x86
    engine that succeeds fbgemm, same default qconfig) and qnnpack."""
    for e in ("fbgemm", "onednn", "x86", "qnnpack"):
        if e in torch.backends.quantized.supported_engines:
            return e
    raise SystemExit("this PyTorch has no quantized engine")


def torch_int8(model, calib, engine):
    torch.backends.quantized.engine = engine
    q = Quantizable(model).eval()
    q.qconfig = tq.get_default_qconfig(engine)
    tq.prepare(q, inplace=True)
    with torch.no_grad():
        q(torch.from_numpy(calib))
    tq.convert(q, inplace=True)
    return q


def accuracy(logits, y):
    return float((np.asarray(logits).argmax(1) == y).mean())


def tessera_accuracy(model, x_path, y_path):
    out = subprocess.run([TESSERA, "run", model, "--input", x_path, "--labels", y_path],
                         check=True, capture_output=True, text=True).stdout
    return float(re.search(r"accuracy: ([0-9.]+)", out).group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--method", default="minmax", choices=["minmax", "percentile", "entropy"])
    args = ap.parse_args()
    torch.manual_seed(TORCH_SEED)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)

    xtr, xte, ytr, yte = digits_split()
    y_path = os.path.join(HERE, "digits_y.npy")
    assert (np.load(y_path) == yte).all(), "the held-out labels differ from examples/digits_y.npy"

    engine = quantized_engine()
    print("PyTorch %s, engine %s; Tessera calibration %s; %d calibration images, %d held-out" %
          (torch.__version__, engine, args.method, CALIBRATION, len(yte)))
    print("%-8s %12s %12s %12s %12s" % ("model", "PyTorch f32", "PyTorch int8", "Tessera f32", "Tessera int8"))
    for name, cls, size, calib_name, test_name in (
            ("lenet5", LeNet5, 32, "digits_calib_x.npy", "digits_x.npy"),
            ("mlp", MLP, 28, "digits28_calib_x.npy", "digits28_x.npy")):
        torch.manual_seed(TORCH_SEED)
        model = cls()
        train(model, upsample(xtr, size), ytr, EPOCHS[name])
        xtest = upsample(xte, size)
        with torch.no_grad():
            logits = model(torch.from_numpy(xtest)).numpy()
        committed = np.load(os.path.join(HERE, name + "_logits.npy"))
        assert np.abs(logits - committed).max() < 1e-4, "retraining did not reproduce examples/%s.mlir" % name
        calib = upsample(xtr[:CALIBRATION], size)
        calib_path = os.path.join(HERE, calib_name)
        np.save(calib_path, calib)
        with torch.no_grad():
            q_logits = torch_int8(model, calib, engine)(torch.from_numpy(xtest)).numpy()

        mlir = os.path.join(HERE, name + ".mlir")
        test_path = os.path.join(HERE, test_name)
        with tempfile.TemporaryDirectory() as d:
            qmodel = os.path.join(d, name + ".int8.mlir")
            subprocess.run([TESSERA, "quantize", mlir, "--calibrate", calib_path, "--method", args.method, "-o", qmodel],
                           check=True, capture_output=True)
            t_int8 = tessera_accuracy(qmodel, test_path, y_path)
        t_f32 = tessera_accuracy(mlir, test_path, y_path)
        print("%-8s %12.4f %12.4f %12.4f %12.4f" % (name, accuracy(logits, yte), accuracy(q_logits, yte), t_f32, t_int8))


if __name__ == "__main__":
    main()
