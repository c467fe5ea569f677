"""`python -m shrew.distributed.run`: torchrun's role, on mpiexec.

    python -m shrew.distributed.run --nproc-per-node 4 train.py --epochs 3

starts 4 ranks on this machine under mpiexec (the one beside this Python, as the mpich
wheel installs it, else the first on PATH), each through shrew.distributed.agent, which
sets torchrun's variables (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK;
MASTER_ADDR and MASTER_PORT come from here).  When the job ends badly it says which rank
ended it (the first to fail), with its exit code or signal and the last lines of its
stderr, and exits with that rank's code (128 + N for signal N), as a shell would."""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def find_mpiexec() -> str | None:
    """The mpiexec beside this Python (pip's mpich wheel puts it there), else on PATH."""
    beside = Path(sys.executable).parent / "mpiexec"
    return str(beside) if beside.exists() else shutil.which("mpiexec")


def _nproc(value: str) -> int:
    if value in ("cpu", "auto"):
        return os.cpu_count() or 1
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, 'cpu' or 'auto', got "
                                         f"{value!r}")
    return int(value)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m shrew.distributed.run", allow_abbrev=False,
                                description="Run a training script on N ranks of one "
                                            "machine under mpiexec, as torchrun does.")
    p.add_argument("--nproc-per-node", "--nproc_per_node", dest="nproc", type=_nproc,
                   default=1, help="ranks to start: a number, or 'cpu'/'auto' (one per "
                                   "CPU core)")
    p.add_argument("--nnodes", default="1", help="only 1 (or 1:1): for several machines "
                                                 "run mpiexec itself")
    p.add_argument("--node-rank", "--node_rank", dest="node_rank", type=int, default=0,
                   help="only 0")
    p.add_argument("--standalone", action="store_true",
                   help="accepted: every job here is standalone")
    p.add_argument("--master-addr", "--master_addr", dest="master_addr",
                   default="127.0.0.1", help="MASTER_ADDR (default 127.0.0.1)")
    p.add_argument("--master-port", "--master_port", dest="master_port", type=int,
                   default=None, help="MASTER_PORT (default: a free port)")
    p.add_argument("-m", "--module", action="store_true",
                   help="the script is a module name, run as python -m does")
    p.add_argument("training_script")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ending(code: int) -> str:
    if code >= 0:
        return f"exited with exit code {code}"
    try:
        sig = signal.Signals(-code)
        return f"was killed by signal {sig.name} ({signal.strsignal(sig)})"
    except ValueError:
        return f"was killed by signal {-code}"


def read_reports(directory: Path) -> list[dict[str, Any]]:
    """The agents' reports, in the order their scripts ended."""
    reports = [json.loads(p.read_text()) for p in directory.glob("rank-*.json")]
    return sorted(reports, key=lambda r: r["ended_at"])


def failure_summary(reports: list[dict[str, Any]], mpiexec_code: int,
                    world: int) -> tuple[str, int] | None:
    """What to print when the job ended badly, and the exit code to end with; None if
    every rank exited 0."""
    failed = [r for r in reports if r["returncode"] != 0]
    if not failed:
        if mpiexec_code == 0 and len(reports) == world:
            return None
        return (f"shrew.distributed.run: mpiexec {_ending(mpiexec_code)} and no rank "
                f"reported a failure ({len(reports)} of {world} ranks reported)\n",
                mpiexec_code if mpiexec_code > 0 else 1)
    first, code = failed[0], failed[0]["returncode"]
    lines = [f"shrew.distributed.run: rank {first['rank']} (local rank {first['local_rank']}, "
             f"pid {first['pid']}) ended the job: it {first.get('reason') or _ending(code)}"]
    others = sorted(set(range(world)) - {first["rank"]}
                    - {r["rank"] for r in reports if r["returncode"] == 0})
    if others:
        lines.append(f"shrew.distributed.run: ended with it: rank(s) "
                     f"{', '.join(map(str, others))}")
    if first["stderr_tail"]:
        lines.append(f"shrew.distributed.run: the last lines rank {first['rank']} wrote to "
                     f"stderr:")
        lines += ["    " + line for line in first["stderr_tail"]]
    return "\n".join(lines) + "\n", code if code > 0 else 128 - code


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.nnodes not in ("1", "1:1") or args.node_rank != 0:
        parser.error("only one node (--nnodes 1, --node-rank 0): across machines, run "
                     "mpiexec with a host file (docs/distributed.md)")
    mpiexec = find_mpiexec()
    if mpiexec is None:
        parser.error(f"no mpiexec beside {sys.executable} or on PATH "
                     f"(pip install 'shrew[distributed]')")
    env = {**os.environ, "MASTER_ADDR": args.master_addr,
           "MASTER_PORT": str(args.master_port or _free_port())}
    if args.nproc > 1:  # as torchrun: N processes of one BLAS thread per core each
        env.setdefault("OMP_NUM_THREADS", "1")
    target = ["-m"] * args.module + [args.training_script, *args.training_script_args]
    with tempfile.TemporaryDirectory(prefix="shrew-run-") as reports:
        done = subprocess.run([mpiexec, "-n", str(args.nproc), sys.executable, "-m",
                               "shrew.distributed.agent", reports, *target], env=env)
        summary = failure_summary(read_reports(Path(reports)), done.returncode, args.nproc)
    if summary is None:
        return 0
    sys.stderr.write(summary[0])
    return summary[1]


if __name__ == "__main__":
    sys.exit(main())
