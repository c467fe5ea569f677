"""get_unsafe_globals_in_checkpoint: the classes and functions a PyTorch .pt file's pickle
names that shrew would refuse to load, found by reading its opcodes (nothing is unpickled,
imported or run)."""
from __future__ import annotations

import os
import pickletools
from typing import IO, Any

from ..core.errors import LoadError
from .allowlist import _allowed, _shrew_own
from .torch_zip import _Archive
from .unpickler import _stand_ins

_STRINGS = {"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE", "SHORT_BINSTRING",
            "BINSTRING", "STRING"}

# the builtins torch's weights_only unpickler takes (containers and numbers)
_PLAIN_BUILTINS = {"set", "frozenset", "bytearray", "complex", "slice", "range"}


def _named_globals(data: bytes) -> list[str]:
    """Every "module.name" the pickle's GLOBAL and STACK_GLOBAL opcodes look up, in order."""
    found: list[str] = []
    stack: list[Any] = []   # the strings pushed (None for anything else), for STACK_GLOBAL
    memo: dict[int, Any] = {}
    for opcode, arg, _ in pickletools.genops(data):
        name = opcode.name
        if name == "GLOBAL":
            module, _, qualname = str(arg).partition(" ")
            found.append(f"{module}.{qualname}")
        elif name == "STACK_GLOBAL":
            last, first = (stack.pop() if stack else None), (stack.pop() if stack else None)
            if isinstance(first, str) and isinstance(last, str):
                found.append(f"{first}.{last}")
        elif name in _STRINGS:
            stack.append(arg if isinstance(arg, str) else None)
        elif name == "MEMOIZE":
            memo[len(memo)] = stack[-1] if stack else None
        elif name in ("BINPUT", "LONG_BINPUT", "PUT"):
            memo[int(str(arg))] = stack[-1] if stack else None
        elif name in ("BINGET", "LONG_BINGET", "GET"):
            stack.append(memo.get(int(str(arg))))
        else:
            stack.append(None)  # a push we need not follow (STACK_GLOBAL reads strings)
    return found


def _allowed_name(dotted: str) -> bool:
    module, _, qualname = dotted.rpartition(".")
    if (module, qualname) in _stand_ins():
        return True
    for split in range(dotted.count("."), 0, -1):  # a nested class: module.Outer.Inner
        parts = dotted.split(".")
        key = ".".join(parts[:split]) + ":" + ".".join(parts[split:])
        if key in _allowed or _shrew_own(key) is not None:
            return True
    builtin, _, rest = dotted.partition(".")  # protocol 2 spells builtins "__builtin__"
    return builtin in ("builtins", "__builtin__") and rest in _PLAIN_BUILTINS


def get_unsafe_globals_in_checkpoint(f: str | os.PathLike[str] | IO[bytes]) -> list[str]:
    """The "module.name"s the checkpoint's pickle names that shrew.load would refuse
    (neither tensors and containers nor allowlisted with add_safe_globals), each once."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as file:
            return get_unsafe_globals_in_checkpoint(file)
    size = f.seek(0, os.SEEK_END)
    f.seek(0)
    archive = _Archive(f, size, str(getattr(f, "name", "the checkpoint")))
    pickles = [n for n in archive.names if n.endswith("data.pkl")]
    if not pickles:
        raise LoadError(f"get_unsafe_globals_in_checkpoint: {archive.where} is not a PyTorch "
                        f"zip checkpoint (no data.pkl)")
    names = _named_globals(archive.read(pickles[0]))
    return list(dict.fromkeys(n for n in names if not _allowed_name(n)))
