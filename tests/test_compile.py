"""shrew.compile: compiled models and training steps give eager's losses, gradients and
parameters bit for bit (fusion keeps eager's arithmetic, the replay arena eager's values),
on cpu and OpenCL; graph breaks, guards, recompiles, explain, the arena's plan and the
fallback without a C compiler."""
from __future__ import annotations

import gc
import tracemalloc
import warnings

import numpy as np
import pytest

import shrew
from shrew import nn, optim
from shrew.compiler import arena as arena_module
from shrew.compiler import compiled as compiled_module
from shrew.compiler import fuse, fuse_c
from shrew.nn import functional as F
from tests.support import device_or_fail, each_device

STEPS = 5


# -- the models: the nn tests' kinds and the example programs' ------------------------
class WordModel(nn.Module):
    """An LSTM word-language model (PyTorch's word_language_model, small)."""

    def __init__(self, vocab: int = 30, dim: int = 16) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.LSTM(dim, dim, num_layers=2, batch_first=True)
        self.drop = nn.Dropout(0.2)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens: shrew.Tensor) -> shrew.Tensor:
        out, _ = self.rnn(self.drop(self.embed(tokens)))
        return self.head(self.drop(out))


class GPT(nn.Module):
    """A small GPT: token and position embeddings, causal blocks, final norm, head."""

    def __init__(self, vocab: int = 30, dim: int = 16, length: int = 8,
                 checkpoint: bool = False) -> None:
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(shrew.randn(length, dim) * 0.02)
        self.blocks = nn.Sequential(*[nn.TransformerBlock(dim, 2, causal=True, dropout=0.1,
                                                          checkpoint=checkpoint)
                                      for _ in range(2)])
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens: shrew.Tensor) -> shrew.Tensor:
        return self.head(self.ln(self.blocks(self.tok(tokens) + self.pos)))


def _mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 5))


def _cnn() -> nn.Module:
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Dropout(0.1), nn.Flatten(), nn.Linear(4 * 4 * 4, 5))


def _classes(n: int, k: int) -> shrew.Tensor:
    return shrew.tensor([(3 * i + 1) % k for i in range(n)])


MODELS = {
    "mlp": (_mlp, lambda: (shrew.randn(8, 12), _classes(8, 5))),
    "cnn": (_cnn, lambda: (shrew.randn(6, 1, 8, 8), _classes(6, 5))),
    "lstm_word_model": (WordModel, lambda: (_classes(24, 30).reshape(3, 8),
                                            _classes(24, 30).flip(0).reshape(3, 8))),
    "gpt": (GPT, lambda: (_classes(16, 30).reshape(2, 8), _classes(16, 30).flip(0).reshape(2, 8))),
    "checkpointed_transformer": (lambda: GPT(checkpoint=True),
                                 lambda: (_classes(16, 30).reshape(2, 8),
                                          _classes(16, 30).flip(0).reshape(2, 8))),
}


def _loss(logits: shrew.Tensor, target: shrew.Tensor) -> shrew.Tensor:
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))


def _train(name: str, device: str, how: str, steps: int = STEPS
           ) -> tuple[list, list, list, object]:
    """STEPS steps eagerly (how="eager"), with the model compiled ("model", Adam outside)
    or with the whole step compiled ("step": SGD with momentum, or AdamW and a schedule,
    inside)."""
    make_model, make_batch = MODELS[name]
    shrew.manual_seed(0)
    model = make_model().to(device)
    x, y = (t.to(device) for t in make_batch())
    compiled = None
    if how == "step":
        adam = name in ("gpt", "lstm_word_model")
        opt = (optim.AdamW(model.parameters(), lr=0.01) if adam
               else optim.SGD(model.parameters(), lr=0.05, momentum=0.9))
        schedule = optim.lr_scheduler.StepLR(opt, 2, 0.5)

        def step(x: shrew.Tensor, y: shrew.Tensor) -> shrew.Tensor:
            opt.zero_grad()
            loss = _loss(model(x), y)
            loss.backward()
            opt.step()
            if adam:
                schedule.step()
            return loss
        run = compiled = shrew.compile(step)
    else:
        opt = optim.Adam(model.parameters(), lr=0.01)
        forward = compiled = shrew.compile(model) if how == "model" else model

        def run(x: shrew.Tensor, y: shrew.Tensor) -> shrew.Tensor:
            opt.zero_grad()
            loss = _loss(forward(x), y)
            loss.backward()
            opt.step()
            return loss
    shrew.manual_seed(1)
    losses, grads = [], []
    for _ in range(steps):
        losses.append(run(x, y).item())
        grads.append([p.grad.numpy().copy() for p in model.parameters() if p.grad is not None])
    params = [p.detach().numpy().copy() for p in model.parameters()]
    return losses, grads, params, compiled


