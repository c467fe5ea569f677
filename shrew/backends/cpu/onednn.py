"""oneDNN (libdnnl, the ``onednn-cpu-gomp`` wheel) through its C API, by ctypes.

The cpu backend calls the functions at the bottom of this module for its convolutions,
average pooling, and large softmax, layer norm and GELU.  Each returns ``NotImplemented``
where oneDNN cannot serve the call (library not installed or switched off, a dtype other
than float32, an empty dimension, a geometry no implementation takes), and the caller
then runs its numpy code.

How a call runs:

- A primitive descriptor, its primitive and one memory object per argument are created
  once per (kind, shapes, parameters, dtype) and kept in a bounded LRU cache
  (``CACHE_SIZE`` entries; evicted entries free their oneDNN objects).
- numpy buffers are handed over zero-copy (``dnnl_memory_set_data_handle``) as plain
  row-major memory (nchw data, oihw or goihw weights).  A convolution is created with
  format ``any``: oneDNN picks its blocked layouts (nChw8c, ...) and its direct
  ``jit:avx2``/``avx512`` kernels, and the primitive keeps buffers in those layouts with
  a reorder from and to the numpy buffers, run in the same call.  Plain layouts would
  skip the reorders but get oneDNN's im2col + GEMM kernel instead, measured 2-5x slower
  on the cnn_step shapes (benchmarks/README.md).  Pooling keeps the plain layouts (its
  nchw kernel).  oneDNN's scratchpad is its own (library mode).
- oneDNN runs on the OpenMP (libgomp) threads of its gomp build; their number is
  ``set_num_threads``'s, else OMP_NUM_THREADS, else the core count, and they sleep when
  idle (OMP_WAIT_POLICY=PASSIVE unless set) so as not to hold the cores OpenBLAS's
  threads need next (see docs/architecture.md, "The oneDNN path").

The library is looked up next to the Python environment (where the wheel puts it), then
on the loader's path; SHREW_ONEDNN_LIBRARY names it explicitly.  oneDNN's primitives are
deterministic for a fixed thread count: the same inputs give the same bits.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import math
import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ...errors import ShrewError

CACHE_SIZE = 128
"""Most primitives kept at once; a training loop uses a few per convolution layer."""

# Values from dnnl_types.h / dnnl_common_types.h (oneDNN 3.x).
_SUCCESS, _UNIMPLEMENTED = 0, 3
_F32 = 3
_CPU = 1
_STREAM_IN_ORDER = 1
_FORMAT_ANY = 1
_PLAIN_TAG_OFFSET = 1               # dnnl_a = 2, dnnl_ab = 3, ...: ndims + 1
_FORWARD_TRAINING, _FORWARD_INFERENCE = 64, 96
_CONVOLUTION_DIRECT = 0x1
POOL_MAX, POOL_AVG_INCLUDE, POOL_AVG_EXCLUDE = 0x1ff, 0x2ff, 0x3ff
GELU_TANH, GELU_ERF = 0x2b, 0x31     # dnnl_eltwise_gelu_tanh, dnnl_eltwise_gelu_erf
_SOFTMAX = 0x30000                  # dnnl_softmax_accurate
_NORMALIZATION_FLAGS_NONE = 0
_QUERY_WORKSPACE_MD, _QUERY_EXEC_ARG_MD = 135, 255
_ARG_SRC, _ARG_DST, _ARG_WEIGHTS, _ARG_WORKSPACE = 1, 17, 33, 64
_ARG_DIFF_SRC, _ARG_DIFF_DST, _ARG_DIFF_WEIGHTS = 129, 145, 161
_ARG_MEAN, _ARG_VARIANCE = 49, 50
_ARG_FROM, _ARG_TO = 1, 17
_INPUTS = frozenset((_ARG_SRC, _ARG_WEIGHTS, _ARG_DIFF_DST))
_MAX_NDIMS = 12

_Dims = ctypes.c_int64 * _MAX_NDIMS
_P = ctypes.c_void_p
_ALLOCATE = _P(2**64 - 1)           # DNNL_MEMORY_ALLOCATE: the library owns the buffer


class _ExecArg(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_int), ("memory", _P)]


class OneDNNError(RuntimeError):
    """oneDNN failed where it should not (not for unsupported geometries: those decline)."""


def _library_path() -> str | None:
    explicit = os.environ.get("SHREW_ONEDNN_LIBRARY")
    if explicit:
        return explicit
    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix)):
        candidate = Path(prefix) / "lib" / "libdnnl.so.3"
        if candidate.exists():
            return str(candidate)
    return ctypes.util.find_library("dnnl")


def _declare(lib: ctypes.CDLL) -> None:
    """argtypes and restype of the functions used here (from dnnl.h, dnnl_common.h)."""
    status = ctypes.c_int
    table = {
        "dnnl_engine_create": (status, [ctypes.POINTER(_P), ctypes.c_int, ctypes.c_size_t]),
        "dnnl_stream_create": (status, [ctypes.POINTER(_P), _P, ctypes.c_uint]),
        "dnnl_stream_wait": (status, [_P]),
        "dnnl_memory_desc_create_with_tag": (
            status, [ctypes.POINTER(_P), ctypes.c_int, _Dims, ctypes.c_int, ctypes.c_int]),
        "dnnl_memory_desc_destroy": (status, [_P]),
        "dnnl_memory_desc_get_size": (ctypes.c_size_t, [_P]),
        "dnnl_memory_desc_equal": (ctypes.c_int, [_P, _P]),
        "dnnl_reorder_primitive_desc_create": (status, [ctypes.POINTER(_P), _P, _P, _P, _P, _P]),
        "dnnl_memory_create": (status, [ctypes.POINTER(_P), _P, _P, _P]),
        "dnnl_memory_set_data_handle": (status, [_P, _P]),
        "dnnl_memory_destroy": (status, [_P]),
        "dnnl_convolution_forward_primitive_desc_create": (
            status, [ctypes.POINTER(_P), _P, ctypes.c_int, ctypes.c_int, _P, _P, _P, _P,
                     _Dims, _Dims, _Dims, _Dims, _P]),
        "dnnl_convolution_backward_data_primitive_desc_create": (
            status, [ctypes.POINTER(_P), _P, ctypes.c_int, _P, _P, _P,
                     _Dims, _Dims, _Dims, _Dims, _P, _P]),
        "dnnl_convolution_backward_weights_primitive_desc_create": (
            status, [ctypes.POINTER(_P), _P, ctypes.c_int, _P, _P, _P, _P,
                     _Dims, _Dims, _Dims, _Dims, _P, _P]),
        "dnnl_pooling_forward_primitive_desc_create": (
            status, [ctypes.POINTER(_P), _P, ctypes.c_int, ctypes.c_int, _P, _P,
                     _Dims, _Dims, _Dims, _Dims, _Dims, _P]),
        "dnnl_pooling_backward_primitive_desc_create": (
            status, [ctypes.POINTER(_P), _P, ctypes.c_int, _P, _P,
                     _Dims, _Dims, _Dims, _Dims, _Dims, _P, _P]),
        "dnnl_eltwise_forward_primitive_desc_create": (
            status, [ctypes.POINTER(_P), _P, ctypes.c_int, ctypes.c_int, _P, _P,
                     ctypes.c_float, ctypes.c_float, _P]),
        "dnnl_softmax_forward_primitive_desc_create": (
            status, [ctypes.POINTER(_P), _P, ctypes.c_int, ctypes.c_int, _P, _P, ctypes.c_int,
                     _P]),
        "dnnl_layer_normalization_forward_primitive_desc_create": (
            status, [ctypes.POINTER(_P), _P, ctypes.c_int, _P, _P, _P, ctypes.c_float,
                     ctypes.c_uint, _P]),
        "dnnl_primitive_desc_query_md": (_P, [_P, ctypes.c_int, ctypes.c_int]),
        "dnnl_primitive_desc_query": (status, [_P, ctypes.c_int, ctypes.c_int, _P]),
        "dnnl_primitive_desc_destroy": (status, [_P]),
        "dnnl_primitive_create": (status, [ctypes.POINTER(_P), _P]),
        "dnnl_primitive_execute": (status, [_P, _P, ctypes.c_int, ctypes.POINTER(_ExecArg)]),
        "dnnl_primitive_destroy": (status, [_P]),
    }
    for name, (restype, argtypes) in table.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes


class _Version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_int), ("minor", ctypes.c_int), ("patch", ctypes.c_int),
                ("hash", ctypes.c_char_p), ("cpu_runtime", ctypes.c_uint),
                ("gpu_runtime", ctypes.c_uint)]


_RUNTIME_OMP = 2


class _Runtime:
    """The loaded library, its CPU engine and stream, and libgomp's thread control."""

    def __init__(self, lib: ctypes.CDLL):
        # The declarations below are oneDNN 3's C API, and the thread control is
        # libgomp's: another major version or threading runtime is not used at all.
        lib.dnnl_version.restype = ctypes.POINTER(_Version)
        found = lib.dnnl_version().contents
        self.version = f"{found.major}.{found.minor}.{found.patch}"
        if found.major != 3 or found.cpu_runtime != _RUNTIME_OMP:
            raise OSError(f"oneDNN {self.version} with CPU runtime {found.cpu_runtime}: "
                          f"shrew uses oneDNN 3 built with OpenMP (onednn-cpu-gomp)")
        _declare(lib)
        self.lib = lib
        self.engine, self.stream = _P(), _P()
        _check(lib.dnnl_engine_create(ctypes.byref(self.engine), _CPU, 0), "engine_create")
        _check(lib.dnnl_stream_create(ctypes.byref(self.stream), self.engine,
                                      _STREAM_IN_ORDER), "stream_create")
        # libdnnl's gomp build links libgomp.so.1: this finds the copy already loaded.
        self.omp = ctypes.CDLL("libgomp.so.1")
        self.omp.omp_set_num_threads.argtypes = [ctypes.c_int]
        self.omp.omp_get_max_threads.restype = ctypes.c_int


