"""The same computation twice gives the same bits; the same seed the same random numbers."""
import numpy as np

import shrew

from .cases import CASES
from .harness import DEFAULT_LAYOUT, check_repeatable, over


@over("case, index", lambda t: [t.param(c, i) for c in CASES for i, s in enumerate(c.samples)
                                if t.applies(c, s)])
def test_repeatable(device, case, index):
    check_repeatable(device, case, case.samples[index], DEFAULT_LAYOUT)


def test_seeds_and_draws_differ(device):
    def draw(seed):
        if seed is not None:
            shrew.manual_seed(seed)
        return shrew.rand(1000, device=device).numpy()

    first = draw(1)
    assert not np.array_equal(first, draw(None)), "two draws in a row gave the same numbers"
    assert not np.array_equal(first, draw(2)), "seeds 1 and 2 gave the same numbers"
    assert np.array_equal(first, draw(1)), "seed 1 did not reproduce its numbers"


def test_checkpoint_replays_random_numbers(device):
    """Backward through a checkpoint re-runs rand: its gradient equals the plain one."""
    def dropout(a):
        return a * (shrew.rand(*a.shape, device=device) > 0.5)

    def grad(run):
        shrew.manual_seed(7)
        x = shrew.randn(8, 33, device=device, requires_grad=True)
        run(x).sum().backward()
        assert x.grad is not None
        return x.grad.numpy()

    plain, checkpointed = grad(dropout), grad(lambda x: shrew.checkpoint(dropout, x))
    assert plain.tobytes() == checkpointed.tobytes(), \
        "checkpoint's recomputation did not replay the random numbers"
