"""shrew.einsum (ops/linalg/einsum.py) against torch.einsum: random equations (implicit and
explicit outputs, `...`, repeated subscripts, broadcasting, one to four operands) for
values and gradients, float64 finite differences, and the errors of bad equations."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import shrew
from shrew.testing import gradcheck

LETTERS = "abcdeXY"


@st.composite
def equations(draw):
    """(equation, operand shapes): operands draw their subscripts from a few letters of
    fixed sizes (some repeated within an operand: a diagonal), some sizes 1 where
    broadcasting allows it, and perhaps a `...` whose dims broadcast from the right."""
    sizes = {c: draw(st.integers(1, 3)) for c in LETTERS}
    n = draw(st.integers(1, 4))
    ellipsis = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))
    terms, shapes = [], []
    for _ in range(n):
        letters = draw(st.lists(st.sampled_from(LETTERS), min_size=0, max_size=3))
        with_dots = bool(ellipsis) and draw(st.booleans())
        hidden = ellipsis[len(ellipsis) - draw(st.integers(0, len(ellipsis))):] if with_dots else []
        hidden = [1 if draw(st.booleans()) and draw(st.booleans()) else s for s in hidden]
        at = draw(st.integers(0, len(letters)))
        term = "".join(letters[:at]) + ("..." if with_dots else "") + "".join(letters[at:])
        shape = [sizes[c] for c in letters[:at]] + hidden + [sizes[c] for c in letters[at:]]
        # a letter appearing once in this operand may broadcast: size 1 here
        shape = [1 if draw(st.integers(0, 5)) == 0 and letters.count(c) == 1 else s
                 for c, s in zip(letters[:at] + ["."] * len(hidden) + letters[at:], shape)]
        terms.append(term)
        shapes.append(tuple(shape))
    equation = ",".join(terms)
    if draw(st.booleans()):  # an explicit output: some of the letters used, maybe `...`
        used = sorted({c for t in terms for c in t if c != "."})
        out = draw(st.permutations(used)).__getitem__(slice(draw(st.integers(0, len(used)))))
        dots = "..." if any("..." in t for t in terms) and draw(st.booleans()) else ""
        equation += "->" + dots + "".join(out)
    return equation, shapes


def _both(equation, shapes, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) for s in shapes]
    return ([shrew.tensor(a, requires_grad=True) for a in arrays],
            [torch.tensor(a, requires_grad=True) for a in arrays])


@settings(max_examples=150, deadline=None)
@given(equations())
def test_einsum_matches_torch(case):
    equation, shapes = case
    xs, ts = _both(equation, shapes)
    try:
        want = torch.einsum(equation, *ts)
    except RuntimeError:  # e.g. a size-1 letter repeated elsewhere that torch refuses
        with pytest.raises(shrew.ShrewError, match="einsum"):
            shrew.einsum(equation, *xs)
        return
    got = shrew.einsum(equation, *xs)
    assert tuple(got.shape) == tuple(want.shape), equation
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-10, atol=1e-10)
    weight = np.random.default_rng(1).standard_normal(tuple(want.shape))
    grads = (got * shrew.tensor(weight)).sum().backward()
    (want * torch.tensor(weight)).sum().backward()
    for x, t in zip(xs, ts):
        np.testing.assert_allclose(grads[x].numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("equation, shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk", [(2, 2, 3), (2, 3, 2)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("...ij,...j->...i", [(2, 3, 4), (4,)]),
    ("i,i,i->", [(3,), (3,), (3,)]),
    ("iij,jk->ki", [(2, 2, 3), (3, 2)]),
    ("ab,cd,ef->fedcba", [(1, 2), (2, 3), (3, 1)]),
])
def test_einsum_gradcheck(equation, shapes):
    xs, _ = _both(equation, shapes)
    assert gradcheck(lambda *a: shrew.einsum(equation, *a), xs)


def test_einsum_operand_list_and_sublists():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    want = torch.einsum(torch.tensor(a), [0, 1], torch.tensor(b), [1, 27], [27, 0])
    got = shrew.einsum(shrew.tensor(a), [0, 1], shrew.tensor(b), [1, 27], [27, 0])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
    implicit = shrew.einsum(shrew.tensor(a), [Ellipsis, 1], shrew.tensor(b), [1, 2])
    np.testing.assert_allclose(implicit.numpy(), a @ b, rtol=1e-12)
    listed = shrew.einsum("ij,jk", [shrew.tensor(a), shrew.tensor(b)])
    np.testing.assert_allclose(listed.numpy(), a @ b, rtol=1e-12)


@pytest.mark.parametrize("equation, shapes, message", [
    ("ij->jj", [(2, 2)], "appears more than once"),
    ("ij->k", [(2, 2)], "does not appear"),
    ("i,j", [(2,)], "subscripts for 2 operand"),
    ("i", [(2,), (2,)], "subscripts for 1 operand"),
    ("ij", [(2,)], r"shape \[2\] has 1 dims"),
    ("i1", [(2, 2)], "invalid subscript '1'"),
    ("ii", [(2, 3)], "2 != 3"),
    ("ij,jk", [(2, 3), (4, 4)], "size 4 for operand 1"),
    ("i.j", [(2, 2)], "not part of '...'"),
    ("......", [(2, 2)], "more than one '...'"),
    ("i->i->i", [(2,)], "invalid subscript '-'"),
])
def test_einsum_errors_name_the_equation(equation, shapes, message):
    with pytest.raises(RuntimeError):
        torch.einsum(equation, *[torch.ones(s) for s in shapes])
    with pytest.raises(shrew.ShrewError, match=message) as caught:
        shrew.einsum(equation, *[shrew.ones(*s) for s in shapes])
    assert repr(equation) in str(caught.value)


def test_einsum_rejects_non_tensors_and_integer_operands():
    with pytest.raises(TypeError, match="einsum: operands must be tensors"):
        shrew.einsum("i,i", shrew.ones(2), [1.0, 2.0])
    with pytest.raises(shrew.DTypeError, match="einsum: needs floating-point operands"):
        shrew.einsum("ij,jk", shrew.ones(2, 2), shrew.tensor([[1, 2], [3, 4]]))
    with pytest.raises(shrew.DTypeError, match="einsum: operands must share a dtype"):
        shrew.einsum("i,i", shrew.ones(2), shrew.ones(2, dtype=shrew.float64))
