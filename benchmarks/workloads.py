"""The benchmark workloads: each builds a shrew step and a torch step of the same
computation from the same initial weights; a step returns its loss as a float."""
from __future__ import annotations

import numpy as np

import shrew


def _sgd_shrew(params, grads, lr):
    with shrew.no_grad():
        for p in params:
            p._backend.copy_(p._data, (p - grads[p] * lr)._data)


def tiny_chain(device):
    """x[16,16] through 200 elementwise ops cycling *1.01, +0.1, tanh; sum; backward."""
    import torch
    x0 = np.random.default_rng(0).standard_normal((16, 16)).astype(np.float32)
    xs = shrew.tensor(x0, device=device, requires_grad=True)
    xt = torch.tensor(x0, requires_grad=True)

    def chain(y):
        for i in range(200):
            k = i % 3
            y = y * 1.01 if k == 0 else y + 0.1 if k == 1 else y.tanh()
        return y.sum()

    def shrew_step():
        loss = chain(xs)
        loss.backward()
        return loss.item()

    def torch_step():
        xt.grad = None
        loss = chain(xt)
        loss.backward()
        return loss.item()

    return shrew_step, torch_step, 20


def mlp_step(device, batch=256, sizes=(784, 1024, 1024, 10), lr=0.01):
    """784-1024-1024-10 ReLU MLP, batch 256, cross-entropy, forward + backward + SGD."""
    import torch
    rng = np.random.default_rng(0)
    weights = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = 1 / np.sqrt(fan_in)
        weights.append(rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32))
        weights.append(rng.uniform(-bound, bound, (fan_out,)).astype(np.float32))
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = rng.integers(0, sizes[-1], batch)

    ps = [shrew.tensor(w, device=device, requires_grad=True) for w in weights]
    xs, ys = shrew.tensor(x, device=device), shrew.tensor(y, device=device)
    pt = [torch.tensor(w, requires_grad=True) for w in weights]
    xt, yt = torch.tensor(x), torch.tensor(y)

    def shrew_step():
        h = xs
        for i in range(0, len(ps), 2):
            h = h @ ps[i].transpose(0, 1) + ps[i + 1]
            if i + 2 < len(ps):
                h = h.relu()
        shifted = h - h.max(1, keepdim=True).detach()
        logp = shifted - shifted.exp().sum(1, keepdim=True).log()
        loss = -logp.gather(1, ys.reshape(-1, 1)).mean()
        grads = loss.backward()
        _sgd_shrew(ps, grads, lr)
        return loss.item()

    def torch_step():
        h = xt
        for i in range(0, len(pt), 2):
            h = torch.nn.functional.linear(h, pt[i], pt[i + 1])
            if i + 2 < len(pt):
                h = h.relu()
        loss = torch.nn.functional.cross_entropy(h, yt)
        loss.backward()
        with torch.no_grad():
            for p in pt:
                p -= lr * p.grad
                p.grad = None
        return loss.item()

    return shrew_step, torch_step, 3


WORKLOADS = {"tiny_chain": tiny_chain, "mlp_step": mlp_step}
