"""``shrew.backends.opt_einsum``: torch.backends.opt_einsum's switches.  PyTorch uses the
opt_einsum package, where installed, to choose the order of an einsum's contractions;
shrew's einsum contracts pairwise from left to right (PyTorch's order without it), so
`enabled` and `strategy` are kept for programs that read or set them and change nothing."""
from __future__ import annotations

from importlib.util import find_spec


def is_available() -> bool:
    """Whether the opt_einsum package is installed."""
    return find_spec("opt_einsum") is not None


enabled: bool = is_available()
strategy: str | None = "auto" if enabled else None
