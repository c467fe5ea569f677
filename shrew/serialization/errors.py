"""Load errors that name the file: a check deep in the reader (a tensor's strides, a
checkpoint's structure) says what is wrong, and this adds which file it is in."""
from __future__ import annotations

from ..core.errors import ShrewError


def in_file(exc: ShrewError, where: str) -> ShrewError:
    """`exc` as is if it names `where`, else the same error class with `where` added."""
    message = str(exc)
    if where in message:
        return exc
    return type(exc)(f"load: {where}: {message.removeprefix('load: ')}")
