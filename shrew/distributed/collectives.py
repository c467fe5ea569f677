"""torch.distributed's collectives and point-to-point operations, on MPI.

Tensors are staged through host memory (a CPU tensor's copy, an OpenCL or CUDA tensor's
download) and MPI only moves bytes; reductions are done here, in numpy, in a fixed rank
order, so a sum is bitwise the same on every rank and in every run whatever algorithm the
MPI library picks (see `reduce_in_rank_order`).  Results are written back into the
tensors in place, on their own device, as PyTorch's collectives do."""
from __future__ import annotations

import enum
import pickle  # noqa: S403  (broadcast_object_list, as torch's)
from typing import Any

import numpy as np

from ..core.errors import type_name
from ..core.errors import ArgumentError, DTypeError, ShapeError, ShrewTypeError
from ..ops.creation import from_numpy, tensor
from ..core.grad_mode import no_grad
from ..core.shape import fmt, numel
from .._tensor import Tensor
from .group import ProcessGroup, default_group
from .work import Pending, Steps, Work, agree


class ReduceOp(enum.Enum):
    """How all_reduce and reduce_scatter_tensor combine the ranks' values.  AVG is for
    floating-point tensors; on bool tensors SUM and MAX are "any", PRODUCT and MIN "all"."""

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"


_UFUNCS = {ReduceOp.SUM: np.add, ReduceOp.AVG: np.add, ReduceOp.PRODUCT: np.multiply,
           ReduceOp.MIN: np.minimum, ReduceOp.MAX: np.maximum}
_BOOL_UFUNCS = {ReduceOp.SUM: np.logical_or, ReduceOp.MAX: np.logical_or,
                ReduceOp.PRODUCT: np.logical_and, ReduceOp.MIN: np.logical_and}


def reduce_in_rank_order(rows: np.ndarray, op: ReduceOp) -> np.ndarray:
    """Combine rows[0], rows[1], ... (one per rank) left to right: the same operands in
    the same order on every rank and in every run, so float results are reproducible."""
    ufunc = _BOOL_UFUNCS[op] if rows.dtype == np.bool_ else _UFUNCS[op]
    acc = rows[0].copy()
    for row in rows[1:]:
        ufunc(acc, row, out=acc)
    if op is ReduceOp.AVG:
        np.divide(acc, rows.dtype.type(len(rows)), out=acc)
    return acc


def _as_bytes(a: np.ndarray) -> np.ndarray:
    return a.reshape(-1).view(np.uint8)


def _host(t: Tensor) -> np.ndarray:
    return np.ascontiguousarray(t._host())


def _write(t: Tensor, values: np.ndarray) -> None:
    """Write host values into t's own memory, on its device."""
    with no_grad():
        t.copy_(from_numpy(np.ascontiguousarray(values).reshape(t.shape)))


def _meta(t: Tensor) -> dict[str, Any]:
    return {"shape": list(t.shape), "dtype": str(t.dtype)}


def _check_tensor(op: str, t: object, what: str = "tensor") -> Tensor:
    if not isinstance(t, Tensor):
        raise ShrewTypeError(f"{op}: {what} must be a shrew.Tensor, got {type_name(t)}")
    return t


def _check_rank(op: str, group: ProcessGroup, rank: object, what: str) -> int:
    if not isinstance(rank, int) or isinstance(rank, bool) or not 0 <= rank < group.size:
        raise ArgumentError(f"{op}: {what}={rank!r} is not a rank of this job (0 .. "
                            f"{group.size - 1})")
    return rank


def _check_op(name: str, op: object, t: Tensor) -> ReduceOp:
    if not isinstance(op, ReduceOp):
        raise ArgumentError(f"{name}: op must be a ReduceOp (SUM, AVG, PRODUCT, MIN, MAX), "
                            f"got {op!r}")
    if op is ReduceOp.AVG and not t.dtype.is_floating_point:
        raise DTypeError(f"{name}: ReduceOp.AVG needs a floating-point tensor, got {t.dtype}")
    return op


