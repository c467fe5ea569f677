"""The ops, by family, named like the kernel files (backends/kernels/<family>.cl).

A family of one module is ops/<family>.py (creation, random, cast, reduce, scan, sort, conv,
pool, norm, attention).  A larger family is a folder ops/<family>/ that keeps the recorded
ops apart from the composed ones: recorded.py holds the ops recorded as one Op variant each
(one backend primitive), composed.py the functions built from them, differentiated through
their parts: elementwise/, shape/, index/ (with subscript.py: x[key]).  In linalg/,
matmul.py and decompositions.py record, products.py, composed.py and einsum.py are built on
them (composed.py's pinv alone records a Decomposition, for its own gradient).

common.py holds the checks every family shares, saved.py what each node saves for
backward, inplace.py the in-place writes.

Each module holds its ops' argument checks and the recording of their Op variant; Tensor
methods (shrew/methods/) and the ``shrew.*`` functions are one-line calls into them.  No
gradient rule lives here: they are in shrew/autograd/engine.py's `match` and
autograd/rules/<family>.py, in the same family order.
"""
