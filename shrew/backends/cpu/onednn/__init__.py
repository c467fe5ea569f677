"""oneDNN (libdnnl, the ``onednn-cpu-gomp`` wheel) through its C API, by ctypes.

Modules: binding (the C API declarations, loading, the switch, threads), primitive (a
primitive on numpy buffers and the cache), conv, pool, max_pool (max pooling's forward and
its backward through the forward's workspace), elementwise (GELU, relu's gradient, a
bfloat16 bias's in-place add, softmax and log-softmax, layer norm), rnn (an RNN, LSTM or GRU layer's
whole time loop, each way), matmul (bfloat16 and float16 matrix products, a bias optional:
``onednn.matmul.matmul``).

The cpu backend (cpu/backend.py, whose table says which call goes where) calls these
modules for its convolutions, pooling, recurrent layers, 16-bit products and linear
layers, and large softmax, log-softmax, layer norm (with or without its weight and bias), GELU and
relu's gradient, and bfloat16 max pooling and bias adds.  Each returns ``NotImplemented``
where oneDNN cannot serve the call (library not installed or switched off, a dtype other
than float32 (bfloat16 for products, convolutions, max pooling and a bias's add; float16
for matmul), an array below the table's size, an empty dimension, a geometry no implementation
takes), and the caller then runs its numpy code.

How a call runs:

- A primitive descriptor, its primitive and one memory object per argument are created
  once per (kind, shapes, parameters, dtype) and kept in a bounded LRU cache
  (``CACHE_SIZE`` entries; evicted entries free their oneDNN objects).
- numpy buffers are handed over zero-copy (``dnnl_memory_set_data_handle``) as plain
  row-major memory (nchw data, oihw or goihw weights), a product's operands with their
  own strides (primitive.Layout).  A convolution is created with
  format ``any``: oneDNN picks its blocked layouts (nChw8c, ...) and its direct
  ``jit:avx2``/``avx512`` kernels, and the primitive keeps buffers in those layouts with
  a reorder from and to the numpy buffers, run in the same call.  Plain layouts would
  skip the reorders but get oneDNN's im2col + GEMM kernel instead, measured 2-5x slower
  on the cnn_step shapes (benchmarks/README.md).  Pooling keeps the plain layouts (its
  nchw kernel).  oneDNN's scratchpad is its own (library mode).
- oneDNN runs on the OpenMP (libgomp) threads of its gomp build, which MKL's products
  share (cpu/mkl/); their number is ``set_num_threads``'s, else OMP_NUM_THREADS, else
  the core count.  Where MKL does not serve the products, idle threads sleep
  (OMP_WAIT_POLICY=PASSIVE unless set) so as not to hold the cores OpenBLAS's threads need
  next (see docs/architecture.md, "The oneDNN and MKL paths").

The library is looked up next to the Python environment (where the wheel puts it), then
on the loader's path; SHREW_ONEDNN_LIBRARY names it explicitly.  oneDNN's primitives are
deterministic for a fixed thread count: the same inputs give the same bits.
"""
from __future__ import annotations

from .binding import (GELU_ERF, GELU_TANH, POOL_AVG_EXCLUDE, POOL_AVG_INCLUDE, POOL_MAX,
                      OneDNNError, available, get_num_threads, load_error, set_enabled,
                      set_num_threads)
from .conv import conv2d, conv2d_backward_data, conv2d_backward_weights, conv_output_hw
from . import matmul   # (the module: its matmul would hide it)
from .elementwise import (eltwise, eltwise_backward, eltwise_derivative,
                          large_float32, layer_norm, layer_norm_affine,
                          layer_norm_affine_backward, log_softmax, relu_backward, softmax,
                          softmax_backward, standardized_backward)
from .pool import pool2d, pool2d_backward, pool_output_hw
from .primitive import cache_info, clear_cache

__all__ = ["GELU_ERF", "GELU_TANH", "POOL_AVG_EXCLUDE",
           "POOL_AVG_INCLUDE", "POOL_MAX", "OneDNNError", "available", "cache_info",
           "clear_cache", "conv2d", "conv2d_backward_data", "conv2d_backward_weights",
           "conv_output_hw", "eltwise", "eltwise_backward", "eltwise_derivative",
           "get_num_threads", "large_float32", "layer_norm", "layer_norm_affine",
           "layer_norm_affine_backward", "load_error", "log_softmax", "matmul", "pool2d",
           "pool2d_backward", "pool_output_hw", "relu_backward",
           "set_enabled", "set_num_threads", "softmax", "softmax_backward",
           "standardized_backward"]
