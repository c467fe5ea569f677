"""Autocast's state and policy: which op runs in which dtype inside an autocast region.

The ops PyTorch lists for autocast (``aten/src/ATen/autocast_mode.{h,cpp}``) are
decorated where they are defined with ``@autocast_op("name")``; the table below says what
each name does per device type:

- ``LOWER``: floating inputs (but float64) are cast to the region's low dtype (matrix
  products, convolutions, attention: they gain the most and lose the least);
- ``FP32``: floating inputs (but float64) are cast to float32 (losses, reductions and
  functions whose range or accuracy float16/bfloat16 would ruin);
- ``PROMOTE``: floating inputs are cast to the widest floating dtype among them (ops that
  need one dtype for several inputs: cat, stack, ...);
- ``AS_IS``: run in the given dtypes.  For shrew's compositions of listed ops that
  PyTorch computes natively without casting (``mv`` is a product here, not in PyTorch):
  what they call inside is not cast again.

Inside a decorated op (and during backward) autocast is suspended, so the ops it is made
of run in the dtypes it gave them, as PyTorch's autocast kernels redispatch below
autocast.  Calls with an explicit ``dtype=`` or ``out=`` run as given, as in PyTorch.
The state is per thread, as PyTorch's.  Below Tensor: this module calls only tensor
methods (``to_dtype``) and imports nothing above core."""
from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from . import fields
from .dtype import DType, bfloat16, float16, float32, float64
from .errors import StateError
from .grad_mode import is_grad_enabled, no_grad

_F = TypeVar("_F", bound=Callable[..., Any])

LOWER, FP32, PROMOTE, AS_IS = "lower", "fp32", "promote", "as_is"

# PyTorch's CPU lists (AutocastCPU), as torch 2.13 applies them.  einsum, inner and
# multi_dot/chain_matmul are compositions in PyTorch that reach bmm or mm, so their results
# are in the low dtype there too.
_CPU_LOWER = (
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "bmm", "mm", "linalg_vecdot", "baddbmm", "addmm", "addbmm", "linear", "matmul", "prelu",
    "scaled_dot_product_attention", "einsum", "inner", "multi_dot", "chain_matmul")
_CPU_FP32 = (
    "avg_pool3d", "binary_cross_entropy", "grid_sampler", "polar", "prod", "quantile",
    "nanquantile", "stft", "cdist", "trace", "view_as_complex", "cholesky",
    "cholesky_inverse", "cholesky_solve", "inverse", "lu_solve", "orgqr", "ormqr",
    "pinverse", "max_pool3d", "max_unpool2d", "max_unpool3d", "adaptive_avg_pool3d",
    "reflection_pad", "replication_pad", "mse_loss", "cosine_embedding_loss", "nll_loss",
    "hinge_embedding_loss", "poisson_nll_loss", "smooth_l1_loss", "cross_entropy",
    "l1_loss", "huber_loss", "margin_ranking_loss", "soft_margin_loss",
    "triplet_margin_loss", "multi_margin_loss", "ctc_loss", "kl_div",
    "multilabel_margin_loss", "binary_cross_entropy_with_logits", "fft", "linalg_cond",
    "linalg_matrix_rank", "linalg_solve", "linalg_cholesky", "linalg_svdvals",
    "linalg_eigvals", "linalg_eigvalsh", "linalg_inv", "linalg_householder_product",
    "linalg_tensorinv", "linalg_tensorsolve", "geqrf", "qr", "svd", "triangular_solve",
    "fractional_max_pool2d", "fractional_max_pool3d", "adaptive_max_pool3d", "linalg_qr",
    "linalg_cholesky_ex", "linalg_svd", "linalg_eig", "linalg_eigh", "linalg_lstsq",
    "linalg_inv_ex")
_CPU_PROMOTE = ("stack", "cat", "index_copy")

