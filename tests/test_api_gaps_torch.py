"""Issue 30's API gaps, against torch: legacy tensor types, memory formats, size=/out=,
print options, layers' factory kwargs, functional parameter names, the real-tensor
conjugate family, data_ptr, fx.wrap, DataParallel, nn.attention and torch.hub's cache."""
import inspect

import numpy as np
import pytest
import torch

import shrew
import shrew.nn as nn
import shrew.nn.functional as F

LEGACY = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
          "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_constructors_match_torch(name):
    ours, theirs = getattr(shrew, name), getattr(torch, name)
    for args in [(), (2, 3), ([1, 0, 1],), (shrew.Size([4]),)]:
        targs = tuple(torch.Size(a) if isinstance(a, shrew.Size) else a for a in args)
        a, b = ours(*args), theirs(*targs)
        assert tuple(a.shape) == tuple(b.shape) and a.dtype.name == str(b.dtype)[6:]
        if args and isinstance(args[0], list):
            assert a.tolist() == b.tolist()
    assert isinstance(ours(2), ours) and not isinstance(ours(2), shrew.cuda.FloatTensor)
    assert isinstance(shrew.zeros(1, dtype=ours.dtype), ours)
    assert ours(2).type() == theirs(2).type() == f"torch.{name}"


def test_tensor_takes_the_legacy_sizes_as_torch():
    """torch.Tensor(n_out, n_in), torch.Tensor(n), torch.Tensor(Size) and torch.Tensor():
    zeros (torch's are uninitialised) of the default float dtype; data as before."""
    for args in [(3, 4), (5,), (), (np.int64(2), 3)]:
        a, b = shrew.Tensor(*args), torch.Tensor(*args)
        assert tuple(a.shape) == tuple(b.shape) and a.dtype is shrew.float32
        assert not a.any()
    assert shrew.Tensor(shrew.Size([2, 3])).shape == (2, 3)
    assert shrew.Tensor(2, device="cpu").shape == (2,)
    with shrew.device("cpu"):
        shrew.set_default_dtype(shrew.float64)
        try:
            assert shrew.Tensor(2).dtype is shrew.float64
        finally:
            shrew.set_default_dtype(shrew.float32)
    weight = nn.Parameter(shrew.Tensor(4, 3))  # a layer's legacy idiom
    assert weight.shape == (4, 3) and weight.requires_grad
    assert shrew.Tensor([1.5, 2.0], shrew.float64).dtype is shrew.float64  # data, dtype
    with pytest.raises(RuntimeError):
        shrew.Tensor(-1)


def test_version_gates_pass_as_on_the_pytorch_shrew_follows():
    """torch.__version__ is the PyTorch release shrew follows, with shrew's own release as
    its local label; it compares with strings, tuples and packaging Versions as torch's."""
    from packaging.version import Version
    ours, theirs = shrew.__version__, torch.__version__
    assert ours.startswith(theirs.split("+")[0] + "+shrew.")
    assert ours.split("+")[1] == f"shrew.{shrew.version.release}"
    for other in ["2.0", "2.0.0", "1.13.1", "2.13", "2.14", "3.0", (2, 0), (2, 13), (2, 14),
                  [1, 9]]:
        assert (ours >= other) == (theirs >= other), other
        assert (ours < other) == (theirs < other), other
    # (torch's own compares with its vendored packaging's Version only)
    assert ours >= Version("2.1.0") and not ours < Version("2.1.0")
    assert Version(ours) >= Version("2.0.0") and isinstance(ours, str)
    assert int(ours.split(".")[0]) >= 2
    assert shrew.version.__version__ == ours and shrew.version.cuda is None


