"""shrew: a small tensor framework with reverse-mode autodiff on CPU, OpenCL and CUDA."""
from .autograd.engine import GradStore
from .autograd.checkpoint import checkpoint, checkpoint_sequential, in_recomputation
from .backends.registry import devices, register_backend
from .core.dtype import (DType, bfloat16, bool_ as bool, can_cast, finfo, float16, float32,  # noqa: A004
                    float64, get_default_dtype, iinfo, int8, int16, int32, int64, promote_types,
                    result_type, set_default_dtype, uint8)
from .core.dtype import ALIASES as _ALIASES
from ._device import device
from .core.errors import (ArgumentError, DeviceError, DTypeError, ShapeError, ShrewError,
                          ShrewIndexError, ShrewTypeError, ShrewValueError, StateError,
                          UnsupportedError)
from .core.grad_mode import (enable_grad, inference_mode, is_grad_enabled,
                             is_inference_mode_enabled,
                        no_grad, set_grad_enabled)
from .ops.conv import col2im, conv1d, conv2d, im2col
from .ops.creation import (arange, clone, empty, empty_like, eye, from_dlpack, from_numpy, full,
                           full_like, linspace, logspace, meshgrid, ones, ones_like, tensor,
                           tril_indices, triu_indices, zeros, zeros_like)
from .ops.elementwise.composed import (  # noqa: A004  (torch's names: abs, pow, round)
    abs, absolute, acos, acosh, add, addcdiv, addcmul, arccos, arccosh, arcsin, arcsinh, arctan,
    arctan2, arctanh, asin, asinh, atan, atan2, atanh, bitwise_and, bitwise_not, bitwise_or,
    bitwise_xor, ceil, clamp, clamp_max, clamp_min, clip, copysign, cos, cosh, div, divide, erf,
    erfc, erfinv, exp, exp2, expm1, fix, floor, floor_divide, fmax, fmin, fmod, frac, hypot,
    isfinite, isinf, isnan, isneginf, isposinf, lerp, log, log1p, log2, log10, logical_and,
    logical_not, logical_or, logical_xor, logit, maximum, minimum, mul, multiply, nan_to_num,
    neg, negative, pow, reciprocal, relu, remainder, round, rsqrt, sgn, sigmoid, sign, signbit,
    sin, sinh, sqrt, square, sub, subtract, tan, tanh, true_divide, trunc, xlogy)
from .ops.index.composed import (argwhere, gather, index_add, index_copy, index_fill,
                           index_select, masked_fill, masked_scatter, masked_select, nonzero,
                           put, scatter, scatter_add, scatter_reduce, take, take_along_dim,
                           where)
from .ops.index.subscript import index_put
from .ops.special import (digamma, i0, i0_, igamma, igammac, lgamma,  # torch.special's
                          mvlgamma, polygamma, sinc, sinc_, xlogy_)
from .ops.norm import log_softmax_function as log_softmax, softmax_function as softmax, standardize
from .ops.pool import avg_pool2d, max_pool2d
from .ops.random import (bernoulli, manual_seed, multinomial, normal, poisson, rand, rand_like,
                         randint, randn, randn_like, randperm)
from .ops.reduce import (all, amax, amin, aminmax, any, argmax, argmin,  # noqa: A004
                         count_nonzero, logsumexp, max, mean, min, nanmean, nansum, norm, prod,
                         std, std_mean, sum, var, var_mean)
from .ops.scan import cummax, cummin, cumprod, cumsum, diff, logcumsumexp
from .ops.sort import (argsort, bincount, bucketize, histc, kthvalue, median, mode, msort,
                       nanmedian, searchsorted, sort, topk, unique, unique_consecutive)
from .ops.shape.recorded import cat, flatten, narrow, squeeze, stack, transpose, unsqueeze
from .ops.shape.composed import (atleast_1d, atleast_2d, atleast_3d, broadcast_shapes,
                            broadcast_tensors, broadcast_to, chunk, column_stack, diag,
                            diag_embed, diagonal, dstack, flip, fliplr, flipud, hstack,
                            movedim, moveaxis, numel, repeat_interleave, roll, row_stack,
                            split, swapaxes, swapdims, t, tensor_split, tile, trace, tril,
                            triu, unbind, unflatten, vstack)
from .ops.shape.composed import permute_fn as permute, reshape_fn as reshape
from .ops.shape.strided import as_strided  # strided views (issue 30)
from .core.shape import Size
from .ops.linalg.matmul import matmul
from .ops.linalg.products import (addbmm, addmm, addmv, addr, baddbmm, bmm, chain_matmul,
                                  cross, dot,
                           inner, kron, matrix_power, mm, mv, outer, tensordot)
