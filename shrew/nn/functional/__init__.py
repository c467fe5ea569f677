"""Stateless building blocks: layers as functions, activations, attention, losses.

Everything is written with Tensor operations, so it runs on any device and backward comes
from the core's gradient rules.  Inputs are checked before any kernel runs, and errors name
the function and the shapes or dtypes at fault.  `import shrew.nn.functional as F`.

Each family's functions sit in the file torch.nn.modules names for that family (conv.py:
conv2d, as nn.modules.conv: Conv2d; distance.py and padding.py too, though shrew has no
layers there); attention.py (scaled dot-product attention) and ctc.py (ctc_loss, which
loss.py re-exports) stand apart, beside the private helpers _checks.py and _reduction.py."""
from .activation import (celu, elu, gelu, glu, gumbel_softmax, hardshrink, hardsigmoid,
                         hardswish, hardtanh, leaky_relu, log_softmax, logsigmoid, mish, prelu,
                         relu, relu6, selu, sigmoid, silu, softmax, softmin, softplus,
                         softshrink, softsign, tanh, tanhshrink, threshold)
from .attention import scaled_dot_product_attention
from .batchnorm import batch_norm
from .conv import conv1d, conv2d, conv_transpose1d, conv_transpose2d
from .conv import conv3d, conv_transpose3d
from .distance import cosine_similarity, pairwise_distance
from .dropout import (alpha_dropout, dropout, dropout1d, dropout2d, dropout3d,
                      feature_alpha_dropout)
from .fold import fold, unfold
from .instancenorm import instance_norm
from .linear import linear
from .loss import (binary_cross_entropy, binary_cross_entropy_with_logits, ctc_loss,
                   cosine_embedding_loss, cross_entropy, gaussian_nll_loss, hinge_embedding_loss,
                   huber_loss, kl_div, l1_loss, margin_ranking_loss, mse_loss,
                   multi_margin_loss, multilabel_soft_margin_loss, nll_loss,
                   poisson_nll_loss, smooth_l1_loss, soft_margin_loss, triplet_margin_loss)
from .normalization import group_norm, layer_norm, local_response_norm, normalize, rms_norm
from .padding import pad
from .pixelshuffle import pixel_shuffle, pixel_unshuffle
from .sampling import affine_grid, grid_sample
from .pooling import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_max_pool1d,
                      adaptive_max_pool2d, avg_pool1d, avg_pool2d, max_pool1d, max_pool2d,
                      max_unpool1d, max_unpool2d)
from .pooling import (adaptive_avg_pool3d, adaptive_max_pool3d, avg_pool3d, max_pool3d,
                      max_unpool3d)
from .sparse import embedding, embedding_bag, one_hot
from .upsampling import interpolate, upsample, upsample_bilinear, upsample_nearest
# the OpInfo functions and API coverage (issue 30)
from .activation import rrelu
from .attention import multi_head_attention_forward
from .distance import pdist
from .linear import bilinear
from .loss import linear_cross_entropy, multilabel_margin_loss, triplet_margin_with_distance_loss
from .pixelshuffle import channel_shuffle
from .pooling import fractional_max_pool2d

__all__ = [
    "celu", "elu", "gelu", "glu", "hardshrink", "hardsigmoid", "hardswish", "hardtanh",
    "leaky_relu", "log_softmax", "logsigmoid", "mish", "prelu", "relu", "relu6", "selu",
    "sigmoid", "silu", "softmax", "softmin", "softplus", "softshrink", "softsign", "tanh",
    "tanhshrink", "threshold", "scaled_dot_product_attention", "avg_pool2d", "batch_norm",
    "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d",
    "dropout", "embedding", "layer_norm", "linear", "max_pool2d",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "cosine_embedding_loss",
    "cross_entropy", "gaussian_nll_loss", "hinge_embedding_loss", "huber_loss", "kl_div",
    "l1_loss", "margin_ranking_loss", "mse_loss", "multi_margin_loss",
    "multilabel_soft_margin_loss", "nll_loss", "pairwise_distance", "poisson_nll_loss",
    "smooth_l1_loss", "soft_margin_loss", "triplet_margin_loss", "ctc_loss", "cosine_similarity",
    "group_norm", "instance_norm", "local_response_norm", "normalize", "rms_norm", "embedding",
    "embedding_bag", "one_hot", "alpha_dropout", "dropout1d", "dropout2d", "dropout3d",
    "feature_alpha_dropout", "interpolate", "pad", "pixel_shuffle", "pixel_unshuffle",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "avg_pool1d", "fold", "max_pool1d", "max_unpool1d", "max_unpool2d", "unfold",
    "gumbel_softmax",
    # sampling layers (sampling.py, upsampling.py)
    "affine_grid", "grid_sample", "upsample", "upsample_bilinear", "upsample_nearest",
    # 3-d convolution and pooling
    "conv3d", "conv_transpose3d", "max_pool3d", "avg_pool3d", "adaptive_avg_pool3d",
    "adaptive_max_pool3d", "max_unpool3d",
    # the OpInfo functions and API coverage (issue 30)
    "rrelu", "multi_head_attention_forward", "pdist", "bilinear", "multilabel_margin_loss",
    "triplet_margin_with_distance_loss", "channel_shuffle", "fractional_max_pool2d",
    "linear_cross_entropy",
]
