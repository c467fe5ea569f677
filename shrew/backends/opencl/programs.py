"""Builds each kernel family once per (context, dtype) and hands out its kernels."""
from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator

import numpy as np
import pyopencl as cl

from ..kernels import dtype_defines, source


@contextlib.contextmanager
def quiet_compiler() -> Iterator[None]:
    """Silences pyopencl's warning about a successful build's log: Intel's compiler logs
    every build ("Compilation started ...").  A failed build still raises with its log."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cl.CompilerWarning)
        yield


class Programs:
    """The compiled kernel families of one OpenCL context, built lazily on first use."""

    def __init__(self, context: cl.Context, device_defines: dict):
        self._context = context
        self._device_defines = device_defines
        self._programs: dict = {}
        self._kernels: dict = {}

    def kernel(self, family: str, dtype: np.dtype, name: str, args: tuple = ()) -> cl.Kernel:
        """The kernel `name`, its scalar argument types declared from a first launch's `args`
        (numpy scalars, and buffers): pyopencl then packs scalars itself, where converting an
        undeclared numpy scalar costs ~7 us per argument and launch."""
        key = (family, dtype, name)
        kernel = self._kernels.get(key)
        if kernel is None:
            kernel = cl.Kernel(self._program(family, dtype), name)
            if args:
                kernel.set_scalar_arg_dtypes([a.dtype if isinstance(a, np.generic) else None
                                              for a in args])
            self._kernels[key] = kernel
        return kernel

    def _program(self, family: str, dtype: np.dtype) -> cl.Program:
        key = (family, dtype)
        program = self._programs.get(key)
        if program is None:
            defines = {**self._device_defines, **dtype_defines(dtype)}
            options = [f"-D{name}={value}" for name, value in defines.items()]
            try:
                with quiet_compiler():
                    program = cl.Program(self._context, source(family)).build(options=options)
            except cl.Error as e:
                raise RuntimeError(f"building OpenCL kernels {family}.cl for {dtype} "
                                   f"failed:\n{e}") from e
            self._programs[key] = program
        return program
