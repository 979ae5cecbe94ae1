#!/usr/bin/python3
"""PyTorch anchor for the coverage models (bench/coverage_vs_torch.sh).

  /usr/bin/python3 bench/torch_coverage.py --model lstm_tagger --threads 2

Builds the model of examples/onnx/export_coverage_models.py (same seed,
so the same weights), loads its exported inputs and times it in each mode
that works — eager under torch.inference_mode(), torch.jit.freeze of the
traced module, torch.jit.optimize_for_inference — with
torch.set_num_threads(threads); every mode's outputs must match eager's.
The fastest mode after a short probe is timed in full (warmup untimed
calls, then at least --repeats calls lasting at least --min-time seconds).
Prints one line:
  pytorch lstm_tagger: median 3.102 ms (mode eager, 2 threads, 400 runs, torch 1.13.1)
"""

import argparse
import os
import statistics
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples", "onnx"))

from export_coverage_models import MODELS  # noqa: E402
from torch_anchor import time_fastest  # noqa: E402  bench/torch_anchor.py


def flatten(ys):
    out = []
    for y in ys if isinstance(ys, tuple) else (ys,):
        out.extend(flatten(y) if isinstance(y, tuple) else [y])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="lstm_tagger")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--min-time", type=float, default=2.0)
    a = ap.parse_args()
    build, specs = MODELS[a.model]
    torch.manual_seed(0)
    torch.set_num_threads(a.threads)
    m = build().eval()
    cov = os.path.join(HERE, "..", "examples", "onnx", "coverage")
    xs = tuple(torch.from_numpy(np.load(os.path.join(cov, "%s_input%d.npy" % (a.model, i)))) for i in range(len(specs)))
    modes = {"eager": lambda: m(*xs)}
    try:
        with torch.no_grad():
            frozen = torch.jit.freeze(torch.jit.trace(m, xs))
            opt = torch.jit.optimize_for_inference(torch.jit.trace(m, xs))
        modes["jit.freeze"] = lambda: frozen(*xs)
        modes["optimize_for_inference"] = lambda: opt(*xs)
    except Exception as e:  # noqa: BLE001 - a mode that fails is skipped
        print(f"torch_coverage: a scripted mode is unavailable: {e}", file=sys.stderr)
    with torch.inference_mode():
        ref = flatten(modes["eager"]())
        for name in list(modes)[1:]:
            got = flatten(modes[name]())
            if any(not torch.allclose(g.float(), r.float(), rtol=1e-3, atol=1e-3 * float(r.float().abs().max())) for g, r in zip(got, ref)):
                print(f"torch_coverage: mode {name} disagrees with eager; skipped", file=sys.stderr)
                del modes[name]
        best, secs = time_fastest(modes, a.warmup, a.repeats, a.min_time)
    print(f"pytorch {a.model}: median {statistics.median(secs) * 1e3:.3f} ms (mode {best}, "
          f"{torch.get_num_threads()} threads, {len(secs)} runs, torch {torch.__version__})")


if __name__ == "__main__":
    main()
