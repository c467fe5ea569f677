"""Device backends: each implements the primitive kernels of ``base.Backend``."""

from . import cuda, cudnn, mps, opencl  # noqa: E402,F401  (shrew.backends.cudnn etc., as in PyTorch)
from . import opt_einsum  # noqa: E402,F401  (torch.backends.opt_einsum's switches)
