"""Bad input on every backend: the core's bad-input cases run on each device in a
subprocess; none may crash it, and each must raise its ShrewError subclass, as on the CPU."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import bad_inputs
import shrew
from support import device_or_fail

SCRIPT = Path(__file__).with_name("bad_inputs.py")


@pytest.mark.parametrize("name", ["cpu", "opencl"])
def test_bad_inputs_raise_shrew_errors_in_a_subprocess(name):
    device = device_or_fail(name)
    done = subprocess.run([sys.executable, str(SCRIPT), device], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, f"the process died ({done.returncode}):\n{done.stderr}"
    results = json.loads(done.stdout)
    assert len(results) == len(bad_inputs.cases("cpu", "cpu")) > 90
    wrong = {name: r["raised"] for name, r in results.items() if not r["ok"]}
    assert not wrong, f"on {device}, these did not raise the expected ShrewError: {wrong}"


def test_a_case_that_does_not_raise_as_expected_is_reported(monkeypatch, isolated_registry):
    monkeypatch.setattr(bad_inputs, "cases", lambda d, other: [
        ("fine", shrew.ShapeError, (), lambda: None),
        ("wrong class", shrew.ShapeError, (), lambda: 1 / 0),
        ("wrong words", shrew.ShapeError, ("nowhere",), lambda: shrew.ones(2).item()),
        ("right", shrew.ShapeError, ("item", "[2]"), lambda: shrew.ones(2).item())])
    results = bad_inputs.run("cpu")
    assert results["fine"] == {"ok": False, "raised": None}
    assert results["wrong class"]["raised"].startswith("ZeroDivisionError")
    assert [name for name, r in results.items() if r["ok"]] == ["right"]
