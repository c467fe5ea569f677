"""The Backend protocol: the primitive kernels a device must provide.

A backend owns storage on its device and knows nothing of Tensor, Op or autograd.
Storage objects are opaque to the core except for two attributes, ``shape`` (tuple of
int) and ``dtype`` (a ``numpy.dtype``).  Every argument has already been validated by the
core: shapes broadcast, dims are normalised to non-negative ints, dtypes match as stated,
indices are in range.  A primitive therefore never needs to raise for bad user input.

Dtypes cross this boundary as ``numpy.dtype`` objects (float16/32/64, ml_dtypes' bfloat16,
uint8, int8/16/32/64, bool).
Shapes are tuples of int.  "dims" are sorted tuples of distinct non-negative ints.
A primitive returns new storage (or a view that the core treats as read-only); it never
modifies an input, except ``copy_`` and the ``*_`` in-place updates which say so.

A backend may also set ``max_alloc_bytes`` (an int), the largest buffer its device
allocates at once: the core refuses a larger tensor before asking (the OpenCL backend sets
its device's CL_DEVICE_MAX_MEM_ALLOC_SIZE).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

Storage = Any  # the backend's own array type; has .shape and .dtype

# The special functions (ops/special.py), kept in a kernel family of their own on OpenCL
# (kernels/special.cl), so that the common elementwise kernels build without them.
SPECIAL_UNARY_FNS = (
    "lgamma", "digamma", "erfcx", "ndtri", "log_ndtr", "i0", "i0e", "i1", "i1e",
    "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_k0",
    "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "airy_ai",
)
SPECIAL_BINARY_FNS = ("igamma", "igammac", "zeta", "chebyshev_polynomial_t",
                      "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
                      "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
                      "legendre_polynomial_p")
UNARY_FNS = (
    "neg", "abs", "exp", "log", "sqrt", "square", "relu", "sigmoid", "tanh", "gelu",
    "gelu_tanh", "silu", "sin", "cos", "floor", "ceil", "round", "erf", "sign",
    "gelu_derivative", "gelu_tanh_derivative",
    # elementwise math (ops/elementwise/recorded.py)
    "rsqrt", "reciprocal", "log1p", "expm1", "log2", "log10", "exp2", "tan", "asin", "acos",
    "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erfc", "erfinv", "trunc",
    "bitwise_not",
    *SPECIAL_UNARY_FNS,
)
"""gelu_derivative and gelu_tanh_derivative serve gradient rules and have no Tensor method:
they make GELU's backward one kernel instead of a dozen.  bitwise_not is for integers and
bool only (logical not on bool).  The special functions are PyTorch's (torch.special) with
its values at the edges: lgamma(-inf) is inf; digamma is -inf at +0, inf at -0 and NaN at
the negative integers and -inf; i0, i1, the Bessel J and Y and airy_ai are NaN at +-inf
(the scaled i0e, i1e 0); Y and K are -inf and inf at 0 and NaN below; ndtri is -inf and
inf at 0 and 1."""
BINARY_FNS = ("add", "sub", "mul", "div", "pow", "atan2", "maximum", "minimum", "fmod",
              "remainder", "floor_divide", "copysign", "bitwise_and", "bitwise_or",
              "bitwise_xor", "tanh_backward", "sigmoid_backward",
              *SPECIAL_BINARY_FNS)
"""On integers pow gives 1, +-1 or 0 for a negative exponent (base 1, -1, other);
remainder and floor_divide round toward -inf (Python's // and %), fmod toward zero; maximum
and minimum propagate NaN; atan2 and copysign are float only; the bitwise three are integer
and bool only; integer div is never asked for.  An integer divisor of 0 gives 0.
tanh_backward(g, y) is g (1 - y y) and sigmoid_backward(g, y) is g y (1 - y), in that
order of operations (float only): the gradients of tanh and sigmoid from their output y,
one pass instead of three, as PyTorch's kernels of the same names.
igamma(a, x) and igammac(a, x) are the regularized lower and upper incomplete gamma
functions (NaN for a negative a or x, and where a and x are both 0 or both infinite), and
zeta(s, q) the Hurwitz zeta function (inf at s = 1 and at q a non-positive integer, NaN
for s < 1 and for a negative q with a fractional s), all float only.  The orthogonal
polynomials (chebyshev_polynomial_t(x, n), ..., legendre_polynomial_p) take the degree n
as a float of x's dtype, truncated to an integer (0 for a negative, infinite or NaN n),
and follow their three-term recurrences."""
COMPARE_FNS = ("eq", "ne", "lt", "le", "gt", "ge")
REDUCE_FNS = ("sum", "mean", "max", "min")
ARG_REDUCE_FNS = ("argmax", "argmin")
SCAN_FNS = ("sum", "prod", "logsumexp")  # logsumexp: floating-point dtypes only
ARG_SCAN_FNS = ("max", "min")
RNN_CELL_MODES = ("rnn_tanh", "rnn_relu", "lstm", "gru")  # rnn_cell's steps
SCATTER_REDUCE_FNS = ("none", "sum", "prod", "amax", "amin")  # scatter's ways to combine
LINALG_FNS = ("solve", "cholesky", "det", "slogdet", "qr", "svd", "svdvals", "eigh", "eigvalsh")
"""The matrix routines of ``linalg`` (float32/float64 arrays [..., m, n], batch dims equal,
square where the routine needs it), with what each returns:
solve (a [..., n, n], b [..., n, k]) -> (x, info); cholesky (a) -> (lower L, info), info an
int32 array over the batch, nonzero where a matrix is singular / not positive-definite (its
result there is undefined); det -> (det,); slogdet -> (sign, log|det|) in a's dtype;
qr with option "reduced" or "complete" -> (Q, R); svd with option full_matrices ->
(U, S, Vh), S descending; svdvals -> (S,); eigh with option "L" or "U" (the triangle read)
-> (ascending eigenvalues, eigenvectors as columns); eigvalsh -> (eigenvalues,)."""


@runtime_checkable
class Backend(Protocol):
    """The primitive kernel set: one docstring each says what the kernel computes.

    Every result is new storage unless its docstring says that it may alias an input."""

    device: str
    """The canonical device string: "cpu", "opencl:0", "cuda:1"."""
    dtypes: frozenset
    """The numpy dtypes this device can store and compute in."""

    # -- host transfer and creation ----------------------------------------------------
    def from_numpy(self, a: np.ndarray) -> Storage:
        """Copy the host array `a` (any layout) to the device."""

    def to_numpy(self, x: Storage) -> np.ndarray:
        """Copy x to a new C-contiguous host array."""

    def full(self, shape: tuple, value: float, dtype: np.dtype) -> Storage:
        """An array of `shape` and `dtype` with every element `value`."""

    def arange(self, n: int, dtype: np.dtype) -> Storage:
        """The 1-d array 0, 1, ..., n - 1 in `dtype`."""

    # -- layout: views (may alias their input) and copies ------------------------------
    def reshape(self, x: Storage, shape: tuple) -> Storage:
        """x's elements in C order, with the new `shape` (same size).  May be a view of x
        (where its strides allow)."""

    def transpose(self, x: Storage, d0: int, d1: int) -> Storage:
        """x with dims d0 and d1 swapped.  May be a view of x."""

    def narrow(self, x: Storage, dim: int, start: int, length: int) -> Storage:
        """The slice [start, start + length) of x along dim.  May be a view of x."""

    def expand(self, x: Storage, shape: tuple) -> Storage:
        """x broadcast to `shape` by numpy's rules (x.ndim == len(shape)).  May be a view
        of x."""

    def as_strided(self, x: Storage, shape: tuple, strides: tuple, offset: int) -> Storage:
        """A view of x's memory (never a copy): `shape` read with element `strides` from
        `offset` elements after x's first element (negative reaches before it, into the
        memory x is a view of).  The caller keeps every element inside that memory."""

    def contiguous(self, x: Storage) -> Storage:
        """A strided copy of x into a fresh C-contiguous array (never x itself)."""

    def cat(self, xs: Sequence[Storage], dim: int) -> Storage:
        """The arrays xs (one dtype, equal off dim) concatenated along dim."""

    def pad(self, x: Storage, pads: Sequence[tuple], value: float) -> Storage:
        """x padded by (before, after) elements per dim (each >= 0), filled with value."""

    def cast(self, x: Storage, dtype: np.dtype) -> Storage:
        """x's elements converted to `dtype`; float to int truncates toward zero.  May be x
        itself where `dtype` is x's."""

    # -- elementwise (a and b share a dtype and broadcast by numpy's rules) -------------
    def unary(self, fn: str, x: Storage) -> Storage:
        """fn (one of UNARY_FNS, see there) of each element, in x's dtype.  Float dtypes
        only, except neg, abs, square, relu, sign, floor, ceil, round, trunc and
        bitwise_not."""

    def binary(self, fn: str, a: Storage, b: Storage) -> Storage:
        """fn (one of BINARY_FNS, see there) of a and b, elementwise."""

    def compare(self, fn: str, a: Storage, b: Storage) -> Storage:
        """fn (one of COMPARE_FNS) of a and b, elementwise: a bool array."""

    def where(self, cond: Storage, a: Storage, b: Storage) -> Storage:
        """a where the bool cond holds, else b (a and b of one dtype; all three
        broadcast)."""

    def affine(self, x: Storage, mul: float, add: float) -> Storage:
        """x * mul + add, in x's dtype."""

    def powf(self, x: Storage, exponent: float) -> Storage:
        """x ** exponent for a float x."""

    def clamp(self, x: Storage, lo: float | None, hi: float | None) -> Storage:
        """min(max(x, lo), hi); None leaves that side unbounded (both None: may be x
        itself)."""

    # -- reductions --------------------------------------------------------------------
    def reduce(self, fn: str, x: Storage, dims: tuple, keepdim: bool) -> Storage:
        """fn (one of REDUCE_FNS) over the non-empty `dims`, kept as size 1 where keepdim.
        The sum of an int or bool x is int64."""

    def arg_reduce(self, fn: str, x: Storage, dim: int, keepdim: bool) -> Storage:
        """fn (one of ARG_REDUCE_FNS) along dim: the int64 index of the first maximum or
        minimum."""

    # -- scans and sorting along one dim (x.shape[dim] >= 1; result has x's shape) -------
    def scan(self, fn: str, x: Storage, dim: int) -> Storage:
        """fn (one of SCAN_FNS): the running sum, product or log-sum-exp along dim, in order,
        in x's dtype (never bool)."""

    def arg_scan(self, fn: str, x: Storage, dim: int) -> Storage:
        """fn (one of ARG_SCAN_FNS): the int64 index of the running maximum or minimum along
        dim; the latest of ties, and once a NaN is seen, the latest NaN."""

    def argsort(self, x: Storage, dim: int, descending: bool) -> Storage:
        """The int64 indices that sort x along dim, stably (equal elements keep their
        order, descending too); NaN is the largest value."""

    # -- fused normalisations (float x, ndim >= 1, no zero-size dim) -------------------
    def fft(self, x: Storage, dims: tuple, inverse: bool) -> Storage:
        """The complex discrete Fourier transform over `dims`, unnormalised either way.
        x holds complex numbers as float32/float64 pairs along its last dim (size 2: real,
        imaginary; ops/complex/); `dims` are dims before that one.  Forward: out[k] =
        sum_j x[j] exp(-2 pi i j k / n) along each dim; inverse: the same with +i (no 1/n).
        The core composes every torch.fft function (real, Hermitian, norm=, n=) from it."""
        ...

    def softmax(self, x: Storage, dim: int, log: bool) -> Storage:
        """exp(x - max) / sum(exp(x - max)) along dim; where log, its log, computed as
        (x - max) - log(sum(exp(x - max)))."""

    def standardize(self, x: Storage, dims: tuple, eps: float) -> tuple:
        """((x - mean) * rstd, rstd) over `dims`, the trailing dims, with rstd =
        1 / sqrt(biased variance + eps) in the keepdim shape."""

    # -- the recurrent cell step (float, C-contiguous [N, ...] arrays, N >= 1) -----------
    def rnn_cell(self, mode: str, gx: Storage, gh: Storage, state: Storage | None) -> tuple:
        """One time step of a recurrent layer after its two products: the gates'
        nonlinearities and the state update in one pass.  mode is one of RNN_CELL_MODES;
        gx = x W_ih^T + b_ih and gh = h W_hh^T + b_hh, each [N, gates * H] with the gates
        in PyTorch's order.  Returns (h', c', ws): "rnn_tanh"/"rnn_relu": h' = act(gx + gh),
        c' None, ws h' itself; "lstm" (state: c [N, H]): i, f, o sigmoids, g tanh,
        c' = f c + i g, h' = o tanh(c'), ws [N, 5H] = (i, f, g, o, tanh(c'));
        "gru" (state: h [N, H]): r, z sigmoids of the summed gates, n = tanh(gx_n + r gh_n),
        h' = n + z (h - n), c' None, ws [N, 4H] = (r, z, n, gh_n).  ws is what
        rnn_cell_backward reads (its dtype is the accumulator's for 16-bit floats)."""

    def rnn_cell_backward(self, mode: str, dh: Storage, dc: Storage | None,
                          state: Storage | None, ws: Storage) -> tuple:
        """(dgx, dgh, dstate) of rnn_cell given dh = d(loss)/dh' and, for an LSTM, dc =
        d(loss)/dc' (None: zero), with its `state` and `ws`: dgx and dgh the gradients of
        its gx and gh (the same array except for a GRU, whose gh_n is scaled by r);
        dstate the gradient of its state (an LSTM's c; a GRU's h through its direct path,
        dh z; None for the others)."""

    # -- linear algebra, convolution, pooling ------------------------------------------
    def matmul(self, a: Storage, b: Storage) -> Storage:
        """[..., m, k] @ [..., k, n] (ndim >= 2), the batch dims broadcast."""

    def linalg(self, fn: str, *arrays: Storage, option: Any = None) -> tuple:
        """The matrix routine fn (one of LINALG_FNS, see there) on `arrays`: a
        decomposition or a solve, as a tuple of arrays.  May compute on the host."""

    def im2col(self, x: Storage, kernel: tuple, stride: tuple, padding: tuple) -> Storage:
        """The windows of x [N, C, H, W] as columns, [N, C*kh*kw, Ho*Wo], zero padded; of
        x [N, C, D, H, W] (kernel, stride and padding triples), [N, C*kd*kh*kw, Do*Ho*Wo].
        Rows are in (c, *kernel offset) row-major order."""

    def col2im(self, cols: Storage, shape: tuple, kernel: tuple, stride: tuple,
               padding: tuple) -> Storage:
        """The adjoint of im2col: the columns summed back into an array of `shape`
        [N, C, H, W] (or [N, C, D, H, W])."""

    def max_pool2d(self, x: Storage, kernel: tuple, stride: tuple, padding: tuple,
                   dilation: tuple, ceil_mode: bool) -> tuple:
        """(values, index) of each window's maximum over x [N, C, H, W]: the int64 index is
        the flat h * W + w of the first maximum in its input plane.  A 3-d pool passes x
        [N, C, D, H, W] and triples; its index is the flat (d * H + h) * W + w.  The output size is
        core.shape.window_count; taps are `dilation` apart.  Padding, and taps past the
        padded input (ceil_mode), count as -inf but are never named: a window whose values
        all equal the fill names its first tap inside the plane."""

    def avg_pool2d(self, x: Storage, kernel: tuple, stride: tuple, padding: tuple,
                   ceil_mode: bool, count_include_pad: bool,
                   divisor_override: int | None) -> Storage:
        """Each window's sum of the taps inside x, over kernels.avg_pool_divisor (PyTorch's
        count); x [N, C, H, W], or [N, C, D, H, W] with triples for a 3-d pool."""

    # -- indexing (int64 index, in range) ----------------------------------------------
    def gather(self, x: Storage, dim: int, index: Storage) -> Storage:
        """``out[i][j] = x[index[i][j]][j]`` (dim 0 shown)."""

    def scatter_add(self, shape: tuple, dim: int, index: Storage, src: Storage) -> Storage:
        """zeros(shape), then ``out[index[i][j]][j] += src[i][j]`` (dim 0 shown), in a
        deterministic order."""

    def scatter(self, dst: Storage, dim: int, index: Storage, src: Storage,
                reduce: str) -> Storage:
        """A C-contiguous copy of dst, then ``out[index[i][j]][j] = src[i][j]`` (dim 0 shown),
        or combined with it by reduce, in index order.  reduce is one of
        SCATTER_REDUCE_FNS: "none" stores (the last along dim wins); amax and amin let a
        NaN win.  index is no larger than src, nor than dst off dim."""

    # -- random numbers ----------------------------------------------------------------
    def manual_seed(self, seed: int) -> None:
        """Reset the generator to `seed`."""

    def rand(self, shape: tuple, dtype: np.dtype) -> Storage:
        """Uniform samples in [0, 1)."""

    def randn(self, shape: tuple, dtype: np.dtype) -> Storage:
        """Standard normal samples."""

    def get_rng_state(self) -> Any:
        """An opaque snapshot of the generator."""

    def set_rng_state(self, state: Any) -> None:
        """Restore a snapshot from get_rng_state."""

    # -- in-place updates (optimizers, gradient accumulation) --------------------------
    def copy_(self, dst: Storage, src: Storage) -> None:
        """Write src (dst's shape and dtype) into dst's memory."""

    def add_(self, dst: Storage, src: Storage, alpha: float) -> None:
        """dst += alpha * src in dst's memory (a float dtype, one shape).  src may be dst
        itself, but may not overlap it otherwise."""


