"""Loss modules: each holds its options and applies the function of the same name in
shrew.nn.functional.  Class weights (weight, pos_weight) are buffers, as in PyTorch: they
move with to() and are saved in state_dict."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..._tensor import Tensor
from .. import functional as F
from ..functional._reduction import _reduction
from .module import Module


__all__ = ["BCELoss", "BCEWithLogitsLoss", "CTCLoss", "CosineEmbeddingLoss", "CrossEntropyLoss",
           "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "L1Loss", "MSELoss",
           "MarginRankingLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss", "NLLLoss",
           "PoissonNLLLoss", "SmoothL1Loss", "SoftMarginLoss", "TripletMarginLoss"]


class _Loss(Module):
    """Applies `function(*inputs, **options)`; the options are the __init__ arguments,
    tensors among them registered as buffers."""

    function: Callable[..., Tensor]
    extra_reductions: tuple[str, ...] = ()

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 **options: Any) -> None:
        super().__init__()
        self.reduction = _reduction(type(self).__name__, size_average, reduce, reduction,
                                    self.extra_reductions)
        self._options = list(options)
        for name, value in options.items():
            if isinstance(value, Tensor) or (value is None and name.endswith("weight")):
                self.register_buffer(name, value)
            else:
                setattr(self, name, value)

    def forward(self, *inputs: Tensor) -> Tensor:
        options = {n: getattr(self, n) for n in self._options}
        return type(self).function(*inputs, reduction=self.reduction, **options)


class L1Loss(_Loss):
    function = F.l1_loss


class MSELoss(_Loss):
    function = F.mse_loss


class SmoothL1Loss(_Loss):
    function = F.smooth_l1_loss

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction, beta=beta)


class HuberLoss(_Loss):
    function = F.huber_loss

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction, delta=delta)


class NLLLoss(_Loss):
    function = F.nll_loss

    def __init__(self, weight: Tensor | None = None, size_average: Any = None,
                 ignore_index: int = -100, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction, weight=weight,
                         ignore_index=ignore_index)


class CrossEntropyLoss(_Loss):
    function = F.cross_entropy

    def __init__(self, weight: Tensor | None = None, size_average: Any = None,
                 ignore_index: int = -100, reduce: Any = None, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        super().__init__(size_average, reduce, reduction, weight=weight,
                         ignore_index=ignore_index, label_smoothing=label_smoothing)


class BCELoss(_Loss):
    function = F.binary_cross_entropy

    def __init__(self, weight: Tensor | None = None, size_average: Any = None,
                 reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction, weight=weight)


class BCEWithLogitsLoss(_Loss):
    function = F.binary_cross_entropy_with_logits

    def __init__(self, weight: Tensor | None = None, size_average: Any = None,
                 reduce: Any = None, reduction: str = "mean",
                 pos_weight: Tensor | None = None) -> None:
        super().__init__(size_average, reduce, reduction, weight=weight, pos_weight=pos_weight)


class KLDivLoss(_Loss):
    function = F.kl_div
    extra_reductions = ("batchmean",)

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction, log_target=log_target)


class PoissonNLLLoss(_Loss):
    function = F.poisson_nll_loss

    def __init__(self, log_input: bool = True, full: bool = False, size_average: Any = None,
                 eps: float = 1e-8, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction, log_input=log_input, full=full,
                         eps=eps)


class GaussianNLLLoss(_Loss):
    function = F.gaussian_nll_loss

    def __init__(self, *, full: bool = False, eps: float = 1e-6,
                 reduction: str = "mean") -> None:
        super().__init__(reduction=reduction, full=full, eps=eps)


class SoftMarginLoss(_Loss):
    function = F.soft_margin_loss


class MultiLabelSoftMarginLoss(_Loss):
    function = F.multilabel_soft_margin_loss

    def __init__(self, weight: Tensor | None = None, size_average: Any = None,
                 reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction, weight=weight)


class MultiMarginLoss(_Loss):
    function = F.multi_margin_loss

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                 size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction, p=p, margin=margin, weight=weight)


class MarginRankingLoss(_Loss):
    function = F.margin_ranking_loss

    def __init__(self, margin: float = 0.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction, margin=margin)


class HingeEmbeddingLoss(_Loss):
    function = F.hinge_embedding_loss

    def __init__(self, margin: float = 1.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction, margin=margin)


class CosineEmbeddingLoss(_Loss):
    function = F.cosine_embedding_loss

    def __init__(self, margin: float = 0.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction, margin=margin)


class TripletMarginLoss(_Loss):
    function = F.triplet_margin_loss

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                 swap: bool = False, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction, margin=margin, p=p, eps=eps,
                         swap=swap)


class CTCLoss(_Loss):
    function = F.ctc_loss

    def __init__(self, blank: int = 0, reduction: str = "mean",
                 zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction, blank=blank, zero_infinity=zero_infinity)
