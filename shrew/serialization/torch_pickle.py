"""The pickle inside a .pt file (`<name>/data.pkl`), written opcode by opcode with protocol
2, as torch.save writes it: Python's pickler would import torch to check the names a
tensor's rebuild uses, and shrew must not need torch to save.

Only opcodes torch's weights_only unpickler reads are written: PROTO, GLOBAL, REDUCE,
BUILD (an OrderedDict's attributes), BINPERSID (a storage), MARK, the tuple, list and dict
opcodes, BININT/BININT1/BININT2/LONG1, BINFLOAT, BINUNICODE, NONE, NEWTRUE/NEWFALSE, and
BINPUT/BINGET, so that a tensor or container met twice comes back as one object.  A plain
object of a program's own class (a checkpoint's `config` dataclass) is written as pickle's
protocol 2 writes it, GLOBAL of its class, NEWOBJ and BUILD of its attributes: torch.load
reads it with weights_only=False, or with the class allowed by add_safe_globals."""
from __future__ import annotations

import pickle
import struct
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import numpy as np

from ..core.errors import ShrewValueError

_BATCH = 1000  # items per SETITEMS / APPENDS, as Python's pickler batches them


class TensorRecord(NamedTuple):
    """What the pickle says of one tensor: its storage (torch's class name for it, its
    key in the zip, its length in elements), and the view of it the tensor is."""
    storage_class: str
    key: str
    storage_numel: int
    offset: int
    size: tuple[int, ...]
    stride: tuple[int, ...]
    requires_grad: bool
    parameter: bool


def plain_object_class(x: Any) -> type | None:
    """The class of `x` where `x` is a plain object that pickle's protocol 2 writes as
    "that class's __new__, then set these attributes" (a dataclass, a config object): its
    class pickles by default, is named at module level, and `x` has a __dict__; else None."""
    cls = type(x)
    default = (cls.__reduce_ex__ is object.__reduce_ex__ and cls.__reduce__ is object.__reduce__
               and getattr(cls, "__getstate__", None) is getattr(object, "__getstate__", None)
               and not hasattr(cls, "__getnewargs__") and not hasattr(cls, "__getnewargs_ex__")
               and not hasattr(cls, "__slots__"))
    named = "<locals>" not in cls.__qualname__ and isinstance(getattr(x, "__dict__", None), dict)
    return cls if default and named and cls.__new__ is object.__new__ else None