from .ops.linalg.products import dot as vdot, outer as ger
from .ops.linalg.decompositions import det, inverse, logdet
from .ops.linalg.decompositions import torch_cholesky as cholesky, torch_qr as qr
from .ops.linalg.decompositions import torch_slogdet as slogdet, torch_svd as svd
from .ops.linalg.composed import cdist, cholesky_inverse, cholesky_solve, pinverse
from .ops.linalg.einsum import einsum
from ._tensor import Tensor
from .backends.threads import get_num_threads, set_num_threads
from . import cuda  # noqa: E402
from . import accelerator, amp, onnx  # noqa: E402
from .ops.generator import Generator
from . import linalg, nn, optim, return_types, serialization, utils  # noqa: E402  (they build on everything above)
from . import signal, special  # noqa: E402
from .ops.windows import (bartlett_window, blackman_window, hamming_window,  # noqa: E402
                          hann_window, kaiser_window)
from .serialization.save_load import load, save  # noqa: E402
from .autograd.diagnostics import detect_anomaly, graph_summary, to_dot  # noqa: E402
from . import distributed  # noqa: E402  (imports mpi4py only in init_process_group)
from . import autograd, func  # noqa: E402
# everyday helpers and switches (issue 30): ops/comparison.py, backends/defaults.py and
# backends/cuda_flags.py
from .ops.comparison import (allclose, equal, is_complex, is_floating_point,  # noqa: E402
                          is_tensor, isclose)
from .backends.defaults import (are_deterministic_algorithms_enabled, get_default_device,  # noqa: E402
                        initial_seed, is_deterministic_algorithms_warn_only_enabled, seed,
                        set_default_device, use_deterministic_algorithms)
from .backends.cuda_flags import (get_float32_matmul_precision,  # noqa: E402
                                  set_float32_matmul_precision)
from . import testing  # noqa: E402
# API coverage (scripts/api_coverage.py's most used gaps): TorchScript and compiler names
# that run eagerly, the dtype class, math constants, torch.autocast.
from . import compiler, jit  # noqa: E402
from . import _dynamo, _functorch, _inductor  # noqa: E402, F401  (reached as attributes)
from .compiler import compile  # noqa: E402, A004  (torch's name)
from .amp import autocast  # noqa: E402
# automatic mixed precision (issue 32): torch.get_autocast_dtype & co, torch.cpu
from .amp.autocast_mode import (autocast_decrement_nesting, autocast_increment_nesting,  # noqa: E402
                                clear_autocast_cache, get_autocast_cpu_dtype,
                                get_autocast_dtype, get_autocast_gpu_dtype,
                                is_autocast_cache_enabled, is_autocast_cpu_enabled,
                                is_autocast_enabled, set_autocast_cache_enabled,
                                set_autocast_cpu_dtype, set_autocast_cpu_enabled,
                                set_autocast_dtype, set_autocast_enabled,
                                set_autocast_gpu_dtype)
from . import cpu  # noqa: E402
from math import e, inf, nan, pi  # noqa: E402
dtype = DType
# Ecosystem (issue 30): shrew.profiler; and einops' backend, which einops finds by the
# module name "shrew" once its class is defined (where einops is installed).
from . import profiler  # noqa: E402,F401  (shrew.profiler, as torch.profiler)
from importlib.util import find_spec as _find_spec  # noqa: E402
if _find_spec("einops") is not None:
    from .utils import einops as _einops  # noqa: E402,F401

# interop with numpy and other frameworks (ops/creation.py)
from .ops.creation import as_tensor, asarray  # noqa: E402
# 3-d layers (issue 31): torch.conv3d, torch.conv_transpose3d and torch.max_pool3d, with
# torch's signatures (the bias third), as nn.functional's
from .nn.functional import conv3d, conv_transpose3d, max_pool3d  # noqa: E402
# API gaps (issue 30): legacy tensor types, memory formats, print options, fx and hub
from .ops.legacy import (channels_last, channels_last_3d, contiguous_format,  # noqa: E402
                      legacy_types as _legacy_types, memory_format, preserve_format)
from .core.printing import set_printoptions  # noqa: E402
from . import fx, hub  # noqa: E402
# sparse COO tensors (ops/sparse; torch.sparse is shrew/sparse.py) and layouts
from .core.layout import layout, sparse_coo, strided  # noqa: E402
from .ops.sparse.coo import sparse_coo_tensor  # noqa: E402
from .ops.sparse.products import mm as spmm  # noqa: E402
from . import sparse  # noqa: E402
# sampling layers' low-level names (nn/functional/sampling.py, upsampling.py)
from .nn.functional.sampling import grid_sampler_2d, grid_sampler_3d  # noqa: E402
from .nn.functional.upsampling import (  # noqa: E402,F401  (torch's private name)
    upsample_bilinear2d_aa as _upsample_bilinear2d_aa)
