"""The static memory plan of a replay on the cpu: one arena per captured step list.

A replay allocates the same arrays in the same order each time.  Its first two replays
run with a numpy memory handler (arena.c) that records every array's size and lifetime;
the arrays of the first that were freed before the second began (its temporaries, and the
gradients a step leaves in `.grad` until the next replay drops them) are then placed in
one arena by `shrew.export`'s placement (the largest first, each into the best-fitting gap
among the blocks alive with it), and every later replay takes them from there: no malloc,
no page faults on fresh memory, the same addresses step after step.  The arena is a cache,
not a contract: an allocation the plan did not see, or whose block someone still holds,
comes from numpy's own handler, so a wrong plan costs memory, never correctness.

Arrays below `SMALL` bytes stay with numpy's own handler (its cache of small blocks, then
malloc), as do arrays that outlive the start of the next replay (a result the caller
keeps): as they would eagerly.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

from ..backends.host_memory import release_freed_memory
from ..export.plan import ALIGN, place

SMALL = 4096
"""Arrays this small stay with numpy's own handler, which caches the smallest itself."""
MOST = 4096
"""Blocks placed at most per arena (the placement takes time quadratic in their count)."""

_FIELDS = 4  # per recorded allocation (arena.c's Allocation): size, born, died, pointer
RECORDED = 2  # replays recorded before the plan


@cache
def _source() -> str:
    return resources.files(__package__).joinpath("arena.c").read_text()


def _extension() -> Any:
    """arena.c built and imported, or None where no C compiler serves (fuse's reason)."""
    from . import fuse
    from .fuse_c import load_extension
    text = _source()
    return load_extension(
        "shrew_arena", text,
        lambda module: f'#define MODULE_NAME "{module}"\n#define MODULE_INIT PyInit_{module}\n'
                       + text, fuse._missing["cpu"])


class Arena:
    """One step list's arena: `with arena.serving():` around each replay of it."""

    def __init__(self, extension: Any) -> None:
        self._ext = extension
        self._handler = extension.new(SMALL)
        self.replays = 0  # the first RECORDED recorded, the rest served
        self.blocks = 0  # the blocks the plan placed

    @contextmanager
    def serving(self) -> Iterator[None]:
        if self.replays >= RECORDED and not self.blocks:  # nothing planned: numpy's own
            yield
            return
        if self.replays == RECORDED:
            # The recorded replays' arrays came from malloc, which keeps what they freed
            # for reuse (host_memory); the last of them (the gradients the previous replay
            # left) went as this replay began, and from now on the arena serves their
            # sizes: kept, that memory would only add to the footprint.
            release_freed_memory()
        old = self._ext.use(self._handler)
        try:
            yield
        finally:
            self._ext.restore(old)
            self.replays += 1
            if self.replays == RECORDED:
                self._plan()

    def _plan(self) -> None:
        try:
            seen = np.frombuffer(self._ext.recorded(self._handler), np.int64)
        except MemoryError:  # the record could not grow: no plan, numpy's handler serves
            return
        seen = seen.reshape(-1, _FIELDS)
        starts = np.flatnonzero(seen[:, 0] == -1)  # the replays' starts
        first = seen[starts[0] + 1:starts[1]]
        sizes = np.ascontiguousarray(first[:, 0])
        where, end = placements(sizes, first[:, 1], first[:, 2], seen[starts[1], 1], ALIGN)
        self._ext.plan(self._handler, where.tobytes(), sizes.tobytes(), end)
        self.blocks = int(np.count_nonzero(where >= 0))

    def stats(self) -> dict[str, int]:
        """The arena's size and, in bytes since the plan: `served` from the arena,
        `missed` (planned there, but another size came at that place in the order, or
        the block was still held: from numpy's own handler), `passed` (not planned: from
        numpy's own handler); the blocks placed."""
        capacity, served, missed, passed, _ = self._ext.stats(self._handler)
        return {"capacity": capacity, "served": served, "missed": missed, "passed": passed,
                "blocks": self.blocks}


def placements(sizes: np.ndarray, born: np.ndarray, died: np.ndarray, next_start: int,
               align: int) -> tuple[np.ndarray, int]:
    """The plan of a recorded replay's allocations (their sizes, and the clock's time at
    each one's allocation and free, -1 for never): each one's offset in one arena, -1 for
    those it does not take, and the arena's size.  It takes those freed before the next
    replay began (at most MOST, the largest), each rounded up to `align` bytes."""
    chosen = np.flatnonzero((died >= 0) & (died < next_start))
    if len(chosen) > MOST:
        chosen = np.sort(chosen[np.argsort(-sizes[chosen], kind="stable")[:MOST]])
    rounded = -(-sizes[chosen] // align) * align
    offsets, end = place([(int(s), int(b), int(d))
                          for s, b, d in zip(rounded, born[chosen], died[chosen])])
    where = np.full(len(sizes), -1, np.int64)
    where[chosen] = offsets
    return where, end


def new_arena() -> Arena | None:
    """An arena, or None where arena.c cannot be built (no C compiler: replays allocate
    as eager does)."""
    extension = _extension()
    return None if extension is None else Arena(extension)