def _check(status: int, what: str) -> None:
    if status != _SUCCESS:
        raise OneDNNError(f"oneDNN {what} failed with status {status}")


_runtime: _Runtime | None = None
_load_error: str | None = None
_loaded = False
_lock = threading.RLock()


def _load() -> _Runtime | None:
    global _runtime, _load_error, _loaded
    if not _loaded:
        with _lock:
            if not _loaded:
                path = _library_path()
                try:
                    if path is None:
                        raise OSError("libdnnl.so.3 not found (pip install shrew[cpu-fast])")
                    # Idle OpenMP threads sleep instead of spinning, so that they leave
                    # the cores to OpenBLAS's threads between two convolutions (measured:
                    # a conv and a GEMM alternating cost 1.2-1.35x their sum spinning,
                    # 1.0-1.05x passive; benchmarks/README.md).  libgomp reads it once,
                    # when it loads; a value the user set is kept.
                    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
                    _runtime = _Runtime(ctypes.CDLL(path))
                except (OSError, AttributeError, OneDNNError) as exc:
                    _load_error = str(exc)
                _loaded = True
    return _runtime


def load_error() -> str | None:
    """Why oneDNN could not be loaded (it is tried on the first call), or None."""
    _load()
    return _load_error


# -- the switch ----------------------------------------------------------------------------
_OFF = ("0", "false", "off", "no")
_enabled = os.environ.get("SHREW_CPU_ONEDNN", "1").strip().lower() not in _OFF


