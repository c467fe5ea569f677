"""The elementwise family: recorded.py holds the ops recorded as one Op variant each (unary
functions, arithmetic with broadcasting, powers, clamp, comparisons, where; elementwise.cl
on OpenCL and CUDA); composed.py holds PyTorch's pointwise functions built from them."""
