"""DistributedDataParallel: one model replica per rank, gradients averaged during backward.

Gradients are grouped into buckets of about `bucket_cap_mb`, in the reverse order of the
parameters (roughly the order backward produces them).  A post-accumulate-grad hook on
every parameter counts the bucket's gradients; once a bucket is complete its all-reduce is
started without blocking, and the buckets still in flight are moved on from each later
hook, so communication runs while backward computes the earlier layers.  When the last
bucket has been started, the hook waits for them all and writes the averages into each
parameter's .grad and into the GradStore that backward() returns."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ...autograd.engine import GradStore
from ...autograd.hooks import HookHandle, register_post_accumulate_grad_hook
from ...distributed.collectives import ReduceOp, all_reduce_array
from ...distributed.group import ProcessGroup, default_group
from ...distributed.work import Pending, Steps, Work, agree, progress
from ...core.errors import ShrewTypeError, ShrewValueError, UnsupportedError
from ...ops.creation import from_numpy
from ...core.grad_mode import no_grad
from ..._tensor import Tensor
from ..modules.module import Module
from ..parameter import Parameter


class _Bucket:
    """Parameters whose gradients are all-reduced together, as one flat host array."""

    __slots__ = ("index", "params", "flat", "work")

    def __init__(self, index: int, params: list[Parameter]) -> None:
        self.index = index
        self.params = params
        self.flat: np.ndarray | None = None
        self.work: Work | None = None


class DistributedDataParallel(Module):
    """Wrap `module` for data-parallel training: build it identically on every rank, feed
    each rank its share of the batch, and step the optimizer as usual.

    Construction checks that every rank holds the same parameter names, shapes and dtypes,
    and copies rank 0's parameters and buffers to all ranks.  Each forward in training mode
    copies rank 0's buffers again (`broadcast_buffers`, for BatchNorm's statistics).
    Backward averages each parameter's gradient over the ranks (all-reduce, then division
    by the world size), overlapping the communication with the rest of backward.  As in
    PyTorch, it is `.grad` that is averaged (including what `no_sync()` accumulated), so
    call `zero_grad()` every step; the GradStore that backward() returns holds the same
    averaged gradients.  Every parameter that requires grad must receive a gradient in
    every synchronised backward (find_unused_parameters is not supported)."""

    def __init__(self, module: Module, device_ids: list[int] | None = None,
                 output_device: int | None = None, *, broadcast_buffers: bool = True,
                 process_group: None = None, bucket_cap_mb: float = 25,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False) -> None:
        super().__init__()
        # static_graph and gradient_as_bucket_view are PyTorch's optimisation hints (reuse
        # the first iteration's bucket order; alias .grad into the buckets): shrew's
        # reduction order is fixed already and its buckets are host arrays, so both are
        # accepted and change nothing; check_reduction is deprecated in PyTorch too.
        # PyTorch's placement and group options: the module stays where it is and the
        # default group is the only one, so only their defaults make sense here.
        for name, value, default in (("device_ids", device_ids, None),
                                     ("output_device", output_device, None),
                                     ("process_group", process_group, None),
                                     ("find_unused_parameters", find_unused_parameters, False)):
            if value != default:
                raise UnsupportedError(f"DistributedDataParallel: {name}={value!r} is not "
                                       "supported "
                                       f"(leave it at {default!r}: the module runs on the device "
                                       f"its parameters are on, in the default process group, and "
                                       f"every parameter must receive a gradient)")
        if not isinstance(module, Module):
            raise ShrewTypeError(f"DistributedDataParallel: module must be a Module, got "
                                 f"{type(module).__name__}")
        if not bucket_cap_mb > 0:
            raise ShrewValueError(f"DistributedDataParallel: bucket_cap_mb must be > 0, got "
                                  f"{bucket_cap_mb!r}")
        self._group: ProcessGroup = default_group("DistributedDataParallel")
        self.module = module
        self.broadcast_buffers = broadcast_buffers
        self.bucket_cap_mb = bucket_cap_mb
        self.require_backward_grad_sync = True
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        self._names = {p.id: n for n, p in named}
        _run(self._group, "DistributedDataParallel", _broadcast_from_rank0(
            self._group, "DistributedDataParallel",
            [*module.parameters(), *module.buffers()],
            {"parameters": [[n, list(p.shape), str(p.dtype)] for n, p in named]}))
        self._buckets = _make_buckets([p for _, p in named], bucket_cap_mb * 2**20)
        self._bucket_of = {p.id: b for b in self._buckets for p in b.params}
        self._next = 0                 # the next bucket to start, in index order
        self._seen: set[int] = set()   # parameters whose gradient this backward has given
        self._syncing = False          # whether the current backward averages gradients
        self._hooks: list[HookHandle] = [
            register_post_accumulate_grad_hook(p, self._gradient_ready)
            for b in self._buckets for p in b.params]

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        self._check_previous_reduction()
        if self.training and self.broadcast_buffers and self._group.size > 1:
            buffers = [t for _, t in self.module.named_buffers()]
            if buffers:
                _run(self._group, "DistributedDataParallel.forward", _broadcast_from_rank0(
                    self._group, "DistributedDataParallel.forward", buffers, {}))
        self._syncing = self.require_backward_grad_sync
        return self.module(*args, **kwargs)

    @contextmanager
    def no_sync(self) -> Iterator[None]:
        """Backward passes of forwards run inside this block only accumulate into .grad
        locally; the first synchronised backward after it averages the sum."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    def remove_hooks(self) -> None:
        """Unregister the gradient hooks (the module then trains locally only)."""
        for h in self._hooks:
            h.remove()
        self._hooks = []

    # -- the reduction, driven by backward ---------------------------------------------
    def _gradient_ready(self, p: Tensor, grads: GradStore) -> None:
        """The hook: p.grad is final for this backward."""
        if not self._syncing:
            return
        self._seen.add(p.id)
        # Buckets start in index order on every rank (MPI needs one order everywhere).
        while self._next < len(self._buckets) and all(
                q.id in self._seen for q in self._buckets[self._next].params):
            self._start(self._buckets[self._next])
            self._next += 1
        progress()
        if self._next == len(self._buckets):
            self._finish(grads)

    def _start(self, bucket: _Bucket) -> None:
        bucket.flat = np.concatenate([np.ascontiguousarray(_grad(p).numpy()).reshape(-1)
                                      for p in bucket.params])
        name = f"DistributedDataParallel bucket {bucket.index}"
        bucket.work = Work(name, self._group,
                           all_reduce_array(self._group, bucket.flat, ReduceOp.AVG, name),
                           ordered=True)

    def _finish(self, grads: GradStore) -> None:
        """Wait for every bucket and hand out the averaged gradients."""
        for bucket in self._buckets:
            assert bucket.work is not None and bucket.flat is not None
            bucket.work.wait()
            offset = 0
            for p in bucket.params:
                n = p.numel()
                avg = from_numpy(bucket.flat[offset:offset + n].reshape(p.shape), p.device)
                offset += n
                p.grad = avg
                grads.insert(p, avg)
            bucket.flat, bucket.work = None, None
        self._next = 0
        self._seen.clear()
        self._syncing = False

    def _check_previous_reduction(self) -> None:
        """A synchronised backward must give every parameter a gradient; if one did not,
        its buckets were left half done: say which parameters were missed."""
        if not self._seen:
            return
        missed = [n for i, n in self._names.items() if i not in self._seen]
        raise ShrewValueError(
            f"DistributedDataParallel: the previous backward gave no gradient to "
            f"{', '.join(missed)}, so the gradients were not averaged; every parameter that "
            f"requires grad must contribute to the loss (or set requires_grad=False on it "
            f"before wrapping the module)")


