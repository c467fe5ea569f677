"""shrew beside PyTorch (CPU), interleaved round by round, reported as ratios shrew/torch.

    python benchmarks/run.py [--rounds 7] [--only tiny_chain,mlp_step] [--device cpu]

Both frameworks run the same computation from the same initial weights; the first-step
losses are compared before timing.  Medians over rounds; ratio = shrew / torch.
"""
from __future__ import annotations

import os

# Some machines pin OpenBLAS to a core type or cache size; benchmark with its own choice.
for _var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
    os.environ.pop(_var, None)

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads  # noqa: E402


def blas_info() -> str:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "threadpoolctl not installed"
    parts = [f"{i.get('internal_api')} {i.get('version')} ({i.get('architecture')}, "
             f"{i.get('num_threads')} threads)" for i in threadpool_info()
             if i.get("user_api") == "blas"]
    return "; ".join(parts) or "no BLAS found"


def time_call(fn, repeat: int) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", default="", help="comma-separated workload names")
    parser.add_argument("--device", default="cpu", help="shrew device to benchmark")
    args = parser.parse_args(argv)

    import torch
    torch.set_num_threads(2)
    names = [n for n in workloads.WORKLOADS if not args.only or n in args.only.split(",")]
    print(f"shrew device: {args.device}; torch {torch.__version__} with 2 threads")
    print(f"numpy {np.__version__} BLAS: {blas_info()}")

    rows = []
    for name in names:
        make = workloads.WORKLOADS[name]
        shrew_step, torch_step, repeat = make(args.device)
        loss_s, loss_t = shrew_step(), torch_step()  # warm-up, and the same-computation check
        if not np.isclose(loss_s, loss_t, rtol=1e-3, atol=1e-4):
            print(f"{name}: first-step losses differ (shrew {loss_s:.6g}, torch {loss_t:.6g})")
            return 1
        ts, tt = [], []
        for _ in range(args.rounds):  # interleave so machine noise hits both alike
            ts.append(time_call(shrew_step, repeat))
            tt.append(time_call(torch_step, repeat))
        ms, mt = statistics.median(ts), statistics.median(tt)
        rows.append((name, ms, mt, ms / mt))
        print(f"{name:>18}: shrew {ms * 1e3:9.3f} ms  torch {mt * 1e3:9.3f} ms  "
              f"ratio {ms / mt:6.2f}x   (first loss {loss_s:.5g} / {loss_t:.5g})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