class DLPack(Protocol):
    """Optional: zero-copy exchange with other libraries through DLPack.  A backend that
    has these methods serves Tensor.__dlpack__ / __dlpack_device__ and shrew.from_dlpack
    for its DLPack device type (DLPACK_DEVICES in shrew.ops.creation); without them those
    raise a DeviceError.  They are not primitives: the conformance suite does not ask
    for them."""

    def to_dlpack(self, x: Storage, *, stream: Any = None, max_version: tuple | None = None,
                  dl_device: tuple | None = None, copy: bool | None = None) -> Any:
        """x.__dlpack__(...): a capsule sharing x's memory."""

    def dlpack_device(self, x: Storage) -> tuple:
        """(DLPack device type, device index) of x."""

    def from_dlpack(self, obj: Any) -> Storage:
        """Storage sharing the memory of obj (which has __dlpack__, on this device)."""


class FastConv(Protocol):
    """Optional: a convolution as one call each way, for backends that can beat the core's
    lowering (im2col, a batched matmul, col2im), as the cpu and cuda backends do by folding
    the batch into their GEMMs.  conv2d, conv3d (5-d arrays, triples) and conv1d (as a 2-d
    convolution one row high) call them where a backend has them (a dilated or grouped
    convolution too: a backend that declines it gets the core's composition of plain
    ones), and so do their gradient rules in a plain backward;
    under create_graph=True the rules stay recorded operations, so that they can be
    differentiated again.  The conformance suite checks them through the values and
    gradients of conv2d and conv1d.  Arguments are validated as for im2col.  Either may
    return NotImplemented for a geometry where it would not be faster: the core then runs
    its lowering for that call."""

    def conv2d(self, x: Storage, w: Storage, stride: tuple, padding: tuple, dilation: tuple,
               groups: int) -> Storage:
        """x [N, C, H, W] cross-correlated with w [O, C/groups, kh, kw] (taps `dilation`
        apart, channels in `groups`), zero padded: [N, O, Ho, Wo]; or NotImplemented.  A
        3-d convolution passes x [N, C, D, H, W], w [O, C/groups, kd, kh, kw] and
        triples."""

    def conv2d_backward(self, x: Storage, w: Storage, g: Storage, stride: tuple, padding: tuple,
                        dilation: tuple, groups: int, need_x: bool, need_w: bool) -> tuple:
        """(dx, dw) of conv2d given g = d(loss)/d(output), each None unless need_x /
        need_w asks for it; or NotImplemented."""


