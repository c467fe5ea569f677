"""Sparse COO tensors agree with PyTorch's: construction, coalescing, the dense <-> sparse
conversions, torch.sparse's products, sums and softmaxes, their gradients (for the
values, for a sparse leaf, for the dense operand), errors for dense-only operations, and a
graph-convolution network trained a few steps from PyTorch's weights; on cpu and OpenCL."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import shrew
from shrew import nn
from shrew.nn import functional as F
from shrew.testing import gradcheck
from tests.support import device_or_fail

torch = pytest.importorskip("torch")
warnings.filterwarnings("ignore", message="Sparse invariant checks")

DEVICES = ["cpu", "opencl"]


def coo(rng, size, nnz, dense=(), duplicates=True):
    """Random coordinates (repeated ones included) and float64 values."""
    indices = np.stack([rng.integers(0, n, nnz) for n in size])
    if duplicates and nnz > 1:
        indices[:, -1] = indices[:, 0]
    return indices, rng.standard_normal((nnz, *dense))


def both(indices, values, size, device, grad=False):
    """The same sparse tensor in shrew and torch; with grad, built from values that
    require grad (so the values' gradients can be compared)."""
    dev = device_or_fail(device)
    v = shrew.tensor(values, device=dev, requires_grad=grad)
    tv = torch.tensor(values, requires_grad=grad)
    s = shrew.sparse_coo_tensor(shrew.tensor(indices, device=dev), v, size)
    t = torch.sparse_coo_tensor(torch.tensor(indices), tv, size)
    return s, t, v, tv


def close(ours, theirs, tol=1e-10):
    if isinstance(theirs, torch.Tensor) and theirs.layout == torch.sparse_coo:
        assert ours.layout is shrew.sparse_coo
        ours, theirs = ours.to_dense(), theirs.to_dense()
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)


# -- construction and conversions ----------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_construction_attributes_and_to_dense(device):
    rng = np.random.default_rng(0)
    indices, values = coo(rng, (4, 5), 6)
    s, t, _, _ = both(indices, values, (4, 5), device)
    assert s.is_sparse and s.layout is shrew.sparse_coo and repr(s.layout) == "shrew.sparse_coo"
    assert not shrew.zeros(1).is_sparse and shrew.zeros(1).layout is shrew.strided
    assert (s.shape, s.ndim, s.dim(), s._nnz(), s.sparse_dim(), s.dense_dim()) == \
        (shrew.Size([4, 5]), 2, 2, 6, 2, 0)
    assert s.is_coalesced() == t.is_coalesced() is False
    assert s.dtype == shrew.float64 and s.device == device_or_fail(device)
    close(s.to_dense(), t.to_dense())
    np.testing.assert_array_equal(s._indices().numpy(), t._indices().numpy())
    # size inferred from the largest index, dtype and requires_grad as PyTorch
    inferred = shrew.sparse_coo_tensor([[0, 2], [1, 3]], [1.0, 2.0])
    assert inferred.shape == (3, 4) and inferred.dtype == shrew.float32
    leaf = shrew.sparse_coo_tensor([[0], [1]], [1], (2, 2), dtype=shrew.float64,
                                   requires_grad=True)
    assert leaf.requires_grad and leaf.is_leaf and leaf.dtype == shrew.float64


@pytest.mark.parametrize("device", DEVICES)
def test_hybrid_coalesce_and_indices(device):
    rng = np.random.default_rng(1)
    indices, values = coo(rng, (3, 4), 7, dense=(2,))
    s, t, _, _ = both(indices, values, (3, 4, 2), device)
    assert (s.sparse_dim(), s.dense_dim()) == (2, 1)
    close(s.to_dense(), t.to_dense())
    c, tc = s.coalesce(), t.coalesce()
    assert c.is_coalesced() and c._nnz() == tc._nnz()
    np.testing.assert_array_equal(c.indices().numpy(), tc.indices().numpy())
    np.testing.assert_allclose(c.values().numpy(), tc.values().numpy(), rtol=1e-12)
    with pytest.raises(shrew.ShrewError, match="uncoalesced"):
        s.indices()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("sparse_dim", [None, 1, 2])
