"""shrew: a small tensor framework with reverse-mode autodiff on CPU, OpenCL and CUDA."""
from .backprop import GradStore
from .checkpoint import checkpoint, checkpoint_sequential, in_recomputation
from .backends.registry import devices, register_backend
from .dtype import DType, bool_ as bool, float16, float32, float64, int32, int64  # noqa: A004
from .errors import DeviceError, DTypeError, ShapeError, ShrewError
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,
                        no_grad, set_grad_enabled)
from .ops.conv import col2im, conv1d, conv2d, im2col
from .ops.creation import (arange, eye, from_dlpack, from_numpy, full, ones, ones_like, tensor,
                           zeros, zeros_like)
from .ops.elementwise import where
from .ops.index import scatter_add
from .ops.norm import standardize
from .ops.pool import avg_pool2d, max_pool2d
from .ops.random import manual_seed, rand, randn
from .ops.shape import cat, flatten, narrow, squeeze, stack, transpose, unsqueeze
from .ops.rearrange import (atleast_1d, atleast_2d, atleast_3d, broadcast_shapes,
                            broadcast_tensors, broadcast_to, chunk, column_stack, diag,
                            diag_embed, diagonal, dstack, flip, fliplr, flipud, hstack,
                            movedim, moveaxis, numel, repeat_interleave, roll, row_stack,
                            split, swapaxes, swapdims, t, tensor_split, tile, trace, tril,
                            triu, unbind, unflatten, vstack)
from .ops.rearrange import permute_fn as permute, reshape_fn as reshape
from .shape import Size
from .ops.linalg import matmul
from .ops.products import (addbmm, addmm, addmv, addr, baddbmm, bmm, chain_matmul, cross, dot,
                           inner, kron, matrix_power, mm, mv, outer, tensordot)
from .ops.products import dot as vdot, outer as ger
from .tensor import Tensor
from .generator import Generator
from . import linalg, nn, optim, utils  # noqa: E402  (they build on everything above)
from .io import load, save  # noqa: E402
from .diagnostics import detect_anomaly, graph_summary, to_dot  # noqa: E402
from . import distributed  # noqa: E402  (imports mpi4py only in init_process_group)
from . import autograd, func  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "Tensor", "tensor", "GradStore", "DType", "float16", "float32", "float64", "int32",
    "int64", "bool", "zeros", "ones", "full", "rand", "randn", "arange", "eye", "from_numpy",
    "zeros_like", "ones_like", "cat", "stack", "where", "scatter_add", "im2col", "col2im",
    "conv1d", "conv2d", "max_pool2d", "avg_pool2d", "manual_seed", "no_grad", "enable_grad",
    "is_grad_enabled", "set_grad_enabled", "inference_mode", "is_inference_mode_enabled",
    "autograd", "func", "checkpoint", "checkpoint_sequential",
    "in_recomputation", "devices", "register_backend", "ShrewError", "ShapeError",
    "DeviceError", "DTypeError", "nn", "optim", "distributed", "save", "load",
    "from_dlpack", "detect_anomaly", "graph_summary", "to_dot", "standardize", "Generator",
    "utils",
    # shape and views (ops/shape.py, ops/rearrange.py)
    "Size", "flatten", "narrow", "squeeze", "transpose", "unsqueeze", "atleast_1d",
    "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors", "broadcast_to",
    "chunk", "column_stack", "diag", "diag_embed", "diagonal", "dstack", "flip", "fliplr",
    "flipud", "hstack", "movedim", "moveaxis", "numel", "repeat_interleave", "roll",
    "row_stack", "split", "swapaxes", "swapdims", "t", "tensor_split", "tile", "trace",
    "tril", "triu", "unbind", "unflatten", "vstack", "permute", "reshape",
    # products (ops/linalg.py, ops/products.py) and shrew.linalg
    "matmul", "addbmm", "addmm", "addmv", "addr", "baddbmm", "bmm", "chain_matmul", "cross",
    "dot", "inner", "kron", "matrix_power", "mm", "mv", "outer", "tensordot", "vdot", "ger",
    "linalg",
]
