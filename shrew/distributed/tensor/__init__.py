"""``shrew.distributed.tensor``: PyTorch's DTensor (tensors sharded over a device mesh),
which shrew does not have: its data parallelism is DistributedDataParallel over MPI."""
from __future__ import annotations

from typing import Any

from ...core.errors import UnsupportedError

__all__ = ["DTensor"]

_INSTEAD = ("shrew has no sharded tensors (DTensor); train data-parallel with "
            "shrew.nn.parallel.DistributedDataParallel, which keeps a full copy per rank")


class DTensor:
    """Refused: constructing one (or DTensor.from_local) raises UnsupportedError."""

    def __new__(cls, *args: Any, **kwargs: Any) -> DTensor:
        raise UnsupportedError(f"DTensor: {_INSTEAD}")

    @staticmethod
    def from_local(*args: Any, **kwargs: Any) -> DTensor:
        raise UnsupportedError(f"DTensor.from_local: {_INSTEAD}")
