"""The CUDA backend, kept honest without a GPU.

- The registry: without a usable GPU "cuda" is absent from shrew.devices() and asking for it
  raises a DeviceError that says why (CuPy missing, no driver, driver too old, no device).
- The launch logic (grid, argument order, program cache) against fakes.
- CUDABackend itself, with numpy arrays standing in for CuPy's and every kernel launch run
  through OpenCL (POCL) from the same source, the same -D values and the same arguments:
  it must pass the conformance suite ("cudasim").
- The Philox RNG against a numpy evaluation of random.cl's algorithm, itself checked on
  Random123's known answers: the OpenCL backend and the CUDA backend's launches must
  produce the same numbers for the same seed.
With a GPU, the conformance suite and the RNG check also run on the real "cuda" device.
"""
from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
import time
import types
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import scipy.special

import shrew
from shrew.backends.base import PRIMITIVES, SPECIAL_BINARY_FNS, SPECIAL_UNARY_FNS, Backend
from shrew.backends.cpu import CPUBackend
from shrew.backends.cuda import factory
from shrew.backends.cuda.backend import CUDABackend
from shrew.backends.cuda.launch import (BLOCK, DEVICE_DEFINES, KERNELS, Launcher,
                                        compile_options, grid_1d, programs)
from shrew.backends.kernels import dtype_defines, source, with_prelude
from shrew.backends.opencl import factory as opencl_factory
from shrew.backends.registry import get_backend
from shrew.compiler import fuse

ROOT = Path(__file__).resolve().parents[1]
F16, F32, F64 = np.dtype("float16"), np.dtype("float32"), np.dtype("float64")
BF16 = np.dtype(ml_dtypes.bfloat16)
HAS_GPU = "cuda" in " ".join(shrew.devices())
needs_opencl = pytest.mark.skipif(opencl_factory.device_count() == 0,
                                  reason="no OpenCL device to run the CUDA kernels' source on")
needs_gpu = pytest.mark.skipif(not HAS_GPU, reason="no usable CUDA GPU on this machine")
without_gpu = pytest.mark.skipif(HAS_GPU, reason="this machine has a usable CUDA GPU")


# -- the registry without a GPU --------------------------------------------------------------
class FakeRuntime:
    """cupy.cuda.runtime on a machine whose CUDA is broken in one chosen way."""

    class CUDARuntimeError(RuntimeError):
        pass

    def __init__(self, count=0, error=None, driver=13000, built_for=13000):
        self.count, self.error, self.driver, self.built_for = count, error, driver, built_for

    def getDeviceCount(self):
        if self.error:
            raise self.CUDARuntimeError(self.error)
        return self.count

    def driverGetVersion(self):
        return self.driver

    def runtimeGetVersion(self):
        return self.built_for


def use_fake_cupy(monkeypatch, **runtime):
    cupy = types.ModuleType("cupy")
    cupy.cuda = types.SimpleNamespace(runtime=FakeRuntime(**runtime))
    monkeypatch.setitem(sys.modules, "cupy", cupy)


def assert_absent_with_reason(match):
    assert factory.device_count() == 0
    assert "cuda" not in " ".join(shrew.devices())
    with pytest.raises(shrew.DeviceError, match=f"device 'cuda' is not usable: {match}"):
        shrew.Tensor([1.0], device="cuda")


