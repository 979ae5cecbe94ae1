#!/usr/bin/python3
"""PyTorch anchor for `go run ./bench`.

Reads a JSON request on stdin:
  {"threads": 2, "warmup": 2, "repeats": 5, "min_time": 0.5,
   "workloads": [{"name": "gemm 256³", "kind": "gemm", "m": 256, "k": 256, "n": 256},
                 {"name": "conv 64ch@56²", "kind": "conv", "c": 64, "h": 56, "w": 56}]}
and prints one JSON object on stdout:
  {"torch": "1.13.1", "threads": 2, "results": [{"name": ..., "mode": ..., "median_s": ...,
   "seconds": [...], "probe": {mode: median_s, ...}}]}

Each workload is timed in every mode that applies (GEMM: torch.mm into a
preallocated output, F.linear with the weights stored [N, K]; conv:
eager F.conv2d, torch.jit.freeze of the scripted module, and
torch.jit.optimize_for_inference). Each mode's output must match the
first mode's, else the mode is dropped; each gets a short probe, and the
fastest is then timed in full: warmup untimed calls, then timed calls
until at least `repeats` have run and they add up to at least `min_time`
seconds; the median is reported. Everything runs under
torch.inference_mode() with torch.set_num_threads(threads).
"""

import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F


def time_loop(fn, warmup, repeats, min_time):
    for _ in range(warmup):
        fn()
    secs, total = [], 0.0
    while not secs or len(secs) < repeats or total < min_time:
        t0 = time.perf_counter()
        fn()
        d = time.perf_counter() - t0
        total += d
        secs.append(d)
    return secs


def time_fastest(modes, warmup, repeats, min_time):
    """Probe every mode (name -> callable) briefly, then time the fastest in
    full with time_loop; returns (mode name, seconds of each timed call)."""
    probe = {n: statistics.median(time_loop(f, 2, 5, 0.0)) for n, f in modes.items()}
    best = min(probe, key=probe.get)
    return best, time_loop(modes[best], warmup, repeats, min_time)


class Conv(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = torch.nn.Conv2d(c, c, 3, stride=1, padding=1, bias=False)

    def forward(self, x):
        return self.conv(x)


def gemm_modes(w):
    g = torch.Generator().manual_seed(0)
    x = torch.rand(w["m"], w["k"], generator=g) * 2 - 1
    b = torch.rand(w["k"], w["n"], generator=g) * 2 - 1
    bt = b.t().contiguous()
    out = torch.empty(w["m"], w["n"])
    return {
        "mm": lambda: torch.mm(x, b, out=out),
        "linear": lambda: F.linear(x, bt),
    }


def conv_modes(w):
    g = torch.Generator().manual_seed(0)
    c, h, wd = w["c"], w["h"], w["w"]
    x = torch.rand(1, c, h, wd, generator=g) * 2 - 1
    m = Conv(c).eval()
    with torch.no_grad():
        m.conv.weight.copy_(torch.rand(c, c, 3, 3, generator=g) * 2 - 1)
    weight = m.conv.weight.detach()
    modes = {"eager": lambda: F.conv2d(x, weight, padding=1)}
    try:
        frozen = torch.jit.freeze(torch.jit.script(m))
        modes["jit.freeze"] = lambda: frozen(x)
    except Exception as e:  # noqa: BLE001 - a mode that fails is skipped
        print(f"torch_anchor: jit.freeze unavailable: {e}", file=sys.stderr)
    try:
        opt = torch.jit.optimize_for_inference(torch.jit.script(m))
        modes["optimize_for_inference"] = lambda: opt(x)
    except Exception as e:  # noqa: BLE001
        print(f"torch_anchor: optimize_for_inference unavailable: {e}", file=sys.stderr)
    return modes


def main():
    req = json.load(sys.stdin)
    threads = int(req["threads"])
    torch.set_num_threads(threads)
    warmup, repeats, min_time = int(req["warmup"]), int(req["repeats"]), float(req["min_time"])
    results = []
    with torch.inference_mode():
        for w in req["workloads"]:
            modes = gemm_modes(w) if w["kind"] == "gemm" else conv_modes(w)
            # Every mode must agree with the first (torch.mm / eager F.conv2d).
            ref = next(iter(modes.values()))()
            for name in list(modes)[1:]:
                got = modes[name]()
                if not torch.allclose(got, ref, rtol=1e-4, atol=1e-4 * float(ref.abs().max())):
                    print(f"torch_anchor: {w['name']}: mode {name} disagrees with {next(iter(modes))}; skipped",
                          file=sys.stderr)
                    del modes[name]
            probe = {}
            for name, fn in modes.items():
                secs = time_loop(fn, max(1, warmup), max(3, repeats // 2), 0.0)
                probe[name] = statistics.median(secs)
            best = min(probe, key=probe.get)
            secs = time_loop(modes[best], warmup, repeats, min_time)
            results.append({"name": w["name"], "mode": best, "median_s": statistics.median(secs),
                            "seconds": secs, "probe": probe})
    json.dump({"torch": torch.__version__, "threads": torch.get_num_threads(), "results": results}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