def available() -> bool:
    """Whether oneDNN serves the cpu backend now: loaded and switched on."""
    return _enabled and _load() is not None


def set_enabled(flag: bool) -> bool:
    """Switch the oneDNN path on or off for the whole process; returns the old setting."""
    global _enabled
    old, _enabled = _enabled, bool(flag)
    return old


# -- threads -------------------------------------------------------------------------------
def set_num_threads(n: int) -> None:
    """Set the number of OpenMP threads oneDNN's primitives run on.  It is an OpenMP
    setting of the calling thread: call it from the thread that runs the model."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ShrewError(f"set_num_threads: expected an int >= 1, got {n!r}")
    runtime = _load()
    if runtime is not None:
        runtime.omp.omp_set_num_threads(n)


def get_num_threads() -> int | None:
    """oneDNN's OpenMP thread count, or None where oneDNN is not loaded."""
    runtime = _load()
    return None if runtime is None else runtime.omp.omp_get_max_threads()


# -- primitives and their cache --------------------------------------------------------------
class _Primitive:
    """One primitive, ready to run on numpy buffers in plain layouts.

    ``descs`` maps each argument (DNNL_ARG_*) to its shape.  Where the primitive chose a
    layout of its own for an argument (the descriptor was made with format ``any``), a
    buffer in that layout is kept here with a reorder from (inputs) or to (outputs) the
    plain numpy buffer; where it kept the plain layout, the numpy buffer is used as is.
    ``workspace`` is the byte size of the workspace (max pooling), 0 if none."""

    def __init__(self, runtime: _Runtime, pd: _P, descs: dict, hint: _P | None = None):
        self.lib, self.runtime = runtime.lib, runtime
        self.pd: _P | None = pd
        self.hint = hint
        self.busy = threading.Lock()  # held by the one call using its buffers (_using)
        self.owned: list = []       # (destroy function name, handle), freed by close()
        self.user: list = []        # (arg, memory object that takes the numpy buffer)
        try:
            primitive = self._own("dnnl_primitive_destroy", _P())
            _check(self.lib.dnnl_primitive_create(ctypes.byref(primitive), pd),
                   "primitive_create")
            ws_md = self.lib.dnnl_primitive_desc_query_md(pd, _QUERY_WORKSPACE_MD, 0)
            self.workspace = self.lib.dnnl_memory_desc_get_size(ws_md) if ws_md else 0
            before: list = []
            after: list = []
            main_args: list = []
            for arg, shape in descs.items():
                main_args.append((arg, self._bind(arg, shape, before, after)))
            if self.workspace:
                main_args.append((_ARG_WORKSPACE, self._memory(ws_md, None, user=_ARG_WORKSPACE)))
            self.steps = [*before, (primitive, _exec_args(main_args)), *after]
        except BaseException:
            self._free()
            raise

    def _own(self, destroy: str, handle: _P) -> _P:
        self.owned.append((destroy, handle))
        return handle

    def _memory(self, md: _P, handle, user: int | None = None) -> _P:
        memory = self._own("dnnl_memory_destroy", _P())
        _check(self.lib.dnnl_memory_create(ctypes.byref(memory), md, self.runtime.engine,
                                           handle), "memory_create")
        if user is not None:
            self.user.append((user, memory))
        return memory

    def _bind(self, arg: int, shape: tuple, before: list, after: list) -> _P:
        """The memory object the primitive reads or writes for `arg`: the numpy buffer's
        own, or a buffer in the primitive's layout with its reorder queued."""
        lib = self.lib
        plain = self._own("dnnl_memory_desc_destroy", _md(lib, shape, any_layout=False))
        user = self._memory(plain, None, user=arg)
        chosen = lib.dnnl_primitive_desc_query_md(self.pd, _QUERY_EXEC_ARG_MD, arg)
        if lib.dnnl_memory_desc_equal(chosen, plain):
            return user
        inner = self._memory(chosen, _ALLOCATE)
        if arg in _INPUTS:
            src_md, dst_md, src, dst, queue = plain, chosen, user, inner, before
        else:
            src_md, dst_md, src, dst, queue = chosen, plain, inner, user, after
        engine = self.runtime.engine
        reorder_pd = self._own("dnnl_primitive_desc_destroy", _P())
        _check(lib.dnnl_reorder_primitive_desc_create(ctypes.byref(reorder_pd), src_md, engine,
                                                      dst_md, engine, None),
               "reorder_primitive_desc_create")
        reorder = self._own("dnnl_primitive_destroy", _P())
        _check(lib.dnnl_primitive_create(ctypes.byref(reorder), reorder_pd), "primitive_create")
        queue.append((reorder, _exec_args([(_ARG_FROM, src), (_ARG_TO, dst)])))
        return inner

    def run(self, buffers: dict) -> None:
        """Execute on the numpy arrays of `buffers` (DNNL_ARG_* -> C-contiguous array);
        the caller holds ``busy`` (see _using)."""
        lib, stream = self.lib, self.runtime.stream
        for arg, memory in self.user:
            _check(lib.dnnl_memory_set_data_handle(memory, buffers[arg].ctypes.data),
                   "memory_set_data_handle")
        for primitive, args in self.steps:
            _check(lib.dnnl_primitive_execute(primitive, stream, len(args), args),
                   "primitive_execute")
        _check(lib.dnnl_stream_wait(stream), "stream_wait")

    def close(self) -> None:
        with self.busy:      # not while another thread runs it
            self._free()

    def _free(self) -> None:
        for destroy, handle in reversed(self.owned):
            if handle:
                getattr(self.lib, destroy)(handle)
        for pd in (self.pd, self.hint):
            if pd:
                self.lib.dnnl_primitive_desc_destroy(pd)
        self.owned, self.user, self.pd, self.hint = [], [], None, None