FAST_CONV = ("conv2d", "conv2d_backward")


class FastPool(Protocol):
    """Optional: a pool's gradient in one call, for backends that can beat the core's
    lowering (scatter_add for max_pool2d, which must allow for windows that overlap;
    col2im for avg_pool2d).  The gradient rules call them in a plain backward where a
    backend has them; under create_graph=True the rules stay recorded operations.  Either
    may return NotImplemented for a geometry or option it does not speed up, and the core
    then runs its lowering.  The conformance suite checks them through the pools'
    gradients.  A backend may have either one alone."""

    def max_pool2d_backward(self, g: Storage, index: Storage, shape: tuple, kernel: tuple,
                            stride: tuple, dilation: tuple) -> Storage:
        """zeros(shape) [N, C, H, W], then each g [N, C, Ho, Wo] added at its max_pool2d
        index in its plane (or [N, C, D, H, W] and a volume's index, for a 3-d pool); or
        NotImplemented."""

    def avg_pool2d_backward(self, g: Storage, shape: tuple, kernel: tuple, stride: tuple,
                            padding: tuple, ceil_mode: bool, count_include_pad: bool,
                            divisor_override: int | None) -> Storage:
        """d(loss)/dx [N, C, H, W] (or [N, C, D, H, W]) = `shape` of avg_pool2d with these
        options, given g = d(loss)/d(output); or NotImplemented."""


