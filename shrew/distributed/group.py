"""The default process group: MPI's world, the job's timeout, and abort-on-error.

mpi4py is imported only by init_process_group: importing it starts MPI, which a program
that never trains across processes should not pay for."""
from __future__ import annotations

import datetime
import importlib.util
import os
import sys
import time
import traceback
from types import TracebackType
from typing import Any

from ..core.errors import ArgumentError, ShrewTypeError, ShrewValueError, UnsupportedError
from .reports import report_abort

DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)
"""How long a collective waits for the other ranks before it names the missing ones and
fails (PyTorch's default for its CPU backends)."""
ABORT_DRAIN_SECONDS = 1.0
"""How long a failing rank waits, its traceback written, before it aborts the job."""


class DistError(RuntimeError):
    """A distributed operation failed: a rank did not arrive within the timeout."""


class DistBackendError(DistError):
    """The failure came from the communication itself (as torch.distributed's)."""


class ProcessGroup:
    """MPI's world communicator, duplicated once per kind of traffic so that collectives,
    their metadata checks and point-to-point messages never match one another's
    messages."""

    __slots__ = ("world", "data", "ctrl", "p2p_meta", "p2p_data", "rank", "size", "timeout",
                 "seq")

    def __init__(self, world: Any, timeout: float) -> None:
        self.world = world
        self.data = world.Dup()       # the collectives' payloads
        self.ctrl = world.Dup()       # their metadata checks (rank 0 <-> every rank)
        self.p2p_meta = world.Dup()   # send/recv: shape and dtype first ...
        self.p2p_data = world.Dup()   # ... then the payload
        self.rank: int = world.Get_rank()
        self.size: int = world.Get_size()
        self.timeout = timeout
        self.seq = 0                  # collectives started so far (the same on every rank)

    def free(self) -> None:
        for comm in (self.data, self.ctrl, self.p2p_meta, self.p2p_data):
            comm.Free()


_group: ProcessGroup | None = None
_previous_excepthook: Any = None


def is_available() -> bool:
    """Whether shrew.distributed can run here: mpi4py (and so an MPI library) is installed."""
    return importlib.util.find_spec("mpi4py") is not None


def is_mpi_available() -> bool:
    """Whether the MPI backend is available (the only backend shrew has)."""
    return is_available()


def is_initialized() -> bool:
    """Whether init_process_group has been called (and destroy_process_group has not)."""
    return _group is not None


def init_process_group(backend: str | None = "mpi", init_method: str | None = None,
                       timeout: datetime.timedelta | float | None = None,
                       world_size: int = -1, rank: int = -1) -> None:
    """Join the job that `mpiexec` (or `python -m shrew.distributed.run`) started: rank
    and world size come from MPI, and RANK / WORLD_SIZE in the environment, if set (as
    the launcher sets them), must agree.

    `timeout` (a timedelta or seconds; default 30 minutes) bounds how long any collective
    waits for the other ranks.  From here on an uncaught exception on any rank prints its
    traceback and a line naming the rank, then aborts the whole job (MPI_Abort), so no rank
    is left waiting in a collective.  `world_size` and `rank`, if given, must match MPI's,
    and `init_method` may only be None or "env://": MPI knows the job, so there is nothing
    to rendezvous through.  Run without mpiexec, the program is a job of one process."""
    global _group, _previous_excepthook
    if backend not in (None, "mpi"):
        raise ArgumentError(f"init_process_group: backend {backend!r} is not available; shrew "
                            f"runs on MPI (backend='mpi')")
    if init_method not in (None, "env://"):
        raise UnsupportedError(f"init_process_group: init_method {init_method!r} is not supported; "
                               f"mpiexec starts the processes and MPI tells each its rank")
    if _group is not None:
        raise ArgumentError("init_process_group: the default process group is already "
                            "initialized (call destroy_process_group first)")
    seconds = _seconds(timeout)
    if not is_available():
        raise ArgumentError("init_process_group: mpi4py is not installed "
                            "(pip install 'shrew[distributed]')")
    from mpi4py import MPI
    group = ProcessGroup(MPI.COMM_WORLD, seconds)
    for name, given, actual in (("world_size", world_size, group.size),
                                ("rank", rank, group.rank)):
        if given != -1 and given != actual:
            group.free()
            raise ArgumentError(f"init_process_group: {name}={given} but MPI says {actual} "
                                f"(mpiexec decides the ranks)")
    # torchrun's variables, as python -m shrew.distributed.run sets them from MPI's. If
    # they disagree, another launcher (torchrun) started independent jobs of one process.
    for var, actual in (("WORLD_SIZE", group.size), ("RANK", group.rank)):
        value = os.environ.get(var)
        if value is not None and value.strip() != str(actual):
            group.free()
            raise ArgumentError(f"init_process_group: the environment says {var}={value} but "
                                f"MPI says {actual}: start the job with python -m "
                                f"shrew.distributed.run or mpiexec (torchrun's processes are "
                                f"not one MPI job)")
    _group = group
    _previous_excepthook = sys.excepthook
    sys.excepthook = _abort_job


