"""``torch._dynamo.config`` (shrew.compiler.settings.Settings; its doc is below)."""
from __future__ import annotations

import sys

from ..compiler import compiled
from ..compiler.settings import Settings


def _set_limit(value: object) -> None:
    compiled.RECOMPILE_LIMIT = int(value)  # type: ignore[call-overload]


_limit = (lambda: compiled.RECOMPILE_LIMIT, _set_limit)

sys.modules[__name__] = Settings(  # type: ignore[assignment]
    "torch._dynamo.config",
    {"suppress_errors": False, "capture_scalar_outputs": False,
     "capture_dynamic_output_shape_ops": False, "optimize_ddp": True,
     "automatic_dynamic_shapes": True, "assume_static_by_default": True, "verbose": False},
    doc="""`recompile_limit` (and its older name `cache_size_limit`, the same setting) is the
number of guard sets a compiled function that names no limit of its own keeps before new
ones run eagerly (shrew.compiler.compiled.RECOMPILE_LIMIT, 8).  The others keep torch's
defaults and change nothing in shrew, whose compile already behaves as each asks or has
no such stage: `suppress_errors` (a capture that fails runs eagerly: a graph break),
`capture_scalar_outputs` and `capture_dynamic_output_shape_ops` (`.item()` and
data-dependent shapes break the graph either way), `optimize_ddp` (a DDP model's buckets
are not split into graphs), `automatic_dynamic_shapes` and `assume_static_by_default`
(every shape is specialised), `verbose`.""",
    links={"recompile_limit": _limit, "cache_size_limit": _limit})
