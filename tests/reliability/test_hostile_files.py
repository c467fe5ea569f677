"""Hostile and unlucky files: shrew.load of crafted PyTorch zips, pickles and safetensors
files runs no code, changes nothing, imports nothing, stays within a small multiple of
the file's memory, and fails only with a ShrewError naming the file; every file shrew.save
writes loads back equal (a hypothesis property over key lengths, header sizes, dtypes,
shapes and nested checkpoints).  The malicious files are built here, opcode by opcode."""
from __future__ import annotations

import io
import json
import os
import struct
import subprocess
import sys
import textwrap
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
import safetensors.numpy
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import shrew
from shrew.serialization import unpickler

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# --- pickles by hand: protocol 2 opcodes -------------------------------------------------

def _str(s: str) -> bytes:
    raw = s.encode()
    return b"X" + struct.pack("<I", len(raw)) + raw


def _int(n: int) -> bytes:
    if -2**31 <= n < 2**31:
        return b"J" + struct.pack("<i", n)
    raw = n.to_bytes((n.bit_length() + 8) // 8, "little", signed=True)
    return b"\x8a" + bytes([len(raw)]) + raw  # LONG1


def _global(module: str, name: str) -> bytes:
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def _tuple(*items: bytes) -> bytes:
    return b"(" + b"".join(items) + b"t"


def _tensor(size, stride, numel, offset=0, key="0", storage="FloatStorage") -> bytes:
    """torch._utils._rebuild_tensor_v2(<storage key>, offset, size, stride, False, {})."""
    pid = _tuple(_str("storage"), _global("torch", storage), _str(key), _str("cpu"),
                 _int(numel)) + b"Q"
    return (_global("torch._utils", "_rebuild_tensor_v2")
            + _tuple(pid, _int(offset), _tuple(*map(_int, size)), _tuple(*map(_int, stride)),
                     b"\x89", _global("collections", "OrderedDict") + b")R") + b"R")


def _pickle(body: bytes) -> bytes:
    return b"\x80\x02" + body + b"."


def _zip(payload: bytes, storages=None, compress=zipfile.ZIP_STORED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=compress) as z:
        z.writestr("archive/data.pkl", payload)
        z.writestr("archive/byteorder", "little")
        for key, data in (storages or {}).items():
            z.writestr(f"archive/data/{key}", data)
    return out.getvalue()


def _float_file() -> bytes:
    """A legitimate torch file: {'w': [0., 1., 2.]} as float32."""
    out = io.BytesIO()
    torch.save({"w": torch.arange(3.0)}, out)
    return out.getvalue()


def _load(data: bytes, **kwargs):
    return shrew.load(io.BytesIO(data), **kwargs)


# --- case 1: BUILD may not touch what the file names -------------------------------------

@pytest.mark.parametrize("body", [
    # torch.FloatStorage.dtype = 'int32'
    _global("torch", "FloatStorage") + b"}" + _str("dtype") + _str("int32") + b"sb",
    # the same through the slot-state half of BUILD's (dict, slots) pair
    _global("torch", "FloatStorage") + b"N}" + _str("dtype") + _str("int32") + b"s\x86b",
    # _rebuild_tensor_v2.__defaults__ = (1, 2): every later load would fail
    _global("torch._utils", "_rebuild_tensor_v2") + b"N}" + _str("__defaults__")
    + _tuple(_int(1), _int(2)) + b"s\x86b",
    # OrderedDict (the class itself).x = 1
    _global("collections", "OrderedDict") + b"}" + _str("x") + _int(1) + b"sb",
    # an OrderedDict instance may take attributes (torch's _metadata), but not slot state
    _global("collections", "OrderedDict") + b")RN}" + _str("x") + _int(1) + b"s\x86b",
])
def test_build_never_changes_a_class_function_or_later_loads(body):
    defaults = unpickler._rebuild_tensor.__defaults__
    with pytest.raises(shrew.ShrewError, match="the file object|the file object.*sets attr"):
        _load(_zip(_pickle(body)))
    assert unpickler._rebuild_tensor.__defaults__ == defaults
    assert not hasattr(OrderedDict, "x")
    w = _load(_float_file())["w"]
    assert w.dtype == shrew.float32 and w.tolist() == [0.0, 1.0, 2.0]


def test_an_ordered_dicts_metadata_is_still_accepted():
    body = (b"\x80\x02" + _global("collections", "OrderedDict") + b")R}" + _str("_metadata")
            + b"}sb" + b".")
    assert _load(_zip(body)) == OrderedDict()


def _run(script: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], env=env,
                          capture_output=True, text=True, timeout=120)


