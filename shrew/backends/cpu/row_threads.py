"""Row-wise numpy work split over the cpu backend's threads.

numpy's ufuncs and reductions run on one thread but release the GIL over a large array,
so a computation made of them, row by row independent (a log-softmax along the last dim),
runs on several threads when each takes a block of rows: the same operations on the same
rows, so the same bits, in about half the time on two cores (a [700, 2000] log-softmax:
1.7 ms against 0.85).  The threads are as many as oneDNN's and MKL's (switches'
set_num_threads), each block at least ROW_BLOCK_MIN_SIZE elements.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from .switches import get_num_threads
from .thresholds import ROW_BLOCK_MIN_SIZE

_pool: tuple[int, ThreadPoolExecutor] | None = None   # (the process that made it, the pool)
_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    """The pool of helper threads, made on first use, and made anew in a forked child (a
    DataLoader worker): a child inherits the pool but not its threads, which would leave
    its work waiting forever."""
    global _pool
    with _lock:
        if _pool is None or _pool[0] != os.getpid():
            _pool = (os.getpid(), ThreadPoolExecutor(thread_name_prefix="shrew-rows"))
        return _pool[1]


def _threads() -> int:
    found = get_num_threads()
    return found if found is not None else len(os.sched_getaffinity(0))


def run(fn: Callable[[np.ndarray, np.ndarray], Any], x: np.ndarray, out: np.ndarray) -> None:
    """fn(x[block], out[block]) for blocks of x's rows (its dim 0), the first on this
    thread and the others on the pool's, each at least ROW_BLOCK_MIN_SIZE elements; one
    call over all of x where x is too small to split or one thread is set."""
    rows = x.shape[0] if x.ndim else 0
    blocks = min(_threads(), x.size // ROW_BLOCK_MIN_SIZE, rows)
    if blocks < 2:
        fn(x, out)
        return
    edges = [rows * k // blocks for k in range(blocks + 1)]
    pool = _executor()
    pending = [pool.submit(fn, x[a:b], out[a:b]) for a, b in zip(edges[1:-1], edges[2:])]
    fn(x[:edges[1]], out[:edges[1]])
    for done in pending:
        done.result()   # (raises what the block raised)