def _eager_step_reference(name: str, device: str, steps: int
                          ) -> tuple[list, list, list, object]:
    """The "step" use's eager twin: the same step function, not compiled."""
    original = shrew.compile
    shrew.compile = lambda fn, **kw: fn  # type: ignore[assignment]
    try:
        return _train(name, device, "step", steps)
    finally:
        shrew.compile = original  # type: ignore[assignment]


def _check_same(name: str, device: str, how: str, steps: int = STEPS) -> object:
    """Compiled training against eager (module doc); the CompiledFunction."""
    reference = _eager_step_reference(name, device, steps) if how == "step" else _train(
        name, device, "eager", steps)
    got = _train(name, device, how, steps)
    compiled = got[3]
    program_runs = compiled._compiled if hasattr(compiled, "_compiled") else compiled
    assert program_runs.breaks == [], program_runs.breaks
    assert program_runs.replays >= steps - 3  # captured until two captures agree
    assert got[0] == reference[0]  # losses, bit for bit
    for a, b in zip(got[1], reference[1]):
        assert len(a) == len(b)
        for ga, gb in zip(a, b):
            np.testing.assert_array_equal(ga, gb)
    for pa, pb in zip(got[2], reference[2]):
        np.testing.assert_array_equal(pa, pb)
    return program_runs


@pytest.mark.parametrize("how", ["model", "step"])
@pytest.mark.parametrize("name", list(MODELS))
def test_compiled_training_equals_eager_on_cpu(name: str, how: str) -> None:
    _check_same(name, "cpu", how)


@pytest.mark.parametrize("device", each_device("opencl"))
@pytest.mark.parametrize("how", ["model", "step"])
@pytest.mark.parametrize("name", list(MODELS))
def test_compiled_training_equals_eager_on_opencl(name: str, how: str, device: str) -> None:
    """Every model on every OpenCL device (POCL, Intel's runtime)."""
    _check_same(name, device_or_fail(device), how)


def test_a_resnet_stem_with_overlapping_max_pool_equals_eager() -> None:
    """ResNet's stem (7x7 conv, batch norm, relu, 3x3 max pool of stride 2) large enough
    for oneDNN's max pool: the capture differentiates the retained graph before the
    caller's backward does, which once lost the pool's workspace and summed the
    overlapping windows' gradients in another order (1e-5 off eager after 3 steps)."""
    x, y = shrew.randn(8, 1, 28, 28), _classes(8, 5)

    def train(compiled: bool) -> list:
        shrew.manual_seed(0)
        model = nn.Sequential(nn.Conv2d(1, 32, 7, 2, 3, bias=False), nn.BatchNorm2d(32),
                              nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1), nn.Flatten(),
                              nn.Linear(32 * 7 * 7, 5))
        forward = shrew.compile(model) if compiled else model
        opt = optim.SGD(model.parameters(), lr=0.1)
        out = []
        for _ in range(4):
            opt.zero_grad()
            loss = _loss(forward(x), y)
            loss.backward()
            opt.step()
            out.append((loss.item(), [p.grad.numpy().copy() for p in model.parameters()]))
        return out
    for (eager_loss, eager_grads), (loss, grads) in zip(train(False), train(True)):
        assert loss == eager_loss
        for a, b in zip(grads, eager_grads):
            np.testing.assert_array_equal(a, b)


def test_cross_entropy_with_ignored_targets_is_one_graph() -> None:
    """Targets holding ignore_index (makemore's -1, the default -100) compile whole: the
    check that no other target lies outside [0, C) is an index check, not a read into
    Python (once a graph break, so such models never replayed)."""
    x = shrew.randn(6, 5)
    for target, ignore in ((shrew.tensor([0, 1, -100, 4, -100, 2]), -100),
                           (shrew.tensor([0, -1, 3, 4, -1, 2]), -1)):
        g = shrew.compile(lambda x, y, i=ignore: F.cross_entropy(x, y, ignore_index=i),
                          fullgraph=True)
        for _ in range(4):
            assert g(x, target).item() == F.cross_entropy(x, target, ignore_index=ignore).item()
        assert g.replays == 2 and g.breaks == []


