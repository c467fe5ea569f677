"""Checks of the conformance suite itself: its table covers the Op variants and Backend
primitives and tells the truth about them, and a broken backend makes it fail loudly."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from importlib import metadata

import pytest

import shrew
from shrew.core import op as O
from shrew.backends.base import FAST_ATTENTION, FAST_CONV, FAST_LINEAR, FAST_NORM, PRIMITIVES
from shrew.backends.base import FAST_RECURRENT
from shrew.backends.base import FAST_PATHS as FAST
from shrew.backends.cpu import CPUBackend, mkl_active, onednn_active, use_mkl, use_onednn
from shrew.core.op import VARIANTS
from shrew.testing.conformance.cases import CASES
from shrew.testing.conformance.harness import DEFAULT_LAYOUT, Target, forward, make_inputs
from shrew.testing.conformance.spec import Case, S, F


def test_entry_names_are_unique():
    assert len({case.name for case in CASES}) == len(CASES)


def test_every_variant_and_primitive_has_an_entry():
    assert set(VARIANTS) - {v for c in CASES for v in c.variants} == set()
    assert set(PRIMITIVES) - {p for c in CASES for p in c.primitives} == set()


class Recording(CPUBackend):
    """The CPU backend noting which primitives it was asked for."""

    def __init__(self, index=0):
        super().__init__()
        self.device = "recording"
        self.calls = set()


def _recorded(name):
    def primitive(self, *args, **kwargs):
        self.calls.add(name)
        return getattr(CPUBackend, name)(self, *args, **kwargs)
    return primitive


for _name in PRIMITIVES + FAST:
    setattr(Recording, _name, _recorded(_name))


class PlainRecording(Recording):
    """Recording without the optional fast paths: the core's own composition of primitives
    runs, as on a backend that has none (the entries' primitive lists describe it)."""


for _name in FAST:
    setattr(PlainRecording, _name, None)

FAST_ONLY_VARIANTS = {O.LayerNorm, O.Attention, O.Linear, O.RecurrentLayer}
"""Variants recorded only where an optional fast path served the forward (base.FastNorm's
layer_norm, base.FastAttention's attention, base.FastLinear's linear; on the cpu backend
the first two where oneDNN and MKL serve, float32, large inputs), never on plain
primitives."""


def _variants(out) -> set:
    seen, stack, found = set(), [out], set()
    while stack:
        t = stack.pop()
        if t.op is not None and t.id not in seen:
            seen.add(t.id)
            found.add(type(t.op))
            stack.extend(t.op.inputs())
    return found


@pytest.mark.parametrize("case", CASES, ids=str)
def test_entries_record_their_variants_and_call_their_primitives(case, isolated_registry):
    """What an entry claims to exercise, its samples really exercise (forward + backward),
    on a backend without the optional fast paths (the next test checks those)."""
    backend = PlainRecording()
    shrew.register_backend("recording", lambda index=0: backend)
    variants = set()
    for sample in case.samples:
        dtype = "float32" if "float32" in case.dtypes else case.dtypes[0]
        hosts = make_inputs(case, sample, dtype, DEFAULT_LAYOUT)
        shrew.manual_seed(0)
        out = forward(case, sample, hosts, DEFAULT_LAYOUT, "recording", dtype,
                      requires_grad=case.grad)
        out.numpy()
        if out.requires_grad:
            variants |= _variants(out)
            out.sum().backward()
    assert set(case.primitives) <= backend.calls, \
        f"never called: {set(case.primitives) - backend.calls}"
    want = set(case.variants) - FAST_ONLY_VARIANTS
    assert want <= variants, f"never recorded: {want - variants}"


FAST_PATHS = {"conv2d": FAST_CONV, "conv1d": FAST_CONV, "max_pool2d": ("max_pool2d_backward",),
              "avg_pool2d": ("avg_pool2d_backward",), "chunk": ("add_narrow_",),
              "linear": FAST_LINEAR,
              "softmax": ("softmax_backward",), "log_softmax": ("softmax_backward",),
              "standardize": ("standardize_backward",),
              # its small samples compose, adding their bias into the product
              "layer_norm": ("standardize_backward", "add_into_", *FAST_NORM),
              "gelu": ("unary_backward",), "gelu_tanh": ("unary_backward",),
              "relu": ("unary_backward",), "scaled_dot_product_attention": FAST_ATTENTION,
              "lstm_layer": FAST_RECURRENT, "rnn_tanh_layer": FAST_RECURRENT,
              "gru_layer": FAST_RECURRENT}
assert {name for names in FAST_PATHS.values() for name in names} == set(FAST)
ONEDNN_ONLY = {"layer_norm_backward", "attention_backward", "rnn_layer_backward"}
"""Called only where the forward ran on oneDNN (and MKL): the rules of LayerNorm,
Attention and RecurrentLayer nodes."""


@pytest.mark.parametrize("case", [c for c in CASES if c.name in FAST_PATHS], ids=str)
def test_entries_reach_the_optional_fast_paths(case, isolated_registry):
    """On a backend with base.FastConv, base.FastPool, base.FastAccumulate, base.FastGrad,
    base.FastNorm, base.FastAttention and base.FastLinear (the cpu backend has them all)
    the conv, pool, chunk, softmax, norm, GELU, attention and linear entries check those
    methods too, not only the core's fallback; the linear entry records its Linear node,
    and where oneDNN and MKL serve, the layer_norm and attention entries their LayerNorm
    and Attention nodes too."""
    backend = Recording()
    shrew.register_backend("recording", lambda index=0: backend)
    variants = set()
    with use_onednn(True), use_mkl(True):
        served = onednn_active() and mkl_active()
        for sample in case.samples:
            hosts = make_inputs(case, sample, "float32", DEFAULT_LAYOUT)
            out = forward(case, sample, hosts, DEFAULT_LAYOUT, "recording", "float32",
                          requires_grad=True)
            variants |= _variants(out)
            out.sum().backward()
    assert set(FAST_PATHS[case.name]) - (set() if served else ONEDNN_ONLY) <= backend.calls
    want = set(case.variants) & (FAST_ONLY_VARIANTS if served else {O.Linear})
    assert want <= variants, f"never recorded: {want - variants}"


def test_known_failures_become_xfail():
    case = Case("demo", lambda x: x, (S(F(2)),), known={"cpu/float16": "demo reason"})
    target = Target("cpu")
    assert not target.param(case, 0).marks
    assert target.param(case, 0, dtype="float16").marks[0].kwargs["reason"] == "demo reason"


# -- the suite run on deliberately broken backends ---------------------------------------------
BROKEN = '''
"""Backends with one wrong kernel each, registered for the conformance suite to catch."""
import numpy as np

import shrew
from shrew.backends.cpu import CPUBackend


class Broken(CPUBackend):
    def __init__(self, name):
        super().__init__()
        self.device = name + ":0"


class OffExp(Broken):
    def unary(self, fn, x):
        out = super().unary(fn, x)
        return out * out.dtype.type(1 + 1e-4) if fn == "exp" else out


class WrongGather(Broken):
    def gather(self, x, dim, index):
        return np.flip(super().gather(x, dim, index), axis=-1)


class NoErf(Broken):
    def unary(self, fn, x):
        if fn == "erf":
            raise NotImplementedError("erf")
        return super().unary(fn, x)


for cls in (OffExp, WrongGather, NoErf):
    shrew.register_backend(cls.__name__.lower(), lambda index=0, cls=cls: cls(cls.__name__.lower()))
'''


def _suite(tmp_path, device, *args):
    (tmp_path / "broken_backends.py").write_text(textwrap.dedent(BROKEN))
    plugin = [] if any(ep.value == "shrew.testing.plugin"
                       for ep in metadata.entry_points(group="pytest11")) \
        else ["-p", "shrew.testing.plugin"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), *sys.path]))
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "broken_backends", *plugin, "-p",
         "no:cacheprovider", "--pyargs", "shrew.testing.conformance", "--shrew-device", device,
         "-q", *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)