def _check_list(op: str, tensors: object, like: Tensor, size: int, what: str) -> list[Tensor]:
    """A list of world-size tensors, each shaped and typed like `like`."""
    if not isinstance(tensors, (list, tuple)) or len(tensors) != size:
        got = len(tensors) if isinstance(tensors, (list, tuple)) else type_name(tensors)
        raise ArgumentError(f"{op}: {what} must be a list of {size} tensors (one per rank), "
                            f"got {got}")
    for i, t in enumerate(tensors):
        _check_tensor(op, t, f"{what}[{i}]")
        if t.shape != like.shape or t.dtype != like.dtype:
            raise (DTypeError if t.dtype != like.dtype else ShapeError)(
                f"{op}: {what}[{i}] is {fmt(t.shape)} {t.dtype} but the tensor is "
                f"{fmt(like.shape)} {like.dtype}")
    return list(tensors)


def _run(name: str, group: ProcessGroup, steps: Steps, async_op: bool) -> Work | None:
    work = Work(name, group, steps, ordered=True)
    if async_op:
        return work
    work.wait()
    return None


# -- the fixed-order all-reduce, on host arrays (DistributedDataParallel uses it too) ---

def all_reduce_array(group: ProcessGroup, flat: np.ndarray, op: ReduceOp,
                     name: str = "all_reduce", meta: dict[str, Any] | None = None) -> Steps:
    """Reduce a 1-d host array across ranks, in place: a reduce-scatter (each rank gets
    one slice from every rank and combines them in rank order) and an all-gather of the
    combined slices.  MPI moves bytes only, so the result is the same on every rank and in
    every run; the volume is that of a ring all-reduce, 2 (N-1)/N times the array."""
    yield from agree(group, name, meta if meta is not None else
                     {"shape": [flat.size], "dtype": str(flat.dtype), "reduce": op.value})
    n, size, item = flat.size, group.size, flat.itemsize
    if size == 1:
        flat[...] = reduce_in_rank_order(flat[None], op)
        return
    counts = [n // size + (r < n % size) for r in range(size)]
    starts = np.cumsum([0] + counts[:-1]).tolist()
    mine = counts[group.rank]
    rows = np.empty((size, mine), flat.dtype)
    from mpi4py import MPI
    yield Pending([group.data.Ialltoallv(
        [_as_bytes(flat), ([c * item for c in counts], [s * item for s in starts]), MPI.BYTE],
        [_as_bytes(rows), ([mine * item] * size, [r * mine * item for r in range(size)]),
         MPI.BYTE])], [None], f"{name}'s reduce-scatter")
    combined = reduce_in_rank_order(rows, op)
    yield Pending([group.data.Iallgatherv(
        [_as_bytes(combined), MPI.BYTE],
        [_as_bytes(flat), ([c * item for c in counts], [s * item for s in starts]), MPI.BYTE])],
        [None], f"{name}'s all-gather")


# -- the public collectives -------------------------------------------------------------

def all_reduce(tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group: None = None,
               async_op: bool = False) -> Work | None:
    """Combine `tensor` across ranks with `op`; every rank gets the result in place."""
    g = default_group("all_reduce")
    t = _check_tensor("all_reduce", tensor)
    op = _check_op("all_reduce", op, t)
    flat = _host(t).reshape(-1)

    def steps() -> Steps:
        yield from all_reduce_array(g, flat, op, meta={**_meta(t), "reduce": op.value})
        _write(t, flat)
    return _run("all_reduce", g, steps(), async_op)


def broadcast(tensor: Tensor, src: int, group: None = None,
              async_op: bool = False) -> Work | None:
    """Copy rank `src`'s tensor into `tensor` on every rank."""
    g = default_group("broadcast")
    t = _check_tensor("broadcast", tensor)
    src = _check_rank("broadcast", g, src, "src")
    host = _host(t)

    def steps() -> Steps:
        yield from agree(g, "broadcast", {**_meta(t), "src": src})
        if g.size > 1:
            yield Pending([g.data.Ibcast(_as_bytes(host), root=src)], [None], "broadcast")
        if g.rank != src:
            _write(t, host)
    return _run("broadcast", g, steps(), async_op)


def all_gather(tensor_list: list[Tensor], tensor: Tensor, group: None = None,
               async_op: bool = False) -> Work | None:
    """tensor_list[r] receives rank r's `tensor`, on every rank."""
    g = default_group("all_gather")
    t = _check_tensor("all_gather", tensor)
    outs = _check_list("all_gather", tensor_list, t, g.size, "tensor_list")
    host = _host(t)
    rows = np.empty((g.size, host.size), host.dtype)

    def steps() -> Steps:
        yield from agree(g, "all_gather", _meta(t))
        yield from _gather_rows(g, host, rows, "all_gather")
        for out, row in zip(outs, rows):
            _write(out, row)
    return _run("all_gather", g, steps(), async_op)


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, group: None = None,
                           async_op: bool = False) -> Work | None:
    """Every rank's input, in rank order, into `output_tensor`: shaped
    [world_size * d0, ...] (concatenated) or [world_size, d0, ...] (stacked)."""
    g = default_group("all_gather_into_tensor")
    out = _check_tensor("all_gather_into_tensor", output_tensor, "output_tensor")
    t = _check_tensor("all_gather_into_tensor", input_tensor, "input_tensor")
    _check_sizes("all_gather_into_tensor", out, t, g.size, "output_tensor", "input_tensor")
    host = _host(t)
    rows = np.empty((g.size, host.size), host.dtype)

    def steps() -> Steps:
        yield from agree(g, "all_gather_into_tensor", _meta(t))
        yield from _gather_rows(g, host, rows, "all_gather_into_tensor")
        _write(out, rows)
    return _run("all_gather_into_tensor", g, steps(), async_op)


