"""shrew.save to a .pt / .pth path writes PyTorch's own zip format: torch.load(f,
weights_only=True) of the installed torch reads it, with the same values, dtypes, shapes,
strides, shared storages and parameters, and shrew.load reads it back."""
from __future__ import annotations

import dataclasses
import inspect
import io
import pickle
import pickletools
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import shrew
from shrew import nn

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
          "uint8", "bool"]
DEVICES = ["cpu"] + (["opencl"] if "opencl" in " ".join(shrew.devices()) else [])
# what torch.load(weights_only=True) allows a .pt's pickle to name, and all shrew.save uses
TORCH_NAMES = {"collections OrderedDict", "torch._utils _rebuild_tensor_v2",
               "torch._utils _rebuild_parameter"} | {
    f"torch {n}Storage" for n in ("Float", "Double", "Half", "BFloat16", "Long", "Int",
                                  "Short", "Char", "Byte", "Bool")}


def host(t):
    """A shrew or torch tensor's values as a numpy array (bfloat16 widened to float32)."""
    if isinstance(t, torch.Tensor):
        t = t.detach()
        return (t.float() if t.dtype == torch.bfloat16 else t).numpy()
    a = t.detach().numpy()
    return a.astype(np.float32) if a.dtype.name == "bfloat16" else a


def address(t):
    """Where a CPU shrew tensor's first element lies (numpy.asarray views its memory)."""
    return np.asarray(t).__array_interface__["data"][0]


def torch_load(path):
    return torch.load(path, weights_only=True)


def assert_same_tensor(ours, theirs, where):
    assert str(theirs.dtype) == f"torch.{ours.dtype.name}", where
    assert tuple(theirs.shape) == tuple(ours.shape), where
    np.testing.assert_array_equal(host(theirs), host(ours), err_msg=where)
    assert theirs.requires_grad == ours.requires_grad, where
    assert isinstance(theirs, torch.nn.Parameter) == isinstance(ours, nn.Parameter), where
    if ours.numel() > 0:
        assert theirs.stride() == ours.stride(), where


# -- the property: random state dicts with views sharing storages ----------------------------
def _base(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        values = rng.random(shape) < 0.5
    elif dtype.startswith(("int", "uint")):
        values = rng.integers(0, 100, size=shape)
    else:
        values = rng.standard_normal(shape) * 4
    return shrew.tensor(values, dtype=getattr(shrew, dtype))


_VIEWS = {
    "t": (lambda t: t.ndim == 2, lambda t: t.t()),
    "step": (lambda t: t.ndim >= 1, lambda t: t[::2]),
    "select": (lambda t: t.ndim >= 1 and t.shape[0] > 0, lambda t: t.select(0, -1)),
    "expand": (lambda t: True, lambda t: t.unsqueeze(0).expand(3, *t.shape)),
    "narrow": (lambda t: t.ndim >= 1 and t.shape[0] > 1, lambda t: t.narrow(0, 1, 1)),
    "flat": (lambda t: t.is_contiguous(), lambda t: t.reshape(-1)),
    "detach": (lambda t: True, lambda t: t.detach()),
}


@st.composite
def state_dicts(draw):
    sd = OrderedDict()
    for i in range(draw(st.integers(1, 4))):
        dtype = draw(st.sampled_from(DTYPES))
        shape = tuple(draw(st.lists(st.integers(0, 4), max_size=3)))
        base = _base(dtype, shape, draw(st.integers(0, 2 ** 16)))
        if dtype.startswith("float") and draw(st.booleans()):
            base = nn.Parameter(base, requires_grad=draw(st.booleans()))
        sd[f"b{i}"] = base
        for name in draw(st.lists(st.sampled_from(sorted(_VIEWS)), max_size=3, unique=True)):
            applies, view = _VIEWS[name]
            if applies(base):
                sd[f"b{i}.{name}"] = view(base)
        if draw(st.booleans()):
            sd[f"b{i}.again"] = base  # one tensor under two names (a tied weight)
    return sd


@given(sd=state_dicts(), suffix=st.sampled_from([".pt", ".pth"]))
def test_random_state_dicts_round_trip_through_torch_load_and_shrew_load(tmp_path_factory,
                                                                         sd, suffix):
    path = tmp_path_factory.mktemp("pt") / f"state{suffix}"
    shrew.save(sd, path)
    theirs = torch_load(path)
    assert type(theirs) is OrderedDict and list(theirs) == list(sd)
    for k, ours in sd.items():
        assert_same_tensor(ours, theirs[k], k)
    # tensors that share memory in shrew share a storage in torch, at the same distance
    for k1, a in sd.items():
        for k2, b in sd.items():
            if a.numel() and b.numel() and np.shares_memory(np.asarray(a), np.asarray(b)):
                ta, tb = theirs[k1], theirs[k2]
                assert ta.untyped_storage().data_ptr() == tb.untyped_storage().data_ptr()
                moved = (address(b) - address(a)) // a.dtype.itemsize
                assert tb.storage_offset() - ta.storage_offset() == moved, (k1, k2)
    assert all(theirs[k] is theirs[k.removesuffix(".again")] for k in sd if ".again" in k)
    back = shrew.load(path)
    assert list(back) == list(sd)
    for k, ours in sd.items():
        assert back[k].dtype == ours.dtype and back[k].shape == ours.shape, k
        np.testing.assert_array_equal(host(back[k]), host(ours), err_msg=k)
        assert back[k].requires_grad == ours.requires_grad, k


# -- optimizers: torch continues the training from shrew's saved state --------------------
def _models():
    ours = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(),
                                 torch.nn.Linear(4, 2))
    return ours, theirs