# -- graph breaks, guards, recompiles -------------------------------------------------
def test_a_host_read_is_a_graph_break_that_runs_eagerly() -> None:
    def f(x: shrew.Tensor) -> shrew.Tensor:
        y = x * 2
        if y.sum().item() > 0:  # data-dependent: cannot be replayed
            return y + 1
        return y - 1
    g = shrew.compile(f)
    for sign in (1.0, -1.0, 1.0):
        x = shrew.full((3,), sign)
        np.testing.assert_array_equal(g(x).numpy(), f(x).numpy())
    assert g.replays == 0
    assert "Tensor.item() at test_compile.py" in g.breaks[0]
    with pytest.raises(shrew.UnsupportedError, match="fullgraph=True.*item"):
        shrew.compile(f, fullgraph=True)(shrew.ones(3))


def test_explain_lists_graphs_breaks_and_ops() -> None:
    report = shrew.compiler.explain(lambda x: (x * 2).relu().sum(), shrew.ones(4))
    assert (report.graph_count, report.graph_break_count) == (1, 0)
    assert report.op_count == len(report.ops) >= 3 and "reduce" in report.ops
    broken = shrew.compiler.explain(lambda x: x * x.max().item(), shrew.ones(4))
    assert (broken.graph_count, broken.graph_break_count) == (0, 1)
    assert "item" in broken.break_reasons[0] and "Graph Break Count: 1" in str(broken)


def test_new_shapes_recompile_up_to_the_limit() -> None:
    g = shrew.compile(lambda x: (x * 3).sum(dim=0), recompile_limit=2)
    for n in (2, 3):
        for _ in range(3):
            np.testing.assert_array_equal(g(shrew.ones(n, 4)).numpy(), np.full(4, 3.0 * n))
    assert len(g.entries) == 2 and g.replays == 2
    assert "argument 0" in g.recompiles[0] and "(2, 4)" in g.recompiles[0]
    with pytest.warns(UserWarning, match="recompile_limit"):
        assert g(shrew.ones(5, 4)).tolist() == [15.0] * 4
    assert len(g.entries) == 2


def test_training_flag_is_guarded_and_the_optimizer_steps_eagerly() -> None:
    shrew.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    opt = optim.SGD(model.parameters(), lr=0.1)
    x = shrew.ones(2, 4)

    def step() -> shrew.Tensor:
        opt.zero_grad()
        loss = model(x).sum()
        loss.backward()
        opt.step()
        return loss
    g = shrew.compile(step)
    for _ in range(3):
        g()
    model.eval()  # dropout off: not the captured program
    weight, bias = (t.detach().numpy().copy() for t in (model[0].weight, model[0].bias))
    loss = g()
    expected = (x.numpy() @ weight.T + bias).sum()
    assert loss.item() == pytest.approx(float(expected), rel=1e-6)
    opt.param_groups[0]["lr"] = 0.0  # read by the optimizer's step, which runs eagerly
    w = model[0].weight.detach().numpy().copy()
    for _ in range(3):
        g()
    np.testing.assert_array_equal(model[0].weight.detach().numpy(), w)
    assert len(g.entries) == 2


def test_replaced_storage_is_noticed() -> None:
    layer = nn.Linear(3, 2)
    g = shrew.compile(layer)
    x = shrew.ones(1, 3)
    for _ in range(3):
        g(x)
    with shrew.no_grad():
        layer.weight.data = shrew.zeros(2, 3)  # a new storage, not an in-place write
    np.testing.assert_allclose(g(x).detach().numpy(), layer.bias.detach().numpy()[None])
    assert any("storage was replaced" in r for r in g._compiled.recompiles)


def test_inference_under_no_grad_and_module_compile_in_place() -> None:
    shrew.manual_seed(0)
    model = _mlp().eval()
    x = shrew.randn(5, 12)
    expected = model(x).detach().numpy()
    model.compile()
    with shrew.no_grad():
        for _ in range(4):
            out = model(x)
            assert not out.requires_grad
            np.testing.assert_array_equal(out.numpy(), expected)
    assert list(model.state_dict()) == list(_mlp().state_dict())  # no "_orig_mod." prefix


