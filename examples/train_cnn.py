"""Train a small convolutional network on scikit-learn's 8x8 handwritten digits (no download).

    python examples/train_cnn.py [--device cpu] [--epochs 15]

Conv -> BatchNorm -> ReLU -> MaxPool, twice, then a linear classifier.  Prints the test
accuracy at the end (about 98% on the CPU in well under a minute)."""
from __future__ import annotations

import sys

import shrew
from shrew import nn

from train_mlp import fit_and_report, load_data, parse_args


def build_model() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),   # 16x4x4
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),  # 32x2x2
        nn.Flatten(), nn.Linear(32 * 2 * 2, 10))


def main(argv=None) -> dict:
    args = parse_args(argv, __doc__.splitlines()[0], epochs=15)
    shrew.manual_seed(args.seed)
    x_train, x_test, y_train, y_test = load_data(args.seed)
    # Images as [N, 1, 8, 8]; the shared training loop only ever indexes the first dim.
    data = (x_train.reshape(-1, 1, 8, 8), x_test.reshape(-1, 1, 8, 8), y_train, y_test)
    return fit_and_report(build_model(), data, args)


if __name__ == "__main__":
    main(sys.argv[1:])
