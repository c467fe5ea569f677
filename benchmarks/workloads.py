"""The benchmark workloads as plain numpy: sizes, initial weights and inputs.

Every framework builds its step from the same `Problem`, so shrew, PyTorch and tinygrad
start from identical weights and data.  `scale` (0 < scale <= 1) shrinks batch sizes,
widths and chain lengths for fast smoke tests; 1 gives the benchmark's sizes.

Parameter names follow the module layout every framework uses (a Sequential numbers its
items: "0.weight"), so a strict load_state_dict checks that the models match.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np

LEARNING_RATE = 0.01


@dataclass
class Problem:
    params: dict  # name -> float32 array
    inputs: dict  # name -> array
    config: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Workload:
    name: str
    description: str
    make: object  # scale -> Problem
    repeat: int  # steps per timed sample on the CPU
    training: bool  # forward + backward + SGD on a model (also run on OpenCL)
    once: bool = False  # timed once, on its first step, instead of in rounds
    tinygrad: bool = True  # tinygrad_steps has it (tinygrad has no LSTM or GRU layer)


def _scaled(n: int, scale: float, minimum: int = 1, multiple: int = 1) -> int:
    return max(minimum, round(n * scale / multiple) * multiple)


def _uniform(rng, shape, bound) -> np.ndarray:
    return rng.uniform(-bound, bound, shape).astype(np.float32)


def _linear(params: dict, rng, name: str, fan_in: int, fan_out: int) -> None:
    """PyTorch's default Linear initialisation: U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    bound = 1 / math.sqrt(fan_in)
    params[f"{name}.weight"] = _uniform(rng, (fan_out, fan_in), bound)
    params[f"{name}.bias"] = _uniform(rng, (fan_out,), bound)


def _conv(params: dict, rng, name: str, c_in: int, c_out: int, k: int) -> None:
    bound = 1 / math.sqrt(c_in * k * k)
    params[f"{name}.weight"] = _uniform(rng, (c_out, c_in, k, k), bound)
    params[f"{name}.bias"] = _uniform(rng, (c_out,), bound)


def _layer_norm(params: dict, name: str, dim: int) -> None:
    params[f"{name}.weight"] = np.ones(dim, np.float32)
    params[f"{name}.bias"] = np.zeros(dim, np.float32)


def chain(y, length: int):
    """`length` elementwise ops cycling y * 1.01, y + 0.1, tanh(y), then the sum.  Works on
    any tensor type with these three operations."""
    for i in range(length):
        k = i % 3
        y = y * 1.01 if k == 0 else y + 0.1 if k == 1 else y.tanh()
    return y.sum()


def tiny_chain(scale: float = 1.0) -> Problem:
    x = np.random.default_rng(0).standard_normal((16, 16)).astype(np.float32)
    return Problem({}, {"x": x}, {"length": _scaled(200, scale, 3)})


def deep_chain(scale: float = 1.0, length: int = 20_000) -> Problem:
    x = np.random.default_rng(0).standard_normal(4).astype(np.float32)
    return Problem({}, {"x": x}, {"length": _scaled(length, scale, 3)})


def deep_chain_1m(scale: float = 1.0) -> Problem:
    return deep_chain(scale, 1_000_000)


def mlp_step(scale: float = 1.0) -> Problem:
    """Sequential(Linear, ReLU, Linear, ReLU, Linear): parameters 0.*, 2.*, 4.*."""
    rng = np.random.default_rng(0)
    hidden = _scaled(1024, scale, 8)
    sizes = (784, hidden, hidden, 10)
    params = {}
    for i, (fan_in, fan_out) in enumerate(pairwise(sizes)):
        _linear(params, rng, str(2 * i), fan_in, fan_out)
    batch = _scaled(256, scale, 4)
    inputs = {"x": rng.standard_normal((batch, sizes[0])).astype(np.float32),
              "y": rng.integers(0, 10, batch)}
    return Problem(params, inputs)


def cnn_step(scale: float = 1.0) -> Problem:
    """Sequential(Conv2d, ReLU, MaxPool2d, Conv2d, ReLU, MaxPool2d, Flatten, Linear):
    parameters 0.*, 3.*, 7.*."""
    rng = np.random.default_rng(0)
    params = {}
    _conv(params, rng, "0", 1, 16, 5)
    _conv(params, rng, "3", 16, 32, 5)
    _linear(params, rng, "7", 32 * 7 * 7, 10)
    batch = _scaled(64, scale, 2)
    inputs = {"x": rng.standard_normal((batch, 1, 28, 28)).astype(np.float32),
              "y": rng.integers(0, 10, batch)}
    return Problem(params, inputs)