FAST_POOL = ("max_pool2d_backward", "avg_pool2d_backward")


class FastAccumulate(Protocol):
    """Optional: add into an array in place, into a buffer the core made and alone holds.
    add_narrow_: in a plain backward, where several narrows of one tensor send it
    gradients (chunk, split: attention's q/k/v, an LSTM's gates), the core pads the first
    to the tensor's shape and adds each of the others into its slice of that buffer with
    this, instead of padding each and summing full-size copies.  add_into_: a layer's bias
    (linear, conv1d, conv2d, layer_norm) is added into the product it follows, which
    nothing reads again (ops/elementwise.add_bias), instead of into a fresh sum.  Either
    may return NotImplemented: the core pads and sums, or adds into a new array.  The
    conformance suite checks them through the gradient of its `chunk` entry and the values
    of `linear`, `conv2d`, `conv1d` and `layer_norm`."""

    def add_narrow_(self, dst: Storage, src: Storage, dim: int, start: int) -> Any:
        """dst[start:start + src.shape[dim]] along dim += src, in dst's memory (one float
        dtype); None, or NotImplemented."""

    def add_into_(self, dst: Storage, src: Storage) -> Any:
        """dst += src in dst's memory, src (dst's float dtype and ndim) broadcast to dst's
        shape; None, or NotImplemented."""


