"""torch.nn.modules.activation: PyTorch's module path of shrew.nn's activations
and multi-head attention."""
from .. import (CELU, ELU, GELU, GLU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU,
                 LogSigmoid, LogSoftmax, Mish, PReLU, ReLU, ReLU6, SELU, SiLU, Sigmoid,
                 Softmax, Softmax2d, Softmin, Softplus, Softshrink, Softsign, Tanh,
                 Tanhshrink, Threshold, MultiheadAttention)

__all__ = ["CELU", "ELU", "GELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh",
           "LeakyReLU", "LogSigmoid", "LogSoftmax", "Mish", "PReLU", "ReLU", "ReLU6",
           "SELU", "SiLU", "Sigmoid", "Softmax", "Softmax2d", "Softmin", "Softplus",
           "Softshrink", "Softsign", "Tanh", "Tanhshrink", "Threshold",
           "MultiheadAttention"]
