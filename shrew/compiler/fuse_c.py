"""The cpu backend's fuser: a program's fused runs as one CPython extension module.

Each kernel is a METH_FASTCALL function taking the input arrays and returning a tuple of
new float32 arrays: a call costs about as much as a numpy ufunc's (ctypes costs several
microseconds per pointer).  The module is built by the system's C compiler (`cc`, or $CC)
against Python's and numpy's headers with `-ffp-contract=off` (no fused multiply-adds:
numpy rounds each operation), cached on disk under a hash of its source
($SHREW_CACHE_DIR, else ~/.cache/shrew/compile) and imported.  Without a compiler or the
headers the build fails and the program replays unfused (fuse.compiler_missing() says why).
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import platform
import re
import shutil
import subprocess
import sysconfig
import tempfile
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

from ..export.kernels import BINARY, UNARY_FLOAT
from .capture import Call
from .fuse import Run

EXACT_UNARY = ("neg", "abs", "square", "relu", "sign", "floor", "ceil", "round")
"""The unary functions whose C expression rounds as numpy does (IEEE operations only)."""

SIGNED_ZERO = {"relu": "(a0 > 0.0f || a0 != a0) ? a0 : 0.0f",
               "sign": "a0 > 0.0f ? 1.0f : (a0 < 0.0f ? -1.0f : (a0 == 0.0f ? 0.0f : a0))"}
"""numpy's relu (maximum(x, 0)) and sign give +0.0 for -0.0."""

_modules: dict[str, Any] = {}


def array_module_expression(call: Call, operands: list[str]) -> str | None:
    """A binary or affine call's value in C (valid CUDA and OpenCL C too), in the order and
    with the roundings of the array-module backends (numpy on cpu, CuPy on cuda); None for
    other calls."""
    if call.name == "binary" and call.args[0] in BINARY:
        return _substitute(BINARY[call.args[0]], operands)
    if call.name == "affine":  # as array_module's affine: x * mul + add, or its parts
        x, (mul, add) = f"({operands[0]})", call.args[1:]
        m, a = f"{float(np.float32(mul))!r}f", f"{float(np.float32(add))!r}f"
        if add == 0:
            return f"{x} * {m}"
        if mul == 1:
            return f"{x} + {a}"
        if mul == -1:
            return f"{a} - {x}"
        return f"{x} * {m} + {a}"
    return None


def _substitute(template: str, operands: list[str]) -> str:
    """The template's a0, a1 replaced by the operands, in one pass (an operand may itself
    be named a0)."""
    return re.sub(r"\ba(\d)\b", lambda m: f"({operands[int(m.group(1))]})", template)


class CFuser:
    stride_unit = 4  # (numpy counts strides in bytes)

    def __init__(self, missing: list[str]) -> None:
        self.kernels: dict[str, str] = {}  # body -> name
        self.missing = missing

    def expression(self, call: Call, operands: list[str]) -> str | None:
        if call.name == "unary" and call.args[0] in EXACT_UNARY:
            fn = call.args[0]
            return _substitute(SIGNED_ZERO.get(fn) or UNARY_FLOAT[fn], operands)
        return array_module_expression(call, operands)

    def add(self, run: Run, lines: list[str], names: dict[int, str]) -> str:
        loads = [f"        const float a{k} = p{k}[{'0' if single else 'i'}];"
                 for k, single in enumerate(run.scalar)]
        stores = [f"        o{k}[i] = {names[s]};" for k, s in enumerate(run.outputs)]
        body = KERNEL.format(
            inputs=len(run.inputs), outputs=len(run.outputs), ndim=len(run.shape),
            dims=", ".join(str(d) for d in run.shape) or "1", size=int(np.prod(run.shape)),
            strides=", ".join(str(st) for st in run.strides) or "0",
            scalars=", ".join(str(int(x)) for x in run.scalar) or "0",
            pointers="".join(f"    const float *restrict p{k} = in[{k}];\n"
                             for k in range(len(run.inputs))),
            results="".join(f"    float *restrict o{k} = out[{k}];\n"
                            for k in range(len(run.outputs))),
            loop="\n".join(loads + [f"        {line}" for line in lines] + stores))
        return self.kernels.setdefault(body, f"k{len(self.kernels)}")

    def build(self) -> dict[str, Any] | None:
        if not self.kernels:
            return {}
        module = _build(self.kernels, self.missing)
        if module is None:
            return None
        return {name: getattr(module, name) for name in self.kernels.values()}