def test_to_sparse_matches_torch_with_gradient(device, sparse_dim):
    dev = device_or_fail(device)
    data = np.random.default_rng(2).standard_normal((3, 4, 2))
    data[np.abs(data) < 0.6] = 0.0
    data[1] = 0.0
    x, tx = shrew.tensor(data, device=dev, requires_grad=True), torch.tensor(data,
                                                                             requires_grad=True)
    s = x.to_sparse(sparse_dim) if sparse_dim else x.to_sparse()
    t = tx.to_sparse(sparse_dim) if sparse_dim else tx.to_sparse()
    assert s.is_coalesced() and t.is_coalesced() and s._nnz() == t._nnz()
    np.testing.assert_array_equal(s.indices().numpy(), t.indices().numpy())
    close(s.values(), t.values())
    w = np.random.default_rng(3).standard_normal(data.shape)
    (s.to_dense() * shrew.tensor(w, device=dev)).sum().backward()
    (t.to_dense() * torch.tensor(w)).sum().backward()
    close(x.grad, tx.grad)


def test_construction_errors():
    with pytest.raises(shrew.ShrewIndexError, match="index 5 of sparse dim 1 is out of range"):
        shrew.sparse_coo_tensor([[0, 1], [0, 5]], [1.0, 2.0], (2, 3))
    with pytest.raises(shrew.ShapeError, match="one row per index column"):
        shrew.sparse_coo_tensor([[0, 1], [0, 1]], [1.0, 2.0, 3.0], (2, 3))
    with pytest.raises(shrew.ShapeError, match="does not fit 2 sparse dims"):
        shrew.sparse_coo_tensor([[0, 1], [0, 1]], [1.0, 2.0], (2, 3, 4))
    with pytest.raises(shrew.DTypeError, match="indices must be an integer tensor"):
        shrew.sparse_coo_tensor(shrew.tensor([[0.0], [1.0]]), [1.0], (2, 2))


# -- products ------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["sparse.mm", "mm", "matmul", "spmm", "@"])
def test_products_values_and_gradients(device, name):
    rng = np.random.default_rng(4)
    indices, values = coo(rng, (5, 4), 9)
    s, t, v, tv = both(indices, values, (5, 4), device, grad=True)
    d = rng.standard_normal((4, 3))
    dev = device_or_fail(device)
    dx, tdx = shrew.tensor(d, device=dev, requires_grad=True), torch.tensor(d,
                                                                            requires_grad=True)
    ours = {"sparse.mm": shrew.sparse.mm, "mm": shrew.mm, "matmul": shrew.matmul,
            "spmm": shrew.spmm, "@": lambda a, b: a @ b}[name]
    theirs = {"sparse.mm": torch.sparse.mm, "mm": torch.mm, "matmul": torch.matmul,
              "spmm": torch.spmm, "@": lambda a, b: a @ b}[name]
    out, ref = ours(s, dx), theirs(t, tdx)
    close(out, ref)
    w = rng.standard_normal(ref.shape)
    (out * shrew.tensor(w, device=dev)).sum().backward()
    (ref * torch.tensor(w)).sum().backward()
    close(dx.grad, tdx.grad)
    close(v.grad, tv.grad)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("coalesced", [False, True])
