"""The random-number state that the OpenCL and CUDA backends share.

random.cl turns (key, counter) into numbers with Philox4x32-10, counter-based: a block
yields 4 floats or 2 doubles.  The state is the seed and the number of blocks used, so the
same seed gives the same numbers on both backends, and a snapshot restores exactly."""
from __future__ import annotations

import math
import threading
from typing import TYPE_CHECKING, Any

import numpy as np

from ..base import Storage


class PhiloxRNG:
    """Mixin: manual_seed, rand, randn and the state snapshots of the Backend protocol.
    The backend supplies `_empty(shape, dtype)` and `_launch_random(name, dtype, blocks,
    args, out)`, which runs random.cl's kernel `name` over `blocks` Philox blocks."""

    _seed = 0
    _counter = 0
    _rng_lock = threading.Lock()  # one state update at a time; draws are short

    if TYPE_CHECKING:  # what the backend supplies
        def _empty(self, shape: tuple, dtype: np.dtype) -> Any: ...
        def _launch_random(self, name: str, dtype: np.dtype, blocks: int, args: tuple,
                           out: Any) -> None: ...

    def manual_seed(self, seed: int) -> None:
        with self._rng_lock:
            self._seed, self._counter = int(seed), 0

    def _random(self, name: str, shape: tuple, dtype: np.dtype) -> Storage:
        dtype = np.dtype(dtype)
        out = self._empty(tuple(shape), dtype)
        size = math.prod(shape)
        if size:
            blocks = -(-size // (2 if dtype.itemsize == 8 else 4))
            with self._rng_lock:
                key = self._seed % 2**64
                args = (np.int64(size), np.uint32(key & 0xFFFFFFFF), np.uint32(key >> 32),
                        np.uint64(self._counter))
                self._launch_random(name, dtype, blocks, args, out)
                self._counter = (self._counter + blocks) % 2**64
        return out

    def rand(self, shape: tuple, dtype: np.dtype) -> Storage:
        return self._random("rand_uniform", shape, dtype)

    def randn(self, shape: tuple, dtype: np.dtype) -> Storage:
        return self._random("rand_normal", shape, dtype)

    def get_rng_state(self) -> Any:
        return (self._seed, self._counter)

    def set_rng_state(self, state: Any) -> None:
        with self._rng_lock:
            self._seed, self._counter = int(state[0]), int(state[1])
