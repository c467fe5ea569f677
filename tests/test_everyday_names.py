"""Everyday PyTorch names (issue 30, devices): .cuda() without a GPU, shrew.cuda's memory
functions on CuPy's pool (numpy standing in for CuPy), Module.to's forms, backward hooks,
load_state_dict's named tuple, the comparisons, assert_close and the global switches, each
checked against torch."""
from __future__ import annotations

import contextlib
import subprocess
import sys
import types

import numpy as np
import pytest
import torch

import shrew
from shrew import cuda as scuda
from shrew import nn
from shrew.backends import registry
from tests.support import device_or_fail

HAS_GPU = scuda.is_available()
without_gpu = pytest.mark.skipif(HAS_GPU, reason="this machine has a usable CUDA GPU")


@without_gpu
def test_cuda_without_a_gpu_is_a_device_error_saying_why():
    with pytest.raises(shrew.DeviceError, match="Tensor.cuda: no CUDA device is usable"):
        shrew.ones(2).cuda()
    with pytest.raises(shrew.DeviceError, match="Module.cuda: no CUDA device is usable"):
        shrew.nn.Linear(2, 2).cuda()
    with pytest.raises(shrew.DeviceError, match="get_device_properties"):
        scuda.get_device_properties(0)
    with pytest.raises(shrew.DeviceError):
        scuda.mem_get_info()
    with pytest.raises(shrew.DeviceError):
        scuda.Event(enable_timing=True)
    # as torch without CUDA: counters are 0, empty_cache does nothing, no bfloat16
    for name in ("memory_allocated", "max_memory_allocated", "memory_reserved",
                 "max_memory_reserved"):
        assert getattr(scuda, name)() == getattr(torch.cuda, name)() == 0
    scuda.empty_cache()
    scuda.reset_peak_memory_stats()
    assert scuda.is_bf16_supported() is torch.cuda.is_bf16_supported() is False


class FakePool:
    def __init__(self):
        self.used, self.held = 0, 0

    def malloc(self, size):
        self.used += size
        self.held = max(self.held, self.used)
        return size

    def used_bytes(self):
        return self.used

    def total_bytes(self):
        return self.held

    def free_all_blocks(self):
        self.held = self.used


def fake_cupy(pool):
    allocator = []
    runtime = types.SimpleNamespace(
        getDevice=lambda: 0, memGetInfo=lambda: (3, 8),
        getDeviceProperties=lambda i: {"name": b"Fake GPU", "major": 9, "minor": 0,
                                       "totalGlobalMem": 8, "multiProcessorCount": 132})
    cuda = types.SimpleNamespace(runtime=runtime, Device=lambda i: contextlib.nullcontext(),
                                 set_allocator=allocator.append)
    return types.SimpleNamespace(get_default_memory_pool=lambda: pool, cuda=cuda), allocator


@pytest.fixture
def fake_gpu(monkeypatch):
    """A cuda:0 whose CuPy is a fake with a counting memory pool."""
    pool = FakePool()
    cupy, allocator = fake_cupy(pool)
    backend = types.SimpleNamespace(xp=cupy, device="cuda:0", dtypes={np.dtype("float32")})
    monkeypatch.setitem(registry._instances, ("cuda", 0), backend)
    monkeypatch.setattr(scuda._cuda, "device_count", lambda: 1)
    monkeypatch.setattr(scuda, "_tracker", [])
    return pool, allocator


def test_memory_functions_read_cupys_pool_and_track_the_peak(fake_gpu):
    pool, allocator = fake_gpu
    assert scuda.memory_allocated() == 0
    malloc = allocator[0]  # installed by the first memory function
    malloc(100)
    malloc(50)
    assert scuda.memory_allocated(0) == 150 and scuda.memory_reserved("cuda:0") == 150
    pool.used = 20  # the tensors were freed; the pool keeps the blocks
    assert scuda.max_memory_allocated() == 150 and scuda.memory_reserved() == 150
    scuda.reset_peak_memory_stats()
    assert scuda.max_memory_allocated() == 20
    scuda.empty_cache()
    assert scuda.memory_reserved() == 20
    props = scuda.get_device_properties(0)
    assert (props.name, props.total_memory, props.multi_processor_count) == ("Fake GPU", 8, 132)
    assert scuda.get_device_capability() == (9, 0) and scuda.mem_get_info() == (3, 8)
    assert scuda.is_bf16_supported() is False
    with pytest.raises(shrew.DeviceError, match="no device cuda:3"):
        scuda.set_device(3)
    scuda.set_device("cuda:0")
    assert scuda.current_device() == 0


