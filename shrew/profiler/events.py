"""The profile's events and their averages, with PyTorch's names (profiler_util's)."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from .table import build_table


@dataclass(eq=False)
class FunctionEvent:
    """One call: a backend primitive ("shrew::matmul") or a record_function range.
    Times are in microseconds, memory in bytes."""

    id: int
    name: str
    thread: int
    start_us: float
    end_us: float = 0.0
    is_user_annotation: bool = False
    input_shapes: list = field(default_factory=list)
    stack: list = field(default_factory=list)
    cpu_children: list = field(default_factory=list)
    cpu_parent: FunctionEvent | None = None
    self_device_time_total: float = 0.0
    sync_us: float = 0.0  # the wait for the device, taken out of the CPU times
    own_bytes: int = 0
    on_device: bool = False
    count: int = 1

    def append_cpu_child(self, child: FunctionEvent) -> None:
        self.cpu_children.append(child)
        child.cpu_parent = self

    @property
    def key(self) -> str:
        return self.name

    @property
    def cpu_time_total(self) -> float:
        return self.end_us - self.start_us - self._waits()

    def _waits(self) -> float:
        return self.sync_us + sum(c._waits() for c in self.cpu_children)

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def device_time_total(self) -> float:
        return self.self_device_time_total + sum(c.device_time_total
                                                 for c in self.cpu_children)

    def _bytes(self, device: bool) -> int:
        own = self.own_bytes if self.on_device == device else 0
        return own + sum(c._bytes(device) for c in self.cpu_children)

    @property
    def cpu_memory_usage(self) -> int:
        return self._bytes(False)

    @property
    def self_cpu_memory_usage(self) -> int:
        return 0 if self.on_device else self.own_bytes

    @property
    def device_memory_usage(self) -> int:
        return self._bytes(True)

    @property
    def self_device_memory_usage(self) -> int:
        return self.own_bytes if self.on_device else 0


@dataclass(eq=False)
class FunctionEventAvg:
    """The sums over the events of one key (and input shapes, where grouped by them)."""

    key: str
    input_shapes: list
    count: int = 0
    cpu_time_total: float = 0.0
    self_cpu_time_total: float = 0.0
    device_time_total: float = 0.0
    self_device_time_total: float = 0.0
    cpu_memory_usage: int = 0
    self_cpu_memory_usage: int = 0
    device_memory_usage: int = 0
    self_device_memory_usage: int = 0
    is_user_annotation: bool = False
    stack: list = field(default_factory=list)

    def add(self, event: FunctionEvent | FunctionEventAvg) -> FunctionEventAvg:
        self.count += event.count
        for name in ("cpu_time_total", "self_cpu_time_total", "device_time_total",
                     "self_device_time_total", "cpu_memory_usage", "self_cpu_memory_usage",
                     "device_memory_usage", "self_device_memory_usage"):
            setattr(self, name, getattr(self, name) + getattr(event, name))
        self.is_user_annotation = event.is_user_annotation
        return self

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / max(self.count, 1)

    @property
    def device_time(self) -> float:
        return self.device_time_total / max(self.count, 1)


class EventList(list):
    """PyTorch's EventList: events (FunctionEvent), or their averages (FunctionEventAvg)
    from key_averages()."""

    def __init__(self, events: Any = (), use_device: str | None = None,
                 profile_memory: bool = False) -> None:
        super().__init__(events)
        self.use_device, self.profile_memory = use_device, profile_memory

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        groups: dict[tuple, FunctionEventAvg] = {}
        for e in self:
            key = (e.key, str(e.input_shapes) if group_by_input_shape else "",
                   tuple(e.stack[:group_by_stack_n]) if group_by_stack_n else ())
            if key not in groups:
                groups[key] = FunctionEventAvg(
                    e.key, e.input_shapes if group_by_input_shape else [],
                    stack=e.stack[:group_by_stack_n] if group_by_stack_n else [])
            groups[key].add(e)
        return EventList(groups.values(), self.use_device, self.profile_memory)

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg("Total", [])
        for e in self:
            total.add(e)
        return total

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_src_column_width: int = 75, max_name_column_width: int = 55,
              max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False, time_unit: str | None = None) -> str:
        return build_table(list(self), self.use_device, self.profile_memory, sort_by=sort_by,
                           row_limit=row_limit, max_src_column_width=max_src_column_width,
                           max_name_column_width=max_name_column_width,
                           max_shapes_column_width=max_shapes_column_width, header=header,
                           top_level_events_only=top_level_events_only, time_unit=time_unit)

    def export_chrome_trace(self, path: str | os.PathLike[str]) -> None:
        """Chrome's trace event format (chrome://tracing, Perfetto, TensorBoard's plugin):
        one complete ("X") event per call, in microseconds."""
        pid = os.getpid()
        trace = [{"name": e.name, "ph": "X", "cat": ("user_annotation" if e.is_user_annotation
                                                     else "cpu_op"),
                  "ts": e.start_us, "dur": e.end_us - e.start_us, "pid": pid, "tid": e.thread,
                  "args": {"Input Dims": e.input_shapes} if e.input_shapes else {}}
                 for e in self if isinstance(e, FunctionEvent)]
        with open(path, "w") as f:
            json.dump({"traceEvents": trace, "displayTimeUnit": "ms",
                       "schemaVersion": 1}, f)
