"""torch.sparse: operations on sparse COO tensors (shrew/ops/sparse).  Make one with
shrew.sparse_coo_tensor(indices, values, size) or dense.to_sparse()."""
from .ops.sparse.coo import SparseTensor
from .ops.sparse.products import addmm, log_softmax, mm, softmax
from .ops.sparse.products import sparse_sum as sum  # noqa: A004  (torch.sparse.sum)

__all__ = ["SparseTensor", "addmm", "log_softmax", "mm", "softmax", "sum"]
