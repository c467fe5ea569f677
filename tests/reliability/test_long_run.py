"""Long run: thousands of training steps keep resident memory and the number of live
tensors flat, on every device."""
from __future__ import annotations

import gc
import json
import os
import subprocess
import sys

import pytest

import shrew
from support import device_or_fail
from workload import Run, batches

MiB = 1 << 20


def _resident_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _live_tensors() -> int:
    return sum(issubclass(type(o), shrew.Tensor) for o in gc.get_objects())


def _snapshot() -> tuple:
    gc.collect()
    return _resident_bytes(), _live_tensors()


def _long_run(name: str, steps: int, warmup: int) -> dict:
    device = device_or_fail(name)
    run, data = Run(device), batches(batch_size=8)
    for _ in range(warmup):
        run.step(*next(data))
    rss, tensors = _snapshot()
    for _ in range(steps - warmup):
        loss = run.step(*next(data))
    rss_after, tensors_after = _snapshot()
    return {"tensors": tensors, "tensors_after": tensors_after, "growth": rss_after - rss,
            "loss": float(loss)}


@pytest.mark.parametrize("name, steps, warmup", [("cpu", 2000, 500), ("opencl", 2000, 500)])
def test_memory_stays_flat_over_a_long_run(name, steps, warmup):
    # In a process of its own: resident memory then measures this run's steps, not the
    # allocator's state after the hundreds of tests that ran before it in this process.
    here = os.path.dirname(os.path.abspath(__file__))
    tests = os.path.dirname(here)
    path = os.pathsep.join([here, tests, os.path.dirname(tests),
                            os.environ.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, __file__, name, str(steps), str(warmup)],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": path})
    if proc.returncode == 3:
        pytest.skip(proc.stdout.strip().splitlines()[-1])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["tensors_after"] == result["tensors"], \
        "tensors leak: some are kept alive after each step"
    growth = result["growth"]
    assert growth < 4 * MiB, f"resident memory grew by {growth / MiB:.1f} MiB over " \
                             f"{steps - warmup} steps"
    assert result["loss"] < 1.0  # and it really trained


if __name__ == "__main__":
    try:
        outcome = _long_run(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
    except pytest.skip.Exception as exc:
        print(exc)
        sys.exit(3)
    print(json.dumps(outcome))
