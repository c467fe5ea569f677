"""The ops, one module per family, named like the kernel files (backends/kernels/*.cl).

Each module holds its ops' argument checks and the recording of their Op variant; Tensor
methods and the ``shrew.*`` functions are one-line calls into them.  Gradient rules live
in shrew/autograd/engine.py, in the same family order.
"""
