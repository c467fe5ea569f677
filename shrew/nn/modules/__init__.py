"""torch.nn.modules: shrew.nn's layers, each in the file where PyTorch keeps it
(`shrew.nn.modules.linear.Linear` is `shrew.nn.Linear`); shrew.nn imports them from here.
A saved whole module names its class by this path."""
from .activation import (CELU, ELU, GELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish,
                         Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax, Mish, MultiheadAttention,
                         PReLU, ReLU, ReLU6, Sigmoid, SiLU, Softmax, Softmax2d, Softmin, Softplus,
                         Softshrink, Softsign, Tanh, Tanhshrink, Threshold)
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d, SyncBatchNorm
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .dropout import (AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d,
                      FeatureAlphaDropout)
from .flatten import Flatten, Unflatten
from .fold import Fold, Unfold
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .linear import Identity, Linear
from .loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, CTCLoss,
                   GaussianNLLLoss, HingeEmbeddingLoss, HuberLoss, KLDivLoss, L1Loss,
                   MarginRankingLoss, MSELoss, MultiLabelSoftMarginLoss, MultiMarginLoss,
                   NLLLoss, PoissonNLLLoss, SmoothL1Loss, SoftMarginLoss, TripletMarginLoss)
from .module import Module
from .normalization import GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm
from .padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d,
                      ConstantPad2d, ConstantPad3d, ReflectionPad1d, ReflectionPad2d,
                      ReflectionPad3d, ReplicationPad1d, ReplicationPad2d,
                      ReplicationPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d)
from .pixelshuffle import PixelShuffle, PixelUnshuffle
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveMaxPool1d, AdaptiveMaxPool2d,
                      AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d, MaxUnpool1d, MaxUnpool2d)
from .pooling import (AdaptiveAvgPool3d, AdaptiveMaxPool3d, AvgPool3d, MaxPool3d,
                      MaxUnpool3d)
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .sparse import Embedding, EmbeddingBag
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,
                          TransformerEncoder, TransformerEncoderLayer)
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = [
    "Module", "Identity", "Linear", "Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d",
    "CELU", "ELU", "GELU", "GLU", "SELU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh",
    "LeakyReLU", "LogSigmoid", "LogSoftmax", "Mish", "MultiheadAttention", "PReLU", "ReLU",
    "ReLU6", "Sigmoid", "SiLU", "Softmax", "Softmax2d", "Softmin", "Softplus", "Softshrink",
    "Softsign", "Tanh", "Tanhshrink", "Threshold",
    "BCELoss", "BCEWithLogitsLoss", "CosineEmbeddingLoss", "CrossEntropyLoss", "CTCLoss",
    "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "L1Loss",
    "MarginRankingLoss", "MSELoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss", "NLLLoss",
    "PoissonNLLLoss", "SmoothL1Loss", "SoftMarginLoss", "TripletMarginLoss",
    "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
    "AlphaDropout", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout",
    "Embedding", "EmbeddingBag", "Flatten", "Unflatten", "Fold", "Unfold",
    "BatchNorm1d", "BatchNorm2d", "SyncBatchNorm", "InstanceNorm1d", "InstanceNorm2d",
    "GroupNorm", "LayerNorm", "LocalResponseNorm", "RMSNorm",
    "PixelShuffle", "PixelUnshuffle", "Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
    "AvgPool1d", "AvgPool2d", "MaxPool1d", "MaxPool2d", "MaxUnpool1d", "MaxUnpool2d",
    "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell",
    "Transformer", "TransformerEncoder", "TransformerEncoderLayer", "TransformerDecoder",
    "TransformerDecoderLayer",
    # padding
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
    "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
    "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
    # 3-d convolution, pooling and normalisation
    "Conv3d", "ConvTranspose3d", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d",
    "AdaptiveMaxPool3d", "MaxUnpool3d", "BatchNorm3d", "InstanceNorm3d",
]