def test_optimized_module_is_torchs() -> None:
    model = _mlp()
    compiled = shrew.compile(model)
    assert isinstance(compiled, shrew.compiler.OptimizedModule)
    assert compiled._orig_mod is model and compiled.training and compiled.eval() is compiled
    assert not model.training
    assert all(k.startswith("_orig_mod.") for k in compiled.state_dict())
    assert shrew.compile(model, disable=True) is model
    decorated = shrew.compile(fullgraph=True)(lambda x: x + 1)
    assert decorated(shrew.ones(2)).tolist() == [2.0, 2.0]


def test_results_that_are_inputs_or_constants() -> None:
    def f(x: shrew.Tensor, scale: float) -> tuple:
        return x, (x * scale).exp(), "tag", scale
    g = shrew.compile(f)
    x = shrew.ones(3)
    for scale in (1.0, 1.0, 1.0, 2.0):
        got = g(x, scale)
        assert got[0] is x and got[2:] == ("tag", scale)
        np.testing.assert_array_equal(got[1].numpy(), np.exp(np.full(3, scale, np.float32)))


def test_replay_frees_what_eager_frees() -> None:
    shrew.manual_seed(0)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(256, 256), nn.ReLU()) for _ in range(6)])
    x = shrew.randn(256, 256)
    opt = optim.SGD(model.parameters(), lr=0.01)

    def step() -> shrew.Tensor:
        opt.zero_grad()
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        return loss

    def peak(fn: object) -> int:
        tracemalloc.start()
        fn()  # type: ignore[operator]
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top
    g = shrew.compile(step)
    eager = peak(step)
    # two captures (eager, recorded), two replays recorded for the arena, two served
    peaks = [peak(g) for _ in range(6)]
    assert g.replays == 4
    assert max(peaks[2:]) <= eager * 1.05, (peaks, eager)  # the replays' live arrays
    # The arena holds the replay's arrays (tracemalloc sees those as numpy hands them
    # out, not the arena itself): its plan is no larger than eager's peak.
    assert 0 < g.arena_bytes() <= eager, (g.arena_bytes(), eager)
    stats = _arenas(g)[0]
    assert stats["served"] >= 2 * g.arena_bytes() and stats["missed"] == 0, stats
    # A capture holds none of the step's arrays either; its bookkeeping (the one scan of
    # the heap for storage from before the call: a list of every object alive) grows with
    # what else is alive (0.93x eager's peak alone, 1.52x in the whole suite).
    heap_scan = 16 * len(gc.get_objects())
    assert max(peaks[:2]) <= eager * 1.2 + heap_scan, (peaks, eager, heap_scan)


def test_a_capture_lets_the_gradients_it_replaces_go() -> None:
    """zero_grad() inside a captured step drops the previous step's .grad tensors, as in
    eager: the capture watches them through weak references (it once kept them for the
    whole call, the previous step's gradients on top of eager's peak)."""
    import gc
    import weakref
    model = nn.Linear(8, 8)
    opt = optim.SGD(model.parameters(), lr=0.1)
    x = shrew.randn(4, 8)
    seen: list = []

    def step() -> shrew.Tensor:
        old = [weakref.ref(p.grad) for p in model.parameters() if p.grad is not None]
        opt.zero_grad()
        gc.collect()
        seen.append(all(r() is None for r in old))
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        return loss
    g = shrew.compile(step)
    for _ in range(3):
        g()
    assert g.replays == 1 and seen[1] and seen[0]  # the two captures


def test_fusion_keeps_eagers_bits_and_runs_fewer_calls() -> None:
    x = shrew.tensor(np.linspace(-3, 3, 64, dtype=np.float32), requires_grad=True)

    def chain() -> shrew.Tensor:
        x.grad = None
        y = x
        for i in range(30):
            y = y * 1.01 if i % 3 == 0 else y + 0.1 if i % 3 == 1 else y.tanh()
        loss = y.square().sum()
        loss.backward()
        return loss
    expected = (chain().item(), x.grad.numpy().copy())
    g = shrew.compile(chain)
    for _ in range(4):
        assert g().item() == expected[0]
        np.testing.assert_array_equal(x.grad.numpy(), expected[1])
    program = next(iter(g.entries.values())).program
    assert fuse.compiler_missing() is None
    assert any("shrew_fused" in getattr(s.method, "__module__", "") for s in program.forward)
    assert len(program.forward) < 60  # 30 forward and ~40 backward primitives unfused


