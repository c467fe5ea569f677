"""Bad inputs raise the CPU's ShrewError on the device too, checked before any kernel runs."""
import pytest

import shrew
from shrew.backends.registry import get_backend

from .cases import CASES
from .harness import check_raises, over
from .spec import ALL


@over("case, index", lambda t: [t.param(c, i) for c in CASES for i in range(len(c.raises))])
def test_raises(device, case, index):
    check_raises(device, case, case.raises[index])


def test_undeclared_dtypes_raise(device, backend):
    for name in ALL:
        if name not in {d.name for d in backend.dtypes}:
            with pytest.raises(shrew.DTypeError):
                shrew.zeros(3, dtype=name, device=device)


def test_integer_tensors_cannot_require_grad(device):
    with pytest.raises(shrew.DTypeError):
        shrew.zeros(3, dtype=shrew.int64, device=device, requires_grad=True)


def test_mixed_devices_raise(device, backend):
    if backend is get_backend("cpu"):
        pytest.skip("the device under test is the CPU itself")
    here, cpu = shrew.ones(2, 3, device=device), shrew.ones(2, 3)
    index = shrew.zeros(2, 3, dtype=shrew.int64)
    for run in (lambda: here + cpu, lambda: here @ cpu.transpose(0, 1),
                lambda: shrew.cat([here, cpu]), lambda: here.gather(0, index),
                lambda: shrew.where(here > 0, here, cpu)):
        with pytest.raises(shrew.DeviceError):
            run()
