"""The helpers of the conformance table (cases.py): tolerance scales (how many terms each
output element sums, which widens its tolerance), value checks for random draws (which no
reference reproduces), and the calls of operations that have no Tensor method."""
from __future__ import annotations

import math

import numpy as np

import shrew
import shrew.nn.functional as Fn
from shrew.backends.registry import get_backend

from .spec import Sample


# -- tolerance scales: how many terms each output element sums -----------------------------
def reduced(sample: Sample) -> int:
    shape, dim = sample.args[0].shape, sample.kwargs.get("dim")
    if dim is None or not shape:
        return math.prod(shape)
    return math.prod(shape[d] for d in ((dim,) if isinstance(dim, int) else dim))


def normalised(sample: Sample) -> int:
    """Means and normalisations divide their sum's error by its size: sqrt of it is ample."""
    return math.isqrt(reduced(sample))


def inner(sample: Sample) -> int:
    return sample.args[0].shape[-1]


def svd_terms(sample: Sample) -> int:
    """Gradients through a float32 SVD (compared normwise): cuSOLVER's differed from the
    float64 reference by up to 1.4e-4 on 4x4 inputs whose largest gradient is 6 (measured on
    an H200), about 2.4e-5 of the whole where n terms would allow 2e-5; n^2 allows 4e-5."""
    return inner(sample) ** 2


def window(sample: Sample) -> int:
    return math.prod(sample.args[1].shape[1:])


def kernel(sample: Sample) -> int:
    k = sample.kwargs.get("k", 2)
    return k * k if isinstance(k, int) else math.prod(k)


# -- value checks for random numbers, which no reference can reproduce ---------------------
def uniform(v: np.ndarray):
    v = v.astype(np.float64)
    if not ((v >= 0) & (v < 1)).all():
        return f"values outside [0, 1): min {v.min()!r}, max {v.max()!r}"
    if abs(v.mean() - 0.5) > 6 * math.sqrt(1 / 12 / v.size):
        return f"mean {v.mean():.4f} is not 0.5 (n={v.size})"
    return None


def normal(v: np.ndarray):
    v = v.astype(np.float64)
    if abs(v.mean()) > 6 / math.sqrt(v.size) or abs(v.std() - 1) > 6 / math.sqrt(2 * v.size):
        return f"mean {v.mean():.4f}, std {v.std():.4f} are not 0 and 1 (n={v.size})"
    return None


def well_conditioned(a):
    """A batch of square matrices far from singular (the inputs are standard normal);
    anything else as it is, for the op to refuse."""
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        return a
    return a + 2 * a.shape[-1] * shrew.eye(a.shape[-1], dtype=a.dtype, device=a.device)


def distinct_spectrum(a):
    """Symmetric matrices whose eigenvalues are well apart, even where a's rows repeat
    (the "expanded" layout): eigenvectors are then unique up to sign."""
    n = a.shape[-1]
    steps = shrew.arange(1, n + 1, dtype=a.dtype, device=a.device) * (2 * n)
    return a @ a.mT + shrew.diag(steps)


def spd(a):
    """A batch of symmetric positive-definite matrices."""
    return a @ a.mT + a.shape[-1] * shrew.eye(a.shape[-1], dtype=a.dtype, device=a.device)


def all_true(v: np.ndarray):
    return None if v.all() else f"{v.size - v.sum()} of {v.size} draws differ after set_rng_state"


# -- operations without a Tensor method -----------------------------------------------------
def rng_replay(x):
    """randn, then randn again from the state saved before the first: the same numbers."""
    backend = get_backend(x.device)
    state = backend.get_rng_state()
    first = shrew.randn(*x.shape, dtype=x.dtype, device=x.device)
    backend.set_rng_state(state)
    return first == shrew.randn(*x.shape, dtype=x.dtype, device=x.device)


def copy_into(dst, src):
    """Tensor.copy_ (Backend.copy_) into a fresh copy of dst."""
    return dst.contiguous().copy_(src)


def add_into(dst, src, alpha=-0.75, itself=False):
    """Tensor.add_ (Backend.add_: optimizer steps) on a fresh copy of dst; itself: src is
    that copy."""
    out = dst.contiguous()
    return out.add_(out if itself else src, alpha=alpha)


def sdpa(q, k, v, is_causal=False, mask=False):
    """scaled_dot_product_attention; `mask`: a float mask hiding the first key from every
    other query, as an additive bias."""
    bias = None
    if mask:
        hide = shrew.zeros(q.shape[-2], k.shape[-2], dtype=q.dtype, device=q.device)
        bias = hide.index_fill(1, shrew.tensor([0], device=q.device), float("-inf"))
        bias = bias.index_fill(0, shrew.tensor([0], device=q.device), 0.0)
    return Fn.scaled_dot_product_attention(q, k, v, attn_mask=bias, is_causal=is_causal)


def checkpointed(x, w):
    return shrew.checkpoint(lambda a: (a @ w).tanh(), x)


class SinTimes(shrew.autograd.Function):
    """x * sin(x) with a hand-written backward: an O.CustomFunction on the device (the
    fuzzed graphs of tests/reliability use it too)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x.sin()

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * (x.sin() + x * x.cos())


def recurrent(x, h0, w_ih, w_hh, b_ih, b_hh, *c0, mode, sizes, reverse=False):
    """One direction of one recurrent layer over packed steps of `sizes` rows (x [R, I]),
    as nn.RNN/LSTM/GRU run it (ops/rnn.py): its outputs, h_n and an LSTM's c_n, packed."""
    from shrew.ops.rnn import recurrent as run
    if mode == "gru":
        gx = Fn.linear(x, w_ih, b_ih)
        return run(mode, gx, sizes, h0, None, w_hh, b_hh, reverse)
    gx = Fn.linear(x, w_ih, b_ih + b_hh)
    return run(mode, gx, sizes, h0, c0[0] if c0 else None, w_hh, None, reverse)


def recurrent_layer(x, h0, w_ih, w_hh, b_ih, b_hh, *c0, mode, reverse=False):
    """One direction of one recurrent layer over x [T, N, I] as nn.RNN/LSTM/GRU run it: one
    backend call where the backend has base.FastRecurrent (a RecurrentLayer node), else
    the input product and the core's loop (`recurrent`)."""
    from shrew.ops.rnn import recurrent_layer as whole
    y = whole(mode, x, h0, c0[0] if c0 else None, w_ih, w_hh, b_ih, b_hh, reverse)
    if y is None:
        steps, batch, width = x.shape
        y = recurrent(x.reshape(steps * batch, width), h0, w_ih, w_hh, b_ih, b_hh, *c0,
                      mode=mode, sizes=(batch,) * steps, reverse=reverse)
    return y
