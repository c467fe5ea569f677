"""A small recurrent language-model training step, shrew against PyTorch side by side.

    python benchmarks/rnn_step.py [--cell LSTM|GRU] [--steps 10] [--profile]

The model is pytorch/examples' word_language_model at a small size: embedding (vocab
1000, 128) -> 2-layer LSTM or GRU (hidden 128) -> linear decoder; sequence 32, batch 20;
cross-entropy, backward, SGD.  Both frameworks start from the same numpy weights and
see the same tokens; their first two losses must agree to 1e-4 before anything is
timed.  Both run on one thread.  Prints the median milliseconds per step of each and
their ratio; --profile also prints where shrew's step spends its time (cProfile).
Not part of run.py's default set.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import numpy as np  # noqa: E402

VOCAB, EMBED, HIDDEN, LAYERS, SEQ, BATCH, LR = 1000, 128, 128, 2, 32, 20, 0.1


def make_model(lib, cell):
    """The same network in shrew or torch (`lib`), with weights from one numpy stream."""
    nn = lib.nn

    class LanguageModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Embedding(VOCAB, EMBED)
            self.rnn = getattr(nn, cell)(EMBED, HIDDEN, LAYERS)
            self.decoder = nn.Linear(HIDDEN, VOCAB)

        def forward(self, tokens):
            output, _ = self.rnn(self.encoder(tokens))
            return self.decoder(output).reshape(-1, VOCAB)

    model = LanguageModel()
    rng = np.random.default_rng(0)
    weights = {name: lib.tensor(rng.uniform(-0.1, 0.1, tuple(p.shape)).astype(np.float32))
               for name, p in model.state_dict().items()}
    model.load_state_dict(weights)
    return model


def make_step(lib, cell):
    model = make_model(lib, cell)
    rng = np.random.default_rng(1)
    tokens = lib.tensor(rng.integers(0, VOCAB, (SEQ, BATCH)))
    targets = lib.tensor(rng.integers(0, VOCAB, SEQ * BATCH))
    optimizer = lib.optim.SGD(model.parameters(), lr=LR)

    def step():
        optimizer.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(tokens), targets)
        loss.backward()
        optimizer.step()
        return loss.item()

    return step


def median_ms(step, count):
    times = []
    for _ in range(count):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cell", choices=("LSTM", "GRU"), default="LSTM")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    import torch

    import shrew
    torch.set_num_threads(1)
    steps = {"shrew": make_step(shrew, args.cell), "torch": make_step(torch, args.cell)}
    losses = {name: [step(), step()] for name, step in steps.items()}
    if not np.allclose(losses["shrew"], losses["torch"], rtol=1e-4):
        raise SystemExit(f"losses differ: {losses}")
    ms = {name: median_ms(step, args.steps) for name, step in steps.items()}
    print(f"{args.cell} step (vocab {VOCAB}, embed {EMBED}, hidden {HIDDEN}, {LAYERS} layers, "
          f"seq {SEQ}, batch {BATCH}): shrew {ms['shrew']:.1f} ms, torch {ms['torch']:.1f} ms, "
          f"ratio {ms['shrew'] / ms['torch']:.2f}")
    if args.profile:
        profiler = cProfile.Profile()
        profiler.runcall(lambda: [steps["shrew"]() for _ in range(args.steps)])
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