def test_legacy_isinstance_and_cuda_error():
    assert isinstance(shrew.zeros(2), shrew.FloatTensor)
    assert not isinstance(shrew.zeros(2, dtype=shrew.float64), shrew.FloatTensor)
    with pytest.raises(shrew.ShrewError):
        shrew.cuda.FloatTensor(2)
    assert shrew.FloatTensor(shrew.ones(2)).tolist() == [1.0, 1.0]
    with pytest.raises(TypeError):
        shrew.FloatTensor(shrew.ones(2, dtype=shrew.float64))
    with pytest.raises(TypeError):
        torch.FloatTensor(torch.ones(2, dtype=torch.float64))


def test_tensor_new_and_type_strings():
    x, t = shrew.ones(2, dtype=shrew.float64), torch.ones(2, dtype=torch.float64)
    for args in [(), (2, 3), ([1, 2],)]:
        a, b = x.new(*args), t.new(*args)
        assert tuple(a.shape) == tuple(b.shape) and a.dtype is shrew.float64
    assert x.type("torch.FloatTensor").dtype is shrew.float32


def test_memory_formats():
    assert repr(shrew.channels_last) == repr(torch.channels_last)
    assert isinstance(shrew.preserve_format, shrew.memory_format)
    a, t = shrew.ones(2, 3, 4, 5), torch.ones(2, 3, 4, 5)
    for fmt in ("channels_last", "contiguous_format", "preserve_format"):
        f, g = getattr(shrew, fmt), getattr(torch, fmt)
        np.testing.assert_array_equal(shrew.zeros_like(a, memory_format=f).numpy(),
                                      torch.zeros_like(t, memory_format=g).numpy())
        assert a.clone(memory_format=f).tolist() == a.tolist()
        for like in (shrew.ones_like, shrew.empty_like):
            assert like(a, memory_format=f).shape == a.shape
    assert a.contiguous(memory_format=shrew.channels_last).tolist() == a.tolist()
    for shape in [(2, 3, 4, 5), (2, 1, 1, 1), (2, 3, 1, 1), (2, 3), (2, 3, 4, 5, 6)]:
        for fmt in ("channels_last", "channels_last_3d", "contiguous_format"):
            assert (shrew.zeros(*shape).is_contiguous(memory_format=getattr(shrew, fmt))
                    == torch.zeros(*shape).is_contiguous(memory_format=getattr(torch, fmt)))
    with pytest.raises(TypeError):
        shrew.zeros_like(a, memory_format="channels_last")


def test_size_keyword_and_out():
    for fn in ("zeros", "ones", "empty"):
        assert getattr(shrew, fn)(size=(2, 3)).shape == getattr(torch, fn)(size=(2, 3)).shape
        o, p = shrew.empty(0, dtype=shrew.float64), torch.empty(0, dtype=torch.float64)
        r = getattr(shrew, fn)(2, 3, out=o)
        getattr(torch, fn)(2, 3, out=p)
        assert r is o and o.shape == tuple(p.shape) and o.dtype is shrew.float64
        if fn != "empty":
            assert o.tolist() == p.tolist()
    x, t = shrew.tensor([1.26, -2.5]), torch.tensor([1.26, -2.5])
    o, p = shrew.empty(2), torch.empty(2)
    assert shrew.round(x, out=o) is o and o.tolist() == torch.round(t, out=p).tolist()
    assert shrew.add(x, 1, out=o).tolist() == torch.add(t, 1, out=p).tolist()
    m, mt = shrew.tensor([[1.0, 3.0], [4.0, 2.0]]), torch.tensor([[1.0, 3.0], [4.0, 2.0]])
    vals, idx = shrew.empty(0), shrew.empty(0, dtype=shrew.int64)
    shrew.max(m, 1, out=(vals, idx))
    ref = torch.max(mt, 1)
    assert vals.tolist() == ref.values.tolist() and idx.tolist() == ref.indices.tolist()
    with pytest.raises(RuntimeError):
        torch.add(torch.ones(2, requires_grad=True), 1, out=torch.empty(2))
    with pytest.raises(RuntimeError):
        shrew.add(shrew.ones(2, requires_grad=True), 1, out=shrew.empty(2))
    with pytest.raises(RuntimeError):
        torch.round(t, out=torch.empty(2, dtype=torch.int64))
    with pytest.raises(RuntimeError):
        shrew.round(x, out=shrew.empty(2, dtype=shrew.int64))


