"""Gradient rules of the conv family (ops/conv.py)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...ops.conv import col2im, dilate, im2col
from ...ops.shape.recorded import cat
from ...core.shape import numel
from .common import InputGrads, fast_gradients

if TYPE_CHECKING:
    from ..._tensor import Tensor

Grads = tuple[tuple["Tensor", "Tensor | None"], tuple["Tensor", "Tensor | None"]]


def conv_grads(x: Tensor, w: Tensor, g: Tensor, stride: tuple[int, ...],
               padding: tuple[int, ...], need_x: bool, need_w: bool,
               dilation: tuple[int, ...] = (1, 1), groups: int = 1) -> Grads:
    """((x, dx), (w, dw)) of conv2d (or conv3d) given g = d(loss)/d(output): the backend's
    conv2d_backward where it has one and takes this geometry (base.FastConv) and no graph
    is being built; else recorded operations (so that create_graph=True works)."""
    fast = fast_gradients(x._backend, "conv2d_backward", x._data, w._data, g._data, stride,
                          padding, dilation, groups, need_x, need_w)
    if fast is not None:
        dx, dw = fast
        return ((x, dx), (w, dw))
    if groups > 1 or any(d != 1 for d in dilation):
        return _composed_conv_grads(x, w, g, stride, padding, need_x, need_w, dilation, groups)
    return _lowered_conv_grads(x, w, g, stride, padding, need_x, need_w)


def _lowered_conv_grads(x: Tensor, w: Tensor, g: Tensor, stride: tuple[int, ...],
                        padding: tuple[int, ...], need_x: bool, need_w: bool) -> Grads:
    """conv as im2col + GEMM, differentiated: dW = g . cols^T, dX = col2im(W^T . g)
    (2 or 3 spatial dims)."""
    kernel = w.shape[2:]
    n, o = g.shape[:2]
    g_mat = g.reshape(n, o, numel(g.shape[2:]))       # [N, O, L]
    w_mat = w.reshape(o, numel(w.shape[1:]))          # [O, C*prod(kernel)]
    gw = gx = None
    if need_w:
        cols = im2col(x, kernel, stride, padding)    # [N, CKK, L]
        # As (cols . g^T)^T: the big cols is then BLAS's plain left operand, not a
        # transposed right one that each batch's GEMM repacks (~30% faster on OpenBLAS).
        gw = (cols @ g_mat.transpose(1, 2)).sum(0).transpose(0, 1).reshape(*w.shape)
    if need_x:
        gx = col2im(w_mat.transpose(0, 1) @ g_mat, x.shape, kernel, stride, padding)
    return (x, gx), (w, gw)


def _composed_conv_grads(x: Tensor, w: Tensor, g: Tensor, stride: tuple[int, ...],
                         padding: tuple[int, ...], need_x: bool, need_w: bool,
                         dilation: tuple[int, ...], groups: int) -> Grads:
    """A grouped or dilated convolution recorded as one Conv2d (the backend ran it in one
    call) but whose backward the backend does not serve: the gradients of the composition
    ops/conv.py runs otherwise, per group the plain convolution's with the kernel dilated
    by zeros between its taps; the kernel's gradient keeps the taps only."""
    kernel = w
    for dim, d in enumerate(dilation, 2):
        kernel = dilate(kernel, dim, d)
    c, o = x.shape[1] // groups, w.shape[0] // groups
    parts = [_lowered_conv_grads(x.narrow(1, i * c, c), kernel.narrow(0, i * o, o),
                                 g.narrow(1, i * o, o), stride, padding, need_x, need_w)
             for i in range(groups)]
    # (each part has its gradient where asked for: the filters only narrow the types)
    gx = cat([gx for (_, gx), _ in parts if gx is not None], 1) if need_x else None
    gw = None
    if need_w:
        gw = cat([gw for _, (_, gw) in parts if gw is not None], 0)
        gw = gw[(slice(None), slice(None)) + tuple(slice(None, None, d) for d in dilation)]
    return (x, gx), (w, gw)


def conv1d_grads(x: Tensor, w: Tensor, g: Tensor, stride: int, padding: int) -> InputGrads:
    """conv1d's gradients as those of a conv2d of height 1."""
    n, c, length = x.shape
    x4 = x.reshape(n, c, 1, length)
    w4 = w.reshape(w.shape[0], w.shape[1], 1, w.shape[2])
    g4 = g.reshape(g.shape[0], g.shape[1], 1, g.shape[2])
    (_, gx), (_, gw) = conv_grads(x4, w4, g4, (1, stride), (0, padding), x.requires_grad,
                                  w.requires_grad)
    return ((x, gx.reshape(*x.shape) if gx is not None else None),
            (w, gw.reshape(*w.shape) if gw is not None else None))
