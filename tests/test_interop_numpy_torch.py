"""The boundary with numpy and PyTorch, each case checked against torch itself: .numpy()
shares memory, 0-d and computed tensors convert, numpy's ufuncs and operators give what
torch's give, other frameworks' tensors convert without a copy (as_tensor, asarray, the
DataLoader's collate), and errors name both types fully."""
import warnings

import numpy as np
import pytest
import torch

import shrew
from shrew import nn
from shrew.core.errors import type_name
from shrew.utils.data import DataLoader, Dataset

warnings.filterwarnings("ignore", message="__array_wrap__", category=DeprecationWarning)


def both(values, **kw):
    return shrew.tensor(values, **kw), torch.tensor(values, **kw)


# -- .numpy() shares memory ------------------------------------------------------------------
@pytest.mark.parametrize("view", [lambda t: t, lambda t: t.transpose(0, 1), lambda t: t[1:, 1:]])
def test_numpy_shares_memory_both_ways_as_torch(view):
    s, t = shrew.arange(12.0).reshape(3, 4), torch.arange(12.0).reshape(3, 4)
    sa, ta = view(s).numpy(), view(t).numpy()
    assert sa.shape == ta.shape and sa.strides == ta.strides
    assert sa.flags.c_contiguous == ta.flags.c_contiguous
    sa[0, 0] = ta[0, 0] = 100.0               # the array writes into the tensor
    s.mul_(2)
    t.mul_(2)                                  # and the tensor into the array
    np.testing.assert_array_equal(s.numpy(), t.numpy())
    np.testing.assert_array_equal(sa, ta)


def test_numpy_gives_a_new_array_object_each_time():
    s = shrew.zeros(2, 3)
    a = s.numpy()
    a.shape = (6,)                             # reshaping the array leaves the tensor alone
    assert s.shape == (2, 3) and s.numpy() is not a


