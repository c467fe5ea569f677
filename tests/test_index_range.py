"""gather's and scatter_add's index range check on a device (docs/backend-guide.md, "Index
range checks"): an index uploaded from host data (or a view of one) is checked against
the range seen on the host, with no device read; an index computed on the device is
checked there and reported by the next read-back."""
import numpy as np
import pytest
import torch

import shrew
from shrew.ops.index import recorded as index_ops
from support import device_or_fail


@pytest.fixture
def device():
    index_ops.raise_deferred()  # nothing left over from another test
    yield device_or_fail("opencl")
    index_ops.deferred.clear()


def _no_reads(monkeypatch, dev):
    """Fail on any device-to-host read."""
    backend = shrew.backends.registry.get_backend(dev)

    def refuse(x):
        raise AssertionError("a device read")
    monkeypatch.setattr(backend, "to_numpy", refuse)


def test_uploaded_index_is_checked_without_a_device_read(device, monkeypatch):
    x = shrew.tensor(np.arange(12.0).reshape(3, 4), device=device)
    good = shrew.tensor([[0, 2, 1, 2]], device=device)
    bad = shrew.tensor([[0, 3, 1, 2]], device=device)
    _no_reads(monkeypatch, device)
    x.gather(0, good)
    x.gather(1, good.expand(3, 4))  # a view of the upload
    monkeypatch.undo()
    with pytest.raises(shrew.ArgumentError, match=r"gather: index 3 is out of range for dim 0"):
        x.gather(0, bad)  # raised at the call
    assert not index_ops.deferred


def test_view_leaving_out_the_bad_values_is_accepted(device):
    x = shrew.tensor(np.arange(12.0).reshape(3, 4), device=device)
    index = shrew.tensor([[0, 2, 1, 7]], device=device)  # 7 is out of range for dim 0
    got = x.gather(0, index.narrow(1, 0, 3))
    torch_got = torch.arange(12.0).reshape(3, 4).gather(0, torch.tensor([[0, 2, 1]]))
    np.testing.assert_array_equal(got.numpy(), torch_got.numpy())


def test_computed_index_is_reported_at_the_next_read_back(device):
    x = shrew.tensor(np.arange(12.0).reshape(3, 4), device=device)
    index = shrew.tensor([[0, 1, 1, 0]], device=device) * 2  # [[0, 2, 2, 0]], computed
    out = x.gather(0, index + 1)  # [[1, 3, 3, 1]]: 3 is out of range
    assert len(index_ops.deferred) == 1
    with pytest.raises(shrew.ArgumentError, match=r"gather: index 3 is out of range for dim 0 "
                                               r"of size 3.*read back"):
        out.numpy()
    assert not index_ops.deferred
    # The kernel read the entries out of range as 0 and touched nothing else.
    np.testing.assert_array_equal(out.numpy(), [[4.0, 0.0, 0.0, 7.0]])


def test_computed_index_in_range_matches_torch(device):
    rng = np.random.default_rng(0)
    values = rng.standard_normal((5, 6)).astype(np.float32)
    rows = rng.integers(0, 5, (4, 6))
    x = shrew.tensor(values, device=device)
    index = shrew.tensor(rows, device=device) + 0  # computed on the device
    got = x.gather(0, index).numpy()
    want = torch.tensor(values).gather(0, torch.tensor(rows)).numpy()
    np.testing.assert_array_equal(got, want)
    assert not index_ops.deferred


def test_scatter_add_with_a_computed_index_out_of_range_writes_nothing_there(device):
    src = shrew.ones(1, 4, device=device)
    index = shrew.tensor([[0, 1, 2, 1]], device=device) * 2  # [[0, 2, 4, 2]]: 4 is out
    out = shrew.scatter_add((3, 4), 0, index, src)
    with pytest.raises(shrew.ArgumentError, match="scatter_add: index 4 is out of range"):
        out.numpy()
    want = np.zeros((3, 4), np.float32)
    want[0, 0] = want[2, 1] = want[2, 3] = 1.0
    np.testing.assert_array_equal(out.numpy(), want)


def test_copy_into_an_upload_forgets_its_host_range(device):
    x = shrew.tensor(np.arange(12.0).reshape(3, 4), device=device)
    index = shrew.tensor([[0, 1, 2, 1]], device=device)
    index.copy_(shrew.tensor([[0, 1, 5, 1]]))
    out = x.gather(0, index)  # no longer known: checked on the device
    with pytest.raises(shrew.ArgumentError, match="gather: index 5 is out of range"):
        out.numpy()


def test_cross_entropy_and_embedding_raise_at_the_call(device):
    logits = shrew.zeros(3, 5, device=device)
    with pytest.raises(IndexError, match="cross_entropy: target holds a class index"):
        shrew.nn.functional.cross_entropy(logits, shrew.tensor([0, 5, 1], device=device))
    weight = shrew.zeros(4, 2, device=device)
    with pytest.raises(IndexError, match="embedding: an index is outside"):
        shrew.nn.functional.embedding(shrew.tensor([[1, -1]], device=device), weight)
    assert not index_ops.deferred
