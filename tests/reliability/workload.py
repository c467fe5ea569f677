"""The reliability suite's workload: the MLP example's model trained with Adam on small
batches of the digits.  Run as a script it prints a run's loss curve and a digest of the
final parameters, for the determinism test:

    python tests/reliability/workload.py DEVICE STEPS SEED
"""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np

import shrew
from shrew import optim
from shrew.nn import functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import train_mlp  # noqa: E402


def batches(batch_size: int = 16, seed: int = 0):
    """Endless (x, y) numpy mini-batches of the digits training set in a seeded order."""
    x, _, y, _ = train_mlp.load_data(seed)
    rng = np.random.default_rng(seed)
    while True:
        order = rng.permutation(len(x))
        for start in range(0, len(order) - batch_size + 1, batch_size):
            idx = order[start:start + batch_size]
            yield x[idx], y[idx]


class Run:
    """The MLP example's model, seeded, and its Adam optimizer on `device`.  With dropout
    the inputs are dropped out, so the device's generator takes part in every step."""

    def __init__(self, device: str, seed: int = 0, dropout: float = 0.0):
        shrew.manual_seed(seed)
        self.device, self.dropout = device, dropout
        self.model = train_mlp.build_model().to(device)
        self.opt = optim.Adam(self.model.parameters(), lr=1e-3)

    def step(self, x: np.ndarray, y: np.ndarray) -> float:
        xb = F.dropout(shrew.tensor(x, device=self.device), self.dropout)
        loss = F.cross_entropy(self.model(xb), shrew.tensor(y, device=self.device))
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()

    def digest(self) -> str:
        """A hash of every parameter's bytes."""
        h = hashlib.sha256()
        for name, p in self.model.state_dict().items():
            h.update(name.encode() + p.numpy().tobytes())
        return h.hexdigest()


def main(device: str, steps: int, seed: int) -> dict:
    run = Run(device, seed, dropout=0.1)
    data = batches(seed=seed)
    losses = [run.step(*next(data)) for _ in range(steps)]
    return {"losses": [v.hex() for v in losses], "digest": run.digest()}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))))
