"""``torch.cpu.amp`` and ``torch.cuda.amp``: the older per-device spellings, each a module
object (shrew.cpu.amp, shrew.cuda.amp) over autocast_mode.py and grad_scaler.py."""
from __future__ import annotations

import sys
from types import ModuleType

from . import autocast_mode, grad_scaler


def _module(name: str, doc: str, **members: object) -> ModuleType:
    module = ModuleType(name, doc)
    module.__dict__.update(members)
    module.__all__ = sorted(members)  # type: ignore[attr-defined]
    sys.modules[name] = module  # so that `import shrew.cuda.amp` works
    return module


cpu_amp = _module("shrew.cpu.amp", "torch.cpu.amp: autocast for cpu (bfloat16 by default).",
                  autocast=autocast_mode.CPUAutocast, GradScaler=grad_scaler.CPUGradScaler,
                  autocast_mode=autocast_mode, grad_scaler=grad_scaler)
cuda_amp = _module("shrew.cuda.amp", "torch.cuda.amp: autocast (float16 by default) and "
                   "GradScaler for cuda.", autocast=autocast_mode.CUDAAutocast,
                   GradScaler=grad_scaler.CUDAGradScaler,
                   custom_fwd=autocast_mode.cuda_custom_fwd,
                   custom_bwd=autocast_mode.cuda_custom_bwd, autocast_mode=autocast_mode,
                   grad_scaler=grad_scaler)
