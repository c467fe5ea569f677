"""The library: oneDNN 3's C API declared for ctypes, loading it, the on/off switch and
the OpenMP thread count (see the package docstring)."""
from __future__ import annotations

import ctypes
import os

from ....core.errors import ArgumentError
from .. import mkl
from ..native import LoadOnce, Switch, library_path

# Values from dnnl_types.h / dnnl_common_types.h (oneDNN 3.x).
SUCCESS, UNIMPLEMENTED = 0, 3
F16, BF16, F32 = 1, 2, 3             # dnnl_data_type_t
CPU = 1
STREAM_IN_ORDER = 1
FORMAT_ANY = 1
PLAIN_TAG_OFFSET = 1               # dnnl_a = 2, dnnl_ab = 3, ...: ndims + 1
FORWARD_TRAINING, FORWARD_INFERENCE = 64, 96
CONVOLUTION_DIRECT = 0x1
POOL_MAX, POOL_AVG_INCLUDE, POOL_AVG_EXCLUDE = 0x1ff, 0x2ff, 0x3ff
RELU, LINEAR, EXP, GELU_TANH, GELU_ERF = 0x20, 0x26, 0x2a, 0x2b, 0x31   # dnnl_eltwise_relu, ...
BINARY_ADD, BINARY_MUL, BINARY_SUB, BINARY_LE = 0x1fff0, 0x1fff1, 0x1fff5, 0x1fff8   # dnnl_binary_*
REDUCTION_SUM = 0x2fff4                                        # dnnl_reduction_sum
SOFTMAX, SOFTMAX_LOG = 0x30000, 0x30001   # dnnl_softmax_accurate, dnnl_softmax_log
BACKWARD, BACKWARD_DATA = 128, 160
NORMALIZATION_FLAGS_NONE, USE_SCALE, USE_SHIFT = 0, 0x2, 0x4   # dnnl_normalization_flags_t
QUERY_IMPL_INFO_STR, QUERY_WORKSPACE_MD, QUERY_EXEC_ARG_MD = 8, 135, 255
ARG_SRC, ARG_DST, ARG_WEIGHTS, ARG_BIAS, ARG_WORKSPACE = 1, 17, 33, 41, 64
ARG_DIFF_SRC, ARG_DIFF_DST, ARG_DIFF_WEIGHTS = 129, 145, 161
ARG_MEAN, ARG_VARIANCE, ARG_SCALE, ARG_SHIFT = 49, 50, 51, 52
ARG_DIFF_SCALE, ARG_DIFF_SHIFT = 255, 256
ARG_FROM, ARG_TO = 1, 17
ARG_SRC_1 = 2
POST_OP_BASE = 32768                     # DNNL_ARG_ATTR_MULTIPLE_POST_OP_BASE (oneDNN 3)
INPUTS = frozenset((ARG_SRC, ARG_WEIGHTS, ARG_DIFF_DST))
MAX_NDIMS = 12

Dims = ctypes.c_int64 * MAX_NDIMS
Handle = ctypes.c_void_p
ALLOCATE = Handle(2**64 - 1)           # DNNL_MEMORY_ALLOCATE: the library owns the buffer


class ExecArg(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_int), ("memory", Handle)]


class OneDNNError(RuntimeError):
    """oneDNN failed where it should not (not for unsupported geometries: those decline)."""


