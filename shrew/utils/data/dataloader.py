"""DataLoader: batches from a dataset, in the main process or in worker processes."""
from __future__ import annotations

import itertools
import multiprocessing
import os
import pickle
import signal
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from multiprocessing.connection import wait
from typing import Any

from ...core.errors import ShrewValueError
from ...ops.generator import Generator, generator_from_global_seed
from .collate import default_collate, default_convert
from .dataset import Dataset, IterableDataset
from .pipe import FrameReader
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler
from .worker import (DataLoaderWorkerError, Exhausted, Failure, make_fetcher, unship,
                     worker_loop)

_POLL_S = 0.1  # how often a waiting main process checks that its workers are alive
_JOIN_S = 2.0  # how long shutting down waits for a worker before terminating it


class DataLoader:
    """Iterates a dataset in batches, as torch.utils.data.DataLoader: the same arguments
    and defaults.  num_workers > 0 fetches and collates batches in worker processes
    (multiprocessing), prefetch_factor batches ahead per worker, handed out in sampler
    order; the sampler always runs here, in the main process, so the same seed gives the
    same batches whatever num_workers is.  pin_memory is accepted and changes nothing
    (there is no pinned host memory to use)."""

    def __init__(self, dataset: Dataset[Any], batch_size: int | None = 1,
                 shuffle: bool | None = None, sampler: Sampler[Any] | Iterable[Any] | None = None,
                 batch_sampler: Sampler[Any] | Iterable[Any] | None = None,
                 num_workers: int = 0, collate_fn: Callable[[Any], Any] | None = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context: Any = None, generator: Generator | None = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ShrewValueError("DataLoader: num_workers must be an int >= 0, got "
                                  f"{num_workers!r}")
        if timeout < 0:
            raise ShrewValueError(f"DataLoader: timeout must be >= 0, got {timeout!r}")
        if num_workers == 0 and prefetch_factor is not None:
            raise ShrewValueError("DataLoader: prefetch_factor needs num_workers > 0 (it counts "
                                  "batches fetched ahead per worker)")
        if prefetch_factor is not None and (not isinstance(prefetch_factor, int)
                                            or prefetch_factor < 1):
            raise ShrewValueError(f"DataLoader: prefetch_factor must be an int >= 1, got "
                                  f"{prefetch_factor!r}")
        if persistent_workers and num_workers == 0:
            raise ShrewValueError("DataLoader: persistent_workers needs num_workers > 0")
        self.dataset = dataset
        self.num_workers, self.timeout, self.worker_init_fn = num_workers, timeout, worker_init_fn
        self.prefetch_factor = 2 if prefetch_factor is None and num_workers else prefetch_factor
        self.persistent_workers, self.pin_memory = persistent_workers, pin_memory
        self.pin_memory_device, self.in_order = pin_memory_device, in_order
        self.multiprocessing_context, self.generator = multiprocessing_context, generator

        iterable = isinstance(dataset, IterableDataset)
        if iterable and (shuffle or sampler is not None or batch_sampler is not None):
            raise ShrewValueError("DataLoader: an IterableDataset takes no shuffle, sampler or "
                                  "batch_sampler (its own order is the order)")
        if sampler is not None and shuffle:
            raise ShrewValueError("DataLoader: sampler and shuffle are mutually exclusive")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ShrewValueError("DataLoader: batch_sampler is mutually exclusive with "
                                      "batch_size, shuffle, sampler and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ShrewValueError("DataLoader: batch_size=None (no batching) is mutually "
                                  "exclusive with drop_last")
        if sampler is None:
            if iterable:
                sampler = itertools.repeat(None)  # the stream decides when to stop
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)  # type: ignore[arg-type]
            else:
                sampler = SequentialSampler(dataset)  # type: ignore[arg-type]
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.drop_last = batch_size, drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self._pool: _WorkerPool | None = None  # the persistent workers, once started

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Iterable[Any]:
        return self.batch_sampler if self._auto_collation else self.sampler  # type: ignore[return-value]

    def __len__(self) -> int:
        if isinstance(self.dataset, IterableDataset):
            n = len(self.dataset)  # type: ignore[arg-type]  # TypeError without __len__
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self._index_sampler)  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[Any]:
        # One seed per pass, drawn before the sampler's own draws whatever num_workers is
        # (so the shuffles match): it seeds the workers' random state.
        base_seed = (self.generator or generator_from_global_seed()).random_seed()
        if self.num_workers == 0:
            return self._single_process(base_seed)
        if self._pool is None or not self._pool.alive():
            pool = _WorkerPool(self, base_seed)
            if self.persistent_workers:
                self._pool = pool
        else:
            pool = self._pool
            pool.new_epoch()
        return _MultiProcessIter(self, pool)

    def _single_process(self, base_seed: int) -> Iterator[Any]:
        fetcher = make_fetcher(self.dataset, self._auto_collation, self.collate_fn,
                               self.drop_last)
        for index in self._index_sampler:
            try:
                yield fetcher.fetch(index)
            except StopIteration:  # an IterableDataset's stream ended
                return

    def __del__(self) -> None:
        if getattr(self, "_pool", None) is not None:
            self._pool.shutdown()  # type: ignore[union-attr]


