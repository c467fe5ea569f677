"""What `python -m shrew.distributed.run` has mpiexec start on every rank (torchrun's
"agent"): torchrun's environment variables made from MPI's, the training script run as a
child process, its stderr passed through and its last lines kept, and a report of how it
ended (exit code or signal) for the launcher, which names the rank that ended the job.

    python -m shrew.distributed.agent REPORT_DIR [-m] SCRIPT_OR_MODULE [ARGS...]

The script is a child, not this process, because a process cannot report its own
SIGKILL or os._exit.  It inherits every file descriptor (MPICH's PMI_FD among them), so
MPI_Init in it joins the job as if mpiexec had started it."""
from __future__ import annotations

import collections
import ctypes
import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..core.errors import ShrewValueError
from .reports import REPORTS_ENV, TAIL_LINES, write_report

_TAIL_BYTES = 16 << 10

# torchrun's variable <- the first of these that MPI's launcher set (MPICH's Hydra and
# Slurm's PMI; Open MPI; PMIx).
_FROM_MPI = {
    "RANK": ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"),
    "WORLD_SIZE": ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE"),
    "LOCAL_RANK": ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK"),
    "LOCAL_WORLD_SIZE": ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE"),
}


def torchrun_env(environ: Mapping[str, str]) -> dict[str, str]:
    """RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE and GROUP_RANK from MPI's own
    variables (one node: the local ones default to the global ones)."""
    found = {name: next((environ[v] for v in sources if v in environ), None)
             for name, sources in _FROM_MPI.items()}
    if found["RANK"] is None or found["WORLD_SIZE"] is None:
        raise ShrewValueError("shrew.distributed.agent: no rank in the environment (none of "
                              f"{', '.join(_FROM_MPI['RANK'])}): it runs under mpiexec, started "
                              "by python -m shrew.distributed.run")
    rank, world = found["RANK"], found["WORLD_SIZE"]
    return {"RANK": rank, "WORLD_SIZE": world, "GROUP_RANK": "0",
            "LOCAL_RANK": found["LOCAL_RANK"] or rank,
            "LOCAL_WORLD_SIZE": found["LOCAL_WORLD_SIZE"] or world}


def _die_with_this_process() -> None:
    """In the child before exec (Linux): SIGKILL it if this agent dies, so that mpiexec
    ending the agents ends the scripts too."""
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the script outlives a killed agent
        pass


def run_child(command: Sequence[str], env: Mapping[str, str]) -> tuple[int, int, list[str]]:
    """Run the script, copying its stderr to ours as it comes: (its pid, its return code
    (-N: killed by signal N), the last lines it wrote to stderr)."""
    child = subprocess.Popen(list(command), env=dict(env), stderr=subprocess.PIPE,
                             close_fds=False, preexec_fn=_die_with_this_process)
    for sig in (signal.SIGINT, signal.SIGTERM):  # mpiexec's or the user's: pass them on
        signal.signal(sig, lambda number, _frame: child.send_signal(number))
    assert child.stderr is not None
    tail: collections.deque[bytes] = collections.deque()
    kept = 0
    while chunk := os.read(child.stderr.fileno(), 1 << 16):
        sys.stderr.buffer.write(chunk)
        sys.stderr.buffer.flush()
        tail.append(chunk)
        kept += len(chunk)
        while kept - len(tail[0]) >= _TAIL_BYTES:
            kept -= len(tail.popleft())
    code = child.wait()
    lines = b"".join(tail).decode(errors="replace").splitlines()[-TAIL_LINES:]
    return child.pid, code, lines


def main(argv: Sequence[str]) -> None:
    if len(argv) < 2:
        sys.exit("usage: python -m shrew.distributed.agent REPORT_DIR [-m] SCRIPT [ARGS...]")
    directory, target = Path(argv[0]), list(argv[1:])
    env = {**os.environ, **torchrun_env(os.environ), REPORTS_ENV: str(directory)}
    pid, code, lines = run_child([sys.executable, *target], env)
    write_report(directory, env, pid, code, lines)
    if code < 0:  # end as the script did, so that mpiexec sees the same signal
        if -code not in (signal.SIGKILL, signal.SIGSTOP):  # those have no handler to reset
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main(sys.argv[1:])
