"""torch.compile(module): an OptimizedModule, the module's call compiled."""
from __future__ import annotations

from typing import Any

from ..nn.modules.module import Module
from .compiled import CompiledFunction, Options


class OptimizedModule(Module):
    """Wraps `_orig_mod` (a submodule: state_dict keys start with "_orig_mod.", as
    PyTorch's); calling it runs the module's call (hooks included) compiled; other
    attributes are the module's."""

    def __init__(self, mod: Module, fullgraph: bool = False,
                 recompile_limit: int | None = None, options: Options | None = None) -> None:
        super().__init__()
        self._orig_mod = mod
        self.training = mod.training
        self._compiled = CompiledFunction(mod, fullgraph, recompile_limit, options)
        self._compiled.modules.extend(mod.modules())  # their training flags are guarded

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled(*args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._orig_mod(*args, **kwargs)

    def train(self, mode: bool = True) -> OptimizedModule:
        self._orig_mod.train(mode)
        self.training = mode
        return self

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_orig_mod", "_compiled"):
            raise AttributeError(name)
        return getattr(self._orig_mod, name)

    def __repr__(self) -> str:
        return f"OptimizedModule(\n  (_orig_mod): {self._orig_mod!r}\n)"