def reduce_scatter_tensor(output: Tensor, input: Tensor, op: ReduceOp = ReduceOp.SUM,
                          group: None = None, async_op: bool = False) -> Work | None:
    """Split `input` into world-size equal chunks along dim 0; rank r gets chunk r combined
    across ranks with `op`."""
    g = default_group("reduce_scatter_tensor")
    out = _check_tensor("reduce_scatter_tensor", output, "output")
    t = _check_tensor("reduce_scatter_tensor", input, "input")
    _check_sizes("reduce_scatter_tensor", t, out, g.size, "input", "output")
    op = _check_op("reduce_scatter_tensor", op, t)
    host = _host(t).reshape(g.size, -1)
    rows = np.empty_like(host)

    def steps() -> Steps:
        yield from agree(g, "reduce_scatter_tensor", {**_meta(t), "reduce": op.value})
        if g.size == 1:
            rows[...] = host
        else:
            yield Pending([g.data.Ialltoall(_as_bytes(host), _as_bytes(rows))], [None],
                          "reduce_scatter_tensor")
        _write(out, reduce_in_rank_order(rows, op))
    return _run("reduce_scatter_tensor", g, steps(), async_op)


def gather(tensor: Tensor, gather_list: list[Tensor] | None = None, dst: int = 0,
           group: None = None, async_op: bool = False) -> Work | None:
    """Rank `dst` receives every rank's tensor into gather_list (given on dst only)."""
    g = default_group("gather")
    t = _check_tensor("gather", tensor)
    dst = _check_rank("gather", g, dst, "dst")
    outs = _root_list("gather", gather_list, t, g, dst, "gather_list")
    host = _host(t)
    rows = np.empty((g.size, host.size), host.dtype)

    def steps() -> Steps:
        yield from agree(g, "gather", {**_meta(t), "dst": dst})
        if g.size == 1:
            rows[0] = host.reshape(-1)
        else:
            yield Pending([g.data.Igather(_as_bytes(host), _as_bytes(rows), root=dst)], [None],
                          "gather")
        for out, row in zip(outs, rows):
            _write(out, row)
    return _run("gather", g, steps(), async_op)


