"""The recurrent cell step on an array module: base.Backend's rnn_cell and
rnn_cell_backward, the gates' nonlinearities and the state update of one time step, for
numpy (the cpu backend) and CuPy.

Each works in place on one or two fresh arrays, so a step is a handful of passes over the
[N, gates * H] gates instead of the dozen recorded operations a composed cell makes.  The
sigmoid is 0.5 tanh(x / 2) + 0.5: one tanh, which never overflows."""
from __future__ import annotations

from typing import Any

from ..base import Storage
from ..kernels import accumulator


class RnnPrimitives:
    """rnn_cell and rnn_cell_backward (base.Backend) on ``self.xp``."""

    xp: Any

    def _lstm_rows(self, hidden: int, dtype: Any) -> tuple:
        """Per-gate rows [4H] that let one pass serve all four LSTM gates: the scale
        (0.5 for the sigmoids, i f o; 1 for g's tanh) and shift (0.5; 0) of sigmoid(x) =
        0.5 tanh(0.5 x) + 0.5, and the slope (1; 0) and offset (0; 1) of the
        derivatives a (1 - a) and 1 - a^2 as slope a + offset - a^2."""
        cache = self.__dict__.setdefault("_lstm_row_cache", {})
        key = (hidden, dtype)
        rows = cache.get(key)
        if rows is None:
            sigmoid = self.xp.asarray([1, 1, 0, 1], dtype).repeat(hidden)
            rows = cache[key] = (0.5 + 0.5 * (1 - sigmoid), 0.5 * sigmoid, sigmoid,
                                 1 - sigmoid)
        return rows

    def _sigmoid_(self, x: Storage) -> None:
        x *= 0.5
        self.xp.tanh(x, out=x)
        x *= 0.5
        x += 0.5

    def rnn_cell(self, mode: str, gx: Storage, gh: Storage, state: Storage | None) -> tuple:
        xp, dtype = self.xp, gx.dtype
        wide = accumulator(dtype)
        gx, gh = gx.astype(wide, copy=False), gh.astype(wide, copy=False)
        if state is not None:
            state = state.astype(wide, copy=False)
        size = gh.shape[1]
        if mode == "rnn_tanh" or mode == "rnn_relu":
            h = gx + gh
            if mode == "rnn_tanh":
                xp.tanh(h, out=h)
            else:
                xp.maximum(h, 0, out=h)
            h = h.astype(dtype, copy=False)
            return h, None, h
        if mode == "lstm":
            hidden = size // 4
            ws = xp.empty((gx.shape[0], 5 * hidden), wide)
            gates = ws[:, :size]
            scale, shift, _, _ = self._lstm_rows(hidden, wide)
            xp.add(gx, gh, out=gates)
            gates *= scale           # the four nonlinearities in four passes
            xp.tanh(gates, out=gates)
            gates *= scale
            gates += shift
            i, f = gates[:, :hidden], gates[:, hidden:2 * hidden]
            g, o = gates[:, 2 * hidden:3 * hidden], gates[:, 3 * hidden:]
            c = f * state
            c += i * g
            tanh_c = ws[:, size:]
            xp.tanh(c, out=tanh_c)
            h = o * tanh_c
            return h.astype(dtype, copy=False), c.astype(dtype, copy=False), ws
        # gru
        hidden = size // 3
        ws = xp.empty((gx.shape[0], 4 * hidden), wide)
        rz = ws[:, :2 * hidden]
        xp.add(gx[:, :2 * hidden], gh[:, :2 * hidden], out=rz)
        self._sigmoid_(rz)
        r, z = ws[:, :hidden], ws[:, hidden:2 * hidden]
        n, hn = ws[:, 2 * hidden:3 * hidden], ws[:, 3 * hidden:]
        hn[...] = gh[:, 2 * hidden:]
        xp.multiply(r, hn, out=n)
        n += gx[:, 2 * hidden:]
        xp.tanh(n, out=n)
        h = state - n
        h *= z
        h += n
        return h.astype(dtype, copy=False), None, ws

    def rnn_cell_backward(self, mode: str, dh: Storage, dc: Storage | None,
                          state: Storage | None, ws: Storage) -> tuple:
        xp, dtype = self.xp, dh.dtype
        wide = accumulator(dtype)
        dh = dh.astype(wide, copy=False)
        prev: Any = None if state is None else state.astype(wide, copy=False)
        if mode == "rnn_tanh" or mode == "rnn_relu":
            if mode == "rnn_tanh":
                d = ws * ws
                xp.subtract(1, d, out=d)
                d *= dh
            else:
                d = xp.where(ws > 0, dh, xp.zeros((), wide))
            d = d.astype(dtype, copy=False)
            return d, d, None
        if mode == "lstm":
            hidden = dh.shape[1]
            i, f = ws[:, :hidden], ws[:, hidden:2 * hidden]
            g, o = ws[:, 2 * hidden:3 * hidden], ws[:, 3 * hidden:4 * hidden]
            tanh_c = ws[:, 4 * hidden:]
            out = xp.empty((dh.shape[0], 4 * hidden), wide)
            # dc_total = dc + dh o (1 - tanh(c)^2)
            dct = tanh_c * tanh_c
            xp.subtract(1, dct, out=dct)
            dct *= o
            dct *= dh
            if dc is not None:
                dct += dc.astype(wide, copy=False)
            # each gate's output gradient, then times its nonlinearity's derivative
            xp.multiply(dct, g, out=out[:, :hidden])
            xp.multiply(dct, prev, out=out[:, hidden:2 * hidden])
            xp.multiply(dct, i, out=out[:, 2 * hidden:3 * hidden])
            xp.multiply(dh, tanh_c, out=out[:, 3 * hidden:])
            _, _, slope, offset = self._lstm_rows(hidden, wide)
            acts = ws[:, :4 * hidden]
            derivative = acts * slope
            derivative += offset
            derivative -= acts * acts
            out *= derivative
            dct *= f
            out = out.astype(dtype, copy=False)
            return out, out, dct.astype(dtype, copy=False)
        # gru
        hidden = dh.shape[1]
        r, z = ws[:, :hidden], ws[:, hidden:2 * hidden]
        n, hn = ws[:, 2 * hidden:3 * hidden], ws[:, 3 * hidden:]
        dgx = xp.empty((dh.shape[0], 3 * hidden), wide)
        dr, dz, dn = dgx[:, :hidden], dgx[:, hidden:2 * hidden], dgx[:, 2 * hidden:]
        # h = n + z (h_prev - n): dn_pre = dh (1 - z) (1 - n^2), dz_pre = dh (h_prev - n) z (1 - z)
        xp.multiply(n, n, out=dn)
        xp.subtract(1, dn, out=dn)
        dn *= 1 - z
        dn *= dh
        xp.subtract(prev, n, out=dz)
        dz *= dh
        dz *= z
        dz *= 1 - z
        xp.multiply(dn, hn, out=dr)
        dr *= r
        dr *= 1 - r
        dgh = dgx.copy()
        dgh[:, 2 * hidden:] *= r
        dprev = dh * z
        return (dgx.astype(dtype, copy=False), dgh.astype(dtype, copy=False),
                dprev.astype(dtype, copy=False))
