"""A oneDNN primitive ready to run on numpy buffers, and the bounded cache that keeps one
per (kind, shapes, parameters)."""
from __future__ import annotations

import ctypes
import threading
from collections import OrderedDict
from dataclasses import dataclass
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .binding import (ALLOCATE, ARG_FROM, ARG_TO, ARG_WORKSPACE, F32, FORMAT_ANY, INPUTS,
                      PLAIN_TAG_OFFSET, QUERY_EXEC_ARG_MD, QUERY_WORKSPACE_MD,
                      UNIMPLEMENTED, Dims, ExecArg, Handle, Runtime, available, check, load)

CACHE_SIZE = 128
"""Most primitives kept at once; a training loop uses a few per convolution layer."""


@dataclass(frozen=True)
class Layout:
    """An argument's numpy buffer other than plain float32: its shape, its oneDNN data type
    (binding's F32, BF16, F16) and its strides in elements (None: row-major)."""
    shape: tuple
    dtype: int = F32
    strides: tuple | None = None


class Primitive:
    """One primitive, ready to run on numpy buffers in plain layouts.

    ``descs`` maps each argument (DNNL_ARG_*) to its shape (a plain float32 buffer) or its
    Layout.  Where the primitive chose a
    layout of its own for an argument (the descriptor was made with format ``any``), a
    buffer in that layout is kept here with a reorder from (inputs) or to (outputs) the
    plain numpy buffer; where it kept the plain layout, the numpy buffer is used as is.
    ``inputs`` names the arguments it reads (reordered before it runs; the others after);
    ``tags`` gives the format tag of a numpy buffer laid out otherwise than plain.
    ``workspace`` is the byte size of the workspace (max pooling), 0 if none."""

    def __init__(self, runtime: Runtime, pd: Handle, descs: dict, hint: Handle | None = None,
                 inputs: frozenset = INPUTS, tags: dict | None = None):
        self.lib, self.runtime = runtime.lib, runtime
        self.pd: Handle | None = pd
        self.hint = hint
        self.busy = threading.Lock()  # held by the one call using its buffers (using)
        self.inputs = inputs        # the arguments it reads (the others it writes)
        self.tags = tags or {}      # argument -> the numpy buffer's format tag, if not plain
        self.owned: list = []       # (destroy function name, handle), freed by close()
        self.user: list = []        # (arg, memory object that takes the numpy buffer)
        try:
            primitive = self._own("dnnl_primitive_destroy", Handle())
            check(self.lib.dnnl_primitive_create(ctypes.byref(primitive), pd),
                  "primitive_create")
            ws_md = self.lib.dnnl_primitive_desc_query_md(pd, QUERY_WORKSPACE_MD, 0)
            self.workspace = self.lib.dnnl_memory_desc_get_size(ws_md) if ws_md else 0
            before: list = []
            after: list = []
            main_args: list = []
            for arg, shape in descs.items():
                main_args.append((arg, self._bind(arg, shape, before, after)))
            if self.workspace:
                main_args.append((ARG_WORKSPACE, self._memory(ws_md, None, user=ARG_WORKSPACE)))
            self.steps = [*before, (primitive, _exec_args(main_args)), *after]
        except BaseException:
            self._free()
            raise

    def _own(self, destroy: str, handle: Handle) -> Handle:
        self.owned.append((destroy, handle))
        return handle

    def _memory(self, md: Handle, handle: Handle | None, user: int | None = None) -> Handle:
        memory = self._own("dnnl_memory_destroy", Handle())
        check(self.lib.dnnl_memory_create(ctypes.byref(memory), md, self.runtime.engine,
                                          handle), "memory_create")
        if user is not None:
            self.user.append((user, memory))
        return memory

    def _bind(self, arg: int, desc: tuple | Layout, before: list, after: list) -> Handle:
        """The memory object the primitive reads or writes for `arg`: the numpy buffer's
        own, or a buffer in the primitive's layout with its reorder queued."""
        lib = self.lib
        plain = self._own("dnnl_memory_desc_destroy",
                          layout_md(lib, desc) if isinstance(desc, Layout) else
                          _md(lib, desc, any_layout=False, tag=self.tags.get(arg)))
        user = self._memory(plain, None, user=arg)
        chosen = lib.dnnl_primitive_desc_query_md(self.pd, QUERY_EXEC_ARG_MD, arg)
        if lib.dnnl_memory_desc_equal(chosen, plain):
            return user
        inner = self._memory(chosen, ALLOCATE)
        if arg in self.inputs:
            src_md, dst_md, src, dst, queue = plain, chosen, user, inner, before
        else:
            src_md, dst_md, src, dst, queue = chosen, plain, inner, user, after
        engine = self.runtime.engine
        reorder_pd = self._own("dnnl_primitive_desc_destroy", Handle())
        check(lib.dnnl_reorder_primitive_desc_create(ctypes.byref(reorder_pd), src_md, engine,
                                                     dst_md, engine, None),
              "reorder_primitive_desc_create")
        reorder = self._own("dnnl_primitive_destroy", Handle())
        check(lib.dnnl_primitive_create(ctypes.byref(reorder), reorder_pd), "primitive_create")
        queue.append((reorder, _exec_args([(ARG_FROM, src), (ARG_TO, dst)])))
        return inner

    def run(self, buffers: dict) -> None:
        """Execute on the numpy arrays of `buffers` (DNNL_ARG_* -> C-contiguous array);
        the caller holds ``busy`` (see using)."""
        lib, stream = self.lib, self.runtime.stream
        for arg, memory in self.user:   # (a strided view: its first element's address)
            check(lib.dnnl_memory_set_data_handle(memory, buffers[arg].ctypes.data),
                  "memory_set_data_handle")
        for primitive, args in self.steps:
            check(lib.dnnl_primitive_execute(primitive, stream, len(args), args),
                  "primitive_execute")
        check(lib.dnnl_stream_wait(stream), "stream_wait")

    def close(self) -> None:
        with self.busy:      # not while another thread runs it
            self._free()

    def _free(self) -> None:
        for destroy, handle in reversed(self.owned):
            if handle:
                getattr(self.lib, destroy)(handle)
        for pd in (self.pd, self.hint):
            if pd:
                self.lib.dnnl_primitive_desc_destroy(pd)
        self.owned, self.user, self.pd, self.hint = [], [], None, None


