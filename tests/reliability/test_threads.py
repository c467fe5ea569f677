"""Threads: no_grad is per thread, and two threads training two models at once get the
same numbers as training them one after the other."""
from __future__ import annotations

import itertools
import sys
import threading

import numpy as np
import pytest

import shrew
from support import device_or_fail
from workload import Run, batches


def test_no_grad_in_one_thread_leaves_the_others_recording():
    x = shrew.ones(3, requires_grad=True)
    inside, done = threading.Event(), threading.Event()
    seen = {}

    def in_no_grad():
        with shrew.no_grad():
            inside.set()
            done.wait()
            seen["no_grad thread"] = (x * 2.0).requires_grad

    worker = threading.Thread(target=in_no_grad)
    worker.start()
    inside.wait()
    seen["main thread"] = (x * 2.0).requires_grad
    seen["new thread"] = _in_a_thread(lambda: (shrew.is_grad_enabled(), (x * 2.0).requires_grad))
    done.set()
    worker.join()
    assert seen == {"no_grad thread": False, "main thread": True, "new thread": (True, True)}


def test_no_grad_in_the_main_thread_leaves_a_new_thread_recording():
    x = shrew.ones(3, requires_grad=True)
    with shrew.no_grad():
        assert _in_a_thread(lambda: (x * 2.0).requires_grad) is True
        assert not (x * 2.0).requires_grad


def _in_a_thread(fn):
    out = []
    worker = threading.Thread(target=lambda: out.append(fn()))
    worker.start()
    worker.join()
    return out[0]


def _train(run, data) -> list:
    return [run.step(x, y) for x, y in data]


def _parameters(run) -> list:
    return [p.numpy() for p in run.model.parameters()]


@pytest.mark.parametrize("name", ["cpu", "opencl"])
def test_two_threads_train_two_models_as_if_one_after_another(name):
    device = device_or_fail(name)
    data = [list(itertools.islice(batches(seed=seed), 30)) for seed in (1, 2)]
    runs = [Run(device, seed=1), Run(device, seed=2)]
    expected = [_train(run, d) for run, d in zip(runs, data)]
    expected_params = [_parameters(run) for run in runs]

    runs = [Run(device, seed=1), Run(device, seed=2)]  # the same models afresh
    got = [None, None]
    start = threading.Barrier(2)

    def train(i):
        start.wait()
        got[i] = _train(runs[i], data[i])

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often, so that their steps interleave
    try:
        workers = [threading.Thread(target=train, args=(i,)) for i in range(2)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    finally:
        sys.setswitchinterval(interval)
    assert got == expected
    for run, params in zip(runs, expected_params):
        for a, b in zip(_parameters(run), params):
            np.testing.assert_array_equal(a, b)
