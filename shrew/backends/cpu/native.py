"""What the cpu backend's compiled libraries (oneDNN, MKL) share: finding the shared
library, loading it once, and the on/off switch read from the environment."""
from __future__ import annotations

import ctypes.util
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

_OFF = ("0", "false", "off", "no")
T = TypeVar("T")


def library_path(variable: str, filenames: tuple, name: str) -> str | None:
    """The library's path: the environment variable `variable` where set, else the first of
    `filenames` in the Python environment's lib folder (where their wheels put them), else
    the loader's search for `name`."""
    explicit = os.environ.get(variable)
    if explicit:
        return explicit
    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix)):
        for filename in filenames:
            candidate = Path(prefix) / "lib" / filename
            if candidate.exists():
                return str(candidate)
    return ctypes.util.find_library(name)


class Switch:
    """A library's on/off setting for the whole process; the environment variable's value
    ("0", "false", "off", "no": off) sets it at import."""

    def __init__(self, variable: str):
        self.on = os.environ.get(variable, "1").strip().lower() not in _OFF

    def set(self, flag: bool) -> bool:
        """Switch on or off; returns the old setting."""
        old, self.on = self.on, bool(flag)
        return old


class LoadOnce(Generic[T]):
    """`load()` runs the loader on its first call, from any thread, and keeps its result or,
    where it raises OSError (or `errors`), the reason as `error` and None as the result."""

    def __init__(self, loader: Callable[[], T], errors: tuple = ()):
        self._loader, self._errors = loader, (OSError, AttributeError, *errors)
        self._result: T | None = None
        self.error: str | None = None
        self._done = False
        self._lock = threading.RLock()

    def load(self) -> T | None:
        if not self._done:
            with self._lock:
                if not self._done:
                    try:
                        self._result = self._loader()
                    except self._errors as exc:
                        self.error = str(exc)
                    self._done = True
        return self._result
