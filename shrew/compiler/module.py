"""torch.compile(module): an OptimizedModule, the module's call compiled."""
from __future__ import annotations

from typing import Any

from ..nn.modules.module import Module
from .compiled import CompiledFunction, Options, made


class OptimizedModule(Module):
    """Wraps `_orig_mod` (a submodule: state_dict keys start with "_orig_mod.", as
    PyTorch's); calling it runs the module's call (hooks included) compiled; other
    attributes are the module's.  A checkpoint (shrew.save) holds the module and how it
    compiles, not its captured programs: a loaded one captures afresh, as PyTorch's."""

    _not_saved = ("_compiled",)  # (serialization/tree.py)

    def __init__(self, mod: Module, fullgraph: bool = False,
                 recompile_limit: int | None = None, options: Options | None = None) -> None:
        super().__init__()
        self._orig_mod = mod
        self.training = mod.training
        options = options or Options()
        self._compile_settings = {"fullgraph": fullgraph, "recompile_limit": recompile_limit,
                                  "fuse": options.fuse, "arena": options.arena}
        self._compiled = self._compile()

    def _compile(self) -> CompiledFunction:
        how: dict[str, Any] = self._compile_settings
        compiled = made(CompiledFunction(self._orig_mod, how["fullgraph"],
                                         how["recompile_limit"],
                                         Options(fuse=how["fuse"], arena=how["arena"])))
        compiled.modules.extend(self._orig_mod.modules())  # their training flags are guarded
        return compiled

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled(*args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._orig_mod(*args, **kwargs)

    def train(self, mode: bool = True) -> OptimizedModule:
        self._orig_mod.train(mode)
        self.training = mode
        return self

    def __getattr__(self, name: str) -> Any:
        if name == "_compiled" and "_compile_settings" in self.__dict__:  # loaded: afresh
            self.__dict__["_compiled"] = compiled = self._compile()
            return compiled
        if name.startswith("__") or name in ("_orig_mod", "_compiled", "_compile_settings"):
            raise AttributeError(name)
        return getattr(self._orig_mod, name)

    def __repr__(self) -> str:
        return f"OptimizedModule(\n  (_orig_mod): {self._orig_mod!r}\n)"
