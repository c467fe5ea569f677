"""Whether the backward passes shrew leaves to numpy would pay on oneDNN: pooling (the
binding's max and average pooling, forward and backward, against shrew's numpy path) and
the backward passes of softmax, layer norm and GELU (shrew's recorded Tensor operations
against PyTorch's fused kernels, the most a oneDNN backward primitive could win), in one
process, interleaved round by round as onednn_conv.py does.

    python benchmarks/onednn_kernels.py [--rounds R] [--reps K] [--threads T]

Backward is timed as forward-and-backward less the forward, in every framework alike.
No timing here is asserted anywhere.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onednn_conv import _time  # noqa: E402  (after the path set-up)


def _pool_rows(rng):
    """(name, {variant: (forward, forward and backward)}) for cnn_step's pooling."""
    import torch

    import shrew
    from shrew.backends.cpu import onednn, use_onednn
    x = rng.standard_normal((64, 16, 28, 28)).astype(np.float32)
    g = rng.standard_normal((64, 16, 14, 14)).astype(np.float32)
    k = ((2, 2), (2, 2), (0, 0))
    sx, sg = shrew.tensor(x, requires_grad=True), shrew.tensor(g)
    tx, tg = torch.tensor(x, requires_grad=True), torch.tensor(g)
    rows = []
    for kind, alg in (("max", onednn.POOL_MAX), ("avg", onednn.POOL_AVG_INCLUDE)):
        shrew_pool = getattr(shrew, f"{kind}_pool2d")
        torch_pool = getattr(torch.nn.functional, f"{kind}_pool2d")

        def shrew_fwd(pool=shrew_pool):
            with use_onednn(False), shrew.no_grad():
                return pool(sx, 2)

        def shrew_both(pool=shrew_pool):
            with use_onednn(False):
                return (pool(sx, 2) * sg).sum().backward()

        def onednn_fwd(alg=alg):
            return onednn.pool2d(x, alg, *k)

        def onednn_both(alg=alg):
            _, workspace = onednn.pool2d(x, alg, *k)
            return onednn.pool2d_backward(g, x.shape, alg, *k, workspace)

        def torch_fwd(pool=torch_pool):
            with torch.no_grad():
                return pool(tx, 2)

        def torch_both(pool=torch_pool):
            return torch.autograd.grad(pool(tx, 2), tx, tg)
        rows.append((f"{kind}_pool2d 2x2 [64, 16, 28, 28]",
                     {"shrew numpy": (shrew_fwd, shrew_both),
                      "oneDNN binding": (onednn_fwd, onednn_both),
                      "torch": (torch_fwd, torch_both)}))
    return rows


def _norm_rows(rng):
    """softmax, layer norm and GELU on transformer_step's shapes, shrew (oneDNN forward,
    numpy backward) against torch."""
    import torch

    import shrew
    ops = [("softmax [8, 4, 128, 128]", (8, 4, 128, 128),
            lambda lib, t: t.softmax(-1)),
           ("layer_norm [1024, 256]", (1024, 256),
            lambda lib, t: lib.nn.functional.layer_norm(t, (256,))),
           ("gelu [1024, 1024]", (1024, 1024),
            lambda lib, t: lib.nn.functional.gelu(t))]
    rows = []
    for name, shape, fn in ops:
        x = rng.standard_normal(shape).astype(np.float32)
        g = rng.standard_normal(shape).astype(np.float32)
        sx, sg = shrew.tensor(x, requires_grad=True), shrew.tensor(g)
        tx, tg = torch.tensor(x, requires_grad=True), torch.tensor(g)

        def shrew_fwd(fn=fn, sx=sx):
            with shrew.no_grad():
                return fn(shrew, sx)

        def shrew_both(fn=fn, sx=sx, sg=sg):
            return (fn(shrew, sx) * sg).sum().backward()

        def torch_fwd(fn=fn, tx=tx):
            with torch.no_grad():
                return fn(torch, tx)

        def torch_both(fn=fn, tx=tx, tg=tg):
            return torch.autograd.grad(fn(torch, tx), tx, tg)
        rows.append((name, {"shrew": (shrew_fwd, shrew_both),
                            "torch": (torch_fwd, torch_both)}))
    return rows


def table(rows, rounds, reps):
    variants = list(rows[0][1])
    lines = ["| op | pass | " + " | ".join(f"{v} ms" for v in variants) + " | "
             + " | ".join(f"{v}/torch" for v in variants[:-1]) + " |",
             "|---|---|" + "---:|" * (2 * len(variants) - 1)]
    for name, fns in rows:
        for fwd, both in fns.values():   # warm up: caches, primitives, thread pools
            fwd(), both()
        samples = {(v, p): [] for v in fns for p in ("forward", "backward")}
        for _ in range(rounds):
            for v, (fwd, both) in fns.items():
                samples[v, "forward"].append(_time(fwd, reps))
                samples[v, "backward"].append(_time(both, reps))
        ms = {key: statistics.median(s) * 1e3 for key, s in samples.items()}
        for v in fns:
            ms[v, "backward"] -= ms[v, "forward"]
        for p in ("forward", "backward"):
            cells = [ms[v, p] for v in fns]
            lines.append(f"| {name} | {p} | " + " | ".join(f"{c:.2f}" for c in cells) + " | "
                         + " | ".join(f"{c / cells[-1]:.2f}x" for c in cells[:-1]) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    import shrew
    from shrew.backends.cpu import onednn
    if not onednn.available():
        print(f"oneDNN is not available: {onednn.load_error() or 'switched off'}")
        return 1
    import torch
    torch.set_num_threads(args.threads)
    shrew.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    print(f"load average before: {os.getloadavg()[0]:.2f}; {args.rounds} rounds of "
          f"{args.reps}; {args.threads} threads\n")
    print(table(_pool_rows(rng), args.rounds, args.reps) + "\n")
    print(table(_norm_rows(rng), args.rounds, args.reps))
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
