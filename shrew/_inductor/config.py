"""``torch._inductor.config`` (shrew.compiler.settings.Settings; its doc is below)."""
from __future__ import annotations

import sys

from ..compiler.settings import Settings

sys.modules[__name__] = Settings(  # type: ignore[assignment]
    "torch._inductor.config",
    {"coordinate_descent_tuning": False, "coordinate_descent_check_all_directions": False,
     "fx_graph_cache": True, "freezing": False, "epilogue_fusion": True,
     "max_autotune": False, "max_autotune_gemm": False, "conv_1x1_as_mm": False,
     "force_fuse_int_mm_with_mul": False, "use_mixed_mm": True, "cpp_wrapper": False,
     "shape_padding": True, "benchmark_kernel": False, "permute_fusion": False,
     "aggressive_fusion": False, "debug": False, "compile_threads": 1,
     "triton": Settings("torch._inductor.config.triton",
                        {"unique_kernel_names": True, "cudagraphs": False,
                         "cudagraph_trees": True})},
    doc="""Inductor's tuning settings that programs set, with torch's defaults.  shrew has no
Inductor: its compile fuses one way (docs/compiling.md), so each is accepted and changes
nothing, as in torch none of them changes a result.  Any other name raises
AttributeError.""")
