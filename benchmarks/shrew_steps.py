"""The workloads as shrew steps.  build(name, problem, device) returns a function that runs
one step and returns its loss as a float."""
from __future__ import annotations

import shrew
from shrew import nn, optim
from shrew.nn import functional as F

from workloads import LEARNING_RATE, chain


def _chain_step(problem, device, compiled=False):
    x = shrew.tensor(problem.inputs["x"], device=device, requires_grad=True)
    length = problem.config["length"]

    def run():
        x.grad = None
        loss = chain(x, length)
        loss.backward()
        return loss
    return _item(shrew.compile(run) if compiled else run)


def _training_step(model, problem, device, loss_fn, compiled=False, amp=False):
    """Load the problem's weights, move to device; the step is zero_grad, loss, backward,
    SGD.  amp: the forward and the loss under bfloat16 autocast."""
    model.load_state_dict(problem.params)
    model.to(device)
    inputs = {k: shrew.tensor(v, device=device) for k, v in problem.inputs.items()}
    opt = optim.SGD(model.parameters(), lr=LEARNING_RATE)

    def run():
        opt.zero_grad()
        with shrew.autocast(shrew.device(device).type, dtype=shrew.bfloat16, enabled=amp):
            loss = loss_fn(model, **inputs)
        loss.backward()
        opt.step()
        return loss
    return _item(shrew.compile(run) if compiled else run)


def _item(run):
    """The step: `run` (compiled or not: it returns the loss tensor), then the loss as a
    float, read outside the compiled region."""
    def step():
        return run().item()
    return step


def _classifier_loss(model, x, y):
    return F.cross_entropy(model(x), y)


class LanguageModel(nn.Module):
    def __init__(self, vocab, dim, heads, blocks, checkpoint=False):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.Sequential(*[nn.TransformerBlock(dim, heads, causal=True,
                                                          checkpoint=checkpoint)
                                      for _ in range(blocks)])
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        return self.head(self.ln_f(self.blocks(self.embed(tokens))))


def _lm_loss(model, tokens, targets):
    logits = model(tokens)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def classifier(name: str, problem) -> nn.Module:
    """The mlp_step or cnn_step model (weights still PyTorch's default init)."""
    if name == "mlp_step":
        hidden = problem.params["0.weight"].shape[0]
        return nn.Sequential(nn.Linear(784, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                             nn.ReLU(), nn.Linear(hidden, 10))
    return nn.Sequential(nn.Conv2d(1, 16, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(32 * 7 * 7, 10))


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


def build(name: str, problem, device: str = "cpu", checkpoint: bool = False,
          compiled: bool = False, amp: bool = False):
    """checkpoint=True recomputes each transformer block in backward (TransformerBlock's
    own checkpointing); compiled=True runs the step under shrew.compile; amp=True trains
    under bfloat16 autocast."""
    if name in ("tiny_chain", "deep_chain", "deep_chain_1m"):
        return _chain_step(problem, device, compiled)
    if name in ("mlp_step", "cnn_step"):
        return _training_step(classifier(name, problem), problem, device, _classifier_loss,
                              compiled, amp)
    if name == "transformer_step":
        c = problem.config
        model = LanguageModel(c["vocab"], c["dim"], c["heads"], c["blocks"], checkpoint)
        return _training_step(model, problem, device, _lm_loss, compiled, amp)
    if name in ("lstm_step", "gru_step"):
        c = problem.config
        return _training_step(RNNModel(c["cell"], c["vocab"], c["width"]), problem, device,
                              _word_lm_loss, compiled, amp)
    raise KeyError(name)
