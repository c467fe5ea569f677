"""shrew.export: a training step traced to C, compiled with the system compiler and run
step by step against eager shrew (losses, first-step gradients, parameters)."""
from __future__ import annotations

import ctypes
import math
import shutil
import subprocess

import numpy as np
import pytest

import shrew
from shrew import nn, optim
from shrew.export import trace_training
from shrew.export.symbolic import at
from shrew.nn import functional as F

CC = shutil.which("cc") or shutil.which("gcc")
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler (cc or gcc) on PATH")
FLAGS = ["-O2", "-std=c99", "-Wall", "-Wextra", "-Werror"]



def c_state(model):
    """The state the C step saves: everything but the integer step counters
    (num_batches_tracked), which stay outside it."""
    state = model.state_dict()
    assert all(t.dtype.is_floating_point or n.endswith("num_batches_tracked")
               for n, t in state.items())
    return {n: t for n, t in state.items() if t.dtype.is_floating_point}

def mlp():
    return nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 5))


def cnn():
    """The digits CNN's layers, small: conv, batch norm (training), max-pool, dropout."""
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Dropout(0.3), nn.Linear(64, 5))


class Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = nn.TransformerBlock(8, 2, mlp_ratio=2, dropout=0.1, causal=True)
        self.head = nn.Linear(8, 5)

    def forward(self, x):
        return self.head(self.block(x).mean(1))


CASES = {
    "mlp": (mlp, (12,), lambda ps: optim.Adam(ps, lr=1e-2, weight_decay=0.01)),
    "cnn": (cnn, (1, 8, 8), lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=1e-3)),
    "mlp_adamw": (mlp, (12,), lambda ps: optim.AdamW(ps, lr=1e-2)),
    # SGD for the transformer: Adam divides by sqrt(v), which turns the rounding noise of
    # a gradient that is zero in exact arithmetic (the key bias: softmax ignores a shift)
    # into full-size steps, in eager shrew and in C alike, but differently.
    "transformer": (Transformer, (4, 8), lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9)),
}


def compile_step(program, tmp_path, extra=()):
    src = program.write_c(tmp_path / "train.c")
    lib = tmp_path / "train.so"
    subprocess.run([CC, *FLAGS, "-shared", "-fPIC", "-DSHREW_NO_MAIN", src, "-o", str(lib),
                    *extra, "-lm"], check=True, capture_output=True)
    c = ctypes.CDLL(str(lib))
    c.shrew_train_step.restype = ctypes.c_float
    c.shrew_debug_grad.restype = ctypes.c_long
    assert c.shrew_load_params(str(tmp_path / "train_init.safetensors").encode()) == 0
    return c


def c_step(lib, x, y, batch):
    return lib.shrew_train_step(x.ctypes.data_as(ctypes.c_void_p),
                                y.ctypes.data_as(ctypes.c_void_p), batch)


def setup(case, batch=6):
    build, shape, make_opt = CASES[case]
    shrew.manual_seed(1)
    model = build()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, *shape)).astype(np.float32)
    y = rng.integers(0, 5, batch)
    return model, make_opt(model.parameters()), x, y


@needs_cc
@pytest.mark.parametrize("case", list(CASES))
def test_c_step_matches_eager(case, tmp_path):
    model, opt, x, y = setup(case)
    program = trace_training(model, F.cross_entropy, (shrew.tensor(x), shrew.tensor(y)), opt)
    assert program.fixed_batch_reason is None and program.min_batch == 1
    kinds = [node.kind for node in program.graph.nodes]
    assert kinds.count("log_softmax_backward") == 1  # cross-entropy's gradient, fused
    lib = compile_step(program, tmp_path)
    for step, batch in enumerate((6, 6, 4)):  # the batch may shrink below the traced one
        c_loss = c_step(lib, x, y, batch)
        loss = F.cross_entropy(model(shrew.tensor(x[:batch])), shrew.tensor(y[:batch]))
        opt.zero_grad()
        store = loss.backward()
        if step == 0:
            for i, (name, p) in enumerate(model.named_parameters()):
                grad = np.empty(p.numel(), dtype=np.float32)
                assert lib.shrew_debug_grad(i, grad.ctypes.data_as(ctypes.c_void_p)) == p.numel()
                np.testing.assert_allclose(grad.reshape(p.shape), store[p].numpy(), rtol=1e-5,
                                           atol=1e-6, err_msg=name)
        opt.step()
        assert c_loss == pytest.approx(loss.item(), rel=1e-5)
    assert lib.shrew_save_params(str(tmp_path / "out.safetensors").encode()) == 0
    got = shrew.load(tmp_path / "out.safetensors")
    for name, t in c_state(model).items():
        np.testing.assert_allclose(got[name].numpy(), t.numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=name)