def test_a_name_in_a_file_is_never_imported():
    checkpoint = json.dumps({"object": "shrew.backends.opencl:OpenCLBackend", "id": "m0",
                             "state": {"dict": []}})
    st_file = safetensors.numpy.save({"t0": np.zeros(1, np.float32)},
                                     metadata={"shrew.checkpoint": checkpoint})
    pt_file = _zip(_pickle(_global("shrew.backends.opencl", "OpenCLBackend")))
    result = _run(f"""
        import io, sys, shrew
        assert "pyopencl" not in sys.modules
        for data in ({st_file!r}, {pt_file!r}):
            try:
                shrew.load(io.BytesIO(data))
            except shrew.ShrewError as exc:
                print(type(exc).__name__, str(exc)[:40])
        print("imported:", sorted(m for m in sys.modules if m.startswith("pyopencl")))
        """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("RefusedGlobalError load: the file object") == 2, result.stdout
    assert "imported: []" in result.stdout, result.stdout


# --- case 2: every file shrew.save writes loads back -------------------------------------

def _header_size(data: bytes) -> int:
    return int.from_bytes(data[:8], "little")


def _pad_to_low_byte(state: dict, low: int) -> dict:
    """`state` plus a key whose length makes the file's header length end in `low`
    (safetensors pads its header to a multiple of 8, so `low` is one too)."""
    n = 1
    for _ in range(8):
        padded = {**state, "~" * n: shrew.zeros(1)}
        diff = (low - _header_size(_saved(padded))) % 256
        if diff == 0:
            return padded
        n += diff  # each character adds one byte; the padding to 8 absorbs the rest
    raise AssertionError("no key length gives that header size")


def _saved(obj) -> bytes:
    out = io.BytesIO()
    shrew.save(obj, out)
    return out.getvalue()


def test_a_header_length_ending_in_0x80_is_not_a_pickle():
    state = _pad_to_low_byte({"w": shrew.ones(2, 3)}, 0x80)
    data = _saved(state)
    assert data[0] == 0x80
    loaded = _load(data)
    assert loaded.keys() == state.keys()
    assert loaded["w"].tolist() == [[1.0] * 3] * 2


_DTYPES = [shrew.float32, shrew.float64, shrew.float16, shrew.bfloat16, shrew.int64,
           shrew.int32, shrew.int16, shrew.int8, shrew.uint8, shrew.bool]
_KEYS = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1,
                max_size=300)
_SHAPES = st.lists(st.integers(0, 3), max_size=4).map(tuple)


@st.composite
def _tensors(draw):
    dtype = draw(st.sampled_from(_DTYPES))
    shape = draw(_SHAPES)
    values = np.random.default_rng(draw(st.integers(0, 2**32 - 1))).standard_normal(shape)
    return shrew.tensor(values * 10).to(dtype)


def _same(a, b) -> None:
    if isinstance(a, shrew.Tensor):
        assert isinstance(b, shrew.Tensor) and a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a.float().numpy(), b.float().numpy())
    elif isinstance(a, dict):
        assert sorted(a) == sorted(b)  # a state dict comes back in safetensors' order
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    else:
        assert a == b and type(a) is type(b)


@settings(max_examples=700)
@given(st.dictionaries(_KEYS, _tensors(), min_size=1, max_size=5),
       st.sampled_from([None, 0x80, 0x00, 0x08]))
def test_every_state_dict_shrew_saves_loads_back_equal(state, low_byte):
    if low_byte is not None:
        state = _pad_to_low_byte(state, low_byte)
    _same(state, _load(_saved(state)))


_LEAVES = st.one_of(_tensors(), st.none(), st.booleans(), st.integers(-2**60, 2**60),
                    st.floats(allow_nan=False), st.text(max_size=20))
_TREES = st.recursive(_LEAVES, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.lists(inner, max_size=3).map(tuple),
    st.dictionaries(st.text(max_size=10), inner, max_size=3)), max_leaves=8)


@settings(max_examples=400)
@given(_TREES, st.sampled_from([None, 0x80]))
def test_every_checkpoint_shrew_saves_loads_back_equal(tree, low_byte):
    checkpoint = {"epoch": 3, "model": tree}
    if low_byte is not None:  # pad the checkpoint until its header ends in 0x80
        for n in range(400):
            checkpoint["pad"] = "p" * n
            if _header_size(_saved(checkpoint)) % 256 == low_byte:
                break
    _same(checkpoint, _load(_saved(checkpoint)))


# --- case 3: memory stays a small multiple of the file -----------------------------------

_MEASURED = """
    import io, resource, sys, shrew
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))  # a bug fails, not swaps
    data = sys.stdin.buffer.read()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        out = shrew.load(io.BytesIO(data))
        print("loaded", len(out) if isinstance(out, list) else 1)
        if isinstance(out, list):
            import numpy as np
            print("shared", all(np.shares_memory(np.asarray(out[0]), np.asarray(t)) for t in out))
    except Exception as exc:
        print("raised", type(exc).__name__, exc)
    grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    print("grew_mib", grew // 1024)
"""


