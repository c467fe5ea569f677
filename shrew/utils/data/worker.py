"""What runs inside a DataLoader worker process, and what crosses the process boundary.

Workers fetch and collate batches and send them back, pickled, as frames on their own
pipe (pipe.py: the main process never blocks inside a message).  Tensors cross
as host numpy arrays (`ship` / `unship`), so that no device state is pickled; a failure
crosses as its type and formatted traceback."""
from __future__ import annotations

import os
import pickle
import queue
import random
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...core.errors import ShrewError
from ..._tensor import Tensor
from .dataset import Dataset, IterableDataset
from .pipe import send_frame
from ...ops.random import manual_seed


class DataLoaderWorkerError(ShrewError, RuntimeError):
    """A DataLoader worker died, timed out or failed to start (a RuntimeError too, as
    PyTorch raises)."""


@dataclass(frozen=True)
class WorkerInfo:
    """What get_worker_info() tells code running in a worker."""
    id: int
    num_workers: int
    seed: int
    dataset: Dataset[Any]


_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """This worker's WorkerInfo inside a DataLoader worker process, None elsewhere."""
    return _info


# -- the fetchers: one batch from a list of indices (shared by the main process and workers)
class MapFetcher:
    """Batches of a map-style dataset: collate([dataset[i] for i in indices]), or
    collate(dataset[index]) without automatic batching."""

    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable[..., Any],
                 drop_last: bool) -> None:
        self.dataset, self.auto, self.collate_fn = dataset, auto_collation, collate_fn

    def fetch(self, index: Any) -> Any:
        if self.auto:
            return self.collate_fn([self.dataset[i] for i in index])
        return self.collate_fn(self.dataset[index])


class IterableFetcher:
    """Batches from the stream of an IterableDataset: as many samples as the index list
    is long (StopIteration when the stream is done, or too short with drop_last)."""

    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable[..., Any],
                 drop_last: bool) -> None:
        self.iterator: Iterator[Any] = iter(dataset)
        self.auto, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last

    def fetch(self, index: Any) -> Any:
        if not self.auto:
            return self.collate_fn(next(self.iterator))
        batch = []
        for _ in index:
            try:
                batch.append(next(self.iterator))
            except StopIteration:
                break
        if not batch or (self.drop_last and len(batch) < len(index)):
            raise StopIteration
        return self.collate_fn(batch)


def make_fetcher(dataset: Any, auto_collation: bool, collate_fn: Callable[..., Any],
                 drop_last: bool) -> MapFetcher | IterableFetcher:
    kind = IterableFetcher if isinstance(dataset, IterableDataset) else MapFetcher
    return kind(dataset, auto_collation, collate_fn, drop_last)


# -- crossing the process boundary ----------------------------------------------------------
@dataclass
class _ShippedTensor:
    array: np.ndarray
    device: str
    requires_grad: bool


def ship(data: Any) -> Any:
    """`data` with every Tensor replaced by a picklable host copy."""
    if isinstance(data, Tensor):
        return _ShippedTensor(data._host(), data.device, data.requires_grad)
    return _map_containers(data, ship)


def unship(data: Any) -> Any:
    """The inverse of ship: host copies back into Tensors on their devices."""
    if isinstance(data, _ShippedTensor):
        return Tensor(data.array, device=data.device, requires_grad=data.requires_grad)
    return _map_containers(data, unship)


def _map_containers(data: Any, fn: Callable[[Any], Any]) -> Any:
    if isinstance(data, dict):
        mapped = {k: fn(v) for k, v in data.items()}
        return mapped if type(data) is dict else type(data)(mapped)
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(fn(d) for d in data))
    if isinstance(data, (list, tuple)):
        return type(data)(fn(d) for d in data)
    return data


@dataclass
class Failure:
    """An exception raised in a worker, as the main process re-raises it."""
    worker_id: int
    exc_type: type[BaseException]
    text: str

    def reraise(self) -> None:
        message = (f"Caught {self.exc_type.__name__} in DataLoader worker process "
                   f"{self.worker_id}.\nOriginal {self.text}")
        try:
            error = self.exc_type(message)
        except Exception:  # an exception type that wants other arguments
            raise DataLoaderWorkerError(message) from None
        raise error


def failure(worker_id: int, exc: BaseException) -> Failure:
    """`exc` as a Failure that surely pickles (a local exception class does not)."""
    try:
        pickle.dumps(type(exc))
        kind: type[BaseException] = type(exc)
    except Exception:
        kind = DataLoaderWorkerError
    return Failure(worker_id, kind, traceback.format_exc())


def pack(key: Any, answer: Any, worker_id: int) -> bytes:
    """One answer pickled here, in the worker: a batch that does not pickle becomes a
    Failure the main process sees (pickled later, elsewhere, it would be lost and hang)."""
    try:
        return pickle.dumps((key, answer))
    except Exception as exc:
        return pickle.dumps((key, failure(worker_id, exc)))


class Exhausted:
    """A worker's answer when its IterableDataset stream has ended."""


def worker_loop(dataset: Any, index_queue: Any, results: Any, auto_collation: bool,
                collate_fn: Callable[..., Any], drop_last: bool, seed: int,
                init_fn: Callable[[int], None] | None, worker_id: int, num_workers: int,
                parent_pid: int, done: Any) -> None:
    """A worker's life: seed, run worker_init_fn, then answer ("fetch", key, indices)
    and ("reset", ...) messages on `results` (its pipe's write end) until None arrives,
    the `done` flag is set (the loader is shutting down: the tasks still queued are
    not wanted) or the parent process is gone."""
    global _info

    def wanted() -> bool:
        return os.getppid() == parent_pid and not done.value

    manual_seed(seed)
    random.seed(seed)
    _info = WorkerInfo(worker_id, num_workers, seed, dataset)
    try:
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = make_fetcher(dataset, auto_collation, collate_fn, drop_last)
    except Exception as exc:
        send_frame(results, pack(None, failure(worker_id, exc), worker_id), wanted)
        return
    while True:
        try:
            message = index_queue.get(timeout=1.0)
        except queue.Empty:
            if not wanted():  # the main process died or is done: do not linger
                return
            continue
        if message is None or done.value:
            return
        kind, key, index = message
        if kind == "reset":  # a new epoch of persistent workers: restart the stream
            fetcher = make_fetcher(dataset, auto_collation, collate_fn, drop_last)
            continue
        try:
            answer: Any = ship(fetcher.fetch(index))
        except StopIteration:
            answer = Exhausted()
        except Exception as exc:
            answer = failure(worker_id, exc)
        if not send_frame(results, pack(key, answer, worker_id), wanted):
            return