@pytest.mark.parametrize("make", [
    lambda m, lib: lib.optim.Adam(m.parameters(), lr=0.05, betas=(0.8, 0.9)),
    lambda m, lib: lib.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, nesterov=True),
], ids=["Adam", "SGD-momentum"])
def test_optimizer_state_saved_by_shrew_continues_in_torch(tmp_path, make):
    ours, theirs = _models()
    opt = make(ours, shrew)
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    for _ in range(2):
        opt.zero_grad()
        (ours(shrew.tensor(x)) ** 2).sum().backward()
        opt.step()
    shrew.save({"model": ours.state_dict(), "optimizer": opt.state_dict(), "epoch": 2},
               tmp_path / "checkpoint.pt")
    checkpoint = torch_load(tmp_path / "checkpoint.pt")
    assert checkpoint["epoch"] == 2
    theirs.load_state_dict(checkpoint["model"])
    topt = make(theirs, torch)
    topt.load_state_dict(checkpoint["optimizer"])
    for group, ours_group in zip(topt.state_dict()["param_groups"],
                                 opt.state_dict()["param_groups"]):
        assert {k: group[k] for k in ours_group} == ours_group  # torch adds its own keys
    for state, buffers in zip(opt.state_dict()["state"].values(),
                              topt.state_dict()["state"].values()):
        for name, value in state.items():
            if isinstance(value, shrew.Tensor):
                np.testing.assert_array_equal(host(buffers[name]), host(value))
    for lib, model, o in ((shrew, ours, opt), (torch, theirs, topt)):
        o.zero_grad()
        (model(lib.tensor(x)) ** 2).sum().backward()
        o.step()
    for (k, a), b in zip(ours.state_dict().items(), theirs.state_dict().values()):
        np.testing.assert_allclose(host(b), host(a), rtol=1e-5, atol=1e-6, err_msg=k)
    back = shrew.load(tmp_path / "checkpoint.pt")
    assert back["optimizer"]["param_groups"] == checkpoint["optimizer"]["param_groups"]


def test_a_tied_weight_is_written_once_and_stays_tied(tmp_path):
    emb = nn.Embedding(10, 4)
    head = nn.Linear(4, 10, bias=False)
    head.weight = emb.weight
    model = nn.ModuleDict({"emb": emb, "head": head})
    shrew.save(model.state_dict(), tmp_path / "tied.pt")
    names = zipfile.ZipFile(tmp_path / "tied.pt").namelist()
    assert [n for n in names if "/data/" in n] == ["tied/data/0"]
    sd = torch_load(tmp_path / "tied.pt")
    assert sd["emb.weight"].data_ptr() == sd["head.weight"].data_ptr()


# -- the file itself: what torch.save writes, and nothing torch refuses -------------------
def test_the_zip_has_torch_saves_entries_and_a_protocol_2_pickle_naming_only_safe_globals(
        tmp_path):
    sd = OrderedDict(w=nn.Parameter(shrew.ones(2, 3)), n=shrew.tensor([1, 2]))
    sd._metadata = {"": {"version": 1}}  # what torch's state_dict() carries
    shrew.save({"sd": sd, "big": 2 ** 40, "neg": -3, "x": [1.5, "s", None, True, (1, 2, 3, 4)]},
               tmp_path / "model.pt")
    with zipfile.ZipFile(tmp_path / "model.pt") as zf:
        assert zf.namelist() == ["model/data.pkl", "model/byteorder", "model/data/0",
                                 "model/data/1", "model/version"]
        assert zf.read("model/byteorder") == b"little"
        assert zf.read("model/version") == b"3\n"
        for info in zf.infolist():
            assert info.compress_type == zipfile.ZIP_STORED
            if "/data/" in info.filename:  # torch aligns storages to 64 bytes
                start = info.header_offset + 30 + len(info.filename) + len(info.extra)
                assert start % 64 == 0
        pickled = zf.read("model/data.pkl")
    assert pickled[:2] == b"\x80\x02"
    names = {arg.replace("\n", " ").strip() for op, arg, _ in pickletools.genops(pickled)
             if op.name == "GLOBAL"}
    assert names <= TORCH_NAMES
    loaded = torch_load(tmp_path / "model.pt")
    assert loaded["sd"]._metadata == {"": {"version": 1}}
    assert loaded["big"] == 2 ** 40 and loaded["neg"] == -3
    assert loaded["x"] == [1.5, "s", None, True, (1, 2, 3, 4)]
    mapped = torch.load(tmp_path / "model.pt", weights_only=True, mmap=True)
    np.testing.assert_array_equal(mapped["sd"]["w"].detach().numpy(), np.ones((2, 3)))


