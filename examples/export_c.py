"""Export the digits MLP's whole training step to one C file, train it in C, read back.

    python examples/export_c.py [--epochs 30] [--out DIR]

Traces forward, backward and Adam's update of examples/train_mlp.py's model into
DIR/train.c, builds it with the system C compiler (cc -O2 -std=c99 ... -lm), runs the
program on the training set written as a binary file, loads the parameters it saved
with shrew.load and prints the test accuracy reached in C (about 97%)."""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

import shrew
from shrew import optim
from shrew.export import trace_training
from shrew.nn import functional as F
from train_mlp import accuracy, build_model, load_data


def write_data(path: str, x: np.ndarray, y: np.ndarray) -> None:
    """The C trainer's data file: uint64 count, uint64 features, float32 inputs, int64
    labels, little-endian."""
    with open(path, "wb") as f:
        f.write(np.array([len(x), x.shape[1]], dtype="<u8").tobytes())
        f.write(np.ascontiguousarray(x, dtype="<f4").tobytes())
        f.write(np.ascontiguousarray(y, dtype="<i8").tobytes())


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="folder for train.c and its files")
    args = parser.parse_args(argv)
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        sys.exit("export_c: needs a C compiler (cc or gcc) on PATH")
    shrew.manual_seed(args.seed)
    x_train, x_test, y_train, y_test = load_data(args.seed)
    order = np.random.default_rng(args.seed).permutation(len(x_train))  # C reads in order
    x_train, y_train = x_train[order], y_train[order]

    model = build_model()
    opt = optim.Adam(model.parameters(), lr=args.lr)
    example = (shrew.tensor(x_train[:args.batch_size]), shrew.tensor(y_train[:args.batch_size]))
    program = trace_training(model, F.cross_entropy, example, opt)
    mem = program.memory
    print(f"traced {len(program.graph.nodes)} kernel calls; arena {mem['arena']} bytes "
          f"(temporaries {mem['temporaries']} after reuse, {mem['temporaries_without_reuse']} "
          f"without); eager shrew's peak for the step: {mem['eager_peak']} bytes")

    out = args.out or tempfile.mkdtemp(prefix="shrew_export_")
    os.makedirs(out, exist_ok=True)
    source = program.write_c(os.path.join(out, "train.c"))
    exe = os.path.join(out, "train")
    subprocess.run([cc, "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", source, "-o", exe,
                    "-lm"], check=True)
    write_data(os.path.join(out, "digits.bin"), x_train, y_train)
    run = subprocess.run([exe, "digits.bin", str(args.epochs)], cwd=out, check=True,
                         capture_output=True, text=True)
    losses = [float(line.split()[-1]) for line in run.stdout.splitlines()]
    print(f"C trainer: {args.epochs} epochs, loss {losses[0]:.4f} -> {losses[-1]:.4f}")

    model.load_state_dict(shrew.load(os.path.join(out, "train_trained.safetensors")))
    acc = accuracy(model, x_test, y_test, "cpu")
    print(f"test accuracy reached in C: {acc:.2%} (files in {out})")
    return {"losses": losses, "accuracy": acc, "out": out}


if __name__ == "__main__":
    main(sys.argv[1:])
