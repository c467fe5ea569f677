"""Train the digits CNN data-parallel across processes with DistributedDataParallel.

    mpiexec -n 2 python examples/train_ddp.py [--device cpu] [--epochs 10]
    python examples/train_ddp.py                 # the same program as one process

Every rank builds the model (DDP copies rank 0's parameters to the others), reads its
share of each epoch's shuffled training set (DistributedSampler) and computes gradients
on its share of every batch; DDP averages them during backward, so every rank takes the
same optimizer step as one process with the whole batch would.  Rank 0 shows the progress
bar and reports the test accuracy.  On a machine with few cores give
each process one BLAS thread: `mpiexec -n 2 -genv OMP_NUM_THREADS 1 python ...`
(Open MPI: `-x OMP_NUM_THREADS=1`)."""
from __future__ import annotations

import sys

import numpy as np
from tqdm import tqdm

import shrew
import shrew.distributed as dist
from shrew import optim
from shrew.nn import functional as F
from shrew.nn.parallel import DistributedDataParallel
from shrew.utils.data import DistributedSampler

from train_cnn import build_model
from train_mlp import accuracy, load_data, parse_args


def main(argv=None) -> dict:
    args = parse_args(argv, __doc__.splitlines()[0], epochs=10)
    dist.init_process_group(backend="mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.batch_size % world:
        raise SystemExit(f"--batch-size {args.batch_size} must divide by the "
                         f"{world} processes")
    local_batch = args.batch_size // world
    shrew.manual_seed(args.seed)
    x_train, x_test, y_train, y_test = load_data(args.seed)
    x_train, x_test = x_train.reshape(-1, 1, 8, 8), x_test.reshape(-1, 1, 8, 8)
    device = args.device
    model = DistributedDataParallel(build_model().to(device))
    opt = optim.Adam(model.parameters(), lr=args.lr)
    sampler = DistributedSampler(range(len(x_train)), seed=args.seed)
    losses = []
    for epoch in tqdm(range(args.epochs), desc=f"train ({world} processes)",
                      disable=rank != 0):
        sampler.set_epoch(epoch)
        order = np.array(list(sampler))
        total = shrew.zeros(1, dtype=shrew.float64)
        for start in range(0, len(order), local_batch):
            idx = order[start:start + local_batch]
            loss = F.cross_entropy(model(shrew.tensor(x_train[idx], device=device)),
                                   shrew.tensor(y_train[idx], device=device))
            opt.zero_grad()
            loss.backward()
            opt.step()
            total = total + loss.item() * len(idx)
        dist.all_reduce(total)                    # the epoch's loss over every rank's share
        losses.append(total.item() / (len(order) * world))
    result = {"losses": losses}
    if rank == 0:
        result["accuracy"] = acc = accuracy(model.module, x_test, y_test, device)
        print(f"test accuracy: {acc:.2%} (final train loss {losses[-1]:.4f}, {world} "
              f"processes)")
    dist.destroy_process_group()
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