def test_without_cupy_cuda_is_absent_and_the_error_says_to_install_it(isolated_registry,
                                                                     monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # makes `import cupy` raise ImportError
    assert_absent_with_reason(r"the CUDA backend needs CuPy, .*pip install 'shrew\[cuda\]'")


@pytest.mark.parametrize("runtime, match", [
    (dict(error="cudaErrorInsufficientDriver: CUDA driver version is insufficient", driver=0),
     "no NVIDIA driver found \\(cudaErrorInsufficientDriver: CUDA driver version"),
    (dict(error="cudaErrorInsufficientDriver: CUDA driver version is insufficient",
          driver=12040, built_for=13000),
     "the NVIDIA driver supports CUDA 12.4 but this CuPy needs 13.0: update the driver or "
     "install CuPy for CUDA 12 \\(cudaErrorInsufficientDriver"),
    (dict(error="cudaErrorNoDevice: no CUDA-capable device is detected"),
     "no usable CUDA device \\(cudaErrorNoDevice: no CUDA-capable device is detected\\)"),
    (dict(count=0), "CUDA reports no device"),
], ids=["no-driver", "old-driver", "no-device", "zero-devices"])
def test_an_unusable_cuda_is_absent_and_the_error_says_why(isolated_registry, monkeypatch,
                                                           runtime, match):
    use_fake_cupy(monkeypatch, **runtime)
    assert_absent_with_reason(match)


def test_a_device_index_past_the_last_gpu_is_refused(isolated_registry, monkeypatch):
    use_fake_cupy(monkeypatch, count=1)
    assert factory.device_count() == 1
    with pytest.raises(shrew.DeviceError, match="no CUDA device cuda:3: CuPy sees 1 device"):
        shrew.zeros(1, device="cuda:3")


@without_gpu
def test_on_this_machine_cuda_is_absent_quickly_and_says_why(isolated_registry):
    factory.device_count()  # the first call may import CuPy
    start = time.perf_counter()
    for _ in range(10):
        assert factory.device_count() == 0
    assert time.perf_counter() - start < 0.5
    assert_absent_with_reason(r"\S")


# -- launch configuration ------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, BLOCK - 1, BLOCK, BLOCK + 1, 10**6 + 3])
def test_grid_covers_every_thread_with_one_block_to_spare_at_most(n):
    (grid,), (block,) = grid_1d(n)
    assert block == BLOCK and grid * block >= n > (grid - 1) * block


def test_programs_cover_every_family_and_dtype_and_random_only_floats():
    built = programs(CUDABackend.dtypes)
    floats = {d for d in CUDABackend.dtypes if d.kind == "f" or d == BF16}
    assert {d for f, d in built if f == "random"} == floats == {F16, BF16, F32, F64}
    for family in ("conv", "pool", "index"):
        assert {d for f, d in built if f == family} == set(CUDABackend.dtypes)
    assert {f for f, _ in built} == set(KERNELS)


@pytest.mark.parametrize("dtype", sorted(CUDABackend.dtypes, key=str), ids=str)
def test_compile_options_define_everything_the_sources_read(dtype):
    options = compile_options(dtype)
    assert options[0] == "--fmad=false"
    defines = dict(o[2:].split("=", 1) for o in options[1:])
    expected = {**DEVICE_DEFINES, **dtype_defines(dtype)}
    assert defines == {k: str(v) for k, v in expected.items()}
    assert len(options) == len(expected) + 1


class FakeRawModule:
    built: list = []

    def __init__(self, code, options):
        FakeRawModule.built.append((code, options))

    def get_function(self, name):
        return lambda grid, block, args: FakeRawModule.built.append((name, grid, block, args))


def test_launcher_builds_each_program_once_and_passes_grid_block_and_args_in_order():
    FakeRawModule.built = []
    launch = Launcher(types.SimpleNamespace(RawModule=FakeRawModule))
    meta, x, out = object(), object(), object()
    launch("conv", F32, "im2col", 1000, np.int64(1000), meta, x, out)
    launch("conv", F32, "col2im", 5, np.int64(5), meta, x, out)
    launch("conv", F32, "im2col", 3, np.int64(3), meta, x, out)
    launch("conv", F64, "im2col", 3, np.int64(3), meta, x, out)
    built = FakeRawModule.built
    assert built[0] == (source("conv", "cuda"), compile_options(F32))
    assert built[1] == ("im2col", (4,), (BLOCK,), (np.int64(1000), meta, x, out))
    assert built[2][0] == "col2im" and built[3][0] == "im2col"  # F32 conv built once
    assert built[4] == (source("conv", "cuda"), compile_options(F64))
    assert len(built) == 6


def test_generated_kernels_are_built_once_per_text_as_float32_programs():
    FakeRawModule.built = []
    launch = Launcher(types.SimpleNamespace(RawModule=FakeRawModule))
    text = "KERNEL void fused0(const i64 n) {}\nKERNEL void fused1(const i64 n) {}\n"
    launch.generated(text, "fused0")((1,), (BLOCK,), (np.int64(1),))
    launch.generated(text, "fused1")((2,), (BLOCK,), (np.int64(2),))
    built = FakeRawModule.built
    assert built[0] == (with_prelude(text, "cuda"), compile_options(F32))
    assert [b[0] for b in built[1:]] == ["fused0", "fused1"]   # the module built once


# -- CUDABackend on numpy, its kernels run through OpenCL ----------------------------------
class NumpyAsCupy(types.ModuleType):
    """numpy, plus the two names the CUDA backend uses that only CuPy has."""

    cuda = types.SimpleNamespace(Device=lambda index: contextlib.nullcontext())

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def asnumpy(a):
        return np.array(a, copy=True, order="C")


def _span(a: np.ndarray) -> np.ndarray:
    """The memory from a's first element to its last, flat: CuPy passes a kernel a pointer to
    a view's first element, and the kernel reaches the rest through the strides in meta."""
    assert min(a.strides, default=0) >= 0, "views of shrew primitives never step backwards"
    last = sum((n - 1) * s for n, s in zip(a.shape, a.strides)) // a.itemsize if a.size else 0
    return np.lib.stride_tricks.as_strided(a, (last + 1,), (a.itemsize,),
                                           writeable=a.flags.writeable)


class OpenCLLauncher(Launcher):
    """launch.Launcher with its one GPU-only step, `function`, replaced: the kernel comes from
    the same family with the same -D values in the OpenCL dialect, runs with global size =
    grid * block and local size = block, and gets the same arguments, each array copied to
    an OpenCL buffer and written back afterwards."""

    def __init__(self):
        super().__init__(cupy=None)
        import pyopencl as cl

        from shrew.backends.opencl.programs import Programs
        self.cl = cl
        self.opencl = opencl_factory(0)
        self.programs = Programs(self.opencl.context, DEVICE_DEFINES)
        self.launched: set = set()
        self.generated_programs: dict = {}
        self._lock = threading.Lock()  # an OpenCL kernel object holds its arguments

    def function(self, family, dtype, name):
        assert name in KERNELS[family], f"{name} is not in launch.KERNELS, so NVRTC never built it"
        assert (family, dtype) in programs(CUDABackend.dtypes)
        return self._runner(self.programs.kernel(family, dtype, name), (family, name))

    def generated(self, kernels, name):
        """The generated kernel from the same text in the OpenCL dialect, with the -D values
        of Launcher.generated's float32 build."""
        program = self.generated_programs.get(kernels)
        if program is None:
            defines = {**DEVICE_DEFINES, **dtype_defines(F32)}
            program = self.generated_programs[kernels] = self.cl.Program(
                self.opencl.context, with_prelude(kernels, "opencl")).build(
                    options=[f"-D{k}={v}" for k, v in defines.items()])
        return self._runner(self.cl.Kernel(program, name), ("generated", name))

    def _runner(self, kernel, what):
        def run(grid, block, args):
            cl, queue = self.cl, self.opencl.queue
            flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
            with self._lock:
                self.launched.add(what)
                hosts = {i: np.ascontiguousarray(_span(a)) for i, a in enumerate(args)
                         if isinstance(a, np.ndarray)}
                buffers = {i: cl.Buffer(self.opencl.context, flags, hostbuf=h)
                           for i, h in hosts.items()}
                kernel(queue, (grid[0] * block[0],), block,
                       *(buffers.get(i, a) for i, a in enumerate(args)))
                for i, host in hosts.items():
                    if args[i].flags.writeable:
                        cl.enqueue_copy(queue, host, buffers[i], is_blocking=True)
                        _span(args[i])[...] = host
        return run


def simulated_cuda(index: int = 0) -> CUDABackend:
    """CUDABackend on numpy with its kernels run on OpenCL, registered as "cudasim"."""
    backend = CUDABackend(index, NumpyAsCupy("cupy"), scipy.special, OpenCLLauncher(),
                          description="numpy arrays, CUDA kernel launches run on OpenCL")
    backend.device = f"cudasim:{index}"
    backend.dtypes = backend.dtypes & backend._launch.opencl.dtypes  # POCL has no float16
    return backend


simulated_cuda.device_count = lambda: 1


def test_every_primitive_runs_in_its_devices_scope():
    assert isinstance(CUDABackend(0, NumpyAsCupy("cupy"), None, None), Backend)
    assert all(hasattr(getattr(CUDABackend, p), "__wrapped__") for p in PRIMITIVES)
    entered = []

    @contextlib.contextmanager
    def device(index):
        entered.append(index)
        yield

    xp = NumpyAsCupy("cupy")
    xp.cuda = types.SimpleNamespace(Device=device)
    backend = CUDABackend(3, xp, None, None)
    assert backend.device == "cuda:3"
    x = backend.full((2, 2), 1.5, F32)
    backend.unary("silu", x)  # silu calls unary("sigmoid") inside its own scope
    assert entered == [3, 3, 3]


def test_bfloat16_only_where_the_array_module_stores_it():
    """CuPy 14 makes bfloat16 arrays (ml_dtypes' type); an older CuPy refuses the dtype, and
    the device then lists no bfloat16 (autocast runs its regions in float32 there)."""
    class OldCupy(NumpyAsCupy):
        @staticmethod
        def zeros(shape, dtype=None):
            if np.dtype(dtype) == BF16:
                raise TypeError("Unsupported dtype bfloat16")
            return np.zeros(shape, dtype)
    assert BF16 in CUDABackend(0, NumpyAsCupy("cupy"), None, None).dtypes
    assert BF16 not in CUDABackend(0, OldCupy("cupy"), None, None).dtypes
    assert BF16 in CUDABackend.dtypes  # NVRTC builds every kernel for it


@needs_opencl
def test_simulated_backend_launches_each_kernel_and_matches_the_cpu():
    sim, cpu = simulated_cuda(), CPUBackend()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 7, 6)).transpose(0, 1, 3, 2)  # a strided view
    for prim, args in [("im2col", ((3, 2), (2, 1), (1, 0))),
                       ("max_pool2d", ((3, 3), (2, 2), (1, 1), (1, 1), False)),
                       ("max_pool2d", ((3, 2), (2, 2), (1, 1), (2, 3), True)),
                       ("avg_pool2d", ((2, 3), (1, 2), (1, 1), False, True, None)),
                       ("avg_pool2d", ((3, 3), (2, 2), (1, 1), True, False, None)),
                       ("avg_pool2d", ((2, 3), (2, 2), (1, 1), True, True, 5))]:
        got, want = getattr(sim, prim)(x, *args), getattr(cpu, prim)(x, *args)
        for g, w in zip(got, want) if prim == "max_pool2d" else [(got, want)]:
            np.testing.assert_allclose(sim.to_numpy(g), w, rtol=1e-12, err_msg=prim)
    cols = rng.standard_normal((2, 12, 25))[:, ::2]  # strided
    np.testing.assert_allclose(sim.col2im(cols, (2, 3, 5, 4), (1, 2), (1, 1), (0, 1)),
                               cpu.col2im(cols, (2, 3, 5, 4), (1, 2), (1, 1), (0, 1)))
    volume = rng.standard_normal((2, 3, 5, 6, 4)).transpose(0, 1, 2, 4, 3)  # 3-d, strided
    for prim, args in [("im2col", ((2, 3, 2), (2, 1, 1), (1, 0, 1))),
                       ("max_pool2d", ((3, 2, 2), (2, 1, 2), (1, 1, 0), (1, 2, 1), True)),
                       ("avg_pool2d", ((2, 3, 2), (1, 2, 2), (1, 1, 1), True, False, None))]:
        got, want = getattr(sim, prim)(volume, *args), getattr(cpu, prim)(volume, *args)
        for g, w in zip(got, want) if prim == "max_pool2d" else [(got, want)]:
            np.testing.assert_allclose(sim.to_numpy(g), w, rtol=1e-12, err_msg=prim + " 3-d")
    cols = rng.standard_normal((2, 36, 48))[:, ::3]   # [2, 12, 48], strided
    np.testing.assert_allclose(sim.col2im(cols, (2, 3, 5, 4, 6), (2, 1, 2), (2, 1, 2), (1, 0, 1)),
                               cpu.col2im(cols, (2, 3, 5, 4, 6), (2, 1, 2), (2, 1, 2), (1, 0, 1)))
    index = rng.integers(0, 4, (5, 3))
    src = rng.standard_normal((6, 3))
    np.testing.assert_array_equal(sim.gather(src.T, 1, index.T), cpu.gather(src.T, 1, index.T))
    np.testing.assert_allclose(sim.scatter_add((4, 3), 0, index, src[1:]),
                               cpu.scatter_add((4, 3), 0, index, src[1:]), rtol=1e-12)
    lines = rng.integers(-2, 3, (4, 9)).astype(np.float64)[:, ::2]  # ties, strided
    lines[1, 2] = np.nan
    for name, call in [("cumsum", lambda b: b.scan("sum", lines, 1)),
                       ("cumprod", lambda b: b.scan("prod", lines, 0)),
                       ("cummax", lambda b: b.arg_scan("max", lines, 1)),
                       ("cummin", lambda b: b.arg_scan("min", lines, 0)),
                       ("argsort descending", lambda b: b.argsort(lines, 1, True)),
                       ("argsort", lambda b: b.argsort(lines, 0, False))]:
        np.testing.assert_array_equal(sim.to_numpy(call(sim)), call(cpu), err_msg=name)
    np.testing.assert_allclose(sim.to_numpy(sim.scan("logsumexp", lines, 1)),  # log1p, exp
                               cpu.scan("logsumexp", lines, 1), rtol=1e-14)    # may round
    for reduce in ("none", "sum", "prod", "amax", "amin"):
        np.testing.assert_allclose(sim.scatter(src[1:], 0, index, src, reduce),
                                   cpu.scatter(src[1:], 0, index, src, reduce), rtol=1e-12)
    for mode, gates in (("rnn_tanh", 1), ("rnn_relu", 1), ("lstm", 4), ("gru", 3)):
        gx = rng.standard_normal((3, gates * 8))[:, ::2]  # strided: copied contiguous
        gh = rng.standard_normal((3, gates * 4))
        state = None if gates == 1 else rng.standard_normal((3, 4))
        dh, dc = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
        got, want = sim.rnn_cell(mode, gx, gh, state), cpu.rnn_cell(mode, gx, gh, state)
        back = [b.rnn_cell_backward(mode, dh, dc if mode == "lstm" else None, state, out[2])
                for b, out in ((sim, got), (cpu, want))]
        for g, w in zip([*got, *back[0]], [*want, *back[1]]):
            if w is not None:
                np.testing.assert_allclose(sim.to_numpy(g), w, rtol=1e-12, err_msg=mode)
    sim.rand((3,), F32), sim.randn((3,), F64)
    inside = rng.uniform(0.1, 0.9, (3, 8))[:, ::2]  # strided; in every function's domain
    above = rng.uniform(1.2, 3.0, (3, 1))           # broadcast; zeta's s > 1
    for fn in SPECIAL_UNARY_FNS:
        np.testing.assert_allclose(sim.to_numpy(sim.unary(fn, inside)), cpu.unary(fn, inside),
                                   rtol=1e-9, atol=1e-12, err_msg=fn)
    for fn in SPECIAL_BINARY_FNS:
        np.testing.assert_allclose(sim.to_numpy(sim.binary(fn, above, inside)),
                                   cpu.binary(fn, above, inside), rtol=1e-9, err_msg=fn)
    assert sim._launch.launched == {(f, k) for f, names in KERNELS.items() for k in names}