# PyTorch's CUDA lists (AutocastCUDA): shrew's own device types (opencl, third-party
# backends) follow them too, the cautious choice for a device whose low-precision
# arithmetic nobody has measured.  PyTorch's "fp32_set_opt_dtype" ops (softmax, sum,
# cumsum, ... given a low-precision input) and "fp32_append_dtype" (norm) are FP32 here:
# the same result dtype.
_GPU_LOWER = (
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "prelu", "addmm", "addmv", "addr", "matmul", "einsum", "mm", "mv", "linalg_vecdot",
    "linear", "addbmm", "baddbmm", "bmm", "chain_matmul", "multi_dot", "inner",
    "scaled_dot_product_attention")
_GPU_FP32 = (
    "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p",
    "reciprocal", "rsqrt", "sinh", "tan", "pow", "softplus", "layer_norm", "group_norm",
    "norm", "frobenius_norm", "nuclear_norm", "cosine_similarity", "poisson_nll_loss",
    "cosine_embedding_loss", "nll_loss", "hinge_embedding_loss", "kl_div", "l1_loss",
    "smooth_l1_loss", "huber_loss", "mse_loss", "margin_ranking_loss",
    "multilabel_margin_loss", "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss",
    "binary_cross_entropy_with_logits", "dist", "pdist", "cdist", "renorm", "logsumexp",
    "upsample", "prod", "softmax", "log_softmax", "cumprod", "cumsum", "linalg_vector_norm",
    "linalg_matrix_norm", "sum", "cross_entropy", "rms_norm")
_GPU_PROMOTE = ("addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "vdot",
                "grid_sampler", "index_put", "tensordot", "scatter_add", "stack", "cat",
                "index_copy")

# shrew's compositions that PyTorch runs natively, in their inputs' dtypes.
_AS_IS = ("mv", "dot", "addmv", "addr", "outer", "tensordot", "kron", "cross")


def _table(lower: tuple, fp32: tuple, promote: tuple) -> dict[str, str]:
    table = dict.fromkeys(_AS_IS, AS_IS)
    for names, policy in ((lower, LOWER), (fp32, FP32), (promote, PROMOTE)):
        table.update(dict.fromkeys(names, policy))
    return table


POLICIES = {"cpu": _table(_CPU_LOWER, _CPU_FP32, _CPU_PROMOTE),
            "gpu": _table(_GPU_LOWER, _GPU_FP32, _GPU_PROMOTE)}
ALL_NAMES = frozenset(POLICIES["cpu"]) | frozenset(POLICIES["gpu"])

# What each device type casts to by default (torch.get_autocast_dtype); shrew's OpenCL
# follows CUDA.  Any other device type (a registered backend) starts at float16 too.
DEFAULT_DTYPES = {"cpu": bfloat16, "cuda": float16, "opencl": float16}
LOW_DTYPES = (float16, bfloat16)


class _ThreadState(threading.local):
    """One thread's autocast switches (PyTorch's are thread-local too)."""

    def __init__(self) -> None:
        self.enabled: dict[str, bool] = {}
        self.dtypes: dict[str, DType] = {}
        self.cache_enabled = True
        self.nesting = 0
        self.suspended = False  # inside an autocast op, or during backward
        # (weight id, dtype, grad mode) -> (weight, its cast or a weak reference to it,
        # the cast's id)
        self.cache: dict[tuple, tuple[weakref.ref, Any, int]] = {}


_state = _ThreadState()
# How many (thread, device type) pairs have autocast on: while 0, a decorated op costs
# one global read and a call.
armed = 0
armed_lock = threading.Lock()


def device_type_of(device: str) -> str:
    return device.partition(":")[0]


def is_enabled(device_type: str) -> bool:
    return _state.enabled.get(device_type, False)


def set_enabled(device_type: str, enabled: bool) -> None:
    global armed
    enabled = bool(enabled)
    if _state.enabled.get(device_type, False) != enabled:
        with armed_lock:
            armed += 1 if enabled else -1
    _state.enabled[device_type] = enabled


def get_dtype(device_type: str) -> DType:
    return _state.dtypes.get(device_type, DEFAULT_DTYPES.get(device_type, float16))


def set_dtype(device_type: str, dtype: DType) -> None:
    _state.dtypes[device_type] = dtype


def is_cache_enabled() -> bool:
    return _state.cache_enabled


def set_cache_enabled(enabled: bool) -> None:
    _state.cache_enabled = bool(enabled)