def test_save_has_torch_saves_parameters():
    """torch.save's, but for the first two names, which shrew's API promises as
    (state_dict, path): positional calls are the same."""
    ours = list(inspect.signature(shrew.save).parameters.values())
    theirs = list(inspect.signature(torch.save).parameters.values())
    assert [p.name for p in ours[:2]] == ["state_dict", "path"]
    assert [(p.name, p.kind) for p in ours[2:len(theirs)]] == \
        [(p.name, p.kind) for p in theirs[2:]]
    assert ours[-1].name == "format" and ours[-1].kind is inspect.Parameter.KEYWORD_ONLY


def test_which_format_a_path_or_file_object_gets(tmp_path):
    sd = {"w": shrew.arange(4.0)}
    shrew.save(sd, tmp_path / "upper.PTH")
    assert torch_load(tmp_path / "upper.PTH")["w"].tolist() == [0, 1, 2, 3]
    shrew.save(sd, str(tmp_path / "plain.safetensors"))
    assert not zipfile.is_zipfile(tmp_path / "plain.safetensors")
    shrew.save(sd, tmp_path / "forced.pt", format="safetensors")
    assert not zipfile.is_zipfile(tmp_path / "forced.pt")
    with open(tmp_path / "named.pt", "wb") as f:  # a file object's name counts
        shrew.save(sd, f)
    assert torch_load(tmp_path / "named.pt")["w"].tolist() == [0, 1, 2, 3]
    nameless = io.BytesIO()
    shrew.save(sd, nameless)  # no name: the safe default
    assert not zipfile.is_zipfile(io.BytesIO(nameless.getvalue()))
    asked = io.BytesIO()
    shrew.save(sd, asked, format="torch")
    assert zipfile.ZipFile(io.BytesIO(asked.getvalue())).namelist()[0] == "archive/data.pkl"
    assert torch.load(io.BytesIO(asked.getvalue()), weights_only=True)["w"].tolist() == [
        0, 1, 2, 3]
    np.testing.assert_array_equal(shrew.load(io.BytesIO(asked.getvalue()))["w"].numpy(),
                                  np.arange(4.0))
    shrew.save(sd, tmp_path / "nomark.pt", _disable_byteorder_record=True)
    assert "nomark/byteorder" not in zipfile.ZipFile(tmp_path / "nomark.pt").namelist()
    assert torch_load(tmp_path / "nomark.pt")["w"].tolist() == [0, 1, 2, 3]
    with pytest.raises(shrew.ShrewError, match="format must be one of") as info:
        shrew.save(sd, tmp_path / "x.pt", format="pickle")
    assert isinstance(info.value, ValueError)


def test_a_whole_module_named_pt_is_written_in_shrews_format_with_a_warning(tmp_path):
    """torch.save(model, "model.pth") (super_resolution's checkpoints): PyTorch's format
    keeps a module only as a pickle of its code, so shrew writes its own format under that
    name, says so, and shrew.load reads it back; format="torch" still refuses."""
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    for obj, name in ((model, "whole.pth"), ({"model": model, "epoch": 1}, "ckpt.pt")):
        with pytest.warns(UserWarning, match="shrew's own format"):
            shrew.save(obj, tmp_path / name)
    loaded = shrew.load(tmp_path / "whole.pth")
    assert isinstance(loaded, nn.Sequential)
    np.testing.assert_array_equal(loaded[0].weight.numpy(), model[0].weight.numpy())
    checkpoint = shrew.load(tmp_path / "ckpt.pt")
    assert checkpoint["epoch"] == 1 and isinstance(checkpoint["model"], nn.Sequential)


