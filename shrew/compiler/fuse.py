"""Fusing runs of elementwise primitives into one generated C loop (cpu backend, float32).

A run of consecutive elementwise calls (exact arithmetic: + - * /, affine, neg, abs,
square, relu, sign, rounding, the tanh and sigmoid gradients) on float32 arrays of one
shape becomes one C function: it reads each input once, keeps every intermediate in a
register, and writes only the values that something after the run reads.  Inputs that are
a single value broadcast (a scalar's gradient expanded) are passed as numbers.  The
arithmetic is the cpu backend's, operation by operation, in the same order and without
fused multiply-adds (`-ffp-contract=off`), so a fused program computes eager's bits.
Transcendental functions (exp, tanh, ...) are left to numpy's vectorised kernels: the C
library's are slower and round differently.

A program's kernels are written as one CPython extension module (each kernel a
METH_FASTCALL function taking the input arrays and returning new ones: a call costs about
as much as a numpy ufunc's, where ctypes costs several microseconds per pointer), built by
the system's C compiler (`cc`, or $CC) against Python's and numpy's headers, cached on disk
under a hash of the source ($SHREW_CACHE_DIR, else ~/.cache/shrew/compile) and imported.
Without a compiler or headers nothing is fused: the program replays its primitives one by
one, and `compiler_missing()` says why.
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sysconfig
import tempfile
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..export.kernels import BINARY, UNARY_FLOAT
from .capture import Call, Ref

MIN_RUN = 2
"""The shortest run worth a C call."""

_F32 = np.dtype(np.float32)
_modules: dict[str, Any] = {}
_missing: list[str] = []


def compiler_missing() -> str | None:
    """Why nothing is fused on this machine, or None."""
    return _missing[0] if _missing else None


EXACT_UNARY = ("neg", "abs", "square", "relu", "sign", "floor", "ceil", "round")
"""The unary functions whose C expression rounds as numpy does (IEEE operations only)."""


SIGNED_ZERO = {"relu": "(a0 > 0.0f || a0 != a0) ? a0 : 0.0f",
               "sign": "a0 > 0.0f ? 1.0f : (a0 < 0.0f ? -1.0f : (a0 == 0.0f ? 0.0f : a0))"}
"""numpy's relu (maximum(x, 0)) and sign give +0.0 for -0.0."""


def _expression(call: Call, operands: list[str]) -> str | None:
    """The C expression of one elementwise call over its storage operands, or None."""
    if call.name == "unary" and call.args[0] in EXACT_UNARY:
        fn = call.args[0]
        return _substitute(SIGNED_ZERO.get(fn) or UNARY_FLOAT[fn], operands)
    if call.name == "binary" and call.args[0] in BINARY:
        return _substitute(BINARY[call.args[0]], operands)
    if call.name == "affine":
        x, (mul, add) = operands[0], call.args[1:]
        m, a = f"{float(mul)!r}f", f"{float(add)!r}f"
        if add == 0:
            return f"{x} * {m}"
        if mul == 1:
            return f"{x} + {a}"
        if mul == -1:
            return f"{a} - {x}"
        return f"{x} * {m} + {a}"
    return None


def _substitute(template: str, operands: list[str]) -> str:
    for i, name in enumerate(operands):
        template = template.replace(f"a{i}", name)
    return template


def _slots(call: Call) -> list[int]:
    return [a.slot for a in call.args if isinstance(a, Ref)]


def fuse(calls: Sequence[Call], values: Sequence[Any], keep: set[int]) -> list[Call]:
    """`calls` with each run of fusable elementwise calls replaced by one fused call (all
    of them built into one extension module)."""
    if compiler_missing() is not None:
        return list(calls)
    last_read: dict[int, int] = {}
    for i, call in enumerate(calls):
        for slot in _slots(call):
            last_read[slot] = i
    out: list[Call] = []
    kernels: dict[str, str] = {}  # C body -> function name
    i = 0
    while i < len(calls):
        j = i
        shape = _run_shape(calls[i], values)
        while j < len(calls) and shape is not None and _run_shape(calls[j], values) == shape:
            j += 1
        if j - i >= MIN_RUN and shape is not None:
            fused = _fused(calls[i:j], values, keep, last_read, j, shape, kernels)
            if fused is not None:
                out.append(fused)
                i = j
                continue
        out.append(calls[i])
        i += 1
    if not kernels:
        return out
    module = _build(kernels)
    if module is None:
        return list(calls)
    return [dataclasses.replace(c, method=getattr(module, c.method)) if c.name == "fused" else c
            for c in out]


def _run_shape(call: Call, values: Sequence[Any]) -> tuple | None:
    """The shape of a fusable call's output (all its storage operands float32, of that shape
    or a broadcast single value), else None."""
    if type(call.backend).__name__ != "CPUBackend" or len(call.outputs) != 1:
        return None
    if _expression(call, ["x"] * len(_slots(call))) is None:
        return None
    out = values[call.outputs[0]]
    if out.dtype != _F32:
        return None
    for slot in _slots(call):
        v = values[slot]
        if v.dtype != _F32 or (v.shape != out.shape and not _single(v)):
            return None
    return tuple(out.shape)


