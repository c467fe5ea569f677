"""The cpu backend: numpy, the reference every other backend is tested against, with the
fast paths of oneDNN (onednn/) and MKL (mkl/), shrew's dependencies on x86-64 Linux, where
they serve.

The table below is the whole of how a call picks oneDNN, MKL or numpy; the switches that
turn a library off are in switches.py.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..array_module import ArrayModuleBackend
from ..base import Storage
from ..host_memory import keep_freed_memory
from .thresholds import CONV_FOLD_MIN_DEPTH, MIN_ELEMENTWISE_SIZE, SELECT_MIN_SIZE
from . import attention, bits16
from .mkl import bias as mkl_bias
from .mkl import gemm as mkl_gemm
from .mkl import library as mkl_library
from .mkl import vector as mkl_vector
from .onednn import binding as onednn_binding
from .onednn.binding import GELU_ERF, GELU_TANH, POOL_AVG_INCLUDE, RELU
from .onednn import conv as onednn_conv
from .onednn import elementwise as onednn_eltwise
from .onednn import matmul as onednn_matmul
from .onednn import max_pool as onednn_max_pool
from .onednn import pool as onednn_pool
from .onednn import rnn as onednn_rnn
from . import vendor, widened

# -- How a call picks oneDNN, MKL or numpy -------------------------------------------------
# Each primitive with a fast path: the steps tried in order (a step declines, and the next
# one runs, where its dtype, layout or size does not fit or its library is switched off or
# missing), the size in elements from which a library's step serves (below it numpy's
# one-thread pass costs less than the call), and the file of each step: mkl/ and onednn/
# are this folder's, "here" this file; "numpy" is ArrayModuleBackend's code
# (backends/array_module, shared with cuda), "core" the op's own composition or gradient
# rule (ops/, autograd/rules/), which runs where the backend declines.  oneDNN takes
# float32, bfloat16 for matrix products, convolutions, max pooling and a bias's
# add_into_, and float16 for matrix products where the CPU has AVX512-FP16 or AMX-FP16
# (elsewhere oneDNN has no kernel, and declines); bfloat16 where oneDNN has a kernel for
# the CPU (AVX512 ones, as a rule: onednn/matmul.py's serves).  MKL takes float32 and
# float64.  float16 and bfloat16 attention, its gradient, and softmax_backward and
# unary_backward (but relu's) take the float32 steps below on widened copies, in pieces of
# their leading dim, each result rounded once (widened.py); their relu and its gradient
# select on the int16 bit patterns (bits16.py: "bits" below), PyTorch's bits.
#
# (the sizes' values: thresholds.py)
#
# primitive              tried in order                                     from size
#                        files
# gemm (every product)   float32 where the CPU is not Intel's (vendor.py):   F32_MATMUL_MIN
#                        oneDNN matmul -> MKL -> numpy; else MKL -> numpy   _WORK; any
#                        onednn/matmul.py, mkl/gemm.py
# matmul of float16 or   oneDNN matmul (f32 accumulation, rounded once)     MATMUL_MIN_WORK
#   bfloat16             -> gemm on float32 copies, rounded once (numpy's   (M*N*K)
#                        matmul); onednn/matmul.py
# linear, its backward   matmul, add_into_; 16-bit: oneDNN matmul with the  -
#                        bias (MATMUL_MIN_WORK) -> that on float32 copies,
#                        rounded once; backward: matmul, reduce; here
# add_ (in place)        MKL axpy -> numpy                                  AXPY_MIN_SIZE
#                        mkl/vector.py
# add_into_              MKL axpy (same shapes) -> MKL ger (a bias)         AXPY_MIN_SIZE,
#                        -> oneDNN binary add (bfloat16, a broadcast src,   SUM_MIN_SIZE,
#                        no operand under 2^-118) -> numpy; mkl/vector.py,  MIN_ELEMENTWISE_SIZE
#                        mkl/bias.py, onednn/elementwise.py
# binary add, sub, mul   MKL VML (same shapes) -> numpy                     VML_MIN_SIZE
#                        mkl/vector.py
# reduce sum             MKL gemv (all dims but one run: a bias) -> numpy   SUM_MIN_SIZE
#                        mkl/bias.py
# unary relu             16-bit: bits; float32: oneDNN (x's abs_sum, MKL's,  any;
#                        not NaN) -> MKL VML fdim -> numpy;                 MIN_ELEMENTWISE_SIZE,
#                        bits16.py, onednn/elementwise.py, mkl/vector.py    VML_MIN_SIZE
# cast float32 to        oneDNN's reorder (no NaN; smallest magnitude a     MIN_ELEMENTWISE_SIZE
#   bfloat16             normal number: MKL's asum and iamin) -> numpy
#                        onednn/elementwise.py, mkl/vector.py
# unary gelu, gelu_tanh  oneDNN eltwise -> numpy                            MIN_ELEMENTWISE_SIZE
#   and derivatives      onednn/elementwise.py
# unary_backward         relu, 16-bit: bits (g and x of one shape);         any;
#   relu, gelus          oneDNN (relu: where g's |g| sum, MKL's, is finite) MIN_ELEMENTWISE_SIZE
#                        -> core; bits16.py, onednn/elementwise.py, mkl/vector.py
# softmax                oneDNN (a NaN out: redone; log: numpy's max, then  MIN_ELEMENTWISE_SIZE
#                        oneDNN's passes, rows of finite max) -> numpy
#                        onednn/elementwise.py
# softmax_backward       oneDNN (a log's y without NaN) -> the rule's       MIN_ELEMENTWISE_SIZE
#                        calls here (f32, f64) -> core; onednn/elementwise.py
# standardize,           oneDNN layer norm -> numpy (standardize) or core   MIN_ELEMENTWISE_SIZE
#   layer_norm, backward onednn/elementwise.py
# attention, backward    batched products (the library gemm's, as there)    MIN_ELEMENTWISE_SIZE
#                        around oneDNN's softmax -> core; attention.py,     scores
#                        onednn/elementwise.py
# conv2d, backward       oneDNN (float32, bfloat16) -> numpy's folded GEMMs any; folded:
#                        (C*kw at least CONV_FOLD_MIN_DEPTH; 16-bit on      CONV_FOLD_MIN_DEPTH
#                        float32 copies) -> core's im2col lowering;
#                        with MKL off, a shallower input's weight gradient
#                        skips oneDNN; onednn/conv.py, backends/array_module/folded_conv.py
# max_pool2d, backward   oneDNN, float32 or bfloat16 (no NaN; bfloat16: no   MIN_ELEMENTWISE_SIZE
#                        subnormal; backward: through the forward's
#                        workspace; bfloat16: windows apart, g without a
#                        subnormal) -> numpy; onednn/max_pool.py
# avg_pool2d, backward   oneDNN (PyTorch's default options) -> numpy or     any
#                        core; onednn/pool.py
# where                  select bit patterns -> numpy's where               SELECT_MIN_SIZE
#                        here
# scatter_add            sorted rows, added in rounds (whole rows; f32/64)  any
#                        -> numpy; here
# rnn_layer, backward    oneDNN's RNN primitives (LSTM, GRU, tanh/relu RNN; any
#   (one direction of    not packed sequences) -> core: rnn_cell per step
#   one layer)           (ops/rnn.py); onednn/rnn.py

# The unary functions oneDNN computes for the cpu backend (float32, large arrays): the
# GELUs, and their derivatives (GELU's gradient rule), as oneDNN's eltwise backward.
_ONEDNN_ELTWISE = {"gelu": GELU_ERF, "gelu_tanh": GELU_TANH}
_ONEDNN_DERIVATIVE = {"gelu_derivative": GELU_ERF,
                      "gelu_tanh_derivative": GELU_TANH}


class CPUBackend(ArrayModuleBackend):
    """numpy arrays as storage; float64 here is the ground truth of every test."""

    conv_fold_min_depth = CONV_FOLD_MIN_DEPTH   # (ArrayModuleBackend's folding)

    def __init__(self, index: int = 0):
        super().__init__("cpu")
        keep_freed_memory()

    def where(self, cond: Storage, a: Storage, b: Storage) -> Storage:
        # numpy.where branches on every element: on a mask without a pattern (relu's
        # backward, dropout) it runs about 10x slower than selecting the bit patterns,
        # b ^ ((a ^ b) & mask) with mask all ones where cond holds, which is exact too.
        size = a.dtype.itemsize
        if size not in (2, 4, 8) or max(cond.size, a.size, b.size) < SELECT_MIN_SIZE:
            return np.where(cond, a, b)
        bits = np.dtype(f"i{size}")
        a_bits, b_bits = a.view(bits), b.view(bits)
        mask = np.array(cond, dtype=bits)  # an array even for a 0-d cond held as a numpy scalar
        if b.ndim == 0 and not b_bits:  # a or +0 (relu's backward, dropout): a & mask
            np.negative(mask, out=mask)
            return np.bitwise_and(a_bits, mask).view(a.dtype)
        if a.ndim == 0 and not a_bits:  # +0 or b: b & ~mask
            mask -= 1
            return np.bitwise_and(b_bits, mask).view(a.dtype)
        np.negative(mask, out=mask)
        out = np.bitwise_xor(a_bits, b_bits, dtype=bits)
        out = np.broadcast_to(out, np.broadcast_shapes(out.shape, mask.shape)) & mask
        out ^= b_bits
        return out.view(a.dtype)

    # -- MKL or oneDNN where they serve the call, else the array module's numpy code -------
    def add_(self, dst: Storage, src: Storage, alpha: float) -> None:
        # MKL's axpy is one pass on all threads (alpha = 1: the same bits as numpy's +=;
        # otherwise one rounding, as PyTorch's fused add, where numpy's rounds twice).
        if not mkl_vector.axpy(dst, src, alpha):
            super().add_(dst, src, alpha)

    def add_into_(self, dst: Storage, src: Storage) -> None:  # base.FastAccumulate
        # Same shapes: one axpy; a bias broadcast: one rank-1 update (bfloat16: oneDNN's
        # binary add); else numpy's +=.
        if not (mkl_vector.axpy(dst, src, 1.0) or mkl_bias.add_broadcast_(dst, src)
                or onednn_eltwise.add_into(dst, src)):
            super().add_into_(dst, src)

    def binary(self, fn: str, a: Storage, b: Storage) -> Storage:
        out = mkl_vector.binary(fn, a, b)
        # Named, not super(): this runs for every binary op, where super() shows.
        return ArrayModuleBackend.binary(self, fn, a, b) if out is NotImplemented else out

    def reduce(self, fn: str, x: Storage, dims: tuple, keepdim: bool) -> Storage:
        # A sum around one run of kept dims (a bias gradient) as products on MKL's threads.
        if fn == "sum":
            out = mkl_bias.sum_around(x, dims, keepdim)
            if out is not NotImplemented:
                return out
        return ArrayModuleBackend.reduce(self, fn, x, dims, keepdim)

    def scatter_add(self, shape: tuple, dim: int, index: Storage, src: Storage) -> Storage:
        out = _scatter_rows(shape, dim, index, src)
        return super().scatter_add(shape, dim, index, src) if out is None else out

    # base.FastLinear: one node without the transpose and add nodes and the Tensor around
    # each call of their rules (a linear layer with ReLU, forward and backward on [2, 4]
    # inputs: 187 us composed, about 130 so).  float32 and float64: PyTorch's addmm on
    # MKL, a GEMM onto the bias copied into the result (PyTorch's bits on mlp_step's
    # layers, and 3.5% off its step against a bias added after the product, which the
    # composition does: the two can differ in the last bit).
    # float16 and bfloat16: the bias joins the float32 sums before the one rounding, as in
    # PyTorch's addmm (a product rounded, then added to the bias, would round twice): on
    # oneDNN, w read transposed in place, else this float32 call on widened copies.
    def linear(self, x: Storage, w: Storage, b: Storage) -> Storage:
        low = widened.low_dtype(x, w, b)
        if low is not None:
            y = onednn_matmul.matmul(x, w.T, b)
            return widened.call(self.linear, low, (), x, w, b) if y is NotImplemented else y
        y = vendor.onednn_f32_product(x, w.T, b)
        if y is NotImplemented:
            y = mkl_gemm.addmm(b, x, w.T)
        if y is NotImplemented:
            y = self.matmul(x, w.T)
            self.add_into_(y, b.reshape(1, -1))
        return y

    def linear_backward(self, g: Storage, x: Storage, w: Storage, need_x: bool,
                        need_w: bool, need_b: bool) -> tuple:
        return (self.matmul(g, w) if need_x else None,
                self.matmul(g.T, x) if need_w else None,
                self.reduce("sum", g, (0,), False) if need_b else None)

    def matmul(self, a: Storage, b: Storage) -> Storage:
        # float16 and bfloat16 on oneDNN, operands read as they lie, products accumulated
        # in float32 and rounded once; where it declines, the array module's float32 GEMM
        # on widened copies (the same values up to the order of the float32 sums)
        if a.dtype in widened.LOW_PRECISION:
            out = onednn_matmul.matmul(a, b)
            if out is not NotImplemented:
                return out
        return ArrayModuleBackend.matmul(self, a, b)

    def gemm(self, a: Storage, b: Storage, out: Storage | None = None) -> Storage:
        got = vendor.onednn_f32_product(a, b, None, out)
        if got is NotImplemented:
            got = mkl_gemm.matmul(a, b, out)
        return np.matmul(a, b, out=out) if got is NotImplemented else got

    def conv2d(self, x: Storage, w: Storage, stride: tuple, padding: tuple, dilation: tuple,
               groups: int) -> Storage:  # base.FastConv
        out = onednn_conv.conv2d(x, w, stride, padding, dilation, groups)
        if out is NotImplemented:
            return super().conv2d(x, w, stride, padding, dilation, groups)
        return out

    def conv2d_backward(self, x: Storage, w: Storage, g: Storage, stride: tuple, padding: tuple,
                        dilation: tuple, groups: int, need_x: bool,
                        need_w: bool) -> tuple:  # base.FastConv
        """oneDNN's two gradients (onednn/conv.py), else super()'s: the array module's
        folded GEMMs (backends/array_module/folded_conv.py) where C*kw >= conv_fold_min_depth, else
        NotImplemented, and the rule (autograd/rules/conv.py) runs the core's lowering."""
        args = (stride, padding, dilation, groups)
        plain = all(d == 1 for d in dilation) and groups == 1
        if (need_w and plain and w.shape[1] * w.shape[-1] < self.conv_fold_min_depth
                and not mkl_library.available()):
            # With OpenBLAS's GEMMs beside it, oneDNN's weight gradient of a shallow input
            # measured 2-4x slower than the core's im2col lowering (cnn_step's first
            # layer, one channel), which then runs instead; with MKL's on the same
            # OpenMP threads it is the faster (cnn_step 8.4 against 9.0-9.6 ms a step).
            # (A grouped or dilated one has no such lowering: the core's composition
            # is slower still.)
            return super().conv2d_backward(x, w, g, *args, need_x, need_w)
        gx = onednn_conv.conv2d_backward_data(g, w, x.shape, *args) if need_x else None
        gw = onednn_conv.conv2d_backward_weights(x, g, w.shape, *args) if need_w else None
        if gx is NotImplemented or gw is NotImplemented:
            return super().conv2d_backward(x, w, g, *args, need_x, need_w)
        return gx, gw

    def cast(self, x: Storage, dtype: np.dtype) -> Storage:
        if x.dtype == np.float32 and np.dtype(dtype) == onednn_matmul.BFLOAT16:
            out = _onednn_to_bfloat16(x)   # (autocast's casts of weights and activations)
            if out is not NotImplemented:
                return out
        return ArrayModuleBackend.cast(self, x, dtype)

    def unary(self, fn: str, x: Storage) -> Storage:
        out: Any = NotImplemented
        if fn == "relu" and x.dtype in bits16.DTYPES:
            out = bits16.relu(x)   # (their bit patterns: numpy's 16-bit float loops are slow)
        elif fn == "relu":
            out = _onednn_relu(x)
            if out is NotImplemented:
                out = mkl_vector.relu(x)
        elif fn in _ONEDNN_ELTWISE:
            low = widened.low_dtype(x)   # 16-bit: in float32 pieces, not one float32 copy
            out = (onednn_eltwise.eltwise(x, _ONEDNN_ELTWISE[fn]) if low is None
                   else widened.elementwise(self.unary, low, fn, x))
        elif fn in _ONEDNN_DERIVATIVE:
            out = onednn_eltwise.eltwise_derivative(x, _ONEDNN_DERIVATIVE[fn])
        # Named, not super(): this runs for every unary op, where super() shows.
        return ArrayModuleBackend.unary(self, fn, x) if out is NotImplemented else out

    def softmax(self, x: Storage, dim: int, log: bool) -> Storage:
        out = (onednn_eltwise.log_softmax if log else onednn_eltwise.softmax)(x, dim)
        # oneDNN leaves a row's other elements finite beside a NaN, where PyTorch makes
        # the whole row NaN: a call with a NaN in its output (rare) is redone by numpy.
        # (log_softmax declines rows that are not all finite: its output holds no NaN.)
        if out is NotImplemented or (not log and np.isnan(out).any()):
            return super().softmax(x, dim, log)
        return out

    def softmax_backward(self, g: Storage, y: Storage, dim: int,
                         log: bool) -> Storage:  # base.FastGrad
        # oneDNN's exp takes a NaN log-probability (a row masked whole) to a number, where
        # PyTorch's gradient is NaN: such a call is made as the core's rule makes it.  The
        # pass that looks for one runs only where oneDNN would serve.
        if y.ndim == 0:   # (never recorded: softmax of a 0-d tensor goes through [1])
            return NotImplemented
        low = widened.low_dtype(g, y)
        if low is not None:   # in pieces of dim 0 where the softmax is along another
            lead = y.shape if dim % y.ndim and g.shape == y.shape else ()
            return widened.call(self.softmax_backward, low, lead, g, y, dim, log)
        if not onednn_eltwise.large_float32(y) or (log and mkl_vector.has_nan(y)):
            return self._softmax_backward_composed(g, y, dim, log)
        return onednn_eltwise.softmax_backward(g, y, dim % y.ndim, log)

    def _softmax_backward_composed(self, g: Storage, y: Storage, dim: int,
                                   log: bool) -> Storage:
        """The core rule's very calls (autograd/rules/norm.py's softmax_grad), without a
        Tensor around each: a classifier's small log-softmax gradient is four calls either
        way, and the wrapping cost more than they did.  Other dtypes keep the rule's
        promotions."""
        if g.dtype != y.dtype or g.dtype not in (np.float32, np.float64):
            return NotImplemented
        total = (dim % y.ndim,)
        if log:
            exp_y = self.unary("exp", y)
            return self.binary("sub", g, self.binary("mul", exp_y,
                                                     self.reduce("sum", g, total, True)))
        gy = self.reduce("sum", self.binary("mul", g, y), total, True)
        return self.binary("mul", y, self.binary("sub", g, gy))

    def standardize_backward(self, g: Storage, y: Storage, rstd: Storage,
                             ndims: int) -> Storage:  # base.FastGrad
        cols = math.prod(y.shape[y.ndim - ndims:])
        if not cols or g.shape != y.shape:
            return NotImplemented
        dx = onednn_eltwise.standardized_backward(g.reshape(-1, cols), y.reshape(-1, cols))
        if dx is NotImplemented:
            return NotImplemented
        dx = dx.reshape(y.shape)
        dx *= rstd
        return dx

    def unary_backward(self, fn: str, g: Storage, x: Storage) -> Storage:  # base.FastGrad
        low = widened.low_dtype(g, x)
        if low is not None and fn == "relu" and g.shape == x.shape:
            return bits16.relu_backward(g, x)
        if low is not None and g.shape == x.shape:
            return widened.elementwise(self.unary_backward, low, fn, g, x)
        if low is not None:   # (g broadcasts: whole)
            return widened.call(self.unary_backward, low, (), fn, g, x)
        if fn == "relu":
            return _onednn_relu_backward(g, x)
        alg = _ONEDNN_ELTWISE.get(fn)
        return NotImplemented if alg is None else onednn_eltwise.eltwise_backward(g, x, alg)

    def standardize(self, x: Storage, dims: tuple, eps: float) -> tuple:
        cols = math.prod(x.shape[x.ndim - len(dims):])
        got = onednn_eltwise.layer_norm(x.reshape(-1, cols), eps) if cols else NotImplemented
        if got is NotImplemented:
            return super().standardize(x, dims, eps)
        y, _, var = got
        return y.reshape(x.shape), _rstd(var, eps, x, len(dims))

    def layer_norm(self, x: Storage, weight: Storage, bias: Storage, ndims: int,
                   eps: float) -> tuple:  # base.FastNorm
        # oneDNN gives a row with a NaN or an infinity NaN throughout, as PyTorch does.
        cols = math.prod(x.shape[x.ndim - ndims:])
        if not cols or weight.shape != x.shape[x.ndim - ndims:]:
            return NotImplemented
        got = onednn_eltwise.layer_norm_affine(x.reshape(-1, cols), weight.reshape(cols),
                                       bias.reshape(cols), eps)
        if got is NotImplemented:
            return NotImplemented
        y, mean, var = got
        rstd = _rstd(var, eps, x, ndims)
        return y.reshape(x.shape), mean.reshape(rstd.shape), rstd

    def layer_norm_backward(self, g: Storage, x: Storage, weight: Storage, mean: Storage,
                            rstd: Storage, ndims: int) -> tuple:  # base.FastNorm
        cols = math.prod(x.shape[x.ndim - ndims:])
        if not cols or g.shape != x.shape or weight.shape != x.shape[x.ndim - ndims:]:
            return NotImplemented
        # oneDNN takes the variance and epsilon: 1 / rstd**2 with epsilon 0 stands for
        # the forward's var + eps, within an ulp; not where it comes out 0 (rstd infinite,
        # or its square overflowing with eps 0): the core's rule takes those.
        var = np.reciprocal(np.square(rstd.reshape(-1)))
        if not var.all():
            return NotImplemented
        got = onednn_eltwise.layer_norm_affine_backward(g.reshape(-1, cols), x.reshape(-1, cols),
                                                mean.reshape(-1), var, weight.reshape(cols),
                                                0.0)
        if got is NotImplemented:
            return NotImplemented
        dx, dweight, dbias = got
        return dx.reshape(x.shape), dweight.reshape(weight.shape), dbias.reshape(weight.shape)

    def max_pool2d(self, x: Storage, kernel: tuple, stride: tuple, padding: tuple,
                   dilation: tuple, ceil_mode: bool) -> tuple:
        got = onednn_max_pool.forward(x, kernel, stride, padding, dilation, ceil_mode)
        if got is NotImplemented:
            return super().max_pool2d(x, kernel, stride, padding, dilation, ceil_mode)
        values, offsets = got
        index = self.window_index(offsets, kernel, stride, padding, dilation, x.shape[2:])
        onednn_max_pool.remember(index, x.shape, kernel, stride, padding, offsets)
        return values, index

    def max_pool2d_backward(self, g: Storage, index: Storage, shape: tuple, kernel: tuple,
                            stride: tuple, dilation: tuple) -> Storage:  # base.FastPool
        dx = onednn_max_pool.backward(g, index, shape, kernel, stride, dilation)
        if dx is NotImplemented:
            return super().max_pool2d_backward(g, index, shape, kernel, stride, dilation)
        return dx

    def avg_pool2d(self, x: Storage, kernel: tuple, stride: tuple, padding: tuple,
                   ceil_mode: bool, count_include_pad: bool,
                   divisor_override: int | None) -> Storage:
        args = (x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
        if not _onednn_avg_pool(ceil_mode, count_include_pad, divisor_override):
            return super().avg_pool2d(*args)
        out = onednn_pool.pool2d(x, POOL_AVG_INCLUDE, kernel, stride, padding)
        return super().avg_pool2d(*args) if out is NotImplemented else out[0]

    def attention(self, q: Storage, k: Storage, v: Storage, bias: Storage | None,
                  scale: float) -> tuple:  # base.FastAttention
        """(softmax(q k^T scale + bias) v, the softmax), or NotImplemented."""
        low = widened.low_dtype(q, k, v, bias)
        if low is not None:   # float16, bfloat16: the float32 call, both results rounded
            return widened.call(self.attention, low, q.shape, q, k, v, bias, scale)
        if not _attention_takes(q, k, v) or (bias is not None and bias.dtype != np.float32):
            return NotImplemented
        weights = attention.scores(q, k, bias, scale)
        # A NaN (a row masked whole, a NaN input) goes to the core, whose softmax carries it
        # through its row as PyTorch's does.
        if (weights is NotImplemented
                or onednn_eltwise.softmax(weights, weights.ndim - 1, weights) is NotImplemented
                or mkl_vector.has_nan(weights)):
            return NotImplemented
        out = attention.weighted_values(weights, v, q)
        return NotImplemented if out is NotImplemented else (out, weights)

    def attention_backward(self, g: Storage, q: Storage, k: Storage, v: Storage,
                           weights: Storage, scale: float, need: tuple,
                           joined: bool = False) -> Any:  # base.FastAttention
        """(dq, dk, dv) of attention's output given its gradient g (None where `need` says
        so), or, joined, their one array (attention.py's gradient_buffers); or
        NotImplemented: dv = w^T g; ds = softmax's gradient of g v^T; dq = ds k scale,
        dk = ds^T q scale."""
        low = widened.low_dtype(g, q, k, v, weights)
        if low is not None:
            return widened.call(self.attention_backward, low, q.shape, g, q, k, v, weights, scale,
                                need, joined)
        if (not _attention_takes(q, k, v) or g.dtype != np.float32
                or g.shape != q.shape[:-1] + v.shape[-1:]):
            return NotImplemented
        buffers = attention.gradient_buffers(q, k, v, need, joined)
        if buffers is None:
            return NotImplemented
        ds = None
        if need[0] or need[1]:
            dw = attention.weights_gradient(g, v)
            ds = NotImplemented if dw is NotImplemented else \
                onednn_eltwise.softmax_backward(dw, weights, weights.ndim - 1, False)
            if ds is NotImplemented:
                return NotImplemented
        return attention.input_gradients(buffers, ds, q, k, g, weights, scale)

    def rnn_layer(self, mode: str, x: Storage, h0: Storage, c0: Storage | None,
                  w_ih: Storage, w_hh: Storage, b_ih: Storage | None, b_hh: Storage | None,
                  reverse: bool) -> Any:  # base.FastRecurrent
        return onednn_rnn.rnn_layer(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse)

    def rnn_layer_backward(self, mode: str, gy: Storage, gh: Storage, gc: Storage | None,
                           x: Storage, h0: Storage, c0: Storage | None, y: Storage,
                           h_n: Storage, c_n: Storage | None, ws: Any,
                           reverse: bool) -> Any:  # base.FastRecurrent
        return onednn_rnn.rnn_layer_backward(mode, gy, gh, gc, x, h0, c0, y, h_n, c_n, ws,
                                             reverse)

    def avg_pool2d_backward(self, g: Storage, shape: tuple, kernel: tuple, stride: tuple,
                            padding: tuple, ceil_mode: bool, count_include_pad: bool,
                            divisor_override: int | None) -> Storage:  # base.FastPool
        # oneDNN's backward is ~4-5x faster than the core's col2im (benchmarks/README.md)
        if not _onednn_avg_pool(ceil_mode, count_include_pad, divisor_override):
            return NotImplemented
        return onednn_pool.pool2d_backward(g, shape, POOL_AVG_INCLUDE, kernel, stride,
                                           padding)


def _rstd(var: Storage, eps: float, x: Storage, ndims: int) -> Storage:
    """1 / sqrt(var + eps) from oneDNN's variance per row, shaped as x with its last ndims
    dims kept as 1 (the core's rstd)."""
    return (1 / np.sqrt(var + np.float32(eps))).reshape(x.shape[:x.ndim - ndims] + (1,) * ndims)


_ROUNDS = 8
"""_scatter_rows: the occurrences of each target handled by whole-array rounds; a target's
later ones (a frequent word's) are summed on its own."""


def _scatter_rows(shape: tuple, dim: int, index: Storage, src: Storage) -> Storage | None:
    """scatter_add of whole rows: an index along dim 0 that is the same across every other
    dim (an embedding's gradient: each token's row of g added into its word's row), for
    float32 and float64; None for any other scatter.  Each target's rows are added onto
    zeros one after another in index order, in the rows' dtype: PyTorch's embedding
    backward and index_add_, bit for bit.  Round k adds every target's k-th row at once
    (the targets of a round are distinct); a target with more than _ROUNDS rows sums the
    rest on its own, row after row.  The general path casts every
    element to float64 and bincounts them, about 3x slower on a transformer's [1024, 256]
    gradient; add.reduceat, which this replaced, summed a run in another order and took
    0.58 ms on a word model's [700, 200] where this takes 0.15."""
    if (dim != 0 or src.dtype not in (np.float32, np.float64) or index.ndim != len(shape)
            or index.ndim < 2 or index.shape[1:] != tuple(shape[1:])
            or any(s != 0 for s in index.strides[1:]) or not index.size):
        return None
    rows = index[(slice(None),) + (0,) * (index.ndim - 1)]
    src = src[tuple(slice(0, n) for n in index.shape)]
    order = np.argsort(rows, kind="stable")
    targets = rows[order]
    first = np.empty(len(targets), dtype=bool)   # where each target's run starts
    first[0] = True
    np.not_equal(targets[1:], targets[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    counts = np.diff(np.append(starts, len(targets)))
    rank = np.arange(len(targets)) - np.repeat(starts, counts)   # k: a target's k-th row
    out = np.zeros(shape, src.dtype)
    for k in range(min(int(counts.max()), _ROUNDS)):
        picked = order[rank == k]
        out[rows[picked]] += src[picked]
    heavy = counts > _ROUNDS
    # Along axis 0 numpy's reduce adds row after row when a row is wide (the row is its
    # inner loop); a narrow one could be summed pairwise, so it takes the running sum.
    wide = math.prod(shape[1:]) >= 16
    for start, count in zip(starts[heavy], counts[heavy]):
        target, rest = targets[start], order[start + _ROUNDS:start + count]
        run = np.concatenate((out[target][None], src[rest]))
        out[target] = np.add.reduce(run, axis=0) if wide else np.add.accumulate(run)[-1]
    return out


_SMALLEST_NORMAL = float(np.finfo(np.float32).tiny)


def _onednn_to_bfloat16(x: Storage) -> Storage:
    """x rounded to bfloat16 by oneDNN's reorder (onednn/elementwise.py's to_bfloat16),
    where that gives PyTorch's bits: x holds no NaN (its abs_sum, MKL's, is not NaN) and
    its smallest magnitude (MKL's iamin) is a normal number, so no subnormal (which the
    reorder flushes) and no zero (beside which one could hide).  Else NotImplemented:
    numpy's conversion (ml_dtypes') serves."""
    if not onednn_eltwise.takes_to_bfloat16(x):   # (before the passes that check x)
        return NotImplemented
    total = mkl_vector.abs_sum(x)
    if total is None or math.isnan(total):
        return NotImplemented
    smallest = mkl_vector.smallest_magnitude(x)
    if smallest is None or not smallest >= _SMALLEST_NORMAL:
        return NotImplemented
    return onednn_eltwise.to_bfloat16(x)


def _onednn_relu(x: Storage) -> Storage:
    """max(x, 0) by oneDNN's relu, which gives +0 for x <= 0 (-0 and -inf too) as MKL's
    fdim does but 0 for a NaN, where PyTorch keeps the NaN: it serves where x's abs_sum
    (MKL's) is not NaN.  oneDNN picks its code by the CPU's instruction sets; VML's fdim
    takes a generic path on AMD's CPUs (1 MB on a Zen 4: 99 us, against 25 + 11 so)."""
    if not onednn_eltwise.large_float32(x):
        return NotImplemented
    x_sum = mkl_vector.abs_sum(x)
    if x_sum is None or math.isnan(x_sum):
        return NotImplemented
    return onednn_eltwise.eltwise(x, RELU)


def _onednn_relu_backward(g: Storage, x: Storage) -> Storage:
    """relu's gradient, g where x > 0 (or is NaN) and +0 elsewhere, as PyTorch's
    threshold_backward: one oneDNN pass (onednn/elementwise.py's relu_backward) against
    numpy's compare and select.  That pass gives NaN where x <= 0 and g is infinite or
    NaN: it serves only where g's abs_sum is finite."""
    if g.shape != x.shape or not onednn_eltwise.large_float32(x):
        return NotImplemented
    g_sum = mkl_vector.abs_sum(g)
    if g_sum is None or not math.isfinite(g_sum):
        return NotImplemented
    return onednn_eltwise.relu_backward(g, x)


def _attention_takes(q: Storage, k: Storage, v: Storage) -> bool:
    """Whether q, k and v fit (float32, one batch shape) and the scores are large enough
    for oneDNN's softmax, with MKL and oneDNN both serving."""
    batch = q.shape[:-2]
    return (q.dtype == k.dtype == v.dtype == np.float32 and q.ndim >= 2
            and k.shape[:-2] == v.shape[:-2] == batch and q.shape[-1] == k.shape[-1]
            and k.shape[-2] == v.shape[-2] and 0 not in q.shape + k.shape + v.shape
            and math.prod(batch) * q.shape[-2] * k.shape[-2] >= MIN_ELEMENTWISE_SIZE
            and mkl_library.available() and onednn_binding.available())


def _onednn_avg_pool(ceil_mode: bool, count_include_pad: bool,
                     divisor_override: int | None) -> bool:
    """Whether avg_pool2d's options are the ones its oneDNN path takes: PyTorch's defaults
    (every window divided by kh*kw, no partial windows on the right)."""
    return not ceil_mode and count_include_pad and divisor_override is None


def factory(index: int = 0) -> CPUBackend:
    if index != 0:
        raise RuntimeError("there is one CPU device; call it 'cpu'")
    return CPUBackend(index)


factory.device_count = lambda: 1  # type: ignore[attr-defined]
