#!/usr/bin/env python3
"""PyTorch anchors of bench/gpu_check.sh, on the same GPU and in the same run.

f32 GEMMs through torch.matmul (cuBLAS) with TF32 off
(torch.backends.cuda.matmul.allow_tf32 = False), and ResNet-18 and
MobileNetV2 at batch 1 in eager mode (torchvision's definitions, random
weights: the time does not depend on the values; cudnn.benchmark off, as
PyTorch's default). Each is timed with CUDA events around one call: 10
warm-up calls, then at least 30 timed calls lasting at least 1 s, and the
median is reported in milliseconds.

  python3 bench/gpu_torch.py --json torch.json [--tessera tessera.json]

With --tessera (TestGPUCheck's -gpu-report) it prints the comparison table:
ratio = PyTorch time / Tessera time (> 1: Tessera faster).
"""
import argparse
import json
import statistics
import sys


def time_cuda(torch, fn, warmup=10, min_runs=30, min_seconds=1.0):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    while len(times) < min_runs or sum(times) < min_seconds * 1e3:
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times), times


def anchors():
    import torch
    import torchvision

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    out = {"torch": torch.__version__, "torchvision": torchvision.__version__,
           "device": torch.cuda.get_device_name(), "cuda": torch.version.cuda, "results": {}}
    gen = torch.Generator(device="cpu").manual_seed(0)
    for n in (1024, 4096):
        a = (torch.rand(n, n, generator=gen) * 2 - 1).to(dev)
        b = (torch.rand(n, n, generator=gen) * 2 - 1).to(dev)
        med, times = time_cuda(torch, lambda: torch.matmul(a, b))
        out["results"][f"gemm{n}"] = {"median_ms": med, "gflops": 2 * n ** 3 / 1e9 / (med / 1e3), "runs": len(times)}
    x = torch.rand(1, 3, 224, 224, generator=gen).to(dev)
    for name in ("resnet18", "mobilenet_v2"):
        model = getattr(torchvision.models, name)(weights=None).eval().to(dev)
        with torch.no_grad():
            med, times = time_cuda(torch, lambda: model(x))
        out["results"][name] = {"median_ms": med, "runs": len(times), "mode": "eager"}
    return out


def table(torch_json, tessera_json):
    rows = {r["name"]: r for r in tessera_json if r.get("median_ms")}
    print(f"{'workload':<14} {'Tessera ms':>11} {'PyTorch ms':>11} {'PyTorch/Tessera':>16}  note")
    for name, t in torch_json["results"].items():
        r = rows.get(name)
        if r is None:
            print(f"{name:<14} {'-':>11} {t['median_ms']:>11.4f} {'-':>16}  Tessera did not run it")
            continue
        ratio = t["median_ms"] / r["median_ms"]
        note = ""
        if "gflops" in t:
            note = f"Tessera {r['gflops']:.0f} GFLOP/s, cuBLAS {t['gflops']:.0f} GFLOP/s"
        print(f"{name:<14} {r['median_ms']:>11.4f} {t['median_ms']:>11.4f} {ratio:>16.3f}  {note}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", help="write the anchors here")
    p.add_argument("--tessera", help="TestGPUCheck's -gpu-report file: print the comparison")
    p.add_argument("--anchors", help="read the anchors from this file instead of measuring")
    args = p.parse_args()
    if args.anchors:
        with open(args.anchors) as f:
            res = json.load(f)
    else:
        res = anchors()
        print(json.dumps(res, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    if args.tessera:
        with open(args.tessera) as f:
            table(res, json.load(f))


if __name__ == "__main__":
    sys.exit(main())
