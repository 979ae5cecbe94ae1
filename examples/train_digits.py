#!/usr/bin/python3
"""Train LeNet-5 and a two-layer MLP on scikit-learn's digits and write them
as Tessera graph-dialect text, with the held-out inputs and PyTorch's logits
as reference fixtures.

Run from the repository root (Debian's python3-torch and python3-sklearn; no
network needed, the digits ship with scikit-learn):

    /usr/bin/python3 examples/train_digits.py

Data: sklearn.datasets.load_digits (1797 8x8 images, values 0..16), scaled to
[0, 1], split 80/20 stratified by label with a fixed seed (360 held-out
images), and upsampled bilinearly (torch.nn.functional.interpolate,
align_corners=False) to 32x32 for LeNet-5 and 28x28 for the MLP.

Models (PyTorch eval mode, CPU, float32, deterministic):
  LeNet-5: N x 1 x 32 x 32 -> conv 5x5 (6) -> relu -> maxpool 2/2 ->
           conv 5x5 (16) -> relu -> maxpool 2/2 -> flatten ->
           fc 400->120 -> relu -> fc 120->84 -> relu -> fc 84->10
  MLP:     N x 1 x 28 x 28 -> flatten -> fc 784->200 -> relu -> fc 200->10

Outputs (in examples/, next to this script):
  lenet5.mlir, mlp.mlir       graph dialect, batch = 360, weights as dense
                              graph.constant values that round-trip float32
  digits_x.npy                360x1x32x32 float32 held-out inputs (LeNet-5)
  digits28_x.npy              360x1x28x28 float32 held-out inputs (MLP)
  digits_y.npy                360 int64 held-out labels
  lenet5_logits.npy           360x10 float32 PyTorch logits
  mlp_logits.npy              360x10 float32 PyTorch logits
  pytorch_reference.json      accuracies, versions, seeds, command
"""

import json
import os
import sys

import numpy as np
import sklearn
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from digits_models import MLP, LeNet5  # examples/digits_models.py, beside this script

SPLIT_SEED = 0
TORCH_SEED = 20261121
EPOCHS = {"lenet5": 40, "mlp": 40}
BATCH = 64
LR = 1e-3
HERE = os.path.dirname(os.path.abspath(__file__))
COMMAND = "/usr/bin/python3 examples/train_digits.py"


def upsample(x8, size):
    """x8: N x 64 float32 in [0, 1] -> N x 1 x size x size float32."""
    t = torch.from_numpy(x8.reshape(-1, 1, 8, 8))
    up = F.interpolate(t, size=(size, size), mode="bilinear", align_corners=False)
    return up.numpy().astype(np.float32)


def digits_split():
    """The digits scaled to [0, 1] and split 80/20, stratified, with the
    fixed seed: (x_train, x_test, y_train, y_test), images as N x 64."""
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    return train_test_split(x, y, test_size=0.2, stratify=y, random_state=SPLIT_SEED)


def train(model, x, y, epochs):
    g = torch.Generator().manual_seed(TORCH_SEED + 1)
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    model.train()
    for _ in range(epochs):
        perm = torch.randperm(len(xt), generator=g)
        for i in range(0, len(xt), BATCH):
            idx = perm[i:i + BATCH]
            opt.zero_grad()
            loss = F.cross_entropy(model(xt[idx]), yt[idx])
            loss.backward()
            opt.step()
    model.eval()


def fmt_f32(v):
    """Shortest decimal text that reads back (decimal -> float64 -> float32,
    as graphir's parser does) to exactly the float32 v; always contains a
    '.' so the parser reads it as a float literal."""
    v = np.float32(v)
    if not np.isfinite(v):
        raise ValueError("non-finite weight %r" % v)
    s = np.format_float_positional(v, unique=True, trim="0")
    if len(s) > 12:
        s = np.format_float_scientific(v, unique=True, trim="0")
    if np.float32(float(s)) != v or np.signbit(np.float32(float(s))) != np.signbit(v):
        # Double rounding through float64 picked a neighbour: write the
        # float32 value's exact float64 image instead.
        s = repr(float(v))
        if "." not in s.split("e")[0]:
            s = s.replace("e", ".0e")
    assert np.float32(float(s)) == v and "." in s, (s, v)
    return s


def dense(a):
    a = np.asarray(a, dtype=np.float32)
    if a.ndim == 0:
        return fmt_f32(a)
    return "[" + ", ".join(dense(x) for x in a) + "]"


def ttype(shape):
    return "tensor<" + "x".join(str(d) for d in shape) + "xf32>"