FAST_ACCUMULATE = ("add_narrow_", "add_into_")


class FastGrad(Protocol):
    """Optional: a gradient in one call where the core's rule is several elementwise passes
    and reductions: softmax's and log-softmax's, standardize's (layer norm's core), ReLU's
    and the GELUs'.  The rules call them in a plain backward where a backend has them; under
    create_graph=True they stay recorded operations.  Each may return NotImplemented (a
    dtype, size or layout it does not speed up): the core then runs its rule.  A result
    has g's dtype; a float16 or bfloat16 one computed in float32 and rounded once, as
    PyTorch's CPU kernels and the core's rules compute them.  The
    conformance suite checks them through the gradients of softmax, log_softmax,
    standardize, layer_norm, relu and the GELUs."""

    def softmax_backward(self, g: Storage, y: Storage, dim: int, log: bool) -> Storage:
        """d(loss)/dx of y = softmax(x, dim) (log_softmax where log) given g = d(loss)/dy:
        y (g - sum(g y, dim)), or g - exp(y) sum(g, dim); or NotImplemented."""

    def standardize_backward(self, g: Storage, y: Storage, rstd: Storage,
                             ndims: int) -> Storage:
        """d(loss)/dx of y = standardize(x) over its last `ndims` dims, given g and rstd
        (1/std, those dims kept as 1): rstd (g - mean(g) - y mean(g y)); or
        NotImplemented."""

    def unary_backward(self, fn: str, g: Storage, x: Storage) -> Storage:
        """g times the derivative of unary fn at x, elementwise ("relu": g where x > 0 or
        NaN, else +0; "gelu", "gelu_tanh"); or NotImplemented."""