def _exec_args(pairs: list):
    args = (_ExecArg * len(pairs))()
    for i, (arg, memory) in enumerate(pairs):
        args[i].arg, args[i].memory = arg, memory
    return args


def _md(lib: ctypes.CDLL, shape: tuple, any_layout: bool) -> _P:
    md = _P()
    tag = _FORMAT_ANY if any_layout else len(shape) + _PLAIN_TAG_OFFSET
    _check(lib.dnnl_memory_desc_create_with_tag(ctypes.byref(md), len(shape), _Dims(*shape),
                                                _F32, tag), "memory_desc_create_with_tag")
    return md


_cache: OrderedDict = OrderedDict()   # key -> _Primitive, or None: no implementation


def cache_info() -> dict:
    """{"entries": primitives cached now (declined geometries included), "capacity": ...}."""
    return {"entries": len(_cache), "capacity": CACHE_SIZE}


def clear_cache() -> None:
    """Free every cached primitive."""
    with _lock:
        while _cache:
            _, entry = _cache.popitem()
            if entry is not None:
                entry.close()


@contextmanager
def _using(key: tuple, make) -> Iterator[_Primitive | None]:
    """The primitive for `key`, made by make(runtime) on a miss, held for this thread
    until the block ends (so that no eviction frees it meanwhile); None if oneDNN has no
    implementation for it (remembered too)."""
    with _lock:
        if key in _cache:
            _cache.move_to_end(key)
            entry = _cache[key]
        else:
            entry = _cache[key] = make(_runtime)
            while len(_cache) > max(CACHE_SIZE, 1):   # never the entry just made
                _, old = _cache.popitem(last=False)
                if old is not None:
                    old.close()   # waits for a thread still using it
        if entry is not None:
            entry.busy.acquire()
    try:
        yield entry
    finally:
        if entry is not None:
            entry.busy.release()


