"""torch.nn.modules.linear: PyTorch's module path of shrew.nn's linear layers."""
from .. import (Identity, Linear)

# PyTorch's MultiheadAttention.out_proj class, a Linear by another name there too
NonDynamicallyQuantizableLinear = Linear

__all__ = ["Identity", "Linear", "NonDynamicallyQuantizableLinear"]