# torch.distributions (issue 31): shrew/distributions/, one module per family
from . import distributions  # noqa: E402
# PyTorch's OpInfo functions (issue 30): the rarer elementwise math, arrangements, the
# *_copy and *_scatter functions, statistics, calculus, factories and factorisations
from .ops.elementwise.numeric import (bitwise_left_shift, bitwise_right_shift,  # noqa: E402
                                      deg2rad, float_power, frexp, gcd, heaviside, lcm, ldexp,
                                      logaddexp, logaddexp2, nextafter, positive, rad2deg,
                                      rsub)
from .ops.shape.arrange import (block_diag, cartesian_prod, combinations, diagflat,  # noqa: E402
                                dsplit, hsplit, rot90, split_with_sizes, sum_to_size,
                                unravel_index, unsafe_chunk, unsafe_split, vsplit)
from .ops.shape.copies import (alias_copy, as_strided_copy, as_strided_scatter,  # noqa: E402
                               diagonal_copy, diagonal_scatter, expand_copy, narrow_copy,
                               permute_copy, select_scatter, slice_scatter, split_with_sizes_copy,
                               squeeze_copy, t_copy, transpose_copy, unbind_copy, unfold_copy,
                               unsqueeze_copy, view_copy)
from .ops.statistics import (corrcoef, cov, histogram, histogramdd, isin,  # noqa: E402
                             nanquantile, quantile)
from .ops.calculus import cumulative_trapezoid, gradient, trapezoid, trapz  # noqa: E402
from .ops.creation import empty_permuted, empty_strided, fill, scalar_tensor  # noqa: E402
from .ops.random import randint_like  # noqa: E402
from .ops.index.composed import index_reduce, nonzero_static  # noqa: E402
from .ops.linalg.composed import dist, renorm  # noqa: E402
from .ops.linalg.factorizations import (geqrf, lu_unpack, matrix_exp, ormqr,  # noqa: E402
                                        pca_lowrank, svd_lowrank, triangular_solve)
from .ops.linalg.factorizations import torch_lu as lu, torch_lu_solve as lu_solve  # noqa: E402
from .func import vmap  # noqa: E402  (torch.vmap)
from .ops.inplace import resize_as_, zero_  # noqa: E402
from . import masked  # noqa: E402  (torch.masked's reductions with mask=)
from .nn.functional.native_norms import (native_batch_norm, native_group_norm,  # noqa: E402
                                         native_layer_norm)
from .nn.functional.padding import constant_pad_nd  # noqa: E402
# API coverage (scripts/api_coverage.py): layouts, nested tensors (refused), ByteStorage
from .core.layout import jagged  # noqa: E402
from . import nested  # noqa: E402
from .ops.legacy import ByteStorage  # noqa: E402
globals().update(_legacy_types(cuda=False))  # FloatTensor, LongTensor, ... (torch's ten)
# complex numbers (ops/complex/: pairs of reals) and torch.fft (shrew/fft.py)
from .core.dtype import complex64, complex128  # noqa: E402
from .ops.complex.pair import imag, real, view_as_complex, view_as_real  # noqa: E402
from .ops.complex.arith import angle, complex, conj, isreal, polar  # noqa: E402, A004
from .ops.complex.arith import conj as conj_physical, conj as resolve_conj  # noqa: E402
from . import fft  # noqa: E402
from .ops.spectral import istft, stft  # noqa: E402
_LEGACY_NAMES = sorted(_legacy_types(cuda=False))

from .ops.foreach import FUNCTIONS as _FOREACH  # noqa: E402
globals().update(_FOREACH)  # torch._foreach_add_ & co (ops/foreach.py)
from . import version  # noqa: E402
from .version import __version__ as __version__  # noqa: E402  ("2.13.0+shrew.0.1.0")
half, float, double, short, int, long = (_ALIASES[n] for n in  # noqa: A001  (torch's aliases)
                                         ("half", "float", "double", "short", "int", "long"))
cfloat, cdouble = complex64, complex128

