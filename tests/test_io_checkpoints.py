"""shrew.save / shrew.load of whole training checkpoints (no pickle), and of PyTorch's
.pt files through the restricted unpickler: tensors and containers only, nothing run."""
from __future__ import annotations

import io
import math
import os
import pickle
import zipfile

import numpy as np
import pytest
import safetensors.numpy

import shrew
from shrew import nn, optim
from shrew.optim import lr_scheduler

torch = pytest.importorskip("torch")


def _model():
    shrew.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))


def _train(model, opt, sched, steps, seed):
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        x = shrew.tensor(rng.standard_normal((8, 3)).astype(np.float32))
        loss = (model(x) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()


def test_a_training_checkpoint_resumes_exactly(tmp_path):
    model = _model()
    opt = optim.AdamW(model.parameters(), lr=0.01, amsgrad=True)
    sched = lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=20)
    _train(model, opt, sched, 5, seed=1)
    path = tmp_path / "ckpt.safetensors"
    shrew.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                "scheduler": sched.state_dict(), "epoch": 5, "note": "after warm-up",
                "best": None, "history": [0.5, 0.25]}, path)

    model2 = _model()
    opt2 = optim.AdamW(model2.parameters(), lr=0.01, amsgrad=True)
    sched2 = lr_scheduler.OneCycleLR(opt2, max_lr=0.05, total_steps=20)
    ckpt = shrew.load(path)
    model2.load_state_dict(ckpt["model"])
    opt2.load_state_dict(ckpt["optimizer"])
    sched2.load_state_dict(ckpt["scheduler"])
    assert (ckpt["epoch"], ckpt["note"], ckpt["best"], ckpt["history"]) == (
        5, "after warm-up", None, [0.5, 0.25])
    _train(model, opt, sched, 5, seed=2)
    _train(model2, opt2, sched2, 5, seed=2)
    for (name, a), b in zip(model.state_dict().items(), model2.state_dict().values()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=name)
    assert sched.get_last_lr() == sched2.get_last_lr()
    # the file is ordinary safetensors: its tensors load with safetensors' own loader
    assert len(safetensors.numpy.load_file(str(path))) > 4


def test_a_plain_state_dict_stays_a_plain_safetensors_file(tmp_path):
    path = tmp_path / "weights.safetensors"
    state = _model().state_dict()
    shrew.save(state, path)
    with open(path, "rb") as f:
        header = f.read(8 + int.from_bytes(f.read(8), "little"))
    assert b"shrew.checkpoint" not in header
    assert set(safetensors.numpy.load_file(str(path))) == set(state)
    loaded = shrew.load(path)
    assert isinstance(loaded, dict) and set(loaded) == set(state)


def test_nested_structures_round_trip_with_their_types(tmp_path):
    shared = shrew.tensor([1.0, 2.0])
    param = nn.Parameter(shrew.ones(2, dtype=shrew.float64))
    frozen = nn.Parameter(shrew.zeros(1), requires_grad=False)
    obj = {"ints": {0: "a", -3: "b"}, "tuple": (1, 2.5, (True, None)), "list": [shared, shared],
           "floats": [math.inf, -math.inf, 1e-300], "nan": math.nan, "array": np.arange(4.0),
           "int64": shrew.arange(3), "mask": shrew.tensor([True, False]),
           "param": param, "frozen": frozen, "grad": shrew.ones(2, requires_grad=True),
           ("tuple", 1): "tuple key", "empty": {}, "empty list": []}
    buffer = io.BytesIO()
    shrew.save(obj, buffer)
    back = shrew.load(io.BytesIO(buffer.getvalue()))
    assert back["ints"] == {0: "a", -3: "b"} and back["tuple"] == (1, 2.5, (True, None))
    assert back["floats"] == [math.inf, -math.inf, 1e-300] and math.isnan(back["nan"])
    assert back["list"][0] is back["list"][1] and back["list"][0].tolist() == [1.0, 2.0]
    assert isinstance(back["array"], np.ndarray) and back["array"].tolist() == [0, 1, 2, 3]
    assert back["int64"].dtype == shrew.int64 and back["mask"].dtype == shrew.bool
    assert isinstance(back["param"], nn.Parameter) and back["param"].requires_grad
    assert back["param"].dtype == shrew.float64
    assert isinstance(back["frozen"], nn.Parameter) and not back["frozen"].requires_grad
    assert back["grad"].requires_grad and back["grad"].is_leaf
    assert back[("tuple", 1)] == "tuple key" and back["empty"] == {} and back["empty list"] == []
    for alone in ({"epoch": 3}, {}, shrew.ones(2), [1, "two"]):  # no tensors, or only one
        buffer = io.BytesIO()
        shrew.save(alone, buffer)
        again = shrew.load(io.BytesIO(buffer.getvalue()))
        assert (again.tolist() if isinstance(again, shrew.Tensor) else again) == (
            alone.tolist() if isinstance(alone, shrew.Tensor) else alone)


