"""`python -m shrew.distributed.run`, torchrun's role on mpiexec: each rank gets torchrun's
variables, and a job that ends badly is reported with the rank that ended it, its exit
code or signal and its last stderr lines.  Two ranks on this machine (loopback), short
scripts written here, each run under a hard timeout."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from shrew.distributed.agent import torchrun_env
from shrew.distributed.run import failure_summary, find_mpiexec

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("mpi4py") is None or find_mpiexec() is None,
    reason="needs mpi4py and an mpiexec (pip install 'shrew[distributed]')")

SCRIPT = """
import os, signal, sys
import shrew
import shrew.distributed as dist

dist.init_process_group(init_method="env://", rank=int(os.environ["RANK"]),
                        world_size=int(os.environ["WORLD_SIZE"]))
rank = dist.get_rank()
if rank == 1 and sys.argv[1] != "ok":
    print(f"rank 1 is about to {sys.argv[1]}", file=sys.stderr, flush=True)
    if sys.argv[1] == "exit":
        os._exit(3)
    if sys.argv[1] == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    raise ValueError("a deliberate failure on rank 1")
t = shrew.ones(2) * (rank + 1)
dist.all_reduce(t)
names = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
# one write per line: print writes each argument apart where stdout is unbuffered
# (PYTHONUNBUFFERED), and the two ranks' words would interleave in mpiexec's output
fields = ["ENV", rank, *(os.environ[n] for n in names), t.tolist(), sys.argv[1:]]
sys.stdout.write(" ".join(map(str, fields)) + "\\n")
sys.stdout.flush()
dist.barrier()
dist.destroy_process_group()
"""


def _launch(tmp_path: Path, *args: str, flags: tuple[str, ...] = ("--nproc-per-node", "2")
            ) -> subprocess.CompletedProcess:
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(SCRIPT))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"):
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "shrew.distributed.run", *flags, str(script),
                           *args], capture_output=True, text=True, timeout=60, env=env,
                          cwd=tmp_path)


def test_each_rank_gets_torchruns_environment(tmp_path):
    done = _launch(tmp_path, "ok", "--lr", "0.1",
                   flags=("--nproc_per_node=2", "--nnodes", "1", "--standalone"))
    assert done.returncode == 0, done.stderr
    lines = sorted(line.split(" ", 2) for line in done.stdout.splitlines()
                   if line.startswith("ENV"))
    assert [line[1] for line in lines] == ["0", "1"], done.stdout
    ports = set()
    for _, rank, rest in lines:
        fields = rest.split(" ", 6)
        assert fields[:5] == [rank, "2", rank, "2", "127.0.0.1"], rest
        ports.add(fields[5])
        assert fields[6] == "[3.0, 3.0] ['ok', '--lr', '0.1']", rest
    assert len(ports) == 1 and ports.pop().isdigit()
    assert "shrew.distributed.run" not in done.stderr


@pytest.mark.parametrize("how, code, ending", [
    ("exit", 3, "it exited with exit code 3"),
    ("kill", 128 + 9, "it was killed by signal SIGKILL (Killed)"),
    ("raise", 1, "it called MPI_Abort (exit code 1) after an uncaught ValueError: a "
                 "deliberate failure on rank 1"),
])
def test_the_rank_that_ended_the_job_is_named(tmp_path, how, code, ending):
    done = _launch(tmp_path, how)
    assert done.returncode == code, done.stderr
    report = done.stderr[done.stderr.index("shrew.distributed.run: rank 1 "):]
    first = report.splitlines()[0]
    assert first.startswith("shrew.distributed.run: rank 1 (local rank 1, pid "), report
    assert first.endswith(f"ended the job: {ending}"), report
    assert "ended with it: rank(s) 0" in report, report
    assert "the last lines rank 1 wrote to stderr:" in report, report
    tail = "ValueError: a deliberate failure on rank 1" if how == "raise" else \
        f"rank 1 is about to {how}"
    assert f"    {tail}" in report, report


def test_unsupported_launches_are_refused(tmp_path):
    done = _launch(tmp_path, "ok", flags=("--nnodes", "2", "--nproc-per-node", "2"))
    assert done.returncode == 2 and "only one node" in done.stderr, done.stderr
    done = _launch(tmp_path, "ok", flags=("--nproc-per-node", "0"))
    assert done.returncode == 2 and "expected a number >= 1" in done.stderr, done.stderr


def test_a_torchrun_environment_that_mpi_contradicts_is_refused(tmp_path):
    """A script started by torchrun (RANK=1, WORLD_SIZE=2, no mpiexec) would be an MPI job
    of one, training alone: init_process_group says so instead."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RANK": "1", "WORLD_SIZE": "2"}
    done = subprocess.run([sys.executable, "-c", "import shrew.distributed as d; "
                           "d.init_process_group()"], capture_output=True, text=True,
                          timeout=60, env=env)
    assert done.returncode == 1
    assert "the environment says WORLD_SIZE=2 but MPI says 1" in done.stderr, done.stderr


def test_torchrun_variables_from_each_mpis_own():
    assert torchrun_env({"PMI_RANK": "3", "PMI_SIZE": "4", "MPI_LOCALRANKID": "1",
                         "MPI_LOCALNRANKS": "2"}) == {
        "RANK": "3", "WORLD_SIZE": "4", "GROUP_RANK": "0", "LOCAL_RANK": "1",
        "LOCAL_WORLD_SIZE": "2"}
    assert torchrun_env({"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "3"}) == {
        "RANK": "2", "WORLD_SIZE": "3", "GROUP_RANK": "0", "LOCAL_RANK": "2",
        "LOCAL_WORLD_SIZE": "3"}


def test_the_first_rank_to_fail_is_the_one_named():
    reports = [{"rank": r, "local_rank": r, "pid": 100 + r, "returncode": c, "reason": "",
                "ended_at": t, "stderr_tail": [f"line of {r}"]}
               for r, c, t in ((0, -15, 2.0), (2, 7, 1.0), (1, 0, 0.5))]
    text, code = failure_summary(sorted(reports, key=lambda r: r["ended_at"]), 7, 4)
    assert text.splitlines()[:3] == [
        "shrew.distributed.run: rank 2 (local rank 2, pid 102) ended the job: it exited "
        "with exit code 7",
        "shrew.distributed.run: ended with it: rank(s) 0, 3",
        "shrew.distributed.run: the last lines rank 2 wrote to stderr:"]
    assert code == 7
    assert failure_summary(reports[2:], 0, 1) is None
    text, code = failure_summary([], 9, 2)
    assert "mpiexec exited with exit code 9 and no rank reported a failure" in text