def _grad(p: Tensor) -> Tensor:
    assert p.grad is not None  # the hook runs after backward accumulated it
    return p.grad


def _make_buckets(params: list[Parameter], cap_bytes: float) -> list[_Bucket]:
    """Reverse parameter order; a new bucket at the size cap or where the dtype changes
    (a bucket is reduced as one array)."""
    buckets: list[list[Parameter]] = []
    size = 0.0
    for p in reversed(params):
        nbytes = p.numel() * p.dtype.np.itemsize
        if not buckets or size + nbytes > cap_bytes or buckets[-1][0].dtype != p.dtype:
            buckets.append([])
            size = 0.0
        buckets[-1].append(p)
        size += nbytes
    return [_Bucket(i, b) for i, b in enumerate(buckets)]


def _broadcast_from_rank0(group: ProcessGroup, name: str, tensors: list[Tensor],
                          meta: dict[str, Any]) -> Steps:
    """Rank 0's values of `tensors` into every rank's, as one message (after checking that
    every rank describes them the same way)."""
    yield from agree(group, name, {**meta, "tensors": [[list(t.shape), str(t.dtype)]
                                                       for t in tensors]})
    if group.size == 1 or not tensors:
        return
    host = [np.ascontiguousarray(t._host()).reshape(-1).view(np.uint8) for t in tensors]
    flat = np.concatenate(host)
    yield Pending([group.data.Ibcast(flat, root=0)], [None], f"{name}'s broadcast")
    if group.rank != 0:
        offset = 0
        with no_grad():
            for t, h in zip(tensors, host):
                values = flat[offset:offset + h.size].view(t.dtype.np).reshape(t.shape)
                t.copy_(from_numpy(values))
                offset += h.size


def _run(group: ProcessGroup, name: str, steps: Steps) -> None:
    Work(name, group, steps, ordered=True).wait()