@needs_opencl
def test_simulated_backend_passes_the_conformance_suite():
    code = ("import sys, pytest, shrew\n"
            f"sys.path.insert(0, {str(ROOT / 'tests')!r})\n"
            "from test_cuda_backend import simulated_cuda\n"
            "shrew.register_backend('cudasim', simulated_cuda)\n"
            "sys.exit(pytest.main(['--pyargs', 'shrew.testing.conformance', '-q',\n"
            "                      '-p', 'no:cacheprovider', '--shrew-device', 'cudasim']))\n")
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    report = run.stdout[-3000:]
    assert run.returncode == 0, report + run.stderr[-3000:]
    assert "device: cudasim:0" in report and "primitives not implemented: none" in report


# -- shrew.compile's fused kernels --------------------------------------------------------------
def exact_chain(x):
    """IEEE operations only: affine, + - * /, neg and square."""
    y = x * 1.01 + 0.1
    y = (y * y - y / 3.0) + (-y) * 0.5
    return (y / (y.square() + 1.0) * y).square().sum()


def transposed_chain(x):
    """exact_chain on a transposed view: results laid out as it is (columns first)."""
    return exact_chain(x.T)


def math_chain(x):
    """Every function the CUDA fuser takes, with the IEEE operations between them."""
    y = (x * 1.01 + 0.1).tanh().exp() * 0.5
    u = y.square() + 1.0
    z = u.log() + u.sqrt()
    return (-(z.sin() - z.cos() / (z + 2.0))).square().sum()