KERNEL = """\
{{
    static const npy_intp dims[] = {{{dims}}}, strides[] = {{{strides}}};
    static const int scalar[] = {{{scalars}}};
    const float *in[{inputs} + 1];
    float *out[{outputs}];
    PyObject *made[{outputs}], *held[{inputs} + 1];
    if (!take(args, nargs, {inputs}, scalar, {ndim}, dims, strides, in, held)) return NULL;
    if (!make({outputs}, {ndim}, dims, strides, made, out)) {{
        drop(held, {inputs});
        return NULL;
    }}
{pointers}{results}    for (npy_intp i = 0; i < {size}; ++i) {{
{loop}
    }}
    drop(held, {inputs});
    return result(made, {outputs});
}}
"""
"""One fused kernel: a METH_FASTCALL function of the input arrays returning a tuple of
new float32 arrays."""

PRELUDE = """\
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

/* A new float32 array laid out with `strides` (a dense permutation of the dims). */
static PyObject *laid_out(int ndim, const npy_intp *dims, const npy_intp *strides)
{
    return PyArray_New(&PyArray_Type, ndim, (npy_intp *)dims, NPY_FLOAT32,
                       (npy_intp *)strides, NULL, 0, 0, NULL);
}

/* Each input as a float32 array laid out as the kernel's outputs (a copy where it is not,
   which a settled program never needs; a single broadcast value is read where it is), with
   a reference held until the kernel is done: the kernel walks them all in memory order. */
static int take(PyObject *const *args, Py_ssize_t nargs, int n, const int *scalar, int ndim,
                const npy_intp *dims, const npy_intp *strides, const float **in,
                PyObject **held)
{
    if (nargs != n) {
        PyErr_Format(PyExc_TypeError, "fused kernel: %d arrays expected", n);
        return 0;
    }
    for (int k = 0; k < n; ++k) {
        PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(args[k], NPY_FLOAT32, 0, 0, 0);
        if (a && !scalar[k] && (PyArray_NDIM(a) != ndim || memcmp(
                PyArray_STRIDES(a), strides, ndim * sizeof(npy_intp)) != 0)) {
            PyArrayObject *copy = (PyArrayObject *)laid_out(ndim, dims, strides);
            if (copy && PyArray_CopyInto(copy, a) < 0) Py_CLEAR(copy);
            Py_DECREF(a);
            a = copy;
        }
        if (!a) { for (int j = 0; j < k; ++j) Py_DECREF(held[j]); return 0; }
        held[k] = (PyObject *)a;
        in[k] = (const float *)PyArray_DATA(a);
    }
    return 1;
}

static void drop(PyObject **held, int n)
{
    for (int k = 0; k < n; ++k) Py_DECREF(held[k]);
}

static int make(int n, int ndim, const npy_intp *dims, const npy_intp *strides,
                PyObject **made, float **out)
{
    for (int k = 0; k < n; ++k) {
        made[k] = laid_out(ndim, dims, strides);
        if (!made[k]) { for (int j = 0; j < k; ++j) Py_DECREF(made[j]); return 0; }
        out[k] = (float *)PyArray_DATA((PyArrayObject *)made[k]);
    }
    return 1;
}

static PyObject *result(PyObject **made, int n)
{
    PyObject *t = PyTuple_New(n);
    if (!t) { for (int k = 0; k < n; ++k) Py_DECREF(made[k]); return NULL; }
    for (int k = 0; k < n; ++k) PyTuple_SET_ITEM(t, k, made[k]);
    return t;
}
"""


