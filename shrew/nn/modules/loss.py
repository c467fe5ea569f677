"""torch.nn.modules.loss: PyTorch's module path of shrew.nn's losses."""
from .. import (BCELoss, BCEWithLogitsLoss, CTCLoss, CosineEmbeddingLoss, CrossEntropyLoss,
                 GaussianNLLLoss, HingeEmbeddingLoss, HuberLoss, KLDivLoss, L1Loss,
                 MSELoss, MarginRankingLoss, MultiLabelSoftMarginLoss, MultiMarginLoss,
                 NLLLoss, PoissonNLLLoss, SmoothL1Loss, SoftMarginLoss,
                 TripletMarginLoss)

__all__ = ["BCELoss", "BCEWithLogitsLoss", "CTCLoss", "CosineEmbeddingLoss", "CrossEntropyLoss",
           "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "L1Loss",
           "MSELoss", "MarginRankingLoss", "MultiLabelSoftMarginLoss",
           "MultiMarginLoss", "NLLLoss", "PoissonNLLLoss", "SmoothL1Loss",
           "SoftMarginLoss", "TripletMarginLoss"]
