"""The OpenCL backend: every primitive of ``base.Backend`` as kernels from ../kernels.

Outputs are fresh C-contiguous buffers from a memory pool (or, from matmul, a transposed
view of one); inputs are read in place through their strides, so views never need a copy.
All work goes through one in-order queue, so a pooled buffer can be reused as soon as
Python drops it, and nothing waits for the device except ``to_numpy``.
"""
from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np
import pyopencl as cl
import pyopencl.tools

from ..array_module.linalg import linalg as xp_linalg
from ..base import SPECIAL_BINARY_FNS, SPECIAL_UNARY_FNS, Storage
from ..host_memory import keep_freed_memory, release_freed_memory
from ..kernels import compute_dtype, wrapped
from ..kernels.conv import ConvLaunches
from ..kernels.fft import FFTLaunches
from ..kernels.index import IndexLaunches
from ..kernels.pool import PoolLaunches
from ..kernels.random import PhiloxRNG
from ..kernels.rnn import RnnLaunches
from ..kernels.scan import ScanLaunches
from ..kernels.sort import SortLaunches
from .discovery import DeviceInfo
from .programs import Programs
from .storage import CLStorage, broadcast_layout, collapse, contiguous_strides, view_strides

_i64, _i32 = np.int64, np.int32
_SPECIAL_FNS = frozenset(SPECIAL_UNARY_FNS + SPECIAL_BINARY_FNS)  # special.cl's kernels
_META_CACHE_SIZE = 4096
# matmul.cl's RM, RN, MM_LX, MM_LY and PACK_W
_MM_RM, _MM_RN, _MM_LX, _MM_LY, _MM_PACK_W = 4, 16, 4, 4, 16