def check_fusion(device, chain, rtol):
    """chain compiled on `device`, over four calls (two captures, two replays), against eager:
    its loss and gradient bit for bit (rtol None) or within rtol (of the largest element
    where a gradient cancels to near 0); unfused, bit for bit.  The program runs fused
    kernels and fewer steps than the capture recorded."""
    x = shrew.tensor(np.linspace(-2, 2, 300, dtype=np.float32).reshape(10, 30), device=device,
                     requires_grad=True)

    def step():
        x.grad = None
        loss = chain(x)
        loss.backward()
        return loss
    expected = [t.numpy() for t in (step(), x.grad)]
    steps = {}
    for fusing in (True, False):
        compiled = shrew.compile(step, options={"fuse": fusing})
        for _ in range(4):
            for got, want in zip([t.numpy() for t in (compiled(), x.grad)], expected):
                if rtol is None or not fusing:
                    np.testing.assert_array_equal(got, want)
                else:
                    np.testing.assert_allclose(got, want, rtol=rtol,
                                               atol=rtol * np.abs(want).max())
        steps[fusing] = next(iter(compiled.entries.values())).program.forward
    assert fuse.compiler_missing("cuda") is None
    assert any("fuse_cuda" in s.method.__module__ for s in steps[True])
    assert len(steps[True]) < 0.6 * len(steps[False]), (len(steps[True]), len(steps[False]))