@needs_cc
def test_cblas_build_matches_eager(tmp_path):
    """-DSHREW_USE_CBLAS swaps the blocked matmul for cblas_sgemm (OpenBLAS here)."""
    model, opt, x, y = setup("mlp")
    program = trace_training(model, F.cross_entropy, (shrew.tensor(x), shrew.tensor(y)), opt)
    try:
        lib = compile_step(program, tmp_path, ["-DSHREW_USE_CBLAS", "-lopenblas"])
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"no cblas to link (libopenblas-dev): {exc.stderr.decode()[:200]}")
    for _ in range(2):
        c_loss = c_step(lib, x, y, 6)
        loss = F.cross_entropy(model(shrew.tensor(x)), shrew.tensor(y))
        opt.zero_grad()
        loss.backward()
        opt.step()
        assert c_loss == pytest.approx(loss.item(), rel=1e-5)


@needs_cc
def test_batch_above_traced_size_is_refused_and_changes_nothing(tmp_path):
    model, opt, x, y = setup("mlp")
    program = trace_training(model, F.cross_entropy, (shrew.tensor(x), shrew.tensor(y)), opt)
    lib = compile_step(program, tmp_path)
    big_x, big_y = np.concatenate([x, x]), np.concatenate([y, y])
    assert math.isnan(c_step(lib, big_x, big_y, 12))
    bad_y = y.copy()
    bad_y[0] = 99  # a label outside the classes: refused, never read out of bounds
    assert math.isnan(c_step(lib, x, bad_y, 6))
    assert lib.shrew_save_params(str(tmp_path / "out.safetensors").encode()) == 0
    got = shrew.load(tmp_path / "out.safetensors")
    for name, t in c_state(model).items():
        np.testing.assert_array_equal(got[name].numpy(), t.numpy(), err_msg=name)
    assert lib.shrew_load_params(str(tmp_path / "missing.safetensors").encode()) != 0


@needs_cc
def test_main_trains_from_a_data_file_under_sanitizers(tmp_path):
    """The whole program (load, several epochs, save) under ASan + UBSan: no invalid
    access, no leak, and the saved parameters load in shrew."""
    model, opt, x, y = setup("mlp")
    program = trace_training(model, F.cross_entropy, (shrew.tensor(x), shrew.tensor(y)), opt)
    src = program.write_c(tmp_path / "train.c")
    exe = tmp_path / "train"
    flags = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-g"]
    built = subprocess.run([CC, *FLAGS, *flags, src, "-o", str(exe), "-lm"],
                           capture_output=True, text=True)
    if built.returncode != 0 and "sanitize" in built.stderr:
        pytest.skip(f"the compiler has no sanitizer runtime: {built.stderr[:200]}")
    assert built.returncode == 0, built.stderr
    data = tmp_path / "data.bin"
    xs = np.concatenate([x, x[:3]])  # 9 samples: a full batch of 6, then one of 3
    ys = np.concatenate([y, y[:3]])
    with open(data, "wb") as f:
        f.write(np.array([len(xs), 12], dtype="<u8").tobytes())
        f.write(xs.astype("<f4").tobytes())
        f.write(ys.astype("<i8").tobytes())
    run = subprocess.run([str(exe), str(data), "3"], cwd=tmp_path, capture_output=True,
                         text=True, env={"ASAN_OPTIONS": "detect_leaks=1"})
    assert run.returncode == 0, run.stderr
    assert run.stdout.count("epoch") == 3
    trained = shrew.load(tmp_path / "train_trained.safetensors")
    for _ in range(3):
        for rows in (slice(0, 6), slice(6, 9)):
            loss = F.cross_entropy(model(shrew.tensor(xs[rows])), shrew.tensor(ys[rows]))
            opt.zero_grad()
            loss.backward()
            opt.step()
    for name, t in c_state(model).items():
        np.testing.assert_allclose(trained[name].numpy(), t.numpy(), rtol=1e-5, atol=1e-6)


def test_the_plan_reuses_memory():
    model, opt, x, y = setup("cnn")
    program = trace_training(model, F.cross_entropy, (shrew.tensor(x), shrew.tensor(y)), opt)
    mem = program.memory
    assert mem["temporaries"] < mem["temporaries_without_reuse"]
    assert mem["arena"] == mem["persistent"] + mem["temporaries"]
    assert mem["eager_peak"] is not None and mem["eager_peak"] > 0
    # no two temporaries that are live at once overlap in the arena
    plan = program.plan
    temps = [b for b in program.graph.buffers if b.kind == "temp" and id(b) in plan.spans]
    for i, a in enumerate(temps):
        for b in temps[i + 1:]:
            (f1, l1), (f2, l2) = plan.spans[id(a)], plan.spans[id(b)]
            if f1 <= l2 and f2 <= l1:
                o1, o2 = plan.offsets[id(a)], plan.offsets[id(b)]
                s1, s2 = at(a.nbytes, 6), at(b.nbytes, 6)  # at the traced batch
                assert o1 + s1 <= o2 or o2 + s2 <= o1


