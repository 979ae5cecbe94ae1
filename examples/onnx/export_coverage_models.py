#!/usr/bin/python3
"""Export the small models of the model-coverage checks (TestCoverageModels
in cmd/tessera/models_test.go): the ops users bring beyond image
classifiers — transposed convolutions, upsampling, embeddings, recurrent
layers (also over padded batches of varied lengths), top-k/argmax heads,
opset-17 layer normalization and attention written with torch.einsum.

Run from the repository root with Debian's Python (no network needed):

    /usr/bin/python3 examples/onnx/export_coverage_models.py [MODEL ...]

For every model (all when none is named) and opset 13 and 17 it writes,
into examples/onnx/coverage/:

  MODEL_opsetN.onnx      torch.onnx.export, constant folding on, static
                         shapes, eval mode, random weights (manual_seed(0))
  MODEL_inputK.npy       fixed-seed inputs (float32, or int64 token ids)
  MODEL_outputK.npy      PyTorch's outputs on those inputs
  manifest.json          per model and opset: files, input/output names,
                         dtypes and shapes; the torch and onnx versions

All files are small (< 2 MB) and committed.
"""

import json
import math
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "coverage")
OPSETS = (13, 17)


class UNet(nn.Module):
    """A 2-level U-Net: conv blocks, max-pool down, ConvTranspose up, skip
    concatenations."""

    def __init__(self, c=8):
        super().__init__()

        def block(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.ReLU(), nn.Conv2d(o, o, 3, padding=1), nn.ReLU())

        self.enc1, self.enc2, self.mid = block(3, c), block(c, 2 * c), block(2 * c, 4 * c)
        self.up2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, stride=2)
        self.dec2 = block(4 * c, 2 * c)
        self.up1 = nn.ConvTranspose2d(2 * c, c, 3, stride=2, padding=1, output_padding=1)
        self.dec1 = block(2 * c, c)
        self.head = nn.Conv2d(c, 2, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        m = self.mid(F.max_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([self.up2(m), e2], 1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], 1))
        return self.head(d1)


class Upsampler(nn.Module):
    """nn.Upsample(nearest) and F.interpolate(bilinear) with and without
    align_corners, at integer and fractional scales."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")

    def forward(self, x):
        y = self.up(torch.relu(self.conv(x)))
        a = F.interpolate(y, size=(37, 29), mode="bilinear", align_corners=False)
        b = F.interpolate(y, scale_factor=1.5, mode="bilinear", align_corners=True)
        return a, b


class Tagger(nn.Module):
    """nn.Embedding + nn.LSTM + a per-token linear layer (batch first)."""

    def __init__(self, vocab=1000, emb=64, hidden=256, tags=10):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, batch_first=True)
        self.out = nn.Linear(hidden, tags)

    def forward(self, ids):
        h, _ = self.lstm(self.emb(ids))
        return self.out(h)


class BiGRU(nn.Module):
    """A 2-layer bidirectional nn.GRU; returns the sequence and the state."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(32, 48, num_layers=2, bidirectional=True)

    def forward(self, x):
        return self.gru(x)


class PackedBiLSTM(nn.Module):
    """A bidirectional nn.LSTM over a padded batch of varied lengths
    (pack_padded_sequence): ONNX LSTM with a constant
    sequence_lens."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 12, bidirectional=True)

    def forward(self, x):
        lens = torch.tensor([7, 4, 1])
        packed = nn.utils.rnn.pack_padded_sequence(x, lens)
        y, (h, c) = self.lstm(packed)
        y, _ = nn.utils.rnn.pad_packed_sequence(y, total_length=x.shape[0])
        return y, h, c


class GroupNormNet(nn.Module):
    """Convolutions with nn.GroupNorm (ONNX has no GroupNormalization
    before opset 18; PyTorch exports it as Reshape +
    InstanceNormalization + Reshape, Mul, Add) and nn.InstanceNorm2d."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 12, 3, padding=1)
        self.gn = nn.GroupNorm(4, 12)
        self.conv2 = nn.Conv2d(12, 6, 3, padding=1)
        self.inorm = nn.InstanceNorm2d(6, affine=True)

    def forward(self, x):
        y = F.silu(self.gn(self.conv1(x)))
        return self.inorm(self.conv2(y))