FAST_GRAD = ("softmax_backward", "standardize_backward", "unary_backward")


class FastNorm(Protocol):
    """Optional: layer norm with its weight and bias as one call each way, where the core
    composes standardize, a product and a sum forward and a dozen passes backward.
    layer_norm (F.layer_norm given both a weight and a bias shaped like the normalised
    dims, in x's dtype) is called where a backend has it, and the op is then recorded as
    one node whose rule calls layer_norm_backward in a plain backward; under
    create_graph=True the rule is recorded operations (standardize recomputed), so that
    it can be differentiated again.  Either may return NotImplemented (a dtype or size it
    does not speed up): the core then composes its primitives, forward or backward.  A
    row with a NaN or an infinity gives NaN across that row, as PyTorch's.  The
    conformance suite checks them through the values and gradients of layer_norm."""

    def layer_norm(self, x: Storage, weight: Storage, bias: Storage, ndims: int,
                   eps: float) -> tuple:
        """(y, mean, rstd): y = (x - mean) * rstd * weight + bias over the last `ndims` dims
        of x (weight and bias of their shape), with the biased variance and rstd =
        1 / sqrt(var + eps), mean and rstd with those dims kept as 1; or NotImplemented."""

    def layer_norm_backward(self, g: Storage, x: Storage, weight: Storage, mean: Storage,
                            rstd: Storage, ndims: int) -> tuple:
        """(dx, dweight, dbias) of layer_norm given g = d(loss)/dy and its mean and rstd:
        dweight and dbias sum g (x - mean) rstd and g over the leading dims; or
        NotImplemented."""


