"""shrew.distributed and DistributedDataParallel across processes: `mpiexec -n 2` and
`-n 3` on loopback (oversubscribed on two cores is fine), each launch running many checks
(tests/mpi_jobs.py), each under a hard timeout so that a hang fails the test."""
from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import shrew

ROOT = Path(__file__).parents[1]
JOBS = Path(__file__).with_name("mpi_jobs.py")


def _mpiexec() -> str | None:
    """The mpiexec beside this Python (pip's mpich installs it there), else on PATH."""
    beside = Path(sys.executable).parent / "mpiexec"
    return str(beside) if beside.exists() else shutil.which("mpiexec")


MPIEXEC = _mpiexec()
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("mpi4py") is None or MPIEXEC is None,
    reason="needs mpi4py and an mpiexec (pip install 'shrew[distributed]')")


def _run(n: int | None, job: str, timeout: float, **env: str) -> subprocess.CompletedProcess:
    """Launch tests/mpi_jobs.py JOB on n ranks (None: a plain process, a job of one)."""
    environ = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1",
               "OPENBLAS_NUM_THREADS": "1", **env}
    cmd = [sys.executable, str(JOBS), job]
    if n is not None:
        cmd = [MPIEXEC, "-n", str(n)] + cmd
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=environ,
                          cwd=ROOT)


@functools.cache
def _main_job(n: int | None) -> subprocess.CompletedProcess:
    # OpenCL collectives once (two ranks): each rank compiles its kernels, which is slow.
    opencl = "1" if n == 2 and "opencl" in " ".join(shrew.devices()) else "0"
    return _run(n, "main", timeout=300, SHREW_TEST_OPENCL=opencl)


@pytest.mark.parametrize("n", [2, 3, None], ids=["2 ranks", "3 ranks", "1 process"])
def test_collectives_ddp_and_resume(n):
    result = _main_job(n)
    assert result.returncode == 0, result.stdout + result.stderr
    for line in ("OK collectives cpu", "OK async and p2p", "OK ddp equals one process",
                 "OK save and resume", "DIGEST ") + (("OK mismatches",) if n else ()):
        assert line in result.stdout, result.stdout + result.stderr
    if n == 2 and "opencl" in " ".join(shrew.devices()):
        assert "OK collectives opencl" in result.stdout and "OK ddp opencl" in result.stdout


@pytest.mark.parametrize("n", [2, None], ids=["2 ranks", "1 process"])
def test_reduce_objects_groups_and_sync_batchnorm(n):
    result = _run(n, "surface", timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "OK surface" in result.stdout, result.stdout + result.stderr


def test_ddp_reruns_are_bitwise_identical():
    first = _main_job(3)
    again = _run(3, "digest", timeout=120)
    assert again.returncode == 0, again.stderr
    digest = [line for line in first.stdout.splitlines() if line.startswith("DIGEST")]
    assert digest and digest == [line for line in again.stdout.splitlines()
                                 if line.startswith("DIGEST")]


def test_a_rank_that_raises_ends_the_job():
    result = _run(3, "fault_raise", timeout=120)
    assert result.returncode != 0
    assert ("shrew.distributed: rank 1 of 3 failed with ValueError: a deliberate failure on "
            "rank 1") in result.stderr


def test_a_rank_that_exits_silently_is_named_after_the_timeout():
    result = _run(3, "fault_exit", timeout=120, SHREW_TEST_TIMEOUT="3")
    assert result.returncode != 0
    assert ("all_reduce: rank 0 of 3 timed out after 3 s waiting for rank 2 (not yet in "
            "all_reduce, collective #0") in result.stderr


def test_train_ddp_example_on_two_ranks():
    """examples/train_ddp.py under mpiexec: it learns, and only rank 0 reports."""
    environ = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1",
               "OPENBLAS_NUM_THREADS": "1"}
    result = subprocess.run([MPIEXEC, "-n", "2", sys.executable, "train_ddp.py", "--epochs",
                             "2"], capture_output=True, text=True, timeout=300, env=environ,
                            cwd=ROOT / "examples")
    assert result.returncode == 0, result.stderr
    reports = [line for line in result.stdout.splitlines() if line.startswith("test accuracy")]
    assert len(reports) == 1 and "2 processes" in reports[0]
    assert float(reports[0].split()[2].rstrip("%")) > 80
    assert "train (2 processes)" in result.stderr        # the progress bar, once
    assert result.stderr.count("train (2 processes):   0%") == 1
