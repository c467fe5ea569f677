"""Learning-rate schedules, as torch.optim.lr_scheduler: each changes `group["lr"]` (and,
for OneCycleLR / CyclicLR, the momentum or beta1) of its optimizer's parameter groups.

The schedules update recursively from the groups' current values, as PyTorch's do, so
that several of them chained on one optimizer (ChainedScheduler) compose the same way;
`step(epoch)` uses the closed form where there is one."""
from .base import LRScheduler
from .combined import ChainedScheduler, SequentialLR
from .cyclic import CyclicLR, OneCycleLR
from .plateau import ReduceLROnPlateau
from .schedules import (ConstantLR, CosineAnnealingLR, CosineAnnealingWarmRestarts, ExponentialLR,
                        LambdaLR, LinearLR, MultiplicativeLR, MultiStepLR, PolynomialLR, StepLR)

__all__ = ["LRScheduler", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
           "CosineAnnealingWarmRestarts", "OneCycleLR", "CyclicLR", "LambdaLR",
           "MultiplicativeLR", "LinearLR", "ConstantLR", "PolynomialLR", "SequentialLR",
           "ChainedScheduler", "ReduceLROnPlateau"]