def run_both(code):
    out = {}
    for lib in ("torch", "shrew"):
        scope = {"T": __import__(lib)}
        exec(code, scope)
        out[lib] = scope["result"]
    return out["torch"], out["shrew"]


def test_module_to_forms_and_type_follow_torch():
    code = """
m = T.nn.Linear(2, 2)
m.register_buffer("count", T.zeros(1, dtype=T.int64))
seen = []
m.to(device="cpu", dtype=T.float64); seen.append(str(m.weight.dtype))
m.to(T.ones(1, dtype=T.float32)); seen.append(str(m.weight.dtype))
m.to("cpu", T.float16, non_blocking=True); seen.append(str(m.weight.dtype))
m.bfloat16(); seen.append(str(m.weight.dtype))
m.type(T.float64); seen.append(str(m.weight.dtype) + str(m.count.dtype))
try:
    m.to(T.int32)
except TypeError:
    seen.append("TypeError")
result = [s.split(".")[-1] for s in seen]
"""
    expected, got = run_both(code)
    assert got == [s.replace("torch", "shrew") for s in expected]


def test_full_backward_hooks_match_torch():
    code = """
lin = T.nn.Linear(3, 2)
with T.no_grad():
    lin.weight.copy_(T.tensor([[1., 2., 3.], [4., 5., 6.]]))
log = []
def pre(m, go):
    log.append(("pre", [g.tolist() for g in go]))
    return (go[0] * 2,)
def post(m, gi, go):
    log.append(("post", [None if g is None else g.tolist() for g in gi],
                [g.tolist() for g in go]))
h1 = lin.register_full_backward_pre_hook(pre)
h2 = lin.register_full_backward_hook(post)
x = T.tensor([[1., -1., 2.]], requires_grad=True)
lin(x).sum().backward()
lin(T.tensor([[1., -1., 2.]])).sum().backward()
h1.remove(); h2.remove()
lin(x).sum().backward()
result = log, x.grad.tolist(), lin.weight.grad.tolist()
"""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected, got = run_both(code)
    assert got == expected


def test_load_state_dict_returns_the_named_tuple():
    m = shrew.nn.Linear(2, 2)
    keys = m.load_state_dict({"weight": shrew.zeros(2, 2)}, strict=False)
    assert keys.missing_keys == ["bias"] and keys.unexpected_keys == []
    assert repr(m.load_state_dict(m.state_dict())) == repr(
        torch.nn.Linear(2, 2).load_state_dict(torch.nn.Linear(2, 2).state_dict()))


@pytest.mark.parametrize("a,b", [([1.0, float("inf"), float("nan"), -float("inf"), 1.0],
                                  [1.0, float("inf"), float("nan"), float("inf"), 1.0 + 1e-6]),
                                 ([1, 2, 3], [1, 3, 3])])
@pytest.mark.parametrize("equal_nan", [False, True])
def test_isclose_allclose_equal_match_torch(a, b, equal_nan):
    sa, sb, ta, tb = shrew.tensor(a), shrew.tensor(b), torch.tensor(a), torch.tensor(b)
    assert shrew.isclose(sa, sb, equal_nan=equal_nan).tolist() == torch.isclose(
        ta, tb, equal_nan=equal_nan).tolist()
    assert sa.allclose(sb, equal_nan=equal_nan) == ta.allclose(tb, equal_nan=equal_nan)
    assert shrew.equal(sa, sa.clone()) == torch.equal(ta, ta.clone())
    assert shrew.equal(sa, sb) == torch.equal(ta, tb)


