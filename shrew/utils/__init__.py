"""Utilities in PyTorch's `torch.utils` layout (`shrew.utils.data`, `shrew.utils.checkpoint`)."""
from . import checkpoint, data
from . import mobile_optimizer, model_zoo  # API coverage (scripts/api_coverage.py)

__all__ = ["checkpoint", "data", "mobile_optimizer", "model_zoo"]