def test_sparse_leaf_gradient_is_sparse_on_its_pattern(device, coalesced):
    rng = np.random.default_rng(5)
    indices, values = coo(rng, (4, 6), 8)
    dev = device_or_fail(device)
    s = shrew.sparse_coo_tensor(shrew.tensor(indices, device=dev), values, (4, 6),
                                requires_grad=True, device=dev)
    t = torch.sparse_coo_tensor(torch.tensor(indices), values, (4, 6), requires_grad=True)
    if coalesced:
        s, t = s.detach().coalesce().requires_grad_(), t.detach().coalesce().requires_grad_()
    d = rng.standard_normal((6, 2))
    (shrew.sparse.mm(s, shrew.tensor(d, device=dev)) ** 2).sum().backward()
    (torch.sparse.mm(t, torch.tensor(d)) ** 2).sum().backward()
    g, tg = s.grad, t.grad
    assert g.layout is shrew.sparse_coo and g.is_coalesced()
    np.testing.assert_array_equal(g.indices().numpy(), tg.coalesce().indices().numpy())
    close(g.values(), tg.coalesce().values())


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 6), m=st.integers(1, 6), p=st.integers(1, 4), nnz=st.integers(0, 12),
       seed=st.integers(0, 2**16))
def test_sparse_mm_hypothesis(n, m, p, nnz, seed):
    rng = np.random.default_rng(seed)
    indices, values = coo(rng, (n, m), nnz)
    s, t, v, tv = both(indices, values, (n, m), "cpu", grad=True)
    d = rng.standard_normal((m, p))
    dx, tdx = shrew.tensor(d, requires_grad=True), torch.tensor(d, requires_grad=True)
    out, ref = shrew.sparse.mm(s, dx), torch.sparse.mm(t, tdx)
    close(out, ref)
    w = rng.standard_normal((n, p))
    (out * shrew.tensor(w)).sum().backward()
    (ref * torch.tensor(w)).sum().backward()
    close(dx.grad, tdx.grad)
    if nnz:
        close(v.grad, tv.grad)


def test_sparse_mm_gradcheck():
    rng = np.random.default_rng(6)
    indices, values = coo(rng, (3, 4), 5)
    v = shrew.tensor(values, requires_grad=True)
    d = shrew.tensor(rng.standard_normal((4, 2)), requires_grad=True)
    assert gradcheck(lambda a, b: shrew.sparse.mm(shrew.sparse_coo_tensor(indices, a, (3, 4)),
                                                  b), [v, d])


@pytest.mark.parametrize("device", DEVICES)
def test_addmm_vector_and_dense_left(device):
    rng = np.random.default_rng(7)
    indices, values = coo(rng, (3, 4), 5)
    s, t, v, tv = both(indices, values, (3, 4), device, grad=True)
    dev = device_or_fail(device)
    m, d = rng.standard_normal((3, 2)), rng.standard_normal((4, 2))
    close(shrew.sparse.addmm(shrew.tensor(m, device=dev), s, shrew.tensor(d, device=dev),
                             beta=2.0, alpha=-0.5),
          torch.sparse.addmm(torch.tensor(m), t, torch.tensor(d), beta=2.0, alpha=-0.5))
    close(shrew.addmm(shrew.tensor(m, device=dev), s, shrew.tensor(d, device=dev)),
          torch.addmm(torch.tensor(m), t, torch.tensor(d)))
    vec = rng.standard_normal(4)
    close(s @ shrew.tensor(vec, device=dev), t @ torch.tensor(vec))
    left = rng.standard_normal((2, 3))
    out, ref = shrew.tensor(left, device=dev) @ s, torch.tensor(left) @ t
    close(out, ref)
    out.sum().backward()
    ref.sum().backward()
    close(v.grad, tv.grad)


