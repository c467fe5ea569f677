"""Determinism: the same seed gives bit-identical loss curves and parameters across two
processes (with different hash seeds), on every device."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import workload
from support import device_or_fail

WORKLOAD = Path(__file__).with_name("workload.py")


def _train_in_a_process(device: str, steps: int, seed: int, hash_seed: str) -> dict:
    env = dict(os.environ, PYTHONHASHSEED=hash_seed)
    done = subprocess.run([sys.executable, str(WORKLOAD), device, str(steps), str(seed)],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("name, steps", [("cpu", 100), ("opencl", 60)])
def test_same_seed_same_bits_across_processes(name, steps):
    device = device_or_fail(name)
    first = _train_in_a_process(device, steps, seed=3, hash_seed="1")
    second = _train_in_a_process(device, steps, seed=3, hash_seed="2")
    assert len(first["losses"]) == steps
    losses = [float.fromhex(v) for v in first["losses"]]
    assert sum(losses[-10:]) < sum(losses[:10])  # it trained
    assert first == second


def test_another_seed_gives_another_run():
    a, b = workload.main("cpu", 5, seed=3), workload.main("cpu", 5, seed=4)
    assert a["losses"] != b["losses"] and a["digest"] != b["digest"]
