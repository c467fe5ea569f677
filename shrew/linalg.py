"""torch.linalg's counterpart.

Products (ops/products.py): matmul, cross, multi_dot, matrix_power."""
from __future__ import annotations

from .ops.linalg import matmul
from .ops.products import linalg_cross as cross, matrix_power, multi_dot

__all__ = ["matmul", "cross", "multi_dot", "matrix_power"]
