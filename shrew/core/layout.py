"""torch.layout: how a tensor's elements are stored.  shrew's tensors are all strided;
the other layouts exist as names for the arguments that take them (layout=torch.jagged
is refused where nested tensors would be made)."""
from __future__ import annotations


class layout:  # noqa: N801  (torch's name)
    """One of torch's layouts (torch.strided, torch.jagged, ...)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self) -> str:
        return self.name  # pickles as the module-level singleton


strided = layout("strided")
jagged = layout("jagged")
