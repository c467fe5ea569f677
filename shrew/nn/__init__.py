"""Neural-network layers, their functional forms (shrew.nn.functional) and initialisers."""
from . import functional, init
from .attention import MultiheadAttention, TransformerBlock
from .layers import (GELU, AvgPool2d, Conv1d, Conv2d, Dropout, Embedding, Flatten, Linear,
                     MaxPool2d, ReLU)
from .module import Module, Sequential
from .normalization import BatchNorm2d, LayerNorm
from .parameter import Parameter, add_, assign_
from . import parallel  # noqa: E402, F401  (DistributedDataParallel: built on the above)

__all__ = [
    "functional", "init", "Module", "Sequential", "Parameter", "assign_", "add_", "Linear",
    "Conv1d", "Conv2d", "Embedding", "MaxPool2d", "AvgPool2d", "Dropout", "ReLU", "GELU", "Flatten",
    "LayerNorm", "BatchNorm2d", "MultiheadAttention", "TransformerBlock",
]
