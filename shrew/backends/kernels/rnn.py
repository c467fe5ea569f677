"""The recurrent cell step on rnn.cl for OpenCL and CUDA: rnn_cell and rnn_cell_backward
(base.Backend), one work-item per element of the [N, H] state."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..base import Storage
from . import KernelLaunches

_GATES = {"rnn_tanh": 1, "rnn_relu": 1, "lstm": 4, "gru": 3}
_WORKSPACE = {"lstm": 5, "gru": 4}  # ws's width in H (rnn modes save h itself)


class RnnLaunches(KernelLaunches):
    """rnn_cell and rnn_cell_backward on rnn.cl."""

    def _rows(self, x: Storage) -> tuple:
        """(buffer, element offset) of x, C-contiguous (copied where it is not)."""
        layout = self._layout(x)
        (rows, cols), (row_step, col_step) = x.shape, layout[:-1]
        if (rows > 1 and row_step != cols) or (cols > 1 and col_step != 1):
            x = self.contiguous(x)
            layout = self._layout(x)
        return self._arg(x), np.int64(layout[-1])

    def _cell(self, name: str, dtype: np.dtype, count: int, hidden: int, *args: Any) -> None:
        self._launch_1d("rnn", dtype, name, count, np.int64(count), np.int64(hidden), *args)

    def rnn_cell(self, mode: str, gx: Storage, gh: Storage, state: Storage | None) -> tuple:
        rows, hidden = gx.shape[0], gx.shape[1] // _GATES[mode]
        dtype = gx.dtype
        h = self._empty((rows, hidden), dtype)
        count = rows * hidden
        if mode in ("rnn_tanh", "rnn_relu"):
            self._cell(f"{mode}_cell", dtype, count, hidden, *self._rows(gx), *self._rows(gh),
                       self._arg(h))
            return h, None, h
        ws = self._empty((rows, _WORKSPACE[mode] * hidden), dtype)
        if mode == "lstm":
            c = self._empty((rows, hidden), dtype)
            self._cell("lstm_cell", dtype, count, hidden, *self._rows(gx), *self._rows(gh),
                       *self._rows(state), self._arg(h), self._arg(c), self._arg(ws))
            return h, c, ws
        self._cell("gru_cell", dtype, count, hidden, *self._rows(gx), *self._rows(gh),
                   *self._rows(state), self._arg(h), self._arg(ws))
        return h, None, ws

    def rnn_cell_backward(self, mode: str, dh: Storage, dc: Storage | None,
                          state: Storage | None, ws: Storage) -> tuple:
        rows, hidden = dh.shape
        dtype = dh.dtype
        count = rows * hidden
        if mode in ("rnn_tanh", "rnn_relu"):
            d = self._empty((rows, hidden), dtype)
            self._cell(f"{mode}_cell_backward", dtype, count, hidden, *self._rows(dh),
                       *self._rows(ws), self._arg(d))
            return d, d, None
        dstate = self._empty((rows, hidden), dtype)
        if mode == "lstm":
            dgates = self._empty((rows, 4 * hidden), dtype)
            dc_arg = self._rows(dh if dc is None else dc)  # not read without dc
            self._cell("lstm_cell_backward", dtype, count, hidden, *self._rows(dh), *dc_arg,
                       np.int32(dc is not None), *self._rows(state), *self._rows(ws),
                       self._arg(dgates), self._arg(dstate))
            return dgates, dgates, dstate
        dgx = self._empty((rows, 3 * hidden), dtype)
        dgh = self._empty((rows, 3 * hidden), dtype)
        self._cell("gru_cell_backward", dtype, count, hidden, *self._rows(dh),
                   *self._rows(state), *self._rows(ws), self._arg(dgx), self._arg(dgh),
                   self._arg(dstate))
        return dgx, dgh, dstate