# -- elementwise, shape, sums, softmax -----------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_arithmetic_and_transpose(device):
    rng = np.random.default_rng(8)
    i1, v1 = coo(rng, (3, 4), 5)
    i2, v2 = coo(rng, (3, 4), 4)
    a, ta, va, tva = both(i1, v1, (3, 4), device, grad=True)
    b, tb, _, _ = both(i2, v2, (3, 4), device)
    dev = device_or_fail(device)
    dense = rng.standard_normal((3, 4))
    results = [(a * 2.5, ta * 2.5), (3 * a, 3 * ta), (a / 4, ta / 4), (-a, -ta),
               (a + b, ta + tb), (a - b, ta - tb), (a.t(), ta.t()),
               (a.transpose(0, 1), ta.transpose(0, 1)),
               (a * shrew.tensor(dense, device=dev), ta * torch.tensor(dense)),
               (shrew.tensor(dense, device=dev) + a, torch.tensor(dense) + ta)]
    for ours, theirs in results:
        assert (ours.layout is shrew.sparse_coo) == (theirs.layout == torch.sparse_coo)
        close(ours, theirs)
    ca, cb = a.detach().coalesce(), b.detach().coalesce()
    assert (ca + cb).is_coalesced() and (ca * 2).is_coalesced()
    total = sum((o.to_dense() if o.layout is shrew.sparse_coo else o).sum()
                for o, _ in results)
    ref_total = sum((r.to_dense() if r.layout == torch.sparse_coo else r).sum()
                    for _, r in results)
    total.backward()
    ref_total.backward()
    close(va.grad, tva.grad)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dim", [None, 0, 1, 2, (0, 1), (1, 2), (0, 2)])
def test_sparse_sum_matches_torch(device, dim):
    rng = np.random.default_rng(9)
    indices, values = coo(rng, (3, 4), 7, dense=(2,))
    s, t, v, tv = both(indices, values, (3, 4, 2), device, grad=True)
    out = shrew.sparse.sum(s) if dim is None else shrew.sparse.sum(s, dim)
    ref = torch.sparse.sum(t) if dim is None else torch.sparse.sum(t, dim)
    assert (out.layout is shrew.sparse_coo) == (ref.layout == torch.sparse_coo)
    close(out, ref)
    dense_out = out.to_dense() if out.layout is shrew.sparse_coo else out
    dense_ref = ref.to_dense() if ref.layout == torch.sparse_coo else ref
    (dense_out ** 2).sum().backward()
    (dense_ref ** 2).sum().backward()
    close(v.grad, tv.grad)
    if dim is None:
        close(s.sum(), t.sum())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_sparse_softmax_matches_torch(device, fn, dim):
    rng = np.random.default_rng(10)
    indices, values = coo(rng, (4, 5), 9, dense=(3,), duplicates=False)
    s, t, v, tv = both(indices, values, (4, 5, 3), device, grad=True)
    out, ref = getattr(shrew.sparse, fn)(s, dim), getattr(torch.sparse, fn)(t, dim)
    np.testing.assert_array_equal(out.indices().numpy(), ref.coalesce().indices().numpy())
    close(out.values(), ref.coalesce().values())
    w = rng.standard_normal(tuple(ref.coalesce().values().shape))
    (out.values() * shrew.tensor(w, device=device_or_fail(device))).sum().backward()
    # torch 2.13's backward takes a negative dense dim wrongly (its forward is right):
    # the reference gradient is that of the same dim counted from the front
    ref = getattr(torch.sparse, fn)(t, dim % 3)
    (ref.coalesce().values() * torch.tensor(w)).sum().backward()
    close(v.grad, tv.grad, tol=1e-9)


# -- errors: dense-only operations say so --------------------------------------------------
def test_dense_only_operations_raise_unsupported():
    s = shrew.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2))
    calls = {"exp": lambda: s.exp(), "exp ": lambda: shrew.exp(s),
             "relu": lambda: F.relu(s), "cumsum": lambda: shrew.cumsum(s, 0),
             "mean": lambda: shrew.mean(s), "conv2d": lambda: F.conv2d(s, s),
             "add of a sparse tensor and a dense": lambda: s + shrew.ones(2, 2),
             "mm of two sparse": lambda: s @ s, "bmm": lambda: shrew.bmm(s, s),
             "linear": lambda: F.linear(s, shrew.ones(2, 2)), "view": lambda: s.view(4)}
    for name, call in calls.items():
        with pytest.raises(shrew.UnsupportedError, match=name.strip()) as info:
            call()
        assert "sparse" in str(info.value) and isinstance(info.value, NotImplementedError)
    # what PyTorch computes on a sparse tensor, shrew does too
    close(shrew.sum(s), torch.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2)).sum())
    assert shrew.softmax(s, 1).layout is shrew.sparse_coo
    with pytest.raises(shrew.ShapeError, match="inner dimensions differ"):
        shrew.sparse.mm(s, shrew.ones(3, 2))
    with pytest.raises(shrew.DTypeError, match="share a dtype"):
        shrew.sparse.mm(s, shrew.ones(2, 2, dtype=shrew.float64))


