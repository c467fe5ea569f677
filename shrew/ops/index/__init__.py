"""The index family: recorded.py holds the primitives (gather, scatter_add, scatter; index.cl
on OpenCL and CUDA); composed.py holds torch's index functions built on them; subscript.py
holds x[key] and x[key] = value."""
