"""The static memory plan of a replay on a device backend (OpenCL): one arena of device
memory per captured step list, each planned allocation a sub-buffer of it.

The cpu's arena (arena.py) sees numpy's allocations and frees through a memory handler;
a device backend's buffers come from its own pool instead, through one swappable function
(`backend.allocate(nbytes)`), and a buffer object takes no weak reference.  So the arena
swaps that function while a replay of its step list runs, and tells that a buffer is
free when nothing but the arena itself holds the buffer object (its reference count):
every view of a device array shares its buffer object, so a buffer held by anyone, a
view included, is not free.

- The first two replays record each allocation of `arena.SMALL` bytes or more, taken
  from the pool: its size, and the clock's time at its allocation and at the allocation
  before which it was seen free (the clock ticks at every allocation and every free
  seen).
- The allocations of the first that were freed before the second began are placed by
  the cpu arena's placement (`arena.placements`, export's greedy placement), each offset
  rounded to the device's base-address alignment, and made once into sub-buffers of one
  buffer.
- Every later replay hands allocation i its sub-buffer when the size is the planned one
  and no sub-buffer overlapping it is still held; anything else comes from the pool, so
  a wrong plan costs memory, never correctness.

The device runs one in-order queue (the backend's), so a kernel writing a reused block
runs after every kernel that read its previous tenant, as with the pool's own reuse.
"""
from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from . import arena

_ONLY_OURS = 2  # sys.getrefcount of a buffer held by one container of ours alone


class DeviceArena:
    """One step list's arena on `backend`, which has `allocate(nbytes)` (swapped while a
    replay runs), `pool_allocate(nbytes)` (its pool's: what the plan does not take),
    `arena_buffer(nbytes)`, `arena_part(buffer, offset, nbytes)`, `arena_align` (bytes),
    `max_alloc_bytes` and `release_pool()`."""

    def __init__(self, backend: Any) -> None:
        self._backend = backend
        self._pool = backend.pool_allocate
        self._small = arena.SMALL  # smaller allocations are the pool's alone
        self.replays = 0  # the first arena.RECORDED recorded, the rest served
        self.blocks = 0  # the allocations the plan placed
        # recording: per allocation [size, born, died (-1: alive)], and those still held
        self._seen: list[list[int]] = []
        self._held: dict[int, Any] = {}  # index in _seen -> its buffer
        self._clock = 0
        self._starts: list[tuple[int, int]] = []  # per recorded replay: (len(_seen), clock)
        # serving: per allocation its planned size and sub-buffer (None: the pool's), and
        # the planned ones whose memory overlaps its own
        self._sizes: list[int] = []
        self._parts: list[Any] = []
        self._overlaps: list[tuple[int, ...]] = []
        self._next = 0
        self._capacity = 0
        self._served = self._missed = self._passed = 0

    @contextmanager
    def serving(self) -> Iterator[None]:
        if self.replays >= arena.RECORDED and not self.blocks:  # nothing planned: the pool's
            yield
            return
        if self.replays < arena.RECORDED:
            self._collect()
            self._starts.append((len(self._seen), self._clock))
            self._clock += 1
            allocate = self._record
        else:
            self._next = 0
            allocate = self._serve
        outer, self._backend.allocate = self._backend.allocate, allocate
        try:
            yield
        finally:
            self._backend.allocate = outer
            self.replays += 1
            if self.replays == arena.RECORDED:
                self._collect()
                self._plan()

    # -- recording -------------------------------------------------------------------
    def _collect(self) -> None:
        """Note the recorded buffers that nothing but this arena holds any more as freed
        now, and let them go back to the pool."""
        for k in [k for k in self._held if sys.getrefcount(self._held[k]) <= _ONLY_OURS]:
            del self._held[k]
            self._seen[k][2] = self._clock
            self._clock += 1

    def _record(self, nbytes: int) -> Any:
        self._collect()  # first: the pool reuses what was freed, as it would eagerly
        buffer = self._pool(nbytes)
        if nbytes >= self._small:
            self._held[len(self._seen)] = buffer
            self._seen.append([nbytes, self._clock, -1])
        self._clock += 1
        return buffer

    def _plan(self) -> None:
        (first, _), (second, next_start) = self._starts
        seen = np.array(self._seen[first:second], np.int64).reshape(-1, 3)
        self._seen, self._held, self._starts = [], {}, []  # the buffers go back to the pool
        backend = self._backend
        where, end = arena.placements(seen[:, 0], seen[:, 1], seen[:, 2], next_start,
                                      backend.arena_align)
        planned = np.flatnonzero(where >= 0)
        if not len(planned) or end > backend.max_alloc_bytes:
            return
        backend.release_pool()  # what the recorded replays freed: the arena serves it now
        parts: list[Any] = [None] * len(seen)
        try:
            buffer = backend.arena_buffer(end)
            for i in planned:
                parts[i] = backend.arena_part(buffer, int(where[i]), int(seen[i, 0]))
        except Exception:  # no room (each device has its own error class): the pool serves
            return
        self._sizes, self._parts = seen[:, 0].tolist(), parts
        lo, hi = where[planned], where[planned] + seen[planned, 0]
        self._overlaps = [()] * len(seen)
        for k, i in enumerate(planned):
            others = planned[(lo < hi[k]) & (lo[k] < hi)]
            self._overlaps[i] = tuple(int(j) for j in others)  # i among them
        self._capacity, self.blocks = end, len(planned)

    # -- serving ---------------------------------------------------------------------
    def _serve(self, nbytes: int) -> Any:
        if nbytes < self._small:
            self._passed += nbytes
            return self._pool(nbytes)
        i = self._next
        self._next += 1
        if i >= len(self._sizes) or self._sizes[i] != nbytes:
            self._missed += nbytes  # more allocations, or a size the data decides
            return self._pool(nbytes)
        if self._parts[i] is None:
            self._passed += nbytes
            return self._pool(nbytes)
        parts = self._parts
        if any(sys.getrefcount(parts[j]) > _ONLY_OURS for j in self._overlaps[i]):
            self._missed += nbytes  # its memory is still held
            return self._pool(nbytes)
        self._served += nbytes
        return parts[i]

    def stats(self) -> dict[str, int]:
        """As arena.Arena.stats: the arena's size, the bytes served, missed and passed
        since the plan, and the blocks placed."""
        return {"capacity": self._capacity, "served": self._served, "missed": self._missed,
                "passed": self._passed, "blocks": self.blocks}