# -- a graph-convolution network -----------------------------------------------------------
def normalised_adjacency(n, edges, rng):
    """D^-1/2 (A + I) D^-1/2 of a random undirected graph, as COO parts."""
    a = np.zeros((n, n))
    src, dst = rng.integers(0, n, edges), rng.integers(0, n, edges)
    a[src, dst] = a[dst, src] = 1.0
    a += np.eye(n)
    a = np.minimum(a, 1.0)
    scale = 1.0 / np.sqrt(a.sum(1))
    a = a * scale[:, None] * scale[None, :]
    rows, cols = np.nonzero(a)
    return np.stack([rows, cols]), a[rows, cols]


def gcn(lib, sizes):
    class GCN(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin1 = lib.nn.Linear(sizes[0], sizes[1])
            self.lin2 = lib.nn.Linear(sizes[1], sizes[2])

        def forward(self, adj, x):
            h = lib.relu(lib.sparse.mm(adj, self.lin1(x)))
            return lib.sparse.mm(adj, self.lin2(h))
    return GCN()


@pytest.mark.parametrize("device", DEVICES)
def test_gcn_trains_like_torch(device):
    dev = device_or_fail(device)
    rng = np.random.default_rng(11)
    n, sizes = 30, (8, 16, 4)
    indices, values = normalised_adjacency(n, 60, rng)
    features, labels = rng.standard_normal((n, sizes[0])), rng.integers(0, sizes[2], n)
    torch.manual_seed(0)
    ref = gcn(torch, sizes).double()
    ours = gcn(shrew, sizes).double()
    ours.load_state_dict({k: shrew.tensor(v.detach().numpy()) for k, v in
                          ref.state_dict().items()})
    ours.to(dev)
    adj = shrew.sparse_coo_tensor(indices, values, (n, n), device=dev)
    tadj = torch.sparse_coo_tensor(torch.tensor(indices), torch.tensor(values), (n, n))
    x, y = shrew.tensor(features, device=dev), shrew.tensor(labels, device=dev)
    tx, ty = torch.tensor(features), torch.tensor(labels)
    opt = shrew.optim.Adam(ours.parameters(), lr=0.05)
    topt = torch.optim.Adam(ref.parameters(), lr=0.05)
    losses, ref_losses = [], []
    for _ in range(5):
        opt.zero_grad()
        topt.zero_grad()
        loss = F.cross_entropy(ours(adj, x), y)
        ref_loss = torch.nn.functional.cross_entropy(ref(tadj, tx), ty)
        loss.backward()
        ref_loss.backward()
        opt.step()
        topt.step()
        losses.append(loss.item())
        ref_losses.append(ref_loss.item())
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-9)
    assert losses[-1] < losses[0]
    for (name, p), (_, q) in zip(ours.named_parameters(), ref.named_parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-8,
                                   atol=1e-10, err_msg=name)


def test_gcn_module_runs_in_float32():
    n = 6
    indices, values = normalised_adjacency(n, 8, np.random.default_rng(12))
    adj = shrew.sparse_coo_tensor(indices, values.astype(np.float32), (n, n))
    model = gcn(shrew, (3, 5, 2))
    out = model(adj, shrew.randn(n, 3))
    assert out.shape == (n, 2) and out.dtype == shrew.float32
    assert isinstance(model, nn.Module)