def test_numpy_reads_a_tensor_that_requires_grad_where_torch_refuses():
    """A documented difference (docs/porting.md): PyTorch refuses and asks for
    t.detach().numpy(); shrew reads the values (sharing memory), and detach() works too."""
    s, t = both([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError):
        t.numpy()
    for call in (s.numpy, lambda: np.asarray(s), lambda: np.array(s)):
        np.testing.assert_array_equal(call(), t.detach().numpy())
    np.testing.assert_array_equal(np.exp(s).detach().numpy(), np.exp(t.detach().numpy()))
    assert np.shares_memory(s.numpy(), s.detach().numpy())
    forced, torch_forced = s.numpy(force=True), t.numpy(force=True)
    forced[0] = torch_forced[0] = 5.0         # force=True still shares, as torch's
    assert s.tolist() == t.tolist() == [5.0, 2.0]
    # shrew's own reads still work on such tensors, as torch's do
    assert s.tolist() == [5.0, 2.0] and float(s[1]) == 2.0 and "5." in repr(s)
    assert shrew.tensor([s[0], s[1]]).tolist() == [5.0, 2.0]


# -- 0-d and computed tensors convert ------------------------------------------------------
def test_computed_0d_tensors_convert_everywhere():
    x = shrew.tensor([1.0, 2.0, 3.0], requires_grad=True)
    losses = [((x * k) ** 2).sum() for k in (1.0, 2.0)]
    assert all(type(loss._data) is not np.ndarray or loss.ndim == 0 for loss in losses)
    loss = losses[0].detach()
    for got in (np.asarray(loss), np.array(loss)):
        assert type(got) is np.ndarray and got.shape == () and got == 14.0
    assert float(losses[0]) == 14.0 and losses[0].item() == 14.0
    assert torch.tensor(loss).item() == 14.0 and torch.tensor(losses[0]).item() == 14.0
    shared = torch.from_dlpack(loss)
    assert shared.shape == () and shared.item() == 14.0
    np.testing.assert_array_equal(np.asarray([lo.detach() for lo in losses]), [14.0, 56.0])
    assert shrew.tensor(losses).tolist() == [14.0, 56.0]  # torch.tensor([l0, l1]) too
    a = loss.numpy()
    a[()] = 1.0                                # a real 0-d array: it shares memory
    assert loss.item() == 1.0


# -- numpy's ufuncs and operators, as on torch tensors -------------------------------------
CASES = {
    "t + ndarray": lambda t: t + np.ones(3),
    "t + float32 ndarray": lambda t: t + np.ones(3, dtype=np.float32),
    "t * ndarray": lambda t: t * np.full(3, 2.0),
    "t / 0-d ndarray": lambda t: t / np.array(2.0),
    "t @ ndarray": lambda t: t @ np.ones((3, 2)),
    "t == ndarray": lambda t: t == np.ones(3),
    "np.exp(t)": np.exp,
    "np.add(t, t)": lambda t: np.add(t, t),
    "np.add(t, 1)": lambda t: np.add(t, 1),
    "np.float64(2) * t": lambda t: np.float64(2) * t,
    "np.float32(2) + t": lambda t: np.float32(2) + t,
    "np.maximum(t, 2)": lambda t: np.maximum(t, 2.0),
    "np.concatenate": lambda t: np.concatenate([t, t]),
}


@pytest.mark.parametrize("name", CASES)
def test_numpy_operations_give_what_torch_gives(name):
    s, t = shrew.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(2, 3)
    got, want = CASES[name](s), CASES[name](t)
    kind = shrew.Tensor if isinstance(want, torch.Tensor) else np.ndarray
    assert isinstance(got, kind), (name, type(got))
    got_np = got.numpy() if isinstance(got, shrew.Tensor) else got
    want_np = want.numpy() if isinstance(want, torch.Tensor) else want
    assert got_np.dtype == want_np.dtype
    np.testing.assert_allclose(got_np, want_np, rtol=1e-6)


@pytest.mark.parametrize("op", [lambda a, t: a + t, lambda a, t: a * t, lambda a, t: t > a,
                                lambda a, t: a @ t])
def test_ndarray_on_the_left_raises_typeerror_as_torch(op):
    with pytest.raises(TypeError):
        op(np.ones((3, 3)), torch.ones(3, 3))
    with pytest.raises(TypeError):
        op(np.ones((3, 3)), shrew.ones(3, 3))


def test_a_bool_ufunc_result_masks():
    s, t = both([1.0, float("nan"), 3.0])
    finite = np.isfinite(s)                    # torch gives uint8 here (docs/porting.md)
    assert isinstance(finite, shrew.Tensor) and finite.dtype is shrew.bool
    assert s[finite].tolist() == t[np.isfinite(t).bool()].tolist() == [1.0, 3.0]


# -- other frameworks' tensors and arrays in ---------------------------------------------
def test_as_tensor_and_asarray_share_memory_with_numpy_and_torch():
    for source in (np.arange(4.0), torch.arange(4.0), torch.arange(8.0)[::2]):
        s, t = shrew.as_tensor(source), torch.as_tensor(source)
        assert s.dtype.name == str(t.dtype).split(".")[1] and s.shape == tuple(t.shape)
        source[0] = 42.0
        assert s[0].item() == t[0].item() == 42.0
        a = shrew.asarray(source)
        source[1] = 7.0
        assert a[1].item() == 7.0
    for source in (np.arange(4.0), torch.arange(4.0)):
        s, t = shrew.asarray(source, copy=True), torch.asarray(source, copy=True)
        source[0] = -1.0
        assert s[0].item() == t[0].item() == 0.0


def test_as_tensor_semantics_follow_torch():
    s = shrew.ones(2, requires_grad=True)
    assert shrew.as_tensor(s) is s and shrew.asarray(s) is s
    converted = shrew.as_tensor(s, dtype=shrew.float64)
    assert converted.dtype is shrew.float64 and converted.grad_fn is not None
    copied = shrew.asarray(s, copy=True)
    assert copied is not s and copied.grad_fn is not None
    assert shrew.as_tensor(np.float64(2.0)).dtype is shrew.float64
    assert shrew.as_tensor(2.0).dtype is shrew.float32
    assert shrew.as_tensor([1, 2]).dtype is shrew.int64
    assert shrew.asarray([1.0, 2.0], requires_grad=True).requires_grad
    with pytest.raises(TypeError):
        torch.as_tensor(np.ones(2), torch.float32)   # dtype is keyword-only in torch too
    with pytest.raises(TypeError):
        shrew.as_tensor(np.ones(2), shrew.float32)
    with pytest.raises(ValueError):
        torch.asarray(np.ones(2), dtype=torch.float32, copy=False)
    with pytest.raises(shrew.ShrewValueError, match="asarray: .*copy=False"):
        shrew.asarray(np.ones(2), dtype=shrew.float32, copy=False)


def test_tensor_copies_torch_tensors_and_detaches():
    t = torch.arange(3.0, requires_grad=True)
    s = shrew.tensor(t)
    assert s.is_leaf and not s.requires_grad and s.tolist() == [0.0, 1.0, 2.0]
    with torch.no_grad():
        t[0] = 9.0
    assert s[0].item() == 0.0
    shared = shrew.as_tensor(t)                # torch's graph cannot cross: detached
    assert not shared.requires_grad and shared[0].item() == 9.0


# -- a torchvision-style dataset through shrew's DataLoader ------------------------------------
class TorchImages(Dataset):
    """What torchvision's datasets give with ToTensor(): torch tensors, int labels."""

    def __len__(self):
        return 64

    def __getitem__(self, i):
        label = i % 2
        image = torch.full((1, 4, 4), float(label)) + torch.rand(1, 4, 4,
                                                                generator=torch.Generator()
                                                                .manual_seed(i)) * 0.1
        return image, label


@pytest.mark.parametrize("workers", [0, 2])
def test_a_torch_tensor_dataset_trains_a_shrew_model(workers):
    shrew.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(16, 2))
    opt = shrew.optim.SGD(model.parameters(), lr=0.5)
    losses = []
    for _ in range(3):
        for x, y in DataLoader(TorchImages(), batch_size=16, shuffle=True,
                               num_workers=workers):
            assert isinstance(x, shrew.Tensor) and x.shape == (16, 1, 4, 4)
            assert x.dtype is shrew.float32 and y.dtype is shrew.int64
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    assert losses[-1] < losses[0] / 4