def _exec_args(pairs: list) -> ctypes.Array[ExecArg]:
    args = (ExecArg * len(pairs))()
    for i, (arg, memory) in enumerate(pairs):
        args[i].arg, args[i].memory = arg, memory
    return args


def _md(lib: ctypes.CDLL, shape: tuple, any_layout: bool, tag: int | None = None,
        dtype: int = F32) -> Handle:
    md = Handle()
    if tag is None:
        tag = FORMAT_ANY if any_layout else len(shape) + PLAIN_TAG_OFFSET
    check(lib.dnnl_memory_desc_create_with_tag(ctypes.byref(md), len(shape), Dims(*shape),
                                               dtype, tag), "memory_desc_create_with_tag")
    return md


def layout_md(lib: ctypes.CDLL, layout: Layout) -> Handle:
    """A memory descriptor of `layout` (with its strides where it has them)."""
    if layout.strides is None:
        return _md(lib, layout.shape, any_layout=False, dtype=layout.dtype)
    md = Handle()
    check(lib.dnnl_memory_desc_create_with_strides(
        ctypes.byref(md), len(layout.shape), Dims(*layout.shape), layout.dtype,
        Dims(*layout.strides)), "memory_desc_create_with_strides")
    return md


_cache: OrderedDict = OrderedDict()   # key -> Primitive, or None: no implementation
_lock = threading.RLock()


def cache_info() -> dict:
    """{"entries": primitives cached now (declined geometries included), "capacity": ...}."""
    return {"entries": len(_cache), "capacity": CACHE_SIZE}


def clear_cache() -> None:
    """Free every cached primitive."""
    with _lock:
        while _cache:
            _, entry = _cache.popitem()
            if entry is not None:
                entry.close()


@contextmanager
def using(key: tuple, make: Callable[..., Primitive | None]) -> Iterator[Primitive | None]:
    """The primitive for `key`, made by make(runtime) on a miss, held for this thread
    until the block ends (so that no eviction frees it meanwhile); None if oneDNN has no
    implementation for it (remembered too)."""
    with _lock:
        if key in _cache:
            _cache.move_to_end(key)
            entry = _cache[key]
        else:
            entry = _cache[key] = make(load())
            while len(_cache) > max(CACHE_SIZE, 1):   # never the entry just made
                _, old = _cache.popitem(last=False)
                if old is not None:
                    old.close()   # waits for a thread still using it
        if entry is not None:
            entry.busy.acquire()
    try:
        yield entry
    finally:
        if entry is not None:
            entry.busy.release()


def execute(key: tuple, make: Callable[..., Primitive | None], buffers: dict) -> bool:
    """Run the primitive for `key` (see using) on `buffers`; False where oneDNN has no
    implementation for it."""
    with using(key, make) as prim:
        if prim is None:
            return False
        prim.run(buffers)
        return True


def create_pd(fn: Callable[..., int], *args: Any) -> Handle | None:
    """A primitive descriptor from fn(&pd, *args), or None where oneDNN has no
    implementation for these arguments."""
    pd = Handle()
    status = fn(ctypes.byref(pd), *args)
    if status in (UNIMPLEMENTED, 2):   # unimplemented, or a geometry it rejects
        return None
    check(status, getattr(fn, "__name__", "primitive_desc_create"))
    return pd


@contextmanager
def post_ops_attr(lib: ctypes.CDLL) -> Iterator[tuple[Handle, Handle]]:
    """(a primitive attribute, an empty post-ops list) for the block, which appends to the
    list and sets it on the attribute before making a descriptor with it (the descriptor
    keeps its own copy); both are destroyed afterwards."""
    attr, ops = Handle(), Handle()
    check(lib.dnnl_primitive_attr_create(ctypes.byref(attr)), "primitive_attr_create")
    try:
        check(lib.dnnl_post_ops_create(ctypes.byref(ops)), "post_ops_create")
        try:
            yield attr, ops
        finally:
            lib.dnnl_post_ops_destroy(ops)
    finally:
        lib.dnnl_primitive_attr_destroy(attr)


def with_mds(lib: ctypes.CDLL, shapes: Iterable[tuple], any_layout: bool,
             body: Callable[..., Any], dtype: int = F32) -> Any:
    """body(*memory descriptors of shapes, of oneDNN data type dtype), the descriptors
    freed afterwards."""
    mds = [_md(lib, s, any_layout, dtype=dtype) for s in shapes]
    try:
        return body(*mds)
    finally:
        for md in mds:
            lib.dnnl_memory_desc_destroy(md)


def usable(*arrays: np.ndarray) -> bool:
    return (available() and all(a.dtype == np.float32 for a in arrays)
            and all(a.size for a in arrays))
