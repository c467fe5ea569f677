"""The workloads as PyTorch steps, module for module the same as shrew_steps.
build(name, problem, device) returns a function that runs one step and returns its loss
(device "cpu", or "cuda" where this PyTorch has a GPU)."""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from workloads import LEARNING_RATE, chain


def _chain_step(problem, device, compiled=False):
    x = torch.tensor(problem.inputs["x"], device=device, requires_grad=True)
    length = problem.config["length"]

    def run():
        x.grad = None
        loss = chain(x, length)
        loss.backward()
        return loss
    return _item(torch.compile(run) if compiled else run)


def _training_step(model, problem, device, loss_fn, compiled=False, amp=False):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in problem.params.items()})
    model.to(device)
    inputs = {k: torch.from_numpy(v).to(device) for k, v in problem.inputs.items()}
    opt = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)

    def run():
        opt.zero_grad()
        with torch.autocast(torch.device(device).type, dtype=torch.bfloat16, enabled=amp):
            loss = loss_fn(model, **inputs)
        loss.backward()
        opt.step()
        return loss
    return _item(torch.compile(run) if compiled else run)


def _item(run):
    """The step: `run` (compiled or not: it returns the loss tensor), then the loss as a
    float, read outside the compiled region."""
    def step():
        return run().item()
    return step


def _classifier_loss(model, x, y):
    return F.cross_entropy(model(x), y)


class Attention(nn.Module):
    """Causal self-attention with q, k, v stacked in in_proj_weight, as MultiheadAttention."""

    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.in_proj_weight = nn.Parameter(torch.empty(3 * dim, dim))
        self.in_proj_bias = nn.Parameter(torch.empty(3 * dim))
        self.out_proj = nn.Linear(dim, dim)

    def forward(self, x):
        batch, length, dim = x.shape
        qkv = F.linear(x, self.in_proj_weight, self.in_proj_bias)
        q, k, v = (t.reshape(batch, length, self.heads, -1).transpose(1, 2)
                   for t in qkv.chunk(3, dim=-1))
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out_proj(out.transpose(1, 2).reshape(batch, length, dim))


class Block(nn.Module):
    """Pre-LN block: x + attn(ln1(x)), then x + mlp(ln2(x)), tanh GELU as shrew's."""

    def __init__(self, dim, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class LanguageModel(nn.Module):
    def __init__(self, vocab, dim, heads, blocks):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.Sequential(*[Block(dim, heads) for _ in range(blocks)])
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        return self.head(self.ln_f(self.blocks(self.embed(tokens))))


def _lm_loss(model, tokens, targets):
    logits = model(tokens)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


class RNNModel(nn.Module):
    """pytorch/examples' word_language_model: encoder, LSTM or GRU, decoder."""

    def __init__(self, cell, vocab, width):
        super().__init__()
        self.encoder = nn.Embedding(vocab, width)
        self.rnn = getattr(nn, cell)(width, width, 2)
        self.decoder = nn.Linear(width, vocab)

    def forward(self, tokens):
        output, _ = self.rnn(self.encoder(tokens))
        return self.decoder(output)


def _word_lm_loss(model, tokens, targets):
    logits = model(tokens)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets)


def build(name: str, problem, device: str = "cpu", compiled: bool = False, amp: bool = False):
    """compiled=True: the step under torch.compile (inductor); amp=True: under bfloat16
    autocast."""
    if name in ("tiny_chain", "deep_chain", "deep_chain_1m"):
        return _chain_step(problem, device, compiled)
    if name == "mlp_step":
        hidden = problem.params["0.weight"].shape[0]
        model = nn.Sequential(nn.Linear(784, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                              nn.ReLU(), nn.Linear(hidden, 10))
        return _training_step(model, problem, device, _classifier_loss, compiled, amp)
    if name == "cnn_step":
        model = nn.Sequential(nn.Conv2d(1, 16, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Conv2d(16, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Flatten(), nn.Linear(32 * 7 * 7, 10))
        return _training_step(model, problem, device, _classifier_loss, compiled, amp)
    if name == "transformer_step":
        c = problem.config
        model = LanguageModel(c["vocab"], c["dim"], c["heads"], c["blocks"])
        return _training_step(model, problem, device, _lm_loss, compiled, amp)
    if name in ("lstm_step", "gru_step"):
        c = problem.config
        return _training_step(RNNModel(c["cell"], c["vocab"], c["width"]), problem, device,
                              _word_lm_loss, compiled, amp)
    raise KeyError(name)