def test_save_names_what_it_cannot_store(tmp_path):
    with pytest.raises(shrew.ShrewError, match=r"cannot save a function at \['sched'\]\[0\]"):
        shrew.save({"sched": [lambda e: e]}, tmp_path / "x")
    with pytest.raises(shrew.ShrewError, match="cannot save a object at the top"):
        shrew.save(object(), tmp_path / "x")
    shrew.save({1, 2}, tmp_path / "x")  # a set is stored, as torch.save stores one
    assert shrew.load(tmp_path / "x") == {1, 2}


@pytest.mark.parametrize("device", ["cpu"] + (["opencl"] if any(
    d.startswith("opencl") for d in shrew.devices()) else []))
def test_torch_files_load_with_their_values_dtypes_and_structure(tmp_path, device):
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    obj = {"f32": torch.randn(3, 4), "f64": torch.randn(2, dtype=torch.float64),
           "f16": torch.ones(2, 2, dtype=torch.float16), "i64": torch.arange(5),
           "i32": torch.arange(3, dtype=torch.int32), "bool": torch.tensor([True, False]),
           "scalar": torch.tensor(7.5), "transposed": base.t(), "slice": base[1:3, 2:5],
           "empty": torch.zeros(0, 3), "param": torch.nn.Parameter(torch.ones(2)),
           "nested": [1, (2.5, "x"), {"k": None}], "same": base}
    if device != "cpu":
        del obj["f16"]  # the OpenCL backend has no float16 (a DTypeError that says so)
    path = tmp_path / "t.pt"
    torch.save(obj, path)
    back = shrew.load(path, map_location=device)
    for key, value in obj.items():
        if isinstance(value, torch.Tensor):
            assert back[key].device.startswith(device.split(":")[0]), key
            assert back[key].shape == tuple(value.shape), key
            assert back[key].dtype.name == str(value.dtype).removeprefix("torch."), key
            np.testing.assert_array_equal(back[key].numpy(), value.detach().numpy(), err_msg=key)
    assert isinstance(back["param"], nn.Parameter) and back["param"].requires_grad
    assert back["nested"] == [1, (2.5, "x"), {"k": None}]


def test_a_torch_optimizer_checkpoint_continues_in_shrew(tmp_path):
    rng = np.random.default_rng(0)
    start = rng.standard_normal((3, 2))
    tp = torch.tensor(start, requires_grad=True)
    topt = torch.optim.Adam([tp], lr=0.1)
    for _ in range(3):
        tp.grad = torch.tensor(rng.standard_normal((3, 2)))
        topt.step()
    path = tmp_path / "opt.pth"
    torch.save({"w": tp.detach(), "opt": topt.state_dict()}, path)
    ckpt = shrew.load(path)
    p = nn.Parameter(ckpt["w"])
    opt = optim.Adam([p], lr=0.1)
    opt.load_state_dict(ckpt["opt"])
    for _ in range(3):
        g = rng.standard_normal((3, 2))
        tp.grad, p.grad = torch.tensor(g), shrew.tensor(g)
        topt.step()
        opt.step()
    np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-12)