def transformer_step(scale: float = 1.0) -> Problem:
    """A causal language model: embed, blocks.N (pre-LN TransformerBlock: ln1,
    attn.in_proj_weight / in_proj_bias, attn.out_proj, ln2, mlp.0, mlp.2 with a tanh-GELU
    between), ln_f, head; cross-entropy of the logits at every position against random
    targets."""
    rng = np.random.default_rng(0)
    heads, blocks, vocab = 4, 4, 256
    dim = _scaled(256, scale, heads, heads)
    params = {"embed.weight": rng.standard_normal((vocab, dim)).astype(np.float32)}
    for b in range(blocks):
        p = f"blocks.{b}"
        _layer_norm(params, f"{p}.ln1", dim)
        _linear(params, rng, f"{p}.attn.in_proj", dim, 3 * dim)
        # PyTorch's (and shrew's) MultiheadAttention names: in_proj_weight, in_proj_bias.
        for part in ("weight", "bias"):
            params[f"{p}.attn.in_proj_{part}"] = params.pop(f"{p}.attn.in_proj.{part}")
        _linear(params, rng, f"{p}.attn.out_proj", dim, dim)
        _layer_norm(params, f"{p}.ln2", dim)
        _linear(params, rng, f"{p}.mlp.0", dim, 4 * dim)
        _linear(params, rng, f"{p}.mlp.2", 4 * dim, dim)
    _layer_norm(params, "ln_f", dim)
    _linear(params, rng, "head", dim, vocab)
    batch, length = _scaled(8, scale, 1), _scaled(128, scale, 4)
    inputs = {"tokens": rng.integers(0, vocab, (batch, length)),
              "targets": rng.integers(0, vocab, (batch, length))}
    return Problem(params, inputs, {"heads": heads, "blocks": blocks, "dim": dim, "vocab": vocab})


def _recurrent_step(cell: str, scale: float) -> Problem:
    """pytorch/examples' word_language_model (RNNModel) at its default sizes but a smaller
    vocabulary, so that the recurrent layers and not the decoder's GEMM dominate: encoder
    (Embedding), rnn (2-layer LSTM or GRU, emsize = nhid = 200), decoder (Linear), no
    dropout; bptt 35, batch 20, cross-entropy over every position; weights U(-0.1, 0.1)."""
    rng = np.random.default_rng(0)
    vocab, gates = 2000, {"LSTM": 4, "GRU": 3}[cell]
    width = _scaled(200, scale, 4)
    steps, batch = _scaled(35, scale, 2), _scaled(20, scale, 2)
    params = {"encoder.weight": _uniform(rng, (vocab, width), 0.1)}
    for layer in range(2):
        for name, shape in (("weight_ih", (gates * width, width)),
                            ("weight_hh", (gates * width, width)),
                            ("bias_ih", (gates * width,)), ("bias_hh", (gates * width,))):
            params[f"rnn.{name}_l{layer}"] = _uniform(rng, shape, 0.1)
    params["decoder.weight"] = _uniform(rng, (vocab, width), 0.1)
    params["decoder.bias"] = np.zeros(vocab, np.float32)
    inputs = {"tokens": rng.integers(0, vocab, (steps, batch)),
              "targets": rng.integers(0, vocab, steps * batch)}
    return Problem(params, inputs, {"cell": cell, "vocab": vocab, "width": width})


def lstm_step(scale: float = 1.0) -> Problem:
    return _recurrent_step("LSTM", scale)


def gru_step(scale: float = 1.0) -> Problem:
    return _recurrent_step("GRU", scale)


WORKLOADS = {w.name: w for w in [
    Workload("tiny_chain", "x[16,16], 200 elementwise ops, sum, backward", tiny_chain, 50, False),
    Workload("mlp_step", "784-1024-1024-10 ReLU MLP, batch 256", mlp_step, 3, True),
    Workload("cnn_step", "2x(conv 5x5, relu, maxpool 2), linear; batch 64, 28x28",
             cnn_step, 3, True),
    Workload("transformer_step", "4 pre-LN causal blocks, d=256, 4 heads, seq 128, batch 8",
             transformer_step, 1, True),
    Workload("lstm_step", "word language model: 2-layer LSTM 200, vocab 2000, bptt 35, "
             "batch 20", lstm_step, 1, True, tinygrad=False),
    Workload("gru_step", "word language model: 2-layer GRU 200, vocab 2000, bptt 35, batch 20",
             gru_step, 1, True, tinygrad=False),
    Workload("deep_chain", "x[4] through 20,000 elementwise ops, backward", deep_chain, 1, False),
    Workload("deep_chain_1m", "x[4] through 1,000,000 elementwise ops, backward (once)",
             deep_chain_1m, 1, False, once=True),
]}
