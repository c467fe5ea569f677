"""A small decoder-only transformer that learns to reverse digit sequences, trained with
gradient checkpointing (shrew.checkpoint_sequential).  Needs no download.

    python examples/checkpointed_transformer.py [--device cpu] [--steps 300] [--amp bf16]
                                                [--plot PATH]

Each example is "d1 ... dn | dn ... d1": the model reads the digits and a separator and
must write them back reversed.  It prints the loss and the exact-sequence accuracy on
fresh sequences, the peak memory (tracemalloc, so on the CPU device) of one training step
with and without checkpointing, and saves the loss curve as a PNG.  --amp bf16 trains under
bfloat16 autocast (automatic mixed precision: the products in bfloat16, the loss and the
weights in float32; docs/mixed-precision.md) and reports its peak memory too."""
from __future__ import annotations

import argparse
import sys
import tracemalloc
from pathlib import Path

import numpy as np
from tqdm import tqdm

import shrew
from shrew import nn, optim
from shrew.nn import functional as F

DIGITS = 10
SEP = DIGITS  # the separator token; the vocabulary is the ten digits and it


class DecoderOnly(nn.Module):
    """Token and position embeddings, causal pre-LayerNorm blocks, a final LayerNorm and
    a linear head.  forward(idx, segments) checkpoints the blocks in `segments` runs;
    segments=0 runs them plainly."""

    def __init__(self, vocab: int, max_len: int, dim: int, heads: int, layers: int,
                 dropout: float = 0.0):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.blocks = nn.Sequential(*[nn.TransformerBlock(dim, heads, 4, dropout, causal=True)
                                      for _ in range(layers)])
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, idx, segments: int = 0):
        positions = shrew.arange(idx.shape[1], device=idx.device)
        x = self.tok(idx) + self.pos(positions)
        if segments:
            x = shrew.checkpoint_sequential(self.blocks, segments, x)
        else:
            x = self.blocks(x)
        return self.head(self.ln(x))


def make_batch(rng, batch: int, length: int, device: str):
    """Inputs [B, 2n] (digits, separator, reversed digits but the last) and the reversed
    digits [B, n] that positions n..2n-1 must predict."""
    digits = rng.integers(0, DIGITS, size=(batch, length))
    target = digits[:, ::-1]
    inputs = np.concatenate([digits, np.full((batch, 1), SEP), target[:, :-1]], axis=1)
    return shrew.tensor(inputs, device=device), shrew.tensor(target.copy(), device=device)


def loss_and_accuracy(model, inputs, target, segments: int = 0, amp: bool = False):
    """Cross-entropy over the answer positions, and the fraction of sequences whose every
    answer digit is the argmax (teacher-forced: equal to greedy decoding being exact).
    amp: the forward and the loss under bfloat16 autocast."""
    n = target.shape[1]
    with shrew.autocast(inputs.device.type, dtype=shrew.bfloat16, enabled=amp):
        logits = model(inputs, segments).narrow(1, n, n)
        loss = F.cross_entropy(logits.reshape(-1, DIGITS + 1), target.reshape(-1))
    exact = (logits.argmax(-1) == target).to_dtype(shrew.int64).amin(1)
    return loss, exact.to_dtype(shrew.float32).mean().item()


def peak_step_memory(model, inputs, target, segments: int, amp: bool = False) -> int:
    """Peak bytes allocated (tracemalloc sees numpy's buffers) by one forward + backward."""
    tracemalloc.start()
    try:
        loss, _ = loss_and_accuracy(model, inputs, target, segments, amp)
        loss.backward()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        model.zero_grad()


def train(model, steps: int, batch: int, length: int, segments: int, lr: float,
          device: str = "cpu", seed: int = 0, progress: bool = True, amp: bool = False) -> list:
    """AdamW with a linear warm-up over the first tenth of the steps, then cosine decay;
    returns the loss of every step."""
    rng = np.random.default_rng(seed)
    opt = optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    losses = []
    bar = tqdm(range(steps), desc="train", disable=not progress)
    for step in bar:
        warm = min(1.0, (step + 1) / (steps / 10 + 1))
        for group in opt.param_groups:
            group["lr"] = lr * warm * 0.5 * (1 + np.cos(np.pi * step / steps))
        inputs, target = make_batch(rng, batch, length, device)
        loss, acc = loss_and_accuracy(model, inputs, target, segments, amp)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        bar.set_postfix(loss=f"{losses[-1]:.3f}", acc=f"{acc:.2f}")
    return losses


def save_plot(losses: list, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(losses, lw=1)
    ax.set(xlabel="step", ylabel="cross-entropy", yscale="log",
           title="Reversing digit sequences (checkpointed transformer)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--length", type=int, default=8, help="digits per sequence")
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--segments", type=int, default=2,
                        help="checkpoint_sequential segments over the blocks")
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--amp", choices=("bf16",), default=None,
                        help="train under bfloat16 autocast (mixed precision)")
    parser.add_argument("--plot", default=str(Path(__file__).with_name(
        "checkpointed_transformer_loss.png")))
    args = parser.parse_args(argv)

    shrew.manual_seed(args.seed)
    model = DecoderOnly(DIGITS + 1, 2 * args.length, args.dim, args.heads, args.layers)
    model.to(args.device)

    amp = args.amp == "bf16"
    plain = checkpointed = mixed = None
    if args.device == "cpu":  # tracemalloc sees host memory only
        probe = make_batch(np.random.default_rng(args.seed + 1), args.batch_size, args.length,
                           args.device)
        plain = peak_step_memory(model, *probe, segments=0)
        checkpointed = peak_step_memory(model, *probe, segments=args.segments)
        print(f"peak memory of one training step: {plain / 2**20:.2f} MiB without "
              f"checkpointing, {checkpointed / 2**20:.2f} MiB with {args.segments} "
              f"checkpointed segments ({checkpointed / plain:.0%})")
        if amp:
            mixed = peak_step_memory(model, *probe, segments=0, amp=True)
            print(f"peak memory of one training step under bf16 autocast: "
                  f"{mixed / 2**20:.2f} MiB ({mixed / plain:.0%} of float32's)")

    losses = train(model, args.steps, args.batch_size, args.length, args.segments, args.lr,
                   args.device, args.seed, amp=amp)
    model.eval()
    with shrew.no_grad():
        test = make_batch(np.random.default_rng(args.seed + 2), 1000, args.length, args.device)
        test_loss, acc = loss_and_accuracy(model, *test)
    print(f"final train loss {losses[-1]:.4f}, test loss {test_loss.item():.4f}, "
          f"exact-sequence accuracy {acc:.1%} on 1000 fresh sequences")
    save_plot(losses, args.plot)
    print(f"loss curve saved to {args.plot}")
    return {"losses": losses, "accuracy": acc, "peak_plain": plain,
            "peak_checkpointed": checkpointed, "peak_amp": mixed}


if __name__ == "__main__":
    main(sys.argv[1:])