FAST_NORM = ("layer_norm", "layer_norm_backward")


class FastAttention(Protocol):
    """Optional: scaled dot-product attention, softmax(q k^T scale + bias) v, as one call
    each way, where the core's composition is two products, a scaling, a mask added, a
    softmax and their gradients, each a pass over the [..., L, S] scores.
    scaled_dot_product_attention and MultiheadAttention call it where nothing needs the
    weights and no dropout applies (ops/attention.py); the gradient rule calls
    attention_backward in a plain backward; under create_graph=True, or where either
    returns NotImplemented, the core composes.  q [..., L, E], k [..., S, E] and v [..., S,
    Ev] share their batch dims; bias, None or an array broadcasting to [..., L, S], is added
    to the scores.  A result may be a strided view (heads interleaved, as the projections
    that read it next want them).  Results, the weights too (saved for backward: 16-bit
    ones halve what attention keeps), have q's dtype; float16 and bfloat16 computed in
    float32 (scores, softmax, products) and rounded once.  The conformance suite checks
    them through the values and gradients of scaled_dot_product_attention and
    MultiheadAttention."""

    def attention(self, q: Storage, k: Storage, v: Storage, bias: Storage | None,
                  scale: float) -> tuple:
        """(out [..., L, Ev], weights [..., L, S]): weights = softmax(q k^T scale + bias)
        along S, out = weights v; or NotImplemented."""

    def attention_backward(self, g: Storage, q: Storage, k: Storage, v: Storage,
                           weights: Storage, scale: float, need: tuple,
                           joined: bool = False) -> Any:
        """(dq, dk, dv) given g = d(loss)/d(out) and attention's weights, None where
        `need` (three bools) says so.  Where joined (q, k and v [N, H, T, D] the packed
        views of one [N, T, 3HD] array): that array's gradient, one array.  Or
        NotImplemented."""


FAST_ATTENTION = ("attention", "attention_backward")


class FastLinear(Protocol):
    """Optional: a linear layer, x w^T + b, as one call each way, where the core records a
    transpose, a product and a bias add, and backward runs their three rules.  linear
    (F.linear with a bias, x folded to [M, K], w [N, K], b [N], one dtype) is called where
    a backend has it, and the op is then recorded as one node whose rule calls
    linear_backward in a plain backward; under create_graph=True the rule is recorded
    operations, so that it can be differentiated again.  Either may return NotImplemented
    (a dtype or size it does not speed up): the core then composes.  The conformance suite
    checks them through the values and gradients of linear."""

    def linear(self, x: Storage, w: Storage, b: Storage) -> Storage:
        """x @ w^T + b [M, N] for x [M, K], w [N, K], b [N]; or NotImplemented."""

    def linear_backward(self, g: Storage, x: Storage, w: Storage, need_x: bool,
                        need_w: bool, need_b: bool) -> tuple:
        """(dx = g @ w, dw = g^T @ x, db = g summed over its rows) given g = d(loss)/dy
        [M, N], None for each one not needed; or NotImplemented."""


FAST_LINEAR = ("linear", "linear_backward")

