"""Samplers: which dataset indices a DataLoader visits, and in which order or batches."""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any, Generic, TypeVar

import numpy as np

from ...core.errors import ShrewValueError
from ...ops.generator import Generator, generator_from_global_seed
from ..._tensor import Tensor

T_co = TypeVar("T_co", covariant=True)


class Sampler(Generic[T_co]):
    """Base class: subclasses define __iter__ (and __len__ when they know it)."""

    def __init__(self, data_source: Sized | None = None) -> None:
        pass

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


def _positive_int(name: str, what: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ShrewValueError(f"{name}: {what} should be a positive integer value, but got "
                              f"{what}={value!r}")
    return int(value)


class SequentialSampler(Sampler[int]):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """A random permutation of the indices (num_samples of them, in whole permutations
    and a part of one), or num_samples independent draws with replacement.  Without a
    generator each pass draws its seed from shrew's global random state."""

    def __init__(self, data_source: Sized, replacement: bool = False,
                 num_samples: int | None = None, generator: Generator | None = None) -> None:
        if not isinstance(replacement, bool):
            raise ShrewValueError(f"RandomSampler: replacement should be a boolean value, but got "
                                  f"replacement={replacement!r}")
        self.data_source, self.replacement = data_source, replacement
        self._num_samples, self.generator = num_samples, generator
        _positive_int("RandomSampler", "num_samples", self.num_samples)

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n, count = len(self.data_source), self.num_samples
        gen = self.generator or generator_from_global_seed()
        if self.replacement:
            for start in range(0, count, 32):  # in chunks, as the sampler may be long
                yield from gen.randint(n, min(32, count - start))
            return
        for _ in range(count // n):
            yield from gen.randperm(n)
        yield from gen.randperm(n)[:count % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices in a random order."""

    def __init__(self, indices: Sequence[int], generator: Generator | None = None) -> None:
        self.indices, self.generator = indices, generator

    def __iter__(self) -> Iterator[int]:
        gen = self.generator or generator_from_global_seed()
        for i in gen.randperm(len(self.indices)):
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """num_samples indices in range(len(weights)), each with probability proportional
    to its weight (with or without replacement)."""

    def __init__(self, weights: Sequence[float] | Tensor, num_samples: int,
                 replacement: bool = True, generator: Generator | None = None) -> None:
        _positive_int("WeightedRandomSampler", "num_samples", num_samples)
        if not isinstance(replacement, bool):
            raise ShrewValueError(f"WeightedRandomSampler: replacement should be a boolean value, "
                                  f"but got replacement={replacement!r}")
        w = np.asarray(weights._host() if isinstance(weights, Tensor) else weights,
                       dtype=np.float64)
        if w.ndim != 1 or not len(w):
            raise ShrewValueError(f"WeightedRandomSampler: weights should be a 1-d sequence, got "
                                  f"shape {w.shape}")
        if not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
            raise ShrewValueError("WeightedRandomSampler: weights must be finite, non-negative "
                                  "and not all zero")
        if not replacement and num_samples > np.count_nonzero(w):
            raise ShrewValueError(f"WeightedRandomSampler: cannot draw {num_samples} samples "
                                  f"without replacement from {np.count_nonzero(w)} non-zero "
                                  f"weights")
        self.weights, self.num_samples = w, int(num_samples)
        self.replacement, self.generator = replacement, generator

    def __iter__(self) -> Iterator[int]:
        gen = self.generator or generator_from_global_seed()
        return iter(gen.choice(self.weights, self.num_samples, self.replacement))

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """Groups a sampler's indices into lists of batch_size (the last one shorter, or
    dropped with drop_last)."""

    def __init__(self, sampler: Sampler[int] | Iterable[int], batch_size: int,
                 drop_last: bool) -> None:
        _positive_int("BatchSampler", "batch_size", batch_size)
        if not isinstance(drop_last, bool):
            raise ShrewValueError(f"BatchSampler: drop_last should be a boolean value, but got "
                                  f"drop_last={drop_last!r}")
        self.sampler, self.batch_size, self.drop_last = sampler, int(batch_size), drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for i in self.sampler:
            batch.append(i)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
