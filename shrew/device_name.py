"""``shrew.device``: PyTorch's device objects, as strings.

A ``device`` is a ``str`` subclass ("cpu", "opencl:0", "cuda:1") with PyTorch's
``.type`` and ``.index``.  Being a string, it is accepted wherever a device string is
(creation functions, ``Tensor.to``, ``Module.to``, ``device=`` keywords), compares equal
to its string and hashes like it; ``Tensor.device`` returns one, so both
``x.device == "cpu"`` and ``x.device.type == "cpu"`` hold.
"""
from __future__ import annotations

from typing import Any

from .errors import DeviceError


class device(str):  # noqa: N801  (PyTorch's name)
    """``device("cuda:0")``, ``device("opencl", 1)``, ``device("cpu")`` or
    ``device(other_device)``.  ``index`` is None when the string names no index."""

    __slots__ = ()

    def __new__(cls, type: object, index: int | None = None) -> device:  # noqa: A002
        if isinstance(type, device) and index is None:
            return type
        if not isinstance(type, str):
            raise DeviceError(f"device: expected a string such as 'cpu', 'opencl:0' or "
                              f"'cuda', got {type!r}")
        name, colon, number = type.partition(":")
        if not name.isidentifier() or (colon and not number.isdigit()):
            raise DeviceError(f"device: {type!r} is not a device string such as 'cpu', "
                              f"'opencl:0' or 'cuda'")
        if index is not None:
            if colon:
                raise DeviceError(f"device: {type!r} already has an index; got index={index}")
            if isinstance(index, bool) or not isinstance(index, int) or index < 0:
                raise DeviceError(f"device: index must be an int >= 0, got {index!r}")
            return super().__new__(cls, f"{name}:{index}")
        return super().__new__(cls, type)

    @property
    def type(self) -> str:
        """The backend name: "cpu", "opencl", "cuda"."""
        return str.partition(self, ":")[0]

    @property  # PyTorch's attribute, in place of str.index (use str.index(d, ...) for that)
    def index(self) -> int | None:  # type: ignore[override]
        """The device number, or None for a string without one (such as "cpu")."""
        number = str.partition(self, ":")[2]
        return int(number) if number else None

    def __str__(self) -> str:
        return str.__str__(self)

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (device, (str.__str__(self),))