def test_a_slightly_wrong_exp_fails_naming_the_op_and_shapes(tmp_path):
    run = _suite(tmp_path, "offexp", "-k", "exp-0 or sigmoid-0")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "exp [Unary; primitives unary] on offexp, float32, contiguous inputs ([5, 7])" \
        in run.stdout
    assert "FAILED" in run.stdout and "sigmoid" not in run.stdout.split("short test summary")[1]
    assert "device: offexp:0" in run.stdout


def test_a_wrong_gather_fails_naming_the_primitive_and_shapes(tmp_path):
    run = _suite(tmp_path, "wronggather", "-k", "test_values and (gather or embedding)")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "gather [Gather; primitives gather, scatter_add] on wronggather, float32, " \
           "transposed inputs ([4, 5], index[3, 5]<4)" in run.stdout
    assert "embedding [Gather; primitives gather, scatter_add, expand]" in run.stdout


def test_unimplemented_primitives_are_reported(tmp_path):
    run = _suite(tmp_path, "noerf", "-k", "test_values and erf-0")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "primitives not implemented: unary('erf') (NotImplementedError)" in run.stdout


def test_an_unusable_device_fails_the_run(tmp_path):
    run = _suite(tmp_path, "nosuchdevice")
    assert run.returncode not in (0, 5), run.stdout + run.stderr
    assert "--shrew-device nosuchdevice: unknown device" in run.stdout + run.stderr
    assert " passed" not in run.stdout


def test_name_all_checks_every_device_of_the_name(tmp_path):
    run = _suite(tmp_path, "offexp:all", "-k", "exp-0")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "device: offexp:0" in run.stdout and "FAILED" in run.stdout


def test_name_all_without_a_device_skips_saying_why(tmp_path):
    run = _suite(tmp_path, "nosuchdevice:all", "-rs")
    assert run.returncode == 0, run.stdout + run.stderr
    assert " passed" not in run.stdout and " skipped" in run.stdout
    assert "--shrew-device nosuchdevice:all: no usable nosuchdevice device: unknown device " \
           "'nosuchdevice:0'" in run.stdout
