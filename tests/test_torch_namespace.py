"""The torch namespace: shrew.device, shrew.cuda, shrew.backends.*, dtype aliases and the
Python protocols of Tensor (iteration, len, bool, int, float, index, contains, hash,
numpy), each compared with PyTorch."""
from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

import shrew
from shrew.backends import registry

DEVICE_STRINGS = ["cpu", "cuda", "cuda:0", "cuda:3", "opencl:1", "opencl"]


@pytest.mark.parametrize("text", DEVICE_STRINGS)
def test_device_from_a_string_matches_torch(text):
    ours = shrew.device(text)
    if text.startswith("opencl"):  # PyTorch has no opencl device: compare with cuda's
        theirs = torch.device(text.replace("opencl", "cuda"))
        assert ours.type == "opencl"
    else:
        theirs = torch.device(text)
        assert ours.type == theirs.type
        assert repr(ours) == repr(theirs)
    assert ours.index == theirs.index
    assert str(ours) == str(theirs).replace("cuda", ours.type)
    assert ours == text and hash(ours) == hash(text)
    assert shrew.device(ours) is ours
    assert pickle.loads(pickle.dumps(ours)) == ours


def test_device_from_type_and_index_matches_torch():
    assert shrew.device("cuda", 1) == str(torch.device("cuda", 1)) == "cuda:1"
    assert shrew.device("opencl", 0) == "opencl:0"
    assert shrew.device("cpu", 0).index == torch.device("cpu", 0).index == 0
    assert {shrew.device("cpu"): 1}["cpu"] == 1


@pytest.mark.parametrize("bad", [("cuda:x",), ("cuda:0", 1), ("cuda", -1), (3,), ("",),
                                 ("cuda", True)])
def test_bad_devices_raise_device_error(bad):
    with pytest.raises(shrew.DeviceError, match="device"):
        shrew.device(*bad)


def test_tensor_device_is_a_device_accepted_everywhere():
    x = shrew.ones(2, device=shrew.device("cpu"))
    assert isinstance(x.device, shrew.device) and x.device.type == "cpu"
    assert x.device == "cpu" and x.device.index is None
    assert shrew.device(x.device) == "cpu"
    assert shrew.zeros(2, device=x.device).to(shrew.device("cpu")).device == "cpu"
    assert shrew.randn(2, device=x.device).device == "cpu"
    model = shrew.nn.Linear(2, 2).to(shrew.device("cpu"))
    assert model.weight.device.type == "cpu"


def test_tensor_device_on_opencl():
    if not shrew.backends.opencl.is_available():
        pytest.skip("no OpenCL device")
    dev = shrew.device("opencl", 0)
    x = shrew.arange(4).to(dev)
    assert x.device == dev and x.device.type == "opencl" and x.device.index == 0
    assert shrew.ones(3, device=dev).device == "opencl:0"
    shrew.backends.opencl.synchronize()
    assert shrew.backends.opencl.get_device_name(0)


def test_device_modules_agree_with_the_registry():
    listed = registry.devices()
    for module, name in [(shrew.cuda, "cuda"), (shrew.backends.opencl, "opencl")]:
        count = sum(d.startswith(name + ":") for d in listed)
        assert module.device_count() == count
        assert module.is_available() == (count > 0)
        assert module.current_device() == 0
    if not shrew.cuda.is_available():
        shrew.cuda.manual_seed(0)  # PyTorch seeds lazily: no error without a device
        shrew.cuda.manual_seed_all(0)
        with pytest.raises(shrew.DeviceError):
            shrew.cuda.synchronize()


def test_opencl_manual_seed_reproduces():
    if not shrew.backends.opencl.is_available():
        pytest.skip("no OpenCL device")
    shrew.backends.opencl.manual_seed(7)
    a = shrew.rand(5, device="opencl:0").numpy()
    shrew.backends.opencl.manual_seed_all(7)
    np.testing.assert_array_equal(a, shrew.rand(5, device="opencl:0").numpy())


def test_cudnn_and_mps_flags_are_accepted():
    shrew.backends.cudnn.deterministic = True
    shrew.backends.cudnn.benchmark = False
    assert shrew.backends.cudnn.is_available() is False
    assert shrew.backends.mps.is_available() is False


@pytest.mark.parametrize("alias,name", [("float", "float32"), ("double", "float64"),
                                        ("half", "float16"), ("long", "int64"),
                                        ("int", "int32"), ("bool", "bool")])
def test_dtype_aliases_match_torch(alias, name):
    assert getattr(shrew, alias) is getattr(shrew, name)
    assert str(getattr(torch, alias)) == f"torch.{name}"


def test_iteration_len_and_zip_match_torch():
    data = np.arange(12, dtype=np.float32).reshape(3, 2, 2)
    ours, theirs = shrew.tensor(data), torch.tensor(data)
    assert len(ours) == len(theirs)
    rows = list(ours)
    assert len(rows) == 3
    for a, b in zip(rows, theirs):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    pairs = list(zip(ours, shrew.arange(3)))
    assert [int(i) for _, i in pairs] == [0, 1, 2]
    with pytest.raises(TypeError):
        len(shrew.tensor(1.0))
    with pytest.raises(TypeError):
        iter(shrew.tensor(1.0)).__next__()