class Heads(nn.Module):
    """A small classifier with torch.topk and torch.argmax heads."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Flatten(), nn.Linear(3 * 16 * 16, 64), nn.ReLU(), nn.Linear(64, 100))

    def forward(self, x):
        logits = self.body(x)
        values, indices = torch.topk(logits, 5, dim=1)
        return values, indices, torch.argmax(logits, dim=1)


class EinsumAttention(nn.Module):
    """Multi-head self-attention written with torch.einsum in the
    [batch, seq, heads, dim] layout (scores "bqhd,bkhd->bhqk", values
    "bhqk,bkhd->bqhd"), followed by a bilinear head "bsi,oij,bsj->bso"."""

    def __init__(self, d=64, heads=4, out=8):
        super().__init__()
        self.h, self.scale = heads, 1 / math.sqrt(d // heads)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.bilinear = nn.Parameter(torch.randn(out, d, d) / d)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).reshape(b, s, 3, self.h, d // self.h).unbind(2)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) * self.scale
        y = torch.einsum("bhqk,bkhd->bqhd", scores.softmax(-1), v).reshape(b, s, d)
        y = self.proj(y) + x
        return torch.einsum("bsi,oij,bsj->bso", y, self.bilinear, x)


def transformer():
    """A pre-norm transformer encoder (LayerNormalization at opset 17)."""
    layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.0,
                                       batch_first=True, norm_first=True)
    return nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)


def floats(*shape):
    return ("float32", shape)


# name -> (constructor, inputs: (dtype, shape) or ("int64", shape, high))
MODELS = {
    "unet": (UNet, [floats(1, 3, 32, 32)]),
    "upsample": (Upsampler, [floats(1, 3, 10, 12)]),
    "lstm_tagger": (Tagger, [("int64", (1, 128), 1000)]),
    "bigru": (BiGRU, [floats(20, 2, 32)]),
    "packed_bilstm": (PackedBiLSTM, [floats(7, 3, 8)]),
    "groupnorm": (GroupNormNet, [floats(2, 3, 9, 11)]),
    "topk_heads": (Heads, [floats(2, 3, 16, 16)]),
    "transformer_prenorm": (transformer, [floats(1, 16, 64)]),
    "einsum_attention": (EinsumAttention, [floats(2, 12, 64)]),
}


def make_input(spec, gen):
    if spec[0] == "int64":
        return torch.randint(0, spec[2], spec[1], generator=gen, dtype=torch.int64)
    return torch.randn(*spec[1], generator=gen, dtype=torch.float32)


def export(name, build, specs, opset):
    torch.manual_seed(0)
    model = build().eval()
    gen = torch.Generator().manual_seed(1)
    xs = tuple(make_input(s, gen) for s in specs)
    # Gradients stay enabled: in eval mode under no_grad the transformer
    # takes PyTorch's fused fast path, which has no ONNX export.
    ys = model(*xs)
    if not isinstance(ys, tuple):
        ys = (ys,)
    flat = []
    for y in ys:
        flat.extend(y if isinstance(y, tuple) else (y,))
    ys = [y.detach() for y in flat]
    base = "%s_opset%d" % (name, opset)
    path = os.path.join(HERE, base + ".onnx")
    in_names = ["input%d" % i for i in range(len(xs))]
    out_names = ["output%d" % i for i in range(len(ys))]
    torch.onnx.export(model, xs, path, opset_version=opset, do_constant_folding=True,
                      input_names=in_names, output_names=out_names,
                      training=torch.onnx.TrainingMode.EVAL)
    proto = onnx.load(path)
    onnx.checker.check_model(proto)
    entry = {"model": name, "opset": opset, "file": base + ".onnx", "inputs": [], "outputs": [],
             "ops": sorted({n.op_type for n in proto.graph.node})}
    for i, x in enumerate(xs):
        f = "%s_input%d.npy" % (name, i)
        np.save(os.path.join(HERE, f), x.numpy())
        entry["inputs"].append({"name": in_names[i], "file": f, "dtype": str(x.numpy().dtype), "shape": list(x.shape)})
    for i, y in enumerate(ys):
        f = "%s_output%d.npy" % (name, i)
        np.save(os.path.join(HERE, f), y.numpy())
        entry["outputs"].append({"name": out_names[i], "file": f, "dtype": str(y.numpy().dtype), "shape": list(y.shape)})
    return base, entry


def main(argv):
    torch.set_num_threads(1)
    names = argv or list(MODELS)
    for n in names:
        if n not in MODELS:
            sys.exit("unknown model %r (known: %s)" % (n, ", ".join(MODELS)))
    os.makedirs(HERE, exist_ok=True)
    manifest_path = os.path.join(HERE, "manifest.json")
    manifest = {"models": {}}
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)
    for n in names:
        build, specs = MODELS[n]
        for opset in OPSETS:
            base, entry = export(n, build, specs, opset)
            manifest["models"][base] = entry
            print("%-28s %s" % (base, " ".join(entry["ops"])))
    manifest["torch"] = torch.__version__
    manifest["onnx"] = onnx.__version__
    manifest["command"] = "/usr/bin/python3 examples/onnx/export_coverage_models.py"
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
