"""Data-parallel training across processes and machines, with torch.distributed's API, on
MPI (mpi4py).  Launch a program with ``mpiexec -n 4 python train.py``, or as torchrun
would, ``python -m shrew.distributed.run --nproc-per-node 4 train.py`` (run.py: it sets
RANK, WORLD_SIZE, LOCAL_RANK and names the rank that ended a failed job); in it::

    import shrew.distributed as dist
    dist.init_process_group(backend="mpi")
    dist.all_reduce(t, op=dist.ReduceOp.SUM)

Every collective first checks that all ranks called it with matching shapes and dtypes
(rank 0 compares short descriptions), then moves the bytes with a non-blocking MPI call
and reduces in a fixed rank order, so results are bitwise reproducible.  A collective that
waits longer than the group's timeout names the ranks that did not arrive; an uncaught
exception on any rank aborts the whole job.  See docs/distributed.md."""
from .collectives import (ReduceOp, all_gather, all_gather_into_tensor, all_reduce, barrier,
                          broadcast, broadcast_object_list, gather, irecv, isend, recv, reduce,
                          reduce_scatter_tensor, scatter, send)
from .group import (DEFAULT_TIMEOUT, DistBackendError, DistError, ProcessGroup,
                    destroy_process_group, get_backend, get_default_backend_for_device,
                    get_rank, get_world_size,
                    init_process_group, is_available, is_gloo_available, is_initialized,
                    is_mpi_available, is_nccl_available, new_group)
from .work import Work
from . import tensor  # noqa: E402  (torch.distributed.tensor: DTensor, refused)

__all__ = [
    "init_process_group", "destroy_process_group", "is_available", "is_mpi_available",
    "is_initialized", "get_rank", "get_world_size", "get_backend", "ReduceOp", "all_reduce",
    "broadcast", "all_gather", "all_gather_into_tensor", "reduce_scatter_tensor", "gather",
    "scatter", "barrier", "send", "recv", "isend", "irecv", "Work", "DistError",
    "DistBackendError", "ProcessGroup", "DEFAULT_TIMEOUT",
    # API coverage (scripts/api_coverage.py)
    "reduce", "broadcast_object_list", "new_group", "is_nccl_available", "is_gloo_available",
    "tensor",
    "get_default_backend_for_device",
]