def _execute(key: tuple, make, buffers: dict) -> bool:
    """Run the primitive for `key` (see _using) on `buffers`; False where oneDNN has no
    implementation for it."""
    with _using(key, make) as prim:
        if prim is None:
            return False
        prim.run(buffers)
        return True


def _create_pd(fn, *args) -> _P | None:
    """A primitive descriptor from fn(&pd, *args), or None where oneDNN has no
    implementation for these arguments."""
    pd = _P()
    status = fn(ctypes.byref(pd), *args)
    if status in (_UNIMPLEMENTED, 2):   # unimplemented, or a geometry it rejects
        return None
    _check(status, getattr(fn, "__name__", "primitive_desc_create"))
    return pd


def _with_mds(lib, shapes, any_layout, body):
    """body(*memory descriptors of shapes), the descriptors freed afterwards."""
    mds = [_md(lib, s, any_layout) for s in shapes]
    try:
        return body(*mds)
    finally:
        for md in mds:
            lib.dnnl_memory_desc_destroy(md)


def _usable(*arrays: np.ndarray) -> bool:
    return (available() and all(a.dtype == np.float32 for a in arrays)
            and all(a.size for a in arrays))


# -- convolution ---------------------------------------------------------------------------
def _conv_params(x_hw, w_hw, out_hw, stride, padding, dilation):
    """oneDNN's strides, dilates (dilation - 1), padding_l and padding_r (the right or
    bottom padding that makes the output size come out as out_hw: PyTorch's floor)."""
    right = [(o - 1) * s + (k - 1) * d + 1 - i - p
             for i, k, o, s, p, d in zip(x_hw, w_hw, out_hw, stride, padding, dilation)]
    return (_Dims(*stride), _Dims(*(d - 1 for d in dilation)), _Dims(*padding), _Dims(*right))


