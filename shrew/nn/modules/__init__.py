"""torch.nn.modules: PyTorch's module paths of shrew.nn's classes
(`shrew.nn.modules.linear.Linear` is `shrew.nn.Linear`), for programs that name them,
for instance in a shrew.serialization allowlist."""
from . import (module, linear, conv, activation, loss, container, dropout, sparse, normalization,
               batchnorm, instancenorm, rnn, transformer, pooling, flatten,
               pixelshuffle, upsampling, fold)

__all__ = ["module", "linear", "conv", "activation", "loss", "container", "dropout",
           "sparse", "normalization", "batchnorm", "instancenorm", "rnn", "transformer",
           "pooling", "flatten", "pixelshuffle", "upsampling", "fold"]