class FastRecurrent(Protocol):
    """Optional: one direction of one recurrent layer over a whole unpacked sequence as one
    call each way (a library's RNN primitive), where the core runs its time loop on
    rnn_cell (ops/rnn.py: a product and a cell per step).  nn.RNN, LSTM and GRU call it for
    each layer and direction of an unpacked input, and record one node whose rule calls
    rnn_layer_backward in a plain backward; under create_graph=True the rule raises, as the
    fused loop's does.  Either may return NotImplemented (a mode, dtype or size it does not
    take): the core then runs its loop.  mode is one of RNN_CELL_MODES.  The conformance
    suite checks them through the values and gradients of its *_layer entries."""

    def rnn_layer(self, mode: str, x: Storage, h0: Storage, c0: Storage | None,
                  w_ih: Storage, w_hh: Storage, b_ih: Storage | None, b_hh: Storage | None,
                  reverse: bool) -> Any:
        """(y [T, N, H], h_n [N, H], c_n [N, H] (LSTM; else None), ws) of the layer over x
        [T, N, I] from h0 (and c0), in time order or (reverse) backwards, with PyTorch's
        weights and gate order (w_ih [G*H, I], w_hh [G*H, H], the biases [G*H] or None:
        zero); ws is what rnn_layer_backward reads.  Or NotImplemented."""

    def rnn_layer_backward(self, mode: str, gy: Storage, gh: Storage, gc: Storage | None,
                           x: Storage, h0: Storage, c0: Storage | None, y: Storage,
                           h_n: Storage, c_n: Storage | None, ws: Any, reverse: bool) -> Any:
        """(dx, dh0, dc0 (LSTM; else None), dw_ih, dw_hh, db_ih, db_hh) of rnn_layer given
        the gradients gy, gh, gc of its y, h_n, c_n and what it returned (the biases'
        gradients as arrays of their own, also where they are equal); or NotImplemented."""


FAST_RECURRENT = ("rnn_layer", "rnn_layer_backward")

FAST_PATHS = (FAST_CONV + FAST_POOL + FAST_ACCUMULATE + FAST_GRAD + FAST_NORM + FAST_ATTENTION
              + FAST_LINEAR + FAST_RECURRENT)
"""Every optional fast-path method above, for code that handles them all alike (the
exporter hides them, the cuda backend runs those it has on its device)."""


class Allocation(Protocol):
    """Optional, for a backend whose storage is not a numpy array: which allocation a
    storage views.  With it, gather and scatter_add check an index that was uploaded from
    host data, or is a view of one, against the range seen on the host, with no device
    read; without it such an index is checked on the device and read back with the next
    result (docs/backend-guide.md, "Index range checks")."""

    def allocation(self, x: Storage) -> Any:
        """The object owning x's memory: the same object for every view of it, alive while
        x is."""


class ReplayArena(Protocol):
    """Optional, for a backend with its own device memory: lets a compiled replay serve its
    buffers from one planned arena (compiler/device_arena.py, docs/compiling.md "Memory").
    Every fresh storage's buffer must come from `allocate`, and every view of a storage
    must share its buffer object (the arena tells a buffer is free by its reference
    count)."""

    allocate: Callable[[int], Any]
    """nbytes -> a buffer; the arena swaps it while a replay runs (by default
    `pool_allocate`)."""
    pool_allocate: Callable[[int], Any]
    """The backend's own allocation (its pool's): what the arena does not serve."""
    arena_align: int
    """Bytes a sub-buffer's offset must be a multiple of."""
    max_alloc_bytes: int

    def arena_buffer(self, nbytes: int) -> Any:
        """One buffer of nbytes, outside the pool: the arena."""

    def arena_part(self, buffer: Any, offset: int, nbytes: int) -> Any:
        """A buffer for bytes [offset, offset + nbytes) of `buffer` (a sub-buffer)."""

    def release_pool(self) -> None:
        """Free what the pool keeps for reuse (the arena serves those sizes now)."""


def fast_path(backend: Any, name: str, *args: Any) -> Any:
    """backend.<name>(*args) for an optional fast path (FastConv, FastPool,
    FastAccumulate, FastGrad, FastNorm, FastAttention, FastLinear, FastRecurrent), or
    NotImplemented where
    the backend has no such method or declines the call."""
    method = getattr(backend, name, None)
    return NotImplemented if method is None else method(*args)


PRIMITIVES = tuple(
    name for name in Backend.__dict__
    if not name.startswith("_") and callable(getattr(Backend, name, None))
)
"""The names of the Backend protocol's primitives, in the order they are declared."""
