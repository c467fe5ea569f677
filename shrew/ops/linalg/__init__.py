"""The linear-algebra family: matmul.py holds the one recorded product (matmul.cl on OpenCL,
cuBLAS on CUDA); products.py the products composed from it (mm, bmm, the add* family, ...);
decompositions.py the solvers and factorizations, one backend ``linalg`` call each;
composed.py the torch.linalg functions built from those; einsum.py einsum."""
