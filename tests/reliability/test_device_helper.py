"""support.device_or_fail: a missing OpenCL device skips a test, saying why, unless the
environment requires OpenCL (SHREW_REQUIRE_OPENCL=1, as CI does on x86-64 Linux, where pip's
extra guarantees a device), so CI cannot pass without OpenCL by skipping."""
from __future__ import annotations

import pytest

import shrew
import support


def test_a_missing_device_skips_saying_why_unless_required(monkeypatch):
    monkeypatch.setattr(shrew, "devices", lambda: ["cpu"])
    monkeypatch.delenv("SHREW_REQUIRE_OPENCL", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no opencl:7 device: .*opencl:7"):
        support.device_or_fail("opencl:7")
    monkeypatch.setenv("SHREW_REQUIRE_OPENCL", "1")
    with pytest.raises(pytest.fail.Exception, match="no opencl:7 device"):
        support.device_or_fail("opencl:7")


def test_a_present_device_is_named(monkeypatch):
    monkeypatch.setattr(shrew, "devices", lambda: ["cpu", "opencl:0", "opencl:1"])
    assert support.device_or_fail("opencl") == "opencl:0"
    assert support.device_or_fail("opencl:1") == "opencl:1"
    assert support.device_or_fail("cpu") == "cpu"
    assert support.each_device("opencl") == ["opencl:0", "opencl:1"]
    monkeypatch.setattr(shrew, "devices", lambda: ["cpu"])
    assert support.each_device("opencl") == ["opencl"]
