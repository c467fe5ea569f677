"""shrew.save / shrew.load: safetensors files, interchangeable with safetensors' own numpy
reader and writer, and never unpickled."""
from __future__ import annotations

import os
import pickle

import numpy as np
import pytest
import safetensors.numpy

import shrew
from shrew import nn
from shrew.serialization.save_load import load, save

DEVICES = ["cpu"] + (["opencl"] if "opencl" in " ".join(shrew.devices()) else [])


@pytest.mark.parametrize("device", DEVICES)
def test_module_state_round_trips(tmp_path, device):
    src = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.Flatten(), nn.Linear(8, 3))
    src(shrew.randn(4, 1, 4, 4))  # running statistics away from their initial values
    path = tmp_path / "model.safetensors"
    save(src.state_dict(), path)
    loaded = load(path, device=device)
    assert all(t.device.startswith(device) for t in loaded.values())
    dst = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.Flatten(), nn.Linear(8, 3))
    dst.to(device).load_state_dict(loaded)
    for (k, a), b in zip(src.state_dict().items(), dst.state_dict().values()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)


def test_every_dtype_and_shape_round_trips_through_safetensors_numpy(tmp_path):
    arrays = {
        "f16": np.arange(6, dtype=np.float16).reshape(2, 3),
        "f32": np.random.default_rng(0).standard_normal((4, 1, 2)).astype(np.float32),
        "f64": np.array(3.5),
        "i32": np.array([1, -2], dtype=np.int32),
        "i64": np.arange(5),
        "flags": np.array([True, False]),
        "empty": np.zeros((0, 3), dtype=np.float32),
    }
    path = str(tmp_path / "ours.safetensors")
    save({k: shrew.from_numpy(v) for k, v in arrays.items()}, path)
    theirs = safetensors.numpy.load_file(path)  # safetensors' own reader opens our file
    other = str(tmp_path / "theirs.safetensors")
    safetensors.numpy.save_file(arrays, other)  # and we open a file written by it
    for name, expected in arrays.items():
        np.testing.assert_array_equal(theirs[name], expected)
        t = load(other)[name]
        assert t.dtype.np == expected.dtype and t.shape == expected.shape
        np.testing.assert_array_equal(t.numpy(), expected)


class _Marker:
    """Unpickling this would create a file: it must never happen."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


@pytest.mark.parametrize("content", [
    b"",
    b"not a safetensors file at all",
    b"\xff" * 64,
    b"\x10\x00\x00\x00\x00\x00\x00\x00{\"a\": broken json",
])
def test_invalid_files_raise_shrew_error(tmp_path, content):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(content)
    with pytest.raises(shrew.ShrewError, match="load: .* is not a valid safetensors file"):
        load(path)


def _with_header(header: bytes, data: bytes = b"") -> bytes:
    return len(header).to_bytes(8, "little") + header + data


@pytest.mark.parametrize("content", [
    (10 ** 12).to_bytes(8, "little") + b"{}",  # a header longer than the file
    _with_header(b"[1, 2]"),  # not a JSON object
    _with_header(b"\xff\xfe"),  # not UTF-8
    _with_header(b"[" * 100_000 + b"]" * 100_000),  # nested past any parser's depth
    _with_header(b'{"w": {"dtype": "X9", "shape": [1], "data_offsets": [0, 4]}}', b"\0" * 4),
    _with_header(b'{"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}', b"\0" * 4),
    _with_header(b'{"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 4]}}', b"\0" * 4),
    _with_header(b'{"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}', b"\0" * 4),
    _with_header(b'{"w": {"dtype": "F32", "shape": [1000000000000], "data_offsets": [0, 4]}}',
                 b"\0" * 4),  # claims 4 TB
])
def test_malformed_headers_raise_shrew_error(tmp_path, content):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(content)
    with pytest.raises(shrew.ShrewError, match="not a valid safetensors file"):
        load(path)


def test_a_pickle_is_refused_and_never_run(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "model.pt"
    path.write_bytes(pickle.dumps({"weight": _Marker(str(marker))}))
    with pytest.raises(shrew.ShrewError, match="not a valid safetensors file"):
        load(path)
    assert not marker.exists()


def test_truncated_file_and_unsupported_dtypes(tmp_path):
    good = tmp_path / "good.safetensors"
    save({"w": shrew.ones(10, 10)}, good)
    cut = tmp_path / "cut.safetensors"
    cut.write_bytes(good.read_bytes()[:-7])
    with pytest.raises(shrew.ShrewError, match="not a valid safetensors file"):
        load(cut)
    bytes_file = tmp_path / "u8.safetensors"
    safetensors.numpy.save_file({"pixels": np.zeros(4, dtype=np.uint16)}, str(bytes_file))
    with pytest.raises(shrew.DTypeError, match="load: tensor 'pixels'.*uint16"):
        load(bytes_file)


def test_save_rejects_non_tensors_and_missing_files_are_os_errors(tmp_path):
    with pytest.raises(shrew.ShrewError, match=r"save: cannot save a object at \['w'\]"):
        save({"w": object()}, tmp_path / "x.safetensors")
    with pytest.raises(OSError):
        load(os.fspath(tmp_path / "missing.safetensors"))