def _source(module: str, kernels: dict[str, str]) -> str:
    functions = "".join(f"static PyObject *{name}(PyObject *self, PyObject *const *args, "
                        f"Py_ssize_t nargs)\n{body}\n" for body, name in kernels.items())
    table = "".join(f'    {{"{name}", (PyCFunction)(void (*)(void)){name}, METH_FASTCALL, '
                    f'NULL}},\n' for name in kernels.values())
    return (f"{PRELUDE}\n{functions}static PyMethodDef methods[] = {{\n{table}"
            f"    {{NULL, NULL, 0, NULL}}\n}};\n"
            f'static struct PyModuleDef def = {{PyModuleDef_HEAD_INIT, "{module}", NULL, -1, '
            f"methods}};\n"
            f"PyMODINIT_FUNC PyInit_{module}(void)\n{{\n    import_array();\n"
            f"    return PyModule_Create(&def);\n}}\n")


def _cache_dir() -> str:
    return os.environ.get("SHREW_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "shrew", "compile")


def _build(kernels: dict[str, str], missing: list[str]) -> Any:
    """The extension module holding `kernels`, compiled (or found in the cache) and
    imported; None (and the reason in compiler_missing()) where it cannot be built."""
    return load_extension("shrew_fused", repr(sorted(kernels.items())),
                          lambda module: _source(module, kernels), missing)


def load_extension(prefix: str, identity: str, source: Callable[[str], str],
                   missing: list[str]) -> Any:
    """The CPython extension module `source(name)` (C text defining PyInit_<name>), named
    `prefix` and a hash of `identity` and this machine, compiled (or found in the cache)
    and imported; None (and the reason appended to `missing`) where it cannot be built."""
    key = hashlib.sha256((identity + _machine()).encode()).hexdigest()[:20]
    if missing:
        return None  # (a compiler that failed once fails again)
    module = f"{prefix}_{key}"
    if module in _modules:
        return _modules[module]
    directory = _cache_dir()
    library = os.path.join(directory, module + sysconfig.get_config_var("EXT_SUFFIX"))
    if not os.path.exists(library):
        if not _compile(source(module), directory, library, missing):
            return None
    spec = importlib.util.spec_from_file_location(module, library)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    _modules[module] = loaded
    return loaded


@cache  # (read once: every module built or looked up in the cache asks)
def _machine() -> str:
    """What the cached modules were built for: they use this CPU's vector instructions
    (-march=native; still exact: IEEE operations, no fused multiply-adds), so a cache
    shared between machines keys them by CPU."""
    try:
        with open("/proc/cpuinfo") as f:
            lines = [ln for ln in f if ln.startswith(("model name", "flags"))][:2]
    except OSError:
        lines = []
    return platform.machine() + "".join(lines)


def _compile(source: str, directory: str, library: str, missing: list[str]) -> bool:
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    include = sysconfig.get_paths()["include"]
    if compiler is None:
        missing.append("no C compiler found (set CC, or install gcc or clang)")
        return False
    if not os.path.exists(os.path.join(include, "Python.h")):
        missing.append(f"Python's C headers are not installed (no {include}/Python.h)")
        return False
    os.makedirs(directory, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        path = os.path.join(tmp, "fused.c")
        with open(path, "w") as f:
            f.write(source)
        built = os.path.join(tmp, "fused.so")
        try:
            done = subprocess.run([compiler, "-O3", "-march=native", "-fPIC", "-shared",
                                   "-ffp-contract=off",
                                   f"-I{include}", f"-I{np.get_include()}", path, "-o", built],
                                  capture_output=True, text=True)
        except OSError as exc:
            missing.append(f"{compiler} failed to start: {exc}")
            return False
        if done.returncode != 0:
            missing.append(f"{compiler} failed: {done.stderr.strip()[:500]}")
            return False
        os.replace(built, library)  # atomic: another process may build the same module
    return True