def test_without_a_c_compiler_programs_replay_unfused(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("CC", str(tmp_path / "no-such-compiler"))
    monkeypatch.setenv("SHREW_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(fuse, "_missing", {"cpu": [], "opencl": [], "cuda": []})
    monkeypatch.setattr(fuse_c, "_modules", {})
    g = shrew.compile(lambda x: ((x + 1) * 2 - 3).relu())
    x = shrew.tensor([-1.0, 0.5, 2.0])
    for _ in range(4):
        assert g(x).tolist() == [0.0, 0.0, 3.0]
    assert g.replays == 2 and "failed" in fuse.compiler_missing()


# -- the replay arenas ----------------------------------------------------------------
def _arenas(compiled: object) -> list[dict[str, int]]:
    return [arena.stats() for entry in compiled.entries.values()  # type: ignore[attr-defined]
            for arenas in entry.program.arenas for arena in arenas]


@pytest.mark.parametrize("how", ["model", "step"])
@pytest.mark.parametrize("name", list(MODELS))
def test_the_arena_serves_every_model_bit_for_bit(name: str, how: str, monkeypatch) -> None:
    """Two captures, two recorded replays, then four from the arena, every array in it
    (the test models' arrays are all small), against eager."""
    monkeypatch.setattr(arena_module, "SMALL", 0)
    compiled = _check_same(name, "cpu", how, steps=8)
    # (a checkpoint reads and sets every device's generator state: an OpenCL arena too,
    # which allocates nothing)
    stats = [s for s in _arenas(compiled) if s["blocks"] or s["missed"] or s["passed"]]
    assert len(stats) == (2 if how == "model" else 1)  # a model's backward has its own
    for s in stats:
        assert s["served"] > 0 and s["missed"] == 0, stats
        assert 0 < s["capacity"] <= s["served"]
    assert compiled.arena_bytes() == sum(s["capacity"] for s in stats)  # type: ignore[attr-defined]


def test_an_array_held_past_its_plan_comes_from_malloc(monkeypatch) -> None:
    """Planned on forward-backward pairs, then two forwards before one backward: the
    second forward's planned blocks are still held by the first's saved arrays, so it
    takes malloc's memory, and the numbers stay eager's."""
    monkeypatch.setattr(arena_module, "SMALL", 0)

    def train(compiled: bool) -> tuple[list, list, object]:
        shrew.manual_seed(0)
        model = _mlp()
        forward = shrew.compile(model) if compiled else model
        x, y = MODELS["mlp"][1]()
        losses = []
        for _ in range(6):
            loss = _loss(forward(x), y)
            loss.backward()
            losses.append(loss.item())
        a, b = _loss(forward(x), y), _loss(forward(x * 2), y)
        (a + b).backward()
        return losses + [a.item(), b.item()], [p.grad.numpy() for p in model.parameters()], \
            forward
    losses, grads, forward = train(True)
    expected, expected_grads, _ = train(False)
    assert losses == expected
    for g, e in zip(grads, expected_grads):
        np.testing.assert_array_equal(g, e)
    forward_arena = _arenas(forward._compiled)[0]  # type: ignore[attr-defined]
    assert forward_arena["served"] > 0 and forward_arena["missed"] > 0


def test_a_size_the_data_decides_leaves_the_rest_of_the_plan_serving(monkeypatch) -> None:
    """An embedding's backward sizes an array by the batch's distinct tokens: that one
    allocation misses its planned block whenever the count changes, the others are
    served, and the numbers stay eager's."""
    monkeypatch.setattr(arena_module, "SMALL", 0)

    def train(compiled: bool) -> tuple[list, object]:
        shrew.manual_seed(0)
        model = GPT()
        forward = shrew.compile(model) if compiled else model
        opt = optim.SGD(model.parameters(), lr=0.1)
        losses = []
        for step in range(8):
            tokens = _classes(16, 5 + 3 * (step % 4)).reshape(2, 8)  # 5 to 14 distinct
            opt.zero_grad()
            loss = _loss(forward(tokens), tokens.flip(0))
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses + [p.detach().numpy().copy() for p in model.parameters()], forward
    got, forward = train(True)
    expected, _ = train(False)
    assert got[:8] == expected[:8]
    for a, b in zip(got[8:], expected[8:]):
        np.testing.assert_array_equal(a, b)
    backward = _arenas(forward._compiled)[1]  # type: ignore[attr-defined]
    assert backward["missed"] > 0 and backward["served"] > 10 * backward["missed"], backward


@pytest.mark.parametrize("device", each_device("opencl"))
@pytest.mark.parametrize("how", ["model", "step"])
@pytest.mark.parametrize("name", ["mlp", "gpt"])
def test_the_opencl_arena_serves_bit_for_bit(name: str, how: str, device: str,
                                             monkeypatch) -> None:
    """The same on OpenCL: each planned buffer a sub-buffer of one arena buffer."""
    monkeypatch.setattr(arena_module, "SMALL", 0)
    compiled = _check_same(name, device_or_fail(device), how, steps=8)
    stats = _arenas(compiled)
    assert len(stats) == (2 if how == "model" else 1)
    for s in stats:
        assert s["served"] > 0 and s["missed"] == 0, stats
        assert 0 < s["capacity"] <= s["served"]


def test_an_opencl_buffer_held_past_its_plan_comes_from_the_pool(monkeypatch) -> None:
    """A result kept past the next replay (planned as freed: the first replays dropped
    theirs) still holds its sub-buffer: that replay takes the pool's, and every kept
    result keeps its value."""
    monkeypatch.setattr(arena_module, "SMALL", 0)
    device = device_or_fail("opencl")
    g = shrew.compile(lambda x, k: (x * k).exp() + 1)
    x = shrew.linspace(-1, 1, 1024, device=device)
    for _ in range(4):
        g(x, 0.5)  # two captures, two recorded replays: the plan
    kept = [g(x, 0.5) for _ in range(3)]
    expected = ((x * 0.5).exp() + 1).numpy()  # eager's
    for y in kept:
        np.testing.assert_array_equal(y.numpy(), expected)
    stats = _arenas(g)[0]
    assert stats["served"] > 0 and stats["missed"] > 0, stats


def test_an_opencl_arena_the_device_cannot_hold_leaves_the_pool_serving(monkeypatch) -> None:
    monkeypatch.setattr(arena_module, "SMALL", 0)
    x = shrew.linspace(-1, 1, 1024, device=device_or_fail("opencl"))

    def no_room(nbytes: int) -> None:
        raise MemoryError(f"no room for {nbytes} bytes")
    monkeypatch.setattr(x._backend, "arena_buffer", no_room)
    g = shrew.compile(lambda x: (x * 0.5).exp() + 1)
    for _ in range(6):
        y = g(x)
    np.testing.assert_array_equal(y.numpy(), ((x * 0.5).exp() + 1).numpy())
    assert g.replays == 4 and g.arena_bytes() == 0


def test_an_opencl_capture_holds_none_of_the_calls_buffers() -> None:
    """A capture watches the values it records through weak references on OpenCL too: a
    capture that held every buffer of the call kept a transformer step's activations
    and gradients (392 MB) alive between the two captures."""
    x = shrew.randn(256, 256, device=device_or_fail("opencl"))
    pool = x._backend._pool

    def chain(x: shrew.Tensor) -> shrew.Tensor:
        for _ in range(20):
            x = (x @ x).tanh()  # 40 arrays of 256 KiB
        return x.sum()
    g = shrew.compile(chain)
    before = pool.active_bytes
    y = g(x)
    assert pool.active_bytes - before < 4 * x.nbytes, pool.active_bytes - before  # y's
    assert y.item() == chain(x).item()


def test_a_compiled_module_saves_and_loads_after_its_calls(tmp_path) -> None:
    """shrew.save(compiled_module) after it ran (its captured programs are not saved: a
    loaded one captures afresh, with the same settings), as PyTorch's torch.save."""
    shrew.manual_seed(0)
    model = _mlp().eval()  # (no dropout: the same output every call)
    compiled = shrew.compile(model, options={"fuse": False})
    x, _ = MODELS["mlp"][1]()
    for _ in range(3):
        expected = compiled(x).numpy()
    shrew.save(compiled, tmp_path / "compiled.safetensors")
    loaded = shrew.load(tmp_path / "compiled.safetensors")
    assert type(loaded).__name__ == "OptimizedModule"
    assert list(loaded.state_dict()) == list(compiled.state_dict())
    for _ in range(4):
        np.testing.assert_array_equal(loaded(x).numpy(), expected)
    assert loaded._compiled.replays == 2 and loaded._compiled is not compiled._compiled
    assert loaded._compiled.options.fuse is False


def test_the_arena_can_be_turned_off() -> None:
    g = shrew.compile(lambda x: (x.exp() * 2).sum(), options={"arena": False})
    x = shrew.randn(64, 64)
    for _ in range(6):
        g(x)
    assert g.replays == 4
    assert next(iter(g.entries.values())).program.arenas == ((), ())
    assert g.arena_bytes() == 0


def test_a_compiled_method_binds_to_each_instance() -> None:
    """`@torch.compile` on a method in a class body (a module's forward, a helper with
    keywords): each instance compiles its own bound method, with its own recompile
    budget, so twelve blocks of one class all replay."""
    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = nn.Linear(4, 4)

        @shrew.compile
        def forward(self, x: shrew.Tensor) -> shrew.Tensor:
            return self.linear(x).relu()

        @shrew.compile(fullgraph=True)
        def scaled(self, x: shrew.Tensor, k: int = 2) -> shrew.Tensor:
            return self.linear(x) * k

    blocks, x = [Block() for _ in range(12)], shrew.randn(2, 4)
    for _ in range(4):
        for block in blocks:
            assert shrew.equal(block(x), block.linear(x).relu())
            assert shrew.equal(block.scaled(x, k=3), block.linear(x) * 3)
    assert all(b.forward.replays == 2 and b.scaled.replays == 2 for b in blocks)
    assert Block.forward.entries == {} and blocks[0].forward is blocks[0].forward
    shrew.compiler.reset()
    assert blocks[3].forward.entries == {}


def test_a_nested_compiled_function_is_captured_by_the_outer_one() -> None:
    inner = shrew.compile(lambda x: x * 2)
    outer = shrew.compile(lambda x: inner(x) + 1)
    for _ in range(4):
        assert outer(shrew.ones(2)).tolist() == [3.0, 3.0]
    assert outer.replays == 2 and inner.replays == 0


def test_import_shrew_as_torch_compile() -> None:
    import shrew as torch
    assert torch.compile is shrew.compile and not torch.compiler.is_compiling()
    seen = []
    g = torch.compile(lambda x: seen.append(torch.compiler.is_compiling()) or x + 1)
    g(shrew.ones(1))
    assert seen == [True]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.compiler.reset()
    assert compiled_module.RECOMPILE_LIMIT == 8


def test_autocast_is_guarded_and_compiled_like_eager() -> None:
    def train(compiled: bool, amp: bool) -> tuple[list[float], object]:
        shrew.manual_seed(0)
        model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 4))
        opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        x, y = shrew.randn(8, 16), _classes(8, 4)

        def step(x: shrew.Tensor, y: shrew.Tensor) -> shrew.Tensor:
            opt.zero_grad()
            with shrew.autocast("cpu", dtype=shrew.bfloat16, enabled=amp):
                loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss
        run = shrew.compile(step) if compiled else step
        return [run(x, y).item() for _ in range(5)], run
    for amp in (False, True):
        eager, _ = train(False, amp)
        got, compiled = train(True, amp)
        assert got == eager and compiled.replays >= 2  # type: ignore[attr-defined]
    g = shrew.compile(lambda x: (x @ x).sum())
    x = shrew.randn(4, 4)
    g(x)
    with shrew.autocast("cpu", dtype=shrew.bfloat16):
        assert g(x).dtype == (x @ x).sum().dtype == shrew.bfloat16
    assert len(g.entries) == 2 and "autocast" in g.recompiles[0]