def _declare(lib: ctypes.CDLL) -> None:
    """argtypes and restype of the functions used here (from dnnl.h, dnnl_common.h)."""
    status = ctypes.c_int
    h, out = Handle, ctypes.POINTER(Handle)   # a handle; where the function writes one
    table = {
        "dnnl_engine_create": (status, [out, ctypes.c_int, ctypes.c_size_t]),
        "dnnl_stream_create": (status, [out, h, ctypes.c_uint]),
        "dnnl_stream_wait": (status, [h]),
        "dnnl_memory_desc_create_with_tag": (
            status, [out, ctypes.c_int, Dims, ctypes.c_int, ctypes.c_int]),
        "dnnl_memory_desc_create_with_strides": (
            status, [out, ctypes.c_int, Dims, ctypes.c_int, Dims]),
        "dnnl_memory_desc_destroy": (status, [h]),
        "dnnl_memory_desc_get_size": (ctypes.c_size_t, [h]),
        "dnnl_memory_desc_equal": (ctypes.c_int, [h, h]),
        "dnnl_reorder_primitive_desc_create": (status, [out, h, h, h, h, h]),
        "dnnl_memory_create": (status, [out, h, h, h]),
        "dnnl_memory_set_data_handle": (status, [h, h]),
        "dnnl_memory_destroy": (status, [h]),
        "dnnl_convolution_forward_primitive_desc_create": (
            status, [out, h, ctypes.c_int, ctypes.c_int, h, h, h, h,
                     Dims, Dims, Dims, Dims, h]),
        "dnnl_convolution_backward_data_primitive_desc_create": (
            status, [out, h, ctypes.c_int, h, h, h,
                     Dims, Dims, Dims, Dims, h, h]),
        "dnnl_convolution_backward_weights_primitive_desc_create": (
            status, [out, h, ctypes.c_int, h, h, h, h,
                     Dims, Dims, Dims, Dims, h, h]),
        "dnnl_pooling_forward_primitive_desc_create": (
            status, [out, h, ctypes.c_int, ctypes.c_int, h, h,
                     Dims, Dims, Dims, Dims, Dims, h]),
        "dnnl_pooling_backward_primitive_desc_create": (
            status, [out, h, ctypes.c_int, h, h,
                     Dims, Dims, Dims, Dims, Dims, h, h]),
        "dnnl_eltwise_forward_primitive_desc_create": (
            status, [out, h, ctypes.c_int, ctypes.c_int, h, h,
                     ctypes.c_float, ctypes.c_float, h]),
        "dnnl_eltwise_backward_primitive_desc_create": (
            status, [out, h, ctypes.c_int, h, h, h, ctypes.c_float, ctypes.c_float, h, h]),
        "dnnl_softmax_forward_primitive_desc_create": (
            status, [out, h, ctypes.c_int, ctypes.c_int, h, h, ctypes.c_int,
                     h]),
        "dnnl_softmax_backward_primitive_desc_create": (
            status, [out, h, ctypes.c_int, h, h, h, ctypes.c_int, h, h]),
        "dnnl_layer_normalization_forward_primitive_desc_create": (
            status, [out, h, ctypes.c_int, h, h, h, ctypes.c_float,
                     ctypes.c_uint, h]),
        "dnnl_layer_normalization_backward_primitive_desc_create": (
            status, [out, h, ctypes.c_int, h, h, h, h, ctypes.c_float, ctypes.c_uint, h, h]),
        "dnnl_binary_primitive_desc_create": (status, [out, h, ctypes.c_int, h, h, h, h]),
        "dnnl_reduction_primitive_desc_create": (
            status, [out, h, ctypes.c_int, h, h, ctypes.c_float, ctypes.c_float, h]),
        "dnnl_matmul_primitive_desc_create": (status, [out, h, h, h, h, h, h]),
        "dnnl_primitive_attr_create": (status, [out]),
        "dnnl_primitive_attr_destroy": (status, [h]),
        "dnnl_primitive_attr_set_post_ops": (status, [h, h]),
        "dnnl_post_ops_create": (status, [out]),
        "dnnl_post_ops_destroy": (status, [h]),
        "dnnl_post_ops_append_eltwise": (status, [h, ctypes.c_int, ctypes.c_float,
                                                  ctypes.c_float]),
        "dnnl_post_ops_append_binary": (status, [h, ctypes.c_int, h]),
        "dnnl_primitive_desc_query_md": (h, [h, ctypes.c_int, ctypes.c_int]),
        "dnnl_primitive_desc_query": (status, [h, ctypes.c_int, ctypes.c_int, h]),
        "dnnl_primitive_desc_destroy": (status, [h]),
        "dnnl_primitive_create": (status, [out, h]),
        "dnnl_primitive_execute": (status, [h, h, ctypes.c_int, ctypes.POINTER(ExecArg)]),
        "dnnl_primitive_destroy": (status, [h]),
    }
    for name, (restype, argtypes) in table.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes


