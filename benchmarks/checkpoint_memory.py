"""Peak memory of one training step of a 16-block transformer, with and without gradient
checkpointing (shrew.checkpoint_sequential with about sqrt(16) = 4 segments), on the CPU.

    python benchmarks/checkpoint_memory.py [--blocks 16] [--segments 4]

tracemalloc sees every numpy buffer, so its peak is the step's peak allocated memory
beyond the model itself (activations, the graph's saved tensors and the gradients).  The
checkpointed peak must be at most half the plain one; the exit status says whether it is."""
from __future__ import annotations

import argparse
import sys
import time
import tracemalloc

import shrew
from shrew import nn, optim


def training_step(blocks, opt, x, segments: int) -> None:
    """Forward through the blocks (checkpointed in `segments` runs if segments > 0),
    a scalar loss, backward and an AdamW update."""
    out = shrew.checkpoint_sequential(blocks, segments, x) if segments else blocks(x)
    opt.zero_grad()
    out.square().mean().backward()
    opt.step()


def measure(blocks, opt, x, segments: int) -> tuple:
    """(peak bytes, seconds) of one training step."""
    tracemalloc.start()
    try:
        start = time.perf_counter()
        training_step(blocks, opt, x, segments)
        return tracemalloc.get_traced_memory()[1], time.perf_counter() - start
    finally:
        tracemalloc.stop()


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=16)
    parser.add_argument("--segments", type=int, default=4)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--length", type=int, default=64)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    args = parser.parse_args(argv)

    shrew.manual_seed(0)
    blocks = nn.Sequential(*[nn.TransformerBlock(args.dim, args.heads, causal=True)
                             for _ in range(args.blocks)])
    x = shrew.randn(args.batch, args.length, args.dim)
    opt = optim.AdamW(blocks.parameters())
    training_step(blocks, opt, x, 0)  # creates AdamW's state, which both steps then share
    plain, plain_s = measure(blocks, opt, x, 0)
    ckpt, ckpt_s = measure(blocks, opt, x, args.segments)
    ratio = ckpt / plain
    print(f"{args.blocks} transformer blocks, input [{args.batch}, {args.length}, {args.dim}], "
          f"{sum(p.numel() for p in blocks.parameters())} parameters")
    print(f"peak memory without checkpointing: {plain / 2**20:8.2f} MiB  ({plain_s:.2f} s)")
    print(f"peak memory with {args.segments} segments:      {ckpt / 2**20:8.2f} MiB  "
          f"({ckpt_s:.2f} s)")
    print(f"ratio: {ratio:.3f} ({'OK' if ratio <= 0.5 else 'FAIL'}: must be at most 0.5)")
    return {"plain": plain, "checkpointed": ckpt, "ratio": ratio}


if __name__ == "__main__":
    sys.exit(0 if main(sys.argv[1:])["ratio"] <= 0.5 else 1)
