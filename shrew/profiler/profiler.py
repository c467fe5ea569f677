"""shrew.profiler.profile: PyTorch's profiler API over shrew's recorder (recorder.py)."""
from __future__ import annotations

import enum
import os
import socket
import time
import warnings
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any

from ..core.errors import ArgumentError
from . import recorder
from .events import EventList


class ProfilerActivity(enum.Enum):
    """What to time: CPU (every op's host time) and a device kind, whose time is taken by
    waiting for the device after each op (on cpu there is none)."""

    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


_DEVICE_NAMES = {ProfilerActivity.CUDA: "cuda", ProfilerActivity.XPU: "xpu",
                 ProfilerActivity.MTIA: "mtia", ProfilerActivity.HPU: "hpu",
                 ProfilerActivity.PrivateUse1: "privateuseone"}


def supported_activities() -> set[ProfilerActivity]:
    return set(ProfilerActivity)


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """PyTorch's schedule: skip `skip_first` steps, then cycles of `wait` idle, `warmup`
    and `active` recorded steps (the last saves), `repeat` times (0: forever)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ArgumentError(
            f"schedule: invalid arguments: wait={wait} (need >= 0), warmup={warmup} (need "
            f">= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
            f"skip_first={skip_first} (need >= 0)")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)

    def action(step: int) -> ProfilerAction:
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        cycle = wait + warmup + active
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if at < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return action


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False,
                              use_python_export: bool = False) -> Callable[[profile], None]:
    """An on_trace_ready that writes each trace as `worker.<ns>.pt.trace.json` in
    dir_name, where TensorBoard's profiler plugin looks."""
    def handler(prof: profile) -> None:
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{time.time_ns()}.pt.trace.json"
        path = os.path.join(dir_name, name)
        if not use_gzip:
            prof.export_chrome_trace(path)
            return
        import gzip
        prof.export_chrome_trace(path)
        with open(path, "rb") as f, gzip.open(path + ".gz", "wb") as out:
            out.write(f.read())
        os.remove(path)
    return handler


def _always_record(_: int) -> ProfilerAction:
    return ProfilerAction.RECORD


class profile:
    """Records every op between enter and exit (or by `schedule`, stepped with step()):
    per-op self and total CPU time, input shapes (record_shapes), bytes allocated by op
    outputs (profile_memory), the Python stack (with_stack) and, for a device activity,
    device time (each op then waits for its device, which slows the program)."""

    def __init__(self, *, activities: Iterable[ProfilerActivity] | None = None,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[..., Any] | None = None,
                 record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, experimental_config: Any = None,
                 execution_trace_observer: Any = None, acc_events: bool = False,
                 use_cuda: bool | None = None,
                 custom_trace_id_callback: Callable[[], str] | None = None,
                 post_processing_timeout_s: float | None = None) -> None:
        acts = set(activities) if activities is not None else {ProfilerActivity.CPU}
        if use_cuda:
            acts.add(ProfilerActivity.CUDA)
        devices = [a for a in acts if a is not ProfilerActivity.CPU]
        self.activities = acts
        self.use_device = _DEVICE_NAMES[devices[0]] if devices else None
        self.schedule = schedule or _always_record
        self.on_trace_ready = on_trace_ready
        self.record_shapes, self.profile_memory = record_shapes, profile_memory
        self.with_stack, self.acc_events = with_stack, acc_events
        self.step_num = 0
        self.current_action = self.schedule(0)
        self._collector: recorder.Collector | None = None
        self._events = EventList([], self.use_device, profile_memory)

    # -- recording --------------------------------------------------------------------
    def _begin(self) -> None:
        self._collector = recorder.Collector(self.record_shapes, self.profile_memory,
                                             self.with_stack, self.use_device is not None)
        recorder.start(self._collector)

    def _end(self) -> None:
        if self._collector is None:
            return
        recorder.stop(self._collector)
        events = self._collector.events
        self._events = EventList((self._events if self.acc_events else []) + events,
                                 self.use_device, self.profile_memory)
        self._collector = None

    def _recording(self, action: ProfilerAction) -> bool:
        return action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)

    def start(self) -> None:
        if self._recording(self.current_action):
            self._begin()

    def stop(self) -> None:
        was_recording = self._collector is not None
        self._end()
        if was_recording and self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def step(self) -> None:
        """The end of one training step: moves along the schedule."""
        before = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        if self._recording(before) and (before is ProfilerAction.RECORD_AND_SAVE
                                        or not self._recording(self.current_action)):
            self._end()
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)
        if self._collector is None and self._recording(self.current_action):
            self._begin()

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    # -- results ----------------------------------------------------------------------
    def events(self) -> EventList:
        return self._events

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        return self._events.key_averages(group_by_input_shape, group_by_stack_n,
                                         group_by_overload_name)

    def export_chrome_trace(self, path: str | os.PathLike[str]) -> None:
        self._events.export_chrome_trace(path)
