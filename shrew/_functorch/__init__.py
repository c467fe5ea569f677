"""``torch._functorch``: only its config (`enable_autograd_cache`, set by gpt-fast)."""
from . import config  # noqa: F401