def _weights_shape(w_shape: tuple, groups: int) -> tuple:
    o, c, kh, kw = w_shape
    return w_shape if groups == 1 else (groups, o // groups, c, kh, kw)


def conv_output_hw(x_hw, w_hw, stride, padding, dilation) -> tuple:
    return tuple((i + 2 * p - d * (k - 1) - 1) // s + 1
                 for i, k, s, p, d in zip(x_hw, w_hw, stride, padding, dilation))


def _conv_key(kind, x_shape, w_shape, stride, padding, dilation, groups):
    return (kind, tuple(x_shape), tuple(w_shape), tuple(stride), tuple(padding),
            tuple(dilation), groups)


def _conv_forward_pd(runtime, x_shape, w_shape, y_shape, params, groups):
    lib = runtime.lib
    return _with_mds(lib, (x_shape, _weights_shape(w_shape, groups), y_shape), True,
                     lambda x_md, w_md, y_md: _create_pd(
                         lib.dnnl_convolution_forward_primitive_desc_create, runtime.engine,
                         _FORWARD_TRAINING, _CONVOLUTION_DIRECT, x_md, w_md, None, y_md,
                         *params, None))


def _make_conv(kind, x_shape, w_shape, stride, padding, dilation, groups):
    """make(runtime) for the cache: the forward, backward-data or backward-weights primitive."""
    y_shape = (x_shape[0], w_shape[0],
               *conv_output_hw(x_shape[2:], w_shape[2:], stride, padding, dilation))
    params = _conv_params(x_shape[2:], w_shape[2:], y_shape[2:], stride, padding, dilation)
    gw_shape = _weights_shape(w_shape, groups)

    def make(runtime):
        lib = runtime.lib
        fwd = _conv_forward_pd(runtime, x_shape, w_shape, y_shape, params, groups)
        if fwd is None:
            return None
        if kind == "forward":
            return _Primitive(runtime, fwd, {_ARG_SRC: x_shape, _ARG_WEIGHTS: gw_shape,
                                             _ARG_DST: y_shape})
        if kind == "backward_data":
            pd = _with_mds(lib, (x_shape, gw_shape, y_shape), True,
                           lambda dx_md, w_md, dy_md: _create_pd(
                               lib.dnnl_convolution_backward_data_primitive_desc_create,
                               runtime.engine, _CONVOLUTION_DIRECT, dx_md, w_md, dy_md,
                               *params, fwd, None))
            descs = {_ARG_DIFF_DST: y_shape, _ARG_WEIGHTS: gw_shape, _ARG_DIFF_SRC: x_shape}
        else:
            pd = _with_mds(lib, (x_shape, gw_shape, y_shape), True,
                           lambda x_md, dw_md, dy_md: _create_pd(
                               lib.dnnl_convolution_backward_weights_primitive_desc_create,
                               runtime.engine, _CONVOLUTION_DIRECT, x_md, dw_md, None, dy_md,
                               *params, fwd, None))
            descs = {_ARG_SRC: x_shape, _ARG_DIFF_DST: y_shape, _ARG_DIFF_WEIGHTS: gw_shape}
        if pd is None:
            lib.dnnl_primitive_desc_destroy(fwd)
            return None
        return _Primitive(runtime, pd, descs, hint=fwd)
    return make


def conv2d(x, w, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
    """x [N, C, H, W] cross-correlated with w [O, C/groups, kh, kw], zero padding ->
    [N, O, Ho, Wo] (float32), or NotImplemented."""
    if not _usable(x, w):
        return NotImplemented
    key = _conv_key("forward", x.shape, w.shape, stride, padding, dilation, groups)
    make = _make_conv("forward", x.shape, w.shape, stride, padding, dilation, groups)
    out_hw = conv_output_hw(x.shape[2:], w.shape[2:], stride, padding, dilation)
    y = np.empty((x.shape[0], w.shape[0], *out_hw), dtype=np.float32)
    ran = _execute(key, make, {_ARG_SRC: np.ascontiguousarray(x),
                               _ARG_WEIGHTS: np.ascontiguousarray(w), _ARG_DST: y})
    return y if ran else NotImplemented


def conv2d_backward_data(g, w, x_shape, stride=(1, 1), padding=(0, 0), dilation=(1, 1),
                         groups=1):
    """d(loss)/dx of conv2d, [N, C, H, W] = x_shape, given g = d(loss)/d(output); or
    NotImplemented."""
    if not _usable(g, w) or 0 in x_shape:
        return NotImplemented
    key = _conv_key("backward_data", x_shape, w.shape, stride, padding, dilation, groups)
    make = _make_conv("backward_data", tuple(x_shape), w.shape, stride, padding, dilation,
                      groups)
    dx = np.empty(x_shape, dtype=np.float32)
    ran = _execute(key, make, {_ARG_DIFF_DST: np.ascontiguousarray(g),
                               _ARG_WEIGHTS: np.ascontiguousarray(w), _ARG_DIFF_SRC: dx})
    return dx if ran else NotImplemented


def conv2d_backward_weights(x, g, w_shape, stride=(1, 1), padding=(0, 0), dilation=(1, 1),
                            groups=1):
    """d(loss)/dw of conv2d, of shape w_shape [O, C/groups, kh, kw], given g; or
    NotImplemented."""
    if not _usable(x, g) or 0 in w_shape:
        return NotImplemented
    key = _conv_key("backward_weights", x.shape, w_shape, stride, padding, dilation, groups)
    make = _make_conv("backward_weights", x.shape, tuple(w_shape), stride, padding, dilation,
                      groups)
    dw = np.empty(w_shape, dtype=np.float32)
    ran = _execute(key, make, {_ARG_SRC: np.ascontiguousarray(x),
                               _ARG_DIFF_DST: np.ascontiguousarray(g), _ARG_DIFF_WEIGHTS: dw})
    return dw if ran else NotImplemented


# -- pooling -------------------------------------------------------------------------------
def _pool_params(x_hw, out_hw, kernel, stride, padding):
    right = [(o - 1) * s + k - i - p
             for i, k, o, s, p in zip(x_hw, kernel, out_hw, stride, padding)]
    return (_Dims(*stride), _Dims(*kernel), _Dims(0, 0), _Dims(*padding), _Dims(*right))


def _make_pool(backward, alg, x_shape, y_shape, kernel, stride, padding):
    params = _pool_params(x_shape[2:], y_shape[2:], kernel, stride, padding)

    def make(runtime):
        lib = runtime.lib
        fwd = _with_mds(lib, (x_shape, y_shape), False, lambda x_md, y_md: _create_pd(
            lib.dnnl_pooling_forward_primitive_desc_create, runtime.engine,
            _FORWARD_TRAINING, alg, x_md, y_md, *params, None))
        if fwd is None:
            return None
        if not backward:
            return _Primitive(runtime, fwd, {_ARG_SRC: x_shape, _ARG_DST: y_shape})
        pd = _with_mds(lib, (x_shape, y_shape), False, lambda dx_md, dy_md: _create_pd(
            lib.dnnl_pooling_backward_primitive_desc_create, runtime.engine, alg, dx_md,
            dy_md, *params, fwd, None))
        if pd is None:
            lib.dnnl_primitive_desc_destroy(fwd)
            return None
        return _Primitive(runtime, pd, {_ARG_DIFF_DST: y_shape, _ARG_DIFF_SRC: x_shape},
                          hint=fwd)
    return make


def pool_output_hw(x_hw, kernel, stride, padding) -> tuple:
    return tuple((i + 2 * p - k) // s + 1 for i, k, s, p in zip(x_hw, kernel, stride, padding))


def pool2d(x, alg, kernel, stride, padding):
    """(y, workspace) of pooling x [N, C, H, W] with alg (POOL_MAX: padding never wins;
    POOL_AVG_INCLUDE / POOL_AVG_EXCLUDE: whether padded zeros count in the divisor), or
    NotImplemented.  The workspace, an opaque uint8 array (None for average pooling), is
    what pool2d_backward needs to route a max pooling's gradient."""
    if not _usable(x):
        return NotImplemented
    y_shape = (*x.shape[:2], *pool_output_hw(x.shape[2:], kernel, stride, padding))
    key = ("pool", alg, x.shape, tuple(kernel), tuple(stride), tuple(padding))
    with _using(key, _make_pool(False, alg, x.shape, y_shape, kernel, stride, padding)) as prim:
        if prim is None:
            return NotImplemented
        y = np.empty(y_shape, dtype=np.float32)
        buffers = {_ARG_SRC: np.ascontiguousarray(x), _ARG_DST: y}
        workspace = None
        if prim.workspace:
            workspace = buffers[_ARG_WORKSPACE] = np.empty(prim.workspace, dtype=np.uint8)
        prim.run(buffers)
    return y, workspace


def pool2d_backward(g, x_shape, alg, kernel, stride, padding, workspace=None):
    """d(loss)/dx [N, C, H, W] = x_shape of pool2d, given g = d(loss)/d(output) and, for
    POOL_MAX, pool2d's workspace; or NotImplemented."""
    if not _usable(g) or 0 in x_shape:
        return NotImplemented
    x_shape = tuple(x_shape)
    key = ("pool_backward", alg, x_shape, tuple(kernel), tuple(stride), tuple(padding))
    with _using(key, _make_pool(True, alg, x_shape, g.shape, kernel, stride, padding)) as prim:
        if prim is None:
            return NotImplemented
        dx = np.empty(x_shape, dtype=np.float32)
        buffers = {_ARG_DIFF_DST: np.ascontiguousarray(g), _ARG_DIFF_SRC: dx}
        if prim.workspace:
            if workspace is None or workspace.nbytes != prim.workspace:
                raise OneDNNError("pool2d_backward: max pooling needs pool2d's workspace")
            buffers[_ARG_WORKSPACE] = workspace
        prim.run(buffers)
    return dx


# -- elementwise and normalisations ----------------------------------------------------------
MIN_ELEMENTWISE_SIZE = 1 << 15
"""Below this many elements numpy's passes cost less than a call into oneDNN."""


def _forward_only(shapes, create):
    """make(runtime) for a forward primitive over plain memory of `shapes` (source,
    destination, then any statistics), whose descriptor create(&pd, runtime, *memory
    descriptors) makes."""
    def make(runtime):
        pd = _with_mds(runtime.lib, shapes, False,
                       lambda *mds: _create_pd(create, runtime, *mds))
        if pd is None:
            return None
        args = (_ARG_SRC, _ARG_DST, _ARG_MEAN, _ARG_VARIANCE)
        return _Primitive(runtime, pd, dict(zip(args, shapes)))
    return make


def _large_float32(x) -> bool:
    return _usable(x) and x.size >= MIN_ELEMENTWISE_SIZE


def eltwise(x, alg):
    """alg (GELU_TANH, GELU_ERF) applied to every element of a float32 x, or NotImplemented."""
    if not _large_float32(x):
        return NotImplemented
    shape = (x.size,)
    make = _forward_only(
        (shape, shape), lambda pd, rt, src, dst: rt.lib.dnnl_eltwise_forward_primitive_desc_create(
            pd, rt.engine, _FORWARD_INFERENCE, alg, src, dst, 0.0, 0.0, None))
    y = np.empty(x.shape, dtype=np.float32)
    ran = _execute(("eltwise", alg, shape), make, {_ARG_SRC: np.ascontiguousarray(x), _ARG_DST: y})
    return y if ran else NotImplemented


def softmax(x, axis):
    """softmax of a float32 x along axis, where every later dim has size 1; else
    NotImplemented.  oneDNN does not carry a NaN to the rest of its row as PyTorch does:
    callers check.  (Its log-softmax is not used: its logarithm is about ten ulps off,
    1e-6 absolute where the log-probabilities are near 0.)"""
    # Along the innermost dim only: oneDNN's kernel for an outer one is its slow
    # reference code (measured 30x numpy's time on [8, 4, 128, 128] along dim 1).
    if not _large_float32(x) or math.prod(x.shape[axis + 1:]) != 1:
        return NotImplemented
    shape = (x.size // x.shape[axis], x.shape[axis])
    make = _forward_only(
        (shape, shape), lambda pd, rt, src, dst: rt.lib.dnnl_softmax_forward_primitive_desc_create(
            pd, rt.engine, _FORWARD_INFERENCE, _SOFTMAX, src, dst, 1, None))  # along rows
    y = np.empty(x.shape, dtype=np.float32)
    ran = _execute(("softmax", shape), make, {_ARG_SRC: np.ascontiguousarray(x), _ARG_DST: y})
    return y if ran else NotImplemented


def layer_norm(x, eps):
    """(y, mean, variance) of a float32 x [rows, cols] standardised along its rows (biased
    variance, no scale or shift): y = (x - mean) / sqrt(variance + eps); or NotImplemented."""
    if not _large_float32(x):
        return NotImplemented
    rows = (x.shape[0],)

    def create(pd, rt, src, dst, stat, _):
        # forward_training: the statistics are outputs (inference would expect them given)
        return rt.lib.dnnl_layer_normalization_forward_primitive_desc_create(
            pd, rt.engine, _FORWARD_TRAINING, src, dst, stat, eps, _NORMALIZATION_FLAGS_NONE,
            None)
    y = np.empty(x.shape, dtype=np.float32)
    mean, var = np.empty(rows, dtype=np.float32), np.empty(rows, dtype=np.float32)
    ran = _execute(("layer_norm", x.shape, float(eps)),
                   _forward_only((x.shape, x.shape, rows, rows), create),
                   {_ARG_SRC: np.ascontiguousarray(x), _ARG_DST: y, _ARG_MEAN: mean,
                    _ARG_VARIANCE: var})
    return (y, mean, var) if ran else NotImplemented
