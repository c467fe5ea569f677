"""Neural-network layers, their functional forms (shrew.nn.functional) and initialisers."""
from . import functional, init, utils
from .activation import (CELU, ELU, GELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish,
                         Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax, Mish, PReLU, ReLU, ReLU6,
                         Sigmoid, SiLU, Softmax, Softmax2d, Softmin, Softplus, Softshrink,
                         Softsign, Tanh, Tanhshrink, Threshold)
from .attention import MultiheadAttention, TransformerBlock
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .layers import (AlphaDropout, AvgPool2d, Dropout, Dropout1d, Dropout2d,
                     Dropout3d, Embedding, EmbeddingBag, FeatureAlphaDropout, Flatten, Identity,
                     Linear, MaxPool2d, PixelShuffle, PixelUnshuffle, Unflatten, Upsample)
from .loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, CTCLoss,
                   GaussianNLLLoss, HingeEmbeddingLoss, HuberLoss, KLDivLoss, L1Loss,
                   MarginRankingLoss, MSELoss, MultiLabelSoftMarginLoss, MultiMarginLoss,
                   NLLLoss, PoissonNLLLoss, SmoothL1Loss, SoftMarginLoss, TripletMarginLoss)
from .module import Module, RemovableHandle
from .normalization import (BatchNorm1d, BatchNorm2d, GroupNorm, InstanceNorm1d, InstanceNorm2d,
                            LayerNorm, LocalResponseNorm, RMSNorm)
from .parameter import Parameter
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,
                          TransformerEncoder, TransformerEncoderLayer)
from . import parallel  # noqa: E402, F401  (DistributedDataParallel: built on the above)

__all__ = [
    "functional", "init", "utils", "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell",
    "LSTMCell", "GRUCell", "Module", "RemovableHandle", "Sequential", "ModuleList", "ModuleDict",
    "ParameterList", "ParameterDict", "Parameter", "Linear", "Conv1d",
    "Conv2d", "ConvTranspose1d", "ConvTranspose2d",
    "Embedding", "MaxPool2d", "AvgPool2d", "Dropout", "Flatten", "Unflatten",
    "Identity", "LayerNorm", "BatchNorm2d", "MultiheadAttention", "TransformerBlock",
    "AlphaDropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout", "EmbeddingBag",
    "PixelShuffle", "PixelUnshuffle", "Upsample", "BatchNorm1d", "GroupNorm", "InstanceNorm1d",
    "InstanceNorm2d", "LocalResponseNorm", "RMSNorm",
    "Transformer", "TransformerEncoder", "TransformerEncoderLayer", "TransformerDecoder",
    "TransformerDecoderLayer",
    # activations
    "CELU", "ELU", "GELU", "GLU", "SELU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh",
    "LeakyReLU", "LogSigmoid", "LogSoftmax", "Mish", "PReLU", "ReLU", "ReLU6", "Sigmoid",
    "SiLU", "Softmax", "Softmax2d", "Softmin", "Softplus", "Softshrink", "Softsign", "Tanh",
    "Tanhshrink", "Threshold",
    # losses
    "BCELoss", "BCEWithLogitsLoss", "CosineEmbeddingLoss", "CrossEntropyLoss", "CTCLoss",
    "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "L1Loss",
    "MarginRankingLoss", "MSELoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss", "NLLLoss",
    "PoissonNLLLoss", "SmoothL1Loss", "SoftMarginLoss", "TripletMarginLoss",
]
