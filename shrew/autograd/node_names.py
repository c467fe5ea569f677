"""PyTorch's names for the graph nodes (``type(t.grad_fn).__name__``, ``grad_fn.name()``):
the one table from shrew's Op variants (shrew/core/op.py) to the ``XxxBackwardN`` class that
PyTorch's autograd would have recorded for the same call.

A variant stands for several PyTorch ops where shrew composes them (``Reshape`` is view,
unsqueeze, squeeze and flatten; ``Transpose`` is transpose, t, permute and ``.T``), so the
name is PyTorch's for the op the variant most directly is (docs/porting.md lists the
differences).  The digit is PyTorch's overload number: ``SumBackward0`` sums everything,
``SumBackward1`` sums over dims.
"""
from __future__ import annotations

from typing import Any

from ..core import op as O

_BINARY = {
    "add": "AddBackward0", "sub": "SubBackward0", "mul": "MulBackward0", "div": "DivBackward0",
    "pow": "PowBackward1", "atan2": "Atan2Backward0", "maximum": "MaximumBackward0",
    "minimum": "MinimumBackward0", "fmod": "FmodBackward1", "remainder": "RemainderBackward1",
    "copysign": "CopysignBackward0", "tanh_backward": "TanhBackwardBackward0",
    "sigmoid_backward": "SigmoidBackwardBackward0",
}
"""Binary fns whose PyTorch name is not just the fn in CamelCase."""

_UNARY = {"square": "PowBackward0", "gelu_tanh": "GeluBackward0", "log1p": "Log1PBackward0"}
"""Unary fns whose PyTorch name is not just the fn in CamelCase."""

_VARIANT = {
    "Contiguous": "CloneBackward0", "Prod": "ProdBackward0", "VectorNorm":
    "LinalgVectorNormBackward0", "Matmul": "MmBackward0", "Reshape": "ViewBackward0",
    "Transpose": "TransposeBackward0", "FFT": "FftC2CBackward0", "Narrow": "SliceBackward0",
    "AsStrided": "AsStridedBackward0", "Affine": "AddBackward0",
    "Conv2d": "ConvolutionBackward0", "Conv1d": "ConvolutionBackward0",
    "MaxPool2d": "MaxPool2DWithIndicesBackward0", "AvgPool2d": "AvgPool2DBackward0",
    "Cat": "CatBackward0", "Powf": "PowBackward0", "Clamp": "ClampBackward1",
    "WhereCond": "WhereBackward0", "Gather": "GatherBackward0", "Pad": "ConstantPadNdBackward0",
    "ToDtype": "ToCopyBackward0", "ToDevice": "ToCopyBackward0",
    "ScatterAdd": "ScatterAddBackward0", "Scatter": "ScatterBackward0",
    "Im2Col": "Im2ColBackward0", "Col2Im": "Col2ImBackward0", "Softmax": "SoftmaxBackward0",
    "Standardize": "NativeLayerNormBackward0", "LayerNorm": "NativeLayerNormBackward0",
    "Checkpoint": "CheckpointFunctionBackward",
    "Attention": "ScaledDotProductFlashAttentionForCpuBackward0", "Linear": "AddmmBackward0",
    "Recurrent": "MkldnnRnnLayerBackward0", "RecurrentLayer": "MkldnnRnnLayerBackward0",
}
"""The name of each variant that has one whatever its fields hold."""

_SCAN = {"sum": "CumsumBackward0", "prod": "CumprodBackward0"}


def _camel(fn: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in fn.split("_"))


def _over_everything(x: Any, dims: tuple, keepdim: bool) -> bool:
    return not keepdim and len(dims) == x.ndim


def torch_name(op: O.Op) -> str:
    """PyTorch's node name for a recorded op (a live one: its fields are all there)."""
    match op:
        case O.CustomFunction(function=function):
            return f"{function.__name__}Backward"
        case O.Binary("pow", lhs, _) if not lhs.requires_grad and lhs.ndim == 0:
            return "PowBackward2"  # a number to a tensor's power: pow(Scalar, Tensor)
        case O.Binary(fn):
            return _BINARY.get(fn) or f"{_camel(fn)}Backward0"
        case O.Unary(fn):
            return _UNARY.get(fn) or f"{_camel(fn)}Backward0"
        case O.Reduce("sum" | "mean" as fn, x, dims, keepdim):
            return f"{_camel(fn)}Backward{0 if _over_everything(x, dims, keepdim) else 1}"
        case O.Reduce("amax" | "amin" as fn):
            return f"{_camel(fn)}Backward0"
        case O.Reduce(fn, x, dims, keepdim):  # max() / min() of everything; norm(inf) over dims
            return f"{_camel(fn)}Backward1" if _over_everything(x, dims, keepdim) else \
                f"A{fn}Backward0"
        case O.Prod(dim=dim) if dim is not None:
            return "ProdBackward1"
        case O.Scan(fn):
            return _SCAN[fn]
        case O.Matmul(lhs, rhs) if lhs.ndim > 2 or rhs.ndim > 2:
            return "BmmBackward0"
        case O.Affine(add=0):
            return "MulBackward0"  # x * s
        case O.Affine(_, -1, _):
            return "RsubBackward1"  # s - x
        case O.Scatter(reduce="sum"):
            return "ScatterAddBackward0"
        case O.Scatter(reduce=reduce) if reduce != "none":
            return "ScatterReduceBackward0"
        case O.Softmax(log=True):
            return "LogSoftmaxBackward0"
        case O.AsStrided(name=name):
            return name  # (a step slice, diagonal, unfold, expand or as_strided)
        case O.Released(variant):
            return released_name(variant)
    return _VARIANT[type(op).__name__]


def torch_inputs(op: O.Op) -> tuple:
    """op's inputs in the places PyTorch's node has them: a number operand is an input
    (None in next_functions) of ``x + 1`` and ``x * 2``, and none at all of ``1 - x`` and
    ``2 ** x``; an absent bias (or layer norm's weight) is a None input."""
    match op:
        case O.Affine(x, -1, add) if add != 0:
            return (x,)
        case O.Affine(x):
            return (x, None)
        case O.Conv2d(x, weight) | O.Conv1d(x, weight):
            return (x, weight, None)
        case O.Standardize(x):
            return (x, None, None)
        case O.Linear(x, weight, bias):
            return (bias, x, weight)   # addmm(bias, x, weight.t())
        case O.Binary("pow", lhs, rhs) if not lhs.requires_grad and lhs.ndim == 0:
            return (rhs,)
    return op.inputs()


def released_name(variant: str) -> str:
    """The name of an op whose graph backward freed: its fields are gone, so the overload
    number is the first one's ("Binary.mul" -> "MulBackward0")."""
    kind, _, fn = variant.partition(".")
    if kind == "Binary":
        return _BINARY.get(fn) or f"{_camel(fn)}Backward0"
    if kind == "Unary":
        return _UNARY.get(fn) or f"{_camel(fn)}Backward0"
    if kind == "Reduce":
        return f"{_camel(fn)}Backward0"
    return _VARIANT.get(kind, f"{kind}Backward0")
