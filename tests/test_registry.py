"""The device registry: devices(), register_backend, "name:N", entry points, and a
third-party backend defined outside the package running a training step."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

import shrew
import third_party_backend
from shrew.backends.base import PRIMITIVES, Backend
from shrew.backends.registry import get_backend


@pytest.fixture
def toy(isolated_registry):
    shrew.register_backend("toy", third_party_backend.factory)
    return "toy"


def test_devices_lists_cpu_first():
    devs = shrew.devices()
    assert devs[0] == "cpu"
    assert all(isinstance(d, str) for d in devs)
    for d in devs:
        assert d == "cpu" or ":" in d


def test_registered_backend_appears_in_devices_with_its_indices(toy):
    devs = shrew.devices()
    assert "toy:0" in devs and "toy:1" in devs and "toy" not in devs


def test_name_and_index_strings(toy):
    a = shrew.ones(2, device="toy")
    b = shrew.ones(2, device="toy:0")
    c = shrew.ones(2, device="toy:1")
    assert a.device == b.device == "toy:0" and c.device == "toy:1"
    assert get_backend("toy") is get_backend("toy:0") is not get_backend("toy:1")
    assert get_backend("cpu:0") is get_backend("cpu")
    with pytest.raises(shrew.DeviceError, match="different devices"):
        a + c


def test_register_backend_validates_its_arguments(isolated_registry):
    with pytest.raises(shrew.DeviceError, match="identifier"):
        shrew.register_backend("bad name", third_party_backend.factory)
    with pytest.raises(shrew.DeviceError, match="identifier"):
        shrew.register_backend("toy:1", third_party_backend.factory)
    with pytest.raises(shrew.DeviceError, match="callable"):
        shrew.register_backend("toy", object())


def test_a_factory_that_fails_gives_a_device_error(isolated_registry):
    def factory(index=0):
        raise RuntimeError("no such hardware")

    shrew.register_backend("flaky", factory)
    with pytest.raises(shrew.DeviceError, match="'flaky' is not usable: no such hardware"):
        shrew.zeros(1, device="flaky")


def test_re_registering_replaces_the_cached_instance(isolated_registry):
    shrew.register_backend("toy", third_party_backend.factory)
    first = get_backend("toy")
    shrew.register_backend("toy", third_party_backend.factory)
    assert get_backend("toy") is not first


def test_a_backend_created_after_manual_seed_is_seeded(isolated_registry):
    shrew.manual_seed(11)
    shrew.register_backend("toy", third_party_backend.factory)
    got = shrew.rand(5, device="toy").numpy()
    reference = third_party_backend.factory(0)
    reference.manual_seed(11)
    expect = reference.to_numpy(reference.rand((5,), np.dtype("float32")))
    np.testing.assert_array_equal(got, expect)
    shrew.manual_seed(11)
    np.testing.assert_array_equal(shrew.rand(5, device="toy").numpy(), got)


def _write_dist(tmp_path, name, entry_points):
    dist = tmp_path / f"{name}-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(textwrap.dedent(entry_points))


def test_entry_point_group_registers_backends(isolated_registry, tmp_path, monkeypatch):
    _write_dist(tmp_path, "shrew_toy_plugin", """\
        [shrew.backends]
        toy = third_party_backend:factory
        brokenplugin = third_party_backend:does_not_exist
        cpu = third_party_backend:factory
        """)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(isolated_registry, "_entry_points_loaded", False)
    devs = shrew.devices()
    assert "toy:0" in devs and "toy:1" in devs
    assert not any(d.startswith("brokenplugin") for d in devs)
    assert shrew.ones(2, device="toy:1").device == "toy:1"
    # an entry point never replaces a backend registered in code
    assert type(get_backend("cpu")).__name__ == "CPUBackend"
    with pytest.raises(shrew.DeviceError, match="brokenplugin.*entry point failed to load"):
        shrew.ones(1, device="brokenplugin")


def test_the_third_party_backend_implements_the_protocol():
    backend = third_party_backend.factory(0)
    assert isinstance(backend, Backend)
    missing = [p for p in PRIMITIVES if not callable(getattr(backend, p, None))]
    assert not missing


def test_ops_run_on_the_third_party_backend(toy):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 2))
    x, y = shrew.tensor(a, device=toy), shrew.tensor(b, device=toy)
    backend = get_backend(toy)
    before = backend.calls
    out = (x @ y).tanh().sum(-1)
    assert out.device == "toy:0" and backend.calls > before
    np.testing.assert_allclose(out.numpy(), np.tanh(a @ b).sum(-1), rtol=1e-12)
    img = rng.standard_normal((1, 2, 5, 5))
    w = rng.standard_normal((3, 2, 3, 3))
    conv = shrew.conv2d(shrew.tensor(img, device=toy), shrew.tensor(w, device=toy), 1, 1)
    ref = shrew.conv2d(shrew.tensor(img), shrew.tensor(w), 1, 1)
    np.testing.assert_allclose(conv.numpy(), ref.numpy(), rtol=1e-12)
    assert (x > 0).dtype is shrew.bool and x.argmax(-1).device == "toy:0"
    with pytest.raises(shrew.DTypeError, match="toy:0 does not support shrew.float16"):
        shrew.ones(2, dtype=shrew.float16, device=toy)
    with pytest.raises(shrew.DTypeError, match="int32"):
        x.to_dtype(shrew.int32)


def test_gradients_on_the_third_party_backend_match_cpu(toy):
    rng = np.random.default_rng(1)
    a, w = rng.standard_normal((1, 2, 5, 5)), rng.standard_normal((3, 2, 2, 2))
    grads = {}
    for dev in ("cpu", toy):
        x = shrew.tensor(a, device=dev, requires_grad=True)
        k = shrew.tensor(w, device=dev, requires_grad=True)
        h = shrew.max_pool2d(shrew.conv2d(x, k, 1, 1), 2).gelu()
        loss = (shrew.avg_pool2d(h, 1).sum() + x.gather(3, shrew.tensor(
            np.zeros((1, 2, 5, 1), dtype=np.int64), device=dev)).square().sum())
        store = loss.backward()
        assert store[x].device == x.device
        grads[dev] = (store[x].numpy(), store[k].numpy())
    for got, expect in zip(grads[toy], grads["cpu"]):
        np.testing.assert_allclose(got, expect, rtol=1e-10, atol=1e-12)


def test_training_step_on_the_third_party_backend(toy):
    """A tiny linear regression with manual SGD, entirely on the toy device."""
    shrew.manual_seed(0)
    rng = np.random.default_rng(0)
    true_w, true_b = np.array([[2.0], [-3.0], [0.5]]), 0.7
    xs = rng.standard_normal((32, 3))
    ys = xs @ true_w + true_b
    x = shrew.tensor(xs, dtype=shrew.float32, device=toy)
    y = shrew.tensor(ys, dtype=shrew.float32, device=toy)
    w = shrew.randn(3, 1, device=toy, requires_grad=True)
    b = shrew.zeros(1, device=toy, requires_grad=True)
    losses = []
    for _ in range(50):
        loss = ((x @ w + b - y) ** 2.0).mean()
        grads = loss.backward()
        losses.append(loss.item())
        assert grads[w].device == "toy:0"
        with shrew.no_grad():
            w = (w - grads[w] * 0.1).detach().requires_grad_()
            b = (b - grads[b] * 0.1).detach().requires_grad_()
    assert losses[-1] < losses[0] * 1e-3
    assert all(later <= earlier for earlier, later in zip(losses, losses[1:]))
    np.testing.assert_allclose(w.numpy(), true_w, atol=0.05)
    assert w.device == "toy:0"
