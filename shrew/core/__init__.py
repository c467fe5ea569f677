"""The layer below Tensor, importing nothing above it: the Op variants (op.py), a tensor's
fields and the one place that builds a Tensor (fields.py), shapes and every output-size
formula (shape.py), dtypes and promotion (dtype.py), the exceptions (errors.py) and the
grad mode switches (grad_mode.py)."""
