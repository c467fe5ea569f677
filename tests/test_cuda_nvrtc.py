"""Every CUDA program the backend can build compiles with NVRTC, with no warning.

For each (family, dtype) in launch.programs over the dtypes CUDABackend declares, the
family's CUDA source is compiled to PTX (no GPU needed) with launch.compile_options plus
the options CuPy adds, for the oldest and the newest architecture this NVRTC supports; every
kernel the backend launches from it must come out as an entry point under its own name
(extern "C": cupy.RawModule.get_function looks it up by that name).

NVRTC comes from the pip packages cuda-bindings and nvidia-cuda-nvrtc, and cuda_fp16.h
from nvidia-cuda-runtime (the test extra installs all three).  Without them this test
fails; set SHREW_ALLOW_NO_NVRTC=1 to skip it instead.
"""
from __future__ import annotations

import os
import re

import numpy as np
import pytest

from shrew.backends.cuda.backend import CUDABackend
from shrew.backends.cuda.launch import compile_options, kernels, programs
from shrew.backends.kernels import source, with_prelude
from shrew.compiler.capture import Call, Ref
from shrew.compiler.fuse import Run
from shrew.compiler.fuse_cuda import UNARY, CUDAFuser
from shrew.export.kernels import BINARY

PROGRAMS = programs(CUDABackend.dtypes)
# What cupy.RawModule (CuPy 14) adds to the backend's options besides include paths and the
# architecture: the kernels really build with these.
CUPY_OPTIONS = ("--std=c++17", "-ftz=true", "--device-as-default-execution-space")


class Toolchain:
    """NVRTC, the include directory holding cuda_fp16.h, and the architectures to target."""

    def __init__(self):
        from cuda.bindings import nvrtc
        from cuda.pathfinder import find_nvidia_header_directory
        self.nvrtc = nvrtc
        self.version = ".".join(map(str, self.ok(nvrtc.nvrtcVersion())))
        self.include = find_nvidia_header_directory("cudart")
        if self.include is None:
            raise RuntimeError("no cuda_fp16.h: pip install nvidia-cuda-runtime")
        archs = self.ok(nvrtc.nvrtcGetSupportedArchs())
        self.archs = sorted({min(archs), max(archs)})

    def ok(self, result):
        """The value of an NVRTC call's (status, value...) tuple; raises on a bad status."""
        status, *values = result
        if status != self.nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise RuntimeError(f"NVRTC: {status!r}")
        return values[0] if len(values) == 1 else values

    def compile(self, family, dtype, arch) -> tuple:
        """(log, lowered name of each kernel, PTX) of one family built as the backend builds it."""
        return self.build(source(family, "cuda"), kernels(family, dtype), compile_options(dtype),
                          arch)

    def build(self, text, names, backend_options, arch) -> tuple:
        """(log, lowered name of each kernel, PTX) of `text` built with the backend's options
        and CuPy's."""
        nvrtc = self.nvrtc
        program = self.ok(nvrtc.nvrtcCreateProgram(text.encode(), b"kernels.cu", 0, [], []))
        try:
            for name in names:
                self.ok(nvrtc.nvrtcAddNameExpression(program, name.encode()))
            options = [f"--gpu-architecture=compute_{arch}", f"-I{self.include}",
                       *backend_options, *CUPY_OPTIONS]
            status, = nvrtc.nvrtcCompileProgram(program, len(options),
                                                [o.encode() for o in options])
            log = bytearray(self.ok(nvrtc.nvrtcGetProgramLogSize(program)))
            self.ok(nvrtc.nvrtcGetProgramLog(program, log))
            log = log.rstrip(b"\0").decode()
            if status != nvrtc.nvrtcResult.NVRTC_SUCCESS:
                return log or repr(status), {}, ""
            lowered = {name: self.ok(nvrtc.nvrtcGetLoweredName(program, name.encode())).decode()
                       for name in names}
            ptx = bytearray(self.ok(nvrtc.nvrtcGetPTXSize(program)))
            self.ok(nvrtc.nvrtcGetPTX(program, ptx))
            return log, lowered, ptx.rstrip(b"\0").decode()
        finally:
            self.ok(nvrtc.nvrtcDestroyProgram(program))


@pytest.fixture(scope="module")
def toolchain():
    try:
        return Toolchain()
    except Exception as exc:  # not installed, or a library that does not load
        why = (f"NVRTC is not usable ({exc}); pip install -e '.[test]' installs cuda-bindings, "
               f"nvidia-cuda-nvrtc and nvidia-cuda-runtime")
        if os.environ.get("SHREW_ALLOW_NO_NVRTC") == "1":
            pytest.skip(why)
        pytest.fail(why)


@pytest.mark.parametrize("family, dtype", PROGRAMS, ids=[f"{f}-{d}" for f, d in PROGRAMS])
def test_kernels_compile_without_warnings_under_their_names(toolchain, family, dtype):
    for arch in toolchain.archs:
        what = f"{family}.cl for {dtype}, compute_{arch}, NVRTC {toolchain.version}"
        log, lowered, ptx = toolchain.compile(family, dtype, arch)
        assert not log, f"{what}:\n{log}"
        assert lowered == {name: name for name in kernels(family, dtype)}, what
        entries = set(re.findall(r"\.entry\s+(\w+)", ptx))
        assert set(kernels(family, dtype)) <= entries, f"{what}: PTX entries {sorted(entries)}"


def test_fused_kernels_compile_without_warnings_under_their_names(toolchain):
    """shrew.compile's fused kernels for CUDA (compiler/fuse_cuda.py): one run of every
    function it fuses, built as Launcher.generated builds it."""
    fuser = CUDAFuser(backend=None, missing=[])
    calls = [Call("unary", None, (fn, Ref(0)), (1,), False, None) for fn in UNARY]
    calls += [Call("binary", None, (fn, Ref(0), Ref(1)), (1,), False, None) for fn in BINARY]
    calls += [Call("affine", None, (Ref(0), mul, add), (1,), False, None)
              for mul, add in ((2.5, 0.0), (1.0, 0.1), (-1.0, 3.0), (1.01, -0.5))]
    lines = [f"const float t{n} = "  # each reads the last one's value, and a1
             f"{fuser.expression(call, [f't{n - 1}' if n else 'a0', 'a1'][:len(call.reads())])};"
             for n, call in enumerate(calls)]
    run = Run(calls, [0, 1], [False, True], [1], (4, 5), (20, 4))
    name = fuser.add(run, lines, {1: f"t{len(calls) - 1}"})
    text = fuser.text()
    for arch in toolchain.archs:
        log, lowered, ptx = toolchain.build(with_prelude(text, "cuda"), [name],
                                            compile_options(np.float32), arch)
        assert not log and lowered == {name: name}, log
        assert re.search(rf"\.entry\s+{name}\b", ptx)
