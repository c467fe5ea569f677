"""default_collate (how a DataLoader joins samples into a batch) and default_convert
(what it does to single samples when batching is off), as torch.utils.data's."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ...core.errors import DTypeError, ShapeError, ShrewError, ShrewValueError
from ...ops.creation import as_tensor, from_numpy, tensor
from ...ops.shape.recorded import stack
from ...core.shape import fmt
from ..._tensor import Tensor


class CollateError(ShrewError, TypeError):
    """A batch default_collate cannot join (a TypeError too, as PyTorch raises)."""


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _foreign(x: Any) -> bool:
    """Another framework's tensor (a torchvision transform's torch.Tensor, a CuPy array):
    anything with __dlpack__ but numpy's arrays, which take their own path."""
    return hasattr(x, "__dlpack__") and not isinstance(x, (Tensor, np.ndarray, np.generic))


def _numeric_array(a: np.ndarray) -> bool:
    return a.dtype.kind in "biufc"


def _stack(tensors: Sequence[Tensor]) -> Tensor:
    shapes = {t.shape for t in tensors}
    if len(shapes) > 1:
        raise ShapeError(f"default_collate: cannot stack samples of different shapes "
                         f"{', '.join(fmt(s) for s in sorted(shapes))}")
    return stack(tensors)


def default_collate(batch: Sequence[Any]) -> Any:
    """Join a list of samples into a batch, keeping their structure: tensors, numpy
    arrays and numpy scalars are stacked along a new first dim; Python floats become a
    float64 tensor, ints an int64 one, bools a bool one; strings and bytes stay as they are;
    dicts, named tuples, tuples and lists are collated field by field (tuples give
    lists, as PyTorch's do).  Another framework's tensors (torch's, from a torchvision
    transform) are read without a copy (shrew.as_tensor) and stacked as shrew's."""
    if not isinstance(batch, Sequence) or not len(batch):
        raise CollateError(f"default_collate: needs a non-empty list of samples, got "
                           f"{type(batch).__name__}")
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _stack(batch)
    if _foreign(elem):
        return _stack([as_tensor(x) for x in batch])
    if isinstance(elem, (np.ndarray, np.generic)) and not isinstance(elem, (np.str_, np.bytes_)):
        if not _numeric_array(np.asarray(elem)):
            raise CollateError(f"default_collate: batch must contain tensors, numpy arrays, "
                               f"numbers, dicts or lists; found numpy dtype {elem.dtype}")
        if isinstance(elem, np.ndarray):
            return _stack([from_numpy(np.ascontiguousarray(a)) for a in batch])
        return from_numpy(np.asarray(batch))
    if isinstance(elem, float):
        return tensor(batch, dtype="float64")
    if isinstance(elem, bool):
        return tensor(batch)
    if isinstance(elem, int):
        return tensor(batch, dtype="int64")
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(collated)  # type: ignore[call-arg]
        except TypeError:
            return collated
    if _is_namedtuple(elem):
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, Sequence):
        if any(len(s) != len(elem) for s in batch):
            raise ShrewValueError("default_collate: each element in list of batch should be of "
                                  "equal size")
        fields = [default_collate(s) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return fields
        try:
            return type(elem)(fields)  # type: ignore[call-arg]
        except TypeError:
            return fields
    raise CollateError(f"default_collate: batch must contain tensors, numpy arrays, numbers, "
                       f"dicts or lists; found {type(elem).__name__}")


def default_convert(data: Any) -> Any:
    """A sample as a DataLoader without batching hands it out: numpy arrays (of numbers)
    become tensors, and so do other frameworks' tensors (torch's), read without a copy;
    containers are converted element by element, the rest is unchanged."""
    if _foreign(data):
        return as_tensor(data)
    if isinstance(data, np.ndarray) and _numeric_array(data):
        try:
            return from_numpy(np.ascontiguousarray(data))
        except DTypeError:
            return data
    if isinstance(data, Mapping):
        converted = {key: default_convert(v) for key, v in data.items()}
        try:
            return type(data)(converted)  # type: ignore[call-arg]
        except TypeError:
            return converted
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])  # type: ignore[call-arg]
        except TypeError:
            return [default_convert(d) for d in data]
    return data
