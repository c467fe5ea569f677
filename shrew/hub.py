"""torch.hub's file helpers without a network: files come from PyTorch's hub cache
($TORCH_HOME/hub/checkpoints, TORCH_HOME defaulting to $XDG_CACHE_HOME/torch or
~/.cache/torch), where torch itself keeps what it downloaded, and load with shrew.load."""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from .core.errors import ShrewValueError

# The hash prefix in a checkpoint's file name ("resnet18-f37072fd.pth"), as torch.hub's.
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")


def get_dir() -> str:
    """The hub directory: $TORCH_HOME/hub."""
    cache = os.environ.get("XDG_CACHE_HOME", os.path.join("~", ".cache"))
    home = os.environ.get("TORCH_HOME", os.path.join(cache, "torch"))
    return os.path.join(os.path.expanduser(home), "hub")


def _cached(url: str, model_dir: str | None, file_name: str | None, op: str) -> Path:
    folder = Path(model_dir) if model_dir else Path(get_dir()) / "checkpoints"
    path = folder / (file_name or os.path.basename(urlparse(url).path))
    if not path.is_file():
        raise ShrewValueError(f"{op}: {path} is not there and shrew downloads nothing; fetch "
                              f"{url} into {folder} (e.g. with torch.hub or curl) and call again")
    return path


def load_state_dict_from_url(url: str, model_dir: str | None = None, map_location: Any = None,
                             progress: bool = True, check_hash: bool = False,
                             file_name: str | None = None, weights_only: bool = False,
                             ) -> dict[str, Any]:
    """shrew.load of the cached file for url (progress and check_hash are accepted: nothing
    is downloaded); map_location as shrew.load's."""
    from .serialization.save_load import load
    return load(str(_cached(url, model_dir, file_name, "load_state_dict_from_url")),
                map_location=map_location)


def download_url_to_file(url: str, dst: str, hash_prefix: str | None = None,
                         progress: bool = True) -> None:
    """Copy the cached file for url to dst (it must be in the hub cache already)."""
    shutil.copyfile(_cached(url, None, None, "download_url_to_file"), dst)


def _repo_dir(repo_or_dir: str, source: str, op: str) -> Path:
    """The folder holding hubconf.py: `repo_or_dir` itself for source="local", else
    "owner/name[:ref]" as torch.hub caches it ($TORCH_HOME/hub/owner_name_ref)."""
    if source not in ("github", "local"):
        raise ShrewValueError(f'{op}: unknown source "{source}"; use "github" or "local"')
    if source == "local":
        folder = Path(repo_or_dir)
    else:
        repo, _, ref = repo_or_dir.partition(":")
        owner, _, name = repo.partition("/")
        folder = Path(get_dir()) / f"{owner}_{name}_{ref or 'main'}"
        if not folder.is_dir() and not ref:
            folder = Path(get_dir()) / f"{owner}_{name}_master"
    if not (folder / "hubconf.py").is_file():
        raise ShrewValueError(f"{op}: no hubconf.py in {folder}, and shrew downloads nothing; "
                              f"clone {repo_or_dir} there (or load it once with torch.hub) or "
                              f"pass source='local' with its folder")
    return folder


def _hubconf(folder: Path) -> Any:
    """The repository's hubconf module, imported with its folder on sys.path (as
    torch.hub imports it: it runs the repository's code)."""
    spec = importlib.util.spec_from_file_location("hubconf", folder / "hubconf.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(folder))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(folder))
    return module


def list(github: str, force_reload: bool = False, skip_validation: bool = False,  # noqa: A001
         trust_repo: Any = None, verbose: bool = True) -> list[str]:  # type: ignore[valid-type]
    """The entry points (public callables) of a cached repository's hubconf.py."""
    module = _hubconf(_repo_dir(github, "github", "hub.list"))
    return [n for n, v in vars(module).items() if callable(v) and not n.startswith("_")]


def load(repo_or_dir: str, model: str, *args: Any, source: str = "github",
         trust_repo: Any = None, force_reload: bool = False, verbose: bool = True,
         skip_validation: bool = False, **kwargs: Any) -> Any:
    """`model(*args, **kwargs)` from the repository's hubconf.py: a folder
    (source="local") or a GitHub repository already in the hub cache (nothing is
    downloaded, so force_reload and skip_validation have nothing to do)."""
    module = _hubconf(_repo_dir(repo_or_dir, source, "hub.load"))
    entry = getattr(module, model, None)
    if not callable(entry):
        raise ShrewValueError(f"hub.load: {repo_or_dir}'s hubconf.py has no entry point "
                              f"{model!r}")
    return entry(*args, **kwargs)


__all__ = ["get_dir", "load_state_dict_from_url", "download_url_to_file", "HASH_REGEX",
           "list", "load"]