def clear_cache() -> None:
    for _, _, cast_id in _state.cache.values():
        fields.recast_stand_ins.pop(cast_id, None)
    _state.cache.clear()


def recast(op: Any) -> None:
    """Give the recast stand-ins among op's two operands their values back before backward
    reads them (fields.recast_stand_in): the cast's own while it lives, else the weight
    cast again, which must not have been written since where the gradient reads those
    values (the other operand's gradient is wanted): its values then are gone.  A bias's
    values are never read."""
    first, second = (getattr(op, name) for name in op.TENSORS[:2])
    for stand_in, other in ((first, second), (second, first)):
        if stand_in._data is not None or \
                type(getattr(stand_in, "_stands_for", None)) is not fields.RecastLink:
            continue
        cast = stand_in._stands_for()
        if cast is not None:
            stand_in._data = cast._data
            continue
        weight = stand_in._op.x
        writes = getattr(weight, "_vc", None)
        if other.requires_grad and writes is not None and writes.stamps[-1] > stand_in.id:
            raise StateError(
                f"backward: a weight of shape {list(weight.shape)} was modified by an inplace "
                f"operation after autocast cast it to {stand_in.dtype} for this graph: "
                f"shrew casts it again in backward rather than keep the cast (autocast's "
                f"memory saving); write it after backward, or use autocast(..., "
                f"cache_enabled=False), which keeps each cast")
        with no_grad():
            stand_in._data = weight.to_dtype(stand_in.dtype)._data


def increment_nesting() -> int:
    _state.nesting += 1
    return _state.nesting


def decrement_nesting() -> int:
    _state.nesting -= 1
    return _state.nesting


def swap_suspended(value: bool) -> bool:
    """Set whether autocast is suspended in this thread; returns the old setting (an
    autocast region entered inside an op or a backward applies again within it)."""
    old, _state.suspended = _state.suspended, value
    return old


@contextmanager
def suspended() -> Iterator[None]:
    """No op casts inside (backward runs so: gradients in their tensors' own dtypes)."""
    old = swap_suspended(True)
    try:
        yield
    finally:
        _state.suspended = old


def snapshot() -> tuple:
    """This thread's autocast settings, for checkpoint to recompute a segment as it ran."""
    return (dict(_state.enabled), dict(_state.dtypes), _state.cache_enabled,
            _state.suspended)


@contextmanager
def restored(settings: tuple) -> Iterator[None]:
    """Run with the settings `snapshot` took (recomputation under backward's suspension);
    an empty tuple changes nothing."""
    if not settings:
        yield
        return
    saved = snapshot()
    _apply(settings)
    try:
        yield
    finally:
        _apply(saved)


def _apply(settings: tuple) -> None:
    enabled, dtypes, cache_enabled, is_suspended = settings
    for device_type in set(enabled) | set(_state.enabled):
        set_enabled(device_type, enabled.get(device_type, False))
    _state.dtypes = dict(dtypes)
    _state.cache_enabled, _state.suspended = cache_enabled, is_suspended


# -- applying the policy --------------------------------------------------------------

def _eligible(t: Any, device_type: str) -> bool:
    return (isinstance(t, fields._tensor_class) and t.dtype.is_floating_point
            and t.dtype is not float64 and device_type_of(t._backend.device) == device_type)


def _cast(t: Any, dtype: DType, device_type: str) -> Any:
    """t in `dtype` if autocast casts it; a float32 leaf that requires grad (a weight)
    is cast once per region while the cache is on (PyTorch's cast cache)."""
    if not _eligible(t, device_type) or t.dtype is dtype:
        return t
    if dtype.np not in t._backend.dtypes:
        return t  # a device without the low dtype (POCL has no float16) runs as it is
    if not (_state.cache_enabled and t.requires_grad and t._op is None
            and dtype in LOW_DTYPES and t.dtype is float32):
        return t.to_dtype(dtype)
    key = (t.id, dtype, is_grad_enabled())
    hit = _state.cache.get(key)
    if hit is not None and hit[0]() is t:
        held = hit[1]
        if type(held) is not weakref.ref:
            return held
        # A second use in the region (a recurrent cell's weight, a tied one): the cast is
        # kept from now on, cast again where its first use did not keep it alive.
        cast = held()
        if cast is None:
            cast = _weight_cast(t, dtype)
        fields.recast_stand_ins.pop(hit[2], None)
        _state.cache[key] = (hit[0], cast, cast.id)
        return cast
    # A weight's first cast is held weakly: the products and convolutions that use it hold
    # a recast stand-in (fields.recast_stand_in), so that a weight used once in a region
    # (a transformer's) has its cast freed as soon as that product is done.
    cast = _weight_cast(t, dtype)
    _state.cache[key] = (weakref.ref(t), weakref.ref(cast), cast.id)
    return cast