def _measure(data: bytes) -> tuple[str, int]:
    env = dict(os.environ, PYTHONPATH=ROOT)
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(_MEASURED)], input=data,
                            env=env, capture_output=True, timeout=120)
    out = result.stdout.decode()
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    return out, int(out.rsplit("grew_mib ", 1)[1])


def test_stride_tricks_cannot_expand_a_small_storage():
    data = _zip(_pickle(_tensor((2**15, 2**15), (0, 0), 1)), {"0": bytes(4)})
    assert len(data) < 1000
    out, grew = _measure(data)
    assert "raised LoadError load: the file object: a tensor of size [32768, 32768]" in out
    assert "past the" in out and grew < 64, out


def test_views_of_one_storage_share_its_memory():
    views = b"(" + b"".join(_tensor((1 << 20,), (1,), 1 << 20) for _ in range(300)) + b"l"
    data = _zip(_pickle(views), {"0": bytes(4 << 20)}, compress=zipfile.ZIP_DEFLATED)
    assert len(data) < 16 << 10
    out, grew = _measure(data)
    assert "loaded 300" in out and "shared True" in out, out
    assert grew < 64, out


def test_a_deflate_bomb_is_refused_before_it_is_inflated():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("archive/data.pkl", _pickle(_tensor((4,), (1,), 4)))
        with z.open("archive/data/0", "w", force_zip64=True) as entry:
            for _ in range(256):
                entry.write(bytes(1 << 20))
    data = out.getvalue()
    assert len(data) < 1 << 20
    out_text, grew = _measure(data)
    assert "would inflate to 268435456 bytes" in out_text and "deflate bomb" in out_text
    assert grew < 64, out_text


@pytest.mark.parametrize("body, storages, message", [
    (_tensor((4,), (1,), 2**40), {"0": bytes(16)}, "storage '0' has 16 bytes, its "
                                                   "1099511627776 elements need"),
    (_tensor((2**62, 2**62), (1, 1), 4), {"0": bytes(16)}, "reaches element"),
    (_tensor((2, -3), (1, 1), 4), {"0": bytes(16)}, "size .* is not a list of at most"),
    (_tensor((4,), (-1,), 4), {"0": bytes(16)}, "stride .* is not a list"),
    (_tensor((4,), (1,), 4, offset=-2), {"0": bytes(16)}, "offset -2 is not"),
    (_tensor((4,), (1,), -4), {"0": bytes(16)}, "unknown storage reference"),
    (_tensor((1,) * 65, (1,) * 65, 4), {"0": bytes(16)}, "at most 64"),
    (_tensor((4,), (1,), 4, storage="QInt8Storage"), {"0": bytes(16)}, "torch.QInt8Storage"),
    (_tensor((4,), (1, 1), 4), {"0": bytes(16)}, r"size \[4\] but stride \[1, 1\]"),
    (b"(" + _tensor((4,), (1,), 4) + _tensor((2,), (1,), 2, storage="LongStorage") + b"l",
     {"0": bytes(16)}, "two dtypes or sizes"),
    (b"]" * 100_000 + b"a" * 99_999, {}, "nested too deeply"),
    (b"]q\x00h\x00a", {}, "nested too deeply"),  # a list that contains itself
    (_global("torch", "FloatStorage"), {}, "bare StorageType"),
    (b"}" * 3 + b"s", {}, "not a valid PyTorch zip file"),
    (_str("x") * 2 + b"\x8b", {}, "not a valid PyTorch zip file"),  # an opcode pickle lacks
])
def test_malformed_tensors_are_clear_shrew_errors(body, storages, message):
    with pytest.raises(shrew.ShrewError, match="load: the file object.*" + message):
        _load(_zip(_pickle(body), storages))


def test_truncated_and_corrupted_files_raise_only_shrew_errors():
    good = _float_file()
    for cut in range(0, len(good), 7):
        with pytest.raises(shrew.ShrewError, match="load: the file object"):
            _load(good[:cut])
    rng = np.random.default_rng(0)
    for _ in range(300):  # flip bytes anywhere: a clear error or a tensor, nothing else
        bad = bytearray(good)
        for at in rng.integers(0, len(bad), 3):
            bad[at] = int(rng.integers(0, 256))
        try:
            _load(bytes(bad))
        except shrew.ShrewError as exc:
            assert "the file object" in str(exc)


def test_a_tensor_used_as_a_dict_key_comes_back_as_a_shrew_tensor():
    out = io.BytesIO()
    key = torch.ones(2)
    torch.save({key: "a", "w": key}, out)
    loaded = _load(out.getvalue())
    tensor_keys = [k for k in loaded if not isinstance(k, str)]
    assert len(tensor_keys) == 1 and isinstance(tensor_keys[0], shrew.Tensor)
    assert tensor_keys[0] is loaded["w"] and loaded[tensor_keys[0]] == "a"
