"""Interop with PyTorch: DLPack both ways, and safetensors files written by either side."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import shrew
from shrew import nn
from shrew.ops.creation import from_dlpack
from support import device_or_fail

torch = pytest.importorskip("torch")
safetensors_torch = pytest.importorskip("safetensors.torch")

PAIRS = [(shrew.float16, torch.float16), (shrew.float32, torch.float32),
         (shrew.float64, torch.float64), (shrew.int32, torch.int32),
         (shrew.int64, torch.int64), (shrew.bool, torch.bool)]


def _torch_sample(dtype):
    return (torch.arange(12).reshape(3, 4) % 3).to(dtype)


# -- DLPack ------------------------------------------------------------------------------------
@pytest.mark.parametrize("ours, theirs", PAIRS)
def test_torch_to_shrew_shares_memory(ours, theirs):
    src = _torch_sample(theirs)
    t = from_dlpack(src)
    assert t.dtype is ours and t.shape == (3, 4) and t.device == "cpu"
    np.testing.assert_array_equal(t.numpy(), src.numpy())
    src[0, 0] = 1
    assert t.numpy()[0, 0] == 1  # no copy was made


@pytest.mark.parametrize("ours, theirs", PAIRS)
def test_shrew_to_torch_shares_memory(ours, theirs):
    t = shrew.tensor(_torch_sample(theirs).numpy())
    for out in (torch.from_dlpack(t), torch.utils.dlpack.from_dlpack(t)):
        assert out.dtype == theirs and tuple(out.shape) == t.shape
        assert out.data_ptr() == np.asarray(t).ctypes.data
        np.testing.assert_array_equal(out.numpy(), t.numpy())


def test_views_cross_with_their_strides():
    src = torch.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1)[1:3]
    t = from_dlpack(src)
    assert t.shape == (2, 2, 3)
    np.testing.assert_array_equal(t.numpy(), src.numpy())
    view = shrew.arange(12, dtype=shrew.float32).reshape(3, 4).transpose(0, 1).narrow(0, 1, 2)
    out = torch.from_dlpack(view)
    assert out.stride() == (1, 4)
    np.testing.assert_array_equal(out.numpy(), view.numpy())


def test_gradients_cross_both_ways():
    shrew.manual_seed(0)
    x = shrew.randn(4, 3, requires_grad=True)
    (x * 2.0).tanh().sum().backward()
    theirs = torch.from_dlpack(x.detach()).clone().requires_grad_()
    torch.tanh(theirs * 2).sum().backward()
    np.testing.assert_allclose(from_dlpack(theirs.grad).numpy(), x.grad.numpy(),
                               rtol=1e-5, atol=1e-6)


def test_torch_tensors_shrew_cannot_hold_raise_shrew_errors():
    with pytest.raises(shrew.ShrewError, match="from_dlpack: cannot import the torch.Tensor"):
        from_dlpack(torch.ones(2, dtype=torch.bfloat16))
    with pytest.raises(shrew.ShrewError, match="from_dlpack.*require gradient"):
        from_dlpack(torch.ones(2, requires_grad=True))
    with pytest.raises(shrew.DTypeError, match="from_dlpack.*uint16"):
        from_dlpack(torch.ones(2, dtype=torch.uint16))
    with pytest.raises(shrew.ShrewError, match="from_dlpack: expected an object with __dlpack__"):
        from_dlpack(torch.utils.dlpack.to_dlpack(torch.ones(2)))  # a bare capsule


# -- safetensors files --------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["cpu", "opencl"])
def test_a_file_written_by_torch_loads_on_every_device(tmp_path, name):
    device = device_or_fail(name)
    path = tmp_path / "torch.safetensors"
    tensors = {"w": torch.randn(3, 4), "b": torch.zeros(3, dtype=torch.float64),
               "steps": torch.tensor(7), "mask": torch.tensor([True, False]),
               "half": torch.ones(2, 2, dtype=torch.float16),
               "i": torch.arange(3, dtype=torch.int32)}
    supported = {d.name for d in shrew.backends.registry.get_backend(device).dtypes}
    tensors = {k: v for k, v in tensors.items() if str(v.dtype).removeprefix("torch.") in supported}
    safetensors_torch.save_file(tensors, str(path))
    loaded = shrew.load(path, device=device)
    assert set(loaded) == set(tensors)
    for key, expected in tensors.items():
        assert loaded[key].device == device and loaded[key].shape == tuple(expected.shape)
        np.testing.assert_array_equal(loaded[key].numpy(), expected.numpy(), err_msg=key)


@pytest.mark.parametrize("name", ["cpu", "opencl"])
def test_torch_loads_a_model_shrew_saved(tmp_path, name):
    device = device_or_fail(name)
    model = nn.Sequential(nn.Linear(4, 8), nn.LayerNorm(8), nn.Linear(8, 2)).to(device)
    path = tmp_path / "model.safetensors"
    shrew.save(model.state_dict(), path)
    theirs = safetensors_torch.load_file(str(path))
    ref = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.LayerNorm(8), torch.nn.Linear(8, 2))
    ref.load_state_dict(theirs)  # strict: same names and shapes as PyTorch's own modules
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    with shrew.no_grad():
        ours = model(shrew.tensor(x, device=device)).numpy()
    theirs = ref(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_bfloat16_from_torch_loads_as_bfloat16(tmp_path):
    path = tmp_path / "bf16.safetensors"
    w = torch.tensor([1.5, -2.25], dtype=torch.bfloat16)
    safetensors_torch.save_file({"w": w}, str(path))
    loaded = shrew.load(path)["w"]
    assert loaded.dtype is shrew.bfloat16
    assert loaded.float().tolist() == w.float().tolist()


class _Marker:
    """Unpickling this creates a file: shrew.load must never do it."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_a_torch_checkpoint_with_code_is_refused_and_never_run(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "model.pt"
    torch.save({"w": torch.ones(2), "evil": _Marker(str(marker))}, path)
    with pytest.raises(shrew.ShrewError, match="refers to (builtins|io).open, which shrew "
                                               "refuses to load"):
        shrew.load(path)
    assert not marker.exists()
    legacy = tmp_path / "legacy.pt"
    legacy.write_bytes(pickle.dumps({"evil": _Marker(str(marker))}, protocol=2))
    with pytest.raises(shrew.ShrewError, match="not a valid safetensors file"):
        shrew.load(legacy)
    assert not marker.exists()