class _WorkerPool:
    """num_workers processes, each with its own index queue and its own result pipe."""

    def __init__(self, loader: DataLoader, base_seed: int) -> None:
        ctx = multiprocessing.get_context(loader.multiprocessing_context)
        self.index_queues = [ctx.Queue() for _ in range(loader.num_workers)]
        # Set at shutdown: the workers drop the tasks still queued.  A flag in shared memory
        # without a lock: a worker killed while it read an Event would leave the Event's
        # lock held, and the shutdown's set() waiting for it forever.
        self.done = ctx.RawValue("b", 0)
        self.epoch = 0
        self.workers = []
        self.readers = []
        for i, q in enumerate(self.index_queues):
            reader, writer = ctx.Pipe(duplex=False)
            w = ctx.Process(target=worker_loop, daemon=True, args=(
                loader.dataset, q, writer, loader._auto_collation, loader.collate_fn,
                loader.drop_last, (base_seed + i) % 2 ** 63, loader.worker_init_fn, i,
                loader.num_workers, os.getpid(), self.done))
            w.start()
            writer.close()  # the worker holds the only write end (and later workers none)
            self.workers.append(w)
            self.readers.append(FrameReader(reader))
        self._finalizer = weakref.finalize(self, _stop, self.workers, self.index_queues,
                                           self.readers, self.done)

    def alive(self) -> bool:
        return all(w.is_alive() for w in self.workers)

    def first_dead(self) -> str | None:
        """What ended the first worker found dead, as PyTorch words it; None if all live."""
        for i, w in enumerate(self.workers):
            if not w.is_alive():
                return _describe_death(i, w.pid, w.exitcode)
        return None

    def poll(self, timeout: float) -> list[bytearray]:
        """The complete frames that arrive within `timeout` seconds (maybe none)."""
        open_ = {r.fd: r for r in self.readers if not r.closed}
        ready = wait(list(open_), timeout)
        return [frame for fd in ready for frame in open_[fd].frames()]  # type: ignore[index]

    def new_epoch(self) -> None:
        """Start another pass with the same workers: their streams restart."""
        self.epoch += 1
        for q in self.index_queues:
            q.put(("reset", None, None))

    def shutdown(self, kill: bool = False) -> None:
        """Stop the workers: asked to, or after a failure killed at once (a worker that
        timed out or hangs mid-send would not answer)."""
        if kill:
            for w in self.workers:
                if w.is_alive():
                    w.kill()
        self._finalizer()


def _describe_death(worker_id: int, pid: int | None, exitcode: int | None) -> str:
    who = f"DataLoader worker {worker_id} (pid {pid})"
    if exitcode is not None and exitcode < 0:
        try:
            sig = signal.Signals(-exitcode)
            return f"{who} is killed by signal: {signal.strsignal(sig)} ({sig.name})"
        except ValueError:  # a signal number Python has no name for
            return f"{who} is killed by signal {-exitcode}"
    return f"{who} exited unexpectedly with exit code {exitcode}"


