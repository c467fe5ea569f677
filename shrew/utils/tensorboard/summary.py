"""Summary protocol buffers for each kind of record, as torch.utils.tensorboard.summary
writes them (so TensorBoard's plugins read them alike)."""
from __future__ import annotations

import io
import math
from typing import Any

import numpy as np
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto

from ...core.errors import ArgumentError, DTypeError, ShrewTypeError


def to_numpy(value: Any, op: str) -> np.ndarray:
    """A host array from a shrew tensor, a numpy array, a number or anything with
    .detach().cpu().numpy() (a torch tensor)."""
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    try:
        return np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise ShrewTypeError(f"{op}: expected a tensor, array or number, "
                             f"got {type(value).__qualname__}") from exc


def scalar(tag: str, value: Any, double_precision: bool = False) -> Summary:
    array = to_numpy(value, "add_scalar")
    if array.size != 1:
        raise ArgumentError(f"add_scalar: {tag!r} needs one value, got shape {array.shape}")
    number = array.reshape(()).item()
    if double_precision:
        tensor = TensorProto(double_val=[float(number)], dtype="DT_DOUBLE")
        return Summary(value=[Summary.Value(tag=tag, tensor=tensor, metadata=SummaryMetadata(
            plugin_data=SummaryMetadata.PluginData(plugin_name="scalars")))])
    return Summary(value=[Summary.Value(tag=tag, simple_value=float(number))])


def default_bins() -> list[float]:
    """TensorFlow's histogram buckets: +-1e-12 * 1.1^k up to 1e20, and 0."""
    v, buckets = 1e-12, []
    while v < 1e20:
        buckets.append(v)
        v *= 1.1
    return [-b for b in reversed(buckets)] + [0.0] + buckets


def histogram(tag: str, values: Any, bins: Any, max_bins: int | None = None) -> Summary:
    array = to_numpy(values, "add_histogram").astype(np.float64).reshape(-1)
    if array.size == 0:
        raise ArgumentError(f"add_histogram: {tag!r} has no values")
    counts, limits = np.histogram(array, bins=default_bins() if bins == "tensorflow" else bins)
    if max_bins is not None and len(counts) > max_bins:  # merge neighbours, as PyTorch
        group = math.ceil(len(counts) / max_bins)
        pad = (-len(counts)) % group
        counts = np.pad(counts, (0, pad)).reshape(-1, group).sum(axis=1)
        limits = np.concatenate([limits[:-1:group], limits[-1:]])
    # keep the buckets from the first to the last non-empty one, as PyTorch does
    nonzero = np.flatnonzero(counts)
    first, last = (int(nonzero[0]), int(nonzero[-1])) if nonzero.size else (0, 0)
    counts = counts[max(first - 1, 0):last + 1]
    if first == 0:
        counts = np.concatenate([[0], counts])
    limits = limits[first:last + 2]
    proto = HistogramProto(min=float(array.min()), max=float(array.max()), num=array.size,
                           sum=float(array.sum()), sum_squares=float(array.dot(array)),
                           bucket_limit=limits.tolist(), bucket=counts.tolist())
    return Summary(value=[Summary.Value(tag=tag, histo=proto)])


def to_hwc(array: np.ndarray, dataformats: str, op: str) -> np.ndarray:
    """An image as [H, W, C] with C in 1, 3, 4, from `dataformats` (CHW, HWC, HW)."""
    fmt = dataformats.upper()
    if sorted(fmt) not in (sorted("CHW"), sorted("HW")) or array.ndim != len(fmt):
        raise ArgumentError(f"{op}: dataformats {dataformats!r} does not fit an image of "
                            f"shape {array.shape} (use CHW, HWC or HW)")
    if fmt == "HW":
        return array[:, :, None]
    return np.transpose(array, [fmt.index(c) for c in "HWC"])


def to_uint8(array: np.ndarray, op: str) -> np.ndarray:
    """uint8 images pass; floats in [0, 1] are scaled by 255, as PyTorch."""
    if array.dtype == np.uint8:
        return array
    if array.dtype.kind not in "fiub":
        raise DTypeError(f"{op}: images must be uint8 or float, got {array.dtype}")
    return np.clip(array.astype(np.float32) * 255.0, 0, 255).astype(np.uint8)


def image(tag: str, hwc: np.ndarray) -> Summary:
    from PIL import Image
    height, width, channels = hwc.shape
    if channels not in (1, 3, 4):
        raise ArgumentError(f"add_image: {tag!r} has {channels} channels (need 1, 3 or 4)")
    buffer = io.BytesIO()
    Image.fromarray(hwc[:, :, 0] if channels == 1 else hwc).save(buffer, format="PNG")
    proto = Summary.Image(height=height, width=width, colorspace=channels,
                          encoded_image_string=buffer.getvalue())
    return Summary(value=[Summary.Value(tag=tag, image=proto)])


def make_grid(nchw: np.ndarray, ncols: int = 8) -> np.ndarray:
    """Images [N, C, H, W] tiled into one [C, H * rows, W * cols], as PyTorch's writer."""
    if nchw.shape[1] == 1:
        nchw = np.repeat(nchw, 3, axis=1)
    n, c, h, w = nchw.shape
    cols = min(n, ncols)
    rows = math.ceil(n / cols)
    canvas = np.zeros((c, h * rows, w * cols), dtype=nchw.dtype)
    for i in range(n):
        y, x = divmod(i, cols)
        canvas[:, y * h:(y + 1) * h, x * w:(x + 1) * w] = nchw[i]
    return canvas


def text(tag: str, text_string: str) -> Summary:
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="text"))
    tensor = TensorProto(dtype="DT_STRING", string_val=[text_string.encode("utf-8")],
                         tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=metadata,
                                        tensor=tensor)])


def hparams(hparam_dict: dict[str, Any] | None = None, metric_dict: dict[str, Any] | None = None,
            hparam_domain_discrete: dict[str, list[Any]] | None = None,
            ) -> tuple[Summary, Summary, Summary]:
    """torch.utils.tensorboard.summary.hparams: the experiment, session-start and
    session-end summaries that SummaryWriter.add_hparams writes (for writing with
    file_writer.add_summary)."""
    from .hparams import hparams as make  # hparams imports this module
    return make(hparam_dict or {}, metric_dict or {}, hparam_domain_discrete or {})
