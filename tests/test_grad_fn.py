"""Tensor.grad_fn against PyTorch on the same programs: the node's class name and name(),
next_functions (nodes, AccumulateGrad for leaves, None for inputs outside the graph),
None for leaves and no-grad results, and the same node object each time it is asked for."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import shrew
import shrew.nn.functional

RNG = np.random.default_rng(3)

# Programs whose PyTorch node shrew records as such (docs/porting.md lists the calls whose
# node differs: t/permute/unsqueeze/select/expand, 1-d matmuls, std/var, ...).
PROGRAMS = {
    "add": lambda T, x, w: x + x, "add_scalar": lambda T, x, w: x + 1.5,
    "sub": lambda T, x, w: x - w[:2], "mul": lambda T, x, w: x * x,
    "mul_scalar": lambda T, x, w: x * 2.0, "rsub": lambda T, x, w: 1.0 - x,
    "div": lambda T, x, w: x / (w[:2] + 3), "div_scalar": lambda T, x, w: x / 2,
    "pow_scalar": lambda T, x, w: x ** 2, "pow_tensor": lambda T, x, w: (x * x + 1) ** x,
    "scalar_pow": lambda T, x, w: 2 ** x, "neg": lambda T, x, w: -x,
    "mm": lambda T, x, w: x @ w, "bmm": lambda T, x, w: T.bmm(x.reshape(1, 2, 3),
                                                                w.reshape(1, 3, 3)),
    "sum": lambda T, x, w: x.sum(), "sum_dim": lambda T, x, w: x.sum(0),
    "sum_keepdim": lambda T, x, w: x.sum((0, 1), keepdim=True), "mean": lambda T, x, w: x.mean(),
    "mean_dim": lambda T, x, w: x.mean(1), "amax": lambda T, x, w: x.amax(0),
    "max": lambda T, x, w: x.max(), "min": lambda T, x, w: x.min(),
    "prod_dim": lambda T, x, w: x.prod(1), "norm": lambda T, x, w: x.norm(),
    "exp": lambda T, x, w: x.exp(), "log1p": lambda T, x, w: (x * x).log1p(),
    "relu": lambda T, x, w: x.relu(), "sigmoid": lambda T, x, w: x.sigmoid(),
    "tanh": lambda T, x, w: x.tanh(), "square": lambda T, x, w: x.square(),
    "gelu_tanh": lambda T, x, w: T.nn.functional.gelu(x, approximate="tanh"),
    "silu": lambda T, x, w: T.nn.functional.silu(x), "rsqrt": lambda T, x, w: (x * x).rsqrt(),
    "view": lambda T, x, w: x.view(6), "reshape": lambda T, x, w: x.reshape(3, 2),
    "flatten": lambda T, x, w: x.flatten(), "transpose": lambda T, x, w: x.transpose(0, 1),
    "slice": lambda T, x, w: x[:, 1:], "narrow": lambda T, x, w: x.narrow(1, 0, 2),
    "clone_of_t": lambda T, x, w: x.transpose(0, 1).contiguous(),
    "softmax": lambda T, x, w: x.softmax(1), "log_softmax": lambda T, x, w: x.log_softmax(1),
    "cat": lambda T, x, w: T.cat([x, w]), "clamp": lambda T, x, w: x.clamp(-0.5, 0.5),
    "where": lambda T, x, w: T.where(x > 0, x, w[:2]), "to": lambda T, x, w: x.to(T.float32),
    "cumsum": lambda T, x, w: x.cumsum(0), "maximum": lambda T, x, w: T.maximum(x, w[1:]),
    "atan2": lambda T, x, w: T.atan2(x, w[1:]),
    "gather": lambda T, x, w: x.gather(1, T.tensor([[0], [2]])),
    "pad": lambda T, x, w: T.nn.functional.pad(x, (1, 1)),
    "scatter_add": lambda T, x, w: T.zeros(2, 3, dtype=T.float64).scatter_add(
        1, T.tensor([[0, 1, 1], [2, 2, 0]]), x),
    "scatter_reduce": lambda T, x, w: T.zeros(2, 3, dtype=T.float64).scatter_reduce(
        1, T.tensor([[0, 1, 1], [2, 2, 0]]), x, "amax"),
    "layer_norm": lambda T, x, w: T.nn.functional.layer_norm(x, (3,)),
    "conv2d": lambda T, x, w: T.nn.functional.conv2d(w.reshape(1, 1, 3, 3),
                                                     x.reshape(1, 1, 2, 3)),
    "avg_pool2d": lambda T, x, w: T.nn.functional.avg_pool2d(x.reshape(1, 1, 2, 3), 1),
    "max_pool2d": lambda T, x, w: T.nn.functional.max_pool2d(x.reshape(1, 1, 2, 3), 1),
    "in_place_add": lambda T, x, w: (x * 1).add_(w[:2]),
    "in_place_mul": lambda T, x, w: (x * 1).mul_(3.0),
}


def _describe(node, depth=3):
    """A node and its next_functions to `depth`, as names: the graph's shape, comparable
    between the libraries."""
    if node is None:
        return None
    if depth == 0:
        return type(node).__name__
    return (type(node).__name__, node.name() if type(node).__name__ != "AccumulateGrad" else "",
            tuple((_describe(fn, depth - 1), index) for fn, index in node.next_functions))


def _run(lib, program):
    x = lib.tensor(RNG_X, requires_grad=True)
    w = lib.tensor(RNG_W, requires_grad=True)
    return program(lib, x, w)


RNG_X = RNG.standard_normal((2, 3))
RNG_W = RNG.standard_normal((3, 3))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_grad_fn_names_and_next_functions_as_torch(name):
    ours, theirs = _run(shrew, PROGRAMS[name]), _run(torch, PROGRAMS[name])
    assert _describe(ours.grad_fn) == _describe(theirs.grad_fn)
    assert repr(ours).endswith(f"grad_fn=<{theirs.grad_fn.name()}>)")


def test_leaves_and_no_grad_results_have_no_grad_fn_and_nodes_are_the_same_objects():
    for lib in (shrew, torch):
        x = lib.tensor(RNG_X, requires_grad=True)
        y = x * x
        assert x.grad_fn is None and lib.ones(2).grad_fn is None
        with lib.no_grad():
            assert (x * x).grad_fn is None
        assert y.grad_fn is y.grad_fn  # one node per op, as long as the graph lives
        s, t = y.sum(), y.mean()
        assert s.grad_fn.next_functions[0][0] is t.grad_fn.next_functions[0][0]
        acc = y.grad_fn.next_functions[0][0]
        assert acc is y.grad_fn.next_functions[1][0] and acc.variable is x
        assert type(acc).__name__ == "AccumulateGrad" and acc.next_functions == ()
        assert acc.name() == "torch::autograd::AccumulateGrad"


def test_custom_function_node_is_named_after_the_class():
    for lib in (shrew, torch):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        y = Double.apply(lib.tensor(RNG_X, requires_grad=True))
        assert type(y.grad_fn).__name__ == y.grad_fn.name() == "DoubleBackward"


def test_next_functions_see_the_graph_as_recorded_before_an_in_place_write():
    """A node keeps the inputs it recorded: writing into an input later rebases the input
    (its grad_fn becomes the write's), not the earlier node's edges."""
    for lib in (shrew, torch):
        x = lib.tensor(RNG_X, requires_grad=True)
        a = x * 2
        y = a + 1
        a.mul_(3)
        assert a.grad_fn.name() == "MulBackward0"
        (before, _), _ = y.grad_fn.next_functions
        assert before.name() == "MulBackward0" and before is not a.grad_fn
        assert before.next_functions[0][0].variable is x
