"""Complex tensors (complex64, complex128) over real pairs.

A complex tensor (``pair.ComplexTensor``) holds a real tensor of its shape plus a trailing
dim of 2, its "pair" (real part, imaginary part), in the matching float dtype.  Every
complex op is a composition of real ops on pairs (``arith.py``; the FFT primitive works on
pairs too), so each backend runs complex numbers with the kernels it has, and autograd over
the pairs gives PyTorch's convention for complex gradients by itself: a real loss's
gradient pair is (dL/dRe, dL/dIm), i.e. the complex gradient dL/dRe + i dL/dIm.
docs/architecture.md ("Complex numbers") says more.
"""
