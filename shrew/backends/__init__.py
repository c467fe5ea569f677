"""Device backends: each implements the primitive kernels of ``base.Backend``."""
