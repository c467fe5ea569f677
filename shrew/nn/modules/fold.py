"""torch.nn.modules.fold: PyTorch's module path of shrew.nn's Fold and Unfold."""
from .. import Fold, Unfold

__all__ = ["Fold", "Unfold"]
