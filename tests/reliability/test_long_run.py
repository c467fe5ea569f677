"""Long run: thousands of training steps keep resident memory and the number of live
tensors flat, on every device."""
from __future__ import annotations

import gc
import os

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


@pytest.mark.parametrize("name, steps, warmup", [("cpu", 2000, 500), ("opencl", 2000, 500)])
def test_memory_stays_flat_over_a_long_run(name, steps, warmup):
    device = device_or_fail(name)
    run, data = Run(device), batches(batch_size=8)
    for _ in range(warmup):
        run.step(*next(data))
    rss, tensors = _snapshot()
    for _ in range(steps - warmup):
        loss = run.step(*next(data))
    rss_after, tensors_after = _snapshot()
    assert tensors_after == tensors, "tensors leak: some are kept alive after each step"
    growth = rss_after - rss
    assert growth < 4 * MiB, f"resident memory grew by {growth / MiB:.1f} MiB over " \
                             f"{steps - warmup} steps"
    assert loss < 1.0  # and it really trained