def test_default_convert_turns_torch_tensors_into_shrew_ones():
    from shrew.utils.data import default_convert
    out = default_convert({"x": torch.ones(2), "y": [torch.zeros(1)]})
    assert isinstance(out["x"], shrew.Tensor) and isinstance(out["y"][0], shrew.Tensor)


# -- errors name both types fully ------------------------------------------------------------
def test_a_torch_tensor_given_to_a_shrew_layer_is_named_fully():
    with pytest.raises(TypeError):
        torch.nn.Linear(2, 2)(np.ones((1, 2), dtype=np.float32))
    with pytest.raises(shrew.ShrewTypeError, match=r"linear: input must be a shrew\.Tensor, "
                                                   r"got torch\.Tensor; convert it with "
                                                   r"shrew\.as_tensor"):
        nn.Linear(2, 2)(torch.ones(1, 2))
    with pytest.raises(TypeError, match=r"got numpy\.ndarray; convert it"):
        nn.Linear(2, 2)(np.ones((1, 2), dtype=np.float32))


def test_type_name():
    assert [type_name(x) for x in (shrew.ones(1), torch.ones(1), np.ones(1), 1, [1],
                                   nn.Parameter(shrew.ones(1)),
                                   torch.nn.Parameter(torch.ones(1)))] == [
        "shrew.Tensor", "torch.Tensor", "numpy.ndarray", "int", "list", "shrew.nn.Parameter",
        "torch.nn.Parameter"]
