"""torch.signal's counterpart: the window functions of shrew.signal.windows."""
from . import windows

__all__ = ["windows"]