__all__ = [
    # interop with numpy and other frameworks
    "as_tensor", "asarray",
    "Tensor", "tensor", "GradStore", "DType", "float16", "float32", "float64", "int32",
    "int64", "bool", "zeros", "ones", "full", "rand", "randn", "arange", "eye", "from_numpy",
    "zeros_like", "ones_like", "cat", "stack", "where", "scatter_add", "im2col", "col2im",
    "conv1d", "conv2d", "max_pool2d", "avg_pool2d", "manual_seed", "no_grad", "enable_grad",
    "set_num_threads", "get_num_threads",
    "conv3d", "conv_transpose3d", "max_pool3d",
    "is_grad_enabled", "set_grad_enabled", "inference_mode", "is_inference_mode_enabled",
    "autograd", "func", "checkpoint", "checkpoint_sequential",
    "distributions",
    "in_recomputation", "devices", "register_backend", "ShrewError", "ShapeError",
    "ShrewIndexError",
    "DeviceError", "DTypeError", "nn", "optim", "distributed", "save", "load", "serialization",
    "from_dlpack", "detect_anomaly", "graph_summary", "to_dot", "standardize", "Generator",
    "softmax", "log_softmax",
    "utils", "device", "cuda", "accelerator", "amp", "onnx", "ShrewIndexError", "ShrewTypeError",
    "ShrewValueError", "StateError", "ArgumentError", "UnsupportedError",
    "float", "double", "half", "int", "long", "backends",
    # reductions, scans, sorting and selection
    "sum", "mean", "nansum", "nanmean", "prod", "amax", "amin", "aminmax", "max", "min",
    "argmax", "argmin", "var", "std", "var_mean", "std_mean", "logsumexp", "all", "any",
    "count_nonzero", "norm", "cumsum", "cumprod", "cummax", "cummin", "diff", "sort",
    "logcumsumexp",
    "argsort", "msort", "topk", "kthvalue", "median", "nanmedian", "mode", "unique",
    "unique_consecutive", "searchsorted", "bucketize", "histc", "bincount", "return_types",
    # shape and views (ops/shape/recorded.py, ops/shape/composed.py)
    "Size", "flatten", "narrow", "squeeze", "transpose", "unsqueeze", "atleast_1d",
    "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors", "broadcast_to",
    "chunk", "column_stack", "diag", "diag_embed", "diagonal", "dstack", "flip", "fliplr",
    "flipud", "hstack", "movedim", "moveaxis", "numel", "repeat_interleave", "roll",
    "row_stack", "split", "swapaxes", "swapdims", "t", "tensor_split", "tile", "trace",
    "tril", "triu", "unbind", "unflatten", "vstack", "permute", "reshape",
    # products (ops/linalg/matmul.py, ops/linalg/products.py) and shrew.linalg
    "matmul", "addbmm", "addmm", "addmv", "addr", "baddbmm", "bmm", "chain_matmul", "cross",
    "dot", "inner", "kron", "matrix_power", "mm", "mv", "outer", "tensordot", "vdot", "ger",
    "einsum", "linalg", "det", "inverse", "logdet", "cholesky", "qr", "slogdet", "svd", "cdist",
    "cholesky_inverse", "cholesky_solve", "pinverse",
    # dtypes (core/dtype.py)
    "bfloat16", "uint8", "int8", "int16", "short",
    "finfo", "iinfo", "promote_types", "result_type", "can_cast", "get_default_dtype",
    "set_default_dtype",
    # creation (ops/creation.py, ops/random.py)
    "empty", "empty_like", "full_like", "clone", "linspace", "logspace", "meshgrid",
    "tril_indices", "triu_indices", "rand_like", "randn_like", "randint", "randperm", "normal",
    "multinomial", "bernoulli", "poisson",
    # elementwise (ops/elementwise/composed.py)
    "abs", "absolute", "acos", "acosh", "add", "addcdiv", "addcmul", "arccos", "arccosh",
    "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "asin", "asinh", "atan", "atan2",
    "atanh", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "ceil", "clamp",
    "clamp_max", "clamp_min", "clip", "copysign", "cos", "cosh", "div", "divide", "erf", "erfc",
    "erfinv", "exp", "exp2", "expm1", "fix", "floor", "floor_divide", "fmax", "fmin", "fmod",
    "frac", "hypot", "isfinite", "isinf", "isnan", "isneginf", "isposinf", "lerp", "log",
    "log1p", "log2", "log10", "logical_and", "logical_not", "logical_or", "logical_xor", "logit",
    "maximum", "minimum", "mul", "multiply", "nan_to_num", "neg", "negative", "pow",
    "reciprocal", "relu", "remainder", "round", "rsqrt", "sgn", "sigmoid", "sign", "signbit",
    "sin", "sinh", "sqrt", "square", "sub", "subtract", "tan", "tanh", "true_divide", "trunc",
    "xlogy",
    # special functions (ops/special.py) and shrew.special
    "special", "lgamma", "digamma", "polygamma", "mvlgamma", "igamma", "igammac", "i0", "sinc",
    "i0_", "sinc_", "xlogy_",
    # window functions (ops/windows.py) and shrew.signal.windows
    "signal", "hann_window", "hamming_window", "blackman_window", "bartlett_window",
    "kaiser_window",
    "gather", "scatter", "scatter_reduce", "index_select", "index_add", "index_copy",
    "index_fill", "index_put", "masked_fill", "masked_scatter", "masked_select", "take",
    "take_along_dim", "put", "nonzero", "argwhere",
    # everyday helpers and switches (issue 30, devices)
    "allclose", "equal", "is_complex", "is_floating_point", "is_tensor", "isclose",
    "are_deterministic_algorithms_enabled", "get_default_device", "initial_seed",
    "is_deterministic_algorithms_warn_only_enabled", "seed", "set_default_device",
    "use_deterministic_algorithms", "get_float32_matmul_precision",
    "set_float32_matmul_precision", "testing",
    # API coverage (scripts/api_coverage.py)
    "compiler", "jit", "compile", "autocast", "dtype", "e", "inf", "nan", "pi",
    # strided views (ops/shape/strided.py; issue 30's views)
    "as_strided",
    # API gaps (issue 30): ops/legacy.py, core/printing.py, fx.py, hub.py
    "channels_last", "channels_last_3d", "contiguous_format", "memory_format",
    "preserve_format", "set_printoptions", "fx", "hub", "version", *_LEGACY_NAMES,
    # sparse COO tensors and layouts (ops/sparse, sparse.py, core/layout.py)
    "layout", "sparse_coo", "strided", "sparse_coo_tensor", "spmm", "sparse",
    # sampling layers (nn/functional/sampling.py)
    "grid_sampler_2d", "grid_sampler_3d",
    # automatic mixed precision (issue 32: amp/autocast_mode.py)
    "cpu", "get_autocast_dtype", "set_autocast_dtype", "is_autocast_enabled",
    "set_autocast_enabled", "get_autocast_cpu_dtype", "get_autocast_gpu_dtype",
    "set_autocast_cpu_dtype", "set_autocast_gpu_dtype", "is_autocast_cpu_enabled",
    "set_autocast_cpu_enabled", "is_autocast_cache_enabled", "set_autocast_cache_enabled",
    "clear_autocast_cache", "autocast_increment_nesting", "autocast_decrement_nesting",
    # complex numbers (ops/complex/) and torch.fft (fft.py, ops/spectral.py)
    "complex64", "complex128", "cfloat", "cdouble", "view_as_real", "view_as_complex", "real",
    "imag", "angle", "complex", "conj", "conj_physical", "resolve_conj", "isreal", "polar",
    "fft", "stft", "istft",
    # PyTorch's OpInfo functions (issue 30)
    "bitwise_left_shift", "bitwise_right_shift", "deg2rad", "float_power", "frexp", "gcd",
    "heaviside", "lcm", "ldexp", "logaddexp", "logaddexp2", "nextafter", "positive", "rad2deg",
    "rsub", "block_diag", "cartesian_prod", "combinations", "diagflat", "dsplit",
    "hsplit", "rot90", "split_with_sizes", "sum_to_size", "unravel_index", "unsafe_chunk",
    "unsafe_split", "vsplit", "alias_copy", "as_strided_copy", "as_strided_scatter",
    "diagonal_copy", "diagonal_scatter", "expand_copy", "narrow_copy", "permute_copy",
    "select_scatter", "slice_scatter", "split_with_sizes_copy", "squeeze_copy", "t_copy",
    "transpose_copy", "unbind_copy", "unfold_copy", "unsqueeze_copy", "view_copy", "corrcoef",
    "cov", "histogram", "histogramdd", "isin", "nanquantile", "quantile",
    "cumulative_trapezoid", "gradient", "trapezoid", "trapz", "empty_permuted",
    "empty_strided", "fill", "scalar_tensor", "randint_like", "index_reduce", "dist", "renorm",
    "nonzero_static",
    "geqrf", "lu_unpack", "matrix_exp", "ormqr", "pca_lowrank", "svd_lowrank",
    "triangular_solve", "lu", "lu_solve", "vmap", "masked", "native_batch_norm",
    "native_group_norm", "native_layer_norm", "constant_pad_nd", "resize_as_", "zero_",
    # API coverage: layouts, nested tensors (refused), ByteStorage
    "jagged", "nested", "ByteStorage",
]
