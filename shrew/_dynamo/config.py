"""``torch._dynamo.config``: the settings programs write.  An unknown name raises
AttributeError, read or written, as torch's config does.

`recompile_limit` (and its older name `cache_size_limit`, the same setting) is the number
of guard sets a compiled function that names no limit of its own keeps before new ones run
eagerly (shrew.compiler.compiled.RECOMPILE_LIMIT, 8).  The others keep torch's defaults
and change nothing in shrew, whose compile already behaves as each asks or has no such
stage: `suppress_errors` (a capture that fails runs eagerly: a graph break),
`capture_scalar_outputs` and `capture_dynamic_output_shape_ops` (`.item()` and
data-dependent shapes break the graph either way), `optimize_ddp` (a DDP model's buckets
are not split into graphs), `automatic_dynamic_shapes` and `assume_static_by_default`
(every shape is specialised), `verbose`.
"""
from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

from ..compiler import compiled

suppress_errors = False
capture_scalar_outputs = False
capture_dynamic_output_shape_ops = False
optimize_ddp = True
automatic_dynamic_shapes = True
assume_static_by_default = True
verbose = False

_LIMIT = ("recompile_limit", "cache_size_limit")
_SETTINGS = {"suppress_errors", "capture_scalar_outputs", "capture_dynamic_output_shape_ops",
             "optimize_ddp", "automatic_dynamic_shapes", "assume_static_by_default", "verbose"}


class _Config(ModuleType):
    def __getattr__(self, name: str) -> Any:  # (names not found as module attributes)
        if name in _LIMIT:
            return compiled.RECOMPILE_LIMIT
        raise AttributeError(f"torch._dynamo.config has no setting {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _LIMIT:
            compiled.RECOMPILE_LIMIT = int(value)
        elif name in _SETTINGS:
            super().__setattr__(name, value)
        else:
            raise AttributeError(f"torch._dynamo.config has no setting {name!r}")


sys.modules[__name__].__class__ = _Config