def destroy_process_group() -> None:
    """Leave the process group; uncaught exceptions no longer abort the job."""
    global _group
    group = default_group("destroy_process_group")
    from .work import drain  # work.py imports this module: a cycle at import time
    drain()
    group.free()
    _group = None
    sys.excepthook = _previous_excepthook


def is_nccl_available() -> bool:
    """False: shrew communicates through MPI only (no NCCL backend)."""
    return False


def is_gloo_available() -> bool:
    """False: shrew communicates through MPI only (no Gloo backend)."""
    return False


def get_default_backend_for_device(device: Any) -> str:
    """The backend a process group for `device` uses: 'mpi' for every device type (torch
    answers 'gloo' for cpu and 'nccl' for cuda, which shrew does not have), so a program's
    `init_process_group(backend=get_default_backend_for_device(device))` runs."""
    from ..backends.registry import backend_names, parse
    if not isinstance(device, str):
        raise ShrewTypeError(f"get_default_backend_for_device: expected a device or a string "
                             f"such as 'cpu', got {device!r:.60}")
    kind, _ = parse(device)
    if kind not in backend_names():
        raise ShrewValueError(f"get_default_backend_for_device: no backend for device "
                              f"{device!r}; device types are {backend_names()}")
    return "mpi"


def get_rank(group: ProcessGroup | None = None) -> int:
    """This process's rank, 0 .. world size - 1."""
    return check_group("get_rank", group).rank


def get_world_size(group: ProcessGroup | None = None) -> int:
    """The number of processes in the job."""
    return check_group("get_world_size", group).size


def check_group(op: str, group: object) -> ProcessGroup:
    """The process group a group= argument names: None (or the group new_group returned)
    is the default group, the only one shrew has."""
    g = default_group(op)
    if group is not None and group is not g:
        raise UnsupportedError(f"{op}: group must be None or the default group (shrew has "
                               f"no subgroups), got {type(group).__name__}")
    return g


def new_group(ranks: list[int] | None = None, timeout: datetime.timedelta | float | None = None,
              backend: str | None = None, pg_options: Any = None,
              use_local_synchronization: bool = False, group_desc: str | None = None,
              device_id: Any = None) -> ProcessGroup:
    """A group of every rank: the default group itself.  A group of some ranks only is
    refused (UnsupportedError): shrew's collectives run over the whole job."""
    g = default_group("new_group")
    if backend not in (None, "mpi"):
        raise ArgumentError(f"new_group: backend {backend!r} is not available; shrew runs on "
                            f"MPI (backend='mpi')")
    if ranks is not None and sorted(int(r) for r in ranks) != list(range(g.size)):
        raise UnsupportedError(f"new_group: a group of ranks {sorted(ranks)} out of {g.size} is "
                               f"not supported; shrew's collectives span all ranks (use the "
                               f"default group, group=None)")
    return g


def get_backend() -> str:
    """The communication backend: always 'mpi'."""
    default_group("get_backend")
    return "mpi"


def default_group(op: str) -> ProcessGroup:
    """The initialized group, or an error that says to call init_process_group."""
    if _group is None:
        raise ArgumentError(f"{op}: the default process group has not been initialized; call "
                            f"shrew.distributed.init_process_group() first")
    return _group


def _seconds(timeout: datetime.timedelta | float | None) -> float:
    if timeout is None:
        return DEFAULT_TIMEOUT.total_seconds()
    seconds = (timeout.total_seconds() if isinstance(timeout, datetime.timedelta)
               else timeout if isinstance(timeout, (int, float)) and not isinstance(timeout, bool)
               else None)
    if seconds is None or not seconds > 0:
        raise ArgumentError(f"init_process_group: timeout must be a positive timedelta or number "
                            f"of seconds, got {timeout!r}")
    return float(seconds)


def _abort_job(exc_type: type[BaseException], exc: BaseException,
               tb: TracebackType | None) -> None:
    """sys.excepthook while a group is active: report, then take every rank down."""
    group = _group
    (_previous_excepthook or sys.__excepthook__)(exc_type, exc, tb)
    if group is None or group.size == 1:
        return
    sys.stderr.write(f"shrew.distributed: rank {group.rank} of {group.size} failed with "
                     f"{exc_type.__name__}: {exc}\nshrew.distributed: aborting the job\n")
    sys.stderr.flush()
    report_abort(1, f"called MPI_Abort (exit code 1) after an uncaught "
                    f"{exc_type.__name__}: {exc}",
                 "".join(traceback.format_exception(exc_type, exc, tb)).splitlines())
    # mpiexec forwards a rank's stderr and its abort on separate channels: on a busy machine
    # the abort can arrive first and the job dies with the traceback still unforwarded
    # (seen in CI: an empty stderr). A moment's pause lets the forwarder drain the pipe.
    time.sleep(ABORT_DRAIN_SECONDS)
    group.world.Abort(1)