def test_helpers_match_torch():
    assert shrew.equal(shrew.ones(2), shrew.ones(3)) is torch.equal(torch.ones(2), torch.ones(3))
    with pytest.raises(RuntimeError):
        torch.isclose(torch.tensor([1]), torch.tensor([1.0]))
    with pytest.raises(shrew.DTypeError):
        shrew.isclose(shrew.tensor([1]), shrew.tensor([1.0]))
    assert shrew.is_tensor(shrew.ones(1)) and not shrew.is_tensor([1])
    assert shrew.is_floating_point(shrew.ones(1)) and not shrew.is_complex(shrew.ones(1))
    with pytest.raises(TypeError):
        shrew.is_floating_point([1.0])
    assert shrew.ones(2).type_as(shrew.ones(1, dtype=shrew.float64)).dtype is shrew.float64


def test_assert_close_tolerances_and_messages_as_torch():
    cases = [([1.0, 2.0, 3.0], [1.0, 2.5, 3.0]), ([1, 2], [1, 3])]
    for a, b in cases:
        with pytest.raises(AssertionError) as theirs:
            torch.testing.assert_close(torch.tensor(a), torch.tensor(b))
        with pytest.raises(AssertionError) as ours:
            shrew.testing.assert_close(shrew.tensor(a), shrew.tensor(b))
        assert str(ours.value).split("\n")[:4] == str(theirs.value).split("\n")[:4]
    shrew.testing.assert_close(shrew.tensor([1.0]), shrew.tensor([1.0 + 1e-6]))
    shrew.testing.assert_close({"a": [shrew.ones(1)]}, {"a": (shrew.ones(1),)})
    with pytest.raises(AssertionError, match="'dtype' do not match"):
        shrew.testing.assert_close(shrew.ones(1), shrew.ones(1, dtype=shrew.float64))
    with pytest.raises(ValueError, match="no atol"):
        shrew.testing.assert_close(shrew.ones(1), shrew.ones(1), rtol=1e-3)


def test_switches():
    assert shrew.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
    shrew.backends.cuda.matmul.allow_tf32 = True
    try:
        assert shrew.get_float32_matmul_precision() == "high"
        shrew.set_float32_matmul_precision("medium")
        assert shrew.backends.cuda.matmul.allow_tf32
    finally:
        shrew.set_float32_matmul_precision("highest")
    with pytest.raises(ValueError):
        shrew.set_float32_matmul_precision("fast")
    assert shrew.backends.mps.is_available() is False
    shrew.use_deterministic_algorithms(True, warn_only=True)
    try:
        assert shrew.are_deterministic_algorithms_enabled()
        assert shrew.is_deterministic_algorithms_warn_only_enabled()
    finally:
        shrew.use_deterministic_algorithms(False)
    shrew.manual_seed(7)
    assert shrew.initial_seed() == 7
    fresh = shrew.seed()
    assert shrew.initial_seed() == fresh
    shrew.manual_seed(0)


def test_default_device_places_new_tensors():
    assert shrew.get_default_device() == "cpu"
    with pytest.raises(shrew.DeviceError):
        shrew.set_default_device("nosuch")
    if "opencl:0" not in shrew.devices():
        pytest.skip("no OpenCL device")
    shrew.set_default_device("opencl:0")
    try:
        assert shrew.zeros(2).device == "opencl:0" and shrew.tensor([1]).device == "opencl:0"
        assert shrew.nn.Linear(2, 2).weight.device == "opencl:0"
        assert shrew.zeros(2, device="cpu").device == "cpu"
    finally:
        shrew.set_default_device(None)
    assert shrew.rand(1).device == "cpu"


def test_backends_cuda_matmul_in_a_fresh_process():
    code = "import shrew; shrew.backends.cuda.matmul.allow_tf32 = True; print('ok')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.strip() == "ok", done.stderr


def test_a_device_as_a_context_sets_the_default_inside() -> None:
    """`with torch.device(...)`: gpt-fast builds its caches so; blocks nest, and a device
    that cannot be used raises on entering, leaving the default as it was."""
    opencl = device_or_fail("opencl")
    with shrew.device(opencl) as inside:
        assert inside == opencl
        assert shrew.zeros(2).device == opencl and nn.Linear(2, 2).weight.device == opencl
        with shrew.device("cpu"):
            assert shrew.ones(1).device == "cpu"
        assert shrew.ones(1).device == opencl
    assert shrew.zeros(1).device == "cpu"
    with pytest.raises(shrew.DeviceError), shrew.device("nosuch"):
        pass
    assert shrew.get_default_device() == "cpu"
