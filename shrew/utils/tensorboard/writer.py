"""SummaryWriter: torch.utils.tensorboard's writer on the tensorboard package's event files."""
from __future__ import annotations

import os
import socket
import time
from datetime import datetime
from types import TracebackType
from typing import Any

import numpy as np
from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.compat.proto.summary_pb2 import Summary
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from ...core.errors import ArgumentError, ShrewTypeError, StateError, UnsupportedError
from . import summary as S
from .hparams import hparams


class SummaryWriter:
    """Writes scalars, histograms, images, text and hparams under `log_dir` for
    TensorBoard; `log_dir` defaults to runs/<Mon DD_HH-MM-SS>_<host><comment>, as PyTorch."""

    def __init__(self, log_dir: str | os.PathLike[str] | None = None, comment: str = "",
                 purge_step: int | None = None, max_queue: int = 10, flush_secs: int = 120,
                 filename_suffix: str = "") -> None:
        if log_dir is None:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir = os.fspath(log_dir)
        self.purge_step = purge_step
        self.max_queue, self.flush_secs = max_queue, flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer: EventFileWriter | None = None
        self.all_writers: dict[str, EventFileWriter] = {}
        self._get_file_writer()

    def _get_file_writer(self) -> EventFileWriter:
        if self.file_writer is None:
            self.file_writer = self._open(self.log_dir)
            if self.purge_step is not None:  # readers drop the later events of an old run
                for event in (Event(step=self.purge_step, file_version="brain.Event:2"),
                              Event(step=self.purge_step,
                                    session_log=SessionLog(status=SessionLog.START))):
                    self.file_writer.add_event(event)
                self.purge_step = None
        return self.file_writer

    def _open(self, path: str) -> EventFileWriter:
        writer = self.all_writers.get(path)
        if writer is None:
            writer = EventFileWriter(path, self.max_queue, self.flush_secs,
                                     self.filename_suffix)
            self.all_writers[path] = writer
        return writer

    def get_logdir(self) -> str:
        return self.log_dir

    def _write(self, proto: Summary, global_step: int | None, walltime: float | None,
               writer: EventFileWriter | None = None) -> None:
        if self.file_writer is None:
            raise StateError("SummaryWriter: the writer is closed")
        event = Event(summary=proto, wall_time=time.time() if walltime is None else walltime)
        if global_step is not None:
            event.step = int(global_step)
        (writer or self.file_writer).add_event(event)

    # -- records ----------------------------------------------------------------------
    def add_scalar(self, tag: str, scalar_value: Any, global_step: int | None = None,
                   walltime: float | None = None, new_style: bool = False,
                   double_precision: bool = False) -> None:
        self._write(S.scalar(tag, scalar_value, double_precision), global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict[str, Any],
                    global_step: int | None = None, walltime: float | None = None) -> None:
        """Each scalar in its own run, log_dir/<main_tag>_<tag>, under the tag main_tag,
        so that TensorBoard draws them in one chart."""
        stamp = time.time() if walltime is None else walltime
        for tag, value in tag_scalar_dict.items():
            run = os.path.join(self.log_dir, f"{main_tag.replace('/', '_')}_{tag}")
            self._write(S.scalar(main_tag, value), global_step, stamp, self._open(run))

    def add_histogram(self, tag: str, values: Any, global_step: int | None = None,
                      bins: Any = "tensorflow", walltime: float | None = None,
                      max_bins: int | None = None) -> None:
        self._write(S.histogram(tag, values, bins, max_bins), global_step, walltime)

    def add_image(self, tag: str, img_tensor: Any, global_step: int | None = None,
                  walltime: float | None = None, dataformats: str = "CHW") -> None:
        array = S.to_uint8(S.to_numpy(img_tensor, "add_image"), "add_image")
        self._write(S.image(tag, S.to_hwc(array, dataformats, "add_image")), global_step,
                    walltime)

    def add_images(self, tag: str, img_tensor: Any, global_step: int | None = None,
                   walltime: float | None = None, dataformats: str = "NCHW") -> None:
        """A batch of images, tiled eight to a row into one image."""
        array = S.to_uint8(S.to_numpy(img_tensor, "add_images"), "add_images")
        fmt = dataformats.upper()
        if sorted(fmt) not in (sorted("NCHW"), sorted("NHW")) or array.ndim != len(fmt):
            raise ArgumentError(f"add_images: dataformats {dataformats!r} does not fit "
                                f"images of shape {array.shape} (use NCHW, NHWC or NHW)")
        if fmt == "NHW":
            array, fmt = array[:, None], "NCHW"
        nchw = np.transpose(array, [fmt.index(c) for c in "NCHW"])
        grid = S.make_grid(nchw)
        self._write(S.image(tag, S.to_hwc(grid, "CHW", "add_images")), global_step, walltime)

    def add_figure(self, tag: str, figure: Any, global_step: int | None = None,
                   close: bool = True, walltime: float | None = None) -> None:
        """A matplotlib figure (or a list of them, tiled) rendered as an image."""
        figures = figure if isinstance(figure, list) else [figure]
        images = np.stack([_render(f, close) for f in figures])
        if isinstance(figure, list):
            self.add_images(tag, images, global_step, walltime, dataformats="NHWC")
        else:
            self.add_image(tag, images[0], global_step, walltime, dataformats="HWC")

    def add_text(self, tag: str, text_string: str, global_step: int | None = None,
                 walltime: float | None = None) -> None:
        if not isinstance(text_string, str):
            raise ShrewTypeError(f"add_text: {tag!r} needs a str, "
                                 f"got {type(text_string).__qualname__}")
        self._write(S.text(tag, text_string), global_step, walltime)

    def add_hparams(self, hparam_dict: dict[str, Any], metric_dict: dict[str, Any],
                    hparam_domain_discrete: dict[str, list[Any]] | None = None,
                    run_name: str | None = None, global_step: int | None = None) -> None:
        """The hparams and their metrics in a run of their own (log_dir/<run_name>, by
        default the time), as PyTorch does."""
        if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
            raise ShrewTypeError("add_hparams: hparam_dict and metric_dict should be dicts")
        domains = hparam_domain_discrete or {}
        for name, values in domains.items():
            if (name not in hparam_dict or not isinstance(values, list)
                    or not all(isinstance(v, type(hparam_dict[name])) for v in values)):
                raise ShrewTypeError(f"add_hparams: hparam_domain_discrete[{name!r}] should "
                                     f"be a list of the type of hparam_dict[{name!r}]")
        run = os.path.join(self.log_dir, run_name or str(time.time()))
        writer = self._open(run)
        for proto in hparams(hparam_dict, metric_dict, domains):
            self._write(proto, None, None, writer)
        for tag, value in metric_dict.items():
            self._write(S.scalar(tag, value), global_step, None, writer)

    def add_graph(self, model: Any, input_to_model: Any = None, verbose: bool = False,
                  use_strict_trace: bool = True) -> None:
        raise UnsupportedError(
            "add_graph: shrew has no tracer that writes TensorBoard's graph format; "
            "draw the autograd graph of an output with shrew.to_dot(loss) instead")

    # -- lifetime ---------------------------------------------------------------------
    def flush(self) -> None:
        for writer in self.all_writers.values():
            writer.flush()

    def close(self) -> None:
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.all_writers.clear()
        self.file_writer = None

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _render(figure: Any, close: bool) -> np.ndarray:
    """A figure's pixels, [H, W, 3] uint8."""
    figure.canvas.draw()
    rgba = np.asarray(figure.canvas.buffer_rgba())
    if close:
        import matplotlib.pyplot as plt
        plt.close(figure)
    return np.array(rgba[:, :, :3])