class PickleWriter:
    """Pickles one object of numbers, strings, None, dicts, OrderedDicts, lists, tuples and
    the tensors `records` describes (by id), as torch.save would."""

    def __init__(self, records: dict[int, TensorRecord]) -> None:
        self.records = records
        self.out = bytearray()
        self.memo: dict[tuple[Any, ...], int] = {}

    def dumps(self, obj: Any) -> bytes:
        self.out += pickle.PROTO + b"\x02"
        self.value(obj)
        self.out += pickle.STOP
        return bytes(self.out)

    # -- the memo: BINPUT after building an object, BINGET when it comes again ------------
    def put(self, key: tuple[Any, ...]) -> None:
        index = self.memo[key] = len(self.memo)
        self.out += (pickle.BINPUT + bytes([index]) if index < 256
                     else pickle.LONG_BINPUT + struct.pack("<I", index))

    def got(self, key: tuple[Any, ...]) -> bool:
        """Whether `key` was memoized, writing a BINGET of it if so."""
        index = self.memo.get(key)
        if index is None:
            return False
        self.out += (pickle.BINGET + bytes([index]) if index < 256
                     else pickle.LONG_BINGET + struct.pack("<I", index))
        return True

    def global_(self, module: str, name: str) -> None:
        if not self.got(("global", module, name)):
            self.out += pickle.GLOBAL + f"{module}\n{name}\n".encode()
            self.put(("global", module, name))

    # -- values -------------------------------------------------------------------------
    def value(self, x: Any) -> None:
        if x is None:
            self.out += pickle.NONE
        elif isinstance(x, (bool, np.bool_)):
            self.out += pickle.NEWTRUE if x else pickle.NEWFALSE
        elif isinstance(x, (int, np.integer)):
            self.integer(int(x))
        elif isinstance(x, (float, np.floating)):
            self.out += pickle.BINFLOAT + struct.pack(">d", float(x))
        elif isinstance(x, str):
            encoded = x.encode("utf-8", "surrogatepass")
            self.out += pickle.BINUNICODE + struct.pack("<I", len(encoded)) + encoded
        elif id(x) in self.records:
            self.tensor(x, self.records[id(x)])
        elif isinstance(x, Mapping):
            self.mapping(x)
        elif isinstance(x, list):
            self.list_(x)
        elif isinstance(x, tuple):
            self.tuple_(x)
        else:  # torch_write.py let only plain objects through besides the above
            self.plain_object(x)

    def integer(self, v: int) -> None:
        if 0 <= v < 1 << 8:
            self.out += pickle.BININT1 + bytes([v])
        elif 0 <= v < 1 << 16:
            self.out += pickle.BININT2 + struct.pack("<H", v)
        elif -(1 << 31) <= v < 1 << 31:
            self.out += pickle.BININT + struct.pack("<i", v)
        else:
            encoded = pickle.encode_long(v)
            if len(encoded) > 255:
                raise ShrewValueError(f"save: the integer {v:.3e} is too large for "
                                      f"PyTorch's format (LONG1 holds 255 bytes)")
            self.out += pickle.LONG1 + bytes([len(encoded)]) + encoded

    def items(self, values: Iterable[Any], opcode: bytes) -> None:
        """MARK, a batch of values, `opcode` (APPENDS, SETITEMS, TUPLE)."""
        self.out += pickle.MARK
        for v in values:
            self.value(v)
        self.out += opcode

    def tuple_(self, x: tuple[Any, ...]) -> None:
        if not x:
            self.out += pickle.EMPTY_TUPLE
        elif len(x) <= 3:
            for v in x:
                self.value(v)
            self.out += (pickle.TUPLE1, pickle.TUPLE2, pickle.TUPLE3)[len(x) - 1]
        else:
            self.items(x, pickle.TUPLE)

    def list_(self, x: list[Any]) -> None:
        if self.got(("id", id(x))):
            return
        self.out += pickle.EMPTY_LIST
        self.put(("id", id(x)))
        for i in range(0, len(x), _BATCH):
            self.items(x[i:i + _BATCH], pickle.APPENDS)

    def empty_ordered_dict(self) -> None:
        self.global_("collections", "OrderedDict")
        self.out += pickle.EMPTY_TUPLE + pickle.REDUCE

    def mapping(self, x: Mapping[Any, Any]) -> None:
        """A dict; an OrderedDict as collections.OrderedDict(), then its attributes (a
        state dict's `_metadata`) by BUILD, as torch.save writes it."""
        if self.got(("id", id(x))):
            return
        ordered = type(x) is OrderedDict
        if ordered:
            self.empty_ordered_dict()
        else:
            self.out += pickle.EMPTY_DICT
        self.put(("id", id(x)))
        pairs = list(x.items())
        for i in range(0, len(pairs), _BATCH):
            self.items((v for pair in pairs[i:i + _BATCH] for v in pair), pickle.SETITEMS)
        if ordered and vars(x):
            self.mapping(vars(x))
            self.out += pickle.BUILD

    def plain_object(self, x: Any) -> None:
        """copyreg.__newobj__'s form: the class, NEWOBJ with no arguments, then BUILD with
        its attributes, as pickle.dumps(x, protocol=2) writes it."""
        if self.got(("id", id(x))):
            return
        self.global_(type(x).__module__, type(x).__qualname__)
        self.out += pickle.EMPTY_TUPLE + pickle.NEWOBJ
        self.put(("id", id(x)))
        self.mapping(vars(x))
        self.out += pickle.BUILD

    def tensor(self, x: Any, record: TensorRecord) -> None:
        """torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad,
        OrderedDict()), inside _rebuild_parameter(tensor, requires_grad, OrderedDict())
        for an nn.Parameter; the storage is the persistent id ("storage",
        torch.<Type>Storage, key, "cpu", numel)."""
        if self.got(("id", id(x))):
            return
        if record.parameter:
            self.global_("torch._utils", "_rebuild_parameter")
        self.global_("torch._utils", "_rebuild_tensor_v2")
        self.out += pickle.MARK + pickle.MARK
        self.value("storage")
        self.global_("torch", record.storage_class)
        for v in (record.key, "cpu", record.storage_numel):
            self.value(v)
        self.out += pickle.TUPLE + pickle.BINPERSID
        self.value(record.offset)
        self.tuple_(record.size)
        self.tuple_(record.stride)
        self.value(record.requires_grad and not record.parameter)
        self.empty_ordered_dict()
        self.out += pickle.TUPLE + pickle.REDUCE
        if record.parameter:
            self.value(record.requires_grad)
            self.empty_ordered_dict()
            self.out += pickle.TUPLE3 + pickle.REDUCE
        self.put(("id", id(x)))