def scatter(tensor: Tensor, scatter_list: list[Tensor] | None = None, src: int = 0,
            group: None = None, async_op: bool = False) -> Work | None:
    """Rank r receives scatter_list[r] (given on `src` only) into `tensor`."""
    g = default_group("scatter")
    t = _check_tensor("scatter", tensor)
    src = _check_rank("scatter", g, src, "src")
    ins = _root_list("scatter", scatter_list, t, g, src, "scatter_list")
    rows = (np.stack([_host(x).reshape(-1) for x in ins]) if ins
            else np.empty((0, numel(t.shape)), t.dtype.np))
    host = np.empty(numel(t.shape), t.dtype.np)

    def steps() -> Steps:
        yield from agree(g, "scatter", {**_meta(t), "src": src})
        if g.size == 1:
            host[...] = rows[0]
        else:
            yield Pending([g.data.Iscatter(_as_bytes(rows), _as_bytes(host), root=src)],
                          [None], "scatter")
        _write(t, host)
    return _run("scatter", g, steps(), async_op)


def barrier(group: None = None, async_op: bool = False,
            device_ids: list[int] | None = None) -> Work | None:
    """Return once every rank has called barrier (rank 0 names any that does not);
    device_ids (NCCL's hint of which GPU to sync) is accepted and has nothing to select."""
    g = default_group("barrier")
    return _run("barrier", g, agree(g, "barrier", {}), async_op)


def reduce(tensor: Tensor, dst: int, op: ReduceOp = ReduceOp.SUM, group: None = None,
           async_op: bool = False) -> Work | None:
    """Combine `tensor` across ranks with `op` into rank `dst`'s tensor; the other ranks'
    tensors are left as they were."""
    g = default_group("reduce")
    t = _check_tensor("reduce", tensor)
    dst = _check_rank("reduce", g, dst, "dst")
    op = _check_op("reduce", op, t)
    flat = _host(t).reshape(-1).copy()

    def steps() -> Steps:
        yield from all_reduce_array(g, flat, op, meta={**_meta(t), "reduce": op.value,
                                                       "dst": dst})
        if g.rank == dst:
            _write(t, flat)
    return _run("reduce", g, steps(), async_op)


def broadcast_object_list(object_list: list[Any], src: int = 0, group: None = None,
                          device: Any = None) -> None:
    """Replace object_list's items on every rank with rank `src`'s (pickled there and
    unpickled here, as PyTorch's: only use it with ranks you trust)."""
    g = default_group("broadcast_object_list")
    src = _check_rank("broadcast_object_list", g, src, "src")
    if not isinstance(object_list, list):
        raise ShrewTypeError(f"broadcast_object_list: object_list must be a list, got "
                             f"{type(object_list).__name__}")
    payload = pickle.dumps(object_list) if g.rank == src else b""
    size = tensor([len(payload)])
    broadcast(size, src)
    data = tensor(np.frombuffer(payload, np.uint8) if g.rank == src else
                  np.zeros(int(size.item()), np.uint8))
    broadcast(data, src)
    if g.rank != src:
        object_list[:] = pickle.loads(data.numpy().tobytes())  # noqa: S301  (torch's contract)


def _gather_rows(g: ProcessGroup, host: np.ndarray, rows: np.ndarray, name: str) -> Steps:
    if g.size == 1:
        rows[0] = host.reshape(-1)
        return
    yield Pending([g.data.Iallgather(_as_bytes(host), _as_bytes(rows))], [None], name)