def _stop(workers: list[Any], index_queues: list[Any], readers: list[FrameReader],
          done: Any) -> None:
    done.value = 1
    for q in index_queues:
        try:
            q.put(None)
        except (OSError, ValueError):
            pass
    # A worker blocked mid-send finishes once its pipe is drained, then sees `done`.
    deadline = time.monotonic() + _JOIN_S
    while any(w.is_alive() for w in workers) and time.monotonic() < deadline:
        for r in readers:
            r.discard()
        wait([w.sentinel for w in workers] + [r.fd for r in readers if not r.closed], _POLL_S)
    for w in workers:
        if w.is_alive():
            w.terminate()
            w.join(timeout=_JOIN_S)
        if w.is_alive():  # a stopped process keeps SIGTERM pending: SIGKILL ends it anyway
            w.kill()
        w.join()
    for q in index_queues:
        q.cancel_join_thread()  # a dead worker never reads its queue: do not wait for it
        q.close()
    for r in readers:
        r.close()


class _MultiProcessIter:
    """One pass over a DataLoader with workers: keeps prefetch_factor batches in flight
    per worker, hands them out in order, and turns a dead worker, a timeout or an
    exception in a worker into an error here."""

    def __init__(self, loader: DataLoader, pool: _WorkerPool) -> None:
        self.loader, self.pool = loader, pool
        self.indices = iter(loader._index_sampler)
        self.active = [True] * loader.num_workers  # False once a worker's stream ended
        self.turn = itertools.cycle(range(loader.num_workers))
        self.sent = self.handed = 0
        self.arrived: dict[int, tuple[int, Any]] = {}  # task -> (its worker, the answer)
        self.task_worker: dict[int, int] = {}
        self.done = False
        for _ in range(loader.num_workers * (loader.prefetch_factor or 2)):
            self._send()

    def __iter__(self) -> _MultiProcessIter:
        return self

    def _send(self) -> None:
        if not any(self.active):
            return
        worker = next(self.turn)
        while not self.active[worker]:
            worker = next(self.turn)
        try:
            index = next(self.indices)
        except StopIteration:
            return
        self.pool.index_queues[worker].put(("fetch", (self.pool.epoch, self.sent), index))
        self.task_worker[self.sent] = worker
        self.sent += 1

    def __next__(self) -> Any:
        while not self.done:
            if self.handed == self.sent:
                break
            if self.handed not in self.arrived:
                self._receive()
                continue
            worker, answer = self.arrived.pop(self.handed)
            self.handed += 1
            if isinstance(answer, Exhausted):
                self.active[worker] = False
                continue
            self._send()
            return unship(answer)
        self._finish()
        raise StopIteration

    def _receive(self) -> None:
        """Wait for the next answers, checking the workers and the timeout between polls:
        never longer than `timeout=` (when set) nor a few polls past a worker's death."""
        timeout = self.loader.timeout
        start = time.monotonic()
        while True:
            # Liveness is read before the pipes, so that what a dead worker sent before it
            # died is all there to be read, and handed out, before its death is reported.
            dead = self.pool.first_dead()
            frames = self.pool.poll(0 if dead else _POLL_S)
            if frames:
                break
            if dead:
                self._fail(DataLoaderWorkerError(dead))
            if timeout and time.monotonic() - start > timeout:
                self._fail(DataLoaderWorkerError(f"DataLoader timed out after {timeout} "
                                                 f"seconds"))
        for frame in frames:
            self._file(*pickle.loads(frame))

    def _file(self, key: Any, answer: Any) -> None:
        if key is not None and key[0] != self.pool.epoch:
            return  # an answer to an abandoned earlier pass of persistent workers
        if isinstance(answer, Failure):
            self._finish(force=True)
            answer.reraise()
        task = key[1]
        self.arrived[task] = (self.task_worker.pop(task), answer)

    def _fail(self, error: Exception) -> None:
        self._finish(force=True, kill=True)
        raise error

    def _finish(self, force: bool = False, kill: bool = False) -> None:
        self.done = True
        if force or not self.loader.persistent_workers:
            self.pool.shutdown(kill)
            if self.loader._pool is self.pool:
                self.loader._pool = None

    def __del__(self) -> None:
        if not getattr(self, "done", True) and not self.loader.persistent_workers:
            self.pool.shutdown()