class Writer:
    """Emits graph-dialect ops in their pretty form, numbering results."""

    def __init__(self):
        self.lines = []
        self.n = 0

    def value(self, text, shape):
        name = "%%%d" % self.n
        self.n += 1
        self.lines.append("    %s = %s" % (name, text))
        return name, tuple(shape)

    def constant(self, a):
        a = a.detach().numpy().astype(np.float32)
        t = ttype(a.shape)
        return self.value("graph.constant {value = dense<%s> : %s} : %s" % (dense(a), t, t), a.shape)

    def op(self, name, operands, attrs, shape):
        ins = ", ".join(v for v, _ in operands)
        a = " {%s}" % attrs if attrs else ""
        if len(operands) == 1 and operands[0][1] == tuple(shape):
            sig = ttype(shape)
        else:
            sig = "(%s) -> %s" % (", ".join(ttype(s) for _, s in operands), ttype(shape))
        return self.value("%s %s%s : %s" % (name, ins, a, sig), shape)


def conv_out(shape, w):
    n, _, h, wd = shape
    o, _, kh, kw = w.shape
    return (n, o, h - kh + 1, wd - kw + 1)


def emit_lenet5(m, n):
    w = Writer()
    x = ("%arg0", (n, 1, 32, 32))
    c1w, c1b = w.constant(m.conv1.weight), w.constant(m.conv1.bias)
    c2w, c2b = w.constant(m.conv2.weight), w.constant(m.conv2.bias)
    f1w, f1b = w.constant(m.fc1.weight), w.constant(m.fc1.bias)
    f2w, f2b = w.constant(m.fc2.weight), w.constant(m.fc2.bias)
    f3w, f3b = w.constant(m.fc3.weight), w.constant(m.fc3.bias)
    pool = "kernel = [2, 2], strides = [2, 2]"
    h = w.op("graph.conv2d", [x, c1w, c1b], "", conv_out(x[1], m.conv1.weight))
    h = w.op("graph.relu", [h], "", h[1])
    s = h[1]
    h = w.op("graph.max_pool2d", [h], pool, (s[0], s[1], s[2] // 2, s[3] // 2))
    h = w.op("graph.conv2d", [h, c2w, c2b], "", conv_out(h[1], m.conv2.weight))
    h = w.op("graph.relu", [h], "", h[1])
    s = h[1]
    h = w.op("graph.max_pool2d", [h], pool, (s[0], s[1], s[2] // 2, s[3] // 2))
    s = h[1]
    h = w.op("graph.flatten", [h], "", (n, s[1] * s[2] * s[3]))
    h = w.op("graph.gemm", [h, f1w, f1b], "transB = true", (n, 120))
    h = w.op("graph.relu", [h], "", h[1])
    h = w.op("graph.gemm", [h, f2w, f2b], "transB = true", (n, 84))
    h = w.op("graph.relu", [h], "", h[1])
    h = w.op("graph.gemm", [h, f3w, f3b], "transB = true", (n, 10))
    return w, x, h


def emit_mlp(m, n):
    w = Writer()
    x = ("%arg0", (n, 1, 28, 28))
    f1w, f1b = w.constant(m.fc1.weight), w.constant(m.fc1.bias)
    f2w, f2b = w.constant(m.fc2.weight), w.constant(m.fc2.bias)
    h = w.op("graph.flatten", [x], "", (n, 784))
    h = w.op("graph.gemm", [h, f1w, f1b], "transB = true", (n, 200))
    h = w.op("graph.relu", [h], "", h[1])
    h = w.op("graph.gemm", [h, f2w, f2b], "transB = true", (n, 10))
    return w, x, h


def module_text(header, w, x, out):
    lines = ["// " + l if l else "//" for l in header.splitlines()]
    lines.append("module {")
    lines.append("  func.func @main(%%arg0: %s) -> %s {" % (ttype(x[1]), ttype(out[1])))
    lines.extend(w.lines)
    lines.append("    func.return %s : %s" % (out[0], ttype(out[1])))
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def header(title, arch, acc, n, fname):
    return (
        "%s trained on scikit-learn's digits (8x8 images upsampled bilinearly),\n"
        "in the Tessera graph dialect with its trained float32 weights.\n"
        "%s\n"
        "Batch = the %d held-out images; PyTorch eval-mode held-out accuracy %.4f.\n"
        "Produced by examples/train_digits.py (torch %s, scikit-learn %s, numpy %s,\n"
        "split seed %d, torch seed %d); do not edit by hand. Regenerate with\n"
        "\n"
        "  %s\n"
        "\n"
        "  tessera-opt examples/%s --legalize-to-hlo --fuse\n"
        % (title, arch, n, acc, torch.__version__, sklearn.__version__,
           np.__version__, SPLIT_SEED, TORCH_SEED, COMMAND, fname)
    )


def check_roundtrip(text, params):
    """Every float written in text reads back to the float32 weights."""
    vals = []
    for line in text.splitlines():
        if "graph.constant" not in line:
            continue
        body = line[line.index("dense<") + 6:line.index("> :")]
        vals.extend(np.float32(float(t)) for t in body.replace("[", " ").replace("]", " ").replace(",", " ").split())
    want = np.concatenate([p.detach().numpy().astype(np.float32).ravel() for p in params])
    got = np.array(vals, dtype=np.float32)
    assert got.shape == want.shape and np.array_equal(got.view(np.uint32), want.view(np.uint32)), "constants do not round-trip"


def main():
    torch.manual_seed(TORCH_SEED)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)

    xtr, xte, ytr, yte = digits_split()
    n = len(yte)
    assert n == 360, n

    x32tr, x32te = upsample(xtr, 32), upsample(xte, 32)
    x28tr, x28te = upsample(xtr, 28), upsample(xte, 28)

    results = {}
    fixtures = {}
    for name, cls, xtrain, xtest in (("lenet5", LeNet5, x32tr, x32te), ("mlp", MLP, x28tr, x28te)):
        torch.manual_seed(TORCH_SEED)
        model = cls()
        train(model, xtrain, ytr, EPOCHS[name])
        with torch.no_grad():
            logits = model(torch.from_numpy(xtest)).numpy().astype(np.float32)
            train_acc = float((model(torch.from_numpy(xtrain)).argmax(1).numpy() == ytr).mean())
        acc = float((logits.argmax(1) == yte).mean())
        correct = int((logits.argmax(1) == yte).sum())
        results[name] = {
            "accuracy": acc,
            "correct": correct,
            "train_accuracy": train_acc,
            "epochs": EPOCHS[name],
            "parameters": int(sum(p.numel() for p in model.parameters())),
        }
        if name == "lenet5":
            w, xin, out = emit_lenet5(model, n)
            hdr = header("LeNet-5", "conv 5x5 (6) -> relu -> maxpool 2/2 -> conv 5x5 (16) -> relu -> maxpool 2/2 ->\n"
                         "flatten -> fc 400->120 -> relu -> fc 120->84 -> relu -> fc 84->10.", acc, n, "lenet5.mlir")
        else:
            w, xin, out = emit_mlp(model, n)
            hdr = header("A two-layer MLP", "flatten -> fc 784->200 -> relu -> fc 200->10.", acc, n, "mlp.mlir")
        text = module_text(hdr, w, xin, out)
        check_roundtrip(text, [p for p in model.parameters()])
        fixtures[name] = (text, logits)
        print("%s: held-out accuracy %.4f (%d/%d), train accuracy %.4f" % (name, acc, correct, n, train_acc))

    for name, (text, logits) in fixtures.items():
        with open(os.path.join(HERE, name + ".mlir"), "w") as f:
            f.write(text)
        np.save(os.path.join(HERE, name + "_logits.npy"), logits)
    np.save(os.path.join(HERE, "digits_x.npy"), x32te)
    np.save(os.path.join(HERE, "digits28_x.npy"), x28te)
    np.save(os.path.join(HERE, "digits_y.npy"), yte)

    ref = {
        "command": COMMAND,
        "dataset": "sklearn.datasets.load_digits, scaled to [0,1] (x/16), "
                   "train_test_split(test_size=0.2, stratify=y, random_state=%d), "
                   "bilinear upsampling (align_corners=False) to 32x32 (LeNet-5) and 28x28 (MLP)" % SPLIT_SEED,
        "held_out": n,
        "split_seed": SPLIT_SEED,
        "torch_seed": TORCH_SEED,
        "optimizer": "Adam lr=%g, batch %d, cross-entropy" % (LR, BATCH),
        "torch_version": torch.__version__,
        "sklearn_version": sklearn.__version__,
        "numpy_version": np.__version__,
        "python_version": sys.version.split()[0],
        "models": {
            "lenet5": dict(results["lenet5"], mlir="lenet5.mlir", inputs="digits_x.npy", logits="lenet5_logits.npy"),
            "mlp": dict(results["mlp"], mlir="mlp.mlir", inputs="digits28_x.npy", logits="mlp_logits.npy"),
        },
        "labels": "digits_y.npy",
    }
    with open(os.path.join(HERE, "pytorch_reference.json"), "w") as f:
        json.dump(ref, f, indent=2, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
