"""Resolves --shrew-device (from shrew.testing.plugin) and generates the table's cases for
each device under test: one, or with ``NAME:all`` every device of NAME this machine lists."""
from __future__ import annotations

import pytest

import shrew
from shrew.backends.registry import get_backend

from .harness import Target

_TARGETS = pytest.StashKey[list]()
_NONE_REASON = pytest.StashKey[str]()
ALL = "all"


def targets(config) -> list[Target]:
    """The devices under test.  A named device that is unusable stops the run (never a
    silent skip); ``NAME:all`` on a machine without a NAME device skips, saying why."""
    if _TARGETS not in config.stash:
        try:
            device = config.getoption("shrew_device")
        except ValueError:
            raise pytest.UsageError("the shrew conformance suite needs its plugin: run pytest "
                                    "with -p shrew.testing.plugin") from None
        name, _, index = device.partition(":")
        if index == ALL:
            names = [d for d in shrew.devices() if d.partition(":")[0] == name]
            config.stash[_TARGETS] = [Target(d) for d in names]
            config.stash[_NONE_REASON] = _why_none(name)
        else:
            config.stash[_TARGETS] = [Target(device)]
    return config.stash[_TARGETS]


def _why_none(name: str) -> str:
    try:
        get_backend(f"{name}:0")
    except shrew.ShrewError as exc:
        return f"--shrew-device {name}:{ALL}: no usable {name} device: {exc}"
    return f"--shrew-device {name}:{ALL}: shrew.devices() lists no {name} device"


def pytest_generate_tests(metafunc):
    """Parametrize with the device, and with the entries an @over test builds for it."""
    if "device" not in metafunc.fixturenames:
        return
    found = targets(metafunc.config)
    names, build = getattr(metafunc.function, "shrew_params", ("", None))
    argnames = ["device"] + [n.strip() for n in names.split(",") if n.strip()]
    rows = []
    for target in found:
        for row in build(target) if build else [pytest.param()]:
            prefix = target.device if len(found) > 1 else None
            ident = "-".join(str(part) for part in (prefix, row.id) if part) or target.device
            rows.append(pytest.param(target.device, *row.values, marks=row.marks, id=ident))
    if not found:
        reason = metafunc.config.stash[_NONE_REASON]
        rows = [pytest.param(*[None] * len(argnames), marks=pytest.mark.skip(reason=reason),
                             id="no-device")]
    metafunc.parametrize(argnames, rows)


@pytest.fixture
def backend(device):
    return get_backend(device)