@needs_opencl
@pytest.mark.parametrize("chain, rtol", [(exact_chain, None), (transposed_chain, None),
                                         (math_chain, 1e-5)])
def test_simulated_cuda_fuses_elementwise_runs(isolated_registry, chain, rtol):
    """Exact where the fused kernel does IEEE operations only; the math functions run on
    OpenCL here but on numpy in eager, so they differ in the last bits (on a GPU both are
    CUDA's: bit for bit, below)."""
    shrew.register_backend("cudasim", simulated_cuda)
    check_fusion("cudasim", chain, rtol)


# -- the Philox RNG: one algorithm, written out in numpy --------------------------------------
_MASK = np.uint64(0xFFFFFFFF)


def philox4x32_10(counter: list, key: tuple) -> list:
    """Random123's Philox4x32-10: four 32-bit counter words (uint64 arrays) and a two-word key
    give four random words."""
    c = [np.asarray(w, np.uint64) for w in counter]
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    for _ in range(10):
        p0, p1 = np.uint64(0xD2511F53) * c[0], np.uint64(0xCD9E8D57) * c[2]
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ k0, p1 & _MASK, (p0 >> np.uint64(32)) ^ c[3] ^ k1,
             p0 & _MASK]
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & _MASK, (k1 + np.uint64(0xBB67AE85)) & _MASK
    return c