def test_a_compiled_model_is_not_recaptured_when_the_learning_rate_changes() -> None:
    """build-nanogpt's loop: `model = torch.compile(model)` and the learning rate set in
    each param group at every step.  The model's call reads the parameters but not the
    optimizer: its schedule must not recompile it (it did at every step, reaching
    recompile_limit and running eagerly)."""
    shrew.manual_seed(0)
    eager_model, model = (nn.Sequential(nn.Linear(12, 32), nn.GELU(), nn.Linear(32, 5))
                          for _ in range(2))
    model.load_state_dict(eager_model.state_dict())
    compiled = shrew.compile(model)
    opts = [optim.AdamW(m.parameters(), lr=1e-3) for m in (eager_model, model)]
    x, y = shrew.randn(8, 12), shrew.randint(0, 5, (8,))
    for step in range(6):
        for m, opt in zip((eager_model, compiled), opts):
            for group in opt.param_groups:
                group["lr"] = 1e-3 * (step + 1)
            opt.zero_grad()
            F.cross_entropy(m(x), y).backward()
            opt.step()
    assert compiled._compiled.recompiles == [] and compiled._compiled.replays == 4
    for (name, a), b in zip(eager_model.named_parameters(), model.parameters()):
        np.testing.assert_array_equal(b.detach().numpy(), a.detach().numpy(), err_msg=name)


