"""Tensor methods by op family, as mixins of shrew.tensor.Tensor: each method is a one-line
call into shrew/ops, as in _tensor.py itself."""
