"""The core's bad-input cases (those of tests/test_errors.py) on any device.

    python tests/reliability/bad_inputs.py DEVICE

runs every case on DEVICE and prints one JSON object: for each case, whether it raised
the expected ShrewError subclass with the expected words in its message, and what it
raised.  Run in a subprocess, so that a crash shows as the process's exit status.
"""
from __future__ import annotations

import json
import sys

import numpy as np

import shrew
from shrew import (ArgumentError, DeviceError, DTypeError, ShapeError, ShrewIndexError,
                   ShrewTypeError, ShrewValueError, StateError, UnsupportedError)
from shrew.backends.array_module import ArrayModuleBackend


def cases(d: str, other: str) -> list:
    """(name, expected error, words its message contains, call) with tensors on device d;
    `other` is a second device for the cross-device cases."""
    def ones(*shape, **kw):
        return shrew.ones(*shape, device=d, **kw)

    def T(data, **kw):  # noqa: N802 (as test_errors.py names it)
        return shrew.tensor(data, device=d, **kw)

    x = T([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    image = ones(1, 1, 5, 5)

    def second_backward():
        y = (ones(2, requires_grad=True) * 2.0).sum()
        y.backward()
        y.backward()

    table = [
        # shapes
        *[(f"{fn} shapes", ShapeError, (fn, "[2, 3]", "[4]"), lambda op=op: op(ones(2, 3), ones(4)))
          for fn, op in [("add", lambda a, b: a + b), ("sub", lambda a, b: a - b),
                         ("mul", lambda a, b: a * b), ("div", lambda a, b: a / b),
                         ("lt", lambda a, b: a < b), ("eq", lambda a, b: a == b)]],
        ("where shapes", ShapeError, ("where", "[3]", "[2]"),
         lambda: shrew.where(T([True, False, True]), ones(2), ones(3))),
        ("matmul inner", ShapeError, ("matmul", "[2, 3]", "[4, 5]"),
         lambda: ones(2, 3) @ ones(4, 5)),
        ("matmul vectors", ShapeError, ("matmul", "[3]", "[2]"), lambda: ones(3) @ ones(2)),
        ("matmul batch", ShapeError, ("matmul",), lambda: ones(2, 2, 3) @ ones(3, 3, 1)),
        ("matmul 0-d", ShapeError, ("matmul", "[]"), lambda: ones(()) @ ones(2)),
        ("conv2d channels", ShapeError, ("conv2d", "3 channels"),
         lambda: shrew.conv2d(ones(1, 3, 5, 5), ones(4, 2, 3, 3))),
        ("conv1d channels", ShapeError, ("conv1d", "3 channels"),
         lambda: shrew.conv1d(ones(1, 3, 5), ones(4, 2, 3))),
        ("conv2d weight dims", ShapeError, ("conv2d", "weight"),
         lambda: shrew.conv2d(ones(1, 3, 5, 5), ones(4, 3, 3))),
        ("conv2d input dims", ShapeError, ("conv2d", "[3, 5, 5]"),
         lambda: shrew.conv2d(ones(3, 5, 5), ones(4, 3, 3, 3))),
        ("conv2d kernel too big", ShapeError, ("conv2d", "kernel size 4"),
         lambda: shrew.conv2d(ones(1, 1, 3, 3), ones(1, 1, 4, 4))),
        ("conv1d kernel too big", ShapeError, ("conv1d", "kernel size 6"),
         lambda: shrew.conv1d(ones(1, 1, 5), ones(1, 1, 6))),
        ("max_pool2d kernel too big", ShapeError, ("max_pool2d", "kernel size 3"),
         lambda: shrew.max_pool2d(ones(1, 1, 2, 2), 3)),
        ("avg_pool2d kernel too big", ShapeError, ("avg_pool2d",),
         lambda: shrew.avg_pool2d(ones(1, 1, 5, 2), 3)),
        ("im2col kernel too big", ShapeError, ("im2col",),
         lambda: shrew.im2col(ones(1, 1, 3, 3), 4)),
        ("conv2d stride 0", ShapeError, ("conv2d", "stride"),
         lambda: shrew.conv2d(image, ones(1, 1, 2, 2), stride=0)),
        ("conv1d stride -1", ShapeError, ("conv1d", "stride"),
         lambda: shrew.conv1d(ones(1, 1, 5), ones(1, 1, 2), stride=-1)),
        ("max_pool2d kernel 0", ShapeError, ("max_pool2d", "kernel_size"),
         lambda: shrew.max_pool2d(image, (1, 0))),
        ("avg_pool2d stride -2", ShapeError, ("avg_pool2d", "stride"),
         lambda: shrew.avg_pool2d(image, 2, stride=(-2, 1))),
        ("im2col kernel 0", ShapeError, ("im2col", "kernel_size"), lambda: shrew.im2col(image, 0)),
        ("conv2d padding", ShapeError, ("conv2d", "padding"),
         lambda: shrew.conv2d(image, ones(1, 1, 2, 2), padding=-1)),
        ("conv1d padding", ShapeError, ("conv1d", "padding"),
         lambda: shrew.conv1d(ones(1, 1, 5), ones(1, 1, 2), padding=-1)),
        ("max_pool2d padding", ShapeError, ("max_pool2d", "padding"),
         lambda: shrew.max_pool2d(image, 2, padding=2)),
        *[(f"gather index {bad}", ArgumentError, ("gather", f"index {bad}", "size 3"),
           lambda bad=bad: x.gather(1, T([[0, bad], [1, 2]]))) for bad in (-1, 3, 100)],
        ("scatter_add index", ArgumentError, ("scatter_add", "index 3"),
         lambda: shrew.scatter_add((2, 3), 1, T([[0, 3], [1, 2]]), ones(2, 2))),
        ("gather index dims", ShapeError, ("gather", "[2]"), lambda: x.gather(1, T([0, 1]))),
        ("gather index too big", ShapeError, ("gather", "[3, 1]"),
         lambda: x.gather(1, T([[0], [1], [2]]))),
        ("gather float index", DTypeError, ("gather", "float32"),
         lambda: x.gather(1, T([[0.0], [1.0]]))),
        ("scatter_add shapes", ShapeError, ("scatter_add",),
         lambda: shrew.scatter_add((2, 3), 1, T([[0, 1], [1, 2]]), ones(2, 3))),
        ("narrow past the end", ShapeError, ("narrow", "dim 1", "size 3"),
         lambda: x.narrow(1, 2, 3)),
        ("narrow start", ShrewIndexError, ("narrow",), lambda: x.narrow(0, -5, 1)),
        ("narrow length", ShapeError, ("narrow",), lambda: x.narrow(0, 0, -1)),
        ("narrow dim", ShrewIndexError, ("narrow", "dim 2"), lambda: x.narrow(2, 0, 1)),
        ("narrow 0-d", ShapeError, ("narrow", "0-d"), lambda: T(1.0).narrow(0, 0, 1)),
        ("index out of range", ShrewIndexError, ("index", "out of range"), lambda: x[2]),
        ("index list out of range", ShrewIndexError, ("index", "out of range"),
         lambda: x[[0, -3]]),
        ("index mask shape", ShrewIndexError, ("index", "mask", "[3]"),
         lambda: x[T([True, False, True])]),
        ("index float tensor", ShrewIndexError, ("index", "float32"),
         lambda: x[T([0.0, 1.0])]),
        ("index step", ShrewValueError, ("index", "step"), lambda: x[::-1]),
        ("setitem value shape", ShapeError, ("__setitem__", "[3]", "[2]"),
         lambda: x[:, :2].__setitem__(0, ones(3))),
        ("reshape count", ShapeError, ("reshape", "[2, 3]", "[4]"), lambda: x.reshape(4)),
        ("reshape two -1", ShapeError, ("reshape", "-1"), lambda: x.reshape(-1, -1)),
        ("transpose dim", ShrewIndexError, ("transpose", "dim 2"), lambda: x.transpose(0, 2)),
        ("sum dim", ShrewIndexError, ("sum", "dim -3"), lambda: x.sum(-3)),
        ("mean dim twice", ShapeError, ("mean", "twice"), lambda: x.mean((1, -1))),
        ("max of nothing", ShrewIndexError, ("max", "zero-size"), lambda: ones(0, 3).max(0)),
        ("permute", ShapeError, ("permute",), lambda: x.permute(0, 0)),
        ("expand", ShapeError, ("expand", "[2]", "[3]"), lambda: ones(2).expand(3)),
        ("cat shapes", ShapeError, ("cat", "[2, 3]", "[2, 4]"), lambda: shrew.cat([x, ones(2, 4)])),
        ("cat nothing", ShrewValueError, ("cat",), lambda: shrew.cat([])),
        ("pad odd", ShapeError, ("pad",), lambda: x.pad((1,))),
        ("pad negative", ShapeError, ("pad", "negative"), lambda: x.pad((-2, -2))),
        ("item", ShapeError, ("item", "[2]"), lambda: ones(2).item()),
        ("bool", ArgumentError, ("ambiguous",), lambda: bool(ones(2))),
        ("zeros negative", ShapeError, ("zeros",), lambda: shrew.zeros(2, -1, device=d)),
        ("zeros overflow", ShapeError, ("zeros", "overflows"),
         lambda: shrew.zeros(2 ** 62, 4, device=d)),
        ("zeros product overflow", ShapeError, ("zeros", "overflows"),
         lambda: shrew.zeros(2 ** 31, 2 ** 31, 2 ** 31, device=d)),
        ("ones past int64", ShrewTypeError, ("ones", "int64"), lambda: ones(2 ** 63)),
        ("ones past memory", ShapeError, ("ones", "bytes"), lambda: ones(2 ** 47)),
        ("zeros float size", ShrewTypeError, ("zeros", "2.5"), lambda: shrew.zeros(2.5, device=d)),
        ("zeros None size", ShrewTypeError, ("zeros",), lambda: shrew.zeros(None, device=d)),
        ("reshape 65 dims", ShapeError, ("reshape", "65 dims"), lambda: ones(1).reshape(*[1] * 65)),
        ("reshape float size", ShrewTypeError, ("reshape",), lambda: x.reshape(2.5)),
        ("topk past the size", ArgumentError, ("topk", "k=5"), lambda: x.topk(5)),
        ("select out of range", ShrewIndexError, ("select", "5"), lambda: x.select(1, 5)),
        # backward
        ("backward non-scalar", StateError, ("backward", "single-element"),
         lambda: (ones(3, requires_grad=True) * 2.0).backward()),
        ("backward without grad", StateError, ("backward", "does not require grad"),
         lambda: ones(1).backward()),
        ("backward twice", StateError, ("backward", "retain_graph"), second_backward),
        # data and dtypes
        ("ragged", ShrewValueError, ("tensor", "rectangular"), lambda: T([[1, 2], [3]])),
        ("strings", ShrewValueError, ("tensor",), lambda: T(["a", "b"])),
        ("None", DTypeError, ("tensor",), lambda: T([1, None])),
        ("huge int", ShrewValueError, ("tensor",), lambda: T([2 ** 70])),
        ("uint16", DTypeError, ("uint16",), lambda: T(np.zeros(2, dtype=np.uint16))),
        ("complex", DTypeError, ("from_numpy", "complex256"),
         lambda: shrew.from_numpy(np.zeros(2, dtype=np.clongdouble), device=d)),
        ("float8", ShrewTypeError, ("dtype",), lambda: ones(2, dtype="float8")),
        ("int requires grad", DTypeError, ("int64", "require grad"),
         lambda: T([1, 2], requires_grad=True)),
        ("bool requires grad", DTypeError, ("bool",), lambda: T([True], requires_grad=True)),
        ("requires_grad_ on int", DTypeError, ("requires_grad_",), lambda: T([1]).requires_grad_()),
        ("arange requires grad", DTypeError, ("arange",),
         lambda: shrew.arange(3, device=d, requires_grad=True)),
        ("matmul dtypes", DTypeError, ("matmul", "float32", "float64"),
         lambda: ones(2, 2) @ ones(2, 2, dtype=shrew.float64)),
        ("matmul int", DTypeError, ("matmul", "int64"), lambda: T([[1]]) @ T([[1]])),
        ("mean int", DTypeError, ("mean", "int64"), lambda: T([1, 2]).mean()),
        ("conv2d dtypes", DTypeError, ("conv2d", "float64"),
         lambda: shrew.conv2d(ones(1, 1, 3, 3), ones(1, 1, 2, 2, dtype=shrew.float64))),
        ("where int condition", DTypeError, ("where", "int64"),
         lambda: shrew.where(T([1, 0]), ones(2), ones(2))),
        ("bool sub", DTypeError, ("sub", "bool"), lambda: T([True]) - T([False])),
        ("randn int", UnsupportedError, ("randn", "int64"),
         lambda: shrew.randn(2, dtype=shrew.int64, device=d)),
        # arguments
        ("clamp nothing", ArgumentError, ("clamp",), lambda: x.clamp()),
        ("clamp string", ShrewTypeError, ("clamp", "min"), lambda: x.clamp(min="a")),
        ("powf string", ShrewTypeError, ("powf", "exponent"), lambda: x.powf("2")),
        ("gelu approximate", ArgumentError, ("gelu", "approximate"),
         lambda: x.gelu(approximate="fast")),
        ("text base", ShrewTypeError, ("pow", "real base"), lambda: "2" ** x),
        ("full string", ShrewTypeError, ("full", "value"), lambda: shrew.full((2,), "x", device=d)),
        ("arange negative", ArgumentError, ("arange",), lambda: shrew.arange(-1, device=d)),
        ("checkpoint not callable", ShrewTypeError, ("checkpoint", "callable"),
         lambda: shrew.checkpoint(3, x)),
        ("matmul list", ShrewTypeError, ("matmul", "list"), lambda: x.matmul([1.0, 1.0])),
        # devices
        ("unknown device", DeviceError, ("unknown device 'nosuchdevice'",),
         lambda: shrew.ones(2, device="nosuchdevice")),
        ("to unknown device", DeviceError, ("nosuchdevice",), lambda: x.to("nosuchdevice:1")),
        ("bad device index", DeviceError, (f"{d.split(':')[0]}:x",),
         lambda: shrew.ones(2, device=f"{d.split(':')[0]}:x")),
        ("missing device index", DeviceError, (f"{d.split(':')[0]}:7",),
         lambda: shrew.ones(2, device=f"{d.split(':')[0]}:7")),
        ("device not a string", DeviceError, ("string",), lambda: shrew.ones(2, device=3)),
    ]
    a, b = ones(2, 2), shrew.ones(2, 2, device=other)
    for name, op in [("add", lambda: a + b), ("mul", lambda: b * a), ("matmul", lambda: a @ b),
                     ("lt", lambda: a < b), ("cat", lambda: shrew.cat([a, b])),
                     ("where", lambda: shrew.where(T([[True, False]]), a, b)),
                     ("gather", lambda: a.gather(0, shrew.tensor([[0, 1]], device=other))),
                     ("conv2d", lambda: shrew.conv2d(ones(1, 2, 3, 3),
                                                     shrew.ones(1, 2, 2, 2, device=other)))]:
        table.append((f"{name} across devices", DeviceError, (name, d, other), op))
    return table


def run(device: str) -> dict:
    """{case name: {"ok": raised as expected, "raised": "Class: message"}}."""
    other = "cpu"
    if device == "cpu":  # numpy under a second name, for the cross-device cases
        shrew.register_backend("alias", lambda index=0: ArrayModuleBackend(f"alias:{index}"))
        other = "alias:0"
    results = {}
    for name, expected, words, call in cases(device, other):
        try:
            call()
        except Exception as exc:  # noqa: BLE001 (anything but the expected error is reported)
            message = str(exc)
            ok = type(exc) is expected and all(w in message for w in words)
            results[name] = {"ok": ok, "raised": f"{type(exc).__name__}: {message}"}
        else:
            results[name] = {"ok": False, "raised": None}
    return results


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1])))
