"""Each error is a ShrewError of the builtin class PyTorch raises for the same mistake: every
bad-input case (bad_inputs.py) is run again with torch in shrew's place, and the two builtin
classes must agree; sizes that overflow or are not ints are refused before any allocation."""
from __future__ import annotations

import types

import numpy as np
import pytest

import bad_inputs
import shrew
from shrew.core.errors import BUILTIN_CLASS, ShrewError

torch = pytest.importorskip("torch")

# Cases with no like-for-like torch call: shrew-only functions or signatures, and inputs that
# torch accepts (other dtypes, 65 dims, the meta device); each keeps the class of its kind.
NOT_IN_TORCH = {
    "im2col kernel too big", "im2col kernel 0", "scatter_add index", "scatter_add shapes",
    "pad odd", "pad negative", "powf string", "gelu approximate", "conv2d input dims", "uint16",
    "complex", "matmul int", "missing device index", "device not a string",
    "matmul across devices", "gather across devices", "conv2d across devices",
    "reshape 65 dims", "ones past memory"}


class _Missing(Exception):
    """A shrew function torch does not have."""


class _TorchAsShrew(types.ModuleType):
    """Enough of shrew's namespace, answered by torch: creation functions take device=
    (cpu, or meta as the 'other device'); anything else is torch's or torch.nn.functional's."""

    def __getattr__(self, name: str):
        if name == "from_numpy":
            return lambda a, device=None: torch.from_numpy(a)
        if name == "checkpoint":
            from torch.utils.checkpoint import checkpoint
            return lambda fn, *args: checkpoint(fn, *args, use_reentrant=False)
        if name in ("ones", "zeros", "tensor", "full", "arange", "randn"):
            make = getattr(torch, name)

            def create(*args, device=None, **kw):
                if device is not None and device != "cpu" and device != "meta":
                    return torch.ones(2, device=device)  # torch's own device check
                return make(*args, **({"device": device} if device else {}), **kw)
            return create
        for where in (torch, torch.nn.functional):
            if hasattr(where, name):
                return getattr(where, name)
        raise _Missing(name)


def _builtin(cls: type) -> type:
    return next(c for c in cls.__mro__ if c.__module__ == "builtins")


def _torch_classes() -> dict[str, type | None]:
    """{case: the builtin class torch raises for it, or None where it raises nothing}."""
    real, bad_inputs.shrew = bad_inputs.shrew, _TorchAsShrew("shrew")
    try:
        found: dict[str, type | None] = {}
        for name, _, _, call in bad_inputs.cases("cpu", "meta"):
            if name in NOT_IN_TORCH:
                continue
            try:
                call()
            except Exception as exc:  # noqa: BLE001 (whatever torch raises is the answer)
                found[name] = _builtin(type(exc))
            else:
                found[name] = None
        return found
    finally:
        bad_inputs.shrew = real


def test_every_case_raises_the_builtin_class_torch_raises():
    torch_classes = _torch_classes()
    assert len(torch_classes) > 90
    wrong = {}
    for name, expected, _, _ in bad_inputs.cases("cpu", "cpu"):
        ours = BUILTIN_CLASS[expected]  # every case names a kind, never bare ShrewError
        if name in torch_classes and torch_classes[name] is not ours:
            wrong[name] = (ours.__name__, getattr(torch_classes[name], "__name__", None))
    assert not wrong, f"(shrew's class, torch's class) where they differ: {wrong}"


def test_each_kind_inherits_its_builtin_class_and_only_that_one():
    builtins = {RuntimeError, IndexError, TypeError, ValueError, NotImplementedError}
    for kind, builtin in BUILTIN_CLASS.items():
        assert issubclass(kind, ShrewError) and issubclass(kind, builtin)
        others = {b for b in builtins - {builtin} if not issubclass(builtin, b)}
        assert not any(issubclass(kind, b) for b in others), kind
    assert not issubclass(ShrewError, (ValueError, RuntimeError, TypeError, IndexError))
    for name in ("ArgumentError", "StateError", "ShrewValueError", "UnsupportedError"):
        assert getattr(shrew, name) in BUILTIN_CLASS


def test_a_pytorch_except_clause_catches_shrews_errors():
    x = shrew.ones(2, 3, requires_grad=True)
    for call, builtin in [(lambda: x + shrew.ones(4), RuntimeError),
                          (lambda: x.add_(1.0), RuntimeError),
                          (lambda: x.topk(4), RuntimeError),
                          (lambda: shrew.ones(0, 2).max(0), IndexError),
                          (lambda: x.sum(3), IndexError),
                          (lambda: shrew.zeros(2.5), TypeError),
                          (lambda: x[::-1], ValueError)]:
        with pytest.raises(builtin):
            call()


@pytest.mark.parametrize("device", ["cpu", "opencl"])
@pytest.mark.parametrize("make", [
    lambda d, one: shrew.zeros(2 ** 62, 4, device=d), lambda d, one: shrew.ones(2 ** 63, device=d),
    lambda d, one: shrew.empty(2 ** 40, 2 ** 40, device=d),
    lambda d, one: shrew.full((2 ** 47,), 1.0, device=d),
    lambda d, one: shrew.zeros(2.5, device=d), lambda d, one: shrew.zeros(np.float64(3), device=d),
    lambda d, one: shrew.randn(2 ** 31, 2 ** 31, 2 ** 31, device=d),
    lambda d, one: one.reshape(*[1] * 65),
    lambda d, one: shrew.zeros(*[1] * 65, device=d)])
def test_huge_or_non_integer_sizes_are_refused_before_allocating(device, make, monkeypatch):
    if device == "opencl" and "opencl:0" not in shrew.devices():
        pytest.skip("no OpenCL device")
    d = "opencl:0" if device == "opencl" else "cpu"
    one = shrew.ones(1, device=d)  # made before allocations are watched
    backend = shrew.backends.registry.get_backend(d)
    for name in ("zeros", "full", "empty", "randn"):
        if hasattr(backend, name):
            monkeypatch.setattr(backend, name, lambda *a, _n=name, **k: pytest.fail(f"{_n} ran"))
    with pytest.raises(ShrewError) as info:
        make(d, one)
    assert type(info.value) in BUILTIN_CLASS


@pytest.mark.parametrize("device", [d for d in shrew.devices() if d.startswith("opencl")])
def test_a_tensor_past_the_devices_largest_buffer_is_refused_before_allocating(device):
    """Between the device's CL_DEVICE_MAX_MEM_ALLOC_SIZE and the global bound, pyopencl
    itself would raise its raw INVALID_BUFFER_SIZE: the core refuses first, by name."""
    limit = shrew.zeros(1, device=device)._backend.max_alloc_bytes
    with pytest.raises(RuntimeError, match=f"more than {device} allocates at once"):
        shrew.zeros(limit // 4 + 1, device=device)
    assert shrew.zeros(3, device=device).shape == (3,)  # the device still works
