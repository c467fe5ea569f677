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

import pytest

from shrew.backends.cuda.backend import CUDABackend
from shrew.backends.cuda.launch import compile_options, kernels, programs
from shrew.backends.kernels import source

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
        nvrtc = self.nvrtc
        program = self.ok(nvrtc.nvrtcCreateProgram(source(family, "cuda").encode(),
                                                   f"{family}.cu".encode(), 0, [], []))
        try:
            for name in kernels(family, dtype):
                self.ok(nvrtc.nvrtcAddNameExpression(program, name.encode()))
            options = [f"--gpu-architecture=compute_{arch}", f"-I{self.include}",
                       *compile_options(dtype), *CUPY_OPTIONS]
            status, = nvrtc.nvrtcCompileProgram(program, len(options),
                                                [o.encode() for o in options])
            log = bytearray(self.ok(nvrtc.nvrtcGetProgramLogSize(program)))
            self.ok(nvrtc.nvrtcGetProgramLog(program, log))
            log = log.rstrip(b"\0").decode()
            if status != nvrtc.nvrtcResult.NVRTC_SUCCESS:
                return log or repr(status), {}, ""
            lowered = {name: self.ok(nvrtc.nvrtcGetLoweredName(program, name.encode())).decode()
                       for name in kernels(family, dtype)}
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