@pytest.mark.parametrize("data", [[0.123456, 1.0, -2.5], [1.0, 2.0, 3.0], [1e-5, 1.0],
                                  [1e9, 2.0], [[1.5, 2.25], [3.0, 4.0]], [0.0, 0.0],
                                  [float("nan"), 1.0], [float("inf"), 1.5], list(range(10))])
def test_repr_matches_torch(data):
    assert repr(shrew.tensor(data)) == repr(torch.tensor(data))


def test_repr_wraps_as_torch_and_set_printoptions():
    x = np.random.RandomState(0).randn(5, 30).astype(np.float32)
    assert repr(shrew.tensor(x)) == repr(torch.tensor(x))
    try:
        for kw in ({"precision": 2}, {"sci_mode": True}, {"profile": "short"}):
            shrew.set_printoptions(**kw)
            torch.set_printoptions(**kw)
            assert repr(shrew.tensor([1.2345, 2.0])) == repr(torch.tensor([1.2345, 2.0]))
    finally:
        shrew.set_printoptions(profile="default")
        torch.set_printoptions(profile="default")
    assert (inspect.signature(shrew.set_printoptions).parameters.keys()
            == inspect.signature(torch.set_printoptions).parameters.keys())


LAYERS = [("Linear", (3, 4)), ("Conv1d", (2, 3, 3)), ("Conv2d", (2, 3, 3)),
          ("ConvTranspose1d", (2, 3, 3)), ("ConvTranspose2d", (2, 3, 3)), ("Embedding", (5, 3)),
          ("EmbeddingBag", (5, 3)), ("LayerNorm", (4,)), ("GroupNorm", (2, 4)), ("RMSNorm", (4,)),
          ("BatchNorm1d", (3,)), ("BatchNorm2d", (3,)), ("InstanceNorm1d", (3, 1e-5, 0.1, True)),
          ("RNN", (3, 4)), ("LSTM", (3, 4)), ("GRU", (3, 4)), ("RNNCell", (3, 4)),
          ("LSTMCell", (3, 4)), ("GRUCell", (3, 4)), ("MultiheadAttention", (8, 2)),
          ("TransformerEncoderLayer", (8, 2, 16)), ("TransformerDecoderLayer", (8, 2, 16)),
          ("PReLU", ())]


@pytest.mark.parametrize("name,args", LAYERS)
def test_layer_factory_kwargs(name, args):
    ours = getattr(nn, name)(*args, dtype=shrew.float64)
    theirs = getattr(torch.nn, name)(*args, dtype=torch.float64)
    ref = {k: str(v.dtype)[6:] for k, v in theirs.state_dict().items()}
    got = {k: v.dtype.name for k, v in ours.state_dict().items()}
    assert got == ref


def test_layer_factory_device():
    lin = nn.Linear(3, 4, device="opencl:0", dtype=shrew.float32)
    assert {str(p.device) for p in lin.parameters()} == {"opencl:0"}
    bn = nn.BatchNorm2d(3, device="opencl:0")
    assert {str(b.device) for b in bn.buffers()} == {"opencl:0"}


def _torch_params(fn):
    """Parameter names of a torch function: its signature, or for a builtin the first line
    of its docstring ("linear(input, weight, bias=None) -> Tensor")."""
    try:
        return list(inspect.signature(fn).parameters)
    except ValueError:
        head = fn.__doc__.strip().split("\n")[0]
        inner = head[head.index("(") + 1:head.rindex(")")]
        return [p.split("=")[0].strip() for p in inner.split(",") if p.strip() != "*"]


