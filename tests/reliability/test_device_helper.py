"""support.device_or_fail: a missing OpenCL device fails a test unless the environment
allows it (SHREW_ALLOW_NO_OPENCL=1), so CI cannot pass without OpenCL by skipping."""
from __future__ import annotations

import pytest

import shrew
import support


def test_a_missing_device_fails_unless_allowed(monkeypatch):
    monkeypatch.setattr(shrew, "devices", lambda: ["cpu"])
    monkeypatch.delenv("SHREW_ALLOW_NO_OPENCL", raising=False)
    with pytest.raises(pytest.fail.Exception, match="no opencl device"):
        support.device_or_fail("opencl")
    monkeypatch.setenv("SHREW_ALLOW_NO_OPENCL", "1")
    with pytest.raises(pytest.skip.Exception):
        support.device_or_fail("opencl")


def test_a_present_device_is_named(monkeypatch):
    monkeypatch.setattr(shrew, "devices", lambda: ["cpu", "opencl:0", "opencl:1"])
    assert support.device_or_fail("opencl") == "opencl:0"
    assert support.device_or_fail("cpu") == "cpu"
