"""torch.hub's file helpers without a network: files come from PyTorch's hub cache
($TORCH_HOME/hub/checkpoints, TORCH_HOME defaulting to $XDG_CACHE_HOME/torch or
~/.cache/torch), where torch itself keeps what it downloaded, and load with shrew.load."""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from .core.errors import ShrewValueError


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


__all__ = ["get_dir", "load_state_dict_from_url", "download_url_to_file"]