def reference_random(normal: bool, n: int, dtype, seed: int, counter: int = 0) -> np.ndarray:
    """random.cl in numpy: block t = counter + t gives 4 floats (or 2 doubles), uniforms from
    the top significand-width bits, normals by Box-Muller on pairs, computed in CT."""
    dtype = np.dtype(dtype)
    per_block = 2 if dtype.itemsize == 8 else 4
    block = np.arange(-(-n // per_block), dtype=np.uint64) + np.uint64(counter)
    key = seed % 2**64
    words = np.stack(philox4x32_10([block & _MASK, block >> np.uint64(32), 0, 0],
                                   (key & 0xFFFFFFFF, key >> 32)), axis=1)
    if dtype == F64:
        high, low = words[:, 0::2] >> np.uint64(5), words[:, 1::2] >> np.uint64(6)
        u, ct = ((high << np.uint64(26)) | low).astype(np.float64) * 2.0**-53, np.float64
    else:
        width = 11 if dtype == F16 else 24
        u = (words >> np.uint64(32 - width)).astype(np.float32) * np.float32(2.0**-width)
        ct = np.float32
    if normal:
        radius = np.sqrt(ct(-2) * np.log(ct(1) - u[:, 0::2]))
        angle = ct(6.283185307179586) * u[:, 1::2]
        u = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=-1)
    return u.reshape(-1)[:n].astype(dtype)


def check_random(backend, normal, shape, dtype, seed, counter=0):
    """backend's draw equals the reference: uniforms bit for bit (integer arithmetic and an
    exact scaling); normals to within 8 units in the last place, since each math library
    rounds log, sin and cos its own way (POCL's are within 3 of numpy's; CUDA documents
    1 to 2 for its own)."""
    draw = backend.randn if normal else backend.rand
    got = backend.to_numpy(draw(shape, dtype)).reshape(-1)
    want = reference_random(normal, got.size, dtype, seed, counter)
    what = f"{backend.device} {'randn' if normal else 'rand'} {shape} {dtype} seed {seed}"
    if normal:
        ulps = np.abs(got.astype(np.float64) - want) / np.spacing(np.abs(want)).astype(np.float64)
        assert ulps.max(initial=0) <= 8, f"{what}: {ulps.max()} ulps from the reference"
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def test_the_numpy_philox_gives_random123s_known_answers():
    answers = [  # (counter, key) -> words, from Random123's kat_vectors
        ([0, 0, 0, 0], (0, 0), [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
        ([0xFFFFFFFF] * 4, (0xFFFFFFFF, 0xFFFFFFFF),
         [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]),
        ([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344], (0xA4093822, 0x299F31D0),
         [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]),
    ]
    for counter, key, words in answers:
        assert [int(w) for w in philox4x32_10(counter, key)] == words


RNG_CASES = [((1,), 0), ((7,), 1), ((3, 5), 2**40 + 3), ((1001,), 2**64 - 1), ((2, 0), 5)]


def rng_draws(backend, dtypes):
    """Several draws in a row (the counter advancing), a reseed, and a restored state."""
    for dtype in dtypes:
        for shape, seed in RNG_CASES:
            backend.manual_seed(seed)
            check_random(backend, False, shape, dtype, seed)
            state = backend.get_rng_state()
            counter = state[1]
            check_random(backend, True, (5, 3), dtype, seed, counter)
            backend.set_rng_state(state)
            check_random(backend, True, (5, 3), dtype, seed, counter)


@needs_opencl
def test_the_opencl_backend_draws_the_reference_numbers():
    backend = opencl_factory(0)
    rng_draws(backend, [d for d in (F16, F32, F64) if d in backend.dtypes])


@needs_opencl
def test_the_cuda_backends_launches_draw_the_reference_numbers():
    backend = simulated_cuda()
    rng_draws(backend, [d for d in (F16, F32, F64) if d in backend.dtypes])


# -- on a GPU --------------------------------------------------------------------------------
@needs_gpu
def test_cuda_draws_the_reference_numbers():
    rng_draws(get_backend("cuda"), [F16, F32, F64])


@needs_gpu
@pytest.mark.parametrize("chain", [exact_chain, transposed_chain, math_chain])
def test_cuda_fuses_elementwise_runs_keeping_eagers_bits(chain):
    check_fusion("cuda", chain, None)


@needs_gpu
def test_cuda_passes_the_conformance_suite():
    run = subprocess.run([sys.executable, "-m", "pytest", "--pyargs", "shrew.testing.conformance",
                          "-q", "-p", "no:cacheprovider", "--shrew-device", "cuda"],
                         cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-5000:] + run.stderr[-3000:]


# -- casts as CuPy makes them ----------------------------------------------------------------
class _SaturatingArray(np.ndarray):
    """An array whose float -> unsigned cast gives 0 for negative values, as CuPy's does
    (C leaves it undefined; numpy's wraps on x86, which hid the difference)."""

    def astype(self, dtype, *args, **kwargs):
        dtype = np.dtype(dtype)
        plain = np.asarray(self)
        if plain.dtype.kind == "f" and dtype.kind == "u":
            return np.where(plain < 0, 0, plain).astype(dtype, *args, **kwargs)
        return plain.astype(dtype, *args, **kwargs)


def test_a_float_to_narrow_integer_cast_wraps_on_an_array_library_that_saturates():
    """The array-module backend casts float -> uint8/int8/int16 through int64, so CuPy gives
    PyTorch's (and numpy's, and cast.cl's) wrapped values: -1.5 -> 255 in uint8."""
    values = np.array([-1.5, -200.2, 3.9, 300.7], dtype=np.float32)
    backend = CPUBackend()
    for dtype in ("uint8", "int8", "int16"):
        got = backend.cast(values.view(_SaturatingArray), np.dtype(dtype))
        want = np.asarray(values.astype(np.int64).astype(dtype))
        np.testing.assert_array_equal(np.asarray(got), want)
    assert list(np.asarray(backend.cast(values.view(_SaturatingArray), np.dtype("uint8")))) \
        == [255, 56, 3, 44]
