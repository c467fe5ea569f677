"""Gradient rules of the conv family (ops/conv.py)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..backends.base import fast_path
from ..factory import wrap
from ..grad_mode import is_grad_enabled
from ..ops.conv import col2im, im2col
from ..shape import numel
from .common import InputGrads

if TYPE_CHECKING:
    from ..tensor import Tensor


def conv_grads(x: Tensor, w: Tensor, g: Tensor, kernel: tuple[int, ...],
               stride: tuple[int, ...], padding: tuple[int, ...], need_x: bool,
               need_w: bool) -> tuple[tuple[Tensor, Tensor | None], tuple[Tensor, Tensor | None]]:
    """The backend's conv2d_backward where it has one and takes this geometry
    (base.FastConv) and no graph is being built; else conv as im2col + GEMM, differentiated
    with recorded operations (so that create_graph=True works): dW = g . cols^T,
    dX = col2im(W^T . g)."""
    be = x._backend
    if not is_grad_enabled():
        grads = fast_path(be, "conv2d_backward", x._data, w._data, g._data, stride, padding,
                          need_x, need_w)
        if grads is not NotImplemented:
            gx_data, gw_data = grads
            return ((x, None if gx_data is None else wrap(gx_data, be)),
                    (w, None if gw_data is None else wrap(gw_data, be)))
    n, o = g.shape[:2]
    g_mat = g.reshape(n, o, numel(g.shape[2:]))       # [N, O, L]
    w_mat = w.reshape(o, numel(w.shape[1:]))          # [O, C*kh*kw]
    gw = gx = None
    if need_w:
        cols = im2col(x, kernel, stride, padding)    # [N, CKK, L]
        # As (cols . g^T)^T: the big cols is then BLAS's plain left operand, not a
        # transposed right one that each batch's GEMM repacks (~30% faster on OpenBLAS).
        gw = (cols @ g_mat.transpose(1, 2)).sum(0).transpose(0, 1).reshape(*w.shape)
    if need_x:
        gx = col2im(w_mat.transpose(0, 1) @ g_mat, x.shape, kernel, stride, padding)
    return (x, gx), (w, gw)

def conv1d_grads(x: Tensor, w: Tensor, g: Tensor, stride: int, padding: int) -> InputGrads:
    """conv1d's gradients as those of a conv2d of height 1."""
    n, c, length = x.shape
    x4 = x.reshape(n, c, 1, length)
    w4 = w.reshape(w.shape[0], w.shape[1], 1, w.shape[2])
    g4 = g.reshape(g.shape[0], g.shape[1], 1, g.shape[2])
    (_, gx), (_, gw) = conv_grads(x4, w4, g4, (1, w.shape[2]), (1, stride), (0, padding),
                                  x.requires_grad, w.requires_grad)
    return ((x, gx.reshape(*x.shape) if gx is not None else None),
            (w, gw.reshape(*w.shape) if gw is not None else None))