def test_iteration_is_differentiable():
    x = shrew.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    total = sum((row * (i + 1)).sum() for i, row in enumerate(x))
    grads = total.backward()
    np.testing.assert_array_equal(grads[x].numpy(), [[1, 1], [2, 2]])


def test_select_matches_torch_and_raises_index_error():
    data = np.arange(6).reshape(2, 3)
    for dim in (0, 1, -1):
        for index in range(-data.shape[dim], data.shape[dim]):
            np.testing.assert_array_equal(shrew.tensor(data).select(dim, index).numpy(),
                                          torch.tensor(data).select(dim, index).numpy())
    with pytest.raises(IndexError) as info:
        shrew.tensor(data).select(1, 3)
    assert isinstance(info.value, shrew.ShrewError)
    with pytest.raises(IndexError):
        torch.tensor(data).select(1, 3)


def test_scalar_conversions_match_torch():
    for value in (3, -2.5, True):
        ours, theirs = shrew.tensor(value), torch.tensor(value)
        assert bool(ours) == bool(theirs)
        assert int(ours) == int(theirs)
        assert float(ours) == float(theirs)
    assert [10, 11, 12][shrew.tensor(2)] == 12
    assert list(range(shrew.tensor([3]))) == [0, 1, 2]
    for bad in (shrew.tensor(2.0), shrew.tensor([1, 2]), shrew.tensor(True)):
        with pytest.raises(TypeError) as info:
            [1, 2, 3][bad]
        assert isinstance(info.value, shrew.ShrewError)
    with pytest.raises(shrew.ShrewError):
        bool(shrew.tensor([1.0, 2.0]))


def test_contains_matches_torch():
    data = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    for element in (1.0, 4, 5.0, 2.5):
        assert (element in shrew.tensor(data)) == (element in torch.tensor(data))
    assert shrew.tensor([3.0, 4.0]) in shrew.tensor(data)


def test_hash_is_identity_and_array_protocol():
    a, b = shrew.tensor([1.0]), shrew.tensor([1.0])
    assert len({a, b, a}) == 2
    np.testing.assert_array_equal(np.asarray(shrew.tensor([[1, 2]])), [[1, 2]])
    assert np.asarray(shrew.tensor([1, 2]), dtype=np.float64).dtype == np.float64


def test_accelerator_is_cuda_where_a_gpu_is_usable():
    assert shrew.accelerator.is_available() == shrew.cuda.is_available()
    expected = "cuda" if shrew.cuda.is_available() else None
    assert shrew.accelerator.current_accelerator() == expected
    assert shrew.accelerator.device_count() == shrew.cuda.device_count()
    assert shrew.accelerator.current_device_index() == 0
    shrew.accelerator.set_device_index(0)
    with pytest.raises(shrew.DeviceError, match="cuda:1"):
        shrew.accelerator.set_device_index(1)
    shrew.accelerator.synchronize()
    # the idiom of pytorch/examples: the accelerator if there is one, else the CPU
    where = shrew.accelerator.current_accelerator() if shrew.accelerator.is_available() else "cpu"
    assert shrew.zeros(2, device=where).device == where


def test_onnx_imports_and_refuses_to_export():
    import shrew.onnx
    with pytest.raises(shrew.ShrewError, match="ONNX"):
        shrew.onnx.export(None, None, "model.onnx")


def test_is_cuda_is_cpu_and_format_as_torch():
    t, ref = shrew.tensor(2.0 / 3.0), torch.tensor(2.0 / 3.0)
    assert (t.is_cuda, t.is_cpu, t.is_xpu, t.is_mps, t.is_meta) == (
        ref.is_cuda, ref.is_cpu, ref.is_xpu, ref.is_mps, ref.is_meta)
    assert f"{t:.4f}" == f"{ref:.4f}" and f"{t:>10.2e}" == f"{ref:>10.2e}"
    assert f"{t}" == str(t)
    with pytest.raises(TypeError, match="one-element"):
        f"{shrew.ones(2):.3f}"


def test_amp_entry_points_run_disabled_programs_unchanged():
    model = shrew.nn.Linear(3, 1)
    opt = shrew.optim.SGD(model.parameters(), lr=0.1)
    before = model.weight.detach().clone()
    scaler = shrew.cuda.amp.GradScaler(enabled=False)
    with shrew.amp.autocast(device_type="cpu", dtype=shrew.bfloat16, enabled=False):
        loss = model(shrew.ones(2, 3)).sum()
    assert scaler.scale(loss) is loss and loss.dtype == shrew.float32
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    scaler.step(opt)
    scaler.update()
    assert not np.array_equal(model.weight.detach().numpy(), before.numpy())
    if "cuda" not in {d.split(":")[0] for d in shrew.devices()}:
        with pytest.warns(UserWarning, match="cuda is not available"):  # as PyTorch's
            assert not shrew.amp.GradScaler(enabled=True).is_enabled()


def test_rnn_flatten_parameters_and_cuda_matmul_flags_are_accepted():
    lstm = shrew.nn.LSTM(3, 4)
    state = {k: v.numpy().copy() for k, v in lstm.state_dict().items()}
    lstm.flatten_parameters()
    assert all(np.array_equal(v.numpy(), state[k]) for k, v in lstm.state_dict().items())
    shrew.backends.cuda.matmul.allow_tf32 = True
    assert shrew.backends.cuda.matmul.allow_tf32
    shrew.backends.cuda.matmul.allow_tf32 = False
