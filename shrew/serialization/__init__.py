"""torch.serialization for shrew: ``save`` and ``load`` (save_load.py), the allowlist of
classes and functions a file may name (allowlist.py), nested checkpoints as a safetensors
file plus a JSON description (tree.py), and reading PyTorch's .pt zip files without running
their pickle (torch_zip.py)."""
from .allowlist import (add_safe_globals, clear_safe_globals, get_safe_globals,
                        safe_globals)
from .save_load import load, save
from .globals_scan import get_unsafe_globals_in_checkpoint

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "load",
           "safe_globals", "save", "get_unsafe_globals_in_checkpoint"]
