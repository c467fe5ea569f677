"""multinomial, bernoulli and poisson (ops/random.py): frequencies against the exact
probabilities (five standard deviations: a correct sampler fails about once in millions
of runs, and the draws are seeded), reproducibility, and PyTorch's errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import shrew
from tests.support import device_or_fail

P = [0.1, 0.2, 0.3, 0.4, 0.0]


def _assert_frequencies(counts, probabilities, n):
    counts, probabilities = np.asarray(counts, float), np.asarray(probabilities, float)
    sigma = np.sqrt(n * probabilities * (1 - probabilities))
    expected = n * probabilities
    assert np.all(np.abs(counts - expected) <= 5 * sigma + 1e-9), (counts, expected)


@pytest.mark.parametrize("device", ["cpu", "opencl"])
def test_multinomial_with_replacement_frequencies(device):
    device = device_or_fail(device)
    shrew.manual_seed(0)
    n = 40000
    rows = shrew.tensor([P, [2.0, 0.0, 0.0, 1.0, 1.0]], device=device)
    draws = shrew.multinomial(rows, n, replacement=True)
    assert draws.shape == (2, n) and draws.dtype is shrew.int64
    for row, want in zip(draws.numpy(), (P, [0.5, 0, 0, 0.25, 0.25])):
        _assert_frequencies(np.bincount(row, minlength=5), want, n)


def test_multinomial_without_replacement_is_sequential_sampling():
    shrew.manual_seed(1)
    rows = 20000
    p = np.array(P[:4])
    draws = shrew.tensor(np.tile(p * 3, (rows, 1))).multinomial(2).numpy()  # unnormalised
    assert draws.shape == (rows, 2)
    assert np.all(draws[:, 0] != draws[:, 1])
    pairs = np.zeros((4, 4))
    np.add.at(pairs, (draws[:, 0], draws[:, 1]), 1)
    exact = p[:, None] * p[None, :] / (1 - p[:, None])  # first i, then j among the rest
    np.fill_diagonal(exact, 0)
    _assert_frequencies(pairs.ravel(), exact.ravel(), rows)


def test_multinomial_zero_probabilities_come_last_and_shapes():
    drawn = shrew.multinomial(shrew.tensor([0.5, 0.0, 0.5]), 3).numpy()
    assert sorted(drawn[:2]) == [0, 2] and drawn[2] == 1  # as torch: [0, 2, 1] or [2, 0, 1]
    assert shrew.multinomial(shrew.tensor([1.0, 2.0]), 1).shape == (1,)
    assert (shrew.multinomial(shrew.tensor([[0.0, 1.0]]), 5, True).numpy() == 1).all()


def test_sampling_is_reproducible_from_seeds_and_generators():
    p = shrew.tensor([[0.2, 0.8, 0.5]])
    rate = shrew.tensor([0.5, 3.0, 40.0])
    runs = []
    for _ in range(2):
        shrew.manual_seed(7)
        runs.append([shrew.multinomial(p, 6, True).numpy(), shrew.multinomial(p, 3).numpy(),
                     shrew.bernoulli(shrew.full((9,), 0.5)).numpy(), shrew.poisson(rate).numpy()])
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)
    gen = [shrew.Generator().manual_seed(3) for _ in range(2)]
    np.testing.assert_array_equal(*(shrew.multinomial(p, 8, True, generator=g).numpy()
                                    for g in gen))
    np.testing.assert_array_equal(*(shrew.poisson(rate, g).numpy() for g in gen))


def test_bernoulli_frequencies_dtype_and_bounds():
    shrew.manual_seed(2)
    n = 40000
    p = shrew.tensor(np.repeat([0.0, 0.3, 1.0], n), dtype=shrew.float32)
    drawn = shrew.bernoulli(p)
    assert drawn.dtype is shrew.float32 and drawn.shape == (3 * n,)
    values = drawn.numpy().reshape(3, n)
    assert set(np.unique(values)) <= {0.0, 1.0}
    assert values[0].sum() == 0 and values[2].sum() == n
    _assert_frequencies([values[1].sum()], [0.3], n)
    fixed = shrew.zeros(n, dtype=shrew.float64).bernoulli(0.25)
    assert fixed.dtype is shrew.float64
    _assert_frequencies([fixed.numpy().sum()], [0.25], n)


def test_poisson_mean_and_variance():
    shrew.manual_seed(3)
    n = 20000
    rates = np.repeat([0.0, 2.5, 60.0], n)
    drawn = shrew.poisson(shrew.tensor(rates)).numpy().reshape(3, n)
    assert drawn.dtype == np.float32 or drawn.dtype == np.float64
    assert (drawn[0] == 0).all() and (drawn == np.round(drawn)).all()
    for row, rate in zip(drawn[1:], (2.5, 60.0)):
        assert abs(row.mean() - rate) <= 5 * np.sqrt(rate / n)
        assert abs(row.var() - rate) <= 0.1 * rate


@pytest.mark.parametrize("call", [
    lambda m: m.multinomial(m.tensor([0.2, -0.1]), 1),
    lambda m: m.multinomial(m.tensor([1.0, float("nan")]), 1),
    lambda m: m.multinomial(m.tensor([1.0, float("inf")]), 1),
    lambda m: m.multinomial(m.tensor([[0.0, 0.0]]), 1),
    lambda m: m.multinomial(m.tensor([0.5, 0.5]), 3),
    lambda m: m.multinomial(m.ones(2, 2, 2), 1),
    lambda m: m.multinomial(m.tensor([1, 2]), 1),
    lambda m: m.multinomial(m.tensor([1.0, 2.0]), 0),
    lambda m: m.bernoulli(m.tensor([2.0])),
    lambda m: m.bernoulli(m.tensor([-0.5])),
    lambda m: m.poisson(m.tensor([-1.0])),
])
def test_sampling_errors_match_torch(call):
    with pytest.raises(RuntimeError):
        call(torch)
    with pytest.raises(shrew.ShrewError, match="multinomial|bernoulli|poisson"):
        call(shrew)
