"""A whole training step on OpenCL matches the CPU on every OpenCL device of the machine:
the MLP's loss curve agrees to float32 tolerance step after step (same initial weights, same
data, same SGD)."""
import numpy as np
import pytest

import shrew
import shrew.nn as nn
import shrew.nn.functional as F
from support import device_or_fail, each_device


def _loss_curve(device, steps=8):
    rng = np.random.default_rng(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                          nn.Linear(128, 10))
    with shrew.no_grad():
        for p in model.parameters():  # the same weights on both devices
            p.copy_(shrew.tensor(rng.uniform(-0.1, 0.1, p.shape).astype(np.float32)))
    model.to(device)
    opt = shrew.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = shrew.tensor(rng.standard_normal((96, 64)).astype(np.float32), device=device)
    y = shrew.tensor(rng.integers(0, 10, 96), device=device)
    losses = []
    for _ in range(steps):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return np.array(losses), [p.numpy() for p in model.parameters()]


@pytest.mark.parametrize("device", each_device("opencl"))
def test_mlp_training_on_opencl_matches_cpu(device):
    device = device_or_fail(device)
    cpu_losses, cpu_params = _loss_curve("cpu")
    cl_losses, cl_params = _loss_curve(device)
    assert cpu_losses[-1] < cpu_losses[0] - 0.1  # it really trains
    np.testing.assert_allclose(cl_losses, cpu_losses, rtol=1e-4, atol=1e-5)
    for a, b in zip(cl_params, cpu_params):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5)