class OpenCLBackend(PhiloxRNG, ConvLaunches, PoolLaunches, IndexLaunches, ScanLaunches,
                    SortLaunches, FFTLaunches, RnnLaunches):
    """The primitive kernel set on one OpenCL device.

    Defined here, each section naming its ../kernels/<family>.cl: host transfer and
    creation, layout and cast, the elementwise primitives, reductions, softmax and
    standardize, matmul, linalg (on the host), copy_, add_ and add_narrow_.  From the
    mixins, which the CUDA backend shares (each ../kernels/<family>.py beside its .cl):
    - ConvLaunches (kernels/conv.py): im2col, col2im;
    - PoolLaunches (kernels/pool.py): max_pool2d, avg_pool2d;
    - IndexLaunches (kernels/index.py): gather, scatter_add, scatter;
    - ScanLaunches (kernels/scan.py): scan, arg_scan;
    - SortLaunches (kernels/sort.py): argsort;
    - FFTLaunches (kernels/fft.py): fft, a direct DFT per dim (OpenCL only: CUDA has cuFFT);
    - RnnLaunches (kernels/rnn.py): rnn_cell, rnn_cell_backward;
    - PhiloxRNG (kernels/random.py): manual_seed, rand, randn, get_rng_state,
      set_rng_state.
    """

    def __init__(self, info: DeviceInfo):
        """The backend of a device that discovery.py found working (its ``info``)."""
        cl_device = info.cl_device
        self.device = info.device
        if info.kind == "CPU":  # its buffers are host memory
            keep_freed_memory()
        self.info = info
        self.cl_device = cl_device
        self.description = info.title()
        self.context = cl.Context([cl_device])
        self.queue = cl.CommandQueue(self.context)
        # the largest buffer the device allocates (base.Backend.max_alloc_bytes): a larger
        # request is refused by the core, not by pyopencl's raw INVALID_BUFFER_SIZE
        self.max_alloc_bytes = int(cl_device.max_mem_alloc_size)
        # bfloat16 on every device: OpenCL C has no such type, so the kernels store its 16
        # bits (ushort) and compute in float (kernels/common.h); float16 needs cl_khr_fp16.
        dtypes = ["float32", "bfloat16", "uint8", "int8", "int16", "int32", "int64", "bool"]
        dtypes += ["float64"] * info.float64 + ["float16"] * info.float16
        self.dtypes = frozenset(np.dtype(ml_dtypes.bfloat16 if t == "bfloat16" else t)
                                for t in dtypes)
        # 1-D work-groups of wg items (a power of two), within what the device allows for a
        # work-group, its first dimension, and the reductions' two local arrays of wg
        # 8-byte values (reduce.cl).
        limit = min(256, info.max_work_group_size, info.max_work_item_sizes[0],
                    info.local_mem_size // 16)
        self.wg = 1 << (limit.bit_length() - 1)
        self.tile = 16 if self.wg >= 256 else 8
        # Elementwise spans (common.h): on a CPU a work-group is one work-item looping over a
        # long span, which the compiler vectorizes; a GPU wants one element per work-item.
        self._span, self._span_wg = (4096, 1) if info.kind == "CPU" else (1, self.wg)
        self._programs = Programs(self.context, {
            "HAS_F64": int(np.dtype("float64") in self.dtypes),
            "HAS_F16": int(np.dtype("float16") in self.dtypes), "HAS_BF16": 1,
            "WG_SIZE": self.wg, "TILE": self.tile})
        self._pool = cl.tools.MemoryPool(cl.tools.ImmediateAllocator(self.queue))
        self.pool_allocate = self._pool.allocate
        # where every buffer comes from: the pool, or a compiled replay's arena while it
        # runs (compiler/device_arena.py swaps it)
        self.allocate = self.pool_allocate
        # sub-buffers start at multiples of this (CL_DEVICE_MEM_BASE_ADDR_ALIGN, in bits)
        self.arena_align = max(64, cl_device.mem_base_addr_align // 8)
        self._metas: dict = {}
        self._lock = threading.RLock()  # kernel objects hold their arguments: one launch at a time

    def __repr__(self) -> str:
        return f"OpenCLBackend({self.device}: {self.cl_device.name.strip()})"

    # -- plumbing ------------------------------------------------------------------------
    def _empty(self, shape: tuple, dtype: np.dtype) -> CLStorage:
        nbytes = math.prod(shape) * dtype.itemsize
        return CLStorage(self.allocate(max(nbytes, 1)), tuple(shape), dtype)

    def arena_buffer(self, nbytes: int) -> cl.Buffer:
        """One buffer for a replay arena (outside the pool: it lives as long as its plan)."""
        return cl.Buffer(self.context, cl.mem_flags.READ_WRITE, nbytes)

    def arena_part(self, buffer: cl.Buffer, offset: int, nbytes: int) -> cl.Buffer:
        return buffer.get_sub_region(offset, max(nbytes, 1))

    def release_pool(self) -> None:
        """Free the blocks the pool keeps for reuse (a replay arena serves their sizes):
        on a CPU device, back to the OS (they are malloc's memory, which keeps what is
        freed: host_memory)."""
        self.queue.finish()  # a buffer goes when the last command using it has run
        self._pool.free_held()
        if self.info.kind == "CPU":
            release_freed_memory()

    def _meta(self, values: tuple) -> cl.Buffer:
        """A device int64 array of `values` (shapes, strides, offsets), cached by value."""
        buf = self._metas.get(values)
        if buf is None:
            if len(self._metas) >= _META_CACHE_SIZE:
                self._metas.clear()
            host = np.array(values or (0,), dtype=np.int64)
            buf = cl.Buffer(self.context, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                            hostbuf=host)
            self._metas[values] = buf
        return buf

    def _layout(self, x: CLStorage) -> tuple:
        """x's strides and offset in elements (the ../kernels/<family>.py mixins read them
        from meta)."""
        return tuple(x.strides) + (x.offset,)

    def _arg(self, x: CLStorage) -> cl.Buffer:
        return x.buffer

    def allocation(self, x: CLStorage) -> cl.Buffer:  # base.Allocation
        return x.buffer

    def _layout_meta(self, shape: tuple, layouts: list) -> cl.Buffer:
        values = shape
        for strides, offset in layouts:
            values += strides + (offset,)
        return self._meta(values)

    def _launch(self, family: str, dtype: np.dtype, name: str, global_size: tuple,
                local_size: tuple | None, *args: Any) -> None:
        with self._lock:
            kernel = self._programs.kernel(family, dtype, name, args)
            kernel(self.queue, global_size, local_size, *args)

    def _launch_1d(self, family: str, dtype: np.dtype, name: str, n: int, *args: Any) -> None:
        self._launch(family, dtype, name, (-(-n // self.wg) * self.wg,), (self.wg,), *args)

    def _launch_items(self, family: str, dtype: np.dtype, name: str, items: int,
                      *args: Any) -> None:
        """`items` work-items that each run their own loops (rows, spans), in work-groups of
        one on a CPU, where the compiler then vectorizes those loops."""
        wg = self._span_wg
        self._launch(family, dtype, name, (-(-items // wg) * wg,), (wg,), *args)

    def _launch_span(self, family: str, dtype: np.dtype, name: str, n: int, *args: Any) -> None:
        """A kernel over n outputs in spans of self._span (its first arguments: n, per_item)."""
        self._launch_items(family, dtype, name, -(-n // self._span), _i64(n), _i64(self._span),
                           *args)

    def _scalar(self, value: Any, dtype: np.dtype) -> np.generic:
        """`value` rounded to `dtype` first (as numpy would), passed as the kernel's CT."""
        return compute_dtype(dtype).type(dtype.type(wrapped(value, dtype)))

    def _map(self, family: str, name: str, dtype: np.dtype, out_dtype: np.dtype, shape: tuple,
             inputs: Sequence[CLStorage], *scalars: Any) -> CLStorage:
        """One work-item per element of a fresh `shape` output; inputs broadcast in place."""
        out = self._empty(shape, out_dtype)
        n = out.size
        if n:
            dims, layouts = collapse(shape, [broadcast_layout(x, shape) for x in inputs])
            self._launch_span(family, dtype, name, n, _i32(len(dims)),
                              self._layout_meta(dims, layouts), *(x.buffer for x in inputs),
                              *scalars, out.buffer)
        return out

    def _copy_into(self, dst: CLStorage, src: CLStorage) -> None:
        """dst[...] = src through both layouts (same shape)."""
        n = src.size
        if n:
            dims, layouts = collapse(src.shape, [(src.strides, src.offset),
                                                 (dst.strides, dst.offset)])
            self._launch_span("elementwise", src.dtype, "copy", n, _i32(len(dims)),
                              self._layout_meta(dims, layouts), src.buffer, dst.buffer)

    # -- host transfer and creation (elementwise.cl: fill, arange) ------------------------
    def from_numpy(self, a: np.ndarray) -> Storage:
        host = np.asarray(a, dtype=a.dtype.newbyteorder("="), order="C")
        if host.size == 0:
            return self._empty(host.shape, host.dtype)
        buf = cl.Buffer(self.context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                        hostbuf=_transferable(host))
        return CLStorage(buf, host.shape, host.dtype)

    def to_numpy(self, x: Storage) -> np.ndarray:
        host = np.empty(x.shape, x.dtype)
        if host.size:
            if not x.is_contiguous:
                x = self.contiguous(x)
            cl.enqueue_copy(self.queue, _transferable(host), x.buffer,
                            src_offset=x.offset * x.dtype.itemsize, is_blocking=True)
        return host

    def full(self, shape: tuple, value: float, dtype: np.dtype) -> Storage:
        out = self._empty(tuple(shape), np.dtype(dtype))
        if out.size:
            self._launch_span("elementwise", out.dtype, "fill", out.size,
                              self._scalar(value, out.dtype), out.buffer)
        return out

    def arange(self, n: int, dtype: np.dtype) -> Storage:
        out = self._empty((n,), np.dtype(dtype))
        if n:
            self._launch_span("elementwise", out.dtype, "arange", n, out.buffer)
        return out

    # -- layout: views and copies (elementwise.cl: copy; cast.cl) ---------------------------
    def reshape(self, x: Storage, shape: tuple) -> Storage:
        shape = tuple(shape)
        strides = view_strides(x.shape, x.strides, shape)
        if strides is None:
            x, strides = self.contiguous(x), contiguous_strides(shape)
        return x.view(shape, strides)

    def transpose(self, x: Storage, d0: int, d1: int) -> Storage:
        shape, strides = list(x.shape), list(x.strides)
        shape[d0], shape[d1] = shape[d1], shape[d0]
        strides[d0], strides[d1] = strides[d1], strides[d0]
        return x.view(tuple(shape), tuple(strides))

    def narrow(self, x: Storage, dim: int, start: int, length: int) -> Storage:
        shape = x.shape[:dim] + (length,) + x.shape[dim + 1:]
        return x.view(shape, x.strides, x.offset + start * x.strides[dim])

    def expand(self, x: Storage, shape: tuple) -> Storage:
        return x.view(tuple(shape), broadcast_layout(x, tuple(shape))[0])

    def as_strided(self, x: Storage, shape: tuple, strides: tuple, offset: int) -> Storage:
        return x.view(tuple(shape), tuple(strides), x.offset + offset)

    def contiguous(self, x: Storage) -> Storage:
        out = self._empty(x.shape, x.dtype)
        if out.size == 0:
            return out
        if x.is_contiguous:
            itemsize = x.dtype.itemsize
            cl.enqueue_copy(self.queue, out.buffer, x.buffer, byte_count=out.size * itemsize,
                            src_offset=x.offset * itemsize, dst_offset=0)
        else:
            self._copy_into(out, x)
        return out

    def cat(self, xs: Sequence[Storage], dim: int) -> Storage:
        shape = list(xs[0].shape)
        shape[dim] = sum(x.shape[dim] for x in xs)
        out = self._empty(tuple(shape), xs[0].dtype)
        start = 0
        for x in xs:
            self._copy_into(self.narrow(out, dim, start, x.shape[dim]), x)
            start += x.shape[dim]
        return out

    def pad(self, x: Storage, pads: Sequence[tuple], value: float) -> Storage:
        shape = tuple(n + before + after for n, (before, after) in zip(x.shape, pads))
        out = self.full(shape, value, x.dtype)
        offset = sum(before * st for (before, _), st in zip(pads, out.strides))
        self._copy_into(out.view(x.shape, out.strides, offset), x)
        return out

    def cast(self, x: Storage, dtype: np.dtype) -> Storage:
        dtype = np.dtype(dtype)
        if dtype == x.dtype:
            return x
        return self._map("cast", f"cast_to_{dtype.name}", x.dtype, dtype, x.shape, [x])

    # -- elementwise (elementwise.cl) --------------------------------------------------------
    def unary(self, fn: str, x: Storage) -> Storage:
        family = "special" if fn in _SPECIAL_FNS else "elementwise"
        return self._map(family, f"unary_{fn}", x.dtype, x.dtype, x.shape, [x])

    def binary(self, fn: str, a: Storage, b: Storage) -> Storage:
        shape = np.broadcast_shapes(a.shape, b.shape)
        family = "special" if fn in _SPECIAL_FNS else "elementwise"
        return self._map(family, f"binary_{fn}", a.dtype, a.dtype, shape, [a, b])

    def compare(self, fn: str, a: Storage, b: Storage) -> Storage:
        shape = np.broadcast_shapes(a.shape, b.shape)
        return self._map("elementwise", f"compare_{fn}", a.dtype, np.dtype(bool), shape, [a, b])

    def where(self, cond: Storage, a: Storage, b: Storage) -> Storage:
        shape = np.broadcast_shapes(cond.shape, a.shape, b.shape)
        return self._map("elementwise", "where", a.dtype, a.dtype, shape, [cond, a, b])

    def affine(self, x: Storage, mul: float, add: float) -> Storage:
        return self._map("elementwise", "affine", x.dtype, x.dtype, x.shape, [x],
                         self._scalar(mul, x.dtype), self._scalar(add, x.dtype))

    def powf(self, x: Storage, exponent: float) -> Storage:
        return self._map("elementwise", "power", x.dtype, x.dtype, x.shape, [x],
                         self._scalar(exponent, x.dtype))

    def clamp(self, x: Storage, lo: float | None, hi: float | None) -> Storage:
        return self._map("elementwise", "clip", x.dtype, x.dtype, x.shape, [x],
                         self._scalar(0 if lo is None else lo, x.dtype),
                         self._scalar(0 if hi is None else hi, x.dtype),
                         _i32(lo is not None), _i32(hi is not None))

    # -- reductions (reduce.cl) --------------------------------------------------------------
    def _reduce(self, name: str, x: CLStorage, dims: tuple, keepdim: bool, out_dtype: np.dtype,
                empty_value: float) -> CLStorage:
        """Reduce x over `dims` with kernel `name`_rows or `name`_groups (see reduce.cl)."""
        kept = [d for d in range(x.ndim) if d not in dims]
        kept_shape = tuple(x.shape[d] for d in kept)
        red_shape = tuple(x.shape[d] for d in dims)
        shape = tuple(1 if d in dims else n for d, n in enumerate(x.shape)) if keepdim \
            else kept_shape
        n_out, length = math.prod(kept_shape), math.prod(red_shape)
        if length == 0:
            return self.full(shape, empty_value, out_dtype)
        out = self._empty(shape, out_dtype)
        if n_out == 0:
            return out
        kdims, [klay] = collapse(kept_shape, [(tuple(x.strides[d] for d in kept), x.offset)])
        red_strides = tuple(x.strides[d] for d in dims)
        if name in ("max", "min"):  # repeats along an expanded (stride-0) dim change no extreme
            red_shape = tuple(1 if st == 0 else n for n, st in zip(red_shape, red_strides))
        rdims, [rlay] = collapse(red_shape, [(red_strides, 0)])
        length = math.prod(rdims)
        meta = self._meta(kdims + klay[0] + (klay[1],) + rdims + rlay[0] + (0,))
        args = (_i64(n_out), _i64(length), _i32(len(kdims)), _i32(len(rdims)), meta,
                x.buffer, out.buffer)
        if self._span > 1 and rlay[0][-1:] != (1,) and not name.startswith("arg"):
            # On a CPU, rows strided through memory (sums over leading dims) are read a span
            # of adjacent outputs at a time: reduce.cl's SPAN_OUTPUTS of them per work-item.
            self._launch_items("reduce", x.dtype, f"{name}_spans", -(-n_out // 64), *args)
        # A work-group per output pays off only for long rows and few outputs.
        elif length >= 2 * self.wg and n_out <= 4096:
            self._launch("reduce", x.dtype, f"{name}_groups", (n_out * self.wg,), (self.wg,), *args)
        else:
            self._launch_1d("reduce", x.dtype, f"{name}_rows", n_out, *args)
        return out

    def reduce(self, fn: str, x: Storage, dims: tuple, keepdim: bool) -> Storage:
        integral = x.dtype.kind in "biu"
        out_dtype = np.dtype(np.int64) if fn == "sum" and integral else x.dtype
        empty = 0 if fn == "sum" or integral else math.nan
        return self._reduce(fn, x, tuple(dims), keepdim, out_dtype, empty)

    def arg_reduce(self, fn: str, x: Storage, dim: int, keepdim: bool) -> Storage:
        return self._reduce(fn, x, (dim,), keepdim, np.dtype(np.int64), 0)

    # -- fused normalisations (norm.cl: one work-item per row) ------------------------
    def softmax(self, x: Storage, dim: int, log: bool) -> Storage:
        x = x if x.is_contiguous and x.offset == 0 else self.contiguous(x)
        out = self._empty(x.shape, x.dtype)
        n, inner = x.shape[dim], math.prod(x.shape[dim + 1:])
        rows = x.size // n
        self._launch_items("norm", x.dtype, "softmax", rows, _i64(rows), _i64(n),
                           _i64(inner), _i32(log), x.buffer, out.buffer)
        return out

    def standardize(self, x: Storage, dims: tuple, eps: float) -> tuple:
        x = x if x.is_contiguous and x.offset == 0 else self.contiguous(x)
        out = self._empty(x.shape, x.dtype)
        keep = tuple(1 if d in dims else s for d, s in enumerate(x.shape))
        rstd = self._empty(keep, x.dtype)
        rows = rstd.size
        self._launch_items("norm", x.dtype, "standardize", rows, _i64(rows),
                           _i64(x.size // rows), self._scalar(eps, x.dtype), x.buffer,
                           out.buffer, rstd.buffer)
        return out, rstd

    # -- linear algebra (matmul.cl; linalg on the host) -------------------------------------
    def matmul(self, a: Storage, b: Storage) -> Storage:
        (m, k), n = a.shape[-2:], b.shape[-1]
        if b.strides[-1] != 1 and n > 1 and (a.strides[-2] == 1 or 4 * m <= n):
            # b's rows are strided and would need packing (below): compute out.T = b.T @ a.T
            # instead, which packs a.T, much smaller here, or nothing if a is itself a
            # transpose (g @ cols.T in a convolution's weight gradient).  out is then a
            # transposed view.
            t = self.matmul(self.transpose(b, b.ndim - 2, b.ndim - 1),
                            self.transpose(a, a.ndim - 2, a.ndim - 1))
            return self.transpose(t, t.ndim - 2, t.ndim - 1)
        batch = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
        out = self._empty(batch + (m, n), a.dtype)
        if out.size == 0:
            return out
        if b.strides[-1] != 1 and n > 1:
            # matmul.cl reads RN contiguous elements of a row of b per step: pack a b with
            # strided rows (b = w.T in x @ w.T) into a C-contiguous copy first.
            packed = self._empty(b.shape, b.dtype)
            nbatch = math.prod(b.shape[:-2])
            if nbatch and k:
                pdims, playouts = collapse(b.shape[:-2], [(b.strides[:-2], b.offset)])
                self._launch("matmul", b.dtype, "matmul_pack",
                             (-(-n // _MM_PACK_W), -(-k // _MM_LX) * _MM_LX, nbatch),
                             (1, _MM_LX, 1),
                             _i64(k), _i64(n), _i64(b.strides[-2]), _i64(b.strides[-1]),
                             _i32(len(pdims)), self._layout_meta(pdims, playouts),
                             b.buffer, packed.buffer)
            b = packed
        bdims, layouts = collapse(batch, [
            broadcast_layout(x.view(x.shape[:-2], x.strides[:-2]), batch) for x in (a, b)])
        lx, ly = _MM_LX, _MM_LY   # matmul.cl: RM x RN outputs per work-item
        gx, gy = -(-n // (_MM_RN * lx)) * lx, -(-m // (_MM_RM * ly)) * ly
        self._launch("matmul", a.dtype, "matmul", (gx, gy, math.prod(batch)), (lx, ly, 1),
                     _i64(m), _i64(n), _i64(k), _i64(a.strides[-2]), _i64(a.strides[-1]),
                     _i64(b.strides[-2]), _i64(b.strides[-1]), _i32(len(bdims)),
                     self._layout_meta(bdims, layouts), a.buffer, b.buffer, out.buffer)
        return out

    def linalg(self, fn: str, *arrays: CLStorage, option: Any = None) -> tuple:
        # The one host round trip of this backend (docs/backend-guide.md): LAPACK through
        # numpy on a copy, the results uploaded again.
        host = tuple(self.to_numpy(a) for a in arrays)
        results = xp_linalg(np, fn, host, option)
        return tuple(self.from_numpy(np.asarray(r)) for r in results)

    # -- random numbers: PhiloxRNG keeps the state; random.cl makes the numbers ----------
    def _launch_random(self, name: str, dtype: np.dtype, blocks: int, args: tuple,
                       out: CLStorage) -> None:
        self._launch_1d("random", dtype, name, blocks, *args, out.buffer)

    # -- in-place (elementwise.cl: copy, add) -----------------------------------------------
    def copy_(self, dst: Storage, src: Storage) -> None:
        self._copy_into(dst, src)

    def add_(self, dst: Storage, src: Storage, alpha: float) -> None:
        # Into a fresh buffer first, so that src may be dst itself.
        self._copy_into(dst, self.binary("add", dst, self.affine(src, alpha, 0)))

    def add_narrow_(self, dst: Storage, src: Storage, dim: int, start: int
                    ) -> None:  # base.FastAccumulate: a narrow is a view of dst's buffer
        part = self.narrow(dst, dim, start, src.shape[dim])
        self._copy_into(part, self.binary("add", part, src))


def _transferable(host: np.ndarray) -> np.ndarray:
    """host as pyopencl can copy it: ml_dtypes' bfloat16 has no buffer format, so its
    bits travel as uint16 (the same memory)."""
    return host.view(np.uint16) if host.dtype == ml_dtypes.bfloat16 else host