def test_an_unsupported_primitive_is_refused_by_name(tmp_path):
    model, opt, x, y = setup("mlp")

    def loss_fn(out, target):  # randn has no C emitter
        return F.cross_entropy(out + shrew.randn(*out.shape) * 0.1, target)

    with pytest.raises(shrew.ShrewError, match="'randn'"):
        trace_training(model, loss_fn, (shrew.tensor(x), shrew.tensor(y)), opt)
    assert not list(tmp_path.iterdir())


def test_a_3d_convolution_is_refused_by_name(tmp_path):
    model = nn.Sequential(nn.Conv3d(1, 2, 2), nn.MaxPool3d(2), nn.Flatten(), nn.Linear(16, 3))
    opt = optim.SGD(model.parameters(), lr=0.1)
    x, y = shrew.randn(4, 1, 5, 5, 5), shrew.tensor(np.array([0, 1, 2, 0]))
    with pytest.raises(shrew.UnsupportedError, match="3 spatial dims"):
        trace_training(model, F.cross_entropy, (x, y), opt)
    assert not list(tmp_path.iterdir())


def test_data_dependent_graphs_are_refused():
    model, opt, x, y = setup("mlp")

    def loss_fn(out, target):  # how much it keeps depends on the labels' values
        keep = int(target.numpy()[0]) + 1
        return F.cross_entropy(out[:keep], target[:keep])

    y[0], y[-1] = 1, 3  # the trace's second batch is the first rolled by one row
    with pytest.raises(shrew.ShrewError, match="depends on the data"):
        trace_training(model, loss_fn, (shrew.tensor(x), shrew.tensor(y)), opt)


def test_bad_inputs_are_refused():
    model, opt, x, y = setup("mlp")
    with pytest.raises(shrew.ShrewError, match="example_inputs"):
        trace_training(model, F.cross_entropy, shrew.tensor(x), opt)
    with pytest.raises(shrew.DTypeError, match="int64"):
        trace_training(model, F.cross_entropy, (shrew.tensor(x), shrew.tensor(y * 1.0)), opt)
    with pytest.raises(shrew.ShrewError, match="RMSprop|optimizer"):
        trace_training(model, F.cross_entropy, (shrew.tensor(x), shrew.tensor(y)), object())
    if "opencl" in " ".join(shrew.devices()):
        with pytest.raises(shrew.DeviceError, match="opencl"):
            trace_training(model, F.cross_entropy,
                           (shrew.tensor(x, device="opencl"), shrew.tensor(y)), opt)


def test_a_step_that_replays_the_generator_is_refused():
    """checkpoint restores the generator to replay dropout in backward: not exportable."""
    model, opt, x, y = setup("mlp")

    def loss_fn(out, target):
        return F.cross_entropy(shrew.checkpoint(lambda t: F.dropout(t, 0.5), out), target)

    with pytest.raises(shrew.ShrewError, match="resets the generator"):
        trace_training(model, loss_fn, (shrew.tensor(x), shrew.tensor(y)), opt)


@needs_cc
def test_a_step_traced_below_four_rows_runs_at_that_batch_only(tmp_path):
    model, opt, x, y = setup("mlp", batch=3)
    program = trace_training(model, F.cross_entropy, (shrew.tensor(x), shrew.tensor(y)), opt)
    assert program.min_batch == 3 and "below 4" in program.fixed_batch_reason
    lib = compile_step(program, tmp_path)
    assert math.isnan(c_step(lib, x, y, 2))
    loss = F.cross_entropy(model(shrew.tensor(x)), shrew.tensor(y))
    assert c_step(lib, x, y, 3) == pytest.approx(loss.item(), rel=1e-5)


def test_a_cumulative_batch_norm_is_refused_and_left_as_it_was():
    model, opt, x, y = setup("cnn")
    model[1].momentum = None  # running averages over num_batches_tracked steps
    before = model[1].num_batches_tracked
    with pytest.raises(shrew.ShrewError, match="momentum=None"):
        trace_training(model, F.cross_entropy, (shrew.tensor(x), shrew.tensor(y)), opt)
    assert model[1].num_batches_tracked is before
