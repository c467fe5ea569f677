"""Resolves --shrew-device (from shrew.testing.plugin) and generates the table's cases."""
from __future__ import annotations

import pytest

from .harness import Target

_TARGET = pytest.StashKey[Target]()


def target(config) -> Target:
    """The device under test; an unusable one stops the run (never a silent skip)."""
    if _TARGET not in config.stash:
        try:
            device = config.getoption("shrew_device")
        except ValueError:
            raise pytest.UsageError("the shrew conformance suite needs its plugin: run pytest "
                                    "with -p shrew.testing.plugin") from None
        config.stash[_TARGET] = Target(device)
    return config.stash[_TARGET]


def pytest_generate_tests(metafunc):
    params = getattr(metafunc.function, "shrew_params", None)
    if params is not None:
        names, build = params
        metafunc.parametrize(names, build(target(metafunc.config)))


@pytest.fixture(scope="session")
def device(pytestconfig) -> str:
    return target(pytestconfig).device


@pytest.fixture(scope="session")
def backend(pytestconfig):
    return target(pytestconfig).backend
