"""torch.layout: how a tensor's elements are stored.  shrew.strided is every dense tensor's;
shrew.sparse_coo is a sparse tensor's (shrew/ops/sparse: coordinates and values);
shrew.jagged names nested tensors' layout, which shrew refuses (shrew.nested)."""
from __future__ import annotations


class layout:  # noqa: N801  (torch's class name)
    """A storage layout, printed as PyTorch prints its own (shrew.strided)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"shrew.{self.name}"

    def __reduce__(self) -> str:
        return self.name  # pickled by name: the module attribute of that name


strided = layout("strided")
sparse_coo = layout("sparse_coo")
jagged = layout("jagged")
