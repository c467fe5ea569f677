"""Datasets, as torch.utils.data: map-style (indexable) and iterable ones, and the
ways of combining and splitting them."""
from __future__ import annotations

import bisect
import math
import warnings
from collections.abc import Iterator, Sequence
from typing import Any, Generic, TypeVar

from ...core.errors import ShrewError, ShrewTypeError, ShrewValueError
from ...ops.generator import Generator, generator_from_global_seed
from ...core.shape import fmt
from ..._tensor import Tensor

T_co = TypeVar("T_co", covariant=True)


class DatasetIndexError(ShrewError, IndexError):
    """An index outside a dataset (an IndexError too, as PyTorch and Python expect)."""


class Dataset(Generic[T_co]):
    """A map-style dataset: subclasses define __getitem__(index) (and usually __len__)."""

    def __getitem__(self, index: Any) -> T_co:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __add__(self, other: Dataset[T_co]) -> ConcatDataset[T_co]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """A dataset that is a stream: subclasses define __iter__.  In a DataLoader with
    workers each worker iterates its own copy (use get_worker_info() to split the work)."""

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")

    def __add__(self, other: Dataset[T_co]) -> ConcatDataset[T_co]:
        raise ShrewValueError("IterableDataset: cannot be concatenated into a ConcatDataset")


class TensorDataset(Dataset[tuple[Tensor, ...]]):
    """Sample i is (t[i] for t in tensors); the tensors share their first dim."""

    def __init__(self, *tensors: Tensor) -> None:
        if not tensors or not all(isinstance(t, Tensor) and t.ndim >= 1 for t in tensors):
            raise ShrewValueError("TensorDataset: needs one or more tensors with at least one dim")
        if any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise ShrewValueError(f"TensorDataset: the tensors' first dims differ: "
                                  f"{', '.join(fmt(t.shape) for t in tensors)}")
        self.tensors = tensors

    def __getitem__(self, index: int) -> tuple[Tensor, ...]:
        index = _check_index("TensorDataset", index, len(self))
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


def _check_index(name: str, index: Any, length: int) -> int:
    """A Python int in [-length, length), negatives counted from the end."""
    try:
        i = int(index)
    except (TypeError, ValueError):
        raise ShrewTypeError(f"{name}: index must be an int, got {type(index).__name__}") from None
    if not -length <= i < length:
        raise DatasetIndexError(f"{name}: index {i} is out of range for {length} samples")
    return i + length if i < 0 else i


class Subset(Dataset[T_co]):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset: Dataset[T_co], indices: Sequence[int]) -> None:
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, index: Any) -> T_co:
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset[T_co]):
    """Several map-style datasets one after another."""

    def __init__(self, datasets: Sequence[Dataset[T_co]]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ShrewValueError("ConcatDataset: datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise ShrewValueError("ConcatDataset: does not support an IterableDataset")
        self.cumulative_sizes: list[int] = []
        total = 0
        for d in self.datasets:
            total += len(d)  # type: ignore[arg-type]
            self.cumulative_sizes.append(total)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int) -> T_co:
        index = _check_index("ConcatDataset", index, len(self))
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


def random_split(dataset: Dataset[T_co], lengths: Sequence[int | float],
                 generator: Generator | None = None) -> list[Subset[T_co]]:
    """Split `dataset` into non-overlapping random subsets of the given lengths, or of
    the given fractions of its length (which sum to 1; the remainder is dealt out one
    sample at a time from the first subset on, as PyTorch does)."""
    n = len(dataset)  # type: ignore[arg-type]
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        if any(not 0 <= f <= 1 for f in lengths):
            raise ShrewValueError(f"random_split: fractions must be in [0, 1], got {list(lengths)}")
        counts = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        for i, c in enumerate(counts):
            if c == 0:
                warnings.warn(f"random_split: split {i} is empty", stacklevel=2)
    else:
        counts = [int(c) for c in lengths]
        if any(c < 0 or c != length for c, length in zip(counts, lengths)):
            raise ShrewValueError(f"random_split: lengths must be non-negative ints or fractions "
                                  f"that sum to 1, got {list(lengths)}")
    if sum(counts) != n:
        raise ShrewValueError(f"random_split: the lengths sum to {sum(counts)}, the dataset has "
                              f"{n} samples")
    order = (generator or generator_from_global_seed()).randperm(n)
    out, start = [], 0
    for c in counts:
        out.append(Subset(dataset, order[start:start + c]))
        start += c
    return out