def _weight_cast(t: Any, dtype: DType) -> Any:
    cast = t.to_dtype(dtype)
    if cast._op is not None:
        fields.recast_stand_in(cast)
    return cast


def _widest(tensors: list, device_type: str) -> DType | None:
    widest = None
    for t in tensors:
        if (isinstance(t, fields._tensor_class) and t.dtype.is_floating_point
                and device_type_of(t._backend.device) == device_type):
            widest = t.dtype if widest is None else _wider(widest, t.dtype)
    return widest


def _wider(a: DType, b: DType) -> DType:
    if a is b:
        return a
    order = (float16, bfloat16, float32, float64)
    if {a, b} == {float16, bfloat16}:
        return float32  # PyTorch's promotion of the two 16-bit floats
    return a if order.index(a) > order.index(b) else b


def _flat(args: tuple, kwargs: dict) -> list:
    found: list[Any] = []
    for a in (*args, *kwargs.values()):
        if isinstance(a, (list, tuple)):
            found.extend(a)
        else:
            found.append(a)
    return found


def _map(fn: Callable[[Any], Any], value: Any) -> Any:
    if isinstance(value, list):
        return [fn(v) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(fn(v) for v in value)
    return fn(value)


def _first_device_type(values: list) -> str | None:
    for v in values:
        if isinstance(v, fields._tensor_class):
            return device_type_of(v._backend.device)
    return None


def _policy(device_type: str) -> dict[str, str]:
    return POLICIES["cpu" if device_type == "cpu" else "gpu"]


def _call(name: str, fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """fn(*args, **kwargs) under this thread's autocast, its inputs cast by `name`'s
    policy on their device type, autocast suspended inside."""
    if _state.suspended or kwargs.get("dtype") is not None or kwargs.get("out") is not None:
        return fn(*args, **kwargs)
    values = _flat(args, kwargs)
    device_type = _first_device_type(values)
    if device_type is None or not _state.enabled.get(device_type, False):
        return fn(*args, **kwargs)
    policy = _policy(device_type).get(name)
    if policy is None:
        return fn(*args, **kwargs)  # not listed for this device type: no suspension
    target: DType | None
    if policy == LOWER:
        target = get_dtype(device_type)
    elif policy == FP32:
        target = float32
    elif policy == PROMOTE:
        target = _widest(values, device_type)
    else:
        target = None
    if target is not None:
        dtype = target

        def cast(t: Any) -> Any:
            return _cast(t, dtype, device_type)
        args = tuple(_map(cast, a) for a in args)
        kwargs = {k: _map(cast, v) for k, v in kwargs.items()}
    _state.suspended = True
    try:
        return fn(*args, **kwargs)
    finally:
        _state.suspended = False


def dispatch(name: str, fn: Callable[..., Any], *args: Any) -> Any:
    """fn(*args) under the policy of `name`, for a kernel family whose op is named at
    run time (``unary("exp", x)``); callers test ``armed`` first."""
    return _call(name, fn, args, {})


def autocast_op(name: str) -> Callable[[_F], _F]:
    """Decorate the op PyTorch's autocast lists call `name`: inside an autocast region
    its inputs are cast by the table above."""
    if name not in ALL_NAMES:
        raise ValueError(f"autocast_op: {name!r} is in no autocast list")

    def decorate(fn: _F) -> _F:
        @functools.wraps(fn)
        def op(*args: Any, **kwargs: Any) -> Any:
            if not armed:
                return fn(*args, **kwargs)
            return _call(name, fn, args, kwargs)
        return op  # type: ignore[return-value]
    return decorate
