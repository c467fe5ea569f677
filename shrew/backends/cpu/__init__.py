"""The CPU backend: numpy.  The reference every other backend is tested against."""
import numpy as np

from ..host_memory import keep_freed_memory
from ..array_module import ArrayModuleBackend

# Below this many elements numpy's own where is as fast.
_SELECT_MIN_SIZE = 1 << 14


class CPUBackend(ArrayModuleBackend):
    """numpy arrays as storage; float64 here is the ground truth of every test."""

    def __init__(self, index: int = 0):
        super().__init__("cpu")
        keep_freed_memory()

    def where(self, cond, a, b):
        # numpy.where branches on every element: on a mask without a pattern (relu's
        # backward, dropout) it runs about 10x slower than selecting the bit patterns,
        # b ^ ((a ^ b) & mask) with mask all ones where cond holds, which is exact too.
        size = a.dtype.itemsize
        if size not in (2, 4, 8) or max(cond.size, a.size, b.size) < _SELECT_MIN_SIZE:
            return np.where(cond, a, b)
        bits = np.dtype(f"i{size}")
        a_bits, b_bits = a.view(bits), b.view(bits)
        mask = cond.astype(bits)
        if b.ndim == 0 and not b_bits:  # a or +0 (relu's backward, dropout): a & mask
            np.negative(mask, out=mask)
            return np.bitwise_and(a_bits, mask).view(a.dtype)
        if a.ndim == 0 and not a_bits:  # +0 or b: b & ~mask
            mask -= 1
            return np.bitwise_and(b_bits, mask).view(a.dtype)
        np.negative(mask, out=mask)
        out = np.bitwise_xor(a_bits, b_bits, dtype=bits)
        out = np.broadcast_to(out, np.broadcast_shapes(out.shape, mask.shape)) & mask
        out ^= b_bits
        return out.view(a.dtype)


def factory(index: int = 0) -> CPUBackend:
    if index != 0:
        raise RuntimeError("there is one CPU device; call it 'cpu'")
    return CPUBackend(index)


factory.device_count = lambda: 1  # type: ignore[attr-defined]
