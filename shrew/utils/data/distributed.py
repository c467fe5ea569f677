"""DistributedSampler: each rank draws its own share of a dataset's indices."""
from __future__ import annotations

import math
from collections.abc import Iterator, Sized

import numpy as np

from ...core.errors import ShrewTypeError, ShrewValueError
from ...distributed import get_rank, get_world_size


class DistributedSampler:
    """Yield the indices of `dataset` (anything with a length, e.g. a Dataset or a
    `range`) that rank `rank` of `num_replicas` should read, as PyTorch's sampler does.

    Every rank gets the same number of indices: with `drop_last=False` the (shuffled)
    index list is padded by repeating its start until it divides evenly, with
    `drop_last=True` its tail is dropped instead.  Rank r takes every num_replicas-th index
    from position r.  With `shuffle`, the order is a permutation seeded by `seed + epoch`,
    the same on every rank; call `set_epoch(epoch)` at the start of each epoch for a new
    order.  (The permutation comes from numpy's PCG64 generator, so it is not the one
    torch.randperm would give.)  `num_replicas` and `rank` default to the process group's
    world size and rank."""

    def __init__(self, dataset: Sized, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            num_replicas = get_world_size() if num_replicas is None else num_replicas
            rank = get_rank() if rank is None else rank
        if not isinstance(num_replicas, int) or num_replicas < 1:
            raise ShrewValueError(f"DistributedSampler: num_replicas must be an int >= 1, got "
                                  f"{num_replicas!r}")
        if not isinstance(rank, int) or not 0 <= rank < num_replicas:
            raise ShrewValueError(f"DistributedSampler: invalid rank {rank!r}, rank should be in "
                                  f"the interval [0, {num_replicas - 1}]")
        if not hasattr(dataset, "__len__"):
            raise ShrewTypeError(f"DistributedSampler: the dataset must have a length, got "
                                 f"{type(dataset).__name__}")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.shuffle = shuffle
        self.seed = seed
        self.drop_last = drop_last
        self.epoch = 0
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            order = np.random.default_rng(self.seed + self.epoch).permutation(n)
        else:
            order = np.arange(n)
        if self.drop_last:
            order = order[:self.total_size]
        elif self.total_size > n:
            # Repeat the list from its start as often as needed (a tiny dataset may need it
            # several times over) to make every rank's share the same length.
            order = np.resize(order, self.total_size) if n else order
        return iter(order[self.rank:self.total_size:self.num_replicas].tolist())

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Use the permutation of this epoch (seed + epoch) from the next iteration on."""
        self.epoch = epoch