def _check_sizes(op: str, big: Tensor, small: Tensor, size: int, big_name: str,
                 small_name: str) -> None:
    """`big` holds world-size copies of `small`: concatenated along dim 0, or stacked."""
    if big.dtype != small.dtype:
        raise DTypeError(f"{op}: {big_name} is {big.dtype} but {small_name} is {small.dtype}")
    s = small.shape
    concatenated = (s[0] * size,) + s[1:] if s else None
    if big.shape not in (concatenated, (size,) + s):
        raise ShapeError(f"{op}: {big_name} has shape {fmt(big.shape)} but {small_name} has "
                         f"{fmt(s)}; with {size} ranks {big_name} must be "
                         f"{fmt((size,) + s)}" + (f" or {fmt(concatenated)}"
                                                   if concatenated else ""))


def _root_list(op: str, tensors: object, like: Tensor, g: ProcessGroup, root: int,
               what: str) -> list[Tensor]:
    """The per-rank list of gather/scatter: required on the root, ignored elsewhere."""
    if g.rank != root:
        return []
    if tensors is None:
        raise ArgumentError(f"{op}: {what} is required on rank {root}")
    return _check_list(op, tensors, like, g.size, what)


# -- point to point ---------------------------------------------------------------------

def isend(tensor: Tensor, dst: int, group: None = None, tag: int = 0) -> Work:
    """Start sending `tensor` to rank `dst`; returns a Work to wait on."""
    g = default_group("isend")
    t = _check_tensor("isend", tensor)
    dst = _check_rank("isend", g, dst, "dst")
    host = _host(t)
    meta = _encode_meta(t)

    def steps() -> Steps:
        yield Pending([g.p2p_meta.Isend(meta, dest=dst, tag=tag),
                       g.p2p_data.Isend(_as_bytes(host), dest=dst, tag=tag)], [dst, dst],
                      f"to receive a tensor with tag {tag}")
    return Work("send", g, steps(), ordered=False)


def irecv(tensor: Tensor, src: int | None = None, group: None = None, tag: int = 0) -> Work:
    """Start receiving into `tensor` from rank `src` (None: from any rank).  The sender's
    shape and dtype are checked against `tensor` before the data is received."""
    return _start_recv(tensor, src, tag)[0]


def _start_recv(tensor: Tensor, src: int | None, tag: int) -> tuple[Work, list[int]]:
    """irecv's Work, and a one-element list that receives the sender's rank."""
    g = default_group("irecv")
    t = _check_tensor("irecv", tensor)
    from mpi4py import MPI
    source = MPI.ANY_SOURCE if src is None else _check_rank("irecv", g, src, "src")
    host = np.empty(numel(t.shape), t.dtype.np)
    buf = bytearray(1024)
    sender_box = [-1]

    def steps() -> Steps:
        first = Pending([g.p2p_meta.Irecv(buf, source=source, tag=tag)], [src],
                        f"to send a tensor with tag {tag}")
        yield first
        sender = sender_box[0] = first.statuses[0].Get_source()
        theirs = bytes(buf[:first.statuses[0].Get_count()])
        if theirs != _encode_meta(t):
            raise ShapeError(f"recv: rank {sender} sent a tensor of {theirs.decode()} but the "
                             f"receiving tensor on rank {g.rank} is of "
                             f"{_encode_meta(t).decode()}")
        yield Pending([g.p2p_data.Irecv(_as_bytes(host), source=sender, tag=tag)], [sender],
                      f"to send the data of its tensor with tag {tag}")
        _write(t, host)
    return Work("recv", g, steps(), ordered=False), sender_box


def send(tensor: Tensor, dst: int, group: None = None, tag: int = 0) -> None:
    """Send `tensor` to rank `dst`; returns once it is on its way."""
    isend(tensor, dst, group, tag).wait()


def recv(tensor: Tensor, src: int | None = None, group: None = None, tag: int = 0) -> int:
    """Receive into `tensor` from rank `src` (None: any rank); returns the sender's rank."""
    work, sender = _start_recv(tensor, src, tag)
    work.wait()
    return sender[0]


def _encode_meta(t: Tensor) -> bytes:
    return f"shape {fmt(t.shape)} {t.dtype}".encode()

