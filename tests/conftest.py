"""Shared fixtures for the core test suite."""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

import shrew
from shrew.backends import registry as device_mod
from shrew.backends.cpu import CPUBackend
from shrew.backends.array_module import ArrayModuleBackend

# Derandomized so that CI is reproducible; SHREW_HYPOTHESIS_PROFILE=thorough explores more.
_quiet = [HealthCheck.too_slow, HealthCheck.data_too_large]
settings.register_profile("shrew", deadline=None, max_examples=30, derandomize=True,
                          suppress_health_check=_quiet)
settings.register_profile("thorough", deadline=None, max_examples=400,
                          suppress_health_check=_quiet)
settings.load_profile(os.environ.get("SHREW_HYPOTHESIS_PROFILE", "shrew"))

OTHER = "othercpu"


class OtherCPU(CPUBackend):
    """The numpy backend under a second device name, so cross-device code paths run."""

    def __init__(self, index: int = 0):
        ArrayModuleBackend.__init__(self, f"{OTHER}:{index}")


def _other_factory(index: int = 0):
    return OtherCPU(index)


_other_factory.device_count = lambda: 1


@pytest.fixture
def isolated_registry(monkeypatch):
    """Let a test register or break backends without leaking them into other tests."""
    monkeypatch.setattr(device_mod, "_factories", dict(device_mod._factories))
    monkeypatch.setattr(device_mod, "_instances", dict(device_mod._instances))
    monkeypatch.setattr(device_mod, "_entry_points_loaded", device_mod._entry_points_loaded)
    return device_mod


@pytest.fixture
def other_device(isolated_registry):
    """A second device, "othercpu:0" (numpy under another name), for this test only."""
    shrew.register_backend(OTHER, _other_factory)
    return f"{OTHER}:0"