def _single(v: Any) -> bool:
    """One value, broadcast or not."""
    return bool(v.size == 1 or (v.size and not any(v.strides)))


def _fused(run: Sequence[Call], values: Sequence[Any], keep: set[int],
           last_read: dict[int, int], end: int, shape: tuple, kernels: dict[str, str]
           ) -> Call | None:
    """One call for `run`, its method the name of its C function in `kernels`."""
    made = {s for call in run for s in call.outputs}
    inputs: list[int] = []
    for call in run:
        for slot in _slots(call):
            if slot not in made and slot not in inputs:
                inputs.append(slot)
    outputs = [s for call in run for s in call.outputs
               if s in keep or last_read.get(s, -1) >= end]
    if not outputs:
        return None
    scalar = [bool(values[s].shape != shape and _single(values[s])) for s in inputs]
    names = {s: (f"p{k}[0]" if scalar[k] else f"p{k}[i]") for k, s in enumerate(inputs)}
    lines = []
    for n, call in enumerate(run):
        lines.append(f"        const float t{n} = "
                     f"{_expression(call, [names[s] for s in _slots(call)])};")
        names[call.outputs[0]] = f"t{n}"
    lines += [f"        o{k}[i] = {names[s]};" for k, s in enumerate(outputs)]
    body = KERNEL.format(inputs=len(inputs), outputs=len(outputs), ndim=len(shape),
                         dims=", ".join(str(d) for d in shape) or "1",
                         size=int(np.prod(shape)),
                         scalars=", ".join(str(int(x)) for x in scalar) or "0",
                         pointers="".join(f"    const float *restrict p{k} = in[{k}];\n"
                                          for k in range(len(inputs))),
                         results="".join(f"    float *restrict o{k} = out[{k}];\n"
                                         for k in range(len(outputs))),
                         loop="\n".join(lines))
    name = kernels.setdefault(body, f"k{len(kernels)}")
    return Call("fused", name, tuple(Ref(s) for s in inputs), tuple(outputs), True,
                run[0].backend)


KERNEL = """\
{{
    static const npy_intp dims[] = {{{dims}}};
    static const int scalar[] = {{{scalars}}};
    const float *in[{inputs} + 1];
    float *out[{outputs}];
    PyObject *made[{outputs}], *held[{inputs} + 1];
    if (!take(args, nargs, {inputs}, scalar, in, held)) return NULL;
    if (!make({outputs}, {ndim}, dims, made, out)) {{ drop(held, {inputs}); return NULL; }}
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

/* Each input as a C-contiguous float32 array (a copy where it is not; a single broadcast
   value is read where it is), with a reference held until the kernel is done. */
static int take(PyObject *const *args, Py_ssize_t nargs, int n, const int *scalar,
                const float **in, PyObject **held)
{
    if (nargs != n) {
        PyErr_Format(PyExc_TypeError, "fused kernel: %d arrays expected", n);
        return 0;
    }
    for (int k = 0; k < n; ++k) {
        PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(
            args[k], NPY_FLOAT32, 0, 0, scalar[k] ? 0 : NPY_ARRAY_C_CONTIGUOUS);
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

static int make(int n, int ndim, const npy_intp *dims, PyObject **made, float **out)
{
    for (int k = 0; k < n; ++k) {
        made[k] = PyArray_SimpleNew(ndim, (npy_intp *)dims, NPY_FLOAT32);
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


def _build(kernels: dict[str, str]) -> Any:
    """The extension module holding `kernels`, compiled (or found in the cache) and
    imported; None (and the reason in compiler_missing()) where it cannot be built."""
    key = hashlib.sha256(repr(sorted(kernels.items())).encode()).hexdigest()[:20]
    if key in _modules:
        return _modules[key]
    module = f"shrew_fused_{key}"
    directory = _cache_dir()
    library = os.path.join(directory, module + sysconfig.get_config_var("EXT_SUFFIX"))
    if not os.path.exists(library):
        if not _compile(_source(module, kernels), directory, library):
            return None
    spec = importlib.util.spec_from_file_location(module, library)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    _modules[key] = loaded
    return loaded


def _compile(source: str, directory: str, library: str) -> bool:
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    include = sysconfig.get_paths()["include"]
    if compiler is None:
        _missing.append("no C compiler found (set CC, or install gcc or clang)")
        return False
    if not os.path.exists(os.path.join(include, "Python.h")):
        _missing.append(f"Python's C headers are not installed (no {include}/Python.h)")
        return False
    os.makedirs(directory, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        path = os.path.join(tmp, "fused.c")
        with open(path, "w") as f:
            f.write(source)
        built = os.path.join(tmp, "fused.so")
        try:
            done = subprocess.run([compiler, "-O2", "-fPIC", "-shared", "-ffp-contract=off",
                                   f"-I{include}", f"-I{np.get_include()}", path, "-o", built],
                                  capture_output=True, text=True)
        except OSError as exc:
            _missing.append(f"{compiler} failed to start: {exc}")
            return False
        if done.returncode != 0:
            _missing.append(f"{compiler} failed: {done.stderr.strip()[:500]}")
            return False
        os.replace(built, library)  # atomic: another process may build the same module
    return True
