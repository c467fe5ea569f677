"""torch.nn.modules.container: PyTorch's module path of shrew.nn's containers."""
from .. import (Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict)

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]
