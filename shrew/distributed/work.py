"""Non-blocking operations and their progress: Work handles, timeouts, metadata checks.

Every operation is a generator that starts MPI requests and yields them as a `Pending`;
its Work resumes it when they have all completed.  So each operation reads as straight
code (check, move, reduce, move, write back) while it runs interleaved with the caller:
DistributedDataParallel polls its buckets between gradient rules.

MPI requires every rank to start collectives in the same order.  Collective Works are
therefore advanced strictly first-in first-out: only the oldest unfinished one runs, and
the next starts when it is done.  Point-to-point Works advance on their own."""
from __future__ import annotations

import hashlib
import json
import time
from collections import deque
from collections.abc import Generator, Sequence
from typing import Any

from ..core.errors import DTypeError, ShapeError, ShrewError
from .group import DistBackendError, ProcessGroup

_META, _VERDICT = 1, 2            # tags on the group's ctrl communicator
_META_BYTES = 4096                # longer descriptions travel as a digest


class Pending:
    """MPI requests an operation waits for; `peers[i]` is the rank request i needs (None
    for a collective, which needs every rank), `waiting_for` describes them in errors."""

    __slots__ = ("requests", "peers", "waiting_for", "statuses")

    def __init__(self, requests: Sequence[Any], peers: Sequence[int | None],
                 waiting_for: str) -> None:
        from mpi4py import MPI
        self.requests = list(requests)
        self.peers = list(peers)
        self.waiting_for = waiting_for
        self.statuses = [MPI.Status() for _ in self.requests]

    def test(self) -> bool:
        from mpi4py import MPI
        return bool(MPI.Request.Testall(self.requests, self.statuses))

    def missing(self) -> list[int]:
        """The peers whose requests have not completed."""
        return sorted({p for r, p in zip(self.requests, self.peers)
                       if p is not None and not r.Test()})


Steps = Generator[Pending, None, None]
"""An operation: yields what it waits for, returns when it is complete."""

_ordered: deque[Work] = deque()   # collective Works in the order they were started
_unordered: list[Work] = []       # point-to-point Works


class Work:
    """The handle an operation started with async_op=True returns: `wait()` blocks until it
    is complete (its results written into the tensors) or the group's timeout passes."""

    __slots__ = ("name", "_group", "_steps", "_pending", "_done", "_ordered")

    def __init__(self, name: str, group: ProcessGroup, steps: Steps, ordered: bool) -> None:
        self.name = name
        self._group = group
        self._steps = steps
        self._pending: Pending | None = None
        self._done = False
        self._ordered = ordered
        (_ordered if ordered else _unordered).append(self)
        progress()

    def is_completed(self) -> bool:
        """Whether the operation has finished (this also moves every operation on)."""
        progress()
        return self._done

    def wait(self, timeout: float | None = None) -> bool:
        """Block until complete.  After `timeout` seconds (default: the group's), raise a
        DistBackendError naming the ranks that did not arrive."""
        limit = self._group.timeout if timeout is None else float(timeout)
        # Rank 0 sees who is missing; the others give it time to say so first.
        patience = limit if self._group.rank == 0 else limit * 1.5 + 2.0
        start = time.monotonic()
        while not self.is_completed():
            waited = time.monotonic() - start
            if waited > patience:
                blocker = _ordered[0] if self._ordered and _ordered else self
                raise DistBackendError(_timeout_message(blocker, blocker._pending, limit))
            # MPI moves a large message on only while it is being called, so poll without
            # a pause (as MPI's own blocking calls do) while the data flows; a rank that
            # has waited a second is waiting for another rank, and naps instead.
            if waited > 1.0:
                time.sleep(1e-3)
        return True

    def _advance(self) -> bool:
        """Resume the operation as far as its completed requests allow; True when done."""
        while not self._done:
            if self._pending is not None and not self._pending.test():
                return False
            try:
                self._pending = next(self._steps)
            except StopIteration:
                self._pending, self._done = None, True
            except BaseException:
                self._pending, self._done = None, True
                queue = _ordered if self._ordered else _unordered
                queue.remove(self)
                raise
        return True


def progress() -> None:
    """Move every started operation on without blocking: the collectives oldest first,
    the point-to-point ones each on its own (a send to this very rank completes only when
    its receive moves on too)."""
    while _ordered and _ordered[0]._advance():
        _ordered.popleft()
    for work in list(_unordered):
        if work._advance():
            _unordered.remove(work)