def test_what_torch_cannot_load_is_refused_before_writing(tmp_path):
    model = nn.Linear(2, 3)
    for obj in (model, {"model": model, "epoch": 1}):
        with pytest.raises(shrew.ShrewError, match="state_dict.*safetensors") as info:
            shrew.save(obj, tmp_path / "whole.pt", format="torch")
        assert isinstance(info.value, NotImplementedError)
    assert not (tmp_path / "whole.pt").exists()
    for bad, what in ((np.zeros(2), "ndarray"), ({1, 2}, "set"), (object(), "object")):
        with pytest.raises(shrew.ShrewError, match=f"{what} at the top\\['x'\\]") as info:
            shrew.save({"x": bad}, tmp_path / "bad.pt")
        assert isinstance(info.value, TypeError)
    with pytest.raises(shrew.ShrewError, match="legacy format"):
        shrew.save({}, tmp_path / "old.pt", _use_new_zipfile_serialization=False)
    shrew.save(model, tmp_path / "whole.safetensors")  # the module's own format still works
    assert isinstance(shrew.load(tmp_path / "whole.safetensors"), nn.Linear)


@pytest.mark.parametrize("device", DEVICES)
def test_tensors_on_any_device_are_written_as_cpu_tensors(tmp_path, device):
    base = shrew.arange(12.0).reshape(3, 4).to(device)
    sd = {"base": base, "t": base.t(), "row": base[1], "ex": base[0:1].expand(2, 4)}
    shrew.save(sd, tmp_path / "d.pt")
    theirs = torch_load(tmp_path / "d.pt")
    for k, ours in sd.items():
        np.testing.assert_array_equal(theirs[k].numpy(), ours.numpy(), err_msg=k)
    ptrs = {theirs[k].untyped_storage().data_ptr() for k in sd}
    assert len(ptrs) == 1  # views of one memory stay views of one storage


@dataclasses.dataclass
class TrainConfig:
    """A checkpoint's config, as build-nanogpt's train_gpt2.py saves its GPTConfig."""
    n_layer: int = 2
    name: str = "gpt"
    scale: object = None


class CalledOnLoad:
    """Pickles as a call of TrainConfig (REDUCE), which loading must never make."""

    def __reduce__(self):
        return (TrainConfig, (5,))


def test_a_plain_object_in_a_checkpoint_is_pickled_as_torch_save_pickles_it(tmp_path):
    w = shrew.arange(4.0)
    checkpoint = {"model": {"w": w}, "config": TrainConfig(3, "x", w[1:]), "step": 9}
    shrew.save(checkpoint, tmp_path / "ckpt.pt")
    with zipfile.ZipFile(tmp_path / "ckpt.pt") as zf:
        pickled = zf.read("ckpt/data.pkl")
    ops = [op.name for op, _, _ in pickletools.genops(pickled)]
    assert "NEWOBJ" in ops and "REDUCE" in ops  # the object's form, the tensors' form
    theirs = torch.load(tmp_path / "ckpt.pt", weights_only=False)
    assert (theirs["config"].n_layer, theirs["config"].name) == (3, "x")
    assert theirs["config"].scale.tolist() == [1.0, 2.0, 3.0]
    assert theirs["config"].scale.untyped_storage().data_ptr() == \
        theirs["model"]["w"].untyped_storage().data_ptr()  # still a view of w
    with pytest.raises(pickle.UnpicklingError):  # torch's weights_only needs it allowed
        torch.load(tmp_path / "ckpt.pt", weights_only=True)
    with torch.serialization.safe_globals([TrainConfig]):
        assert torch.load(tmp_path / "ckpt.pt", weights_only=True)["config"].n_layer == 3
    with pytest.raises(shrew.ShrewError, match="add_safe_globals") as info:
        shrew.load(tmp_path / "ckpt.pt")  # shrew's too
    assert isinstance(info.value, pickle.UnpicklingError)
    with shrew.serialization.safe_globals([TrainConfig]):
        ours = shrew.load(tmp_path / "ckpt.pt")
        torch.save({"config": TrainConfig(4, "y"), "t": torch.ones(2)}, tmp_path / "t.pt")
        from_torch = shrew.load(tmp_path / "t.pt")
    assert ours["config"] == TrainConfig(3, "x", ours["config"].scale) and ours["step"] == 9
    assert isinstance(ours["config"].scale, shrew.Tensor)
    assert ours["config"].scale.tolist() == [1.0, 2.0, 3.0]
    assert from_torch["config"] == TrainConfig(4, "y") and from_torch["t"].tolist() == [1, 1]


def test_an_allowed_class_is_never_called_by_a_file(tmp_path):
    torch.save({"x": CalledOnLoad()}, tmp_path / "call.pt")  # GLOBAL TrainConfig, REDUCE
    with shrew.serialization.safe_globals([TrainConfig]):
        with pytest.raises(shrew.ShrewError, match="calls a type"):
            shrew.load(tmp_path / "call.pt")
    with pytest.raises(shrew.ShrewError, match="cannot write the CalledOnLoad"):
        shrew.save({"x": CalledOnLoad()}, tmp_path / "mine.pt")
