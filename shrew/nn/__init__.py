"""Neural-network layers (nn/modules/, each in the file where PyTorch keeps it), their
functional forms (shrew.nn.functional) and initialisers."""
from . import functional, init, utils
from .modules import (GRU, LSTM, RNN, CELU, ELU, GELU, GLU, SELU, AdaptiveAvgPool1d,
                      AdaptiveAvgPool2d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AlphaDropout,
                      AvgPool1d, AvgPool2d, BatchNorm1d, BatchNorm2d, BCELoss,
                      BCEWithLogitsLoss, Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d,
                      CosineEmbeddingLoss, CrossEntropyLoss, CTCLoss, Dropout, Dropout1d,
                      Dropout2d, Dropout3d, Embedding, EmbeddingBag, FeatureAlphaDropout,
                      Flatten, Fold, GaussianNLLLoss, GroupNorm, GRUCell, Hardshrink,
                      Hardsigmoid, Hardswish, Hardtanh, HingeEmbeddingLoss, HuberLoss, Identity,
                      InstanceNorm1d, InstanceNorm2d, KLDivLoss, L1Loss, LayerNorm, LeakyReLU,
                      Linear, LocalResponseNorm, LogSigmoid, LogSoftmax, LSTMCell,
                      MarginRankingLoss, MaxPool1d, MaxPool2d, MaxUnpool1d, MaxUnpool2d, Mish,
                      Module, ModuleDict, ModuleList, MSELoss, MultiheadAttention,
                      MultiLabelSoftMarginLoss, MultiMarginLoss, NLLLoss, ParameterDict,
                      ParameterList, PixelShuffle, PixelUnshuffle, PoissonNLLLoss, PReLU, ReLU,
                      ReLU6, RMSNorm, RNNBase, RNNCell, RNNCellBase, Sequential, Sigmoid, SiLU,
                      SmoothL1Loss, Softmax, Softmax2d, Softmin, Softplus, Softshrink, Softsign,
                      SoftMarginLoss, Tanh, Tanhshrink, Threshold, Transformer,
                      TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
                      TransformerEncoderLayer, TripletMarginLoss, Unflatten, Unfold, Upsample)
from .modules import (AdaptiveAvgPool3d, AdaptiveMaxPool3d, AvgPool3d, BatchNorm3d, Conv3d,
                      ConvTranspose3d, InstanceNorm3d, MaxPool3d, MaxUnpool3d)
from .modules.padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d,
                              ConstantPad2d, ConstantPad3d, ReflectionPad1d, ReflectionPad2d,
                              ReflectionPad3d, ReplicationPad1d, ReplicationPad2d,
                              ReplicationPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d)
from .modules.module import RemovableHandle
from .modules.upsampling import UpsamplingBilinear2d, UpsamplingNearest2d  # sampling layers
from .modules.transformer import TransformerBlock
from .parameter import Parameter
from . import parallel  # noqa: E402, F401  (DistributedDataParallel: built on the above)
# API gaps (issue 30): DataParallel (runs the module) and nn.attention's sdpa_kernel
from .parallel import DataParallel  # noqa: E402
from . import attention  # noqa: E402
# API coverage (scripts/api_coverage.py): batch norm over the process group
from .modules.batchnorm import SyncBatchNorm  # noqa: E402

__all__ = [
    "functional", "init", "utils", "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell",
    "LSTMCell", "GRUCell", "Module", "RemovableHandle", "Sequential", "ModuleList", "ModuleDict",
    "ParameterList", "ParameterDict", "Parameter", "Linear", "Conv1d",
    "Conv2d", "ConvTranspose1d", "ConvTranspose2d",
    "Embedding", "MaxPool2d", "AvgPool2d", "Dropout", "Flatten", "Unflatten",
    "Identity", "LayerNorm", "BatchNorm2d", "MultiheadAttention", "TransformerBlock",
    "AlphaDropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout", "EmbeddingBag",
    "PixelShuffle", "PixelUnshuffle", "Upsample", "BatchNorm1d", "GroupNorm", "InstanceNorm1d",
    "InstanceNorm2d", "LocalResponseNorm", "RMSNorm", "SyncBatchNorm",
    "Transformer", "TransformerEncoder", "TransformerEncoderLayer", "TransformerDecoder",
    "TransformerDecoderLayer",
    # pooling and patches
    "MaxPool1d", "AvgPool1d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d", "MaxUnpool1d", "MaxUnpool2d", "Fold", "Unfold",
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
    # sampling layers
    "UpsamplingBilinear2d", "UpsamplingNearest2d",
    # padding
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
    "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
    "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
    # API gaps (issue 30)
    "DataParallel", "attention",
    # 3-d convolution, pooling and normalisation
    "Conv3d", "ConvTranspose3d", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d",
    "AdaptiveMaxPool3d", "MaxUnpool3d", "BatchNorm3d", "InstanceNorm3d",
]