def drain() -> None:
    """Wait for every started operation (before the group goes away)."""
    while _ordered or _unordered:
        (_ordered or _unordered)[0].wait()


def _timeout_message(work: Work, pending: Pending | None, limit: float) -> str:
    group = work._group
    head = (f"{work.name}: rank {group.rank} of {group.size} timed out after {limit:g} s "
            f"waiting for ")
    if pending is None:
        return head + "the operation to start"
    missing = pending.missing()
    if missing:
        who = ", ".join(str(r) for r in missing)
        return (head + f"rank{'s' if len(missing) > 1 else ''} {who} ({pending.waiting_for}; "
                f"a rank that never arrives has exited, crashed or is stuck elsewhere)")
    return head + f"the other ranks ({pending.waiting_for})"


# -- the metadata check every collective starts with ------------------------------------

def agree(group: ProcessGroup, name: str, meta: dict[str, Any]) -> Steps:
    """Check that every rank called the same collective with matching tensors.

    Each rank sends rank 0 a short description (the collective's number, its name, the
    shapes, dtypes and roots); rank 0 compares them with its own and answers each rank with
    the verdict.  A mismatch raises the same ShapeError/DTypeError/ShrewError on every
    rank, naming the ranks and what they passed, before any data moves.  The exchange is
    also how a missing rank is found: rank 0 knows whose description never came."""
    seq = group.seq
    group.seq += 1
    mine = {"op": name, "seq": seq, **meta}
    if group.size == 1:
        return
    payload = _encode(mine)
    if group.rank == 0:
        bufs = [bytearray(_META_BYTES) for _ in range(group.size - 1)]
        peers = list(range(1, group.size))
        pending = Pending([group.ctrl.Irecv(b, source=r, tag=_META) for b, r in zip(bufs, peers)],
                          peers, f"not yet in {name}, collective #{seq}")
        yield pending
        theirs = [bytes(b[:s.Get_count()]) for b, s in zip(bufs, pending.statuses)]
        verdict = _compare(name, seq, payload, mine, theirs)
        answer = json.dumps(verdict).encode()
        yield Pending([group.ctrl.Isend(answer, dest=r, tag=_VERDICT) for r in peers],
                      peers, f"to take rank 0's verdict on {name}, collective #{seq}")
    else:
        buf = bytearray(_META_BYTES)
        pending = Pending([group.ctrl.Isend(payload, dest=0, tag=_META),
                           group.ctrl.Irecv(buf, source=0, tag=_VERDICT)], [0, 0],
                          f"to check {name}, collective #{seq}; rank 0 names any rank "
                          f"that is missing")
        yield pending
        verdict = json.loads(bytes(buf[:pending.statuses[1].Get_count()]))
    if verdict:
        kind = {"shape": ShapeError, "dtype": DTypeError}.get(verdict["kind"], ShrewError)
        raise kind(verdict["message"])


def _encode(meta: dict[str, Any]) -> bytes:
    text = json.dumps(meta, sort_keys=True).encode()
    if len(text) <= _META_BYTES:
        return text
    digest = hashlib.sha256(text).hexdigest()
    return json.dumps({"op": meta["op"], "seq": meta["seq"], "digest": digest}).encode()


def _compare(name: str, seq: int, payload: bytes, mine: dict[str, Any],
             theirs: list[bytes]) -> dict[str, str]:
    """Rank 0's verdict: {} when every rank agrees, else the kind and message of the error."""
    for rank, raw in enumerate(theirs, start=1):
        if raw == payload:
            continue
        other = json.loads(raw)
        where = f"{name} (collective #{seq})"
        if other["op"] != mine["op"] or other["seq"] != mine["seq"]:
            return {"kind": "call", "message":
                    f"{where}: rank {rank} called {other['op']} (its collective "
                    f"#{other['seq']}) while rank 0 called {name}; every rank must call the "
                    f"same collectives in the same order"}
        diffs = [f"{k} {other.get(k)} on rank {rank} but {mine.get(k)} on rank 0"
                 for k in sorted(set(mine) | set(other)) if other.get(k) != mine.get(k)]
        differ = [k for k in set(mine) | set(other) if other.get(k) != mine.get(k)]
        kind = ("dtype" if "dtype" in differ else
                "shape" if differ != ["reduce"] and "src" not in differ and "dst" not in differ
                else "call")
        return {"kind": kind, "message": f"{where}: the ranks disagree: " + "; ".join(diffs)}
    return {}
