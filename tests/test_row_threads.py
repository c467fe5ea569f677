"""cpu/row_threads.py: a large log-softmax on blocks of lines, one per thread, gives the
one-thread numpy path's bits; a block's error reaches the caller; a forked child (a
DataLoader worker) gets threads of its own rather than waiting on its parent's."""
from __future__ import annotations

import multiprocessing

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shrew.backends.array_module import ArrayModuleBackend
from shrew.backends.cpu import CPUBackend, row_threads
from support import seeds


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 64 elements, so that small inputs split too."""
    monkeypatch.setattr(row_threads, "ROW_BLOCK_MIN_SIZE", 64)
    monkeypatch.setattr(row_threads, "_threads", lambda: 3)
    import shrew.backends.cpu.backend as cpu_backend
    monkeypatch.setattr(cpu_backend, "ROW_BLOCK_MIN_SIZE", 64)


@pytest.mark.filterwarnings("ignore:invalid value")  # a line of one -inf: -inf - -inf
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # (set once, never reset)
@given(shape=st.lists(st.integers(1, 9), min_size=2, max_size=4), data=st.data(), seed=seeds,
       dtype=st.sampled_from([np.float32, np.float64]))
def test_log_softmax_in_blocks_has_the_one_thread_bits(small_blocks, shape, data, seed, dtype):
    dim = data.draw(st.integers(1, len(shape) - 1)) * data.draw(st.sampled_from([1, -1]))
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 30).astype(dtype)
    x.flat[rng.integers(0, x.size, 2)] = [np.nan, -np.inf]
    be = CPUBackend()
    got = be.softmax(x, dim, True)
    want = ArrayModuleBackend.softmax(be, x, dim, True)
    assert got.dtype == x.dtype and got.shape == x.shape
    np.testing.assert_array_equal(got.view(f"i{x.itemsize}"), want.view(f"i{x.itemsize}"))
    finite = np.isfinite(x).all(axis=dim, keepdims=True) & np.ones_like(x, bool)
    expect = torch.log_softmax(torch.from_numpy(x), dim).numpy()
    np.testing.assert_allclose(got[finite], expect[finite], rtol=1e-5, atol=1e-5)


def test_a_language_models_log_softmax_runs_in_blocks(monkeypatch):
    calls = []
    real = CPUBackend.log_softmax_into
    monkeypatch.setattr(CPUBackend, "log_softmax_into",
                        lambda self, x, dim, out: calls.append(x.shape) or real(self, x, dim, out))
    monkeypatch.setattr(row_threads, "_threads", lambda: 2)
    x = np.random.default_rng(0).standard_normal((700, 2000)).astype(np.float32)
    CPUBackend().softmax(x, 1, True)
    assert sorted(calls) == [(350, 2000), (350, 2000)]


def test_an_error_in_a_block_reaches_the_caller(small_blocks):
    def fail(x, out):
        if x.shape[0] < 10:
            raise ValueError("block failed")
        out[...] = x
    with pytest.raises(ValueError, match="block failed"):
        row_threads.run(fail, np.zeros((20, 16)), np.empty((20, 16)))


def _child(queue):
    x = np.arange(40 * 16, dtype=np.float32).reshape(40, 16)
    out = np.empty_like(x)
    row_threads.run(lambda a, b: np.copyto(b, a), x, out)
    queue.put(bool((out == x).all()))


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork")
def test_a_forked_child_makes_its_own_threads(small_blocks):
    x = np.zeros((40, 16))
    row_threads.run(lambda a, b: np.copyto(b, a), x, np.empty_like(x))  # the parent's pool
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_child, args=(queue,))
    child.start()
    child.join(timeout=60)
    assert child.exitcode == 0 and queue.get(timeout=5)
