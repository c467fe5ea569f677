"""The cnn_step convolutions, forward and backward, on shrew's numpy path, shrew's oneDNN
path and PyTorch, in one process; then whether oneDNN's OpenMP threads and OpenBLAS's
slow each other down when a convolution and a GEMM alternate.

    python benchmarks/onednn_conv.py [--rounds R] [--reps K] [--threads T] [--part P]

Each round times every variant K times in turn (interleaved, so that a change in the
machine's load hits all of them alike) and keeps the round's median; the table shows the
median over rounds and each variant's ratio to PyTorch.  Backward means the gradients a
training step asks for: the input's only where it needs one (not for the first layer);
it is timed as forward-and-backward less the forward, in every framework alike (shrew's
backward multiplies by the output gradient and sums first, a cost torch's skips: an
elementwise pass, small next to the convolution).
No timing here is asserted anywhere; tests/test_onednn.py checks the numbers.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _layers():
    """(name, x shape, w shape, padding, input needs a gradient) of cnn_step's convolutions
    (benchmarks/workloads.py; batch 64, 28x28, padding 2)."""
    return [("conv 1->16 5x5 on 28x28", (64, 1, 28, 28), (16, 1, 5, 5), 2, False),
            ("conv 16->32 5x5 on 14x14", (64, 16, 14, 14), (32, 16, 5, 5), 2, True)]


def _variants(x_np, w_np, padding, need_x):
    """{name: (forward, forward and backward)} closures over one layer's data, each through
    its framework's public API (shrew.conv2d and its autograd, torch's)."""
    import torch

    import shrew
    from shrew.backends.cpu import use_onednn
    g_np = np.random.default_rng(1).standard_normal(
        (x_np.shape[0], w_np.shape[0], *x_np.shape[2:])).astype(np.float32)
    sx = shrew.tensor(x_np, requires_grad=need_x)
    sw = shrew.tensor(w_np, requires_grad=True)
    sg = shrew.tensor(g_np)

    def shrew_pair(onednn_on):
        def forward():
            with use_onednn(onednn_on), shrew.no_grad():
                return shrew.conv2d(sx, sw, 1, padding)

        def both():
            with use_onednn(onednn_on):
                return (shrew.conv2d(sx, sw, 1, padding) * sg).sum().backward()
        return forward, both

    tx = torch.tensor(x_np, requires_grad=need_x)
    tw = torch.tensor(w_np, requires_grad=True)
    tg = torch.tensor(g_np)

    def torch_forward():
        with torch.no_grad():
            return torch.nn.functional.conv2d(tx, tw, None, 1, padding)

    def torch_both():
        y = torch.nn.functional.conv2d(tx, tw, None, 1, padding)
        return torch.autograd.grad(y, [tx, tw] if need_x else [tw], tg)

    return {"shrew numpy": shrew_pair(False), "shrew oneDNN": shrew_pair(True),
            "torch": (torch_forward, torch_both)}


def _time(fn, reps):
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def conv_table(rounds, reps):
    rng = np.random.default_rng(0)
    lines = ["| layer | pass | shrew numpy ms | shrew oneDNN ms | torch ms | numpy/torch "
             "| oneDNN/torch |", "|---|---|---:|---:|---:|---:|---:|"]
    for name, x_shape, w_shape, padding, need_x in _layers():
        x_np = rng.standard_normal(x_shape).astype(np.float32)
        w_np = (rng.standard_normal(w_shape) / np.sqrt(np.prod(w_shape[1:]))).astype(np.float32)
        variants = _variants(x_np, w_np, padding, need_x)
        for fwd, bwd in variants.values():   # warm up: caches, primitives, thread pools
            fwd(), bwd()
        samples = {(v, p): [] for v in variants for p in ("forward", "backward")}
        for _ in range(rounds):
            for v, (fwd, bwd) in variants.items():
                samples[v, "forward"].append(_time(fwd, reps))
                samples[v, "backward"].append(_time(bwd, reps))
        median = {k: statistics.median(s) * 1e3 for k, s in samples.items()}
        for v in variants:   # backward = (forward and backward) - forward
            median[v, "backward"] -= median[v, "forward"]
        for p in ("forward", "backward"):
            ms = [median[v, p] for v in variants]
            lines.append(f"| {name} | {p} | {ms[0]:.2f} | {ms[1]:.2f} | {ms[2]:.2f} | "
                         f"{ms[0] / ms[2]:.2f}x | {ms[1] / ms[2]:.2f}x |")
    return "\n".join(lines)


def threads_table(rounds, reps):
    """A oneDNN convolution (OpenMP threads) and an OpenBLAS GEMM, alone and alternating:
    if the two thread pools fought for the cores, a pair would cost more than its parts."""
    from shrew.backends.cpu import onednn
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 16, 14, 14)).astype(np.float32)
    w = rng.standard_normal((32, 16, 5, 5)).astype(np.float32)
    a = rng.standard_normal((256, 1024)).astype(np.float32)
    b = rng.standard_normal((1024, 1024)).astype(np.float32)

    def conv():
        onednn.conv2d(x, w, (1, 1), (2, 2))

    def gemm():
        np.matmul(a, b)

    def pair():
        conv()
        gemm()

    for fn in (conv, gemm, pair):
        fn()
    samples = {fn.__name__: [] for fn in (conv, gemm, pair)}
    for _ in range(rounds):
        for fn in (conv, gemm, pair):
            samples[fn.__name__].append(_time(fn, reps))
    m = {k: statistics.median(s) * 1e3 for k, s in samples.items()}
    return (f"conv {m['conv']:.2f} ms, GEMM {m['gemm']:.2f} ms, sum {m['conv'] + m['gemm']:.2f}"
            f" ms; alternating pair {m['pair']:.2f} ms "
            f"({m['pair'] / (m['conv'] + m['gemm']):.2f}x the sum); "
            f"oneDNN threads {onednn.get_num_threads()}, "
            f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'unset')}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--part", choices=("all", "conv", "threads"), default="all")
    parser.add_argument("--threads", type=int, default=2,
                        help="threads for torch, oneDNN (OpenMP) and OpenBLAS (default 2)")
    args = parser.parse_args(argv)
    # oneDNN first: libgomp then loads under shrew's OMP_WAIT_POLICY default, as it does
    # in a shrew program; torch, imported after, shares that libgomp.
    from shrew.backends.cpu import onednn, set_num_threads
    if not onednn.available():
        print(f"oneDNN is not available: {onednn.load_error() or 'switched off'}")
        return 1
    import torch
    from threadpoolctl import threadpool_limits
    torch.set_num_threads(args.threads)
    set_num_threads(args.threads)
    with threadpool_limits(args.threads, user_api="blas"):
        print(f"load average before: {os.getloadavg()[0]:.2f}; {args.rounds} rounds of "
              f"{args.reps}; {args.threads} threads\n")
        if args.part in ("all", "conv"):
            print(conv_table(args.rounds, args.reps) + "\n")
        if args.part in ("all", "threads"):
            print(threads_table(args.rounds, args.reps))
        print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
