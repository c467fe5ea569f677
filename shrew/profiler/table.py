"""key_averages().table(): PyTorch's layout (profiler_util._build_table), column for
column, less the columns shrew has no data for (FLOPs, node ids, overload names)."""
from __future__ import annotations

from typing import Any

_WIDTH = 12
_SPACING = 2


def format_time(us: float, unit: str | None = None) -> str:
    if unit == "s" or (unit is None and us >= 1e6):
        return f"{us / 1e6:.3f}s"
    if unit == "ms" or (unit is None and us >= 1e3):
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def format_memory(nbytes: float) -> str:
    for size, name in ((1024 ** 3, "GB"), (1024 ** 2, "MB"), (1024, "KB")):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {name}"
    return f"{int(nbytes)} B"


def _share(part: float, total: float) -> str:
    return "0.00%" if total == 0 else f"{part * 100.0 / total:.2f}%"


def _headers(device: str | None, has_device_time: bool, has_device_mem: bool,
             memory: bool) -> list[str]:
    headers = ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if has_device_time:
        dev = (device or "None").upper()
        headers += [f"Self {dev}", f"Self {dev} %", f"{dev} total", f"{dev} time avg"]
    if memory:
        headers += ["CPU Mem", "Self CPU Mem"]
        if device and has_device_mem:
            headers += [f"{device.upper()} Mem", f"Self {device.upper()} Mem"]
    return headers + ["# of Calls"]


def _values(e: Any, total_cpu: float, total_dev: float, has_device_time: bool,
            has_device_mem: bool, memory: bool, device: str | None,
            unit: str | None) -> list[Any]:
    values: list[Any] = [_share(e.self_cpu_time_total, total_cpu),
                         format_time(e.self_cpu_time_total, unit),
                         _share(e.cpu_time_total, total_cpu),
                         format_time(e.cpu_time_total, unit),
                         format_time(e.cpu_time_total / max(e.count, 1), unit)]
    if has_device_time:
        values += [format_time(e.self_device_time_total, unit),
                   _share(e.self_device_time_total, total_dev),
                   format_time(e.device_time_total, unit),
                   format_time(e.device_time_total / max(e.count, 1), unit)]
    if memory:
        values += [format_memory(e.cpu_memory_usage), format_memory(e.self_cpu_memory_usage)]
        if device and has_device_mem:
            values += [format_memory(e.device_memory_usage),
                       format_memory(e.self_device_memory_usage)]
    return values + [e.count]


def build_table(events: list[Any], device: str | None, memory: bool, *,
                sort_by: str | None, row_limit: int, max_src_column_width: int,
                max_name_column_width: int, max_shapes_column_width: int,
                header: str | None, top_level_events_only: bool,
                time_unit: str | None) -> str:
    if not events:
        return ""
    has_device_time = any(e.self_device_time_total > 0 for e in events)
    has_device_mem = any(e.self_device_memory_usage > 0 for e in events)
    has_shapes = any(e.input_shapes for e in events)
    stacks = [e.stack for e in events if e.stack]
    total_cpu = sum(e.self_cpu_time_total for e in events)
    total_dev = sum(e.self_device_time_total for e in events)
    if sort_by is not None:  # PyTorch's names: cuda_time_total reads the device's time
        attr = sort_by.replace("cuda", "device").replace("xpu", "device")
        events = sorted(events, key=lambda e: getattr(e, attr), reverse=True)
    headers = ["Name", *_headers(device, has_device_time, has_device_mem, memory)]
    name_width = min(max(len(e.key) for e in events) + 4, max_name_column_width)
    widths = [name_width] + [_WIDTH] * (len(headers) - 1)
    aligns = [">"] * len(headers)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(min(max(len(str(e.input_shapes)) for e in events) + 4,
                          max_shapes_column_width))
        aligns.append(">")
    if stacks:
        headers.append("Source Location")
        widths.append(min(max(len(s) for st in stacks for s in st) + 4,
                          max_src_column_width))
        aligns.append("<")
    row = "".join("{: " + a + str(w) + "}" + " " * _SPACING for a, w in zip(aligns, widths))
    sep = "".join("-" * w + " " * _SPACING for w in widths)
    lines = []
    if header is not None:
        width = sum(widths) + _SPACING * (len(widths) - 1)
        lines += ["=" * width, header]
    if top_level_events_only:
        lines += ["=" * (sum(widths) + _SPACING * (len(widths) - 1)),
                  "This report only display top-level ops statistics"]
    lines += [sep, row.format(*headers), sep]
    shown = [e for e in events
             if not (top_level_events_only and getattr(e, "cpu_parent", None) is not None)]
    for e in shown[:row_limit] if row_limit >= 0 else shown:
        name = e.key
        if len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        values = [name, *_values(e, total_cpu, total_dev, has_device_time, has_device_mem,
                                 memory, device, time_unit)]
        if has_shapes:
            values.append(str(e.input_shapes)[:widths[len(values)]])
        if stacks:
            values.append(e.stack[0][-widths[-1]:] if e.stack else "")
        lines.append(row.format(*values))
    lines += [sep, f"Self CPU time total: {format_time(total_cpu, time_unit)}"]
    if has_device_time:
        lines.append(f"Self {(device or 'None').upper()} time total: "
                     f"{format_time(total_dev, time_unit)}")
    return "\n".join(lines) + "\n"
