"""``shrew.jit.annotations``: the typing names TorchScript code imports from
torch.jit.annotations (they are typing's own)."""
from typing import Any, Callable, Dict, List, Optional, Tuple, Union  # noqa: UP035

__all__ = ["Any", "Callable", "Dict", "List", "Optional", "Tuple", "Union"]