class _Version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_int), ("minor", ctypes.c_int), ("patch", ctypes.c_int),
                ("hash", ctypes.c_char_p), ("cpu_runtime", ctypes.c_uint),
                ("gpu_runtime", ctypes.c_uint)]


_RUNTIME_OMP = 2


class Runtime:
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
        self.engine, self.stream = Handle(), Handle()
        check(lib.dnnl_engine_create(ctypes.byref(self.engine), CPU, 0), "engine_create")
        check(lib.dnnl_stream_create(ctypes.byref(self.stream), self.engine,
                                     STREAM_IN_ORDER), "stream_create")
        # libdnnl's gomp build links libgomp.so.1: this finds the copy already loaded.
        self.omp = ctypes.CDLL("libgomp.so.1")
        self.omp.omp_set_num_threads.argtypes = [ctypes.c_int]
        self.omp.omp_get_max_threads.restype = ctypes.c_int


def post_op_arg(index: int, arg: int) -> int:
    """The execution argument of a post-op's input (DNNL_ARG_ATTR_MULTIPLE_POST_OP)."""
    return POST_OP_BASE * (index + 1) | arg


def check(status: int, what: str) -> None:
    if status != SUCCESS:
        raise OneDNNError(f"oneDNN {what} failed with status {status}")


def _load() -> Runtime:
    path = library_path("SHREW_ONEDNN_LIBRARY", ("libdnnl.so.3",), "dnnl")
    if path is None:
        raise OSError("libdnnl.so.3 not found (pip install onednn-cpu-gomp==2023.2.0; shrew "
                      "installs it on x86-64 Linux)")
    # Where OpenBLAS serves the GEMMs (MKL is not there), idle OpenMP threads sleep instead
    # of spinning, so that they leave the cores to OpenBLAS's threads between two
    # convolutions (measured: a conv and a GEMM alternating cost 1.2-1.35x their sum
    # spinning, 1.0-1.05x passive; benchmarks/README.md).  Where MKL serves them it shares
    # these OpenMP threads, and libgomp's default (spin a while, then sleep) is faster.
    # libgomp reads it once, when it loads; a value the user set is kept.
    if not mkl.available():
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    return Runtime(ctypes.CDLL(path))


_library = LoadOnce(_load, (OneDNNError,))
load = _library.load


def load_error() -> str | None:
    """Why oneDNN could not be loaded (it is tried on the first call), or None."""
    load()
    return _library.error


# -- the switch ----------------------------------------------------------------------------
_switch = Switch("SHREW_CPU_ONEDNN")


def available() -> bool:
    """Whether oneDNN serves the cpu backend now: loaded and switched on."""
    return _switch.on and load() is not None


def set_enabled(flag: bool) -> bool:
    """Switch the oneDNN path on or off for the whole process; returns the old setting."""
    return _switch.set(flag)


# -- threads -------------------------------------------------------------------------------
def set_num_threads(n: int) -> None:
    """Set the number of OpenMP threads oneDNN's primitives run on.  It is an OpenMP
    setting of the calling thread: call it from the thread that runs the model."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ArgumentError(f"set_num_threads: expected an int >= 1, got {n!r}")
    runtime = load()
    if runtime is not None:
        runtime.omp.omp_set_num_threads(n)


def get_num_threads() -> int | None:
    """oneDNN's OpenMP thread count, or None where oneDNN is not loaded."""
    runtime = load()
    return None if runtime is None else runtime.omp.omp_get_max_threads()