def test_functional_parameter_names_match_torch():
    for name in ("linear", "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d",
                 "batch_norm", "dropout", "layer_norm"):
        ours = list(inspect.signature(getattr(F, name)).parameters)
        theirs = _torch_params(getattr(torch.nn.functional, name))
        assert ours == theirs[:len(ours)], name
    x, w, b = np.ones((2, 3), np.float32), np.ones((4, 3), np.float32), np.ones(4, np.float32)
    got = F.linear(input=shrew.tensor(x), weight=shrew.tensor(w), bias=shrew.tensor(b))
    ref = torch.nn.functional.linear(input=torch.tensor(x), weight=torch.tensor(w),
                                     bias=torch.tensor(b))
    np.testing.assert_allclose(got.numpy(), ref.numpy())
    xi, wi = np.ones((1, 2, 5, 5), np.float32), np.ones((3, 2, 3, 3), np.float32)
    got = F.conv2d(shrew.tensor(xi), weight=shrew.tensor(wi), bias=None, padding=1)
    ref = torch.nn.functional.conv2d(torch.tensor(xi), weight=torch.tensor(wi), bias=None,
                                     padding=1)
    np.testing.assert_allclose(got.numpy(), ref.numpy())


def test_real_conjugates_ravel_data_ptr():
    x, t = shrew.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(2, 3)
    assert x.ravel().tolist() == t.ravel().tolist()
    assert x.conj() is x and x.resolve_conj() is x and not x.is_conj() and not x.is_neg()
    assert t.conj().data_ptr() == t.data_ptr() and not t.is_conj()
    cp = x.conj_physical()
    assert cp.tolist() == t.conj_physical().tolist() and cp.data_ptr() != x.data_ptr()
    assert x.data_ptr() == x.detach().data_ptr() == x._data.ctypes.data  # numpy's address
    assert t.conj() is t
    on_cl = shrew.ones(4, device="opencl:0")
    assert isinstance(on_cl.data_ptr(), int) and on_cl.data_ptr() == on_cl.detach().data_ptr()


def test_fx_wrap_dataparallel_attention():
    import torch.fx

    def f(a):
        return a

    assert shrew.fx.wrap(f) is f and shrew.fx.wrap("len") == "len"
    at_top = {}  # torch.fx.wrap must be called at a module's top level
    exec("result = wrap('len')", {"wrap": torch.fx.wrap}, at_top)
    assert at_top["result"] == "len"
    inner = nn.Linear(3, 2)
    dp = nn.DataParallel(inner, device_ids=[0])
    x = shrew.ones(4, 3)
    assert dp.module is inner and dp(x).tolist() == inner(x).tolist()
    assert list(dp.state_dict()) == list(torch.nn.DataParallel(torch.nn.Linear(3, 2))
                                         .state_dict())
    from shrew.nn.attention import SDPBackend, current_backends, sdpa_kernel
    assert {b.name: b.value for b in SDPBackend} == {
        k: int(v) for k, v in torch.nn.attention.SDPBackend.__members__.items()}
    with sdpa_kernel([SDPBackend.MATH]):
        assert current_backends() == (SDPBackend.MATH,)
        q = shrew.ones(1, 2, 3, 4)
        assert F.scaled_dot_product_attention(q, q, q).shape == (1, 2, 3, 4)
    assert SDPBackend.FLASH_ATTENTION in current_backends()


def test_hub_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    folder = tmp_path / "hub" / "checkpoints"
    folder.mkdir(parents=True)
    torch.save({"w": torch.arange(3.0)}, folder / "model-123.pth")
    url = "https://example.com/weights/model-123.pth"
    sd = shrew.hub.load_state_dict_from_url(url, map_location="cpu", check_hash=True,
                                            progress=False)
    assert sd["w"].tolist() == [0.0, 1.0, 2.0]
    shrew.hub.download_url_to_file(url, str(tmp_path / "copy.pth"), progress=False)
    assert (tmp_path / "copy.pth").read_bytes() == (folder / "model-123.pth").read_bytes()
    with pytest.raises(shrew.ShrewError, match="downloads nothing"):
        shrew.hub.load_state_dict_from_url("https://example.com/missing.pth")