def test_an_update_written_in_the_function_is_recaptured_when_its_learning_rate_changes(
        ) -> None:
    """A function that updates the parameters itself, reading the optimizer's lr as a
    number, still guards that hyperparameter."""
    layer = nn.Linear(4, 3)
    opt = optim.SGD(layer.parameters(), lr=0.1)

    def update() -> None:
        with shrew.no_grad():
            for p in layer.parameters():
                p.sub_(opt.param_groups[0]["lr"] * shrew.ones_like(p))
    g = shrew.compile(update)
    for lr in (0.1, 0.1, 0.1, 0.5, 0.5, 0.5):
        opt.param_groups[0]["lr"] = lr
        before = layer.bias.detach().numpy().copy()
        g()
        np.testing.assert_allclose(before - layer.bias.detach().numpy(), lr, rtol=1e-5)
    assert len(g.recompiles) == 1 and g.replays == 2


def test_torch_dynamo_as_programs_use_it() -> None:
    """torch._dynamo's reset, explain(fn)(*args), config's recompile limit (by either
    name), optimize(nopython=True) and the shape marks, under `import shrew as torch`."""
    import shrew as torch
    import shrew._dynamo  # noqa: F401  (as `import torch._dynamo` is written)
    config = torch._dynamo.config
    assert config.cache_size_limit == config.recompile_limit == 8
    try:
        config.cache_size_limit = 2
        g = torch.compile(lambda x: (x * 3).sum())
        with pytest.warns(UserWarning, match="recompile_limit"):
            for n in (1, 2, 3):
                assert g(torch.ones(n)).item() == 3 * n
        assert len(g.entries) == 2
    finally:
        config.recompile_limit = 8
    with pytest.raises(AttributeError, match="no setting"):
        config.no_such_setting = True
    with pytest.raises(AttributeError, match="no setting"):
        _ = config.no_such_setting
    config.suppress_errors = True  # accepted: a failing capture runs eagerly anyway
    import shrew._inductor.config  # noqa: F401  (gpt-fast's first lines)
    torch._inductor.config.coordinate_descent_tuning = True
    torch._inductor.config.triton.unique_kernel_names = True
    torch._functorch.config.enable_autograd_cache = True
    with pytest.raises(AttributeError, match="triton has no setting 'nope'"):
        torch._inductor.config.triton.nope = 1
    with pytest.raises(AttributeError, match="no setting 'triton'"):
        torch._inductor.config.triton = None
    report = torch._dynamo.explain(lambda x: x * x.max().item())(torch.ones(3))
    assert report.graph_break_count == 1 and "item" in report.break_reasons[0]
    strict = torch._dynamo.optimize("inductor", nopython=True)(lambda x: x * x.max().item())
    with pytest.raises(shrew.UnsupportedError, match="fullgraph"):
        for _ in range(3):
            strict(torch.ones(3))
    x = torch.ones(2, 5)
    torch._dynamo.mark_dynamic(x, 0)
    torch._dynamo.mark_static(x, 1)
    with pytest.raises(IndexError, match="mark_dynamic: dimension 2"):
        torch._dynamo.mark_dynamic(x, 2)
    torch.compiler.cudagraph_mark_step_begin()
    assert torch.compiler.allow_in_graph(len) is len
    torch._dynamo.reset()
