"""torch.version and torch.__version__: the PyTorch release whose API shrew follows, with
shrew's own release as its local label, so that programs' version gates
(`torch.__version__ >= "2.0"`, `version.parse(torch.__version__) < version.parse("2.0")`,
`torch.__version__ >= (2, 0)`) pass as they do on that PyTorch.

shrew's own release is `shrew.version.release` (the package's version, as pip shows it).
"""
from __future__ import annotations

from collections.abc import Iterable
from functools import partialmethod
from typing import Any

from packaging.version import InvalidVersion, Version

release = "0.1.0"
"""shrew's own release (pyproject.toml's version)."""
TORCH_API = "2.13.0"
"""The PyTorch release whose API and semantics shrew follows and is tested against."""


class TorchVersion(str):
    """torch.torch_version.TorchVersion: a str that also compares, as a version, with a
    str, a packaging Version or a tuple of numbers ((2, 0) is "2.0"); a str that is not a
    version compares as a str."""

    __slots__ = ()

    def _cmp(self, other: Any, method: str) -> bool:
        try:
            if isinstance(other, Version):
                theirs = other
            elif isinstance(other, str):
                theirs = Version(other)
            elif isinstance(other, Iterable):
                theirs = Version(".".join(str(part) for part in other))
            else:
                return NotImplemented
            return bool(getattr(Version(self), method)(theirs))
        except InvalidVersion:
            return bool(getattr(str(self), method)(other))

    __gt__ = partialmethod(_cmp, method="__gt__")
    __ge__ = partialmethod(_cmp, method="__ge__")
    __lt__ = partialmethod(_cmp, method="__lt__")
    __le__ = partialmethod(_cmp, method="__le__")
    __eq__ = partialmethod(_cmp, method="__eq__")
    __ne__ = partialmethod(_cmp, method="__ne__")
    __hash__ = str.__hash__


__version__ = TorchVersion(f"{TORCH_API}+shrew.{release}")
"""What torch.__version__ holds: "2.13.0+shrew.0.1.0"."""
cuda: str | None = None
"""The CUDA toolkit PyTorch was built with: shrew is not built against one (its CUDA
backend runs through CuPy, `shrew.cuda.is_available()`)."""
hip: str | None = None
rocm: str | None = None
xpu: str | None = None
debug = False
git_version = "unknown"
