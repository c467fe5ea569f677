"""Tensor methods by op family, as mixins of shrew.tensor.Tensor: each method is a one-line
call into shrew/ops, as in _tensor.py itself (or the ops function itself, where it takes the
tensor first: methods/reduce.py).

`self` is always a Tensor, the one class using these mixins, and is annotated `Any`: mypy
accepts no subclass as a mixin's self type (`self: Tensor` needs a type: ignore[misc] on
every method), and the return and other argument types are checked as usual."""