class _System:
    """Unpickling this runs a shell command: shrew.load must never do it."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _zip_with_pickle(path, payload: bytes, storages=None):
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", payload)
        z.writestr("archive/byteorder", "little")
        for key, data in (storages or {}).items():
            z.writestr(f"archive/data/{key}", data)


def test_a_malicious_pickle_is_refused_and_never_run(tmp_path):
    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.pt"
    _zip_with_pickle(evil, pickle.dumps({"weight": _System(marker)}, protocol=2))
    with pytest.raises(shrew.ShrewError, match=r"refers to (posix|os)\.system, which shrew "
                                                r"refuses to load"):
        shrew.load(evil)
    made_by_torch = tmp_path / "torch_evil.pt"
    torch.save({"w": torch.ones(2), "evil": _System(marker)}, made_by_torch)
    with pytest.raises(shrew.ShrewError, match="refuses to load"):
        shrew.load(made_by_torch)
    bare = tmp_path / "legacy.pt"
    bare.write_bytes(pickle.dumps(_System(marker)))
    with pytest.raises(shrew.ShrewError, match="bare pickle"):
        shrew.load(bare)
    assert not marker.exists()
    with pytest.raises(shrew.ShrewError, match="builtins.eval"):
        _zip_with_pickle(evil, b"\x80\x02cbuiltins\neval\nX\x04\x00\x00\x001+1\x85R.")
        shrew.load(evil)


def _tensor_pickle(size, stride, numel, offset=0, storage=b"FloatStorage"):
    """A hand-made torch tensor pickle, to reach what torch.save itself never writes."""
    ints = lambda values: b"(" + b"".join(b"K" + bytes([v]) for v in values) + b"t"  # noqa: E731
    return (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n("
            b"(X\x07\x00\x00\x00storagectorch\n" + storage + b"\nX\x01\x00\x00\x000"
            b"X\x03\x00\x00\x00cpuK" + bytes([numel]) + b"tQK" + bytes([offset])
            + ints(size) + ints(stride) + b"\x89ccollections\nOrderedDict\n)RtR.")


def test_complex_storages_load(tmp_path):
    path = tmp_path / "t.pt"
    _zip_with_pickle(path, _tensor_pickle((2,), (1,), 2, storage=b"ComplexFloatStorage"),
                     {"0": np.array([1 + 2j, 3j], np.complex64).tobytes()})
    loaded = shrew.load(path)
    assert loaded.dtype is shrew.complex64 and loaded.tolist() == [1 + 2j, 3j]


@pytest.mark.parametrize("payload, storages, error, message", [
    (_tensor_pickle((2, 3), (3, 1), 6), {"0": np.arange(6, dtype=np.float32).tobytes()},
     None, None),
    (_tensor_pickle((2, 3), (4, 1), 6), {"0": bytes(24)}, shrew.ShrewError,
     "reaches element 6 of a storage of 6"),
    (_tensor_pickle((2,), (1,), 2, offset=5), {"0": bytes(8)}, shrew.ShrewError,
     "reaches element 6"),
    (_tensor_pickle((4,), (1,), 4), {"0": bytes(8)}, shrew.ShrewError, "has 8 bytes"),
    (_tensor_pickle((4,), (1,), 4), {}, shrew.ShrewError, "lacks the storage '0'"),
    (b"\x80\x02(X\x01\x00\x00\x00a", {}, shrew.ShrewError, "not a valid PyTorch zip file"),
])
def test_malformed_torch_files_raise_clear_errors(tmp_path, payload, storages, error, message):
    path = tmp_path / "t.pt"
    _zip_with_pickle(path, payload, storages)
    if error is None:
        assert shrew.load(path).tolist() == [[0, 1, 2], [3, 4, 5]]
        return
    with pytest.raises(error, match=message):
        shrew.load(path)


def test_zip_files_that_are_not_torch_files(tmp_path):
    path = tmp_path / "x.pt"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("readme.txt", "hello")
    with pytest.raises(shrew.ShrewError, match="no single <name>/data.pkl"):
        shrew.load(path)
    path.write_bytes(b"PK\x03\x04" + bytes(100))
    with pytest.raises(shrew.ShrewError, match="not a valid PyTorch zip file"):
        shrew.load(path)
    with pytest.raises(shrew.ShrewError, match="map_location must name one device"):
        shrew.load(path, map_location={"cuda:0": "cpu"})


def test_malformed_checkpoint_descriptions_raise(tmp_path):
    path = tmp_path / "c.safetensors"
    for description, message in [("{not json", "malformed"),
                                 ('{"tensor": "t9"}', "names a tensor 't9' the file lacks"),
                                 ('{"weird": 1}', "unknown entry"),
                                 ("[" * 100000 + "]" * 100000, "malformed")]:
        safetensors.numpy.save_file({"t0": np.zeros(1, np.float32)}, str(path),
                                    metadata={"shrew.checkpoint": description})
        with pytest.raises(shrew.ShrewError, match=message):
            shrew.load(path)


def test_torch_files_of_bfloat16_and_uint8_load_exactly(tmp_path):
    import torch
    ref = {"b": torch.tensor([1.5, -2.25, 3e38]).bfloat16(), "u": torch.arange(250, 256).byte()}
    torch.save(ref, tmp_path / "t.pt")
    got = shrew.load(tmp_path / "t.pt")
    assert got["b"].dtype == shrew.bfloat16 and got["u"].dtype == shrew.uint8
    np.testing.assert_array_equal(got["b"].float().numpy(), ref["b"].float().numpy())
    np.testing.assert_array_equal(got["u"].numpy(), ref["u"].numpy())
