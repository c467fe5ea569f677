"""The config modules of torch's compiler stack (`torch._dynamo.config`,
`torch._inductor.config`, `torch._functorch.config`) as programs write them: a namespace
of known settings, in which reading or writing any other name raises AttributeError, as
torch's config modules do.  A setting may be linked to a value shrew keeps elsewhere."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Settings:
    """`owner`'s settings: `values` by name (a nested Settings for a group such as
    inductor's `triton`), and `links`: name -> (read, write) for a setting that lives
    elsewhere."""

    def __init__(self, owner: str, values: dict[str, Any], doc: str = "",
                 links: dict[str, tuple[Callable[[], Any], Callable[[Any], None]]] | None = None
                 ) -> None:
        object.__setattr__(self, "_owner", owner)
        object.__setattr__(self, "_values", dict(values))
        object.__setattr__(self, "_links", dict(links or {}))
        object.__setattr__(self, "__doc__", doc)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name in self._links:
            return self._links[name][0]()
        if name in self._values:
            return self._values[name]
        raise AttributeError(f"{self._owner} has no setting {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self._links:
            self._links[name][1](value)
        elif name in self._values and not isinstance(self._values[name], Settings):
            self._values[name] = value
        else:
            raise AttributeError(f"{self._owner} has no setting {name!r}")

    def __dir__(self) -> list[str]:
        return sorted([*self._values, *self._links])

    def __repr__(self) -> str:
        return f"<{self._owner}>"
