"""shrew.linalg: PyTorch's torch.linalg."""
from __future__ import annotations

# -- vector norms and the Frobenius norm (ops/reduce.py) -------------------------------------
from .ops.reduce import linalg_norm as norm
from .ops.reduce import vector_norm

__all__ = ["norm", "vector_norm"]
